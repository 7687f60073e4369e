/*
 * channel.c - isospawn.guest: the guest's end of the message channel.
 *
 * The helper gives a guest spawned with channel=True a SOCK_SEQPACKET
 * socket on descriptor 3 and ISOSPAWN_CHANNEL_FD=3 (libisospawn(3)). This
 * side needs no helper and no library call: it is a plain socket, found
 * by that variable and checked to be such a socket before it is used.
 */
#include "config.h"

#include "pyiso.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct {
	PyObject_HEAD
	int fd; /* -1 once closed */
} ChannelObject;

/* The one Channel of this process, while it is open. */
static ChannelObject *the_channel;

static int channel_open(ChannelObject *ch)
{
	if (ch->fd >= 0)
		return 0;
	PyErr_SetString(PyExc_ValueError, "the channel is closed");
	return -1;
}

static PyObject *channel_send(ChannelObject *ch, PyObject *args)
{
	Py_buffer data;
	ssize_t n;

	if (message_arg(args, &data) < 0)
		return NULL;
	if (channel_open(ch) < 0) {
		PyBuffer_Release(&data);
		return NULL;
	}
	for (;;) {
		Py_BEGIN_ALLOW_THREADS
		n = send(ch->fd, data.buf, (size_t)data.len, MSG_NOSIGNAL);
		Py_END_ALLOW_THREADS
		if (n >= 0 || errno != EINTR || PyErr_CheckSignals() < 0)
			break;
	}
	if (n < 0 && !PyErr_Occurred())
		PyErr_SetFromErrno(PyExc_OSError);
	PyBuffer_Release(&data);
	if (n < 0)
		return NULL;
	Py_RETURN_NONE;
}

static PyObject *channel_recv(ChannelObject *ch, PyObject *args, PyObject *kwds)
{
	static char *kwlist[] = { "timeout", NULL };
	PyObject *timeout = Py_None, *result = NULL;
	const struct timespec *until;
	struct timespec deadline;
	char *buf;
	ssize_t n;
	int rc, err;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "|O:recv", kwlist,
					 &timeout))
		return NULL;
	if (channel_open(ch) < 0 || deadline_arg(timeout, &deadline, &until) < 0)
		return NULL;
	buf = PyMem_Malloc(ISO_MESSAGE_MAX);
	if (buf == NULL)
		return PyErr_NoMemory();
	for (;;) {
		struct pollfd p = { .fd = ch->fd, .events = POLLIN };
		int ms = ms_until(until);

		Py_BEGIN_ALLOW_THREADS
		n = recv(ch->fd, buf, ISO_MESSAGE_MAX, MSG_TRUNC | MSG_DONTWAIT);
		err = errno;
		if (n < 0 && (err == EAGAIN || err == EWOULDBLOCK)) {
			rc = ms == 0 ? 0 : poll(&p, 1, ms);
			err = errno;
			if (rc < 0)
				n = -2; /* err says why */
			else if (rc == 0)
				n = -3; /* timed out */
		}
		Py_END_ALLOW_THREADS
		if (n == -3) {
			result = Py_NewRef(Py_None);
			break;
		}
		if ((n == -1 && (err == EAGAIN || err == EWOULDBLOCK)) ||
		    (n < 0 && err == EINTR)) {
			if (PyErr_CheckSignals() < 0)
				break;
			continue;
		}
		if (n == 0 || (n < 0 && err == ECONNRESET)) {
			PyErr_SetString(PyExc_EOFError,
					"the caller closed its end of the channel");
		} else if (n < 0) {
			errno = err;
			PyErr_SetFromErrno(PyExc_OSError);
		} else if (n > ISO_MESSAGE_MAX) {
			PyErr_Format(PyExc_ValueError,
				     "a message of %zd bytes, over MESSAGE_MAX "
				     "(discarded)",
				     n);
		} else {
			result = PyBytes_FromStringAndSize(buf, n);
		}
		break;
	}
	PyMem_Free(buf);
	return result;
}

static PyObject *channel_fileno(ChannelObject *ch, PyObject *Py_UNUSED(ignored))
{
	if (channel_open(ch) < 0)
		return NULL;
	return PyLong_FromLong(ch->fd);
}

static PyObject *channel_close(ChannelObject *ch, PyObject *Py_UNUSED(ignored))
{
	if (ch->fd >= 0) {
		close(ch->fd);
		ch->fd = -1;
	}
	if (the_channel == ch)
		Py_CLEAR(the_channel);
	Py_RETURN_NONE;
}

static PyObject *channel_enter(ChannelObject *ch, PyObject *Py_UNUSED(ignored))
{
	if (channel_open(ch) < 0)
		return NULL;
	return Py_NewRef(ch);
}

static PyObject *channel_get_closed(ChannelObject *ch, void *Py_UNUSED(closure))
{
	return PyBool_FromLong(ch->fd < 0);
}

static void channel_dealloc(ChannelObject *ch)
{
	if (ch->fd >= 0)
		close(ch->fd);
	Py_TYPE(ch)->tp_free((PyObject *)ch);
}

static PyMethodDef channel_methods[] = {
	{ "send", (PyCFunction)channel_send, METH_VARARGS,
	  "send(data: bytes)\n\nSend one message (1 to MESSAGE_MAX bytes) to the "
	  "caller." },
	{ "recv", (PyCFunction)(void (*)(void))channel_recv,
	  METH_VARARGS | METH_KEYWORDS,
	  "recv(timeout=None) -> bytes or None\n\nReceive one message, waiting at "
	  "most timeout seconds (None: for ever);\nNone when nothing arrived in "
	  "time; EOFError once the caller closed its end." },
	{ "fileno", (PyCFunction)channel_fileno, METH_NOARGS,
	  "fileno() -> int\n\nThe channel's descriptor, for selectors." },
	{ "close", (PyCFunction)channel_close, METH_NOARGS,
	  "close()\n\nClose the channel: the caller's recv() then raises "
	  "EOFError." },
	{ "__enter__", (PyCFunction)channel_enter, METH_NOARGS, NULL },
	{ "__exit__", (PyCFunction)(void (*)(void))exit_closes, METH_FASTCALL,
	  NULL },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef channel_getset[] = {
	{ "closed", (getter)channel_get_closed, NULL, "True once closed.", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

PyTypeObject ChannelType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "isospawn.guest.Channel",
	.tp_basicsize = sizeof(ChannelObject),
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = "The guest's end of its message channel (a SOCK_SEQPACKET "
		  "socket). Messages\nkeep their boundaries. Use it from one "
		  "thread at a time for each\ndirection; close() must not race "
		  "with a send() or recv().",
	.tp_dealloc = (destructor)channel_dealloc,
	.tp_methods = channel_methods,
	.tp_getset = channel_getset,
};

/* ISOSPAWN_CHANNEL_FD as a descriptor that is a SOCK_SEQPACKET socket, or
 * -1. */
static int channel_fd_from_env(void)
{
	const char *value = getenv("ISOSPAWN_CHANNEL_FD");
	struct stat st;
	socklen_t len;
	char *end;
	long fd;
	int type;

	if (value == NULL || *value < '0' || *value > '9')
		return -1;
	errno = 0;
	fd = strtol(value, &end, 10);
	if (errno != 0 || *end != '\0' || fd > INT_MAX)
		return -1;
	len = sizeof(type);
	if (fstat((int)fd, &st) < 0 || !S_ISSOCK(st.st_mode) ||
	    getsockopt((int)fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 ||
	    type != SOCK_SEQPACKET)
		return -1;
	return (int)fd;
}

static PyObject *guest_channel(PyObject *self, PyObject *Py_UNUSED(ignored))
{
	int fd;

	if (the_channel != NULL)
		return Py_NewRef(the_channel);
	fd = channel_fd_from_env();
	if (fd < 0)
		Py_RETURN_NONE;
	the_channel = PyObject_New(ChannelObject, &ChannelType);
	if (the_channel == NULL)
		return NULL;
	the_channel->fd = fd;
	return Py_NewRef(the_channel);
}

static PyMethodDef guest_module_methods[] = {
	{ "channel", guest_channel, METH_NOARGS,
	  "channel() -> Channel or None\n\nThe guest's end of the message "
	  "channel its caller asked for\n(spawn(..., channel=True)): the socket "
	  "ISOSPAWN_CHANNEL_FD names, once it\nis checked to be one. None outside "
	  "a guest, or in a guest without a\nchannel. The same object on every "
	  "call until it is closed." },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef guest_module_def = {
	PyModuleDef_HEAD_INIT,
	.m_name = "isospawn.guest",
	.m_doc = "The guest's side of isospawn: talk back to the caller.\n"
		 "\n"
		 "    from isospawn import guest\n"
		 "    ch = guest.channel()       # None outside a guest\n"
		 "    if ch is not None:\n"
		 "        job = ch.recv(timeout=10)\n"
		 "        ch.send(b\"result\")",
	.m_size = -1,
	.m_methods = guest_module_methods,
};

PyObject *pyiso_guest_module(void)
{
	return PyModule_Create(&guest_module_def);
}
