/*
 * supervise.h - what the live supervision tests share (live_guests.c,
 * live_orphans.c, live_channel.c, live_signals.c, live_status.c,
 * live_reaper.c).
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
#ifndef ISO_TEST_SUPERVISE_H
#define ISO_TEST_SUPERVISE_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "harness.h"

/* The rule for these files in tests/policy.conf.in. */
#define S_CALLER 4000020u
#define S_POOL_FIRST T_POOL(1900101500u)
#define S_POOL_LAST T_POOL(1900101799u)

/* What is gone must be gone within this (the product acts at once; a
 * loaded machine may take its time: the failure says what was measured). */
#define GONE_WITHIN_MS 10000

uint64_t now_us(void);
void sleep_ms(long ms);
/* Poll cond every 10 ms for up to timeout_ms; 1 once it holds. */
int within_ms(int (*cond)(void *), void *arg, int timeout_ms);

/* argv[0] is the program; stdout goes to out_fd (-1: /dev/null). */
int start(iso_conn *conn, const char *const *argv, int channel, int out_fd, iso_guest **g);
iso_guest *must_start(iso_conn *conn, const char *const *argv, int channel);
void must_end(iso_guest *g, int timeout_ms);
/* argv with the guest's nofile and wall-clock timeout (0: the rule's). */
iso_guest *must_start_limited(iso_conn *conn, const char *const *argv, uint64_t nofile,
			      uint64_t timeout_ms);

/* The client's helper, the library's child; wait until the guest of uid
 * sleeps in `probe sleep`, past its exec. */
pid_t helper_of(pid_t client);
void wait_asleep(uid_t uid);

/* An unprivileged client forked by a root test process. */
struct client {
	pid_t pid;
	int from; /* lines the client writes */
	int to; /* the test's go-aheads */
};

/* Runs as S_CALLER; returns the client's exit status. */
typedef int (*client_body)(int out, int in);

int client_error(int out, const char *what, int rc);
void client_wait_go(int in);
void client_start_as(struct client *c, client_body body, uid_t uid, gid_t group);
void client_start(struct client *c, client_body body);
void client_read(struct client *c, char *line, size_t n, int timeout_ms);
void client_go(struct client *c);
int client_end(struct client *c, int sig);

/* The whole of a supervision test program's main(): install the test
 * helper (harness_setup), run the suite; 0 when every check passed. */
int supervise_main(Suite *(*suite)(void));

#endif /* ISO_TEST_SUPERVISE_H */
