/*
 * wire.h - the isospawn request/reply format, defined once for both sides.
 *
 * One message is one SOCK_SEQPACKET datagram:
 *
 *   header (12 bytes, little-endian):
 *     u16 magic   = ISO_WIRE_MAGIC
 *     u8  version = ISO_WIRE_VERSION
 *     u8  type    (enum iso_msg_type)
 *     u32 id      request id chosen by the client; replies and events carry
 *                 the id of the spawn they answer (a guest's id)
 *     u32 body_len  must equal datagram length - 12
 *   body: zero or more fields, back to back, no padding:
 *     u16 tag     (enum iso_field)
 *     u32 len     bytes of value that follow
 *     value       str: len >= 1, value[len-1] == '\0', no other NUL;
 *                 a path also starts with '/' and holds no control byte
 *                 (0x01-0x1f, 0x7f)
 *                 u32: len == 4; u64: len == 8
 *                 limit: len == 12 (u32 which, u64 value)
 *                 usage: len == 32 (u64 wall_us, user_us, sys_us, maxrss_kib)
 *                 cgroup: len == 20 (u64 cpu_us, memory_peak; u32 reached,
 *                 a bit set below 1 << ISO_LIMIT_COUNT)
 *
 * The decoder is total: every length is checked against what remains and
 * against the caps below, every tag must be one the message type allows,
 * singular fields may appear once, required ones must appear, and anything
 * else is refused with a reason. Decoded strings point into the caller's
 * buffer, which must outlive the decoded message. Nothing is memcpy'd as a
 * raw struct.
 *
 * File descriptors travel beside the datagram as SCM_RIGHTS: with SPAWN
 * the guest's stdio (in order 0, 1, 2 for the bits set in ISO_F_STDIO),
 * then one for each grant, in the order of its READ_PATH and then its
 * WRITE_PATH fields (each the object the caller opened, the field its path
 * in the guest's tree), then one for each PASS_FD, in order; the client's
 * channel end with SPAWNED.
 *
 * isospawnctl's conversation (a connection of its own): LIST is answered by
 * a GUEST per live guest of the caller, then DONE; STOP by DONE or REFUSED;
 * RULE by RULE_TEXT or REFUSED. A GUEST datagram is also what a lease file
 * holds while its uid runs a guest (record.h).
 *
 * A HELLO that refuses with EAGAIN (the caller has all its connections)
 * may be answered by WAIT: the helper then waits that long for one of
 * them to close, and greets again, ready or refusing. A client that does
 * not wait closes the connection.
 *
 * Inside the helper (never from or to a client, which is refused them):
 * the helper sends its reaper factory CLONE, answered by CLONED with the
 * new reaper's pidfd and socket, or by REFUSED. On that socket the helper
 * sends the reaper one PLAN, the decided guest, with the descriptors in
 * the order SPAWN's are described above (stdio, the grants in the PLAN's
 * order, the passed ones); the reaper answers, with a channel, CHANNEL
 * (the caller's end, or no descriptor when the guest never made it), then
 * EXITED when the guest and all it started are gone.
 */
#ifndef ISO_WIRE_H
#define ISO_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "isospawn.h"

#define ISO_WIRE_MAGIC 0x5349u /* "IS" little-endian */
#define ISO_WIRE_VERSION 1
#define ISO_WIRE_HEADER_SIZE 12
#define ISO_WIRE_FIELD_HEADER_SIZE 6
/* Bytes in one datagram. The socket buffers on both ends hold it. */
#define ISO_WIRE_MAX (128 * 1024)
/* Bytes in one string value including its NUL. */
#define ISO_WIRE_STR_MAX (ISO_ENV_NAME_MAX + 1 + ISO_ENV_VALUE_MAX + 1)
#define ISO_WIRE_PATH_MAX 4096 /* bytes in a path, including NUL */
#define ISO_WIRE_FORWARD_MAX 16 /* forwarded variables in one request */
/* Variables in a guest's environment: forwarded, PATH, overrides, TMPDIR
 * and the channel's. */
#define ISO_WIRE_ENV_MAX (ISO_WIRE_FORWARD_MAX + ISO_ENV_OVERRIDES_MAX + 3)
#define ISO_WIRE_TEXT_MAX 1024 /* bytes in a reason or notes, with NUL */
#define ISO_WIRE_RULE_MAX \
	(64 * 1024 + 1) /* a rule's text (a whole policy
					   * file at most), with NUL */
/* The helper finds its end of the socketpair on this descriptor. */
#define ISO_HELPER_FD 3

enum iso_msg_type {
	ISO_MSG_HELLO = 1, /* helper -> client, first: ready, or refusal */
	ISO_MSG_SPAWN = 2, /* client -> helper */
	ISO_MSG_KILL = 3, /* client -> helper; no reply */
	ISO_MSG_SPAWNED = 4, /* helper -> client: the guest is running */
	ISO_MSG_REFUSED = 5, /* helper -> client: nothing was started */
	ISO_MSG_EXITED = 6, /* helper -> client: final status of a guest */
	ISO_MSG_LIST = 7, /* client -> helper: the caller's live guests */
	ISO_MSG_GUEST = 8, /* helper -> client: one live guest (a lease record) */
	ISO_MSG_STOP = 9, /* client -> helper: end a guest of the caller's */
	ISO_MSG_RULE = 10, /* client -> helper: the caller's rule */
	ISO_MSG_RULE_TEXT = 11, /* helper -> client: that rule, as written */
	ISO_MSG_DONE = 12, /* helper -> client: LIST complete, STOP done */
	ISO_MSG_PLAN = 13, /* helper -> reaper: the decided guest */
	ISO_MSG_CLONE = 14, /* helper -> factory: a new reaper */
	ISO_MSG_CLONED = 15, /* factory -> helper: its pid (pidfd, socket) */
	ISO_MSG_CHANNEL = 16, /* reaper -> helper: the caller's channel end */
	ISO_MSG_WAIT = 17, /* client -> helper, after HELLO refused EAGAIN */
	ISO_MSG_TYPE_MAX = 17
};

enum iso_field {
	/* SPAWN */
	ISO_F_PROGRAM = 1, /* str, required */
	ISO_F_ARG = 2, /* str, repeated <= ISO_ARGS_MAX, in order */
	ISO_F_FORWARD = 3, /* str NAME=value, <= ISO_WIRE_FORWARD_MAX */
	ISO_F_OVERRIDE = 4, /* str NAME=value, <= ISO_ENV_OVERRIDES_MAX */
	ISO_F_LIMIT = 5, /* limit, repeated, each limit at most once */
	ISO_F_TIMEOUT_MS = 6, /* u64 */
	ISO_F_NETWORK = 7, /* u32 enum iso_network */
	ISO_F_READ_PATH = 8, /* str path, <= ISO_PATHS_MAX, with a descriptor */
	ISO_F_WRITE_PATH = 9, /* str path, <= ISO_PATHS_MAX, with a descriptor */
	ISO_F_CHANNEL = 10, /* u32 ISO_CHANNEL_*: 0 none, 1 messages, 2 stream */
	ISO_F_STDIO = 11, /* u32 mask: bit i set = fd for i attached */
	ISO_F_CWD = 12, /* str path: the guest's working directory */
	ISO_F_WAIT_SLOT_MS = 13, /* u64: wait this long for one of the caller's
				  * slots ('guests'); absent = refuse at once;
				  * required in WAIT (a connection's slot) */
	ISO_F_PASS_FD = 14, /* u32 3..ISO_PASS_FD_LIMIT-1, repeated
				* <= ISO_PASS_FDS_MAX, with a descriptor */
	/* KILL */
	ISO_F_SIGNAL = 20, /* u32, 1..64, required */
	/* HELLO */
	ISO_F_LANDLOCK_ABI = 30, /* u32, required */
	/* HELLO (refusal), REFUSED; MESSAGE also in EXITED */
	ISO_F_ERRNO = 31, /* u32 positive errno; required in REFUSED */
	ISO_F_MESSAGE = 32, /* str <= ISO_WIRE_TEXT_MAX; required in REFUSED;
				* in EXITED only with outcome FAILED */
	/* SPAWNED, GUEST; STOP (UID required, PID optional) */
	ISO_F_PID = 40, /* u32, required: the reaper, pid 1 of the guest's namespace */
	ISO_F_UID = 41, /* u32, required: the guest's uid */
	ISO_F_NOTES = 42, /* str <= ISO_WIRE_TEXT_MAX */
	/* EXITED */
	ISO_F_OUTCOME = 50, /* u32 enum iso_outcome (not RUNNING), required */
	ISO_F_CODE = 51, /* u32, required */
	ISO_F_STAGE = 52, /* u32 enum iso_stage */
	ISO_F_LIMIT_HIT = 53, /* u32 enum iso_limit */
	ISO_F_USAGE = 54, /* usage */
	ISO_F_CGROUP = 55, /* cgroup: what the guest's cgroup counted;
				* absent when it had none */
	/* GUEST; also PROGRAM, PID, UID, LIMIT, TIMEOUT_MS, NETWORK */
	ISO_F_CALLER = 60, /* u32 caller's uid, required */
	ISO_F_HELPER = 61, /* u32 pid of the helper serving it, required */
	ISO_F_START_TICKS = 62, /* u64 the reaper's start time (clock ticks
				 * since boot, /proc/PID/stat field 22) */
	ISO_F_STARTED = 63, /* u64 when it started, microseconds since 1970 */
	/* RULE_TEXT */
	ISO_F_FILE = 70, /* str path, required */
	ISO_F_LINE = 71, /* u32 >= 1, required */
	ISO_F_TEXT = 72, /* str <= ISO_WIRE_RULE_MAX, required */
	/* PLAN; also UID (required), PROGRAM, ARG, LIMIT, TIMEOUT_MS, NETWORK,
	 * CWD, CHANNEL, STDIO, PASS_FD */
	ISO_F_ENV = 80, /* str NAME=value, <= ISO_WIRE_ENV_MAX */
	ISO_F_GRANT = 81, /* str path, <= 2 * ISO_PATHS_MAX, in path order */
	ISO_F_GRANT_WRITE = 82, /* u64: bit i set = GRANT i read-write */
	ISO_F_MAX = 82
};

struct iso_wire_spawn {
	const char *program;
	const char *argv[ISO_ARGS_MAX + 1]; /* NULL-terminated */
	uint32_t argc;
	const char *forward[ISO_WIRE_FORWARD_MAX + 1];
	uint32_t nforward;
	const char *overrides[ISO_ENV_OVERRIDES_MAX + 1];
	uint32_t noverrides;
	const char *read_paths[ISO_PATHS_MAX + 1];
	uint32_t nread;
	const char *write_paths[ISO_PATHS_MAX + 1];
	uint32_t nwrite;
	uint64_t limits[ISO_LIMIT_COUNT];
	uint32_t limits_set; /* bit (1 << enum iso_limit) */
	uint64_t timeout_ms; /* 0 = policy default */
	uint32_t network; /* enum iso_network */
	uint32_t channel; /* ISO_CHANNEL_* */
	uint32_t stdio_mask; /* bits 0..2 */
	const char *cwd; /* NULL = the guest's /tmp */
	uint64_t wait_slot_ms; /* 0 = refuse at once when no slot is free */
	uint32_t pass_fds[ISO_PASS_FDS_MAX]; /* the guest's numbers for them */
	uint32_t npass;
};

/* What the helper decided, all its reaper does: every value final. */
struct iso_wire_plan {
	uint32_t uid; /* the pool uid leased for the guest */
	const char *program;
	const char *argv[ISO_ARGS_MAX + 1]; /* NULL-terminated */
	uint32_t argc;
	const char *envp[ISO_WIRE_ENV_MAX + 1]; /* the whole environment */
	uint32_t nenv;
	uint64_t limits[ISO_LIMIT_COUNT]; /* effective values */
	uint32_t limits_set;
	uint64_t timeout_ms; /* 0 = none */
	uint32_t network; /* enum iso_network */
	const char *grants[2 * ISO_PATHS_MAX + 1]; /* in the guest's tree */
	uint32_t ngrants;
	uint64_t grants_write; /* bit i: grants[i] is read-write */
	const char *cwd;
	uint32_t channel;
	uint32_t stdio_mask;
	uint32_t pass_fds[ISO_PASS_FDS_MAX];
	uint32_t npass;
};

struct iso_wire_cloned {
	uint32_t pid; /* the reaper */
};

struct iso_wire_kill {
	uint32_t signal;
};

struct iso_wire_hello {
	uint32_t landlock_abi;
	uint32_t err; /* 0 = ready; else the helper refuses (errno) */
	const char *message; /* NULL or the refusal */
};

struct iso_wire_spawned {
	uint32_t pid;
	uint32_t uid;
	const char *notes; /* NULL or notes */
};

struct iso_wire_refused {
	uint32_t err; /* positive errno */
	const char *message;
};

struct iso_wire_exited {
	uint32_t outcome; /* enum iso_outcome */
	uint32_t code;
	uint32_t stage; /* enum iso_stage, ISO_STAGE_NONE if absent */
	int32_t limit_hit; /* enum iso_limit, -1 if absent */
	uint64_t wall_us, user_us, sys_us, maxrss_kib;
	/* The guest's cgroup, when it had one (cgroup 1; else 0 and the rest
	 * 0): cpu.stat usage_usec, memory.peak (0: unknown), and the limits
	 * it reached and lived (bits 1 << enum iso_limit). */
	uint32_t cgroup;
	uint64_t cg_cpu_us, cg_memory_peak;
	uint32_t reached;
	const char *reason; /* NULL, or for ISO_OUTCOME_FAILED what failed */
};

/* A live guest: what isospawnctl list shows, and what proves, with
 * start_ticks, that pid is still its reaper. Never an environment value. */
struct iso_wire_guest {
	const char *program;
	uint32_t caller, helper; /* the caller's uid; the serving helper's pid */
	uint32_t pid, uid; /* the reaper; the guest's uid */
	uint64_t start_ticks; /* the reaper's start time (0: unknown) */
	uint64_t started_us; /* wall clock */
	uint64_t limits[ISO_LIMIT_COUNT]; /* effective values */
	uint32_t limits_set; /* bit (1 << enum iso_limit) */
	uint64_t timeout_ms; /* 0 = none */
	uint32_t network; /* enum iso_network */
};

struct iso_wire_stop {
	uint32_t uid; /* the guest's uid */
	uint32_t pid; /* 0, or its reaper: refused unless it still is */
};

struct iso_wire_wait {
	uint64_t ms; /* wait this long for one of the caller's connections */
};

struct iso_wire_rule_text {
	const char *file;
	uint32_t line;
	const char *text; /* from 'rule' to '}', as written */
};

struct iso_wire_msg {
	uint8_t type;
	uint32_t id;
	union {
		struct iso_wire_spawn spawn;
		struct iso_wire_kill kill;
		struct iso_wire_hello hello;
		struct iso_wire_spawned spawned;
		struct iso_wire_refused refused;
		struct iso_wire_exited exited;
		struct iso_wire_guest guest;
		struct iso_wire_stop stop;
		struct iso_wire_rule_text rule_text;
		struct iso_wire_plan plan;
		struct iso_wire_cloned cloned;
		struct iso_wire_wait wait;
	} u;
};

/*
 * Encode `msg` into buf (cap bytes). Returns the datagram length (> 0), or
 * -E2BIG when it does not fit in cap or ISO_WIRE_MAX, -EINVAL when msg breaks
 * a rule the decoder enforces (so the encoder never produces what the
 * decoder refuses).
 */
long iso_wire_encode(const struct iso_wire_msg *msg, uint8_t *buf, size_t cap);

/*
 * Decode one datagram. Returns 0 and fills *out, or -EBADMSG (malformed),
 * -EPROTONOSUPPORT (bad magic or version) with a one-line reason in why.
 * On failure *out is unspecified except out->id, which holds the header's id
 * when the header itself was readable (else 0) so a refusal can name it.
 */
int iso_wire_decode(const uint8_t *buf, size_t len, struct iso_wire_msg *out, char *why,
		    size_t why_size);

#endif /* ISO_WIRE_H */
