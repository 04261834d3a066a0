// SPDX-License-Identifier: GPL-2.0
/*
 * Tests for IORING_OP_PROCESS_VM_READV and IORING_OP_PROCESS_VM_WRITEV, the
 * io_uring form of process_vm_readv(2)/process_vm_writev(2), through the
 * liburing helpers of tools/process_vm/pvm_uring.h:
 *
 *  - iovec shapes, batches, registered pidfds, errors and permissions, all
 *    data checked byte by byte against a userspace model;
 *  - which path ran: a resident target completes inline, a missing page is
 *    punted to io-wq.  Told by the thread that faulted on the target's
 *    userfaultfd (UFFD_FEATURE_THREAD_ID), by the io-wq threads of this
 *    process and, where tracefs is there, by the
 *    io_uring:io_uring_queue_async_work event in a tracefs instance;
 *  - the submitter never waits for the target's faults, and
 *    PROCESS_VM_NOWAIT never waits at all;
 *  - a request stuck on a fault that nobody resolves ends promptly on
 *    IORING_OP_ASYNC_CANCEL, ring close, thread exit and process exit, and
 *    leaks no page pins;
 *  - parity with the system calls.
 *
 * Every test runs in both directions, inline first and with IOSQE_ASYNC
 * (fixture variants).  Kernels without the opcodes skip every test.
 */
#define _GNU_SOURCE
#include "process_vm_util.h"

#include <dirent.h>
#include <poll.h>
#include <pthread.h>
#include <grp.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/userfaultfd.h>

#include "../../../process_vm/pvm_uring.h"
#include "../kselftest_harness.h"

#ifndef PR_SET_PTRACER
#define PR_SET_PTRACER	0x59616d61
#endif
#ifndef PR_SET_PTRACER_ANY
#define PR_SET_PTRACER_ANY ((unsigned long)-1)
#endif

#define SEED_R		0x1111	/* the targets' region */
#define SEED_L		0x2222	/* local source of a write */
#define SEED_P		0x3333	/* this process's copy of the region */
#define SEED_U		0x4444	/* pages supplied by a userfaultfd handler */
#define SENTINEL	0xa5

/*
 * The region: mapped before the targets are forked, so that it is at the
 * same address in them.  Pages 0 to DATA_PAGES - 1 and the last one hold
 * data; the targets unmap HOLE_PG and protect RO_PG and NONE_PG.
 */
#define REGION_PAGES	16
#define DATA_PAGES	12
#define HOLE_PG		12
#define RO_PG		13
#define NONE_PG		14
#define LOCAL_PAGES	16
#define UFFD_PAGES	4

#define NR_TARGETS	4
#define BATCH		64
#define RING_ENTRIES	128
#define MAX_IOV		1024
#define UID_NOBODY	65534
#define GID_NOBODY	65534

#define WAIT_MS		10000	/* a completion later than this is lost */
#define PROMPT_MS	1000	/* what "promptly" means */

#if __SIZEOF_LONG__ == 8
#define KERNEL_PTR	((void *)0xffff800000000000UL)
#else
#define KERNEL_PTR	((void *)0xc0000000UL)
#endif
/* Negative as ssize_t */
#define NEG_LEN		((size_t)SSIZE_MAX + 1)

static uint8_t *region;
static size_t psz;
static uint64_t ud_seq = 0x5056000000000000ULL;

#define PG(n)		(region + (n) * psz)
#define REGION_SZ	(REGION_PAGES * psz)
#define DATA_SZ		(DATA_PAGES * psz)
#define LOCAL_SZ	(LOCAL_PAGES * psz)

static int sys_pidfd_open(pid_t pid, unsigned int flags)
{
	return syscall(__NR_pidfd_open, pid, flags);
}

static pid_t sys_gettid(void)
{
	return syscall(__NR_gettid);
}

static struct __kernel_timespec ms_ts(long ms)
{
	struct __kernel_timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (ms % 1000) * 1000000,
	};

	return ts;
}

/* ---- requests --------------------------------------------------------- */

/*
 * Fill the next SQE of @ring: a read or @write on pidfd @fd (a registered
 * file index if @fixed), IOSQE_* @sqe_flags, user_data @ud.
 */
static struct io_uring_sqe *sqe_rw(struct io_uring *ring, bool write,
				   bool fixed, int fd,
				   const struct iovec *lv, unsigned int nl,
				   const struct iovec *rv, unsigned int nr,
				   unsigned int flags, unsigned int sqe_flags,
				   uint64_t ud)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (!sqe)
		return NULL;
	if (write && fixed)
		pvm_uring_prep_writev_fixed(sqe, fd, lv, nl, rv, nr, flags);
	else if (write)
		pvm_uring_prep_writev(sqe, fd, lv, nl, rv, nr, flags);
	else if (fixed)
		pvm_uring_prep_readv_fixed(sqe, fd, lv, nl, rv, nr, flags);
	else
		pvm_uring_prep_readv(sqe, fd, lv, nl, rv, nr, flags);
	sqe->flags |= sqe_flags;
	sqe->user_data = ud;
	return sqe;
}

/* The result of the CQE for @ud (others are dropped), or PVM_RING_NO_CQE */
static long wait_ud(struct io_uring *ring, uint64_t ud, long ms)
{
	struct __kernel_timespec ts = ms_ts(ms);
	struct io_uring_cqe *cqe;
	long res;

	for (;;) {
		if (io_uring_wait_cqe_timeout(ring, &cqe, &ts))
			return PVM_RING_NO_CQE;
		res = cqe->res;
		if (cqe->user_data == ud) {
			io_uring_cqe_seen(ring, cqe);
			return res;
		}
		io_uring_cqe_seen(ring, cqe);
	}
}

/* Submit what is queued (one SQE, user_data @ud) and wait for it. */
static long submit_wait(struct io_uring *ring, uint64_t ud)
{
	if (io_uring_submit(ring) != 1)
		return PVM_RING_NOT_SUBMITTED;
	return wait_ud(ring, ud, WAIT_MS);
}

static long run_rw(struct io_uring *ring, bool write, bool fixed, int fd,
		   const struct iovec *lv, unsigned int nl,
		   const struct iovec *rv, unsigned int nr,
		   unsigned int flags, unsigned int sqe_flags)
{
	uint64_t ud = ud_seq++;

	if (!sqe_rw(ring, write, fixed, fd, lv, nl, rv, nr, flags, sqe_flags,
		    ud))
		return PVM_RING_NO_SQE;
	return submit_wait(ring, ud);
}

struct cqe_rec {
	uint64_t ud;
	int res;
};

/* Reap up to @n CQEs, waiting at most @ms for each; the number reaped */
static int reap(struct io_uring *ring, struct cqe_rec *out, int n, long ms)
{
	struct __kernel_timespec ts = ms_ts(ms);
	struct io_uring_cqe *cqe;
	int i;

	for (i = 0; i < n; i++) {
		if (io_uring_wait_cqe_timeout(ring, &cqe, &ts))
			break;
		out[i].ud = cqe->user_data;
		out[i].res = cqe->res;
		io_uring_cqe_seen(ring, cqe);
	}
	return i;
}

static long res_of(const struct cqe_rec *c, int n, uint64_t ud)
{
	int i;

	for (i = 0; i < n; i++)
		if (c[i].ud == ud)
			return c[i].res;
	return PVM_RING_NO_CQE;
}

/* ---- targets ---------------------------------------------------------- */

/*
 * In a target, close what fork() copied but the tests own: a ring kept
 * open here would survive the test closing it.  Keeps stdio and the
 * target's command pipes.
 */
static void close_other_fds(struct pvm_target *t)
{
	DIR *d = opendir("/proc/self/fd");
	int fds[256], n = 0, fd;
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)) && n < (int)ARRAY_SIZE(fds)) {
		fd = atoi(e->d_name);
		if (fd > 2 && fd != dirfd(d) && fd != t->cmd && fd != t->resp)
			fds[n++] = fd;
	}
	closedir(d);
	while (n--)
		close(fds[n]);
}

/*
 * A process_vm_util.h target whose region copy holds pattern @seed, with
 * the hole and the protected pages; any process may trace it (Yama).
 */
static long setup_region(struct pvm_target *t, unsigned long seed,
			 unsigned long b, unsigned long c)
{
	close_other_fds(t);
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	pvm_fill(region, REGION_SZ, seed);
	if (munmap(PG(HOLE_PG), psz) ||
	    mprotect(PG(RO_PG), psz, PROT_READ) ||
	    mprotect(PG(NONE_PG), psz, PROT_NONE))
		return -errno;
	return 0;
}

static int start_target(struct pvm_target *t, int *pidfd, uint32_t seed)
{
	*pidfd = -1;
	if (pvm_target_start(t, setup_region, seed, 0, 0))
		return -1;
	*pidfd = sys_pidfd_open(t->pid, 0);
	return *pidfd < 0 ? -1 : 0;
}

/*
 * The userfaultfd target: UFFD_PAGES missing pages registered with a
 * userfaultfd whose handler thread notes the thread that faulted, then
 * after delay_ms supplies the page (pattern SEED_U from the area's start),
 * or never does if delay_ms < 0.
 */
static struct {
	int uffd;
	unsigned long base;
	long delay_ms;
	int faults;
	int ptid;
} ufs;

static void *uffd_handler(void *arg)
{
	uint8_t *page = pvm_map_anon(psz);
	struct uffd_msg msg;
	unsigned long addr;
	int ret;

	for (;;) {
		ret = pvm_uffd_next_fault(ufs.uffd, -1, &msg);
		if (ret == -EAGAIN)
			continue;
		if (ret)
			break;
		__atomic_store_n(&ufs.ptid, msg.arg.pagefault.feat.ptid,
				 __ATOMIC_RELEASE);
		__atomic_add_fetch(&ufs.faults, 1, __ATOMIC_RELEASE);
		if (ufs.delay_ms < 0 || !page)
			continue;
		usleep(ufs.delay_ms * 1000);
		addr = msg.arg.pagefault.address & ~(psz - 1);
		pvm_fill_at(page, psz, SEED_U, addr - ufs.base);
		pvm_uffd_copy(ufs.uffd, addr, page, psz);
	}
	return NULL;
}

/* The area's address, or -errno. */
static long setup_uffd(struct pvm_target *t, unsigned long delay_ms,
		       unsigned long b, unsigned long c)
{
	pthread_t th;
	void *p;

	close_other_fds(t);
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	ufs.delay_ms = delay_ms;
	p = mmap(NULL, UFFD_PAGES * psz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	madvise(p, UFFD_PAGES * psz, MADV_NOHUGEPAGE);
	ufs.base = (unsigned long)p;
	ufs.uffd = pvm_uffd_register(p, UFFD_PAGES * psz,
				     UFFD_FEATURE_THREAD_ID, O_CLOEXEC);
	if (ufs.uffd < 0)
		return ufs.uffd;
	errno = pthread_create(&th, NULL, uffd_handler, NULL);
	if (errno)
		return -errno;
	return (long)p;
}

static long cmd_uffd_faults(struct pvm_target *t, unsigned long a,
			    unsigned long b, unsigned long c)
{
	return __atomic_load_n(&ufs.faults, __ATOMIC_ACQUIRE);
}

static long cmd_uffd_ptid(struct pvm_target *t, unsigned long a,
			  unsigned long b, unsigned long c)
{
	return __atomic_load_n(&ufs.ptid, __ATOMIC_ACQUIRE);
}

/*
 * Threads waiting on the userfaultfd: "total" in its fdinfo counts the
 * faults not yet resolved whose faulting thread still waits.  -errno if
 * the fdinfo cannot be read, -ENOENT if it has no "total".
 */
static long cmd_uffd_waiters(struct pvm_target *t, unsigned long a,
			     unsigned long b, unsigned long c)
{
	char path[64], line[128];
	long total = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", ufs.uffd);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "total: %ld", &total) == 1)
			break;
	fclose(f);
	return total;
}

/* Resolve the pages of [addr, addr + len) with pattern SEED_U. */
static long cmd_uffd_populate(struct pvm_target *t, unsigned long addr,
			      unsigned long len, unsigned long c)
{
	uint8_t *page = pvm_map_anon(psz);
	unsigned long a;
	int ret;

	if (!page)
		return -ENOMEM;
	for (a = addr; a < addr + len; a += psz) {
		pvm_fill_at(page, psz, SEED_U, a - ufs.base);
		ret = pvm_uffd_copy(ufs.uffd, a, page, psz);
		if (ret)
			return ret;
	}
	munmap(page, psz);
	return 0;
}

/* @seed_off: the pattern's stream offset << 16 | its seed (< 65536) */
static long cmd_check_at(struct pvm_target *t, unsigned long addr,
			 unsigned long len, unsigned long seed_off)
{
	return pvm_check_at((void *)addr, len, seed_off & 0xffff,
			    seed_off >> 16);
}

/* Does pattern @seed from stream offset @off fill [addr, addr + len)? */
static bool remote_is(struct pvm_target *t, unsigned long addr, size_t len,
		      uint32_t seed, size_t off)
{
	return pvm_target_call(t, cmd_check_at, addr, len,
			       (unsigned long)off << 16 | seed) == -1;
}

/* Poll @fn in @t until it returns @want (at least @want if @at_least). */
static bool poll_target(struct pvm_target *t, pvm_fn fn, long want,
			bool at_least, long ms)
{
	long long end = pvm_now_ms() + ms;
	long v;

	for (;;) {
		v = pvm_target_call(t, fn, 0, 0, 0);
		if (v == want || (at_least && v > want))
			return true;
		if (pvm_now_ms() >= end)
			return false;
		usleep(2000);
	}
}

/* ---- threads of this process ------------------------------------------ */

static bool is_iowq_thread(pid_t tid)
{
	char path[64], comm[32] = "";
	int fd;

	snprintf(path, sizeof(path), "/proc/self/task/%d/comm", tid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	if (read(fd, comm, sizeof(comm) - 1) < 0)
		comm[0] = 0;
	close(fd);
	return !strncmp(comm, "iou-wrk-", 8);
}

/* Number of io-wq worker threads in this process */
static int iowq_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && is_iowq_thread(atoi(e->d_name)))
			n++;
	closedir(d);
	return n;
}

/* ---- tracefs ---------------------------------------------------------- */

#define TRACEFS		"/sys/kernel/tracing"
#define ASYNC_EVENT	"events/io_uring/io_uring_queue_async_work/enable"

/* A tracefs instance recording io_uring_queue_async_work; false if none */
static bool trace_start(char *dir, size_t size)
{
	char path[256];

	snprintf(dir, size, TRACEFS "/instances/pvm_uring_%d", getpid());
	if (mkdir(dir, 0700)) {
		dir[0] = 0;
		return false;
	}
	snprintf(path, sizeof(path), "%s/" ASYNC_EVENT, dir);
	if (pvm_write_file(path, "1")) {
		rmdir(dir);
		dir[0] = 0;
		return false;
	}
	return true;
}

static void trace_stop(char *dir)
{
	if (dir[0])
		rmdir(dir);
	dir[0] = 0;
}

/* Events for user_data @ud in the instance, or -1 */
static int trace_count(const char *dir, uint64_t ud)
{
	static char buf[1 << 18];
	char path[256], want[64];
	const char *p;
	ssize_t n, len = 0;
	int fd, count = 0;

	snprintf(path, sizeof(path), "%s/trace", dir);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	while (len < (ssize_t)sizeof(buf) - 1 &&
	       (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0)
		len += n;
	close(fd);
	buf[len] = 0;
	snprintf(want, sizeof(want), "user_data 0x%llx,",
		 (unsigned long long)ud);
	for (p = buf; (p = strstr(p, want)); p++)
		count++;
	return count;
}

/* ---- the fixture ------------------------------------------------------ */

FIXTURE(uring)
{
	struct io_uring ring;
	bool ring_up;
	struct pvm_target t;			/* the region, SEED_R */
	struct pvm_target more[NR_TARGETS - 1];	/* SEED_R + 1 + i */
	struct pvm_target u;			/* userfaultfd target */
	int pidfd, more_pidfd[NR_TARGETS - 1], upidfd;
	unsigned long uarea;			/* its area */
	uint8_t *local;
	bool write;
	unsigned int sqe_flags;
	char trace_dir[128];
};

FIXTURE_VARIANT(uring)
{
	bool write;
	unsigned int sqe_flags;
};

FIXTURE_VARIANT_ADD(uring, read)
{
	.write = false,
	.sqe_flags = 0,
};

FIXTURE_VARIANT_ADD(uring, write)
{
	.write = true,
	.sqe_flags = 0,
};

FIXTURE_VARIANT_ADD(uring, read_async)
{
	.write = false,
	.sqe_flags = IOSQE_ASYNC,
};

FIXTURE_VARIANT_ADD(uring, write_async)
{
	.write = true,
	.sqe_flags = IOSQE_ASYNC,
};

FIXTURE_SETUP(uring)
{
	int i, ret;

	self->t.pid = -1;
	self->u.pid = -1;
	self->pidfd = -1;
	self->upidfd = -1;
	for (i = 0; i < NR_TARGETS - 1; i++) {
		self->more[i].pid = -1;
		self->more_pidfd[i] = -1;
	}
	self->trace_dir[0] = 0;
	self->write = variant->write;
	self->sqe_flags = variant->sqe_flags;
	psz = PVM_PAGE;

	ret = io_uring_queue_init(RING_ENTRIES, &self->ring, 0);
	if (ret)
		SKIP(return, "io_uring_queue_init: %s", strerror(-ret));
	self->ring_up = true;
	/*
	 * The targets are fork()ed: mappings of the ring inherited by them
	 * would keep it alive after the test closes it.
	 */
	ASSERT_EQ(0, io_uring_ring_dontfork(&self->ring));
	if (!pvm_uring_supported(&self->ring))
		SKIP(return, "no io_uring PROCESS_VM_READV/WRITEV (ops %d/%d)",
		     PVM_IORING_OP_READV, PVM_IORING_OP_WRITEV);

	region = pvm_map_anon(REGION_SZ);
	ASSERT_NE(NULL, region);
	madvise(region, REGION_SZ, MADV_NOHUGEPAGE);
	/* Differs from the targets': reading the wrong process would show */
	pvm_fill(region, REGION_SZ, SEED_P);
	self->local = pvm_map_anon(LOCAL_SZ);
	ASSERT_NE(NULL, self->local);
	ASSERT_EQ(0, start_target(&self->t, &self->pidfd, SEED_R));
}

FIXTURE_TEARDOWN(uring)
{
	int i;

	trace_stop(self->trace_dir);
	/* First: its death ends any request stuck on its faults */
	pvm_target_kill(&self->u);
	if (self->ring_up)
		io_uring_queue_exit(&self->ring);
	for (i = 0; i < NR_TARGETS - 1; i++) {
		pvm_target_stop(&self->more[i]);
		if (self->more_pidfd[i] >= 0)
			close(self->more_pidfd[i]);
	}
	pvm_target_stop(&self->t);
	if (self->pidfd >= 0)
		close(self->pidfd);
	if (self->upidfd >= 0)
		close(self->upidfd);
}

/* One request of the fixture's direction and variant on @fd */
static long fx_run(FIXTURE_DATA(uring) *self, int fd, const struct iovec *lv,
		   unsigned int nl, const struct iovec *rv, unsigned int nr,
		   unsigned int flags)
{
	return run_rw(&self->ring, self->write, false, fd, lv, nl, rv, nr,
		      flags, self->sqe_flags);
}

static struct io_uring_sqe *fx_sqe(FIXTURE_DATA(uring) *self, int fd,
				   const struct iovec *lv, unsigned int nl,
				   const struct iovec *rv, unsigned int nr,
				   unsigned int flags, uint64_t ud)
{
	return sqe_rw(&self->ring, self->write, false, fd, lv, nl, rv, nr,
		      flags, self->sqe_flags, ud);
}

/*
 * fork(), and in the child submit one request of the fixture's direction
 * and variant on the userfaultfd target, user_data 1, on a ring of its
 * own (@ring), which its exit or death then tears down.  Returns as
 * fork() does; a child that cannot submit exits with 1.
 */
static pid_t fork_submitter(FIXTURE_DATA(uring) *self, struct io_uring *ring,
			    const struct iovec *lv, const struct iovec *rv)
{
	pid_t pid = fork();

	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (io_uring_queue_init(8, ring, 0) ||
	    !sqe_rw(ring, self->write, false, self->upidfd, lv, 1, rv, 1, 0,
		    self->sqe_flags, 1) ||
	    io_uring_submit(ring) != 1)
		_exit(1);
	return 0;
}

#define OP(lv, nl, rv, nr, flags) \
	fx_run(self, self->pidfd, lv, nl, rv, nr, flags)

/*
 * Start the userfaultfd target with handler delay @delay_ms.  0, or
 * -errno to skip with when userfaultfd cannot serve kernel faults here;
 * a target that dies or cannot be opened as a pidfd fails the test.
 */
static int start_uffd(struct __test_metadata *_metadata,
		      FIXTURE_DATA(uring) *self, long delay_ms)
{
	long ret = pvm_target_start(&self->u, setup_uffd, delay_ms, 0, 0);

	ASSERT_NE(-EPIPE, ret);
	if (pvm_is_err(ret))
		return ret;
	self->uarea = ret;
	self->upidfd = sys_pidfd_open(self->u.pid, 0);
	ASSERT_LE(0, self->upidfd);
	return 0;
}

/* Local buffer before a call: SEED_L to be written, SENTINEL to be read */
static void prep(FIXTURE_DATA(uring) *self)
{
	if (self->write)
		pvm_fill(self->local, LOCAL_SZ, SEED_L);
	else
		memset(self->local, SENTINEL, LOCAL_SZ);
}

/*
 * After a call of the fixture's direction that moved @count bytes between
 * @lv (in self->local, prepared by prep()) and @rv (in the region of
 * @t, whose pattern is @seed): the local buffer (read) or the target's
 * data pages (write) must be what the userspace model gives, byte for
 * byte.  Restores the target's data pages after a write.
 */
static void verify_on(struct __test_metadata *_metadata,
		      FIXTURE_DATA(uring) *self, struct pvm_target *t,
		      uint32_t seed, const struct iovec *lv, int nl,
		      const struct iovec *rv, int nr, size_t count)
{
	uint8_t *mirror = malloc(REGION_SZ), *buf = malloc(LOCAL_SZ);
	struct iovec *ml = calloc(nl + 1, sizeof(*ml));
	struct iovec *mr = calloc(nr + 1, sizeof(*mr));

	ASSERT_NE(NULL, mirror);
	ASSERT_NE(NULL, buf);
	ASSERT_NE(NULL, ml);
	ASSERT_NE(NULL, mr);
	pvm_fill(mirror, REGION_SZ, seed);
	pvm_iov_rebase(mr, rv, nr, region, mirror);
	if (self->write) {
		ASSERT_EQ(count, pvm_iov_model(mr, nr, lv, nl, count));
		ASSERT_EQ(0, pvm_target_dump(t, (unsigned long)region, buf,
					     DATA_SZ));
		EXPECT_EQ(-1, pvm_first_diff(buf, mirror, DATA_SZ));
		ASSERT_EQ(0, pvm_target_call(t, pvm_cmd_fill,
					     (unsigned long)region, DATA_SZ,
					     seed));
	} else {
		memset(buf, SENTINEL, LOCAL_SZ);
		pvm_iov_rebase(ml, lv, nl, self->local, buf);
		ASSERT_EQ(count, pvm_iov_model(ml, nl, mr, nr, count));
		EXPECT_EQ(-1, pvm_first_diff(self->local, buf, LOCAL_SZ));
	}
	free(mirror);
	free(buf);
	free(ml);
	free(mr);
}

static void verify(struct __test_metadata *_metadata,
		   FIXTURE_DATA(uring) *self, const struct iovec *lv, int nl,
		   const struct iovec *rv, int nr, size_t count)
{
	verify_on(_metadata, self, &self->t, SEED_R, lv, nl, rv, nr, count);
}

/* The target's data pages still hold their pattern (nothing written). */
static void untouched(struct __test_metadata *_metadata,
		      FIXTURE_DATA(uring) *self)
{
	EXPECT_EQ(-1, pvm_target_call(&self->t, pvm_cmd_check,
				      (unsigned long)region, DATA_SZ, SEED_R));
}

/* ---- shapes ----------------------------------------------------------- */

static const struct pvm_shape shapes[] = {
	{ "1x1", 5, 0, 4090, 0,
	  { 3 * 4096 + 77, PVM_SHAPE_END },
	  { 3 * 4096 + 77, PVM_SHAPE_END } },
	{ "1x1 straddle", 4095, 0, 8190, 0,
	  { 3, PVM_SHAPE_END }, { 3, PVM_SHAPE_END } },
	{ "1xN", 1, 0, 4000, 13,
	  { 20000, PVM_SHAPE_END },
	  { 1, 4095, 4097, 0, 1803, 7777, PVM_SHAPE_END } },
	{ "Nx1", 4093, 5, 4091, 0,
	  { 1, 4095, 4097, 0, 8191, 11, PVM_SHAPE_END },
	  { 16400, PVM_SHAPE_END } },
	{ "3x5 uneven", 3, 4099, 4094, 1,
	  { 5000, 7, 9000, PVM_SHAPE_END },
	  { 4097, 2, 6000, 1, 3907, PVM_SHAPE_END } },
	{ "more local", 0, 0, 4000, 100,
	  { 10000, PVM_SHAPE_END }, { 100, 200, PVM_SHAPE_END } },
	{ "more remote", 4095, 1, 0, 0,
	  { 100, 50, PVM_SHAPE_END }, { 10000, PVM_SHAPE_END } },
	{ "multi page", 12, 4096, 1, 8192,
	  { 9 * 4096 + 1, 3, PVM_SHAPE_END },
	  { 2 * 4096 - 1, 3 * 4096 + 7, PVM_SHAPE_END } },
};

/* Every shape, data checked against the model byte by byte */
TEST_F(uring, shapes)
{
	struct pvm_shape_iov io;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(shapes); i++) {
		pvm_shape_layout(&io, &shapes[i], self->local, region);
		prep(self);
		EXPECT_EQ((long)io.count, OP(io.l, io.nl, io.r, io.nr, 0)) {
			TH_LOG("shape %s", shapes[i].name);
		}
		verify(_metadata, self, io.l, io.nl, io.r, io.nr, io.count);
	}
}

/* One-byte iovecs up to the limit of 1024 on either side, and beyond */
TEST_F(uring, max_iovecs)
{
	struct iovec *lv = calloc(MAX_IOV + 1, sizeof(*lv));
	struct iovec *rv = calloc(MAX_IOV + 1, sizeof(*rv));
	struct iovec l1 = { self->local + 7, MAX_IOV };
	struct iovec r1 = { region + 3, MAX_IOV };
	int i;

	ASSERT_NE(NULL, lv);
	ASSERT_NE(NULL, rv);
	for (i = 0; i <= MAX_IOV; i++) {
		lv[i] = (struct iovec){ self->local + 3 * i + 1, 1 };
		rv[i] = (struct iovec){ region + 17 * i + 2, 1 };
	}
	prep(self);
	ASSERT_EQ(MAX_IOV, OP(lv, MAX_IOV, rv, MAX_IOV, 0));
	verify(_metadata, self, lv, MAX_IOV, rv, MAX_IOV, MAX_IOV);
	prep(self);
	ASSERT_EQ(MAX_IOV, OP(lv, MAX_IOV, &r1, 1, 0));
	verify(_metadata, self, lv, MAX_IOV, &r1, 1, MAX_IOV);
	prep(self);
	ASSERT_EQ(MAX_IOV, OP(&l1, 1, rv, MAX_IOV, 0));
	verify(_metadata, self, &l1, 1, rv, MAX_IOV, MAX_IOV);

	prep(self);
	EXPECT_EQ(-EINVAL, OP(lv, MAX_IOV + 1, &r1, 1, 0));
	EXPECT_EQ(-EINVAL, OP(&l1, 1, rv, MAX_IOV + 1, 0));
	verify(_metadata, self, &l1, 1, &r1, 1, 0);
	free(lv);
	free(rv);
}

/* ---- batches and registered files ------------------------------------- */

/*
 * 64 requests over 4 targets (each with its own pattern) in one submit,
 * each with two uneven local iovecs; every result and byte checked.
 */
TEST_F(uring, batch)
{
	struct pvm_target *tg[NR_TARGETS] = { &self->t };
	int fds[NR_TARGETS] = { self->pidfd };
	struct iovec lv[BATCH][2], rv[BATCH];
	struct cqe_rec c[BATCH];
	size_t slot = DATA_SZ / (BATCH / NR_TARGETS);
	uint8_t *buf = pvm_map_anon(BATCH * psz);
	uint64_t ud0 = ud_seq;
	int i, k;

	ASSERT_NE(NULL, buf);
	ASSERT_GE(slot, 100);
	for (k = 1; k < NR_TARGETS; k++) {
		ASSERT_EQ(0, start_target(&self->more[k - 1],
					  &self->more_pidfd[k - 1],
					  SEED_R + k));
		tg[k] = &self->more[k - 1];
		fds[k] = self->more_pidfd[k - 1];
	}
	for (i = 0; i < BATCH; i++) {
		size_t len = slot - 1 - (i % 5) * 7, half = len / 3;
		uint8_t *b = buf + i * psz;

		k = i % NR_TARGETS;
		rv[i] = (struct iovec){ region + (i / NR_TARGETS) * slot +
					i % 2, len };
		lv[i][0] = (struct iovec){ b, half };
		lv[i][1] = (struct iovec){ b + half + 1, len - half };
		if (self->write) {
			pvm_fill_at(b, half, SEED_L + i, 0);
			pvm_fill_at(b + half + 1, len - half, SEED_L + i, half);
		} else {
			memset(b, SENTINEL, psz);
		}
		ASSERT_NE(NULL, fx_sqe(self, fds[k], lv[i], 2, &rv[i], 1, 0,
				       ud0 + i));
	}
	ud_seq += BATCH;
	ASSERT_EQ(BATCH, io_uring_submit(&self->ring));
	ASSERT_EQ(BATCH, reap(&self->ring, c, BATCH, WAIT_MS));

	for (i = 0; i < BATCH; i++) {
		size_t len = rv[i].iov_len, half = lv[i][0].iov_len;
		unsigned long roff = (uint8_t *)rv[i].iov_base - region;
		uint8_t *b = lv[i][0].iov_base;

		k = i % NR_TARGETS;
		EXPECT_EQ((long)len, res_of(c, BATCH, ud0 + i)) {
			TH_LOG("request %d", i);
		}
		if (self->write) {
			EXPECT_TRUE(remote_is(tg[k], (unsigned long)rv[i].iov_base,
					      len, SEED_L + i, 0)) {
				TH_LOG("request %d", i);
			}
			continue;
		}
		EXPECT_EQ(-1, pvm_check_at(b, half, SEED_R + k, roff)) {
			TH_LOG("request %d", i);
		}
		EXPECT_EQ(SENTINEL, b[half]);
		EXPECT_EQ(-1, pvm_check_at(b + half + 1, len - half, SEED_R + k,
					   roff + half)) {
			TH_LOG("request %d", i);
		}
		EXPECT_EQ(-1, pvm_check_byte(b + len + 1, psz - len - 1,
					     SENTINEL));
	}
	munmap(buf, BATCH * psz);
}

/*
 * Registered pidfds (IOSQE_FIXED_FILE): each index reaches its own
 * target, also after the original pidfd is closed; a registered file that
 * is no pidfd and an index past the table are EBADF.
 */
TEST_F(uring, fixed_files)
{
	struct iovec l = { self->local + 10, 3 * psz + 5 };
	struct iovec r = { region + 20, 3 * psz + 5 };
	int fds[3], i;
	uint32_t seeds[2] = { SEED_R, SEED_R + 1 };
	struct pvm_target *tg[2] = { &self->t, &self->more[0] };

	ASSERT_EQ(0, start_target(&self->more[0], &self->more_pidfd[0],
				  SEED_R + 1));
	fds[0] = self->pidfd;
	fds[1] = self->more_pidfd[0];
	fds[2] = open("/dev/null", O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fds[2]);
	ASSERT_EQ(0, io_uring_register_files(&self->ring, fds, 3));
	close(fds[2]);
	close(self->more_pidfd[0]);
	self->more_pidfd[0] = -1;

	for (i = 0; i < 2; i++) {
		prep(self);
		ASSERT_EQ((long)r.iov_len,
			  run_rw(&self->ring, self->write, true, i, &l, 1, &r,
				 1, 0, self->sqe_flags));
		verify_on(_metadata, self, tg[i], seeds[i], &l, 1, &r, 1,
			  r.iov_len);
	}
	prep(self);
	EXPECT_EQ(-EBADF, run_rw(&self->ring, self->write, true, 2, &l, 1, &r,
				 1, 0, self->sqe_flags));
	EXPECT_EQ(-EBADF, run_rw(&self->ring, self->write, true, 3, &l, 1, &r,
				 1, 0, self->sqe_flags));
	verify(_metadata, self, &l, 1, &r, 1, 0);
	EXPECT_EQ(0, io_uring_unregister_files(&self->ring));
}

/* ---- errors ----------------------------------------------------------- */

/*
 * Faults: a remote range running into the target's hole is short, one
 * starting there is EFAULT; so are protected pages, a bad local buffer
 * (partial after a good iovec) and bad iovec array pointers.
 */
TEST_F(uring, partial)
{
	uint8_t *lhole = pvm_hole(psz);
	struct iovec l = { self->local, 300 };
	struct iovec l2[2] = { { self->local, 50 }, { lhole, 50 } };
	struct iovec r = { PG(HOLE_PG) - 100, 300 };
	struct iovec r2[2] = { { PG(3), 40 }, { PG(HOLE_PG) + 10, 40 } };
	bool w = self->write;

	ASSERT_NE(NULL, lhole);
	prep(self);
	ASSERT_EQ(100, OP(&l, 1, &r, 1, 0));
	verify(_metadata, self, &l, 1, &r, 1, 100);
	r.iov_base = PG(HOLE_PG);
	ASSERT_EQ(-EFAULT, OP(&l, 1, &r, 1, 0));
	prep(self);
	ASSERT_EQ(40, OP(&l, 1, r2, 2, 0));
	verify(_metadata, self, &l, 1, r2, 2, 40);
	ASSERT_EQ(-EFAULT, OP(&l, 1, &r2[1], 1, 0));

	/* read-only: a source, no destination; PROT_NONE: neither */
	r.iov_base = PG(RO_PG);
	EXPECT_EQ(w ? -EFAULT : 300, OP(&l, 1, &r, 1, 0));
	if (!w)
		EXPECT_EQ(-1, pvm_check_at(self->local, 300, SEED_R,
					   RO_PG * psz));
	r.iov_base = PG(NONE_PG);
	EXPECT_EQ(-EFAULT, OP(&l, 1, &r, 1, 0));
	r.iov_base = KERNEL_PTR;
	EXPECT_EQ(-EFAULT, OP(&l, 1, &r, 1, 0));

	/* local buffer */
	r.iov_base = PG(2);
	r.iov_len = 100;
	prep(self);
	ASSERT_EQ(50, OP(l2, 2, &r, 1, 0));
	verify(_metadata, self, l2, 1, &r, 1, 50);
	ASSERT_EQ(-EFAULT, OP(&l2[1], 1, &r, 1, 0));

	/* iovec arrays */
	EXPECT_EQ(-EFAULT, OP((struct iovec *)lhole, 1, &r, 1, 0));
	EXPECT_EQ(-EFAULT, OP(&l, 1, (struct iovec *)lhole, 1, 0));
	EXPECT_EQ(-EFAULT, OP((struct iovec *)KERNEL_PTR, 1, &r, 1, 0));
	EXPECT_EQ(-EFAULT, OP(&l, 1, (struct iovec *)KERNEL_PTR, 1, 0));
	untouched(_metadata, self);
}

/*
 * Not a pidfd: EBADF.  With nothing to copy, only an fd that io_uring
 * cannot resolve is EBADF; an open file that is no pidfd gives 0, as the
 * syscalls return 0 for nothing to copy before they look at the target.
 */
TEST_F(uring, bad_fd)
{
	struct iovec l = { self->local, 100 }, r = { region, 100 };
	struct iovec l0 = { self->local, 0 }, r0 = { region, 0 };
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	int exe = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	int closed = dup(null);

	ASSERT_LE(0, null);
	ASSERT_LE(0, exe);
	ASSERT_LE(0, closed);
	ASSERT_EQ(0, close(closed));
	prep(self);
	EXPECT_EQ(-EBADF, fx_run(self, null, &l, 1, &r, 1, 0));
	EXPECT_EQ(-EBADF, fx_run(self, exe, &l, 1, &r, 1, 0));
	EXPECT_EQ(-EBADF, fx_run(self, closed, &l, 1, &r, 1, 0));
	EXPECT_EQ(-EBADF, fx_run(self, -1, &l, 1, &r, 1, 0));
	EXPECT_EQ(-EBADF, fx_run(self, closed, &l, 0, &r, 1, 0));
	EXPECT_EQ(-EBADF, fx_run(self, -1, &l0, 1, &r0, 1, 0));
	EXPECT_EQ(0, fx_run(self, null, &l, 0, &r, 1, 0));
	EXPECT_EQ(pvm_res(pvm_rwf(self->write, null, &l0, 1, &r0, 1,
				  PROCESS_VM_PIDFD)),
		  fx_run(self, null, &l0, 1, &r0, 1, 0));
	EXPECT_EQ(0, OP(&l, 0, &r, 1, 0));
	EXPECT_EQ(0, OP(&l, 1, &r, 0, 0));
	EXPECT_EQ(0, OP(&l0, 1, &r, 1, 0));
	EXPECT_EQ(0, OP(&l, 1, &r0, 1, 0));
	EXPECT_EQ(0, OP(&l, 0, &r, 1, PROCESS_VM_NOWAIT));
	verify(_metadata, self, &l, 1, &r, 1, 0);
	close(null);
	close(exe);
}

/* The pidfd of a zombie or of a reaped process: ESRCH */
TEST_F(uring, dead_target)
{
	struct iovec l = { self->local, 100 }, r = { region, 100 };
	struct pvm_target *z = &self->more[0];
	int zfd;

	ASSERT_EQ(0, start_target(z, &self->more_pidfd[0], SEED_R));
	zfd = self->more_pidfd[0];
	prep(self);
	ASSERT_EQ(100, fx_run(self, zfd, &l, 1, &r, 1, 0));
	verify_on(_metadata, self, z, SEED_R, &l, 1, &r, 1, 100);
	prep(self);
	ASSERT_EQ(0, pvm_target_send(z, pvm_cmd_exit, 0, 0, 0));
	ASSERT_EQ(0, pvm_wait_zombie(z->pid));
	EXPECT_EQ(-ESRCH, fx_run(self, zfd, &l, 1, &r, 1, 0));
	EXPECT_EQ(-ESRCH, fx_run(self, zfd, &l, 1, &r, 1, PROCESS_VM_NOWAIT));
	EXPECT_EQ(0, pvm_target_stop(z));
	EXPECT_EQ(-ESRCH, fx_run(self, zfd, &l, 1, &r, 1, 0));
	verify(_metadata, self, &l, 1, &r, 1, 0);
}

/*
 * Invalid SQEs: unknown flags, PROCESS_VM_PIDFD missing, fields that must
 * be 0, too many iovecs, negative lengths, an IOPOLL ring: EINVAL;
 * IOSQE_BUFFER_SELECT: EOPNOTSUPP.  Nothing is copied.
 */
TEST_F(uring, einval)
{
	struct iovec l = { self->local, 100 }, r = { region, 100 };
	struct iovec lneg = { self->local, NEG_LEN };
	struct iovec rneg = { region, NEG_LEN };
	struct io_uring *ring = &self->ring;
	static const unsigned int bad_flags[] = {
		0, PROCESS_VM_NOWAIT, 1U << 2, 1U << 31,
		PROCESS_VM_PIDFD | (1U << 2),
	};
	struct io_uring_sqe *sqe;
	struct io_uring ipoll;
	uint64_t ud;
	unsigned int i;
	int field;

	prep(self);
	for (i = 0; i < ARRAY_SIZE(bad_flags); i++) {
		ud = ud_seq++;
		sqe = fx_sqe(self, self->pidfd, &l, 1, &r, 1, 0, ud);
		ASSERT_NE(NULL, sqe);
		sqe->rw_flags = bad_flags[i];
		EXPECT_EQ(-EINVAL, submit_wait(ring, ud)) {
			TH_LOG("rw_flags %#x", bad_flags[i]);
		}
	}
	for (field = 0; field < 4; field++) {
		ud = ud_seq++;
		sqe = fx_sqe(self, self->pidfd, &l, 1, &r, 1, 0, ud);
		ASSERT_NE(NULL, sqe);
		switch (field) {
		case 0:
			sqe->ioprio = 1;
			break;
		case 1:
			sqe->buf_index = 1;
			break;
		case 2:
			sqe->addr3 = (unsigned long)&r;
			break;
		default:
			sqe->__pad2[0] = 1;
			break;
		}
		EXPECT_EQ(-EINVAL, submit_wait(ring, ud)) {
			TH_LOG("field %d", field);
		}
	}
	ud = ud_seq++;
	sqe = fx_sqe(self, self->pidfd, &l, 1, &r, 1, 0, ud);
	ASSERT_NE(NULL, sqe);
	sqe->flags |= IOSQE_BUFFER_SELECT;
	EXPECT_EQ(-EOPNOTSUPP, submit_wait(ring, ud));

	EXPECT_EQ(-EINVAL, OP(&l, MAX_IOV + 1, &r, 1, 0));
	EXPECT_EQ(-EINVAL, OP(&l, 1, &r, MAX_IOV + 1, 0));
	EXPECT_EQ(-EINVAL, OP(&lneg, 1, &r, 1, 0));
	EXPECT_EQ(-EINVAL, OP(&l, 1, &rneg, 1, 0));

	ASSERT_EQ(0, io_uring_queue_init(8, &ipoll, IORING_SETUP_IOPOLL));
	EXPECT_EQ(-EINVAL, run_rw(&ipoll, self->write, false, self->pidfd,
				  &l, 1, &r, 1, 0, self->sqe_flags));
	io_uring_queue_exit(&ipoll);

	verify(_metadata, self, &l, 1, &r, 1, 0);
	untouched(_metadata, self);
}

static int drop_to_nobody(void)
{
	if (setgroups(0, NULL) ||
	    setresgid(GID_NOBODY, GID_NOBODY, GID_NOBODY))
		return -1;
	return setresuid(UID_NOBODY, UID_NOBODY, UID_NOBODY);
}

/*
 * A caller that may not ptrace-attach to the target: EPERM, whether the
 * pidfd was opened by a privileged process (and inherited) or by the
 * caller, with and without NOWAIT.  The caller is a child that switched
 * to nobody; the target runs as root.
 */
TEST_F(uring, eperm)
{
	struct iovec l = { self->local, 100 }, r = { region, 100 };
	long res[4];
	int p[2], status, i;
	pid_t pid;

	if (geteuid() != 0)
		SKIP(return, "needs root to switch to nobody");
	ASSERT_EQ(0, pipe(p));
	prep(self);
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct io_uring ring;
		int fd;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(p[0]);
		for (i = 0; i < 4; i++)
			res[i] = PVM_RING_NO_SQE;
		if (drop_to_nobody() || io_uring_queue_init(8, &ring, 0))
			_exit(pvm_write_full(p[1], res, sizeof(res)) ?
			      KSFT_FAIL : KSFT_SKIP);
		fd = sys_pidfd_open(self->t.pid, 0);
		res[0] = run_rw(&ring, self->write, false, self->pidfd, &l, 1,
				&r, 1, 0, self->sqe_flags);
		res[1] = run_rw(&ring, self->write, false, self->pidfd, &l, 1,
				&r, 1, PROCESS_VM_NOWAIT, self->sqe_flags);
		res[2] = fd < 0 ? -errno :
			 run_rw(&ring, self->write, false, fd, &l, 1, &r, 1, 0,
				self->sqe_flags);
		res[3] = run_rw(&ring, !self->write, false, self->pidfd, &l, 1,
				&r, 1, 0, self->sqe_flags);
		_exit(pvm_write_full(p[1], res, sizeof(res)) ?
		      KSFT_FAIL : KSFT_PASS);
	}
	close(p[1]);
	ASSERT_EQ(0, pvm_read_full(p[0], res, sizeof(res)));
	close(p[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == KSFT_SKIP)
		SKIP(return, "cannot become nobody or create a ring as nobody");
	for (i = 0; i < 4; i++)
		EXPECT_EQ(-EPERM, res[i]) {
			TH_LOG("call %d", i);
		}
	verify(_metadata, self, &l, 1, &r, 1, 0);
	untouched(_metadata, self);
	/* ...while we still may */
	ASSERT_EQ(100, OP(&l, 1, &r, 1, 0));
	verify(_metadata, self, &l, 1, &r, 1, 100);
}

/* ---- execution paths -------------------------------------------------- */

/*
 * A resident target completes inline: no io-wq thread appears, no
 * io_uring_queue_async_work event.  With IOSQE_ASYNC both do (which also
 * shows that both observations work).
 */
TEST_F(uring, path_resident)
{
	size_t len = 3 * psz + 100;
	struct iovec l = { self->local + 1, len }, r = { region + 5, len };
	bool traced = trace_start(self->trace_dir, sizeof(self->trace_dir));
	bool async = self->sqe_flags & IOSQE_ASYNC;
	uint64_t ud = ud_seq;

	if (!traced)
		TH_LOG("no tracefs instance: judging by io-wq threads only");
	ASSERT_EQ(0, iowq_threads());
	prep(self);
	ASSERT_EQ((long)len, OP(&l, 1, &r, 1, 0));
	verify(_metadata, self, &l, 1, &r, 1, len);
	EXPECT_EQ(async, iowq_threads() > 0);
	if (traced)
		EXPECT_EQ(async ? 1 : 0, trace_count(self->trace_dir, ud));
}

/* Target memory that no fault can make accessible, of each kind */
enum { BAD_UNMAPPED, BAD_PROT_NONE, BAD_READ_ONLY, BAD_SECRET, BAD_KINDS };

static const char *const bad_kind[BAD_KINDS] = {
	"unmapped", "PROT_NONE", "read-only", "memfd_secret",
};

/* In the target: a page of bad memory of @kind; its address or -errno */
static long cmd_map_bad(struct pvm_target *t, unsigned long kind,
			unsigned long b, unsigned long c)
{
	int prot = kind == BAD_PROT_NONE ? PROT_NONE : PROT_READ;
	void *p;
	int fd;

	if (kind == BAD_SECRET) {
		fd = sys_memfd_secret(0);
		if (fd < 0 || ftruncate(fd, psz))
			return -errno;
		p = mmap(NULL, psz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
	} else {
		p = mmap(NULL, psz, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	}
	if (p == MAP_FAILED)
		return -errno;
	if (kind == BAD_UNMAPPED)
		munmap(p, psz);
	return (long)p;
}

/*
 * An address that no fault can make good fails inline with EFAULT: no
 * mapping, PROT_NONE, a read-only mapping for a write, secret memory.  No
 * io-wq thread appears for it (with IOSQE_ASYNC the request goes there
 * anyway), and nothing is copied.
 */
TEST_F(uring, path_bad)
{
	struct iovec l = { self->local, 100 }, r;
	bool async = self->sqe_flags & IOSQE_ASYNC;
	uint8_t sentinel[100];
	unsigned long kind;
	long addr;

	memset(sentinel, SENTINEL, sizeof(sentinel));
	ASSERT_EQ(0, iowq_threads());
	for (kind = 0; kind < BAD_KINDS; kind++) {
		if (kind == BAD_READ_ONLY && !self->write)
			continue;	/* readable: not bad for a read */
		addr = pvm_target_call(&self->t, cmd_map_bad, kind, 0, 0);
		ASSERT_NE(-EPIPE, addr);
		if (kind == BAD_SECRET && pvm_is_err(addr) &&
		    pvm_syscall_missing(-addr)) {
			TH_LOG("no memfd_secret() here: %s", strerror(-addr));
			continue;
		}
		ASSERT_FALSE(pvm_is_err(addr)) {
			TH_LOG("%s memory in the target: %s", bad_kind[kind],
			       strerror(-addr));
		}
		r = (struct iovec){ (void *)addr, 100 };
		prep(self);
		EXPECT_EQ(-EFAULT, OP(&l, 1, &r, 1, 0)) {
			TH_LOG("%s", bad_kind[kind]);
		}
		EXPECT_EQ(async, iowq_threads() > 0) {
			TH_LOG("%s: io-wq threads %d", bad_kind[kind],
			       iowq_threads());
		}
		if (!self->write)
			EXPECT_EQ(-1, pvm_first_diff(self->local, sentinel,
						     sizeof(sentinel)));
	}
	untouched(_metadata, self);
}

/* The last userfaultfd fault came from an io-wq worker of ours. */
static void expect_fault_from_iowq(struct __test_metadata *_metadata,
				   FIXTURE_DATA(uring) *self)
{
	long ptid = pvm_target_call(&self->u, cmd_uffd_ptid, 0, 0, 0);

	EXPECT_NE(sys_gettid(), ptid);
	EXPECT_TRUE(is_iowq_thread(ptid)) {
		TH_LOG("the fault came from thread %ld, not an io-wq worker of ours",
		       ptid);
	}
}

/*
 * A missing page is punted: the fault on the target's userfaultfd comes
 * from an io-wq thread of ours, not from the submitter, and the data is
 * whole once the handler supplied the pages.  The iovec arrays are
 * overwritten right after the submit: the kernel must have its copies.
 */
TEST_F_TIMEOUT(uring, path_missing, 60)
{
	size_t len = UFFD_PAGES * psz - 200;
	struct iovec l, r;
	bool traced;
	uint64_t ud = ud_seq++;
	long res;
	int ret;

	ret = start_uffd(_metadata, self, 0);
	if (ret)
		SKIP(return, "userfaultfd for kernel faults unavailable: %s",
		     strerror(-ret));
	traced = trace_start(self->trace_dir, sizeof(self->trace_dir));
	l = (struct iovec){ self->local + 3, len };
	r = (struct iovec){ (void *)(self->uarea + 100), len };
	prep(self);
	ASSERT_NE(NULL, fx_sqe(self, self->upidfd, &l, 1, &r, 1, 0, ud));
	ASSERT_EQ(1, io_uring_submit(&self->ring));
	l = (struct iovec){ NULL, 0 };
	r = (struct iovec){ KERNEL_PTR, 1 };
	res = wait_ud(&self->ring, ud, WAIT_MS);
	ASSERT_EQ((long)len, res);

	expect_fault_from_iowq(_metadata, self);
	EXPECT_EQ(UFFD_PAGES, pvm_target_call(&self->u, cmd_uffd_faults, 0, 0,
					      0));
	if (traced)
		EXPECT_EQ(1, trace_count(self->trace_dir, ud));
	if (self->write) {
		EXPECT_TRUE(remote_is(&self->u, self->uarea + 100, len, SEED_L,
				      3));
		EXPECT_TRUE(remote_is(&self->u, self->uarea, 100, SEED_U, 0));
	} else {
		EXPECT_EQ(-1, pvm_check_at(self->local + 3, len, SEED_U, 100));
		EXPECT_EQ(SENTINEL, self->local[2]);
		EXPECT_EQ(SENTINEL, self->local[3 + len]);
	}
}

/*
 * After @count bytes of a request of the fixture's direction between @lv
 * (in self->local, prepared by prep()) and @rv (in the userfaultfd area,
 * whose pages hold SEED_U as supplied): the local buffer (read) or the
 * first @span bytes of the area (write; they must be resident, or the
 * dump would wait for the handler) are what the model gives, byte for
 * byte.
 */
static void verify_uffd(struct __test_metadata *_metadata,
			FIXTURE_DATA(uring) *self, const struct iovec *lv,
			int nl, const struct iovec *rv, int nr, size_t count,
			size_t span)
{
	size_t asz = UFFD_PAGES * psz;
	uint8_t *mirror = malloc(asz), *buf = malloc(LOCAL_SZ);
	struct iovec ml[8], mr[8];

	ASSERT_NE(NULL, mirror);
	ASSERT_NE(NULL, buf);
	ASSERT_GE(8, nl);
	ASSERT_GE(8, nr);
	ASSERT_GE(asz, span);
	pvm_fill(mirror, asz, SEED_U);
	pvm_iov_rebase(mr, rv, nr, (void *)self->uarea, mirror);
	if (self->write) {
		ASSERT_EQ(count, pvm_iov_model(mr, nr, lv, nl, count));
		ASSERT_EQ(0, pvm_target_dump(&self->u, self->uarea, buf,
					     span));
		EXPECT_EQ(-1, pvm_first_diff(buf, mirror, span));
	} else {
		memset(buf, SENTINEL, LOCAL_SZ);
		pvm_iov_rebase(ml, lv, nl, self->local, buf);
		ASSERT_EQ(count, pvm_iov_model(ml, nl, mr, nr, count));
		EXPECT_EQ(-1, pvm_first_diff(self->local, buf, LOCAL_SZ));
	}
	free(mirror);
	free(buf);
}

/*
 * The io-wq retry goes on in the middle of a remote iovec.  Pages 0 and 1
 * of the area are resident, 2 and 3 missing, and the handler never
 * answers.  The inline attempt copies the first remote iovec and the part
 * of the second (from an odd offset in page 1) that is resident, then
 * stops at page 2; the worker must resume at page 2, not at the start of
 * the second iovec (from there, a read would fill the local bytes meant
 * for pages 2 and 3 with bytes from page 1 on, a write would overwrite
 * the prefix already written and never reach the iovec's end).  Checked:
 * exactly that prefix has moved when the submit returns and when the
 * worker waits on page 2 (inline variants); the pages are then supplied,
 * and the result, every byte, the fault (one, from an io-wq worker of
 * ours) and the punt (one) are checked.
 */
TEST_F_TIMEOUT(uring, path_resume_mid_iovec, 60)
{
	bool async = self->sqe_flags & IOSQE_ASYNC;
	struct iovec lv[2], rv[3];
	size_t pre, total;
	uint64_t ud = ud_seq++;
	bool traced;
	int ret;

	ret = start_uffd(_metadata, self, -1);
	if (ret)
		SKIP(return, "userfaultfd for kernel faults unavailable: %s",
		     strerror(-ret));
	traced = trace_start(self->trace_dir, sizeof(self->trace_dir));
	ASSERT_EQ(0, pvm_target_call(&self->u, cmd_uffd_populate, self->uarea,
				     2 * psz, 0));
	rv[0] = (struct iovec){ (void *)(self->uarea + 33), 200 };
	rv[1] = (struct iovec){ (void *)(self->uarea + psz + 1001),
				2 * psz - 1001 + 77 };
	rv[2] = (struct iovec){ (void *)(self->uarea + 3 * psz + 501), 300 };
	pre = rv[0].iov_len + psz - 1001;
	total = pvm_iov_sum(rv, 3);
	/* The local side splits elsewhere: the prefix ends inside lv[1] */
	lv[0] = (struct iovec){ self->local + 5, psz / 2 + 3 };
	lv[1] = (struct iovec){ self->local + psz, total - lv[0].iov_len };
	prep(self);
	ASSERT_NE(NULL, fx_sqe(self, self->upidfd, lv, 2, rv, 3, 0, ud));
	ASSERT_EQ(1, io_uring_submit(&self->ring));
	/* The inline attempt ran in the submit and left the prefix */
	if (!async)
		verify_uffd(_metadata, self, lv, 2, rv, 3, pre, 2 * psz);
	ASSERT_TRUE(poll_target(&self->u, cmd_uffd_faults, 1, true, WAIT_MS));
	ASSERT_TRUE(poll_target(&self->u, cmd_uffd_waiters, 1, false,
				WAIT_MS));
	/*
	 * The worker waits on page 2, having moved nothing more.  (A worker
	 * that starts the request pins page 1 with page 2 and waits before
	 * it copies from page 1: nothing to check for IOSQE_ASYNC here.)
	 */
	if (!async)
		verify_uffd(_metadata, self, lv, 2, rv, 3, pre, 2 * psz);

	/* Page 3 first, so that page 2 wakes the only waiter */
	ASSERT_EQ(0, pvm_target_call(&self->u, cmd_uffd_populate,
				     self->uarea + 3 * psz, psz, 0));
	ASSERT_EQ(0, pvm_target_call(&self->u, cmd_uffd_populate,
				     self->uarea + 2 * psz, psz, 0));
	ASSERT_EQ((long)total, wait_ud(&self->ring, ud, WAIT_MS));
	verify_uffd(_metadata, self, lv, 2, rv, 3, total, UFFD_PAGES * psz);

	expect_fault_from_iowq(_metadata, self);
	EXPECT_EQ(1, pvm_target_call(&self->u, cmd_uffd_faults, 0, 0, 0));
	if (traced)
		EXPECT_EQ(1, trace_count(self->trace_dir, ud));
}

/*
 * The handler answers each fault after 200 ms: io_uring_submit() does not
 * wait for it (< 20 ms), the completion does (>= 200 ms), data whole.
 */
TEST_F_TIMEOUT(uring, submit_never_blocks, 60)
{
	size_t len = 2 * psz;
	struct iovec l, r;
	long long t0, t1, t2;
	uint64_t ud = ud_seq++;
	long res;
	int ret;

	ret = start_uffd(_metadata, self, 200);
	if (ret)
		SKIP(return, "userfaultfd for kernel faults unavailable: %s",
		     strerror(-ret));
	l = (struct iovec){ self->local, len };
	r = (struct iovec){ (void *)self->uarea, len };
	prep(self);
	ASSERT_NE(NULL, fx_sqe(self, self->upidfd, &l, 1, &r, 1, 0, ud));
	t0 = pvm_now_ms();
	ret = io_uring_submit(&self->ring);
	t1 = pvm_now_ms();
	l.iov_base = KERNEL_PTR;
	r.iov_base = NULL;
	ASSERT_EQ(1, ret);
	res = wait_ud(&self->ring, ud, WAIT_MS);
	t2 = pvm_now_ms();
	EXPECT_GT(20, t1 - t0);
	EXPECT_LE(200, t2 - t0);
	ASSERT_EQ((long)len, res);
	EXPECT_NE(sys_gettid(), pvm_target_call(&self->u, cmd_uffd_ptid, 0, 0,
						0));
	if (self->write)
		EXPECT_TRUE(remote_is(&self->u, self->uarea, len, SEED_L, 0));
	if (!self->write)
		EXPECT_EQ(-1, pvm_check(self->local, len, SEED_U));
}

/*
 * PROCESS_VM_NOWAIT is never punted to wait for a page: EFAULT at once on
 * a missing page (the handler never answers, and is not even asked), a
 * short count after resident data.
 */
TEST_F_TIMEOUT(uring, nowait_missing, 60)
{
	struct iovec l, r;
	long long t0;
	int ret;

	ret = start_uffd(_metadata, self, -1);
	if (ret)
		SKIP(return, "userfaultfd for kernel faults unavailable: %s",
		     strerror(-ret));
	l = (struct iovec){ self->local, 128 };
	r = (struct iovec){ (void *)(self->uarea + psz - 64), 128 };
	prep(self);
	t0 = pvm_now_ms();
	EXPECT_EQ(-EFAULT, fx_run(self, self->upidfd, &l, 1, &r, 1,
				  PROCESS_VM_NOWAIT));
	EXPECT_GT(500, pvm_now_ms() - t0);

	ASSERT_EQ(0, pvm_target_call(&self->u, cmd_uffd_populate, self->uarea,
				     psz, 0));
	t0 = pvm_now_ms();
	EXPECT_EQ(64, fx_run(self, self->upidfd, &l, 1, &r, 1,
			     PROCESS_VM_NOWAIT));
	EXPECT_GT(500, pvm_now_ms() - t0);
	EXPECT_EQ(0, pvm_target_call(&self->u, cmd_uffd_faults, 0, 0, 0));
	EXPECT_EQ(0, pvm_target_call(&self->u, cmd_uffd_waiters, 0, 0, 0));
	if (self->write) {
		EXPECT_TRUE(remote_is(&self->u, self->uarea + psz - 64, 64,
				      SEED_L, 0));
		EXPECT_TRUE(remote_is(&self->u, self->uarea, psz - 64, SEED_U,
				      0));
	} else {
		EXPECT_EQ(-1, pvm_check_at(self->local, 64, SEED_U, psz - 64));
		EXPECT_EQ(-1, pvm_check_byte(self->local + 64, 64, SENTINEL));
	}
}

/* ---- links ------------------------------------------------------------ */

/* A short or failed head of an IOSQE_IO_LINK chain cancels the next */
TEST_F(uring, link_short)
{
	struct iovec l = { self->local, 300 }, ln = { self->local + 8 * psz, 50 };
	struct iovec heads[3] = {
		{ PG(HOLE_PG) - 100, 300 },	/* short: 100 */
		{ PG(HOLE_PG), 300 },		/* EFAULT */
		{ PG(1), 300 },			/* whole */
	};
	static const long head_res[3] = { 100, -EFAULT, 300 };
	struct iovec rn = { PG(5) + 7, 50 };
	struct io_uring_sqe *sqe;
	struct cqe_rec c[2];
	uint64_t ud;
	int i;

	for (i = 0; i < 3; i++) {
		ud = ud_seq;
		ud_seq += 2;
		prep(self);
		sqe = fx_sqe(self, self->pidfd, &l, 1, &heads[i], 1, 0, ud);
		ASSERT_NE(NULL, sqe);
		sqe->flags |= IOSQE_IO_LINK;
		ASSERT_NE(NULL, fx_sqe(self, self->pidfd, &ln, 1, &rn, 1, 0,
				       ud + 1));
		ASSERT_EQ(2, io_uring_submit(&self->ring));
		ASSERT_EQ(2, reap(&self->ring, c, 2, WAIT_MS));
		EXPECT_EQ(head_res[i], res_of(c, 2, ud));
		if (head_res[i] == 300) {
			EXPECT_EQ(50, res_of(c, 2, ud + 1));
			continue;
		}
		EXPECT_EQ(-ECANCELED, res_of(c, 2, ud + 1)) {
			TH_LOG("head %d", i);
		}
		/* only the head moved data */
		verify(_metadata, self, &l, 1, &heads[i], 1,
		       head_res[i] < 0 ? 0 : head_res[i]);
	}
}

/* ---- cancellation ----------------------------------------------------- */

/*
 * Submit on @ring a request in the fixture's direction on the userfaultfd
 * target for @len bytes at @off in its area, and wait until the handler
 * has seen fault number @nfault (a fault it never answers).
 */
static void submit_stuck(struct __test_metadata *_metadata,
			 FIXTURE_DATA(uring) *self, struct io_uring *ring,
			 size_t off, size_t len, int nfault, uint64_t ud)
{
	struct iovec l = { self->local, len };
	struct iovec r = { (void *)(self->uarea + off), len };

	ASSERT_NE(NULL, sqe_rw(ring, self->write, false, self->upidfd, &l, 1,
			       &r, 1, 0, self->sqe_flags, ud));
	ASSERT_EQ(1, io_uring_submit(ring));
	ASSERT_TRUE(poll_target(&self->u, cmd_uffd_faults, nfault, true,
				WAIT_MS));
	ASSERT_TRUE(poll_target(&self->u, cmd_uffd_waiters, 1, false,
				WAIT_MS));
}

/* The stuck fault's waiter goes away within PROMPT_MS of @t0 */
static void unstuck_by(struct __test_metadata *_metadata,
		       FIXTURE_DATA(uring) *self, long long t0)
{
	long left = t0 + PROMPT_MS - pvm_now_ms();

	EXPECT_TRUE(poll_target(&self->u, cmd_uffd_waiters, 0, false,
				left > 0 ? left : 0)) {
		TH_LOG("a thread still waits for the fault after %lld ms",
		       pvm_now_ms() - t0);
	}
}

/* Cancel @ud with IORING_OP_ASYNC_CANCEL; its result, within PROMPT_MS */
static long cancel_ud(struct __test_metadata *_metadata,
		      FIXTURE_DATA(uring) *self, uint64_t ud)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&self->ring);
	uint64_t cud = ud_seq++;
	struct cqe_rec c[2];
	long long t0;
	long res;
	int n;

	if (!sqe)
		return PVM_RING_NO_SQE;
	io_uring_prep_cancel64(sqe, ud, 0);
	sqe->user_data = cud;
	t0 = pvm_now_ms();
	if (io_uring_submit(&self->ring) != 1)
		return PVM_RING_NOT_SUBMITTED;
	n = reap(&self->ring, c, 2, PROMPT_MS);
	EXPECT_GT(PROMPT_MS, pvm_now_ms() - t0);
	EXPECT_EQ(2, n);
	/* 0: cancelled before it ran; EALREADY: running, interrupted */
	res = res_of(c, n, cud);
	EXPECT_TRUE(res == 0 || res == -EALREADY) {
		TH_LOG("cancel: %ld", res);
	}
	unstuck_by(_metadata, self, t0);
	return res_of(c, n, ud);
}

/*
 * IORING_OP_ASYNC_CANCEL of a request stuck on a fault that is never
 * resolved: it completes within a second, with EINTR or ECANCELED if
 * nothing was copied, else with the bytes copied before the fault.
 */
TEST_F_TIMEOUT(uring, cancel, 60)
{
	uint64_t ud;
	long res;
	int ret;

	ret = start_uffd(_metadata, self, -1);
	if (ret)
		SKIP(return, "userfaultfd for kernel faults unavailable: %s",
		     strerror(-ret));

	ud = ud_seq++;
	prep(self);
	submit_stuck(_metadata, self, &self->ring, psz, 100, 1, ud);
	res = cancel_ud(_metadata, self, ud);
	EXPECT_TRUE(res == -EINTR || res == -ECANCELED) {
		TH_LOG("stuck request: %ld", res);
	}

	/* 100 bytes of a resident page first */
	ASSERT_EQ(0, pvm_target_call(&self->u, cmd_uffd_populate, self->uarea,
				     psz, 0));
	ud = ud_seq++;
	prep(self);
	submit_stuck(_metadata, self, &self->ring, psz - 100, 200, 2, ud);
	EXPECT_EQ(100, cancel_ud(_metadata, self, ud));
	if (self->write) {
		EXPECT_TRUE(remote_is(&self->u, self->uarea + psz - 100, 100,
				      SEED_L, 0));
	} else {
		EXPECT_EQ(-1, pvm_check_at(self->local, 100, SEED_U,
					   psz - 100));
		EXPECT_EQ(-1, pvm_check_byte(self->local + 100, 100,
					     SENTINEL));
	}
}

/*
 * A fault of a FUSE file page whose server never answers the read: the
 * request waits in io-wq for the page, and IORING_OP_ASYNC_CANCEL ends
 * that wait within a second with EINTR.  The request copies to or from
 * the test's own private mapping of the file, through its own pidfd.
 */
TEST_F_TIMEOUT(uring, cancel_fuse, 60)
{
	uint64_t ud = ud_seq++, cud = ud_seq++;
	size_t len = 16 * psz;
	struct io_uring_sqe *sqe;
	struct pvm_fuse fuse;
	struct iovec l, r;
	struct cqe_rec c[2];
	int fd, pidfd, n;
	long long t0;
	void *map;

	n = pvm_fuse_start(&fuse, len);
	if (n)
		SKIP(return, "no FUSE mount: %s", strerror(-n));
	fd = open(fuse.path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	ASSERT_TRUE(map != MAP_FAILED);
	pidfd = sys_pidfd_open(getpid(), 0);
	ASSERT_LE(0, pidfd);

	l = (struct iovec){ self->local, 100 };
	r = (struct iovec){ (char *)map + psz, 100 };
	prep(self);
	ASSERT_NE(NULL, sqe_rw(&self->ring, self->write, false, pidfd, &l, 1,
			       &r, 1, 0, self->sqe_flags, ud));
	ASSERT_EQ(1, io_uring_submit(&self->ring));
	ASSERT_EQ(FUSE_READ, pvm_fuse_next(&fuse, WAIT_MS));

	sqe = io_uring_get_sqe(&self->ring);
	ASSERT_NE(NULL, sqe);
	io_uring_prep_cancel64(sqe, ud, 0);
	sqe->user_data = cud;
	t0 = pvm_now_ms();
	ASSERT_EQ(1, io_uring_submit(&self->ring));
	n = reap(&self->ring, c, 2, PROMPT_MS);
	EXPECT_EQ(2, n) {
		TH_LOG("the FUSE wait went on for %lld ms after the cancel",
		       pvm_now_ms() - t0);
	}
	EXPECT_EQ(-EALREADY, res_of(c, n, cud));
	EXPECT_EQ(-EINTR, res_of(c, n, ud));

	/* A request the cancel did not end ends with the server */
	pvm_fuse_stop(&fuse);
	if (res_of(c, n, ud) == PVM_RING_NO_CQE)
		TH_LOG("after the server: %ld",
		       wait_ud(&self->ring, ud, WAIT_MS));
	munmap(map, len);
	close(fd);
	close(pidfd);
}

/* Closing the ring ends a stuck request within a second */
TEST_F_TIMEOUT(uring, cancel_ring_close, 60)
{
	long long t0;
	int ret;

	ret = start_uffd(_metadata, self, -1);
	if (ret)
		SKIP(return, "userfaultfd for kernel faults unavailable: %s",
		     strerror(-ret));
	prep(self);
	submit_stuck(_metadata, self, &self->ring, 0, 100, 1, ud_seq++);
	t0 = pvm_now_ms();
	io_uring_queue_exit(&self->ring);
	self->ring_up = false;
	EXPECT_GT(PROMPT_MS, pvm_now_ms() - t0);
	unstuck_by(_metadata, self, t0);
}

struct submitter {
	FIXTURE_DATA(uring) *self;
	uint64_t ud;
	int submitted;
	int go[2];
};

/* No harness asserts here: they must not run outside the test's thread */
static void *submitter_fn(void *arg)
{
	struct submitter *s = arg;
	struct iovec l = { s->self->local, 100 };
	struct iovec r = { (void *)s->self->uarea, 100 };
	char c;

	if (sqe_rw(&s->self->ring, s->self->write, false, s->self->upidfd,
		   &l, 1, &r, 1, 0, s->self->sqe_flags, s->ud))
		s->submitted = io_uring_submit(&s->self->ring);
	pvm_read_full(s->go[0], &c, 1);
	return NULL;
}

/*
 * The thread that submitted a stuck request exits: the exit does not hang
 * on it, the request completes (EINTR or ECANCELED) within a second.
 */
TEST_F_TIMEOUT(uring, cancel_thread_exit, 60)
{
	struct submitter s = { .self = self };
	struct timespec deadline;
	long long t0;
	pthread_t th;
	long res;
	int ret;

	ret = start_uffd(_metadata, self, -1);
	if (ret)
		SKIP(return, "userfaultfd for kernel faults unavailable: %s",
		     strerror(-ret));
	ASSERT_EQ(0, pipe(s.go));
	s.ud = ud_seq++;
	prep(self);
	ASSERT_EQ(0, pthread_create(&th, NULL, submitter_fn, &s));
	ASSERT_TRUE(poll_target(&self->u, cmd_uffd_waiters, 1, false,
				WAIT_MS));
	ASSERT_EQ(1, __atomic_load_n(&s.submitted, __ATOMIC_ACQUIRE));

	t0 = pvm_now_ms();
	ASSERT_EQ(1, write(s.go[1], "x", 1));
	clock_gettime(CLOCK_REALTIME, &deadline);
	deadline.tv_sec += 2;
	ret = pthread_timedjoin_np(th, NULL, &deadline);
	EXPECT_EQ(0, ret);
	EXPECT_GT(PROMPT_MS, pvm_now_ms() - t0);
	res = wait_ud(&self->ring, s.ud, PROMPT_MS);
	EXPECT_TRUE(res == -EINTR || res == -ECANCELED) {
		TH_LOG("stuck request: %ld", res);
	}
	EXPECT_GT(PROMPT_MS, pvm_now_ms() - t0);
	unstuck_by(_metadata, self, t0);
	if (ret)
		pthread_detach(th);
}

/*
 * The process that submitted a stuck request on its own ring exits, or is
 * killed: it is gone within a second.
 */
TEST_F_TIMEOUT(uring, cancel_process_exit, 60)
{
	struct iovec l = { self->local, 100 }, r;
	int go[2], ready[2], pidfd, status, ret, how;
	struct io_uring ring;
	struct pollfd pfd;
	long long t0;
	pid_t pid;
	char c;

	ret = start_uffd(_metadata, self, -1);
	if (ret)
		SKIP(return, "userfaultfd for kernel faults unavailable: %s",
		     strerror(-ret));
	r = (struct iovec){ (void *)self->uarea, 100 };

	for (how = 0; how < 2; how++) {
		ASSERT_EQ(0, pipe(go));
		ASSERT_EQ(0, pipe(ready));
		prep(self);
		pid = fork_submitter(self, &ring, &l, &r);
		ASSERT_LE(0, pid);
		if (pid == 0) {
			close(go[1]);
			close(ready[0]);
			c = 'r';
			if (pvm_write_full(ready[1], &c, 1))
				_exit(2);
			pvm_read_full(go[0], &c, 1);
			_exit(0);
		}
		close(go[0]);
		close(ready[1]);
		ASSERT_EQ(0, pvm_read_full(ready[0], &c, 1));
		ASSERT_TRUE(poll_target(&self->u, cmd_uffd_faults, how + 1,
					true, WAIT_MS));
		ASSERT_EQ(1, pvm_target_call(&self->u, cmd_uffd_waiters, 0, 0,
					     0));
		pidfd = sys_pidfd_open(pid, 0);
		ASSERT_LE(0, pidfd);

		t0 = pvm_now_ms();
		if (how)
			ASSERT_EQ(0, kill(pid, SIGKILL));
		if (!how)
			ASSERT_EQ(1, write(go[1], "x", 1));
		pfd = (struct pollfd){ .fd = pidfd, .events = POLLIN };
		EXPECT_EQ(1, poll(&pfd, 1, PROMPT_MS)) {
			TH_LOG("the submitter did not exit within %d ms (%s)",
			       PROMPT_MS, how ? "SIGKILL" : "_exit");
		}
		unstuck_by(_metadata, self, t0);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		if (how)
			EXPECT_TRUE(WIFSIGNALED(status));
		if (!how)
			EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
		close(pidfd);
		close(go[1]);
		close(ready[0]);
	}
}

/*
 * A job-control stop does not end a copy.  The submitter, a child with its
 * own ring, is stopped (SIGSTOP, then SIGTSTP) while its request waits in
 * io-wq on a missing page whose handler never answers.  While it is
 * stopped no worker waits on the fault; once it is continued the request
 * waits there again, and when the page is supplied it completes whole.
 */
TEST_F_TIMEOUT(uring, stop_resumes, 60)
{
	static const int sigs[] = { SIGSTOP, SIGTSTP };
	struct iovec l = { self->local, 100 }, r;
	int out[2], status, ret, i, res;
	struct io_uring ring;
	struct pollfd pfd;
	pid_t pid;

	ret = start_uffd(_metadata, self, -1);
	if (ret)
		SKIP(return, "userfaultfd for kernel faults unavailable: %s",
		     strerror(-ret));
	for (i = 0; i < 2; i++) {
		r = (struct iovec){ (void *)(self->uarea + i * psz), 100 };
		prep(self);
		ASSERT_EQ(0, pipe(out));
		pid = fork_submitter(self, &ring, &l, &r);
		ASSERT_LE(0, pid);
		if (pid == 0) {
			struct io_uring_cqe *cqe;

			close(out[0]);
			/* The stop and the continue interrupt the wait. */
			do
				ret = io_uring_wait_cqe(&ring, &cqe);
			while (ret == -EINTR);
			if (ret || pvm_write_full(out[1], &cqe->res,
						  sizeof(cqe->res)) ||
			    pvm_write_full(out[1], self->local, l.iov_len))
				_exit(2);
			_exit(0);
		}
		close(out[1]);
		ASSERT_TRUE(poll_target(&self->u, cmd_uffd_waiters, 1, false,
					WAIT_MS));
		ASSERT_EQ(0, kill(pid, sigs[i]));
		ASSERT_EQ(pid, waitpid(pid, &status, WUNTRACED));
		ASSERT_TRUE(WIFSTOPPED(status));
		EXPECT_TRUE(poll_target(&self->u, cmd_uffd_waiters, 0, false,
					WAIT_MS));
		ASSERT_EQ(0, kill(pid, SIGCONT));
		EXPECT_TRUE(poll_target(&self->u, cmd_uffd_waiters, 1, false,
					WAIT_MS)) {
			TH_LOG("the copy did not go on after SIGCONT");
		}
		pfd = (struct pollfd){ .fd = out[0], .events = POLLIN };
		EXPECT_EQ(0, poll(&pfd, 1, 0)) {
			TH_LOG("the request completed before its page came");
		}
		ASSERT_EQ(0, pvm_target_call(&self->u, cmd_uffd_populate,
					     (unsigned long)r.iov_base, psz,
					     0));
		ASSERT_EQ(0, pvm_read_full(out[0], &res, sizeof(res)));
		EXPECT_EQ((int)l.iov_len, res);
		/* The child's local bytes: what a read brought. */
		ASSERT_EQ(0, pvm_read_full(out[0], self->local, l.iov_len));
		if (self->write) {
			EXPECT_TRUE(remote_is(&self->u,
					      (unsigned long)r.iov_base,
					      l.iov_len, SEED_L, 0));
		} else {
			EXPECT_EQ(-1, pvm_check_at(self->local, l.iov_len,
						   SEED_U, i * psz));
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
		close(out[0]);
	}
}

/*
 * Every page pinned is unpinned again: after complete, short and failed
 * requests, and after requests stuck behind a resident page that were
 * cancelled or whose ring was closed.  Other pinners could move the
 * counters, so a mismatch must persist over three tries to count.
 */
TEST_F_TIMEOUT(uring, pins_balanced, 120)
{
	uint8_t *lhole = pvm_hole(psz);
	struct iovec l = { self->local, 8 * psz }, r = { region, 8 * psz };
	struct iovec l2[2] = { { self->local, 3 * psz }, { lhole, 10 } };
	struct iovec rh = { PG(HOLE_PG) - 2 * psz, 3 * psz };
	struct io_uring ring2;
	long before, after = 0;
	long long end;
	int ret, try, nfault = 0;

	if (!pvm_pins_held(&before))
		SKIP(return, "no nr_foll_pin_* in /proc/vmstat, or no root to fold them");
	ret = start_uffd(_metadata, self, -1);
	if (ret)
		SKIP(return, "userfaultfd for kernel faults unavailable: %s",
		     strerror(-ret));
	ASSERT_NE(NULL, lhole);
	ASSERT_EQ(0, pvm_target_call(&self->u, cmd_uffd_populate, self->uarea,
				     2 * psz, 0));

	for (try = 0; try < 3; try++) {
		ASSERT_TRUE(pvm_pins_held(&before));
		prep(self);
		ASSERT_EQ(8 * psz, OP(&l, 1, &r, 1, 0));
		ASSERT_EQ(2 * psz, OP(&l, 1, &rh, 1, 0));
		ASSERT_EQ(3 * psz, OP(l2, 2, &r, 1, 0));
		ASSERT_EQ(-EFAULT, OP(&l2[1], 1, &r, 1, 0));

		ud_seq++;
		submit_stuck(_metadata, self, &self->ring, 0, 3 * psz,
			     ++nfault, ud_seq - 1);
		ASSERT_EQ(2 * psz, cancel_ud(_metadata, self, ud_seq - 1));

		ASSERT_EQ(0, io_uring_queue_init(8, &ring2, 0));
		submit_stuck(_metadata, self, &ring2, psz, 2 * psz, ++nfault,
			     ud_seq++);
		io_uring_queue_exit(&ring2);
		unstuck_by(_metadata, self, pvm_now_ms());

		/* The worker may still be unwinding: give it a second */
		end = pvm_now_ms() + PROMPT_MS;
		do {
			ASSERT_TRUE(pvm_pins_held(&after));
		} while (after != before && pvm_now_ms() < end &&
			 !usleep(20000));
		if (after == before)
			break;
	}
	EXPECT_EQ(before, after);
}

/* ---- parity with the system calls ------------------------------------- */

/* Where an iovec points: a page of the region, or one of these */
#define P_LOCAL		(-1)	/* the local buffer */
#define P_LHOLE		(-2)	/* an unmapped local page */
#define P_KERNEL	(-3)	/* a kernel address */

struct piece {
	int pg;
	long off;
	size_t len;
};

struct pcase {
	const char *name;
	unsigned int flags;
	int nl, nr;
	struct piece l[4], r[4];
};

static const struct pcase pcases[] = {
	{ "1x1", 0, 1, 1, { { P_LOCAL, 0, 5000 } }, { { 0, 100, 5000 } } },
	{ "1xN", 0, 1, 4, { { P_LOCAL, 1, 9000 } },
	  { { 1, 0, 10 }, { 2, 7, 4000 }, { 0, 0, 0 }, { 5, 3, 4990 } } },
	{ "Nx1", 0, 3, 1,
	  { { P_LOCAL, 0, 10 }, { P_LOCAL, 4096, 3000 },
	    { P_LOCAL, 3 * 4096 + 5, 5990 } },
	  { { 2, 11, 9000 } } },
	{ "more local", 0, 1, 1, { { P_LOCAL, 0, 10000 } },
	  { { 0, 0, 300 } } },
	{ "more remote", 0, 1, 1, { { P_LOCAL, 0, 300 } },
	  { { 0, 0, 10000 } } },
	{ "remote into hole", 0, 1, 1, { { P_LOCAL, 0, 300 } },
	  { { HOLE_PG, -100, 300 } } },
	{ "remote hole first", 0, 1, 1, { { P_LOCAL, 0, 300 } },
	  { { HOLE_PG, 0, 300 } } },
	{ "remote hole second", 0, 1, 2, { { P_LOCAL, 0, 300 } },
	  { { 4, 0, 100 }, { HOLE_PG, 0, 100 } } },
	{ "remote hole then data", 0, 1, 2, { { P_LOCAL, 0, 300 } },
	  { { HOLE_PG, 0, 10 }, { REGION_PAGES - 1, 0, 10 } } },
	{ "remote read-only", 0, 1, 1, { { P_LOCAL, 0, 300 } },
	  { { RO_PG, 5, 300 } } },
	{ "remote PROT_NONE", 0, 1, 1, { { P_LOCAL, 0, 300 } },
	  { { NONE_PG, 0, 300 } } },
	{ "remote kernel address", 0, 1, 1, { { P_LOCAL, 0, 300 } },
	  { { P_KERNEL, 0, 16 } } },
	{ "local hole second", 0, 2, 1,
	  { { P_LOCAL, 0, 50 }, { P_LHOLE, 0, 50 } }, { { 0, 0, 100 } } },
	{ "local hole first", 0, 1, 1, { { P_LHOLE, 0, 50 } },
	  { { 0, 0, 50 } } },
	{ "zero lengths", 0, 2, 2, { { P_LOCAL, 0, 0 }, { P_LOCAL, 9, 0 } },
	  { { 0, 0, 0 }, { HOLE_PG, 0, 0 } } },
	{ "no local iovec", 0, 0, 1, { }, { { 0, 0, 100 } } },
	{ "no remote iovec", 0, 1, 0, { { P_LOCAL, 0, 100 } }, { } },
	{ "negative local length", 0, 1, 1, { { P_LOCAL, 0, NEG_LEN } },
	  { { 0, 0, 100 } } },
	{ "negative remote length", 0, 1, 1, { { P_LOCAL, 0, 100 } },
	  { { 0, 0, NEG_LEN } } },
	{ "nowait resident", PROCESS_VM_NOWAIT, 1, 2,
	  { { P_LOCAL, 3, 9000 } }, { { 3, 1, 4000 }, { 7, 0, 5000 } } },
	{ "nowait into hole", PROCESS_VM_NOWAIT, 1, 1,
	  { { P_LOCAL, 0, 300 } }, { { HOLE_PG, -100, 300 } } },
	{ "unknown flag", 1U << 2, 1, 1, { { P_LOCAL, 0, 100 } },
	  { { 0, 0, 100 } } },
};

static void make_iov(struct iovec *iov, const struct piece *p, int n,
		     uint8_t *local, uint8_t *lhole)
{
	int i;

	for (i = 0; i < n; i++) {
		uint8_t *base;

		switch (p[i].pg) {
		case P_LOCAL:
			base = local;
			break;
		case P_LHOLE:
			base = lhole;
			break;
		case P_KERNEL:
			base = KERNEL_PTR;
			break;
		default:
			base = PG(p[i].pg);
			break;
		}
		iov[i] = (struct iovec){ base + p[i].off, p[i].len };
	}
}

/*
 * One call through process_vm_{read,write}v(PROCESS_VM_PIDFD) and one
 * through the opcode: the same result and the same bytes moved.
 */
static void parity_one(struct __test_metadata *_metadata,
		       FIXTURE_DATA(uring) *self, const char *name,
		       const struct iovec *lv, int nl, const struct iovec *rv,
		       int nr, unsigned int flags)
{
	uint8_t *after_sys = malloc(LOCAL_SZ), *after_op = malloc(LOCAL_SZ);
	unsigned long base = (unsigned long)region;
	long rsys, rop;

	ASSERT_NE(NULL, after_sys);
	ASSERT_NE(NULL, after_op);
	prep(self);
	rsys = pvm_res(pvm_rwf(self->write, self->pidfd, lv, nl, rv, nr,
			       flags | PROCESS_VM_PIDFD));
	if (self->write) {
		ASSERT_EQ(0, pvm_target_dump(&self->t, base, after_sys,
					     DATA_SZ));
		ASSERT_EQ(0, pvm_target_call(&self->t, pvm_cmd_fill, base,
					     DATA_SZ, SEED_R));
	} else {
		memcpy(after_sys, self->local, LOCAL_SZ);
	}
	prep(self);
	rop = OP(lv, nl, rv, nr, flags);
	if (self->write) {
		ASSERT_EQ(0, pvm_target_dump(&self->t, base, after_op,
					     DATA_SZ));
		ASSERT_EQ(0, pvm_target_call(&self->t, pvm_cmd_fill, base,
					     DATA_SZ, SEED_R));
	} else {
		memcpy(after_op, self->local, LOCAL_SZ);
	}
	EXPECT_EQ(rsys, rop) {
		TH_LOG("%s: syscall %ld, io_uring %ld", name, rsys, rop);
	}
	EXPECT_EQ(-1, pvm_first_diff(after_sys, after_op,
				     self->write ? DATA_SZ : LOCAL_SZ)) {
		TH_LOG("%s: the data differs", name);
	}
	free(after_sys);
	free(after_op);
}

TEST_F(uring, parity)
{
	static const int counts[][2] = {
		{ MAX_IOV, MAX_IOV }, { MAX_IOV, 1 }, { 1, MAX_IOV },
		{ MAX_IOV + 1, 1 }, { 1, MAX_IOV + 1 },
	};
	struct iovec *lv = calloc(MAX_IOV + 1, sizeof(*lv));
	struct iovec *rv = calloc(MAX_IOV + 1, sizeof(*rv));
	uint8_t *lhole = pvm_hole(psz);
	char name[64];
	unsigned int i;
	int j;

	ASSERT_NE(NULL, lv);
	ASSERT_NE(NULL, rv);
	ASSERT_NE(NULL, lhole);
	for (i = 0; i < ARRAY_SIZE(pcases); i++) {
		const struct pcase *c = &pcases[i];

		make_iov(lv, c->l, c->nl, self->local, lhole);
		make_iov(rv, c->r, c->nr, self->local, lhole);
		parity_one(_metadata, self, c->name, lv, c->nl, rv, c->nr,
			   c->flags);
	}
	/* bad iovec array pointers */
	parity_one(_metadata, self, "bad local array", (void *)lhole, 1, rv, 1,
		   0);
	parity_one(_metadata, self, "bad remote array", lv, 1, (void *)lhole,
		   1, 0);
	/* iovec counts around the limit, one byte each */
	for (i = 0; i < ARRAY_SIZE(counts); i++) {
		for (j = 0; j <= MAX_IOV; j++) {
			lv[j] = (struct iovec){ self->local + 5 * j, 1 };
			rv[j] = (struct iovec){ region + 11 * j + 1, j % 3 };
		}
		snprintf(name, sizeof(name), "%d x %d iovecs", counts[i][0],
			 counts[i][1]);
		parity_one(_metadata, self, name, lv, counts[i][0], rv,
			   counts[i][1], 0);
	}
	free(lv);
	free(rv);
}

/*
 * kernel.io_uring_process_vm_disabled: 0 allows the ops, 1 only to
 * submitters with CAP_SYS_PTRACE, 2 to nobody; the syscalls stay.  Each
 * copy reads 100 bytes of the caller itself through its own pidfd, which
 * needs no ptrace permission, so that only the switch can refuse it.
 */
#define PVM_SYSCTL	"/proc/sys/kernel/io_uring_process_vm_disabled"

/* A read of oneself on a new ring: its result; as nobody in a child. */
static long self_read(bool nobody)
{
	static uint8_t src[100], dst[100];
	struct iovec l = { dst, sizeof(dst) }, r = { src, sizeof(src) };
	struct io_uring ring;
	long res = PVM_RING_NOT_SUBMITTED;
	int p[2], fd;
	pid_t pid;

	if (nobody) {
		if (pipe(p))
			return -errno;
		pid = fork();
		if (pid < 0)
			return -errno;
		if (!pid) {
			close(p[0]);
			res = drop_to_nobody() ? -errno : self_read(false);
			pvm_write_full(p[1], &res, sizeof(res));
			_exit(0);
		}
		close(p[1]);
		if (pvm_read_full(p[0], &res, sizeof(res)))
			res = -EPIPE;
		close(p[0]);
		waitpid(pid, NULL, 0);
		return res;
	}
	fd = sys_pidfd_open(getpid(), 0);
	if (fd < 0)
		return -errno;
	if (!io_uring_queue_init(4, &ring, 0)) {
		res = run_rw(&ring, false, false, fd, &l, 1, &r, 1,
			     PROCESS_VM_PIDFD, 0);
		io_uring_queue_exit(&ring);
	}
	close(fd);
	return res;
}

TEST(admin_switch)
{
	static const struct {
		int value;
		bool nobody;
		long want;
	} rows[] = {
		{ 0, false, 100 }, { 0, true, 100 },
		{ 1, false, 100 }, { 1, true, -EPERM },
		{ 2, false, -EPERM }, { 2, true, -EPERM },
	};
	struct io_uring ring;
	uint8_t buf[8];
	long old;
	unsigned int i;

	ASSERT_EQ(0, io_uring_queue_init(4, &ring, 0));
	if (!pvm_uring_supported(&ring)) {
		io_uring_queue_exit(&ring);
		SKIP(return, "no io_uring PROCESS_VM_READV/WRITEV");
	}
	io_uring_queue_exit(&ring);
	old = pvm_read_long(PVM_SYSCTL);
	if (old < 0 || geteuid())
		SKIP(return, "no %s, or not root", PVM_SYSCTL);
	for (i = 0; i < ARRAY_SIZE(rows); i++) {
		EXPECT_EQ(0, pvm_write_long(PVM_SYSCTL, rows[i].value));
		EXPECT_EQ(rows[i].want, self_read(rows[i].nobody)) {
			TH_LOG("disabled=%d, %s", rows[i].value,
			       rows[i].nobody ? "nobody" : "root");
		}
	}
	/* The syscall does not look at the switch. */
	EXPECT_EQ(sizeof(buf), pvm_res(pvm_rw1(false, getpid(), buf,
					       (unsigned long)&old,
					       sizeof(buf))));
	EXPECT_EQ(0, pvm_write_long(PVM_SYSCTL, old));
}

/*
 * An opcode no kernel assigned completes with -EINVAL, as upstream answers
 * every opcode it does not know: the ones between the last upstream
 * opcode and ours too, so that a program probing for a later kernel's op
 * learns the same here as on any kernel.
 */
TEST(unknown_opcodes_einval)
{
	static const uint8_t ops[] = { 100, 150, 191, 194, 255 };
	struct io_uring_sqe *sqe;
	struct io_uring ring;
	unsigned int i;
	uint64_t ud;

	ASSERT_EQ(0, io_uring_queue_init(4, &ring, 0));
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		sqe = io_uring_get_sqe(&ring);
		ASSERT_NE(NULL, sqe);
		io_uring_prep_nop(sqe);
		sqe->opcode = ops[i];
		sqe->user_data = ud = ud_seq++;
		EXPECT_EQ(-EINVAL, submit_wait(&ring, ud)) {
			TH_LOG("opcode %u", ops[i]);
		}
	}
	io_uring_queue_exit(&ring);
}

TEST_HARNESS_MAIN
