/* SPDX-License-Identifier: (LGPL-2.1 OR MIT) */
/*
 * liburing helpers for the io_uring process_vm opcodes: the asynchronous
 * form of process_vm_readv(2) and process_vm_writev(2).
 *
 * SQE layout of both opcodes:
 *   fd          pidfd of the target (a registered file with IOSQE_FIXED_FILE)
 *   addr, len   local iovec array and its count
 *   off         remote iovec array
 *   file_index  remote iovec count
 *   rw_flags    PROCESS_VM_PIDFD (required) | optional PROCESS_VM_NOWAIT
 * ioprio, buf_index and addr3 must be 0.  Both iovec arrays are copied when
 * the request is submitted.  cqe->res is the number of bytes copied, or
 * -errno when nothing was, as for the system calls.
 *
 * The opcodes are the series' IORING_OP_PROCESS_VM_READV/WRITEV (65/66,
 * the next free numbers).  The macros here have names of their own: one
 * named like the kernel's enum constants would break a <linux/io_uring.h>
 * that defines them.
 *
 * Only io_uring_prep_rw() and SQE fields that every liburing release has
 * are used, so that this keeps building with liburing 2.3 and later.
 */
#ifndef PVM_URING_H
#define PVM_URING_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>
#include <liburing.h>
#include <linux/const.h>

#ifdef __has_include
#if __has_include("linux/process_vm.h")
#include <linux/process_vm.h>
#endif
#endif

/* Spelled as in <linux/process_vm.h>, so that both may be included. */
#ifndef PROCESS_VM_PIDFD
#define PROCESS_VM_PIDFD	_BITUL(0)
#endif
#ifndef PROCESS_VM_NOWAIT
#define PROCESS_VM_NOWAIT	_BITUL(1)
#endif

#define PVM_IORING_OP_READV	65
#define PVM_IORING_OP_WRITEV	66

/**
 * pvm_uring_prep_rw() - fill an SQE for one of the process_vm opcodes
 * @op: PVM_IORING_OP_READV or PVM_IORING_OP_WRITEV
 * @sqe: submission queue entry to fill
 * @fd: pidfd of the target, or a registered file index
 * @lvec: local iovec array
 * @lcnt: number of entries in @lvec
 * @rvec: remote iovec array (addresses in the target)
 * @rcnt: number of entries in @rvec
 * @flags: PROCESS_VM_* flags; PROCESS_VM_PIDFD is always added
 *
 * Every other SQE field is cleared, as io_uring_prep_rw() does.
 */
static inline void pvm_uring_prep_rw(int op, struct io_uring_sqe *sqe, int fd,
				     const struct iovec *lvec,
				     unsigned int lcnt,
				     const struct iovec *rvec,
				     unsigned int rcnt, unsigned int flags)
{
	io_uring_prep_rw(op, sqe, fd, lvec, lcnt, (__u64)(uintptr_t)rvec);
	sqe->file_index = rcnt;
	sqe->rw_flags = flags | PROCESS_VM_PIDFD;
}

/**
 * pvm_uring_prep_readv() - prepare a read of another process's memory
 * @sqe: submission queue entry to fill
 * @pidfd: pidfd of the target process
 * @lvec: local iovec array, the destination
 * @lcnt: number of entries in @lvec (at most 1024)
 * @rvec: remote iovec array, the source in the target
 * @rcnt: number of entries in @rvec (at most 1024)
 * @flags: 0 or PROCESS_VM_NOWAIT; PROCESS_VM_PIDFD is always added
 *
 * The asynchronous process_vm_readv(@pidfd, @lvec, @lcnt, @rvec, @rcnt,
 * @flags | PROCESS_VM_PIDFD).  The arrays may be reused once the SQE has
 * been submitted; the buffers they describe must stay valid until the
 * completion.
 */
static inline void pvm_uring_prep_readv(struct io_uring_sqe *sqe, int pidfd,
					const struct iovec *lvec,
					unsigned int lcnt,
					const struct iovec *rvec,
					unsigned int rcnt, unsigned int flags)
{
	pvm_uring_prep_rw(PVM_IORING_OP_READV, sqe, pidfd, lvec, lcnt, rvec,
			  rcnt, flags);
}

/**
 * pvm_uring_prep_writev() - prepare a write into another process's memory
 * @sqe: submission queue entry to fill
 * @pidfd: pidfd of the target process
 * @lvec: local iovec array, the source
 * @lcnt: number of entries in @lvec (at most 1024)
 * @rvec: remote iovec array, the destination in the target
 * @rcnt: number of entries in @rvec (at most 1024)
 * @flags: 0 or PROCESS_VM_NOWAIT; PROCESS_VM_PIDFD is always added
 *
 * The asynchronous process_vm_writev(@pidfd, @lvec, @lcnt, @rvec, @rcnt,
 * @flags | PROCESS_VM_PIDFD).  The arrays may be reused once the SQE has
 * been submitted; the buffers they describe must stay valid until the
 * completion.
 */
static inline void pvm_uring_prep_writev(struct io_uring_sqe *sqe, int pidfd,
					 const struct iovec *lvec,
					 unsigned int lcnt,
					 const struct iovec *rvec,
					 unsigned int rcnt, unsigned int flags)
{
	pvm_uring_prep_rw(PVM_IORING_OP_WRITEV, sqe, pidfd, lvec, lcnt, rvec,
			  rcnt, flags);
}

/**
 * pvm_uring_prep_readv_fixed() - pvm_uring_prep_readv() on a registered pidfd
 * @sqe: submission queue entry to fill
 * @file_index: index of the pidfd in the ring's registered file table
 * @lvec: local iovec array, the destination
 * @lcnt: number of entries in @lvec (at most 1024)
 * @rvec: remote iovec array, the source in the target
 * @rcnt: number of entries in @rvec (at most 1024)
 * @flags: 0 or PROCESS_VM_NOWAIT; PROCESS_VM_PIDFD is always added
 *
 * As pvm_uring_prep_readv(), with IOSQE_FIXED_FILE set.
 */
static inline void pvm_uring_prep_readv_fixed(struct io_uring_sqe *sqe,
					      int file_index,
					      const struct iovec *lvec,
					      unsigned int lcnt,
					      const struct iovec *rvec,
					      unsigned int rcnt,
					      unsigned int flags)
{
	pvm_uring_prep_readv(sqe, file_index, lvec, lcnt, rvec, rcnt, flags);
	sqe->flags |= IOSQE_FIXED_FILE;
}

/**
 * pvm_uring_prep_writev_fixed() - pvm_uring_prep_writev() on a registered pidfd
 * @sqe: submission queue entry to fill
 * @file_index: index of the pidfd in the ring's registered file table
 * @lvec: local iovec array, the source
 * @lcnt: number of entries in @lvec (at most 1024)
 * @rvec: remote iovec array, the destination in the target
 * @rcnt: number of entries in @rvec (at most 1024)
 * @flags: 0 or PROCESS_VM_NOWAIT; PROCESS_VM_PIDFD is always added
 *
 * As pvm_uring_prep_writev(), with IOSQE_FIXED_FILE set.
 */
static inline void pvm_uring_prep_writev_fixed(struct io_uring_sqe *sqe,
					       int file_index,
					       const struct iovec *lvec,
					       unsigned int lcnt,
					       const struct iovec *rvec,
					       unsigned int rcnt,
					       unsigned int flags)
{
	pvm_uring_prep_writev(sqe, file_index, lvec, lcnt, rvec, rcnt, flags);
	sqe->flags |= IOSQE_FIXED_FILE;
}

/**
 * pvm_uring_supported() - whether the kernel implements both opcodes
 * @ring: an initialised ring
 *
 * Asks the kernel with IORING_REGISTER_PROBE.  Kernels without the opcodes
 * fail such requests with -EINVAL.
 *
 * Return: true if the probe reports both opcodes as supported, false
 * otherwise (also when the probe itself fails).
 */
static inline bool pvm_uring_supported(struct io_uring *ring)
{
	struct io_uring_probe *probe = io_uring_get_probe_ring(ring);
	bool ret;

	if (!probe)
		return false;
	ret = probe->ops_len > PVM_IORING_OP_WRITEV &&
	      io_uring_opcode_supported(probe, PVM_IORING_OP_READV) &&
	      io_uring_opcode_supported(probe, PVM_IORING_OP_WRITEV);
	io_uring_free_probe(probe);
	return ret;
}

#endif /* PVM_URING_H */
