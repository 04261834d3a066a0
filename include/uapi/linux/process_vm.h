/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
#ifndef _UAPI_LINUX_PROCESS_VM_H
#define _UAPI_LINUX_PROCESS_VM_H

#include <linux/const.h>

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

#endif /* _UAPI_LINUX_PROCESS_VM_H */
