/*
 * async.c - Guest.wait_async(): asyncio without a thread per guest.
 *
 * One watcher per (connection, event loop) puts a duplicate of the
 * connection's socket on the loop (a duplicate, so that its number cannot
 * be reused by something else while the loop still watches it; iso_close()
 * shuts the socket down, which wakes the duplicate too) and its own
 * eventfd, which other threads write when they read the socket (pyiso.h).
 * On either, it collects what ended and answers the waiting coroutines.
 */
#include "config.h"

#include "pyiso.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

typedef struct {
	PyObject_HEAD
	ConnObject *conn; /* strong; NULL once detached */
	PyObject *loop;
	PyObject *pending; /* list of (Guest, Future) */
	struct waiter waiter;
	int fd;		   /* dup of the connection's socket */
	int on_loop;	   /* readers added */
} WatcherObject;

/* Take the watcher off its connection's waiters and close its
 * descriptors. Safe to call twice. */
static void watcher_detach(WatcherObject *w)
{
	ConnObject *c = w->conn;

	if (c == NULL)
		return;
	if (w->waiter.efd >= 0 && c->lock_ready) {
		Py_BEGIN_ALLOW_THREADS
		conn_lock(c);
		waiter_remove_locked(c, &w->waiter);
		conn_unlock(c);
		Py_END_ALLOW_THREADS
	}
	if (w->waiter.efd >= 0)
		close(w->waiter.efd);
	if (w->fd >= 0)
		close(w->fd);
	w->waiter.efd = -1;
	w->fd = -1;
	w->conn = NULL;
	Py_DECREF(c);
}

/* Off the loop and out of the connection's table; pending must be empty
 * or already answered. Returns 0, or -1 with an exception set. */
static int watcher_stop(WatcherObject *w)
{
	PyObject *r;
	int rc = 0;

	if (w->on_loop) {
		w->on_loop = 0;
		r = PyObject_CallMethod(w->loop, "remove_reader", "i", w->fd);
		Py_XDECREF(r);
		r = r ? PyObject_CallMethod(w->loop, "remove_reader", "i",
					    w->waiter.efd) :
			NULL;
		Py_XDECREF(r);
		if (r == NULL)
			rc = -1;
	}
	if (w->conn != NULL && w->conn->watchers != NULL &&
	    PyDict_GetItemWithError(w->conn->watchers, w->loop) ==
		    (PyObject *)w &&
	    PyDict_DelItem(w->conn->watchers, w->loop) < 0)
		rc = -1;
	watcher_detach(w);
	return rc;
}

/* An exception object for a failed wait, to set on a future. */
static PyObject *failure_exception(const struct failure *f)
{
	PyObject *type, *value, *tb;

	pyiso_raise_failure(f);
	PyErr_Fetch(&type, &value, &tb);
	PyErr_NormalizeException(&type, &value, &tb);
	Py_XDECREF(type);
	Py_XDECREF(tb);
	return value;
}

static int future_answer(PyObject *future, PyObject *method, PyObject *arg)
{
	PyObject *r = PyObject_CallMethodOneArg(future, method, arg);

	Py_XDECREF(r);
	return r == NULL ? -1 : 0;
}

/* The loop's callback: collect, answer the futures whose guest ended. */
static PyObject *watcher_ready(WatcherObject *w, PyObject *Py_UNUSED(ignored))
{
	PyObject *still = NULL, *set_result = NULL, *set_exception = NULL;
	Py_ssize_t n, i;
	struct failure *f = NULL;
	GuestObject **gs = NULL;
	int *rcs = NULL;
	int error = 0;

	if (w->conn == NULL)
		Py_RETURN_NONE;
	efd_drain(w->waiter.efd);
	n = PyList_GET_SIZE(w->pending);
	f = PyMem_Calloc((size_t)n + 1, sizeof(*f));
	rcs = PyMem_Calloc((size_t)n + 1, sizeof(*rcs));
	gs = PyMem_Calloc((size_t)n + 1, sizeof(*gs));
	still = PyList_New(0);
	set_result = PyUnicode_InternFromString("set_result");
	set_exception = PyUnicode_InternFromString("set_exception");
	if (f == NULL || rcs == NULL || gs == NULL || still == NULL ||
	    set_result == NULL ||
	    set_exception == NULL) {
		PyErr_NoMemory();
		goto out;
	}
	/* A cancelled wait needs no answer. */
	for (i = 0; i < n; i++) {
		PyObject *item = PyList_GET_ITEM(w->pending, i);
		PyObject *fut = PyTuple_GET_ITEM(item, 1);
		PyObject *done = PyObject_CallMethod(fut, "done", NULL);

		/* Kept alive by w->pending, which only this thread (the
		 * loop's) changes. */
		gs[i] = (GuestObject *)PyTuple_GET_ITEM(item, 0);

		if (done == NULL)
			goto out;
		rcs[i] = PyObject_IsTrue(done) ? 2 : 1;
		Py_DECREF(done);
	}
	{
		ConnObject *c = w->conn;

		Py_BEGIN_ALLOW_THREADS
		conn_lock(c);
		for (i = 0; i < n; i++)
			if (rcs[i] == 1)
				rcs[i] = guest_collect_locked(gs[i], &w->waiter,
							      &f[i]);
		conn_unlock(c);
		Py_END_ALLOW_THREADS
	}
	for (i = 0; i < n; i++) {
		PyObject *item = PyList_GET_ITEM(w->pending, i);
		PyObject *fut = PyTuple_GET_ITEM(item, 1);
		PyObject *answer;

		if (rcs[i] == 2)
			continue;
		if (rcs[i] == 1) {
			if (PyList_Append(still, item) < 0)
				error = 1;
			continue;
		}
		if (rcs[i] == 0) {
			answer = guest_status(gs[i]);
			if (answer == NULL || future_answer(fut, set_result, answer) < 0)
				error = 1;
		} else {
			answer = failure_exception(&f[i]);
			if (answer == NULL ||
			    future_answer(fut, set_exception, answer) < 0)
				error = 1;
		}
		Py_XDECREF(answer);
	}
	Py_SETREF(w->pending, still);
	still = NULL;
	if (PyList_GET_SIZE(w->pending) == 0 && watcher_stop(w) < 0)
		error = 1;
	if (error && !PyErr_Occurred())
		PyErr_SetString(Error, "answering a waiting coroutine failed");
out:
	PyMem_Free(f);
	PyMem_Free(rcs);
	PyMem_Free(gs);
	Py_XDECREF(still);
	Py_XDECREF(set_result);
	Py_XDECREF(set_exception);
	if (PyErr_Occurred())
		return NULL;
	Py_RETURN_NONE;
}

/* A future's done callback: a cancelled wait is dropped at once, so that
 * the watcher keeps no Guest alive (and running) for nobody. */
static PyObject *watcher_done(WatcherObject *w, PyObject *fut)
{
	PyObject *r = PyObject_CallMethod(fut, "cancelled", NULL);
	int cancelled;

	if (r == NULL)
		return NULL;
	cancelled = PyObject_IsTrue(r);
	Py_DECREF(r);
	if (cancelled < 0)
		return NULL;
	if (!cancelled)
		Py_RETURN_NONE;
	return watcher_ready(w, NULL);
}

static int watcher_traverse(WatcherObject *w, visitproc visit, void *arg)
{
	Py_VISIT(w->conn);
	Py_VISIT(w->loop);
	Py_VISIT(w->pending);
	return 0;
}

static int watcher_clear(WatcherObject *w)
{
	watcher_detach(w);
	Py_CLEAR(w->loop);
	Py_CLEAR(w->pending);
	return 0;
}

static PyMethodDef watcher_methods[] = {
	{ "_ready", (PyCFunction)watcher_ready, METH_NOARGS,
	  "Collect what ended and answer the waiting coroutines (the event "
	  "loop calls this)." },
	{ "_done", (PyCFunction)watcher_done, METH_O,
	  "Drop a cancelled wait (its future's done callback)." },
	{ NULL, NULL, 0, NULL },
};

PyTypeObject WatcherType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "isospawn._Watcher",
	.tp_basicsize = sizeof(WatcherObject),
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
	.tp_doc = "The guests of one connection awaited on one asyncio loop.",
	.tp_traverse = (traverseproc)watcher_traverse,
	.tp_clear = (inquiry)watcher_clear,
	.tp_dealloc = gc_dealloc,
	.tp_methods = watcher_methods,
};

static WatcherObject *watcher_new(ConnObject *c, PyObject *loop)
{
	WatcherObject *w = PyObject_GC_New(WatcherObject, &WatcherType);
	PyObject *ready = NULL, *r;

	if (w == NULL)
		return NULL;
	w->conn = NULL;
	w->loop = Py_NewRef(loop);
	w->pending = PyList_New(0);
	w->waiter.efd = -1;
	w->waiter.next = NULL;
	w->fd = -1;
	w->on_loop = 0;
	PyObject_GC_Track(w);
	if (w->pending == NULL)
		goto fail;
	w->fd = fcntl(c->fd, F_DUPFD_CLOEXEC, 3);
	w->waiter.efd = new_efd();
	if (w->fd < 0 || w->waiter.efd < 0) {
		PyErr_SetFromErrno(PyExc_OSError);
		goto fail;
	}
	w->conn = (ConnObject *)Py_NewRef(c);
	Py_BEGIN_ALLOW_THREADS
	conn_lock(c);
	waiter_add_locked(c, &w->waiter);
	conn_unlock(c);
	Py_END_ALLOW_THREADS
	ready = PyObject_GetAttrString((PyObject *)w, "_ready");
	if (ready == NULL)
		goto fail;
	r = PyObject_CallMethod(loop, "add_reader", "iO", w->fd, ready);
	if (r == NULL)
		goto fail;
	Py_DECREF(r);
	w->on_loop = 1;
	r = PyObject_CallMethod(loop, "add_reader", "iO", w->waiter.efd, ready);
	if (r == NULL)
		goto fail;
	Py_DECREF(r);
	Py_DECREF(ready);
	return w;
fail:
	Py_XDECREF(ready);
	if (w->on_loop) {
		PyObject *type, *value, *tb;

		PyErr_Fetch(&type, &value, &tb);
		w->on_loop = 0;
		r = PyObject_CallMethod(loop, "remove_reader", "i", w->fd);
		Py_XDECREF(r);
		PyErr_Restore(type, value, tb);
	}
	Py_DECREF(w);
	return NULL;
}

/* target.method(w.attr): hand one of the watcher's methods to the loop
 * or a future. 0, or -1 with the exception set. */
static int hand_method(PyObject *target, const char *method, WatcherObject *w, const char *attr)
{
	PyObject *bound = PyObject_GetAttrString((PyObject *)w, attr), *r;

	if (bound == NULL)
		return -1;
	r = PyObject_CallMethod(target, method, "O", bound);
	Py_DECREF(bound);
	if (r == NULL)
		return -1;
	Py_DECREF(r);
	return 0;
}

PyObject *conn_wait_async(ConnObject *c, GuestObject *g)
{
	PyObject *asyncio = NULL, *loop = NULL, *fut = NULL, *item = NULL;
	PyObject *coro = NULL, *r;
	WatcherObject *w = NULL;

	if ((asyncio = PyImport_ImportModule("asyncio")) == NULL ||
	    (loop = PyObject_CallMethod(asyncio, "get_running_loop", NULL)) ==
		    NULL ||
	    (fut = PyObject_CallMethod(loop, "create_future", NULL)) == NULL)
		goto out;
	if (g->status != NULL) {
		r = PyObject_CallMethod(fut, "set_result", "O", g->status);
		if (r == NULL)
			goto out;
		Py_DECREF(r);
		coro = PyObject_CallOneArg(pyiso_await_fn, fut);
		goto out;
	}
	/* A closed connection still answers for a guest whose end it saw. */
	if (conn_check_owner(c) < 0)
		goto out;
	w = (WatcherObject *)PyDict_GetItemWithError(c->watchers, loop);
	if (w != NULL) {
		Py_INCREF(w);
	} else {
		if (PyErr_Occurred() || (w = watcher_new(c, loop)) == NULL)
			goto out;
		if (PyDict_SetItem(c->watchers, loop, (PyObject *)w) < 0) {
			watcher_stop(w);
			goto out;
		}
	}
	item = PyTuple_Pack(2, (PyObject *)g, fut);
	if (item == NULL || PyList_Append(w->pending, item) < 0)
		goto out;
	/* Its end may already be collected, by another thread or before the
	 * watcher was registered: look once soon, whatever the socket says. */
	if (hand_method(loop, "call_soon", w, "_ready") < 0 ||
	    hand_method(fut, "add_done_callback", w, "_done") < 0)
		goto out;
	coro = PyObject_CallOneArg(pyiso_await_fn, fut);
out:
	Py_XDECREF(asyncio);
	Py_XDECREF(loop);
	Py_XDECREF(fut);
	Py_XDECREF(item);
	Py_XDECREF(w);
	return coro;
}

