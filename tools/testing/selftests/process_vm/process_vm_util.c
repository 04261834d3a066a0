// SPDX-License-Identifier: GPL-2.0
/*
 * Shared helpers for the process_vm selftests; process_vm_util.h says
 * what they are.  Compiled into every program of the directory, the way
 * selftests/mm compiles vm_util.c.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <sys/ioctl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/io_uring.h>

#include "process_vm_util.h"

#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW _IO(0xAA, 0x00)
#endif

/* Raw wrappers: return the syscall result, errno set on -1. */
ssize_t pvm_readv(pid_t pid, const struct iovec *lvec, unsigned long liovcnt,
		  const struct iovec *rvec, unsigned long riovcnt,
		  unsigned long flags)
{
	return syscall(__NR_process_vm_readv, pid, lvec, liovcnt, rvec,
		       riovcnt, flags);
}

ssize_t pvm_writev(pid_t pid, const struct iovec *lvec, unsigned long liovcnt,
		   const struct iovec *rvec, unsigned long riovcnt,
		   unsigned long flags)
{
	return syscall(__NR_process_vm_writev, pid, lvec, liovcnt, rvec,
		       riovcnt, flags);
}

/* One call in direction @write (process_vm_writev() if true). */
ssize_t pvm_rwf(bool write, pid_t pid, const struct iovec *lvec,
		unsigned long liovcnt, const struct iovec *rvec,
		unsigned long riovcnt, unsigned long flags)
{
	return write ? pvm_writev(pid, lvec, liovcnt, rvec, riovcnt, flags) :
		       pvm_readv(pid, lvec, liovcnt, rvec, riovcnt, flags);
}

ssize_t pvm_rw(bool write, pid_t pid, const struct iovec *lvec,
	       unsigned long liovcnt, const struct iovec *rvec,
	       unsigned long riovcnt)
{
	return pvm_rwf(write, pid, lvec, liovcnt, rvec, riovcnt, 0);
}

ssize_t pvm_rw1(bool write, pid_t pid, void *local, unsigned long raddr,
		size_t len)
{
	struct iovec l = { .iov_base = local, .iov_len = len };
	struct iovec r = { .iov_base = (void *)raddr, .iov_len = len };

	return pvm_rw(write, pid, &l, 1, &r, 1);
}

/* ---- pattern ---------------------------------------------------------- */

/* Byte @off of the pattern stream @seed; not periodic in small powers of 2 */
uint8_t pvm_pat(uint32_t seed, size_t off)
{
	uint32_t x = (uint32_t)off * 0x9e3779b1u + seed * 0x85ebca6bu + 1;

	x ^= x >> 15;
	x *= 0x2c1b3c6du;
	x ^= x >> 12;
	x *= 0x297a2d39u;
	x ^= x >> 15;
	return x;
}

/* Fill @buf with the pattern stream @seed, starting at stream offset @off */
void pvm_fill_at(void *buf, size_t len, uint32_t seed, size_t off)
{
	uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pvm_pat(seed, off + i);
}

/* Index of the first byte that differs from the pattern, or -1. */
long pvm_check_at(const void *buf, size_t len, uint32_t seed, size_t off)
{
	const uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pvm_pat(seed, off + i))
			return i;
	return -1;
}

void pvm_fill(void *buf, size_t len, uint32_t seed)
{
	pvm_fill_at(buf, len, seed, 0);
}

long pvm_check(const void *buf, size_t len, uint32_t seed)
{
	return pvm_check_at(buf, len, seed, 0);
}

/* Index of the first byte != @c, or -1. */
long pvm_check_byte(const void *buf, size_t len, uint8_t c)
{
	const uint8_t *p = buf;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != c)
			return i;
	return -1;
}

/* Index of the first byte where @a and @b differ, or -1. */
long pvm_first_diff(const void *a, const void *b, size_t len)
{
	const uint8_t *p = a, *q = b;
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != q[i])
			return i;
	return -1;
}

/* ---- mappings --------------------------------------------------------- */

void *pvm_map(size_t len, int prot, int flags)
{
	void *p = mmap(NULL, len, prot, flags, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void *pvm_map_anon(size_t len)
{
	return pvm_map(len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS);
}

/* An address range of @len bytes, guaranteed unmapped at return. */
void *pvm_hole(size_t len)
{
	void *p = pvm_map(len, PROT_NONE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE);

	if (p)
		munmap(p, len);
	return p;
}

/* @len bytes at an address aligned to @align (a power of two). */
void *pvm_map_aligned(size_t len, size_t align, int prot, int flags)
{
	uint8_t *p = pvm_map(len + align, prot, flags);
	uint8_t *a;

	if (!p)
		return NULL;
	a = (uint8_t *)(((uintptr_t)p + align - 1) & ~(uintptr_t)(align - 1));
	if (a > p)
		munmap(p, a - p);
	munmap(a + len, p + align - a);
	return a;
}

int pvm_write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n < 0 ? -errno : 0;
}

/* For files that hold a number that is not negative */
long pvm_read_long(const char *path)
{
	char buf[64] = { 0 };
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n <= 0)
		return n ? n : -ENODATA;
	return strtol(buf, NULL, 10);
}

int pvm_write_long(const char *path, long val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%ld", val);
	return pvm_write_file(path, buf);
}

/* ---- pipes ------------------------------------------------------------ */

/*
 * All @len bytes written to @fd if @out, else read: 0, or -errno; -EPIPE
 * when the other end is gone (end of file, or nothing written).
 */
static int pvm_io_full(int fd, void *buf, size_t len, bool out)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = out ? write(fd, p, len) : read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (!n)
			return -EPIPE;
		p += n;
		len -= n;
	}
	return 0;
}

int pvm_read_full(int fd, void *buf, size_t len)
{
	return pvm_io_full(fd, buf, len, false);
}

int pvm_write_full(int fd, const void *buf, size_t len)
{
	return pvm_io_full(fd, (void *)buf, len, true);
}

/* ---- targets ---------------------------------------------------------- */

static void pvm_target_loop(struct pvm_target *t)
{
	struct pvm_cmd c;
	long ret;

	while (!pvm_read_full(t->cmd, &c, sizeof(c))) {
		if (!c.fn)
			break;
		ret = c.fn(t, c.a, c.b, c.c);
		if (pvm_write_full(t->resp, &ret, sizeof(ret)))
			break;
	}
	_exit(0);
}

/* Result of the command sent last, or -EPIPE if the target died */
long pvm_target_recv(struct pvm_target *t)
{
	long ret;

	if (pvm_read_full(t->resp, &ret, sizeof(ret)))
		return -EPIPE;
	return ret;
}

/*
 * Start a target created by clone3(@args) (e.g. with CLONE_PIDFD or
 * set_tid; .exit_signal should be SIGCHLD), or by fork() if @args is NULL.
 * @setup (may be NULL) runs first in the child; its result is the first
 * response, which the parent returns (the child then serves commands
 * whatever the result).  Returns -errno, errno set, when the child or
 * its pipes cannot be created; -EPIPE if it dies before it answers.
 */
long pvm_target_start_clone(struct pvm_target *t, struct clone_args *args,
			    pvm_fn setup, unsigned long a, unsigned long b,
			    unsigned long c)
{
	int cp[2], rp[2], err;
	long ret = 0;

	t->pid = -1;
	if (pipe(cp))
		return -errno;
	if (pipe(rp)) {
		err = errno;
		goto close_cp;
	}
	if (args)
		t->pid = syscall(__NR_clone3, args, sizeof(*args));
	else
		t->pid = fork();
	if (t->pid < 0) {
		err = errno;
		goto close_rp;
	}
	if (t->pid == 0) {
		close(cp[1]);
		close(rp[0]);
		t->cmd = cp[0];
		t->resp = rp[1];
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (setup)
			ret = setup(t, a, b, c);
		pvm_write_full(t->resp, &ret, sizeof(ret));
		pvm_target_loop(t);
	}
	close(cp[0]);
	close(rp[1]);
	t->cmd = cp[1];
	t->resp = rp[0];
	return pvm_target_recv(t);

close_rp:
	close(rp[0]);
	close(rp[1]);
close_cp:
	close(cp[0]);
	close(cp[1]);
	errno = err;
	return -err;
}

/* pvm_target_start_clone() with fork(). */
long pvm_target_start(struct pvm_target *t, pvm_fn setup, unsigned long a,
		      unsigned long b, unsigned long c)
{
	return pvm_target_start_clone(t, NULL, setup, a, b, c);
}

/* Start @fn in the target without waiting for it: 0, or -errno */
int pvm_target_send(struct pvm_target *t, pvm_fn fn, unsigned long a,
		    unsigned long b, unsigned long c)
{
	struct pvm_cmd cmd = { .fn = fn, .a = a, .b = b, .c = c };

	return pvm_write_full(t->cmd, &cmd, sizeof(cmd));
}

/* Run @fn in the target; returns its result, or -EPIPE if it died */
long pvm_target_call(struct pvm_target *t, pvm_fn fn, unsigned long a,
		     unsigned long b, unsigned long c)
{
	if (pvm_target_send(t, fn, a, b, c))
		return -EPIPE;
	return pvm_target_recv(t);
}

/*
 * Stop the target (if running) and reap it: its wait status, or -errno
 * (-ECHILD if no target was running).
 */
int pvm_target_stop(struct pvm_target *t)
{
	int status;

	if (t->pid <= 0)
		return -ECHILD;
	close(t->cmd);
	close(t->resp);
	if (waitpid(t->pid, &status, 0) != t->pid)
		status = -errno;
	t->pid = -1;
	return status;
}

int pvm_target_kill(struct pvm_target *t)
{
	if (t->pid > 0)
		kill(t->pid, SIGKILL);
	return pvm_target_stop(t);
}

/* Commonly used commands. */
long pvm_cmd_fill(struct pvm_target *t, unsigned long addr, unsigned long len,
		  unsigned long seed)
{
	pvm_fill((void *)addr, len, seed);
	return 0;
}

long pvm_cmd_check(struct pvm_target *t, unsigned long addr, unsigned long len,
		   unsigned long seed)
{
	return pvm_check((void *)addr, len, seed);
}

long pvm_cmd_memset(struct pvm_target *t, unsigned long addr, unsigned long len,
		    unsigned long c)
{
	memset((void *)addr, c, len);
	return 0;
}

/*
 * Always sends exactly @len bytes, so that the parent never hangs: chunks
 * that cannot be read (write() fails with EFAULT) are sent as zeroes and
 * the result is then -EFAULT.
 */
long pvm_cmd_dump(struct pvm_target *t, unsigned long addr, unsigned long len,
		  unsigned long unused)
{
	static const uint8_t zero[4096];
	uint8_t *p = (void *)addr;
	long ret = 0;

	while (len) {
		size_t n = len < sizeof(zero) ? len : sizeof(zero);
		ssize_t w = write(t->resp, p, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EFAULT) {
			if (pvm_write_full(t->resp, zero, n))
				return -EPIPE;
			ret = -EFAULT;
			w = n;
		} else if (w <= 0) {
			return -EPIPE;
		}
		p += w;
		len -= w;
	}
	return ret;
}

/*
 * Copy @len bytes at @addr in the target into @buf (through the pipe):
 * 0, -EFAULT if some could not be read (zeroes in @buf there), or -EPIPE
 * if the target died.
 */
int pvm_target_dump(struct pvm_target *t, unsigned long addr, void *buf,
		    size_t len)
{
	if (pvm_target_send(t, pvm_cmd_dump, addr, len, 0) ||
	    pvm_read_full(t->resp, buf, len))
		return -EPIPE;
	return pvm_target_recv(t);
}

long pvm_cmd_mprotect(struct pvm_target *t, unsigned long addr,
		      unsigned long len, unsigned long prot)
{
	return mprotect((void *)addr, len, prot) ? -errno : 0;
}

long pvm_cmd_munmap(struct pvm_target *t, unsigned long addr, unsigned long len,
		    unsigned long unused)
{
	return munmap((void *)addr, len) ? -errno : 0;
}

long pvm_cmd_exit(struct pvm_target *t, unsigned long code, unsigned long b,
		  unsigned long c)
{
	_exit(code);
}

/* ---- a minimal ring: one request at a time ---------------------------- */

static void *ring_map(struct pvm_ring *r, size_t len, off_t off)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_POPULATE, r->fd, off);

	return p == MAP_FAILED ? NULL : p;
}

void pvm_ring_exit(struct pvm_ring *r)
{
	if (r->sqes)
		munmap(r->sqes, r->sqes_sz);
	if (r->cq)
		munmap(r->cq, r->cq_sz);
	if (r->sq)
		munmap(r->sq, r->sq_sz);
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	r->sqes = NULL;
	r->cq = NULL;
	r->sq = NULL;
}

/* 0 or -errno */
int pvm_ring_init(struct pvm_ring *r)
{
	struct io_uring_params p;
	int err;

	memset(r, 0, sizeof(*r));
	memset(&p, 0, sizeof(p));
	r->fd = syscall(__NR_io_uring_setup, 4, &p);
	if (r->fd < 0)
		return -errno;
	r->sq_sz = p.sq_off.array + p.sq_entries * sizeof(unsigned int);
	r->cq_sz = p.cq_off.cqes + p.cq_entries * sizeof(struct io_uring_cqe);
	r->sqes_sz = p.sq_entries * sizeof(struct io_uring_sqe);
	r->sq = ring_map(r, r->sq_sz, IORING_OFF_SQ_RING);
	r->cq = ring_map(r, r->cq_sz, IORING_OFF_CQ_RING);
	r->sqes = ring_map(r, r->sqes_sz, IORING_OFF_SQES);
	if (!r->sq || !r->cq || !r->sqes) {
		err = -errno;
		pvm_ring_exit(r);
		return err;
	}
	r->sq_tail = r->sq + p.sq_off.tail;
	r->sq_mask = r->sq + p.sq_off.ring_mask;
	r->sq_array = r->sq + p.sq_off.array;
	r->cq_head = r->cq + p.cq_off.head;
	r->cq_tail = r->cq + p.cq_off.tail;
	r->cq_mask = r->cq + p.cq_off.ring_mask;
	r->cqes = r->cq + p.cq_off.cqes;
	return 0;
}

/* Put a copy of @sqe at the tail of the SQ ring */
static void ring_push(struct pvm_ring *r, const struct io_uring_sqe *sqe)
{
	unsigned int tail = *r->sq_tail, idx = tail & *r->sq_mask;

	r->sqes[idx] = *sqe;
	r->sq_array[idx] = idx;
	__atomic_store_n(r->sq_tail, tail + 1, __ATOMIC_RELEASE);
}

/* The CQE at the head of the CQ ring, consumed: its res and user_data */
static long ring_pop(struct pvm_ring *r, uint64_t *user_data)
{
	unsigned int head = *r->cq_head;
	struct io_uring_cqe *cqe = &r->cqes[head & *r->cq_mask];
	long res = cqe->res;

	if (user_data)
		*user_data = cqe->user_data;
	__atomic_store_n(r->cq_head, head + 1, __ATOMIC_RELEASE);
	return res;
}

static bool ring_cq_empty(struct pvm_ring *r)
{
	return *r->cq_head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE);
}

/* Submit @sqe, wait for its completion: cqe->res, or a pvm_ring_failure */
long pvm_ring_run(struct pvm_ring *r, const struct io_uring_sqe *sqe)
{
	ring_push(r, sqe);
	if (syscall(__NR_io_uring_enter, r->fd, 1, 1, IORING_ENTER_GETEVENTS,
		    NULL, 0) != 1)
		return PVM_RING_NOT_SUBMITTED;
	while (ring_cq_empty(r))
		if (syscall(__NR_io_uring_enter, r->fd, 0, 1,
			    IORING_ENTER_GETEVENTS, NULL, 0) < 0 &&
		    errno != EINTR)
			return PVM_RING_NO_CQE;
	return ring_pop(r, NULL);
}

/* Submit @sqe without waiting for it: 0, or PVM_RING_NOT_SUBMITTED */
long pvm_ring_submit(struct pvm_ring *r, const struct io_uring_sqe *sqe)
{
	ring_push(r, sqe);
	if (syscall(__NR_io_uring_enter, r->fd, 1, 0, 0, NULL, 0) != 1)
		return PVM_RING_NOT_SUBMITTED;
	return 0;
}

/*
 * Wait up to @timeout_ms (-1: for ever) for the next completion: its res
 * (and user_data in *@user_data if not NULL), or PVM_RING_NO_CQE.
 */
long pvm_ring_reap(struct pvm_ring *r, int timeout_ms, uint64_t *user_data)
{
	long long end = pvm_now_ms() + timeout_ms;
	struct pollfd pfd = { .fd = r->fd, .events = POLLIN };
	int left = timeout_ms;

	while (ring_cq_empty(r)) {
		if (timeout_ms >= 0) {
			left = end - pvm_now_ms();
			if (left < 0)
				return PVM_RING_NO_CQE;
		}
		if (poll(&pfd, 1, left) < 0 && errno != EINTR)
			return PVM_RING_NO_CQE;
	}
	return ring_pop(r, user_data);
}

/* IORING_REGISTER_BUFFERS of @n buffers: 0 or -errno */
int pvm_ring_register_buffers(struct pvm_ring *r, const struct iovec *iov,
			      unsigned int n)
{
	return syscall(__NR_io_uring_register, r->fd, IORING_REGISTER_BUFFERS,
		       iov, n) ? -errno : 0;
}

/* ---- file descriptors over a socket ----------------------------------- */

int pvm_send_fd(int sock, int fd)
{
	char byte = 0, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = cbuf,
		.msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;

	memset(cbuf, 0, sizeof(cbuf));
	cm = CMSG_FIRSTHDR(&msg);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	return sendmsg(sock, &msg, MSG_NOSIGNAL) == 1 ? 0 : -errno;
}

int pvm_recv_fd(int sock)
{
	char byte, cbuf[CMSG_SPACE(sizeof(int))];
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = {
		.msg_iov = &iov,
		.msg_iovlen = 1,
		.msg_control = cbuf,
		.msg_controllen = sizeof(cbuf),
	};
	struct cmsghdr *cm;
	ssize_t n;
	int fd;

	n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
	if (n < 0)
		return -errno;
	cm = CMSG_FIRSTHDR(&msg);
	if (!n || !cm || cm->cmsg_level != SOL_SOCKET ||
	    cm->cmsg_type != SCM_RIGHTS ||
	    cm->cmsg_len != CMSG_LEN(sizeof(int)))
		return -EPIPE;
	memcpy(&fd, CMSG_DATA(cm), sizeof(int));
	return fd;
}

/*
 * Userspace model of the copy: move min(sum(dst), sum(src), max) bytes from
 * the @src iovec stream to the @dst stream; returns the number of bytes.
 */
size_t pvm_iov_model(const struct iovec *dst, int nd, const struct iovec *src,
		     int ns, size_t max)
{
	size_t di = 0, doff = 0, si = 0, soff = 0, done = 0;

	while (done < max && di < (size_t)nd && si < (size_t)ns) {
		size_t n = dst[di].iov_len - doff;

		if (src[si].iov_len - soff < n)
			n = src[si].iov_len - soff;
		if (max - done < n)
			n = max - done;
		memcpy((uint8_t *)dst[di].iov_base + doff,
		       (uint8_t *)src[si].iov_base + soff, n);
		doff += n;
		soff += n;
		done += n;
		if (doff == dst[di].iov_len) {
			di++;
			doff = 0;
		}
		if (soff == src[si].iov_len) {
			si++;
			soff = 0;
		}
	}
	return done;
}

/* Copy of @iov with every base moved from @from to @to (a shadow buffer). */
void pvm_iov_rebase(struct iovec *out, const struct iovec *iov, int n,
		    const void *from, void *to)
{
	int i;

	for (i = 0; i < n; i++) {
		out[i].iov_base = (uint8_t *)to +
			((uint8_t *)iov[i].iov_base - (uint8_t *)from);
		out[i].iov_len = iov[i].iov_len;
	}
}

size_t pvm_iov_sum(const struct iovec *iov, int n)
{
	size_t sum = 0;
	int i;

	for (i = 0; i < n; i++)
		sum += iov[i].iov_len;
	return sum;
}

/* ---- iovec shapes ----------------------------------------------------- */

/* @lens laid out in @iov from byte @start of @base, @gap bytes apart */
static int pvm_shape_side(struct iovec *iov, uint8_t *base, size_t start,
			  size_t gap, const size_t *lens)
{
	size_t pos = start;
	int n;

	for (n = 0; n < PVM_SHAPE_MAX && lens[n] != PVM_SHAPE_END; n++) {
		iov[n] = (struct iovec){ base + pos, lens[n] };
		pos += lens[n] + gap;
	}
	return n;
}

/* Shape @s laid out on @local and @remote, into @io */
void pvm_shape_layout(struct pvm_shape_iov *io, const struct pvm_shape *s,
		      void *local, void *remote)
{
	size_t sl, sr;

	io->nl = pvm_shape_side(io->l, local, s->lstart, s->lgap, s->l);
	io->nr = pvm_shape_side(io->r, remote, s->rstart, s->rgap, s->r);
	sl = pvm_iov_sum(io->l, io->nl);
	sr = pvm_iov_sum(io->r, io->nr);
	io->count = sl < sr ? sl : sr;
}

/* Anonymous mmap() in the target: the address or -errno (pvm_is_err()) */
long pvm_cmd_mmap(struct pvm_target *t, unsigned long len, unsigned long prot,
		  unsigned long flags)
{
	void *p = mmap(NULL, len, prot, flags | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? -errno : (long)p;
}

long pvm_cmd_madvise(struct pvm_target *t, unsigned long addr,
		     unsigned long len, unsigned long advice)
{
	return madvise((void *)addr, len, advice) ? -errno : 0;
}

/* mremap() @len bytes at @from to @to, replacing what was there: 0, -errno */
long pvm_cmd_move(struct pvm_target *t, unsigned long from,
		  unsigned long len, unsigned long to)
{
	void *m = mremap((void *)from, len, len, MREMAP_MAYMOVE | MREMAP_FIXED,
			 (void *)to);

	return m == MAP_FAILED ? -errno : 0;
}

/* Wait until @pid is a zombie (exited, not reaped): 0, or -errno */
int pvm_wait_zombie(pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, pid, &si, WEXITED | WNOWAIT))
		return -errno;
	return si.si_pid == pid ? 0 : -ECHILD;
}

long long pvm_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

long pvm_yama_scope(void)
{
	return pvm_read_long(PVM_YAMA_SCOPE);
}

/* ---- system parameters ------------------------------------------------ */

/* As read_pmd_pagesize() in selftests/mm: the size a THP maps. */
size_t pvm_thp_size(void)
{
	long size = pvm_read_long("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size");

	return size > 0 ? size : 0;
}

/* As default_huge_page_size() in selftests/mm: "Hugepagesize" in meminfo */
size_t pvm_hugetlb_size(void)
{
	unsigned long kb = 0;
	char line[128];
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Hugepagesize: %lu kB", &kb) == 1)
			break;
	fclose(f);
	return kb << 10;
}

/*
 * Page pins held system-wide (nr_foll_pin_acquired - nr_foll_pin_released)
 * in *@held; false when the counters are missing or cannot be folded.
 * The counters live per CPU until folded: without the fold a few leaked
 * pins hide below the per-CPU thresholds.  Folding needs root.
 */
bool pvm_pins_held(long *held)
{
	long acquired = -1, released = -1, v;
	char name[64];
	FILE *f;

	if (pvm_write_file("/proc/sys/vm/stat_refresh", "1"))
		return false;
	f = fopen("/proc/vmstat", "r");
	if (!f)
		return false;
	while (fscanf(f, "%63s %ld", name, &v) == 2) {
		if (!strcmp(name, "nr_foll_pin_acquired"))
			acquired = v;
		else if (!strcmp(name, "nr_foll_pin_released"))
			released = v;
	}
	fclose(f);
	if (acquired < 0 || released < 0)
		return false;
	*held = acquired - released;
	return true;
}

/*
 * True when @err is the errno of a system call this kernel does not have
 * (or has compiled out, as memfd_secret() without secretmem).  That is
 * by definition the errno of an invalid system call number, so ask the
 * kernel for it: checkpatch warns on every use of the errno's name, which
 * is right for kernel code and a false positive here, and the series must
 * pass checkpatch without warnings.  errno is left as it was.
 */
bool pvm_syscall_missing(int err)
{
	static int no_syscall_err;
	int saved = errno;

	if (!no_syscall_err) {
		syscall(-1L);
		no_syscall_err = errno;
		errno = saved;
	}
	return err == no_syscall_err;
}

/* ---- userfaultfd ------------------------------------------------------ */

/*
 * A new userfaultfd with open flags @flags.  The system call refuses kernel
 * faults to unprivileged callers when vm.unprivileged_userfaultfd is 0;
 * /dev/userfaultfd does not, if its permissions let us open it.
 */
static int uffd_open(int flags)
{
	int fd = syscall(__NR_userfaultfd, flags);
	int dev;

	if (fd >= 0)
		return fd;
	dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -1;
	fd = ioctl(dev, USERFAULTFD_IOC_NEW, flags);
	close(dev);
	return fd;
}

/*
 * A userfaultfd (open flags @flags, e.g. O_CLOEXEC | O_NONBLOCK) that
 * reports missing-page faults on [@addr, @addr + @len) with API @features.
 * Kernel faults are included (no UFFD_USER_MODE_ONLY): the copies of
 * process_vm_readv() fault from the kernel.  The fd, or -errno.
 */
int pvm_uffd_register(void *addr, size_t len, uint64_t features, int flags)
{
	struct uffdio_api api = { .api = UFFD_API, .features = features };
	struct uffdio_register reg = {
		.range = { .start = (unsigned long)addr, .len = len },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	int uffd = uffd_open(flags), err;

	if (uffd < 0)
		return -errno;
	if (ioctl(uffd, UFFDIO_API, &api) ||
	    ioctl(uffd, UFFDIO_REGISTER, &reg)) {
		err = errno;
		close(uffd);
		return -err;
	}
	return uffd;
}

/*
 * Wait up to @timeout_ms (-1: for ever) for the next page fault on @uffd
 * and read it into @msg.  0; -ETIMEDOUT; -EAGAIN when something else woke
 * us (another reader took the message, or an event that is no page fault):
 * call again; or -errno.
 */
int pvm_uffd_next_fault(int uffd, int timeout_ms, struct uffd_msg *msg)
{
	struct pollfd pfd = { .fd = uffd, .events = POLLIN };
	ssize_t n;
	int ret;

	ret = poll(&pfd, 1, timeout_ms);
	if (ret < 0)
		return errno == EINTR ? -EAGAIN : -errno;
	if (!ret)
		return -ETIMEDOUT;
	n = read(uffd, msg, sizeof(*msg));
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? -EAGAIN : -errno;
	if (n != sizeof(*msg))
		return -EIO;
	return msg->event == UFFD_EVENT_PAGEFAULT ? 0 : -EAGAIN;
}

/* Resolve the missing page at @addr with @len bytes of @page: 0 or -errno */
int pvm_uffd_copy(int uffd, unsigned long addr, const void *page, size_t len)
{
	struct uffdio_copy copy = {
		.dst = addr,
		.src = (unsigned long)page,
		.len = len,
	};

	return ioctl(uffd, UFFDIO_COPY, &copy) ? -errno : 0;
}

/* ---- a FUSE server that never answers reads ---------------------------- */

#define PVM_FUSE_ROOT	1	/* FUSE_ROOT_ID */
#define PVM_FUSE_FILE	2
#define PVM_FUSE_BUF	(1 << 20)	/* more than max_write + a header */

static void pvm_fuse_attr(struct fuse_attr *a, uint64_t ino, size_t size)
{
	memset(a, 0, sizeof(*a));
	a->ino = ino;
	a->mode = ino == PVM_FUSE_ROOT ? S_IFDIR | 0755 : S_IFREG | 0644;
	a->nlink = 1;
	a->size = ino == PVM_FUSE_ROOT ? 0 : size;
	a->blocks = a->size / 512;
	a->blksize = 4096;
}

static void pvm_fuse_reply(int fd, uint64_t unique, int error,
			   const void *arg, size_t len)
{
	struct {
		struct fuse_out_header h;
		char arg[256];
	} out = {
		.h = { sizeof(out.h) + len, error, unique },
	};

	if (len)
		memcpy(out.arg, arg, len);
	if (write(fd, &out, out.h.len) < 0 && errno != ENOENT)
		_exit(1);
}

/* Answer the request @in for a file of @size bytes */
static void pvm_fuse_serve(int fd, int note, const struct fuse_in_header *in,
			   size_t size)
{
	const struct fuse_init_in *init = (const void *)(in + 1);
	const char *name = (const char *)(in + 1);
	struct fuse_init_out io = {
		.major = FUSE_KERNEL_VERSION,
		.minor = FUSE_KERNEL_MINOR_VERSION,
		.flags = FUSE_ASYNC_READ,
		.max_write = 4096,
		.time_gran = 1,
	};
	struct fuse_entry_out e = {
		.nodeid = PVM_FUSE_FILE,
		.entry_valid = 3600,
		.attr_valid = 3600,
	};
	struct fuse_attr_out ao = { .attr_valid = 3600 };
	struct fuse_open_out oo = { .fh = 1 };
	uint8_t op = in->opcode;

	switch (in->opcode) {
	case FUSE_INIT:
		io.max_readahead = init->max_readahead;
		pvm_fuse_reply(fd, in->unique, 0, &io, sizeof(io));
		break;
	case FUSE_LOOKUP:
		if (strcmp(name, "f")) {
			pvm_fuse_reply(fd, in->unique, -ENOENT, NULL, 0);
			break;
		}
		pvm_fuse_attr(&e.attr, PVM_FUSE_FILE, size);
		pvm_fuse_reply(fd, in->unique, 0, &e, sizeof(e));
		break;
	case FUSE_GETATTR:
		pvm_fuse_attr(&ao.attr, in->nodeid, size);
		pvm_fuse_reply(fd, in->unique, 0, &ao, sizeof(ao));
		break;
	case FUSE_OPEN:
		pvm_fuse_reply(fd, in->unique, 0, &oo, sizeof(oo));
		break;
	case FUSE_READ:
	case FUSE_INTERRUPT:
		/* Never answered: the reader waits until the server dies */
		if (write(note, &op, 1) != 1)
			_exit(1);
		break;
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
		break;
	default:
		/* FLUSH, RELEASE and the like: done, nothing to say */
		pvm_fuse_reply(fd, in->unique, 0, NULL, 0);
	}
}

static void pvm_fuse_server(int fd, int note, size_t size)
{
	void *buf = malloc(PVM_FUSE_BUF);
	ssize_t n;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (!buf)
		_exit(1);
	for (;;) {
		n = read(fd, buf, PVM_FUSE_BUF);
		if (n < 0 && (errno == EINTR || errno == ENOENT))
			continue;
		if (n < (ssize_t)sizeof(struct fuse_in_header))
			_exit(n < 0 && errno == ENODEV ? 0 : 1);
		pvm_fuse_serve(fd, note, buf, size);
	}
}

int pvm_fuse_start(struct pvm_fuse *f, size_t size)
{
	int fd, p[2], err;
	char opts[96];

	f->server = -1;
	f->note = -1;
	if (geteuid())
		return -EPERM;
	fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ENODEV : -errno;
	/* The mount goes away with the namespace, whatever happens */
	err = 0;
	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		goto fail_fd;
	snprintf(f->dir, sizeof(f->dir), "/tmp/pvm-fuse.XXXXXX");
	if (!mkdtemp(f->dir))
		goto fail_fd;
	snprintf(f->path, sizeof(f->path), "%s/f", f->dir);
	snprintf(opts, sizeof(opts),
		 "fd=%d,rootmode=40000,user_id=0,group_id=0", fd);
	if (mount("pvm", f->dir, "fuse", MS_NOSUID | MS_NODEV, opts))
		goto fail_dir;
	if (pipe2(p, O_CLOEXEC))
		goto fail_mount;
	f->server = fork();
	if (f->server < 0)
		goto fail_pipe;
	if (!f->server) {
		close(p[0]);
		pvm_fuse_server(fd, p[1], size);
	}
	/* The server holds the only device fd: its death aborts the mount */
	close(fd);
	close(p[1]);
	f->note = p[0];
	return 0;

fail_pipe:
	err = -errno;
	close(p[0]);
	close(p[1]);
fail_mount:
	err = err ?: -errno;
	umount2(f->dir, MNT_DETACH);
fail_dir:
	err = err ?: -errno;
	rmdir(f->dir);
fail_fd:
	err = err ?: -errno;
	close(fd);
	return err;
}

/* The server's next note: FUSE_READ or FUSE_INTERRUPT; or -errno */
int pvm_fuse_next(struct pvm_fuse *f, int timeout_ms)
{
	struct pollfd pfd = { .fd = f->note, .events = POLLIN };
	uint8_t op;
	int ret;

	ret = poll(&pfd, 1, timeout_ms);
	if (ret <= 0)
		return ret ? -errno : -ETIMEDOUT;
	return read(f->note, &op, 1) == 1 ? op : -EIO;
}

void pvm_fuse_stop(struct pvm_fuse *f)
{
	if (f->server <= 0)
		return;
	kill(f->server, SIGKILL);
	waitpid(f->server, NULL, 0);
	f->server = -1;
	close(f->note);
	umount2(f->dir, MNT_DETACH);
	rmdir(f->dir);
}
