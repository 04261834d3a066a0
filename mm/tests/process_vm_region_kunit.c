// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit tests for region fds, included at the end of mm/process_vm_region.c
 * so that they reach its static functions: the mapping of region offsets
 * to the owner's ranges, the checks of process_vm_export(), and the revoke
 * state as a copy sees it.  The owner is the test thread, with a user
 * address space that KUnit attaches (kunit_vm_mmap()).
 */

#include <linux/mman.h>
#include <linux/uaccess.h>
#include <kunit/test.h>

#define PVM_RTEST_PAGES	4

/* User memory in the address space KUnit attaches to the test thread. */
static unsigned long pvm_rtest_map(struct kunit *test)
{
	unsigned long addr;

	addr = kunit_vm_mmap(test, NULL, 0, PVM_RTEST_PAGES * PAGE_SIZE,
			     PROT_READ | PROT_WRITE,
			     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	if (IS_ERR_VALUE(addr))
		kunit_skip(test, "cannot map user memory");
	return addr;
}

/*
 * A region of @n ranges of @iov, owned by the test thread, which gets an
 * address space first if it has none yet.
 */
static struct pvm_region *pvm_rtest_region(struct kunit *test,
					   const struct iovec *iov,
					   unsigned long n, unsigned int flags)
{
	struct pvm_region *r;

	if (!current->mm)
		pvm_rtest_map(test);
	r = pvm_region_create(iov, n, flags);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, r);
	return r;
}

/* Offsets name the ranges in order; empty ranges are left out. */
static void region_offsets_follow_segments(struct kunit *test)
{
	struct iovec iov[] = {
		{ (void __user *)0x10000, 10 },
		{ (void __user *)0x30000, 0 },
		{ (void __user *)0x20005, 5 },
		{ (void __user *)0x40000, 100 },
	};
	struct iovec riov[PVM_REGION_IOVS];
	struct pvm_region *r;
	unsigned long n;

	r = pvm_rtest_region(test, iov, ARRAY_SIZE(iov),
			     PROCESS_VM_REGION_READ);
	KUNIT_EXPECT_EQ(test, r->nr_segs, 3);
	KUNIT_EXPECT_EQ(test, r->size, 115);
	KUNIT_EXPECT_EQ(test, pvm_region_seg(r, 0), 0);
	KUNIT_EXPECT_EQ(test, pvm_region_seg(r, 9), 0);
	KUNIT_EXPECT_EQ(test, pvm_region_seg(r, 10), 1);
	KUNIT_EXPECT_EQ(test, pvm_region_seg(r, 14), 1);
	KUNIT_EXPECT_EQ(test, pvm_region_seg(r, 15), 2);
	KUNIT_EXPECT_EQ(test, pvm_region_seg(r, 114), 2);

	/* From the last byte of one range into the next two. */
	n = pvm_region_map(r, 9, 100, riov);
	KUNIT_ASSERT_EQ(test, n, 3);
	KUNIT_EXPECT_EQ(test, (unsigned long)riov[0].iov_base, 0x10009UL);
	KUNIT_EXPECT_EQ(test, riov[0].iov_len, 1);
	KUNIT_EXPECT_EQ(test, (unsigned long)riov[1].iov_base, 0x20005UL);
	KUNIT_EXPECT_EQ(test, riov[1].iov_len, 5);
	KUNIT_EXPECT_EQ(test, (unsigned long)riov[2].iov_base, 0x40000UL);
	KUNIT_EXPECT_EQ(test, riov[2].iov_len, 94);

	/* Never past the end of the last range, whatever is asked. */
	n = pvm_region_map(r, 114, 1000, riov);
	KUNIT_ASSERT_EQ(test, n, 1);
	KUNIT_EXPECT_EQ(test, (unsigned long)riov[0].iov_base, 0x40063UL);
	KUNIT_EXPECT_EQ(test, riov[0].iov_len, 1);
	pvm_region_free(r);
}

/* One chunk covers at most PVM_REGION_IOVS ranges. */
static void region_map_caps_ranges(struct kunit *test)
{
	struct iovec iov[PVM_REGION_IOVS + 3], riov[PVM_REGION_IOVS];
	struct pvm_region *r;
	unsigned long i;

	for (i = 0; i < ARRAY_SIZE(iov); i++) {
		iov[i].iov_base = (void __user *)(0x100000 + i * 0x1000);
		iov[i].iov_len = 1;
	}
	r = pvm_rtest_region(test, iov, ARRAY_SIZE(iov),
			     PROCESS_VM_REGION_READ);
	KUNIT_EXPECT_EQ(test, pvm_region_map(r, 0, r->size, riov),
			PVM_REGION_IOVS);
	KUNIT_EXPECT_EQ(test, (unsigned long)riov[PVM_REGION_IOVS - 1].iov_base,
			(unsigned long)iov[PVM_REGION_IOVS - 1].iov_base);
	KUNIT_EXPECT_EQ(test, pvm_region_map(r, PVM_REGION_IOVS, r->size, riov),
			3);
	KUNIT_EXPECT_EQ(test, (unsigned long)riov[0].iov_base,
			(unsigned long)iov[PVM_REGION_IOVS].iov_base);
	pvm_region_free(r);
}

static void region_create_rejects_bad_ranges(struct kunit *test)
{
	struct iovec wrap = { (void __user *)(ULONG_MAX - 10), 20 };
	struct iovec kernel = { (void __user *)TASK_SIZE_MAX, PAGE_SIZE };
	struct iovec empty[2] = { { (void __user *)0x10000, 0 },
				  { (void __user *)0x20000, 0 } };
	struct iovec good_then_bad[2] = { { (void __user *)0x10000, 1 },
					  { (void __user *)TASK_SIZE_MAX, 1 } };

	pvm_rtest_map(test);

	KUNIT_EXPECT_EQ(test, PTR_ERR(pvm_region_create(&wrap, 1, 1)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(pvm_region_create(&kernel, 1, 1)),
			-EFAULT);
	KUNIT_EXPECT_EQ(test, PTR_ERR(pvm_region_create(empty, 2, 1)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(pvm_region_create(good_then_bad, 2, 1)),
			-EFAULT);
}

/* Copy @len bytes at region offset @pos into @buf through one chunk. */
static int pvm_rtest_chunk(struct pvm_region *r, loff_t pos, void *buf,
			   size_t len, size_t *done)
{
	struct kvec kv = { .iov_base = buf, .iov_len = len };
	struct iov_iter iter;
	int err;

	iov_iter_kvec(&iter, ITER_DEST, &kv, 1, len);
	err = pvm_region_chunk(r, &iter, pos, false, PVM_BLOCK);
	*done = len - iov_iter_count(&iter);
	return err;
}

/*
 * A live region copies the owner's bytes; once revoked, or once the owner
 * is not the caller of revoke, the states are as documented.
 */
static void region_revoke_stops_copies(struct kunit *test)
{
	unsigned long addr = pvm_rtest_map(test);
	struct iovec iov = { (void __user *)(addr + 100), 8 };
	struct pvm_region *r;
	char buf[8];
	size_t done;

	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)(addr + 100),
					   "regions!", 8), 0);
	r = pvm_rtest_region(test, &iov, 1, PROCESS_VM_REGION_READ);
	KUNIT_EXPECT_EQ(test, pvm_rtest_chunk(r, 0, buf, 8, &done), 0);
	KUNIT_EXPECT_EQ(test, done, 8);
	KUNIT_EXPECT_MEMEQ(test, buf, "regions!", 8);
	KUNIT_EXPECT_FALSE(test, pvm_region_dead(r));

	KUNIT_EXPECT_EQ(test, pvm_region_revoke(r), 0);
	KUNIT_EXPECT_TRUE(test, pvm_region_dead(r));
	KUNIT_EXPECT_EQ(test, pvm_rtest_chunk(r, 0, buf, 8, &done), -ENXIO);
	KUNIT_EXPECT_EQ(test, done, 0);
	/* Revoking again is not an error. */
	KUNIT_EXPECT_EQ(test, pvm_region_revoke(r), 0);
	pvm_region_free(r);
}

/* Only a task of the owner's address space may revoke. */
static void region_revoke_is_the_owners(struct kunit *test)
{
	unsigned long addr = pvm_rtest_map(test);
	struct iovec iov = { (void __user *)addr, PAGE_SIZE };
	struct mm_struct *other;
	struct pvm_region *r;

	r = pvm_rtest_region(test, &iov, 1, PROCESS_VM_REGION_READ);
	other = mm_alloc();
	KUNIT_ASSERT_NOT_NULL(test, other);
	/* Make it the region of some other process, as the region holds it. */
	mmgrab(other);
	mmdrop(r->mm);
	r->mm = other;
	KUNIT_EXPECT_EQ(test, pvm_region_revoke(r), -EPERM);
	KUNIT_EXPECT_FALSE(test, READ_ONCE(r->revoked));
	KUNIT_EXPECT_FALSE(test, pvm_region_dead(r));
	/* That process is gone: the region is dead without a revoke. */
	mmput(other);
	KUNIT_EXPECT_TRUE(test, pvm_region_dead(r));
	pvm_region_free(r);
}

static struct kunit_case pvm_region_test_cases[] = {
	KUNIT_CASE(region_offsets_follow_segments),
	KUNIT_CASE(region_map_caps_ranges),
	KUNIT_CASE(region_create_rejects_bad_ranges),
	KUNIT_CASE(region_revoke_stops_copies),
	KUNIT_CASE(region_revoke_is_the_owners),
	{}
};

static struct kunit_suite pvm_region_test_suite = {
	.name = "process_vm_region",
	.test_cases = pvm_region_test_cases,
};

kunit_test_suite(pvm_region_test_suite);
