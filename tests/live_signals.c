/*
 * live_signals.c - signals through the real setuid helper: a kill of a
 * guest that has ended, SIGTERM, SIGSTOP and realtime signals forwarded
 * through the reaper, a guest that kills itself, and a killed guest never
 * taken for one its cpu limit ended.
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
		ck_assert_msg(!readable_within(out[0], 600),
			      "the guest still writes after SIGSTOP");
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
		ck_assert_msg(iso_wait(g, 5000) == 0, "round %d: SIGTERM lost, guest still running",
			      i);
		ck_assert_msg(
		    iso_guest_outcome(g) == ISO_OUTCOME_SIGNALED && iso_guest_code(g) == SIGTERM,
		    "round %d: outcome %d code %d", i, iso_guest_outcome(g), iso_guest_code(g));
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

static Suite *signals_suite(void)
{
	Suite *s = suite_create("live_signals");
	TCase *signals = tcase_create("signals");

	tcase_add_test(signals, live_kill_of_an_exited_guest_is_harmless);
	tcase_add_test(signals, live_sigterm_is_forwarded_through_the_reaper);
	tcase_add_test(signals, live_sigterm_right_after_spawn_is_not_lost);
	tcase_add_test(signals, live_guest_killing_itself_reports_signal_9);
	tcase_add_test(signals, live_sigstop_stops_the_guest_and_its_timeout_still_ends_it);
	tcase_add_test(signals, live_realtime_signals_reach_the_guest);
	tcase_add_test(signals, live_killed_guest_is_no_cpu_limit_whatever_the_ceiling);
	tcase_set_timeout(signals, 60);
	suite_add_tcase(s, signals);
	return s;
}

int main(void)
{
	return supervise_main(signals_suite);
}
