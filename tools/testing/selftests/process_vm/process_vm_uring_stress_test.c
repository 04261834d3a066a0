// SPDX-License-Identifier: GPL-2.0
/*
 * Stress for IORING_OP_PROCESS_VM_READV/_WRITEV, meant for a debug kernel
 * (KASAN, lockdep) where `make check` and `make stress` run it:
 *
 *  churn:        random requests (read/write, 1-4 iovecs per side or, one
 *                side in four, 9-16: more than UIO_FASTIOV, so the kernel
 *                allocates the iovec array; holes, NOWAIT, IOSQE_ASYNC,
 *                fixed pidfds) against targets that
 *                unmap, remap and re-protect their memory and exit;
 *  exec_churn:   the same requests against targets that exec over and over
 *                (a shell that execs itself), so that requests meet an
 *                exec between their inline and their io-wq part;
 *  cancel_storm: requests stuck on a userfaultfd range nobody answers,
 *                ended by IORING_OP_ASYNC_CANCEL, by closing the ring and by
 *                the exit of the submitting thread, over and over;
 *  fuse_storm:   the same, stuck on reads of a FUSE file whose server never
 *                answers them (root only);
 *  stop_churn:   a submitter stopped and continued over and over while its
 *                copies wait in io-wq on a target's contended mmap lock:
 *                every copy completes whole and with the right bytes.
 *
 * Every completion must carry a result the syscall could give; every stuck
 * request must end within a second.  Pin balance and kernel reports are
 * checked by the caller (scripts/pvm/stress, scripts/pvm/vm-run).  On
 * kernels without the ops every test SKIPs.  PVM_STRESS_SECONDS sets the
 * duration of each test (default 5), PVM_STUCK_END_MS the time a stuck
 * request has to end (default 1000; a debug kernel under emulation needs
 * more to do the same work, while a request that never ends fails at any
 * bound).
 */
#define _GNU_SOURCE
#include "process_vm_util.h"

#include <liburing.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/ioctl.h>

#include "../kselftest_harness.h"
#include "../../../process_vm/pvm_uring.h"

#define NTARGETS	4
#define NPAGES		8
#define QD		64
#define STUCK		16

static size_t psz;

static int seconds(void)
{
	const char *s = getenv("PVM_STRESS_SECONDS");

	return s ? atoi(s) : 5;
}

static long long stuck_end_ms(void)
{
	const char *s = getenv("PVM_STUCK_END_MS");

	return s ? atoll(s) : 1000;
}

static bool uring_ok(void)
{
	struct io_uring ring;
	bool ok;

	if (io_uring_queue_init(4, &ring, 0))
		return false;
	ok = pvm_uring_supported(&ring);
	io_uring_queue_exit(&ring);
	return ok;
}

/* A target that keeps changing the mapping at @region until killed. */
static void churn_target(uint8_t *region, int ready)
{
	size_t len = NPAGES * psz;
	unsigned int i;

	if (write(ready, "", 1) != 1)
		return;
	for (i = 0; ; i++) {
		switch (i % 4) {
		case 0:
			munmap(region + (i % NPAGES) * psz, psz);
			break;
		case 1:
			mmap(region, len, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
			memset(region, i, len / 2);
			break;
		case 2:
			mprotect(region, len, i & 4 ? PROT_READ : PROT_NONE);
			break;
		default:
			mprotect(region, len, PROT_READ | PROT_WRITE);
			break;
		}
		usleep(100);
	}
}

/* Run @fn in a child that has the same mappings; its pidfd in @pidfd. */
static pid_t spawn(int *pidfd, void (*fn)(uint8_t *, int), uint8_t *region)
{
	int ready[2];
	char c;
	pid_t pid;

	*pidfd = -1;
	if (pipe(ready))
		return -1;
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(ready[0]);
		fn(region, ready[1]);
		_exit(0);
	}
	close(ready[1]);
	if (pid > 0 && read(ready[0], &c, 1) == 1)
		*pidfd = syscall(SYS_pidfd_open, pid, 0);
	close(ready[0]);
	return pid;
}

static void reap(pid_t pid, int pidfd)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(pidfd);
}

/* What a completion may say: the syscall's results, nothing else. */
static bool result_ok(int res, size_t len, bool nowait)
{
	if (res >= 0)
		return (size_t)res <= len;
	return res == -EFAULT || res == -ESRCH ||
	       (nowait && res == -EAGAIN);
}

static void random_iov(struct iovec *iov, int n, uint8_t *base, size_t span,
		       unsigned int *seed)
{
	int i;

	for (i = 0; i < n; i++) {
		size_t off = rand_r(seed) % span;
		size_t len = 1 + rand_r(seed) % (2 * psz);

		/* Now and then run off the end into whatever is there. */
		if (off + len > span && rand_r(seed) % 4)
			len = span - off;
		iov[i].iov_base = base + off;
		iov[i].iov_len = len;
	}
}

#define MAX_IOV		16

/* Mostly short iovec arrays; now and then one the kernel must allocate. */
static int random_count(unsigned int *seed)
{
	if (rand_r(seed) % 4)
		return 1 + rand_r(seed) % 4;
	return 9 + rand_r(seed) % (MAX_IOV - 8);
}

struct req {
	struct iovec liov[MAX_IOV], riov[MAX_IOV];
	size_t len;
	bool nowait;
};

static void prep_random(struct io_uring *ring, struct req *r, int idx,
			uint8_t *local, uint8_t *region, unsigned int *seed)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
	int nl = random_count(seed), nr = random_count(seed);
	unsigned int flags = 0;
	int i;

	random_iov(r->liov, nl, local, NPAGES * psz, seed);
	random_iov(r->riov, nr, region, (NPAGES + 1) * psz, seed);
	r->len = 0;
	for (i = 0; i < nl; i++)
		r->len += r->liov[i].iov_len;
	r->nowait = !(rand_r(seed) % 4);
	if (r->nowait)
		flags |= PROCESS_VM_NOWAIT;
	if (rand_r(seed) % 2)
		pvm_uring_prep_readv_fixed(sqe, idx, r->liov, nl, r->riov, nr,
					   flags);
	else
		pvm_uring_prep_writev_fixed(sqe, idx, r->liov, nl, r->riov, nr,
					    flags);
	if (!(rand_r(seed) % 4))
		sqe->flags |= IOSQE_ASYNC;
	io_uring_sqe_set_data(sqe, r);
}

/* A target that execs a shell that execs itself, until killed. */
static void exec_target(uint8_t *region, int ready)
{
	static const char loop[] =
		"n=$1; [ $n -gt 0 ] && exec /bin/sh -c \"$0\" \"$0\" $((n - 1))";

	if (write(ready, "", 1) != 1)
		return;
	execl("/bin/sh", "sh", "-c", loop, loop, "1000000", (char *)NULL);
}

/* Random requests against NTARGETS targets running @fn, for seconds() */
static void churn_with(struct __test_metadata *_metadata,
		       void (*fn)(uint8_t *, int), const char *name)
{
	uint8_t *region, *local;
	int pidfd[NTARGETS];
	pid_t pid[NTARGETS];
	static struct req reqs[QD];
	struct io_uring ring;
	unsigned int seed = getpid();
	long done = 0, bytes = 0;
	time_t end;
	int i, n;

	psz = getpagesize();
	if (!uring_ok())
		SKIP(return, "no IORING_OP_PROCESS_VM_* in this kernel");
	/*
	 * NPAGES that churn, one more that stays, and two PROT_NONE pages
	 * that requests running off the end hit instead of other memory of
	 * the target; the local buffer has the same guard.
	 */
	region = pvm_map_anon((NPAGES + 3) * psz);
	local = pvm_map_anon((NPAGES + 2) * psz);
	ASSERT_TRUE(region && local);
	ASSERT_EQ(0, mprotect(region + (NPAGES + 1) * psz, 2 * psz,
			      PROT_NONE));
	ASSERT_EQ(0, mprotect(local + NPAGES * psz, 2 * psz, PROT_NONE));
	ASSERT_EQ(0, io_uring_queue_init(QD, &ring, 0));
	for (i = 0; i < NTARGETS; i++) {
		pid[i] = spawn(&pidfd[i], fn, region);
		ASSERT_LE(0, pidfd[i]);
	}
	ASSERT_EQ(0, io_uring_register_files(&ring, pidfd, NTARGETS));

	end = time(NULL) + seconds();
	while (time(NULL) < end) {
		struct io_uring_cqe *cqe;

		for (n = 0; n < QD; n++)
			prep_random(&ring, &reqs[n], rand_r(&seed) % NTARGETS,
				    local, region, &seed);
		ASSERT_EQ(QD, io_uring_submit_and_wait(&ring, QD));
		for (n = 0; n < QD; n++) {
			struct req *r;

			ASSERT_EQ(0, io_uring_wait_cqe(&ring, &cqe));
			r = io_uring_cqe_get_data(cqe);
			EXPECT_TRUE(result_ok(cqe->res, r->len, r->nowait))
				TH_LOG("res %d for %zu bytes", cqe->res, r->len);
			bytes += cqe->res > 0 ? cqe->res : 0;
			io_uring_cqe_seen(&ring, cqe);
		}
		done += QD;
		/* A target dies and a new one takes its slot. */
		i = rand_r(&seed) % NTARGETS;
		reap(pid[i], pidfd[i]);
		pid[i] = spawn(&pidfd[i], fn, region);
		ASSERT_LE(0, pidfd[i]);
		ASSERT_EQ(1, io_uring_register_files_update(&ring, i,
							    &pidfd[i], 1));
	}
	io_uring_queue_exit(&ring);
	for (i = 0; i < NTARGETS; i++)
		reap(pid[i], pidfd[i]);
	ksft_print_msg("%s: %ld requests, %ld bytes\n", name, done, bytes);
}

TEST(churn)
{
	churn_with(_metadata, churn_target, "churn");
}

TEST(exec_churn)
{
	if (access("/bin/sh", X_OK))
		SKIP(return, "no /bin/sh to exec");
	churn_with(_metadata, exec_target, "exec_churn");
}

/* A target whose range faults into a userfaultfd nobody ever reads. */
static void stuck_target(uint8_t *region, int ready)
{
	int uffd = pvm_uffd_register(region, NPAGES * psz, 0, O_CLOEXEC);

	if (uffd < 0 || write(ready, "", 1) != 1)
		return;
	for (;;)
		pause();
}

enum { BY_CANCEL, BY_THREAD_EXIT, BY_PROCESS_EXIT, NR_WAYS };

struct storm {
	int pidfd;
	uint8_t *region, *local;
	struct io_uring ring;
	struct iovec l, r[NPAGES];
};

/* Queue STUCK reads of the stuck range, half of them IOSQE_ASYNC. */
static void prep_stuck(struct storm *s)
{
	int i;

	s->l = (struct iovec){ s->local, psz };
	for (i = 0; i < STUCK; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&s->ring);

		s->r[i % NPAGES] = (struct iovec){ s->region + (i % NPAGES) * psz,
						  psz };
		pvm_uring_prep_readv(sqe, s->pidfd, &s->l, 1,
				     &s->r[i % NPAGES], 1, 0);
		if (i % 2)
			sqe->flags |= IOSQE_ASYNC;
		io_uring_sqe_set_data64(sqe, i + 1);
	}
}

/* Reap @n completions of stuck requests: each ended, nothing copied. */
static int reap_stuck(struct storm *s, int n)
{
	struct __kernel_timespec ts = { .tv_sec = 1 };
	struct io_uring_cqe *cqe;

	while (n) {
		if (io_uring_wait_cqe_timeout(&s->ring, &cqe, &ts))
			return -1;
		if (cqe->user_data) {
			if (cqe->res != -EINTR && cqe->res != -ECANCELED)
				return -1;
			n--;
		}
		io_uring_cqe_seen(&s->ring, cqe);
	}
	return 0;
}

static int storm_cancel(struct storm *s)
{
	prep_stuck(s);
	if (io_uring_submit(&s->ring) != STUCK)
		return -1;
	usleep(20000);	/* let them reach io-wq and block there */
	io_uring_prep_cancel64(io_uring_get_sqe(&s->ring), 0,
			       IORING_ASYNC_CANCEL_ANY |
			       IORING_ASYNC_CANCEL_ALL);
	io_uring_submit(&s->ring);
	return reap_stuck(s, STUCK);
}

static void *submit_and_exit(void *arg)
{
	struct storm *s = arg;

	return (void *)(long)io_uring_submit(&s->ring);
}

/* The requests belong to a thread; its exit cancels them. */
static int storm_thread_exit(struct storm *s)
{
	pthread_t th;
	void *ret;

	prep_stuck(s);
	if (pthread_create(&th, NULL, submit_and_exit, s) ||
	    pthread_join(th, &ret) || (long)ret != STUCK)
		return -1;
	return reap_stuck(s, STUCK);
}

/* A process that leaves stuck requests behind must still exit at once. */
static int storm_process_exit(struct storm *s)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		prep_stuck(s);
		_exit(io_uring_submit(&s->ring) == STUCK ? 0 : 1);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) && !WEXITSTATUS(status) ? 0 : -1;
}

static int (*const storm_ways[NR_WAYS])(struct storm *s) = {
	[BY_CANCEL] = storm_cancel,
	[BY_THREAD_EXIT] = storm_thread_exit,
	[BY_PROCESS_EXIT] = storm_process_exit,
};

static void storm_with(struct __test_metadata *_metadata,
		       void (*target)(uint8_t *, int), const char *name)
{
	struct storm s = { 0 };
	long rounds = 0, worst = 0;
	time_t end;
	pid_t pid;

	psz = getpagesize();
	if (!uring_ok())
		SKIP(return, "no IORING_OP_PROCESS_VM_* in this kernel");
	s.region = pvm_map_anon(NPAGES * psz);
	s.local = pvm_map_anon(psz);
	ASSERT_TRUE(s.region && s.local);
	pid = spawn(&s.pidfd, target, s.region);
	ASSERT_LE(0, s.pidfd) TH_LOG("%s: the target could not map its range", name);

	end = time(NULL) + seconds();
	while (time(NULL) < end) {
		int way = rounds % NR_WAYS;
		long long t0;

		ASSERT_EQ(0, io_uring_queue_init(2 * STUCK, &s.ring, 0));
		t0 = pvm_now_ms();
		ASSERT_EQ(0, storm_ways[way](&s))
			TH_LOG("round %ld, way %d: a stuck request did not end",
			       rounds, way);
		io_uring_queue_exit(&s.ring);
		t0 = pvm_now_ms() - t0;
		EXPECT_GT(stuck_end_ms(), t0)
			TH_LOG("way %d took %lld ms", way, t0);
		worst = t0 > worst ? t0 : worst;
		rounds++;
	}
	reap(pid, s.pidfd);
	ksft_print_msg("%s: %ld rounds of %d requests, worst %ld ms\n",
		       name, rounds, STUCK, worst);
}

TEST(cancel_storm)
{
	storm_with(_metadata, stuck_target, "cancel_storm");
}

static struct pvm_fuse fuse;

/* A target whose range maps the FUSE file: reads that are never answered */
static void fuse_target(uint8_t *region, int ready)
{
	int fd = open(fuse.path, O_RDONLY | O_CLOEXEC);

	if (fd < 0 || mmap(region, NPAGES * psz, PROT_READ,
			   MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED ||
	    write(ready, "", 1) != 1)
		return;
	for (;;)
		pause();
}

TEST(fuse_storm)
{
	int ret;

	if (!uring_ok())
		SKIP(return, "no IORING_OP_PROCESS_VM_* in this kernel");
	ret = pvm_fuse_start(&fuse, NPAGES * getpagesize());
	if (ret)
		SKIP(return, "no FUSE file system of our own: %s",
		     strerror(-ret));
	storm_with(_metadata, fuse_target, "fuse_storm");
	pvm_fuse_stop(&fuse);
}

#define STOP_SEED	0x5709u

/*
 * A target whose region keeps its contents (STOP_SEED at every offset)
 * while it takes its mmap lock for writing over and over, so that copies
 * wait for it.
 */
static void lock_target(uint8_t *region, int ready)
{
	uint8_t *spare = pvm_map_anon(psz);
	unsigned int i;

	if (!spare || write(ready, "", 1) != 1)
		return;
	for (i = 0; ; i++)
		mprotect(spare, psz, i & 1 ? PROT_READ : PROT_READ | PROT_WRITE);
}

struct stop_req {
	struct iovec l, r;
	bool write;
};

/* Queue QD whole-range copies: writes put back what the region holds. */
static void prep_stop(struct io_uring *ring, struct stop_req *reqs,
		      uint8_t *local, uint8_t *region, unsigned int *seed)
{
	size_t span = NPAGES * psz;
	int i;

	for (i = 0; i < QD; i++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(ring);
		struct stop_req *q = &reqs[i];
		size_t len = 1 + rand_r(seed) % (2 * psz);
		size_t off = rand_r(seed) % (span - len);

		q->l = (struct iovec){ local + i * 2 * psz, len };
		q->r = (struct iovec){ region + off, len };
		q->write = rand_r(seed) % 2;
		if (q->write) {
			pvm_fill_at(q->l.iov_base, len, STOP_SEED, off);
			pvm_uring_prep_writev(sqe, 0, &q->l, 1, &q->r, 1, 0);
		} else {
			pvm_uring_prep_readv(sqe, 0, &q->l, 1, &q->r, 1, 0);
		}
		sqe->flags |= IOSQE_FIXED_FILE;
		if (rand_r(seed) % 2)
			sqe->flags |= IOSQE_ASYNC;
		io_uring_sqe_set_data(sqe, q);
	}
}

/* Wait for a CQE; a stop and a continue interrupt the wait. */
static int wait_cqe_stopped(struct io_uring *ring, struct io_uring_cqe **cqe)
{
	int ret;

	do
		ret = io_uring_wait_cqe(ring, cqe);
	while (ret == -EINTR);
	return ret;
}

/*
 * The child that is stopped: it starts its own target (so that Yama's
 * scope 1 lets it in) and exits 0 when every copy came back whole and
 * right.
 */
static void stop_submitter(uint8_t *region, time_t end)
{
	static struct stop_req reqs[QD];
	unsigned int seed = getpid();
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	uint8_t *local;
	long done = 0;
	int i, pidfd;

	local = pvm_map_anon(QD * 2 * psz);
	spawn(&pidfd, lock_target, region);
	if (!local || pidfd < 0 || io_uring_queue_init(QD, &ring, 0) ||
	    io_uring_register_files(&ring, &pidfd, 1))
		_exit(2);
	while (time(NULL) < end) {
		prep_stop(&ring, reqs, local, region, &seed);
		if (io_uring_submit(&ring) != QD)
			_exit(2);
		for (i = 0; i < QD; i++) {
			struct stop_req *q;
			size_t off;

			if (wait_cqe_stopped(&ring, &cqe))
				_exit(2);
			q = io_uring_cqe_get_data(cqe);
			off = (uint8_t *)q->r.iov_base - region;
			if (cqe->res != (int)q->l.iov_len ||
			    (!q->write && pvm_check_at(q->l.iov_base,
						       q->l.iov_len,
						       STOP_SEED, off) != -1)) {
				ksft_print_msg("%s of %zu at %zu: res %d\n",
					       q->write ? "write" : "read",
					       q->l.iov_len, off, cqe->res);
				_exit(1);
			}
			io_uring_cqe_seen(&ring, cqe);
		}
		done += QD;
	}
	ksft_print_msg("stop_churn: %ld requests\n", done);
	_exit(0);
}

TEST(stop_churn)
{
	unsigned int seed = getpid();
	long stops = 0;
	uint8_t *region;
	int status = 0;
	time_t end;
	pid_t pid;

	psz = getpagesize();
	if (!uring_ok())
		SKIP(return, "no IORING_OP_PROCESS_VM_* in this kernel");
	region = pvm_map_anon(NPAGES * psz);
	ASSERT_NE(NULL, region);
	pvm_fill(region, NPAGES * psz, STOP_SEED);

	end = time(NULL) + seconds();
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		stop_submitter(region, end);
	}
	for (;;) {
		ASSERT_EQ(0, kill(pid, SIGSTOP));
		ASSERT_EQ(pid, waitpid(pid, &status, WUNTRACED));
		if (!WIFSTOPPED(status))
			break;
		stops++;
		usleep(rand_r(&seed) % 2000);
		ASSERT_EQ(0, kill(pid, SIGCONT));
		usleep(rand_r(&seed) % 2000);
	}
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status))
		TH_LOG("submitter status %#x", status);
	EXPECT_LT(0, stops);
	ksft_print_msg("stop_churn: %ld stops\n", stops);
}

TEST_HARNESS_MAIN
