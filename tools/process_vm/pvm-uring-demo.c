// SPDX-License-Identifier: GPL-2.0
/*
 * pvm-uring-demo: a copy out of another process that completes in the
 * background through IORING_OP_PROCESS_VM_READV while this thread keeps
 * working.  The target's pages are behind userfaultfd and fault in slowly
 * (by default 4 faults of 300 ms); the submit returns at once, the thread
 * counts and prints progress ticks until the completion arrives, and then
 * checks every byte.  For comparison, process_vm_readv() of as many fresh
 * pages blocks the thread for the whole time.
 *
 *   usage: pvm-uring-demo [FAULTS [DELAY_MS]]
 *
 * Exits 0 when the data is right, 1 otherwise, 2 on a usage error and
 * KSFT_SKIP (4) when the kernel or the privileges do not allow the scene,
 * which it then says.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/uio.h>

#include "pvm_args.h"
#include "pvm_uring.h"
#include "pvm_target.h"

#define TICK_MS		100

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Check @buf against the target's pattern at @rv; print the verdict. */
static int check(const char *what, long res, const char *buf,
		 const struct iovec *rv, const struct pvm_target *t)
{
	size_t off;

	if (res != (long)rv->iov_len) {
		printf("FAIL %s: %ld (%s), expected %zu\n", what, res,
		       res < 0 ? strerror(-res) : "short", rv->iov_len);
		return 1;
	}
	off = pvm_pattern_check(buf, (uintptr_t)rv->iov_base, rv->iov_len,
				t->seed);
	if (off < rv->iov_len) {
		printf("FAIL %s: byte %zu differs\n", what, off);
		return 1;
	}
	printf("     %s: %ld bytes, every byte verified\n", what, res);
	return 0;
}

static bool is_prime(unsigned long n)
{
	unsigned long d;

	for (d = 2; d * d <= n; d++)
		if (n % d == 0)
			return false;
	return n >= 2;
}

/*
 * Work (count primes) with a tick every TICK_MS until the CQE arrives;
 * return it.
 */
static struct io_uring_cqe *work_until_done(struct io_uring *ring,
					    double t0, int *ticks)
{
	struct io_uring_cqe *cqe = NULL;
	unsigned long n = 0, primes = 0;
	double next = t0 + TICK_MS, t;

	while (io_uring_peek_cqe(ring, &cqe)) {
		primes += is_prime(n++);
		if (n % 256)
			continue;
		t = now_ms();
		if (t >= next) {
			printf("     [%5.0f ms] main thread: tick %d, %lu primes below %lu\n",
			       t - t0, ++*ticks, primes, n);
			next += TICK_MS;
		}
	}
	return cqe;
}

static int scene_uring(struct io_uring *ring, struct pvm_target *t,
		       struct iovec *lv, struct iovec *rv)
{
	struct io_uring_cqe *cqe;
	double t0, t1;
	int ticks = 0, res, ret;

	pvm_uring_prep_readv(io_uring_get_sqe(ring), t->pidfd, lv, 1, rv, 1,
			     0);
	t0 = now_ms();
	ret = io_uring_submit(ring);
	t1 = now_ms();
	if (ret != 1) {
		printf("FAIL io_uring_submit: %d\n", ret);
		return 1;
	}
	printf("     io_uring_submit() returned after %.2f ms; the copy goes on in io-wq\n",
	       t1 - t0);
	cqe = work_until_done(ring, t0, &ticks);
	res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	printf("     completion after %.0f ms, %d ticks of work meanwhile\n",
	       now_ms() - t0, ticks);
	return check("IORING_OP_PROCESS_VM_READV", res, lv->iov_base, rv, t);
}

static int scene_sync(struct pvm_target *t, struct iovec *lv,
		      struct iovec *rv)
{
	double t0 = now_ms();
	long res = process_vm_readv(t->pid, lv, 1, rv, 1, 0);

	printf("     for comparison, process_vm_readv() blocked this thread for %.0f ms\n",
	       now_ms() - t0);
	return check("process_vm_readv", res < 0 ? -errno : res,
		     lv->iov_base, rv, t);
}

static const char usage[] =
	"usage: pvm-uring-demo [FAULTS [DELAY_MS]]\n"
	"  FAULTS    pages of the target behind userfaultfd (1 to 256, default 4)\n"
	"  DELAY_MS  how late each fault is answered (0 to 60000, default 300)\n"
	"Exit status: 0 when the data is right, 1 if not, 2 on a usage error,\n"
	"4 when the kernel or the privileges do not allow the scene.\n";

int main(int argc, char **argv)
{
	int faults = 4, delay = 300, err, fails;
	struct pvm_target t;
	struct io_uring ring;
	struct iovec lv, rv;
	size_t len;
	char *buf;

	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")))
		pvm_usage(usage, 0);
	if (argc > 3 || (argc > 1 && argv[1][0] == '-' && argv[1][1])) {
		pvm_extra_arg(argv[argc > 3 ? 3 : 1], usage);
	}
	if (argc > 1)
		faults = pvm_arg_long("FAULTS", argv[1], 1, 256);
	if (argc > 2)
		delay = pvm_arg_long("DELAY_MS", argv[2], 0, 60000);
	len = faults * PVM_PAGE;
	setvbuf(stdout, NULL, _IOLBF, 0);
	err = pvm_uffd_available();
	if (err) {
		printf("SKIP: userfaultfd: %s (needs root or vm.unprivileged_userfaultfd=1)\n",
		       strerror(-err));
		return KSFT_SKIP;
	}
	err = pvm_target_start(&t, 2 * len, 0x5eed, delay);
	if (!err)
		err = io_uring_queue_init(4, &ring, 0);
	if (err) {
		printf("FAIL setup: %s\n", strerror(-err));
		return 1;
	}
	if (!pvm_uring_supported(&ring)) {
		printf("SKIP: this kernel has no io_uring process_vm opcodes\n");
		pvm_target_stop(&t);
		io_uring_queue_exit(&ring);
		return KSFT_SKIP;
	}
	printf("     target %d: %d pages behind userfaultfd, each fault answered after %d ms\n",
	       t.pid, faults, delay);
	buf = aligned_alloc(PVM_PAGE, len);
	if (!buf)
		return 1;
	lv = (struct iovec){ buf, len };
	rv = (struct iovec){ (void *)t.addr, len };
	memset(buf, 0, len);
	fails = scene_uring(&ring, &t, &lv, &rv);
	rv.iov_base = (char *)t.addr + len;
	memset(buf, 0, len);
	fails += scene_sync(&t, &lv, &rv);
	io_uring_queue_exit(&ring);
	pvm_target_stop(&t);
	free(buf);
	return fails ? 1 : 0;
}
