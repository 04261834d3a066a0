// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * Region fds: access to another process's memory by its consent.
 *
 * process_vm_export(2) makes ranges of the caller's own memory a file.
 * Whoever holds the file reads and writes those bytes, and no others, with
 * plain file I/O: the owner's consent is the file, so no ptrace check is
 * made at access and Yama, a dropped CAP_SYS_PTRACE or a seccomp filter on
 * process_vm_readv(2) do not stand in the way.  The copies run through the
 * process_vm_readv(2) engine.
 *
 * The region holds the owner's address space by mmgrab() only, and every
 * access must mmget_not_zero() it, so the owner's exec or exit revokes its
 * regions as its explicit revoke does.  A copy holds the region's lock for
 * read over one chunk at a time, and revoke takes it for write: once
 * revoke has returned, no copy touches the region's memory.  The holder's
 * own buffer is copied with page faults disabled under that lock and
 * faulted in outside it, so that a holder cannot make revoke wait on a
 * fault of its own (a page of a userfaultfd range it never resolves).
 *
 * A PIN region pins its pages once, at export, and copies from them: no
 * page table walk, no mmap lock, no pin per access (for the collectives
 * that read one buffer many times over).  A region also has a handle, an
 * id and a random secret, by which process_vm_open(2) gives a process of
 * the owner's uid (or any, if the owner said so) a file of its own.
 */

#include <crypto/utils.h>
#include <linux/anon_inodes.h>
#include <linux/capability.h>
#include <linux/compat.h>
#include <linux/cred.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/process_vm.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/rwsem.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/user.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/syscalls.h>
#include <linux/uaccess.h>
#include <linux/uio.h>
#include <linux/xarray.h>

#define PVM_REGION_ACCESS	(PROCESS_VM_REGION_READ | PROCESS_VM_REGION_WRITE)
#define PVM_REGION_FLAGS	(PVM_REGION_ACCESS | PROCESS_VM_REGION_PIN | \
				 PROCESS_VM_REGION_ANY_USER)

/*
 * The most a copy moves while holding the region's lock, and the most
 * segments it covers at once: enough to pay for the lock and the mmget(),
 * little enough that revoke never waits long for a copy of memory that is
 * there.
 */
#define PVM_REGION_CHUNK	((size_t)SZ_1M)
#define PVM_REGION_IOVS		8

/**
 * struct pvm_segment - One exported range.
 * @addr: its first byte in the owner's address space.
 * @len: its length in bytes, never 0.
 * @start: the region offset of its first byte.
 * @page: in a PIN region, the index of the page of @addr in the pages.
 */
struct pvm_segment {
	unsigned long addr;
	size_t len;
	loff_t start;
	unsigned long page;
};

/**
 * struct pvm_region - Ranges of one process's memory, exported.
 * @ref: files of the region (the export's and process_vm_open()'s).
 * @mm: the owner's address space, held by mmgrab().
 * @owner: the owner's thread-group pid, for fdinfo.
 * @uid: the owner's effective uid at export, for process_vm_open().
 * @lock: held for read by a copy, for write by revoke.
 * @revoked: no access may reach the region's memory any more.
 * @flags: PROCESS_VM_REGION_* flags of the export.
 * @size: bytes in all segments.
 * @id: the handle's id, the region's index in pvm_regions.
 * @secret: the handle's secret.
 * @pages: PIN: the pinned pages of all segments, in segment order.
 * @nr_pages: PIN: number of @pages, 0 once unpinned.
 * @user: PIN: who the pages are charged to, NULL if nobody (CAP_IPC_LOCK).
 * @rcu: frees the region after lookups of its handle are done with it.
 * @nr_segs: number of @segs.
 * @segs: the segments, in region order.
 */
struct pvm_region {
	refcount_t ref;
	struct mm_struct *mm;
	struct pid *owner;
	kuid_t uid;
	struct rw_semaphore lock;
	bool revoked;
	unsigned int flags;
	loff_t size;
	u32 id;
	u8 secret[16];
	struct page **pages;
	unsigned long nr_pages;
	struct user_struct *user;
	struct rcu_head rcu;
	unsigned long nr_segs;
	struct pvm_segment segs[] __counted_by(nr_segs);
};

/* Live regions by handle id; the ids cycle, so that an old handle rarely
 * names a new region (and its secret would not match anyway).
 */
static DEFINE_XARRAY_ALLOC1(pvm_regions);
static u32 pvm_region_next_id;

static unsigned long pvm_span(unsigned long addr, size_t len)
{
	return ((addr + len - 1) >> PAGE_SHIFT) - (addr >> PAGE_SHIFT) + 1;
}

/*
 * Pinned pages are charged as io_uring charges its registered buffers: to
 * the user's locked_vm against RLIMIT_MEMLOCK, unless the caller has
 * CAP_IPC_LOCK, and to the owner's pinned_vm.
 */
static int pvm_region_account(struct pvm_region *r, unsigned long nr)
{
	struct user_struct *user = current_user();
	unsigned long limit, cur, new;

	if (!capable(CAP_IPC_LOCK)) {
		limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;
		cur = atomic_long_read(&user->locked_vm);
		do {
			if (check_add_overflow(cur, nr, &new) || new > limit)
				return -ENOMEM;
		} while (!atomic_long_try_cmpxchg(&user->locked_vm, &cur, new));
		r->user = get_uid(user);
	}
	atomic64_add(nr, &r->mm->pinned_vm);
	return 0;
}

static void pvm_region_unaccount(struct pvm_region *r, unsigned long nr)
{
	if (r->user)
		atomic_long_sub(nr, &r->user->locked_vm);
	atomic64_sub(nr, &r->mm->pinned_vm);
}

/*
 * Pin every page of every segment for as long as the region lives, as
 * RDMA registration and io_uring's registered buffers do (FOLL_LONGTERM:
 * no page of a movable zone or CMA area is held).  Return: 0, -ENOMEM past
 * RLIMIT_MEMLOCK, or GUP's error for the first page it could not pin:
 * -EFAULT for a range that is not mapped as the access needs.
 */
static int pvm_region_pin(struct pvm_region *r)
{
	unsigned int gup_flags = FOLL_LONGTERM;
	unsigned long i, nr = 0, done = 0;
	struct page **pages;
	int err;

	if (r->flags & PROCESS_VM_REGION_WRITE)
		gup_flags |= FOLL_WRITE;
	for (i = 0; i < r->nr_segs; i++) {
		r->segs[i].page = nr;
		nr += pvm_span(r->segs[i].addr, r->segs[i].len);
	}
	err = pvm_region_account(r, nr);
	if (err)
		return err;
	err = -ENOMEM;
	pages = kvmalloc_array(nr, sizeof(*pages), GFP_KERNEL_ACCOUNT);
	if (!pages)
		goto unaccount;
	for (i = 0; i < r->nr_segs; i++) {
		unsigned long addr = r->segs[i].addr & PAGE_MASK;
		unsigned long want = pvm_span(r->segs[i].addr, r->segs[i].len);

		while (want) {
			long got = pin_user_pages_fast(addr, want, gup_flags,
						       pages + done);

			if (got <= 0) {
				err = got ? got : -EFAULT;
				goto unpin;
			}
			done += got;
			addr += got << PAGE_SHIFT;
			want -= got;
		}
	}
	r->pages = pages;
	r->nr_pages = nr;
	return 0;
unpin:
	unpin_user_pages(pages, done);
	kvfree(pages);
unaccount:
	pvm_region_unaccount(r, nr);
	return err;
}

/* Pages a revoke or the last close took away from the region. */
static void pvm_region_unpin(struct pvm_region *r, struct page **pages,
			     unsigned long nr)
{
	if (!nr)
		return;
	unpin_user_pages_dirty_lock(pages, nr,
				    r->flags & PROCESS_VM_REGION_WRITE);
	kvfree(pages);
	pvm_region_unaccount(r, nr);
}

/*
 * The segment that holds region offset @pos (< size): the last one that
 * starts at or before it.
 */
static unsigned long pvm_region_seg(const struct pvm_region *r, loff_t pos)
{
	unsigned long lo = 0, hi = r->nr_segs;

	while (hi - lo > 1) {
		unsigned long mid = lo + (hi - lo) / 2;

		if (r->segs[mid].start <= pos)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/**
 * pvm_region_map() - The owner's ranges behind some bytes of a region.
 * @r: the region.
 * @pos: region offset, below @r->size.
 * @len: bytes wanted.
 * @riov: receives at most %PVM_REGION_IOVS ranges.
 *
 * Only exported bytes are ever named: the ranges end with the region.
 *
 * Return: number of ranges filled in @riov.
 */
static unsigned long pvm_region_map(const struct pvm_region *r, loff_t pos,
				    size_t len, struct iovec *riov)
{
	unsigned long i, n = 0;

	for (i = pvm_region_seg(r, pos);
	     i < r->nr_segs && len && n < PVM_REGION_IOVS; i++, n++) {
		const struct pvm_segment *s = &r->segs[i];
		size_t skip = pos - s->start;
		size_t take = min(len, s->len - skip);

		riov[n].iov_base = (void __user *)(s->addr + skip);
		riov[n].iov_len = take;
		pos += take;
		len -= take;
	}
	return n;
}

/* Revoked, or its owner has exec'd or exited. */
static bool pvm_region_dead(struct pvm_region *r)
{
	return READ_ONCE(r->revoked) || !atomic_read(&r->mm->mm_users);
}

static int pvm_region_lock(struct pvm_region *r, enum pvm_mode mode)
{
	if (mode == PVM_TRY)
		return down_read_trylock(&r->lock) ? 0 : -EAGAIN;
	return down_read_killable(&r->lock);
}

/*
 * Copy up to @len bytes at region offset @pos between the pinned pages of a
 * PIN region and @iter.  Return: 0, or -EAGAIN where @iter had a page that
 * was not there.
 */
static int pvm_region_copy_pinned(struct pvm_region *r, struct iov_iter *iter,
				  loff_t pos, size_t len, bool write)
{
	unsigned long i;

	for (i = pvm_region_seg(r, pos); i < r->nr_segs && len; i++) {
		const struct pvm_segment *s = &r->segs[i];
		size_t skip = pos - s->start;
		size_t take = min(len, s->len - skip);
		unsigned long addr = s->addr + skip;
		struct page **pages = r->pages + s->page +
				      (addr >> PAGE_SHIFT) -
				      (s->addr >> PAGE_SHIFT);

		if (process_vm_copy_pages(pages, pvm_span(addr, take),
					  offset_in_page(addr), take, iter,
					  write, true) < take)
			return -EAGAIN;
		pos += take;
		len -= take;
	}
	return 0;
}

/**
 * pvm_region_chunk() - Copy up to one chunk between a region and @iter.
 * @r: the region.
 * @iter: the holder's side.
 * @pos: region offset to start at, below @r->size.
 * @write: copy from @iter into the region.
 * @mode: how the copy may wait for the owner's memory.
 *
 * Return: as process_vm_copy_mm(), -ENXIO if the region is revoked or its
 * owner gone, -EAGAIN also when a page of @iter needs a fault.
 */
static int pvm_region_chunk(struct pvm_region *r, struct iov_iter *iter,
			    loff_t pos, bool write, enum pvm_mode mode)
{
	size_t len = min(iov_iter_count(iter), PVM_REGION_CHUNK);
	struct iovec riov[PVM_REGION_IOVS];
	bool got_mm = false;
	unsigned long n;
	int err;

	err = pvm_region_lock(r, mode);
	if (err)
		return err;
	if (pvm_region_dead(r)) {
		err = -ENXIO;
	} else if (r->nr_pages) {
		err = pvm_region_copy_pinned(r, iter, pos, len, write);
	} else if (mmget_not_zero(r->mm)) {
		got_mm = true;
		n = pvm_region_map(r, pos, len, riov);
		err = process_vm_copy_mm(r->mm, iter, riov, n, write, mode,
					 true);
	} else {
		err = -ENXIO;
	}
	up_read(&r->lock);
	/* The owner may have exited meanwhile: the teardown is not ours. */
	if (got_mm && mode == PVM_TRY)
		mmput_async(r->mm);
	else if (got_mm)
		mmput(r->mm);
	return err;
}

/*
 * In io-wq, cancellation and exit arrive as a signal, but the fault_in_*()
 * helpers wait killably only: a holder's own userfaultfd page that nobody
 * resolves would hold the worker.  Fault the page the copy stopped at with
 * an interruptible pin instead (and drop the pin: only the fault counts).
 */
static int pvm_region_fault_in_intr(struct iov_iter *iter, bool write)
{
	const struct iovec *iov = iter_iov(iter);
	size_t off = iter->iov_offset;
	unsigned long i = 0;
	struct page *page;
	int locked = 1;
	long got;

	/* Past the empty entries, to the byte the copy stopped at. */
	while (iter_is_iovec(iter) && off >= iov[i].iov_len &&
	       i + 1 < iter->nr_segs) {
		off = 0;
		i++;
	}
	/* The fast path takes no FOLL_INTERRUPTIBLE: pin "remotely". */
	if (mmap_read_lock_killable(current->mm))
		return -EINTR;
	got = pin_user_pages_remote(current->mm,
				    (unsigned long)iov[i].iov_base + off, 1,
				    (write ? 0 : FOLL_WRITE) | FOLL_INTERRUPTIBLE,
				    &page, &locked);
	if (locked)
		mmap_read_unlock(current->mm);
	if (got != 1)
		return got == -EINTR ? -EINTR : -EFAULT;
	unpin_user_page(page);
	return 0;
}

/*
 * A page of the holder's buffer was not there: fault it in, with no lock
 * of the region held.  Return: 0 if at least its first page is there now.
 */
static int pvm_region_fault_in(struct iov_iter *iter, bool write,
			       enum pvm_mode mode)
{
	size_t want = min(iov_iter_count(iter), PVM_REGION_CHUNK);
	size_t left;

	if (!user_backed_iter(iter))
		return -EFAULT;
	if (mode == PVM_INTR)
		return pvm_region_fault_in_intr(iter, write);
	if (write)
		left = fault_in_iov_iter_readable(iter, want);
	else
		left = fault_in_iov_iter_writeable(iter, want);
	return left == want ? -EFAULT : 0;
}

/*
 * A copy from the syscalls may sleep and is ended by a fatal signal only,
 * as for a regular file.  In io-wq, any signal ends it: cancellation and
 * exit arrive as one.  IOCB_NOWAIT (RWF_NOWAIT, io_uring's inline attempt)
 * is the engine's try mode: nothing sleeps, and what would is -EAGAIN.
 */
static enum pvm_mode pvm_region_mode(const struct kiocb *iocb)
{
	if (iocb->ki_flags & IOCB_NOWAIT)
		return PVM_TRY;
	return current->flags & PF_IO_WORKER ? PVM_INTR : PVM_BLOCK;
}

static ssize_t pvm_region_rw(struct kiocb *iocb, struct iov_iter *iter,
			     bool write)
{
	struct pvm_region *r = iocb->ki_filp->private_data;
	enum pvm_mode mode = pvm_region_mode(iocb);
	loff_t pos = iocb->ki_pos, room;
	size_t shorted = 0;
	ssize_t done;
	int err = 0;

	if (pvm_region_dead(r))
		return -ENXIO;
	if (!iov_iter_count(iter))
		return 0;
	if (pos >= r->size)
		return write ? -ENOSPC : 0;
	room = r->size - pos;
	if (iov_iter_count(iter) > room) {
		shorted = iov_iter_count(iter) - room;
		iov_iter_truncate(iter, room);
	}
	while (iov_iter_count(iter)) {
		size_t left = iov_iter_count(iter);

		err = pvm_region_chunk(r, iter, pos, write, mode);
		pos += left - iov_iter_count(iter);
		if (err == -EAGAIN && mode != PVM_TRY)
			err = pvm_region_fault_in(iter, write, mode);
		if (err)
			break;
		if (fatal_signal_pending(current)) {
			err = -EINTR;
			break;
		}
		cond_resched();
	}
	iov_iter_reexpand(iter, iov_iter_count(iter) + shorted);
	done = pos - iocb->ki_pos;
	if (!done)
		return err;
	iocb->ki_pos = pos;
	return done;
}

/*
 * The file's access mode is the region's (process_vm_export() sets it and
 * the inode cannot be opened again), so the VFS refuses a write to a
 * read-only region already; the checks here say that the region's flags,
 * not the file, are what decides.
 */
static ssize_t pvm_region_read_iter(struct kiocb *iocb, struct iov_iter *to)
{
	struct pvm_region *r = iocb->ki_filp->private_data;

	if (!(r->flags & PROCESS_VM_REGION_READ))
		return -EBADF;
	return pvm_region_rw(iocb, to, false);
}

static ssize_t pvm_region_write_iter(struct kiocb *iocb, struct iov_iter *from)
{
	struct pvm_region *r = iocb->ki_filp->private_data;

	if (!(r->flags & PROCESS_VM_REGION_WRITE))
		return -EBADF;
	return pvm_region_rw(iocb, from, true);
}

static loff_t pvm_region_llseek(struct file *file, loff_t offset, int whence)
{
	struct pvm_region *r = file->private_data;

	return fixed_size_llseek(file, offset, whence, r->size);
}

/*
 * Revoke is the owner's: a thread of the process whose address space the
 * region is.  A holder that got the fd by fork or SCM_RIGHTS cannot take
 * the owner's grant back from the other holders.  Waiting for the copies
 * in flight is killable, so that an owner whose own fault (its
 * userfaultfd, its FUSE file) holds a copy up can still be killed.
 */
static long pvm_region_revoke(struct pvm_region *r)
{
	struct page **pages;
	unsigned long nr;

	if (current->mm != r->mm)
		return -EPERM;
	if (down_write_killable(&r->lock))
		return -EINTR;
	WRITE_ONCE(r->revoked, true);
	pages = r->pages;
	nr = r->nr_pages;
	r->pages = NULL;
	WRITE_ONCE(r->nr_pages, 0);
	up_write(&r->lock);
	pvm_region_unpin(r, pages, nr);
	return 0;
}

/*
 * The handle is the owner's to give: a holder that could read it could
 * pass the fd on as well, but the owner decides who gets a file.
 */
static long pvm_region_get_handle(struct pvm_region *r,
				  struct process_vm_handle __user *arg)
{
	struct process_vm_handle h = { .id = r->id };

	if (current->mm != r->mm)
		return -EPERM;
	if (pvm_region_dead(r))
		return -ENXIO;
	memcpy(h.secret, r->secret, sizeof(h.secret));
	return copy_to_user(arg, &h, sizeof(h)) ? -EFAULT : 0;
}

static long pvm_region_ioctl(struct file *file, unsigned int cmd,
			     unsigned long arg)
{
	switch (cmd) {
	case PROCESS_VM_REGION_REVOKE:
		return pvm_region_revoke(file->private_data);
	case PROCESS_VM_REGION_GET_HANDLE:
		return pvm_region_get_handle(file->private_data,
					     (void __user *)arg);
	default:
		return -ENOTTY;
	}
}

/*
 * What a holder may know of the region, and what this file may do with
 * it (the access of the file, which process_vm_open() may have narrowed).
 * Not the owner's addresses: those would give away its layout (and defeat
 * its ASLR) to every holder.
 */
static void pvm_region_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct pvm_region *r = file->private_data;
	bool rd = file->f_mode & FMODE_READ, wr = file->f_mode & FMODE_WRITE;

	seq_printf(m, "owner:\t%d\n",
		   pid_nr_ns(r->owner, task_active_pid_ns(current)));
	seq_printf(m, "access:\t%s%s\n", rd ? "r" : "", wr ? "w" : "");
	seq_printf(m, "size:\t%lld\n", r->size);
	seq_printf(m, "segments:\t%lu\n", r->nr_segs);
	seq_printf(m, "pinned:\t%lu\n", READ_ONCE(r->nr_pages) << PAGE_SHIFT);
	seq_printf(m, "state:\t%s\n", pvm_region_dead(r) ? "revoked" : "live");
}

/* Drop a file's reference; the last one frees the region. */
static void pvm_region_free(struct pvm_region *r)
{
	if (!refcount_dec_and_test(&r->ref))
		return;
	xa_cmpxchg(&pvm_regions, r->id, r, NULL, 0);
	pvm_region_unpin(r, r->pages, r->nr_pages);
	free_uid(r->user);
	mmdrop(r->mm);
	put_pid(r->owner);
	kvfree_rcu(r, rcu);
}

static int pvm_region_release(struct inode *inode, struct file *file)
{
	pvm_region_free(file->private_data);
	return 0;
}

static const struct file_operations pvm_region_fops = {
	.read_iter	= pvm_region_read_iter,
	.write_iter	= pvm_region_write_iter,
	.llseek		= pvm_region_llseek,
	.unlocked_ioctl	= pvm_region_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.show_fdinfo	= pvm_region_show_fdinfo,
	.release	= pvm_region_release,
};

/*
 * Check one exported range.  A range may start and end anywhere: the
 * buffers MPI and its users hand out are not page-aligned, and rounding
 * them out to pages would export the neighbouring bytes too.  A range
 * wraps where the caller's addresses do, so a 32-bit caller gets the same
 * answer from a 64-bit kernel as from a 32-bit one.
 */
static int pvm_region_check(const struct iovec *iov)
{
	unsigned long addr = (unsigned long)iov->iov_base, end;

	if (check_add_overflow(addr, iov->iov_len, &end) ||
	    (in_compat_syscall() && end > U32_MAX))
		return -EINVAL;
	if (!access_ok(iov->iov_base, iov->iov_len) ||
	    untagged_addr(addr) + iov->iov_len > TASK_SIZE)
		return -EFAULT;
	return 0;
}

/**
 * pvm_region_create() - A region of the caller's memory.
 * @iov: the ranges, in region order; empty ones are left out.
 * @iovcnt: number of entries in @iov.
 * @flags: PROCESS_VM_REGION_* flags.
 *
 * The region is in pvm_regions, under a new handle, when it is returned
 * with the caller's reference.
 *
 * Return: the region, or ERR_PTR(-EINVAL) for a range that wraps or a
 * region of no bytes, ERR_PTR(-EFAULT) for one outside user space (or, to
 * PIN, not mapped as the access needs), ERR_PTR(-ENOMEM), also past
 * RLIMIT_MEMLOCK for PIN.
 */
static struct pvm_region *pvm_region_create(const struct iovec *iov,
					    unsigned long iovcnt,
					    unsigned int flags)
{
	struct pvm_region *r;
	unsigned long i, n = 0;
	loff_t size = 0;
	int err;

	for (i = 0; i < iovcnt; i++) {
		err = pvm_region_check(&iov[i]);
		if (err)
			return ERR_PTR(err);
		if (!iov[i].iov_len)
			continue;
		if (check_add_overflow(size, (loff_t)iov[i].iov_len, &size))
			return ERR_PTR(-EINVAL);
		n++;
	}
	if (!n)
		return ERR_PTR(-EINVAL);
	r = kvzalloc(struct_size(r, segs, n), GFP_KERNEL_ACCOUNT);
	if (!r)
		return ERR_PTR(-ENOMEM);
	r->nr_segs = n;
	for (i = 0, n = 0; i < iovcnt; i++) {
		if (!iov[i].iov_len)
			continue;
		r->segs[n].addr = (unsigned long)iov[i].iov_base;
		r->segs[n].len = iov[i].iov_len;
		r->segs[n].start = r->size;
		r->size += iov[i].iov_len;
		n++;
	}
	refcount_set(&r->ref, 1);
	init_rwsem(&r->lock);
	r->flags = flags;
	r->owner = get_pid(task_tgid(current));
	r->uid = current_euid();
	get_random_bytes(r->secret, sizeof(r->secret));
	mmgrab(current->mm);
	r->mm = current->mm;
	err = 0;
	if (flags & PROCESS_VM_REGION_PIN)
		err = pvm_region_pin(r);
	if (!err)
		err = xa_alloc_cyclic(&pvm_regions, &r->id, r,
				      XA_LIMIT(1, U32_MAX), &pvm_region_next_id,
				      GFP_KERNEL_ACCOUNT);
	if (err < 0) {
		pvm_region_free(r);
		return ERR_PTR(err);
	}
	return r;
}

static int pvm_region_open_flags(unsigned int flags)
{
	switch (flags & PVM_REGION_ACCESS) {
	case PROCESS_VM_REGION_READ:
		return O_RDONLY;
	case PROCESS_VM_REGION_WRITE:
		return O_WRONLY;
	default:
		return O_RDWR;
	}
}

/*
 * A file for @r, opened for @access, that takes over the caller's
 * reference.  The file is always close-on-exec, as pidfds are: the
 * owner's exec revokes its regions anyway, and a holder that wants the fd
 * in the program it execs clears the flag.
 */
static int pvm_region_install(struct pvm_region *r, unsigned int access)
{
	struct file *file;
	int fd;

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		return fd;
	file = anon_inode_create_getfile("[process_vm_region]",
					 &pvm_region_fops, r,
					 pvm_region_open_flags(access), NULL);
	if (IS_ERR(file)) {
		put_unused_fd(fd);
		return PTR_ERR(file);
	}
	file->f_mode |= FMODE_PREAD | FMODE_PWRITE | FMODE_NOWAIT;
	file_inode(file)->i_size = r->size;
	fd_install(fd, file);
	return fd;
}

SYSCALL_DEFINE3(process_vm_export, const struct iovec __user *, vec,
		unsigned long, vlen, unsigned int, flags)
{
	struct iovec iovstack[UIO_FASTIOV];
	struct iovec *iov = iovstack;
	struct pvm_region *r;
	int ret;

	if ((flags & ~PVM_REGION_FLAGS) || !(flags & PVM_REGION_ACCESS))
		return -EINVAL;
	if (!vlen || vlen > UIO_MAXIOV)
		return -EINVAL;
	iov = iovec_from_user(vec, vlen, UIO_FASTIOV, iovstack,
			      in_compat_syscall());
	if (IS_ERR(iov))
		return PTR_ERR(iov);
	r = pvm_region_create(iov, vlen, flags);
	if (iov != iovstack)
		kfree(iov);
	if (IS_ERR(r))
		return PTR_ERR(r);
	ret = pvm_region_install(r, flags);
	if (ret < 0)
		pvm_region_free(r);
	return ret;
}

/*
 * The region a handle names, referenced, if its secret is right.  A wrong
 * secret and an id that names nothing look the same to the caller.
 */
static struct pvm_region *pvm_region_lookup(const struct process_vm_handle *h)
{
	struct pvm_region *r;

	if (h->id > U32_MAX)
		return NULL;
	rcu_read_lock();
	r = xa_load(&pvm_regions, h->id);
	if (r && !refcount_inc_not_zero(&r->ref))
		r = NULL;
	rcu_read_unlock();
	if (r && crypto_memneq(r->secret, h->secret, sizeof(r->secret))) {
		pvm_region_free(r);
		r = NULL;
	}
	return r;
}

/*
 * The owner's policy: the access asked for is no more than the region
 * grants, and the caller runs as the owner's effective uid at export
 * unless the owner let any user in.  No ptrace check: the handle is the
 * owner's consent, and the uid rule is the one KNEM and XPMEM apply.
 */
static int pvm_region_may_open(struct pvm_region *r, unsigned int access)
{
	if (access & ~r->flags)
		return -EACCES;
	if (!(r->flags & PROCESS_VM_REGION_ANY_USER) &&
	    !uid_eq(current_euid(), r->uid))
		return -EACCES;
	if (pvm_region_dead(r))
		return -ENXIO;
	return 0;
}

SYSCALL_DEFINE3(process_vm_open, const struct process_vm_handle __user *,
		uhandle, size_t, size, unsigned int, flags)
{
	struct process_vm_handle h;
	struct pvm_region *r;
	int ret;

	/* Later handles may grow; a shorter one is no handle at all. */
	if ((flags & ~PVM_REGION_ACCESS) || !flags || size < sizeof(h))
		return -EINVAL;
	ret = copy_struct_from_user(&h, sizeof(h), uhandle, size);
	if (ret)
		return ret;
	r = pvm_region_lookup(&h);
	if (!r)
		return -ENOENT;
	ret = pvm_region_may_open(r, flags);
	if (!ret)
		ret = pvm_region_install(r, flags);
	if (ret < 0)
		pvm_region_free(r);
	return ret;
}

#ifdef CONFIG_PROCESS_VM_KUNIT_TEST
#include "tests/process_vm_region_kunit.c"
#endif
