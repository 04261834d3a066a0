// SPDX-License-Identifier: GPL-2.0
/*
 * insnprof: a QEMU TCG plugin that counts the guest instructions executed
 * between two marker instructions, per instruction address, so that a cost
 * measured under -icount can be split by kernel function.
 *
 * The guest marks a window with two no-ops that nothing else emits:
 * "nopl 0x50564d00(%rax)" opens it and "nopl 0x50564d01(%rax)" closes it.
 * Windows are numbered from 1 in the order they close.  At each close the
 * plugin appends one line per instruction executed in the window to the
 * file given as out=PATH:
 *
 *	row <N> <address> <count> <bytes> <string> <starts>
 *
 * where <string> is 1 for a rep-prefixed string instruction (each of its
 * iterations counts as one execution, as -icount counts it) and <starts>
 * is how many times such an instruction began: hardware pays a start-up
 * cost per rep instruction that its iteration count does not show.  Only
 * x86 guests are supported; run with one vCPU (counters are not atomic).
 *
 * The plugin ABI is QEMU's version 1 (QEMU 7.2); the few declarations it
 * needs are in qemu-plugin-v1.h, so no QEMU source tree is needed:
 *	gcc -O2 -shared -fPIC -o insnprof.so insnprof.c
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu-plugin-v1.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = 1;

#define MARK_MAGIC	0x50564d00u	/* "PVM" */

struct insn {
	uint64_t vaddr;
	uint64_t count;		/* executions, bumped inline by QEMU */
	uint64_t snap;		/* count when the window opened */
	uint64_t starts, snap_starts;	/* rep string instructions begun */
	uint8_t bytes;
	bool string;
};

/* Records never move once handed to QEMU: a list of fixed-size chunks. */
#define CHUNK	65536
struct chunk {
	struct chunk *next;
	size_t used;
	struct insn insn[CHUNK];
};

static struct chunk *chunks;
static FILE *out;
static bool open_window;
static unsigned long windows;
/*
 * Instructions other than rep string ones, bumped inline: a rep string
 * instruction that runs again with this unchanged is still iterating.
 * QEMU translates a rep instruction's first iteration and its later ones
 * in different blocks, so a start is told by address, not by record.
 */
static uint64_t plain_count, last_plain;
static uint64_t last_string;

static struct insn *new_insn(void)
{
	if (!chunks || chunks->used == CHUNK) {
		struct chunk *c = calloc(1, sizeof(*c));

		if (!c)
			abort();
		c->next = chunks;
		chunks = c;
	}
	return &chunks->insn[chunks->used++];
}

/* The marker's kind: 0 opens a window, 1 closes it; -1 if no marker. */
static int marker(const uint8_t *p, size_t n)
{
	uint32_t disp;

	if (n != 7 || p[0] != 0x0f || p[1] != 0x1f || p[2] != 0x80)
		return -1;
	memcpy(&disp, p + 3, sizeof(disp));
	if (disp != MARK_MAGIC && disp != MARK_MAGIC + 1)
		return -1;
	return disp - MARK_MAGIC;
}

/* A rep/repne prefix, an optional REX prefix, then a string opcode. */
static bool string_op(const uint8_t *p, size_t n)
{
	size_t i = 0;

	if (n < 2 || (p[0] != 0xf3 && p[0] != 0xf2))
		return false;
	i = 1;
	if ((p[i] & 0xf0) == 0x40 && i + 1 < n)
		i++;
	return (p[i] >= 0xa4 && p[i] <= 0xa7) || (p[i] >= 0xaa && p[i] <= 0xaf) ||
	       p[i] == 0x6c || p[i] == 0x6d || p[i] == 0x6e || p[i] == 0x6f;
}

static void each_insn(void (*fn)(struct insn *, uintptr_t), uintptr_t arg)
{
	struct chunk *c;
	size_t i;

	for (c = chunks; c; c = c->next)
		for (i = 0; i < c->used; i++)
			fn(&c->insn[i], arg);
}

static void snapshot(struct insn *in, uintptr_t unused)
{
	in->snap = in->count;
	in->snap_starts = in->starts;
}

static void report(struct insn *in, uintptr_t row)
{
	if (in->count != in->snap)
		fprintf(out, "row %lu %#llx %llu %u %d %llu\n",
			(unsigned long)row, (unsigned long long)in->vaddr,
			(unsigned long long)(in->count - in->snap), in->bytes,
			in->string,
			(unsigned long long)(in->starts - in->snap_starts));
}

static void on_marker(unsigned int vcpu, void *data)
{
	if (!data) {
		each_insn(snapshot, 0);
		open_window = true;
	} else if (open_window) {
		each_insn(report, ++windows);
		fflush(out);
		open_window = false;
	}
}

static void on_string(unsigned int vcpu, void *data)
{
	struct insn *in = data;

	if (in->vaddr != last_string || plain_count != last_plain) {
		in->starts++;
		last_string = in->vaddr;
		last_plain = plain_count;
	}
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t i, n = qemu_plugin_tb_n_insns(tb);

	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *qi = qemu_plugin_tb_get_insn(tb, i);
		const uint8_t *p = qemu_plugin_insn_data(qi);
		size_t size = qemu_plugin_insn_size(qi);
		struct insn *in = new_insn();
		int kind = marker(p, size);

		in->vaddr = qemu_plugin_insn_vaddr(qi);
		in->bytes = size;
		in->string = string_op(p, size);
		/* A record that appears mid-window has seen nothing yet. */
		qemu_plugin_register_vcpu_insn_exec_inline(qi, QEMU_PLUGIN_INLINE_ADD_U64,
							   &in->count, 1);
		if (in->string)
			qemu_plugin_register_vcpu_insn_exec_cb(qi, on_string,
							       QEMU_PLUGIN_CB_NO_REGS,
							       in);
		else
			qemu_plugin_register_vcpu_insn_exec_inline(qi, QEMU_PLUGIN_INLINE_ADD_U64,
								   &plain_count, 1);
		if (kind >= 0)
			qemu_plugin_register_vcpu_insn_exec_cb(qi, on_marker,
							       QEMU_PLUGIN_CB_NO_REGS,
							       (void *)(uintptr_t)kind);
	}
}

static void at_exit(qemu_plugin_id_t id, void *data)
{
	fclose(out);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const struct qemu_info *info,
					   int argc, char **argv)
{
	const char *path = NULL;
	int i;

	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			path = argv[i] + 4;
	if (!path) {
		fprintf(stderr, "insnprof: out=PATH is required\n");
		return 1;
	}
	out = fopen(path, "w");
	if (!out) {
		perror(path);
		return 1;
	}
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
