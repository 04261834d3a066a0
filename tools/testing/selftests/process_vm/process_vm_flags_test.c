// SPDX-License-Identifier: GPL-2.0
/*
 * Tests for the flags argument of process_vm_readv(2)/process_vm_writev(2):
 *
 *  PROCESS_VM_PIDFD   the pid argument is a pidfd
 *  PROCESS_VM_NOWAIT  never sleep on the target's memory: stop at the first
 *                     page that is not resident (or not writable, for a
 *                     write) and return what was copied so far, or EFAULT
 *
 * Every test except unknown_flags probes for the flags first and is skipped
 * on kernels that reject PROCESS_VM_PIDFD with EINVAL.
 *
 * Not tested here: NOWAIT only trylocks the target's mmap lock and fails
 * with EAGAIN when it cannot take it before anything was copied; there is
 * no deterministic way to hold another process's mmap lock from userspace.
 * The KUnit case process_vm.nonblock_modes_only_try_the_mmap_lock
 * (mm/tests/process_vm_kunit.c) holds it from a kthread instead.
 */
#define _GNU_SOURCE
#include "process_vm_util.h"

#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <linux/process_vm.h>
#include <linux/sched.h>
#include <linux/userfaultfd.h>

#include "../kselftest_harness.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD	O_EXCL
#endif

#ifndef CLONE_PIDFD
#define CLONE_PIDFD	0x00001000
#endif

#ifndef PR_SET_PTRACER
#define PR_SET_PTRACER	0x59616d61
#endif

#ifndef PR_SET_PTRACER_ANY
#define PR_SET_PTRACER_ANY ((unsigned long)-1)
#endif

#define UID_NOBODY	65534
#define GID_NOBODY	65534

/* Pages of the region mapped at the same address in the targets. */
#define REGION_PAGES	8

static int sys_pidfd_open(pid_t pid, unsigned int flags)
{
	return syscall(__NR_pidfd_open, pid, flags);
}

/*
 * Probe with a valid PROCESS_VM_PIDFD read of ourselves.  Only an EINVAL
 * means "not supported"; any other failure is left for the test to report.
 */
static bool pvm_flags_supported(void)
{
	static char src = 'x';
	char dst = 0;
	struct iovec l = { .iov_base = &dst, .iov_len = 1 };
	struct iovec r = { .iov_base = &src, .iov_len = 1 };
	int pidfd, err;
	ssize_t ret;

	pidfd = sys_pidfd_open(getpid(), 0);
	if (pidfd < 0)
		return false;
	ret = pvm_readv(pidfd, &l, 1, &r, 1, PROCESS_VM_PIDFD);
	err = errno;
	close(pidfd);
	return !(ret < 0 && err == EINVAL);
}

/* ---- targets ---------------------------------------------------------- */

/*
 * Targets are process_vm_util.h targets.  Their setup lets any process
 * trace them (Yama ptrace_scope 1 would otherwise refuse readers that are
 * not their ancestors) and, when @want is not 0, fails with -EAGAIN unless
 * the child got that pid number.
 */
static long setup_target(struct pvm_target *t, unsigned long want,
			 unsigned long b, unsigned long c)
{
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	if (want && getpid() != (pid_t)want)
		return -EAGAIN;
	return 0;
}

/* Read one byte of each page: maps the zero page where nothing is. */
static long cmd_touch_read(struct pvm_target *t, unsigned long addr,
			   unsigned long len, unsigned long c)
{
	uint8_t *p = (void *)addr;
	unsigned long i;

	/* an atomic load is never optimised away, even with its value unused */
	for (i = 0; i < len; i += PVM_PAGE)
		(void)__atomic_load_n(&p[i], __ATOMIC_RELAXED);
	return 0;
}

static long cmd_check_zero(struct pvm_target *t, unsigned long addr,
			   unsigned long len, unsigned long c)
{
	return pvm_check_byte((void *)addr, len, 0);
}

/* A target started with fork() and a pidfd_open()ed pidfd for it. */
static int target_fork(struct pvm_target *t, int *pidfd)
{
	*pidfd = -1;
	if (pvm_target_start(t, setup_target, 0, 0, 0))
		return -1;
	*pidfd = sys_pidfd_open(t->pid, 0);
	return *pidfd < 0 ? -1 : 0;
}

/*
 * Start a target with the pid number @want: clone3(set_tid) needs
 * CAP_SYS_ADMIN (or CAP_CHECKPOINT_RESTORE); else ns_last_pid
 * (CONFIG_CHECKPOINT_RESTORE); else cycle through the pid space if it is
 * small.  Returns NULL, or the reason for a skip.
 */
static const char *target_reuse_pid(struct pvm_target *t, int *pidfd,
				    pid_t want)
{
	struct clone_args args = {
		.flags = CLONE_PIDFD,
		.pidfd = (uintptr_t)pidfd,
		.exit_signal = SIGCHLD,
		.set_tid = (uintptr_t)&want,
		.set_tid_size = 1,
	};
	long pid_max, i;

	*pidfd = -1;
	if (!pvm_target_start_clone(t, &args, setup_target, 0, 0, 0))
		return NULL;
	if (t->pid > 0) {
		pvm_target_stop(t);
		return "set_tid target failed";
	}

	for (i = 0; i < 10; i++) {
		if (pvm_write_long("/proc/sys/kernel/ns_last_pid", want - 1))
			break;
		if (!pvm_target_start(t, setup_target, want, 0, 0))
			goto opened;
		pvm_target_stop(t);
	}

	pid_max = pvm_read_long("/proc/sys/kernel/pid_max");
	if (pid_max < 0)
		return "cannot read pid_max";
	if (pid_max > (1L << 17))
		return "no set_tid/ns_last_pid, pid_max too large to cycle";
	for (i = 0; i < 2 * pid_max; i++) {
		if (!pvm_target_start(t, setup_target, want, 0, 0))
			goto opened;
		if (t->pid < 0)
			return "fork failed while cycling pids";
		pvm_target_stop(t);
	}
	return "pid number did not come back";
opened:
	*pidfd = sys_pidfd_open(t->pid, 0);
	return *pidfd < 0 ? "pidfd_open failed" : NULL;
}

/*
 * One process_vm_{read,write}v on a target: by pidfd when @flags has
 * PROCESS_VM_PIDFD, by pid number otherwise.  Returns count or -errno.
 */
static long tgt_rw(const struct pvm_target *t, int pidfd, bool write,
		   unsigned long flags, const struct iovec *lvec,
		   unsigned long liovcnt, const struct iovec *rvec,
		   unsigned long riovcnt)
{
	pid_t pid = (flags & PROCESS_VM_PIDFD) ? pidfd : t->pid;

	return pvm_res(pvm_rwf(write, pid, lvec, liovcnt, rvec, riovcnt,
			       flags));
}

/* tgt_rw() of @len bytes at @local and at @remote */
static long tgt_rw1(const struct pvm_target *t, int pidfd, bool write,
		    unsigned long flags, void *local, void *remote, size_t len)
{
	struct iovec l = { .iov_base = local, .iov_len = len };
	struct iovec r = { .iov_base = remote, .iov_len = len };

	return tgt_rw(t, pidfd, write, flags, &l, 1, &r, 1);
}

static const unsigned long pid_modes[] = {
	0,
	PROCESS_VM_PIDFD,
};

static const unsigned long nowait_modes[] = {
	PROCESS_VM_NOWAIT,
	PROCESS_VM_NOWAIT | PROCESS_VM_PIDFD,
};

/* ---- tests without a target ------------------------------------------- */

/* The top bit of a flags argument: bit 63, or bit 31 on 32-bit. */
#define FLAG_TOP	(~0UL ^ (~0UL >> 1))

/* Unknown flag bits are rejected before anything else, on every kernel. */
TEST(unknown_flags)
{
	static const unsigned long bad[] = {
		1UL << 2,
		FLAG_TOP,
		PROCESS_VM_PIDFD | (1UL << 2),
		PROCESS_VM_NOWAIT | FLAG_TOP,
		PROCESS_VM_PIDFD | PROCESS_VM_NOWAIT | (1UL << 31),
		~0UL,
		~(PROCESS_VM_PIDFD | PROCESS_VM_NOWAIT),
	};
	char src[16] = "abcdefghijklmno", dst[16];
	struct iovec l = { .iov_base = dst, .iov_len = sizeof(dst) };
	struct iovec r = { .iov_base = src, .iov_len = sizeof(src) };
	unsigned int i;
	int w;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		for (w = 0; w < 2; w++) {
			/* Valid arguments otherwise: nothing is copied. */
			memset(dst, 0, sizeof(dst));
			EXPECT_EQ(-EINVAL, pvm_res(pvm_rwf(w, getpid(), &l, 1,
							   &r, 1, bad[i])));
			EXPECT_EQ(-1, pvm_check_byte(dst, sizeof(dst), 0));
			EXPECT_STREQ("abcdefghijklmno", src);

			/* EINVAL wins over ESRCH, EBADF, EFAULT, EINVAL. */
			EXPECT_EQ(-EINVAL, pvm_res(pvm_rwf(w, -1, &l, 1, &r, 1,
							   bad[i])));
			EXPECT_EQ(-EINVAL,
				  pvm_res(pvm_rwf(w, -1, &l, 1, &r, 1,
						  bad[i] | PROCESS_VM_PIDFD)));
			EXPECT_EQ(-EINVAL,
				  pvm_res(pvm_rwf(w, getpid(), (void *)8, 1,
						  (void *)8, 1, bad[i])));
			EXPECT_EQ(-EINVAL,
				  pvm_res(pvm_rwf(w, getpid(), NULL,
						  IOV_MAX + 1, NULL,
						  IOV_MAX + 1, bad[i])));
			EXPECT_EQ(-EINVAL, pvm_res(pvm_rwf(w, getpid(), NULL,
							   0, NULL, 0,
							   bad[i])));
		}
	}
}

/*
 * Through @pidfd, a pidfd of this process: read @len bytes of pattern
 * @rseed from @src into @dst, then write pattern @wseed from @dst to @src.
 */
static void pidfd_self_rw(struct __test_metadata *_metadata, int pidfd,
			  uint8_t *src, uint8_t *dst, size_t len,
			  uint32_t rseed, uint32_t wseed)
{
	struct iovec l = { .iov_base = dst, .iov_len = len };
	struct iovec r = { .iov_base = src, .iov_len = len };

	pvm_fill(src, len, rseed);
	memset(dst, 0, len);
	EXPECT_EQ(len, pvm_res(pvm_readv(pidfd, &l, 1, &r, 1,
					 PROCESS_VM_PIDFD)));
	EXPECT_EQ(-1, pvm_check(dst, len, rseed));

	/* Write: local is the source, remote the destination. */
	pvm_fill(dst, len, wseed);
	memset(src, 0, len);
	EXPECT_EQ(len, pvm_res(pvm_writev(pidfd, &l, 1, &r, 1,
					  PROCESS_VM_PIDFD)));
	EXPECT_EQ(-1, pvm_check(src, len, wseed));
}

/* PROCESS_VM_PIDFD on a pidfd of the caller itself, read and write. */
TEST(pidfd_self)
{
	uint8_t src[300], dst[300];
	struct iovec l = { .iov_base = dst, .iov_len = sizeof(dst) };
	struct iovec r = { .iov_base = src, .iov_len = sizeof(src) };
	int pidfd;

	if (!pvm_flags_supported())
		SKIP(return, "process_vm flags not supported by this kernel");

	pidfd = sys_pidfd_open(getpid(), 0);
	ASSERT_GE(pidfd, 0);
	pidfd_self_rw(_metadata, pidfd, src, dst, sizeof(dst), 0x5a, 0xa7);

	/* Both flags together, on resident memory: a full copy. */
	memset(dst, 0, sizeof(dst));
	EXPECT_EQ(sizeof(dst),
		  pvm_res(pvm_readv(pidfd, &l, 1, &r, 1,
				    PROCESS_VM_PIDFD | PROCESS_VM_NOWAIT)));
	EXPECT_EQ(-1, pvm_check(dst, sizeof(dst), 0xa7));

	EXPECT_EQ(0, close(pidfd));
}

/* A PIDFD_THREAD pidfd of the thread-group leader works. */
TEST(pidfd_thread_leader)
{
	uint8_t src[64], dst[64];
	int pidfd;

	if (!pvm_flags_supported())
		SKIP(return, "process_vm flags not supported by this kernel");

	pidfd = sys_pidfd_open(getpid(), PIDFD_THREAD);
	if (pidfd < 0 && errno == EINVAL)
		SKIP(return, "PIDFD_THREAD not supported");
	ASSERT_GE(pidfd, 0);
	pidfd_self_rw(_metadata, pidfd, src, dst, sizeof(dst), 0x33, 0x44);

	EXPECT_EQ(0, close(pidfd));
}

struct thread_info {
	pid_t tid;
	int ready[2];	/* thread -> main: tid is valid */
	int quit[2];	/* main -> thread: exit (closed) */
};

static void *tid_thread(void *arg)
{
	struct thread_info *ti = arg;
	char c = 0;

	ti->tid = syscall(__NR_gettid);
	if (write(ti->ready[1], &c, 1) != 1)
		return NULL;
	if (read(ti->quit[0], &c, 1) < 0)
		return NULL;
	return NULL;
}

/* A PIDFD_THREAD pidfd of a thread that is not the leader: ESRCH. */
TEST(pidfd_thread_non_leader)
{
	struct thread_info ti = { 0 };
	uint8_t src[64], dst[64];
	struct iovec l = { .iov_base = dst, .iov_len = sizeof(dst) };
	struct iovec r = { .iov_base = src, .iov_len = sizeof(src) };
	pthread_t th;
	int pidfd, w;
	char c;

	if (!pvm_flags_supported())
		SKIP(return, "process_vm flags not supported by this kernel");

	ASSERT_EQ(0, pipe(ti.ready));
	ASSERT_EQ(0, pipe(ti.quit));
	ASSERT_EQ(0, pthread_create(&th, NULL, tid_thread, &ti));
	ASSERT_EQ(1, read(ti.ready[0], &c, 1));
	ASSERT_NE(getpid(), ti.tid);

	pidfd = sys_pidfd_open(ti.tid, PIDFD_THREAD);
	if (pidfd < 0 && errno == EINVAL) {
		close(ti.quit[1]);
		pthread_join(th, NULL);
		SKIP(return, "PIDFD_THREAD not supported");
	}
	ASSERT_GE(pidfd, 0);

	pvm_fill(src, sizeof(src), 0x21);
	memset(dst, 0, sizeof(dst));
	for (w = 0; w < 2; w++) {
		EXPECT_EQ(-ESRCH, pvm_res(pvm_rwf(w, pidfd, &l, 1, &r, 1,
						  PROCESS_VM_PIDFD)));
		EXPECT_EQ(-ESRCH,
			  pvm_res(pvm_rwf(w, pidfd, &l, 1, &r, 1,
					  PROCESS_VM_PIDFD |
					  PROCESS_VM_NOWAIT)));
	}
	/* Neither the reads nor the writes moved anything. */
	EXPECT_EQ(-1, pvm_check(src, sizeof(src), 0x21));
	EXPECT_EQ(-1, pvm_check_byte(dst, sizeof(dst), 0));

	EXPECT_EQ(0, close(pidfd));
	EXPECT_EQ(0, close(ti.quit[1]));
	EXPECT_EQ(0, pthread_join(th, NULL));
}

/* Anything that is not an open pidfd is EBADF with PROCESS_VM_PIDFD. */
TEST(pidfd_bad_fd)
{
	static const unsigned long modes[] = {
		PROCESS_VM_PIDFD,
		PROCESS_VM_PIDFD | PROCESS_VM_NOWAIT,
	};
	char src[32] = "not to be copied", dst[32];
	struct iovec l = { .iov_base = dst, .iov_len = sizeof(dst) };
	struct iovec r = { .iov_base = src, .iov_len = sizeof(src) };
	int fds[16], nfds = 0, p[2], sk, closed, i, w;
	unsigned int f;

	if (!pvm_flags_supported())
		SKIP(return, "process_vm flags not supported by this kernel");

	/* Regular files. */
	fds[nfds] = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	ASSERT_GE(fds[nfds++], 0);
	fds[nfds] = memfd_create("pvm", MFD_CLOEXEC);
	ASSERT_GE(fds[nfds++], 0);
	/* A character device. */
	fds[nfds] = open("/dev/null", O_RDWR | O_CLOEXEC);
	ASSERT_GE(fds[nfds++], 0);
	/* Sockets. */
	sk = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ASSERT_GE(sk, 0);
	fds[nfds++] = sk;
	sk = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sk >= 0)
		fds[nfds++] = sk;
	/* A pipe. */
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	fds[nfds++] = p[0];
	fds[nfds++] = p[1];
	/* A /proc/<pid> directory is not a pidfd either. */
	fds[nfds] = open("/proc/self", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ASSERT_GE(fds[nfds++], 0);
	/* Nor is stdin, whatever it is. */
	fds[nfds++] = 0;

	/* A closed fd. */
	closed = dup(fds[0]);
	ASSERT_GE(closed, 0);
	ASSERT_EQ(0, close(closed));

	for (f = 0; f < ARRAY_SIZE(modes); f++) {
		for (w = 0; w < 2; w++) {
			for (i = 0; i < nfds; i++) {
				EXPECT_EQ(-EBADF,
					  pvm_res(pvm_rwf(w, fds[i], &l, 1,
							  &r, 1, modes[f]))) {
					TH_LOG("fd #%d (%d), write %d, flags %#lx",
					       i, fds[i], w, modes[f]);
				}
			}
			EXPECT_EQ(-EBADF, pvm_res(pvm_rwf(w, closed, &l, 1,
							  &r, 1, modes[f])));
			EXPECT_EQ(-EBADF, pvm_res(pvm_rwf(w, -1, &l, 1, &r, 1,
							  modes[f])));
			EXPECT_EQ(-EBADF, pvm_res(pvm_rwf(w, INT_MAX, &l, 1,
							  &r, 1, modes[f])));
		}
	}
	EXPECT_STREQ("not to be copied", src);

	for (i = 0; i < nfds; i++)
		if (fds[i] > 2)
			close(fds[i]);
}

/* ---- tests on a child target ------------------------------------------ */

/*
 * region: REGION_PAGES anonymous pages, mapped before a target is forked
 * so that it has them at the same address, untouched unless a test says.
 * buf: a local buffer of the same size.
 */
FIXTURE(pvm)
{
	struct pvm_target t, t2;
	int pidfd, pidfd2;
	uint8_t *region;
	uint8_t *buf;
	size_t len;
	size_t psz;
};

/* One call on the fixture's main target, by pid or by self->pidfd */
static long fx_rw(FIXTURE_DATA(pvm) *self, bool write, unsigned long flags,
		  const struct iovec *l, unsigned long ln,
		  const struct iovec *r, unsigned long rn)
{
	return tgt_rw(&self->t, self->pidfd, write, flags, l, ln, r, rn);
}

/* fx_rw() of @len bytes at @local and at offset @off of the region */
static long fx_rw1(FIXTURE_DATA(pvm) *self, bool write, unsigned long flags,
		   void *local, size_t off, size_t len)
{
	return tgt_rw1(&self->t, self->pidfd, write, flags, local,
		       self->region + off, len);
}

/* Run @fn on @len bytes at offset @off of the region in the main target */
static long fx_call(FIXTURE_DATA(pvm) *self, pvm_fn fn, size_t off,
		    unsigned long len, unsigned long arg)
{
	return pvm_target_call(&self->t, fn,
			       (unsigned long)self->region + off, len, arg);
}

FIXTURE_SETUP(pvm)
{
	self->t.pid = -1;
	self->t2.pid = -1;
	self->pidfd = -1;
	self->pidfd2 = -1;

	if (!pvm_flags_supported())
		SKIP(return, "process_vm flags not supported by this kernel");

	self->psz = PVM_PAGE;
	self->len = REGION_PAGES * self->psz;
	self->region = pvm_map_anon(self->len);
	ASSERT_TRUE(!!self->region);
	/* A THP would make a whole range resident on the first touch. */
	madvise(self->region, self->len, MADV_NOHUGEPAGE);
	self->buf = pvm_map_anon(self->len);
	ASSERT_TRUE(!!self->buf);
}

FIXTURE_TEARDOWN(pvm)
{
	if (self->t.pid > 0)
		EXPECT_EQ(0, pvm_target_stop(&self->t));
	if (self->t2.pid > 0)
		EXPECT_EQ(0, pvm_target_stop(&self->t2));
	if (self->pidfd >= 0)
		close(self->pidfd);
	if (self->pidfd2 >= 0)
		close(self->pidfd2);
}

/* Read and write a child by pidfd (and by pid), data verified. */
TEST_F(pvm, pidfd_child_read_write)
{
	size_t psz = self->psz;
	size_t len = self->len, off = psz / 2 + 3, n = psz + 17;
	unsigned int m;

	ASSERT_EQ(0, target_fork(&self->t, &self->pidfd));

	for (m = 0; m < ARRAY_SIZE(pid_modes); m++) {
		unsigned long flags = pid_modes[m];
		uint32_t seed = 0x10 + m;

		ASSERT_EQ(0, fx_call(self, pvm_cmd_fill, 0, len, seed));
		memset(self->buf, 0, len);
		EXPECT_EQ(len, fx_rw1(self, false, flags, self->buf, 0, len));
		EXPECT_EQ(-1, pvm_check(self->buf, len, seed));

		/* An unaligned piece across a page boundary. */
		memset(self->buf, 0, len);
		EXPECT_EQ(n, fx_rw1(self, false, flags, self->buf, off, n));
		EXPECT_EQ(-1, pvm_check_at(self->buf, n, seed, off));
		EXPECT_EQ(-1, pvm_check_byte(self->buf + n, len - n, 0));

		pvm_fill(self->buf, len, seed + 0x40);
		EXPECT_EQ(len, fx_rw1(self, true, flags, self->buf, 0, len));
		EXPECT_EQ(-1, fx_call(self, pvm_cmd_check, 0, len,
				      seed + 0x40));

		pvm_fill(self->buf, n, seed + 0x80);
		EXPECT_EQ(n, fx_rw1(self, true, flags, self->buf, off, n));
		EXPECT_EQ(-1, fx_call(self, pvm_cmd_check, off, n,
				      seed + 0x80));
	}
}

/* The pidfd returned by clone3(CLONE_PIDFD). */
TEST_F(pvm, clone3_pidfd_read_write)
{
	size_t psz = self->psz;
	struct clone_args args = {
		.flags = CLONE_PIDFD,
		.pidfd = (uintptr_t)&self->pidfd,
		.exit_signal = SIGCHLD,
	};
	size_t len = 3 * psz;

	if (pvm_target_start_clone(&self->t, &args, setup_target, 0, 0, 0) &&
	    self->t.pid < 0 && pvm_syscall_missing(errno))
		SKIP(return, "clone3 not supported");
	ASSERT_GT(self->t.pid, 0);
	ASSERT_GE(self->pidfd, 0);

	ASSERT_EQ(0, fx_call(self, pvm_cmd_fill, 0, len, 0x61));
	memset(self->buf, 0, len);
	EXPECT_EQ(len, fx_rw1(self, false, PROCESS_VM_PIDFD, self->buf, 0,
			      len));
	EXPECT_EQ(-1, pvm_check(self->buf, len, 0x61));

	pvm_fill(self->buf, len, 0x62);
	EXPECT_EQ(len, fx_rw1(self, true, PROCESS_VM_PIDFD, self->buf, 0, len));
	EXPECT_EQ(-1, fx_call(self, pvm_cmd_check, 0, len, 0x62));
}

/* An exited child not yet reaped (a zombie) has no mm left: ESRCH. */
TEST_F(pvm, pidfd_zombie)
{
	size_t psz = self->psz;
	int w;

	ASSERT_EQ(0, target_fork(&self->t, &self->pidfd));
	ASSERT_EQ(0, fx_call(self, pvm_cmd_fill, 0, psz, 0x71));
	/* Closing the command pipe makes it exit. */
	close(self->t.cmd);
	self->t.cmd = -1;
	ASSERT_EQ(0, pvm_wait_zombie(self->t.pid));

	for (w = 0; w < 2; w++) {
		EXPECT_EQ(-ESRCH, fx_rw1(self, w, PROCESS_VM_PIDFD, self->buf,
					 0, psz));
		EXPECT_EQ(-ESRCH, fx_rw1(self, w,
					 PROCESS_VM_PIDFD | PROCESS_VM_NOWAIT,
					 self->buf, 0, psz));
	}
	EXPECT_EQ(0, pvm_target_stop(&self->t));
}

/*
 * The pidfd of an exited and reaped child fails with ESRCH, also after its
 * pid number was given to a new process, which the pid form then reaches.
 */
TEST_F_TIMEOUT(pvm, pidfd_reused_pid, 120)
{
	uint8_t *region = self->region;
	size_t psz = self->psz;
	size_t len = 2 * psz;
	const char *why;
	pid_t oldpid;
	int w;

	ASSERT_EQ(0, target_fork(&self->t, &self->pidfd));
	ASSERT_EQ(0, fx_call(self, pvm_cmd_fill, 0, len, 0x0d));
	EXPECT_EQ(len, fx_rw1(self, false, PROCESS_VM_PIDFD, self->buf, 0,
			      len));
	EXPECT_EQ(-1, pvm_check(self->buf, len, 0x0d));

	oldpid = self->t.pid;
	EXPECT_EQ(0, pvm_target_stop(&self->t));	/* exit, reap */

	/* Exited and reaped, the number not reused (yet). */
	for (w = 0; w < 2; w++)
		EXPECT_EQ(-ESRCH, fx_rw1(self, w, PROCESS_VM_PIDFD, self->buf,
					 0, len));

	why = target_reuse_pid(&self->t2, &self->pidfd2, oldpid);
	if (why)
		SKIP(return, "cannot reuse pid %d: %s", oldpid, why);
	ASSERT_EQ(oldpid, self->t2.pid);
	ASSERT_EQ(0, pvm_target_call(&self->t2, pvm_cmd_fill,
				     (unsigned long)region, len, 0xe2));

	/* The pid number now names the new process... */
	memset(self->buf, 0, len);
	EXPECT_EQ(len, tgt_rw1(&self->t2, -1, false, 0, self->buf,
			       region, len));
	EXPECT_EQ(-1, pvm_check(self->buf, len, 0xe2));

	/* ...the old pidfd still names the dead one, in every mode. */
	pvm_fill(self->buf, len, 0x99);
	for (w = 0; w < 2; w++) {
		EXPECT_EQ(-ESRCH, fx_rw1(self, w, PROCESS_VM_PIDFD, self->buf,
					 0, len));
		EXPECT_EQ(-ESRCH, fx_rw1(self, w,
					 PROCESS_VM_PIDFD | PROCESS_VM_NOWAIT,
					 self->buf, 0, len));
	}
	/* The writes did not reach the new process. */
	EXPECT_EQ(-1, pvm_target_call(&self->t2, pvm_cmd_check,
				      (unsigned long)region, len, 0xe2));
	/* A pidfd of the new process works. */
	memset(self->buf, 0, len);
	EXPECT_EQ(len, tgt_rw1(&self->t2, self->pidfd2, false,
			       PROCESS_VM_PIDFD, self->buf, region, len));
	EXPECT_EQ(-1, pvm_check(self->buf, len, 0xe2));
}

static int send_fd(int sk, int fd)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char c = 'F';
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = cbuf,
		.msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cmsg = CMSG_FIRSTHDR(&msg);

	cmsg->cmsg_level = SOL_SOCKET;
	cmsg->cmsg_type = SCM_RIGHTS;
	cmsg->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cmsg), &fd, sizeof(int));
	return sendmsg(sk, &msg, 0) == 1 ? 0 : -1;
}

static int recv_fd(int sk)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	char c;
	struct iovec iov = { .iov_base = &c, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = cbuf,
		.msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cmsg;
	int fd;

	if (recvmsg(sk, &msg, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	cmsg = CMSG_FIRSTHDR(&msg);
	if (!cmsg || cmsg->cmsg_level != SOL_SOCKET ||
	    cmsg->cmsg_type != SCM_RIGHTS)
		return -1;
	memcpy(&fd, CMSG_DATA(cmsg), sizeof(int));
	return fd;
}

static int drop_to_nobody(void)
{
	if (setgroups(0, NULL) ||
	    setresgid(GID_NOBODY, GID_NOBODY, GID_NOBODY))
		return -1;
	return setresuid(UID_NOBODY, UID_NOBODY, UID_NOBODY);
}

/*
 * How a child of the pidfd permission tests ends: CHILD_OK when every
 * call gave what it expected, else the first step that did not.  The
 * parent expects CHILD_OK, so a failure prints the step's value.
 */
enum child_exit {
	CHILD_OK = 0,
	CHILD_NO_BUFFER = 10,	/* malloc() failed */
	CHILD_NO_PIDFD,		/* none received, or pidfd_open() failed */
	CHILD_NOT_NOBODY,	/* could not switch to nobody */
	CHILD_READ_NOT_EPERM,	/* a read by pidfd as nobody */
	CHILD_WRITE_NOT_EPERM,	/* a write by pidfd as nobody */
	CHILD_PID_NOT_EPERM,	/* a read by pid as nobody */
	CHILD_READ_SHORT,	/* a read by pidfd: not all of it */
	CHILD_READ_WRONG,	/* a read by pidfd: other data */
	CHILD_WRITE_SHORT,	/* a write by pidfd: not all of it */
	CHILD_KILLED,		/* it did not exit: a signal killed it */
	CHILD_LOST,		/* it could not be forked or waited for */
};

/*
 * Reader child: receives a pidfd over @sk and uses it on the target, whose
 * @region holds pattern 0x3c.  With @drop it first becomes nobody and must
 * get EPERM, like with the pid form.
 */
static enum child_exit scm_reader(int sk, void *region, size_t len,
				  bool drop, pid_t target_pid)
{
	uint8_t *buf = malloc(len);
	struct iovec l = { .iov_base = buf, .iov_len = len };
	struct iovec r = { .iov_base = region, .iov_len = len };
	int pidfd;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (!buf)
		return CHILD_NO_BUFFER;
	pidfd = recv_fd(sk);
	if (pidfd < 0)
		return CHILD_NO_PIDFD;
	if (drop) {
		if (drop_to_nobody())
			return CHILD_NOT_NOBODY;
		if (pvm_res(pvm_readv(pidfd, &l, 1, &r, 1,
				      PROCESS_VM_PIDFD)) != -EPERM)
			return CHILD_READ_NOT_EPERM;
		if (pvm_res(pvm_writev(pidfd, &l, 1, &r, 1,
				       PROCESS_VM_PIDFD)) != -EPERM)
			return CHILD_WRITE_NOT_EPERM;
		if (pvm_res(pvm_readv(target_pid, &l, 1, &r, 1, 0)) != -EPERM)
			return CHILD_PID_NOT_EPERM;
		return CHILD_OK;
	}
	if (pvm_res(pvm_readv(pidfd, &l, 1, &r, 1, PROCESS_VM_PIDFD)) !=
	    (long)len)
		return CHILD_READ_SHORT;
	if (pvm_check(buf, len, 0x3c) != -1)
		return CHILD_READ_WRONG;
	pvm_fill(buf, len, 0x3d);
	if (pvm_res(pvm_writev(pidfd, &l, 1, &r, 1, PROCESS_VM_PIDFD)) !=
	    (long)len)
		return CHILD_WRITE_SHORT;
	return CHILD_OK;
}

/* Pass @pidfd to a forked scm_reader(); how it ended. */
static enum child_exit run_scm_reader(int pidfd, pid_t target_pid,
				      void *region, size_t len, bool drop)
{
	int sk[2], status;
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sk))
		return CHILD_LOST;
	pid = fork();
	if (pid < 0)
		return CHILD_LOST;
	if (pid == 0) {
		close(sk[0]);
		_exit(scm_reader(sk[1], region, len, drop, target_pid));
	}
	close(sk[1]);
	if (send_fd(sk[0], pidfd))
		kill(pid, SIGKILL);
	close(sk[0]);
	if (waitpid(pid, &status, 0) != pid)
		return CHILD_LOST;
	if (!WIFEXITED(status))
		return CHILD_KILLED;
	return WEXITSTATUS(status);
}

/* A pidfd received over SCM_RIGHTS works like one opened locally. */
TEST_F(pvm, pidfd_scm_rights)
{
	uint8_t *region = self->region;
	size_t psz = self->psz;
	size_t len = 2 * psz + 100;

	ASSERT_EQ(0, target_fork(&self->t, &self->pidfd));
	ASSERT_EQ(0, fx_call(self, pvm_cmd_fill, 0, len, 0x3c));
	EXPECT_EQ(CHILD_OK, run_scm_reader(self->pidfd, self->t.pid, region,
					   len, false));
	EXPECT_EQ(-1, fx_call(self, pvm_cmd_check, 0, len, 0x3d));
}

/*
 * Permission is checked against the caller at call time, not against the
 * opener: root's pidfd used by a process that became nobody gets EPERM.
 */
TEST_F(pvm, pidfd_scm_rights_eperm)
{
	uint8_t *region = self->region;
	size_t psz = self->psz;
	size_t len = psz;

	if (geteuid() != 0)
		SKIP(return, "needs root to switch to nobody");
	ASSERT_EQ(0, target_fork(&self->t, &self->pidfd));
	ASSERT_EQ(0, fx_call(self, pvm_cmd_fill, 0, len, 0x3c));
	EXPECT_EQ(CHILD_OK, run_scm_reader(self->pidfd, self->t.pid, region,
					   len, true));
	/* The refused write changed nothing... */
	EXPECT_EQ(-1, fx_call(self, pvm_cmd_check, 0, len, 0x3c));
	/* ...and the opener still has access. */
	EXPECT_EQ(len, fx_rw1(self, false, PROCESS_VM_PIDFD, self->buf, 0,
			      len));
	EXPECT_EQ(-1, pvm_check(self->buf, len, 0x3c));
}

/* A pidfd opened by an unprivileged caller: EPERM, as by pid. */
TEST_F(pvm, pidfd_eperm)
{
	uint8_t *region = self->region;
	size_t psz = self->psz;
	size_t len = psz;
	int status;
	pid_t pid;

	if (geteuid() != 0)
		SKIP(return, "needs root to switch to nobody");
	ASSERT_EQ(0, target_fork(&self->t, &self->pidfd));
	ASSERT_EQ(0, fx_call(self, pvm_cmd_fill, 0, len, 0x3c));

	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		int pidfd;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (drop_to_nobody())
			_exit(CHILD_NOT_NOBODY);
		pidfd = sys_pidfd_open(self->t.pid, 0);
		if (pidfd < 0)
			_exit(CHILD_NO_PIDFD);
		if (tgt_rw1(&self->t, pidfd, false, 0, self->buf,
			    region, len) != -EPERM)
			_exit(CHILD_PID_NOT_EPERM);
		if (tgt_rw1(&self->t, pidfd, false, PROCESS_VM_PIDFD,
			    self->buf, region, len) != -EPERM)
			_exit(CHILD_READ_NOT_EPERM);
		if (tgt_rw1(&self->t, pidfd, true,
			    PROCESS_VM_PIDFD | PROCESS_VM_NOWAIT,
			    self->buf, region, len) != -EPERM)
			_exit(CHILD_WRITE_NOT_EPERM);
		_exit(CHILD_OK);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(CHILD_OK, WEXITSTATUS(status));
	EXPECT_EQ(-1, fx_call(self, pvm_cmd_check, 0, len, 0x3c));
}

/* ---- PROCESS_VM_NOWAIT ------------------------------------------------ */

/* Resident, writable pages: a full copy, both directions. */
TEST_F(pvm, nowait_resident)
{
	size_t len = self->len;
	unsigned int m;

	ASSERT_EQ(0, target_fork(&self->t, &self->pidfd));
	for (m = 0; m < ARRAY_SIZE(nowait_modes); m++) {
		unsigned long flags = nowait_modes[m];

		ASSERT_EQ(0, fx_call(self, pvm_cmd_fill, 0, len, 0x20 + m));
		memset(self->buf, 0, len);
		EXPECT_EQ(len, fx_rw1(self, false, flags, self->buf, 0, len));
		EXPECT_EQ(-1, pvm_check(self->buf, len, 0x20 + m));

		pvm_fill(self->buf, len, 0x30 + m);
		EXPECT_EQ(len, fx_rw1(self, true, flags, self->buf, 0, len));
		EXPECT_EQ(-1, fx_call(self, pvm_cmd_check, 0, len, 0x30 + m));
	}
}

/*
 * Never touched anonymous memory: NOWAIT fails with EFAULT and does not
 * fault the pages in; without NOWAIT the same calls succeed.
 */
TEST_F(pvm, nowait_untouched)
{
	size_t psz = self->psz;
	size_t len = 2 * psz;
	unsigned int m;
	int w;

	ASSERT_EQ(0, target_fork(&self->t, &self->pidfd));
	for (m = 0; m < ARRAY_SIZE(nowait_modes); m++) {
		for (w = 0; w < 2; w++) {
			memset(self->buf, 0xff, len);
			EXPECT_EQ(-EFAULT, fx_rw1(self, w, nowait_modes[m],
						  self->buf, 0, len));
			/* Still not resident: the same again. */
			EXPECT_EQ(-EFAULT, fx_rw1(self, w, nowait_modes[m],
						  self->buf, psz, 1));
			EXPECT_EQ(-EFAULT, fx_rw1(self, w, nowait_modes[m],
						  self->buf, 0, 1));
		}
	}
	EXPECT_EQ(-1, pvm_check_byte(self->buf, len, 0xff));

	memset(self->buf, 0xff, len);
	EXPECT_EQ(len, fx_rw1(self, false, PROCESS_VM_PIDFD, self->buf, 0,
			      len));
	EXPECT_EQ(-1, pvm_check_byte(self->buf, len, 0));

	pvm_fill(self->buf, len, 0x42);
	EXPECT_EQ(len, fx_rw1(self, true, 0, self->buf, 0, len));
	EXPECT_EQ(-1, fx_call(self, pvm_cmd_check, 0, len, 0x42));
	/* Resident and writable now. */
	memset(self->buf, 0, len);
	EXPECT_EQ(len, fx_rw1(self, false, PROCESS_VM_NOWAIT, self->buf, 0,
			      len));
	EXPECT_EQ(-1, pvm_check(self->buf, len, 0x42));
	EXPECT_EQ(len, fx_rw1(self, true, PROCESS_VM_NOWAIT, self->buf, 0,
			      len));
}

/* Pages dropped with MADV_DONTNEED are not resident any more. */
TEST_F(pvm, nowait_dontneed)
{
	size_t psz = self->psz;
	size_t len = 3 * psz;
	unsigned int m;
	int w;

	ASSERT_EQ(0, target_fork(&self->t, &self->pidfd));
	ASSERT_EQ(0, fx_call(self, pvm_cmd_fill, 0, len, 0x51));
	EXPECT_EQ(len, fx_rw1(self, false, PROCESS_VM_NOWAIT, self->buf, 0,
			      len));
	EXPECT_EQ(-1, pvm_check(self->buf, len, 0x51));

	ASSERT_EQ(0, fx_call(self, pvm_cmd_madvise, 0, len, MADV_DONTNEED));
	for (m = 0; m < ARRAY_SIZE(nowait_modes); m++)
		for (w = 0; w < 2; w++)
			EXPECT_EQ(-EFAULT, fx_rw1(self, w, nowait_modes[m],
						  self->buf, 0, len));

	memset(self->buf, 0xff, len);
	EXPECT_EQ(len, fx_rw1(self, false, PROCESS_VM_PIDFD, self->buf, 0,
			      len));
	EXPECT_EQ(-1, pvm_check_byte(self->buf, len, 0));
}

/*
 * A page the target only read maps the shared zero page: resident for a
 * NOWAIT read (zeros), but a write needs a (COW) fault: EFAULT.
 */
TEST_F(pvm, nowait_zero_page)
{
	size_t psz = self->psz;
	size_t len = psz;
	unsigned int m;

	ASSERT_EQ(0, target_fork(&self->t, &self->pidfd));
	ASSERT_EQ(0, fx_call(self, cmd_touch_read, 0, len, 0));

	for (m = 0; m < ARRAY_SIZE(nowait_modes); m++) {
		memset(self->buf, 0xff, len);
		EXPECT_EQ(len, fx_rw1(self, false, nowait_modes[m], self->buf,
				      0, len));
		EXPECT_EQ(-1, pvm_check_byte(self->buf, len, 0));

		pvm_fill(self->buf, len, 0x66);
		EXPECT_EQ(-EFAULT, fx_rw1(self, true, nowait_modes[m],
					  self->buf, 0, len));
	}
	EXPECT_EQ(-1, fx_call(self, cmd_check_zero, 0, len, 0));

	pvm_fill(self->buf, len, 0x67);
	EXPECT_EQ(len, fx_rw1(self, true, PROCESS_VM_PIDFD, self->buf, 0, len));
	EXPECT_EQ(-1, fx_call(self, pvm_cmd_check, 0, len, 0x67));
}

/*
 * Inside one remote iovec the copy stops at the first non-resident page:
 * the count is the bytes up to that page's boundary.
 */
TEST_F(pvm, nowait_partial_one_iovec)
{
	size_t psz = self->psz;
	size_t off = psz + 100;
	unsigned int m;

	ASSERT_EQ(0, target_fork(&self->t, &self->pidfd));
	/* Pages 0 and 1 resident, 2.. not. */
	ASSERT_EQ(0, fx_call(self, pvm_cmd_fill, 0, 2 * psz, 0x71));

	for (m = 0; m < ARRAY_SIZE(nowait_modes); m++) {
		unsigned long flags = nowait_modes[m];

		/* From inside page 1 into page 2. */
		memset(self->buf, 0, 2 * psz);
		EXPECT_EQ(psz - 100, fx_rw1(self, false, flags, self->buf, off,
					    psz));
		EXPECT_EQ(-1, pvm_check_at(self->buf, psz - 100, 0x71, off));
		EXPECT_EQ(-1, pvm_check_byte(self->buf + psz - 100, 100, 0));

		/* Two whole resident pages of four. */
		memset(self->buf, 0, 4 * psz);
		EXPECT_EQ(2 * psz, fx_rw1(self, false, flags, self->buf, 0,
					  4 * psz));
		EXPECT_EQ(-1, pvm_check(self->buf, 2 * psz, 0x71));
		EXPECT_EQ(-1, pvm_check_byte(self->buf + 2 * psz, 2 * psz, 0));

		/* Write from inside page 1 into page 2. */
		pvm_fill(self->buf, psz, 0x72 + m);
		EXPECT_EQ(psz - 100, fx_rw1(self, true, flags, self->buf, off,
					    psz));
		EXPECT_EQ(-1, fx_call(self, pvm_cmd_check, off, psz - 100,
				      0x72 + m));
		/* The bytes before it in page 1 are untouched. */
		memset(self->buf, 0, 100);
		EXPECT_EQ(100, fx_rw1(self, false, 0, self->buf, psz, 100));
		EXPECT_EQ(-1, pvm_check_at(self->buf, 100, 0x71, psz));

		ASSERT_EQ(0, fx_call(self, pvm_cmd_fill, 0, 2 * psz, 0x71));
	}
	/* Page 2 is still not resident: the write did not fault it in. */
	EXPECT_EQ(-EFAULT, fx_rw1(self, false, PROCESS_VM_NOWAIT, self->buf,
				  2 * psz, 1));
	EXPECT_EQ(-1, fx_call(self, cmd_check_zero, 2 * psz, psz, 0));
}

/* @len bytes at @off in page @page of the region; @len 0: the page */
struct piece {
	unsigned int page;
	size_t off, len;
};

/*
 * NOWAIT reads of three pieces of the region, in which pages 0, 2 and 4
 * are resident and 1 and 3 not: the copy takes the @copied leading pieces
 * and stops at the first that is not resident.
 */
static const struct nowait_read {
	const char *what;
	struct piece r[3];
	unsigned int copied;
} nowait_reads[] = {
	{ "[page 0][page 1][page 2]: page 0",
	  { { 0 }, { 1 }, { 2 } }, 1 },
	{ "[200 bytes in page 0][page 3][page 4]: 200 bytes",
	  { { 0, 50, 200 }, { 3 }, { 4 } }, 1 },
	{ "[page 0][page 2][1 byte of page 3]: two pages",
	  { { 0 }, { 2 }, { 3, 0, 1 } }, 2 },
};

/* One of nowait_reads[] with @flags; the region holds pattern 0x81. */
static void nowait_read(struct __test_metadata *_metadata,
			FIXTURE_DATA(pvm) *self, unsigned long flags,
			const struct nowait_read *c)
{
	size_t psz = self->psz, total = 0, want = 0, pos = 0;
	size_t roff[ARRAY_SIZE(c->r)];
	struct iovec l, r[ARRAY_SIZE(c->r)];
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(c->r); i++) {
		roff[i] = c->r[i].page * psz + c->r[i].off;
		r[i].iov_base = self->region + roff[i];
		r[i].iov_len = c->r[i].len ? c->r[i].len : psz;
		total += r[i].iov_len;
		if (i < c->copied)
			want += r[i].iov_len;
	}
	l = (struct iovec){ self->buf, total };
	memset(self->buf, 0, total);
	EXPECT_EQ(want, fx_rw(self, false, flags, &l, 1, r, ARRAY_SIZE(r)))
		TH_LOG("%s, flags %#lx", c->what, flags);
	for (i = 0; i < c->copied; i++) {
		EXPECT_EQ(-1, pvm_check_at(self->buf + pos, r[i].iov_len,
					   0x81, roff[i]))
			TH_LOG("%s: piece %u", c->what, i);
		pos += r[i].iov_len;
	}
	/* nothing beyond */
	EXPECT_EQ(-1, pvm_check_byte(self->buf + want, total - want, 0))
		TH_LOG("%s", c->what);
}

TEST_F(pvm, nowait_partial_iovecs)
{
	uint8_t *region = self->region;
	size_t psz = self->psz;
	struct iovec l, r[3];
	unsigned int m, i;
	int w;

	ASSERT_EQ(0, target_fork(&self->t, &self->pidfd));
	/* Pages 0, 2 and 4 resident; 1 and 3 not. */
	ASSERT_EQ(0, fx_call(self, pvm_cmd_fill, 0, 5 * psz, 0x81));
	ASSERT_EQ(0, fx_call(self, pvm_cmd_madvise, psz, psz, MADV_DONTNEED));
	ASSERT_EQ(0, fx_call(self, pvm_cmd_madvise, 3 * psz, psz,
			     MADV_DONTNEED));

	for (m = 0; m < ARRAY_SIZE(nowait_modes); m++) {
		unsigned long flags = nowait_modes[m];

		for (i = 0; i < ARRAY_SIZE(nowait_reads); i++)
			nowait_read(_metadata, self, flags, &nowait_reads[i]);

		/* Split local iovecs do not matter: [page 0][page 1]. */
		{
			struct iovec l2[2] = {
				{ self->buf, 10 },
				{ self->buf + psz, 2 * psz - 10 },
			};

			r[0] = (struct iovec){ region, psz };
			r[1] = (struct iovec){ region + psz, psz };
			EXPECT_EQ(psz, fx_rw(self, false, flags, l2, 2, r, 2));
		}

		/* [page 1][page 2]: nothing, EFAULT. */
		for (w = 0; w < 2; w++) {
			r[0] = (struct iovec){ region + psz, psz };
			r[1] = (struct iovec){ region + 2 * psz, psz };
			l = (struct iovec){ self->buf, 2 * psz };
			EXPECT_EQ(-EFAULT, fx_rw(self, w, flags, &l, 1, r, 2));
		}

		/* Write [page 2][page 3][page 4]: page 2. */
		r[0] = (struct iovec){ region + 2 * psz, psz };
		r[1] = (struct iovec){ region + 3 * psz, psz };
		r[2] = (struct iovec){ region + 4 * psz, psz };
		l = (struct iovec){ self->buf, 3 * psz };
		pvm_fill(self->buf, 3 * psz, 0x90 + m);
		EXPECT_EQ(psz, fx_rw(self, true, flags, &l, 1, r, 3));
		EXPECT_EQ(-1, fx_call(self, pvm_cmd_check, 2 * psz, psz,
				      0x90 + m));

		/* Restore page 2 to the region's pattern. */
		pvm_fill_at(self->buf, psz, 0x81, 2 * psz);
		EXPECT_EQ(psz, fx_rw1(self, true, flags, self->buf, 2 * psz,
				      psz));
	}
	/* Page 4 was never written: the copies stopped before it. */
	memset(self->buf, 0, psz);
	EXPECT_EQ(psz, fx_rw1(self, false, PROCESS_VM_NOWAIT, self->buf,
			      4 * psz, psz));
	EXPECT_EQ(-1, pvm_check_at(self->buf, psz, 0x81, 4 * psz));
	/* Pages 1 and 3 were not faulted in. */
	EXPECT_EQ(-EFAULT, fx_rw1(self, false, PROCESS_VM_NOWAIT, self->buf,
				  psz, 1));
	EXPECT_EQ(-EFAULT, fx_rw1(self, false, PROCESS_VM_NOWAIT, self->buf,
				  3 * psz, 1));
}

/*
 * A MAP_PRIVATE page still shared copy-on-write with the parent after fork:
 * a NOWAIT write needs the COW fault: EFAULT.  Without NOWAIT the write
 * breaks COW and leaves the parent's copy unchanged.
 */
TEST_F(pvm, nowait_cow_write)
{
	uint8_t *region = self->region;
	size_t psz = self->psz;
	size_t len = 2 * psz;
	unsigned int m;
	long ret;

	/* Written by us before the fork: shared with the child. */
	pvm_fill(region, len, 0xc1);
	ASSERT_EQ(0, target_fork(&self->t, &self->pidfd));

	/* Writes first: a pinning read could unshare the pages. */
	for (m = 0; m < ARRAY_SIZE(nowait_modes); m++) {
		pvm_fill(self->buf, len, 0xc2);
		EXPECT_EQ(-EFAULT, fx_rw1(self, true, nowait_modes[m],
					  self->buf, 0, len));
		/* Also when only the second page is written. */
		EXPECT_EQ(-EFAULT, fx_rw1(self, true, nowait_modes[m],
					  self->buf, psz, psz));
	}
	EXPECT_EQ(-1, fx_call(self, pvm_cmd_check, 0, len, 0xc1));

	/*
	 * A NOWAIT read of a shared page copies it, unless the implementation
	 * pins pages (FOLL_PIN), which needs an unshare fault first: then it
	 * is EFAULT.  Either way, nothing else.
	 */
	for (m = 0; m < ARRAY_SIZE(nowait_modes); m++) {
		memset(self->buf, 0, len);
		ret = fx_rw1(self, false, nowait_modes[m], self->buf, 0, len);
		if (ret == -EFAULT) {
			EXPECT_EQ(-1, pvm_check_byte(self->buf, len, 0));
		} else {
			EXPECT_EQ(len, ret);
			EXPECT_EQ(-1, pvm_check(self->buf, len, 0xc1));
		}
	}

	/* Without NOWAIT: COW is broken in the child only. */
	pvm_fill(self->buf, len, 0xc3);
	EXPECT_EQ(len, fx_rw1(self, true, PROCESS_VM_PIDFD, self->buf, 0, len));
	EXPECT_EQ(-1, fx_call(self, pvm_cmd_check, 0, len, 0xc3));
	EXPECT_EQ(-1, pvm_check(region, len, 0xc1));

	/* The child's pages are its own now: NOWAIT writes go through. */
	pvm_fill(self->buf, len, 0xc4);
	EXPECT_EQ(len, fx_rw1(self, true, PROCESS_VM_NOWAIT, self->buf, 0,
			      len));
	EXPECT_EQ(-1, fx_call(self, pvm_cmd_check, 0, len, 0xc4));
	EXPECT_EQ(-1, pvm_check(region, len, 0xc1));
}

/* ---- userfaultfd ------------------------------------------------------ */

/* Missing pages of a userfaultfd-registered range in ourselves. */
FIXTURE(uffd)
{
	int uffd;
	int pidfd;
	uint8_t *area;
	size_t len;
	size_t psz;
};

FIXTURE_SETUP(uffd)
{
	self->uffd = -1;
	self->pidfd = -1;
	self->area = NULL;

	if (!pvm_flags_supported())
		SKIP(return, "process_vm flags not supported by this kernel");

	self->psz = PVM_PAGE;
	self->len = 2 * self->psz;

	self->area = pvm_map_anon(self->len);
	ASSERT_TRUE(!!self->area);
	madvise(self->area, self->len, MADV_NOHUGEPAGE);

	self->uffd = pvm_uffd_register(self->area, self->len, 0,
				       O_CLOEXEC | O_NONBLOCK);
	if (self->uffd < 0)
		SKIP(return, "userfaultfd for kernel faults unavailable: %s",
		     strerror(-self->uffd));

	self->pidfd = sys_pidfd_open(getpid(), 0);
	ASSERT_GE(self->pidfd, 0);
}

FIXTURE_TEARDOWN(uffd)
{
	if (self->pidfd >= 0)
		close(self->pidfd);
	if (self->uffd >= 0)
		close(self->uffd);
	if (self->area)
		munmap(self->area, self->len);
}

static bool uffd_has_event(int uffd)
{
	struct pollfd pfd = { .fd = uffd, .events = POLLIN };

	return poll(&pfd, 1, 0) == 1;
}

/* NOWAIT does not wait for a handler (there is none): a prompt EFAULT. */
TEST_F_TIMEOUT(uffd, nowait_missing, 20)
{
	size_t psz = self->psz;
	char buf[64];
	struct iovec l = { .iov_base = buf, .iov_len = sizeof(buf) };
	struct iovec r[2] = {
		{ .iov_base = self->area, .iov_len = sizeof(buf) },
		{ .iov_base = self->area + psz, .iov_len = sizeof(buf) },
	};
	long long t0;
	int w;

	for (w = 0; w < 2; w++) {
		t0 = pvm_now_ms();
		EXPECT_EQ(-EFAULT,
			  pvm_res(pvm_rwf(w, self->pidfd, &l, 1, r, 1,
					  PROCESS_VM_PIDFD |
					  PROCESS_VM_NOWAIT)));
		EXPECT_EQ(-EFAULT, pvm_res(pvm_rwf(w, getpid(), &l, 1, &r[1],
						   1, PROCESS_VM_NOWAIT)));
		EXPECT_LT(pvm_now_ms() - t0, 2000);
	}
	/* No userfault was even raised. */
	EXPECT_FALSE(uffd_has_event(self->uffd));
}

struct uffd_server {
	int uffd;
	size_t psz;
	int npages;
	uint32_t seed;
	int served;
	int error;		/* errno; ETIMEDOUT: 10 s without a fault */
	unsigned long first_addr;
};

/* Serve @npages missing faults with UFFDIO_COPY of pattern @seed. */
static void *uffd_server_fn(void *arg)
{
	struct uffd_server *s = arg;
	uint8_t *page = pvm_map_anon(s->psz);
	struct uffd_msg msg;
	unsigned long addr;
	int ret;

	if (!page) {
		s->error = errno;
		return NULL;
	}
	while (s->served < s->npages) {
		ret = pvm_uffd_next_fault(s->uffd, 10000, &msg);
		if (ret == -EAGAIN)
			continue;
		if (ret) {
			s->error = -ret;
			break;
		}
		addr = msg.arg.pagefault.address & ~(s->psz - 1);
		if (!s->served) {
			s->first_addr = addr;
			/* Make the faulting reader measurably wait. */
			usleep(300 * 1000);
		}
		pvm_fill(page, s->psz, s->seed + addr);
		ret = pvm_uffd_copy(s->uffd, addr, page, s->psz);
		if (ret && ret != -EEXIST) {
			s->error = -ret;
			break;
		}
		s->served++;
	}
	munmap(page, s->psz);
	return NULL;
}

/*
 * Without NOWAIT the read waits for the handler's UFFDIO_COPY and returns
 * what it supplied; after that NOWAIT finds the pages resident.
 */
TEST_F_TIMEOUT(uffd, blocking_missing_served, 30)
{
	size_t psz = self->psz;
	struct uffd_server s = {
		.uffd = self->uffd,
		.psz = psz,
		.npages = 2,
		.seed = 0xd7,
	};
	uint8_t *buf = pvm_map_anon(self->len);
	struct iovec l = { .iov_base = buf, .iov_len = self->len };
	struct iovec r = { .iov_base = self->area, .iov_len = self->len };
	unsigned long a0 = (unsigned long)self->area;
	pthread_t th;
	long long t0, dt;

	ASSERT_TRUE(!!buf);
	/* Nothing is resident. */
	ASSERT_EQ(-EFAULT, pvm_res(pvm_readv(self->pidfd, &l, 1, &r, 1,
					     PROCESS_VM_PIDFD |
					     PROCESS_VM_NOWAIT)));

	ASSERT_EQ(0, pthread_create(&th, NULL, uffd_server_fn, &s));
	t0 = pvm_now_ms();
	EXPECT_EQ(self->len, pvm_res(pvm_readv(self->pidfd, &l, 1, &r, 1,
					       PROCESS_VM_PIDFD)));
	dt = pvm_now_ms() - t0;
	ASSERT_EQ(0, pthread_join(th, NULL));

	EXPECT_EQ(0, s.error) TH_LOG("uffd server: %s", strerror(s.error));
	EXPECT_EQ(2, s.served);
	EXPECT_EQ(a0, s.first_addr);
	EXPECT_GE(dt, 200);
	EXPECT_EQ(-1, pvm_check(buf, psz, 0xd7 + a0));
	EXPECT_EQ(-1, pvm_check(buf + psz, psz, 0xd7 + a0 + psz));

	memset(buf, 0, self->len);
	EXPECT_EQ(self->len, pvm_res(pvm_readv(self->pidfd, &l, 1, &r, 1,
					       PROCESS_VM_PIDFD |
					       PROCESS_VM_NOWAIT)));
	EXPECT_EQ(-1, pvm_check(buf, psz, 0xd7 + a0));
	EXPECT_EQ(-1, pvm_check(buf + psz, psz, 0xd7 + a0 + psz));
	munmap(buf, self->len);
}

TEST_HARNESS_MAIN
