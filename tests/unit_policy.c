/*
 * unit_policy.c - the policy parser and matcher (policy/policy.c), no
 * privilege needed. The checks of the file and its directories, which need
 * root to own and chown them, are in live_policy.c.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"
#include "util.h"

#define NAME "test.conf"
#define NOBODY 65534

static char why[1024];
static struct iso_policy pol;

static int parse_len(const char *text, size_t len)
{
	why[0] = '\0';
	return policy_parse(text, len, NAME, &pol, NULL, why, sizeof(why));
}

static int parse(const char *text)
{
	return parse_len(text, strlen(text));
}

static void accepted(const char *text)
{
	int rc = parse(text);

	ck_assert_msg(rc == 0, "rc %d: %s", rc, why);
}

/* Refused with -EINVAL, the reason containing `reason`, nothing kept. */
static void refused_len(const char *text, size_t len, const char *reason)
{
	int rc = parse_len(text, len);

	ck_assert_int_eq(rc, -EINVAL);
	ck_assert_msg(strstr(why, reason) != NULL, "got \"%s\", want \"%s\"", why, reason);
	ck_assert_ptr_null(pol.rules);
	ck_assert_uint_eq(pol.nrules, 0);
}

static void refused(const char *text, const char *reason)
{
	refused_len(text, strlen(text), reason);
}

static size_t strv_len(char **strv)
{
	size_t n = 0;

	while (strv[n] != NULL)
		n++;
	return n;
}

static void teardown_policy(void)
{
	policy_free(&pol);
}

/* ------------------------------------------------------------------ */
/* Accepted                                                             */

START_TEST(full_rule_with_every_keyword)
{
	const struct iso_rule *r;

	accepted("# every keyword once\n"
		 "rule user:#1000 {\n"
		 "\tpool 100000-100009\n"
		 "\tprograms /usr/bin/python3 /bin/sh\n"
		 "\toverrides FOO BAR LD_PRELOAD\n"
		 "\tallow-unsafe LD_PRELOAD\n"
		 "\tforward LANG TMPDIR\n"
		 "\tlimit cpu 60\n"
		 "\tlimit as 1G\n"
		 "\tlimit nofile 64\n"
		 "\tlimit nproc 32\n"
		 "\tlimit fsize 10M\n"
		 "\tlimit stack 512K\n"
		 "\ttimeout 300 30\n"
		 "\tnetwork none-only\n"
		 "\tseccomp strict\n"
		 "\tseccomp-action kill\n"
		 "\tseccomp-deny ptrace mount\n"
		 "\tlandlock optional\n"
		 "\tlandlock-abi 4\n"
		 "\tread /opt/data /usr/share/dict\n"
		 "\twrite /srv/out\n"
		 "\tgrants read\n"

		 "}\n");
	ck_assert_uint_eq(pol.nrules, 1);
	r = &pol.rules[0];
	ck_assert_uint_eq(r->line, 2);
	ck_assert_int_eq(r->match, ISO_MATCH_USER);
	ck_assert_uint_eq(r->id, 1000);
	ck_assert_str_eq(r->match_text, "user:#1000");
	ck_assert_uint_eq(r->pool_first, 100000);
	ck_assert_uint_eq(r->pool_last, 100009);
	ck_assert_int_eq(r->programs_any, 0);
	ck_assert_uint_eq(strv_len(r->programs), 2);
	ck_assert_str_eq(r->programs[0], "/usr/bin/python3");
	ck_assert_str_eq(r->programs[1], "/bin/sh");
	ck_assert_uint_eq(strv_len(r->overrides), 3);
	ck_assert_str_eq(r->overrides[2], "LD_PRELOAD");
	ck_assert_uint_eq(strv_len(r->unsafe_allowed), 1);
	ck_assert_str_eq(r->unsafe_allowed[0], "LD_PRELOAD");
	ck_assert_uint_eq(strv_len(r->forward), 2);
	ck_assert_str_eq(r->forward[0], "LANG");
	ck_assert_str_eq(r->forward[1], "TMPDIR");
	ck_assert_uint_eq(r->ceiling[ISO_LIMIT_CPU], 60);
	ck_assert_uint_eq(r->ceiling[ISO_LIMIT_AS], UINT64_C(1) << 30);
	ck_assert_uint_eq(r->ceiling[ISO_LIMIT_NOFILE], 64);
	ck_assert_uint_eq(r->ceiling[ISO_LIMIT_NPROC], 32);
	ck_assert_uint_eq(r->ceiling[ISO_LIMIT_FSIZE], 10 << 20);
	ck_assert_uint_eq(r->ceiling[ISO_LIMIT_STACK], 512 << 10);
	ck_assert_uint_eq(r->timeout_max_ms, 300000);
	ck_assert_uint_eq(r->timeout_default_ms, 30000);
	ck_assert_int_eq(r->network_default, ISO_NETWORK_NONE);
	ck_assert_int_eq(r->network_none_only, 1);
	ck_assert_int_eq(r->seccomp, ISO_SECCOMP_STRICT);
	ck_assert_int_eq(r->seccomp_action, ISO_SECCOMP_KILL);
	ck_assert_uint_eq(strv_len(r->seccomp_deny), 2);
	ck_assert_str_eq(r->seccomp_deny[0], "ptrace");
	ck_assert_str_eq(r->seccomp_deny[1], "mount");
	ck_assert_int_eq(r->landlock, ISO_LANDLOCK_OPTIONAL);
	ck_assert_int_eq(r->landlock_min_abi, 4);
	ck_assert_uint_eq(strv_len(r->read), 2);
	ck_assert_str_eq(r->read[1], "/usr/share/dict");
	ck_assert_uint_eq(strv_len(r->write), 1);
	ck_assert_str_eq(r->write[0], "/srv/out");
	ck_assert_int_eq(r->grants, ISO_GRANTS_READ);
}
END_TEST

START_TEST(minimal_rule_gets_defaults)
{
	const struct iso_rule *r;
	int i;

	accepted("rule group:#50 {\npool 1900005000-1900005000\nprograms any\n}\n");
	ck_assert_uint_eq(pol.nrules, 1);
	r = &pol.rules[0];
	ck_assert_int_eq(r->match, ISO_MATCH_GROUP);
	ck_assert_uint_eq(r->id, 50);
	ck_assert_str_eq(r->match_text, "group:#50");
	ck_assert_uint_eq(r->pool_first, 1900005000);
	ck_assert_uint_eq(r->pool_last, 1900005000);
	ck_assert_int_eq(r->programs_any, 1);
	ck_assert_ptr_nonnull(r->programs);
	ck_assert_uint_eq(strv_len(r->programs), 0);
	ck_assert_ptr_null(r->overrides);
	ck_assert_ptr_null(r->unsafe_allowed);
	ck_assert_ptr_null(r->forward);
	for (i = 0; i < ISO_LIMIT_COUNT; i++)
		ck_assert_uint_eq(r->ceiling[i], iso_default_ceiling[i]);
	ck_assert_uint_eq(r->timeout_max_ms, 3600 * 1000);
	ck_assert_uint_eq(r->timeout_default_ms, 600 * 1000);
	ck_assert_int_eq(r->network_default, ISO_NETWORK_NONE);
	ck_assert_int_eq(r->network_none_only, 0);
	ck_assert_int_eq(r->seccomp, ISO_SECCOMP_DEFAULT);
	ck_assert_int_eq(r->seccomp_action, ISO_SECCOMP_ERRNO);
	ck_assert_uint_eq(strv_len(r->seccomp_deny), 0);
	ck_assert_int_eq(r->landlock, ISO_LANDLOCK_REQUIRED);
	ck_assert_int_eq(r->landlock_min_abi, 1);
	ck_assert_uint_eq(strv_len(r->read), 0);
	ck_assert_uint_eq(strv_len(r->write), 0);
	ck_assert_int_eq(r->grants, ISO_GRANTS_NONE);
}
END_TEST

START_TEST(rule_keeps_its_file_line_and_text)
{
	accepted("# head\nrule user:#1 {\npool 1900000010-1900000019\nprograms any\n}\n\n"
		 "rule user:#2 {\n  pool 1900000020-1900000029 # two\n  programs any\n}");
	ck_assert_uint_eq(pol.nrules, 2);
	ck_assert_str_eq(pol.rules[0].file, NAME);
	ck_assert_uint_eq(pol.rules[0].line, 2);
	ck_assert_str_eq(pol.rules[0].text,
			 "rule user:#1 {\npool 1900000010-1900000019\nprograms any\n}");
	ck_assert_uint_eq(pol.rules[1].line, 7);
	ck_assert_str_eq(pol.rules[1].text,
			 "rule user:#2 {\n  pool 1900000020-1900000029 # two\n  programs any\n}");
}
END_TEST

START_TEST(default_ceilings_are_documented_values)
{
	ck_assert_uint_eq(iso_default_ceiling[ISO_LIMIT_CPU], 3600);
	ck_assert_uint_eq(iso_default_ceiling[ISO_LIMIT_AS], UINT64_C(8) << 30);
	ck_assert_uint_eq(iso_default_ceiling[ISO_LIMIT_NOFILE], 1024);
	ck_assert_uint_eq(iso_default_ceiling[ISO_LIMIT_NPROC], 512);
	ck_assert_uint_eq(iso_default_ceiling[ISO_LIMIT_FSIZE], UINT64_C(4) << 30);
	ck_assert_uint_eq(iso_default_ceiling[ISO_LIMIT_STACK], 8 << 20);
}
END_TEST

START_TEST(numeric_uid_and_gid)
{
	accepted("rule user:#0 {\npool 1900000001-1900000001\nprograms any\n}\n"
		 "rule group:#4294967294 {\npool 1900000002-1900000002\nprograms any\n}\n");
	ck_assert_uint_eq(pol.nrules, 2);
	ck_assert_int_eq(pol.rules[0].match, ISO_MATCH_USER);
	ck_assert_uint_eq(pol.rules[0].id, 0);
	ck_assert_int_eq(pol.rules[1].match, ISO_MATCH_GROUP);
	ck_assert_uint_eq(pol.rules[1].id, 4294967294u);
}
END_TEST

START_TEST(names_resolved_at_parse_time)
{
	accepted("rule user:root {\npool 1900000001-1900000001\nprograms any\n}\n"
		 "rule group:root {\npool 1900000002-1900000002\nprograms any\n}\n");
	ck_assert_int_eq(pol.rules[0].match, ISO_MATCH_USER);
	ck_assert_uint_eq(pol.rules[0].id, 0);
	ck_assert_str_eq(pol.rules[0].match_text, "user:root");
	ck_assert_int_eq(pol.rules[1].match, ISO_MATCH_GROUP);
	ck_assert_uint_eq(pol.rules[1].id, 0);
}
END_TEST

START_TEST(byte_suffixes_are_powers_of_1024)
{
	accepted("rule user:#1 {\npool 1900000010-1900000019\nprograms any\n"
		 "limit as 3K\nlimit fsize 5M\nlimit stack 7G\n}\n"
		 "rule user:#2 {\npool 1900000020-1900000029\nprograms any\n"
		 "limit as 2T\nlimit fsize 12345\n}\n");
	ck_assert_uint_eq(pol.rules[0].ceiling[ISO_LIMIT_AS], 3 * 1024);
	ck_assert_uint_eq(pol.rules[0].ceiling[ISO_LIMIT_FSIZE], UINT64_C(5) << 20);
	ck_assert_uint_eq(pol.rules[0].ceiling[ISO_LIMIT_STACK], UINT64_C(7) << 30);
	ck_assert_uint_eq(pol.rules[1].ceiling[ISO_LIMIT_AS], UINT64_C(2) << 40);
	ck_assert_uint_eq(pol.rules[1].ceiling[ISO_LIMIT_FSIZE], 12345);
}
END_TEST

START_TEST(unlimited_stores_max)
{
	accepted("rule user:#1 {\npool 1900000010-1900000019\nprograms any\n"
		 "limit cpu unlimited\nlimit as unlimited\n"
		 "limit nofile unlimited\n}\n");
	ck_assert_uint_eq(pol.rules[0].ceiling[ISO_LIMIT_CPU], UINT64_MAX);
	ck_assert_uint_eq(pol.rules[0].ceiling[ISO_LIMIT_AS], UINT64_MAX);
	ck_assert_uint_eq(pol.rules[0].ceiling[ISO_LIMIT_NOFILE], UINT64_MAX);
	ck_assert_uint_eq(pol.rules[0].ceiling[ISO_LIMIT_NPROC],
			  iso_default_ceiling[ISO_LIMIT_NPROC]);
}
END_TEST

START_TEST(timeout_without_default_uses_ceiling)
{
	accepted("rule user:#1 {\npool 1900000010-1900000019\nprograms any\ntimeout 90\n}\n");
	ck_assert_uint_eq(pol.rules[0].timeout_max_ms, 90000);
	ck_assert_uint_eq(pol.rules[0].timeout_default_ms, 90000);
}
END_TEST

START_TEST(timeout_zero_max_is_no_ceiling)
{
	accepted("rule user:#1 {\npool 1900000010-1900000019\nprograms any\ntimeout 0 45\n}\n");
	ck_assert_uint_eq(pol.rules[0].timeout_max_ms, 0);
	ck_assert_uint_eq(pol.rules[0].timeout_default_ms, 45000);
}
END_TEST

START_TEST(network_none_is_default_not_only)
{
	accepted("rule user:#1 {\npool 1900000010-1900000019\nprograms any\nnetwork none\n}\n");
	ck_assert_int_eq(pol.rules[0].network_default, ISO_NETWORK_NONE);
	ck_assert_int_eq(pol.rules[0].network_none_only, 0);
}
END_TEST

START_TEST(forward_none_is_empty_list)
{
	accepted("rule user:#1 {\npool 1900000010-1900000019\nprograms any\nforward none\n}\n");
	ck_assert_ptr_nonnull(pol.rules[0].forward);
	ck_assert_uint_eq(strv_len(pol.rules[0].forward), 0);
}
END_TEST

START_TEST(comments_blank_lines_and_tabs_ignored)
{
	accepted("\n# a comment\n   \t\n"
		 "rule user:#7 { # opens\n"
		 "\t  pool\t1900000070-1900000079   # uids\n"
		 "\n"
		 "\tprograms /bin/sh#1 # only a '#' that starts a word\n"
		 "\toverrides none\n"
		 "}\n");
	ck_assert_uint_eq(pol.rules[0].line, 4);
	ck_assert_uint_eq(pol.rules[0].pool_first, 1900000070);
	ck_assert_uint_eq(strv_len(pol.rules[0].programs), 1);
	ck_assert_str_eq(pol.rules[0].programs[0], "/bin/sh#1");
}
END_TEST

START_TEST(empty_file_has_no_rules)
{
	accepted("# nobody may spawn\n");
	ck_assert_uint_eq(pol.nrules, 0);
	ck_assert_ptr_null(policy_match(&pol, 0, 0, NULL, 0));
}
END_TEST

START_TEST(last_line_without_newline)
{
	accepted("rule user:#1 {\npool 1900000010-1900000019\nprograms any\n}");
	ck_assert_uint_eq(pol.nrules, 1);
}
END_TEST

START_TEST(pool_of_max_size_accepted)
{
	accepted("rule user:#1 {\npool 1900001000-1900066535\nprograms any\n}\n");
	ck_assert_uint_eq(pol.rules[0].pool_last - pol.rules[0].pool_first + 1,
			  ISO_POLICY_POOL_MAX);
}
END_TEST

START_TEST(line_of_max_length_accepted)
{
	char text[ISO_POLICY_LINE_MAX + 2];

	memset(text, 0, sizeof(text));
	text[0] = '#';
	memset(text + 1, 'x', ISO_POLICY_LINE_MAX - 1);
	accepted(text);
	ck_assert_uint_eq(pol.nrules, 0);
}
END_TEST

START_TEST(file_of_max_size_accepted)
{
	char *text = malloc(ISO_POLICY_FILE_MAX + 1);

	ck_assert_ptr_nonnull(text);
	memset(text, '\n', ISO_POLICY_FILE_MAX);
	text[ISO_POLICY_FILE_MAX] = '\0';
	accepted(text);
	ck_assert_uint_eq(pol.nrules, 0);
	free(text);
}
END_TEST

START_TEST(first_matching_rule_wins)
{
	const struct iso_rule *r;

	accepted("rule group:#100 {\npool 1900000010-1900000019\nprograms any\n}\n"
		 "rule user:#1000 {\npool 1900000020-1900000029\nprograms any\n}\n"
		 "rule group:#100 {\npool 1900000030-1900000039\nprograms any\n}\n");
	r = policy_match(&pol, 1000, 100, NULL, 0);
	ck_assert_ptr_eq(r, &pol.rules[0]);
	r = policy_match(&pol, 1000, 200, NULL, 0);
	ck_assert_ptr_eq(r, &pol.rules[1]);
}
END_TEST

START_TEST(user_rule_matches_uid_only)
{
	const gid_t groups[] = { 500 };

	accepted("rule user:#500 {\npool 1900000010-1900000019\nprograms any\n}\n");
	ck_assert_ptr_eq(policy_match(&pol, 500, 1, NULL, 0), &pol.rules[0]);
	ck_assert_ptr_null(policy_match(&pol, 1, 500, groups, 1));
}
END_TEST

START_TEST(group_rule_matches_gid)
{
	accepted("rule group:#500 {\npool 1900000010-1900000019\nprograms any\n}\n");
	ck_assert_ptr_eq(policy_match(&pol, 1, 500, NULL, 0), &pol.rules[0]);
	ck_assert_ptr_null(policy_match(&pol, 500, 1, NULL, 0));
}
END_TEST

START_TEST(group_rule_matches_supplementary_group)
{
	const gid_t groups[] = { 7, 8, 500 };

	accepted("rule group:#500 {\npool 1900000010-1900000019\nprograms any\n}\n");
	ck_assert_ptr_eq(policy_match(&pol, 1, 2, groups, 3), &pol.rules[0]);
	ck_assert_ptr_null(policy_match(&pol, 1, 2, groups, 2));
}
END_TEST

START_TEST(no_matching_rule_is_null)
{
	const gid_t groups[] = { 3, 4 };

	accepted("rule user:#1000 {\npool 1900000010-1900000019\nprograms any\n}\n"
		 "rule group:#1000 {\npool 1900000020-1900000029\nprograms any\n}\n");
	ck_assert_ptr_null(policy_match(&pol, 1, 2, groups, 2));
}
END_TEST

/* text with every `from` replaced by `to`, in a new allocation. */
static char *replace(const char *text, const char *from, const char *to)
{
	char *out = calloc(2, strlen(text) + 1), *o = out, *hit;
	const char *t;

	ck_assert_ptr_nonnull(out);
	for (t = text; (hit = strstr(t, from)) != NULL; t = hit + strlen(from)) {
		memcpy(o, t, (size_t)(hit - t));
		o += hit - t;
		memcpy(o, to, strlen(to));
		o += strlen(to);
	}
	strcpy(o, t);
	return out;
}

/* The default policy installed by "make install", with the group it names
 * (which may not exist here) replaced by a number and its drop-in directory
 * (whose files this machine may hold) by one that does not exist, parsed
 * into pol. */
static void parse_shipped_policy(void)
{
	char path[4096], *text, *out, *out2;
	size_t len;
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/etc/isospawn.conf", ISO_SRCDIR);
	f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	text = calloc(1, ISO_POLICY_FILE_MAX + 1);
	ck_assert_ptr_nonnull(text);
	len = fread(text, 1, ISO_POLICY_FILE_MAX, f);
	fclose(f);
	out = replace(text, "group:isospawn", "group:#12345");
	out2 = replace(out, "\ninclude /etc/isospawn.d\n", "\ninclude /nonexistent/isospawn.d\n");
	ck_assert_str_ne(out, out2);
	rc = parse(out2);
	ck_assert_msg(rc == 0, "%s: %s", path, why);
	ck_assert_uint_gt(len, 0);
	free(text);
	free(out);
	free(out2);
}

START_TEST(shipped_default_policy_parses)
{
	const struct iso_rule *r;

	parse_shipped_policy();
	ck_assert_str_eq(pol.include, "/nonexistent/isospawn.d");
	ck_assert_uint_eq(pol.nrules, 1);
	r = &pol.rules[0];
	ck_assert_int_eq(r->match, ISO_MATCH_GROUP);
	ck_assert_uint_eq(r->id, 12345);
	ck_assert_uint_eq(r->pool_first, 1900000000u);
	ck_assert_uint_eq(r->pool_last, 1900009999u);
	ck_assert_int_eq(r->programs_any, 1);
	ck_assert_int_eq(r->seccomp, ISO_SECCOMP_DEFAULT);
	ck_assert_int_eq(r->landlock, ISO_LANDLOCK_REQUIRED);
	/* No ceiling (a guest may ask for no timeout), ten minutes unless
	 * asked. */
	ck_assert_uint_eq(r->timeout_max_ms, 0);
	ck_assert_uint_eq(r->timeout_default_ms, 600 * 1000);
}
END_TEST

/* The host network reaches localhost services and the cloud
 * metadata endpoint, which hands out credentials; guests of the shipped
 * policy get loopback only unless their caller asks. */
START_TEST(shipped_default_policy_gives_guests_no_network)
{
	parse_shipped_policy();
	ck_assert_int_eq(pol.rules[0].network_default, ISO_NETWORK_NONE);
}
END_TEST

/* The language's defaults are the safe ones: a rule that says nothing of
 * them gets no network, as the shipped policy, and 'timeout 3600 600', a
 * ceiling; the host's network and no timeout are asked for by name. */
START_TEST(rule_without_network_or_timeout_gets_the_shipped_policys)
{
	uint64_t max = 3600 * 1000, def = 600 * 1000;

	parse_shipped_policy();
	ck_assert_int_eq(pol.rules[0].network_default, ISO_NETWORK_NONE);
	policy_free(&pol);
	accepted("rule user:#1 {\npool 1900000010-1900000019\nprograms any\n}\n");
	ck_assert_int_eq(pol.rules[0].network_default, ISO_NETWORK_NONE);
	ck_assert_int_eq(pol.rules[0].network_none_only, 0);
	ck_assert_uint_eq(pol.rules[0].timeout_max_ms, max);
	ck_assert_uint_eq(pol.rules[0].timeout_default_ms, def);
	policy_free(&pol);
	accepted("rule user:#1 {\npool 1900000010-1900000019\nprograms any\n"
		 "network host\ntimeout 0\n}\n");
	ck_assert_int_eq(pol.rules[0].network_default, ISO_NETWORK_HOST);
	ck_assert_uint_eq(pol.rules[0].timeout_max_ms, 0);
	ck_assert_uint_eq(pol.rules[0].timeout_default_ms, 0);
}
END_TEST

/* A caller's live guests, over all its connections, are
 * bounded: by default, by the rule's 'guests', and modestly in the shipped
 * policy. */
START_TEST(guests_bound_live_guests_per_caller)
{
	accepted("rule user:#1 {\npool 1900000010-1900000019\nprograms any\n}\n"
		 "rule user:#2 {\npool 1900000020-1900000029\nprograms any\nguests 3\n}\n");
	ck_assert_uint_eq(pol.rules[0].guests_max, ISO_POLICY_GUESTS_DEFAULT);
	ck_assert_uint_eq(ISO_POLICY_GUESTS_DEFAULT, 64);
	ck_assert_uint_eq(pol.rules[1].guests_max, 3);
	policy_free(&pol);
	refused("rule user:#1 {\npool 1900000010-1900000019\nguests 0\n",
		NAME ":3: expected a number of guests from 1 to 65536 after 'guests', got '0'");
	refused("rule user:#1 {\npool 1900000010-1900000019\nguests 65537\n", "got '65537'");
	refused("rule user:#1 {\npool 1900000010-1900000019\nguests\n",
		"expected a number of guests after 'guests', got end of line");
	parse_shipped_policy();
	ck_assert_uint_eq(pol.rules[0].guests_max, 32);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Refused                                                              */

#define RULE_HEAD "rule user:#1 {\npool 1900000010-1900000019\nprograms any\n"

START_TEST(include_needs_one_absolute_directory)
{
	refused("include\n", NAME ":1: expected a directory (absolute normalized path) alone "
				  "after 'include', got 'end of line'");
	refused("include isospawn.d\n", NAME ":1: expected a directory (absolute normalized "
					     "path) alone after 'include', got 'isospawn.d'");
	refused("include /a /b\n", NAME ":1: expected a directory (absolute normalized path) "
					"alone after 'include', got '/a'");
}
END_TEST

/* The text parser reads no file: an include is checked and recorded, and
 * only policy_load() reads the drop-ins. Here the directory holds a
 * drop-in that would not parse, below a world-writable /tmp that the file
 * checks refuse: neither is looked at. (The policy fuzz target once read
 * the host's /etc through "include /etc".) */
START_TEST(include_in_text_reads_no_file)
{
	char dir[] = "/tmp/unit_policy.XXXXXX", file[64], text[128];
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/broken.conf", dir);
	ck_assert_ptr_nonnull(f = fopen(file, "w"));
	fputs("this is no policy\n", f);
	fclose(f);
	snprintf(text, sizeof(text), "include %s\n" RULE_HEAD "}\n", dir);
	accepted(text);
	ck_assert_str_eq(pol.include, dir);
	ck_assert_uint_eq(pol.nrules, 1);
	policy_free(&pol);
	unlink(file);
	rmdir(dir);
}
END_TEST

START_TEST(include_only_once)
{
	refused("include /nonexistent/a\ninclude /nonexistent/b\n",
		NAME ":2: expected one 'include', got a second (first at line 1)");
}
END_TEST

START_TEST(include_not_inside_a_rule)
{
	refused(RULE_HEAD "include /nonexistent/a\n}\n",
		NAME ":4: expected a rule keyword (see isospawn.conf(5)) or '}', got 'include'");
}
END_TEST

START_TEST(unknown_top_level_word_names_include)
{
	refused("rules user:#1 {\n", NAME ":1: expected 'rule', 'defaults', 'include', "
					  "'audit-log' or 'cgroup-parent', got 'rules'");
}
END_TEST

START_TEST(unknown_keyword)
{
	refused(RULE_HEAD "frobnicate yes\n}\n",
		NAME ":4: expected a rule keyword (see isospawn.conf(5)) or "
		     "'}', got 'frobnicate'");
}
END_TEST

START_TEST(duplicate_keyword)
{
	refused(RULE_HEAD "pool 1900000020-1900000029\n}\n",
		NAME ":4: expected each keyword once per rule, got a second "
		     "'pool' (first at line 2)");
}
END_TEST

START_TEST(duplicate_limit)
{
	refused(RULE_HEAD "limit cpu 5\nlimit as 1G\nlimit cpu 6\n}\n",
		NAME ":6: expected each limit once per rule, got a second "
		     "'limit cpu' (first at line 4)");
}
END_TEST

START_TEST(missing_pool)
{
	refused("rule user:#1 {\nprograms any\n}\n",
		NAME ":3: expected 'pool' in the rule opened at line 1");
}
END_TEST

START_TEST(missing_programs)
{
	refused("rule user:#1 {\npool 1900000010-1900000019\n}\n",
		NAME ":3: expected 'programs' in the rule opened at line 1");
}
END_TEST

START_TEST(pool_containing_uid_0)
{
	refused("rule user:#1 {\npool 0-10\n",
		NAME ":2: expected a pool without uid 0, got '0-10'");
}
END_TEST

START_TEST(pool_containing_uid_minus_1)
{
	refused("rule user:#1 {\npool 4294967200-4294967295\n",
		NAME ":2: expected a pool without uid 4294967295, got "
		     "'4294967200-4294967295'");
}
END_TEST

START_TEST(pool_reversed)
{
	refused("rule user:#1 {\npool 200-100\n",
		NAME ":2: expected FIRST <= LAST after 'pool', got '200-100'");
}
END_TEST

START_TEST(pool_too_large)
{
	refused("rule user:#1 {\npool 1000-66536\n",
		NAME ":2: expected a pool of at most 65536 uids, got "
		     "'1000-66536' (65537 uids)");
}
END_TEST

/* Write `text` as the test's own ISO_SUBID_DIR/name (or remove it). */
static void subid_file(const char *name, const char *text)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", ISO_SUBID_DIR, name);
	(void)mkdir(ISO_SUBID_DIR, 0755);
	if (text == NULL) {
		(void)unlink(path);
		return;
	}
	ck_assert_ptr_nonnull(f = fopen(path, "we"));
	ck_assert_int_ge(fputs(text, f), 0);
	ck_assert_int_eq(fclose(f), 0);
}

/* A user whose subordinate range (/etc/subuid, /etc/subgid) holds
 * a pool id can run processes as it (newuidmap into its own user
 * namespace): such a pool is refused, naming the delegation; one beside
 * it is not. The files go before any assertion, which would leave them to
 * the next checks. */
START_TEST(pool_delegated_in_subuid_or_subgid_refused_naming_it)
{
	static const char pool[] = "rule user:#1 {\npool 1900000000-1900000009\nprograms any\n}\n";
	static const struct {
		const char *subuid, *subgid, *want;
	} cases[] = {
		{ "root:100000:65536\nalice:1900000009:65536\n", NULL,
		  NAME ":2: expected a pool without delegated ids, got "
		       "'1900000000-1900000009': " ISO_SUBID_DIR
		       "/subuid gives 'alice' ids 1900000009-1900065544" },
		{ "1000:1899999990:11\n", NULL, "/subuid gives '1000' ids 1899999990-1900000000" },
		{ "alice:1899999990:10\nbob:1900000010:100\n", NULL, NULL },
		{ NULL, "carol:1900000003:1\n", "/subgid gives 'carol' ids 1900000003-1900000003" },
	};
	char got[4][sizeof(why)];
	int rc[4];

	for (size_t i = 0; i < 4; i++) {
		subid_file("subuid", cases[i].subuid);
		subid_file("subgid", cases[i].subgid);
		rc[i] = parse(pool);
		snprintf(got[i], sizeof(got[i]), "%s", why);
		policy_free(&pol);
	}
	subid_file("subuid", NULL);
	subid_file("subgid", NULL);
	for (size_t i = 0; i < 4; i++) {
		ck_assert_int_eq(rc[i], cases[i].want ? -EINVAL : 0);
		ck_assert_msg(!cases[i].want || strstr(got[i], cases[i].want), "case %zu: %s", i,
			      got[i]);
	}
}
END_TEST

/* The parse enumerates no accounts (a walk of the whole database at
 * every helper's start would miss the users of SSSD and LDAP): a
 * pool holding a user's uid or a group's gid parses; the helper refuses
 * to lease that id (live_guests), and isospawnctl check names it
 * (live_ctl). The entries are this machine's, found at run time. */
START_TEST(pool_holding_an_account_is_left_to_the_lease)
{
	char text[256];
	struct passwd *pw;
	struct group *gr;

	setpwent();
	while ((pw = getpwent()) != NULL && (pw->pw_uid == 0 || pw->pw_uid >= 0xfffffff0u))
		;
	ck_assert_msg(pw != NULL, "no account but root to test with");
	snprintf(text, sizeof(text), "rule user:#1 {\npool %u-%u\nprograms any\n}\n",
		 (unsigned)pw->pw_uid, (unsigned)pw->pw_uid + 5);
	endpwent();
	accepted(text);
	policy_free(&pol);
	setgrent();
	while ((gr = getgrent()) != NULL && (gr->gr_gid == 0 || gr->gr_gid >= 0xfffffff0u))
		;
	ck_assert_msg(gr != NULL, "no group but root's to test with");
	snprintf(text, sizeof(text), "rule user:#1 {\npool %u-%u\nprograms any\n}\n",
		 (unsigned)gr->gr_gid, (unsigned)gr->gr_gid);
	endgrent();
	accepted(text);
}
END_TEST

/* Files a guest leaves in a rule's write path belong to its pool uid,
 * which a group rule passes from one member's guests to another's; what it
 * leaves in a caller's own grant is that caller's. */
START_TEST(write_paths_refused_in_group_rules)
{
	refused("rule group:#100 {\npool 1900000010-1900000019\nprograms any\n"
		"write /srv/out\n}\n",
		NAME ":5: expected 'write' only in a user: rule (the pool of the group: rule "
		     "opened at line 1 serves many callers), got it in that rule");
	accepted("rule group:#100 {\npool 1900000010-1900000019\nprograms any\n"
		 "read /srv\ngrants read-write\n}\n"
		 "rule user:#100 {\npool 1900000020-1900000029\nprograms any\n"
		 "write /srv/out\n}\n");
	ck_assert_int_eq(pol.rules[0].grants, ISO_GRANTS_READ_WRITE);
}
END_TEST

/* A caller lends what it opens itself: the paths that bounded what it
 * could ask for are gone, and a policy that still has them is refused,
 * naming what replaced them, rather than read as something else. */
START_TEST(may_read_and_may_write_refused_naming_grants)
{
	refused(RULE_HEAD "may-read /srv\n}\n",
		NAME ":4: expected no 'may-read' line: a caller lends its guests what it can "
		     "open itself, as the rule's 'grants none|read|read-write' allows (see "
		     "MIGRATION in isospawn.conf(5))");
	refused(RULE_HEAD "may-write /srv\n}\n", NAME ":4: expected no 'may-write' line");
	refused(RULE_HEAD "grants write\n}\n",
		NAME ":4: expected 'none', 'read' or 'read-write' after 'grants', got 'write'");
}
END_TEST

/* A write path is the host's directory in the tree: a read path inside it
 * would be hidden by it. */
START_TEST(rule_paths_inside_its_write_paths_refused)
{
	refused(RULE_HEAD "write /srv/out\nread /srv/out/ref\n}\n",
		NAME ":6: expected 'read' paths outside the rule's 'write' paths (every guest "
		     "may write all of /srv/out), got /srv/out/ref");
	refused(RULE_HEAD "write /\nread /srv\n}\n",
		"expected 'read' paths outside the rule's 'write' paths (every guest may "
		"write all of /), got /srv");
	/* Beside a write path, or above it, is not inside it. */
	accepted(RULE_HEAD "write /srv/out\nread /srv /srv/outer\n}\n");
}
END_TEST

START_TEST(pool_malformed)
{
	refused("rule user:#1 {\npool 1000+2000\n",
		NAME ":2: expected FIRST-LAST (two uids from 1 to 4294967294) "
		     "after 'pool', got '1000+2000'");
}
END_TEST

START_TEST(overlapping_pools)
{
	refused("rule user:#1 {\npool 1900001000-1900001999\nprograms any\n}\n"
		"rule user:#2 {\npool 1900001500-1900002500\nprograms any\n}\n",
		NAME ":6: expected a pool apart from the pool 1900001000-1900001999 of "
		     "the rule at " NAME ":1, got '1900001500-1900002500'");
}
END_TEST

START_TEST(relative_program_path)
{
	refused("rule user:#1 {\npool 1900000010-1900000019\nprograms /bin/sh bin/sh\n",
		NAME ":3: expected 'any' or absolute normalized paths after "
		     "'programs', got 'bin/sh'");
}
END_TEST

START_TEST(program_any_mixed_with_paths)
{
	refused("rule user:#1 {\npool 1900000010-1900000019\nprograms any /bin/sh\n",
		NAME ":3: expected 'any' alone or absolute normalized paths "
		     "after 'programs', got both");
}
END_TEST

START_TEST(path_with_dotdot)
{
	refused(RULE_HEAD "read /opt/../etc\n",
		NAME ":4: expected absolute normalized paths after 'read', "
		     "got '/opt/../etc'");
}
END_TEST

START_TEST(path_not_normalized)
{
	refused(RULE_HEAD "write /tmp/\n", NAME ":4: expected absolute normalized paths after "
						"'write', got '/tmp/'");
	refused(RULE_HEAD "write /srv//out\n",
		NAME ":4: expected absolute normalized paths after 'write', "
		     "got '/srv//out'");
	refused(RULE_HEAD "read /srv/./in\n", NAME ":4: expected absolute normalized paths after "
						   "'read', got '/srv/./in'");
}
END_TEST

START_TEST(unknown_user)
{
	refused("rule user:isospawn-no-such-user {\n", NAME ":1: expected an existing user, got "
							    "'isospawn-no-such-user'");
}
END_TEST

START_TEST(unknown_group)
{
	refused("rule group:isospawn-no-such-group {\n", NAME ":1: expected an existing group, got "
							      "'isospawn-no-such-group'");
}
END_TEST

START_TEST(match_id_minus_1)
{
	refused("rule user:#4294967295 {\n",
		NAME ":1: expected a number from 0 to 4294967294 after '#', "
		     "got 'user:#4294967295'");
}
END_TEST

START_TEST(rule_without_brace)
{
	refused("rule user:#1\n", NAME ":1: expected '{' after 'rule user:#1', got end of line");
	refused("rule user:#1{\n", NAME ":1: expected '{' after 'rule user:#1{', got end of line");
}
END_TEST

START_TEST(bad_match_kind)
{
	refused("rule uid:1 {\n", NAME ":1: expected user:NAME, user:#UID, group:NAME or "
				       "group:#GID after 'rule', got 'uid:1'");
}
END_TEST

START_TEST(bad_limit_name)
{
	refused(RULE_HEAD "limit core 0\n",
		NAME ":4: expected cpu, as, fsize, stack, nofile, nproc, scratch, shm, memory, "
		     "pids or cpus after 'limit', got 'core'");
}
END_TEST

START_TEST(limit_not_a_number)
{
	refused(RULE_HEAD "limit nofile lots\n",
		NAME ":4: expected a positive count or 'unlimited' after "
		     "'limit nofile', got 'lots'");
}
END_TEST

START_TEST(limit_suffix_on_a_count)
{
	refused(RULE_HEAD "limit cpu 5M\n", NAME ":4: expected a positive number of seconds or "
						 "'unlimited' after 'limit cpu', got '5M'");
}
END_TEST

START_TEST(limit_overflow)
{
	refused(RULE_HEAD "limit as 9000000000000G\n",
		NAME ":4: expected a value of at most 9223372036854775807 "
		     "bytes after 'limit as', got '9000000000000G'");
}
END_TEST

START_TEST(limit_number_out_of_range)
{
	refused(RULE_HEAD "limit fsize 99999999999999999999\n",
		NAME ":4: expected a positive number of bytes (suffix K, M, "
		     "G or T allowed) or 'unlimited' after 'limit fsize', got "
		     "'99999999999999999999'");
}
END_TEST

/* Only the word "unlimited" means RLIM_INFINITY: a number the library's
 * iso_limit_parse() reads as UINT64_MAX, or as anything above LLONG_MAX,
 * is refused, with or without a suffix. */
START_TEST(limit_number_as_large_as_rlim_infinity_is_refused)
{
	refused(RULE_HEAD "limit nofile 18446744073709551615\n",
		NAME ":4: expected a positive count or 'unlimited' after "
		     "'limit nofile', got '18446744073709551615'");
	refused(RULE_HEAD "limit as 9223372036854775808\n",
		NAME ":4: expected a positive number of bytes (suffix K, M, "
		     "G or T allowed) or 'unlimited' after 'limit as', got "
		     "'9223372036854775808'");
	refused(RULE_HEAD "limit shm 16777215T\n",
		NAME ":4: expected a value of at most 9223372036854775807 "
		     "bytes after 'limit shm', got '16777215T'");
	accepted(RULE_HEAD "limit as 9223372036854775807\nlimit fsize 8388607T\n}\n");
	ck_assert_uint_eq(pol.rules[0].ceiling[ISO_LIMIT_AS], LLONG_MAX);
	ck_assert_uint_eq(pol.rules[0].ceiling[ISO_LIMIT_FSIZE], UINT64_C(8388607) << 40);
}
END_TEST

START_TEST(forward_name_outside_allow_list)
{
	refused(RULE_HEAD "forward LANG HOME\n",
		NAME ":4: expected 'none' or names from the forwarded list "
		     "after 'forward', got 'HOME'");
}
END_TEST

START_TEST(bad_override_name)
{
	refused(RULE_HEAD "overrides GOOD 1BAD\n",
		NAME ":4: expected 'any', 'none' or variable names after "
		     "'overrides', got '1BAD'");
}
END_TEST

START_TEST(override_of_channel_name)
{
	refused(RULE_HEAD "overrides ISOSPAWN_CHANNEL_FD\n",
		NAME ":4: expected 'any', 'none' or variable names after "
		     "'overrides', got 'ISOSPAWN_CHANNEL_FD'");
}
END_TEST

/* No list of the variables that make a program run code
 * of the caller's choosing can be complete (OPENSSL_CONF, LUA_INIT,
 * GIT_SSH_COMMAND, ZDOTDIR, ...), so a rule that restricts programs lists
 * the overrides it allows, or says none; any, said or left implicit, is
 * refused naming why. */
START_TEST(restricted_programs_need_an_overrides_list)
{
	static const char *const implicit_or_any[] = { "", "overrides any\n" };
	char text[256];

	for (size_t i = 0; i < 2; i++) {
		snprintf(text, sizeof(text),
			 "rule user:#1 {\npool 1900000010-1900000019\n"
			 "programs /usr/bin/curl\n%s}\n",
			 implicit_or_any[i]);
		refused(text, i == 0 ? NAME ":4: expected 'overrides NAME...' or 'overrides none' "
					    "in the rule opened at line 1: it restricts 'programs'"
				     : NAME ":5: expected 'overrides NAME...'");
		ck_assert_ptr_nonnull(strstr(why, "OPENSSL_CONF"));
	}
	accepted("rule user:#1 {\npool 1900000010-1900000019\nprograms /usr/bin/curl\n"
		 "overrides none\n}\n"
		 "rule user:#2 {\npool 1900000020-1900000029\nprograms /usr/bin/curl\n"
		 "overrides LANG TZ\n}\n"
		 "rule user:#3 {\npool 1900000030-1900000039\nprograms any\n}\n");
	ck_assert_uint_eq(strv_len(pol.rules[0].overrides), 0);
	ck_assert_uint_eq(strv_len(pol.rules[1].overrides), 2);
	ck_assert_ptr_null(pol.rules[2].overrides);
	policy_free(&pol);
	refused(RULE_HEAD "overrides none FOO\n}\n",
		NAME ":4: expected 'none' alone or variable names after 'overrides', got both");
}
END_TEST

START_TEST(allow_unsafe_needs_loader_name)
{
	refused(RULE_HEAD "allow-unsafe LD_PRELOAD HOME\n",
		NAME ":4: expected loader-level variable names (LD_*, "
		     "MALLOC_*, GCONV_PATH, ...) after 'allow-unsafe', got "
		     "'HOME'");
}
END_TEST

START_TEST(list_word_given_twice)
{
	refused(RULE_HEAD "seccomp-deny ptrace ptrace\n",
		NAME ":4: expected each word once after 'seccomp-deny', got "
		     "'ptrace' twice");
}
END_TEST

START_TEST(bad_syscall_name)
{
	refused(RULE_HEAD "seccomp-deny Ptrace\n",
		NAME ":4: expected system call names ([a-z0-9_], at most 64 "
		     "bytes) after 'seccomp-deny', got 'Ptrace'");
}
END_TEST

/* A name libseccomp did not know at build time (seccomp-tables.h) is
 * refused when the policy is read, not when a guest is spawned. */
START_TEST(unknown_syscall_name)
{
	refused(RULE_HEAD "seccomp-deny getppid no_such_syscall_xyz\n",
		NAME ":4: expected system call names ([a-z0-9_], at most 64 "
		     "bytes) after 'seccomp-deny', got 'no_such_syscall_xyz'");
	accepted(RULE_HEAD "seccomp-deny getppid stime accept clone3\n}\n");
}
END_TEST

START_TEST(timeout_default_above_max)
{
	refused(RULE_HEAD "timeout 60 120\n",
		NAME ":4: expected DEFAULT from 1 to 60 seconds after "
		     "'timeout 60', got '120'");
}
END_TEST

START_TEST(network_bad_value)
{
	refused(RULE_HEAD "\n\nnetwork maybe\n",
		NAME ":6: expected 'host', 'none' or 'none-only' after "
		     "'network', got 'maybe'");
}
END_TEST

START_TEST(keyword_extra_word)
{
	refused(RULE_HEAD "seccomp-action kill now\n",
		NAME ":4: expected end of line after 'seccomp-action kill', got "
		     "'now'");
}
END_TEST

/* An administrator upgrading from on-disk scratch directories is told
 * what replaced the keyword, not that it is unknown. */
START_TEST(removed_scratch_keyword_names_its_replacement)
{
	refused(RULE_HEAD "scratch remove\n",
		NAME ":4: expected no 'scratch' line: each guest's /tmp is now a tmpfs "
		     "that ends with it, sized by 'limit scratch SIZE' (see isospawn.conf(5))");
}
END_TEST

START_TEST(scratch_and_shm_limits_take_bytes)
{
	accepted("rule group:#50 {\npool 5000-5000\nprograms any\n"
		 "limit scratch 2G\nlimit shm 16M\n}\n");
	ck_assert_uint_eq(pol.rules[0].ceiling[ISO_LIMIT_SCRATCH], UINT64_C(2) << 30);
	ck_assert_uint_eq(pol.rules[0].ceiling[ISO_LIMIT_SHM], UINT64_C(16) << 20);
	ck_assert_uint_eq(iso_default_ceiling[ISO_LIMIT_SCRATCH], UINT64_C(256) << 20);
	ck_assert_uint_eq(iso_default_ceiling[ISO_LIMIT_SHM], UINT64_C(64) << 20);
}
END_TEST

/* The whole guest's limits (its cgroup): memory in bytes, pids a count,
 * cpus in CPUs down to the kernel's least quota; 'cgroup' and
 * 'cgroup-parent' as isospawn.conf(5) says. */
START_TEST(cgroup_limits_and_keywords)
{
	accepted("cgroup-parent /sys/fs/cgroup/guests\nrule group:#50 {\npool 5000-5000\n"
		 "programs any\nlimit memory 256M\nlimit pids 16\nlimit cpus 1.5\n"
		 "cgroup required\n}\n");
	ck_assert_uint_eq(pol.rules[0].ceiling[ISO_LIMIT_MEMORY], UINT64_C(256) << 20);
	ck_assert_uint_eq(pol.rules[0].ceiling[ISO_LIMIT_PIDS], 16);
	ck_assert_uint_eq(pol.rules[0].ceiling[ISO_LIMIT_CPUS], 1500);
	ck_assert_int_eq(pol.rules[0].cgroup, ISO_CGROUP_REQUIRED);
	ck_assert_str_eq(pol.cgroup_parent, "/sys/fs/cgroup/guests");
	policy_free(&pol);
	accepted(RULE_HEAD "}\n");
	ck_assert_int_eq(pol.rules[0].cgroup, ISO_CGROUP_OPTIONAL);
	ck_assert_ptr_null(pol.cgroup_parent);
	policy_free(&pol);
	refused(RULE_HEAD "limit cpus 0.001\n}\n", "a number of CPUs from 0.01");
	refused(RULE_HEAD "limit cpus 1.2345\n}\n", "a number of CPUs from 0.01");
	refused(RULE_HEAD "limit pids 1K\n}\n", "a positive count");
	refused(RULE_HEAD "cgroup maybe\n}\n", "'required', 'optional' or 'off'");
	refused("cgroup-parent /sys/fs/cgroup\n", "expected a directory below /sys/fs/cgroup");
	refused("cgroup-parent /tmp/x\n", "expected a directory below /sys/fs/cgroup");
	refused("cgroup-parent /sys/fs/cgroup/a\ncgroup-parent /sys/fs/cgroup/b\n",
		NAME ":2: expected one 'cgroup-parent', got a second (first at line 1)");
}
END_TEST

/* 'caller-limit': any of memory, pids and cpus, each once, bounding
 * all of a caller's guests together; where it was set is recorded; a
 * rule's replaces its defaults' whole; absent, there is none. */
START_TEST(caller_limit_keyword)
{
	const struct iso_rule *r;

	accepted("defaults {\ncaller-limit pids 64 cpus 2\n}\n" RULE_HEAD
		 "caller-limit memory 8G pids 1024\n}\nrule user:#2 {\npool 1900000020-1900000029\n"
		 "programs any\n}\n");
	r = &pol.rules[0];
	ck_assert_uint_eq(r->caller_limit[ISO_LIMIT_MEMORY], UINT64_C(8) << 30);
	ck_assert_uint_eq(r->caller_limit[ISO_LIMIT_PIDS], 1024);
	ck_assert_uint_eq(r->caller_limit[ISO_LIMIT_CPUS], UINT64_MAX);
	ck_assert_int_eq(r->at[ISO_KW_CALLER_LIMIT].by, ISO_SET_RULE);
	ck_assert_uint_eq(r->at[ISO_KW_CALLER_LIMIT].line, 7);
	r = &pol.rules[1];
	ck_assert_uint_eq(r->caller_limit[ISO_LIMIT_MEMORY], UINT64_MAX);
	ck_assert_uint_eq(r->caller_limit[ISO_LIMIT_PIDS], 64);
	ck_assert_uint_eq(r->caller_limit[ISO_LIMIT_CPUS], 2000);
	ck_assert_int_eq(r->at[ISO_KW_CALLER_LIMIT].by, ISO_SET_DEFAULTS);
	policy_free(&pol);
	accepted(RULE_HEAD "}\n");
	ck_assert_int_eq(pol.rules[0].at[ISO_KW_CALLER_LIMIT].by, ISO_SET_BUILTIN);
	ck_assert_uint_eq(pol.rules[0].caller_limit[ISO_LIMIT_MEMORY], UINT64_MAX);
	policy_free(&pol);
	refused(RULE_HEAD "caller-limit\n}\n",
		NAME ":4: expected memory, pids or cpus and a value");
	refused(RULE_HEAD "caller-limit as 1G\n}\n",
		NAME ":4: expected memory, pids or cpus, each once and with a value, after "
		     "'caller-limit', got 'as'");
	refused(RULE_HEAD "caller-limit pids 8 pids 9\n}\n", "each once and with a value");
	refused(RULE_HEAD "caller-limit memory 1G pids\n}\n", "got 'pids'");
	refused(RULE_HEAD "caller-limit memory lots\n}\n",
		"after 'caller-limit memory', got 'lots'");
	refused(RULE_HEAD "caller-limit pids 1\ncaller-limit pids 2\n}\n",
		"got a second 'caller-limit'");
}
END_TEST

START_TEST(keyword_missing_value)
{
	refused(RULE_HEAD "landlock\n", NAME ":4: expected 'required', 'optional' or 'off' after "
					     "'landlock', got end of line");
}
END_TEST

START_TEST(landlock_abi_out_of_range)
{
	refused(RULE_HEAD "landlock-abi 8\n", NAME ":4: expected an ABI version from 1 to 7 after "
						   "'landlock-abi', got '8'");
}
END_TEST

START_TEST(unterminated_rule)
{
	refused(RULE_HEAD, NAME ":3: expected '}' to close the rule opened at line 1, "
				"got end of file");
}
END_TEST

START_TEST(nested_rule)
{
	refused(RULE_HEAD "rule user:#2 {\n",
		NAME ":4: expected '}' to close the rule opened at line 1, "
		     "got 'rule'");
}
END_TEST

START_TEST(stray_closing_brace)
{
	refused("# nothing open\n}\n", NAME ":2: expected 'rule', 'defaults', 'include', "
					    "'audit-log' or 'cgroup-parent', got '}'");
}
END_TEST

START_TEST(line_too_long)
{
	char text[ISO_POLICY_LINE_MAX + 64];

	memset(text, 0, sizeof(text));
	text[0] = '\n';
	text[1] = '#';
	memset(text + 2, 'x', ISO_POLICY_LINE_MAX);
	refused(text, NAME ":2: expected at most 1024 bytes in a line, got "
			   "1025");
}
END_TEST

START_TEST(too_many_rules)
{
	char text[ISO_POLICY_FILE_MAX];
	size_t used = 0;
	int i;

	for (i = 0; i <= ISO_POLICY_RULES_MAX; i++)
		used += (size_t)snprintf(text + used, sizeof(text) - used,
					 "rule user:#%d {\npool %d-%d\n"
					 "programs any\n}\n",
					 i, 1900000100 + i, 1900000100 + i);
	refused(text, NAME ":257: expected at most 64 rules, got another");
}
END_TEST

START_TEST(too_many_words)
{
	char text[2048] = RULE_HEAD "read";
	int i;

	for (i = 0; i < ISO_POLICY_WORDS_MAX; i++)
		snprintf(text + strlen(text), sizeof(text) - strlen(text), " /p%d", i);
	refused(text, NAME ":4: expected at most 64 words in a line, got "
			   "more");
}
END_TEST

START_TEST(nul_byte)
{
	static const char text[] = "# fine\n# not\0fine\n";

	refused_len(text, sizeof(text) - 1, NAME ":2: expected printable text, got the byte 0x00");
}
END_TEST

START_TEST(control_byte)
{
	refused("rule user:#1 {\r\n", NAME ":1: expected printable text, got the byte 0x0d");
}
END_TEST

START_TEST(oversized_file)
{
	char *text = malloc(ISO_POLICY_FILE_MAX + 2);

	ck_assert_ptr_nonnull(text);
	memset(text, '\n', ISO_POLICY_FILE_MAX + 1);
	text[ISO_POLICY_FILE_MAX + 1] = '\0';
	refused(text, NAME ": expected at most 65536 bytes, got 65537");
	free(text);
}
END_TEST

START_TEST(failure_releases_earlier_rules)
{
	refused("rule user:#1 {\npool 1900000010-1900000019\nprograms any\nread /a\n}\n"
		"rule user:#2 {\npool 1900000020-1900000029\nprograms any\nwrite /b\n"
		"bogus\n}\n",
		NAME ":10: expected a rule keyword");
}
END_TEST

/* ------------------------------------------------------------------ */
/* Defaults, audit-log, collecting                                      */

#define DEFAULTS                                                            \
	"defaults {\n\tlimit as 2G\n\tlimit cpu 60\n\ttimeout 100 50\n"     \
	"\tnetwork host\n\tguests 7\n\toverrides FOO BAR\n\tforward LANG\n" \
	"\tseccomp strict\n\tseccomp-action kill\n\tseccomp-deny ptrace\n"  \
	"\tlandlock optional\n\tlandlock-abi 2\n\tgrants read\n}\n"

/* Every rule below a defaults block starts from it, so that a rule
 * written below the shipped one does not get looser built-in values; what
 * a rule says itself wins, a limit at a time; and each value knows where
 * it was set. */
START_TEST(rules_inherit_the_defaults_and_override_them)
{
	const struct iso_rule *a, *b;
	char where[256];

	accepted(DEFAULTS "rule user:#1 {\npool 1900000010-1900000019\nprograms /bin/sh\n}\n"
			  "rule user:#2 {\npool 1900000020-1900000029\nprograms any\nlimit as 1G\n"
			  "overrides none\nnetwork none\nguests 2\ngrants none\ntimeout 0\n"
			  "seccomp default\nseccomp-deny mount\nforward none\n}\n");
	a = &pol.rules[0];
	b = &pol.rules[1];
	ck_assert_uint_eq(a->ceiling[ISO_LIMIT_AS], 2ull << 30);
	ck_assert_uint_eq(a->ceiling[ISO_LIMIT_CPU], 60);
	ck_assert_uint_eq(a->ceiling[ISO_LIMIT_NOFILE], iso_default_ceiling[ISO_LIMIT_NOFILE]);
	ck_assert_uint_eq(a->timeout_max_ms, 100000);
	ck_assert_uint_eq(a->timeout_default_ms, 50000);
	ck_assert_int_eq(a->network_default, ISO_NETWORK_HOST);
	ck_assert_int_eq(a->guests_max, 7);
	/* A rule that restricts programs may take its overrides list from
	 * the defaults. */
	ck_assert_uint_eq(strv_len(a->overrides), 2);
	ck_assert_str_eq(a->forward[0], "LANG");
	ck_assert_int_eq(a->seccomp, ISO_SECCOMP_STRICT);
	ck_assert_int_eq(a->seccomp_action, ISO_SECCOMP_KILL);
	ck_assert_str_eq(a->seccomp_deny[0], "ptrace");
	ck_assert_int_eq(a->landlock, ISO_LANDLOCK_OPTIONAL);
	ck_assert_int_eq(a->landlock_min_abi, 2);
	ck_assert_int_eq(a->grants, ISO_GRANTS_READ);
	ck_assert_int_eq(a->at[ISO_KW_GUESTS].by, ISO_SET_DEFAULTS);
	ck_assert_uint_eq(a->at[ISO_KW_GUESTS].line, 6);
	ck_assert_int_eq(a->limit_at[ISO_LIMIT_AS].by, ISO_SET_DEFAULTS);
	ck_assert_uint_eq(a->limit_at[ISO_LIMIT_AS].line, 2);
	ck_assert_int_eq(a->limit_at[ISO_LIMIT_NOFILE].by, ISO_SET_BUILTIN);
	/* A refusal names a built-in value at the rule's first line. */
	ck_assert_str_eq(policy_where(a, ISO_KW_LIMIT, ISO_LIMIT_NOFILE, where, sizeof(where)),
			 NAME ":16 (limit nofile)");
	ck_assert_str_eq(policy_where(a, ISO_KW_GUESTS, 0, where, sizeof(where)),
			 NAME ":6 (guests)");
	ck_assert_int_eq(a->at[ISO_KW_POOL].by, ISO_SET_RULE);
	ck_assert_uint_eq(a->at[ISO_KW_POOL].line, 17);

	ck_assert_uint_eq(b->ceiling[ISO_LIMIT_AS], 1ull << 30);
	ck_assert_uint_eq(b->ceiling[ISO_LIMIT_CPU], 60);
	ck_assert_uint_eq(strv_len(b->overrides), 0);
	ck_assert_int_eq(b->network_default, ISO_NETWORK_NONE);
	ck_assert_int_eq(b->guests_max, 2);
	ck_assert_int_eq(b->grants, ISO_GRANTS_NONE);
	ck_assert_uint_eq(b->timeout_max_ms, 0);
	ck_assert_int_eq(b->seccomp, ISO_SECCOMP_DEFAULT);
	ck_assert_int_eq(b->seccomp_action, ISO_SECCOMP_KILL);
	ck_assert_uint_eq(strv_len(b->seccomp_deny), 1);
	ck_assert_str_eq(b->seccomp_deny[0], "mount");
	ck_assert_uint_eq(strv_len(b->forward), 0);
	ck_assert_int_eq(b->at[ISO_KW_GUESTS].by, ISO_SET_RULE);
	ck_assert_int_eq(b->limit_at[ISO_LIMIT_AS].by, ISO_SET_RULE);
	/* What a caller reads of its rule carries what it inherits. */
	ck_assert_ptr_nonnull(strstr(a->text, DEFAULTS "rule user:#1 {"));
}
END_TEST

/* A defaults block holds what every rule may share; what makes a rule the
 * one it is stays the rule's. */
START_TEST(defaults_hold_only_what_rules_share)
{
	static const char *const own[] = { "pool 1900000010-1900000019", "programs any",
					   "read /srv", "write /srv", "allow-unsafe LD_PRELOAD" };
	char text[256], want[256];

	for (size_t i = 0; i < COUNT(own); i++) {
		snprintf(text, sizeof(text), "defaults {\n%s\n}\n", own[i]);
		snprintf(want, sizeof(want),
			 NAME ":2: expected '%.*s' only in a rule (each rule has "
			      "its own), got it in 'defaults'",
			 (int)strcspn(own[i], " "), own[i]);
		refused(text, want);
	}
	refused("defaults {\nfrobnicate\n}\n", NAME
		":2: expected a defaults keyword (see isospawn.conf(5)) or '}', got 'frobnicate'");
	refused(
	    "defaults {\nguests 2\nguests 3\n}\n", NAME
	    ":3: expected each keyword once per block, got a second 'guests' (first at line 2)");
	refused(
	    "defaults {\nlimit as 1G\nlimit as 2G\n}\n", NAME
	    ":3: expected each limit once per block, got a second 'limit as' (first at line 2)");
	refused("defaults {\nguests 2\n", NAME ":2: expected '}' to close the defaults opened at "
					       "line 1, got end of file");
	refused("defaults\n}\n", NAME ":1: expected '{' alone after 'defaults', got 'end of line'");
	/* A rule that restricts programs still needs a list, from wherever. */
	refused("defaults {\noverrides any\n}\nrule user:#1 {\npool 1900000010-1900000019\n"
		"programs /bin/sh\n}\n",
		NAME ":7: expected 'overrides NAME...' or 'overrides none'");
}
END_TEST

/* Above every rule and the include, once: then every rule, a drop-in's
 * too, inherits the same. */
START_TEST(defaults_once_above_every_rule)
{
	refused(RULE_HEAD "}\ndefaults {\n}\n",
		NAME ":5: expected 'defaults' above every rule and 'include' (rules above it would "
		     "not inherit it), got it below line 1");
	refused("include /nonexistent\ndefaults {\n}\n",
		NAME ":2: expected 'defaults' above every rule and 'include'");
	refused("defaults {\n}\ndefaults {\n}\n",
		NAME ":3: expected one 'defaults' block, got a second (first at line 1)");
	refused("defaults {\nrule user:#1 {\n", NAME ":2: expected '}' to close the defaults "
						     "opened at line 1, got 'rule'");
}
END_TEST

START_TEST(audit_log_is_one_absolute_file)
{
	accepted("audit-log /var/log/isospawn/audit.log\n" RULE_HEAD "}\n");
	ck_assert_str_eq(pol.audit_log, "/var/log/isospawn/audit.log");
	policy_free(&pol);
	accepted(RULE_HEAD "}\n");
	ck_assert_ptr_null(pol.audit_log);
	policy_free(&pol);
	refused("audit-log log\n", NAME ":1: expected a file (absolute normalized path) alone "
					"after 'audit-log', got 'log'");
	refused("audit-log /var/log/\n", "got '/var/log/'");
	refused("audit-log\n", "got 'end of line'");
	refused("audit-log /a\naudit-log /b\n",
		NAME ":2: expected one 'audit-log', got a second (first at line 1)");
	refused(RULE_HEAD "audit-log /a\n}\n",
		NAME ":4: expected a rule keyword (see isospawn.conf(5)) or '}', got 'audit-log'");
}
END_TEST

/* The same code path in both modes: the helper stops at the first error;
 * isospawnctl check goes on and notes them all, the same first one
 * included; neither keeps a rule. A line in error does not make the rule
 * "miss" what it would have set, and a rule left open ends where the next
 * begins. */
START_TEST(collecting_parse_notes_each_error_once)
{
	static const char text[] = "rule user:#1 {\n"
				   "pool 1900000010-19\n"
				   "programs any\n"
				   "network maybe\n"
				   "rule user:#2 {\n"
				   "pool 1900000020-1900000029\n"
				   "programs any\n"
				   "}\n";
	struct iso_policy_report report = { .flags = ISO_POLICY_COLLECT };

	ck_assert_int_eq(policy_parse(text, strlen(text), NAME, &pol, &report, why, sizeof(why)),
			 -EINVAL);
	ck_assert_ptr_null(pol.rules);
	ck_assert_uint_eq(report.errors, 3);
	ck_assert_uint_eq(report.nnotes, 3);
	ck_assert_str_eq(report.notes[0], NAME ":2: expected FIRST <= LAST after 'pool', got "
					       "'1900000010-19'");
	ck_assert_str_eq(report.notes[1], NAME ":4: expected 'host', 'none' or 'none-only' after "
					       "'network', got 'maybe'");
	ck_assert_str_eq(report.notes[2], NAME ":5: expected '}' to close the rule opened at "
					       "line 1, got 'rule'");
	ck_assert_str_eq(why, report.notes[0]);
	policy_report_free(&report);
	refused(text, NAME ":2: expected FIRST <= LAST after 'pool', got '1900000010-19'");
}
END_TEST

static int check_path(const char *path)
{
	why[0] = '\0';
	return policy_check_path(path, 0, why, sizeof(why));
}

static void check_path_refused(const char *path, int code, const char *reason)
{
	int rc = check_path(path);

	ck_assert_int_eq(rc, code);
	ck_assert_msg(strstr(why, reason) != NULL, "got \"%s\", want \"%s\"", why, reason);
}

START_TEST(check_path_relative_refused)
{
	check_path_refused("etc/isospawn.conf", -EINVAL,
			   "etc/isospawn.conf: expected an absolute "
			   "normalized path");
}
END_TEST

static Suite *policy_suite(void)
{
	Suite *s = suite_create("policy");
	TCase *ok = tcase_create("accepted");
	TCase *bad = tcase_create("refused");

	tcase_add_checked_fixture(ok, NULL, teardown_policy);
	tcase_add_test(ok, full_rule_with_every_keyword);
	tcase_add_test(ok, minimal_rule_gets_defaults);
	tcase_add_test(ok, rule_keeps_its_file_line_and_text);
	tcase_add_test(ok, default_ceilings_are_documented_values);
	tcase_add_test(ok, numeric_uid_and_gid);
	tcase_add_test(ok, names_resolved_at_parse_time);
	tcase_add_test(ok, byte_suffixes_are_powers_of_1024);
	tcase_add_test(ok, unlimited_stores_max);
	tcase_add_test(ok, timeout_without_default_uses_ceiling);
	tcase_add_test(ok, timeout_zero_max_is_no_ceiling);
	tcase_add_test(ok, network_none_is_default_not_only);
	tcase_add_test(ok, forward_none_is_empty_list);
	tcase_add_test(ok, comments_blank_lines_and_tabs_ignored);
	tcase_add_test(ok, empty_file_has_no_rules);
	tcase_add_test(ok, last_line_without_newline);
	tcase_add_test(ok, pool_of_max_size_accepted);
	tcase_add_test(ok, line_of_max_length_accepted);
	tcase_add_test(ok, file_of_max_size_accepted);
	tcase_add_test(ok, first_matching_rule_wins);
	tcase_add_test(ok, user_rule_matches_uid_only);
	tcase_add_test(ok, group_rule_matches_gid);
	tcase_add_test(ok, group_rule_matches_supplementary_group);
	tcase_add_test(ok, no_matching_rule_is_null);
	tcase_add_test(ok, shipped_default_policy_parses);
	tcase_add_test(ok, shipped_default_policy_gives_guests_no_network);
	tcase_add_test(ok, rule_without_network_or_timeout_gets_the_shipped_policys);
	tcase_add_test(ok, pool_holding_an_account_is_left_to_the_lease);
	tcase_add_test(ok, guests_bound_live_guests_per_caller);
	tcase_add_test(ok, rules_inherit_the_defaults_and_override_them);
	suite_add_tcase(s, ok);

	tcase_add_checked_fixture(bad, NULL, teardown_policy);
	tcase_add_test(bad, include_needs_one_absolute_directory);
	tcase_add_test(bad, include_in_text_reads_no_file);
	tcase_add_test(bad, include_only_once);
	tcase_add_test(bad, include_not_inside_a_rule);
	tcase_add_test(bad, unknown_top_level_word_names_include);
	tcase_add_test(bad, unknown_keyword);
	tcase_add_test(bad, duplicate_keyword);
	tcase_add_test(bad, duplicate_limit);
	tcase_add_test(bad, missing_pool);
	tcase_add_test(bad, missing_programs);
	tcase_add_test(bad, pool_containing_uid_0);
	tcase_add_test(bad, pool_containing_uid_minus_1);
	tcase_add_test(bad, pool_reversed);
	tcase_add_test(bad, pool_too_large);
	tcase_add_test(bad, pool_delegated_in_subuid_or_subgid_refused_naming_it);
	tcase_add_test(bad, write_paths_refused_in_group_rules);
	tcase_add_test(bad, may_read_and_may_write_refused_naming_grants);
	tcase_add_test(bad, rule_paths_inside_its_write_paths_refused);
	tcase_add_test(bad, pool_malformed);
	tcase_add_test(bad, overlapping_pools);
	tcase_add_test(bad, relative_program_path);
	tcase_add_test(bad, program_any_mixed_with_paths);
	tcase_add_test(bad, path_with_dotdot);
	tcase_add_test(bad, path_not_normalized);
	tcase_add_test(bad, unknown_user);
	tcase_add_test(bad, unknown_group);
	tcase_add_test(bad, match_id_minus_1);
	tcase_add_test(bad, rule_without_brace);
	tcase_add_test(bad, bad_match_kind);
	tcase_add_test(bad, bad_limit_name);
	tcase_add_test(bad, limit_not_a_number);
	tcase_add_test(bad, limit_suffix_on_a_count);
	tcase_add_test(bad, limit_overflow);
	tcase_add_test(bad, limit_number_out_of_range);
	tcase_add_test(bad, limit_number_as_large_as_rlim_infinity_is_refused);
	tcase_add_test(bad, forward_name_outside_allow_list);
	tcase_add_test(bad, bad_override_name);
	tcase_add_test(bad, override_of_channel_name);
	tcase_add_test(bad, restricted_programs_need_an_overrides_list);
	tcase_add_test(bad, allow_unsafe_needs_loader_name);
	tcase_add_test(bad, list_word_given_twice);
	tcase_add_test(bad, bad_syscall_name);
	tcase_add_test(bad, unknown_syscall_name);
	tcase_add_test(bad, timeout_default_above_max);
	tcase_add_test(bad, network_bad_value);
	tcase_add_test(bad, keyword_extra_word);
	tcase_add_test(bad, removed_scratch_keyword_names_its_replacement);
	tcase_add_test(bad, scratch_and_shm_limits_take_bytes);
	tcase_add_test(bad, cgroup_limits_and_keywords);
	tcase_add_test(bad, caller_limit_keyword);
	tcase_add_test(bad, keyword_missing_value);
	tcase_add_test(bad, landlock_abi_out_of_range);
	tcase_add_test(bad, unterminated_rule);
	tcase_add_test(bad, nested_rule);
	tcase_add_test(bad, stray_closing_brace);
	tcase_add_test(bad, line_too_long);
	tcase_add_test(bad, too_many_rules);
	tcase_add_test(bad, too_many_words);
	tcase_add_test(bad, nul_byte);
	tcase_add_test(bad, control_byte);
	tcase_add_test(bad, oversized_file);
	tcase_add_test(bad, failure_releases_earlier_rules);
	tcase_add_test(bad, check_path_relative_refused);
	tcase_add_test(bad, defaults_hold_only_what_rules_share);
	tcase_add_test(bad, defaults_once_above_every_rule);
	tcase_add_test(bad, audit_log_is_one_absolute_file);
	tcase_add_test(bad, collecting_parse_notes_each_error_once);
	suite_add_tcase(s, bad);

	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(policy_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
