/*
 * wire.c - the one codec for isospawn datagrams (format: wire.h).
 *
 * The helper decodes what an unprivileged, possibly hostile client sends, so
 * this file runs as root on attacker-chosen bytes. Invariants:
 *  - The decoder MUST NOT read outside buf[0..len): every read is preceded by
 *    a check against the bytes that remain.
 *  - The decoder MUST NOT accept anything the schema below does not allow:
 *    unknown types and tags, surplus or missing fields, bad lengths and
 *    out-of-range numbers, an EXITED's reason with an outcome other than
 *    FAILED, an EXITED's cgroup bits of no limit, a PLAN's GRANT_WRITE
 *    naming a grant it lacks are refused, with a one-line reason.
 *  - The encoder MUST NOT emit anything the decoder refuses, and its output
 *    is canonical (fields in schema order, absent optional fields omitted),
 *    so encode(decode(x)) == x for every x it produced.
 *  - Neither side copies a struct to or from the wire: every integer is
 *    assembled byte by byte, little-endian.
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "util.h"
#include "wire.h"

enum kind {
	K_STR, /* str; singular: const char *, repeated: array + count */
	K_U32, /* u32 in [min, max]; absent = 0; repeated: array + count */
	K_I32, /* u32 on the wire in [min, max]; stored int32_t, absent = -1 */
	K_U64, /* u64; absent = 0 */
	K_LIMIT, /* limits[] at off, limits_set at count_off */
	K_USAGE, /* EXITED wall_us, user_us, sys_us, maxrss_kib */
	K_CGROUP, /* EXITED cg_cpu_us, cg_memory_peak, reached; cgroup = 1 */
};

struct rule {
	uint16_t tag;
	uint8_t kind;
	bool absolute; /* K_STR: must start with '/' */
	uint16_t min_count; /* 0 optional, 1 required */
	uint16_t max_count; /* 1 singular, else repeated */
	uint32_t min, max; /* K_STR: max bytes incl. NUL; K_U32/K_I32: range */
	size_t off; /* the value, or the array, in struct iso_wire_msg */
	size_t count_off; /* repeated K_STR, K_U32: its uint32_t count;
			     * K_LIMIT: the uint32_t bit set of limits given */
};

#define MSG_OFF(member) offsetof(struct iso_wire_msg, u.member)
/* Repeated strings take their cap from the array, which has room for it
 * plus the terminating NULL, so the two can never disagree. */
#define STR_ARRAY(tag, member, count, lo, cap, abs)                                            \
	{                                                                                      \
		tag, K_STR, abs, lo,                                                           \
		    sizeof(((struct iso_wire_msg *)0)->u.member) / sizeof(char *) - 1, 0, cap, \
		    MSG_OFF(member), MSG_OFF(count)                                            \
	}
#define STR_ONE(tag, member, req, cap, abs)                         \
	{                                                           \
		tag, K_STR, abs, req, 1, 0, cap, MSG_OFF(member), 0 \
	}
#define NUM_ONE(tag, kind, member, req, lo, hi)                      \
	{                                                            \
		tag, kind, false, req, 1, lo, hi, MSG_OFF(member), 0 \
	}
#define U32_ARRAY(tag, member, count, lo, hi)                                                \
	{                                                                                    \
		tag, K_U32, false, 0,                                                        \
		    sizeof(((struct iso_wire_msg *)0)->u.member) / sizeof(uint32_t), lo, hi, \
		    MSG_OFF(member), MSG_OFF(count)                                          \
	}
#define LIMITS(type)                                                                         \
	{                                                                                    \
		ISO_F_LIMIT, K_LIMIT, false, 0, ISO_LIMIT_COUNT, 0, 0, MSG_OFF(type.limits), \
		    MSG_OFF(type.limits_set)                                                 \
	}

static const struct rule spawn_rules[] = {
	STR_ONE(ISO_F_PROGRAM, spawn.program, 1, ISO_WIRE_PATH_MAX, true),
	STR_ARRAY(ISO_F_ARG, spawn.argv, spawn.argc, 1, ISO_WIRE_STR_MAX, false),
	STR_ARRAY(ISO_F_FORWARD, spawn.forward, spawn.nforward, 0, ISO_WIRE_STR_MAX, false),
	STR_ARRAY(ISO_F_OVERRIDE, spawn.overrides, spawn.noverrides, 0, ISO_WIRE_STR_MAX, false),
	LIMITS(spawn),
	NUM_ONE(ISO_F_TIMEOUT_MS, K_U64, spawn.timeout_ms, 0, 0, 0),
	NUM_ONE(ISO_F_NETWORK, K_U32, spawn.network, 0, 0, ISO_NETWORK_HOST),
	STR_ARRAY(ISO_F_READ_PATH, spawn.read_paths, spawn.nread, 0, ISO_WIRE_PATH_MAX, true),
	STR_ARRAY(ISO_F_WRITE_PATH, spawn.write_paths, spawn.nwrite, 0, ISO_WIRE_PATH_MAX, true),
	NUM_ONE(ISO_F_CHANNEL, K_U32, spawn.channel, 0, 0, ISO_CHANNEL_STREAM),
	NUM_ONE(ISO_F_STDIO, K_U32, spawn.stdio_mask, 0, 0, 7),
	STR_ONE(ISO_F_CWD, spawn.cwd, 0, ISO_WIRE_PATH_MAX, true),
	NUM_ONE(ISO_F_WAIT_SLOT_MS, K_U64, spawn.wait_slot_ms, 0, 0, 0),
	U32_ARRAY(ISO_F_PASS_FD, spawn.pass_fds, spawn.npass, 3, ISO_PASS_FD_LIMIT - 1),
};
static const struct rule plan_rules[] = {
	NUM_ONE(ISO_F_UID, K_U32, plan.uid, 1, 0, UINT32_MAX),
	STR_ONE(ISO_F_PROGRAM, plan.program, 1, ISO_WIRE_PATH_MAX, true),
	STR_ARRAY(ISO_F_ARG, plan.argv, plan.argc, 1, ISO_WIRE_STR_MAX, false),
	STR_ARRAY(ISO_F_ENV, plan.envp, plan.nenv, 0, ISO_WIRE_STR_MAX, false),
	LIMITS(plan),
	NUM_ONE(ISO_F_TIMEOUT_MS, K_U64, plan.timeout_ms, 0, 0, 0),
	NUM_ONE(ISO_F_NETWORK, K_U32, plan.network, 0, 0, ISO_NETWORK_HOST),
	STR_ARRAY(ISO_F_GRANT, plan.grants, plan.ngrants, 0, ISO_WIRE_PATH_MAX, true),
	NUM_ONE(ISO_F_GRANT_WRITE, K_U64, plan.grants_write, 0, 0, 0),
	STR_ONE(ISO_F_CWD, plan.cwd, 0, ISO_WIRE_PATH_MAX, true),
	NUM_ONE(ISO_F_CHANNEL, K_U32, plan.channel, 0, 0, ISO_CHANNEL_STREAM),
	NUM_ONE(ISO_F_STDIO, K_U32, plan.stdio_mask, 0, 0, 7),
	U32_ARRAY(ISO_F_PASS_FD, plan.pass_fds, plan.npass, 3, ISO_PASS_FD_LIMIT - 1),
};
static const struct rule cloned_rules[] = {
	NUM_ONE(ISO_F_PID, K_U32, cloned.pid, 1, 1, UINT32_MAX),
};
static const struct rule kill_rules[] = {
	NUM_ONE(ISO_F_SIGNAL, K_U32, kill.signal, 1, 1, 64),
};
/* Errnos are positive and below 4096, the kernel's -MAX_ERRNO boundary. */
static const struct rule hello_rules[] = {
	NUM_ONE(ISO_F_LANDLOCK_ABI, K_U32, hello.landlock_abi, 1, 0, 255),
	NUM_ONE(ISO_F_ERRNO, K_U32, hello.err, 0, 1, 4095),
	STR_ONE(ISO_F_MESSAGE, hello.message, 0, ISO_WIRE_TEXT_MAX, false),
};
static const struct rule spawned_rules[] = {
	NUM_ONE(ISO_F_PID, K_U32, spawned.pid, 1, 0, UINT32_MAX),
	NUM_ONE(ISO_F_UID, K_U32, spawned.uid, 1, 0, UINT32_MAX),
	STR_ONE(ISO_F_NOTES, spawned.notes, 0, ISO_WIRE_TEXT_MAX, false),
};
static const struct rule refused_rules[] = {
	NUM_ONE(ISO_F_ERRNO, K_U32, refused.err, 1, 1, 4095),
	STR_ONE(ISO_F_MESSAGE, refused.message, 1, ISO_WIRE_TEXT_MAX, false),
};
static const struct rule exited_rules[] = {
	NUM_ONE(ISO_F_OUTCOME, K_U32, exited.outcome, 1, ISO_OUTCOME_EXITED, ISO_OUTCOME_FAILED),
	NUM_ONE(ISO_F_CODE, K_U32, exited.code, 1, 0, UINT32_MAX),
	NUM_ONE(ISO_F_STAGE, K_U32, exited.stage, 0, 0, ISO_STAGE_EXEC),
	NUM_ONE(ISO_F_LIMIT_HIT, K_I32, exited.limit_hit, 0, 0, ISO_LIMIT_COUNT - 1),
	{ ISO_F_USAGE, K_USAGE, false, 0, 1, 0, 0, 0, 0 },
	{ ISO_F_CGROUP, K_CGROUP, false, 0, 1, 0, 0, 0, 0 },
	STR_ONE(ISO_F_MESSAGE, exited.reason, 0, ISO_WIRE_TEXT_MAX, false),
};
static const struct rule guest_rules[] = {
	STR_ONE(ISO_F_PROGRAM, guest.program, 1, ISO_WIRE_PATH_MAX, true),
	LIMITS(guest),
	NUM_ONE(ISO_F_TIMEOUT_MS, K_U64, guest.timeout_ms, 0, 0, 0),
	NUM_ONE(ISO_F_NETWORK, K_U32, guest.network, 0, 0, ISO_NETWORK_HOST),
	NUM_ONE(ISO_F_PID, K_U32, guest.pid, 1, 1, UINT32_MAX),
	NUM_ONE(ISO_F_UID, K_U32, guest.uid, 1, 0, UINT32_MAX),
	NUM_ONE(ISO_F_CALLER, K_U32, guest.caller, 1, 0, UINT32_MAX),
	NUM_ONE(ISO_F_HELPER, K_U32, guest.helper, 1, 1, UINT32_MAX),
	NUM_ONE(ISO_F_START_TICKS, K_U64, guest.start_ticks, 0, 0, 0),
	NUM_ONE(ISO_F_STARTED, K_U64, guest.started_us, 0, 0, 0),
};
static const struct rule stop_rules[] = {
	NUM_ONE(ISO_F_PID, K_U32, stop.pid, 0, 1, UINT32_MAX),
	NUM_ONE(ISO_F_UID, K_U32, stop.uid, 1, 0, UINT32_MAX),
};
static const struct rule rule_text_rules[] = {
	STR_ONE(ISO_F_FILE, rule_text.file, 1, ISO_WIRE_PATH_MAX, true),
	NUM_ONE(ISO_F_LINE, K_U32, rule_text.line, 1, 1, UINT32_MAX),
	STR_ONE(ISO_F_TEXT, rule_text.text, 1, ISO_WIRE_RULE_MAX, false),
};
static const struct rule wait_rules[] = {
	NUM_ONE(ISO_F_WAIT_SLOT_MS, K_U64, wait.ms, 1, 0, 0),
};

#define MAX_RULES 16
#define SCHEMA(name, rules)               \
	{                                 \
		name, rules, COUNT(rules) \
	}
static const struct schema {
	const char *name;
	const struct rule *rules;
	size_t nrules;
} schemas[ISO_MSG_TYPE_MAX + 1] = {
	[ISO_MSG_HELLO] = SCHEMA("HELLO", hello_rules),
	[ISO_MSG_SPAWN] = SCHEMA("SPAWN", spawn_rules),
	[ISO_MSG_KILL] = SCHEMA("KILL", kill_rules),
	[ISO_MSG_SPAWNED] = SCHEMA("SPAWNED", spawned_rules),
	[ISO_MSG_REFUSED] = SCHEMA("REFUSED", refused_rules),
	[ISO_MSG_EXITED] = SCHEMA("EXITED", exited_rules),
	[ISO_MSG_LIST] = { "LIST", NULL, 0 },
	[ISO_MSG_GUEST] = SCHEMA("GUEST", guest_rules),
	[ISO_MSG_STOP] = SCHEMA("STOP", stop_rules),
	[ISO_MSG_RULE] = { "RULE", NULL, 0 },
	[ISO_MSG_RULE_TEXT] = SCHEMA("RULE_TEXT", rule_text_rules),
	[ISO_MSG_DONE] = { "DONE", NULL, 0 },
	[ISO_MSG_PLAN] = SCHEMA("PLAN", plan_rules),
	[ISO_MSG_CLONE] = { "CLONE", NULL, 0 },
	[ISO_MSG_CLONED] = SCHEMA("CLONED", cloned_rules),
	[ISO_MSG_CHANNEL] = { "CHANNEL", NULL, 0 },
	[ISO_MSG_WAIT] = SCHEMA("WAIT", wait_rules),
};
_Static_assert(COUNT(spawn_rules) <= MAX_RULES && COUNT(plan_rules) <= MAX_RULES,
	       "the decoder counts fields per rule in an array of MAX_RULES");

static const char *const field_names[ISO_F_MAX + 1] = {
	[ISO_F_PROGRAM] = "PROGRAM",
	[ISO_F_ARG] = "ARG",
	[ISO_F_FORWARD] = "FORWARD",
	[ISO_F_OVERRIDE] = "OVERRIDE",
	[ISO_F_LIMIT] = "LIMIT",
	[ISO_F_TIMEOUT_MS] = "TIMEOUT_MS",
	[ISO_F_NETWORK] = "NETWORK",
	[ISO_F_READ_PATH] = "READ_PATH",
	[ISO_F_WRITE_PATH] = "WRITE_PATH",
	[ISO_F_CHANNEL] = "CHANNEL",
	[ISO_F_STDIO] = "STDIO",
	[ISO_F_CWD] = "CWD",
	[ISO_F_PASS_FD] = "PASS_FD",
	[ISO_F_SIGNAL] = "SIGNAL",
	[ISO_F_WAIT_SLOT_MS] = "WAIT_SLOT_MS",
	[ISO_F_LANDLOCK_ABI] = "LANDLOCK_ABI",
	[ISO_F_ERRNO] = "ERRNO",
	[ISO_F_MESSAGE] = "MESSAGE",
	[ISO_F_PID] = "PID",
	[ISO_F_UID] = "UID",
	[ISO_F_NOTES] = "NOTES",
	[ISO_F_OUTCOME] = "OUTCOME",
	[ISO_F_CODE] = "CODE",
	[ISO_F_STAGE] = "STAGE",
	[ISO_F_LIMIT_HIT] = "LIMIT_HIT",
	[ISO_F_USAGE] = "USAGE",
	[ISO_F_CGROUP] = "CGROUP",
	[ISO_F_CALLER] = "CALLER",
	[ISO_F_HELPER] = "HELPER",
	[ISO_F_START_TICKS] = "START_TICKS",
	[ISO_F_STARTED] = "STARTED",
	[ISO_F_FILE] = "FILE",
	[ISO_F_LINE] = "LINE",
	[ISO_F_TEXT] = "TEXT",
	[ISO_F_ENV] = "ENV",
	[ISO_F_GRANT] = "GRANT",
	[ISO_F_GRANT_WRITE] = "GRANT_WRITE",
};

static const char *field_name(uint16_t tag)
{
	return tag < COUNT(field_names) ? field_names[tag] : NULL;
}

static const struct rule *find_rule(const struct schema *s, uint16_t tag)
{
	for (size_t i = 0; i < s->nrules; i++)
		if (s->rules[i].tag == tag)
			return &s->rules[i];
	return NULL;
}

/* Members of the decoded message, reached through a rule's offsets. A
 * typedef lets AT_CONST add const to the pointer, not to the chars twice. */
typedef const char *str_ptr;
#define AT(msg, off, type) ((type *)((char *)(msg) + (off)))
#define AT_CONST(msg, off, type) ((const type *)((const char *)(msg) + (off)))

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

/* An EXITED's reason says why a guest could not start: only with FAILED. */
static bool reason_fits(const struct iso_wire_exited *e)
{
	return e->reason == NULL || e->outcome == ISO_OUTCOME_FAILED;
}

/* A PLAN's GRANT_WRITE names only grants it has. */
static bool grants_fit(const struct iso_wire_plan *p)
{
	return p->ngrants >= 64 || p->grants_write >> p->ngrants == 0;
}

/* What a cgroup counted comes with its flag, and names only limits. */
static bool cgroup_fits(const struct iso_wire_exited *e)
{
	if (e->cgroup == 0)
		return (e->cg_cpu_us | e->cg_memory_peak | e->reached) == 0;
	return e->cgroup == 1 && e->reached >> ISO_LIMIT_COUNT == 0;
}

/* ------------------------------------------------------------------ */
/* Encoding                                                            */

/* Appends until the first write that does not fit, then only counts that
 * it overflowed, so validation of the rest still runs and -EINVAL wins. */
struct writer {
	uint8_t *buf;
	size_t cap, len;
	bool overflow;
};

static void put_bytes(struct writer *w, const void *p, size_t n)
{
	if (w->overflow || n > w->cap - w->len) {
		w->overflow = true;
		return;
	}
	memcpy(w->buf + w->len, p, n);
	w->len += n;
}

static void put_le(struct writer *w, uint64_t v, size_t n)
{
	uint8_t b[8];

	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	put_bytes(w, b, n);
}

static void put_field_header(struct writer *w, uint16_t tag, size_t len)
{
	put_le(w, tag, 2);
	put_le(w, len, 4);
}

static int put_str(struct writer *w, const struct rule *r, const char *s)
{
	if (s == NULL)
		return -EINVAL;
	size_t len = strnlen(s, r->max);
	if (len == r->max || (r->absolute && (s[0] != '/' || iso_control_byte(s, len))))
		return -EINVAL;
	put_field_header(w, r->tag, len + 1);
	put_bytes(w, s, len + 1);
	return 0;
}

static int put_rule(struct writer *w, const struct rule *r, const struct iso_wire_msg *msg)
{
	if (r->kind == K_STR && r->max_count > 1) {
		uint32_t n = *AT_CONST(msg, r->count_off, uint32_t);
		const char *const *v = AT_CONST(msg, r->off, str_ptr);
		if (n < r->min_count || n > r->max_count)
			return -EINVAL;
		for (uint32_t i = 0; i < n; i++)
			if (put_str(w, r, v[i]) < 0)
				return -EINVAL;
		return 0;
	}
	if (r->kind == K_STR) {
		const char *s = *AT_CONST(msg, r->off, str_ptr);
		return s == NULL && r->min_count == 0 ? 0 : put_str(w, r, s);
	}
	if (r->kind == K_U32 && r->max_count > 1) {
		uint32_t n = *AT_CONST(msg, r->count_off, uint32_t);
		const uint32_t *v = AT_CONST(msg, r->off, uint32_t);
		if (n > r->max_count)
			return -EINVAL;
		for (uint32_t i = 0; i < n; i++) {
			if (v[i] < r->min || v[i] > r->max)
				return -EINVAL;
			put_field_header(w, r->tag, 4);
			put_le(w, v[i], 4);
		}
		return 0;
	}
	if (r->kind == K_U32 || r->kind == K_I32) {
		int64_t v = r->kind == K_U32 ? (int64_t)*AT_CONST(msg, r->off, uint32_t)
					     : (int64_t)*AT_CONST(msg, r->off, int32_t);
		int64_t absent = r->kind == K_U32 ? 0 : -1;
		if (v == absent && r->min_count == 0)
			return 0;
		if (v < r->min || v > r->max)
			return -EINVAL;
		put_field_header(w, r->tag, 4);
		put_le(w, (uint64_t)v, 4);
		return 0;
	}
	if (r->kind == K_U64) {
		uint64_t v = *AT_CONST(msg, r->off, uint64_t);
		if (v != 0 || r->min_count != 0) {
			put_field_header(w, r->tag, 8);
			put_le(w, v, 8);
		}
		return 0;
	}
	if (r->kind == K_LIMIT) {
		const uint64_t *limits = AT_CONST(msg, r->off, uint64_t);
		uint32_t set = *AT_CONST(msg, r->count_off, uint32_t);
		if (set >> ISO_LIMIT_COUNT != 0)
			return -EINVAL;
		for (uint32_t i = 0; i < ISO_LIMIT_COUNT; i++) {
			if (!(set & 1u << i))
				continue;
			put_field_header(w, r->tag, 12);
			put_le(w, i, 4);
			put_le(w, limits[i], 8);
		}
		return 0;
	}
	const struct iso_wire_exited *e = &msg->u.exited;
	if (r->kind == K_CGROUP) {
		if (e->cgroup == 0)
			return 0;
		put_field_header(w, r->tag, 20);
		put_le(w, e->cg_cpu_us, 8);
		put_le(w, e->cg_memory_peak, 8);
		put_le(w, e->reached, 4);
		return 0;
	}
	/* K_USAGE: all zero is what the decoder fills in when it is absent. */
	if ((e->wall_us | e->user_us | e->sys_us | e->maxrss_kib) == 0)
		return 0;
	put_field_header(w, r->tag, 32);
	put_le(w, e->wall_us, 8);
	put_le(w, e->user_us, 8);
	put_le(w, e->sys_us, 8);
	put_le(w, e->maxrss_kib, 8);
	return 0;
}

long iso_wire_encode(const struct iso_wire_msg *msg, uint8_t *buf, size_t cap)
{
	if (msg == NULL || msg->type == 0 || msg->type > ISO_MSG_TYPE_MAX)
		return -EINVAL;
	const struct schema *s = &schemas[msg->type];
	if ((msg->type == ISO_MSG_EXITED &&
	     (!reason_fits(&msg->u.exited) || !cgroup_fits(&msg->u.exited))) ||
	    (msg->type == ISO_MSG_PLAN && !grants_fit(&msg->u.plan)))
		return -EINVAL;
	struct writer w = { buf, cap < ISO_WIRE_MAX ? cap : ISO_WIRE_MAX, 0, false };

	put_le(&w, ISO_WIRE_MAGIC, 2);
	put_le(&w, ISO_WIRE_VERSION, 1);
	put_le(&w, msg->type, 1);
	put_le(&w, msg->id, 4);
	put_le(&w, 0, 4); /* body_len, known at the end */
	for (size_t i = 0; i < s->nrules; i++)
		if (put_rule(&w, &s->rules[i], msg) < 0)
			return -EINVAL;
	if (w.overflow)
		return -E2BIG;
	size_t body_len = w.len - ISO_WIRE_HEADER_SIZE;
	w.len = 8;
	put_le(&w, body_len, 4);
	return (long)(body_len + ISO_WIRE_HEADER_SIZE);
}

/* ------------------------------------------------------------------ */
/* Decoding                                                            */

/* Checks one value of `len` bytes at v against rule r and stores it in out;
 * `nth` is how many fields of this rule came before it. */
static int take_value(struct iso_wire_msg *out, const struct rule *r, uint32_t nth,
		      const uint8_t *v, uint32_t len, unsigned index, char *why, size_t why_size)
{
	const char *name = field_name(r->tag);
	static const uint32_t sizes[] = { [K_U32] = 4,    [K_I32] = 4,    [K_U64] = 8,
					  [K_LIMIT] = 12, [K_USAGE] = 32, [K_CGROUP] = 20 };

	if (r->kind == K_STR) {
		if (len == 0)
			return iso_why(why, why_size, EBADMSG,
				       "field %u (%s): empty string (length 0)", index, name);
		if (len > r->max)
			return iso_why(why, why_size, EBADMSG,
				       "field %u (%s): string of %u bytes, at most %u", index, name,
				       len, r->max);
		if (v[len - 1] != '\0')
			return iso_why(why, why_size, EBADMSG,
				       "field %u (%s): string not NUL-terminated", index, name);
		if (memchr(v, '\0', len - 1) != NULL)
			return iso_why(why, why_size, EBADMSG,
				       "field %u (%s): string with an interior NUL", index, name);
		if (r->absolute && v[0] != '/')
			return iso_why(why, why_size, EBADMSG,
				       "field %u (%s): path does not start with '/'", index, name);
		if (r->absolute && iso_control_byte((const char *)v, len - 1))
			return iso_why(why, why_size, EBADMSG,
				       "field %u (%s): path with the control byte 0x%02x", index,
				       name, iso_control_byte((const char *)v, len - 1));
		if (r->max_count > 1) {
			AT(out, r->off, str_ptr)[nth] = (const char *)v;
			*AT(out, r->count_off, uint32_t) = nth + 1;
		} else {
			*AT(out, r->off, str_ptr) = (const char *)v;
		}
		return 0;
	}
	if (len != sizes[r->kind])
		return iso_why(why, why_size, EBADMSG, "field %u (%s): length %u, expected %u",
			       index, name, len, sizes[r->kind]);
	if (r->kind == K_U32 || r->kind == K_I32) {
		uint32_t x = get32(v);
		if (x < r->min || x > r->max)
			return iso_why(why, why_size, EBADMSG,
				       "field %u (%s): value %u out of range %u..%u", index, name,
				       x, r->min, r->max);
		if (r->kind == K_I32) {
			*AT(out, r->off, int32_t) = (int32_t)x;
		} else if (r->max_count > 1) {
			AT(out, r->off, uint32_t)[nth] = x;
			*AT(out, r->count_off, uint32_t) = nth + 1;
		} else {
			*AT(out, r->off, uint32_t) = x;
		}
	} else if (r->kind == K_U64) {
		*AT(out, r->off, uint64_t) = get64(v);
	} else if (r->kind == K_LIMIT) {
		uint32_t *set = AT(out, r->count_off, uint32_t);
		uint32_t which = get32(v);
		if (which >= ISO_LIMIT_COUNT)
			return iso_why(why, why_size, EBADMSG,
				       "field %u (LIMIT): unknown limit %u, at most %u", index,
				       which, (unsigned)ISO_LIMIT_COUNT - 1);
		if (*set & 1u << which)
			return iso_why(why, why_size, EBADMSG,
				       "field %u (LIMIT): limit %u given twice", index, which);
		*set |= 1u << which;
		AT(out, r->off, uint64_t)[which] = get64(v + 4);
	} else if (r->kind == K_CGROUP) {
		struct iso_wire_exited *e = &out->u.exited;
		e->cgroup = 1;
		e->cg_cpu_us = get64(v);
		e->cg_memory_peak = get64(v + 8);
		e->reached = get32(v + 16);
		if (!cgroup_fits(e))
			return iso_why(why, why_size, EBADMSG,
				       "field %u (CGROUP): limits reached 0x%x, at most 0x%x",
				       index, e->reached, (1u << ISO_LIMIT_COUNT) - 1);
	} else {
		struct iso_wire_exited *e = &out->u.exited;
		e->wall_us = get64(v);
		e->user_us = get64(v + 8);
		e->sys_us = get64(v + 16);
		e->maxrss_kib = get64(v + 24);
	}
	return 0;
}

int iso_wire_decode(const uint8_t *buf, size_t len, struct iso_wire_msg *out, char *why,
		    size_t why_size)
{
	memset(out, 0, sizeof(*out));
	if (len < ISO_WIRE_HEADER_SIZE)
		return iso_why(why, why_size, EBADMSG,
			       "datagram of %zu bytes, shorter than the %d-byte header", len,
			       ISO_WIRE_HEADER_SIZE);
	if (len > ISO_WIRE_MAX)
		return iso_why(why, why_size, EBADMSG, "datagram of %zu bytes, at most %d", len,
			       ISO_WIRE_MAX);
	uint16_t magic = (uint16_t)(buf[0] | buf[1] << 8);
	if (magic != ISO_WIRE_MAGIC)
		return iso_why(why, why_size, EPROTONOSUPPORT, "bad magic 0x%04x, expected 0x%04x",
			       magic, ISO_WIRE_MAGIC);
	if (buf[2] != ISO_WIRE_VERSION)
		return iso_why(why, why_size, EPROTONOSUPPORT,
			       "protocol version %u, this side speaks %d", buf[2],
			       ISO_WIRE_VERSION);
	/* Only now is the id known to sit where this version puts it. */
	out->id = get32(buf + 4);
	uint8_t type = buf[3];
	if (type == 0 || type > ISO_MSG_TYPE_MAX)
		return iso_why(why, why_size, EBADMSG, "unknown message type %u", type);
	uint32_t body_len = get32(buf + 8);
	if (body_len != len - ISO_WIRE_HEADER_SIZE)
		return iso_why(why, why_size, EBADMSG,
			       "body_len %u, but %zu bytes follow the header", body_len,
			       len - ISO_WIRE_HEADER_SIZE);

	const struct schema *s = &schemas[type];
	uint32_t counts[MAX_RULES] = { 0 };
	out->type = type;
	for (size_t i = 0; i < s->nrules; i++)
		if (s->rules[i].kind == K_I32)
			*AT(out, s->rules[i].off, int32_t) = -1;

	size_t pos = ISO_WIRE_HEADER_SIZE;
	for (unsigned index = 1; pos < len; index++) {
		size_t left = len - pos;
		if (left < ISO_WIRE_FIELD_HEADER_SIZE)
			return iso_why(
			    why, why_size, EBADMSG,
			    "field %u: truncated field header (%zu bytes left, %d needed)", index,
			    left, ISO_WIRE_FIELD_HEADER_SIZE);
		uint16_t tag = (uint16_t)(buf[pos] | buf[pos + 1] << 8);
		uint32_t flen = get32(buf + pos + 2);
		pos += ISO_WIRE_FIELD_HEADER_SIZE;
		left -= ISO_WIRE_FIELD_HEADER_SIZE;

		const char *name = field_name(tag);
		if (name == NULL)
			return iso_why(why, why_size, EBADMSG, "field %u: unknown tag %u", index,
				       tag);
		const struct rule *r = find_rule(s, tag);
		if (r == NULL)
			return iso_why(why, why_size, EBADMSG, "field %u (%s): not allowed in %s",
				       index, name, s->name);
		if (flen > left)
			return iso_why(
			    why, why_size, EBADMSG,
			    "field %u (%s): length %u runs past the end (%zu bytes left)", index,
			    name, flen, left);
		uint32_t *count = &counts[r - s->rules];
		if (*count == r->max_count && r->max_count == 1)
			return iso_why(why, why_size, EBADMSG,
				       "field %u (%s): given more than once", index, name);
		if (*count == r->max_count)
			return iso_why(why, why_size, EBADMSG, "%s: %u %s fields, at most %u",
				       s->name, *count + 1, name, r->max_count);
		int rc = take_value(out, r, *count, buf + pos, flen, index, why, why_size);
		if (rc < 0)
			return rc;
		++*count;
		pos += flen;
	}
	for (size_t i = 0; i < s->nrules; i++)
		if (counts[i] < s->rules[i].min_count)
			return iso_why(why, why_size, EBADMSG, "%s: required field %s missing",
				       s->name, field_name(s->rules[i].tag));
	if (type == ISO_MSG_EXITED && !reason_fits(&out->u.exited))
		return iso_why(why, why_size, EBADMSG,
			       "EXITED: a MESSAGE with outcome %u, not FAILED",
			       out->u.exited.outcome);
	if (type == ISO_MSG_PLAN && !grants_fit(&out->u.plan))
		return iso_why(why, why_size, EBADMSG,
			       "PLAN: GRANT_WRITE names a grant beyond its %u",
			       out->u.plan.ngrants);
	return 0;
}
