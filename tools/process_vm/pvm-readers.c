// SPDX-License-Identifier: GPL-2.0
/*
 * pvm-readers: many readers copying from one target while a thread of the
 * target keeps taking its mmap write lock.
 *
 * The target maps a filled buffer (4k pages or THP) and runs a writer
 * thread (SCHED_FIFO if allowed) that does a one-page mmap+munmap, or an
 * mprotect() toggle of a page of its own, every --interval-us, timing each
 * operation: first for --base-seconds with the readers idle, then while
 * N reader processes loop process_vm_readv() of --chunk bytes of the buffer
 * for --seconds.  Each reader checks every byte of its first copy.
 *
 * With --trace, a further run of --trace-seconds records the mmap_lock
 * tracepoints in a tracefs instance and counts, for the target's mm, the
 * read-lock acquisitions per reader call, how long readers hold the lock
 * and how long the writer waits for it.  Tracing is off during the timed
 * run; the traced run's throughput is printed separately.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "pvm_args.h"
#include "pvm_target.h"

#define MAX_READERS	64
#define MAX_SAMPLES	(1 << 20)
#define HPAGE		(2UL << 20)
#define SEED		0x5eed
#define TRACEFS		"/sys/kernel/tracing"
#define INSTANCE	TRACEFS "/instances/pvm-readers"

enum { PH_SETUP, PH_BASE, PH_TIMED, PH_IDLE, PH_TRACED, PH_EXIT, PH_NR };

struct reader_stat {
	unsigned long long calls, bytes, ns;
};

struct shared {
	int phase;
	int target_ready, readers_ready, writer_tid, writer_rt;
	uintptr_t addr;
	int err;
	unsigned int nsamples, dropped;
	struct {
		int done, bad;
		struct reader_stat st[PH_NR];
	} rd[MAX_READERS];
	unsigned long long sample[MAX_SAMPLES];	/* phase << 56 | ns */
};

static struct shared *sh;
static int nreaders = 8, thp, seconds = 5, base_seconds = 1, trace_seconds;
static int use_mprotect, interval_us = 1000, no_rt;
static size_t size = 16 << 20, chunk;
static const char *csv, *label = "";

static unsigned long long now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ULL + t.tv_nsec;
}

static int phase(void)
{
	return __atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE);
}

static void set_phase(int ph)
{
	__atomic_store_n(&sh->phase, ph, __ATOMIC_RELEASE);
}

static void sleep_us(unsigned int us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void *writer(void *arg)
{
	struct sched_param sp = { .sched_priority = 1 };
	char *page;
	int ph, prot = PROT_READ;

	sh->writer_tid = syscall(SYS_gettid);
	if (!no_rt && !pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp))
		sh->writer_rt = 1;
	page = mmap(NULL, PVM_PAGE, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return NULL;
	page[0] = 1;
	while ((ph = phase()) != PH_EXIT) {
		unsigned long long t0, t1;
		unsigned int n;

		if (ph != PH_BASE && ph != PH_TIMED && ph != PH_TRACED) {
			sleep_us(1000);
			continue;
		}
		t0 = now_ns();
		if (use_mprotect) {
			mprotect(page, PVM_PAGE, prot);
			prot ^= PROT_WRITE;
		} else {
			void *p = mmap(NULL, PVM_PAGE, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

			if (p != MAP_FAILED)
				munmap(p, PVM_PAGE);
		}
		t1 = now_ns();
		n = sh->nsamples;
		if (n < MAX_SAMPLES) {
			sh->sample[n] = (unsigned long long)ph << 56 | (t1 - t0);
			__atomic_store_n(&sh->nsamples, n + 1, __ATOMIC_RELEASE);
		} else {
			sh->dropped++;
		}
		sleep_us(interval_us);
	}
	return NULL;
}

static void target(void)
{
	pthread_t th;
	char *p;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	p = mmap(NULL, size + HPAGE, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		sh->err = errno;
		_exit(1);
	}
	p = (char *)(((uintptr_t)p + HPAGE - 1) & ~(HPAGE - 1));
	madvise(p, size, thp ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
	pvm_pattern_fill(p, (uintptr_t)p, size, SEED);
	sh->addr = (uintptr_t)p;
	if (pthread_create(&th, NULL, writer, NULL)) {
		sh->err = EAGAIN;
		_exit(1);
	}
	while (!sh->writer_tid)
		sleep_us(1000);
	__atomic_store_n(&sh->target_ready, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	_exit(0);
}

static void reader(int idx, pid_t pid)
{
	int verified = 0, ph, last = PH_SETUP;
	char *buf;

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	buf = mmap(NULL, chunk, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		_exit(1);
	memset(buf, 0, chunk);
	__atomic_fetch_add(&sh->readers_ready, 1, __ATOMIC_ACQ_REL);
	while ((ph = phase()) != PH_EXIT) {
		struct reader_stat *st = &sh->rd[idx].st[ph];
		unsigned long long t0;
		size_t off = 0;

		if (ph == last || (ph != PH_TIMED && ph != PH_TRACED)) {
			last = ph;
			sleep_us(1000);
			continue;
		}
		last = ph;
		t0 = now_ns();
		while (phase() == ph) {
			struct iovec l = { buf, chunk };
			struct iovec r = { (void *)(sh->addr + off), chunk };
			ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);

			if (n != (ssize_t)chunk) {
				sh->rd[idx].bad = n < 0 ? errno : -1;
				break;
			}
			if (!verified && pvm_pattern_check(buf, sh->addr + off,
							   chunk, SEED) != chunk)
				sh->rd[idx].bad = -2;
			verified = 1;
			st->calls++;
			st->bytes += n;
			off += chunk;
			if (off + chunk > size)
				off = 0;
		}
		st->ns = now_ns() - t0;
		__atomic_store_n(&sh->rd[idx].done, ph, __ATOMIC_RELEASE);
	}
	_exit(0);
}

static void wait_readers(int ph)
{
	int i;

	for (i = 0; i < nreaders; i++)
		while (__atomic_load_n(&sh->rd[i].done, __ATOMIC_ACQUIRE) != ph &&
		       !sh->rd[i].bad)
			sleep_us(1000);
}

static int cmp_ull(const void *a, const void *b)
{
	unsigned long long x = *(const unsigned long long *)a;
	unsigned long long y = *(const unsigned long long *)b;

	return x < y ? -1 : x > y;
}

struct lat {
	unsigned long n;
	double mean, p50, p99, max;	/* microseconds */
};

/* Sort @v (@n nanosecond values) and summarize it. */
static struct lat summarize(unsigned long long *v, unsigned long n)
{
	struct lat l = { .n = n };
	double sum = 0;
	unsigned long i;

	if (!n)
		return l;
	qsort(v, n, sizeof(*v), cmp_ull);
	for (i = 0; i < n; i++)
		sum += v[i];
	l.mean = sum / n / 1e3;
	l.p50 = v[n / 2] / 1e3;
	l.p99 = v[(n * 99) / 100] / 1e3;
	l.max = v[n - 1] / 1e3;
	return l;
}

static struct lat writer_lat(int ph)
{
	static unsigned long long v[MAX_SAMPLES];
	unsigned int i, n = 0;

	for (i = 0; i < sh->nsamples; i++)
		if (sh->sample[i] >> 56 == (unsigned int)ph)
			v[n++] = sh->sample[i] & ((1ULL << 56) - 1);
	return summarize(v, n);
}

/* Aggregate MB/s of phase @ph: the sum of each reader's rate. */
static double reader_mbps(int ph, unsigned long long *calls,
			  unsigned long long *bytes)
{
	double mbps = 0;
	int i;

	*calls = *bytes = 0;
	for (i = 0; i < nreaders; i++) {
		struct reader_stat *st = &sh->rd[i].st[ph];

		*calls += st->calls;
		*bytes += st->bytes;
		if (st->ns)
			mbps += st->bytes * 1e3 / st->ns;
	}
	return mbps;
}

static int put(const char *file, const char *val)
{
	char path[256];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), INSTANCE "/%s", file);
	f = fopen(path, "w");
	if (!f)
		return -1;
	ret = fputs(val, f) < 0;
	return fclose(f) || ret ? -1 : 0;
}

/* What the traced run found, for the target's mm. */
struct trace_res {
	int ok;
	unsigned long acq, lost;
	struct lat rwait, rhold, wwait;
};

struct tstate {
	int pid;
	unsigned long long start, acq;
};

static unsigned long long ts_ns(const char *s)
{
	unsigned long long sec, usec;

	if (sscanf(s, "%llu.%llu", &sec, &usec) != 2)
		return 0;
	return sec * 1000000000ULL + usec * 1000;
}

/*
 * Parse the instance's trace: lines like
 *   pvm-readers-123 [001] ..... 45.678901: mmap_lock_start_locking: mm=...
 *   memcg_path= write=false
 * Pass 1 finds the target's mm from the writer's write-lock events; pass 2
 * pairs start/acquire/release per task on that mm.
 */
static void parse_trace(pid_t *pids, struct trace_res *r)
{
	static unsigned long long rw[1 << 20], rh[1 << 20], ww[1 << 18];
	struct tstate ts[MAX_READERS + 1];
	unsigned long nrw = 0, nrh = 0, nww = 0;
	char line[512], mm[64] = "", *p;
	int pass, i;
	FILE *f;

	for (i = 0; i < nreaders; i++)
		ts[i] = (struct tstate){ .pid = pids[i] };
	ts[nreaders] = (struct tstate){ .pid = sh->writer_tid };
	for (pass = 0; pass < 2; pass++) {
		f = fopen(INSTANCE "/trace", "r");
		if (!f)
			return;
		while (fgets(line, sizeof(line), f)) {
			unsigned long long w, e;
			char *ev, *q, emm[64];
			int pid, write;

			if (line[0] == '#') {
				if (pass == 0 && sscanf(line,
				    "# entries-in-buffer/entries-written: %llu/%llu",
				    &e, &w) == 2)
					r->lost = w - e;
				continue;
			}
			ev = strstr(line, ": mmap_lock_");
			q = strstr(line, " [");
			if (!ev || !q || q > ev)
				continue;
			*ev = 0;
			ev += 12;
			p = strrchr(line, ' ');
			w = ts_ns(p + 1);
			for (*q = 0; q > line && q[-1] != '-'; q--)
				;
			pid = atoi(q);
			p = strstr(ev, "mm=");
			if (!p || sscanf(p, "mm=%63s", emm) != 1)
				continue;
			write = !!strstr(ev, "write=true");
			if (pass == 0) {
				if (pid == sh->writer_tid && write)
					snprintf(mm, sizeof(mm), "%s", emm);
				continue;
			}
			if (strcmp(emm, mm))
				continue;
			for (i = 0; i <= nreaders && ts[i].pid != pid; i++)
				;
			if (i > nreaders)
				continue;
			if (!strncmp(ev, "start_locking", 13)) {
				ts[i].start = w;
			} else if (!strncmp(ev, "acquire_returned", 16)) {
				if (!strstr(ev, "success=true"))
					continue;
				if (i < nreaders && !write)
					r->acq++;
				if (ts[i].start && i < nreaders && nrw < 1 << 20)
					rw[nrw++] = w - ts[i].start;
				if (ts[i].start && i == nreaders && write &&
				    nww < 1 << 18)
					ww[nww++] = w - ts[i].start;
				ts[i].start = 0;
				ts[i].acq = w;
			} else if (!strncmp(ev, "released", 8)) {
				if (ts[i].acq && i < nreaders && nrh < 1 << 20)
					rh[nrh++] = w - ts[i].acq;
				ts[i].acq = 0;
			}
		}
		fclose(f);
	}
	r->ok = mm[0] != 0;
	r->rwait = summarize(rw, nrw);
	r->rhold = summarize(rh, nrh);
	r->wwait = summarize(ww, nww);
}

#define STR(x)		#x
#define XSTR(x)		STR(x)

static const char usage[] =
	"usage: pvm-readers [--readers N] [--kind 4k|thp] [--size BYTES]\n"
	"	[--chunk BYTES] [--seconds S] [--base-seconds S]\n"
	"	[--writer mmap|mprotect] [--interval-us US] [--no-rt]\n"
	"	[--trace S] [--label TEXT] [--csv FILE] [--help]\n"
	"Sizes take K and M suffixes and are multiples of 8.  Defaults: 8\n"
	"readers (at most " XSTR(MAX_READERS) "), 4k, 16M, chunk = size, 5 s (1 s writer-only\n"
	"baseline first), mmap+munmap every 1000 us at SCHED_FIFO, no trace\n"
	"run.  Exit status 2 on a usage error.\n";

/* A size argument: a multiple of 8 bytes. */
static size_t parse_size8(const char *name, const char *s)
{
	size_t v = pvm_arg_size(name, s, 8, SIZE_MAX);

	if (v % 8)
		pvm_bad_arg(name, s, "a multiple of 8");
	return v;
}

static unsigned long thp_kb(pid_t pid)
{
	char path[64], line[256];
	unsigned long kb = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %lu", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "readers", 1, NULL, 'r' }, { "kind", 1, NULL, 'k' },
		{ "size", 1, NULL, 's' }, { "chunk", 1, NULL, 'c' },
		{ "seconds", 1, NULL, 't' }, { "base-seconds", 1, NULL, 'b' },
		{ "writer", 1, NULL, 'w' }, { "interval-us", 1, NULL, 'i' },
		{ "no-rt", 0, NULL, 'n' }, { "trace", 1, NULL, 'T' },
		{ "label", 1, NULL, 'l' }, { "csv", 1, NULL, 'C' },
		{ "help", 0, NULL, 'h' }, { }
	};
	struct trace_res tr = { };
	int traced = 0;
	unsigned long long calls, bytes, tcalls = 0, tbytes = 0;
	struct lat base, load;
	double mbps, tmbps = 0;
	pid_t tpid, pids[MAX_READERS];
	unsigned long hkb;
	int c, i, rc = 0;
	char uts[128] = "";
	FILE *f;

	while ((c = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (c) {
		case 'r':
			nreaders = pvm_arg_long("--readers", optarg, 1,
						MAX_READERS);
			break;
		case 'k':
			if (strcmp(optarg, "4k") && strcmp(optarg, "thp"))
				pvm_bad_arg("--kind", optarg, "4k or thp");
			thp = !strcmp(optarg, "thp");
			break;
		case 's':
			size = parse_size8("--size", optarg);
			break;
		case 'c':
			chunk = parse_size8("--chunk", optarg);
			break;
		case 't':
			seconds = pvm_arg_long("--seconds", optarg, 1, 3600);
			break;
		case 'b':
			base_seconds = pvm_arg_long("--base-seconds", optarg,
						    0, 3600);
			break;
		case 'w':
			if (strcmp(optarg, "mmap") && strcmp(optarg, "mprotect"))
				pvm_bad_arg("--writer", optarg,
					    "mmap or mprotect");
			use_mprotect = !strcmp(optarg, "mprotect");
			break;
		case 'i':
			interval_us = pvm_arg_long("--interval-us", optarg, 0,
						   1000000);
			break;
		case 'n':
			no_rt = 1;
			break;
		case 'T':
			trace_seconds = pvm_arg_long("--trace", optarg, 0,
						     3600);
			break;
		case 'l':
			label = optarg;
			break;
		case 'C':
			csv = optarg;
			break;
		case 'h':
			pvm_usage(usage, 0);
		default:
			pvm_usage(usage, PVM_EXIT_USAGE);
		}
	}
	pvm_args_done(argc, argv, usage);
	if (!chunk)
		chunk = size;
	if (chunk > size) {
		fprintf(stderr, "pvm-readers: --chunk %zu is larger than --size %zu\n",
			chunk, size);
		exit(PVM_EXIT_USAGE);
	}

	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED)
		return perror("mmap"), 1;
	tpid = fork();
	if (!tpid)
		target();
	while (!__atomic_load_n(&sh->target_ready, __ATOMIC_ACQUIRE)) {
		if (waitpid(tpid, NULL, WNOHANG))
			return fprintf(stderr, "target failed: %s\n",
				       strerror(sh->err)), 1;
		sleep_us(1000);
	}
	hkb = thp_kb(tpid);
	for (i = 0; i < nreaders; i++) {
		pids[i] = fork();
		if (!pids[i])
			reader(i, tpid);
	}
	while (__atomic_load_n(&sh->readers_ready, __ATOMIC_ACQUIRE) < nreaders)
		sleep_us(1000);

	set_phase(PH_BASE);
	sleep_us(base_seconds * 1000000);
	set_phase(PH_TIMED);
	sleep_us(seconds * 1000000);
	set_phase(PH_IDLE);
	wait_readers(PH_TIMED);

	if (trace_seconds) {
		char kb[32];

		mkdir(INSTANCE, 0755);
		snprintf(kb, sizeof(kb), "%d", 8192);
		if (put("buffer_size_kb", kb) || put("tracing_on", "0") ||
		    put("events/mmap_lock/enable", "1") ||
		    put("tracing_on", "1")) {
			fprintf(stderr, "no tracefs instance with mmap_lock events\n");
		} else {
			traced = 1;
			set_phase(PH_TRACED);
			sleep_us(trace_seconds * 1000000);
			set_phase(PH_IDLE);
			wait_readers(PH_TRACED);
			put("tracing_on", "0");
			put("events/mmap_lock/enable", "0");
			parse_trace(pids, &tr);
			tmbps = reader_mbps(PH_TRACED, &tcalls, &tbytes);
		}
		rmdir(INSTANCE);
	}
	set_phase(PH_EXIT);
	for (i = 0; i < nreaders; i++) {
		waitpid(pids[i], NULL, 0);
		if (sh->rd[i].bad) {
			fprintf(stderr, "reader %d: %s\n", i, sh->rd[i].bad == -2 ?
				"data mismatch" : sh->rd[i].bad == -1 ?
				"short copy" : strerror(sh->rd[i].bad));
			rc = 1;
		}
	}
	waitpid(tpid, NULL, 0);

	f = fopen("/proc/sys/kernel/osrelease", "r");
	if (f) {
		if (fgets(uts, sizeof(uts), f))
			uts[strcspn(uts, "\n")] = 0;
		fclose(f);
	}
	mbps = reader_mbps(PH_TIMED, &calls, &bytes);
	base = writer_lat(PH_BASE);
	load = writer_lat(PH_TIMED);
	printf("%s %s: %d readers, %s, %zu KiB (THP %lu KiB), chunk %zu KiB, %d s; writer %s every %d us%s\n",
	       label, uts, nreaders, thp ? "thp" : "4k", size >> 10, hkb,
	       chunk >> 10, seconds, use_mprotect ? "mprotect" : "mmap+munmap",
	       interval_us, sh->writer_rt ? " (SCHED_FIFO)" : "");
	printf("  readers: %.1f MB/s, %llu calls, %.1f MiB\n", mbps, calls,
	       bytes / 1048576.0);
	printf("  writer alone:   %6lu ops, us mean %.1f p50 %.1f p99 %.1f max %.1f\n",
	       base.n, base.mean, base.p50, base.p99, base.max);
	printf("  writer loaded:  %6lu ops, us mean %.1f p50 %.1f p99 %.1f max %.1f\n",
	       load.n, load.mean, load.p50, load.p99, load.max);
	if (sh->dropped)
		printf("  (%u writer samples dropped)\n", sh->dropped);
	if (trace_seconds && tr.ok) {
		printf("  traced run: %.1f MB/s, %llu calls, %lu events lost\n",
		       tmbps, tcalls, tr.lost);
		printf("  mmap_lock read acquisitions: %.2f per call, %.3f per MiB\n",
		       tcalls ? (double)tr.acq / tcalls : 0,
		       tbytes ? tr.acq * 1048576.0 / tbytes : 0);
		printf("  reader hold  us mean %.1f p99 %.1f max %.1f (%lu)\n",
		       tr.rhold.mean, tr.rhold.p99, tr.rhold.max, tr.rhold.n);
		printf("  reader wait  us mean %.1f p99 %.1f max %.1f\n",
		       tr.rwait.mean, tr.rwait.p99, tr.rwait.max);
		printf("  writer wait  us mean %.1f p99 %.1f max %.1f (%lu)\n",
		       tr.wwait.mean, tr.wwait.p99, tr.wwait.max, tr.wwait.n);
	} else if (traced) {
		printf("  traced run: no events for the target's mm\n");
	}
	if (csv) {
		struct stat sb;
		int header = stat(csv, &sb) || !sb.st_size;

		f = fopen(csv, "a");
		if (!f)
			return perror(csv), 1;
		if (header)
			fputs("label,kernel,kind,size,chunk,readers,seconds,writer,rt,thp_kb,mbps,calls,base_ops,base_mean_us,base_p50_us,base_p99_us,base_max_us,w_ops,w_mean_us,w_p50_us,w_p99_us,w_max_us,tr_mbps,tr_calls,tr_lost,acq_per_call,acq_per_mib,hold_mean_us,hold_p99_us,hold_max_us,rwait_mean_us,rwait_max_us,wwait_mean_us,wwait_p99_us,wwait_max_us\n", f);
		fprintf(f, "%s,%s,%s,%zu,%zu,%d,%d,%s,%d,%lu,%.1f,%llu,%lu,%.1f,%.1f,%.1f,%.1f,%lu,%.1f,%.1f,%.1f,%.1f,",
			label, uts, thp ? "thp" : "4k", size, chunk, nreaders,
			seconds, use_mprotect ? "mprotect" : "mmap",
			sh->writer_rt, hkb, mbps, calls, base.n, base.mean,
			base.p50, base.p99, base.max, load.n, load.mean,
			load.p50, load.p99, load.max);
		if (trace_seconds && tr.ok)
			fprintf(f, "%.1f,%llu,%lu,%.3f,%.4f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f,%.1f\n",
				tmbps, tcalls, tr.lost,
				tcalls ? (double)tr.acq / tcalls : 0,
				tbytes ? tr.acq * 1048576.0 / tbytes : 0,
				tr.rhold.mean, tr.rhold.p99, tr.rhold.max,
				tr.rwait.mean, tr.rwait.max, tr.wwait.mean,
				tr.wwait.p99, tr.wwait.max);
		else
			fprintf(f, ",,,,,,,,,,,,\n");
		fclose(f);
	}
	return rc;
}
