// SPDX-License-Identifier: GPL-2.0
/*
 * pvm-repcost: what a rep string instruction costs on this CPU, natively:
 * a start-up cost per instruction and a cost per iteration, for the two
 * the kernel runs on the process_vm paths: rep stosq (a stack array
 * cleared by CONFIG_INIT_STACK_ALL_ZERO) and rep movsq (the copy on a CPU
 * without ERMS/FSRM, as the calibrated -icount model runs it).
 *
 * Each is timed at several counts (hot, 4 KiB aligned buffers; the
 * minimum of the repeats, less an empty call's time) and split into
 * t(n) = start + n * iteration.  Under QEMU -icount a rep instruction
 * costs one count per iteration and one to start;
 * scripts/pvm/calibrate-report uses these figures to price the starts
 * that the insnprof plugin counts.  x86-64 only: elsewhere it exits
 * KSFT_SKIP (4).
 *
 *	pvm-repcost [--repeats N] [--csv FILE]
 *
 * CSV rows: op,start_ns,iteration_ns.
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pvm_args.h"

#define MAX_QWORDS	512

static const unsigned long counts[] = { 8, 16, 32, 64, 128, 256, 512 };
#define NCOUNTS		(sizeof(counts) / sizeof(counts[0]))
#define SHORT		1	/* counts[SHORT] is 16 */

static unsigned long src[MAX_QWORDS] __attribute__((aligned(4096)));
static unsigned long dst[MAX_QWORDS] __attribute__((aligned(4096)));

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

#ifdef __x86_64__
static __attribute__((noinline)) void op_stos(unsigned long n)
{
	void *d = dst;

	asm volatile("rep stosq" : "+c"(n), "+D"(d) : "a"(0UL) : "memory");
}

static __attribute__((noinline)) void op_movs(unsigned long n)
{
	void *d = dst, *s = src;

	asm volatile("rep movsq" : "+c"(n), "+D"(d), "+S"(s) : : "memory");
}
#endif

static __attribute__((noinline)) void op_none(unsigned long n)
{
	asm volatile("" : : "r"(n) : "memory");
}

/* ns per call of @op(@n): the minimum over @repeats loops of @iters. */
static double time_op(void (*op)(unsigned long), unsigned long n,
		      int repeats, long iters)
{
	double best = 1e30;
	int r;

	for (r = 0; r < repeats; r++) {
		double t0 = now_ns();
		long i;

		for (i = 0; i < iters; i++)
			op(n);
		t0 = (now_ns() - t0) / iters;
		if (t0 < best)
			best = t0;
	}
	return best;
}

/*
 * Short and long counts cost differently per iteration, so each figure is
 * taken where the kernel uses it: the cost per iteration from the two
 * longest counts (a page copy), the start-up cost from a 16-qword one (a
 * 128-byte stack array) less its iterations at that cost.
 */
static void measure(const char *name, void (*op)(unsigned long),
		    int repeats, double empty, FILE *csv)
{
	double t[NCOUNTS], start, iter;
	unsigned int i, n = NCOUNTS;

	printf("%-10s", name);
	for (i = 0; i < n; i++) {
		t[i] = time_op(op, counts[i], repeats, 20000) - empty;
		printf(" %lu:%.2f", counts[i], t[i]);
	}
	iter = (t[n - 1] - t[n - 2]) / (counts[n - 1] - counts[n - 2]);
	start = t[SHORT] - counts[SHORT] * iter;
	printf(" ns\n%-10s %.2f ns per start, %.4f ns per iteration\n", "",
	       start, iter);
	if (csv)
		fprintf(csv, "%s,%.3f,%.5f\n", name, start, iter);
}

static const char usage[] =
	"usage: pvm-repcost [--repeats N] [--csv FILE] [--help]\n"
	"  --repeats N  timed loops per count, minimum reported (default 9,\n"
	"               at most 1000)\n"
	"  --csv FILE   also write op,start_ns,iteration_ns rows\n"
	"x86-64 only (exit status 4 elsewhere); 2 on a usage error.\n";

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "repeats", 1, NULL, 'r' }, { "csv", 1, NULL, 'c' },
		{ "help", 0, NULL, 'h' }, { }
	};
	const char *csv_path = NULL;
	int repeats = 9, c;
	FILE *csv = NULL;
	double empty;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'r':
			repeats = pvm_arg_long("--repeats", optarg, 1, 1000);
			break;
		case 'c':
			csv_path = optarg;
			break;
		case 'h':
			pvm_usage(usage, 0);
		default:
			pvm_usage(usage, PVM_EXIT_USAGE);
		}
	}
	pvm_args_done(argc, argv, usage);
#ifndef __x86_64__
	printf("SKIP: pvm-repcost: x86-64 only\n");
	return KSFT_SKIP;
#else
	if (csv_path) {
		csv = fopen(csv_path, "w");
		if (!csv) {
			perror(csv_path);
			return 1;
		}
		fprintf(csv, "op,start_ns,iteration_ns\n");
	}
	memset(src, 1, sizeof(src));
	empty = time_op(op_none, 0, repeats, 20000);
	printf("pvm-repcost: natively, minimum of %d repeats, counts %lu-%lu\n",
	       repeats, counts[0], counts[NCOUNTS - 1]);
	measure("rep stosq", op_stos, repeats, empty, csv);
	measure("rep movsq", op_movs, repeats, empty, csv);
	if (csv && fclose(csv)) {
		perror(csv_path);
		return 1;
	}
	return 0;
#endif
}
