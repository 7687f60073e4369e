/*
 * fuzz_policy.c - libFuzzer target for the policy parser (policy/policy.c),
 * fed from a buffer as policy_load() feeds it from the file, read as the
 * helper reads (stopping at the first error) and as isospawnctl check
 * reads (collecting them all). Built by `make
 * fuzz`, run by scripts/fuzz; seeds in fuzz/corpus/policy (the shipped
 * etc/isospawn.conf, the test policy, and inputs at and just over every
 * bound of policy.h).
 *
 * Properties: the parser never crashes or leaks; a refusal names the file
 * and a line ("fuzz.conf:N: ...") or the file's size, and leaves the
 * policy empty; what it accepts keeps policy.h's promises: at most
 * ISO_POLICY_RULES_MAX rules, pools without 0 or -1, FIRST <= LAST, at
 * most ISO_POLICY_POOL_MAX uids, no two pools overlapping, programs either
 * "any" or absolute paths, and every rule is what policy_match() returns
 * for its own id when no earlier rule matches it.
 *
 * The account database is a fixed one of this file's (below): the parser's
 * lookups of a rule's user or group are then the same on every host, and
 * read no /etc/passwd or /etc/group.
 */
#include "config.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* ---- A fixed account database, in place of the C library's ---- */

static struct passwd users[] = {
	{ .pw_name = "root", .pw_uid = 0, .pw_gid = 0 },
	{ .pw_name = "daemon", .pw_uid = 1, .pw_gid = 1 },
	{ .pw_name = "alice", .pw_uid = 1000, .pw_gid = 1000 },
	{ .pw_name = "nobody", .pw_uid = 65534, .pw_gid = 65534 },
};
static struct group groups[] = {
	{ .gr_name = "root", .gr_gid = 0 },
	{ .gr_name = "isospawn", .gr_gid = 999 },
	{ .gr_name = "nogroup", .gr_gid = 65534 },
};

struct passwd *getpwnam(const char *name)
{
	for (size_t i = 0; i < COUNT(users); i++)
		if (strcmp(users[i].pw_name, name) == 0)
			return &users[i];
	return NULL;
}

struct group *getgrnam(const char *name)
{
	for (size_t i = 0; i < COUNT(groups); i++)
		if (strcmp(groups[i].gr_name, name) == 0)
			return &groups[i];
	return NULL;
}

static void check_rule(const struct iso_policy *pol, size_t i)
{
	const struct iso_rule *r = &pol->rules[i];
	uint32_t first = r->pool_first, last = r->pool_last;

	if (first == 0 || last == UINT32_MAX || first > last ||
	    (uint64_t)last - first + 1 > ISO_POLICY_POOL_MAX)
		abort();
	for (size_t k = 0; k < i; k++)
		if (first <= pol->rules[k].pool_last && pol->rules[k].pool_first <= last)
			abort(); /* overlapping pools */
	if (r->match_text == NULL || (r->programs_any && r->programs && r->programs[0]))
		abort();
	for (char **p = r->programs; p && *p; p++)
		if ((*p)[0] != '/')
			abort();
	if (r->match == ISO_MATCH_USER) {
		const struct iso_rule *hit = policy_match(pol, r->id, (gid_t)-1, NULL, 0);

		if (hit == NULL || hit > r)
			abort(); /* the first matching rule wins */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct iso_policy_report report = { .flags = ISO_POLICY_COLLECT };
	struct iso_policy pol, all;
	char why[4096] = "", first[4096] = "";
	int rc = policy_parse((const char *)data, size, "fuzz.conf", &pol, NULL, why, sizeof(why));
	int collected = policy_parse((const char *)data, size, "fuzz.conf", &all, &report, first,
				     sizeof(first));

	/* One code path: collecting changes what is said after the first
	 * error, never the verdict nor that first error; it keeps nothing
	 * either, and notes within its bound, each naming the file. */
	if (collected != rc || strcmp(why, first) != 0 || (rc < 0 && all.rules != NULL) ||
	    (rc == 0) != (report.errors == 0) || report.errors > ISO_POLICY_ERRORS_MAX ||
	    report.nnotes > ISO_POLICY_NOTES_MAX || (rc < 0 && strcmp(report.notes[0], why) != 0))
		abort();
	for (size_t i = 0; i < report.nnotes; i++)
		if (strncmp(report.notes[i], "fuzz.conf:", 10) != 0 &&
		    strcmp(report.notes[i], "too many errors: stopped reading") != 0)
			abort();
	policy_report_free(&report);
	policy_free(&all);
	if (rc < 0) {
		if (rc != -EINVAL || strncmp(why, "fuzz.conf:", 10) != 0 || pol.rules != NULL ||
		    pol.nrules != 0)
			abort();
		return 0;
	}
	if (rc != 0 || pol.nrules > ISO_POLICY_RULES_MAX || (pol.nrules > 0) != (pol.rules != NULL))
		abort();
	for (size_t i = 0; i < pol.nrules; i++)
		check_rule(&pol, i);
	policy_free(&pol);
	if (pol.rules != NULL || pol.nrules != 0)
		abort();
	return 0;
}
