/*
 * unit_wire.c - the wire codec (common/wire.c), no privilege needed.
 *
 * Malformed datagrams are built byte by byte here, independently of the
 * encoder, so a shared misunderstanding cannot hide in both directions.
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "wire.h"

static uint8_t raw[ISO_WIRE_MAX + 256];
static size_t raw_len;
static struct iso_wire_msg decoded, again, m;
static uint8_t enc1[ISO_WIRE_MAX], enc2[ISO_WIRE_MAX];
static char why[512];
static char strpool[8][ISO_WIRE_RULE_MAX + 2]; /* the largest string cap */

/* ------------------------------------------------------------------ */
/* Raw datagram builder                                                */

static void raw_bytes(const void *p, size_t n)
{
	ck_assert_uint_le(raw_len + n, sizeof(raw));
	memcpy(raw + raw_len, p, n);
	raw_len += n;
}

static void raw_le(uint64_t v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		raw[raw_len++] = (uint8_t)(v >> (8 * i));
}

static void raw_header(uint16_t magic, uint8_t version, uint8_t type, uint32_t id)
{
	raw_len = 0;
	raw_le(magic, 2);
	raw_le(version, 1);
	raw_le(type, 1);
	raw_le(id, 4);
	raw_le(0, 4);
}

static void raw_start(uint8_t type)
{
	raw_header(ISO_WIRE_MAGIC, ISO_WIRE_VERSION, type, 77);
}

static void raw_field(uint16_t tag, uint32_t len, const void *value, size_t n)
{
	raw_le(tag, 2);
	raw_le(len, 4);
	raw_bytes(value, n);
}

static void raw_str(uint16_t tag, const char *s)
{
	raw_field(tag, (uint32_t)strlen(s) + 1, s, strlen(s) + 1);
}

static void raw_u32(uint16_t tag, uint32_t v)
{
	raw_le(tag, 2);
	raw_le(4, 4);
	raw_le(v, 4);
}

static void raw_u64(uint16_t tag, uint64_t v)
{
	raw_le(tag, 2);
	raw_le(8, 4);
	raw_le(v, 8);
}

static void raw_limit(uint32_t which, uint64_t v)
{
	raw_le(ISO_F_LIMIT, 2);
	raw_le(12, 4);
	raw_le(which, 4);
	raw_le(v, 8);
}

/* A valid instance of any field. */
static void raw_valid(uint16_t tag)
{
	switch (tag) {
	case ISO_F_PROGRAM:
	case ISO_F_READ_PATH:
	case ISO_F_WRITE_PATH:
	case ISO_F_GRANT:
	case ISO_F_CWD:
	case ISO_F_FILE:
		raw_str(tag, "/usr/bin/true");
		break;
	case ISO_F_TEXT:
		raw_str(tag, "rule user:#1 {\n}");
		break;
	case ISO_F_START_TICKS:
	case ISO_F_STARTED:
		raw_u64(tag, 5000);
		break;
	case ISO_F_GRANT_WRITE: /* valid without a grant */
		raw_u64(tag, 0);
		break;
	case ISO_F_ARG:
		raw_str(tag, "true");
		break;
	case ISO_F_FORWARD:
		raw_str(tag, "LANG=C.UTF-8");
		break;
	case ISO_F_OVERRIDE:
	case ISO_F_ENV:
		raw_str(tag, "HOME=/tmp");
		break;
	case ISO_F_MESSAGE:
	case ISO_F_NOTES:
		raw_str(tag, "some text");
		break;
	case ISO_F_LIMIT:
		raw_limit(ISO_LIMIT_NOFILE, 64);
		break;
	case ISO_F_TIMEOUT_MS:
	case ISO_F_WAIT_SLOT_MS:
		raw_u64(tag, 5000);
		break;
	case ISO_F_USAGE:
		raw_le(tag, 2);
		raw_le(32, 4);
		for (int i = 1; i <= 4; i++)
			raw_le((uint64_t)i, 8);
		break;
	case ISO_F_CGROUP:
		raw_le(tag, 2);
		raw_le(20, 4);
		raw_le(1, 8);
		raw_le(2, 8);
		raw_le(1u << ISO_LIMIT_PIDS, 4);
		break;
	case ISO_F_PASS_FD:
		raw_u32(tag, 3);
		break;
	default: /* every other u32 field accepts 1 */
		raw_u32(tag, 1);
		break;
	}
}

static const uint16_t required_tags[ISO_MSG_TYPE_MAX + 1][6] = {
	[ISO_MSG_HELLO] = { ISO_F_LANDLOCK_ABI },
	[ISO_MSG_SPAWN] = { ISO_F_PROGRAM, ISO_F_ARG },
	[ISO_MSG_KILL] = { ISO_F_SIGNAL },
	[ISO_MSG_SPAWNED] = { ISO_F_PID, ISO_F_UID },
	[ISO_MSG_REFUSED] = { ISO_F_ERRNO, ISO_F_MESSAGE },
	[ISO_MSG_EXITED] = { ISO_F_OUTCOME, ISO_F_CODE },
	[ISO_MSG_GUEST] = { ISO_F_PROGRAM, ISO_F_PID, ISO_F_UID, ISO_F_CALLER, ISO_F_HELPER },
	[ISO_MSG_STOP] = { ISO_F_UID },
	[ISO_MSG_RULE_TEXT] = { ISO_F_FILE, ISO_F_LINE, ISO_F_TEXT },
	[ISO_MSG_PLAN] = { ISO_F_UID, ISO_F_PROGRAM, ISO_F_ARG },
	[ISO_MSG_CLONED] = { ISO_F_PID },
	[ISO_MSG_WAIT] = { ISO_F_WAIT_SLOT_MS },
};

/* Header plus every required field of `type` except `skip`. */
static void raw_required_except(uint8_t type, uint16_t skip)
{
	raw_start(type);
	for (int i = 0; i < 6 && required_tags[type][i] != 0; i++)
		if (required_tags[type][i] != skip)
			raw_valid(required_tags[type][i]);
}

static void raw_set_body_len(uint32_t body_len)
{
	for (int i = 0; i < 4; i++)
		raw[8 + i] = (uint8_t)(body_len >> (8 * i));
}

static int raw_decode(void)
{
	raw_set_body_len((uint32_t)(raw_len - ISO_WIRE_HEADER_SIZE));
	why[0] = '\0';
	return iso_wire_decode(raw, raw_len, &decoded, why, sizeof(why));
}

#define ck_assert_why(substr)                                                                    \
	ck_assert_msg(strstr(why, substr) != NULL, "reason \"%s\" does not contain \"%s\"", why, \
		      substr)

static void expect_refused(int rc, const char *substr)
{
	ck_assert_int_eq(rc, -EBADMSG);
	ck_assert_why(substr);
}

/* A string of `chars` bytes plus NUL, in one of a few static slots. */
static const char *make_str(int slot, size_t chars, char first)
{
	char *s = strpool[slot];
	ck_assert_uint_lt(chars, sizeof(strpool[slot]));
	memset(s, 'x', chars);
	if (chars > 0)
		s[0] = first;
	s[chars] = '\0';
	return s;
}

/* ------------------------------------------------------------------ */
/* Messages for the encoder                                            */

static void valid_msg(uint8_t type, struct iso_wire_msg *msg)
{
	memset(msg, 0, sizeof(*msg));
	msg->type = type;
	msg->id = 42;
	switch (type) {
	case ISO_MSG_HELLO:
		msg->u.hello.landlock_abi = 7;
		break;
	case ISO_MSG_SPAWN:
		msg->u.spawn.program = "/usr/bin/true";
		msg->u.spawn.argv[0] = "true";
		msg->u.spawn.argc = 1;
		break;
	case ISO_MSG_KILL:
		msg->u.kill.signal = 15;
		break;
	case ISO_MSG_SPAWNED:
		msg->u.spawned.pid = 1234;
		msg->u.spawned.uid = 60001;
		break;
	case ISO_MSG_REFUSED:
		msg->u.refused.err = EACCES;
		msg->u.refused.message = "refused";
		break;
	case ISO_MSG_EXITED:
		msg->u.exited.outcome = ISO_OUTCOME_EXITED;
		msg->u.exited.limit_hit = -1;
		break;
	case ISO_MSG_GUEST:
		msg->u.guest.program = "/usr/bin/python3";
		msg->u.guest.pid = 4321;
		msg->u.guest.uid = 1900000007;
		msg->u.guest.caller = 1000;
		msg->u.guest.helper = 4000;
		break;
	case ISO_MSG_STOP:
		msg->u.stop.uid = 1900000007;
		break;
	case ISO_MSG_RULE_TEXT:
		msg->u.rule_text.file = "/etc/isospawn.conf";
		msg->u.rule_text.line = 34;
		msg->u.rule_text.text = "rule group:isospawn {\n\tpool 1-2\n}";
		break;
	case ISO_MSG_PLAN:
		msg->u.plan.uid = 1900000007;
		msg->u.plan.program = "/usr/bin/true";
		msg->u.plan.argv[0] = "true";
		msg->u.plan.argc = 1;
		break;
	case ISO_MSG_CLONED:
		msg->u.cloned.pid = 4242;
		break;
	case ISO_MSG_WAIT:
		msg->u.wait.ms = 60000;
		break;
	}
}

static void assert_strv(const char *const *want, uint32_t nwant, const char *const *got,
			uint32_t ngot)
{
	ck_assert_uint_eq(nwant, ngot);
	for (uint32_t i = 0; i < nwant; i++)
		ck_assert_str_eq(want[i], got[i]);
	ck_assert_ptr_null(got[ngot]);
}

static void assert_u32v(const uint32_t *want, uint32_t nwant, const uint32_t *got, uint32_t ngot)
{
	ck_assert_uint_eq(nwant, ngot);
	for (uint32_t i = 0; i < nwant; i++)
		ck_assert_uint_eq(want[i], got[i]);
}

static void assert_same(const struct iso_wire_msg *a, const struct iso_wire_msg *b)
{
	ck_assert_uint_eq(a->type, b->type);
	ck_assert_uint_eq(a->id, b->id);
	switch (a->type) {
	case ISO_MSG_SPAWN: {
		const struct iso_wire_spawn *x = &a->u.spawn, *y = &b->u.spawn;
		ck_assert_str_eq(x->program, y->program);
		assert_strv(x->argv, x->argc, y->argv, y->argc);
		assert_strv(x->forward, x->nforward, y->forward, y->nforward);
		assert_strv(x->overrides, x->noverrides, y->overrides, y->noverrides);
		assert_strv(x->read_paths, x->nread, y->read_paths, y->nread);
		assert_strv(x->write_paths, x->nwrite, y->write_paths, y->nwrite);
		ck_assert_uint_eq(x->limits_set, y->limits_set);
		for (int i = 0; i < ISO_LIMIT_COUNT; i++)
			if (x->limits_set & 1u << i)
				ck_assert_uint_eq(x->limits[i], y->limits[i]);
		ck_assert_uint_eq(x->timeout_ms, y->timeout_ms);
		ck_assert_uint_eq(x->network, y->network);
		ck_assert_uint_eq(x->channel, y->channel);
		ck_assert_uint_eq(x->stdio_mask, y->stdio_mask);
		ck_assert_pstr_eq(x->cwd, y->cwd);
		ck_assert_uint_eq(x->wait_slot_ms, y->wait_slot_ms);
		assert_u32v(x->pass_fds, x->npass, y->pass_fds, y->npass);
		break;
	}
	case ISO_MSG_PLAN: {
		const struct iso_wire_plan *x = &a->u.plan, *y = &b->u.plan;
		ck_assert_uint_eq(x->uid, y->uid);
		ck_assert_str_eq(x->program, y->program);
		assert_strv(x->argv, x->argc, y->argv, y->argc);
		assert_strv(x->envp, x->nenv, y->envp, y->nenv);
		ck_assert_uint_eq(x->limits_set, y->limits_set);
		for (int i = 0; i < ISO_LIMIT_COUNT; i++)
			if (x->limits_set & 1u << i)
				ck_assert_uint_eq(x->limits[i], y->limits[i]);
		ck_assert_uint_eq(x->timeout_ms, y->timeout_ms);
		ck_assert_uint_eq(x->network, y->network);
		assert_strv(x->grants, x->ngrants, y->grants, y->ngrants);
		ck_assert_uint_eq(x->grants_write, y->grants_write);
		ck_assert_pstr_eq(x->cwd, y->cwd);
		ck_assert_uint_eq(x->channel, y->channel);
		ck_assert_uint_eq(x->stdio_mask, y->stdio_mask);
		assert_u32v(x->pass_fds, x->npass, y->pass_fds, y->npass);
		break;
	}
	case ISO_MSG_CLONED:
		ck_assert_uint_eq(a->u.cloned.pid, b->u.cloned.pid);
		break;
	case ISO_MSG_KILL:
		ck_assert_uint_eq(a->u.kill.signal, b->u.kill.signal);
		break;
	case ISO_MSG_HELLO:
		ck_assert_uint_eq(a->u.hello.landlock_abi, b->u.hello.landlock_abi);
		ck_assert_uint_eq(a->u.hello.err, b->u.hello.err);
		ck_assert_pstr_eq(a->u.hello.message, b->u.hello.message);
		break;
	case ISO_MSG_SPAWNED:
		ck_assert_uint_eq(a->u.spawned.pid, b->u.spawned.pid);
		ck_assert_uint_eq(a->u.spawned.uid, b->u.spawned.uid);
		ck_assert_pstr_eq(a->u.spawned.notes, b->u.spawned.notes);
		break;
	case ISO_MSG_REFUSED:
		ck_assert_uint_eq(a->u.refused.err, b->u.refused.err);
		ck_assert_str_eq(a->u.refused.message, b->u.refused.message);
		break;
	case ISO_MSG_EXITED: {
		const struct iso_wire_exited *x = &a->u.exited, *y = &b->u.exited;
		ck_assert_uint_eq(x->outcome, y->outcome);
		ck_assert_uint_eq(x->code, y->code);
		ck_assert_uint_eq(x->stage, y->stage);
		ck_assert_int_eq(x->limit_hit, y->limit_hit);
		ck_assert_uint_eq(x->wall_us, y->wall_us);
		ck_assert_uint_eq(x->user_us, y->user_us);
		ck_assert_uint_eq(x->sys_us, y->sys_us);
		ck_assert_uint_eq(x->maxrss_kib, y->maxrss_kib);
		ck_assert_uint_eq(x->cgroup, y->cgroup);
		ck_assert_uint_eq(x->cg_cpu_us, y->cg_cpu_us);
		ck_assert_uint_eq(x->cg_memory_peak, y->cg_memory_peak);
		ck_assert_uint_eq(x->reached, y->reached);
		ck_assert_pstr_eq(x->reason, y->reason);
		break;
	}
	case ISO_MSG_GUEST: {
		const struct iso_wire_guest *x = &a->u.guest, *y = &b->u.guest;
		ck_assert_str_eq(x->program, y->program);
		ck_assert_uint_eq(x->caller, y->caller);
		ck_assert_uint_eq(x->helper, y->helper);
		ck_assert_uint_eq(x->pid, y->pid);
		ck_assert_uint_eq(x->uid, y->uid);
		ck_assert_uint_eq(x->start_ticks, y->start_ticks);
		ck_assert_uint_eq(x->started_us, y->started_us);
		ck_assert_uint_eq(x->limits_set, y->limits_set);
		for (int i = 0; i < ISO_LIMIT_COUNT; i++)
			if (x->limits_set & 1u << i)
				ck_assert_uint_eq(x->limits[i], y->limits[i]);
		ck_assert_uint_eq(x->timeout_ms, y->timeout_ms);
		ck_assert_uint_eq(x->network, y->network);
		break;
	}
	case ISO_MSG_STOP:
		ck_assert_uint_eq(a->u.stop.uid, b->u.stop.uid);
		ck_assert_uint_eq(a->u.stop.pid, b->u.stop.pid);
		break;
	case ISO_MSG_RULE_TEXT:
		ck_assert_str_eq(a->u.rule_text.file, b->u.rule_text.file);
		ck_assert_uint_eq(a->u.rule_text.line, b->u.rule_text.line);
		ck_assert_str_eq(a->u.rule_text.text, b->u.rule_text.text);
		break;
	case ISO_MSG_WAIT:
		ck_assert_uint_eq(a->u.wait.ms, b->u.wait.ms);
		break;
	case ISO_MSG_LIST:
	case ISO_MSG_RULE:
	case ISO_MSG_DONE:
	case ISO_MSG_CLONE:
	case ISO_MSG_CHANNEL:
		break;
	default:
		ck_abort_msg("unknown type %u", a->type);
	}
}

/* decode(encode(msg)) == msg and encode(decode(bytes)) == bytes. */
static long assert_round_trip(const struct iso_wire_msg *msg)
{
	long n = iso_wire_encode(msg, enc1, sizeof(enc1));
	ck_assert_int_gt(n, 0);
	int rc = iso_wire_decode(enc1, (size_t)n, &decoded, why, sizeof(why));
	ck_assert_msg(rc == 0, "decode failed (%d): %s", rc, why);
	assert_same(msg, &decoded);
	long n2 = iso_wire_encode(&decoded, enc2, sizeof(enc2));
	ck_assert_int_eq(n2, n);
	ck_assert_int_eq(memcmp(enc1, enc2, (size_t)n), 0);
	return n;
}

/* ------------------------------------------------------------------ */
/* Round trips                                                         */

START_TEST(round_trip_guest_every_field)
{
	valid_msg(ISO_MSG_GUEST, &m);
	ck_assert_int_gt(assert_round_trip(&m), 0);
	m.u.guest.start_ticks = 123456789;
	m.u.guest.started_us = UINT64_C(1796000000000000);
	m.u.guest.limits_set = (1u << ISO_LIMIT_COUNT) - 1;
	for (int i = 0; i < ISO_LIMIT_COUNT; i++)
		m.u.guest.limits[i] = i == ISO_LIMIT_AS ? UINT64_MAX : (uint64_t)i + 1;
	m.u.guest.timeout_ms = 60000;
	m.u.guest.network = ISO_NETWORK_NONE;
	ck_assert_int_gt(assert_round_trip(&m), 0);
}
END_TEST

START_TEST(round_trip_stop_with_and_without_pid)
{
	valid_msg(ISO_MSG_STOP, &m);
	ck_assert_int_eq(assert_round_trip(&m), 12 + 10);
	m.u.stop.pid = 777;
	ck_assert_int_eq(assert_round_trip(&m), 12 + 10 + 10);
}
END_TEST

START_TEST(round_trip_rule_text)
{
	valid_msg(ISO_MSG_RULE_TEXT, &m);
	ck_assert_int_gt(assert_round_trip(&m), 0);
	/* A whole policy file's worth: the largest a rule can be. */
	m.u.rule_text.text = make_str(0, ISO_WIRE_RULE_MAX - 1, 'r');
	ck_assert_int_gt(assert_round_trip(&m), ISO_WIRE_RULE_MAX);
}
END_TEST

START_TEST(round_trip_messages_without_fields)
{
	static const uint8_t types[] = { ISO_MSG_LIST, ISO_MSG_RULE, ISO_MSG_DONE, ISO_MSG_CLONE,
					 ISO_MSG_CHANNEL };

	for (size_t i = 0; i < sizeof(types); i++) {
		valid_msg(types[i], &m);
		ck_assert_int_eq(assert_round_trip(&m), ISO_WIRE_HEADER_SIZE);
	}
}
END_TEST

START_TEST(round_trip_wait_for_a_connection)
{
	valid_msg(ISO_MSG_WAIT, &m);
	ck_assert_int_eq(assert_round_trip(&m), 12 + 14);
	m.u.wait.ms = UINT64_MAX;
	ck_assert_int_eq(assert_round_trip(&m), 12 + 14);
	/* Required: written even when 0, which the decoder then reads. */
	m.u.wait.ms = 0;
	ck_assert_int_eq(assert_round_trip(&m), 12 + 14);
}
END_TEST

START_TEST(round_trip_hello_ready_and_refusing)
{
	valid_msg(ISO_MSG_HELLO, &m);
	assert_round_trip(&m);
	m.u.hello.landlock_abi = 255;
	m.u.hello.err = 4095;
	m.u.hello.message = make_str(0, ISO_WIRE_TEXT_MAX - 1, 'm');
	assert_round_trip(&m);
}
END_TEST

START_TEST(round_trip_spawn_every_field)
{
	valid_msg(ISO_MSG_SPAWN, &m);
	struct iso_wire_spawn *s = &m.u.spawn;
	s->argv[1] = "-c";
	s->argv[2] = "";
	s->argc = 3;
	s->forward[0] = "LANG=C.UTF-8";
	s->forward[1] = "TMPDIR=/tmp";
	s->nforward = 2;
	s->overrides[0] = "HOME=/nonexistent";
	s->overrides[1] = "A=";
	s->noverrides = 2;
	for (int i = 0; i < ISO_LIMIT_COUNT; i++)
		s->limits[i] = (uint64_t)i * 1000 + 1;
	s->limits_set = (1u << ISO_LIMIT_COUNT) - 1;
	s->timeout_ms = 30000;
	s->network = ISO_NETWORK_NONE;
	s->read_paths[0] = "/usr";
	s->read_paths[1] = "/etc/ssl";
	s->nread = 2;
	s->write_paths[0] = "/tmp/job";
	s->nwrite = 1;
	s->channel = 1;
	s->stdio_mask = 5;
	s->cwd = "/tmp/job";
	s->wait_slot_ms = 2500;
	s->pass_fds[0] = 9;
	s->pass_fds[1] = 3;
	s->pass_fds[2] = ISO_PASS_FD_LIMIT - 1;
	s->npass = 3;
	assert_round_trip(&m);
	ck_assert_uint_eq(decoded.u.spawn.pass_fds[0], 9); /* in the order given */
}
END_TEST

/* The reaper's whole guest: every value the helper decided, grants in
 * their order with which of them are writable. */
START_TEST(round_trip_plan_every_field)
{
	valid_msg(ISO_MSG_PLAN, &m);
	assert_round_trip(&m);
	struct iso_wire_plan *p = &m.u.plan;
	p->argv[1] = "-c";
	p->argc = 2;
	p->envp[0] = "PATH=/usr/bin:/bin";
	p->envp[1] = "TMPDIR=/tmp";
	p->envp[2] = "ISOSPAWN_CHANNEL_FD=3";
	p->nenv = 3;
	for (int i = 0; i < ISO_LIMIT_COUNT; i++)
		p->limits[i] = i == ISO_LIMIT_AS ? UINT64_MAX : (uint64_t)i + 7;
	p->limits_set = (1u << ISO_LIMIT_COUNT) - 1;
	p->timeout_ms = 60000;
	p->network = ISO_NETWORK_NONE;
	p->grants[0] = "/srv/data";
	p->grants[1] = "/srv/data/out";
	p->grants[2] = "/srv/z";
	p->ngrants = 3;
	p->grants_write = 0x2;
	p->cwd = "/srv/data/out";
	p->channel = ISO_CHANNEL_STREAM;
	p->stdio_mask = 7;
	p->pass_fds[0] = 5;
	p->npass = 1;
	assert_round_trip(&m);
	for (uint32_t i = 0; i < 2 * ISO_PATHS_MAX; i++)
		p->grants[i] = "/g";
	p->ngrants = 2 * ISO_PATHS_MAX;
	p->grants_write = UINT64_MAX;
	for (uint32_t i = 0; i < ISO_WIRE_ENV_MAX; i++)
		p->envp[i] = "X=1";
	p->nenv = ISO_WIRE_ENV_MAX;
	assert_round_trip(&m);
}
END_TEST

START_TEST(round_trip_cloned)
{
	valid_msg(ISO_MSG_CLONED, &m);
	ck_assert_int_eq(assert_round_trip(&m), ISO_WIRE_HEADER_SIZE + 10);
}
END_TEST

/* GRANT_WRITE says which grants are writable: a bit past the last one
 * is refused both ways, so no grant is writable by accident. */
START_TEST(plan_refuses_a_write_bit_without_its_grant)
{
	valid_msg(ISO_MSG_PLAN, &m);
	m.u.plan.grants[0] = "/a";
	m.u.plan.ngrants = 1;
	m.u.plan.grants_write = 0x2;
	ck_assert_int_eq(iso_wire_encode(&m, enc1, sizeof(enc1)), -EINVAL);
	raw_required_except(ISO_MSG_PLAN, 0);
	raw_str(ISO_F_GRANT, "/a");
	raw_u64(ISO_F_GRANT_WRITE, 3);
	expect_refused(raw_decode(), "PLAN: GRANT_WRITE names a grant beyond its 1");
	raw_required_except(ISO_MSG_PLAN, 0);
	raw_str(ISO_F_GRANT, "/a");
	raw_u64(ISO_F_GRANT_WRITE, 1);
	ck_assert_int_eq(raw_decode(), 0);
	ck_assert_uint_eq(decoded.u.plan.grants_write, 1);
}
END_TEST

START_TEST(round_trip_spawn_maximum_counts)
{
	static char args[ISO_ARGS_MAX][16];
	valid_msg(ISO_MSG_SPAWN, &m);
	struct iso_wire_spawn *s = &m.u.spawn;
	for (int i = 0; i < ISO_ARGS_MAX; i++) {
		snprintf(args[i], sizeof(args[i]), "arg%d", i);
		s->argv[i] = args[i];
	}
	s->argc = ISO_ARGS_MAX;
	for (int i = 0; i < ISO_WIRE_FORWARD_MAX; i++)
		s->forward[i] = "LANG=C";
	s->nforward = ISO_WIRE_FORWARD_MAX;
	for (int i = 0; i < ISO_ENV_OVERRIDES_MAX; i++)
		s->overrides[i] = "X=1";
	s->noverrides = ISO_ENV_OVERRIDES_MAX;
	for (int i = 0; i < ISO_PATHS_MAX; i++) {
		s->read_paths[i] = "/r";
		s->write_paths[i] = "/w";
	}
	s->nread = s->nwrite = ISO_PATHS_MAX;
	for (int i = 0; i < ISO_LIMIT_COUNT; i++)
		s->limits[i] = UINT64_MAX;
	s->limits_set = (1u << ISO_LIMIT_COUNT) - 1;
	s->timeout_ms = UINT64_MAX;
	s->network = ISO_NETWORK_HOST;
	s->channel = 1;
	s->stdio_mask = 7;
	s->wait_slot_ms = UINT64_MAX;
	assert_round_trip(&m);
	ck_assert_str_eq(decoded.u.spawn.argv[ISO_ARGS_MAX - 1], "arg1023");
}
END_TEST

START_TEST(round_trip_spawn_maximum_string_lengths)
{
	valid_msg(ISO_MSG_SPAWN, &m);
	struct iso_wire_spawn *s = &m.u.spawn;
	s->program = make_str(0, ISO_WIRE_PATH_MAX - 1, '/');
	s->argv[0] = make_str(1, ISO_WIRE_STR_MAX - 1, 'a');
	s->forward[0] = make_str(2, ISO_WIRE_STR_MAX - 1, 'F');
	s->nforward = 1;
	s->overrides[0] = make_str(3, ISO_WIRE_STR_MAX - 1, 'O');
	s->noverrides = 1;
	s->read_paths[0] = make_str(4, ISO_WIRE_PATH_MAX - 1, '/');
	s->nread = 1;
	s->write_paths[0] = make_str(5, ISO_WIRE_PATH_MAX - 1, '/');
	s->nwrite = 1;
	assert_round_trip(&m);
}
END_TEST

START_TEST(round_trip_kill)
{
	valid_msg(ISO_MSG_KILL, &m);
	m.u.kill.signal = 1;
	assert_round_trip(&m);
	m.u.kill.signal = 64;
	assert_round_trip(&m);
}
END_TEST

START_TEST(round_trip_spawned_with_and_without_notes)
{
	valid_msg(ISO_MSG_SPAWNED, &m);
	m.u.spawned.pid = UINT32_MAX;
	m.u.spawned.uid = 0;
	assert_round_trip(&m);
	m.u.spawned.notes = make_str(0, ISO_WIRE_TEXT_MAX - 1, 'n');
	assert_round_trip(&m);
}
END_TEST

START_TEST(round_trip_refused)
{
	valid_msg(ISO_MSG_REFUSED, &m);
	m.u.refused.err = 1;
	assert_round_trip(&m);
	m.u.refused.err = 4095;
	m.u.refused.message = make_str(0, ISO_WIRE_TEXT_MAX - 1, 'r');
	assert_round_trip(&m);
}
END_TEST

START_TEST(round_trip_exited_every_field)
{
	valid_msg(ISO_MSG_EXITED, &m);
	struct iso_wire_exited *e = &m.u.exited;
	e->outcome = ISO_OUTCOME_LIMIT;
	e->code = 9;
	e->stage = ISO_STAGE_EXEC;
	e->limit_hit = ISO_LIMIT_STACK;
	e->wall_us = UINT64_MAX;
	e->user_us = 2;
	e->sys_us = 3;
	e->maxrss_kib = 0x0102030405060708ull;
	assert_round_trip(&m);
	e->cgroup = 1;
	e->cg_cpu_us = UINT64_MAX;
	e->cg_memory_peak = 0x1112131415161718ull;
	e->reached = 1u << ISO_LIMIT_PIDS;
	assert_round_trip(&m);
	e->outcome = ISO_OUTCOME_FAILED;
	e->code = UINT32_MAX;
	e->limit_hit = ISO_LIMIT_CPU;
	assert_round_trip(&m);
	e->reason = "landlock: /data/in: No such file or directory";
	assert_round_trip(&m);
	e->reason = make_str(0, ISO_WIRE_TEXT_MAX - 1, 'r');
	assert_round_trip(&m);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Encoder specifics                                                   */

START_TEST(encode_kill_exact_bytes)
{
	static const uint8_t want[] = {
		0x49, 0x53, 0x01, 0x03, 0x04, 0x03, 0x02, 0x01, 0x0a, 0x00, 0x00,
		0x00, 0x14, 0x00, 0x04, 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00,
	};
	valid_msg(ISO_MSG_KILL, &m);
	m.id = 0x01020304;
	m.u.kill.signal = 9;
	ck_assert_int_eq(iso_wire_encode(&m, enc1, sizeof(enc1)), sizeof(want));
	ck_assert_int_eq(memcmp(enc1, want, sizeof(want)), 0);
}
END_TEST

START_TEST(encode_omits_absent_optional_fields)
{
	valid_msg(ISO_MSG_SPAWN, &m); /* PROGRAM "/usr/bin/true", ARG "true" */
	ck_assert_int_eq(iso_wire_encode(&m, enc1, sizeof(enc1)), 12 + 6 + 14 + 6 + 5);
	valid_msg(ISO_MSG_EXITED, &m); /* stage NONE, limit_hit -1, usage 0 */
	ck_assert_int_eq(iso_wire_encode(&m, enc1, sizeof(enc1)), 12 + 10 + 10);
	valid_msg(ISO_MSG_HELLO, &m); /* err 0, message NULL */
	ck_assert_int_eq(iso_wire_encode(&m, enc1, sizeof(enc1)), 12 + 10);
}
END_TEST

/* Each case turns a valid message into one the decoder would refuse. */
static const char *break_msg(int i, struct iso_wire_msg *msg)
{
	struct iso_wire_spawn *s = &msg->u.spawn;
	static const uint8_t types[] = {
		0,
		0,
		ISO_MSG_SPAWN,
		ISO_MSG_SPAWN,
		ISO_MSG_SPAWN,
		ISO_MSG_SPAWN,
		ISO_MSG_SPAWN,
		ISO_MSG_SPAWN,
		ISO_MSG_SPAWN,
		ISO_MSG_SPAWN,
		ISO_MSG_SPAWN,
		ISO_MSG_SPAWN,
		ISO_MSG_SPAWN,
		ISO_MSG_SPAWN,
		ISO_MSG_SPAWN,
		ISO_MSG_SPAWN,
		ISO_MSG_SPAWN,
		ISO_MSG_SPAWN,
		ISO_MSG_SPAWN,
		ISO_MSG_KILL,
		ISO_MSG_KILL,
		ISO_MSG_HELLO,
		ISO_MSG_HELLO,
		ISO_MSG_HELLO,
		ISO_MSG_SPAWNED,
		ISO_MSG_REFUSED,
		ISO_MSG_REFUSED,
		ISO_MSG_REFUSED,
		ISO_MSG_EXITED,
		ISO_MSG_EXITED,
		ISO_MSG_EXITED,
		ISO_MSG_EXITED,
		ISO_MSG_EXITED,
		ISO_MSG_SPAWN,
		ISO_MSG_SPAWN,
		ISO_MSG_GUEST,
		ISO_MSG_GUEST,
		ISO_MSG_GUEST,
		ISO_MSG_GUEST,
		ISO_MSG_GUEST,
		ISO_MSG_RULE_TEXT,
		ISO_MSG_RULE_TEXT,
		ISO_MSG_RULE_TEXT,
		ISO_MSG_RULE_TEXT,
		ISO_MSG_EXITED,
		ISO_MSG_EXITED,
		ISO_MSG_SPAWN,
		ISO_MSG_SPAWN,
	};
	valid_msg(types[i] ? types[i] : ISO_MSG_KILL, msg);
	ck_assert_int_gt(iso_wire_encode(msg, enc1, sizeof(enc1)), 0);
	switch (i) {
	case 0:
		msg->type = 0;
		return "type 0";
	case 1:
		msg->type = ISO_MSG_TYPE_MAX + 1;
		return "type past the last";
	case 2:
		s->argc = 0;
		return "argc 0";
	case 3:
		s->argc = ISO_ARGS_MAX + 1;
		return "argc 1025";
	case 4:
		s->program = NULL;
		return "NULL program";
	case 5:
		s->program = "usr/bin/true";
		return "relative program";
	case 6:
		s->program = make_str(0, ISO_WIRE_PATH_MAX, '/');
		return "program 4097 bytes";
	case 7:
		s->argv[0] = NULL;
		return "NULL argv[0]";
	case 8:
		s->argv[0] = make_str(0, ISO_WIRE_STR_MAX, 'a');
		return "arg over ISO_WIRE_STR_MAX";
	case 9:
		s->nforward = ISO_WIRE_FORWARD_MAX + 1;
		return "17 forward";
	case 10:
		s->noverrides = ISO_ENV_OVERRIDES_MAX + 1;
		return "129 overrides";
	case 11:
		s->nread = ISO_PATHS_MAX + 1;
		return "33 read paths";
	case 12:
		s->nwrite = ISO_PATHS_MAX + 1;
		return "33 write paths";
	case 13:
		s->read_paths[0] = "tmp";
		s->nread = 1;
		return "relative read path";
	case 14:
		s->nforward = 1;
		return "NULL forward[0]";
	case 15:
		s->limits_set = 1u << ISO_LIMIT_COUNT;
		return "limit bit 6";
	case 16:
		s->network = ISO_NETWORK_HOST + 1;
		return "network 3";
	case 17:
		s->channel = ISO_CHANNEL_STREAM + 1;
		return "channel 3";
	case 18:
		s->stdio_mask = 8;
		return "stdio mask 8";
	case 19:
		msg->u.kill.signal = 0;
		return "signal 0";
	case 20:
		msg->u.kill.signal = 65;
		return "signal 65";
	case 21:
		msg->u.hello.landlock_abi = 256;
		return "landlock abi 256";
	case 22:
		msg->u.hello.err = 4096;
		return "hello err 4096";
	case 23:
		msg->u.hello.message = make_str(0, ISO_WIRE_TEXT_MAX, 'm');
		return "hello message over ISO_WIRE_TEXT_MAX";
	case 24:
		msg->u.spawned.notes = make_str(0, ISO_WIRE_TEXT_MAX, 'n');
		return "notes over ISO_WIRE_TEXT_MAX";
	case 25:
		msg->u.refused.err = 0;
		return "refused err 0";
	case 26:
		msg->u.refused.err = 4096;
		return "refused err 4096";
	case 27:
		msg->u.refused.message = NULL;
		return "refused NULL message";
	case 28:
		msg->u.exited.outcome = ISO_OUTCOME_RUNNING;
		return "outcome RUNNING";
	case 29:
		msg->u.exited.outcome = ISO_OUTCOME_FAILED + 1;
		return "outcome 6";
	case 30:
		msg->u.exited.stage = ISO_STAGE_EXEC + 1;
		return "stage 5";
	case 31:
		msg->u.exited.limit_hit = ISO_LIMIT_COUNT;
		return "limit_hit 6";
	case 32:
		msg->u.exited.limit_hit = -2;
		return "limit_hit -2";
	case 33:
		s->program = "/bin/a\nb";
		return "program with a newline";
	case 34:
		s->write_paths[0] = "/tmp/\x7f";
		s->nwrite = 1;
		return "write path with DEL";
	case 35:
		msg->u.guest.pid = 0;
		return "guest pid 0";
	case 36:
		msg->u.guest.program = "python3";
		return "relative guest program";
	case 37:
		msg->u.guest.limits_set = 1u << ISO_LIMIT_COUNT;
		return "guest limit bit 8";
	case 38:
		msg->u.guest.network = ISO_NETWORK_HOST + 1;
		return "guest network 3";
	case 39:
		msg->u.guest.helper = 0;
		return "guest helper 0";
	case 40:
		msg->u.rule_text.line = 0;
		return "rule line 0";
	case 41:
		msg->u.rule_text.text = make_str(0, ISO_WIRE_RULE_MAX, 't');
		return "rule text over ISO_WIRE_RULE_MAX";
	case 42:
		msg->u.rule_text.file = "isospawn.conf";
		return "relative rule file";
	case 43:
		msg->u.rule_text.text = NULL;
		return "NULL rule text";
	case 44:
		msg->u.exited.reason = "landlock: /x: No such file or directory";
		return "a reason with outcome EXITED";
	case 45:
		msg->u.exited.outcome = ISO_OUTCOME_FAILED;
		msg->u.exited.code = ENOTEMPTY;
		msg->u.exited.reason = make_str(0, ISO_WIRE_TEXT_MAX, 'r');
		return "reason over ISO_WIRE_TEXT_MAX";
	case 46:
		s->cwd = "tmp/job";
		return "relative cwd";
	case 47:
		s->cwd = make_str(0, ISO_WIRE_PATH_MAX, '/');
		return "cwd over ISO_WIRE_PATH_MAX";
	}
	ck_abort_msg("no case %d", i);
	return NULL;
}
#define BREAK_CASES 48

START_TEST(encode_refuses_what_the_decoder_refuses)
{
	const char *what = break_msg(_i, &m);
	long rc = iso_wire_encode(&m, enc1, sizeof(enc1));
	ck_assert_msg(rc == -EINVAL, "%s: encode returned %ld", what, rc);
}
END_TEST

START_TEST(encode_refuses_small_buffer)
{
	valid_msg(ISO_MSG_KILL, &m);
	ck_assert_int_eq(iso_wire_encode(&m, NULL, 0), -E2BIG);
	ck_assert_int_eq(iso_wire_encode(&m, enc1, 11), -E2BIG);
	ck_assert_int_eq(iso_wire_encode(&m, enc1, 21), -E2BIG);
	ck_assert_int_eq(iso_wire_encode(&m, enc1, 22), 22);
}
END_TEST

START_TEST(encode_invalid_wins_over_small_buffer)
{
	valid_msg(ISO_MSG_SPAWN, &m);
	m.u.spawn.argc = 0;
	ck_assert_int_eq(iso_wire_encode(&m, enc1, 4), -EINVAL);
}
END_TEST

/* Header, PROGRAM "/usr/bin/true", then ARG fields up to `total` bytes. */
static void spawn_of_size(size_t total)
{
	valid_msg(ISO_MSG_SPAWN, &m);
	size_t left = total - (12 + 6 + 14);
	uint32_t n = 0;
	while (left > 0) {
		size_t value = left - 6 < ISO_WIRE_STR_MAX ? left - 6 : ISO_WIRE_STR_MAX;
		m.u.spawn.argv[n] = make_str((int)n, value - 1, 'a');
		n++;
		left -= 6 + value;
	}
	m.u.spawn.argc = n;
}

START_TEST(encode_fills_exactly_iso_wire_max)
{
	static uint8_t big[2 * ISO_WIRE_MAX];
	spawn_of_size(ISO_WIRE_MAX);
	ck_assert_int_eq(iso_wire_encode(&m, big, sizeof(big)), ISO_WIRE_MAX);
	ck_assert_int_eq(iso_wire_decode(big, ISO_WIRE_MAX, &decoded, why, sizeof(why)), 0);
	assert_same(&m, &decoded);
}
END_TEST

START_TEST(encode_refuses_over_iso_wire_max)
{
	static uint8_t big[2 * ISO_WIRE_MAX];
	spawn_of_size(ISO_WIRE_MAX + 1);
	ck_assert_int_eq(iso_wire_encode(&m, big, sizeof(big)), -E2BIG);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Decoder: what it accepts                                            */

START_TEST(decode_fills_defaults_for_absent_fields)
{
	raw_required_except(ISO_MSG_EXITED, 0);
	ck_assert_int_eq(raw_decode(), 0);
	ck_assert_ptr_null(decoded.u.exited.reason);
	ck_assert_uint_eq(decoded.u.exited.stage, ISO_STAGE_NONE);
	ck_assert_int_eq(decoded.u.exited.limit_hit, -1);
	ck_assert_uint_eq(decoded.u.exited.wall_us | decoded.u.exited.user_us |
			      decoded.u.exited.sys_us | decoded.u.exited.maxrss_kib,
			  0);

	raw_required_except(ISO_MSG_HELLO, 0);
	ck_assert_int_eq(raw_decode(), 0);
	ck_assert_uint_eq(decoded.u.hello.err, 0);
	ck_assert_ptr_null(decoded.u.hello.message);

	raw_required_except(ISO_MSG_SPAWNED, 0);
	ck_assert_int_eq(raw_decode(), 0);
	ck_assert_ptr_null(decoded.u.spawned.notes);

	raw_required_except(ISO_MSG_SPAWN, 0);
	ck_assert_int_eq(raw_decode(), 0);
	const struct iso_wire_spawn *s = &decoded.u.spawn;
	ck_assert_uint_eq(s->argc, 1);
	ck_assert_ptr_null(s->argv[1]);
	ck_assert_uint_eq(s->nforward + s->noverrides + s->nread + s->nwrite, 0);
	ck_assert_ptr_null(s->forward[0]);
	ck_assert_uint_eq(s->limits_set, 0);
	ck_assert_uint_eq(s->timeout_ms, 0);
	ck_assert_uint_eq(s->network | s->channel | s->stdio_mask, 0);
	ck_assert_uint_eq(s->wait_slot_ms, 0);
	ck_assert_uint_eq(decoded.id, 77);
	ck_assert_uint_eq(decoded.type, ISO_MSG_SPAWN);
}
END_TEST

START_TEST(decode_keeps_wire_order_of_interleaved_repeats)
{
	raw_start(ISO_MSG_SPAWN);
	raw_str(ISO_F_ARG, "first");
	raw_str(ISO_F_FORWARD, "LANG=C");
	raw_str(ISO_F_PROGRAM, "/bin/echo");
	raw_str(ISO_F_ARG, "second");
	raw_str(ISO_F_FORWARD, "LC_ALL=C");
	raw_str(ISO_F_ARG, "third");
	ck_assert_int_eq(raw_decode(), 0);
	const struct iso_wire_spawn *s = &decoded.u.spawn;
	ck_assert_uint_eq(s->argc, 3);
	ck_assert_str_eq(s->argv[0], "first");
	ck_assert_str_eq(s->argv[1], "second");
	ck_assert_str_eq(s->argv[2], "third");
	ck_assert_ptr_null(s->argv[3]);
	ck_assert_str_eq(s->forward[0], "LANG=C");
	ck_assert_str_eq(s->forward[1], "LC_ALL=C");
	ck_assert_ptr_null(s->forward[2]);
}
END_TEST

START_TEST(decode_accepts_empty_string_value)
{
	raw_required_except(ISO_MSG_SPAWN, 0);
	raw_str(ISO_F_ARG, "");
	ck_assert_int_eq(raw_decode(), 0);
	ck_assert_str_eq(decoded.u.spawn.argv[1], "");
}
END_TEST

static const struct {
	uint8_t type;
	uint16_t tag;
	uint32_t value;
} edges[] = {
	{ ISO_MSG_SPAWN, ISO_F_NETWORK, 0 },
	{ ISO_MSG_SPAWN, ISO_F_NETWORK, ISO_NETWORK_HOST },
	{ ISO_MSG_SPAWN, ISO_F_CHANNEL, 0 },
	{ ISO_MSG_SPAWN, ISO_F_CHANNEL, 1 },
	{ ISO_MSG_SPAWN, ISO_F_STDIO, 0 },
	{ ISO_MSG_SPAWN, ISO_F_STDIO, 7 },
	{ ISO_MSG_KILL, ISO_F_SIGNAL, 1 },
	{ ISO_MSG_KILL, ISO_F_SIGNAL, 64 },
	{ ISO_MSG_HELLO, ISO_F_LANDLOCK_ABI, 0 },
	{ ISO_MSG_HELLO, ISO_F_LANDLOCK_ABI, 255 },
	{ ISO_MSG_HELLO, ISO_F_ERRNO, 1 },
	{ ISO_MSG_HELLO, ISO_F_ERRNO, 4095 },
	{ ISO_MSG_SPAWNED, ISO_F_PID, 0 },
	{ ISO_MSG_GUEST, ISO_F_PID, 1 },
	{ ISO_MSG_GUEST, ISO_F_PID, UINT32_MAX },
	{ ISO_MSG_GUEST, ISO_F_CALLER, 0 },
	{ ISO_MSG_STOP, ISO_F_PID, 1 },
	{ ISO_MSG_STOP, ISO_F_UID, 0 },
	{ ISO_MSG_RULE_TEXT, ISO_F_LINE, 1 },
	{ ISO_MSG_SPAWNED, ISO_F_UID, UINT32_MAX },
	{ ISO_MSG_REFUSED, ISO_F_ERRNO, 1 },
	{ ISO_MSG_REFUSED, ISO_F_ERRNO, 4095 },
	{ ISO_MSG_EXITED, ISO_F_OUTCOME, ISO_OUTCOME_EXITED },
	{ ISO_MSG_EXITED, ISO_F_OUTCOME, ISO_OUTCOME_FAILED },
	{ ISO_MSG_EXITED, ISO_F_CODE, UINT32_MAX },
	{ ISO_MSG_EXITED, ISO_F_STAGE, ISO_STAGE_NONE },
	{ ISO_MSG_EXITED, ISO_F_STAGE, ISO_STAGE_EXEC },
	{ ISO_MSG_EXITED, ISO_F_LIMIT_HIT, 0 },
	{ ISO_MSG_EXITED, ISO_F_LIMIT_HIT, ISO_LIMIT_COUNT - 1 },
};

START_TEST(decode_accepts_range_edges)
{
	raw_required_except(edges[_i].type, edges[_i].tag);
	raw_u32(edges[_i].tag, edges[_i].value);
	ck_assert_msg(raw_decode() == 0, "tag %u value %u: %s", edges[_i].tag, edges[_i].value,
		      why);
	ck_assert_int_gt(iso_wire_encode(&decoded, enc1, sizeof(enc1)), 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Decoder: header refusals                                            */

START_TEST(decode_refuses_short_header)
{
	raw_required_except(ISO_MSG_KILL, 0);
	decoded.id = 5;
	ck_assert_int_eq(iso_wire_decode(raw, 11, &decoded, why, sizeof(why)), -EBADMSG);
	ck_assert_why("datagram of 11 bytes, shorter than the 12-byte header");
	ck_assert_uint_eq(decoded.id, 0);
	ck_assert_int_eq(iso_wire_decode(raw, 0, &decoded, why, sizeof(why)), -EBADMSG);
	ck_assert_why("datagram of 0 bytes");
}
END_TEST

START_TEST(decode_refuses_bad_magic)
{
	raw_header(0x5350, ISO_WIRE_VERSION, ISO_MSG_KILL, 77);
	raw_valid(ISO_F_SIGNAL);
	ck_assert_int_eq(raw_decode(), -EPROTONOSUPPORT);
	ck_assert_why("bad magic 0x5350, expected 0x5349");
	ck_assert_uint_eq(decoded.id, 0);
}
END_TEST

START_TEST(decode_refuses_bad_version)
{
	raw_header(ISO_WIRE_MAGIC, ISO_WIRE_VERSION + 1, ISO_MSG_KILL, 77);
	raw_valid(ISO_F_SIGNAL);
	ck_assert_int_eq(raw_decode(), -EPROTONOSUPPORT);
	ck_assert_why("protocol version 2, this side speaks 1");
}
END_TEST

START_TEST(decode_refuses_unknown_type)
{
	char want[64];

	raw_header(ISO_WIRE_MAGIC, ISO_WIRE_VERSION, 0, 77);
	expect_refused(raw_decode(), "unknown message type 0");
	raw_header(ISO_WIRE_MAGIC, ISO_WIRE_VERSION, ISO_MSG_TYPE_MAX + 1, 78);
	snprintf(want, sizeof(want), "unknown message type %d", ISO_MSG_TYPE_MAX + 1);
	expect_refused(raw_decode(), want);
	ck_assert_uint_eq(decoded.id, 78); /* so the refusal can name it */
}
END_TEST

START_TEST(decode_refuses_body_len_too_short)
{
	raw_required_except(ISO_MSG_KILL, 0);
	raw_set_body_len((uint32_t)raw_len - 12 - 1);
	expect_refused(iso_wire_decode(raw, raw_len, &decoded, why, sizeof(why)),
		       "body_len 9, but 10 bytes follow the header");
}
END_TEST

START_TEST(decode_refuses_body_len_too_long)
{
	raw_required_except(ISO_MSG_KILL, 0);
	raw_set_body_len((uint32_t)raw_len - 12 + 1);
	expect_refused(iso_wire_decode(raw, raw_len, &decoded, why, sizeof(why)),
		       "body_len 11, but 10 bytes follow the header");
}
END_TEST

START_TEST(decode_refuses_datagram_over_iso_wire_max)
{
	/* A SPAWN valid in every respect but its size. */
	raw_required_except(ISO_MSG_SPAWN, 0);
	while (raw_len < ISO_WIRE_MAX + 1) {
		size_t left = ISO_WIRE_MAX + 1 - raw_len - 6;
		size_t value = left < ISO_WIRE_STR_MAX ? left : ISO_WIRE_STR_MAX;
		raw_str(ISO_F_ARG, make_str(0, value - 1, 'a'));
	}
	ck_assert_uint_eq(raw_len, ISO_WIRE_MAX + 1);
	expect_refused(raw_decode(), "datagram of 131073 bytes, at most 131072");
	ck_assert_uint_eq(decoded.id, 0);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Decoder: field refusals                                             */

START_TEST(decode_refuses_truncated_field_header)
{
	raw_required_except(ISO_MSG_KILL, 0);
	raw_le(ISO_F_SIGNAL, 2);
	raw_le(4, 1);
	expect_refused(raw_decode(), "field 2: truncated field header (3 bytes left, 6 needed)");
	ck_assert_uint_eq(decoded.id, 77);
}
END_TEST

START_TEST(decode_refuses_field_running_past_the_end)
{
	raw_required_except(ISO_MSG_SPAWN, ISO_F_PROGRAM);
	raw_field(ISO_F_PROGRAM, 100, "/bin/sh", 8);
	expect_refused(raw_decode(),
		       "field 2 (PROGRAM): length 100 runs past the end (8 bytes left)");
	raw_required_except(ISO_MSG_SPAWN, ISO_F_PROGRAM);
	raw_field(ISO_F_PROGRAM, 9, "/bin/sh", 8);
	expect_refused(raw_decode(),
		       "field 2 (PROGRAM): length 9 runs past the end (8 bytes left)");
}
END_TEST

START_TEST(decode_refuses_unknown_tag)
{
	static const uint16_t tags[] = { 0, 18, 19, 33, 56, 65535 };
	char want[64];
	for (size_t i = 0; i < sizeof(tags) / sizeof(tags[0]); i++) {
		raw_required_except(ISO_MSG_SPAWN, 0);
		raw_u32(tags[i], 1);
		snprintf(want, sizeof(want), "field 3: unknown tag %u", tags[i]);
		expect_refused(raw_decode(), want);
	}
}
END_TEST

/* LIST, RULE, DONE, CLONE and CHANNEL carry no field at all (bare); a
 * client's request carries no decided environment or grants, and a plan
 * nothing the helper must decide again. */
static const struct {
	uint8_t type;
	int bare;
	uint16_t tag;
	const char *want;
} misplaced[] = {
	{ ISO_MSG_SPAWN, 0, ISO_F_SIGNAL, "field 3 (SIGNAL): not allowed in SPAWN" },
	{ ISO_MSG_KILL, 0, ISO_F_PROGRAM, "field 2 (PROGRAM): not allowed in KILL" },
	{ ISO_MSG_HELLO, 0, ISO_F_NOTES, "field 2 (NOTES): not allowed in HELLO" },
	{ ISO_MSG_LIST, 1, ISO_F_UID, "field 1 (UID): not allowed in LIST" },
	{ ISO_MSG_RULE, 1, ISO_F_TEXT, "field 1 (TEXT): not allowed in RULE" },
	{ ISO_MSG_DONE, 1, ISO_F_ERRNO, "field 1 (ERRNO): not allowed in DONE" },
	{ ISO_MSG_STOP, 0, ISO_F_SIGNAL, "field 2 (SIGNAL): not allowed in STOP" },
	{ ISO_MSG_GUEST, 0, ISO_F_ARG, "field 6 (ARG): not allowed in GUEST" },
	{ ISO_MSG_GUEST, 0, ISO_F_WAIT_SLOT_MS, "field 6 (WAIT_SLOT_MS): not allowed in GUEST" },
	{ ISO_MSG_SPAWN, 0, ISO_F_ENV, "field 3 (ENV): not allowed in SPAWN" },
	{ ISO_MSG_SPAWN, 0, ISO_F_GRANT, "field 3 (GRANT): not allowed in SPAWN" },
	{ ISO_MSG_PLAN, 0, ISO_F_FORWARD, "field 4 (FORWARD): not allowed in PLAN" },
	{ ISO_MSG_PLAN, 0, ISO_F_READ_PATH, "field 4 (READ_PATH): not allowed in PLAN" },
	{ ISO_MSG_CHANNEL, 1, ISO_F_PID, "field 1 (PID): not allowed in CHANNEL" },
	{ ISO_MSG_CLONE, 1, ISO_F_PID, "field 1 (PID): not allowed in CLONE" },
};

START_TEST(decode_refuses_tag_not_allowed_for_type)
{
	for (size_t i = 0; i < sizeof(misplaced) / sizeof(misplaced[0]); i++) {
		if (misplaced[i].bare)
			raw_start(misplaced[i].type);
		else
			raw_required_except(misplaced[i].type, 0);
		raw_valid(misplaced[i].tag);
		expect_refused(raw_decode(), misplaced[i].want);
	}
}
END_TEST

static const struct {
	uint8_t type;
	uint16_t tag;
	const char *name;
} singulars[] = {
	{ ISO_MSG_SPAWN, ISO_F_PROGRAM, "PROGRAM" },
	{ ISO_MSG_SPAWN, ISO_F_TIMEOUT_MS, "TIMEOUT_MS" },
	{ ISO_MSG_SPAWN, ISO_F_NETWORK, "NETWORK" },
	{ ISO_MSG_SPAWN, ISO_F_CHANNEL, "CHANNEL" },
	{ ISO_MSG_SPAWN, ISO_F_STDIO, "STDIO" },
	{ ISO_MSG_SPAWN, ISO_F_WAIT_SLOT_MS, "WAIT_SLOT_MS" },
	{ ISO_MSG_KILL, ISO_F_SIGNAL, "SIGNAL" },
	{ ISO_MSG_HELLO, ISO_F_LANDLOCK_ABI, "LANDLOCK_ABI" },
	{ ISO_MSG_HELLO, ISO_F_ERRNO, "ERRNO" },
	{ ISO_MSG_HELLO, ISO_F_MESSAGE, "MESSAGE" },
	{ ISO_MSG_SPAWNED, ISO_F_PID, "PID" },
	{ ISO_MSG_SPAWNED, ISO_F_UID, "UID" },
	{ ISO_MSG_SPAWNED, ISO_F_NOTES, "NOTES" },
	{ ISO_MSG_REFUSED, ISO_F_ERRNO, "ERRNO" },
	{ ISO_MSG_REFUSED, ISO_F_MESSAGE, "MESSAGE" },
	{ ISO_MSG_EXITED, ISO_F_OUTCOME, "OUTCOME" },
	{ ISO_MSG_EXITED, ISO_F_CODE, "CODE" },
	{ ISO_MSG_EXITED, ISO_F_STAGE, "STAGE" },
	{ ISO_MSG_EXITED, ISO_F_LIMIT_HIT, "LIMIT_HIT" },
	{ ISO_MSG_EXITED, ISO_F_USAGE, "USAGE" },
	{ ISO_MSG_EXITED, ISO_F_CGROUP, "CGROUP" },
	{ ISO_MSG_GUEST, ISO_F_PROGRAM, "PROGRAM" },
	{ ISO_MSG_GUEST, ISO_F_CALLER, "CALLER" },
	{ ISO_MSG_GUEST, ISO_F_START_TICKS, "START_TICKS" },
	{ ISO_MSG_STOP, ISO_F_UID, "UID" },
	{ ISO_MSG_STOP, ISO_F_PID, "PID" },
	{ ISO_MSG_RULE_TEXT, ISO_F_TEXT, "TEXT" },
	{ ISO_MSG_PLAN, ISO_F_UID, "UID" },
	{ ISO_MSG_PLAN, ISO_F_PROGRAM, "PROGRAM" },
	{ ISO_MSG_PLAN, ISO_F_GRANT_WRITE, "GRANT_WRITE" },
	{ ISO_MSG_PLAN, ISO_F_CWD, "CWD" },
	{ ISO_MSG_PLAN, ISO_F_CHANNEL, "CHANNEL" },
	{ ISO_MSG_CLONED, ISO_F_PID, "PID" },
	{ ISO_MSG_WAIT, ISO_F_WAIT_SLOT_MS, "WAIT_SLOT_MS" },
};

START_TEST(decode_refuses_duplicated_singular_field)
{
	char want[64];
	raw_required_except(singulars[_i].type, singulars[_i].tag);
	raw_valid(singulars[_i].tag);
	ck_assert_int_eq(raw_decode(), 0);
	raw_valid(singulars[_i].tag);
	snprintf(want, sizeof(want), "(%s): given more than once", singulars[_i].name);
	expect_refused(raw_decode(), want);
}
END_TEST

static const struct {
	uint8_t type;
	uint16_t tag;
	const char *reason;
} requireds[] = {
	{ ISO_MSG_SPAWN, ISO_F_PROGRAM, "SPAWN: required field PROGRAM missing" },
	{ ISO_MSG_SPAWN, ISO_F_ARG, "SPAWN: required field ARG missing" },
	{ ISO_MSG_KILL, ISO_F_SIGNAL, "KILL: required field SIGNAL missing" },
	{ ISO_MSG_HELLO, ISO_F_LANDLOCK_ABI, "HELLO: required field LANDLOCK_ABI missing" },
	{ ISO_MSG_SPAWNED, ISO_F_PID, "SPAWNED: required field PID missing" },
	{ ISO_MSG_SPAWNED, ISO_F_UID, "SPAWNED: required field UID missing" },
	{ ISO_MSG_REFUSED, ISO_F_ERRNO, "REFUSED: required field ERRNO missing" },
	{ ISO_MSG_REFUSED, ISO_F_MESSAGE, "REFUSED: required field MESSAGE missing" },
	{ ISO_MSG_EXITED, ISO_F_OUTCOME, "EXITED: required field OUTCOME missing" },
	{ ISO_MSG_EXITED, ISO_F_CODE, "EXITED: required field CODE missing" },
	{ ISO_MSG_GUEST, ISO_F_PROGRAM, "GUEST: required field PROGRAM missing" },
	{ ISO_MSG_GUEST, ISO_F_PID, "GUEST: required field PID missing" },
	{ ISO_MSG_GUEST, ISO_F_UID, "GUEST: required field UID missing" },
	{ ISO_MSG_GUEST, ISO_F_CALLER, "GUEST: required field CALLER missing" },
	{ ISO_MSG_GUEST, ISO_F_HELPER, "GUEST: required field HELPER missing" },
	{ ISO_MSG_STOP, ISO_F_UID, "STOP: required field UID missing" },
	{ ISO_MSG_RULE_TEXT, ISO_F_FILE, "RULE_TEXT: required field FILE missing" },
	{ ISO_MSG_RULE_TEXT, ISO_F_LINE, "RULE_TEXT: required field LINE missing" },
	{ ISO_MSG_RULE_TEXT, ISO_F_TEXT, "RULE_TEXT: required field TEXT missing" },
	{ ISO_MSG_PLAN, ISO_F_UID, "PLAN: required field UID missing" },
	{ ISO_MSG_PLAN, ISO_F_PROGRAM, "PLAN: required field PROGRAM missing" },
	{ ISO_MSG_PLAN, ISO_F_ARG, "PLAN: required field ARG missing" },
	{ ISO_MSG_CLONED, ISO_F_PID, "CLONED: required field PID missing" },
	{ ISO_MSG_WAIT, ISO_F_WAIT_SLOT_MS, "WAIT: required field WAIT_SLOT_MS missing" },
};

START_TEST(decode_refuses_missing_required_field)
{
	raw_required_except(requireds[_i].type, requireds[_i].tag);
	expect_refused(raw_decode(), requireds[_i].reason);
}
END_TEST

START_TEST(decode_refuses_string_without_nul)
{
	raw_required_except(ISO_MSG_SPAWN, 0);
	raw_field(ISO_F_ARG, 3, "abc", 3);
	expect_refused(raw_decode(), "field 3 (ARG): string not NUL-terminated");
}
END_TEST

START_TEST(decode_refuses_string_with_interior_nul)
{
	raw_required_except(ISO_MSG_SPAWN, 0);
	raw_field(ISO_F_ARG, 4, "a\0b", 4);
	expect_refused(raw_decode(), "field 3 (ARG): string with an interior NUL");
}
END_TEST

START_TEST(decode_refuses_empty_string)
{
	raw_required_except(ISO_MSG_SPAWN, 0);
	raw_field(ISO_F_ARG, 0, "", 0);
	expect_refused(raw_decode(), "field 3 (ARG): empty string (length 0)");
}
END_TEST

START_TEST(decode_refuses_relative_paths)
{
	raw_required_except(ISO_MSG_SPAWN, ISO_F_PROGRAM);
	raw_str(ISO_F_PROGRAM, "bin/sh");
	expect_refused(raw_decode(), "field 2 (PROGRAM): path does not start with '/'");
	raw_required_except(ISO_MSG_SPAWN, 0);
	raw_str(ISO_F_READ_PATH, "tmp");
	expect_refused(raw_decode(), "field 3 (READ_PATH): path does not start with '/'");
	raw_required_except(ISO_MSG_SPAWN, 0);
	raw_str(ISO_F_WRITE_PATH, "");
	expect_refused(raw_decode(), "field 3 (WRITE_PATH): path does not start with '/'");
}
END_TEST

static const struct {
	uint8_t type;
	uint16_t tag;
	uint32_t cap;
	char first;
	const char *name;
} strings[] = {
	{ ISO_MSG_SPAWN, ISO_F_PROGRAM, ISO_WIRE_PATH_MAX, '/', "PROGRAM" },
	{ ISO_MSG_SPAWN, ISO_F_ARG, ISO_WIRE_STR_MAX, 'a', "ARG" },
	{ ISO_MSG_SPAWN, ISO_F_FORWARD, ISO_WIRE_STR_MAX, 'F', "FORWARD" },
	{ ISO_MSG_SPAWN, ISO_F_OVERRIDE, ISO_WIRE_STR_MAX, 'O', "OVERRIDE" },
	{ ISO_MSG_SPAWN, ISO_F_READ_PATH, ISO_WIRE_PATH_MAX, '/', "READ_PATH" },
	{ ISO_MSG_SPAWN, ISO_F_WRITE_PATH, ISO_WIRE_PATH_MAX, '/', "WRITE_PATH" },
	{ ISO_MSG_HELLO, ISO_F_MESSAGE, ISO_WIRE_TEXT_MAX, 'm', "MESSAGE" },
	{ ISO_MSG_REFUSED, ISO_F_MESSAGE, ISO_WIRE_TEXT_MAX, 'm', "MESSAGE" },
	{ ISO_MSG_SPAWNED, ISO_F_NOTES, ISO_WIRE_TEXT_MAX, 'n', "NOTES" },
	{ ISO_MSG_GUEST, ISO_F_PROGRAM, ISO_WIRE_PATH_MAX, '/', "PROGRAM" },
	{ ISO_MSG_RULE_TEXT, ISO_F_FILE, ISO_WIRE_PATH_MAX, '/', "FILE" },
	{ ISO_MSG_RULE_TEXT, ISO_F_TEXT, ISO_WIRE_RULE_MAX, 'r', "TEXT" },
};

/* A path reaches reasons and logs; a control byte in it could
 * forge a line or a field there. Bytes from 0x80 up are UTF-8 names. */
START_TEST(decode_refuses_paths_with_control_bytes)
{
	static const uint16_t tags[] = { ISO_F_PROGRAM, ISO_F_READ_PATH, ISO_F_WRITE_PATH };
	static const char *const bad[] = { "/tmp/a\nrefuse id=1", "/x\"\r", "/x\x1b[2J", "/x\x7f",
					   "/\x01" };
	static const char *const names[] = { "PROGRAM", "READ_PATH", "WRITE_PATH" };
	char want[96];

	for (size_t t = 0; t < 3; t++)
		for (size_t b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
			raw_required_except(ISO_MSG_SPAWN,
					    tags[t] == ISO_F_PROGRAM ? ISO_F_PROGRAM : 0);
			raw_str(tags[t], bad[b]);
			snprintf(
			    want, sizeof(want), "(%s): path with the control byte 0x%02x", names[t],
			    (unsigned)(unsigned char)bad[b][strcspn(bad[b], "\n\r\x1b\x7f\x01")]);
			expect_refused(raw_decode(), want);
		}
	raw_required_except(ISO_MSG_SPAWN, 0);
	raw_str(ISO_F_READ_PATH, "/srv/caf\xc3\xa9 \"quoted\"/\x80\xff");
	ck_assert_msg(raw_decode() == 0, "%s", why);
	/* Arguments are not paths: they may hold anything but NUL. */
	raw_required_except(ISO_MSG_SPAWN, 0);
	raw_str(ISO_F_ARG, "line\nbreak\x7f");
	ck_assert_msg(raw_decode() == 0, "%s", why);
}
END_TEST

START_TEST(decode_accepts_string_at_its_cap)
{
	raw_required_except(strings[_i].type, strings[_i].tag);
	raw_str(strings[_i].tag, make_str(0, strings[_i].cap - 1, strings[_i].first));
	ck_assert_msg(raw_decode() == 0, "%s: %s", strings[_i].name, why);
}
END_TEST

/* An EXITED of outcome FAILED, and its reason (MESSAGE), in either order. */
static void raw_failed(const char *reason, bool reason_first)
{
	raw_start(ISO_MSG_EXITED);
	if (reason_first)
		raw_str(ISO_F_MESSAGE, reason);
	raw_u32(ISO_F_OUTCOME, ISO_OUTCOME_FAILED);
	raw_u32(ISO_F_CODE, ENOTEMPTY);
	raw_u32(ISO_F_STAGE, ISO_STAGE_CONFINEMENT);
	if (!reason_first)
		raw_str(ISO_F_MESSAGE, reason);
}

/* A failed start's reason: with FAILED, once, at most ISO_WIRE_TEXT_MAX
 * bytes with its NUL; never with any other outcome. */
START_TEST(decode_takes_a_reason_with_a_failed_start_only)
{
	static const uint32_t others[] = { ISO_OUTCOME_EXITED, ISO_OUTCOME_SIGNALED,
					   ISO_OUTCOME_TIMED_OUT, ISO_OUTCOME_LIMIT };
	const char *r = "no mount point for /x/ro/b in the guest's tree";
	char want[96];

	for (int first = 0; first < 2; first++) {
		raw_failed(r, first);
		ck_assert_msg(raw_decode() == 0, "%s", why);
		ck_assert_str_eq(decoded.u.exited.reason, r);
		ck_assert_int_eq(iso_wire_encode(&decoded, enc1, sizeof(enc1)), (long)raw_len);
	}
	raw_failed(make_str(0, ISO_WIRE_TEXT_MAX - 1, 'r'), false);
	ck_assert_msg(raw_decode() == 0, "%s", why);
	raw_failed(make_str(0, ISO_WIRE_TEXT_MAX, 'r'), false);
	snprintf(want, sizeof(want), "(MESSAGE): string of %u bytes, at most %u",
		 ISO_WIRE_TEXT_MAX + 1, ISO_WIRE_TEXT_MAX);
	expect_refused(raw_decode(), want);
	raw_failed(r, false);
	raw_str(ISO_F_MESSAGE, r);
	expect_refused(raw_decode(), "field 5 (MESSAGE): given more than once");
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		raw_required_except(ISO_MSG_EXITED, ISO_F_OUTCOME);
		raw_u32(ISO_F_OUTCOME, others[i]);
		raw_str(ISO_F_MESSAGE, r);
		snprintf(want, sizeof(want), "EXITED: a MESSAGE with outcome %u, not FAILED",
			 others[i]);
		expect_refused(raw_decode(), want);
	}
}
END_TEST

START_TEST(decode_refuses_string_over_its_cap)
{
	char want[96];
	raw_required_except(strings[_i].type, strings[_i].tag);
	raw_str(strings[_i].tag, make_str(0, strings[_i].cap, strings[_i].first));
	snprintf(want, sizeof(want), "(%s): string of %u bytes, at most %u", strings[_i].name,
		 strings[_i].cap + 1, strings[_i].cap);
	expect_refused(raw_decode(), want);
}
END_TEST

static const struct {
	uint16_t tag;
	uint32_t max;
	const char *name;
} repeats[] = {
	{ ISO_F_ARG, ISO_ARGS_MAX, "ARG" },
	{ ISO_F_FORWARD, ISO_WIRE_FORWARD_MAX, "FORWARD" },
	{ ISO_F_OVERRIDE, ISO_ENV_OVERRIDES_MAX, "OVERRIDE" },
	{ ISO_F_READ_PATH, ISO_PATHS_MAX, "READ_PATH" },
	{ ISO_F_WRITE_PATH, ISO_PATHS_MAX, "WRITE_PATH" },
	{ ISO_F_LIMIT, ISO_LIMIT_COUNT, "LIMIT" },
	{ ISO_F_PASS_FD, ISO_PASS_FDS_MAX, "PASS_FD" },
};

/* A SPAWN with `n` instances of a repeated field (distinct limits). */
static void raw_spawn_with_repeats(uint16_t tag, uint32_t n)
{
	raw_required_except(ISO_MSG_SPAWN, ISO_F_ARG);
	if (tag != ISO_F_ARG)
		raw_valid(ISO_F_ARG);
	for (uint32_t i = 0; i < n; i++) {
		if (tag == ISO_F_LIMIT)
			raw_limit(i % ISO_LIMIT_COUNT, i);
		else
			raw_valid(tag);
	}
}

START_TEST(decode_accepts_repeats_up_to_cap)
{
	raw_spawn_with_repeats(repeats[_i].tag, repeats[_i].max);
	ck_assert_msg(raw_decode() == 0, "%s: %s", repeats[_i].name, why);
}
END_TEST

START_TEST(decode_refuses_too_many_repeats)
{
	char want[64];
	raw_spawn_with_repeats(repeats[_i].tag, repeats[_i].max + 1);
	snprintf(want, sizeof(want), "SPAWN: %u %s fields, at most %u", repeats[_i].max + 1,
		 repeats[_i].name, repeats[_i].max);
	expect_refused(raw_decode(), want);
}
END_TEST

static const struct {
	uint8_t type;
	uint16_t tag;
	uint32_t len;
	uint32_t want;
} lengths[] = {
	{ ISO_MSG_SPAWN, ISO_F_NETWORK, 3, 4 },      { ISO_MSG_SPAWN, ISO_F_CHANNEL, 5, 4 },
	{ ISO_MSG_SPAWN, ISO_F_STDIO, 0, 4 },        { ISO_MSG_SPAWN, ISO_F_TIMEOUT_MS, 4, 8 },
	{ ISO_MSG_SPAWN, ISO_F_TIMEOUT_MS, 9, 8 },   { ISO_MSG_SPAWN, ISO_F_WAIT_SLOT_MS, 4, 8 },
	{ ISO_MSG_SPAWN, ISO_F_WAIT_SLOT_MS, 9, 8 }, { ISO_MSG_SPAWN, ISO_F_LIMIT, 8, 12 },
	{ ISO_MSG_SPAWN, ISO_F_LIMIT, 16, 12 },      { ISO_MSG_KILL, ISO_F_SIGNAL, 8, 4 },
	{ ISO_MSG_HELLO, ISO_F_LANDLOCK_ABI, 2, 4 }, { ISO_MSG_HELLO, ISO_F_ERRNO, 8, 4 },
	{ ISO_MSG_SPAWNED, ISO_F_PID, 3, 4 },        { ISO_MSG_SPAWNED, ISO_F_UID, 5, 4 },
	{ ISO_MSG_REFUSED, ISO_F_ERRNO, 1, 4 },      { ISO_MSG_EXITED, ISO_F_OUTCOME, 2, 4 },
	{ ISO_MSG_EXITED, ISO_F_CODE, 8, 4 },        { ISO_MSG_EXITED, ISO_F_STAGE, 3, 4 },
	{ ISO_MSG_EXITED, ISO_F_LIMIT_HIT, 5, 4 },   { ISO_MSG_EXITED, ISO_F_USAGE, 31, 32 },
	{ ISO_MSG_EXITED, ISO_F_USAGE, 33, 32 },     { ISO_MSG_EXITED, ISO_F_CGROUP, 19, 20 },
	{ ISO_MSG_EXITED, ISO_F_CGROUP, 21, 20 },
};

START_TEST(decode_refuses_wrong_integer_length)
{
	static const uint8_t ones[64] = { 1, 1, 1, 1, 1, 1, 1, 1, 1 };
	char want[64];
	raw_required_except(lengths[_i].type, lengths[_i].tag);
	raw_field(lengths[_i].tag, lengths[_i].len, ones, lengths[_i].len);
	snprintf(want, sizeof(want), "length %u, expected %u", lengths[_i].len, lengths[_i].want);
	expect_refused(raw_decode(), want);
}
END_TEST

static const struct {
	uint8_t type;
	uint16_t tag;
	uint32_t value;
	const char *reason;
} ranges[] = {
	{ ISO_MSG_SPAWN, ISO_F_NETWORK, 3, "(NETWORK): value 3 out of range 0..2" },
	{ ISO_MSG_SPAWN, ISO_F_CHANNEL, 3, "(CHANNEL): value 3 out of range 0..2" },
	{ ISO_MSG_SPAWN, ISO_F_STDIO, 8, "(STDIO): value 8 out of range 0..7" },
	{ ISO_MSG_KILL, ISO_F_SIGNAL, 0, "(SIGNAL): value 0 out of range 1..64" },
	{ ISO_MSG_KILL, ISO_F_SIGNAL, 65, "(SIGNAL): value 65 out of range 1..64" },
	{ ISO_MSG_HELLO, ISO_F_LANDLOCK_ABI, 256, "(LANDLOCK_ABI): value 256 out of range 0..255" },
	{ ISO_MSG_HELLO, ISO_F_ERRNO, 0, "(ERRNO): value 0 out of range 1..4095" },
	{ ISO_MSG_HELLO, ISO_F_ERRNO, 4096, "(ERRNO): value 4096 out of range 1..4095" },
	{ ISO_MSG_REFUSED, ISO_F_ERRNO, 0, "(ERRNO): value 0 out of range 1..4095" },
	{ ISO_MSG_REFUSED, ISO_F_ERRNO, 4096, "(ERRNO): value 4096 out of range 1..4095" },
	{ ISO_MSG_EXITED, ISO_F_OUTCOME, ISO_OUTCOME_RUNNING,
	  "(OUTCOME): value 0 out of range 1..5" },
	{ ISO_MSG_EXITED, ISO_F_OUTCOME, 6, "(OUTCOME): value 6 out of range 1..5" },
	{ ISO_MSG_EXITED, ISO_F_STAGE, 5, "(STAGE): value 5 out of range 0..4" },
	{ ISO_MSG_EXITED, ISO_F_LIMIT_HIT, ISO_LIMIT_COUNT,
	  "(LIMIT_HIT): value 11 out of range 0..10" },
	{ ISO_MSG_EXITED, ISO_F_LIMIT_HIT, UINT32_MAX,
	  "(LIMIT_HIT): value 4294967295 out of range 0..10" },
	{ ISO_MSG_GUEST, ISO_F_PID, 0, "(PID): value 0 out of range 1..4294967295" },
	{ ISO_MSG_GUEST, ISO_F_HELPER, 0, "(HELPER): value 0 out of range 1..4294967295" },
	{ ISO_MSG_GUEST, ISO_F_NETWORK, 3, "(NETWORK): value 3 out of range 0..2" },
	{ ISO_MSG_STOP, ISO_F_PID, 0, "(PID): value 0 out of range 1..4294967295" },
	{ ISO_MSG_RULE_TEXT, ISO_F_LINE, 0, "(LINE): value 0 out of range 1..4294967295" },
	/* Never the guest's stdio; only as many as select() can name. */
	{ ISO_MSG_SPAWN, ISO_F_PASS_FD, 2, "(PASS_FD): value 2 out of range 3..1023" },
	{ ISO_MSG_SPAWN, ISO_F_PASS_FD, ISO_PASS_FD_LIMIT,
	  "(PASS_FD): value 1024 out of range 3..1023" },
	{ ISO_MSG_PLAN, ISO_F_PASS_FD, 0, "(PASS_FD): value 0 out of range 3..1023" },
	{ ISO_MSG_PLAN, ISO_F_NETWORK, 3, "(NETWORK): value 3 out of range 0..2" },
	{ ISO_MSG_CLONED, ISO_F_PID, 0, "(PID): value 0 out of range 1..4294967295" },
};

START_TEST(decode_refuses_out_of_range_number)
{
	raw_required_except(ranges[_i].type, ranges[_i].tag);
	raw_u32(ranges[_i].tag, ranges[_i].value);
	expect_refused(raw_decode(), ranges[_i].reason);
}
END_TEST

START_TEST(decode_refuses_unknown_limit)
{
	raw_required_except(ISO_MSG_SPAWN, 0);
	raw_limit(ISO_LIMIT_COUNT, 1);
	expect_refused(raw_decode(), "field 3 (LIMIT): unknown limit 11, at most 10");
}
END_TEST

/* What a cgroup counted names limits only: a bit beyond them is refused,
 * and never encoded; nor is a count without its flag. */
START_TEST(decode_refuses_cgroup_bits_of_no_limit)
{
	uint8_t buf[256];

	raw_required_except(ISO_MSG_EXITED, 0);
	raw_le(ISO_F_CGROUP, 2);
	raw_le(20, 4);
	raw_le(1, 8);
	raw_le(2, 8);
	raw_le(1u << ISO_LIMIT_COUNT, 4);
	expect_refused(raw_decode(), "field 3 (CGROUP): limits reached 0x800, at most 0x7ff");
	valid_msg(ISO_MSG_EXITED, &m);
	m.u.exited.reached = 1u << ISO_LIMIT_PIDS;
	ck_assert_int_eq(iso_wire_encode(&m, buf, sizeof(buf)), -EINVAL);
	m.u.exited.cgroup = 1;
	m.u.exited.reached = 1u << ISO_LIMIT_COUNT;
	ck_assert_int_eq(iso_wire_encode(&m, buf, sizeof(buf)), -EINVAL);
}
END_TEST

START_TEST(decode_refuses_limit_given_twice)
{
	raw_required_except(ISO_MSG_SPAWN, 0);
	raw_limit(ISO_LIMIT_NPROC, 1);
	raw_limit(ISO_LIMIT_AS, 1);
	raw_limit(ISO_LIMIT_NPROC, 2);
	expect_refused(raw_decode(), "field 5 (LIMIT): limit 3 given twice");
	/* GUEST's limits are its own, checked the same way. */
	raw_required_except(ISO_MSG_GUEST, 0);
	raw_limit(ISO_LIMIT_SHM, 1);
	raw_limit(ISO_LIMIT_SHM, 2);
	expect_refused(raw_decode(), "field 7 (LIMIT): limit 7 given twice");
	raw_required_except(ISO_MSG_GUEST, 0);
	raw_limit(ISO_LIMIT_SHM, 64);
	ck_assert_int_eq(raw_decode(), 0);
	ck_assert_uint_eq(decoded.u.guest.limits_set, 1u << ISO_LIMIT_SHM);
	ck_assert_uint_eq(decoded.u.guest.limits[ISO_LIMIT_SHM], 64);
}
END_TEST

START_TEST(decode_writes_no_reason_past_why_size)
{
	char small[8];
	memset(small, '#', sizeof(small));
	raw_required_except(ISO_MSG_SPAWN, 0);
	raw_field(ISO_F_ARG, 3, "abc", 3);
	raw_set_body_len((uint32_t)raw_len - 12);
	ck_assert_int_eq(iso_wire_decode(raw, raw_len, &decoded, small, 4), -EBADMSG);
	ck_assert_str_eq(small, "fie");
	ck_assert_int_eq(small[4], '#');
	ck_assert_int_eq(iso_wire_decode(raw, raw_len, &decoded, NULL, 0), -EBADMSG);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Deterministic mutation fuzzing                                      */

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void) /* splitmix64 */
{
	uint64_t z = (rnd_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Boundaries the decoder checks, to push mutated fields onto them. */
static const uint32_t interesting[] = {
	0,    1,    2,    3,     4,     5,      6,          7,          8,
	12,   32,   63,   64,    65,    255,    256,        1024,       1025,
	4095, 4096, 4097, 33025, 33026, 131072, 0x7fffffff, 0x80000000, 0xffffffff,
};

static size_t mutate(uint8_t *b, size_t n, size_t cap)
{
	unsigned rounds = 1 + (unsigned)(rnd() % 4);
	for (unsigned k = 0; k < rounds; k++) {
		size_t pos = n > 0 ? rnd() % n : 0;
		switch (rnd() % 5) {
		case 0:
			if (n > 0)
				b[pos] ^= (uint8_t)(1u << (rnd() % 8));
			break;
		case 1:
			if (n > 0)
				b[pos] = (uint8_t)rnd();
			break;
		case 2:
			if (n < cap) {
				memmove(b + pos + 1, b + pos, n - pos);
				b[pos] = (uint8_t)rnd();
				n++;
			}
			break;
		case 3:
			if (n > 0) {
				memmove(b + pos, b + pos + 1, n - pos - 1);
				n--;
			}
			break;
		default:
			if (n >= 4) {
				uint32_t v = interesting[rnd() % (sizeof(interesting) /
								  sizeof(interesting[0]))];
				pos = rnd() % (n - 3);
				for (int i = 0; i < 4; i++)
					b[pos + i] = (uint8_t)(v >> (8 * i));
			}
			break;
		}
	}
	/* Half the time keep body_len honest so mutations reach the fields. */
	if (n >= ISO_WIRE_HEADER_SIZE && rnd() % 2 == 0) {
		uint32_t body = (uint32_t)(n - ISO_WIRE_HEADER_SIZE);
		for (int i = 0; i < 4; i++)
			b[8 + i] = (uint8_t)(body >> (8 * i));
	}
	return n;
}

START_TEST(mutation_fuzz_never_accepts_what_it_cannot_reencode)
{
	static uint8_t seeds[ISO_MSG_TYPE_MAX][1024];
	static size_t seed_len[ISO_MSG_TYPE_MAX];
	static uint8_t buf[1024 + 64];
	int nseeds = 0;

	for (uint8_t type = 1; type <= ISO_MSG_TYPE_MAX; type++) {
		valid_msg(type, &m);
		if (type == ISO_MSG_SPAWN) {
			m.u.spawn.argv[1] = "-c";
			m.u.spawn.argc = 2;
			m.u.spawn.forward[0] = "LANG=C";
			m.u.spawn.nforward = 1;
			m.u.spawn.overrides[0] = "A=b";
			m.u.spawn.noverrides = 1;
			m.u.spawn.limits_set = 0x21;
			m.u.spawn.limits[0] = 10;
			m.u.spawn.limits[5] = 1 << 20;
			m.u.spawn.timeout_ms = 1000;
			m.u.spawn.network = 1;
			m.u.spawn.read_paths[0] = "/usr";
			m.u.spawn.nread = 1;
			m.u.spawn.write_paths[0] = "/tmp";
			m.u.spawn.nwrite = 1;
			m.u.spawn.channel = 1;
			m.u.spawn.stdio_mask = 3;
			m.u.spawn.wait_slot_ms = 1500;
		} else if (type == ISO_MSG_HELLO) {
			m.u.hello.err = EPERM;
			m.u.hello.message = "policy file is group-writable";
		} else if (type == ISO_MSG_SPAWNED) {
			m.u.spawned.notes = "landlock: unavailable";
		} else if (type == ISO_MSG_GUEST) {
			m.u.guest.limits_set = 0x81;
			m.u.guest.limits[0] = 30;
			m.u.guest.limits[7] = 1 << 26;
			m.u.guest.start_ticks = 99;
			m.u.guest.timeout_ms = 1000;
		} else if (type == ISO_MSG_STOP) {
			m.u.stop.pid = 55;
		} else if (type == ISO_MSG_PLAN) {
			m.u.plan.envp[0] = "PATH=/bin";
			m.u.plan.nenv = 1;
			m.u.plan.limits_set = 0x3;
			m.u.plan.limits[1] = 77;
			m.u.plan.timeout_ms = 500;
			m.u.plan.grants[0] = "/srv";
			m.u.plan.grants[1] = "/srv/out";
			m.u.plan.ngrants = 2;
			m.u.plan.grants_write = 2;
			m.u.plan.cwd = "/srv/out";
			m.u.plan.channel = 1;
			m.u.plan.stdio_mask = 2;
			m.u.plan.pass_fds[0] = 4;
			m.u.plan.npass = 1;
		} else if (type == ISO_MSG_EXITED) {
			m.u.exited.outcome = ISO_OUTCOME_FAILED;
			m.u.exited.code = ENOTEMPTY;
			m.u.exited.reason = "no mount point for /x/b";
			m.u.exited.stage = ISO_STAGE_CONFINEMENT;
			m.u.exited.limit_hit = ISO_LIMIT_AS;
			m.u.exited.wall_us = 12345;
			m.u.exited.maxrss_kib = 2048;
		}
		long n = iso_wire_encode(&m, seeds[nseeds], sizeof(seeds[0]));
		ck_assert_int_gt(n, 0);
		seed_len[nseeds++] = (size_t)n;
	}

	unsigned accepted = 0, refused = 0;
	for (int iter = 0; iter < 200000; iter++) {
		int s = (int)(rnd() % (uint64_t)nseeds);
		memcpy(buf, seeds[s], seed_len[s]);
		size_t n = mutate(buf, seed_len[s], sizeof(buf));
		/* An exact-size heap copy, so a sanitizer build sees overreads. */
		uint8_t *exact = malloc(n > 0 ? n : 1);
		if (exact == NULL)
			ck_abort_msg("out of memory");
		memcpy(exact, buf, n);
		why[0] = '\0';
		int rc = iso_wire_decode(exact, n, &decoded, why, sizeof(why));
		if (rc != 0) {
			/* ck_assert marks a point per call: too slow here. */
			if ((rc != -EBADMSG && rc != -EPROTONOSUPPORT) || why[0] == '\0')
				ck_abort_msg("iteration %d: rc %d, reason \"%s\"", iter, rc, why);
			refused++;
			free(exact);
			continue;
		}
		long e1 = iso_wire_encode(&decoded, enc1, sizeof(enc1));
		if (e1 <= 0)
			ck_abort_msg("iteration %d: accepted but re-encode %ld", iter, e1);
		if (iso_wire_decode(enc1, (size_t)e1, &again, why, sizeof(why)) != 0)
			ck_abort_msg("iteration %d: re-encoding refused: %s", iter, why);
		long e2 = iso_wire_encode(&again, enc2, sizeof(enc2));
		if (e2 != e1 || memcmp(enc1, enc2, (size_t)e1) != 0)
			ck_abort_msg("iteration %d: encoding not canonical", iter);
		accepted++;
		free(exact);
	}
	/* Both paths were exercised, or the test proved nothing. */
	ck_assert_uint_gt(accepted, 1000);
	ck_assert_uint_gt(refused, 1000);
}
END_TEST

static Suite *wire_suite(void)
{
	Suite *s = suite_create("wire");
	TCase *rt = tcase_create("round_trip");
	tcase_add_test(rt, round_trip_hello_ready_and_refusing);
	tcase_add_test(rt, round_trip_spawn_every_field);
	tcase_add_test(rt, round_trip_spawn_maximum_counts);
	tcase_add_test(rt, round_trip_spawn_maximum_string_lengths);
	tcase_add_test(rt, round_trip_kill);
	tcase_add_test(rt, round_trip_spawned_with_and_without_notes);
	tcase_add_test(rt, round_trip_refused);
	tcase_add_test(rt, round_trip_exited_every_field);
	tcase_add_test(rt, round_trip_guest_every_field);
	tcase_add_test(rt, round_trip_stop_with_and_without_pid);
	tcase_add_test(rt, round_trip_rule_text);
	tcase_add_test(rt, round_trip_wait_for_a_connection);
	tcase_add_test(rt, round_trip_messages_without_fields);
	tcase_add_test(rt, round_trip_plan_every_field);
	tcase_add_test(rt, round_trip_cloned);
	suite_add_tcase(s, rt);

	TCase *enc = tcase_create("encode");
	tcase_add_test(enc, encode_kill_exact_bytes);
	tcase_add_test(enc, encode_omits_absent_optional_fields);
	tcase_add_loop_test(enc, encode_refuses_what_the_decoder_refuses, 0, BREAK_CASES);
	tcase_add_test(enc, encode_refuses_small_buffer);
	tcase_add_test(enc, encode_invalid_wins_over_small_buffer);
	tcase_add_test(enc, encode_fills_exactly_iso_wire_max);
	tcase_add_test(enc, encode_refuses_over_iso_wire_max);
	suite_add_tcase(s, enc);

#define N(a) ((int)(sizeof(a) / sizeof((a)[0])))
	TCase *ok = tcase_create("decode_accepts");
	tcase_add_test(ok, decode_fills_defaults_for_absent_fields);
	tcase_add_test(ok, decode_keeps_wire_order_of_interleaved_repeats);
	tcase_add_test(ok, decode_accepts_empty_string_value);
	tcase_add_loop_test(ok, decode_accepts_range_edges, 0, N(edges));
	tcase_add_loop_test(ok, decode_accepts_string_at_its_cap, 0, N(strings));
	tcase_add_loop_test(ok, decode_accepts_repeats_up_to_cap, 0, N(repeats));
	suite_add_tcase(s, ok);

	TCase *bad = tcase_create("decode_refuses");
	tcase_add_test(bad, decode_refuses_short_header);
	tcase_add_test(bad, decode_refuses_bad_magic);
	tcase_add_test(bad, decode_refuses_bad_version);
	tcase_add_test(bad, decode_refuses_unknown_type);
	tcase_add_test(bad, decode_refuses_body_len_too_short);
	tcase_add_test(bad, decode_refuses_body_len_too_long);
	tcase_add_test(bad, decode_refuses_datagram_over_iso_wire_max);
	tcase_add_test(bad, decode_refuses_truncated_field_header);
	tcase_add_test(bad, decode_refuses_field_running_past_the_end);
	tcase_add_test(bad, decode_refuses_unknown_tag);
	tcase_add_test(bad, decode_refuses_tag_not_allowed_for_type);
	tcase_add_loop_test(bad, decode_refuses_duplicated_singular_field, 0, N(singulars));
	tcase_add_loop_test(bad, decode_refuses_missing_required_field, 0, N(requireds));
	tcase_add_test(bad, decode_refuses_string_without_nul);
	tcase_add_test(bad, decode_refuses_string_with_interior_nul);
	tcase_add_test(bad, decode_refuses_empty_string);
	tcase_add_test(bad, decode_refuses_relative_paths);
	tcase_add_test(bad, decode_refuses_paths_with_control_bytes);
	tcase_add_test(bad, decode_takes_a_reason_with_a_failed_start_only);
	tcase_add_loop_test(bad, decode_refuses_string_over_its_cap, 0, N(strings));
	tcase_add_loop_test(bad, decode_refuses_too_many_repeats, 0, N(repeats));
	tcase_add_loop_test(bad, decode_refuses_wrong_integer_length, 0, N(lengths));
	tcase_add_loop_test(bad, decode_refuses_out_of_range_number, 0, N(ranges));
	tcase_add_test(bad, decode_refuses_unknown_limit);
	tcase_add_test(bad, decode_refuses_cgroup_bits_of_no_limit);
	tcase_add_test(bad, decode_refuses_limit_given_twice);
	tcase_add_test(bad, plan_refuses_a_write_bit_without_its_grant);
	tcase_add_test(bad, decode_writes_no_reason_past_why_size);
	suite_add_tcase(s, bad);

	TCase *fz = tcase_create("fuzz");
	tcase_set_timeout(fz, 120);
	tcase_add_test(fz, mutation_fuzz_never_accepts_what_it_cannot_reencode);
	suite_add_tcase(s, fz);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(wire_suite());
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
