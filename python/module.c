/*
 * module.c - the isospawn module: exceptions, constants, build_env(),
 * run() on the shared default connection, and the module's setup.
 */
#include "config.h"

#include "pyiso.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

PyObject *Error, *Refused, *StartFailed, *GuestError;
PyObject *pyiso_await_fn;

/* run()'s connection, opened on first use; replaced when it broke or when
 * this process is a fork of the one that opened it. Changed with the GIL. */
static ConnObject *default_conn;

/* ------------------------------------------------------------------ */
/* Errors                                                               */

PyObject *pyiso_exception(PyObject *type, int err, const char *msg,
			  const char *stage)
{
	PyObject *text, *exc, *value;

	text = PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg),
				    "backslashreplace");
	if (text == NULL)
		return NULL;
	exc = PyObject_CallOneArg(type, text);
	Py_DECREF(text);
	if (exc == NULL)
		return NULL;
	value = err ? PyLong_FromLong(err) : Py_NewRef(Py_None);
	if (value == NULL || PyObject_SetAttrString(exc, "errno", value) < 0)
		goto fail;
	Py_DECREF(value);
	value = stage ? PyUnicode_FromString(stage) : Py_NewRef(Py_None);
	if (value == NULL || PyObject_SetAttrString(exc, "stage", value) < 0)
		goto fail;
	Py_DECREF(value);
	return exc;
fail:
	Py_XDECREF(value);
	Py_DECREF(exc);
	return NULL;
}

PyObject *pyiso_raise(PyObject *type, int err, const char *msg,
		      const char *stage)
{
	PyObject *exc = pyiso_exception(type, err, msg, stage);

	if (exc != NULL) {
		PyErr_SetObject(type, exc);
		Py_DECREF(exc);
	}
	return NULL;
}

PyObject *pyiso_raise_failure(const struct failure *f)
{
	switch (f->rc) {
	case PYISO_CLOSED:
		return pyiso_raise(Error, 0, f->msg, NULL);
	case -EACCES: /* the policy refused (or the helper refused us) */
	case -EINVAL: /* the helper found the request malformed */
	case -E2BIG:
	case -EAGAIN: /* no free uid in the pool */
	case -ENOSYS: /* the kernel lacks what the policy requires */
		return pyiso_raise(Refused, -f->rc, f->msg, NULL);
	default:
		return pyiso_raise(Error, f->rc < 0 ? -f->rc : 0, f->msg, NULL);
	}
}

PyObject *exit_closes(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	PyObject *r = PyObject_CallMethod(self, "close", NULL);

	if (r == NULL)
		return NULL;
	Py_DECREF(r);
	Py_RETURN_FALSE;
}

void gc_dealloc(PyObject *o)
{
	PyObject_GC_UnTrack(o);
	Py_TYPE(o)->tp_clear(o);
	Py_TYPE(o)->tp_free(o);
}

/* ------------------------------------------------------------------ */
/* build_env                                                            */

/* Mapping items as a NULL-terminated array of "NAME=value" (bytes objects
 * kept in *keep). NULL with an exception on failure. */
static const char **environ_of(PyObject *mapping, const char *what,
			       PyObject **keep)
{
	PyObject *items;
	const char **envp = NULL;
	Py_ssize_t n, i;

	*keep = NULL;
	if (!PyDict_Check(mapping) &&
	    !PyObject_HasAttrString(mapping, "items"))
		return (const char **)PyErr_Format(PyExc_TypeError,
						   "%s must be a mapping", what);
	items = PyMapping_Items(mapping);
	if (items == NULL)
		return NULL;
	n = PyList_GET_SIZE(items);
	*keep = PyList_New(0);
	envp = PyMem_Calloc((size_t)n + 1, sizeof(*envp));
	if (*keep == NULL || envp == NULL) {
		PyErr_NoMemory();
		goto fail;
	}
	for (i = 0; i < n; i++) {
		PyObject *item = PyList_GET_ITEM(items, i), *name, *value, *entry;

		if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2) {
			PyErr_Format(PyExc_TypeError, "%s: items must be pairs",
				     what);
			goto fail;
		}
		if (!PyUnicode_FSConverter(PyTuple_GET_ITEM(item, 0), &name))
			goto fail;
		if (!PyUnicode_FSConverter(PyTuple_GET_ITEM(item, 1), &value)) {
			Py_DECREF(name);
			goto fail;
		}
		if (strchr(PyBytes_AS_STRING(name), '=') != NULL) {
			PyErr_Format(PyExc_ValueError, "%s: name %R contains '='",
				     what, PyTuple_GET_ITEM(item, 0));
			Py_DECREF(name);
			Py_DECREF(value);
			goto fail;
		}
		entry = PyBytes_FromFormat("%s=%s", PyBytes_AS_STRING(name),
					   PyBytes_AS_STRING(value));
		Py_DECREF(name);
		Py_DECREF(value);
		if (entry == NULL || PyList_Append(*keep, entry) < 0) {
			Py_XDECREF(entry);
			goto fail;
		}
		envp[i] = PyBytes_AS_STRING(entry);
		Py_DECREF(entry); /* *keep holds it */
	}
	Py_DECREF(items);
	return envp;
fail:
	Py_DECREF(items);
	PyMem_Free(envp);
	Py_CLEAR(*keep);
	return NULL;
}

static PyObject *build_env(PyObject *self, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = { "source", "overrides", NULL };
	PyObject *source, *overrides = Py_None, *keep_s = NULL, *keep_o = NULL;
	PyObject *result = NULL;
	const char **src = NULL, **ovr = NULL;
	char why[512] = "", **out = NULL;
	int rc;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "O|O:build_env", kwlist,
					 &source, &overrides))
		return NULL;
	if ((src = environ_of(source, "source", &keep_s)) == NULL ||
	    (overrides != Py_None &&
	     (ovr = environ_of(overrides, "overrides", &keep_o)) == NULL))
		goto out;
	rc = iso_build_env(src, ovr, NULL, 0, &out, why, sizeof(why));
	if (rc == -ENOMEM) {
		PyErr_NoMemory();
		goto out;
	}
	if (rc < 0) {
		pyiso_raise(Refused, -rc, why, NULL);
		goto out;
	}
	result = PyDict_New();
	for (char **e = out; result != NULL && *e != NULL; e++) {
		const char *eq = strchr(*e, '=');
		PyObject *k = PyUnicode_DecodeFSDefaultAndSize(*e, eq - *e);
		PyObject *v = PyUnicode_DecodeFSDefault(eq + 1);

		if (k == NULL || v == NULL || PyDict_SetItem(result, k, v) < 0)
			Py_CLEAR(result);
		Py_XDECREF(k);
		Py_XDECREF(v);
	}
	free(out);
out:
	PyMem_Free(src);
	PyMem_Free(ovr);
	Py_XDECREF(keep_s);
	Py_XDECREF(keep_o);
	return result;
}

/* ------------------------------------------------------------------ */
/* run() on the default connection                                      */

ConnObject *pyiso_default_conn(void)
{
	ConnObject *c = default_conn;

	if (c != NULL && c->conn != NULL && !c->broken && c->owner == getpid())
		return (ConnObject *)Py_NewRef(c);
	c = (ConnObject *)PyObject_CallNoArgs((PyObject *)&ConnType);
	if (c == NULL)
		return NULL;
	/* Another thread may have opened one meanwhile (the GIL is released
	 * while the helper starts): the last one stays, the other closes
	 * when its run ends. A parent's connection is left alone (see
	 * pyiso.h), which the dealloc knows. */
	Py_XSETREF(default_conn, (ConnObject *)Py_NewRef(c));
	return c;
}

static PyObject *module_run(PyObject *self, PyObject *args, PyObject *kwds)
{
	ConnObject *c = pyiso_default_conn();
	PyObject *r;

	if (c == NULL)
		return NULL;
	r = conn_run(c, args, kwds);
	Py_DECREF(c);
	return r;
}

/* ------------------------------------------------------------------ */
/* The module                                                           */

PyDoc_STRVAR(build_env_doc,
"build_env(source, overrides=None) -> dict\n"
"\n"
"The guest environment the helper would build, by the same pure function\n"
"(iso_build_env): from the mapping `source` only the FORWARDED_NAMES, then\n"
"PATH=GUEST_PATH whatever source says, then `overrides` merged last and\n"
"validated (well-formed names, bounded values, no loader variables such as\n"
"LD_PRELOAD). Reads only its arguments and changes neither. With the\n"
"default rules; the helper applies the administrator's, which may be\n"
"narrower. Raises Refused (.errno EINVAL, EPERM or E2BIG) naming the\n"
"variable that is not allowed.");

PyDoc_STRVAR(run_doc,
"run(args, *, env=None, timeout=None, limits=None, network=None, read=(),\n"
"    write=(), stdin=None, stdout=None, stderr=None, capture_output=False,\n"
"    input=None, check=False) -> Completed\n"
"\n"
"Run a guest to its end, like subprocess.run, on the shared default\n"
"connection: one helper per process, opened by the first run() (and\n"
"again after a fork, or if its helper died), used by every thread.\n"
"Use Connection().run() for a helper of your own. See Connection.spawn\n"
"and Connection.run for the arguments. Returns a Completed; timeout is\n"
"the guest's wall-clock limit (returncode 124, status.outcome\n"
"'timed_out', no exception).");

static PyMethodDef module_methods[] = {
	{ "build_env", (PyCFunction)(void (*)(void))build_env,
	  METH_VARARGS | METH_KEYWORDS, build_env_doc },
	{ "run", (PyCFunction)(void (*)(void))module_run,
	  METH_VARARGS | METH_KEYWORDS, run_doc },
	{ NULL, NULL, 0, NULL },
};

PyDoc_STRVAR(module_doc,
"Start untrusted guest programs through the isospawn helper.\n"
"\n"
"A guest gets an environment built from an allow-list (FORWARDED_NAMES from\n"
"this process, PATH=GUEST_PATH, validated overrides), a pool uid of its\n"
"own, and the confinement the administrator's policy sets (seccomp,\n"
"Landlock, resource limits, a timeout, optionally no network). The setuid\n"
"helper enforces all of it; this module is a client of libisospawn.\n"
"\n"
"    import isospawn\n"
"    done = isospawn.run([\"python3\", \"-c\", \"print(42)\"],\n"
"                        capture_output=True, timeout=10)\n"
"    done.stdout                  # b'42\\n'\n"
"\n"
"    with isospawn.Connection() as conn:          # one helper, many guests\n"
"        g = conn.spawn([\"/usr/bin/python3\", \"/srv/jobs/job.py\"],\n"
"                       read=[\"/srv/jobs\"], channel=True,\n"
"                       env={\"JOB\": \"7\"}, limits={\"as\": \"1G\"})\n"
"        g.send(b\"work\"); reply = g.recv(timeout=5)\n"
"        status = g.wait()        # or: await g.wait_async()\n"
"\n"
"Threads. Everything here may be used from several threads, and every\n"
"blocking call releases the GIL. What is shared: a Connection is one\n"
"helper and one socket, shared by all its guests; each call on it or on\n"
"one of its guests holds the connection's lock for one non-blocking\n"
"library call or one spawn round trip (a few ms), never while waiting:\n"
"wait(), recv(), send() (several threads to one guest too) and run()'s\n"
"I/O wait outside the lock, so threads waiting on guests of one\n"
"connection do not hold each other up, but\n"
"spawns on one connection are serialized. run() uses one default\n"
"Connection shared by the whole process; open a Connection per thread for\n"
"spawns that never wait for each other. Guest, Status and Completed\n"
"objects may be used from any thread. isospawn.guest's Channel is a plain\n"
"socket: one thread at a time per direction.\n"
"\n"
"Processes. A Connection belongs to the process that opened it: in a\n"
"forked child it raises Error and is left alone (the parent's guests are\n"
"not touched); run() opens a new default connection there.\n"
"\n"
"Errors. Error (with .errno) is the base; Refused: the helper or the\n"
"policy refused, str() is its reason and names what; StartFailed: the\n"
"guest could not be started (.stage, .errno); GuestError: run(check=True)\n"
"saw a non-zero returncode (.completed). Bad arguments raise ValueError or\n"
"TypeError before anything is sent.\n"
"\n"
"In a guest, isospawn.guest.channel() is the other end of the channel.");

PyDoc_STRVAR(error_doc,
"Base of isospawn's errors. .errno is the errno value (or None),\n"
".stage the failed stage for StartFailed (else None), .completed the\n"
"Completed for errors raised by run(check=True) (else None).");
PyDoc_STRVAR(refused_doc,
"The helper or the policy refused: str() is the helper's reason and names\n"
"what was refused (an override, a limit, a path, the caller). Nothing was\n"
"started. .errno: EACCES (policy), EINVAL or E2BIG (malformed or too\n"
"large), EAGAIN (no free uid in the pool), ENOSYS (the kernel lacks a\n"
"mechanism the policy requires); EPERM from build_env().");
PyDoc_STRVAR(start_failed_doc,
"The guest could not be started: .stage ('policy', 'credentials',\n"
"'confinement', 'exec') and .errno say where and why, and str() gives\n"
"the helper's reason (also Status.reason). Raised by spawn()\n"
"and run() for a bare program name found nowhere in GUEST_PATH, and by\n"
"run(check=True) when status.outcome is 'failed' (with .completed).");
PyDoc_STRVAR(guest_error_doc,
"run(check=True): the guest ended with a non-zero returncode. .completed\n"
"is the Completed (output included).");

static PyObject *new_error(PyObject *m, const char *name, const char *doc,
			   PyObject *base)
{
	char qualified[64];
	PyObject *dict = Py_BuildValue("{sOsOsO}", "errno", Py_None, "stage",
				       Py_None, "completed", Py_None);
	PyObject *type;

	if (dict == NULL)
		return NULL;
	snprintf(qualified, sizeof(qualified), "isospawn.%s", name);
	type = PyErr_NewExceptionWithDoc(qualified, doc, base, dict);
	Py_DECREF(dict);
	if (type != NULL && PyModule_AddObjectRef(m, name, type) < 0)
		Py_CLEAR(type);
	return type;
}

static int add_types(PyObject *m)
{
	static const struct {
		PyTypeObject *type;
		const char *name; /* NULL: not exported */
	} types[] = {
		{ &ConnType, "Connection" }, { &GuestType, "Guest" },
		{ &StatusType, "Status" },   { &CompletedType, "Completed" },
		{ &WatcherType, NULL },	     { &ChannelType, NULL },
	};

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		if (PyType_Ready(types[i].type) < 0)
			return -1;
		if (types[i].name != NULL &&
		    PyModule_AddObjectRef(m, types[i].name,
					  (PyObject *)types[i].type) < 0)
			return -1;
	}
	return 0;
}

static int add_constants(PyObject *m)
{
	static const char *const forwarded[] = { ISO_FORWARDED_NAMES };
	size_t nf = sizeof(forwarded) / sizeof(forwarded[0]);
	size_t nl = ISO_LIMIT_COUNT;
	PyObject *names = PyTuple_New((Py_ssize_t)nf);
	PyObject *lims = PyTuple_New((Py_ssize_t)nl);
	int rc = -1;

	if (names == NULL || lims == NULL)
		goto out;
	for (size_t i = 0; i < nf; i++) {
		PyObject *s = PyUnicode_FromString(forwarded[i]);

		if (s == NULL)
			goto out;
		PyTuple_SET_ITEM(names, (Py_ssize_t)i, s);
	}
	for (size_t i = 0; i < nl; i++) {
		/* The library's names, in its order: scratch and shm too. */
		PyObject *s = PyUnicode_FromString(iso_limit_name((enum iso_limit)i));

		if (s == NULL)
			goto out;
		PyTuple_SET_ITEM(lims, (Py_ssize_t)i, s);
	}
	if (PyModule_AddObjectRef(m, "FORWARDED_NAMES", names) < 0 ||
	    PyModule_AddObjectRef(m, "LIMITS", lims) < 0 ||
	    PyModule_AddStringConstant(m, "GUEST_PATH", ISO_GUEST_PATH) < 0 ||
	    PyModule_AddIntConstant(m, "MESSAGE_MAX", ISO_MESSAGE_MAX) < 0 ||
	    PyModule_AddIntConstant(m, "PIPE", PYISO_PIPE) < 0 ||
	    PyModule_AddIntConstant(m, "STDOUT", PYISO_STDOUT) < 0 ||
	    PyModule_AddIntConstant(m, "DEVNULL", PYISO_DEVNULL) < 0 ||
	    PyModule_AddStringConstant(m, "__version__", PACKAGE_VERSION) < 0)
		goto out;
	rc = 0;
out:
	Py_XDECREF(names);
	Py_XDECREF(lims);
	return rc;
}

/* `async def _wait(future): return await future`, so that wait_async()
 * returns a real coroutine (asyncio.create_task() accepts only those). */
static PyObject *make_await_fn(void)
{
	PyObject *globals = PyDict_New(), *r, *fn = NULL;

	if (globals == NULL)
		return NULL;
	if (PyDict_SetItemString(globals, "__builtins__", PyEval_GetBuiltins()) ==
	    0) {
		r = PyRun_String("async def _wait(future):\n"
				 "    return await future\n",
				 Py_file_input, globals, globals);
		Py_XDECREF(r);
		if (r != NULL)
			fn = Py_XNewRef(PyDict_GetItemString(globals, "_wait"));
	}
	Py_DECREF(globals);
	return fn;
}

static struct PyModuleDef module_def = {
	PyModuleDef_HEAD_INIT,
	.m_name = "isospawn",
	.m_doc = module_doc,
	.m_size = -1,
	.m_methods = module_methods,
};

PyMODINIT_FUNC PyInit_isospawn(void);
PyMODINIT_FUNC PyInit_isospawn(void)
{
	PyObject *m = PyModule_Create(&module_def), *guest = NULL;

	if (m == NULL)
		return NULL;
	if ((Error = new_error(m, "Error", error_doc, PyExc_Exception)) == NULL ||
	    (Refused = new_error(m, "Refused", refused_doc, Error)) == NULL ||
	    (StartFailed = new_error(m, "StartFailed", start_failed_doc,
				     Error)) == NULL ||
	    (GuestError = new_error(m, "GuestError", guest_error_doc, Error)) ==
		    NULL ||
	    add_types(m) < 0 || add_constants(m) < 0 ||
	    (pyiso_await_fn = make_await_fn()) == NULL ||
	    (guest = pyiso_guest_module()) == NULL ||
	    PyModule_AddObjectRef(m, "guest", guest) < 0 ||
	    PyDict_SetItemString(PyImport_GetModuleDict(), "isospawn.guest",
				 guest) < 0) {
		Py_XDECREF(guest);
		Py_DECREF(m);
		return NULL;
	}
	Py_DECREF(guest);
	return m;
}
