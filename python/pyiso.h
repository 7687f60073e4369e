/*
 * pyiso.h - what the files of the Python module isospawn share.
 *
 * The module is written against the public libisospawn API only
 * (include/isospawn.h), whose contract is: a connection and everything made
 * from it may be used by one thread at a time. Python threads share
 * objects freely, so every Connection carries a mutex.
 *
 * Invariants the files rely on:
 *  - Every iso_ call on a connection, or on a guest of it, is made with the
 *    connection's `lock` held and the GIL released. Nothing that holds
 *    `lock` ever takes the GIL, so the two can never deadlock.
 *  - `lock` is held only for one call that does not block (iso_wait(g, 0),
 *    iso_recv(g, ..., 0), iso_kill(), iso_send() on a channel made
 *    O_NONBLOCK at spawn, which returns -EAGAIN when another thread took
 *    the room poll() saw) or for one iso_spawn() round trip. Waiting happens outside the lock, in
 *    poll() on iso_conn_fd() or iso_channel_fd(), which the library
 *    guarantees may be polled from any thread.
 *  - A thread that consumed messages from the connection (iso_spawn(), or
 *    iso_wait() while the socket was readable) may have collected another
 *    guest's end; it then wakes every registered waiter through its
 *    eventfd, so that nobody sleeps in poll() on an event already read.
 *  - Once `conn` is NULL (closed) no iso_ call is made on it or on any of
 *    its guests (iso_close() freed them); `close_efd` is readable from then
 *    on, so that no poll() sleeps on a closed descriptor.
 *  - In a process forked from the one that opened the connection, nothing
 *    is sent and nothing is closed: the socket is shared with the parent,
 *    and a kill or a shutdown would act on the parent's guests.
 */
#ifndef ISO_PYISO_H
#define ISO_PYISO_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "isospawn.h"

/* subprocess's values, so that subprocess.PIPE works here too. */
#define PYISO_PIPE (-1)
#define PYISO_STDOUT (-2)
#define PYISO_DEVNULL (-3)

/* A thread asleep in poll() on the connection's socket. */
struct waiter {
	int efd; /* eventfd, written when someone else read the socket */
	struct waiter *next;
};

/* Why a call failed, captured with the lock held (iso_last_error() is
 * per thread, so it is taken in the thread that made the call). */
struct failure {
	int rc;
	char msg[512];
};

/* Results of the calls that run without the GIL, beyond the library's. */
enum {
	PYISO_CLOSED = -10000, /* the connection was closed */
	PYISO_FORKED = -10001, /* used in a child of the opening process */
};

typedef struct {
	PyObject_HEAD
	iso_conn *conn;		/* NULL once closed */
	pthread_mutex_t lock;	/* see the invariants above */
	int lock_ready;
	int fd;			/* iso_conn_fd(), kept after closing */
	int close_efd;		/* readable for good once closed */
	pid_t owner;		/* the process that opened it */
	int broken;		/* a call saw -EPIPE: the helper is gone */
	int landlock_abi;
	struct waiter *waiters; /* under lock */
	PyObject *watchers;	/* dict: asyncio loop -> watcher (GIL) */
	PyObject *weakreflist;
} ConnObject;

/* A guest's end, copied from the library with the lock held. */
struct snapshot {
	enum iso_outcome outcome;
	int code;
	enum iso_stage stage;
	int limit;
	uint64_t wall_us, user_us, sys_us, maxrss_kib;
	int exit_code;
	char reason[1024]; /* iso_guest_reason(), or "" */
};

typedef struct {
	PyObject_HEAD
	ConnObject *conn;  /* strong */
	iso_guest *guest;  /* freed by dealloc, or by the connection's close */
	PyObject *args;	   /* as the caller gave them */
	PyObject *notes;   /* str */
	PyObject *files[3];  /* stdin, stdout, stderr: a file, or None */
	PyObject *status;  /* Status once known, else NULL */
	pid_t pid;
	uid_t uid;
	int channel_fd;	   /* -1 without a channel */
	int ended;	   /* under lock: snap is final */
	struct snapshot snap;
} GuestObject;

extern PyTypeObject ConnType, GuestType, StatusType, CompletedType,
	WatcherType, ChannelType;
extern PyObject *Error, *Refused, *StartFailed, *GuestError;

/* module.c */
/* An instance of the exception `type` (new reference) with message msg,
 * .errno err (0: None) and .stage (NULL: None); NULL on failure. */
PyObject *pyiso_exception(PyObject *type, int err, const char *msg,
			  const char *stage);
/* Raise `type` with message msg, .errno err (0: None), .stage (NULL: None).
 * Returns NULL. */
PyObject *pyiso_raise(PyObject *type, int err, const char *msg,
		      const char *stage);
/* Raise for a failure of a library call (rc < 0 or PYISO_*). */
PyObject *pyiso_raise_failure(const struct failure *f);
/* The shared connection run() uses (new reference), opened on first use. */
ConnObject *pyiso_default_conn(void);
/* asyncio's coroutine wrapper `async def _wait(f): return await f`. */
extern PyObject *pyiso_await_fn;
/* __exit__ for a type whose leaving closes it: self.close(), then False
 * (exceptions are not swallowed). */
PyObject *exit_closes(PyObject *self, PyObject *const *args, Py_ssize_t nargs);
/* Release GC-tracked o: untrack, tp_clear, free (a type's tp_dealloc
 * when its tp_clear drops every reference it holds). */
void gc_dealloc(PyObject *o);

/* conn.c */
/* Open /dev/null on each of descriptors 0, 1 and 2 that is closed, so
 * that no descriptor the library or this module makes can take its number
 * and reach a guest as inherited stdio (a helper's socket would let the
 * guest spawn as the caller). 0, or -1 with errno set. */
int stdio_guard(void);
/* A non-blocking, close-on-exec eventfd numbered above 2, or -1. */
int new_efd(void);
/* Lock and unlock conn->lock; call without the GIL. */
void conn_lock(ConnObject *c);
void conn_unlock(ConnObject *c);
/* Fill f: rc and msg. Returns rc. */
int failure_set(struct failure *f, int rc, const char *msg);
/* Fill f for the result rc of a library call, with iso_last_error() when
 * rc < 0. Returns rc. */
int failure_of_call(struct failure *f, int rc);
/* Fill f for a connection closed under the call. Returns PYISO_CLOSED. */
int failure_closed(struct failure *f);
/* With the GIL: 0 when the connection may be used in this process (and,
 * for conn_check, is open), else -1 with an exception set. */
int conn_check_owner(ConnObject *c);
int conn_check(ConnObject *c);
/* With the lock: wake every waiter but `self` (may be NULL). */
void conn_notify_locked(ConnObject *c, const struct waiter *self);
/* With the lock: (un)register a waiter to be woken. */
void waiter_add_locked(ConnObject *c, struct waiter *w);
void waiter_remove_locked(ConnObject *c, struct waiter *w);
/* Make an eventfd readable; make it unreadable again. */
void efd_signal(int efd);
void efd_drain(int efd);
/* With the lock: iso_wait(guest, 0), copying the end into g->snap.
 * Returns 0 ended, 1 running, or a failure (f filled). */
int guest_collect_locked(GuestObject *g, const struct waiter *self,
			 struct failure *f);
/* Without the GIL or the lock: wait for g until deadline (NULL: forever).
 * Returns 0 ended, 1 deadline passed, -EINTR a signal arrived (the caller
 * checks for Python signal handlers and calls again), or a failure. */
int guest_wait_nogil(GuestObject *g, const struct timespec *deadline,
		     struct failure *f);
/* Milliseconds until deadline for poll(): -1 if NULL, 0 once passed. */
int ms_until(const struct timespec *deadline);
/* A `timeout` argument as a number of seconds in *seconds: 0, or -1 with
 * an exception set when it is not a number, or is NaN, negative, 0 (unless
 * zero_ok) or over max. */
int seconds_arg(PyObject *timeout, int zero_ok, double max, double *seconds);
/* The deadline a `timeout` argument sets: *until is NULL for None (no
 * deadline), else deadline, filled. 0, or -1 with an exception set when
 * timeout is not a number of seconds >= 0. */
int deadline_arg(PyObject *timeout, struct timespec *deadline,
		 const struct timespec **until);
/* send()'s argument: a message of 1 to ISO_MESSAGE_MAX bytes, in *data,
 * which the caller releases. 0, or -1 with an exception set (and nothing
 * to release). */
int message_arg(PyObject *args, Py_buffer *data);

/* async.c */
/* wait_async(): register g with the watcher of the running loop and
 * return a coroutine that resolves to its Status. */
PyObject *conn_wait_async(ConnObject *c, GuestObject *g);

/* guest.c */
PyObject *status_from_snapshot(const struct snapshot *s);
/* Wait for the end with the GIL released; Python signal handlers run
 * between polls. 0 ended, 1 deadline passed (NULL: none), or -1 with an
 * exception set. */
int guest_wait_until(GuestObject *g, const struct timespec *deadline);
/* The Status of an ended guest (new reference), cached in g. */
PyObject *guest_status(GuestObject *g);

/* What spawn() and run() share: the spec and the descriptors made for it. */
struct spawn_request {
	iso_spec *spec;
	int parent_fds[3]; /* our ends of PIPEs, -1 if none */
	int child_fds[3];  /* the guest's ends we made, closed after spawn */
};
/* Parse spawn()'s keyword arguments into req (the caller releases it with
 * spawn_request_release). Returns 0, or -1 with an exception set. */
int spawn_request_build(struct spawn_request *req, PyObject *args,
			PyObject *env, PyObject *timeout, PyObject *limits,
			PyObject *network, PyObject *read, PyObject *write,
			PyObject *stdio[3], int channel);
void spawn_request_release(struct spawn_request *req);
/* Spawn req on c; the new Guest takes no pipe ends (they stay in req).
 * Returns a new reference, or NULL with an exception set. */
GuestObject *conn_spawn_request(ConnObject *c, PyObject *args,
				struct spawn_request *req);

/* run.c */
PyObject *conn_run(ConnObject *c, PyObject *posargs, PyObject *kwargs);

/* channel.c */
PyObject *pyiso_guest_module(void);

#endif /* ISO_PYISO_H */
