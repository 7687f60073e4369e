/*
 * unit_confine.c - the decisions of helper/confine.c that need neither
 * privilege nor any kernel feature: whether Landlock is used, and what
 * confine_prepare() makes of a rule. Applying the mechanisms to processes
 * is tested in live_kernel.c, which probes the kernel first.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "confine.h"
#include "hygiene.h"

/* ------------------------------------------------------------------ */
/* landlock_decide                                                      */

START_TEST(landlock_decide_table)
{
	static const struct {
		enum iso_landlock_mode mode;
		int min_abi, abi, result, degraded;
	} rows[] = {
		{ ISO_LANDLOCK_REQUIRED, 0, 0, -ENOSYS, 0 },
		{ ISO_LANDLOCK_REQUIRED, 1, 0, -ENOSYS, 0 },
		{ ISO_LANDLOCK_REQUIRED, 4, 3, -ENOSYS, 0 },
		{ ISO_LANDLOCK_REQUIRED, 4, 4, 1, 0 },
		{ ISO_LANDLOCK_REQUIRED, 0, 1, 1, 0 },
		{ ISO_LANDLOCK_OPTIONAL, 0, 0, 0, 1 },
		{ ISO_LANDLOCK_OPTIONAL, 6, 5, 1, 1 }, /* best effort */
		{ ISO_LANDLOCK_OPTIONAL, 6, 7, 1, 0 },
		{ ISO_LANDLOCK_OFF, 0, 0, 0, 0 },
		{ ISO_LANDLOCK_OFF, 3, 7, 0, 0 },
		{ ISO_LANDLOCK_OFF, 7, 1, 0, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof rows / sizeof *rows; i++) {
		int degraded = -1;

		ck_assert_int_eq(
		    landlock_decide(rows[i].mode, rows[i].min_abi, rows[i].abi, &degraded),
		    rows[i].result);
		ck_assert_int_eq(degraded, rows[i].degraded);
	}
}
END_TEST

START_TEST(landlock_decide_every_abi_and_minimum)
{
	int mode, min_abi, abi;

	for (mode = ISO_LANDLOCK_REQUIRED; mode <= ISO_LANDLOCK_OFF; mode++)
		for (min_abi = 0; min_abi <= 7; min_abi++)
			for (abi = 0; abi <= 7; abi++) {
				int lacking = abi == 0 || abi < min_abi;
				int degraded = -1, want, want_degraded = 0;

				if (mode == ISO_LANDLOCK_OFF)
					want = 0;
				else if (!lacking)
					want = 1;
				else if (mode == ISO_LANDLOCK_OPTIONAL)
					want = abi > 0, want_degraded = 1;
				else
					want = -ENOSYS;
				ck_assert_int_eq(landlock_decide(mode, min_abi, abi, &degraded),
						 want);
				ck_assert_int_eq(degraded, want_degraded);
			}
}
END_TEST

/* ------------------------------------------------------------------ */
/* confine_prepare                                                      */

static struct iso_rule make_rule(enum iso_seccomp_profile profile, enum iso_landlock_mode landlock)
{
	struct iso_rule rule;

	memset(&rule, 0, sizeof rule);
	rule.line = 7;
	rule.network_default = ISO_NETWORK_HOST;
	rule.seccomp = profile;
	rule.seccomp_action = ISO_SECCOMP_ERRNO;
	rule.landlock = landlock;
	return rule;
}

static void prepare(const struct iso_rule *rule, struct iso_confine *c)
{
	char why[256] = "";

	ck_assert_msg(confine_prepare(rule, c, why, sizeof why) == 0, "confine_prepare: %s", why);
}

START_TEST(prepare_landlock_required_beyond_kernel_refused)
{
	struct iso_rule rule = make_rule(ISO_SECCOMP_NONE, ISO_LANDLOCK_REQUIRED);
	struct iso_confine c;
	char why[256] = "";

	rule.landlock_min_abi = 99;
	rule.at[ISO_KW_LANDLOCK] = (struct iso_origin){ "t.conf", 8, ISO_SET_RULE };
	rule.at[ISO_KW_LANDLOCK_ABI] = (struct iso_origin){ "t.conf", 9, ISO_SET_RULE };
	ck_assert_int_eq(confine_prepare(&rule, &c, why, sizeof why), -ENOSYS);
	/* The line that would allow it: the ABI's, or without Landlock at
	 * all, 'landlock required'. */
	ck_assert_msg(strstr(why, c.landlock_abi > 0 ? "; required by t.conf:9 (landlock-abi)"
						     : "; required by t.conf:8 (landlock)"),
		      "%s", why);
}
END_TEST

/* `landlock optional` below the rule's ABI applies what the kernel has
 * (best effort, as the kernel's sandboxer sample) and notes it; only a
 * kernel without Landlock runs the guest without it. */
START_TEST(prepare_landlock_optional_beyond_kernel_applies_what_it_has)
{
	struct iso_rule rule = make_rule(ISO_SECCOMP_NONE, ISO_LANDLOCK_OPTIONAL);
	struct iso_confine c;
	int abi = landlock_abi_version();

	rule.landlock_min_abi = 99;
	prepare(&rule, &c);
	ck_assert_int_eq(c.landlock_on, abi > 0);
	ck_assert_msg(
	    strstr(c.notes, abi > 0 ? "running with what the kernel has" : "running without it"),
	    "%s", c.notes);
	free(c.bpf);
}
END_TEST

START_TEST(landlock_gap_names_what_the_kernel_lacks)
{
	char gap[400];

	landlock_gap(3, 0, 6, gap, sizeof gap);
	ck_assert_str_eq(gap, "kernel ABI 3 is below the rule's 6, so no TCP port rules "
			      "(ABI 4), device ioctl rules (ABI 5), signal and "
			      "abstract-socket scoping (ABI 6)");
	landlock_gap(5, 0, 6, gap, sizeof gap);
	ck_assert_str_eq(gap, "kernel ABI 5 is below the rule's 6, so no signal and "
			      "abstract-socket scoping (ABI 6)");
	landlock_gap(1, 0, 7, gap, sizeof gap);
	ck_assert_ptr_nonnull(strstr(gap, "truncate rules (ABI 3)"));
	ck_assert_ptr_nonnull(strstr(gap, "audit log flags (ABI 7)"));
	/* Not built, or built and disabled at boot: two different fixes. */
	landlock_gap(0, ENOSYS, 1, gap, sizeof gap);
	ck_assert_str_eq(gap, "not in this kernel (ENOSYS)");
	landlock_gap(0, EOPNOTSUPP, 1, gap, sizeof gap);
	ck_assert_ptr_nonnull(strstr(gap, "disabled at boot (EOPNOTSUPP"));
}
END_TEST

START_TEST(prepare_landlock_off_not_noted)
{
	struct iso_rule rule = make_rule(ISO_SECCOMP_NONE, ISO_LANDLOCK_OFF);
	struct iso_confine c;

	prepare(&rule, &c);
	ck_assert_int_eq(c.landlock_on, 0);
	/* No degraded mode, nothing noted (a missing cgroup is cgroup.c's). */
	ck_assert_str_eq(c.notes, "");
	ck_assert_int_eq(c.landlock_abi, landlock_abi_version());
	free(c.bpf);
}
END_TEST

START_TEST(prepare_seccomp_none_has_no_filter)
{
	struct iso_rule rule = make_rule(ISO_SECCOMP_NONE, ISO_LANDLOCK_OFF);
	struct iso_confine c;
	char why[256] = "";

	prepare(&rule, &c);
	ck_assert_ptr_null(c.bpf);
	ck_assert_uint_eq(c.bpf_len, 0);
	ck_assert_int_eq(confine_apply_seccomp(&c, why, sizeof why), 0);
	free(c.bpf);
}
END_TEST

START_TEST(prepare_unknown_syscall_name_refused)
{
	struct iso_rule rule = make_rule(ISO_SECCOMP_DEFAULT, ISO_LANDLOCK_OFF);
	char *deny[] = { "getppid", "no_such_syscall_xyz", NULL };
	struct iso_confine c;
	char why[256] = "";

	rule.seccomp_deny = deny;
	ck_assert_int_eq(confine_prepare(&rule, &c, why, sizeof why), -EINVAL);
	ck_assert_msg(strstr(why, "no_such_syscall_xyz"), "%s", why);
	free(c.bpf);
}
END_TEST

/* sched_getscheduler() reports SCHED_RESET_ON_FORK added to the policy,
 * which a comparison with SCHED_FIFO alone would miss: a caller that set
 * its helper real-time with the flag, before the helper had made its real
 * uid root, would leave it real-time. Run on the test process itself,
 * which root may make real-time. */
START_TEST(sched_gives_up_a_real_time_policy_marked_reset_on_fork)
{
	struct sched_param fifo = { .sched_priority = 10 };
	char why[256] = "";

	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &fifo) < 0) {
		fprintf(stderr,
			"SKIP-RUN: sched_gives_up_a_real_time_policy_marked_reset_on_fork: "
			"cannot take SCHED_FIFO here (%s)\n",
			strerror(errno));
		return;
	}
	ck_assert_msg(hygiene_sched(why, sizeof why) == 0, "%s", why);
	ck_assert_int_eq(sched_getscheduler(0), SCHED_OTHER);
}
END_TEST

static Suite *confine_suite(void)
{
	Suite *s = suite_create("confine");
	TCase *tc;

	tc = tcase_create("landlock_decide");
	tcase_add_test(tc, landlock_decide_table);
	tcase_add_test(tc, landlock_decide_every_abi_and_minimum);
	suite_add_tcase(s, tc);

	tc = tcase_create("prepare");
	tcase_add_test(tc, prepare_landlock_required_beyond_kernel_refused);
	tcase_add_test(tc, prepare_landlock_optional_beyond_kernel_applies_what_it_has);
	tcase_add_test(tc, landlock_gap_names_what_the_kernel_lacks);
	tcase_add_test(tc, prepare_landlock_off_not_noted);
	tcase_add_test(tc, prepare_seccomp_none_has_no_filter);
	tcase_add_test(tc, prepare_unknown_syscall_name_refused);
	tcase_add_test(tc, sched_gives_up_a_real_time_policy_marked_reset_on_fork);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(confine_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
