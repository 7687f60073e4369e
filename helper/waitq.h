/*
 * waitq.h - waiting for one of the caller's slots: the spawns of one
 * connection that wait for one of its guest slots (the rule's 'guests',
 * over all its connections), each request as it came, with its
 * descriptors, oldest first; and a connection that waits for one of its
 * caller's connection slots (waitq_slot). A waiting spawn holds no slot
 * and no uid; the loop (loop.c) starts the oldest when a slot is given
 * back (caller_slot_watch) and refuses each at its deadline.
 */
#ifndef ISO_WAITQ_H
#define ISO_WAITQ_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "wire.h"

/* The requests of one connection's waiting spawns, in bytes together: at
 * most eight of the largest, or thousands of the usual few hundred bytes;
 * and their descriptors (stdio and grants), which count against the
 * helper's nofile beside its live guests'. */
#define ISO_WAITQ_BYTES_MAX (8 * ISO_WIRE_MAX)
#define ISO_WAITQ_FDS_MAX 1024

struct iso_waiting {
	struct iso_waiting *next; /* the next to come after it */
	size_t entry; /* the table entry it holds (loop.c) */
	uint64_t since_us, deadline_us; /* CLOCK_MONOTONIC */
	int *fds; /* its descriptors, held until it ends */
	size_t nfds;
	size_t len;
	uint8_t *request; /* the SPAWN datagram, len bytes */
};

struct iso_waitq {
	struct iso_waiting *head; /* the oldest; NULL: none waits */
	size_t bytes; /* of the requests held */
	size_t nfds; /* descriptors held */
};

/*
 * Queue the request[0..len) of table entry `entry`, waiting up to wait_ms
 * from now_us, with its descriptors fds[0..nfds), which it takes (each set
 * to -1 in fds). Returns 0 with *out the record; or, with the reason and
 * fds left alone, -EAGAIN when the waiting would hold more than
 * ISO_WAITQ_BYTES_MAX or ISO_WAITQ_FDS_MAX, or -ENOMEM.
 */
int waitq_add(struct iso_waitq *q, size_t entry, uint64_t wait_ms, uint64_t now_us,
	      const void *request, size_t len, int *fds, size_t nfds, struct iso_waiting **out,
	      char *why, size_t n);

/* Take w out of the queue, close its descriptors, free it. */
void waitq_drop(struct iso_waitq *q, struct iso_waiting *w);

/* The oldest record whose deadline is past at now_us, or NULL. */
struct iso_waiting *waitq_expired(const struct iso_waitq *q, uint64_t now_us);

/* Milliseconds from now_us to the earliest deadline (rounded up, at most
 * INT_MAX), for epoll_wait(); -1 when none waits. */
int waitq_timeout_ms(const struct iso_waitq *q, uint64_t now_us);

/*
 * Wait up to `ms` for one of the caller's `max` slots of `what`
 * (caller_slot_take), asleep between slots given back (caller_slot_watch)
 * while the client's socket `sock` and the signalfd `stop` stay quiet: no
 * polling loop. Returns the slot's descriptor; -EAGAIN with a reason when
 * none was given back in time; -EPIPE when the client closed the socket
 * or sent anything; -EINTR when `stop` became readable; or -errno.
 */
int waitq_slot(int sock, int stop, uid_t caller, const char *what, uint32_t max, uint64_t ms,
	       char *why, size_t n);

#endif /* ISO_WAITQ_H */
