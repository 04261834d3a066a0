// SPDX-License-Identifier: GPL-2.0
/*
 * Robustness of process_vm_readv(2)/process_vm_writev(2) against a target
 * that changes its address space during the copy: munmap, mremap,
 * mprotect, fork and exit, on 4 KiB pages and on large folios (THPs that
 * the target splits, remaps out of order and collapses; hugetlb pages).
 * Each test loops for a bounded time and accepts only a full count, a
 * partial count, EFAULT or (exit) ESRCH, checks that the data that was
 * copied is sane, and relies on the harness timeout to catch hangs.
 *
 * The region's pattern depends on the position, so that a page copied
 * from or to the wrong place, e.g. the wrong page of a large folio, shows.
 * A target that changes the region's content (a fresh mapping, a page
 * refaulted, pages that trade places) brackets the change with a sequence
 * count: an access that no change overlapped must find the pattern
 * exactly, the others may also find zeros or the traded pages' bytes.  A
 * write is read back and checked the same way.
 */
#define _GNU_SOURCE
#include <sys/file.h>

#include "process_vm_util.h"

#include "../kselftest_harness.h"

#define SEED_R		0x6666
#define NPAGES		16
#define DURATION_MS	1000
/* 4 KiB pages before the first THP: accesses start there */
#define PAD_PAGES	2
/* accesses a churner lets happen in each state it holds */
#define HOLD		2
/* free huge pages a hugetlb case needs: 2 mapped, 2 for copy-on-write */
#define HUGE_NEED	4
#define NR_HUGEPAGES	"/proc/sys/vm/nr_hugepages"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE	25
#endif

enum kind { SMALL, THP, HUGETLB };

/* Shared by the test and its target */
struct shared {
	unsigned int stop;	/* no more accesses: churners end */
	unsigned int seq;	/* odd while a churner changes the content */
	unsigned long calls;	/* accesses done */
	unsigned long bad;	/* what the target found wrong, plus 1 */
};

FIXTURE(stress) {
	struct pvm_target t;
	struct shared *sh;
	enum kind kind;
	uint8_t *region;	/* at the same address in the target */
	uint8_t *spare;		/* mremap() destination in the target */
	uint8_t *pat;		/* the region's content: its pattern */
	uint8_t *local;
	size_t len;		/* of the region */
	size_t pad;		/* small pages before the large folios */
	size_t folio;		/* size of the large folios, or 0 */
	size_t off, count;	/* what an access copies */
	size_t swap_a, swap_b, swap_len;	/* runs that trade places */
	bool write;
	int huge_lock;
	long huge_added;
	long full, partial, efault, esrch;
	long exact_checks;	/* accesses checked exactly */
};

FIXTURE_VARIANT(stress) {
	bool write;
};

FIXTURE_VARIANT_ADD(stress, read) {
	.write = false,
};

FIXTURE_VARIANT_ADD(stress, write) {
	.write = true,
};

/* The buffers of a region of self->len bytes; false if out of memory */
static bool map_buffers(FIXTURE_DATA(stress) *self)
{
	self->spare = pvm_map_anon(self->len);
	self->pat = pvm_map_anon(self->len);
	self->local = pvm_map_anon(self->len);
	if (!self->spare || !self->pat || !self->local)
		return false;
	pvm_fill(self->pat, self->len, SEED_R);
	self->off = 0;
	self->count = self->len;
	return true;
}

static void unmap_buffers(FIXTURE_DATA(stress) *self)
{
	uint8_t **p[] = { &self->region, &self->spare, &self->pat,
			  &self->local };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(p); i++) {
		if (*p[i])
			munmap(*p[i], self->len);
		*p[i] = NULL;
	}
}

FIXTURE_SETUP(stress)
{
	self->t.pid = -1;
	self->huge_lock = -1;
	self->write = variant->write;
	self->sh = pvm_map(PVM_PAGE, PROT_READ | PROT_WRITE,
			   MAP_SHARED | MAP_ANONYMOUS);
	ASSERT_TRUE(self->sh != NULL);
	self->len = NPAGES * PVM_PAGE;
	ASSERT_TRUE(map_buffers(self));
	self->region = pvm_map_anon(self->len);
	ASSERT_TRUE(self->region != NULL);
	/* the pattern is in place before the target exists */
	memcpy(self->region, self->pat, self->len);
}

/* Give back the huge pages hugetlb_get() added, end our turn */
static void hugetlb_put(FIXTURE_DATA(stress) *self)
{
	long total = pvm_read_long(NR_HUGEPAGES);

	if (self->huge_added > 0 && total >= self->huge_added)
		pvm_write_long(NR_HUGEPAGES, total - self->huge_added);
	if (self->huge_lock >= 0)
		close(self->huge_lock);
}

FIXTURE_TEARDOWN(stress)
{
	pvm_target_kill(&self->t);
	hugetlb_put(self);
	unmap_buffers(self);
	munmap(self->sh, PVM_PAGE);
}

static bool stopped(FIXTURE_DATA(stress) *self)
{
	return __atomic_load_n(&self->sh->stop, __ATOMIC_SEQ_CST);
}

/* In the target: whether to begin a round, the first one in any case */
static bool churning(FIXTURE_DATA(stress) *self, long rounds)
{
	return !rounds || !stopped(self);
}

static unsigned int seq(FIXTURE_DATA(stress) *self)
{
	return __atomic_load_n(&self->sh->seq, __ATOMIC_SEQ_CST);
}

/* In the target: around a change of the region's content */
static void change(FIXTURE_DATA(stress) *self)
{
	__atomic_add_fetch(&self->sh->seq, 1, __ATOMIC_SEQ_CST);
}

/*
 * In the target: hold the region's state for HOLD accesses, the first of
 * which may have begun before it, then check it.  No access of a correct
 * kernel that ran in this state puts anything but the pattern in place,
 * and a write's read-back through the same kernel might not see a page
 * written to the wrong place.  The first access may have written through
 * pages pinned before the state began, pages that have moved since (a
 * swap): the check waits for a later, complete write, and is skipped when
 * the accesses stop before.  0, or -EBADMSG and self->sh->bad set.
 */
static long settle(FIXTURE_DATA(stress) *self)
{
	unsigned long until = __atomic_load_n(&self->sh->calls,
					      __ATOMIC_SEQ_CST) + HOLD;
	long bad;

	while (__atomic_load_n(&self->sh->calls, __ATOMIC_SEQ_CST) < until) {
		if (stopped(self))
			return 0;
		usleep(100);
	}
	bad = pvm_first_diff(self->region, self->pat, self->len);
	if (bad < 0)
		return 0;
	self->sh->bad = bad + 1;
	return -EBADMSG;
}

/* In the target: the index of the first byte not the pattern, or -1 */
static long check_region(struct pvm_target *t, unsigned long arg,
			 unsigned long unused1, unsigned long unused2)
{
	FIXTURE_DATA(stress) *self = (void *)arg;

	return pvm_first_diff(self->region, self->pat, self->len);
}

/* In the target: @n bytes of the region at @off get their pattern */
static void rewrite(FIXTURE_DATA(stress) *self, size_t off, size_t n)
{
	memcpy(self->region + off, self->pat + off, n);
}

/* In the target: a fresh region, large folios if of a large kind, filled */
static long map_region(FIXTURE_DATA(stress) *self)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED;

	if (self->kind == HUGETLB)
		flags |= MAP_HUGETLB;
	if (mmap(self->region, self->len, PROT_READ | PROT_WRITE, flags, -1,
		 0) != self->region)
		return -errno;
	if (self->kind == THP &&
	    madvise(self->region, self->len, MADV_HUGEPAGE))
		return -errno;
	rewrite(self, 0, self->len);
	return 0;
}

/*
 * Index of the first of the @n bytes of self->local, copied from the
 * region at self->off, that cannot be there, or -1.  @exact: the region's
 * content did not change during the access, all must be the pattern.
 */
static long check_copy(FIXTURE_DATA(stress) *self, size_t n, bool exact)
{
	size_t i, o, a = self->swap_a, b = self->swap_b;
	const uint8_t *got = self->local;

	if (!memcmp(got, self->pat + self->off, n))
		return -1;
	for (i = 0; i < n; i++) {
		o = self->off + i;
		if (got[i] == self->pat[o] || (!exact && !got[i]))
			continue;
		if (!exact && o - a < self->swap_len &&
		    got[i] == self->pat[o - a + b])
			continue;
		if (!exact && o - b < self->swap_len &&
		    got[i] == self->pat[o - b + a])
			continue;
		return i;
	}
	return -1;
}

/*
 * One access of self->count bytes at self->off.  A write stores the
 * region's own pattern, so the content stays defined, and is read back.
 */
static void access_once(struct __test_metadata *_metadata,
			FIXTURE_DATA(stress) *self, pid_t pid)
{
	unsigned long raddr = (unsigned long)self->region + self->off;
	unsigned int s = seq(self);
	bool exact;
	long ret, n, bad;

	memset(self->local, 0xa5, self->count);
	ret = pvm_res(pvm_rw1(self->write, pid, self->write ?
			      self->pat + self->off : self->local, raddr,
			      self->count));
	n = ret;
	if (self->write && ret > 0)
		n = pvm_res(pvm_rw1(false, pid, self->local, raddr, ret));
	exact = !(s & 1) && seq(self) == s;
	__atomic_add_fetch(&self->sh->calls, 1, __ATOMIC_SEQ_CST);
	if (ret == -EFAULT) {
		self->efault++;
		return;
	}
	if (ret == -ESRCH) {
		self->esrch++;
		return;
	}
	if (ret == (long)self->count)
		self->full++;
	else if (ret > 0 && ret < (long)self->count)
		self->partial++;
	else
		ASSERT_EQ(self->count, ret);
	bad = n > 0 ? check_copy(self, n, exact) : -1;
	self->exact_checks += n > 0 && exact;
	if (bad != -1)
		TH_LOG("byte %#zx of the region is %#x (%s of %ld, seq %u-%u)",
		       (size_t)(self->off + bad), self->local[bad],
		       self->write ? "read back" : "read", n, s, seq(self));
	ASSERT_EQ(-1, bad);
	/* bytes beyond the count are untouched */
	if (!self->write)
		ASSERT_EQ(-1, pvm_check_byte(self->local + ret,
					     self->count - ret, 0xa5));
}

/*
 * Loop access_once() for DURATION_MS while the target (started now, if
 * not yet) runs @churn(self) until told to stop.
 */
static void race(struct __test_metadata *_metadata, FIXTURE_DATA(stress) *self,
		 pvm_fn churn)
{
	long long end;
	long rounds;

	if (self->t.pid < 0)
		ASSERT_EQ(0, pvm_target_start(&self->t, NULL, 0, 0, 0));
	ASSERT_EQ(0, pvm_target_send(&self->t, churn, (unsigned long)self,
				     0, 0));
	end = pvm_now_ms() + DURATION_MS;
	while (pvm_now_ms() < end)
		access_once(_metadata, self, self->t.pid);
	__atomic_store_n(&self->sh->stop, 1, __ATOMIC_SEQ_CST);
	rounds = pvm_target_recv(&self->t);
	if (self->sh->bad)
		TH_LOG("the target found byte %#lx of the region wrong",
		       self->sh->bad - 1);
	TH_LOG("%ld target rounds; full %ld partial %ld efault %ld, %ld exact",
	       rounds, self->full, self->partial, self->efault,
	       self->exact_checks);
	ASSERT_GT(rounds, 0);
	ASSERT_EQ(0, self->esrch);
	/* the content at rest is the pattern */
	ASSERT_EQ(-1, pvm_target_call(&self->t, check_region,
				      (unsigned long)self, 0, 0));
}

/* HugePages_Free - HugePages_Rsvd: pages free for new mappings */
static long hugetlb_avail(void)
{
	long free_pages = -1, rsvd = -1, val;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "HugePages_Free: %ld", &val) == 1)
			free_pages = val;
		else if (sscanf(line, "HugePages_Rsvd: %ld", &val) == 1)
			rsvd = val;
	}
	fclose(f);
	return free_pages < 0 || rsvd < 0 ? -1 : free_pages - rsvd;
}

/*
 * HUGE_NEED free default-size huge pages for a hugetlb case, which then
 * has the pool to itself: the cases of programs that run in parallel take
 * turns (a lock on nr_hugepages).  As root, adds the missing pages to the
 * pool, as selftests/mm do; hugetlb_put() takes them back.
 */
static const char *hugetlb_get(FIXTURE_DATA(stress) *self)
{
	long avail, total;

	self->huge_lock = open(NR_HUGEPAGES, O_RDONLY);
	if (self->huge_lock < 0 || flock(self->huge_lock, LOCK_EX))
		return "cannot lock " NR_HUGEPAGES;
	avail = hugetlb_avail();
	total = pvm_read_long(NR_HUGEPAGES);
	if (avail >= 0 && avail < HUGE_NEED && total >= 0 &&
	    !pvm_write_long(NR_HUGEPAGES, total + HUGE_NEED - avail))
		self->huge_added = pvm_read_long(NR_HUGEPAGES) - total;
	if (hugetlb_avail() < HUGE_NEED)
		return "needs 4 free huge pages (" NR_HUGEPAGES ")";
	return NULL;
}

/* AnonHugePages (kB) of @pid's mapping that holds @addr, or -1 */
static long thp_kb(pid_t pid, void *addr)
{
	unsigned long start, end, a = (unsigned long)addr;
	char path[64], line[256];
	bool in = false;
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &start, &end) == 2)
			in = start <= a && a < end;
		else if (in && sscanf(line, "AnonHugePages: %ld", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

/* The target's setup for a region of a large kind: it maps it itself */
static long setup_large(struct pvm_target *t, unsigned long arg,
			unsigned long unused1, unsigned long unused2)
{
	return map_region((void *)arg);
}

/*
 * Starts a target whose region is two large folios of @kind: THPs, after
 * PAD_PAGES small pages, or default-size hugetlb pages.  The accesses
 * start a little before the first THP (inside the first huge page) and
 * end inside the second.  Returns why the test cannot run, or NULL.
 */
static const char *start_large(struct __test_metadata *_metadata,
			       FIXTURE_DATA(stress) *self, enum kind kind)
{
	size_t pg = PVM_PAGE;
	const char *skip;
	uint8_t *m;
	long ret;

	self->folio = kind == THP ? pvm_thp_size() : pvm_hugetlb_size();
	if (!self->folio)
		return kind == THP ? "no THP (no hpage_pmd_size)" :
				     "no hugetlb (no Hugepagesize in meminfo)";
	if (kind == HUGETLB) {
		skip = hugetlb_get(self);
		if (skip)
			return skip;
	}
	unmap_buffers(self);
	self->kind = kind;
	self->pad = kind == THP ? PAD_PAGES * pg : 0;
	self->len = self->pad + 2 * self->folio;
	ASSERT_TRUE(map_buffers(self));
	self->off = kind == THP ? 123 : 3 * pg + 123;
	self->count = self->len - self->off - 3 * pg - 45;
	/* the region's address, which the target maps itself */
	m = pvm_map_aligned(3 * self->folio, self->folio, PROT_NONE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE);
	ASSERT_TRUE(m != NULL);
	munmap(m, self->folio - self->pad);
	self->region = m + self->folio - self->pad;
	if (kind == THP) {
		/* pages of both THPs trade places */
		self->swap_a = self->pad + 2 * pg;
		self->swap_b = self->pad + self->folio + 9 * pg;
		self->swap_len = 3 * pg;
	}
	ret = pvm_target_start(&self->t, setup_large, (unsigned long)self,
			       0, 0);
	if (kind == HUGETLB && ret == -ENOMEM)
		return "MAP_HUGETLB failed, huge pages taken meanwhile";
	ASSERT_EQ(0, ret);
	if (kind == THP) {
		ret = thp_kb(self->t.pid, self->region + self->pad);
		TH_LOG("%ld kB of THP at the start", ret);
		if (ret <= 0)
			return "the target got no THP (transparent_hugepage/enabled?)";
	}
	return NULL;
}

/*
 * Steps of the churners, in the target: 0 or -errno.  A fresh region,
 * from munmap() to filled.
 */
static long remap_region(FIXTURE_DATA(stress) *self)
{
	long err;

	change(self);
	if (munmap(self->region, self->len))
		return -errno;
	err = map_region(self);
	change(self);
	return err;
}

/* A page of the second THP zapped and refaulted small: the PMD splits */
static long zap_page(FIXTURE_DATA(stress) *self)
{
	size_t pg = PVM_PAGE, zap = self->pad + self->folio + 5 * pg;

	change(self);
	if (madvise(self->region + zap, pg, MADV_DONTNEED))
		return -errno;
	rewrite(self, zap, pg);
	change(self);
	return 0;
}

/* The second half of the first THP read-only, or back: the PMD splits */
static long protect_half(FIXTURE_DATA(stress) *self, int prot)
{
	size_t half = self->folio / 2;

	return mprotect(self->region + self->pad + half, half, prot) ?
	       -errno : 0;
}

static long read_only_half(FIXTURE_DATA(stress) *self)
{
	return protect_half(self, PROT_READ);
}

static long writable_half(FIXTURE_DATA(stress) *self)
{
	return protect_half(self, PROT_READ | PROT_WRITE);
}

/* In the target: move @n bytes at @from to @to, which is then mapped */
static bool move(void *from, void *to, size_t n)
{
	return mremap(from, n, n, MREMAP_MAYMOVE | MREMAP_FIXED, to) == to;
}

/*
 * Runs swap_a and swap_b trade places through the spare region, then
 * each gets the pattern of its new place: the large folios are mapped by
 * PTEs, their pages not in virtual order.
 */
static long swap_runs(FIXTURE_DATA(stress) *self)
{
	uint8_t *a = self->region + self->swap_a;
	uint8_t *b = self->region + self->swap_b;
	size_t n = self->swap_len;

	change(self);
	if (!move(a, self->spare, n) || !move(b, a, n) ||
	    !move(self->spare, b, n))
		return -errno;
	rewrite(self, self->swap_a, n);
	rewrite(self, self->swap_b, n);
	change(self);
	return 0;
}

/*
 * THPs again where the kernel can; it may refuse (pinned pages, several
 * VMAs, EINVAL before Linux 6.1).
 */
static long collapse(FIXTURE_DATA(stress) *self)
{
	madvise(self->region, self->len, MADV_COLLAPSE);
	return 0;
}

typedef long (*step_fn)(FIXTURE_DATA(stress) *self);

/*
 * Run @steps in turn, each state settle()d, until told to stop; the last
 * round is completed, so that the region is at rest as a round leaves it.
 */
static long churn_steps(FIXTURE_DATA(stress) *self, const step_fn *steps,
			size_t nsteps)
{
	long rounds, err;
	size_t i;

	for (rounds = 0; churning(self, rounds); rounds++) {
		for (i = 0; i < nsteps; i++) {
			err = steps[i](self);
			if (!err)
				err = settle(self);
			if (err)
				return err;
		}
	}
	return rounds;
}

/* Churners run in the target until told to stop; return rounds */
static long churn_munmap(struct pvm_target *t, unsigned long arg,
			 unsigned long unused1, unsigned long unused2)
{
	static const step_fn steps[] = { remap_region };

	return churn_steps((void *)arg, steps, ARRAY_SIZE(steps));
}

/*
 * THPs split and rebuilt: a page zapped, a PMD split by mprotect(), pages
 * that trade places and back, collapse, munmap.
 */
static long churn_thp(struct pvm_target *t, unsigned long arg,
		      unsigned long unused1, unsigned long unused2)
{
	static const step_fn steps[] = {
		zap_page, read_only_half, writable_half, swap_runs, swap_runs,
		collapse, remap_region,
	};

	return churn_steps((void *)arg, steps, ARRAY_SIZE(steps));
}

static long churn_mremap(struct pvm_target *t, unsigned long arg,
			 unsigned long unused1, unsigned long unused2)
{
	FIXTURE_DATA(stress) *self = (void *)arg;
	long rounds;

	for (rounds = 0; churning(self, rounds); rounds++) {
		/* moves the pages (and their content) away and back */
		if (!move(self->region, self->spare, self->len) ||
		    !move(self->spare, self->region, self->len))
			return -errno;
	}
	return rounds;
}

static long churn_mprotect(struct pvm_target *t, unsigned long arg,
			   unsigned long unused1, unsigned long unused2)
{
	FIXTURE_DATA(stress) *self = (void *)arg;
	size_t half = self->len / 2 & ~(PVM_PAGE - 1);
	void *addr = self->region;
	long rounds;

	for (rounds = 0; churning(self, rounds); rounds++) {
		if (mprotect(addr, self->len, PROT_NONE) ||
		    mprotect(addr, half, PROT_READ) ||
		    mprotect(addr, self->len, PROT_READ | PROT_WRITE))
			return -errno;
	}
	return rounds;
}

static long churn_fork(struct pvm_target *t, unsigned long arg,
		       unsigned long unused1, unsigned long unused2)
{
	FIXTURE_DATA(stress) *self = (void *)arg;
	long rounds, err;
	int status;
	pid_t pid;

	for (rounds = 0; churning(self, rounds); rounds++) {
		/* the region is shared copy-on-write with the child */
		pid = fork();
		if (pid < 0)
			return -errno;
		if (pid == 0)
			_exit(!!memcmp(self->region, self->pat, self->len));
		/*
		 * and the parent writes it while the child may still run: a
		 * page of each large folio (a THP's or a huge page's COW),
		 * or the first page
		 */
		rewrite(self, self->pad, PVM_PAGE);
		if (self->folio)
			rewrite(self, self->pad + self->folio, PVM_PAGE);
		if (waitpid(pid, &status, 0) != pid)
			return -errno;
		/* the child saw the pattern throughout */
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			return -EBADMSG;
		if (!self->folio)
			continue;
		/*
		 * large folios (THPs collapsed again where the kernel can)
		 * not shared with a child get accesses of their own
		 */
		if (self->kind == THP)
			collapse(self);
		err = settle(self);
		if (err)
			return err;
	}
	return rounds;
}

/* The region never goes away: every access is complete */
static void fork_case(struct __test_metadata *_metadata,
		      FIXTURE_DATA(stress) *self)
{
	race(_metadata, self, churn_fork);
	ASSERT_EQ(0, self->partial);
	ASSERT_EQ(0, self->efault);
}

TEST_F_TIMEOUT(stress, munmap, 60)
{
	race(_metadata, self, churn_munmap);
}

TEST_F_TIMEOUT(stress, mremap, 60)
{
	race(_metadata, self, churn_mremap);
}

TEST_F_TIMEOUT(stress, mprotect, 60)
{
	race(_metadata, self, churn_mprotect);
}

TEST_F_TIMEOUT(stress, fork, 60)
{
	fork_case(_metadata, self);
}

/* Targets that exit after a short while, accessed until they are gone */
TEST_F_TIMEOUT(stress, exit, 60)
{
	long long end = pvm_now_ms() + DURATION_MS;
	long targets = 0;
	int status;

	while (pvm_now_ms() < end) {
		long long deadline = pvm_now_ms() + 10000;

		ASSERT_EQ(0, pvm_target_start(&self->t, NULL, 0, 0, 0));
		ASSERT_EQ(0, pvm_target_send(&self->t, pvm_cmd_exit, 0, 0, 0));
		self->esrch = 0;
		while (!self->esrch) {
			access_once(_metadata, self, self->t.pid);
			ASSERT_LT(pvm_now_ms(), deadline);
		}
		status = pvm_target_stop(&self->t);
		ASSERT_TRUE(WIFEXITED(status));
		ASSERT_EQ(0, WEXITSTATUS(status));
		targets++;
	}
	TH_LOG("%ld targets; full %ld partial %ld efault %ld", targets,
	       self->full, self->partial, self->efault);
	ASSERT_GT(targets, 0);
}

TEST_F_TIMEOUT(stress, thp_churn, 60)
{
	const char *skip = start_large(_metadata, self, THP);

	if (skip)
		SKIP(return, "%s", skip);
	race(_metadata, self, churn_thp);
}

TEST_F_TIMEOUT(stress, thp_fork, 60)
{
	const char *skip = start_large(_metadata, self, THP);

	if (skip)
		SKIP(return, "%s", skip);
	fork_case(_metadata, self);
}

TEST_F_TIMEOUT(stress, hugetlb_munmap, 60)
{
	const char *skip = start_large(_metadata, self, HUGETLB);

	if (skip)
		SKIP(return, "%s", skip);
	race(_metadata, self, churn_munmap);
}

TEST_F_TIMEOUT(stress, hugetlb_fork, 60)
{
	const char *skip = start_large(_metadata, self, HUGETLB);

	if (skip)
		SKIP(return, "%s", skip);
	fork_case(_metadata, self);
}

TEST_HARNESS_MAIN
