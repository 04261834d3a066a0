/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The part of QEMU's TCG plugin ABI, version 1 (QEMU 7.2), that insnprof.c
 * uses: declared here so that no QEMU source tree is needed to build it.
 * The names and signatures are QEMU's; the two enums hold the only values
 * insnprof passes.
 */
#ifndef PVM_QEMU_PLUGIN_V1_H
#define PVM_QEMU_PLUGIN_V1_H

#include <stddef.h>
#include <stdint.h>

#define QEMU_PLUGIN_EXPORT	__attribute__((visibility("default")))

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
struct qemu_info;

enum { QEMU_PLUGIN_CB_NO_REGS };
enum { QEMU_PLUGIN_INLINE_ADD_U64 };

typedef void (*qemu_plugin_tb_trans_cb)(qemu_plugin_id_t id,
					struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_udata_cb)(qemu_plugin_id_t id, void *data);
typedef void (*qemu_plugin_vcpu_udata_cb)(unsigned int vcpu, void *data);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id,
					   qemu_plugin_tb_trans_cb cb);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id,
				    qemu_plugin_udata_cb cb, void *data);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    qemu_plugin_vcpu_udata_cb cb,
					    int flags, void *data);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn,
						int op, void *ptr,
						uint64_t imm);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *
qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);

#endif /* PVM_QEMU_PLUGIN_V1_H */
