// SPDX-License-Identifier: GPL-2.0
/*
 * Reference leaks in process_vm_readv(2)/process_vm_writev(2) and their
 * io_uring ops: every call takes a reference to the target's task_struct
 * and (once the lookup succeeds) to its mm_struct.  A path that forgets to
 * drop one keeps the object alive after the target has exited and been
 * reaped.  So each test counts the active objects of the mm_struct and
 * task_struct slab caches (/proc/slabinfo), churns through N short-lived
 * targets that are each read and written once, lets them exit, and
 * requires the counts to come back to the baseline.
 *
 * The churn runs in a forked driver process, so that whatever it owns (an
 * io_uring and its io-wq workers) is gone with it.  Targets are processes
 * (by pid; by clone3(CLONE_PIDFD) pidfd with PROCESS_VM_PIDFD), threads
 * (by tid), and the error paths that still take references: EPERM (the
 * caller may not attach) and EFAULT (a hole in the target).  The io_uring
 * ops run inline and with IOSQE_ASYNC.
 *
 * Tolerance: N / 10, N at least 300 and 20 per CPU.  What may legitimately
 * still hold an object once the targets are reaped: a CPU that last ran a
 * target keeps its mm as the lazy-TLB mm until it switches to another
 * process (at most one mm per CPU; the test runs itself on every CPU to end
 * that), free objects in per-CPU slabs count as active in slabinfo (the
 * caches are shrunk through /sys/kernel/slab/<cache>/shrink, which flushes
 * them, where that exists), RCU-deferred frees of task_struct and an
 * mmput_async() still queued, and unrelated processes starting on the
 * system meanwhile (the counts are polled for up to SETTLE_MS and the
 * lowest seen is judged).  A real leak keeps one object per target: N.
 *
 * Needs root (for /proc/slabinfo, drop_caches and the uid switch of the
 * EPERM test); skips when /proc/slabinfo is missing (SLUB_TINY) or does not
 * list the two caches.  PVM_LEAK_SELFTEST_FAKE=1 checks the checker: the
 * targets are then kept alive until after the count, as if every call had
 * leaked its references, and every test must fail.
 */
#define _GNU_SOURCE
#include "process_vm_util.h"

#include <pthread.h>
#include <sched.h>
#include <grp.h>

#include "../../../process_vm/pvm_uring.h"
#include "../kselftest_harness.h"

#ifndef CLONE_PIDFD
#define CLONE_PIDFD	0x00001000
#endif

#define LEN		512
#define SEED_R		0x7171	/* the targets' buffer, xor the index */
#define SEED_W		0x0f0f	/* a write xors the buffer's seed with this */
#define UID_NOBODY	65534
#define MIN_TARGETS	300
#define PER_CPU		20
#define SETTLE_MS	15000
#define WAIT_MS		10000

static const char * const caches[] = { "mm_struct", "task_struct" };
#define NCACHES		ARRAY_SIZE(caches)

/* The targets' buffer: at the same address in every forked process. */
static uint8_t tbuf[LEN];

/* ---- counting --------------------------------------------------------- */

struct counts {
	long obj[NCACHES];	/* active objects */
	long avail_kb;		/* MemAvailable, for the log only */
};

/*
 * Active objects of @name in /proc/slabinfo into *@active: 0, -ENOENT if
 * there is no such cache, or the errno of opening slabinfo.
 */
static int slab_active(const char *name, long *active)
{
	char line[512], cname[128];
	int ret = -ENOENT;
	FILE *f = fopen("/proc/slabinfo", "r");
	long n;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%127s %ld", cname, &n) == 2 &&
		    !strcmp(cname, name)) {
			*active = n;
			ret = 0;
			break;
		}
	}
	fclose(f);
	return ret;
}

static long meminfo_kb(const char *key)
{
	char line[256];
	size_t klen = strlen(key);
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			kb = strtol(line + klen + 1, NULL, 10);
			break;
		}
	fclose(f);
	return kb;
}

/*
 * Run this thread once on every CPU it may use: each CPU then switches to
 * this mm and drops the lazy-TLB reference it may hold on a dead target's.
 */
static void visit_cpus(void)
{
	cpu_set_t old, one;
	int cpu;

	if (sched_getaffinity(0, sizeof(old), &old))
		return;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &old))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (!sched_setaffinity(0, sizeof(one), &one))
			sched_yield();
	}
	sched_setaffinity(0, sizeof(old), &old);
}

static void read_counts(struct counts *c)
{
	char path[128];
	unsigned int i;

	visit_cpus();
	for (i = 0; i < NCACHES; i++) {
		/* flushes the per-CPU slabs: their free objects count */
		snprintf(path, sizeof(path), "/sys/kernel/slab/%s/shrink",
			 caches[i]);
		pvm_write_file(path, "1");
		/* FIXTURE_SETUP() skipped unless every cache is there */
		c->obj[i] = -1;
		slab_active(caches[i], &c->obj[i]);
	}
	pvm_write_file("/proc/sys/vm/stat_refresh", "1");
	c->avail_kb = meminfo_kb("MemAvailable");
}

/* ---- targets ---------------------------------------------------------- */

enum kind {
	K_PID,		/* fork(), by pid */
	K_PIDFD,	/* clone3(CLONE_PIDFD), PROCESS_VM_PIDFD, NOWAIT write */
	K_THREAD,	/* a second thread of a fork()ed target, by tid */
	K_EPERM,	/* non-dumpable targets, unprivileged caller */
	K_EFAULT,	/* a hole in the target, after mm_access() */
	K_URING,	/* the io_uring ops, inline and IOSQE_ASYNC */
};

static long setup_target(struct pvm_target *t, unsigned long seed,
			 unsigned long nodump, unsigned long c)
{
	pvm_fill(tbuf, LEN, seed);
	if (nodump && prctl(PR_SET_DUMPABLE, 0))
		return -errno;
	return 0;
}

/* In a target: its one extra thread, which waits for its pipe to close. */
static pthread_t th;
static int th_pipe[2];
static pid_t th_tid;

static void *thread_fn(void *arg)
{
	char c;

	__atomic_store_n(&th_tid, (pid_t)syscall(__NR_gettid),
			 __ATOMIC_RELEASE);
	while (read(th_pipe[0], &c, 1) < 0 && errno == EINTR)
		;
	return NULL;
}

static long cmd_thread_start(struct pvm_target *t, unsigned long a,
			     unsigned long b, unsigned long c)
{
	pid_t tid;

	if (pipe(th_pipe))
		return -errno;
	errno = pthread_create(&th, NULL, thread_fn, NULL);
	if (errno)
		return -errno;
	while (!(tid = __atomic_load_n(&th_tid, __ATOMIC_ACQUIRE)))
		usleep(100);
	return tid;
}

static long cmd_thread_stop(struct pvm_target *t, unsigned long a,
			    unsigned long b, unsigned long c)
{
	close(th_pipe[1]);
	pthread_join(th, NULL);
	close(th_pipe[0]);
	return 0;
}

/* ---- the driver ------------------------------------------------------- */

struct result {
	int done;		/* targets churned */
	int bad;		/* calls with an unexpected result */
	char why[200];		/* the first of them */
};

struct driver {
	enum kind kind;
	int n;
	bool fake;
	struct io_uring ring;
	struct pvm_target *t;	/* n targets */
	int *pidfd;
	unsigned long hole;	/* unmapped in every target */
	uint32_t seed;		/* what the current target's buffer holds */
	struct result res;
};

static void note(struct driver *d, int i, const char *what, long got,
		 long want)
{
	if (d->res.bad++)
		return;
	snprintf(d->res.why, sizeof(d->res.why),
		 "target %d: %s returned %ld, expected %ld", i, what, got, want);
}

/* One request through the ring: its result, or a pvm_ring_failure */
static long uring_rw(struct driver *d, int pidfd, bool write,
		     const struct iovec *l, const struct iovec *r,
		     unsigned int sqe_flags)
{
	struct __kernel_timespec ts = { .tv_sec = WAIT_MS / 1000 };
	struct io_uring_sqe *sqe = io_uring_get_sqe(&d->ring);
	struct io_uring_cqe *cqe;
	long res;

	if (!sqe)
		return PVM_RING_NO_SQE;
	if (write)
		pvm_uring_prep_writev(sqe, pidfd, l, 1, r, 1, 0);
	else
		pvm_uring_prep_readv(sqe, pidfd, l, 1, r, 1, 0);
	sqe->flags |= sqe_flags;
	if (io_uring_submit(&d->ring) != 1)
		return PVM_RING_NOT_SUBMITTED;
	if (io_uring_wait_cqe_timeout(&d->ring, &cqe, &ts))
		return PVM_RING_NO_CQE;
	res = cqe->res;
	io_uring_cqe_seen(&d->ring, cqe);
	return res;
}

/*
 * One read or write of target @i at @raddr, by @pid (a pidfd if @flags
 * has PROCESS_VM_PIDFD) or through the ring with @sqe_flags if @uring.
 * Expects @want; with LEN, checks the data too.
 */
static void rw_one(struct driver *d, int i, pid_t pid, bool write,
		   unsigned long raddr, unsigned long flags, bool uring,
		   unsigned int sqe_flags, long want)
{
	uint32_t seed = write ? d->seed ^ SEED_W : d->seed;
	uint8_t buf[LEN];
	struct iovec l = { .iov_base = buf, .iov_len = LEN };
	struct iovec r = { .iov_base = (void *)raddr, .iov_len = LEN };
	char what[64];
	long ret;

	snprintf(what, sizeof(what), "%s%s%s%s", uring ? "io_uring " : "",
		 write ? "write" : "read",
		 sqe_flags & IOSQE_ASYNC ? " (IOSQE_ASYNC)" : "",
		 flags & PROCESS_VM_NOWAIT ? " (NOWAIT)" : "");
	if (write)
		pvm_fill(buf, LEN, seed);
	else
		memset(buf, 0, LEN);
	if (uring)
		ret = uring_rw(d, pid, write, &l, &r, sqe_flags);
	else
		ret = pvm_res(pvm_rwf(write, pid, &l, 1, &r, 1, flags));
	/* NOWAIT may find the mmap lock busy; the references were taken */
	if (ret == -EAGAIN && (flags & PROCESS_VM_NOWAIT))
		return;
	if (ret != want) {
		note(d, i, what, ret, want);
		return;
	}
	if (want != LEN)
		return;
	if (!write && pvm_check(buf, LEN, seed) != -1)
		note(d, i, what, -EBADMSG, want);
	if (write && pvm_target_call(&d->t[i], pvm_cmd_check, raddr, LEN,
				     seed) != -1)
		note(d, i, what, -EBADMSG, want);
	d->seed = seed;
}

static void churn_one(struct driver *d, int i)
{
	struct clone_args args = {
		.flags = CLONE_PIDFD,
		.pidfd = (uintptr_t)&d->pidfd[i],
		.exit_signal = SIGCHLD,
	};
	bool by_pidfd = d->kind == K_PIDFD || d->kind == K_URING;
	unsigned long buf = (unsigned long)tbuf;
	struct pvm_target *t = &d->t[i];
	long ret;
	pid_t pid;
	int j;

	d->pidfd[i] = -1;
	d->seed = SEED_R ^ i;
	/* target 0 of K_EPERM stays dumpable: it shows that only that denies */
	ret = pvm_target_start_clone(t, by_pidfd ? &args : NULL, setup_target,
				     d->seed, d->kind == K_EPERM && i, 0);
	if (ret) {
		note(d, i, "target start", ret, 0);
		return;
	}
	pid = by_pidfd ? d->pidfd[i] : t->pid;
	switch (d->kind) {
	case K_PID:
		rw_one(d, i, pid, false, buf, 0, false, 0, LEN);
		rw_one(d, i, pid, true, buf, 0, false, 0, LEN);
		break;
	case K_PIDFD:
		rw_one(d, i, pid, false, buf, PROCESS_VM_PIDFD, false, 0, LEN);
		rw_one(d, i, pid, true, buf,
		       PROCESS_VM_PIDFD | PROCESS_VM_NOWAIT, false, 0, LEN);
		break;
	case K_THREAD:
		ret = pvm_target_call(t, cmd_thread_start, 0, 0, 0);
		if (ret <= 0) {
			note(d, i, "thread start", ret, 1);
			break;
		}
		rw_one(d, i, ret, false, buf, 0, false, 0, LEN);
		rw_one(d, i, ret, true, buf, 0, false, 0, LEN);
		if (!d->fake)
			pvm_target_call(t, cmd_thread_stop, 0, 0, 0);
		break;
	case K_EPERM:
		rw_one(d, i, pid, false, buf, 0, false, 0, i ? -EPERM : LEN);
		rw_one(d, i, pid, true, buf, 0, false, 0, i ? -EPERM : LEN);
		break;
	case K_EFAULT:
		rw_one(d, i, pid, false, d->hole, 0, false, 0, -EFAULT);
		rw_one(d, i, pid, true, d->hole, 0, false, 0, -EFAULT);
		break;
	case K_URING:
		for (j = 0; j < 2; j++) {
			unsigned int f = j ? IOSQE_ASYNC : 0;

			rw_one(d, i, pid, false, buf, 0, true, f, LEN);
			rw_one(d, i, pid, true, buf, 0, true, f, LEN);
		}
		rw_one(d, i, pid, false, d->hole, 0, true, IOSQE_ASYNC,
		       -EFAULT);
		break;
	}
	d->res.done++;
}

static void stop_one(struct driver *d, int i)
{
	pvm_target_stop(&d->t[i]);
	if (d->pidfd[i] >= 0)
		close(d->pidfd[i]);
}

static int drop_to(uid_t uid)
{
	if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid))
		return -errno;
	/* so that its children start dumpable: only their prctl() counts */
	return prctl(PR_SET_DUMPABLE, 1) ? -errno : 0;
}

/*
 * The driver, in a child: churns @n targets of @kind, sends its result
 * down @out and exits; with @fake, keeps the targets until @hold closes.
 */
static void driver(enum kind kind, int n, bool fake, int out, int hold)
{
	struct driver d = { .kind = kind, .n = n, .fake = fake };
	char c;
	int i;

	d.t = calloc(n, sizeof(*d.t));
	d.pidfd = calloc(n, sizeof(*d.pidfd));
	if (!d.t || !d.pidfd) {
		note(&d, -1, "allocation", -ENOMEM, 0);
		goto out;
	}
	i = kind == K_URING ? io_uring_queue_init(8, &d.ring, 0) : 0;
	if (i) {
		note(&d, -1, "io_uring_queue_init", i, 0);
		goto out;
	}
	if (kind == K_EPERM) {
		i = drop_to(UID_NOBODY);
		if (i) {
			note(&d, -1, "uid switch", i, 0);
			goto out;
		}
	}
	/* last: the ring's mappings must not land there */
	d.hole = (unsigned long)pvm_hole(PVM_PAGE);
	for (i = 0; d.hole && i < n; i++) {
		churn_one(&d, i);
		if (!fake)
			stop_one(&d, i);
	}
	if (kind == K_URING)
		io_uring_queue_exit(&d.ring);
out:
	pvm_write_full(out, &d.res, sizeof(d.res));
	if (fake) {
		while (read(hold, &c, 1) < 0 && errno == EINTR)
			;
		for (i = 0; d.t && i < n; i++)
			pvm_target_kill(&d.t[i]);
	}
	_exit(0);
}

/* ---- the tests -------------------------------------------------------- */

FIXTURE(leak) {
	int n, tol;
	bool fake;
};

FIXTURE_SETUP(leak)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	const char *fake;
	unsigned int i;
	long active;
	int ret;

	if (geteuid())
		SKIP(return, "needs root for /proc/slabinfo and drop_caches");
	for (i = 0; i < NCACHES; i++) {
		ret = slab_active(caches[i], &active);
		if (ret == -ENOENT)
			SKIP(return, "/proc/slabinfo has no %s cache (merged?)",
			     caches[i]);
		if (ret < 0)
			SKIP(return, "no /proc/slabinfo (%s): SLUB_TINY, or no SLUB_DEBUG",
			     strerror(-ret));
	}
	self->n = MIN_TARGETS;
	if (ncpu > 0 && ncpu * PER_CPU > self->n)
		self->n = ncpu * PER_CPU;
	self->tol = self->n / 10;
	fake = getenv("PVM_LEAK_SELFTEST_FAKE");
	self->fake = fake && !strcmp(fake, "1");
	if (self->fake)
		TH_LOG("PVM_LEAK_SELFTEST_FAKE: targets kept alive, must FAIL");
}

FIXTURE_TEARDOWN(leak)
{
}

/*
 * Lower @low to @now; true once every count in @low is within @margin of
 * @base.
 */
static bool settled(const struct counts *base, struct counts *low,
		    const struct counts *now, int margin)
{
	bool ret = true;
	unsigned int i;

	for (i = 0; i < NCACHES; i++) {
		if (now->obj[i] < low->obj[i])
			low->obj[i] = now->obj[i];
		if (low->obj[i] - base->obj[i] > margin)
			ret = false;
	}
	return ret;
}

static void churn(struct __test_metadata *_metadata,
		  FIXTURE_DATA(leak) *self, enum kind kind)
{
	struct counts base, low, now;
	struct result res;
	long long end;
	int out[2], hold[2], status;
	unsigned int i;
	pid_t pid;

	sync();
	pvm_write_file("/proc/sys/vm/drop_caches", "3");
	read_counts(&base);
	ASSERT_EQ(0, pipe(out));
	ASSERT_EQ(0, pipe(hold));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(out[0]);
		close(hold[1]);
		driver(kind, self->n, self->fake, out[1], hold[0]);
	}
	close(out[1]);
	close(hold[0]);
	memset(&res, 0, sizeof(res));
	EXPECT_EQ(0, pvm_read_full(out[0], &res, sizeof(res)));
	close(out[0]);
	if (!self->fake) {
		close(hold[1]);
		EXPECT_EQ(pid, waitpid(pid, &status, 0));
	}
	EXPECT_EQ(0, res.bad) TH_LOG("%d unexpected results; first: %s",
				     res.bad, res.why);
	EXPECT_EQ(self->n, res.done);

	/* drop_caches also drops the dentries and inodes of /proc/<pid> */
	pvm_write_file("/proc/sys/vm/drop_caches", "3");
	/*
	 * Judge the lowest counts seen: leaked objects stay, those of other
	 * processes on the system come and go.  Stop early once they are
	 * well inside the tolerance.
	 */
	end = pvm_now_ms() + SETTLE_MS;
	read_counts(&low);
	do {
		usleep(100000);
		read_counts(&now);
	} while (!settled(&base, &low, &now, self->tol / 3) &&
		 pvm_now_ms() < end);

	for (i = 0; i < NCACHES; i++) {
		TH_LOG("%s: %ld active before, %ld after %d targets (%+ld, tolerance %d)",
		       caches[i], base.obj[i], low.obj[i], self->n,
		       low.obj[i] - base.obj[i], self->tol);
		EXPECT_GE(self->tol, low.obj[i] - base.obj[i])
			TH_LOG("%s objects leaked", caches[i]);
	}
	TH_LOG("MemAvailable: %+ld kB (not checked: page cache and per-CPU lists move it)",
	       now.avail_kb - base.avail_kb);

	if (self->fake) {
		close(hold[1]);
		EXPECT_EQ(pid, waitpid(pid, &status, 0));
	}
}

/*
 * PROCESS_VM_PIDFD support: a read of ourselves by pidfd.  Only EINVAL
 * means "not supported".
 */
static bool pidfd_flag_supported(void)
{
	static char src = 'x';
	char dst = 0;
	struct iovec l = { .iov_base = &dst, .iov_len = 1 };
	struct iovec r = { .iov_base = &src, .iov_len = 1 };
	int pidfd, err;
	ssize_t ret;

	pidfd = syscall(__NR_pidfd_open, getpid(), 0);
	if (pidfd < 0)
		return false;
	ret = pvm_readv(pidfd, &l, 1, &r, 1, PROCESS_VM_PIDFD);
	err = errno;
	close(pidfd);
	return !(ret < 0 && err == EINVAL);
}

static bool clone3_pidfd_supported(void)
{
	struct clone_args args = { .exit_signal = SIGCHLD };
	pid_t pid = syscall(__NR_clone3, &args, sizeof(args));

	if (pid == 0)
		_exit(0);
	if (pid < 0)
		return false;
	waitpid(pid, NULL, 0);
	return true;
}

static bool uring_ops_supported(void)
{
	struct io_uring ring;
	bool ret;

	if (io_uring_queue_init(2, &ring, 0))
		return false;
	ret = pvm_uring_supported(&ring);
	io_uring_queue_exit(&ring);
	return ret;
}

TEST_F_TIMEOUT(leak, processes_by_pid, 600)
{
	churn(_metadata, self, K_PID);
}

TEST_F_TIMEOUT(leak, processes_by_pidfd, 600)
{
	if (!pidfd_flag_supported())
		SKIP(return, "no PROCESS_VM_PIDFD on this kernel");
	if (!clone3_pidfd_supported())
		SKIP(return, "no clone3() on this kernel");
	churn(_metadata, self, K_PIDFD);
}

TEST_F_TIMEOUT(leak, threads_by_tid, 600)
{
	churn(_metadata, self, K_THREAD);
}

TEST_F_TIMEOUT(leak, eperm, 600)
{
	churn(_metadata, self, K_EPERM);
}

TEST_F_TIMEOUT(leak, efault_hole, 600)
{
	churn(_metadata, self, K_EFAULT);
}

TEST_F_TIMEOUT(leak, io_uring, 600)
{
	if (!uring_ops_supported())
		SKIP(return, "no io_uring PROCESS_VM_READV/WRITEV (ops %d/%d)",
		     PVM_IORING_OP_READV, PVM_IORING_OP_WRITEV);
	if (!clone3_pidfd_supported())
		SKIP(return, "no clone3() on this kernel");
	churn(_metadata, self, K_URING);
}

TEST_HARNESS_MAIN
