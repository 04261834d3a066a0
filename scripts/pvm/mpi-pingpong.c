// SPDX-License-Identifier: GPL-2.0
/*
 * mpi-pingpong: two MPI ranks bounce messages of 4 KiB to 16 MiB, from
 * page-aligned buffers and from buffers at odd offsets (different on
 * each side), and check every byte that arrives against the pattern the
 * peer sent.  Built with any MPI's mpicc; scripts/pvm/interop runs it
 * under Open MPI and MPICH and proves which bytes Cross Memory Attach
 * carried.
 *
 * Usage: mpirun -n 2 mpi-pingpong [MAX_BYTES [ITERATIONS]]
 *
 * Rank 0 prints one line per size and shape, then
 *   pingpong: verified bytes=N big_bytes=M bw_MBps=B
 * where N is the payload moved in both directions, M the part of it in
 * messages of 256 KiB and more (the ones every client sends by a single
 * copy when CMA is on), B the bandwidth of the largest aligned size.
 * Exit status 1 on a mismatch or an MPI error.
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MIN_SIZE	4096UL
#define BIG_SIZE	262144UL
#define PAGE		4096UL

/* Offsets of the message in the send and the receive buffer. */
static const size_t shape_off[2][2] = { { 0, 0 }, { 1, 4093 } };
static const char * const shape_name[2] = { "aligned", "misaligned" };

/* A position-dependent pattern: a byte shifted or lost shows. */
static void fill(unsigned char *p, size_t len, uint64_t seed)
{
	uint64_t x = seed * 0x9e3779b97f4a7c15ULL + 1;
	size_t i;

	for (i = 0; i < len; i++) {
		if (!(i & 7)) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
		}
		p[i] = (unsigned char)(x >> ((i & 7) * 8));
	}
}

static int check(const unsigned char *got, const unsigned char *want,
		 size_t len, const char *what, size_t size, int iter)
{
	size_t i;

	if (!memcmp(got, want, len))
		return 0;
	for (i = 0; i < len && got[i] == want[i]; i++)
		;
	fprintf(stderr,
		"pingpong: %s size=%zu iter=%d: byte %zu is %#x, want %#x\n",
		what, size, iter, i, got[i], want[i]);
	return 1;
}

int main(int argc, char **argv)
{
	size_t max = argc > 1 ? strtoul(argv[1], NULL, 0) : 16UL << 20;
	int iters = argc > 2 ? atoi(argv[2]) : 2;
	unsigned long long total = 0, big = 0;
	unsigned char *buf, *ref, *sbuf, *rbuf;
	double bw = 0, t, t0;
	int rank, nproc, peer, shape, it, bad = 0;
	size_t size;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nproc);
	if (nproc != 2 || max < MIN_SIZE || iters < 1) {
		if (!rank)
			fprintf(stderr, "usage: mpirun -n 2 %s [MAX_BYTES [ITERATIONS]]\n",
				argv[0]);
		MPI_Abort(MPI_COMM_WORLD, 2);
		return 2;
	}
	peer = !rank;
	/* send area, receive area and the expected pattern, page aligned */
	if (posix_memalign((void **)&buf, PAGE, 3 * (max + 2 * PAGE))) {
		perror("posix_memalign");
		MPI_Abort(MPI_COMM_WORLD, 1);
		return 1;
	}
	sbuf = buf;
	rbuf = buf + max + 2 * PAGE;
	ref = rbuf + max + 2 * PAGE;

	for (size = MIN_SIZE; size <= max; size *= 4) {
		for (shape = 0; shape < 2; shape++) {
			unsigned char *s = sbuf + shape_off[shape][0];
			unsigned char *r = rbuf + shape_off[shape][1];
			double dt = 0;

			for (it = 0; it < iters; it++) {
				/* seeds: size, shape, iteration and direction */
				uint64_t seed = (size << 8) | (shape << 4) | it;

				fill(s, size, seed * 2 + rank);
				memset(r, 0x5a, size);
				MPI_Barrier(MPI_COMM_WORLD);
				t0 = MPI_Wtime();
				if (!rank) {
					MPI_Send(s, size, MPI_BYTE, peer, it, MPI_COMM_WORLD);
					MPI_Recv(r, size, MPI_BYTE, peer, it, MPI_COMM_WORLD,
						 MPI_STATUS_IGNORE);
				} else {
					MPI_Recv(r, size, MPI_BYTE, peer, it, MPI_COMM_WORLD,
						 MPI_STATUS_IGNORE);
					MPI_Send(s, size, MPI_BYTE, peer, it, MPI_COMM_WORLD);
				}
				dt += MPI_Wtime() - t0;
				/* what the peer sent, checked after the timed part */
				fill(ref, size, seed * 2 + peer);
				bad |= check(r, ref, size, shape_name[shape], size, it);
				/* the peer's send buffer must be unchanged too */
				fill(ref, size, seed * 2 + rank);
				bad |= check(s, ref, size, "send buffer", size, it);
				total += 2 * size;
				if (size >= BIG_SIZE)
					big += 2 * size;
			}
			t = 2.0 * size * iters / dt / 1e6;
			if (!rank)
				printf("pingpong: size=%zu %s iters=%d %.1f MB/s\n",
				       size, shape_name[shape], iters, t);
			if (!shape)
				bw = t;
		}
	}
	MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
	if (!rank)
		printf("pingpong: %s bytes=%llu big_bytes=%llu bw_MBps=%.1f\n",
		       bad ? "FAILED" : "verified", total, big, bw);
	free(buf);
	MPI_Finalize();
	return bad;
}
