// SPDX-License-Identifier: GPL-2.0
/*
 * pvm-pagecost - single-threaded cost per call of Cross Memory Attach
 * against memcpy, per kind of memory and copy size, to compare a cost
 * model (QEMU -icount with some CPU model) with real hardware.
 *
 * A forked target maps a remote buffer of one kind (4k: MADV_NOHUGEPAGE,
 * thp: 2 MiB aligned and MADV_HUGEPAGE, hugetlb: MAP_HUGETLB), fills it
 * and sleeps blocked on a pipe.  The parent times, with a pre-faulted
 * local buffer of 4 KiB pages as the other end:
 *
 *	pvm-read	process_vm_readv(), remote to local
 *	pvm-write	process_vm_writev(), local to remote
 *	memcpy		memcpy() from a buffer of the same kind to local
 *	shm2		the two-copy shared-memory transport, done by one
 *			thread: source to a MAP_SHARED buffer, then to local
 *
 * Every call copies the same bytes at the start of the buffers (hot
 * cache as far as the size allows).  Each configuration is verified once
 * (count and data), warmed up, then timed in several repeats of a loop
 * sized by a target time; the minimum and median of the repeats' mean
 * ns per call are reported.  A wrong count or wrong data exits non-zero.
 * The timed loops are marked for the insnprof QEMU plugin (MARK below).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "pvm_args.h"
#include <signal.h>

#define KiB		1024UL
#define MiB		(1024 * KiB)
#define HPAGE		(2 * MiB)
#define MAX_SIZES	32
#define MAX_REPEATS	64
#define MAX_ITERS	1000000L

/*
 * Markers for the insnprof QEMU plugin (scripts/pvm/insnprof.c): the
 * timed loops of each configuration, in CSV row order, are one window,
 * which the plugin splits into kernel, user and rep-string instructions.
 */
#if defined(__x86_64__) || defined(__i386__)
#define MARK(n)	asm volatile(".byte 0x0f, 0x1f, 0x80, " #n ", 0x4d, 0x56, 0x50" ::: "memory")
#else
#define MARK(n)	do { } while (0)
#endif

enum kind { K_4K, K_THP, K_HUGETLB, NR_KINDS };
enum method { M_READ, M_WRITE, M_MEMCPY, M_SHM2, NR_METHODS };

static const char *const kind_name[] = { "4k", "thp", "hugetlb" };
static const char *const method_name[] = {
	"pvm-read", "pvm-write", "memcpy", "shm2"
};

static size_t sizes[MAX_SIZES] = {
	4 * KiB, 16 * KiB, 64 * KiB, 256 * KiB, MiB, 4 * MiB, 16 * MiB
};
static int nr_sizes = 7;
static bool kinds[NR_KINDS] = { true, true, true };
static bool methods[NR_METHODS] = { true, true, true, true };
static int repeats = 5;
static double target_ns = 20e6;
static const char *label;
static FILE *csv;

static size_t max_size;
static char *local;		/* 4 KiB pages, the local end */
static char *check;		/* for verifying pvm-write */
static char *shm;		/* MAP_SHARED, for shm2 */
static long saved_hugepages = -1;

static void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("pvm-pagecost: ", stderr);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

/* The 64-bit word at byte offset @off of a buffer with pattern @seed. */
static inline uint64_t pattern(uint64_t seed, size_t off)
{
	return (seed + off) * 0x9e3779b97f4a7c15ULL;
}

static void fill(void *buf, size_t len, uint64_t seed)
{
	uint64_t *p = buf;
	size_t i;

	for (i = 0; i < len / 8; i++)
		p[i] = pattern(seed, 8 * i);
}

static bool matches(const void *buf, size_t len, uint64_t seed)
{
	const uint64_t *p = buf;
	size_t i;

	for (i = 0; i < len / 8; i++)
		if (p[i] != pattern(seed, 8 * i))
			return false;
	return true;
}

/* /proc/sys/vm/nr_hugepages */
static long get_hugepages(void)
{
	FILE *f = fopen("/proc/sys/vm/nr_hugepages", "r");
	long n = -1;

	if (f) {
		if (fscanf(f, "%ld", &n) != 1)
			n = -1;
		fclose(f);
	}
	return n;
}

static bool set_hugepages(long n)
{
	FILE *f = fopen("/proc/sys/vm/nr_hugepages", "w");

	if (!f)
		return false;
	fprintf(f, "%ld\n", n);
	return fclose(f) == 0;
}

static void restore_hugepages(void)
{
	if (saved_hugepages >= 0)
		set_hugepages(saved_hugepages);
}

static size_t map_len(size_t len)
{
	return (len + HPAGE - 1) & ~(HPAGE - 1);
}

/*
 * Map @len bytes of kind @k, filled with pattern @seed.  NULL if the kind
 * cannot be had (hugetlb without huge pages).
 */
static char *map_kind(enum kind k, size_t len, uint64_t seed)
{
	int flags = MAP_PRIVATE | MAP_ANONYMOUS;
	char *p, *a;

	len = map_len(len);
	switch (k) {
	case K_4K:
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, -1, 0);
		if (p == MAP_FAILED)
			die("mmap: %s", strerror(errno));
		madvise(p, len, MADV_NOHUGEPAGE);
		break;
	case K_THP:
		p = mmap(NULL, len + HPAGE, PROT_READ | PROT_WRITE, flags,
			 -1, 0);
		if (p == MAP_FAILED)
			die("mmap: %s", strerror(errno));
		a = (char *)(((uintptr_t)p + HPAGE - 1) & ~(HPAGE - 1));
		if (a > p)
			munmap(p, a - p);
		munmap(a + len, p + HPAGE - a);
		p = a;
		madvise(p, len, MADV_HUGEPAGE);
		break;
	default:
		p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 flags | MAP_HUGETLB | MAP_POPULATE, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		break;
	}
	fill(p, len, seed);
	return p;
}

/* kB of AnonHugePages in the mapping at @addr of process @pid. */
static long thp_kb(pid_t pid, uintptr_t addr)
{
	char path[64], line[256];
	bool in = false;
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = lo <= addr && addr < hi;
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

struct target {
	pid_t pid;
	char *addr;		/* in the target */
	int hold;		/* write end of the pipe it sleeps on */
};

/* Fork a target holding a buffer of kind @k, filled with pattern @seed. */
static bool start_target(struct target *t, enum kind k, uint64_t seed)
{
	int up[2], down[2];
	char c;

	if (pipe(up) || pipe(down))
		die("pipe: %s", strerror(errno));
	t->pid = fork();
	if (t->pid < 0)
		die("fork: %s", strerror(errno));
	if (t->pid == 0) {
		char *p;

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(up[0]);
		close(down[1]);
		p = map_kind(k, max_size, seed);
		if (write(up[1], &p, sizeof(p)) != sizeof(p))
			_exit(1);
		while (read(down[0], &c, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(up[1]);
	close(down[0]);
	if (read(up[0], &t->addr, sizeof(t->addr)) != sizeof(t->addr))
		die("target %d died", (int)t->pid);
	close(up[0]);
	t->hold = down[1];
	if (!t->addr) {
		close(t->hold);
		waitpid(t->pid, NULL, 0);
		return false;
	}
	return true;
}

static void stop_target(struct target *t)
{
	close(t->hold);
	waitpid(t->pid, NULL, 0);
}

struct ctx {
	struct target *t;
	char *src;		/* local buffer of the kind, for memcpy/shm2 */
	size_t size;
};

static ssize_t pvm(const struct ctx *c, bool write)
{
	struct iovec l = { local, c->size }, r = { c->t->addr, c->size };

	if (write)
		return process_vm_writev(c->t->pid, &l, 1, &r, 1, 0);
	return process_vm_readv(c->t->pid, &l, 1, &r, 1, 0);
}

/* One call of @m; false if it copied a wrong count. */
static bool call(enum method m, const struct ctx *c)
{
	switch (m) {
	case M_READ:
		return pvm(c, false) == (ssize_t)c->size;
	case M_WRITE:
		return pvm(c, true) == (ssize_t)c->size;
	case M_MEMCPY:
		memcpy(local, c->src, c->size);
		break;
	default:
		memcpy(shm, c->src, c->size);
		memcpy(local, shm, c->size);
		break;
	}
	return true;
}

#define SEED	1
#define SEED2	2

/* Check one call of @m: count and data.  Exits on a failure. */
static void verify(enum method m, const struct ctx *c, const char *kind)
{
	struct iovec l = { check, c->size }, r = { c->t->addr, c->size };
	bool ok;

	memset(local, 0, c->size);
	switch (m) {
	case M_WRITE:
		/* Other data than the remote's, read back, then restore. */
		fill(local, c->size, SEED2);
		ok = call(m, c) &&
		     process_vm_readv(c->t->pid, &l, 1, &r, 1, 0) ==
		     (ssize_t)c->size && matches(check, c->size, SEED2);
		fill(local, c->size, SEED);
		ok = ok && call(m, c);
		break;
	default:
		ok = call(m, c) && matches(local, c->size, SEED);
		break;
	}
	if (!ok)
		die("%s %s %zu: wrong count or data", method_name[m], kind,
		    c->size);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct result {
	double min, median;
	long iters;
};

static struct result measure(enum method m, const struct ctx *c)
{
	double t[MAX_REPEATS], t0, one;
	struct result res;
	long i, n;
	int r;

	/* Warm-up, which also estimates the cost of a call. */
	t0 = now_ns();
	call(m, c);
	one = now_ns() - t0;
	n = one > 0 ? target_ns / 4 / one : 1;
	for (i = 1; i < n && i < MAX_ITERS; i++)
		call(m, c);
	one = (now_ns() - t0) / i;
	n = one > 0 ? target_ns / one : MAX_ITERS;
	n = n < 1 ? 1 : n > MAX_ITERS ? MAX_ITERS : n;
	MARK(0);
	for (r = 0; r < repeats; r++) {
		t0 = now_ns();
		for (i = 0; i < n; i++)
			call(m, c);
		t[r] = (now_ns() - t0) / n;
	}
	MARK(1);
	qsort(t, repeats, sizeof(t[0]), cmp_double);
	res.min = t[0];
	res.median = repeats % 2 ? t[repeats / 2] :
		     (t[repeats / 2 - 1] + t[repeats / 2]) / 2;
	res.iters = n;
	return res;
}

static const char *size_str(size_t s)
{
	static char buf[32];

	if (s % MiB == 0)
		snprintf(buf, sizeof(buf), "%zuM", s / MiB);
	else if (s % KiB == 0)
		snprintf(buf, sizeof(buf), "%zuK", s / KiB);
	else
		snprintf(buf, sizeof(buf), "%zu", s);
	return buf;
}

/* Run every size and method of kind @k; print its table. */
static void run_kind(enum kind k)
{
	struct result res[MAX_SIZES][NR_METHODS];
	const char *kn = kind_name[k];
	char note[96] = "";
	struct target t;
	struct ctx c;
	long need;
	int s, m;

	if (k == K_HUGETLB) {
		/* Remote and source buffers, with a few pages to spare. */
		need = 2 * ((max_size + HPAGE - 1) / HPAGE) + 2;
		saved_hugepages = get_hugepages();
		if (saved_hugepages >= 0 && saved_hugepages < need &&
		    !set_hugepages(need))
			saved_hugepages = -1;
	}
	c.src = map_kind(k, max_size, SEED);
	if (!c.src || !start_target(&t, k, SEED)) {
		printf("%s: skipped: no huge pages (MAP_HUGETLB: %s)\n\n", kn,
		       c.src ? "remote failed" : strerror(errno));
		if (c.src)
			munmap(c.src, map_len(max_size));
		restore_hugepages();
		saved_hugepages = -1;
		return;
	}
	c.t = &t;
	if (k == K_THP) {
		long want = map_len(max_size) / KiB;
		long rk = thp_kb(t.pid, (uintptr_t)t.addr);
		long lk = thp_kb(getpid(), (uintptr_t)c.src);

		if (rk < want || lk < want)
			snprintf(note, sizeof(note),
				 "NOT-ALL-THP remote %ld/%ld kB src %ld/%ld kB",
				 rk, want, lk, want);
	}
	for (s = 0; s < nr_sizes; s++) {
		c.size = sizes[s];
		for (m = 0; m < NR_METHODS; m++) {
			if (!methods[m])
				continue;
			verify(m, &c, kn);
			res[s][m] = measure(m, &c);
			if (csv)
				fprintf(csv, "%s,%s,%zu,%s,%.1f,%.1f,%ld,%d,%s\n",
					label, kn, c.size, method_name[m],
					res[s][m].min, res[s][m].median,
					res[s][m].iters, repeats, note);
		}
	}
	stop_target(&t);
	munmap(c.src, map_len(max_size));
	if (k == K_HUGETLB) {
		restore_hugepages();
		saved_hugepages = -1;
	}

	printf("%s pages%s%s: ns per call, min (median) of %d repeat%s\n", kn,
	       *note ? ", " : "", note, repeats, repeats > 1 ? "s" : "");
	printf("%6s", "size");
	for (m = 0; m < NR_METHODS; m++)
		if (methods[m])
			printf(" %22s", method_name[m]);
	if (methods[M_READ] && methods[M_MEMCPY])
		printf(" %10s", "read/memcpy");
	putchar('\n');
	for (s = 0; s < nr_sizes; s++) {
		printf("%6s", size_str(sizes[s]));
		for (m = 0; m < NR_METHODS; m++)
			if (methods[m])
				printf(" %11.0f (%8.0f)", res[s][m].min,
				       res[s][m].median);
		if (methods[M_READ] && methods[M_MEMCPY])
			printf(" %11.2f", res[s][M_READ].min /
			       res[s][M_MEMCPY].min);
		putchar('\n');
	}
	putchar('\n');
	fflush(stdout);
}

static size_t parse_size(const char *s)
{
	size_t v;

	v = pvm_arg_size("--sizes", s, 8, SIZE_MAX);
	if (v % 8)
		pvm_bad_arg("--sizes", s, "a multiple of 8");
	return v;
}

/* Parse the comma list @arg into @on, an array over @names. */
static void parse_set(const char *opt, char *arg, bool *on,
		      const char *const *names, int n)
{
	char *tok;
	int i;

	memset(on, 0, n * sizeof(*on));
	for (tok = strtok(arg, ","); tok; tok = strtok(NULL, ",")) {
		for (i = 0; i < n && strcmp(tok, names[i]); i++)
			;
		if (i == n)
			pvm_bad_arg(opt, tok, "a name it knows");
		on[i] = true;
	}
}

#define STR(x)		#x
#define XSTR(x)		STR(x)

static const char usage[] =
"Usage: pvm-pagecost [OPTION...]\n"
"Single-threaded ns per call of process_vm_readv/writev against memcpy\n"
"and a two-copy shared-memory transport, per kind of memory and size.\n"
"\n"
"  --sizes LIST      comma-separated, K/M suffixes (default\n"
"                    4K,16K,64K,256K,1M,4M,16M)\n"
"  --kinds LIST      of 4k,thp,hugetlb (default all)\n"
"  --methods LIST    of pvm-read,pvm-write,memcpy,shm2 (default all)\n"
"  --repeats N       timed loops per configuration (default 5, max " XSTR(MAX_REPEATS) ")\n"
"  --target-ms MS    length of one timed loop (default 20)\n"
"  --quick           --sizes 4K,64K,1M --repeats 3 --target-ms 5\n"
"  --label NAME      the CSV's label column (default the kernel release)\n"
"  --csv FILE        also write CSV rows to FILE:\n"
"                    label,kind,size,method,ns_min,ns_median,iterations,\n"
"                    repeats,note\n"
"  --help            this text\n"
"\n"
"Under QEMU -icount guest time is deterministic: --repeats 1 suffices.\n"
"hugetlb raises /proc/sys/vm/nr_hugepages if it can (root) and restores\n"
"it; the kind is skipped if no huge pages can be had.  A thp row whose\n"
"buffers are not all AnonHugePages (/proc/PID/smaps) says so in note.\n"
"Exit status 1 if a copy returned a wrong count or wrong data, 2 on a\n"
"usage error.\n";

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sizes", required_argument, NULL, 's' },
		{ "kinds", required_argument, NULL, 'k' },
		{ "methods", required_argument, NULL, 'm' },
		{ "repeats", required_argument, NULL, 'r' },
		{ "target-ms", required_argument, NULL, 't' },
		{ "quick", no_argument, NULL, 'q' },
		{ "label", required_argument, NULL, 'l' },
		{ "csv", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	static struct utsname u;
	const char *csv_path = NULL;
	char *tok;
	int o, s, k;

	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (o) {
		case 's':
			nr_sizes = 0;
			for (tok = strtok(optarg, ","); tok;
			     tok = strtok(NULL, ",")) {
				if (nr_sizes == MAX_SIZES)
					pvm_bad_arg("--sizes", tok, "within "
						    XSTR(MAX_SIZES) " sizes");
				sizes[nr_sizes++] = parse_size(tok);
			}
			break;
		case 'k':
			parse_set("--kinds", optarg, kinds, kind_name, NR_KINDS);
			break;
		case 'm':
			parse_set("--methods", optarg, methods, method_name, NR_METHODS);
			break;
		case 'r':
			repeats = pvm_arg_long("--repeats", optarg, 1,
					       MAX_REPEATS);
			break;
		case 't':
			target_ns = pvm_arg_double("--target-ms", optarg,
						   0.001, 60000) * 1e6;
			break;
		case 'q':
			nr_sizes = 3;
			sizes[0] = 4 * KiB, sizes[1] = 64 * KiB, sizes[2] = MiB;
			repeats = 3;
			target_ns = 5e6;
			break;
		case 'l':
			label = optarg;
			break;
		case 'c':
			csv_path = optarg;
			break;
		case 'h':
			pvm_usage(usage, 0);
		default:
			pvm_usage(usage, PVM_EXIT_USAGE);
		}
	}
	pvm_args_done(argc, argv, usage);
	if (!nr_sizes)
		pvm_bad_arg("--sizes", "", "a list of sizes");
	if (csv_path) {
		csv = fopen(csv_path, "w");
		if (!csv)
			die("%s: %s", csv_path, strerror(errno));
		fputs("label,kind,size,method,ns_min,ns_median,iterations,repeats,note\n",
		      csv);
	}
	uname(&u);
	if (!label)
		label = u.release;
	for (s = 0; s < nr_sizes; s++)
		if (sizes[s] > max_size)
			max_size = sizes[s];
	atexit(restore_hugepages);

	local = mmap(NULL, max_size, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	check = mmap(NULL, max_size, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	shm = mmap(NULL, max_size, PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (local == MAP_FAILED || check == MAP_FAILED || shm == MAP_FAILED)
		die("mmap: %s", strerror(errno));
	madvise(local, max_size, MADV_NOHUGEPAGE);
	madvise(check, max_size, MADV_NOHUGEPAGE);
	memset(local, 0, max_size);	/* pre-faulted, 4 KiB pages */
	memset(shm, 0, max_size);

	printf("pvm-pagecost: %s (%s), one thread, hot buffers\n\n", label,
	       u.release);
	for (k = 0; k < NR_KINDS; k++)
		if (kinds[k])
			run_kind(k);
	if (csv && fclose(csv))
		die("csv: %s", strerror(errno));
	return 0;
}
