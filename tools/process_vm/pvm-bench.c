// SPDX-License-Identifier: GPL-2.0
/*
 * pvm-bench - bandwidth of Cross Memory Attach (process_vm_readv/writev)
 * against the other ways one process can hand data to another.
 *
 * Every configuration (method, pattern, memory, iovec shape, cache state,
 * message size) runs in freshly forked processes that share a control
 * page.  A "link" carries messages from one process to another; the
 * single-copy methods do a rendezvous on it (the passive side posts the
 * address of its buffer, the active side copies and reports completion),
 * the copying transports (pipe, vmsplice, shared memory ring) move bytes
 * through the kernel or a shared region.  Every round is verified: the
 * senders fill their buffers with a pattern derived from the round, the
 * receivers zero theirs and check the payload and the gaps afterwards.
 *
 * Patterns: ping-pong (1 echoes every message back to 0), stream (0 sends
 * back to back to 1), bcast (N readers take the message of 0 at once) and
 * gather (0 takes one message from each of N sources).  A posted buffer
 * is reused only after its copy completed, so streaming with the
 * single-copy methods is back-to-back rendezvous.  memcpy is one process
 * copying between two buffers: the single-copy limit.
 *
 * Bandwidth is in MB/s (10^6 bytes per second).  Ping-pong reports
 * size / half round trip, the other patterns the aggregate payload rate.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdnoreturn.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "pvm_args.h"

#define KiB		1024UL
#define MiB		(1024 * KiB)
#define HPAGE		(2 * MiB)
#define PAGE		(4 * KiB)
#define CACHELINE	64
#define MAX_N		8
#define MAX_PROCS	(MAX_N + 1)
#define MAX_LINKS	MAX_N
#define MAX_SEGS	64
#define MAX_REPEATS	64
#define MAX_ITERS	(16 * 1024 * 1024UL)
#define FRAG		(32 * KiB)	/* shm fragment, as MPI sm transports */
#define NSLOT		16		/* fragments in one shm ring */
#define GUARD_SEND	0xa5		/* fills the page after the buffers */
#define GUARD_RECV	0x5a

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define LOAD_ACQ(p)	__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE_REL(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)

enum kind { PULL, PUSH, STREAM, LOCAL };
enum pattern { PINGPONG, STREAMING, BCAST, GATHER };
enum mem { MEM_4K, MEM_THP, MEM_HUGETLB };
enum status { ST_OK, ST_SKIP, ST_FAIL };

struct link;

/*
 * copy():  single-copy methods (PULL, PUSH, LOCAL) move the message between
 *          the local iovec and the peer's iovec.
 * send()/recv(): copying transports, each side moves its own iovec.
 */
struct method {
	const char *name;
	enum kind kind;
	void (*setup)(struct link *l);
	void (*teardown)(struct link *l);
	void (*copy)(struct link *l, const struct iovec *loc,
		     const struct iovec *rem, int cnt);
	void (*send)(struct link *l, const struct iovec *iov, int cnt);
	void (*recv)(struct link *l, const struct iovec *iov, int cnt);
};

struct config {
	const struct method *m;
	enum pattern pat;
	int n;
	enum mem mem;
	bool iov64;
	bool cold;
	size_t size;
};

struct layout {
	int cnt;
	size_t off[MAX_SEGS];
	size_t len[MAX_SEGS];
	size_t span;		/* first to last byte of the message */
	size_t stride;		/* distance between rotating buffers */
};

struct bufset {
	char *base;
	size_t nbuf;
	int origin;		/* process whose pattern the data carries */
	bool fill;		/* sender side: filled, else zeroed + checked */
};

/* Rendezvous of a link, written by both ends. */
struct link_ctl {
	alignas(CACHELINE) uint64_t post;	/* seq of the posted buffer */
	uint64_t addr;				/* its address */

	alignas(CACHELINE) uint64_t done;	/* seq of the last copy */
};

struct ring {
	alignas(CACHELINE) uint64_t head;	/* fragments written */
	alignas(CACHELINE) uint64_t tail;	/* fragments consumed */
	alignas(CACHELINE) char slot[NSLOT][FRAG];
};

struct link {
	int src, dst;
	struct link_ctl *c;
	struct ring *ring;
	int fd[2];		/* pipe */
	int memfd;		/* /proc/PID/mem of the peer */
	uint64_t seq;		/* messages started, private to each end */
};

struct op {
	struct link *l;
	struct bufset *b;
	struct bufset *src;	/* LOCAL: where the copy comes from */
	bool send;
	int phase;
};

struct proc {
	int nops, nphases, nbs;
	struct op op[MAX_LINKS + 1];
	struct bufset bs[MAX_LINKS + 2];
};

struct ctl {
	alignas(CACHELINE) uint64_t bar_count;
	alignas(CACHELINE) uint64_t bar_gen;
	alignas(CACHELINE) int abort;
	uint64_t iters;		/* of the next round, 0: stop */
	uint64_t rep_iters;	/* of each timed repeat */
	int stage;		/* 0 warm-up, 1 calibration, 2 timed */
	int nrep;
	double secs[MAX_REPEATS];
	pid_t pid[MAX_PROCS];
	int status[MAX_PROCS];
	int huge_pct[MAX_PROCS];
	char note[MAX_PROCS][120];
	struct link_ctl link[MAX_LINKS];
};

struct result {
	enum status st;
	double med, min, max;
	uint64_t iters;
	bool noisy;
	char note[160];
};

static struct {
	const struct method *methods[32];
	int nmethods;
	int patterns[64];
	int npatterns;
	int n[8];
	int nn;
	int mems[3], nmems;
	int shapes[2], nshapes;
	int caches[2], ncaches;
	size_t sizes[32];
	int nsizes;
	int repeats;
	double target;		/* seconds per timed repeat */
	double budget;		/* seconds for the whole run, 0: none */
	double noise;
	unsigned int timeout;
	bool pin;
	const char *label;
	const char *csv;
} opt;

/* State of the current configuration, inherited by its processes. */
static struct config cfg;
static struct layout lay;
static struct link links[MAX_LINKS];
static int nlinks, nprocs, self;
static struct ctl *ctl;
static unsigned long spin_limit;
static size_t llc;

static const char *const pattern_names[] = { "pingpong", "stream", "bcast", "gather" };
static const char *const mem_names[] = { "4k", "thp", "hugetlb" };
static const char *const shape_names[] = { "contig", "iov64" };
static const char *const cache_names[] = { "hot", "cold" };

/* ---- helpers ------------------------------------------------------ */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "pvm-bench: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

/* End this process with a status for the parent; stop the others. */
static noreturn void finish_proc(int st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctl->note[self], sizeof(ctl->note[self]), fmt, ap);
	va_end(ap);
	ctl->status[self] = st;
	STORE_REL(&ctl->abort, 1);
	_exit(st == ST_FAIL);
}

#define fail(fmt, ...)	finish_proc(ST_FAIL, fmt, ##__VA_ARGS__)
#define fail_errno(what) fail("%s: %s", what, strerror(errno))

static inline size_t round_up(size_t x, size_t a)
{
	return (x + a - 1) / a * a;
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#endif
}

/* Spin, then yield, until *p >= v; leave quietly if someone failed. */
static void wait_ge(uint64_t *p, uint64_t v)
{
	unsigned long i;

	for (i = 0; LOAD_ACQ(p) < v; i++) {
		if (LOAD_ACQ(&ctl->abort))
			_exit(0);
		if (i < spin_limit)
			cpu_relax();
		else
			sched_yield();
	}
}

static void barrier(void)
{
	uint64_t gen = LOAD_ACQ(&ctl->bar_gen);

	if (__atomic_add_fetch(&ctl->bar_count, 1, __ATOMIC_ACQ_REL) ==
	    (uint64_t)nprocs) {
		__atomic_store_n(&ctl->bar_count, 0, __ATOMIC_RELAXED);
		STORE_REL(&ctl->bar_gen, gen + 1);
	} else {
		wait_ge(&ctl->bar_gen, gen + 1);
	}
}

static int peer(const struct link *l)
{
	return self == l->src ? l->dst : l->src;
}

/* ---- methods ------------------------------------------------------ */

static void pvm_read(struct link *l, const struct iovec *loc,
		     const struct iovec *rem, int cnt)
{
	ssize_t r = process_vm_readv(ctl->pid[peer(l)], loc, cnt, rem, cnt, 0);

	if (r < 0)
		fail_errno("process_vm_readv");
	if ((size_t)r != cfg.size)
		fail("process_vm_readv: short copy %zd of %zu", r, cfg.size);
}

static void pvm_write(struct link *l, const struct iovec *loc,
		      const struct iovec *rem, int cnt)
{
	ssize_t r = process_vm_writev(ctl->pid[peer(l)], loc, cnt, rem, cnt, 0);

	if (r < 0)
		fail_errno("process_vm_writev");
	if ((size_t)r != cfg.size)
		fail("process_vm_writev: short copy %zd of %zu", r, cfg.size);
}

static void procmem_read(struct link *l, const struct iovec *loc,
			 const struct iovec *rem, int cnt)
{
	char path[64];
	int i;

	if (l->memfd < 0) {
		snprintf(path, sizeof(path), "/proc/%d/mem", ctl->pid[peer(l)]);
		l->memfd = open(path, O_RDONLY);
		if (l->memfd < 0)
			fail_errno(path);
	}
	for (i = 0; i < cnt; i++) {
		ssize_t r = pread(l->memfd, loc[i].iov_base, loc[i].iov_len,
				  (off_t)(uintptr_t)rem[i].iov_base);
		if (r < 0)
			fail_errno("pread /proc/PID/mem");
		if ((size_t)r != loc[i].iov_len)
			fail("pread /proc/PID/mem: short read");
	}
}

static void local_copy(struct link *l, const struct iovec *loc,
		       const struct iovec *rem, int cnt)
{
	int i;

	(void)l;
	for (i = 0; i < cnt; i++)
		memcpy(loc[i].iov_base, rem[i].iov_base, loc[i].iov_len);
}

static void pipe_setup(struct link *l)
{
	if (pipe(l->fd))
		die("pipe: %s", strerror(errno));
	fcntl(l->fd[1], F_SETPIPE_SZ, (int)MiB);	/* best effort */
}

static void pipe_teardown(struct link *l)
{
	close(l->fd[0]);
	close(l->fd[1]);
}

typedef ssize_t (*iov_fn)(int fd, const struct iovec *iov, int cnt);

static ssize_t do_vmsplice(int fd, const struct iovec *iov, int cnt)
{
	return vmsplice(fd, iov, cnt, 0);
}

/* Move a whole iovec through fd, however the calls split it. */
static void iov_loop(iov_fn fn, const char *what, int fd,
		     const struct iovec *iov, int cnt)
{
	struct iovec v[MAX_SEGS];
	int i = 0;

	memcpy(v, iov, cnt * sizeof(*v));
	while (i < cnt) {
		ssize_t r = fn(fd, v + i, cnt - i);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			fail_errno(what);
		if (r == 0)
			fail("%s: unexpected end of file", what);
		while (i < cnt && (size_t)r >= v[i].iov_len)
			r -= v[i++].iov_len;
		if (i < cnt) {
			v[i].iov_base = (char *)v[i].iov_base + r;
			v[i].iov_len -= r;
		}
	}
}

static void pipe_send(struct link *l, const struct iovec *iov, int cnt)
{
	iov_loop(writev, "writev", l->fd[1], iov, cnt);
}

static void pipe_recv(struct link *l, const struct iovec *iov, int cnt)
{
	iov_loop(readv, "readv", l->fd[0], iov, cnt);
}

static void vmsplice_send(struct link *l, const struct iovec *iov, int cnt)
{
	iov_loop(do_vmsplice, "vmsplice", l->fd[1], iov, cnt);
}

static void shm_setup(struct link *l)
{
	l->ring = mmap(NULL, sizeof(*l->ring), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (l->ring == MAP_FAILED)
		die("mmap ring: %s", strerror(errno));
}

static void shm_teardown(struct link *l)
{
	munmap(l->ring, sizeof(*l->ring));
}

/*
 * Copy len bytes between a flat fragment and the iovec at cursor (*i, *off);
 * to_iov selects the direction.
 */
static void frag_copy(const struct iovec *iov, int *i, size_t *off,
		      char *frag, size_t len, bool to_iov)
{
	while (len) {
		char *p = (char *)iov[*i].iov_base + *off;
		size_t n = iov[*i].iov_len - *off;

		if (n > len)
			n = len;
		if (to_iov)
			memcpy(p, frag, n);
		else
			memcpy(frag, p, n);
		frag += n;
		len -= n;
		*off += n;
		if (*off == iov[*i].iov_len) {
			(*i)++;
			*off = 0;
		}
	}
}

/* The double copy of MPI shared memory transports, pipelined by fragment. */
static void shm_xfer(struct link *l, const struct iovec *iov, int cnt,
		     bool send)
{
	struct ring *r = l->ring;
	uint64_t *mine = send ? &r->head : &r->tail;
	size_t left = cfg.size, off = 0;
	int i = 0;

	(void)cnt;
	while (left) {
		uint64_t f = *mine;
		size_t n = left < FRAG ? left : FRAG;

		if (send)
			wait_ge(&r->tail, f + 1 > NSLOT ? f + 1 - NSLOT : 0);
		else
			wait_ge(&r->head, f + 1);
		frag_copy(iov, &i, &off, r->slot[f % NSLOT], n, !send);
		STORE_REL(mine, f + 1);
		left -= n;
	}
}

static void shm_send(struct link *l, const struct iovec *iov, int cnt)
{
	shm_xfer(l, iov, cnt, true);
}

static void shm_recv(struct link *l, const struct iovec *iov, int cnt)
{
	shm_xfer(l, iov, cnt, false);
}

static const struct method methods[] = {
	{ "pvm-read", PULL, .copy = pvm_read },
	{ "pvm-write", PUSH, .copy = pvm_write },
	{ "shm", STREAM, shm_setup, shm_teardown, .send = shm_send, .recv = shm_recv },
	{ "pipe", STREAM, pipe_setup, pipe_teardown, .send = pipe_send, .recv = pipe_recv },
	{ "vmsplice", STREAM, pipe_setup, pipe_teardown, .send = vmsplice_send, .recv = pipe_recv },
	{ "procmem", PULL, .copy = procmem_read },
	{ "memcpy", LOCAL, .copy = local_copy },
};

/* ---- buffers, layout, verification -------------------------------- */

static void build_layout(size_t size, bool iov64)
{
	size_t chunk, gap;
	int i;

	lay.cnt = iov64 ? MAX_SEGS : 1;
	chunk = size / lay.cnt;
	gap = iov64 ? round_up(chunk / 4 ? chunk / 4 : 1, 64) : 0;
	for (i = 0; i < lay.cnt; i++) {
		lay.off[i] = i * (chunk + gap);
		lay.len[i] = chunk;
	}
	lay.len[lay.cnt - 1] += size % lay.cnt;
	lay.span = lay.off[lay.cnt - 1] + lay.len[lay.cnt - 1];
	lay.stride = round_up(lay.span, PAGE);
}

static char *buf_at(const struct bufset *b, uint64_t k)
{
	return b->base + (k % b->nbuf) * lay.stride;
}

static void make_iov(struct iovec *iov, char *base)
{
	int i;

	for (i = 0; i < lay.cnt; i++) {
		iov[i].iov_base = base + lay.off[i];
		iov[i].iov_len = lay.len[i];
	}
}

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static uint64_t seed_of(int rnd, int origin, size_t j)
{
	return mix(((uint64_t)rnd << 40) ^ ((uint64_t)origin << 32) ^ j);
}

static uint64_t word(uint64_t seed, size_t w)
{
	return mix(seed + w * 0x9e3779b97f4a7c15ULL);
}

/* The whole stride, so that copying too much carries non-zero bytes. */
static void fill(char *p, uint64_t seed)
{
	size_t w, words = lay.stride / 8;
	uint64_t *q = (uint64_t *)p;

	for (w = 0; w < words; w++)
		q[w] = word(seed, w);
}

/* Offset of the first byte of [off, end) that is not the pattern, or end. */
static size_t check_data(const unsigned char *p, size_t off, size_t end,
			 uint64_t seed)
{
	uint64_t x, v;

	while (off < end) {
		x = word(seed, off / 8);
		if (off % 8 == 0 && off + 8 <= end) {
			memcpy(&v, p + off, 8);
			if (v != x)
				break;
			off += 8;
			continue;
		}
		if (p[off] != ((unsigned char *)&x)[off % 8])
			break;
		off++;
	}
	if (off < end)
		for (; p[off] == ((unsigned char *)&x)[off % 8]; off++)
			;	/* point at the exact byte */
	return off;
}

static size_t check_byte(const unsigned char *p, size_t off, size_t end,
			 unsigned char val)
{
	while (off < end && p[off] == val)
		off++;
	return off;
}

static void verify(const struct bufset *b, int rnd, uint64_t iters)
{
	size_t j, nb = iters < b->nbuf ? iters : b->nbuf;
	int i;

	for (j = 0; j < nb; j++) {
		const unsigned char *p = (unsigned char *)b->base + j * lay.stride;
		uint64_t seed = seed_of(rnd, b->origin, j);

		for (i = 0; i < lay.cnt; i++) {
			size_t s = lay.off[i], e = s + lay.len[i];
			size_t gap_end = i + 1 < lay.cnt ? lay.off[i + 1] : e;
			size_t bad = check_data(p, s, e, seed);

			if (bad < e)
				fail("CORRUPT payload: buffer %zu byte %zu", j, bad);
			bad = check_byte(p, e, gap_end, 0);
			if (bad < gap_end)
				fail("CORRUPT gap written: buffer %zu byte %zu", j, bad);
		}
		if (check_byte(p, lay.span, lay.stride, 0) < lay.stride)
			fail("CORRUPT write past the end: buffer %zu", j);
	}
	if (nb < b->nbuf && check_byte((unsigned char *)buf_at(b, nb), 0,
				       lay.stride, 0) < lay.stride)
		fail("CORRUPT write into unused buffer %zu", nb);
	if (check_byte((unsigned char *)buf_at(b, b->nbuf - 1), lay.stride,
		       lay.stride + PAGE, GUARD_RECV) < lay.stride + PAGE)
		fail("CORRUPT write past the last buffer");
}

/* Share of AnonHugePages in the mappings that overlap [p, p + len). */
static int huge_percent(char *p, size_t len)
{
	uintptr_t lo = (uintptr_t)p, hi = lo + len, s = 0, e = 0;
	unsigned long kb, huge = 0, size = 0;
	bool in = false;
	char line[256];
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &s, &e) == 2) {	/* a mapping */
			in = s < hi && e > lo;
			if (in)
				size += (e - s) / KiB;
		} else if (in && sscanf(line, "AnonHugePages: %lu kB", &kb) == 1) {
			huge += kb;
		}
	}
	fclose(f);
	return size ? (int)(huge * 100 / size) : -1;
}

/* Buffers at stride, then a guard page that nobody may write. */
static void alloc_bufset(struct bufset *b)
{
	size_t len = b->nbuf * lay.stride + PAGE;
	int flags = MAP_PRIVATE | MAP_ANONYMOUS;
	char *p;

	if (cfg.mem != MEM_4K)
		len = round_up(len, HPAGE);
	if (cfg.mem == MEM_HUGETLB)
		flags |= MAP_HUGETLB;
	p = mmap(NULL, len + (cfg.mem == MEM_THP ? HPAGE : 0),
		 PROT_READ | PROT_WRITE, flags, -1, 0);
	if (p == MAP_FAILED && cfg.mem == MEM_HUGETLB)
		finish_proc(ST_SKIP, "no hugetlb pages for %zu bytes", len);
	if (p == MAP_FAILED)
		fail_errno("mmap buffers");
	if (cfg.mem == MEM_THP)
		p = (char *)round_up((uintptr_t)p, HPAGE);
	madvise(p, len, cfg.mem == MEM_THP ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	memset(p, 0, len);
	memset(p + b->nbuf * lay.stride, b->fill ? GUARD_SEND : GUARD_RECV, PAGE);
	b->base = p;
	if (cfg.mem == MEM_THP) {
		int pct = huge_percent(p, len);

		if (pct < ctl->huge_pct[self])
			ctl->huge_pct[self] = pct;
	}
}

/* ---- processes ---------------------------------------------------- */

static size_t nbuf_for(void)
{
	size_t n;

	if (!cfg.cold)
		return 1;
	n = (2 * llc + lay.stride - 1) / lay.stride;
	return n < 2 ? 2 : n;
}

static struct bufset *new_bufset(struct proc *p, int origin, bool fill)
{
	struct bufset *b = &p->bs[p->nbs++];

	b->nbuf = nbuf_for();
	b->origin = origin;
	b->fill = fill;
	alloc_bufset(b);
	return b;
}

static void add_op(struct proc *p, struct link *l, struct bufset *b,
		   bool send, int phase)
{
	struct op *o = &p->op[p->nops++];

	o->l = l;
	o->b = b;
	o->send = send;
	o->phase = phase;
	if (phase + 1 > p->nphases)
		p->nphases = phase + 1;
}

/* What this process sends and receives, with which buffers, in what order. */
static void plan(struct proc *p)
{
	struct bufset *sb = NULL;
	int i;

	if (cfg.m->kind == LOCAL) {
		sb = new_bufset(p, 0, true);
		add_op(p, NULL, new_bufset(p, 0, false), false, 0);
		p->op[0].src = sb;
		return;
	}
	if (cfg.pat == PINGPONG) {
		/* 0 sends, 1 receives and echoes the same buffer back */
		struct bufset *b = new_bufset(p, 0, self == 0);

		if (self == 0) {
			add_op(p, &links[0], b, true, 0);
			add_op(p, &links[1], new_bufset(p, 0, false), false, 1);
		} else {
			add_op(p, &links[0], b, false, 0);
			add_op(p, &links[1], b, true, 1);
		}
		return;
	}
	for (i = 0; i < nlinks; i++) {
		struct link *l = &links[i];

		if (l->src == self) {
			if (!sb)
				sb = new_bufset(p, self, true);
			add_op(p, l, sb, true, 0);
		} else if (l->dst == self) {
			add_op(p, l, new_bufset(p, l->src, false), false, 0);
		}
	}
}

static bool passive(const struct op *o)
{
	enum kind k = cfg.m->kind;

	return (o->send && k == PULL) || (!o->send && k == PUSH);
}

/* Passive end: offer the buffer once the previous message is through. */
static void post(struct link *l, char *buf)
{
	wait_ge(&l->c->done, l->seq - 1);
	l->c->addr = (uintptr_t)buf;
	STORE_REL(&l->c->post, l->seq);
}

static void op_start(struct op *o, uint64_t k)
{
	if (!o->l)
		return;
	o->l->seq++;
	if (passive(o))
		post(o->l, buf_at(o->b, k));
}

static void op_finish(struct op *o, uint64_t k)
{
	const struct method *m = cfg.m;
	struct iovec loc[MAX_SEGS], rem[MAX_SEGS];
	struct link *l = o->l;

	make_iov(loc, buf_at(o->b, k));
	if (m->kind == LOCAL) {
		make_iov(rem, buf_at(o->src, k));
		m->copy(NULL, loc, rem, lay.cnt);
	} else if (passive(o)) {
		if (!o->send)
			wait_ge(&l->c->done, l->seq);
	} else if (m->kind == STREAM) {
		(o->send ? m->send : m->recv)(l, loc, lay.cnt);
	} else {
		wait_ge(&l->c->post, l->seq);
		make_iov(rem, (char *)(uintptr_t)l->c->addr);
		m->copy(l, loc, rem, lay.cnt);
		STORE_REL(&l->c->done, l->seq);
	}
}

static void step(struct proc *p, uint64_t k)
{
	int ph, i;

	for (ph = 0; ph < p->nphases; ph++) {
		for (i = 0; i < p->nops; i++)
			if (p->op[i].phase == ph)
				op_start(&p->op[i], k);
		for (i = 0; i < p->nops; i++)
			if (p->op[i].phase == ph)
				op_finish(&p->op[i], k);
	}
}

static void prepare(struct proc *p, int rnd)
{
	size_t j;
	int i;

	for (i = 0; i < p->nbs; i++) {
		struct bufset *b = &p->bs[i];

		for (j = 0; j < b->nbuf; j++) {
			if (b->fill)
				fill(buf_at(b, j), seed_of(rnd, b->origin, j));
			else
				memset(buf_at(b, j), 0, lay.stride);
		}
	}
}

/* Process 0 decides the next round: warm-up, calibrate, timed repeats. */
static void next_round(double t, uint64_t iters)
{
	double est;

	if (ctl->stage == 2) {
		ctl->rep_iters = iters;
		ctl->secs[ctl->nrep++] = t;
		if (ctl->nrep == opt.repeats)
			ctl->iters = 0;
		return;
	}
	if (ctl->stage == 0) {
		ctl->stage = 1;
		return;
	}
	if (t < opt.target / 8 && iters < MAX_ITERS) {
		ctl->iters = iters * 2;
		return;
	}
	est = iters * opt.target / (t > 0 ? t : 1 / 1e9);
	ctl->iters = est < 1 ? 1 : est > MAX_ITERS ? MAX_ITERS : (uint64_t)est;
	ctl->stage = 2;
}

/* Spread the processes over the CPUs, as MPI launchers bind ranks. */
static void pin_cpu(int id)
{
	cpu_set_t set;
	int cpu, seen = -1;

	if (sched_getaffinity(0, sizeof(set), &set))
		return;
	for (cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &set))
			continue;
		if (++seen == id % CPU_COUNT(&set)) {
			CPU_ZERO(&set);
			CPU_SET(cpu, &set);
			sched_setaffinity(0, sizeof(set), &set);
			return;
		}
	}
}

static void child(int id)
{
	struct proc p = { 0 };
	uint64_t k, iters;
	double t0, t;
	int rnd, i;

	self = id;
	alarm(opt.timeout);
	if (opt.pin)
		pin_cpu(id);
	prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
	prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
	ctl->pid[self] = getpid();
	ctl->huge_pct[self] = 100;
	plan(&p);
	for (rnd = 0;; rnd++) {
		barrier();
		iters = ctl->iters;
		if (!iters)
			break;
		prepare(&p, rnd);
		barrier();
		t0 = now();
		for (k = 0; k < iters; k++)
			step(&p, k);
		barrier();
		t = now() - t0;
		for (i = 0; i < p.nbs; i++)
			if (!p.bs[i].fill)
				verify(&p.bs[i], rnd, iters);
		if (self == 0)
			next_round(t, iters);
	}
	_exit(0);
}

/* ---- configurations ----------------------------------------------- */

static void topology(void)
{
	int i;

	nlinks = 0;
	nprocs = cfg.pat == BCAST || cfg.pat == GATHER ? cfg.n + 1 : 2;
	switch (cfg.pat) {
	case PINGPONG:
		links[nlinks++] = (struct link){ .src = 0, .dst = 1 };
		links[nlinks++] = (struct link){ .src = 1, .dst = 0 };
		break;
	case STREAMING:
		links[nlinks++] = (struct link){ .src = 0, .dst = 1 };
		break;
	case BCAST:
	case GATHER:
		for (i = 1; i <= cfg.n; i++)
			links[nlinks++] = cfg.pat == BCAST ?
				(struct link){ .src = 0, .dst = i } :
				(struct link){ .src = i, .dst = 0 };
		break;
	}
	if (cfg.m->kind == LOCAL)
		nprocs = 1;
	for (i = 0; i < nlinks; i++) {
		links[i].c = &ctl->link[i];
		links[i].memfd = -1;
		if (cfg.m->setup)
			cfg.m->setup(&links[i]);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void stats(struct result *r)
{
	double bytes = cfg.size, bw[MAX_REPEATS];
	int i, n = ctl->nrep;

	if (cfg.m->kind != LOCAL) {
		if (cfg.pat == PINGPONG)
			bytes *= 2;
		else if (cfg.pat != STREAMING)
			bytes *= cfg.n;
	}
	for (i = 0; i < n; i++)
		bw[i] = bytes * ctl->rep_iters / ctl->secs[i] / 1e6;
	qsort(bw, n, sizeof(*bw), cmp_double);
	r->min = bw[0];
	r->max = bw[n - 1];
	r->med = n % 2 ? bw[n / 2] : (bw[n / 2 - 1] + bw[n / 2]) / 2;
	r->noisy = (r->max - r->min) / r->med > opt.noise;
}

static void kill_rest(const pid_t *pids, const bool *reaped)
{
	int i;

	STORE_REL(&ctl->abort, 1);
	for (i = 0; i < nprocs; i++)
		if (!reaped[i])
			kill(pids[i], SIGKILL);
}

/* Reap the processes of a configuration; false if one died unexpectedly. */
static bool reap(const pid_t *pids, struct result *r)
{
	bool reaped[MAX_PROCS] = { false }, ok = true;
	int live, i, st;

	for (live = nprocs; live; live--) {
		pid_t pid = wait(&st);

		if (pid < 0)
			die("wait: %s", strerror(errno));
		for (i = 0; i < nprocs && pids[i] != pid; i++)
			;
		if (i < nprocs)
			reaped[i] = true;
		if (WIFEXITED(st) && !WEXITSTATUS(st))
			continue;
		if (WIFSIGNALED(st) && ok && !ctl->abort) {
			ok = false;
			snprintf(r->note, sizeof(r->note), "process %d %s", i,
				 WTERMSIG(st) == SIGALRM ? "timed out" :
				 strsignal(WTERMSIG(st)));
		}
		kill_rest(pids, reaped);
	}
	return ok;
}

static void collect(struct result *r)
{
	int i, huge = 100;

	for (i = 0; i < nprocs; i++) {
		if (ctl->status[i] > (int)r->st) {
			r->st = ctl->status[i];
			snprintf(r->note, sizeof(r->note), "%s", ctl->note[i]);
		}
		if (ctl->huge_pct[i] < huge)
			huge = ctl->huge_pct[i];
	}
	if (r->st != ST_OK)
		return;
	if (ctl->nrep < opt.repeats) {
		r->st = ST_FAIL;
		snprintf(r->note, sizeof(r->note), "incomplete run");
		return;
	}
	stats(r);
	r->iters = ctl->rep_iters;
	if (cfg.mem == MEM_THP)
		snprintf(r->note, sizeof(r->note), "thp=%d%%%s", huge,
			 huge < 90 ? " NOT-HUGE" : "");
}

static void run_config(struct result *r)
{
	pid_t pids[MAX_PROCS];
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int i;

	memset(r, 0, sizeof(*r));
	memset(ctl, 0, sizeof(*ctl));
	ctl->iters = 1;
	build_layout(cfg.size, cfg.iov64);
	topology();
	spin_limit = nprocs <= ncpu ? 4096 : 16;
	fflush(NULL);
	for (i = 0; i < nprocs; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			die("fork: %s", strerror(errno));
		if (!pids[i])
			child(i);
	}
	if (reap(pids, r))
		collect(r);
	else
		r->st = ST_FAIL;
	for (i = 0; i < nlinks; i++)
		if (cfg.m->teardown)
			cfg.m->teardown(&links[i]);
}

/* ---- output ------------------------------------------------------- */

static const char *fmt_size(size_t s)
{
	static char buf[4][24];
	static int k;
	char *b = buf[k++ % 4];

	if (s >= MiB && s % MiB == 0)
		snprintf(b, 24, "%zuM", s / MiB);
	else if (s >= KiB && s % KiB == 0)
		snprintf(b, 24, "%zuK", s / KiB);
	else
		snprintf(b, 24, "%zu", s);
	return b;
}

static const char *status_word(const struct result *r)
{
	if (r->st == ST_FAIL)
		return "FAILED";
	if (r->st == ST_SKIP)
		return "skipped";
	return r->noisy ? "ok NOISY" : "ok";
}

static void print_row(const struct result *r)
{
	printf("%-9s %-8s %2d %-7s %-6s %-4s %5s",
	       cfg.m->name, pattern_names[cfg.pat], cfg.n, mem_names[cfg.mem],
	       shape_names[cfg.iov64], cache_names[cfg.cold], fmt_size(cfg.size));
	if (r->st == ST_OK)
		printf(" %10.0f %10.0f %10.0f", r->med, r->min, r->max);
	else
		printf(" %10s %10s %10s", "-", "-", "-");
	printf("  %s%s%s\n", status_word(r), *r->note ? "  " : "", r->note);
	fflush(stdout);
}

static void csv_row(FILE *f, const struct result *r)
{
	char note[sizeof(r->note)], *c;

	snprintf(note, sizeof(note), "%s", r->note);
	for (c = note; *c; c++)
		if (*c == ',' || *c == '"')
			*c = ';';
	fprintf(f, "%s,%s,%s,%d,%s,%s,%s,%zu,%.1f,%.1f,%.1f,%s,%s,%d,%llu,%s\n",
		opt.label, cfg.m->name, pattern_names[cfg.pat], cfg.n,
		mem_names[cfg.mem], shape_names[cfg.iov64],
		cache_names[cfg.cold], cfg.size, r->med, r->min, r->max,
		r->noisy ? "NOISY" : "no",
		r->st == ST_OK ? "yes" : r->st == ST_FAIL ? "FAILED" : "skipped",
		r->st == ST_OK ? opt.repeats : 0, (unsigned long long)r->iters,
		note);
	fflush(f);
}

/* ---- options ------------------------------------------------------ */

static size_t parse_size(const char *s)
{
	return pvm_arg_size("--sizes", s, 1, SIZE_MAX);
}

static int lookup(const char *const *names, int n, const char *s, const char *what)
{
	int i;

	for (i = 0; i < n; i++)
		if (!strcmp(names[i], s))
			return i;
	die("unknown %s '%s'", what, s);
	return -1;
}

/* Call fn on each comma separated item of a copy of list. */
static void parse_list(const char *list, void (*fn)(char *item))
{
	char *dup = strdup(list), *save, *tok;

	for (tok = strtok_r(dup, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		fn(tok);
	free(dup);
}

static void add_size(char *s)
{
	char *dash = strchr(s, '-');
	size_t lo, hi;

	/* "-5" and "5-" are no range: name the whole item */
	if (dash && (dash == s || !dash[1]))
		pvm_bad_arg("--sizes", s, "a size or a range of sizes (64-64M)");
	if (!dash) {
		lo = parse_size(s);
		hi = lo;
	} else {
		*dash = 0;
		lo = parse_size(s);
		hi = parse_size(dash + 1);
	}
	for (; lo <= hi; lo *= 4) {
		if (opt.nsizes == (int)ARRAY_SIZE(opt.sizes))
			die("too many sizes");
		opt.sizes[opt.nsizes++] = lo;
	}
}

static void add_method(char *s)
{
	int i;

	for (i = 0; i < (int)ARRAY_SIZE(methods); i++) {
		if (!strcmp(s, "all") || !strcmp(s, methods[i].name)) {
			if (opt.nmethods == (int)ARRAY_SIZE(opt.methods))
				die("too many methods");
			opt.methods[opt.nmethods++] = &methods[i];
			if (strcmp(s, "all"))
				return;
		}
	}
	if (strcmp(s, "all"))
		die("unknown method '%s'", s);
}

static void add_n(char *s)
{
	int n = pvm_arg_long("--n", s, 1, MAX_N);

	if (opt.nn == (int)ARRAY_SIZE(opt.n))
		die("too many --n values");
	opt.n[opt.nn++] = n;
}

static void add_pattern_n(int p, int n)
{
	if (opt.npatterns == (int)ARRAY_SIZE(opt.patterns))
		die("too many patterns");
	opt.patterns[opt.npatterns++] = p * 16 + n;
}

/* "pingpong", "bcast" (every --n), "gather:4"; encoded as pattern * 16 + n */
static void add_pattern(char *s)
{
	char *colon = strchr(s, ':');
	int p, i;

	if (colon)
		*colon = 0;
	if (!strcmp(s, "all")) {
		for (p = 0; p < 4; p++)
			add_pattern((char *)pattern_names[p]);
		return;
	}
	p = lookup(pattern_names, 4, s, "pattern");
	if (p < BCAST || colon) {
		i = colon ? pvm_arg_long("--patterns", colon + 1, 1, MAX_N) : 1;
		add_pattern_n(p, i);
		return;
	}
	for (i = 0; i < opt.nn; i++)
		add_pattern_n(p, opt.n[i]);
}

/* Append the index of s in names, or of all names, to arr[max]. */
static void add_listed(const char *s, const char *const *names, int nnames,
		       int *arr, int *cnt, int max, const char *what)
{
	int i;

	for (i = 0; i < nnames; i++)
		if (!strcmp(s, "all") || !strcmp(s, names[i]))
			if (*cnt < max)
				arr[(*cnt)++] = i;
	if (strcmp(s, "all"))
		lookup(names, nnames, s, what);
}

static void add_mem(char *s)
{
	add_listed(s, mem_names, ARRAY_SIZE(mem_names), opt.mems, &opt.nmems,
		   ARRAY_SIZE(opt.mems), "memory type");
}

static void add_shape(char *s)
{
	add_listed(s, shape_names, ARRAY_SIZE(shape_names), opt.shapes,
		   &opt.nshapes, ARRAY_SIZE(opt.shapes), "iovec shape");
}

static void add_cache(char *s)
{
	add_listed(s, cache_names, ARRAY_SIZE(cache_names), opt.caches,
		   &opt.ncaches, ARRAY_SIZE(opt.caches), "cache state");
}

static const char usage[] =
"usage: pvm-bench [options]\n"
"  --methods LIST   pvm-read,pvm-write,shm,pipe,vmsplice,procmem,memcpy|all\n"
"  --patterns LIST  pingpong,stream,bcast[:N],gather[:N]|all\n"
"  --n LIST         N for bcast/gather without :N (default 1,2,4,8)\n"
"  --sizes LIST     sizes or LO-HI ranges in powers of 4 (default 64-64M)\n"
"  --mem LIST       4k,thp,hugetlb|all (default 4k)\n"
"  --shapes LIST    contig,iov64|all (default contig)\n"
"  --cache LIST     hot,cold|all (default hot)\n"
"  --full           --mem all --shapes all --cache all\n"
"  --repeats N      timed repeats per configuration (default 5)\n"
"  --target-ms MS   duration of one repeat (default 20)\n"
"  --noise PCT      NOISY when (max-min)/median exceeds it (default 20)\n"
"  --time-budget S  start no configuration after S seconds\n"
"  --timeout S      per configuration (default 300, 0: none)\n"
"  --no-pin         do not bind process i to CPU i mod ncpus\n"
"  --label NAME     kernel column of the CSV (default uname -r)\n"
"  --csv FILE       write the results as CSV too\n"
"  --quick          4K,64K,1M,16M; pvm-read,pvm-write,shm,pipe,memcpy;\n"
"                   pingpong,stream; 3 repeats of 5 ms\n"
"  --help           this text\n"
"Exit status: 0, 1 if a configuration failed, 2 on a usage error.\n";

static void parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "methods", 1, 0, 'm' }, { "patterns", 1, 0, 'p' },
		{ "n", 1, 0, 'n' }, { "sizes", 1, 0, 's' },
		{ "mem", 1, 0, 'M' }, { "shapes", 1, 0, 'S' },
		{ "cache", 1, 0, 'C' }, { "full", 0, 0, 'F' },
		{ "repeats", 1, 0, 'r' }, { "target-ms", 1, 0, 't' },
		{ "noise", 1, 0, 'N' }, { "time-budget", 1, 0, 'b' },
		{ "timeout", 1, 0, 'T' }, { "label", 1, 0, 'l' },
		{ "csv", 1, 0, 'c' }, { "quick", 0, 0, 'q' },
		{ "no-pin", 0, 0, 'P' }, { "help", 0, 0, 'h' }, { 0 }
	};
	const char *methods_s = NULL, *patterns_s = NULL, *sizes_s = NULL;
	const char *n_s = "1,2,4,8";
	static struct utsname u;
	bool quick = false;
	double target = 0;
	int c;

	opt.noise = 0.20;
	opt.timeout = 300;
	opt.pin = true;
	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'm':
			methods_s = optarg;
			break;
		case 'p':
			patterns_s = optarg;
			break;
		case 'n':
			n_s = optarg;
			break;
		case 's':
			sizes_s = optarg;
			break;
		case 'M':
			parse_list(optarg, add_mem);
			break;
		case 'S':
			parse_list(optarg, add_shape);
			break;
		case 'C':
			parse_list(optarg, add_cache);
			break;
		case 'F':
			add_mem("all");
			add_shape("all");
			add_cache("all");
			break;
		case 'r':
			opt.repeats = pvm_arg_long("--repeats", optarg, 1,
						   MAX_REPEATS);
			break;
		case 't':
			target = pvm_arg_double("--target-ms", optarg, 0.001,
						60000) / 1e3;
			break;
		case 'N':
			opt.noise = pvm_arg_double("--noise", optarg, 0,
						   1e6) / 100;
			break;
		case 'b':
			opt.budget = pvm_arg_double("--time-budget", optarg,
						    0, 1e9);
			break;
		case 'T':
			opt.timeout = pvm_arg_long("--timeout", optarg, 0,
						   86400);
			break;
		case 'l':
			opt.label = optarg;
			break;
		case 'c':
			opt.csv = optarg;
			break;
		case 'q':
			quick = true;
			break;
		case 'P':
			opt.pin = false;
			break;
		case 'h':
			pvm_usage(usage, 0);
		default:
			pvm_usage(usage, PVM_EXIT_USAGE);
		}
	}
	pvm_args_done(argc, argv, usage);
	parse_list(n_s, add_n);
	parse_list(methods_s ? methods_s :
		   quick ? "pvm-read,pvm-write,shm,pipe,memcpy" : "all", add_method);
	parse_list(patterns_s ? patterns_s :
		   quick ? "pingpong,stream" : "all", add_pattern);
	parse_list(sizes_s ? sizes_s : quick ? "4K,64K,1M,16M" : "64-64M", add_size);
	if (!opt.nmems)
		add_mem("4k");
	if (!opt.nshapes)
		add_shape("contig");
	if (!opt.ncaches)
		add_cache("hot");
	if (!opt.repeats)
		opt.repeats = quick ? 3 : 5;
	opt.target = target > 0 ? target : quick ? 0.005 : 0.020;
	if (!opt.label) {
		uname(&u);
		opt.label = u.release;
	}
}

/* ---- main --------------------------------------------------------- */

static size_t llc_size(void)
{
	char path[96], buf[32];
	unsigned long v;
	int i, level;
	FILE *f;

	for (i = 0; i < 8; i++) {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
		f = fopen(path, "r");
		if (!f)
			break;
		level = fscanf(f, "%d", &level) == 1 ? level : 0;
		fclose(f);
		if (level != 3)
			continue;
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
		f = fopen(path, "r");
		if (f && fscanf(f, "%lu%31s", &v, buf) >= 1) {
			fclose(f);
			return buf[0] == 'M' ? v * MiB : buf[0] == 'K' ? v * KiB : v;
		}
		if (f)
			fclose(f);
	}
	v = sysconf(_SC_LEVEL3_CACHE_SIZE);
	return v > 0 && v != (unsigned long)-1 ? v : 32 * MiB;
}

static bool hugetlb_available(void)
{
	char line[128];
	long free_pages = 0;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "HugePages_Free: %ld", &free_pages) == 1)
			break;
	fclose(f);
	return free_pages > 0;
}

/* Run, print and record one configuration; false if it failed. */
static bool one(FILE *csv)
{
	struct result r = { 0 };

	if (cfg.iov64 && cfg.size < MAX_SEGS)
		return true;	/* no room for 64 segments */
	if (cfg.mem == MEM_HUGETLB && !hugetlb_available()) {
		r.st = ST_SKIP;
		snprintf(r.note, sizeof(r.note), "no hugetlb pages reserved");
	} else {
		run_config(&r);
	}
	print_row(&r);
	if (csv)
		csv_row(csv, &r);
	return r.st != ST_FAIL;
}

/* Set cfg to combination k of the option lists; false if it is not run. */
static bool set_config(int k)
{
	int iz = k % opt.nsizes, id, ip, ic, is, im;

	k /= opt.nsizes;
	id = k % opt.nmethods;
	k /= opt.nmethods;
	ip = k % opt.npatterns;
	k /= opt.npatterns;
	ic = k % opt.ncaches;
	k /= opt.ncaches;
	is = k % opt.nshapes;
	im = k / opt.nshapes;
	cfg = (struct config){
		.m = opt.methods[id], .pat = opt.patterns[ip] / 16,
		.n = opt.patterns[ip] % 16, .mem = opt.mems[im],
		.iov64 = opt.shapes[is], .cold = opt.caches[ic],
		.size = opt.sizes[iz],
	};
	return !(cfg.m->kind == LOCAL && cfg.pat >= BCAST);
}

int main(int argc, char **argv)
{
	int k, total, failed = 0, unrun = 0;
	double start = now();
	FILE *csv = NULL;

	parse_args(argc, argv);
	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	llc = llc_size();
	ctl = mmap(NULL, sizeof(*ctl), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (ctl == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	if (opt.csv) {
		csv = fopen(opt.csv, "w");
		if (!csv)
			die("%s: %s", opt.csv, strerror(errno));
		fprintf(csv,
			"kernel,method,pattern,n,mem,shape,cache,size,median_MBps,min_MBps,max_MBps,noisy,verified,repeats,iters,note\n");
	}
	printf("# pvm-bench  kernel %s  cpus %ld  llc %zu KiB  repeats %d  MB/s = 1e6 B/s\n",
	       opt.label, sysconf(_SC_NPROCESSORS_ONLN), llc / KiB, opt.repeats);
	printf("%-9s %-8s %2s %-7s %-6s %-4s %5s %10s %10s %10s  %s\n", "method",
	       "pattern", "n", "mem", "shape", "cache", "size", "median", "min",
	       "max", "status");
	/* Every combination of the option lists, sizes varying fastest. */
	total = opt.nmems * opt.nshapes * opt.ncaches * opt.npatterns *
		opt.nmethods * opt.nsizes;
	for (k = 0; k < total; k++) {
		if (!set_config(k))
			continue;
		if (opt.budget && now() - start > opt.budget) {
			unrun++;
			continue;
		}
		failed += !one(csv);
	}
	if (csv)
		fclose(csv);
	if (unrun)
		printf("# time budget of %.0f s exhausted: %d configurations not run\n",
		       opt.budget, unrun);
	printf("# %d FAILED, %.1f s\n", failed, now() - start);
	return failed ? 1 : 0;
}
