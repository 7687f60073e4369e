/*
 * live_reaper.c - reapers and the helper over many spawns, through the
 * real setuid helper: a reaper made ahead carries nothing between guests,
 * the reaper factory keeps no descriptor of a guest, a reaper holds its
 * program once, and 10,000 spawns leave the helper's descriptors and
 * memory as they were.
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

#define WARMUP_SPAWNS 100
#define LEAK_SPAWNS 10000
#define RSS_GROWTH_MAX_KIB 256

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
	static const char *const b_argv[] = {
		"/bin/sh", "-c", "ls -A /tmp; ls /proc | grep -c '^[0-9]'; id -u; sleep 5", NULL
	};
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
			  (out_b[0] == '2' || out_b[0] == '3' || out_b[0] == '4') &&
			  out_b[1] == '\n',
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

static Suite *reaper_suite(void)
{
	Suite *s = suite_create("live_reaper");
	TCase *reaper = tcase_create("reaper");
	TCase *growth = tcase_create("no_growth");

	tcase_add_test(reaper, live_reaper_made_ahead_carries_nothing_between_guests);
	tcase_add_test(reaper, live_reaper_factory_keeps_no_descriptor_of_the_first_guest);
	tcase_add_test(reaper, live_reaper_holds_the_program_once);
#if ISO_SANITIZERS
	/* LeakSanitizer checks every allocation of the sanitized helper at its
	 * exit instead (tests/sanitizer_options.c, tests/install.c). */
	tcase_add_unless(growth, live_ten_thousand_spawns_leave_helper_fds_and_rss_unchanged,
			 "the test helper is built with AddressSanitizer: its quarantine "
			 "and shadow memory make VmRSS no measure of growth");
#else
	tcase_add_test(growth, live_ten_thousand_spawns_leave_helper_fds_and_rss_unchanged);
#endif
	tcase_set_timeout(reaper, 60);
	tcase_set_timeout(growth, 1000);
	suite_add_tcase(s, reaper);
	suite_add_tcase(s, growth);
	return s;
}

int main(void)
{
	return supervise_main(reaper_suite);
}
