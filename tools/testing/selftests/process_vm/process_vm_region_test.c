// SPDX-License-Identifier: GPL-2.0
/*
 * process_vm_export(2): consent-based regions.  A process makes ranges of
 * its own memory a region fd; whoever holds the fd (the owner itself, a
 * forked child, a process that got it by SCM_RIGHTS) reads and writes the
 * owner's current bytes through read(2), write(2) and friends, with no
 * ptrace rights, until the owner revokes it, execs or exits.
 *
 * Each case checks one rule of the contract for a specific result:
 *   - the arguments: flags, iovec count and array, lengths, addresses;
 *   - the fd: O_CLOEXEC, access mode, st_size, lseek(), no reopening
 *     through /proc, the fdinfo lines;
 *   - the data, on a table of segment shapes (mid-page, page-crossing,
 *     several, reversed, zero-length, UIO_MAXIOV of them): offset 0 is the
 *     first byte of the first segment, read and write at every boundary,
 *     truncation at the end, ENOSPC past it, and not one byte before or
 *     after a segment read or written (the buffer is a pattern, compared
 *     whole, between two PROT_NONE pages);
 *   - holes: the region follows the owner's mappings, and with PIN keeps
 *     the pages of export time;
 *   - RWF_NOWAIT on a page that is not there (userfaultfd: a read that
 *     waited would show as a fault);
 *   - revocation by the owner, EPERM for everyone else, exit and exec;
 *   - holders that process_vm_readv(2) refuses: another uid, Yama
 *     ptrace_scope 2, a seccomp filter;
 *   - PIN's charge to RLIMIT_MEMLOCK, and its return;
 *   - revoke while a holder waits for its own userfaultfd page, in a
 *     pread() or an io_uring READ in io-wq: revoke does not wait for it;
 *     a stop of the submitter ends that READ (EINTR), as the rst says;
 *   - handles: PROCESS_VM_REGION_GET_HANDLE for the owner only, and
 *     process_vm_open(2)'s arguments, forged handles, the access and uid
 *     checks, the opened fd (its mode, the region's bytes, revocation),
 *     another process and another uid, the owner's exit;
 *   - IORING_OP_READ, READV and READ_FIXED (into a registered buffer),
 *     also with IOSQE_ASYNC, with and without PIN.
 *
 * Kernels without the system call skip every case.
 */
#define _GNU_SOURCE
#include "process_vm_util.h"

#include <grp.h>
#include <poll.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/filter.h>
#include <linux/io_uring.h>
#include <linux/seccomp.h>

#include "../kselftest_harness.h"

#ifndef PROCESS_VM_REGION_READ
#define PROCESS_VM_REGION_READ	1
#endif
#ifndef PROCESS_VM_REGION_WRITE
#define PROCESS_VM_REGION_WRITE	2
#endif
#ifndef PROCESS_VM_REGION_PIN
#define PROCESS_VM_REGION_PIN	4
#define PROCESS_VM_REGION_ANY_USER	8
#endif
#ifndef PROCESS_VM_REGION_REVOKE
#define PROCESS_VM_REGION_REVOKE	_IO(0xB9, 0)
#endif
#ifndef PROCESS_VM_REGION_GET_HANDLE
struct process_vm_handle {
	__u64 id;
	__u8 secret[16];
};

#define PROCESS_VM_REGION_GET_HANDLE	\
	_IOR(0xB9, 1, struct process_vm_handle)
#endif
#ifndef RWF_NOWAIT
#define RWF_NOWAIT		0x00000008
#endif

#define R_READ		PROCESS_VM_REGION_READ
#define R_WRITE		PROCESS_VM_REGION_WRITE
#define R_RW		(R_READ | R_WRITE)
#define R_PIN		PROCESS_VM_REGION_PIN
#define R_ANY		PROCESS_VM_REGION_ANY_USER

#define SEED_OWNER	0x5151	/* the owner's buffer, guards included */
#define SEED_NEW	0x6262	/* the owner's buffer, later */
#define SEED_SRC	0x7373	/* what a holder writes */

/* A holder's data check found other bytes than expected */
#define MISMATCH	(-100000L)

/* Where the region of a single-segment case starts in its buffer */
#define REG_OFF		100

#define NOBODY		65534

static size_t psz;

static int region_export(const struct iovec *iov, unsigned long cnt,
			 unsigned int flags)
{
	return syscall(__NR_process_vm_export, iov, cnt, flags);
}

#define NO_REGIONS	"process_vm_export(2): not in this kernel"

/* True when this kernel has no process_vm_export(2); sets psz */
static bool no_regions(void)
{
	static int missing = -1;

	psz = PVM_PAGE;
	if (missing < 0)
		missing = region_export(NULL, 0, 0) < 0 &&
			  pvm_syscall_missing(errno);
	return missing;
}

/* One segment of @len bytes at @base */
static int export1(void *base, size_t len, unsigned int flags)
{
	struct iovec iov = { .iov_base = base, .iov_len = len };

	return region_export(&iov, 1, flags);
}

/* ---- fdinfo ----------------------------------------------------------- */

struct rinfo {
	char owner[32], access[32], size[32], segments[32], pinned[32];
	char state[32];
};

/* "key:\tvalue\n" into @val (without the newline) if @line is @key's */
static void rinfo_field(const char *line, const char *key, char *val,
			size_t n)
{
	size_t k = strlen(key);

	if (strncmp(line, key, k) || line[k] != ':' || line[k + 1] != '\t')
		return;
	snprintf(val, n, "%s", line + k + 2);
	val[strcspn(val, "\n")] = 0;
}

/*
 * The region lines of /proc/self/fdinfo/@fd, each as its value string
 * ("" when the line is missing or not exactly "key:\tvalue"): 0 or -errno.
 */
static int region_fdinfo(int fd, struct rinfo *ri)
{
	char path[64], line[256];
	FILE *f;

	memset(ri, 0, sizeof(*ri));
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		rinfo_field(line, "owner", ri->owner, sizeof(ri->owner));
		rinfo_field(line, "access", ri->access, sizeof(ri->access));
		rinfo_field(line, "size", ri->size, sizeof(ri->size));
		rinfo_field(line, "segments", ri->segments,
			    sizeof(ri->segments));
		rinfo_field(line, "pinned", ri->pinned, sizeof(ri->pinned));
		rinfo_field(line, "state", ri->state, sizeof(ri->state));
	}
	fclose(f);
	return 0;
}

static const char *num(char *buf, long v)
{
	sprintf(buf, "%ld", v);
	return buf;
}

/*
 * What fdinfo's pinned line says of a PIN region of @iov: the whole pages
 * that each of its non-empty segments spans, in bytes.  Segments that
 * share a page count it each.
 */
static long pin_bytes(const struct iovec *iov, unsigned long cnt)
{
	unsigned long i, a, pages = 0;

	for (i = 0; i < cnt; i++) {
		if (!iov[i].iov_len)
			continue;
		a = (unsigned long)iov[i].iov_base;
		pages += (a + iov[i].iov_len - 1) / psz - a / psz + 1;
	}
	return pages * psz;
}

/* ---- commands run in a holder or an owner (pvm_target) ---------------- */

static int sock[2] = { -1, -1 };	/* socketpair for SCM_RIGHTS */

/*
 * pread() @len bytes at 0: the count when the bytes are the pattern @seed
 * from REG_OFF on, as the single-segment cases lay it out; MISMATCH when
 * they are not; -errno.
 */
static long cmd_read_check(struct pvm_target *t, unsigned long fd,
			   unsigned long len, unsigned long seed)
{
	uint8_t *p = malloc(len);
	ssize_t n;

	if (!p)
		return -ENOMEM;
	n = pread(fd, p, len, 0);
	if (n < 0)
		n = -errno;
	else if (pvm_check_at(p, n, seed, REG_OFF) != -1)
		n = MISMATCH;
	free(p);
	return n;
}

/* pwrite() the pattern @seed (from REG_OFF on), @len bytes at 0 */
static long cmd_write_fill(struct pvm_target *t, unsigned long fd,
			   unsigned long len, unsigned long seed)
{
	uint8_t *p = malloc(len);
	ssize_t n;

	if (!p)
		return -ENOMEM;
	pvm_fill_at(p, len, seed, REG_OFF);
	n = pwrite(fd, p, len, 0);
	free(p);
	return n < 0 ? -errno : n;
}

static long cmd_revoke(struct pvm_target *t, unsigned long fd,
		       unsigned long b, unsigned long c)
{
	return ioctl(fd, PROCESS_VM_REGION_REVOKE) ? -errno : 0;
}

/* The owner line of fdinfo as a number, or -errno (-EPROTO: no number) */
static long cmd_fdinfo_owner(struct pvm_target *t, unsigned long fd,
			     unsigned long b, unsigned long c)
{
	struct rinfo ri;
	char *end;
	long v;
	int ret = region_fdinfo(fd, &ri);

	if (ret)
		return ret;
	v = strtol(ri.owner, &end, 10);
	return ri.owner[0] && !*end ? v : -EPROTO;
}

/* process_vm_readv() (or _writev() if @write) of @len bytes at @addr */
static long cmd_pvm(struct pvm_target *t, unsigned long pid,
		    unsigned long addr, unsigned long write)
{
	uint8_t byte = 0;

	return pvm_res(pvm_rw1(write, pid, &byte, addr, 1));
}

/* Receive an fd on sock[@end] */
static long cmd_recv_fd(struct pvm_target *t, unsigned long end,
			unsigned long b, unsigned long c)
{
	return pvm_recv_fd(sock[end]);
}

/*
 * In an owner: fill @len bytes of its copy of @buf with SEED_OWNER (from
 * 0, so that the region from REG_OFF is that pattern from REG_OFF), export
 * [@buf + REG_OFF, + @len) with @flags and send the fd on sock[1]; returns
 * the owner's fd, or -errno.
 */
static long cmd_export_send(struct pvm_target *t, unsigned long buf,
			    unsigned long len, unsigned long flags)
{
	int fd, ret;

	pvm_fill((void *)buf, REG_OFF + len + 1, SEED_OWNER);
	fd = export1((uint8_t *)buf + REG_OFF, len, flags);
	if (fd < 0)
		return -errno;
	ret = pvm_send_fd(sock[1], fd);
	return ret ? ret : fd;
}

/* Setups of targets */
static long setup_nobody(struct pvm_target *t, unsigned long dumpable,
			 unsigned long tracer_any, unsigned long c)
{
	/* From root to another uid: the capability sets are cleared. */
	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
		return -errno;
	if (geteuid() != NOBODY)
		return -EPERM;
	if (dumpable && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0))
		return -errno;
	if (tracer_any && prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0))
		return -errno;
	return 0;
}

static long setup_seccomp(struct pvm_target *t, unsigned long a,
			  unsigned long b, unsigned long c)
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

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	return syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) ?
	       -errno : 0;
}

/* ---- the arguments ---------------------------------------------------- */

enum args_kind {
	A_BUF,		/* one segment: 10 bytes at buf + 1 */
	A_COUNT,	/* .cnt one-byte segments (the array holds 1025) */
	A_NULL,		/* a NULL array */
	A_HOLE,		/* an array in unmapped memory */
	A_TAIL,		/* 2 entries, the second one in unmapped memory */
	A_BIGLEN,	/* a second segment of SSIZE_MAX + 1 bytes */
	A_WRAP,		/* a segment that wraps past the top */
	A_KERNEL,	/* a page at a kernel address */
	A_ZEROS,	/* 2 empty segments */
	A_NULL0,	/* one empty segment at NULL */
	A_SKIP0,	/* empty segments around one of 5 bytes */
	A_UNMAPPED,	/* a page of unmapped memory */
	A_CROSS,	/* 2 bytes across the boundary of buf's pages */
};

FIXTURE(args)
{
	uint8_t *buf, *hole, *tail;
	struct iovec *iov;
};

FIXTURE_VARIANT(args)
{
	enum args_kind kind;
	unsigned long cnt;
	unsigned int flags;
	int err;		/* 0: succeeds */
	long size, segments;	/* then st_size and fdinfo's segments */
	long pinned;		/* and pages pinned */
};

FIXTURE_VARIANT_ADD(args, flags_none)
{
	.kind = A_BUF, .cnt = 1, .flags = 0, .err = EINVAL,
};

/* How the region holds the bytes, but no access to them */
FIXTURE_VARIANT_ADD(args, flags_pin_only)
{
	.kind = A_BUF, .cnt = 1, .flags = R_PIN, .err = EINVAL,
};

FIXTURE_VARIANT_ADD(args, flags_any_user_only)
{
	.kind = A_BUF, .cnt = 1, .flags = R_ANY, .err = EINVAL,
};

FIXTURE_VARIANT_ADD(args, flags_pin_any_user)
{
	.kind = A_BUF, .cnt = 1, .flags = R_PIN | R_ANY, .err = EINVAL,
};

/* Bit 4, the first unassigned one */
FIXTURE_VARIANT_ADD(args, flags_read_bit4)
{
	.kind = A_BUF, .cnt = 1, .flags = R_READ | 0x10, .err = EINVAL,
};

FIXTURE_VARIANT_ADD(args, flags_all_bit4)
{
	.kind = A_BUF, .cnt = 1, .flags = R_RW | R_PIN | R_ANY | 0x10,
	.err = EINVAL,
};

FIXTURE_VARIANT_ADD(args, flags_rw_bit8)
{
	.kind = A_BUF, .cnt = 1, .flags = R_RW | 0x100, .err = EINVAL,
};

FIXTURE_VARIANT_ADD(args, flags_rw_bit31)
{
	.kind = A_BUF, .cnt = 1, .flags = R_RW | 0x80000000u, .err = EINVAL,
};

FIXTURE_VARIANT_ADD(args, count_0)
{
	.kind = A_COUNT, .cnt = 0, .flags = R_READ, .err = EINVAL,
};

FIXTURE_VARIANT_ADD(args, count_1025)
{
	.kind = A_COUNT, .cnt = 1025, .flags = R_READ, .err = EINVAL,
};

FIXTURE_VARIANT_ADD(args, count_max)
{
	.kind = A_COUNT, .cnt = ULONG_MAX, .flags = R_READ, .err = EINVAL,
};

FIXTURE_VARIANT_ADD(args, array_null)
{
	.kind = A_NULL, .cnt = 1, .flags = R_READ, .err = EFAULT,
};

FIXTURE_VARIANT_ADD(args, array_unmapped)
{
	.kind = A_HOLE, .cnt = 1, .flags = R_READ, .err = EFAULT,
};

FIXTURE_VARIANT_ADD(args, array_tail_unmapped)
{
	.kind = A_TAIL, .cnt = 2, .flags = R_READ, .err = EFAULT,
};

FIXTURE_VARIANT_ADD(args, len_over_ssize_max)
{
	.kind = A_BIGLEN, .cnt = 2, .flags = R_READ, .err = EINVAL,
};

FIXTURE_VARIANT_ADD(args, wraps_past_top)
{
	.kind = A_WRAP, .cnt = 1, .flags = R_READ, .err = EINVAL,
};

#if defined(__x86_64__) || defined(__aarch64__)
FIXTURE_VARIANT_ADD(args, kernel_address)
{
	.kind = A_KERNEL, .cnt = 1, .flags = R_READ, .err = EFAULT,
};
#endif

FIXTURE_VARIANT_ADD(args, total_zero)
{
	.kind = A_ZEROS, .cnt = 2, .flags = R_READ, .err = EINVAL,
};

FIXTURE_VARIANT_ADD(args, total_zero_null)
{
	.kind = A_NULL0, .cnt = 1, .flags = R_RW, .err = EINVAL,
};

FIXTURE_VARIANT_ADD(args, byte_granular)
{
	.kind = A_BUF, .cnt = 1, .flags = R_READ, .size = 10, .segments = 1,
};

FIXTURE_VARIANT_ADD(args, read_pin)
{
	.kind = A_BUF, .cnt = 1, .flags = R_READ | R_PIN, .size = 10,
	.segments = 1, .pinned = 1,
};

FIXTURE_VARIANT_ADD(args, write_pin)
{
	.kind = A_BUF, .cnt = 1, .flags = R_WRITE | R_PIN, .size = 10,
	.segments = 1, .pinned = 1,
};

FIXTURE_VARIANT_ADD(args, read_any_user)
{
	.kind = A_BUF, .cnt = 1, .flags = R_READ | R_ANY, .size = 10,
	.segments = 1,
};

FIXTURE_VARIANT_ADD(args, all_flags)
{
	.kind = A_BUF, .cnt = 1, .flags = R_RW | R_PIN | R_ANY, .size = 10,
	.segments = 1, .pinned = 1,
};

/* Two bytes, two pages */
FIXTURE_VARIANT_ADD(args, pin_across_pages)
{
	.kind = A_CROSS, .cnt = 1, .flags = R_READ | R_PIN, .size = 2,
	.segments = 1, .pinned = 2,
};

FIXTURE_VARIANT_ADD(args, empty_segments_skipped)
{
	.kind = A_SKIP0, .cnt = 5, .flags = R_RW, .size = 5, .segments = 1,
};

/* Empty segments pin nothing, not even at NULL or in the hole */
FIXTURE_VARIANT_ADD(args, empty_segments_skipped_pin)
{
	.kind = A_SKIP0, .cnt = 5, .flags = R_RW | R_PIN, .size = 5,
	.segments = 1, .pinned = 1,
};

FIXTURE_VARIANT_ADD(args, count_1024)
{
	.kind = A_COUNT, .cnt = 1024, .flags = R_WRITE, .size = 1024,
	.segments = 1024,
};

FIXTURE_VARIANT_ADD(args, unmapped_accepted)
{
	.kind = A_UNMAPPED, .cnt = 1, .flags = R_RW, .size = -1,
	.segments = 1,
};

/* Nothing there to pin */
FIXTURE_VARIANT_ADD(args, unmapped_pin)
{
	.kind = A_UNMAPPED, .cnt = 1, .flags = R_READ | R_PIN, .err = EFAULT,
};

FIXTURE_SETUP(args)
{
	struct iovec *iov;
	unsigned long i;

	if (no_regions())
		SKIP(return, NO_REGIONS);
	self->buf = pvm_map_anon(2 * psz);
	ASSERT_TRUE(self->buf != NULL);
	self->hole = pvm_hole(psz);
	ASSERT_TRUE(self->hole != NULL);
	/* A page whose last 16 bytes hold one iovec, then nothing mapped */
	self->tail = pvm_map_anon(2 * psz);
	ASSERT_TRUE(self->tail != NULL);
	ASSERT_EQ(0, munmap(self->tail + psz, psz));
	self->iov = calloc(1025, sizeof(*self->iov));
	ASSERT_TRUE(self->iov != NULL);

	iov = self->iov;
	for (i = 0; i < 1025; i++)
		iov[i] = (struct iovec){ self->buf + i, 1 };
	switch (variant->kind) {
	case A_BUF:
		iov[0] = (struct iovec){ self->buf + 1, 10 };
		break;
	case A_BIGLEN:
		iov[1] = (struct iovec){ self->buf, (size_t)SSIZE_MAX + 1 };
		break;
	case A_WRAP:
		iov[0] = (struct iovec){ (void *)(ULONG_MAX - 99), 4096 };
		break;
	case A_KERNEL:
		iov[0] = (struct iovec){ (void *)0xffff800000000000ULL, 4096 };
		break;
	case A_ZEROS:
		iov[0] = (struct iovec){ self->buf, 0 };
		iov[1] = (struct iovec){ self->buf + 5, 0 };
		break;
	case A_NULL0:
		iov[0] = (struct iovec){ NULL, 0 };
		break;
	case A_SKIP0:
		iov[0] = (struct iovec){ self->buf, 0 };
		iov[1] = (struct iovec){ NULL, 0 };
		iov[2] = (struct iovec){ self->buf + 10, 5 };
		iov[3] = (struct iovec){ self->buf + 20, 0 };
		iov[4] = (struct iovec){ self->hole, 0 };
		break;
	case A_UNMAPPED:
		iov[0] = (struct iovec){ self->hole, psz };
		break;
	case A_CROSS:
		iov[0] = (struct iovec){ self->buf + psz - 1, 2 };
		break;
	default:
		break;
	}
}

FIXTURE_TEARDOWN(args)
{
	munmap(self->buf, 2 * psz);
	munmap(self->tail, psz);
	free(self->iov);
}

TEST_F(args, export)
{
	const struct iovec *iov = self->iov;
	char want[32];
	struct rinfo ri;
	struct stat st;
	int fd;

	if (variant->kind == A_NULL)
		iov = NULL;
	else if (variant->kind == A_HOLE)
		iov = (const struct iovec *)self->hole;
	else if (variant->kind == A_TAIL)
		iov = (const struct iovec *)(self->tail + psz) - 1;
	if (variant->kind == A_TAIL)
		memcpy((void *)iov, self->iov, sizeof(*iov));

	fd = region_export(iov, variant->cnt, variant->flags);
	if (variant->err) {
		EXPECT_EQ(-variant->err, pvm_res(fd));
		if (fd >= 0)
			close(fd);
		return;
	}
	ASSERT_LE(0, fd) {
		TH_LOG("process_vm_export: %s", strerror(errno));
	}
	ASSERT_EQ(0, fstat(fd, &st));
	EXPECT_EQ(variant->size < 0 ? (long)psz : variant->size,
		  (long)st.st_size);
	ASSERT_EQ(0, region_fdinfo(fd, &ri));
	EXPECT_STREQ(num(want, variant->segments), ri.segments);
	EXPECT_STREQ(num(want, st.st_size), ri.size);
	EXPECT_STREQ(num(want, variant->pinned * psz), ri.pinned);
	EXPECT_STREQ("live", ri.state);
	close(fd);
}

/* ---- the fd ----------------------------------------------------------- */

FIXTURE(access)
{
	uint8_t *buf;		/* 2 pages */
	size_t len;		/* the region: [buf + REG_OFF, + len) */
	int fd;
};

FIXTURE_VARIANT(access)
{
	unsigned int flags;
	int accmode;
	const char *name;
};

FIXTURE_VARIANT_ADD(access, r)
{
	.flags = R_READ, .accmode = O_RDONLY, .name = "r",
};

FIXTURE_VARIANT_ADD(access, w)
{
	.flags = R_WRITE, .accmode = O_WRONLY, .name = "w",
};

FIXTURE_VARIANT_ADD(access, rw)
{
	.flags = R_RW, .accmode = O_RDWR, .name = "rw",
};

FIXTURE_VARIANT_ADD(access, r_pin)
{
	.flags = R_READ | R_PIN, .accmode = O_RDONLY, .name = "r",
};

FIXTURE_VARIANT_ADD(access, w_pin)
{
	.flags = R_WRITE | R_PIN, .accmode = O_WRONLY, .name = "w",
};

FIXTURE_VARIANT_ADD(access, rw_pin)
{
	.flags = R_RW | R_PIN, .accmode = O_RDWR, .name = "rw",
};

FIXTURE_SETUP(access)
{
	self->fd = -1;
	if (no_regions())
		SKIP(return, NO_REGIONS);
	self->buf = pvm_map_anon(2 * psz);
	ASSERT_TRUE(self->buf != NULL);
	pvm_fill(self->buf, 2 * psz, SEED_OWNER);
	/* Across the page boundary */
	self->len = psz;
	self->fd = export1(self->buf + REG_OFF, self->len, variant->flags);
	ASSERT_LE(0, self->fd) {
		TH_LOG("process_vm_export: %s", strerror(errno));
	}
}

FIXTURE_TEARDOWN(access)
{
	if (self->fd >= 0)
		close(self->fd);
	munmap(self->buf, 2 * psz);
}

TEST_F(access, fd_flags_stat_fdinfo)
{
	char path[64], want[32];
	struct rinfo ri;
	struct stat st;
	int fl;

	fl = fcntl(self->fd, F_GETFD);
	ASSERT_LE(0, fl);
	EXPECT_TRUE(fl & FD_CLOEXEC);
	fl = fcntl(self->fd, F_GETFL);
	ASSERT_LE(0, fl);
	EXPECT_EQ(variant->accmode, fl & O_ACCMODE);
	ASSERT_EQ(0, fstat(self->fd, &st));
	EXPECT_EQ((long)self->len, (long)st.st_size);

	ASSERT_EQ(0, region_fdinfo(self->fd, &ri));
	EXPECT_STREQ(num(want, getpid()), ri.owner);
	EXPECT_STREQ(variant->name, ri.access);
	EXPECT_STREQ(num(want, self->len), ri.size);
	EXPECT_STREQ("1", ri.segments);
	/* [REG_OFF, REG_OFF + one page) is on two pages */
	EXPECT_STREQ(num(want, variant->flags & R_PIN ? 2 * psz : 0),
		     ri.pinned);
	EXPECT_STREQ("live", ri.state);

	snprintf(path, sizeof(path), "/proc/self/fd/%d", self->fd);
	fl = open(path, O_RDWR);
	EXPECT_EQ(-ENXIO, pvm_res(fl));
	if (fl >= 0)
		close(fl);
}

/*
 * Each way to read (0) or to write (1), @n bytes at region offset 0, the
 * position set to 0 first: the result as count or -errno.
 */
static long region_io(int fd, bool wr, int how, void *p, size_t n)
{
	struct iovec iov[2] = { { p, n / 2 }, { (uint8_t *)p + n / 2,
					       n - n / 2 } };
	ssize_t ret;

	/* Unchecked: after revocation it need not work (then unused) */
	lseek(fd, 0, SEEK_SET);
	switch (how) {
	case 0:
		ret = wr ? write(fd, p, n) : read(fd, p, n);
		break;
	case 1:
		ret = wr ? pwrite(fd, p, n, 0) : pread(fd, p, n, 0);
		break;
	case 2:
		ret = wr ? pwritev(fd, iov, 2, 0) : preadv(fd, iov, 2, 0);
		break;
	case 3:
		ret = wr ? pwritev2(fd, iov, 2, 0, 0) :
			      preadv2(fd, iov, 2, 0, 0);
		break;
	default:
		ret = wr ? writev(fd, iov, 2) : readv(fd, iov, 2);
		break;
	}
	return pvm_res(ret);
}

#define IO_WAYS		5
static const char * const io_way[2][IO_WAYS] = {
	{ "read", "pread", "preadv", "preadv2", "readv" },
	{ "write", "pwrite", "pwritev", "pwritev2", "writev" },
};

TEST_F(access, direction)
{
	bool can[2] = { variant->flags & R_READ, variant->flags & R_WRITE };
	uint8_t *p = malloc(self->len);
	int w, how;

	ASSERT_TRUE(p != NULL);
	for (w = 0; w < 2; w++) {
		for (how = 0; how < IO_WAYS; how++) {
			uint32_t seed = SEED_SRC + how;

			memset(p, 0, self->len);
			if (w)
				pvm_fill_at(p, self->len, seed, REG_OFF);
			EXPECT_EQ(can[w] ? (long)self->len : -EBADF,
				  region_io(self->fd, w, how, p, self->len)) {
				TH_LOG("%s", io_way[w][how]);
			}
			if (!can[w])
				continue;
			if (w) {
				EXPECT_EQ(-1, pvm_check_at(self->buf + REG_OFF,
							   self->len, seed,
							   REG_OFF));
			} else {
				EXPECT_EQ(-1, pvm_first_diff(p,
							     self->buf + REG_OFF,
							     self->len));
			}
		}
	}
	/* The neighbours, still the owner's pattern */
	EXPECT_EQ(-1, pvm_check_at(self->buf + REG_OFF - 1, 1, SEED_OWNER,
				   REG_OFF - 1));
	EXPECT_EQ(-1, pvm_check_at(self->buf + REG_OFF + self->len, 1,
				   SEED_OWNER, REG_OFF + self->len));
	free(p);
}

static void check_revoked(struct __test_metadata *_metadata, int fd,
			  unsigned int flags, const uint8_t *buf, size_t len)
{
	uint8_t *p = malloc(len), *before = malloc(len);
	struct rinfo ri;
	int w, how;

	ASSERT_TRUE(p != NULL);
	ASSERT_TRUE(before != NULL);
	memcpy(before, buf, len);
	for (w = 0; w < 2; w++) {
		if (!(flags & (w ? R_WRITE : R_READ)))
			continue;
		for (how = 0; how < IO_WAYS; how++) {
			memset(p, 0x5a, len);
			EXPECT_EQ(-ENXIO, region_io(fd, w, how, p, len)) {
				TH_LOG("%s after revocation", io_way[w][how]);
			}
		}
	}
	EXPECT_EQ(-1, pvm_first_diff(before, buf, len));
	ASSERT_EQ(0, region_fdinfo(fd, &ri));
	EXPECT_STREQ("revoked", ri.state);
	/* Revoke let go of the pages */
	EXPECT_STREQ("0", ri.pinned);
	free(p);
	free(before);
}

TEST_F(access, revoke)
{
	EXPECT_EQ(0, pvm_res(ioctl(self->fd, PROCESS_VM_REGION_REVOKE)));
	check_revoked(_metadata, self->fd, variant->flags,
		      self->buf + REG_OFF, self->len);
	/* Again: still 0 */
	EXPECT_EQ(0, pvm_res(ioctl(self->fd, PROCESS_VM_REGION_REVOKE)));
}

static void *revoke_thread(void *arg)
{
	int fd = *(int *)arg;

	return (void *)(long)(ioctl(fd, PROCESS_VM_REGION_REVOKE) ?
			      -errno : 0);
}

TEST_F(access, revoke_other_thread)
{
	pthread_t th;
	void *ret;

	ASSERT_EQ(0, pthread_create(&th, NULL, revoke_thread, &self->fd));
	ASSERT_EQ(0, pthread_join(th, &ret));
	EXPECT_EQ(0, (long)ret);
	check_revoked(_metadata, self->fd, variant->flags,
		      self->buf + REG_OFF, self->len);
}

/* ---- the data: shapes ------------------------------------------------- */

struct rseg {
	int pg, off;	/* start: @pg pages and @off bytes into the buffer */
	int npg, len;	/* length: @npg pages and @len bytes */
};

#define SEG(p, o, np, l)	{ .pg = (p), .off = (o), .npg = (np), .len = (l) }
#define MAX_SEGS	8
#define BUF_PAGES	4	/* between two PROT_NONE pages */

FIXTURE(region)
{
	uint8_t *map, *buf, *orig, *model, *out, *src;
	size_t buflen, size;
	struct iovec *iov;
	int nseg, nonempty;
	size_t *pos;		/* region byte i is buf[pos[i]] */
	uint8_t *covered;	/* buf[j] is in a segment */
	int fd;
};

FIXTURE_VARIANT(region)
{
	struct rseg seg[MAX_SEGS];
	int nseg;
	int gen;	/* or this many: 1..9 bytes, 15 bytes apart */
	bool pin;	/* exported with PIN */
};

/*
 * The shapes, each as the owner's mappings (name) and pinned (name_pin):
 * the data cases are the same, as the owner's pages stay where they are.
 */
#define SH_MID_PAGE		.seg = { SEG(0, 100, 0, 200) }, .nseg = 1
#define SH_ONE_BYTE		.seg = { SEG(1, 77, 0, 1) }, .nseg = 1
#define SH_ACROSS_PAGES		.seg = { SEG(1, -1, 0, 2) }, .nseg = 1
#define SH_THREE_PAGES		.seg = { SEG(0, 3000, 2, 500) }, .nseg = 1
/* Every mapped byte: one more on either side would fault */
#define SH_WHOLE_BUFFER		.seg = { SEG(0, 0, BUF_PAGES, 0) }, .nseg = 1
#define SH_AT_BOTH_FENCES						\
	.seg = { SEG(0, 0, 0, 10), SEG(BUF_PAGES, -10, 0, 10) }, .nseg = 2
#define SH_SEVERAL							\
	.seg = { SEG(0, 1, 0, 1), SEG(0, 3, 0, 10), SEG(0, 4090, 0, 20),	\
		 SEG(1, 200, 1, 0), SEG(3, -1, 0, 2), SEG(3, 500, 0, 1000) }, \
	.nseg = 6
#define SH_REVERSED							\
	.seg = { SEG(3, 5, 0, 100), SEG(2, -50, 0, 100), SEG(0, 9, 0, 30) }, \
	.nseg = 3
#define SH_EMPTY_SEGMENTS						\
	.seg = { SEG(0, 5, 0, 0), SEG(0, 10, 0, 20), SEG(2, 0, 0, 0),	\
		 SEG(2, 200, 0, 30), SEG(3, 0, 0, 0) },			\
	.nseg = 5

FIXTURE_VARIANT_ADD(region, mid_page) { SH_MID_PAGE };
FIXTURE_VARIANT_ADD(region, mid_page_pin) { SH_MID_PAGE, .pin = true };

FIXTURE_VARIANT_ADD(region, one_byte) { SH_ONE_BYTE };
FIXTURE_VARIANT_ADD(region, one_byte_pin) { SH_ONE_BYTE, .pin = true };

FIXTURE_VARIANT_ADD(region, two_bytes_across_pages) { SH_ACROSS_PAGES };
FIXTURE_VARIANT_ADD(region, two_bytes_across_pages_pin)
{
	SH_ACROSS_PAGES, .pin = true
};

FIXTURE_VARIANT_ADD(region, spans_three_pages) { SH_THREE_PAGES };
FIXTURE_VARIANT_ADD(region, spans_three_pages_pin)
{
	SH_THREE_PAGES, .pin = true
};

FIXTURE_VARIANT_ADD(region, whole_buffer) { SH_WHOLE_BUFFER };
FIXTURE_VARIANT_ADD(region, whole_buffer_pin)
{
	SH_WHOLE_BUFFER, .pin = true
};

FIXTURE_VARIANT_ADD(region, at_both_fences) { SH_AT_BOTH_FENCES };
FIXTURE_VARIANT_ADD(region, at_both_fences_pin)
{
	SH_AT_BOTH_FENCES, .pin = true
};

FIXTURE_VARIANT_ADD(region, several) { SH_SEVERAL };
FIXTURE_VARIANT_ADD(region, several_pin) { SH_SEVERAL, .pin = true };

FIXTURE_VARIANT_ADD(region, reversed) { SH_REVERSED };
FIXTURE_VARIANT_ADD(region, reversed_pin) { SH_REVERSED, .pin = true };

FIXTURE_VARIANT_ADD(region, empty_segments) { SH_EMPTY_SEGMENTS };
FIXTURE_VARIANT_ADD(region, empty_segments_pin)
{
	SH_EMPTY_SEGMENTS, .pin = true
};

FIXTURE_VARIANT_ADD(region, many) { .gen = 200 };
FIXTURE_VARIANT_ADD(region, many_pin) { .gen = 200, .pin = true };

FIXTURE_VARIANT_ADD(region, uio_maxiov) { .gen = 1024 };
FIXTURE_VARIANT_ADD(region, uio_maxiov_pin) { .gen = 1024, .pin = true };

FIXTURE_SETUP(region)
{
	size_t i, j, k;

	self->fd = -1;
	if (no_regions())
		SKIP(return, NO_REGIONS);
	self->buflen = BUF_PAGES * psz;
	self->map = pvm_map_anon(self->buflen + 2 * psz);
	ASSERT_TRUE(self->map != NULL);
	ASSERT_EQ(0, mprotect(self->map, psz, PROT_NONE));
	ASSERT_EQ(0, mprotect(self->map + psz + self->buflen, psz,
			      PROT_NONE));
	self->buf = self->map + psz;
	pvm_fill(self->buf, self->buflen, SEED_OWNER);

	self->nseg = variant->gen ? variant->gen : variant->nseg;
	self->iov = calloc(self->nseg, sizeof(*self->iov));
	self->covered = calloc(self->buflen, 1);
	ASSERT_TRUE(self->iov != NULL);
	ASSERT_TRUE(self->covered != NULL);
	self->size = 0;
	self->nonempty = 0;
	for (k = 0; k < (size_t)self->nseg; k++) {
		const struct rseg *s = &variant->seg[k];
		size_t off, len;

		if (variant->gen) {
			off = 13 + 15 * k;
			len = 1 + k % 9;
		} else {
			off = s->pg * psz + s->off;
			len = s->npg * psz + s->len;
		}
		ASSERT_LE(off + len, self->buflen);
		self->iov[k] = (struct iovec){ self->buf + off, len };
		for (j = off; j < off + len; j++) {
			ASSERT_EQ(0, self->covered[j]);	/* a bad table */
			self->covered[j] = 1;
		}
		self->size += len;
		self->nonempty += !!len;
	}
	self->pos = calloc(self->size, sizeof(*self->pos));
	ASSERT_TRUE(self->pos != NULL);
	for (i = 0, k = 0; k < (size_t)self->nseg; k++)
		for (j = 0; j < self->iov[k].iov_len; j++)
			self->pos[i++] = (uint8_t *)self->iov[k].iov_base -
					 self->buf + j;

	self->orig = malloc(self->buflen);
	self->model = malloc(self->buflen);
	self->out = malloc(self->size + 2 * psz);
	self->src = malloc(self->size + 2 * psz);
	ASSERT_TRUE(self->orig != NULL);
	ASSERT_TRUE(self->model != NULL);
	ASSERT_TRUE(self->out != NULL);
	ASSERT_TRUE(self->src != NULL);
	memcpy(self->orig, self->buf, self->buflen);
	memcpy(self->model, self->buf, self->buflen);
	pvm_fill(self->src, self->size + 2 * psz, SEED_SRC);

	self->fd = region_export(self->iov, self->nseg,
				 R_RW | (variant->pin ? R_PIN : 0));
	ASSERT_LE(0, self->fd) {
		TH_LOG("process_vm_export: %s", strerror(errno));
	}
}

FIXTURE_TEARDOWN(region)
{
	if (self->fd >= 0)
		close(self->fd);
	munmap(self->map, self->buflen + 2 * psz);
	free(self->iov);
	free(self->covered);
	free(self->pos);
	free(self->orig);
	free(self->model);
	free(self->out);
	free(self->src);
}

/* Index of the first of @n region bytes from @off that @p does not hold */
static long region_diff(FIXTURE_DATA(region) *self, const uint8_t *p,
			size_t off, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != self->buf[self->pos[off + i]])
			return i;
	return -1;
}

/* The model after a write of @n bytes of @src at region offset @off */
static void model_write(FIXTURE_DATA(region) *self, const uint8_t *src,
			size_t off, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		self->model[self->pos[off + i]] = src[i];
}

/*
 * The owner's buffer against the model, and the byte before and after
 * each segment against the original pattern (unless another segment
 * holds it).
 */
static void check_owner(struct __test_metadata *_metadata,
			FIXTURE_DATA(region) *self)
{
	int k;

	for (k = 0; k < self->nseg; k++) {
		long s = (uint8_t *)self->iov[k].iov_base - self->buf;
		long e = s + self->iov[k].iov_len;

		if (!self->iov[k].iov_len)
			continue;
		if (s > 0 && !self->covered[s - 1])
			EXPECT_EQ(self->orig[s - 1], self->buf[s - 1]) {
				TH_LOG("the byte before segment %d", k);
			}
		if (e < (long)self->buflen && !self->covered[e])
			EXPECT_EQ(self->orig[e], self->buf[e]) {
				TH_LOG("the byte after segment %d", k);
			}
	}
	EXPECT_EQ(-1, pvm_first_diff(self->model, self->buf, self->buflen));
}

TEST_F(region, stat_fdinfo)
{
	char want[32];
	struct rinfo ri;
	struct stat st;

	ASSERT_EQ(0, fstat(self->fd, &st));
	EXPECT_EQ((long)self->size, (long)st.st_size);
	ASSERT_EQ(0, region_fdinfo(self->fd, &ri));
	EXPECT_STREQ(num(want, self->size), ri.size);
	EXPECT_STREQ(num(want, self->nonempty), ri.segments);
	EXPECT_STREQ(num(want, variant->pin ?
			 pin_bytes(self->iov, self->nseg) : 0), ri.pinned);
	EXPECT_STREQ("rw", ri.access);
	EXPECT_STREQ("live", ri.state);
}

TEST_F(region, read_whole)
{
	EXPECT_EQ((long)self->size,
		  pvm_res(read(self->fd, self->out, self->size + psz)));
	EXPECT_EQ(-1, region_diff(self, self->out, 0, self->size));
	EXPECT_EQ(0, pvm_res(read(self->fd, self->out, psz)));
	EXPECT_EQ((long)self->size, (long)lseek(self->fd, 0, SEEK_CUR));
}

TEST_F(region, read_chunks)
{
	size_t done = 0;
	ssize_t n;

	while ((n = read(self->fd, self->out + done, 7)) > 0) {
		EXPECT_EQ(done + 7 <= self->size ? 7 : self->size - done,
			  (size_t)n);
		done += n;
		if (done > self->size)
			break;
	}
	EXPECT_EQ(0, pvm_res(n));
	EXPECT_EQ(self->size, done);
	EXPECT_EQ(-1, region_diff(self, self->out, 0, self->size));
}

/*
 * pread() from the start and around every segment boundary, 1, 2 and
 * size bytes: truncated at the end, 0 at and past it.
 */
TEST_F(region, pread_boundaries)
{
	size_t lens[] = { 1, 2, 3, self->size };
	size_t start = 0;
	int k, d, l;

	for (k = 0; k <= self->nseg; k++) {
		for (d = -1; d <= 1; d++) {
			size_t off = start + d;

			if ((long)start + d < 0)
				continue;
			for (l = 0; l < 4; l++) {
				size_t want = off >= self->size ? 0 :
					self->size - off < lens[l] ?
					self->size - off : lens[l];

				memset(self->out, 0, lens[l]);
				ASSERT_EQ((long)want,
					  pvm_res(pread(self->fd, self->out,
							lens[l], off))) {
					TH_LOG("offset %zu, %zu bytes", off,
					       lens[l]);
				}
				ASSERT_EQ(-1, region_diff(self, self->out,
							  off, want));
			}
		}
		if (k < self->nseg)
			start += self->iov[k].iov_len;
	}
	EXPECT_EQ(0, pvm_res(pread(self->fd, self->out, 1, self->size)));
	EXPECT_EQ(0, pvm_res(pread(self->fd, self->out, 1,
				   self->size + psz)));
}

TEST_F(region, preadv_split)
{
	struct iovec iov[4] = {
		{ self->out, 3 }, { self->out + 3, 1 }, { self->out + 4, 50 },
		{ self->out + 54, self->size + psz - 54 },
	};

	EXPECT_EQ((long)self->size, pvm_res(preadv(self->fd, iov, 4, 0)));
	EXPECT_EQ(-1, region_diff(self, self->out, 0, self->size));
	/* preadv2() at the file position (-1), and at offset 1 */
	ASSERT_EQ(0, lseek(self->fd, 0, SEEK_SET));
	EXPECT_EQ((long)self->size, pvm_res(preadv2(self->fd, iov, 4, -1, 0)));
	EXPECT_EQ(-1, region_diff(self, self->out, 0, self->size));
	EXPECT_EQ((long)self->size, (long)lseek(self->fd, 0, SEEK_CUR));
	EXPECT_EQ((long)self->size - 1,
		  pvm_res(preadv2(self->fd, iov, 4, 1, 0)));
	EXPECT_EQ(-1, region_diff(self, self->out, 1, self->size - 1));
}

TEST_F(region, read_straddles_end)
{
	size_t k = self->size < 3 ? self->size : 3;

	EXPECT_EQ((long)k, pvm_res(pread(self->fd, self->out, k + 10,
					 self->size - k)));
	EXPECT_EQ(-1, region_diff(self, self->out, self->size - k, k));
}

/* The owner's current bytes, not those at export */
TEST_F(region, reads_current_bytes)
{
	pvm_fill(self->buf, self->buflen, SEED_NEW);
	EXPECT_EQ((long)self->size,
		  pvm_res(pread(self->fd, self->out, self->size, 0)));
	EXPECT_EQ(-1, region_diff(self, self->out, 0, self->size));
	EXPECT_EQ(-1, pvm_check_at(self->out, 1, SEED_NEW, self->pos[0]));
}

TEST_F(region, write_whole)
{
	EXPECT_EQ((long)self->size,
		  pvm_res(pwrite(self->fd, self->src, self->size + psz, 0)));
	model_write(self, self->src, 0, self->size);
	check_owner(_metadata, self);
}

TEST_F(region, write_chunks)
{
	size_t done = 0;
	ssize_t n;

	while (done < self->size) {
		n = write(self->fd, self->src + done, 5);
		ASSERT_EQ(done + 5 <= self->size ? 5 : (long)(self->size - done),
			  pvm_res(n));
		done += n;
	}
	EXPECT_EQ(-ENOSPC, pvm_res(write(self->fd, self->src, 1)));
	model_write(self, self->src, 0, self->size);
	check_owner(_metadata, self);
}

TEST_F(region, pwritev_split)
{
	struct iovec iov[4] = {
		{ self->src, 1 }, { self->src + 1, 2 }, { self->src + 3, 100 },
		{ self->src + 103, self->size + psz - 103 },
	};
	size_t off = self->size > 1;	/* 1, but in a region of one byte */

	EXPECT_EQ((long)(self->size - off),
		  pvm_res(pwritev(self->fd, iov, 4, off)));
	model_write(self, self->src, off, self->size - off);
	check_owner(_metadata, self);
}

TEST_F(region, write_at_and_past_end)
{
	size_t k = self->size < 2 ? self->size : 2;

	EXPECT_EQ(-ENOSPC, pvm_res(pwrite(self->fd, self->src, 1,
					  self->size)));
	EXPECT_EQ(-ENOSPC, pvm_res(pwrite(self->fd, self->src, 10,
					  self->size + 1)));
	EXPECT_EQ(-ENOSPC, pvm_res(pwrite(self->fd, self->src, 1,
					  self->size + psz)));
	ASSERT_EQ((long)self->size, (long)lseek(self->fd, 0, SEEK_END));
	EXPECT_EQ(-ENOSPC, pvm_res(write(self->fd, self->src, 1)));
	check_owner(_metadata, self);

	/* Straddling the end: the bytes up to it */
	EXPECT_EQ((long)k, pvm_res(pwrite(self->fd, self->src, 10,
					  self->size - k)));
	model_write(self, self->src, self->size - k, k);
	check_owner(_metadata, self);
}

TEST_F(region, lseek)
{
	off_t size = self->size;

	EXPECT_EQ(size, lseek(self->fd, size, SEEK_SET));
	EXPECT_EQ(0, lseek(self->fd, 0, SEEK_SET));
	EXPECT_EQ(-EINVAL, pvm_res(lseek(self->fd, size + 1, SEEK_SET)));
	EXPECT_EQ(-EINVAL, pvm_res(lseek(self->fd, -1, SEEK_SET)));
	EXPECT_EQ(0, lseek(self->fd, 0, SEEK_CUR));
	EXPECT_EQ(size, lseek(self->fd, 0, SEEK_END));
	EXPECT_EQ(0, lseek(self->fd, -size, SEEK_END));
	EXPECT_EQ(-EINVAL, pvm_res(lseek(self->fd, 1, SEEK_END)));
	EXPECT_EQ(-EINVAL, pvm_res(lseek(self->fd, -size - 1, SEEK_END)));
	/* Failed seeks left the position where it was */
	EXPECT_EQ(0, lseek(self->fd, 0, SEEK_CUR));
	EXPECT_EQ(size, lseek(self->fd, size, SEEK_CUR));
	EXPECT_EQ(-EINVAL, pvm_res(lseek(self->fd, 1, SEEK_CUR)));
	EXPECT_EQ(size - 1, lseek(self->fd, -1, SEEK_CUR));
	EXPECT_EQ(-EINVAL, pvm_res(lseek(self->fd, -size, SEEK_CUR)));
	EXPECT_EQ(size - 1, lseek(self->fd, 0, SEEK_CUR));
}

/* ---- holes: the region follows the owner's mappings, unless pinned ---- */

/*
 * Three pages of the owner's, the pattern SEED_OWNER; the region of a case
 * is exported as the owner's mappings or, with PIN, as the pages of export
 * time, which holders keep seeing after the owner unmaps or maps over them.
 */
FIXTURE(holes)
{
	uint8_t *p, *out, *src;
};

FIXTURE_VARIANT(holes)
{
	unsigned int pin;	/* 0 or R_PIN */
};

FIXTURE_VARIANT_ADD(holes, mappings)
{
	.pin = 0,
};

FIXTURE_VARIANT_ADD(holes, pin)
{
	.pin = R_PIN,
};

FIXTURE_SETUP(holes)
{
	if (no_regions())
		SKIP(return, NO_REGIONS);
	self->p = pvm_map_anon(3 * psz);
	self->out = malloc(3 * psz);
	self->src = malloc(3 * psz);
	ASSERT_TRUE(self->p != NULL);
	ASSERT_TRUE(self->out != NULL);
	ASSERT_TRUE(self->src != NULL);
	pvm_fill(self->p, 3 * psz, SEED_OWNER);
	pvm_fill(self->src, 3 * psz, SEED_SRC);
}

FIXTURE_TEARDOWN(holes)
{
	if (self->p)
		munmap(self->p, 3 * psz);
	free(self->out);
	free(self->src);
}

/* A new page over page 1 of @p (munmapped or not), SEED_NEW: 0 or -errno */
static int map_new_page(uint8_t *p)
{
	if (mmap(p + psz, psz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != p + psz)
		return -errno;
	pvm_fill(p + psz, psz, SEED_NEW);
	return 0;
}

TEST_F(holes, munmapped_middle)
{
	/* [p + 10, p + 3 pages - 10), then page 1 goes */
	size_t size = 3 * psz - 20, off2 = 2 * psz - 10;
	uint8_t *p = self->p, *out = self->out, *src = self->src;
	int fd;

	fd = export1(p + 10, size, R_RW | variant->pin);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, munmap(p + psz, psz));

	if (!variant->pin) {
		/* Up to the hole; nothing from it; what follows it */
		EXPECT_EQ((long)psz - 10, pvm_res(pread(fd, out, size, 0)));
		EXPECT_EQ(-1, pvm_first_diff(out, p + 10, psz - 10));
		EXPECT_EQ(-EFAULT, pvm_res(pread(fd, out, 10, psz - 10)));
		EXPECT_EQ(-EFAULT, pvm_res(pread(fd, out, size, psz)));
		EXPECT_EQ((long)(size - off2),
			  pvm_res(pread(fd, out, size, off2)));
		EXPECT_EQ(-1, pvm_first_diff(out, p + 2 * psz, size - off2));

		EXPECT_EQ((long)psz - 10, pvm_res(pwrite(fd, src, size, 0)));
		EXPECT_EQ(-1, pvm_first_diff(src, p + 10, psz - 10));
		EXPECT_EQ(-EFAULT, pvm_res(pwrite(fd, src, 1, psz - 10)));
		EXPECT_EQ(-1, pvm_check_at(p + 2 * psz, psz, SEED_OWNER,
					   2 * psz));
	} else {
		/* Every byte of export time, the unmapped page's too */
		EXPECT_EQ((long)size, pvm_res(pread(fd, out, size, 0)));
		EXPECT_EQ(-1, pvm_check_at(out, size, SEED_OWNER, 10));
		/* Written into pages 0 and 2, which the owner still maps */
		EXPECT_EQ((long)size, pvm_res(pwrite(fd, src, size, 0)));
		EXPECT_EQ(-1, pvm_first_diff(src, p + 10, psz - 10));
		EXPECT_EQ(-1, pvm_first_diff(src + off2, p + 2 * psz,
					     size - off2));
		EXPECT_EQ(-1, pvm_check_at(p + 3 * psz - 10, 10, SEED_OWNER,
					   3 * psz - 10));
		EXPECT_EQ((long)size, pvm_res(pread(fd, out, size, 0)));
		EXPECT_EQ(-1, pvm_first_diff(out, src, size));
	}
	EXPECT_EQ(-1, pvm_check(p, 10, SEED_OWNER));

	/* A new mapping in the hole: what the region then reads, or not */
	ASSERT_EQ(0, map_new_page(p));
	EXPECT_EQ((long)size, pvm_res(pread(fd, out, size, 0)));
	if (!variant->pin) {
		EXPECT_EQ(-1, pvm_first_diff(out, p + 10, size));
	} else {
		EXPECT_EQ(-1, pvm_first_diff(out, src, size));
		/* and a write does not reach the new page */
		pvm_fill(src, size, SEED_SRC + 1);
		EXPECT_EQ((long)size, pvm_res(pwrite(fd, src, size, 0)));
		EXPECT_EQ(-1, pvm_check(p + psz, psz, SEED_NEW));
		EXPECT_EQ(-1, pvm_first_diff(src, p + 10, psz - 10));
	}
	close(fd);
}

/* Over a page that is still mapped: MAP_FIXED replaces it */
TEST_F(holes, mmap_over)
{
	size_t size = 3 * psz - 20;
	int fd;

	fd = export1(self->p + 10, size, R_READ | variant->pin);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, map_new_page(self->p));
	EXPECT_EQ((long)size, pvm_res(pread(fd, self->out, size, 0)));
	if (variant->pin) {
		EXPECT_EQ(-1, pvm_check_at(self->out, size, SEED_OWNER, 10));
	} else {
		EXPECT_EQ(-1, pvm_first_diff(self->out, self->p + 10, size));
		EXPECT_EQ(-1, pvm_check(self->out + psz - 10, psz, SEED_NEW));
	}
	close(fd);
}

TEST_F(holes, munmapped_segment)
{
	uint8_t *p = self->p, *out = self->out;
	struct iovec iov[3];
	int fd;

	iov[0] = (struct iovec){ p + 100, 50 };
	iov[1] = (struct iovec){ p + psz + 5, 60 };
	iov[2] = (struct iovec){ p + 2 * psz + 7, 70 };
	fd = region_export(iov, 3, R_READ | variant->pin);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, munmap(p + psz, psz));

	if (variant->pin) {
		EXPECT_EQ(180, pvm_res(pread(fd, out, 256, 0)));
		EXPECT_EQ(-1, pvm_check_at(out, 50, SEED_OWNER, 100));
		EXPECT_EQ(-1, pvm_check_at(out + 50, 60, SEED_OWNER,
					   psz + 5));
		EXPECT_EQ(-1, pvm_check_at(out + 110, 70, SEED_OWNER,
					   2 * psz + 7));
		close(fd);
		return;
	}
	EXPECT_EQ(50, pvm_res(pread(fd, out, 256, 0)));
	EXPECT_EQ(-1, pvm_first_diff(out, p + 100, 50));
	EXPECT_EQ(-EFAULT, pvm_res(pread(fd, out, 256, 50)));
	EXPECT_EQ(-EFAULT, pvm_res(pread(fd, out, 1, 109)));
	EXPECT_EQ(70, pvm_res(pread(fd, out, 256, 110)));
	EXPECT_EQ(-1, pvm_first_diff(out, p + 2 * psz + 7, 70));
	close(fd);
}

TEST_F(holes, unmapped_at_export)
{
	uint8_t *hole, out[64];
	int fd;

	hole = pvm_hole(2 * psz);
	ASSERT_TRUE(hole != NULL);
	fd = export1(hole + psz - 32, 64, R_READ | variant->pin);
	if (variant->pin) {
		/* Nothing to pin */
		EXPECT_EQ(-EFAULT, pvm_res(fd));
		if (fd >= 0)
			close(fd);
		return;
	}
	ASSERT_LE(0, fd) {
		TH_LOG("an unmapped range: %s", strerror(errno));
	}
	EXPECT_EQ(-EFAULT, pvm_res(pread(fd, out, sizeof(out), 0)));
	ASSERT_TRUE(mmap(hole, 2 * psz, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			 -1, 0) == hole);
	pvm_fill(hole, 2 * psz, SEED_NEW);
	EXPECT_EQ(64, pvm_res(pread(fd, out, sizeof(out), 0)));
	EXPECT_EQ(-1, pvm_first_diff(out, hole + psz - 32, 64));
	close(fd);
	munmap(hole, 2 * psz);
}

/*
 * A read-only mapping: a writable region cannot write it; with PIN it
 * cannot even be exported writable, as nothing could pin it for writing.
 */
TEST_F(holes, readonly_mapping)
{
	int fd;

	ASSERT_EQ(0, mprotect(self->p, 3 * psz, PROT_READ));
	fd = export1(self->p + 10, psz, R_RW | variant->pin);
	if (variant->pin) {
		EXPECT_EQ(-EFAULT, pvm_res(fd));
		if (fd >= 0)
			close(fd);
		fd = export1(self->p + 10, psz, R_READ | variant->pin);
	}
	ASSERT_LE(0, fd) {
		TH_LOG("process_vm_export: %s", strerror(errno));
	}
	EXPECT_EQ((long)psz, pvm_res(pread(fd, self->out, psz, 0)));
	EXPECT_EQ(-1, pvm_check_at(self->out, psz, SEED_OWNER, 10));
	/* Not the mapping's to write; with PIN, a read-only region's */
	EXPECT_EQ(variant->pin ? -EBADF : -EFAULT,
		  pvm_res(pwrite(fd, self->src, psz, 0)));
	EXPECT_EQ(-1, pvm_check(self->p, 3 * psz, SEED_OWNER));
	close(fd);
}

/* ---- RWF_NOWAIT ------------------------------------------------------- */

/*
 * The second of two pages is registered with userfaultfd (missing) and
 * never touched: a read that faulted it in would wait for this thread,
 * which counts the faults and resolves them, so that a read that should
 * not have waited still returns.
 */
struct resolver {
	int uffd;
	int stop;
	int faults;
	uint8_t *zero;
};

static void *resolve_faults(void *arg)
{
	struct resolver *r = arg;
	struct uffd_msg msg;

	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		if (pvm_uffd_next_fault(r->uffd, 20, &msg))
			continue;
		__atomic_add_fetch(&r->faults, 1, __ATOMIC_ACQ_REL);
		pvm_uffd_copy(r->uffd, msg.arg.pagefault.address & ~(psz - 1),
			      r->zero, psz);
	}
	return NULL;
}

TEST(nowait)
{
	struct resolver r = { .uffd = -1 };
	struct iovec iov;
	pthread_t th;
	uint8_t *p, *out;
	long ret;
	int fd;

	if (no_regions())
		SKIP(return, NO_REGIONS);
	p = pvm_map_anon(2 * psz);
	out = malloc(2 * psz);
	r.zero = calloc(1, psz);
	ASSERT_TRUE(p != NULL);
	ASSERT_TRUE(out != NULL);
	ASSERT_TRUE(r.zero != NULL);
	pvm_fill(p, psz, SEED_OWNER);
	/* What is not resident is the owner's page, not this buffer */
	memset(out, 0, 2 * psz);
	r.uffd = pvm_uffd_register(p + psz, psz, 0, O_CLOEXEC | O_NONBLOCK);
	if (r.uffd < 0)
		SKIP(return, "userfaultfd: %s", strerror(-r.uffd));
	fd = export1(p, 2 * psz, R_READ);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pthread_create(&th, NULL, resolve_faults, &r));

	/* Resident: the bytes */
	iov = (struct iovec){ out, psz };
	EXPECT_EQ((long)psz, pvm_res(preadv2(fd, &iov, 1, 0, RWF_NOWAIT)));
	EXPECT_EQ(-1, pvm_first_diff(out, p, psz));
	/* Not there: EAGAIN, and no fault */
	EXPECT_EQ(-EAGAIN, pvm_res(preadv2(fd, &iov, 1, psz, RWF_NOWAIT)));
	EXPECT_EQ(0, __atomic_load_n(&r.faults, __ATOMIC_ACQUIRE));
	/* Both: the resident page's bytes or EAGAIN, never a wait */
	iov.iov_len = 2 * psz;
	ret = pvm_res(preadv2(fd, &iov, 1, 0, RWF_NOWAIT));
	EXPECT_TRUE(ret == (long)psz || ret == -EAGAIN) {
		TH_LOG("preadv2(RWF_NOWAIT) across the missing page: %ld",
		       ret);
	}
	EXPECT_EQ(0, __atomic_load_n(&r.faults, __ATOMIC_ACQUIRE));
	/* Without the flag the read faults the page in, and waits for it */
	EXPECT_EQ((long)psz, pvm_res(pread(fd, out, psz, psz)));
	EXPECT_EQ(1, __atomic_load_n(&r.faults, __ATOMIC_ACQUIRE));
	EXPECT_EQ(-1, pvm_check_byte(out, psz, 0));

	__atomic_store_n(&r.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	close(fd);
	close(r.uffd);
	munmap(p, 2 * psz);
	free(out);
	free(r.zero);
}

/* ---- holders ---------------------------------------------------------- */

/* A single-segment region of @len bytes at REG_OFF into @buf */
struct single {
	uint8_t *buf;
	size_t len;
	int fd;
};

static int single_init(struct single *s, size_t len, unsigned int flags)
{
	s->len = len;
	s->buf = pvm_map_anon(REG_OFF + len + psz);
	if (!s->buf)
		return -errno;
	pvm_fill(s->buf, REG_OFF + len + 1, SEED_OWNER);
	s->fd = flags ? export1(s->buf + REG_OFF, len, flags) : -1;
	return flags && s->fd < 0 ? -errno : 0;
}

static void single_exit(struct single *s)
{
	if (s->fd >= 0)
		close(s->fd);
	munmap(s->buf, REG_OFF + s->len + psz);
}

/* A forked child inherits the fd: it reads and writes, but cannot revoke */
TEST(holder_forked)
{
	struct pvm_target t;
	struct single s;
	uint8_t *b;

	if (no_regions())
		SKIP(return, NO_REGIONS);
	ASSERT_EQ(0, single_init(&s, 2 * psz, R_RW));
	b = s.buf;
	ASSERT_EQ(0, pvm_target_start(&t, NULL, 0, 0, 0));

	EXPECT_EQ(-EPERM, pvm_target_call(&t, cmd_revoke, s.fd, 0, 0));
	/* The owner's bytes now, not the child's copy */
	pvm_fill(b, REG_OFF + s.len + 1, SEED_NEW);
	EXPECT_EQ((long)s.len, pvm_target_call(&t, cmd_read_check, s.fd,
					       s.len, SEED_NEW));
	EXPECT_EQ((long)s.len, pvm_target_call(&t, cmd_write_fill, s.fd,
					       s.len, SEED_SRC));
	EXPECT_EQ(-1, pvm_check_at(b + REG_OFF, s.len, SEED_SRC, REG_OFF));
	EXPECT_EQ(-1, pvm_check_at(b + REG_OFF - 1, 1, SEED_NEW, REG_OFF - 1));
	EXPECT_EQ(-1, pvm_check_at(b + REG_OFF + s.len, 1, SEED_NEW,
				   REG_OFF + s.len));
	EXPECT_EQ(getpid(), pvm_target_call(&t, cmd_fdinfo_owner, s.fd, 0, 0));

	/* The owner's revocation reaches the child's copy of the fd */
	EXPECT_EQ(0, ioctl(s.fd, PROCESS_VM_REGION_REVOKE));
	EXPECT_EQ(-ENXIO, pvm_target_call(&t, cmd_read_check, s.fd, s.len,
					  SEED_SRC));
	EXPECT_EQ(-ENXIO, pvm_target_call(&t, cmd_write_fill, s.fd, s.len,
					  SEED_OWNER));
	EXPECT_EQ(-1, pvm_check_at(b + REG_OFF, s.len, SEED_SRC, REG_OFF));
	pvm_target_stop(&t);
	single_exit(&s);
}

/* A process that got the fd by SCM_RIGHTS: the same */
TEST(holder_scm_rights)
{
	struct pvm_target t;
	struct single s;
	long cfd;

	if (no_regions())
		SKIP(return, NO_REGIONS);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock));
	ASSERT_EQ(0, single_init(&s, psz, 0));
	/* Started before the export: it inherits no region fd */
	ASSERT_EQ(0, pvm_target_start(&t, NULL, 0, 0, 0));
	s.fd = export1(s.buf + REG_OFF, s.len, R_READ);
	ASSERT_LE(0, s.fd);
	ASSERT_EQ(0, pvm_send_fd(sock[0], s.fd));
	cfd = pvm_target_call(&t, cmd_recv_fd, 1, 0, 0);
	ASSERT_LE(0, cfd);

	EXPECT_EQ(-EPERM, pvm_target_call(&t, cmd_revoke, cfd, 0, 0));
	EXPECT_EQ((long)s.len, pvm_target_call(&t, cmd_read_check, cfd,
					       s.len, SEED_OWNER));
	EXPECT_EQ(getpid(), pvm_target_call(&t, cmd_fdinfo_owner, cfd, 0, 0));
	EXPECT_EQ(0, ioctl(s.fd, PROCESS_VM_REGION_REVOKE));
	EXPECT_EQ(-ENXIO, pvm_target_call(&t, cmd_read_check, cfd, s.len,
					  SEED_OWNER));
	pvm_target_stop(&t);
	single_exit(&s);
}

/*
 * The owner is a child that exports its copy of a buffer and sends the fd
 * to this process: the holder's fd, or -errno; the owner's fd (a number in
 * the owner) in *@ofd if @ofd is not NULL.
 */
static long owner_start(struct pvm_target *t, struct clone_args *args,
			pvm_fn setup, struct single *s, unsigned int flags,
			long *ofd)
{
	long ret;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock))
		return -errno;
	ret = single_init(s, psz, 0);
	if (ret)
		return ret;
	ret = pvm_target_start_clone(t, args, setup, 0, 0, 0);
	if (ret)
		return ret;
	ret = pvm_target_call(t, cmd_export_send, (unsigned long)s->buf,
			      s->len, flags);
	if (ret < 0)
		return ret;
	if (ofd)
		*ofd = ret;
	return pvm_recv_fd(sock[0]);
}

TEST(owner_exit)
{
	struct pvm_target t;
	struct single s;
	char want[32];
	struct rinfo ri;
	int fd;

	if (no_regions())
		SKIP(return, NO_REGIONS);
	fd = owner_start(&t, NULL, NULL, &s, R_READ, NULL);
	ASSERT_LE(0, fd);
	EXPECT_EQ((long)s.len, cmd_read_check(NULL, fd, s.len, SEED_OWNER));
	ASSERT_EQ(0, region_fdinfo(fd, &ri));
	EXPECT_STREQ(num(want, t.pid), ri.owner);
	EXPECT_STREQ("live", ri.state);
	EXPECT_EQ(-EPERM, cmd_revoke(NULL, fd, 0, 0));

	pvm_target_send(&t, pvm_cmd_exit, 0, 0, 0);
	ASSERT_EQ(0, pvm_wait_zombie(t.pid));
	/* Exited, not yet reaped */
	EXPECT_EQ(-ENXIO, cmd_read_check(NULL, fd, s.len, SEED_OWNER));
	ASSERT_EQ(0, region_fdinfo(fd, &ri));
	EXPECT_STREQ("revoked", ri.state);
	pvm_target_stop(&t);
	EXPECT_EQ(-ENXIO, cmd_read_check(NULL, fd, s.len, SEED_OWNER));
	ASSERT_EQ(0, region_fdinfo(fd, &ri));
	EXPECT_STREQ("revoked", ri.state);
	close(fd);
	single_exit(&s);
}

TEST(owner_exec)
{
	int ep[2], go[2], fd, err = 0;
	struct single s;
	struct rinfo ri;
	pid_t pid;
	char c = 0;

	if (no_regions())
		SKIP(return, NO_REGIONS);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock));
	ASSERT_EQ(0, pipe2(ep, O_CLOEXEC));
	ASSERT_EQ(0, pipe2(go, O_CLOEXEC));
	ASSERT_EQ(0, single_init(&s, psz, 0));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		err = cmd_export_send(NULL, (unsigned long)s.buf, s.len,
				      R_READ);
		if (err >= 0 && read(go[0], &c, 1) == 1) {
			/* ep[1] closes when the exec is done */
			execl("/bin/sleep", "sleep", "60", (char *)NULL);
			err = -errno;
		}
		pvm_write_full(ep[1], &err, sizeof(err));
		_exit(1);
	}
	close(ep[1]);
	fd = pvm_recv_fd(sock[0]);
	ASSERT_LE(0, fd);
	EXPECT_EQ((long)s.len, cmd_read_check(NULL, fd, s.len, SEED_OWNER));

	ASSERT_EQ(1, write(go[1], &c, 1));
	ASSERT_EQ(-EPIPE, pvm_read_full(ep[0], &err, sizeof(err))) {
		TH_LOG("the owner did not exec: %s", strerror(-err));
	}
	EXPECT_EQ(-ENXIO, cmd_read_check(NULL, fd, s.len, SEED_OWNER));
	ASSERT_EQ(0, region_fdinfo(fd, &ri));
	EXPECT_STREQ("revoked", ri.state);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(fd);
	single_exit(&s);
}

/*
 * In a new pid and mount namespace: a /proc of that pid namespace, so that
 * the reader's pid namespace and that of the /proc it reads are the same.
 */
static long setup_own_proc(struct pvm_target *t, unsigned long a,
			   unsigned long b, unsigned long c)
{
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  NULL))
		return -errno;
	return getpid() == 1 ? 0 : -ESRCH;
}

/* fdinfo's owner is the exporter's pid in the reader's namespace */
TEST(fdinfo_owner_pidns)
{
	struct clone_args args = {
		.flags = CLONE_NEWPID | CLONE_NEWNS,
		.exit_signal = SIGCHLD,
	};
	struct pvm_target t;
	struct single s;
	long ofd;
	int fd;

	if (no_regions())
		SKIP(return, NO_REGIONS);
	if (geteuid())
		SKIP(return, "a new pid namespace needs root");
	fd = owner_start(&t, &args, setup_own_proc, &s, R_READ, NULL);
	if (fd == -EPERM || fd == -EINVAL || fd == -ENOSPC)
		SKIP(return, "clone3(CLONE_NEWPID | CLONE_NEWNS): %s",
		     strerror(-fd));
	ASSERT_LE(0, fd);
	EXPECT_EQ(t.pid, cmd_fdinfo_owner(NULL, fd, 0, 0));
	/* The owner's own fd, as seen from inside: pid 1 */
	ofd = pvm_target_call(&t, cmd_export_send, (unsigned long)s.buf,
			      s.len, R_READ);
	ASSERT_LE(0, ofd);
	EXPECT_EQ(1, pvm_target_call(&t, cmd_fdinfo_owner, ofd, 0, 0));
	EXPECT_EQ((long)s.len, cmd_read_check(NULL, fd, s.len, SEED_OWNER));
	pvm_target_stop(&t);
	close(fd);
	fd = pvm_recv_fd(sock[0]);
	if (fd >= 0)
		close(fd);
	single_exit(&s);
}

/* ---- holders that process_vm_readv(2) refuses ------------------------- */

/* (a) Another uid, no capabilities: a fork()ed child that setuid()s */
TEST(noptrace_other_uid)
{
	struct pvm_target t;
	struct single s;
	unsigned long a;

	if (no_regions())
		SKIP(return, NO_REGIONS);
	if (geteuid())
		SKIP(return, "setuid() to another uid needs root");
	ASSERT_EQ(0, single_init(&s, psz, R_RW));
	a = (unsigned long)s.buf + REG_OFF;
	ASSERT_EQ(0, pvm_target_start(&t, setup_nobody, 0, 0, 0));

	EXPECT_EQ(-EPERM, pvm_target_call(&t, cmd_pvm, getpid(), a, 0));
	EXPECT_EQ(-EPERM, pvm_target_call(&t, cmd_pvm, getpid(), a, 1));
	pvm_fill(s.buf, REG_OFF + s.len + 1, SEED_NEW);
	EXPECT_EQ((long)s.len, pvm_target_call(&t, cmd_read_check, s.fd,
					       s.len, SEED_NEW));
	EXPECT_EQ((long)s.len, pvm_target_call(&t, cmd_write_fill, s.fd,
					       s.len, SEED_SRC));
	EXPECT_EQ(-1, pvm_check_at(s.buf + REG_OFF, s.len, SEED_SRC, REG_OFF));
	EXPECT_EQ(-EPERM, pvm_target_call(&t, cmd_revoke, s.fd, 0, 0));
	pvm_target_stop(&t);
	single_exit(&s);
}

/*
 * (b) Yama.  Scope 3 cannot be lowered once set, so this sets scope 2
 * (CAP_SYS_PTRACE only) and uses a holder without that capability: owner
 * and holder are both siblings of this process, uid 65534, dumpable, the
 * owner with PR_SET_PTRACER_ANY, so that below scope 2 nothing but Yama
 * could refuse (that is checked first, when the scope was below 2).
 */
FIXTURE(yama)
{
	long saved;
};

FIXTURE_SETUP(yama)
{
	self->saved = -1;
	if (no_regions())
		SKIP(return, NO_REGIONS);
	if (geteuid())
		SKIP(return, "setting Yama's ptrace_scope needs root");
	self->saved = pvm_yama_scope();
	if (self->saved == -ENOENT)
		SKIP(return, "no Yama");
	ASSERT_LE(0, self->saved);
}

FIXTURE_TEARDOWN(yama)
{
	if (self->saved >= 0 && self->saved < 2)
		pvm_write_long(PVM_YAMA_SCOPE, self->saved);
}

TEST_F(yama, noptrace_scope_2)
{
	struct pvm_target o, h;
	struct single s;
	unsigned long a;
	long fd;

	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock));
	ASSERT_EQ(0, single_init(&s, psz, 0));
	a = (unsigned long)s.buf + REG_OFF;
	ASSERT_EQ(0, pvm_target_start(&o, setup_nobody, 1, 1, 0));
	ASSERT_EQ(0, pvm_target_start(&h, setup_nobody, 1, 0, 0));
	ASSERT_LE(0, pvm_target_call(&o, cmd_export_send, (unsigned long)s.buf,
				     s.len, R_READ));
	/* From the owner's end, sock[1] */
	fd = pvm_target_call(&h, cmd_recv_fd, 0, 0, 0);
	ASSERT_LE(0, fd);

	if (self->saved < 2) {
		EXPECT_EQ(1, pvm_target_call(&h, cmd_pvm, o.pid, a, 0)) {
			TH_LOG("at scope %ld, not Yama's refusal", self->saved);
		}
		ASSERT_EQ(0, pvm_write_long(PVM_YAMA_SCOPE, 2));
	}
	EXPECT_EQ(-EPERM, pvm_target_call(&h, cmd_pvm, o.pid, a, 0));
	EXPECT_EQ((long)s.len, pvm_target_call(&h, cmd_read_check, fd, s.len,
					       SEED_OWNER));
	pvm_target_stop(&h);
	pvm_target_stop(&o);
	single_exit(&s);
}

/* (c) A seccomp filter that fails process_vm_readv/writev with EPERM */
TEST(noptrace_seccomp)
{
	struct pvm_target t;
	struct single s;
	unsigned long a;
	long ret;

	if (no_regions())
		SKIP(return, NO_REGIONS);
	ASSERT_EQ(0, single_init(&s, psz, R_RW));
	a = (unsigned long)s.buf + REG_OFF;
	ret = pvm_target_start(&t, setup_seccomp, 0, 0, 0);
	if (ret < 0 && pvm_syscall_missing(-ret)) {
		pvm_target_stop(&t);
		single_exit(&s);
		SKIP(return, "seccomp(2): not in this kernel");
	}
	ASSERT_EQ(0, ret);

	EXPECT_EQ(-EPERM, pvm_target_call(&t, cmd_pvm, getpid(), a, 0));
	EXPECT_EQ(-EPERM, pvm_target_call(&t, cmd_pvm, getpid(), a, 1));
	pvm_fill(s.buf, REG_OFF + s.len + 1, SEED_NEW);
	EXPECT_EQ((long)s.len, pvm_target_call(&t, cmd_read_check, s.fd,
					       s.len, SEED_NEW));
	EXPECT_EQ((long)s.len, pvm_target_call(&t, cmd_write_fill, s.fd,
					       s.len, SEED_SRC));
	EXPECT_EQ(-1, pvm_check_at(s.buf + REG_OFF, s.len, SEED_SRC, REG_OFF));
	pvm_target_stop(&t);
	single_exit(&s);
}

/* ---- PIN: RLIMIT_MEMLOCK ---------------------------------------------- */

#define MEMLOCK_PAGES	8

/* RLIMIT_MEMLOCK of @pages pages, then uid 65534 if @nobody */
static long setup_memlock(struct pvm_target *t, unsigned long pages,
			  unsigned long nobody, unsigned long c)
{
	struct rlimit rl = { .rlim_cur = pages * psz, .rlim_max = pages * psz };

	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		return -errno;
	return nobody ? setup_nobody(t, 0, 0, 0) : 0;
}

/* In a target: export [@addr, + @len) with @flags, the fd or -errno */
static long cmd_export(struct pvm_target *t, unsigned long addr,
		       unsigned long len, unsigned long flags)
{
	int fd = export1((void *)addr, len, flags);

	return fd < 0 ? -errno : fd;
}

static long cmd_close(struct pvm_target *t, unsigned long fd,
		      unsigned long b, unsigned long c)
{
	return close(fd) ? -errno : 0;
}

#define PIN_EXPORT(t, addr, len)					\
	pvm_target_call(t, cmd_export, (unsigned long)(addr), len,	\
			R_READ | R_PIN)

/*
 * The pinned pages are charged to the exporting user (uid 65534, no
 * CAP_IPC_LOCK) up to RLIMIT_MEMLOCK, each page a segment spans, and the
 * charge comes back on the last close, on revoke and when the export
 * fails.
 */
TEST(pin_memlock)
{
	struct pvm_target t;
	long fd1, fd2;
	uint8_t *buf;
	size_t lim;

	if (no_regions())
		SKIP(return, NO_REGIONS);
	if (geteuid())
		SKIP(return, "setuid() to another uid needs root");
	lim = MEMLOCK_PAGES * psz;
	/* Two limits' worth and a page, the last page unmapped */
	buf = pvm_map_anon(2 * lim + psz);
	ASSERT_TRUE(buf != NULL);
	pvm_fill(buf, 2 * lim, SEED_OWNER);
	ASSERT_EQ(0, munmap(buf + 2 * lim, psz));
	ASSERT_EQ(0, pvm_target_start(&t, setup_memlock, MEMLOCK_PAGES, 1,
				      0));

	EXPECT_EQ(-ENOMEM, PIN_EXPORT(&t, buf, lim + psz));
	EXPECT_EQ(-ENOMEM, PIN_EXPORT(&t, buf + psz - 1, lim - psz + 2));
	fd1 = PIN_EXPORT(&t, buf, lim);
	ASSERT_LE(0, fd1);
	EXPECT_EQ(-ENOMEM, PIN_EXPORT(&t, buf + lim, lim));
	EXPECT_EQ(-ENOMEM, PIN_EXPORT(&t, buf + lim, 1));
	/* Not pinned, not charged */
	fd2 = pvm_target_call(&t, cmd_export, (unsigned long)buf + lim, lim,
			      R_READ);
	EXPECT_LE(0, fd2);
	EXPECT_EQ(0, pvm_target_call(&t, cmd_close, fd2, 0, 0));

	/* Closed: the charge is back */
	EXPECT_EQ(0, pvm_target_call(&t, cmd_close, fd1, 0, 0));
	fd1 = PIN_EXPORT(&t, buf + lim, lim);
	ASSERT_LE(0, fd1);
	EXPECT_EQ(-ENOMEM, PIN_EXPORT(&t, buf, 1));

	/* Revoked, the fd still open: back as well */
	EXPECT_EQ(0, pvm_target_call(&t, cmd_revoke, fd1, 0, 0));
	fd2 = PIN_EXPORT(&t, buf, lim);
	ASSERT_LE(0, fd2);
	EXPECT_EQ(-ENOMEM, PIN_EXPORT(&t, buf + lim, 1));
	EXPECT_EQ(0, pvm_target_call(&t, cmd_close, fd2, 0, 0));
	EXPECT_EQ(0, pvm_target_call(&t, cmd_close, fd1, 0, 0));

	/* Two bytes across a page boundary are two pages */
	fd1 = PIN_EXPORT(&t, buf, lim - psz);
	ASSERT_LE(0, fd1);
	EXPECT_EQ(-ENOMEM, PIN_EXPORT(&t, buf + lim - 1, 2));
	fd2 = PIN_EXPORT(&t, buf + lim - 1, 1);
	EXPECT_LE(0, fd2);
	EXPECT_EQ(0, pvm_target_call(&t, cmd_close, fd2, 0, 0));
	EXPECT_EQ(0, pvm_target_call(&t, cmd_close, fd1, 0, 0));

	/* A failed pin returns its charge: the last page is not there */
	EXPECT_EQ(-EFAULT, PIN_EXPORT(&t, buf + lim + psz, lim));
	fd1 = PIN_EXPORT(&t, buf, lim);
	EXPECT_LE(0, fd1);
	pvm_target_stop(&t);

	/* CAP_IPC_LOCK: no limit, even of 0 */
	ASSERT_EQ(0, pvm_target_start(&t, setup_memlock, 0, 0, 0));
	fd1 = PIN_EXPORT(&t, buf, 2 * lim);
	EXPECT_LE(0, fd1);
	pvm_target_stop(&t);
	munmap(buf, 2 * lim);
}

/* ---- revoke while a holder waits for a fault of its own --------------- */

/*
 * A holder (a thread of the owner's, a forked child, or an io_uring READ
 * in io-wq) reads the region's two pages into a buffer whose first or
 * second page is userfaultfd-registered and missing, and nobody resolves
 * it for now: the holder waits in that fault.  The owner's revoke must not
 * wait for it.
 */
FIXTURE(stuck)
{
	struct single s;
	uint8_t *hb;		/* the holder's buffer, 2 pages */
	uint8_t *missing;	/* its missing page */
	uint8_t *zero;		/* a page of zeros to resolve it with */
	struct pvm_ring ring;
	struct pvm_target t;	/* the child holder */
	int uffd;
};

FIXTURE_VARIANT(stuck)
{
	unsigned int pin;	/* 0 or R_PIN */
	bool first_resident;	/* the first page there, the second missing */
	bool uring;		/* an IORING_OP_READ, ended by ASYNC_CANCEL */
	bool child;		/* the holder a child, with its own uffd */
};

FIXTURE_VARIANT_ADD(stuck, pread_first_missing)
{
	.pin = 0,
};

FIXTURE_VARIANT_ADD(stuck, pread_first_missing_pin)
{
	.pin = R_PIN,
};

FIXTURE_VARIANT_ADD(stuck, pread_second_missing)
{
	.first_resident = true,
};

FIXTURE_VARIANT_ADD(stuck, pread_second_missing_pin)
{
	.pin = R_PIN, .first_resident = true,
};

FIXTURE_VARIANT_ADD(stuck, child_first_missing)
{
	.child = true,
};

FIXTURE_VARIANT_ADD(stuck, child_second_missing_pin)
{
	.pin = R_PIN, .first_resident = true, .child = true,
};

FIXTURE_VARIANT_ADD(stuck, uring_read)
{
	.uring = true,
};

FIXTURE_VARIANT_ADD(stuck, uring_read_pin)
{
	.pin = R_PIN, .uring = true,
};

/*
 * In a child holder: register its own [@addr, + @len) with a new
 * userfaultfd and send that to the parent on sock[1]: 0 or -errno.
 */
static long cmd_uffd_send(struct pvm_target *t, unsigned long addr,
			  unsigned long len, unsigned long c)
{
	int uffd = pvm_uffd_register((void *)addr, len, 0,
				     O_CLOEXEC | O_NONBLOCK);
	int ret;

	if (uffd < 0)
		return uffd;
	ret = pvm_send_fd(sock[1], uffd);
	close(uffd);
	return ret;
}

FIXTURE_SETUP(stuck)
{
	long ret;

	self->s.fd = -1;
	self->uffd = -1;
	self->ring.fd = -1;
	self->t.pid = -1;
	if (no_regions())
		SKIP(return, NO_REGIONS);
	ASSERT_EQ(0, single_init(&self->s, 2 * psz, R_READ | variant->pin));
	self->hb = pvm_map_anon(2 * psz);
	self->zero = calloc(1, psz);
	ASSERT_TRUE(self->hb != NULL);
	ASSERT_TRUE(self->zero != NULL);
	if (variant->first_resident)
		memset(self->hb, 0, psz);
	self->missing = self->hb + (variant->first_resident ? psz : 0);
	if (variant->child) {
		/* It inherits the region's fd */
		ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0,
					sock));
		ASSERT_EQ(0, pvm_target_start(&self->t, NULL, 0, 0, 0));
		/* Its own copy of the first page, not the parent's (COW) */
		if (variant->first_resident)
			ASSERT_EQ(0, pvm_target_call(&self->t, pvm_cmd_memset,
						     (unsigned long)self->hb,
						     psz, 0));
		ret = pvm_target_call(&self->t, cmd_uffd_send,
				      (unsigned long)self->missing, psz, 0);
		self->uffd = ret ? ret : pvm_recv_fd(sock[0]);
	} else {
		self->uffd = pvm_uffd_register(self->missing, psz, 0,
					       O_CLOEXEC | O_NONBLOCK);
	}
	if (self->uffd < 0)
		SKIP(return, "userfaultfd: %s", strerror(-self->uffd));
	if (variant->uring) {
		ret = pvm_ring_init(&self->ring);
		if (ret)
			SKIP(return, "io_uring_setup: %s", strerror(-ret));
	}
}

FIXTURE_TEARDOWN(stuck)
{
	pvm_target_kill(&self->t);
	if (self->uffd >= 0)
		close(self->uffd);
	pvm_ring_exit(&self->ring);
	single_exit(&self->s);
	if (self->hb)
		munmap(self->hb, 2 * psz);
	free(self->zero);
}

struct holder_read {
	int fd;
	void *buf;
	size_t len;
	long ret;
};

static void *holder_pread(void *arg)
{
	struct holder_read *h = arg;

	h->ret = pvm_res(pread(h->fd, h->buf, h->len, 0));
	return NULL;
}

static long cmd_pread(struct pvm_target *t, unsigned long fd,
		      unsigned long buf, unsigned long len)
{
	return pvm_res(pread(fd, (void *)buf, len, 0));
}

/*
 * The holder's two pages after the read: the region's first page (if it
 * was resident, REG_OFF on of SEED_OWNER), then the page of zeros that
 * resolved the fault.  -1, or the index of the first byte that differs.
 */
static long holder_buf_check(const uint8_t *hb, bool first_resident)
{
	long ret;

	if (first_resident) {
		ret = pvm_check_at(hb, psz, SEED_OWNER, REG_OFF);
		if (ret >= 0)
			return ret;
		hb += psz;
	}
	ret = pvm_check_byte(hb, psz, 0);
	return ret < 0 ? -1 : ret + (first_resident ? (long)psz : 0);
}

static long cmd_holder_buf_check(struct pvm_target *t, unsigned long hb,
				 unsigned long first_resident, unsigned long c)
{
	return holder_buf_check((const uint8_t *)hb, first_resident);
}

/* The answer of @t within @ms milliseconds, or -ETIMEDOUT */
static long target_recv_within(struct pvm_target *t, int ms)
{
	struct pollfd pfd = { .fd = t->resp, .events = POLLIN };

	if (poll(&pfd, 1, ms) != 1)
		return -ETIMEDOUT;
	return pvm_target_recv(t);
}

/* Join @th within @ms milliseconds: 0, or ETIMEDOUT */
static int join_within(pthread_t th, int ms, void **ret)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return pthread_timedjoin_np(th, ret, &ts);
}

/* The next page fault on @uffd within @ms: 0, or -errno (-ETIMEDOUT) */
static int wait_fault(int uffd, int ms, struct uffd_msg *msg)
{
	long long end = pvm_now_ms() + ms;
	int ret;

	do {
		ret = pvm_uffd_next_fault(uffd, ms, msg);
	} while (ret == -EAGAIN && pvm_now_ms() < end);
	return ret;
}

/* An IORING_OP_READ of @len bytes at 0 from @fd into @buf */
static void sqe_read(struct io_uring_sqe *sqe, int fd, void *buf, size_t len,
		     uint64_t user_data)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = IORING_OP_READ;
	sqe->fd = fd;
	sqe->addr = (uintptr_t)buf;
	sqe->len = len;
	sqe->user_data = user_data;
}

TEST_F(stuck, revoke)
{
	struct holder_read h = {
		.fd = self->s.fd, .buf = self->hb, .len = 2 * psz,
	};
	long res[3] = { PVM_RING_NO_CQE, PVM_RING_NO_CQE, PVM_RING_NO_CQE };
	struct io_uring_sqe sqe;
	struct uffd_msg msg;
	pthread_t holder, rev;
	uint64_t ud;
	void *rret;
	long long t0, ms;
	int i, joined;

	if (variant->uring) {
		sqe_read(&sqe, h.fd, h.buf, h.len, 1);
		ASSERT_EQ(0, pvm_ring_submit(&self->ring, &sqe));
	} else if (variant->child) {
		ASSERT_EQ(0, pvm_target_send(&self->t, cmd_pread, h.fd,
					     (unsigned long)h.buf, h.len));
	} else {
		ASSERT_EQ(0, pthread_create(&holder, NULL, holder_pread, &h));
	}
	/* The holder waits in its fault now */
	ASSERT_EQ(0, wait_fault(self->uffd, 5000, &msg));
	EXPECT_EQ((unsigned long)self->missing,
		  (unsigned long)msg.arg.pagefault.address & ~(psz - 1));

	t0 = pvm_now_ms();
	ASSERT_EQ(0, pthread_create(&rev, NULL, revoke_thread, &self->s.fd));
	joined = join_within(rev, 1000, &rret);
	ms = pvm_now_ms() - t0;
	if (joined) {
		/* Let it go, to report rather than hang */
		pvm_uffd_copy(self->uffd, (unsigned long)self->missing,
			      self->zero, psz);
		pthread_join(rev, &rret);
	}
	ASSERT_EQ(0, joined) {
		TH_LOG("revoke waited for the holder's fault");
	}
	EXPECT_EQ(0, (long)rret);
	EXPECT_GT(1000, ms);

	if (variant->uring) {
		/* Cancelled in io-wq: that ends the wait, with no byte read */
		memset(&sqe, 0, sizeof(sqe));
		sqe.opcode = IORING_OP_ASYNC_CANCEL;
		sqe.addr = 1;
		sqe.user_data = 2;
		ASSERT_EQ(0, pvm_ring_submit(&self->ring, &sqe));
		for (i = 0; i < 2; i++) {
			long r = pvm_ring_reap(&self->ring, 2000, &ud);

			if (r == PVM_RING_NO_CQE)
				break;
			if (ud == 1 || ud == 2)
				res[ud] = r;
		}
		EXPECT_TRUE(res[2] == 0 || res[2] == -EALREADY) {
			TH_LOG("ASYNC_CANCEL: %ld", res[2]);
		}
		EXPECT_NE(PVM_RING_NO_CQE, res[1]) {
			TH_LOG("the READ still waits for its page, 2 s after ASYNC_CANCEL");
		}
		EXPECT_TRUE(res[1] == PVM_RING_NO_CQE || res[1] == -ENXIO ||
			    res[1] == -EINTR || res[1] == -ECANCELED ||
			    res[1] == -EFAULT) {
			TH_LOG("READ: %ld", res[1]);
		}
		/* Resolved: a READ still waiting goes on into the revocation */
		EXPECT_EQ(0, pvm_uffd_copy(self->uffd,
					   (unsigned long)self->missing,
					   self->zero, psz));
		if (res[1] == PVM_RING_NO_CQE) {
			EXPECT_EQ(-ENXIO, pvm_ring_reap(&self->ring, 2000,
							NULL));
		}
		sqe_read(&sqe, h.fd, h.buf, h.len, 3);
		EXPECT_EQ(-ENXIO, pvm_ring_run(&self->ring, &sqe));
		return;
	}

	/* Resolved: the holder goes on and finds the region revoked */
	EXPECT_EQ(0, pvm_uffd_copy(self->uffd, (unsigned long)self->missing,
				   self->zero, psz));
	if (variant->child) {
		h.ret = target_recv_within(&self->t, 2000);
	} else {
		ASSERT_EQ(0, join_within(holder, 2000, NULL)) {
			TH_LOG("the holder is still waiting");
		}
	}
	/* ENXIO, or what it had read before the fault: the short count */
	EXPECT_EQ(variant->first_resident ? (long)psz : -ENXIO, h.ret);
	if (variant->child) {
		EXPECT_EQ(-1, pvm_target_call(&self->t, cmd_holder_buf_check,
					      (unsigned long)self->hb,
					      variant->first_resident, 0));
	} else {
		EXPECT_EQ(-1, holder_buf_check(self->hb,
					       variant->first_resident));
	}
}

/*
 * A region over a FUSE file whose server never answers the read: an
 * IORING_OP_READ of it waits in io-wq for the owner's page, and
 * IORING_OP_ASYNC_CANCEL ends that wait within a second with EINTR.  The
 * test is owner and holder at once.
 */
TEST(uring_read_fuse)
{
	long res[3] = { PVM_RING_NO_CQE, PVM_RING_NO_CQE, PVM_RING_NO_CQE };
	struct io_uring_sqe sqe;
	struct pvm_fuse fuse;
	struct pvm_ring ring;
	int fd, rfd, ret, i;
	long long t0;
	uint64_t ud;
	void *map;
	char buf[64];

	if (no_regions())
		SKIP(return, NO_REGIONS);
	ret = pvm_fuse_start(&fuse, 4 * psz);
	if (ret)
		SKIP(return, "no FUSE mount: %s", strerror(-ret));
	fd = open(fuse.path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	map = mmap(NULL, 4 * psz, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_TRUE(map != MAP_FAILED);
	rfd = export1(map, 4 * psz, R_READ);
	ASSERT_LE(0, rfd);
	ret = pvm_ring_init(&ring);
	if (ret) {
		pvm_ring_exit(&ring);
		pvm_fuse_stop(&fuse);
		SKIP(return, "io_uring_setup: %s", strerror(-ret));
	}

	sqe_read(&sqe, rfd, buf, sizeof(buf), 1);
	sqe.flags = IOSQE_ASYNC;
	ASSERT_EQ(0, pvm_ring_submit(&ring, &sqe));
	ASSERT_EQ(FUSE_READ, pvm_fuse_next(&fuse, 5000));

	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = IORING_OP_ASYNC_CANCEL;
	sqe.addr = 1;
	sqe.user_data = 2;
	t0 = pvm_now_ms();
	ASSERT_EQ(0, pvm_ring_submit(&ring, &sqe));
	for (i = 0; i < 2; i++) {
		long r = pvm_ring_reap(&ring, 1000, &ud);

		if (r == PVM_RING_NO_CQE)
			break;
		if (ud == 1 || ud == 2)
			res[ud] = r;
	}
	EXPECT_EQ(-EALREADY, res[2]);
	EXPECT_EQ(-EINTR, res[1]) {
		TH_LOG("READ: %ld, %lld ms after ASYNC_CANCEL", res[1],
		       pvm_now_ms() - t0);
	}
	EXPECT_GT(1000, pvm_now_ms() - t0);

	/* A READ the cancel did not end ends with the server */
	pvm_fuse_stop(&fuse);
	if (res[1] == PVM_RING_NO_CQE)
		TH_LOG("after the server: %ld", pvm_ring_reap(&ring, 5000, NULL));
	pvm_ring_exit(&ring);
	close(rfd);
	munmap(map, 4 * psz);
	close(fd);
}

/*
 * What the rst says of a job-control stop: unlike the PROCESS_VM ops, an
 * IORING_OP_READ of a region that waits in io-wq, here for a missing page
 * of the holder's buffer, is ended by a stop of its submitter, because
 * io_uring's read op cannot hand it back to be issued again: nothing read
 * yet, so EINTR.  The holder, a child with its own ring, sends its
 * userfaultfd and then the result.
 */
TEST(uring_read_stop)
{
	int sp[2], uffd, status;
	struct uffd_msg msg;
	struct pollfd pfd;
	struct single s;
	uint8_t *hb;
	long res;
	pid_t pid;

	if (no_regions())
		SKIP(return, NO_REGIONS);
	ASSERT_EQ(0, single_init(&s, 2 * psz, R_READ));
	hb = pvm_map_anon(2 * psz);
	ASSERT_TRUE(hb != NULL);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sp));
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct io_uring_sqe sqe;
		struct pvm_ring ring;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		uffd = pvm_uffd_register(hb, psz, 0, O_CLOEXEC | O_NONBLOCK);
		if (uffd < 0 || pvm_send_fd(sp[1], uffd) || pvm_ring_init(&ring))
			_exit(1);
		sqe_read(&sqe, s.fd, hb, 2 * psz, 1);
		sqe.flags |= IOSQE_ASYNC;
		if (pvm_ring_submit(&ring, &sqe))
			_exit(1);
		do
			res = pvm_ring_reap(&ring, 1000, NULL);
		while (res == PVM_RING_NO_CQE);
		_exit(pvm_write_full(sp[1], &res, sizeof(res)) ? 1 : 0);
	}
	uffd = pvm_recv_fd(sp[0]);
	ASSERT_LE(0, uffd) TH_LOG("userfaultfd: %s", strerror(-uffd));
	ASSERT_EQ(0, wait_fault(uffd, 5000, &msg));
	ASSERT_EQ(0, kill(pid, SIGSTOP));
	ASSERT_EQ(pid, waitpid(pid, &status, WUNTRACED));
	ASSERT_TRUE(WIFSTOPPED(status));
	ASSERT_EQ(0, kill(pid, SIGCONT));
	pfd = (struct pollfd){ .fd = sp[0], .events = POLLIN };
	ASSERT_EQ(1, poll(&pfd, 1, 5000)) {
		TH_LOG("the READ did not end: if it now resumes, say so in the rst");
		kill(pid, SIGKILL);
	}
	ASSERT_EQ(0, pvm_read_full(sp[0], &res, sizeof(res)));
	EXPECT_EQ(-EINTR, res);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && !WEXITSTATUS(status));
	close(uffd);
	close(sp[0]);
	close(sp[1]);
	munmap(hb, 2 * psz);
	single_exit(&s);
}

/* ---- handles and process_vm_open(2) ----------------------------------- */

#define NO_OPEN		"process_vm_open(2): not in this kernel"

static int region_open(const void *h, size_t size, unsigned int flags)
{
	return syscall(__NR_process_vm_open, h, size, flags);
}

/* True when this kernel has no process_vm_open(2) */
static bool no_open(void)
{
	static int missing = -1;

	if (missing < 0)
		missing = region_open(NULL, 0, 0) < 0 &&
			  pvm_syscall_missing(errno);
	return missing;
}

static int get_handle(int fd, struct process_vm_handle *h)
{
	return ioctl(fd, PROCESS_VM_REGION_GET_HANDLE, h) ? -errno : 0;
}

/* The file mode of @fd for access @flags */
static int region_accmode(unsigned int flags)
{
	switch (flags & R_RW) {
	case R_READ:
		return O_RDONLY;
	case R_WRITE:
		return O_WRONLY;
	default:
		return O_RDWR;
	}
}

/* Send the handle of @fd (the caller's region) down the pipe @wr */
static long cmd_send_handle(struct pvm_target *t, unsigned long fd,
			    unsigned long wr, unsigned long c)
{
	struct process_vm_handle h;
	int ret = get_handle(fd, &h);

	return ret ? ret : pvm_write_full(wr, &h, sizeof(h));
}

/* process_vm_open(2) of the handle read from the pipe @rd: the fd */
static long cmd_open_from(struct pvm_target *t, unsigned long rd,
			  unsigned long flags, unsigned long c)
{
	struct process_vm_handle h;
	int ret = pvm_read_full(rd, &h, sizeof(h));

	if (ret)
		return ret;
	ret = region_open(&h, sizeof(h), flags);
	return ret < 0 ? -errno : ret;
}

static long cmd_get_handle(struct pvm_target *t, unsigned long fd,
			   unsigned long b, unsigned long c)
{
	struct process_vm_handle h;

	return get_handle(fd, &h);
}

/*
 * How a case of the open fixture calls process_vm_open(2) with the handle
 * of a region of its own.
 */
enum open_kind {
	H_HANDLE,	/* the handle, in .size bytes (the rest zero) */
	H_TAIL,		/* the same, the last of .size bytes 1 */
	H_SIZE_0,	/* the handle, in 0 bytes */
	H_NULL,		/* a NULL pointer */
	H_HOLE,		/* a pointer to unmapped memory */
	H_CROSS,	/* a handle whose last 8 bytes are unmapped */
	H_ID_NEXT,	/* the id + 1 */
	H_ID_0,		/* id 0 */
	H_ID_HIGH,	/* the id + 2^32 */
	H_ID_TOP,	/* the id with bit 63 set */
	H_SECRET_0,	/* a secret of zeros */
	H_REVOKED,	/* the region revoked (its fd still open) */
	H_CLOSED,	/* the region's last fd closed */
};

FIXTURE(open)
{
	struct single s;
	struct process_vm_handle h;
	uint8_t *page;		/* a page, then a hole */
	int fd;
};

FIXTURE_VARIANT(open)
{
	enum open_kind kind;
	unsigned int grant;	/* the export's flags */
	unsigned int flags;	/* process_vm_open(2)'s */
	size_t size;		/* its size, sizeof(handle) if 0 */
	int err;		/* 0: succeeds */
};

FIXTURE_VARIANT_ADD(open, flags_none)
{
	.grant = R_RW, .flags = 0, .err = EINVAL,
};

FIXTURE_VARIANT_ADD(open, flags_pin)
{
	.grant = R_RW | R_PIN, .flags = R_READ | R_PIN, .err = EINVAL,
};

FIXTURE_VARIANT_ADD(open, flags_any_user)
{
	.grant = R_RW | R_ANY, .flags = R_READ | R_ANY, .err = EINVAL,
};

FIXTURE_VARIANT_ADD(open, flags_bit4)
{
	.grant = R_RW, .flags = R_READ | 0x10, .err = EINVAL,
};

FIXTURE_VARIANT_ADD(open, flags_bit31)
{
	.grant = R_RW, .flags = R_RW | 0x80000000u, .err = EINVAL,
};

FIXTURE_VARIANT_ADD(open, size_0)
{
	.kind = H_SIZE_0, .grant = R_RW, .flags = R_READ, .err = EINVAL,
};

FIXTURE_VARIANT_ADD(open, size_8)
{
	.grant = R_RW, .flags = R_READ, .size = 8, .err = EINVAL,
};

FIXTURE_VARIANT_ADD(open, size_23)
{
	.grant = R_RW, .flags = R_READ, .size = 23, .err = EINVAL,
};

FIXTURE_VARIANT_ADD(open, size_32)
{
	.grant = R_RW, .flags = R_RW, .size = 32,
};

FIXTURE_VARIANT_ADD(open, size_32_tail)
{
	.kind = H_TAIL, .grant = R_RW, .flags = R_RW, .size = 32,
	.err = E2BIG,
};

FIXTURE_VARIANT_ADD(open, size_25_tail)
{
	.kind = H_TAIL, .grant = R_RW, .flags = R_RW, .size = 25,
	.err = E2BIG,
};

FIXTURE_VARIANT_ADD(open, size_page)
{
	.grant = R_RW, .flags = R_READ, .size = 4096,
};

FIXTURE_VARIANT_ADD(open, size_page_tail)
{
	.kind = H_TAIL, .grant = R_RW, .flags = R_READ, .size = 4096,
	.err = E2BIG,
};

FIXTURE_VARIANT_ADD(open, handle_null)
{
	.kind = H_NULL, .grant = R_RW, .flags = R_READ, .err = EFAULT,
};

FIXTURE_VARIANT_ADD(open, handle_unmapped)
{
	.kind = H_HOLE, .grant = R_RW, .flags = R_READ, .err = EFAULT,
};

FIXTURE_VARIANT_ADD(open, handle_half_unmapped)
{
	.kind = H_CROSS, .grant = R_RW, .flags = R_READ, .err = EFAULT,
};

FIXTURE_VARIANT_ADD(open, id_next)
{
	.kind = H_ID_NEXT, .grant = R_RW, .flags = R_READ, .err = ENOENT,
};

FIXTURE_VARIANT_ADD(open, id_0)
{
	.kind = H_ID_0, .grant = R_RW, .flags = R_READ, .err = ENOENT,
};

FIXTURE_VARIANT_ADD(open, id_high)
{
	.kind = H_ID_HIGH, .grant = R_RW, .flags = R_READ, .err = ENOENT,
};

FIXTURE_VARIANT_ADD(open, id_top)
{
	.kind = H_ID_TOP, .grant = R_RW, .flags = R_READ, .err = ENOENT,
};

FIXTURE_VARIANT_ADD(open, secret_0)
{
	.kind = H_SECRET_0, .grant = R_RW, .flags = R_READ, .err = ENOENT,
};

/* A wrong secret tells nothing, not even that the access is too much */
FIXTURE_VARIANT_ADD(open, secret_0_too_much)
{
	.kind = H_SECRET_0, .grant = R_READ, .flags = R_RW, .err = ENOENT,
};

FIXTURE_VARIANT_ADD(open, r_of_r)
{
	.grant = R_READ, .flags = R_READ,
};

FIXTURE_VARIANT_ADD(open, w_of_r)
{
	.grant = R_READ, .flags = R_WRITE, .err = EACCES,
};

FIXTURE_VARIANT_ADD(open, rw_of_r)
{
	.grant = R_READ, .flags = R_RW, .err = EACCES,
};

FIXTURE_VARIANT_ADD(open, r_of_w)
{
	.grant = R_WRITE, .flags = R_READ, .err = EACCES,
};

FIXTURE_VARIANT_ADD(open, w_of_w)
{
	.grant = R_WRITE, .flags = R_WRITE,
};

FIXTURE_VARIANT_ADD(open, r_of_rw)
{
	.grant = R_RW, .flags = R_READ,
};

FIXTURE_VARIANT_ADD(open, w_of_rw)
{
	.grant = R_RW, .flags = R_WRITE,
};

FIXTURE_VARIANT_ADD(open, rw_of_rw)
{
	.grant = R_RW, .flags = R_RW,
};

FIXTURE_VARIANT_ADD(open, rw_of_rw_pin)
{
	.grant = R_RW | R_PIN, .flags = R_RW,
};

FIXTURE_VARIANT_ADD(open, r_of_r_any_user)
{
	.grant = R_READ | R_ANY, .flags = R_READ,
};

FIXTURE_VARIANT_ADD(open, revoked)
{
	.kind = H_REVOKED, .grant = R_RW, .flags = R_READ, .err = ENXIO,
};

FIXTURE_VARIANT_ADD(open, closed)
{
	.kind = H_CLOSED, .grant = R_RW, .flags = R_READ, .err = ENOENT,
};

FIXTURE_SETUP(open)
{
	self->s.fd = -1;
	self->fd = -1;
	if (no_regions())
		SKIP(return, NO_REGIONS);
	if (no_open())
		SKIP(return, NO_OPEN);
	ASSERT_EQ(0, single_init(&self->s, psz, variant->grant)) {
		TH_LOG("process_vm_export: %s", strerror(errno));
	}
	ASSERT_EQ(0, get_handle(self->s.fd, &self->h));
	self->page = pvm_map_anon(2 * psz);
	ASSERT_TRUE(self->page != NULL);
	ASSERT_EQ(0, munmap(self->page + psz, psz));
}

FIXTURE_TEARDOWN(open)
{
	if (self->fd >= 0)
		close(self->fd);
	single_exit(&self->s);
	if (self->page)
		munmap(self->page, psz);
}

/*
 * An fd that process_vm_open(2) gave for access @flags to the region of
 * @s, exported with @grant: close-on-exec, of the access asked for (EBADF the other way), on the
 * owner's bytes, which it writes.
 */
static void check_opened(struct __test_metadata *_metadata, int fd,
			 struct single *s, unsigned int grant,
			 unsigned int flags)
{
	char want[32];
	struct rinfo ri;
	struct stat st;
	int fl;

	fl = fcntl(fd, F_GETFD);
	ASSERT_LE(0, fl);
	EXPECT_TRUE(fl & FD_CLOEXEC);
	fl = fcntl(fd, F_GETFL);
	ASSERT_LE(0, fl);
	EXPECT_EQ(region_accmode(flags), fl & O_ACCMODE);
	ASSERT_EQ(0, fstat(fd, &st));
	EXPECT_EQ((long)s->len, (long)st.st_size);
	ASSERT_EQ(0, region_fdinfo(fd, &ri));
	EXPECT_STREQ(num(want, getpid()), ri.owner);
	EXPECT_STREQ(num(want, s->len), ri.size);
	EXPECT_STREQ(num(want, grant & R_PIN ?
			 pin_bytes(&(struct iovec){ s->buf + REG_OFF, s->len },
				   1) : 0), ri.pinned);
	EXPECT_STREQ("live", ri.state);

	pvm_fill(s->buf, REG_OFF + s->len + 1, SEED_NEW);
	EXPECT_EQ(flags & R_READ ? (long)s->len : -EBADF,
		  cmd_read_check(NULL, fd, s->len, SEED_NEW));
	EXPECT_EQ(flags & R_WRITE ? (long)s->len : -EBADF,
		  cmd_write_fill(NULL, fd, s->len, SEED_SRC));
	EXPECT_EQ(-1, pvm_check_at(s->buf + REG_OFF, s->len,
				   flags & R_WRITE ? SEED_SRC : SEED_NEW,
				   REG_OFF));
	EXPECT_EQ(-1, pvm_check_at(s->buf + REG_OFF + s->len, 1, SEED_NEW,
				   REG_OFF + s->len));
}

TEST_F(open, open)
{
	size_t size = variant->size ? variant->size : sizeof(self->h);
	struct process_vm_handle h = self->h;
	void *arg = self->page;

	if (variant->kind == H_SIZE_0)
		size = 0;

	switch (variant->kind) {
	case H_NULL:
		arg = NULL;
		break;
	case H_HOLE:
		arg = self->page + psz;
		break;
	case H_CROSS:
		arg = self->page + psz - offsetof(struct process_vm_handle,
						  secret) - 8;
		break;
	case H_ID_NEXT:
		h.id++;
		break;
	case H_ID_0:
		h.id = 0;
		break;
	case H_ID_HIGH:
		h.id += 1ULL << 32;
		break;
	case H_ID_TOP:
		h.id |= 1ULL << 63;
		break;
	case H_SECRET_0:
		memset(h.secret, 0, sizeof(h.secret));
		break;
	case H_REVOKED:
		ASSERT_EQ(0, ioctl(self->s.fd, PROCESS_VM_REGION_REVOKE));
		break;
	case H_CLOSED:
		close(self->s.fd);
		self->s.fd = -1;
		break;
	default:
		break;
	}
	/* The handle at the start of the page, then zeros, or at its end */
	if (arg == self->page) {
		memset(self->page, 0, psz);
		memcpy(self->page, &h, sizeof(h));
		if (variant->kind == H_TAIL)
			self->page[size - 1] = 1;
	} else if (variant->kind == H_CROSS) {
		memcpy(arg, &h, psz - ((uint8_t *)arg - self->page));
	}

	self->fd = region_open(arg, size, variant->flags);
	if (variant->err) {
		EXPECT_EQ(-variant->err, pvm_res(self->fd));
		return;
	}
	ASSERT_LE(0, self->fd) {
		TH_LOG("process_vm_open: %s", strerror(errno));
	}
	check_opened(_metadata, self->fd, &self->s, variant->grant,
		     variant->flags);
}

FIXTURE(handle)
{
	struct single s;
	struct process_vm_handle h;
	int fd;
};

FIXTURE_SETUP(handle)
{
	self->s.fd = -1;
	self->fd = -1;
	if (no_regions())
		SKIP(return, NO_REGIONS);
	if (no_open())
		SKIP(return, NO_OPEN);
	ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sock));
	ASSERT_EQ(0, single_init(&self->s, 2 * psz, R_RW));
	ASSERT_EQ(0, get_handle(self->s.fd, &self->h));
}

FIXTURE_TEARDOWN(handle)
{
	if (self->fd >= 0)
		close(self->fd);
	single_exit(&self->s);
}

/*
 * The handle is the region's: the same each time, the same through every
 * fd of the owner's, another for another region; the owner's only.
 */
TEST_F(handle, get)
{
	struct process_vm_handle h2;
	struct pvm_target t;
	struct single s2;
	long cfd;

	EXPECT_NE(0, self->h.id);
	ASSERT_EQ(0, get_handle(self->s.fd, &h2));
	EXPECT_EQ(0, memcmp(&h2, &self->h, sizeof(h2)));
	EXPECT_EQ(-EFAULT, pvm_res(ioctl(self->s.fd,
					 PROCESS_VM_REGION_GET_HANDLE, NULL)));

	self->fd = region_open(&self->h, sizeof(self->h), R_READ);
	ASSERT_LE(0, self->fd);
	memset(&h2, 0, sizeof(h2));
	ASSERT_EQ(0, get_handle(self->fd, &h2));
	EXPECT_EQ(0, memcmp(&h2, &self->h, sizeof(h2)));

	ASSERT_EQ(0, single_init(&s2, psz, R_READ));
	ASSERT_EQ(0, get_handle(s2.fd, &h2));
	EXPECT_NE(self->h.id, h2.id);
	EXPECT_NE(0, memcmp(h2.secret, self->h.secret, sizeof(h2.secret)));
	single_exit(&s2);

	/* Not for a holder by fork, nor by SCM_RIGHTS */
	ASSERT_EQ(0, pvm_target_start(&t, NULL, 0, 0, 0));
	EXPECT_EQ(-EPERM, pvm_target_call(&t, cmd_get_handle, self->s.fd, 0,
					  0));
	ASSERT_EQ(0, pvm_send_fd(sock[0], self->s.fd));
	cfd = pvm_target_call(&t, cmd_recv_fd, 1, 0, 0);
	ASSERT_LE(0, cfd);
	EXPECT_EQ(-EPERM, pvm_target_call(&t, cmd_get_handle, cfd, 0, 0));
	pvm_target_stop(&t);

	/* Nor once revoked */
	ASSERT_EQ(0, ioctl(self->s.fd, PROCESS_VM_REGION_REVOKE));
	EXPECT_EQ(-ENXIO, get_handle(self->s.fd, &h2));
	EXPECT_EQ(-ENXIO, get_handle(self->fd, &h2));
}

/* Every bit of the secret counts: each byte with its low or high bit off */
TEST_F(handle, forged_secret)
{
	struct process_vm_handle h;
	int i, bit, fd;

	for (i = 0; i < (int)sizeof(h.secret); i++) {
		for (bit = 0; bit < 8; bit += 7) {
			h = self->h;
			h.secret[i] ^= 1 << bit;
			fd = region_open(&h, sizeof(h), R_READ);
			EXPECT_EQ(-ENOENT, pvm_res(fd)) {
				TH_LOG("secret byte %d, bit %d flipped", i,
				       bit);
			}
			if (fd >= 0)
				close(fd);
		}
	}
	/* The true handle still opens */
	self->fd = region_open(&self->h, sizeof(self->h), R_READ);
	EXPECT_LE(0, self->fd);
}

/*
 * An opened fd is a file of the same region: the owner's revoke through
 * the export's fd ends it, and the owner may revoke through it as well.
 */
TEST_F(handle, revoke)
{
	struct rinfo ri;
	int fd2;

	self->fd = region_open(&self->h, sizeof(self->h), R_RW);
	ASSERT_LE(0, self->fd);
	fd2 = region_open(&self->h, sizeof(self->h), R_READ);
	ASSERT_LE(0, fd2);
	ASSERT_EQ(0, ioctl(self->s.fd, PROCESS_VM_REGION_REVOKE));
	check_revoked(_metadata, self->fd, R_RW, self->s.buf + REG_OFF,
		      self->s.len);
	EXPECT_EQ(-ENXIO, pvm_res(region_open(&self->h, sizeof(self->h),
					      R_READ)));
	close(fd2);

	/* A second region, revoked by the owner through an opened fd */
	single_exit(&self->s);
	close(self->fd);
	ASSERT_EQ(0, single_init(&self->s, psz, R_RW | R_PIN));
	ASSERT_EQ(0, get_handle(self->s.fd, &self->h));
	self->fd = region_open(&self->h, sizeof(self->h), R_READ);
	ASSERT_LE(0, self->fd);
	EXPECT_EQ(0, pvm_res(ioctl(self->fd, PROCESS_VM_REGION_REVOKE)));
	check_revoked(_metadata, self->s.fd, R_RW, self->s.buf + REG_OFF,
		      self->s.len);
	ASSERT_EQ(0, region_fdinfo(self->fd, &ri));
	EXPECT_STREQ("revoked", ri.state);
	EXPECT_STREQ("0", ri.pinned);

	/* Gone with the last fd: no region of that id any more */
	close(self->fd);
	self->fd = -1;
	close(self->s.fd);
	self->s.fd = -1;
	EXPECT_EQ(-ENOENT, pvm_res(region_open(&self->h, sizeof(self->h),
					       R_READ)));
}

/*
 * The handle through a pipe to a process that holds no fd of the region
 * (started before the export): it opens the region, reads and writes it,
 * and cannot revoke it or get the handle.
 */
TEST_F(handle, other_process)
{
	struct pvm_target t;
	int p[2];
	long cfd;

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	close(self->s.fd);
	self->s.fd = -1;
	ASSERT_EQ(0, pvm_target_start(&t, NULL, 0, 0, 0));
	self->s.fd = export1(self->s.buf + REG_OFF, self->s.len, R_RW);
	ASSERT_LE(0, self->s.fd);
	ASSERT_EQ(0, cmd_send_handle(NULL, self->s.fd, p[1], 0));
	cfd = pvm_target_call(&t, cmd_open_from, p[0], R_RW, 0);
	ASSERT_LE(0, cfd);

	pvm_fill(self->s.buf, REG_OFF + self->s.len + 1, SEED_NEW);
	EXPECT_EQ((long)self->s.len, pvm_target_call(&t, cmd_read_check, cfd,
						     self->s.len, SEED_NEW));
	EXPECT_EQ((long)self->s.len, pvm_target_call(&t, cmd_write_fill, cfd,
						     self->s.len, SEED_SRC));
	EXPECT_EQ(-1, pvm_check_at(self->s.buf + REG_OFF, self->s.len,
				   SEED_SRC, REG_OFF));
	EXPECT_EQ(getpid(), pvm_target_call(&t, cmd_fdinfo_owner, cfd, 0, 0));
	EXPECT_EQ(-EPERM, pvm_target_call(&t, cmd_revoke, cfd, 0, 0));
	EXPECT_EQ(-EPERM, pvm_target_call(&t, cmd_get_handle, cfd, 0, 0));

	ASSERT_EQ(0, ioctl(self->s.fd, PROCESS_VM_REGION_REVOKE));
	EXPECT_EQ(-ENXIO, pvm_target_call(&t, cmd_read_check, cfd,
					  self->s.len, SEED_SRC));
	pvm_target_stop(&t);
	close(p[0]);
	close(p[1]);
}

/*
 * The opener in another uid (a child that setuid()s to 65534, no
 * capabilities): EACCES, unless the owner exported with ANY_USER, which
 * still grants no more than the region's access.
 */
TEST_F(handle, other_uid)
{
	struct pvm_target t;
	struct single s2;
	int p[2];
	long cfd;

	if (geteuid())
		SKIP(return, "setuid() to another uid needs root");
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	ASSERT_EQ(0, single_init(&s2, psz, R_READ | R_ANY));
	ASSERT_EQ(0, pvm_target_start(&t, setup_nobody, 0, 0, 0));

	ASSERT_EQ(0, cmd_send_handle(NULL, self->s.fd, p[1], 0));
	EXPECT_EQ(-EACCES, pvm_target_call(&t, cmd_open_from, p[0], R_READ,
					   0));
	ASSERT_EQ(0, cmd_send_handle(NULL, s2.fd, p[1], 0));
	EXPECT_EQ(-EACCES, pvm_target_call(&t, cmd_open_from, p[0], R_RW, 0));
	ASSERT_EQ(0, cmd_send_handle(NULL, s2.fd, p[1], 0));
	cfd = pvm_target_call(&t, cmd_open_from, p[0], R_READ, 0);
	ASSERT_LE(0, cfd);
	EXPECT_EQ((long)s2.len, pvm_target_call(&t, cmd_read_check, cfd,
						s2.len, SEED_OWNER));
	EXPECT_EQ(-EBADF, pvm_target_call(&t, cmd_write_fill, cfd, s2.len,
					  SEED_SRC));
	EXPECT_EQ(-EPERM, pvm_target_call(&t, cmd_revoke, cfd, 0, 0));
	pvm_target_stop(&t);
	single_exit(&s2);
	close(p[0]);
	close(p[1]);
}

/*
 * The owner exits: its region is revoked (ENXIO) while a holder keeps it,
 * and gone (ENOENT) once the last fd is closed.
 */
TEST_F(handle, owner_exit)
{
	struct process_vm_handle h;
	struct pvm_target t;
	struct single s;
	struct rinfo ri;
	char want[32];
	int p[2], fd;
	long ofd;

	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	fd = owner_start(&t, NULL, NULL, &s, R_READ | R_PIN, &ofd);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, pvm_target_call(&t, cmd_send_handle, ofd, p[1], 0));
	ASSERT_EQ(0, pvm_read_full(p[0], &h, sizeof(h)));
	self->fd = region_open(&h, sizeof(h), R_READ);
	ASSERT_LE(0, self->fd);
	EXPECT_EQ((long)s.len, cmd_read_check(NULL, self->fd, s.len,
					      SEED_OWNER));
	close(self->fd);
	self->fd = -1;

	pvm_target_send(&t, pvm_cmd_exit, 0, 0, 0);
	ASSERT_EQ(0, pvm_wait_zombie(t.pid));
	EXPECT_EQ(-ENXIO, pvm_res(region_open(&h, sizeof(h), R_READ)));
	/* The pages stay pinned while a holder keeps the region */
	ASSERT_EQ(0, region_fdinfo(fd, &ri));
	EXPECT_STREQ("revoked", ri.state);
	EXPECT_STREQ(num(want, 2 * psz), ri.pinned);
	pvm_target_stop(&t);
	EXPECT_EQ(-ENXIO, pvm_res(region_open(&h, sizeof(h), R_READ)));
	close(fd);
	EXPECT_EQ(-ENOENT, pvm_res(region_open(&h, sizeof(h), R_READ)));
	single_exit(&s);
	close(p[0]);
	close(p[1]);
}

/* ---- io_uring --------------------------------------------------------- */

FIXTURE(uring)
{
	struct pvm_ring ring;
	struct single s;
	uint8_t *out;		/* 3 pages, for READ_FIXED registered */
	unsigned int sqe_flags;
};

FIXTURE_VARIANT(uring)
{
	int opcode;
	unsigned int sqe_flags;	/* IOSQE_ASYNC: straight to io-wq */
	unsigned int pin;	/* 0 or R_PIN */
};

FIXTURE_VARIANT_ADD(uring, read)
{
	.opcode = IORING_OP_READ,
};

FIXTURE_VARIANT_ADD(uring, readv)
{
	.opcode = IORING_OP_READV,
};

FIXTURE_VARIANT_ADD(uring, read_fixed)
{
	.opcode = IORING_OP_READ_FIXED,
};

FIXTURE_VARIANT_ADD(uring, read_async)
{
	.opcode = IORING_OP_READ, .sqe_flags = IOSQE_ASYNC,
};

FIXTURE_VARIANT_ADD(uring, read_pin)
{
	.opcode = IORING_OP_READ, .pin = R_PIN,
};

FIXTURE_VARIANT_ADD(uring, readv_pin)
{
	.opcode = IORING_OP_READV, .pin = R_PIN,
};

FIXTURE_VARIANT_ADD(uring, read_fixed_pin)
{
	.opcode = IORING_OP_READ_FIXED, .pin = R_PIN,
};

FIXTURE_VARIANT_ADD(uring, read_async_pin)
{
	.opcode = IORING_OP_READ, .sqe_flags = IOSQE_ASYNC, .pin = R_PIN,
};

FIXTURE_VARIANT_ADD(uring, readv_async_pin)
{
	.opcode = IORING_OP_READV, .sqe_flags = IOSQE_ASYNC, .pin = R_PIN,
};

FIXTURE_SETUP(uring)
{
	struct iovec reg;
	int ret;

	self->ring.fd = -1;
	self->s.fd = -1;
	if (no_regions())
		SKIP(return, NO_REGIONS);
	ret = pvm_ring_init(&self->ring);
	if (ret)
		SKIP(return, "io_uring_setup: %s", strerror(-ret));
	ASSERT_EQ(0, single_init(&self->s, 2 * psz, R_READ | variant->pin));
	self->out = calloc(1, 3 * psz);
	ASSERT_TRUE(self->out != NULL);
	self->sqe_flags = variant->sqe_flags;
	if (variant->opcode == IORING_OP_READ_FIXED) {
		reg = (struct iovec){ self->out, 3 * psz };
		ASSERT_EQ(0, pvm_ring_register_buffers(&self->ring, &reg, 1));
	}
}

FIXTURE_TEARDOWN(uring)
{
	pvm_ring_exit(&self->ring);
	single_exit(&self->s);
	free(self->out);
}

/* Read @len bytes at @off with the variant's opcode: cqe->res */
static long ring_read(FIXTURE_DATA(uring) *self, int opcode, size_t len,
		      unsigned long long off)
{
	struct iovec iov[2] = { { self->out, 7 },
				{ self->out + 7, len - 7 } };
	struct io_uring_sqe sqe;

	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = opcode;
	sqe.flags = self->sqe_flags;
	sqe.fd = self->s.fd;
	sqe.off = off;
	if (opcode == IORING_OP_READV) {
		sqe.addr = (uintptr_t)iov;
		sqe.len = 2;
	} else {
		/* READ_FIXED: within registered buffer 0 */
		sqe.addr = (uintptr_t)self->out;
		sqe.len = len;
		sqe.buf_index = 0;
	}
	return pvm_ring_run(&self->ring, &sqe);
}

TEST_F(uring, data_and_revocation)
{
	size_t len = self->s.len;
	uint8_t *own = self->s.buf + REG_OFF;

	EXPECT_EQ((long)len, ring_read(self, variant->opcode, len + psz, 0));
	EXPECT_EQ(-1, pvm_first_diff(self->out, own, len));
	EXPECT_EQ(100, ring_read(self, variant->opcode, 100, len - 100));
	EXPECT_EQ(-1, pvm_first_diff(self->out, own + len - 100, 100));
	EXPECT_EQ(0, ring_read(self, variant->opcode, 100, len));
	EXPECT_EQ(0, ioctl(self->s.fd, PROCESS_VM_REGION_REVOKE));
	EXPECT_EQ(-ENXIO, ring_read(self, variant->opcode, len, 0));
}

TEST_HARNESS_MAIN
