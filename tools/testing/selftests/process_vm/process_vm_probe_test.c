// SPDX-License-Identifier: GPL-2.0
/*
 * The probes MPI transports make before they use Cross Memory Attach, and
 * the errors they branch on afterwards, replayed with the answers upstream
 * kernels give.  A transport whose probe fails falls back to a double copy
 * without telling anyone, so these answers are ABI:
 *
 *  - UCX's cma transport writes 8 bytes into its own process with
 *    process_vm_writev() and needs all 8 delivered;
 *  - libfabric's shm provider writes a 4-byte pid into the peer's shared
 *    region and only tests for -1;
 *  - Open MPI's vader BTL reads /proc/sys/kernel/yama/ptrace_scope and, if
 *    it is not 0, calls prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY); UCX does
 *    the same at scope 1;
 *  - during the run: EPERM when Yama forbids the peer (checked before any
 *    remote address is used, so a NULL remote address gives EPERM, not
 *    EFAULT), ESRCH once the peer is gone or a zombie, and a remote range
 *    that runs off the peer's mapping copies up to the hole (a partial
 *    count) or fails with EFAULT if it starts there.
 *
 * Self-contained, so that it builds against any kernel's headers.  The
 * Yama cases need root (to set ptrace_scope, which they restore) and skip
 * without Yama or at scope 3.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../kselftest_harness.h"

#define YAMA_SCOPE	"/proc/sys/kernel/yama/ptrace_scope"
#define NOBODY		65534

/* Known contents at the same address in every forked peer. */
static uint64_t peer_word = 0x0123456789abcdefULL;

/* The Yama scope, or -1 without Yama. */
static int yama_scope(void)
{
	char buf[8] = "";
	int fd = open(YAMA_SCOPE, O_RDONLY);

	if (fd < 0)
		return -1;
	if (read(fd, buf, sizeof(buf) - 1) < 1)
		buf[0] = '?';
	close(fd);
	return buf[0] >= '0' && buf[0] <= '3' ? buf[0] - '0' : -1;
}

static int yama_set(int scope)
{
	char c = '0' + scope;
	int fd = open(YAMA_SCOPE, O_WRONLY);
	int ret;

	if (fd < 0)
		return -1;
	ret = write(fd, &c, 1) == 1 ? 0 : -1;
	close(fd);
	return ret;
}

/* Run as nobody, without capabilities, and stay dumpable. */
static int drop_privileges(void)
{
	if (!geteuid() &&
	    (setgroups(0, NULL) || setresgid(NOBODY, NOBODY, NOBODY) ||
	     setresuid(NOBODY, NOBODY, NOBODY)))
		return -1;
	return prctl(PR_SET_DUMPABLE, 1);
}

struct peer {
	pid_t pid;
	int go;		/* closing it lets the peer exit */
};

/*
 * Fork a peer that waits until released.  @drop: as nobody; @any: it
 * declares prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY); @pid_slot: on
 * release, its exit status is 0 only if the int there holds its pid.
 */
static int peer_start(struct peer *p, bool drop, bool any, int *pid_slot)
{
	int ready[2], go[2];
	char c;

	if (pipe(ready) || pipe(go))
		return -1;
	p->pid = fork();
	if (p->pid < 0)
		return -1;
	if (!p->pid) {
		close(ready[0]);
		close(go[1]);
		if (drop && drop_privileges())
			_exit(10);
		if (any && prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0))
			_exit(11);
		if (write(ready[1], "r", 1) != 1)
			_exit(12);
		while (read(go[0], &c, 1) > 0)
			;
		if (pid_slot && *pid_slot != getpid())
			_exit(1);
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	p->go = go[1];
	c = 0;
	if (read(ready[0], &c, 1) != 1)
		c = 0;
	close(ready[0]);
	return c == 'r' ? 0 : -1;
}

/* Release the peer; its exit status, or -1. */
static int peer_stop(struct peer *p)
{
	int status;

	if (p->pid <= 0)
		return -1;
	close(p->go);
	if (waitpid(p->pid, &status, 0) != p->pid || !WIFEXITED(status))
		return -1;
	p->pid = 0;
	return WEXITSTATUS(status);
}

struct answer {
	ssize_t ret;
	int err;
};

static struct answer pvm(pid_t pid, bool to_peer, void *local, size_t llen,
			 void *remote, size_t rlen)
{
	struct iovec l = { local, llen }, r = { remote, rlen };
	struct answer a;

	errno = 0;
	a.ret = to_peer ? process_vm_writev(pid, &l, 1, &r, 1, 0) :
			process_vm_readv(pid, &l, 1, &r, 1, 0);
	a.err = a.ret < 0 ? errno : 0;
	return a;
}

/*
 * One call from a sibling of @target (not its ancestor), unprivileged, as
 * a peer MPI rank makes it: 8 bytes at @remote.  On a successful read the
 * bytes must be peer_word's, or the answer is EBADMSG.
 */
static struct answer from_sibling(pid_t target, bool to_peer, void *remote)
{
	struct answer a = { -1, ECHILD };
	uint64_t word = peer_word;
	int res[2], status;
	pid_t pid;

	if (pipe(res))
		return a;
	pid = fork();
	if (!pid) {
		close(res[0]);
		if (drop_privileges())
			_exit(1);
		a = pvm(target, to_peer, &word, sizeof(word), remote,
			sizeof(word));
		if (!to_peer && a.ret == sizeof(word) && word != peer_word)
			a = (struct answer){ -1, EBADMSG };
		_exit(write(res[1], &a, sizeof(a)) != sizeof(a));
	}
	close(res[1]);
	if (pid < 0 || read(res[0], &a, sizeof(a)) != sizeof(a))
		a = (struct answer){ -1, ECHILD };
	close(res[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	return a;
}

/* UCX: the cma transport exists only if a write to itself delivers 8. */
TEST(ucx_write_self_read_back)
{
	uint64_t src = 0xfeedfacecafebeefULL, dst = 0, back = 0;
	struct answer a;

	a = pvm(getpid(), true, &src, sizeof(src), &dst, sizeof(dst));
	ASSERT_EQ(8, a.ret);
	ASSERT_EQ(src, dst);
	a = pvm(getpid(), false, &back, sizeof(back), &dst, sizeof(dst));
	ASSERT_EQ(8, a.ret);
	ASSERT_EQ(src, back);
}

/* libfabric shm: the peer's pid, written into the peer's shared region. */
TEST(libfabric_write_into_peer)
{
	struct peer p = { 0 };
	struct answer a;
	int *region;
	int pid;

	region = mmap(NULL, getpagesize(), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, region);
	region[0] = 0;
	ASSERT_EQ(0, peer_start(&p, false, false, &region[0]));
	pid = p.pid;
	a = pvm(p.pid, true, &pid, sizeof(pid), &region[0], sizeof(region[0]));
	EXPECT_EQ(4, a.ret);
	/* the peer finds its pid in its region */
	EXPECT_EQ(0, peer_stop(&p));
	munmap(region, getpagesize());
}

/*
 * Open MPI: read ptrace_scope (absent: no Yama, nothing to do), and at a
 * scope other than 0 call prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY), which
 * succeeds wherever Yama is present; without Yama no LSM takes the option.
 */
TEST(ompi_yama_probe)
{
	int scope = yama_scope();
	int ret, err;

	errno = 0;
	ret = prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	err = errno;
	if (access(YAMA_SCOPE, F_OK)) {
		ASSERT_EQ(-1, ret);
		ASSERT_EQ(EINVAL, err);
		return;
	}
	ASSERT_GE(scope, 0);
	ASSERT_LE(scope, 3);
	ASSERT_EQ(0, ret);
}

/* A peer that has exited: ESRCH as a zombie and once reaped. */
TEST(gone_peer_esrch)
{
	uint64_t word;
	struct answer a;
	siginfo_t si;
	pid_t pid;

	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(0);
	ASSERT_EQ(0, waitid(P_PID, pid, &si, WEXITED | WNOWAIT));
	a = pvm(pid, false, &word, sizeof(word), &peer_word, sizeof(word));
	EXPECT_EQ(-1, a.ret);
	EXPECT_EQ(ESRCH, a.err);
	a = pvm(pid, true, &word, sizeof(word), &peer_word, sizeof(word));
	EXPECT_EQ(-1, a.ret);
	EXPECT_EQ(ESRCH, a.err);
	ASSERT_EQ(pid, waitpid(pid, NULL, 0));
	a = pvm(pid, false, &word, sizeof(word), &peer_word, sizeof(word));
	EXPECT_EQ(-1, a.ret);
	EXPECT_EQ(ESRCH, a.err);
}

/* A peer buffer of two pages followed by an inaccessible one. */
FIXTURE(off_mapping) {
	struct peer peer;
	char *map;
	char *local;
	long page;
};

FIXTURE_SETUP(off_mapping)
{
	self->page = getpagesize();
	self->map = mmap(NULL, 3 * self->page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->map);
	memset(self->map, 0x5a, 2 * self->page);
	ASSERT_EQ(0, mprotect(self->map + 2 * self->page, self->page,
			      PROT_NONE));
	self->local = malloc(3 * self->page);
	ASSERT_NE(NULL, self->local);
	ASSERT_EQ(0, peer_start(&self->peer, false, false, NULL));
}

FIXTURE_TEARDOWN(off_mapping)
{
	if (self->peer.pid > 0)
		peer_stop(&self->peer);
	free(self->local);
	munmap(self->map, 3 * self->page);
}

/* The range runs off the end: the bytes up to it, either direction. */
TEST_F(off_mapping, partial)
{
	char *r = self->map + self->page + 100;
	size_t len = 2 * self->page;
	struct answer a;
	int to_peer;

	for (to_peer = 0; to_peer < 2; to_peer++) {
		a = pvm(self->peer.pid, to_peer, self->local, len, r, len);
		EXPECT_EQ(self->page - 100, a.ret);
	}
}

/* It starts in the hole: nothing copied, EFAULT. */
TEST_F(off_mapping, starts_in_hole)
{
	char *r = self->map + 2 * self->page + 8;
	struct answer a;
	int to_peer;

	for (to_peer = 0; to_peer < 2; to_peer++) {
		a = pvm(self->peer.pid, to_peer, self->local, 64, r, 64);
		EXPECT_EQ(-1, a.ret);
		EXPECT_EQ(EFAULT, a.err);
	}
}

/* Two remote iovecs, the second in the hole: the first one's count. */
TEST_F(off_mapping, second_iovec_in_hole)
{
	struct iovec l = { self->local, 200 };
	struct iovec r[2] = {
		{ self->map + 300, 100 },
		{ self->map + 2 * self->page, 100 },
	};

	EXPECT_EQ(100, process_vm_readv(self->peer.pid, &l, 1, r, 2, 0));
	EXPECT_EQ(100, process_vm_writev(self->peer.pid, &l, 1, r, 2, 0));
}

/* Yama scope set for the test and restored after it. */
FIXTURE(yama) {
	struct peer peer;
	int saved;
};

FIXTURE_SETUP(yama)
{
	self->saved = yama_scope();
	if (self->saved < 0)
		SKIP(return, "Yama is not enabled (no %s)", YAMA_SCOPE);
	if (self->saved == 3)
		SKIP(return, "Yama ptrace_scope is 3 until reboot");
	if (geteuid())
		SKIP(return, "needs root to set ptrace_scope");
}

FIXTURE_TEARDOWN(yama)
{
	if (self->peer.pid > 0)
		peer_stop(&self->peer);
	if (self->saved >= 0 && self->saved < 3)
		yama_set(self->saved);
}

/* Scope 0: a sibling of the same uid may copy. */
TEST_F(yama, scope_0_sibling_copies)
{
	struct answer a;

	ASSERT_EQ(0, yama_set(0));
	ASSERT_EQ(0, peer_start(&self->peer, true, false, NULL));
	a = from_sibling(self->peer.pid, false, &peer_word);
	EXPECT_EQ(8, a.ret);
	EXPECT_EQ(0, a.err);
}

/* Scope 1: EPERM before any fault, unless the peer declared any ptracer. */
TEST_F(yama, scope_1_eperm_before_fault)
{
	struct answer a;

	ASSERT_EQ(0, yama_set(1));
	ASSERT_EQ(0, peer_start(&self->peer, true, false, NULL));
	a = from_sibling(self->peer.pid, false, NULL);
	EXPECT_EQ(-1, a.ret);
	EXPECT_EQ(EPERM, a.err);
	a = from_sibling(self->peer.pid, false, &peer_word);
	EXPECT_EQ(-1, a.ret);
	EXPECT_EQ(EPERM, a.err);
	a = from_sibling(self->peer.pid, true, &peer_word);
	EXPECT_EQ(-1, a.ret);
	EXPECT_EQ(EPERM, a.err);
}

/* What Open MPI and UCX do at scope 1: then EFAULT probes, data copies. */
TEST_F(yama, scope_1_ptracer_any)
{
	struct answer a;

	ASSERT_EQ(0, yama_set(1));
	ASSERT_EQ(0, peer_start(&self->peer, true, true, NULL));
	a = from_sibling(self->peer.pid, false, NULL);
	EXPECT_EQ(-1, a.ret);
	EXPECT_EQ(EFAULT, a.err);
	a = from_sibling(self->peer.pid, false, &peer_word);
	EXPECT_EQ(8, a.ret);
	EXPECT_EQ(0, a.err);
}

/* Scope 2: only CAP_SYS_PTRACE; the declaration does not help. */
TEST_F(yama, scope_2_eperm_before_fault)
{
	struct answer a;

	ASSERT_EQ(0, yama_set(2));
	ASSERT_EQ(0, peer_start(&self->peer, true, true, NULL));
	a = from_sibling(self->peer.pid, false, NULL);
	EXPECT_EQ(-1, a.ret);
	EXPECT_EQ(EPERM, a.err);
	a = from_sibling(self->peer.pid, true, &peer_word);
	EXPECT_EQ(-1, a.ret);
	EXPECT_EQ(EPERM, a.err);
}

TEST_HARNESS_MAIN
