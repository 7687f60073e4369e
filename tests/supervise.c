/*
 * supervise.c - what the live supervision tests share (supervise.h):
 * starting guests without Check, /proc and lease queries, and an
 * unprivileged client that a root test process forks and talks to.
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

uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Poll cond every 10 ms for up to timeout_ms; 1 once it holds. */
int within_ms(int (*cond)(void *), void *arg, int timeout_ms)
{
	uint64_t deadline = now_us() + (uint64_t)timeout_ms * 1000;

	for (;;) {
		if (cond(arg))
			return 1;
		if (now_us() >= deadline)
			return 0;
		sleep_ms(10);
	}
}

/* ------------------------------------------------------------------ */
/* Starting guests without Check, so that a client process can too.     */

/* argv[0] is the program; stdout goes to out_fd (-1: /dev/null). */
int start(iso_conn *conn, const char *const *argv, int channel, int out_fd, iso_guest **g)
{
	iso_spec *spec = NULL;
	int rc = iso_spec_new(&spec);

	if (rc == 0)
		rc = iso_spec_set_program(spec, argv[0]);
	if (rc == 0)
		rc = iso_spec_set_argv(spec, argv);
	if (rc == 0)
		rc = iso_spec_set_channel(spec, channel);
	if (rc == 0)
		rc = iso_spec_set_stdio(spec, -1, out_fd, -1);
	if (rc == 0)
		rc = iso_spawn(conn, spec, g);
	iso_spec_free(spec);
	return rc;
}

iso_guest *must_start(iso_conn *conn, const char *const *argv, int channel)
{
	iso_guest *g = NULL;
	int rc = start(conn, argv, channel, -1, &g);

	ck_assert_msg(rc == 0, "spawn %s: %s (%s)", argv[0], iso_strerror(rc), iso_last_error());
	return g;
}

void must_end(iso_guest *g, int timeout_ms)
{
	int rc = iso_wait(g, timeout_ms);

	ck_assert_msg(rc == 0, "iso_wait: %d (%s)", rc, iso_last_error());
}

/* argv with the guest's nofile and wall-clock timeout (0: the rule's). */
iso_guest *must_start_limited(iso_conn *conn, const char *const *argv, uint64_t nofile,
			      uint64_t timeout_ms)
{
	iso_spec *spec = NULL;
	iso_guest *g = NULL;
	int rc = iso_spec_new(&spec);

	if (rc == 0)
		rc = iso_spec_set_program(spec, argv[0]);
	if (rc == 0)
		rc = iso_spec_set_argv(spec, argv);
	if (rc == 0 && nofile)
		rc = iso_spec_set_limit(spec, ISO_LIMIT_NOFILE, nofile);
	if (rc == 0 && timeout_ms)
		rc = iso_spec_set_timeout(spec, timeout_ms);
	if (rc == 0)
		rc = iso_spawn(conn, spec, &g);
	iso_spec_free(spec);
	ck_assert_msg(rc == 0, "spawn %s: %s (%s)", argv[0], iso_strerror(rc), iso_last_error());
	return g;
}

/* ------------------------------------------------------------------ */
/* /proc                                                                */

struct child_query {
	pid_t parent;
	const char *name;
	pid_t found;
};

static int match_child(const struct proc_info *p, void *arg)
{
	struct child_query *q = arg;

	if (p->ppid != q->parent || strcmp(p->name, q->name) != 0)
		return 0;
	q->found = p->pid;
	return 1;
}

/* The client's helper: the library starts it as the client's child. */
pid_t helper_of(pid_t client)
{
	struct child_query q = { .parent = client, .name = "isospawn-helper" };

	each_process(match_child, &q);
	ck_assert_msg(q.found > 0, "no isospawn-helper is a child of %d", (int)client);
	return q.found;
}

/* Is a process of uid sleeping in `probe sleep`, past its exec? */
static int asleep_in_probe(const struct proc_info *p, void *arg)
{
	static const char want[] = T_PROBE "\0sleep";
	const uid_t *uid = arg;
	char path[64], cmdline[256];
	ssize_t len;

	if (p->uid[0] != *uid || p->state != 'S')
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)p->pid);
	len = read_text(path, cmdline, sizeof(cmdline));
	return len >= (ssize_t)sizeof(want) && memcmp(cmdline, want, sizeof(want)) == 0;
}

static int guest_asleep(void *arg)
{
	return each_process(asleep_in_probe, arg);
}

/* The guest has exec'd `probe sleep` and sleeps: a signal now reaches it. */
void wait_asleep(uid_t uid)
{
	ck_assert_msg(within_ms(guest_asleep, &uid, 10000), "guest uid %u never got to sleep",
		      (unsigned)uid);
}

/* ------------------------------------------------------------------ */
/* An unprivileged client forked by a root test process                 */

int client_error(int out, const char *what, int rc)
{
	dprintf(out, "error %s: %s (%s)\n", what, iso_strerror(rc), iso_last_error());
	return 1;
}

void client_wait_go(int in)
{
	char byte;

	while (read(in, &byte, 1) < 0 && errno == EINTR)
		;
}

/* The client runs as uid (gid = uid), with the supplementary group
 * `group` unless it is 0. */
void client_start_as(struct client *c, client_body body, uid_t uid, gid_t group)
{
	int up[2], down[2];

	ck_assert_int_eq(geteuid(), 0);
	ck_assert_int_eq(pipe2(up, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(down, O_CLOEXEC), 0);
	c->pid = fork();
	ck_assert_int_ge(c->pid, 0);
	if (c->pid == 0) {
		close(up[0]);
		close(down[1]);
		if (setgroups(group ? 1 : 0, &group) < 0 || setresgid(uid, uid, uid) < 0 ||
		    setresuid(uid, uid, uid) < 0 || geteuid() != uid) {
			dprintf(up[1], "error: cannot become uid %u: %s\n", (unsigned)uid,
				strerror(errno));
			_exit(1);
		}
		setenv("ISOSPAWN_HELPER", T_HELPER, 1);
		_exit(body(up[1], down[0]));
	}
	close(up[1]);
	close(down[0]);
	c->from = up[0];
	c->to = down[1];
}

void client_start(struct client *c, client_body body)
{
	client_start_as(c, body, S_CALLER, 0);
}

/* One line from the client; the test fails on "error ..." or silence. */
void client_read(struct client *c, char *line, size_t n, int timeout_ms)
{
	uint64_t deadline = now_us() + (uint64_t)timeout_ms * 1000;
	size_t len = 0;

	for (;;) {
		struct pollfd p = { .fd = c->from, .events = POLLIN };
		uint64_t now = now_us();
		ssize_t got;
		char ch;

		ck_assert_msg(now < deadline, "client silent for %d ms", timeout_ms);
		if (poll(&p, 1, (int)((deadline - now + 999) / 1000)) <= 0)
			continue;
		got = read(c->from, &ch, 1);
		ck_assert_msg(got == 1, "client ended without a word (after \"%.*s\")", (int)len,
			      line);
		if (ch == '\n')
			break;
		if (len < n - 1)
			line[len++] = ch;
	}
	line[len] = '\0';
	ck_assert_msg(strncmp(line, "error", 5) != 0, "client: %s", line);
}

void client_go(struct client *c)
{
	ck_assert_int_eq(write(c->to, "g", 1), 1);
}

/* Returns the client's wait status. */
int client_end(struct client *c, int sig)
{
	int status = 0;

	if (sig)
		kill(c->pid, sig);
	while (waitpid(c->pid, &status, 0) < 0 && errno == EINTR)
		;
	close(c->from);
	close(c->to);
	return status;
}

int supervise_main(Suite *(*suite)(void))
{
	SRunner *sr;
	int failed;

	harness_setup();
	sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
