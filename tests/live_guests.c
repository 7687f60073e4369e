/*
 * live_guests.c - many guests through the real setuid helper: a hundred
 * concurrent guests on one connection, each status matched to its
 * request; a guest's nofile its own; a caller's guests and connections
 * bounded by its rule over all its connections; a pool uid that is an
 * account's never leased.
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

#define CONCURRENT_GUESTS 100

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
		snprintf(script[i], sizeof(script[i]), "sleep 1.%02d; exit %d", (i * 37) % 100, k);
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

#define NOFILE_ASKED 64
#define NOFILE_GUESTS (4 * NOFILE_ASKED)

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
	ck_assert_msg(iso_guest_outcome(last) == ISO_OUTCOME_EXITED, "guest %d: outcome %d code %d",
		      NOFILE_GUESTS + 1, iso_guest_outcome(last), iso_guest_code(last));
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

	client_start_as(&member, client_runs_a_guest_on_each_of_two_connections, H_MEMBER, H_GROUP);
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
	snprintf(entry[0], sizeof(entry[0]),
		 "isospawn-acct:x:%u:%u::/nonexistent:"
		 "/usr/sbin/nologin\n",
		 (unsigned)A_SECOND, (unsigned)A_SECOND);
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
	snprintf(entry[0], sizeof(entry[0]),
		 "isospawn-acct:x:%u:%u::/nonexistent:"
		 "/usr/sbin/nologin\n",
		 (unsigned)A_FIRST, (unsigned)A_FIRST);
	write_accounts(copies[0], text[0], entry[0]);
	write_accounts(copies[1], text[1], NULL);
	client_start_as(&c, client_spawns_two_sleepers, A_CALLER, 0);
	client_read(&c, line, sizeof(line), 30000);
	ck_assert_int_eq(client_end(&c, 0), 0);
	snprintf(want, sizeof(want), "pool uid %u of the rule at ", (unsigned)A_FIRST);
	ck_assert_msg(strncmp(line, "no connection -13 ", 18) == 0 && strstr(line, want) &&
			  strstr(line, "is a user's uid"),
		      "client said: %s", line);
	close(sock);
	snprintf(want, sizeof(want), "pool-account uid=%u rule=", (unsigned)A_SECOND);
	ck_assert_msg(strstr(log, want) != NULL, "log: %s", log);
}
END_TEST

static Suite *guests_suite(void)
{
	Suite *s = suite_create("live_guests");
	TCase *many = tcase_create("many_guests");

	tcase_add_test(many, live_hundred_concurrent_guests_each_get_their_own_status);
	tcase_add_test(many, live_out_of_order_completion_is_matched_to_its_request);
	tcase_add_test(many, live_connection_with_four_times_nofile_live_guests_starts_each);
	tcase_add_test(many, live_guest_with_a_small_nofile_runs);
	tcase_add_test(many, live_callers_live_guests_are_bounded_across_its_connections);
	tcase_add_test(many, live_ended_guests_uid_goes_back_so_one_member_cannot_hold_the_pool);
	tcase_add_test(many, live_callers_connections_are_bounded_by_guests_plus_one);
	tcase_add_test(many, live_pool_uid_that_is_an_account_is_never_leased);
	tcase_set_timeout(many, 120);
	suite_add_tcase(s, many);
	return s;
}

int main(void)
{
	return supervise_main(guests_suite);
}
