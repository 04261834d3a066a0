// SPDX-License-Identifier: GPL-2.0
/*
 * pidfd-race: the pid-reuse race that PROCESS_VM_PIDFD closes.
 *
 * A monitor keeps the pid number of a process it wants to inspect.  That
 * process exits, is reaped, and its number is handed to an unrelated new
 * process.  process_vm_readv() by pid number now silently reads the new
 * process; with PROCESS_VM_PIDFD on a pidfd taken while the first process
 * was alive it fails with ESRCH instead.
 *
 * The number is recycled with clone3(set_tid) (needs CAP_SYS_ADMIN or
 * CAP_CHECKPOINT_RESTORE), else /proc/sys/kernel/ns_last_pid, else by
 * forking until it comes back (at most -n forks).
 *
 * Exit: 0 if the pidfd read failed with ESRCH as it should, 1 if not,
 * 4 (skip) if the kernel lacks PROCESS_VM_PIDFD or no pid could be reused.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/sched.h>

/* From include/uapi/linux/process_vm.h, for builds against older headers. */
#ifndef PROCESS_VM_PIDFD
#define PROCESS_VM_PIDFD	(1UL << 0)
#endif

#ifndef CLONE_PIDFD
#define CLONE_PIDFD		0x00001000
#endif

#define KSFT_SKIP		4

/* Each process writes who it is here; same address in all of them. */
static char ident[128];

static ssize_t read_ident(pid_t pid_or_fd, unsigned long flags, char *out,
			  size_t len)
{
	struct iovec l = { .iov_base = out, .iov_len = len };
	struct iovec r = { .iov_base = ident, .iov_len = len };

	return syscall(__NR_process_vm_readv, pid_or_fd, &l, 1UL, &r, 1UL,
		       flags);
}

/* Child body: say who we are, tell the parent, wait until told to exit. */
static void child(const char *role, int ready, int go)
{
	char c = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	snprintf(ident, sizeof(ident), "%s, pid %d", role, getpid());
	if (write(ready, &c, 1) != 1)
		_exit(1);
	while (read(go, &c, 1) < 0 && errno == EINTR)
		;
	_exit(0);
}

struct proc {
	pid_t pid;
	int go;		/* write end: closing it lets the child exit */
};

/*
 * Start a child playing @role.  With @want, it must get that pid number:
 * @how is 0 for clone3(set_tid), 1 for a plain fork() (the child exits at
 * once if it got another number; returns 0 then).  Returns the pid, 0 or -1.
 */
static pid_t spawn(struct proc *p, const char *role, pid_t want, int how)
{
	struct clone_args args = {
		.exit_signal = SIGCHLD,
		.set_tid = (uintptr_t)&want,
		.set_tid_size = 1,
	};
	int rp[2], gp[2], err;
	pid_t pid;
	char c;

	if (pipe2(rp, O_CLOEXEC))
		return -1;
	if (pipe2(gp, O_CLOEXEC)) {
		close(rp[0]);
		close(rp[1]);
		return -1;
	}
	if (want && how == 0)
		pid = syscall(__NR_clone3, &args, sizeof(args));
	else
		pid = fork();
	if (pid == 0) {
		close(rp[0]);
		close(gp[1]);
		if (want && getpid() != want)
			_exit(0);
		child(role, rp[1], gp[0]);
	}
	err = errno;
	close(rp[1]);
	close(gp[0]);
	if (pid < 0 || (want && pid != want) || read(rp[0], &c, 1) != 1) {
		close(rp[0]);
		close(gp[1]);
		if (pid > 0)
			waitpid(pid, NULL, 0);
		errno = pid < 0 ? err : EAGAIN;
		return pid < 0 ? -1 : 0;
	}
	close(rp[0]);
	p->pid = pid;
	p->go = gp[1];
	return pid;
}

static void finish(struct proc *p)
{
	close(p->go);
	waitpid(p->pid, NULL, 0);
}

static int write_ns_last_pid(pid_t pid)
{
	char buf[32];
	int fd, n, ret;

	fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = snprintf(buf, sizeof(buf), "%d", pid);
	ret = write(fd, buf, n) == n ? 0 : -1;
	close(fd);
	return ret;
}

/* Give @want to a new "impostor" process; returns how, or NULL. */
static const char *recycle(struct proc *p, pid_t want, long max_forks)
{
	long i;

	if (spawn(p, "impostor: an unrelated process", want, 0) > 0)
		return "clone3(set_tid)";
	for (i = 0; i < 10; i++) {
		if (write_ns_last_pid(want - 1))
			break;
		if (spawn(p, "impostor: an unrelated process", want, 1) > 0)
			return "ns_last_pid";
	}
	printf("  no set_tid/ns_last_pid: forking until pid %d comes back\n"
	       "  (at most %ld forks)\n", want, max_forks);
	fflush(stdout);
	for (i = 0; i < max_forks; i++) {
		pid_t pid = spawn(p, "impostor: an unrelated process", want, 1);

		if (pid > 0)
			return "pid wrap-around";
		if (pid < 0)
			return NULL;
	}
	return NULL;
}

static void print_usage(const char *prog)
{
	fprintf(stderr, "usage: %s [-n MAX_FORKS]\n", prog);
	exit(2);
}

int main(int argc, char **argv)
{
	long max_forks = 1L << 20;
	struct proc victim, impostor;
	const char *how;
	char buf[sizeof(ident)];
	int pidfd, opt, err;
	ssize_t ret;
	pid_t pid;

	while ((opt = getopt(argc, argv, "n:h")) != -1) {
		switch (opt) {
		case 'n':
			max_forks = strtol(optarg, NULL, 0);
			break;
		default:
			print_usage(argv[0]);
		}
	}

	/* Does this kernel know PROCESS_VM_PIDFD? Read ourselves to see. */
	snprintf(ident, sizeof(ident), "monitor");
	pidfd = syscall(__NR_pidfd_open, getpid(), 0);
	if (pidfd < 0) {
		printf("SKIP: pidfd_open: %s\n", strerror(errno));
		return KSFT_SKIP;
	}
	ret = read_ident(pidfd, PROCESS_VM_PIDFD, buf, sizeof(buf));
	err = errno;
	close(pidfd);
	if (ret < 0 && err == EINVAL) {
		printf("SKIP: this kernel rejects PROCESS_VM_PIDFD (EINVAL):\n"
		       "      only the racy pid-number form exists here\n");
		return KSFT_SKIP;
	}
	if (ret != sizeof(buf)) {
		printf("FAIL: PROCESS_VM_PIDFD read of ourselves: %s\n",
		       ret < 0 ? strerror(err) : "short read");
		return 1;
	}

	/* 1. The monitor starts watching a process: pid number and pidfd. */
	pid = spawn(&victim, "victim: the process being monitored", 0, 0);
	if (pid <= 0) {
		perror("fork");
		return 1;
	}
	pidfd = syscall(__NR_pidfd_open, pid, 0);
	if (pidfd < 0) {
		perror("pidfd_open");
		finish(&victim);
		return 1;
	}
	ret = read_ident(pid, 0, buf, sizeof(buf));
	printf("monitor: watching pid %d (pidfd %d): reads \"%s\"\n", pid,
	       pidfd, ret == sizeof(buf) ? buf : strerror(errno));

	/* 2. It exits and is reaped; its number goes to another process. */
	finish(&victim);
	printf("victim: exited and reaped\n");
	how = recycle(&impostor, pid, max_forks);
	if (!how) {
		printf("SKIP: could not get pid %d reused (needs root for\n"
		       "      set_tid/ns_last_pid, or a small pid_max)\n", pid);
		close(pidfd);
		return KSFT_SKIP;
	}
	printf("impostor: an unrelated process now has pid %d (via %s)\n",
	       pid, how);

	/* 3. The monitor reads "its" process again, both ways. */
	memset(buf, 0, sizeof(buf));
	ret = read_ident(pid, 0, buf, sizeof(buf));
	if (ret == sizeof(buf))
		printf("by pid number: read \"%s\"%s\n", buf,
		       strncmp(buf, "impostor", 8) ? "" :
		       "  <-- the WRONG process, silently");
	else
		printf("by pid number: %s\n", strerror(errno));

	memset(buf, 0, sizeof(buf));
	ret = read_ident(pidfd, PROCESS_VM_PIDFD, buf, sizeof(buf));
	err = errno;
	if (ret >= 0)
		printf("by pidfd:      read \"%s\"  <-- WRONG: must be ESRCH\n",
		       buf);
	else
		printf("by pidfd:      %s (%s)%s\n", strerror(err),
		       err == ESRCH ? "ESRCH" : "unexpected errno",
		       err == ESRCH ? "  <-- correct: the watched process is gone" :
		       "");

	close(pidfd);
	finish(&impostor);
	return (ret < 0 && err == ESRCH) ? 0 : 1;
}
