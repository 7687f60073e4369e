/*
 * scratch.c - per-guest scratch directories.
 *
 * The directory's contents are the guest's: symlinks, mode-000 directories,
 * deep trees. Root MUST NOT walk them: removal of a non-empty directory runs
 * in a child that has dropped to the guest's uid, so any trick the guest
 * planted only ever acts with the guest's own rights.
 *
 * An empty directory is not deleted but parked, root-only, under
 * ISO_SCRATCH_DIR/.spare/<uid> and renamed back for the next guest of the
 * same leased uid (its mode and ACLs reset): on ext4 a mkdir costs ~150 us
 * of inode allocation per guest, a rename ~10 us. Nothing the guest wrote is
 * kept: a directory with anything in it is removed.
 */
#include "config.h"

#define _XOPEN_SOURCE_EXTENDED 1
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "creds.h"
#include "scratch.h"
#include "util.h"

#define SPARE_DIR ISO_SCRATCH_DIR "/.spare"

static void scratch_path(uid_t uid, char *path, size_t size)
{
	snprintf(path, size, "%s/%u", ISO_SCRATCH_DIR, (unsigned)uid);
}

static void spare_path(uid_t uid, char *path, size_t size)
{
	snprintf(path, size, "%s/%u", SPARE_DIR, (unsigned)uid);
}

int scratch_prepare(char *why, size_t n)
{
	struct stat st;

	if (mkdir(SPARE_DIR, 0700) < 0 && errno != EEXIST)
		return iso_why_errno(why, n, "mkdir %s", SPARE_DIR);
	if (lstat(SPARE_DIR, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & 077))
		return iso_why(why, n, EPERM, "%s must be a directory owned by root, mode 0700",
			       SPARE_DIR);
	return 0;
}

/* Only "." and ".." in it? Never follows a link. */
static int dir_is_empty(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;
	struct dirent *e;
	int empty = 1;

	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while (empty && (e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			empty = 0;
	closedir(d);
	return empty;
}

/* Take the parked directory back, as new: owner, mode, no ACL. */
static int reuse_spare(uid_t uid, const char *path)
{
	char spare[ISO_SCRATCH_PATH_MAX + 16];

	spare_path(uid, spare, sizeof(spare));
	if (rename(spare, path) < 0)
		return -errno;
	if (lchown(path, uid, uid) < 0 || chmod(path, 0700) < 0 ||
	    ((removexattr(path, "system.posix_acl_access") < 0 ||
	      removexattr(path, "system.posix_acl_default") < 0) &&
	     errno != ENODATA && errno != EOPNOTSUPP)) {
		int err = errno;
		(void)rmdir(path);
		return -err;
	}
	return 0;
}

static int open_up(const char *path, const struct stat *st, int type,
		   struct FTW *ftw)
{
	/* Pre-order: make every directory readable again before it is
	 * entered, so a guest's chmod 000 cannot block the removal. */
	if (type == FTW_D || type == FTW_DNR)
		(void)chmod(path, 0700);
	return 0;
}

static int remove_one(const char *path, const struct stat *st, int type,
		      struct FTW *ftw)
{
	(void)remove(path);
	return 0;
}

/* As the guest uid: never root inside the guest's tree. */
static void remove_tree_as(uid_t uid, const char *path)
{
	pid_t pid = fork();

	if (pid == 0) {
		if (creds_drop(uid, (char[64]){ 0 }, 64) < 0)
			_exit(1);
		(void)chmod(path, 0700);
		(void)nftw(path, open_up, 16, FTW_PHYS | FTW_MOUNT);
		(void)nftw(path, remove_one, 16, FTW_PHYS | FTW_MOUNT | FTW_DEPTH);
		_exit(0);
	}
	if (pid > 0)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
}

static void remove_dir(uid_t uid, const char *path)
{
	/* The common case, an empty directory, costs one syscall. */
	if (rmdir(path) == 0 || errno == ENOENT)
		return;
	remove_tree_as(uid, path);
	(void)rmdir(path);
}

int scratch_create(uid_t uid, char *path, size_t path_size, char *why,
		   size_t n)
{
	int rc;

	scratch_path(uid, path, path_size);
	if (reuse_spare(uid, path) == 0)
		return 0;
	if (mkdir(path, 0700) < 0) {
		if (errno != EEXIST)
			return iso_why_errno(why, n, "mkdir %s", path);
		/* Left by a helper that died: start clean. */
		remove_dir(uid, path);
		if (mkdir(path, 0700) < 0)
			return iso_why_errno(why, n, "mkdir %s", path);
	}
	/* lchown: the directory was just made by root in a root-owned
	 * parent, but never follow a link in a root-run chown. */
	if (lchown(path, uid, uid) < 0) {
		rc = iso_why_errno(why, n, "chown %s", path);
		(void)rmdir(path);
		return rc;
	}
	return 0;
}

void scratch_remove(uid_t uid, int keep, unsigned id)
{
	char path[ISO_SCRATCH_PATH_MAX];

	scratch_path(uid, path, sizeof(path));
	if (keep) {
		char kept[ISO_SCRATCH_PATH_MAX + 32];
		snprintf(kept, sizeof(kept), "%s.kept.%lld.%u", path,
			 (long long)time(NULL), id);
		if (rename(path, kept) == 0)
			return;
	}
	if (dir_is_empty(path)) {
		char spare[ISO_SCRATCH_PATH_MAX + 16];
		spare_path(uid, spare, sizeof(spare));
		if (rename(path, spare) == 0)
			return;
	}
	remove_dir(uid, path);
}

void scratch_release(uid_t uid)
{
	char spare[ISO_SCRATCH_PATH_MAX + 16];

	spare_path(uid, spare, sizeof(spare));
	(void)rmdir(spare);
}
