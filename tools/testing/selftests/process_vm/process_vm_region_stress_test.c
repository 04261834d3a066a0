// SPDX-License-Identifier: GPL-2.0
/*
 * Region churn, for a debug kernel (KASAN, lockdep) where `make check` and
 * `make stress` run it: owners export, revoke and close regions while
 * readers copy through them.
 *
 *  - Owner processes (NOWNERS at a time, each with a second thread that
 *    revokes) export ranges of their buffers, plain and
 *    PROCESS_VM_REGION_PIN, one or two segments, read-only or read-write;
 *    they publish each region's handle on a shared board, send the fd by
 *    SCM_RIGHTS to a reader process and hand their fds to fork()ed holder
 *    children; they replace the buffers' pages (mmap() of a memfd, or
 *    mremap() of an anonymous mapping, over them), munmap() them, revoke,
 *    close, and at the end of a short life exit or exec.
 *  - Reader processes (NREADERS, NTHREADS threads each) take the fds that
 *    arrive, open handles from the board with process_vm_open(2), and read
 *    and write through them with pread(), pwrite(), preadv2(RWF_NOWAIT)
 *    and IORING_OP_READ; they close fds at random and all of them at the
 *    end, in random order, and then must hold no region fd.
 *
 * Every byte of a buffer names the buffer, its position in it and the
 * generation of its pages, so that every byte a copy returns is checked:
 * the buffer and position always, the generation where it is defined.
 * Buffer 0 is only exported read-only: a plain region returns pages of the
 * generations current during the copy, a PIN region those of export time.
 * Buffer 1 is also written through its regions, which may tear the
 * generation, so only its buffer and positions are checked.  An access
 * must return bytes or a documented error: ENXIO (revoked, owner gone),
 * EFAULT (pages unmapped, plain regions only), EAGAIN (RWF_NOWAIT only),
 * EINTR; an open ENOENT or ENXIO.  Pin balance, kernel reports and
 * kmemleak are checked by the caller (scripts/pvm/stress).  On kernels
 * without regions the test SKIPs.  PVM_STRESS_SECONDS sets the duration
 * (default 5).
 */
#define _GNU_SOURCE
#include "process_vm_util.h"

#include <dirent.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/io_uring.h>

#include "../kselftest_harness.h"

#ifndef PROCESS_VM_REGION_GET_HANDLE
#define PROCESS_VM_REGION_READ	1
#define PROCESS_VM_REGION_WRITE	2
#define PROCESS_VM_REGION_PIN	4
struct process_vm_handle {
	uint64_t id;
	uint8_t secret[16];
};

#define PROCESS_VM_REGION_REVOKE	_IO(0xB9, 0)
#define PROCESS_VM_REGION_GET_HANDLE	_IOR(0xB9, 1, struct process_vm_handle)
#endif
#ifndef RWF_NOWAIT
#define RWF_NOWAIT		0x00000008
#endif
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE	0x100000
#endif

#define R_READ		PROCESS_VM_REGION_READ
#define R_WRITE		PROCESS_VM_REGION_WRITE
#define R_PIN		PROCESS_VM_REGION_PIN

#define NOWNERS		3
#define NREADERS	2
#define NTHREADS	2
#define NBUF		2	/* buffer 0 read-only, buffer 1 also written */
#define BUF_PAGES	4
#define OWNER_SLOTS	6	/* regions an owner has at a time */
#define NSLOTS		(NOWNERS * OWNER_SLOTS)
#define TABLE		8	/* fds a reader thread holds at a time */
#define NHOLDERS	2	/* fork()ed holders an owner has at a time */
#define HOLDER_ACCESSES	64
#define MAX_SEGS	2
#define MSG_LEN		256

/* ---- the board, shared by all processes -------------------------------- */

/* What a holder knows of a region: enough to check every byte */
struct rdesc {
	uint64_t ino;		/* of the export's fd: SCM_RIGHTS lookup */
	struct process_vm_handle h;
	unsigned int flags;	/* of the export */
	unsigned int gen;	/* of the pages at export */
	unsigned int buf;	/* index into board.cur */
	unsigned int nseg;
	size_t off[MAX_SEGS], len[MAX_SEGS];	/* in the buffer */
	size_t size;
};

struct slot {
	unsigned int seq;	/* odd while its owner changes it */
	unsigned int live;
	struct rdesc d;
};

enum {
	C_READ, C_WRITE, C_NOWAIT, C_URING,	/* accesses by kind */
	C_BYTES, C_FULL, C_PARTIAL, C_ENXIO, C_EFAULT, C_EAGAIN, C_EINTR,
	C_OPEN, C_OPEN_ENOENT, C_OPEN_ENXIO, C_RECV,
	C_EXPORT, C_EXPORT_PIN, C_EXPORT_EFAULT, C_REVOKE, C_CLOSE,
	C_MMAP, C_MREMAP, C_MUNMAP, C_FORK, C_EXIT, C_EXEC, C_OWNERS,
	NR_COUNTS
};

static const char * const count_name[NR_COUNTS] = {
	"read", "write", "nowait", "uring", "bytes", "full", "partial",
	"enxio", "efault", "eagain", "eintr", "open", "open_enoent",
	"open_enxio", "recv", "export", "export_pin", "export_efault",
	"revoke", "close", "mmap", "mremap", "munmap", "fork", "exit", "exec",
	"owners",
};

struct board {
	unsigned int stop;
	unsigned int cur[NOWNERS * NBUF];	/* announced generations */
	struct slot slot[NSLOTS];
	long count[NR_COUNTS];
	long fails;
	int have_msg;
	char msg[MSG_LEN];
};

static struct board *board;
static size_t psz, buf_len;

static bool stopping(void)
{
	return __atomic_load_n(&board->stop, __ATOMIC_ACQUIRE);
}

static void count(int what, long n)
{
	__atomic_add_fetch(&board->count[what], n, __ATOMIC_RELAXED);
}

/* A failure, from any process: counted, the first one's text kept */
static void __printf(1, 2) fail(const char *fmt, ...)
{
	va_list ap;

	__atomic_add_fetch(&board->fails, 1, __ATOMIC_SEQ_CST);
	if (__atomic_exchange_n(&board->have_msg, 1, __ATOMIC_SEQ_CST))
		return;
	va_start(ap, fmt);
	vsnprintf(board->msg, sizeof(board->msg), fmt, ap);
	va_end(ap);
}

static unsigned int cur_gen(unsigned int buf)
{
	return __atomic_load_n(&board->cur[buf], __ATOMIC_ACQUIRE);
}

/* A copy of slot @i if it is live and was not changed meanwhile */
static bool slot_read(int i, struct rdesc *d)
{
	struct slot *s = &board->slot[i];
	unsigned int seq = __atomic_load_n(&s->seq, __ATOMIC_ACQUIRE);
	bool live;

	if (seq & 1)
		return false;
	live = __atomic_load_n(&s->live, __ATOMIC_RELAXED);
	memcpy(d, (const void *)&s->d, sizeof(*d));
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return live && __atomic_load_n(&s->seq, __ATOMIC_RELAXED) == seq;
}

/* By its owner only: slot @i shows @d, or nothing if NULL */
static void slot_write(int i, const struct rdesc *d)
{
	struct slot *s = &board->slot[i];

	__atomic_add_fetch(&s->seq, 1, __ATOMIC_ACQ_REL);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	if (d)
		memcpy((void *)&s->d, d, sizeof(*d));
	__atomic_store_n(&s->live, !!d, __ATOMIC_RELAXED);
	__atomic_add_fetch(&s->seq, 1, __ATOMIC_RELEASE);
}

/* ---- the pattern --------------------------------------------------------- */

/*
 * Byte @bo of buffer @buf in generation @gen: each 8-byte word holds its
 * index (bytes 0-2), the generation (bytes 3-5) and the buffer (6-7, never
 * 0), so that no zeroed or foreign page passes.
 */
static uint8_t pat(unsigned int buf, unsigned int gen, size_t bo)
{
	uint64_t w = (0x5e00ULL + buf) << 48 |
		     (uint64_t)(gen & 0xffffff) << 24 | ((bo >> 3) & 0xffffff);

	return w >> 8 * (bo & 7);
}

/* The buffer offset of region offset @pos */
static size_t buf_off(const struct rdesc *d, size_t pos)
{
	unsigned int i;

	for (i = 0; i + 1 < d->nseg && pos >= d->len[i]; i++)
		pos -= d->len[i];
	return d->off[i] + pos;
}

/* @n bytes of the region at @pos, as generation @gen has them */
static void region_fill(const struct rdesc *d, uint8_t *p, size_t pos,
			size_t n, unsigned int gen)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = pat(d->buf, gen, buf_off(d, pos + i));
}

/* Byte @j of every generation in [@lo, @hi] can be @v */
static bool gen_byte_ok(uint8_t v, unsigned int j, unsigned int lo,
			unsigned int hi)
{
	unsigned int a = lo >> 8 * j, b = hi >> 8 * j;

	if (b - a >= 255)
		return true;
	return (uint8_t)(v - a) <= (uint8_t)(b - a);
}

/*
 * The index of the first of @n bytes read at region offset @pos that is
 * not what the region's buffer has there in a generation in [@lo, @hi],
 * or -1.  @any_gen: only the buffer and the position are checked.
 */
static long region_check(const struct rdesc *d, const uint8_t *p, size_t pos,
			 size_t n, unsigned int lo, unsigned int hi,
			 bool any_gen)
{
	size_t i, bo;
	unsigned int k;

	for (i = 0; i < n; i++) {
		bo = buf_off(d, pos + i);
		k = bo & 7;
		if (k >= 3 && k <= 5) {
			if (!any_gen && !gen_byte_ok(p[i], k - 3, lo, hi))
				return i;
		} else if (p[i] != pat(d->buf, 0, bo)) {
			return i;
		}
	}
	return -1;
}

/* ---- accesses, by readers and holders ------------------------------------ */

struct entry {
	int fd;
	bool can_write;		/* the fd's access */
	struct rdesc d;
};

struct accessor {
	const char *who;
	unsigned int seed;
	struct pvm_ring ring;	/* fd -1 without io_uring */
	uint8_t *io;		/* buf_len + psz bytes */
};

enum access_op { PREAD, PWRITE, NOWAIT, URING, NR_HOW };

static const char * const how_name[NR_HOW] = {
	"pread", "pwrite", "preadv2(RWF_NOWAIT)", "IORING_OP_READ",
};

static long uring_read(struct accessor *a, int fd, size_t len, size_t pos)
{
	struct io_uring_sqe sqe;

	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = IORING_OP_READ;
	sqe.fd = fd;
	sqe.off = pos;
	sqe.addr = (uintptr_t)a->io;
	sqe.len = len;
	return pvm_ring_run(&a->ring, &sqe);
}

/* One access @how of @len bytes at @pos: count or -errno */
static long access_do(struct accessor *a, struct entry *e, enum access_op how,
		      size_t pos, size_t len, unsigned int gen)
{
	struct iovec iov = { a->io, len };

	switch (how) {
	case PWRITE:
		region_fill(&e->d, a->io, pos, len, gen);
		return pvm_res(pwrite(e->fd, a->io, len, pos));
	case NOWAIT:
		return pvm_res(preadv2(e->fd, &iov, 1, pos, RWF_NOWAIT));
	case URING:
		return uring_read(a, e->fd, len, pos);
	default:
		return pvm_res(pread(e->fd, a->io, len, pos));
	}
}

/* Whether @ret is a result access @how of region @d may give */
static bool result_ok(const struct rdesc *d, enum access_op how, long ret,
		      size_t want)
{
	bool pin = d->flags & R_PIN;

	if (ret > 0)
		return (size_t)ret == want || (!pin && (size_t)ret < want);
	switch (-ret) {
	case ENXIO:
	case EINTR:
		return true;
	case EFAULT:
		return !pin;
	case EAGAIN:
		return how == NOWAIT;
	default:
		return false;
	}
}

static void count_result(long ret, size_t want)
{
	static const int err_count[][2] = {
		{ ENXIO, C_ENXIO }, { EFAULT, C_EFAULT },
		{ EAGAIN, C_EAGAIN }, { EINTR, C_EINTR },
	};
	size_t i;

	if (ret > 0) {
		count((size_t)ret == want ? C_FULL : C_PARTIAL, 1);
		count(C_BYTES, ret);
	}
	for (i = 0; i < ARRAY_SIZE(err_count); i++)
		if (ret == -err_count[i][0])
			count(err_count[i][1], 1);
}

/* Whether @ret is a result access @how of region @d may give: counted */
static bool result_checked(struct accessor *a, const struct rdesc *d,
			   enum access_op how, long ret, size_t len, size_t pos,
			   size_t want)
{
	count_result(ret, want);
	if (result_ok(d, how, ret, want))
		return true;
	fail("%s: %s of %zu at %zu (size %zu, flags %#x): %ld", a->who,
	     how_name[how], len, pos, d->size, d->flags, ret);
	return false;
}

/*
 * A random access through @e, its result and its bytes checked: the bytes
 * read, or for a write the bytes read back, which another write may have
 * changed meanwhile (the buffer and positions are still checked).
 */
static void access_once(struct accessor *a, struct entry *e)
{
	const struct rdesc *d = &e->d;
	bool pin = d->flags & R_PIN, any_gen = d->buf % NBUF;
	size_t pos = rand_r(&a->seed) % d->size;
	size_t len = 1 + rand_r(&a->seed) % (d->size - pos + 64);
	size_t want = len < d->size - pos ? len : d->size - pos;
	unsigned int lo = cur_gen(d->buf), hi;
	enum access_op how = rand_r(&a->seed) % NR_HOW;
	long ret, bad;

	if (how == PWRITE && !e->can_write)
		how = PREAD;
	if (how == URING && a->ring.fd < 0)
		how = NOWAIT;
	count(C_READ + how, 1);
	ret = access_do(a, e, how, pos, len, pin ? d->gen : lo);
	if (!result_checked(a, d, how, ret, len, pos, want))
		return;
	if (ret > 0 && how == PWRITE) {
		want = ret;
		ret = pvm_res(pread(e->fd, a->io, want, pos));
		if (!result_checked(a, d, PREAD, ret, want, pos, want))
			return;
	}
	hi = cur_gen(d->buf);
	if (ret <= 0)
		return;
	if (pin) {
		lo = d->gen;
		hi = d->gen;
	} else if (lo) {
		lo--;
	}
	bad = region_check(d, a->io, pos, ret, lo, hi, any_gen);
	if (bad >= 0)
		fail("%s: %s of %zu at %zu: byte %zu (%zu) %#x, not buffer %u gen %u-%u (%#x)",
		     a->who, how_name[how], len, pos, pos + bad,
		     buf_off(d, pos + bad), a->io[bad], d->buf, lo, hi,
		     d->flags);
}

static int accessor_init(struct accessor *a, const char *who,
			 unsigned int seed, bool uring)
{
	a->who = who;
	a->seed = seed;
	a->ring.fd = -1;
	if (uring && pvm_ring_init(&a->ring))
		a->ring.fd = -1;
	a->io = pvm_map_anon(buf_len * MAX_SEGS + psz);
	if (!a->io)
		return -ENOMEM;
	memset(a->io, 0, buf_len * MAX_SEGS + psz);
	return 0;
}

static void accessor_exit(struct accessor *a)
{
	pvm_ring_exit(&a->ring);
	munmap(a->io, buf_len * MAX_SEGS + psz);
}

/* Region fds this process holds: 0 means none leaked */
static int region_fds(void)
{
	struct dirent *de;
	char link[64];
	int n = 0;
	DIR *dir = opendir("/proc/self/fd");

	if (!dir)
		return -1;
	while ((de = readdir(dir))) {
		ssize_t len = readlinkat(dirfd(dir), de->d_name, link,
					 sizeof(link) - 1);

		if (len <= 0)
			continue;
		link[len] = 0;
		n += !strcmp(link, "anon_inode:[process_vm_region]");
	}
	closedir(dir);
	return n;
}

/* ---- owners --------------------------------------------------------------- */

struct owned {
	int fd;			/* -1: a free slot */
	bool revoked;
	struct rdesc d;
};

struct owner {
	int idx;		/* 0 .. NOWNERS - 1 */
	unsigned int seed;
	uint8_t *area;		/* buffer b at area + 2 * b * buf_len */
	uint8_t *spare;		/* where new anonymous pages are made */
	bool mapped[NBUF];
	unsigned int gen[NBUF];	/* of the pages mapped */
	pthread_mutex_t lock;	/* of own[], against the revoker */
	struct owned own[OWNER_SLOTS];
	pid_t holder[NHOLDERS];
	int socks[NREADERS];	/* to the readers, nonblocking */
	uint8_t *tmp;		/* a buffer's content, being made */
};

static uint8_t *buf_addr(struct owner *o, int b)
{
	return o->area + 2 * b * buf_len;
}

static unsigned int gbuf(struct owner *o, int b)
{
	return o->idx * NBUF + b;
}

/*
 * The buffer's pages, whole: its position and buffer bytes, and for the
 * buffer that is never written through a region the generation too.
 */
static void owner_check(struct owner *o, int b)
{
	struct rdesc d = {
		.buf = gbuf(o, b), .nseg = 1, .len = { buf_len },
		.size = buf_len,
	};
	long bad;

	if (!o->mapped[b])
		return;
	bad = region_check(&d, buf_addr(o, b), 0, buf_len, o->gen[b],
			   o->gen[b], b);
	if (bad >= 0)
		fail("owner %d: byte %ld of buffer %d, gen %u, is %#x", o->idx,
		     bad, b, o->gen[b], buf_addr(o, b)[bad]);
}

/*
 * New pages for buffer @b, of a new generation, announced first: over the
 * old ones by mmap() of a memfd or by mremap() of an anonymous mapping
 * made at o->spare, or, if it is unmapped, a memfd in the hole.  Nothing
 * else maps memory in an owner but at fixed addresses, so the hole is
 * still there.
 */
static int owner_remap(struct owner *o, int b)
{
	unsigned int gen = cur_gen(gbuf(o, b)) + 1;
	struct rdesc d = {
		.buf = gbuf(o, b), .nseg = 1, .len = { buf_len },
		.size = buf_len,
	};
	uint8_t *at = buf_addr(o, b), *p;
	int fd, flags;

	owner_check(o, b);
	region_fill(&d, o->tmp, 0, buf_len, gen);
	__atomic_store_n(&board->cur[d.buf], gen, __ATOMIC_RELEASE);
	if (o->mapped[b] && rand_r(&o->seed) % 2) {
		p = mmap(o->spare, buf_len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (p != o->spare)
			return -errno;
		memcpy(p, o->tmp, buf_len);
		if (mremap(p, buf_len, buf_len, MREMAP_MAYMOVE | MREMAP_FIXED,
			   at) != at)
			return -errno;
		count(C_MREMAP, 1);
	} else {
		fd = memfd_create("pvm_region_stress", MFD_CLOEXEC);
		if (fd < 0 || ftruncate(fd, buf_len) ||
		    pvm_write_full(fd, o->tmp, buf_len))
			return -errno;
		flags = MAP_SHARED |
			(o->mapped[b] ? MAP_FIXED : MAP_FIXED_NOREPLACE);
		p = mmap(at, buf_len, PROT_READ | PROT_WRITE, flags, fd, 0);
		close(fd);
		if (p != at)
			return -errno;
		count(C_MMAP, 1);
	}
	o->mapped[b] = true;
	o->gen[b] = gen;
	return 0;
}

static int owner_unmap(struct owner *o, int b)
{
	if (!o->mapped[b])
		return 0;
	owner_check(o, b);
	if (munmap(buf_addr(o, b), buf_len))
		return -errno;
	o->mapped[b] = false;
	count(C_MUNMAP, 1);
	return 0;
}

/* A random range of buffer @b's into @d's next segment */
static void random_seg(struct owner *o, struct rdesc *d)
{
	size_t off = rand_r(&o->seed) % buf_len;

	d->off[d->nseg] = off;
	d->len[d->nseg] = 1 + rand_r(&o->seed) % (buf_len - off);
	d->size += d->len[d->nseg++];
}

/*
 * Export a random region of a random buffer into free slot @i, publish it
 * and maybe send it to a reader: 0 or -errno.
 */
static int owner_export(struct owner *o, int i)
{
	int b = rand_r(&o->seed) % NBUF, s, fd;
	struct rdesc d = { .buf = gbuf(o, b), .gen = o->gen[b] };
	struct iovec iov[MAX_SEGS];
	struct owned *w = &o->own[i];
	struct stat st;
	unsigned int k;

	d.flags = R_READ;
	if (b && rand_r(&o->seed) % 2)
		d.flags |= R_WRITE;
	if (rand_r(&o->seed) % 2)
		d.flags |= R_PIN;
	random_seg(o, &d);
	if (rand_r(&o->seed) % 3 == 0)
		random_seg(o, &d);
	for (k = 0; k < d.nseg; k++)
		iov[k] = (struct iovec){ buf_addr(o, b) + d.off[k], d.len[k] };
	fd = syscall(__NR_process_vm_export, iov, d.nseg, d.flags);
	if (fd < 0 && (d.flags & R_PIN) && !o->mapped[b] && errno == EFAULT) {
		count(C_EXPORT_EFAULT, 1);
		return 0;
	}
	if (fd < 0 && (d.flags & R_PIN) && errno == ENOMEM)
		return 0;	/* past RLIMIT_MEMLOCK: not root */
	if (fd < 0) {
		fail("owner %d: export of %u segments, flags %#x: %s", o->idx,
		     d.nseg, d.flags, strerror(errno));
		return -errno;
	}
	count(d.flags & R_PIN ? C_EXPORT_PIN : C_EXPORT, 1);
	if (fstat(fd, &st) || ioctl(fd, PROCESS_VM_REGION_GET_HANDLE, &d.h)) {
		fail("owner %d: fstat or GET_HANDLE: %s", o->idx,
		     strerror(errno));
		close(fd);
		return -errno;
	}
	d.ino = st.st_ino;
	pthread_mutex_lock(&o->lock);
	w->d = d;
	w->revoked = false;
	w->fd = fd;
	pthread_mutex_unlock(&o->lock);
	slot_write(o->idx * OWNER_SLOTS + i, &d);
	if (rand_r(&o->seed) % 2) {
		s = pvm_send_fd(o->socks[rand_r(&o->seed) % NREADERS], fd);
		if (s && s != -EAGAIN)
			fail("owner %d: SCM_RIGHTS: %s", o->idx, strerror(-s));
	}
	return 0;
}

static int owner_revoke(struct owner *o, struct owned *w)
{
	if (ioctl(w->fd, PROCESS_VM_REGION_REVOKE)) {
		fail("owner %d: revoke: %s", o->idx, strerror(errno));
		return -errno;
	}
	w->revoked = true;
	count(C_REVOKE, 1);
	return 0;
}

/* Close slot @i's fd, revoked first or not; the region may live on */
static void owner_close(struct owner *o, int i)
{
	struct owned *w = &o->own[i];

	slot_write(o->idx * OWNER_SLOTS + i, NULL);
	pthread_mutex_lock(&o->lock);
	if (!w->revoked && rand_r(&o->seed) % 2)
		owner_revoke(o, w);
	close(w->fd);
	w->fd = -1;
	pthread_mutex_unlock(&o->lock);
	count(C_CLOSE, 1);
}

/* The owner's second thread: revokes a live region now and then */
static void *revoker(void *arg)
{
	struct owner *o = arg;
	unsigned int seed = o->seed ^ 0x9e3779b9;
	struct owned *w;

	while (!stopping()) {
		usleep(500 + rand_r(&seed) % 2000);
		pthread_mutex_lock(&o->lock);
		w = &o->own[rand_r(&seed) % OWNER_SLOTS];
		if (w->fd >= 0 && !w->revoked && rand_r(&seed) % 4 == 0)
			owner_revoke(o, w);
		pthread_mutex_unlock(&o->lock);
	}
	return NULL;
}

/*
 * A fork()ed holder: the fds it inherited, accessed and checked; it may
 * neither revoke nor get a handle, as it is not the owner.
 */
static void holder(struct owner *o)
{
	struct accessor a;
	struct entry e[OWNER_SLOTS];
	struct process_vm_handle h;
	int i, n = 0;

	for (i = 0; i < OWNER_SLOTS; i++) {
		if (o->own[i].fd < 0)
			continue;
		e[n].fd = o->own[i].fd;
		e[n].can_write = o->own[i].d.flags & R_WRITE;
		e[n++].d = o->own[i].d;
	}
	if (!n || accessor_init(&a, "holder", o->seed ^ getpid(), false))
		_exit(0);
	for (i = 0; i < HOLDER_ACCESSES && !stopping(); i++)
		access_once(&a, &e[rand_r(&a.seed) % n]);
	for (i = 0; i < n; i++) {
		if (ioctl(e[i].fd, PROCESS_VM_REGION_REVOKE) != -1 ||
		    errno != EPERM)
			fail("%s: revoke: %s, not EPERM", __func__,
			     strerror(errno));
		if (ioctl(e[i].fd, PROCESS_VM_REGION_GET_HANDLE, &h) != -1 ||
		    errno != EPERM)
			fail("%s: GET_HANDLE: %s, not EPERM", __func__,
			     strerror(errno));
	}
	_exit(0);
}

/* Reap the holders that are done, or with @all all of them */
static void owner_reap(struct owner *o, bool all)
{
	int i, status;

	for (i = 0; i < NHOLDERS; i++) {
		if (o->holder[i] <= 0 ||
		    waitpid(o->holder[i], &status, all ? 0 : WNOHANG) <= 0)
			continue;
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			fail("owner %d: holder status %#x", o->idx, status);
		o->holder[i] = 0;
	}
}

static void owner_fork(struct owner *o)
{
	int i;

	for (i = 0; i < NHOLDERS && o->holder[i] > 0; i++)
		;
	if (i == NHOLDERS)
		return;
	/* Under the lock: the child's copy of own[] is consistent */
	pthread_mutex_lock(&o->lock);
	o->holder[i] = fork();
	if (!o->holder[i])
		holder(o);
	pthread_mutex_unlock(&o->lock);
	if (o->holder[i] < 0)
		fail("owner %d: fork: %s", o->idx, strerror(errno));
	else
		count(C_FORK, 1);
}

/* One random step of an owner's life: 0 or -errno */
static int owner_step(struct owner *o)
{
	int i = rand_r(&o->seed) % OWNER_SLOTS, b = rand_r(&o->seed) % NBUF;
	unsigned int r = rand_r(&o->seed) % 100;

	if (r < 35)
		return o->own[i].fd < 0 ? owner_export(o, i) : 0;
	if (r < 55) {
		if (o->own[i].fd >= 0)
			owner_close(o, i);
		return 0;
	}
	if (r < 85)
		return owner_remap(o, b);
	if (r < 95)
		return owner_unmap(o, b);
	owner_fork(o);
	return 0;
}

/*
 * An owner's life, in a child of the test: a short one, ended by exit
 * (its regions still open, or closed first) or by exec, or by the end of
 * the test.  Its length is a number of steps, not a time: a debug kernel
 * under emulation, loaded by the other stress tests, can take longer than
 * any short time to set an owner up, which then would export nothing.
 */
static void owner_main(int idx, const int *socks, unsigned int seed)
{
	int steps = 32 + seed % 224, i, err = 0;
	struct owner o = { .idx = idx, .seed = seed };
	pthread_t th;

	o.area = pvm_map(4 * NBUF * buf_len, PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE);
	o.tmp = pvm_map_anon(buf_len);
	if (!o.area || !o.tmp)
		_exit(2);
	o.area += buf_len;	/* a PROT_NONE guard before */
	o.spare = o.area + 2 * NBUF * buf_len;
	pthread_mutex_init(&o.lock, NULL);
	for (i = 0; i < OWNER_SLOTS; i++)
		o.own[i].fd = -1;
	for (i = 0; i < NREADERS; i++)
		o.socks[i] = socks[i];
	for (i = 0; i < NBUF && !err; i++)
		err = munmap(buf_addr(&o, i), buf_len) ? -errno :
		      owner_remap(&o, i);
	if (err || pthread_create(&th, NULL, revoker, &o))
		_exit(3);
	while (!err && !stopping() && steps--) {
		err = owner_step(&o);
		usleep(100 + rand_r(&o.seed) % 400);
	}
	if (err)
		fail("owner %d: step: %s", idx, strerror(-err));
	owner_reap(&o, true);
	if (stopping() || err)
		_exit(0);
	switch (rand_r(&o.seed) % 3) {
	case 0:
		count(C_EXEC, 1);
		execl("/bin/true", "true", (char *)NULL);
		break;
	case 1:
		for (i = 0; i < OWNER_SLOTS; i++)
			if (o.own[i].fd >= 0)
				owner_close(&o, i);
		break;
	}
	count(C_EXIT, 1);
	_exit(0);
}

/* ---- readers ------------------------------------------------------------- */

struct reader {
	int idx, thread;
	int sock;		/* fds from the owners, nonblocking */
	struct accessor a;
	struct entry e[TABLE];
	int n;
	char who[32];
};

static void reader_close(struct reader *r, int i)
{
	close(r->e[i].fd);
	r->e[i] = r->e[--r->n];
}

static void reader_add(struct reader *r, int fd, const struct rdesc *d,
		       bool can_write)
{
	if (r->n == TABLE)
		reader_close(r, rand_r(&r->a.seed) % r->n);
	r->e[r->n].fd = fd;
	r->e[r->n].can_write = can_write;
	r->e[r->n++].d = *d;
}

/*
 * An fd that arrived by SCM_RIGHTS, found on the board by its inode; it
 * is dropped if its slot changed meanwhile.
 */
static void reader_recv(struct reader *r)
{
	struct rdesc d;
	struct stat st;
	int fd = pvm_recv_fd(r->sock), i;

	if (fd == -EAGAIN)
		return;
	if (fd < 0 || fstat(fd, &st)) {
		fail("%s: SCM_RIGHTS: %s", r->who, strerror(fd < 0 ? -fd : errno));
		if (fd >= 0)
			close(fd);
		return;
	}
	count(C_RECV, 1);
	for (i = 0; i < NSLOTS; i++) {
		if (slot_read(i, &d) && d.ino == st.st_ino) {
			reader_add(r, fd, &d, d.flags & R_WRITE);
			return;
		}
	}
	close(fd);
}

/*
 * A handle from the board, opened for reading, writing too, or (now and
 * then) for more than the region grants, which must fail.
 */
static void reader_open(struct reader *r)
{
	unsigned int want = R_READ;
	struct rdesc d;
	int fd;

	if (!slot_read(rand_r(&r->a.seed) % NSLOTS, &d))
		return;
	if (rand_r(&r->a.seed) % 2)
		want |= R_WRITE;
	fd = syscall(__NR_process_vm_open, &d.h, sizeof(d.h), want);
	count(C_OPEN, 1);
	if (fd >= 0 && (want & ~d.flags & R_WRITE)) {
		fail("%s: open for writing of a read-only region", r->who);
		close(fd);
	} else if (fd >= 0) {
		reader_add(r, fd, &d, want & R_WRITE);
	} else if (errno == ENOENT) {
		count(C_OPEN_ENOENT, 1);
	} else if (errno == ENXIO) {
		count(C_OPEN_ENXIO, 1);
	} else if (errno != EACCES || !(want & ~d.flags & R_WRITE)) {
		fail("%s: process_vm_open(%#x) of a region of %#x: %s",
		     r->who, want, d.flags, strerror(errno));
	}
}

static void *reader_thread(void *arg)
{
	struct reader *r = arg;
	unsigned int k;

	while (!stopping()) {
		if (r->thread == 0)
			reader_recv(r);
		k = rand_r(&r->a.seed) % 16;
		if (k < 3)
			reader_open(r);
		else if (k < 4 && r->n)
			reader_close(r, rand_r(&r->a.seed) % r->n);
		if (r->n)
			access_once(&r->a, &r->e[rand_r(&r->a.seed) % r->n]);
	}
	while (r->n)
		reader_close(r, rand_r(&r->a.seed) % r->n);
	return NULL;
}

static void reader_main(int idx, int sock)
{
	struct reader r[NTHREADS];
	pthread_t th[NTHREADS];
	int i, n;

	for (i = 0; i < NTHREADS; i++) {
		memset(&r[i], 0, sizeof(r[i]));
		r[i].idx = idx;
		r[i].thread = i;
		r[i].sock = sock;
		snprintf(r[i].who, sizeof(r[i].who), "reader %d.%d", idx, i);
		if (accessor_init(&r[i].a, r[i].who, getpid() * 31 + i, true) ||
		    pthread_create(&th[i], NULL, reader_thread, &r[i]))
			_exit(2);
	}
	for (i = 0; i < NTHREADS; i++) {
		pthread_join(th[i], NULL);
		accessor_exit(&r[i].a);
	}
	/* what still arrives is closed as it comes */
	while ((n = pvm_recv_fd(sock)) >= 0)
		close(n);
	n = region_fds();
	if (n)
		fail("reader %d: %d region fds left after closing all", idx, n);
	_exit(0);
}

/* ---- the test ------------------------------------------------------------- */

static int seconds(void)
{
	const char *s = getenv("PVM_STRESS_SECONDS");

	return s ? atoi(s) : 5;
}

static bool no_regions(void)
{
	return syscall(__NR_process_vm_export, NULL, 0, 0) < 0 &&
	       pvm_syscall_missing(errno);
}

/* The sockets to the readers: [0] the owners' end, [1] the reader's */
static int sv[NREADERS][2];

FIXTURE(region) {
	pid_t owner[NOWNERS], reader[NREADERS];
};

FIXTURE_SETUP(region)
{
	int i;

	psz = PVM_PAGE;
	buf_len = BUF_PAGES * psz;
	memset(self, 0, sizeof(*self));
	memset(sv, -1, sizeof(sv));
	board = pvm_map(sizeof(*board), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS);
	ASSERT_FALSE(!board);
	for (i = 0; i < NREADERS; i++) {
		ASSERT_EQ(0, socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC,
					0, sv[i]));
		ASSERT_EQ(0, fcntl(sv[i][0], F_SETFL, O_NONBLOCK));
		ASSERT_EQ(0, fcntl(sv[i][1], F_SETFL, O_NONBLOCK));
	}
}

/* Every child reaped, also after a failed assertion */
FIXTURE_TEARDOWN(region)
{
	int i;

	__atomic_store_n(&board->stop, 1, __ATOMIC_RELEASE);
	for (i = 0; i < NOWNERS; i++)
		if (self->owner[i] > 0)
			kill(self->owner[i], SIGKILL);
	for (i = 0; i < NREADERS; i++)
		if (self->reader[i] > 0)
			kill(self->reader[i], SIGKILL);
	while (waitpid(-1, NULL, 0) > 0)
		;
	for (i = 0; i < NREADERS; i++) {
		close(sv[i][0]);
		close(sv[i][1]);
	}
	munmap(board, sizeof(*board));
}

/* An owner, in a child: its pid */
static pid_t spawn_owner(int idx, unsigned int seed)
{
	int socks[NREADERS], i;
	pid_t pid = fork();

	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (i = 0; i < NREADERS; i++) {
		socks[i] = sv[i][0];
		close(sv[i][1]);
	}
	count(C_OWNERS, 1);
	owner_main(idx, socks, seed);
	_exit(0);
}

static pid_t spawn_reader(int idx)
{
	pid_t pid = fork();
	int i;

	if (pid)
		return pid;
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	for (i = 0; i < NREADERS; i++) {
		close(sv[i][0]);
		if (i != idx)
			close(sv[i][1]);
	}
	reader_main(idx, sv[idx][1]);
	_exit(0);
}

/* Whether child @pid ended well: exited with 0 */
static bool reaped_ok(pid_t pid, int status, const char *what)
{
	if (WIFEXITED(status) && !WEXITSTATUS(status))
		return true;
	fail("%s %d: status %#x", what, pid, status);
	return false;
}

TEST_F_TIMEOUT(region, churn, 120)
{
	long long end = pvm_now_ms() + seconds() * 1000LL;
	unsigned int seed = getpid();
	int i, status;
	pid_t pid;

	if (no_regions())
		SKIP(return, "process_vm_export(2): not in this kernel");
	for (i = 0; i < NREADERS; i++) {
		self->reader[i] = spawn_reader(i);
		ASSERT_LT(0, self->reader[i]);
	}
	for (i = 0; i < NOWNERS; i++) {
		self->owner[i] = spawn_owner(i, rand_r(&seed));
		ASSERT_LT(0, self->owner[i]);
	}
	/* Owners that ended are replaced until the end */
	while (pvm_now_ms() < end) {
		pid = waitpid(-1, &status, WNOHANG);
		if (!pid) {
			usleep(2000);
			continue;
		}
		ASSERT_LT(0, pid);
		for (i = 0; i < NOWNERS && self->owner[i] != pid; i++)
			;
		ASSERT_GT(NOWNERS, i) TH_LOG("reader %d ended early", pid);
		reaped_ok(pid, status, "owner");
		self->owner[i] = spawn_owner(i, rand_r(&seed));
		ASSERT_LT(0, self->owner[i]);
	}
	__atomic_store_n(&board->stop, 1, __ATOMIC_RELEASE);
	while ((pid = wait(&status)) > 0) {
		reaped_ok(pid, status, "child");
		for (i = 0; i < NOWNERS; i++)
			if (self->owner[i] == pid)
				self->owner[i] = 0;
		for (i = 0; i < NREADERS; i++)
			if (self->reader[i] == pid)
				self->reader[i] = 0;
	}
	ASSERT_EQ(ECHILD, errno);
	for (i = 0; i < NR_COUNTS; i++)
		ksft_print_msg("%s %ld\n", count_name[i], board->count[i]);
	EXPECT_EQ(0, region_fds());
	EXPECT_EQ(0, board->fails) TH_LOG("first failure: %s", board->msg);
	EXPECT_LT(0, board->count[C_FULL]);
}

TEST_HARNESS_MAIN
