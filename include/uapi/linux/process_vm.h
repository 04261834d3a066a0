/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
#ifndef _UAPI_LINUX_PROCESS_VM_H
#define _UAPI_LINUX_PROCESS_VM_H

#include <linux/const.h>
#include <linux/ioctl.h>
#include <linux/types.h>

/*
 * Flags for process_vm_readv(2) and process_vm_writev(2).  Any other bit
 * makes the call fail with EINVAL before anything else is looked at.
 */

/* The pid argument is a pidfd (pidfd_open(2), clone3(CLONE_PIDFD)). */
#define PROCESS_VM_PIDFD	_BITUL(0)

/*
 * Do not sleep on the target's memory: stop at the first page that is not
 * resident and writable as needed, and only try the target's mmap lock.
 */
#define PROCESS_VM_NOWAIT	_BITUL(1)

/*
 * Flags for process_vm_export(2), which makes ranges of the caller's own
 * memory a region fd: what holders of the fd may do with those bytes (at
 * least one of READ and WRITE), and how the region holds them.  Any other
 * bit is EINVAL.
 */
#define PROCESS_VM_REGION_READ	_BITUL(0)	/* read(2), pread(2), ... */
#define PROCESS_VM_REGION_WRITE	_BITUL(1)	/* write(2), pwrite(2), ... */
/*
 * Pin the pages now, for the region's life (until revoke or the last fd
 * closes), charged to RLIMIT_MEMLOCK as io_uring's registered buffers are:
 * accesses copy from the pages of export time without walking the owner's
 * page tables or taking its mmap lock.
 */
#define PROCESS_VM_REGION_PIN	_BITUL(2)
/* process_vm_open(2) of the handle by any user, not just the owner's uid. */
#define PROCESS_VM_REGION_ANY_USER	_BITUL(3)

/*
 * A region's handle, for process_vm_open(2): a few bytes that name the
 * region and prove that whoever has them got them from the owner.
 */
struct process_vm_handle {
	__u64 id;
	__u8 secret[16];
};

/*
 * ioctl(2) on a region fd, by the owner only (a task of the address space
 * it was exported from): from its return on, no access reads or writes the
 * region's memory, and every later access fails with ENXIO.  Exec and exit
 * of the owner have the same effect.
 */
#define PROCESS_VM_REGION_REVOKE	_IO(0xB9, 0)
/* The region's handle, for the owner only: ioctl(fd, ..., &handle). */
#define PROCESS_VM_REGION_GET_HANDLE	_IOR(0xB9, 1, struct process_vm_handle)

#endif /* _UAPI_LINUX_PROCESS_VM_H */
