// SPDX-License-Identifier: GPL-2.0
/*
 * Dirtying that survives writeback.  process_vm_writev(2) pins the target's
 * page, copies into it through a kernel mapping and unpins it.  If the file
 * page is written back and cleaned while the copy is in flight, only
 * marking it dirty after the copy keeps the new bytes: dirtied before (or
 * not at all), the page stays clean, is dropped, and the file keeps the old
 * bytes.
 *
 * The file lives on ext2 on a loop device, in a mount namespace of the test.
 * The local buffer of the copy is a missing userfaultfd page, so the copy
 * stops with the remote page pinned; the handler thread then fsync()s the
 * file (writeback cleans the pinned page) and only then supplies the page.
 * After the call the target unmaps the file, the file is fsync()ed, the
 * file system unmounted, the caches dropped and the file read back from the
 * image: it must hold the new bytes.  Where /proc/kpageflags is readable the
 * page must also be clean after the handler's fsync() and dirty after the
 * call, and a page must be pinned while the handler runs.
 *
 * The same through PROCESS_VM_NOWAIT (the target page is faulted in
 * writably first) and the io_uring op, inline and with IOSQE_ASYNC; and the
 * read direction, where the local buffer is the file page (written through
 * the caller's page tables after the handler's writeback).
 *
 * Needs root, loop devices, ext2 and mkfs.ext2; skips otherwise.
 * PVM_WB_SELFTEST_FAKE=1 checks the checker: before the final read the
 * file's block in the image is overwritten with the old bytes, as a lost
 * dirtying would leave it, and every test must fail.
 */
#define _GNU_SOURCE
#include "process_vm_util.h"

#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <linux/kernel-page-flags.h>
#include <linux/loop.h>
#include <linux/userfaultfd.h>

#include "../../../process_vm/pvm_uring.h"
#include "../kselftest_harness.h"


#define SEED_OLD	0x0a0a	/* the file before the call */
#define SEED_NEW	0x5b5b	/* what the call copies */
#define IMG_MB		16
#define WAIT_MS		10000

enum how { SYSCALL, NOWAIT, URING, URING_ASYNC };

static const char *const how_name[] = {
	"syscall", "PROCESS_VM_NOWAIT", "io_uring", "io_uring IOSQE_ASYNC",
};

static size_t psz;

/* ---- file system ------------------------------------------------------ */

static int run_mkfs(const char *img)
{
	static const char *const paths[] = {
		"mkfs.ext2", "/sbin/mkfs.ext2", "/usr/sbin/mkfs.ext2",
	};
	int status;
	unsigned int i;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		for (i = 0; i < ARRAY_SIZE(paths); i++)
			execlp(paths[i], paths[i], "-q", "-F", img, NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/*
 * Attach @img to a free loop device, detached again when @*loopfd (which
 * this returns) is closed and nothing else uses it.  The device path goes
 * to @dev.  0 or -errno.
 */
static int loop_attach(const char *img, char *dev, size_t len, int *loopfd)
{
	struct loop_config cfg;
	int ctl, nr, fd, img_fd, tries, wait, err = -EBUSY;

	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		return -errno;
	img_fd = open(img, O_RDWR | O_CLOEXEC);
	if (img_fd < 0) {
		err = -errno;
		goto out_ctl;
	}
	for (tries = 0; tries < 20 && err == -EBUSY; tries++) {
		nr = ioctl(ctl, LOOP_CTL_GET_FREE);
		if (nr < 0) {
			err = -errno;
			break;
		}
		snprintf(dev, len, "/dev/loop%d", nr);
		/* devtmpfs creates the node; give it a moment */
		for (wait = 0; (fd = open(dev, O_RDWR | O_CLOEXEC)) < 0 &&
		     errno == ENOENT && wait < 100; wait++)
			usleep(10000);
		if (fd < 0) {
			err = -errno;
			break;
		}
		memset(&cfg, 0, sizeof(cfg));
		cfg.fd = img_fd;
		cfg.info.lo_flags = LO_FLAGS_AUTOCLEAR;
		err = ioctl(fd, LOOP_CONFIGURE, &cfg) ? -errno : 0;
		if (err == -EINVAL || err == -ENOTTY) {
			/* before 5.8 */
			err = ioctl(fd, LOOP_SET_FD, img_fd) ? -errno : 0;
			if (!err) {
				struct loop_info64 info = {
					.lo_flags = LO_FLAGS_AUTOCLEAR,
				};

				ioctl(fd, LOOP_SET_STATUS64, &info);
			}
		}
		if (err)
			close(fd);
		else
			*loopfd = fd;
	}
	close(img_fd);
out_ctl:
	close(ctl);
	return err;
}

/* ---- page state ------------------------------------------------------- */

/* /proc/kpageflags of the page at @addr in @pid (0: self); or -errno */
static int64_t page_flags(pid_t pid, unsigned long addr)
{
	char path[64];
	uint64_t ent, flags;
	int fd;
	ssize_t n;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	else
		snprintf(path, sizeof(path), "/proc/self/pagemap");
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pread(fd, &ent, sizeof(ent), addr / psz * sizeof(ent));
	close(fd);
	if (n != sizeof(ent))
		return -EIO;
	/* not present, or the pfn is hidden from us */
	if (!(ent >> 63) || !(ent & ((1ULL << 55) - 1)))
		return -ENOENT;
	fd = open("/proc/kpageflags", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = pread(fd, &flags, sizeof(flags),
		  (ent & ((1ULL << 55) - 1)) * sizeof(flags));
	close(fd);
	return n == sizeof(flags) ? (int64_t)(flags & INT64_MAX) : -EIO;
}

static bool flags_dirty(int64_t f)
{
	return f >= 0 && (f & (1ULL << KPF_DIRTY));
}

/* ---- the userfaultfd handler ------------------------------------------ */

struct handler {
	int uffd;
	int file_fd;		/* fsync()ed before the page is supplied */
	pid_t page_pid;		/* where the file page is mapped (0: here) */
	unsigned long page_addr;
	pthread_t th;
	bool started;
	int stop;		/* atomic */
	/* results */
	int faults;
	int fsync_err;
	int64_t flags_after_fsync;
	long pins;		/* pins held while the copy waits */
	bool pins_known;
	int copy_err;
};

static void *handler_fn(void *arg)
{
	struct handler *h = arg;
	uint8_t *page = pvm_map_anon(psz);
	struct uffd_msg msg;
	int ret;

	if (!page) {
		h->copy_err = ENOMEM;
		return NULL;
	}
	pvm_fill(page, psz, SEED_NEW);
	while (!__atomic_load_n(&h->stop, __ATOMIC_ACQUIRE)) {
		/* wake up now and then to see whether to stop */
		if (pvm_uffd_next_fault(h->uffd, 100, &msg))
			continue;
		h->faults++;
		/* the copy is stalled here with the remote page pinned */
		h->pins_known = pvm_pins_held(&h->pins);
		h->fsync_err = fsync(h->file_fd) ? errno : 0;
		h->flags_after_fsync = page_flags(h->page_pid, h->page_addr);
		ret = pvm_uffd_copy(h->uffd,
				    msg.arg.pagefault.address & ~(psz - 1),
				    page, psz);
		if (ret)
			h->copy_err = -ret;
	}
	munmap(page, psz);
	return NULL;
}

/*
 * A missing page registered with a new userfaultfd, kernel faults
 * included (no UFFD_USER_MODE_ONLY: the copy faults in the kernel).
 * Its address, or NULL with errno set.
 */
static void *uffd_page(int *uffd)
{
	void *p = pvm_map_anon(psz);

	*uffd = -1;
	if (!p)
		return NULL;
	*uffd = pvm_uffd_register(p, psz, 0, O_CLOEXEC | O_NONBLOCK);
	if (*uffd < 0) {
		munmap(p, psz);
		errno = -*uffd;
		*uffd = -1;
		return NULL;
	}
	return p;
}

/* ---- targets ---------------------------------------------------------- */

/* Map file @fd (inherited) shared: the address, or -errno */
static long cmd_map_file(struct pvm_target *t, unsigned long fd,
			 unsigned long len, unsigned long c)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	return p == MAP_FAILED ? -errno : (long)p;
}

/* Write the byte at @addr with the value it has: a writable, dirty pte */
static long cmd_touch(struct pvm_target *t, unsigned long addr,
		      unsigned long b, unsigned long c)
{
	uint8_t *p = (void *)addr;

	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED),
			 __ATOMIC_RELAXED);
	return 0;
}

static long setup_target(struct pvm_target *t, unsigned long a,
			 unsigned long b, unsigned long c)
{
	return 0;
}

/* ---- fixture ---------------------------------------------------------- */

FIXTURE(wb) {
	char dir[64], img[96], mnt[96], file[128], dev[32];
	int loopfd, fd;
	bool mounted, uring_up;
	struct io_uring ring;
	struct pvm_target t;
	struct handler h;
	uint8_t *local;		/* the userfaultfd page */
	uint8_t *fmap;		/* the file page here (read direction) */
	unsigned long remote;	/* the target's buffer */
};

FIXTURE_VARIANT(wb) {
	bool write;
	enum how how;
};

FIXTURE_VARIANT_ADD(wb, write) {
	.write = true,
	.how = SYSCALL,
};

FIXTURE_VARIANT_ADD(wb, write_nowait) {
	.write = true,
	.how = NOWAIT,
};

FIXTURE_VARIANT_ADD(wb, write_uring) {
	.write = true,
	.how = URING,
};

FIXTURE_VARIANT_ADD(wb, write_uring_async) {
	.write = true,
	.how = URING_ASYNC,
};

FIXTURE_VARIANT_ADD(wb, read) {
	.write = false,
	.how = SYSCALL,
};

FIXTURE_VARIANT_ADD(wb, read_nowait) {
	.write = false,
	.how = NOWAIT,
};

FIXTURE_VARIANT_ADD(wb, read_uring) {
	.write = false,
	.how = URING,
};

FIXTURE_VARIANT_ADD(wb, read_uring_async) {
	.write = false,
	.how = URING_ASYNC,
};

static void wb_cleanup(FIXTURE_DATA(wb) *self)
{
	if (self->h.started) {
		__atomic_store_n(&self->h.stop, 1, __ATOMIC_RELEASE);
		pthread_join(self->h.th, NULL);
		self->h.started = false;
	}
	if (self->h.uffd >= 0) {
		close(self->h.uffd);
		self->h.uffd = -1;
	}
	if (self->local) {
		munmap(self->local, psz);
		self->local = NULL;
	}
	pvm_target_kill(&self->t);
	if (self->uring_up) {
		io_uring_queue_exit(&self->ring);
		self->uring_up = false;
	}
	if (self->fmap) {
		munmap(self->fmap, psz);
		self->fmap = NULL;
	}
	if (self->fd >= 0) {
		close(self->fd);
		self->fd = -1;
	}
	if (self->mounted && !umount(self->mnt))
		self->mounted = false;
	/* autoclear: the device detaches once unmounted and closed */
	if (self->loopfd >= 0) {
		close(self->loopfd);
		self->loopfd = -1;
	}
	if (self->img[0] && !self->mounted) {
		unlink(self->img);
		rmdir(self->mnt);
		rmdir(self->dir);
		self->img[0] = 0;
	}
}

static bool flag_supported(unsigned long flag)
{
	static char src = 'x';
	char dst = 0;
	struct iovec l = { .iov_base = &dst, .iov_len = 1 };
	struct iovec r = { .iov_base = &src, .iov_len = 1 };

	return !(pvm_readv(getpid(), &l, 1, &r, 1, flag) < 0 &&
		 errno == EINVAL);
}

FIXTURE_SETUP(wb)
{
	const char *skip = NULL;
	char why[160];
	int ret, fd;

	psz = PVM_PAGE;
	self->loopfd = -1;
	self->fd = -1;
	self->t.pid = -1;
	self->h.uffd = -1;
	if (geteuid())
		SKIP(return, "needs root for loop devices and mounts");
	if (variant->how == NOWAIT && !flag_supported(PROCESS_VM_NOWAIT))
		SKIP(return, "no PROCESS_VM_NOWAIT on this kernel");
	if (variant->how == URING || variant->how == URING_ASYNC) {
		ASSERT_EQ(0, io_uring_queue_init(4, &self->ring, 0));
		self->uring_up = true;
		if (!pvm_uring_supported(&self->ring)) {
			wb_cleanup(self);
			SKIP(return, "no io_uring PROCESS_VM_READV/WRITEV (ops %d/%d)",
			     PVM_IORING_OP_READV, PVM_IORING_OP_WRITEV);
		}
	}
	/* mounts vanish with the test, whatever happens to it */
	if (!unshare(CLONE_NEWNS))
		mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);

	snprintf(self->dir, sizeof(self->dir), "/tmp/pvm-wb.XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
	snprintf(self->img, sizeof(self->img), "%s/img", self->dir);
	snprintf(self->mnt, sizeof(self->mnt), "%s/mnt", self->dir);
	snprintf(self->file, sizeof(self->file), "%s/file", self->mnt);
	ASSERT_EQ(0, mkdir(self->mnt, 0700));
	fd = open(self->img, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	ASSERT_LE(0, fd);
	ret = ftruncate(fd, IMG_MB << 20);
	close(fd);
	ASSERT_EQ(0, ret);

	ret = run_mkfs(self->img);
	if (ret == 127) {
		skip = "mkfs.ext2 not found (e2fsprogs)";
	} else if (ret) {
		skip = "mkfs.ext2 failed";
	} else {
		ret = loop_attach(self->img, self->dev, sizeof(self->dev),
				  &self->loopfd);
		if (ret) {
			snprintf(why, sizeof(why), "no loop device: %s",
				 strerror(-ret));
			skip = why;
		} else if (mount(self->dev, self->mnt, "ext2", 0, NULL)) {
			snprintf(why, sizeof(why), "mount ext2 on %s: %s",
				 self->dev, strerror(errno));
			skip = why;
		} else {
			self->mounted = true;
		}
	}
	if (skip) {
		wb_cleanup(self);
		SKIP(return, "%s", skip);
	}
}

FIXTURE_TEARDOWN(wb)
{
	wb_cleanup(self);
	EXPECT_FALSE(self->mounted) TH_LOG("%s still mounted", self->mnt);
}

/* ---- the test --------------------------------------------------------- */

/* One request through the ring: its result, or a pvm_ring_failure */
static long uring_rw(FIXTURE_DATA(wb) *self, int pidfd, bool write,
		     const struct iovec *l, unsigned int nl,
		     const struct iovec *r, unsigned int nr,
		     unsigned int sqe_flags)
{
	struct __kernel_timespec ts = { .tv_sec = WAIT_MS / 1000 };
	struct io_uring_sqe *sqe = io_uring_get_sqe(&self->ring);
	struct io_uring_cqe *cqe;
	long res;

	if (!sqe)
		return PVM_RING_NO_SQE;
	if (write)
		pvm_uring_prep_writev(sqe, pidfd, l, nl, r, nr, 0);
	else
		pvm_uring_prep_readv(sqe, pidfd, l, nl, r, nr, 0);
	sqe->flags |= sqe_flags;
	if (io_uring_submit(&self->ring) != 1)
		return PVM_RING_NOT_SUBMITTED;
	if (io_uring_wait_cqe_timeout(&self->ring, &cqe, &ts))
		return PVM_RING_NO_CQE;
	res = cqe->res;
	io_uring_cqe_seen(&self->ring, cqe);
	return res;
}

/*
 * Fake a lost dirtying for PVM_WB_SELFTEST_FAKE: put the old bytes back
 * wherever the image holds the new ones, sector by sector (the file's
 * blocks need not be contiguous).  The number of sectors replaced.
 */
#define SECTOR		512
static int fake_lost_dirtying(const char *img)
{
	uint8_t *old = malloc(psz), *new = malloc(psz), buf[SECTOR];
	int fd = open(img, O_RDWR | O_CLOEXEC), n = 0;
	size_t k;
	off_t off;

	if (old && new) {
		pvm_fill(old, psz, SEED_OLD);
		pvm_fill(new, psz, SEED_NEW);
	}
	for (off = 0; fd >= 0 && old && new &&
	     pread(fd, buf, SECTOR, off) == SECTOR; off += SECTOR)
		for (k = 0; k < psz; k += SECTOR)
			if (!memcmp(buf, new + k, SECTOR)) {
				n += pwrite(fd, old + k, SECTOR, off) == SECTOR;
				break;
			}
	if (fd >= 0)
		close(fd);
	free(old);
	free(new);
	return n;
}

TEST_F_TIMEOUT(wb, survives_writeback, 120)
{
	bool write = variant->write;
	enum how how = variant->how;
	uint8_t *check = pvm_map_anon(psz);
	struct iovec l[2], r;
	int64_t f = -ENOENT;
	long ret, want, pins0;
	bool pins0_known;
	int i, pidfd = -1;
	pid_t page_pid;
	const char *fake = getenv("PVM_WB_SELFTEST_FAKE");

	ASSERT_NE(NULL, check);
	/* the file: one page of old bytes, on disk */
	self->fd = open(self->file, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	ASSERT_LE(0, self->fd);
	pvm_fill(check, psz, SEED_OLD);
	ASSERT_EQ(psz, pwrite(self->fd, check, psz, 0));
	ASSERT_EQ(0, fsync(self->fd));

	ASSERT_EQ(0, pvm_target_start(&self->t, setup_target, 0, 0, 0));
	if (how == URING || how == URING_ASYNC) {
		pidfd = syscall(__NR_pidfd_open, self->t.pid, 0);
		ASSERT_LE(0, pidfd);
	}
	self->local = uffd_page(&self->h.uffd);
	if (!self->local && (pvm_syscall_missing(errno) || errno == ENOENT))
		SKIP(return, "no userfaultfd");
	ASSERT_NE(NULL, self->local) TH_LOG("userfaultfd: %s",
					    strerror(errno));

	if (write) {
		/* the target maps the file and dirties it: a writable pte */
		self->remote = pvm_target_call(&self->t, cmd_map_file,
					       self->fd, psz, 0);
		ASSERT_FALSE(pvm_is_err(self->remote));
		ASSERT_EQ(0, pvm_target_call(&self->t, cmd_touch,
					     self->remote, 0, 0));
		l[0] = (struct iovec){ self->local, psz };
		r = (struct iovec){ (void *)self->remote, psz };
		page_pid = self->t.pid;
		want = psz;
	} else {
		/* the target's anonymous buffer holds the new bytes */
		self->remote = pvm_target_call(&self->t, pvm_cmd_mmap,
					       2 * psz, PROT_READ | PROT_WRITE,
					       MAP_PRIVATE);
		ASSERT_FALSE(pvm_is_err(self->remote));
		for (i = 0; i < 2; i++)
			ASSERT_EQ(0, pvm_target_call(&self->t, pvm_cmd_fill,
						     self->remote + i * psz,
						     psz, SEED_NEW));
		/* here: the file page, clean after the fsync() above */
		self->fmap = mmap(NULL, psz, PROT_READ | PROT_WRITE,
				  MAP_SHARED, self->fd, 0);
		ASSERT_NE(MAP_FAILED, self->fmap);
		ASSERT_EQ(-1, pvm_check(self->fmap, psz, SEED_OLD));
		/* the userfaultfd page first: the copy stalls before the file */
		l[0] = (struct iovec){ self->local, psz };
		l[1] = (struct iovec){ self->fmap, psz };
		r = (struct iovec){ (void *)self->remote, 2 * psz };
		page_pid = 0;
		want = 2 * psz;
	}

	self->h.file_fd = self->fd;
	self->h.page_pid = page_pid;
	self->h.page_addr = write ? self->remote : (unsigned long)self->fmap;
	self->h.flags_after_fsync = -ENOENT;
	ASSERT_EQ(0, pthread_create(&self->h.th, NULL, handler_fn, &self->h));
	self->h.started = true;

	pins0_known = pvm_pins_held(&pins0);
	switch (how) {
	case SYSCALL:
		ret = pvm_res(pvm_rw(write, self->t.pid, l, write ? 1 : 2,
				     &r, 1));
		break;
	case NOWAIT:
		ret = pvm_res(pvm_rwf(write, self->t.pid, l, write ? 1 : 2,
				      &r, 1, PROCESS_VM_NOWAIT));
		break;
	default:
		ret = uring_rw(self, pidfd, write, l, write ? 1 : 2, &r, 1,
			       how == URING_ASYNC ? IOSQE_ASYNC : 0);
		break;
	}
	ASSERT_EQ(want, ret) TH_LOG("%s %s", how_name[how],
				    write ? "write" : "read");
	EXPECT_EQ(1, self->h.faults);
	EXPECT_EQ(0, self->h.fsync_err);
	EXPECT_EQ(0, self->h.copy_err);
	EXPECT_EQ(-1, pvm_check(self->local, psz, SEED_NEW));

	/*
	 * Where the page flags can be read: writeback cleaned the page while
	 * the copy was stalled, and the copy left it dirty.  NOWAIT may leave
	 * the dirtying to a workqueue for a moment.
	 */
	if (pins0_known && self->h.pins_known)
		EXPECT_LE(pins0 + 1, self->h.pins)
			TH_LOG("no page pinned while the copy waited");
	if (self->h.flags_after_fsync >= 0) {
		EXPECT_FALSE(flags_dirty(self->h.flags_after_fsync))
			TH_LOG("fsync() did not clean the page: no writeback under the copy");
		for (i = 0; i < 100; i++) {
			f = page_flags(page_pid, self->h.page_addr);
			if (flags_dirty(f))
				break;
			usleep(10000);
		}
		EXPECT_TRUE(flags_dirty(f))
			TH_LOG("the page is clean after the copy (flags %#llx)",
			       (unsigned long long)f);
		TH_LOG("%s: page %s after fsync() in the handler, %s after the call",
		       how_name[how],
		       flags_dirty(self->h.flags_after_fsync) ? "dirty" : "clean",
		       flags_dirty(f) ? "dirty" : "clean");
		TH_LOG("page pins held while the copy waited: %+ld",
		       self->h.pins - pins0);
	} else {
		TH_LOG("page flags not readable (%s): data check only",
		       strerror((int)-self->h.flags_after_fsync));
	}

	/* the page goes away; only what is on disk is left */
	if (write) {
		ASSERT_EQ(0, pvm_target_call(&self->t, pvm_cmd_munmap,
					     self->remote, psz, 0));
	} else {
		ASSERT_EQ(0, munmap(self->fmap, psz));
	}
	self->fmap = NULL;
	/* and the target with its copy of the file descriptor */
	pvm_target_kill(&self->t);
	ASSERT_EQ(0, fsync(self->fd));
	close(self->fd);
	self->fd = -1;
	ASSERT_EQ(0, umount(self->mnt)) TH_LOG("umount: %s", strerror(errno));
	self->mounted = false;
	if (fake && !strcmp(fake, "1"))
		TH_LOG("PVM_WB_SELFTEST_FAKE: %d sectors reverted, must FAIL",
		       fake_lost_dirtying(self->img));
	sync();
	pvm_write_file("/proc/sys/vm/drop_caches", "3");
	ASSERT_EQ(0, mount(self->dev, self->mnt, "ext2", 0, NULL));
	self->mounted = true;

	self->fd = open(self->file, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, self->fd);
	memset(check, 0, psz);
	ASSERT_EQ(psz, pread(self->fd, check, psz, 0));
	ret = pvm_check(check, psz, SEED_NEW);
	EXPECT_EQ(-1, ret) TH_LOG("the file differs from the new bytes at %ld: %s",
				  ret, pvm_check(check, psz, SEED_OLD) == -1 ?
				  "it holds the old bytes, the dirtying was lost" :
				  "neither old nor new");
	if (pidfd >= 0)
		close(pidfd);
	munmap(check, psz);
}

TEST_HARNESS_MAIN
