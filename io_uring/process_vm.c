// SPDX-License-Identifier: GPL-2.0
/*
 * IORING_OP_PROCESS_VM_READV and IORING_OP_PROCESS_VM_WRITEV: the copies of
 * process_vm_readv(2) and process_vm_writev(2) as io_uring requests.
 *
 * The target is a pidfd in sqe->fd, so a registered pidfd works with
 * IOSQE_FIXED_FILE.  Both iovec arrays are copied at prep: the SQE and the
 * arrays it points to may be reused once submission returns, as
 * IORING_FEAT_SUBMIT_STABLE promises.  The inline attempt does not wait
 * for the target's exec, mmap lock or faults, nor for faults of the
 * caller's own buffer; where it would have to, the request goes on in
 * io-wq from where it stopped.  A request is bound to the address space
 * it first copied with, so that its two parts can never land in two
 * programs across an exec of the target.  The io-wq copy waits
 * interruptibly, because cancellation and exit reach a running io-wq
 * request only as a notification signal; an interruption that is neither
 * (a job-control stop) resumes the copy instead of ending it.
 */
#include <linux/kernel.h>
#include <linux/capability.h>
#include <linux/errno.h>
#include <linux/fs.h>
#include <linux/io_uring.h>
#include <linux/process_vm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/sysctl.h>
#include <linux/uio.h>

#include <uapi/linux/io_uring.h>

#include "io_uring.h"
#include "io-wq.h"
#include "process_vm.h"

/*
 * A request with one local and one remote iovec, the common case, keeps
 * them here and needs no async data.  @mm is the address space the
 * request is bound to once it has copied a byte (process_vm_copy()).
 */
struct io_pvm {
	struct file			*file;
	u32				flags;
	bool				write;
	size_t				done;
	struct mm_struct		*mm;
	struct iovec			l;
	struct iovec			r;
};

/*
 * kernel.io_uring_process_vm_disabled: io_uring requests are not system
 * calls, so a seccomp filter that denies process_vm_readv/writev does not
 * see these ops.  0 allows them, 1 allows them only to submitters with
 * CAP_SYS_PTRACE, 2 to nobody; the syscalls are not affected.
 */
static int __read_mostly io_pvm_disabled;

static bool io_pvm_allowed(void)
{
	int disabled = READ_ONCE(io_pvm_disabled);

	return !disabled || (disabled == 1 && capable(CAP_SYS_PTRACE));
}

#ifdef CONFIG_SYSCTL
static struct ctl_table io_pvm_sysctl_table[] = {
	{
		.procname	= "io_uring_process_vm_disabled",
		.data		= &io_pvm_disabled,
		.maxlen		= sizeof(io_pvm_disabled),
		.mode		= 0644,
		.proc_handler	= proc_dointvec_minmax,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_TWO,
	},
};

static int __init io_pvm_sysctl_init(void)
{
	register_sysctl_init("kernel", io_pvm_sysctl_table);
	return 0;
}
late_initcall(io_pvm_sysctl_init);
#endif

static int io_pvm_import_one(struct io_kiocb *req, struct io_pvm *pvm,
			     const struct iovec __user *lvec,
			     const struct iovec __user *rvec)
{
	struct iovec *iov = &pvm->l;
	struct iov_iter iter;
	ssize_t ret;

	pvm->r.iov_len = 0;
	ret = __import_iovec(pvm->write ? ITER_SOURCE : ITER_DEST, lvec, 1, 1,
			     &iov, &iter, req->ctx->compat);
	/* As the syscalls: nothing to copy means no look at the remote side. */
	if (ret <= 0)
		return ret;
	pvm->l.iov_len = ret;		/* clamped to MAX_RW_COUNT */
	iov = iovec_from_user(rvec, 1, 1, &pvm->r, req->ctx->compat);
	return PTR_ERR_OR_ZERO(iov);
}

static int io_pvm_import(struct io_kiocb *req, struct io_pvm *pvm,
			 const struct iovec __user *lvec, unsigned int nr_liov,
			 const struct iovec __user *rvec, unsigned int nr_riov)
{
	struct io_pvm_async *a;
	struct iovec *iov;
	ssize_t ret;

	if (io_alloc_async_data(req))
		return -ENOMEM;
	a = req->async_data;
	a->riov = NULL;
	a->nr_riov = 0;
	a->liov_free = NULL;
	a->riov_free = NULL;
	req->flags |= REQ_F_NEED_CLEANUP;

	iov = a->fast_liov;
	ret = __import_iovec(pvm->write ? ITER_SOURCE : ITER_DEST, lvec,
			     nr_liov, UIO_FASTIOV, &iov, &a->iter,
			     req->ctx->compat);
	if (ret < 0)
		return ret;
	a->liov_free = iov;
	if (!ret)
		return 0;
	iov = iovec_from_user(rvec, nr_riov, UIO_FASTIOV, a->fast_riov,
			      req->ctx->compat);
	if (IS_ERR(iov))
		return PTR_ERR(iov);
	a->riov = iov;
	a->nr_riov = nr_riov;
	if (iov != a->fast_riov)
		a->riov_free = iov;
	return 0;
}

int io_process_vm_prep(struct io_kiocb *req, const struct io_uring_sqe *sqe)
{
	struct io_pvm *pvm = io_kiocb_to_cmd(req, struct io_pvm);
	const struct iovec __user *lvec, *rvec;
	unsigned int nr_liov, nr_riov;

	pvm->done = 0;
	pvm->mm = NULL;
	if (!io_pvm_allowed())
		return -EPERM;
	if (sqe->buf_index || sqe->addr3 || sqe->__pad2[0])
		return -EINVAL;
	pvm->flags = READ_ONCE(sqe->process_vm_flags);
	/* The target must be a pidfd: a pid could be reused before issue. */
	if (pvm->flags & ~PROCESS_VM_FLAGS || !(pvm->flags & PROCESS_VM_PIDFD))
		return -EINVAL;
	pvm->write = req->opcode == IORING_OP_PROCESS_VM_WRITEV;
	lvec = u64_to_user_ptr(READ_ONCE(sqe->addr));
	nr_liov = READ_ONCE(sqe->len);
	rvec = u64_to_user_ptr(READ_ONCE(sqe->addr2));
	nr_riov = READ_ONCE(sqe->file_index);
	if (nr_liov == 1 && nr_riov == 1)
		return io_pvm_import_one(req, pvm, lvec, rvec);
	return io_pvm_import(req, pvm, lvec, nr_liov, rvec, nr_riov);
}

/* Skip the remote bytes that have been copied, for the next issue. */
static void io_pvm_advance(struct io_pvm_async *a, size_t bytes)
{
	while (a->nr_riov && (bytes || !a->riov->iov_len)) {
		size_t n = min(bytes, a->riov->iov_len);

		a->riov->iov_base += n;
		a->riov->iov_len -= n;
		bytes -= n;
		if (!a->riov->iov_len) {
			a->riov++;
			a->nr_riov--;
		}
	}
}

static int io_pvm_copy(struct io_kiocb *req, struct io_pvm *pvm,
		       enum pvm_mode mode, size_t *copied)
{
	struct io_pvm_async *a = req->async_data;
	struct iov_iter one;
	int err;

	if (req_has_async_data(req)) {
		size_t before = iov_iter_count(&a->iter);

		err = process_vm_copy(req->file, &pvm->mm, &a->iter, a->riov,
				      a->nr_riov, pvm->write, mode);
		*copied = before - iov_iter_count(&a->iter);
		/* For a retry, after -EAGAIN or an interruption that resumes. */
		io_pvm_advance(a, *copied);
		return err;
	}
	iov_iter_ubuf(&one, pvm->write ? ITER_SOURCE : ITER_DEST,
		      pvm->l.iov_base, pvm->l.iov_len);
	err = process_vm_copy(req->file, &pvm->mm, &one, &pvm->r, 1,
			      pvm->write, mode);
	*copied = pvm->l.iov_len - iov_iter_count(&one);
	pvm->l.iov_base += *copied;
	pvm->l.iov_len -= *copied;
	pvm->r.iov_base += *copied;
	pvm->r.iov_len -= *copied;
	return err;
}

/*
 * What ends an interrupted io-wq copy: cancellation of the request (which
 * also covers the exit of the submitting task), the exit of the ring's
 * io-wq and a fatal signal.  Any other interruption, such as a job-control
 * stop of the submitter, only wakes the wait up.
 */
static bool io_pvm_interrupted_for_good(struct io_kiocb *req)
{
	return fatal_signal_pending(current) || io_wq_worker_stopped() ||
	       atomic_read(&req->work.flags) & IO_WQ_WORK_CANCEL;
}

int io_process_vm(struct io_kiocb *req, unsigned int issue_flags)
{
	struct io_pvm *pvm = io_kiocb_to_cmd(req, struct io_pvm);
	enum pvm_mode mode;
	size_t copied;
	int err;

	if (pvm->flags & PROCESS_VM_NOWAIT)
		mode = PVM_NOWAIT;
	else if (issue_flags & IO_URING_F_NONBLOCK)
		mode = PVM_TRY;
	else
		mode = PVM_INTR;

	err = io_pvm_copy(req, pvm, mode, &copied);
	pvm->done += copied;
	/* The reference on the bound mm is dropped in ->cleanup. */
	if (pvm->mm)
		req->flags |= REQ_F_NEED_CLEANUP;
	if (err == -EAGAIN && mode == PVM_TRY)
		return -EAGAIN;
	/*
	 * Not over: hand the request back to the submitter, whose task_work
	 * issues it again from where it stopped.  A stopped submitter runs
	 * no task_work, so the request waits out the stop there, not in a
	 * worker.
	 */
	if (err == -EINTR && mode == PVM_INTR &&
	    !io_pvm_interrupted_for_good(req)) {
		io_req_task_queue(req);
		return IOU_ISSUE_SKIP_COMPLETE;
	}
	/* A copy that stopped before either side ran out fails a link. */
	if (err)
		req_set_fail(req);
	/* At most MAX_RW_COUNT bytes: the count fits in cqe->res. */
	io_req_set_res(req, pvm->done ? (int)pvm->done : err, 0);
	return IOU_OK;
}

void io_process_vm_cleanup(struct io_kiocb *req)
{
	struct io_pvm *pvm = io_kiocb_to_cmd(req, struct io_pvm);
	struct io_pvm_async *a = req->async_data;

	if (pvm->mm)
		mmdrop(pvm->mm);
	if (req_has_async_data(req)) {
		kfree(a->liov_free);
		kfree(a->riov_free);
	}
}

/* The core fails a request it cancels; report what was copied by then. */
void io_process_vm_fail(struct io_kiocb *req)
{
	struct io_pvm *pvm = io_kiocb_to_cmd(req, struct io_pvm);

	if (pvm->done)
		io_req_set_res(req, pvm->done, 0);
}
