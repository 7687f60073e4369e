/*
 * live_confine.c - one attack per test, through the real setuid helper, as
 * an unprivileged caller: the guest tries to reach the caller, other
 * guests, the host's files, network and terminal, or to exhaust resources,
 * and each test asserts the refusal. Where a refusal could be vacuous (the
 * target missing, the check unable to see a success), the same test also
 * shows the allowed counterpart working.
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/keyctl.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/syscall.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "feature.h"
#include "harness.h"

/* Callers of this file's rules in tests/policy.conf.in. */
#define T_KILLER 4000010u /* seccomp-action kill */
#define T_NONE_ONLY 4000011u /* network none-only */
#define T_UNFILTERED 4000004u /* seccomp none, landlock off */
#define T_ONE_UID 4000083u /* a pool of one uid: each guest runs under the last one's */
/* The ceilings of T_CALLER's rule. */
#define CALLER_CPU_CEILING 30
#define CALLER_TIMEOUT_CEILING_MS 120000
/* How late past the product's own deadline a loaded machine may be. */
#define SLACK_MS 30000

/* Set up by main() as root, before the tests fork. */
static char home_dir[64], home_secret[96], secret_text[64];
static char shared_target[96], tmp_target[96];
static int listener = -1;
static char listener_port[8];

/* ------------------------------------------------------------------ */
/* Helpers                                                              */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* One guest on its own connection. */
static void run_once(const char *const *argv, spec_hook hook, void *arg, struct run *r)
{
	iso_conn *c = open_conn();

	run_guest(c, argv, NULL, hook, arg, r);
	iso_close(c);
}

/* The probe ran and reported a refusal. */
static void assert_refused(const struct run *r, const char *what)
{
	ck_assert_msg(r->spawn_rc == 0, "%s: spawn: %s", what, r->msg);
	ck_assert_msg(r->outcome == ISO_OUTCOME_EXITED && r->code == 1,
		      "%s: not refused (outcome %d code %d): %s", what, r->outcome, r->code,
		      r->out);
	ck_assert_msg(has_line(r->out, "refused: "), "%s: %s", what, r->out);
}

/* The probe ran and the attempted action succeeded. */
static void assert_allowed(const struct run *r, const char *what)
{
	ck_assert_msg(r->spawn_rc == 0, "%s: spawn: %s", what, r->msg);
	ck_assert_msg(r->outcome == ISO_OUTCOME_EXITED && r->code == 0,
		      "%s: refused (outcome %d code %d): %s", what, r->outcome, r->code, r->out);
}

struct limit_ask {
	enum iso_limit which;
	uint64_t value;
};

static void ask_limit(iso_spec *spec, void *arg)
{
	const struct limit_ask *a = arg;

	ck_assert_int_eq(iso_spec_set_limit(spec, a->which, a->value), 0);
}

static void ask_timeout(iso_spec *spec, void *arg)
{
	ck_assert_int_eq(iso_spec_set_timeout(spec, *(const uint64_t *)arg), 0);
}

static void ask_network(iso_spec *spec, void *arg)
{
	ck_assert_int_eq(iso_spec_set_network(spec, *(const enum iso_network *)arg), 0);
}

/* Start argv with stdout (and stderr) on a pipe whose read end is *out,
 * or on /dev/null when out is NULL. */
static iso_guest *start_guest(iso_conn *c, const char *const *argv, spec_hook hook, void *arg,
			      int *out)
{
	iso_spec *spec;
	iso_guest *g = NULL;
	int p[2] = { -1, -1 }, rc;

	ck_assert_int_eq(iso_spec_new(&spec), 0);
	ck_assert_int_eq(iso_spec_set_program(spec, argv[0]), 0);
	ck_assert_int_eq(iso_spec_set_argv(spec, argv), 0);
	if (out) {
		ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
		ck_assert_int_eq(iso_spec_set_stdio(spec, -1, p[1], p[1]), 0);
	}
	if (hook)
		hook(spec, arg);
	rc = iso_spawn(c, spec, &g);
	iso_spec_free(spec);
	if (out) {
		close(p[1]);
		*out = p[0];
	}
	ck_assert_msg(rc == 0, "spawn: %s", iso_last_error());
	return g;
}

/* Read from fd until `line` has arrived (10 s at most) into buf. */
static void await_line(int fd, const char *line, char *buf, size_t cap)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint64_t deadline = now_ms() + 10000;
	size_t len = 0;

	buf[0] = '\0';
	while (!has_line(buf, line)) {
		ssize_t got;

		ck_assert_msg(now_ms() < deadline && len + 1 < cap, "no \"%s\" from the guest: %s",
			      line, buf);
		if (poll(&p, 1, 100) <= 0)
			continue;
		got = read(fd, buf + len, cap - len - 1);
		ck_assert_msg(got > 0, "guest output ended before \"%s\": %s", line, buf);
		len += (size_t)got;
		buf[len] = '\0';
	}
}

/* dir followed by tail, in a static buffer (one at a time). */
static const char *fmt_path(const char *dir, const char *tail)
{
	static char buf[160];

	snprintf(buf, sizeof(buf), "%s%s", dir, tail);
	return buf;
}

static int path_exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/* ------------------------------------------------------------------ */
/* The caller's terminal                                                */

struct tty_run {
	char failed[160]; /* why the run could not be set up, or "" */
	int spawn_rc;
	enum iso_outcome outcome;
	int code;
	int injected; /* bytes readable on either side of the pty after it */
	int control_rc; /* the caller's own TIOCSTI: 0 or errno */
	int control_seen; /* ... and whether that byte could be read back */
	int winched; /* SIGWINCHes the caller's session received */
	int rows, echo; /* the terminal's size and ECHO after the guest */
	char out[1024];
};

static volatile sig_atomic_t winches;

static void count_winch(int sig)
{
	(void)sig;
	winches++;
}

static int tty_fail(struct tty_run *tr, const char *what)
{
	snprintf(tr->failed, sizeof(tr->failed), "%s: %s", what, strerror(errno));
	return -1;
}

/* Non-blocking: how many bytes are waiting on fd. */
static int pending_bytes(int fd)
{
	char buf[64];
	ssize_t got;
	int total = 0;

	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	while ((got = read(fd, buf, sizeof(buf))) > 0)
		total += (int)got;
	return total;
}

/* In the child of run_on_caller_terminal(): fills in tr; -1 when the run
 * could not be set up (tr->failed says why). */
static int terminal_child(const char *command, struct tty_run *tr)
{
	const char *argv[] = { T_PROBE, command, NULL };
	char slave_name[64];
	struct termios t;
	struct winsize ws;
	iso_conn *c = NULL;
	iso_spec *spec = NULL;
	iso_guest *g = NULL;
	int master, slave, out[2];
	size_t len = 0;
	ssize_t got;
	char ch = 'x';

	/* A new session whose controlling terminal is a fresh pty: what a
	 * caller started from an interactive shell has. */
	if (setsid() < 0)
		return tty_fail(tr, "setsid");
	if ((master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)) < 0 || grantpt(master) < 0 ||
	    unlockpt(master) < 0 || ptsname_r(master, slave_name, sizeof(slave_name)) != 0)
		return tty_fail(tr, "pty");
	/* Opened without O_NOCTTY by a session leader: our terminal now. */
	if ((slave = open(slave_name, O_RDWR | O_CLOEXEC)) < 0)
		return tty_fail(tr, slave_name);
	if (tcgetsid(slave) != getpid())
		return tty_fail(tr, "the pty did not become the controlling terminal");
	/* A SIGWINCH to the caller's foreground group (its own here) would
	 * be counted. */
	if (signal(SIGWINCH, count_winch) == SIG_ERR)
		return tty_fail(tr, "SIGWINCH");
	/* Injected bytes readable at once on the slave, and echoed to the
	 * master: a success could not go unseen. */
	if (tcgetattr(slave, &t) < 0)
		return tty_fail(tr, "tcgetattr");
	t.c_lflag &= ~(tcflag_t)ICANON;
	t.c_lflag |= ECHO;
	t.c_cc[VMIN] = 1;
	t.c_cc[VTIME] = 0;
	if (tcsetattr(slave, TCSANOW, &t) < 0)
		return tty_fail(tr, "tcsetattr");

	if (pipe2(out, O_CLOEXEC) < 0)
		return tty_fail(tr, "pipe");
	if (iso_open(&c) < 0 || iso_spec_new(&spec) < 0 ||
	    iso_spec_set_program(spec, T_PROBE) < 0 || iso_spec_set_argv(spec, argv) < 0 ||
	    iso_spec_set_stdio(spec, slave, out[1], out[1]) < 0) {
		snprintf(tr->failed, sizeof(tr->failed), "library: %s", iso_last_error());
		return -1;
	}
	tr->spawn_rc = iso_spawn(c, spec, &g);
	iso_spec_free(spec);
	close(out[1]);
	if (tr->spawn_rc < 0) {
		snprintf(tr->out, sizeof(tr->out), "%s", iso_last_error());
		iso_close(c);
		return 0;
	}
	while (len + 1 < sizeof(tr->out) &&
	       (got = read(out[0], tr->out + len, sizeof(tr->out) - len - 1)) > 0)
		len += (size_t)got;
	tr->out[len] = '\0';
	iso_wait(g, -1);
	tr->outcome = iso_guest_outcome(g);
	tr->code = iso_guest_code(g);
	iso_guest_free(g);
	iso_close(c);

	tr->winched = winches;
	if (ioctl(slave, TIOCGWINSZ, &ws) < 0 || tcgetattr(slave, &t) < 0)
		return tty_fail(tr, "reading the terminal back");
	tr->rows = ws.ws_row;
	tr->echo = (t.c_lflag & ECHO) != 0;
	tr->injected = pending_bytes(master) + pending_bytes(slave);
	/* The control: the terminal's own session may inject (unless the
	 * administrator turned legacy TIOCSTI off), and then it is seen. */
	tr->control_rc = ioctl(slave, TIOCSTI, &ch) < 0 ? errno : 0;
	tr->control_seen = pending_bytes(slave);
	/* master and slave stay open until _exit: closing the master hangs
	 * up the terminal, whose SIGHUP would end us before we report. */
	return 0;
}

/* Run `probe command` with the caller's controlling terminal as its stdin.
 * Check's fork mode makes each test a process-group leader, which cannot
 * call setsid(), so the caller side runs in a child of the test. */
static void run_on_caller_terminal(const char *command, struct tty_run *tr)
{
	int result[2], status;
	ssize_t got;
	pid_t pid;

	memset(tr, 0, sizeof(*tr));
	ck_assert_int_eq(pipe2(result, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct tty_run mine = { .failed = "" };

		close(result[0]);
		terminal_child(command, &mine);
		_exit(write(result[1], &mine, sizeof(mine)) == sizeof(mine) ? 0 : 1);
	}
	close(result[1]);
	got = read(result[0], tr, sizeof(*tr));
	close(result[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(got == (ssize_t)sizeof(*tr), "the terminal's session ended with status %#x",
		      status);
	ck_assert_msg(tr->failed[0] == '\0', "setting up the terminal: %s", tr->failed);
	ck_assert_msg(tr->spawn_rc == 0, "spawn: %s", tr->out);
}

/* ------------------------------------------------------------------ */
/* Other processes                                                      */

START_TEST(live_guest_cannot_ptrace_caller_or_another_guest)
{
	char caller[16], reaper[16], status_path[64], line[128];
	const char *at_caller[] = { T_PROBE, "ptrace-attach", caller, NULL };
	const char *at_reaper[] = { T_PROBE, "ptrace-attach", reaper, NULL };
	const char *sleeper[] = { T_PROBE, "sleep", "60", NULL };
	int tracer = -1;
	struct run r;
	iso_guest *other;
	iso_conn *c;
	FILE *f;

	become(T_CALLER);
	snprintf(caller, sizeof(caller), "%d", (int)getpid());
	c = open_conn();
	run_guest(c, at_caller, NULL, NULL, NULL, &r);
	assert_refused(&r, "ptrace of the caller");
	ck_assert_msg(has_line(r.out, "refused: EPERM"), "%s", r.out);

	other = start_guest(c, sleeper, NULL, NULL, NULL);
	snprintf(reaper, sizeof(reaper), "%d", (int)iso_guest_pid(other));
	run_guest(c, at_reaper, NULL, NULL, NULL, &r);
	assert_refused(&r, "ptrace of another guest's reaper");
	ck_assert_msg(has_line(r.out, "refused: EPERM"), "%s", r.out);
	/* And it is not being traced by anyone. */
	snprintf(status_path, sizeof(status_path), "/proc/%s/status", reaper);
	ck_assert_ptr_nonnull(f = fopen(status_path, "re"));
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "TracerPid: %d", &tracer) == 1)
			break;
	fclose(f);
	ck_assert_int_eq(tracer, 0);
	ck_assert_int_eq(iso_kill(other, SIGKILL), 0);
	ck_assert_int_eq(iso_wait(other, -1), 0);
	iso_guest_free(other);
	iso_close(c);
}
END_TEST

START_TEST(live_guest_cannot_read_caller_memory)
{
	char caller[16];
	const char *argv[] = { T_PROBE, "vmread", caller, NULL };
	struct run r;

	become(T_CALLER);
	snprintf(caller, sizeof(caller), "%d", (int)getpid());
	run_once(argv, NULL, NULL, &r);
	assert_refused(&r, "process_vm_readv of the caller");
	ck_assert_msg(has_line(r.out, "refused: EPERM"), "%s", r.out);
}
END_TEST

/* The setuid helper starts in its caller's session keyring, and a
 * process that possesses a keyring may read its keys whatever its uid: a
 * guest that inherited it would read the caller's keys under a rule that
 * lets it call keyctl ('seccomp none'). Each guest has a session keyring
 * of its own. */
START_TEST(live_guest_cannot_read_the_callers_session_keyring)
{
	char id[24];
	const char *argv[] = { T_PROBE, "keyread", id, NULL };
	struct run r;
	long key;

	become(T_UNFILTERED);
	if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0) {
		check_skip("live_guest_cannot_read_the_callers_session_keyring",
			   "keyctl: %s (a kernel without keys?)", strerror(errno));
		return;
	}
	key = syscall(SYS_add_key, "user", "isospawn-test", "caller-secret", 13,
		      KEY_SPEC_SESSION_KEYRING);
	ck_assert_msg(key > 0, "add_key: %s", strerror(errno));
	snprintf(id, sizeof(id), "%ld", key);
	run_once(argv, NULL, NULL, &r);
	ck_assert_msg(!strstr(r.out, "caller-secret"), "the guest read the caller's key: %s",
		      r.out);
	assert_refused(&r, "reading a key of the caller's session keyring");
}
END_TEST

/* TIOCSTI as it comes, and after trying to make the terminal the
 * guest's own controlling terminal (setsid, TIOCSCTTY). */
START_TEST(live_guest_cannot_inject_into_callers_terminal)
{
	static const char *const attacks[] = { "tiocsti", "steal-tty" };
	struct tty_run tr;

	become(T_CALLER);
	for (size_t i = 0; i < sizeof(attacks) / sizeof(*attacks); i++) {
		run_on_caller_terminal(attacks[i], &tr);
		ck_assert_msg(tr.outcome == ISO_OUTCOME_EXITED && tr.code == 1,
			      "%s not refused (outcome %d code %d): %s", attacks[i], tr.outcome,
			      tr.code, tr.out);
		ck_assert_msg(has_line(tr.out, "refused: "), "%s: %s", attacks[i], tr.out);
		ck_assert_msg(tr.injected == 0, "%s: %d bytes injected", attacks[i], tr.injected);
		/* Not vacuous: the terminal's own session can inject, and
		 * we see it (EIO: legacy TIOCSTI is off for everyone). */
		if (tr.control_rc == 0)
			ck_assert_int_eq(tr.control_seen, 1);
		else
			ck_assert_int_eq(tr.control_rc, EIO);
	}
}
END_TEST

/* Holding the caller's terminal, the guest cannot signal
 * the caller's foreground group through it (TIOCSWINSZ: SIGWINCH), change
 * its line discipline or make it exclusive; it may still set its modes,
 * as an interactive guest must (they persist: the caller's to restore). */
START_TEST(live_guest_cannot_signal_caller_through_its_terminal)
{
	struct tty_run tr;

	become(T_CALLER);
	run_on_caller_terminal("tty-ioctls", &tr);
	ck_assert_msg(tr.outcome == ISO_OUTCOME_EXITED && tr.code == 0, "outcome %d code %d: %s",
		      tr.outcome, tr.code, tr.out);
	ck_assert_msg(has_line(tr.out, "winsize: EPERM") && has_line(tr.out, "setd: EPERM") &&
			  has_line(tr.out, "excl: EPERM"),
		      "%s", tr.out);
	ck_assert_int_eq(tr.winched, 0);
	ck_assert_int_eq(tr.rows, 0);
	ck_assert_msg(has_line(tr.out, "termios: set") && tr.echo == 0, "%s", tr.out);
}
END_TEST

START_TEST(live_guest_runs_in_own_session_without_terminal)
{
	struct tty_run tr;
	int sid = -1, pgid = -1;
	char tty[32] = "";

	become(T_CALLER);
	run_on_caller_terminal("session", &tr);
	ck_assert_msg(tr.outcome == ISO_OUTCOME_EXITED && tr.code == 0, "outcome %d code %d: %s",
		      tr.outcome, tr.code, tr.out);
	ck_assert_msg(sscanf(tr.out, "sid=%d pgid=%d pid=%*d tty=%31s", &sid, &pgid, tty) == 3,
		      "probe said: %s", tr.out);
	/* getsid() and getpgrp() in the guest's PID namespace give 0 for a
	 * session or group whose leader is outside it, such as the
	 * caller's: positive ids are the guest's own. */
	ck_assert_int_gt(sid, 0);
	ck_assert_int_gt(pgid, 0);
	/* Its stdin is the caller's terminal, yet not its controlling one. */
	ck_assert_str_eq(tty, "none");
}
END_TEST

START_TEST(live_guest_cannot_signal_caller)
{
	char caller[16];
	const char *argv[] = { T_PROBE, "signal", caller, "0", NULL };
	struct run r;

	become(T_CALLER);
	snprintf(caller, sizeof(caller), "%d", (int)getpid());
	run_once(argv, NULL, NULL, &r);
	assert_refused(&r, "signal to the caller");
	ck_assert_ptr_null(strstr(r.out, "sent"));
}
END_TEST

/* ------------------------------------------------------------------ */
/* Privilege                                                            */

#if defined(__x86_64__)
/* Probed by main() without any filter: NULL if int 0x80 reaches the
 * kernel's i386 table here, else why not. */
static const char *int80_missing;

/* Where the entry point exists, the filter refuses the call (EPERM).
 * Where it does not, the kernel ends the guest with SIGSEGV before any
 * filter sees the call; live_kernel reports the filter's part as SKIP. */
START_TEST(live_int80_ptrace_is_refused)
{
	const char *int80[] = { T_PROBE, "int80-ptrace", NULL };
	struct run r;

	become(T_CALLER);
	run_once(int80, NULL, NULL, &r);
	ck_assert_msg(r.spawn_rc == 0, "spawn: %s", r.msg);
	ck_assert_msg(!has_line(r.out, "traced"), "int 0x80 ptrace succeeded: %s", r.out);
	if (int80_missing && r.outcome == ISO_OUTCOME_SIGNALED) {
		ck_assert_msg(r.code == SIGSEGV,
			      "int 0x80: signal %d, expected "
			      "SIGSEGV (%s)",
			      r.code, int80_missing);
		return;
	}
	assert_refused(&r, "int 0x80 ptrace");
	ck_assert_msg(has_line(r.out, "refused: EPERM"), "%s", r.out);
}
END_TEST

/* The filter refuses the x32 range whole: EPERM, whether or not the
 * kernel has the x32 entry point (without it the kernel says ENOSYS). */
START_TEST(live_x32_ptrace_is_refused)
{
	const char *x32[] = { T_PROBE, "x32-ptrace", NULL };
	struct run r;

	become(T_CALLER);
	run_once(x32, NULL, NULL, &r);
	assert_refused(&r, "x32 ptrace");
	ck_assert_msg(has_line(r.out, "refused: EPERM"), "%s", r.out);
}
END_TEST
#endif

START_TEST(live_guest_cannot_create_namespaces)
{
	const char *user[] = { T_PROBE, "unshare-user", NULL };
	const char *mount[] = { T_PROBE, "clone-newns", NULL };
	struct run r;
	iso_conn *c;

	become(T_CALLER);
	c = open_conn();
	run_guest(c, user, NULL, NULL, NULL, &r);
	assert_refused(&r, "unshare(CLONE_NEWUSER)");
	ck_assert_msg(has_line(r.out, "refused: EPERM"), "%s", r.out);
	run_guest(c, mount, NULL, NULL, NULL, &r);
	assert_refused(&r, "clone(CLONE_NEWNS)");
	ck_assert_msg(has_line(r.out, "refused: EPERM"), "%s", r.out);
	iso_close(c);
}
END_TEST

START_TEST(live_guest_cannot_setuid_root)
{
	const char *argv[] = { T_PROBE, "setuid0", NULL };
	struct run r;

	become(T_CALLER);
	run_once(argv, NULL, NULL, &r);
	assert_refused(&r, "setuid(0)");
	ck_assert_msg(has_line(r.out, "refused: EPERM"), "%s", r.out);
}
END_TEST

START_TEST(live_seccomp_kill_rule_ends_ptrace_with_sigsys)
{
	const char *argv[] = { T_PROBE, "ptrace-attach", "1", NULL };
	struct run r;

	become(T_KILLER);
	run_once(argv, NULL, NULL, &r);
	ck_assert_msg(r.spawn_rc == 0, "spawn: %s", r.msg);
	ck_assert_msg(r.outcome == ISO_OUTCOME_SIGNALED && r.code == SIGSYS,
		      "outcome %d code %d: %s", r.outcome, r.code, r.out);
	ck_assert_int_eq(r.exit_code, 128 + SIGSYS);
	ck_assert_ptr_null(strstr(r.out, "refused"));
}
END_TEST

/* ------------------------------------------------------------------ */
/* Files                                                                */

START_TEST(live_home_is_absent_and_landlock_refuses_what_the_tree_shows)
{
	const char *secret[] = { T_PROBE, "read", home_secret, NULL };
	const char *system[] = { T_PROBE, "read", "/usr/bin/true", NULL };
	const char *passwd[] = { T_PROBE, "read", "/etc/passwd", NULL };
	char ids[64];
	const char *ids_file[] = { T_PROBE, "read", ids, NULL };
	struct run r;
	iso_conn *c;

	become(T_CALLER);
	/* The caller itself can read it: only the guest's tree hides it. */
	ck_assert_int_eq(access(home_secret, R_OK), 0);
	c = open_conn();
	run_guest(c, secret, NULL, NULL, NULL, &r);
	assert_refused(&r, home_secret);
	ck_assert_msg(has_line(r.out, "refused: ENOENT"), "%s", r.out);
	ck_assert_ptr_null(strstr(r.out, secret_text));
	run_guest(c, system, NULL, NULL, NULL, &r);
	assert_allowed(&r, "/usr/bin/true");
	ck_assert_mem_eq(r.out, "\177ELF", 4);
	/* Landlock on top: the guest's group file is in its tree twice, mode
	 * 0644; it reads it as /etc/group, never where it is kept. */
	run_guest(c, passwd, NULL, NULL, NULL, &r);
	assert_allowed(&r, "/etc/passwd");
	snprintf(ids, sizeof(ids), "/.iso/%u.group", (unsigned)r.uid);
	ck_assert_msg(strstr(r.out, "\nguest:x:") != NULL, "%s", r.out);
	run_guest(c, ids_file, NULL, NULL, NULL, &r);
	assert_refused(&r, ids);
	ck_assert_msg(has_line(r.out, "refused: EACCES") || has_line(r.out, "refused: ENOENT"),
		      "%s", r.out);
	iso_close(c);
}
END_TEST

START_TEST(live_writes_land_only_in_own_tmp_and_grants)
{
	const char *shared[] = { T_PROBE, "write", shared_target, NULL };
	const char *tmp[] = { T_PROBE, "write", tmp_target, NULL };
	const char *cwd[] = { T_PROBE, "write", "in-tmp", NULL };
	const char *tmpdir[] = { T_PROBE, "tmpdir", NULL };
	const char *proc[] = { T_PROBE, "write", "/proc/self/comm", NULL };
	struct run r;
	iso_conn *c;

	unsetenv("TMPDIR"); /* the helper's own choice: the guest's /tmp */
	become(T_CALLER);
	c = open_conn();
	/* 0777 on the host, but not lent: in the tree the directory the
	 * host's /var stands for is an empty, read-only mount point. */
	run_guest(c, shared, NULL, NULL, NULL, &r);
	assert_refused(&r, shared_target);
	ck_assert(!path_exists(shared_target));
	/* The host's /tmp is not the guest's: what it writes there stays in
	 * its own. */
	run_guest(c, tmp, NULL, NULL, NULL, &r);
	assert_allowed(&r, tmp_target);
	ck_assert(!path_exists(tmp_target));
	/* Landlock on top: /proc/self/comm is the guest's to write as far as
	 * its mode says, but no rule grants writes in /proc. */
	run_guest(c, proc, NULL, NULL, NULL, &r);
	assert_refused(&r, "/proc/self/comm");
	ck_assert_msg(has_line(r.out, "refused: EACCES"), "%s", r.out);

	run_guest(c, cwd, NULL, NULL, NULL, &r);
	assert_allowed(&r, "its working directory");
	ck_assert(has_line(r.out, "wrote in-tmp"));
	run_guest(c, tmpdir, NULL, NULL, NULL, &r);
	assert_allowed(&r, "TMPDIR");
	ck_assert_msg(has_line(r.out, "TMPDIR=/tmp"), "%s", r.out);
	ck_assert(has_line(r.out, "wrote "));
	iso_close(c);
}
END_TEST

static void grant_write(iso_spec *spec, void *path)
{
	ck_assert_int_eq(iso_spec_add_write_path(spec, path), 0);
}

static void grant_read(iso_spec *spec, void *path)
{
	ck_assert_int_eq(iso_spec_add_read_path(spec, path), 0);
}

/* As `caller`, in a child: run argv with hook; exit 0 when the guest's
 * outcome is `want_code`, with its uid written to fd. */
static void as_caller(uid_t caller, const char *const *argv, spec_hook hook, void *arg,
		      int want_code, int fd)
{
	pid_t pid = fork();
	int status;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		iso_conn *c;
		struct run r;

		become(caller);
		c = open_conn();
		run_guest(c, argv, NULL, hook, arg, &r);
		iso_close(c);
		ck_assert_msg(r.spawn_rc == 0, "spawn: %s", r.msg);
		ck_assert_msg(r.outcome == ISO_OUTCOME_EXITED && r.code == want_code,
			      "outcome %d code %d: %s", r.outcome, r.code, r.out);
		ck_assert_int_eq(write(fd, &r.uid, sizeof(r.uid)), sizeof(r.uid));
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "caller %u failed",
		      (unsigned)caller);
}

/* A file a guest leaves in a write grant is its caller's on disk (0600
 * under the helper's umask): another caller's guest, lent the same place
 * by its own caller, reaches it only as its bits for others allow, as its
 * caller would: not at all. */
START_TEST(live_file_left_in_a_write_grant_is_not_readable_by_another_callers_guest)
{
	char dir[96], path[128];
	const char *writer[] = { T_PROBE, "write", path, NULL };
	const char *reader[] = { T_PROBE, "read", path, NULL };
	uid_t writer_uid, reader_uid;
	struct stat st;
	int p[2];

	snprintf(dir, sizeof(dir), T_SHARED "/left-by-one-caller-%d", (int)getpid());
	snprintf(path, sizeof(path), "%s/f", dir);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	ck_assert_int_eq(chown(dir, T_CALLER, T_CALLER), 0);
	ck_assert_int_eq(pipe(p), 0);
	as_caller(T_CALLER, writer, grant_write, dir, 0, p[1]);
	as_caller(T_SECOND, reader, grant_read, dir, 1, p[1]);
	ck_assert_int_eq(read(p[0], &writer_uid, sizeof(writer_uid)), sizeof(writer_uid));
	ck_assert_int_eq(read(p[0], &reader_uid, sizeof(reader_uid)), sizeof(reader_uid));
	ck_assert_int_eq(lstat(path, &st), 0);
	unlink(path);
	rmdir(dir);
	ck_assert_uint_eq(st.st_uid, T_CALLER);
	ck_assert_uint_eq(st.st_gid, T_CALLER);
	ck_assert_uint_eq(st.st_mode & 077, 0);
	ck_assert_uint_ne(writer_uid, reader_uid);
}
END_TEST

/* The host honours set-id bits in a write grant (only the guest's bind of
 * it is nosuid), so anyone who reaches the directory would run a file left
 * with them as its owner, the caller. However the guest sets them (chmod,
 * install -m, cp -p of a set-id program), the file it leaves has
 * neither. */
START_TEST(live_guest_leaves_no_setid_file_in_a_write_grant)
{
	char dir[96], script[512], path[128];
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	const char *const names[] = { "t", "u", "v" };
	struct stat st;
	uid_t uid;
	int p[2];

	snprintf(dir, sizeof(dir), T_SHARED "/setid-%d", (int)getpid());
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	ck_assert_int_eq(chown(dir, T_CALLER, T_CALLER), 0);
	snprintf(script, sizeof(script),
		 "cd %s && cp /bin/true t && chmod 6755 t; chmod g+s t; chmod u+s t; "
		 "install -m 4755 /bin/true u; cp -p /bin/su v 2>/dev/null || "
		 "{ cp /bin/true v && chmod 2755 v; }; ls -l",
		 dir);
	ck_assert_int_eq(pipe(p), 0);
	as_caller(T_CALLER, argv, grant_write, dir, 0, p[1]);
	ck_assert_int_eq(read(p[0], &uid, sizeof(uid)), sizeof(uid));
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (lstat(path, &st) == 0) {
			ck_assert_uint_eq(st.st_uid, T_CALLER);
			ck_assert_msg((st.st_mode & (S_ISUID | S_ISGID)) == 0, "%s: mode %o", path,
				      (unsigned)st.st_mode);
		}
		unlink(path);
	}
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* The program is opened as the guest, but with root's
 * capabilities beyond the file-system ones (CAP_SYS_PTRACE): through
 * /proc/PID/cwd of another user's process it would reach a script neither
 * the caller nor the guest may reach, and run it. No magic link is
 * followed: the spawn fails with ELOOP, and the script never runs. */
START_TEST(live_program_is_not_opened_through_a_proc_magic_link)
{
	char dir[96], script[128], program[96];
	const char *argv[] = { program, NULL };
	int alive[2], fd;
	uid_t victim = 4000098; /* no rule's caller, no pool's uid */
	struct run r;
	pid_t pid;
	char byte;

	snprintf(dir, sizeof(dir), T_ROOT "/victim-%d", (int)getpid());
	snprintf(script, sizeof(script), "%s/pub/job.sh", dir);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	ck_assert_int_eq(mkdir(fmt_path(dir, "/pub"), 0755), 0);
	fd = open(script, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0755);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_gt(dprintf(fd, "#!/bin/sh\necho victim-script-ran\n"), 0);
	close(fd);
	ck_assert_int_eq(chmod(script, 0755), 0);
	ck_assert_int_eq(chown(script, victim, victim), 0);
	ck_assert_int_eq(chown(fmt_path(dir, "/pub"), victim, victim), 0);
	ck_assert_int_eq(chown(dir, victim, victim), 0);
	/* The victim: a process of its own uid whose cwd is beyond the 0700
	 * directory; it ends when this test does (its pipe closes). */
	ck_assert_int_eq(pipe2(alive, O_CLOEXEC), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		close(alive[1]);
		if (setgroups(0, NULL) < 0 || setresgid(victim, victim, victim) < 0 ||
		    setresuid(victim, victim, victim) < 0 || chdir(fmt_path(dir, "/pub")) < 0)
			_exit(1);
		while (read(alive[0], &byte, 1) < 0 && errno == EINTR)
			;
		_exit(0);
	}
	close(alive[0]);
	snprintf(program, sizeof(program), "/proc/%d/cwd/job.sh", (int)pid);
	become(T_CALLER);
	/* The caller itself cannot reach it, by either path. */
	ck_assert_int_eq(access(program, X_OK), -1);
	ck_assert_int_eq(access(script, X_OK), -1);
	run_once(argv, NULL, NULL, &r);
	ck_assert_msg(r.spawn_rc == 0, "spawn: %s", r.msg);
	ck_assert_ptr_null(strstr(r.out, "victim-script-ran"));
	ck_assert_msg(r.outcome == ISO_OUTCOME_FAILED && r.code == ELOOP, "outcome %d code %d: %s",
		      r.outcome, r.code, r.out);
}
END_TEST

/* Each guest's /tmp is a fresh tmpfs: nothing one guest leaves there is
 * seen by the next, under the same uid (a pool of one), nor by the host. */
START_TEST(live_guest_tmp_is_its_own_and_ends_with_it)
{
	const char *writer[] = { T_PROBE, "write", "/tmp/left-behind", NULL };
	const char *reader[] = { T_PROBE, "read", "/tmp/left-behind", NULL };
	struct run r;
	uid_t uid;
	iso_conn *c;

	become(T_ONE_UID);
	c = open_conn();
	run_guest(c, writer, NULL, NULL, NULL, &r);
	assert_allowed(&r, "writing in /tmp");
	ck_assert(!path_exists("/tmp/left-behind"));
	uid = r.uid;
	for (int i = 0; i < 4; i++) {
		run_guest(c, reader, NULL, NULL, NULL, &r);
		ck_assert_uint_eq(r.uid, uid);
		assert_refused(&r, "reading what an earlier guest left");
		ck_assert_msg(has_line(r.out, "refused: ENOENT"), "%s", r.out);
	}
	iso_close(c);
}
END_TEST

/* A guest's /tmp is a tmpfs of its mount namespace, so a tree
 * no path-walking cleanup could remove (3,000 levels of 200-byte names,
 * 600 KB of path, a file at the bottom) is gone with the guest, root never
 * walks it, and the uid it ran under serves the next guests at once. */
START_TEST(live_deep_tree_in_tmp_is_gone_and_next_spawns_succeed)
{
	const char *deep[] = { T_PROBE, "deeptree", "3000", "200", NULL };
	const char *count[] = { T_PROBE, "count", ".", NULL };
	struct run r;
	uid_t uid;
	iso_conn *c;

	become(T_ONE_UID);
	c = open_conn();
	run_guest(c, deep, NULL, NULL, NULL, &r);
	assert_allowed(&r, "building the tree");
	ck_assert_msg(has_line(r.out, "built 3000 levels"), "%s", r.out);
	uid = r.uid;
	/* A pool of one uid: the next guests get the same uid. */
	for (int i = 0; i < 5; i++) {
		run_guest(c, count, NULL, NULL, NULL, &r);
		assert_allowed(&r, "a guest after the tree");
		ck_assert_uint_eq(r.uid, uid);
		ck_assert_msg(has_line(r.out, "entries=0"), "guest %d found: %s", i, r.out);
	}
	iso_close(c);
}
END_TEST

/* Nothing of a guest's working directory (its /tmp) reaches the next
 * guest of its uid, not a user.* extended attribute, not a timestamp. */
START_TEST(live_next_guest_of_a_uid_inherits_no_xattr_or_timestamp)
{
	const char *set[] = { T_PROBE, "xattr-set", ".", "user.left", "by-the-last-guest", NULL };
	const char *age[] = { T_PROBE, "mtime", ".", "old", NULL };
	const char *get[] = { T_PROBE, "xattr-get", ".", "user.left", NULL };
	const char *mtime[] = { T_PROBE, "mtime", ".", NULL };
	long long seen = 0;
	struct run r;
	uid_t uid;
	iso_conn *c;

	become(T_ONE_UID);
	c = open_conn();
	run_guest(c, set, NULL, NULL, NULL, &r);
	if (r.spawn_rc == 0 && has_line(r.out, "refused: EOPNOTSUPP")) {
		/* tmpfs takes user.* attributes from Linux 6.6 on. */
		printf("SKIP: live_next_guest_of_a_uid_inherits_no_xattr_or_timestamp: "
		       "no user.* extended attributes in the guest's /tmp here\n");
		iso_close(c);
		return;
	}
	assert_allowed(&r, "setting an extended attribute");
	uid = r.uid;
	run_guest(c, age, NULL, NULL, NULL, &r);
	assert_allowed(&r, "setting the time");
	run_guest(c, get, NULL, NULL, NULL, &r);
	ck_assert_uint_eq(r.uid, uid);
	assert_refused(&r, "reading the last guest's attribute");
	ck_assert_msg(has_line(r.out, "refused: ENODATA"), "%s", r.out);
	run_guest(c, mtime, NULL, NULL, NULL, &r);
	ck_assert_uint_eq(r.uid, uid);
	assert_allowed(&r, "reading the time");
	ck_assert_msg(sscanf(r.out, "mtime=%lld", &seen) == 1 && seen > time(NULL) - 3600,
		      "the directory's time is the last guest's: %s", r.out);
	iso_close(c);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Network                                                              */

static int listener_has_connection(void)
{
	struct pollfd p = { .fd = listener, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

START_TEST(live_network_none_cannot_reach_host_loopback)
{
	const char *argv[] = { T_PROBE, "connect", "127.0.0.1", listener_port, NULL };
	enum iso_network none = ISO_NETWORK_NONE, host = ISO_NETWORK_HOST;
	struct run r;
	iso_conn *c;
	int peer;

	become(T_CALLER);
	c = open_conn();
	run_guest(c, argv, NULL, ask_network, &none, &r);
	assert_refused(&r, "connect with network none");
	ck_assert(!listener_has_connection());
	/* The listener is real: with the host network it is reached. */
	run_guest(c, argv, NULL, ask_network, &host, &r);
	assert_allowed(&r, "connect with network host");
	ck_assert(has_line(r.out, "connected"));
	ck_assert(listener_has_connection());
	peer = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
	ck_assert_int_ge(peer, 0);
	close(peer);
	iso_close(c);
}
END_TEST

/* Landlock's network rules (ABI 4) cover TCP only: a UDP datagram to the
 * host's loopback is stopped by the private network namespace alone. A
 * socket of the caller's on 127.0.0.1 gets nothing from a guest of network
 * none, and the same datagram from a guest of network host. */
START_TEST(live_network_none_sends_no_datagram_to_host_loopback)
{
	struct sockaddr_in addr = { .sin_family = AF_INET,
				    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	enum iso_network none = ISO_NETWORK_NONE, host = ISO_NETWORK_HOST;
	socklen_t len = sizeof(addr);
	char port[8], got[8];
	const char *argv[] = { T_PROBE, "send-udp", "127.0.0.1", port, NULL };
	struct pollfd p = { .events = POLLIN };
	struct run r;
	iso_conn *c;

	become(T_CALLER);
	p.fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert_msg(p.fd >= 0 && bind(p.fd, (struct sockaddr *)&addr, sizeof(addr)) == 0 &&
			  getsockname(p.fd, (struct sockaddr *)&addr, &len) == 0,
		      "a UDP socket on loopback: %s", strerror(errno));
	snprintf(port, sizeof(port), "%u", ntohs(addr.sin_port));
	c = open_conn();
	run_guest(c, argv, NULL, ask_network, &none, &r);
	ck_assert_msg(r.outcome == ISO_OUTCOME_EXITED, "outcome %d: %s", r.outcome, r.out);
	ck_assert_msg(poll(&p, 1, 200) == 0,
		      "a guest of network none reached the host's "
		      "loopback: %zd bytes",
		      recv(p.fd, got, sizeof(got), MSG_DONTWAIT));
	/* The socket is real: with the host network the datagram comes. */
	run_guest(c, argv, NULL, ask_network, &host, &r);
	assert_allowed(&r, "send-udp with network host");
	ck_assert_int_eq(poll(&p, 1, 2000), 1);
	ck_assert_int_eq(recv(p.fd, got, sizeof(got), MSG_DONTWAIT), 5);
	close(p.fd);
	iso_close(c);
}
END_TEST

START_TEST(live_network_none_only_rule_refuses_host_by_name)
{
	const char *argv[] = { T_PROBE, "connect", "127.0.0.1", listener_port, NULL };
	enum iso_network host = ISO_NETWORK_HOST;
	struct run r;
	iso_conn *c;

	become(T_NONE_ONLY);
	c = open_conn();
	run_guest(c, argv, NULL, ask_network, &host, &r);
	ck_assert_int_eq(r.spawn_rc, -EACCES);
	ck_assert_msg(strstr(r.msg, "network host") != NULL, "%s", r.msg);
	/* Asking for nothing gets no network either. */
	run_guest(c, argv, NULL, NULL, NULL, &r);
	assert_refused(&r, "connect under network none-only");
	ck_assert(!listener_has_connection());
	iso_close(c);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Resources                                                            */

START_TEST(live_fork_bomb_stops_at_nproc_limit_leaving_nothing)
{
	const char *argv[] = { T_PROBE, "forkbomb", NULL };
	struct limit_ask nproc = { ISO_LIMIT_NPROC, 20 };
	unsigned forks = 0;
	struct run r;
	iso_conn *c;

	become(T_CALLER);
	c = open_conn();
	run_guest(c, argv, NULL, ask_limit, &nproc, &r);
	assert_allowed(&r, "fork bomb");
	ck_assert_msg(sscanf(r.out, "forks=%u", &forks) == 1, "probe said: %s", r.out);
	ck_assert_msg(strstr(r.out, "errno=EAGAIN") != NULL, "%s", r.out);
	ck_assert_uint_lt(forks, 20);
	/* The connection still holds the uid's lease: nobody else's guest
	 * can be running under it. */
	ck_assert_int_eq(processes_of(&r.uid, 1), 0);
	iso_close(c);
}
END_TEST

START_TEST(live_memory_bomb_stops_at_address_space_limit)
{
	const char *argv[] = { T_PROBE, "membomb", NULL };
	struct limit_ask as = { ISO_LIMIT_AS, 256ull << 20 };
	unsigned long long bytes = 0;
	struct run r;

	become(T_CALLER);
	run_once(argv, ask_limit, &as, &r);
	assert_allowed(&r, "memory bomb");
	ck_assert_msg(sscanf(r.out, "bytes=%llu", &bytes) == 1, "%s", r.out);
	ck_assert_ptr_null(strstr(r.out, "limit=none"));
	ck_assert_uint_lt(bytes, 256ull << 20);
}
END_TEST

/* Python's script as the guest of T_CALLER, on a connection of its own:
 * 0, after a SKIP naming it, where Python is not installed. */
static int run_python(const char *test, const char *script, spec_hook hook, void *arg,
		      struct run *r)
{
	const char *argv[] = { "/usr/bin/python3", "-c", script, NULL };

	if (access(argv[0], X_OK) != 0) {
		check_skip(test, "%s is not installed (scripts/deps installs it)", argv[0]);
		return 0;
	}
	become(T_CALLER);
	run_once(argv, hook, arg, r);
	return 1;
}

/* SysV shared memory outlives the processes that attach it, and no
 * rlimit counts it: without a bound of its own, the guest's IPC namespace
 * holds as much as the kernel's defaults allow (512 MiB under an `as` of
 * 128 MiB). Its shm limit bounds it: with shm 1 MiB, 256 KiB segments are
 * made, written and detached until the kernel refuses one: 1 MiB and no
 * more. */
START_TEST(live_sysv_shared_memory_stays_within_the_shm_limit)
{
	static const char script[] = "import ctypes\n"
				     "c = ctypes.CDLL(None, use_errno=True)\n"
				     "c.shmat.restype = ctypes.c_void_p\n"
				     "held = 0\n"
				     "for i in range(16):\n"
				     "    id = c.shmget(0, 256 << 10, 0o1600)\n"
				     "    if id < 0: break\n"
				     "    a = c.shmat(id, None, 0)\n"
				     "    if a is None or a == ctypes.c_void_p(-1).value: break\n"
				     "    ctypes.memset(a, 1, 256 << 10)\n"
				     "    c.shmdt(ctypes.c_void_p(a)); held += 256 << 10\n"
				     "print('held', held)\n";
	struct limit_ask shm = { ISO_LIMIT_SHM, 1ull << 20 };
	unsigned long long held = 0;
	const char *at;
	struct run r;

	if (!run_python("live_sysv_shared_memory_stays_within_the_shm_limit", script, ask_limit,
			&shm, &r))
		return;
	assert_allowed(&r, "SysV shared memory");
	at = strstr(r.out, "held ");
	ck_assert_msg(at && sscanf(at, "held %llu", &held) == 1, "%s", r.out);
	ck_assert_msg(held >= 256 << 10 && held <= 1 << 20,
		      "the guest held %llu bytes of "
		      "SysV shared memory under shm=1MiB",
		      held);
}
END_TEST

/* As root, for this test's process (and so its helper): a real-time
 * policy and I/O class, a negative nice, room in the rlimits to take
 * them again, and a negative oom_score_adj where root may set one. Each
 * returns whether it took. */
static int caller_oom_protected(void)
{
	int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	int ok = fd >= 0 && write(fd, "-500", 4) == 4;

	if (fd >= 0)
		close(fd);
	return ok;
}

static int caller_real_time(void)
{
	struct sched_param fifo = { .sched_priority = 10 };

	return setpriority(PRIO_PROCESS, 0, -5) == 0 &&
	       syscall(SYS_ioprio_set, 1, 0, 1 << 13) == 0 &&
	       sched_setscheduler(0, SCHED_FIFO, &fifo) == 0;
}

static int caller_may_take_real_time(void)
{
	struct rlimit rtprio = { 50, 50 }, nice = { 30, 30 };

	return setrlimit(RLIMIT_RTPRIO, &rtprio) == 0 && setrlimit(RLIMIT_NICE, &nice) == 0;
}

/* What the caller's process has of the scheduler beyond an ordinary
 * process's (granted it by the administrator: a real-time policy, a
 * negative nice or oom_score_adj) is the caller's, never its guest's: a
 * guest that spins or eats memory under them starves the host's CPUs and
 * is the last the OOM killer picks. The caller here runs SCHED_FIFO at
 * nice -5 with the real-time I/O class, and the guest must neither keep
 * them nor take a real-time policy again. */
START_TEST(live_guest_does_not_inherit_the_callers_scheduling_privileges)
{
	const char *argv[] = { T_PROBE, "sched", NULL };
	int rt = caller_real_time(), limits = caller_may_take_real_time();
	int oom = caller_oom_protected(), policy, nice, io;
	char adj[16], fifo[16], lower[16];
	struct run r;

	if (!rt)
		check_skip("live_guest_does_not_inherit_the_callers_scheduling_privileges",
			   "root cannot take SCHED_FIFO, nice -5 and the real-time I/O class "
			   "here (no CAP_SYS_NICE?)");
	if (!limits || !oom)
		check_skip("live_guest_does_not_inherit_the_callers_scheduling_privileges",
			   "root cannot raise RLIMIT_RTPRIO and RLIMIT_NICE%s here "
			   "(no CAP_SYS_RESOURCE)",
			   oom ? "" : " or lower its oom_score_adj");
	if (!rt && !oom)
		return;
	become(T_CALLER);
	run_once(argv, NULL, NULL, &r);
	assert_allowed(&r, "sched");
	ck_assert_msg(sscanf(r.out,
			     "policy=%d nice=%d ioclass=%d oom=%15s fifo=%15s lower-nice=%15s",
			     &policy, &nice, &io, adj, fifo, lower) == 6,
		      "%s", r.out);
	if (rt) {
		ck_assert_msg(policy == SCHED_OTHER && nice == 0 && io != 1, "%s", r.out);
		ck_assert_msg(strcmp(fifo, "EPERM") == 0 && strcmp(lower, "EACCES") == 0, "%s",
			      r.out);
	}
	if (oom)
		ck_assert_msg(atoi(adj) >= 0, "%s", r.out);
}
END_TEST

/* SysV semaphore sets and message queues outlive the processes that make
 * them, within the guest's IPC namespace, and are kernel memory that no
 * rlimit counts: under the kernel's defaults (sets of 32,000, 32,000 of
 * them) one guest could hold 2 MiB per set, 64 GB at most. */
START_TEST(live_sysv_semaphores_and_message_queues_stay_bounded)
{
	static const char script[] =
	    "import ctypes\n"
	    "c = ctypes.CDLL(None, use_errno=True)\n"
	    "print('big', c.semget(0, 32000, 0o1600) >= 0)\n"
	    "sets = 0\n"
	    "while sets < 1000 and c.semget(0, 250, 0o1600) >= 0: sets += 1\n"
	    "queues = 0\n"
	    "while queues < 1000 and c.msgget(0, 0o1600) >= 0: queues += 1\n"
	    "print('sets', sets, 'queues', queues)\n";
	int sets = -1, queues = -1;
	const char *at;
	struct run r;

	if (!run_python("live_sysv_semaphores_and_message_queues_stay_bounded", script, NULL, NULL,
			&r))
		return;
	assert_allowed(&r, "SysV semaphores and message queues");
	ck_assert_msg(has_line(r.out, "big False"), "a set of 32,000 semaphores: %s", r.out);
	at = strstr(r.out, "sets ");
	ck_assert_msg(at && sscanf(at, "sets %d queues %d", &sets, &queues) == 2, "%s", r.out);
	ck_assert_msg(sets >= 1 && sets <= 128 && queues >= 1 && queues <= 16,
		      "the guest made %d semaphore sets and %d message queues", sets, queues);
}
END_TEST

START_TEST(live_cpu_loop_is_stopped_by_cpu_limit)
{
	const char *argv[] = { T_PROBE, "cpuloop", NULL };
	const char *cli[] = { "--limit", "cpu=1", "--", T_PROBE, "cpuloop", NULL };
	struct limit_ask cpu = { ISO_LIMIT_CPU, 1 };
	struct run r;
	iso_conn *c;
	iso_guest *g;

	become(T_CALLER);
	c = open_conn();
	g = start_guest(c, argv, ask_limit, &cpu, NULL);
	ck_assert_int_eq(iso_wait(g, -1), 0);
	ck_assert_msg(iso_guest_outcome(g) == ISO_OUTCOME_LIMIT, "outcome %d code %d",
		      iso_guest_outcome(g), iso_guest_code(g));
	ck_assert_int_eq(iso_guest_limit(g), ISO_LIMIT_CPU);
	/* The soft limit's SIGXCPU ends a spinning guest (the hard limit's
	 * SIGKILL is a second later); exit code 128 + it (isospawn(1)). */
	ck_assert_int_eq(iso_guest_code(g), SIGXCPU);
	ck_assert_int_eq(iso_guest_exit_code(g), 128 + SIGXCPU);

	run_cli(cli, NULL, &r);
	ck_assert_msg(r.exit_code == iso_guest_exit_code(g), "CLI exit %d, library %d: %s",
		      r.exit_code, iso_guest_exit_code(g), r.err);
	ck_assert_msg(strstr(r.err, "cpu limit") != NULL, "%s", r.err);
	iso_guest_free(g);
	iso_close(c);
}
END_TEST

START_TEST(live_timeout_kills_guest_and_its_descendants)
{
	const char *sleeper[] = { T_PROBE, "sleep", "60", NULL };
	const char *family[] = { T_PROBE, "sleep-family", "60", NULL };
	const char *cli[] = { "--timeout", "0.5", "--", T_PROBE, "sleep", "60", NULL };
	/* The product's deadlines: a guest must never end before them; after
	 * them, a loaded machine may take its time (SLACK_MS). */
	uint64_t half_second = 500, family_timeout = 5000, started, took, wall_us;
	char out[256];
	struct run r;
	iso_guest *g;
	iso_conn *c;
	uid_t uid;
	int fd;

	become(T_CALLER);
	c = open_conn();
	started = now_ms();
	run_guest(c, sleeper, NULL, ask_timeout, &half_second, &r);
	took = now_ms() - started;
	ck_assert_msg(r.spawn_rc == 0, "spawn: %s", r.msg);
	ck_assert_int_eq(r.outcome, ISO_OUTCOME_TIMED_OUT);
	ck_assert_int_eq(r.exit_code, 124);
	ck_assert_msg(took >= half_second && took < half_second + SLACK_MS,
		      "a %llu ms timeout took %llu ms", (unsigned long long)half_second,
		      (unsigned long long)took);
	ck_assert_int_eq(processes_of(&r.uid, 1), 0);

	/* A guest with a child and a grandchild: all of them end. The longer
	 * timeout leaves time to see that they all exist first. */
	g = start_guest(c, family, ask_timeout, &family_timeout, &fd);
	uid = iso_guest_uid(g);
	await_line(fd, "ready", out, sizeof(out));
	/* The guest, its child and its grandchild (the reaper is root's). */
	ck_assert_int_ge(processes_of(&uid, 1), 3);
	ck_assert_int_eq(iso_wait(g, -1), 0);
	ck_assert_int_eq(iso_guest_outcome(g), ISO_OUTCOME_TIMED_OUT);
	iso_guest_usage(g, &wall_us, NULL, NULL, NULL);
	ck_assert_msg(wall_us >= family_timeout * 1000 &&
			  wall_us < (family_timeout + SLACK_MS) * 1000,
		      "a %llu ms timeout: the helper measured %llu us",
		      (unsigned long long)family_timeout, (unsigned long long)wall_us);
	ck_assert_int_eq(processes_of(&uid, 1), 0);
	close(fd);
	iso_guest_free(g);
	iso_close(c);

	started = now_ms();
	run_cli(cli, NULL, &r);
	took = now_ms() - started;
	ck_assert_msg(r.exit_code == 124, "exit %d: %s", r.exit_code, r.err);
	ck_assert_msg(took >= half_second && took < half_second + SLACK_MS,
		      "isospawn --timeout 0.5 took %llu ms", (unsigned long long)took);
}
END_TEST

START_TEST(live_limit_or_timeout_above_ceiling_is_refused_by_name)
{
	const char *argv[] = { T_PROBE, "exit", "0", NULL };
	struct limit_ask cpu = { ISO_LIMIT_CPU, CALLER_CPU_CEILING + 1 };
	uint64_t timeout = CALLER_TIMEOUT_CEILING_MS + 1000;
	struct run r;
	iso_conn *c;

	become(T_CALLER);
	c = open_conn();
	run_guest(c, argv, NULL, ask_limit, &cpu, &r);
	ck_assert_int_eq(r.spawn_rc, -EACCES);
	ck_assert_msg(strstr(r.msg, "cpu") != NULL, "%s", r.msg);
	run_guest(c, argv, NULL, ask_timeout, &timeout, &r);
	ck_assert_int_eq(r.spawn_rc, -EACCES);
	ck_assert_msg(strstr(r.msg, "timeout") != NULL, "%s", r.msg);
	/* At the ceiling is fine. */
	cpu.value = CALLER_CPU_CEILING;
	run_guest(c, argv, NULL, ask_limit, &cpu, &r);
	assert_allowed(&r, "cpu at the ceiling");
	iso_close(c);
}
END_TEST

/* tmpfs reads size=0 as unlimited, so a limit of 0 (below
 * every ceiling) must not reach it: refused by name, for every limit; a
 * small one bounds /tmp and /dev/shm. */
START_TEST(live_zero_limit_is_refused_and_a_small_tmp_is_bounded)
{
	const char *fill[] = {
		"/bin/sh", "-c",
		"for d in /tmp /dev/shm; do dd if=/dev/zero of=$d/big bs=64k count=64 "
		"2>/dev/null; wc -c < $d/big; done",
		NULL
	};
	struct limit_ask ask = { ISO_LIMIT_SCRATCH, 0 };
	struct run r;
	iso_conn *c;
	long tmp = -1, shm = -1;

	become(T_CALLER);
	c = open_conn();
	for (int i = 0; i < ISO_LIMIT_COUNT; i++) {
		char want[32];

		ask.which = (enum iso_limit)i;
		run_guest(c, fill, NULL, ask_limit, &ask, &r);
		snprintf(want, sizeof(want), "limit %s=0", iso_limit_name(ask.which));
		ck_assert_msg(r.spawn_rc == -EINVAL && strstr(r.msg, want) != NULL,
			      "%s: spawn %d: %s (out: %s)", want, r.spawn_rc, r.msg, r.out);
	}
	ask.value = 1 << 20;
	ask.which = ISO_LIMIT_SCRATCH;
	run_guest(c, fill, NULL, ask_limit, &ask, &r);
	assert_allowed(&r, "scratch 1M");
	ck_assert_msg(sscanf(r.out, "%ld %ld", &tmp, &shm) == 2, "%s", r.out);
	ck_assert_msg(tmp > 0 && tmp <= 1 << 20, "/tmp took %ld bytes", tmp);
	ck_assert_msg(shm == 4 << 20, "/dev/shm took %ld bytes", shm);
	ask.which = ISO_LIMIT_SHM;
	run_guest(c, fill, NULL, ask_limit, &ask, &r);
	assert_allowed(&r, "shm 1M");
	ck_assert_msg(sscanf(r.out, "%ld %ld", &tmp, &shm) == 2, "%s", r.out);
	ck_assert_msg(shm > 0 && shm <= 1 << 20, "/dev/shm took %ld bytes", shm);
	iso_close(c);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Setup                                                                */

/* As root: a 0644 file under /home, and a TCP listener on loopback. */
static void make_targets(void)
{
	struct sockaddr_in addr = { .sin_family = AF_INET,
				    .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(addr);
	int pid = (int)getpid(), fd;

	snprintf(home_dir, sizeof(home_dir), "/home/isospawn-live-%d", pid);
	snprintf(home_secret, sizeof(home_secret), "%s/secret", home_dir);
	snprintf(secret_text, sizeof(secret_text), "isospawn-live-secret-%d", pid);
	snprintf(shared_target, sizeof(shared_target), T_SHARED "/confine-%d", pid);
	snprintf(tmp_target, sizeof(tmp_target), "/tmp/isospawn-live-confine-%d", pid);
	if (mkdir(home_dir, 0755) < 0 ||
	    (fd = open(home_secret, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0 ||
	    dprintf(fd, "%s\n", secret_text) < 0 || close(fd) < 0) {
		perror(home_secret);
		exit(99);
	}
	listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listener < 0 || bind(listener, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    listen(listener, 8) < 0 || getsockname(listener, (struct sockaddr *)&addr, &len) < 0) {
		perror("listener");
		exit(99);
	}
	snprintf(listener_port, sizeof(listener_port), "%u", ntohs(addr.sin_port));
}

static void remove_targets(void)
{
	unlink(home_secret);
	rmdir(home_dir);
	unlink(shared_target);
	unlink(tmp_target);
	close(listener);
}

static Suite *confine_suite(void)
{
	Suite *s = suite_create("live_confine");
	TCase *procs = tcase_create("other_processes");
	TCase *priv = tcase_create("privilege");
	TCase *files = tcase_create("files");
	TCase *net = tcase_create("network");
	TCase *res = tcase_create("resources");
	TCase *all[] = { procs, priv, files, net, res };

	tcase_add_test(procs, live_guest_cannot_ptrace_caller_or_another_guest);
	tcase_add_test(procs, live_guest_cannot_read_caller_memory);
	tcase_add_test(procs, live_guest_cannot_read_the_callers_session_keyring);
	tcase_add_test(procs, live_guest_cannot_inject_into_callers_terminal);
	tcase_add_test(procs, live_guest_runs_in_own_session_without_terminal);
	tcase_add_test(procs, live_guest_cannot_signal_caller_through_its_terminal);
	tcase_add_test(procs, live_guest_cannot_signal_caller);
#if defined(__x86_64__)
	tcase_add_test(priv, live_int80_ptrace_is_refused);
	tcase_add_test(priv, live_x32_ptrace_is_refused);
#endif
	tcase_add_test(priv, live_guest_cannot_create_namespaces);
	tcase_add_test(priv, live_guest_cannot_setuid_root);
	tcase_add_test(priv, live_seccomp_kill_rule_ends_ptrace_with_sigsys);
	tcase_add_test(files, live_home_is_absent_and_landlock_refuses_what_the_tree_shows);
	tcase_add_test(files, live_writes_land_only_in_own_tmp_and_grants);
	tcase_add_test(files, live_guest_tmp_is_its_own_and_ends_with_it);
	tcase_add_test(files, live_deep_tree_in_tmp_is_gone_and_next_spawns_succeed);
	tcase_add_test(files, live_next_guest_of_a_uid_inherits_no_xattr_or_timestamp);
	tcase_add_test(files,
		       live_file_left_in_a_write_grant_is_not_readable_by_another_callers_guest);
	tcase_add_test(files, live_guest_leaves_no_setid_file_in_a_write_grant);
	tcase_add_test(files, live_program_is_not_opened_through_a_proc_magic_link);
	tcase_add_test(net, live_network_none_cannot_reach_host_loopback);
	tcase_add_test(net, live_network_none_only_rule_refuses_host_by_name);
	tcase_add_test(net, live_network_none_sends_no_datagram_to_host_loopback);
	tcase_add_test(res, live_fork_bomb_stops_at_nproc_limit_leaving_nothing);
	tcase_add_test(res, live_memory_bomb_stops_at_address_space_limit);
	tcase_add_test(res, live_sysv_shared_memory_stays_within_the_shm_limit);
	tcase_add_test(res, live_sysv_semaphores_and_message_queues_stay_bounded);
	tcase_add_test(res, live_cpu_loop_is_stopped_by_cpu_limit);
	tcase_add_test(res, live_guest_does_not_inherit_the_callers_scheduling_privileges);
	tcase_add_test(res, live_timeout_kills_guest_and_its_descendants);
	tcase_add_test(res, live_limit_or_timeout_above_ceiling_is_refused_by_name);
	tcase_add_test(res, live_zero_limit_is_refused_and_a_small_tmp_is_bounded);
	for (size_t i = 0; i < sizeof(all) / sizeof(*all); i++) {
		tcase_set_timeout(all[i], 60);
		suite_add_tcase(s, all[i]);
	}
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	harness_setup();
	make_targets();
#if defined(__x86_64__)
	int80_missing = feature_int80(ISO_BUILDDIR "/tests/probe");
#endif
	sr = srunner_create(confine_suite());
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	remove_targets();
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
