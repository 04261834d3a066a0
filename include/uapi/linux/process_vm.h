/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
#ifndef _UAPI_LINUX_PROCESS_VM_H
#define _UAPI_LINUX_PROCESS_VM_H

#include <linux/const.h>
#include <linux/ioctl.h>

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
 * memory a region fd: what holders of the fd may do with those bytes.  At
 * least one is needed; any other bit is EINVAL.
 */
#define PROCESS_VM_REGION_READ	_BITUL(0)	/* read(2), pread(2), ... */
#define PROCESS_VM_REGION_WRITE	_BITUL(1)	/* write(2), pwrite(2), ... */

/*
 * ioctl(2) on a region fd, by the owner only (a thread of the process that
 * exported it): from its return on, no access reads or writes the region's
 * memory, and every later access fails with ENXIO.  Exec and exit of the
 * owner have the same effect.
 */
#define PROCESS_VM_REGION_REVOKE	_IO(0xB9, 0)

#endif /* _UAPI_LINUX_PROCESS_VM_H */
