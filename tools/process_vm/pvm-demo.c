// SPDX-License-Identifier: GPL-2.0
/*
 * pvm-demo: one process reads and writes another's buffers with
 * process_vm_readv(2) and process_vm_writev(2), in several iovec shapes,
 * and checks every byte.  Exits 0 when all shapes moved the right data.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pvm_args.h"

#define PAGE		4096UL
#define AREA		(64 * PAGE)

static int failures;

static unsigned char pattern(size_t i, unsigned int seed)
{
	return (unsigned char)(i * 31 + seed + (i >> 12));
}

static void fill(unsigned char *p, size_t len, size_t base, unsigned int seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = pattern(base + i, seed);
}

/* Compare @len bytes of @p with the pattern at @base; print the result. */
static void check(const char *what, ssize_t got, ssize_t want,
		  const unsigned char *p, size_t len, size_t base,
		  unsigned int seed)
{
	size_t i;

	if (got != want) {
		printf("FAIL %-44s returned %zd (%s), expected %zd\n", what,
		       got, got < 0 ? strerror(errno) : "short", want);
		failures++;
		return;
	}
	for (i = 0; i < len; i++) {
		if (p[i] != pattern(base + i, seed)) {
			printf("FAIL %-44s byte %zu differs\n", what, i);
			failures++;
			return;
		}
	}
	printf("ok   %-44s %zd bytes\n", what, got);
}

static struct iovec iov(void *base, size_t len)
{
	return (struct iovec){ .iov_base = base, .iov_len = len };
}

static const char usage[] =
	"usage: pvm-demo\n"
	"Reads and writes a child's buffers in several iovec shapes and checks\n"
	"every byte; no options.  Exit status 0 when all shapes moved the right\n"
	"data, 1 if not, 2 on a usage or setup error.\n";

int main(int argc, char **argv)
{
	unsigned char *remote, *local;
	int to_child[2], from_child[2];
	struct iovec l[4], r[4];
	int status, ok;
	pid_t pid;
	ssize_t n;
	char c;

	pvm_no_args(argc, argv, usage);
	/* The child's copy of this mapping is the remote side. */
	remote = mmap(NULL, AREA, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	local = malloc(AREA);
	if (remote == MAP_FAILED || !local || pipe(to_child) || pipe(from_child))
		return perror("setup"), 2;
	pid = fork();
	if (pid < 0)
		return perror("fork"), 2;
	if (!pid) {
		fill(remote, AREA, 0, 1);
		munmap(remote + 40 * PAGE, PAGE);	/* a hole */
		if (write(from_child[1], "r", 1) != 1 ||
		    read(to_child[0], &c, 1) != 1)
			_exit(2);
		/* The parent wrote: check what landed, then report. */
		for (size_t i = 0; i < 10 * PAGE; i++)
			if (remote[PAGE + 100 + i] != pattern(i, 2))
				_exit(1);
		_exit(0);
	}
	if (read(from_child[0], &c, 1) != 1)
		return 2;
	printf("pvm-demo: process %d reads and writes process %d\n",
	       getpid(), pid);

	r[0] = iov(remote, 16 * PAGE);
	l[0] = iov(local, 16 * PAGE);
	n = process_vm_readv(pid, l, 1, r, 1, 0);
	check("readv 1:1, 64 KiB", n, 16 * PAGE, local, 16 * PAGE, 0, 1);

	/* One remote range scattered over odd-sized local pieces. */
	r[0] = iov(remote + 3, 3 * PAGE);
	l[0] = iov(local, 5);
	l[1] = iov(local + 100, PAGE - 1);
	l[2] = iov(local + 2 * PAGE, 2 * PAGE - 4);
	n = process_vm_readv(pid, l, 3, r, 1, 0);
	check("readv 1:3 scatter, odd sizes", n, 3 * PAGE, local + 2 * PAGE,
	      2 * PAGE - 4, 3 + 5 + PAGE - 1, 1);

	/* Several page-straddling remote ranges gathered into one buffer. */
	r[0] = iov(remote + PAGE - 7, 14);
	r[1] = iov(NULL, 0);
	r[2] = iov(remote + 5 * PAGE - 1, 2);
	l[0] = iov(local, 16);
	n = process_vm_readv(pid, l, 1, r, 3, 0);
	check("readv 3:1 gather, straddling, empty iovec", n, 16, local,
	      14, PAGE - 7, 1);
	check("  ... the last remote range", n, 16, local + 14, 2,
	      5 * PAGE - 1, 1);

	/* A remote range that runs into an unmapped page: partial count. */
	r[0] = iov(remote + 38 * PAGE, 4 * PAGE);
	l[0] = iov(local, 4 * PAGE);
	n = process_vm_readv(pid, l, 1, r, 1, 0);
	check("readv into a hole: partial count", n, 2 * PAGE, local,
	      2 * PAGE, 38 * PAGE, 1);

	/* Write 10 pages from 4 local pieces into 2 remote ranges. */
	fill(local, 10 * PAGE, 0, 2);
	l[0] = iov(local, 1);
	l[1] = iov(local + 1, 3 * PAGE);
	l[2] = iov(local + 1 + 3 * PAGE, 0);
	l[3] = iov(local + 1 + 3 * PAGE, 7 * PAGE - 1);
	r[0] = iov(remote + PAGE + 100, 4 * PAGE + 1);
	r[1] = iov(remote + 5 * PAGE + 101, 6 * PAGE);
	n = process_vm_writev(pid, l, 4, r, 2, 0);
	check("writev 4:2, straddling", n, 10 * PAGE, local, 0, 0, 2);
	if (write(to_child[1], "w", 1) != 1 || waitpid(pid, &status, 0) < 0)
		return 2;
	ok = WIFEXITED(status) && !WEXITSTATUS(status);
	printf("%s %-44s\n", ok ? "ok  " : "FAIL",
	       "the target found the written data in place");
	failures += !ok;
	n = process_vm_readv(pid, l, 1, r, 1, 0);
	printf("%s %-44s %s\n", n < 0 && errno == ESRCH ? "ok  " : "FAIL",
	       "readv of a reaped process: ESRCH", strerror(errno));
	failures += !(n < 0 && errno == ESRCH);
	printf("pvm-demo: %s\n", failures ? "FAILED" : "all data verified");
	return failures ? 1 : 0;
}
