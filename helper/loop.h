/*
 * loop.h - one helper process serves one client connection: any number of
 * concurrent spawn and kill requests, until the client goes away.
 */
#ifndef ISO_LOOP_H
#define ISO_LOOP_H

#include <stddef.h>
#include <stdint.h>

#include "cgroup.h"
#include "confine.h"
#include "creds.h"
#include "policy.h"
#include "spawner.h"
#include "waitq.h"
#include "wire.h"
#include "world.h"

#define ISO_GUESTS_MAX 1024 /* live and waiting guests of one connection */

/* A live guest of the connection, one waiting for a slot of its caller's,
 * or a free entry (id 0). */
struct iso_guest_entry {
	uint32_t id; /* 0 = free */
	struct iso_waiting *waiting; /* not NULL: it waits, nothing started */
	struct iso_child child;
	uint64_t start_us;
	uint64_t cpu_limit_s;
};

struct iso_outq;

struct iso_server {
	int sock;
	int epfd;
	int sigfd;
	struct iso_caller caller;
	struct iso_policy policy;
	const struct iso_rule *rule;
	struct iso_world world;
	struct iso_confine confine;
	struct iso_cgroup cgroup;
	struct iso_spawn_ctx ctx;
	unsigned long started; /* guests started on this connection */

	struct iso_guest_entry entries[ISO_GUESTS_MAX];
	size_t nlive; /* entries taken, live or waiting */
	struct iso_waitq waitq; /* the waiting, oldest first */
	int slot_watch; /* caller_slot_watch() while any waits */
	struct iso_outq *outq; /* replies the client has not taken */
	size_t noutq;

	uint8_t rbuf[ISO_WIRE_MAX]; /* a request, or a lease record read */
	uint8_t wbuf[ISO_WIRE_MAX]; /* a reply or record being encoded */
	struct iso_wire_msg msg; /* the decoded request or record */
};

/* The connection's epoll set and signalfd, and what every spawn needs
 * (spawn_init); the server (main.c's) is zero when called. */
int server_init(struct iso_server *srv, int sock, char *why, size_t n);

/* Send HELLO: ready (err 0) or a refusal with its reason. */
int server_hello(struct iso_server *srv, int err, const char *message);

/* After a HELLO that refused with EAGAIN, the client's answer: 0 with
 * *ms from its WAIT; -EPIPE when it closes the connection or sends
 * anything else (descriptors closed). Blocks until it answers. */
int server_read_wait(struct iso_server *srv, uint64_t *ms);

/* Serve until the client closes the connection or the helper is told to
 * stop; then kill every guest, clean up and return the exit code. */
int server_run(struct iso_server *srv);

#endif /* ISO_LOOP_H */
