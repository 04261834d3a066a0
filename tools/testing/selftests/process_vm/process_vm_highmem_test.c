// SPDX-License-Identifier: GPL-2.0
/*
 * process_vm_readv(2)/process_vm_writev(2) on pages above the direct map.
 *
 * On a 32-bit kernel with CONFIG_HIGHMEM, user pages come from the HighMem
 * zone first, and the kernel has to map each remote page it copies.  Every
 * case first proves, from /proc/PID/pagemap and the zone's span in
 * /proc/zoneinfo, that all the target's pages and all the local ones lie in
 * HighMem, and prints how many; then it copies across page boundaries and
 * checks every byte on the other side.
 *
 * Skipped where there is no HighMem zone (64-bit kernels) or pagemap hides
 * frame numbers (not root).
 */
#define _GNU_SOURCE
#include "process_vm_util.h"

#include "../kselftest_harness.h"

#define NPAGES		64
#define PM_PRESENT	(1ULL << 63)
#define PM_PFN_MASK	((1ULL << 55) - 1)

/* The HighMem zone of node 0 as [*start, *end) in frames; false if none. */
static bool highmem_span(uint64_t *start, uint64_t *end)
{
	unsigned long long v, spanned = 0;
	bool in_highmem = false;
	char line[256];
	FILE *f;

	f = fopen("/proc/zoneinfo", "r");
	if (!f)
		return false;
	*start = *end = 0;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "Node ", 5)) {
			in_highmem = !!strstr(line, "zone  HighMem\n");
			continue;
		}
		if (!in_highmem)
			continue;
		if (sscanf(line, " spanned %llu", &v) == 1)
			spanned = v;
		else if (sscanf(line, " start_pfn: %llu", &v) == 1)
			*start = v;
	}
	fclose(f);
	*end = *start + spanned;
	return spanned != 0;
}

/*
 * How many of the @n pages at @addr in @pid are present in frames
 * [@start, @end): 0 ... @n, or -errno.  Frame numbers read as 0 without
 * CAP_SYS_ADMIN, which the caller checks for.
 */
static long count_highmem(pid_t pid, unsigned long addr, size_t n,
			  uint64_t start, uint64_t end)
{
	uint64_t pm[NPAGES];
	char path[64];
	long count = 0;
	ssize_t got;
	size_t i;
	int fd;

	if (n > NPAGES)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	got = pread(fd, pm, n * sizeof(pm[0]),
		    (off_t)(addr / PVM_PAGE) * sizeof(pm[0]));
	close(fd);
	if (got != (ssize_t)(n * sizeof(pm[0])))
		return got < 0 ? -errno : -EIO;
	for (i = 0; i < n; i++) {
		uint64_t pfn = pm[i] & PM_PFN_MASK;

		if ((pm[i] & PM_PRESENT) && pfn >= start && pfn < end)
			count++;
	}
	return count;
}

FIXTURE(highmem)
{
	struct pvm_target t;
	size_t len;
	char *remote;		/* the same address in the target */
	char *local;
	uint64_t start, end;	/* the HighMem zone's frames */
};

FIXTURE_SETUP(highmem)
{
	self->t.pid = 0;
	self->local = NULL;
	if (!highmem_span(&self->start, &self->end))
		SKIP(return, "no HighMem zone (64-bit kernel or no CONFIG_HIGHMEM)");
	if (geteuid())
		SKIP(return, "pagemap shows frame numbers to root only");
	TH_LOG("HighMem frames %llu-%llu", (unsigned long long)self->start,
	       (unsigned long long)self->end - 1);

	self->len = NPAGES * PVM_PAGE;
	/* Not populated before fork(): the target faults in its own pages. */
	self->remote = pvm_map_anon(self->len);
	ASSERT_TRUE(!!self->remote);
	self->local = pvm_map_anon(self->len);
	ASSERT_TRUE(!!self->local);
	memset(self->local, 0, self->len);
	ASSERT_EQ(0, pvm_target_start(&self->t, pvm_cmd_fill,
				      (unsigned long)self->remote, self->len,
				      7));
}

FIXTURE_TEARDOWN(highmem)
{
	if (self->t.pid > 0)
		pvm_target_stop(&self->t);
}

/* Both sides' pages must all be highmem ones for the copy to count. */
static void assert_all_highmem(struct __test_metadata *_metadata,
			       FIXTURE_DATA(highmem) *self)
{
	long r = count_highmem(self->t.pid, (unsigned long)self->remote,
			       NPAGES, self->start, self->end);
	long l = count_highmem(getpid(), (unsigned long)self->local, NPAGES,
			       self->start, self->end);

	TH_LOG("in HighMem: %ld of %d remote pages, %ld of %d local pages",
	       r, NPAGES, l, NPAGES);
	ASSERT_EQ(NPAGES, r);
	ASSERT_EQ(NPAGES, l);
}

/* Every remote page read whole, once, into a buffer at another offset. */
TEST_F(highmem, readv_all_pages)
{
	size_t off = 123, len = self->len - PVM_PAGE;

	assert_all_highmem(_metadata, self);
	ASSERT_EQ((long)len, pvm_res(pvm_rw1(false, self->t.pid,
					     self->local + off,
					     (unsigned long)self->remote, len)));
	ASSERT_EQ(-1, pvm_check_at(self->local + off, len, 7, 0));
}

/*
 * A remote range that starts and ends inside a page, written from local
 * pages at a different offset, then a read back of the bytes around it.
 */
TEST_F(highmem, writev_straddling)
{
	size_t roff = PVM_PAGE - 5, len = self->len - 2 * PVM_PAGE + 9;
	unsigned long raddr = (unsigned long)self->remote + roff;

	pvm_fill(self->local, self->len, 11);
	assert_all_highmem(_metadata, self);
	ASSERT_EQ((long)len, pvm_res(pvm_rw1(true, self->t.pid,
					     self->local + 17, raddr, len)));
	memset(self->local, 0, self->len);
	ASSERT_EQ((long)self->len, pvm_res(pvm_rw1(false, self->t.pid,
						   self->local,
						   (unsigned long)self->remote,
						   self->len)));
	ASSERT_EQ(-1, pvm_check_at(self->local, roff, 7, 0));
	ASSERT_EQ(-1, pvm_check_at(self->local + roff, len, 11, 17));
	ASSERT_EQ(-1, pvm_check_at(self->local + roff + len,
				   self->len - roff - len, 7, roff + len));
}

/*
 * Many small iovecs on both sides, each piece crossing a page boundary on
 * one side or the other: each remote page is mapped more than once.
 */
TEST_F(highmem, readv_scattered)
{
	struct iovec liov[NPAGES], riov[NPAGES];
	size_t i, piece = PVM_PAGE / 2 + 1, total = 0;

	assert_all_highmem(_metadata, self);
	for (i = 0; i < NPAGES - 1; i++) {
		riov[i].iov_base = self->remote + i * PVM_PAGE + PVM_PAGE / 2;
		riov[i].iov_len = piece;
		liov[i].iov_base = self->local + i * PVM_PAGE + PVM_PAGE - 7;
		liov[i].iov_len = piece;
		total += piece;
	}
	ASSERT_EQ((long)total, pvm_res(pvm_readv(self->t.pid, liov, NPAGES - 1,
						 riov, NPAGES - 1, 0)));
	for (i = 0; i < NPAGES - 1; i++)
		ASSERT_EQ(-1, pvm_check_at(liov[i].iov_base, piece, 7,
					   (char *)riov[i].iov_base -
					   self->remote));
}

TEST_HARNESS_MAIN
