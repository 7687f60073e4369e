/*
 * conn.c - isospawn.Connection: one helper, shared by threads, and the
 * waiting that lets them (and asyncio loops) share it (pyiso.h has the
 * invariants).
 */
#include "config.h"

#include "pyiso.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

void conn_lock(ConnObject *c)
{
	pthread_mutex_lock(&c->lock);
}

void conn_unlock(ConnObject *c)
{
	pthread_mutex_unlock(&c->lock);
}

int conn_check_owner(ConnObject *c)
{
	if (c->owner == getpid())
		return 0;
	PyErr_Format(Error,
		     "this connection belongs to process %d: a forked child "
		     "must open its own",
		     (int)c->owner);
	return -1;
}

int conn_check(ConnObject *c)
{
	if (conn_check_owner(c) < 0)
		return -1;
	if (c->conn == NULL) {
		PyErr_SetString(Error, "the connection is closed");
		return -1;
	}
	return 0;
}

int failure_set(struct failure *f, int rc, const char *msg)
{
	f->rc = rc;
	snprintf(f->msg, sizeof(f->msg), "%s", msg);
	return rc;
}

int failure_of_call(struct failure *f, int rc)
{
	f->rc = rc;
	if (rc < 0)
		snprintf(f->msg, sizeof(f->msg), "%s", iso_last_error());
	return rc;
}

int failure_closed(struct failure *f)
{
	return failure_set(f, PYISO_CLOSED, "the connection was closed");
}

/* ------------------------------------------------------------------ */
/* Waiting                                                              */

int ms_until(const struct timespec *deadline)
{
	struct timespec now;
	int64_t ns;

	if (deadline == NULL)
		return -1;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ns = (int64_t)(deadline->tv_sec - now.tv_sec) * 1000000000 +
	     (deadline->tv_nsec - now.tv_nsec);
	if (ns <= 0)
		return 0;
	if (ns / 1000000 >= INT32_MAX)
		return INT32_MAX;
	return (int)((ns + 999999) / 1000000);
}

/* A deadline `seconds` from now. */
static void deadline_in(struct timespec *deadline, double seconds)
{
	double whole = (double)(int64_t)seconds;

	clock_gettime(CLOCK_MONOTONIC, deadline);
	deadline->tv_sec += (time_t)whole;
	deadline->tv_nsec += (long)((seconds - whole) * 1e9);
	if (deadline->tv_nsec >= 1000000000) {
		deadline->tv_sec++;
		deadline->tv_nsec -= 1000000000;
	}
}

int seconds_arg(PyObject *timeout, int zero_ok, double max, double *seconds)
{
	*seconds = PyFloat_AsDouble(timeout);
	if (*seconds == -1.0 && PyErr_Occurred())
		return -1;
	if ((*seconds > 0 || (zero_ok && *seconds == 0)) && *seconds <= max)
		return 0;
	PyErr_SetString(PyExc_ValueError,
			zero_ok ? "timeout must be None or a number of seconds >= 0" :
				  "timeout must be None or seconds > 0");
	return -1;
}

int deadline_arg(PyObject *timeout, struct timespec *deadline,
		 const struct timespec **until)
{
	double seconds;

	*until = NULL;
	if (timeout == Py_None)
		return 0;
	if (seconds_arg(timeout, 1, HUGE_VAL, &seconds) < 0)
		return -1;
	deadline_in(deadline, seconds > 1e9 ? 1e9 : seconds);
	*until = deadline;
	return 0;
}

int message_arg(PyObject *args, Py_buffer *data)
{
	if (!PyArg_ParseTuple(args, "y*:send", data))
		return -1;
	if (data->len > 0 && data->len <= ISO_MESSAGE_MAX)
		return 0;
	PyErr_Format(PyExc_ValueError, "a message is 1 to %d bytes, not %zd",
		     ISO_MESSAGE_MAX, data->len);
	PyBuffer_Release(data);
	return -1;
}

static int readable_now(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) > 0 && (p.revents & POLLIN);
}

int stdio_guard(void)
{
	for (int fd = 0; fd < 3; fd++) {
		int null;

		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
			continue;
		/* The lowest free number: fd itself, as those below are open. */
		null = open("/dev/null", O_RDWR | O_CLOEXEC);
		if (null < 0)
			return -1;
		if (null != fd) {
			close(null);
			errno = EBADF;
			return -1;
		}
		/* An inherited stdio descriptor must survive exec, as the one it
		 * stands for would have. */
		if (fcntl(fd, F_SETFD, 0) < 0)
			return -1;
	}
	return 0;
}

int new_efd(void)
{
	int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK), high;

	if (fd < 0 || fd > 2)
		return fd;
	high = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return high;
}

/* Make an eventfd readable. It cannot fail but with EAGAIN, when the
 * counter is full, which already says "look again". */
void efd_signal(int efd)
{
	static const uint64_t one = 1;
	ssize_t n = write(efd, &one, sizeof(one));

	(void)n;
}

void conn_notify_locked(ConnObject *c, const struct waiter *self)
{
	for (struct waiter *w = c->waiters; w != NULL; w = w->next)
		if (w != self)
			efd_signal(w->efd);
}

/* Make it unreadable again; EAGAIN when it was not readable. */
void efd_drain(int efd)
{
	uint64_t count;
	ssize_t n = read(efd, &count, sizeof(count));

	(void)n;
}

void waiter_add_locked(ConnObject *c, struct waiter *w)
{
	w->next = c->waiters;
	c->waiters = w;
}

void waiter_remove_locked(ConnObject *c, struct waiter *w)
{
	for (struct waiter **p = &c->waiters; *p != NULL; p = &(*p)->next)
		if (*p == w) {
			*p = w->next;
			return;
		}
}

int guest_collect_locked(GuestObject *g, const struct waiter *self,
			 struct failure *f)
{
	ConnObject *c = g->conn;
	struct snapshot *s = &g->snap;
	const char *reason;
	int was_readable, rc;

	if (g->ended)
		return 0;
	if (c->conn == NULL)
		return failure_closed(f);
	/* Only a call that found something to read can have collected
	 * another guest's end: waking the others then, and only then,
	 * cannot set off an endless round of wake-ups. Alone, nobody needs
	 * waking (who registers later collects first), nor the look. */
	was_readable = (c->waiters != NULL &&
			(c->waiters != self || self->next != NULL)) &&
		       readable_now(c->fd);
	rc = failure_of_call(f, iso_wait(g->guest, 0));
	if (rc == -EPIPE)
		c->broken = 1;
	if (was_readable)
		conn_notify_locked(c, self);
	if (rc != 0)
		return rc;
	s->outcome = iso_guest_outcome(g->guest);
	s->code = iso_guest_code(g->guest);
	s->stage = iso_guest_stage(g->guest);
	reason = iso_guest_reason(g->guest);
	snprintf(s->reason, sizeof(s->reason), "%s", reason != NULL ? reason : "");
	s->limit = iso_guest_limit(g->guest);
	iso_guest_usage(g->guest, &s->wall_us, &s->user_us, &s->sys_us,
			&s->maxrss_kib);
	s->exit_code = iso_guest_exit_code(g->guest);
	g->ended = 1;
	return 0;
}

/* Each waiting thread's eventfd, made once and closed when the thread
 * ends: a wait costs no eventfd() and close(). A count left from an
 * earlier wait costs one look more, no more. A forked child makes its own
 * (the copy it inherited is the parent's eventfd, shared). */
struct thread_efd {
	pid_t pid;
	int fd;
};
static pthread_key_t efd_key;
static pthread_once_t efd_once = PTHREAD_ONCE_INIT;
static int efd_key_ok;

static void close_thread_efd(void *p)
{
	struct thread_efd *t = p;

	close(t->fd);
	free(t);
}

static void make_efd_key(void)
{
	efd_key_ok = pthread_key_create(&efd_key, close_thread_efd) == 0;
}

static int thread_efd(void)
{
	struct thread_efd *t;

	pthread_once(&efd_once, make_efd_key);
	if (!efd_key_ok)
		return -1;
	t = pthread_getspecific(efd_key);
	if (t != NULL && t->pid == getpid())
		return t->fd;
	if (t != NULL)
		close(t->fd); /* the parent's, inherited */
	else if ((t = calloc(1, sizeof(*t))) == NULL)
		return -1;
	t->pid = getpid();
	t->fd = new_efd();
	if (t->fd < 0 || pthread_setspecific(efd_key, t) != 0) {
		if (t->fd >= 0)
			close(t->fd);
		free(t);
		pthread_setspecific(efd_key, NULL);
		return -1;
	}
	return t->fd;
}

int guest_wait_nogil(GuestObject *g, const struct timespec *deadline,
		     struct failure *f)
{
	ConnObject *c = g->conn;
	struct waiter self;
	int rc;

	self.efd = thread_efd();
	if (self.efd < 0)
		return failure_set(f, -EMFILE, "no eventfd for a waiting thread");
	conn_lock(c);
	waiter_add_locked(c, &self);
	conn_unlock(c);
	for (;;) {
		struct pollfd p[3] = {
			{ .fd = c->fd, .events = POLLIN },
			{ .fd = self.efd, .events = POLLIN },
			{ .fd = c->close_efd, .events = POLLIN },
		};
		int ms;

		conn_lock(c);
		rc = guest_collect_locked(g, &self, f);
		conn_unlock(c);
		if (rc != 1 || (ms = ms_until(deadline)) == 0)
			break;
		if (poll(p, 3, ms) < 0 && errno == EINTR) {
			rc = -EINTR;
			break;
		}
		if (p[1].revents & POLLIN)
			efd_drain(self.efd);
	}
	conn_lock(c);
	waiter_remove_locked(c, &self);
	conn_unlock(c);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Connection                                                           */

static PyObject *conn_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
	ConnObject *c;

	static char *kwlist[] = { NULL };

	if (!PyArg_ParseTupleAndKeywords(args, kwds, ":Connection", kwlist))
		return NULL;
	c = (ConnObject *)type->tp_alloc(type, 0);
	if (c == NULL)
		return NULL;
	c->conn = NULL;
	c->fd = -1;
	c->close_efd = -1;
	c->owner = getpid();
	c->watchers = PyDict_New();
	if (c->watchers == NULL)
		goto fail;
	if (pthread_mutex_init(&c->lock, NULL) != 0) {
		PyErr_NoMemory();
		goto fail;
	}
	c->lock_ready = 1;
	c->close_efd = new_efd();
	if (c->close_efd < 0) {
		PyErr_SetFromErrno(PyExc_OSError);
		goto fail;
	}
	if (stdio_guard() < 0) {
		PyErr_SetFromErrno(PyExc_OSError);
		goto fail;
	}
	{
		struct failure f = { 0, "" };
		iso_conn *conn = NULL;

		Py_BEGIN_ALLOW_THREADS
		failure_of_call(&f, iso_open(&conn));
		Py_END_ALLOW_THREADS
		if (f.rc < 0) {
			pyiso_raise_failure(&f);
			goto fail;
		}
		c->conn = conn;
	}
	c->fd = iso_conn_fd(c->conn);
	c->landlock_abi = iso_conn_landlock_abi(c->conn);
	return (PyObject *)c;
fail:
	Py_DECREF(c);
	return NULL;
}

/* Close for good; with the GIL. */
static void conn_close_now(ConnObject *c)
{
	iso_conn *conn = c->conn;

	if (conn == NULL)
		return;
	if (c->owner != getpid()) {
		/* The parent's: neither kill its guests nor shut its socket
		 * down. The handle is left as it is. */
		c->conn = NULL;
	} else {
		Py_BEGIN_ALLOW_THREADS
		conn_lock(c);
		c->conn = NULL;
		iso_close(conn);
		efd_signal(c->close_efd);
		conn_unlock(c);
		Py_END_ALLOW_THREADS
	}
}

static PyObject *conn_close(ConnObject *c, PyObject *Py_UNUSED(ignored))
{
	conn_close_now(c);
	Py_RETURN_NONE;
}

static PyObject *conn_enter(ConnObject *c, PyObject *Py_UNUSED(ignored))
{
	if (conn_check(c) < 0)
		return NULL;
	return Py_NewRef(c);
}

static PyObject *conn_fileno(ConnObject *c, PyObject *Py_UNUSED(ignored))
{
	if (conn_check(c) < 0)
		return NULL;
	return PyLong_FromLong(c->fd);
}

static PyObject *conn_spawn(ConnObject *c, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = { "args",   "env",	 "timeout", "limits",
				  "network", "read",	 "write",   "stdin",
				  "stdout", "stderr", "channel", NULL };
	PyObject *argv, *env = Py_None, *timeout = Py_None, *limits = Py_None;
	PyObject *network = Py_None, *read = NULL, *write = NULL;
	PyObject *stdio[3] = { Py_None, Py_None, Py_None };
	struct spawn_request req;
	GuestObject *g;
	int channel = 0, i;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|$OOOOOOOOOp:spawn",
					 kwlist, &argv, &env, &timeout, &limits,
					 &network, &read, &write, &stdio[0],
					 &stdio[1], &stdio[2], &channel))
		return NULL;
	if (conn_check(c) < 0 ||
	    spawn_request_build(&req, argv, env, timeout, limits, network,
				read, write, stdio, channel) < 0)
		return NULL;
	g = conn_spawn_request(c, argv, &req);
	if (g != NULL) {
		static const char *const modes[3] = { "wb", "rb", "rb" };

		for (i = 0; i < 3; i++) {
			PyObject *f;

			if (req.parent_fds[i] < 0)
				continue;
			f = PyFile_FromFd(req.parent_fds[i], NULL, modes[i], -1,
					  NULL, NULL, NULL, 1);
			if (f == NULL) {
				Py_CLEAR(g);
				break;
			}
			req.parent_fds[i] = -1; /* the file owns it now */
			Py_SETREF(g->files[i], f);
		}
	}
	spawn_request_release(&req);
	return (PyObject *)g;
}

static PyObject *conn_run_method(ConnObject *c, PyObject *args, PyObject *kwds)
{
	if (conn_check(c) < 0)
		return NULL;
	return conn_run(c, args, kwds);
}

static PyObject *conn_get_closed(ConnObject *c, void *Py_UNUSED(closure))
{
	return PyBool_FromLong(c->conn == NULL);
}

static PyObject *conn_get_landlock_abi(ConnObject *c, void *Py_UNUSED(closure))
{
	return PyLong_FromLong(c->landlock_abi);
}

static PyObject *conn_repr(ConnObject *c)
{
	if (c->conn == NULL)
		return PyUnicode_FromString("<isospawn.Connection closed>");
	return PyUnicode_FromFormat("<isospawn.Connection fd=%d landlock_abi=%d>",
				    c->fd, c->landlock_abi);
}

static int conn_traverse(ConnObject *c, visitproc visit, void *arg)
{
	Py_VISIT(c->watchers);
	return 0;
}

static int conn_clear(ConnObject *c)
{
	Py_CLEAR(c->watchers);
	return 0;
}

static void conn_dealloc(ConnObject *c)
{
	PyObject_GC_UnTrack(c);
	if (c->weakreflist != NULL)
		PyObject_ClearWeakRefs((PyObject *)c);
	conn_clear(c);
	conn_close_now(c);
	if (c->close_efd >= 0)
		close(c->close_efd);
	if (c->lock_ready)
		pthread_mutex_destroy(&c->lock);
	Py_TYPE(c)->tp_free((PyObject *)c);
}

PyDoc_STRVAR(spawn_doc,
"spawn(args, *, env=None, timeout=None, limits=None, network=None,\n"
"      read=(), write=(), stdin=None, stdout=None, stderr=None,\n"
"      channel=False) -> Guest\n"
"\n"
"Start a guest and return at once. The helper checks the request against\n"
"the policy first; a refusal raises Refused and starts nothing.\n"
"\n"
"args     the program and its arguments (str, bytes or path-like); args[0]\n"
"         is an absolute path, a relative one with a '/', or a bare name\n"
"         looked up in GUEST_PATH only (never the caller's PATH); a bare\n"
"         name found nowhere raises StartFailed (errno ENOENT).\n"
"env      a mapping of overrides merged last into the guest's environment,\n"
"         which is otherwise built from FORWARDED_NAMES and GUEST_PATH\n"
"         (the helper validates them: a refused one raises Refused).\n"
"timeout  wall-clock seconds (float) after which the helper kills the guest\n"
"         (status.outcome 'timed_out'); None: the policy's default.\n"
"limits   a mapping such as {'as': '1G', 'cpu': 10}: cpu (seconds),\n"
"         as/fsize/stack, scratch/shm (the sizes of its /tmp and\n"
"         /dev/shm) (bytes, an int or a str with a K/M/G/T suffix),\n"
"         nofile/nproc (counts); 'unlimited' for no limit.\n"
"network  'none' (loopback only), 'host', or None for the policy's choice.\n"
"read, write  paths the guest may read (or read and write) beneath, within\n"
"         what the policy allows.\n"
"stdin, stdout, stderr  None (inherit this process's), a file object or\n"
"         descriptor, PIPE (then guest.stdin/stdout/stderr are binary files),\n"
"         DEVNULL, or for stderr STDOUT. Of 0, 1 and 2, one this process has\n"
"         closed is first opened on /dev/null, so that no descriptor of\n"
"         isospawn's own (a helper's socket) can take its number and reach\n"
"         the guest.\n"
"channel  give the guest a message channel (guest.send()/recv(); in the\n"
"         guest, isospawn.guest.channel()).\n"
"\n"
"Keep the Guest while the guest should run: a Guest that is garbage\n"
"collected kills its guest, like closing the connection kills them all.");

PyDoc_STRVAR(run_doc,
"run(args, *, env=None, timeout=None, limits=None, network=None, read=(),\n"
"    write=(), stdin=None, stdout=None, stderr=None, capture_output=False,\n"
"    input=None, check=False) -> Completed\n"
"\n"
"Spawn a guest on this connection, feed it input, collect the output\n"
"asked for (PIPE or capture_output) and wait for it, like subprocess.run.\n"
"The arguments are spawn()'s; input (bytes) is written to its stdin.\n"
"timeout is the guest's wall-clock timeout: when it expires the guest is\n"
"killed and run() returns normally with returncode 124 and\n"
"status.outcome 'timed_out' (no exception).\n"
"check=True raises StartFailed when the guest never started and\n"
"GuestError for any other non-zero returncode.\n"
"On an exception (a signal handler's, such as KeyboardInterrupt) the\n"
"guest is killed.");

static PyMethodDef conn_methods[] = {
	{ "spawn", (PyCFunction)(void (*)(void))conn_spawn,
	  METH_VARARGS | METH_KEYWORDS, spawn_doc },
	{ "run", (PyCFunction)(void (*)(void))conn_run_method,
	  METH_VARARGS | METH_KEYWORDS, run_doc },
	{ "close", (PyCFunction)conn_close, METH_NOARGS,
	  "close()\n\nKill every guest of this connection that is still running,\n"
	  "stop its helper and release it. Waits of other threads on its guests\n"
	  "raise Error. Calling it again does nothing." },
	{ "fileno", (PyCFunction)conn_fileno, METH_NOARGS,
	  "fileno() -> int\n\nThe connection's socket (iso_conn_fd()), for "
	  "selectors: readable when\nthe helper sent something, such as a "
	  "guest's end; then call poll() on the\nguests you wait for. Only "
	  "poll it: never read, write or close it." },
	{ "__enter__", (PyCFunction)conn_enter, METH_NOARGS, NULL },
	{ "__exit__", (PyCFunction)(void (*)(void))exit_closes, METH_FASTCALL,
	  NULL },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef conn_getset[] = {
	{ "closed", (getter)conn_get_closed, NULL,
	  "True once close() was called.", NULL },
	{ "landlock_abi", (getter)conn_get_landlock_abi, NULL,
	  "The Landlock ABI version the helper reported (0: none).", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyDoc_STRVAR(conn_doc,
"Connection()\n"
"\n"
"One isospawn helper, started now (the setuid isospawn-helper, or the one\n"
"ISOSPAWN_HELPER names), serving any number of guests until close().\n"
"The helper checks the policy and this caller once: a caller no rule\n"
"admits gets Refused here. A context manager: leaving the with block\n"
"closes it, which kills the guests still running.\n"
"\n"
"A Connection may be shared by threads: every call on it or on its guests\n"
"holds the connection's lock only for one non-blocking library call or\n"
"one spawn round trip; waits happen outside the lock with the GIL\n"
"released. It cannot be used in a forked child (open a new one there);\n"
"the child leaves the parent's guests alone.");

PyTypeObject ConnType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "isospawn.Connection",
	.tp_basicsize = sizeof(ConnObject),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
	.tp_doc = conn_doc,
	.tp_new = conn_new,
	.tp_dealloc = (destructor)conn_dealloc,
	.tp_traverse = (traverseproc)conn_traverse,
	.tp_clear = (inquiry)conn_clear,
	.tp_repr = (reprfunc)conn_repr,
	.tp_methods = conn_methods,
	.tp_getset = conn_getset,
	.tp_weaklistoffset = offsetof(ConnObject, weakreflist),
};
