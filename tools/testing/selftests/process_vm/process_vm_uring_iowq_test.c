// SPDX-License-Identifier: GPL-2.0
/*
 * IORING_OP_PROCESS_VM_READV/WRITEV requests that go on in io-wq:
 *
 *  - a request is bound to one address space: one whose inline part
 *    copied a page before it was punted, and whose target execs before
 *    io-wq runs the rest, stops at the exec with the bytes of the inline
 *    part; no byte of the new program is read or written;
 *  - the copies are unbound io-wq work, whatever the pidfd's file type:
 *    with one bound worker, a copy stuck on a target's fault does not
 *    hold up one that can go on; with one unbound worker, it does;
 *  - the inline attempt does not fault on the caller's own buffer: a
 *    local page behind a userfaultfd is faulted in by an io-wq thread,
 *    never by the submitting one.
 *
 * The io-wq limits (IORING_REGISTER_IOWQ_MAX_WORKERS) make the order of
 * events certain: a blocker request waits on a userfaultfd page of a
 * target that nobody resolves until the test says so.  Kernels without
 * the opcodes skip every test.
 */
#define _GNU_SOURCE
#include "process_vm_util.h"

#include <pthread.h>
#include <sys/ioctl.h>

#include "../../../process_vm/pvm_uring.h"
#include "../kselftest_harness.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif

/* Free in a 32-bit and a 64-bit process, before and after an exec */
#define FIXED_ADDR	((void *)0x50000000UL)
#define OLD_BYTE	'O'	/* the pre-exec image's page 0 */
#define NEW_BYTE	'N'	/* the new image's two pages */
#define SRC_BYTE	'A'	/* what a write copies */
#define SENTINEL	0xa5
#define EXEC_ARG	"--exec-image"

#define RING_ENTRIES	8
#define WAIT_MS		10000	/* a completion later than this is lost */
#define PROMPT_MS	1000	/* what "promptly" means */
#define HELD_MS		300	/* how long a held-up request is watched */

static size_t psz;

/* ---- the blocker: a request stuck on a userfaultfd page ----------------- */

static int stuck_uffd = -1;	/* in the blocker target */

/* A missing page registered with a userfaultfd: its address, or -errno. */
static long setup_stuck(struct pvm_target *t, unsigned long a,
			unsigned long b, unsigned long c)
{
	void *p = pvm_map_anon(psz);

	if (!p)
		return -errno;
	stuck_uffd = pvm_uffd_register(p, psz, 0, O_CLOEXEC);
	return stuck_uffd < 0 ? stuck_uffd : (long)p;
}

/* 0 once a fault on the page is pending, or -errno. */
static long cmd_wait_fault(struct pvm_target *t, unsigned long a,
			   unsigned long b, unsigned long c)
{
	struct uffd_msg msg;
	int ret;

	do {
		ret = pvm_uffd_next_fault(stuck_uffd, WAIT_MS, &msg);
	} while (ret == -EAGAIN);
	return ret;
}

/* Resolve the page at @addr: the stuck request goes on. */
static long cmd_release(struct pvm_target *t, unsigned long addr,
			unsigned long b, unsigned long c)
{
	uint8_t *page = pvm_map_anon(psz);
	int ret;

	if (!page)
		return -ENOMEM;
	memset(page, SENTINEL, psz);
	ret = pvm_uffd_copy(stuck_uffd, addr, page, psz);
	munmap(page, psz);
	return ret;
}

/* ---- the exec target ---------------------------------------------------- */

/* Two pages at FIXED_ADDR, @fill in both, or in page 0 only if @one. */
static long map_fixed(int fill, bool one)
{
	void *p = mmap(FIXED_ADDR, 2 * psz, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
		       -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	if (p != FIXED_ADDR) {
		munmap(p, 2 * psz);
		return -EEXIST;
	}
	madvise(p, 2 * psz, MADV_NOHUGEPAGE);
	memset(p, fill, one ? psz : 2 * psz);
	return 0;
}

/* Page 0 present, page 1 never touched: the copy punts there. */
static long setup_exec_target(struct pvm_target *t, unsigned long a,
			      unsigned long b, unsigned long c)
{
	prctl(PR_SET_PTRACER, -1UL, 0, 0, 0);
	return map_fixed(OLD_BYTE, true);
}

/* Exec this program as the new image: it answers this command itself. */
static long cmd_exec(struct pvm_target *t, unsigned long a, unsigned long b,
		     unsigned long c)
{
	char cmd[16], resp[16];

	snprintf(cmd, sizeof(cmd), "%d", t->cmd);
	snprintf(resp, sizeof(resp), "%d", t->resp);
	execl("/proc/self/exe", "process_vm_uring_iowq_test", EXEC_ARG, cmd,
	      resp, (char *)NULL);
	return -errno;
}

/*
 * The new image: the same two pages, both of NEW_BYTE; then the answer to
 * cmd_exec, and a wait for the test to close the command pipe.
 */
static int exec_image(int cmd, int resp)
{
	long ret;
	char c;

	psz = PVM_PAGE;
	prctl(PR_SET_PTRACER, -1UL, 0, 0, 0);
	ret = map_fixed(NEW_BYTE, false);
	if (pvm_write_full(resp, &ret, sizeof(ret)))
		return 1;
	while (read(cmd, &c, 1) > 0)
		;
	return 0;
}

/* ---- rings -------------------------------------------------------------- */

static void prep_rw(struct io_uring *ring, bool write, int pidfd,
		    const struct iovec *l, const struct iovec *r,
		    unsigned int sqe_flags, uint64_t ud)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(ring);

	if (write)
		pvm_uring_prep_writev(sqe, pidfd, l, 1, r, 1, PROCESS_VM_PIDFD);
	else
		pvm_uring_prep_readv(sqe, pidfd, l, 1, r, 1, PROCESS_VM_PIDFD);
	sqe->flags |= sqe_flags;
	sqe->user_data = ud;
}

/* The result of the next CQE if it is @ud's, or PVM_RING_NO_CQE */
static long next_cqe(struct io_uring *ring, uint64_t ud, long ms)
{
	struct __kernel_timespec ts = {
		.tv_sec = ms / 1000,
		.tv_nsec = (ms % 1000) * 1000000,
	};
	struct io_uring_cqe *cqe;
	long res = PVM_RING_NO_CQE;

	if (io_uring_wait_cqe_timeout(ring, &cqe, &ts))
		return res;
	if (cqe->user_data == ud)
		res = cqe->res;
	io_uring_cqe_seen(ring, cqe);
	return res;
}

FIXTURE(iowq)
{
	struct io_uring ring;
	bool ring_up;
	struct pvm_target blocker, target;
	int blocker_pidfd, pidfd;
	unsigned long stuck;	/* the blocker target's missing page */
	uint8_t *local;
	struct iovec bl, br;	/* the blocker request's iovecs */
};

FIXTURE_SETUP(iowq)
{
	long ret;

	psz = PVM_PAGE;
	self->blocker.pid = -1;
	self->target.pid = -1;
	self->blocker_pidfd = -1;
	self->pidfd = -1;
	ret = io_uring_queue_init(RING_ENTRIES, &self->ring, 0);
	if (ret)
		SKIP(return, "io_uring_queue_init: %s", strerror(-ret));
	self->ring_up = true;
	ASSERT_EQ(0, io_uring_ring_dontfork(&self->ring));
	if (!pvm_uring_supported(&self->ring))
		SKIP(return, "no io_uring PROCESS_VM_READV/WRITEV (ops %d/%d)",
		     PVM_IORING_OP_READV, PVM_IORING_OP_WRITEV);
	self->local = pvm_map_anon(3 * psz);
	ASSERT_NE(NULL, self->local);
	ret = pvm_target_start(&self->blocker, setup_stuck, 0, 0, 0);
	if (ret == -EPERM || pvm_syscall_missing(-ret))
		SKIP(return, "no userfaultfd: %s", strerror(-ret));
	ASSERT_FALSE(pvm_is_err(ret));
	self->stuck = ret;
	self->blocker_pidfd = syscall(__NR_pidfd_open, self->blocker.pid, 0);
	ASSERT_LE(0, self->blocker_pidfd);
}

FIXTURE_TEARDOWN(iowq)
{
	/* Their deaths end any request still stuck on them. */
	pvm_target_kill(&self->blocker);
	pvm_target_kill(&self->target);
	if (self->ring_up)
		io_uring_queue_exit(&self->ring);
	if (self->pidfd >= 0)
		close(self->pidfd);
	if (self->blocker_pidfd >= 0)
		close(self->blocker_pidfd);
}

static int set_limits(FIXTURE_DATA(iowq) *self, unsigned int bound,
		      unsigned int unbound)
{
	unsigned int v[2] = { bound, unbound };

	return io_uring_register_iowq_max_workers(&self->ring, v);
}

/*
 * Submit the blocker, a read of the stuck page into the local page 2,
 * inline first or with IOSQE_ASYNC, and wait until it waits on the fault.
 */
static void start_blocker(struct __test_metadata *_metadata,
			  FIXTURE_DATA(iowq) *self, unsigned int sqe_flags)
{
	self->bl = (struct iovec){ self->local + 2 * psz, psz };
	self->br = (struct iovec){ (void *)self->stuck, psz };
	prep_rw(&self->ring, false, self->blocker_pidfd, &self->bl, &self->br,
		sqe_flags, 1);
	ASSERT_EQ(1, io_uring_submit(&self->ring));
	ASSERT_EQ(0, pvm_target_call(&self->blocker, cmd_wait_fault, 0, 0, 0));
	ASSERT_EQ(PVM_RING_NO_CQE, next_cqe(&self->ring, 1, 0));
}

static void release_blocker(struct __test_metadata *_metadata,
			    FIXTURE_DATA(iowq) *self)
{
	ASSERT_EQ(0, pvm_target_call(&self->blocker, cmd_release,
				     self->stuck, 0, 0));
}

static void start_target(struct __test_metadata *_metadata,
			 FIXTURE_DATA(iowq) *self, pvm_fn setup)
{
	ASSERT_EQ(0, pvm_target_start(&self->target, setup, 0, 0, 0));
	self->pidfd = syscall(__NR_pidfd_open, self->target.pid, 0);
	ASSERT_LE(0, self->pidfd);
}

/* The target execs while the rest of a copy waits for an io-wq worker. */
static void exec_split(struct __test_metadata *_metadata,
		       FIXTURE_DATA(iowq) *self, bool write)
{
	struct iovec l = { self->local, 2 * psz };
	struct iovec r = { FIXED_ADDR, 2 * psz };
	uint8_t *back = pvm_map_anon(2 * psz);

	ASSERT_NE(NULL, back);
	start_target(_metadata, self, setup_exec_target);
	ASSERT_EQ(0, set_limits(self, 1, 1));
	start_blocker(_metadata, self, IOSQE_ASYNC);
	memset(self->local, write ? SRC_BYTE : SENTINEL, 2 * psz);
	/* Page 0 inline, then -EAGAIN on page 1: queued behind the blocker */
	prep_rw(&self->ring, write, self->pidfd, &l, &r, 0, 2);
	ASSERT_EQ(1, io_uring_submit(&self->ring));
	ASSERT_EQ(PVM_RING_NO_CQE, next_cqe(&self->ring, 2, HELD_MS));

	ASSERT_EQ(0, pvm_target_call(&self->target, cmd_exec, 0, 0, 0));
	release_blocker(_metadata, self);
	ASSERT_EQ(psz, next_cqe(&self->ring, 1, WAIT_MS));

	/* The inline page, and nothing of the new program */
	EXPECT_EQ(psz, next_cqe(&self->ring, 2, WAIT_MS));
	ASSERT_EQ(2 * psz, pvm_rw1(false, self->target.pid, back,
				   (unsigned long)FIXED_ADDR, 2 * psz));
	EXPECT_EQ(-1, pvm_check_byte(back, 2 * psz, NEW_BYTE));
	if (!write) {
		EXPECT_EQ(-1, pvm_check_byte(self->local, psz, OLD_BYTE));
		EXPECT_EQ(-1, pvm_check_byte(self->local + psz, psz,
					     SENTINEL));
	}
	munmap(back, 2 * psz);
}

TEST_F_TIMEOUT(iowq, exec_split_write, 60)
{
	exec_split(_metadata, self, true);
}

TEST_F_TIMEOUT(iowq, exec_split_read, 60)
{
	exec_split(_metadata, self, false);
}

/* Both pages at FIXED_ADDR there: a copy that can go on at once */
static long setup_resident(struct pvm_target *t, unsigned long a,
			   unsigned long b, unsigned long c)
{
	prctl(PR_SET_PTRACER, -1UL, 0, 0, 0);
	return map_fixed(OLD_BYTE, false);
}

/*
 * With @bound and @unbound io-wq workers and the blocker waiting in io-wq
 * (punted from its inline attempt, or IOSQE_ASYNC), a read of a resident
 * page with IOSQE_ASYNC: its result within HELD_MS, PVM_RING_NO_CQE if it
 * waited for the blocker.  Both requests are reaped before it returns.
 */
static long second_copy(struct __test_metadata *_metadata,
			FIXTURE_DATA(iowq) *self, unsigned int bound,
			unsigned int unbound, unsigned int blocker_flags)
{
	struct iovec l = { self->local, psz };
	struct iovec r = { FIXED_ADDR, psz };
	long res;

	start_target(_metadata, self, setup_resident);
	ASSERT_EQ(0, set_limits(self, bound, unbound));
	start_blocker(_metadata, self, blocker_flags);
	prep_rw(&self->ring, false, self->pidfd, &l, &r, IOSQE_ASYNC, 2);
	ASSERT_EQ(1, io_uring_submit(&self->ring));
	res = next_cqe(&self->ring, 2, HELD_MS);
	release_blocker(_metadata, self);
	EXPECT_EQ(psz, next_cqe(&self->ring, 1, WAIT_MS));
	if (res == PVM_RING_NO_CQE)
		EXPECT_EQ(psz, next_cqe(&self->ring, 2, WAIT_MS));
	EXPECT_EQ(-1, pvm_check_byte(self->local, psz, OLD_BYTE));
	return res;
}

/* One bound worker: the stuck copy is not in its pool. */
TEST_F_TIMEOUT(iowq, not_held_by_bound_limit, 60)
{
	EXPECT_EQ(psz, second_copy(_metadata, self, 1, 4, IOSQE_ASYNC));
}

TEST_F_TIMEOUT(iowq, not_held_by_bound_limit_punted, 60)
{
	EXPECT_EQ(psz, second_copy(_metadata, self, 1, 4, 0));
}

/* One unbound worker: the stuck copy holds it, the second copy waits. */
TEST_F_TIMEOUT(iowq, held_by_unbound_limit, 60)
{
	EXPECT_EQ(PVM_RING_NO_CQE,
		  second_copy(_metadata, self, 4, 1, IOSQE_ASYNC));
}

TEST_F_TIMEOUT(iowq, held_by_unbound_limit_punted, 60)
{
	EXPECT_EQ(PVM_RING_NO_CQE, second_copy(_metadata, self, 4, 1, 0));
}

/* The fault on a local page behind a userfaultfd, seen by its handler */
struct local_fault {
	int uffd;
	unsigned long addr;
	pid_t ptid;		/* the thread that faulted, 0 if none did */
};

static void *local_fault_handler(void *arg)
{
	struct local_fault *f = arg;
	uint8_t *page = pvm_map_anon(psz);
	struct uffd_msg msg;
	int ret;

	do {
		ret = pvm_uffd_next_fault(f->uffd, WAIT_MS, &msg);
	} while (ret == -EAGAIN);
	if (!ret)
		f->ptid = msg.arg.pagefault.feat.ptid;
	if (page) {
		memset(page, SRC_BYTE, psz);
		pvm_uffd_copy(f->uffd, f->addr, page, psz);
		munmap(page, psz);
	}
	return NULL;
}

/*
 * A copy inline first whose local page is missing behind a userfaultfd:
 * the thread that faults it in must not be the submitter.
 */
static void local_fault(struct __test_metadata *_metadata,
			FIXTURE_DATA(iowq) *self, bool write)
{
	struct local_fault f = { .ptid = 0 };
	struct iovec l, r = { FIXED_ADDR, psz };
	uint8_t *p = pvm_map_anon(psz);
	uint8_t *back = pvm_map_anon(psz);
	pthread_t th;

	ASSERT_NE(NULL, p);
	ASSERT_NE(NULL, back);
	start_target(_metadata, self, setup_resident);
	f.addr = (unsigned long)p;
	f.uffd = pvm_uffd_register(p, psz, UFFD_FEATURE_THREAD_ID, O_CLOEXEC);
	if (f.uffd == -EPERM || pvm_syscall_missing(-f.uffd))
		SKIP(return, "no userfaultfd: %s", strerror(-f.uffd));
	ASSERT_LE(0, f.uffd);
	ASSERT_EQ(0, pthread_create(&th, NULL, local_fault_handler, &f));
	l = (struct iovec){ p, psz };
	prep_rw(&self->ring, write, self->pidfd, &l, &r, 0, 2);
	EXPECT_EQ(1, io_uring_submit(&self->ring));
	EXPECT_EQ(psz, next_cqe(&self->ring, 2, WAIT_MS));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_NE(0, f.ptid);
	EXPECT_NE(syscall(__NR_gettid), f.ptid);
	ASSERT_EQ(psz, pvm_rw1(false, self->target.pid, back,
			       (unsigned long)FIXED_ADDR, psz));
	EXPECT_EQ(-1, pvm_check_byte(write ? back : p, psz,
				     write ? SRC_BYTE : OLD_BYTE));
	close(f.uffd);
	munmap(p, psz);
	munmap(back, psz);
}

TEST_F_TIMEOUT(iowq, inline_no_local_fault_read, 60)
{
	local_fault(_metadata, self, false);
}

TEST_F_TIMEOUT(iowq, inline_no_local_fault_write, 60)
{
	local_fault(_metadata, self, true);
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], EXEC_ARG))
		return exec_image(atoi(argv[2]), atoi(argv[3]));
	return test_harness_run(argc, argv);
}
