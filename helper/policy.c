/*
 * policy.c - read and check the administrator's policy, isospawn.conf(5).
 *
 * Runs as root on a file only root can write, but is still written as a
 * parser of hostile input, because a parser bug here is a root bug:
 *  - MUST NOT accept anything it does not fully understand: an unknown
 *    keyword, a missing or extra word, an out-of-range number is an error
 *    naming the file, the line and what was expected.
 *  - MUST NOT truncate: a file, line, rule count or word count over its
 *    bound is an error, never silently cut.
 *  - MUST leave *out empty on any failure.
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "env.h"
#include "policy.h"
#include "seccomp-tables.h"
#include "util.h"

/* Where /etc/subuid and /etc/subgid are (a test's own directory in
 * tests/unit_policy). */
#ifndef ISO_SUBID_DIR
#define ISO_SUBID_DIR "/etc"
#endif

#define GIB (UINT64_C(1) << 30)
#define MIB (UINT64_C(1) << 20)

const uint64_t iso_default_ceiling[ISO_LIMIT_COUNT] = {
	[ISO_LIMIT_CPU] = 3600,		/* one hour of CPU time */
	[ISO_LIMIT_AS] = 8 * GIB,	/* room for a JIT or a large interpreter */
	[ISO_LIMIT_NOFILE] = 1024,	/* the usual soft default */
	[ISO_LIMIT_NPROC] = 512,	/* counted per pool uid: stops fork bombs */
	[ISO_LIMIT_FSIZE] = 4 * GIB,	/* no single file fills a disk */
	[ISO_LIMIT_STACK] = 8 * MIB,	/* the usual default */
	[ISO_LIMIT_SCRATCH] = 256 * MIB, /* /tmp: memory, like shm below */
	[ISO_LIMIT_SHM] = 64 * MIB,	/* /dev/shm */
};

#define LANDLOCK_ABI_MAX 7

struct parser {
	const char *name; /* the file, for messages */
	unsigned line;
	const char *at, *at_end; /* the line being parsed */
	const char *rule_at;	 /* where the open rule starts */
	int check;		 /* policy_add_file()'s, for included files */
	int may_include;	 /* a main file, not yet included */
	int reads_files;	 /* from policy_add_file(): includes are read */
	char *why;
	size_t n;
	struct iso_policy *policy;
	struct iso_rule *rule; /* the open rule, or NULL between rules */
	const char *keyword;   /* the keyword being parsed, for messages */
	unsigned seen[32];     /* line of each keyword in the open rule */
	unsigned limit_seen[ISO_LIMIT_COUNT];
};

/* Every parse error goes through here, so each names file and line. msg
 * holds every word of one line with room to spare; only a message that
 * also quotes another rule's file name (any path, for isospawnctl check)
 * can be cut short, and then only its end. */
static int __attribute__((format(printf, 2, 3)))
fail(struct parser *p, const char *fmt, ...)
{
	char msg[2 * ISO_POLICY_LINE_MAX];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return iso_why(p->why, p->n, EINVAL, "%s:%u: %s", p->name, p->line, msg);
}

static int out_of_memory(struct parser *p)
{
	return iso_why(p->why, p->n, ENOMEM, "%s:%u: out of memory", p->name, p->line);
}

/* ---- Words ---- */

/* The number the len bytes at s spell: decimal digits only (strtoull
 * alone would also take "+5", " 5" and "-5"), at most max. The byte at
 * s + len is not a digit (a word's end or '-'), so strtoull stops there.
 * Every max is at most UINT32_MAX, so the ULLONG_MAX strtoull gives a
 * number too large for it is above max too. */
static int parse_decimal(const char *s, size_t len, uint32_t max, uint64_t *out)
{
	unsigned long long value;

	if (len == 0 || strspn(s, "0123456789") != len)
		return -1;
	value = strtoull(s, NULL, 10);
	if (value > max)
		return -1;
	*out = value;
	return 0;
}

/* What each word of a list keyword must be. */
enum word_kind { NOT_A_LIST, WORD_PATH, WORD_PROGRAM, WORD_OVERRIDE, WORD_UNSAFE, WORD_FORWARD,
		 WORD_SYSCALL };

static int syscall_cmp(const void *name, const void *entry)
{
	return strcmp(name, ((const struct iso_syscall *)entry)->name);
}

const struct iso_syscall *policy_syscall(const char *name)
{
	return bsearch(name, iso_syscalls, iso_nsyscalls, sizeof *iso_syscalls, syscall_cmp);
}

static int word_valid(enum word_kind kind, const char *word)
{
	size_t len = strlen(word);

	switch (kind) {
	case WORD_PATH:
		return iso_path_check(word, ISO_PATH_ANY, NULL) == 0;
	case WORD_PROGRAM:
		return iso_path_check(word, ISO_PATH_FILE, NULL) == 0;
	case WORD_OVERRIDE:
		return iso_env_name_valid(word, len) && strcmp(word, ISO_ENV_CHANNEL_NAME) != 0;
	case WORD_UNSAFE:
		return iso_env_name_valid(word, len) && iso_env_is_unsafe_name(word, len);
	case WORD_FORWARD:
		return iso_env_is_forwarded_name(word, len);
	case WORD_SYSCALL:
		return policy_syscall(word) != NULL;
	case NOT_A_LIST:
		break;
	}
	return 0;
}

/* ---- Keywords ---- */

/* A keyword has a parse function, or is a list (parse_list()), a number
 * (parse_number()) or a choice (one_of()) stored at `field` of the rule;
 * or it is removed, and refused naming what replaced it. */
struct keyword {
	const char *name;
	int (*parse)(struct parser *p, struct iso_rule *r, char *const *arg, size_t narg);
	int repeats; /* once per limit name rather than once per rule */
	size_t field;
	enum word_kind list;
	const char *what; /* a list's words, a number, or what replaced it */
	int any, none;	  /* "any" (field NULL), "none" (empty) may replace them */
	const char *const choices[4]; /* a choice's words, stored as their index */
	int max;       /* a number from 1 to max, stored as int (what: the number) */
	int removed;   /* a keyword no longer read (what: what replaced it) */
};

static int want_args(struct parser *p, char *const *arg, size_t narg, size_t min, size_t max,
		     const char *what)
{
	if (narg < min)
		return fail(p, "expected %s after '%s', got end of line", what, p->keyword);
	if (narg > max)
		return fail(p, "expected end of line after '%s %s', got '%s'", p->keyword,
			    arg[max - 1], arg[max]);
	return 0;
}

/* One word out of `choices` (NULL-terminated); returns its index. */
static int one_of(struct parser *p, char *const *arg, size_t narg, const char *const *choices)
{
	char expected[160] = "";
	int i, rc;

	for (i = 0; choices[i] != NULL; i++)
		snprintf(expected + strlen(expected), sizeof(expected) - strlen(expected), "%s'%s'",
			 i == 0 ? "" : choices[i + 1] != NULL ? ", " : " or ", choices[i]);
	if ((rc = want_args(p, arg, narg, 1, 1, expected)) < 0)
		return rc;
	for (i = 0; choices[i] != NULL; i++)
		if (strcmp(arg[0], choices[i]) == 0)
			return i;
	return fail(p, "expected %s after '%s', got '%s'", expected, p->keyword, arg[0]);
}

static int parse_number(struct parser *p, const struct keyword *kw, char *const *arg,
			size_t narg)
{
	uint64_t value;
	int rc;

	if ((rc = want_args(p, arg, narg, 1, 1, kw->what)) < 0)
		return rc;
	if (parse_decimal(arg[0], strlen(arg[0]), (uint32_t)kw->max, &value) < 0 || value < 1)
		return fail(p, "expected %s from 1 to %d after '%s', got '%s'", kw->what, kw->max,
			    kw->name, arg[0]);
	*(int *)((char *)p->rule + kw->field) = (int)value;
	return 0;
}

/* "any" by itself (where kw->any: the field stays NULL), "none" by itself
 * (where kw->none: an empty list), or one or more valid words, each once. */
static int parse_list(struct parser *p, const struct keyword *kw, char *const *arg, size_t narg)
{
	char ***field = (char ***)((char *)p->rule + kw->field);
	char expected[128];

	snprintf(expected, sizeof(expected), "%s%s%s", kw->any ? kw->none ? "'any', " : "'any' or "
		 : "", kw->none ? "'none' or " : "", kw->what);
	if (narg == 0)
		return fail(p, "expected %s after '%s', got end of line", expected, kw->name);
	for (size_t i = 0; i < narg; i++) {
		int any = kw->any && strcmp(arg[i], "any") == 0;

		if (any || (kw->none && strcmp(arg[i], "none") == 0)) {
			if (narg != 1)
				return fail(p, "expected '%s' alone or %s after '%s', got both",
					    arg[i], kw->what, kw->name);
			if (any)
				return 0;
			narg = 0;
			break;
		}
		if (!word_valid(kw->list, arg[i]))
			return fail(p, "expected %s after '%s', got '%s'", expected, kw->name,
				    arg[i]);
		for (size_t j = 0; j < i; j++)
			if (strcmp(arg[i], arg[j]) == 0)
				return fail(p, "expected each word once after '%s', got '%s' twice",
					    kw->name, arg[i]);
	}
	/* One allocation: every list is released by a single free(). */
	*field = iso_strv_new((const char *const *)arg, narg);
	return *field != NULL ? 0 : out_of_memory(p);
}

/* The first rule whose pool holds one of the ids first..first+count-1
 * (count >= 1), or NULL. The open rule has no pool yet (0-0). */
static const struct iso_rule *pool_holding(const struct iso_policy *policy, uint64_t first,
					   uint64_t count)
{
	for (size_t i = 0; i < policy->nrules; i++) {
		const struct iso_rule *r = &policy->rules[i];

		if (first <= r->pool_last && (r->pool_first < first || r->pool_first - first < count))
			return r;
	}
	return NULL;
}

/* No pool holds ids first..first+count-1, which are not the pools' to give
 * (`fmt` says whose): 0, or -EINVAL naming the rule's pool and them. */
static int __attribute__((format(printf, 7, 8)))
pool_apart(const struct iso_policy *policy, uint64_t first, uint64_t count, const char *what,
	   char *why, size_t n, const char *fmt, ...)
{
	const struct iso_rule *r = pool_holding(policy, first, count);
	char whose[2 * ISO_POLICY_LINE_MAX];
	va_list ap;

	if (r == NULL)
		return 0;
	va_start(ap, fmt);
	vsnprintf(whose, sizeof(whose), fmt, ap);
	va_end(ap);
	return iso_why(why, n, EINVAL, "%s:%u: expected a pool without %s, got '%" PRIu32 "-%"
		       PRIu32 "': %s", r->file, r->pool_line, what, r->pool_first, r->pool_last,
		       whose);
}

/* A pool id delegated to a user (/etc/subuid or /etc/subgid:
 * "OWNER:FIRST:COUNT", which newuidmap and newgidmap let OWNER map into its
 * user namespaces) would let it run processes as a guest's uid or gid:
 * every range is checked, in one pass for all the rules of all the files.
 * A pool id that is an account's is refused when it is leased
 * (creds.c), by a lookup that sees directory users too. */
static int pools_without_delegated_ids(struct iso_policy *policy, char *why, size_t n)
{
	static const char *const subid[] = { ISO_SUBID_DIR "/subuid", ISO_SUBID_DIR "/subgid" };
	unsigned long long first, count;
	char line[256], owner[128];
	FILE *f;
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < COUNT(subid); i++) {
		if ((f = fopen(subid[i], "re")) == NULL)
			continue;
		while (rc == 0 && fgets(line, sizeof(line), f) != NULL)
			if (sscanf(line, "%127[^:]:%llu:%llu", owner, &first, &count) == 3 && count > 0)
				rc = pool_apart(policy, first, count, "delegated ids", why, n,
						"%s gives '%s' ids %llu-%llu", subid[i], owner, first,
						first + (count - 1));
		fclose(f);
	}
	return rc;
}

static int kw_pool(struct parser *p, struct iso_rule *r, char *const *arg, size_t narg)
{
	const struct iso_rule *other;
	const char *dash;
	uint64_t lo, hi;
	int rc;

	if ((rc = want_args(p, arg, narg, 1, 1, "FIRST-LAST")) < 0)
		return rc;
	if ((dash = strchr(arg[0], '-')) == NULL ||
	    parse_decimal(arg[0], (size_t)(dash - arg[0]), UINT32_MAX, &lo) < 0 ||
	    parse_decimal(dash + 1, strlen(dash + 1), UINT32_MAX, &hi) < 0)
		return fail(p, "expected FIRST-LAST (two uids from 1 to %" PRIu32 ") after 'pool', "
			    "got '%s'", UINT32_MAX - 1, arg[0]);
	/* uid 0 is root; (uid_t)-1 means "unchanged" to setresuid(). */
	if (lo == 0 || hi == UINT32_MAX)
		return fail(p, "expected a pool without uid %" PRIu32 ", got '%s'",
			    lo == 0 ? 0 : UINT32_MAX, arg[0]);
	if (lo > hi)
		return fail(p, "expected FIRST <= LAST after 'pool', got '%s'", arg[0]);
	if (hi - lo + 1 > ISO_POLICY_POOL_MAX)
		return fail(p, "expected a pool of at most %d uids, got '%s' (%" PRIu64 " uids)",
			    ISO_POLICY_POOL_MAX, arg[0], hi - lo + 1);
	/* Two rules sharing uids would let one caller's guest signal or
	 * read another's. */
	if ((other = pool_holding(p->policy, lo, hi - lo + 1)) != NULL)
		return fail(p, "expected a pool apart from the pool %" PRIu32 "-%" PRIu32
			    " of the rule at %s:%u, got '%s'", other->pool_first,
			    other->pool_last, other->file, other->line, arg[0]);
	r->pool_line = p->line;
	r->pool_first = (uint32_t)lo;
	r->pool_last = (uint32_t)hi;
	return 0;
}

#define LIMITS "cpu, as, fsize, stack, nofile, nproc, scratch or shm"

static int kw_limit(struct parser *p, struct iso_rule *r, char *const *arg, size_t narg)
{
	uint64_t value = 0;
	int which, rc;

	if ((rc = want_args(p, arg, narg, 2, 2, "a limit name (" LIMITS ") and a value")) < 0)
		return rc;
	if ((which = iso_limit_from_name(arg[0])) < 0)
		return fail(p, "expected " LIMITS " after 'limit', got '%s'", arg[0]);
	if (p->limit_seen[which] != 0)
		return fail(p, "expected each limit once per rule, got a second 'limit %s' "
			    "(first at line %u)", arg[0], p->limit_seen[which]);
	p->limit_seen[which] = p->line;
	/* Bounded below RLIM_INFINITY, which only "unlimited" may mean: the
	 * library reads that word as UINT64_MAX, and so it is stored. */
	rc = iso_limit_parse(arg[1], which, &value);
	if (rc == 0 && value > LLONG_MAX && strcmp(arg[1], "unlimited") != 0)
		rc = -ERANGE;
	/* Too large by its suffix: named with the bound. Too many digits are
	 * no number at all. (No word is empty.) */
	if (rc == -ERANGE && !isdigit((unsigned char)arg[1][strlen(arg[1]) - 1]))
		return fail(p, "expected a value of at most %lld bytes after 'limit %s', got '%s'",
			    LLONG_MAX, arg[0], arg[1]);
	if (rc < 0 || value == 0)
		return fail(p, "expected %s or 'unlimited' after 'limit %s', got '%s'",
			    iso_limit_in_bytes(which)
			    ? "a positive number of bytes (suffix K, M, G or T allowed)"
			    : which == ISO_LIMIT_CPU ? "a positive number of seconds"
			    : "a positive count", arg[0], arg[1]);
	r->ceiling[which] = value;
	return 0;
}

static int kw_timeout(struct parser *p, struct iso_rule *r, char *const *arg, size_t narg)
{
	uint64_t max, def, lo, hi;
	int rc;

	if ((rc = want_args(p, arg, narg, 1, 2, "MAX [DEFAULT] in seconds")) < 0)
		return rc;
	if (parse_decimal(arg[0], strlen(arg[0]), ISO_POLICY_TIMEOUT_MAX, &max) < 0)
		return fail(p, "expected MAX from 0 to %d seconds after 'timeout', got '%s'",
			    ISO_POLICY_TIMEOUT_MAX, arg[0]);
	/* With a ceiling, a guest that asks for nothing gets the ceiling
	 * unless a DEFAULT says less: "none" would exceed the ceiling. */
	def = max;
	lo = max > 0 ? 1 : 0;
	hi = max > 0 ? max : ISO_POLICY_TIMEOUT_MAX;
	if (narg == 2 && (parse_decimal(arg[1], strlen(arg[1]), (uint32_t)hi, &def) < 0 || def < lo))
		return fail(p, "expected DEFAULT from %" PRIu64 " to %" PRIu64 " seconds after "
			    "'timeout %s', got '%s'", lo, hi, arg[0], arg[1]);
	r->timeout_max_ms = max * 1000;
	r->timeout_default_ms = def * 1000;
	return 0;
}

/* One word sets two fields, so not a plain choice in the table below. */
static int kw_network(struct parser *p, struct iso_rule *r, char *const *arg, size_t narg)
{
	static const char *const choices[] = { "host", "none", "none-only", NULL };
	int i = one_of(p, arg, narg, choices);

	if (i < 0)
		return i;
	r->network_default = i == 0 ? ISO_NETWORK_HOST : ISO_NETWORK_NONE;
	r->network_none_only = i == 2;
	return 0;
}

#define AT(member) .field = offsetof(struct iso_rule, member)
#define PATHS "absolute normalized paths"

_Static_assert(sizeof(enum iso_seccomp_profile) == sizeof(int) &&
		       sizeof(enum iso_seccomp_action) == sizeof(int) &&
		       sizeof(enum iso_landlock_mode) == sizeof(int) &&
		       sizeof(enum iso_grants_mode) == sizeof(int),
	       "a choice is stored as int");

/* pool and programs come first: close_rule() checks them by index. */
enum { KW_POOL, KW_PROGRAMS };
static const struct keyword keywords[] = {
	{ .name = "pool", .parse = kw_pool },
	{ .name = "programs", AT(programs), .list = WORD_PROGRAM, .what = PATHS, .any = 1 },
	{ .name = "overrides", AT(overrides), .list = WORD_OVERRIDE, .what = "variable names",
	  .any = 1, .none = 1 },
	{ .name = "allow-unsafe", AT(unsafe_allowed), .list = WORD_UNSAFE,
	  .what = "loader-level variable names (LD_*, MALLOC_*, GCONV_PATH, ...)" },
	{ .name = "forward", AT(forward), .list = WORD_FORWARD,
	  .what = "names from the forwarded list", .none = 1 },
	{ .name = "limit", .parse = kw_limit, .repeats = 1 },
	/* Live guests of one caller at once, over all its connections
	 * (creds.c counts them): without it one caller can lease a group
	 * rule's whole pool. */
	{ .name = "guests", AT(guests_max), .what = "a number of guests",
	  .max = ISO_POLICY_POOL_MAX },
	{ .name = "timeout", .parse = kw_timeout },
	{ .name = "network", .parse = kw_network },
	{ .name = "seccomp", AT(seccomp), .choices = { "default", "strict", "none" } },
	{ .name = "seccomp-action", AT(seccomp_action), .choices = { "errno", "kill" } },
	{ .name = "seccomp-deny", AT(seccomp_deny), .list = WORD_SYSCALL,
	  .what = "system call names ([a-z0-9_], at most 64 bytes)" },
	{ .name = "landlock", AT(landlock), .choices = { "required", "optional", "off" } },
	{ .name = "landlock-abi", AT(landlock_min_abi), .what = "an ABI version",
	  .max = LANDLOCK_ABI_MAX },
	{ .name = "read", AT(read), .list = WORD_PATH, .what = PATHS },
	{ .name = "write", AT(write), .list = WORD_PATH, .what = PATHS },
	{ .name = "grants", AT(grants), .choices = { "none", "read", "read-write" } },
	/* A caller lends what it opens itself (grants): no path of the
	 * policy's decides what it may lend. */
	{ .name = "may-read", .removed = 1, .what = "a caller lends its guests what it can "
	  "open itself, as the rule's 'grants none|read|read-write' allows (see MIGRATION in "
	  "isospawn.conf(5))" },
	{ .name = "may-write", .removed = 1, .what = "a caller lends its guests what it can "
	  "open itself, as the rule's 'grants none|read|read-write' allows (see MIGRATION in "
	  "isospawn.conf(5))" },
	/* Gone with the on-disk scratch directories: say what replaced it
	 * rather than call it unknown. */
	{ .name = "scratch", .removed = 1, .what = "each guest's /tmp is now a tmpfs that ends "
	  "with it, sized by 'limit scratch SIZE' (see isospawn.conf(5))" },
};

_Static_assert(COUNT(keywords) <= COUNT(((struct parser *)0)->seen),
	       "parser.seen has a slot per keyword");

/* ---- Rules ---- */

/* What a rule matches, in the words of its messages. */
#define MATCHES "user:NAME, user:#UID, group:NAME or group:#GID"

static int parse_match(struct parser *p, struct iso_rule *r, const char *word)
{
	const char *kind = strncmp(word, "user:", 5) == 0    ? "user"
			   : strncmp(word, "group:", 6) == 0 ? "group"
							     : NULL;
	const char *id;
	uint64_t number;

	if (kind == NULL)
		return fail(p, "expected " MATCHES " after 'rule', got '%s'", word);
	r->match = kind[0] == 'u' ? ISO_MATCH_USER : ISO_MATCH_GROUP;
	id = word + strlen(kind) + 1;
	if (id[0] == '#') {
		/* (uid_t)-1 is no one's id. */
		if (parse_decimal(id + 1, strlen(id + 1), UINT32_MAX - 1, &number) < 0)
			return fail(p, "expected a number from 0 to %" PRIu32 " after '#', "
				    "got '%s'", UINT32_MAX - 1, word);
		r->id = (uint32_t)number;
	} else if (id[0] == '\0' || strlen(id) > LOGIN_NAME_MAX) {
		return fail(p, "expected a %s name after '%s:', got '%s'", kind, kind, word);
	} else {
		/* Resolved now: a rule that silently matched nobody would be
		 * an administrator's surprise. */
		struct passwd *pw = r->match == ISO_MATCH_USER ? getpwnam(id) : NULL;
		struct group *gr = r->match == ISO_MATCH_GROUP ? getgrnam(id) : NULL;

		if (pw == NULL && gr == NULL)
			return fail(p, "expected an existing %s, got '%s'", kind, id);
		r->id = pw != NULL ? (uint32_t)pw->pw_uid : (uint32_t)gr->gr_gid;
	}
	r->match_text = strdup(word);
	return r->match_text != NULL ? 0 : out_of_memory(p);
}

static int open_rule(struct parser *p, char *const *word, size_t nword)
{
	struct iso_policy *policy = p->policy;
	struct iso_rule *r;

	if (nword < 2)
		return fail(p, "expected " MATCHES " after 'rule', got end of line");
	if (nword < 3)
		return fail(p, "expected '{' after 'rule %s', got end of line", word[1]);
	if (strcmp(word[2], "{") != 0)
		return fail(p, "expected '{' after 'rule %s', got '%s'", word[1], word[2]);
	if (nword > 3)
		return fail(p, "expected end of line after '{', got '%s'", word[3]);
	if (policy->nrules >= ISO_POLICY_RULES_MAX)
		return fail(p, "expected at most %d rules, got another", ISO_POLICY_RULES_MAX);
	if ((r = reallocarray(policy->rules, policy->nrules + 1, sizeof(*r))) == NULL)
		return out_of_memory(p);
	policy->rules = r;
	r = &policy->rules[policy->nrules++];
	/* Counted before it is complete, so that policy_free() releases a
	 * rule that fails half-way. What a rule does not say is the safe
	 * choice, the shipped policy's: no network (the host's reaches
	 * localhost services and cloud credentials), 'timeout 3600 600'. */
	*r = (struct iso_rule){ .line = p->line, .network_default = ISO_NETWORK_NONE,
				.timeout_max_ms = 3600 * 1000, .timeout_default_ms = 600 * 1000,
				.seccomp = ISO_SECCOMP_DEFAULT, .seccomp_action = ISO_SECCOMP_ERRNO,
				.landlock = ISO_LANDLOCK_REQUIRED, .landlock_min_abi = 1,
				.guests_max = ISO_POLICY_GUESTS_DEFAULT };
	memcpy(r->ceiling, iso_default_ceiling, sizeof(r->ceiling));
	memset(p->seen, 0, sizeof(p->seen));
	memset(p->limit_seen, 0, sizeof(p->limit_seen));
	p->rule = r;
	p->rule_at = p->at;
	if ((r->file = strdup(p->name)) == NULL)
		return out_of_memory(p);
	return parse_match(p, r, word[1]);
}

static int close_rule(struct parser *p, char *const *word, size_t nword)
{
	struct iso_rule *r = p->rule;
	/* Lists without a "NULL means default" meaning are never NULL, so
	 * their readers need no special case. */
	char ***lists[] = { &r->programs, &r->seccomp_deny, &r->read, &r->write };

	if (nword > 1)
		return fail(p, "expected end of line after '}', got '%s'", word[1]);
	for (size_t k = KW_POOL; k <= KW_PROGRAMS; k++)
		if (p->seen[k] == 0)
			return fail(p, "expected '%s' in the rule opened at line %u",
				    keywords[k].name, r->line);
	/* What a guest leaves in a write path is its pool uid's, and a
	 * group rule leases the same uids to every member in turn: only a
	 * rule that serves one caller may let guests leave files there. (A
	 * caller's own grants keep its files its own.) */
	if (r->match == ISO_MATCH_GROUP && r->write != NULL)
		return fail(p, "expected 'write' only in a user: rule (the pool of the group: rule "
			    "opened at line %u serves many callers), got it in that rule", r->line);
	/* A write path is the host's own directory in every guest's tree,
	 * and a guest may write all of it: a read path inside it would be
	 * hidden by it (bound first). */
	for (char **in = r->read; in && *in; in++)
		for (char **w = r->write; w && *w; w++)
			if (iso_path_beneath(*in, *w))
				return fail(p, "expected 'read' paths outside the rule's 'write' "
					    "paths (every guest may write all of %s), got %s", *w, *in);
	/* Where the rule picks the programs, the environment must not pick
	 * their code, and no list of such variables can be complete: the
	 * names a caller may set are listed instead. */
	if (r->programs != NULL && r->overrides == NULL)
		return fail(p, "expected 'overrides NAME...' or 'overrides none' in the rule opened "
			    "at line %u: it restricts 'programs', and with 'overrides any' a caller "
			    "could set what makes them run code of its choosing (OPENSSL_CONF, "
			    "LUA_INIT, ...)", r->line);
	r->programs_any = r->programs == NULL;
	/* Kept as written: the caller it matches may read it (RULE). */
	if ((r->text = strndup(p->rule_at, (size_t)(p->at_end - p->rule_at))) == NULL)
		return out_of_memory(p);
	for (size_t i = 0; i < COUNT(lists); i++)
		if (*lists[i] == NULL && (*lists[i] = iso_strv_new(NULL, 0)) == NULL)
			return out_of_memory(p);
	p->rule = NULL;
	return 0;
}

static int rule_line(struct parser *p, char *const *word, size_t nword)
{
	const struct keyword *kw;
	size_t k = 0;
	int i;

	if (strcmp(word[0], "}") == 0)
		return close_rule(p, word, nword);
	if (strcmp(word[0], "rule") == 0)
		return fail(p, "expected '}' to close the rule opened at line %u, got 'rule'",
			    p->rule->line);
	while (k < COUNT(keywords) && strcmp(word[0], keywords[k].name) != 0)
		k++;
	if (k == COUNT(keywords))
		return fail(p, "expected a rule keyword (see isospawn.conf(5)) or '}', got '%s'",
			    word[0]);
	kw = &keywords[k];
	if (kw->removed)
		return fail(p, "expected no '%s' line: %s", kw->name, kw->what);
	if (!kw->repeats && p->seen[k] != 0)
		return fail(p, "expected each keyword once per rule, got a second '%s' "
			    "(first at line %u)", word[0], p->seen[k]);
	p->seen[k] = p->line;
	p->keyword = kw->name;
	if (kw->parse != NULL)
		return kw->parse(p, p->rule, word + 1, nword - 1);
	if (kw->list != NOT_A_LIST)
		return parse_list(p, kw, word + 1, nword - 1);
	if (kw->max != 0)
		return parse_number(p, kw, word + 1, nword - 1);
	if ((i = one_of(p, word + 1, nword - 1, kw->choices)) < 0)
		return i;
	*(int *)((char *)p->rule + kw->field) = i;
	return 0;
}

/* "include DIR" between rules, once, in a main file: the drop-ins of DIR
 * are read here, as if their rules stood in its place - when the text is
 * a file's; policy_parse() reads no file, it only records DIR. A drop-in
 * includes nothing, so there is no recursion. */
static int include_dir(struct parser *p, char *const *word, size_t nword)
{
	char file[PATH_MAX + NAME_MAX + 2]; /* never cut: policy_check_path judges it */
	struct dirent **list;
	int count, rc;

	if (nword != 2 || iso_path_check(word[1], ISO_PATH_ANY, NULL) < 0)
		return fail(p, "expected a directory (absolute normalized path) alone after "
			    "'include', got '%s'", nword > 1 ? word[1] : "end of line");
	p->may_include = 0;
	if ((p->policy->include = strdup(word[1])) == NULL)
		return out_of_memory(p);
	if (!p->reads_files)
		return 0;
	if ((count = rc = policy_dropins(word[1], &list, p->why, p->n)) > ISO_POLICY_DROPINS_MAX)
		rc = fail(p, "expected at most %d *.conf files in %s, got %d",
			  ISO_POLICY_DROPINS_MAX, word[1], count);
	for (int i = 0; i < count; i++) {
		snprintf(file, sizeof(file), "%s/%s", word[1], list[i]->d_name);
		if (rc >= 0)
			rc = policy_add_file(file, p->check, 0, p->policy, p->why, p->n);
		free(list[i]);
	}
	free(list);
	return rc < 0 ? rc : 0;
}

static int parse_line(struct parser *p, const char *text, size_t len)
{
	char line[ISO_POLICY_LINE_MAX + 1], *word[ISO_POLICY_WORDS_MAX], *w, *rest;
	size_t nword = 0;

	if (len > ISO_POLICY_LINE_MAX)
		return fail(p, "expected at most %d bytes in a line, got %zu", ISO_POLICY_LINE_MAX,
			    len);
	for (size_t i = 0; i < len; i++) {
		unsigned char byte = (unsigned char)text[i];

		/* Control bytes, NUL too, would reach messages and logs
		 * verbatim. */
		if ((byte < 0x20 && byte != '\t') || byte == 0x7f)
			return fail(p, "expected printable text, got the byte 0x%02x", byte);
	}
	memcpy(line, text, len);
	line[len] = '\0';
	/* A '#' that starts a word starts a comment. */
	for (w = strtok_r(line, " \t", &rest); w != NULL && w[0] != '#';
	     w = strtok_r(NULL, " \t", &rest)) {
		if (nword == ISO_POLICY_WORDS_MAX)
			return fail(p, "expected at most %d words in a line, got more",
				    ISO_POLICY_WORDS_MAX);
		word[nword++] = w;
	}
	if (nword == 0)
		return 0;
	if (p->rule != NULL)
		return rule_line(p, word, nword);
	if (strcmp(word[0], "include") == 0 && p->may_include)
		return include_dir(p, word, nword);
	if (strcmp(word[0], "rule") != 0)
		return fail(p, "expected 'rule'%s, got '%s'", p->may_include ? " or 'include'" : "",
			    word[0]);
	return open_rule(p, word, nword);
}

/* Appends the rules of `text` to out; on failure out is emptied. */
static int parse_more(const char *text, size_t len, const char *name, int check,
		      int may_include, int reads_files, struct iso_policy *out, char *why,
		      size_t n)
{
	struct parser p = { .name = name, .why = why, .n = n, .policy = out, .check = check,
			    .may_include = may_include, .reads_files = reads_files };
	size_t pos = 0;
	int rc = 0;

	if (len > ISO_POLICY_FILE_MAX)
		rc = iso_why(why, n, EINVAL, "%s: expected at most %d bytes, got %zu", p.name,
			     ISO_POLICY_FILE_MAX, len);
	while (rc == 0 && pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl != NULL ? (size_t)(nl - text) : len;

		p.line++;
		p.at = text + pos;
		p.at_end = text + end;
		rc = parse_line(&p, text + pos, end - pos);
		pos = end + 1;
	}
	if (rc == 0 && p.rule != NULL)
		rc = fail(&p, "expected '}' to close the rule opened at line %u, got end of file",
			  p.rule->line);
	/* A main file is whole here, with its drop-ins: check its pools. */
	if (rc == 0 && may_include)
		rc = pools_without_delegated_ids(out, why, n);
	if (rc < 0)
		policy_free(out);
	return rc;
}

int policy_parse(const char *text, size_t len, const char *name, struct iso_policy *out,
		 char *why, size_t n)
{
	*out = (struct iso_policy){ 0 };
	return parse_more(text, len, name, 1, 1, 0, out, why, n);
}

/* ---- The file ---- */

int policy_check_path(const char *path, int leaf_is_dir, char *why, size_t n)
{
	char walk[PATH_MAX], *slash;
	const char *fault;
	struct stat st;
	int rc;

	/* The ancestors are found by cutting the text, so it must say
	 * exactly which directories the kernel walks. */
	if ((rc = iso_path_check(path, ISO_PATH_ANY, &fault)) < 0)
		return iso_why(why, n, -rc, "%.*s: expected an absolute normalized path (%s)",
			       rc == -ENAMETOOLONG ? 64 : PATH_MAX, path, fault);
	snprintf(walk, sizeof(walk), "%s", path);
	for (int is_dir = leaf_is_dir;; is_dir = 1) {
		if (lstat(walk, &st) < 0)
			return iso_why_errno(why, n, "%s", walk);
		if (is_dir ? !S_ISDIR(st.st_mode) : !S_ISREG(st.st_mode))
			return iso_why(why, n, EPERM, "%s: %s, expected %s", walk,
				       S_ISLNK(st.st_mode) ? "a symbolic link"
				       : S_ISDIR(st.st_mode) ? "a directory"
				       : S_ISREG(st.st_mode) ? "a regular file" : "a special file",
				       is_dir ? "a directory" : "a regular file");
		if (st.st_uid != 0)
			return iso_why(why, n, EPERM, "%s: owned by uid %lu, expected uid 0", walk,
				       (unsigned long)st.st_uid);
		if (st.st_mode & (S_IWGRP | S_IWOTH))
			return iso_why(why, n, EPERM, "%s: mode %04o is writable by %s", walk,
				       (unsigned)(st.st_mode & 07777),
				       (st.st_mode & S_IWOTH) ? "others" : "its group");
		if (strcmp(walk, "/") == 0)
			return 0;
		slash = strrchr(walk, '/');
		slash[slash == walk ? 1 : 0] = '\0';
	}
}

int policy_add_file(const char *path, int check, int may_include, struct iso_policy *into,
		    char *why, size_t n)
{
	/* One byte more than allowed, to tell "full" from "too big". */
	char *text = malloc(ISO_POLICY_FILE_MAX + 1);
	size_t len = 0;
	ssize_t got = 0;
	int fd = -1, rc = 0;

	/* Checked by name, then opened: only root could change what the
	 * name means in between, since the walk has found every directory
	 * above it root's and unwritable by others. */
	if (check)
		rc = policy_check_path(path, 0, why, n);
	if (rc == 0 && text == NULL)
		rc = iso_why(why, n, ENOMEM, "%s: out of memory", path);
	if (rc == 0 && (fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		rc = iso_why_errno(why, n, "open %s", path);
	while (rc == 0 && len <= ISO_POLICY_FILE_MAX &&
	       (got = read(fd, text + len, ISO_POLICY_FILE_MAX + 1 - len)) > 0)
		len += (size_t)got;
	if (rc == 0 && got < 0)
		rc = iso_why_errno(why, n, "read %s", path);
	iso_close_fds(&fd, 1);
	if (rc == 0 && len > ISO_POLICY_FILE_MAX)
		rc = iso_why(why, n, EINVAL, "%s: expected at most %d bytes, got more", path,
			     ISO_POLICY_FILE_MAX);
	if (rc == 0)
		rc = parse_more(text, len, path, check, may_include, 1, into, why, n);
	else
		policy_free(into);
	free(text);
	return rc;
}

/* "*.conf", not hidden: editors' and dpkg's leftovers are not read. */
static int is_dropin(const struct dirent *e)
{
	size_t len = strlen(e->d_name);

	return e->d_name[0] != '.' && len > 5 && strcmp(e->d_name + len - 5, ".conf") == 0;
}

int policy_dropins(const char *dir, struct dirent ***list, char *why, size_t n)
{
	int count, rc;

	*list = NULL;
	/* Absent: no drop-ins. Present: as safe as the main file. */
	if ((rc = policy_check_path(dir, 1, why, n)) < 0)
		return rc == -ENOENT ? 0 : rc;
	/* alphasort in the C locale (nothing here sets another): byte order. */
	if ((count = scandir(dir, list, is_dropin, alphasort)) < 0)
		return iso_why_errno(why, n, "scandir %s", dir);
	return count;
}

int policy_load(const char *path, struct iso_policy *out, char *why, size_t n)
{
	*out = (struct iso_policy){ 0 };
	return policy_add_file(path, 1, 1, out, why, n);
}

/* ---- Matching ---- */

const struct iso_rule *policy_match(const struct iso_policy *policy, uid_t uid, gid_t gid,
				    const gid_t *groups, size_t ngroups)
{
	for (size_t i = 0; i < policy->nrules; i++) {
		const struct iso_rule *r = &policy->rules[i];
		int user = r->match == ISO_MATCH_USER;
		int hit = r->id == (user ? (uint32_t)uid : (uint32_t)gid);

		for (size_t g = 0; !user && !hit && g < ngroups; g++)
			hit = r->id == (uint32_t)groups[g];
		if (hit)
			return r;
	}
	return NULL;
}

void policy_free(struct iso_policy *policy)
{
	for (size_t i = 0; i < policy->nrules; i++) {
		free(policy->rules[i].file);
		free(policy->rules[i].text);
		free(policy->rules[i].match_text);
		/* Every list is filled by its keyword, so the table names them all. */
		for (size_t k = 0; k < COUNT(keywords); k++)
			if (keywords[k].list != NOT_A_LIST)
				free(*(char ***)((char *)&policy->rules[i] + keywords[k].field));
	}
	free(policy->rules);
	free(policy->include);
	*policy = (struct iso_policy){ 0 };
}
