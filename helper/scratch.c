/*
 * scratch.c - per-guest scratch directories.
 *
 * The directory's contents are the guest's: symlinks, mode-000 directories,
 * deep trees. Root MUST NOT walk them: removal of a non-empty directory runs
 * in a child that has dropped to the guest's uid, so any trick the guest
 * planted only ever acts with the guest's own rights.
 */
#include "config.h"

#define _XOPEN_SOURCE_EXTENDED 1
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "creds.h"
#include "scratch.h"

static void scratch_path(uid_t uid, char *path, size_t size)
{
	snprintf(path, size, "%s/%u", ISO_SCRATCH_DIR, (unsigned)uid);
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
	scratch_path(uid, path, path_size);
	if (mkdir(path, 0700) < 0) {
		if (errno != EEXIST) {
			snprintf(why, n, "mkdir %s: %s", path, strerror(errno));
			return -errno;
		}
		/* Left by a helper that died: start clean. */
		remove_dir(uid, path);
		if (mkdir(path, 0700) < 0) {
			snprintf(why, n, "mkdir %s: %s", path, strerror(errno));
			return -errno;
		}
	}
	/* lchown: the directory was just made by root in a root-owned
	 * parent, but never follow a link in a root-run chown. */
	if (lchown(path, uid, uid) < 0) {
		snprintf(why, n, "chown %s: %s", path, strerror(errno));
		(void)rmdir(path);
		return -errno;
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
	remove_dir(uid, path);
}
