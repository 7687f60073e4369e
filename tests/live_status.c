/*
 * live_status.c - a guest's precise status through the real setuid
 * helper: exit code, signal, a failed exec's errno, wall and CPU time,
 * peak RSS, the CLI's --status-json, and iso_wait() with a timeout.
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
	"outcome",       "exit_code",   "code",           "signal",  "stage",  "errno",
	"reason",        "limit",       "wall_us",        "user_us", "sys_us", "maxrss_kib",
	"cgroup_cpu_us", "memory_peak", "limits_reached", "uid",     "notes",
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
	for (int i = 8; i <= 11; i++)
		ck_assert_msg(is_number(v[i]), "%s: %s", json_keys[i], v[i]);
	ck_assert_msg(strtoull(v[11], NULL, 10) > 0, "maxrss_kib %s", v[11]);
	/* The whole guest's, from its cgroup where it has one
	 * (tests/live_cgroup.c checks them), else null. */
	for (int i = 12; i <= 13; i++)
		ck_assert_msg(is_number(v[i]) || strcmp(v[i], "null") == 0, "%s: %s", json_keys[i],
			      v[i]);
	ck_assert_str_eq(v[14], "[]");
	ck_assert_uint_ge(strtoul(v[15], NULL, 10), S_POOL_FIRST);
	ck_assert_uint_le(strtoul(v[15], NULL, 10), S_POOL_LAST);
	ck_assert_msg(v[16][0] == '"', "notes: %s", v[16]);

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

static Suite *status_suite(void)
{
	Suite *s = suite_create("live_status");
	TCase *status = tcase_create("status");

	tcase_add_test(status, live_status_reports_the_exit_code);
	tcase_add_test(status, live_status_reports_the_signal);
	tcase_add_test(status, live_missing_program_fails_at_exec_with_enoent);
	tcase_add_test(status, live_non_executable_file_fails_at_exec_with_eacces);
	tcase_add_test(status, live_wall_time_covers_the_guests_sleep);
	tcase_add_test(status, live_cpu_limit_kill_reports_user_cpu);
	tcase_add_test(status, live_status_reports_peak_rss);
	tcase_add_test(status, live_cli_status_json_writes_the_documented_fields);
	tcase_add_test(status, live_wait_with_timeout_returns_1_while_guest_runs);
	tcase_set_timeout(status, 60);
	suite_add_tcase(s, status);
	return s;
}

int main(void)
{
	return supervise_main(status_suite);
}
