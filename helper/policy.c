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

#define GIB (UINT64_C(1) << 30)
#define MIB (UINT64_C(1) << 20)

const uint64_t iso_default_ceiling[ISO_LIMIT_COUNT] = {
	[ISO_LIMIT_CPU] = 3600,		/* one hour of CPU time */
	[ISO_LIMIT_AS] = 8 * GIB,	/* room for a JIT or a large interpreter */
	[ISO_LIMIT_NOFILE] = 1024,	/* the usual soft default */
	[ISO_LIMIT_NPROC] = 512,	/* counted per pool uid: stops fork bombs */
	[ISO_LIMIT_FSIZE] = 4 * GIB,	/* no single file fills a disk */
	[ISO_LIMIT_STACK] = 8 * MIB,	/* the usual default */
};

/* Limits counted in bytes take K, M, G, T suffixes. */
static int limit_in_bytes(int which)
{
	return which == ISO_LIMIT_AS || which == ISO_LIMIT_FSIZE ||
	       which == ISO_LIMIT_STACK;
}

/* A timeout above a year is a typo, and keeps seconds * 1000 far from
 * overflowing. */
#define TIMEOUT_SECONDS_MAX (366 * 24 * 3600)
#define LANDLOCK_ABI_MAX 7
#define SYSCALL_NAME_MAX 64

struct parser {
	const char *name; /* the file, for messages */
	unsigned line;
	char *why;
	size_t n;
	struct iso_policy *policy;
	struct iso_rule *rule; /* the open rule, or NULL between rules */
	const char *keyword;   /* the keyword being parsed, for messages */
	unsigned seen[32];     /* line of each keyword in the open rule */
	unsigned limit_seen[ISO_LIMIT_COUNT];
};

static int fail(struct parser *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Every parse error goes through here, so each names file and line. */
static int fail(struct parser *p, const char *fmt, ...)
{
	va_list ap;
	int used;

	if (p->why == NULL || p->n == 0)
		return -EINVAL;
	used = snprintf(p->why, p->n, "%s:%u: ", p->name, p->line);
	if (used >= 0 && (size_t)used < p->n) {
		va_start(ap, fmt);
		vsnprintf(p->why + used, p->n - (size_t)used, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static void say(char *why, size_t n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;

	if (why == NULL || n == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
}

static int out_of_memory(struct parser *p)
{
	say(p->why, p->n, "%s:%u: out of memory", p->name, p->line);
	return -ENOMEM;
}

/* ------------------------------------------------------------------ */
/* Words                                                                */

/* Decimal digits only: strtonum alone would also take "+5" and " 5". */
static int parse_decimal(const char *word, uint64_t max, uint64_t *out)
{
	const char *err = NULL;
	long long value;

	if (word[0] == '\0' || strspn(word, "0123456789") != strlen(word))
		return -1;
	value = strtonum(word, 0, max > LLONG_MAX ? LLONG_MAX : (long long)max,
			 &err);
	if (err != NULL)
		return -1;
	*out = (uint64_t)value;
	return 0;
}

/* Absolute, and already in the form the kernel would resolve it to
 * textually: no "//", no "." or ".." component, no trailing '/'. Paths are
 * compared as text later, so two spellings of one place must not exist. */
static int path_normalized(const char *path)
{
	const char *c = path;

	if (path[0] != '/' || strlen(path) >= PATH_MAX)
		return 0;
	if (path[1] == '\0')
		return 1;
	while (*c == '/') {
		size_t seg = strcspn(c + 1, "/");

		if (seg == 0)
			return 0; /* "//" or a trailing '/' */
		if ((seg == 1 && c[1] == '.') ||
		    (seg == 2 && c[1] == '.' && c[2] == '.'))
			return 0;
		c += 1 + seg;
	}
	return 1;
}

static int valid_path(const char *word)
{
	return path_normalized(word);
}

static int valid_program(const char *word)
{
	return path_normalized(word) && strcmp(word, "/") != 0;
}

static int valid_override(const char *word)
{
	return iso_env_name_valid(word, strlen(word)) &&
	       strcmp(word, ISO_ENV_CHANNEL_NAME) != 0;
}

static int valid_unsafe(const char *word)
{
	size_t len = strlen(word);

	return iso_env_name_valid(word, len) &&
	       iso_env_is_unsafe_name(word, len);
}

static int valid_forward(const char *word)
{
	return iso_env_is_forwarded_name(word, strlen(word));
}

/* Only the form: confine_prepare() resolves the name for the architecture
 * and refuses one libseccomp does not know. */
static int valid_syscall(const char *word)
{
	size_t len = strlen(word);

	return len >= 1 && len <= SYSCALL_NAME_MAX &&
	       strspn(word, "abcdefghijklmnopqrstuvwxyz0123456789_") == len;
}

/* One allocation holding the NULL-terminated pointer array and the
 * strings, so that every list is released by a single free(). */
static char **strv_new(char *const *words, size_t count)
{
	size_t size = (count + 1) * sizeof(char *);
	char **strv;
	char *text;
	size_t i;

	for (i = 0; i < count; i++)
		size += strlen(words[i]) + 1;
	strv = malloc(size);
	if (strv == NULL)
		return NULL;
	text = (char *)(strv + count + 1);
	for (i = 0; i < count; i++) {
		size_t len = strlen(words[i]) + 1;

		memcpy(text, words[i], len);
		strv[i] = text;
		text += len;
	}
	strv[count] = NULL;
	return strv;
}

/* ------------------------------------------------------------------ */
/* Keywords                                                             */

static int want_args(struct parser *p, char *const *arg, size_t narg,
		     size_t min, size_t max, const char *what)
{
	if (narg < min)
		return fail(p, "expected %s after '%s', got end of line", what,
			    p->keyword);
	if (narg > max)
		return fail(p, "expected end of line after '%s %s', got '%s'",
			    p->keyword, arg[max - 1], arg[max]);
	return 0;
}

/* One word out of `choices` (NULL-terminated); returns its index. */
static int one_of(struct parser *p, char *const *arg, size_t narg,
		  const char *const *choices)
{
	char expected[160] = "";
	size_t count, i;
	int rc;

	for (count = 0; choices[count] != NULL; count++)
		;
	for (i = 0; i < count; i++) {
		strlcat(expected, i == 0 ? "'" : i + 1 < count ? ", '" : " or '",
			sizeof(expected));
		strlcat(expected, choices[i], sizeof(expected));
		strlcat(expected, "'", sizeof(expected));
	}
	rc = want_args(p, arg, narg, 1, 1, expected);
	if (rc < 0)
		return rc;
	for (i = 0; i < count; i++)
		if (strcmp(arg[0], choices[i]) == 0)
			return (int)i;
	return fail(p, "expected %s after '%s', got '%s'", expected, p->keyword,
		    arg[0]);
}

/* A list keyword: `alone` by itself ("any" leaves the field NULL, "none"
 * makes an empty list), or one or more words that pass `valid`, each once. */
static int parse_list(struct parser *p, char ***field, char *const *arg,
		      size_t narg, int (*valid)(const char *),
		      const char *what, const char *alone)
{
	char expected[128];
	size_t i, j;

	snprintf(expected, sizeof(expected), "%s%s%s%s",
		 alone != NULL ? "'" : "", alone != NULL ? alone : "",
		 alone != NULL ? "' or " : "", what);
	if (narg == 0)
		return fail(p, "expected %s after '%s', got end of line",
			    expected, p->keyword);
	for (i = 0; i < narg; i++) {
		if (alone != NULL && strcmp(arg[i], alone) == 0) {
			if (narg != 1)
				return fail(p,
					    "expected '%s' alone or %s after "
					    "'%s', got both",
					    alone, what, p->keyword);
			if (strcmp(alone, "any") == 0)
				return 0;
			narg = 0;
			break;
		}
		if (!valid(arg[i]))
			return fail(p, "expected %s after '%s', got '%s'",
				    expected, p->keyword, arg[i]);
		for (j = 0; j < i; j++)
			if (strcmp(arg[i], arg[j]) == 0)
				return fail(p,
					    "expected each word once after "
					    "'%s', got '%s' twice",
					    p->keyword, arg[i]);
	}
	*field = strv_new(arg, narg);
	return *field != NULL ? 0 : out_of_memory(p);
}

static int kw_pool(struct parser *p, struct iso_rule *r, char *const *arg,
		   size_t narg)
{
	char first[16], *dash;
	uint64_t lo, hi;
	size_t i;
	int rc;

	rc = want_args(p, arg, narg, 1, 1, "FIRST-LAST");
	if (rc < 0)
		return rc;
	dash = strchr(arg[0], '-');
	if (dash == NULL || (size_t)(dash - arg[0]) >= sizeof(first))
		goto malformed;
	memcpy(first, arg[0], (size_t)(dash - arg[0]));
	first[dash - arg[0]] = '\0';
	if (parse_decimal(first, UINT32_MAX, &lo) < 0 ||
	    parse_decimal(dash + 1, UINT32_MAX, &hi) < 0)
		goto malformed;
	/* uid 0 is root; (uid_t)-1 means "unchanged" to setresuid(). */
	if (lo == 0)
		return fail(p, "expected a pool without uid 0, got '%s'",
			    arg[0]);
	if (hi == UINT32_MAX)
		return fail(p, "expected a pool without uid %" PRIu32
			    ", got '%s'", UINT32_MAX, arg[0]);
	if (lo > hi)
		return fail(p, "expected FIRST <= LAST after 'pool', got '%s'",
			    arg[0]);
	if (hi - lo + 1 > ISO_POLICY_POOL_MAX)
		return fail(p, "expected a pool of at most %d uids, got '%s' "
			    "(%" PRIu64 " uids)",
			    ISO_POLICY_POOL_MAX, arg[0], hi - lo + 1);
	/* Two rules sharing uids would let one caller's guest signal or
	 * read another's. The open rule is the last one. */
	for (i = 0; i + 1 < p->policy->nrules; i++) {
		const struct iso_rule *other = &p->policy->rules[i];

		if (lo <= other->pool_last && other->pool_first <= hi)
			return fail(p,
				    "expected a pool apart from the pool "
				    "%" PRIu32 "-%" PRIu32
				    " of the rule at line %u, got '%s'",
				    other->pool_first, other->pool_last,
				    other->line, arg[0]);
	}
	r->pool_first = (uint32_t)lo;
	r->pool_last = (uint32_t)hi;
	return 0;
malformed:
	return fail(p, "expected FIRST-LAST (two uids from 1 to %" PRIu32
		    ") after 'pool', got '%s'",
		    UINT32_MAX - 1, arg[0]);
}

static int kw_limit(struct parser *p, struct iso_rule *r, char *const *arg,
		    size_t narg)
{
	static const uint64_t scale[] = { UINT64_C(1) << 10, UINT64_C(1) << 20,
					  UINT64_C(1) << 30, UINT64_C(1) << 40 };
	static const char suffixes[] = "KMGT";
	char digits[32];
	const char *suffix;
	uint64_t value, mult = 1;
	size_t len;
	int which;
	int rc;

	rc = want_args(p, arg, narg, 2, 2,
		       "a limit name (cpu, as, fsize, stack, nofile or "
		       "nproc) and a value");
	if (rc < 0)
		return rc;
	which = iso_limit_from_name(arg[0]);
	if (which < 0)
		return fail(p,
			    "expected cpu, as, fsize, stack, nofile or nproc "
			    "after 'limit', got '%s'",
			    arg[0]);
	if (p->limit_seen[which] != 0)
		return fail(p,
			    "expected each limit once per rule, got a second "
			    "'limit %s' (first at line %u)",
			    arg[0], p->limit_seen[which]);
	p->limit_seen[which] = p->line;
	if (strcmp(arg[1], "unlimited") == 0) {
		r->ceiling[which] = UINT64_MAX;
		return 0;
	}
	len = strlen(arg[1]);
	suffix = len > 0 ? strchr(suffixes, arg[1][len - 1]) : NULL;
	if (limit_in_bytes(which) && suffix != NULL) {
		mult = scale[suffix - suffixes];
		len--;
	}
	if (len >= sizeof(digits))
		goto bad_value;
	memcpy(digits, arg[1], len);
	digits[len] = '\0';
	/* Bounded below RLIM_INFINITY, which only "unlimited" may mean. */
	if (parse_decimal(digits, LLONG_MAX, &value) < 0 || value == 0)
		goto bad_value;
	if (value > (uint64_t)LLONG_MAX / mult)
		return fail(p,
			    "expected a value of at most %lld bytes after "
			    "'limit %s', got '%s'",
			    LLONG_MAX, arg[0], arg[1]);
	r->ceiling[which] = value * mult;
	return 0;
bad_value:
	return fail(p, "expected %s or 'unlimited' after 'limit %s', got '%s'",
		    limit_in_bytes(which)
			    ? "a positive number of bytes (suffix K, M, G or T "
			      "allowed)"
			    : which == ISO_LIMIT_CPU ? "a positive number of "
						       "seconds"
						     : "a positive count",
		    arg[0], arg[1]);
}

static int kw_timeout(struct parser *p, struct iso_rule *r, char *const *arg,
		      size_t narg)
{
	uint64_t max, def;
	int rc;

	rc = want_args(p, arg, narg, 1, 2, "MAX [DEFAULT] in seconds");
	if (rc < 0)
		return rc;
	if (parse_decimal(arg[0], TIMEOUT_SECONDS_MAX, &max) < 0)
		return fail(p,
			    "expected MAX from 0 to %d seconds after "
			    "'timeout', got '%s'",
			    TIMEOUT_SECONDS_MAX, arg[0]);
	/* With a ceiling, a guest that asks for nothing gets the ceiling
	 * unless a DEFAULT says less: "none" would exceed the ceiling. */
	def = max;
	if (narg == 2) {
		uint64_t lo = max > 0 ? 1 : 0;
		uint64_t hi = max > 0 ? max : TIMEOUT_SECONDS_MAX;

		if (parse_decimal(arg[1], hi, &def) < 0 || def < lo)
			return fail(p,
				    "expected DEFAULT from %" PRIu64
				    " to %" PRIu64 " seconds after "
				    "'timeout %s', got '%s'",
				    lo, hi, arg[0], arg[1]);
	}
	r->timeout_max_ms = max * 1000;
	r->timeout_default_ms = def * 1000;
	return 0;
}

static int kw_network(struct parser *p, struct iso_rule *r,
		      char *const *arg, size_t narg)
{
	static const char *const choices[] = { "host", "none", "none-only",
					       NULL };
	int i = one_of(p, arg, narg, choices);

	if (i < 0)
		return i;
	r->network_default = i == 0 ? ISO_NETWORK_HOST : ISO_NETWORK_NONE;
	r->network_none_only = i == 2;
	return 0;
}

static int kw_seccomp(struct parser *p, struct iso_rule *r,
		      char *const *arg, size_t narg)
{
	static const char *const choices[] = { "default", "strict", "none",
					       NULL };
	static const enum iso_seccomp_profile profiles[] = {
		ISO_SECCOMP_DEFAULT, ISO_SECCOMP_STRICT, ISO_SECCOMP_NONE
	};
	int i = one_of(p, arg, narg, choices);

	if (i < 0)
		return i;
	r->seccomp = profiles[i];
	return 0;
}

static int kw_seccomp_action(struct parser *p, struct iso_rule *r,
			     char *const *arg, size_t narg)
{
	static const char *const choices[] = { "errno", "kill", NULL };
	int i = one_of(p, arg, narg, choices);

	if (i < 0)
		return i;
	r->seccomp_action = i == 0 ? ISO_SECCOMP_ERRNO : ISO_SECCOMP_KILL;
	return 0;
}

static int kw_landlock(struct parser *p, struct iso_rule *r,
		       char *const *arg, size_t narg)
{
	static const char *const choices[] = { "required", "optional", "off",
					       NULL };
	static const enum iso_landlock_mode modes[] = {
		ISO_LANDLOCK_REQUIRED, ISO_LANDLOCK_OPTIONAL, ISO_LANDLOCK_OFF
	};
	int i = one_of(p, arg, narg, choices);

	if (i < 0)
		return i;
	r->landlock = modes[i];
	return 0;
}

static int kw_landlock_abi(struct parser *p, struct iso_rule *r,
			   char *const *arg, size_t narg)
{
	uint64_t abi;
	int rc;

	rc = want_args(p, arg, narg, 1, 1, "an ABI version");
	if (rc < 0)
		return rc;
	if (parse_decimal(arg[0], LANDLOCK_ABI_MAX, &abi) < 0 || abi < 1)
		return fail(p,
			    "expected an ABI version from 1 to %d after "
			    "'landlock-abi', got '%s'",
			    LANDLOCK_ABI_MAX, arg[0]);
	r->landlock_min_abi = (int)abi;
	return 0;
}

static int kw_scratch(struct parser *p, struct iso_rule *r,
		      char *const *arg, size_t narg)
{
	static const char *const choices[] = { "remove", "keep", NULL };
	int i = one_of(p, arg, narg, choices);

	if (i < 0)
		return i;
	r->keep_scratch = i == 1;
	return 0;
}

#define PATHS "absolute normalized paths"
#define LIST(member) .field = offsetof(struct iso_rule, member)

/* pool and programs come first: close_rule() checks them by index. */
enum { KW_POOL, KW_PROGRAMS };
static const struct keyword {
	const char *name;
	int (*parse)(struct parser *p, struct iso_rule *r, char *const *arg,
		     size_t narg);
	int repeats; /* once per limit name rather than once per rule */
	/* A keyword without a parse function is a list (parse_list()). */
	size_t field;
	int (*valid)(const char *word);
	const char *what, *alone;
} keywords[] = {
	{ .name = "pool", .parse = kw_pool },
	{ .name = "programs", LIST(programs), .valid = valid_program,
	  .what = PATHS, .alone = "any" },
	{ .name = "overrides", LIST(overrides), .valid = valid_override,
	  .what = "variable names", .alone = "any" },
	{ .name = "allow-unsafe", LIST(unsafe_allowed), .valid = valid_unsafe,
	  .what = "loader-level variable names (LD_*, MALLOC_*, GCONV_PATH, "
		  "...)" },
	{ .name = "forward", LIST(forward), .valid = valid_forward,
	  .what = "names from the forwarded list", .alone = "none" },
	{ .name = "limit", .parse = kw_limit, .repeats = 1 },
	{ .name = "timeout", .parse = kw_timeout },
	{ .name = "network", .parse = kw_network },
	{ .name = "seccomp", .parse = kw_seccomp },
	{ .name = "seccomp-action", .parse = kw_seccomp_action },
	{ .name = "seccomp-deny", LIST(seccomp_deny), .valid = valid_syscall,
	  .what = "system call names ([a-z0-9_], at most 64 bytes)" },
	{ .name = "landlock", .parse = kw_landlock },
	{ .name = "landlock-abi", .parse = kw_landlock_abi },
	{ .name = "read", LIST(read), .valid = valid_path, .what = PATHS },
	{ .name = "write", LIST(write), .valid = valid_path, .what = PATHS },
	{ .name = "may-read", LIST(may_read), .valid = valid_path,
	  .what = PATHS },
	{ .name = "may-write", LIST(may_write), .valid = valid_path,
	  .what = PATHS },
	{ .name = "scratch", .parse = kw_scratch },
};

_Static_assert(sizeof(keywords) / sizeof(keywords[0]) <=
		       sizeof(((struct parser *)0)->seen) /
			       sizeof(((struct parser *)0)->seen[0]),
	       "parser.seen has a slot per keyword");

/* ------------------------------------------------------------------ */
/* Rules                                                                */

/* "user:NAME", "user:#UID", "group:NAME" or "group:#GID". */
static int parse_match(struct parser *p, struct iso_rule *r,
		       const char *word)
{
	const char *id;
	uint64_t number;

	if (strncmp(word, "user:", 5) == 0) {
		r->match = ISO_MATCH_USER;
		id = word + 5;
	} else if (strncmp(word, "group:", 6) == 0) {
		r->match = ISO_MATCH_GROUP;
		id = word + 6;
	} else {
		return fail(p,
			    "expected user:NAME, user:#UID, group:NAME or "
			    "group:#GID after 'rule', got '%s'",
			    word);
	}
	if (id[0] == '#') {
		/* (uid_t)-1 is no one's id. */
		if (parse_decimal(id + 1, UINT32_MAX - 1, &number) < 0)
			return fail(p,
				    "expected a number from 0 to %" PRIu32
				    " after '#', got '%s'",
				    UINT32_MAX - 1, word);
		r->id = (uint32_t)number;
	} else if (id[0] == '\0' || strlen(id) > LOGIN_NAME_MAX) {
		return fail(p, "expected a %s name after '%s', got '%s'",
			    r->match == ISO_MATCH_USER ? "user" : "group",
			    r->match == ISO_MATCH_USER ? "user:" : "group:",
			    word);
	} else if (r->match == ISO_MATCH_USER) {
		/* Resolved now: a rule that silently matched nobody would be
		 * an administrator's surprise. */
		struct passwd *pw = getpwnam(id);

		if (pw == NULL)
			return fail(p, "expected an existing user, got '%s'",
				    id);
		r->id = (uint32_t)pw->pw_uid;
	} else {
		struct group *gr = getgrnam(id);

		if (gr == NULL)
			return fail(p, "expected an existing group, got '%s'",
				    id);
		r->id = (uint32_t)gr->gr_gid;
	}
	r->match_text = strdup(word);
	return r->match_text != NULL ? 0 : out_of_memory(p);
}

static int open_rule(struct parser *p, char *const *word, size_t nword)
{
	struct iso_policy *policy = p->policy;
	struct iso_rule *rules, *r;

	if (nword < 2)
		return fail(p,
			    "expected user:NAME, user:#UID, group:NAME or "
			    "group:#GID after 'rule', got end of line");
	if (nword < 3)
		return fail(p, "expected '{' after 'rule %s', got end of line",
			    word[1]);
	if (strcmp(word[2], "{") != 0)
		return fail(p, "expected '{' after 'rule %s', got '%s'",
			    word[1], word[2]);
	if (nword > 3)
		return fail(p, "expected end of line after '{', got '%s'",
			    word[3]);
	if (policy->nrules >= ISO_POLICY_RULES_MAX)
		return fail(p, "expected at most %d rules, got another",
			    ISO_POLICY_RULES_MAX);
	rules = reallocarray(policy->rules, policy->nrules + 1,
			     sizeof(*rules));
	if (rules == NULL)
		return out_of_memory(p);
	policy->rules = rules;
	r = &rules[policy->nrules++];
	/* Counted before it is complete, so that policy_free() releases a
	 * rule that fails half-way. */
	memset(r, 0, sizeof(*r));
	r->line = p->line;
	memcpy(r->ceiling, iso_default_ceiling, sizeof(r->ceiling));
	r->network_default = ISO_NETWORK_HOST;
	r->seccomp = ISO_SECCOMP_DEFAULT;
	r->seccomp_action = ISO_SECCOMP_ERRNO;
	r->landlock = ISO_LANDLOCK_REQUIRED;
	r->landlock_min_abi = 1;
	memset(p->seen, 0, sizeof(p->seen));
	memset(p->limit_seen, 0, sizeof(p->limit_seen));
	p->rule = r;
	return parse_match(p, r, word[1]);
}

static int close_rule(struct parser *p, char *const *word, size_t nword)
{
	struct iso_rule *r = p->rule;
	char ***lists[] = { &r->programs, &r->seccomp_deny, &r->read,
			    &r->write, &r->may_read, &r->may_write };
	size_t i;

	if (nword > 1)
		return fail(p, "expected end of line after '}', got '%s'",
			    word[1]);
	if (p->seen[KW_POOL] == 0)
		return fail(p, "expected 'pool' in the rule opened at line %u",
			    r->line);
	if (p->seen[KW_PROGRAMS] == 0)
		return fail(p,
			    "expected 'programs' in the rule opened at line %u",
			    r->line);
	r->programs_any = r->programs == NULL;
	/* Lists without a "NULL means default" meaning are never NULL, so
	 * their readers need no special case. */
	for (i = 0; i < sizeof(lists) / sizeof(lists[0]); i++) {
		if (*lists[i] != NULL)
			continue;
		*lists[i] = strv_new(NULL, 0);
		if (*lists[i] == NULL)
			return out_of_memory(p);
	}
	p->rule = NULL;
	return 0;
}

static int rule_line(struct parser *p, char *const *word, size_t nword)
{
	const struct keyword *kw;
	size_t k;

	if (strcmp(word[0], "}") == 0)
		return close_rule(p, word, nword);
	if (strcmp(word[0], "rule") == 0)
		return fail(p,
			    "expected '}' to close the rule opened at line %u, "
			    "got 'rule'",
			    p->rule->line);
	for (k = 0; k < sizeof(keywords) / sizeof(keywords[0]); k++)
		if (strcmp(word[0], keywords[k].name) == 0)
			break;
	if (k == sizeof(keywords) / sizeof(keywords[0]))
		return fail(p,
			    "expected a rule keyword (see isospawn.conf(5)) "
			    "or '}', got '%s'",
			    word[0]);
	if (!keywords[k].repeats) {
		if (p->seen[k] != 0)
			return fail(p,
				    "expected each keyword once per rule, got "
				    "a second '%s' (first at line %u)",
				    word[0], p->seen[k]);
		p->seen[k] = p->line;
	}
	kw = &keywords[k];
	p->keyword = kw->name;
	if (kw->parse != NULL)
		return kw->parse(p, p->rule, word + 1, nword - 1);
	return parse_list(p, (char ***)((char *)p->rule + kw->field), word + 1,
			  nword - 1, kw->valid, kw->what, kw->alone);
}

/* Split one line in place into words; a '#' that starts a word starts a
 * comment. Returns the word count or -EINVAL. */
static int split_words(struct parser *p, char *line, char **word)
{
	size_t nword = 0;
	char *c = line;

	for (;;) {
		c += strspn(c, " \t");
		if (*c == '\0' || *c == '#')
			return (int)nword;
		if (nword == ISO_POLICY_WORDS_MAX)
			return fail(p, "expected at most %d words in a line, "
				    "got more",
				    ISO_POLICY_WORDS_MAX);
		word[nword++] = c;
		c += strcspn(c, " \t");
		if (*c != '\0')
			*c++ = '\0';
	}
}

static int parse_line(struct parser *p, const char *text, size_t len)
{
	char line[ISO_POLICY_LINE_MAX + 1];
	char *word[ISO_POLICY_WORDS_MAX];
	size_t i;
	int nword;

	if (len > ISO_POLICY_LINE_MAX)
		return fail(p, "expected at most %d bytes in a line, got %zu",
			    ISO_POLICY_LINE_MAX, len);
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c == '\0')
			return fail(p, "expected text, got a NUL byte");
		/* Control bytes would reach messages and logs verbatim. */
		if ((c < 0x20 && c != '\t') || c == 0x7f)
			return fail(p,
				    "expected printable text, got the byte "
				    "0x%02x",
				    c);
	}
	memcpy(line, text, len);
	line[len] = '\0';
	nword = split_words(p, line, word);
	if (nword <= 0)
		return nword;
	if (p->rule != NULL)
		return rule_line(p, word, (size_t)nword);
	if (strcmp(word[0], "rule") != 0)
		return fail(p, "expected 'rule', got '%s'", word[0]);
	return open_rule(p, word, (size_t)nword);
}

int policy_parse(const char *text, size_t len, const char *name,
		 struct iso_policy *out, char *why, size_t n)
{
	struct parser p = {
		.name = name != NULL ? name : "(policy)",
		.why = why,
		.n = n,
		.policy = out,
	};
	size_t pos = 0;
	int rc = 0;

	out->rules = NULL;
	out->nrules = 0;
	if (len > ISO_POLICY_FILE_MAX) {
		say(why, n, "%s: expected at most %d bytes, got %zu", p.name,
		    ISO_POLICY_FILE_MAX, len);
		return -EINVAL;
	}
	if (text == NULL && len > 0) {
		say(why, n, "%s: no text", p.name);
		return -EINVAL;
	}
	while (rc == 0 && pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl != NULL ? (size_t)(nl - text) : len;

		p.line++;
		rc = parse_line(&p, text + pos, end - pos);
		pos = end + 1;
	}
	if (rc == 0 && p.rule != NULL)
		rc = fail(&p,
			  "expected '}' to close the rule opened at line %u, "
			  "got end of file",
			  p.rule->line);
	if (rc < 0)
		policy_free(out);
	return rc;
}

/* ------------------------------------------------------------------ */
/* The file                                                             */

static int check_stat(const char *path, const struct stat *st, uid_t owner,
		      int want_dir, char *why, size_t n)
{
	if (want_dir ? !S_ISDIR(st->st_mode) : !S_ISREG(st->st_mode)) {
		say(why, n, "%s: %s, expected %s", path,
		    S_ISLNK(st->st_mode)  ? "a symbolic link"
		    : S_ISDIR(st->st_mode) ? "a directory"
		    : S_ISREG(st->st_mode) ? "a regular file"
					   : "a special file",
		    want_dir ? "a directory" : "a regular file");
		return -EPERM;
	}
	if (st->st_uid != owner) {
		say(why, n, "%s: owned by uid %lu, expected uid %lu", path,
		    (unsigned long)st->st_uid, (unsigned long)owner);
		return -EPERM;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		say(why, n, "%s: mode %04o is writable by %s", path,
		    (unsigned)(st->st_mode & 07777),
		    (st->st_mode & S_IWOTH) ? "others" : "its group");
		return -EPERM;
	}
	return 0;
}

int policy_check_path(const char *path, uid_t owner, char *why, size_t n)
{
	char walk[PATH_MAX];
	struct stat st;
	char *slash;

	if (strlen(path) >= sizeof(walk)) {
		say(why, n, "%.64s...: path too long", path);
		return -ENAMETOOLONG;
	}
	/* The ancestors are found by cutting the text, so it must say
	 * exactly which directories the kernel walks. */
	if (!path_normalized(path)) {
		say(why, n, "%s: expected an absolute normalized path", path);
		return -EINVAL;
	}
	strlcpy(walk, path, sizeof(walk));
	for (int is_dir = 0;; is_dir = 1) {
		int rc;

		if (lstat(walk, &st) < 0) {
			rc = -errno;
			say(why, n, "%s: %s", walk, strerror(errno));
			return rc;
		}
		rc = check_stat(walk, &st, owner, is_dir, why, n);
		if (rc < 0)
			return rc;
		if (strcmp(walk, "/") == 0)
			return 0;
		slash = strrchr(walk, '/');
		slash[slash == walk ? 1 : 0] = '\0';
	}
}

int policy_load(const char *path, struct iso_policy *out, char *why,
		size_t n)
{
	struct stat st;
	size_t len = 0;
	char *text;
	int fd, rc;

	out->rules = NULL;
	out->nrules = 0;
	rc = policy_check_path(path, 0, why, n);
	if (rc < 0)
		return rc;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		rc = -errno;
		say(why, n, "open %s: %s", path, strerror(errno));
		return rc;
	}
	/* Judge the file actually opened, not the name checked above. */
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		say(why, n, "fstat %s: %s", path, strerror(errno));
		close(fd);
		return rc;
	}
	rc = check_stat(path, &st, 0, 0, why, n);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	/* One byte more than allowed, to tell "full" from "too big". */
	text = malloc(ISO_POLICY_FILE_MAX + 1);
	if (text == NULL) {
		close(fd);
		say(why, n, "%s: out of memory", path);
		return -ENOMEM;
	}
	while (len < ISO_POLICY_FILE_MAX + 1) {
		ssize_t got = read(fd, text + len, ISO_POLICY_FILE_MAX + 1 - len);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			rc = -errno;
			say(why, n, "read %s: %s", path, strerror(errno));
			break;
		}
		if (got == 0)
			break;
		len += (size_t)got;
	}
	close(fd);
	if (rc == 0 && len > ISO_POLICY_FILE_MAX) {
		say(why, n, "%s: expected at most %d bytes, got more", path,
		    ISO_POLICY_FILE_MAX);
		rc = -EINVAL;
	}
	if (rc == 0)
		rc = policy_parse(text, len, path, out, why, n);
	free(text);
	return rc;
}

/* ------------------------------------------------------------------ */
/* Matching                                                             */

const struct iso_rule *policy_match(const struct iso_policy *policy,
				    uid_t uid, gid_t gid, const gid_t *groups,
				    size_t ngroups)
{
	size_t i, g;

	for (i = 0; i < policy->nrules; i++) {
		const struct iso_rule *r = &policy->rules[i];

		if (r->match == ISO_MATCH_USER) {
			if (r->id == (uint32_t)uid)
				return r;
			continue;
		}
		if (r->id == (uint32_t)gid)
			return r;
		for (g = 0; g < ngroups; g++)
			if (r->id == (uint32_t)groups[g])
				return r;
	}
	return NULL;
}

void policy_free(struct iso_policy *policy)
{
	size_t i;

	if (policy == NULL)
		return;
	for (i = 0; i < policy->nrules; i++) {
		struct iso_rule *r = &policy->rules[i];

		free(r->match_text);
		free(r->programs);
		free(r->overrides);
		free(r->unsafe_allowed);
		free(r->forward);
		free(r->seccomp_deny);
		free(r->read);
		free(r->write);
		free(r->may_read);
		free(r->may_write);
	}
	free(policy->rules);
	policy->rules = NULL;
	policy->nrules = 0;
}
