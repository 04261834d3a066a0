// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * KUnit tests for the process_vm_readv/writev copy engine, included at the
 * end of mm/process_vm_access.c so that they reach its static functions.
 *
 * The "remote" address space is a real user mm that KUnit attaches to the
 * test thread (kunit_vm_mmap()); the local side is a kernel buffer.
 */

#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/pagemap.h>
#include <linux/sched/signal.h>
#include <linux/sched/mm.h>
#include <linux/shmem_fs.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include <kunit/static_stub.h>
#include <kunit/test.h>

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
	if (IS_ERR_VALUE(t->uaddr))
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
 * ranges @riov.  Returns what pvm_copy_mm() returns; @res, if not
 * NULL, gets the final copy state (pages pinned, batches, stop reason).
 */
static ssize_t pvm_test_copy(struct kunit *test, bool write,
			     enum pvm_mode mode, size_t len,
			     const struct iovec *riov, unsigned long riovcnt,
			     struct pvm_copy *res)
{
	struct pvm_test *t = test->priv;
	struct kvec kv = { .iov_base = t->kbuf, .iov_len = len };
	struct iov_iter iter;
	struct pvm_copy c = {
		.mm = current->mm,
		.iter = &iter,
		.write = write,
		.mode = mode,
		.nofault = mode == PVM_TRY,
	};
	ssize_t ret;

	iov_iter_kvec(&iter, write ? ITER_SOURCE : ITER_DEST, &kv, 1, len);
	ret = pvm_copy_mm(&c, riov, riovcnt,
			  pvm_batch_pages(riov, riovcnt, len));
	if (res)
		*res = c;
	return ret;
}

static void span_pages_counts_touched_pages(struct kunit *test)
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

static void batch_pages_is_the_largest_span(struct kunit *test)
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
static void read_keeps_order_across_pages_and_iovecs(struct kunit *test)
{
	struct pvm_test *t = test->priv;
	struct iovec riov[] = {
		{ (void __user *)(t->uaddr + PAGE_SIZE - 3), 7 },
		{ NULL, 0 },
		{ (void __user *)(t->uaddr + 3 * PAGE_SIZE + 1), 2 * PAGE_SIZE },
	};
	size_t len = 7 + 2 * PAGE_SIZE;
	struct pvm_copy res;
	unsigned long i;

	KUNIT_ASSERT_EQ(test, pvm_test_copy(test, false, PVM_BLOCK, len, riov, 3,
					    &res), len);
	KUNIT_EXPECT_EQ(test, res.pinned, 2 + 3);
	/* One lock and pin round trip per remote iovec, offsets included. */
	KUNIT_EXPECT_EQ(test, res.batches, 2);
	for (i = 0; i < 7; i++)
		KUNIT_EXPECT_EQ(test, t->kbuf[i], pvm_pattern(PAGE_SIZE - 3 + i));
	for (i = 0; i < 2 * PAGE_SIZE; i++)
		KUNIT_ASSERT_EQ(test, t->kbuf[7 + i],
				pvm_pattern(3 * PAGE_SIZE + 1 + i));
}

/* A transfer bigger than the on-stack batch is pinned in large batches. */
static void large_copy_pins_in_one_batch(struct kunit *test)
{
	struct pvm_test *t = test->priv;
	size_t len = PVM_TEST_PAGES * PAGE_SIZE;
	struct iovec riov = { (void __user *)t->uaddr, len };
	struct pvm_copy res;
	unsigned long i;

	KUNIT_ASSERT_EQ(test, pvm_test_copy(test, false, PVM_BLOCK, len, &riov, 1,
					    &res), len);
	KUNIT_EXPECT_EQ(test, res.pinned, PVM_TEST_PAGES);
	KUNIT_EXPECT_EQ(test, res.batches, 1);
	for (i = 0; i < len; i++)
		KUNIT_ASSERT_EQ(test, t->kbuf[i], pvm_pattern(i));
}

/* Only the pages the local side has room for are pinned. */
static void short_local_side_pins_only_what_fits(struct kunit *test)
{
	struct pvm_test *t = test->priv;
	struct iovec riov = { (void __user *)(t->uaddr + 10),
			      PVM_TEST_PAGES * PAGE_SIZE - 10 };
	struct pvm_copy res;

	KUNIT_ASSERT_EQ(test, pvm_test_copy(test, false, PVM_BLOCK, 100, &riov, 1,
					    &res), 100);
	KUNIT_EXPECT_EQ(test, res.pinned, 1);
	KUNIT_EXPECT_EQ(test, t->kbuf[99], pvm_pattern(109));
}

/* Copying stops at an unmapped hole and reports the bytes before it. */
static void copy_stops_at_hole(struct kunit *test)
{
	struct pvm_test *t = test->priv;
	unsigned long hole = t->uaddr + 4 * PAGE_SIZE;
	struct iovec riov[] = {
		{ (void __user *)(t->uaddr + 2 * PAGE_SIZE + 5), 4 * PAGE_SIZE },
		{ (void __user *)t->uaddr, PAGE_SIZE },
	};

	KUNIT_ASSERT_EQ(test, vm_munmap(hole, PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, pvm_test_copy(test, false, PVM_BLOCK, 5 * PAGE_SIZE,
					    riov, 2, NULL),
			2 * PAGE_SIZE - 5);
	KUNIT_EXPECT_EQ(test, t->kbuf[0], pvm_pattern(2 * PAGE_SIZE + 5));
	/* Starting in the hole copies nothing: the error is returned. */
	riov[0].iov_base = (void __user *)(hole + 1);
	KUNIT_EXPECT_EQ(test, pvm_test_copy(test, false, PVM_BLOCK, PAGE_SIZE,
					    riov, 2, NULL), -EFAULT);
	KUNIT_EXPECT_EQ(test, pvm_test_copy(test, true, PVM_BLOCK, PAGE_SIZE,
					    riov, 2, NULL), -EFAULT);
}

/* Writes reach the user pages and stop at the end of the local data. */
static void write_stops_at_end_of_local_data(struct kunit *test)
{
	struct pvm_test *t = test->priv;
	struct iovec riov[] = {
		{ (void __user *)(t->uaddr + PAGE_SIZE + 1), 3 },
		{ (void __user *)(t->uaddr + 7 * PAGE_SIZE - 1), 4 * PAGE_SIZE },
	};
	void __user *check = (void __user *)(t->uaddr + 7 * PAGE_SIZE - 2);
	u8 back[8];

	memset(t->kbuf, 0xa5, 6);
	KUNIT_ASSERT_EQ(test, pvm_test_copy(test, true, PVM_BLOCK, 6, riov, 2,
					    NULL), 6);
	KUNIT_ASSERT_EQ(test, copy_from_user(back, check, 5), 0);
	KUNIT_EXPECT_EQ(test, back[0], pvm_pattern(7 * PAGE_SIZE - 2));
	KUNIT_EXPECT_EQ(test, back[1], 0xa5);
	KUNIT_EXPECT_EQ(test, back[3], 0xa5);
	KUNIT_EXPECT_EQ(test, back[4], pvm_pattern(7 * PAGE_SIZE + 2));
}

/* NOWAIT does not fault pages in: a never-touched page ends the copy. */
static void nowait_does_not_fault_pages_in(struct kunit *test)
{
	struct pvm_test *t = test->priv;
	unsigned long fresh;
	struct iovec riov[2];

	fresh = kunit_vm_mmap(test, NULL, 0, 2 * PAGE_SIZE,
			      PROT_READ | PROT_WRITE,
			      MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(fresh));
	riov[0] = (struct iovec){ (void __user *)(t->uaddr + PAGE_SIZE - 8), 8 };
	riov[1] = (struct iovec){ (void __user *)fresh, PAGE_SIZE };
	KUNIT_EXPECT_EQ(test, pvm_test_copy(test, false, PVM_NOWAIT, PAGE_SIZE,
					    riov, 2, NULL), 8);
	KUNIT_EXPECT_EQ(test, pvm_test_copy(test, false, PVM_NOWAIT, PAGE_SIZE,
					    &riov[1], 1, NULL), -EFAULT);
	/* Without NOWAIT the page is faulted in, and then NOWAIT finds it. */
	KUNIT_EXPECT_EQ(test, pvm_test_copy(test, true, PVM_BLOCK, PAGE_SIZE,
					    &riov[1], 1, NULL), PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, pvm_test_copy(test, false, PVM_NOWAIT, PAGE_SIZE,
					    &riov[1], 1, NULL), PAGE_SIZE);
}

/* Two bytes across a page boundary cost one pin call for both pages. */
static void two_bytes_across_pages_pin_in_one_batch(struct kunit *test)
{
	struct pvm_test *t = test->priv;
	struct iovec riov = { (void __user *)(t->uaddr + PAGE_SIZE - 1), 2 };
	struct pvm_copy res;

	KUNIT_ASSERT_EQ(test, pvm_test_copy(test, false, PVM_BLOCK, 2, &riov, 1,
					    &res), 2);
	KUNIT_EXPECT_EQ(test, res.pinned, 2);
	KUNIT_EXPECT_EQ(test, res.batches, 1);
	KUNIT_EXPECT_EQ(test, t->kbuf[1], pvm_pattern(PAGE_SIZE));
}

/*
 * The try mode tells "would fault" (-EAGAIN, retried where sleeping is
 * allowed) from "bad address" (-EFAULT), and keeps the bytes before it.
 */
static void try_tells_would_fault_from_bad_address(struct kunit *test)
{
	struct pvm_test *t = test->priv;
	unsigned long fresh, ro;
	struct iovec riov[2];
	struct pvm_copy res;

	fresh = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
			      MAP_ANONYMOUS | MAP_PRIVATE, 0);
	ro = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE, PROT_READ,
			   MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(fresh) || IS_ERR_VALUE(ro));
	riov[0] = (struct iovec){ (void __user *)(t->uaddr + PAGE_SIZE - 8), 8 };
	riov[1] = (struct iovec){ (void __user *)fresh, PAGE_SIZE };
	KUNIT_EXPECT_EQ(test, pvm_test_copy(test, false, PVM_TRY, PAGE_SIZE,
					    riov, 2, &res), 8);
	KUNIT_EXPECT_EQ(test, res.err, -EAGAIN);
	KUNIT_EXPECT_EQ(test, pvm_test_copy(test, true, PVM_TRY, PAGE_SIZE,
					    &riov[1], 1, NULL), -EAGAIN);
	/* No VMA, or one that never allows the access: no retry. */
	KUNIT_ASSERT_EQ(test, vm_munmap(fresh, PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, pvm_test_copy(test, false, PVM_TRY, PAGE_SIZE,
					    &riov[1], 1, NULL), -EFAULT);
	riov[1].iov_base = (void __user *)ro;
	KUNIT_EXPECT_EQ(test, pvm_test_copy(test, true, PVM_TRY, PAGE_SIZE,
					    &riov[1], 1, NULL), -EFAULT);
	/* A read-only page that is not there yet may still be read. */
	KUNIT_EXPECT_EQ(test, pvm_test_copy(test, false, PVM_TRY, PAGE_SIZE,
					    &riov[1], 1, NULL), -EAGAIN);
}

/*
 * A kthread that holds a lock until the test lets go, or for one second at
 * most: a copy that wrongly waits for the lock returns late, and the test
 * fails instead of hanging.
 */
struct pvm_holder {
	void (*lock)(struct pvm_holder *h);
	void (*unlock)(struct pvm_holder *h);
	struct mm_struct *mm;
	struct folio *folio;
	struct task_struct *notify;
	struct completion locked, release, done;
	bool timed_out;
};

static int pvm_holder_fn(void *data)
{
	struct pvm_holder *h = data;

	h->lock(h);
	complete(&h->locked);
	/* What io_uring cancellation does to a running io-wq worker. */
	if (h->notify) {
		msleep(50);
		set_notify_signal(h->notify);
	}
	h->timed_out = !wait_for_completion_timeout(&h->release, HZ);
	h->unlock(h);
	kthread_complete_and_exit(&h->done, 0);
}

static void pvm_holder_start(struct kunit *test, struct pvm_holder *h)
{
	init_completion(&h->locked);
	init_completion(&h->release);
	init_completion(&h->done);
	h->timed_out = false;
	KUNIT_ASSERT_FALSE(test, IS_ERR(kthread_run(pvm_holder_fn, h,
						    "pvm-holder")));
	wait_for_completion(&h->locked);
}

static void pvm_holder_stop(struct pvm_holder *h)
{
	complete(&h->release);
	wait_for_completion(&h->done);
}

static void pvm_hold_mmap(struct pvm_holder *h)
{
	mmap_write_lock(h->mm);
}

static void pvm_release_mmap(struct pvm_holder *h)
{
	mmap_write_unlock(h->mm);
}

static void pvm_hold_folio(struct pvm_holder *h)
{
	folio_lock(h->folio);
}

static void pvm_release_folio(struct pvm_holder *h)
{
	folio_unlock(h->folio);
}

/* Make SIGKILL pending on the test thread, or take it back. */
static void pvm_test_fatal_signal(bool on)
{
	struct sighand_struct *sighand;
	unsigned long flags;

	/* A running thread always has its sighand: this cannot fail. */
	sighand = lock_task_sighand(current, &flags);
	if (!sighand)
		return;
	if (on)
		sigaddset(&current->pending.signal, SIGKILL);
	else
		sigdelset(&current->pending.signal, SIGKILL);
	recalc_sigpending();
	spin_unlock_irqrestore(&sighand->siglock, flags);
}

/*
 * With a fatal signal pending, the syscall does not wait for the target's
 * mmap lock: -EINTR, nothing copied.
 */
static void fatal_signal_ends_lock_wait(struct kunit *test)
{
	struct pvm_test *t = test->priv;
	struct iovec riov = { (void __user *)t->uaddr, PAGE_SIZE };
	struct pvm_holder h = {
		.lock = pvm_hold_mmap,
		.unlock = pvm_release_mmap,
		.mm = current->mm,
	};
	ssize_t ret;

	pvm_holder_start(test, &h);
	pvm_test_fatal_signal(true);
	ret = pvm_test_copy(test, false, PVM_BLOCK, PAGE_SIZE, &riov, 1, NULL);
	pvm_test_fatal_signal(false);
	pvm_holder_stop(&h);
	KUNIT_EXPECT_EQ(test, ret, -EINTR);
	KUNIT_EXPECT_FALSE(test, h.timed_out);
	KUNIT_EXPECT_EQ(test, t->kbuf[0], 0);
}

/*
 * The interruptible mode (io-wq) stops waiting for the mmap lock when the
 * notification signal of io_uring cancellation arrives; the syscall's mode
 * is not stopped by it.
 */
static void notify_signal_ends_interruptible_lock_wait(struct kunit *test)
{
	struct pvm_test *t = test->priv;
	struct iovec riov = { (void __user *)t->uaddr, PAGE_SIZE };
	struct pvm_holder h = {
		.lock = pvm_hold_mmap,
		.unlock = pvm_release_mmap,
		.mm = current->mm,
		.notify = current,
	};
	ssize_t ret;

	pvm_holder_start(test, &h);
	ret = pvm_test_copy(test, false, PVM_INTR, PAGE_SIZE, &riov, 1, NULL);
	pvm_holder_stop(&h);
	clear_notify_signal();
	KUNIT_EXPECT_EQ(test, ret, -EINTR);
	KUNIT_EXPECT_FALSE(test, h.timed_out);
	KUNIT_EXPECT_EQ(test, t->kbuf[0], 0);

	set_notify_signal(current);
	KUNIT_EXPECT_EQ(test, pvm_test_copy(test, false, PVM_BLOCK, PAGE_SIZE,
					    &riov, 1, NULL), PAGE_SIZE);
	clear_notify_signal();
	KUNIT_EXPECT_EQ(test, t->kbuf[0], pvm_pattern(0));
}

/*
 * NOWAIT and the try mode only try the mmap lock: -EAGAIN while a kthread
 * holds it, then the copy works once it is free.
 */
static void nonblock_modes_only_try_the_mmap_lock(struct kunit *test)
{
	static const enum pvm_mode modes[] = { PVM_NOWAIT, PVM_TRY };
	struct pvm_test *t = test->priv;
	struct iovec riov = { (void __user *)t->uaddr, PAGE_SIZE };
	struct pvm_holder h = {
		.lock = pvm_hold_mmap,
		.unlock = pvm_release_mmap,
		.mm = current->mm,
	};
	unsigned int i;
	ssize_t ret;

	for (i = 0; i < ARRAY_SIZE(modes); i++) {
		pvm_holder_start(test, &h);
		ret = pvm_test_copy(test, false, modes[i], PAGE_SIZE, &riov, 1,
				    NULL);
		pvm_holder_stop(&h);
		KUNIT_EXPECT_EQ(test, ret, -EAGAIN);
		KUNIT_EXPECT_FALSE(test, h.timed_out);
		KUNIT_EXPECT_EQ(test, pvm_test_copy(test, false, modes[i],
						    PAGE_SIZE, &riov, 1, NULL),
				PAGE_SIZE);
	}
}

/*
 * A non-blocking write dirties a written anonymous folio without waiting
 * for its lock (the PTE is dirty, the folio is not until we say so).
 */
static void nonblock_write_dirties_without_folio_lock(struct kunit *test)
{
	struct pvm_test *t = test->priv;
	unsigned long addr = t->uaddr + 5 * PAGE_SIZE;
	struct iovec riov = { (void __user *)addr, PAGE_SIZE };
	struct pvm_holder h = {
		.lock = pvm_hold_folio,
		.unlock = pvm_release_folio,
	};
	static const enum pvm_mode modes[] = { PVM_NOWAIT, PVM_TRY };
	struct page *page;
	unsigned int i;
	ssize_t ret;

	KUNIT_ASSERT_EQ(test, get_user_pages_fast(addr, 1, 0, &page), 1);
	h.folio = page_folio(page);
	for (i = 0; i < ARRAY_SIZE(modes); i++) {
		folio_lock(h.folio);
		folio_clear_dirty(h.folio);
		folio_unlock(h.folio);
		pvm_holder_start(test, &h);
		ret = pvm_test_copy(test, true, modes[i], PAGE_SIZE, &riov, 1,
				    NULL);
		pvm_holder_stop(&h);
		KUNIT_EXPECT_EQ(test, ret, PAGE_SIZE);
		KUNIT_EXPECT_FALSE(test, h.timed_out);
		KUNIT_EXPECT_TRUE(test, folio_test_dirty(h.folio));
	}
	put_page(page);
}

/* A remote range that wraps around the top of the address space faults. */
static void range_wrapping_the_address_space_faults(struct kunit *test)
{
	struct iovec riov[] = {
		{ (void __user *)-PAGE_SIZE, 2 * PAGE_SIZE },
		{ (void __user *)-1L, 16 },
	};
	struct pvm_copy res;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(riov); i++) {
		KUNIT_EXPECT_EQ(test, pvm_test_copy(test, false, PVM_BLOCK,
						    PAGE_SIZE, &riov[i], 1,
						    &res), -EFAULT);
		KUNIT_EXPECT_EQ(test, res.pinned, 0);
	}
}

/* The folio with the page mapped at @addr, and whether it has pins. */
static bool pvm_test_pinned(struct kunit *test, unsigned long addr,
			    struct folio **folio)
{
	struct page *page;
	bool pinned;

	KUNIT_ASSERT_EQ(test, get_user_pages_fast(addr, 1, 0, &page), 1);
	*folio = page_folio(page);
	pinned = folio_maybe_dma_pinned(*folio);
	put_page(page);
	return pinned;
}

/* The folio mapped at @addr, unpinned, with its dirty flag cleared. */
static struct folio *pvm_test_clean_folio(struct kunit *test,
					  unsigned long addr)
{
	struct folio *folio;

	KUNIT_ASSERT_FALSE(test, pvm_test_pinned(test, addr, &folio));
	folio_lock(folio);
	folio_clear_dirty(folio);
	folio_unlock(folio);
	return folio;
}

/*
 * A written file page whose folio lock is busy is not waited for in the
 * non-blocking modes: it stays pinned and clean until the lock is free,
 * then the batch's work item dirties and unpins it.  The page whose lock
 * is free is dirtied and unpinned at once.
 */
static void nonblock_write_defers_busy_file_folios(struct kunit *test)
{
	static const enum pvm_mode modes[] = { PVM_NOWAIT, PVM_TRY };
	struct file *file;
	struct folio *locked, *unlocked;
	struct iovec riov;
	unsigned long addr;
	unsigned int i;
	int ms;

	file = shmem_kernel_file_setup("pvm-kunit", 2 * PAGE_SIZE, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(file));
	addr = kunit_vm_mmap(test, file, 0, 2 * PAGE_SIZE,
			     PROT_READ | PROT_WRITE, MAP_SHARED, 0);
	fput(file);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(addr));
	KUNIT_ASSERT_EQ(test, clear_user((void __user *)addr, 2 * PAGE_SIZE),
			0);
	riov = (struct iovec){ (void __user *)addr, 2 * PAGE_SIZE };
	for (i = 0; i < ARRAY_SIZE(modes); i++) {
		locked = pvm_test_clean_folio(test, addr);
		unlocked = pvm_test_clean_folio(test, addr + PAGE_SIZE);
		KUNIT_ASSERT_FALSE(test, folio_test_anon(locked));
		folio_lock(locked);
		KUNIT_EXPECT_EQ(test, pvm_test_copy(test, true, modes[i],
						    riov.iov_len, &riov, 1,
						    NULL), riov.iov_len);
		KUNIT_EXPECT_TRUE(test, folio_maybe_dma_pinned(locked));
		KUNIT_EXPECT_FALSE(test, folio_test_dirty(locked));
		KUNIT_EXPECT_FALSE(test, folio_maybe_dma_pinned(unlocked));
		KUNIT_EXPECT_TRUE(test, folio_test_dirty(unlocked));
		folio_unlock(locked);
		for (ms = 0; ms < 2000 && folio_maybe_dma_pinned(locked); ms += 20)
			msleep(20);
		KUNIT_EXPECT_FALSE(test, folio_maybe_dma_pinned(locked));
		KUNIT_EXPECT_TRUE(test, folio_test_dirty(locked));
	}
}

/* A user address 100 bytes before an unmapped page, for local faults. */
static unsigned long pvm_test_before_hole(struct kunit *test)
{
	unsigned long local = kunit_vm_mmap(test, NULL, 0, 2 * PAGE_SIZE,
					     PROT_READ | PROT_WRITE,
					     MAP_ANONYMOUS | MAP_PRIVATE, 0);

	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(local));
	KUNIT_ASSERT_EQ(test, vm_munmap(local + PAGE_SIZE, PAGE_SIZE), 0);
	return local + PAGE_SIZE - 100;
}

/*
 * A fault on the caller's side ends the copy; the bytes before it count,
 * in both directions.
 */
static void local_fault_returns_bytes_before_it(struct kunit *test)
{
	struct pvm_test *t = test->priv;
	struct iovec riov = { (void __user *)(t->uaddr + 8 * PAGE_SIZE),
			      PAGE_SIZE };
	unsigned long local = pvm_test_before_hole(test);
	struct iov_iter iter;
	struct pvm_copy c = { .mm = current->mm, .iter = &iter };
	u8 back[100];
	bool write;

	for (write = false; ; write = true) {
		KUNIT_ASSERT_EQ(test, import_ubuf(write ? ITER_SOURCE : ITER_DEST,
						  (void __user *)local, 200,
						  &iter), 0);
		c.write = write;
		KUNIT_EXPECT_EQ(test, pvm_copy_mm(&c, &riov, 1, 1), 100);
		KUNIT_EXPECT_EQ(test, c.err, -EFAULT);
		if (write)
			break;
		KUNIT_ASSERT_EQ(test, copy_from_user(back, (void __user *)local,
						     100), 0);
		KUNIT_EXPECT_EQ(test, back[99], pvm_pattern(8 * PAGE_SIZE + 99));
		/* Write it back changed, and see it arrive. */
		memset(back, 0x5a, sizeof(back));
		KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)local, back,
						   100), 0);
	}
	KUNIT_ASSERT_EQ(test, copy_from_user(back, riov.iov_base, 100), 0);
	KUNIT_EXPECT_EQ(test, back[0], 0x5a);
	KUNIT_EXPECT_EQ(test, back[99], 0x5a);
}

/*
 * After a fault on the caller's side only the pages the copy reached are
 * dirtied; the rest are unpinned as they are, in every mode.
 */
static void local_fault_leaves_unreached_pages_clean(struct kunit *test)
{
	static const enum pvm_mode modes[] = { PVM_BLOCK, PVM_NOWAIT, PVM_TRY };
	struct pvm_test *t = test->priv;
	unsigned long addr = t->uaddr + 10 * PAGE_SIZE;
	struct iovec riov = { (void __user *)addr, 2 * PAGE_SIZE };
	unsigned long local = pvm_test_before_hole(test);
	struct folio *reached, *unreached;
	struct iov_iter iter;
	struct pvm_copy c;
	ssize_t copied;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(modes); i++) {
		reached = pvm_test_clean_folio(test, addr);
		unreached = pvm_test_clean_folio(test, addr + PAGE_SIZE);
		KUNIT_ASSERT_EQ(test, import_ubuf(ITER_SOURCE,
						  (void __user *)local,
						  2 * PAGE_SIZE, &iter), 0);
		c = (struct pvm_copy){ .mm = current->mm, .iter = &iter,
				       .write = true, .mode = modes[i],
				       .nofault = modes[i] == PVM_TRY };
		copied = pvm_copy_mm(&c, &riov, 1, 2);
		KUNIT_EXPECT_GT(test, copied, 0);
		KUNIT_EXPECT_LE(test, copied, 100);
		KUNIT_EXPECT_EQ(test, c.pinned, 2);
		KUNIT_EXPECT_TRUE(test, folio_test_dirty(reached));
		KUNIT_EXPECT_FALSE(test, folio_test_dirty(unreached));
		KUNIT_EXPECT_FALSE(test, folio_maybe_dma_pinned(reached));
		KUNIT_EXPECT_FALSE(test, folio_maybe_dma_pinned(unreached));
	}
}

#ifdef CONFIG_TRANSPARENT_HUGEPAGE
/* pvm_pattern(@addr - @origin) onward into the @len bytes at @addr */
static void pvm_test_fill(struct kunit *test, unsigned long addr, size_t len,
			  unsigned long origin)
{
	struct pvm_test *t = test->priv;
	unsigned long i;

	for (i = 0; i < len; i++)
		t->kbuf[i] = pvm_pattern(addr - origin + i);
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)addr, t->kbuf, len),
			0);
	memset(t->kbuf, 0, len);
}

/*
 * Two THPs at the returned base, after a small page, with the pattern
 * (counted from the base) just before and after the base and around the
 * boundary between the THPs.  Skips where THPs cannot be had.
 */
static unsigned long pvm_test_map_thps(struct kunit *test)
{
	size_t half = PVM_TEST_PAGES * PAGE_SIZE / 2;
	unsigned long addr, base, i;
	struct page *page;
	bool large;

	if (!has_transparent_hugepage())
		kunit_skip(test, "no THP support");
	addr = kunit_vm_mmap(test, NULL, 0, 4 * HPAGE_PMD_SIZE,
			     PROT_READ | PROT_WRITE,
			     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(addr));
	base = ALIGN(addr + PAGE_SIZE, HPAGE_PMD_SIZE);
	KUNIT_ASSERT_EQ(test, do_madvise(current->mm, base, 2 * HPAGE_PMD_SIZE,
					 MADV_HUGEPAGE), 0);
	pvm_test_fill(test, base - PAGE_SIZE, 8 * PAGE_SIZE, base);
	pvm_test_fill(test, base + HPAGE_PMD_SIZE - half, 2 * half, base);
	for (i = 0; i < 2; i++) {
		KUNIT_ASSERT_EQ(test, pin_user_pages_fast(base + i * HPAGE_PMD_SIZE,
							  1, 0, &page), 1);
		large = folio_test_large(page_folio(page));
		unpin_user_page(page);
		if (!large)
			kunit_skip(test, "no THP was allocated");
	}
	return base;
}

/*
 * A copy from the end of one THP into the next makes one copy call per
 * folio; a batch that starts on a small page still copies the THP part in
 * one call.  With highmem a folio need not be contiguous in the kernel's
 * address space and no runs are made.  Both directions, byte exact.
 */
static void thp_copies_one_run_per_folio(struct kunit *test)
{
	struct pvm_test *t = test->priv;
	unsigned long base = pvm_test_map_thps(test);
	size_t len = 2 * PVM_STACK_PAGES * PAGE_SIZE - 10;
	bool runs = !IS_ENABLED(CONFIG_HIGHMEM);
	struct iovec riov = { (void __user *)(base + HPAGE_PMD_SIZE - len / 2),
			      len };
	struct pvm_copy res;
	unsigned long i;
	u8 back[16];

	KUNIT_ASSERT_EQ(test, pvm_test_copy(test, false, PVM_BLOCK, len, &riov,
					    1, &res), len);
	KUNIT_EXPECT_EQ(test, res.runs, runs ? 2 : 0);
	for (i = 0; i < len; i++)
		KUNIT_ASSERT_EQ(test, t->kbuf[i],
				pvm_pattern(HPAGE_PMD_SIZE - len / 2 + i));

	/* The small page before the first THP, then a run of 3 of its pages. */
	riov = (struct iovec){ (void __user *)(base - 5), 3 * PAGE_SIZE + 10 };
	for (i = 0; i < riov.iov_len; i++)
		t->kbuf[i] = ~pvm_pattern(i);
	KUNIT_ASSERT_EQ(test, pvm_test_copy(test, true, PVM_BLOCK, riov.iov_len,
					    &riov, 1, &res), riov.iov_len);
	KUNIT_EXPECT_EQ(test, res.runs, runs ? 1 : 0);
	KUNIT_ASSERT_EQ(test, copy_from_user(back, riov.iov_base + 1, 8), 0);
	for (i = 0; i < 8; i++)
		KUNIT_EXPECT_EQ(test, back[i], (u8)~pvm_pattern(1 + i));
	KUNIT_ASSERT_EQ(test, copy_from_user(back, riov.iov_base + riov.iov_len
					     - 8, 9), 0);
	for (i = 0; i < 8; i++)
		KUNIT_EXPECT_EQ(test, back[i],
				(u8)~pvm_pattern(riov.iov_len - 8 + i));
	KUNIT_EXPECT_EQ(test, back[8], pvm_pattern(3 * PAGE_SIZE + 5));
}

/*
 * A run is unpinned in one step: dirtied when written, not when read, and
 * a local fault in one THP still unpins the next THP's run, uncopied.
 */
static void thp_runs_unpin_and_dirty(struct kunit *test)
{
	unsigned long base = pvm_test_map_thps(test);
	struct iovec riov = { (void __user *)(base + PAGE_SIZE),
			      2 * PAGE_SIZE };
	struct iov_iter iter;
	struct pvm_copy c;
	struct folio *folio, *next;
	unsigned long local = pvm_test_before_hole(test);
	ssize_t copied;
	bool write;

	KUNIT_ASSERT_FALSE(test, pvm_test_pinned(test, base, &folio));
	folio_lock(folio);
	folio_clear_dirty(folio);
	folio_unlock(folio);
	KUNIT_ASSERT_EQ(test, pvm_test_copy(test, false, PVM_BLOCK,
					    riov.iov_len, &riov, 1, NULL),
			riov.iov_len);
	KUNIT_EXPECT_FALSE(test, folio_test_dirty(folio));
	KUNIT_EXPECT_FALSE(test, pvm_test_pinned(test, base, &folio));
	KUNIT_ASSERT_EQ(test, pvm_test_copy(test, true, PVM_BLOCK,
					    riov.iov_len, &riov, 1, NULL),
			riov.iov_len);
	KUNIT_EXPECT_TRUE(test, folio_test_dirty(folio));
	KUNIT_EXPECT_FALSE(test, pvm_test_pinned(test, base, &folio));

	/* The last page of the first THP and the first of the next. */
	riov = (struct iovec){ (void __user *)(base + HPAGE_PMD_SIZE -
					       PAGE_SIZE), 2 * PAGE_SIZE };
	for (write = false; ; write = true) {
		KUNIT_ASSERT_EQ(test, import_ubuf(write ? ITER_SOURCE : ITER_DEST,
						  (void __user *)local,
						  2 * PAGE_SIZE, &iter), 0);
		/* The counters are per copy: each pass starts from zero. */
		c = (struct pvm_copy){ .mm = current->mm, .iter = &iter,
				       .write = write };
		/*
		 * Up to the fault; an architecture's usercopy may stop short
		 * of it (arm64 does on large copies) but must copy something.
		 */
		copied = pvm_copy_mm(&c, &riov, 1, 2);
		KUNIT_EXPECT_GT(test, copied, 0);
		KUNIT_EXPECT_LE(test, copied, 100);
		KUNIT_EXPECT_EQ(test, c.err, -EFAULT);
		KUNIT_EXPECT_EQ(test, c.pinned, 2);
		KUNIT_EXPECT_FALSE(test, pvm_test_pinned(test, base +
							 HPAGE_PMD_SIZE - 1,
							 &folio));
		KUNIT_EXPECT_FALSE(test, pvm_test_pinned(test, base +
							 HPAGE_PMD_SIZE, &next));
		KUNIT_EXPECT_PTR_NE(test, folio, next);
		if (write)
			break;
	}
}
#else
static void thp_copies_one_run_per_folio(struct kunit *test)
{
	kunit_skip(test, "no CONFIG_TRANSPARENT_HUGEPAGE");
}

static void thp_runs_unpin_and_dirty(struct kunit *test)
{
	kunit_skip(test, "no CONFIG_TRANSPARENT_HUGEPAGE");
}
#endif

/* A run ends at its folio's end even where the next page follows on. */
static void run_pages_stop_at_the_folio_end(struct kunit *test)
{
	struct folio *folio = folio_alloc(GFP_KERNEL, 2);
	struct page *pages[6];
	unsigned long i;

	KUNIT_ASSERT_NOT_NULL(test, folio);
	/* Only the first page's folio is looked at; the rest are compared. */
	for (i = 0; i < ARRAY_SIZE(pages); i++)
		pages[i] = nth_page(folio_page(folio, 0), i);
	KUNIT_EXPECT_EQ(test, pvm_run_pages(pages, 6), 4);
	KUNIT_EXPECT_EQ(test, pvm_run_pages(pages + 1, 5), 3);
	KUNIT_EXPECT_EQ(test, pvm_run_pages(pages + 1, 2), 2);
	KUNIT_EXPECT_EQ(test, pvm_run_pages(pages + 3, 3), 1);
	swap(pages[1], pages[2]);
	KUNIT_EXPECT_EQ(test, pvm_run_pages(pages, 4), 1);
	KUNIT_EXPECT_EQ(test, pvm_run_pages(pages + 2, 2), 1);
	folio_put(folio);
}

/* Small pages are copied one by one, never as runs. */
static void small_pages_make_no_runs(struct kunit *test)
{
	struct pvm_test *t = test->priv;
	size_t len = PVM_TEST_PAGES * PAGE_SIZE - 1;
	struct iovec riov = { (void __user *)(t->uaddr + 1), len };
	struct pvm_copy res;

	KUNIT_ASSERT_EQ(test, pvm_test_copy(test, true, PVM_BLOCK, len, &riov,
					    1, &res), len);
	KUNIT_EXPECT_EQ(test, res.runs, 0);
	KUNIT_EXPECT_EQ(test, res.pinned, PVM_TEST_PAGES);
}

static struct page **pvm_test_no_batch(unsigned long nr, gfp_t gfp)
{
	return NULL;
}

/* Without memory for a large batch, the copy runs in stack batches. */
static void batch_allocation_failure_falls_back_to_stack(struct kunit *test)
{
	struct pvm_test *t = test->priv;
	size_t len = PVM_TEST_PAGES * PAGE_SIZE;
	struct iovec riov = { (void __user *)t->uaddr, len };
	struct pvm_copy res;
	unsigned long i;

	kunit_activate_static_stub(test, pvm_alloc_batch, pvm_test_no_batch);
	KUNIT_ASSERT_EQ(test, pvm_test_copy(test, false, PVM_BLOCK, len, &riov,
					    1, &res), len);
	kunit_deactivate_static_stub(test, pvm_alloc_batch);
	KUNIT_EXPECT_EQ(test, res.pinned, PVM_TEST_PAGES);
	KUNIT_EXPECT_EQ(test, res.batches, PVM_TEST_PAGES / PVM_STACK_PAGES);
	for (i = 0; i < len; i++)
		KUNIT_ASSERT_EQ(test, t->kbuf[i], pvm_pattern(i));
}

static struct kunit_case pvm_test_cases[] = {
	KUNIT_CASE(span_pages_counts_touched_pages),
	KUNIT_CASE(batch_pages_is_the_largest_span),
	KUNIT_CASE(read_keeps_order_across_pages_and_iovecs),
	KUNIT_CASE(large_copy_pins_in_one_batch),
	KUNIT_CASE(short_local_side_pins_only_what_fits),
	KUNIT_CASE(copy_stops_at_hole),
	KUNIT_CASE(write_stops_at_end_of_local_data),
	KUNIT_CASE(nowait_does_not_fault_pages_in),
	KUNIT_CASE(two_bytes_across_pages_pin_in_one_batch),
	KUNIT_CASE(try_tells_would_fault_from_bad_address),
	KUNIT_CASE(fatal_signal_ends_lock_wait),
	KUNIT_CASE(notify_signal_ends_interruptible_lock_wait),
	KUNIT_CASE(nonblock_modes_only_try_the_mmap_lock),
	KUNIT_CASE(nonblock_write_dirties_without_folio_lock),
	KUNIT_CASE(nonblock_write_defers_busy_file_folios),
	KUNIT_CASE(range_wrapping_the_address_space_faults),
	KUNIT_CASE(local_fault_returns_bytes_before_it),
	KUNIT_CASE(local_fault_leaves_unreached_pages_clean),
	KUNIT_CASE(batch_allocation_failure_falls_back_to_stack),
	KUNIT_CASE(thp_copies_one_run_per_folio),
	KUNIT_CASE(thp_runs_unpin_and_dirty),
	KUNIT_CASE(small_pages_make_no_runs),
	KUNIT_CASE(run_pages_stop_at_the_folio_end),
	{}
};

static struct kunit_suite pvm_test_suite = {
	.name = "process_vm",
	.init = pvm_test_init,
	.test_cases = pvm_test_cases,
};

kunit_test_suites(&pvm_test_suite);
