// SPDX-License-Identifier: GPL-2.0
/*
 * pvm-callcost: time per process_vm_readv() call along each of its paths,
 * from the earliest error return to a full copy, with the calling process
 * as its own target.  Under QEMU with -icount shift=0 one nanosecond of
 * guest time is one guest instruction, so the output is a per-path
 * instruction profile of the syscall that can be compared between kernels
 * (scripts/pvm/vm-run --icount).  On hardware it is plain timing.
 *
 * Each timed loop is bracketed by two marker no-ops, which a QEMU plugin
 * (scripts/pvm/insnprof.c) uses to split the instructions of that loop by
 * kernel function; the row number printed first names the loop.
 */
#define _GNU_SOURCE
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "pvm_args.h"

#define PAGE		4096
#define BIG		(4 << 20)

static alignas(PAGE) char buf[2 * PAGE];
static alignas(PAGE) char big[BIG];

/*
 * Markers for the insnprof plugin: "nopl 0x50564d00(%rax)" opens a window,
 * "nopl 0x50564d01(%rax)" closes it.  No-ops that nothing else emits.
 */
#if defined(__x86_64__) || defined(__i386__)
#define MARK(n)	asm volatile(".byte 0x0f, 0x1f, 0x80, " #n ", 0x4d, 0x56, 0x50" ::: "memory")
#else
#define MARK(n)	do { } while (0)
#endif

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static long readv_raw(pid_t pid, struct iovec *l, struct iovec *r,
		      unsigned long flags)
{
	return syscall(SYS_process_vm_readv, pid, l, 1, r, 1, flags);
}

/* Run one call shape @n times after a warm-up; print ns per call. */
static void measure(const char *what, pid_t pid, struct iovec *l,
		    struct iovec *r, unsigned long flags, long expect, int n)
{
	static int row;
	double t0;
	int i;

	for (i = 0; i < 100; i++)
		readv_raw(pid, l, r, flags);
	row++;
	t0 = now_ns();
	MARK(0x00);
	for (i = 0; i < n; i++) {
		if (readv_raw(pid, l, r, flags) != expect) {
			printf("%-36s unexpected result\n", what);
			exit(1);
		}
	}
	MARK(0x01);
	printf("%2d %-36s %10.1f ns/call (%d calls)\n", row, what,
	       (now_ns() - t0) / n, n);
}

static const char usage[] =
	"usage: pvm-callcost\n"
	"Prints ns per process_vm_readv() call along each of its paths, the\n"
	"calling process its own target; no options.  Exit status 1 if a call\n"
	"returned what it should not, 2 on a usage error.\n";

int main(int argc, char **argv)
{
	struct iovec one = { buf, 1 }, none = { buf, 0 }, page = { buf, PAGE };
	struct iovec src = { buf + PAGE, 1 }, null = { NULL, 1 };
	struct iovec whole = { big, BIG };
	pid_t me = getpid();
	size_t i;

	pvm_no_args(argc, argv, usage);
	for (i = 0; i < BIG; i += PAGE)
		big[i] = 1;
	measure("flags=1<<2 (EINVAL)", me, &one, &src, 1UL << 2, -1, 20000);
	measure("local length 0", me, &none, &src, 0, 0, 20000);
	measure("remote length 0", me, &one, &none, 0, 0, 20000);
	measure("pid -1 (ESRCH)", -1, &one, &src, 0, -1, 20000);
	measure("remote NULL (EFAULT)", me, &one, &null, 0, -1, 20000);
	measure("1 byte", me, &one, &src, 0, 1, 20000);
	measure("4 KiB of a 4 MiB remote iovec", me, &page, &whole, 0, PAGE,
		200);
	whole.iov_len = PAGE;
	measure("4 KiB of a 4 KiB remote iovec", me, &page, &whole, 0, PAGE,
		2000);
	return 0;
}
