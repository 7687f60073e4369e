/*
 * loop.c - the helper's event loop: requests in, guests out, status back.
 *
 * Single-threaded: epoll over the request socket, one pidfd per guest and a
 * signalfd; timeouts come from the nearest deadline. Replies are sent
 * without blocking and queued when the client is slow, so a client that
 * stops reading cannot stop timeouts from being enforced.
 *
 * Invariants:
 *  - Every fd received from the client is closed once the request is done.
 *  - A guest's lease is returned only after its reaper (and with it its
 *    whole PID namespace) is gone; its scratch directory is removed then.
 *  - When the client goes away, every guest is killed and cleaned up
 *    before the helper exits.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "hygiene.h"
#include "log.h"
#include "loop.h"
#include "scratch.h"

#define TAG_SOCK UINT32_MAX
#define TAG_SIG (UINT32_MAX - 1)
#define OUTQ_MAX 65536 /* queued replies before the client counts as gone */
#define CMSG_FDS_MAX 3

struct iso_guest_slot {
	uint32_t id; /* 0 = free */
	struct iso_lease lease;
	struct iso_child child;
	uint64_t start_us, deadline_us; /* deadline 0 = none */
	uint64_t cpu_limit_s;
	int timed_out;
	int keep_scratch;
};

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

static int send_now(struct iso_server *srv, const uint8_t *buf, size_t len,
		    int fd)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };

	if (fd >= 0) {
		struct cmsghdr *c;
		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = sizeof(ctl.buf);
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(c), &fd, sizeof(int));
	}
	if (sendmsg(srv->sock, &mh, MSG_DONTWAIT | MSG_NOSIGNAL) < 0)
		return -errno;
	return 0;
}

/* Send, or queue behind what is already waiting. Takes ownership of fd. */
static int reply(struct iso_server *srv, const struct iso_wire_msg *msg, int fd)
{
	long len = iso_wire_encode(msg, srv->wbuf, ISO_WIRE_MAX);
	struct iso_outq *q, **tail;
	int rc = -EAGAIN;

	if (len < 0) {
		log_event(LOG_ERR, "internal: cannot encode reply type %d: %s",
			  msg->type, strerror((int)-len));
		if (fd >= 0)
			close(fd);
		return (int)len;
	}
	if (!srv->outq)
		rc = send_now(srv, srv->wbuf, (size_t)len, fd);
	if (rc == 0 || (rc != -EAGAIN && rc != -ENOBUFS)) {
		if (fd >= 0)
			close(fd);
		return rc;
	}
	if (srv->noutq >= OUTQ_MAX || !(q = malloc(sizeof(*q) + (size_t)len))) {
		if (fd >= 0)
			close(fd);
		return -ENOBUFS;
	}
	q->next = NULL;
	q->fd = fd;
	q->len = (size_t)len;
	memcpy(q->data, srv->wbuf, (size_t)len);
	for (tail = &srv->outq; *tail; tail = &(*tail)->next)
		;
	*tail = q;
	srv->noutq++;
	struct epoll_event ev = { .events = EPOLLIN | EPOLLOUT, .data.u32 = TAG_SOCK };
	(void)epoll_ctl(srv->epfd, EPOLL_CTL_MOD, srv->sock, &ev);
	return 0;
}

static int flush_outq(struct iso_server *srv)
{
	while (srv->outq) {
		struct iso_outq *q = srv->outq;
		int rc = send_now(srv, q->data, q->len, q->fd);
		if (rc == -EAGAIN || rc == -ENOBUFS)
			return 0;
		if (q->fd >= 0)
			close(q->fd);
		srv->outq = q->next;
		srv->noutq--;
		free(q);
		if (rc < 0)
			return rc;
	}
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = TAG_SOCK };
	(void)epoll_ctl(srv->epfd, EPOLL_CTL_MOD, srv->sock, &ev);
	return 0;
}

static void refuse(struct iso_server *srv, uint32_t id, int err,
		   const char *program, const char *reason)
{
	struct iso_wire_msg m = { .type = ISO_MSG_REFUSED, .id = id };
	char qprog[256], qwhy[600];

	m.u.refused.err = (uint32_t)(err < 0 ? -err : err);
	m.u.refused.message = reason;
	log_quote(qprog, sizeof(qprog), program ? program : "-");
	log_quote(qwhy, sizeof(qwhy), reason);
	log_event(LOG_NOTICE, "refuse id=%u caller=%u rule=" ISO_RULE_FMT
		  " program=\"%s\" reason=\"%s\"", id, (unsigned)srv->caller.uid,
		  ISO_RULE_ARGS(srv->rule), qprog, qwhy);
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

static struct iso_guest_slot *find_guest(struct iso_server *srv, uint32_t id)
{
	for (size_t i = 0; i < srv->high; i++)
		if (srv->slots[i].id == id)
			return &srv->slots[i];
	return NULL;
}

static int lease_get(struct iso_server *srv, struct iso_lease *lease,
		     char *why, size_t n)
{
	if (srv->nidle > 0) {
		*lease = srv->idle[--srv->nidle];
		return 0;
	}
	return lease_acquire(srv->rule, lease, why, n);
}

/* The guest's PID namespace is gone, so nothing runs under this uid any
 * more: keep the lease for the next spawn, or give it back. */
static void lease_put(struct iso_server *srv, struct iso_lease *lease)
{
	if (srv->nidle < ISO_IDLE_LEASES) {
		srv->idle[srv->nidle++] = *lease;
	} else {
		scratch_release(lease->uid);
		lease_release(lease);
	}
	lease->lock_fd = -1;
}

static int recv_fds(struct msghdr *mh, int *fds, size_t *nfds)
{
	*nfds = 0;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
		size_t count;
		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < count; i++) {
			int fd;
			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (*nfds < CMSG_FDS_MAX)
				fds[(*nfds)++] = fd;
			else
				close(fd);
		}
	}
	return (mh->msg_flags & MSG_CTRUNC) ? -EBADMSG : 0;
}

static void close_fds(int *fds, size_t nfds)
{
	for (size_t i = 0; i < nfds; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

static int start_guest(struct iso_server *srv, uint32_t id,
		       struct iso_plan *plan, struct iso_guest_slot *slot,
		       int *client_chan, char *why, size_t n)
{
	char scratch[ISO_SCRATCH_PATH_MAX];
	int chan[2] = { -1, -1 };
	int rc;

	if ((rc = lease_get(srv, &slot->lease, why, n)) < 0)
		return rc;
	if ((rc = scratch_create(slot->lease.uid, scratch, sizeof(scratch), why, n)) < 0)
		goto fail_lease;
	if (plan->channel &&
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan) < 0) {
		rc = -errno;
		snprintf(why, n, "channel socketpair: %s", strerror(errno));
		goto fail_scratch;
	}
	rc = spawn_guest(&srv->ctx, plan, slot->lease.uid, scratch, chan[1],
			 &slot->child, why, n);
	if (chan[1] >= 0)
		close(chan[1]);
	if (rc < 0) {
		if (chan[0] >= 0)
			close(chan[0]);
		goto fail_scratch;
	}
	struct epoll_event ev = { .events = EPOLLIN,
				  .data.u32 = (uint32_t)(slot - srv->slots) };
	if (epoll_ctl(srv->epfd, EPOLL_CTL_ADD, slot->child.pidfd, &ev) < 0) {
		/* Cannot watch it, so it must not run. */
		rc = -errno;
		snprintf(why, n, "epoll: %s", strerror(errno));
		syscall(SYS_pidfd_send_signal, slot->child.pidfd, SIGKILL, NULL, 0);
		waitpid(slot->child.pid, NULL, 0);
		close(slot->child.pidfd);
		close(slot->child.report_fd);
		if (chan[0] >= 0)
			close(chan[0]);
		goto fail_scratch;
	}
	slot->id = id;
	slot->start_us = now_us();
	slot->deadline_us = plan->timeout_ms ? slot->start_us + plan->timeout_ms * 1000 : 0;
	slot->cpu_limit_s = plan->limits[ISO_LIMIT_CPU];
	slot->timed_out = 0;
	slot->keep_scratch = srv->rule->keep_scratch;
	*client_chan = chan[0];
	return 0;

fail_scratch:
	scratch_remove(slot->lease.uid, 0, id);
fail_lease:
	lease_put(srv, &slot->lease);
	return rc;
}

static void handle_spawn(struct iso_server *srv, uint32_t id,
			 const struct iso_wire_spawn *req, int *fds, size_t nfds)
{
	struct iso_wire_msg m = { .type = ISO_MSG_SPAWNED, .id = id };
	struct iso_guest_slot *slot = NULL;
	struct iso_plan plan;
	char why[512], names[512], qprog[256];
	size_t want = (size_t)__builtin_popcount(req->stdio_mask);
	int chan = -1, rc;

	if (nfds != want) {
		snprintf(why, sizeof(why), "request names %zu stdio descriptors but carries %zu",
			 want, nfds);
		refuse(srv, id, EINVAL, req->program, why);
		return;
	}
	/* Id 0 marks a free slot: a guest with it would be untracked. */
	if (id == 0) {
		refuse(srv, id, EINVAL, req->program, "request id 0 is reserved");
		return;
	}
	if (find_guest(srv, id)) {
		refuse(srv, id, EINVAL, req->program, "request id already names a live guest");
		return;
	}
	for (size_t i = 0; i < ISO_GUESTS_MAX && !slot; i++)
		if (srv->slots[i].id == 0)
			slot = &srv->slots[i];
	if (!slot) {
		refuse(srv, id, EAGAIN, req->program, "too many live guests on this connection");
		return;
	}
	if ((rc = request_decide(srv->rule, req, &plan, why, sizeof(why))) < 0) {
		refuse(srv, id, rc, req->program, why);
		return;
	}
	for (int i = 0, f = 0; i < 3; i++)
		plan.stdio[i] = (req->stdio_mask & (1u << i)) ? fds[f++] : -1;

	rc = start_guest(srv, id, &plan, slot, &chan, why, sizeof(why));
	plan_release(&plan);
	if (rc < 0) {
		refuse(srv, id, rc, req->program, why);
		return;
	}
	if ((size_t)(slot - srv->slots) >= srv->high)
		srv->high = (size_t)(slot - srv->slots) + 1;
	srv->nlive++;

	log_names(names, sizeof(names), req->overrides);
	log_quote(qprog, sizeof(qprog), req->program);
	log_event(LOG_INFO, "spawn id=%u caller=%u rule=" ISO_RULE_FMT
		  " program=\"%s\" overrides=%s guest_uid=%u pid=%d network=%s",
		  id, (unsigned)srv->caller.uid, ISO_RULE_ARGS(srv->rule), qprog,
		  names, (unsigned)slot->lease.uid, (int)slot->child.pid,
		  plan.network_none ? "none" : "host");
	m.u.spawned.pid = (uint32_t)slot->child.pid;
	m.u.spawned.uid = (uint32_t)slot->lease.uid;
	m.u.spawned.notes = srv->confine.notes[0] ? srv->confine.notes : NULL;
	(void)reply(srv, &m, chan);
}

static void handle_kill(struct iso_server *srv, uint32_t id, uint32_t sig)
{
	struct iso_guest_slot *g = find_guest(srv, id);

	/* An ended guest's id is gone: killing it is harmless, and a pidfd
	 * can never reach a recycled pid. */
	if (!g)
		return;
	log_event(LOG_INFO, "kill id=%u caller=%u guest_uid=%u signal=%u", id,
		  (unsigned)srv->caller.uid, (unsigned)g->lease.uid, sig);
	(void)syscall(SYS_pidfd_send_signal, g->child.pidfd, (int)sig, NULL, 0);
}

static void classify(const struct iso_guest_slot *g, int status,
		     const struct rusage *ru, struct iso_wire_exited *ex)
{
	struct iso_report rep;
	int have = spawn_read_report(g->child.report_fd, &rep) == 0;

	ex->limit_hit = -1;
	ex->stage = ISO_STAGE_NONE;
	if (have) {
		ex->outcome = rep.outcome;
		ex->code = (uint32_t)rep.code;
		ex->stage = rep.stage;
		ex->user_us = rep.user_us;
		ex->sys_us = rep.sys_us;
		ex->maxrss_kib = rep.maxrss_kib;
	} else {
		/* The reaper died without a report: killed, with its guest,
		 * by a timeout, a kill request or the OOM killer. */
		ex->outcome = ISO_OUTCOME_SIGNALED;
		ex->code = WIFSIGNALED(status) ? (uint32_t)WTERMSIG(status) : SIGKILL;
		ex->user_us = (uint64_t)ru->ru_utime.tv_sec * 1000000 + (uint64_t)ru->ru_utime.tv_usec;
		ex->sys_us = (uint64_t)ru->ru_stime.tv_sec * 1000000 + (uint64_t)ru->ru_stime.tv_usec;
		ex->maxrss_kib = (uint64_t)ru->ru_maxrss;
	}
	if (g->timed_out) {
		ex->outcome = ISO_OUTCOME_TIMED_OUT;
		ex->code = SIGKILL;
	} else if (ex->outcome == ISO_OUTCOME_SIGNALED) {
		/* SIGXCPU at the soft limit, SIGKILL at the hard one. */
		uint64_t cpu_us = ex->user_us + ex->sys_us;
		if (ex->code == SIGXCPU ||
		    (ex->code == SIGKILL && g->cpu_limit_s != UINT64_MAX &&
		     cpu_us + 100000 >= g->cpu_limit_s * 1000000)) {
			ex->outcome = ISO_OUTCOME_LIMIT;
			ex->limit_hit = ISO_LIMIT_CPU;
		} else if (ex->code == SIGXFSZ) {
			ex->outcome = ISO_OUTCOME_LIMIT;
			ex->limit_hit = ISO_LIMIT_FSIZE;
		}
	}
	if (have && rep.outcome == ISO_OUTCOME_FAILED) {
		char qwhy[4 * sizeof(rep.reason)];

		log_quote(qwhy, sizeof(qwhy), rep.reason);
		log_event(LOG_NOTICE, "start-failed id=%u guest_uid=%u stage=%s errno=%d reason=\"%s\"",
			  g->id, (unsigned)g->lease.uid, iso_stage_name(rep.stage),
			  rep.code, qwhy);
	}
}

static const char *const outcome_names[] = {
	"running", "exited", "signaled", "timed_out", "limit", "failed",
};

/* The reaper has exited: report, clean up, free the slot. */
static void finish_guest(struct iso_server *srv, struct iso_guest_slot *g)
{
	struct iso_wire_msg m = { .type = ISO_MSG_EXITED, .id = g->id };
	struct iso_wire_exited *ex = &m.u.exited;
	struct rusage ru = { 0 };
	int status = 0;

	while (wait4(g->child.pid, &status, 0, &ru) < 0 && errno == EINTR)
		;
	classify(g, status, &ru, ex);
	ex->wall_us = now_us() - g->start_us;
	(void)epoll_ctl(srv->epfd, EPOLL_CTL_DEL, g->child.pidfd, NULL);
	close(g->child.pidfd);
	close(g->child.report_fd);
	scratch_remove(g->lease.uid, g->keep_scratch, g->id);
	log_event(LOG_INFO, "exit id=%u caller=%u guest_uid=%u outcome=%s code=%u wall_ms=%llu",
		  g->id, (unsigned)srv->caller.uid, (unsigned)g->lease.uid,
		  outcome_names[ex->outcome], ex->code,
		  (unsigned long long)(ex->wall_us / 1000));
	lease_put(srv, &g->lease);
	g->id = 0;
	srv->nlive--;
	(void)reply(srv, &m, -1);
}

/* Returns 1 to keep serving, 0 when the client is gone. */
static int handle_socket(struct iso_server *srv)
{
	/* Bounded per wake-up, so guests' exits are not starved. */
	for (int round = 0; round < 64; round++) {
		union {
			char buf[CMSG_SPACE(CMSG_FDS_MAX * sizeof(int))];
			struct cmsghdr align;
		} ctl;
		struct iovec iov = { .iov_base = srv->rbuf, .iov_len = ISO_WIRE_MAX };
		struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
				     .msg_control = ctl.buf,
				     .msg_controllen = sizeof(ctl.buf) };
		int fds[CMSG_FDS_MAX];
		size_t nfds;
		char why[256];
		ssize_t len = recvmsg(srv->sock, &mh, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);

		if (len < 0)
			return errno == EAGAIN || errno == EINTR;
		if (len == 0)
			return 0;
		if (recv_fds(&mh, fds, &nfds) < 0 || (mh.msg_flags & MSG_TRUNC)) {
			close_fds(fds, nfds);
			refuse(srv, 0, EBADMSG, NULL, "request truncated (too large or too many descriptors)");
			continue;
		}
		if (iso_wire_decode(srv->rbuf, (size_t)len, srv->msg, why, sizeof(why)) < 0) {
			close_fds(fds, nfds);
			refuse(srv, srv->msg->id, EINVAL, NULL, why);
			continue;
		}
		switch (srv->msg->type) {
		case ISO_MSG_SPAWN:
			handle_spawn(srv, srv->msg->id, &srv->msg->u.spawn, fds, nfds);
			break;
		case ISO_MSG_KILL:
			handle_kill(srv, srv->msg->id, srv->msg->u.kill.signal);
			break;
		default:
			refuse(srv, srv->msg->id, EINVAL, NULL,
			       "only SPAWN and KILL requests are accepted");
			break;
		}
		close_fds(fds, nfds);
	}
	return 1;
}

static int next_timeout_ms(struct iso_server *srv, uint64_t now)
{
	uint64_t best = UINT64_MAX;

	for (size_t i = 0; i < srv->high; i++) {
		struct iso_guest_slot *g = &srv->slots[i];
		if (g->id && g->deadline_us && !g->timed_out && g->deadline_us < best)
			best = g->deadline_us;
	}
	if (best == UINT64_MAX)
		return -1;
	if (best <= now)
		return 0;
	/* A deadline days away is reached by waking up on the way. */
	return (best - now) / 1000 >= INT_MAX ? INT_MAX : (int)((best - now + 999) / 1000);
}

static void expire(struct iso_server *srv, uint64_t now)
{
	for (size_t i = 0; i < srv->high; i++) {
		struct iso_guest_slot *g = &srv->slots[i];
		if (g->id && g->deadline_us && !g->timed_out && g->deadline_us <= now) {
			g->timed_out = 1;
			/* Killing the reaper ends the whole namespace. */
			(void)syscall(SYS_pidfd_send_signal, g->child.pidfd, SIGKILL, NULL, 0);
		}
	}
}

static void shutdown_all(struct iso_server *srv)
{
	for (size_t i = 0; i < srv->high; i++)
		if (srv->slots[i].id)
			(void)syscall(SYS_pidfd_send_signal, srv->slots[i].child.pidfd,
				      SIGKILL, NULL, 0);
	for (size_t i = 0; i < srv->high; i++)
		if (srv->slots[i].id)
			finish_guest(srv, &srv->slots[i]);
	while (srv->nidle > 0) {
		struct iso_lease *l = &srv->idle[--srv->nidle];
		scratch_release(l->uid);
		lease_release(l);
	}
}

int server_init(struct iso_server *srv, int sock, char *why, size_t n)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = TAG_SOCK };
	sigset_t stop;

	srv->sock = sock;
	srv->slots = calloc(ISO_GUESTS_MAX, sizeof(*srv->slots));
	srv->rbuf = malloc(ISO_WIRE_MAX);
	srv->wbuf = malloc(ISO_WIRE_MAX);
	srv->msg = malloc(sizeof(*srv->msg));
	if (!srv->slots || !srv->rbuf || !srv->wbuf || !srv->msg) {
		snprintf(why, n, "out of memory");
		return -ENOMEM;
	}
	srv->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (srv->epfd < 0 || epoll_ctl(srv->epfd, EPOLL_CTL_ADD, sock, &ev) < 0) {
		snprintf(why, n, "epoll: %s", strerror(errno));
		return -errno;
	}
	/* The caller may signal its own helper; stop cleanly when asked. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigaddset(&stop, SIGHUP);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	srv->sigfd = signalfd(-1, &stop, SFD_CLOEXEC | SFD_NONBLOCK);
	ev.data.u32 = TAG_SIG;
	if (srv->sigfd < 0 || epoll_ctl(srv->epfd, EPOLL_CTL_ADD, srv->sigfd, &ev) < 0) {
		snprintf(why, n, "signalfd: %s", strerror(errno));
		return -errno;
	}
	srv->ctx.confine = &srv->confine;
	srv->ctx.devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	srv->ctx.helper_pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (srv->ctx.devnull < 0 || srv->ctx.helper_pidfd < 0) {
		snprintf(why, n, "/dev/null or pidfd_open: %s", strerror(errno));
		return -errno;
	}
	return 0;
}

int server_run(struct iso_server *srv)
{
	struct epoll_event evs[64];
	int serving = 1;

	while (serving) {
		int nev = epoll_wait(srv->epfd, evs, 64, next_timeout_ms(srv, now_us()));
		if (nev < 0 && errno != EINTR) {
			log_event(LOG_ERR, "epoll_wait: %s", strerror(errno));
			break;
		}
		for (int i = 0; i < nev && serving; i++) {
			uint32_t tag = evs[i].data.u32;
			if (tag == TAG_SIG) {
				serving = 0;
			} else if (tag == TAG_SOCK) {
				if ((evs[i].events & EPOLLOUT) && flush_outq(srv) < 0)
					serving = 0;
				if (serving && (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
					serving = handle_socket(srv);
			} else if (tag < ISO_GUESTS_MAX && srv->slots[tag].id) {
				finish_guest(srv, &srv->slots[tag]);
			}
		}
		expire(srv, now_us());
		if (srv->noutq >= OUTQ_MAX)
			serving = 0;
	}
	log_event(LOG_INFO, "disconnect caller=%u live_guests=%zu",
		  (unsigned)srv->caller.uid, srv->nlive);
	shutdown_all(srv);
	return ISO_HELPER_EXIT_OK;
}
