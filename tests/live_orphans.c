/*
 * live_orphans.c - nothing outlives its supervision, through the real
 * setuid helper: no orphan when a guest, the client or the helper goes
 * away; a forked child freeing the connection leaves the parent's guests;
 * the caller can neither stop nor freeze its helper to keep a guest past
 * its timeout; a pool uid's processes are killed before its next guest.
 *
 * What the tests share, and why most fork an unprivileged client:
 * supervise.h.
 */
#include "config.h"

#include <check.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/magic.h>

#include "feature.h"
#include "harness.h"
#include "util.h"
#include "supervise.h"

static int no_process_of(void *arg)
{
	const struct uid_set *s = arg;

	return processes_of(s->uids, s->n) == 0;
}

/* Free when nobody holds its lock: we can take it (and drop it again). */
static int lease_free(uid_t uid)
{
	char path[128];
	int fd, free_now;

	snprintf(path, sizeof(path), "%s/%u", T_LEASES, (unsigned)uid);
	fd = open(path, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT;
	free_now = flock(fd, LOCK_EX | LOCK_NB) == 0;
	close(fd); /* releases the lock if we took it */
	return free_now;
}

/* Collect orphans handed to this process as subreaper (the helper and its
 * reapers, once the client or the helper is killed). */
static void reap_adopted(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		;
}

/* Client: three guests asleep for a minute; report their uids, then wait
 * to be killed. */
static int client_three_sleepers(int out, int in)
{
	const char *argv[] = { T_PROBE, "sleep", "60", NULL };
	iso_guest *g[3];
	iso_conn *conn;
	int rc;

	(void)in;
	if ((rc = iso_open(&conn)) < 0)
		return client_error(out, "iso_open", rc);
	for (int i = 0; i < 3; i++)
		if ((rc = start(conn, argv, 0, -1, &g[i])) < 0)
			return client_error(out, "iso_spawn", rc);
	dprintf(out, "uids %u %u %u\n", (unsigned)iso_guest_uid(g[0]),
		(unsigned)iso_guest_uid(g[1]), (unsigned)iso_guest_uid(g[2]));
	for (;;)
		pause();
}

static void read_three_uids(struct client *c, uid_t uids[3])
{
	char line[256];
	unsigned u[3];

	client_read(c, line, sizeof(line), 30000);
	ck_assert_msg(sscanf(line, "uids %u %u %u", &u[0], &u[1], &u[2]) == 3, "client said: %s",
		      line);
	for (int i = 0; i < 3; i++) {
		ck_assert_uint_ge(u[i], S_POOL_FIRST);
		ck_assert_uint_le(u[i], S_POOL_LAST);
		uids[i] = u[i];
	}
}

/* ------------------------------------------------------------------ */
/* No orphans                                                           */

START_TEST(live_grandchild_of_an_exited_guest_does_not_survive)
{
	const char *argv[] = { T_PROBE, "grandchild", "60", NULL };
	struct uid_set s = { .n = 1 };
	struct run r;
	iso_conn *conn;
	int grandchild = 0;

	become(S_CALLER);
	conn = open_conn();
	run_guest(conn, argv, NULL, NULL, NULL, &r);
	ck_assert_msg(r.spawn_rc == 0, "spawn: %s", r.msg);
	ck_assert_int_eq(r.exit_code, 0);
	/* The guest did leave a grandchild behind when it exited. */
	ck_assert_msg(sscanf(r.out, "%d", &grandchild) == 1 && grandchild > 0, "probe said: %s",
		      r.out);
	s.uids = &r.uid;
	ck_assert_msg(within_ms(no_process_of, &s, GONE_WITHIN_MS),
		      "%d process(es) of guest uid %u still running after %d ms",
		      processes_of(&r.uid, 1), (unsigned)r.uid, GONE_WITHIN_MS);
	iso_close(conn);
}
END_TEST

static int no_process_of_reaping(void *arg)
{
	reap_adopted();
	return no_process_of(arg);
}

struct leftovers {
	const uid_t *uids;
	size_t n;
	pid_t helper;
	char what[256];
};

/* Nothing of the guests is left: no process (and so no mount namespace,
 * whose /tmp went with it) or lease, and no helper either. */
static int nothing_left(void *arg)
{
	struct leftovers *l = arg;
	int n;

	reap_adopted();
	if ((n = processes_of(l->uids, l->n)) > 0) {
		snprintf(l->what, sizeof(l->what), "%d guest process(es) running", n);
		return 0;
	}
	for (size_t i = 0; i < l->n; i++) {
		if (!lease_free(l->uids[i])) {
			snprintf(l->what, sizeof(l->what), "lease of uid %u still held",
				 (unsigned)l->uids[i]);
			return 0;
		}
	}
	if (l->helper > 0 && !(kill(l->helper, 0) < 0 && errno == ESRCH)) {
		snprintf(l->what, sizeof(l->what), "helper %d still there", (int)l->helper);
		return 0;
	}
	return 1;
}

START_TEST(live_sigkill_of_client_leaves_no_guest_lease_or_helper)
{
	struct client c;
	struct leftovers l = { .n = 3 };
	uid_t uids[3];
	uint64_t t0;

	/* The orphaned helper comes to us, so we see the moment it is gone. */
	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	client_start(&c, client_three_sleepers);
	read_three_uids(&c, uids);
	l.uids = uids;
	l.helper = helper_of(c.pid);
	/* Everything that must vanish is there to begin with. */
	for (int i = 0; i < 3; i++) {
		wait_asleep(uids[i]);
		ck_assert_msg(!lease_free(uids[i]), "uid %u runs without a lease",
			      (unsigned)uids[i]);
	}
	t0 = now_us();
	client_end(&c, SIGKILL);
	ck_assert_msg(within_ms(nothing_left, &l, GONE_WITHIN_MS),
		      "%.0f ms after the client was killed: %s", (double)(now_us() - t0) / 1000,
		      l.what);
}
END_TEST

START_TEST(live_guests_die_with_a_killed_helper)
{
	struct client c;
	struct uid_set s = { .n = 3 };
	uid_t uids[3];
	pid_t helper;

	/* The dying helper's reapers come to us and are collected. */
	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	client_start(&c, client_three_sleepers);
	read_three_uids(&c, uids);
	s.uids = uids;
	helper = helper_of(c.pid);
	for (int i = 0; i < 3; i++)
		wait_asleep(uids[i]);
	ck_assert_int_eq(kill(helper, SIGKILL), 0);
	ck_assert_msg(within_ms(no_process_of_reaping, &s, GONE_WITHIN_MS),
		      "%d guest process(es) outlived the helper by %d ms", processes_of(uids, 3),
		      GONE_WITHIN_MS);
	client_end(&c, SIGKILL);
	reap_adopted();
}
END_TEST

/* A child the caller forks shares the connection's socket: a worker that
 * frees what it inherited (iso_guest_free(), iso_close(), as a forking
 * service's cleanup does) must leave the parent's guests running and its
 * connection serving. */
START_TEST(live_forked_child_freeing_the_connection_leaves_the_parents_guests)
{
	const char *argv[] = { T_PROBE, "sleep", "30", NULL };
	const char *again[] = { T_PROBE, "exit", "5", NULL };
	iso_conn *conn;
	iso_guest *g, *h;
	pid_t child;
	int wstatus;

	become(S_CALLER);
	conn = open_conn();
	g = must_start(conn, argv, 0);
	h = must_start(conn, argv, 0);
	child = fork();
	ck_assert_int_ge(child, 0);
	if (child == 0) {
		iso_guest_free(g);
		iso_close(conn);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(child, &wstatus, 0), child);
	ck_assert(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
	ck_assert_msg(iso_wait(g, 500) == 1, "the freed guest ended: %s (%s)",
		      iso_guest_outcome(g) == ISO_OUTCOME_SIGNALED ? "killed" : "?",
		      iso_last_error());
	ck_assert_msg(iso_wait(h, 0) == 1, "the other guest ended (%s)", iso_last_error());
	iso_guest_free(h);
	h = must_start(conn, again, 0);
	must_end(h, 5000);
	ck_assert_int_eq(iso_guest_exit_code(h), 5);
	iso_guest_free(h);
	ck_assert_int_eq(iso_kill(g, SIGKILL), 0);
	must_end(g, 5000);
	ck_assert_int_eq(iso_guest_outcome(g), ISO_OUTCOME_SIGNALED);
	iso_guest_free(g);
	iso_close(conn);
}
END_TEST

/* iso_close() must not wait for its helper by pid: a caller whose SIGCHLD
 * handler reaps every child (waitpid(-1)) may have reaped the helper (here
 * killed by root, as after a crash), and the pid may since be another
 * child's, whose status iso_close() would take. In
 * a PID namespace of its own, whose pid 1 (root) sets ns_last_pid, the
 * caller's next child gets the helper's pid for certain: pids there are
 * 1 for root, 2 for the caller, 3 for the helper it starts. */
#define REUSED_PID 3
static volatile sig_atomic_t reaped_pid, reaped_code;

static void reap_every_child(int sig)
{
	int saved = errno, wstatus;
	pid_t pid;

	(void)sig;
	while ((pid = waitpid(-1, &wstatus, WNOHANG)) > 0) {
		reaped_pid = pid;
		reaped_code = WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1;
	}
	errno = saved;
}

static int reaped(void *pid)
{
	return reaped_pid == *(pid_t *)pid;
}

/* Ask pid 1 for `what` (k: kill the helper; n: next pid is the helper's);
 * 0 once done. */
static int ask_root(int req_fd, int ack_fd, char what)
{
	char ok = 0;

	return write(req_fd, &what, 1) == 1 && read(ack_fd, &ok, 1) == 1 && ok == 'y' ? 0 : -1;
}

/* The caller, pid 2: exits 0 when iso_close() left its other child alone. */
static __attribute__((noreturn)) void caller_that_reaps_every_child(int req_fd, int ack_fd)
{
	struct sigaction sa = { .sa_handler = reap_every_child, .sa_flags = SA_RESTART };
	pid_t helper = REUSED_PID, other;
	iso_conn *conn = NULL;
	uint64_t t0, closed_ms;

	become(S_CALLER);
	sigaction(SIGCHLD, &sa, NULL);
	if (iso_open(&conn) < 0 || ask_root(req_fd, ack_fd, 'k') < 0 ||
	    !within_ms(reaped, &helper, 5000)) {
		fprintf(stderr, "helper not started or not reaped as pid %d: %s\n", REUSED_PID,
			iso_last_error());
		child_exit(2);
	}
	if (ask_root(req_fd, ack_fd, 'n') < 0)
		child_exit(2);
	other = fork();
	if (other == 0) {
		sleep_ms(3000);
		_exit(7);
	}
	if (other != REUSED_PID) {
		fprintf(stderr, "the next child is pid %d, not %d\n", (int)other, REUSED_PID);
		child_exit(2);
	}
	t0 = now_us();
	iso_close(conn);
	closed_ms = (now_us() - t0) / 1000;
	reaped_pid = 0;
	if (closed_ms >= 2000 || !within_ms(reaped, &other, 10000) || reaped_code != 7) {
		fprintf(stderr, "iso_close() took %llu ms; the caller's own child %s\n",
			(unsigned long long)closed_ms,
			reaped_pid == other ? "ended oddly" : "was reaped by iso_close()");
		child_exit(1);
	}
	child_exit(0);
}

/* The pid the namespace hands out next. 0, or -1. */
static int set_next_pid(pid_t pid)
{
	int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
	int rc = fd >= 0 && dprintf(fd, "%d", (int)pid - 1) > 0 ? 0 : -1;

	if (fd >= 0)
		close(fd);
	return rc;
}

/* pid 1 of the namespace, root: serves the caller's requests. */
static __attribute__((noreturn)) void root_of_the_namespace(int req_fd, int ack_fd, pid_t caller)
{
	char what, ok;
	int wstatus;

	while (read(req_fd, &what, 1) == 1) {
		if (what == 'k')
			ok = kill(REUSED_PID, SIGKILL) == 0 ? 'y' : 'n';
		else
			ok = set_next_pid(REUSED_PID) == 0 ? 'y' : 'n';
		if (write(ack_fd, &ok, 1) != 1)
			break;
	}
	_exit(waitpid(caller, &wstatus, 0) == caller && WIFEXITED(wstatus) ? WEXITSTATUS(wstatus)
									   : 3);
}

/* In a child of the test (whose own later forks, LeakSanitizer's at its
 * exit among them, must not land in a namespace whose pid 1 is gone):
 * the namespace, its pid 1 and the caller; exits with the caller's code,
 * 77 when no namespace can be made. */
static __attribute__((noreturn)) void in_a_pid_namespace_of_its_own(void)
{
	int req[2], ack[2], wstatus;
	pid_t root, caller;

	if (unshare(CLONE_NEWPID) < 0) {
		fprintf(stderr, "unshare(CLONE_NEWPID): %s\n", strerror(errno));
		_exit(77);
	}
	if (pipe2(req, O_CLOEXEC) < 0 || pipe2(ack, O_CLOEXEC) < 0 || (root = fork()) < 0)
		_exit(3);
	if (root == 0) {
		caller = fork();
		if (caller == 0) {
			close(req[0]);
			close(ack[1]);
			caller_that_reaps_every_child(req[1], ack[0]);
		}
		close(req[1]);
		close(ack[0]);
		root_of_the_namespace(req[0], ack[1], caller);
	}
	iso_close_fds(req, 2);
	iso_close_fds(ack, 2);
	_exit(waitpid(root, &wstatus, 0) == root && WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : 3);
}

START_TEST(live_close_waits_for_its_helper_not_a_child_that_took_its_pid)
{
	pid_t outer = fork();
	int wstatus;

	ck_assert_int_ge(outer, 0);
	if (outer == 0)
		in_a_pid_namespace_of_its_own();
	ck_assert_int_eq(waitpid(outer, &wstatus, 0), outer);
	if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 77) {
		check_skip("live_close_waits_for_its_helper_not_a_child_that_took_its_pid",
			   "no PID namespace can be made here");
		return;
	}
	ck_assert_msg(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0,
		      "the caller exited with %d (1: iso_close() waited for its other child)",
		      WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1);
}
END_TEST

/* ------------------------------------------------------------------ */
/* A hostile caller or guest at run time                               */

/* Client: a guest asleep with a 1 s timeout; report its uid, and on the
 * go-ahead its outcome. */
static int client_timed_sleeper(int out, int in)
{
	const char *argv[] = { T_PROBE, "sleep", "60", NULL };
	iso_spec *spec = NULL;
	iso_guest *g = NULL;
	iso_conn *conn;
	int rc;

	if ((rc = iso_open(&conn)) < 0)
		return client_error(out, "iso_open", rc);
	if ((rc = iso_spec_new(&spec)) < 0 || (rc = iso_spec_set_program(spec, argv[0])) < 0 ||
	    (rc = iso_spec_set_argv(spec, argv)) < 0 ||
	    (rc = iso_spec_set_timeout(spec, 1000)) < 0 || (rc = iso_spawn(conn, spec, &g)) < 0)
		return client_error(out, "iso_spawn", rc);
	dprintf(out, "uid %u\n", (unsigned)iso_guest_uid(g));
	client_wait_go(in);
	if ((rc = iso_wait(g, 10000)) != 0)
		return client_error(out, "iso_wait", rc);
	dprintf(out, "outcome %d exit %d\n", (int)iso_guest_outcome(g), iso_guest_exit_code(g));
	return 0;
}

/* The guest's timeout is its reaper's own, so a stopped helper
 * does not extend it. (The caller cannot stop its helper: root does it
 * here.) */
START_TEST(live_stopped_helper_does_not_extend_a_guest_past_its_timeout)
{
	struct uid_set s = { .n = 1 };
	struct client c;
	char line[256];
	unsigned u;
	int outcome, exit_code, gone;
	uid_t uid;
	pid_t helper;

	client_start(&c, client_timed_sleeper);
	client_read(&c, line, sizeof(line), 30000);
	ck_assert_msg(sscanf(line, "uid %u", &u) == 1, "client said: %s", line);
	uid = u;
	s.uids = &uid;
	wait_asleep(uid);
	helper = helper_of(c.pid);
	ck_assert_int_eq(kill(helper, SIGSTOP), 0);
	gone = within_ms(no_process_of, &s, GONE_WITHIN_MS);
	ck_assert_int_eq(kill(helper, SIGCONT), 0);
	ck_assert_msg(gone,
		      "the guest outlived its 1 s timeout by %d ms while its helper "
		      "was stopped",
		      GONE_WITHIN_MS);
	client_go(&c);
	client_read(&c, line, sizeof(line), 30000);
	ck_assert_msg(sscanf(line, "outcome %d exit %d", &outcome, &exit_code) == 2,
		      "client said: %s", line);
	ck_assert_int_eq(outcome, ISO_OUTCOME_TIMED_OUT);
	ck_assert_int_eq(exit_code, 124);
	client_end(&c, 0);
}
END_TEST

/* Client: a guest asleep; report its uid; read its helper's pid from the
 * test, try to stop it, say how that went, and exit, leaving the guest. */
static int client_stops_its_helper(int out, int in)
{
	const char *argv[] = { T_PROBE, "sleep", "60", NULL };
	iso_guest *g;
	iso_conn *conn;
	char buf[32] = "";
	int rc;

	if ((rc = iso_open(&conn)) < 0)
		return client_error(out, "iso_open", rc);
	if ((rc = start(conn, argv, 0, -1, &g)) < 0)
		return client_error(out, "iso_spawn", rc);
	dprintf(out, "uid %u\n", (unsigned)iso_guest_uid(g));
	if (read(in, buf, sizeof(buf) - 1) <= 0)
		return client_error(out, "reading the helper's pid", -EIO);
	rc = kill((pid_t)atoi(buf), SIGSTOP);
	dprintf(out, "kill %d %s\n", rc, rc < 0 ? strerror(errno) : "stopped it");
	client_wait_go(in);
	return 0;
}

static int helper_stopped(pid_t helper)
{
	char path[64], buf[512];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)helper);
	return read_text(path, buf, sizeof(buf)) > 0 && strstr(buf, ") T ") != NULL;
}

/* Once it knows its caller the helper is root in all
 * its uids, so the caller cannot stop it and walk away from guests that
 * then run forever; a terminal's job-control signals, which reach it
 * whatever its uids, never stop it. The connection ends when the client
 * does, and every guest with it. */
START_TEST(live_caller_cannot_stop_its_helper_and_leave_its_guests_behind)
{
	struct leftovers l = { .n = 1 };
	const int tty_signals[] = { SIGTSTP, SIGTTIN, SIGTTOU };
	struct client c;
	char line[256];
	unsigned u;
	uid_t uid;
	uint64_t t0;

	/* The orphaned helper comes to us, and its process group is not
	 * orphaned (which would have the kernel send it SIGHUP). */
	ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0), 0);
	client_start(&c, client_stops_its_helper);
	client_read(&c, line, sizeof(line), 30000);
	ck_assert_msg(sscanf(line, "uid %u", &u) == 1, "client said: %s", line);
	uid = u;
	l.uids = &uid;
	l.helper = helper_of(c.pid);
	wait_asleep(uid);
	ck_assert_int_gt(dprintf(c.to, "%d", (int)l.helper), 0);
	client_read(&c, line, sizeof(line), 30000);
	if (helper_stopped(l.helper))
		kill(l.helper, SIGCONT);
	ck_assert_msg(strcmp(line, "kill -1 Operation not permitted") == 0,
		      "the caller's SIGSTOP to its helper: %s", line);
	for (size_t i = 0; i < sizeof(tty_signals) / sizeof(tty_signals[0]); i++) {
		ck_assert_int_eq(kill(l.helper, tty_signals[i]), 0);
		sleep_ms(100);
		ck_assert_msg(!helper_stopped(l.helper), "signal %d stopped the helper",
			      tty_signals[i]);
	}
	t0 = now_us();
	client_go(&c);
	client_end(&c, 0);
	ck_assert_msg(within_ms(nothing_left, &l, GONE_WITHIN_MS),
		      "%.0f ms after the client exited: %s", (double)(now_us() - t0) / 1000,
		      l.what);
}
END_TEST

/* A cgroup v2 directory of the test's, delegated to S_CALLER as systemd
 * delegates one (user@.service, systemd-run --user): the directory and
 * its cgroup.procs, cgroup.threads and cgroup.subtree_control are the
 * caller's. */
static char delegated[256];

static int write_text(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC), rc = -1;

	if (fd >= 0) {
		rc = write(fd, text, strlen(text)) == (ssize_t)strlen(text) ? 0 : -1;
		close(fd);
	}
	return rc;
}

/* Where systemd mounts the cgroup v2 hierarchy, or 0 if it does not. */
static int cgroup2_root(char *root, size_t n)
{
	static const char *const where[] = { "/sys/fs/cgroup", "/sys/fs/cgroup/unified" };
	char path[PATH_MAX];

	for (size_t i = 0; i < COUNT(where); i++) {
		snprintf(path, sizeof(path), "%s/cgroup.subtree_control", where[i]);
		if (access(path, F_OK) != 0)
			continue;
		snprintf(root, n, "%s", where[i]);
		return 1;
	}
	return 0;
}

/* Client: once the test has put it in the delegated cgroup, connect; say
 * how that went, and, if a helper served it, move that helper (root's)
 * into a cgroup of its own below the delegated one and freeze it (in
 * cgroup v2: the v1 test's cgroup is a directory of root's). */
static int client_tries_to_freeze_its_helper(int out, int in)
{
	char frozen[300], path[320], pid[16];
	iso_conn *conn;
	int rc;

	client_wait_go(in);
	if ((rc = iso_open(&conn)) < 0) {
		dprintf(out, "refused %s: %s\n", iso_strerror(rc), iso_last_error());
		return 0;
	}
	snprintf(frozen, sizeof(frozen), "%s/frozen", delegated);
	snprintf(path, sizeof(path), "%s/cgroup.procs", frozen);
	snprintf(pid, sizeof(pid), "%d", (int)helper_of(getpid()));
	rc = mkdir(frozen, 0755) == 0 && write_text(path, pid) == 0;
	snprintf(path, sizeof(path), "%s/cgroup.freeze", frozen);
	dprintf(out, "served; %s\n",
		rc && write_text(path, "1") == 0 ? "froze it" : "could not freeze it");
	iso_close(conn);
	return 0;
}

/* Guarantees 7, 18 and 20: the caller can stop neither its helper nor the
 * guests' reapers, whose timers are the guests' timeouts. A caller in a
 * cgroup v2 subtree delegated to it (any service of its systemd --user)
 * runs the setuid helper in that subtree, and cgroup v2 lets the owner of
 * a subtree move any process within it, root's too, and freeze it: a
 * frozen helper and reaper would let a guest outlive its timeout and its
 * client. The helper refuses such a caller, naming the file. */
START_TEST(live_helper_refuses_a_caller_that_could_freeze_it_through_its_cgroup)
{
	static const char *const owned[] = { "", "/cgroup.procs", "/cgroup.threads",
					     "/cgroup.subtree_control" };
	char root[128], path[PATH_MAX], line[512];
	struct client c;

	if (!cgroup2_root(root, sizeof(root))) {
		check_skip("live_helper_refuses_a_caller_that_could_freeze_it_through_its_cgroup",
			   "no cgroup v2 hierarchy at /sys/fs/cgroup or /sys/fs/cgroup/unified");
		return;
	}
	snprintf(delegated, sizeof(delegated), "%s/isospawn-check-%d", root, (int)getpid());
	/* A container may mount the hierarchy read-only: nothing to delegate. */
	if (mkdir(delegated, 0755) < 0 && (errno == EROFS || errno == EACCES || errno == EPERM)) {
		check_skip("live_helper_refuses_a_caller_that_could_freeze_it_through_its_cgroup",
			   "%s: %s (no cgroup can be delegated here)", root, strerror(errno));
		return;
	}
	ck_assert_msg(access(delegated, F_OK) == 0, "mkdir %s: %s", delegated, strerror(errno));
	for (size_t i = 0; i < COUNT(owned); i++) {
		snprintf(path, sizeof(path), "%s%s", delegated, owned[i]);
		ck_assert_int_eq(chown(path, S_CALLER, S_CALLER), 0);
	}
	client_start(&c, client_tries_to_freeze_its_helper);
	snprintf(path, sizeof(path), "%s/cgroup.procs", delegated);
	snprintf(line, sizeof(line), "%d", (int)c.pid);
	ck_assert_int_eq(write_text(path, line), 0);
	client_go(&c);
	client_read(&c, line, sizeof(line), 30000);
	client_end(&c, 0);
	snprintf(path, sizeof(path), "%s/frozen/cgroup.freeze", delegated);
	(void)write_text(path, "0");
	sleep_ms(200);
	snprintf(path, sizeof(path), "%s/frozen", delegated);
	(void)rmdir(path);
	(void)rmdir(delegated);
	snprintf(path, sizeof(path), "%s/cgroup.procs: owned by uid %u", delegated,
		 (unsigned)S_CALLER);
	ck_assert_msg(strncmp(line, "refused ", 8) == 0 && strstr(line, path) &&
			  strstr(line, "isospawn.socket"),
		      "client said: %s", line);
}
END_TEST

/* The same through cgroup v1's freezer, which freezes a cgroup for whoever
 * may write its freezer.state: a cgroup of the test's whose freezer.state
 * is the caller's (as a tool that delegates v1 cgroups chowns it), with
 * the caller in it, is refused, naming the file. The cgroup is the
 * test's own, removed before the checks. */
START_TEST(live_helper_refuses_a_caller_that_could_freeze_it_through_a_v1_freezer)
{
	static const char freezer[] = "/sys/fs/cgroup/freezer";
	char path[PATH_MAX], line[512];
	struct statfs fs;
	struct client c;
	int made;

	if (statfs(freezer, &fs) < 0 || fs.f_type != CGROUP_SUPER_MAGIC) {
		check_skip("live_helper_refuses_a_caller_that_could_freeze_it_through_a_v1_freezer",
			   "no cgroup v1 freezer hierarchy at %s", freezer);
		return;
	}
	snprintf(delegated, sizeof(delegated), "%s/isospawn-check-%d", freezer, (int)getpid());
	if (mkdir(delegated, 0755) < 0 && (errno == EROFS || errno == EACCES || errno == EPERM)) {
		check_skip("live_helper_refuses_a_caller_that_could_freeze_it_through_a_v1_freezer",
			   "%s: %s (no cgroup can be made here)", freezer, strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/freezer.state", delegated);
	made = chown(path, S_CALLER, S_CALLER) == 0;
	client_start(&c, client_tries_to_freeze_its_helper);
	snprintf(path, sizeof(path), "%s/cgroup.procs", delegated);
	snprintf(line, sizeof(line), "%d", (int)c.pid);
	made = made && write_text(path, line) == 0;
	client_go(&c);
	client_read(&c, line, sizeof(line), 30000);
	client_end(&c, 0);
	(void)rmdir(delegated);
	ck_assert_msg(made, "%s: %s", delegated, strerror(errno));
	snprintf(path, sizeof(path), "%s/freezer.state: owned by uid %u", delegated,
		 (unsigned)S_CALLER);
	ck_assert_msg(strncmp(line, "refused ", 8) == 0 && strstr(line, path) &&
			  strstr(line, "isospawn.socket"),
		      "client said: %s", line);
	ck_assert_int_eq(access(delegated, F_OK), -1);
}
END_TEST

/* The rule of tests/policy.conf.in with a pool of one uid. */
#define W_CALLER 4000071u
#define W_OUTSIDER 4000072u /* in no rule */

/* Client: one guest run to its end; its uid reported. */
static int client_reports_its_guests_uid(int out, int in)
{
	const char *argv[] = { "/bin/true", NULL };
	iso_conn *conn;
	iso_guest *g;
	int rc;

	(void)in;
	if ((rc = iso_open(&conn)) < 0)
		return client_error(out, "iso_open", rc);
	if ((rc = start(conn, argv, 0, -1, &g)) < 0 || (rc = iso_wait(g, 10000)) != 0)
		return client_error(out, "the guest", rc);
	dprintf(out, "uid %u\n", (unsigned)iso_guest_uid(g));
	iso_close(conn);
	return 0;
}

static uid_t run_one_guest_as(uid_t caller)
{
	struct client c;
	char line[256];
	unsigned u = 0;

	client_start_as(&c, client_reports_its_guests_uid, caller, 0);
	client_read(&c, line, sizeof(line), 30000);
	ck_assert_msg(sscanf(line, "uid %u", &u) == 1, "client said: %s", line);
	ck_assert_int_eq(client_end(&c, 0), 0);
	return u;
}

/* A guest may leave a set-user-ID file in a write grant
 * where the rule lets it (seccomp none); whoever runs it holds the pool
 * uid outside every namespace. The next lease of that uid sweeps it: such
 * a process, started before, is dead before the next guest runs. (Here
 * root plants the file, as such a guest would have.) */
START_TEST(live_set_user_id_process_of_a_pool_uid_is_killed_before_its_next_guest)
{
	const char *planted = T_SHARED "/set-user-id-probe";
	uid_t uid = run_one_guest_as(W_CALLER);
	char path[64], status[2048];
	const char *ids;
	int wstatus, running = 0;
	pid_t stray;

	test_install_file(T_PROBE, planted, 0755);
	ck_assert_int_eq(chown(planted, uid, uid), 0);
	ck_assert_int_eq(chmod(planted, 06755), 0);
	stray = fork();
	ck_assert_int_ge(stray, 0);
	if (stray == 0) {
		if (setgroups(0, NULL) == 0 && setresgid(W_OUTSIDER, W_OUTSIDER, W_OUTSIDER) == 0 &&
		    setresuid(W_OUTSIDER, W_OUTSIDER, W_OUTSIDER) == 0)
			execl(planted, "probe", "sleep", "60", (char *)NULL);
		_exit(99);
	}
	/* It runs with the pool uid as its effective and saved uid. */
	snprintf(path, sizeof(path), "/proc/%d/status", (int)stray);
	for (int i = 0; i < 500 && !running; i++) {
		if (read_text(path, status, sizeof(status)) > 0 &&
		    (ids = status_field(status, "\nUid:\t")) != NULL) {
			unsigned r, e;
			running = sscanf(ids, "%u %u", &r, &e) == 2 && e == uid;
		}
		if (!running)
			sleep_ms(10);
	}
	ck_assert_msg(running, "the set-user-ID probe never ran as uid %u", (unsigned)uid);
	ck_assert_uint_eq(run_one_guest_as(W_CALLER), uid);
	ck_assert_msg(waitpid(stray, &wstatus, WNOHANG) == stray && WIFSIGNALED(wstatus) &&
			  WTERMSIG(wstatus) == SIGKILL,
		      "the process of uid %u started from a set-user-ID file outlived its "
		      "next lease",
		      (unsigned)uid);
	ck_assert_int_eq(unlink(planted), 0);
}
END_TEST

static Suite *orphans_suite(void)
{
	Suite *s = suite_create("live_orphans");
	TCase *orphans = tcase_create("no_orphans");

	tcase_add_test(orphans, live_grandchild_of_an_exited_guest_does_not_survive);
	tcase_add_test(orphans, live_sigkill_of_client_leaves_no_guest_lease_or_helper);
	tcase_add_test(orphans, live_guests_die_with_a_killed_helper);
	tcase_add_test(orphans, live_forked_child_freeing_the_connection_leaves_the_parents_guests);
	tcase_add_test(orphans, live_close_waits_for_its_helper_not_a_child_that_took_its_pid);
	tcase_add_test(orphans, live_stopped_helper_does_not_extend_a_guest_past_its_timeout);
	tcase_add_test(orphans, live_caller_cannot_stop_its_helper_and_leave_its_guests_behind);
	tcase_add_test(orphans,
		       live_set_user_id_process_of_a_pool_uid_is_killed_before_its_next_guest);
	tcase_add_test(orphans,
		       live_helper_refuses_a_caller_that_could_freeze_it_through_its_cgroup);
	tcase_add_test(orphans,
		       live_helper_refuses_a_caller_that_could_freeze_it_through_a_v1_freezer);
	tcase_set_timeout(orphans, 60);
	suite_add_tcase(s, orphans);
	return s;
}

int main(void)
{
	return supervise_main(orphans_suite);
}
