/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel-internal interface to the process_vm_readv/writev copy engine
 * (mm/process_vm_access.c), used by the syscalls, by io_uring and by
 * region fds (mm/process_vm_region.c).
 */
#ifndef _LINUX_PROCESS_VM_H
#define _LINUX_PROCESS_VM_H

#include <linux/types.h>
#include <uapi/linux/process_vm.h>

struct file;
struct iov_iter;
struct iovec;
struct mm_struct;
struct page;

/* Every flag the syscalls accept; kept out of uapi on purpose. */
#define PROCESS_VM_FLAGS	(PROCESS_VM_PIDFD | PROCESS_VM_NOWAIT)

/**
 * enum pvm_mode - How a copy may wait for the target.
 * @PVM_BLOCK: the syscall: sleeps on faults and on the mmap lock; a fatal
 *	signal ends the waits.
 * @PVM_INTR: as @PVM_BLOCK, but any signal ends the waits with -EINTR
 *	(io-wq, where cancellation and exit arrive as a notification signal).
 * @PVM_NOWAIT: PROCESS_VM_NOWAIT: never faults a target page in, only
 *	tries the mmap lock; a page that would need a fault is -EFAULT.
 * @PVM_TRY: io_uring's inline attempt: as @PVM_NOWAIT, but a page that
 *	would need a fault is -EAGAIN, so the copy can go on where it may
 *	sleep; an address no fault could make valid is still -EFAULT.  The
 *	target's exec lock is only tried, and a fault of the caller's own
 *	buffer stops the copy with -EAGAIN too.
 */
enum pvm_mode {
	PVM_BLOCK,
	PVM_INTR,
	PVM_NOWAIT,
	PVM_TRY,
};

static inline bool pvm_mode_nonblock(enum pvm_mode mode)
{
	return mode >= PVM_NOWAIT;
}

int process_vm_copy(struct file *pidfd, struct mm_struct **bound,
		    struct iov_iter *iter, const struct iovec *riov,
		    unsigned long riovcnt, bool write, enum pvm_mode mode);
int process_vm_copy_mm(struct mm_struct *mm, struct iov_iter *iter,
		       const struct iovec *riov, unsigned long riovcnt,
		       bool write, enum pvm_mode mode, bool nofault);
size_t process_vm_copy_pages(struct page **pages, unsigned long nr,
			     size_t offset, size_t bytes, struct iov_iter *iter,
			     bool write, bool nofault);

#endif /* _LINUX_PROCESS_VM_H */
