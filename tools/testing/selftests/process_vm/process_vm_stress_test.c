// SPDX-License-Identifier: GPL-2.0
/*
 * Robustness of process_vm_readv(2)/process_vm_writev(2) against a target
 * that changes its address space during the copy: munmap, mremap,
 * mprotect, fork and exit.  Each test loops for a bounded time and accepts
 * only a full count, a partial count, EFAULT or (exit) ESRCH, checks that
 * the data that was copied is sane, and relies on the harness timeout to
 * catch hangs.
 */
#define _GNU_SOURCE
#include "process_vm_util.h"

#include "../kselftest_harness.h"

#define SEED_R		0x6666
#define NPAGES		16
#define DURATION_MS	1000

FIXTURE(stress) {
	struct pvm_target t;
	uint8_t *region;	/* at the same address in the target */
	uint8_t *spare;		/* mremap() destination in the target */
	uint8_t *local;
	size_t len;
	bool write;
	long full, partial, efault, esrch;
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

FIXTURE_SETUP(stress)
{
	self->t.pid = -1;
	self->write = variant->write;
	self->len = NPAGES * PVM_PAGE;
	self->region = pvm_map_anon(self->len);
	ASSERT_TRUE(self->region != NULL);
	self->spare = pvm_map_anon(self->len);
	ASSERT_TRUE(self->spare != NULL);
	self->local = pvm_map_anon(self->len);
	ASSERT_TRUE(self->local != NULL);
	/* the pattern is in place before the target exists */
	pvm_fill(self->region, self->len, SEED_R);
}

FIXTURE_TEARDOWN(stress)
{
	pvm_target_kill(&self->t);
	munmap(self->region, self->len);
	munmap(self->spare, self->len);
	munmap(self->local, self->len);
}

/*
 * One access of the whole region.  A write stores the region's own
 * pattern, so the content stays defined.  @zero_ok: a read may also see
 * zero bytes (a fresh mapping not filled yet).
 */
static void access_once(struct __test_metadata *_metadata,
			FIXTURE_DATA(stress) *self, pid_t pid, bool zero_ok)
{
	long ret;
	size_t i;

	if (self->write)
		pvm_fill(self->local, self->len, SEED_R);
	else
		memset(self->local, 0xa5, self->len);
	ret = pvm_res(pvm_rw1(self->write, pid, self->local,
			      (unsigned long)self->region, self->len));
	if (ret == -EFAULT) {
		self->efault++;
		return;
	}
	if (ret == -ESRCH) {
		self->esrch++;
		return;
	}
	if (ret == (long)self->len)
		self->full++;
	else if (ret > 0 && ret < (long)self->len)
		self->partial++;
	else
		ASSERT_EQ(self->len, ret);
	if (self->write)
		return;
	for (i = 0; i < (size_t)ret; i++) {
		uint8_t c = self->local[i], want = pvm_pat(SEED_R, i);

		if (c == want || (zero_ok && !c))
			continue;
		TH_LOG("byte %zu of %ld is %#x", i, ret, c);
		ASSERT_EQ(want, c);
	}
	/* bytes beyond the count are untouched */
	ASSERT_EQ(-1, pvm_check_byte(self->local + ret, self->len - ret,
				     0xa5));
}

/* Loop access_once() while the target runs @churn for DURATION_MS */
static void race(struct __test_metadata *_metadata, FIXTURE_DATA(stress) *self,
		 pvm_fn churn, bool zero_ok)
{
	long long end;
	long rounds;

	ASSERT_EQ(0, pvm_target_start(&self->t, NULL, 0, 0, 0));
	ASSERT_EQ(0, pvm_target_send(&self->t, churn,
				     (unsigned long)self->region,
				     (unsigned long)self->spare, self->len));
	end = pvm_now_ms() + DURATION_MS;
	while (pvm_now_ms() < end)
		access_once(_metadata, self, self->t.pid, zero_ok);
	rounds = pvm_target_recv(&self->t);
	TH_LOG("%ld target rounds; full %ld partial %ld efault %ld", rounds,
	       self->full, self->partial, self->efault);
	ASSERT_GT(rounds, 0);
	ASSERT_EQ(0, self->esrch);
	/* the content at rest is the pattern */
	ASSERT_EQ(-1, pvm_target_call(&self->t, pvm_cmd_check,
				      (unsigned long)self->region, self->len,
				      SEED_R));
}

/* Churners run in the target until DURATION_MS elapsed; return rounds */
static long churn_munmap(struct pvm_target *t, unsigned long addr,
			 unsigned long spare, unsigned long len)
{
	long long end = pvm_now_ms() + DURATION_MS;
	long rounds;

	for (rounds = 0; pvm_now_ms() < end; rounds++) {
		if (munmap((void *)addr, len))
			return -errno;
		if (mmap((void *)addr, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
		    (void *)addr)
			return -errno;
		pvm_fill((void *)addr, len, SEED_R);
	}
	return rounds;
}

static long churn_mremap(struct pvm_target *t, unsigned long addr,
			 unsigned long spare, unsigned long len)
{
	long long end = pvm_now_ms() + DURATION_MS;
	long rounds;

	for (rounds = 0; pvm_now_ms() < end; rounds++) {
		/* moves the pages (and their content) away and back */
		if (mremap((void *)addr, len, len, MREMAP_MAYMOVE |
			   MREMAP_FIXED, (void *)spare) != (void *)spare)
			return -errno;
		if (mremap((void *)spare, len, len, MREMAP_MAYMOVE |
			   MREMAP_FIXED, (void *)addr) != (void *)addr)
			return -errno;
	}
	return rounds;
}

static long churn_mprotect(struct pvm_target *t, unsigned long addr,
			   unsigned long spare, unsigned long len)
{
	long long end = pvm_now_ms() + DURATION_MS;
	size_t half = len / 2 & ~(PVM_PAGE - 1);
	long rounds;

	for (rounds = 0; pvm_now_ms() < end; rounds++) {
		if (mprotect((void *)addr, len, PROT_NONE) ||
		    mprotect((void *)addr, half, PROT_READ) ||
		    mprotect((void *)addr, len, PROT_READ | PROT_WRITE))
			return -errno;
	}
	return rounds;
}

static long churn_fork(struct pvm_target *t, unsigned long addr,
		       unsigned long spare, unsigned long len)
{
	long long end = pvm_now_ms() + DURATION_MS;
	long rounds;
	int status;
	pid_t pid;

	for (rounds = 0; pvm_now_ms() < end; rounds++) {
		/* the region is shared copy-on-write with the child */
		pid = fork();
		if (pid < 0)
			return -errno;
		if (pid == 0) {
			if (pvm_check((void *)addr, len, SEED_R) != -1)
				_exit(1);
			_exit(0);
		}
		/* and the parent writes it while the child may still run */
		pvm_fill((void *)addr, PVM_PAGE, SEED_R);
		if (waitpid(pid, &status, 0) != pid)
			return -errno;
		/* the child saw the pattern throughout */
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			return -EBADMSG;
	}
	return rounds;
}

TEST_F_TIMEOUT(stress, munmap, 60)
{
	race(_metadata, self, churn_munmap, true);
}

TEST_F_TIMEOUT(stress, mremap, 60)
{
	race(_metadata, self, churn_mremap, false);
}

TEST_F_TIMEOUT(stress, mprotect, 60)
{
	race(_metadata, self, churn_mprotect, false);
}

TEST_F_TIMEOUT(stress, fork, 60)
{
	race(_metadata, self, churn_fork, false);
	/* the region never goes away: every access is complete */
	ASSERT_EQ(0, self->partial);
	ASSERT_EQ(0, self->efault);
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
			access_once(_metadata, self, self->t.pid, false);
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

TEST_HARNESS_MAIN
