/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Internals of mm/process_vm_access.c shared with its KUnit suite.
 */
#ifndef __MM_PROCESS_VM_ACCESS_H
#define __MM_PROCESS_VM_ACCESS_H

#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/process_vm.h>
#include <linux/uio.h>

/**
 * struct pvm_copy - State of one process_vm_readv/writev copy.
 * @mm: the target's address space, referenced.
 * @iter: the caller's side of the copy.
 * @pages: batch of pinned target pages.
 * @max_pages: capacity of @pages.
 * @gup_flags: FOLL_* flags for pinning.
 * @write: copy from @iter into @mm.
 * @mode: how the copy may wait.
 * @err: why the copy stopped early, 0 if it did not.
 * @pinned: pages pinned so far, for the tracepoint and the tests.
 * @batches: pin calls made so far (each takes the mmap lock), for the tests.
 */
struct pvm_copy {
	struct mm_struct *mm;
	struct iov_iter *iter;
	struct page **pages;
	unsigned long max_pages;
	unsigned int gup_flags;
	bool write;
	enum pvm_mode mode;
	int err;
	unsigned long pinned;
	unsigned long batches;
};

/**
 * pvm_span_pages() - Number of pages a user range touches.
 * @addr: start of the range.
 * @len: length of the range in bytes.
 *
 * Return: the number of pages spanned by [@addr, @addr + @len), 0 if @len
 * is 0.
 */
static inline unsigned long pvm_span_pages(unsigned long addr, size_t len)
{
	if (!len)
		return 0;
	return ((addr + len - 1) >> PAGE_SHIFT) - (addr >> PAGE_SHIFT) + 1;
}

/**
 * pvm_batch_pages() - Pages worth pinning at once for a set of remote iovecs.
 * @riov: remote iovecs.
 * @riovcnt: number of remote iovecs.
 * @count: bytes the local side can take.
 *
 * Return: the largest number of pages any one remote iovec spans within its
 * first @count bytes; 0 if the remote side names no bytes at all.
 */
static inline unsigned long pvm_batch_pages(const struct iovec *riov,
					    unsigned long riovcnt, size_t count)
{
	unsigned long i, nr = 0;

	for (i = 0; i < riovcnt; i++)
		nr = max(nr, pvm_span_pages((unsigned long)riov[i].iov_base,
					    min(riov[i].iov_len, count)));
	return nr;
}

#if IS_ENABLED(CONFIG_KUNIT)
ssize_t pvm_kunit_copy_mm(struct pvm_copy *c, const struct iovec *riov,
			  unsigned long riovcnt, unsigned long nr);
#endif

#endif /* __MM_PROCESS_VM_ACCESS_H */
