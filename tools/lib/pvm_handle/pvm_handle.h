/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libpvm_handle: memory handles over kernel regions, or Cross Memory Attach.
 *
 * A producer exports a range of its memory as a fixed-size handle: plain
 * bytes it may pass through any channel.  A consumer opens the handle with
 * nothing but those bytes and reads or writes the range by offset.  The
 * producer may revoke what it exported.
 *
 * Where the kernel has regions (process_vm_export(2)), the handle is the
 * kernel's: an id and a 128-bit secret.  It is a capability: the range,
 * the access mode and revocation are enforced by the kernel, a forged or
 * edited handle is refused by it, and the consumer needs no ptrace rights
 * over the producer, only the producer's effective uid.
 *
 * Elsewhere (the fallback), copies go through process_vm_readv(2) and
 * process_vm_writev(2).  The handle names the producer by pid and by an
 * identity a recycled pid cannot fake; a copy that could have reached
 * another process is reported as an error, never returned as data.  The
 * consumer needs ptrace access to the producer
 * (PTRACE_MODE_ATTACH_REALCREDS), and the handle is a name, not a
 * capability: read-only, the range and revocation are checked by this
 * library in the consumer, not by the kernel, and bind only consumers
 * that use it.  Any process that passes the ptrace check can read and
 * write the producer's whole address space, handle or not.
 *
 * Functions return 0 (or a byte count) on success and a negative errno
 * value on failure; they never set errno on purpose.  See README.rst.
 */
#ifndef PVM_HANDLE_H
#define PVM_HANDLE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Size of a handle in bytes, and the format versions it is written in:
 * the CMA path's, and a kernel region's.
 */
#define PVM_HANDLE_SIZE			64
#define PVM_HANDLE_VERSION		1
#define PVM_HANDLE_VERSION_REGION	2

/* What a handle allows its consumers to do with the range. */
#define PVM_HANDLE_READ		0x1u
#define PVM_HANDLE_WRITE	0x2u
#define PVM_HANDLE_RDWR		(PVM_HANDLE_READ | PVM_HANDLE_WRITE)

/*
 * pvm_handle_export() flag, with the access: a CMA handle (version 1) even
 * where the kernel has regions, for consumers of libpvm_handle before 0.3.
 */
#define PVM_HANDLE_EXPORT_CMA	0x100u

/*
 * pvm_handle_open() flags: for a CMA handle, access by pid even if
 * PROCESS_VM_PIDFD works.  No effect on a region handle.
 */
#define PVM_HANDLE_OPEN_PID	0x1u

/* Largest transfer one call moves: the kernel's MAX_RW_COUNT (4 KiB pages). */
#define PVM_HANDLE_MAX_IO	0x7ffff000ul

/* How an open handle reaches the producer (pvm_handle_via()). */
enum pvm_handle_via {
	PVM_HANDLE_VIA_PID = 1,		/* pid, checked after every copy */
	PVM_HANDLE_VIA_PIDFD = 2,	/* pidfd with PROCESS_VM_PIDFD */
	PVM_HANDLE_VIA_REGION = 3,	/* a region fd, the kernel's checks */
};

struct pvm_handle;

/* Producer side */
int pvm_handle_export(const void *addr, size_t len, unsigned int access,
		      unsigned char handle[PVM_HANDLE_SIZE]);
int pvm_handle_revoke(const void *handle, size_t size);
int pvm_handle_allow(pid_t consumer);

/* Consumer side */
int pvm_handle_open(const void *handle, size_t size, unsigned int flags,
		    struct pvm_handle **hp);
void pvm_handle_close(struct pvm_handle *h);
ssize_t pvm_handle_pread(struct pvm_handle *h, void *buf, size_t len,
			 uint64_t offset);
ssize_t pvm_handle_pwrite(struct pvm_handle *h, const void *buf, size_t len,
			  uint64_t offset);
ssize_t pvm_handle_preadv(struct pvm_handle *h, const struct iovec *iov,
			  int iovcnt, uint64_t offset);
ssize_t pvm_handle_pwritev(struct pvm_handle *h, const struct iovec *iov,
			   int iovcnt, uint64_t offset);

/* Of an open handle; 0 for NULL (no valid handle has a 0 in any of them). */
uint64_t pvm_handle_length(const struct pvm_handle *h);
unsigned int pvm_handle_access(const struct pvm_handle *h);
pid_t pvm_handle_pid(const struct pvm_handle *h);
enum pvm_handle_via pvm_handle_via(const struct pvm_handle *h);

/* 1 if this kernel has PROCESS_VM_PIDFD, else 0; probed once. */
int pvm_handle_kernel_has_pidfd(void);

/* 1 if this kernel has regions (process_vm_export(2)), else 0; probed once. */
int pvm_handle_kernel_has_regions(void);

/*
 * What @err, a value one of these functions returned (-errno, or errno),
 * means for this library: a constant string, for each error README.rst
 * lists; for other values, strerror()'s.
 */
const char *pvm_handle_strerror(int err);

#ifdef __cplusplus
}
#endif

#endif /* PVM_HANDLE_H */
