// SPDX-License-Identifier: GPL-2.0
/*
 * Permission tests for process_vm_readv(2)/process_vm_writev(2): the
 * caller needs PTRACE_MODE_ATTACH_REALCREDS access to the target, which is
 * checked (EPERM) before any remote address is used, so that a probe with
 * a NULL remote address tells EPERM (not permitted) from EFAULT
 * (permitted).
 *
 * Needs root, to run callers and targets under other uids.  The Yama tests
 * change kernel.yama.ptrace_scope and restore it; they skip without Yama.
 * Scope 3 cannot be lowered again until reboot, so yama_scope_3 only runs
 * when PVM_YAMA_SCOPE3=1 is set in the environment, and must then be the
 * last test of the boot (run it on its own: ./process_vm_perm_test -t
 * yama_scope_3 ...).
 */
#define _GNU_SOURCE
#include "process_vm_util.h"

#include <grp.h>
#include <linux/capability.h>

#include "../kselftest_harness.h"

#define SEED_R		0x4444
#define SEED_L		0x5555
#define LEN		256
#define UID_CALLER	65534
#define UID_OTHER	65533

FIXTURE(perm) {
	struct pvm_target target;
	struct pvm_target caller;
	uint8_t *region;	/* at the same address in the target */
	long saved_scope;
	bool write;
};

FIXTURE_VARIANT(perm) {
	bool write;
};

FIXTURE_VARIANT_ADD(perm, read) {
	.write = false,
};

FIXTURE_VARIANT_ADD(perm, write) {
	.write = true,
};

FIXTURE_SETUP(perm)
{
	self->target.pid = -1;
	self->caller.pid = -1;
	self->saved_scope = -1;
	self->write = variant->write;
	if (geteuid())
		SKIP(return, "needs root to switch uids");
	self->region = pvm_map_anon(PVM_PAGE);
	ASSERT_TRUE(self->region != NULL);
}

FIXTURE_TEARDOWN(perm)
{
	pvm_target_kill(&self->caller);
	pvm_target_kill(&self->target);
	if (self->saved_scope >= 0 && self->saved_scope < 3)
		pvm_write_long(PVM_YAMA_SCOPE, self->saved_scope);
	if (self->region)
		munmap(self->region, PVM_PAGE);
}

static int drop_to(uid_t uid)
{
	if (setgroups(0, NULL) || setresgid(uid, uid, uid) ||
	    setresuid(uid, uid, uid))
		return -errno;
	return 0;
}

/* Target setup: run as @uid (0: stay root), dumpable if @dumpable */
static long setup_target(struct pvm_target *t, unsigned long region,
			 unsigned long uid, unsigned long dumpable)
{
	long ret = uid ? drop_to(uid) : 0;

	if (ret)
		return ret;
	pvm_fill((void *)region, LEN, SEED_R);
	/* a uid change makes the process non-dumpable */
	if (dumpable && prctl(PR_SET_DUMPABLE, 1))
		return -errno;
	return 0;
}

/* Caller setup: run as @uid, keeping only CAP_SYS_PTRACE if @keep_ptrace */
static long setup_caller(struct pvm_target *t, unsigned long uid,
			 unsigned long keep_ptrace, unsigned long c)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2] = { { 0 } };

	if (keep_ptrace && prctl(PR_SET_KEEPCAPS, 1))
		return -errno;
	if (drop_to(uid))
		return -errno;
	if (keep_ptrace) {
		data[0].effective = 1U << CAP_SYS_PTRACE;
		data[0].permitted = 1U << CAP_SYS_PTRACE;
		if (syscall(SYS_capset, &hdr, data))
			return -errno;
	}
	return 0;
}

/*
 * In the caller: one call of @len bytes at @raddr in @pid, a write if
 * @write.  A command has three arguments, so @write_len packs the two as
 * len << 1 | write.  Returns the count or -errno; -EBADMSG if a read
 * returned wrong data.
 */
static long cmd_access(struct pvm_target *t, unsigned long pid,
		       unsigned long raddr, unsigned long write_len)
{
	bool write = write_len & 1;
	size_t len = write_len >> 1;
	uint8_t buf[LEN];
	long ret;

	if (write)
		pvm_fill(buf, len, SEED_L);
	else
		memset(buf, 0, len);
	ret = pvm_res(pvm_rw1(write, pid, buf, raddr, len));
	if (!write && ret > 0 && pvm_check(buf, ret, SEED_R) != -1)
		return -EBADMSG;
	return ret;
}

static long cmd_set_ptracer(struct pvm_target *t, unsigned long pid,
			    unsigned long b, unsigned long c)
{
	return prctl(PR_SET_PTRACER, pid, 0, 0, 0) ? -errno : 0;
}

static void start_target(struct __test_metadata *_metadata,
			 FIXTURE_DATA(perm) *self, uid_t uid, bool dumpable)
{
	ASSERT_EQ(0, pvm_target_start(&self->target, setup_target,
				      (unsigned long)self->region, uid,
				      dumpable));
}

static void start_caller(struct __test_metadata *_metadata,
			 FIXTURE_DATA(perm) *self, uid_t uid, bool ptrace_cap)
{
	ASSERT_EQ(0, pvm_target_start(&self->caller, setup_caller, uid,
				      ptrace_cap, 0));
}

/* An access from the caller child (or from us if it is not running) */
static long access_from(FIXTURE_DATA(perm) *self, unsigned long raddr,
			size_t len)
{
	unsigned long wl = len << 1 | self->write;

	if (self->caller.pid < 0)
		return cmd_access(NULL, self->target.pid, raddr, wl);
	return pvm_target_call(&self->caller, cmd_access, self->target.pid,
			       raddr, wl);
}

/* The target is accessible: full count, and the NULL probe faults */
static void expect_allowed(struct __test_metadata *_metadata,
			   FIXTURE_DATA(perm) *self)
{
	ASSERT_EQ(LEN, access_from(self, (unsigned long)self->region, LEN));
	ASSERT_EQ(-EFAULT, access_from(self, 0, 1));
	if (self->write)
		ASSERT_EQ(-1, pvm_target_call(&self->target, pvm_cmd_check,
					      (unsigned long)self->region,
					      LEN, SEED_L));
}

/* Denied before any remote address is used; the target is unchanged */
static void expect_denied(struct __test_metadata *_metadata,
			  FIXTURE_DATA(perm) *self)
{
	ASSERT_EQ(-EPERM, access_from(self, (unsigned long)self->region,
				      LEN));
	ASSERT_EQ(-EPERM, access_from(self, 0, 1));
	ASSERT_EQ(-1, pvm_target_call(&self->target, pvm_cmd_check,
				      (unsigned long)self->region, LEN,
				      SEED_R));
}

TEST_F(perm, root_reads_other_uid)
{
	/* CAP_SYS_PTRACE overrides uid and dumpability */
	start_target(_metadata, self, UID_OTHER, false);
	expect_allowed(_metadata, self);
}

TEST_F(perm, other_uid_denied)
{
	start_target(_metadata, self, UID_OTHER, true);
	start_caller(_metadata, self, UID_CALLER, false);
	expect_denied(_metadata, self);
}

TEST_F(perm, root_target_denied)
{
	start_target(_metadata, self, 0, true);
	start_caller(_metadata, self, UID_CALLER, false);
	expect_denied(_metadata, self);
}

TEST_F(perm, same_uid_allowed)
{
	start_target(_metadata, self, UID_CALLER, true);
	start_caller(_metadata, self, UID_CALLER, false);
	expect_allowed(_metadata, self);
}

TEST_F(perm, same_uid_not_dumpable)
{
	start_target(_metadata, self, UID_CALLER, false);
	start_caller(_metadata, self, UID_CALLER, false);
	expect_denied(_metadata, self);
}

TEST_F(perm, cap_sys_ptrace_overrides)
{
	start_target(_metadata, self, UID_OTHER, false);
	start_caller(_metadata, self, UID_CALLER, true);
	expect_allowed(_metadata, self);
}

/* ---- Yama ------------------------------------------------------------- */

/* Set ptrace_scope to @scope, saving the old value; false: cannot */
static bool yama_set(FIXTURE_DATA(perm) *self, long scope)
{
	long old = pvm_yama_scope();

	if (old < 0 || old == 3)
		return false;
	if (self->saved_scope < 0)
		self->saved_scope = old;
	return !pvm_write_long(PVM_YAMA_SCOPE, scope) &&
	       pvm_yama_scope() == scope;
}

/*
 * Why a test cannot set ptrace_scope here, or NULL when it can.  The test
 * SKIP()s with the reason itself: a skip from a helper would not end it.
 */
static const char *yama_unusable(void)
{
	if (pvm_yama_scope() < 0)
		return "Yama is not enabled (no " PVM_YAMA_SCOPE ")";
	if (pvm_yama_scope() == 3)
		return "Yama ptrace_scope is 3 until reboot";
	return NULL;
}

TEST_F(perm, yama_scope_0)
{
	const char *why = yama_unusable();

	if (why)
		SKIP(return, "%s", why);
	ASSERT_TRUE(yama_set(self, 0));
	start_target(_metadata, self, UID_CALLER, true);
	start_caller(_metadata, self, UID_CALLER, false);
	expect_allowed(_metadata, self);
}

TEST_F(perm, yama_scope_1)
{
	const char *why = yama_unusable();

	if (why)
		SKIP(return, "%s", why);
	ASSERT_TRUE(yama_set(self, 1));
	/* the caller is the target's sibling, not its ancestor */
	start_target(_metadata, self, UID_CALLER, true);
	start_caller(_metadata, self, UID_CALLER, false);
	expect_denied(_metadata, self);
	/* the target declares the caller its ptracer */
	ASSERT_EQ(0, pvm_target_call(&self->target, cmd_set_ptracer,
				     self->caller.pid, 0, 0));
	expect_allowed(_metadata, self);
	ASSERT_EQ(0, pvm_target_call(&self->target, cmd_set_ptracer, 0, 0, 0));
	ASSERT_EQ(0, pvm_target_call(&self->target, pvm_cmd_fill,
				     (unsigned long)self->region, LEN,
				     SEED_R));
	expect_denied(_metadata, self);
	ASSERT_EQ(0, pvm_target_call(&self->target, cmd_set_ptracer,
				     PR_SET_PTRACER_ANY, 0, 0));
	expect_allowed(_metadata, self);
}

TEST_F(perm, yama_scope_2)
{
	const char *why = yama_unusable();

	if (why)
		SKIP(return, "%s", why);
	ASSERT_TRUE(yama_set(self, 2));
	start_target(_metadata, self, UID_CALLER, true);
	start_caller(_metadata, self, UID_CALLER, false);
	ASSERT_EQ(0, pvm_target_call(&self->target, cmd_set_ptracer,
				     PR_SET_PTRACER_ANY, 0, 0));
	/* admin-only attach: PR_SET_PTRACER does not help */
	expect_denied(_metadata, self);
	pvm_target_stop(&self->caller);
	/* root, and a caller with CAP_SYS_PTRACE only, may */
	expect_allowed(_metadata, self);
	ASSERT_EQ(0, pvm_target_call(&self->target, pvm_cmd_fill,
				     (unsigned long)self->region, LEN,
				     SEED_R));
	start_caller(_metadata, self, UID_CALLER, true);
	expect_allowed(_metadata, self);
}

TEST_F(perm, yama_scope_3)
{
	uint8_t buf[LEN];

	if (pvm_yama_scope() < 0)
		SKIP(return, "Yama is not enabled (no %s)", PVM_YAMA_SCOPE);
	if (pvm_yama_scope() != 3) {
		const char *env = getenv("PVM_YAMA_SCOPE3");

		if (!env || strcmp(env, "1"))
			SKIP(return,
			     "scope 3 is irreversible: set PVM_YAMA_SCOPE3=1");
		ASSERT_EQ(0, pvm_write_long(PVM_YAMA_SCOPE, 3));
	}
	/* nobody may attach, not even root... */
	start_target(_metadata, self, 0, true);
	expect_denied(_metadata, self);
	/* ...but a process still reaches its own memory */
	pvm_fill(self->region, LEN, SEED_R);
	memset(buf, 0, LEN);
	ASSERT_EQ(LEN, pvm_res(pvm_rw1(false, getpid(), buf,
				       (unsigned long)self->region, LEN)));
	ASSERT_EQ(-1, pvm_check(buf, LEN, SEED_R));
}

TEST_HARNESS_MAIN
