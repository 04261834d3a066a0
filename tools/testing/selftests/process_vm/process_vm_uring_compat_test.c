// SPDX-License-Identifier: GPL-2.0
/*
 * IORING_OP_PROCESS_VM_READV and IORING_OP_PROCESS_VM_WRITEV without
 * liburing, so that it also builds as a 32-bit program
 * (process_vm_uring_compat_test_32): a ring set up by a 32-bit process
 * reads both iovec arrays as struct compat_iovec.
 *
 * Every case runs through the opcode and through process_vm_readv(2) or
 * process_vm_writev(2) with PROCESS_VM_PIDFD, in both directions (fixture
 * variants): the same result and the same bytes, checked byte by byte
 * against a userspace model.  The iovec arrays end at a page boundary
 * with an inaccessible page after them, so that reading entries of the
 * wrong size, or one entry too many, shows as -EFAULT.
 *
 * Kernels without the opcodes skip every case.
 */
#define _GNU_SOURCE
#include "process_vm_util.h"

#include <linux/io_uring.h>

#ifdef __has_include
#if __has_include("linux/process_vm.h")
#include <linux/process_vm.h>
#endif
#endif

#include "../kselftest_harness.h"

#ifndef PROCESS_VM_PIDFD
#define PROCESS_VM_PIDFD	1
#endif

/* Not assigned upstream: private names, as in tools/process_vm/pvm_uring.h */
#define OP_READV	65
#define OP_WRITEV	66

#define SEED_R		0x1111	/* the target's region */
#define SEED_L		0x2222	/* local source of a write */
#define SEED_P		0x3333	/* this process's copy of the region */
#define SENTINEL	0xa5

/* The target unmaps the last page of the region: HOLE_PG */
#define PAGES		8
#define DATA_PAGES	7
#define HOLE_PG		7

/* Negative as (compat_)ssize_t in a 32-bit program, valid in a 64-bit one */
#define BIG_LEN		((size_t)0x80000000UL)

static uint8_t *region;
static size_t psz;

#define PG(n)		(region + (n) * psz)
#define SZ		(PAGES * psz)
#define DATA_SZ		(DATA_PAGES * psz)

static void prep_rw(struct io_uring_sqe *sqe, int op, int pidfd,
		    const struct iovec *lvec, unsigned int nl,
		    const struct iovec *rvec, unsigned int nr)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = op;
	sqe->fd = pidfd;
	sqe->addr = (uintptr_t)lvec;
	sqe->len = nl;
	sqe->off = (uintptr_t)rvec;
	sqe->file_index = nr;
	sqe->rw_flags = PROCESS_VM_PIDFD;
}

static long uring_rw(struct pvm_ring *r, bool write, int pidfd,
		     const struct iovec *lvec, unsigned int nl,
		     const struct iovec *rvec, unsigned int nr)
{
	struct io_uring_sqe sqe;

	prep_rw(&sqe, write ? OP_WRITEV : OP_READV, pidfd, lvec, nl, rvec, nr);
	return pvm_ring_run(r, &sqe);
}

/*
 * IORING_REGISTER_PROBE into @probe (256 ops): NULL if it lists both
 * opcodes as supported, else why not.
 */
static const char *probe_ops(struct pvm_ring *r, struct io_uring_probe *probe)
{
	memset(probe, 0, sizeof(*probe) + 256 * sizeof(probe->ops[0]));
	if (syscall(__NR_io_uring_register, r->fd, IORING_REGISTER_PROBE,
		    probe, 256))
		return "IORING_REGISTER_PROBE failed";
	if (probe->ops_len <= OP_WRITEV ||
	    !(probe->ops[OP_READV].flags & IO_URING_OP_SUPPORTED) ||
	    !(probe->ops[OP_WRITEV].flags & IO_URING_OP_SUPPORTED))
		return "the probe reports no io_uring PROCESS_VM_READV/WRITEV";
	return NULL;
}

static struct io_uring_probe *probe_alloc(void)
{
	return calloc(1, sizeof(struct io_uring_probe) +
			 256 * sizeof(struct io_uring_probe_op));
}

/* ---- the fixture ------------------------------------------------------ */

static long setup_region(struct pvm_target *t, unsigned long seed,
			 unsigned long b, unsigned long c)
{
	pvm_fill(region, SZ, seed);
	return munmap(PG(HOLE_PG), psz) ? -errno : 0;
}

FIXTURE(compat)
{
	struct pvm_ring ring;
	struct pvm_target t;
	int pidfd;
	bool write;
	uint8_t *local;
	uint8_t *hole;		/* unmapped here */
	uint8_t *guard[2];	/* a page, then an inaccessible one */
	uint8_t *snap[2];	/* after the syscall, after the request */
	uint8_t *model;
};

FIXTURE_VARIANT(compat)
{
	bool write;
};

FIXTURE_VARIANT_ADD(compat, read)
{
	.write = false,
};

FIXTURE_VARIANT_ADD(compat, write)
{
	.write = true,
};

FIXTURE_SETUP(compat)
{
	struct io_uring_probe *probe = probe_alloc();
	const char *why;
	int i, ret;

	self->ring.fd = -1;
	self->t.pid = -1;
	self->pidfd = -1;
	self->write = variant->write;
	psz = PVM_PAGE;
	ASSERT_TRUE(probe != NULL);

	ret = pvm_ring_init(&self->ring);
	if (ret)
		SKIP(return, "io_uring_setup: %s", strerror(-ret));
	why = probe_ops(&self->ring, probe);
	free(probe);
	if (why)
		SKIP(return, "%s (ops %d/%d)", why, OP_READV, OP_WRITEV);

	region = pvm_map_anon(SZ);
	ASSERT_TRUE(region != NULL);
	/* Differs from the target's: reading the wrong process would show */
	pvm_fill(region, SZ, SEED_P);
	self->local = pvm_map_anon(SZ);
	self->model = malloc(SZ);
	self->hole = pvm_hole(psz);
	ASSERT_TRUE(self->local != NULL);
	ASSERT_TRUE(self->model != NULL);
	ASSERT_TRUE(self->hole != NULL);
	for (i = 0; i < 2; i++) {
		self->guard[i] = pvm_map_anon(2 * psz);
		ASSERT_TRUE(self->guard[i] != NULL);
		ASSERT_EQ(0, mprotect(self->guard[i] + psz, psz, PROT_NONE));
		self->snap[i] = malloc(SZ);
		ASSERT_TRUE(self->snap[i] != NULL);
	}
	ASSERT_EQ(0, pvm_target_start(&self->t, setup_region, SEED_R, 0, 0));
	self->pidfd = syscall(__NR_pidfd_open, self->t.pid, 0);
	ASSERT_LE(0, self->pidfd);
}

FIXTURE_TEARDOWN(compat)
{
	pvm_target_stop(&self->t);
	if (self->pidfd >= 0)
		close(self->pidfd);
	pvm_ring_exit(&self->ring);
}

/* @n entries of @iov copied to end where guard page @side begins */
static const struct iovec *placed(FIXTURE_DATA(compat) *self, int side,
				  const struct iovec *iov, int n)
{
	struct iovec *p = (struct iovec *)(self->guard[side] + psz) - n;

	memcpy(p, iov, n * sizeof(*iov));
	return p;
}

/*
 * The local buffer (read) or the target's data pages (write) after a call
 * that moved @count bytes between @lv and @rv, per the userspace model.
 */
static void make_model(FIXTURE_DATA(compat) *self, const struct iovec *lv,
		       int nl, const struct iovec *rv, int nr, size_t count)
{
	struct iovec ml[PVM_SHAPE_MAX], mr[PVM_SHAPE_MAX];
	uint8_t *mirror = malloc(SZ);

	if (!mirror)
		return;
	pvm_fill(mirror, SZ, SEED_R);
	if (count)
		pvm_iov_rebase(mr, rv, nr, region, mirror);
	if (self->write) {
		if (count)
			pvm_iov_model(mr, nr, lv, nl, count);
		memcpy(self->model, mirror, DATA_SZ);
	} else {
		memset(self->model, SENTINEL, SZ);
		if (count) {
			pvm_iov_rebase(ml, lv, nl, self->local, self->model);
			pvm_iov_model(ml, nl, mr, nr, count);
		}
	}
	free(mirror);
}

/*
 * One call through process_vm_{read,write}v(PROCESS_VM_PIDFD), then one
 * request, both with the iovec arrays at @lvec and @rvec: each must give
 * @expect and move the bytes the model moves between @lv and @rv (what
 * @lvec and @rvec hold; nothing is moved when @expect is not positive).
 */
static void run_case(struct __test_metadata *_metadata,
		     FIXTURE_DATA(compat) *self, const char *name,
		     const struct iovec *lvec, int nl,
		     const struct iovec *rvec, int nr,
		     const struct iovec *lv, const struct iovec *rv,
		     long expect)
{
	unsigned long base = (unsigned long)region;
	size_t len = self->write ? DATA_SZ : SZ;
	long res[2];
	int i;

	for (i = 0; i < 2; i++) {
		if (self->write)
			pvm_fill(self->local, SZ, SEED_L);
		else
			memset(self->local, SENTINEL, SZ);
		if (i)
			res[i] = uring_rw(&self->ring, self->write,
					  self->pidfd, lvec, nl, rvec, nr);
		else
			res[i] = pvm_res(pvm_rwf(self->write, self->pidfd,
						 lvec, nl, rvec, nr,
						 PROCESS_VM_PIDFD));
		if (!self->write) {
			memcpy(self->snap[i], self->local, SZ);
			continue;
		}
		ASSERT_EQ(0, pvm_target_dump(&self->t, base, self->snap[i],
					     len));
		ASSERT_EQ(0, pvm_target_call(&self->t, pvm_cmd_fill, base,
					     len, SEED_R));
	}
	make_model(self, lv, nl, rv, nr, expect > 0 ? expect : 0);
	EXPECT_EQ(expect, res[0]) {
		TH_LOG("%s: syscall %ld, expected %ld", name, res[0], expect);
	}
	EXPECT_EQ(res[0], res[1]) {
		TH_LOG("%s: syscall %ld, io_uring %ld", name, res[0], res[1]);
	}
	EXPECT_EQ(-1, pvm_first_diff(self->model, self->snap[0], len)) {
		TH_LOG("%s: the syscall's data differs from the model", name);
	}
	EXPECT_EQ(-1, pvm_first_diff(self->model, self->snap[1], len)) {
		TH_LOG("%s: io_uring's data differs from the model", name);
	}
}

/* run_case() with both arrays placed before a guard page */
static void run_placed(struct __test_metadata *_metadata,
		       FIXTURE_DATA(compat) *self, const char *name,
		       const struct iovec *lv, int nl,
		       const struct iovec *rv, int nr, long expect)
{
	run_case(_metadata, self, name, placed(self, 0, lv, nl), nl,
		 placed(self, 1, rv, nr), nr, lv, rv, expect);
}

/* ---- shapes ----------------------------------------------------------- */

static const struct pvm_shape shapes[] = {
	{ "1x1", 5, 0, 4090, 0,
	  { 3 * 4096 + 77, PVM_SHAPE_END },
	  { 3 * 4096 + 77, PVM_SHAPE_END } },
	{ "3x5", 3, 4099, 4094, 1,
	  { 5000, 7, 9000, PVM_SHAPE_END },
	  { 4097, 2, 6000, 1, 2907, PVM_SHAPE_END } },
	{ "9x9", 1, 7, 3, 13,
	  { 1, 4095, 4097, 0, 100, 3000, 7, 5000, 1234, PVM_SHAPE_END },
	  { 2000, 1, 0, 4096, 3, 5555, 77, 3000, 1812, PVM_SHAPE_END } },
	{ "1x9", 1, 0, 4000, 13,
	  { 20000, PVM_SHAPE_END },
	  { 1, 4095, 4097, 0, 1803, 7777, 3, 2, 200, PVM_SHAPE_END } },
	{ "9x1", 4093, 5, 4091, 0,
	  { 1, 4095, 4097, 0, 8191, 11, 5, 6, 7, PVM_SHAPE_END },
	  { 16400, PVM_SHAPE_END } },
};

static void run_shape(struct __test_metadata *_metadata,
		      FIXTURE_DATA(compat) *self, const char *name)
{
	const struct pvm_shape *s = NULL;
	struct pvm_shape_iov io;
	const struct iovec *last;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(shapes); i++)
		if (!strcmp(shapes[i].name, name))
			s = &shapes[i];
	ASSERT_TRUE(s != NULL);
	pvm_shape_layout(&io, s, self->local, region);
	last = &io.r[io.nr - 1];
	ASSERT_GT(DATA_SZ, (size_t)((uint8_t *)last->iov_base +
				    last->iov_len - region));
	run_placed(_metadata, self, name, io.l, io.nl, io.r, io.nr, io.count);
}

/* One local and one remote iovec: the request's path without async data */
TEST_F(compat, fast_1x1)
{
	run_shape(_metadata, self, "1x1");
}

TEST_F(compat, uneven_3x5)
{
	run_shape(_metadata, self, "3x5");
}

/* More than UIO_FASTIOV (8) entries on each side: heap arrays */
TEST_F(compat, heap_9x9)
{
	run_shape(_metadata, self, "9x9");
}

TEST_F(compat, mixed_1x9_9x1)
{
	run_shape(_metadata, self, "1x9");
	run_shape(_metadata, self, "9x1");
}

/* ---- errors ----------------------------------------------------------- */

/* A remote range running into the target's hole: a short count */
TEST_F(compat, remote_hole)
{
	uint8_t *l = self->local;
	struct iovec lv1 = { l + 1, 300 };
	struct iovec rv1 = { PG(HOLE_PG) - 100, 300 };
	struct iovec lv3[3] = { { l + 1, 100 }, { l + 500, 200 },
				{ l + 1000, 300 } };
	struct iovec rv3[3] = { { region + 10, 150 },
				{ PG(HOLE_PG) - 50, 200 },
				{ region + 3000, 250 } };
	struct iovec in_hole = { PG(HOLE_PG), 10 };

	run_placed(_metadata, self, "1x1 into the hole", &lv1, 1, &rv1, 1,
		   100);
	run_placed(_metadata, self, "3x3 into the hole", lv3, 3, rv3, 3, 200);
	run_placed(_metadata, self, "1x1 in the hole", &lv1, 1, &in_hole, 1,
		   -EFAULT);
}

static void bad_array(struct __test_metadata *_metadata,
		      FIXTURE_DATA(compat) *self, bool remote)
{
	uint8_t *l = self->local;
	struct iovec lv[3] = { { l + 1, 100 }, { l + 500, 200 },
			       { l + 1000, 300 } };
	struct iovec rv[3] = { { region + 10, 150 }, { region + 5000, 200 },
			       { region + 9000, 250 } };
	const struct iovec *bad = (void *)self->hole;
	int n;

	/* Unmapped, then one entry short of the guard page (none for 1) */
	for (n = 1; n <= 3; n += 2) {
		if (remote) {
			run_case(_metadata, self, "remote array unmapped",
				 placed(self, 0, lv, n), n, bad, n, lv, rv,
				 -EFAULT);
			run_case(_metadata, self, "remote array short",
				 placed(self, 0, lv, n), n,
				 placed(self, 1, rv, n - 1), n, lv, rv,
				 -EFAULT);
		} else {
			run_case(_metadata, self, "local array unmapped",
				 bad, n, placed(self, 1, rv, n), n, lv, rv,
				 -EFAULT);
			run_case(_metadata, self, "local array short",
				 placed(self, 0, lv, n - 1), n,
				 placed(self, 1, rv, n), n, lv, rv, -EFAULT);
		}
	}
}

TEST_F(compat, bad_local_array)
{
	bad_array(_metadata, self, false);
}

TEST_F(compat, bad_remote_array)
{
	bad_array(_metadata, self, true);
}

/*
 * An iov_len of 0x80000000: negative as the compat_ssize_t that
 * copy_compat_iovec_from_user() checks (and as a 32-bit kernel's ssize_t),
 * so EINVAL in a 32-bit program, local or remote, on either path; a
 * 64-bit program copies what the other side has room for.
 */
TEST_F(compat, len_0x80000000)
{
	uint8_t *l = self->local;
	struct iovec lbig = { l + 1, BIG_LEN }, rsmall = { region + 5, 100 };
	struct iovec lsmall = { l + 1, 1000 }, rbig = { region + 5, BIG_LEN };
	struct iovec l2[2] = { { l + 1, 100 }, { l + 200, 50 } };
	struct iovec r2[2] = { { region + 5, 100 }, { region + 300, 50 } };
	struct iovec lbig2[2] = { { l + 1, 100 }, { l + 200, BIG_LEN } };
	struct iovec rbig2[2] = { { region + 5, 100 },
				  { region + 300, BIG_LEN } };
	bool b64 = PVM_IS_64BIT;

	run_placed(_metadata, self, "1x1 local", &lbig, 1, &rsmall, 1,
		   b64 ? 100 : -EINVAL);
	run_placed(_metadata, self, "1x1 remote", &lsmall, 1, &rbig, 1,
		   b64 ? 1000 : -EINVAL);
	run_placed(_metadata, self, "2x2 local", lbig2, 2, r2, 2,
		   b64 ? 150 : -EINVAL);
	run_placed(_metadata, self, "2x2 remote", l2, 2, rbig2, 2,
		   b64 ? 150 : -EINVAL);
}

/* ---- the probe -------------------------------------------------------- */

/*
 * The probe and the opcodes agree: listed, they accept a valid request
 * and check their SQE; not listed, they fail with -EINVAL (and the test
 * skips).
 */
TEST(probe)
{
	struct io_uring_probe *probe = probe_alloc();
	struct iovec l = { NULL, 0 }, r = { NULL, 0 };
	struct io_uring_sqe sqe;
	struct pvm_ring ring;
	const char *why;
	int pidfd, op, ret;

	ASSERT_TRUE(probe != NULL);
	ret = pvm_ring_init(&ring);
	if (ret)
		SKIP(return, "io_uring_setup: %s", strerror(-ret));
	pidfd = syscall(__NR_pidfd_open, getpid(), 0);
	ASSERT_LE(0, pidfd);
	why = probe_ops(&ring, probe);
	for (op = OP_READV; op <= OP_WRITEV; op++) {
		prep_rw(&sqe, op, pidfd, &l, 1, &r, 1);
		EXPECT_EQ(why ? -EINVAL : 0, pvm_ring_run(&ring, &sqe)) {
			TH_LOG("op %d: %s", op, why ? why : "supported");
		}
		if (why)
			continue;
		sqe.rw_flags = 0;
		EXPECT_EQ(-EINVAL, pvm_ring_run(&ring, &sqe));
		prep_rw(&sqe, op, pidfd, &l, 1, &r, 1);
		sqe.buf_index = 1;
		EXPECT_EQ(-EINVAL, pvm_ring_run(&ring, &sqe));
	}
	/*
	 * The opcodes of later kernels below ours, from 58 (the first after
	 * 6.12's IORING_OP_LISTEN): unknown here, as on any kernel without
	 * them.
	 */
	for (op = 58; !why && op < OP_READV; op++) {
		EXPECT_FALSE(probe->ops[op].flags & IO_URING_OP_SUPPORTED);
		prep_rw(&sqe, op, pidfd, &l, 1, &r, 1);
		EXPECT_EQ(-EINVAL, pvm_ring_run(&ring, &sqe)) {
			TH_LOG("op %d", op);
		}
	}
	if (!why) {
		EXPECT_LE(OP_WRITEV, probe->last_op);
		if (probe->last_op < 255) {
			prep_rw(&sqe, probe->last_op + 1, pidfd, &l, 1, &r, 1);
			EXPECT_EQ(-EINVAL, pvm_ring_run(&ring, &sqe));
		}
	}
	close(pidfd);
	pvm_ring_exit(&ring);
	free(probe);
	if (why)
		SKIP(return, "%s (ops %d/%d)", why, OP_READV, OP_WRITEV);
}

TEST_HARNESS_MAIN
