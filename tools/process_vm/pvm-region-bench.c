// SPDX-License-Identifier: GPL-2.0
/*
 * pvm-region-bench: the cost of one read of another process's memory,
 * through process_vm_readv() and through a region fd (process_vm_export),
 * unpinned and PIN, side by side in one run, for 4 KiB pages and THP.
 *
 * The owner (this process) exports its buffer twice and forks a reader
 * that inherits both files.  For each size the reader times the same bytes
 * read into the same buffer by the three methods, interleaved, and prints
 * the median time per call of --repeats timed loops and the ratio to the
 * CMA read.  Under QEMU the times are the guest's (TCG) or instruction
 * counts (-icount): compare the rows with each other, never with hardware.
 *
 * Exit status: 0, 1 when a read returned the wrong count, 2 on a usage
 * error, 4 (KSFT_SKIP) on a kernel without regions.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* This tree's uapi header: the regions are newer than any installed one. */
#include "../../include/uapi/linux/process_vm.h"
#include "pvm_args.h"

#ifndef __NR_process_vm_export
#define __NR_process_vm_export	472
#endif

#define MAX_SIZE	(16UL << 20)
#define THP_SIZE	(2UL << 20)
#define MAX_REPEATS	31

enum { CMA, REGION, REGION_PIN, NR_METHODS };

static const char *const method_name[NR_METHODS] = {
	"cma", "region", "region-pin",
};

static struct {
	int repeats;
	double target_ms;
} opt = { 5, 5 };

static const char usage[] =
	"usage: pvm-region-bench [--repeats N] [--target-ms MS]\n"
	"Times one read of another process's memory by process_vm_readv(), by\n"
	"pread() of a region fd and of a PIN region fd, 4 KiB to 16 MiB, on\n"
	"4 KiB pages and on THP; prints the median ns per call of N timed loops\n"
	"(default 5) of about MS milliseconds each (default 5) and the ratio to\n"
	"process_vm_readv().  Exit 1 on a wrong read, 2 on a usage error, 4 if\n"
	"the kernel has no regions.\n";

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

struct target {
	pid_t owner;
	char *buf;
	int fd[NR_METHODS];	/* region fds; fd[CMA] unused */
};

static void read_once(const struct target *t, int m, char *dst, size_t size)
{
	struct iovec local = { dst, size }, remote = { t->buf, size };
	ssize_t n;

	if (m == CMA)
		n = process_vm_readv(t->owner, &local, 1, &remote, 1, 0);
	else
		n = pread(t->fd[m], dst, size, 0);
	if (n != (ssize_t)size) {
		printf("%s: read %zd of %zu bytes: %s\n", method_name[m], n,
		       size, n < 0 ? strerror(errno) : "short");
		exit(1);
	}
}

static double loop_ns(const struct target *t, int m, char *dst, size_t size,
		      long iters)
{
	double t0 = now_ns();
	long i;

	for (i = 0; i < iters; i++)
		read_once(t, m, dst, size);
	return (now_ns() - t0) / iters;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median ns per call of each method at @size, loops interleaved. */
static void measure(const struct target *t, char *dst, size_t size,
		    double med[NR_METHODS])
{
	double ns[NR_METHODS][MAX_REPEATS];
	long iters[NR_METHODS];
	int m, r;

	for (m = 0; m < NR_METHODS; m++) {
		double one = loop_ns(t, m, dst, size, 3);

		iters[m] = opt.target_ms * 1e6 / (one > 1 ? one : 1);
		if (iters[m] < 1)
			iters[m] = 1;
	}
	for (r = 0; r < opt.repeats; r++)
		for (m = 0; m < NR_METHODS; m++)
			ns[m][r] = loop_ns(t, m, dst, size, iters[m]);
	for (m = 0; m < NR_METHODS; m++) {
		qsort(ns[m], opt.repeats, sizeof(double), cmp_double);
		med[m] = ns[m][opt.repeats / 2];
	}
}

static void reader(const struct target *t, const char *kind)
{
	char *dst = aligned_alloc(THP_SIZE, MAX_SIZE);
	double med[NR_METHODS];
	size_t size;
	int m;

	if (!dst)
		exit(1);
	memset(dst, 0, MAX_SIZE);
	for (size = 4096; size <= MAX_SIZE; size *= 4) {
		measure(t, dst, size, med);
		printf("%-4s %6zuK", kind, size >> 10);
		for (m = 0; m < NR_METHODS; m++)
			printf(" %12.0f", med[m]);
		for (m = REGION; m < NR_METHODS; m++)
			printf(" %7.2fx", med[CMA] / med[m]);
		printf("\n");
	}
	free(dst);
}

/* Export @t->buf both ways; 0, or the errno of the export. */
static int export(struct target *t)
{
	struct iovec iov = { t->buf, MAX_SIZE };

	t->fd[REGION] = syscall(__NR_process_vm_export, &iov, 1,
				PROCESS_VM_REGION_READ);
	if (t->fd[REGION] < 0)
		return errno;
	t->fd[REGION_PIN] = syscall(__NR_process_vm_export, &iov, 1,
				    PROCESS_VM_REGION_READ |
				    PROCESS_VM_REGION_PIN);
	return t->fd[REGION_PIN] < 0 ? errno : 0;
}

static int run(const char *kind, bool thp)
{
	struct target t = { .owner = getpid() };
	int err, status;
	pid_t child;

	t.buf = mmap(NULL, MAX_SIZE + THP_SIZE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (t.buf == MAP_FAILED)
		return 1;
	t.buf = (char *)(((unsigned long)t.buf + THP_SIZE - 1) &
			 ~(THP_SIZE - 1));
	madvise(t.buf, MAX_SIZE, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	memset(t.buf, 0x5a, MAX_SIZE);
	err = export(&t);
	if (err) {
		printf("pvm-region-bench: process_vm_export: %s\n",
		       strerror(err));
		return err == ENOSYS ? KSFT_SKIP : 1;
	}
	child = fork();
	if (child < 0)
		return 1;
	if (!child) {
		reader(&t, kind);
		_exit(0);
	}
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status))
		return 1;
	close(t.fd[REGION]);
	close(t.fd[REGION_PIN]);
	munmap(t.buf, MAX_SIZE);
	return WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
	int i, rc;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			pvm_usage(usage, 0);
		if (i + 1 < argc && !strcmp(argv[i], "--repeats"))
			opt.repeats = pvm_arg_long("--repeats", argv[++i], 1,
						   MAX_REPEATS);
		else if (i + 1 < argc && !strcmp(argv[i], "--target-ms"))
			opt.target_ms = pvm_arg_double("--target-ms", argv[++i],
						       0.01, 10000);
		else
			pvm_usage(usage, PVM_EXIT_USAGE);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* The reader is a child: let it attach under Yama's scope 1. */
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	printf("# ns per call, median of %d; ratio: process_vm_readv / method\n",
	       opt.repeats);
	printf("%-4s %7s %12s %12s %12s %8s %8s\n", "mem", "size", "cma",
	       "region", "region-pin", "region", "pin");
	rc = run("4K", false);
	if (!rc)
		rc = run("THP", true);
	return rc;
}
