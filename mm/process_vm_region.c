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
 */

#include <linux/anon_inodes.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/process_vm.h>
#include <linux/rwsem.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/syscalls.h>
#include <linux/uaccess.h>
#include <linux/uio.h>

#define PVM_REGION_FLAGS	(PROCESS_VM_REGION_READ | PROCESS_VM_REGION_WRITE)

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
 */
struct pvm_segment {
	unsigned long addr;
	size_t len;
	loff_t start;
};

/**
 * struct pvm_region - Ranges of one process's memory, exported.
 * @mm: the owner's address space, held by mmgrab().
 * @owner: the owner's thread-group pid, for fdinfo.
 * @lock: held for read by a copy, for write by revoke.
 * @revoked: no access may reach @mm any more.
 * @flags: PROCESS_VM_REGION_* access granted.
 * @size: bytes in all segments.
 * @nr_segs: number of @segs.
 * @segs: the segments, in region order.
 */
struct pvm_region {
	struct mm_struct *mm;
	struct pid *owner;
	struct rw_semaphore lock;
	bool revoked;
	unsigned int flags;
	loff_t size;
	unsigned long nr_segs;
	struct pvm_segment segs[] __counted_by(nr_segs);
};

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

static int pvm_region_lock(struct pvm_region *r, enum pvm_mode mode)
{
	if (mode == PVM_TRY)
		return down_read_trylock(&r->lock) ? 0 : -EAGAIN;
	return down_read_killable(&r->lock);
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
	struct iovec riov[PVM_REGION_IOVS];
	unsigned long n;
	bool got_mm;
	int err;

	n = pvm_region_map(r, pos, min(iov_iter_count(iter), PVM_REGION_CHUNK),
			   riov);
	err = pvm_region_lock(r, mode);
	if (err)
		return err;
	got_mm = !READ_ONCE(r->revoked) && mmget_not_zero(r->mm);
	if (got_mm)
		err = process_vm_copy_mm(r->mm, iter, riov, n, write, mode,
					 true);
	up_read(&r->lock);
	if (!got_mm)
		return -ENXIO;
	/* The owner may have exited meanwhile: the teardown is not ours. */
	if (mode == PVM_TRY)
		mmput_async(r->mm);
	else
		mmput(r->mm);
	return err;
}

/*
 * A page of the holder's buffer was not there: fault it in, with no lock
 * of the region held.  Return: 0 if at least its first page is there now.
 */
static int pvm_region_fault_in(struct iov_iter *iter, bool write)
{
	size_t want = min(iov_iter_count(iter), PVM_REGION_CHUNK);
	size_t left;

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
			err = pvm_region_fault_in(iter, write);
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

static bool pvm_region_dead(struct pvm_region *r)
{
	return READ_ONCE(r->revoked) || !atomic_read(&r->mm->mm_users);
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
	if (current->mm != r->mm)
		return -EPERM;
	if (down_write_killable(&r->lock))
		return -EINTR;
	WRITE_ONCE(r->revoked, true);
	up_write(&r->lock);
	return 0;
}

static long pvm_region_ioctl(struct file *file, unsigned int cmd,
			     unsigned long arg)
{
	switch (cmd) {
	case PROCESS_VM_REGION_REVOKE:
		return pvm_region_revoke(file->private_data);
	default:
		return -ENOTTY;
	}
}

/*
 * What a holder may know of the region.  Not the owner's addresses: those
 * would give away its layout (and defeat its ASLR) to every holder.
 */
static void pvm_region_show_fdinfo(struct seq_file *m, struct file *file)
{
	struct pvm_region *r = file->private_data;
	static const char * const access[] = { "", "r", "w", "rw" };

	seq_printf(m, "owner:\t%d\n",
		   pid_nr_ns(r->owner, task_active_pid_ns(current)));
	seq_printf(m, "access:\t%s\n", access[r->flags & PVM_REGION_FLAGS]);
	seq_printf(m, "size:\t%lld\n", r->size);
	seq_printf(m, "segments:\t%lu\n", r->nr_segs);
	seq_printf(m, "state:\t%s\n", pvm_region_dead(r) ? "revoked" : "live");
}

static void pvm_region_free(struct pvm_region *r)
{
	mmdrop(r->mm);
	put_pid(r->owner);
	kvfree(r);
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
 * them out to pages would export the neighbouring bytes too.
 */
static int pvm_region_check(const struct iovec *iov)
{
	unsigned long addr = (unsigned long)iov->iov_base, end;

	if (check_add_overflow(addr, iov->iov_len, &end))
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
 * @flags: PROCESS_VM_REGION_* access to grant.
 *
 * Return: the region, or ERR_PTR(-EINVAL) for a range that wraps or a
 * region of no bytes, ERR_PTR(-EFAULT) for one outside user space,
 * ERR_PTR(-ENOMEM).
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
	init_rwsem(&r->lock);
	r->flags = flags;
	r->owner = get_pid(task_tgid(current));
	mmgrab(current->mm);
	r->mm = current->mm;
	return r;
}

static int pvm_region_open_flags(unsigned int flags)
{
	switch (flags & PVM_REGION_FLAGS) {
	case PROCESS_VM_REGION_READ:
		return O_RDONLY;
	case PROCESS_VM_REGION_WRITE:
		return O_WRONLY;
	default:
		return O_RDWR;
	}
}

/*
 * The file is always close-on-exec, as pidfds are: the owner's exec
 * revokes its regions anyway, and a holder that wants the fd in the
 * program it execs clears the flag.
 */
static int pvm_region_install(struct pvm_region *r)
{
	struct file *file;
	int fd;

	fd = get_unused_fd_flags(O_CLOEXEC);
	if (fd < 0)
		return fd;
	file = anon_inode_create_getfile("[process_vm_region]",
					 &pvm_region_fops, r,
					 pvm_region_open_flags(r->flags), NULL);
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

	if ((flags & ~PVM_REGION_FLAGS) || !(flags & PVM_REGION_FLAGS))
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
	ret = pvm_region_install(r);
	if (ret < 0)
		pvm_region_free(r);
	return ret;
}

#ifdef CONFIG_PROCESS_VM_KUNIT_TEST
#include "tests/process_vm_region_kunit.c"
#endif
