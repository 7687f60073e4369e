/*
 * unit_request.c - request_decide(): a decoded SPAWN meets the caller's
 * rule. Pure, so tested without privilege; the live tests repeat the
 * important refusals through the real helper.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "request.h"
#include "policy.h"
#include "util.h"

static const char policy_text[] = "rule user:#1000 {\n"
				  "    pool 1900000000-1900000099\n"
				  "    programs /usr/bin/python3 /bin/true\n"
				  "    overrides FOO PATH\n"
				  "    forward LANG\n"
				  "    limit cpu 30\n"
				  "    limit as 1G\n"
				  "    timeout 60 10\n"
				  "    network none-only\n"
				  "    grants read-write\n"
				  "}\n"
				  "rule user:#1001 {\n"
				  "    pool 1900000100-1900000199\n"
				  "    programs any\n"
				  "}\n"
				  "rule user:#1002 {\n"
				  "    pool 1900000200-1900000299\n"
				  "    programs /bin/sh\n"
				  "    overrides FOO\n"
				  "    grants read\n"
				  "}\n"
				  "rule user:#1003 {\n"
				  "    pool 1900000300-1900000399\n"
				  "    programs any\n"
				  "    timeout 0 5\n"
				  "}\n";

static struct iso_policy pol;
static const struct iso_rule *strict, *open_rule, *one_script, *unbounded;
static struct iso_wire_spawn req;
static struct iso_plan plan;
static char why[512];

static void setup(void)
{
	ck_assert_int_eq(policy_parse(policy_text, sizeof(policy_text) - 1, "t.conf", &pol, NULL,
				      why, sizeof(why)),
			 0);
	strict = &pol.rules[0];
	open_rule = &pol.rules[1];
	one_script = &pol.rules[2];
	unbounded = &pol.rules[3];
	memset(&req, 0, sizeof(req));
	req.program = "/bin/true";
	req.argv[0] = "true";
	req.argc = 1;
	why[0] = '\0';
}

static void teardown(void)
{
	plan_release(&plan);
	policy_free(&pol);
}

static int decide(const struct iso_rule *rule)
{
	plan_release(&plan);
	return request_decide(rule, &req, &plan, why, sizeof(why));
}

START_TEST(listed_program_accepted_with_rule_defaults)
{
	ck_assert_int_eq(decide(strict), 0);
	ck_assert_str_eq(plan.program, "/bin/true");
	ck_assert_uint_eq(plan.limits[ISO_LIMIT_CPU], 30);
	ck_assert_uint_eq(plan.limits[ISO_LIMIT_AS], 1ull << 30);
	ck_assert_uint_eq(plan.limits[ISO_LIMIT_NOFILE], iso_default_ceiling[ISO_LIMIT_NOFILE]);
	ck_assert_uint_eq(plan.timeout_ms, 10000);
	ck_assert_int_eq(plan.network_none, 1);
	ck_assert_int_eq(plan.stdio[0], -1);
}
END_TEST

START_TEST(unlisted_program_refused_by_name)
{
	req.program = "/usr/bin/perl";
	ck_assert_int_eq(decide(strict), -EACCES);
	ck_assert_ptr_nonnull(strstr(why, "/usr/bin/perl"));
	ck_assert_ptr_null(plan.envp);
}
END_TEST

START_TEST(program_path_must_be_normal)
{
	static const char *const bad[] = { "bin/true",    "/bin/../bin/true", "/bin//true",
					   "/bin/./true", "/bin/true/",       "/" };

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		req.program = bad[i];
		ck_assert_msg(decide(open_rule) == -EINVAL, "%s accepted", bad[i]);
	}
}
END_TEST

START_TEST(limit_below_ceiling_is_used)
{
	req.limits[ISO_LIMIT_CPU] = 5;
	req.limits_set = 1u << ISO_LIMIT_CPU;
	ck_assert_int_eq(decide(strict), 0);
	ck_assert_uint_eq(plan.limits[ISO_LIMIT_CPU], 5);
}
END_TEST

START_TEST(limit_above_ceiling_refused_by_name_not_lowered)
{
	req.limits[ISO_LIMIT_AS] = (1ull << 30) + 1;
	req.limits_set = 1u << ISO_LIMIT_AS;
	ck_assert_int_eq(decide(strict), -EACCES);
	ck_assert_ptr_nonnull(strstr(why, "limit as="));
}
END_TEST

/* A limit of 0 is below every ceiling, and a tmpfs of
 * size 0 (scratch, shm) is unbounded; no limit may be asked for as 0, as
 * the policy may not set one to 0. */
START_TEST(zero_limit_refused_by_name)
{
	char want[32];

	for (int i = 0; i < ISO_LIMIT_COUNT; i++) {
		memset(req.limits, 0, sizeof(req.limits));
		req.limits_set = 1u << i;
		ck_assert_int_eq(decide(open_rule), -EINVAL);
		snprintf(want, sizeof(want), "limit %s=0", iso_limit_name((enum iso_limit)i));
		ck_assert_msg(strstr(why, want) != NULL, "%s", why);
		ck_assert_ptr_null(plan.envp);
		/* The least each takes: cpus, the kernel's least quota. */
		req.limits[i] = iso_limit_min(i) - 1;
		ck_assert_int_eq(decide(open_rule), -EINVAL);
		req.limits[i] = iso_limit_min(i);
		ck_assert_int_eq(decide(open_rule), 0);
		ck_assert_uint_eq(plan.limits[i], iso_limit_min(i));
	}
}
END_TEST

START_TEST(timeout_within_and_above_ceiling)
{
	req.timeout_ms = 60000;
	ck_assert_int_eq(decide(strict), 0);
	ck_assert_uint_eq(plan.timeout_ms, 60000);
	req.timeout_ms = 60001;
	ck_assert_int_eq(decide(strict), -EACCES);
	ck_assert_ptr_nonnull(strstr(why, "timeout"));
}
END_TEST

START_TEST(timeout_beyond_a_year_refused_without_ceiling)
{
	req.timeout_ms = UINT64_MAX - 1;
	ck_assert_int_eq(decide(unbounded), -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "366 days"));
}
END_TEST

START_TEST(host_network_refused_by_none_only_rule)
{
	req.network = ISO_NETWORK_HOST;
	ck_assert_int_eq(decide(strict), -EACCES);
	ck_assert_ptr_nonnull(strstr(why, "network host"));
	ck_assert_int_eq(decide(open_rule), 0);
	ck_assert_int_eq(plan.network_none, 0);
}
END_TEST

/* What a rule lets a caller lend: nothing, reading, or both; anywhere in
 * the tree but its root and its own parts. */
START_TEST(grants_as_the_rule_allows_outside_the_trees_own_parts)
{
	req.read_paths[0] = "/home/u/data";
	ck_assert_int_eq(decide(open_rule), -EACCES);
	ck_assert_str_eq(why, "read grant of /home/u/data not allowed by t.conf:12 (grants)");
	req.program = "/bin/sh";
	ck_assert_int_eq(decide(one_script), 0);
	req.program = "/bin/true";
	ck_assert_int_eq(decide(strict), 0);
	req.write_paths[0] = "/home/u/out";
	req.program = "/bin/sh";
	ck_assert_int_eq(decide(one_script), -EACCES);
	req.program = "/bin/true";
	ck_assert_ptr_nonnull(strstr(why, "write grant of /home/u/out not allowed"));
	ck_assert_int_eq(decide(strict), 0);
	req.write_paths[0] = "/home/u/../out";
	ck_assert_int_eq(decide(strict), -EINVAL);
	for (size_t i = 0; i < 5; i++) {
		static const char *const kept[] = { "/", "/proc", "/proc/1", "/dev/shm", "/.iso" };

		req.write_paths[0] = kept[i];
		ck_assert_int_eq(decide(strict), -EINVAL);
		ck_assert_ptr_nonnull(strstr(why, "keeps /, /proc, /dev and /.iso for itself"));
	}
	req.write_paths[0] = "/devices";
	ck_assert_int_eq(decide(strict), 0);
}
END_TEST

/* The working directory is a path of the guest's tree, in normal form. */
START_TEST(cwd_absolute_and_normalized)
{
	req.cwd = "/home/u/job";
	ck_assert_int_eq(decide(strict), 0);
	ck_assert_str_eq(plan.cwd, "/home/u/job");
	req.cwd = "/home/u/../job";
	ck_assert_int_eq(decide(strict), -EINVAL);
	ck_assert_ptr_nonnull(strstr(why, "working directory"));
}
END_TEST

/* Grants come in path order, a directory before what is below it, each
 * path once; a path granted both ways is refused, naming it. */
START_TEST(grants_in_path_order_each_path_once)
{
	req.write_paths[0] = "/srv/out/b";
	req.read_paths[0] = "/srv/out/a/x";
	req.read_paths[1] = "/srv/out";
	req.read_paths[2] = "/srv/out/a";
	req.read_paths[3] = "/srv/out/a";
	ck_assert_int_eq(decide(strict), 0);
	ck_assert_uint_eq(plan.ngrants, 4);
	ck_assert_str_eq(plan.grants[0].path, "/srv/out");
	ck_assert_str_eq(plan.grants[1].path, "/srv/out/a");
	ck_assert_str_eq(plan.grants[2].path, "/srv/out/a/x");
	ck_assert_str_eq(plan.grants[3].path, "/srv/out/b");
	ck_assert_int_eq(plan.grants[0].write + plan.grants[1].write + plan.grants[2].write, 0);
	ck_assert_int_eq(plan.grants[3].write, 1);
	/* Each keeps where its descriptor is: reads, then writes. */
	ck_assert_uint_eq(plan.grants[0].fd_index, 1);
	ck_assert_uint_eq(plan.grants[2].fd_index, 0);
	ck_assert_uint_eq(plan.grants[3].fd_index, 4);
	plan_release(&plan);
	req.write_paths[1] = "/srv/out/a";
	ck_assert_int_eq(decide(strict), -EINVAL);
	ck_assert_str_eq(why, "/srv/out/a is granted both for reading and for writing");
}
END_TEST

/* Passed descriptors: each number once, never the channel's fd 3. */
START_TEST(passed_numbers_once_and_not_the_channels)
{
	req.pass_fds[0] = 7;
	req.pass_fds[1] = 3;
	req.npass = 2;
	ck_assert_int_eq(decide(open_rule), 0);
	ck_assert_uint_eq(plan.npass, 2);
	ck_assert_uint_eq(plan.pass[0].num, 7);
	ck_assert_int_eq(plan.pass[0].fd, -1);
	req.channel = ISO_CHANNEL_STREAM;
	ck_assert_int_eq(decide(open_rule), -EINVAL);
	ck_assert_str_eq(why, "pass-fd 3: the guest's channel is fd 3");
	req.channel = ISO_CHANNEL_NONE;
	req.pass_fds[1] = 7;
	ck_assert_int_eq(decide(open_rule), -EINVAL);
	ck_assert_str_eq(why, "pass-fd 7: given twice");
}
END_TEST

/* The reaper runs what the helper decided and nothing else: the plan
 * through the wire comes back the same, with the whole environment, the
 * grants in plan order with which are writable, and each descriptor where
 * the plan names it (stdio by the caller's mask, /dev/null for the rest;
 * the grants' in plan order; the passed ones). */
START_TEST(plan_crosses_the_wire_as_decided)
{
	static uint8_t buf[ISO_WIRE_MAX];
	static struct iso_wire_msg out, in;
	struct iso_plan got;
	int order[] = { 10, 11, 12, 13, 14, 15 };

	req.write_paths[0] = "/srv/out/b";
	req.read_paths[0] = "/srv/out";
	req.overrides[0] = "FOO=bar";
	req.program = "/usr/bin/python3";
	req.argv[1] = "-c";
	req.argc = 2;
	req.channel = ISO_CHANNEL_MESSAGES;
	req.stdio_mask = 5;
	req.cwd = "/srv/out/b";
	req.pass_fds[0] = 9;
	req.npass = 1;
	ck_assert_int_eq(decide(strict), 0);
	out.type = ISO_MSG_PLAN;
	plan_to_wire(&plan, 1900000007, &out.u.plan);
	long len = iso_wire_encode(&out, buf, sizeof(buf));
	ck_assert_int_gt(len, 0);
	ck_assert_int_eq(iso_wire_decode(buf, (size_t)len, &in, why, sizeof(why)), 0);
	ck_assert_uint_eq(in.u.plan.uid, 1900000007);
	/* Two stdio, two grants, one passed: one descriptor short fails. */
	ck_assert_int_eq(plan_from_wire(&in.u.plan, order, 4, 99, &got, why, sizeof(why)),
			 -EBADMSG);
	ck_assert_int_eq(plan_from_wire(&in.u.plan, order, 5, 99, &got, why, sizeof(why)), 0);
	ck_assert_str_eq(got.program, "/usr/bin/python3");
	ck_assert_str_eq(got.argv[1], "-c");
	ck_assert_ptr_null(got.argv[2]);
	ck_assert_mem_eq(got.limits, plan.limits, sizeof(plan.limits));
	ck_assert_uint_eq(got.timeout_ms, plan.timeout_ms);
	ck_assert_int_eq(got.network_none, 1);
	ck_assert_str_eq(got.cwd, "/srv/out/b");
	ck_assert_int_eq(got.channel, ISO_CHANNEL_MESSAGES);
	ck_assert_int_eq(got.stdio[0], 10);
	ck_assert_int_eq(got.stdio[1], 99);
	ck_assert_int_eq(got.stdio[2], 11);
	ck_assert_uint_eq(got.ngrants, 2);
	ck_assert_str_eq(got.grants[0].path, "/srv/out");
	ck_assert_int_eq(got.grants[0].write, 0);
	ck_assert_int_eq(got.grants[0].fd, 12);
	ck_assert_str_eq(got.grants[1].path, "/srv/out/b");
	ck_assert_int_eq(got.grants[1].write, 1);
	ck_assert_int_eq(got.grants[1].fd, 13);
	ck_assert_uint_eq(got.npass, 1);
	ck_assert_uint_eq(got.pass[0].num, 9);
	ck_assert_int_eq(got.pass[0].fd, 14);
	/* The decided environment, with the guest's own TMPDIR and the
	 * channel's number, and nothing of the caller's beyond it. */
	ck_assert_uint_eq(in.u.plan.nenv, 4);
	ck_assert_str_eq(in.u.plan.envp[0], "PATH=/usr/local/bin:/usr/bin:/bin");
	ck_assert_str_eq(in.u.plan.envp[1], "FOO=bar");
	ck_assert_str_eq(in.u.plan.envp[2], "TMPDIR=/tmp");
	ck_assert_str_eq(in.u.plan.envp[3], "ISOSPAWN_CHANNEL_FD=3");
}
END_TEST

/* No timeout at all only where the rule sets no ceiling; otherwise the
 * rule's default. */
START_TEST(no_timeout_only_without_a_ceiling)
{
	req.timeout_ms = ISO_TIMEOUT_NONE;
	ck_assert_int_eq(decide(strict), -EACCES);
	ck_assert_str_eq(why, "no timeout is not allowed by t.conf:8 (timeout): its timeout is "
			      "at most 60 s");
	ck_assert_int_eq(decide(unbounded), 0);
	ck_assert_uint_eq(plan.timeout_ms, 0);
	req.timeout_ms = 0;
	ck_assert_int_eq(decide(unbounded), 0);
	ck_assert_uint_eq(plan.timeout_ms, 5000);
}
END_TEST

START_TEST(environment_built_with_rule_and_strict_source)
{
	req.forward[0] = "LANG=C.UTF-8";
	req.forward[1] = "PYTHONPATH=/opt/x"; /* allow-listed, but not forwarded by the rule */
	req.nforward = 2;
	req.overrides[0] = "FOO=1";
	req.noverrides = 1;
	ck_assert_int_eq(decide(strict), 0);
	ck_assert_str_eq(plan.envp[0], "LANG=C.UTF-8");
	ck_assert_str_eq(plan.envp[1], "PATH=" ISO_GUEST_PATH);
	ck_assert_str_eq(plan.envp[2], "FOO=1");
	ck_assert_ptr_null(plan.envp[3]);
}
END_TEST

START_TEST(env_refusal_is_eacces_and_names_the_variable)
{
	req.overrides[0] = "BAR=1"; /* not in the rule's overrides */
	req.noverrides = 1;
	ck_assert_int_eq(decide(strict), -EACCES);
	ck_assert_ptr_nonnull(strstr(why, "BAR"));
	req.overrides[0] = "LD_PRELOAD=/x.so";
	ck_assert_int_eq(decide(open_rule), -EACCES);
	ck_assert_ptr_nonnull(strstr(why, "LD_PRELOAD"));
	ck_assert_ptr_null(strstr(why, "/x.so"));
	req.overrides[0] = NULL;
	req.noverrides = 0;
	req.forward[0] = "SECRET=x"; /* a client that bypasses the library */
	req.nforward = 1;
	ck_assert_int_eq(decide(open_rule), -EACCES);
}
END_TEST

/* Findings 5 and 6: with programs restricted, the rule lists its overrides
 * (the parser refuses it otherwise), so PATH, the names that steer what
 * the program runs and those no list of them names (OPENSSL_CONF and the
 * rest) are refused unless listed; with programs any an explicit PATH
 * wins. */
START_TEST(code_hooks_and_path_refused_where_programs_are_restricted)
{
	static const char *const refused[] = { "BASH_ENV=/tmp/x",
					       "PATH=/tmp",
					       "NODE_OPTIONS=--require=/tmp/x",
					       "GIT_CONFIG_COUNT=1",
					       "OPENSSL_CONF=/tmp/x.cnf",
					       "LUA_INIT=@/tmp/x.lua",
					       "ZDOTDIR=/tmp",
					       "GIT_SSH_COMMAND=/tmp/x",
					       NULL };

	req.program = "/bin/sh";
	req.noverrides = 1;
	for (const char *const *o = refused; *o; o++) {
		req.overrides[0] = *o;
		ck_assert_int_eq(decide(one_script), -EACCES);
		ck_assert_msg(strncmp(why + strlen("override "), *o, strcspn(*o, "=")) == 0,
			      "why: %s", why);
		ck_assert_int_eq(decide(open_rule), 0);
	}
	req.overrides[0] = "PATH=/opt/bin";
	ck_assert_int_eq(decide(open_rule), 0);
	ck_assert_str_eq(plan.envp[0], "PATH=/opt/bin");
	/* A rule that lists the name allows it. */
	req.program = "/bin/true";
	ck_assert_int_eq(decide(strict), 0);
	ck_assert_str_eq(plan.envp[0], "PATH=/opt/bin");
	req.overrides[0] = "FOO=1";
	req.program = "/bin/sh";
	ck_assert_int_eq(decide(one_script), 0);
}
END_TEST

/* Every refusal in the caller's terms: a limit as the policy spells it,
 * a timeout in seconds, and the file, line and keyword of the policy that
 * would allow it - the rule's own line, or the rule's first line where the
 * value is built in. */
START_TEST(refusals_name_the_line_and_keyword_in_the_callers_terms)
{
	req.program = "/usr/bin/perl";
	ck_assert_int_eq(decide(strict), -EACCES);
	ck_assert_str_eq(why, "program /usr/bin/perl is not allowed by t.conf:3 (programs)");
	req.program = "/bin/true";
	req.limits_set = 1u << ISO_LIMIT_AS;
	req.limits[ISO_LIMIT_AS] = 2ull << 30;
	ck_assert_int_eq(decide(strict), -EACCES);
	ck_assert_str_eq(why, "limit as=2G is above the ceiling as=1G of t.conf:7 (limit as)");
	req.limits[ISO_LIMIT_AS] = UINT64_MAX;
	ck_assert_int_eq(decide(strict), -EACCES);
	ck_assert_str_eq(why,
			 "limit as=unlimited is above the ceiling as=1G of t.conf:7 (limit as)");
	req.limits_set = 1u << ISO_LIMIT_NOFILE;
	req.limits[ISO_LIMIT_NOFILE] = 1025;
	ck_assert_int_eq(decide(strict), -EACCES);
	ck_assert_str_eq(why, "limit nofile=1025 is above the ceiling nofile=1024 of t.conf:1 "
			      "(limit nofile)");
	req.limits_set = 0;
	req.timeout_ms = 90000;
	ck_assert_int_eq(decide(strict), -EACCES);
	ck_assert_str_eq(why, "timeout 90 s is above the ceiling 60 s of t.conf:8 (timeout)");
	req.timeout_ms = 60500;
	ck_assert_int_eq(decide(strict), -EACCES);
	ck_assert_str_eq(why, "timeout 60.5 s is above the ceiling 60 s of t.conf:8 (timeout)");
	req.timeout_ms = 0;
	req.network = ISO_NETWORK_HOST;
	ck_assert_int_eq(decide(strict), -EACCES);
	ck_assert_str_eq(why, "network host is not allowed by t.conf:9 (network)");
	req.network = ISO_NETWORK_DEFAULT;
	req.read_paths[0] = "/srv/x";
	ck_assert_int_eq(decide(open_rule), -EACCES);
	ck_assert_str_eq(why, "read grant of /srv/x not allowed by t.conf:12 (grants)");
	req.read_paths[0] = NULL;
	req.overrides[0] = "BAR=1";
	req.noverrides = 1;
	ck_assert_int_eq(decide(strict), -EACCES);
	ck_assert_str_eq(why, "override BAR: not allowed by policy: t.conf:4 (overrides)");
	req.overrides[0] = "LD_PRELOAD=/x.so";
	ck_assert_int_eq(decide(open_rule), -EACCES);
	ck_assert_str_eq(why, "override LD_PRELOAD: loader-level variable not allowed by policy: "
			      "t.conf:12 (allow-unsafe)");
	req.overrides[0] = "BASH_ENV=/x";
	req.program = "/bin/sh";
	ck_assert_int_eq(decide(one_script), -EACCES);
	ck_assert_msg(strstr(why, "t.conf:19 (overrides)") != NULL, "%s", why);
}
END_TEST

/* A value a rule inherits is named where the defaults block sets it. */
START_TEST(refusal_names_the_defaults_line_a_rule_inherits)
{
	static const char text[] = "defaults {\n  limit as 2G\n  grants none\n}\n"
				   "rule user:#7 {\npool 1900000300-1900000309\nprograms any\n}\n";
	struct iso_policy d;

	ck_assert_int_eq(policy_parse(text, sizeof(text) - 1, "d.conf", &d, NULL, why, sizeof(why)),
			 0);
	req.limits_set = 1u << ISO_LIMIT_AS;
	req.limits[ISO_LIMIT_AS] = 3ull << 30;
	ck_assert_int_eq(decide(&d.rules[0]), -EACCES);
	ck_assert_str_eq(why, "limit as=3G is above the ceiling as=2G of d.conf:2 (limit as)");
	req.limits_set = 0;
	req.read_paths[0] = "/srv/x";
	ck_assert_int_eq(decide(&d.rules[0]), -EACCES);
	ck_assert_str_eq(why, "read grant of /srv/x not allowed by d.conf:3 (grants)");
	policy_free(&d);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("request");
	TCase *tc = tcase_create("decide");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, listed_program_accepted_with_rule_defaults);
	tcase_add_test(tc, unlisted_program_refused_by_name);
	tcase_add_test(tc, program_path_must_be_normal);
	tcase_add_test(tc, limit_below_ceiling_is_used);
	tcase_add_test(tc, limit_above_ceiling_refused_by_name_not_lowered);
	tcase_add_test(tc, zero_limit_refused_by_name);
	tcase_add_test(tc, timeout_within_and_above_ceiling);
	tcase_add_test(tc, timeout_beyond_a_year_refused_without_ceiling);
	tcase_add_test(tc, host_network_refused_by_none_only_rule);
	tcase_add_test(tc, grants_as_the_rule_allows_outside_the_trees_own_parts);
	tcase_add_test(tc, cwd_absolute_and_normalized);
	tcase_add_test(tc, grants_in_path_order_each_path_once);
	tcase_add_test(tc, passed_numbers_once_and_not_the_channels);
	tcase_add_test(tc, plan_crosses_the_wire_as_decided);
	tcase_add_test(tc, no_timeout_only_without_a_ceiling);
	tcase_add_test(tc, environment_built_with_rule_and_strict_source);
	tcase_add_test(tc, env_refusal_is_eacces_and_names_the_variable);
	tcase_add_test(tc, code_hooks_and_path_refused_where_programs_are_restricted);
	tcase_add_test(tc, refusals_name_the_line_and_keyword_in_the_callers_terms);
	tcase_add_test(tc, refusal_names_the_defaults_line_a_rule_inherits);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
