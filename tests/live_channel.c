/*
 * live_channel.c - the message channel through the real setuid helper:
 * message boundaries and sizes, the byte stream, the guest's environment,
 * timeouts and end of file, a guest that does not read or passes its end
 * on, and peer credentials that name the guest.
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
		ck_assert_msg(got == (long)lens[i], "message %zu: %ld bytes, sent %zu", i, got,
			      lens[i]);
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
		ck_assert_msg(has_exact_line(plain.out, p, len), "only with a channel: %.*s",
			      (int)len, p);
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
		      "a 100 ms receive timed out after %llu ms", (unsigned long long)waited_ms);
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

/* The channel is made by the reaper after the drop, so its peer
 * credentials name the guest (uid, gid and the pid iso_guest_pid() gives),
 * never root: a service that authorises by them sees the untrusted guest
 * as what it is. */
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

static Suite *channel_suite(void)
{
	Suite *s = suite_create("live_channel");
	TCase *channel = tcase_create("channel");

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
	tcase_add_test(channel, live_channel_peer_credentials_name_the_guest);
	tcase_set_timeout(channel, 60);
	suite_add_tcase(s, channel);
	return s;
}

int main(void)
{
	return supervise_main(channel_suite);
}
