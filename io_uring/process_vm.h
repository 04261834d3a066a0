/* SPDX-License-Identifier: GPL-2.0 */

#include <linux/uio.h>

/**
 * struct io_pvm_async - Iovecs of a process_vm request, copied at prep,
 * when there is more than one on either side.
 * @iter: the local side; advanced as bytes are copied.
 * @riov: the remote iovecs not yet consumed.
 * @nr_riov: number of entries at @riov.
 * @liov_free: heap array behind @iter, or NULL.
 * @riov_free: heap array behind @riov, or NULL.
 * @fast_liov: @iter's array for up to UIO_FASTIOV entries.
 * @fast_riov: @riov's array for up to UIO_FASTIOV entries.
 */
struct io_pvm_async {
	struct iov_iter		iter;
	struct iovec		*riov;
	unsigned long		nr_riov;
	struct iovec		*liov_free;
	struct iovec		*riov_free;
	struct iovec		fast_liov[UIO_FASTIOV];
	struct iovec		fast_riov[UIO_FASTIOV];
};

int io_process_vm_prep(struct io_kiocb *req, const struct io_uring_sqe *sqe);
int io_process_vm(struct io_kiocb *req, unsigned int issue_flags);
void io_process_vm_cleanup(struct io_kiocb *req);
void io_process_vm_fail(struct io_kiocb *req);
