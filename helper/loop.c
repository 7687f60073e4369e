/*
 * loop.c - the helper's event loop: requests in, guests out, status back.
 *
 * Single-threaded: epoll over the request socket, one pidfd per guest, a
 * signalfd and, while spawns wait for a slot, a watch on the callers'
 * slots (creds.c) until the first waiting spawn's deadline. Replies are
 * sent without blocking and queued when the client is slow. Guests'
 * timeouts are not the loop's: each guest's reaper enforces its own
 * (spawner.c), so a caller that stops its helper cannot extend a guest.
 *
 * What a guest takes and gives back (lease, tree, channel) is spawner.c's;
 * this file only does the I/O and the bookkeeping of live guests.
 *
 * Invariants:
 *  - Every fd received from the client is closed once the request is done
 *    (a waiting spawn's, once it starts or ends).
 *  - When the client goes away, every guest is killed and cleaned up
 *    before the helper exits.
 *  - A guest's lease file holds its record (record.h) from its start until
 *    its reaper reports (or is gone), and never an argument or environment
 *    value.
 *  - LIST and STOP reach only the caller's own guests, and STOP signals
 *    only a pidfd proven to be the guest's reaper.
 *  - A spawn waiting for a slot holds its entry, request and descriptors,
 *    nothing else; it starts only after those that came before it.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "hygiene.h"
#include "record.h"
#include "log.h"
#include "loop.h"
#include "util.h"

#define TAG_SOCK UINT32_MAX
#define TAG_SIG (UINT32_MAX - 1)
#define TAG_SLOTS (UINT32_MAX - 2) /* a slot of some caller's given back */
#define TAG_REPORT ISO_GUESTS_MAX /* plus the entry: its reaper's report */
#define OUTQ_MAX 65536 /* queued replies before the client counts as gone */

struct iso_outq {
	struct iso_outq *next;
	int fd;
	size_t len;
	uint8_t data[];
};

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* Send what the client takes now, oldest first; EPOLLOUT tells when it
 * takes more (`waiting`: it was asked for). Meanwhile its requests wait:
 * a caller that does not read its replies cannot make its helper, root's,
 * queue more of them (a LIST's may be many). */
static int flush_outq(struct iso_server *srv, int waiting)
{
	struct epoll_event ev = { .events = EPOLLOUT, .data.u32 = TAG_SOCK };

	while (srv->outq) {
		struct iso_outq *q = srv->outq;
		ssize_t sent = iso_send_fds(srv->sock, q->data, q->len, MSG_DONTWAIT, &q->fd,
					    q->fd >= 0 ? 1 : 0);

		if (sent == -EAGAIN || sent == -ENOBUFS)
			break;
		iso_close_fds(&q->fd, 1);
		srv->outq = q->next;
		srv->noutq--;
		free(q);
		if (sent < 0)
			return (int)sent;
	}
	if (!srv->outq)
		ev.events = EPOLLIN;
	if (waiting != (srv->outq != NULL))
		(void)epoll_ctl(srv->epfd, EPOLL_CTL_MOD, srv->sock, &ev);
	return 0;
}

/* Queue behind what is already waiting, and send what the client takes.
 * Takes ownership of fd. */
static int reply(struct iso_server *srv, const struct iso_wire_msg *msg, int fd)
{
	long len = iso_wire_encode(msg, srv->wbuf, ISO_WIRE_MAX);
	struct iso_outq *q, **tail;

	if (len < 0)
		log_event(LOG_ERR, "internal: cannot encode reply type %d: %s", msg->type,
			  strerror((int)-len));
	if (len < 0 || srv->noutq >= OUTQ_MAX || !(q = malloc(sizeof(*q) + (size_t)len))) {
		iso_close_fds(&fd, 1);
		return len < 0 ? (int)len : -ENOBUFS;
	}
	q->next = NULL;
	q->fd = fd;
	q->len = (size_t)len;
	memcpy(q->data, srv->wbuf, (size_t)len);
	for (tail = &srv->outq; *tail; tail = &(*tail)->next)
		;
	*tail = q;
	srv->noutq++;
	/* With replies queued before it, EPOLLOUT is awaited already. */
	return srv->noutq == 1 ? flush_outq(srv, 0) : 0;
}

static void refuse(struct iso_server *srv, uint32_t id, int err, const char *program,
		   const char *reason)
{
	struct iso_wire_msg m = { .type = ISO_MSG_REFUSED, .id = id };
	char qprog[256], qwhy[600];

	m.u.refused.err = (uint32_t)(err < 0 ? -err : err);
	m.u.refused.message = reason;
	iso_quote(qprog, sizeof(qprog), program ? program : "-");
	iso_quote(qwhy, sizeof(qwhy), reason);
	log_event(LOG_NOTICE,
		  "refuse id=%u caller=%s rule=%s:%u"
		  " program=\"%s\" reason=\"%s\"",
		  id, log_caller(), srv->rule->file, srv->rule->line, qprog, qwhy);
	(void)reply(srv, &m, -1);
}

int server_hello(struct iso_server *srv, int err, const char *message)
{
	struct iso_wire_msg m = { .type = ISO_MSG_HELLO };

	m.u.hello.landlock_abi = (uint32_t)srv->confine.landlock_abi;
	m.u.hello.err = (uint32_t)(err < 0 ? -err : err);
	m.u.hello.message = message;
	return reply(srv, &m, -1);
}

int server_read_wait(struct iso_server *srv, uint64_t *ms)
{
	int fds[ISO_FDS_MAX];
	size_t nfds = 0;
	unsigned seen;
	char why[256];
	ssize_t len;

	while ((len = iso_recv_fds(srv->sock, srv->rbuf, ISO_WIRE_MAX, 0, fds, ISO_FDS_MAX, &nfds,
				   &seen)) == -EINTR)
		;
	if (len >= 0)
		iso_close_fds(fds, nfds);
	if (len <= 0 || seen != 0 || nfds != 0 ||
	    iso_wire_decode(srv->rbuf, (size_t)len, &srv->msg, why, sizeof(why)) < 0 ||
	    srv->msg.type != ISO_MSG_WAIT)
		return -EPIPE;
	*ms = srv->msg.u.wait.ms;
	return 0;
}

/* The live guest `id`, or with id 0 a free entry; NULL if there is none.
 * The table spans ISO_GUESTS_MAX entries, some 60 pages, and each page a
 * helper reads first is a page fault its caller waits for (the CLI's
 * helper, at its one spawn): a search goes only as far as the live guests
 * reach, or to the first free entry. */
static struct iso_guest_entry *find_guest(struct iso_server *srv, uint32_t id)
{
	for (size_t i = 0, live = 0; i < ISO_GUESTS_MAX && (id == 0 || live < srv->nlive); i++) {
		if (srv->entries[i].id == id)
			return &srv->entries[i];
		live += srv->entries[i].id != 0;
	}
	return NULL;
}

/* Watch the started guest: its pidfd becomes readable when it is gone. */
static int watch_guest(struct iso_server *srv, struct iso_guest_entry *entry, uint32_t id,
		       const struct iso_plan *plan, char *why, size_t n)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = (uint32_t)(entry - srv->entries) };
	struct epoll_event rep = { .events = EPOLLIN, .data.u32 = ev.data.u32 + TAG_REPORT };

	if (epoll_ctl(srv->epfd, EPOLL_CTL_ADD, entry->child.pidfd, &ev) < 0 ||
	    epoll_ctl(srv->epfd, EPOLL_CTL_ADD, entry->child.report_fd, &rep) < 0)
		return iso_why_errno(why, n, "epoll");
	entry->id = id;
	entry->start_us = now_us();
	entry->cpu_limit_s = plan->limits[ISO_LIMIT_CPU];
	srv->nlive++;
	return 0;
}

/* The guest's record in its lease file, for isospawnctl (record.h). */
static void write_record(struct iso_server *srv, const struct iso_guest_entry *g,
			 const char *program, const struct iso_plan *plan)
{
	struct iso_wire_msg m = { .type = ISO_MSG_GUEST, .id = g->id };

	m.u.guest = (struct iso_wire_guest){ .program = program,
					     .caller = srv->caller.uid,
					     .helper = (uint32_t)getpid(),
					     .pid = (uint32_t)g->child.pid,
					     .uid = g->child.lease.uid,
					     .timeout_ms = plan->timeout_ms,
					     .limits_set = (1u << ISO_LIMIT_COUNT) - 1,
					     .network = plan->network_none ? ISO_NETWORK_NONE
									   : ISO_NETWORK_HOST };
	memcpy(m.u.guest.limits, plan->limits, sizeof(plan->limits));
	(void)iso_record_write(g->child.lease.lock_fd, &m, srv->wbuf, ISO_WIRE_MAX);
}

/*
 * Decide the request, take a slot of the caller's,
 * start the guest in the free `entry` and say so, or refuse. With
 * `may_wait` and no slot free: nothing told, nothing taken, and 1;
 * otherwise 0.
 */
static int start_guest(struct iso_server *srv, struct iso_guest_entry *entry, uint32_t id,
		       const struct iso_wire_spawn *req, const int *fds, size_t nfds, int may_wait)
{
	struct iso_wire_msg m = { .type = ISO_MSG_SPAWNED, .id = id };
	struct iso_plan plan = { 0 };
	char why[512], names[512], qprog[256];
	int chan = -1, slot_fd = -1, rc;

	rc = request_decide(srv->rule, req, &plan, why, sizeof(why));
	if (rc == 0 && (slot_fd = caller_slot_take(srv->caller.uid, "guest", srv->rule->guests_max,
						   why, sizeof(why))) < 0)
		rc = slot_fd;
	if (slot_fd == -EAGAIN && may_wait) {
		plan_release(&plan);
		return 1;
	}
	if (rc == 0)
		rc = spawn_start(&srv->ctx, &plan, slot_fd, fds, nfds, &entry->child, &chan, why,
				 sizeof(why));
	if (rc == 0 && (rc = watch_guest(srv, entry, id, &plan, why, sizeof(why))) < 0) {
		/* Cannot watch it, so it must not run. */
		struct iso_wire_exited gone;

		spawn_kill(&entry->child);
		spawn_end(&srv->ctx, &entry->child, id, &gone);
		iso_close_fds(&chan, 1);
	}
	if (rc < 0) {
		plan_release(&plan);
		refuse(srv, id, rc, req->program, why);
		return 0;
	}
	write_record(srv, entry, req->program, &plan);
	log_names(names, sizeof(names), req->overrides);
	iso_quote(qprog, sizeof(qprog), req->program);
	log_event(LOG_INFO,
		  "spawn id=%u caller=%s rule=%s:%u"
		  " program=\"%s\" overrides=%s guest_uid=%u pid=%d network=%s",
		  id, log_caller(), srv->rule->file, srv->rule->line, qprog, names,
		  (unsigned)entry->child.lease.uid, (int)entry->child.pid,
		  plan.network_none ? "none" : "host");
	plan_release(&plan);
	m.u.spawned.pid = (uint32_t)entry->child.pid;
	m.u.spawned.uid = (uint32_t)entry->child.lease.uid;
	m.u.spawned.notes = srv->confine.notes[0] ? srv->confine.notes : NULL;
	(void)reply(srv, &m, chan);
	srv->started++;
	return 0;
}

/* Queue the spawn in `entry`, which it holds while it waits; it
 * takes the request's descriptors. 0, or -errno with a reason. */
static int wait_for_slot(struct iso_server *srv, struct iso_guest_entry *entry, uint32_t id,
			 const struct iso_wire_spawn *req, size_t len, int *fds, size_t nfds,
			 char *why, size_t n)
{
	char qprog[256];
	int rc = waitq_add(&srv->waitq, (size_t)(entry - srv->entries), req->wait_slot_ms, now_us(),
			   srv->rbuf, len, fds, nfds, &entry->waiting, why, n);

	if (rc < 0)
		return rc;
	entry->id = id;
	srv->nlive++;
	iso_quote(qprog, sizeof(qprog), req->program);
	log_event(LOG_INFO, "wait id=%u caller=%s program=\"%s\" wait_ms=%llu", id, log_caller(),
		  qprog, (unsigned long long)req->wait_slot_ms);
	return 0;
}

/* The waiting spawn in `entry` ends (started, refused or withdrawn): its
 * entry is free again. */
static void end_wait(struct iso_server *srv, struct iso_guest_entry *entry)
{
	waitq_drop(&srv->waitq, entry->waiting);
	entry->waiting = NULL;
	entry->id = 0;
	srv->nlive--;
}

/* Watch for a slot of the caller's given back, from the first spawn that
 * waits on (until none does: server_run). 0, or -EAGAIN with a reason. */
static int watch_slots(struct iso_server *srv, char *why, size_t n)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = TAG_SLOTS };

	if (srv->slot_watch >= 0)
		return 0;
	if ((srv->slot_watch = caller_slot_watch(why, n)) < 0)
		return srv->slot_watch;
	if (epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->slot_watch, &ev) == 0)
		return 0;
	close(srv->slot_watch);
	srv->slot_watch = -1;
	return iso_why_errno(why, n, "epoll");
}

/*
 * A new spawn: start it, or, if it may and no slot is free, queue it.
 * Behind spawns waiting already it queues at once: first come, first
 * served. The first to wait tries twice, before the watch begins and
 * after, as a slot given back in between wakes no one.
 */
static void handle_spawn(struct iso_server *srv, uint32_t id, const struct iso_wire_spawn *req,
			 size_t len, int *fds, size_t nfds)
{
	struct iso_guest_entry *entry = NULL;
	char why[512];
	size_t want =
	    (size_t)__builtin_popcount(req->stdio_mask) + req->nread + req->nwrite + req->npass;
	int may_wait = req->wait_slot_ms != 0, rc = 0;

	if (nfds != want)
		rc = iso_why(why, sizeof(why), EINVAL,
			     "request names %zu descriptors (stdio, "
			     "grants and passed) but carries %zu",
			     want, nfds);
	/* Id 0 marks a free entry: a guest with it would be untracked. */
	else if (id == 0)
		rc = iso_why(why, sizeof(why), EINVAL, "request id 0 is reserved");
	else if (find_guest(srv, id))
		rc = iso_why(why, sizeof(why), EINVAL,
			     "request id already names a live guest, or one waiting");
	else if ((entry = find_guest(srv, 0)) == NULL)
		rc = iso_why(why, sizeof(why), EAGAIN,
			     "too many live or waiting guests on this connection");
	if (entry == NULL) {
		refuse(srv, id, rc, req->program, why);
		return;
	}
	if (!may_wait || srv->waitq.head == NULL) {
		if (start_guest(srv, entry, id, req, fds, nfds, may_wait) == 0)
			return;
		if ((rc = watch_slots(srv, why, sizeof(why))) == 0 &&
		    start_guest(srv, entry, id, req, fds, nfds, 1) == 0)
			return;
	}
	if (rc == 0)
		rc = wait_for_slot(srv, entry, id, req, len, fds, nfds, why, sizeof(why));
	if (rc < 0)
		refuse(srv, id, rc, req->program, why);
}

/* A slot of the caller's was given back: start the waiting spawns, oldest
 * first, until none is left or no slot is free. Each is decoded again from
 * its own bytes, in the request buffer, which is free between requests. */
static void serve_waiting(struct iso_server *srv)
{
	struct iso_waiting *w;

	while ((w = srv->waitq.head) != NULL) {
		struct iso_guest_entry *entry = &srv->entries[w->entry];
		uint32_t id = entry->id;
		char why[256];

		memcpy(srv->rbuf, w->request, w->len);
		/* It was decoded when it came; it is the same bytes. */
		if (iso_wire_decode(srv->rbuf, w->len, &srv->msg, why, sizeof(why)) < 0) {
			refuse(srv, id, EINVAL, NULL, why);
			end_wait(srv, entry);
			continue;
		}
		/* The entry is free while it starts: the guest's if it does. */
		entry->id = 0;
		entry->waiting = NULL;
		srv->nlive--;
		if (start_guest(srv, entry, id, &srv->msg.u.spawn, w->fds, w->nfds, 1) == 1) {
			entry->id = id;
			entry->waiting = w;
			srv->nlive++;
			return;
		}
		waitq_drop(&srv->waitq, w);
	}
}

/* Refuse each waiting spawn whose time is up, saying how long it waited. */
static void expire_waiting(struct iso_server *srv)
{
	uint64_t now = now_us();
	struct iso_waiting *w;
	char why[256];

	while ((w = waitq_expired(&srv->waitq, now)) != NULL) {
		struct iso_guest_entry *entry = &srv->entries[w->entry];

		iso_why(why, sizeof(why), EAGAIN,
			"uid %u holds %u guest slots, as many as its "
			"rule's 'guests' allows, and none was given back in the %llu ms the "
			"spawn waited",
			(unsigned)srv->caller.uid, (unsigned)srv->rule->guests_max,
			(unsigned long long)((now - w->since_us) / 1000));
		refuse(srv, entry->id, EAGAIN, NULL, why);
		end_wait(srv, entry);
	}
}

static void handle_kill(struct iso_server *srv, uint32_t id, uint32_t sig)
{
	struct iso_guest_entry *g = find_guest(srv, id);
	siginfo_t stop = { .si_signo = SIGTSTP, .si_code = SI_QUEUE };

	/* An ended guest's id is gone: killing it is harmless, and a pidfd
	 * can never reach a recycled pid. */
	if (!g)
		return;
	/* Not started: the spawn is withdrawn, and answered so. */
	if (g->waiting) {
		refuse(srv, id, ECANCELED, NULL, "withdrawn by a KILL while it waited for a slot");
		end_wait(srv, g);
		return;
	}
	log_event(LOG_INFO, "kill id=%u caller=%s guest_uid=%u signal=%u", id, log_caller(),
		  (unsigned)g->child.lease.uid, sig);
	/* SIGSTOP would stop the reaper (signalled from outside its PID
	 * namespace, pid 1 stops like any process), and with it the guest's
	 * deadline: it goes as a queued SIGTSTP, which the reaper turns into
	 * SIGSTOP for the guest (spawner.c forward_signal). */
	(void)syscall(SYS_pidfd_send_signal, g->child.pidfd, sig == SIGSTOP ? SIGTSTP : (int)sig,
		      sig == SIGSTOP ? &stop : NULL, 0);
}

/* LIST: a GUEST for each live guest of the caller's, on any connection,
 * then DONE. The request's buffers are free by now, so they hold each
 * record in turn. */
static void handle_list(struct iso_server *srv, uint32_t id)
{
	struct iso_wire_msg done = { .type = ISO_MSG_DONE, .id = id };
	char path[sizeof(ISO_LEASE_DIR) + 256];
	DIR *dir = opendir(ISO_LEASE_DIR);
	struct dirent *e;

	while (dir != NULL && (e = readdir(dir)) != NULL) {
		snprintf(path, sizeof(path), "%s/%s", ISO_LEASE_DIR, e->d_name);
		if (iso_record_read(path, srv->rbuf, ISO_WIRE_MAX, &srv->msg) == 1 &&
		    srv->msg.u.guest.caller == srv->caller.uid)
			(void)reply(srv, &srv->msg, -1);
	}
	if (dir != NULL)
		closedir(dir);
	(void)reply(srv, &done, -1);
}

/* STOP: end a guest of the caller's, its whole namespace (record.h); the
 * helper serving it then cleans up as on any exit. */
static void handle_stop(struct iso_server *srv, uint32_t id, uint32_t uid, uint32_t pid)
{
	struct iso_wire_msg done = { .type = ISO_MSG_DONE, .id = id };
	const struct iso_wire_guest *g = &srv->msg.u.guest;
	char path[sizeof(ISO_LEASE_DIR) + 16], why[128];

	snprintf(path, sizeof(path), "%s/%u", ISO_LEASE_DIR, uid);
	if (iso_record_read(path, srv->rbuf, ISO_WIRE_MAX, &srv->msg) != 1 ||
	    g->caller != srv->caller.uid || (pid != 0 && g->pid != pid) || iso_record_kill(g) < 0) {
		iso_why(why, sizeof(why), ESRCH, "no guest of yours runs under uid %u%s", uid,
			pid != 0 ? " with that reaper" : "");
		refuse(srv, id, ESRCH, NULL, why);
		return;
	}
	log_event(LOG_INFO, "stop caller=%s guest=%u.%u guest_uid=%u", log_caller(), g->helper,
		  srv->msg.id, uid);
	(void)reply(srv, &done, -1);
}

/* RULE: the text of the rule that admitted the caller. */
static void handle_rule(struct iso_server *srv, uint32_t id)
{
	struct iso_wire_msg m = { .type = ISO_MSG_RULE_TEXT, .id = id };

	m.u.rule_text =
	    (struct iso_wire_rule_text){ srv->rule->file, srv->rule->line, srv->rule->text };
	(void)reply(srv, &m, -1);
}

/* Tell the client how the guest ended, and what ended it as far as the
 * rlimits tell, unless its cgroup's OOM kill said memory (cgroup.c). */
static void tell(struct iso_server *srv, struct iso_guest_entry *g, struct iso_wire_msg *m)
{
	struct iso_wire_exited *ex = &m->u.exited;
	uint64_t cpu_us = ex->user_us + ex->sys_us;

	m->type = ISO_MSG_EXITED;
	m->id = g->id;
	ex->wall_us = now_us() - g->start_us;
	if (ex->outcome != ISO_OUTCOME_LIMIT)
		ex->limit_hit = -1;
	/* SIGXCPU at the soft limit, SIGKILL at the hard one (within a tenth
	 * of a second); in whole seconds, as a limit in seconds times a
	 * million could wrap. */
	if (ex->outcome == ISO_OUTCOME_SIGNALED &&
	    (ex->code == SIGXCPU ||
	     (ex->code == SIGKILL && (cpu_us + 100000) / 1000000 >= g->cpu_limit_s)))
		ex->limit_hit = ISO_LIMIT_CPU;
	else if (ex->outcome == ISO_OUTCOME_SIGNALED && ex->code == SIGXFSZ)
		ex->limit_hit = ISO_LIMIT_FSIZE;
	if (ex->limit_hit >= 0)
		ex->outcome = ISO_OUTCOME_LIMIT;
	log_event(LOG_INFO, "exit id=%u caller=%s guest_uid=%u outcome=%s code=%u wall_ms=%llu",
		  g->id, log_caller(), (unsigned)g->child.lease.uid,
		  iso_outcome_name((enum iso_outcome)ex->outcome), ex->code,
		  (unsigned long long)(ex->wall_us / 1000));
	(void)reply(srv, m, -1);
}

/* The reaper reported: everything of the guest is gone, so the client
 * hears of it now, not once the kernel has torn its namespaces down (and
 * the guest's record leaves its lease file, spawner.c lease_put). */
static void report_guest(struct iso_server *srv, struct iso_guest_entry *g)
{
	struct iso_wire_msg m = { 0 };

	/* A report, or end of file (the reaper died): nothing more comes. */
	(void)epoll_ctl(srv->epfd, EPOLL_CTL_DEL, g->child.report_fd, NULL);
	if (spawn_report(&srv->ctx, &g->child, g->id, &m.u.exited) == 0)
		tell(srv, g, &m);
}

/* The reaper is gone: tell the client if not yet, give back, free the
 * entry. */
static void finish_guest(struct iso_server *srv, struct iso_guest_entry *g)
{
	struct iso_wire_msg m = { 0 };
	int told = g->child.reported; /* spawn_end() may yet read the report */

	(void)epoll_ctl(srv->epfd, EPOLL_CTL_DEL, g->child.pidfd, NULL);
	(void)epoll_ctl(srv->epfd, EPOLL_CTL_DEL, g->child.report_fd, NULL);
	spawn_end(&srv->ctx, &g->child, g->id, &m.u.exited);
	if (!told)
		tell(srv, g, &m);
	g->id = 0;
	srv->nlive--;
}

/* Returns 1 to keep serving, 0 when the client is gone. */
static int handle_socket(struct iso_server *srv)
{
	/* Bounded per wake-up, so guests' exits are not starved; none while
	 * replies wait for the client (flush_outq). */
	for (int round = 0; round < 64 && !srv->outq; round++) {
		int fds[ISO_FDS_MAX];
		size_t nfds;
		unsigned seen;
		char why[256];
		unsigned long started = srv->started;
		struct iso_wire_msg *m = &srv->msg;
		ssize_t len = iso_recv_fds(srv->sock, srv->rbuf, ISO_WIRE_MAX, MSG_DONTWAIT, fds,
					   ISO_FDS_MAX, &nfds, &seen);

		/* Nothing more for now; or the client is gone (end of file, or
		 * the socket failed). */
		if (len <= 0)
			return len == -EAGAIN || len == -EINTR;
		if (seen & (ISO_RECV_TRUNC | ISO_RECV_CTRUNC))
			refuse(srv, 0, EBADMSG, NULL,
			       "request truncated (too large or too many descriptors)");
		else if (iso_wire_decode(srv->rbuf, (size_t)len, m, why, sizeof(why)) < 0)
			refuse(srv, m->id, EINVAL, NULL, why);
		else if (m->type == ISO_MSG_SPAWN)
			handle_spawn(srv, m->id, &m->u.spawn, (size_t)len, fds, nfds);
		else if (m->type == ISO_MSG_KILL)
			handle_kill(srv, m->id, m->u.kill.signal);
		else if (m->type == ISO_MSG_LIST)
			handle_list(srv, m->id);
		else if (m->type == ISO_MSG_STOP)
			handle_stop(srv, m->id, m->u.stop.uid, m->u.stop.pid);
		else if (m->type == ISO_MSG_RULE)
			handle_rule(srv, m->id);
		else
			refuse(srv, m->id, EINVAL, NULL,
			       "only SPAWN, KILL, LIST, STOP and RULE requests are accepted");
		iso_close_fds(fds, nfds);
		/* While that guest starts, with the request's descriptors gone,
		 * the next one's reaper: a connection that has started two
		 * guests will likely start more (the CLI's starts one). */
		if (srv->started > started && srv->started >= 2)
			spawn_spare(&srv->ctx);
	}
	return 1;
}

static void shutdown_all(struct iso_server *srv)
{
	size_t end = 0; /* past the last live guest (find_guest) */

	for (size_t live = 0; end < ISO_GUESTS_MAX && live < srv->nlive; end++)
		live += srv->entries[end].id != 0;
	for (size_t i = 0; i < end; i++)
		if (srv->entries[i].waiting)
			end_wait(srv, &srv->entries[i]);
		else if (srv->entries[i].id)
			spawn_kill(&srv->entries[i].child);
	for (size_t i = 0; i < end; i++)
		if (srv->entries[i].id)
			finish_guest(srv, &srv->entries[i]);
	spawn_release(&srv->ctx);
}

int server_init(struct iso_server *srv, int sock, char *why, size_t n)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = TAG_SOCK };
	sigset_t stop;

	srv->sock = sock;
	srv->slot_watch = -1;
	srv->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (srv->epfd < 0 || epoll_ctl(srv->epfd, EPOLL_CTL_ADD, sock, &ev) < 0)
		return iso_why_errno(why, n, "epoll");
	/* Once it knows its caller the helper is root in all its uids, and
	 * the caller can no longer signal it (creds.c): only root, systemd
	 * or a terminal the caller controls can. These stop it cleanly, read
	 * from the signalfd; the job-control signals of a terminal never stop
	 * it. All six are blocked (the guest's reaper and the guest start
	 * unblocked). */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGHUP);
	srv->sigfd = signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK);
	sigaddset(&stop, SIGTSTP);
	sigaddset(&stop, SIGTTIN);
	sigaddset(&stop, SIGTTOU);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	ev.data.u32 = TAG_SIG;
	if (srv->sigfd < 0 || epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->sigfd, &ev) < 0)
		return iso_why_errno(why, n, "signalfd");
	srv->cgroup.parent_fd = -1;
	return spawn_init(&srv->ctx, &srv->confine, &srv->world, &srv->cgroup, why, n);
}

int server_run(struct iso_server *srv)
{
	struct epoll_event evs[64];
	int serving = 1;

	srv->ctx.caller = srv->caller.uid;
	srv->ctx.caller_net = srv->caller.net_ns;
	while (serving) {
		/* Asleep until an event, or the first waiting spawn's deadline. */
		int nev = epoll_wait(srv->epfd, evs, 64, waitq_timeout_ms(&srv->waitq, now_us()));
		if (nev < 0 && errno != EINTR) {
			log_event(LOG_ERR, "epoll_wait: %s", strerror(errno));
			break;
		}
		for (int i = 0; i < nev && serving; i++) {
			uint32_t tag = evs[i].data.u32;
			if (tag == TAG_SIG) {
				serving = 0;
			} else if (tag == TAG_SLOTS) {
				if (caller_slot_given(srv->slot_watch, srv->caller.uid, "guest"))
					serve_waiting(srv);
			} else if (tag == TAG_SOCK) {
				/* Replies waiting for a client that went: their
				 * send fails, and ends the connection. */
				if ((evs[i].events & (EPOLLOUT | EPOLLHUP | EPOLLERR)) &&
				    srv->outq && flush_outq(srv, 1) < 0)
					serving = 0;
				if (serving && (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
					serving = handle_socket(srv);
			} else if (tag < ISO_GUESTS_MAX && srv->entries[tag].id) {
				finish_guest(srv, &srv->entries[tag]);
			} else if (tag >= TAG_REPORT && tag < TAG_REPORT + ISO_GUESTS_MAX &&
				   srv->entries[tag - TAG_REPORT].id) {
				report_guest(srv, &srv->entries[tag - TAG_REPORT]);
			}
		}
		expire_waiting(srv);
		/* No wake-up for a connection that does not wait: the watch
		 * sees every caller's slots. */
		if (srv->waitq.head == NULL && srv->slot_watch >= 0) {
			(void)epoll_ctl(srv->epfd, EPOLL_CTL_DEL, srv->slot_watch, NULL);
			close(srv->slot_watch);
			srv->slot_watch = -1;
		}
		if (srv->noutq >= OUTQ_MAX)
			serving = 0;
	}
	log_event(LOG_INFO, "disconnect caller=%s live_guests=%zu", log_caller(), srv->nlive);
	shutdown_all(srv);
	return ISO_HELPER_EXIT_OK;
}
