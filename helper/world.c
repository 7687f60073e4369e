/*
 * world.c - the guest's file system, built rather than inherited.
 *
 *   world_prepare (once per connection, root): a short-lived child in a
 *     private copy of the caller's mount namespace (sharing the helper's
 *     descriptor table, so the namespace's fd lands there) builds, on a
 *     fresh tmpfs: the host's /usr, /etc, /bin, /sbin, /lib*,
 *     /sys/devices/system/cpu (confine_system; symlinks stay symlinks)
 *     read-only; a /dev with six nodes; the rule's read and write paths;
 *     an empty directory for each other directory at the host's root
 *     (where grants find their place); then pivots into it. Every mount
 *     is private.
 *   world_enter (each reaper, root, before the drop): opens the program as
 *     the guest, copies each grant's object from the caller's descriptor,
 *     joins a private copy of the template and mounts its own /proc,
 *     /tmp, /dev/shm, passwd, group and the grants, idmapped.
 *
 * Invariants:
 *  - Nothing mounted here propagates to the host or another guest: the
 *    template is made private before anything is mounted in it, and each
 *    guest's copy is its own (unshare after setns).
 *  - No symbolic link is followed while a mount point is created, so no
 *    directory is ever made outside the tree; nor by root in a host
 *    directory bound in, such as a rule's write path (the policy refuses
 *    rule paths there) or a write grant (a grant's point is made as the
 *    guest).
 *  - The program is opened with the guest's fsuid and fsgid and no
 *    supplementary groups, and a rule's paths with those of the rule's
 *    first pool uid, through no /proc magic link: root never binds in
 *    what a guest could not reach on the host. A grant is the object the
 *    caller opened itself, never a path root resolves, idmapped so that
 *    only the caller's uid and gid map (to the guest's): in it the guest
 *    reaches what the caller would, and anything not the caller's only as
 *    others may. Each is bound with its submounts, so what a mount hides
 *    on the host stays hidden (but for unbindable ones, which the kernel
 *    leaves out).
 *  - The template's root is read-only and never changed per guest: a guest
 *    that needs a new mount point below it gets its own tmpfs there.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/fsuid.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/magic.h>
#include <linux/openat2.h>

#include "confine.h"
#include "util.h"
#include "world.h"

#define RO (MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)
#define RW (MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)

/* A detached tmpfs of 16 KiB (mount points only), its root 0755 and its
 * maker's: the fsuid's, which is also the gid (root's, or the guest's); its
 * fd, or -1. */
static int fresh_tmpfs(void)
{
	int fs = fsopen("tmpfs", FSOPEN_CLOEXEC), mnt = -1;
	char owner[16];

	snprintf(owner, sizeof owner, "%d", setfsuid((uid_t)-1));
	if (fs >= 0 && fsconfig(fs, FSCONFIG_SET_STRING, "size", "16k", 0) == 0 &&
	    fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0755", 0) == 0 &&
	    fsconfig(fs, FSCONFIG_SET_STRING, "uid", owner, 0) == 0 &&
	    fsconfig(fs, FSCONFIG_SET_STRING, "gid", owner, 0) == 0 &&
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) == 0)
		mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	iso_close_fds(&fs, 1);
	return mnt;
}

/* `name` in dir: a directory (0755), or an empty file (0644). */
static int create(int dir, const char *name, int isdir)
{
	return isdir ? mkdirat(dir, name, 0755) : mknodat(dir, name, S_IFREG | 0644, 0);
}

/* A fresh tmpfs over `dir`; its root's fd, or -1. Never over a directory
 * that holds anything, or cannot be read (errno ENOTEMPTY): the tmpfs
 * would hide it, such as a rule's own paths below its may-read one. */
static int cover(int dir)
{
	long buf[128]; /* aligned for struct dirent64 */
	int fd = openat(dir, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC), entries = 0, t;
	ssize_t got = fd < 0 ? -1 : getdents64(fd, buf, sizeof buf);

	for (ssize_t at = 0; at < got; at += ((struct dirent64 *)((char *)buf + at))->d_reclen)
		entries++;
	iso_close_fds(&fd, 1);
	if (got < 0 || entries > 2) {
		errno = ENOTEMPTY;
		return -1;
	}
	t = fresh_tmpfs();
	if (t >= 0 &&
	    move_mount(t, "", dir, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) == 0)
		return t;
	iso_close_fds(&t, 1);
	return -1;
}

/*
 * Open `path` (absolute, in the normal form of iso_path_check(): no empty
 * component) below `dir`, creating what is missing as directories and the
 * last component as a directory or, if !isdir, an empty file. Never
 * follows a symlink. Where dir's own file system refuses (EROFS: the
 * template's tmpfs, read-only once built, with dir its root), a directory
 * of it where something must be created first gets a fresh tmpfs of its
 * own, so the template is never changed; never `dir` itself, which that
 * would hide whole, nor one that holds anything (-ENOTEMPTY). Returns an
 * O_PATH fd or -errno.
 */
static int make_point(int dir, const char *path, int isdir)
{
	char part[ISO_WIRE_PATH_MAX], *p, *end;
	struct stat st, top;
	int fd, next, want_dir, err = 0;

	if (fstat(dir, &top) < 0 || (fd = dup(dir)) < 0)
		return -errno;
	snprintf(part, sizeof part, "%s", path + 1);
	for (p = part; fd >= 0 && *p; p = end) {
		end = strchrnul(p, '/');
		want_dir = isdir || *end == '/';
		if (*end == '/')
			*end++ = '\0';
		next =
		    openat(fd, p, O_PATH | O_NOFOLLOW | O_CLOEXEC | (want_dir ? O_DIRECTORY : 0));
		if (next < 0 && errno == ENOENT) {
			if (create(fd, p, want_dir) < 0 && errno == EROFS && fstat(fd, &st) == 0 &&
			    st.st_dev == top.st_dev && st.st_ino != top.st_ino) {
				next = cover(fd);
				close(fd);
				fd = next;
				if (fd >= 0)
					(void)create(fd, p, want_dir);
			}
			next = fd < 0 ? -1 : openat(fd, p, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		}
		err = errno;
		iso_close_fds(&fd, 1);
		fd = next;
	}
	return fd >= 0 ? fd : -err;
}

/* Attach the detached tree `tree` at `path` below `dir`. Closes tree. */
static int attach(int tree, int dir, const char *path, char *why, size_t n)
{
	struct stat st;
	int point = -1, rc = 0;

	if (fstat(tree, &st) < 0)
		rc = iso_why_errno(why, n, "%s", path);
	else if ((point = make_point(dir, path, S_ISDIR(st.st_mode))) < 0)
		rc = iso_why(why, n, -point, "no mount point for %s in the guest's tree: %s", path,
			     point == -ENOTEMPTY ? "it needs a new directory where the rule's "
						   "own paths are, which that would hide"
						 : strerror(-point));
	else if (move_mount(tree, "", point, "",
			    MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
		rc = iso_why_errno(why, n, "mounting %s", path);
	iso_close_fds(&point, 1);
	close(tree);
	return rc;
}

/* A tmpfs's options: `size` bytes, and as many inodes (which size does not
 * count) as KiB of it. tmpfs reads 0 as unlimited, which only UINT64_MAX
 * ("unlimited") may become: the policy and request_decide() refuse a size
 * of 0. */
static const char *tmpfs_opts(char *buf, size_t len, const char *owner, uint64_t size)
{
	unsigned long long bytes = size == UINT64_MAX ? 0 : size;

	snprintf(buf, len, "%s,size=%llu,nr_inodes=%llu", owner, bytes,
		 bytes ? bytes / 1024 + 64 : 0);
	return buf;
}

/* File-system uid and gid `id` (0: root's again), which with no
 * supplementary groups (caller_identify() dropped them) decide what an
 * open reaches; 0, or -EPERM: setfs*id report no error, so read them back
 * (-1 changes nothing). */
static int fs_ids(uid_t id, char *why, size_t n)
{
	setfsgid(id);
	setfsuid(id);
	if (setfsuid((uid_t)-1) != (int)id || setfsgid((gid_t)-1) != (int)id)
		return iso_why(why, n, EPERM, "setfsuid(%u) did not take", (unsigned)id);
	return 0;
}

/* A detached copy of the host's `path`, opened with the fsuid and fsgid and
 * resolved under `resolve` (RESOLVE_*), with mount attributes `attr`. With
 * its submounts, to which attr applies too: without them the copy would
 * show what they hide on the host, and be writable where one is read-only.
 * Private, as every mount it holds: a copy stays in its source's peer
 * group, and what is later mounted on it (a grant inside a grant) would
 * then propagate to the source, on the host (systemd makes '/' shared). */
static int clone_tree(const char *path, uint64_t resolve, uint64_t attr, char *why, size_t n)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = resolve };
	struct mount_attr a = { .attr_set = attr, .propagation = MS_PRIVATE };
	int fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how), tree, rc = 0;

	if (fd < 0)
		return iso_why_errno(why, n, "%s", path);
	tree =
	    open_tree(fd, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH | AT_RECURSIVE);
	if (tree < 0)
		rc = iso_why_errno(why, n, "open_tree %s", path);
	else if (mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof a) < 0)
		rc = iso_why_errno(why, n, "mount_setattr (Linux 5.12)");
	close(fd);
	if (rc < 0 && tree >= 0)
		close(tree);
	return rc < 0 ? rc : tree;
}

/* `path` of the host at the same place in the tree, opened with the ids
 * `as`: root's (0) for a system path; for a rule's, a guest's, so that a
 * symbolic link swapped in by whoever may write above it (the caller, in
 * its home or a may-write path) leads nowhere a guest could not go. No
 * /proc magic link is followed: CAP_SYS_PTRACE, which setfsuid keeps,
 * would lead through another user's /proc/PID/cwd. */
static int bind_host(int root, const char *path, uid_t as, uint64_t attr, char *why, size_t n)
{
	int tree = fs_ids(as, why, n);

	if (tree == 0)
		tree = clone_tree(path, RESOLVE_NO_MAGICLINKS, attr, why, n);
	(void)fs_ids(0, NULL, 0);
	return tree < 0 ? tree : attach(tree, root, path, why, n);
}

/* A host system path (confine_system): the same symlink, or a read-only
 * copy; nothing where the host has none. */
static int bind_system(int root, const char *path, char *why, size_t n)
{
	char target[256];
	ssize_t len = readlink(path, target, sizeof target - 1);

	if (len > 0) {
		target[len] = '\0';
		return symlinkat(target, root, path + 1) < 0 ? iso_why_errno(why, n, "%s", path)
							     : 0;
	}
	if (errno == ENOENT)
		return 0;
	return bind_host(root, path, 0, RO, why, n);
}

/* The minimal /dev: nodes the guest may use, links into its /proc. */
static int make_dev(int root, char *why, size_t n)
{
	static const struct {
		const char *name;
		unsigned major, minor;
	} nodes[] = {
		{ "null", 1, 3 },   { "zero", 1, 5 },    { "full", 1, 7 },
		{ "random", 1, 8 }, { "urandom", 1, 9 }, { "tty", 5, 0 },
	};
	static const char *const links[][2] = {
		{ "fd", "/proc/self/fd" },
		{ "stdin", "/proc/self/fd/0" },
		{ "stdout", "/proc/self/fd/1" },
		{ "stderr", "/proc/self/fd/2" },
	};
	/* Device nodes work here (no nodev); nothing executes. */
	struct mount_attr ro = { .attr_set = MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOEXEC,
				 .attr_clr = MOUNT_ATTR_NODEV };
	int dev = fresh_tmpfs(), rc = 0;

	if (dev < 0)
		rc = iso_why_errno(why, n, "/dev: tmpfs");
	for (size_t i = 0; rc == 0 && i < COUNT(nodes); i++)
		if (mknodat(dev, nodes[i].name, S_IFCHR | 0666,
			    makedev(nodes[i].major, nodes[i].minor)) < 0)
			rc = iso_why_errno(why, n, "/dev/%s", nodes[i].name);
	for (size_t i = 0; rc == 0 && i < COUNT(links); i++)
		if (symlinkat(links[i][1], dev, links[i][0]) < 0)
			rc = iso_why_errno(why, n, "/dev/%s", links[i][0]);
	if (rc == 0 && mkdirat(dev, "shm", 0755) < 0)
		rc = iso_why_errno(why, n, "/dev/shm");
	if (rc == 0 && mount_setattr(dev, "", AT_EMPTY_PATH, &ro, sizeof ro) < 0)
		rc = iso_why_errno(why, n, "/dev: read-only");
	if (rc < 0 && dev >= 0)
		close(dev);
	return rc < 0 ? rc : attach(dev, root, "/dev", why, n);
}

struct build {
	const struct iso_rule *rule;
	struct iso_world *w;
	int proc; /* the helper's /proc */
	char *why;
	size_t n;
	int rc;
};

/* An empty directory in the tree for each directory at the host's root it
 * lacks (/home, /srv, ...), so that a grant below one finds where to go:
 * a guest's grant under /home gets a tmpfs of its own over /home, while
 * the tree's root, read-only and shared by the connection's guests, is
 * never changed. Names only: what they hold is never bound. */
static int mirror_root(int root, char *why, size_t n)
{
	DIR *host = opendir("/");
	struct dirent *e;
	struct stat st;
	int rc = 0;

	if (host == NULL)
		return iso_why_errno(why, n, "reading /");
	while (rc == 0 && (e = readdir(host)) != NULL)
		if (e->d_name[0] != '.' &&
		    fstatat(dirfd(host), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISDIR(st.st_mode) && mkdirat(root, e->d_name, 0755) < 0 && errno != EEXIST)
			rc = iso_why_errno(why, n, "a mount point for /%s", e->d_name);
	closedir(host);
	return rc;
}

static int build_tree(const struct iso_rule *r, int root, char *why, size_t n)
{
	static const char *const empty[] = { "/proc", "/tmp", "/.iso", NULL };
	int rc = 0, fd;

	for (const char *const *p = confine_system; rc == 0 && *p; p++)
		rc = bind_system(root, *p, why, n);
	if (rc == 0)
		rc = make_dev(root, why, n);
	/* As a guest of the rule: its first pool uid, never an account, is
	 * as good as any (this child's fsuid is its own). */
	for (char **p = r->read; rc == 0 && p && *p; p++)
		rc = bind_host(root, *p, r->pool_first, RO, why, n);
	for (char **p = r->write; rc == 0 && p && *p; p++)
		rc = bind_host(root, *p, r->pool_first, RW, why, n);
	/* Where a guest's own mounts will go, and its grants. */
	for (const char *const *p = empty; rc == 0 && *p; p++)
		if ((fd = make_point(root, *p, 1)) >= 0)
			close(fd);
		else
			rc = iso_why(why, n, -fd, "a mount point for %s: %s", *p, strerror(-fd));
	return rc == 0 ? mirror_root(root, why, n) : rc;
}

static int build(void *arg)
{
	struct build *b = arg;
	struct mount_attr ro = { .attr_set = RO };
	int root = -1, rc = 0;

	umask(0);
	/* A copy of the caller's namespace where it has one of its own (a
	 * unit's, through isospawn.socket), so that its guests see no more
	 * than it does. The helper's /proc names this child whatever /proc
	 * that namespace mounts. */
	if (b->w->caller_mnt >= 0 &&
	    (setns(b->w->caller_mnt, CLONE_NEWNS) < 0 || unshare(CLONE_NEWNS) < 0))
		rc = iso_why_errno(b->why, b->n, "a copy of the caller's mount namespace");
	else if ((b->w->ns_fd = openat(b->proc, "self/ns/mnt", O_RDONLY | O_CLOEXEC)) < 0 ||
		 mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		rc = iso_why_errno(b->why, b->n, "a private mount namespace");
	/* Only mount points: directories, empty files and short symbolic
	 * links, none of which takes a page. */
	else if (mount("tmpfs", ISO_STATE_DIR, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m") <
		     0 ||
		 (root = open(ISO_STATE_DIR, O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
		rc = iso_why_errno(b->why, b->n, "the tree's root");
	if (rc == 0)
		rc = build_tree(b->rule, root, b->why, b->n);
	if (rc == 0 && (fchdir(root) < 0 || syscall(SYS_pivot_root, ".", ".") < 0 ||
			umount2(".", MNT_DETACH) < 0 || chdir("/") < 0))
		rc = iso_why_errno(b->why, b->n, "pivot_root");
	if (rc == 0 && mount_setattr(AT_FDCWD, "/", 0, &ro, sizeof ro) < 0)
		rc = iso_why_errno(b->why, b->n, "the tree's root read-only");
	iso_close_fds(&root, 1);
	b->rc = rc;
	return 0;
}

int world_prepare(struct iso_world *w, const struct iso_rule *rule, const struct iso_caller *caller,
		  char *why, size_t n)
{
	static char stack[64 * 1024];
	struct build b = { rule, w, open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC), why, n, -EIO };
	pid_t pid;

	*w = (struct iso_world){ .ns_fd = -1,
				 .caller_mnt = caller->mnt_ns,
				 .caller_uid = caller->uid,
				 .caller_gid = caller->gid };
#ifdef ISO_BENCH_NO_WORLD
	/* Only in the benchmark's own helper (bench/, never installed):
	 * guests stay in the helper's mount namespace, so that `make bench`
	 * can show what the tree costs. */
	iso_close_fds(&b.proc, 1);
	return 0;
#endif
	snprintf(why, n, "building the guest's tree: the builder died");
	/* Shares memory and descriptors, not the mount namespace; the helper
	 * waits until it is done (CLONE_VFORK). */
	pid = clone(build, stack + sizeof stack,
		    CLONE_VM | CLONE_VFORK | CLONE_FILES | CLONE_NEWNS | SIGCHLD, &b);
	if (pid < 0)
		b.rc = iso_why_errno(why, n, "clone for the guest's tree");
	else
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
	iso_close_fds(&b.proc, 1);
	return b.rc;
}

/*
 * The program, opened as uid with no supplementary groups (caller_identify()
 * dropped them, and made every gid 0, for the whole helper), links followed
 * as a path of the caller's. setfsuid clears only root's file capabilities
 * (CAP_DAC_*, CAP_FOWNER, CAP_CHOWN, ...); of the others CAP_SYS_PTRACE
 * (and CAP_SYS_ADMIN for map_files) would let the /proc magic links
 * (/proc/PID/cwd, root, exe, fd/N) lead where neither the guest nor the
 * caller may go, so none is followed (ELOOP). Nothing else of root's is
 * consulted on the way: the open is O_PATH, and the program is executed,
 * and a script read, as the guest.
 */
static int open_program(const struct iso_plan *plan, uid_t uid, int *prog, char *why, size_t n)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS };
	struct stat st;
	int rc;

	*prog = -1;
	if ((rc = fs_ids(uid, why, n)) < 0)
		return rc;
	*prog = (int)syscall(SYS_openat2, AT_FDCWD, plan->program, &how, sizeof how);
	if (*prog < 0) {
		rc = iso_why_errno(why, n, "open program");
	} else if (fstat(*prog, &st) < 0 || !S_ISREG(st.st_mode)) {
		rc = iso_why(why, n, EACCES, "program is not a regular file");
		close(*prog);
		*prog = -1;
	}
	(void)fs_ids(0, NULL, 0);
	return rc;
}

/*
 * Each grant's object as the caller's descriptor names it (a directory or
 * a regular file: what the caller opened, never a path root resolves),
 * copied with the mounts below it into a detached tree, private: in the
 * caller's mount namespace, where the kernel finds the descriptor's mount
 * (it copies only the current namespace's). The descriptors go.
 */
static int copy_grants(struct iso_plan *plan, int *trees, char *why, size_t n)
{
	struct mount_attr a = { .propagation = MS_PRIVATE };
	struct stat st;
	int rc = 0;

	for (size_t t = 0; t < plan->ngrants; t++) {
		struct iso_grant *g = &plan->grants[t];

		if (rc == 0 &&
		    (fstat(g->fd, &st) < 0 || !(S_ISDIR(st.st_mode) || S_ISREG(st.st_mode))))
			rc = iso_why(why, n, EINVAL, "grant %s: not a directory or a regular file",
				     g->path);
		if (rc == 0 && (trees[t] = open_tree(g->fd, "",
						     OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
							 AT_EMPTY_PATH | AT_RECURSIVE)) < 0)
			rc = iso_why_errno(why, n, "grant %s: copying its mount", g->path);
		if (rc == 0 &&
		    mount_setattr(trees[t], "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof a) < 0)
			rc = iso_why_errno(why, n, "grant %s: mount_setattr (Linux 5.12)", g->path);
		iso_close_fds(&g->fd, 1);
		g->fd = -1;
	}
	return rc;
}

/* Every signal is blocked in a reaper (factory_main): only SIGKILL ends
 * the wait. */
static int idmap_waiter(void *arg)
{
	(void)arg;
	(void)pause();
	return 0;
}

/*
 * A user namespace that maps the caller's uid and gid, as a grant's files
 * hold them, to the guest's `uid` (line "CALLER GUEST 1"), and nothing
 * else: the idmap of every grant, so that the guest reaches a grant as its
 * caller would, what it makes there is the caller's on disk, and any other
 * owner's file is nobody's to it (its bits for others decide). Root writes
 * the maps (only a process privileged over the parent namespace may map
 * ids it does not hold) of a child that waits in the namespace, found in
 * the guest's own /proc, then kills it: the reaper reaps it with the
 * rest. Its descriptor, or -errno.
 */
static int idmap_ns(const struct iso_world *w, uid_t uid, char *why, size_t n)
{
	static char stack[16 * 1024] __attribute__((aligned(16)));
	const char *const maps[] = { "uid_map", "gid_map" };
	unsigned from[] = { (unsigned)w->caller_uid, (unsigned)w->caller_gid };
	char path[48], line[48];
	int ns = -1, fd, rc = 0;
	pid_t pid =
	    clone(idmap_waiter, stack + sizeof stack, CLONE_NEWUSER | CLONE_VM | SIGCHLD, NULL);

	if (pid < 0)
		return iso_why_errno(why, n, "idmap: a user namespace");
	for (size_t i = 0; rc == 0 && i < COUNT(maps); i++) {
		snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, maps[i]);
		snprintf(line, sizeof line, "%u %u 1\n", from[i], (unsigned)uid);
		fd = open(path, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, line, strlen(line)) < 0)
			rc = iso_why_errno(why, n, "idmap: %s", maps[i]);
		iso_close_fds(&fd, 1);
	}
	snprintf(path, sizeof path, "/proc/%d/ns/user", (int)pid);
	if (rc == 0 && (ns = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		rc = iso_why_errno(why, n, "idmap: %s", path);
	(void)kill(pid, SIGKILL);
	return rc < 0 ? rc : ns;
}

/* Idmap each grant's tree (read-only for a read grant). A file system
 * that cannot be idmapped, here or below, refuses the grant naming it. */
static int idmap_grants(const struct iso_world *w, const struct iso_plan *plan, uid_t uid,
			const int *trees, char *why, size_t n)
{
	struct mount_attr a = { .userns_fd = 0 };
	struct statfs fs;
	int ns, rc = 0;

	if (plan->ngrants == 0)
		return 0;
	if ((ns = idmap_ns(w, uid, why, n)) < 0)
		return ns;
	a.userns_fd = (uint64_t)ns;
	for (size_t t = 0; rc == 0 && t < plan->ngrants; t++) {
		a.attr_set = MOUNT_ATTR_IDMAP | (plan->grants[t].write ? RW : RO);
		if (mount_setattr(trees[t], "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof a) == 0)
			continue;
		if (errno == EINVAL && fstatfs(trees[t], &fs) == 0)
			rc = iso_why(why, n, EINVAL,
				     "grant %s: its file system (%s), or one mounted "
				     "below it, cannot be idmapped on this kernel",
				     plan->grants[t].path, iso_fs_name((unsigned long)fs.f_type));
		else
			rc = iso_why_errno(why, n, "grant %s: idmapping it", plan->grants[t].path);
	}
	close(ns);
	return rc;
}

/*
 * /dev/stdout reopens fd 1 through /proc, which checks the object's mode
 * like any open: a pipe is its creator's, 0600. Each pipe of the caller's
 * handed over as 0-2 stays the caller's (the guest could chmod one of its
 * own) and lets others (the guest) have what the guest holds of it: write
 * for a write end, read for a read end, both for both ends. A pipe has no
 * path: only who may trace a holder reaches it, through /proc/PID/fd.
 * Nothing else is changed: a pipe the caller only holds (root's, another
 * user's) is its owner's to open up, and a terminal or a file stays as it
 * is; reopening them is for their mode bits to allow.
 */
static int open_stdio_pipes(const struct iso_plan *plan, uid_t caller, char *why, size_t n)
{
	static const mode_t by_mode[] = {
		[O_RDONLY] = S_IROTH, [O_WRONLY] = S_IWOTH, [O_RDWR] = S_IROTH | S_IWOTH
	};
	mode_t held[3] = { 0, 0, 0 }, mode;
	struct stat st[3];
	struct statfs fs;
	int fl;

	/* A closed descriptor (-1) fails fstatfs(). */
	for (int i = 0; i < 3; i++)
		if (fstatfs(plan->stdio[i], &fs) == 0 && fs.f_type == PIPEFS_MAGIC &&
		    fstat(plan->stdio[i], &st[i]) == 0 && st[i].st_uid == caller &&
		    (fl = fcntl(plan->stdio[i], F_GETFL)) >= 0 && !(fl & O_PATH) &&
		    (fl & O_ACCMODE) <= O_RDWR)
			held[i] = by_mode[fl & O_ACCMODE];
	for (int i = 0; i < 3; i++) {
		mode = 0;
		for (int j = 0; j < 3; j++)
			if (held[i] && held[j] && st[j].st_ino == st[i].st_ino)
				mode |= held[j];
		if (held[i] && fchmod(plan->stdio[i], S_IRUSR | S_IWUSR | mode) < 0)
			return iso_why_errno(why, n, "stdio pipe %d", i);
	}
	return 0;
}

/* The guest's accounts, on a tmpfs of its own at /.iso (0711, and no
 * Landlock rule lets the guest read it), bound over the host's: its own
 * name, home /tmp; root and nobody for the files it sees owned by them.
 * Nothing of the host's accounts. Root's files, 0644. */
static int mount_accounts(uid_t uid, char *why, size_t n)
{
	static const char *const files[] = { "passwd", "group" };
	unsigned u = (unsigned)uid;
	char text[2][256], src[40], etc[16];
	int fd, rc = 0;

	snprintf(text[0], sizeof text[0],
		 "root:x:0:0:root:/root:/usr/sbin/nologin\n"
		 "nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
		 "guest:x:%u:%u:isospawn guest:/tmp:/bin/sh\n",
		 u, u);
	snprintf(text[1], sizeof text[1], "root:x:0:\nnogroup:x:65534:\nguest:x:%u:\n", u);
	if (mount("tmpfs", "/.iso", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0711,size=16k") < 0)
		return iso_why_errno(why, n, "mounting /.iso");
	for (size_t i = 0; rc == 0 && i < COUNT(files); i++) {
		snprintf(src, sizeof src, "/.iso/%u.%s", u, files[i]);
		snprintf(etc, sizeof etc, "/etc/%s", files[i]);
		fd = open(src, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd < 0 || write(fd, text[i], strlen(text[i])) < 0)
			rc = iso_why_errno(why, n, "%s", src);
		else if (mount(src, etc, NULL, MS_BIND, NULL) < 0)
			rc = iso_why_errno(why, n, "mounting %s", src);
		iso_close_fds(&fd, 1);
	}
	return rc;
}

/* The guest's own mounts in its copy of the template: /proc (its PID
 * namespace's processes only); /tmp, its scratch, cwd and home, 0700, and
 * /dev/shm; its accounts. */
static int mount_own(const struct iso_plan *plan, uid_t uid, char *why, size_t n)
{
	char opts[160], ids[48];

	snprintf(ids, sizeof ids, "mode=0700,uid=%u,gid=%u", (unsigned)uid, (unsigned)uid);
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		return iso_why_errno(why, n, "mounting /proc");
	if (mount("tmpfs", "/tmp", "tmpfs", MS_NOSUID | MS_NODEV,
		  tmpfs_opts(opts, sizeof opts, ids, plan->limits[ISO_LIMIT_SCRATCH])) < 0)
		return iso_why_errno(why, n, "mounting /tmp");
	if (mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV,
		  tmpfs_opts(opts, sizeof opts, "mode=1777", plan->limits[ISO_LIMIT_SHM])) < 0)
		return iso_why_errno(why, n, "mounting /dev/shm");
	return mount_accounts(uid, why, n);
}

/* Attach each grant's tree at its path, as the guest: a mount point a
 * grant lacks is made with its ids and rights, so that where the tree
 * shows a host directory (a rule's write path, a write grant) root makes
 * nothing the guest could not. */
static int attach_grants(const struct iso_plan *plan, uid_t uid, const int *trees, char *why,
			 size_t n)
{
	int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC), rc;

	if (root < 0)
		return iso_why_errno(why, n, "/");
	if ((rc = fs_ids(uid, why, n)) == 0)
		for (size_t t = 0; rc == 0 && t < plan->ngrants; t++)
			rc = attach(trees[t], root, plan->grants[t].path, why, n);
	(void)fs_ids(0, NULL, 0);
	close(root);
	return rc;
}

int world_enter(const struct iso_world *w, struct iso_plan *plan, uid_t uid, int *prog,
		enum iso_stage *stage, char *why, size_t n)
{
	int trees[COUNT(plan->grants)];
	char missing[ISO_WIRE_TEXT_MAX];
	mode_t mask = umask(0); /* mount points 0755 whatever the helper's */
	int rc, host_rc, in_tree;

	*stage = ISO_STAGE_CONFINEMENT;
	*prog = -1;
	/* The program and the grants as the caller's namespace has them. */
	if (w->caller_mnt >= 0 && setns(w->caller_mnt, CLONE_NEWNS) < 0)
		return iso_why_errno(why, n, "the caller's mount namespace");
	host_rc = open_program(plan, uid, prog, missing, sizeof missing);
	if ((rc = copy_grants(plan, trees, why, n)) < 0 ||
	    (rc = open_stdio_pipes(plan, w->caller_uid, why, n)) < 0 || w->ns_fd < 0)
		goto out;
	if (setns(w->ns_fd, CLONE_NEWNS) < 0 || unshare(CLONE_NEWNS) < 0)
		rc = iso_why_errno(why, n, "joining the guest's tree");
	if (rc == 0 && (rc = mount_own(plan, uid, why, n)) == 0 &&
	    (rc = idmap_grants(w, plan, uid, trees, why, n)) == 0)
		rc = attach_grants(plan, uid, trees, why, n);
	/* The program as the guest finds it in its tree where it is there
	 * (in what the caller lent, say: as the caller would run it), else
	 * as the caller's namespace has it. */
	if (rc == 0 && open_program(plan, uid, &in_tree, NULL, 0) == 0) {
		iso_close_fds(prog, 1);
		*prog = in_tree;
	}
out:
	umask(mask);
	if (rc == 0 && *prog < 0) {
		*stage = ISO_STAGE_EXEC;
		rc = iso_why(why, n, -host_rc, "%s", missing);
	}
	return rc;
}
