/*
 * core.c - isospawn._core: libisospawn's calls, one to one, for the
 * Python package isospawn (python/isospawn/). On the public API only
 * (include/isospawn.h).
 *
 * Dumb on purpose: arguments become C values, the library is called, and
 * a negative return becomes _core.Error (an OSError: .errno, and the
 * library's message as .strerror). Locking, waiting, argument conventions
 * and the public exceptions are the package's (python/isospawn/_conn.py).
 *
 * Handles and their lifetimes:
 *  - Conn owns an iso_conn from Conn() until close() or its deallocation.
 *    iso_close() frees every iso_guest of the connection, so a Guest
 *    holds a reference to its Conn and, once that is closed, raises
 *    Error(EBADF) rather than touch what was freed.
 *  - Guest owns its iso_guest until its deallocation, which frees it
 *    (the library kills a guest still running), unless its Conn was
 *    closed first.
 *  - Spec owns an iso_spec until its deallocation.
 *  - The library allows one thread at a time per connection and what is
 *    made from it. A call that releases the GIL marks its Conn (and a
 *    spawn its Spec) busy until it returns; a call on a busy handle raises
 *    Error(EBUSY) rather than race (the package's lock means it never
 *    does). A Guest deallocated while its Conn is busy leaves its
 *    iso_guest to be freed when the busy call returns.
 */
#include "config.h"

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "isospawn.h"

extern char **environ;

static PyObject *CoreError;
static char *no_keywords[] = { NULL };

/* Library text as str: bytes that are not UTF-8 (a path the helper
 * quotes) become backslash escapes. */
static PyObject *text(const char *s)
{
	return PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "backslashreplace");
}

/* Raise Error(err, msg); returns NULL. */
static PyObject *fail_with(int err, const char *msg)
{
	PyObject *m = text(msg), *v;

	if (m == NULL)
		return NULL;
	v = Py_BuildValue("(iN)", err, m);
	if (v != NULL) {
		PyErr_SetObject(CoreError, v);
		Py_DECREF(v);
	}
	return NULL;
}

/* Raise Error for a call that returned rc < 0, in the thread that made it. */
static PyObject *fail(int rc)
{
	return fail_with(-rc, iso_last_error());
}

/* ------------------------------------------------------------------ */
/* Conn                                                                 */

typedef struct {
	PyObject_HEAD iso_conn *conn; /* NULL once closed */
	int busy; /* a call runs without the GIL */
	iso_guest **orphans; /* freed when the busy call returns */
	size_t norphans, cap;
} ConnObject;

static PyTypeObject ConnType, GuestType, SpecType;

/* Before a call on c: 0, or -1 with Error raised. */
static int conn_usable(ConnObject *c)
{
	if (c->conn == NULL) {
		fail_with(EBADF, "the connection is closed");
		return -1;
	}
	if (c->busy) {
		fail_with(EBUSY, "the connection is in use by another thread");
		return -1;
	}
	return 0;
}

/* Free guest when the busy call returns. Out of memory, it is left to
 * iso_close(), which frees and kills every guest of the connection. */
static void conn_orphan(ConnObject *c, iso_guest *guest)
{
	if (c->norphans == c->cap) {
		size_t cap = c->cap * 2 + 4;
		iso_guest **more = PyMem_Realloc(c->orphans, cap * sizeof(*more));

		if (more == NULL)
			return;
		c->orphans = more;
		c->cap = cap;
	}
	c->orphans[c->norphans++] = guest;
}

/* After a call that released the GIL. */
static void conn_leave(ConnObject *c)
{
	c->busy = 0;
	while (c->norphans > 0)
		iso_guest_free(c->orphans[--c->norphans]);
}

static PyObject *conn_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
	static char *keywords[] = { "wait_ms", NULL };
	unsigned long long wait_ms = 0;
	ConnObject *c;
	iso_conn *conn = NULL;
	int rc;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "|K:Conn", keywords, &wait_ms))
		return NULL;
	Py_BEGIN_ALLOW_THREADS rc = iso_open_wait(&conn, wait_ms);
	Py_END_ALLOW_THREADS if (rc < 0) return fail(rc);
	c = (ConnObject *)type->tp_alloc(type, 0);
	if (c == NULL) {
		iso_close(conn);
		return NULL;
	}
	c->conn = conn;
	return (PyObject *)c;
}

static void conn_dealloc(ConnObject *c)
{
	/* No Guest is left (each holds its Conn), and nothing is busy. */
	if (c->conn != NULL) {
		Py_BEGIN_ALLOW_THREADS iso_close(c->conn);
		Py_END_ALLOW_THREADS
	}
	PyMem_Free(c->orphans);
	Py_TYPE(c)->tp_free((PyObject *)c);
}

static PyObject *conn_close(ConnObject *c, PyObject *Py_UNUSED(ignored))
{
	iso_conn *conn = c->conn;

	if (conn == NULL)
		Py_RETURN_NONE;
	if (conn_usable(c) < 0)
		return NULL;
	/* Closed for every other thread from here: their Guests free
	 * nothing, as iso_close() frees them all. */
	c->conn = NULL;
	Py_BEGIN_ALLOW_THREADS iso_close(conn);
	Py_END_ALLOW_THREADS Py_RETURN_NONE;
}

static PyObject *conn_fd(ConnObject *c, PyObject *Py_UNUSED(ignored))
{
	if (c->conn == NULL)
		return fail_with(EBADF, "the connection is closed");
	return PyLong_FromLong(iso_conn_fd(c->conn));
}

static PyObject *conn_landlock_abi(ConnObject *c, PyObject *Py_UNUSED(ignored))
{
	if (c->conn == NULL)
		return fail_with(EBADF, "the connection is closed");
	return PyLong_FromLong(iso_conn_landlock_abi(c->conn));
}

/* ------------------------------------------------------------------ */
/* Spec                                                                 */

typedef struct {
	PyObject_HEAD iso_spec *spec;
	int busy; /* a spawn reads it without the GIL */
} SpecObject;

static PyObject *spec_new(PyTypeObject *type, PyObject *args, PyObject *kwds)
{
	SpecObject *s;
	int rc;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, ":Spec", no_keywords))
		return NULL;
	s = (SpecObject *)type->tp_alloc(type, 0);
	if (s == NULL)
		return NULL;
	rc = iso_spec_new(&s->spec);
	if (rc < 0) {
		Py_DECREF(s);
		return fail(rc);
	}
	return (PyObject *)s;
}

static void spec_dealloc(SpecObject *s)
{
	iso_spec_free(s->spec);
	Py_TYPE(s)->tp_free((PyObject *)s);
}

static int spec_usable(SpecObject *s)
{
	if (!s->busy)
		return 0;
	fail_with(EBUSY, "the spec is in use by a spawn in another thread");
	return -1;
}

/* A list or tuple of bytes as a NULL-terminated array (pointing into the
 * bytes), for "O&"; None is NULL. Cleanup-aware: release with strv_done. */
struct strv {
	PyObject *seq;
	const char **v;
};

static void strv_done(struct strv *sv)
{
	if (sv->seq != NULL)
		PyMem_Free(sv->v);
	Py_CLEAR(sv->seq);
	sv->v = NULL;
}

static int strv_arg(PyObject *o, void *out)
{
	struct strv *sv = out;
	Py_ssize_t n;

	if (o == NULL) { /* a later argument failed */
		strv_done(sv);
		return 1;
	}
	sv->seq = NULL;
	sv->v = NULL;
	if (o == Py_None)
		return Py_CLEANUP_SUPPORTED;
	if (!PyList_Check(o) && !PyTuple_Check(o)) {
		PyErr_SetString(PyExc_TypeError, "expected a list of bytes or None");
		return 0;
	}
	sv->seq = PySequence_Fast(o, "");
	if (sv->seq == NULL)
		return 0;
	n = PySequence_Fast_GET_SIZE(sv->seq);
	sv->v = PyMem_Calloc((size_t)n + 1, sizeof(*sv->v));
	if (sv->v == NULL) {
		PyErr_NoMemory();
		goto fail;
	}
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *b = PySequence_Fast_GET_ITEM(sv->seq, i);

		if (!PyBytes_Check(b) ||
		    strlen(PyBytes_AS_STRING(b)) != (size_t)PyBytes_GET_SIZE(b)) {
			PyErr_SetString(PyExc_TypeError, "expected bytes without a null byte");
			goto fail;
		}
		sv->v[i] = PyBytes_AS_STRING(b);
	}
	return Py_CLEANUP_SUPPORTED;
fail:
	strv_done(sv);
	return 0;
}

static int bytes_or_none(PyObject *o, void *out)
{
	if (o == Py_None) {
		*(const char **)out = NULL;
		return 1;
	}
	if (PyBytes_Check(o) && strlen(PyBytes_AS_STRING(o)) == (size_t)PyBytes_GET_SIZE(o)) {
		*(const char **)out = PyBytes_AS_STRING(o);
		return 1;
	}
	PyErr_SetString(PyExc_TypeError, "expected bytes without a null byte, or None");
	return 0;
}

static int u64_arg(PyObject *o, void *out)
{
	unsigned long long v = PyLong_AsUnsignedLongLong(o);

	if (v == (unsigned long long)-1 && PyErr_Occurred())
		return 0;
	*(uint64_t *)out = v;
	return 1;
}

/*
 * How each kind of setter's Python arguments become the C call's: what
 * it declares, its PyArg_ParseTuple format and pointers, the call's
 * arguments after the spec, and what is released after the call.
 */
#define DECL_str const char *a
#define FMT_str "y"
#define PTRS_str &a
#define CALL_str a
#define DONE_str

#define DECL_str_or_none const char *a
#define FMT_str_or_none "O&"
#define PTRS_str_or_none bytes_or_none, &a
#define CALL_str_or_none a
#define DONE_str_or_none

#define DECL_str_str const char *a, *b
#define FMT_str_str "yy"
#define PTRS_str_str &a, &b
#define CALL_str_str a, b
#define DONE_str_str

#define DECL_strv struct strv a
#define FMT_strv "O&"
#define PTRS_strv strv_arg, &a
#define CALL_strv a.v
#define DONE_strv strv_done(&a)

/* As strv, and when left out the process environment, as it is now: read
 * with the GIL held, so that no Python thread changes it meanwhile. */
#define DECL_env struct strv a = { NULL, (const char **)environ }
#define FMT_env "|O&"
#define PTRS_env strv_arg, &a
#define CALL_env a.v
#define DONE_env strv_done(&a)

#define DECL_int int a
#define FMT_int "i"
#define PTRS_int &a
#define CALL_int a
#define DONE_int

#define DECL_int3 int a, b, c
#define FMT_int3 "iii"
#define PTRS_int3 &a, &b, &c
#define CALL_int3 a, b, c
#define DONE_int3

#define DECL_u64 uint64_t a
#define FMT_u64 "O&"
#define PTRS_u64 u64_arg, &a
#define CALL_u64 a
#define DONE_u64

#define DECL_int_u64 \
	int a;       \
	uint64_t b
#define FMT_int_u64 "iO&"
#define PTRS_int_u64 &a, u64_arg, &b
#define CALL_int_u64 a, b
#define DONE_int_u64

/* Every iso_spec_ setter and the kind of its arguments: the library's
 * next setter is one line here. */
#define SPEC_SETTERS(X)             \
	X(set_program, str)         \
	X(set_argv, strv)           \
	X(set_source_env, env)      \
	X(set_env, str_str)         \
	X(set_stdio, int3)          \
	X(set_limit, int_u64)       \
	X(set_timeout, u64)         \
	X(set_wait_slot, u64)       \
	X(set_network, int)         \
	X(add_read_path, str)       \
	X(add_write_path, str)      \
	X(set_cwd, str_or_none)     \
	X(set_workdir, str_or_none) \
	X(set_channel, int)         \
	X(pass_fd, int)

#define SETTER_FUNCTION(name, kind)                                             \
	static PyObject *spec_##name(SpecObject *s, PyObject *args)             \
	{                                                                       \
		DECL_##kind;                                                    \
		int rc;                                                         \
                                                                                \
		if (spec_usable(s) < 0 ||                                       \
		    !PyArg_ParseTuple(args, FMT_##kind ":" #name, PTRS_##kind)) \
			return NULL;                                            \
		rc = iso_spec_##name(s->spec, CALL_##kind);                     \
		DONE_##kind;                                                    \
		if (rc < 0)                                                     \
			return fail(rc);                                        \
		Py_RETURN_NONE;                                                 \
	}
SPEC_SETTERS(SETTER_FUNCTION)

#define SETTER_METHOD(name, kind) \
	{ #name, (PyCFunction)spec_##name, METH_VARARGS, "iso_spec_" #name "()" },

/* ------------------------------------------------------------------ */
/* Guest                                                                */

typedef struct {
	PyObject_HEAD ConnObject *conn; /* strong */
	iso_guest *guest;
} GuestObject;

/* Its iso_guest for a call, or NULL with Error raised. */
static iso_guest *guest_usable(GuestObject *g)
{
	if (conn_usable(g->conn) < 0)
		return NULL;
	return g->guest;
}

static void guest_dealloc(GuestObject *g)
{
	ConnObject *c = g->conn;

	if (c->conn != NULL && !c->busy)
		iso_guest_free(g->guest);
	else if (c->conn != NULL)
		conn_orphan(c, g->guest);
	/* else iso_close() freed it */
	Py_DECREF(c);
	Py_TYPE(g)->tp_free((PyObject *)g);
}

/* rc = call, with the GIL released and c busy; Error raised when `failed`,
 * before the orphans are freed (which may change iso_last_error()). */
#define UNLOCKED_CALL(c, rc, call, failed)                      \
	do {                                                    \
		(c)->busy = 1;                                  \
		Py_BEGIN_ALLOW_THREADS rc = call;               \
		Py_END_ALLOW_THREADS if (failed) fail((int)rc); \
		conn_leave(c);                                  \
	} while (0)

static PyObject *conn_spawn(ConnObject *c, PyObject *arg)
{
	SpecObject *s = (SpecObject *)arg;
	iso_guest *guest = NULL;
	GuestObject *g;
	int rc;

	if (!PyObject_TypeCheck(arg, &SpecType))
		return PyErr_Format(PyExc_TypeError, "spawn() takes a Spec");
	if (conn_usable(c) < 0 || spec_usable(s) < 0)
		return NULL;
	s->busy = 1;
	UNLOCKED_CALL(c, rc, iso_spawn(c->conn, s->spec, &guest), rc < 0);
	s->busy = 0;
	if (rc < 0)
		return NULL;
	if ((g = PyObject_New(GuestObject, &GuestType)) == NULL) {
		iso_guest_free(guest);
		return NULL;
	}
	g->conn = (ConnObject *)Py_NewRef(c);
	g->guest = guest;
	return (PyObject *)g;
}

static PyObject *guest_wait(GuestObject *g, PyObject *args)
{
	iso_guest *guest;
	int ms, rc;

	if (!PyArg_ParseTuple(args, "i:wait", &ms) || (guest = guest_usable(g)) == NULL)
		return NULL;
	UNLOCKED_CALL(g->conn, rc, iso_wait(guest, ms), rc < 0 && rc != -EINTR);
	/* A signal: its Python handler runs now; then "still running", and
	 * the caller waits again if it likes. */
	if (rc == -EINTR)
		return PyErr_CheckSignals() < 0 ? NULL : PyLong_FromLong(1);
	return rc < 0 ? NULL : PyLong_FromLong(rc);
}

static PyObject *guest_kill(GuestObject *g, PyObject *args)
{
	iso_guest *guest;
	int sig, rc;

	if (!PyArg_ParseTuple(args, "i:kill", &sig) || (guest = guest_usable(g)) == NULL)
		return NULL;
	UNLOCKED_CALL(g->conn, rc, iso_kill(guest, sig), rc < 0);
	if (rc < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *guest_send(GuestObject *g, PyObject *args)
{
	iso_guest *guest;
	Py_buffer data;
	int rc = 0;

	if (!PyArg_ParseTuple(args, "y*:send", &data))
		return NULL;
	if ((guest = guest_usable(g)) != NULL)
		UNLOCKED_CALL(g->conn, rc, iso_send(guest, data.buf, (size_t)data.len), rc < 0);
	PyBuffer_Release(&data);
	if (guest == NULL || rc < 0)
		return NULL;
	Py_RETURN_NONE;
}

/* iso_recv(ms, cap): a message of at most cap bytes (bytes), b"" at the
 * end of the channel, None when nothing came in time; with cap 0 the
 * next message's length (int) instead. */
static PyObject *guest_recv(GuestObject *g, PyObject *args)
{
	iso_guest *guest;
	PyObject *buf = NULL;
	Py_ssize_t cap;
	int ms;
	long n;

	if (!PyArg_ParseTuple(args, "in:recv", &ms, &cap))
		return NULL;
	if (cap < 0)
		return PyErr_Format(PyExc_ValueError, "cap must be >= 0");
	if (cap > 0 && (buf = PyBytes_FromStringAndSize(NULL, cap)) == NULL)
		return NULL;
	if ((guest = guest_usable(g)) == NULL) {
		Py_XDECREF(buf);
		return NULL;
	}
	UNLOCKED_CALL(g->conn, n,
		      iso_recv(guest, buf ? PyBytes_AS_STRING(buf) : NULL, (size_t)cap, ms),
		      n < 0 && n != ISO_RECV_TIMEOUT && n != ISO_RECV_EOF);
	if (n == ISO_RECV_EOF)
		n = 0;
	if (n < 0) {
		Py_XDECREF(buf);
		return n == ISO_RECV_TIMEOUT ? Py_NewRef(Py_None) : NULL;
	}
	if (buf == NULL)
		return n == 0 ? PyBytes_FromStringAndSize(NULL, 0) : PyLong_FromLong(n);
	if (_PyBytes_Resize(&buf, (Py_ssize_t)n) < 0)
		return NULL;
	return buf;
}

/* The accessors, which only read the handle. */
#define GUEST_GETTER(name, make)                                              \
	static PyObject *guest_##name(GuestObject *g, PyObject *Py_UNUSED(x)) \
	{                                                                     \
		iso_guest *guest = guest_usable(g);                           \
                                                                              \
		return guest == NULL ? NULL : make;                           \
	}
GUEST_GETTER(pid, PyLong_FromLong(iso_guest_pid(guest)))
GUEST_GETTER(uid, PyLong_FromUnsignedLong(iso_guest_uid(guest)))
GUEST_GETTER(notes, text(iso_guest_notes(guest)))
GUEST_GETTER(outcome, PyLong_FromLong(iso_guest_outcome(guest)))
GUEST_GETTER(code, PyLong_FromLong(iso_guest_code(guest)))
GUEST_GETTER(stage, PyLong_FromLong(iso_guest_stage(guest)))
GUEST_GETTER(reason, iso_guest_reason(guest) ? text(iso_guest_reason(guest)) : Py_NewRef(Py_None))
GUEST_GETTER(limit, PyLong_FromLong(iso_guest_limit(guest)))
GUEST_GETTER(limits_reached, PyLong_FromUnsignedLong(iso_guest_limits_reached(guest)))
GUEST_GETTER(exit_code, PyLong_FromLong(iso_guest_exit_code(guest)))
GUEST_GETTER(channel_fd, PyLong_FromLong(iso_channel_fd(guest)))

/* (wall_us, user_us, sys_us, maxrss_kib) */
static PyObject *guest_usage(GuestObject *g, PyObject *Py_UNUSED(ignored))
{
	iso_guest *guest = guest_usable(g);
	uint64_t wall, user, sys, rss;

	if (guest == NULL)
		return NULL;
	iso_guest_usage(guest, &wall, &user, &sys, &rss);
	return Py_BuildValue("(KKKK)", (unsigned long long)wall, (unsigned long long)user,
			     (unsigned long long)sys, (unsigned long long)rss);
}

/* (cpu_us, memory_peak), or None: the guest had no cgroup. */
static PyObject *guest_cgroup_usage(GuestObject *g, PyObject *Py_UNUSED(ignored))
{
	iso_guest *guest = guest_usable(g);
	uint64_t cpu, peak;

	if (guest == NULL)
		return NULL;
	if (iso_guest_cgroup_usage(guest, &cpu, &peak) < 0)
		Py_RETURN_NONE;
	return Py_BuildValue("(KK)", (unsigned long long)cpu, (unsigned long long)peak);
}

/* ------------------------------------------------------------------ */
/* Module functions                                                     */

/* iso_build_env(source, overrides) with the default rules: a list of
 * b"NAME=value". */
static PyObject *core_build_env(PyObject *self, PyObject *args)
{
	struct strv src, ovr;
	char why[512] = "", **out = NULL;
	PyObject *list;
	int rc;

	if (!PyArg_ParseTuple(args, "O&O&:build_env", strv_arg, &src, strv_arg, &ovr))
		return NULL;
	rc = iso_build_env(src.v, ovr.v, NULL, 0, &out, why, sizeof(why));
	strv_done(&src);
	strv_done(&ovr);
	if (rc < 0)
		return fail_with(-rc, why[0] ? why : iso_strerror(rc));
	list = PyList_New(0);
	for (char **e = out; list != NULL && *e != NULL; e++) {
		PyObject *b = PyBytes_FromString(*e);

		if (b == NULL || PyList_Append(list, b) < 0)
			Py_CLEAR(list);
		Py_XDECREF(b);
	}
	free(out);
	return list;
}

static PyObject *name_or_none(const char *name)
{
	return name != NULL ? PyUnicode_FromString(name) : Py_NewRef(Py_None);
}

/* iso_limit_name(), iso_outcome_name(), iso_stage_name(): a str, or None. */
#define NAME_FUNCTION(name, type)                                    \
	static PyObject *core_##name(PyObject *self, PyObject *args) \
	{                                                            \
		int v;                                               \
                                                                     \
		if (!PyArg_ParseTuple(args, "i:" #name, &v))         \
			return NULL;                                 \
		return name_or_none(iso_##name((type)v));            \
	}
NAME_FUNCTION(limit_name, enum iso_limit)
NAME_FUNCTION(outcome_name, enum iso_outcome)
NAME_FUNCTION(stage_name, enum iso_stage)

static PyObject *core_limit_from_name(PyObject *self, PyObject *args)
{
	const char *name;
	int rc;

	if (!PyArg_ParseTuple(args, "s:limit_from_name", &name))
		return NULL;
	rc = iso_limit_from_name(name);
	return rc < 0 ? fail_with(-rc, iso_strerror(rc)) : PyLong_FromLong(rc);
}

static PyObject *core_limit_parse(PyObject *self, PyObject *args)
{
	const char *s;
	uint64_t value;
	int which, rc;

	if (!PyArg_ParseTuple(args, "si:limit_parse", &s, &which))
		return NULL;
	rc = iso_limit_parse(s, (enum iso_limit)which, &value);
	if (rc < 0)
		return fail_with(-rc, iso_strerror(rc));
	return PyLong_FromUnsignedLongLong(value);
}

static PyObject *core_strerror(PyObject *self, PyObject *args)
{
	int code;

	if (!PyArg_ParseTuple(args, "i:strerror", &code))
		return NULL;
	return text(iso_strerror(code));
}

static PyObject *core_last_error(PyObject *self, PyObject *Py_UNUSED(ignored))
{
	return text(iso_last_error());
}

/* ------------------------------------------------------------------ */
/* Types and module                                                     */

static PyMethodDef conn_methods[] = {
	{ "close", (PyCFunction)conn_close, METH_NOARGS, "iso_close()" },
	{ "fd", (PyCFunction)conn_fd, METH_NOARGS, "iso_conn_fd()" },
	{ "landlock_abi", (PyCFunction)conn_landlock_abi, METH_NOARGS, "iso_conn_landlock_abi()" },
	{ "spawn", (PyCFunction)conn_spawn, METH_O, "iso_spawn(): a Guest" },
	{ NULL, NULL, 0, NULL },
};

static PyMethodDef spec_methods[] = {
	SPEC_SETTERS(SETTER_METHOD){ NULL, NULL, 0, NULL },
};

#define GUEST_METHOD(name, doc) { #name, (PyCFunction)guest_##name, METH_NOARGS, doc },
static PyMethodDef guest_methods[] = {
	{ "wait", (PyCFunction)guest_wait, METH_VARARGS,
	  "iso_wait(ms): 0 ended, 1 still running (or a signal came)" },
	{ "kill", (PyCFunction)guest_kill, METH_VARARGS, "iso_kill(sig)" },
	{ "send", (PyCFunction)guest_send, METH_VARARGS, "iso_send(data)" },
	{ "recv", (PyCFunction)guest_recv, METH_VARARGS,
	  "iso_recv(ms, cap): a message, b'' at its end, None on timeout; "
	  "with cap 0 the next one's length" },
	GUEST_METHOD(pid, "iso_guest_pid()") GUEST_METHOD(uid, "iso_guest_uid()") GUEST_METHOD(
	    notes, "iso_guest_notes()") GUEST_METHOD(outcome, "iso_guest_outcome()")
	    GUEST_METHOD(code, "iso_guest_code()") GUEST_METHOD(
		stage, "iso_guest_stage()") GUEST_METHOD(reason, "iso_guest_reason(), or None")
		GUEST_METHOD(limit, "iso_guest_limit()") GUEST_METHOD(
		    usage, "iso_guest_usage(): (wall_us, user_us, sys_us, maxrss_kib)")
		    GUEST_METHOD(cgroup_usage, "iso_guest_cgroup_usage(): (cpu_us, memory_peak), "
					       "or None without a cgroup")
			GUEST_METHOD(limits_reached, "iso_guest_limits_reached(): bits 1 << limit")
			    GUEST_METHOD(exit_code, "iso_guest_exit_code()")
				GUEST_METHOD(channel_fd, "iso_channel_fd()"){ NULL, NULL, 0, NULL },
};

/* A handle's type: prefix_dealloc, prefix_methods; no subclasses. */
#define HANDLE_TYPE(Name, prefix, new_fn, doc)                                    \
	static PyTypeObject Name##Type = {                                        \
		PyVarObject_HEAD_INIT(NULL, 0).tp_name = "isospawn._core." #Name, \
		.tp_basicsize = sizeof(Name##Object),                             \
		.tp_flags = Py_TPFLAGS_DEFAULT,                                   \
		.tp_doc = doc,                                                    \
		.tp_new = new_fn,                                                 \
		.tp_dealloc = (destructor)prefix##_dealloc,                       \
		.tp_methods = prefix##_methods,                                   \
	};
HANDLE_TYPE(Conn, conn, conn_new, "iso_open_wait(wait_ms=0): a connection to a helper.")
HANDLE_TYPE(Spec, spec, spec_new, "iso_spec_new(): what to run, and how.")
HANDLE_TYPE(Guest, guest, NULL, "A guest from Conn.spawn(); freed (killed) when released.")

static PyMethodDef core_methods[] = {
	{ "build_env", core_build_env, METH_VARARGS,
	  "iso_build_env(source, overrides), the default rules" },
	{ "limit_name", core_limit_name, METH_VARARGS, "iso_limit_name()" },
	{ "limit_from_name", core_limit_from_name, METH_VARARGS, "iso_limit_from_name()" },
	{ "limit_parse", core_limit_parse, METH_VARARGS, "iso_limit_parse()" },
	{ "outcome_name", core_outcome_name, METH_VARARGS, "iso_outcome_name()" },
	{ "stage_name", core_stage_name, METH_VARARGS, "iso_stage_name()" },
	{ "strerror", core_strerror, METH_VARARGS, "iso_strerror()" },
	{ "last_error", core_last_error, METH_NOARGS, "iso_last_error()" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef core_module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "isospawn._core",
	.m_doc = "libisospawn's calls, one to one, for the package isospawn.",
	.m_size = -1,
	.m_methods = core_methods,
};

static int add_constants(PyObject *m)
{
	static const char *const forwarded[] = { ISO_FORWARDED_NAMES };
	static const struct {
		const char *name;
		int value;
	} ints[] = {
		{ "MESSAGE_MAX", ISO_MESSAGE_MAX },
		{ "LIMIT_COUNT", ISO_LIMIT_COUNT },
		{ "NETWORK_NONE", ISO_NETWORK_NONE },
		{ "NETWORK_HOST", ISO_NETWORK_HOST },
		{ "CHANNEL_MESSAGES", ISO_CHANNEL_MESSAGES },
		{ "CHANNEL_STREAM", ISO_CHANNEL_STREAM },
	};
	size_t n = sizeof(forwarded) / sizeof(forwarded[0]);
	PyObject *names = PyTuple_New((Py_ssize_t)n), *none;
	int rc;

	for (size_t i = 0; names != NULL && i < n; i++) {
		PyObject *s = PyUnicode_FromString(forwarded[i]);

		if (s == NULL)
			Py_CLEAR(names);
		else
			PyTuple_SET_ITEM(names, (Py_ssize_t)i, s);
	}
	if (names == NULL || PyModule_AddObject(m, "FORWARDED_NAMES", names) < 0) {
		Py_XDECREF(names);
		return -1;
	}
	for (size_t i = 0; i < sizeof(ints) / sizeof(ints[0]); i++)
		if (PyModule_AddIntConstant(m, ints[i].name, ints[i].value) < 0)
			return -1;
	if (PyModule_AddStringConstant(m, "GUEST_PATH", ISO_GUEST_PATH) < 0 ||
	    PyModule_AddStringConstant(m, "VERSION", PACKAGE_VERSION) < 0)
		return -1;
	/* UINT64_MAX, too large for an int constant. */
	none = PyLong_FromUnsignedLongLong(ISO_TIMEOUT_NONE);
	rc = none == NULL ? -1 : PyModule_AddObjectRef(m, "TIMEOUT_NONE", none);
	Py_XDECREF(none);
	return rc;
}

PyMODINIT_FUNC PyInit__core(void);
PyMODINIT_FUNC PyInit__core(void)
{
	PyObject *m = PyModule_Create(&core_module);
	PyTypeObject *types[] = { &ConnType, &SpecType, &GuestType };
	const char *names[] = { "Conn", "Spec", "Guest" };

	if (m == NULL)
		return NULL;
	CoreError =
	    PyErr_NewExceptionWithDoc("isospawn._core.Error",
				      "A library call failed: .errno, and the library's message as "
				      ".strerror.",
				      PyExc_OSError, NULL);
	if (CoreError == NULL || PyModule_AddObjectRef(m, "Error", CoreError) < 0)
		goto fail;
	for (size_t i = 0; i < 3; i++)
		if (PyType_Ready(types[i]) < 0 ||
		    PyModule_AddObjectRef(m, names[i], (PyObject *)types[i]) < 0)
			goto fail;
	if (add_constants(m) < 0)
		goto fail;
	return m;
fail:
	Py_DECREF(m);
	return NULL;
}
