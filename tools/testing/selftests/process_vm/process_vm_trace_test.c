// SPDX-License-Identifier: GPL-2.0
/*
 * The process_vm:process_vm_rw trace event: one event per call of
 * process_vm_readv(2)/process_vm_writev(2), with the arguments as passed,
 * the local length after the MAX_RW_COUNT clamp, the pages pinned and the
 * result.
 *
 * The events go to a tracefs instance of our own, so that the test neither
 * empties nor reads the top-level buffer somebody else may be using.
 * Skipped where the kernel has no such event (upstream kernels).
 */
#define _GNU_SOURCE
#include "process_vm_util.h"

#include <stdalign.h>
#include <sys/stat.h>
#include <linux/process_vm.h>

#include "../kselftest_harness.h"

#define TRACEFS		"/sys/kernel/tracing"
#define EVENT		"events/process_vm/process_vm_rw"

static int sys_pidfd_open(pid_t pid, unsigned int flags)
{
	return syscall(__NR_pidfd_open, pid, flags);
}

FIXTURE(trace)
{
	char dir[128];		/* the instance, "" unless created */
};

FIXTURE_SETUP(trace)
{
	self->dir[0] = 0;
	if (access(TRACEFS "/" EVENT "/enable", F_OK))
		SKIP(return, "no process_vm:process_vm_rw trace event");
	if (access(TRACEFS "/instances", W_OK))
		SKIP(return, "cannot create tracefs instances (not root?)");
	snprintf(self->dir, sizeof(self->dir),
		 TRACEFS "/instances/process_vm_trace_test.%d", getpid());
	ASSERT_EQ(0, mkdir(self->dir, 0700)) {
		TH_LOG("cannot create the tracefs instance %s: %s", self->dir,
		       strerror(errno));
		self->dir[0] = 0;
	}
}

FIXTURE_TEARDOWN(trace)
{
	/* removing an instance disables its events and frees its buffer */
	if (self->dir[0])
		rmdir(self->dir);
}

/* Write @val to @file of the instance: 0 or -errno. */
static int instance_write(FIXTURE_DATA(trace) *self, const char *file,
			  const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", self->dir, file);
	return pvm_write_file(path, val);
}

/* The instance's buffer as text into @buf: the length, or -errno. */
static ssize_t instance_read(FIXTURE_DATA(trace) *self, char *buf,
			     size_t size)
{
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/trace", self->dir);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	else
		buf[n] = 0;
	close(fd);
	return n;
}

/*
 * One event per call, with the arguments as passed, the clamped local
 * length, the pages pinned and the result: a read of ourselves by pid,
 * a failed lookup, a write by pidfd.
 */
TEST_F(trace, one_event_per_call)
{
	static alignas(4096) char remote[4096];
	static char local[100];
	struct iovec l[2] = { { local, 60 }, { local + 60, 40 } };
	struct iovec r[3] = { { remote, 10 }, { NULL, 0 },
			      { remote + 100, 200 } };
	static char trace[1 << 16], want[3][256];
	int pidfd, i;

	pidfd = sys_pidfd_open(getpid(), 0);
	ASSERT_GE(pidfd, 0);
	ASSERT_EQ(0, instance_write(self, EVENT "/enable", "1"));
	EXPECT_EQ(100, pvm_readv(getpid(), l, 2, r, 3, 0));
	EXPECT_EQ(-ESRCH, pvm_res(pvm_readv(-1, l, 2, r, 3, 0)));
	EXPECT_EQ(100, pvm_writev(pidfd, l, 2, r, 3, PROCESS_VM_PIDFD));
	ASSERT_EQ(0, instance_write(self, EVENT "/enable", "0"));

	ASSERT_LT(0, instance_read(self, trace, sizeof(trace)));
	snprintf(want[0], sizeof(want[0]),
		 "pid=%d flags=0x0 dir=read liovcnt=2 riovcnt=3 requested=100 copied=100 pinned=2 ret=100",
		 getpid());
	snprintf(want[1], sizeof(want[1]),
		 "pid=-1 flags=0x0 dir=read liovcnt=2 riovcnt=3 requested=100 copied=0 pinned=0 ret=-3");
	snprintf(want[2], sizeof(want[2]),
		 "pid=%d flags=0x1 dir=write liovcnt=2 riovcnt=3 requested=100 copied=100 pinned=2 ret=100",
		 pidfd);
	for (i = 0; i < 3; i++)
		EXPECT_NE(NULL, strstr(trace, want[i])) {
			TH_LOG("no \"%s\" in the trace:\n%s", want[i], trace);
		}
	close(pidfd);
}

TEST_HARNESS_MAIN
