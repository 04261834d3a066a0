/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers for the process_vm_readv/process_vm_writev selftests
 * (process_vm_util.c): syscall wrappers, pattern fill/verify, mapping
 * helpers, fork()ed target processes driven over a pipe, and the
 * userfaultfd set-up the tests of faulting targets share.
 *
 * The programs define _GNU_SOURCE themselves, before any include.
 */
#ifndef __PROCESS_VM_UTIL_H
#define __PROCESS_VM_UTIL_H

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <sys/wait.h>
#include <linux/fuse.h>
#include <linux/sched.h>
#include <linux/userfaultfd.h>

#ifndef IOV_MAX
#define IOV_MAX 1024
#endif

#define PVM_PAGE	((size_t)sysconf(_SC_PAGESIZE))
/* MAX_RW_COUNT as the kernel defines it: INT_MAX & PAGE_MASK */
#define PVM_MAX_RW	((size_t)(INT_MAX & ~(PVM_PAGE - 1)))
#define PVM_IS_64BIT	(sizeof(long) == 8)

/*
 * Raw wrappers: return the syscall result, errno set on -1.  pvm_rwf() is
 * process_vm_writev() if @write, else process_vm_readv(); pvm_rw() is
 * pvm_rwf() with no flags; pvm_rw1() moves @len bytes between @local and
 * @raddr, one iovec on each side.
 */
ssize_t pvm_readv(pid_t pid, const struct iovec *lvec, unsigned long liovcnt,
		  const struct iovec *rvec, unsigned long riovcnt,
		  unsigned long flags);
ssize_t pvm_writev(pid_t pid, const struct iovec *lvec, unsigned long liovcnt,
		   const struct iovec *rvec, unsigned long riovcnt,
		   unsigned long flags);
ssize_t pvm_rwf(bool write, pid_t pid, const struct iovec *lvec,
		unsigned long liovcnt, const struct iovec *rvec,
		unsigned long riovcnt, unsigned long flags);
ssize_t pvm_rw(bool write, pid_t pid, const struct iovec *lvec,
	       unsigned long liovcnt, const struct iovec *rvec,
	       unsigned long riovcnt);
ssize_t pvm_rw1(bool write, pid_t pid, void *local, unsigned long raddr,
		size_t len);

/*
 * True when @ret, an address or -errno from a target's command, is an
 * errno: no mapping ends in the top page, in a 32-bit process either.
 */
static inline bool pvm_is_err(long ret)
{
	return (unsigned long)ret >= (unsigned long)-4095;
}

/* Result of a call as "count or -errno", handy for ASSERT_EQ(). */
static inline long pvm_res(ssize_t ret)
{
	return ret < 0 ? -errno : (long)ret;
}

/*
 * The pattern: byte @off of stream @seed.  The checks return the index of
 * the first byte that differs (from the pattern, from @c, from @b), or -1
 * when all match, so that a failed ASSERT_EQ(-1, ...) prints where the
 * data went wrong.
 */
uint8_t pvm_pat(uint32_t seed, size_t off);
void pvm_fill_at(void *buf, size_t len, uint32_t seed, size_t off);
long pvm_check_at(const void *buf, size_t len, uint32_t seed, size_t off);
void pvm_fill(void *buf, size_t len, uint32_t seed);
long pvm_check(const void *buf, size_t len, uint32_t seed);
long pvm_check_byte(const void *buf, size_t len, uint8_t c);
long pvm_first_diff(const void *a, const void *b, size_t len);

/* Mappings: NULL on failure, errno set. */
void *pvm_map(size_t len, int prot, int flags);
void *pvm_map_anon(size_t len);
void *pvm_hole(size_t len);
void *pvm_map_aligned(size_t len, size_t align, int prot, int flags);

/* The THP size, 0 without THP; the default hugetlb page size, or 0. */
size_t pvm_thp_size(void);
size_t pvm_hugetlb_size(void);

/* Small files of /proc and /sys: 0 or -errno; the number (>= 0) or -errno */
int pvm_write_file(const char *path, const char *val);
long pvm_read_long(const char *path);
int pvm_write_long(const char *path, long val);

/* All @len bytes: 0, or -errno (-EPIPE at end of file) */
int pvm_read_full(int fd, void *buf, size_t len);
int pvm_write_full(int fd, const void *buf, size_t len);

/*
 * A target is a fork()ed child.  As fork() duplicates the address space,
 * function pointers and addresses of the parent are valid in the child.
 * The parent drives the child with commands: a function run in the child
 * with three arguments, whose long result is sent back.  Commands that
 * need to stream data (pvm_cmd_dump) write it to the response pipe before
 * the result.
 */
struct pvm_target;
typedef long (*pvm_fn)(struct pvm_target *t, unsigned long a,
		       unsigned long b, unsigned long c);

struct pvm_cmd {
	pvm_fn fn;
	unsigned long a, b, c;
};

struct pvm_target {
	pid_t pid;
	int cmd;	/* parent -> child */
	int resp;	/* child -> parent */
};

/*
 * pvm_target_call(), pvm_target_recv() and the start functions return the
 * command's (the setup's) result, or -EPIPE when the target died before
 * it answered; the start functions return -errno, errno set, when the
 * target cannot be created.  Commands and setups return what they found
 * (a count, an index, an address) or -errno, never -EPIPE; pvm_is_err()
 * tells an address from an errno.
 */
long pvm_target_start_clone(struct pvm_target *t, struct clone_args *args,
			    pvm_fn setup, unsigned long a, unsigned long b,
			    unsigned long c);
long pvm_target_start(struct pvm_target *t, pvm_fn setup, unsigned long a,
		      unsigned long b, unsigned long c);
int pvm_target_send(struct pvm_target *t, pvm_fn fn, unsigned long a,
		    unsigned long b, unsigned long c);
long pvm_target_recv(struct pvm_target *t);
long pvm_target_call(struct pvm_target *t, pvm_fn fn, unsigned long a,
		     unsigned long b, unsigned long c);
int pvm_target_stop(struct pvm_target *t);
int pvm_target_kill(struct pvm_target *t);
int pvm_target_dump(struct pvm_target *t, unsigned long addr, void *buf,
		    size_t len);

/* Commonly used commands. */
long pvm_cmd_fill(struct pvm_target *t, unsigned long addr,
		  unsigned long len, unsigned long seed);
long pvm_cmd_check(struct pvm_target *t, unsigned long addr,
		   unsigned long len, unsigned long seed);
long pvm_cmd_memset(struct pvm_target *t, unsigned long addr,
		    unsigned long len, unsigned long c);
long pvm_cmd_dump(struct pvm_target *t, unsigned long addr,
		  unsigned long len, unsigned long unused);
long pvm_cmd_mprotect(struct pvm_target *t, unsigned long addr,
		      unsigned long len, unsigned long prot);
long pvm_cmd_munmap(struct pvm_target *t, unsigned long addr,
		    unsigned long len, unsigned long unused);
long pvm_cmd_exit(struct pvm_target *t, unsigned long code,
		  unsigned long b, unsigned long c);
long pvm_cmd_mmap(struct pvm_target *t, unsigned long len,
		  unsigned long prot, unsigned long flags);
long pvm_cmd_madvise(struct pvm_target *t, unsigned long addr,
		     unsigned long len, unsigned long advice);
long pvm_cmd_move(struct pvm_target *t, unsigned long from,
		  unsigned long len, unsigned long to);

/*
 * What the io_uring helpers of the tests return when the ring failed, not
 * the request, so that there is no CQE result to return.  A CQE's res is
 * a byte count or -errno (-4095 at the least): these values cannot be
 * taken for one, whatever a test expects.  They are no errnos on purpose:
 * a failing io_uring_enter() gives errnos that requests give too (EBADF,
 * EINVAL), and an expected -EINVAL would then pass without a request.
 */
enum pvm_ring_failure {
	PVM_RING_NO_SQE = -1000001,		/* the SQ ring was full */
	PVM_RING_NOT_SUBMITTED = -1000002,	/* io_uring_enter() refused */
	PVM_RING_NO_CQE = -1000003,		/* no completion in time */
};

/*
 * A minimal io_uring without liburing, one request at a time, for the
 * programs that also build as 32-bit ones or need no more: set up with 4
 * entries by pvm_ring_init() (0 or -errno), torn down by pvm_ring_exit()
 * (also after a failed init).  pvm_ring_run() submits a copy of @sqe and
 * waits for its completion: cqe->res, or a pvm_ring_failure.  The types
 * of <linux/io_uring.h> are only named here, so that programs that use
 * liburing's copy of that header can include this one.
 */
struct io_uring_sqe;
struct io_uring_cqe;

struct pvm_ring {
	int fd;
	void *sq, *cq;
	size_t sq_sz, cq_sz, sqes_sz;
	struct io_uring_sqe *sqes;
	unsigned int *sq_tail, *sq_mask, *sq_array;
	unsigned int *cq_head, *cq_tail, *cq_mask;
	struct io_uring_cqe *cqes;
};

int pvm_ring_init(struct pvm_ring *r);
void pvm_ring_exit(struct pvm_ring *r);
long pvm_ring_run(struct pvm_ring *r, const struct io_uring_sqe *sqe);

/*
 * For more than one request in flight: pvm_ring_submit() submits a copy of
 * @sqe (0 or PVM_RING_NOT_SUBMITTED), pvm_ring_reap() waits up to
 * @timeout_ms (-1: for ever) for the next completion and returns its res
 * (its user_data in *@user_data), or PVM_RING_NO_CQE.
 */
long pvm_ring_submit(struct pvm_ring *r, const struct io_uring_sqe *sqe);
long pvm_ring_reap(struct pvm_ring *r, int timeout_ms, uint64_t *user_data);
/* IORING_REGISTER_BUFFERS: 0 or -errno */
int pvm_ring_register_buffers(struct pvm_ring *r, const struct iovec *iov,
			      unsigned int n);

/*
 * File descriptors over an AF_UNIX socket (SCM_RIGHTS), one per message:
 * pvm_send_fd() returns 0 or -errno; pvm_recv_fd() the new fd (opened
 * O_CLOEXEC), or -errno (-EPIPE when the peer closed without sending).
 */
int pvm_send_fd(int sock, int fd);
int pvm_recv_fd(int sock);

/*
 * An iovec shape, a row of a test's table: the lengths of the local and
 * of the remote entries, each list ended by PVM_SHAPE_END, laid out back
 * to back from byte @lstart (@rstart) of a buffer with @lgap (@rgap)
 * bytes between entries.  pvm_shape_layout() makes the iovecs.
 */
#define PVM_SHAPE_MAX	11	/* entries on either side */
#define PVM_SHAPE_END	((size_t)-1)

struct pvm_shape {
	const char *name;
	size_t lstart, lgap, rstart, rgap;
	size_t l[PVM_SHAPE_MAX + 1], r[PVM_SHAPE_MAX + 1];
};

/* A shape laid out on a local and a remote buffer */
struct pvm_shape_iov {
	struct iovec l[PVM_SHAPE_MAX], r[PVM_SHAPE_MAX];
	int nl, nr;
	size_t count;	/* what a copy moves: the smaller of the two totals */
};

void pvm_shape_layout(struct pvm_shape_iov *io, const struct pvm_shape *s,
		      void *local, void *remote);

/* Userspace model of the copy and iovec arithmetic. */
size_t pvm_iov_model(const struct iovec *dst, int nd,
		     const struct iovec *src, int ns, size_t max);
void pvm_iov_rebase(struct iovec *out, const struct iovec *iov, int n,
		    const void *from, void *to);
size_t pvm_iov_sum(const struct iovec *iov, int n);

int pvm_wait_zombie(pid_t pid);
long long pvm_now_ms(void);

/* Yama ptrace_scope, or -errno (-ENOENT when Yama is absent) */
#define PVM_YAMA_SCOPE "/proc/sys/kernel/yama/ptrace_scope"
long pvm_yama_scope(void);

bool pvm_pins_held(long *held);
bool pvm_syscall_missing(int err);

static inline int sys_memfd_secret(unsigned int flags)
{
#ifdef __NR_memfd_secret
	return syscall(__NR_memfd_secret, flags);
#else
	/* no number in these headers: fail as a missing system call does */
	return syscall(-1L);
#endif
}

/* userfaultfd */
int pvm_uffd_register(void *addr, size_t len, uint64_t features, int flags);
int pvm_uffd_next_fault(int uffd, int timeout_ms, struct uffd_msg *msg);
int pvm_uffd_copy(int uffd, unsigned long addr, const void *page,
		  size_t len);

/*
 * A FUSE file system of one file, "f" of @size bytes, served by a fork()ed
 * server that answers everything but FUSE_READ: a read of the file waits
 * until the server is gone.  The server writes the opcode of each READ
 * and INTERRUPT it gets to @note.  pvm_fuse_start() returns 0, or -errno
 * (-EPERM: not root, -ENODEV: no FUSE) with nothing left behind; it
 * moves the caller into a mount namespace of its own.  pvm_fuse_stop()
 * kills the server, which aborts the connection and fails the reads.
 */
struct pvm_fuse {
	pid_t server;
	int note;
	char dir[32];
	char path[40];
};

int pvm_fuse_start(struct pvm_fuse *f, size_t size);
int pvm_fuse_next(struct pvm_fuse *f, int timeout_ms);
void pvm_fuse_stop(struct pvm_fuse *f);

/*
 * Region fds: this tree's uapi header where the build has it, and the
 * series' syscall numbers (not assigned upstream; x86_64, i386, arm64).
 */
#ifdef __has_include
#if __has_include("linux/process_vm.h")
#include <linux/process_vm.h>
#endif
#endif
#ifndef __NR_process_vm_export
#define __NR_process_vm_export	472
#endif
#ifndef __NR_process_vm_open
#define __NR_process_vm_open	473
#endif

#endif /* __PROCESS_VM_UTIL_H */
