/*
 * loop.h - one helper process serves one client connection: any number of
 * concurrent spawn and kill requests, until the client goes away.
 */
#ifndef ISO_LOOP_H
#define ISO_LOOP_H

#include <stddef.h>
#include <stdint.h>

#include "confine.h"
#include "creds.h"
#include "policy.h"
#include "spawn.h"
#include "wire.h"
#include "world.h"

#define ISO_GUESTS_MAX 1024 /* live guests of one connection */

struct iso_guest_slot;
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
	struct iso_spawn_ctx ctx;
	unsigned long started;	      /* guests started on this connection */

	struct iso_guest_slot *slots; /* ISO_GUESTS_MAX */
	size_t nlive;
	struct iso_outq *outq;	      /* replies the client has not taken */
	size_t noutq;

	uint8_t *rbuf, *wbuf;	      /* ISO_WIRE_MAX each, once */
	struct iso_wire_msg *msg;     /* decoded request, once */
};

/* Allocate the server's buffers; everything per-connection is made here. */
int server_init(struct iso_server *srv, int sock, char *why, size_t n);

/* Send HELLO: ready (err 0) or a refusal with its reason. */
int server_hello(struct iso_server *srv, int err, const char *message);

/* Serve until the client closes the connection or the helper is told to
 * stop; then kill every guest, clean up and return the exit code. */
int server_run(struct iso_server *srv);

#endif /* ISO_LOOP_H */
