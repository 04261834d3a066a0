// SPDX-License-Identifier: GPL-2.0
/*
 * Conformance tests for process_vm_readv(2) and process_vm_writev(2):
 * argument checking and its order, iovec shapes, data integrity, kinds of
 * remote mappings, kinds of targets and the MAX_RW_COUNT clamp.  Every
 * test runs in both directions (fixture variants "read" and "write").
 *
 * Built twice: natively and as a 32-bit program (process_vm_test_32) to
 * exercise the compat iovec import.
 */
#define _GNU_SOURCE
#include "process_vm_util.h"

#include <pthread.h>

#include "../kselftest_harness.h"

#define SEED_R		0x1111	/* remote region content */
#define SEED_L		0x2222	/* local source buffer */
#define SEED_P		0x3333	/* the parent's copy of the region */
#define SENTINEL	0xa5
#define REGION_SZ	(1UL << 20)
#define LOCAL_SZ	(1UL << 20)
/*
 * The MAX_RW_COUNT tests move IOV_MAX entries of this size: more than
 * MAX_RW_COUNT in all (1024 * 2 MiB = 2 GiB > INT_MAX & PAGE_MASK).
 */
#define SZ_2M		(2UL << 20)

#if __SIZEOF_LONG__ == 8
#define HAVE_64		1
/* Fails access_ok() */
#define KERNEL_PTR	((void *)0xffff800000000000UL)
/* Positive as ssize_t, far beyond TASK_SIZE */
#define HUGE_LEN	(1UL << 62)
#else
#define HAVE_64		0
#define KERNEL_PTR	NULL
#define HUGE_LEN	0UL
#endif
/* Sign bit set: negative as (compat_)ssize_t */
#define NEG_LEN		((size_t)SSIZE_MAX + 1)

FIXTURE(pvm) {
	struct pvm_target t;	/* self->region filled with SEED_R */
	struct pvm_target t2;	/* extra target of some tests */
	uint8_t *region;	/* at the same address in the target */
	uint8_t *local;
	size_t page;
	bool write;
	long saved_nr_hugepages;
	int fd;
	/*
	 * The REGION_SZ bytes that run_call() copies to or from: self->region
	 * in self->t, unless a test of kinds of memory points them elsewhere.
	 */
	struct pvm_target *rt;
	uint8_t *rbase;
	/* what a kind of memory mapped in this process, if anything */
	uint8_t *kmap;
	size_t kmap_len;
};

FIXTURE_VARIANT(pvm) {
	bool write;
};

FIXTURE_VARIANT_ADD(pvm, read) {
	.write = false,
};

FIXTURE_VARIANT_ADD(pvm, write) {
	.write = true,
};

FIXTURE_SETUP(pvm)
{
	self->page = PVM_PAGE;
	self->write = variant->write;
	self->t2.pid = -1;
	self->saved_nr_hugepages = -1;
	self->fd = -1;
	self->kmap = NULL;
	self->region = pvm_map_anon(REGION_SZ);
	ASSERT_TRUE(self->region != NULL);
	self->rt = &self->t;
	self->rbase = self->region;
	self->local = pvm_map_anon(LOCAL_SZ);
	ASSERT_TRUE(self->local != NULL);
	/* The parent's copy differs: reading the wrong process would show. */
	pvm_fill(self->region, REGION_SZ, SEED_P);
	ASSERT_EQ(0, pvm_target_start(&self->t, pvm_cmd_fill,
				      (unsigned long)self->region, REGION_SZ,
				      SEED_R));
}

FIXTURE_TEARDOWN(pvm)
{
	pvm_target_kill(&self->t2);
	pvm_target_stop(&self->t);
	if (self->fd >= 0)
		close(self->fd);
	if (self->kmap)
		munmap(self->kmap, self->kmap_len);
	if (self->saved_nr_hugepages >= 0)
		pvm_write_long("/proc/sys/vm/nr_hugepages",
			       self->saved_nr_hugepages);
	munmap(self->region, REGION_SZ);
	munmap(self->local, LOCAL_SZ);
}

#define RADDR(off)	((unsigned long)self->region + (off))
#define RPTR(off)	((void *)RADDR(off))

/*
 * Move @len bytes between @local and @raddr in @t in direction @write and
 * check the count and the data: a read expects pattern @rseed from stream
 * offset @roff at @raddr; a write stores SEED_L there, checked by @t.
 */
static void xfer_ok(struct __test_metadata *_metadata, bool write,
		    pid_t pid, struct pvm_target *t, uint8_t *local,
		    unsigned long raddr, size_t len, uint32_t rseed,
		    size_t roff)
{
	if (write) {
		pvm_fill(local, len, SEED_L);
		ASSERT_EQ((long)len, pvm_res(pvm_rw1(true, pid, local, raddr,
						     len)));
		ASSERT_EQ(-1, pvm_target_call(t, pvm_cmd_check, raddr, len,
					      SEED_L));
	} else {
		memset(local, SENTINEL, len + 1);
		ASSERT_EQ((long)len, pvm_res(pvm_rw1(false, pid, local, raddr,
						     len)));
		ASSERT_EQ(-1, pvm_check_at(local, len, rseed, roff));
		ASSERT_EQ(SENTINEL, local[len]);
	}
}

/* @len bytes at @raddr in @t still hold pattern @seed from offset @off */
static void remote_is(struct __test_metadata *_metadata, struct pvm_target *t,
		      unsigned long raddr, size_t len, uint32_t seed,
		      size_t off)
{
	uint8_t *buf = malloc(len);

	ASSERT_TRUE(buf != NULL);
	ASSERT_EQ(0, pvm_target_dump(t, raddr, buf, len));
	ASSERT_EQ(-1, pvm_check_at(buf, len, seed, off));
	free(buf);
}

/*
 * Prepare a call on the fixture: local all SENTINEL for a read, all SEED_L
 * for a write; the target's region holds SEED_R.
 */
static void prep(struct __test_metadata *_metadata, FIXTURE_DATA(pvm) *self)
{
	if (self->write)
		pvm_fill(self->local, LOCAL_SZ, SEED_L);
	else
		memset(self->local, SENTINEL, LOCAL_SZ);
}

/*
 * Check the data after a call on the fixture that moved @count bytes
 * between @lv (in self->local) and @rv (in self->rbase), against the
 * userspace model; restores the remote bytes for the next call.
 */
static void verify(struct __test_metadata *_metadata, FIXTURE_DATA(pvm) *self,
		   const struct iovec *lv, int nl, const struct iovec *rv,
		   int nr, size_t count)
{
	uint8_t *mirror = malloc(REGION_SZ), *buf = NULL;
	struct iovec *ml = calloc(nl + 1, sizeof(*ml));
	struct iovec *mr = calloc(nr + 1, sizeof(*mr));

	ASSERT_TRUE(mirror != NULL);
	ASSERT_TRUE(ml != NULL);
	ASSERT_TRUE(mr != NULL);
	pvm_fill(mirror, REGION_SZ, SEED_R);
	pvm_iov_rebase(mr, rv, nr, self->rbase, mirror);
	if (self->write) {
		buf = malloc(REGION_SZ);
		ASSERT_TRUE(buf != NULL);
		ASSERT_EQ(count, pvm_iov_model(mr, nr, lv, nl, count));
		ASSERT_EQ(0, pvm_target_dump(self->rt, (unsigned long)self->rbase,
					     buf, REGION_SZ));
		ASSERT_EQ(0, memcmp(buf, mirror, REGION_SZ));
		ASSERT_EQ(0, pvm_target_call(self->rt, pvm_cmd_fill,
					     (unsigned long)self->rbase,
					     REGION_SZ, SEED_R));
	} else {
		buf = malloc(LOCAL_SZ);
		ASSERT_TRUE(buf != NULL);
		memset(buf, SENTINEL, LOCAL_SZ);
		pvm_iov_rebase(ml, lv, nl, self->local, buf);
		ASSERT_EQ(count, pvm_iov_model(ml, nl, mr, nr, count));
		ASSERT_EQ(0, memcmp(buf, self->local, LOCAL_SZ));
	}
	free(buf);
	free(mirror);
	free(ml);
	free(mr);
}

/* One call on the fixture: expect @expect (count or -errno) and the data */
static void run_call(struct __test_metadata *_metadata,
		     FIXTURE_DATA(pvm) *self, const struct iovec *lv, int nl,
		     const struct iovec *rv, int nr, long expect)
{
	prep(_metadata, self);
	ASSERT_EQ(expect, pvm_res(pvm_rw(self->write, self->rt->pid, lv, nl,
					 rv, nr)));
	verify(_metadata, self, lv, nl, rv, nr, expect < 0 ? 0 : expect);
}

/* An address in this process whose page is mapped, followed by a hole */
static uint8_t *page_before_hole(size_t page)
{
	uint8_t *p = pvm_map_anon(2 * page);

	if (p)
		munmap(p + page, page);
	return p;
}

/* ---- argument checking and its order ---------------------------------- */

TEST_F(pvm, flags_einval)
{
	struct iovec l = { self->local, 16 }, r = { self->region, 16 };
	bool w = self->write;

	/* Bits 0 and 1 are PROCESS_VM_PIDFD and _NOWAIT where supported. */
	ASSERT_EQ(-EINVAL, pvm_res(pvm_rwf(w, self->t.pid, &l, 1, &r, 1,
					   1UL << 2)));
	ASSERT_EQ(-EINVAL, pvm_res(pvm_rwf(w, self->t.pid, &l, 1, &r, 1,
					   1UL << 31)));
	/* flags come first: bad everything else */
	ASSERT_EQ(-EINVAL, pvm_res(pvm_rwf(w, -1, NULL, IOV_MAX + 1, NULL,
					   IOV_MAX + 1, ~0UL)));
	/* even before the zero-length shortcut */
	ASSERT_EQ(-EINVAL, pvm_res(pvm_rwf(w, -1, NULL, 0, NULL, 0, 1UL << 3)));
	remote_is(_metadata, &self->t, RADDR(0), 16, SEED_R, 0);
}

TEST_F(pvm, liovcnt_einval)
{
	struct iovec *lv = calloc(IOV_MAX + 1, sizeof(*lv));
	struct iovec r = { self->region, 16 };
	bool w = self->write;
	int i;

	ASSERT_TRUE(lv != NULL);
	/* the count is checked before the array is read or the pid used */
	ASSERT_EQ(-EINVAL, pvm_res(pvm_rw(w, -1, NULL, IOV_MAX + 1, &r, 1)));
	ASSERT_EQ(-EINVAL, pvm_res(pvm_rw(w, -1, NULL, ~0UL, &r, 1)));
	for (i = 0; i <= IOV_MAX; i++)
		lv[i] = (struct iovec){ self->local + i, 1 };
	ASSERT_EQ(-EINVAL, pvm_res(pvm_rw(w, self->t.pid, lv, IOV_MAX + 1,
					  &r, 1)));
	/* IOV_MAX itself is fine */
	ASSERT_EQ(16, pvm_res(pvm_rw(w, self->t.pid, lv, IOV_MAX, &r, 1)));
	free(lv);
}

TEST_F(pvm, lvec_efault)
{
	struct iovec r = { self->region, 16 };
	uint8_t *p = page_before_hole(self->page);
	struct iovec *lv;
	bool w = self->write;

	ASSERT_TRUE(p != NULL);
	/* single (ubuf) and multi-segment import; before the pid lookup */
	ASSERT_EQ(-EFAULT, pvm_res(pvm_rw(w, -1, NULL, 1, &r, 1)));
	ASSERT_EQ(-EFAULT, pvm_res(pvm_rw(w, -1, NULL, 2, &r, 1)));
	ASSERT_EQ(-EFAULT, pvm_res(pvm_rw(w, -1, (void *)(p + self->page),
					  1, &r, 1)));
	/* the array's second element is in the hole */
	lv = (struct iovec *)(p + self->page) - 1;
	*lv = (struct iovec){ self->local, 8 };
	ASSERT_EQ(-EFAULT, pvm_res(pvm_rw(w, self->t.pid, lv, 2, &r, 1)));
	ASSERT_EQ(8, pvm_res(pvm_rw(w, self->t.pid, lv, 1, &r, 1)));
	munmap(p, self->page);
}

TEST_F(pvm, llen_einval)
{
	struct iovec l1 = { self->local, NEG_LEN };
	struct iovec l2[2] = { { self->local, 1 }, { self->local, NEG_LEN } };
	struct iovec r = { self->region, 16 };
	bool w = self->write;

	ASSERT_EQ(-EINVAL, pvm_res(pvm_rw(w, -1, &l1, 1, &r, 1)));
	ASSERT_EQ(-EINVAL, pvm_res(pvm_rw(w, self->t.pid, &l1, 1, &r, 1)));
	ASSERT_EQ(-EINVAL, pvm_res(pvm_rw(w, -1, l2, 2, &r, 1)));
	ASSERT_EQ(-EINVAL, pvm_res(pvm_rw(w, self->t.pid, l2, 2, NULL, 1)));
	/* all lengths are checked before any access_ok() */
	if (HAVE_64) {
		l2[0].iov_base = KERNEL_PTR;
		ASSERT_EQ(-EINVAL, pvm_res(pvm_rw(w, -1, l2, 2, &r, 1)));
	}
	remote_is(_metadata, &self->t, RADDR(0), 16, SEED_R, 0);
}

TEST_F(pvm, lbuf_access_ok)
{
	struct iovec l1 = { KERNEL_PTR, 1 };
	struct iovec l2[2] = { { self->local, 1 }, { KERNEL_PTR, 1 } };
	struct iovec r = { self->region, 16 };
	bool w = self->write;

	if (!HAVE_64)
		SKIP(return, "no kernel addresses in a compat address space");
	/* local buffers are checked before the pid lookup */
	ASSERT_EQ(-EFAULT, pvm_res(pvm_rw(w, -1, &l1, 1, &r, 1)));
	ASSERT_EQ(-EFAULT, pvm_res(pvm_rw(w, self->t.pid, &l1, 1, &r, 1)));
	ASSERT_EQ(-EFAULT, pvm_res(pvm_rw(w, -1, l2, 2, &r, 1)));
	/* a user address whose range ends beyond TASK_SIZE */
	l2[1] = (struct iovec){ self->local, HUGE_LEN };
	ASSERT_EQ(-EFAULT, pvm_res(pvm_rw(w, self->t.pid, l2, 2, &r, 1)));
	remote_is(_metadata, &self->t, RADDR(0), 16, SEED_R, 0);
}

TEST_F(pvm, lbuf_single_clamped_first)
{
	struct iovec l = { self->local, HUGE_LEN };
	struct iovec r = { self->region, 4000 };

	if (!HAVE_64)
		SKIP(return, "needs a 64-bit address space");
	/*
	 * A single local iovec is clamped to MAX_RW_COUNT before access_ok():
	 * only the remote length is copied.
	 */
	run_call(_metadata, self, &l, 1, &r, 1, 4000);
}

TEST_F(pvm, local_zero_total)
{
	struct iovec l[3] = { { self->local, 0 }, { NULL, 0 },
			      { self->local + 5, 0 } };
	struct iovec r = { self->region, 16 };
	bool w = self->write;

	/* returns 0 before looking at the remote side or the pid */
	ASSERT_EQ(0, pvm_res(pvm_rw(w, -1, NULL, 0, NULL, IOV_MAX + 1)));
	ASSERT_EQ(0, pvm_res(pvm_rw(w, -1, l, 3, (void *)8, ~0UL)));
	ASSERT_EQ(0, pvm_res(pvm_rw(w, -1, l, 1, NULL, 1)));
	run_call(_metadata, self, l, 3, &r, 1, 0);
}

TEST_F(pvm, riovcnt_einval)
{
	struct iovec l = { self->local, 16 };
	struct iovec *rv = calloc(IOV_MAX + 1, sizeof(*rv));
	bool w = self->write;
	int i;

	ASSERT_TRUE(rv != NULL);
	ASSERT_EQ(-EINVAL, pvm_res(pvm_rw(w, -1, &l, 1, NULL, IOV_MAX + 1)));
	ASSERT_EQ(-EINVAL, pvm_res(pvm_rw(w, -1, &l, 1, NULL, ~0UL)));
	for (i = 0; i <= IOV_MAX; i++)
		rv[i] = (struct iovec){ RPTR(i), 1 };
	ASSERT_EQ(-EINVAL, pvm_res(pvm_rw(w, self->t.pid, &l, 1, rv,
					  IOV_MAX + 1)));
	ASSERT_EQ(16, pvm_res(pvm_rw(w, self->t.pid, &l, 1, rv, IOV_MAX)));
	free(rv);
}

TEST_F(pvm, rvec_efault)
{
	struct iovec l = { self->local, 16 };
	uint8_t *p = page_before_hole(self->page);
	struct iovec *rv;
	bool w = self->write;

	ASSERT_TRUE(p != NULL);
	/* the remote array is read before the pid lookup */
	ASSERT_EQ(-EFAULT, pvm_res(pvm_rw(w, -1, &l, 1, NULL, 1)));
	ASSERT_EQ(-EFAULT, pvm_res(pvm_rw(w, self->t.pid, &l, 1, NULL, 1)));
	rv = (struct iovec *)(p + self->page) - 1;
	*rv = (struct iovec){ self->region, 8 };
	ASSERT_EQ(-EFAULT, pvm_res(pvm_rw(w, self->t.pid, &l, 1, rv, 2)));
	ASSERT_EQ(8, pvm_res(pvm_rw(w, self->t.pid, &l, 1, rv, 1)));
	munmap(p, self->page);
}

TEST_F(pvm, rlen_einval)
{
	struct iovec l = { self->local, 16 };
	struct iovec r2[2] = { { self->region, 8 }, { self->region, NEG_LEN } };
	bool w = self->write;

	ASSERT_EQ(-EINVAL, pvm_res(pvm_rw(w, -1, &l, 1, r2 + 1, 1)));
	ASSERT_EQ(-EINVAL, pvm_res(pvm_rw(w, -1, &l, 1, r2, 2)));
	/* nothing is copied */
	prep(_metadata, self);
	ASSERT_EQ(-EINVAL, pvm_res(pvm_rw(w, self->t.pid, &l, 1, r2, 2)));
	verify(_metadata, self, &l, 1, r2, 2, 0);
}

TEST_F(pvm, remote_zero_total)
{
	struct iovec l = { self->local, 16 };
	struct iovec r[3] = { { NULL, 0 }, { (void *)1, 0 }, { KERNEL_PTR, 0 } };
	bool w = self->write;

	/* returns 0 before the pid lookup */
	ASSERT_EQ(0, pvm_res(pvm_rw(w, -1, &l, 1, NULL, 0)));
	ASSERT_EQ(0, pvm_res(pvm_rw(w, -1, &l, 1, r, 3)));
	run_call(_metadata, self, &l, 1, r, 3, 0);
	run_call(_metadata, self, &l, 1, NULL, 0, 0);
}

TEST_F(pvm, esrch)
{
	struct iovec l = { self->local, 16 }, r = { self->region, 16 };
	struct iovec rnull = { NULL, 16 };
	bool w = self->write;

	ASSERT_EQ(-ESRCH, pvm_res(pvm_rw(w, -1, &l, 1, &r, 1)));
	ASSERT_EQ(-ESRCH, pvm_res(pvm_rw(w, 0, &l, 1, &r, 1)));
	ASSERT_EQ(-ESRCH, pvm_res(pvm_rw(w, INT_MAX, &l, 1, &r, 1)));
	ASSERT_EQ(-ESRCH, pvm_res(pvm_rw(w, INT_MIN, &l, 1, &r, 1)));
	/* the pid is looked up before remote addresses are used */
	ASSERT_EQ(-ESRCH, pvm_res(pvm_rw(w, -1, &l, 1, &rnull, 1)));
}

TEST_F(pvm, zombie_and_reaped)
{
	struct iovec l = { self->local, 16 }, r = { self->region, 16 };
	pid_t pid;

	ASSERT_EQ(0, pvm_target_start(&self->t2, NULL, 0, 0, 0));
	pid = self->t2.pid;
	ASSERT_EQ(16, pvm_res(pvm_rw(self->write, pid, &l, 1, &r, 1)));
	ASSERT_EQ(-EPIPE, pvm_target_call(&self->t2, pvm_cmd_exit, 0, 0, 0));
	ASSERT_EQ(0, pvm_wait_zombie(pid));
	/* a zombie has no mm */
	ASSERT_EQ(-ESRCH, pvm_res(pvm_rw(self->write, pid, &l, 1, &r, 1)));
	ASSERT_EQ(0, pvm_target_stop(&self->t2));
	ASSERT_EQ(-ESRCH, pvm_res(pvm_rw(self->write, pid, &l, 1, &r, 1)));
}

TEST_F(pvm, kernel_thread)
{
	struct iovec l = { self->local, 16 }, r = { self->region, 16 };
	char comm[32] = { 0 };
	int fd = open("/proc/2/comm", O_RDONLY);

	if (fd >= 0) {
		if (read(fd, comm, sizeof(comm) - 1) < 0)
			comm[0] = 0;
		close(fd);
	}
	if (strcmp(comm, "kthreadd\n"))
		SKIP(return, "pid 2 is not kthreadd (pid namespace?)");
	/* no mm: ESRCH, whatever the permissions */
	ASSERT_EQ(-ESRCH, pvm_res(pvm_rw(self->write, 2, &l, 1, &r, 1)));
}

static long setup_thread_fn_tid;

static void *thread_fn(void *arg)
{
	__atomic_store_n(&setup_thread_fn_tid, (long)syscall(SYS_gettid),
			 __ATOMIC_RELEASE);
	for (;;)
		pause();
	return NULL;
}

/* A second thread in the target: its tid, or -errno */
static long setup_thread(struct pvm_target *t, unsigned long a,
			 unsigned long b, unsigned long c)
{
	pthread_t th;
	long tid;
	int err;

	err = pthread_create(&th, NULL, thread_fn, NULL);
	if (err)
		return -err;
	while (!(tid = __atomic_load_n(&setup_thread_fn_tid,
				       __ATOMIC_ACQUIRE)))
		usleep(1000);
	return tid;
}

TEST_F(pvm, target_thread)
{
	long tid = pvm_target_start(&self->t2, setup_thread, 0, 0, 0);

	ASSERT_GT(tid, 0);
	ASSERT_NE(self->t2.pid, tid);
	/* a TID names its thread group's mm; t2 has the parent's SEED_P */
	xfer_ok(_metadata, self->write, tid, &self->t2, self->local,
		RADDR(100), 3 * self->page, SEED_P, 100);
}

TEST_F(pvm, target_self)
{
	uint8_t *a = self->region + 17;
	size_t len = 2 * self->page + 5;

	if (self->write) {
		pvm_fill(self->local, len, SEED_L);
		ASSERT_EQ(len, pvm_res(pvm_rw1(true, getpid(), self->local,
					       (unsigned long)a, len)));
		ASSERT_EQ(-1, pvm_check(a, len, SEED_L));
		ASSERT_EQ(-1, pvm_check_at(a + len, 100, SEED_P, 17 + len));
	} else {
		memset(self->local, SENTINEL, LOCAL_SZ);
		ASSERT_EQ(len, pvm_res(pvm_rw1(false, getpid(), self->local,
					       (unsigned long)a, len)));
		ASSERT_EQ(-1, pvm_check_at(self->local, len, SEED_P, 17));
		ASSERT_EQ(SENTINEL, self->local[len]);
	}
}

/* ---- remote and local faults ------------------------------------------ */

TEST_F(pvm, remote_bad_address)
{
	struct iovec l = { self->local, 16 };
	struct iovec r = { NULL, 1 };
	uint8_t *hole = pvm_hole(self->page);
	bool w = self->write;

	/* permitted: a NULL remote address faults (UCX probes this) */
	ASSERT_EQ(-EFAULT, pvm_res(pvm_rw(w, self->t.pid, &l, 1, &r, 1)));
	r.iov_base = hole;
	ASSERT_EQ(-EFAULT, pvm_res(pvm_rw(w, self->t.pid, &l, 1, &r, 1)));
	if (HAVE_64) {
		r.iov_base = KERNEL_PTR;
		ASSERT_EQ(-EFAULT, pvm_res(pvm_rw(w, self->t.pid, &l, 1, &r,
						  1)));
	}
	r.iov_base = (void *)(~0UL & ~(self->page - 1));
	r.iov_len = self->page;
	ASSERT_EQ(-EFAULT, pvm_res(pvm_rw(w, self->t.pid, &l, 1, &r, 1)));
}

TEST_F(pvm, remote_fault_stops_copy)
{
	uint8_t *hole = pvm_hole(self->page);
	struct iovec l = { self->local, 200 };
	struct iovec r[3] = { { RPTR(100), 50 }, { hole, 10 },
			      { RPTR(300), 30 } };

	ASSERT_TRUE(hole != NULL);
	/* stops at the first remote fault although r[2] is valid */
	run_call(_metadata, self, &l, 1, r, 3, 50);
	/* a fault before any byte is an error */
	run_call(_metadata, self, &l, 1, r + 1, 2, -EFAULT);
}

/* Three pages of SEED_R, the middle one unmapped: the address, or -errno */
static long setup_holey(struct pvm_target *t, unsigned long page,
			unsigned long b, unsigned long c)
{
	uint8_t *p = mmap(NULL, 3 * page, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	pvm_fill(p, 3 * page, SEED_R);
	munmap(p + page, page);
	return (long)p;
}

TEST_F(pvm, remote_hole_partial)
{
	size_t pg = self->page;
	unsigned long base = pvm_target_start(&self->t2, setup_holey, pg, 0, 0);
	bool w = self->write;

	ASSERT_FALSE(pvm_is_err(base));
	/* straddling into the hole: the bytes before it */
	if (w)
		pvm_fill(self->local, 3 * pg, SEED_L);
	ASSERT_EQ(10, pvm_res(pvm_rw1(w, self->t2.pid, self->local,
				      base + pg - 10, 20)));
	ASSERT_EQ(pg, pvm_res(pvm_rw1(w, self->t2.pid, self->local, base,
				      3 * pg)));
	ASSERT_EQ(-EFAULT, pvm_res(pvm_rw1(w, self->t2.pid, self->local,
					   base + pg, 2 * pg)));
	if (w) {
		ASSERT_EQ(-1, pvm_target_call(&self->t2, pvm_cmd_check, base,
					      pg, SEED_L));
		remote_is(_metadata, &self->t2, base + 2 * pg, pg, SEED_R,
			  2 * pg);
	} else {
		ASSERT_EQ(-1, pvm_check(self->local, pg, SEED_R));
	}
}

TEST_F(pvm, remote_zero_len_skipped)
{
	struct iovec l = { self->local, 100 };
	struct iovec r[5] = { { NULL, 0 }, { RPTR(10), 10 }, { (void *)1, 0 },
			      { KERNEL_PTR, 0 }, { RPTR(5000), 10 } };

	run_call(_metadata, self, &l, 1, r, 5, 20);
}

TEST_F(pvm, local_fault)
{
	uint8_t *hole = pvm_hole(self->page);
	uint8_t *none = pvm_map(self->page, PROT_NONE,
				MAP_PRIVATE | MAP_ANONYMOUS);
	uint8_t *ro = pvm_map(self->page, PROT_READ,
			      MAP_PRIVATE | MAP_ANONYMOUS);
	struct iovec l[3] = { { self->local, 10 }, { hole, 10 },
			      { self->local + 100, 10 } };
	struct iovec r = { self->region, 30 };
	bool w = self->write;

	ASSERT_TRUE(none != NULL);
	ASSERT_TRUE(ro != NULL);
	/* passes access_ok() but faults: partial, or EFAULT if nothing */
	prep(_metadata, self);
	ASSERT_EQ(10, pvm_res(pvm_rw(w, self->t.pid, l, 3, &r, 1)));
	verify(_metadata, self, l, 1, &r, 1, 10);
	ASSERT_EQ(-EFAULT, pvm_res(pvm_rw(w, self->t.pid, l + 1, 2, &r, 1)));
	l[1].iov_base = none;
	ASSERT_EQ(10, pvm_res(pvm_rw(w, self->t.pid, l, 3, &r, 1)));
	ASSERT_EQ(-EFAULT, pvm_res(pvm_rw(w, self->t.pid, l + 1, 1, &r, 1)));
	/* a read-only local buffer is a fine source but no destination */
	l[1].iov_base = ro;
	ASSERT_EQ(w ? 30 : 10, pvm_res(pvm_rw(w, self->t.pid, l, 3, &r, 1)));
	munmap(none, self->page);
	munmap(ro, self->page);
}

/*
 * Every remote page pinned is unpinned again, on the error paths too: a
 * local fault in the middle of a batch, a remote hole, a short local side.
 * Other pinners on the system could move the counters, so a mismatch must
 * persist over three tries to count.
 */
TEST_F(pvm, pins_balanced)
{
	uint8_t *hole = pvm_hole(self->page);
	struct iovec l[2] = { { self->local, 3 * self->page }, { hole, 10 } };
	struct iovec r = { self->region, 5 * self->page };
	struct iovec big = { self->local, LOCAL_SZ };
	struct iovec rbig = { self->region, REGION_SZ };
	unsigned long big_len = big.iov_len < rbig.iov_len ?
				big.iov_len : rbig.iov_len;
	long before, after = 0;
	int try;

	if (!pvm_pins_held(&before))
		SKIP(return, "no nr_foll_pin_* in /proc/vmstat, or no root to fold them");
	for (try = 0; try < 3; try++) {
		ASSERT_TRUE(pvm_pins_held(&before));
		prep(_metadata, self);
		ASSERT_EQ(3 * self->page,
			  pvm_res(pvm_rw(self->write, self->t.pid, l, 2, &r, 1)));
		ASSERT_EQ(-EFAULT,
			  pvm_res(pvm_rw(self->write, self->t.pid, l + 1, 1, &r, 1)));
		ASSERT_EQ(big_len,
			  pvm_res(pvm_rw(self->write, self->t.pid, &big, 1,
					 &rbig, 1)));
		ASSERT_TRUE(pvm_pins_held(&after));
		if (after == before)
			break;
	}
	EXPECT_EQ(before, after);
}

/* ---- iovec shapes ----------------------------------------------------- */

static const struct pvm_shape shapes[] = {
	{ "1:1 page", 0, 0, 0, 0,
	  { 4096, PVM_SHAPE_END }, { 4096, PVM_SHAPE_END } },
	{ "1:1 straddle", 8190, 0, 4095, 0,
	  { 3, PVM_SHAPE_END }, { 3, PVM_SHAPE_END } },
	{ "1:1 odd", 4000, 0, 77, 0,
	  { 3 * 4096 + 123, PVM_SHAPE_END },
	  { 3 * 4096 + 123, PVM_SHAPE_END } },
	{ "1:N", 1, 0, 4090, 13,
	  { 20000, PVM_SHAPE_END },
	  { 1, 4095, 4097, 3, 1803, 0, 7777, PVM_SHAPE_END } },
	{ "N:1", 4093, 5, 4091, 0,
	  { 1, 2, 3, 4095, 4097, 8191, 0, 11, PVM_SHAPE_END },
	  { 16400, PVM_SHAPE_END } },
	{ "N:M", 3, 4099, 4094, 1,
	  { 5, 0, 4099, 1, 0, 3000, 8193, PVM_SHAPE_END },
	  { 4097, 0, 2, 6000, 0, 5198, 0, PVM_SHAPE_END } },
	{ "more local", 0, 0, 4000, 100,
	  { 10000, PVM_SHAPE_END }, { 100, 200, PVM_SHAPE_END } },
	{ "more remote", 4095, 1, 0, 0,
	  { 100, 50, PVM_SHAPE_END }, { 10000, PVM_SHAPE_END } },
	{ "zero entries", 0, 7, 4096, 9,
	  { 0, 0, 10, 0, PVM_SHAPE_END },
	  { 0, 3, 0, 0, 7, 0, PVM_SHAPE_END } },
	{ "multi page entries", 12, 4096, 1, 8192,
	  { 17 * 4096 + 1, 5 * 4096, 3, PVM_SHAPE_END },
	  { 2 * 4096 - 1, 40 * 4096 + 7, PVM_SHAPE_END } },
};

TEST_F(pvm, iov_max_entries)
{
	struct iovec *lv = calloc(IOV_MAX, sizeof(*lv));
	struct iovec *rv = calloc(IOV_MAX, sizeof(*rv));
	struct iovec onel = { self->local + 1, 3 * self->page };
	struct iovec oner = { self->region + 1, 3 * self->page };
	size_t lpos = 0, rpos = 5, sl, sr;
	int i;

	ASSERT_TRUE(lv != NULL);
	ASSERT_TRUE(rv != NULL);
	for (i = 0; i < IOV_MAX; i++) {
		size_t ll = (i * 7) % 13, rl = (i * 5) % 11;

		if (i % 64 == 3)
			rl += self->page;
		lv[i] = (struct iovec){ self->local + lpos, ll };
		rv[i] = (struct iovec){ self->region + rpos, rl };
		lpos += ll + 3;
		rpos += rl + 1;
	}
	sl = pvm_iov_sum(lv, IOV_MAX);
	sr = pvm_iov_sum(rv, IOV_MAX);
	ASSERT_LT(sl, sr);
	run_call(_metadata, self, lv, IOV_MAX, rv, IOV_MAX, sl);
	run_call(_metadata, self, &onel, 1, rv, IOV_MAX, 3 * self->page);
	run_call(_metadata, self, lv, IOV_MAX, &oner, 1, sl);
	free(lv);
	free(rv);
}

/*
 * Larger than one batch of pinned pages (PVM_HEAP_PAGES: a page of page
 * pointers, 2 MiB of 4 KiB pages on 64-bit), and than the old 4 MiB one
 */
TEST_F(pvm, large)
{
	size_t len = (5UL << 20) + 777;
	unsigned long base;
	uint8_t *buf = pvm_map_anon(6UL << 20);

	ASSERT_TRUE(buf != NULL);
	base = pvm_target_call(&self->t, pvm_cmd_mmap, 6UL << 20,
			       PROT_READ | PROT_WRITE, MAP_PRIVATE);
	ASSERT_FALSE(pvm_is_err(base));
	ASSERT_EQ(0, pvm_target_call(&self->t, pvm_cmd_fill, base, 6UL << 20,
				     SEED_R));
	xfer_ok(_metadata, self->write, self->t.pid, &self->t, buf, base + 333,
		len, SEED_R, 333);
	munmap(buf, 6UL << 20);
}

/* ---- kinds of remote memory ------------------------------------------- */

/*
 * The kinds of memory a copy reads and writes like anonymous memory, as
 * one table (like selftests/mm/cow.c): ->map() starts self->t2 with @len
 * bytes of the kind at *@addr, holding pattern @seed from stream offset
 * 0.  It returns NULL, or the reason the kind cannot be had here (the
 * test skips).  The test of each kind checks what is special about it;
 * TEST_F(pvm, shapes) runs every iovec shape on every kind.
 */
struct kind {
	const char *name;
	const char *(*map)(struct __test_metadata *_metadata,
			   FIXTURE_DATA(pvm) *self, size_t len,
			   uint32_t seed, unsigned long *addr);
};

/* Private anonymous memory the target mapped and filled itself. */
static const char *map_anon(struct __test_metadata *_metadata,
			    FIXTURE_DATA(pvm) *self, size_t len,
			    uint32_t seed, unsigned long *addr)
{
	ASSERT_EQ(0, pvm_target_start(&self->t2, NULL, 0, 0, 0));
	*addr = pvm_target_call(&self->t2, pvm_cmd_mmap, len,
				PROT_READ | PROT_WRITE, MAP_PRIVATE);
	ASSERT_FALSE(pvm_is_err(*addr));
	ASSERT_EQ(0, pvm_target_call(&self->t2, pvm_cmd_fill, *addr, len,
				     seed));
	return NULL;
}

/*
 * Map @len bytes of @fd (anonymous if -1) with @prot and @flags here, fill
 * them with @seed if @fill, then fork the target: it sees the same pages
 * (shared, or private and copy-on-write).  A private file mapping is not
 * filled here: that would replace its page cache pages with anonymous
 * copies before the target ever saw them.
 */
static void map_before_fork(struct __test_metadata *_metadata,
			    FIXTURE_DATA(pvm) *self, size_t len, int prot,
			    int flags, int fd, bool fill, uint32_t seed,
			    unsigned long *addr)
{
	uint8_t *m = mmap(NULL, len, prot,
			  flags | (fd < 0 ? MAP_ANONYMOUS : 0), fd, 0);

	ASSERT_TRUE(m != MAP_FAILED);
	self->kmap = m;
	self->kmap_len = len;
	if (fill)
		pvm_fill(m, len, seed);
	ASSERT_EQ(0, pvm_target_start(&self->t2, NULL, 0, 0, 0));
	*addr = (unsigned long)m;
}

static const char *map_shared_anon(struct __test_metadata *_metadata,
				   FIXTURE_DATA(pvm) *self, size_t len,
				   uint32_t seed, unsigned long *addr)
{
	map_before_fork(_metadata, self, len, PROT_READ | PROT_WRITE,
			MAP_SHARED, -1, true, seed, addr);
	return NULL;
}

static const char *map_shared_memfd(struct __test_metadata *_metadata,
				    FIXTURE_DATA(pvm) *self, size_t len,
				    uint32_t seed, unsigned long *addr)
{
	self->fd = memfd_create("process_vm_test", MFD_CLOEXEC);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ftruncate(self->fd, len));
	map_before_fork(_metadata, self, len, PROT_READ | PROT_WRITE,
			MAP_SHARED, self->fd, true, seed, addr);
	return NULL;
}

static int tmp_file(void)
{
	char path[] = "/tmp/process_vm_test.XXXXXX";
	int fd = mkstemp(path);

	if (fd >= 0)
		unlink(path);
	return fd;
}

/* A new temporary file, self->fd, of @len bytes of pattern @seed */
static const char *tmp_file_of(struct __test_metadata *_metadata,
			       FIXTURE_DATA(pvm) *self, size_t len,
			       uint32_t seed)
{
	uint8_t *buf = malloc(len);

	ASSERT_TRUE(buf != NULL);
	self->fd = tmp_file();
	if (self->fd < 0) {
		free(buf);
		return "cannot create a file in /tmp";
	}
	pvm_fill(buf, len, seed);
	ASSERT_EQ(len, pwrite(self->fd, buf, len, 0));
	free(buf);
	return NULL;
}

static const char *map_shared_file(struct __test_metadata *_metadata,
				   FIXTURE_DATA(pvm) *self, size_t len,
				   uint32_t seed, unsigned long *addr)
{
	const char *skip = tmp_file_of(_metadata, self, len, seed);

	if (!skip)
		map_before_fork(_metadata, self, len, PROT_READ | PROT_WRITE,
				MAP_SHARED, self->fd, true, seed, addr);
	return skip;
}

/* Our pages, shared with the target copy-on-write. */
static const char *map_cow(struct __test_metadata *_metadata,
			   FIXTURE_DATA(pvm) *self, size_t len,
			   uint32_t seed, unsigned long *addr)
{
	map_before_fork(_metadata, self, len, PROT_READ | PROT_WRITE,
			MAP_PRIVATE, -1, true, seed, addr);
	return NULL;
}

/* A private mapping of a file: page cache until written, then anon. */
static const char *map_private_file(struct __test_metadata *_metadata,
				    FIXTURE_DATA(pvm) *self, size_t len,
				    uint32_t seed, unsigned long *addr)
{
	const char *skip = tmp_file_of(_metadata, self, len, seed);

	if (!skip)
		map_before_fork(_metadata, self, len, PROT_READ | PROT_WRITE,
				MAP_PRIVATE, self->fd, false, seed, addr);
	return skip;
}

/* Two THPs (at least @len bytes), faulted in by the target. */
static const char *map_thp(struct __test_metadata *_metadata,
			   FIXTURE_DATA(pvm) *self, size_t len,
			   uint32_t seed, unsigned long *addr)
{
	size_t thp = pvm_thp_size();
	uint8_t *m;

	if (!thp)
		return "no transparent huge pages (hpage_pmd_size)";
	ASSERT_LE(len, 2 * thp);
	m = pvm_map_aligned(2 * thp, thp, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS);
	ASSERT_TRUE(m != NULL);
	self->kmap = m;
	self->kmap_len = 2 * thp;
	if (madvise(m, 2 * thp, MADV_HUGEPAGE))
		return "MADV_HUGEPAGE failed";
	/* the target faults the range in, as huge pages if it can */
	ASSERT_EQ(0, pvm_target_start(&self->t2, pvm_cmd_fill,
				      (unsigned long)m, 2 * thp, seed));
	*addr = (unsigned long)m;
	return NULL;
}

static long hugepages_free(void)
{
	char line[128];
	long val = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "HugePages_Free: %ld", &val) == 1)
			break;
	fclose(f);
	return val;
}

/*
 * Two default-size hugetlb pages (at least @len bytes) that the target
 * maps itself, reserved for the test if need be (the teardown gives them
 * back).
 */
static const char *map_hugetlb(struct __test_metadata *_metadata,
			       FIXTURE_DATA(pvm) *self, size_t len,
			       uint32_t seed, unsigned long *addr)
{
	const char *nr = "/proc/sys/vm/nr_hugepages";
	long free_pages = hugepages_free(), total = pvm_read_long(nr);
	size_t huge = pvm_hugetlb_size();

	if (!huge)
		return "no hugetlb pages (no Hugepagesize in meminfo)";
	ASSERT_LE(len, 2 * huge);
	if (free_pages < 2 && total >= 0 && self->saved_nr_hugepages < 0 &&
	    !pvm_write_long(nr, total + 2 - free_pages))
		self->saved_nr_hugepages = total;
	if (hugepages_free() < 2)
		return "cannot reserve 2 huge pages";
	ASSERT_EQ(0, pvm_target_start(&self->t2, NULL, 0, 0, 0));
	*addr = pvm_target_call(&self->t2, pvm_cmd_mmap, 2 * huge,
				PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_HUGETLB);
	ASSERT_NE(-EPIPE, *addr);
	if (pvm_is_err(*addr))
		return "MAP_HUGETLB of default huge pages failed";
	ASSERT_EQ(0, pvm_target_call(&self->t2, pvm_cmd_fill, *addr, 2 * huge,
				     seed));
	return NULL;
}

enum kind_id {
	ANON, SHARED_ANON, SHARED_MEMFD, SHARED_FILE, COW, PRIVATE_FILE,
	THP, HUGETLB, NR_KINDS
};

static const struct kind kinds[NR_KINDS] = {
	[ANON] = { "private anonymous", map_anon },
	[SHARED_ANON] = { "shared anonymous", map_shared_anon },
	[SHARED_MEMFD] = { "shared memfd", map_shared_memfd },
	[SHARED_FILE] = { "shared file", map_shared_file },
	[COW] = { "private, copy-on-write after fork", map_cow },
	[PRIVATE_FILE] = { "private file", map_private_file },
	[THP] = { "THP", map_thp },
	[HUGETLB] = { "hugetlb", map_hugetlb },
};

/* kinds[@id].map(); the reason to skip, with the kind's name, or NULL */
static const char *map_kind(struct __test_metadata *_metadata,
			    FIXTURE_DATA(pvm) *self, enum kind_id id,
			    size_t len, uint32_t seed, unsigned long *addr)
{
	static char reason[128];
	const char *skip = kinds[id].map(_metadata, self, len, seed, addr);

	if (!skip)
		return NULL;
	snprintf(reason, sizeof(reason), "%s: %s", kinds[id].name, skip);
	return reason;
}

/* Undo ->map(): the target, our mapping, the file. */
static void unmap_kind(FIXTURE_DATA(pvm) *self)
{
	pvm_target_kill(&self->t2);
	if (self->kmap)
		munmap(self->kmap, self->kmap_len);
	self->kmap = NULL;
	if (self->fd >= 0)
		close(self->fd);
	self->fd = -1;
}

TEST_F(pvm, anon_private)
{
	unsigned long base;
	const char *skip;

	skip = map_kind(_metadata, self, ANON, REGION_SZ, SEED_R,
			&base);
	if (skip)
		SKIP(return, "%s", skip);
	xfer_ok(_metadata, self->write, self->t2.pid, &self->t2, self->local,
		base + 123, REGION_SZ - 200, SEED_R, 123);
}

/*
 * A MAP_SHARED mapping (kind @id) created before fork(): the target's copy
 * is the parent's, and for files the page cache.
 */
static void shared_case(struct __test_metadata *_metadata,
			FIXTURE_DATA(pvm) *self, enum kind_id id)
{
	size_t pg = self->page, len = 3 * pg + 11;
	unsigned long base;
	const char *skip;
	uint8_t *m, *buf;

	skip = map_kind(_metadata, self, id, 4 * pg, SEED_R, &base);
	if (skip)
		SKIP(return, "%s", skip);
	m = (uint8_t *)base;
	buf = malloc(len);
	ASSERT_TRUE(buf != NULL);
	xfer_ok(_metadata, self->write, self->t2.pid, &self->t2, self->local,
		base + 7, len, SEED_R, 7);
	if (self->write) {
		/* reached the shared object */
		ASSERT_EQ(-1, pvm_check(m + 7, len, SEED_L));
		ASSERT_EQ(-1, pvm_check_at(m, 7, SEED_R, 0));
		if (self->fd >= 0) {
			ASSERT_EQ(len, pread(self->fd, buf, len, 7));
			ASSERT_EQ(-1, pvm_check(buf, len, SEED_L));
		}
	} else if (self->fd >= 0) {
		/* data written to the file is what the target reads */
		pvm_fill(buf, len, SEED_P);
		ASSERT_EQ(len, pwrite(self->fd, buf, len, 7));
		xfer_ok(_metadata, false, self->t2.pid, &self->t2,
			self->local, base + 7, len, SEED_P, 0);
	}
	free(buf);
}

TEST_F(pvm, shared_anon)
{
	shared_case(_metadata, self, SHARED_ANON);
}

TEST_F(pvm, shared_memfd)
{
	shared_case(_metadata, self, SHARED_MEMFD);
}

TEST_F(pvm, shared_file)
{
	shared_case(_metadata, self, SHARED_FILE);
}

TEST_F(pvm, private_after_fork)
{
	size_t pg = self->page, len = 5 * pg;
	struct pvm_target t3;
	unsigned long base;
	uint8_t *m;
	const char *skip;

	/* two targets share the pages copy-on-write with us */
	skip = map_kind(_metadata, self, COW, len, SEED_P, &base);
	if (skip)
		SKIP(return, "%s", skip);
	m = (uint8_t *)base;
	ASSERT_EQ(0, pvm_target_start(&t3, NULL, 0, 0, 0));
	xfer_ok(_metadata, self->write, self->t2.pid, &self->t2, self->local,
		base + 1, len - 2, SEED_P, 1);
	/* the write broke COW in t2 only */
	ASSERT_EQ(-1, pvm_check(m, len, SEED_P));
	ASSERT_EQ(-1, pvm_target_call(&t3, pvm_cmd_check, base, len, SEED_P));
	if (self->write)
		remote_is(_metadata, &self->t2, base, 1, SEED_P, 0);
	pvm_target_stop(&t3);
}

TEST_F(pvm, private_file)
{
	size_t pg = self->page, len = 2 * pg;
	uint8_t *buf = malloc(len);
	unsigned long base;
	const char *skip;

	ASSERT_TRUE(buf != NULL);
	skip = map_kind(_metadata, self, PRIVATE_FILE, len, SEED_P,
			&base);
	if (skip)
		SKIP(return, "%s", skip);
	xfer_ok(_metadata, self->write, self->t2.pid, &self->t2, self->local,
		base + 3, len - 6, SEED_P, 3);
	/* a write to a private file mapping does not reach the file */
	memset(buf, 0, len);
	ASSERT_EQ(len, pread(self->fd, buf, len, 0));
	ASSERT_EQ(-1, pvm_check(buf, len, SEED_P));
	ASSERT_EQ(-1, pvm_check((uint8_t *)base, len, SEED_P));
	free(buf);
}

TEST_F(pvm, readonly_file)
{
	size_t pg = self->page, len = 2 * pg;
	uint8_t *buf = malloc(len);
	const char *skip;
	unsigned long base;

	ASSERT_TRUE(buf != NULL);
	skip = tmp_file_of(_metadata, self, len, SEED_P);
	if (skip)
		SKIP(return, "%s", skip);
	map_before_fork(_metadata, self, len, PROT_READ, MAP_SHARED, self->fd,
			false, SEED_P, &base);
	if (self->write) {
		/* no FOLL_FORCE: a read-only mapping is not written */
		pvm_fill(self->local, len, SEED_L);
		ASSERT_EQ(-EFAULT, pvm_res(pvm_rw1(true, self->t2.pid,
						   self->local, base, len)));
	} else {
		xfer_ok(_metadata, false, self->t2.pid, &self->t2,
			self->local, base, len, SEED_P, 0);
	}
	ASSERT_EQ(len, pread(self->fd, buf, len, 0));
	ASSERT_EQ(-1, pvm_check(buf, len, SEED_P));
	free(buf);
}

/* One call on the fixture while page 1 of the region has @prot */
static void prot_call(struct __test_metadata *_metadata,
		      FIXTURE_DATA(pvm) *self, int prot,
		      const struct iovec *r, long expect)
{
	struct iovec l = { self->local, 3 * self->page };
	unsigned long pg1 = RADDR(self->page);
	long ret;

	prep(_metadata, self);
	ASSERT_EQ(0, pvm_target_call(&self->t, pvm_cmd_mprotect, pg1,
				     self->page, prot));
	ret = pvm_res(pvm_rw(self->write, self->t.pid, &l, 1, r, 1));
	ASSERT_EQ(0, pvm_target_call(&self->t, pvm_cmd_mprotect, pg1,
				     self->page, PROT_READ | PROT_WRITE));
	ASSERT_EQ(expect, ret);
	verify(_metadata, self, &l, 1, r, 1, expect < 0 ? 0 : expect);
}

/* Accesses stop at a page with @prot; no FOLL_FORCE */
static void prot_case(struct __test_metadata *_metadata,
		      FIXTURE_DATA(pvm) *self, int prot, bool readable)
{
	size_t pg = self->page;
	struct iovec r = { RPTR(pg), pg };
	struct iovec r3 = { RPTR(0), 3 * pg };
	bool fails = self->write || !readable;

	prot_call(_metadata, self, prot, &r, fails ? -EFAULT : pg);
	prot_call(_metadata, self, prot, &r3, fails ? pg : 3 * pg);
}

TEST_F(pvm, remote_readonly)
{
	prot_case(_metadata, self, PROT_READ, true);
}

TEST_F(pvm, remote_prot_none)
{
	prot_case(_metadata, self, PROT_NONE, false);
}

/* Two THPs; the copy crosses from the first into the second. */
TEST_F(pvm, thp)
{
	size_t thp = pvm_thp_size();
	unsigned long base;
	const char *skip;

	skip = map_kind(_metadata, self, THP, 2 * thp, SEED_R, &base);
	if (skip)
		SKIP(return, "%s", skip);
	xfer_ok(_metadata, self->write, self->t2.pid, &self->t2, self->local,
		base + thp - LOCAL_SZ / 2 - 1, LOCAL_SZ - 2, SEED_R,
		thp - LOCAL_SZ / 2 - 1);
	remote_is(_metadata, &self->t2, base, 4096, SEED_R, 0);
}

/*
 * Two pages of a THP swapped with mremap(): the folio stays whole but is
 * mapped out of order, so a copy must not take pages that follow each
 * other in the folio for pages that follow each other in memory.
 */
TEST_F(pvm, thp_out_of_order)
{
	size_t thp = pvm_thp_size(), pg = self->page;
	unsigned long base, a, tmp;
	const char *skip;

	skip = map_kind(_metadata, self, THP, 2 * thp, SEED_R, &base);
	if (skip)
		SKIP(return, "%s", skip);
	a = base + 5 * pg;
	tmp = pvm_target_call(&self->t2, pvm_cmd_mmap, pg,
			      PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS);
	ASSERT_FALSE(pvm_is_err(tmp));
	ASSERT_EQ(0, pvm_target_call(&self->t2, pvm_cmd_move, a, pg, tmp));
	ASSERT_EQ(0, pvm_target_call(&self->t2, pvm_cmd_move, a + pg, pg, a));
	ASSERT_EQ(0, pvm_target_call(&self->t2, pvm_cmd_move, tmp, pg,
				     a + pg));
	/* The pattern in address order again, over pages in swapped order. */
	ASSERT_EQ(0, pvm_target_call(&self->t2, pvm_cmd_fill, base, 2 * thp,
				     SEED_R));
	xfer_ok(_metadata, self->write, self->t2.pid, &self->t2, self->local,
		base + 3 * pg + 1, 6 * pg, SEED_R, 3 * pg + 1);
}

TEST_F(pvm, hugetlb)
{
	size_t huge = pvm_hugetlb_size();
	unsigned long base;
	const char *skip;

	skip = map_kind(_metadata, self, HUGETLB, 2 * huge, SEED_R,
			&base);
	if (skip)
		SKIP(return, "%s", skip);
	xfer_ok(_metadata, self->write, self->t2.pid, &self->t2, self->local,
		base + huge - 100, LOCAL_SZ - 1, SEED_R, huge - 100);
	ASSERT_EQ(0, pvm_target_call(&self->t2, pvm_cmd_munmap, base,
				     2 * huge, 0));
}

/*
 * Every iovec shape on every kind of memory (kinds that cannot be had
 * here are logged and left out), each call checked against the model.
 */
TEST_F(pvm, shapes)
{
	struct pvm_shape_iov io;
	unsigned long base;
	const char *skip;
	size_t i, k;

	for (k = 0; k < NR_KINDS; k++) {
		skip = kinds[k].map(_metadata, self, REGION_SZ, SEED_R, &base);
		if (skip) {
			TH_LOG("kind %s left out: %s", kinds[k].name, skip);
			unmap_kind(self);
			continue;
		}
		self->rt = &self->t2;
		self->rbase = (uint8_t *)base;
		for (i = 0; i < ARRAY_SIZE(shapes); i++) {
			pvm_shape_layout(&io, &shapes[i], self->local,
					 self->rbase);
			TH_LOG("kind %s, shape %s", kinds[k].name,
			       shapes[i].name);
			run_call(_metadata, self, io.l, io.nl, io.r, io.nr,
				 io.count);
		}
		unmap_kind(self);
	}
}

/* @len bytes of secret memory in the target: the address, or -errno */
static long setup_secret(struct pvm_target *t, unsigned long len,
			 unsigned long b, unsigned long c)
{
	int fd = sys_memfd_secret(0);
	void *p;

	if (fd < 0 || ftruncate(fd, len))
		return -errno;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	memset(p, 0x5a, len);
	return (long)p;
}

TEST_F(pvm, memfd_secret)
{
	long ret = pvm_target_start(&self->t2, setup_secret, self->page, 0, 0);

	ASSERT_NE(-EPIPE, ret);
	if (pvm_is_err(ret) && pvm_syscall_missing(-ret))
		SKIP(return, "memfd_secret() not available: %s",
		     strerror(-ret));
	ASSERT_FALSE(pvm_is_err(ret)) {
		TH_LOG("secret memory in the target: %s", strerror(-ret));
	}
	/* secret memory cannot be pinned by anybody */
	ASSERT_EQ(-EFAULT, pvm_res(pvm_rw1(self->write, self->t2.pid,
					   self->local, ret, 16)));
	ASSERT_EQ(-EFAULT, pvm_res(pvm_rw1(self->write, self->t2.pid,
					   self->local, ret + 100, 1)));
}

/*
 * userfaultfd: a handler thread in the target resolves missing pages.  It
 * marks each page in @seen before UFFDIO_COPY wakes the faulting copy.
 */
struct uffd_ctx {
	int uffd;
	unsigned long base, len;
	unsigned long seen;
};

static struct uffd_ctx uffd_ctx;

static void *uffd_handler(void *arg)
{
	struct uffd_ctx *u = arg;
	size_t pg = PVM_PAGE;
	uint8_t *page = malloc(pg);
	struct uffd_msg msg;
	unsigned long addr;

	for (;;) {
		if (pvm_uffd_next_fault(u->uffd, -1, &msg))
			continue;
		addr = msg.arg.pagefault.address & ~(pg - 1);
		__atomic_or_fetch(&u->seen, 1UL << ((addr - u->base) / pg),
				  __ATOMIC_RELEASE);
		pvm_fill_at(page, pg, SEED_R, addr - u->base);
		pvm_uffd_copy(u->uffd, addr, page, pg);
	}
	return NULL;
}

/* @len missing bytes served by uffd_handler(): the address, or -errno */
static long setup_uffd(struct pvm_target *t, unsigned long len,
		       unsigned long b, unsigned long c)
{
	struct uffd_ctx *u = &uffd_ctx;
	pthread_t th;
	void *p;

	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	u->base = (unsigned long)p;
	u->len = len;
	u->uffd = pvm_uffd_register(p, len, 0, O_CLOEXEC);
	if (u->uffd < 0)
		return u->uffd;
	errno = pthread_create(&th, NULL, uffd_handler, u);
	if (errno)
		return -errno;
	return (long)p;
}

static long cmd_uffd_seen(struct pvm_target *t, unsigned long a,
			  unsigned long b, unsigned long c)
{
	return __atomic_load_n(&uffd_ctx.seen, __ATOMIC_ACQUIRE);
}

TEST_F(pvm, userfaultfd)
{
	size_t pg = self->page;
	long base = pvm_target_start(&self->t2, setup_uffd, 4 * pg, 0, 0);

	ASSERT_NE(-EPIPE, base);
	if (pvm_is_err(base))
		SKIP(return, "userfaultfd unavailable: %s", strerror(-base));
	/* the copy waits for the handler, then completes */
	xfer_ok(_metadata, self->write, self->t2.pid, &self->t2, self->local,
		base + 100, 4 * pg - 200, SEED_R, 100);
	/* every page was resolved by the handler */
	ASSERT_EQ(0xf, pvm_target_call(&self->t2, cmd_uffd_seen, 0, 0, 0));
	if (self->write)
		remote_is(_metadata, &self->t2, base, 100, SEED_R, 0);
}

/* ---- MAX_RW_COUNT ------------------------------------------------------ */

/* 2 MiB of SEED_R, then 2 MiB of SEED_R + 1: the address, or -errno */
static long setup_two_2m(struct pvm_target *t, unsigned long a,
			 unsigned long b, unsigned long c)
{
	uint8_t *p = mmap(NULL, 2 * SZ_2M, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -errno;
	pvm_fill(p, SZ_2M, SEED_R);
	pvm_fill(p + SZ_2M, SZ_2M, SEED_R + 1);
	return (long)p;
}

/*
 * 1024 x 2 MiB on each side, all but the last entry aliasing one buffer:
 * the local total of 2 GiB is cut to MAX_RW_COUNT in the last local entry.
 */
TEST_F_TIMEOUT(pvm, max_rw_count_iovecs, 300)
{
	struct iovec *lv = calloc(IOV_MAX, sizeof(*lv));
	struct iovec *rv = calloc(IOV_MAX, sizeof(*rv));
	uint8_t *a = pvm_map_anon(2 * SZ_2M), *b = a + SZ_2M;
	size_t tail = SZ_2M - (1024 * SZ_2M - PVM_MAX_RW);
	unsigned long base;
	int i;

	ASSERT_TRUE(lv != NULL);
	ASSERT_TRUE(rv != NULL);
	ASSERT_TRUE(a != NULL);
	ASSERT_EQ(PVM_MAX_RW, (size_t)INT_MAX + 1 - self->page);
	base = pvm_target_start(&self->t2, setup_two_2m, 0, 0, 0);
	ASSERT_FALSE(pvm_is_err(base));
	for (i = 0; i < IOV_MAX; i++) {
		lv[i] = (struct iovec){ a, SZ_2M };
		rv[i] = (struct iovec){ (void *)base, SZ_2M };
	}
	lv[IOV_MAX - 1].iov_base = b;
	rv[IOV_MAX - 1].iov_base = (void *)(base + SZ_2M);
	pvm_fill(a, SZ_2M, SEED_L);
	if (self->write)
		pvm_fill(b, SZ_2M, SEED_L + 1);
	else
		memset(b, SENTINEL, SZ_2M);
	ASSERT_EQ(PVM_MAX_RW, pvm_res(pvm_rw(self->write, self->t2.pid, lv,
					     IOV_MAX, rv, IOV_MAX)));
	if (self->write) {
		remote_is(_metadata, &self->t2, base + SZ_2M, tail,
			  SEED_L + 1, 0);
		remote_is(_metadata, &self->t2, base + SZ_2M + tail,
			  SZ_2M - tail, SEED_R + 1, tail);
	} else {
		ASSERT_EQ(-1, pvm_check(b, tail, SEED_R + 1));
		ASSERT_EQ(-1, pvm_check_byte(b + tail, SZ_2M - tail,
					     SENTINEL));
	}
	munmap(a, 2 * SZ_2M);
	free(lv);
	free(rv);
}

/*
 * One local iovec of 2 GiB over a window that maps one 2 MiB memfd 1024
 * times (no memory cost): clamped to MAX_RW_COUNT.
 */
TEST_F_TIMEOUT(pvm, max_rw_count_single, 300)
{
	size_t win = IOV_MAX * SZ_2M;
	struct iovec *rv = calloc(IOV_MAX, sizeof(*rv));
	struct iovec l;
	unsigned long base;
	uint8_t *w;
	int i;

	if (!HAVE_64)
		SKIP(return, "needs a 64-bit address space");
	ASSERT_TRUE(rv != NULL);
	self->fd = memfd_create("process_vm_test", MFD_CLOEXEC);
	ASSERT_LE(0, self->fd);
	ASSERT_EQ(0, ftruncate(self->fd, SZ_2M));
	w = pvm_map(win, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS |
		    MAP_NORESERVE);
	ASSERT_TRUE(w != NULL);
	for (i = 0; i < IOV_MAX; i++)
		ASSERT_TRUE(mmap(w + i * SZ_2M, SZ_2M, PROT_READ | PROT_WRITE,
				 MAP_SHARED | MAP_FIXED, self->fd, 0) ==
			    w + i * SZ_2M);
	pvm_fill(w, SZ_2M, SEED_L);
	ASSERT_EQ(-1, pvm_check(w + win - SZ_2M, SZ_2M, SEED_L));
	base = pvm_target_start(&self->t2, setup_two_2m, 0, 0, 0);
	ASSERT_FALSE(pvm_is_err(base));
	for (i = 0; i < IOV_MAX; i++)
		rv[i] = (struct iovec){ (void *)base, SZ_2M };
	rv[IOV_MAX - 1].iov_base = (void *)(base + SZ_2M);
	l = (struct iovec){ w, win };
	ASSERT_EQ(PVM_MAX_RW, pvm_res(pvm_rw(self->write, self->t2.pid, &l, 1,
					     rv, IOV_MAX)));
	if (self->write) {
		remote_is(_metadata, &self->t2, base + SZ_2M,
			  SZ_2M - self->page, SEED_L, 0);
		remote_is(_metadata, &self->t2, base + 2 * SZ_2M - self->page,
			  self->page, SEED_R + 1, SZ_2M - self->page);
	} else {
		/* the last page of the window was not written */
		ASSERT_EQ(-1, pvm_check(w, SZ_2M - self->page, SEED_R + 1));
		ASSERT_EQ(-1, pvm_check_at(w + SZ_2M - self->page,
					   self->page, SEED_R, SZ_2M -
					   self->page));
	}
	munmap(w, win);
	free(rv);
}

TEST_HARNESS_MAIN
