/*
 * conn.c - the connection to one helper: reaching it (isospawn.socket, or
 * the setuid helper started here), and the conversation.
 *
 * Invariants:
 *  - The helper MUST NOT see the caller's environment or descriptors: it is
 *    started with an empty environment and only its socket, on fd 3, beyond
 *    the inherited stdio.
 *  - Every descriptor that arrives with a message MUST be either stored in
 *    a guest handle or closed before the message is forgotten.
 *  - Anything the helper sends that this side does not expect breaks the
 *    connection for good (see client.h): a reply cannot be matched to a
 *    request once the conversation is out of step.
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client.h"
#include "util.h"

#if !defined(ISO_HELPER_PATH) || !defined(ISO_SOCKET_PATH)
#error "ISO_HELPER_PATH and ISO_SOCKET_PATH must be defined by the build"
#endif

/* One fd is the most a message carries (SPAWNED's channel); the room for a
 * few more lets a surplus be seen, and closed, rather than truncated. */
#define RECV_FDS_MAX ISO_FDS_MAX

/*
 * Mark the connection unusable and tell the helper so: after shutdown() it
 * reads end-of-file even if a forked child of the caller still holds a copy
 * of the socket, and kills this connection's guests.
 */
__attribute__((format(printf, 3, 4))) static int break_conn(iso_conn *conn, int code,
							    const char *fmt, ...)
{
	va_list ap;

	if (!conn->broken) {
		va_start(ap, fmt);
		vsnprintf(conn->broken_why, sizeof(conn->broken_why), fmt, ap);
		va_end(ap);
		conn->broken = 1;
		shutdown(conn->fd, SHUT_RDWR);
	}
	return iso__fail(code, "%s", conn->broken_why);
}

/*
 * Wait for the helper to exit, through its pidfd where there is one: the
 * caller may have reaped it already (a SIGCHLD handler's waitpid(-1)),
 * and its pid may since be another child's, which a wait by pid would
 * wait for and reap. Fills *info (si_pid 0 if the helper was reaped
 * elsewhere or cannot be waited for: SIGCHLD ignored by the caller).
 */
static void reap_helper(iso_conn *conn, siginfo_t *info)
{
	int rc;

	memset(info, 0, sizeof(*info));
	if (conn->helper_pid < 0)
		return;
	do
		rc = conn->helper_pidfd >= 0
			 ? waitid(P_PIDFD, (id_t)conn->helper_pidfd, info, WEXITED)
			 : waitid(P_PID, (id_t)conn->helper_pid, info, WEXITED);
	while (rc < 0 && errno == EINTR);
	if (rc < 0)
		info->si_pid = 0;
	conn->helper_pid = -1;
}

static void describe_status(const siginfo_t *info, char *buf, size_t n)
{
	if (info->si_pid == 0)
		snprintf(buf, n, "status unknown");
	else if (info->si_code == CLD_EXITED)
		snprintf(buf, n, "exit status %d", info->si_status);
	else
		snprintf(buf, n, "killed by signal %d", info->si_status);
}

/*
 * One datagram into conn->buf, its descriptors into fds (up to
 * RECV_FDS_MAX; any others are closed). Returns its length; 0 end-of-file;
 * -EAGAIN (only if !wait); -EINTR; -EPROTO with why set (descriptors then
 * closed); another -errno.
 */
static long receive_datagram(iso_conn *conn, int wait, int *fds, size_t *nfds, char *why,
			     size_t why_size)
{
	unsigned seen;
	ssize_t n = iso_recv_fds(conn->fd, conn->buf, sizeof(conn->buf), wait ? 0 : MSG_DONTWAIT,
				 fds, RECV_FDS_MAX, nfds, &seen);

	if (n < 0 || seen == 0)
		return n;
	iso_close_fds(fds, *nfds);
	*nfds = 0;
	return iso_why(why, why_size, EPROTO, "helper sent %s",
		       seen & ISO_RECV_TRUNC ? "a datagram longer than the wire allows"
					     : "unexpected control data");
}

/* What a refusal's errno becomes in the documented sets. */
static int refusal_code(uint32_t err)
{
	switch (err) {
	case EACCES:
	case EPERM: /* an environment name the rules do not allow */
		return -EACCES;
	case EINVAL:
	case E2BIG:
	case EAGAIN:
	case ENOSYS:
	case ENOMEM:
		return -(int)err;
	default:
		return -EIO;
	}
}

iso_guest *iso__find_guest(iso_conn *conn, uint32_t id)
{
	for (iso_guest *g = conn->guests; g != NULL; g = g->next)
		if (g->id == id)
			return g;
	return NULL;
}

uint32_t iso__next_id(iso_conn *conn)
{
	for (;;) {
		uint32_t id = ++conn->last_id;

		if (id == 0) {
			conn->ids_wrapped = 1;
			continue;
		}
		if (!conn->ids_wrapped || iso__find_guest(conn, id) == NULL)
			return id;
	}
}

/* The outcome's code must be what the outcome says it is. */
static int exited_code_valid(const struct iso_wire_exited *e)
{
	switch (e->outcome) {
	case ISO_OUTCOME_EXITED:
		return e->code <= 255;
	case ISO_OUTCOME_SIGNALED:
	case ISO_OUTCOME_TIMED_OUT:
	case ISO_OUTCOME_LIMIT:
		return e->code >= 1 && e->code <= 64;
	case ISO_OUTCOME_FAILED:
		return e->code >= 1 && e->code <= 4095;
	default:
		return 0;
	}
}

static int dispatch_answer(iso_conn *conn, const struct iso_wire_msg *m, const int *fds,
			   size_t nfds)
{
	iso_guest *g = conn->pending;

	if (g == NULL || conn->pending_state != PENDING_WAITING || m->id != g->id)
		return break_conn(conn, -EPROTO,
				  "helper answered request %u, which awaits no answer", m->id);
	if (m->type == ISO_MSG_REFUSED) {
		if (nfds != 0)
			return break_conn(conn, -EPROTO, "helper sent descriptors with REFUSED");
		conn->pending_result = refusal_code(m->u.refused.err);
		conn->pending_state = PENDING_DONE;
		iso__fail(conn->pending_result, "%s", m->u.refused.message);
		return 0;
	}
	if (nfds != (g->want_channel ? 1u : 0u))
		return break_conn(conn, -EPROTO,
				  "helper sent %zu descriptors with SPAWNED, expected %d", nfds,
				  g->want_channel ? 1 : 0);
	g->pid = (pid_t)m->u.spawned.pid;
	g->uid = (uid_t)m->u.spawned.uid;
	if (m->u.spawned.notes != NULL)
		snprintf(g->notes, sizeof(g->notes), "%s", m->u.spawned.notes);
	g->channel_fd = nfds == 1 ? fds[0] : -1;
	conn->pending_result = 0;
	conn->pending_state = PENDING_DONE;
	return 0;
}

static int dispatch_exited(iso_conn *conn, const struct iso_wire_msg *m, size_t nfds)
{
	const struct iso_wire_exited *e = &m->u.exited;
	iso_guest *g;

	if (nfds != 0)
		return break_conn(conn, -EPROTO, "helper sent descriptors with EXITED");
	if (!exited_code_valid(e))
		return break_conn(conn, -EPROTO,
				  "helper sent EXITED for %u with outcome %u and code %u", m->id,
				  e->outcome, e->code);
	g = iso__find_guest(conn, m->id);
	if (g == NULL)
		return 0; /* its handle was freed: nobody asks any more */
	if (g == conn->pending && conn->pending_state == PENDING_WAITING)
		return break_conn(conn, -EPROTO,
				  "helper sent EXITED for %u before answering its SPAWN", m->id);
	if (g->outcome != ISO_OUTCOME_RUNNING)
		return break_conn(conn, -EPROTO, "helper sent a second EXITED for %u", m->id);
	g->outcome = (enum iso_outcome)e->outcome;
	g->code = (int)e->code;
	g->stage = (enum iso_stage)e->stage;
	g->limit = e->limit_hit;
	g->wall_us = e->wall_us;
	g->user_us = e->user_us;
	g->sys_us = e->sys_us;
	g->maxrss_kib = e->maxrss_kib;
	g->cgroup = e->cgroup != 0;
	g->cg_cpu_us = e->cg_cpu_us;
	g->cg_memory_peak = e->cg_memory_peak;
	g->reached = e->reached;
	if (e->reason != NULL)
		snprintf(g->reason, sizeof(g->reason), "%s", e->reason);
	return 0;
}

int iso__receive(iso_conn *conn, int wait)
{
	int fds[RECV_FDS_MAX];
	size_t nfds;
	char why[256];
	long n;
	int rc;

	if (conn->broken)
		return iso__fail(-EPIPE, "%s", conn->broken_why);
	n = receive_datagram(conn, wait, fds, &nfds, why, sizeof(why));
	if (n == -EAGAIN || n == -EINTR)
		return (int)n;
	if (n == -EPROTO)
		return break_conn(conn, -EPROTO, "%s", why);
	if (n < 0)
		return break_conn(conn, -EPIPE, "receiving from the helper: %s", strerror((int)-n));
	if (n == 0) {
		iso_close_fds(fds, nfds);
		return break_conn(conn, -EPIPE, "the helper is gone (it closed the connection)");
	}
	rc = iso_wire_decode(conn->buf, (size_t)n, &conn->msg, why, sizeof(why));
	if (rc < 0) {
		iso_close_fds(fds, nfds);
		return break_conn(conn, -EPROTO, "helper sent a bad message: %s", why);
	}
	switch (conn->msg.type) {
	case ISO_MSG_SPAWNED:
	case ISO_MSG_REFUSED:
		rc = dispatch_answer(conn, &conn->msg, fds, nfds);
		break;
	case ISO_MSG_EXITED:
		rc = dispatch_exited(conn, &conn->msg, nfds);
		break;
	default:
		rc = break_conn(conn, -EPROTO, "helper sent an unexpected message of type %u",
				conn->msg.type);
		break;
	}
	if (rc < 0)
		iso_close_fds(fds, nfds);
	return rc;
}

long iso__encode(iso_conn *conn)
{
	long n = iso_wire_encode(&conn->msg, conn->buf, sizeof(conn->buf));

	if (n == -E2BIG)
		return iso__fail(-E2BIG, "request larger than %d bytes", ISO_WIRE_MAX);
	if (n < 0)
		return iso__fail(-EINVAL, "request breaks the wire format (a string too long?)");
	return n;
}

int iso__send(iso_conn *conn, size_t len, const int *fds, unsigned nfds)
{
	ssize_t n;

	if (conn->broken)
		return iso__fail(-EPIPE, "%s", conn->broken_why);
	if (nfds > ISO_FDS_MAX)
		return iso__fail(-EINVAL, "more than %d descriptors in a request", ISO_FDS_MAX);
	n = iso_send_fds(conn->fd, conn->buf, len, 0, fds, nfds);
	if (n == (ssize_t)len)
		return 0;
	if (n >= 0)
		return break_conn(conn, -EPIPE, "sending to the helper: %zd of %zu bytes sent", n,
				  len);
	switch (-n) {
	case EBADF:
		return iso__fail(-EINVAL, "a descriptor given for the guest's stdio is not open");
	case ENOMEM:
	case ENOBUFS:
		return iso__fail(-ENOMEM, "sending to the helper: %s", strerror((int)-n));
	case EMSGSIZE:
		return iso__fail(-E2BIG, "request of %zu bytes does not fit the socket buffer",
				 len);
	default:
		return break_conn(conn, -EPIPE, "the helper is gone (%s)", strerror((int)-n));
	}
}

/* Both ends must hold the largest datagram, whatever the system default. */
static int size_buffers(const int sv[2])
{
	int size = ISO_WIRE_MAX + 4096;

	for (int i = 0; i < 2; i++)
		if (setsockopt(sv[i], SOL_SOCKET, SO_SNDBUF, &size, sizeof(size)) < 0)
			return iso__fail(-EIO, "socket buffer of %d bytes: %s", size,
					 strerror(errno));
	return 0;
}

/* ISOSPAWN_HELPER (for tests), or the installed helper. */
const char *iso__helper_path(void)
{
	const char *path = secure_getenv("ISOSPAWN_HELPER");

	return path != NULL && path[0] != '\0' ? path : ISO_HELPER_PATH;
}

int iso__helper_group(gid_t *gid)
{
	struct stat st;

	if (stat(iso__helper_path(), &st) < 0 || st.st_uid != 0 || !(st.st_mode & S_ISUID) ||
	    !(st.st_mode & S_IXGRP) || (st.st_mode & S_IXOTH))
		return 0;
	*gid = st.st_gid;
	return 1;
}

/* " — is USER in group GROUP?" into buf where the helper's mode lets
 * only that group execute it and the caller is not in it: the reason an
 * exec fails with EACCES that a newcomer meets first. Else "". */
static void not_in_group(char *buf, size_t n)
{
	gid_t gate, groups[256];
	int ng = getgroups(256, groups);
	char names[4096], user[64], group[64];
	struct passwd pw, *pwp = NULL;
	struct group gr, *grp = NULL;

	buf[0] = '\0';
	if (!iso__helper_group(&gate) || getegid() == gate)
		return;
	for (int i = 0; i < ng; i++)
		if (groups[i] == gate)
			return;
	if (getpwuid_r(geteuid(), &pw, names, sizeof(names), &pwp) == 0 && pwp != NULL)
		snprintf(user, sizeof(user), "%s", pw.pw_name);
	else
		snprintf(user, sizeof(user), "uid %u", (unsigned)geteuid());
	if (getgrgid_r(gate, &gr, names, sizeof(names), &grp) == 0 && grp != NULL)
		snprintf(group, sizeof(group), "%s", gr.gr_name);
	else
		snprintf(group, sizeof(group), "#%u", (unsigned)gate);
	snprintf(buf, n, " — is %s in group %s?", user, group);
}

/*
 * The setuid helper refused (rc): if its setuid bit cannot have made it
 * root, say why in one line. The helper only knows that it is not root;
 * its caller, unprivileged, can tell why.
 */
static int why_not_root(int rc)
{
	static const char head[] = "isospawn-helper is not running as root";
	const char *path = iso__helper_path();
	struct stat st;
	struct statvfs fs;

	if (rc != -EACCES || geteuid() == 0)
		return rc;
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1)
		return iso__fail(rc,
				 "%s: the caller has no_new_privs set "
				 "(NoNewPrivileges= or a seccomp filter), so the "
				 "setuid bit was ignored; such callers use "
				 "isospawn.socket (systemctl enable --now "
				 "isospawn.socket)",
				 head);
	if (stat(path, &st) == 0 && (st.st_uid != 0 || !(st.st_mode & S_ISUID)))
		return iso__fail(rc,
				 "%s: it is not setuid root (owner uid %u, "
				 "mode %04o)",
				 head, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
	if (statvfs(path, &fs) == 0 && (fs.f_flag & ST_NOSUID))
		return iso__fail(rc, "%s: its file system is mounted nosuid", head);
	return rc;
}

/*
 * The helper's pidfd, taken as soon as it runs: it ends only once its
 * socket closes or after its greeting, so its pid is not yet free for
 * another child. 0, or -EMFILE/-ENOMEM.
 */
static int open_helper_pidfd(iso_conn *conn)
{
	int fd = (int)syscall(SYS_pidfd_open, conn->helper_pid, 0);

	fd = fd < 0 ? -errno : iso_fd_above_stdio(fd);
	if (fd >= 0)
		conn->helper_pidfd = fd;
	else if (fd == -ESRCH) /* reaped by the caller already */
		conn->helper_pid = -1;
	else if (fd != -ENOSYS) /* before Linux 5.3: the pid alone */
		return iso__fail(fd == -ENOMEM ? -ENOMEM : -EMFILE, "pidfd of the helper: %s",
				 strerror(-fd));
	return 0;
}

static int spawn_helper(iso_conn *conn, int helper_end)
{
	const char *path = iso__helper_path();
	char *const argv[] = { (char *)"isospawn-helper", NULL };
	char hint[160];
	char *const envp[] = { NULL };
	posix_spawn_file_actions_t actions;
	posix_spawnattr_t attr;
	sigset_t none, all;
	int rc;

	rc = posix_spawn_file_actions_init(&actions);
	if (rc != 0)
		return iso__fail(-ENOMEM, "starting the helper: %s", strerror(rc));
	rc = posix_spawnattr_init(&attr);
	if (rc != 0) {
		posix_spawn_file_actions_destroy(&actions);
		return iso__fail(-ENOMEM, "starting the helper: %s", strerror(rc));
	}
	/* dup2 onto itself clears FD_CLOEXEC in posix_spawn (Austin Group
	 * issue 411, glibc >= 2.29), so helper_end == 3 works too.
	 * Everything above 3 is closed: the helper gets no descriptor of the
	 * caller's by accident. Signals start at their defaults, unblocked,
	 * whatever the caller's dispositions. Its own process group keeps the
	 * terminal's ^C and ^\ from killing it (and every guest) behind the
	 * caller's back: the caller decides what a signal means for its
	 * guests. */
	sigemptyset(&none);
	sigfillset(&all);
	if ((rc = posix_spawn_file_actions_adddup2(&actions, helper_end, ISO_HELPER_FD)) == 0 &&
	    (rc = posix_spawn_file_actions_addclosefrom_np(&actions, ISO_HELPER_FD + 1)) == 0 &&
	    (rc = posix_spawnattr_setsigmask(&attr, &none)) == 0 &&
	    (rc = posix_spawnattr_setsigdefault(&attr, &all)) == 0 &&
	    (rc = posix_spawnattr_setpgroup(&attr, 0)) == 0 &&
	    (rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
						      POSIX_SPAWN_SETPGROUP)) == 0)
		rc = posix_spawn(&conn->helper_pid, path, &actions, &attr, argv, envp);
	posix_spawnattr_destroy(&attr);
	posix_spawn_file_actions_destroy(&actions);
	if (rc == 0)
		return open_helper_pidfd(conn);
	conn->helper_pid = -1;
	switch (rc) {
	case ENOENT:
	case ENOTDIR:
		return iso__fail(-ENOENT, "isospawn-helper not found at %s", path);
	case EACCES:
		not_in_group(hint, sizeof(hint));
		return iso__fail(-EACCES, "cannot execute isospawn-helper at %s: %s%s", path,
				 strerror(rc), hint);
	case ENOMEM:
	case EAGAIN:
		return iso__fail(-ENOMEM, "starting isospawn-helper at %s: %s", path, strerror(rc));
	case EMFILE:
	case ENFILE:
		return iso__fail(-EMFILE, "starting isospawn-helper at %s: %s", path, strerror(rc));
	default:
		return iso__fail(-EIO, "starting isospawn-helper at %s: %s", path, strerror(rc));
	}
}

/* The helper speaks first: HELLO, ready or refusing this caller. */
static int await_hello(iso_conn *conn)
{
	const struct iso_wire_hello *h = &conn->msg.u.hello;
	int fds[RECV_FDS_MAX];
	size_t nfds;
	char why[256], status[64];
	siginfo_t info;
	long n;

	do
		n = receive_datagram(conn, 1, fds, &nfds, why, sizeof(why));
	while (n == -EINTR);
	iso_close_fds(fds, nfds);
	if (n == 0) {
		shutdown(conn->fd, SHUT_RDWR);
		reap_helper(conn, &info);
		describe_status(&info, status, sizeof(status));
		return iso__fail(-EIO, "helper exited before answering (%s)", status);
	}
	if (n == -EPROTO)
		return iso__fail(-EPROTO, "%s", why);
	if (n < 0)
		return iso__fail(-EIO, "waiting for the helper's greeting: %s", strerror((int)-n));
	if (nfds != 0)
		return iso__fail(-EPROTO, "helper sent descriptors with HELLO");
	if (iso_wire_decode(conn->buf, (size_t)n, &conn->msg, why, sizeof(why)) < 0)
		return iso__fail(-EPROTO, "helper's first message: %s", why);
	if (conn->msg.type != ISO_MSG_HELLO)
		return iso__fail(-EPROTO, "helper's first message is of type %u, not HELLO",
				 conn->msg.type);
	if (h->err != 0) {
		int code = h->err == EACCES || h->err == EPERM ? -EACCES
			   : h->err == EAGAIN                  ? -EAGAIN
							       : -EIO;

		if (h->message != NULL)
			return iso__fail(code, "%s", h->message);
		return iso__fail(code, "helper refused: %s", strerror((int)h->err));
	}
	conn->landlock_abi = (int)h->landlock_abi;
	return 0;
}

/* A helper started by systemd for this connection (isospawn.socket). 0, or
 * -errno with conn->fd left -1. */
static int connect_socket(iso_conn *conn, const char *path)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int size = ISO_WIRE_MAX + 4096, err;

	if ((size_t)snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path) >=
	    sizeof(addr.sun_path))
		return -ENAMETOOLONG;
	conn->fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (conn->fd < 0)
		return -errno;
	if ((conn->fd = iso_fd_above_stdio(conn->fd)) < 0) {
		err = -conn->fd;
		conn->fd = -1;
		return -err;
	}
	/* The helper's end is sized by the socket unit (SendBuffer=). */
	if (setsockopt(conn->fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size)) == 0 &&
	    connect(conn->fd, (struct sockaddr *)&addr, sizeof(addr)) == 0)
		return 0;
	err = errno;
	close(conn->fd);
	conn->fd = -1;
	return -err;
}

/* The setuid helper, started here with its end of a socketpair. */
static int start_helper(iso_conn *conn)
{
	int sv[2], rc;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return iso__fail(errno == EMFILE || errno == ENFILE    ? -EMFILE
				 : errno == ENOMEM || errno == ENOBUFS ? -ENOMEM
								       : -EIO,
				 "socketpair: %s", strerror(errno));
	/* Never 0-2 in a caller whose stdio is closed: that would be the
	 * caller's "stdin" (or the guest's, if passed on as stdio). */
	sv[0] = iso_fd_above_stdio(sv[0]);
	sv[1] = iso_fd_above_stdio(sv[1]);
	if (sv[0] < 0 || sv[1] < 0) {
		rc = sv[0] < 0 ? sv[0] : sv[1];
		iso_close_fds(sv, 2);
		return iso__fail(-EMFILE, "socketpair: %s", strerror(-rc));
	}
	conn->fd = sv[0];
	rc = size_buffers(sv);
	if (rc == 0)
		rc = spawn_helper(conn, sv[1]);
	close(sv[1]);
	return rc;
}

/*
 * The helper refused with EAGAIN, the caller's connections all taken:
 * ask it to wait up to wait_ms for one (WAIT), and take its second
 * greeting. A helper that cannot wait (as many connections of the
 * caller's wait already, or one that knows no WAIT) has closed the
 * connection: then its refusal stands.
 */
static int await_connection(iso_conn *conn, uint64_t wait_ms)
{
	char refusal[512];
	long n;
	int rc;

	snprintf(refusal, sizeof(refusal), "%s", iso_last_error());
	conn->msg = (struct iso_wire_msg){ .type = ISO_MSG_WAIT, .u.wait.ms = wait_ms };
	if ((n = iso__encode(conn)) < 0 || (n = iso__send(conn, (size_t)n, NULL, 0)) < 0 ||
	    (rc = await_hello(conn)) == -EIO)
		return iso__fail(-EAGAIN, "%s", refusal);
	return rc;
}

ISO_PUBLIC int iso_open_wait(iso_conn **out, uint64_t wait_ms)
{
	const char *sock = secure_getenv("ISOSPAWN_SOCKET");
	const char *helper = secure_getenv("ISOSPAWN_HELPER");
	iso_conn *conn;
	int rc;

	*out = NULL;
	conn = calloc(1, sizeof(*conn));
	if (conn == NULL)
		return iso__fail(-ENOMEM, "out of memory for a connection");
	conn->helper_pid = -1;
	conn->helper_pidfd = -1;
	conn->fd = -1;
	conn->owner = getpid();
	/* ISOSPAWN_SOCKET names the one socket to use, ISOSPAWN_HELPER the
	 * one helper (for tests). Otherwise isospawn.socket when it answers
	 * (the only way in for a caller with no_new_privs), else the setuid
	 * helper. */
	if (sock != NULL && sock[0] != '\0') {
		if ((rc = connect_socket(conn, sock)) < 0)
			rc = iso__fail(rc == -ENOENT || rc == -ECONNREFUSED ? -ENOENT
				       : rc == -EACCES                      ? -EACCES
									    : -EIO,
				       "cannot connect to %s: %s", sock, strerror(-rc));
	} else if ((helper != NULL && helper[0] != '\0') ||
		   connect_socket(conn, ISO_SOCKET_PATH) < 0) {
		rc = start_helper(conn);
	} else {
		rc = 0;
	}
	if (rc == 0)
		rc = await_hello(conn);
	if (rc == -EAGAIN && wait_ms != 0)
		rc = await_connection(conn, wait_ms);
	/* A helper started here may not have been made root. */
	if (conn->helper_pid > 0)
		rc = why_not_root(rc);
	if (rc < 0) {
		iso_close(conn);
		return rc;
	}
	*out = conn;
	return 0;
}

ISO_PUBLIC int iso_open(iso_conn **out)
{
	return iso_open_wait(out, 0);
}

ISO_PUBLIC void iso_close(iso_conn *conn)
{
	siginfo_t info;

	if (conn == NULL)
		return;
	/* No KILL per guest: the helper kills them all when the socket
	 * closes. */
	while (conn->guests != NULL)
		iso__guest_release(conn->guests);
	/* In a forked child only this copy goes: the shutdown would end the
	 * owner's connection, and the helper is not this process's child. */
	if (conn->owner == getpid())
		shutdown(conn->fd, SHUT_RDWR);
	else
		conn->helper_pid = -1;
	close(conn->fd);
	reap_helper(conn, &info);
	if (conn->helper_pidfd >= 0)
		close(conn->helper_pidfd);
	free(conn);
}

int iso__query(iso_conn *conn, const struct iso_wire_msg *msg,
	       void (*fn)(const struct iso_wire_msg *, void *), void *arg)
{
	int fds[RECV_FDS_MAX];
	size_t nfds;
	char why[256];
	long n;

	conn->msg = *msg;
	if ((n = iso__encode(conn)) < 0 || (n = iso__send(conn, (size_t)n, NULL, 0)) < 0)
		return (int)n;
	for (;;) {
		do
			n = receive_datagram(conn, 1, fds, &nfds, why, sizeof(why));
		while (n == -EINTR);
		iso_close_fds(fds, nfds);
		if (n <= 0)
			return break_conn(conn, -EPIPE, "the helper is gone (%s)",
					  n == -EPROTO ? why
					  : n == 0     ? "it closed the connection"
						       : strerror((int)-n));
		if (iso_wire_decode(conn->buf, (size_t)n, &conn->msg, why, sizeof(why)) < 0)
			return break_conn(conn, -EPROTO, "helper sent a bad message: %s", why);
		switch (conn->msg.type) {
		case ISO_MSG_GUEST:
			fn(&conn->msg, arg);
			break;
		case ISO_MSG_RULE_TEXT:
			fn(&conn->msg, arg);
			return 0;
		case ISO_MSG_DONE:
			return 0;
		case ISO_MSG_REFUSED:
			return iso__fail(refusal_code(conn->msg.u.refused.err), "%s",
					 conn->msg.u.refused.message);
		default:
			return break_conn(conn, -EPROTO,
					  "helper sent an unexpected message of type %u",
					  conn->msg.type);
		}
	}
}

ISO_PUBLIC int iso_conn_landlock_abi(const iso_conn *conn)
{
	return conn->landlock_abi;
}

ISO_PUBLIC int iso_conn_fd(const iso_conn *conn)
{
	return conn->fd;
}
