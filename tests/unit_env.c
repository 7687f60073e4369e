/*
 * unit_env.c - iso_build_env() and the shared name/value checks (no
 * privilege needed).
 */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "isospawn.h"

#define WHY_SIZE 256

static const char *const forwarded[] = { ISO_FORWARDED_NAMES, NULL };
#define FORWARDED_COUNT (sizeof(forwarded) / sizeof(forwarded[0]) - 1)

/* glibc 2.35 sysdeps/generic/unsecvars.h, plus GLIBC_TUNABLES. */
static const char *const unsafe[] = {
	"GCONV_PATH",
	"GETCONF_DIR",
	"GLIBC_TUNABLES",
	"HOSTALIASES",
	"LD_AUDIT",
	"LD_DEBUG",
	"LD_DEBUG_OUTPUT",
	"LD_DYNAMIC_WEAK",
	"LD_HWCAP_MASK",
	"LD_LIBRARY_PATH",
	"LD_ORIGIN_PATH",
	"LD_PRELOAD",
	"LD_PROFILE",
	"LD_SHOW_AUXV",
	"LD_USE_LOAD_BIAS",
	"LOCALDOMAIN",
	"LOCPATH",
	"MALLOC_TRACE",
	"NIS_PATH",
	"NLSPATH",
	"RESOLV_HOST_CONF",
	"RES_OPTIONS",
	"TMPDIR",
	"TZDIR",
	/* by prefix */
	"LD_BIND_NOW",
	"LD_ANYTHING",
	"MALLOC_ARENA_MAX",
	"MALLOC_CHECK_",
	NULL,
};

static const char *const only_lang[] = { "LANG", NULL };

static size_t env_count(char **env)
{
	size_t n = 0;

	while (env[n] != NULL)
		n++;
	return n;
}

/* The value of name in env, or NULL. */
static const char *env_value(char **env, const char *name)
{
	size_t len = strlen(name);
	size_t i;

	for (i = 0; env[i] != NULL; i++)
		if (strncmp(env[i], name, len) == 0 && env[i][len] == '=')
			return env[i] + len + 1;
	return NULL;
}

/* Whether list holds the name, as a bare name or as "NAME=value". */
static int in_list(const char *const *list, const char *name, size_t len)
{
	for (; *list != NULL; list++)
		if (strcspn(*list, "=") == len && memcmp(*list, name, len) == 0)
			return 1;
	return 0;
}

/* Expect a refusal with `code` whose message mentions `needle`. */
static void expect_refused(const char *const *source, const char *const *overrides,
			   const struct iso_env_rules *rules, unsigned flags, int code,
			   const char *needle)
{
	char why[WHY_SIZE] = "";
	char **env = (char **)&env; /* not NULL, so the reset is visible */
	int rc = iso_build_env(source, overrides, rules, flags, &env, why, sizeof(why));

	ck_assert_int_eq(rc, code);
	ck_assert_ptr_null(env);
	ck_assert_msg(strstr(why, needle) != NULL, "\"%s\" not in \"%s\"", needle, why);
	ck_assert_ptr_null(strchr(why, '\n'));
}

static char **expect_built(const char *const *source, const char *const *overrides,
			   const struct iso_env_rules *rules, unsigned flags)
{
	char why[WHY_SIZE] = "";
	char **env = NULL;
	int rc = iso_build_env(source, overrides, rules, flags, &env, why, sizeof(why));

	ck_assert_msg(rc == 0, "refused (%d): %s", rc, why);
	ck_assert_ptr_nonnull(env);
	return env;
}

START_TEST(test_secret_in_source_is_withheld)
{
	const char *const source[] = {
		"MY_SECRET_TOKEN=hunter2-supersecret",
		"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		"GITHUB_TOKEN=ghp_supersecret",
		"LANG=C.UTF-8",
		NULL,
	};
	char **env = expect_built(source, NULL, NULL, 0);
	size_t i;

	ck_assert_ptr_null(env_value(env, "MY_SECRET_TOKEN"));
	ck_assert_ptr_null(env_value(env, "AWS_SECRET_ACCESS_KEY"));
	ck_assert_ptr_null(env_value(env, "GITHUB_TOKEN"));
	for (i = 0; env[i] != NULL; i++)
		ck_assert_ptr_null(strstr(env[i], "secret"));
	ck_assert_str_eq(env_value(env, "LANG"), "C.UTF-8");
	free(env);
}
END_TEST

/* xorshift32: the same sequence on every machine. */
static uint32_t next_random(uint32_t *state)
{
	uint32_t x = *state;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *state = x;
}

START_TEST(test_result_names_are_subset_of_allowlist_path_and_overrides)
{
	static const char *const names[] = {
		ISO_FORWARDED_NAMES,
		"PATH",
		"HOME",
		"MY_SECRET_TOKEN",
		"LD_PRELOAD",
		"GCONV_PATH",
		"1BAD",
		"BAD-NAME",
		"",
		"lang",
		"PYTHONPATHX",
		"LC_MESSAGES",
		"TMPDIRX",
	};
	static const char *const override_names[] = {
		"FOO", "BAR", "PATH", "LANG", "PYTHONPATH", "LC_MESSAGES",
	};
	static const char value_bytes[] = "abcXYZ019_-:, ";
	uint32_t state = 0x15050a1;
	int round;

	for (round = 0; round < 2000; round++) {
		char entries[40][48], ov_entries[6][32];
		const char *source[41], *overrides[7];
		size_t n = next_random(&state) % 40, nov = 0, i, j;
		char **env;

		for (i = 0; i < n; i++) {
			const char *name =
			    names[next_random(&state) % (sizeof(names) / sizeof(names[0]))];
			int len = snprintf(entries[i], sizeof(entries[i]), "%s%s%s", name,
					   next_random(&state) % 8 ? "=" : "",
					   strcmp(name, "TMPDIR") ? "" : "/");
			size_t vlen = next_random(&state) % 12;

			for (j = 0; j < vlen; j++)
				entries[i][len + j] =
				    value_bytes[next_random(&state) % (sizeof(value_bytes) - 1)];
			entries[i][len + vlen] = '\0';
			source[i] = entries[i];
		}
		source[n] = NULL;
		for (i = 0; i < 6; i++)
			if (next_random(&state) % 3 == 0) {
				snprintf(ov_entries[nov], sizeof(ov_entries[0]), "%s=v%u",
					 override_names[i], (unsigned)next_random(&state) % 100);
				overrides[nov] = ov_entries[nov];
				nov++;
			}
		overrides[nov] = NULL;

		env = expect_built(source, overrides, NULL, 0);
		for (i = 0; env[i] != NULL; i++) {
			size_t len = strcspn(env[i], "=");

			ck_assert_msg(in_list(forwarded, env[i], len) ||
					  (len == 4 && !memcmp(env[i], "PATH", 4)) ||
					  in_list(overrides, env[i], len),
				      "round %d: unexpected %.*s", round, (int)len, env[i]);
			for (j = 0; j < i; j++)
				ck_assert_msg(strcspn(env[j], "=") != len ||
						  memcmp(env[j], env[i], len),
					      "round %d: %.*s twice", round, (int)len, env[i]);
		}
		free(env);
		/* Where programs are restricted, an override of PATH is
		 * refused and the fixed value always stands. */
		if (in_list(overrides, "PATH", 4)) {
			ck_assert_int_eq(iso_build_env(source, overrides, NULL,
						       ISO_ENV_PROGRAMS_RESTRICTED, &env, NULL, 0),
					 -EPERM);
			continue;
		}
		env = expect_built(source, overrides, NULL, ISO_ENV_PROGRAMS_RESTRICTED);
		ck_assert_str_eq(env_value(env, "PATH"), ISO_GUEST_PATH);
		free(env);
	}
}
END_TEST

START_TEST(test_path_is_fixed_whatever_source_says)
{
	const char *const source[] = { "PATH=/home/evil/bin:/usr/bin", "PATH=.", NULL };
	char **env = expect_built(source, NULL, NULL, 0);

	ck_assert_uint_eq(env_count(env), 1);
	ck_assert_str_eq(env[0], "PATH=" ISO_GUEST_PATH);
	free(env);

	env = expect_built(NULL, NULL, NULL, 0);
	ck_assert_uint_eq(env_count(env), 1);
	ck_assert_str_eq(env[0], "PATH=" ISO_GUEST_PATH);
	free(env);
}
END_TEST

START_TEST(test_override_wins_over_forwarded_value)
{
	const char *const source[] = { "LANG=C", "PYTHONPATH=/srv/lib", NULL };
	const char *const overrides[] = { "LANG=fr_FR.UTF-8", "PYTHONPATH=/opt/lib", NULL };
	char **env = expect_built(source, overrides, NULL, 0);

	ck_assert_str_eq(env_value(env, "LANG"), "fr_FR.UTF-8");
	ck_assert_str_eq(env_value(env, "PYTHONPATH"), "/opt/lib");
	ck_assert_uint_eq(env_count(env), 3);
	free(env);
}
END_TEST

START_TEST(test_override_order_and_in_place_replacement)
{
	const char *const source[] = { "LANG=C", "PYTHONPATH=/a", NULL };
	const char *const overrides[] = { "ZED=1", "LANG=fr_FR.UTF-8", "ALPHA=2", "PATH=/opt/bin",
					  NULL };
	const char *const want[] = { "PYTHONPATH=/a", "LANG=fr_FR.UTF-8", "PATH=/opt/bin", "ZED=1",
				     "ALPHA=2" };
	char **env = expect_built(source, overrides, NULL, 0);
	size_t i;

	ck_assert_uint_eq(env_count(env), 5);
	for (i = 0; i < 5; i++)
		ck_assert_str_eq(env[i], want[i]);
	free(env);
}
END_TEST

START_TEST(test_every_forwarded_name_is_forwarded_in_order)
{
	const char *source[FORWARDED_COUNT + 3];
	char entries[FORWARDED_COUNT][64];
	char **env;
	size_t i;

	/* Reverse order, with noise around, to show the output order is
	 * ISO_FORWARDED_NAMES order. */
	source[0] = "HOME=/root";
	for (i = 0; i < FORWARDED_COUNT; i++) {
		snprintf(
		    entries[i], sizeof(entries[i]), "%s=%s", forwarded[FORWARDED_COUNT - 1 - i],
		    strcmp(forwarded[FORWARDED_COUNT - 1 - i], "TMPDIR") ? "value" : "/tmp/value");
		source[i + 1] = entries[i];
	}
	source[FORWARDED_COUNT + 1] = "USER=root";
	source[FORWARDED_COUNT + 2] = NULL;

	env = expect_built(source, NULL, NULL, 0);
	ck_assert_uint_eq(env_count(env), FORWARDED_COUNT + 1);
	for (i = 0; i < FORWARDED_COUNT; i++) {
		size_t len = strlen(forwarded[i]);

		ck_assert_int_eq(strncmp(env[i], forwarded[i], len), 0);
		ck_assert_int_eq(env[i][len], '=');
	}
	ck_assert_str_eq(env[FORWARDED_COUNT], "PATH=" ISO_GUEST_PATH);
	free(env);
}
END_TEST

START_TEST(test_first_source_occurrence_wins)
{
	const char *const source[] = { "LANG=C", "LANG=de_DE.UTF-8", NULL };
	char **env = expect_built(source, NULL, NULL, 0);

	ck_assert_str_eq(env_value(env, "LANG"), "C");
	ck_assert_uint_eq(env_count(env), 2);
	free(env);
}
END_TEST

START_TEST(test_malformed_source_entries_are_skipped)
{
	const char *const source[] = { "LANG", "=C", "1LANG=C", "LC-ALL=C", "LC_ALL=C", NULL };
	char **env = expect_built(source, NULL, NULL, 0);

	ck_assert_uint_eq(env_count(env), 2);
	ck_assert_str_eq(env[0], "LC_ALL=C");
	free(env);
}
END_TEST

START_TEST(test_forward_rules_narrow)
{
	const char *const source[] = { "LANG=C", "PYTHONPATH=/srv/lib", "LD_LIBRARY_PATH=/opt/lib",
				       NULL };
	const char *const not_forwardable[] = { "LANG", "HOME", NULL };
	struct iso_env_rules rules = { .forward = only_lang };
	char **env = expect_built(source, NULL, &rules, 0);

	ck_assert_uint_eq(env_count(env), 2);
	ck_assert_str_eq(env[0], "LANG=C");
	free(env);

	rules.forward = not_forwardable;
	expect_refused(source, NULL, &rules, 0, -EINVAL, "HOME");
}
END_TEST

START_TEST(test_malformed_names_refused_with_name)
{
	char long_name[ISO_ENV_NAME_MAX + 1 + 3];
	const char *overrides[2] = { NULL, NULL };

	overrides[0] = "=value";
	expect_refused(NULL, overrides, NULL, 0, -EINVAL, "(empty name)");
	overrides[0] = "1ABC=value";
	expect_refused(NULL, overrides, NULL, 0, -EINVAL, "override 1ABC:");
	overrides[0] = "A-B=value";
	expect_refused(NULL, overrides, NULL, 0, -EINVAL, "override A-B:");
	overrides[0] = "NOEQUALS";
	expect_refused(NULL, overrides, NULL, 0, -EINVAL, "not NAME=value");

	memset(long_name, 'N', ISO_ENV_NAME_MAX + 1);
	strcpy(long_name + ISO_ENV_NAME_MAX + 1, "=v");
	overrides[0] = long_name;
	expect_refused(NULL, overrides, NULL, 0, -EINVAL, "override NNNN");

	long_name[ISO_ENV_NAME_MAX] = '=';
	long_name[ISO_ENV_NAME_MAX + 1] = '\0';
	free(expect_built(NULL, overrides, NULL, 0));

	ck_assert_int_eq(iso_env_name_valid("A=B", 3), 0);
	ck_assert_int_eq(iso_env_name_valid("", 0), 0);
	ck_assert_int_eq(iso_env_name_valid("9A", 2), 0);
	ck_assert_int_eq(iso_env_name_valid("A-B", 3), 0);
	ck_assert_int_eq(iso_env_name_valid("_a9Z", 4), 1);
	ck_assert_int_eq(iso_env_name_valid(long_name, ISO_ENV_NAME_MAX), 1);
	memset(long_name, 'N', ISO_ENV_NAME_MAX + 1);
	ck_assert_int_eq(iso_env_name_valid(long_name, ISO_ENV_NAME_MAX + 1), 0);
}
END_TEST

START_TEST(test_hostile_name_cannot_forge_a_log_line)
{
	const char *const overrides[] = { "A\nB=value", NULL };

	expect_refused(NULL, overrides, NULL, 0, -EINVAL, "override A?B:");
}
END_TEST

START_TEST(test_each_unsafe_name_refused_unless_allowed)
{
	/* Narrowed forwarding, so LD_LIBRARY_PATH and TMPDIR are not exempt
	 * as forwardable names. */
	struct iso_env_rules rules = { .forward = only_lang };
	size_t i;

	for (i = 0; unsafe[i] != NULL; i++) {
		char entry[64], need[64];
		const char *const overrides[] = { entry, NULL };
		const char *const allow[] = { unsafe[i], NULL };
		char **env;

		ck_assert_int_eq(iso_env_is_unsafe_name(unsafe[i], strlen(unsafe[i])), 1);
		snprintf(entry, sizeof(entry), "%s=/tmp/x", unsafe[i]);
		snprintf(need, sizeof(need), "override %s: loader-level", unsafe[i]);
		expect_refused(NULL, overrides, &rules, 0, -EPERM, need);

		rules.unsafe_allowed = allow;
		env = expect_built(NULL, overrides, &rules, 0);
		ck_assert_str_eq(env_value(env, unsafe[i]), "/tmp/x");
		free(env);
		rules.unsafe_allowed = NULL;
	}
	ck_assert_int_eq(iso_env_is_unsafe_name("LANG", 4), 0);
	ck_assert_int_eq(iso_env_is_unsafe_name("LDX_PRELOAD", 11), 0);
	ck_assert_int_eq(iso_env_is_unsafe_name("PYTHONPATH", 10), 0);
}
END_TEST

START_TEST(test_loader_names_refused_by_default)
{
	const char *overrides[2] = { "LD_PRELOAD=/tmp/evil.so", NULL };

	expect_refused(NULL, overrides, NULL, 0, -EPERM,
		       "override LD_PRELOAD: loader-level variable not "
		       "allowed by policy");
	overrides[0] = "GCONV_PATH=/tmp/evil";
	expect_refused(NULL, overrides, NULL, 0, -EPERM, "override GCONV_PATH: loader-level");
}
END_TEST

START_TEST(test_ld_library_path_override_allowed_by_default_not_when_unforwarded)
{
	const char *const overrides[] = { "LD_LIBRARY_PATH=/opt/conda/lib", NULL };
	const char *const listed[] = { "LD_LIBRARY_PATH", NULL };
	struct iso_env_rules rules = { .forward = only_lang };
	char **env = expect_built(NULL, overrides, NULL, 0);

	ck_assert_str_eq(env_value(env, "LD_LIBRARY_PATH"), "/opt/conda/lib");
	free(env);

	expect_refused(NULL, overrides, &rules, 0, -EPERM,
		       "override LD_LIBRARY_PATH: loader-level");
	/* Listing it as an override does not make a loader name safe. */
	rules.overrides = listed;
	expect_refused(NULL, overrides, &rules, 0, -EPERM,
		       "override LD_LIBRARY_PATH: loader-level");
}
END_TEST

START_TEST(test_rules_overrides_restricts)
{
	const char *const listed[] = { "FOO", "PYTHONPATH", NULL };
	const char *overrides[2] = { "FOO=1", NULL };
	struct iso_env_rules rules = { .overrides = listed };

	free(expect_built(NULL, overrides, &rules, 0));
	overrides[0] = "BAR=1";
	expect_refused(NULL, overrides, &rules, 0, -EPERM, "override BAR: not allowed by policy");
	overrides[0] = "PATH=/opt/bin";
	expect_refused(NULL, overrides, &rules, 0, -EPERM, "override PATH:");
}
END_TEST

START_TEST(test_unforwarded_name_refused_as_override_unless_listed)
{
	const char *const overrides[] = { "PYTHONPATH=/srv/lib", NULL };
	const char *const listed[] = { "PYTHONPATH", NULL };
	struct iso_env_rules rules = { .forward = only_lang };
	char **env;

	expect_refused(NULL, overrides, &rules, 0, -EPERM,
		       "override PYTHONPATH: not forwarded by policy");
	rules.overrides = listed;
	env = expect_built(NULL, overrides, &rules, 0);
	ck_assert_str_eq(env_value(env, "PYTHONPATH"), "/srv/lib");
	free(env);
	rules.overrides = NULL;
	rules.unsafe_allowed = listed;
	free(expect_built(NULL, overrides, &rules, 0));
}
END_TEST

/* Names that steer what a restricted program runs. */
static const char *const code_hooks[] = {
	"BASH_ENV",
	"ENV",
	"SHELLOPTS",
	"BASHOPTS",
	"PS4",
	"IFS",
	"PERL5LIB",
	"PERL5OPT",
	"PERLLIB",
	"PYTHONSTARTUP",
	"PYTHONINSPECT",
	"PYTHONUSERBASE",
	"RUBYLIB",
	"RUBYOPT",
	"NODE_OPTIONS",
	"NODE_PATH",
	"JAVA_TOOL_OPTIONS",
	"_JAVA_OPTIONS",
	"CLASSPATH",
	"GIT_CONFIG",
	"GIT_CONFIG_COUNT",
	"GIT_CONFIG_KEY_0",
	"GIT_CONFIG_PARAMETERS",
	"TERMINFO",
	"TERMINFO_DIRS",
	"PATH",
	NULL,
};

START_TEST(test_code_hooks_and_path_refused_when_programs_restricted_unless_listed)
{
	for (const char *const *name = code_hooks; *name; name++) {
		char entry[64], needle[64];
		const char *overrides[] = { entry, NULL };
		const char *const listed[] = { "FOO", *name, NULL };
		struct iso_env_rules rules = { .overrides = listed };
		char **env;

		snprintf(entry, sizeof(entry), "%s=/srv/x", *name);
		snprintf(needle, sizeof(needle), "override %s: steers", *name);
		expect_refused(NULL, overrides, NULL, ISO_ENV_PROGRAMS_RESTRICTED, -EPERM, needle);
		expect_refused(NULL, overrides, NULL,
			       ISO_ENV_STRICT_SOURCE | ISO_ENV_PROGRAMS_RESTRICTED, -EPERM, needle);
		/* A rule that lists the name allows it... */
		env = expect_built(NULL, overrides, &rules, ISO_ENV_PROGRAMS_RESTRICTED);
		ck_assert_str_eq(env_value(env, *name), "/srv/x");
		free(env);
		/* ...and where programs are unrestricted an explicit value
		 * wins, PATH included. */
		env = expect_built(NULL, overrides, NULL, 0);
		ck_assert_str_eq(env_value(env, *name), "/srv/x");
		ck_assert_uint_eq(env_count(env), strcmp(*name, "PATH") ? 2 : 1);
		free(env);
		if (strcmp(*name, "PATH") != 0)
			ck_assert_int_eq(iso_env_is_code_hook_name(*name, strlen(*name)), 1);
	}
	ck_assert_int_eq(iso_env_is_code_hook_name("PATH", 4), 0);
	ck_assert_int_eq(iso_env_is_code_hook_name("ENVX", 4), 0);
	ck_assert_int_eq(iso_env_is_code_hook_name("GIT_DIR", 7), 0);
	/* The fixed PATH itself is not an override and stays. */
	char **env = expect_built(NULL, NULL, NULL, ISO_ENV_PROGRAMS_RESTRICTED);
	ck_assert_str_eq(env[0], "PATH=" ISO_GUEST_PATH);
	free(env);
}
END_TEST

START_TEST(test_value_beginning_with_parentheses_refused)
{
	const char *overrides[] = { "FOO=() { /bin/sh; }", NULL };
	const char *source[] = { "PYTHONPATH=() { :; }", NULL };

	expect_refused(NULL, overrides, NULL, 0, -EINVAL, "FOO: value may not begin with '()'");
	expect_refused(source, NULL, NULL, 0, -EINVAL, "PYTHONPATH: value may not begin with '()'");
	overrides[0] = "FOO=( ) x";
	free(expect_built(NULL, overrides, NULL, 0));
	overrides[0] = "FOO=x()";
	free(expect_built(NULL, overrides, NULL, 0));
}
END_TEST

START_TEST(test_tz_checked_as_sudo_does)
{
	static const char *const safe[] = {
		"UTC",
		"Europe/Paris",
		":Europe/Paris",
		"EST5EDT,M3.2.0,M11.1.0",
		"/usr/share/zoneinfo/UTC",
		":/usr/share/zoneinfo/Asia/Tokyo",
		"<+0330>-3:30",
		"a..b/c",
		NULL,
	};
	static const char *const unsafe_tz[] = {
		"/etc/shadow",
		":/etc/shadow",
		"/usr/share/zoneinfoX/UTC",
		"/usr/share/zoneinfo",
		"../../../etc/shadow",
		"Europe/../../etc/shadow",
		":..",
		"/usr/share/zoneinfo/../x",
		"Europe/Paris ",
		"a\tb",
		"caf\xc3\xa9",
		"x\x7f",
		NULL,
	};
	static char long_tz[4100];

	for (const char *const *v = safe; *v; v++)
		ck_assert_msg(iso_env_check_value("TZ", 2, *v, NULL, 0) == 0, "TZ=%s refused", *v);
	for (const char *const *v = unsafe_tz; *v; v++) {
		char entry[64], why[WHY_SIZE] = "";
		const char *overrides[] = { entry, NULL };

		ck_assert_msg(iso_env_check_value("TZ", 2, *v, why, sizeof(why)) == -EINVAL,
			      "TZ=%s accepted", *v);
		ck_assert_ptr_nonnull(strstr(why, "TZ:"));
		snprintf(entry, sizeof(entry), "TZ=%s", *v);
		expect_refused(NULL, overrides, NULL, 0, -EINVAL, "TZ:");
	}
	memset(long_tz, 'a', 4096);
	ck_assert_int_eq(iso_env_check_value("TZ", 2, long_tz, NULL, 0), -EINVAL);
	long_tz[4095] = '\0';
	ck_assert_int_eq(iso_env_check_value("TZ", 2, long_tz, NULL, 0), 0);
}
END_TEST

START_TEST(test_term_with_slash_refused)
{
	const char *overrides[] = { "TERM=xterm-256color", NULL };

	free(expect_built(NULL, overrides, NULL, 0));
	overrides[0] = "TERM=../../tmp/evil";
	expect_refused(NULL, overrides, NULL, 0, -EINVAL, "TERM:");
	overrides[0] = "TERM=/tmp/evil";
	expect_refused(NULL, overrides, NULL, 0, -EINVAL, "TERM:");
	ck_assert_int_eq(iso_env_check_value("TERM", 4, "a/b", NULL, 0), -EINVAL);
}
END_TEST

START_TEST(test_channel_name_reserved_for_helper)
{
	const char *const overrides[] = { "ISOSPAWN_CHANNEL_FD=3", NULL };
	const char *const source[] = { "ISOSPAWN_CHANNEL_FD=3", NULL };
	char **env;

	expect_refused(NULL, overrides, NULL, 0, -EPERM, "override ISOSPAWN_CHANNEL_FD: reserved");
	env = expect_built(source, NULL, NULL, 0);
	ck_assert_ptr_null(env_value(env, "ISOSPAWN_CHANNEL_FD"));
	free(env);
}
END_TEST

START_TEST(test_duplicate_override_refused)
{
	const char *const overrides[] = { "FOO=1", "BAR=2", "FOO=1", NULL };

	expect_refused(NULL, overrides, NULL, 0, -EINVAL, "override FOO: given twice");
}
END_TEST

START_TEST(test_too_many_overrides_refused)
{
	char entries[ISO_ENV_OVERRIDES_MAX + 1][16];
	const char *overrides[ISO_ENV_OVERRIDES_MAX + 2];
	char **env;
	size_t i;

	for (i = 0; i <= ISO_ENV_OVERRIDES_MAX; i++) {
		snprintf(entries[i], sizeof(entries[i]), "V%zu=x", i);
		overrides[i] = entries[i];
	}
	overrides[ISO_ENV_OVERRIDES_MAX + 1] = NULL;
	expect_refused(NULL, overrides, NULL, 0, -E2BIG, "overrides");

	overrides[ISO_ENV_OVERRIDES_MAX] = NULL;
	env = expect_built(NULL, overrides, NULL, 0);
	ck_assert_uint_eq(env_count(env), ISO_ENV_OVERRIDES_MAX + 1);
	free(env);
}
END_TEST

START_TEST(test_value_too_long_refused)
{
	static char entry[sizeof("PYTHONPATH=") + ISO_ENV_VALUE_MAX + 1];
	const char *const list[] = { entry, NULL };

	strcpy(entry, "PYTHONPATH=");
	memset(entry + strlen(entry), 'v', ISO_ENV_VALUE_MAX + 1);
	entry[sizeof(entry) - 1] = '\0';
	expect_refused(NULL, list, NULL, 0, -E2BIG, "PYTHONPATH");
	/* A forwarded value is held to the same bound. */
	expect_refused(list, NULL, NULL, 0, -E2BIG, "PYTHONPATH");

	entry[sizeof(entry) - 2] = '\0';
	free(expect_built(list, list, NULL, 0));
}
END_TEST

START_TEST(test_locale_values_with_slash_percent_dotdot_refused)
{
	static const char *const names[] = { "LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES",
					     "PYTHONIOENCODING" };
	static const char *const values[] = { "../../tmp/x", "/tmp/x", "C.UTF-8%n", "en..US" };
	size_t i, j;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		for (j = 0; j < sizeof(values) / sizeof(values[0]); j++) {
			char entry[64], need[64];
			const char *const list[] = { entry, NULL };

			snprintf(entry, sizeof(entry), "%s=%s", names[i], values[j]);
			snprintf(need, sizeof(need), "%s: value may not contain", names[i]);
			expect_refused(NULL, list, NULL, 0, -EINVAL, need);
		}
}
END_TEST

START_TEST(test_invalid_forwarded_value_refused_not_dropped)
{
	const char *const source[] = { "LC_CTYPE=../../tmp/evil", NULL };

	expect_refused(source, NULL, NULL, 0, -EINVAL,
		       "LC_CTYPE: value may not contain '/', '%' or '..'");
}
END_TEST

START_TEST(test_tmpdir_relative_or_dotdot_refused)
{
	static const char *const bad[] = { "TMPDIR=tmp", "TMPDIR=",        "TMPDIR=/tmp/../etc",
					   "TMPDIR=/..", "TMPDIR=/tmp/..", "TMPDIR=/tmp/../" };
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *const list[] = { bad[i], NULL };

		expect_refused(NULL, list, NULL, 0, -EINVAL, "TMPDIR:");
		expect_refused(list, NULL, NULL, 0, -EINVAL, "TMPDIR:");
	}
}
END_TEST

START_TEST(test_tmpdir_with_dotdot_inside_a_component_accepted)
{
	const char *const overrides[] = { "TMPDIR=/tmp/..x", NULL };
	const char *const source[] = { "TMPDIR=/var/tmp/x..", NULL };
	char **env = expect_built(source, NULL, NULL, 0);

	ck_assert_str_eq(env_value(env, "TMPDIR"), "/var/tmp/x..");
	free(env);
	env = expect_built(source, overrides, NULL, 0);
	ck_assert_str_eq(env_value(env, "TMPDIR"), "/tmp/..x");
	free(env);
}
END_TEST

START_TEST(test_strict_source_refuses_unforwarded_duplicate_malformed)
{
	const char *source[3] = { "LANG=C", "HOME=/root", NULL };
	char **env;

	expect_refused(source, NULL, NULL, ISO_ENV_STRICT_SOURCE, -EPERM,
		       "source HOME: not a forwarded variable");
	source[1] = "PATH=/usr/bin";
	expect_refused(source, NULL, NULL, ISO_ENV_STRICT_SOURCE, -EPERM, "source PATH:");
	source[1] = "LANG=C";
	expect_refused(source, NULL, NULL, ISO_ENV_STRICT_SOURCE, -EINVAL,
		       "source LANG: given twice");
	source[1] = "LANG";
	expect_refused(source, NULL, NULL, ISO_ENV_STRICT_SOURCE, -EINVAL,
		       "source entry 2: not NAME=value");
	source[1] = "1LANG=C";
	expect_refused(source, NULL, NULL, ISO_ENV_STRICT_SOURCE, -EINVAL,
		       "source 1LANG: malformed name");

	source[1] = "PYTHONPATH=/srv";
	env = expect_built(source, NULL, NULL, ISO_ENV_STRICT_SOURCE);
	ck_assert_uint_eq(env_count(env), 3);
	free(env);
}
END_TEST

/* The client picks by ISO_FORWARDED_NAMES and cannot know that the policy
 * narrowed forwarding: such a name is withheld, not refused. */
START_TEST(test_strict_source_withholds_names_policy_does_not_forward)
{
	const char *const source[] = { "LANG=C", "PYTHONPATH=/srv", NULL };
	const char *const twice[] = { "PYTHONPATH=/a", "PYTHONPATH=/b", NULL };
	struct iso_env_rules rules = { .forward = only_lang };
	char **env = expect_built(source, NULL, &rules, ISO_ENV_STRICT_SOURCE);

	ck_assert_uint_eq(env_count(env), 2);
	ck_assert_str_eq(env[0], "LANG=C");
	free(env);
	expect_refused(twice, NULL, &rules, ISO_ENV_STRICT_SOURCE, -EINVAL,
		       "source PYTHONPATH: given twice");
}
END_TEST

START_TEST(test_failure_leaves_out_null_and_message_never_has_value)
{
	static char long_secret[ISO_ENV_VALUE_MAX + 32];
	const char *const cases[][2] = {
		{ "LANG=hunter2/../x", NULL },  { "TMPDIR=hunter2", NULL },
		{ "LD_PRELOAD=hunter2", NULL }, { "ISOSPAWN_CHANNEL_FD=hunter2", NULL },
		{ "1BAD=hunter2", NULL },       { "LC_ALL=hunter2%s", NULL },
		{ long_secret, NULL },
	};
	const char *const source[] = { "MY_SECRET_TOKEN=hunter2", NULL };
	const char *const twice[] = { "FOO=hunter2", "FOO=hunter2", NULL };
	size_t i;

	snprintf(long_secret, sizeof(long_secret), "FOO=");
	for (i = 4; i + 7 < sizeof(long_secret); i += 7)
		memcpy(long_secret + i, "hunter2", 7);
	long_secret[i] = '\0';

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char why[WHY_SIZE] = "";
		char **env = (char **)&env;
		int rc = iso_build_env(NULL, cases[i], NULL, 0, &env, why, sizeof(why));

		ck_assert_int_lt(rc, 0);
		ck_assert_ptr_null(env);
		ck_assert_str_ne(why, "");
		ck_assert_msg(strstr(why, "hunter2") == NULL, "%s", why);
		/* Also as a forwarded value where the name can be one. */
		rc = iso_build_env(cases[i], NULL, NULL, ISO_ENV_STRICT_SOURCE, &env, why,
				   sizeof(why));
		ck_assert_int_lt(rc, 0);
		ck_assert_ptr_null(env);
		ck_assert_msg(strstr(why, "hunter2") == NULL, "%s", why);
	}
	expect_refused(source, NULL, NULL, ISO_ENV_STRICT_SOURCE, -EPERM, "MY_SECRET_TOKEN");
	expect_refused(NULL, twice, NULL, 0, -EINVAL, "FOO");
	{
		char why[WHY_SIZE];
		char **env;

		iso_build_env(NULL, twice, NULL, 0, &env, why, sizeof(why));
		ck_assert_ptr_null(strstr(why, "hunter2"));
	}
}
END_TEST

START_TEST(test_result_is_one_allocation)
{
	const char *const source[] = { "LANG=C", "TMPDIR=/tmp", NULL };
	const char *const overrides[] = { "FOO=bar", NULL };
	char **env = expect_built(source, overrides, NULL, 0);
	size_t n = env_count(env), i;

	/* The strings sit right after the pointer array, back to back, so
	 * the single free() below releases everything (valgrind checks). */
	ck_assert_ptr_eq(env[0], (char *)(env + n + 1));
	for (i = 0; i + 1 < n; i++)
		ck_assert_ptr_eq(env[i + 1], env[i] + strlen(env[i]) + 1);
	free(env);
}
END_TEST

START_TEST(test_forwarded_name_check_matches_allowlist)
{
	size_t i;

	for (i = 0; i < FORWARDED_COUNT; i++)
		ck_assert_int_eq(iso_env_is_forwarded_name(forwarded[i], strlen(forwarded[i])), 1);
	ck_assert_int_eq(iso_env_is_forwarded_name("PATH", 4), 0);
	ck_assert_int_eq(iso_env_is_forwarded_name("LANGX", 5), 0);
	/* Only the first 4 bytes: "LANGUAGE" is not forwarded, "LANG" is. */
	ck_assert_int_eq(iso_env_is_forwarded_name("LANGUAGE", 4), 1);
	ck_assert_int_eq(iso_env_is_forwarded_name("LANGUAGE", 8), 0);
}
END_TEST

START_TEST(test_check_value_bounds_and_content)
{
	char why[WHY_SIZE];

	ck_assert_int_eq(iso_env_check_value("LANG", 4, "C.UTF-8", why, sizeof(why)), 0);
	ck_assert_int_eq(iso_env_check_value("LANG", 4, "x/y", why, sizeof(why)), -EINVAL);
	ck_assert_int_eq(iso_env_check_value("FOO", 3, "x/../y%", why, sizeof(why)), 0);
	ck_assert_int_eq(iso_env_check_value("TMPDIR", 6, "/tmp", NULL, 0), 0);
	ck_assert_int_eq(iso_env_check_value("TMPDIR", 6, "tmp", NULL, 0), -EINVAL);
}
END_TEST

START_TEST(test_unknown_flags_and_null_out_refused)
{
	char why[WHY_SIZE];
	char **env = (char **)&env;

	ck_assert_int_eq(iso_build_env(NULL, NULL, NULL, 1u << 7, &env, why, sizeof(why)), -EINVAL);
	ck_assert_ptr_null(env);
	ck_assert_int_eq(iso_build_env(NULL, NULL, NULL, 0, NULL, why, sizeof(why)), -EINVAL);
}
END_TEST

START_TEST(test_why_may_be_null)
{
	const char *const overrides[] = { "LD_PRELOAD=x", NULL };
	char **env = (char **)&env;

	ck_assert_int_eq(iso_build_env(NULL, overrides, NULL, 0, &env, NULL, 0), -EPERM);
	ck_assert_ptr_null(env);
	ck_assert_int_eq(iso_build_env(NULL, NULL, NULL, 0, &env, NULL, 0), 0);
	free(env);
}
END_TEST

static Suite *env_suite(void)
{
	Suite *s = suite_create("env");
	TCase *tc = tcase_create("build");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, test_secret_in_source_is_withheld);
	tcase_add_test(tc, test_result_names_are_subset_of_allowlist_path_and_overrides);
	tcase_add_test(tc, test_path_is_fixed_whatever_source_says);
	tcase_add_test(tc, test_override_wins_over_forwarded_value);
	tcase_add_test(tc, test_override_order_and_in_place_replacement);
	tcase_add_test(tc, test_every_forwarded_name_is_forwarded_in_order);
	tcase_add_test(tc, test_first_source_occurrence_wins);
	tcase_add_test(tc, test_malformed_source_entries_are_skipped);
	tcase_add_test(tc, test_forward_rules_narrow);
	tcase_add_test(tc, test_malformed_names_refused_with_name);
	tcase_add_test(tc, test_hostile_name_cannot_forge_a_log_line);
	tcase_add_test(tc, test_each_unsafe_name_refused_unless_allowed);
	tcase_add_test(tc, test_loader_names_refused_by_default);
	tcase_add_test(tc, test_ld_library_path_override_allowed_by_default_not_when_unforwarded);
	tcase_add_test(tc, test_rules_overrides_restricts);
	tcase_add_test(tc, test_unforwarded_name_refused_as_override_unless_listed);
	tcase_add_test(tc, test_code_hooks_and_path_refused_when_programs_restricted_unless_listed);
	tcase_add_test(tc, test_value_beginning_with_parentheses_refused);
	tcase_add_test(tc, test_tz_checked_as_sudo_does);
	tcase_add_test(tc, test_term_with_slash_refused);
	tcase_add_test(tc, test_channel_name_reserved_for_helper);
	tcase_add_test(tc, test_duplicate_override_refused);
	tcase_add_test(tc, test_too_many_overrides_refused);
	tcase_add_test(tc, test_value_too_long_refused);
	tcase_add_test(tc, test_locale_values_with_slash_percent_dotdot_refused);
	tcase_add_test(tc, test_invalid_forwarded_value_refused_not_dropped);
	tcase_add_test(tc, test_tmpdir_relative_or_dotdot_refused);
	tcase_add_test(tc, test_tmpdir_with_dotdot_inside_a_component_accepted);
	tcase_add_test(tc, test_strict_source_refuses_unforwarded_duplicate_malformed);
	tcase_add_test(tc, test_strict_source_withholds_names_policy_does_not_forward);
	tcase_add_test(tc, test_failure_leaves_out_null_and_message_never_has_value);
	tcase_add_test(tc, test_result_is_one_allocation);
	tcase_add_test(tc, test_forwarded_name_check_matches_allowlist);
	tcase_add_test(tc, test_check_value_bounds_and_content);
	tcase_add_test(tc, test_unknown_flags_and_null_out_refused);
	tcase_add_test(tc, test_why_may_be_null);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(env_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
