/*
 * live_wait.c - a caller's slots (its rule's 'guests'), through the real
 * setuid helper: a guest whose end was told never makes a later spawn
 * fail; a spawn beyond the slots is refused at once, or, if it asks to,
 * waits for a slot given back on any of the caller's connections, costing
 * its helper no CPU meanwhile, and is refused at its deadline saying how
 * long it waited; a helper stopped while a spawn waits leaves nothing.
 * Likewise for its connections ('guests' + 1): one beyond them is refused
 * at once, or waits for one to close, as one of at most as many waiting;
 * 40 runs of the CLI at once with --wait-slot under 'guests 32' all run.
 *
 * Each test drops to its caller at once, but the one that stops a helper:
 * only root can signal it, so the test stays root and forks the caller.
 * The callers' rules (tests/policy.conf.in) are this file's alone, so the
 * slots counted here are ours.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

#define W_MANY 4000080u /* guests 32 */
#define W_ONE 4000081u /* guests 1 */
#define W_GUESTS 32

#define WAIT_LONG_MS 60000 /* a wait no test should reach */

static uint64_t ms_since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)(t.tv_sec - t0->tv_sec) * 1000 +
	       (uint64_t)((t.tv_nsec - t0->tv_nsec) / 1000000);
}

/* Spawn `probe how arg` on conn, waiting up to wait_ms for a slot (0: not
 * at all). Returns iso_spawn()'s result. */
static int spawn_probe(iso_conn *conn, const char *how, const char *arg, uint64_t wait_ms,
		       iso_guest **g)
{
	const char *argv[] = { T_PROBE, how, arg, NULL };
	iso_spec *spec = NULL;
	int rc = iso_spec_new(&spec);

	if (rc == 0)
		rc = iso_spec_set_program(spec, T_PROBE);
	if (rc == 0)
		rc = iso_spec_set_argv(spec, argv);
	if (rc == 0)
		rc = iso_spec_set_wait_slot(spec, wait_ms);
	if (rc == 0)
		rc = iso_spawn(conn, spec, g);
	iso_spec_free(spec);
	return rc;
}

static iso_guest *must_spawn(iso_conn *conn, const char *how, const char *arg)
{
	iso_guest *g = NULL;
	int rc = spawn_probe(conn, how, arg, 0, &g);

	ck_assert_msg(rc == 0, "spawn %s %s: %s (%s)", how, arg, iso_strerror(rc),
		      iso_last_error());
	return g;
}

/* End g (killed) and free it: its slot is given back. */
static void end_guest(iso_guest *g)
{
	ck_assert_int_eq(iso_kill(g, SIGKILL), 0);
	ck_assert_int_eq(iso_wait(g, 10000), 0);
	iso_guest_free(g);
}

/* ------------------------------------------------------------------ */
/* Many spawns at once                                                  */

/* One connection of a thread: its spawns, each of which may wait. */
struct worker {
	pthread_t thread;
	iso_conn *conn;
	unsigned guests; /* spawned on it at once, then waited for */
	const char *how, *arg; /* the probe's */
	uint64_t wait_ms;
	unsigned *left; /* shared: spawns still to make (NULL: guests) */
	pthread_mutex_t *lock;
	unsigned spawned, refused, failed;
	char error[512];
};

/* A spawn and its end, counted: refused (EAGAIN), failed (anything
 * else, or a guest that did not exit 0). */
static void count(struct worker *w, int rc, iso_guest *g)
{
	if (rc == -EAGAIN)
		w->refused++;
	else if (rc < 0 || iso_wait(g, 30000) != 0 || iso_guest_exit_code(g) != 0)
		w->failed++;
	else
		w->spawned++;
	if (rc < 0 && w->error[0] == '\0')
		snprintf(w->error, sizeof(w->error), "%s", iso_last_error());
	iso_guest_free(g);
}

/* Takes one of the spawns left, if any. */
static int take_one(struct worker *w)
{
	int more;

	pthread_mutex_lock(w->lock);
	more = *w->left > 0;
	*w->left -= (unsigned)more;
	pthread_mutex_unlock(w->lock);
	return more;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	iso_guest *g[8] = { NULL };
	int rc[8];

	if (w->left != NULL) {
		/* A service's run(): spawn, wait for the end, again. */
		while (take_one(w)) {
			rc[0] = spawn_probe(w->conn, w->how, w->arg, w->wait_ms, &g[0]);
			count(w, rc[0], g[0]);
		}
		return NULL;
	}
	for (unsigned i = 0; i < w->guests; i++)
		rc[i] = spawn_probe(w->conn, w->how, w->arg, w->wait_ms, &g[i]);
	for (unsigned i = 0; i < w->guests; i++)
		count(w, rc[i], rc[i] == 0 ? g[i] : NULL);
	return NULL;
}

/* Run n workers, each on a connection of its own, to their end; the sums
 * of what they counted in *total. */
static void run_workers(struct worker *w, size_t n, struct worker *total)
{
	memset(total, 0, sizeof(*total));
	for (size_t i = 0; i < n; i++) {
		w[i].conn = open_conn();
		ck_assert_int_eq(pthread_create(&w[i].thread, NULL, work, &w[i]), 0);
	}
	for (size_t i = 0; i < n; i++) {
		ck_assert_int_eq(pthread_join(w[i].thread, NULL), 0);
		iso_close(w[i].conn);
		total->spawned += w[i].spawned;
		total->refused += w[i].refused;
		total->failed += w[i].failed;
		if (total->error[0] == '\0')
			memcpy(total->error, w[i].error, sizeof(total->error));
	}
}

/* 60 guests of a second each asked for at once, by 20 connections of
 * three, with 'guests 32': every one starts, the later ones as the
 * earlier end (so the whole takes two seconds at least); none refused. */
START_TEST(live_sixty_concurrent_spawns_that_wait_all_start_within_guests_32)
{
	struct worker w[20], total;
	struct timespec t0;
	uint64_t ms;

	become(W_MANY);
	for (size_t i = 0; i < 20; i++)
		w[i] = (struct worker){
			.guests = 3, .how = "sleep", .arg = "1", .wait_ms = WAIT_LONG_MS
		};
	clock_gettime(CLOCK_MONOTONIC, &t0);
	run_workers(w, 20, &total);
	ms = ms_since(&t0);
	ck_assert_msg(total.spawned == 60 && total.refused == 0 && total.failed == 0,
		      "%u ran, %u refused, %u failed (%s)", total.spawned, total.refused,
		      total.failed, total.error);
	ck_assert_msg(ms >= 1900, "60 guests of a second in %llu ms: more than 32 ran at once",
		      (unsigned long long)ms);
}
END_TEST

/* Without a wait, the spawn beyond 'guests 32' is refused at once, naming
 * the rule's 'guests'. */
START_TEST(live_spawn_beyond_guests_32_without_a_wait_is_refused)
{
	iso_guest *g[W_GUESTS + 1];
	iso_conn *conn;
	int rc;

	become(W_MANY);
	conn = open_conn();
	for (int i = 0; i < W_GUESTS; i++)
		g[i] = must_spawn(conn, "sleep", "60");
	rc = spawn_probe(conn, "exit", "0", 0, &g[W_GUESTS]);
	ck_assert_msg(rc == -EAGAIN, "the 33rd: %d (%s)", rc, iso_last_error());
	ck_assert_msg(strstr(iso_last_error(), "'guests'") != NULL, "%s", iso_last_error());
	for (int i = 0; i < W_GUESTS; i++)
		end_guest(g[i]);
	iso_close(conn);
}
END_TEST

/* 200 spawns from 24 threads, each its own connection, each waiting for
 * its guest's end before the next, with 'guests 32' and no wait for a
 * slot: none refused, though another connection ran 16 guests at once
 * before and stays open (the uids of ended guests are not held for it). */
START_TEST(live_two_hundred_spawns_from_24_threads_each_waiting_for_its_guest_see_no_refusal)
{
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	struct worker w[24], total;
	unsigned left = 200;
	iso_guest *g[16];
	iso_conn *conn;

	become(W_MANY);
	conn = open_conn();
	for (int i = 0; i < 16; i++)
		g[i] = must_spawn(conn, "sleep", "1");
	for (int i = 0; i < 16; i++) {
		ck_assert_int_eq(iso_wait(g[i], 10000), 0);
		iso_guest_free(g[i]);
	}
	for (size_t i = 0; i < 24; i++)
		w[i] = (struct worker){ .how = "exit", .arg = "0", .left = &left, .lock = &lock };
	run_workers(w, 24, &total);
	ck_assert_msg(total.spawned == 200 && total.refused == 0 && total.failed == 0,
		      "%u ran, %u refused, %u failed (%s)", total.spawned, total.refused,
		      total.failed, total.error);
	iso_close(conn);
}
END_TEST

/* ------------------------------------------------------------------ */
/* One slot: waits that end                                            */

/* A spawn of its own thread, on a connection of its own, that waits. */
struct waiter {
	pthread_t thread;
	iso_conn *conn;
	uint64_t wait_ms;
	int rc;
	uint64_t took_ms;
	struct timespec answered; /* when iso_spawn() returned */
	char error[512];
};

static void *wait_for_a_slot(void *arg)
{
	struct waiter *w = arg;
	iso_guest *g = NULL;
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	w->rc = spawn_probe(w->conn, "exit", "0", w->wait_ms, &g);
	clock_gettime(CLOCK_MONOTONIC, &w->answered);
	w->took_ms = ms_since(&t0);
	snprintf(w->error, sizeof(w->error), "%s", iso_last_error());
	if (w->rc == 0)
		w->rc = iso_wait(g, 10000) == 0 ? -iso_guest_exit_code(g) : -ETIMEDOUT;
	iso_guest_free(g);
	return NULL;
}

/* A helper this process started, other than `not` (0: any); 0 if none. */
struct helper_search {
	pid_t not, found;
};

static int is_my_helper(const struct proc_info *p, void *arg)
{
	struct helper_search *s = arg;

	if (p->ppid != getpid() || strcmp(p->name, "isospawn-helper") != 0 || p->pid == s->not )
		return 0;
	s->found = p->pid;
	return 1;
}

static pid_t my_helper(pid_t not )
{
	struct helper_search s = { not, 0 };

	each_process(is_my_helper, &s);
	return s.found;
}

/* Nanoseconds process pid has run (/proc/PID/schedstat, which anyone may
 * read: the helper is root's and not dumpable). */
static uint64_t cpu_ns(pid_t pid)
{
	char path[64], buf[128];
	unsigned long long ns = 0;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	ck_assert_msg(read_text(path, buf, sizeof(buf)) > 0 && sscanf(buf, "%llu", &ns) == 1,
		      "%s unreadable", path);
	return ns;
}

/* A connection of the one-slot caller, whose two connections the test
 * before may still hold: a closed connection's slot comes back when its
 * helper has exited, which takes a moment after iso_close(). */
static iso_conn *open_settled(void)
{
	iso_conn *conn;
	int rc = iso_open_wait(&conn, 10000);

	ck_assert_msg(rc == 0, "iso_open_wait: %s", iso_last_error());
	return conn;
}

/* The one slot held by a sleeper on conn A; the spawn on B waits for 1.5 s
 * and is refused then with EAGAIN, its reason saying how long it waited;
 * meanwhile B's helper runs for less than 20 ms of CPU in a second
 * (asleep, not polling). */
START_TEST(live_wait_that_times_out_is_refused_and_its_helper_spends_no_cpu)
{
	struct waiter b = { .wait_ms = 1500 };
	iso_conn *a;
	iso_guest *held;
	uint64_t before, after;
	pid_t helper;

	become(W_ONE);
	a = open_settled();
	held = must_spawn(a, "sleep", "60");
	helper = my_helper(0);
	b.conn = open_settled();
	helper = my_helper(helper);
	ck_assert_msg(helper > 0, "B's helper not found");
	ck_assert_int_eq(pthread_create(&b.thread, NULL, wait_for_a_slot, &b), 0);
	usleep(250000);
	before = cpu_ns(helper);
	usleep(1000000);
	after = cpu_ns(helper);
	ck_assert_int_eq(pthread_join(b.thread, NULL), 0);
	ck_assert_msg(after - before < 20000000, "the waiting helper ran %llu us in a second",
		      (unsigned long long)((after - before) / 1000));
	ck_assert_msg(b.rc == -EAGAIN, "the wait ended with %d (%s)", b.rc, b.error);
	ck_assert_msg(b.took_ms >= 1500 && b.took_ms < 1500 + 2000, "refused after %llu ms",
		      (unsigned long long)b.took_ms);
	ck_assert_msg(strstr(b.error, "ms the spawn waited") && strstr(b.error, "'guests'"), "%s",
		      b.error);
	end_guest(held);
	iso_close(b.conn);
	iso_close(a);
}
END_TEST

/* The one slot held by a sleeper on conn A; a spawn on B waits, and
 * starts as soon as A's guest ends: B's helper learns of the slot A's
 * gave back, though nothing happened on its own connection. */
START_TEST(live_slot_given_back_on_another_connection_wakes_a_waiting_spawn)
{
	struct waiter b = { .wait_ms = WAIT_LONG_MS };
	struct timespec t0;
	iso_conn *a;
	iso_guest *held;

	become(W_ONE);
	a = open_settled();
	held = must_spawn(a, "sleep", "60");
	b.conn = open_settled();
	ck_assert_int_eq(pthread_create(&b.thread, NULL, wait_for_a_slot, &b), 0);
	usleep(300000);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	end_guest(held);
	ck_assert_int_eq(pthread_join(b.thread, NULL), 0);
	ck_assert_msg(b.rc == 0, "the waiting spawn: %d (%s)", b.rc, b.error);
	/* Answered after the slot was given back, and soon after. */
	ck_assert_msg(b.answered.tv_sec > t0.tv_sec ||
			  (b.answered.tv_sec == t0.tv_sec && b.answered.tv_nsec >= t0.tv_nsec),
		      "started %llu ms after it asked, before the slot was given back",
		      (unsigned long long)b.took_ms);
	ck_assert_msg(ms_since(&t0) < 5000, "started %llu ms after the slot was given back",
		      (unsigned long long)ms_since(&t0));
	iso_close(b.conn);
	iso_close(a);
}
END_TEST

/* A guest whose end was told never makes a later spawn fail: with one
 * slot, a guest run to its end on A (still open) leaves the slot to B at
 * once, and A's next guest after B's. */
START_TEST(live_guest_whose_end_was_told_leaves_its_slot_to_the_next_spawn)
{
	iso_conn *a, *b;

	become(W_ONE);
	a = open_settled();
	b = open_settled();
	for (int round = 0; round < 3; round++) {
		iso_guest *g = must_spawn(round % 2 ? b : a, "exit", "0");

		ck_assert_int_eq(iso_wait(g, 10000), 0);
		iso_guest_free(g);
	}
	iso_close(a);
	iso_close(b);
}
END_TEST

/* ------------------------------------------------------------------ */
/* The helper stops while a spawn waits                                 */

/* The caller's side: a sleeper holds the one slot on A; B's pid goes to
 * the test, then B's spawn waits; what it returned comes back. */
static void stopped_while_waiting(int out)
{
	struct waiter b = { .wait_ms = WAIT_LONG_MS };
	iso_conn *a;
	iso_guest *held = NULL;
	pid_t helper = 0;

	become(W_ONE);
	if (iso_open(&a) == 0 && spawn_probe(a, "sleep", "60", 0, &held) == 0)
		helper = my_helper(0);
	if (helper > 0 && iso_open(&b.conn) == 0)
		helper = my_helper(helper);
	else
		helper = 0;
	(void)!write(out, &helper, sizeof(helper));
	if (helper == 0)
		_exit(1);
	wait_for_a_slot(&b);
	(void)!write(out, &b.rc, sizeof(b.rc));
	_exit(0);
}

/* Exited (a zombie, or gone) within two seconds. */
static int exits_soon(pid_t pid)
{
	char path[64], buf[512];
	const char *state;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (int i = 0; i < 200; i++, usleep(10000))
		if (read_text(path, buf, sizeof(buf)) < 0 ||
		    ((state = strrchr(buf, ')')) != NULL && state[1] == ' ' && state[2] == 'Z'))
			return 1;
	return 0;
}

/* As root, fork a caller running `caller`, which writes its waiting
 * helper's pid (0: none found) to `out`, then its call's result; stop
 * (SIGTERM) that helper, check that it exits at once and that the caller
 * ends; the caller's result. */
static int stop_waiting_helper(void (*caller)(int out))
{
	int pipefd[2], rc = 0, status;
	pid_t client, helper = 0;

	ck_assert_int_eq(pipe(pipefd), 0);
	client = fork();
	ck_assert_int_ge(client, 0);
	if (client == 0) {
		close(pipefd[0]);
		caller(pipefd[1]);
	}
	close(pipefd[1]);
	ck_assert_int_eq(read(pipefd[0], &helper, sizeof(helper)), sizeof(helper));
	ck_assert_msg(helper > 0, "the caller could not set up its wait or find its helper");
	usleep(300000);
	ck_assert_int_eq(kill(helper, SIGTERM), 0);
	ck_assert_int_eq(read(pipefd[0], &rc, sizeof(rc)), sizeof(rc));
	ck_assert_msg(exits_soon(helper), "the stopped helper did not exit");
	ck_assert_int_eq(waitpid(client, &status, 0), client);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(pipefd[0]);
	return rc;
}

/* Root stops (SIGTERM) the helper of a connection whose spawn waits: the
 * spawn ends with EPIPE (the helper is gone) and the helper exits at once,
 * with nothing to give back (a waiting spawn holds no slot and no uid). */
START_TEST(live_helper_stopped_while_a_spawn_waits_exits_and_leaves_nothing)
{
	int rc = stop_waiting_helper(stopped_while_waiting);

	ck_assert_msg(rc == -EPIPE, "the waiting spawn ended with %d", rc);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Waiting for a connection ('guests' + 1 of them: 2 with 'guests 1')  */

/* iso_open_wait() in a thread of its own. */
struct opener {
	pthread_t thread;
	uint64_t wait_ms;
	iso_conn *conn;
	int rc;
	uint64_t took_ms;
	char error[512];
};

static void *open_waiting(void *arg)
{
	struct opener *o = arg;
	struct timespec t0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	o->rc = iso_open_wait(&o->conn, o->wait_ms);
	o->took_ms = ms_since(&t0);
	snprintf(o->error, sizeof(o->error), "%s", iso_last_error());
	return NULL;
}

static void start_opener(struct opener *o, uint64_t wait_ms)
{
	*o = (struct opener){ .wait_ms = wait_ms, .rc = 1 };
	ck_assert_int_eq(pthread_create(&o->thread, NULL, open_waiting, o), 0);
}

/* A helper of this process's that is none of the n in `known`; 0 if none. */
struct other_helper {
	const pid_t *known;
	size_t n;
	pid_t found;
};

static int is_other_helper(const struct proc_info *p, void *arg)
{
	struct other_helper *s = arg;

	if (p->ppid != getpid() || strcmp(p->name, "isospawn-helper") != 0)
		return 0;
	for (size_t i = 0; i < s->n; i++)
		if (s->known[i] == p->pid)
			return 0;
	s->found = p->pid;
	return 1;
}

static pid_t other_helper(const pid_t *known, size_t n)
{
	struct other_helper s = { known, n, 0 };

	each_process(is_other_helper, &s);
	return s.found;
}

/* At its two connections, a caller that does not wait is refused at
 * once, with EAGAIN and a reason naming its connections. */
START_TEST(live_connection_beyond_guests_plus_one_without_a_wait_is_refused_at_once)
{
	iso_conn *a, *b, *c = NULL;
	struct timespec t0;
	int rc;

	become(W_ONE);
	a = open_settled();
	b = open_settled();
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = iso_open(&c);
	ck_assert_msg(rc == -EAGAIN, "the third connection: %d (%s)", rc, iso_last_error());
	ck_assert_msg(ms_since(&t0) < 1000, "refused after %llu ms",
		      (unsigned long long)ms_since(&t0));
	ck_assert_msg(strstr(iso_last_error(), "connection") != NULL, "%s", iso_last_error());
	ck_assert_ptr_null(c);
	iso_close(b);
	iso_close(a);
}
END_TEST

/* At its two connections, a caller that waits gets its third as soon as
 * one closes, and starts a guest on it; meanwhile the waiting helper
 * spends no CPU (asleep, not polling). */
START_TEST(live_connection_that_waits_is_opened_when_another_closes)
{
	struct opener c;
	struct timespec t0;
	iso_conn *a, *b;
	iso_guest *g;
	pid_t known[2], waiting;
	uint64_t before, after;

	become(W_ONE);
	a = open_settled();
	known[0] = my_helper(0);
	b = open_settled();
	known[1] = my_helper(known[0]);
	start_opener(&c, WAIT_LONG_MS);
	usleep(300000);
	waiting = other_helper(known, 2);
	ck_assert_msg(waiting > 0, "the waiting connection's helper not found");
	before = cpu_ns(waiting);
	usleep(1000000);
	after = cpu_ns(waiting);
	ck_assert_msg(after - before < 20000000, "the waiting helper ran %llu us in a second",
		      (unsigned long long)((after - before) / 1000));
	ck_assert_msg(c.rc == 1, "the waiting open returned %d before a connection closed (%s)",
		      c.rc, c.error);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	iso_close(a);
	ck_assert_int_eq(pthread_join(c.thread, NULL), 0);
	ck_assert_msg(c.rc == 0, "the waiting open: %d (%s)", c.rc, c.error);
	ck_assert_msg(ms_since(&t0) < 5000, "opened %llu ms after a connection closed",
		      (unsigned long long)ms_since(&t0));
	g = must_spawn(c.conn, "exit", "0");
	ck_assert_int_eq(iso_wait(g, 10000), 0);
	ck_assert_int_eq(iso_guest_exit_code(g), 0);
	iso_guest_free(g);
	iso_close(c.conn);
	iso_close(b);
}
END_TEST

/* A wait for a connection that none frees ends at its deadline with
 * EAGAIN, saying how long it waited; the caller may open one afterwards
 * as soon as one closes (the wait held nothing). */
START_TEST(live_connection_wait_times_out_with_a_clear_error)
{
	struct opener c;
	iso_conn *a, *b;

	become(W_ONE);
	a = open_settled();
	b = open_settled();
	start_opener(&c, 1500);
	ck_assert_int_eq(pthread_join(c.thread, NULL), 0);
	ck_assert_msg(c.rc == -EAGAIN, "the wait ended with %d (%s)", c.rc, c.error);
	ck_assert_msg(c.took_ms >= 1500 && c.took_ms < 1500 + 2000, "refused after %llu ms",
		      (unsigned long long)c.took_ms);
	ck_assert_msg(strstr(c.error, "connection slots") && strstr(c.error, "1500 ms it waited"),
		      "%s", c.error);
	iso_close(a);
	a = open_settled();
	iso_close(a);
	iso_close(b);
}
END_TEST

/* At most as many connections of a caller's wait as it may have open:
 * with two open and two waiting, a fifth is refused at once, even though
 * it asks to wait; the two waiting then get theirs as the open ones close. */
START_TEST(live_waiting_connections_are_bounded_by_guests_plus_one)
{
	struct opener w[2], d;
	struct timespec t0;
	iso_conn *a, *b;

	become(W_ONE);
	a = open_settled();
	b = open_settled();
	start_opener(&w[0], WAIT_LONG_MS);
	start_opener(&w[1], WAIT_LONG_MS);
	usleep(500000);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	start_opener(&d, 3000);
	ck_assert_int_eq(pthread_join(d.thread, NULL), 0);
	ck_assert_msg(d.rc == -EAGAIN, "the fifth connection: %d (%s)", d.rc, d.error);
	ck_assert_msg(ms_since(&t0) < 1000, "refused after %llu ms",
		      (unsigned long long)ms_since(&t0));
	ck_assert_msg(strstr(d.error, "wait for one") != NULL, "%s", d.error);
	ck_assert_msg(w[0].rc == 1 && w[1].rc == 1, "a waiting open ended: %d, %d", w[0].rc,
		      w[1].rc);
	iso_close(a);
	iso_close(b);
	for (int i = 0; i < 2; i++) {
		ck_assert_int_eq(pthread_join(w[i].thread, NULL), 0);
		ck_assert_msg(w[i].rc == 0, "waiting open %d: %d (%s)", i, w[i].rc, w[i].error);
		iso_close(w[i].conn);
	}
}
END_TEST

/* The caller's side: two connections held, the pid of the helper of a
 * third that waits goes to the test, then what iso_open_wait() returned. */
static void stopped_while_waiting_for_a_connection(int out)
{
	struct opener c;
	iso_conn *a = NULL, *b = NULL;
	pid_t known[2] = { 0, 0 }, helper = 0;

	become(W_ONE);
	if (iso_open(&a) == 0 && (known[0] = my_helper(0)) > 0 && iso_open(&b) == 0 &&
	    (known[1] = my_helper(known[0])) > 0) {
		start_opener(&c, WAIT_LONG_MS);
		usleep(300000);
		helper = other_helper(known, 2);
	}
	(void)!write(out, &helper, sizeof(helper));
	if (helper == 0)
		_exit(1);
	pthread_join(c.thread, NULL);
	(void)!write(out, &c.rc, sizeof(c.rc));
	_exit(0);
}

/* Root stops (SIGTERM) a helper that waits for a connection: it exits at
 * once, and the open fails rather than hang. */
START_TEST(live_helper_stopped_while_a_connection_waits_exits)
{
	int rc = stop_waiting_helper(stopped_while_waiting_for_a_connection);

	ck_assert_msg(rc < 0, "the waiting open returned %d", rc);
}
END_TEST

/* 40 runs of the CLI at once, each a connection, each a guest of a
 * second, with --wait-slot under 'guests 32' (33 connections): every one
 * exits 0, the later ones as the earlier end. Prints how long it took. */
START_TEST(live_forty_concurrent_cli_runs_that_wait_all_exit_0_with_guests_32)
{
	const char *argv[] = { T_CLI, "--wait-slot", "60", "--", T_PROBE, "sleep", "1", NULL };
	const char *envp[] = { "LD_LIBRARY_PATH=" T_LIB, t_helper_env, NULL };
	int errfd = memfd_create("cli-stderr", MFD_CLOEXEC), ok = 0, status;
	posix_spawn_file_actions_t fa;
	pid_t pid[40];
	struct timespec t0;
	char err[4096] = "";
	uint64_t ms;

	become(W_MANY);
	ck_assert_int_ge(errfd, 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, errfd, 2);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < 40; i++)
		ck_assert_int_eq(posix_spawn(&pid[i], T_CLI, &fa, NULL, (char *const *)argv,
					     (char *const *)envp),
				 0);
	for (int i = 0; i < 40; i++) {
		ck_assert_int_eq(waitpid(pid[i], &status, 0), pid[i]);
		ok += WIFEXITED(status) && WEXITSTATUS(status) == 0;
	}
	ms = ms_since(&t0);
	posix_spawn_file_actions_destroy(&fa);
	(void)!pread(errfd, err, sizeof(err) - 1, 0);
	close(errfd);
	fprintf(stderr, "40 CLI runs of a 1 s guest, guests 32: %d exited 0 in %llu ms\n", ok,
		(unsigned long long)ms);
	ck_assert_msg(ok == 40, "%d of 40 exited 0: %s", ok, err);
	ck_assert_msg(ms >= 1900, "40 guests of a second in %llu ms: more than 32 ran at once",
		      (unsigned long long)ms);
}
END_TEST

static Suite *wait_suite(void)
{
	Suite *s = suite_create("live_wait");
	TCase *many = tcase_create("many_spawns");
	TCase *one = tcase_create("one_slot");
	TCase *conn = tcase_create("connections");

	tcase_add_test(many, live_sixty_concurrent_spawns_that_wait_all_start_within_guests_32);
	tcase_add_test(many, live_spawn_beyond_guests_32_without_a_wait_is_refused);
	tcase_add_test(
	    many,
	    live_two_hundred_spawns_from_24_threads_each_waiting_for_its_guest_see_no_refusal);
	tcase_add_test(one, live_wait_that_times_out_is_refused_and_its_helper_spends_no_cpu);
	tcase_add_test(one, live_slot_given_back_on_another_connection_wakes_a_waiting_spawn);
	tcase_add_test(one, live_guest_whose_end_was_told_leaves_its_slot_to_the_next_spawn);
	tcase_add_test(one, live_helper_stopped_while_a_spawn_waits_exits_and_leaves_nothing);
	tcase_add_test(conn,
		       live_connection_beyond_guests_plus_one_without_a_wait_is_refused_at_once);
	tcase_add_test(conn, live_connection_that_waits_is_opened_when_another_closes);
	tcase_add_test(conn, live_connection_wait_times_out_with_a_clear_error);
	tcase_add_test(conn, live_waiting_connections_are_bounded_by_guests_plus_one);
	tcase_add_test(conn, live_helper_stopped_while_a_connection_waits_exits);
	tcase_add_test(many, live_forty_concurrent_cli_runs_that_wait_all_exit_0_with_guests_32);
	tcase_set_timeout(many, 120);
	tcase_set_timeout(one, 60);
	tcase_set_timeout(conn, 60);
	suite_add_tcase(s, many);
	suite_add_tcase(s, one);
	suite_add_tcase(s, conn);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	harness_setup();
	sr = srunner_create(wait_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
