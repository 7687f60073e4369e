/*
 * confine.c - seccomp, Landlock and resource limits for the guest.
 *
 * Invariants:
 *  - confine_prepare() MUST do all preparing; the confine_apply_* functions
 *    run in every guest child and MUST only load what was prepared.
 *  - The seccomp filter MUST cover every system call entry point of the CPU
 *    (on x86_64: native, int 0x80 and x32): a rule that a compat call skips
 *    is no rule. The programs are compiled at build time
 *    (tools/seccomp-rules.c); a rule's own list is checked here on the
 *    native and compat architectures alike.
 *  - The filter MUST still allow what the guest child does after loading
 *    it (spawner.c loads it last): execveat, fcntl, write and exit_group.
 *    It is a deny list, so only its lists (tools/seccomp-rules.c) and a
 *    rule's seccomp-deny can break that.
 *  - Landlock MUST fail closed: a path the rule or the request names that
 *    cannot be opened is an error, never a rule silently dropped. Only
 *    built-in system paths missing on this machine are skipped.
 *  - REFER (moving files between directories) MUST NOT be granted outside
 *    the guest's own /tmp and /dev/shm.
 *  - Every path MUST be opened in the guest's own tree (world.c), after
 *    world_enter(), so that each rule names what the guest will see.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <linux/openat2.h>

#include "confine.h"
#include "landlock.h"
#include "seccomp-tables.h"
#include "util.h"

/* ---- seccomp ------------------------------------------------------ */

/*
 * A rule's seccomp-deny list, put before the rule's profile program
 * (seccomp-tables.h): for each listed call, on each architecture where it has a
 * number, load the architecture, skip the next three unless it is this one,
 * load the call's number, and return the rule's action if it is the call's.
 * Five instructions a check, so every jump is the same. A call the program
 * answers with ENOSYS has no number here, and keeps its ENOSYS.
 */
#define DENY_CHECK_LEN 5

static size_t deny_prefix(char *const *names, uint32_t action, struct sock_filter *f)
{
	size_t k = 0;

	for (size_t i = 0; names && names[i]; i++) {
		const struct iso_syscall *s = policy_syscall(names[i]);

		for (int a = 0; a < 2; a++) {
			if (s->nr[a] < 0)
				continue;
			f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
							      offsetof(struct seccomp_data, arch));
			f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
							      iso_seccomp_arches[a], 0, 3);
			f[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
							      offsetof(struct seccomp_data, nr));
			f[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
							      (uint32_t)s->nr[a], 0, 1);
			f[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, action);
		}
	}
	return k;
}

/* The rule's deny list, then its profile's program, into c. */
static int prepare_seccomp(const struct iso_rule *rule, struct iso_confine *c, char *why, size_t n)
{
	const struct iso_seccomp_program *p =
	    &iso_seccomp_programs[rule->seccomp == ISO_SECCOMP_STRICT]
				 [rule->seccomp_action == ISO_SECCOMP_KILL];
	uint32_t action = rule->seccomp_action == ISO_SECCOMP_KILL ? SECCOMP_RET_KILL_PROCESS
								   : SECCOMP_RET_ERRNO | EPERM;
	size_t names = 0, max, k;

	/* The parser refuses unknown names; a rule from elsewhere may not. */
	for (char **d = rule->seccomp_deny; d && *d; d++, names++)
		if (!policy_syscall(*d))
			return iso_why(why, n, EINVAL,
				       "seccomp: unknown system call \"%s\" in "
				       "the rule at %s:%u",
				       *d, rule->file, rule->line);
	/* The bound also makes bpf_len fit sock_fprog's 16-bit len. */
	max = names * 2 * DENY_CHECK_LEN + p->len;
	if (max > BPF_MAXINSNS)
		return iso_why(why, n, E2BIG,
			       "seccomp: the filter would be %zu instructions, "
			       "more than the kernel loads",
			       max);
	c->bpf = calloc(max, sizeof *c->bpf);
	if (!c->bpf)
		return iso_why(why, n, ENOMEM, "seccomp: out of memory");
	k = deny_prefix(rule->seccomp_deny, action, c->bpf);
	memcpy(c->bpf + k, p->filter, p->len * sizeof *c->bpf);
	c->bpf_len = k + p->len;
	return 0;
}

int confine_apply_seccomp(const struct iso_confine *c, char *why, size_t n)
{
	struct sock_fprog prog = { .len = (unsigned short)c->bpf_len, .filter = c->bpf };

	/* No filter: the rule's explicit "seccomp none". */
	if (!c->bpf)
		return 0;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
		return iso_why_errno(why, n, "seccomp: loading the filter");
	return 0;
}

/* ---- Landlock ----------------------------------------------------- */

#define FS_READ \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR)
/* The rights the kernel accepts in a rule on a file (not a directory). */
#define FS_FILE                                                       \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
	 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE | \
	 LANDLOCK_ACCESS_FS_IOCTL_DEV)
/* No device nodes even in /tmp (the kernel refuses them to unprivileged
 * users anyway). */
#define FS_NO_DEVICES (LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_BLOCK)

/*
 * The host's system part of every guest's tree, which every guest reads
 * and executes: world.c binds each read-only (a symbolic link, such as
 * merged /usr's /bin, stays one). /etc whole: what an account without
 * groups may read of it, it may read there (the mode bits still apply).
 * Of /sys the CPU topology only (nproc, os.cpus()). /proc, /tmp, /dev/shm
 * are each guest's own (confine_apply_landlock).
 */
const char *const confine_system[] = { "/usr",    "/bin",   "/sbin",
				       "/lib",    "/lib32", "/lib64",
				       "/libx32", "/etc",   "/sys/devices/system/cpu",
				       NULL };
/* The tree's /dev holds only null, zero, full, random, urandom and tty:
 * read and write them (the node, not the device, is read-only). */
static const char *const system_dev[] = { "/dev", NULL };
/* Listing directories anywhere: the tree holds only what the guest may
 * see (reading files still needs a rule). */
static const char *const system_root[] = { "/", NULL };

enum path_origin {
	PATH_BUILTIN, /* skipped when missing */
	PATH_RULE, /* the administrator's: symlinks followed */
	PATH_REQUEST, /* the caller's: must name the object itself */
};

int landlock_abi_version(void)
{
	int abi =
	    (int)syscall(__NR_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	return abi < 0 ? 0 : abi;
}

int landlock_decide(enum iso_landlock_mode mode, int min_abi, int abi, int *degraded)
{
	int enough = abi > 0 && abi >= min_abi;

	*degraded = mode == ISO_LANDLOCK_OPTIONAL && !enough;
	if (mode == ISO_LANDLOCK_OFF)
		return 0;
	if (!*degraded)
		return enough ? 1 : -ENOSYS;
	/* Best effort, as the kernel's sandboxer sample: what the kernel has
	 * (confine_apply_landlock() handles only the rights of its ABI). */
	return abi > 0;
}

/* What each ABI adds, for notes naming what an older kernel lacks. */
static const char *const landlock_adds[] = {
	[2] = "cross-directory links and renames (refused instead)",
	[3] = "truncate rules",
	[4] = "TCP port rules",
	[5] = "device ioctl rules",
	[6] = "signal and abstract-socket scoping",
	[7] = "audit log flags",
};

void landlock_gap(int abi, int err, int min_abi, char *buf, size_t n)
{
	if (abi == 0) {
		snprintf(
		    buf, n, "%s",
		    err == EOPNOTSUPP
			? "disabled at boot (EOPNOTSUPP: landlock is not in the kernel's lsm= list)"
			: "not in this kernel (ENOSYS)");
		return;
	}
	snprintf(buf, n, "kernel ABI %d is below the rule's %d", abi, min_abi);
	for (int i = abi + 1; i <= min_abi && i < (int)COUNT(landlock_adds); i++) {
		size_t used = strlen(buf);

		snprintf(buf + used, n - used, "%s %s (ABI %d)", i > abi + 1 ? "," : ", so no",
			 landlock_adds[i], i);
	}
}

/* A rule for what fd names: `rights` narrowed to what the ruleset handles
 * and, for a file, to file rights. */
static int add_rule(int ruleset, int fd, uint64_t rights, uint64_t handled, const char *what,
		    char *why, size_t n)
{
	struct landlock_path_beneath_attr attr = { .parent_fd = fd };
	struct stat st;

	if (fstat(fd, &st) < 0)
		return iso_why_errno(why, n, "landlock: %s", what);
	attr.allowed_access = rights & handled;
	if (!S_ISDIR(st.st_mode))
		attr.allowed_access &= FS_FILE;
	if (syscall(__NR_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &attr, 0) < 0)
		return iso_why_errno(why, n, "landlock: rule for %s", what);
	return 0;
}

/* A rule for each path, opened (O_PATH) in the guest's tree. A missing
 * built-in path is skipped. */
static int add_paths(int ruleset, const char *const *paths, enum path_origin origin,
		     uint64_t rights, uint64_t handled, char *why, size_t n)
{
	/* A requested path was checked as text against the rule's may_read
	 * and may_write: a symlink on the way could point anywhere else. */
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = origin == PATH_REQUEST ? RESOLVE_NO_SYMLINKS : 0,
	};
	int fd, rc = 0;

	for (; rc == 0 && paths && *paths; paths++) {
		fd = (int)syscall(SYS_openat2, AT_FDCWD, *paths, &how, sizeof how);
		if (fd < 0 && origin == PATH_BUILTIN && errno == ENOENT)
			continue;
		if (fd < 0)
			return iso_why_errno(why, n, "landlock: %s", *paths);
		rc = add_rule(ruleset, fd, rights, handled, *paths, why, n);
		close(fd);
	}
	return rc;
}

/* The descriptors handed over as 0-2, each with the rights of its open
 * mode: /dev/stderr reopens fd 2 through /proc, which Landlock checks like
 * any open (a terminal or a file of the caller's is in no other rule).
 * Best effort: a rule the kernel refuses (a pipe or socket, which Landlock
 * does not check anyway) only leaves that reopening refused. */
static void add_stdio(int ruleset, const int stdio[3], uint64_t handled)
{
	static const uint64_t by_mode[] = {
		[O_RDONLY] = LANDLOCK_ACCESS_FS_READ_FILE,
		[O_WRONLY] = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_TRUNCATE,
		[O_RDWR] = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_WRITE_FILE |
			   LANDLOCK_ACCESS_FS_TRUNCATE,
	};
	struct stat st;

	for (int i = 0; i < 3; i++) {
		int mode = fcntl(stdio[i], F_GETFL);

		/* Never a directory: a rule there would open its whole tree. */
		if (mode < 0 || fstat(stdio[i], &st) < 0 || S_ISDIR(st.st_mode) ||
		    (mode & O_ACCMODE) > O_RDWR)
			continue;
		(void)add_rule(ruleset, stdio[i], by_mode[mode & O_ACCMODE], handled, "stdio", NULL,
			       0);
	}
}

/*
 * One ruleset, built where it is applied: in the guest, as the guest, in
 * its own tree (world.c), which holds only what the guest may see. Every
 * path is opened there, so each rule names what the guest sees: its own
 * /proc, /tmp and /dev/shm (Landlock skips the mount point under a mount,
 * so a rule on the template's directory would not cover them) and its
 * grants. Opened as the guest, a path gives it nothing its uid could not
 * reach: Landlock only narrows the kernel's permission checks.
 */
int confine_apply_landlock(const struct iso_confine *c, const struct iso_plan *plan, int program_fd,
			   const int stdio[3], char *why, size_t n)
{
	const char *const own_rw[] = { "/tmp", "/dev/shm", NULL };
	const char *const own_read[] = { "/proc", NULL };
	int abi = c->landlock_abi, ruleset, rc = 0;
	/* ABI 1's rights (up to MAKE_SYM), and each later one's the kernel has. */
	uint64_t handled = ((LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1) |
			   (abi >= 2 ? LANDLOCK_ACCESS_FS_REFER : 0) |
			   (abi >= 3 ? LANDLOCK_ACCESS_FS_TRUNCATE : 0) |
			   (abi >= 5 ? LANDLOCK_ACCESS_FS_IOCTL_DEV : 0);
	uint64_t rw = handled & ~FS_NO_DEVICES;
	uint64_t rw_no_refer = rw & ~LANDLOCK_ACCESS_FS_REFER;
	struct iso_landlock_ruleset_attr attr = { .handled_access_fs = handled };
	const struct {
		const char *const *paths;
		enum path_origin origin;
		uint64_t rights;
	} grants[] = {
		{ confine_system, PATH_BUILTIN, FS_READ },
		{ system_dev, PATH_BUILTIN, FS_READ | LANDLOCK_ACCESS_FS_WRITE_FILE },
		{ system_root, PATH_BUILTIN, LANDLOCK_ACCESS_FS_READ_DIR },
		{ own_rw, PATH_RULE, rw },
		{ own_read, PATH_RULE, FS_READ },
		{ (const char *const *)c->rule->read, PATH_RULE, FS_READ },
		{ (const char *const *)c->rule->write, PATH_RULE, rw_no_refer },
	};

	if (!c->landlock_on)
		return 0;
	/* A guest may not signal, or connect to abstract sockets of,
	 * anything outside its own domain (the caller, other guests). */
	if (abi >= 6)
		attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL;
	ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, sizeof attr, 0);
	if (ruleset < 0)
		return iso_why_errno(why, n, "landlock: creating the ruleset");
	for (size_t i = 0; rc == 0 && i < COUNT(grants); i++)
		rc = add_paths(ruleset, grants[i].paths, grants[i].origin, grants[i].rights,
			       handled, why, n);
	for (size_t i = 0; rc == 0 && i < plan->ngrants; i++)
		rc = add_paths(ruleset, (const char *const[]){ plan->grants[i].path, NULL },
			       PATH_REQUEST, plan->grants[i].write ? rw_no_refer : FS_READ, handled,
			       why, n);
	/* The program itself, wherever it lives: file rights only (a
	 * ruleset's rules are a set: their order changes nothing). */
	if (rc == 0)
		rc = add_rule(ruleset, program_fd, FS_READ, handled, "the program", why, n);
	if (rc == 0)
		add_stdio(ruleset, stdio, handled);
	if (rc == 0 && syscall(__NR_landlock_restrict_self, ruleset, 0) < 0)
		rc = iso_why_errno(why, n, "landlock: restrict_self");
	close(ruleset);
	return rc;
}

/* ---- Preparation, once per connection ----------------------------- */

int confine_prepare(const struct iso_rule *rule, struct iso_confine *c, char *why, size_t n)
{
	char gap[400], where[PATH_MAX + 64];
	int degraded, rc;

	memset(c, 0, sizeof *c);
	c->rule = rule;
	c->landlock_abi = landlock_abi_version();
	landlock_gap(c->landlock_abi, errno, rule->landlock_min_abi, gap, sizeof gap);
	rc = landlock_decide(rule->landlock, rule->landlock_min_abi, c->landlock_abi, &degraded);
	if (rc < 0)
		return iso_why(
		    why, n, -rc, "landlock: %s; required by %s", gap,
		    policy_where(rule, c->landlock_abi > 0 ? ISO_KW_LANDLOCK_ABI : ISO_KW_LANDLOCK,
				 0, where, sizeof where));
	c->landlock_on = rc;
	if (degraded)
		snprintf(c->notes, sizeof c->notes, "landlock: %s; running %s as the policy allows",
			 gap, rc ? "with what the kernel has" : "without it");

	/* A network namespace of its own is what keeps a guest of "network
	 * none" off the host's network, loopback included; inside it, its
	 * own loopback is its to use. */
	if ((rule->network_default == ISO_NETWORK_NONE || rule->network_none_only) &&
	    access("/proc/self/ns/net", F_OK) != 0)
		return iso_why(why, n, ENOSYS,
			       "network none: the kernel has no network namespaces");
	if (rule->seccomp != ISO_SECCOMP_NONE && (rc = prepare_seccomp(rule, c, why, n)) < 0)
		return rc;
	return 0;
}

/* ---- Resource limits ---------------------------------------------- */

/* The rlimit behind each limit, or -1 for the two that are tmpfs sizes
 * (scratch and shm: world.c) and the three of the guest's cgroup. */
static const int plan_rlimits[ISO_LIMIT_COUNT] = {
	/* CPU seconds: a spinning guest ends with SIGXCPU, then SIGKILL. */
	[ISO_LIMIT_CPU] = RLIMIT_CPU,
	/* Address space: a memory bomb gets ENOMEM before the OOM killer
	 * picks some host process. */
	[ISO_LIMIT_AS] = RLIMIT_AS,
	/* Open files: bounds the guest's share of kernel file tables. */
	[ISO_LIMIT_NOFILE] = RLIMIT_NOFILE,
	/* Processes of the uid, which is leased to this guest alone: ends
	 * fork bombs. */
	[ISO_LIMIT_NPROC] = RLIMIT_NPROC,
	/* File size: no single file fills a granted directory's disk. */
	[ISO_LIMIT_FSIZE] = RLIMIT_FSIZE,
	/* Stack: runaway recursion ends early, and AS is not its only bound. */
	[ISO_LIMIT_STACK] = RLIMIT_STACK,
	[ISO_LIMIT_SCRATCH] = -1,
	[ISO_LIMIT_SHM] = -1,
	/* The whole guest's, on its cgroup (cgroup.c). */
	[ISO_LIMIT_MEMORY] = -1,
	[ISO_LIMIT_PIDS] = -1,
	[ISO_LIMIT_CPUS] = -1,
};

static int set_limit(int resource, const char *name, uint64_t value, char *why, size_t n)
{
	struct rlimit rl, now;

	/* The kernel counts CPU time in nanoseconds: beyond 2^64 of them
	 * (584 years) its product wraps, to a limit of moments, so a
	 * ceiling that large means none. */
	if (resource == RLIMIT_CPU && value > UINT64_MAX / 1000000000)
		value = UINT64_MAX;
	rl.rlim_cur = rl.rlim_max = value == UINT64_MAX ? RLIM_INFINITY : (rlim_t)value;
	/* CPU: the soft limit's SIGXCPU is the one unambiguous sign that the
	 * limit ended the guest. The kernel counts RLIMIT_CPU in scheduler
	 * ticks, which the precise time getrusage() reports can trail by a
	 * fifth under load, so at soft == hard the hard limit's SIGKILL
	 * could not be told from any other. The hard limit, a second later,
	 * stops a guest that ignores SIGXCPU; never raised past where it is. */
	if (resource == RLIMIT_CPU && getrlimit(RLIMIT_CPU, &now) == 0 &&
	    now.rlim_max > rl.rlim_max)
		rl.rlim_max++;
	if (setrlimit(resource, &rl) < 0)
		return iso_why_errno(why, n, "rlimit %s", name);
	return 0;
}

int confine_apply_rlimits(const struct iso_plan *plan, char *why, size_t n)
{
	struct rlimit memlock;
	int i, rc = 0;

	for (i = 0; rc == 0 && i < ISO_LIMIT_COUNT; i++)
		if (plan_rlimits[i] >= 0)
			rc = set_limit(plan_rlimits[i], iso_limit_name((enum iso_limit)i),
				       plan->limits[i], why, n);
	/* No core dumps: one would hold the guest's memory and could land
	 * where others can read it. */
	if (rc == 0)
		rc = set_limit(RLIMIT_CORE, "core", 0, why, n);
	/* No real-time policy and no nice below the one it starts with
	 * (hygiene_sched): the caller's may allow them. */
	if (rc == 0)
		rc = set_limit(RLIMIT_RTPRIO, "rtprio", 0, why, n);
	if (rc == 0)
		rc = set_limit(RLIMIT_NICE, "nice", 0, why, n);
	/* Locked memory: the kernel's historical 64 KiB lets a program lock
	 * a key in memory but not pin the host's RAM, whatever AS says. Only
	 * ever lowered: raising a hard limit needs privilege. getrlimit()
	 * fails only for an unknown resource or a bad pointer. */
	(void)getrlimit(RLIMIT_MEMLOCK, &memlock);
	if (rc == 0)
		rc = set_limit(RLIMIT_MEMLOCK, "memlock",
			       memlock.rlim_max < 64 * 1024 ? memlock.rlim_max : 64 * 1024, why, n);
	return rc;
}

/* ---- Network ------------------------------------------------------ */

int confine_apply_network(const struct iso_plan *plan, int caller_net, char *why, size_t n)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int fd, rc = 0;

	/* The host network, as the caller has it: a unit's private network,
	 * say, never the helper's. */
	if (!plan->network_none)
		return caller_net >= 0 && setns(caller_net, CLONE_NEWNET) < 0
			   ? iso_why_errno(why, n, "the caller's network namespace")
			   : 0;
	if (unshare(CLONE_NEWNET) < 0)
		return iso_why_errno(why, n, "network namespace");
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return iso_why_errno(why, n, "loopback: socket");
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
		rc = iso_why_errno(why, n, "loopback: reading lo's flags");
	ifr.ifr_flags |= IFF_UP;
	if (rc == 0 && ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
		rc = iso_why_errno(why, n, "loopback: bringing lo up");
	close(fd);
	return rc;
}

/* ---- SysV IPC ---------------------------------------------------- */

/* SysV objects outlive the processes that make them, and no rlimit counts
 * them: in the guest's own IPC namespace, shared memory at most its shm,
 * as its /dev/shm, and semaphores and message queues (kernel memory: 2 MiB
 * a set of 32,000 semaphores, 32,000 sets) within the
 * kernel's historical limits. The kernel's defaults are all but
 * unbounded. write(), not dprintf(): the reaper runs this on the path of
 * every spawn, and stdio's FILE would write to pages the reaper still
 * shares with the helper, each write a copy-on-write fault. */
int confine_apply_ipc(const struct iso_plan *plan, char *why, size_t n)
{
	uint64_t bytes = plan->limits[ISO_LIMIT_SHM];
	char max[24], all[24];
	const char *const knob[][2] = {
		{ "/proc/sys/kernel/sem", "250 32000 32 128" },
		{ "/proc/sys/kernel/msgmni", "16" },
		{ "/proc/sys/kernel/shmmax", max },
		{ "/proc/sys/kernel/shmall", all },
	};
	size_t knobs = bytes == UINT64_MAX ? 2 : COUNT(knob);
	int fd, rc = 0;

	snprintf(max, sizeof max, "%llu", (unsigned long long)bytes);
	snprintf(all, sizeof all, "%llu",
		 (unsigned long long)(bytes / (uint64_t)sysconf(_SC_PAGESIZE)));
	for (size_t i = 0; rc == 0 && i < knobs; i++) {
		fd = open(knob[i][0], O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, knob[i][1], strlen(knob[i][1])) < 0)
			rc = iso_why_errno(why, n, "%s", knob[i][0]);
		iso_close_fds(&fd, 1);
	}
	return rc;
}

/* ---- Descriptors -------------------------------------------------- */

int confine_fds_floor(const struct iso_plan *plan)
{
	uint32_t top = 3;

	for (size_t i = 0; i < plan->npass; i++)
		if (plan->pass[i].num > top)
			top = plan->pass[i].num;
	return (int)top + 1;
}

int confine_apply_fds(const int src[4], const struct iso_plan *plan, char *why, size_t n)
{
	int floor = confine_fds_floor(plan), high[4 + ISO_PASS_FDS_MAX];
	struct stat st;

	/* A directory would let the guest reach what is below it by its own
	 * rights, past its tree (the library refuses one too). */
	for (size_t i = 0; i < plan->npass; i++)
		if (fstat(plan->pass[i].fd, &st) < 0 || S_ISDIR(st.st_mode))
			return iso_why(why, n, EINVAL, "pass-fd %u: a directory, or not open",
				       plan->pass[i].num);
	/* Copied up out of the way first, above every number placed, so that
	 * no source is clobbered by another's dup2. */
	for (size_t i = 0; i < 4 + plan->npass; i++) {
		int from = i < 4 ? src[i] : plan->pass[i - 4].fd;

		high[i] = -1;
		if (from >= 0 && (high[i] = fcntl(from, F_DUPFD_CLOEXEC, floor)) < 0)
			return iso_why_errno(why, n, "placing descriptors");
	}
	/* Whatever else is open must not cross exec; dup2 then clears
	 * close-on-exec on exactly the numbers placed. */
	if (close_range(4, ~0u, CLOSE_RANGE_CLOEXEC) < 0)
		return iso_why_errno(why, n, "placing descriptors");
	for (size_t i = 0; i < 4 + plan->npass; i++) {
		int to = i < 4 ? (int)i : (int)plan->pass[i - 4].num;

		if (high[i] < 0)
			(void)close(to);
		else if (dup2(high[i], to) < 0)
			return iso_why_errno(why, n, "placing descriptors");
	}
	return 0;
}
