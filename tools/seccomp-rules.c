/*
 * seccomp-rules.c - the guest's seccomp filter, as libseccomp compiles it,
 * at build time: tools/seccomp-gen writes the programs into the helper
 * (seccomp-tables.c), so the setuid helper neither links libseccomp nor
 * compiles anything.
 *
 * Invariants (the helper's, helper/confine.c, checked by its tests):
 *  - The filter MUST cover every system call entry point of the CPU (on
 *    x86_64: native, int 0x80 and x32): a rule that a compat call skips is
 *    no rule.
 *  - The filter MUST still allow what the guest child does after loading
 *    it: dup2/dup3, close/close_range, fcntl, execveat/execve, write and
 *    exit_group. It is a deny list, so only the lists below can break that.
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <linux/fscrypt.h>
#include <linux/netlink.h>
#include <linux/seccomp.h>
#include <seccomp.h>

#include "seccomp-rules.h"
#include "util.h"

/* A call denied outright (argc 0), or only when its argc compares are
 * all true (libseccomp allows one compare per argument). */
struct deny_rule {
	int nr;
	unsigned argc;
	struct scmp_arg_cmp cmp[2];
};
#define DENY(call)                         \
	{                                  \
		SCMP_SYS(call), 0,         \
		{                          \
			{                  \
				0, 0, 0, 0 \
			}                  \
		}                          \
	}
#define DENY_IF(call, arg, op, a, b)          \
	{                                     \
		SCMP_SYS(call), 1,            \
		{                             \
			{                     \
				arg, op, a, b \
			}                     \
		}                             \
	}

#if defined(__s390x__) || defined(__s390__)
#define CLONE_FLAGS_ARG 1 /* s390 passes the stack pointer first */
#else
#define CLONE_FLAGS_ARG 0
#endif
#define DENY_CLONE(flag) DENY_IF(clone, CLONE_FLAGS_ARG, SCMP_CMP_MASKED_EQ, flag, flag)
#define DENY_FAMILY(family) DENY_IF(socket, 0, SCMP_CMP_EQ, family, 0)
/* A netlink protocol: the kernel reads it as 32 bits (and the family's
 * high bits are refused by the family rules). */
#define DENY_NETLINK(protocol)                                               \
	{                                                                    \
		SCMP_SYS(socket), 2,                                         \
		{                                                            \
			{ 0, SCMP_CMP_EQ, AF_NETLINK, 0 },                   \
			{                                                    \
				2, SCMP_CMP_MASKED_EQ, 0xffffffffu, protocol \
			}                                                    \
		}                                                            \
	}

/* Denied by the default and strict profiles. */
static const struct deny_rule deny_default[] = {
	DENY(ptrace), /* reads and steers other processes */
	DENY(process_vm_readv), /* reads another process's memory */
	DENY(process_vm_writev), /* writes another process's memory */
	DENY(pidfd_getfd), /* steals another process's fds */
	DENY(kcmp), /* probes other processes' kernel objects */
	DENY(bpf), /* large kernel attack surface */
	DENY(perf_event_open), /* side channels, kernel attack surface */
	DENY(userfaultfd), /* stalls the kernel to win exploit races */
	/* Keyrings are per uid, not per guest; request_key can also call
	 * out to user space. */
	DENY(keyctl),
	DENY(add_key),
	DENY(request_key),
	/* io_uring's operations bypass this filter. */
	DENY(io_uring_setup),
	DENY(io_uring_enter),
	DENY(io_uring_register),
	/* Load or unload kernel code, or replace the running kernel. */
	DENY(init_module),
	DENY(finit_module),
	DENY(delete_module),
	DENY(kexec_load),
	DENY(kexec_file_load),
	/* Open files bypassing path checks, and hand out the handles. */
	DENY(open_by_handle_at),
	DENY(name_to_handle_at),
	DENY(unshare), /* namespaces: user ns unlocks root paths */
	DENY(setns), /* joins another process's namespaces */
	/* Change the filesystem view (chroot also confuses path checks). */
	DENY(mount),
	DENY(umount2),
	DENY(pivot_root),
	DENY(move_mount),
	DENY(open_tree),
	DENY(fsopen),
	DENY(fsconfig),
	DENY(fsmount),
	DENY(fspick),
	DENY(mount_setattr),
	DENY(chroot),
	DENY(umount), /* i386's umount2 without flags (int 0x80 #22) */
	/* Host administration. */
	DENY(swapon),
	DENY(swapoff),
	DENY(reboot),
	DENY(acct),
	DENY(quotactl),
	DENY(quotactl_fd),
	/* Watch files and mounts past Landlock (unprivileged since 5.13). */
	DENY(fanotify_init),
	DENY(fanotify_mark),
	DENY(modify_ldt), /* x86 segment tables, a known exploit path */
	DENY(lookup_dcookie), /* kernel profiling internals */
	DENY(iopl),
	DENY(ioperm), /* raw I/O port access */
	DENY(syslog), /* kernel log, kernel addresses */
	/* The host's clock and identity. */
	DENY(settimeofday),
	DENY(clock_settime),
	DENY(clock_adjtime),
	DENY(adjtimex),
	DENY(sethostname),
	DENY(setdomainname),
	/* i386's own names for the same clock calls. */
	DENY(stime),
	DENY(clock_settime64),
	DENY(clock_adjtime64),
	DENY(vhangup), /* hangs up a terminal others may share */
	/* clone() creating a namespace is unshare(), denied above.
	 * CLONE_NEWTIME is not listed: in clone() that bit belongs to the
	 * exit signal, so only clone3 (ENOSYS here) and unshare could use it. */
	DENY_CLONE(CLONE_NEWNS),
	DENY_CLONE(CLONE_NEWCGROUP),
	DENY_CLONE(CLONE_NEWUTS),
	DENY_CLONE(CLONE_NEWIPC),
	DENY_CLONE(CLONE_NEWUSER),
	DENY_CLONE(CLONE_NEWPID),
	DENY_CLONE(CLONE_NEWNET),
	/* The caller's terminal, which the guest may hold as its stdio: no
	 * input pushed into it (TIOCSTI, TIOCLINUX), no signal to its
	 * foreground group, the caller's (TIOCSWINSZ sends SIGWINCH, TIOCSIG
	 * on a master any signal), no change that outlives the guest beyond
	 * its modes (TIOCSETD: the line discipline, kernel attack surface
	 * too; TIOCEXCL: every later open fails), and it takes none as its
	 * controlling terminal (TIOCSCTTY, from a session of its own: that
	 * session's end hangs up a terminal that is not a pseudo-terminal,
	 * for everyone, as vhangup does). Modes (TCSETS*, TCFLSH,
	 * TCXONC) stay: an interactive guest needs them, and they act on the
	 * terminal as its own output does. The kernel reads the request as
	 * 32 bits, so compare only those. */
	DENY_IF(ioctl, 1, SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI),
	DENY_IF(ioctl, 1, SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX),
	DENY_IF(ioctl, 1, SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSWINSZ),
	DENY_IF(ioctl, 1, SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSIG),
	DENY_IF(ioctl, 1, SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSETD),
	DENY_IF(ioctl, 1, SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCEXCL),
	DENY_IF(ioctl, 1, SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSCTTY),
	/* A key any user may add to a file system's own keyring (fscrypt,
	 * where the file system has the encrypt feature), which stays there
	 * after the guest, charged to its uid, for the uid's next guest to
	 * find. */
	DENY_IF(ioctl, 1, SCMP_CMP_MASKED_EQ, 0xffffffffu, FS_IOC_ADD_ENCRYPTION_KEY),
	/* Every socket family but AF_UNIX, AF_INET, AF_INET6 and AF_NETLINK:
	 * AF_VSOCK reaches the hypervisor's services, AF_ALG and the rest are
	 * kernel attack surface. On x86 libseccomp cannot see the family of
	 * socketcall(SYS_SOCKET) (it is in memory) and so refuses that call
	 * whole: 32-bit programs need the direct socket() call, which every
	 * kernel since 4.3 has. 3 .. 9 are AX25 .. X25, 11 .. 15 ROSE .. KEY. */
	DENY_FAMILY(AF_UNSPEC),
	DENY_FAMILY(3),
	DENY_FAMILY(4),
	DENY_FAMILY(5),
	DENY_FAMILY(6),
	DENY_FAMILY(7),
	DENY_FAMILY(8),
	DENY_FAMILY(9),
	DENY_FAMILY(11),
	DENY_FAMILY(12),
	DENY_FAMILY(13),
	DENY_FAMILY(14),
	DENY_FAMILY(15),
	DENY_IF(socket, 0, SCMP_CMP_GT, AF_NETLINK, 0),
};

/* Denied by the default profile alone, since the strict one refuses all
 * of netlink (and libseccomp 2.5.4 leaks the rules a broader one added
 * after them supersedes). Of netlink, not the two protocols that hand the
 * host's events to any listener: the proc connector, every process's
 * fork, exec, uid change and exit on the host network once anything on
 * the host listens; and device events (NETLINK_KOBJECT_UEVENT), which
 * reach every network namespace root made, network none's too. */
static const struct deny_rule deny_default_only[] = {
	DENY_NETLINK(NETLINK_CONNECTOR),
	DENY_NETLINK(NETLINK_KOBJECT_UEVENT),
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
	{ SCMP_SYS(chmod), 1, 0 }, { SCMP_SYS(fchmod), 1, 0 }, { SCMP_SYS(fchmodat), 2, 0 },
	{ SCMP_SYS(creat), 1, 0 }, { SCMP_SYS(mknod), 1, 0 },  { SCMP_SYS(mknodat), 2, 0 },
	{ SCMP_SYS(open), 2, 1 },  { SCMP_SYS(openat), 3, 1 },
};

/* Added by the strict profile: what ordinary programs never need and where
 * kernel bugs have been found. */
static const struct deny_rule deny_strict[] = {
	/* NUMA placement: host-wide memory policy, other processes' pages. */
	DENY(mbind),
	DENY(set_mempolicy),
	DENY(migrate_pages),
	DENY(move_pages),
	DENY(process_madvise), /* acts on another process's memory */
	DENY(uselib), /* obsolete a.out loader */
	DENY(vm86),
	DENY(vm86old), /* obsolete virtual 8086 mode (x86) */
	/* Netlink too: only AF_UNIX, AF_INET and AF_INET6, whose code is the
	 * most used and reviewed. */
	DENY_FAMILY(AF_NETLINK),
};

#if defined(__x86_64__) || defined(__aarch64__) || defined(__s390x__)
/*
 * Calls decided by number, refused like any denied call or with ENOSYS:
 * from Linux 5.1 on every architecture here (and its compat one) numbers
 * new calls alike. The program begins with these, before libseccomp's
 * (the helper puts a rule's own seccomp-deny list before both). Those
 * from 457 on are newer than what libseccomp 2.5.4 names; fchmodat2 it
 * names, but not the kernel headers of every build.
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
		f[i] = (struct sock_filter)BPF_JUMP(
		    BPF_JMP | BPF_JEQ | BPF_K, by_number[i - 1].nr,
		    (uint8_t)(by_number[i - 1].enosys ? n + 2 - i : n + 3 - i), 0);
	f[n + 1] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, REVIEWED_MAX, 0, 3);
	f[n + 2] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, PRIVATE_FIRST, 2, 0);
	f[n + 3] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
	f[n + 4] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, action);
}

/* Whether number_prefix answers nr with ENOSYS. */
static int number_enosys(uint32_t nr)
{
	for (size_t i = 0; i < COUNT(by_number); i++)
		if (by_number[i].nr == nr)
			return by_number[i].enosys;
	return nr > REVIEWED_MAX && nr < PRIVATE_FIRST;
}
#else
#define PREFIX_LEN 0
static void number_prefix(struct sock_filter *f, uint32_t action)
{
	(void)f;
	(void)action;
}

static int number_enosys(uint32_t nr)
{
	(void)nr;
	return 0;
}
#endif

/* The compat entry points of the native architecture, filtered with the
 * same rules. x32 is refused whole instead: with x86_64 alone in the filter
 * libseccomp sends every x32 call (nr >= 0x40000000) to the bad-arch
 * action, which is the rule's action. Most kernels run without x32, and
 * filtering it too would make a longer program for every guest to load. */
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

static int fail(int rc, const char *what, const char *name)
{
	fprintf(stderr, "seccomp-rules: %s%s%s: %s\n", what, name ? " " : "", name ? name : "",
		strerror(-rc));
	return rc;
}

static int deny(scmp_filter_ctx ctx, uint32_t action, const struct deny_rule *r)
{
	int rc = seccomp_rule_add_array(ctx, action, r->nr, r->argc, r->cmp);
	char *name;

	if (rc < 0) {
		name = seccomp_syscall_resolve_num_arch(SCMP_ARCH_NATIVE, r->nr);
		fail(rc, "cannot add a rule for", name ? name : "a system call");
		free(name);
	}
	return rc;
}

/* Each of setid_calls once per bit and, for open and openat, per flag. */
static int deny_setid(scmp_filter_ctx ctx, uint32_t action)
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
			r.cmp[1] =
			    SCMP_CMP(arg - 1, SCMP_CMP_MASKED_EQ, creating[k / 2], creating[k / 2]);
			rc = deny(ctx, action, &r);
		}
	return rc;
}

/* The ENOSYS answers of add_rules, whatever a rule denies. */
static const char *const enosys_calls[] = { "clone3", "openat2", "io_setup" };

static int add_rules(scmp_filter_ctx ctx, int strict, uint32_t action, char *const *names)
{
	struct deny_rule r = DENY(personality);
	size_t i;
	int rc = 0;

	/* glibc falls back to clone() on ENOSYS, so threads and posix_spawn
	 * keep working; clone3's flags are in memory, out of our sight, as
	 * openat2's mode is (setid_calls): C libraries use openat instead.
	 * io_setup: the kernel's AIO contexts are one table for the whole
	 * host (fs.aio-max-nr), which no rlimit counts and one guest could
	 * fill, failing every other process's io_setup until it ends;
	 * programs fall back as on a kernel built without AIO (glibc's
	 * aio_* use threads anyway). Added first so that a "deny clone3" in
	 * the rule cannot turn it to EPERM (the helper's prefix for the
	 * rule's list leaves them out: rules_enosys). */
	for (i = 0; rc == 0 && i < COUNT(enosys_calls); i++) {
		struct deny_rule e = { seccomp_syscall_resolve_name(enosys_calls[i]),
				       0,
				       { { 0 } } };

		rc = deny(ctx, SCMP_ACT_ERRNO(ENOSYS), &e);
	}
	for (i = 0; rc == 0 && i < COUNT(deny_default); i++)
		rc = deny(ctx, action, &deny_default[i]);
	for (i = 0; !strict && rc == 0 && i < COUNT(deny_default_only); i++)
		rc = deny(ctx, action, &deny_default_only[i]);
	if (rc == 0)
		rc = deny_setid(ctx, action);
	/* personality: only PER_LINUX (0) and the query 0xffffffff; other
	 * personas turn off ASLR or make data executable. The kernel reads 32
	 * bits. Any other 32-bit value has a set bit i whose neighbour bit
	 * i+1 (mod 32) is clear, so these 32 compares match exactly the
	 * refused values. */
	for (i = 0; rc == 0 && i < 32; i++) {
		uint64_t bit = 1ull << i, next = 1ull << ((i + 1) % 32);

		r.argc = 1;
		r.cmp[0] = SCMP_A0(SCMP_CMP_MASKED_EQ, bit | next, bit);
		rc = deny(ctx, action, &r);
	}
	for (i = 0; strict && rc == 0 && i < COUNT(deny_strict); i++)
		rc = deny(ctx, action, &deny_strict[i]);
	/* Only the test's reference: a rule's list, as libseccomp compiled it
	 * when the helper did. */
	r.argc = 0;
	for (i = 0; rc == 0 && names && names[i]; i++) {
		r.nr = seccomp_syscall_resolve_name(names[i]);
		rc = r.nr == __NR_SCMP_ERROR ? fail(-EINVAL, "unknown system call", names[i])
					     : deny(ctx, action, &r);
	}
	return rc;
}

/* Into fd (libseccomp 2.5 exports only to an fd). */
static int compile_seccomp(int strict, uint32_t action, char *const *names, int fd)
{
	scmp_filter_ctx ctx;
	size_t i;
	int rc;

	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return fail(-ENOMEM, "seccomp_init", NULL);
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
		fail(rc, "filter attributes", NULL);
	for (i = 0; rc == 0 && compat_arches[i] != 0; i++) {
		rc = seccomp_arch_add(ctx, compat_arches[i]);
		if (rc == -EEXIST)
			rc = 0;
		else if (rc < 0)
			fail(rc, "adding a compat architecture", NULL);
	}
	if (rc == 0)
		rc = add_rules(ctx, strict, action, names);
	if (rc == 0 && (rc = seccomp_export_bpf(ctx, fd)) < 0)
		fail(rc, "export", NULL);
	seccomp_release(ctx);
	return rc;
}

int rules_compile(int strict, uint32_t action, char *const *deny, struct sock_filter **prog,
		  size_t *len)
{
	int fd = memfd_create("seccomp-rules", MFD_CLOEXEC), rc;
	struct stat st;

	if (fd < 0)
		return fail(-errno, "memfd_create", NULL);
	rc = compile_seccomp(strict, action, deny, fd);
	if (rc == 0 && fstat(fd, &st) < 0)
		rc = fail(-errno, "fstat", NULL);
	if (rc == 0 && (st.st_size <= 0 || st.st_size % sizeof(struct sock_filter) != 0))
		rc = fail(-EIO, "libseccomp exported no program", NULL);
	if (rc == 0) {
		*len = PREFIX_LEN + (size_t)st.st_size / sizeof(struct sock_filter);
		*prog = calloc(*len, sizeof(struct sock_filter));
		if (!*prog)
			rc = fail(-ENOMEM, "calloc", NULL);
	}
	if (rc == 0 && pread(fd, *prog + PREFIX_LEN, (size_t)st.st_size, 0) != st.st_size) {
		free(*prog);
		rc = fail(-EIO, "reading the program back", NULL);
	}
	if (rc == 0)
		number_prefix(*prog, action);
	close(fd);
	return rc;
}

int rules_enosys(uint32_t arch, int nr)
{
	for (size_t i = 0; i < COUNT(enosys_calls); i++) {
		int call = seccomp_syscall_resolve_name_arch(arch, enosys_calls[i]);

		if (call == __NR_SCMP_ERROR)
			return fail(-EINVAL, "unknown system call", enosys_calls[i]);
		if (call == nr)
			return 1;
	}
	return number_enosys((uint32_t)nr);
}

uint32_t rules_compat_arch(void)
{
	return compat_arches[0];
}
