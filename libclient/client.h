/*
 * client.h - what the files of libisospawn share behind the public API.
 *
 * Invariants the files rely on:
 *  - A connection MUST NOT be used again for requests once `broken` is set:
 *    the helper is gone or spoke something this side could not trust, and
 *    every guest still running is from then on unknown.
 *  - Every live iso_guest is on its connection's list; an event for an id
 *    with no handle on the list is dropped.
 *  - No file descriptor received from the helper is ever left open unless
 *    it is stored in a guest handle (channel_fd).
 */
#ifndef ISO_CLIENT_H
#define ISO_CLIENT_H

#include <stdint.h>
#include <sys/types.h>

#include "isospawn.h"
#include "wire.h"

struct iso_spec {
	char *program;
	char **argv; /* NULL = { program }; one allocation with its strings */
	uint32_t argc;
	/* The forwarded names picked out of the source given to
	 * iso_spec_set_source_env(), one allocation with its strings. */
	int source_set;
	char **forward;
	uint32_t nforward;
	char *overrides[ISO_ENV_OVERRIDES_MAX]; /* "NAME=value", each owned */
	uint32_t noverrides;
	int stdio[3]; /* caller's fds, not owned; -1 = /dev/null */
	uint64_t limits[ISO_LIMIT_COUNT];
	uint32_t limits_set; /* bit (1 << enum iso_limit) */
	uint64_t timeout_ms;
	uint64_t wait_slot_ms;
	uint32_t network;
	/* Paths the caller lends, as it gave them: opened at iso_spawn(). */
	char *read_paths[ISO_PATHS_MAX];
	uint32_t nread;
	char *write_paths[ISO_PATHS_MAX];
	uint32_t nwrite;
	char *workdir; /* lent for writing and the cwd, or NULL */
	char *cwd; /* absolute, normalized, in the guest's tree, or NULL */
	int channel; /* ISO_CHANNEL_* */
	int pass_fds[ISO_PASS_FDS_MAX]; /* the caller's, not owned */
	uint32_t npass;
};

struct iso_guest {
	iso_conn *conn;
	iso_guest *prev, *next; /* the connection's list of live handles */
	uint32_t id;
	int want_channel; /* ISO_CHANNEL_* */
	pid_t pid;
	uid_t uid;
	int channel_fd; /* the caller's end, or -1 */
	enum iso_outcome outcome;
	int code;
	enum iso_stage stage;
	int limit;
	uint64_t wall_us, user_us, sys_us, maxrss_kib;
	int cgroup; /* 1: the next three are its cgroup's */
	uint64_t cg_cpu_us, cg_memory_peak;
	unsigned reached;
	char notes[ISO_WIRE_TEXT_MAX];
	char reason[ISO_WIRE_TEXT_MAX]; /* for a failed start; "" if none */
};

/* Where the answer to the SPAWN in flight stands. */
enum pending_state { PENDING_NONE, PENDING_WAITING, PENDING_DONE };

struct iso_conn {
	int fd;
	pid_t helper_pid; /* -1 once reaped */
	int helper_pidfd; /* the helper for good, or -1 (no pidfds): the
			   * caller may reap it, and its pid name another */
	pid_t owner; /* the process that opened it: a child forked from it
		      * shares the socket, and must neither kill the
		      * owner's guests nor shut the socket down */
	int landlock_abi;
	uint32_t last_id;
	int ids_wrapped; /* last_id went round: new ids must skip live ones */
	int broken;
	char broken_why[256]; /* why, repeated by every later call */
	iso_guest *guests;
	iso_guest *pending; /* the guest whose SPAWN awaits its answer */
	enum pending_state pending_state;
	int pending_result; /* 0 spawned, or the negative refusal */
	struct iso_wire_msg msg; /* the one message being built or read */
	uint8_t buf[ISO_WIRE_MAX];
};

/* error.c: record a one-line message for iso_last_error() and return code.
 * The message is formatted before anything else can change errno. */
__attribute__((format(printf, 2, 3))) int iso__fail(int code, const char *fmt, ...);

/* lend.c: open what the spec lends, as the caller, for the SPAWN in *w:
 * its descriptors are appended to fds[*nfds..] (ISO_FDS_MAX in all), its
 * paths in the guest's tree and the cwd set in *w, pointing into *labels
 * (free() it once the request is encoded). Returns 0; or the error of the
 * caller's own open, with nothing left open or allocated. */
int iso__lend(const iso_spec *spec, struct iso_wire_spawn *w, int *fds, unsigned *nfds,
	      char **labels);

/* spec.c: point picked[] at the entries of env whose names are in
 * ISO_FORWARDED_NAMES, the first occurrence of each (as getenv() and
 * iso_build_env() take it). Returns how many. */
uint32_t iso__pick_forwarded(const char *const *env, const char *picked[ISO_WIRE_FORWARD_MAX]);

/* conn.c */
/*
 * Send one message already encoded in conn->buf (len bytes) with `nfds`
 * descriptors attached. Returns 0; -EPIPE the helper is gone (the
 * connection is then broken); -EINVAL a descriptor is not open; -ENOMEM.
 */
int iso__send(iso_conn *conn, size_t len, const int *fds, unsigned nfds);

/*
 * Receive and dispatch one message from the helper. With `wait` 0 it
 * returns -EAGAIN when none is queued. Returns 0 one message handled;
 * -EAGAIN; -EINTR; -EPIPE the helper is gone; -EPROTO it sent something
 * this side refuses. After -EPIPE or -EPROTO the connection is broken and
 * iso_last_error() says why.
 */
int iso__receive(iso_conn *conn, int wait);

/* The live handle with this id, or NULL. */
iso_guest *iso__find_guest(iso_conn *conn, uint32_t id);

/* A fresh request id: never 0, never one a live handle still carries. */
uint32_t iso__next_id(iso_conn *conn);

/* Encode conn->msg into conn->buf. Returns the length, or -E2BIG/-EINVAL
 * with iso_last_error() set. */
long iso__encode(iso_conn *conn);

/* The setuid helper this process starts: ISOSPAWN_HELPER (unless the
 * caller is setuid), else the installed one. */
const char *iso__helper_path(void);

/* 1 with *gid set when that helper's mode lets only its group execute it
 * (4754 root:isospawn, as installed), else 0. */
int iso__helper_group(gid_t *gid);

/* guest.c */
/* Unlink a handle from its connection and release it; sends nothing. */
void iso__guest_release(iso_guest *guest);

/*
 * For isospawnctl (never exported): send msg (LIST, STOP or RULE) and give
 * every GUEST, and the RULE_TEXT, to fn, until DONE or RULE_TEXT ends the
 * answer. Strings fn sees live until the next call on conn. Returns 0; the
 * refusal (iso_last_error() says why); or -EPIPE/-EPROTO, the connection
 * broken.
 */
int iso__query(iso_conn *conn, const struct iso_wire_msg *msg,
	       void (*fn)(const struct iso_wire_msg *, void *), void *arg);

#endif /* ISO_CLIENT_H */
