// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * process_vm_readv(2) and process_vm_writev(2): Cross Memory Attach.
 *
 * Copyright (C) 2010-2011 Christopher Yeoh <cyeoh@au1.ibm.com>, IBM Corp.
 *
 * Data moves between the caller's iovecs and another process's iovecs in a
 * single copy.  The target's pages are pinned in batches under its mmap read
 * lock, copied through a temporary kernel mapping and unpinned again.  Access
 * needs the same permission as PTRACE_ATTACH, so LSMs and Yama have their say.
 */

#include <linux/compat.h>
#include <linux/file.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/oom.h>
#include <linux/pagemap.h>
#include <linux/pid.h>
#include <linux/process_vm.h>
#include <linux/ptrace.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/secretmem.h>
#include <linux/slab.h>
#include <linux/syscalls.h>
#include <linux/uio.h>
#include <linux/workqueue.h>
#include <kunit/static_stub.h>

#define CREATE_TRACE_POINTS
#include <trace/events/process_vm.h>

#include "internal.h"

/**
 * struct pvm_copy - State of one process_vm_readv/writev copy.
 * @mm: the target's address space, referenced.
 * @iter: the caller's side of the copy.
 * @pages: batch of pinned target pages.
 * @max_pages: capacity of @pages.
 * @gup_flags: FOLL_* flags for pinning.
 * @write: copy from @iter into @mm.
 * @nofault: copy the local side with page faults disabled: a local page
 *	that is not there stops the copy with -EAGAIN.
 * @keep: the pages are the caller's, pinned for longer than the copy:
 *	they are not unpinned here.
 * @mode: how the copy may wait.
 * @err: why the copy stopped early, 0 if it did not.
 * @pinned: pages pinned so far, for the tracepoint.
 * @batches: pin calls made so far (each takes the mmap lock); KUnit only.
 * @runs: copies of runs of two or more pages of a large folio made so far;
 *	KUnit only.
 */
struct pvm_copy {
	struct mm_struct *mm;
	struct iov_iter *iter;
	struct page **pages;
	unsigned long max_pages;
	unsigned int gup_flags;
	bool write;
	bool nofault;
	bool keep;
	enum pvm_mode mode;
	int err;
	unsigned long pinned;
#if IS_ENABLED(CONFIG_PROCESS_VM_KUNIT_TEST)
	unsigned long batches;
	unsigned long runs;
#endif
};

/* What the KUnit suite counts exists in its builds only. */
static inline void pvm_count_batch(struct pvm_copy *c)
{
#if IS_ENABLED(CONFIG_PROCESS_VM_KUNIT_TEST)
	c->batches++;
#endif
}

static inline void pvm_count_run(struct pvm_copy *c, unsigned long nr)
{
#if IS_ENABLED(CONFIG_PROCESS_VM_KUNIT_TEST)
	if (nr > 1)
		c->runs++;
#endif
}

/**
 * pvm_span_pages() - Number of pages a user range touches.
 * @addr: start of the range.
 * @len: length of the range in bytes.
 *
 * Return: the number of pages spanned by [@addr, @addr + @len), 0 if @len
 * is 0.  For a range that wraps around the top of the address space the
 * count is meaningless but not 0; such a range never pins.
 */
static unsigned long pvm_span_pages(unsigned long addr, size_t len)
{
	if (!len)
		return 0;
	return ((addr + len - 1) >> PAGE_SHIFT) - (addr >> PAGE_SHIFT) + 1;
}

/**
 * pvm_batch_pages() - Pages worth pinning at once for a set of remote iovecs.
 * @riov: remote iovecs.
 * @riovcnt: number of remote iovecs.
 * @count: bytes the local side can take.
 *
 * Return: the largest number of pages any one remote iovec spans within its
 * first @count bytes; 0 if the remote side names no bytes at all.
 */
static unsigned long pvm_batch_pages(const struct iovec *riov,
				     unsigned long riovcnt, size_t count)
{
	unsigned long i, nr = 0;

	for (i = 0; i < riovcnt; i++)
		nr = max(nr, pvm_span_pages((unsigned long)riov[i].iov_base,
					    min(riov[i].iov_len, count)));
	return nr;
}

/*
 * Page pointers kept on the stack.  A call that may need more gets one
 * page worth of pointers from the slab; if that fails, it runs in smaller
 * batches instead of failing.  The stack batch is left uninitialized even
 * under CONFIG_INIT_STACK_ALL_ZERO: GUP fills every entry it reports, and
 * no other entry is read.
 */
#define PVM_STACK_PAGES		16
#define PVM_HEAP_PAGES		(PAGE_SIZE / sizeof(struct page *))

/*
 * Only the try mode tells "would fault" from "bad address", so that
 * io_uring retries the first in a context that may sleep.  An address is
 * certainly bad when no VMA covers it or the VMA can never allow the access:
 * the cases check_vma_flags() in mm/gup.c fails without faulting, for the
 * flags used here (no FOLL_FORCE, FOLL_LONGTERM or FOLL_ANON).  Anything
 * else may just need a fault.
 */
static bool pvm_bad_address(struct pvm_copy *c, unsigned long addr)
{
	struct vm_area_struct *vma = vma_lookup(c->mm, addr);
	vm_flags_t flags;

	if (!vma || vma_is_secretmem(vma))
		return true;
	flags = vma->vm_flags;
	if (flags & (VM_IO | VM_PFNMAP))
		return true;
	if (c->write)
		return !(flags & VM_WRITE) || (flags & VM_SHADOW_STACK);
	return !(flags & VM_READ);
}

static int pvm_lock(struct pvm_copy *c)
{
	switch (c->mode) {
	case PVM_BLOCK:
		return mmap_read_lock_killable(c->mm) ? -EINTR : 0;
	case PVM_INTR:
		if (signal_pending(current))
			return -EINTR;
		return mmap_read_lock_interruptible(c->mm) ? -EINTR : 0;
	default:
		return mmap_read_trylock(c->mm) ? 0 : -EAGAIN;
	}
}

/*
 * A fault of a file page whose read is in flight waits for the folio lock,
 * killable only (filemap_fault()): a FUSE or network server that never
 * answers would hold an io-wq worker past IORING_OP_ASYNC_CANCEL and ring
 * close.  So the interruptible mode pins with FOLL_NOWAIT, which starts
 * the read and returns, and waits for that folio here, interruptibly.
 *
 * Return: 0 once the folio at @addr is unlocked, -EINTR if a signal came
 * first, both with the mmap lock dropped; -EBUSY, with the lock still held,
 * if no locked folio is there: the fault waits for something else (a
 * userfaultfd, swap), and the caller takes it the ordinary way.
 */
static int pvm_wait_file(struct pvm_copy *c, unsigned long addr)
{
	struct vm_area_struct *vma = vma_lookup(c->mm, addr);
	struct folio *folio;
	int err;

	if (!vma || !vma->vm_file || is_vm_hugetlb_page(vma))
		return -EBUSY;
	folio = filemap_get_folio(vma->vm_file->f_mapping,
				  linear_page_index(vma, addr));
	if (IS_ERR(folio))
		return -EBUSY;
	if (!folio_test_locked(folio)) {
		folio_put(folio);
		return -EBUSY;
	}
	mmap_read_unlock(c->mm);
	err = folio_wait_locked_interruptible(folio);
	folio_put(folio);
	return err;
}

/**
 * pvm_pin() - Pin a batch of the target's pages.
 * @c: copy state; @c->pages receives the pages.
 * @start: page-aligned remote address.
 * @nr: number of pages wanted, at most @c->max_pages.
 *
 * GUP may drop the mmap lock to wait for a fault (userfaultfd needs that),
 * in which case it tells us through @locked.
 *
 * Return: number of pages pinned (possibly fewer than @nr), -EFAULT if the
 * first page could not be pinned, -EAGAIN if a non-blocking mode could not
 * take the mmap lock or (try mode) would have to fault, -EINTR if a signal
 * that ends the mode's waits arrived.
 */
static long pvm_pin(struct pvm_copy *c, unsigned long start, unsigned long nr)
{
	unsigned int nowait = c->mode == PVM_INTR ? FOLL_NOWAIT : 0;
	int locked;
	long got;

	pvm_count_batch(c);
again:
	got = pvm_lock(c);
	if (got)
		return got;
	locked = 1;
	got = pin_user_pages_remote(c->mm, start, nr, c->gup_flags | nowait,
				    c->pages, &locked);
	if (!got && nowait) {
		/* FOLL_NOWAIT keeps the lock and pins nothing where it waits */
		got = pvm_wait_file(c, start);
		if (!got)
			goto again;
		if (got == -EINTR)
			return got;
		got = pin_user_pages_remote(c->mm, start, nr, c->gup_flags,
					    c->pages, &locked);
	}
	if (got <= 0 && got != -EINTR) {
		got = -EFAULT;
		if (c->mode == PVM_TRY && (!locked || !pvm_bad_address(c, start)))
			got = -EAGAIN;
	}
	if (locked)
		mmap_read_unlock(c->mm);
	if (got > 0)
		c->pinned += got;
	return got;
}

/*
 * Written pages are dirtied after the copy, so that writeback cleaning a
 * page while it is pinned cannot lose the data.  unpin_user_pages_dirty_lock()
 * takes the folio lock for that, which a non-blocking mode must not wait
 * for.  For an anonymous folio PG_dirty is all there is to set (swap's
 * dirty_folio is noop_dirty_folio), so it is set directly, without the
 * lock or folio_mark_dirty()'s lookup of the mapping.  The file folios of a
 * batch whose lock is busy are dirtied and unpinned later by one work item,
 * as bio_check_pages_dirty() does for a direct I/O bio: their pins outlive
 * the call by that long.
 */
struct pvm_dirty_work {
	struct work_struct work;
	unsigned long nr;
	struct page *pages[];
};

static void pvm_dirty_workfn(struct work_struct *work)
{
	struct pvm_dirty_work *d = container_of(work, struct pvm_dirty_work,
						work);

	unpin_user_pages_dirty_lock(d->pages, d->nr, true);
	kfree(d);
}

/* Dirty and unpin @page if that needs no wait; false if it would. */
static bool pvm_dirty_unpin_page(struct page *page)
{
	struct folio *folio = page_folio(page);

	if (folio_test_dirty(folio)) {
		/* nothing to do but unpin */
	} else if (folio_test_anon(folio)) {
		folio_set_dirty(folio);
	} else if (folio_trylock(folio)) {
		folio_mark_dirty(folio);
		folio_unlock(folio);
	} else {
		return false;
	}
	unpin_user_page(page);
	return true;
}

static void pvm_dirty_unpin_nowait(struct page **pages, unsigned long nr)
{
	struct pvm_dirty_work *d;
	unsigned long i, busy = 0;

	/* The batch is done with: gather the busy pages at its start. */
	for (i = 0; i < nr; i++)
		if (!pvm_dirty_unpin_page(pages[i]))
			pages[busy++] = pages[i];
	if (!busy)
		return;
	d = kmalloc(struct_size(d, pages, busy), GFP_NOWAIT | __GFP_NOWARN);
	if (!d) {
		/* No memory without waiting: the only wait left. */
		unpin_user_pages_dirty_lock(pages, busy, true);
		return;
	}
	d->nr = busy;
	memcpy(d->pages, pages, flex_array_size(d, pages, busy));
	INIT_WORK(&d->work, pvm_dirty_workfn);
	schedule_work(&d->work);
}

/*
 * Unpin @nr pages from @pages, dirtying them if they were written.  @run
 * says that they are consecutive pages of one folio, which the range
 * variant unpins in one step instead of looking at every page.
 */
static __always_inline void pvm_unpin(struct pvm_copy *c, struct page **pages,
				      unsigned long nr, bool run)
{
	if (c->keep)
		return;
	if (c->write && pvm_mode_nonblock(c->mode)) {
		pvm_dirty_unpin_nowait(pages, nr);
	} else if (run) {
		unpin_user_page_range_dirty_lock(pages[0], nr, c->write);
	} else {
		unpin_user_pages_dirty_lock(pages, nr, c->write);
	}
}

/* Unpin @nr pages from @pages that the copy never reached: nothing to dirty. */
static void pvm_unpin_unreached(struct pvm_copy *c, struct page **pages,
				unsigned long nr)
{
	if (!c->keep && nr)
		unpin_user_pages(pages, nr);
}

/**
 * pvm_copy_pages() - Copy between pinned pages and the local iterator.
 * @c: copy state.
 * @offset: offset into @c->pages[0] where the data starts.
 * @bytes: number of bytes to copy; the pinned pages cover them.
 * @pinned: number of pages pinned in @c->pages; all are unpinned here.
 *
 * After a fault on the local side the pages not reached are unpinned as
 * they are, not dirtied.
 *
 * Return: bytes copied; fewer than @bytes only when the caller's own buffer
 * faulted.
 */
static size_t pvm_copy_pages(struct pvm_copy *c, size_t offset, size_t bytes,
			     unsigned long pinned)
{
	struct page **page = c->pages;
	unsigned long reached;
	size_t done = 0;

	while (done < bytes) {
		size_t chunk = min(bytes - done, PAGE_SIZE - offset);
		size_t n;

		if (c->write)
			n = copy_page_from_iter(*page, offset, chunk, c->iter);
		else
			n = copy_page_to_iter(*page, offset, chunk, c->iter);
		done += n;
		if (n < chunk)
			break;
		page++;
		offset = 0;
	}
	/* The page where the local side faulted may hold part of the data. */
	reached = min_t(unsigned long, page - c->pages + (done < bytes),
			pinned);
	pvm_unpin(c, c->pages, reached, false);
	pvm_unpin_unreached(c, c->pages + reached, pinned - reached);
	return done;
}

/*
 * A large folio (THP, hugetlb, a large page-cache folio) is one contiguous
 * block of the kernel's direct map unless it can live in highmem, so a run
 * of its pages that GUP returned in order is copied with one copy call
 * instead of one per page, and unpinned in one step.  Staying within the
 * folio keeps hardened usercopy's check of large folios content.
 *
 * The choice is made once per batch, from its first and last page, so a
 * batch of small pages pays two tests and no more; a batch that has large
 * folios only in its middle is copied page by page, correctly if slower.
 * PageCompound() answers from the page itself, without the folio lookup.
 */
static bool pvm_batch_has_runs(struct pvm_copy *c, unsigned long nr)
{
	return !IS_ENABLED(CONFIG_HIGHMEM) && nr > 1 &&
	       (PageCompound(c->pages[0]) || PageCompound(c->pages[nr - 1]));
}

/*
 * How many of @pages[0..@nr) are consecutive pages of @pages[0]'s folio.
 * A folio's pages are consecutive, so once its end is known only the page
 * pointers need comparing, not the pages themselves.
 */
static unsigned long pvm_run_pages(struct page **pages, unsigned long nr)
{
	struct folio *folio = page_folio(pages[0]);
	unsigned long left, i;

	left = folio_nr_pages(folio) - folio_page_idx(folio, pages[0]);
	nr = min(nr, left);
	for (i = 1; i < nr; i++)
		if (pages[i] != nth_page(pages[0], i))
			break;
	return i;
}

/**
 * pvm_copy_runs() - pvm_copy_pages() for a batch that holds large folios.
 * @c: copy state.
 * @offset: offset into @c->pages[0] where the data starts.
 * @bytes: number of bytes to copy; the pinned pages cover them.
 * @pinned: number of pages pinned in @c->pages; all are unpinned here.
 *
 * Each run is unpinned once copied; after a fault on the local side the
 * pages not reached are unpinned as they are.
 *
 * Return: as pvm_copy_pages().
 */
static size_t pvm_copy_runs(struct pvm_copy *c, size_t offset, size_t bytes,
			    unsigned long pinned)
{
	struct page **page = c->pages, **end = c->pages + pinned;
	size_t done = 0;

	while (page < end) {
		unsigned long nr = pvm_run_pages(page, end - page);
		size_t chunk = min(bytes - done, (nr << PAGE_SHIFT) - offset);
		void *kaddr = page_address(*page) + offset;
		size_t n;

		pvm_count_run(c, nr);
		if (c->write)
			n = copy_from_iter(kaddr, chunk, c->iter);
		else
			n = copy_to_iter(kaddr, chunk, c->iter);
		done += n;
		pvm_unpin(c, page, nr, true);
		page += nr;
		offset = 0;
		if (n < chunk)
			break;
	}
	pvm_unpin_unreached(c, page, end - page);
	return done;
}

/*
 * The try mode must not sleep on a fault of the caller's own buffer either
 * (a userfaultfd or FUSE mapping of its own can take as long as it likes),
 * nor may a region copy that holds off the owner's revoke: with page faults
 * disabled a local page that is not there stops the copy short, exactly
 * where the retry that may sleep picks up again.
 */
static size_t pvm_copy_batch(struct pvm_copy *c, size_t offset, size_t bytes,
			     unsigned long pinned)
{
	bool nofault = c->nofault;
	size_t done;

	if (nofault)
		pagefault_disable();
	if (pvm_batch_has_runs(c, pinned))
		done = pvm_copy_runs(c, offset, bytes, pinned);
	else
		done = pvm_copy_pages(c, offset, bytes, pinned);
	if (nofault)
		pagefault_enable();
	return done;
}

/**
 * pvm_copy_range() - Copy between one remote range and the local iterator.
 * @c: copy state.
 * @addr: remote start address.
 * @len: remote length in bytes.
 *
 * Only the pages the local side still has room for are pinned, so a short
 * local buffer never faults in (or waits for) remote pages it will not use.
 *
 * Return: 0 when the range is done or the local side is exhausted, or a
 * negative errno when the copy has to stop here: -EFAULT for a fault on
 * the local side, -EAGAIN for one with page faults disabled.
 */
static int pvm_copy_range(struct pvm_copy *c, unsigned long addr, size_t len)
{
	while (len && iov_iter_count(c->iter)) {
		size_t want = min(len, iov_iter_count(c->iter));
		size_t offset = offset_in_page(addr);
		unsigned long nr = pvm_span_pages(addr, want);
		size_t bytes, done;
		long got;

		got = pvm_pin(c, addr - offset, min(nr, c->max_pages));
		if (got < 0)
			return got;
		bytes = min(want, ((size_t)got << PAGE_SHIFT) - offset);
		done = pvm_copy_batch(c, offset, bytes, got);
		if (done < bytes)
			return c->nofault ? -EAGAIN : -EFAULT;
		addr += bytes;
		len -= bytes;
	}
	return 0;
}

/*
 * A larger batch of page pointers for a copy that spans more pages than the
 * stack holds.  If there is no memory for it, the copy runs in stack-sized
 * batches; the KUnit suite replaces this function to test exactly that.
 */
static struct page **pvm_alloc_batch(unsigned long nr, gfp_t gfp)
{
	KUNIT_STATIC_STUB_REDIRECT(pvm_alloc_batch, nr, gfp);
	return kmalloc_array(nr, sizeof(struct page *), gfp | __GFP_NOWARN);
}

/**
 * pvm_copy_mm() - Copy between the local iterator and a remote address space.
 * @c: copy state with @mm, @iter, @write and @mode filled in.
 * @riov: remote iovecs.
 * @riovcnt: number of remote iovecs.
 * @nr: pvm_batch_pages() of the remote iovecs: how large a batch to use.
 *
 * Copying stops at the first remote fault, at a fault on the local side, or
 * when either side is exhausted.  The reason it stopped early is left in
 * @c->err (0 if it did not).
 *
 * Return: bytes copied if any, else the error that stopped the copy, else 0.
 */
static __always_inline ssize_t pvm_copy_mm(struct pvm_copy *c,
					   const struct iovec *riov,
					   unsigned long riovcnt,
					   unsigned long nr)
{
	struct page *stack_pages[PVM_STACK_PAGES];
	size_t before = iov_iter_count(c->iter);
	unsigned long i;
	int err = 0;

	c->gup_flags = (c->write ? FOLL_WRITE : 0) |
		       (pvm_mode_nonblock(c->mode) ? FOLL_NOFAULT : 0) |
		       (c->mode == PVM_INTR ? FOLL_INTERRUPTIBLE : 0);
	c->pages = stack_pages;
	c->max_pages = PVM_STACK_PAGES;
	if (nr > PVM_STACK_PAGES) {
		struct page **heap;

		nr = min(nr, PVM_HEAP_PAGES);
		heap = pvm_alloc_batch(nr, pvm_mode_nonblock(c->mode) ?
				       GFP_NOWAIT : GFP_KERNEL);
		if (heap) {
			c->pages = heap;
			c->max_pages = nr;
		}
	}

	for (i = 0; i < riovcnt && !err && iov_iter_count(c->iter); i++)
		err = pvm_copy_range(c, (unsigned long)riov[i].iov_base,
				     riov[i].iov_len);

	if (c->pages != stack_pages)
		kfree(c->pages);
	c->pages = NULL;
	c->err = err;
	if (before != iov_iter_count(c->iter))
		return before - iov_iter_count(c->iter);
	return err;
}

/**
 * pvm_pid_task() - The task of a pidfd's process whose mm a copy takes.
 * @pid: the pidfd's pid.
 *
 * That is the thread-group leader or, once the leader has exited while
 * other threads run on, one of those, as the process and its address
 * space live on.  A pid number still names the zombie leader and gives
 * ESRCH then, as it always has; the io_uring ops take only pidfds.
 *
 * Return: a referenced task, or NULL if the process has none.
 */
static struct task_struct *pvm_pid_task(struct pid *pid)
{
	struct task_struct *task, *live;

	task = get_pid_task(pid, PIDTYPE_TGID);
	if (!task || READ_ONCE(task->mm))
		return task;
	live = find_lock_task_mm(task);
	if (!live)
		return task;	/* mm_access() tells what it is: ESRCH */
	get_task_struct(live);
	task_unlock(live);
	put_task_struct(task);
	return live;
}

/**
 * pvm_get_task() - Find the target task.
 * @pid: a pid in the caller's namespace, or a pidfd.
 * @flags: PROCESS_VM_* flags of the call.
 *
 * Return: a referenced task, or ERR_PTR(-ESRCH) if there is none (a pidfd
 * whose process has been reaped included), ERR_PTR(-EBADF) if @pid should
 * be a pidfd and is not.
 */
static struct task_struct *pvm_get_task(pid_t pid, unsigned long flags)
{
	struct task_struct *task;
	unsigned int f_flags;

	if (flags & PROCESS_VM_PIDFD) {
		struct pid *p = pidfd_get_pid(pid, &f_flags);

		if (IS_ERR(p))
			return ERR_CAST(p);
		task = pvm_pid_task(p);
		put_pid(p);
		return task ?: ERR_PTR(-ESRCH);
	}
	task = find_get_task_by_vpid(pid);
	return task ?: ERR_PTR(-ESRCH);
}

/**
 * pvm_task_mm() - Take a task's mm if the caller may attach to it.
 * @task: the target, referenced; the reference is dropped.
 *
 * Return: the mm with a reference held, ERR_PTR(-ESRCH) if the task has no
 * mm (kernel thread, zombie), ERR_PTR(-EPERM) if the caller may not access
 * it, ERR_PTR(-EINTR) if a fatal signal came while waiting for an exec.
 */
static struct mm_struct *pvm_task_mm(struct task_struct *task)
{
	struct mm_struct *mm;

	mm = mm_access(task, PTRACE_MODE_ATTACH_REALCREDS);
	put_task_struct(task);
	/* "Not allowed" is EPERM for these syscalls, as for ptrace(). */
	if (mm == ERR_PTR(-EACCES))
		return ERR_PTR(-EPERM);
	return mm;
}

/*
 * mm_access() for the try mode, which must not sleep: the target's exec
 * lock is only tried, since an exec holds it across the teardown of the
 * old address space (a large one takes a good part of a second), and a
 * failed permission check leaves the mmput() to a workqueue.  The LSM
 * hooks of ptrace_may_access() are the one step left that may sleep.
 */
static struct mm_struct *pvm_task_mm_try(struct task_struct *task)
{
	struct rw_semaphore *exec_lock = &task->signal->exec_update_lock;
	struct mm_struct *mm = ERR_PTR(-EAGAIN);

	if (!down_read_trylock(exec_lock))
		goto out;
	mm = get_task_mm(task);
	if (!mm) {
		mm = ERR_PTR(-ESRCH);
	} else if (mm != current->mm &&
		   !ptrace_may_access(task, PTRACE_MODE_ATTACH_REALCREDS)) {
		mmput_async(mm);
		mm = ERR_PTR(-EPERM);
	}
	up_read(exec_lock);
out:
	put_task_struct(task);
	return mm;
}

/*
 * The last reference to a target that exited during the copy tears down its
 * whole address space; a caller that must not sleep leaves that to a
 * workqueue.
 */
static void pvm_put_mm(struct pvm_copy *c)
{
	if (pvm_mode_nonblock(c->mode))
		mmput_async(c->mm);
	else
		mmput(c->mm);
}

/**
 * pvm_transfer() - Resolve the target and copy.
 * @pid: target pid or pidfd.
 * @flags: PROCESS_VM_* flags.
 * @iter: the caller's side of the copy.
 * @riov: remote iovecs.
 * @riovcnt: number of remote iovecs.
 * @write: copy from @iter into the target.
 * @pinned: set to the number of pages pinned, for the tracepoint.
 *
 * The copy state is set up here, not in the syscall body, so that calls
 * failing before the target is found do not pay for initialising it
 * (all of it is, with CONFIG_INIT_STACK_ALL_ZERO).
 *
 * Return: bytes copied or a negative errno.
 */
static __always_inline ssize_t
pvm_transfer(pid_t pid, unsigned long flags, struct iov_iter *iter,
	     const struct iovec *riov, unsigned long riovcnt, bool write,
	     unsigned long *pinned)
{
	struct pvm_copy c = {
		.iter = iter,
		.write = write,
		.mode = flags & PROCESS_VM_NOWAIT ? PVM_NOWAIT : PVM_BLOCK,
	};
	struct task_struct *task;
	unsigned long nr;
	ssize_t ret;

	nr = pvm_batch_pages(riov, riovcnt, iov_iter_count(iter));
	if (!nr)
		return 0;
	task = pvm_get_task(pid, flags);
	if (IS_ERR(task))
		return PTR_ERR(task);
	c.mm = pvm_task_mm(task);
	if (IS_ERR(c.mm))
		return PTR_ERR(c.mm);
	ret = pvm_copy_mm(&c, riov, riovcnt, nr);
	pvm_put_mm(&c);
	*pinned = c.pinned;
	return ret;
}

/**
 * process_vm_copy() - Copy between an iterator and the memory of a process.
 * @pidfd: pidfd of the target process.
 * @bound: the address space this copy is bound to: NULL until the first
 *	byte moves, then set to the target's mm, with a reference taken by
 *	mmgrab() that the caller drops with mmdrop().
 * @iter: the caller's side; advanced by the bytes copied.
 * @riov: the target's side.
 * @riovcnt: number of entries in @riov.
 * @write: copy from @iter into the target.
 * @mode: how the copy may wait, see &enum pvm_mode.
 *
 * The engine of process_vm_readv() and process_vm_writev() for callers
 * that have the iovecs in kernel memory already and may call it more than
 * once for one copy (io_uring: the inline attempt, then io-wq).  The target
 * is resolved and its permission checked on every call, but a copy never
 * spans two address spaces: once a call has moved a byte, a later call
 * that finds the target in another one (it exec'd meanwhile) stops with
 * -ESRCH instead of copying the rest into a different program.  The copy
 * may stop early; the bytes it moved are what @iter advanced by.
 *
 * Return: 0 when either side is exhausted, or the error that stopped the
 * copy: -EAGAIN in the try mode where waiting would be needed, -EINTR when a
 * signal ends the wait of the interruptible mode, -ESRCH when the target
 * is no longer the address space of @bound, and the errors of
 * process_vm_readv() otherwise.
 */
int process_vm_copy(struct file *pidfd, struct mm_struct **bound,
		    struct iov_iter *iter, const struct iovec *riov,
		    unsigned long riovcnt, bool write, enum pvm_mode mode)
{
	struct pvm_copy c = {
		.iter = iter,
		.write = write,
		.mode = mode,
		.nofault = mode == PVM_TRY,
	};
	struct task_struct *task;
	struct pid *pid;
	unsigned long nr;

	nr = pvm_batch_pages(riov, riovcnt, iov_iter_count(iter));
	if (!nr)
		return 0;
	pid = pidfd_pid(pidfd);
	if (IS_ERR(pid))
		return PTR_ERR(pid);
	task = pvm_pid_task(pid);
	if (!task)
		return -ESRCH;
	c.mm = mode == PVM_TRY ? pvm_task_mm_try(task) : pvm_task_mm(task);
	if (IS_ERR(c.mm))
		return PTR_ERR(c.mm);
	if (*bound && *bound != c.mm) {
		c.err = -ESRCH;
	} else if (pvm_copy_mm(&c, riov, riovcnt, nr) > 0 && !*bound) {
		mmgrab(c.mm);
		*bound = c.mm;
	}
	pvm_put_mm(&c);
	return c.err;
}

/**
 * process_vm_copy_mm() - Copy between an iterator and an address space.
 * @mm: the address space, held by mmget().
 * @iter: the caller's side; advanced by the bytes copied.
 * @riov: ranges of @mm.
 * @riovcnt: number of entries in @riov.
 * @write: copy from @iter into @mm.
 * @mode: how the copy may wait for @mm, see &enum pvm_mode.
 * @nofault: copy the caller's side with page faults disabled.
 *
 * The engine for callers that have the address space already and decided
 * themselves who may reach it (region fds).  With @nofault, a page of @iter
 * that is not there stops the copy with -EAGAIN, so that the caller can
 * fault it in where it holds nothing that others wait for, and go on.
 *
 * Return: 0 when either side is exhausted, or the error that stopped the
 * copy, as for process_vm_copy(); the bytes moved are what @iter advanced
 * by.
 */
int process_vm_copy_mm(struct mm_struct *mm, struct iov_iter *iter,
		       const struct iovec *riov, unsigned long riovcnt,
		       bool write, enum pvm_mode mode, bool nofault)
{
	struct pvm_copy c = {
		.mm = mm,
		.iter = iter,
		.write = write,
		.mode = mode,
		.nofault = nofault,
	};
	unsigned long nr;

	nr = pvm_batch_pages(riov, riovcnt, iov_iter_count(iter));
	if (!nr)
		return 0;
	pvm_copy_mm(&c, riov, riovcnt, nr);
	return c.err;
}

/**
 * process_vm_copy_pages() - Copy between pinned pages and an iterator.
 * @pages: the pages, pinned by the caller for as long as it likes; they
 *	stay pinned.
 * @nr: number of @pages the bytes touch.
 * @offset: offset into @pages[0] where the bytes start.
 * @bytes: number of bytes to copy.
 * @iter: the caller's side; advanced by the bytes copied.
 * @write: copy from @iter into the pages.
 * @nofault: copy @iter's side with page faults disabled.
 *
 * The copy step of the engine, runs of large folios included, for pages
 * pinned once for many copies (region fds pinned at export): no page
 * table is walked and no mmap lock taken.
 *
 * Return: bytes copied; fewer than @bytes only when @iter faulted (or,
 * with @nofault, had a page that was not there).
 */
size_t process_vm_copy_pages(struct page **pages, unsigned long nr,
			     size_t offset, size_t bytes, struct iov_iter *iter,
			     bool write, bool nofault)
{
	struct pvm_copy c = {
		.iter = iter,
		.pages = pages,
		.write = write,
		.mode = PVM_BLOCK,
		.nofault = nofault,
		.keep = true,
	};

	return pvm_copy_batch(&c, offset, bytes, nr);
}

/**
 * process_vm_rw() - Common body of process_vm_readv() and process_vm_writev().
 * @pid: target pid, or pidfd with PROCESS_VM_PIDFD.
 * @lvec: local iovec array.
 * @liovcnt: number of local iovecs.
 * @rvec: remote iovec array.
 * @riovcnt: number of remote iovecs.
 * @flags: PROCESS_VM_* flags.
 * @write: true to copy from the caller to the target.
 *
 * The checks run in the order the syscalls have always used: flags, local
 * iovecs, remote iovecs, target, permission, then the copy.  A call with
 * nothing to copy on either side returns 0 before the target is looked up.
 *
 * Return: bytes copied (at most MAX_RW_COUNT) or a negative errno.
 */
static ssize_t process_vm_rw(pid_t pid, const struct iovec __user *lvec,
			     unsigned long liovcnt,
			     const struct iovec __user *rvec,
			     unsigned long riovcnt, unsigned long flags,
			     bool write)
{
	struct iovec lstack[UIO_FASTIOV], rstack[UIO_FASTIOV];
	struct iovec *liov = lstack, *riov;
	struct iov_iter iter;
	unsigned long pinned = 0;
	size_t requested = 0;
	ssize_t ret;

	if (flags & ~PROCESS_VM_FLAGS) {
		ret = -EINVAL;
		goto out;
	}
	ret = import_iovec(write ? ITER_SOURCE : ITER_DEST, lvec, liovcnt,
			   UIO_FASTIOV, &liov, &iter);
	if (ret <= 0)
		goto out_local;
	requested = ret;
	riov = iovec_from_user(rvec, riovcnt, UIO_FASTIOV, rstack,
			       in_compat_syscall());
	if (IS_ERR(riov)) {
		ret = PTR_ERR(riov);
		goto out_local;
	}
	ret = pvm_transfer(pid, flags, &iter, riov, riovcnt, write, &pinned);
	if (riov != rstack)
		kfree(riov);
out_local:
	kfree(liov);
out:
	trace_process_vm_rw(pid, flags, write, liovcnt, riovcnt, requested,
			    pinned, ret);
	return ret;
}

SYSCALL_DEFINE6(process_vm_readv, pid_t, pid,
		const struct iovec __user *, lvec, unsigned long, liovcnt,
		const struct iovec __user *, rvec, unsigned long, riovcnt,
		unsigned long, flags)
{
	return process_vm_rw(pid, lvec, liovcnt, rvec, riovcnt, flags, false);
}

SYSCALL_DEFINE6(process_vm_writev, pid_t, pid,
		const struct iovec __user *, lvec, unsigned long, liovcnt,
		const struct iovec __user *, rvec, unsigned long, riovcnt,
		unsigned long, flags)
{
	return process_vm_rw(pid, lvec, liovcnt, rvec, riovcnt, flags, true);
}

#ifdef CONFIG_PROCESS_VM_KUNIT_TEST
#include "tests/process_vm_kunit.c"
#endif
