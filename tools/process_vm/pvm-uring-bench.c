// SPDX-License-Identifier: GPL-2.0
/*
 * pvm-uring-bench - cost per copied buffer of the io_uring process_vm ops
 * (IORING_OP_PROCESS_VM_READV) against process_vm_readv(2) and against an
 * io_uring read of /proc/PID/mem, and whether a reader stalls on a target
 * page that faults in slowly.
 *
 * The reader copies N buffers of SIZE bytes out of K forked targets, one
 * batch after another, with one of these methods:
 *
 *   readv               one process_vm_readv() per buffer
 *   readv-vec           one process_vm_readv() per target, one iovec per buffer
 *   uring-op            one SQE per buffer (1 iovec each), one submit per batch
 *   uring-op-vec        one SQE per target, one iovec per buffer
 *   uring-op-async      uring-op with IOSQE_ASYNC: the copies run in io-wq
 *   uring-op-vec-async  uring-op-vec with IOSQE_ASYNC
 *   uring-nop-readv     one IORING_OP_NOP per buffer, one submit per batch,
 *                       then one process_vm_readv() per buffer: the ring's
 *                       own round trip on top of the syscall, the floor any
 *                       io_uring opcode starts from
 *   uring-procmem       one IORING_OP_READ of /proc/PID/mem per buffer, at
 *                       the remote address (always completes in io-wq)
 *
 * Sections: "perbuf" runs every method but the last -vec-async one for
 * each size and batch size N with one target; "peers" copies N buffers
 * spread over K targets (K syscalls against one submit); "stall" reads
 * from a target whose region is a userfaultfd range answered after a delay
 * D per page: a synchronous process_vm_readv() takes at least D, while
 * io_uring_submit() returns at once and the completion arrives after D;
 * "latency" takes the worst io_uring_submit() of one-page reads while a
 * target with --exec-size of populated memory execs (lat-exec, with the
 * same loop of IORING_OP_NOPs as its floor), and while the reader's own
 * buffer is a userfaultfd range answered after D (lat-uffd): the inline
 * attempt must wait for neither, it hands the copy to io-wq.
 *
 * Each remote buffer sits on its own page and is read again every batch;
 * the local side rotates through fresh, poisoned slots, and every slot is
 * checked against the target's pattern after each timed chunk, as is each
 * call's return value and each CQE's result.  Times are per buffer:
 * wall (CLOCK_MONOTONIC), total CPU of the process (all threads, io-wq
 * workers included) and CPU of the submitting thread.  The op rows say
 * "unsupported" where the ring's probe does not know the opcodes.  The exit
 * status is 1 if any copy or check failed, 2 on a usage or setup error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <poll.h>
#include <sys/uio.h>
#include <sys/utsname.h>

#include "pvm_args.h"
#include "pvm_target.h"
#include "pvm_uring.h"

#define KiB		1024UL
#define MiB		(1024 * KiB)
#define MAX_PEERS	8
#define MAX_N		256		/* buffers per batch */
#define MAX_LIST	16
#define MAX_REPEATS	32
#define RING_ENTRIES	MAX_N
#define CHUNK_BYTES	(2 * MiB)	/* local slots between two checks */
#define CHUNK_BUFS	512
#define POISON		0xa5
#define FIXED_MEM	MAX_PEERS	/* registered index of /proc/PID/mem */

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

enum status { ST_OK, ST_UNSUPPORTED, ST_SKIPPED, ST_FAILED };
static const char *const status_names[] = {
	"ok", "unsupported", "skipped", "FAILED"
};

struct cfg {
	const char *section;
	size_t size;		/* bytes per buffer */
	unsigned int n;		/* buffers per batch */
	unsigned int k;		/* targets */
	unsigned int slots;	/* batches per timed chunk */
};

struct method;
typedef int (*batch_fn)(const struct method *m, const struct cfg *c,
			struct iovec *liov, char *note);

struct method {
	const char *name;
	batch_fn batch;
	bool uring;		/* needs a ring */
	bool op;		/* needs the process_vm opcodes */
	bool vec;		/* one request per target, not per buffer */
	bool procmem;
	unsigned int sqe_flags;
};

struct result {
	enum status st;
	int repeats;
	double wall, pcpu, tcpu;	/* medians, ns per buffer */
	double wall_min, wall_max;
	double submit_ms, complete_ms;	/* stall and latency sections */
	char note[160];
};

static struct {
	size_t sizes[MAX_LIST];
	int nsizes;
	int batches[MAX_LIST];
	int nbatches;
	int peers[MAX_LIST];
	int npeers;
	size_t peer_size;
	int peer_n;
	bool sec_perbuf, sec_peers, sec_stall, sec_latency;
	size_t exec_size;
	int repeats;
	double target_ns;
	unsigned int stall_ms;
	int stall_faults;
	int iowq_workers;
	bool fixed;
	const char *label;
	const char *csv;
} opt = {
	.sizes = { 64, 4 * KiB }, .nsizes = 2,
	.batches = { 1, 8, 64 }, .nbatches = 3,
	.peers = { 1, 4, 8 }, .npeers = 3,
	.peer_size = 4 * KiB, .peer_n = 64,
	.sec_perbuf = true, .sec_peers = true, .sec_stall = true,
	.sec_latency = true, .exec_size = 1024 * MiB,
	.repeats = 5, .target_ns = 20e6,
	.stall_ms = 200, .stall_faults = 1,
};

static struct pvm_target tgt[MAX_PEERS];
static struct pvm_target stall_tgt;
static int stall_err = -ENOENT;
static int memfd[MAX_PEERS];
static int ntgt;
static struct io_uring ring;
static bool have_ring, have_op;
static char ring_note[120];
static struct iovec riov[MAX_N];
static FILE *csv;
static int failures;

/* ---- helpers ------------------------------------------------------- */

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "pvm-uring-bench: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	exit(2);
}

static double clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static uint64_t seed_of(int t)
{
	return 0x243f6a8885a308d3ULL * (t + 1);
}

static size_t stride_of(size_t size)
{
	return (size + PVM_PAGE - 1) & ~(PVM_PAGE - 1);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- the batches --------------------------------------------------- */

static int batch_readv(const struct method *m, const struct cfg *c,
		       struct iovec *liov, char *note)
{
	unsigned int per = m->vec ? c->n / c->k : 1, j;
	ssize_t want = per * c->size, ret;

	for (j = 0; j < c->n; j += per) {
		ret = process_vm_readv(tgt[j / (c->n / c->k)].pid, &liov[j],
				       per, &riov[j], per, 0);
		if (ret != want) {
			snprintf(note, 160, "process_vm_readv: %zd (%s)", ret,
				 ret < 0 ? strerror(errno) : "short");
			return -1;
		}
	}
	return 0;
}

static void prep_one(const struct method *m, struct io_uring_sqe *sqe,
		     int t, struct iovec *lv, struct iovec *rv, int cnt)
{
	if (m->procmem) {
		io_uring_prep_read(sqe, opt.fixed ? FIXED_MEM + t : memfd[t],
				   lv->iov_base, lv->iov_len,
				   (uintptr_t)rv->iov_base);
		if (opt.fixed)
			sqe->flags |= IOSQE_FIXED_FILE;
	} else if (opt.fixed) {
		pvm_uring_prep_readv_fixed(sqe, t, lv, cnt, rv, cnt, 0);
	} else {
		pvm_uring_prep_readv(sqe, tgt[t].pidfd, lv, cnt, rv, cnt, 0);
	}
	sqe->flags |= m->sqe_flags;
	sqe->user_data = cnt * lv->iov_len;	/* the expected result */
}

/* Wait for @cnt completions; each must have copied what it asked for. */
static int reap(unsigned int cnt, char *note)
{
	struct io_uring_cqe *cqe;
	int ret, err = 0;

	while (cnt--) {
		ret = io_uring_wait_cqe(&ring, &cqe);
		if (ret) {
			snprintf(note, 160, "io_uring_wait_cqe: %s",
				 strerror(-ret));
			return -1;
		}
		if (cqe->res < 0 || (uint64_t)cqe->res != cqe->user_data) {
			snprintf(note, 160, "cqe res %d (%s), expected %llu",
				 cqe->res, cqe->res < 0 ? strerror(-cqe->res) :
				 "short", (unsigned long long)cqe->user_data);
			err = -1;
		}
		io_uring_cqe_seen(&ring, cqe);
	}
	return err;
}

static int batch_uring(const struct method *m, const struct cfg *c,
		       struct iovec *liov, char *note)
{
	unsigned int per = m->vec ? c->n / c->k : 1, cnt = c->n / per, j;
	int ret;

	for (j = 0; j < c->n; j += per)
		prep_one(m, io_uring_get_sqe(&ring), j / (c->n / c->k),
			 &liov[j], &riov[j], per);
	ret = io_uring_submit_and_wait(&ring, cnt);
	if (ret != (int)cnt) {
		snprintf(note, 160, "io_uring_submit: %d (%s)", ret,
			 ret < 0 ? strerror(-ret) : "short");
		return -1;
	}
	return reap(cnt, note);
}

/* The ring's round trip for N requests that do nothing, then the copies. */
static int batch_nop_readv(const struct method *m, const struct cfg *c,
			   struct iovec *liov, char *note)
{
	unsigned int j;
	int ret;

	for (j = 0; j < c->n; j++) {
		struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);

		io_uring_prep_nop(sqe);
		sqe->user_data = 0;	/* the expected result */
	}
	ret = io_uring_submit_and_wait(&ring, c->n);
	if (ret != (int)c->n) {
		snprintf(note, 160, "io_uring_submit: %d (%s)", ret,
			 ret < 0 ? strerror(-ret) : "short");
		return -1;
	}
	if (reap(c->n, note))
		return -1;
	return batch_readv(m, c, liov, note);
}

static const struct method methods[] = {
	{ "readv", batch_readv },
	{ "readv-vec", batch_readv, .vec = true },
	{ "uring-op", batch_uring, true, true },
	{ "uring-op-vec", batch_uring, true, true, .vec = true },
	{ "uring-op-async", batch_uring, true, true,
	  .sqe_flags = IOSQE_ASYNC },
	{ "uring-op-vec-async", batch_uring, true, true, .vec = true,
	  .sqe_flags = IOSQE_ASYNC },
	{ "uring-nop-readv", batch_nop_readv, true },
	{ "uring-procmem", batch_uring, true, .procmem = true },
};

static const char *const perbuf_methods[] = {
	"readv", "readv-vec", "uring-op", "uring-op-vec", "uring-op-async",
	"uring-nop-readv", "uring-procmem",
};

static const char *const peer_methods[] = {
	"readv-vec", "uring-op", "uring-op-vec", "uring-op-vec-async",
};

static const struct method *find_method(const char *name)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(methods); i++)
		if (!strcmp(methods[i].name, name))
			return &methods[i];
	die("no method %s", name);
	return NULL;
}

/* ---- timing --------------------------------------------------------- */

struct sample {
	double wall, pcpu, tcpu;
	unsigned long bufs;
};

/* Check the @c->slots batches at @local against the targets' patterns. */
static int verify(const struct cfg *c, const char *local, char *note)
{
	unsigned int npp = c->n / c->k, s, j;
	size_t off;

	for (s = 0; s < c->slots; s++) {
		for (j = 0; j < c->n; j++) {
			const char *p = local + (s * c->n + j) * c->size;

			off = pvm_pattern_check(p, (uintptr_t)riov[j].iov_base,
						c->size, seed_of(j / npp));
			if (off < c->size) {
				snprintf(note, 160,
					 "batch %u buffer %u: byte %zu differs",
					 s, j, off);
				return -1;
			}
		}
	}
	return 0;
}

/* One timed chunk: @c->slots batches into fresh slots, then the check. */
static int chunk(const struct method *m, const struct cfg *c, char *local,
		 struct iovec *liov, struct sample *smp, char *note)
{
	double w, p, t;
	unsigned int s;

	memset(local, POISON, (size_t)c->slots * c->n * c->size);
	w = clock_ns(CLOCK_MONOTONIC);
	p = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	t = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	for (s = 0; s < c->slots; s++)
		if (m->batch(m, c, liov + s * c->n, note))
			return -1;
	smp->tcpu += clock_ns(CLOCK_THREAD_CPUTIME_ID) - t;
	smp->pcpu += clock_ns(CLOCK_PROCESS_CPUTIME_ID) - p;
	smp->wall += clock_ns(CLOCK_MONOTONIC) - w;
	smp->bufs += (unsigned long)c->slots * c->n;
	return verify(c, local, note);
}

static void setup_remote(struct cfg *c)
{
	unsigned int npp = c->n / c->k, j;

	for (j = 0; j < c->n; j++) {
		riov[j].iov_base = (char *)tgt[j / npp].addr +
				   (j % npp) * stride_of(c->size);
		riov[j].iov_len = c->size;
	}
	c->slots = CHUNK_BYTES / (c->n * c->size);
	if (c->slots > CHUNK_BUFS / c->n)
		c->slots = CHUNK_BUFS / c->n;
	if (c->slots < 1)
		c->slots = 1;
}

static void run_timed(const struct method *m, struct cfg *c,
		      struct result *r)
{
	double wall[MAX_REPEATS], pcpu[MAX_REPEATS], tcpu[MAX_REPEATS];
	struct sample smp = { 0 };
	struct iovec *liov;
	size_t len, i;
	char *local;
	int rep;

	setup_remote(c);
	len = (size_t)c->slots * c->n * c->size;
	local = aligned_alloc(PVM_PAGE, stride_of(len));
	liov = calloc((size_t)c->slots * c->n, sizeof(*liov));
	if (!local || !liov)
		die("out of memory");
	for (i = 0; i < (size_t)c->slots * c->n; i++) {
		liov[i].iov_base = local + i * c->size;
		liov[i].iov_len = c->size;
	}
	/* Warm-up: faults in the slots and starts io-wq workers. */
	if (chunk(m, c, local, liov, &smp, r->note))
		goto failed;
	/* Where batches are slow (emulation), shorten the chunks. */
	if (smp.wall > opt.target_ns / 4 && c->slots > 1) {
		c->slots = c->slots * (opt.target_ns / 4) / smp.wall;
		if (!c->slots)
			c->slots = 1;
	}
	for (rep = 0; rep < opt.repeats; rep++) {
		memset(&smp, 0, sizeof(smp));
		do {
			if (chunk(m, c, local, liov, &smp, r->note))
				goto failed;
		} while (smp.wall < opt.target_ns);
		wall[rep] = smp.wall / smp.bufs;
		pcpu[rep] = smp.pcpu / smp.bufs;
		tcpu[rep] = smp.tcpu / smp.bufs;
	}
	r->st = ST_OK;
	r->repeats = rep;
	r->wall_min = wall[0];
	r->wall_max = wall[0];
	for (rep = 1; rep < r->repeats; rep++) {
		if (wall[rep] < r->wall_min)
			r->wall_min = wall[rep];
		if (wall[rep] > r->wall_max)
			r->wall_max = wall[rep];
	}
	r->wall = median(wall, r->repeats);
	r->pcpu = median(pcpu, r->repeats);
	r->tcpu = median(tcpu, r->repeats);
	goto out;
failed:
	r->st = ST_FAILED;
out:
	free(liov);
	free(local);
}

/* ---- output --------------------------------------------------------- */

static const char *const csv_columns[] = {
	"kernel", "section", "method", "size", "n", "k", "repeats", "wall_ns",
	"proc_cpu_ns", "thread_cpu_ns", "wall_min_ns", "wall_max_ns",
	"submit_ms", "complete_ms", "status", "note",
};

static void print_header(void)
{
	size_t i;

	printf("%-7s %-19s %6s %4s %2s %12s %12s %12s  %s\n", "section",
	       "method", "size", "N", "K", "wall ns/buf", "proc CPU ns",
	       "thread CPU ns", "status");
	if (csv)
		for (i = 0; i < ARRAY_SIZE(csv_columns); i++)
			fprintf(csv, "%s%c", csv_columns[i],
				i + 1 < ARRAY_SIZE(csv_columns) ? ',' : '\n');
}

static void report(const struct method *m, const struct cfg *c,
		   const struct result *r)
{
	bool ok = r->st == ST_OK;
	bool stall = !strcmp(c->section, "stall") ||
		     !strncmp(c->section, "lat-", 4);

	if (r->st == ST_FAILED)
		failures++;
	printf("%-7s %-19s %6zu %4u %2u", c->section, m->name, c->size, c->n,
	       c->k);
	if (ok && stall && !m->uring)
		printf(" the call returned after %.3f ms, thread CPU %.0f us",
		       r->complete_ms, r->tcpu / 1e3);
	else if (ok && stall && r->repeats > 1)
		printf(" worst submit %.3f ms of %d, last CQE after %.3f ms",
		       r->submit_ms, r->repeats, r->complete_ms);
	else if (ok && stall)
		printf(" submit returned after %.3f ms, CQE after %.3f ms, thread CPU %.0f us",
		       r->submit_ms, r->complete_ms, r->tcpu / 1e3);
	else if (ok)
		printf(" %12.1f %12.1f %12.1f", r->wall, r->pcpu, r->tcpu);
	else
		printf(" %12s %12s %12s", "-", "-", "-");
	printf("  %s%s%s\n", status_names[r->st], r->note[0] ? ": " : "",
	       r->note);
	if (!csv)
		return;
	fprintf(csv, "%s,%s,%s,%zu,%u,%u,%d,", opt.label, c->section, m->name,
		c->size, c->n, c->k, r->repeats);
	if (ok)
		fprintf(csv, "%.1f,%.1f,%.1f,%.1f,%.1f,", r->wall, r->pcpu,
			r->tcpu, r->wall_min, r->wall_max);
	else
		fprintf(csv, ",,,,,");
	if (ok && stall)
		fprintf(csv, "%.3f,%.3f,", r->submit_ms, r->complete_ms);
	else
		fprintf(csv, ",,");
	fprintf(csv, "%s,\"%s\"\n", status_names[r->st], r->note);
	fflush(csv);
}

/* Whether @m can run here; if not, fill @r with the reason. */
static bool runnable(const struct method *m, struct result *r)
{
	if (m->uring && !have_ring) {
		r->st = ST_UNSUPPORTED;
		snprintf(r->note, sizeof(r->note), "%s", ring_note);
		return false;
	}
	if (m->op && !have_op) {
		r->st = ST_UNSUPPORTED;
		snprintf(r->note, sizeof(r->note),
			 "the io_uring probe does not report opcodes %d/%d",
			 PVM_IORING_OP_READV, PVM_IORING_OP_WRITEV);
		return false;
	}
	return true;
}

static void setup_ring(void);

static void run_one(const char *name, struct cfg c)
{
	const struct method *m = find_method(name);
	struct result r = { 0 };

	if (runnable(m, &r))
		run_timed(m, &c, &r);
	report(m, &c, &r);
	/* Requests of a failed batch may be left: start the next afresh. */
	if (m->uring && r.st == ST_FAILED) {
		io_uring_queue_exit(&ring);
		setup_ring();
	}
}

/* ---- stall ---------------------------------------------------------- */

struct stamp {
	double wall, pcpu, tcpu;
};

static void stamp(struct stamp *s)
{
	s->wall = clock_ns(CLOCK_MONOTONIC);
	s->pcpu = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	s->tcpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* Record the time from @s to now as the completion time of @r. */
static void stall_done(const struct stamp *s, struct result *r)
{
	struct stamp e;

	stamp(&e);
	r->wall = e.wall - s->wall;
	r->pcpu = e.pcpu - s->pcpu;
	r->tcpu = e.tcpu - s->tcpu;
	r->complete_ms = r->wall / 1e6;
}

/* Copy @lv from @rv with process_vm_readv(); time the call. */
static void stall_readv(struct iovec *lv, struct iovec *rv, struct result *r)
{
	struct stamp s;
	ssize_t ret;

	stamp(&s);
	ret = process_vm_readv(stall_tgt.pid, lv, 1, rv, 1, 0);
	stall_done(&s, r);
	r->submit_ms = r->complete_ms;
	if (ret != (ssize_t)lv->iov_len) {
		snprintf(r->note, sizeof(r->note), "process_vm_readv: %zd (%s)",
			 ret, ret < 0 ? strerror(errno) : "short");
		r->st = ST_FAILED;
	}
}

/* The same through the op: time the submit and the completion. */
static void stall_uring(struct iovec *lv, struct iovec *rv, struct result *r)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	struct stamp s;
	int ret;

	pvm_uring_prep_readv(sqe, stall_tgt.pidfd, lv, 1, rv, 1, 0);
	sqe->user_data = lv->iov_len;
	stamp(&s);
	ret = io_uring_submit(&ring);
	r->submit_ms = (clock_ns(CLOCK_MONOTONIC) - s.wall) / 1e6;
	if (ret != 1) {
		snprintf(r->note, sizeof(r->note), "io_uring_submit: %d", ret);
		r->st = ST_FAILED;
		return;
	}
	if (reap(1, r->note))
		r->st = ST_FAILED;
	stall_done(&s, r);
}

/*
 * Each method reads its own pages of the stall target: each page faults,
 * and the target's userfaultfd thread answers after opt.stall_ms.
 */
static void run_stall(void)
{
	static const char *const names[] = { "readv", "uring-op" };
	size_t len = opt.stall_faults * PVM_PAGE, off;
	struct cfg c = { "stall", len, 1, 1 };
	char *buf = aligned_alloc(PVM_PAGE, len);
	struct iovec lv = { buf, len }, rv;
	int i;

	if (!buf)
		die("out of memory");
	for (i = 0; i < 2; i++) {
		const struct method *m = find_method(names[i]);
		struct result r = { .repeats = 1 };

		rv.iov_base = (char *)stall_tgt.addr + i * len;
		rv.iov_len = len;
		if (stall_err) {
			r.st = ST_SKIPPED;
			snprintf(r.note, sizeof(r.note),
				 "userfaultfd: %s (needs root or vm.unprivileged_userfaultfd=1)",
				 strerror(-stall_err));
		} else if (runnable(m, &r)) {
			memset(buf, POISON, len);
			if (i)
				stall_uring(&lv, &rv, &r);
			else
				stall_readv(&lv, &rv, &r);
			off = pvm_pattern_check(buf, (uintptr_t)rv.iov_base,
						len, stall_tgt.seed);
			if (r.st == ST_OK && off < len) {
				snprintf(r.note, sizeof(r.note),
					 "byte %zu differs", off);
				r.st = ST_FAILED;
			}
			if (r.st == ST_OK)
				snprintf(r.note, sizeof(r.note),
					 "%d fault(s) x %u ms", opt.stall_faults,
					 opt.stall_ms);
		}
		report(m, &c, &r);
	}
	free(buf);
}

/* ---- latency -------------------------------------------------------- */

/*
 * Submit one read of a page of @pidfd at @raddr into @local (a NOP if
 * @nop) and time the submit; reap what has completed.  Return the
 * submit's ms, or -1.
 */
static double lat_submit(bool nop, int pidfd, uintptr_t raddr, void *local,
			 unsigned int *inflight)
{
	struct iovec lv = { local, PVM_PAGE }, rv = { (void *)raddr, PVM_PAGE };
	struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
	struct io_uring_cqe *cqe;
	double t0, ms;

	if (!sqe)
		return -1;
	if (nop)
		io_uring_prep_nop(sqe);
	else
		pvm_uring_prep_readv(sqe, pidfd, &lv, 1, &rv, 1, 0);
	t0 = clock_ns(CLOCK_MONOTONIC);
	if (io_uring_submit(&ring) != 1)
		return -1;
	ms = (clock_ns(CLOCK_MONOTONIC) - t0) / 1e6;
	++*inflight;
	while (!io_uring_peek_cqe(&ring, &cqe)) {
		io_uring_cqe_seen(&ring, cqe);
		--*inflight;
	}
	return ms;
}

/* Reap the @inflight requests left; false if they do not all complete. */
static bool lat_drain(unsigned int inflight)
{
	struct __kernel_timespec ts = { .tv_sec = 10 };
	struct io_uring_cqe *cqe;

	for (; inflight; inflight--) {
		if (io_uring_wait_cqe_timeout(&ring, &cqe, &ts))
			return false;
		io_uring_cqe_seen(&ring, cqe);
	}
	return true;
}

/*
 * A target that maps opt.exec_size of populated memory and a page of its
 * pattern, then execs sleep(1) once told to: its exec tears that memory
 * down under the exec lock.  Returns its pid; *@page is its page, *@go
 * the pipe that starts the exec, *@done reads EOF once the exec happened.
 */
static pid_t lat_exec_target(uintptr_t *page, int *go, int *done)
{
	int gp[2], dp[2];
	char *mem, c;
	pid_t pid;

	if (pipe(gp) || pipe2(dp, O_CLOEXEC))
		die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		mem = mmap(NULL, opt.exec_size + PVM_PAGE,
			   PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
		*page = mem == MAP_FAILED ? 0 : (uintptr_t)mem;
		if (write(dp[1], page, sizeof(*page)) != sizeof(*page) ||
		    !*page || read(gp[0], &c, 1) != 1)
			_exit(1);
		execl("/bin/sleep", "sleep", "1", (char *)NULL);
		_exit(1);
	}
	close(gp[0]);
	close(dp[1]);
	if (read(dp[0], page, sizeof(*page)) != sizeof(*page) || !*page)
		die("exec target: no memory for --exec-size %zu", opt.exec_size);
	*go = gp[1];
	*done = dp[0];
	return pid;
}

/*
 * Worst submit while the target execs, and for 100 submits after it.  The
 * NOP run is the floor: what the machine (or the emulator) alone adds.
 */
static void lat_exec(bool nop, char *local, struct result *r)
{
	struct pollfd pfd = { .events = POLLIN };
	unsigned int inflight = 0;
	int go, pidfd, after = -1, status;
	double ms, t0 = clock_ns(CLOCK_MONOTONIC);
	uintptr_t page;
	pid_t pid;
	char c = 0;

	pid = lat_exec_target(&page, &go, &pfd.fd);
	pidfd = pvm_pidfd_open(pid);
	if (pidfd < 0)
		die("pidfd_open: %s", strerror(errno));
	if (write(go, &c, 1) != 1)
		die("exec target: %s", strerror(errno));
	while (after < 100) {
		ms = lat_submit(nop, pidfd, page, local, &inflight);
		if (ms < 0)
			break;
		r->submit_ms = ms > r->submit_ms ? ms : r->submit_ms;
		r->repeats++;
		if (after >= 0 || poll(&pfd, 1, 0) > 0)
			after++;
		/* Half a ring in flight: wait for those, untimed */
		if (inflight >= RING_ENTRIES / 2) {
			if (!lat_drain(inflight))
				break;
			inflight = 0;
		}
	}
	if (after < 100 || !lat_drain(inflight)) {
		r->st = ST_FAILED;
		snprintf(r->note, sizeof(r->note), "a submit or a CQE failed");
	} else {
		snprintf(r->note, sizeof(r->note), "exec of a %zu MiB target",
			 opt.exec_size / MiB);
	}
	r->complete_ms = (clock_ns(CLOCK_MONOTONIC) - t0) / 1e6;
	close(pidfd);
	close(go);
	close(pfd.fd);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

/* Submit into a local buffer that faults through our userfaultfd. */
static void lat_uffd(struct result *r)
{
	struct pvm_target loc = { .len = 4 * PVM_PAGE, .seed = 1,
				  .delay_ms = opt.stall_ms };
	unsigned int inflight = 0;
	double ms, t0 = clock_ns(CLOCK_MONOTONIC);
	int i, err;

	err = pvm_target_setup(&loc);
	if (err)
		die("local userfaultfd: %s", strerror(-err));
	for (i = 0; i < 4; i++) {
		ms = lat_submit(false, tgt[0].pidfd, tgt[0].addr,
				(char *)loc.addr + i * PVM_PAGE, &inflight);
		if (ms < 0)
			break;
		r->submit_ms = ms > r->submit_ms ? ms : r->submit_ms;
		r->repeats++;
	}
	if (i < 4 || !lat_drain(inflight)) {
		r->st = ST_FAILED;
		snprintf(r->note, sizeof(r->note), "a submit or a CQE failed");
	} else if (pvm_pattern_check((char *)loc.addr + 3 * PVM_PAGE,
				     tgt[0].addr, PVM_PAGE, tgt[0].seed) <
		   PVM_PAGE) {
		r->st = ST_FAILED;
		snprintf(r->note, sizeof(r->note), "wrong bytes read");
	} else {
		snprintf(r->note, sizeof(r->note),
			 "own buffer uffd-missing, %u ms per fault",
			 opt.stall_ms);
	}
	r->complete_ms = (clock_ns(CLOCK_MONOTONIC) - t0) / 1e6;
}

static void run_latency(void)
{
	static const struct method nop = { .name = "uring-nop", .uring = true };
	const struct method *m = find_method("uring-op");
	struct cfg c = { "lat-exec", PVM_PAGE, 1, 1 };
	char *local = aligned_alloc(PVM_PAGE, PVM_PAGE);
	struct result r = { 0 };

	if (!local)
		die("out of memory");
	if (runnable(&nop, &r))
		lat_exec(true, local, &r);
	report(&nop, &c, &r);
	r = (struct result){ 0 };
	if (runnable(m, &r))
		lat_exec(false, local, &r);
	report(m, &c, &r);
	c.section = "lat-uffd";
	r = (struct result){ 0 };
	if (stall_err) {
		r.st = ST_SKIPPED;
		snprintf(r.note, sizeof(r.note), "userfaultfd: %s",
			 strerror(-stall_err));
	} else if (runnable(m, &r)) {
		lat_uffd(&r);
	}
	report(m, &c, &r);
	free(local);
}

/* ---- setup ---------------------------------------------------------- */

static void start_targets(void)
{
	size_t len = 0, l;
	char path[64];
	int i, err;

	for (i = 0; i < opt.nsizes; i++)
		for (int j = 0; j < opt.nbatches; j++) {
			l = opt.batches[j] * stride_of(opt.sizes[i]);
			len = l > len ? l : len;
		}
	l = opt.peer_n * stride_of(opt.peer_size);
	len = l > len ? l : len;
	ntgt = 1;
	for (i = 0; opt.sec_peers && i < opt.npeers; i++)
		ntgt = opt.peers[i] > ntgt ? opt.peers[i] : ntgt;
	for (i = 0; i < ntgt; i++) {
		err = pvm_target_start(&tgt[i], len, seed_of(i), 0);
		if (err)
			die("target %d: %s", i, strerror(-err));
		snprintf(path, sizeof(path), "/proc/%d/mem", tgt[i].pid);
		memfd[i] = open(path, O_RDONLY | O_CLOEXEC);
		if (memfd[i] < 0)
			die("%s: %s", path, strerror(errno));
	}
	stall_err = pvm_uffd_available();
	if (!opt.sec_stall)
		return;
	if (!stall_err)
		stall_err = pvm_target_start(&stall_tgt,
					     2 * opt.stall_faults * PVM_PAGE,
					     seed_of(MAX_PEERS), opt.stall_ms);
}

static void setup_ring(void)
{
	int fds[2 * MAX_PEERS], i, ret;
	unsigned int max[2];

	have_ring = false;
	ret = io_uring_queue_init(RING_ENTRIES, &ring, 0);
	if (ret) {
		snprintf(ring_note, sizeof(ring_note), "io_uring: %s",
			 strerror(-ret));
		return;
	}
	have_ring = true;
	have_op = pvm_uring_supported(&ring);
	if (opt.iowq_workers) {
		max[0] = opt.iowq_workers;
		max[1] = opt.iowq_workers;
		ret = io_uring_register_iowq_max_workers(&ring, max);
		if (ret)
			die("io_uring_register_iowq_max_workers: %s",
			    strerror(-ret));
	}
	if (!opt.fixed)
		return;
	for (i = 0; i < MAX_PEERS; i++) {
		fds[i] = i < ntgt ? tgt[i].pidfd : -1;
		fds[FIXED_MEM + i] = i < ntgt ? memfd[i] : -1;
	}
	ret = io_uring_register_files(&ring, fds, 2 * MAX_PEERS);
	if (ret)
		die("io_uring_register_files: %s", strerror(-ret));
}

/* ---- options -------------------------------------------------------- */

static size_t parse_size(const char *name, const char *s)
{
	size_t v = pvm_arg_size(name, s, 8, 16 * MiB);

	if (v % 8)
		pvm_bad_arg(name, s, "a multiple of 8");
	return v;
}

/* Split the comma-separated @arg; return the number of items. */
static int parse_list(char *arg, const char *what, int max,
		      void (*one)(const char *item, int i))
{
	char *save, *item;
	int n = 0;

	for (item = strtok_r(arg, ",", &save); item;
	     item = strtok_r(NULL, ",", &save)) {
		if (n == max)
			die("too many %s (at most %d)", what, max);
		one(item, n++);
	}
	if (!n)
		die("empty list of %s", what);
	return n;
}

static void one_size(const char *s, int i)
{
	opt.sizes[i] = parse_size("--sizes", s);
}

static void one_batch(const char *s, int i)
{
	opt.batches[i] = pvm_arg_long("--batches", s, 1, MAX_N);
}

static void one_peer(const char *s, int i)
{
	opt.peers[i] = pvm_arg_long("--peers", s, 1, MAX_PEERS);
}

static void one_section(const char *s, int i)
{
	if (!strcmp(s, "perbuf"))
		opt.sec_perbuf = true;
	else if (!strcmp(s, "peers"))
		opt.sec_peers = true;
	else if (!strcmp(s, "stall"))
		opt.sec_stall = true;
	else if (!strcmp(s, "latency"))
		opt.sec_latency = true;
	else
		die("no section %s (perbuf, peers, stall, latency)", s);
}

static const char usage[] =
	"usage: pvm-uring-bench [options]\n"
	"  --sections LIST   perbuf,peers,stall,latency (default: all)\n"
	"  --sizes LIST      perbuf buffer sizes (default 64,4K)\n"
	"  --batches LIST    perbuf batch sizes N (default 1,8,64)\n"
	"  --peers LIST      peers section target counts K (default 1,4,8)\n"
	"  --peer-size SIZE  peers section buffer size (default 4K)\n"
	"  --peer-n N        peers section buffers per batch (default 64)\n"
	"  --repeats R       timed repeats, median reported (default 5)\n"
	"  --target-ms T     minimum time of one repeat (default 20)\n"
	"  --stall-ms D      userfaultfd answer delay per fault (default 200)\n"
	"  --stall-faults F  pages (faults) in the stalled copy (default 1)\n"
	"  --exec-size SIZE  memory of the latency section's exec target\n"
	"                    (default 1024M)\n"
	"  --iowq-workers W  cap io-wq workers (default: kernel default)\n"
	"  --fixed           registered pidfds and /proc/PID/mem files\n"
	"  --quick           --repeats 3 --target-ms 5\n"
	"  --label L         kernel column of the CSV (default uname -r)\n"
	"  --csv FILE        also write the rows as CSV\n"
	"  --help            this text\n"
	"Exit status: 0, 1 if a copy or check failed, 2 on a usage or setup\n"
	"error.\n";

static void parse_args(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "sections", 1, NULL, 's' }, { "sizes", 1, NULL, 'z' },
		{ "batches", 1, NULL, 'n' }, { "peers", 1, NULL, 'k' },
		{ "peer-size", 1, NULL, 'S' }, { "peer-n", 1, NULL, 'N' },
		{ "repeats", 1, NULL, 'r' }, { "target-ms", 1, NULL, 't' },
		{ "stall-ms", 1, NULL, 'd' }, { "stall-faults", 1, NULL, 'f' },
		{ "exec-size", 1, NULL, 'e' },
		{ "iowq-workers", 1, NULL, 'w' }, { "fixed", 0, NULL, 'F' },
		{ "quick", 0, NULL, 'q' }, { "label", 1, NULL, 'l' },
		{ "csv", 1, NULL, 'c' }, { "help", 0, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c, i;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			opt.sec_perbuf = false;
			opt.sec_peers = false;
			opt.sec_stall = false;
			opt.sec_latency = false;
			parse_list(optarg, "sections", 4, one_section);
			break;
		case 'z':
			opt.nsizes = parse_list(optarg, "sizes", MAX_LIST,
						one_size);
			break;
		case 'n':
			opt.nbatches = parse_list(optarg, "batch sizes",
						  MAX_LIST, one_batch);
			break;
		case 'k':
			opt.npeers = parse_list(optarg, "peer counts",
						MAX_LIST, one_peer);
			break;
		case 'S':
			opt.peer_size = parse_size("--peer-size", optarg);
			break;
		case 'N':
			opt.peer_n = pvm_arg_long("--peer-n", optarg, 1, MAX_N);
			break;
		case 'r':
			opt.repeats = pvm_arg_long("--repeats", optarg, 1,
						   MAX_REPEATS);
			break;
		case 't':
			opt.target_ns = pvm_arg_long("--target-ms", optarg, 0,
						     60000) * 1e6;
			break;
		case 'd':
			opt.stall_ms = pvm_arg_long("--stall-ms", optarg, 0,
						    60000);
			break;
		case 'f':
			opt.stall_faults = pvm_arg_long("--stall-faults",
							optarg, 1, 1024);
			break;
		case 'e':
			opt.exec_size = pvm_arg_size("--exec-size", optarg,
						     PVM_PAGE, 4095 * MiB);
			break;
		case 'w':
			opt.iowq_workers = pvm_arg_long("--iowq-workers",
							optarg, 0, 4096);
			break;
		case 'F':
			opt.fixed = true;
			break;
		case 'q':
			opt.repeats = 3;
			opt.target_ns = 5e6;
			break;
		case 'l':
			opt.label = optarg;
			break;
		case 'c':
			opt.csv = optarg;
			break;
		case 'h':
			pvm_usage(usage, 0);
		default:
			pvm_usage(usage, PVM_EXIT_USAGE);
		}
	}
	pvm_args_done(argc, argv, usage);
	for (i = 0; opt.sec_peers && i < opt.npeers; i++)
		if (opt.peer_n % opt.peers[i])
			die("--peer-n %d is not a multiple of K=%d", opt.peer_n,
			    opt.peers[i]);
}

int main(int argc, char **argv)
{
	static struct utsname uts;
	struct cfg c = { 0 };
	size_t i, j;
	int b;

	setvbuf(stdout, NULL, _IOLBF, 0);
	parse_args(argc, argv);
	uname(&uts);
	if (!opt.label)
		opt.label = uts.release;
	if (opt.csv) {
		csv = fopen(opt.csv, "w");
		if (!csv)
			die("%s: %s", opt.csv, strerror(errno));
	}
	/* Fork the targets while single-threaded, before any io-wq worker. */
	start_targets();
	setup_ring();
	printf("pvm-uring-bench on %s: io_uring %s, process_vm ops %s\n",
	       uts.release, have_ring ? "available" : ring_note,
	       have_op ? "supported" : "unsupported");
	printf("ns per buffer, median of %d repeats of >= %.0f ms; wall = CLOCK_MONOTONIC,\n",
	       opt.repeats, opt.target_ns / 1e6);
	printf("proc CPU = all threads (io-wq included), thread CPU = submitting thread\n");
	print_header();
	for (i = 0; opt.sec_perbuf && i < (size_t)opt.nsizes; i++) {
		for (b = 0; b < opt.nbatches; b++) {
			c = (struct cfg){ "perbuf", opt.sizes[i],
					  opt.batches[b], 1 };
			for (j = 0; j < ARRAY_SIZE(perbuf_methods); j++)
				run_one(perbuf_methods[j], c);
		}
	}
	for (b = 0; opt.sec_peers && b < opt.npeers; b++) {
		c = (struct cfg){ "peers", opt.peer_size, opt.peer_n,
				  opt.peers[b] };
		for (j = 0; j < ARRAY_SIZE(peer_methods); j++)
			run_one(peer_methods[j], c);
	}
	if (opt.sec_stall)
		run_stall();
	if (opt.sec_latency)
		run_latency();
	for (b = 0; b < ntgt; b++) {
		close(memfd[b]);
		pvm_target_stop(&tgt[b]);
	}
	pvm_target_stop(&stall_tgt);
	if (have_ring)
		io_uring_queue_exit(&ring);
	if (csv)
		fclose(csv);
	if (failures)
		printf("pvm-uring-bench: %d FAILED\n", failures);
	return failures ? 1 : 0;
}
