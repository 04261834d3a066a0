/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pvm_target.h - target processes for the io_uring process_vm benchmark and
 * demo.  A target is a forked child that maps a region whose contents are
 * a known function of the address (pvm_pattern_*()), so that a reader can
 * check every byte it copies out.  The region is either filled and resident,
 * or registered with userfaultfd: then a thread of the target answers each
 * page fault, also those a process_vm_readv() of the reader causes, after
 * a fixed delay.  The target lives until pvm_target_stop() or until its
 * parent dies.
 */
#ifndef PVM_TARGET_H
#define PVM_TARGET_H

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdalign.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/userfaultfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#define PVM_PAGE	4096UL

struct pvm_target {
	pid_t pid;
	int pidfd;
	uintptr_t addr;		/* the region, in the target */
	size_t len;
	uint64_t seed;		/* of its pattern */
	unsigned int delay_ms;	/* per page fault; 0: resident region */
	int uffd;		/* in the target only */
};

/* The 64-bit word at (8-aligned) address @addr of a region seeded @seed. */
static inline uint64_t pvm_pattern_word(uint64_t seed, uintptr_t addr)
{
	uint64_t z = seed + addr * 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Fill @len bytes at @buf with what the region holds at @addr. */
static inline void pvm_pattern_fill(void *buf, uintptr_t addr, size_t len,
				    uint64_t seed)
{
	uint64_t *p = buf;
	size_t i;

	for (i = 0; i < len / 8; i++)
		p[i] = pvm_pattern_word(seed, addr + 8 * i);
}

/*
 * Compare @len bytes at @buf with the region's contents at @addr (@addr and
 * @len multiples of 8).  Return the offset of the first differing word, or
 * @len if all match.
 */
static inline size_t pvm_pattern_check(const void *buf, uintptr_t addr,
				       size_t len, uint64_t seed)
{
	const uint64_t *p = buf;
	size_t i;

	for (i = 0; i < len / 8; i++)
		if (p[i] != pvm_pattern_word(seed, addr + 8 * i))
			return 8 * i;
	return len;
}

static inline int pvm_pidfd_open(pid_t pid)
{
	return syscall(SYS_pidfd_open, pid, 0);
}

/* 0 if this process may create a userfaultfd for kernel faults, or -errno. */
static inline int pvm_uffd_available(void)
{
	int fd = syscall(SYS_userfaultfd, O_CLOEXEC);

	if (fd < 0)
		return -errno;
	close(fd);
	return 0;
}

static inline void pvm_sleep_ms(unsigned int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Target thread: answer each fault after the delay, with the pattern. */
static inline void *pvm_target_uffd_thread(void *arg)
{
	static alignas(PVM_PAGE) char page[PVM_PAGE];
	struct pvm_target *t = arg;
	struct uffd_msg msg;
	struct uffdio_copy copy;
	struct uffdio_range wake;

	while (read(t->uffd, &msg, sizeof(msg)) == sizeof(msg)) {
		if (msg.event != UFFD_EVENT_PAGEFAULT)
			continue;
		copy.dst = msg.arg.pagefault.address & ~(PVM_PAGE - 1);
		copy.src = (uintptr_t)page;
		copy.len = PVM_PAGE;
		copy.mode = 0;
		copy.copy = 0;
		pvm_sleep_ms(t->delay_ms);
		pvm_pattern_fill(page, copy.dst, PVM_PAGE, t->seed);
		if (!ioctl(t->uffd, UFFDIO_COPY, &copy) || errno != EEXIST)
			continue;
		/* Filled already (a fault raced with the copy): just wake. */
		wake.start = copy.dst;
		wake.len = PVM_PAGE;
		ioctl(t->uffd, UFFDIO_WAKE, &wake);
	}
	return NULL;
}

/* In the target: set up the region; return 0 or -errno. */
static inline int pvm_target_setup(struct pvm_target *t)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	pthread_t thread;
	void *p;

	p = mmap(NULL, t->len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -errno;
	t->addr = (uintptr_t)p;
	if (!t->delay_ms) {
		pvm_pattern_fill(p, t->addr, t->len, t->seed);
		return 0;
	}
	t->uffd = syscall(SYS_userfaultfd, O_CLOEXEC);
	if (t->uffd < 0)
		return -errno;
	reg.range.start = t->addr;
	reg.range.len = t->len;
	if (ioctl(t->uffd, UFFDIO_API, &api) ||
	    ioctl(t->uffd, UFFDIO_REGISTER, &reg))
		return -errno;
	return -pthread_create(&thread, NULL, pvm_target_uffd_thread, t);
}

/*
 * Fork a target with a region of @len bytes (rounded up to pages) holding
 * the pattern of @seed.  With @delay_ms, the region is not populated: each
 * first touch of a page, by the target or by another process through
 * process_vm_readv(), waits @delay_ms for the target's userfaultfd thread.
 * Call it while the caller is single-threaded.  Return 0 or -errno.
 */
static inline int pvm_target_start(struct pvm_target *t, size_t len,
				   uint64_t seed, unsigned int delay_ms)
{
	struct { int err; uintptr_t addr; } msg;
	pid_t parent = getpid();
	int fds[2], status;

	memset(t, 0, sizeof(*t));
	t->len = (len + PVM_PAGE - 1) & ~(PVM_PAGE - 1);
	t->seed = seed;
	t->delay_ms = delay_ms;
	t->pidfd = -1;
	if (pipe(fds))
		return -errno;
	t->pid = fork();
	if (t->pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -errno;
	}
	if (!t->pid) {
		close(fds[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(0);
		msg.err = pvm_target_setup(t);
		msg.addr = t->addr;
		if (write(fds[1], &msg, sizeof(msg)) != sizeof(msg) || msg.err)
			_exit(1);
		for (;;)
			pause();
	}
	close(fds[1]);
	if (read(fds[0], &msg, sizeof(msg)) != sizeof(msg))
		msg.err = -EPIPE;
	close(fds[0]);
	t->addr = msg.addr;
	if (!msg.err) {
		t->pidfd = pvm_pidfd_open(t->pid);
		if (t->pidfd < 0)
			msg.err = -errno;
	}
	if (msg.err) {
		kill(t->pid, SIGKILL);
		waitpid(t->pid, &status, 0);
		t->pid = 0;
	}
	return msg.err;
}

static inline void pvm_target_stop(struct pvm_target *t)
{
	int status;

	if (t->pid <= 0)
		return;
	if (t->pidfd >= 0)
		close(t->pidfd);
	kill(t->pid, SIGKILL);
	waitpid(t->pid, &status, 0);
	t->pid = 0;
	t->pidfd = -1;
}

#endif /* PVM_TARGET_H */
