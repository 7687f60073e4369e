/*
 * waitq.c - a connection's spawns that wait for a slot, and a connection
 * that waits for one (waitq.h).
 *
 * Invariants:
 *  - A record holds its request and descriptors and nothing else: no
 *    slot, no uid, no process.
 *  - The requests held together stay within ISO_WAITQ_BYTES_MAX, their
 *    descriptors within ISO_WAITQ_FDS_MAX; their number within the
 *    connection's table of guests (loop.c), whose entries they hold.
 *  - A connection that waits MUST sleep in poll() on nothing but its
 *    watch, its client's socket, the stop signals and one timer at its
 *    deadline: no periodic wake-up, whatever the wait's length.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "creds.h"
#include "util.h"
#include "waitq.h"

int waitq_add(struct iso_waitq *q, size_t entry, uint64_t wait_ms, uint64_t now_us,
	      const void *request, size_t len, int *fds, size_t nfds, struct iso_waiting **out,
	      char *why, size_t n)
{
	struct iso_waiting *w, **tail;

	if (len > ISO_WAITQ_BYTES_MAX - q->bytes)
		return iso_why(why, n, EAGAIN,
			       "the spawns waiting on this connection hold %zu "
			       "bytes of requests, at most %d",
			       q->bytes, ISO_WAITQ_BYTES_MAX);
	if (nfds > ISO_WAITQ_FDS_MAX - q->nfds)
		return iso_why(why, n, EAGAIN,
			       "the spawns waiting on this connection hold %zu "
			       "descriptors, at most %d",
			       q->nfds, ISO_WAITQ_FDS_MAX);
	/* One allocation: the record, its descriptors, its request. */
	w = malloc(sizeof(*w) + nfds * sizeof(int) + len);
	if (w == NULL)
		return iso_why(why, n, ENOMEM, "out of memory for a waiting spawn");
	w->next = NULL;
	w->entry = entry;
	w->since_us = now_us;
	/* Saturated: a wait of any length ends no earlier than asked. */
	w->deadline_us = wait_ms > (UINT64_MAX - now_us) / 1000 ? UINT64_MAX
								: now_us + wait_ms * 1000;
	w->fds = (int *)(w + 1);
	w->nfds = nfds;
	memcpy(w->fds, fds, nfds * sizeof(int));
	for (size_t i = 0; i < nfds; i++)
		fds[i] = -1;
	w->len = len;
	w->request = (uint8_t *)(w->fds + nfds);
	memcpy(w->request, request, len);
	for (tail = &q->head; *tail; tail = &(*tail)->next)
		;
	*tail = w;
	q->bytes += len;
	q->nfds += nfds;
	*out = w;
	return 0;
}

void waitq_drop(struct iso_waitq *q, struct iso_waiting *w)
{
	struct iso_waiting **at = &q->head;

	while (*at && *at != w)
		at = &(*at)->next;
	if (*at)
		*at = w->next;
	q->bytes -= w->len;
	q->nfds -= w->nfds;
	iso_close_fds(w->fds, w->nfds);
	free(w);
}

struct iso_waiting *waitq_expired(const struct iso_waitq *q, uint64_t now_us)
{
	for (struct iso_waiting *w = q->head; w; w = w->next)
		if (w->deadline_us <= now_us)
			return w;
	return NULL;
}

int waitq_timeout_ms(const struct iso_waitq *q, uint64_t now_us)
{
	uint64_t first = UINT64_MAX, ms;

	if (q->head == NULL)
		return -1;
	for (struct iso_waiting *w = q->head; w; w = w->next)
		if (w->deadline_us < first)
			first = w->deadline_us;
	if (first <= now_us)
		return 0;
	ms = (first - now_us + 999) / 1000;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}

/* A timer that fires once, `ms` from now (CLOCK_MONOTONIC), or -errno. */
static int deadline_timer(uint64_t ms, char *why, size_t n)
{
	struct itimerspec at = { 0 };
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);

	/* 0 would disarm it: the least wait is a nanosecond. */
	at.it_value.tv_sec = (time_t)(ms / 1000);
	at.it_value.tv_nsec = (long)(ms % 1000) * 1000000 + (ms == 0);
	if (fd >= 0 && timerfd_settime(fd, 0, &at, NULL) == 0)
		return fd;
	if (fd >= 0)
		close(fd);
	return iso_why_errno(why, n, "timerfd");
}

/* Close the watch and the timer of waitq_slot's poll set; rc. */
static int end_wait(const struct pollfd *p, int rc)
{
	close(p[0].fd);
	close(p[2].fd);
	return rc;
}

int waitq_slot(int sock, int stop, uid_t caller, const char *what, uint32_t max, uint64_t ms,
	       char *why, size_t n)
{
	struct pollfd p[4] = { { .fd = -1, .events = POLLIN },
			       { .fd = sock, .events = POLLIN },
			       { .fd = -1, .events = POLLIN },
			       { .fd = stop, .events = POLLIN } };
	int rc;

	/* The watch first: a slot given back after the first try wakes it. */
	if ((p[0].fd = caller_slot_watch(why, n)) < 0)
		return p[0].fd;
	if ((p[2].fd = deadline_timer(ms, why, n)) < 0) {
		close(p[0].fd);
		return p[2].fd;
	}
	for (rc = caller_slot_take(caller, what, max, why, n); rc == -EAGAIN;) {
		if (poll(p, 4, -1) < 0 && errno != EINTR)
			return end_wait(p, iso_why_errno(why, n, "poll"));
		/* Nothing comes from a client before its greeting. */
		if (p[1].revents)
			return end_wait(p,
					iso_why(why, n, EPIPE, "the client left while it waited"));
		if (p[3].revents)
			return end_wait(p, iso_why(why, n, EINTR,
						   "the helper was told to stop "
						   "while it waited"));
		if (p[2].revents)
			return end_wait(p, iso_why(why, n, EAGAIN,
						   "uid %u holds %u %s slots, as "
						   "many as its rule allows, and none was given "
						   "back in the %llu ms it waited",
						   (unsigned)caller, (unsigned)max, what,
						   (unsigned long long)ms));
		if (p[0].revents && caller_slot_given(p[0].fd, caller, what))
			rc = caller_slot_take(caller, what, max, why, n);
	}
	return end_wait(p, rc);
}
