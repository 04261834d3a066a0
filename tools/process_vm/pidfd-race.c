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
 * Exit: 0 if the pidfd read failed with ESRCH as it should, 1 if not, 2 on
 * a usage error, KSFT_SKIP (4) if the kernel lacks PROCESS_VM_PIDFD or no
 * pid could be reused.
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

#include "pvm_args.h"

/* From include/uapi/linux/process_vm.h, for builds against older headers. */
#ifndef PROCESS_VM_PIDFD
#define PROCESS_VM_PIDFD	(1UL << 0)
#endif

#ifndef CLONE_PIDFD
#define CLONE_PIDFD		0x00001000
#endif

/* Each process writes who it is here; same address in all of them. */
static char ident[128];

static const char victim_role[] = "victim: the process being monitored";
static const char impostor_role[] = "impostor: an unrelated process";

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

/* How spawn() creates the child. */
enum spawn_mode {
	SPAWN_SET_TID,	/* clone3() with set_tid: that pid number or none */
	SPAWN_FORK,	/* fork(): whatever number the kernel hands out */
};

/* fork(), or with SPAWN_SET_TID clone3() asking for pid number @want. */
static pid_t start(pid_t want, enum spawn_mode mode)
{
	struct clone_args args = {
		.exit_signal = SIGCHLD,
		.set_tid = (uintptr_t)&want,
		.set_tid_size = 1,
	};

	if (mode == SPAWN_SET_TID)
		return syscall(__NR_clone3, &args, sizeof(args));
	return fork();
}

/*
 * Start a child playing @role, created as @mode says.  With @want nonzero
 * it must get that pid number: a SPAWN_FORK child that got another number
 * exits at once.  Returns the pid; 0 (errno EAGAIN) if the child did not
 * get @want or did not come up; -1 if it could not be created.
 */
static pid_t spawn(struct proc *p, const char *role, pid_t want,
		   enum spawn_mode mode)
{
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
	pid = start(want, mode);
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

	if (spawn(p, impostor_role, want, SPAWN_SET_TID) > 0)
		return "clone3(set_tid)";
	for (i = 0; i < 10; i++) {
		if (write_ns_last_pid(want - 1))
			break;
		if (spawn(p, impostor_role, want, SPAWN_FORK) > 0)
			return "ns_last_pid";
	}
	printf("  no set_tid/ns_last_pid: forking until pid %d comes back\n"
	       "  (at most %ld forks)\n", want, max_forks);
	fflush(stdout);
	for (i = 0; i < max_forks; i++) {
		pid_t pid = spawn(p, impostor_role, want, SPAWN_FORK);

		if (pid > 0)
			return "pid wrap-around";
		if (pid < 0)
			return NULL;
	}
	return NULL;
}

/*
 * "Cannot run here" (no PROCESS_VM_PIDFD, no pid reuse) is neither a pass
 * nor a failure: kselftest's KSFT_SKIP, 4, so that a runner that knows
 * that convention reports the run as skipped.
 */
static const char usage[] =
	"usage: pidfd-race [-n MAX_FORKS]\n"
	"  -n MAX_FORKS  forks to try to get the victim's pid reused (1 to\n"
	"                2^30, default 2^20)\n"
	"Exit status: 0 if the read by pidfd failed with ESRCH, 1 if not, 2 on\n"
	"a usage error, 4 if the kernel lacks PROCESS_VM_PIDFD or no pid could\n"
	"be reused.\n";

/* Returns the -n MAX_FORKS bound of recycle()'s last resort. */
static long parse_args(int argc, char **argv)
{
	long max_forks = 1L << 20;
	int opt;

	if (argc == 2 && !strcmp(argv[1], "--help"))
		pvm_usage(usage, 0);
	while ((opt = getopt(argc, argv, "n:h")) != -1) {
		switch (opt) {
		case 'n':
			max_forks = pvm_arg_long("-n", optarg, 1, 1L << 30);
			break;
		case 'h':
			pvm_usage(usage, 0);
		default:
			pvm_usage(usage, PVM_EXIT_USAGE);
		}
	}
	pvm_args_done(argc, argv, usage);
	return max_forks;
}

/*
 * Does this kernel know PROCESS_VM_PIDFD?  Read ourselves to see.
 * Returns 0 if it does, else the exit status, having said why.
 */
static int check_pidfd_flag(void)
{
	char buf[sizeof(ident)];
	int pidfd, err;
	ssize_t ret;

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
		return EXIT_FAILURE;
	}
	return 0;
}

/*
 * Step 1: the monitor starts watching a process, by pid number and by
 * pidfd.  Returns the pidfd, or -1 having said why not.
 */
static int watch_victim(struct proc *victim)
{
	char buf[sizeof(ident)];
	ssize_t ret;
	int pidfd;

	if (spawn(victim, victim_role, 0, SPAWN_FORK) <= 0) {
		perror("fork");
		return -1;
	}
	pidfd = syscall(__NR_pidfd_open, victim->pid, 0);
	if (pidfd < 0) {
		perror("pidfd_open");
		finish(victim);
		return -1;
	}
	ret = read_ident(victim->pid, 0, buf, sizeof(buf));
	printf("monitor: watching pid %d (pidfd %d): reads \"%s\"\n",
	       victim->pid, pidfd, ret == sizeof(buf) ? buf : strerror(errno));
	return pidfd;
}

/*
 * Step 2: the victim exits and is reaped; its number @pid goes to a new
 * process, @impostor.  Returns 0, or the exit status having said why not.
 */
static int reuse_pid(struct proc *victim, struct proc *impostor,
		     long max_forks)
{
	pid_t pid = victim->pid;
	const char *how;

	finish(victim);
	printf("victim: exited and reaped\n");
	how = recycle(impostor, pid, max_forks);
	if (!how) {
		printf("SKIP: could not get pid %d reused (needs root for\n"
		       "      set_tid/ns_last_pid, or a small pid_max)\n", pid);
		return KSFT_SKIP;
	}
	printf("impostor: an unrelated process now has pid %d (via %s)\n",
	       pid, how);
	return 0;
}

/* Step 3a: by pid number, the monitor silently reads the impostor. */
static void read_by_pid(pid_t pid)
{
	char buf[sizeof(ident)] = { 0 };

	if (read_ident(pid, 0, buf, sizeof(buf)) == sizeof(buf))
		printf("by pid number: read \"%s\"%s\n", buf,
		       strncmp(buf, "impostor", 8) ? "" :
		       "  <-- the WRONG process, silently");
	else
		printf("by pid number: %s\n", strerror(errno));
}

/* Step 3b: by pidfd, the read must fail with ESRCH.  Returns the status. */
static int read_by_pidfd(int pidfd)
{
	char buf[sizeof(ident)] = { 0 };
	ssize_t ret;
	int err;

	ret = read_ident(pidfd, PROCESS_VM_PIDFD, buf, sizeof(buf));
	err = errno;
	if (ret >= 0) {
		printf("by pidfd:      read \"%s\"  <-- WRONG: must be ESRCH\n",
		       buf);
		return EXIT_FAILURE;
	}
	if (err != ESRCH) {
		printf("by pidfd:      %s (unexpected errno)\n", strerror(err));
		return EXIT_FAILURE;
	}
	printf("by pidfd:      %s (ESRCH)  <-- correct: the watched process is gone\n",
	       strerror(err));
	return EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
	long max_forks = parse_args(argc, argv);
	struct proc victim, impostor;
	int pidfd, ret;
	pid_t pid;

	ret = check_pidfd_flag();
	if (ret)
		return ret;

	pidfd = watch_victim(&victim);
	if (pidfd < 0)
		return EXIT_FAILURE;
	pid = victim.pid;	/* the number the monitor keeps */

	ret = reuse_pid(&victim, &impostor, max_forks);
	if (ret) {
		close(pidfd);
		return ret;
	}

	/* Step 3: the monitor reads "its" process again, both ways. */
	read_by_pid(pid);
	ret = read_by_pidfd(pidfd);
	close(pidfd);
	finish(&impostor);
	return ret;
}
