/*
 * live_runs.c - two test runs at once do not meet: each has its own root
 * (its files, under the path compiled into the test helper) and its own
 * pools (its uids). See tests/install.h.
 *
 * The check forks two runs, A and B, each of which installs the test
 * helper as every live test program does (test_install()). A starts a
 * guest that sleeps; while it sleeps, B starts one of its own from the
 * same rule, whose pool holds a single uid. Were the pools shared, B would
 * lease A's uid and its sweep would kill A's guest; were the roots shared,
 * each run would read the other's marker file. Neither may happen, and
 * nothing of either run may appear on the host.
 *
 * A run is a plain forked process (it never calls Check): it reports one
 * line at a time through a pipe, and the check asserts on the lines.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "install.h"
#include "isospawn.h"

#define RUNS_CALLER 4000040u /* tests/policy.conf.in: a pool of one uid */
#define MARKER T_ROOT "/run-marker"

/* Read one line from fd (blocking), without its newline. */
static void read_line(int fd, char *buf, size_t size)
{
	size_t n = 0;
	char c;

	while (n + 1 < size && read(fd, &c, 1) == 1 && c != '\n')
		buf[n++] = c;
	buf[n] = '\0';
}

/* As the caller, in a child of the run: spawn argv, report its uid
 * ("started UID"), then how it ended ("ended OUTCOME CODE"). */
static void client(const char *const *argv, int report, int hold)
{
	iso_conn *conn = NULL;
	iso_spec *spec = NULL;
	iso_guest *g = NULL;
	char line[8];

	if (setgroups(0, NULL) < 0 || setresgid(RUNS_CALLER, RUNS_CALLER, RUNS_CALLER) < 0 ||
	    setresuid(RUNS_CALLER, RUNS_CALLER, RUNS_CALLER) < 0) {
		dprintf(report, "error: become %u: %s\n", RUNS_CALLER, strerror(errno));
		_exit(1);
	}
	setenv("ISOSPAWN_HELPER", T_HELPER, 1);
	if (iso_open(&conn) < 0 || iso_spec_new(&spec) < 0 ||
	    iso_spec_set_program(spec, argv[0]) < 0 || iso_spec_set_argv(spec, argv) < 0 ||
	    iso_spawn(conn, spec, &g) < 0) {
		dprintf(report, "error: spawn: %s\n", iso_last_error());
		_exit(1);
	}
	dprintf(report, "started %u\n", (unsigned)iso_guest_uid(g));
	if (hold >= 0) /* keep the guest until told to wait for it */
		read_line(hold, line, sizeof(line));
	if (iso_wait(g, -1) < 0) {
		dprintf(report, "error: wait: %s\n", iso_last_error());
		_exit(1);
	}
	dprintf(report, "ended %d %d\n", (int)iso_guest_outcome(g), iso_guest_code(g));
	iso_guest_free(g);
	iso_spec_free(spec);
	iso_close(conn);
	_exit(0);
}

/* One run: its own root and pools, a marker, then a guest. Exits (running
 * test_install()'s cleanup) when its client is done. */
static void run(const char *name, const char *const *argv, int report, int go, int hold)
{
	char line[64];
	int status;
	pid_t pid;
	FILE *f;

	test_install();
	f = fopen(MARKER, "w");
	if (!f || fprintf(f, "%s\n", name) < 0 || fclose(f) != 0) {
		dprintf(report, "error: %s: %s\n", MARKER, strerror(errno));
		exit(1);
	}
	dprintf(report, "ready %u\n", (unsigned)t_pool_delta);
	read_line(go, line, sizeof(line));
	f = fopen(MARKER, "r");
	if (!f || !fgets(line, sizeof(line), f))
		snprintf(line, sizeof(line), "unreadable\n");
	if (f)
		fclose(f);
	dprintf(report, "marker %s", line);
	pid = fork();
	if (pid == 0)
		client(argv, report, hold);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}

struct run_proc {
	pid_t pid;
	int report, go, hold; /* our ends */
};

static void start_run(struct run_proc *r, const char *name, const char *const *argv)
{
	int report[2], go[2], hold[2];

	ck_assert_int_eq(pipe2(report, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(go, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(hold, O_CLOEXEC), 0);
	r->pid = fork();
	ck_assert_int_ge(r->pid, 0);
	if (r->pid == 0) {
		close(report[0]);
		close(go[1]);
		close(hold[1]);
		run(name, argv, report[1], go[0], hold[0]);
	}
	close(report[1]);
	close(go[0]);
	close(hold[0]);
	r->report = report[0];
	r->go = go[1];
	r->hold = hold[1];
}

static void expect(struct run_proc *r, const char *name, const char *prefix, char *line,
		   size_t size)
{
	read_line(r->report, line, size);
	ck_assert_msg(strncmp(line, prefix, strlen(prefix)) == 0,
		      "run %s: expected \"%s...\", got \"%s\"", name, prefix, line);
}

static int finish(struct run_proc *r)
{
	int status;

	close(r->go);
	close(r->hold);
	close(r->report);
	ck_assert_int_eq(waitpid(r->pid, &status, 0), r->pid);
	return status;
}

START_TEST(two_runs_at_once_keep_their_own_roots_and_pools)
{
	const char *sleeper[] = { T_PROBE, "sleep", "1", NULL };
	const char *quick[] = { T_PROBE, "exit", "0", NULL };
	unsigned delta_a, delta_b, uid_a, uid_b;
	int outcome, code, status;
	struct run_proc a, b;
	char line[256];

	start_run(&a, "A", sleeper);
	start_run(&b, "B", quick);
	expect(&a, "A", "ready ", line, sizeof(line));
	ck_assert_int_eq(sscanf(line, "ready %u", &delta_a), 1);
	expect(&b, "B", "ready ", line, sizeof(line));
	ck_assert_int_eq(sscanf(line, "ready %u", &delta_b), 1);
	ck_assert_msg(delta_a != delta_b, "both runs have pool offset %u", delta_a);

	/* Both markers are written: each run reads its own. */
	ck_assert_int_eq(write(a.go, "go\n", 3), 3);
	expect(&a, "A", "marker ", line, sizeof(line));
	ck_assert_str_eq(line, "marker A");
	expect(&a, "A", "started ", line, sizeof(line));
	ck_assert_int_eq(sscanf(line, "started %u", &uid_a), 1);

	/* A's guest sleeps; B leases and releases the uid of its own pool. */
	ck_assert_int_eq(write(b.go, "go\n", 3), 3);
	expect(&b, "B", "marker ", line, sizeof(line));
	ck_assert_str_eq(line, "marker B");
	expect(&b, "B", "started ", line, sizeof(line));
	ck_assert_int_eq(sscanf(line, "started %u", &uid_b), 1);
	ck_assert_int_eq(write(b.hold, "wait\n", 5), 5);
	expect(&b, "B", "ended ", line, sizeof(line));
	ck_assert_msg(sscanf(line, "ended %d %d", &outcome, &code) == 2 &&
			  outcome == ISO_OUTCOME_EXITED && code == 0,
		      "run B: %s", line);
	ck_assert_msg(uid_a != uid_b, "both runs leased uid %u", uid_a);
	ck_assert_uint_eq(uid_a, 1900101900u + delta_a);
	ck_assert_uint_eq(uid_b, 1900101900u + delta_b);

	/* A's guest was not swept by B: it ends on its own. */
	ck_assert_int_eq(write(a.hold, "wait\n", 5), 5);
	expect(&a, "A", "ended ", line, sizeof(line));
	ck_assert_msg(sscanf(line, "ended %d %d", &outcome, &code) == 2 &&
			  outcome == ISO_OUTCOME_EXITED && code == 0,
		      "run A's guest did not end on its own: %s (outcome %d = "
		      "ISO_OUTCOME_SIGNALED: killed)",
		      line, ISO_OUTCOME_SIGNALED);
	status = finish(&a);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "run A: 0x%x", status);
	status = finish(&b);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "run B: 0x%x", status);

	/* This process never left the host's mount namespace. */
	ck_assert_msg(access(MARKER, F_OK) < 0 && errno == ENOENT, "%s is on the host", MARKER);
}
END_TEST

int main(void)
{
	SRunner *sr;
	TCase *tc;
	Suite *s;
	int failed;

	if (geteuid() != 0) {
		printf("SKIP: two test runs at once need root to install the "
		       "setuid test helper\n");
		return 77;
	}
	s = suite_create("live_runs");
	tc = tcase_create("runs");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, two_runs_at_once_keep_their_own_roots_and_pools);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
