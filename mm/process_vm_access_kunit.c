// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit tests for the process_vm_readv/writev copy engine.
 *
 * The "remote" address space is a real user mm that KUnit attaches to the
 * test thread (kunit_vm_mmap()); the local side is a kernel buffer.
 */

#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/sched/mm.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include <kunit/test.h>

#include "process_vm_access.h"

#define PVM_TEST_PAGES	64

struct pvm_test {
	unsigned long uaddr;	/* PVM_TEST_PAGES of user memory */
	u8 *kbuf;		/* as much kernel memory */
};

static u8 pvm_pattern(unsigned long i)
{
	return (i * 7 + (i >> 12)) & 0xff;
}

static int pvm_test_init(struct kunit *test)
{
	size_t size = PVM_TEST_PAGES * PAGE_SIZE;
	struct pvm_test *t;
	unsigned long i;

	t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	t->kbuf = kunit_kzalloc(test, size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->kbuf);
	t->uaddr = kunit_vm_mmap(test, NULL, 0, size, PROT_READ | PROT_WRITE,
				 MAP_ANONYMOUS | MAP_PRIVATE, 0);
	if (!t->uaddr)
		kunit_skip(test, "cannot map user memory");
	for (i = 0; i < size; i++)
		t->kbuf[i] = pvm_pattern(i);
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)t->uaddr, t->kbuf,
					   size), 0);
	memset(t->kbuf, 0, size);
	test->priv = t;
	return 0;
}

/*
 * Run one copy between @len bytes of the kernel buffer and the user
 * ranges @riov.  Returns what pvm_kunit_copy_mm() returns; @pinned gets the
 * number of pages pinned.
 */
static ssize_t pvm_test_copy(struct kunit *test, bool write, bool nowait,
			     size_t len, const struct iovec *riov,
			     unsigned long riovcnt, unsigned long *pinned)
{
	struct pvm_test *t = test->priv;
	struct kvec kv = { .iov_base = t->kbuf, .iov_len = len };
	struct iov_iter iter;
	struct pvm_copy c = {
		.mm = current->mm,
		.iter = &iter,
		.write = write,
		.nowait = nowait,
	};
	ssize_t ret;

	iov_iter_kvec(&iter, write ? ITER_SOURCE : ITER_DEST, &kv, 1, len);
	ret = pvm_kunit_copy_mm(&c, riov, riovcnt,
				pvm_batch_pages(riov, riovcnt, len));
	if (pinned)
		*pinned = c.pinned;
	return ret;
}

static void pvm_test_span_pages(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, pvm_span_pages(0, 0), 0);
	KUNIT_EXPECT_EQ(test, pvm_span_pages(PAGE_SIZE - 1, 0), 0);
	KUNIT_EXPECT_EQ(test, pvm_span_pages(0, 1), 1);
	KUNIT_EXPECT_EQ(test, pvm_span_pages(0, PAGE_SIZE), 1);
	KUNIT_EXPECT_EQ(test, pvm_span_pages(0, PAGE_SIZE + 1), 2);
	KUNIT_EXPECT_EQ(test, pvm_span_pages(PAGE_SIZE - 1, 1), 1);
	KUNIT_EXPECT_EQ(test, pvm_span_pages(PAGE_SIZE - 1, 2), 2);
	KUNIT_EXPECT_EQ(test, pvm_span_pages(1, PAGE_SIZE), 2);
	KUNIT_EXPECT_EQ(test, pvm_span_pages(PAGE_SIZE - 1, PAGE_SIZE + 2), 3);
	KUNIT_EXPECT_EQ(test, pvm_span_pages(5 * PAGE_SIZE, 3 * PAGE_SIZE), 3);
	KUNIT_EXPECT_EQ(test, pvm_span_pages(0, MAX_RW_COUNT),
			MAX_RW_COUNT >> PAGE_SHIFT);
}

static void pvm_test_batch_pages(struct kunit *test)
{
	struct iovec riov[] = {
		{ .iov_base = NULL, .iov_len = 0 },
		{ .iov_base = (void __user *)(PAGE_SIZE - 1), .iov_len = 2 },
		{ .iov_base = (void __user *)PAGE_SIZE, .iov_len = 5 * PAGE_SIZE },
	};

	KUNIT_EXPECT_EQ(test, pvm_batch_pages(riov, 1, SIZE_MAX), 0);
	KUNIT_EXPECT_EQ(test, pvm_batch_pages(riov, 0, SIZE_MAX), 0);
	KUNIT_EXPECT_EQ(test, pvm_batch_pages(riov, 2, SIZE_MAX), 2);
	KUNIT_EXPECT_EQ(test, pvm_batch_pages(riov, 3, SIZE_MAX), 5);
	/* The local side bounds what each remote iovec can need. */
	KUNIT_EXPECT_EQ(test, pvm_batch_pages(riov, 3, 1), 1);
	KUNIT_EXPECT_EQ(test, pvm_batch_pages(riov, 3, PAGE_SIZE + 1), 2);
}

/* A read across page boundaries and iovecs lands in order, byte exact. */
static void pvm_test_read_straddle(struct kunit *test)
{
	struct pvm_test *t = test->priv;
	struct iovec riov[] = {
		{ (void __user *)(t->uaddr + PAGE_SIZE - 3), 7 },
		{ NULL, 0 },
		{ (void __user *)(t->uaddr + 3 * PAGE_SIZE + 1), 2 * PAGE_SIZE },
	};
	size_t len = 7 + 2 * PAGE_SIZE;
	unsigned long pinned, i;

	KUNIT_ASSERT_EQ(test, pvm_test_copy(test, false, false, len, riov, 3,
					    &pinned), len);
	KUNIT_EXPECT_EQ(test, pinned, 2 + 3);
	for (i = 0; i < 7; i++)
		KUNIT_EXPECT_EQ(test, t->kbuf[i], pvm_pattern(PAGE_SIZE - 3 + i));
	for (i = 0; i < 2 * PAGE_SIZE; i++)
		KUNIT_ASSERT_EQ(test, t->kbuf[7 + i],
				pvm_pattern(3 * PAGE_SIZE + 1 + i));
}

/* A transfer bigger than the on-stack batch is pinned in large batches. */
static void pvm_test_batching(struct kunit *test)
{
	struct pvm_test *t = test->priv;
	size_t len = PVM_TEST_PAGES * PAGE_SIZE;
	struct iovec riov = { (void __user *)t->uaddr, len };
	unsigned long pinned, i;

	KUNIT_ASSERT_EQ(test, pvm_test_copy(test, false, false, len, &riov, 1,
					    &pinned), len);
	KUNIT_EXPECT_EQ(test, pinned, PVM_TEST_PAGES);
	for (i = 0; i < len; i++)
		KUNIT_ASSERT_EQ(test, t->kbuf[i], pvm_pattern(i));
}

/* Only the pages the local side has room for are pinned. */
static void pvm_test_short_local(struct kunit *test)
{
	struct pvm_test *t = test->priv;
	struct iovec riov = { (void __user *)(t->uaddr + 10),
			      PVM_TEST_PAGES * PAGE_SIZE - 10 };
	unsigned long pinned;

	KUNIT_ASSERT_EQ(test, pvm_test_copy(test, false, false, 100, &riov, 1,
					    &pinned), 100);
	KUNIT_EXPECT_EQ(test, pinned, 1);
	KUNIT_EXPECT_EQ(test, t->kbuf[99], pvm_pattern(109));
}

/* Copying stops at an unmapped hole and reports the bytes before it. */
static void pvm_test_hole(struct kunit *test)
{
	struct pvm_test *t = test->priv;
	unsigned long hole = t->uaddr + 4 * PAGE_SIZE;
	struct iovec riov[] = {
		{ (void __user *)(t->uaddr + 2 * PAGE_SIZE + 5), 4 * PAGE_SIZE },
		{ (void __user *)t->uaddr, PAGE_SIZE },
	};

	KUNIT_ASSERT_EQ(test, vm_munmap(hole, PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, pvm_test_copy(test, false, false, 5 * PAGE_SIZE,
					    riov, 2, NULL),
			2 * PAGE_SIZE - 5);
	KUNIT_EXPECT_EQ(test, t->kbuf[0], pvm_pattern(2 * PAGE_SIZE + 5));
	/* Starting in the hole copies nothing: the error is returned. */
	riov[0].iov_base = (void __user *)(hole + 1);
	KUNIT_EXPECT_EQ(test, pvm_test_copy(test, false, false, PAGE_SIZE,
					    riov, 2, NULL), -EFAULT);
	KUNIT_EXPECT_EQ(test, pvm_test_copy(test, true, false, PAGE_SIZE,
					    riov, 2, NULL), -EFAULT);
}

/* Writes reach the user pages and stop at the end of the local data. */
static void pvm_test_write(struct kunit *test)
{
	struct pvm_test *t = test->priv;
	struct iovec riov[] = {
		{ (void __user *)(t->uaddr + PAGE_SIZE + 1), 3 },
		{ (void __user *)(t->uaddr + 7 * PAGE_SIZE - 1), 4 * PAGE_SIZE },
	};
	void __user *check = (void __user *)(t->uaddr + 7 * PAGE_SIZE - 2);
	u8 back[8];

	memset(t->kbuf, 0xa5, 6);
	KUNIT_ASSERT_EQ(test, pvm_test_copy(test, true, false, 6, riov, 2,
					    NULL), 6);
	KUNIT_ASSERT_EQ(test, copy_from_user(back, check, 5), 0);
	KUNIT_EXPECT_EQ(test, back[0], pvm_pattern(7 * PAGE_SIZE - 2));
	KUNIT_EXPECT_EQ(test, back[1], 0xa5);
	KUNIT_EXPECT_EQ(test, back[3], 0xa5);
	KUNIT_EXPECT_EQ(test, back[4], pvm_pattern(7 * PAGE_SIZE + 2));
}

/* NOWAIT does not fault pages in: a never-touched page ends the copy. */
static void pvm_test_nowait(struct kunit *test)
{
	struct pvm_test *t = test->priv;
	unsigned long fresh;
	struct iovec riov[2];

	fresh = kunit_vm_mmap(test, NULL, 0, 2 * PAGE_SIZE,
			      PROT_READ | PROT_WRITE,
			      MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE(test, fresh, 0);
	riov[0] = (struct iovec){ (void __user *)(t->uaddr + PAGE_SIZE - 8), 8 };
	riov[1] = (struct iovec){ (void __user *)fresh, PAGE_SIZE };
	KUNIT_EXPECT_EQ(test, pvm_test_copy(test, false, true, PAGE_SIZE,
					    riov, 2, NULL), 8);
	KUNIT_EXPECT_EQ(test, pvm_test_copy(test, false, true, PAGE_SIZE,
					    &riov[1], 1, NULL), -EFAULT);
	/* Without NOWAIT the page is faulted in, and then NOWAIT finds it. */
	KUNIT_EXPECT_EQ(test, pvm_test_copy(test, true, false, PAGE_SIZE,
					    &riov[1], 1, NULL), PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, pvm_test_copy(test, false, true, PAGE_SIZE,
					    &riov[1], 1, NULL), PAGE_SIZE);
}

/* NOWAIT only tries the mmap lock: EAGAIN while someone holds it. */
static void pvm_test_nowait_lock_busy(struct kunit *test)
{
	struct pvm_test *t = test->priv;
	struct iovec riov = { (void __user *)t->uaddr, PAGE_SIZE };
	ssize_t ret;

	mmap_write_lock(current->mm);
	ret = pvm_test_copy(test, false, true, PAGE_SIZE, &riov, 1, NULL);
	mmap_write_unlock(current->mm);
	KUNIT_EXPECT_EQ(test, ret, -EAGAIN);
	KUNIT_EXPECT_EQ(test, pvm_test_copy(test, false, true, PAGE_SIZE,
					    &riov, 1, NULL), PAGE_SIZE);
}

/* The local side of a call is clamped to MAX_RW_COUNT by import_iovec(). */
static void pvm_test_max_rw_count(struct kunit *test)
{
	struct pvm_test *t = test->priv;
	struct iovec uiov[2] = {
		{ (void __user *)t->uaddr, PAGE_SIZE },
		{ (void __user *)(t->uaddr + PAGE_SIZE), MAX_RW_COUNT },
	};
	struct iovec riov = { (void __user *)t->uaddr, 2 * PAGE_SIZE };
	struct iovec __user *uvec = (void __user *)t->uaddr;
	struct iovec stack[UIO_FASTIOV], *iov = stack;
	struct pvm_copy c = { .mm = current->mm };
	struct iov_iter iter;

	/* The iovec array itself lives in user memory, as for the syscall. */
	KUNIT_ASSERT_EQ(test, copy_to_user(uvec, uiov, sizeof(uiov)), 0);
	KUNIT_ASSERT_EQ(test, import_iovec(ITER_DEST, uvec, 2, UIO_FASTIOV,
					   &iov, &iter), MAX_RW_COUNT);
	c.iter = &iter;
	/* Only the remote side's two pages are there to copy. */
	KUNIT_EXPECT_EQ(test, pvm_kunit_copy_mm(&c, &riov, 1, 2), 2 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, iov_iter_count(&iter),
			MAX_RW_COUNT - 2 * PAGE_SIZE);
	kfree(iov);
}

static struct kunit_case pvm_test_cases[] = {
	KUNIT_CASE(pvm_test_span_pages),
	KUNIT_CASE(pvm_test_batch_pages),
	KUNIT_CASE(pvm_test_read_straddle),
	KUNIT_CASE(pvm_test_batching),
	KUNIT_CASE(pvm_test_short_local),
	KUNIT_CASE(pvm_test_hole),
	KUNIT_CASE(pvm_test_write),
	KUNIT_CASE(pvm_test_nowait),
	KUNIT_CASE(pvm_test_nowait_lock_busy),
	KUNIT_CASE(pvm_test_max_rw_count),
	{}
};

static struct kunit_suite pvm_test_suite = {
	.name = "process_vm",
	.init = pvm_test_init,
	.test_cases = pvm_test_cases,
};

kunit_test_suites(&pvm_test_suite);

MODULE_DESCRIPTION("KUnit tests for process_vm_readv/writev");
MODULE_LICENSE("GPL");
