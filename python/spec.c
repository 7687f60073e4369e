/*
 * spec.c - spawn()'s and run()'s arguments into an iso_spec, as the
 * isospawn command reads its options: bare program names looked up in
 * ISO_GUEST_PATH only, limits with K/M/G/T suffixes, stdio as subprocess
 * takes it. Every mistake is raised here, before anything is sent.
 */
#include "config.h"

#include "pyiso.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

/* Raise ValueError with the library's message for a spec setter. */
static int spec_error(const char *what, int rc)
{
	if (rc == -ENOMEM)
		PyErr_NoMemory();
	else
		PyErr_Format(PyExc_ValueError, "%s: %s", what, iso_last_error());
	return -1;
}

/*
 * The program as the helper needs it, an absolute path, as the isospawn
 * command finds it: a bare name in ISO_GUEST_PATH only (the guest would
 * not have the caller's PATH either), a relative path from the working
 * directory with its directory resolved.
 */
static int resolve_program(const char *arg, char *out, size_t size)
{
	const char *slash = strrchr(arg, '/');
	char dir[PATH_MAX], resolved[PATH_MAX];
	struct stat st;
	int n;

	if (arg[0] == '/') {
		n = snprintf(out, size, "%s", arg);
	} else if (slash != NULL) {
		n = snprintf(dir, sizeof(dir), "%.*s", (int)(slash - arg), arg);
		if (n < 0 || (size_t)n >= sizeof(dir) ||
		    realpath(dir, resolved) == NULL) {
			PyErr_SetFromErrnoWithFilename(PyExc_OSError, arg);
			return -1;
		}
		n = snprintf(out, size, "%s/%s",
			     strcmp(resolved, "/") == 0 ? "" : resolved,
			     slash + 1);
	} else {
		const char *p = ISO_GUEST_PATH;

		for (;;) {
			size_t len = strcspn(p, ":");

			n = snprintf(out, size, "%.*s/%s", (int)len, p, arg);
			if (n >= 0 && (size_t)n < size && stat(out, &st) == 0 &&
			    S_ISREG(st.st_mode))
				break;
			if (p[len] == '\0') {
				char msg[PATH_MAX + 64];

				snprintf(msg, sizeof(msg), "%s: not found in %s",
					 arg, ISO_GUEST_PATH);
				pyiso_raise(StartFailed, ENOENT, msg, "exec");
				return -1;
			}
			p += len + 1;
		}
	}
	if (n < 0 || (size_t)n >= size) {
		PyErr_Format(PyExc_ValueError, "%s: path too long", arg);
		return -1;
	}
	return 0;
}

static int set_program(iso_spec *spec, PyObject *args)
{
	PyObject *seq, *items = NULL;
	const char **argv = NULL;
	char program[PATH_MAX];
	Py_ssize_t n, i;
	int rc = -1;

	if (PyUnicode_Check(args) || PyBytes_Check(args) ||
	    PyObject_HasAttrString(args, "__fspath__"))
		seq = PyTuple_Pack(1, args);
	else
		seq = PySequence_Fast(args, "args must be a sequence of str, "
					    "bytes or path-like objects");
	if (seq == NULL)
		return -1;
	n = PySequence_Fast_GET_SIZE(seq);
	if (n == 0) {
		PyErr_SetString(PyExc_ValueError, "args is empty: no program");
		goto out;
	}
	items = PyTuple_New(n);
	argv = PyMem_Calloc((size_t)n + 1, sizeof(*argv));
	if (items == NULL || argv == NULL) {
		PyErr_NoMemory();
		goto out;
	}
	for (i = 0; i < n; i++) {
		PyObject *b;

		if (!PyUnicode_FSConverter(PySequence_Fast_GET_ITEM(seq, i), &b))
			goto out;
		PyTuple_SET_ITEM(items, i, b);
		argv[i] = PyBytes_AS_STRING(b);
	}
	if (resolve_program(argv[0], program, sizeof(program)) < 0)
		goto out;
	if ((rc = iso_spec_set_program(spec, program)) < 0) {
		spec_error(program, rc);
		goto out;
	}
	if ((rc = iso_spec_set_argv(spec, argv)) < 0) {
		spec_error("args", rc);
		goto out;
	}
	rc = 0;
out:
	PyMem_Free(argv);
	Py_XDECREF(items);
	Py_DECREF(seq);
	return rc < 0 ? -1 : 0;
}

/* Call fn(spec, name, value, arg) for each item of a mapping, both as
 * file-system bytes. */
static int each_item(PyObject *mapping, const char *what,
		     int (*fn)(iso_spec *, const char *, PyObject *, void *),
		     iso_spec *spec, void *arg)
{
	PyObject *items;
	Py_ssize_t i, n;
	int rc = 0;

	if (!PyDict_Check(mapping) &&
	    !PyObject_HasAttrString(mapping, "items")) {
		PyErr_Format(PyExc_TypeError, "%s must be a mapping", what);
		return -1;
	}
	items = PyMapping_Items(mapping);
	if (items == NULL)
		return -1;
	n = PyList_GET_SIZE(items);
	for (i = 0; i < n && rc == 0; i++) {
		PyObject *item = PyList_GET_ITEM(items, i), *name;

		if (!PyTuple_Check(item) || PyTuple_GET_SIZE(item) != 2) {
			PyErr_Format(PyExc_TypeError, "%s: items must be pairs",
				     what);
			rc = -1;
			break;
		}
		if (!PyUnicode_FSConverter(PyTuple_GET_ITEM(item, 0), &name)) {
			rc = -1;
			break;
		}
		rc = fn(spec, PyBytes_AS_STRING(name), PyTuple_GET_ITEM(item, 1),
			arg);
		Py_DECREF(name);
	}
	Py_DECREF(items);
	return rc;
}

static int set_one_env(iso_spec *spec, const char *name, PyObject *value,
		       void *arg)
{
	PyObject *v;
	int rc;

	if (!PyUnicode_FSConverter(value, &v))
		return -1;
	rc = iso_spec_set_env(spec, name, PyBytes_AS_STRING(v));
	Py_DECREF(v);
	if (rc < 0)
		return spec_error("env", rc);
	return 0;
}

/* A count or "unlimited", or for sizes a K/M/G/T (1024-based) multiple:
 * what the isospawn command's --limit takes, read by the same function. */
static int limit_value(PyObject *value, enum iso_limit which, uint64_t *out)
{
	const char *s;
	uint64_t unused;
	int rc;

	if (PyLong_Check(value)) {
		*out = PyLong_AsUnsignedLongLong(value);
		if (*out == (uint64_t)-1 && PyErr_Occurred())
			return -1;
		return 0;
	}
	if (!PyUnicode_Check(value)) {
		PyErr_SetString(PyExc_TypeError,
				"a limit is an int or a str such as '1G' or "
				"'unlimited'");
		return -1;
	}
	s = PyUnicode_AsUTF8(value);
	if (s == NULL)
		return -1;
	rc = iso_limit_parse(s, which, out);
	if (rc == -ERANGE) {
		PyErr_Format(PyExc_ValueError, "limit value %R is too large", value);
		return -1;
	}
	if (rc < 0) {
		/* The library, asked with "1K", says whether this limit
		 * takes a suffix. */
		PyErr_Format(PyExc_ValueError,
			     "limit value %R: expected a number%s or 'unlimited'",
			     value,
			     iso_limit_parse("1K", which, &unused) == 0
				     ? " (K/M/G/T suffix allowed)"
				     : "");
		return -1;
	}
	return 0;
}

static int set_one_limit(iso_spec *spec, const char *name, PyObject *value,
			 void *arg)
{
	int which = iso_limit_from_name(name);
	uint64_t v;

	if (which < 0) {
		char known[128];
		size_t o = 0;

		for (int i = 0; i < ISO_LIMIT_COUNT; i++)
			o += (size_t)snprintf(known + o, sizeof(known) - o, "%s%s",
					      i ? ", " : "", iso_limit_name((enum iso_limit)i));
		PyErr_Format(PyExc_ValueError, "unknown limit '%s' (%s)", name, known);
		return -1;
	}
	if (limit_value(value, (enum iso_limit)which, &v) < 0)
		return -1;
	if (iso_spec_set_limit(spec, (enum iso_limit)which, v) < 0)
		return spec_error(name, -EINVAL);
	return 0;
}

static int add_paths(iso_spec *spec, PyObject *paths, const char *what,
		     int (*add)(iso_spec *, const char *))
{
	PyObject *seq;
	Py_ssize_t i;
	int rc = 0;

	if (paths == NULL)
		return 0;
	if (PyUnicode_Check(paths) || PyBytes_Check(paths)) {
		PyErr_Format(PyExc_TypeError,
			     "%s must be a sequence of paths, not one path", what);
		return -1;
	}
	seq = PySequence_Fast(paths, "read and write must be sequences of paths");
	if (seq == NULL)
		return -1;
	for (i = 0; i < PySequence_Fast_GET_SIZE(seq) && rc == 0; i++) {
		char resolved[PATH_MAX];
		const char *path;
		PyObject *b;

		if (!PyUnicode_FSConverter(PySequence_Fast_GET_ITEM(seq, i), &b)) {
			rc = -1;
			break;
		}
		path = PyBytes_AS_STRING(b);
		/* As the isospawn command does: a relative path from the
		 * working directory (it must exist to be granted anyway). */
		if (path[0] != '/') {
			if (realpath(path, resolved) == NULL) {
				PyErr_SetFromErrnoWithFilename(PyExc_OSError, path);
				Py_DECREF(b);
				rc = -1;
				break;
			}
			path = resolved;
		}
		rc = add(spec, path);
		if (rc < 0)
			spec_error(what, rc);
		Py_DECREF(b);
	}
	Py_DECREF(seq);
	return rc < 0 ? -1 : 0;
}


/* The guest's descriptor i from the argument; pipes are made here. */
static int stdio_fd(struct spawn_request *req, int i, PyObject *arg,
		    int *fd)
{
	long v;

	if (arg == Py_None) {
		*fd = i; /* inherited: open, if only on /dev/null (stdio_guard) */
		return 0;
	}
	if (PyLong_Check(arg)) {
		v = PyLong_AsLong(arg);
		if (v == -1 && PyErr_Occurred())
			return -1;
	} else {
		v = PyObject_AsFileDescriptor(arg);
		if (v < 0)
			return -1;
	}
	switch (v) {
	case PYISO_PIPE: {
		int p[2];

		if (pipe2(p, O_CLOEXEC) < 0) {
			PyErr_SetFromErrno(PyExc_OSError);
			return -1;
		}
		req->parent_fds[i] = i == 0 ? p[1] : p[0];
		req->child_fds[i] = i == 0 ? p[0] : p[1];
		*fd = req->child_fds[i];
		return 0;
	}
	case PYISO_DEVNULL:
		*fd = -1;
		return 0;
	case PYISO_STDOUT:
		PyErr_SetString(PyExc_ValueError,
				"STDOUT is only for stderr");
		return -1;
	default:
		if (v < 0 || v > INT_MAX) {
			PyErr_Format(PyExc_ValueError, "bad file descriptor %ld",
				     v);
			return -1;
		}
		*fd = (int)v;
		return 0;
	}
}

static int set_stdio(struct spawn_request *req, PyObject *stdio[3])
{
	int fds[3], rc;

	for (int i = 0; i < 3; i++) {
		if (i == 2 && PyLong_Check(stdio[2]) &&
		    PyLong_AsLong(stdio[2]) == PYISO_STDOUT) {
			fds[2] = fds[1];
			continue;
		}
		if (stdio_fd(req, i, stdio[i], &fds[i]) < 0)
			return -1;
	}
	rc = iso_spec_set_stdio(req->spec, fds[0], fds[1], fds[2]);
	if (rc < 0) {
		errno = -rc;
		PyErr_SetFromErrno(PyExc_OSError);
		return -1;
	}
	return 0;
}

static int set_timeout(iso_spec *spec, PyObject *timeout)
{
	double seconds;

	if (timeout == Py_None)
		return 0;
	if (seconds_arg(timeout, 0, 1e12, &seconds) < 0)
		return -1;
	/* Whole milliseconds, rounded up so that it never becomes 0 (which
	 * would mean the policy's default). */
	return iso_spec_set_timeout(spec, (uint64_t)ceil(seconds * 1000.0));
}

static int set_network(iso_spec *spec, PyObject *network)
{
	const char *s;

	if (network == Py_None)
		return 0;
	s = PyUnicode_Check(network) ? PyUnicode_AsUTF8(network) : NULL;
	if (s != NULL && strcmp(s, "none") == 0)
		return iso_spec_set_network(spec, ISO_NETWORK_NONE);
	if (s != NULL && strcmp(s, "host") == 0)
		return iso_spec_set_network(spec, ISO_NETWORK_HOST);
	if (!PyErr_Occurred())
		PyErr_Format(PyExc_ValueError,
			     "network must be 'none', 'host' or None, not %R",
			     network);
	return -1;
}

void spawn_request_release(struct spawn_request *req)
{
	for (int i = 0; i < 3; i++) {
		if (req->parent_fds[i] >= 0)
			close(req->parent_fds[i]);
		if (req->child_fds[i] >= 0)
			close(req->child_fds[i]);
		req->parent_fds[i] = req->child_fds[i] = -1;
	}
	iso_spec_free(req->spec);
	req->spec = NULL;
}

int spawn_request_build(struct spawn_request *req, PyObject *args,
			PyObject *env, PyObject *timeout, PyObject *limits,
			PyObject *network, PyObject *read, PyObject *write,
			PyObject *stdio[3], int channel)
{
	int rc;

	for (int i = 0; i < 3; i++)
		req->parent_fds[i] = req->child_fds[i] = -1;
	/* Before any pipe is made, and so that a closed stdio descriptor is
	 * inherited as /dev/null, never as one of ours. */
	if (stdio_guard() < 0) {
		PyErr_SetFromErrno(PyExc_OSError);
		return -1;
	}
	rc = iso_spec_new(&req->spec);
	if (rc < 0) {
		PyErr_NoMemory();
		return -1;
	}
	/* The forwarded names are picked from the environment now, with the
	 * GIL held, so that no Python thread changes it while the spawn
	 * reads it (os.environ's changes reach environ through putenv). */
	if (iso_spec_set_source_env(req->spec, (const char *const *)environ) < 0) {
		PyErr_NoMemory();
		goto fail;
	}
	if (set_program(req->spec, args) < 0 ||
	    (env != Py_None &&
	     each_item(env, "env", set_one_env, req->spec, NULL) < 0) ||
	    (limits != Py_None &&
	     each_item(limits, "limits", set_one_limit, req->spec, NULL) < 0) ||
	    set_timeout(req->spec, timeout) < 0 ||
	    set_network(req->spec, network) < 0 ||
	    add_paths(req->spec, read, "read", iso_spec_add_read_path) < 0 ||
	    add_paths(req->spec, write, "write", iso_spec_add_write_path) < 0 ||
	    set_stdio(req, stdio) < 0)
		goto fail;
	iso_spec_set_channel(req->spec, channel);
	return 0;
fail:
	spawn_request_release(req);
	return -1;
}

