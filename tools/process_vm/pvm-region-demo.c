// SPDX-License-Identifier: GPL-2.0
/*
 * pvm-region-demo: a region fd reaches what process_vm_readv() cannot.
 *
 * The owner exports a buffer with process_vm_export(2) and hands only the
 * 24 handle bytes to a consumer over a pipe.  With Yama's ptrace_scope at
 * 3 (set here when run as root where Yama is built in: it cannot be
 * lowered again until reboot, so run this last, in a VM), process_vm_readv()
 * of the owner fails even for root, but the consumer turns the handle into
 * its own fd with process_vm_open(2) and reads the buffer.  Then the owner
 * revokes the region and the consumer's next read fails with ENXIO.
 *
 * Exit status: 0 when all of that happened, 1 when something else did,
 * 2 on a usage error, 4 (KSFT_SKIP) on a kernel without regions.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

/* This tree's uapi header: the regions are newer than any installed one. */
#include "../../include/uapi/linux/process_vm.h"
#include "pvm_args.h"

#ifndef __NR_process_vm_export
#define __NR_process_vm_export	472
#endif
#ifndef __NR_process_vm_open
#define __NR_process_vm_open	473
#endif

static const char usage[] =
	"usage: pvm-region-demo\n"
	"An owner exports a buffer as a region and gives a consumer only its\n"
	"handle; the consumer reads it where process_vm_readv() is refused\n"
	"(Yama ptrace_scope 3, set when root: run it last, in a VM), then the\n"
	"owner revokes it and the next read fails with ENXIO.  Exit 0 if so,\n"
	"1 otherwise, 2 on a usage error, 4 if the kernel has no regions.\n";

static const char message[] = "bytes the owner chose to share";

static int yama_scope_3(void)
{
	const char *path = "/proc/sys/kernel/yama/ptrace_scope";
	int fd = open(path, O_WRONLY);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, "3", 1) == 1;
	close(fd);
	return ok ? 0 : -1;
}

/* The consumer: knows the owner's pid and reads the handle from @in. */
static int run_consumer(pid_t owner, int in, int done, int go)
{
	struct process_vm_handle h;
	char buf[sizeof(message)] = "";
	struct iovec local = { buf, sizeof(buf) };
	struct iovec remote = { (void *)message, sizeof(message) };
	int fd, ok = 1;
	char c;

	if (read(in, &h, sizeof(h)) != sizeof(h))
		return 1;
	if (process_vm_readv(owner, &local, 1, &remote, 1, 0) < 0)
		printf("consumer: process_vm_readv(owner): %s\n", strerror(errno));
	else
		printf("consumer: process_vm_readv(owner) worked here\n");
	fd = syscall(__NR_process_vm_open, &h, sizeof(h),
		     PROCESS_VM_REGION_READ);
	if (fd < 0) {
		printf("consumer: process_vm_open: %s\n", strerror(errno));
		return 1;
	}
	if (pread(fd, buf, sizeof(buf), 0) != sizeof(buf) ||
	    strcmp(buf, message)) {
		printf("consumer: pread of the region failed\n");
		ok = 0;
	} else {
		printf("consumer: region read: \"%s\"\n", buf);
	}
	if (write(done, "r", 1) != 1 || read(go, &c, 1) != 1)
		return 1;
	if (pread(fd, buf, sizeof(buf), 0) >= 0 || errno != ENXIO) {
		printf("consumer: read after revoke did not fail with ENXIO\n");
		ok = 0;
	} else {
		printf("consumer: read after revoke: %s\n", strerror(errno));
	}
	return !ok;
}

static int run_owner(int fd, pid_t child, int out, int done, int go)
{
	struct process_vm_handle h;
	int status;
	char c;

	if (ioctl(fd, PROCESS_VM_REGION_GET_HANDLE, &h) ||
	    write(out, &h, sizeof(h)) != sizeof(h))
		return 1;
	printf("owner: handed over handle id %llu (24 bytes, no fd)\n",
	       (unsigned long long)h.id);
	if (read(done, &c, 1) != 1)
		return 1;
	if (ioctl(fd, PROCESS_VM_REGION_REVOKE))
		return 1;
	printf("owner: revoked the region\n");
	if (write(go, "g", 1) != 1 || waitpid(child, &status, 0) != child)
		return 1;
	return !WIFEXITED(status) || WEXITSTATUS(status);
}

int main(int argc, char **argv)
{
	struct iovec iov = { (void *)message, sizeof(message) };
	int handle[2], done[2], go[2];
	pid_t child;
	int fd;

	pvm_no_args(argc, argv, usage);
	setvbuf(stdout, NULL, _IOLBF, 0);
	fd = syscall(__NR_process_vm_export, &iov, 1, PROCESS_VM_REGION_READ);
	if (fd < 0 && errno == ENOSYS) {
		printf("pvm-region-demo: no regions in this kernel\n");
		return KSFT_SKIP;
	}
	if (fd < 0) {
		perror("process_vm_export");
		return 1;
	}
	if (geteuid() == 0 && !yama_scope_3())
		printf("owner: Yama ptrace_scope is now 3: no process may ptrace another\n");
	if (pipe(handle) || pipe(done) || pipe(go)) {
		perror("pipe");
		return 1;
	}
	child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (!child) {
		/* Only the handle bytes cross over: drop the inherited fd. */
		close(fd);
		_exit(run_consumer(getppid(), handle[0], done[1], go[0]));
	}
	return run_owner(fd, child, handle[1], done[0], go[1]);
}
