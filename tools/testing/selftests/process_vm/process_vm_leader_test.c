// SPDX-License-Identifier: GPL-2.0
/*
 * A process whose thread-group leader has exited while another thread
 * runs on: its address space lives on, so a copy through its pidfd
 * (PROCESS_VM_PIDFD, and the io_uring ops, which take only pidfds) must
 * reach it.  Its pid number gives ESRCH, as it always has: that is the
 * zombie leader's.
 *
 * Kernels without PROCESS_VM_PIDFD skip the pidfd cases; kernels without
 * the io_uring ops skip that case.
 */
#define _GNU_SOURCE
#include "process_vm_util.h"

#include <pthread.h>

#include "../../../process_vm/pvm_uring.h"
#include "../kselftest_harness.h"

#define DATA_BYTE	0x5a
#define WAIT_MS		10000

static size_t psz;
static uint8_t *data;		/* in the target: what the copies read */

static void *live_thread(void *arg)
{
	int fd = *(int *)arg;
	char c;

	/* Until the test closes the pipe. */
	while (read(fd, &c, 1) > 0)
		;
	_exit(0);
	return NULL;
}

/*
 * The target: one page of DATA_BYTE, a thread that waits on the command
 * pipe, and a leader that exits as a thread (SYS_exit, not exit_group).
 */
static int target(int cmd, int resp)
{
	pthread_t th;
	long ready = 0;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	prctl(PR_SET_PTRACER, -1UL, 0, 0, 0);
	memset(data, DATA_BYTE, psz);
	if (pthread_create(&th, NULL, live_thread, &cmd))
		ready = -errno;
	pvm_write_full(resp, &ready, sizeof(ready));
	syscall(SYS_exit, 0);
	return 0;
}

FIXTURE(leader)
{
	pid_t pid;
	int pidfd;
	int cmd;		/* closing it ends the target */
	uint8_t *buf;
};

/* Is the leader of @pid a zombie while its process lives? */
static bool leader_exited(pid_t pid)
{
	char path[64], line[128];
	bool zombie = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "r");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "State:", 6))
			zombie = strchr(line, 'Z') != NULL;
	fclose(f);
	return zombie;
}

FIXTURE_SETUP(leader)
{
	int cp[2], rp[2];
	long ready = -1;
	int i;

	psz = PVM_PAGE;
	data = pvm_map_anon(psz);
	self->buf = pvm_map_anon(psz);
	ASSERT_NE(NULL, data);
	ASSERT_NE(NULL, self->buf);
	ASSERT_EQ(0, pipe(cp));
	ASSERT_EQ(0, pipe(rp));
	self->pid = fork();
	ASSERT_LE(0, self->pid);
	if (!self->pid) {
		close(cp[1]);
		close(rp[0]);
		_exit(target(cp[0], rp[1]));
	}
	close(cp[0]);
	close(rp[1]);
	self->cmd = cp[1];
	self->pidfd = syscall(__NR_pidfd_open, self->pid, 0);
	ASSERT_LE(0, self->pidfd);
	ASSERT_EQ(0, pvm_read_full(rp[0], &ready, sizeof(ready)));
	close(rp[0]);
	ASSERT_EQ(0, ready);
	for (i = 0; i < 1000 && !leader_exited(self->pid); i++)
		usleep(1000);
	ASSERT_TRUE(leader_exited(self->pid));
	memset(self->buf, 0, psz);
}

FIXTURE_TEARDOWN(leader)
{
	close(self->cmd);
	if (self->pidfd >= 0)
		close(self->pidfd);
	waitpid(self->pid, NULL, 0);
}

/* The pid number names the zombie leader: ESRCH, as upstream. */
TEST_F(leader, pid_number_esrch)
{
	EXPECT_EQ(-ESRCH, pvm_res(pvm_rw1(false, self->pid, self->buf,
					  (unsigned long)data, psz)));
}

TEST_F(leader, pidfd_reaches_process)
{
	struct iovec l = { self->buf, psz }, r = { data, psz };
	ssize_t ret;

	ret = pvm_readv(self->pidfd, &l, 1, &r, 1, PROCESS_VM_PIDFD);
	if (ret < 0 && errno == EINVAL)
		SKIP(return, "no PROCESS_VM_PIDFD");
	EXPECT_EQ(psz, pvm_res(ret));
	EXPECT_EQ(-1, pvm_check_byte(self->buf, psz, DATA_BYTE));
}

TEST_F(leader, uring_reaches_process)
{
	struct iovec l = { self->buf, psz }, r = { data, psz };
	struct __kernel_timespec ts = { .tv_sec = WAIT_MS / 1000 };
	struct io_uring_cqe *cqe;
	struct io_uring ring;
	int res;

	ASSERT_EQ(0, io_uring_queue_init(4, &ring, 0));
	if (!pvm_uring_supported(&ring)) {
		io_uring_queue_exit(&ring);
		SKIP(return, "no io_uring PROCESS_VM_READV");
	}
	pvm_uring_prep_readv(io_uring_get_sqe(&ring), self->pidfd, &l, 1,
			     &r, 1, PROCESS_VM_PIDFD);
	ASSERT_EQ(1, io_uring_submit(&ring));
	ASSERT_EQ(0, io_uring_wait_cqe_timeout(&ring, &cqe, &ts));
	res = cqe->res;
	io_uring_cqe_seen(&ring, cqe);
	io_uring_queue_exit(&ring);
	EXPECT_EQ(psz, res);
	EXPECT_EQ(-1, pvm_check_byte(self->buf, psz, DATA_BYTE));
}

TEST_HARNESS_MAIN
