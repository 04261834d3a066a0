// SPDX-License-Identifier: GPL-2.0
/*
 * Tests of libpvm_handle: a producer process exports, consumers that know
 * only the handle bytes read and write.  The "region" variants and cases
 * use the kernel's regions (process_vm_export(2)) and skip on kernels
 * without them; the others export for the CMA path on every kernel
 * (PVM_HANDLE_EXPORT_CMA), run on kernels with and without
 * PROCESS_VM_PIDFD and expect the same result on both; the "pid" variants
 * force the pid path on kernels that have the flag.
 *
 * The pid-reuse cases need root (a new pid namespace, clone3() set_tid or
 * ns_last_pid); the permission cases need root to switch uids, and the
 * Yama one Yama (it raises ptrace_scope from 0 to 1 for its run).  They
 * skip otherwise.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/filter.h>
#include <linux/sched.h>
#include <linux/seccomp.h>

#include "pvm_handle.h"
#include "kselftest_harness.h"

#ifndef __NR_clone3
#define __NR_clone3		435
#endif
/* include/uapi/linux/process_vm.h; system headers do not have it yet */
#ifndef PROCESS_VM_PIDFD
#define PROCESS_VM_PIDFD	1UL
#endif
/* Where the Makefile put the demo; PVM_HANDLE_DEMO overrides it */
#ifndef PVMH_DEMO
#define PVMH_DEMO		"./pvm-handle-demo"
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif
/* The regions of include/uapi/linux/process_vm.h, for a consumer's own calls */
#define NR_PROCESS_VM_EXPORT	472
#define NR_PROCESS_VM_OPEN	473
#define REGION_READ		0x1u
#define REGION_WRITE		0x2u

#define PAGE		4096
#define BUF_LEN		(4 * PAGE)
#define DATA_MAX	512
#define NR_CONSUMERS	8
#define UID_PRODUCER	65534
#define UID_OTHER	65533
#define NOT_RUN		12345	/* a result no step can give */

/* Offsets of handle fields the tests forge (README.rst, "Format") */
#define H_VERSION	4
#define H_ACCESS	5
#define H_ID		6
#define H_RESERVED	7
#define H_PID		8
#define H_CRC		12
#define H_INO		16
#define H_START		24
#define H_ADDR		32
#define H_LEN		40
#define H_SLOT		48
#define H_COOKIE	56
/* and of version 2, a kernel region's */
#define H_REGION_ID	16
#define H_SECRET	24
#define H_REGION_END	40

static uint8_t pattern(uint64_t i)
{
	return (i * 31 + 7) & 0xff;
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v = 0;
	int i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void put_le(unsigned char *p, uint64_t v, int bytes)
{
	int i;

	for (i = 0; i < bytes; i++)
		p[i] = v >> (8 * i);
}

/* The handle's CRC-32 recomputed, as a forger who read the docs would */
static void reseal(unsigned char *h)
{
	uint32_t crc = ~0u;
	int i, k;

	put_le(h + H_CRC, 0, 4);
	for (i = 0; i < PVM_HANDLE_SIZE; i++) {
		crc ^= h[i];
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
	}
	put_le(h + H_CRC, ~crc, 4);
}

static int read_full(int fd, void *buf, size_t len)
{
	ssize_t n;

	while (len) {
		n = read(fd, buf, len);
		if (n <= 0)
			return -1;
		buf = (char *)buf + n;
		len -= n;
	}
	return 0;
}

static int write_full(int fd, const void *buf, size_t len)
{
	return write(fd, buf, len) == (ssize_t)len ? 0 : -1;
}

/*
 * The library's process_vm_readv() calls land here, this program's
 * definition coming before libc's, so that the probe cases can show it
 * a kernel it is not.  fake_kernel is REAL_KERNEL in every other case.
 */
enum {
	REAL_KERNEL,
	FAKE_PIDFD,	/* has PROCESS_VM_PIDFD */
	FAKE_LAX,	/* lacks it, returns 0 for no iovecs before any check */
};

static int fake_kernel;

/* The pid a pidfd names (its fdinfo), or -1 */
static pid_t pidfd_pid(int pidfd)
{
	char path[64], line[128];
	int pid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Pid: %d", &pid) == 1)
			break;
	fclose(f);
	return pid;
}

ssize_t process_vm_readv(pid_t pid, const struct iovec *lvec,
			 unsigned long liovcnt, const struct iovec *rvec,
			 unsigned long riovcnt, unsigned long flags)
{
	bool empty = !liovcnt || !riovcnt;

	if (fake_kernel == FAKE_LAX && empty)
		return 0;
	if (fake_kernel != REAL_KERNEL && flags & PROCESS_VM_PIDFD) {
		/* Flags first, then nothing to copy, then the target */
		errno = EINVAL;
		if (fake_kernel == FAKE_LAX || flags & ~PROCESS_VM_PIDFD)
			return -1;
		if (empty)
			return 0;
		pid = pidfd_pid(pid);
		errno = EBADF;
		if (pid <= 0)
			return -1;
		flags = 0;
	}
	return syscall(__NR_process_vm_readv, pid, lvec, liovcnt, rvec,
		       riovcnt, flags);
}

static int drop_to(uid_t uid)
{
	if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid))
		return -errno;
	/* A uid change clears dumpability, which ptrace access needs */
	return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) ? -errno : 0;
}

/* ------------------------------------------------------------------ */
/* The producer: a child process that exports on request               */
/* ------------------------------------------------------------------ */

enum { OP_EXPORT = 'e', OP_REVOKE = 'r', OP_GET = 'g', OP_UNMAP = 'u',
	OP_EXEC = 'x', OP_ALLOW = 'a', OP_QUIT = 'q' };

struct req {
	int op;
	unsigned int access;
	uint64_t off;
	uint64_t len;
	pid_t pid;
	unsigned char handle[PVM_HANDLE_SIZE];
};

struct rsp {
	int err;
	unsigned char handle[PVM_HANDLE_SIZE];
	unsigned char data[DATA_MAX];
};

struct producer {
	pid_t pid;
	int req;		/* write end */
	int rsp;		/* read end */
	unsigned int export;	/* PVM_HANDLE_EXPORT_CMA, or 0 for regions */
};

static void producer_serve(uint8_t *buf, int in, int out)
{
	struct req q;
	struct rsp r;

	while (!read_full(in, &q, sizeof(q))) {
		memset(&r, 0, sizeof(r));
		switch (q.op) {
		case OP_EXPORT:
			r.err = pvm_handle_export(buf + q.off, q.len, q.access,
						  r.handle);
			break;
		case OP_REVOKE:
			r.err = pvm_handle_revoke(q.handle, sizeof(q.handle));
			break;
		case OP_GET:
			memcpy(r.data, buf + q.off, q.len);
			break;
		case OP_UNMAP:
			r.err = munmap(buf + q.off, q.len) ? -errno : 0;
			break;
		case OP_EXEC:
			/* A new program image: the exports are gone with the old one */
			write_full(out, &r, sizeof(r));
			execl("/bin/sleep", "sleep", "600", (char *)NULL);
			_exit(1);
		case OP_ALLOW:
			r.err = pvm_handle_allow(q.pid);
			break;
		case OP_QUIT:
			_exit(0);
		}
		if (write_full(out, &r, sizeof(r)))
			break;
	}
	_exit(0);
}

/*
 * Map @len bytes at @addr exactly, as in the process whose pid we took;
 * NULL if something else is there already.
 */
static void *map_at(uint64_t addr, size_t len)
{
	void *p = mmap((void *)(uintptr_t)addr, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);

	return p == (void *)(uintptr_t)addr ? p : NULL;
}

/*
 * An impostor: the same bytes at the handle's address and the handle's
 * cookie in its revocation word, so that a library that trusted the pid
 * would find everything as it expects.  Returns the buffer, or NULL if
 * the addresses were taken.
 */
static uint8_t *impostor_memory(const unsigned char *h)
{
	uint64_t addr = get64(h + H_ADDR), slot = get64(h + H_SLOT);
	uint8_t *buf, *page;
	int i;

	buf = map_at(addr, BUF_LEN);
	page = map_at(slot & ~(uint64_t)(PAGE - 1), PAGE);
	if (!buf || !page)
		return buf;
	for (i = 0; i < BUF_LEN; i++)
		buf[i] = pattern(i);
	*(uint64_t *)(uintptr_t)slot = get64(h + H_COOKIE);
	return buf;
}

/* Write @value to a /proc/sys file */
static int write_int(const char *path, int value)
{
	FILE *f = fopen(path, "w");
	int err;

	if (!f)
		return -errno;
	err = fprintf(f, "%d", value) < 0;
	return fclose(f) || err ? -EIO : 0;
}

/*
 * fork(), as pid @want of this pid namespace: clone3() with set_tid (5.5,
 * root in the namespace), else ns_last_pid (CONFIG_CHECKPOINT_RESTORE).
 */
static pid_t fork_as(pid_t want)
{
	struct clone_args args = {
		.exit_signal = SIGCHLD,
		.set_tid = (uintptr_t)&want,
		.set_tid_size = 1,
	};
	pid_t pid = syscall(__NR_clone3, &args, sizeof(args));

	if (pid >= 0 || write_int("/proc/sys/kernel/ns_last_pid", want - 1))
		return pid;
	return fork();
}

/*
 * Start a producer as @uid (0: stay root); if @h is not NULL, an impostor
 * of the producer of @h, under its pid.  It exports for the CMA path
 * until @p->export is set to 0.
 */
static int producer_start(struct producer *p, uid_t uid,
			  const unsigned char *h)
{
	int req[2], rsp[2];
	uint8_t *buf;
	int i;

	if (pipe(req) || pipe(rsp))
		return -errno;
	p->pid = h ? fork_as(get64(h + H_PID) & 0xffffffff) : fork();
	if (p->pid < 0)
		return -errno;
	if (!p->pid) {
		close(req[1]);
		close(rsp[0]);
		/* Also after an exec, and when a failed case skips teardown */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (uid && drop_to(uid))
			_exit(1);
		if (h) {
			buf = impostor_memory(h);
		} else {
			buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			for (i = 0; buf != MAP_FAILED && i < BUF_LEN; i++)
				buf[i] = pattern(i);
		}
		producer_serve(buf, req[0], rsp[1]);
	}
	close(req[0]);
	close(rsp[1]);
	p->req = req[1];
	p->rsp = rsp[0];
	p->export = PVM_HANDLE_EXPORT_CMA;
	return 0;
}

static int producer_call(struct producer *p, struct req *q, struct rsp *r)
{
	if (write_full(p->req, q, sizeof(*q)) ||
	    read_full(p->rsp, r, sizeof(*r)))
		return -EPIPE;
	return r->err;
}

static int producer_export(struct producer *p, uint64_t off, uint64_t len,
			   unsigned int access, unsigned char *handle)
{
	struct req q = { .op = OP_EXPORT, .access = access | p->export,
			 .off = off, .len = len };
	struct rsp r;
	int err = producer_call(p, &q, &r);

	memcpy(handle, r.handle, PVM_HANDLE_SIZE);
	return err;
}

static int producer_simple(struct producer *p, int op,
			   const unsigned char *handle)
{
	struct req q = { .op = op };
	struct rsp r;

	if (handle)
		memcpy(q.handle, handle, PVM_HANDLE_SIZE);
	return producer_call(p, &q, &r);
}

/* 0 if the producer's bytes at [@off, @off + @len) are @want */
static int producer_compare(struct producer *p, uint64_t off, uint64_t len,
			    const uint8_t *want)
{
	struct req q = { .op = OP_GET, .off = off, .len = len };
	struct rsp r;

	if (producer_call(p, &q, &r))
		return -EPIPE;
	return memcmp(r.data, want, len) ? -EIO : 0;
}

static void producer_stop(struct producer *p)
{
	if (p->pid <= 0)
		return;
	close(p->req);
	close(p->rsp);
	kill(p->pid, SIGKILL);
	waitpid(p->pid, NULL, 0);
	p->pid = 0;
}

/* 0 if @got is the producer's initial bytes from @off */
static int check_pattern(const uint8_t *got, uint64_t off, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (got[i] != pattern(off + i))
			return -EIO;
	return 0;
}

/*
 * Open, read [@off, @off + @len) and compare with the producer's bytes
 * from @base + @off (@base: where the export starts); the error or 0
 */
static int open_and_check_at(const unsigned char *hb, unsigned int flags,
			     uint64_t base, uint64_t off, size_t len)
{
	uint8_t got[BUF_LEN];
	struct pvm_handle *h;
	ssize_t n;
	int err;

	err = pvm_handle_open(hb, PVM_HANDLE_SIZE, flags, &h);
	if (err)
		return err;
	n = pvm_handle_pread(h, got, len, off);
	pvm_handle_close(h);
	if (n < 0)
		return n;
	return n == (ssize_t)len ? check_pattern(got, base + off, len) :
				   -EMSGSIZE;
}

static int open_and_check(const unsigned char *hb, unsigned int flags,
			  uint64_t off, size_t len)
{
	return open_and_check_at(hb, flags, 0, off, len);
}

/* Run @fn in a child; its result, an errno value as a positive number */
static int in_child(int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (!pid)
		_exit(-fn(arg) & 0xff);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -ECHILD;
	return -WEXITSTATUS(status);
}

/* ------------------------------------------------------------------ */
/* Cases with one producer, in every mode                              */
/* ------------------------------------------------------------------ */

FIXTURE(pvmh) {
	struct producer p;
	unsigned char rw[PVM_HANDLE_SIZE];
	struct pvm_handle *h;
	unsigned int flags;
};

FIXTURE_VARIANT(pvmh) {
	unsigned int flags;
	bool region;
};

/* The library's choice: PROCESS_VM_PIDFD where the kernel has it */
FIXTURE_VARIANT_ADD(pvmh, pidfd) {
	.flags = 0,
};

FIXTURE_VARIANT_ADD(pvmh, pid) {
	.flags = PVM_HANDLE_OPEN_PID,
};

/* A kernel region */
FIXTURE_VARIANT_ADD(pvmh, region) {
	.flags = 0,
	.region = true,
};

FIXTURE_SETUP(pvmh)
{
	self->flags = variant->flags;
	if (variant->region && !pvm_handle_kernel_has_regions())
		SKIP(return, "the kernel has no regions");
	ASSERT_EQ(0, producer_start(&self->p, 0, NULL));
	if (variant->region)
		self->p.export = 0;
	ASSERT_EQ(0, producer_export(&self->p, 0, BUF_LEN, PVM_HANDLE_RDWR,
				     self->rw));
	ASSERT_EQ(0, pvm_handle_open(self->rw, PVM_HANDLE_SIZE, self->flags,
				     &self->h));
}

FIXTURE_TEARDOWN(pvmh)
{
	pvm_handle_close(self->h);
	producer_stop(&self->p);
}

/* The path taken is the one the kernel allows and the caller asked for */
TEST_F(pvmh, via)
{
	long ret = syscall(__NR_process_vm_readv, -1, NULL, 0UL, NULL, 0UL,
			   PROCESS_VM_PIDFD);
	enum pvm_handle_via want = PVM_HANDLE_VIA_PID;

	if (!ret && !self->flags)
		want = PVM_HANDLE_VIA_PIDFD;
	if (variant->region)
		want = PVM_HANDLE_VIA_REGION;
	ASSERT_EQ(!ret, pvm_handle_kernel_has_pidfd());
	ASSERT_EQ(variant->region ? PVM_HANDLE_VERSION_REGION :
		  PVM_HANDLE_VERSION, self->rw[H_VERSION]);
	ASSERT_EQ(want, pvm_handle_via(self->h));
	ASSERT_EQ(self->p.pid, pvm_handle_pid(self->h));
	ASSERT_EQ(BUF_LEN, pvm_handle_length(self->h));
	ASSERT_EQ(PVM_HANDLE_RDWR, pvm_handle_access(self->h));
}

TEST_F(pvmh, round_trip)
{
	uint8_t got[BUF_LEN], put[300];
	size_t i;

	ASSERT_EQ(BUF_LEN, pvm_handle_pread(self->h, got, BUF_LEN, 0));
	ASSERT_EQ(0, check_pattern(got, 0, BUF_LEN));
	for (i = 0; i < sizeof(put); i++)
		put[i] = ~pattern(i);
	/* Across a page boundary, then read back through the handle */
	ASSERT_EQ(sizeof(put), pvm_handle_pwrite(self->h, put, sizeof(put),
						 PAGE - 100));
	ASSERT_EQ(0, producer_compare(&self->p, PAGE - 100, sizeof(put), put));
	ASSERT_EQ(sizeof(put), pvm_handle_pread(self->h, got, sizeof(put),
						PAGE - 100));
	ASSERT_EQ(0, memcmp(got, put, sizeof(put)));
}

TEST_F(pvmh, iovecs)
{
	uint8_t a[10], b[1], c[3000], back[3011];
	struct iovec iov[4] = {
		{ a, sizeof(a) }, { NULL, 0 }, { b, sizeof(b) }, { c, sizeof(c) },
	};
	size_t total = sizeof(a) + sizeof(b) + sizeof(c);

	ASSERT_EQ(total, pvm_handle_preadv(self->h, iov, 4, 5000));
	ASSERT_EQ(0, check_pattern(a, 5000, sizeof(a)));
	ASSERT_EQ(0, check_pattern(b, 5010, sizeof(b)));
	ASSERT_EQ(0, check_pattern(c, 5011, sizeof(c)));
	memset(a, 0xa1, sizeof(a));
	memset(b, 0xb2, sizeof(b));
	memset(c, 0xc3, sizeof(c));
	ASSERT_EQ(total, pvm_handle_pwritev(self->h, iov, 4, 9000));
	ASSERT_EQ(total, pvm_handle_pread(self->h, back, total, 9000));
	ASSERT_EQ(0, memcmp(back, a, sizeof(a)));
	ASSERT_EQ(0xb2, back[sizeof(a)]);
	ASSERT_EQ(0, memcmp(back + sizeof(a) + 1, c, sizeof(c)));
	ASSERT_EQ(0, pvm_handle_preadv(self->h, iov, 0, 0));
}

TEST_F(pvmh, bounds)
{
	struct iovec big[2] = { { NULL, 0 }, { NULL, SIZE_MAX } };
	uint8_t got[BUF_LEN + 1];
	struct iovec iov = { got, 1 };

	ASSERT_EQ(0, pvm_handle_pread(self->h, got, 0, BUF_LEN));
	ASSERT_EQ(1, pvm_handle_pread(self->h, got, 1, BUF_LEN - 1));
	ASSERT_EQ(-ERANGE, pvm_handle_pread(self->h, got, 1, BUF_LEN));
	ASSERT_EQ(-ERANGE, pvm_handle_pread(self->h, got, 0, BUF_LEN + 1));
	ASSERT_EQ(-ERANGE, pvm_handle_pread(self->h, got, BUF_LEN + 1, 0));
	ASSERT_EQ(-ERANGE, pvm_handle_pread(self->h, got, BUF_LEN, 1));
	ASSERT_EQ(-ERANGE, pvm_handle_pread(self->h, got, 1, UINT64_MAX));
	ASSERT_EQ(-ERANGE, pvm_handle_pwrite(self->h, got, 2, BUF_LEN - 1));
	ASSERT_EQ(-EINVAL, pvm_handle_preadv(self->h, big, 2, 0));
	ASSERT_EQ(-EINVAL, pvm_handle_preadv(self->h, &iov, -1, 0));
	ASSERT_EQ(-EINVAL, pvm_handle_preadv(self->h, &iov, IOV_MAX + 1, 0));
	ASSERT_EQ(-EINVAL, pvm_handle_preadv(self->h, NULL, 1, 0));
	ASSERT_EQ(-EINVAL, pvm_handle_preadv(NULL, &iov, 1, 0));
}

/* A sub-range, read-only and write-only handles */
TEST_F(pvmh, access)
{
	unsigned char ro[PVM_HANDLE_SIZE], wo[PVM_HANDLE_SIZE];
	struct pvm_handle *r, *w;
	uint8_t got[200];

	ASSERT_EQ(0, producer_export(&self->p, 100, 200, PVM_HANDLE_READ, ro));
	ASSERT_EQ(0, producer_export(&self->p, 100, 200, PVM_HANDLE_WRITE, wo));
	ASSERT_EQ(0, pvm_handle_open(ro, sizeof(ro), self->flags, &r));
	ASSERT_EQ(0, pvm_handle_open(wo, sizeof(wo), self->flags, &w));
	ASSERT_EQ(200, pvm_handle_pread(r, got, 200, 0));
	ASSERT_EQ(0, check_pattern(got, 100, 200));
	ASSERT_EQ(-ERANGE, pvm_handle_pread(r, got, 1, 200));
	ASSERT_EQ(-EACCES, pvm_handle_pwrite(r, got, 1, 0));
	ASSERT_EQ(-EACCES, pvm_handle_pread(w, got, 1, 0));
	memset(got, 0x5a, sizeof(got));
	ASSERT_EQ(200, pvm_handle_pwrite(w, got, 200, 0));
	ASSERT_EQ(0, producer_compare(&self->p, 100, 200, got));
	pvm_handle_close(r);
	pvm_handle_close(w);
}

/* The producer unmaps part of the range: that part faults, the rest works */
TEST_F(pvmh, unmapped)
{
	struct req q = { .op = OP_UNMAP, .off = 2 * PAGE, .len = PAGE };
	uint8_t got[BUF_LEN];
	struct rsp r;

	ASSERT_EQ(0, producer_call(&self->p, &q, &r));
	ASSERT_EQ(-EFAULT, pvm_handle_pread(self->h, got, BUF_LEN, 0));
	ASSERT_EQ(-EFAULT, pvm_handle_pwrite(self->h, got, 1, 2 * PAGE));
	ASSERT_EQ(2 * PAGE, pvm_handle_pread(self->h, got, 2 * PAGE, 0));
	ASSERT_EQ(0, check_pattern(got, 0, 2 * PAGE));
}

TEST_F(pvmh, revoke)
{
	unsigned char ro[PVM_HANDLE_SIZE], again[PVM_HANDLE_SIZE];
	uint8_t got[PAGE], put[16];
	struct pvm_handle *r;

	ASSERT_EQ(0, producer_export(&self->p, 0, PAGE, PVM_HANDLE_READ, ro));
	ASSERT_EQ(0, pvm_handle_open(ro, sizeof(ro), self->flags, &r));
	ASSERT_EQ(0, producer_simple(&self->p, OP_REVOKE, self->rw));
	memset(put, 0xee, sizeof(put));
	ASSERT_EQ(-EKEYREVOKED, pvm_handle_pread(self->h, got, PAGE, 0));
	ASSERT_EQ(-EKEYREVOKED, pvm_handle_pwrite(self->h, put, 16, 0));
	/* The refused write did not land */
	for (size_t i = 0; i < sizeof(put); i++)
		put[i] = pattern(i);
	ASSERT_EQ(0, producer_compare(&self->p, 0, sizeof(put), put));
	ASSERT_EQ(-EKEYREVOKED, open_and_check(self->rw, self->flags, 0, 1));
	ASSERT_EQ(-EKEYREVOKED, producer_simple(&self->p, OP_REVOKE, self->rw));
	/* Other exports are not affected */
	ASSERT_EQ(PAGE, pvm_handle_pread(r, got, PAGE, 0));
	ASSERT_EQ(0, check_pattern(got, 0, PAGE));
	/* Exported again, the range has a new handle; the old one stays dead */
	ASSERT_EQ(0, producer_export(&self->p, 0, BUF_LEN, PVM_HANDLE_RDWR,
				     again));
	ASSERT_EQ(0, open_and_check(again, self->flags, 0, BUF_LEN));
	ASSERT_EQ(-EKEYREVOKED, open_and_check(self->rw, self->flags, 0, 1));
	ASSERT_EQ(-EKEYREVOKED, pvm_handle_pread(self->h, got, 1, 0));
	pvm_handle_close(r);
}

/* execve() replaces the memory the handles described: they are revoked */
TEST_F(pvmh, exec)
{
	uint8_t got[16];
	int i;

	ASSERT_EQ(0, producer_simple(&self->p, OP_EXEC, NULL));
	/* The word vanishes with the old image; wait until it has */
	for (i = 0; i < 5000 && pvm_handle_pread(self->h, got, 16, 0) == 16; i++)
		usleep(1000);
	ASSERT_EQ(-EKEYREVOKED, pvm_handle_pread(self->h, got, 16, 0));
	ASSERT_EQ(-EKEYREVOKED, open_and_check(self->rw, self->flags, 0, 16));
}

/*
 * The producer exits: a zombie, then reaped; the pid stays free here.  Its
 * exit revokes its regions (the open handle keeps the region for opens).
 */
TEST_F(pvmh, producer_exits)
{
	int gone = variant->region ? -EKEYREVOKED : -ESRCH;
	siginfo_t si;
	uint8_t got[16];

	ASSERT_EQ(-EPIPE, producer_simple(&self->p, OP_QUIT, NULL));
	ASSERT_EQ(0, waitid(P_PID, self->p.pid, &si, WEXITED | WNOWAIT));
	ASSERT_EQ(gone, pvm_handle_pread(self->h, got, 16, 0));
	ASSERT_EQ(gone, open_and_check(self->rw, self->flags, 0, 16));
	ASSERT_EQ(self->p.pid, waitpid(self->p.pid, NULL, 0));
	self->p.pid = 0;
	close(self->p.req);
	close(self->p.rsp);
	ASSERT_EQ(gone, pvm_handle_pread(self->h, got, 16, 0));
	ASSERT_EQ(gone, pvm_handle_pwrite(self->h, got, 16, 0));
	ASSERT_EQ(gone, open_and_check(self->rw, self->flags, 0, 16));
}

/* ------------------------------------------------------------------ */
/* Consumers in other processes                                        */
/* ------------------------------------------------------------------ */

struct consumer_arg {
	int fd;				/* the handle comes from here, */
	const unsigned char *shm;	/* or from here when fd < 0 */
	unsigned int flags;
	int index;
	uid_t uid;
};

/* A consumer: gets the handle bytes, reads all, writes its own slice */
static int consumer(void *p)
{
	struct consumer_arg *a = p;
	unsigned char hb[PVM_HANDLE_SIZE];
	uint8_t got[BUF_LEN], mark[64];
	struct pvm_handle *h;
	int err;

	if (a->uid && drop_to(a->uid))
		return -EUCLEAN;
	if (a->fd >= 0 && read_full(a->fd, hb, sizeof(hb)))
		return -EPIPE;
	if (a->fd < 0)
		memcpy(hb, a->shm, sizeof(hb));
	err = pvm_handle_open(hb, sizeof(hb), a->flags, &h);
	if (err)
		return err;
	/* Past the slices the consumers write, the producer's bytes */
	if (pvm_handle_pread(h, got, BUF_LEN, 0) != BUF_LEN ||
	    check_pattern(got + NR_CONSUMERS * sizeof(mark),
			  NR_CONSUMERS * sizeof(mark),
			  BUF_LEN - NR_CONSUMERS * sizeof(mark))) {
		err = -EIO;
		goto out;
	}
	memset(mark, a->index + 1, sizeof(mark));
	if (pvm_handle_pwrite(h, mark, sizeof(mark), a->index * sizeof(mark)) !=
	    sizeof(mark))
		err = -EIO;
out:
	pvm_handle_close(h);
	return err;
}

/* Consumers one after the other, each given the handle through a pipe */
TEST_F(pvmh, through_pipe)
{
	struct consumer_arg a = { .flags = self->flags };
	uint8_t mark[64];
	int fds[2];

	for (a.index = 0; a.index < 3; a.index++) {
		ASSERT_EQ(0, pipe(fds));
		ASSERT_EQ(0, write_full(fds[1], self->rw, sizeof(self->rw)));
		close(fds[1]);
		a.fd = fds[0];
		ASSERT_EQ(0, in_child(consumer, &a));
		close(fds[0]);
		memset(mark, a.index + 1, sizeof(mark));
		ASSERT_EQ(0, producer_compare(&self->p, a.index * 64, 64, mark));
	}
}

/* A consumer started before the export finds the handle in shared memory */
TEST_F(pvmh, through_shm)
{
	struct consumer_arg a = { .fd = -1, .flags = self->flags };
	unsigned char *shm, fresh[PVM_HANDLE_SIZE];
	int go[2], status;
	uint8_t mark[64];
	pid_t pid;

	shm = mmap(NULL, PAGE, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, shm);
	a.shm = shm;
	ASSERT_EQ(0, pipe(go));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		char c;

		_exit(read_full(go[0], &c, 1) ? EPIPE : -consumer(&a));
	}
	ASSERT_EQ(0, producer_export(&self->p, 0, BUF_LEN, PVM_HANDLE_RDWR,
				     fresh));
	memcpy(shm, fresh, sizeof(fresh));
	ASSERT_EQ(0, write_full(go[1], "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	memset(mark, 1, sizeof(mark));
	ASSERT_EQ(0, producer_compare(&self->p, 0, 64, mark));
}

/* Several consumers at once, each writes its own slice */
TEST_F(pvmh, many_consumers)
{
	pid_t pids[NR_CONSUMERS];
	uint8_t mark[64];
	int i, status, fds[2];

	for (i = 0; i < NR_CONSUMERS; i++) {
		struct consumer_arg a = { .flags = self->flags, .index = i };

		ASSERT_EQ(0, pipe(fds));
		pids[i] = fork();
		ASSERT_LE(0, pids[i]);
		if (!pids[i]) {
			close(fds[1]);
			a.fd = fds[0];
			_exit(-consumer(&a));
		}
		close(fds[0]);
		ASSERT_EQ(0, write_full(fds[1], self->rw, sizeof(self->rw)));
		close(fds[1]);
	}
	for (i = 0; i < NR_CONSUMERS; i++) {
		ASSERT_EQ(pids[i], waitpid(pids[i], &status, 0));
		ASSERT_EQ(0, WEXITSTATUS(status));
	}
	for (i = 0; i < NR_CONSUMERS; i++) {
		memset(mark, i + 1, sizeof(mark));
		ASSERT_EQ(0, producer_compare(&self->p, i * 64, 64, mark));
	}
}

/* ------------------------------------------------------------------ */
/* Permissions                                                         */
/* ------------------------------------------------------------------ */

#define YAMA_SCOPE	"/proc/sys/kernel/yama/ptrace_scope"

static int yama_scope(void)
{
	FILE *f = fopen(YAMA_SCOPE, "r");
	int scope = -1;

	if (f) {
		if (fscanf(f, "%d", &scope) != 1)
			scope = -1;
		fclose(f);
	}
	return scope;
}

/* A consumer under another uid: the kernel says no, the library EPERM */
TEST(other_uid)
{
	struct consumer_arg a = { .uid = UID_OTHER };
	unsigned char hb[PVM_HANDLE_SIZE];
	struct producer p;
	int fds[2];

	if (geteuid())
		SKIP(return, "needs root to switch uids");
	ASSERT_EQ(0, producer_start(&p, UID_PRODUCER, NULL));
	ASSERT_EQ(0, producer_export(&p, 0, BUF_LEN, PVM_HANDLE_RDWR, hb));
	ASSERT_EQ(0, pipe(fds));
	ASSERT_EQ(0, write_full(fds[1], hb, sizeof(hb)));
	a.fd = fds[0];
	ASSERT_EQ(-EPERM, in_child(consumer, &a));
	producer_stop(&p);
}

/*
 * Same uid, but not the producer's ancestor: Yama scope 1 refuses until
 * the producer names the consumer with pvm_handle_allow().
 */
FIXTURE(yama) {
	int saved;
};

FIXTURE_SETUP(yama)
{
	self->saved = yama_scope();
	if (geteuid())
		SKIP(return, "needs root to switch uids");
	if (self->saved < 0)
		SKIP(return, "needs Yama");
	if (self->saved == 0)
		ASSERT_EQ(0, write_int(YAMA_SCOPE, 1));
	if (self->saved > 1)
		SKIP(return, "needs Yama ptrace_scope 0 or 1, not %d", self->saved);
}

FIXTURE_TEARDOWN(yama)
{
	if (self->saved == 0)
		write_int(YAMA_SCOPE, 0);
}

TEST_F(yama, allow)
{
	struct consumer_arg a = { .uid = UID_PRODUCER };
	unsigned char hb[PVM_HANDLE_SIZE];
	struct req q = { .op = OP_ALLOW };
	int go[2], fds[2], status;
	struct producer p;
	struct rsp r;
	pid_t pid;

	ASSERT_EQ(0, producer_start(&p, UID_PRODUCER, NULL));
	ASSERT_EQ(0, producer_export(&p, 0, BUF_LEN, PVM_HANDLE_RDWR, hb));
	ASSERT_EQ(0, pipe(fds));
	ASSERT_EQ(0, write_full(fds[1], hb, sizeof(hb)));
	a.fd = fds[0];
	ASSERT_EQ(-EPERM, in_child(consumer, &a));

	/* The second consumer waits until the producer has allowed it */
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, write_full(fds[1], hb, sizeof(hb)));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		char c;

		_exit(read_full(go[0], &c, 1) ? EPIPE : -consumer(&a));
	}
	q.pid = pid;
	ASSERT_EQ(0, producer_call(&p, &q, &r));
	ASSERT_EQ(0, write_full(go[1], "g", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	producer_stop(&p);
}

/* ------------------------------------------------------------------ */
/* Kernel regions: what the kernel, not the library, enforces          */
/* ------------------------------------------------------------------ */

/*
 * The region of handle @hb opened by hand, as a consumer that bypasses
 * the library would: the fd, or -errno.
 */
static int raw_open(const unsigned char *hb, unsigned int flags)
{
	struct {
		uint64_t id;
		uint8_t secret[16];
	} kh;
	int fd;

	kh.id = get64(hb + H_REGION_ID);
	memcpy(kh.secret, hb + H_SECRET, sizeof(kh.secret));
	fd = syscall(NR_PROCESS_VM_OPEN, &kh, sizeof(kh), flags);
	return fd < 0 ? -errno : fd;
}

static ssize_t raw_io(int fd, void *buf, size_t len, off_t off, bool write)
{
	ssize_t n = write ? pwrite(fd, buf, len, off) : pread(fd, buf, len, off);

	return n < 0 ? -errno : n;
}

/* Make process_vm_readv() and process_vm_writev() fail with EPERM */
static int forbid_cma(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
			 offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_readv, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_process_vm_writev, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
	};
	struct sock_fprog prog = {
		.len = ARRAY_SIZE(filter),
		.filter = filter,
	};

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		return -errno;
	return 0;
}

/* The region fixture's exports: [BASE, BASE + LEN) of the producer's buffer */
#define R_BASE		100
#define R_LEN		200

FIXTURE(region) {
	struct producer p;
	unsigned char ro[PVM_HANDLE_SIZE];	/* read-only */
	unsigned char rw[PVM_HANDLE_SIZE];	/* read-write */
};

FIXTURE_SETUP(region)
{
	if (!pvm_handle_kernel_has_regions())
		SKIP(return, "the kernel has no regions");
	ASSERT_EQ(0, producer_start(&self->p, 0, NULL));
	self->p.export = 0;
	ASSERT_EQ(0, producer_export(&self->p, R_BASE, R_LEN, PVM_HANDLE_READ,
				     self->ro));
	ASSERT_EQ(0, producer_export(&self->p, R_BASE, R_LEN, PVM_HANDLE_RDWR,
				     self->rw));
}

FIXTURE_TEARDOWN(region)
{
	producer_stop(&self->p);
}

/* The library's probe agrees with the kernel */
TEST(region_probe)
{
	static const char word[8] = "regions";
	struct iovec iov = { (void *)word, sizeof(word) };
	int fd = syscall(NR_PROCESS_VM_EXPORT, &iov, 1UL, REGION_READ);

	ASSERT_EQ(fd >= 0, pvm_handle_kernel_has_regions());
	if (fd >= 0)
		close(fd);
}

/*
 * The handle holds the kernel's id and secret, and nothing of the
 * producer's address space; length, access and pid are the kernel's.
 */
TEST_F(region, format)
{
	struct pvm_handle *h;
	int i;

	ASSERT_EQ(PVM_HANDLE_VERSION_REGION, self->ro[H_VERSION]);
	ASSERT_EQ(PVM_HANDLE_READ, self->ro[H_ACCESS]);
	for (i = H_REGION_END; i < PVM_HANDLE_SIZE; i++)
		ASSERT_EQ(0, self->ro[i]);
	ASSERT_NE(get64(self->ro + H_REGION_ID), get64(self->rw + H_REGION_ID));
	ASSERT_EQ(0, pvm_handle_open(self->ro, PVM_HANDLE_SIZE, 0, &h));
	ASSERT_EQ(PVM_HANDLE_VIA_REGION, pvm_handle_via(h));
	ASSERT_EQ(R_LEN, pvm_handle_length(h));
	ASSERT_EQ(PVM_HANDLE_READ, pvm_handle_access(h));
	ASSERT_EQ(self->p.pid, pvm_handle_pid(h));
	pvm_handle_close(h);
}

/* A secret byte flipped: the CRC says damaged, resealed the kernel says no */
TEST_F(region, forged_secret)
{
	unsigned char b[PVM_HANDLE_SIZE];
	int i;

	ASSERT_EQ(0, open_and_check_at(self->rw, 0, R_BASE, 0, R_LEN));
	for (i = 0; i < 16; i++) {
		memcpy(b, self->rw, sizeof(b));
		b[H_SECRET + i] ^= 1 << (i % 8);
		ASSERT_EQ(-EBADMSG, open_and_check_at(b, 0, R_BASE, 0, 1));
		reseal(b);
		ASSERT_EQ(-ENOENT, open_and_check_at(b, 0, R_BASE, 0, 1));
		ASSERT_EQ(-ENOENT, raw_open(b, REGION_READ));
	}
	/* Another region's id with this one's secret */
	memcpy(b, self->rw, sizeof(b));
	memcpy(b + H_REGION_ID, self->ro + H_REGION_ID, 8);
	reseal(b);
	ASSERT_EQ(-ENOENT, raw_open(b, REGION_READ));
	ASSERT_EQ(-ENOENT, open_and_check_at(b, 0, R_BASE, 0, 1));
}

/*
 * A read-only handle cannot write: not through the library, not with its
 * access byte raised, not by hand.
 */
TEST_F(region, read_only)
{
	unsigned char b[PVM_HANDLE_SIZE];
	uint8_t put[16], orig[16];
	struct pvm_handle *h;
	int fd;

	memset(put, 0xa5, sizeof(put));
	for (size_t i = 0; i < sizeof(orig); i++)
		orig[i] = pattern(R_BASE + i);
	ASSERT_EQ(0, pvm_handle_open(self->ro, PVM_HANDLE_SIZE, 0, &h));
	ASSERT_EQ(-EACCES, pvm_handle_pwrite(h, put, sizeof(put), 0));
	pvm_handle_close(h);

	memcpy(b, self->ro, sizeof(b));
	b[H_ACCESS] = PVM_HANDLE_RDWR;
	reseal(b);
	ASSERT_EQ(-EACCES, pvm_handle_open(b, sizeof(b), 0, &h));
	b[H_ACCESS] = PVM_HANDLE_WRITE;
	reseal(b);
	ASSERT_EQ(-EACCES, pvm_handle_open(b, sizeof(b), 0, &h));

	ASSERT_EQ(-EACCES, raw_open(self->ro, REGION_WRITE));
	ASSERT_EQ(-EACCES, raw_open(self->ro, REGION_READ | REGION_WRITE));
	fd = raw_open(self->ro, REGION_READ);
	ASSERT_LE(0, fd);
	ASSERT_EQ(-EBADF, raw_io(fd, put, sizeof(put), 0, true));
	close(fd);
	ASSERT_EQ(0, producer_compare(&self->p, R_BASE, sizeof(orig), orig));
}

/*
 * [R_BASE, R_BASE + R_LEN) of the producer's buffer and nothing else: the
 * library says ERANGE, the kernel ends a read at the region's end and
 * refuses a write there.
 */
TEST_F(region, range)
{
	uint8_t got[BUF_LEN], put[64], orig[64];
	struct pvm_handle *h;
	int fd;

	memset(put, 0x3c, sizeof(put));
	ASSERT_EQ(0, pvm_handle_open(self->rw, PVM_HANDLE_SIZE, 0, &h));
	ASSERT_EQ(-ERANGE, pvm_handle_pread(h, got, 1, R_LEN));
	ASSERT_EQ(-ERANGE, pvm_handle_pread(h, got, R_LEN + 1, 0));
	ASSERT_EQ(-ERANGE, pvm_handle_pwrite(h, put, 2, R_LEN - 1));
	ASSERT_EQ(R_LEN, pvm_handle_pread(h, got, R_LEN, 0));
	ASSERT_EQ(0, check_pattern(got, R_BASE, R_LEN));
	pvm_handle_close(h);

	fd = raw_open(self->rw, REGION_READ | REGION_WRITE);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, raw_io(fd, got, 1, R_LEN, false));
	ASSERT_EQ(0, raw_io(fd, got, 1, 1 << 20, false));
	ASSERT_EQ(50, raw_io(fd, got, sizeof(got), R_LEN - 50, false));
	ASSERT_EQ(0, check_pattern(got, R_BASE + R_LEN - 50, 50));
	ASSERT_EQ(-ENOSPC, raw_io(fd, put, sizeof(put), R_LEN, true));
	ASSERT_EQ(10, raw_io(fd, put, sizeof(put), R_LEN - 10, true));
	close(fd);
	/* The bytes after the region are the producer's own */
	for (size_t i = 0; i < sizeof(orig); i++)
		orig[i] = pattern(R_BASE + R_LEN + i);
	ASSERT_EQ(0, producer_compare(&self->p, R_BASE + R_LEN, sizeof(orig),
				      orig));
}

/*
 * Revoked, a region gives nothing, to the library or by hand; once its
 * last fd is closed, its handle names nothing.
 */
TEST_F(region, revoke)
{
	uint8_t got[R_LEN], put[16];
	struct pvm_handle *h, *r;
	int fd;

	ASSERT_EQ(0, pvm_handle_open(self->rw, PVM_HANDLE_SIZE, 0, &h));
	ASSERT_EQ(0, pvm_handle_open(self->ro, PVM_HANDLE_SIZE, 0, &r));
	fd = raw_open(self->rw, REGION_READ | REGION_WRITE);
	ASSERT_LE(0, fd);
	ASSERT_EQ(R_LEN, raw_io(fd, got, R_LEN, 0, false));

	ASSERT_EQ(0, producer_simple(&self->p, OP_REVOKE, self->rw));
	memset(put, 0xee, sizeof(put));
	ASSERT_EQ(-EKEYREVOKED, pvm_handle_pread(h, got, R_LEN, 0));
	ASSERT_EQ(-EKEYREVOKED, pvm_handle_pwrite(h, put, sizeof(put), 0));
	ASSERT_EQ(-ENXIO, raw_io(fd, got, R_LEN, 0, false));
	ASSERT_EQ(-ENXIO, raw_io(fd, put, sizeof(put), 0, true));
	ASSERT_EQ(-ENXIO, raw_open(self->rw, REGION_READ));
	ASSERT_EQ(-EKEYREVOKED, open_and_check_at(self->rw, 0, R_BASE, 0, 1));
	ASSERT_EQ(-EKEYREVOKED, producer_simple(&self->p, OP_REVOKE, self->rw));
	/* The refused writes did not land */
	for (size_t i = 0; i < sizeof(put); i++)
		put[i] = pattern(R_BASE + i);
	ASSERT_EQ(0, producer_compare(&self->p, R_BASE, sizeof(put), put));
	/* The other region is not affected */
	ASSERT_EQ(R_LEN, pvm_handle_pread(r, got, R_LEN, 0));
	ASSERT_EQ(0, check_pattern(got, R_BASE, R_LEN));
	pvm_handle_close(r);

	/* The producer closed its fd at revoke; now the last one goes */
	close(fd);
	pvm_handle_close(h);
	ASSERT_EQ(-ENOENT, open_and_check_at(self->rw, 0, R_BASE, 0, 1));
	ASSERT_EQ(-ENOENT, raw_open(self->rw, REGION_READ));
}

/*
 * Only the producer revokes: another process's handle is EINVAL, also in
 * the producer's forked child (which the kernel would refuse, EPERM).
 */
static int revoke_in_child(void *hb)
{
	return pvm_handle_revoke(hb, PVM_HANDLE_SIZE);
}

TEST(region_revoke_arguments)
{
	static char buf[64] = "own";
	unsigned char hb[PVM_HANDLE_SIZE], other[PVM_HANDLE_SIZE];
	struct pvm_handle *h;
	struct producer p;
	char got[64];

	if (!pvm_handle_kernel_has_regions())
		SKIP(return, "the kernel has no regions");
	ASSERT_EQ(0, pvm_handle_export(buf, sizeof(buf), PVM_HANDLE_READ, hb));
	ASSERT_EQ(PVM_HANDLE_VERSION_REGION, hb[H_VERSION]);
	ASSERT_EQ(0, producer_start(&p, 0, NULL));
	p.export = 0;
	ASSERT_EQ(0, producer_export(&p, 0, 64, PVM_HANDLE_READ, other));
	ASSERT_EQ(-EINVAL, pvm_handle_revoke(other, sizeof(other)));
	producer_stop(&p);
	ASSERT_EQ(-EINVAL, in_child(revoke_in_child, hb));
	/* Still live */
	ASSERT_EQ(0, pvm_handle_open(hb, sizeof(hb), 0, &h));
	ASSERT_EQ(sizeof(got), pvm_handle_pread(h, got, sizeof(got), 0));
	pvm_handle_close(h);
	ASSERT_EQ(0, memcmp(got, buf, sizeof(got)));
	ASSERT_EQ(0, pvm_handle_revoke(hb, sizeof(hb)));
	ASSERT_EQ(-EKEYREVOKED, pvm_handle_revoke(hb, sizeof(hb)));
}

/*
 * No ptrace rights needed: a consumer whose process_vm_readv/writev are
 * refused by a seccomp filter still reads and writes the region (and a
 * CMA handle of the same producer shows the filter at work).
 */
struct without_cma {
	unsigned char cma[PVM_HANDLE_SIZE];
	unsigned char region[PVM_HANDLE_SIZE];
};

static int consumer_without_cma(void *p)
{
	const struct without_cma *w = p;
	uint8_t got[R_LEN], mark[16];
	struct pvm_handle *h;
	int err;

	if (forbid_cma())
		return -EUCLEAN;
	err = pvm_handle_open(w->cma, PVM_HANDLE_SIZE, 0, &h);
	pvm_handle_close(h);
	if (err != -EPERM)
		return -ENOTRECOVERABLE;
	err = pvm_handle_open(w->region, PVM_HANDLE_SIZE, 0, &h);
	if (err)
		return err;
	memset(mark, 0x77, sizeof(mark));
	if (pvm_handle_pread(h, got, R_LEN, 0) != R_LEN ||
	    check_pattern(got, R_BASE, R_LEN) ||
	    pvm_handle_pwrite(h, mark, sizeof(mark), 0) != sizeof(mark))
		err = -EIO;
	pvm_handle_close(h);
	return err;
}

TEST_F(region, without_cma)
{
	struct without_cma w;
	uint8_t mark[16];

	memcpy(w.region, self->rw, sizeof(w.region));
	self->p.export = PVM_HANDLE_EXPORT_CMA;
	ASSERT_EQ(0, producer_export(&self->p, 0, BUF_LEN, PVM_HANDLE_RDWR,
				     w.cma));
	ASSERT_EQ(0, in_child(consumer_without_cma, &w));
	memset(mark, 0x77, sizeof(mark));
	ASSERT_EQ(0, producer_compare(&self->p, R_BASE, sizeof(mark), mark));
}

/*
 * Another uid: the kernel's default, which the library keeps, is the
 * producer's effective uid only (EACCES).  A consumer of the producer's
 * uid, its sibling here, opens it.
 */
TEST(region_other_uid)
{
	struct consumer_arg a = { .uid = UID_OTHER };
	unsigned char hb[PVM_HANDLE_SIZE];
	struct producer p;
	int fds[2];

	if (!pvm_handle_kernel_has_regions())
		SKIP(return, "the kernel has no regions");
	if (geteuid())
		SKIP(return, "needs root to switch uids");
	ASSERT_EQ(0, producer_start(&p, UID_PRODUCER, NULL));
	p.export = 0;
	ASSERT_EQ(0, producer_export(&p, 0, BUF_LEN, PVM_HANDLE_RDWR, hb));
	ASSERT_EQ(0, pipe(fds));
	ASSERT_EQ(0, write_full(fds[1], hb, sizeof(hb)));
	a.fd = fds[0];
	ASSERT_EQ(-EACCES, in_child(consumer, &a));
	ASSERT_EQ(0, write_full(fds[1], hb, sizeof(hb)));
	a.uid = UID_PRODUCER;
	ASSERT_EQ(0, in_child(consumer, &a));
	close(fds[0]);
	close(fds[1]);
	producer_stop(&p);
}

/* ------------------------------------------------------------------ */
/* The producer's pid reused by another process                        */
/* ------------------------------------------------------------------ */

struct reuse {
	int open_before;
	int read_before;
	int read_zombie;
	int read_free;
	int open_free;
	int reused;		/* the impostor got the producer's pid */
	int perfect;		/* and its memory looks the same */
	int read_reused;
	int write_reused;
	int open_reused;
	int impostor_intact;
};

/*
 * Inside a new pid namespace, as its init: a producer exports and exits;
 * once reaped, its pid goes to an impostor made to look the same.  Each
 * step's result goes to @r.
 */
static void reuse_scene(unsigned int flags, struct reuse *r)
{
	unsigned char hb[PVM_HANDLE_SIZE];
	struct producer p, q;
	uint8_t got[64], put[64];
	struct pvm_handle *h;
	siginfo_t si;

	if (producer_start(&p, 0, NULL) ||
	    producer_export(&p, 0, BUF_LEN, PVM_HANDLE_RDWR, hb))
		return;
	r->open_before = pvm_handle_open(hb, sizeof(hb), flags, &h);
	if (r->open_before)
		return;
	r->read_before = pvm_handle_pread(h, got, 64, 0);
	producer_simple(&p, OP_QUIT, NULL);
	waitid(P_PID, p.pid, &si, WEXITED | WNOWAIT);
	r->read_zombie = pvm_handle_pread(h, got, 64, 0);
	waitpid(p.pid, NULL, 0);
	r->read_free = pvm_handle_pread(h, got, 64, 0);
	r->open_free = open_and_check(hb, flags, 0, 64);

	if (producer_start(&q, 0, hb))
		return;
	r->reused = q.pid == p.pid;
	/* Synchronous: the impostor has its memory once it answers */
	memset(put, 0, sizeof(put));
	r->perfect = producer_compare(&q, 0, 64, put) == -EIO;
	memset(put, 0xdd, sizeof(put));
	r->read_reused = pvm_handle_pread(h, got, 64, 0);
	r->write_reused = pvm_handle_pwrite(h, put, 64, 0);
	r->open_reused = open_and_check(hb, flags, 0, 64);
	for (size_t i = 0; i < sizeof(put); i++)
		put[i] = pattern(i);
	r->impostor_intact = producer_compare(&q, 0, 64, put) == 0;
	pvm_handle_close(h);
	producer_stop(&q);
}

/* Run reuse_scene() as init of a new pid namespace with its own /proc */
static int reuse_run(unsigned int flags, struct reuse *r)
{
	struct reuse *shared;
	int status;
	pid_t init;

	shared = mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		return -errno;
	for (size_t i = 0; i < sizeof(*shared) / sizeof(int); i++)
		((int *)shared)[i] = NOT_RUN;
	if (unshare(CLONE_NEWPID | CLONE_NEWNS))
		return -errno;
	init = fork();
	if (init < 0)
		return -errno;
	if (!init) {
		if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
		    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV, NULL))
			_exit(1);
		reuse_scene(flags, shared);
		_exit(0);
	}
	if (waitpid(init, &status, 0) != init || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return -ECHILD;
	*r = *shared;
	return 0;
}

FIXTURE(reuse) {
	struct reuse r;
};

FIXTURE_VARIANT(reuse) {
	unsigned int flags;
};

/* The library's choice: PROCESS_VM_PIDFD where the kernel has it */
FIXTURE_VARIANT_ADD(reuse, pidfd) {
	.flags = 0,
};

FIXTURE_VARIANT_ADD(reuse, pid) {
	.flags = PVM_HANDLE_OPEN_PID,
};

FIXTURE_SETUP(reuse)
{
	if (geteuid())
		SKIP(return, "needs root for a pid namespace and set_tid");
	ASSERT_EQ(0, reuse_run(variant->flags, &self->r));
}

FIXTURE_TEARDOWN(reuse)
{
}

TEST_F(reuse, producer_exits_and_pid_is_reused)
{
	struct reuse *r = &self->r;

	ASSERT_EQ(0, r->open_before);
	ASSERT_EQ(64, r->read_before);
	ASSERT_EQ(-ESRCH, r->read_zombie);
	ASSERT_EQ(-ESRCH, r->read_free);
	ASSERT_EQ(-ESRCH, r->open_free);
	ASSERT_EQ(1, r->reused);
	ASSERT_EQ(1, r->perfect);
	ASSERT_EQ(-ESTALE, r->read_reused);
	ASSERT_EQ(-ESTALE, r->write_reused);
	ASSERT_EQ(-ESTALE, r->open_reused);
	ASSERT_EQ(1, r->impostor_intact);
}

/* ------------------------------------------------------------------ */
/* Bad handles and bad arguments                                       */
/* ------------------------------------------------------------------ */

FIXTURE(bad) {
	struct producer p;
	unsigned char hb[PVM_HANDLE_SIZE];
};

FIXTURE_VARIANT(bad) {
	bool region;
};

FIXTURE_VARIANT_ADD(bad, cma) {
	.region = false,
};

FIXTURE_VARIANT_ADD(bad, region) {
	.region = true,
};

FIXTURE_SETUP(bad)
{
	if (variant->region && !pvm_handle_kernel_has_regions())
		SKIP(return, "the kernel has no regions");
	ASSERT_EQ(0, producer_start(&self->p, 0, NULL));
	if (variant->region)
		self->p.export = 0;
	ASSERT_EQ(0, producer_export(&self->p, 0, BUF_LEN, PVM_HANDLE_RDWR,
				     self->hb));
	srandom(getpid());
}

FIXTURE_TEARDOWN(bad)
{
	producer_stop(&self->p);
}

static int try_open(const unsigned char *hb, size_t size)
{
	struct pvm_handle *h = (struct pvm_handle *)1;
	int err = pvm_handle_open(hb, size, 0, &h);

	if (!err)
		pvm_handle_close(h);
	else if (h)
		return -EFAULT;		/* *hp must be NULL on failure */
	return err;
}

TEST_F(bad, truncated_or_long)
{
	unsigned char b[PVM_HANDLE_SIZE + 1] = { 0 };
	size_t n;

	memcpy(b, self->hb, PVM_HANDLE_SIZE);
	for (n = 0; n < PVM_HANDLE_SIZE; n++)
		ASSERT_EQ(-EBADMSG, try_open(b, n));
	ASSERT_EQ(-EBADMSG, try_open(b, PVM_HANDLE_SIZE + 1));
	ASSERT_EQ(0, try_open(b, PVM_HANDLE_SIZE));
}

TEST_F(bad, version)
{
	unsigned char b[PVM_HANDLE_SIZE];
	int v;

	for (v = 0; v < 256; v++) {
		if (v == PVM_HANDLE_VERSION || v == PVM_HANDLE_VERSION_REGION)
			continue;
		memcpy(b, self->hb, sizeof(b));
		b[H_VERSION] = v;
		reseal(b);
		ASSERT_EQ(-EPROTONOSUPPORT, try_open(b, sizeof(b)));
	}
}

/* Every single-bit flip is caught: by the magic, the version or the CRC */
TEST_F(bad, bit_flips)
{
	unsigned char b[PVM_HANDLE_SIZE];
	int bit;

	for (bit = 0; bit < PVM_HANDLE_SIZE * 8; bit++) {
		memcpy(b, self->hb, sizeof(b));
		b[bit / 8] ^= 1 << (bit % 8);
		ASSERT_EQ(bit / 8 == H_VERSION ? -EPROTONOSUPPORT : -EBADMSG,
			  try_open(b, sizeof(b)));
	}
}

TEST_F(bad, garbage)
{
	unsigned char b[PVM_HANDLE_SIZE];
	int i, k;

	for (i = 0; i < 20000; i++) {
		for (k = 0; k < PVM_HANDLE_SIZE; k++)
			b[k] = random();
		if (i & 1)
			memcpy(b, "PVMH\1", 5);
		ASSERT_EQ(-EBADMSG, try_open(b, sizeof(b)));
	}
}

/*
 * Well-sealed handles with one field changed, as a confused or hostile
 * producer could send: each change has one right answer.  A forge with
 * @flip set flips the bits of @value in byte @off instead.
 */
struct forge {
	const char *name;
	int off;
	int bytes;
	uint64_t value;
	int expect;
	bool flip;
};

static const struct forge forgeries[] = {
	{ "reserved", H_RESERVED, 1, 1, -EBADMSG },
	{ "access 0", H_ACCESS, 1, 0, -EBADMSG },
	{ "access 4", H_ACCESS, 1, 4, -EBADMSG },
	{ "access read", H_ACCESS, 1, PVM_HANDLE_READ, 0 },
	{ "id 0", H_ID, 1, 0, -EBADMSG },
	{ "id 4", H_ID, 1, 4, -EBADMSG },
	{ "pid 0", H_PID, 4, 0, -EBADMSG },
	{ "pid 2^31", H_PID, 4, 1u << 31, -EBADMSG },
	{ "pid 2^22+1, beyond pid_max", H_PID, 4, (1u << 22) + 1, -ESRCH },
	{ "pid 1, another process", H_PID, 4, 1, -ESTALE },
	{ "pidfs inode", H_INO, 8, 1, -ESTALE },
	{ "start time", H_START, 8, 1, -ESTALE },
	{ "id: inode only", H_ID, 1, 1, 0 },
	{ "id: start time only", H_ID, 1, 2, 0 },
	{ "length 0", H_LEN, 8, 0, -EBADMSG },
	{ "length wraps", H_LEN, 8, UINT64_MAX, -EBADMSG },
	{ "word 0", H_SLOT, 8, 0, -EBADMSG },
	{ "word unaligned", H_SLOT, 8, 0x1001, -EBADMSG },
	{ "word unmapped", H_SLOT, 8, 0x1000, -EKEYREVOKED },
	{ "word kernel", H_SLOT, 8, 0xffffffffff600000ull,
	  sizeof(void *) == 8 ? -EKEYREVOKED : -EOVERFLOW },
	{ "cookie 0", H_COOKIE, 8, 0, -EBADMSG },
	{ "cookie other", H_COOKIE, 8, 42, -EKEYREVOKED },
	{ NULL },
};

/* A region's: the kernel refuses every id and secret but the region's */
static const struct forge region_forgeries[] = {
	{ "byte 6", H_ID, 1, 1, -EBADMSG },
	{ "byte 7", H_RESERVED, 1, 1, -EBADMSG },
	{ "access 0", H_ACCESS, 1, 0, -EBADMSG },
	{ "access 4", H_ACCESS, 1, 4, -EBADMSG },
	{ "access read", H_ACCESS, 1, PVM_HANDLE_READ, 0 },
	{ "pid 0", H_PID, 4, 0, -EBADMSG },
	{ "pid 2^31", H_PID, 4, 1u << 31, -EBADMSG },
	{ "pid 1 (the kernel names the owner)", H_PID, 4, 1, 0 },
	{ "id 0", H_REGION_ID, 8, 0, -ENOENT },
	{ "id + 1", H_REGION_ID, 1, 1, -ENOENT, true },
	{ "id 2^32", H_REGION_ID, 8, 1ull << 32, -ENOENT },
	{ "secret, first bit", H_SECRET, 1, 0x01, -ENOENT, true },
	{ "secret, last bit", H_SECRET + 15, 1, 0x80, -ENOENT, true },
	{ "secret 0", H_SECRET, 8, 0, -ENOENT },
	{ "byte 40", H_REGION_END, 1, 1, -EBADMSG },
	{ "byte 63", PVM_HANDLE_SIZE - 1, 1, 0x80, -EBADMSG },
	{ NULL },
};

TEST_F(bad, forged_fields)
{
	const struct forge *f = variant->region ? region_forgeries : forgeries;
	unsigned char b[PVM_HANDLE_SIZE];

	for (; f->name; f++) {
		memcpy(b, self->hb, sizeof(b));
		if (f->flip)
			b[f->off] ^= f->value;
		else
			put_le(b + f->off, f->value, f->bytes);
		reseal(b);
		ASSERT_EQ(f->expect, try_open(b, sizeof(b)))
			TH_LOG("forged %s", f->name);
	}
}

/* The identity of kernels without pidfs: the start time alone */
TEST_F(bad, start_time_only)
{
	unsigned char b[PVM_HANDLE_SIZE];

	if (variant->region)
		SKIP(return, "a region handle has no identity fields");
	memcpy(b, self->hb, sizeof(b));
	b[H_ID] = 2;
	put_le(b + H_INO, 0, 8);
	reseal(b);
	ASSERT_EQ(0, try_open(b, sizeof(b)));
	put_le(b + H_START, get64(b + H_START) + 1, 8);
	reseal(b);
	ASSERT_EQ(-ESTALE, try_open(b, sizeof(b)));
}

/*
 * Random values in random fields, sealed: an error or a working handle.
 * A region handle's id and secret (two fields of 8 bytes here) are the
 * kernel's to refuse.
 */
TEST_F(bad, sealed_random)
{
	static const int cma_offs[] = { H_ACCESS, H_ID, H_PID, H_INO, H_START,
					H_ADDR, H_LEN, H_SLOT, H_COOKIE };
	static const int region_offs[] = { H_ACCESS, H_ID, H_PID, H_REGION_ID,
					   H_SECRET, H_SECRET + 8,
					   H_REGION_END, H_REGION_END + 8,
					   H_REGION_END + 16 };
	const int *offs = variant->region ? region_offs : cma_offs;
	unsigned char b[PVM_HANDLE_SIZE];
	struct pvm_handle *h;
	uint8_t got[64];
	int i, err, off;

	for (i = 0; i < 3000; i++) {
		memcpy(b, self->hb, sizeof(b));
		off = offs[random() % 9];
		put_le(b + off, (uint64_t)random() << 33 ^ random(),
		       off < H_PID ? 1 : off == H_PID ? 4 : 8);
		reseal(b);
		err = pvm_handle_open(b, sizeof(b), 0, &h);
		if (err) {
			ASSERT_TRUE(err == -EBADMSG || err == -ESRCH ||
				    err == -ESTALE || err == -EKEYREVOKED ||
				    err == -EPERM || err == -EOVERFLOW ||
				    (variant->region && err == -ENOENT));
			continue;
		}
		/* Still names the producer: reads work or fault */
		err = pvm_handle_pread(h, got, sizeof(got), 0);
		ASSERT_TRUE(err == sizeof(got) || err == -EFAULT ||
			    err == -EACCES || err == -ERANGE);
		pvm_handle_close(h);
	}
}

TEST(bad_arguments)
{
	unsigned char hb[PVM_HANDLE_SIZE], other[PVM_HANDLE_SIZE];
	static char buf[64];
	struct producer p;
	struct pvm_handle *h;

	ASSERT_EQ(-EINVAL, pvm_handle_export(NULL, 1, PVM_HANDLE_READ, hb));
	ASSERT_EQ(-EINVAL, pvm_handle_export(buf, 0, PVM_HANDLE_READ, hb));
	ASSERT_EQ(-EINVAL, pvm_handle_export(buf, SIZE_MAX, PVM_HANDLE_READ,
					     hb));
	ASSERT_EQ(-EINVAL, pvm_handle_export(buf, 1, 0, hb));
	ASSERT_EQ(-EINVAL, pvm_handle_export(buf, 1, 4, hb));
	ASSERT_EQ(-EINVAL, pvm_handle_export(buf, 1, PVM_HANDLE_EXPORT_CMA, hb));
	ASSERT_EQ(-EINVAL, pvm_handle_export(buf, 1, PVM_HANDLE_READ |
					     PVM_HANDLE_EXPORT_CMA << 1, hb));
	ASSERT_EQ(-EINVAL, pvm_handle_export(buf, 1, PVM_HANDLE_READ, NULL));
	ASSERT_EQ(0, pvm_handle_export(buf, 1, PVM_HANDLE_READ |
				       PVM_HANDLE_EXPORT_CMA, hb));
	ASSERT_EQ(PVM_HANDLE_VERSION, hb[H_VERSION]);
	ASSERT_EQ(-EINVAL, pvm_handle_open(NULL, sizeof(hb), 0, &h));
	ASSERT_EQ(-EINVAL, pvm_handle_open(hb, sizeof(hb), 0, NULL));
	ASSERT_EQ(-EINVAL, pvm_handle_open(hb, sizeof(hb), 2, &h));
	ASSERT_EQ(-EINVAL, pvm_handle_allow(-1));
	ASSERT_EQ(-EINVAL, pvm_handle_revoke(NULL, sizeof(hb)));
	ASSERT_EQ(-EBADMSG, pvm_handle_revoke(hb, sizeof(hb) - 1));

	/* Only a handle this process made, with a word of its table */
	ASSERT_EQ(0, producer_start(&p, 0, NULL));
	ASSERT_EQ(0, producer_export(&p, 0, 64, PVM_HANDLE_READ, other));
	ASSERT_EQ(-EINVAL, pvm_handle_revoke(other, sizeof(other)));
	producer_stop(&p);
	memcpy(other, hb, sizeof(hb));
	put_le(other + H_SLOT, (uintptr_t)buf, 8);
	put_le(other + H_COOKIE, 0x4141414141414141ull, 8);
	memset(buf, 0x41, 8);
	reseal(other);
	ASSERT_EQ(-EINVAL, pvm_handle_revoke(other, sizeof(other)));
	ASSERT_EQ(0x41, buf[0]);
	ASSERT_EQ(0, pvm_handle_revoke(hb, sizeof(hb)));
	ASSERT_EQ(-EKEYREVOKED, pvm_handle_revoke(hb, sizeof(hb)));
}

/*
 * pvm_handle_kernel_has_pidfd() on kernels faked as above: it must find
 * the flag where a read through a pidfd works, and not where only a
 * zero-length call succeeds.  Each case is a new process, probed afresh.
 */
FIXTURE(probe) {
};

FIXTURE_VARIANT(probe) {
	int kernel;
	int want;
};

FIXTURE_VARIANT_ADD(probe, has_flag) {
	.kernel = FAKE_PIDFD,
	.want = 1,
};

FIXTURE_VARIANT_ADD(probe, lax_zero_length) {
	.kernel = FAKE_LAX,
	.want = 0,
};

FIXTURE_SETUP(probe)
{
	fake_kernel = variant->kernel;
}

FIXTURE_TEARDOWN(probe)
{
	fake_kernel = REAL_KERNEL;
}

TEST_F(probe, kernel_has_pidfd)
{
	ASSERT_EQ(variant->want, pvm_handle_kernel_has_pidfd());
}

/* ------------------------------------------------------------------ */
/* The demo program: its command line, and a reader that goes away     */
/* ------------------------------------------------------------------ */

FIXTURE(demo) {
	const char *path;
	pid_t pid;		/* also its process group */
};

FIXTURE_SETUP(demo)
{
	self->path = getenv("PVM_HANDLE_DEMO") ?: PVMH_DEMO;
	self->pid = 0;
	if (access(self->path, X_OK))
		SKIP(return, "no demo at %s (make demo, or PVM_HANDLE_DEMO=)",
		     self->path);
}

FIXTURE_TEARDOWN(demo)
{
	if (self->pid > 0) {
		kill(-self->pid, SIGKILL);
		waitpid(self->pid, NULL, 0);
	}
}

/* Start the demo, @arg its argument (or none), @out and @err its output */
static pid_t demo_start(const char *path, const char *arg, int out, int err)
{
	pid_t pid = fork();

	if (pid) {
		if (pid > 0)
			setpgid(pid, pid);
		return pid;
	}
	setpgid(0, 0);
	dup2(out, 1);
	dup2(err, 2);
	execl(path, path, arg, (char *)NULL);
	_exit(127);
}

/* Read @fd to its end into @buf, a string of at most @size - 1 bytes */
static void read_all(int fd, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t n;

	while (len < size - 1) {
		n = read(fd, buf + len, size - 1 - len);
		if (n <= 0)
			break;
		len += n;
	}
	buf[len] = '\0';
}

#define DEMO_OUT	4096

/* Run the demo with @arg to its end; its wait status, output in @out, @err */
static int demo_run(const char *path, const char *arg, char *out, char *err)
{
	int o[2], e[2], status = -1;
	pid_t pid;

	if (pipe2(o, O_CLOEXEC) || pipe2(e, O_CLOEXEC))
		return -1;
	pid = demo_start(path, arg, o[1], e[1]);
	close(o[1]);
	close(e[1]);
	read_all(o[0], out, DEMO_OUT);
	read_all(e[0], err, DEMO_OUT);
	close(o[0]);
	close(e[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	return status;
}

/* --help: the usage on stdout, exit 0, and nothing run */
TEST_F(demo, help)
{
	char out[DEMO_OUT], err[DEMO_OUT];
	int status = demo_run(self->path, "--help", out, err);

	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0, strncmp(out, "Usage: pvm-handle-demo [NR_CONSUMERS]\n",
			     38));
	ASSERT_NULL(strstr(out, "producer ("));
	ASSERT_STREQ("", err);
}

/* A bad argument: exit 2, a message that quotes it, nothing run */
TEST_F(demo, bad_arguments)
{
	static const char * const bad[] = { "0", "9", "abc", "3x", "-x", "" };
	char out[DEMO_OUT], err[DEMO_OUT], quoted[16];
	size_t i;
	int status;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		status = demo_run(self->path, bad[i], out, err);
		snprintf(quoted, sizeof(quoted), "'%s'\n", bad[i]);
		ASSERT_EQ(2, WIFEXITED(status) ? WEXITSTATUS(status) : -1) {
			TH_LOG("argument '%s': wait status %#x", bad[i], status);
		}
		ASSERT_STREQ("", out);
		ASSERT_NE(NULL, strstr(err, quoted)) {
			TH_LOG("argument '%s' not quoted: %s", bad[i], err);
		}
	}
}

/*
 * pvm-handle-demo | head -1: the reader of the demo's output goes after
 * the first line, while the demo's other processes still have lines to
 * write.  To make that happen at the same point every run, the output
 * pipe is one page, filled but for ROOM bytes: the first line ("kernel
 * has PROCESS_VM_PIDFD: ...", under 64 bytes) fits, the producer's next
 * one does not, so the producer is still blocked or yet to write when the
 * reader closes, and dies of SIGPIPE.  Every process of the demo must then
 * end (alive[1], which they all inherit, reaches end of file), the demo
 * with 1.
 */
#define ROOM		64

TEST_F(demo, reader_goes_away)
{
	int out[2], alive[2], null, size, queued = 0, status, i;
	struct pollfd pfd;
	char *fill;

	ASSERT_EQ(0, pipe2(out, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(alive, O_CLOEXEC));
	ASSERT_EQ(0, fcntl(alive[1], F_SETFD, 0));
	null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	ASSERT_LE(0, null);
	size = fcntl(out[1], F_SETPIPE_SZ, 1);	/* one page */
	ASSERT_LT(ROOM, size);
	fill = calloc(1, size - ROOM);
	ASSERT_NE(NULL, fill);
	ASSERT_EQ(0, write_full(out[1], fill, size - ROOM));
	free(fill);

	self->pid = demo_start(self->path, NULL, out[1], null);
	ASSERT_LT(0, self->pid);
	close(out[1]);
	close(alive[1]);
	close(null);
	/* The first line is in: the reader goes */
	for (i = 0; i < 1000 && queued <= size - ROOM; i++) {
		ASSERT_EQ(0, ioctl(out[0], FIONREAD, &queued));
		usleep(10000);
	}
	ASSERT_LT(size - ROOM, queued);
	close(out[0]);

	pfd.fd = alive[0];
	pfd.events = POLLIN;
	i = poll(&pfd, 1, 10000);
	/* The teardown may not run after a failed assertion: kill them now */
	if (i != 1)
		kill(-self->pid, SIGKILL);
	ASSERT_EQ(1, i) {
		TH_LOG("the demo's processes still run 10 s after the reader went");
	}
	ASSERT_EQ(0, read(alive[0], &i, 1));
	close(alive[0]);
	ASSERT_EQ(self->pid, waitpid(self->pid, &status, 0));
	self->pid = 0;
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(1, WEXITSTATUS(status));
}

/* Errors the library gives its own meanings; others as strerror() */
TEST(error_strings)
{
	ASSERT_STREQ("the export was revoked (or the producer exec'd)",
		     pvm_handle_strerror(-EKEYREVOKED));
	ASSERT_STREQ(pvm_handle_strerror(-EKEYREVOKED),
		     pvm_handle_strerror(EKEYREVOKED));
	ASSERT_STREQ("the producer has exited; its pid names another process",
		     pvm_handle_strerror(-ESTALE));
	ASSERT_STREQ("not a valid pvm_handle (size, magic, CRC or a field)",
		     pvm_handle_strerror(-EBADMSG));
	ASSERT_STREQ("no such region: a forged handle, or revoked and closed",
		     pvm_handle_strerror(-ENOENT));
	ASSERT_STREQ(strerror(ENOTDIR), pvm_handle_strerror(-ENOTDIR));
	ASSERT_STREQ(strerror(0), pvm_handle_strerror(0));
	ASSERT_STREQ("unknown error", pvm_handle_strerror(INT_MIN));
}

/* A failed open leaves NULL, which close and the accessors take. */
TEST(null_handle)
{
	struct pvm_handle *h = (struct pvm_handle *)1;
	unsigned char hb[PVM_HANDLE_SIZE] = { 0 };

	ASSERT_EQ(-EBADMSG, pvm_handle_open(hb, sizeof(hb), 0, &h));
	ASSERT_NULL(h);
	ASSERT_EQ(0, pvm_handle_length(h));
	ASSERT_EQ(0, pvm_handle_access(h));
	ASSERT_EQ(0, pvm_handle_pid(h));
	ASSERT_EQ(0, pvm_handle_via(h));
	ASSERT_EQ(-EINVAL, pvm_handle_pread(h, hb, 1, 0));
	ASSERT_EQ(-EINVAL, pvm_handle_pwrite(h, hb, 1, 0));
	pvm_handle_close(h);
}

TEST_HARNESS_MAIN
