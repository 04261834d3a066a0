// SPDX-License-Identifier: GPL-2.0
/*
 * Argument fuzzing for process_vm_readv/process_vm_writev: random pids,
 * flags, iovec arrays, bases and lengths for a bounded time (2 s, or
 * PVM_FUZZ_SECONDS).  Every call must return a byte count no larger than
 * what was asked for, or one of the errors the syscalls are documented to
 * return; the kernel must not oops, leak pins or hang (the debug kernel
 * run in `make stress` watches for that).
 *
 * Local buffers only ever point into a scratch area or at invalid
 * addresses, and writes only go to a forked target's scratch area, so the
 * fuzzer cannot corrupt itself.
 */
#define _GNU_SOURCE
#include "process_vm_util.h"
#include "../kselftest_harness.h"

#define SCRATCH_PAGES	32
#define MAX_IOV		(IOV_MAX + 8)
/* The kernel's on-stack iovecs (UIO_FASTIOV); longer arrays are allocated. */
#define FAST_IOV	8
#define LONG_IOV	64	/* the longest valid array made */

struct fuzz {
	char *scratch;		/* SCRATCH_PAGES, a hole, read-only, PROT_NONE */
	size_t size;
	pid_t target;		/* forked copy of us, sleeping */
	uint64_t rng;
	struct iovec liov[MAX_IOV], riov[MAX_IOV];
	unsigned long calls, copied;
};

static uint64_t rnd(struct fuzz *f)
{
	f->rng ^= f->rng << 13;
	f->rng ^= f->rng >> 7;
	f->rng ^= f->rng << 17;
	return f->rng;
}

static uint64_t pick(struct fuzz *f, uint64_t n)
{
	return rnd(f) % n;
}

/* An address: mostly inside the scratch area, sometimes anything but. */
static void *fuzz_addr(struct fuzz *f)
{
	switch (pick(f, 8)) {
	case 0:
		return NULL;
	case 1:
		return (void *)(uintptr_t)rnd(f);
	case 2:
		return (void *)(uintptr_t)(PVM_IS_64BIT ? 0xffff800000000000ULL :
					   0xc0000000UL);
	case 3:
		return (void *)(uintptr_t)(-(uintptr_t)pick(f, 3 * PVM_PAGE));
	default:
		return f->scratch + pick(f, f->size);
	}
}

static size_t fuzz_len(struct fuzz *f)
{
	switch (pick(f, 8)) {
	case 0:
		return 0;
	case 1:
		return (size_t)rnd(f);
	case 2:
		return (size_t)SSIZE_MAX + 1 + pick(f, 2);
	case 3:
		return PVM_PAGE * pick(f, 4) + pick(f, 2) - pick(f, 2);
	default:
		return pick(f, 3 * PVM_PAGE);
	}
}

/* An iovec array: length, and a pointer that may itself be bad. */
static struct iovec *fuzz_iov(struct fuzz *f, struct iovec *iov,
			      unsigned long *cnt)
{
	unsigned long i;

	/*
	 * Now and then more than UIO_FASTIOV entries that all pass
	 * import_iovec()'s checks, so that the kernel's allocated iovec
	 * arrays are used (and freed) too: random entries rarely all pass.
	 */
	if (!pick(f, 8)) {
		*cnt = FAST_IOV + 1 + pick(f, LONG_IOV - FAST_IOV);
		for (i = 0; i < *cnt; i++) {
			iov[i].iov_base = f->scratch + pick(f, f->size);
			iov[i].iov_len = pick(f, 64);
		}
		return iov;
	}
	*cnt = pick(f, 4) ? pick(f, 9) : pick(f, MAX_IOV + 1);
	for (i = 0; i < *cnt; i++) {
		iov[i].iov_base = fuzz_addr(f);
		iov[i].iov_len = fuzz_len(f);
	}
	switch (pick(f, 16)) {
	case 0:
		return NULL;
	case 1:
		return (struct iovec *)fuzz_addr(f);
	default:
		return iov;
	}
}

static pid_t fuzz_pid(struct fuzz *f)
{
	static const pid_t odd[] = { 0, -1, 1, 2, INT_MAX, INT_MIN };

	switch (pick(f, 6)) {
	case 0:
		return odd[pick(f, ARRAY_SIZE(odd))];
	case 1:
		return getpid();
	case 2:
		return (pid_t)rnd(f);
	default:
		return f->target;
	}
}

static unsigned long fuzz_flags(struct fuzz *f)
{
	switch (pick(f, 8)) {
	case 0:
		return 1UL << pick(f, 8 * sizeof(long));
	case 1:
		return pick(f, 4);
	default:
		return 0;
	}
}

static bool fuzz_errno_ok(int err)
{
	switch (err) {
	case EINVAL: case EFAULT: case ESRCH: case EPERM: case EBADF:
	case EAGAIN: case ENOMEM:
		return true;
	}
	return false;
}

static size_t fuzz_local_total(const struct iovec *iov, unsigned long cnt)
{
	size_t total = 0;
	unsigned long i;

	/* Saturate: the kernel rejects or clamps what does not fit. */
	for (i = 0; i < cnt && i < MAX_IOV; i++)
		if (__builtin_add_overflow(total, iov[i].iov_len, &total))
			return SIZE_MAX;
	return total;
}

FIXTURE(fuzz) {
	struct fuzz f;
};

FIXTURE_SETUP(fuzz)
{
	struct fuzz *f = &self->f;
	char *p;

	f->size = (SCRATCH_PAGES + 3) * PVM_PAGE;
	p = mmap(NULL, f->size, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(p, MAP_FAILED);
	memset(p, 0x5a, f->size);
	/* Tail: a hole, a read-only page and a PROT_NONE page. */
	ASSERT_EQ(munmap(p + SCRATCH_PAGES * PVM_PAGE, PVM_PAGE), 0);
	ASSERT_EQ(mprotect(p + (SCRATCH_PAGES + 1) * PVM_PAGE, PVM_PAGE,
			   PROT_READ), 0);
	ASSERT_EQ(mprotect(p + (SCRATCH_PAGES + 2) * PVM_PAGE, PVM_PAGE,
			   PROT_NONE), 0);
	f->scratch = p;
	if (getenv("PVM_FUZZ_SEED"))
		f->rng = strtoull(getenv("PVM_FUZZ_SEED"), NULL, 0);
	else
		f->rng = (uint64_t)time(NULL) * 2654435761u | 1;
	TH_LOG("seed %#llx", (unsigned long long)f->rng);
	f->target = fork();
	ASSERT_GE(f->target, 0);
	if (!f->target) {
		for (;;)
			pause();
	}
}

FIXTURE_TEARDOWN(fuzz)
{
	kill(self->f.target, SIGKILL);
	waitpid(self->f.target, NULL, 0);
	munmap(self->f.scratch, self->f.size);
}

TEST_F_TIMEOUT(fuzz, random_arguments, 600)
{
	const char *env = getenv("PVM_FUZZ_SECONDS");
	time_t end = time(NULL) + (env ? atoi(env) : 2);
	struct fuzz *f = &self->f;

	while (time(NULL) < end) {
		unsigned long lcnt, rcnt, flags = fuzz_flags(f);
		struct iovec *l = fuzz_iov(f, f->liov, &lcnt);
		struct iovec *r = fuzz_iov(f, f->riov, &rcnt);
		pid_t pid = fuzz_pid(f);
		/* Never write into ourselves: only the target is fair game. */
		bool write = pid != getpid() && pick(f, 2);
		size_t want = l == f->liov ? fuzz_local_total(l, lcnt) : SIZE_MAX;
		ssize_t ret;

		if (write && pid != f->target)
			pid = f->target;
		ret = pvm_rwf(write, pid, l, lcnt, r, rcnt, flags);
		f->calls++;
		if (ret < 0) {
			ASSERT_TRUE(fuzz_errno_ok(errno)) {
				TH_LOG("call %lu: unexpected errno %d", f->calls,
				       errno);
			}
			continue;
		}
		ASSERT_LE((size_t)ret, want);
		ASSERT_LE((size_t)ret, PVM_MAX_RW);
		f->copied += ret;
	}
	/* The target must have survived: we only wrote its scratch area. */
	ASSERT_EQ(kill(f->target, 0), 0);
	TH_LOG("%lu calls, %lu bytes copied", f->calls, f->copied);
	ASSERT_GT(f->calls, 0);
}

TEST_HARNESS_MAIN
