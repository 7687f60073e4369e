/*
 * guest.c - spawning a guest, its status, and its message channel.
 *
 * iso_spawn() is on the benchmarked path: it allocates only the handle and
 * copies nothing of the caller's environment but the pointers to the
 * forwarded entries; the request is built in the connection's own buffer.
 */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "util.h"

/* Point the SPAWN in conn->msg at the spec's data (but its grants:
 * iso__lend), and collect the stdio descriptors to attach. Returns how
 * many there are. */
static unsigned build_spawn(iso_conn *conn, const iso_spec *spec, uint32_t id, int fds[3])
{
	struct iso_wire_spawn *w = &conn->msg.u.spawn;
	unsigned nfds = 0;

	conn->msg.type = ISO_MSG_SPAWN;
	conn->msg.id = id;
	w->program = spec->program;
	if (spec->argv != NULL) {
		memcpy(w->argv, spec->argv, spec->argc * sizeof(char *));
		w->argc = spec->argc;
	} else {
		w->argv[0] = spec->program;
		w->argc = 1;
	}
	w->argv[w->argc] = NULL;
	if (spec->source_set) {
		memcpy(w->forward, spec->forward, spec->nforward * sizeof(char *));
		w->nforward = spec->nforward;
	} else {
		w->nforward = iso__pick_forwarded((const char *const *)environ, w->forward);
	}
	w->forward[w->nforward] = NULL;
	memcpy(w->overrides, spec->overrides, spec->noverrides * sizeof(char *));
	w->noverrides = spec->noverrides;
	w->overrides[w->noverrides] = NULL;
	memcpy(w->limits, spec->limits, sizeof(w->limits));
	w->limits_set = spec->limits_set;
	w->timeout_ms = spec->timeout_ms;
	w->wait_slot_ms = spec->wait_slot_ms;
	w->network = spec->network;
	w->channel = (uint32_t)spec->channel;
	w->stdio_mask = 0;
	for (unsigned i = 0; i < 3; i++) {
		if (spec->stdio[i] == -1)
			continue;
		w->stdio_mask |= 1u << i;
		fds[nfds++] = spec->stdio[i];
	}
	return nfds;
}

/* The descriptors the caller passes at their own numbers, after the
 * stdio and the grants'. Returns 0, or -EINVAL for the channel's fd 3. */
static int pass_fds(const iso_spec *spec, struct iso_wire_spawn *w, int *fds, unsigned *nfds)
{
	w->npass = spec->npass;
	for (uint32_t i = 0; i < spec->npass; i++) {
		if (spec->pass_fds[i] == 3 && spec->channel != ISO_CHANNEL_NONE)
			return iso__fail(-EINVAL, "pass-fd 3: the guest's channel is fd 3");
		w->pass_fds[i] = (uint32_t)spec->pass_fds[i];
		fds[(*nfds)++] = spec->pass_fds[i];
	}
	return 0;
}

ISO_PUBLIC int iso_spawn(iso_conn *conn, const iso_spec *spec, iso_guest **out)
{
	iso_guest *guest;
	int fds[ISO_FDS_MAX];
	unsigned nfds, nstdio, nlent;
	char *labels;
	long len;
	int rc;

	*out = NULL;
	if (conn->broken)
		return iso__fail(-EPIPE, "%s", conn->broken_why);
	if (spec->program == NULL)
		return iso__fail(-EINVAL, "the spec names no program");
	guest = calloc(1, sizeof(*guest));
	if (guest == NULL)
		return iso__fail(-ENOMEM, "out of memory for a guest handle");
	guest->conn = conn;
	guest->id = iso__next_id(conn);
	guest->want_channel = spec->channel;
	guest->channel_fd = -1;
	guest->limit = -1;

	nfds = nstdio = build_spawn(conn, spec, guest->id, fds);
	if ((rc = iso__lend(spec, &conn->msg.u.spawn, fds, &nfds, &labels)) < 0) {
		free(guest);
		return rc;
	}
	nlent = nfds - nstdio;
	len = pass_fds(spec, &conn->msg.u.spawn, fds, &nfds);
	if (len == 0)
		len = iso__encode(conn);
	free(labels);
	if (len < 0) {
		iso_close_fds(fds + nstdio, nlent);
		free(guest);
		return (int)len;
	}
	guest->next = conn->guests;
	if (conn->guests != NULL)
		conn->guests->prev = guest;
	conn->guests = guest;

	conn->pending = guest;
	conn->pending_state = PENDING_WAITING;
	rc = iso__send(conn, (size_t)len, fds, nfds);
	/* The helper has its own copies of what was lent. */
	iso_close_fds(fds + nstdio, nlent);
	/* Events of other guests may come first; they are dispatched on the
	 * way. A signal does not abandon the answer: it would arrive later
	 * with nobody to take it. */
	while (rc == 0 && conn->pending_state == PENDING_WAITING) {
		rc = iso__receive(conn, 1);
		if (rc == -EINTR)
			rc = 0;
	}
	conn->pending = NULL;
	conn->pending_state = PENDING_NONE;
	if (rc == 0)
		rc = conn->pending_result;
	if (rc < 0) {
		iso__guest_release(guest);
		return rc == -EPROTO ? -EIO : rc;
	}
	*out = guest;
	return 0;
}

/* Milliseconds until deadline, rounded up, for poll(); 0 once passed. */
static int ms_left(const struct timespec *deadline)
{
	struct timespec now;
	int64_t ns;

	clock_gettime(CLOCK_MONOTONIC, &now);
	ns = (int64_t)(deadline->tv_sec - now.tv_sec) * 1000000000 +
	     (deadline->tv_nsec - now.tv_nsec);
	return ns <= 0 ? 0 : (int)((ns + 999999) / 1000000);
}

static void deadline_after(struct timespec *deadline, int timeout_ms)
{
	clock_gettime(CLOCK_MONOTONIC, deadline);
	deadline->tv_sec += timeout_ms / 1000;
	deadline->tv_nsec += (long)(timeout_ms % 1000) * 1000000;
	if (deadline->tv_nsec >= 1000000000) {
		deadline->tv_sec++;
		deadline->tv_nsec -= 1000000000;
	}
}

ISO_PUBLIC int iso_wait(iso_guest *guest, int timeout_ms)
{
	iso_conn *conn = guest->conn;
	struct timespec deadline;

	if (guest->outcome != ISO_OUTCOME_RUNNING)
		return 0;
	if (conn->broken)
		return iso__fail(-EPIPE, "guest %d: status unknown: %s", (int)guest->pid,
				 conn->broken_why);
	if (timeout_ms > 0)
		deadline_after(&deadline, timeout_ms);
	for (;;) {
		int rc;

		/* Without a deadline a blocking receive is the wait: one
		 * syscall per message instead of poll() and recvmsg(). */
		if (timeout_ms >= 0) {
			struct pollfd p = { .fd = conn->fd, .events = POLLIN };

			rc = poll(&p, 1, timeout_ms > 0 ? ms_left(&deadline) : 0);
			if (rc < 0)
				/* EINTR, or a transient ENOMEM: either way the
				 * call may simply be repeated. */
				return iso__fail(-EINTR, "waiting for guest %d: %s",
						 (int)guest->pid, strerror(errno));
			if (rc == 0)
				return 1;
		}
		rc = iso__receive(conn, timeout_ms < 0);
		if (rc == -EINTR)
			return iso__fail(-EINTR, "waiting for guest %d: %s", (int)guest->pid,
					 strerror(EINTR));
		if (rc < 0 && rc != -EAGAIN)
			return -EPIPE; /* the helper is gone or unusable */
		if (guest->outcome != ISO_OUTCOME_RUNNING)
			return 0;
	}
}

ISO_PUBLIC int iso_kill(iso_guest *guest, int sig)
{
	iso_conn *conn = guest->conn;
	long len;

	if (sig < 1 || sig > 64)
		return iso__fail(-EINVAL, "signal %d: not in 1..64", sig);
	/* The C library's own (thread cancellation, set*id): the guest's
	 * reaper, which forwards every other signal, cannot take them. */
	if (sig == 32 || sig == 33)
		return iso__fail(-EINVAL, "signal %d: reserved by the C library", sig);
	if (guest->outcome != ISO_OUTCOME_RUNNING)
		return 0;
	if (conn->broken)
		return iso__fail(-EPIPE, "%s", conn->broken_why);
	conn->msg.type = ISO_MSG_KILL;
	conn->msg.id = guest->id;
	conn->msg.u.kill.signal = (uint32_t)sig;
	len = iso__encode(conn);
	if (len < 0 || iso__send(conn, (size_t)len, NULL, 0) < 0)
		return -EPIPE; /* iso_last_error() has the cause */
	return 0;
}

void iso__guest_release(iso_guest *guest)
{
	iso_conn *conn = guest->conn;

	if (guest->prev != NULL)
		guest->prev->next = guest->next;
	else
		conn->guests = guest->next;
	if (guest->next != NULL)
		guest->next->prev = guest->prev;
	if (guest->channel_fd >= 0)
		close(guest->channel_fd);
	free(guest);
}

ISO_PUBLIC void iso_guest_free(iso_guest *guest)
{
	if (guest == NULL)
		return;
	/* The helper reaps it; its EXITED is then dropped. A forked child
	 * frees its copy only: the guest is the owner's. */
	if (guest->outcome == ISO_OUTCOME_RUNNING && !guest->conn->broken &&
	    guest->conn->owner == getpid())
		iso_kill(guest, SIGKILL);
	iso__guest_release(guest);
}

ISO_PUBLIC pid_t iso_guest_pid(const iso_guest *guest)
{
	return guest->pid;
}

ISO_PUBLIC uid_t iso_guest_uid(const iso_guest *guest)
{
	return guest->uid;
}

ISO_PUBLIC const char *iso_guest_notes(const iso_guest *guest)
{
	return guest->notes;
}

ISO_PUBLIC enum iso_outcome iso_guest_outcome(const iso_guest *guest)
{
	return guest->outcome;
}

ISO_PUBLIC int iso_guest_code(const iso_guest *guest)
{
	return guest->code;
}

ISO_PUBLIC enum iso_stage iso_guest_stage(const iso_guest *guest)
{
	return guest->stage;
}

ISO_PUBLIC const char *iso_guest_reason(const iso_guest *guest)
{
	return guest->outcome == ISO_OUTCOME_FAILED && guest->reason[0] != '\0' ? guest->reason
										: NULL;
}

ISO_PUBLIC int iso_guest_limit(const iso_guest *guest)
{
	return guest->limit;
}

ISO_PUBLIC void iso_guest_usage(const iso_guest *guest, uint64_t *wall_us, uint64_t *user_us,
				uint64_t *sys_us, uint64_t *maxrss_kib)
{
	if (wall_us != NULL)
		*wall_us = guest->wall_us;
	if (user_us != NULL)
		*user_us = guest->user_us;
	if (sys_us != NULL)
		*sys_us = guest->sys_us;
	if (maxrss_kib != NULL)
		*maxrss_kib = guest->maxrss_kib;
}

ISO_PUBLIC int iso_guest_cgroup_usage(const iso_guest *guest, uint64_t *cpu_us,
				      uint64_t *memory_peak)
{
	if (cpu_us != NULL)
		*cpu_us = guest->cg_cpu_us;
	if (memory_peak != NULL)
		*memory_peak = guest->cg_memory_peak;
	return guest->cgroup ? 0
			     : iso__fail(-ENODATA, "the guest ran without a cgroup%s%s",
					 guest->notes[0] ? ": " : "", guest->notes);
}

ISO_PUBLIC unsigned iso_guest_limits_reached(const iso_guest *guest)
{
	return guest->reached;
}

ISO_PUBLIC int iso_guest_exit_code(const iso_guest *guest)
{
	switch (guest->outcome) {
	case ISO_OUTCOME_EXITED:
		return guest->code;
	case ISO_OUTCOME_SIGNALED:
	case ISO_OUTCOME_LIMIT:
		return 128 + guest->code;
	case ISO_OUTCOME_TIMED_OUT:
		return 124;
	case ISO_OUTCOME_FAILED:
		/* Not found, not executable: the program's, as env(1) says;
		 * what failed before it (its working directory, say) is
		 * isospawn's. */
		if (guest->stage != ISO_STAGE_EXEC)
			return 125;
		if (guest->code == ENOENT)
			return 127;
		if (guest->code == EACCES || guest->code == ENOEXEC || guest->code == EISDIR ||
		    guest->code == ETXTBSY || guest->code == EPERM)
			return 126;
		return 125;
	default:
		return 125; /* still running, or its end unknown */
	}
}

ISO_PUBLIC int iso_channel_fd(const iso_guest *guest)
{
	return guest->channel_fd;
}

/* The channel's end, once writable (or broken): 0, or -1 with errno. */
static int wait_writable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };

	while (poll(&p, 1, -1) < 0)
		if (errno != EINTR)
			return -1;
	return 0;
}

ISO_PUBLIC int iso_send(iso_guest *guest, const void *buf, size_t len)
{
	int stream = guest->want_channel == ISO_CHANNEL_STREAM;
	size_t done = 0;
	ssize_t n;

	if (guest->channel_fd < 0)
		return iso__fail(-ENOTCONN, "guest %d has no channel", (int)guest->pid);
	/* The receiver could not tell an empty message from end-of-channel. */
	if (len == 0 && !stream)
		return iso__fail(-EINVAL, "empty message: reads as end of channel");
	if (len > ISO_MESSAGE_MAX && !stream)
		return iso__fail(-EMSGSIZE, "message of %zu bytes, at most %d", len,
				 ISO_MESSAGE_MAX);
	while (done < len || (len == 0 && !stream)) {
		n = send(guest->channel_fd, (const char *)buf + done, len - done, MSG_NOSIGNAL);
		if (n >= 0) {
			done += (size_t)n;
			continue;
		}
		if (errno == EINTR)
			continue;
		/* Half a stream written: the rest, whatever O_NONBLOCK says,
		 * or the caller could not tell how much went. */
		if ((errno == EAGAIN || errno == EWOULDBLOCK) && done > 0 &&
		    wait_writable(guest->channel_fd) == 0)
			continue;
		/* The caller chose not to wait for a guest that does not
		 * read: O_NONBLOCK, or an SO_SNDTIMEO that ran out. */
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return iso__fail(
			    -EAGAIN,
			    "channel to guest %d is full (the guest has not read what was sent)",
			    (int)guest->pid);
		if (errno == EMSGSIZE)
			return iso__fail(-EMSGSIZE,
					 "message of %zu bytes does not fit the channel's buffer",
					 len);
		return iso__fail(-EPIPE, "channel to guest %d: %s", (int)guest->pid,
				 strerror(errno));
	}
	return 0;
}

/* One recv() of what is there, without waiting: the next message peeked
 * (its whole length, whatever cap) and taken only when it fits cap, so a
 * message too large stays for a larger buffer; on a stream, bytes taken;
 * with cap 0, the next message's length, or the bytes a stream holds. */
static ssize_t take(int fd, int stream, void *buf, size_t cap)
{
	ssize_t n;
	int waiting;
	char first;

	if (stream && cap == 0) {
		n = recv(fd, &first, 1, MSG_PEEK | MSG_DONTWAIT);
		return n <= 0 ? n : ioctl(fd, FIONREAD, &waiting) < 0 ? -1 : waiting;
	}
	if (stream)
		return recv(fd, buf, cap, MSG_DONTWAIT);
	n = recv(fd, buf, cap, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
	/* Taken with no buffer: it is in buf already. */
	if (n > 0 && cap > 0 && (size_t)n <= cap && recv(fd, NULL, 0, MSG_TRUNC | MSG_DONTWAIT) < 0)
		return -1;
	return n;
}

ISO_PUBLIC long iso_recv(iso_guest *guest, void *buf, size_t cap, int timeout_ms)
{
	int stream = guest->want_channel == ISO_CHANNEL_STREAM;
	struct timespec deadline;

	if (guest->channel_fd < 0)
		return iso__fail(-ENOTCONN, "guest %d has no channel", (int)guest->pid);
	if (timeout_ms > 0)
		deadline_after(&deadline, timeout_ms);
	for (;;) {
		/* Tried before poll(): a conversation that keeps the channel
		 * busy then costs no wait. */
		ssize_t n = take(guest->channel_fd, stream, buf, cap);

		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
			struct pollfd p = { .fd = guest->channel_fd, .events = POLLIN };
			int left = timeout_ms > 0 ? ms_left(&deadline) : timeout_ms == 0 ? 0 : -1;
			int rc = poll(&p, 1, left);

			if (rc < 0 && errno != EINTR)
				return iso__fail(-ENOTCONN, "channel to guest %d: %s",
						 (int)guest->pid, strerror(errno));
			if (rc == 0)
				return ISO_RECV_TIMEOUT;
			continue;
		}
		if (n < 0 && errno == ECONNRESET)
			return ISO_RECV_EOF;
		if (n < 0)
			return iso__fail(-ENOTCONN, "channel to guest %d: %s", (int)guest->pid,
					 strerror(errno));
		/* End of file, or an empty message. */
		if (n == 0)
			return ISO_RECV_EOF;
		if (!stream && cap > 0 && (size_t)n > cap)
			return iso__fail(-EMSGSIZE,
					 "message of %zd bytes, larger than the %zu-byte buffer "
					 "(it stays: receive it with a buffer that large)",
					 n, cap);
		return (long)n;
	}
}
