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
 *    it (spawn.c loads it last): execveat, fcntl, write and exit_group.
 *    It is a deny list, so only the lists below can break that.
 *  - Landlock MUST fail closed: a path the rule or the request names that
 *    cannot be opened is an error, never a rule silently dropped. Only
 *    built-in system paths missing on this machine are skipped.
 *  - REFER (moving files between directories) MUST NOT be granted outside
 *    the guest's own /tmp and /dev/shm.
 *  - The built-in and rule paths MUST be opened in the guest's tree (its
 *    template, world.c), so that each rule names what the guest will see.
 */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
#include <linux/seccomp.h>
#include <linux/openat2.h>
#include <seccomp.h>

#include "confine.h"
#include "landlock.h"
#include "util.h"

#define COUNT(array) (sizeof(array) / sizeof *(array))

/* ---- seccomp ------------------------------------------------------ */

/* A call denied outright (argc 0), or only when its argc compares are
 * all true (libseccomp allows one compare per argument). */
struct deny_rule {
	int nr;
	unsigned argc;
	struct scmp_arg_cmp cmp[2];
};
#define DENY(call) { SCMP_SYS(call), 0, { { 0, 0, 0, 0 } } }
#define DENY_IF(call, arg, op, a, b) { SCMP_SYS(call), 1, { { arg, op, a, b } } }

#if defined(__s390x__) || defined(__s390__)
#define CLONE_FLAGS_ARG 1 /* s390 passes the stack pointer first */
#else
#define CLONE_FLAGS_ARG 0
#endif
#define DENY_CLONE(flag)                                                      \
	DENY_IF(clone, CLONE_FLAGS_ARG, SCMP_CMP_MASKED_EQ, flag, flag)
#define DENY_FAMILY(family) DENY_IF(socket, 0, SCMP_CMP_EQ, family, 0)

/* Denied by the default and strict profiles. */
static const struct deny_rule deny_default[] = {
	DENY(ptrace),		 /* reads and steers other processes */
	DENY(process_vm_readv),	 /* reads another process's memory */
	DENY(process_vm_writev), /* writes another process's memory */
	DENY(pidfd_getfd),	 /* steals another process's fds */
	DENY(kcmp),		 /* probes other processes' kernel objects */
	DENY(bpf),		 /* large kernel attack surface */
	DENY(perf_event_open),	 /* side channels, kernel attack surface */
	DENY(userfaultfd),	 /* stalls the kernel to win exploit races */
	/* Keyrings are per uid, not per guest; request_key can also call
	 * out to user space. */
	DENY(keyctl), DENY(add_key), DENY(request_key),
	/* io_uring's operations bypass this filter. */
	DENY(io_uring_setup), DENY(io_uring_enter), DENY(io_uring_register),
	/* Load or unload kernel code, or replace the running kernel. */
	DENY(init_module), DENY(finit_module), DENY(delete_module),
	DENY(kexec_load), DENY(kexec_file_load),
	/* Open files bypassing path checks, and hand out the handles. */
	DENY(open_by_handle_at), DENY(name_to_handle_at),
	DENY(unshare),		 /* namespaces: user ns unlocks root paths */
	DENY(setns),		 /* joins another process's namespaces */
	/* Change the filesystem view (chroot also confuses path checks). */
	DENY(mount), DENY(umount2), DENY(pivot_root), DENY(move_mount),
	DENY(open_tree), DENY(fsopen), DENY(fsconfig), DENY(fsmount),
	DENY(fspick), DENY(mount_setattr), DENY(chroot),
	DENY(umount),		 /* i386's umount2 without flags (int 0x80 #22) */
	/* Host administration. */
	DENY(swapon), DENY(swapoff), DENY(reboot), DENY(acct), DENY(quotactl),
	DENY(quotactl_fd),
	/* Watch files and mounts past Landlock (unprivileged since 5.13). */
	DENY(fanotify_init), DENY(fanotify_mark),
	DENY(modify_ldt),	 /* x86 segment tables, a known exploit path */
	DENY(lookup_dcookie),	 /* kernel profiling internals */
	DENY(iopl), DENY(ioperm), /* raw I/O port access */
	DENY(syslog),		 /* kernel log, kernel addresses */
	/* The host's clock and identity. */
	DENY(settimeofday), DENY(clock_settime), DENY(clock_adjtime),
	DENY(adjtimex), DENY(sethostname), DENY(setdomainname),
	/* i386's own names for the same clock calls. */
	DENY(stime), DENY(clock_settime64), DENY(clock_adjtime64),
	DENY(vhangup),		 /* hangs up a terminal others may share */
	/* clone() creating a namespace is unshare(), denied above.
	 * CLONE_NEWTIME is not listed: in clone() that bit belongs to the
	 * exit signal, so only clone3 (ENOSYS here) and unshare could use it. */
	DENY_CLONE(CLONE_NEWNS), DENY_CLONE(CLONE_NEWCGROUP),
	DENY_CLONE(CLONE_NEWUTS), DENY_CLONE(CLONE_NEWIPC),
	DENY_CLONE(CLONE_NEWUSER), DENY_CLONE(CLONE_NEWPID),
	DENY_CLONE(CLONE_NEWNET),
	/* The caller's terminal, which the guest may hold as its stdio: no
	 * input pushed into it (TIOCSTI, TIOCLINUX), no signal to its
	 * foreground group, the caller's (TIOCSWINSZ sends SIGWINCH, TIOCSIG
	 * on a master any signal), no change that outlives the guest beyond
	 * its modes (TIOCSETD: the line discipline, kernel attack surface
	 * too; TIOCEXCL: every later open fails). Modes (TCSETS*, TCFLSH,
	 * TCXONC) stay: an interactive guest needs them, and they act on the
	 * terminal as its own output does. The kernel reads the request as
	 * 32 bits, so compare only those. */
	DENY_IF(ioctl, 1, SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI),
	DENY_IF(ioctl, 1, SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX),
	DENY_IF(ioctl, 1, SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSWINSZ),
	DENY_IF(ioctl, 1, SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSIG),
	DENY_IF(ioctl, 1, SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSETD),
	DENY_IF(ioctl, 1, SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCEXCL),
	/* Every socket family but AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK:
	 * AF_VSOCK reaches the hypervisor's services, AF_ALG and the rest are
	 * kernel attack surface. On x86 libseccomp cannot see the family of
	 * socketcall(SYS_SOCKET) (it is in memory) and so refuses that call
	 * whole: 32-bit programs need the direct socket() call, which every
	 * kernel since 4.3 has. 3 .. 9 are AX25 .. X25, 11 .. 15 ROSE .. KEY. */
	DENY_FAMILY(AF_UNSPEC), DENY_FAMILY(3), DENY_FAMILY(4), DENY_FAMILY(5),
	DENY_FAMILY(6), DENY_FAMILY(7), DENY_FAMILY(8), DENY_FAMILY(9),
	DENY_FAMILY(11), DENY_FAMILY(12), DENY_FAMILY(13), DENY_FAMILY(14),
	DENY_FAMILY(15), DENY_IF(socket, 0, SCMP_CMP_GT, AF_NETLINK, 0),
};

/*
 * Set-user-ID and set-group-ID bits, refused as systemd's RestrictSUIDSGID=
 * does: a file a guest leaves with one in a write grant would run as its
 * pool uid or gid for anyone on the host. The calls that take a mode, and
 * the argument that holds it; open and openat only with flags (the
 * argument before) that create a file: O_CREAT, or O_TMPFILE's own bit
 * (which systemd leaves out). Not mkdir: the kernel drops both bits from
 * its mode. openat2's mode is in memory, so it fails with ENOSYS
 * (add_rules), as fchmodat2 does (number_prefix); C libraries then use
 * openat and fchmodat.
 */
static const struct {
	int nr;
	unsigned mode_arg;
	int creates; /* only with a creating flag in mode_arg - 1 */
} setid_calls[] = {
	{ SCMP_SYS(chmod), 1, 0 },   { SCMP_SYS(fchmod), 1, 0 },
	{ SCMP_SYS(fchmodat), 2, 0 }, { SCMP_SYS(creat), 1, 0 },
	{ SCMP_SYS(mknod), 1, 0 },   { SCMP_SYS(mknodat), 2, 0 },
	{ SCMP_SYS(open), 2, 1 },    { SCMP_SYS(openat), 3, 1 },
};

/* Added by the strict profile: what ordinary programs never need and where
 * kernel bugs have been found. */
static const struct deny_rule deny_strict[] = {
	/* NUMA placement: host-wide memory policy, other processes' pages. */
	DENY(mbind), DENY(set_mempolicy), DENY(migrate_pages), DENY(move_pages),
	DENY(process_madvise),	 /* acts on another process's memory */
	DENY(uselib),		 /* obsolete a.out loader */
	DENY(vm86), DENY(vm86old), /* obsolete virtual 8086 mode (x86) */
	/* Netlink too: only AF_UNIX, AF_INET and AF_INET6, whose code is the
	 * most used and reviewed. */
	DENY_FAMILY(AF_NETLINK),
};

#if defined(__x86_64__) || defined(__aarch64__) || defined(__s390x__)
/*
 * Calls decided by number, refused like any denied call or with ENOSYS:
 * from Linux 5.1 on every architecture here (and its compat one) numbers
 * new calls alike. The filter begins with these, before libseccomp's
 * program. Those from 457 on are newer than what libseccomp 2.5.4 names;
 * fchmodat2 it names, but not the kernel headers of every build.
 */
static const struct {
	uint32_t nr;
	int enosys;
} by_number[] = {
	{ 452, 1 }, /* fchmodat2: its mode unfiltered (setid_calls) */
	{ 457, 0 }, /* statmount: the mount tree, past Landlock */
	{ 458, 0 }, /* listmount: the same */
	{ 460, 0 }, /* lsm_set_self_attr: changes the process's LSM label */
	{ 467, 0 }, /* open_tree_attr: open_tree, which is denied */
};
/* file_setattr (Linux 6.17) is the last call reviewed. Every number above
 * it is a call nobody reviewed and fails with ENOSYS, so C libraries fall
 * back as on an older kernel; numbers from ARM's private 0xf0000 (and x32's
 * 0x40000000) up are left to libseccomp's program, which knows them. */
#define REVIEWED_MAX 469
#define PRIVATE_FIRST 0xf0000
#define PREFIX_LEN (COUNT(by_number) + 5)

/* The first PREFIX_LEN instructions of the filter. */
static void number_prefix(struct sock_filter *f, uint32_t action)
{
	const size_t n = COUNT(by_number);

	f[0] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					    offsetof(struct seccomp_data, nr));
	for (size_t i = 1; i <= n; i++) /* to f[n + 3], ENOSYS, or f[n + 4], the denial */
		f[i] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, by_number[i - 1].nr,
						    (uint8_t)(by_number[i - 1].enosys ? n + 2 - i
										      : n + 3 - i), 0);
	f[n + 1] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K,
						REVIEWED_MAX, 0, 3);
	f[n + 2] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K,
						PRIVATE_FIRST, 2, 0);
	f[n + 3] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
						SECCOMP_RET_ERRNO | ENOSYS);
	f[n + 4] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, action);
}
#else
#define PREFIX_LEN 0
static void number_prefix(struct sock_filter *f, uint32_t action)
{
	(void)f;
	(void)action;
}
#endif

/* The compat entry points of the native architecture, filtered with the
 * same rules. x32 is refused whole instead: with x86_64 alone in the filter
 * libseccomp sends every x32 call (nr >= 0x40000000) to the bad-arch
 * action, which is the rule's action. Most kernels run without x32, and
 * filtering it too would cost ~0.45 ms of compilation per connection. */
static const uint32_t compat_arches[] = {
#if defined(__x86_64__)
	SCMP_ARCH_X86,
#elif defined(__aarch64__)
	SCMP_ARCH_ARM,
#elif defined(__s390x__)
	SCMP_ARCH_S390,
#endif
	0 /* end */
};

static int deny(scmp_filter_ctx ctx, uint32_t action,
		const struct deny_rule *r, char *why, size_t n)
{
	int rc = seccomp_rule_add_array(ctx, action, r->nr, r->argc, r->cmp);
	char *name;

	if (rc < 0) {
		name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, r->nr);
		iso_why(why, n, -rc, "seccomp: cannot add a rule for %s: %s",
			name ? name : "a system call", strerror(-rc));
		free(name);
	}
	return rc;
}

/* Each of setid_calls once per bit and, for open and openat, per flag. */
static int deny_setid(scmp_filter_ctx ctx, uint32_t action, char *why, size_t n)
{
	const uint64_t bits[] = { S_ISUID, S_ISGID };
	const uint64_t creating[] = { O_CREAT, O_TMPFILE & ~O_DIRECTORY };
	struct deny_rule r;
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < COUNT(setid_calls); i++)
		for (size_t k = 0; rc == 0 && k < (setid_calls[i].creates ? 4u : 2u); k++) {
			unsigned arg = setid_calls[i].mode_arg;

			r.nr = setid_calls[i].nr;
			r.argc = setid_calls[i].creates ? 2 : 1;
			r.cmp[0] = SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, bits[k % 2], bits[k % 2]);
			r.cmp[1] = SCMP_CMP(arg - 1, SCMP_CMP_MASKED_EQ, creating[k / 2],
					    creating[k / 2]);
			rc = deny(ctx, action, &r, why, n);
		}
	return rc;
}

static int add_rules(scmp_filter_ctx ctx, const struct iso_rule *rule,
		     uint32_t action, char *why, size_t n)
{
	const struct deny_rule enosys[] = { DENY(clone3), DENY(openat2) };
	struct deny_rule r = DENY(personality);
	size_t i;
	int rc = 0;

	/* glibc falls back to clone() on ENOSYS, so threads and posix_spawn
	 * keep working; clone3's flags are in memory, out of our sight, as
	 * openat2's mode is (setid_calls): C libraries use openat instead.
	 * Added first so that a "deny clone3" in the rule cannot turn it to
	 * EPERM. */
	for (i = 0; rc == 0 && i < COUNT(enosys); i++)
		rc = deny(ctx, SCMP_ACT_ERRNO(ENOSYS), &enosys[i], why, n);
	for (i = 0; rc == 0 && i < COUNT(deny_default); i++)
		rc = deny(ctx, action, &deny_default[i], why, n);
	if (rc == 0)
		rc = deny_setid(ctx, action, why, n);
	/* personality: only PER_LINUX (0) and the query 0xffffffff; other
	 * personas turn off ASLR or make data executable. The kernel reads 32
	 * bits. Any other 32-bit value has a set bit i whose neighbour bit
	 * i+1 (mod 32) is clear, so these 32 compares match exactly the
	 * refused values. */
	for (i = 0; rc == 0 && i < 32; i++) {
		uint64_t bit = 1ull << i, next = 1ull << ((i + 1) % 32);

		r.argc = 1;
		r.cmp[0] = SCMP_A0(SCMP_CMP_MASKED_EQ, bit | next, bit);
		rc = deny(ctx, action, &r, why, n);
	}
	for (i = 0; rule->seccomp == ISO_SECCOMP_STRICT && rc == 0 &&
		    i < COUNT(deny_strict); i++)
		rc = deny(ctx, action, &deny_strict[i], why, n);
	r.argc = 0;
	for (i = 0; rc == 0 && rule->seccomp_deny && rule->seccomp_deny[i];
	     i++) {
		r.nr = seccomp_syscall_resolve_name(rule->seccomp_deny[i]);
		if (r.nr == __NR_SCMP_ERROR)
			return iso_why(why, n, EINVAL,
				       "seccomp: unknown system call \"%s\" in the "
				       "rule at line %u",
				       rule->seccomp_deny[i], rule->line);
		rc = deny(ctx, action, &r, why, n);
	}
	return rc;
}

/* The program in fd from byte `skip` to its end, after PREFIX_LEN
 * instructions of our own, into c. */
static int read_bpf(int fd, off_t skip, uint32_t action, struct iso_confine *c,
		    char *why, size_t n)
{
	const off_t prefix = PREFIX_LEN * sizeof(struct sock_filter);
	struct stat st;
	off_t size;
	ssize_t got;

	if (fstat(fd, &st) < 0)
		return iso_why_errno(why, n, "seccomp: fstat");
	size = st.st_size - skip;
	/* The bound also makes bpf_len fit sock_fprog's 16-bit len. */
	if (size <= 0 || prefix + size > (off_t)(BPF_MAXINSNS * sizeof(struct sock_filter)) ||
	    size % sizeof(struct sock_filter) != 0)
		return iso_why(why, n, E2BIG, "seccomp: the filter is %jd bytes, not a "
			       "loadable program", (intmax_t)size);
	if (!(c->bpf = malloc((size_t)(prefix + size))))
		return iso_why(why, n, ENOMEM, "seccomp: out of memory");
	if ((got = pread(fd, c->bpf + PREFIX_LEN, (size_t)size, skip)) != size) {
		free(c->bpf);
		c->bpf = NULL;
		return iso_why(why, n, got < 0 ? errno : EIO,
			       "seccomp: reading the filter back failed");
	}
	c->bpf_len = (size_t)(prefix + size) / sizeof(struct sock_filter);
	number_prefix(c->bpf, action);
	return 0;
}

/* Into fd (libseccomp 2.5 exports only to an fd), after what it holds. */
static int compile_seccomp(const struct iso_rule *rule, uint32_t action, int fd,
			   char *why, size_t n)
{
	scmp_filter_ctx ctx;
	size_t i;
	int rc;

	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return iso_why(why, n, ENOMEM, "seccomp: out of memory");
	/* The spawn path sets no_new_privs itself, before the credentials
	 * are verified; the filter must not depend on it. */
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0);
	/* A binary tree instead of a linear list of syscall compares: the
	 * kernel emulates the filter for every syscall number of every
	 * architecture when it loads it, which is most of the per-guest cost
	 * of seccomp (measured: ~290 us linear, ~100 us as a tree). */
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);
	/* A call from an architecture the filter does not know (x32, see
	 * compat_arches) is refused like a denied call. */
	if (rc == 0)
		rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, action);
	if (rc < 0)
		iso_why(why, n, -rc, "seccomp: filter attributes: %s", strerror(-rc));
	for (i = 0; rc == 0 && compat_arches[i] != 0; i++) {
		rc = seccomp_arch_add(ctx, compat_arches[i]);
		if (rc == -EEXIST)
			rc = 0;
		else if (rc < 0)
			iso_why(why, n, -rc, "seccomp: adding a compat architecture: %s",
				strerror(-rc));
	}
	if (rc == 0)
		rc = add_rules(ctx, rule, action, why, n);
	if (rc == 0 && (rc = seccomp_export_bpf(ctx, fd)) < 0)
		iso_why(why, n, -rc, "seccomp: export: %s", strerror(-rc));
	seccomp_release(ctx);
	return rc;
}

/*
 * Compiling costs a millisecond or more, most of a short-lived helper's
 * start, so a program once compiled is kept for the boot in a directory
 * only the helper's uid (root) may write: a file holding the text of
 * everything that decides the program, then the program. The text names
 * the boot, the helper's binary and libseccomp's (device, inode, size,
 * times), libseccomp's version and the rule's profile, action and deny
 * list. A file is used only when its text is this text byte for byte, so
 * what it holds is what compiling would give now; nothing of a caller, a
 * request or a guest is in either.
 */
static int filter_key(const struct iso_rule *rule, char *key, size_t n)
{
	const struct scmp_version *v = seccomp_version();
	char boot[40] = "";
	struct stat st[2];
	Dl_info lib;
	size_t used;
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);

	if (fd < 0 || read(fd, boot, sizeof boot - 1) < 36 || stat("/proc/self/exe", &st[0]) < 0 ||
	    !dladdr((void *)seccomp_init, &lib) || !lib.dli_fname || stat(lib.dli_fname, &st[1]) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	used = (size_t)snprintf(key, n, "isospawn filter 1\nboot %.36s\nlibseccomp %u.%u.%u\n"
				"profile %d action %d\n", boot, v->major, v->minor, v->micro,
				(int)rule->seccomp, (int)rule->seccomp_action);
	for (int i = 0; i < 2 && used < n; i++)
		used += (size_t)snprintf(key + used, n - used, "%s %ju %ju %jd %jd.%09ld %jd.%09ld\n",
					 i ? "lib" : "exe", (uintmax_t)st[i].st_dev,
					 (uintmax_t)st[i].st_ino, (intmax_t)st[i].st_size,
					 (intmax_t)st[i].st_mtim.tv_sec, st[i].st_mtim.tv_nsec,
					 (intmax_t)st[i].st_ctim.tv_sec, st[i].st_ctim.tv_nsec);
	for (char **d = rule->seccomp_deny; d && *d && used < n; d++)
		used += (size_t)snprintf(key + used, n - used, "deny %s\n", *d);
	return used < n ? 0 : -1;
}

/* The cache file of `key` (name: its FNV-1a hash), open if it is ours
 * (owner, 0600, one link, no symlink) and begins with key and a NUL;
 * else -1. */
static int cached_filter(const char *dir, const char *key, char *path, size_t n)
{
	size_t len = strlen(key) + 1;
	uint64_t hash = 0xcbf29ce484222325u;
	char head[ISO_FILTER_KEY_MAX];
	struct stat st;
	int fd;

	for (const char *k = key; *k; k++)
		hash = (hash ^ (unsigned char)*k) * 0x100000001b3u;
	snprintf(path, n, "%s/%016jx", dir, (uintmax_t)hash);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() &&
	    (st.st_mode & 07777) == 0600 && st.st_nlink == 1 &&
	    pread(fd, head, len, 0) == (ssize_t)len && memcmp(head, key, len) == 0)
		return fd;
	if (fd >= 0)
		close(fd);
	return -1;
}

/* The rule's program: from the cache (a directory, or NULL for none), or
 * compiled, and then kept there. A cache that cannot be read or written
 * only means compiling. */
static int prepare_seccomp(const struct iso_rule *rule, const char *cache,
			   struct iso_confine *c, char *why, size_t n)
{
	uint32_t action = rule->seccomp_action == ISO_SECCOMP_KILL
				  ? SCMP_ACT_KILL_PROCESS
				  : SCMP_ACT_ERRNO(EPERM);
	char key[ISO_FILTER_KEY_MAX], path[PATH_MAX];
	int keyed = cache && filter_key(rule, key, sizeof key) == 0, fd = -1, rc;
	off_t skip = keyed ? (off_t)strlen(key) + 1 : 0;

	if (keyed && (fd = cached_filter(cache, key, path, sizeof path)) >= 0) {
		rc = read_bpf(fd, skip, action, c, why, n);
		close(fd);
		if (rc == 0)
			return 0;
	}
	/* Written unnamed (O_TMPFILE) and named once whole, so a helper that
	 * dies on the way (its caller may kill it) leaves nothing behind. */
	if (keyed && ((fd = open(cache, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600)) < 0 ||
		      write(fd, key, (size_t)skip) != skip)) {
		if (fd >= 0)
			close(fd);
		keyed = 0;
		skip = 0;
	}
	if (!keyed && (fd = memfd_create("isospawn-seccomp", MFD_CLOEXEC)) < 0)
		return iso_why_errno(why, n, "seccomp: memfd_create");
	rc = compile_seccomp(rule, action, fd, why, n);
	if (rc == 0)
		rc = read_bpf(fd, skip, action, c, why, n);
	/* In place of what was there (not usable); where another helper's
	 * came first, that one stays, and is the same. */
	if (keyed && rc == 0 && (unlink(path) == 0 || errno == ENOENT))
		(void)!linkat(fd, "", AT_FDCWD, path, AT_EMPTY_PATH);
	close(fd);
	return rc;
}

int confine_apply_seccomp(const struct iso_confine *c, char *why, size_t n)
{
	struct sock_fprog prog = { .len = (unsigned short)c->bpf_len,
				   .filter = c->bpf };

	/* No filter: the rule's explicit "seccomp none". */
	if (!c->bpf)
		return 0;
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
		return iso_why_errno(why, n, "seccomp: loading the filter");
	return 0;
}

/* ---- Landlock ----------------------------------------------------- */

#define FS_READ                                                               \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE |          \
	 LANDLOCK_ACCESS_FS_READ_DIR)
/* The rights the kernel accepts in a rule on a file (not a directory). */
#define FS_FILE                                                               \
	(LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |         \
	 LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE |         \
	 LANDLOCK_ACCESS_FS_IOCTL_DEV)
/* No device nodes even in /tmp (the kernel refuses them to unprivileged
 * users anyway). */
#define FS_NO_DEVICES                                                         \
	(LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_BLOCK)

/*
 * What every guest reads of its tree's system part (world.c builds it: all
 * read-only, and /etc only as far as its mode bits let an account without
 * groups read it). Not /proc, /tmp, /dev/shm: each guest has its own, added
 * in the guest (confine_apply_landlock).
 */
static const char *const system_read[] = {
	"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
	"/etc", "/sys/devices/system/cpu", NULL
};
/* The tree's /dev holds only null, zero, full, random, urandom and tty:
 * read and write them (the node, not the device, is read-only). */
static const char *const system_dev[] = { "/dev", NULL };
/* Listing directories anywhere: the tree holds only what the guest may
 * see (reading files still needs a rule). */
static const char *const system_root[] = { "/", NULL };

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
	int enough = abi > 0 && abi >= min_abi;

	*degraded = mode == ISO_LANDLOCK_OPTIONAL && !enough;
	if (mode == ISO_LANDLOCK_OFF)
		return 0;
	if (!*degraded)
		return enough ? 1 : -ENOSYS;
	/* Best effort, as the kernel's sandboxer sample: what the kernel has
	 * (handled_fs_of() and the ruleset follow its ABI). */
	return abi > 0;
}

/* What each ABI adds, for notes naming what an older kernel lacks. */
static const char *const landlock_adds[] = {
	[2] = "cross-directory links and renames (refused instead)",
	[3] = "truncate rules", [4] = "TCP port rules", [5] = "device ioctl rules",
	[6] = "signal and abstract-socket scoping", [7] = "audit log flags",
};

void landlock_gap(int abi, int err, int min_abi, char *buf, size_t n)
{
	size_t used;

	if (abi == 0) {
		snprintf(buf, n, "%s", err == EOPNOTSUPP
			 ? "disabled at boot (EOPNOTSUPP: landlock is not in the kernel's lsm= list)"
			 : "not in this kernel (ENOSYS)");
		return;
	}
	snprintf(buf, n, "kernel ABI %d is below the rule's %d", abi, min_abi);
	for (int i = abi + 1; i <= min_abi && i < (int)COUNT(landlock_adds); i++) {
		used = strlen(buf);
		snprintf(buf + used, n - used, "%s %s (ABI %d)", i > abi + 1 ? "," : ", so no",
			 landlock_adds[i], i);
	}
}

/* `rights` narrowed to what the ruleset handles and, for a file, to file
 * rights. */
static int rights_for(int fd, uint64_t rights, uint64_t handled,
		      uint64_t *out)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	*out = rights & handled;
	if (!S_ISDIR(st.st_mode))
		*out &= FS_FILE;
	return 0;
}

static int add_rule(int ruleset, int fd, uint64_t rights, const char *what,
		    char *why, size_t n)
{
	struct landlock_path_beneath_attr attr = { .parent_fd = fd,
						   .allowed_access = rights };

	if (sys_landlock_add_rule(ruleset, LANDLOCK_RULE_PATH_BENEATH, &attr,
				  0) < 0)
		return iso_why_errno(why, n, "landlock: rule for %s", what);
	return 0;
}

/*
 * Open each path (O_PATH) beneath `root` (AT_FDCWD: "/") and call `use`
 * with it and its narrowed rights; closes what `use` does not keep. A
 * missing built-in path is skipped.
 */
static int for_each_path(int root, const char *const *paths,
			 enum path_origin origin, uint64_t rights,
			 uint64_t handled,
			 int (*use)(void *, int, uint64_t, const char *, char *,
				    size_t),
			 void *arg, char *why, size_t n)
{
	/* A requested path was checked as text against the rule's may_read
	 * and may_write: a symlink on the way could point anywhere else. */
	struct open_how how = {
		.flags = O_PATH | O_CLOEXEC,
		.resolve = (origin == PATH_REQUEST ? RESOLVE_NO_SYMLINKS : 0) |
			   (root == AT_FDCWD ? 0 : RESOLVE_IN_ROOT),
	};
	uint64_t narrowed = 0;
	int fd, rc;

	for (; paths && *paths; paths++) {
		fd = (int)syscall(SYS_openat2, root, *paths, &how, sizeof how);
		if (fd < 0 && origin == PATH_BUILTIN && errno == ENOENT)
			continue;
		if (fd < 0)
			return iso_why_errno(why, n, "landlock: %s", *paths);
		rc = rights_for(fd, rights, handled, &narrowed);
		rc = rc < 0 ? iso_why(why, n, -rc, "landlock: %s: %s", *paths, strerror(-rc))
			    : use(arg, fd, narrowed, *paths, why, n);
		if (rc <= 0)
			close(fd);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Keeps fd (returns 1) in the prepared set. */
static int keep_fixed(void *arg, int fd, uint64_t rights, const char *path,
		      char *why, size_t n)
{
	struct iso_confine *c = arg;

	if (c->nfixed == ISO_LANDLOCK_FIXED_MAX)
		return iso_why(why, n, E2BIG, "landlock: more than %d paths at %s",
			       ISO_LANDLOCK_FIXED_MAX, path);
	c->fixed_fd[c->nfixed] = fd;
	c->fixed_rights[c->nfixed++] = rights;
	return 1;
}

static int add_now(void *arg, int fd, uint64_t rights, const char *path,
		   char *why, size_t n)
{
	return add_rule(*(int *)arg, fd, rights, path, why, n);
}

static uint64_t handled_fs_of(int abi)
{
	return ((LANDLOCK_ACCESS_FS_MAKE_SYM << 1) - 1) |
	       (abi >= 2 ? LANDLOCK_ACCESS_FS_REFER : 0) |
	       (abi >= 3 ? LANDLOCK_ACCESS_FS_TRUNCATE : 0) |
	       (abi >= 5 ? LANDLOCK_ACCESS_FS_IOCTL_DEV : 0);
}

/* Once per connection, as root: the paths every guest of the rule is
 * granted. Opening them as root gives no more than the guest's own uid
 * could reach: Landlock only narrows what the kernel's permission checks
 * already allow. */
static int prepare_landlock(struct iso_confine *c, char *why, size_t n)
{
	uint64_t handled = handled_fs_of(c->landlock_abi);
	uint64_t rw_no_refer = handled & ~FS_NO_DEVICES & ~LANDLOCK_ACCESS_FS_REFER;
	const struct {
		const char *const *paths;
		enum path_origin origin;
		uint64_t rights;
	} fixed[] = {
		{ system_read, PATH_BUILTIN, FS_READ },
		{ system_dev, PATH_BUILTIN, FS_READ | LANDLOCK_ACCESS_FS_WRITE_FILE },
		{ system_root, PATH_BUILTIN, LANDLOCK_ACCESS_FS_READ_DIR },
		{ (const char *const *)c->rule->read, PATH_RULE, FS_READ },
		{ (const char *const *)c->rule->write, PATH_RULE, rw_no_refer },
	};
	int rc = 0;

	c->handled_fs = handled;
	for (size_t i = 0; rc == 0 && i < COUNT(fixed); i++)
		rc = for_each_path(c->root_fd, fixed[i].paths, fixed[i].origin,
				   fixed[i].rights, handled, keep_fixed, c, why, n);
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
	char ignored[8];
	int mode;

	for (int i = 0; i < 3; i++) {
		mode = fcntl(stdio[i], F_GETFL);
		/* Never a directory: a rule there would open its whole tree. */
		if (mode < 0 || fstat(stdio[i], &st) < 0 || S_ISDIR(st.st_mode) ||
		    (mode & O_ACCMODE) > O_RDWR)
			continue;
		(void)add_rule(ruleset, stdio[i], by_mode[mode & O_ACCMODE] & handled,
			       "stdio", ignored, sizeof ignored);
	}
}

int confine_apply_landlock(const struct iso_confine *c,
			   const struct iso_plan *plan, int program_fd,
			   const int stdio[3], char *why, size_t n)
{
	/* The guest's own, mounted by its reaper (world.c): opened here, in
	 * its tree, as Landlock skips the mount point under a mount, so a rule
	 * on the template's directory would not cover them. */
	const char *const own_rw[] = { "/tmp", "/dev/shm", NULL };
	const char *const own_read[] = { "/proc", NULL };
	struct iso_landlock_ruleset_attr attr = { 0 };
	uint64_t handled = c->handled_fs, rw, rw_no_refer, prog = 0;
	int abi = c->landlock_abi, ruleset, rc = 0;
	size_t i;

	if (!c->landlock_on)
		return 0;
	attr.handled_access_fs = handled;
	/* No port rules follow: every TCP bind and connect is refused, even
	 * inside the guest's own network namespace. */
	if (abi >= 4 && plan->network_none)
		attr.handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP |
					  LANDLOCK_ACCESS_NET_CONNECT_TCP;
	/* A guest may not signal, or connect to abstract sockets of,
	 * anything outside its own domain (the caller, other guests). */
	if (abi >= 6)
		attr.scoped = LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET |
			      LANDLOCK_SCOPE_SIGNAL;
	rw = handled & ~FS_NO_DEVICES;
	rw_no_refer = rw & ~LANDLOCK_ACCESS_FS_REFER;
	const struct {
		const char *const *paths;
		enum path_origin origin;
		uint64_t rights;
	} grants[] = {
		{ plan->read_paths, PATH_REQUEST, FS_READ },
		{ own_rw, PATH_RULE, rw },
		{ own_read, PATH_RULE, FS_READ },
		{ plan->write_paths, PATH_REQUEST, rw_no_refer },
	};

	ruleset = sys_landlock_create_ruleset(&attr, sizeof attr, 0);
	if (ruleset < 0)
		return iso_why_errno(why, n, "landlock: creating the ruleset");
	for (i = 0; rc == 0 && i < c->nfixed; i++)
		rc = add_rule(ruleset, c->fixed_fd[i], c->fixed_rights[i],
			      "a prepared path", why, n);
	for (i = 0; rc == 0 && i < COUNT(grants); i++)
		rc = for_each_path(AT_FDCWD, grants[i].paths, grants[i].origin,
				   grants[i].rights, handled, add_now, &ruleset,
				   why, n);
	/* The program itself, wherever it lives: file rights only (a
	 * ruleset's rules are a set: their order changes nothing). */
	if (rc == 0 && (rc = rights_for(program_fd, FS_READ & FS_FILE, handled,
					&prog)) < 0)
		rc = iso_why(why, n, -rc, "landlock: the program: %s", strerror(-rc));
	if (rc == 0)
		rc = add_rule(ruleset, program_fd, prog, "the program", why, n);
	if (rc == 0)
		add_stdio(ruleset, stdio, handled);
	if (rc == 0 && sys_landlock_restrict_self(ruleset, 0) < 0)
		rc = iso_why_errno(why, n, "landlock: restrict_self");
	close(ruleset);
	return rc;
}

/* ---- Preparation, once per connection ----------------------------- */

int confine_prepare(const struct iso_rule *rule, int root_fd,
		    const char *filter_cache, struct iso_confine *c, char *why,
		    size_t n)
{
	char gap[400];
	int degraded, rc;
	size_t used;

	memset(c, 0, sizeof *c);
	c->rule = rule;
	c->root_fd = root_fd;
	c->landlock_abi = landlock_abi_version();
	landlock_gap(c->landlock_abi, errno, rule->landlock_min_abi, gap, sizeof gap);
	rc = landlock_decide(rule->landlock, rule->landlock_min_abi,
			     c->landlock_abi, &degraded);
	if (rc < 0)
		return iso_why(why, n, -rc, "landlock: %s; the rule at line %u requires it", gap,
			       rule->line);
	c->landlock_on = rc;
	if (degraded)
		snprintf(c->notes, sizeof c->notes, "landlock: %s; running %s as the policy allows",
			 gap, rc ? "with what the kernel has" : "without it");

	if ((rule->network_default == ISO_NETWORK_NONE ||
	     rule->network_none_only) &&
	    access("/proc/self/ns/net", F_OK) != 0 &&
	    !(c->landlock_on && c->landlock_abi >= 4))
		return iso_why(why, n, ENOSYS, "network none: the kernel has neither "
			       "network namespaces nor Landlock TCP rules");
	if ((c->landlock_on && (rc = prepare_landlock(c, why, n)) < 0) ||
	    (rule->seccomp != ISO_SECCOMP_NONE &&
	     (rc = prepare_seccomp(rule, filter_cache, c, why, n)) < 0)) {
		confine_release(c);
		return rc;
	}
	/* Limits are rlimits (nproc is exact: one uid per guest); no cgroup
	 * is created, and the client is told so rather than left to assume. */
	used = strlen(c->notes);
	snprintf(c->notes + used, sizeof c->notes - used,
		 "%slimits: rlimits only (no cgroup)", used ? "; " : "");
	return 0;
}

void confine_release(struct iso_confine *c)
{
	while (c->nfixed > 0)
		close(c->fixed_fd[--c->nfixed]);
	free(c->bpf);
	c->bpf = NULL;
	c->bpf_len = 0;
}

/* ---- Resource limits ---------------------------------------------- */

/* The rlimit behind each limit, or -1 for the two that are tmpfs sizes
 * (scratch and shm: world.c). */
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
	/* Locked memory: the kernel's historical 64 KiB lets a program lock
	 * a key in memory but not pin the host's RAM, whatever AS says. Only
	 * ever lowered: raising a hard limit needs privilege. */
	if (rc == 0 && getrlimit(RLIMIT_MEMLOCK, &memlock) < 0)
		rc = iso_why_errno(why, n, "rlimit memlock");
	if (rc == 0)
		rc = set_limit(RLIMIT_MEMLOCK, "memlock",
			       memlock.rlim_max < 64 * 1024 ? memlock.rlim_max
							    : 64 * 1024,
			       why, n);
	return rc;
}

/* ---- Network ------------------------------------------------------ */

int confine_apply_network(const struct iso_plan *plan, char *why, size_t n)
{
	struct ifreq ifr = { 0 };
	int fd, rc = 0;

	/* The host network: nothing to set up. */
	if (!plan->network_none)
		return 0;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return iso_why_errno(why, n, "loopback: socket");
	strlcpy(ifr.ifr_name, "lo", sizeof ifr.ifr_name);
	if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0) {
		rc = iso_why_errno(why, n, "loopback: reading lo's flags");
	} else {
		ifr.ifr_flags |= IFF_UP;
		if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
			rc = iso_why_errno(why, n, "loopback: bringing lo up");
	}
	close(fd);
	return rc;
}

/* ---- Descriptors -------------------------------------------------- */

int confine_apply_fds(const int src[4], char *why, size_t n)
{
	int high[4];

	/* Moved up out of the way first, so that no source is clobbered
	 * by another's dup2. */
	for (int i = 0; i < 4; i++) {
		high[i] = -1;
		if (src[i] >= 0 && (high[i] = fcntl(src[i], F_DUPFD_CLOEXEC, 16)) < 0)
			return iso_why_errno(why, n, "placing stdio");
	}
	for (int i = 0; i < 4; i++) {
		if (high[i] < 0)
			(void)close(i);
		else if (dup2(high[i], i) < 0)
			return iso_why_errno(why, n, "placing stdio");
	}
	/* Belt and braces: whatever else is open must not cross exec. */
	if (close_range(4, ~0u, CLOSE_RANGE_CLOEXEC) < 0)
		return iso_why_errno(why, n, "placing stdio");
	return 0;
}
