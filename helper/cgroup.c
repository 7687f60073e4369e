/*
 * cgroup.c - each guest in a cgroup v2 leaf of its own (cgroup.h).
 *
 * Invariants:
 *  - Every cgroup the helper makes or uses is root's, and so is every one
 *    above it (hygiene_cgroup_above): no one else may move a process in or
 *    out, freeze it, or change a limit. A directory is 0755, so that the
 *    guests' use can be read; the kernel makes each file writable by its
 *    owner alone.
 *  - Nothing is written above the parent but its parent's
 *    cgroup.subtree_control, and only where the helper makes the parent
 *    (setuid mode on a host that systemd does not run). Where systemd
 *    runs, the parent is a cgroup it delegated (Delegate=, which it marks
 *    trusted.delegate): in socket mode the connection's unit's, in setuid
 *    mode isospawn-guests.service's.
 *  - The reaper is cloned into its leaf (CLONE_INTO_CGROUP: no task is
 *    ever moved, which would take the kernel's cgroup-wide write lock and
 *    an RCU grace period on each spawn), so the guest is born in it,
 *    before its first instruction, and sees it as its cgroup namespace's
 *    root (spawn.c). An OOM kill (memory.oom.group) ends all of the
 *    guest, its reaper too, whose end then still tells it: the leaf's
 *    memory.events says that memory ended it.
 *  - A leaf is removed once its reaper, the last of it, is gone; those
 *    of a helper that was killed, by the next helper.
 *  - With the rule's caller-limit, the leaves of a caller's guests are in
 *    PARENT/caller-UID, bounded as the rule says, which holds nothing but
 *    leaves (no process may sit beside cgroups whose controllers it
 *    enables). The caller's helpers make and remove it at once: each
 *    makes it before each leaf (it is there already, or made again after
 *    another removed it), and removes it after each leaf, which fails
 *    while any other leaf is in it.
 *  - Where a controller is missing the guest runs with its rlimits, the
 *    notes say so, and a rule with 'cgroup required' refuses the caller.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <linux/magic.h>

#include "cgroup.h"
#include "hygiene.h"
#include "util.h"

#define ROOT "/sys/fs/cgroup"
/* The setuid helper's parent unless the policy names one: on a host that
 * systemd runs, the cgroup it delegates to isospawn-guests.service, never
 * made here (no cgroup is made in a tree systemd owns); elsewhere one of
 * the helper's own, made when missing. */
#define SYSTEMD_RUNS "/run/systemd/system"
#define UNIT "isospawn-guests.service"
#define UNIT_PARENT ROOT "/system.slice/" UNIT
#define DEFAULT_PARENT ROOT "/isospawn"
#define CPU_PERIOD_US 100000
/* The kernel's largest quota (max_cfs_runtime), and PID_MAX_LIMIT: more is
 * no limit, and the kernel refuses it. */
#define CPU_QUOTA_MAX_US ((UINT64_C(1) << 44) - 1)
#define PIDS_MAX 4194304

/* Each controller, the limit it enforces and the file it takes it in. */
static const struct {
	const char *name;
	int limit;
	const char *file;
} controllers[] = {
	{ "memory", ISO_LIMIT_MEMORY, "memory.max" },
	{ "pids", ISO_LIMIT_PIDS, "pids.max" },
	{ "cpu", ISO_LIMIT_CPUS, "cpu.max" },
};
#define BIT(i) (1u << controllers[i].limit)
#define ALL ((1u << ISO_LIMIT_MEMORY) | (1u << ISO_LIMIT_PIDS) | (1u << ISO_LIMIT_CPUS))

/* ---- Files ---- */

/* Write value to dir/file. 0, or -1 with errno set. */
static int put(int dir, const char *file, const char *value)
{
	size_t len = strlen(value);
	int fd = openat(dir, file, O_WRONLY | O_CLOEXEC), err;
	ssize_t done;

	if (fd < 0)
		return -1;
	done = write(fd, value, len);
	err = errno;
	close(fd);
	errno = err;
	return done == (ssize_t)len ? 0 : -1;
}

/* The number after "key " on a line of dir/file, or with key NULL the
 * file's one number. 0, or -1. */
static int get_number(int dir, const char *file, const char *key, uint64_t *value)
{
	char buf[1024], *at = buf;
	size_t len = key ? strlen(key) : 0;
	int fd = openat(dir, file, O_RDONLY | O_CLOEXEC);
	ssize_t got = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (got < 0)
		return -1;
	buf[got] = '\0';
	while (key && at && !(strncmp(at, key, len) == 0 && at[len] == ' '))
		if ((at = strchr(at, '\n')) != NULL)
			at++;
	if (at == NULL)
		return -1;
	*value = strtoull(at + len, NULL, 10);
	return 0;
}

/* The controllers of dir's cgroup.controllers or cgroup.subtree_control,
 * as bits. */
static unsigned listed(int dir, const char *file)
{
	char buf[512], *word, *rest;
	unsigned bits = 0;
	int fd = openat(dir, file, O_RDONLY | O_CLOEXEC);
	ssize_t got = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (got < 0)
		return 0;
	buf[got] = '\0';
	for (word = strtok_r(buf, " \n", &rest); word; word = strtok_r(NULL, " \n", &rest))
		for (size_t i = 0; i < COUNT(controllers); i++)
			if (strcmp(word, controllers[i].name) == 0)
				bits |= BIT(i);
	return bits;
}

/* Enable the controllers in dir's cgroup.subtree_control, each on its own
 * (one refused leaves the others); returns those enabled there, with the
 * first refusal's reason in reason[0..n) if it is empty. */
static unsigned enable(int dir, const char *path, char *reason, size_t n)
{
	unsigned on = listed(dir, "cgroup.subtree_control"),
		 offered = listed(dir, "cgroup.controllers");
	char plus[16];

	for (size_t i = 0; i < COUNT(controllers); i++) {
		if (on & BIT(i))
			continue;
		snprintf(plus, sizeof(plus), "+%s", controllers[i].name);
		if (!(offered & BIT(i))) {
			if (!reason[0])
				snprintf(reason, n, "%s is not in %s/cgroup.controllers",
					 controllers[i].name, path);
		} else if (put(dir, "cgroup.subtree_control", plus) < 0) {
			if (!reason[0])
				snprintf(reason, n, "%s in %s/cgroup.subtree_control: %s", plus,
					 path, strerror(errno));
		} else {
			on |= BIT(i);
		}
	}
	return on & ALL;
}

/* A limit as its file takes it: cpus, in thousandths of a CPU, as a quota
 * of each 100 ms. */
static void limit_text(int which, uint64_t value, char *buf, size_t n)
{
	uint64_t per_milli = CPU_PERIOD_US / 1000;

	if (which == ISO_LIMIT_CPUS && value <= CPU_QUOTA_MAX_US / per_milli)
		snprintf(buf, n, "%llu %d", (unsigned long long)(value * per_milli), CPU_PERIOD_US);
	else if (which == ISO_LIMIT_CPUS)
		snprintf(buf, n, "max %d", CPU_PERIOD_US);
	else if (value == UINT64_MAX || (which == ISO_LIMIT_PIDS && value >= PIDS_MAX))
		snprintf(buf, n, "max");
	else
		snprintf(buf, n, "%llu", (unsigned long long)value);
}

/* ---- The parent ---- */

static int delegated(int dir)
{
	char value[8];

	return fgetxattr(dir, "trusted.delegate", value, sizeof(value)) == 1 && value[0] == '1';
}

static int systemd_runs(void)
{
	struct stat st;

	return lstat(SYSTEMD_RUNS, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Started by systemd for a connection it accepted: root from the start,
 * with a connection on a socket that has a name (the library's
 * socketpair has none). */
static int accepted(int root_started)
{
	struct sockaddr_storage addr;
	socklen_t len = sizeof(addr);

	return root_started && getsockname(ISO_HELPER_FD, (struct sockaddr *)&addr, &len) == 0 &&
	       len > sizeof(sa_family_t);
}

/* The helper's own cgroup's directory into path (n bytes). */
static int own_cgroup(char *path, size_t n)
{
	char line[PATH_MAX + 8];
	FILE *f = fopen("/proc/self/cgroup", "re");
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f))
		if (strncmp(line, "0::/", 4) == 0) {
			line[strcspn(line, "\n")] = '\0';
			found = snprintf(path, n, "%s%s", ROOT,
					 strcmp(line + 3, "/") ? line + 3 : "") < (int)n;
		}
	if (f)
		fclose(f);
	return found ? 0 : -1;
}

/* A directory of ours, made 0755 (the helper's umask is 077); one there
 * already is the helper's from before. Its descriptor, or -1. */
static int make_dir(int at, const char *name)
{
	int made = mkdirat(at, name, 0755) == 0;

	if (!made && errno != EEXIST)
		return -1;
	if (made && fchmodat(at, name, 0755, 0) < 0)
		return -1;
	return openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

/*
 * The parent into path (n bytes), opened: in socket mode the unit's own
 * cgroup, which systemd delegated, with the helper moved into its leaf
 * "helper" (no process may sit beside cgroups whose controllers it
 * enables), *unit set; else the policy's or the default (DEFAULT_PARENT
 * made here when missing, its parent offering it the controllers;
 * UNIT_PARENT only when systemd delegated it). -1 with the reason.
 */
static int open_parent(const char *policy_parent, int root_started, char *path, size_t n,
		       char *reason, size_t rn, int *unit)
{
	struct statfs fs = { 0 };
	int fd = -1, up;
	char *slash;

	if (statfs(ROOT, &fs) < 0 || fs.f_type != CGROUP2_SUPER_MAGIC) {
		snprintf(reason, rn, "%s is %s, not a cgroup v2 hierarchy", ROOT,
			 fs.f_type ? iso_fs_name((unsigned long)fs.f_type) : strerror(errno));
		return -1;
	}
	if (accepted(root_started) && own_cgroup(path, n) == 0 &&
	    (fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0 && delegated(fd)) {
		if ((up = make_dir(fd, "helper")) >= 0 && put(up, "cgroup.procs", "0") == 0) {
			close(up);
			*unit = 1;
			return fd;
		}
		snprintf(reason, rn, "%s/helper: %s", path, strerror(errno));
		iso_close_fds(&up, 1);
		close(fd);
		return -1;
	}
	iso_close_fds(&fd, 1);
	if (policy_parent == NULL && systemd_runs()) {
		snprintf(path, n, "%s", UNIT_PARENT);
		if ((fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0 && delegated(fd))
			return fd;
		snprintf(reason, rn, "%s: %s (start %s)", path,
			 fd < 0 ? strerror(errno) : "not delegated (the unit's Delegate=)", UNIT);
		iso_close_fds(&fd, 1);
		return -1;
	}
	snprintf(path, n, "%s", policy_parent ? policy_parent : DEFAULT_PARENT);
	slash = strrchr(path, '/');
	*slash = '\0';
	if ((up = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0)
		(void)enable(up, path, reason, rn);
	*slash = '/';
	if (up >= 0)
		fd = make_dir(up, slash + 1);
	if (fd < 0)
		snprintf(reason, rn, "%s: %s", path, strerror(errno));
	iso_close_fds(&up, 1);
	return fd;
}

/* The parent is root's alone, and so is each cgroup above it. */
static int root_only(int fd, const char *path, char *reason, size_t rn)
{
	struct stat st;

	if (fstat(fd, &st) < 0 || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(reason, rn, "%s: not root's alone", path);
		return -1;
	}
	return hygiene_cgroup_above(path + strlen(ROOT), reason, rn) < 0 ? -1 : 0;
}

/* ---- Once per connection ---- */

/* The leaves of helpers that are gone (killed: their reapers went with
 * them, PR_SET_PDEATHSIG, and left the leaves empty) go too, and in the
 * parent (`callers`) the callers' cgroups they left empty. A leaf still
 * in use refuses (EBUSY), and so does a caller's cgroup with a leaf in
 * it; a live helper's are left alone. */
static void sweep(int parent, int callers)
{
	int fd = dup(parent), in;
	DIR *dir = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *e;
	unsigned long n;
	unsigned uid;
	int pid, end;

	while (dir && (e = readdir(dir)) != NULL)
		if (sscanf(e->d_name, "%d.%lu%n", &pid, &n, &end) == 2 && e->d_name[end] == '\0' &&
		    pid > 0 && kill(pid, 0) < 0 && errno == ESRCH) {
			(void)unlinkat(parent, e->d_name, AT_REMOVEDIR);
		} else if (callers && sscanf(e->d_name, "caller-%u%n", &uid, &end) == 1 &&
			   e->d_name[end] == '\0' &&
			   (in = openat(parent, e->d_name,
					O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
			sweep(in, 0);
			close(in);
			(void)unlinkat(parent, e->d_name, AT_REMOVEDIR);
		}
	if (dir)
		closedir(dir);
	else if (fd >= 0)
		close(fd);
}

/* PARENT/caller-UID, there already or made now, bounded by the rule's
 * caller-limit, with the controllers of the leaves enabled below it;
 * into *on those enabled. 0, or -1 with errno set and *file the one
 * refused ("": the directory itself). */
static int caller_make(const struct iso_cgroup *cg, unsigned *on, const char **file)
{
	char text[48], reason[8] = "";
	int fd, rc = 0;

	*file = "";
	if ((fd = make_dir(cg->parent_fd, cg->caller)) < 0)
		return -1;
	for (size_t i = 0; rc == 0 && i < COUNT(controllers); i++)
		if (cg->have & BIT(i)) {
			limit_text(controllers[i].limit, cg->caller_limit[controllers[i].limit],
				   text, sizeof(text));
			rc = put(fd, *file = controllers[i].file, text);
		}
	/* As in a leaf: no more than its memory in the host's swap. */
	if (rc == 0 && (cg->have & (1u << ISO_LIMIT_MEMORY)) &&
	    put(fd, *file = "memory.swap.max",
		cg->caller_limit[ISO_LIMIT_MEMORY] == UINT64_MAX ? "max" : "0") < 0 &&
	    errno != ENOENT)
		rc = -1;
	if (rc == 0)
		*on = enable(fd, cg->caller, reason, sizeof(reason));
	rc = rc < 0 ? errno : 0;
	close(fd);
	errno = rc;
	return rc ? -1 : 0;
}

/* caller_make, then with leaf the leaf in it (*file NULL if that was
 * refused). Another helper of the caller's removes its cgroup, empty,
 * after its own last leaf: between our making it and our leaf in it,
 * writing its limits too; it is made again then, a few times. */
static int in_caller(const struct iso_cgroup *cg, const char *leaf, unsigned *on, const char **file)
{
	unsigned tries = 0;
	int rc;

	do {
		rc = caller_make(cg, on, file);
		if (rc == 0 && leaf && (rc = mkdirat(cg->parent_fd, leaf, 0755)) < 0)
			*file = NULL;
	} while (rc < 0 && (errno == ENOENT || errno == ENODEV) && ++tries < 8);
	return rc;
}

static void note(char *notes, size_t size, const char *text)
{
	size_t used = strlen(notes);

	snprintf(notes + used, size - used, "%s%s", used ? "; " : "", text);
}

int cgroup_prepare(const struct iso_rule *rule, uid_t uid, const char *policy_parent,
		   int root_started, struct iso_cgroup *cg, char *notes, size_t notes_size,
		   char *why, size_t n)
{
	int caller_limited = rule->at[ISO_KW_CALLER_LIMIT].by != ISO_SET_BUILTIN, unit = 0;
	const char *file;
	unsigned on = 0;
	char path[PATH_MAX], reason[PATH_MAX + 128] = "", text[PATH_MAX + 256], missing[32] = "",
					       limits[32] = "", where[PATH_MAX + 64];
	size_t m = 0, l = 0;

	*cg = (struct iso_cgroup){ .parent_fd = -1 };
	if (rule->cgroup == ISO_CGROUP_OFF) {
		note(notes, notes_size, "cgroup: off by the rule: memory, pids, cpus not enforced");
		return 0;
	}
	cg->parent_fd = open_parent(policy_parent, root_started, path, sizeof(path), reason,
				    sizeof(reason), &unit);
	if (cg->parent_fd >= 0 && root_only(cg->parent_fd, path, reason, sizeof(reason)) < 0)
		iso_close_fds(&cg->parent_fd, 1);
	if (cg->parent_fd >= 0) {
		sweep(cg->parent_fd, 1);
		cg->have = enable(cg->parent_fd, path, reason, sizeof(reason));
	}
	if (cg->parent_fd >= 0 && caller_limited) {
		snprintf(cg->caller, sizeof(cg->caller), "caller-%u", (unsigned)uid);
		cg->caller_limit = rule->caller_limit;
		/* Without it no guest is bounded with the others: none gets a
		 * cgroup, as where the parent is missing. */
		if (in_caller(cg, NULL, &on, &file) < 0) {
			snprintf(reason, sizeof(reason), "%s/%s%s%s: %s", path, cg->caller,
				 file[0] ? "/" : "", file, strerror(errno));
			iso_close_fds(&cg->parent_fd, 1);
			cg->caller[0] = '\0';
		}
		cg->have &= on;
		/* Each connection is a unit of its own, whose cgroup holds the
		 * caller's: the caller's other connections are not in it. */
		if (unit && cg->parent_fd >= 0)
			note(notes, notes_size,
			     "cgroup: caller-limit bounds this connection's guests alone "
			     "(socket mode: each connection is a unit of its own)");
	}
	if (cg->have == ALL)
		return 0;
	for (size_t i = 0; i < COUNT(controllers); i++)
		if (!(cg->have & BIT(i))) {
			m += (size_t)snprintf(missing + m, sizeof(missing) - m, "%s%s",
					      m ? ", " : "", controllers[i].name);
			l += (size_t)snprintf(limits + l, sizeof(limits) - l, "%s%s", l ? ", " : "",
					      iso_limit_name((enum iso_limit)controllers[i].limit));
		}
	if (rule->cgroup == ISO_CGROUP_REQUIRED) {
		iso_close_fds(&cg->parent_fd, 1);
		return iso_why(why, n, ENOSYS, "cgroup: missing %s (%s); required by %s", missing,
			       reason, policy_where(rule, ISO_KW_CGROUP, 0, where, sizeof(where)));
	}
	snprintf(text, sizeof(text), "cgroup: missing %s (%s): %s not enforced%s", missing, reason,
		 limits, caller_limited ? ", nor the rule's caller-limit" : "");
	note(notes, notes_size, text);
	return 0;
}

/* ---- Each guest ---- */

int cgroup_leaf_make(const struct iso_cgroup *cg, const uint64_t *ceiling, int *leaf, char *name,
		     size_t name_size, char *why, size_t n)
{
	/* Unique among the helpers that share the parent: a pid is, while
	 * its helper lives, and each helper counts its own. */
	static unsigned long made;
	const char *file = "";
	unsigned on;
	int rc, mk;

	*leaf = -1;
	name[0] = '\0';
	if (cg->parent_fd < 0)
		return 0;
	snprintf(name, name_size, "%s%s%d.%lu", cg->caller, cg->caller[0] ? "/" : "", (int)getpid(),
		 ++made);
	mk = cg->caller[0] ? in_caller(cg, name, &on, &file) : mkdirat(cg->parent_fd, name, 0755);
	if (mk < 0 && cg->caller[0] && file != NULL)
		rc = iso_why_errno(why, n, "cgroup %s%s%s", cg->caller, file[0] ? "/" : "", file);
	else if (mk < 0 || fchmodat(cg->parent_fd, name, 0755, 0) < 0 ||
		 (*leaf = openat(cg->parent_fd, name,
				 O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		rc = iso_why_errno(why, n, "cgroup %s", name);
	/* An OOM kill takes all of the guest, never half of it. */
	else if ((cg->have & (1u << ISO_LIMIT_MEMORY)) && put(*leaf, "memory.oom.group", "1") < 0)
		rc = iso_why_errno(why, n, "cgroup %s: memory.oom.group", name);
	else
		rc = cgroup_leaf_limits(cg, *leaf, ceiling, NULL, why, n);
	if (rc < 0)
		cgroup_leaf_remove(cg, leaf, name);
	return rc;
}

int cgroup_leaf_limits(const struct iso_cgroup *cg, int leaf, const uint64_t *limits,
		       const uint64_t *set, char *why, size_t n)
{
	uint64_t memory = limits[ISO_LIMIT_MEMORY], was;
	const char *file = "";
	char text[48];
	int rc = 0;

	if (leaf < 0)
		return 0;
	for (size_t i = 0; rc == 0 && i < COUNT(controllers); i++) {
		was = set ? set[controllers[i].limit] : UINT64_MAX;
		if (!(cg->have & BIT(i)) || limits[controllers[i].limit] == was)
			continue;
		limit_text(controllers[i].limit, limits[controllers[i].limit], text, sizeof(text));
		rc = put(leaf, file = controllers[i].file, text);
	}
	/* Swap would let a guest hold more than its memory says, in the
	 * host's swap; a kernel without swap accounting has no such file. */
	was = set ? set[ISO_LIMIT_MEMORY] : UINT64_MAX;
	if (rc == 0 && (cg->have & (1u << ISO_LIMIT_MEMORY)) &&
	    (memory == UINT64_MAX) != (was == UINT64_MAX) &&
	    put(leaf, file = "memory.swap.max", memory == UINT64_MAX ? "max" : "0") < 0 &&
	    errno != ENOENT)
		rc = -1;
	return rc < 0 ? iso_why_errno(why, n, "the guest's cgroup: %s", file) : 0;
}

void cgroup_kill(int leaf)
{
	if (leaf >= 0)
		(void)put(leaf, "cgroup.kill", "1");
}

void cgroup_leaf_count(int leaf, struct iso_wire_exited *ex)
{
	uint64_t oom_kills = 0, forks_failed = 0;

	if (leaf < 0)
		return;
	ex->cgroup = 1;
	(void)get_number(leaf, "cpu.stat", "usage_usec", &ex->cg_cpu_us);
	(void)get_number(leaf, "memory.peak", NULL, &ex->cg_memory_peak);
	/* A fork the pids limit refused: the guest lived on, told so. */
	if (get_number(leaf, "pids.events", "max", &forks_failed) == 0 && forks_failed > 0)
		ex->reached |= 1u << ISO_LIMIT_PIDS;
	/* Killed, all of it, by the OOM killer within its memory: the memory
	 * limit ended it. */
	if (ex->outcome == ISO_OUTCOME_SIGNALED && ex->code == SIGKILL &&
	    get_number(leaf, "memory.events", "oom_kill", &oom_kills) == 0 && oom_kills > 0) {
		ex->outcome = ISO_OUTCOME_LIMIT;
		ex->limit_hit = ISO_LIMIT_MEMORY;
	}
}

void cgroup_leaf_remove(const struct iso_cgroup *cg, int *leaf, const char *name)
{
	if (*leaf < 0)
		return;
	close(*leaf);
	*leaf = -1;
	(void)unlinkat(cg->parent_fd, name, AT_REMOVEDIR);
	/* Refused (EBUSY) while another leaf, any helper's, is in it. */
	if (cg->caller[0])
		(void)unlinkat(cg->parent_fd, cg->caller, AT_REMOVEDIR);
}
