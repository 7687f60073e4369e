/*
 * waitq.c - a connection's spawns that wait for a slot (waitq.h).
 *
 * Invariants:
 *  - A record holds its request and descriptors and nothing else: no
 *    slot, no uid, no process.
 *  - The requests held together stay within ISO_WAITQ_BYTES_MAX, their
 *    descriptors within ISO_WAITQ_FDS_MAX; their number within the
 *    connection's table of guests (loop.c), whose entries they hold.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "waitq.h"

int waitq_add(struct iso_waitq *q, size_t entry, uint64_t wait_ms, uint64_t now_us,
	      const void *request, size_t len, int *fds, size_t nfds,
	      struct iso_waiting **out, char *why, size_t n)
{
	struct iso_waiting *w, **tail;

	if (len > ISO_WAITQ_BYTES_MAX - q->bytes)
		return iso_why(why, n, EAGAIN, "the spawns waiting on this connection hold %zu "
			       "bytes of requests, at most %d", q->bytes, ISO_WAITQ_BYTES_MAX);
	if (nfds > ISO_WAITQ_FDS_MAX - q->nfds)
		return iso_why(why, n, EAGAIN, "the spawns waiting on this connection hold %zu "
			       "descriptors, at most %d", q->nfds, ISO_WAITQ_FDS_MAX);
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
