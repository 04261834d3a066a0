// SPDX-License-Identifier: GPL-2.0
/*
 * pvm-handle-demo: one producer, several consumers that know only the
 * handle bytes.
 *
 * The producer exports a message board (read-write) and a notice
 * (read-only).  Each consumer is a new program (this one, exec'd with
 * "consumer N") that receives the 64 handle bytes on its standard input
 * and nothing else: it opens the handles, reads the notice and writes a
 * line into its slot of the board.  Then the producer revokes the board,
 * and exits: later consumers get an error, not data.
 *
 * Usage: pvm-handle-demo [NR_CONSUMERS]   (default 3, at most 8)
 *
 * Every process closes the pipe ends it does not use, and the control
 * pipes are close-on-exec: if the producer dies (of SIGPIPE, when the
 * reader of our output has gone), the parent sees end of file and stops.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pvm_handle.h"

#define SLOT		64
#define MAX_CONSUMERS	8

struct handles {
	unsigned char board[PVM_HANDLE_SIZE];
	unsigned char notice[PVM_HANDLE_SIZE];
};

static int read_full(int fd, void *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = read(fd, buf, len);
		if (n <= 0)
			return -1;
		buf = (char *)buf + n;
		len -= n;
	}
	return 0;
}

static const char *via_name(struct pvm_handle *h)
{
	switch (pvm_handle_via(h)) {
	case PVM_HANDLE_VIA_REGION:
		return "a kernel region (process_vm_open)";
	case PVM_HANDLE_VIA_PIDFD:
		return "a pidfd (PROCESS_VM_PIDFD)";
	default:
		return "the pid, checked after each copy";
	}
}

/* The consumer program: the handles arrive on stdin, nothing else. */
static int consume(int index)
{
	char notice[SLOT + 1] = "", line[SLOT];
	struct pvm_handle *board, *note;
	struct handles hb;
	ssize_t n;
	int err;

	if (read_full(0, &hb, sizeof(hb)))
		return 1;
	err = pvm_handle_open(hb.notice, sizeof(hb.notice), 0, &note);
	if (err) {
		printf("  consumer %d: cannot open the notice: %s\n", index,
		       pvm_handle_strerror(err));
		return 0;
	}
	n = pvm_handle_pread(note, notice, SLOT, 0);
	pvm_handle_close(note);
	err = pvm_handle_open(hb.board, sizeof(hb.board), 0, &board);
	if (err) {
		printf("  consumer %d: notice %s; the board: %s\n", index,
		       n < 0 ? pvm_handle_strerror(n) : "read",
		       pvm_handle_strerror(err));
		return 0;
	}
	printf("  consumer %d (pid %d): producer %d reached through %s\n",
	       index, getpid(), pvm_handle_pid(board), via_name(board));
	printf("  consumer %d: the notice says \"%s\"\n", index,
	       n < 0 ? pvm_handle_strerror(n) : notice);
	memset(line, 0, sizeof(line));
	snprintf(line, sizeof(line), "consumer %d (pid %d) was here", index,
		 getpid());
	n = pvm_handle_pwrite(board, line, sizeof(line), index * SLOT);
	if (n < 0)
		printf("  consumer %d: write: %s\n", index,
		       pvm_handle_strerror(n));
	pvm_handle_close(board);
	return 0;
}

/* Run a consumer program with the handle bytes on its stdin */
static void run_consumer(int index, const struct handles *hb)
{
	char arg[16];
	int fds[2];
	pid_t pid;

	if (pipe2(fds, O_CLOEXEC))
		exit(1);
	pid = fork();
	if (pid < 0)
		exit(1);
	if (!pid) {
		snprintf(arg, sizeof(arg), "%d", index);
		/* The copy on stdin is not close-on-exec */
		dup2(fds[0], 0);
		close(fds[0]);
		close(fds[1]);
		execl("/proc/self/exe", "pvm-handle-demo", "consumer", arg,
		      (char *)NULL);
		_exit(127);
	}
	close(fds[0]);
	if (write(fds[1], hb, sizeof(*hb)) != sizeof(*hb))
		exit(1);
	close(fds[1]);
	waitpid(pid, NULL, 0);
}

static void show_board(const char *board, int nr)
{
	int i;

	printf("  producer: the board now reads:\n");
	for (i = 0; i <= nr; i++)
		printf("    [%d] %s\n", i, board[i * SLOT] ? board + i * SLOT :
		       "(empty)");
}

static void revoke_board(const struct handles *hb)
{
	int err = pvm_handle_revoke(hb->board, sizeof(hb->board));

	printf("  producer: revoked the board: %s\n",
	       err ? pvm_handle_strerror(err) : "ok");
}

/*
 * The producer: exports, sends the handles to its parent, then obeys
 * one-letter commands: 'p' print the board, 'r' revoke it, 'q' quit.
 */
static void produce(int nr, int out, int in, int to, int from)
{
	static char board[(MAX_CONSUMERS + 1) * SLOT] = "the producer's board";
	static const char notice[SLOT] = "read-only notice: hello, consumers";
	struct handles hb;
	char cmd;
	int err;

	close(to);
	close(from);
	/* Under Yama scope 1: let the parent and its children in */
	err = pvm_handle_allow(getppid());
	printf("  producer (pid %d): pvm_handle_allow(parent): %s\n", getpid(),
	       err ? pvm_handle_strerror(err) : "ok");
	if (pvm_handle_export(board, sizeof(board), PVM_HANDLE_RDWR, hb.board) ||
	    pvm_handle_export(notice, sizeof(notice), PVM_HANDLE_READ,
			      hb.notice))
		_exit(1);
	if (write(out, &hb, sizeof(hb)) != sizeof(hb))
		_exit(1);
	while (read_full(in, &cmd, 1) == 0) {
		if (cmd == 'p')
			show_board(board, nr);
		else if (cmd == 'r')
			revoke_board(&hb);
		else
			break;
		fflush(stdout);
		if (write(out, &cmd, 1) != 1)
			break;
	}
	_exit(0);
}

static void producer_gone(void)
{
	fprintf(stderr, "pvm-handle-demo: the producer has gone\n");
	exit(1);
}

/* Tell the producer to do @cmd and wait until it has */
static void tell(int to, int from, char cmd)
{
	char done;

	if (write(to, &cmd, 1) != 1 || (cmd != 'q' && read_full(from, &done, 1)))
		producer_gone();
}

static void print_handle(const unsigned char *h)
{
	int i;

	printf("  board handle:");
	for (i = 0; i < PVM_HANDLE_SIZE; i++)
		printf("%s%02x", i % 16 ? "" : "\n    ", h[i]);
	printf("\n");
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: pvm-handle-demo [NR_CONSUMERS]\n"
		"A producer exports a board and a notice; NR_CONSUMERS new\n"
		"programs (1 to %d, default 3), given only the handle bytes,\n"
		"use them; then the producer revokes the board and exits.\n",
		MAX_CONSUMERS);
}

/* @arg as a number from @min to @max, or -1 */
static int parse_int(const char *arg, int min, int max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < min || v > max)
		return -1;
	return v;
}

static int bad_arg(const char *what, const char *arg)
{
	fprintf(stderr, "pvm-handle-demo: %s '%s'\n", what, arg);
	usage(stderr);
	return 2;
}

int main(int argc, char **argv)
{
	int nr = 3, to[2], from[2], i;
	struct handles hb;
	pid_t pid;

	/* How run_consumer() starts a consumer */
	if (argc == 3 && !strcmp(argv[1], "consumer")) {
		i = parse_int(argv[2], 1, MAX_CONSUMERS + 2);
		return i > 0 ? consume(i) : bad_arg("bad consumer", argv[2]);
	}
	if (argc > 1 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		usage(stdout);
		return 0;
	}
	if (argc > 2)
		return bad_arg("unexpected argument", argv[2]);
	if (argc > 1 && argv[1][0] == '-')
		return bad_arg("unknown option", argv[1]);
	if (argc > 1) {
		nr = parse_int(argv[1], 1, MAX_CONSUMERS);
		if (nr < 0)
			return bad_arg("bad NR_CONSUMERS", argv[1]);
	}

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("kernel has PROCESS_VM_PIDFD: %s\n",
	       pvm_handle_kernel_has_pidfd() ? "yes" : "no (pid + check)");
	if (pipe2(to, O_CLOEXEC) || pipe2(from, O_CLOEXEC))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid)
		produce(nr, from[1], to[0], to[1], from[0]);
	close(from[1]);
	close(to[0]);
	if (read_full(from[0], &hb, sizeof(hb)))
		producer_gone();
	print_handle(hb.board);

	printf("%d consumers, each given only the handle bytes on stdin:\n",
	       nr);
	for (i = 1; i <= nr; i++)
		run_consumer(i, &hb);
	tell(to[1], from[0], 'p');

	printf("The producer revokes the board:\n");
	tell(to[1], from[0], 'r');
	run_consumer(nr + 1, &hb);

	printf("The producer exits:\n");
	tell(to[1], from[0], 'q');
	waitpid(pid, NULL, 0);
	run_consumer(nr + 2, &hb);
	/* With SIGPIPE ignored, a lost reader is EPIPE here */
	return fflush(stdout) || ferror(stdout);
}
