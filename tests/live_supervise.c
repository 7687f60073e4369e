/*
 * live_supervise.c - supervision through the real setuid helper: many
 * guests on one connection, each status matched to its request, no orphans
 * when a guest, the client or the helper goes away, the message channel,
 * signals, precise status, and a helper that does not grow over 10,000
 * spawns.
 *
 * Most tests drop to the caller at once. The tests that must look at what
 * only root can see (the leases live in a 0700 directory, the setuid helper
 * is not dumpable) keep their test process root and fork an unprivileged
 * client; only the client uses the library, so the privilege boundary under
 * test is still the real one. The client is not the test process, so it
 * never calls Check: it reports one line at a time through a pipe.
 *
 * Every test runs as S_CALLER, whose pool no other test program uses: the
 * processes and leases counted by uid here are ours.
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

/* The rule for this file in tests/policy.conf.in. */
#define S_CALLER 4000020u
#define S_POOL_FIRST T_POOL(1900101500u)
#define S_POOL_LAST T_POOL(1900101799u)

/* The test helper's state (ISO_STATE_DIR, ISO_SCRATCH_DIR in Makefile.am). */

#define CONCURRENT_GUESTS 100
#define WARMUP_SPAWNS 100
#define LEAK_SPAWNS 10000
#define RSS_GROWTH_MAX_KIB 256
/* What is gone must be gone within this (the product acts at once; a
 * loaded machine may take its time: the failure says what was measured). */
#define GONE_WITHIN_MS 10000

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* Poll cond every 10 ms for up to timeout_ms; 1 once it holds. */
static int within_ms(int (*cond)(void *), void *arg, int timeout_ms)
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
static int start(iso_conn *conn, const char *const *argv, int channel,
		 int out_fd, iso_guest **g)
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

static iso_guest *must_start(iso_conn *conn, const char *const *argv, int channel)
{
	iso_guest *g = NULL;
	int rc = start(conn, argv, channel, -1, &g);

	ck_assert_msg(rc == 0, "spawn %s: %s (%s)", argv[0], iso_strerror(rc),
		      iso_last_error());
	return g;
}

static void must_end(iso_guest *g, int timeout_ms)
{
	int rc = iso_wait(g, timeout_ms);

	ck_assert_msg(rc == 0, "iso_wait: %d (%s)", rc, iso_last_error());
}

/* ------------------------------------------------------------------ */
/* /proc                                                                */

static int no_process_of(void *arg)
{
	const struct uid_set *s = arg;

	return processes_of(s->uids, s->n) == 0;
}

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
static pid_t helper_of(pid_t client)
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
static void wait_asleep(uid_t uid)
{
	ck_assert_msg(within_ms(guest_asleep, &uid, 10000),
		      "guest uid %u never got to sleep", (unsigned)uid);
}

static long status_number(pid_t pid, const char *key)
{
	char path[64], buf[4096];
	const char *at;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	ck_assert_int_ge(read_text(path, buf, sizeof(buf)), 0);
	at = status_field(buf, key);
	ck_assert_msg(at != NULL, "%s: no %s", path, key);
	return strtol(at, NULL, 10);
}

static int fd_count(pid_t pid)
{
	char path[64];
	struct dirent *e;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dir = opendir(path);
	ck_assert_msg(dir != NULL, "%s: %s", path, strerror(errno));
	while ((e = readdir(dir)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(dir);
	return n;
}

/* ------------------------------------------------------------------ */
/* Leases (root only)                                                   */

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

/* ------------------------------------------------------------------ */
/* An unprivileged client forked by a root test process                 */

struct client {
	pid_t pid;
	int from; /* lines the client writes */
	int to;	  /* the test's go-aheads */
};

/* Runs as S_CALLER; returns the client's exit status. */
typedef int (*client_body)(int out, int in);

static int client_error(int out, const char *what, int rc)
{
	dprintf(out, "error %s: %s (%s)\n", what, iso_strerror(rc), iso_last_error());
	return 1;
}

static void client_wait_go(int in)
{
	char byte;

	while (read(in, &byte, 1) < 0 && errno == EINTR)
		;
}

/* The client runs as uid (gid = uid), with the supplementary group
 * `group` unless it is 0. */
static void client_start_as(struct client *c, client_body body, uid_t uid, gid_t group)
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

static void client_start(struct client *c, client_body body)
{
	client_start_as(c, body, S_CALLER, 0);
}

/* One line from the client; the test fails on "error ..." or silence. */
static void client_read(struct client *c, char *line, size_t n, int timeout_ms)
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
		ck_assert_msg(got == 1, "client ended without a word (after \"%.*s\")",
			      (int)len, line);
		if (ch == '\n')
			break;
		if (len < n - 1)
			line[len++] = ch;
	}
	line[len] = '\0';
	ck_assert_msg(strncmp(line, "error", 5) != 0, "client: %s", line);
}

static void client_go(struct client *c)
{
	ck_assert_int_eq(write(c->to, "g", 1), 1);
}

/* Returns the client's wait status. */
static int client_end(struct client *c, int sig)
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
	ck_assert_msg(sscanf(line, "uids %u %u %u", &u[0], &u[1], &u[2]) == 3,
		      "client said: %s", line);
	for (int i = 0; i < 3; i++) {
		ck_assert_uint_ge(u[i], S_POOL_FIRST);
		ck_assert_uint_le(u[i], S_POOL_LAST);
		uids[i] = u[i];
	}
}

/* ------------------------------------------------------------------ */
/* Many guests on one connection                                       */

START_TEST(live_hundred_concurrent_guests_each_get_their_own_status)
{
	static char code[CONCURRENT_GUESTS][8], script[CONCURRENT_GUESTS][64];
	iso_guest *g[CONCURRENT_GUESTS];
	iso_conn *conn;

	become(S_CALLER);
	conn = open_conn();
	for (int i = 0; i < CONCURRENT_GUESTS; i++) {
		int k = i % 50;
		snprintf(code[i], sizeof(code[i]), "%d", k);
		/* Half end at once, half sleep 1 to 2 s first (longer than it
		 * takes to start them all, so they overlap): they end in an
		 * order unrelated to their requests'. */
		snprintf(script[i], sizeof(script[i]), "sleep 1.%02d; exit %d",
			 (i * 37) % 100, k);
		const char *quick[] = { T_PROBE, "exit", code[i], NULL };
		const char *slow[] = { "/bin/sh", "-c", script[i], NULL };
		g[i] = must_start(conn, i % 2 ? slow : quick, 0);
	}
	/* Waited for last-first, so most statuses arrive for other guests
	 * than the one being waited for. */
	for (int i = CONCURRENT_GUESTS - 1; i >= 0; i--) {
		must_end(g[i], 30000);
		ck_assert_msg(iso_guest_outcome(g[i]) == ISO_OUTCOME_EXITED &&
				      iso_guest_exit_code(g[i]) == i % 50,
			      "guest %d: outcome %d code %d, expected exit %d", i,
			      iso_guest_outcome(g[i]), iso_guest_code(g[i]), i % 50);
	}
	for (int i = 0; i < CONCURRENT_GUESTS; i++)
		iso_guest_free(g[i]);
	iso_close(conn);
}
END_TEST

START_TEST(live_out_of_order_completion_is_matched_to_its_request)
{
	const char *slow[] = { T_PROBE, "sleep", "1", NULL };
	const char *quick[] = { T_PROBE, "exit", "7", NULL };
	iso_guest *a, *b;
	iso_conn *conn;

	become(S_CALLER);
	conn = open_conn();
	a = must_start(conn, slow, 0);
	b = must_start(conn, quick, 0);
	must_end(b, 5000);
	/* B's status came while A was still running. */
	ck_assert_int_eq(iso_wait(a, 0), 1);
	ck_assert_int_eq(iso_guest_outcome(b), ISO_OUTCOME_EXITED);
	ck_assert_int_eq(iso_guest_code(b), 7);
	must_end(a, 5000);
	ck_assert_int_eq(iso_guest_outcome(a), ISO_OUTCOME_EXITED);
	ck_assert_int_eq(iso_guest_code(a), 0);
	ck_assert_int_eq(iso_guest_code(b), 7);
	iso_guest_free(a);
	iso_guest_free(b);
	iso_close(conn);
}
END_TEST

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
	ck_assert_msg(sscanf(r.out, "%d", &grandchild) == 1 && grandchild > 0,
		      "probe said: %s", r.out);
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
		      "%.0f ms after the client was killed: %s",
		      (double)(now_us() - t0) / 1000, l.what);
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
		      "%d guest process(es) outlived the helper by %d ms",
		      processes_of(uids, 3), GONE_WITHIN_MS);
	client_end(&c, SIGKILL);
	reap_adopted();
}
END_TEST

/* ------------------------------------------------------------------ */
/* The message channel                                                  */

static char big[ISO_MESSAGE_MAX + 1], back[ISO_MESSAGE_MAX];

START_TEST(live_channel_round_trip_keeps_message_boundaries)
{
	const char *argv[] = { T_PROBE, "echo", NULL };
	const size_t lens[] = { 1, 5, 300, 1, 4096, 17 };
	const size_t count = sizeof(lens) / sizeof(*lens);
	iso_conn *conn;
	iso_guest *g;

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)('a' + i % 26);
	become(S_CALLER);
	conn = open_conn();
	g = must_start(conn, argv, 1);
	ck_assert_int_ge(iso_channel_fd(g), 0);
	/* All sent before any is read: only the boundaries separate them. */
	for (size_t i = 0; i < count; i++)
		ck_assert_int_eq(iso_send(g, big + i, lens[i]), 0);
	for (size_t i = 0; i < count; i++) {
		long got = iso_recv(g, back, sizeof(back), 5000);
		ck_assert_msg(got == (long)lens[i], "message %zu: %ld bytes, sent %zu", i,
			      got, lens[i]);
		ck_assert(memcmp(back, big + i, lens[i]) == 0);
	}
	/* End of our side ends the echo. */
	ck_assert_int_eq(shutdown(iso_channel_fd(g), SHUT_WR), 0);
	must_end(g, 5000);
	ck_assert_int_eq(iso_guest_outcome(g), ISO_OUTCOME_EXITED);
	ck_assert_int_eq(iso_guest_code(g), 0);
	iso_guest_free(g);
	iso_close(conn);
}
END_TEST

START_TEST(live_channel_carries_a_message_of_exactly_iso_message_max)
{
	const char *argv[] = { T_PROBE, "echo", NULL };
	iso_conn *conn;
	iso_guest *g;
	long got;

	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)(i * 31 + 7);
	become(S_CALLER);
	conn = open_conn();
	g = must_start(conn, argv, 1);
	ck_assert_msg(iso_send(g, big, ISO_MESSAGE_MAX) == 0, "%s", iso_last_error());
	got = iso_recv(g, back, ISO_MESSAGE_MAX, 5000);
	ck_assert_msg(got == ISO_MESSAGE_MAX, "%ld (%s)", got, iso_last_error());
	ck_assert(memcmp(back, big, ISO_MESSAGE_MAX) == 0);
	iso_guest_free(g);
	iso_close(conn);
}
END_TEST

START_TEST(live_channel_refuses_a_larger_send_with_emsgsize)
{
	const char *argv[] = { T_PROBE, "echo", NULL };
	iso_conn *conn;
	iso_guest *g;

	memset(big, 'x', sizeof(big));
	become(S_CALLER);
	conn = open_conn();
	g = must_start(conn, argv, 1);
	ck_assert_int_eq(iso_send(g, big, ISO_MESSAGE_MAX + 1), -EMSGSIZE);
	/* Nothing of it went out: the next message is the next echo. */
	ck_assert_int_eq(iso_send(g, "after", 5), 0);
	ck_assert_int_eq(iso_recv(g, back, sizeof(back), 5000), 5);
	ck_assert(memcmp(back, "after", 5) == 0);
	iso_guest_free(g);
	iso_close(conn);
}
END_TEST

/* A guest sends what its own socket takes, more than ISO_MESSAGE_MAX: a
 * buffer too small for it leaves it where it is, its size known, for a
 * buffer large enough; nothing is discarded. */
START_TEST(live_channel_message_larger_than_the_buffer_stays_for_a_larger_one)
{
	const char *argv[] = { T_PROBE, "send-big", "70000", NULL };
	static char huge[70000];
	iso_conn *conn;
	iso_guest *g;
	long got;

	become(S_CALLER);
	conn = open_conn();
	g = must_start(conn, argv, ISO_CHANNEL_MESSAGES);
	ck_assert_int_eq(iso_recv(g, back, ISO_MESSAGE_MAX, 5000), -EMSGSIZE);
	ck_assert_ptr_nonnull(strstr(iso_last_error(), "message of 70000 bytes"));
	ck_assert_int_eq(iso_recv(g, NULL, 0, 5000), 70000);
	got = iso_recv(g, huge, sizeof(huge), 5000);
	ck_assert_msg(got == 70000, "%ld (%s)", got, iso_last_error());
	for (size_t i = 0; i < sizeof(huge); i++)
		ck_assert_int_eq((unsigned char)huge[i], (unsigned char)(i * 13 + i / 4096));
	iso_guest_free(g);
	iso_close(conn);
}
END_TEST

#define STREAM_BYTES (10 * 1024 * 1024)

/* A stream channel carries bytes, not messages: ten megabytes to the
 * guest, written in sends of any size, arrive whole and in order; ten
 * back, read as they come. */
START_TEST(live_stream_channel_carries_ten_megabytes_each_way)
{
	char count[16];
	const char *check[] = { T_PROBE, "stream-check", count, NULL };
	const char *send_back[] = { T_PROBE, "stream-send", count, NULL };
	static unsigned char chunk[300007];
	size_t at = 0, n;
	iso_conn *conn;
	iso_guest *g;
	int out[2];
	long got;

	snprintf(count, sizeof(count), "%d", STREAM_BYTES);
	become(S_CALLER);
	conn = open_conn();
	ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
	ck_assert_int_eq(start(conn, check, ISO_CHANNEL_STREAM, out[1], &g), 0);
	close(out[1]);
	for (at = 0; at < STREAM_BYTES; at += n) {
		n = STREAM_BYTES - at < sizeof(chunk) ? STREAM_BYTES - at : sizeof(chunk);
		for (size_t i = 0; i < n; i++)
			chunk[i] = (unsigned char)((at + i) * 13 + (at + i) / 4096);
		ck_assert_msg(iso_send(g, chunk, n) == 0, "%s", iso_last_error());
	}
	got = read(out[0], back, sizeof(back) - 1);
	ck_assert_int_gt(got, 0);
	back[got] = '\0';
	ck_assert_str_eq(back, "10485760 ok\n");
	must_end(g, 5000);
	iso_guest_free(g);
	close(out[0]);

	g = must_start(conn, send_back, ISO_CHANNEL_STREAM);
	for (at = 0; at < STREAM_BYTES; at += (size_t)got) {
		got = iso_recv(g, chunk, sizeof(chunk), 10000);
		ck_assert_msg(got > 0, "after %zu bytes: %ld (%s)", at, got, iso_last_error());
		for (long i = 0; i < got; i++)
			ck_assert_int_eq(chunk[i], (unsigned char)((at + (size_t)i) * 13 +
								   (at + (size_t)i) / 4096));
	}
	ck_assert_int_eq(at, STREAM_BYTES);
	ck_assert_int_eq(iso_recv(g, chunk, sizeof(chunk), 10000), ISO_RECV_EOF);
	must_end(g, 5000);
	ck_assert_int_eq(iso_guest_code(g), 0);
	iso_guest_free(g);
	iso_close(conn);
}
END_TEST

static void enable_channel(iso_spec *spec, void *arg)
{
	(void)arg;
	ck_assert_int_eq(iso_spec_set_channel(spec, 1), 0);
}

/* Is `line` (without its newline) a whole line of text? */
static int has_exact_line(const char *text, const char *line, size_t len)
{
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p)
		if (strncmp(p, line, len) == 0 && (p[len] == '\n' || p[len] == '\0'))
			return 1;
	return 0;
}

static int count_lines(const char *text)
{
	int n = 0;

	for (const char *p = text; (p = strchr(p, '\n')) != NULL; p++)
		n++;
	return n;
}

START_TEST(live_channel_adds_only_isospawn_channel_fd_3_to_guest_env)
{
	const char *argv[] = { T_PROBE, "env", NULL };
	static struct run plain, chan;
	iso_conn *conn;

	become(S_CALLER);
	conn = open_conn();
	run_guest(conn, argv, NULL, NULL, NULL, &plain);
	run_guest(conn, argv, NULL, enable_channel, NULL, &chan);
	iso_close(conn);
	ck_assert_msg(plain.spawn_rc == 0 && chan.spawn_rc == 0, "%s %s", plain.msg, chan.msg);
	ck_assert_int_eq(plain.exit_code, 0);
	ck_assert_int_eq(chan.exit_code, 0);
	ck_assert(has_exact_line(chan.out, "ISOSPAWN_CHANNEL_FD=3", 21));
	ck_assert(!has_line(plain.out, "ISOSPAWN_CHANNEL_FD="));
	ck_assert_int_eq(count_lines(chan.out), count_lines(plain.out) + 1);
	for (const char *p = chan.out, *end; *p; p = *end ? end + 1 : end) {
		size_t len = strcspn(p, "\n");
		end = p + len;
		if (len == 21 && strncmp(p, "ISOSPAWN_CHANNEL_FD=3", 21) == 0)
			continue;
		ck_assert_msg(has_exact_line(plain.out, p, len),
				      "only with a channel: %.*s", (int)len, p);
	}
}
END_TEST

START_TEST(live_channel_recv_times_out_on_a_silent_guest)
{
	const char *argv[] = { T_PROBE, "sleep", "30", NULL };
	iso_conn *conn;
	iso_guest *g;
	uint64_t t0, waited_ms;
	long got;

	become(S_CALLER);
	conn = open_conn();
	g = must_start(conn, argv, 1);
	t0 = now_us();
	got = iso_recv(g, back, sizeof(back), 100);
	waited_ms = (now_us() - t0) / 1000;
	ck_assert_int_eq(got, ISO_RECV_TIMEOUT);
	/* Never before its 100 ms; late only by the machine's load. */
	ck_assert_msg(waited_ms >= 99 && waited_ms < 100 + GONE_WITHIN_MS,
		      "a 100 ms receive timed out after %llu ms",
		      (unsigned long long)waited_ms);
	iso_guest_free(g);
	iso_close(conn);
}
END_TEST

START_TEST(live_channel_recv_reads_eof_after_the_guest_exits)
{
	const char *argv[] = { T_PROBE, "exit", "0", NULL };
	iso_conn *conn;
	iso_guest *g;

	become(S_CALLER);
	conn = open_conn();
	g = must_start(conn, argv, 1);
	must_end(g, 5000);
	ck_assert_int_eq(iso_guest_exit_code(g), 0);
	ck_assert_int_eq(iso_recv(g, back, sizeof(back), 5000), ISO_RECV_EOF);
	iso_guest_free(g);
	iso_close(conn);
}
END_TEST

/* iso_send() waits while the channel is full, for ever if the guest
 * never reads and has no timeout. A caller that sets O_NONBLOCK on its end
 * gets -EAGAIN at once instead, with SO_SNDTIMEO after that time, and
 * poll() tells it when there is room (POLLOUT); the guest's end, which
 * goes with the guest, ends a wait with -EPIPE. SIGALRM ends the test if
 * a send waits regardless. */
START_TEST(live_channel_send_to_a_guest_that_does_not_read_need_not_wait)
{
	const char *argv[] = { T_PROBE, "sleep", "30", NULL };
	struct timeval limit = { .tv_usec = 100000 };
	struct pollfd p = { .events = POLLOUT };
	int sent = 0, flags, rc;
	uint64_t t0, waited_ms;
	iso_conn *conn;
	iso_guest *g;

	memset(big, 'x', sizeof(big));
	become(S_CALLER);
	conn = open_conn();
	g = must_start(conn, argv, 1);
	p.fd = iso_channel_fd(g);
	flags = fcntl(p.fd, F_GETFL);
	ck_assert_int_eq(fcntl(p.fd, F_SETFL, flags | O_NONBLOCK), 0);
	alarm(20);
	while ((rc = iso_send(g, big, ISO_MESSAGE_MAX)) == 0 && sent < 1000)
		sent++;
	ck_assert_msg(rc == -EAGAIN && sent > 0, "%d sent, then %d (%s)", sent, rc,
		      iso_last_error());
	ck_assert_int_eq(poll(&p, 1, 100), 0);
	/* Blocking again, with a send timeout. */
	ck_assert_int_eq(fcntl(p.fd, F_SETFL, flags), 0);
	ck_assert_int_eq(setsockopt(p.fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof(limit)), 0);
	t0 = now_us();
	ck_assert_int_eq(iso_send(g, big, ISO_MESSAGE_MAX), -EAGAIN);
	waited_ms = (now_us() - t0) / 1000;
	ck_assert_msg(waited_ms >= 99 && waited_ms < 100 + GONE_WITHIN_MS,
		      "a send with a 100 ms timeout returned after %llu ms",
		      (unsigned long long)waited_ms);
	limit.tv_usec = 0;
	ck_assert_int_eq(setsockopt(p.fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof(limit)), 0);
	ck_assert_int_eq(iso_kill(g, SIGKILL), 0);
	ck_assert_int_eq(iso_send(g, big, ISO_MESSAGE_MAX), -EPIPE);
	alarm(0);
	must_end(g, 5000);
	iso_guest_free(g);
	iso_close(conn);
}
END_TEST

/* A guest that sends its own end of the channel over the
 * channel, then exits, must not leave that end open in the caller's queue:
 * the caller would never see the channel end, and a send into it would
 * block for ever once its buffer is full. The caller's end takes no
 * descriptors (SO_PASSRIGHTS off; Linux 6.16), so the guest's send is
 * refused and the channel ends with the guest. */
#ifndef SO_PASSRIGHTS
#define SO_PASSRIGHTS 83
#endif
START_TEST(live_channel_guest_cannot_keep_its_end_open_by_sending_it)
{
	const char *argv[] = { T_PROBE, "send-channel", NULL };
	struct pollfd p = { .events = 0 };
	int pair[2], off = 0, rc;
	iso_conn *conn;
	iso_guest *g;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair), 0);
	rc = setsockopt(pair[0], SOL_SOCKET, SO_PASSRIGHTS, &off, sizeof(off));
	iso_close_fds(pair, 2);
	if (rc < 0) {
		check_skip("live_channel_guest_cannot_keep_its_end_open_by_sending_it",
			   "SO_PASSRIGHTS: %s (Linux 6.16 or later)", strerror(errno));
		return;
	}
	become(S_CALLER);
	conn = open_conn();
	g = must_start(conn, argv, 1);
	must_end(g, 5000);
	ck_assert_int_eq(iso_guest_outcome(g), ISO_OUTCOME_EXITED);
	p.fd = iso_channel_fd(g);
	ck_assert_msg(poll(&p, 1, 2000) == 1 && (p.revents & POLLHUP),
		      "the guest is gone but its end of the channel is open");
	ck_assert_int_eq(iso_send(g, "x", 1), -EPIPE);
	ck_assert_int_eq(iso_recv(g, back, sizeof(back), 1000), ISO_RECV_EOF);
	ck_assert_int_eq(iso_guest_code(g), 1); /* its send refused: EPERM */
	iso_guest_free(g);
	iso_close(conn);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Signals                                                              */

START_TEST(live_kill_of_an_exited_guest_is_harmless)
{
	const char *argv[] = { T_PROBE, "exit", "0", NULL };
	const char *again[] = { T_PROBE, "exit", "5", NULL };
	iso_conn *conn;
	iso_guest *g = NULL;
	char sink[64];
	int out[2], rc;

	become(S_CALLER);
	conn = open_conn();
	ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
	rc = start(conn, argv, 0, out[1], &g);
	ck_assert_msg(rc == 0, "%s", iso_last_error());
	close(out[1]);
	/* End of file: the guest (and its reaper, which holds a copy) ended,
	 * but this side has not read its status yet, so the helper gets the
	 * request. */
	while (read(out[0], sink, sizeof(sink)) > 0)
		;
	close(out[0]);
	ck_assert_int_eq(iso_kill(g, SIGKILL), 0);
	must_end(g, 5000);
	ck_assert_int_eq(iso_guest_outcome(g), ISO_OUTCOME_EXITED);
	ck_assert_int_eq(iso_guest_code(g), 0);
	/* Known to have ended: the library answers alone. */
	ck_assert_int_eq(iso_kill(g, SIGTERM), 0);
	ck_assert_int_eq(iso_guest_outcome(g), ISO_OUTCOME_EXITED);
	iso_guest_free(g);
	/* The connection still serves. */
	g = must_start(conn, again, 0);
	must_end(g, 5000);
	ck_assert_int_eq(iso_guest_exit_code(g), 5);
	iso_guest_free(g);
	iso_close(conn);
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
	ck_assert_msg(iso_wait(h, 0) == 1, "the other guest ended (%s)",
		      iso_last_error());
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
		fprintf(stderr, "helper not started or not reaped as pid %d: %s\n",
			REUSED_PID, iso_last_error());
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
	_exit(waitpid(caller, &wstatus, 0) == caller && WIFEXITED(wstatus) ?
		      WEXITSTATUS(wstatus) : 3);
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
	_exit(waitpid(root, &wstatus, 0) == root && WIFEXITED(wstatus) ?
		      WEXITSTATUS(wstatus) : 3);
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

START_TEST(live_sigterm_is_forwarded_through_the_reaper)
{
	const char *argv[] = { T_PROBE, "sleep", "60", NULL };
	iso_conn *conn;
	iso_guest *g;

	become(S_CALLER);
	conn = open_conn();
	g = must_start(conn, argv, 0);
	wait_asleep(iso_guest_uid(g));
	ck_assert_int_eq(iso_kill(g, SIGTERM), 0);
	must_end(g, 5000);
	ck_assert_int_eq(iso_guest_outcome(g), ISO_OUTCOME_SIGNALED);
	ck_assert_int_eq(iso_guest_code(g), SIGTERM);
	ck_assert_int_eq(iso_guest_exit_code(g), 128 + SIGTERM);
	iso_guest_free(g);
	iso_close(conn);
}
END_TEST

/* Is fd readable within ms? */
static int readable_within(int fd, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, ms) == 1;
}

/* Read what fd (non-blocking) holds now. */
static void drain(int fd)
{
	char buf[4096];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

/* SIGSTOP through iso_kill() stops the guest, never its
 * reaper (pid 1 of its namespace, which a SIGSTOP from outside would
 * stop): SIGCONT resumes it, and its timeout ends it while it is stopped. */
START_TEST(live_sigstop_stops_the_guest_and_its_timeout_still_ends_it)
{
	const char *argv[] = { "/bin/sh", "-c", "while :; do echo alive; sleep 0.1; done", NULL };
	iso_spec *spec = NULL;
	iso_guest *g = NULL;
	iso_conn *conn;
	uint64_t wall;
	int out[2];

	become(S_CALLER);
	conn = open_conn();
	ck_assert_int_eq(pipe2(out, O_CLOEXEC | O_NONBLOCK), 0);
	ck_assert_int_eq(iso_spec_new(&spec), 0);
	ck_assert_int_eq(iso_spec_set_program(spec, argv[0]), 0);
	ck_assert_int_eq(iso_spec_set_argv(spec, argv), 0);
	ck_assert_int_eq(iso_spec_set_stdio(spec, -1, out[1], -1), 0);
	ck_assert_int_eq(iso_spec_set_timeout(spec, 3000), 0);
	ck_assert_msg(iso_spawn(conn, spec, &g) == 0, "spawn: %s", iso_last_error());
	iso_spec_free(spec);
	close(out[1]);
	ck_assert_msg(readable_within(out[0], 5000), "the guest never wrote");
	for (int round = 0; round < 2; round++) {
		ck_assert_int_eq(iso_kill(g, SIGSTOP), 0);
		sleep_ms(300);
		drain(out[0]);
		ck_assert_msg(!readable_within(out[0], 600), "the guest still writes after SIGSTOP");
		if (round == 0) {
			ck_assert_int_eq(iso_kill(g, SIGCONT), 0);
			ck_assert_msg(readable_within(out[0], 1000),
				      "the guest did not resume after SIGCONT");
		}
	}
	/* Stopped, it ends at its timeout all the same. */
	must_end(g, 10000);
	iso_guest_usage(g, &wall, NULL, NULL, NULL);
	ck_assert_msg(iso_guest_outcome(g) == ISO_OUTCOME_TIMED_OUT,
		      "outcome %s code %d after %llu ms", iso_outcome_name(iso_guest_outcome(g)),
		      iso_guest_code(g), (unsigned long long)(wall / 1000));
	ck_assert_msg(wall < 6000000, "ended %llu ms after its start, timeout 3 s",
		      (unsigned long long)(wall / 1000));
	close(out[0]);
	iso_guest_free(g);
	iso_close(conn);
}
END_TEST

/* Real-time signals reach the guest like any other; the C
 * library's 32 and 33, which the reaper cannot take, are refused by name. */
START_TEST(live_realtime_signals_reach_the_guest)
{
	const char *argv[] = { T_PROBE, "sleep", "30", NULL };
	const int sigs[] = { 34, 40, 64 };
	iso_conn *conn;
	iso_guest *g;

	become(S_CALLER);
	conn = open_conn();
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		g = must_start(conn, argv, 0);
		ck_assert_int_eq(iso_kill(g, sigs[i]), 0);
		ck_assert_msg(iso_wait(g, 5000) == 0, "signal %d: lost, the guest still runs",
			      sigs[i]);
		ck_assert_msg(iso_guest_outcome(g) == ISO_OUTCOME_SIGNALED &&
				      iso_guest_code(g) == sigs[i],
			      "signal %d: outcome %s code %d", sigs[i],
			      iso_outcome_name(iso_guest_outcome(g)), iso_guest_code(g));
		iso_guest_free(g);
	}
	g = must_start(conn, argv, 0);
	for (int sig = 32; sig <= 33; sig++) {
		ck_assert_int_eq(iso_kill(g, sig), -EINVAL);
		ck_assert_msg(strstr(iso_last_error(), "reserved by the C library") != NULL, "%s",
			      iso_last_error());
	}
	iso_guest_free(g);
	iso_close(conn);
}
END_TEST

/* A supervisor may cancel a guest the moment it is started: the signal
 * must not be lost while the reaper and the guest are still setting up. */
START_TEST(live_sigterm_right_after_spawn_is_not_lost)
{
	const char *argv[] = { T_PROBE, "sleep", "30", NULL };
	iso_conn *conn;

	become(S_CALLER);
	conn = open_conn();
	for (int i = 0; i < 20; i++) {
		iso_guest *g = must_start(conn, argv, 0);
		ck_assert_int_eq(iso_kill(g, SIGTERM), 0);
		ck_assert_msg(iso_wait(g, 5000) == 0, "round %d: SIGTERM lost, guest still running", i);
		ck_assert_msg(iso_guest_outcome(g) == ISO_OUTCOME_SIGNALED &&
				      iso_guest_code(g) == SIGTERM,
			      "round %d: outcome %d code %d", i, iso_guest_outcome(g),
			      iso_guest_code(g));
		iso_guest_free(g);
	}
	iso_close(conn);
}
END_TEST

START_TEST(live_guest_killing_itself_reports_signal_9)
{
	const char *argv[] = { T_PROBE, "kill-self", "9", NULL };
	iso_conn *conn;
	iso_guest *g;

	become(S_CALLER);
	conn = open_conn();
	g = must_start(conn, argv, 0);
	must_end(g, 5000);
	ck_assert_int_eq(iso_guest_outcome(g), ISO_OUTCOME_SIGNALED);
	ck_assert_int_eq(iso_guest_code(g), SIGKILL);
	ck_assert_int_eq(iso_guest_exit_code(g), 128 + SIGKILL);
	iso_guest_free(g);
	iso_close(conn);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Precise status                                                       */

static iso_guest *run_to_end(iso_conn *conn, const char *const *argv)
{
	iso_guest *g = must_start(conn, argv, 0);

	must_end(g, 30000);
	return g;
}

START_TEST(live_status_reports_the_exit_code)
{
	const char *argv[] = { T_PROBE, "exit", "42", NULL };
	iso_conn *conn;
	iso_guest *g;

	become(S_CALLER);
	conn = open_conn();
	g = run_to_end(conn, argv);
	ck_assert_int_eq(iso_guest_outcome(g), ISO_OUTCOME_EXITED);
	ck_assert_int_eq(iso_guest_code(g), 42);
	ck_assert_int_eq(iso_guest_exit_code(g), 42);
	ck_assert_int_eq(iso_guest_stage(g), ISO_STAGE_NONE);
	iso_guest_free(g);
	iso_close(conn);
}
END_TEST

START_TEST(live_status_reports_the_signal)
{
	const char *argv[] = { T_PROBE, "kill-self", "15", NULL };
	iso_conn *conn;
	iso_guest *g;

	become(S_CALLER);
	conn = open_conn();
	g = run_to_end(conn, argv);
	ck_assert_int_eq(iso_guest_outcome(g), ISO_OUTCOME_SIGNALED);
	ck_assert_int_eq(iso_guest_code(g), SIGTERM);
	ck_assert_int_eq(iso_guest_exit_code(g), 128 + SIGTERM);
	iso_guest_free(g);
	iso_close(conn);
}
END_TEST

START_TEST(live_missing_program_fails_at_exec_with_enoent)
{
	const char *argv[] = { T_BIN "/no-such-program", NULL };
	iso_conn *conn;
	iso_guest *g;

	become(S_CALLER);
	conn = open_conn();
	g = run_to_end(conn, argv);
	ck_assert_int_eq(iso_guest_outcome(g), ISO_OUTCOME_FAILED);
	ck_assert_int_eq(iso_guest_stage(g), ISO_STAGE_EXEC);
	ck_assert_int_eq(iso_guest_code(g), ENOENT);
	ck_assert_int_eq(iso_guest_exit_code(g), 127);
	iso_guest_free(g);
	iso_close(conn);
}
END_TEST

#define NOT_EXECUTABLE T_ROOT "/supervise-not-executable"

START_TEST(live_non_executable_file_fails_at_exec_with_eacces)
{
	const char *argv[] = { NOT_EXECUTABLE, NULL };
	iso_conn *conn;
	iso_guest *g;
	int fd;

	/* As root, before dropping: a readable file without x bits. */
	fd = open(NOT_EXECUTABLE, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fchmod(fd, 0644), 0);
	ck_assert_int_eq(write(fd, "#!/bin/sh\nexit 0\n", 17), 17);
	close(fd);
	become(S_CALLER);
	conn = open_conn();
	g = run_to_end(conn, argv);
	ck_assert_int_eq(iso_guest_outcome(g), ISO_OUTCOME_FAILED);
	ck_assert_int_eq(iso_guest_stage(g), ISO_STAGE_EXEC);
	ck_assert_int_eq(iso_guest_code(g), EACCES);
	ck_assert_int_eq(iso_guest_exit_code(g), 126);
	iso_guest_free(g);
	iso_close(conn);
}
END_TEST

START_TEST(live_wall_time_covers_the_guests_sleep)
{
	const char *argv[] = { T_PROBE, "sleep", "1", NULL };
	uint64_t wall_us = 0;
	iso_conn *conn;
	iso_guest *g;

	become(S_CALLER);
	conn = open_conn();
	g = run_to_end(conn, argv);
	ck_assert_int_eq(iso_guest_exit_code(g), 0);
	iso_guest_usage(g, &wall_us, NULL, NULL, NULL);
	ck_assert_uint_ge(wall_us, 1000000);
	iso_guest_free(g);
	iso_close(conn);
}
END_TEST

START_TEST(live_cpu_limit_kill_reports_user_cpu)
{
	const char *argv[] = { T_PROBE, "cpuloop", NULL };
	uint64_t user_us = 0;
	iso_conn *conn;
	iso_spec *spec;
	iso_guest *g = NULL;
	int rc;

	become(S_CALLER);
	conn = open_conn();
	ck_assert_int_eq(iso_spec_new(&spec), 0);
	ck_assert_int_eq(iso_spec_set_program(spec, argv[0]), 0);
	ck_assert_int_eq(iso_spec_set_argv(spec, argv), 0);
	ck_assert_int_eq(iso_spec_set_limit(spec, ISO_LIMIT_CPU, 1), 0);
	rc = iso_spawn(conn, spec, &g);
	iso_spec_free(spec);
	ck_assert_msg(rc == 0, "%s", iso_last_error());
	must_end(g, 30000);
	ck_assert_int_eq(iso_guest_outcome(g), ISO_OUTCOME_LIMIT);
	ck_assert_int_eq(iso_guest_limit(g), ISO_LIMIT_CPU);
	iso_guest_usage(g, NULL, &user_us, NULL, NULL);
	ck_assert_uint_gt(user_us, 0);
	iso_guest_free(g);
	iso_close(conn);
}
END_TEST

START_TEST(live_status_reports_peak_rss)
{
	const char *argv[] = { T_PROBE, "exit", "0", NULL };
	uint64_t rss = 0;
	iso_conn *conn;
	iso_guest *g;

	become(S_CALLER);
	conn = open_conn();
	g = run_to_end(conn, argv);
	iso_guest_usage(g, NULL, NULL, NULL, &rss);
	ck_assert_uint_gt(rss, 0);
	iso_guest_free(g);
	iso_close(conn);
}
END_TEST

/* The members isospawn(1) documents, in its order. */
static const char *const json_keys[] = {
	"outcome", "exit_code", "code",	  "signal",	"stage", "errno", "reason",
	"limit",   "wall_us",	"user_us", "sys_us", "maxrss_kib", "uid",   "notes",
};
#define JSON_KEYS (sizeof(json_keys) / sizeof(*json_keys))

/* The raw text of each member's value, in values[i] (up to the next ','
 * or '}'; none of the values here holds either), checking order and that
 * there is no other member. */
static void json_members(const char *text, char values[JSON_KEYS][64])
{
	const char *last = text;
	int members = 0;

	ck_assert_msg(text[0] == '{', "not an object: %s", text);
	ck_assert_msg(strchr(text, '\n') == text + strlen(text) - 1 &&
			      text[strlen(text) - 2] == '}',
		      "not one object on one line: %s", text);
	for (const char *p = text; (p = strstr(p, "\": ")) != NULL; p++)
		members++;
	ck_assert_msg(members == (int)JSON_KEYS, "%d members: %s", members, text);
	for (size_t i = 0; i < JSON_KEYS; i++) {
		char key[32];
		const char *at;
		snprintf(key, sizeof(key), "\"%s\": ", json_keys[i]);
		at = strstr(text, key);
		ck_assert_msg(at != NULL && at > last, "%s missing or out of order: %s",
			      json_keys[i], text);
		at += strlen(key);
		snprintf(values[i], sizeof(values[i]), "%.*s", (int)strcspn(at, ",}"), at);
		last = at;
	}
}

static int is_number(const char *s)
{
	return *s && strspn(s, "0123456789") == strlen(s);
}

static void read_status_file(const char *path, char *text, size_t n)
{
	ck_assert_msg(read_text(path, text, n) > 0, "%s: %s", path, strerror(errno));
	unlink(path);
}

START_TEST(live_cli_status_json_writes_the_documented_fields)
{
	char path[64], text[2048], v[JSON_KEYS][64];
	const char *exited[] = { "--status-json", path, "--", T_PROBE, "exit", "3", NULL };
	const char *failed[] = { "--status-json", path, "--", T_BIN "/no-such-program", NULL };
	struct run r;

	become(S_CALLER);
	snprintf(path, sizeof(path), "/tmp/live_supervise.%d.json", (int)getpid());

	run_cli(exited, NULL, &r);
	ck_assert_msg(r.exit_code == 3, "exit %d: %s", r.exit_code, r.err);
	read_status_file(path, text, sizeof(text));
	json_members(text, v);
	ck_assert_str_eq(v[0], "\"exited\"");
	ck_assert_str_eq(v[1], "3");
	ck_assert_str_eq(v[2], "3");
	ck_assert_str_eq(v[3], "null");
	ck_assert_str_eq(v[4], "null");
	ck_assert_str_eq(v[5], "null");
	ck_assert_str_eq(v[6], "null");
	ck_assert_str_eq(v[7], "null");
	for (int i = 8; i <= 12; i++)
		ck_assert_msg(is_number(v[i]), "%s: %s", json_keys[i], v[i]);
	ck_assert_msg(strtoull(v[11], NULL, 10) > 0, "maxrss_kib %s", v[11]);
	ck_assert_uint_ge(strtoul(v[12], NULL, 10), S_POOL_FIRST);
	ck_assert_uint_le(strtoul(v[12], NULL, 10), S_POOL_LAST);
	/* The standing note: limits are rlimits, no cgroup. */
	ck_assert_str_eq(v[13], "\"limits: rlimits only (no cgroup)\"");

	run_cli(failed, NULL, &r);
	ck_assert_msg(r.exit_code == 127, "exit %d: %s", r.exit_code, r.err);
	read_status_file(path, text, sizeof(text));
	json_members(text, v);
	ck_assert_str_eq(v[0], "\"failed\"");
	ck_assert_str_eq(v[1], "127");
	ck_assert_int_eq(atoi(v[2]), ENOENT);
	ck_assert_str_eq(v[3], "null");
	ck_assert_str_eq(v[4], "\"exec\"");
	ck_assert_str_eq(v[5], "\"ENOENT\"");
	/* The helper's reason: the program it could not open. */
	ck_assert_str_eq(v[6], "\"open program: No such file or directory\"");
	ck_assert_str_eq(v[7], "null");
}
END_TEST

START_TEST(live_wait_with_timeout_returns_1_while_guest_runs)
{
	const char *argv[] = { T_PROBE, "sleep", "30", NULL };
	uint64_t t0, waited_ms;
	iso_conn *conn;
	iso_guest *g;
	int rc;

	become(S_CALLER);
	conn = open_conn();
	g = must_start(conn, argv, 0);
	t0 = now_us();
	rc = iso_wait(g, 200);
	waited_ms = (now_us() - t0) / 1000;
	ck_assert_int_eq(rc, 1);
	ck_assert_int_eq(iso_guest_outcome(g), ISO_OUTCOME_RUNNING);
	/* Never before its 200 ms; late only by the machine's load. */
	ck_assert_msg(waited_ms >= 199 && waited_ms < 200 + GONE_WITHIN_MS,
		      "a 200 ms wait returned after %llu ms", (unsigned long long)waited_ms);
	iso_guest_free(g);
	iso_close(conn);
}
END_TEST

/* ------------------------------------------------------------------ */
/* No growth                                                            */

/* Read fd to end of file, for up to timeout_ms; its bytes in buf. Returns
 * the milliseconds it took, or -1 when end of file did not come. */
static long read_to_eof(int fd, char *buf, size_t n, int timeout_ms)
{
	uint64_t t0 = now_us();
	size_t used = 0;
	struct pollfd p = { .fd = fd, .events = POLLIN };
	ssize_t got;

	while (poll(&p, 1, timeout_ms) == 1) {
		got = read(fd, buf + used, n - 1 - used);
		if (got <= 0) {
			buf[used] = '\0';
			return got == 0 ? (long)((now_us() - t0) / 1000) : -1;
		}
		used += (size_t)got;
	}
	buf[used] = '\0';
	return -1;
}

/* Once it has started two guests, a connection's helper clones the next
 * guest's reaper right after starting one (loop.c, spawn_spare), so its
 * third guest on gets a reaper made ahead. Such a reaper carries nothing
 * of the guest it was made beside: guest B, the third, spawned while A
 * lives (through the reaper made when A started), has a uid of its own,
 * an empty /tmp where A left a file, only its own processes; and A's
 * output pipe reaches end of file when A ends, though B's reaper was made
 * while the pipe was A's. */
START_TEST(live_reaper_made_ahead_carries_nothing_between_guests)
{
	static const char *const a_argv[] = { "/bin/sh", "-c",
		"echo left > /tmp/mark; echo a; sleep 1", NULL };
	static const char *const b_argv[] = { "/bin/sh", "-c",
		"ls -A /tmp; ls /proc | grep -c '^[0-9]'; id -u; sleep 5", NULL };
	static const char *const true_argv[] = { "/bin/true", NULL };
	char out_a[256], out_b[256], want[64];
	int pa[2], pb[2];
	iso_guest *a = NULL, *b = NULL;
	iso_conn *conn;
	long ms;

	become(S_CALLER);
	conn = open_conn();
	ck_assert_int_eq(pipe2(pa, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(pb, O_CLOEXEC), 0);
	a = must_start(conn, true_argv, 0);
	must_end(a, 10000);
	iso_guest_free(a);
	ck_assert_int_eq(start(conn, a_argv, 0, pa[1], &a), 0);
	close(pa[1]);
	ck_assert_int_eq(start(conn, b_argv, 0, pb[1], &b), 0);
	close(pb[1]);
	ck_assert_uint_ne(iso_guest_uid(a), iso_guest_uid(b));
	ms = read_to_eof(pa[0], out_a, sizeof(out_a), 4000);
	ck_assert_msg(ms >= 0, "A's output did not end while B ran (%s)", out_a);
	ck_assert_str_eq(out_a, "a\n");
	must_end(a, 10000);
	/* B: nothing in /tmp, two processes (its shell and ls's count, under
	 * pid 1 its reaper: grep sees 3 at most), its own uid. */
	ck_assert_int_eq(iso_kill(b, SIGKILL), 0);
	/* B's pipe ends with B, though the reaper made when B started (for
	 * a next guest that never comes) was made while it was B's. */
	ck_assert_msg(read_to_eof(pb[0], out_b, sizeof(out_b), 4000) >= 0,
		      "B's output did not end with B (%s)", out_b);
	snprintf(want, sizeof(want), "\n%u\n", (unsigned)iso_guest_uid(b));
	ck_assert_msg(strstr(out_b, "mark") == NULL && strstr(out_b, want) != NULL &&
		      (out_b[0] == '2' || out_b[0] == '3' || out_b[0] == '4') && out_b[1] == '\n',
		      "B saw: %s", out_b);
	must_end(b, 10000);
	iso_guest_free(a);
	iso_guest_free(b);
	iso_close(conn);
}
END_TEST

/* The reaper factory (spawner.c, factory_main) is forked at a connection's
 * first guest, while the helper holds that guest's stdio: it must not keep
 * them, or the guest's output would not end with the guest. */
START_TEST(live_reaper_factory_keeps_no_descriptor_of_the_first_guest)
{
	static const char *const argv[] = { "/bin/sh", "-c", "echo first", NULL };
	char out[64];
	iso_guest *g = NULL;
	iso_conn *conn;
	int p[2];

	become(S_CALLER);
	conn = open_conn();
	ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
	ck_assert_int_eq(start(conn, argv, 0, p[1], &g), 0);
	close(p[1]);
	ck_assert_msg(read_to_eof(p[0], out, sizeof(out), 4000) >= 0,
		      "the first guest's output did not end with it (%s)", out);
	ck_assert_str_eq(out, "first\n");
	must_end(g, 10000);
	iso_guest_free(g);
	close(p[0]);
	iso_close(conn);
}
END_TEST

/* Client: a guest asleep, with no stdio of the caller's (so the reaper's
 * lowest free descriptor takes the program); report its uid and reaper,
 * and on the go-ahead end it. */
static int client_reports_its_reaper(int out, int in)
{
	const char *argv[] = { T_PROBE, "sleep", "60", NULL };
	iso_guest *g = NULL;
	iso_conn *conn;
	int rc;

	if ((rc = iso_open(&conn)) < 0)
		return client_error(out, "iso_open", rc);
	if ((rc = start(conn, argv, 0, -1, &g)) < 0)
		return client_error(out, "iso_spawn", rc);
	dprintf(out, "uid %u reaper %d\n", (unsigned)iso_guest_uid(g), (int)iso_guest_pid(g));
	client_wait_go(in);
	if ((rc = iso_kill(g, SIGKILL)) < 0 || (rc = iso_wait(g, 10000)) != 0)
		return client_error(out, "iso_kill or iso_wait", rc < 0 ? rc : -ETIMEDOUT);
	return 0;
}

/* The reaper moves the program's descriptor above 0-3 for its
 * guest, and keeps no second one: while the guest runs, the reaper holds
 * the program once (root reads its /proc/PID/fd). */
START_TEST(live_reaper_holds_the_program_once)
{
	struct stat probe, st;
	struct client c;
	char line[256], path[300];
	struct dirent *e;
	unsigned u;
	int reaper, held = 0;
	DIR *d;

	ck_assert_int_eq(stat(T_PROBE, &probe), 0);
	client_start(&c, client_reports_its_reaper);
	client_read(&c, line, sizeof(line), 30000);
	ck_assert_msg(sscanf(line, "uid %u reaper %d", &u, &reaper) == 2, "client said: %s", line);
	wait_asleep(u);
	snprintf(path, sizeof(path), "/proc/%d/fd", reaper);
	ck_assert_ptr_nonnull(d = opendir(path));
	while ((e = readdir(d)) != NULL) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%s", reaper, e->d_name);
		if (e->d_name[0] != '.' && stat(path, &st) == 0 && st.st_dev == probe.st_dev &&
		    st.st_ino == probe.st_ino)
			held++;
	}
	closedir(d);
	client_go(&c);
	ck_assert_int_eq(client_end(&c, 0), 0);
	ck_assert_msg(held == 1, "the reaper holds the program %d times", held);
}
END_TEST

static int spawn_and_reap(iso_conn *conn, int out)
{
	const char *argv[] = { T_PROBE, "exit", "0", NULL };
	iso_guest *g = NULL;
	int rc = start(conn, argv, 0, -1, &g);

	if (rc < 0)
		return client_error(out, "iso_spawn", rc);
	rc = iso_wait(g, 30000);
	if (rc != 0)
		return client_error(out, "iso_wait", rc < 0 ? rc : -ETIMEDOUT);
	if (iso_guest_exit_code(g) != 0) {
		dprintf(out, "error guest: outcome %d code %d\n", iso_guest_outcome(g),
			iso_guest_code(g));
		return 1;
	}
	iso_guest_free(g);
	return 0;
}

/* Client: warm up, let the test measure, spawn LEAK_SPAWNS guests one after
 * the other, let it measure again. */
static int client_many_spawns(int out, int in)
{
	iso_conn *conn;
	uint64_t t0;
	int rc;

	if ((rc = iso_open(&conn)) < 0)
		return client_error(out, "iso_open", rc);
	for (int i = 0; i < WARMUP_SPAWNS; i++)
		if (spawn_and_reap(conn, out) != 0)
			return 1;
	/* A guest's end is told before its reaper is gone (helper/spawner.c):
	 * let the last one go before the helper is counted. */
	sleep_ms(200);
	dprintf(out, "before\n");
	client_wait_go(in);
	t0 = now_us();
	for (int i = 0; i < LEAK_SPAWNS; i++)
		if (spawn_and_reap(conn, out) != 0)
			return 1;
	t0 = now_us() - t0;
	sleep_ms(200);
	dprintf(out, "after %llu\n", (unsigned long long)t0);
	client_wait_go(in);
	iso_close(conn);
	return 0;
}

START_TEST(live_ten_thousand_spawns_leave_helper_fds_and_rss_unchanged)
{
	unsigned long long elapsed_us = 0;
	long rss_before, rss_after;
	int fds_before, fds_after, status;
	struct client c;
	char line[256];
	pid_t helper;

	client_start(&c, client_many_spawns);
	client_read(&c, line, sizeof(line), 120000);
	ck_assert_str_eq(line, "before");
	helper = helper_of(c.pid);
	fds_before = fd_count(helper);
	rss_before = status_number(helper, "\nVmRSS:");
	client_go(&c);
	client_read(&c, line, sizeof(line), 900000);
	ck_assert_msg(sscanf(line, "after %llu", &elapsed_us) == 1, "client said: %s", line);
	fds_after = fd_count(helper);
	rss_after = status_number(helper, "\nVmRSS:");
	client_go(&c);
	status = client_end(&c, 0);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "client status 0x%x",
		      (unsigned)status);
	fprintf(stderr,
		"live_supervise: %d spawns in %.1f s, %.2f ms per spawn; helper fds %d -> %d, "
		"VmRSS %ld -> %ld KiB\n",
		LEAK_SPAWNS, (double)elapsed_us / 1e6, (double)elapsed_us / 1e3 / LEAK_SPAWNS,
		fds_before, fds_after, rss_before, rss_after);
	ck_assert_int_eq(fds_after, fds_before);
	ck_assert_msg(rss_after - rss_before < RSS_GROWTH_MAX_KIB, "VmRSS grew %ld KiB",
		      rss_after - rss_before);
}
END_TEST

/* ------------------------------------------------------------------ */
/* A hostile caller or guest at run time                               */

/* argv with the guest's nofile and wall-clock timeout (0: the rule's). */
static iso_guest *must_start_limited(iso_conn *conn, const char *const *argv,
				     uint64_t nofile, uint64_t timeout_ms)
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
	ck_assert_msg(rc == 0, "spawn %s: %s (%s)", argv[0], iso_strerror(rc),
		      iso_last_error());
	return g;
}

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
	ck_assert_msg(gone, "the guest outlived its 1 s timeout by %d ms while its helper "
		      "was stopped", GONE_WITHIN_MS);
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

/* The channel is made by the reaper after the drop, so its peer
 * credentials name the guest (uid, gid and the pid iso_guest_pid() gives),
 * never root: a service that authorises by them sees the untrusted guest
 * as what it is. */
/* The parent of a process, from /proc; -1 if unknown. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[4096];
	const char *ppid;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (read_text(path, buf, sizeof(buf)) < 0 || !(ppid = status_field(buf, "\nPPid:\t")))
		return -1;
	return (pid_t)atoi(ppid);
}

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
	dprintf(out, "served; %s\n", rc && write_text(path, "1") == 0 ? "froze it" : "could not freeze it");
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
		      strstr(line, "isospawn.socket"), "client said: %s", line);
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
		      strstr(line, "isospawn.socket"), "client said: %s", line);
	ck_assert_int_eq(access(delegated, F_OK), -1);
}
END_TEST

START_TEST(live_channel_peer_credentials_name_the_guest)
{
	const char *argv[] = { T_PROBE, "echo", NULL };
	struct ucred peer;
	socklen_t len = sizeof(peer);
	iso_conn *conn;
	iso_guest *g;

	become(S_CALLER);
	conn = open_conn();
	g = must_start(conn, argv, 1);
	ck_assert_int_eq(getsockopt(iso_channel_fd(g), SOL_SOCKET, SO_PEERCRED, &peer, &len), 0);
	ck_assert_msg(peer.uid == iso_guest_uid(g) && peer.gid == iso_guest_uid(g),
		      "the channel's peer is uid %u gid %u, the guest uid %u", (unsigned)peer.uid,
		      (unsigned)peer.gid, (unsigned)iso_guest_uid(g));
	/* The guest itself: the child of its reaper (whose pid iso_guest_pid
	 * gives). */
	ck_assert_int_eq(parent_of(peer.pid), iso_guest_pid(g));
	ck_assert_int_eq(shutdown(iso_channel_fd(g), SHUT_WR), 0);
	must_end(g, 5000);
	ck_assert_int_eq(iso_guest_outcome(g), ISO_OUTCOME_EXITED);
	iso_guest_free(g);
	iso_close(conn);
}
END_TEST

#define NOFILE_ASKED 64
#define NOFILE_GUESTS (4 * NOFILE_ASKED)

/* 76480200929599801 s is 64 us past a multiple of 2^64 us: a guest killed
 * with any CPU time at all looked like one the cpu limit ended. */
#define HUGE_CPU_CALLER 4000073u

START_TEST(live_killed_guest_is_no_cpu_limit_whatever_the_ceiling)
{
	const char *sleeper[] = { T_PROBE, "sleep", "60", NULL };
	iso_conn *conn;
	iso_guest *g;

	become(HUGE_CPU_CALLER);
	conn = open_conn();
	g = must_start_limited(conn, sleeper, 0, 0);
	ck_assert_int_eq(iso_kill(g, SIGKILL), 0);
	must_end(g, 30000);
	ck_assert_msg(iso_guest_outcome(g) == ISO_OUTCOME_SIGNALED && iso_guest_code(g) == SIGKILL,
		      "outcome %d code %d limit %d", iso_guest_outcome(g), iso_guest_code(g),
		      iso_guest_limit(g));
	iso_guest_free(g);
	iso_close(conn);
}
END_TEST

/* A guest's nofile is its own: the helper's set-up after the drop holds
 * more descriptors than a small nofile allows (the Landlock ruleset, the
 * report socket, stdio moved out of the way), so the limit is set last,
 * and a guest asking for 8 runs. */
START_TEST(live_guest_with_a_small_nofile_runs)
{
	const char *quick[] = { T_PROBE, "exit", "0", NULL };
	iso_conn *conn;
	iso_guest *g;

	become(S_CALLER);
	conn = open_conn();
	for (uint64_t nofile = 16; nofile >= 8; nofile /= 2) {
		g = must_start_limited(conn, quick, nofile, 0);
		must_end(g, 30000);
		ck_assert_msg(iso_guest_outcome(g) == ISO_OUTCOME_EXITED &&
				      iso_guest_exit_code(g) == 0,
			      "nofile %ju: outcome %d code %d stage %d", (uintmax_t)nofile,
			      iso_guest_outcome(g), iso_guest_code(g), iso_guest_stage(g));
		iso_guest_free(g);
	}
	iso_close(conn);
}
END_TEST

/* A reaper holds only what it and its guest need, not every
 * descriptor of the helper, so a connection with four times the guests'
 * nofile in live guests (each holding a pidfd and a report socket in the
 * helper) still starts every guest within that nofile. */
START_TEST(live_connection_with_four_times_nofile_live_guests_starts_each)
{
	const char *sleeper[] = { T_PROBE, "sleep", "60", NULL };
	const char *quick[] = { T_PROBE, "exit", "0", NULL };
	static iso_guest *g[NOFILE_GUESTS];
	iso_guest *last;
	iso_conn *conn;

	become(S_CALLER);
	conn = open_conn();
	for (int i = 0; i < NOFILE_GUESTS; i++)
		g[i] = must_start_limited(conn, sleeper, NOFILE_ASKED, 0);
	last = must_start_limited(conn, quick, NOFILE_ASKED, 0);
	must_end(last, 30000);
	ck_assert_msg(iso_guest_outcome(last) == ISO_OUTCOME_EXITED,
		      "guest %d: outcome %d code %d", NOFILE_GUESTS + 1,
		      iso_guest_outcome(last), iso_guest_code(last));
	for (int i = 0; i < NOFILE_GUESTS; i++) {
		ck_assert_msg(iso_wait(g[i], 0) == 1, "guest %d: outcome %d code %d", i + 1,
			      iso_guest_outcome(g[i]), iso_guest_code(g[i]));
		iso_guest_free(g[i]);
	}
	iso_guest_free(last);
	iso_close(conn);
}
END_TEST

/* The rule for the per-caller ceiling in tests/policy.conf.in: guests 2. */
#define G_CALLER 4000060u

/* A caller's live guests are bounded by its rule's 'guests'
 * over all its connections (each its own helper), not per connection: a
 * third guest is refused on either, and a slot frees when a guest ends. */
START_TEST(live_callers_live_guests_are_bounded_across_its_connections)
{
	const char *sleeper[] = { T_PROBE, "sleep", "60", NULL };
	iso_guest *first, *second, *third = NULL;
	iso_conn *a, *b;
	int rc;

	become(G_CALLER);
	a = open_conn();
	b = open_conn();
	first = must_start(a, sleeper, 0);
	second = must_start(b, sleeper, 0);
	rc = start(a, sleeper, 0, -1, &third);
	ck_assert_msg(rc == -EAGAIN, "third guest on the first connection: %d (%s)", rc,
		      iso_last_error());
	ck_assert_msg(strstr(iso_last_error(), "'guests'") != NULL, "%s", iso_last_error());
	rc = start(b, sleeper, 0, -1, &third);
	ck_assert_msg(rc == -EAGAIN, "third guest on the second connection: %d (%s)", rc,
		      iso_last_error());
	ck_assert_int_eq(iso_kill(first, SIGKILL), 0);
	must_end(first, 5000);
	third = must_start(a, sleeper, 0);
	iso_guest_free(first);
	iso_guest_free(second);
	iso_guest_free(third);
	iso_close(a);
	iso_close(b);
}
END_TEST

/* The rule of tests/policy.conf.in whose members share a pool of two uids
 * with 'guests 1'. */
#define H_GROUP 4000110u
#define H_MEMBER 4000111u
#define H_OTHER 4000112u

/* Client: a guest run to its end on one connection, which stays open;
 * then at once a guest on a second connection, which stays open too. */
static int client_runs_a_guest_on_each_of_two_connections(int out, int in)
{
	const char *argv[] = { "/bin/true", NULL };
	iso_conn *a, *b;
	iso_guest *g;
	int rc;

	if ((rc = iso_open(&a)) < 0 || (rc = iso_open(&b)) < 0)
		return client_error(out, "iso_open", rc);
	if ((rc = start(a, argv, 0, -1, &g)) < 0 || (rc = iso_wait(g, 10000)) != 0)
		return client_error(out, "the first guest", rc);
	if ((rc = start(b, argv, 0, -1, &g)) == 0)
		rc = iso_wait(g, 10000);
	dprintf(out, "second %d %s\n", rc, rc < 0 ? iso_last_error() : "ran");
	client_wait_go(in);
	return 0;
}

/* Client: one guest run to its end. */
static int client_runs_one_guest(int out, int in)
{
	const char *argv[] = { "/bin/true", NULL };
	iso_conn *conn;
	iso_guest *g;
	int rc;

	(void)in;
	if ((rc = iso_open(&conn)) < 0)
		return client_error(out, "iso_open", rc);
	rc = start(conn, argv, 0, -1, &g);
	if (rc == 0)
		rc = iso_wait(g, 10000);
	dprintf(out, "guest %d %s\n", rc, rc != 0 ? iso_last_error() : "ran");
	iso_close(conn);
	return 0;
}

/* A guest's uid and slot go back before its end is told: with 'guests 1',
 * a member of a group rule runs a guest to its end on one connection and
 * at once another on a second, and another member runs one while both
 * connections stay open: an ended guest's uid is held for no connection,
 * so no member can hold the rule's whole pool with its open connections. */
START_TEST(live_ended_guests_uid_goes_back_so_one_member_cannot_hold_the_pool)
{
	struct client member, other;
	char line[512], theirs[512];

	client_start_as(&member, client_runs_a_guest_on_each_of_two_connections, H_MEMBER,
			H_GROUP);
	client_read(&member, theirs, sizeof(theirs), 30000);
	client_start_as(&other, client_runs_one_guest, H_OTHER, H_GROUP);
	client_read(&other, line, sizeof(line), 30000);
	client_end(&other, 0);
	client_go(&member);
	client_end(&member, 0);
	ck_assert_msg(strcmp(theirs, "second 0 ran") == 0,
		      "the member's second guest, its first one ended: %s", theirs);
	ck_assert_msg(strcmp(line, "guest 0 ran") == 0,
		      "another member, while the first keeps two connections open: %s", line);
}
END_TEST

/* A connection slot is held until its helper has exited, a moment after
 * the connection closed (here, or in the test before): wait for it. */
static int open_when_a_slot_is_free(iso_conn **conn)
{
	int rc = -EAGAIN;

	for (int i = 0; i < 40 && rc == -EAGAIN; i++) {
		if (i > 0)
			sleep_ms(50);
		rc = iso_open(conn);
	}
	return rc;
}

/* Client: as many connections as the rule allows ('guests' + 1), then one
 * more; then one more again once one has closed. */
static int client_opens_connections(int out, int in)
{
	iso_conn *conn[3];
	int rc;

	(void)in;
	for (int i = 0; i < 2; i++)
		if ((rc = open_when_a_slot_is_free(&conn[i])) < 0)
			return client_error(out, "iso_open", rc);
	rc = iso_open(&conn[2]);
	dprintf(out, "third %d %s\n", rc, rc < 0 ? iso_last_error() : "opened");
	iso_close(conn[0]);
	if ((rc = open_when_a_slot_is_free(&conn[0])) < 0)
		return client_error(out, "iso_open once one has closed", rc);
	dprintf(out, "reopened\n");
	return 0;
}

/* A caller's connections (root helpers, not counted in
 * its RLIMIT_NPROC; in socket mode, taken from every caller's
 * MaxConnections) are bounded by its rule: 'guests' + 1. */
START_TEST(live_callers_connections_are_bounded_by_guests_plus_one)
{
	struct client c;
	char line[512];

	client_start_as(&c, client_opens_connections, H_MEMBER, H_GROUP);
	client_read(&c, line, sizeof(line), 30000);
	ck_assert_msg(strncmp(line, "third -11 ", 10) == 0 && strstr(line, "connection slots"),
		      "a third connection (guests 1): %s", line);
	client_read(&c, line, sizeof(line), 30000);
	client_end(&c, 0);
}
END_TEST

/* The rule of tests/policy.conf.in whose two pool uids the test makes an
 * account's, in a mount namespace of its own. */
#define A_CALLER 4000079u
#define A_FIRST T_POOL(1900101981u)
#define A_SECOND T_POOL(1900101982u)

/* Client: two sleepers on one connection (a pool of two: the second takes
 * the uid the first did not); for each, its uid or the refusal. A refused
 * connection is one line. */
static int client_spawns_two_sleepers(int out, int in)
{
	const char *argv[] = { T_PROBE, "sleep", "60", NULL };
	iso_guest *g;
	iso_conn *conn;
	int rc;

	(void)in;
	if ((rc = iso_open(&conn)) < 0) {
		dprintf(out, "no connection %d %s\n", rc, iso_last_error());
		return 0;
	}
	for (int i = 0; i < 2; i++)
		if ((rc = start(conn, argv, 0, -1, &g)) < 0)
			dprintf(out, "refused %d %s\n", rc, iso_last_error());
		else
			dprintf(out, "uid %u\n", (unsigned)iso_guest_uid(g));
	iso_close(conn);
	return 0;
}

/* `text` and `line` (if not NULL) as `copy`, rewritten in place: a bind
 * of it shows the new text. */
static void write_accounts(const char *copy, const char *text, const char *line)
{
	int fd = open(copy, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	if (line != NULL)
		ck_assert_int_eq(write(fd, line, strlen(line)), (ssize_t)strlen(line));
	close(fd);
}

/* Enumerating the account database when the policy is read would miss
 * the users of SSSD and LDAP, so the helper asks getpwuid() and getgrgid()
 * of each uid it leases:
 * a pool uid that is a user's, or a group's gid, is never leased (the
 * spawn is refused naming it, and logged as the administrator's error),
 * and one that is the pool's first uid, as which the guest's tree is
 * built, refuses the connection. The accounts are this test's only: its
 * own /etc/passwd and /etc/group, in a mount namespace of its own. */
START_TEST(live_pool_uid_that_is_an_account_is_never_leased)
{
	static const char *const files[] = { "/etc/passwd", "/etc/group" };
	static const char *const copies[] = { T_ROOT "/supervise-passwd",
					      T_ROOT "/supervise-group" };
	static char text[2][65536];
	char line[512], want[64], log[8192] = "", entry[2][128];
	struct client c;
	int sock;

	sock = private_dev_log();
	for (int f = 0; f < 2; f++) {
		ck_assert_int_ge(read_text(files[f], text[f], sizeof(text[f])), 0);
		write_accounts(copies[f], text[f], NULL);
		ck_assert_int_eq(mount(copies[f], files[f], NULL, MS_BIND, NULL), 0);
	}
	snprintf(entry[0], sizeof(entry[0]), "isospawn-acct:x:%u:%u::/nonexistent:"
		 "/usr/sbin/nologin\n", (unsigned)A_SECOND, (unsigned)A_SECOND);
	snprintf(entry[1], sizeof(entry[1]), "isospawn-acct:x:%u:\n", (unsigned)A_SECOND);
	snprintf(want, sizeof(want), "pool uid %u of the rule at ", (unsigned)A_SECOND);
	/* The second uid a user's, then a group's gid. */
	for (int f = 0; f < 2; f++) {
		int refused = 0;

		write_accounts(copies[f], text[f], entry[f]);
		write_accounts(copies[!f], text[!f], NULL);
		client_start_as(&c, client_spawns_two_sleepers, A_CALLER, 0);
		for (int i = 0; i < 2; i++) {
			client_read(&c, line, sizeof(line), 30000);
			if (strncmp(line, "refused -13 ", 12) == 0 && strstr(line, want) &&
			    strstr(line, f == 0 ? "is a user's uid" : "is a group's gid"))
				refused++;
			else
				ck_assert_msg(strncmp(line, "uid ", 4) == 0 &&
					      strtoul(line + 4, NULL, 10) == A_FIRST,
					      "client said: %s", line);
		}
		ck_assert_int_eq(client_end(&c, 0), 0);
		ck_assert_int_ge(refused, 1);
		/* Taken now: the socket queues 10 datagrams, and a helper
		 * whose log is full waits. */
		read_dev_log(sock, log + strlen(log), sizeof(log) - strlen(log));
	}
	/* The first uid a user's: no connection. */
	snprintf(entry[0], sizeof(entry[0]), "isospawn-acct:x:%u:%u::/nonexistent:"
		 "/usr/sbin/nologin\n", (unsigned)A_FIRST, (unsigned)A_FIRST);
	write_accounts(copies[0], text[0], entry[0]);
	write_accounts(copies[1], text[1], NULL);
	client_start_as(&c, client_spawns_two_sleepers, A_CALLER, 0);
	client_read(&c, line, sizeof(line), 30000);
	ck_assert_int_eq(client_end(&c, 0), 0);
	snprintf(want, sizeof(want), "pool uid %u of the rule at ", (unsigned)A_FIRST);
	ck_assert_msg(strncmp(line, "no connection -13 ", 18) == 0 && strstr(line, want) &&
		      strstr(line, "is a user's uid"), "client said: %s", line);
	close(sock);
	snprintf(want, sizeof(want), "pool-account uid=%u rule=", (unsigned)A_SECOND);
	ck_assert_msg(strstr(log, want) != NULL, "log: %s", log);
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
		      "next lease", (unsigned)uid);
	ck_assert_int_eq(unlink(planted), 0);
}
END_TEST

static Suite *supervise_suite(void)
{
	Suite *s = suite_create("live_supervise");
	TCase *many = tcase_create("many_guests");
	TCase *orphans = tcase_create("no_orphans");
	TCase *channel = tcase_create("channel");
	TCase *signals = tcase_create("signals");
	TCase *status = tcase_create("status");
	TCase *growth = tcase_create("no_growth");

	tcase_add_test(many, live_hundred_concurrent_guests_each_get_their_own_status);
	tcase_add_test(many, live_out_of_order_completion_is_matched_to_its_request);
	tcase_add_test(orphans, live_grandchild_of_an_exited_guest_does_not_survive);
	tcase_add_test(orphans, live_sigkill_of_client_leaves_no_guest_lease_or_helper);
	tcase_add_test(orphans, live_guests_die_with_a_killed_helper);
	tcase_add_test(orphans, live_forked_child_freeing_the_connection_leaves_the_parents_guests);
	tcase_add_test(orphans, live_close_waits_for_its_helper_not_a_child_that_took_its_pid);
	tcase_add_test(channel, live_channel_round_trip_keeps_message_boundaries);
	tcase_add_test(channel, live_channel_carries_a_message_of_exactly_iso_message_max);
	tcase_add_test(channel, live_channel_refuses_a_larger_send_with_emsgsize);
	tcase_add_test(channel, live_channel_message_larger_than_the_buffer_stays_for_a_larger_one);
	tcase_add_test(channel, live_stream_channel_carries_ten_megabytes_each_way);
	tcase_add_test(channel, live_channel_adds_only_isospawn_channel_fd_3_to_guest_env);
	tcase_add_test(channel, live_channel_recv_times_out_on_a_silent_guest);
	tcase_add_test(channel, live_channel_recv_reads_eof_after_the_guest_exits);
	tcase_add_test(channel, live_channel_guest_cannot_keep_its_end_open_by_sending_it);
	tcase_add_test(channel, live_channel_send_to_a_guest_that_does_not_read_need_not_wait);
	tcase_add_test(signals, live_kill_of_an_exited_guest_is_harmless);
	tcase_add_test(signals, live_sigterm_is_forwarded_through_the_reaper);
	tcase_add_test(signals, live_sigterm_right_after_spawn_is_not_lost);
	tcase_add_test(signals, live_guest_killing_itself_reports_signal_9);
	tcase_add_test(signals, live_sigstop_stops_the_guest_and_its_timeout_still_ends_it);
	tcase_add_test(signals, live_realtime_signals_reach_the_guest);
	tcase_add_test(status, live_status_reports_the_exit_code);
	tcase_add_test(status, live_status_reports_the_signal);
	tcase_add_test(status, live_missing_program_fails_at_exec_with_enoent);
	tcase_add_test(status, live_non_executable_file_fails_at_exec_with_eacces);
	tcase_add_test(status, live_wall_time_covers_the_guests_sleep);
	tcase_add_test(status, live_cpu_limit_kill_reports_user_cpu);
	tcase_add_test(status, live_status_reports_peak_rss);
	tcase_add_test(status, live_cli_status_json_writes_the_documented_fields);
	tcase_add_test(status, live_wait_with_timeout_returns_1_while_guest_runs);
#if ISO_SANITIZERS
	/* LeakSanitizer checks every allocation of the sanitized helper at its
	 * exit instead (tests/sanitizer_options.c, tests/install.c). */
	tcase_add_unless(growth, live_ten_thousand_spawns_leave_helper_fds_and_rss_unchanged,
			 "the test helper is built with AddressSanitizer: its quarantine "
			 "and shadow memory make VmRSS no measure of growth");
#else
	tcase_add_test(growth, live_ten_thousand_spawns_leave_helper_fds_and_rss_unchanged);
#endif
	tcase_add_test(status, live_reaper_made_ahead_carries_nothing_between_guests);
	tcase_add_test(status, live_reaper_factory_keeps_no_descriptor_of_the_first_guest);
	tcase_add_test(status, live_reaper_holds_the_program_once);
	tcase_add_test(status, live_pool_uid_that_is_an_account_is_never_leased);
	tcase_add_test(signals, live_stopped_helper_does_not_extend_a_guest_past_its_timeout);
	tcase_add_test(orphans, live_caller_cannot_stop_its_helper_and_leave_its_guests_behind);
	tcase_add_test(orphans, live_set_user_id_process_of_a_pool_uid_is_killed_before_its_next_guest);
	tcase_add_test(orphans, live_helper_refuses_a_caller_that_could_freeze_it_through_its_cgroup);
	tcase_add_test(orphans, live_helper_refuses_a_caller_that_could_freeze_it_through_a_v1_freezer);
	tcase_add_test(channel, live_channel_peer_credentials_name_the_guest);
	tcase_add_test(many, live_connection_with_four_times_nofile_live_guests_starts_each);
	tcase_add_test(many, live_guest_with_a_small_nofile_runs);
	tcase_add_test(signals, live_killed_guest_is_no_cpu_limit_whatever_the_ceiling);
	tcase_add_test(many, live_callers_live_guests_are_bounded_across_its_connections);
	tcase_add_test(many, live_ended_guests_uid_goes_back_so_one_member_cannot_hold_the_pool);
	tcase_add_test(many, live_callers_connections_are_bounded_by_guests_plus_one);
	tcase_set_timeout(many, 120);
	tcase_set_timeout(orphans, 60);
	tcase_set_timeout(channel, 60);
	tcase_set_timeout(signals, 60);
	tcase_set_timeout(status, 60);
	tcase_set_timeout(growth, 1000);
	suite_add_tcase(s, many);
	suite_add_tcase(s, orphans);
	suite_add_tcase(s, channel);
	suite_add_tcase(s, signals);
	suite_add_tcase(s, status);
	suite_add_tcase(s, growth);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	harness_setup();
	sr = srunner_create(supervise_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
