/*
 * confine.c - seccomp, Landlock and resource limits for the guest.
 *
 * Invariants:
 *  - confine_prepare() MUST do all compiling; the confine_apply_* functions
 *    run in every guest child and MUST only load what was prepared.
 *  - The seccomp filter MUST cover every system call entry point of the CPU
 *    (on x86_64: native, int 0x80 and x32): a rule that a compat call skips
 *    is no rule.
 *  - The filter MUST still allow what the guest child does after loading
 *    it: dup2/dup3, close/close_range, fcntl, execveat/execve, write and
 *    exit_group. It is a deny list, so only the lists below can break that.
 *  - Landlock MUST fail closed: a path the rule or the request names that
 *    cannot be opened is an error, never a rule silently dropped. Only
 *    built-in system paths missing on this machine are skipped.
 *  - REFER (moving files between directories) MUST NOT be granted outside
 *    the scratch directory.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/filter.h>
#include <linux/openat2.h>
#include <seccomp.h>

#include "confine.h"
#include "landlock.h"

/* ------------------------------------------------------------------ */
/* seccomp                                                              */

/* Denied by the default and strict profiles. */
static const int deny_default[] = {
	SCMP_SYS(ptrace),	      /* reads and steers other processes */
	SCMP_SYS(process_vm_readv),   /* reads another process's memory */
	SCMP_SYS(process_vm_writev),  /* writes another process's memory */
	SCMP_SYS(pidfd_getfd),	      /* steals another process's fds */
	SCMP_SYS(kcmp),		      /* probes other processes' kernel objects */
	SCMP_SYS(bpf),		      /* large kernel attack surface */
	SCMP_SYS(perf_event_open),    /* side channels, kernel attack surface */
	SCMP_SYS(userfaultfd),	      /* stalls the kernel to win exploit races */
	SCMP_SYS(keyctl),	      /* keyrings are per uid, not per guest */
	SCMP_SYS(add_key),	      /* same */
	SCMP_SYS(request_key),	      /* same, and can call out to user space */
	SCMP_SYS(io_uring_setup),     /* its operations bypass this filter */
	SCMP_SYS(io_uring_enter),     /* same */
	SCMP_SYS(io_uring_register),  /* same */
	SCMP_SYS(init_module),	      /* loads kernel code */
	SCMP_SYS(finit_module),	      /* same */
	SCMP_SYS(delete_module),      /* unloads kernel code */
	SCMP_SYS(kexec_load),	      /* replaces the running kernel */
	SCMP_SYS(kexec_file_load),    /* same */
	SCMP_SYS(open_by_handle_at),  /* opens files bypassing path checks */
	SCMP_SYS(name_to_handle_at),  /* hands out those handles */
	SCMP_SYS(unshare),	      /* namespaces: user ns unlocks root paths */
	SCMP_SYS(setns),	      /* joins another process's namespaces */
	SCMP_SYS(mount),	      /* changes the filesystem view */
	SCMP_SYS(umount2),	      /* same */
	SCMP_SYS(pivot_root),	      /* same */
	SCMP_SYS(move_mount),	      /* same, new mount API */
	SCMP_SYS(open_tree),	      /* same */
	SCMP_SYS(fsopen),	      /* same */
	SCMP_SYS(fsconfig),	      /* same */
	SCMP_SYS(fsmount),	      /* same */
	SCMP_SYS(fspick),	      /* same */
	SCMP_SYS(mount_setattr),      /* same */
	SCMP_SYS(chroot),	      /* same, and confuses path-based checks */
	SCMP_SYS(swapon),	      /* host administration */
	SCMP_SYS(swapoff),	      /* same */
	SCMP_SYS(reboot),	      /* same */
	SCMP_SYS(acct),		      /* same */
	SCMP_SYS(quotactl),	      /* same */
	SCMP_SYS(lookup_dcookie),     /* kernel profiling internals */
	SCMP_SYS(iopl),		      /* raw I/O port access */
	SCMP_SYS(ioperm),	      /* same */
	SCMP_SYS(syslog),	      /* kernel log, kernel addresses */
	SCMP_SYS(settimeofday),	      /* the host's clock */
	SCMP_SYS(clock_settime),      /* same */
	SCMP_SYS(clock_adjtime),      /* same */
	SCMP_SYS(adjtimex),	      /* same */
	SCMP_SYS(sethostname),	      /* the host's identity */
	SCMP_SYS(setdomainname),      /* same */
	SCMP_SYS(vhangup),	      /* hangs up a terminal others may share */
};

/* Added by the strict profile: what ordinary programs never need and where
 * kernel bugs have been found. */
static const int deny_strict[] = {
	SCMP_SYS(mbind),	      /* NUMA placement: host-wide memory policy */
	SCMP_SYS(set_mempolicy),      /* same */
	SCMP_SYS(migrate_pages),      /* moves other processes' pages */
	SCMP_SYS(move_pages),	      /* same */
	SCMP_SYS(process_madvise),    /* acts on another process's memory */
	SCMP_SYS(uselib),	      /* obsolete a.out loader */
	SCMP_SYS(vm86),		      /* obsolete virtual 8086 mode (x86) */
	SCMP_SYS(vm86old),	      /* same */
	SCMP_SYS(modify_ldt),	      /* x86 segment tables, a known exploit path */
};

/* Socket families the strict profile refuses: every one but AF_UNIX,
 * AF_INET and AF_INET6, whose code is the most used and reviewed. On x86
 * libseccomp cannot see the family of socketcall(SYS_SOCKET) (it is in
 * memory) and so refuses that call whole: 32-bit programs need the direct
 * socket() call, which every kernel since 4.3 has. */
static const uint64_t strict_socket_families_below_inet6[] = {
	AF_UNSPEC, 3, 4, 5, 6, 7, 8, 9 /* AX25 .. X25 */
};

/* clone() creating a namespace is unshare(), denied above. CLONE_NEWTIME
 * is not listed: in clone() that bit belongs to the exit signal, so only
 * clone3 (ENOSYS here) and unshare could use it. */
static const uint64_t clone_new_flags[] = {
	CLONE_NEWNS,  CLONE_NEWCGROUP, CLONE_NEWUTS, CLONE_NEWIPC,
	CLONE_NEWUSER, CLONE_NEWPID,   CLONE_NEWNET,
};

#if defined(__s390x__) || defined(__s390__)
#define CLONE_FLAGS_ARG 1 /* s390 passes the stack pointer first */
#else
#define CLONE_FLAGS_ARG 0
#endif

/* The compat entry points of the native architecture. */
static const uint32_t compat_arches[] = {
#if defined(__x86_64__)
	SCMP_ARCH_X86, SCMP_ARCH_X32,
#elif defined(__aarch64__)
	SCMP_ARCH_ARM,
#elif defined(__s390x__)
	SCMP_ARCH_S390,
#endif
	0 /* end */
};

static int deny(scmp_filter_ctx ctx, uint32_t action, int nr, unsigned argc,
		const struct scmp_arg_cmp *cmp, char *why, size_t n)
{
	int rc = seccomp_rule_add_array(ctx, action, nr, argc, cmp);

	if (rc < 0) {
		char *name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE,
							      nr);
		snprintf(why, n, "seccomp: cannot add a rule for %s: %s",
			 name ? name : "a system call", strerror(-rc));
		free(name);
	}
	return rc;
}

static int add_rules(scmp_filter_ctx ctx, const struct iso_rule *rule,
		     uint32_t action, char *why, size_t n)
{
	struct scmp_arg_cmp cmp;
	size_t i;
	int rc;

	/* glibc falls back to clone() on ENOSYS, so threads and posix_spawn
	 * keep working; clone3's flags are in memory, out of our sight. Added
	 * first so that a "deny clone3" in the rule cannot turn it to EPERM. */
	rc = deny(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0, NULL, why,
		  n);
	for (i = 0; rc == 0 && i < sizeof deny_default / sizeof *deny_default;
	     i++)
		rc = deny(ctx, action, deny_default[i], 0, NULL, why, n);
	for (i = 0; rc == 0 && i < sizeof clone_new_flags / sizeof *clone_new_flags;
	     i++) {
		cmp = SCMP_CMP(CLONE_FLAGS_ARG, SCMP_CMP_MASKED_EQ,
			       clone_new_flags[i], clone_new_flags[i]);
		rc = deny(ctx, action, SCMP_SYS(clone), 1, &cmp, why, n);
	}
	/* Terminal injection: pushes input into the caller's terminal. The
	 * kernel reads the request as 32 bits, so compare only those. */
	if (rc == 0) {
		cmp = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI);
		rc = deny(ctx, action, SCMP_SYS(ioctl), 1, &cmp, why, n);
	}
	if (rc == 0) {
		cmp = SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX);
		rc = deny(ctx, action, SCMP_SYS(ioctl), 1, &cmp, why, n);
	}
	/* personality: only PER_LINUX (0) and the query 0xffffffff; other
	 * personas turn off ASLR or make data executable. The kernel reads 32
	 * bits. Any other 32-bit value has a set bit i whose neighbour bit
	 * i+1 (mod 32) is clear, so these 32 compares match exactly the
	 * refused values (libseccomp allows one compare per argument). */
	for (i = 0; rc == 0 && i < 32; i++) {
		uint64_t bit = 1ull << i, next = 1ull << ((i + 1) % 32);

		cmp = SCMP_A0(SCMP_CMP_MASKED_EQ, bit | next, bit);
		rc = deny(ctx, action, SCMP_SYS(personality), 1, &cmp, why, n);
	}
	if (rule->seccomp == ISO_SECCOMP_STRICT) {
		for (i = 0; rc == 0 && i < sizeof deny_strict / sizeof *deny_strict;
		     i++)
			rc = deny(ctx, action, deny_strict[i], 0, NULL, why, n);
		for (i = 0; rc == 0 &&
			    i < sizeof strict_socket_families_below_inet6 /
					sizeof *strict_socket_families_below_inet6;
		     i++) {
			cmp = SCMP_A0(SCMP_CMP_EQ,
				      strict_socket_families_below_inet6[i]);
			rc = deny(ctx, action, SCMP_SYS(socket), 1, &cmp, why,
				  n);
		}
		if (rc == 0) {
			cmp = SCMP_A0(SCMP_CMP_GT, AF_INET6);
			rc = deny(ctx, action, SCMP_SYS(socket), 1, &cmp, why,
				  n);
		}
	}
	for (i = 0; rc == 0 && rule->seccomp_deny && rule->seccomp_deny[i];
	     i++) {
		int nr = seccomp_syscall_resolve_name(rule->seccomp_deny[i]);

		if (nr == __NR_SCMP_ERROR) {
			snprintf(why, n,
				 "seccomp: unknown system call \"%s\" in the "
				 "rule at line %u",
				 rule->seccomp_deny[i], rule->line);
			return -EINVAL;
		}
		rc = deny(ctx, action, nr, 0, NULL, why, n);
	}
	return rc;
}

/* libseccomp 2.5 exports only to an fd: go through a memfd. */
static int export_bpf(scmp_filter_ctx ctx, struct iso_confine *c, char *why,
		      size_t n)
{
	struct stat st;
	ssize_t got;
	int fd, rc;

	fd = memfd_create("isospawn-seccomp", MFD_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		snprintf(why, n, "seccomp: memfd_create: %s", strerror(errno));
		return rc;
	}
	rc = seccomp_export_bpf(ctx, fd);
	if (rc < 0) {
		snprintf(why, n, "seccomp: export: %s", strerror(-rc));
		goto out;
	}
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		snprintf(why, n, "seccomp: fstat: %s", strerror(errno));
		goto out;
	}
	if (st.st_size <= 0 ||
	    st.st_size > (off_t)(BPF_MAXINSNS * sizeof(struct sock_filter)) ||
	    st.st_size % sizeof(struct sock_filter) != 0) {
		rc = -E2BIG;
		snprintf(why, n, "seccomp: the filter is %jd bytes, not a "
			 "loadable program", (intmax_t)st.st_size);
		goto out;
	}
	c->bpf = malloc((size_t)st.st_size);
	if (!c->bpf) {
		rc = -ENOMEM;
		snprintf(why, n, "seccomp: out of memory");
		goto out;
	}
	got = pread(fd, c->bpf, (size_t)st.st_size, 0);
	if (got != st.st_size) {
		rc = got < 0 ? -errno : -EIO;
		snprintf(why, n, "seccomp: reading the filter back failed");
		free(c->bpf);
		c->bpf = NULL;
		goto out;
	}
	c->bpf_len = (size_t)st.st_size / sizeof(struct sock_filter);
out:
	close(fd);
	return rc;
}

static int compile_seccomp(const struct iso_rule *rule, struct iso_confine *c,
			   char *why, size_t n)
{
	uint32_t action = rule->seccomp_action == ISO_SECCOMP_KILL
				  ? SCMP_ACT_KILL_PROCESS
				  : SCMP_ACT_ERRNO(EPERM);
	scmp_filter_ctx ctx;
	size_t i;
	int rc;

	c->compile_count++;
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx) {
		snprintf(why, n, "seccomp: out of memory");
		return -ENOMEM;
	}
	/* The spawn path sets no_new_privs itself, before the credentials
	 * are verified; the filter must not depend on it. */
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	/* A binary tree instead of a linear list of syscall compares: the
	 * kernel emulates the filter for every syscall number of every
	 * architecture when it loads it, which is most of the per-guest cost
	 * of seccomp (measured: ~290 us linear, ~100 us as a tree). */
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	/* A call from an architecture the filter does not know is refused
	 * with the whole process. */
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH,
				      SCMP_ACT_KILL_PROCESS);
	if (rc < 0)
		snprintf(why, n, "seccomp: filter attributes: %s",
			 strerror(-rc));
	for (i = 0; rc == 0 && compat_arches[i] != 0; i++) {
		rc = seccomp_arch_add(ctx, compat_arches[i]);
		if (rc == -EEXIST)
			rc = 0;
		else if (rc < 0)
			snprintf(why, n, "seccomp: adding a compat "
				 "architecture: %s", strerror(-rc));
	}
	if (rc == 0)
		rc = add_rules(ctx, rule, action, why, n);
	if (rc == 0)
		rc = export_bpf(ctx, c, why, n);
	seccomp_release(ctx);
	return rc;
}

int confine_apply_seccomp(const struct iso_confine *c, char *why, size_t n)
{
	struct sock_fprog prog;

	if (!c->bpf)
		return 0;
	prog.len = (unsigned short)c->bpf_len;
	prog.filter = c->bpf;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0) {
		int err = errno;

		snprintf(why, n, "seccomp: loading the filter: %s",
			 strerror(err));
		return -err;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Landlock                                                             */

#define FS_READ                                                               \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE |          \
	 LANDLOCK_ACCESS_FS_READ_DIR)
/* The rights the kernel accepts in a rule on a file (not a directory). */
#define FS_FILE                                                               \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |         \
	 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |         \
	 LANDLOCK_ACCESS_FS_IOCTL_DEV)
/* No device nodes even in scratch (the kernel refuses them to unprivileged
 * users anyway). */
#define FS_NO_DEVICES                                                         \
	(LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_BLOCK)

/*
 * Read-only system paths every guest needs to load programs, libraries and
 * name-service basics. All are world-readable and hold no secrets. Not /etc
 * as a whole (it has admin secrets readable by groups the guest is not in,
 * but also host details), not /home, /root, /tmp, /var, /run, /proc: those
 * hold other users' data, or let a guest see other processes.
 */
static const char *const system_read[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", /* loader */
	"/etc/localtime",					  /* time zone */
	"/etc/alternatives",		 /* Debian's program symlinks */
	"/etc/ssl",			 /* CA certificates (keys are 0700) */
	"/etc/passwd", "/etc/group",	 /* getpwuid(): who am I */
	"/etc/nsswitch.conf", "/etc/hosts", "/etc/resolv.conf", /* resolver */
	"/dev/null", "/dev/zero", "/dev/full", "/dev/urandom", "/dev/random",
	NULL
};
/* Devices a guest may write: sinks that keep nothing. */
static const char *const system_write[] = {
	"/dev/null", "/dev/zero", "/dev/full", NULL
};

enum path_origin {
	PATH_BUILTIN, /* skipped when missing */
	PATH_RULE,    /* the administrator's: symlinks followed */
	PATH_REQUEST, /* the caller's: must name the object itself */
};

int landlock_abi_version(void)
{
	int abi = sys_landlock_create_ruleset(NULL, 0,
					      LANDLOCK_CREATE_RULESET_VERSION);

	return abi < 0 ? 0 : abi;
}

int landlock_decide(enum iso_landlock_mode mode, int min_abi, int abi,
		    int *degraded)
{
	*degraded = 0;
	if (mode == ISO_LANDLOCK_OFF)
		return 0;
	if (abi > 0 && abi >= min_abi)
		return 1;
	if (mode == ISO_LANDLOCK_OPTIONAL) {
		*degraded = 1;
		return 0;
	}
	return -ENOSYS;
}

static uint64_t fs_rights_of_abi(int abi)
{
	uint64_t rights = (LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1;

	if (abi >= 2)
		rights |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		rights |= LANDLOCK_ACCESS_FS_TRUNCATE;
	if (abi >= 5)
		rights |= LANDLOCK_ACCESS_FS_IOCTL_DEV;
	return rights;
}

/* Allow `rights` beneath the object open at fd, narrowed to what the
 * ruleset handles and, for a file, to file rights. */
static int grant_fd(int ruleset, int fd, uint64_t rights, uint64_t handled,
		    const char *what, char *why, size_t n)
{
	struct landlock_path_beneath_attr attr = { 0 };
	struct stat st;
	int err;

	if (fstat(fd, &st) < 0) {
		err = errno;
		snprintf(why, n, "landlock: %s: %s", what, strerror(err));
		return -err;
	}
	attr.allowed_access = rights & handled;
	if (!S_ISDIR(st.st_mode))
		attr.allowed_access &= FS_FILE;
	attr.parent_fd = fd;
	if (sys_landlock_add_rule(ruleset, LANDLOCK_RULE_PATH_BENEATH, &attr,
				  0) < 0) {
		err = errno;
		snprintf(why, n, "landlock: rule for %s: %s", what,
			 strerror(err));
		return -err;
	}
	return 0;
}

static int open_path(const char *path, enum path_origin origin)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC };

	/* A requested path was checked as text against the rule's may_read
	 * and may_write: a symlink on the way could point anywhere else. */
	if (origin == PATH_REQUEST)
		how.resolve = RESOLVE_NO_SYMLINKS;
	return (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof how);
}

static int grant_paths(int ruleset, const char *const *paths,
		       enum path_origin origin, uint64_t rights,
		       uint64_t handled, char *why, size_t n)
{
	int fd, rc;

	for (; paths && *paths; paths++) {
		fd = open_path(*paths, origin);
		if (fd < 0 && origin == PATH_BUILTIN && errno == ENOENT)
			continue;
		if (fd < 0) {
			rc = -errno;
			snprintf(why, n, "landlock: %s: %s", *paths,
				 strerror(errno));
			return rc;
		}
		rc = grant_fd(ruleset, fd, rights, handled, *paths, why, n);
		close(fd);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int add_landlock_rules(int ruleset, const struct iso_confine *c,
			      const struct iso_plan *plan, const char *scratch,
			      int program_fd, uint64_t handled, char *why,
			      size_t n)
{
	const char *const scratch_only[] = { scratch, NULL };
	const struct iso_rule *rule = c->rule;
	uint64_t rw = handled & ~FS_NO_DEVICES;
	uint64_t rw_no_refer = rw & ~LANDLOCK_ACCESS_FS_REFER;
	int rc;

	rc = grant_paths(ruleset, system_read, PATH_BUILTIN, FS_READ, handled,
			 why, n);
	if (rc == 0)
		rc = grant_paths(ruleset, system_write, PATH_BUILTIN,
				 LANDLOCK_ACCESS_FS_WRITE_FILE, handled, why,
				 n);
	if (rc == 0)
		rc = grant_paths(ruleset, (const char *const *)rule->read,
				 PATH_RULE, FS_READ, handled, why, n);
	if (rc == 0)
		rc = grant_paths(ruleset, plan->read_paths, PATH_REQUEST,
				 FS_READ, handled, why, n);
	/* The program itself, wherever it lives: file rights only. */
	if (rc == 0)
		rc = grant_fd(ruleset, program_fd, FS_READ & FS_FILE, handled,
			      "the program", why, n);
	if (rc == 0)
		rc = grant_paths(ruleset, scratch_only, PATH_RULE, rw, handled,
				 why, n);
	if (rc == 0)
		rc = grant_paths(ruleset, (const char *const *)rule->write,
				 PATH_RULE, rw_no_refer, handled, why, n);
	if (rc == 0)
		rc = grant_paths(ruleset, plan->write_paths, PATH_REQUEST,
				 rw_no_refer, handled, why, n);
	return rc;
}

int confine_apply_landlock(const struct iso_confine *c,
			   const struct iso_plan *plan, const char *scratch,
			   int program_fd, char *why, size_t n)
{
	struct iso_landlock_ruleset_attr attr = { 0 };
	int ruleset, rc;

	if (!c->landlock_on)
		return 0;
	attr.handled_access_fs = fs_rights_of_abi(c->landlock_abi);
	/* No port rules follow: every TCP bind and connect is refused, even
	 * inside the guest's own network namespace. */
	if (c->landlock_abi >= 4 && plan->network_none)
		attr.handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP |
					  LANDLOCK_ACCESS_NET_CONNECT_TCP;
	/* A guest may not signal, or connect to abstract sockets of,
	 * anything outside its own domain (the caller, other guests). */
	if (c->landlock_abi >= 6)
		attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET |
			      LANDLOCK_SCOPE_SIGNAL;
	ruleset = sys_landlock_create_ruleset(&attr, sizeof attr, 0);
	if (ruleset < 0) {
		rc = -errno;
		snprintf(why, n, "landlock: creating the ruleset: %s",
			 strerror(errno));
		return rc;
	}
	rc = add_landlock_rules(ruleset, c, plan, scratch, program_fd,
				attr.handled_access_fs, why, n);
	if (rc == 0 && sys_landlock_restrict_self(ruleset, 0) < 0) {
		rc = -errno;
		snprintf(why, n, "landlock: restrict_self: %s",
			 strerror(errno));
	}
	close(ruleset);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Preparation, once per connection                                      */

static int rule_forces_network_none(const struct iso_rule *rule)
{
	return rule->network_default == ISO_NETWORK_NONE ||
	       rule->network_none_only;
}

int confine_prepare(const struct iso_rule *rule, struct iso_confine *c,
		    char *why, size_t n)
{
	int degraded, rc;

	memset(c, 0, sizeof *c);
	c->rule = rule;
	c->landlock_abi = landlock_abi_version();
	rc = landlock_decide(rule->landlock, rule->landlock_min_abi,
			     c->landlock_abi, &degraded);
	if (rc < 0 && c->landlock_abi == 0) {
		snprintf(why, n, "landlock: the kernel has none and the rule "
			 "at line %u requires it", rule->line);
		return rc;
	}
	if (rc < 0) {
		snprintf(why, n, "landlock: the rule at line %u requires ABI "
			 "%d, the kernel has %d", rule->line,
			 rule->landlock_min_abi, c->landlock_abi);
		return rc;
	}
	c->landlock_on = rc;
	if (degraded && c->landlock_abi == 0)
		snprintf(c->notes, sizeof c->notes,
			 "landlock: kernel has none, running without it as "
			 "the policy allows");
	else if (degraded)
		snprintf(c->notes, sizeof c->notes,
			 "landlock: kernel ABI %d is below the rule's %d, "
			 "running without it as the policy allows",
			 c->landlock_abi, rule->landlock_min_abi);

	if (rule_forces_network_none(rule) &&
	    access("/proc/self/ns/net", F_OK) != 0 &&
	    !(c->landlock_on && c->landlock_abi >= 4)) {
		snprintf(why, n, "network none: the kernel has neither "
			 "network namespaces nor Landlock TCP rules");
		return -ENOSYS;
	}

	if (rule->seccomp != ISO_SECCOMP_NONE) {
		rc = compile_seccomp(rule, c, why, n);
		if (rc < 0)
			return rc;
	}
	/* Limits are rlimits (nproc is exact: one uid per guest); no cgroup
	 * is created, and the client is told so rather than left to assume. */
	size_t used = strlen(c->notes);
	snprintf(c->notes + used, sizeof c->notes - used,
		 "%slimits: rlimits only (no cgroup)", used ? "; " : "");
	return 0;
}

void confine_release(struct iso_confine *c)
{
	free(c->bpf);
	c->bpf = NULL;
	c->bpf_len = 0;
}

/* ------------------------------------------------------------------ */
/* Resource limits                                                      */

static const struct {
	int resource;
	const char *name;
} plan_limits[ISO_LIMIT_COUNT] = {
	/* CPU seconds: a spinning guest ends with SIGXCPU, then SIGKILL. */
	[ISO_LIMIT_CPU] = { RLIMIT_CPU, "cpu" },
	/* Address space: a memory bomb gets ENOMEM before the OOM killer
	 * picks some host process. */
	[ISO_LIMIT_AS] = { RLIMIT_AS, "as" },
	/* Open files: bounds the guest's share of kernel file tables. */
	[ISO_LIMIT_NOFILE] = { RLIMIT_NOFILE, "nofile" },
	/* Processes of the uid, which is leased to this guest alone: ends
	 * fork bombs. */
	[ISO_LIMIT_NPROC] = { RLIMIT_NPROC, "nproc" },
	/* File size: the guest cannot fill the disk through scratch. */
	[ISO_LIMIT_FSIZE] = { RLIMIT_FSIZE, "fsize" },
	/* Stack: runaway recursion ends early, and AS is not its only bound. */
	[ISO_LIMIT_STACK] = { RLIMIT_STACK, "stack" },
};

static int set_limit(int resource, const char *name, uint64_t value,
		     char *why, size_t n)
{
	struct rlimit rl, now;

	rl.rlim_cur = rl.rlim_max =
		value == UINT64_MAX ? RLIM_INFINITY : (rlim_t)value;
	/* CPU: the soft limit's SIGXCPU is the one unambiguous sign that the
	 * limit ended the guest. The kernel counts RLIMIT_CPU in scheduler
	 * ticks, which the precise time getrusage() reports can trail by a
	 * fifth under load, so at soft == hard the hard limit's SIGKILL
	 * could not be told from any other. The hard limit, a second later,
	 * stops a guest that ignores SIGXCPU; never raised past where it is. */
	if (resource == RLIMIT_CPU && getrlimit(RLIMIT_CPU, &now) == 0 &&
	    now.rlim_max > rl.rlim_max)
		rl.rlim_max++;
	if (setrlimit(resource, &rl) < 0) {
		int err = errno;

		snprintf(why, n, "rlimit %s: %s", name, strerror(err));
		return -err;
	}
	return 0;
}

int confine_apply_rlimits(const struct iso_plan *plan, char *why, size_t n)
{
	struct rlimit memlock;
	int i, rc;

	for (i = 0; i < ISO_LIMIT_COUNT; i++) {
		rc = set_limit(plan_limits[i].resource, plan_limits[i].name,
			       plan->limits[i], why, n);
		if (rc < 0)
			return rc;
	}
	/* No core dumps: one would hold the guest's memory and could land
	 * where others can read it. */
	rc = set_limit(RLIMIT_CORE, "core", 0, why, n);
	/* Locked memory: the kernel's historical 64 KiB lets a program lock
	 * a key in memory but not pin the host's RAM, whatever AS says. Only
	 * ever lowered: raising a hard limit needs privilege. */
	if (rc == 0 && getrlimit(RLIMIT_MEMLOCK, &memlock) < 0) {
		rc = -errno;
		snprintf(why, n, "rlimit memlock: %s", strerror(-rc));
	}
	if (rc == 0)
		rc = set_limit(RLIMIT_MEMLOCK, "memlock",
			       memlock.rlim_max < 64 * 1024 ? memlock.rlim_max
							    : 64 * 1024,
			       why, n);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Network                                                              */

int confine_network_loopback(char *why, size_t n)
{
	struct ifreq ifr = { 0 };
	int fd, rc = 0;

	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		rc = -errno;
		snprintf(why, n, "loopback: socket: %s", strerror(errno));
		return rc;
	}
	strlcpy(ifr.ifr_name, "lo", sizeof ifr.ifr_name);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
		rc = -errno;
		snprintf(why, n, "loopback: reading lo's flags: %s",
			 strerror(errno));
	} else {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0) {
			rc = -errno;
			snprintf(why, n, "loopback: bringing lo up: %s",
				 strerror(errno));
		}
	}
	close(fd);
	return rc;
}
