/*
 * run.c - run(): spawn, feed input, collect output, wait; and Completed.
 */
#include "config.h"

#include "pyiso.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "structmember.h"

/* ------------------------------------------------------------------ */
/* Completed                                                            */

typedef struct {
	PyObject_HEAD
	PyObject *args, *returncode, *stdout_bytes, *stderr_bytes, *status;
} CompletedObject;

static PyObject *completed_new(PyObject *args, int returncode,
			       PyObject *out, PyObject *err, PyObject *status)
{
	CompletedObject *c = PyObject_GC_New(CompletedObject, &CompletedType);

	if (c == NULL)
		return NULL;
	c->args = Py_NewRef(args);
	c->returncode = PyLong_FromLong(returncode);
	c->stdout_bytes = Py_NewRef(out);
	c->stderr_bytes = Py_NewRef(err);
	c->status = Py_NewRef(status);
	PyObject_GC_Track(c);
	if (c->returncode == NULL) {
		Py_DECREF(c);
		return NULL;
	}
	return (PyObject *)c;
}

/* "STAGE failed: REASON: MESSAGE", the errno's message left out when the
 * helper's reason ends with it; without a reason, "STAGE failed: MESSAGE". */
static void failed_what(char *what, size_t n, const char *stage,
			const char *reason, const char *message)
{
	size_t len = reason != NULL ? strlen(reason) : 0, mlen = strlen(message);

	if (reason == NULL)
		snprintf(what, n, "%s failed: %s", stage, message);
	else if (len >= mlen && strcmp(reason + len - mlen, message) == 0)
		snprintf(what, n, "%s failed: %s", stage, reason);
	else
		snprintf(what, n, "%s failed: %s: %s", stage, reason, message);
}

/* Raise StartFailed or GuestError for a non-zero returncode; 0 if none. */
static int completed_check(CompletedObject *c)
{
	PyObject *type = GuestError, *outcome = NULL, *exc = NULL;
	PyObject *stage = NULL, *err = NULL, *reason = NULL, *program;
	char msg[1600], what[1200];
	long code = PyLong_AsLong(c->returncode);
	int errnum = 0;

	if (code == 0)
		return 0;
	if (code == -1 && PyErr_Occurred())
		return -1;
	program = PySequence_Check(c->args) && !PyUnicode_Check(c->args) &&
				  !PyBytes_Check(c->args) ?
			  PySequence_GetItem(c->args, 0) :
			  Py_NewRef(c->args);
	if (program == NULL)
		return -1;
	outcome = PyObject_GetAttrString(c->status, "outcome");
	if (outcome == NULL)
		goto out;
	if (PyUnicode_CompareWithASCIIString(outcome, "failed") == 0) {
		type = StartFailed;
		if ((stage = PyObject_GetAttrString(c->status, "stage")) == NULL ||
		    (err = PyObject_GetAttrString(c->status, "errno")) == NULL ||
		    (reason = PyObject_GetAttrString(c->status, "reason")) == NULL)
			goto out;
		errnum = (int)PyLong_AsLong(err);
		failed_what(what, sizeof(what), PyUnicode_AsUTF8(stage),
			    reason == Py_None ? NULL : PyUnicode_AsUTF8(reason),
			    strerror(errnum));
	} else if (PyUnicode_CompareWithASCIIString(outcome, "exited") == 0) {
		snprintf(what, sizeof(what), "exited with code %ld", code);
	} else if (PyUnicode_CompareWithASCIIString(outcome, "timed_out") == 0) {
		snprintf(what, sizeof(what), "timed out");
	} else if (PyUnicode_CompareWithASCIIString(outcome, "limit") == 0) {
		PyObject *limit = PyObject_GetAttrString(c->status, "limit");

		if (limit == NULL)
			goto out;
		snprintf(what, sizeof(what), "was killed by its %s limit",
			 limit == Py_None ? "resource" : PyUnicode_AsUTF8(limit));
		Py_DECREF(limit);
	} else {
		snprintf(what, sizeof(what), "was killed by signal %ld",
			 code - 128);
	}
	{
		PyObject *repr = PyObject_Repr(program);

		if (repr == NULL)
			goto out;
		snprintf(msg, sizeof(msg), "guest %s %s (returncode %ld)",
			 PyUnicode_AsUTF8(repr), what, code);
		Py_DECREF(repr);
	}
	exc = pyiso_exception(type, errnum, msg,
			      stage != NULL ? PyUnicode_AsUTF8(stage) : NULL);
	if (exc != NULL && PyObject_SetAttrString(exc, "completed",
						  (PyObject *)c) == 0)
		PyErr_SetObject(type, exc);
out:
	Py_XDECREF(exc);
	Py_XDECREF(stage);
	Py_XDECREF(err);
	Py_XDECREF(reason);
	Py_XDECREF(outcome);
	Py_DECREF(program);
	return -1;
}

static PyObject *completed_check_returncode(CompletedObject *c,
					    PyObject *Py_UNUSED(ignored))
{
	if (completed_check(c) < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *completed_repr(CompletedObject *c)
{
	return PyUnicode_FromFormat("Completed(args=%R, returncode=%S, "
				    "stdout=%s, stderr=%s, status=%R)",
				    c->args, c->returncode,
				    c->stdout_bytes == Py_None ? "None" : "...",
				    c->stderr_bytes == Py_None ? "None" : "...",
				    c->status);
}

static int completed_traverse(CompletedObject *c, visitproc visit, void *arg)
{
	Py_VISIT(c->args);
	Py_VISIT(c->returncode);
	Py_VISIT(c->stdout_bytes);
	Py_VISIT(c->stderr_bytes);
	Py_VISIT(c->status);
	return 0;
}

static int completed_clear(CompletedObject *c)
{
	Py_CLEAR(c->args);
	Py_CLEAR(c->returncode);
	Py_CLEAR(c->stdout_bytes);
	Py_CLEAR(c->stderr_bytes);
	Py_CLEAR(c->status);
	return 0;
}

static PyMemberDef completed_members[] = {
	{ "args", T_OBJECT, offsetof(CompletedObject, args), READONLY,
	  "The args given to run()." },
	{ "returncode", T_OBJECT, offsetof(CompletedObject, returncode),
	  READONLY,
	  "status.exit_code: the guest's exit code; 128+N when killed by "
	  "signal N; 124 timed out; 127 not found; 126 not executable; 125 "
	  "any other failure to start." },
	{ "stdout", T_OBJECT, offsetof(CompletedObject, stdout_bytes), READONLY,
	  "Its standard output (bytes) with stdout=PIPE or capture_output, "
	  "else None." },
	{ "stderr", T_OBJECT, offsetof(CompletedObject, stderr_bytes), READONLY,
	  "Its standard error (bytes) with stderr=PIPE or capture_output, "
	  "else None." },
	{ "status", T_OBJECT, offsetof(CompletedObject, status), READONLY,
	  "The Status the helper reported." },
	{ NULL, 0, 0, 0, NULL },
};

static PyMethodDef completed_methods[] = {
	{ "check_returncode", (PyCFunction)completed_check_returncode,
	  METH_NOARGS,
	  "check_returncode()\n\nRaise StartFailed if the guest never started, "
	  "GuestError if returncode is\nany other non-zero value." },
	{ NULL, NULL, 0, NULL },
};

PyTypeObject CompletedType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "isospawn.Completed",
	.tp_basicsize = sizeof(CompletedObject),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
	.tp_doc = "What run() returns: a guest that has ended, with its output.",
	.tp_dealloc = gc_dealloc,
	.tp_traverse = (traverseproc)completed_traverse,
	.tp_clear = (inquiry)completed_clear,
	.tp_repr = (reprfunc)completed_repr,
	.tp_members = completed_members,
	.tp_methods = completed_methods,
};

/* ------------------------------------------------------------------ */
/* Feeding and draining the pipes                                       */

struct pipes {
	int fd[3];	   /* ours: stdin (write), stdout, stderr (read) */
	const char *input; /* what goes to stdin */
	size_t input_len, input_off;
	char *buf[2];	   /* stdout, stderr */
	size_t len[2], cap[2];
};

static void pipes_close(struct pipes *p)
{
	for (int i = 0; i < 3; i++)
		if (p->fd[i] >= 0) {
			close(p->fd[i]);
			p->fd[i] = -1;
		}
}

/* Read what is there on stream i (1 or 2). 0, or -ENOMEM. */
static int pipe_read(struct pipes *p, int i)
{
	size_t k = (size_t)i - 1;
	ssize_t got;

	if (p->cap[k] - p->len[k] < 65536) {
		size_t cap = p->cap[k] ? p->cap[k] * 2 : 131072;
		char *b = realloc(p->buf[k], cap);

		if (b == NULL)
			return -ENOMEM;
		p->buf[k] = b;
		p->cap[k] = cap;
	}
	got = read(p->fd[i], p->buf[k] + p->len[k], p->cap[k] - p->len[k]);
	if (got > 0) {
		p->len[k] += (size_t)got;
	} else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
		close(p->fd[i]);
		p->fd[i] = -1;
	}
	return 0;
}

static void pipe_write(struct pipes *p)
{
	ssize_t put = write(p->fd[0], p->input + p->input_off,
			    p->input_len - p->input_off);

	if (put > 0)
		p->input_off += (size_t)put;
	/* All written, or the guest closed its stdin (EPIPE: Python ignores
	 * SIGPIPE), as subprocess does: the rest is dropped. */
	if (p->input_off == p->input_len ||
	    (put < 0 && errno != EINTR && errno != EAGAIN)) {
		close(p->fd[0]);
		p->fd[0] = -1;
	}
}

/* Until every pipe is closed; without the GIL. 0, -EINTR (call again
 * after checking signals), or -ENOMEM. */
static int pipes_communicate(struct pipes *p)
{
	for (;;) {
		struct pollfd pf[3];
		int n = 0, map[3];

		for (int i = 0; i < 3; i++) {
			if (p->fd[i] < 0)
				continue;
			pf[n].fd = p->fd[i];
			pf[n].events = i == 0 ? POLLOUT : POLLIN;
			pf[n].revents = 0;
			map[n++] = i;
		}
		if (n == 0)
			return 0;
		if (poll(pf, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				return -EINTR;
			return -errno;
		}
		for (int j = 0; j < n; j++) {
			if (pf[j].revents == 0)
				continue;
			if (map[j] == 0)
				pipe_write(p);
			else if (pipe_read(p, map[j]) < 0)
				return -ENOMEM;
		}
	}
}

static PyObject *pipe_bytes(const struct pipes *p, int i, int wanted)
{
	if (!wanted)
		Py_RETURN_NONE;
	return PyBytes_FromStringAndSize(p->buf[i - 1] ? p->buf[i - 1] : "",
					 (Py_ssize_t)p->len[i - 1]);
}

/* ------------------------------------------------------------------ */
/* run()                                                                */

PyObject *conn_run(ConnObject *c, PyObject *posargs, PyObject *kwargs)
{
	static char *kwlist[] = { "args",	    "env",    "timeout", "limits",
				  "network",	    "read",   "write",	 "stdin",
				  "stdout",	    "stderr", "capture_output",
				  "input",	    "check",  NULL };
	PyObject *argv, *env = Py_None, *timeout = Py_None, *limits = Py_None;
	PyObject *network = Py_None, *read = NULL, *write = NULL;
	PyObject *stdio[3] = { Py_None, Py_None, Py_None }, *input = Py_None;
	PyObject *pipe = NULL, *out = NULL, *err = NULL, *result = NULL;
	PyObject *status = NULL;
	struct spawn_request req;
	struct pipes p = { .fd = { -1, -1, -1 } };
	Py_buffer view = { .buf = NULL };
	GuestObject *g = NULL;
	int capture = 0, check = 0, rc;

	if (!PyArg_ParseTupleAndKeywords(posargs, kwargs, "O|$OOOOOOOOOpOp:run",
					 kwlist, &argv, &env, &timeout, &limits,
					 &network, &read, &write, &stdio[0],
					 &stdio[1], &stdio[2], &capture, &input,
					 &check))
		return NULL;
	pipe = PyLong_FromLong(PYISO_PIPE);
	if (pipe == NULL)
		return NULL;
	if (capture) {
		if (stdio[1] != Py_None || stdio[2] != Py_None) {
			PyErr_SetString(PyExc_ValueError,
					"stdout and stderr may not be used with "
					"capture_output");
			goto out;
		}
		stdio[1] = stdio[2] = pipe;
	}
	if (input != Py_None) {
		if (stdio[0] != Py_None) {
			PyErr_SetString(PyExc_ValueError,
					"stdin and input may not both be used");
			goto out;
		}
		if (PyObject_GetBuffer(input, &view, PyBUF_SIMPLE) < 0)
			goto out;
		stdio[0] = pipe;
	}
	if (spawn_request_build(&req, argv, env, timeout, limits, network, read,
				write, stdio, 0) < 0)
		goto out;
	g = conn_spawn_request(c, argv, &req);
	for (int i = 0; i < 3; i++) {
		p.fd[i] = req.parent_fds[i];
		req.parent_fds[i] = -1;
	}
	spawn_request_release(&req);
	if (g == NULL)
		goto out;
	p.input = view.buf;
	p.input_len = view.buf ? (size_t)view.len : 0;
	if (p.fd[0] >= 0 && p.input_len == 0) {
		close(p.fd[0]); /* stdin=PIPE without input: end of file */
		p.fd[0] = -1;
	}
	if (p.fd[0] >= 0 && fcntl(p.fd[0], F_SETFL, O_NONBLOCK) < 0) {
		PyErr_SetFromErrno(PyExc_OSError);
		goto out;
	}
	for (;;) {
		Py_BEGIN_ALLOW_THREADS
		rc = pipes_communicate(&p);
		Py_END_ALLOW_THREADS
		if (rc != -EINTR)
			break;
		if (PyErr_CheckSignals() < 0)
			goto out;
	}
	if (rc == -ENOMEM) {
		PyErr_NoMemory();
		goto out;
	}
	if (rc < 0) {
		errno = -rc;
		PyErr_SetFromErrno(PyExc_OSError);
		goto out;
	}
	if (guest_wait_until(g, NULL) < 0)
		goto out;
	status = guest_status(g);
	out = pipe_bytes(&p, 1, stdio[1] == pipe ||
					(PyLong_Check(stdio[1]) &&
					 PyLong_AsLong(stdio[1]) == PYISO_PIPE));
	err = pipe_bytes(&p, 2, stdio[2] == pipe ||
					(PyLong_Check(stdio[2]) &&
					 PyLong_AsLong(stdio[2]) == PYISO_PIPE));
	if (status == NULL || out == NULL || err == NULL)
		goto out;
	result = completed_new(argv, g->snap.exit_code, out, err, status);
	if (result != NULL && check &&
	    completed_check((CompletedObject *)result) < 0)
		Py_CLEAR(result);
out:
	pipes_close(&p);
	free(p.buf[0]);
	free(p.buf[1]);
	if (view.buf != NULL)
		PyBuffer_Release(&view);
	Py_XDECREF(status);
	Py_XDECREF(out);
	Py_XDECREF(err);
	Py_XDECREF(g); /* kills the guest if an exception cut the run short */
	Py_XDECREF(pipe);
	return result;
}
