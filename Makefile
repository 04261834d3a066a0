# SPDX-License-Identifier: GPL-2.0
#
# Cross Memory Attach overlay: unpacks the Debian linux-source-6.12 tarball,
# makes it a git tree with the series (patches/vN) as a branch, lays this
# repository's files on it, builds the kernels
# out of tree, boots them under QEMU and runs the tests.  `make help` lists
# the targets.

SHELL := /bin/bash
.DEFAULT_GOAL := help
# A recipe that fails leaves no half-made .config or stamp behind.
.DELETE_ON_ERROR:

BASE_TAR ?= /usr/src/linux-source-6.12.tar.xz
B        := $(CURDIR)/build
PRISTINE := $(B)/pristine
JOBS     ?= $(shell nproc)
VM       := $(CURDIR)/scripts/pvm/vm-run
QUICK    ?=
MUTANTS  ?=

# Directories of this repository that are laid over the kernel tree, and
# the files in them that git tracks, committed or not (build output is
# not ours).  scripts/ is not one of them: scripts/pvm is this
# repository's tooling.  Documentation/man is the man-pages project's page
# and its patch, not kernel files.
OVERLAY_DIRS := Documentation include io_uring kernel mm tools
# tools/lib/pvm_handle is a user-space library built from here, not
# part of the series either.
OVERLAY      := $(filter-out Documentation/man/% tools/lib/pvm_handle/%, \
		$(wildcard $(shell git ls-files -- $(OVERLAY_DIRS))))
# The stored series: git format-patch output of the highest version.
SERIES       := $(wildcard $(shell scripts/pvm/series current)/*.patch)

export CCACHE_DIR ?= $(HOME)/.cache/ccache
export CCACHE_BASEDIR := $(B)
# $(call KMAKE,DIR[,ARCH]): the kernel's make for DIR/src into DIR/obj,
# for the host's architecture or for ARCH (KFLAGS_ARCH, KCC_ARCH below).
KMAKE = $(MAKE) -s -C $(1)/src O=$(1)/obj -j$(JOBS) $(KFLAGS_$(2)) \
	CC="ccache $(or $(KCC_$(2)),gcc)"
# $(call KIMAGE,DIR[,ARCH]) TARGET: a kernel build, which -s keeps quiet
# for many minutes, with a line a minute and its time at the end.
KIMAGE = @scripts/pvm/heartbeat "$(notdir $(1)): kernel build" $(call KMAKE,$(1),$(2))
# When make started, for the closing lines of the long targets
# (scripts/pvm/summary: elapsed time, outputs, what next).
T0 := $(shell date +%s)
SUMMARY = scripts/pvm/summary $(1) $(T0)
# libpvm_handle; its test needs kselftest_harness.h from the base.
PVMH  = $(MAKE) -s -C tools/lib/pvm_handle OUTPUT=$(B)/pvm_handle/ \
	TESTDIR=$(B)/selftests/pvm_handle/ BINDIR=$(B)/tools/ \
	KSFT_DIR=$(PRISTINE)/tools/testing/selftests

# ours: base + overlay + patches; stock: base only (the reference);
# debug: ours plus the kernel's debug.config (KASAN, UBSAN, lockdep, ...).
BZ_ours  := $(B)/ours/obj/arch/x86/boot/bzImage
BZ_stock := $(B)/stock/obj/arch/x86/boot/bzImage
BZ_debug := $(B)/debug/obj/arch/x86/boot/bzImage

.PHONY: help deps tree kernel stock debug kernels headers selftests tools pvm_handle run check \
	tools-test stress mutate kunit bench calibrate interop patches series-verify docs results liburing clean clean-out \
	distclean FORCE

help:
	@echo 'Cross Memory Attach on Linux 6.12 -- targets:'
	@echo '  make run        build what is missing, boot our kernel, demo + bandwidth table'
	@echo '  make check      all tests: selftests on ours/stock (VM) and host, KUnit,'
	@echo '                 short stress in the debug kernel, docs, tools-test, the series'
	@echo '                 round trip, vm-run itself (scripts/pvm/vm-run-test: fake QEMU),'
	@echo '                 the liburing patch'"'"'s test (ours: pass, stock: skip)'
	@echo '  make liburing   Debian'"'"'s liburing source (apt-get source) with'
	@echo '                 patches/liburing applied, built in build/liburing'
	@echo '  make check-i386 the suite and KUnit on i386 with HIGHMEM (ours vs stock,'
	@echo '                 3 GiB guests, the highmem proof); make check-arm64 on arm64'
	@echo '                 (clang cross build); make check-arches: both'
	@echo '  make stress     stress + fuzz run in the debug (KASAN/lockdep) kernel'
	@echo '  make mutate     mutation test of the guest suite (MUTANTS="m01 u02", QUICK=1)'
	@echo '  make kunit      the KUnit suite alone, the upstream way: kunit.py run with'
	@echo '                 mm/tests/.kunitconfig (User-Mode Linux, in build/kunit)'
	@echo '  make bench      benchmark host / stock VM / ours VM (QUICK=1 for a short run)'
	@echo '  make calibrate  the -icount CPU models against the host (pvm-pagecost, and'
	@echo '                 pvm-repcost for rep start-up), ours against stock in the'
	@echo '                 model that matches best (CAL_MODEL=...):'
	@echo '                 out/bench/calibration.md; boots the kernels built, builds none'
	@echo '  make interop    Open MPI, MPICH, UCX, libfabric over CMA on host / stock VM /'
	@echo '                 ours VM, CMA on and off, Yama 0/1, root/nobody: out/interop/'
	@echo '  make patches    export branch pvm of build/ours/src (the series as a git'
	@echo '                 branch) to patches/vN (NEW=1: a new version, range-diff in'
	@echo '                 its cover letter), then make series-verify'
	@echo '  make series-verify  checkpatch --strict, the stored series on the base gives'
	@echo '                 this repository'"'"'s kernel files, every commit builds (long);'
	@echo '                 records it in patches/vN/built, which make check requires'
	@echo '  make docs       man pages (patch, groff/man/mandoc warnings, EXAMPLES built,'
	@echo '                 process_vm_export(2)'"'"'s run), process_vm.rst via Sphinx,'
	@echo '                 kernel-doc; rendered pages in out/docs/NAME.2.txt'
	@echo '  make kernel | stock | debug   build one kernel (build/<name>/obj)'
	@echo '  make kernel-ARCH | stock-ARCH | selftests-ARCH   the same for ARCH'
	@echo '                 (i386, arm64): build/<name>-ARCH/obj, build/selftests-ARCH'
	@echo '  make selftests  build tools/testing/selftests/process_vm and the pvm_handle test'
	@echo '  make pvm_handle libpvm_handle (tools/lib/pvm_handle), its test and demo;'
	@echo '                 no kernel needed: build/selftests/pvm_handle/pvm_handle_test'
	@echo '  make tools-test --help, unknown options and bad numbers of every tool in'
	@echo '                 tools/process_vm and script in scripts/pvm; no kernel, seconds'
	@echo '  make results    the runs make recorded (out/results.tsv: date, commit,'
	@echo '                 counts, wall time) into RESULTS.md'"'"'s table'
	@echo '  make deps       install the Debian packages the build needs (root)'
	@echo '  make clean      remove kernel objects and test builds; keep the unpacked'
	@echo '                 base, ccache and out/ (reports that take hours to remake)'
	@echo '  make clean-out  remove out/: reports, patches, docs'
	@echo '  make distclean  remove build/ and out/'
	@echo 'Boot a kernel yourself: scripts/pvm/vm-run --kernel ours|stock|debug -- CMD'
	@echo '                 (console log: build/vm/console/, the latest build/vm/last-console.log)'

deps:
	@scripts/pvm/deps

$(B)/pristine.stamp: | deps
	rm -rf $(PRISTINE) && mkdir -p $(PRISTINE)
	tar -xJf $(BASE_TAR) -C $(PRISTINE) --strip-components=1
	$(MAKE) -s -C $(PRISTINE) kernelversion > $(B)/base-version
	touch $@

# The source trees share unchanged files with the pristine base by hard
# link; rsync and patch replace files rather than write into them.
tree: $(B)/ours/src.stamp
$(B)/ours/src.stamp: $(B)/pristine.stamp $(OVERLAY) $(SERIES)
	@echo 'tree: build/ours/src, branch pvm: the base, the series, this repository'"'"'s files'
	@scripts/pvm/series apply $(PRISTINE) $(B)/ours/src $(OVERLAY)
	touch $@
# A file that leaves the overlay changes no prerequisite's time: compare
# with the list of files series apply laid.
ifneq ($(sort $(OVERLAY)),$(sort $(file < $(B)/ours/src.overlay)))
$(B)/ours/src.stamp: FORCE
endif
FORCE:
$(B)/stock/src.stamp: $(B)/pristine.stamp
	rm -rf $(B)/stock/src && mkdir -p $(B)/stock && cp -al $(PRISTINE) $(B)/stock/src
	touch $@

# A kernel's config fragments, in order, for architecture $(1): ours, what
# the tests need (their own files, as upstream keeps them), the machine.
FRAGS = kernel/configs/pvm.config tools/testing/selftests/process_vm/config \
	mm/tests/.kunitconfig kernel/configs/pvm-$(1).config
# $(call KCONFIG,DIR,KMAKE-ARCH,ARCH): tinyconfig, then each fragment merged
# and resolved in turn, as `make FRAGMENT.config` does for the fragments
# in kernel/configs.
KCONFIG = echo 'config: $(1:$(CURDIR)/%=%)/obj/.config: tinyconfig, then $(words $(call FRAGS,$(3))) fragments' && \
	$(call KMAKE,$(1),$(2)) tinyconfig && \
	for f in $(call FRAGS,$(3)); do \
		$(1)/src/scripts/kconfig/merge_config.sh -m -O $(1)/obj \
			$(1)/obj/.config $$f > /dev/null && \
		$(call KMAKE,$(1),$(2)) olddefconfig || exit 1; \
	done && \
	scripts/pvm/check-config $(1)/obj/.config $(call FRAGS,$(3)) || \
		{ rm $(1)/obj/.config; exit 1; }

$(B)/ours/obj/.config: $(call FRAGS,x86_64) $(SERIES) | $(B)/ours/src.stamp
	@mkdir -p $(@D) && rm -f $@
	@$(call KCONFIG,$(B)/ours,,x86_64)
# stock's .config: ours' with stock's LOCALVERSION; olddefconfig then
# drops what only ours has.
STOCKCONFIG = echo 'config: $(2:$(CURDIR)/%=%): $(1:$(CURDIR)/%=%) for the stock tree' && \
	sed 's/^CONFIG_LOCALVERSION=.*/CONFIG_LOCALVERSION="-stock"/' $(1) > $(2)
$(B)/stock/obj/.config: $(B)/stock/src.stamp $(B)/ours/obj/.config
	@mkdir -p $(@D)
	@$(call STOCKCONFIG,$(B)/ours/obj/.config,$@)
	@$(call KMAKE,$(B)/stock) olddefconfig
$(B)/debug/obj/.config: $(B)/ours/obj/.config kernel/configs/pvm-debug.config
	@echo 'config: build/debug/obj/.config: ours plus debug.config and pvm-debug.config'
	@mkdir -p $(B)/debug/obj && ln -sfn ../ours/src $(B)/debug/src
	@cp $(B)/ours/obj/.config $@
	@$(B)/ours/src/scripts/kconfig/merge_config.sh -m -O $(B)/debug/obj $@ \
		$(B)/ours/src/kernel/configs/debug.config \
		kernel/configs/pvm-debug.config > /dev/null
	@$(call KMAKE,$(B)/debug) olddefconfig
	@scripts/pvm/check-config $@ kernel/configs/pvm-debug.config || { rm $@; exit 1; }

# Other architectures: ours and stock from the same source trees, with
# pvm.config plus pvm-ARCH.config, in build/ours-ARCH and build/stock-ARCH;
# the selftests static in build/selftests-ARCH against a sysroot of
# Debian's packages for ARCH (busybox, liburing); `make check-ARCH` boots
# both under QEMU and compares them case by case.  arm64 is built with
# clang: Debian's gcc-aarch64-linux-gnu conflicts with gcc-multilib, which
# the 32-bit x86 programs need.
ARCHES        := i386 arm64
KFLAGS_i386   := ARCH=i386
KFLAGS_arm64  := ARCH=arm64 LLVM=1
KCC_arm64     := clang
IMAGE_i386    := bzImage
IMAGE_arm64   := Image
TCC_i386      := gcc -m32
TCC_arm64     := clang --target=aarch64-linux-gnu -fuse-ld=lld
TRIPLET_i386  := i386-linux-gnu
TRIPLET_arm64 := aarch64-linux-gnu
.PHONY: check-arches $(foreach a,$(ARCHES),kernel-$(a) stock-$(a) selftests-$(a) check-$(a))

$(B)/ours-%/obj/.config: $(call FRAGS,%) $(SERIES) | $(B)/ours/src.stamp
	@mkdir -p $(@D) && ln -sfn ../ours/src $(B)/ours-$*/src && rm -f $@
	@$(call KCONFIG,$(B)/ours-$*,$*,$*)
$(B)/stock-%/obj/.config: $(B)/ours-%/obj/.config $(B)/stock/src.stamp
	@mkdir -p $(@D) && ln -sfn ../stock/src $(B)/stock-$*/src
	@$(call STOCKCONFIG,$<,$@)
	@$(call KMAKE,$(B)/stock-$*,$*) olddefconfig
$(B)/sysroot-%.stamp:
	scripts/pvm/sysroot $* $(B)/sysroot-$*
	touch $@

$(addprefix kernel-,$(ARCHES)): kernel-%: $(B)/ours-%/obj/.config $(B)/ours/src.stamp
	$(call KIMAGE,$(B)/ours-$*,$*) $(IMAGE_$*)
$(addprefix stock-,$(ARCHES)): stock-%: $(B)/stock-%/obj/.config
	$(call KIMAGE,$(B)/stock-$*,$*) $(IMAGE_$*)
$(addprefix selftests-,$(ARCHES)): selftests-%: $(B)/ours-%/obj/.config \
		$(B)/ours/src.stamp $(B)/sysroot-%.stamp
	$(call KMAKE,$(B)/ours-$*,$*) headers
	mkdir -p $(B)/selftests-$*/process_vm
	$(MAKE) -s -C $(ST)/process_vm OUTPUT=$(B)/selftests-$*/process_vm \
		CC="$(TCC_$*)" CAN_BUILD_M32= \
		LDFLAGS="-static -L$(B)/sysroot-$*/usr/lib/$(TRIPLET_$*)" \
		KHDR_INCLUDES="-isystem $(B)/ours-$*/obj/usr/include \
			-I$(B)/sysroot-$*/usr/include"
$(addprefix check-,$(ARCHES)): check-%: kernel-% stock-% selftests-%
	scripts/pvm/check --arch $*; $(call SUMMARY,check-$*) $$?
check-arches: $(addprefix check-,$(ARCHES))

kernel: $(B)/ours/obj/.config $(B)/ours/src.stamp
	$(call KIMAGE,$(B)/ours) bzImage
stock: $(B)/stock/obj/.config
	$(call KIMAGE,$(B)/stock) bzImage
debug: $(B)/debug/obj/.config $(B)/ours/src.stamp
	$(call KIMAGE,$(B)/debug) bzImage
kernels: kernel stock

headers: kernel
	$(call KMAKE,$(B)/ours) headers

# Our suite, and the in-tree users of process_vm_readv that must keep
# passing on our kernel.
ST := $(B)/ours/src/tools/testing/selftests
selftests: headers
	mkdir -p $(B)/selftests/process_vm $(B)/selftests/mm $(B)/selftests/x86
	$(MAKE) -s -C $(ST)/process_vm OUTPUT=$(B)/selftests/process_vm \
		KHDR_INCLUDES="-isystem $(B)/ours/obj/usr/include"
	$(CC) -Wall -O2 -isystem $(B)/ours/obj/usr/include -o $(B)/selftests/mm/memfd_secret \
		$(ST)/mm/memfd_secret.c -lcap
	$(MAKE) -s -C $(ST)/x86 OUTPUT=$(B)/selftests/x86 \
		$(B)/selftests/x86/test_vsyscall_64
	$(PVMH) tests

# The memory-handle library, its test and demo, from this repository.
pvm_handle: $(B)/pristine.stamp
	$(PVMH) all tests demo

tools: tree $(B)/tools/insnprof.so
	$(MAKE) -s -C $(B)/ours/src/tools/process_vm OUTPUT=$(B)/tools
	$(PVMH) all demo

# The QEMU plugin that splits an -icount measurement by kernel function.
$(B)/tools/insnprof.so: scripts/pvm/insnprof.c scripts/pvm/qemu-plugin-v1.h
	mkdir -p $(@D)
	$(CC) -O2 -Wall -Wextra -Wno-unused-parameter -shared -fPIC -o $@ $<

run: kernel tools
	$(VM) --kernel ours -- scripts/pvm/demo $(B)/tools; $(call SUMMARY,run) $$?

# Debian's liburing source with the liburing patch (patches/liburing), and
# the patch's test.
liburing: $(B)/liburing/ktap/liburing_process_vm
$(B)/liburing/ktap/liburing_process_vm: $(wildcard patches/liburing/*.patch) scripts/pvm/liburing
	scripts/pvm/liburing $(B)/liburing

check: kernels debug selftests liburing
	scripts/pvm/check; $(call SUMMARY,check) $$?

# The command line of every tool and script; builds the tools itself.
tools-test:
	scripts/pvm/tools-test

stress: debug selftests
	scripts/pvm/stress --full

# scripts/pvm/mutants, one by one, in build/mutate; the debug-kernel stress
# runs for the mutants that need it if `make debug` was run.
mutate: kernel selftests
	scripts/pvm/mutate $(if $(QUICK),--quick) $(MUTANTS)

# KUnit as upstream runs it: a UML kernel with only the .kunitconfig.
kunit: tree
	cd $(B)/ours/src && tools/testing/kunit/kunit.py run \
		--kunitconfig=mm/tests/.kunitconfig --build_dir=$(B)/kunit --jobs=$(JOBS)

bench: kernels tools
	scripts/pvm/bench $(if $(QUICK),--quick); $(call SUMMARY,bench) $$?

# Only tools: it boots the stock and ours kernels as they are, built or not
# (vm-run fails without an image).
calibrate: tools
	scripts/pvm/calibrate $(if $(QUICK),--quick)

# Unchanged MPI stacks over CMA on the host kernel, stock and ours, each
# run's CMA calls counted (out/interop/summary.md).
interop: kernels
	scripts/pvm/interop; $(call SUMMARY,interop) $$?

# Export branch pvm of build/ours/src to patches/vN (NEW=1: vN+1), then
# check it as make check does.
patches: tree
	scripts/pvm/series export $(B)/ours/src $(if $(NEW),--new-version) $(OVERLAY)
	$(MAKE) -s series-verify

series-verify: tree kernel
	@echo 'series: checkpatch, the series against this repository, then a kernel build at every commit'
	scripts/pvm/series verify $(B)/ours/src $(OVERLAY)

results:
	scripts/pvm/results

# The kernel base gives Documentation/conf.py, its Sphinx extensions and
# scripts/kernel-doc.
docs: $(B)/pristine.stamp
	scripts/pvm/docs

# out/ holds the reports (bench, interop, mutate: hours to remake): only
# clean-out and distclean remove it.
clean:
	rm -rf $(B)/ours/obj $(B)/stock/obj $(B)/debug $(B)/selftests $(B)/tools-test \
		$(foreach a,$(ARCHES),$(B)/ours-$(a) $(B)/stock-$(a) $(B)/selftests-$(a))

clean-out:
	rm -rf out

distclean:
	rm -rf $(B) out
