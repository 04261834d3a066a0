/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Internals of mm/process_vm_access.c shared with its KUnit suite.
 */
#ifndef __MM_PROCESS_VM_ACCESS_H
#define __MM_PROCESS_VM_ACCESS_H

#include <linux/types.h>

struct iov_iter;
struct iovec;
struct mm_struct;
struct page;

/**
 * struct pvm_copy - State of one process_vm_readv/writev copy.
 * @mm: the target's address space, referenced.
 * @iter: the caller's side of the copy.
 * @pages: batch of pinned target pages.
 * @max_pages: capacity of @pages.
 * @gup_flags: FOLL_* flags for pinning.
 * @write: copy from @iter into @mm.
 * @nowait: PROCESS_VM_NOWAIT: do not fault or wait for the mmap lock.
 * @pinned: pages pinned so far, for the tracepoint and the tests.
 */
struct pvm_copy {
	struct mm_struct *mm;
	struct iov_iter *iter;
	struct page **pages;
	unsigned long max_pages;
	unsigned int gup_flags;
	bool write;
	bool nowait;
	unsigned long pinned;
};

#if IS_ENABLED(CONFIG_KUNIT)
unsigned long pvm_span_pages(unsigned long addr, size_t len);
unsigned long pvm_batch_pages(const struct iovec *riov, unsigned long riovcnt,
			      size_t count);
ssize_t pvm_copy_mm(struct pvm_copy *c, const struct iovec *riov,
		    unsigned long riovcnt);
#endif

#endif /* __MM_PROCESS_VM_ACCESS_H */
