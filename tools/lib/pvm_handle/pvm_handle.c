// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libpvm_handle: memory handles over kernel regions (process_vm_export(2))
 * where the kernel has them, else over Cross Memory Attach.  README.rst
 * next to this file gives the handle formats byte by byte and what is
 * guaranteed on each kernel.
 */
#define _GNU_SOURCE
#define _FILE_OFFSET_BITS	64
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "pvm_handle.h"

/* include/uapi/linux/process_vm.h; system headers do not have it yet */
#ifndef PROCESS_VM_PIDFD
#define PROCESS_VM_PIDFD	1UL
#endif
#ifndef PID_FS_MAGIC
#define PID_FS_MAGIC		0x50494446
#endif
#ifndef __NR_pidfd_open
#define __NR_pidfd_open		434
#endif
#ifndef __NR_pidfd_send_signal
#define __NR_pidfd_send_signal	424
#endif
#ifndef PR_SET_PTRACER
#define PR_SET_PTRACER		0x59616d61
#endif
#ifndef PR_SET_PTRACER_ANY
#define PR_SET_PTRACER_ANY	((unsigned long)-1)
#endif

/*
 * The regions of include/uapi/linux/process_vm.h.  The calls are numbers
 * 1000 and 1001 on x86-64 (x32 with its bit), i386 and the generic table;
 * pvmh_have_regions() finds out whether they are what they are here.
 */
#if defined(__x86_64__) && defined(__ILP32__)
#define PVMH_NR(nr)		(0x40000000 + (nr))	/* __X32_SYSCALL_BIT */
#else
#define PVMH_NR(nr)		(nr)
#endif
#define PVMH_NR_EXPORT		PVMH_NR(472)		/* process_vm_export */
#define PVMH_NR_OPEN		PVMH_NR(473)		/* process_vm_open */
#define PVMH_REGION_READ	0x1u	/* PROCESS_VM_REGION_READ */
#define PVMH_REGION_WRITE	0x2u	/* PROCESS_VM_REGION_WRITE */
#define PVMH_SECRET_SIZE	16

struct pvmh_kernel_handle {		/* struct process_vm_handle */
	uint64_t id;
	uint8_t secret[PVMH_SECRET_SIZE];
};

#define PVMH_REGION_REVOKE	_IO(0xB9, 0)
#define PVMH_REGION_GET_HANDLE	_IOR(0xB9, 1, struct pvmh_kernel_handle)

/*
 * The handle: offsets of the little-endian fields.  The first 16 bytes are
 * the same in both versions (PVMH_ID and PVMH_RESERVED are 0 in version 2).
 */
enum {
	PVMH_MAGIC = 0,		/* "PVMH" */
	PVMH_VERSION = 4,	/* u8 */
	PVMH_ACCESS = 5,	/* u8, PVM_HANDLE_READ | PVM_HANDLE_WRITE */
	PVMH_ID = 6,		/* u8, PVMH_ID_* */
	PVMH_RESERVED = 7,	/* u8, 0 */
	PVMH_PID = 8,		/* u32 */
	PVMH_CRC = 12,		/* u32, CRC-32 of all 64 bytes with this one 0 */
	/* Version 1 (PVM_HANDLE_VERSION), the CMA path */
	PVMH_INO = 16,		/* u64, pidfs inode number of the producer */
	PVMH_START = 24,	/* u64, start time, clock ticks after boot */
	PVMH_ADDR = 32,		/* u64 */
	PVMH_LEN = 40,		/* u64 */
	PVMH_SLOT = 48,		/* u64, address of the revocation word */
	PVMH_COOKIE = 56,	/* u64, the word's value while exported */
	/* Version 2 (PVM_HANDLE_VERSION_REGION), a kernel region */
	PVMH_REGION_ID = 16,	/* u64, struct process_vm_handle's id */
	PVMH_REGION_SECRET = 24, /* 16 bytes, its secret */
	PVMH_REGION_END = 40,	/* 0 from here to the end */
};

#define PVMH_ID_INO	0x1
#define PVMH_ID_START	0x2

static const unsigned char pvmh_magic[4] = { 'P', 'V', 'M', 'H' };

struct pvmh_fields {
	uint8_t version;
	uint32_t pid;
	uint8_t access;
	uint8_t id;
	uint64_t ino;
	uint64_t start;
	uint64_t addr;
	uint64_t len;
	uint64_t slot;
	uint64_t cookie;
	struct pvmh_kernel_handle region;
};

struct pvm_handle {
	struct pvmh_fields f;
	int pidfd;		/* -1 on kernels without pidfd_open() */
	int fd;			/* the region's with PVM_HANDLE_VIA_REGION, or -1 */
	enum pvm_handle_via via;
};

static void put_le(unsigned char *p, uint64_t v, int bytes)
{
	int i;

	for (i = 0; i < bytes; i++)
		p[i] = v >> (8 * i);
}

static uint64_t get_le(const unsigned char *p, int bytes)
{
	uint64_t v = 0;
	int i;

	for (i = bytes - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* CRC-32 (the IEEE 802.3 one of zlib) of a handle, its CRC field as 0 */
static uint32_t pvmh_crc(const unsigned char *handle)
{
	unsigned char b[PVM_HANDLE_SIZE];
	uint32_t crc = ~0u;
	int i, k;

	memcpy(b, handle, sizeof(b));
	put_le(b + PVMH_CRC, 0, 4);
	for (i = 0; i < PVM_HANDLE_SIZE; i++) {
		crc ^= b[i];
		for (k = 0; k < 8; k++)
			crc = (crc >> 1) ^ (0xedb88320u & -(crc & 1));
	}
	return ~crc;
}

static void pvmh_encode(const struct pvmh_fields *f, unsigned char *b)
{
	memset(b, 0, PVM_HANDLE_SIZE);
	memcpy(b + PVMH_MAGIC, pvmh_magic, sizeof(pvmh_magic));
	b[PVMH_VERSION] = f->version;
	b[PVMH_ACCESS] = f->access;
	put_le(b + PVMH_PID, f->pid, 4);
	if (f->version == PVM_HANDLE_VERSION_REGION) {
		put_le(b + PVMH_REGION_ID, f->region.id, 8);
		memcpy(b + PVMH_REGION_SECRET, f->region.secret,
		       PVMH_SECRET_SIZE);
	} else {
		b[PVMH_ID] = f->id;
		put_le(b + PVMH_INO, f->ino, 8);
		put_le(b + PVMH_START, f->start, 8);
		put_le(b + PVMH_ADDR, f->addr, 8);
		put_le(b + PVMH_LEN, f->len, 8);
		put_le(b + PVMH_SLOT, f->slot, 8);
		put_le(b + PVMH_COOKIE, f->cookie, 8);
	}
	put_le(b + PVMH_CRC, pvmh_crc(b), 4);
}

/* Version 2: what the kernel gave, and zeros around it. */
static int pvmh_check_region(const unsigned char *b)
{
	int i;

	if (b[PVMH_ID] || b[PVMH_RESERVED])
		return -EBADMSG;
	for (i = PVMH_REGION_END; i < PVM_HANDLE_SIZE; i++)
		if (b[i])
			return -EBADMSG;
	return 0;
}

/* Version 1: the fields must describe something a producer could export. */
static int pvmh_check_fields(const struct pvmh_fields *f, uint8_t reserved)
{
	if (reserved || !f->id || f->id & ~(PVMH_ID_INO | PVMH_ID_START))
		return -EBADMSG;
	if (!f->cookie)
		return -EBADMSG;
	if (!f->len || f->addr > UINT64_MAX - f->len)
		return -EBADMSG;
	if (!f->slot || f->slot % sizeof(uint64_t))
		return -EBADMSG;
	/* A 64-bit producer's range seen from a 32-bit consumer */
	if (f->addr + f->len - 1 > UINTPTR_MAX || f->slot > UINTPTR_MAX - 7)
		return -EOVERFLOW;
	return 0;
}

static int pvmh_decode(const unsigned char *b, size_t size,
		       struct pvmh_fields *f)
{
	if (size <= PVMH_VERSION ||
	    memcmp(b + PVMH_MAGIC, pvmh_magic, sizeof(pvmh_magic)))
		return -EBADMSG;
	/* A later version may differ in anything past the version byte. */
	f->version = b[PVMH_VERSION];
	if (f->version != PVM_HANDLE_VERSION &&
	    f->version != PVM_HANDLE_VERSION_REGION)
		return -EPROTONOSUPPORT;
	if (size != PVM_HANDLE_SIZE || get_le(b + PVMH_CRC, 4) != pvmh_crc(b))
		return -EBADMSG;
	f->access = b[PVMH_ACCESS];
	f->pid = get_le(b + PVMH_PID, 4);
	if (!f->access || f->access & ~PVM_HANDLE_RDWR ||
	    !f->pid || f->pid > INT_MAX)
		return -EBADMSG;
	if (f->version == PVM_HANDLE_VERSION_REGION) {
		f->region.id = get_le(b + PVMH_REGION_ID, 8);
		memcpy(f->region.secret, b + PVMH_REGION_SECRET,
		       PVMH_SECRET_SIZE);
		return pvmh_check_region(b);
	}
	f->id = b[PVMH_ID];
	f->ino = get_le(b + PVMH_INO, 8);
	f->start = get_le(b + PVMH_START, 8);
	f->addr = get_le(b + PVMH_ADDR, 8);
	f->len = get_le(b + PVMH_LEN, 8);
	f->slot = get_le(b + PVMH_SLOT, 8);
	f->cookie = get_le(b + PVMH_COOKIE, 8);
	return pvmh_check_fields(f, b[PVMH_RESERVED]);
}

static int sys_pidfd_open(pid_t pid)
{
	return syscall(__NR_pidfd_open, pid, 0);
}

/* The pidfs inode number of @pidfd; 0 before 6.9, when it has none. */
static uint64_t pidfd_ino(int pidfd)
{
	struct statfs sfs;
	struct stat st;

	if (fstatfs(pidfd, &sfs) || sfs.f_type != PID_FS_MAGIC ||
	    fstat(pidfd, &st))
		return 0;
	return st.st_ino;
}

/* Field 22 of /proc/@pid/stat, the start time; 0 if it cannot be read. */
static uint64_t proc_start_time(pid_t pid)
{
	char path[32], buf[1024], *p;
	ssize_t n;
	int fd, i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* The name (field 2) may hold spaces and ')': count from its end. */
	p = strrchr(buf, ')');
	for (i = 3; p && i <= 22; i++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	return p ? strtoull(p, NULL, 10) : 0;
}

/* ------------------------------------------------------------------ */
/* Producer, CMA path: the revocation table                           */
/* ------------------------------------------------------------------ */

/*
 * Every export owns one 64-bit word of this table, which holds the
 * export's random cookie while it is exported and 0 once it is revoked;
 * consumers read the word through CMA around their copies.  The pages are
 * never unmapped and never move, so a word's address stays valid for as
 * long as the program runs; a freed word is reused with a new cookie.
 */
#define PVMH_CHUNK_WORDS	512

static pthread_mutex_t pvmh_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t **pvmh_chunks;
static size_t pvmh_nr_chunks;

static uint64_t *pvmh_free_word(void)
{
	uint64_t **chunks, *chunk;
	size_t c, i;

	for (c = 0; c < pvmh_nr_chunks; c++)
		for (i = 0; i < PVMH_CHUNK_WORDS; i++)
			if (!pvmh_chunks[c][i])
				return &pvmh_chunks[c][i];
	chunks = realloc(pvmh_chunks, (c + 1) * sizeof(*chunks));
	if (!chunks)
		return NULL;
	pvmh_chunks = chunks;
	chunk = mmap(NULL, PVMH_CHUNK_WORDS * sizeof(uint64_t),
		     PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (chunk == MAP_FAILED)
		return NULL;
	pvmh_chunks[pvmh_nr_chunks++] = chunk;
	return chunk;
}

/* The table's word at @addr, or NULL if @addr is not one of its words */
static uint64_t *pvmh_word_at(uint64_t addr)
{
	uintptr_t base;
	size_t c;

	for (c = 0; c < pvmh_nr_chunks; c++) {
		base = (uintptr_t)pvmh_chunks[c];
		if (addr >= base &&
		    addr < base + PVMH_CHUNK_WORDS * sizeof(uint64_t) &&
		    (addr - base) % sizeof(uint64_t) == 0)
			return (uint64_t *)(uintptr_t)addr;
	}
	return NULL;
}

/*
 * Random so that a word's successive cookies differ, and so that memory a
 * new program image (after execve) happens to have at a word's address
 * matches no cookie; not secret, a handle is not a capability.
 */
static uint64_t pvmh_cookie(void)
{
	static uint64_t counter;
	struct timespec ts;
	uint64_t v = 0;

	if (getrandom(&v, sizeof(v), GRND_NONBLOCK) != sizeof(v)) {
		/* Early boot: splitmix64 of the time and a counter */
		clock_gettime(CLOCK_MONOTONIC, &ts);
		v = ts.tv_sec * 1000000000ull + ts.tv_nsec + ++counter;
		v = (v ^ (v >> 30)) * 0xbf58476d1ce4e5b9ull;
		v = (v ^ (v >> 27)) * 0x94d049bb133111ebull;
		v ^= v >> 31;
	}
	return v ? v : 1;
}

/* Who this process is; cached per pid, so a forked child finds its own. */
static int pvmh_self(struct pvmh_fields *f)
{
	static struct pvmh_fields self;
	pid_t pid = getpid();
	int pidfd;

	if (self.pid != (uint32_t)pid) {
		self.id = 0;
		self.ino = 0;
		pidfd = sys_pidfd_open(pid);
		if (pidfd >= 0) {
			self.ino = pidfd_ino(pidfd);
			close(pidfd);
		}
		self.start = proc_start_time(pid);
		self.id = (self.ino ? PVMH_ID_INO : 0) |
			  (self.start ? PVMH_ID_START : 0);
		if (!self.id)
			return -EOPNOTSUPP;
		self.pid = pid;
	}
	f->pid = self.pid;
	f->id = self.id;
	f->ino = self.ino;
	f->start = self.start;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Producer: kernel regions                                            */
/* ------------------------------------------------------------------ */

/* The region flags for a handle's access */
static unsigned int pvmh_region_flags(unsigned int access)
{
	return (access & PVM_HANDLE_READ ? PVMH_REGION_READ : 0) |
	       (access & PVM_HANDLE_WRITE ? PVMH_REGION_WRITE : 0);
}

/*
 * The regions this process exported and has not revoked: the kernel's
 * handle and the region fd that keeps the region alive.  A forked child
 * inherits the fds but not the right to revoke (the kernel's EPERM): the
 * first export or revoke in it closes them.
 */
struct pvmh_region {
	struct pvmh_kernel_handle kh;
	int fd;
};

static struct pvmh_region *pvmh_regions;
static size_t pvmh_nr_regions, pvmh_max_regions;
static pid_t pvmh_regions_pid;

/*
 * 1 if the kernel has regions, 0 if not, -errno if this try cannot tell
 * (no fd or memory for it).  Found out once, by exporting a known word of
 * this process and reading it back: a kernel without the calls refuses
 * them, and a call 1000 that is something else does not give the word.
 */
static int pvmh_have_regions(void)
{
	static const uint64_t known = 0x50564d4852454749ull;	/* not 0 */
	static int has;		/* 1 yes, -1 no, 0 not known yet */
	struct iovec iov = {
		.iov_base = (void *)&known,
		.iov_len = sizeof(known),
	};
	uint64_t got = 0;
	int fd, h = __atomic_load_n(&has, __ATOMIC_RELAXED);

	if (h)
		return h > 0;
	fd = syscall(PVMH_NR_EXPORT, &iov, 1UL, PVMH_REGION_READ);
	if (fd < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOMEM))
		return -errno;
	h = fd >= 0 && pread(fd, &got, sizeof(got), 0) == sizeof(got) &&
	    got == known ? 1 : -1;
	if (fd >= 0)
		close(fd);
	__atomic_store_n(&has, h, __ATOMIC_RELAXED);
	return h > 0;
}

static void pvmh_regions_own(pid_t pid)
{
	size_t i;

	if (pvmh_regions_pid == pid)
		return;
	for (i = 0; i < pvmh_nr_regions; i++)
		close(pvmh_regions[i].fd);
	pvmh_nr_regions = 0;
	pvmh_regions_pid = pid;
}

static struct pvmh_region *pvmh_region_find(const struct pvmh_kernel_handle *kh)
{
	size_t i;

	for (i = 0; i < pvmh_nr_regions; i++)
		if (!memcmp(&pvmh_regions[i].kh, kh, sizeof(*kh)))
			return &pvmh_regions[i];
	return NULL;
}

/* Keep @fd, the region of @kh; -ENOMEM if there is no room. */
static int pvmh_region_add(int fd, const struct pvmh_kernel_handle *kh)
{
	struct pvmh_region *r;
	size_t max;

	if (pvmh_nr_regions == pvmh_max_regions) {
		max = pvmh_max_regions ? 2 * pvmh_max_regions : 16;
		r = realloc(pvmh_regions, max * sizeof(*r));
		if (!r)
			return -ENOMEM;
		pvmh_regions = r;
		pvmh_max_regions = max;
	}
	r = &pvmh_regions[pvmh_nr_regions++];
	r->kh = *kh;
	r->fd = fd;
	return 0;
}

/*
 * Export [@addr, @addr + @len) as a region for @f->access and fill in the
 * rest of @f.  Under pvmh_lock.
 */
static int pvmh_export_region(const void *addr, size_t len,
			      struct pvmh_fields *f)
{
	struct iovec iov = { .iov_base = (void *)addr, .iov_len = len };
	int fd, err;

	fd = syscall(PVMH_NR_EXPORT, &iov, 1UL, pvmh_region_flags(f->access));
	if (fd < 0)
		return -errno;
	err = ioctl(fd, PVMH_REGION_GET_HANDLE, &f->region) ? -errno : 0;
	if (!err) {
		pvmh_regions_own(getpid());
		err = pvmh_region_add(fd, &f->region);
	}
	if (err) {
		close(fd);
		return err;
	}
	f->version = PVM_HANDLE_VERSION_REGION;
	f->pid = getpid();
	return 0;
}

/* Revoke the region of @f, a handle of this process's.  Under pvmh_lock. */
static int pvmh_revoke_region(const struct pvmh_fields *f)
{
	struct pvmh_region *r;

	if (f->pid != (uint32_t)getpid())
		return -EINVAL;
	pvmh_regions_own(getpid());
	r = pvmh_region_find(&f->region);
	/* Ours, but revoked already, or exported by the program before exec */
	if (!r)
		return -EKEYREVOKED;
	if (ioctl(r->fd, PVMH_REGION_REVOKE))
		return -errno;
	close(r->fd);
	*r = pvmh_regions[--pvmh_nr_regions];
	return 0;
}

/* ------------------------------------------------------------------ */
/* Producer: the CMA path                                              */
/* ------------------------------------------------------------------ */

/* Export for the CMA path: a word of the revocation table.  Under pvmh_lock. */
static int pvmh_export_cma(struct pvmh_fields *f)
{
	uint64_t *word;
	int err;

	err = pvmh_self(f);
	if (err)
		return err;
	word = pvmh_free_word();
	if (!word)
		return -ENOMEM;
	f->version = PVM_HANDLE_VERSION;
	f->slot = (uintptr_t)word;
	f->cookie = pvmh_cookie();
	__atomic_store_n(word, f->cookie, __ATOMIC_SEQ_CST);
	return 0;
}

/* Revoke the CMA export of @f.  Under pvmh_lock. */
static int pvmh_revoke_cma(const struct pvmh_fields *f)
{
	uint64_t *word;

	/* Never write through an address from a handle we did not make */
	word = f->pid == (uint32_t)getpid() ? pvmh_word_at(f->slot) : NULL;
	if (!word)
		return -EINVAL;
	if (__atomic_load_n(word, __ATOMIC_RELAXED) != f->cookie)
		return -EKEYREVOKED;
	__atomic_store_n(word, 0, __ATOMIC_SEQ_CST);
	return 0;
}

int pvm_handle_export(const void *addr, size_t len, unsigned int access,
		      unsigned char handle[PVM_HANDLE_SIZE])
{
	struct pvmh_fields f = { 0 };
	int err;

	if (!addr || !len || !handle ||
	    (uintptr_t)addr + (len - 1) < (uintptr_t)addr)
		return -EINVAL;
	if (access & ~(PVM_HANDLE_RDWR | PVM_HANDLE_EXPORT_CMA) ||
	    !(access & PVM_HANDLE_RDWR))
		return -EINVAL;
	f.addr = (uintptr_t)addr;
	f.len = len;
	f.access = access & PVM_HANDLE_RDWR;

	/* The kernel's regions where it has them, unless told otherwise */
	err = access & PVM_HANDLE_EXPORT_CMA ? 0 : pvmh_have_regions();
	if (err < 0)
		return err;
	pthread_mutex_lock(&pvmh_lock);
	if (err)
		err = pvmh_export_region(addr, len, &f);
	else
		err = pvmh_export_cma(&f);
	if (!err)
		pvmh_encode(&f, handle);
	pthread_mutex_unlock(&pvmh_lock);
	return err;
}

int pvm_handle_revoke(const void *handle, size_t size)
{
	struct pvmh_fields f;
	int err;

	if (!handle)
		return -EINVAL;
	err = pvmh_decode(handle, size, &f);
	if (err)
		return err;

	pthread_mutex_lock(&pvmh_lock);
	if (f.version == PVM_HANDLE_VERSION_REGION)
		err = pvmh_revoke_region(&f);
	else
		err = pvmh_revoke_cma(&f);
	pthread_mutex_unlock(&pvmh_lock);
	return err;
}

/* kernel.yama.ptrace_scope, or -1 without Yama */
static int yama_scope(void)
{
	char buf[16] = "";
	ssize_t n;
	int fd;

	fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atoi(buf) : -1;
}

int pvm_handle_allow(pid_t consumer)
{
	unsigned long tracer = consumer ? (unsigned long)consumer :
					  PR_SET_PTRACER_ANY;
	int scope;

	if (consumer < 0)
		return -EINVAL;
	scope = yama_scope();
	/* Yama absent or scope 0: only the kernel's usual checks apply */
	if (scope <= 0)
		return 0;
	/* Scope 2 takes CAP_SYS_PTRACE, scope 3 allows nobody */
	if (scope >= 2)
		return -EPERM;
	return prctl(PR_SET_PTRACER, tracer, 0, 0, 0) ? -errno : 0;
}

/* ------------------------------------------------------------------ */
/* Consumer                                                            */
/* ------------------------------------------------------------------ */

static pthread_once_t pvmh_probe_once = PTHREAD_ONCE_INIT;
static int pvmh_has_pidfd;

/*
 * Read a known word of this process through a pidfd of itself with
 * PROCESS_VM_PIDFD: the flag works only if the word arrives.  A kernel
 * that does not know the flag fails with EINVAL; one that accepted it
 * without taking the pid argument as a pidfd would fail or read another
 * process.  Access to oneself passes the ptrace check.
 */
static void pvmh_probe(void)
{
	static const uint64_t known = 0x50564d4850524f42ull;	/* not 0 */
	uint64_t got = 0;
	struct iovec local = { .iov_base = &got, .iov_len = sizeof(got) };
	struct iovec remote = {
		.iov_base = (void *)&known,
		.iov_len = sizeof(known),
	};
	int pidfd = sys_pidfd_open(getpid());

	if (pidfd < 0)
		return;
	pvmh_has_pidfd = process_vm_readv(pidfd, &local, 1, &remote, 1,
					  PROCESS_VM_PIDFD) == sizeof(got) &&
			 got == known;
	close(pidfd);
}

int pvm_handle_kernel_has_pidfd(void)
{
	pthread_once(&pvmh_probe_once, pvmh_probe);
	return pvmh_has_pidfd;
}

int pvm_handle_kernel_has_regions(void)
{
	return pvmh_have_regions() > 0;
}

/*
 * Is the producer still the process the handle was opened on?  0: yes,
 * alive or a zombie (so its pid is not free and nobody else has it);
 * -ESRCH: it has been reaped and its pid is free; -ESTALE: its pid now
 * names another process.  A task, once reaped, never comes back: if it is
 * there now, it was there during every earlier copy by pid.
 */
static int pvmh_same(const struct pvm_handle *h)
{
	if (h->pidfd >= 0) {
		if (!syscall(__NR_pidfd_send_signal, h->pidfd, 0, NULL, 0) ||
		    errno == EPERM)
			return 0;
	} else if (proc_start_time(h->f.pid) == h->f.start) {
		return 0;
	}
	if (!kill(h->f.pid, 0) || errno == EPERM)
		return -ESTALE;
	return -ESRCH;
}

/*
 * What an access that ended in @err reports.  By pid, a copy may have
 * reached another process if the producer's pid was recycled meanwhile:
 * whether the producer is still there decides first.  By pidfd, only
 * ESRCH needs telling apart: a free pid from a recycled one.
 */
static int pvmh_settle(const struct pvm_handle *h, int err)
{
	int same;

	if (h->via == PVM_HANDLE_VIA_PIDFD && err != -ESRCH)
		return err;
	same = pvmh_same(h);
	return same ? same : err;
}

/* The bytes copied, or -errno */
static ssize_t pvmh_copy(const struct pvm_handle *h, const struct iovec *local,
			 int nr_local, const struct iovec *remote, bool write)
{
	bool by_fd = h->via == PVM_HANDLE_VIA_PIDFD;
	pid_t target = by_fd ? h->pidfd : (pid_t)h->f.pid;
	unsigned long flags = by_fd ? PROCESS_VM_PIDFD : 0;
	ssize_t ret;

	if (write)
		ret = process_vm_writev(target, local, nr_local, remote, 1, flags);
	else
		ret = process_vm_readv(target, local, nr_local, remote, 1, flags);
	return ret < 0 ? -errno : ret;
}

/*
 * 0 while the export is live, -EKEYREVOKED once revoked, else why its word
 * could not be read.  The table is never unmapped while the producer runs
 * the program that exported: a fault means it has exec'd another one,
 * which revokes everything.
 */
static int pvmh_live(const struct pvm_handle *h)
{
	uint64_t word = 0;
	struct iovec local = { .iov_base = &word, .iov_len = sizeof(word) };
	struct iovec remote = {
		.iov_base = (void *)(uintptr_t)h->f.slot,
		.iov_len = sizeof(word),
	};
	ssize_t ret = pvmh_copy(h, &local, 1, &remote, false);

	if (ret == sizeof(word))
		return word == h->f.cookie ? 0 : -EKEYREVOKED;
	return ret >= 0 || ret == -EFAULT ? -EKEYREVOKED : ret;
}

/* Open the producer by pid and make sure it is the one that exported. */
static int pvmh_attach(struct pvm_handle *h, unsigned int flags)
{
	bool verified = false;
	uint64_t v;
	int same;

	h->pidfd = sys_pidfd_open(h->f.pid);
	if (h->pidfd < 0) {
		switch (errno) {
		case ESRCH:
			return -ESRCH;
		case EINVAL:	/* a thread of some other process now */
			return -ESTALE;
		case EMFILE:
		case ENFILE:
		case ENOMEM:
			return -errno;
		}
		/* No pidfd_open() (before 5.3): start times only */
	}
	if (h->pidfd >= 0 && h->f.id & PVMH_ID_INO) {
		v = pidfd_ino(h->pidfd);
		if (v && v != h->f.ino)
			return -ESTALE;
		verified |= !!v;
	}
	if (h->f.id & PVMH_ID_START) {
		v = proc_start_time(h->f.pid);
		if (v && v != h->f.start)
			return -ESTALE;
		verified |= !!v;
	}
	/* Nothing to compare with: gone, or no pidfs and no /proc here */
	if (!verified)
		return !kill(h->f.pid, 0) || errno == EPERM ? -EOPNOTSUPP : -ESRCH;
	/* What /proc showed was the pidfd's process if that one is still there */
	same = pvmh_same(h);
	if (same)
		return same;
	h->via = PVM_HANDLE_VIA_PID;
	if (h->pidfd >= 0 && !(flags & PVM_HANDLE_OPEN_PID) &&
	    pvm_handle_kernel_has_pidfd())
		h->via = PVM_HANDLE_VIA_PIDFD;
	return 0;
}

/* A revoked region (also by the producer's exec or exit) is EKEYREVOKED. */
static int pvmh_region_err(int err)
{
	return err == -ENXIO ? -EKEYREVOKED : err;
}

/* The owner of region @fd in our pid namespace (its fdinfo), or 0 */
static pid_t pvmh_region_owner(int fd)
{
	char path[64], line[128];
	int pid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "owner: %d", &pid) == 1)
			break;
	fclose(f);
	return pid > 0 ? pid : 0;
}

/*
 * Open the region of a version 2 handle for its access.  The kernel
 * checks everything: the secret (ENOENT), the access (EACCES), the uid
 * (EACCES) and that the region is live (ENXIO); the length is the
 * region's, the pid its owner's if /proc shows it.
 */
static int pvmh_open_region(struct pvm_handle *h)
{
	int has = pvmh_have_regions();
	struct stat st;
	pid_t owner;

	/* A format this kernel cannot serve */
	if (has <= 0)
		return has ? has : -EPROTONOSUPPORT;
	h->fd = syscall(PVMH_NR_OPEN, &h->f.region, sizeof(h->f.region),
			pvmh_region_flags(h->f.access));
	if (h->fd < 0)
		return pvmh_region_err(-errno);
	if (fstat(h->fd, &st))
		return -errno;
	h->f.len = st.st_size;
	owner = pvmh_region_owner(h->fd);
	if (owner)
		h->f.pid = owner;
	h->via = PVM_HANDLE_VIA_REGION;
	return 0;
}

static void pvmh_free(struct pvm_handle *h)
{
	if (h->pidfd >= 0)
		close(h->pidfd);
	if (h->fd >= 0)
		close(h->fd);
	free(h);
}

int pvm_handle_open(const void *handle, size_t size, unsigned int flags,
		    struct pvm_handle **hp)
{
	struct pvm_handle *h;
	int err;

	if (!hp)
		return -EINVAL;
	*hp = NULL;
	if (!handle || flags & ~PVM_HANDLE_OPEN_PID)
		return -EINVAL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->pidfd = -1;
	h->fd = -1;
	err = pvmh_decode(handle, size, &h->f);
	if (!err && h->f.version == PVM_HANDLE_VERSION_REGION)
		err = pvmh_open_region(h);
	else if (!err)
		err = pvmh_attach(h, flags);
	if (!err && h->via != PVM_HANDLE_VIA_REGION)
		err = pvmh_settle(h, pvmh_live(h));
	if (err) {
		pvmh_free(h);
		return err;
	}
	*hp = h;
	return 0;
}

void pvm_handle_close(struct pvm_handle *h)
{
	if (h)
		pvmh_free(h);
}

/* Check a transfer against the handle; its byte count in @total. */
static int pvmh_check_io(const struct pvm_handle *h, const struct iovec *iov,
			 int iovcnt, uint64_t offset, bool write, size_t *total)
{
	size_t sum = 0;
	int i;

	if (!h || iovcnt < 0 || iovcnt > IOV_MAX || (iovcnt && !iov))
		return -EINVAL;
	if (!(h->f.access & (write ? PVM_HANDLE_WRITE : PVM_HANDLE_READ)))
		return -EACCES;
	for (i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len > PVM_HANDLE_MAX_IO - sum)
			return -EINVAL;
		sum += iov[i].iov_len;
	}
	if (offset > h->f.len || sum > h->f.len - offset)
		return -ERANGE;
	*total = sum;
	return 0;
}

/*
 * Through the region: pread/pwrite at the region offset, until @total
 * bytes.  The kernel shortens a transfer only at a fault or a revoke; the
 * call for the rest then says which.
 */
static int pvmh_region_io(struct pvm_handle *h, const struct iovec *iov,
			  int iovcnt, uint64_t offset, bool write, size_t total)
{
	size_t done = 0, skip;
	ssize_t ret;
	char *base;
	int i = 0;

	ret = write ? pwritev(h->fd, iov, iovcnt, offset) :
		      preadv(h->fd, iov, iovcnt, offset);
	while (ret >= 0 || errno == EINTR) {
		done += ret > 0 ? ret : 0;
		if (done == total)
			return 0;
		if (!ret)
			return -EFAULT;	/* cannot happen within the region */
		/* The rest of the iovec that @done ends in, alone */
		for (i = 0, skip = done; skip >= iov[i].iov_len; i++)
			skip -= iov[i].iov_len;
		base = (char *)iov[i].iov_base + skip;
		ret = write ? pwrite(h->fd, base, iov[i].iov_len - skip,
				     offset + done) :
			      pread(h->fd, base, iov[i].iov_len - skip,
				    offset + done);
	}
	return pvmh_region_err(-errno);
}

/*
 * One transfer, all or nothing.  On the CMA path, the export's word is
 * read after the copy (after a fence, so after the copy's own accesses): a
 * read that returns data finished before any revocation.  A write also
 * reads it first, so that it does not start on a revoked export; one
 * already in flight when the producer revokes may still land (it then
 * reports EKEYREVOKED).
 */
static ssize_t pvmh_io(struct pvm_handle *h, const struct iovec *iov,
		       int iovcnt, uint64_t offset, bool write)
{
	struct iovec remote;
	size_t total;
	ssize_t ret;
	int err, live;

	err = pvmh_check_io(h, iov, iovcnt, offset, write, &total);
	if (err || !total)
		return err;
	if (h->via == PVM_HANDLE_VIA_REGION) {
		err = pvmh_region_io(h, iov, iovcnt, offset, write, total);
		return err ? err : (ssize_t)total;
	}
	remote.iov_base = (void *)(uintptr_t)(h->f.addr + offset);
	remote.iov_len = total;

	err = write ? pvmh_settle(h, pvmh_live(h)) : 0;
	if (!err) {
		ret = pvmh_copy(h, iov, iovcnt, &remote, write);
		err = ret < 0 ? ret : (size_t)ret == total ? 0 : -EFAULT;
	}
	if (!err || err == -EFAULT) {
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		live = pvmh_live(h);
		/* A revoked range may have been unmapped: say revoked */
		if (live)
			err = live;
	}
	err = pvmh_settle(h, err);
	return err ? err : (ssize_t)total;
}

ssize_t pvm_handle_preadv(struct pvm_handle *h, const struct iovec *iov,
			  int iovcnt, uint64_t offset)
{
	return pvmh_io(h, iov, iovcnt, offset, false);
}

ssize_t pvm_handle_pwritev(struct pvm_handle *h, const struct iovec *iov,
			   int iovcnt, uint64_t offset)
{
	return pvmh_io(h, iov, iovcnt, offset, true);
}

ssize_t pvm_handle_pread(struct pvm_handle *h, void *buf, size_t len,
			 uint64_t offset)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };

	return pvmh_io(h, &iov, 1, offset, false);
}

ssize_t pvm_handle_pwrite(struct pvm_handle *h, const void *buf, size_t len,
			  uint64_t offset)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };

	return pvmh_io(h, &iov, 1, offset, true);
}

/* The accessors return 0 for a NULL handle: no length, access, pid or path. */
uint64_t pvm_handle_length(const struct pvm_handle *h)
{
	return h ? h->f.len : 0;
}

unsigned int pvm_handle_access(const struct pvm_handle *h)
{
	return h ? h->f.access : 0;
}

pid_t pvm_handle_pid(const struct pvm_handle *h)
{
	return h ? (pid_t)h->f.pid : 0;
}

enum pvm_handle_via pvm_handle_via(const struct pvm_handle *h)
{
	return h ? h->via : 0;
}

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* What each error means when a function of this library returns it */
static const struct {
	int err;
	const char *msg;
} pvmh_errors[] = {
	{ EBADMSG, "not a valid pvm_handle (size, magic, CRC or a field)" },
	{ EPROTONOSUPPORT, "pvm_handle of an unsupported format version" },
	{ EOVERFLOW, "exported range beyond this process's address size" },
	{ EINVAL, "invalid argument" },
	{ EACCES, "the handle does not allow this access" },
	{ ERANGE, "outside the exported range" },
	{ EPERM, "the kernel refuses access to the producer (ptrace check)" },
	{ ESRCH, "the producer has exited" },
	{ ESTALE, "the producer has exited; its pid names another process" },
	{ EKEYREVOKED, "the export was revoked (or the producer exec'd)" },
	{ ENOENT, "no such region: a forged handle, or revoked and closed" },
	{ EFAULT, "a local buffer or part of the exported range is not mapped" },
	{ EOPNOTSUPP, "the producer's identity cannot be verified here" },
};

const char *pvm_handle_strerror(int err)
{
	unsigned int e = err < 0 ? -(unsigned int)err : (unsigned int)err;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(pvmh_errors); i++)
		if ((unsigned int)pvmh_errors[i].err == e)
			return pvmh_errors[i].msg;
	return e <= INT_MAX ? strerror(e) : "unknown error";
}
