/* SPDX-License-Identifier: GPL-2.0 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM process_vm

#if !defined(_TRACE_PROCESS_VM_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_PROCESS_VM_H

#include <linux/tracepoint.h>
#include <linux/types.h>

/*
 * One event per process_vm_readv/writev call, at its end, whatever the
 * outcome.  @pid is the argument as passed: a pid, or a pidfd with
 * PROCESS_VM_PIDFD in @flags.  The syscall exit tracepoints give only the
 * return value; this one adds what the kernel made of the call: the
 * requested length after the MAX_RW_COUNT clamp and the pages pinned.
 * "copied" in the output is derived from @ret.
 */
TRACE_EVENT(process_vm_rw,

	TP_PROTO(int pid, unsigned long flags, bool write,
		 unsigned long liovcnt, unsigned long riovcnt,
		 size_t requested, unsigned long pinned, ssize_t ret),

	TP_ARGS(pid, flags, write, liovcnt, riovcnt, requested, pinned, ret),

	TP_STRUCT__entry(
		__field(int, pid)
		__field(unsigned long, flags)
		__field(bool, write)
		__field(unsigned long, liovcnt)
		__field(unsigned long, riovcnt)
		__field(size_t, requested)
		__field(unsigned long, pinned)
		__field(ssize_t, ret)
	),

	TP_fast_assign(
		__entry->pid = pid;
		__entry->flags = flags;
		__entry->write = write;
		__entry->liovcnt = liovcnt;
		__entry->riovcnt = riovcnt;
		__entry->requested = requested;
		__entry->pinned = pinned;
		__entry->ret = ret;
	),

	TP_printk("pid=%d flags=%#lx dir=%s liovcnt=%lu riovcnt=%lu requested=%zu copied=%zd pinned=%lu ret=%zd",
		  __entry->pid, __entry->flags,
		  __entry->write ? "write" : "read",
		  __entry->liovcnt, __entry->riovcnt, __entry->requested,
		  __entry->ret > 0 ? __entry->ret : 0, __entry->pinned,
		  __entry->ret)
);

#endif /* _TRACE_PROCESS_VM_H */

/* This part must be outside protection */
#include <trace/define_trace.h>
