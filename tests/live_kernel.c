/*
 * live_kernel.c - seccomp, Landlock, rlimits and the loopback of
 * helper/confine.c, applied to processes of the running kernel.
 *
 * Every mechanism is applied in a child forked by the test, which then
 * tries the forbidden (or allowed) action and exits with the errno it saw
 * (0 = the action succeeded). Probe, then test (feature.h): a check that a
 * filter refuses a call is added only where the same call, made without
 * any filter, does not already end that way (a missing entry point, user
 * namespaces switched off, no privilege for the call); the Landlock,
 * loopback and infinite-rlimit checks need root and the kernel feature.
 * Each check that cannot run here prints "SKIP: check: why".
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <linux/filter.h>
#include <linux/fscrypt.h>
#include <linux/keyctl.h>
#include <linux/netlink.h>
#include <linux/openat2.h>
#include <linux/seccomp.h>
#include <linux/sched.h>

#include "confine.h"
#include "feature.h"
#include "util.h"
#include "world.h"

#define NOBODY 65534
/* The guest-side probe, built without sanitizers (feature_int80()). */
#define PROBE ISO_BUILDDIR "/tests/probe"

static int wait_child(pid_t pid)
{
	int status;

	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	return status;
}

static int exit_code(int status)
{
	ck_assert_msg(WIFEXITED(status), "child died of signal %d",
		      WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	ck_assert_msg(WEXITSTATUS(status) != SETUP_FAILED, "child could not confine itself");
	return WEXITSTATUS(status);
}

/* The errno of a call that returns -1 on failure, 0 if it succeeded. */
static int outcome(long rc)
{
	return rc < 0 ? errno : 0;
}

/* ------------------------------------------------------------------ */
/* confine_prepare                                                      */

/* The caller world_prepare() builds for here: root, in this namespace. */
static const struct iso_caller root_caller = { .mnt_ns = -1, .net_ns = -1 };

static struct iso_rule make_rule(enum iso_seccomp_profile profile, enum iso_landlock_mode landlock)
{
	struct iso_rule rule;

	memset(&rule, 0, sizeof rule);
	rule.line = 7;
	rule.network_default = ISO_NETWORK_HOST;
	rule.seccomp = profile;
	rule.seccomp_action = ISO_SECCOMP_ERRNO;
	rule.landlock = landlock;
	return rule;
}

static void prepare(const struct iso_rule *rule, struct iso_confine *c)
{
	char why[256] = "";

	ck_assert_msg(confine_prepare(rule, c, why, sizeof why) == 0, "confine_prepare: %s", why);
}

/* ------------------------------------------------------------------ */
/* seccomp, in forked children                                          */

/* Fork; the child sets no_new_privs, loads c's filter and exits with what
 * fn returns. Returns the wait status. */
/* When set, a filter loaded before c's answers E2BIG for every number from
 * 470 up: a call c's filter lets through then fails with E2BIG, one c's
 * filter refuses with its own errno (the later filter's wins), where the
 * kernel alone would answer ENOSYS either way. */
static int mark_new_numbers;

static int load_marker(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 470, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | E2BIG),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof f / sizeof *f, .filter = f };

	return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
}

static int run_filtered(const struct iso_confine *c, int (*fn)(void))
{
	pid_t pid = fork();

	if (pid == 0) {
		char why[256] = "";

		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
		    (mark_new_numbers && load_marker() < 0) ||
		    confine_apply_seccomp(c, why, sizeof why) < 0) {
			fprintf(stderr, "seccomp: %s\n", why);
			_exit(SETUP_FAILED);
		}
		child_exit(fn());
	}
	return wait_child(pid);
}

/* Prepare `profile` with `action` and run fn under it. */
static int filtered(enum iso_seccomp_profile profile, enum iso_seccomp_action action, char **deny,
		    int (*fn)(void))
{
	struct iso_rule rule = make_rule(profile, ISO_LANDLOCK_OFF);
	struct iso_confine c;
	int status;

	rule.seccomp_action = action;
	rule.seccomp_deny = deny;
	prepare(&rule, &c);
	status = run_filtered(&c, fn);
	free(c.bpf);
	return status;
}

static int default_filter(int (*fn)(void))
{
	return exit_code(filtered(ISO_SECCOMP_DEFAULT, ISO_SECCOMP_ERRNO, NULL, fn));
}

static int try_keyctl(void)
{
	return outcome(syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0));
}

/* A program of the test's own: keyctl fails with ENOTTY, everything else
 * runs. Seeing ENOTTY proves that the program loaded is the one in the
 * struct, as it is. */
static struct sock_filter keyctl_enotty[] = {
	BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_keyctl, 0, 1),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOTTY),
	BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
};

START_TEST(prepare_compiles_once)
{
	struct iso_rule rule = make_rule(ISO_SECCOMP_DEFAULT, ISO_LANDLOCK_OFF);
	struct iso_confine c;
	struct sock_filter *prepared;
	size_t prepared_len;
	int i;

	/* confine_prepare() prepares the rule's filter... */
	prepare(&rule, &c);
	ck_assert_ptr_nonnull(c.bpf);
	ck_assert_uint_gt(c.bpf_len, 0);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(exit_code(run_filtered(&c, try_keyctl)), EPERM);
	/* ...and applying it compiles nothing: each child loads whatever
	 * program was prepared, here one that no rule compiles to. */
	prepared = c.bpf;
	prepared_len = c.bpf_len;
	c.bpf = keyctl_enotty;
	c.bpf_len = sizeof(keyctl_enotty) / sizeof(keyctl_enotty[0]);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(exit_code(run_filtered(&c, try_keyctl)), ENOTTY);
	c.bpf = prepared;
	c.bpf_len = prepared_len;
	free(c.bpf);
}
END_TEST

static int sleeper_alive = -1;

/* A process to aim at: blocks until the write end of its pipe closes (no
 * signal needed: Landlock's scope may forbid one). */
static pid_t sleeper(void)
{
	int alive[2];
	pid_t pid;
	char byte;

	if (pipe(alive) < 0)
		return -1;
	pid = fork();
	if (pid == 0) {
		close(alive[1]);
		while (read(alive[0], &byte, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(alive[0]);
	sleeper_alive = alive[1];
	return pid;
}

/* SIGKILL for a sleeper someone stopped (may be refused: then EOF). */
static void end_sleeper(pid_t pid)
{
	kill(pid, SIGKILL);
	close(sleeper_alive);
	waitpid(pid, NULL, 0);
}

static int try_ptrace_attach(void)
{
	pid_t target = sleeper();
	int err = outcome(ptrace(PTRACE_ATTACH, target, 0, 0));

	end_sleeper(target);
	return err;
}

static long vm_target_word = 0x1505;

static int try_process_vm_readv(void)
{
	pid_t target = sleeper();
	long word = 0;
	struct iovec local = { &word, sizeof word };
	struct iovec remote = { &vm_target_word, sizeof word };
	int err = outcome(process_vm_readv(target, &local, 1, &remote, 1, 0));

	end_sleeper(target);
	return err;
}

static int try_unshare_user(void)
{
	return outcome(unshare(CLONE_NEWUSER));
}

static int try_io_setup(void)
{
	unsigned long ctx = 0;
	long rc = syscall(SYS_io_setup, 1, &ctx);

	if (rc == 0)
		syscall(SYS_io_destroy, ctx);
	return outcome(rc);
}

static int try_clone3(void)
{
	struct clone_args args;
	long pid;

	memset(&args, 0, sizeof args);
	args.exit_signal = SIGCHLD;
	pid = syscall(SYS_clone3, &args, sizeof args);
	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid((pid_t)pid, NULL, 0);
	return outcome(pid);
}

static int try_clone_newns(void)
{
	long pid = syscall(SYS_clone, CLONE_NEWNS | SIGCHLD, 0, 0, 0, 0);

	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid((pid_t)pid, NULL, 0);
	return outcome(pid);
}

/* A pseudo-terminal's slave, as a guest's stdin could be. */
static int open_pty_slave(void)
{
	int master = posix_openpt(O_RDWR | O_NOCTTY);

	if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0)
		_exit(SETUP_FAILED);
	return open(ptsname(master), O_RDWR | O_NOCTTY);
}

static int try_tiocsti(void)
{
	int fd = open_pty_slave();
	char ch = 'x';

	if (fd < 0)
		return SETUP_FAILED;
	return outcome(ioctl(fd, TIOCSTI, &ch));
}

/* The kernel reads the request as 32 bits: high bits must not bypass. */
static int try_tiocsti_high_bits(void)
{
	int fd = open_pty_slave();
	char ch = 'x';

	if (fd < 0)
		return SETUP_FAILED;
	return outcome(syscall(SYS_ioctl, fd, (unsigned long)TIOCSTI | (1ul << 32), &ch));
}

#if defined(__x86_64__)
#define I386_NR_PTRACE 26 /* arch/x86/.../syscall_32.tbl */
#define X32_NR_PTRACE (0x40000000 + 521) /* syscall_64.tbl: x32 ptrace */

/* Run the probe's mode in a grandchild, unfiltered or under the filter
 * the caller loaded: the errno it reports (0 if the call succeeded), or
 * KILLED + the signal that ended it. The probe is not instrumented, so a
 * sanitizer cannot turn the kernel's SIGSEGV into an exit status. */
#define KILLED 150
static int probe_result(const char *mode)
{
	char out[256] = "";
	int pipefd[2], status;
	ssize_t got;
	pid_t pid;

	if (pipe(pipefd) < 0)
		return SETUP_FAILED;
	pid = fork();
	if (pid == 0) {
		dup2(pipefd[1], 1);
		execl(PROBE, "probe", mode, (char *)NULL);
		_exit(127);
	}
	close(pipefd[1]);
	got = read(pipefd[0], out, sizeof(out) - 1);
	out[got > 0 ? got : 0] = '\0';
	close(pipefd[0]);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return SETUP_FAILED;
	if (WIFSIGNALED(status))
		return KILLED + WTERMSIG(status);
	if (WEXITSTATUS(status) == 0)
		return 0;
	if (strstr(out, "refused: EPERM"))
		return EPERM;
	if (strstr(out, "refused: ENOSYS"))
		return ENOSYS;
	return SETUP_FAILED;
}

static int try_int80_ptrace(void)
{
	return probe_result("int80-ptrace");
}

static int try_x32_ptrace(void)
{
	return probe_result("x32-ptrace");
}
#endif

static int marker;

static void *thread_main(void *arg)
{
	return arg;
}

static int try_fork_and_thread(void)
{
	pthread_t thread;
	void *result = NULL;
	int status, rc;
	pid_t pid = fork();

	if (pid == 0)
		_exit(7);
	if (pid < 0)
		return errno;
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 7)
		return EIO;
	rc = pthread_create(&thread, NULL, thread_main, &marker);
	if (rc != 0)
		return rc;
	pthread_join(thread, &result);
	return result == &marker ? 0 : EIO;
}

/* What the spawn path does after loading the filter. */
static int try_exec_path(void)
{
	char *const argv[] = { "true", NULL };
	char *const envp[] = { NULL };
	int fd = open("/bin/true", O_PATH | O_CLOEXEC);
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	if (fd < 0 || null < 0 || dup2(null, 0) < 0 || dup3(null, 1, 0) < 0 ||
	    fcntl(null, F_GETFD) < 0 || close(null) < 0 ||
	    syscall(SYS_close_range, 3, ~0u, 0x4 /* CLOEXEC */) < 0)
		return errno;
	syscall(SYS_execveat, fd, "", argv, envp, AT_EMPTY_PATH);
	return errno;
}

static int try_getppid(void)
{
	return outcome(syscall(SYS_getppid));
}

/* personality: only PER_LINUX and the query. */
static int try_refused_personalities(void)
{
	static const unsigned long refused[] = {
		READ_IMPLIES_EXEC, ADDR_NO_RANDOMIZE, PER_LINUX32,   1, 0x80400000ul,
		0xfffffffeul,      0x7ffffffful,      0x100400000ul, /* the kernel sees READ_IMPLIES_EXEC */
	};
	size_t i;

	for (i = 0; i < sizeof refused / sizeof *refused; i++)
		if (syscall(SYS_personality, refused[i]) != -1 || errno != EPERM)
			return 100 + (int)i;
	return 0;
}

static int try_allowed_personalities(void)
{
	if (syscall(SYS_personality, 0xfffffffful) < 0 || syscall(SYS_personality, PER_LINUX) < 0)
		return errno;
	return 0;
}

static int try_netlink_socket(void)
{
	return outcome(socket(AF_NETLINK, SOCK_RAW, 0));
}

static int try_packet_socket(void)
{
	return outcome(socket(AF_PACKET, SOCK_RAW, 0));
}

static int try_unix_and_inet_sockets(void)
{
	if (socket(AF_UNIX, SOCK_STREAM, 0) < 0 || socket(AF_INET, SOCK_STREAM, 0) < 0 ||
	    socket(AF_INET6, SOCK_DGRAM, 0) < 0)
		return errno;
	return 0;
}

START_TEST(default_refuses_ptrace_attach)
{
	ck_assert_int_eq(default_filter(try_ptrace_attach), EPERM);
}
END_TEST

START_TEST(default_refuses_process_vm_readv)
{
	ck_assert_int_eq(default_filter(try_process_vm_readv), EPERM);
}
END_TEST

START_TEST(default_refuses_unshare_user)
{
	ck_assert_int_eq(default_filter(try_unshare_user), EPERM);
}
END_TEST

/* The host's AIO contexts (fs.aio-max-nr) are one table that no rlimit
 * counts: one guest took them all, and every host process's io_setup
 * failed with EAGAIN until it ended. Even under seccomp-action kill, the
 * caller falls back as on a kernel without AIO. */
START_TEST(default_io_setup_is_enosys)
{
	ck_assert_int_eq(default_filter(try_io_setup), ENOSYS);
	ck_assert_int_eq(
	    exit_code(filtered(ISO_SECCOMP_DEFAULT, ISO_SECCOMP_KILL, NULL, try_io_setup)), ENOSYS);
}
END_TEST

START_TEST(default_clone3_is_enosys)
{
	ck_assert_int_eq(default_filter(try_clone3), ENOSYS);
}
END_TEST

START_TEST(default_refuses_clone_newns)
{
	ck_assert_int_eq(default_filter(try_clone_newns), EPERM);
}
END_TEST

START_TEST(default_refuses_tiocsti)
{
	ck_assert_int_eq(default_filter(try_tiocsti), EPERM);
}
END_TEST

START_TEST(default_refuses_tiocsti_with_high_bits)
{
	ck_assert_int_eq(default_filter(try_tiocsti_high_bits), EPERM);
}
END_TEST

#if defined(__x86_64__)
START_TEST(default_refuses_int80_ptrace)
{
	ck_assert_int_eq(default_filter(try_int80_ptrace), EPERM);
}
END_TEST

START_TEST(default_refuses_x32_ptrace)
{
	ck_assert_int_eq(default_filter(try_x32_ptrace), EPERM);
}
END_TEST
#endif

START_TEST(default_refuses_keyctl)
{
	ck_assert_int_eq(default_filter(try_keyctl), EPERM);
}
END_TEST

START_TEST(default_refuses_other_personalities)
{
	ck_assert_int_eq(default_filter(try_refused_personalities), 0);
}
END_TEST

START_TEST(default_allows_personality_query_and_linux)
{
	ck_assert_int_eq(default_filter(try_allowed_personalities), 0);
}
END_TEST

START_TEST(default_allows_fork_and_thread)
{
	ck_assert_int_eq(default_filter(try_fork_and_thread), 0);
}
END_TEST

START_TEST(default_allows_spawn_exec_path)
{
	ck_assert_int_eq(default_filter(try_exec_path), 0);
}
END_TEST

START_TEST(kill_action_kills_with_sigsys)
{
	int status = filtered(ISO_SECCOMP_DEFAULT, ISO_SECCOMP_KILL, NULL, try_keyctl);

	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS, "status 0x%x", status);
}
END_TEST

START_TEST(kill_action_keeps_threads)
{
	ck_assert_int_eq(
	    exit_code(filtered(ISO_SECCOMP_DEFAULT, ISO_SECCOMP_KILL, NULL, try_fork_and_thread)),
	    0);
}
END_TEST

START_TEST(rule_deny_list_refused)
{
	char *deny[] = { "getppid", NULL };

	ck_assert_int_eq(
	    exit_code(filtered(ISO_SECCOMP_DEFAULT, ISO_SECCOMP_ERRNO, deny, try_getppid)), EPERM);
}
END_TEST

START_TEST(strict_refuses_netlink_socket)
{
	ck_assert_int_eq(
	    exit_code(filtered(ISO_SECCOMP_STRICT, ISO_SECCOMP_ERRNO, NULL, try_netlink_socket)),
	    EPERM);
}
END_TEST

START_TEST(strict_refuses_packet_socket)
{
	ck_assert_int_eq(
	    exit_code(filtered(ISO_SECCOMP_STRICT, ISO_SECCOMP_ERRNO, NULL, try_packet_socket)),
	    EPERM);
}
END_TEST

START_TEST(strict_allows_unix_and_inet_sockets)
{
	ck_assert_int_eq(exit_code(filtered(ISO_SECCOMP_STRICT, ISO_SECCOMP_ERRNO, NULL,
					    try_unix_and_inet_sockets)),
			 0);
}
END_TEST

/* More of what the default profile refuses. With seccomp-action kill a
 * refusal is a SIGSYS, which no errno of the call itself can be mistaken
 * for. */
static int try_socket_family;

static int try_socket(void)
{
	int fd = socket(try_socket_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		fd = socket(try_socket_family, SOCK_RAW | SOCK_CLOEXEC, 0);
	return fd < 0 ? errno : 0;
}

static long try_nr;

/* Every argument 0 (or -1 as the fd): the call fails in some harmless way
 * if it runs at all. */
static int try_number(void)
{
	return outcome(syscall(try_nr, -1, 0, 0, 0, 0, 0));
}

static int killed(int (*fn)(void))
{
	int status = filtered(ISO_SECCOMP_DEFAULT, ISO_SECCOMP_KILL, NULL, fn);

	return WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS;
}

START_TEST(default_refuses_socket_families_but_unix_inet_netlink)
{
	static const int refused[] = { AF_UNSPEC,    AF_PACKET, AF_VSOCK, AF_ALG,
				       AF_BLUETOOTH, AF_CAN,    AF_XDP,   AF_KEY,
				       AF_APPLETALK, AF_TIPC,   64,       1000 };
	static const int allowed[] = { AF_UNIX, AF_INET, AF_INET6, AF_NETLINK };

	for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
		try_socket_family = refused[i];
		ck_assert_msg(default_filter(try_socket) == EPERM, "family %d not refused",
			      refused[i]);
		ck_assert_msg(killed(try_socket), "family %d not refused", refused[i]);
	}
	for (size_t i = 0; i < sizeof allowed / sizeof *allowed; i++) {
		try_socket_family = allowed[i];
		ck_assert_msg(default_filter(try_socket) == 0, "family %d refused", allowed[i]);
	}
}
END_TEST

/* socket(2)'s protocol, as the register holds it: high bits the kernel
 * does not read may not pass the filter. */
static unsigned long long try_netlink_protocol = NETLINK_KOBJECT_UEVENT;

static int try_netlink(void)
{
	return outcome(
	    syscall(SYS_socket, AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, try_netlink_protocol));
}

/* Host device events reach a netlink socket in every network namespace
 * root made (network none's too), and the proc connector tells the host's
 * forks, execs and exits on the host network: neither is the guest's. */
START_TEST(default_refuses_netlink_connector_and_uevent)
{
	static const unsigned long long refused[] = {
		NETLINK_KOBJECT_UEVENT,
		NETLINK_CONNECTOR,
		(1ull << 32) | NETLINK_KOBJECT_UEVENT,
		(1ull << 32) | NETLINK_CONNECTOR,
	};
	static const unsigned long long allowed[] = { NETLINK_ROUTE, NETLINK_SOCK_DIAG,
						      NETLINK_GENERIC };

	for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
		try_netlink_protocol = refused[i];
		ck_assert_msg(default_filter(try_netlink) == EPERM,
			      "netlink protocol %#llx not refused", refused[i]);
		ck_assert_msg(killed(try_netlink), "netlink protocol %#llx not refused",
			      refused[i]);
	}
	for (size_t i = 0; i < sizeof allowed / sizeof *allowed; i++) {
		try_netlink_protocol = allowed[i];
		ck_assert_msg(default_filter(try_netlink) == 0, "netlink protocol %llu refused",
			      allowed[i]);
	}
}
END_TEST

/* A key added to a file system's keyring stays after the guest, for its
 * uid's next guest to find: refused wherever the file system would take
 * it (this one need not have the encrypt feature: the filter decides
 * first). */
static int try_fscrypt_add_key(void)
{
	/* The argument and its key after it, as the kernel reads them (a
	 * struct around one with a flexible array is a GNU extension). */
	static _Alignas(struct fscrypt_add_key_arg)
	    uint8_t key[sizeof(struct fscrypt_add_key_arg) + FSCRYPT_MAX_KEY_SIZE];
	struct fscrypt_add_key_arg *arg = (struct fscrypt_add_key_arg *)key;
	int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc;

	arg->key_spec.type = FSCRYPT_KEY_SPEC_TYPE_IDENTIFIER;
	arg->raw_size = FSCRYPT_MAX_KEY_SIZE;
	if (fd < 0)
		return SETUP_FAILED;
	if ((rc = outcome(ioctl(fd, FS_IOC_ADD_ENCRYPTION_KEY, key))) != EPERM)
		return rc;
	return outcome(
	    syscall(SYS_ioctl, fd, (unsigned long)FS_IOC_ADD_ENCRYPTION_KEY | (1ul << 32), key));
}

START_TEST(default_refuses_adding_a_file_system_key)
{
	ck_assert_int_eq(default_filter(try_fscrypt_add_key), EPERM);
	ck_assert(killed(try_fscrypt_add_key));
}
END_TEST

START_TEST(default_refuses_fanotify_quotactl_fd_modify_ldt)
{
	static const long calls[] = {
		SYS_fanotify_init,
		SYS_fanotify_mark,
		SYS_quotactl_fd,
#if defined(__x86_64__)
		SYS_modify_ldt,
#endif
	};

	for (size_t i = 0; i < sizeof calls / sizeof *calls; i++) {
		try_nr = calls[i];
		ck_assert_msg(killed(try_number), "call %ld not refused", calls[i]);
	}
}
END_TEST

#if defined(__x86_64__) || defined(__aarch64__) || defined(__s390x__)
/* libseccomp 2.5.4 names calls up to futex_requeue (456): the ones after
 * it are decided by number. */
START_TEST(default_decides_calls_libseccomp_cannot_name)
{
	static const long refused[] = { 457, 458, 460, 467 };
	static const long allowed[] = { 459, 461, 462, 463, 464, 465, 466, 468, 469 };

	for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
		try_nr = refused[i];
		ck_assert_msg(killed(try_number), "call %ld not refused", refused[i]);
		ck_assert_int_eq(default_filter(try_number), EPERM);
	}
	for (size_t i = 0; i < sizeof allowed / sizeof *allowed; i++) {
		pid_t pid;

		try_nr = allowed[i];
		pid = fork();
		if (pid == 0)
			_exit(try_number());
		/* What the kernel itself answers, filtered or not. */
		ck_assert_msg(default_filter(try_number) == exit_code(wait_child(pid)),
			      "call %ld changed by the filter", allowed[i]);
	}
}
END_TEST

/* A call newer than the filter is ENOSYS from the filter itself, never let
 * through to whatever a newer kernel does with it; even with
 * seccomp-action kill, so that C libraries fall back. */
START_TEST(default_answers_enosys_above_the_highest_known_call)
{
	static const long numbers[] = { 470, 471, 500, 1000, 0xeffff };

	mark_new_numbers = 1;
	for (size_t i = 0; i < sizeof numbers / sizeof *numbers; i++) {
		try_nr = numbers[i];
		ck_assert_int_eq(default_filter(try_number), ENOSYS);
		ck_assert_int_eq(
		    exit_code(filtered(ISO_SECCOMP_DEFAULT, ISO_SECCOMP_KILL, NULL, try_number)),
		    ENOSYS);
	}
}
END_TEST
#endif

#if defined(__x86_64__)
/* The arguments after try_nr for int 0x80 (a path of -1: unreadable). */
static long try_b = -1, try_c, try_d;

static int try_int80_number(void)
{
	long ret;

	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(try_nr), "b"(try_b), "c"(try_c), "d"(try_d)
			 : "memory", "r8", "r9", "r10", "r11");
	return (int)ret < 0 ? -(int)ret : 0;
}

START_TEST(default_decides_new_calls_on_the_32_bit_entry_too)
{
	try_nr = 467; /* open_tree_attr in both tables */
	ck_assert_int_eq(default_filter(try_int80_number), EPERM);
	try_nr = 470;
	mark_new_numbers = 1;
	ck_assert_int_eq(default_filter(try_int80_number), ENOSYS);
	mark_new_numbers = 0;
	try_nr = 338; /* fanotify_init in the i386 table */
	ck_assert_int_eq(default_filter(try_int80_number), EPERM);
}
END_TEST

/* A rule's own list (confine.c's prefix to the built program) on the
 * 32-bit entry point too: getppid is 64 in the i386 table. */
START_TEST(rule_deny_list_refused_on_the_32_bit_entry_too)
{
	char *deny[] = { "getppid", NULL };
	int status;

	try_nr = 64;
	ck_assert_int_eq(
	    exit_code(filtered(ISO_SECCOMP_DEFAULT, ISO_SECCOMP_ERRNO, NULL, try_int80_number)), 0);
	ck_assert_int_eq(
	    exit_code(filtered(ISO_SECCOMP_DEFAULT, ISO_SECCOMP_ERRNO, deny, try_int80_number)),
	    EPERM);
	status = filtered(ISO_SECCOMP_DEFAULT, ISO_SECCOMP_KILL, deny, try_int80_number);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS, "status 0x%x", status);
}
END_TEST

/* The i386 table's own entry points of denied
 * calls (umount without flags, the clock's stime and time64 setters), and
 * the set-id mode bits there. Each is checked where the kernel, without a
 * filter, answers something other than EPERM (as root: EFAULT, EBADF). */
START_TEST(default_refuses_i386_legacy_and_setid_calls)
{
	static const struct {
		long nr, b, c, d;
		const char *name;
	} calls[] = {
		{ 22, -1, 0, 0, "umount" },           { 25, -1, 0, 0, "stime" },
		{ 404, 0, -1, 0, "clock_settime64" }, { 405, 0, -1, 0, "clock_adjtime64" },
		{ 15, -1, 04755, 0, "chmod" },        { 94, -1, 02755, 0, "fchmod" },
		{ 306, -100, -1, 04755, "fchmodat" }, { 5, -1, O_CREAT | O_WRONLY, 04755, "open" },
		{ 8, -1, 02755, 0, "creat" },         { 14, -1, S_IFREG | 04755, 0, "mknod" },
	};
	int unfiltered, checked = 0;
	pid_t pid;

	for (size_t i = 0; i < sizeof calls / sizeof *calls; i++) {
		try_nr = calls[i].nr;
		try_b = calls[i].b;
		try_c = calls[i].c;
		try_d = calls[i].d;
		pid = fork();
		if (pid == 0)
			_exit(try_int80_number());
		unfiltered = exit_code(wait_child(pid));
		if (unfiltered == EPERM)
			continue;
		checked++;
		ck_assert_msg(default_filter(try_int80_number) == EPERM,
			      "i386 %s (%ld): %d unfiltered, not refused", calls[i].name,
			      calls[i].nr, unfiltered);
	}
	try_b = -1;
	try_c = try_d = 0;
	if (checked < 4)
		check_skip("default_refuses_i386_legacy_and_setid_calls",
			   "only %d of the "
			   "calls answer other than EPERM without a filter (not root?)",
			   checked);
}
END_TEST
#endif

/* Set-user-ID and set-group-ID bits through every call
 * that gives a mode (systemd's RestrictSUIDSGID=, plus O_TMPFILE), while
 * the same calls without them, open without a creating flag and mkdir
 * (whose mode the kernel strips of both) still work. 0 when so, else the
 * step that differs. Works in a directory of its own below /tmp. */
static int setid_steps(int fd)
{
	if (outcome(chmod("f", 04755)) != EPERM || outcome(chmod("f", 02711)) != EPERM)
		return 1;
	if (outcome(fchmod(fd, 06755)) != EPERM ||
	    outcome(fchmodat(AT_FDCWD, "f", 04700, 0)) != EPERM)
		return 2;
	if (outcome(open("g", O_CREAT | O_WRONLY | O_CLOEXEC, 04755)) != EPERM ||
	    outcome(openat(AT_FDCWD, "g", O_CREAT | O_RDWR | O_CLOEXEC, 02755)) != EPERM ||
	    outcome(creat("g", 06755)) != EPERM)
		return 3;
	if (outcome(open(".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 04755)) != EPERM)
		return 4;
	if (outcome(mknod("g", S_IFREG | 04755, 0)) != EPERM ||
	    outcome(mknodat(AT_FDCWD, "g", S_IFREG | 02755, 0)) != EPERM)
		return 5;
	if (outcome(chmod("f", 01777)) != 0 || outcome(open("h", O_CREAT | O_WRONLY, 0755)) != 0 ||
	    outcome(syscall(SYS_open, "f", O_RDONLY | O_CLOEXEC, 06777)) != 0 ||
	    outcome(mkdir("d", 06755)) != 0)
		return 6;
	return 0;
}

static int try_setid_modes(void)
{
	char dir[] = "/tmp/isospawn-setid.XXXXXX";
	int fd, rc = SETUP_FAILED;

	if (mkdtemp(dir) && chdir(dir) == 0 &&
	    (fd = open("f", O_CREAT | O_WRONLY | O_CLOEXEC, 0644)) >= 0)
		rc = setid_steps(fd);
	(void)unlink("f");
	(void)unlink("g");
	(void)unlink("h");
	(void)rmdir("d");
	(void)rmdir(dir);
	return rc;
}

/* openat2 takes its mode in memory, out of the filter's sight, and
 * fchmodat2 is not named by every libseccomp: both ENOSYS, so that C
 * libraries fall back to openat and fchmodat. 0 when so. */
static int try_openat2_fchmodat2(void)
{
	struct open_how how = { .flags = O_RDONLY | O_CLOEXEC };

	if (outcome(syscall(SYS_openat2, AT_FDCWD, "/", &how, sizeof how)) != ENOSYS)
		return 1;
	return outcome(syscall(452, AT_FDCWD, "/nonexistent", 0755, 0)) == ENOSYS ? 0 : 2;
}

START_TEST(default_refuses_setid_modes)
{
	ck_assert_int_eq(default_filter(try_setid_modes), 0);
}
END_TEST

START_TEST(default_answers_enosys_for_openat2_and_fchmodat2)
{
	ck_assert_int_eq(default_filter(try_openat2_fchmodat2), 0);
}
END_TEST

/* A guest handed the caller's terminal signals nobody
 * through it (TIOCSWINSZ sends SIGWINCH to its foreground group, TIOCSIG
 * on a master any signal), changes neither its line discipline nor who
 * may open it, even with high bits set in the request; it still sets its
 * modes and flushes its queues, as an interactive guest must. 0 when so. */
static int try_tty_ioctls(void)
{
	struct winsize ws = { .ws_row = 5, .ws_col = 20 };
	int master = posix_openpt(O_RDWR | O_NOCTTY), slave = -1, ldisc = N_TTY;
	struct termios t;

	if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0 ||
	    (slave = open(ptsname(master), O_RDWR | O_NOCTTY)) < 0 || tcgetattr(slave, &t) < 0)
		return SETUP_FAILED;
	if (outcome(ioctl(slave, TIOCSWINSZ, &ws)) != EPERM ||
	    outcome(syscall(SYS_ioctl, slave, (unsigned long)TIOCSWINSZ | (1ul << 32), &ws)) !=
		EPERM)
		return 1;
	if (outcome(ioctl(master, TIOCSIG, SIGINT)) != EPERM)
		return 2;
	if (outcome(ioctl(slave, TIOCSETD, &ldisc)) != EPERM ||
	    outcome(ioctl(slave, TIOCEXCL)) != EPERM)
		return 3;
	t.c_lflag &= ~(tcflag_t)ECHO;
	if (tcsetattr(slave, TCSAFLUSH, &t) < 0 || tcflush(slave, TCIOFLUSH) < 0 ||
	    tcflow(slave, TCOON) < 0)
		return 4;
	return 0;
}

START_TEST(default_refuses_terminal_signals_ldisc_and_exclusive_mode)
{
	ck_assert_int_eq(default_filter(try_tty_ioctls), 0);
}
END_TEST

/* A terminal handed over that is no session's controlling terminal: from
 * a session of its own, the guest may not make it its own (the session's
 * end would hang up a terminal that is not a pseudo-terminal for all its
 * holders, as vhangup does). */
static int try_tiocsctty(void)
{
	int master = posix_openpt(O_RDWR | O_NOCTTY), slave = -1, rc;

	if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0 ||
	    (slave = open(ptsname(master), O_RDWR | O_NOCTTY)) < 0 || setsid() < 0)
		return SETUP_FAILED;
	if ((rc = outcome(ioctl(slave, TIOCSCTTY, 0))) != EPERM)
		return rc;
	return outcome(syscall(SYS_ioctl, slave, (unsigned long)TIOCSCTTY | (1ul << 32), 0));
}

START_TEST(default_refuses_taking_a_controlling_terminal)
{
	ck_assert_int_eq(default_filter(try_tiocsctty), EPERM);
	ck_assert(killed(try_tiocsctty));
}
END_TEST

/* ------------------------------------------------------------------ */
/* Landlock, as nobody                                                  */

static char home_dir[64], home_file[96], home_link[96];
static char scratch[64], tmp_target[96];

/* Unchecked fixture: runs in the runner, so a failed test cannot leave
 * the directories behind. */
static void landlock_setup(void)
{
	int fd;

	if (geteuid() != 0)
		return;
	strlcpy(home_dir, "/home/isospawn-unit-XXXXXX", sizeof home_dir);
	strlcpy(scratch, "/tmp/isospawn-scratch-XXXXXX", sizeof scratch);
	if (!mkdtemp(home_dir) || !mkdtemp(scratch))
		abort();
	snprintf(home_file, sizeof home_file, "%s/readable", home_dir);
	snprintf(home_link, sizeof home_link, "%s/link", home_dir);
	/* World-writable, and neither /tmp nor /dev/shm (every guest's own). */
	snprintf(tmp_target, sizeof tmp_target, "/var/tmp/isospawn-unit-%d", (int)getpid());
	fd = open(home_file, O_WRONLY | O_CREAT | O_EXCL, 0644);
	/* Only Landlock stands between nobody and these. */
	if (fd < 0 || write(fd, "x", 1) != 1 || close(fd) < 0 || chmod(home_dir, 0755) < 0 ||
	    fchmodat(AT_FDCWD, home_file, 0644, 0) < 0 || symlink("/usr", home_link) < 0 ||
	    chown(scratch, NOBODY, NOBODY) < 0 || chmod(scratch, 0700) < 0)
		abort();
}

static void landlock_teardown(void)
{
	char path[128];

	if (geteuid() != 0)
		return;
	snprintf(path, sizeof path, "%s/out", scratch);
	unlink(path);
	rmdir(scratch);
	unlink(home_link);
	unlink(home_file);
	rmdir(home_dir);
	unlink(tmp_target);
}

/* Root (to become nobody, so that only Landlock can refuse) and ABI n. */
static const char *need_landlock(int abi)
{
	const char *missing = feature_root();

	return missing ? missing : feature_landlock(abi);
}

/* What a guest child is like when Landlock is applied: nobody, no groups,
 * no_new_privs, in its own directory below /tmp (here the host's /tmp: no
 * mount namespace, so /tmp itself is granted as a guest's would be). */
static void become_guest(void)
{
	gid_t gid = NOBODY;
	uid_t uid = NOBODY;

	if (setgroups(0, NULL) < 0 || setresgid(gid, gid, gid) < 0 ||
	    setresuid(uid, uid, uid) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
	    chdir(scratch) < 0)
		_exit(SETUP_FAILED);
}

static enum iso_landlock_mode landlock_mode = ISO_LANDLOCK_REQUIRED;
static int landlock_min_abi;

/* Returns confine_apply_landlock()'s result (printing why on failure). */
static int apply_landlock(const struct iso_plan *plan)
{
	struct iso_rule rule = make_rule(ISO_SECCOMP_NONE, landlock_mode);
	struct iso_confine c;
	char why[256] = "";
	int program_fd = open("/usr/bin/true", O_PATH | O_CLOEXEC);
	const int stdio[3] = { 0, 1, 2 };
	int rc;

	rule.landlock_min_abi = landlock_min_abi;
	rc = confine_prepare(&rule, &c, why, sizeof why);
	if (rc == 0 && program_fd >= 0)
		rc = confine_apply_landlock(&c, plan, program_fd, stdio, why, sizeof why);
	if (rc < 0)
		fprintf(stderr, "%s\n", why);
	return program_fd < 0 ? -EBADF : rc;
}

/* Fork a guest child confined by `plan`; it exits with what fn returns. */
static int run_landlocked(const struct iso_plan *plan, int (*fn)(void))
{
	pid_t pid = fork();

	if (pid == 0) {
		become_guest();
		if (apply_landlock(plan) < 0)
			_exit(SETUP_FAILED);
		_exit(fn());
	}
	return exit_code(wait_child(pid));
}

static struct iso_plan make_plan(void)
{
	struct iso_plan plan;

	memset(&plan, 0, sizeof plan);
	return plan;
}

static int try_read_home_file(void)
{
	return outcome(open(home_file, O_RDONLY));
}

static int try_read_usr_bin_true(void)
{
	char buf[4];
	int fd = open("/usr/bin/true", O_RDONLY);

	if (fd < 0 || read(fd, buf, sizeof buf) != sizeof buf)
		return errno;
	return 0;
}

static int try_write_scratch(void)
{
	char path[128];
	int fd;

	snprintf(path, sizeof path, "%s/out", scratch);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, "x", 1) != 1)
		return errno;
	return 0;
}

static int try_write_tmp(void)
{
	return outcome(open(tmp_target, O_WRONLY | O_CREAT | O_EXCL, 0600));
}

static int try_write_dev_null(void)
{
	int fd = open("/dev/null", O_WRONLY | O_TRUNC);

	if (fd < 0 || write(fd, "x", 1) != 1)
		return errno;
	return 0;
}

START_TEST(landlock_refuses_read_beneath_home)
{
	struct iso_plan plan = make_plan();

	ck_assert_int_eq(run_landlocked(&plan, try_read_home_file), EACCES);
}
END_TEST

/* Best effort confines: an optional rule asking for more than any kernel
 * has still hides home. */
START_TEST(landlock_optional_below_the_rules_abi_still_confines)
{
	struct iso_plan plan = make_plan();

	landlock_mode = ISO_LANDLOCK_OPTIONAL;
	landlock_min_abi = 99;
	ck_assert_int_eq(run_landlocked(&plan, try_read_home_file), EACCES);
	ck_assert_int_eq(run_landlocked(&plan, try_read_usr_bin_true), 0);
}
END_TEST

START_TEST(landlock_allows_read_usr_bin_true)
{
	struct iso_plan plan = make_plan();

	ck_assert_int_eq(run_landlocked(&plan, try_read_usr_bin_true), 0);
}
END_TEST

START_TEST(landlock_allows_write_in_scratch)
{
	struct iso_plan plan = make_plan();

	ck_assert_int_eq(run_landlocked(&plan, try_write_scratch), 0);
}
END_TEST

START_TEST(landlock_refuses_write_in_var_tmp)
{
	struct iso_plan plan = make_plan();

	ck_assert_int_eq(run_landlocked(&plan, try_write_tmp), EACCES);
}
END_TEST

START_TEST(landlock_allows_write_dev_null)
{
	struct iso_plan plan = make_plan();

	ck_assert_int_eq(run_landlocked(&plan, try_write_dev_null), 0);
}
END_TEST

START_TEST(landlock_grants_requested_read_path)
{
	struct iso_plan plan = make_plan();

	plan.grants[plan.ngrants++] = (struct iso_grant){ .path = home_dir };
	ck_assert_int_eq(run_landlocked(&plan, try_read_home_file), 0);
}
END_TEST

/* The child applies Landlock itself and exits with -rc. */
static int apply_error_as_guest(const struct iso_plan *plan)
{
	pid_t pid = fork();

	if (pid == 0) {
		become_guest();
		_exit(-apply_landlock(plan));
	}
	return exit_code(wait_child(pid));
}

START_TEST(landlock_missing_requested_path_is_error)
{
	struct iso_plan plan = make_plan();

	plan.grants[plan.ngrants++] = (struct iso_grant){ .path = "/nonexistent/isospawn-unit" };
	ck_assert_int_eq(apply_error_as_guest(&plan), ENOENT);
}
END_TEST

START_TEST(landlock_symlinked_requested_path_is_error)
{
	struct iso_plan plan = make_plan();

	plan.grants[plan.ngrants++] = (struct iso_grant){ .path = home_link, .write = 1 };
	ck_assert_int_eq(apply_error_as_guest(&plan), ELOOP);
}
END_TEST

static struct sockaddr_in listener_addr;

static int try_connect_listener(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return errno;
	return outcome(connect(fd, (struct sockaddr *)&listener_addr, sizeof listener_addr));
}

/* A listener on 127.0.0.1, port chosen by the kernel. */
static int listen_loopback(void)
{
	socklen_t len = sizeof listener_addr;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(&listener_addr, 0, sizeof listener_addr);
	listener_addr.sin_family = AF_INET;
	listener_addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(bind(fd, (struct sockaddr *)&listener_addr, len), 0);
	ck_assert_int_eq(listen(fd, 4), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&listener_addr, &len), 0);
	return fd;
}

/* Under network none the guest's own network namespace keeps it off the
 * host's network: Landlock adds no TCP rule, so its own loopback is its to
 * use (here, where no namespace was made, the host's). */
START_TEST(landlock_network_none_leaves_tcp_to_the_namespace)
{
	struct iso_plan plan = make_plan();
	int fd;

	fd = listen_loopback();
	plan.network_none = 1;
	ck_assert_int_eq(run_landlocked(&plan, try_connect_listener), 0);
	close(fd);
}
END_TEST

START_TEST(landlock_network_host_allows_tcp_connect)
{
	struct iso_plan plan = make_plan();
	int fd;

	fd = listen_loopback();
	ck_assert_int_eq(run_landlocked(&plan, try_connect_listener), 0);
	close(fd);
}
END_TEST

/* The sleeper is forked before Landlock applies, so it is outside the
 * guest's domain although it has the guest's uid. */
START_TEST(landlock_scope_refuses_signal_outside_domain)
{
	struct iso_plan plan = make_plan();
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		pid_t target;
		int err;

		become_guest();
		target = sleeper();
		if (apply_landlock(&plan) < 0)
			_exit(SETUP_FAILED);
		err = outcome(kill(target, SIGTERM));
		end_sleeper(target);
		_exit(err);
	}
	ck_assert_int_eq(exit_code(wait_child(pid)), EPERM);
}
END_TEST

/* ------------------------------------------------------------------ */
/* rlimits and loopback                                                 */

static const struct iso_plan *rlimit_plan;

/* scratch and shm are tmpfs sizes, not rlimits (-1). */
static const int limit_resources[ISO_LIMIT_COUNT] = {
	[ISO_LIMIT_CPU] = RLIMIT_CPU,
	[ISO_LIMIT_AS] = RLIMIT_AS,
	[ISO_LIMIT_NOFILE] = RLIMIT_NOFILE,
	[ISO_LIMIT_NPROC] = RLIMIT_NPROC,
	[ISO_LIMIT_FSIZE] = RLIMIT_FSIZE,
	[ISO_LIMIT_STACK] = RLIMIT_STACK,
	[ISO_LIMIT_SCRATCH] = -1,
	[ISO_LIMIT_SHM] = -1,
	/* The whole guest's, on its cgroup (tests/live_cgroup.c). */
	[ISO_LIMIT_MEMORY] = -1,
	[ISO_LIMIT_PIDS] = -1,
	[ISO_LIMIT_CPUS] = -1,
};

static int check_limit(int resource, rlim_t want, rlim_t want_max)
{
	struct rlimit rl;

	return getrlimit(resource, &rl) == 0 && rl.rlim_cur == want && rl.rlim_max == want_max;
}

static int try_rlimits(void)
{
	char why[256] = "";
	struct rlimit cpu_before;
	int i;

	if (getrlimit(RLIMIT_CPU, &cpu_before) < 0 ||
	    confine_apply_rlimits(rlimit_plan, why, sizeof why) < 0) {
		fprintf(stderr, "%s\n", why);
		return SETUP_FAILED;
	}
	for (i = 0; i < ISO_LIMIT_COUNT; i++) {
		uint64_t v = rlimit_plan->limits[i];
		rlim_t want = v == UINT64_MAX ? RLIM_INFINITY : (rlim_t)v;
		rlim_t want_max = want;

		/* CPU: SIGXCPU first, SIGKILL a second later, unless that
		 * would raise the hard limit. */
		if (i == ISO_LIMIT_CPU && cpu_before.rlim_max > want)
			want_max = want + 1;
		if (limit_resources[i] >= 0 && !check_limit(limit_resources[i], want, want_max))
			return 10 + i;
	}
	return check_limit(RLIMIT_CORE, 0, 0) ? 0 : 20;
}

static int run_rlimits(const struct iso_plan *plan)
{
	pid_t pid = fork();

	if (pid == 0) {
		rlimit_plan = plan;
		child_exit(try_rlimits());
	}
	return exit_code(wait_child(pid));
}

START_TEST(rlimits_set_soft_and_hard_and_no_core)
{
	struct iso_plan plan = make_plan();

	plan.limits[ISO_LIMIT_CPU] = 100;
	plan.limits[ISO_LIMIT_AS] = 1ull << 30;
	plan.limits[ISO_LIMIT_NOFILE] = 64;
	plan.limits[ISO_LIMIT_NPROC] = 512;
	plan.limits[ISO_LIMIT_FSIZE] = 1 << 20;
	plan.limits[ISO_LIMIT_STACK] = 8 << 20;
	ck_assert_int_eq(run_rlimits(&plan), 0);
}
END_TEST

/* Some hard limit this process may keep at infinity. */
static const char *infinite_hard_limit(void)
{
	struct rlimit rl;

	if (feature_hidden("rlimit"))
		return "an infinite hard limit: reported absent (ISOSPAWN_TEST_HIDE)";
	for (int i = 0; i < ISO_LIMIT_COUNT; i++)
		if (limit_resources[i] >= 0 && getrlimit(limit_resources[i], &rl) == 0 &&
		    rl.rlim_max == RLIM_INFINITY)
			return NULL;
	return "needs a hard limit that is infinite here (none of cpu, as, "
	       "nofile, nproc, fsize, stack is)";
}

START_TEST(rlimits_uint64_max_is_infinity)
{
	struct iso_plan plan = make_plan();
	struct rlimit rl;
	int i, infinite = 0;

	/* Raising a hard limit needs CAP_SYS_RESOURCE, which even root may
	 * lack: ask for infinity where it already is, else the current. */
	for (i = 0; i < ISO_LIMIT_COUNT; i++) {
		if (limit_resources[i] < 0)
			continue;
		ck_assert_int_eq(getrlimit(limit_resources[i], &rl), 0);
		infinite += rl.rlim_max == RLIM_INFINITY;
		plan.limits[i] = rl.rlim_max == RLIM_INFINITY ? UINT64_MAX : rl.rlim_max;
	}
	ck_assert_int_gt(infinite, 0); /* probed by infinite_hard_limit() */
	ck_assert_int_eq(run_rlimits(&plan), 0);
}
END_TEST

/* The kernel counts RLIMIT_CPU in nanoseconds: a ceiling beyond 2^64 of
 * them would wrap to a limit of moments (76480200929599801 s to 64 us),
 * so it is no limit; the last second the kernel can count stays one. */
static const char *infinite_cpu_hard_limit(void)
{
	struct rlimit rl;

	if (feature_hidden("rlimit"))
		return "an infinite hard cpu limit: reported absent (ISOSPAWN_TEST_HIDE)";
	if (getrlimit(RLIMIT_CPU, &rl) == 0 && rl.rlim_max == RLIM_INFINITY)
		return NULL;
	return "needs an infinite hard cpu limit here";
}

START_TEST(rlimits_cpu_beyond_the_kernels_count_is_infinity)
{
	static const uint64_t asked[] = { 76480200929599801ull, 18446744074ull, 18446744073ull };
	static const rlim_t got[][2] = { { RLIM_INFINITY, RLIM_INFINITY },
					 { RLIM_INFINITY, RLIM_INFINITY },
					 { 18446744073ull, 18446744074ull } };

	for (size_t i = 0; i < sizeof asked / sizeof *asked; i++) {
		struct iso_plan plan = make_plan();
		struct rlimit rl;
		pid_t pid;

		/* The others as they are, so that the child can still write
		 * (a coverage build's counters at its exit). */
		for (int l = 0; l < ISO_LIMIT_COUNT; l++) {
			if (limit_resources[l] < 0 || getrlimit(limit_resources[l], &rl) < 0)
				continue;
			plan.limits[l] = rl.rlim_max == RLIM_INFINITY ? UINT64_MAX : rl.rlim_max;
		}
		plan.limits[ISO_LIMIT_CPU] = asked[i];
		pid = fork();
		if (pid == 0) {
			char why[256] = "";

			if (confine_apply_rlimits(&plan, why, sizeof why) < 0) {
				fprintf(stderr, "%s\n", why);
				_exit(SETUP_FAILED);
			}
			child_exit(check_limit(RLIMIT_CPU, got[i][0], got[i][1]) ? 0 : 1);
		}
		ck_assert_msg(exit_code(wait_child(pid)) == 0, "cpu %llu",
			      (unsigned long long)asked[i]);
	}
}
END_TEST

START_TEST(rlimits_failure_names_the_limit)
{
	struct iso_plan plan = make_plan();
	pid_t pid;
	int i;

	for (i = 0; i < ISO_LIMIT_COUNT; i++)
		plan.limits[i] = 1 << 20;
	plan.limits[ISO_LIMIT_NOFILE] = 64;
	pid = fork();
	if (pid == 0) {
		struct rlimit low = { 32, 32 };
		char why[256] = "";
		int rc;

		/* Unprivileged, a hard limit cannot be raised again. */
		if (setrlimit(RLIMIT_NOFILE, &low) < 0 ||
		    (geteuid() == 0 && (setresgid(NOBODY, NOBODY, NOBODY) < 0 ||
					setresuid(NOBODY, NOBODY, NOBODY) < 0)))
			_exit(SETUP_FAILED);
		rc = confine_apply_rlimits(&plan, why, sizeof why);
		child_exit(rc == -EPERM && strstr(why, "nofile") ? 0 : 1);
	}
	ck_assert_int_eq(exit_code(wait_child(pid)), 0);
}
END_TEST

START_TEST(loopback_comes_up)
{
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		const struct iso_plan none = { .network_none = 1 };
		struct ifreq ifr;
		char why[256] = "";
		int fd;

		if (unshare(CLONE_NEWNET) < 0)
			_exit(SETUP_FAILED);
		if (confine_apply_network(&none, -1, why, sizeof why) < 0) {
			fprintf(stderr, "%s\n", why);
			_exit(1);
		}
		memset(&ifr, 0, sizeof ifr);
		strlcpy(ifr.ifr_name, "lo", sizeof ifr.ifr_name);
		fd = socket(AF_INET, SOCK_DGRAM, 0);
		child_exit(fd >= 0 && ioctl(fd, SIOCGIFFLAGS, &ifr) == 0 && (ifr.ifr_flags & IFF_UP)
			       ? 0
			       : 2);
	}
	ck_assert_int_eq(exit_code(wait_child(pid)), 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The guest's tree (world.c), as root                                  */

/* The template's /bin, /sbin and /lib* are the host's, whatever the
 * directory the helper works in holds (names read relative to it would
 * take its links). In a child whose working directory has links of those
 * names. */
START_TEST(world_top_entries_are_the_hosts_whatever_the_cwd)
{
	static const char *const names[] = { "bin", "sbin", "lib", "lib64" };
	pid_t pid = fork();

	if (pid == 0) {
		struct iso_rule rule = make_rule(ISO_SECCOMP_NONE, ISO_LANDLOCK_OFF);
		char dir[] = "/tmp/isospawn-cwd.XXXXXX", why[256], path[16], host[4][256],
		     tree[256];
		struct iso_world w;
		struct stat st;
		ssize_t a[4], b;
		int rc, is[4];

		if (!mkdtemp(dir) || chdir(dir) < 0)
			_exit(SETUP_FAILED);
		for (size_t i = 0; i < 4; i++)
			if (symlink("/nonexistent/elsewhere", names[i]) < 0)
				_exit(SETUP_FAILED);
		rc = world_prepare(&w, &rule, &root_caller, why, sizeof why);
		for (size_t i = 0; i < 4; i++)
			(void)unlink(names[i]);
		(void)rmdir(dir);
		if (rc < 0) {
			fprintf(stderr, "world_prepare: %s\n", why);
			_exit(SETUP_FAILED);
		}
		/* The host's first, then the tree's, in the template namespace. */
		for (size_t i = 0; i < 4; i++) {
			snprintf(path, sizeof path, "/%s", names[i]);
			a[i] = readlink(path, host[i], sizeof host[i] - 1);
			is[i] = stat(path, &st) == 0;
		}
		if (setns(w.ns_fd, CLONE_NEWNS) < 0)
			_exit(SETUP_FAILED);
		for (size_t i = 0; i < 4; i++) {
			snprintf(path, sizeof path, "/%s", names[i]);
			b = readlink(path, tree, sizeof tree - 1);
			if (a[i] >= 0 && (b != a[i] || memcmp(host[i], tree, (size_t)a[i]) != 0))
				_exit(1 + (int)i);
			/* No link on the host: its directory, or nothing. */
			if (a[i] < 0 && (b >= 0 || (lstat(path, &st) == 0) != is[i]))
				_exit(1 + (int)i);
		}
		_exit(0);
	}
	ck_assert_int_eq(exit_code(wait_child(pid)), 0);
}
END_TEST

/* world_enter() in a child, with `plan`: its return value. */
static int enter_world(const struct iso_world *w, struct iso_plan *plan, uid_t uid)
{
	char why[256];
	int status, prog, rc;
	pid_t pid = fork();

	if (pid == 0) {
		enum iso_stage stage;

		rc = world_enter(w, plan, uid, &prog, &stage, why, sizeof why);
		_exit(rc < 0 ? -rc : 0);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -EIO;
	return -WEXITSTATUS(status);
}

/* A grant in a rule's write path: where the guest's tree shows a
 * host directory (a rule's write path) that lacks a grant's mount point,
 * the point is made as the guest, never as root: in a directory the guest
 * may not write, nothing is made; in one it may, the point is the guest's.
 * Here a host mount made after the template shows the grant on the host
 * but not in the tree, as another guest's removing it between the open
 * and the bind would. In a child with its own mount namespace, so that
 * nothing of the host's changes. */
START_TEST(world_grant_point_in_a_host_directory_is_made_as_the_guest)
{
	pid_t pid = fork();

	if (pid == 0) {
		static const mode_t modes[] = { 0755, 0777 };
		struct iso_rule rule = make_rule(ISO_SECCOMP_NONE, ISO_LANDLOCK_OFF);
		char dir[] = "/var/tmp/isospawn-point.XXXXXX", out[64], leaf[96], why[256];
		char *write[] = { out, NULL };
		struct iso_plan plan = { .program = "/bin/true",
					 .grants = { { .path = leaf } },
					 .ngrants = 1,
					 .stdio = { -1, -1, -1 } };
		struct iso_world w;
		struct stat st;
		int fd, rc, failed = 0;

		plan.limits[ISO_LIMIT_SCRATCH] = plan.limits[ISO_LIMIT_SHM] = 1 << 20;
		snprintf(out, sizeof out, "%s/out", mkdtemp(dir) ? dir : "/nonexistent");
		snprintf(leaf, sizeof leaf, "%s/grant", out);
		rule.write = write;
		if (unshare(CLONE_NEWNS) < 0 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 || chmod(dir, 0755) < 0 ||
		    mkdir(out, 0755) < 0 ||
		    world_prepare(&w, &rule, &root_caller, why, sizeof why) < 0)
			_exit(SETUP_FAILED);
		for (size_t i = 0; i < COUNT(modes); i++) {
			/* The grant on the host, over the directory the tree shows. */
			if (chmod(out, modes[i]) < 0 ||
			    mount("tmpfs", out, "tmpfs", 0, "mode=0755") < 0 ||
			    (fd = open(leaf, O_CREAT | O_WRONLY | O_CLOEXEC, 0644)) < 0 ||
			    close(fd) < 0 ||
			    (plan.grants[0].fd = open(leaf, O_PATH | O_CLOEXEC)) < 0)
				_exit(SETUP_FAILED);
			rc = enter_world(&w, &plan, 65534);
			close(plan.grants[0].fd);
			if (umount2(out, MNT_DETACH) < 0)
				_exit(SETUP_FAILED);
			if (modes[i] == 0755 && (rc == 0 || lstat(leaf, &st) == 0))
				failed = 1;
			if (modes[i] == 0777 &&
			    (rc != 0 || lstat(leaf, &st) < 0 || st.st_uid != 65534))
				failed = 2;
			(void)unlink(leaf);
		}
		(void)rmdir(out);
		(void)rmdir(dir);
		_exit(failed);
	}
	ck_assert_int_eq(exit_code(wait_child(pid)), 0);
}
END_TEST

/* Add a check that the filter refuses what fn tries, unless fn, run
 * without any filter, already ends with `refused` (feature.h). */
static void add_refusal(TCase *tc, const TTest *t, int (*fn)(void), int refused, const char *key,
			const char *feature)
{
	tcase_add_unless(tc, t, feature_baseline(fn, refused, key, feature));
}

static Suite *kernel_suite(void)
{
	Suite *s = suite_create("kernel");
#if defined(__x86_64__)
	const char *int80 = feature_int80(PROBE);
#endif
	TCase *tc;

	tc = tcase_create("seccomp");
	tcase_set_timeout(tc, 30);
	add_refusal(tc, default_refuses_ptrace_attach, try_ptrace_attach, EPERM, "ptrace",
		    "ptrace of a child (Yama or a container may forbid it)");
	add_refusal(tc, default_refuses_process_vm_readv, try_process_vm_readv, EPERM, "ptrace",
		    "process_vm_readv of a child");
	add_refusal(tc, default_refuses_unshare_user, try_unshare_user, EPERM, "userns",
		    "user namespaces");
	add_refusal(tc, default_clone3_is_enosys, try_clone3, ENOSYS, "clone3",
		    "clone3(2) (Linux 5.3)");
	add_refusal(tc, default_io_setup_is_enosys, try_io_setup, ENOSYS, "aio",
		    "io_setup(2) (a kernel built with AIO)");
	add_refusal(tc, default_refuses_clone_newns, try_clone_newns, EPERM, "root",
		    "CAP_SYS_ADMIN for a mount namespace (root)");
	add_refusal(tc, default_refuses_tiocsti, try_tiocsti, EPERM, "pty",
		    "a pseudo-terminal and TIOCSTI on it (root)");
	add_refusal(tc, default_refuses_tiocsti_with_high_bits, try_tiocsti_high_bits, EPERM, "pty",
		    "a pseudo-terminal and TIOCSTI on it (root)");
#if defined(__x86_64__)
	tcase_add_unless(tc, default_refuses_int80_ptrace, int80);
	add_refusal(tc, default_refuses_x32_ptrace, try_x32_ptrace, EPERM, "x32",
		    "an x32 ptrace that is not refused already");
#endif
	add_refusal(tc, default_refuses_keyctl, try_keyctl, EPERM, "keyctl", "keyctl(2)");
	add_refusal(tc, default_refuses_other_personalities, try_refused_personalities, 0,
		    "personality", "personality(2) that accepts other personalities");
	tcase_add_test(tc, default_allows_personality_query_and_linux);
	tcase_add_test(tc, default_allows_fork_and_thread);
	tcase_add_test(tc, default_allows_spawn_exec_path);
	tcase_add_test(tc, kill_action_kills_with_sigsys);
	tcase_add_test(tc, kill_action_keeps_threads);
	tcase_add_test(tc, rule_deny_list_refused);
	add_refusal(tc, strict_refuses_netlink_socket, try_netlink_socket, EPERM, "netlink",
		    "netlink sockets");
	add_refusal(tc, strict_refuses_packet_socket, try_packet_socket, EPERM, "root",
		    "CAP_NET_RAW for a packet socket (root)");
	tcase_add_test(tc, strict_allows_unix_and_inet_sockets);
	tcase_add_test(tc, default_refuses_socket_families_but_unix_inet_netlink);
	add_refusal(tc, default_refuses_netlink_connector_and_uevent, try_netlink, EPERM, "uevent",
		    "a NETLINK_KOBJECT_UEVENT socket");
	add_refusal(tc, default_refuses_adding_a_file_system_key, try_fscrypt_add_key, EPERM,
		    "fscrypt", "FS_IOC_ADD_ENCRYPTION_KEY");
	tcase_add_test(tc, default_refuses_fanotify_quotactl_fd_modify_ldt);
#if defined(__x86_64__) || defined(__aarch64__) || defined(__s390x__)
	tcase_add_test(tc, default_decides_calls_libseccomp_cannot_name);
	tcase_add_test(tc, default_answers_enosys_above_the_highest_known_call);
#endif
#if defined(__x86_64__)
	tcase_add_unless(tc, default_decides_new_calls_on_the_32_bit_entry_too, int80);
	tcase_add_unless(tc, default_refuses_i386_legacy_and_setid_calls, int80);
	tcase_add_unless(tc, rule_deny_list_refused_on_the_32_bit_entry_too, int80);
#endif
	add_refusal(tc, default_refuses_setid_modes, try_setid_modes, 0, "setid",
		    "set-id mode bits that the kernel lets a file's owner set");
	add_refusal(tc, default_answers_enosys_for_openat2_and_fchmodat2, try_openat2_fchmodat2, 0,
		    "openat2", "openat2(2) (Linux 5.6)");
	add_refusal(tc, default_refuses_terminal_signals_ldisc_and_exclusive_mode, try_tty_ioctls,
		    0, "pty", "a pseudo-terminal and TIOCSWINSZ on it");
	add_refusal(tc, default_refuses_taking_a_controlling_terminal, try_tiocsctty, EPERM, "pty",
		    "a pseudo-terminal taken as a controlling terminal");
	add_refusal(tc, prepare_compiles_once, try_keyctl, EPERM, "keyctl", "keyctl(2)");
	suite_add_tcase(s, tc);

	tc = tcase_create("landlock");
	tcase_set_timeout(tc, 30);
	tcase_add_unchecked_fixture(tc, landlock_setup, landlock_teardown);
	tcase_add_unless(tc, landlock_refuses_read_beneath_home, need_landlock(1));
	tcase_add_unless(tc, landlock_optional_below_the_rules_abi_still_confines,
			 need_landlock(1));
	tcase_add_unless(tc, landlock_allows_read_usr_bin_true, need_landlock(1));
	tcase_add_unless(tc, landlock_allows_write_in_scratch, need_landlock(1));
	tcase_add_unless(tc, landlock_refuses_write_in_var_tmp, need_landlock(1));
	tcase_add_unless(tc, landlock_allows_write_dev_null, need_landlock(1));
	tcase_add_unless(tc, landlock_grants_requested_read_path, need_landlock(1));
	tcase_add_unless(tc, landlock_missing_requested_path_is_error, need_landlock(1));
	tcase_add_unless(tc, landlock_symlinked_requested_path_is_error, need_landlock(1));
	tcase_add_unless(tc, landlock_network_none_leaves_tcp_to_the_namespace, need_landlock(4));
	tcase_add_unless(tc, landlock_network_host_allows_tcp_connect, need_landlock(4));
	tcase_add_unless(tc, landlock_scope_refuses_signal_outside_domain, need_landlock(6));
	suite_add_tcase(s, tc);

	tc = tcase_create("world");
	tcase_add_unless(tc, world_top_entries_are_the_hosts_whatever_the_cwd, feature_root());
	tcase_add_unless(tc, world_grant_point_in_a_host_directory_is_made_as_the_guest,
			 feature_root());
	suite_add_tcase(s, tc);

	tc = tcase_create("rlimits");
	tcase_add_test(tc, rlimits_set_soft_and_hard_and_no_core);
	tcase_add_unless(tc, rlimits_uint64_max_is_infinity, infinite_hard_limit());
	tcase_add_unless(tc, rlimits_cpu_beyond_the_kernels_count_is_infinity,
			 infinite_cpu_hard_limit());
	tcase_add_test(tc, rlimits_failure_names_the_limit);
	tcase_add_unless(tc, loopback_comes_up, feature_root() ? feature_root() : feature_netns());
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(kernel_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
