/*
 * guest.c - isospawn.Guest and isospawn.Status, and spawning one.
 */
#include "config.h"

#include "pyiso.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "structmember.h"

/* ------------------------------------------------------------------ */
/* Status                                                               */

typedef struct {
	PyObject_HEAD
	struct snapshot s;
} StatusObject;

static const char *outcome_name(enum iso_outcome o)
{
	const char *name = iso_outcome_name(o);

	return name != NULL ? name : "unknown";
}

static int killed_by_signal(const struct snapshot *s)
{
	return s->outcome == ISO_OUTCOME_SIGNALED ||
	       s->outcome == ISO_OUTCOME_TIMED_OUT ||
	       s->outcome == ISO_OUTCOME_LIMIT;
}

PyObject *status_from_snapshot(const struct snapshot *s)
{
	StatusObject *st = PyObject_New(StatusObject, &StatusType);

	if (st == NULL)
		return NULL;
	st->s = *s;
	return (PyObject *)st;
}

#define SNAP(o) (&((StatusObject *)(o))->s)

static PyObject *int_or_none(int yes, long value)
{
	if (!yes)
		Py_RETURN_NONE;
	return PyLong_FromLong(value);
}

static PyObject *str_or_none(const char *s)
{
	if (s == NULL)
		Py_RETURN_NONE;
	return PyUnicode_FromString(s);
}

static PyObject *status_outcome(PyObject *o, void *Py_UNUSED(closure))
{
	return PyUnicode_FromString(outcome_name(SNAP(o)->outcome));
}

static PyObject *status_code(PyObject *o, void *Py_UNUSED(closure))
{
	return int_or_none(SNAP(o)->outcome == ISO_OUTCOME_EXITED, SNAP(o)->code);
}

static PyObject *status_signal(PyObject *o, void *Py_UNUSED(closure))
{
	return int_or_none(killed_by_signal(SNAP(o)), SNAP(o)->code);
}

static PyObject *status_errno(PyObject *o, void *Py_UNUSED(closure))
{
	return int_or_none(SNAP(o)->outcome == ISO_OUTCOME_FAILED, SNAP(o)->code);
}

static PyObject *status_stage(PyObject *o, void *Py_UNUSED(closure))
{
	if (SNAP(o)->outcome != ISO_OUTCOME_FAILED)
		Py_RETURN_NONE;
	return PyUnicode_FromString(iso_stage_name(SNAP(o)->stage));
}

/* The helper's words, which may quote the caller's paths: bytes that are
 * not UTF-8 as backslash escapes, as for notes. */
static PyObject *reason_str(const struct snapshot *s)
{
	return PyUnicode_DecodeUTF8(s->reason, (Py_ssize_t)strlen(s->reason),
				    "backslashreplace");
}

static PyObject *status_reason(PyObject *o, void *Py_UNUSED(closure))
{
	if (SNAP(o)->outcome != ISO_OUTCOME_FAILED || SNAP(o)->reason[0] == '\0')
		Py_RETURN_NONE;
	return reason_str(SNAP(o));
}

static PyObject *status_limit(PyObject *o, void *Py_UNUSED(closure))
{
	if (SNAP(o)->outcome != ISO_OUTCOME_LIMIT)
		Py_RETURN_NONE;
	return str_or_none(iso_limit_name((enum iso_limit)SNAP(o)->limit));
}

static PyObject *status_wall(PyObject *o, void *Py_UNUSED(closure))
{
	return PyFloat_FromDouble((double)SNAP(o)->wall_us / 1e6);
}

static PyObject *status_user(PyObject *o, void *Py_UNUSED(closure))
{
	return PyFloat_FromDouble((double)SNAP(o)->user_us / 1e6);
}

static PyObject *status_sys(PyObject *o, void *Py_UNUSED(closure))
{
	return PyFloat_FromDouble((double)SNAP(o)->sys_us / 1e6);
}

static PyObject *status_max_rss(PyObject *o, void *Py_UNUSED(closure))
{
	return PyLong_FromUnsignedLongLong(SNAP(o)->maxrss_kib);
}

static PyObject *status_exit_code(PyObject *o, void *Py_UNUSED(closure))
{
	return PyLong_FromLong(SNAP(o)->exit_code);
}

static PyObject *status_repr(PyObject *o)
{
	const struct snapshot *s = SNAP(o);
	const char *name = outcome_name(s->outcome);
	char usage[96];

	snprintf(usage, sizeof(usage), "wall=%.6f, user=%.6f, sys=%.6f",
		 (double)s->wall_us / 1e6, (double)s->user_us / 1e6,
		 (double)s->sys_us / 1e6);
	switch (s->outcome) {
	case ISO_OUTCOME_EXITED:
		return PyUnicode_FromFormat("Status(outcome='%s', code=%d, %s, "
					    "max_rss=%llu)",
					    name, s->code, usage,
					    (unsigned long long)s->maxrss_kib);
	case ISO_OUTCOME_LIMIT:
		return PyUnicode_FromFormat(
			"Status(outcome='%s', limit='%s', signal=%d, %s)", name,
			iso_limit_name((enum iso_limit)s->limit) ?
				iso_limit_name((enum iso_limit)s->limit) :
				"unknown",
			s->code, usage);
	case ISO_OUTCOME_SIGNALED:
	case ISO_OUTCOME_TIMED_OUT:
		return PyUnicode_FromFormat("Status(outcome='%s', signal=%d, %s)",
					    name, s->code, usage);
	case ISO_OUTCOME_FAILED: {
		PyObject *reason = reason_str(s), *r;

		if (reason == NULL)
			return NULL;
		r = PyUnicode_FromFormat(
			"Status(outcome='%s', stage='%s', errno=%d (%s), reason=%R)",
			name, iso_stage_name(s->stage), s->code, strerror(s->code),
			reason);
		Py_DECREF(reason);
		return r;
	}
	default:
		return PyUnicode_FromFormat("Status(outcome='%s')", name);
	}
}

static PyGetSetDef status_getset[] = {
	{ "outcome", status_outcome, NULL,
	  "How the guest ended: 'exited', 'signaled', 'timed_out', 'limit' "
	  "or 'failed' (never started).",
	  NULL },
	{ "code", status_code, NULL,
	  "The exit code when outcome is 'exited', else None.", NULL },
	{ "signal", status_signal, NULL,
	  "The signal that ended it for 'signaled', 'timed_out' (SIGKILL) and "
	  "'limit', else None.",
	  NULL },
	{ "limit", status_limit, NULL,
	  "For 'limit': which one ('cpu', 'as', 'nofile', 'nproc', 'fsize', "
	  "'stack'), else None.",
	  NULL },
	{ "stage", status_stage, NULL,
	  "For 'failed': the stage that failed ('policy', 'credentials', "
	  "'confinement', 'exec'), else None.",
	  NULL },
	{ "errno", status_errno, NULL,
	  "For 'failed': the errno of the failed stage, else None.", NULL },
	{ "reason", status_reason, NULL,
	  "For 'failed': the helper's one-line reason, what went wrong at that "
	  "stage (it names only the caller's own request and rule, e.g. a "
	  "path), else None.",
	  NULL },
	{ "wall", status_wall, NULL, "Wall-clock seconds it ran (float).",
	  NULL },
	{ "user", status_user, NULL, "User CPU seconds (float).", NULL },
	{ "sys", status_sys, NULL, "System CPU seconds (float).", NULL },
	{ "max_rss", status_max_rss, NULL, "Peak resident set, KiB.", NULL },
	{ "exit_code", status_exit_code, NULL,
	  "The isospawn command's exit code for this end: the guest's code; "
	  "128+N when killed by signal N; 124 timed out; 127 not found; 126 "
	  "not executable; 125 any other failure.",
	  NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject StatusType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "isospawn.Status",
	.tp_basicsize = sizeof(StatusObject),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "How a guest ended, as the helper reported it (read-only).",
	.tp_repr = status_repr,
	.tp_getset = status_getset,
};

/* ------------------------------------------------------------------ */
/* Guest                                                                */

PyObject *guest_status(GuestObject *g)
{
	if (g->status == NULL)
		g->status = status_from_snapshot(&g->snap);
	return Py_XNewRef(g->status);
}

/* A non-blocking look: 0 ended, 1 running, or a failure in f. With the
 * GIL; releases it around the lock. */
static int guest_poll(GuestObject *g, struct failure *f)
{
	ConnObject *c = g->conn;
	int rc;

	if (g->status != NULL)
		return 0;
	if (conn_check_owner(c) < 0)
		return PYISO_FORKED;
	Py_BEGIN_ALLOW_THREADS
	conn_lock(c);
	rc = guest_collect_locked(g, NULL, f);
	conn_unlock(c);
	Py_END_ALLOW_THREADS
	return rc;
}

static PyObject *guest_poll_method(GuestObject *g, PyObject *Py_UNUSED(ignored))
{
	struct failure f;
	int rc = guest_poll(g, &f);

	if (rc == PYISO_FORKED)
		return NULL;
	if (rc < 0)
		return pyiso_raise_failure(&f);
	if (rc == 1)
		Py_RETURN_NONE;
	return guest_status(g);
}

int guest_wait_until(GuestObject *g, const struct timespec *deadline)
{
	struct failure f;
	int rc;

	if (g->status != NULL)
		return 0;
	if (conn_check_owner(g->conn) < 0)
		return -1;
	for (;;) {
		Py_BEGIN_ALLOW_THREADS
		rc = guest_wait_nogil(g, deadline, &f);
		Py_END_ALLOW_THREADS
		if (rc != -EINTR)
			break;
		if (PyErr_CheckSignals() < 0)
			return -1;
	}
	if (rc < 0) {
		pyiso_raise_failure(&f);
		return -1;
	}
	return rc;
}

static PyObject *guest_wait(GuestObject *g, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = { "timeout", NULL };
	PyObject *timeout = Py_None;
	const struct timespec *until;
	struct timespec deadline;
	int rc;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:wait", kwlist,
					 &timeout) ||
	    deadline_arg(timeout, &deadline, &until) < 0)
		return NULL;
	rc = guest_wait_until(g, until);
	if (rc < 0)
		return NULL;
	if (rc == 1)
		return PyErr_Format(PyExc_TimeoutError,
				    "guest %d still running after %S seconds",
				    (int)g->pid, timeout);
	return guest_status(g);
}

static PyObject *guest_wait_async(GuestObject *g, PyObject *Py_UNUSED(ignored))
{
	return conn_wait_async(g->conn, g);
}

static PyObject *guest_kill(GuestObject *g, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = { "sig", NULL };
	ConnObject *c = g->conn;
	struct failure f = { 0, "" };
	int sig = SIGKILL;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "|i:kill", kwlist, &sig))
		return NULL;
	if (conn_check(c) < 0)
		return NULL;
	Py_BEGIN_ALLOW_THREADS
	conn_lock(c);
	if (c->conn == NULL)
		failure_closed(&f);
	else if (!g->ended)
		failure_of_call(&f, iso_kill(g->guest, sig));
	if (f.rc == -EPIPE)
		c->broken = 1;
	conn_unlock(c);
	Py_END_ALLOW_THREADS
	if (f.rc == -EINVAL)
		return PyErr_Format(PyExc_ValueError, "%s", f.msg);
	if (f.rc < 0)
		return pyiso_raise_failure(&f);
	Py_RETURN_NONE;
}

static int need_channel(GuestObject *g)
{
	if (g->channel_fd >= 0)
		return 0;
	PyErr_SetString(PyExc_ValueError,
			"this guest has no message channel (spawn it with "
			"channel=True)");
	return -1;
}

/* Poll the channel for `events` (or the connection's closing) outside
 * the lock; 0, or -EINTR. */
static int channel_poll(GuestObject *g, short events, int ms)
{
	struct pollfd p[2] = {
		{ .fd = g->channel_fd, .events = events },
		{ .fd = g->conn->close_efd, .events = POLLIN },
	};

	if (poll(p, 2, ms) < 0 && errno == EINTR)
		return -EINTR;
	return 0;
}

static PyObject *guest_send(GuestObject *g, PyObject *args)
{
	ConnObject *c = g->conn;
	struct failure f = { 0, "" };
	Py_buffer data;
	int rc;

	if (message_arg(args, &data) < 0)
		return NULL;
	if (need_channel(g) < 0 || conn_check(c) < 0) {
		PyBuffer_Release(&data);
		return NULL;
	}
	/* The channel is non-blocking (see conn_spawn_request): a send never
	 * waits with the lock held. -EAGAIN: another thread took the room
	 * poll() saw, so this one waits again, outside the lock. */
	for (;;) {
		Py_BEGIN_ALLOW_THREADS
		rc = channel_poll(g, POLLOUT, -1);
		if (rc == 0) {
			conn_lock(c);
			if (c->conn == NULL)
				failure_closed(&f);
			else
				failure_of_call(&f, iso_send(g->guest, data.buf,
							     (size_t)data.len));
			conn_unlock(c);
		}
		Py_END_ALLOW_THREADS
		if (rc == 0 && f.rc != -EAGAIN)
			break;
		if (rc < 0 && PyErr_CheckSignals() < 0)
			break;
	}
	PyBuffer_Release(&data);
	if (rc < 0)
		return NULL;
	if (f.rc == -EPIPE)
		return PyErr_Format(PyExc_BrokenPipeError, "%s", f.msg);
	if (f.rc < 0)
		return pyiso_raise_failure(&f);
	Py_RETURN_NONE;
}

static PyObject *guest_recv(GuestObject *g, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = { "timeout", NULL };
	ConnObject *c = g->conn;
	PyObject *timeout = Py_None, *result = NULL;
	struct failure f = { 0, "" };
	const struct timespec *until;
	struct timespec deadline;
	char *buf;
	long n;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:recv", kwlist,
					 &timeout) ||
	    deadline_arg(timeout, &deadline, &until) < 0 ||
	    need_channel(g) < 0 || conn_check(c) < 0)
		return NULL;
	buf = PyMem_Malloc(ISO_MESSAGE_MAX);
	if (buf == NULL)
		return PyErr_NoMemory();
	for (;;) {
		int rc = 0;

		Py_BEGIN_ALLOW_THREADS
		for (;;) {
			conn_lock(c);
			if (c->conn == NULL)
				n = failure_closed(&f);
			else
				n = iso_recv(g->guest, buf, ISO_MESSAGE_MAX, 0);
			if (n != PYISO_CLOSED && n != ISO_RECV_TIMEOUT &&
			    n != ISO_RECV_EOF)
				failure_of_call(&f, (int)n);
			conn_unlock(c);
			if (n != ISO_RECV_TIMEOUT)
				break;
			int ms = ms_until(until);
			if (ms == 0)
				break;
			rc = channel_poll(g, POLLIN, ms);
			if (rc < 0)
				break;
		}
		Py_END_ALLOW_THREADS
		if (rc == 0)
			break;
		if (PyErr_CheckSignals() < 0)
			goto out;
	}
	if (n > 0) {
		result = PyBytes_FromStringAndSize(buf, n);
	} else if (n == ISO_RECV_TIMEOUT) {
		result = Py_NewRef(Py_None);
	} else if (n == ISO_RECV_EOF) {
		PyErr_Format(PyExc_EOFError, "guest %d closed its end of the channel",
			     (int)g->pid);
	} else {
		pyiso_raise_failure(&f);
	}
out:
	PyMem_Free(buf);
	return result;
}

static PyObject *guest_channel_fileno(GuestObject *g,
				      PyObject *Py_UNUSED(ignored))
{
	if (need_channel(g) < 0)
		return NULL;
	return PyLong_FromLong(g->channel_fd);
}

static PyObject *guest_enter(GuestObject *g, PyObject *Py_UNUSED(ignored))
{
	return Py_NewRef(g);
}

/* Close the pipes; kill a guest still running and wait for its end. */
static PyObject *guest_exit(GuestObject *g, PyObject *const *args,
			    Py_ssize_t nargs)
{
	struct failure f;

	for (int i = 0; i < 3; i++) {
		PyObject *r;

		if (g->files[i] == Py_None)
			continue;
		r = PyObject_CallMethod(g->files[i], "close", NULL);
		if (r == NULL)
			return NULL;
		Py_DECREF(r);
	}
	if (g->conn->conn == NULL || g->conn->owner != getpid())
		Py_RETURN_FALSE;
	if (guest_poll(g, &f) == 1) {
		PyObject *r = PyObject_CallMethod((PyObject *)g, "kill", NULL);

		if (r == NULL)
			return NULL;
		Py_DECREF(r);
		if (guest_wait_until(g, NULL) < 0)
			return NULL;
	}
	Py_RETURN_FALSE;
}

static PyObject *guest_get_status(GuestObject *g, void *Py_UNUSED(closure))
{
	struct failure f;
	int rc;

	if (g->status != NULL)
		return Py_NewRef(g->status);
	if (g->conn->owner != getpid())
		Py_RETURN_NONE; /* not this process's to ask */
	rc = guest_poll(g, &f);
	if (rc == PYISO_CLOSED)
		Py_RETURN_NONE; /* its end can no longer be known */
	if (rc < 0)
		return pyiso_raise_failure(&f);
	if (rc == 1)
		Py_RETURN_NONE;
	return guest_status(g);
}

static PyObject *guest_repr(GuestObject *g)
{
	if (g->status != NULL)
		return PyUnicode_FromFormat("<isospawn.Guest pid=%d uid=%u %R>",
					    (int)g->pid, (unsigned)g->uid,
					    g->status);
	return PyUnicode_FromFormat("<isospawn.Guest pid=%d uid=%u>", (int)g->pid,
				    (unsigned)g->uid);
}

static int guest_traverse(GuestObject *g, visitproc visit, void *arg)
{
	Py_VISIT(g->conn);
	Py_VISIT(g->args);
	for (int i = 0; i < 3; i++)
		Py_VISIT(g->files[i]);
	return 0;
}

static int guest_clear(GuestObject *g)
{
	Py_CLEAR(g->args);
	for (int i = 0; i < 3; i++)
		Py_CLEAR(g->files[i]);
	return 0;
}

static void guest_dealloc(GuestObject *g)
{
	ConnObject *c = g->conn;

	PyObject_GC_UnTrack(g);
	guest_clear(g);
	Py_CLEAR(g->notes);
	Py_CLEAR(g->status);
	/* Free the handle (killing a guest still running), unless the
	 * connection's close freed it or it belongs to a parent process. */
	if (c != NULL && g->guest != NULL && c->owner == getpid()) {
		Py_BEGIN_ALLOW_THREADS
		conn_lock(c);
		if (c->conn != NULL)
			iso_guest_free(g->guest);
		conn_unlock(c);
		Py_END_ALLOW_THREADS
	}
	g->guest = NULL;
	Py_CLEAR(g->conn);
	Py_TYPE(g)->tp_free((PyObject *)g);
}

static PyMethodDef guest_methods[] = {
	{ "wait", (PyCFunction)(void (*)(void))guest_wait,
	  METH_VARARGS | METH_KEYWORDS,
	  "wait(timeout=None) -> Status\n\nWait for the guest to end, at most "
	  "timeout seconds (None: for ever),\nwith the GIL released. Raises "
	  "TimeoutError when the timeout expires\n(the guest keeps running)." },
	{ "poll", (PyCFunction)guest_poll_method, METH_NOARGS,
	  "poll() -> Status or None\n\nThe Status if the guest has ended, else "
	  "None; never blocks." },
	{ "wait_async", (PyCFunction)guest_wait_async, METH_NOARGS,
	  "wait_async() -> coroutine resolving to a Status\n\n"
	  "await guest.wait_async() in asyncio code. Uses no thread: each "
	  "connection\nputs its socket on the running event loop once, for all "
	  "its guests\nawaited there. Call it from a coroutine (it needs the "
	  "running loop)." },
	{ "kill", (PyCFunction)(void (*)(void))guest_kill,
	  METH_VARARGS | METH_KEYWORDS,
	  "kill(sig=signal.SIGKILL)\n\nAsk the helper to send sig to the guest; "
	  "harmless once it has ended\n(it cannot reach a recycled pid). Its end "
	  "is reported by wait()." },
	{ "send", (PyCFunction)guest_send, METH_VARARGS,
	  "send(data: bytes)\n\nSend one message (1 to MESSAGE_MAX bytes) on the "
	  "channel; blocks while\nthe channel is full (the guest does not read), "
	  "with the GIL released and\nthe connection free for other threads. "
	  "BrokenPipeError once the guest\nclosed its end." },
	{ "recv", (PyCFunction)(void (*)(void))guest_recv,
	  METH_VARARGS | METH_KEYWORDS,
	  "recv(timeout=None) -> bytes or None\n\nReceive one message, waiting "
	  "at most timeout seconds (None: for ever);\nNone when nothing arrived "
	  "in time. EOFError once the guest closed its\nend (it exited, or closed "
	  "the channel)." },
	{ "channel_fileno", (PyCFunction)guest_channel_fileno, METH_NOARGS,
	  "channel_fileno() -> int\n\nThe caller's end of the channel, for "
	  "selectors (readable: a message or\nend-of-channel waits), "
	  "non-blocking. Owned by the guest: do not close it.\nValueError "
	  "without a channel." },
	{ "__enter__", (PyCFunction)guest_enter, METH_NOARGS, NULL },
	{ "__exit__", (PyCFunction)(void (*)(void))guest_exit, METH_FASTCALL,
	  NULL },
	{ NULL, NULL, 0, NULL },
};

static PyMemberDef guest_members[] = {
	{ "pid", T_INT, offsetof(GuestObject, pid), READONLY,
	  "The guest's pid in this process's PID namespace (informational: "
	  "signal it with kill())." },
	{ "uid", T_UINT, offsetof(GuestObject, uid), READONLY,
	  "The pool uid the guest runs under." },
	{ "notes", T_OBJECT, offsetof(GuestObject, notes), READONLY,
	  "What the helper noted when it started the guest (a degraded mode "
	  "the policy accepted), or ''." },
	{ "args", T_OBJECT, offsetof(GuestObject, args), READONLY,
	  "The args it was spawned with." },
	{ "stdin", T_OBJECT, offsetof(GuestObject, files[0]), READONLY,
	  "A binary file writing to the guest's stdin with stdin=PIPE, else "
	  "None." },
	{ "stdout", T_OBJECT, offsetof(GuestObject, files[1]), READONLY,
	  "A binary file reading its stdout with stdout=PIPE, else None." },
	{ "stderr", T_OBJECT, offsetof(GuestObject, files[2]), READONLY,
	  "A binary file reading its stderr with stderr=PIPE, else None." },
	{ NULL, 0, 0, 0, NULL },
};

static PyGetSetDef guest_getset[] = {
	{ "status", (getter)guest_get_status, NULL,
	  "The Status once the guest has ended, else None (looks without "
	  "blocking).",
	  NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyDoc_STRVAR(guest_doc,
"A guest started by Connection.spawn(). Holds its connection open.\n"
"\n"
"When the last reference to a Guest goes away while the guest still runs,\n"
"the guest is killed (no orphans): keep it while the guest should run.\n"
"As a context manager, leaving the block closes its pipes and kills and\n"
"waits for a guest still running.");

PyTypeObject GuestType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "isospawn.Guest",
	.tp_basicsize = sizeof(GuestObject),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
	.tp_doc = guest_doc,
	.tp_dealloc = (destructor)guest_dealloc,
	.tp_traverse = (traverseproc)guest_traverse,
	.tp_clear = (inquiry)guest_clear,
	.tp_repr = (reprfunc)guest_repr,
	.tp_methods = guest_methods,
	.tp_members = guest_members,
	.tp_getset = guest_getset,
};

GuestObject *conn_spawn_request(ConnObject *c, PyObject *args,
				struct spawn_request *req)
{
	struct failure f = { 0, "" };
	iso_guest *guest = NULL;
	GuestObject *g;
	char notes[1024] = "";
	pid_t pid = 0;
	uid_t uid = 0;
	int channel_fd = -1;

	g = PyObject_GC_New(GuestObject, &GuestType);
	if (g == NULL)
		return NULL;
	g->conn = (ConnObject *)Py_NewRef(c);
	g->guest = NULL;
	g->args = Py_NewRef(args);
	g->notes = NULL;
	for (int i = 0; i < 3; i++)
		g->files[i] = Py_NewRef(Py_None);
	g->status = NULL;
	g->channel_fd = -1;
	g->ended = 0;
	memset(&g->snap, 0, sizeof(g->snap));
	PyObject_GC_Track(g);

	Py_BEGIN_ALLOW_THREADS
	conn_lock(c);
	if (c->conn == NULL) {
		failure_closed(&f);
	} else {
		failure_of_call(&f, iso_spawn(c->conn, req->spec, &guest));
		if (f.rc == -EPIPE)
			c->broken = 1;
		/* It read the socket, perhaps another guest's end. */
		conn_notify_locked(c, NULL);
		if (f.rc == 0) {
			pid = iso_guest_pid(guest);
			uid = iso_guest_uid(guest);
			snprintf(notes, sizeof(notes), "%s", iso_guest_notes(guest));
			channel_fd = iso_channel_fd(guest);
		}
		/* So that iso_send() returns -EAGAIN rather than wait for
		 * the guest to read with the lock held, stalling every
		 * other call on the connection (libisospawn(3)). Cannot
		 * fail on an open socket. */
		if (channel_fd >= 0)
			fcntl(channel_fd, F_SETFL, fcntl(channel_fd, F_GETFL) | O_NONBLOCK);
	}
	conn_unlock(c);
	Py_END_ALLOW_THREADS
	/* The guest's ends of the pipes are its own now. */
	for (int i = 0; i < 3; i++)
		if (req->child_fds[i] >= 0) {
			close(req->child_fds[i]);
			req->child_fds[i] = -1;
		}
	if (f.rc < 0) {
		Py_DECREF(g);
		return (GuestObject *)pyiso_raise_failure(&f);
	}
	g->guest = guest;
	g->pid = pid;
	g->uid = uid;
	g->channel_fd = channel_fd;
	g->notes = PyUnicode_DecodeUTF8(notes, (Py_ssize_t)strlen(notes),
					"backslashreplace");
	if (g->notes == NULL) {
		Py_DECREF(g);
		return NULL;
	}
	return g;
}
