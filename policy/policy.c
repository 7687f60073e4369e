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
 *  - MUST leave *out empty on any error, also when it collects them
 *    (ISO_POLICY_COLLECT: the same code goes on to the next line, and
 *    stops at ISO_POLICY_ERRORS_MAX).
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
	[ISO_LIMIT_CPU] = 3600, /* one hour of CPU time */
	[ISO_LIMIT_AS] = 8 * GIB, /* room for a JIT or a large interpreter */
	[ISO_LIMIT_NOFILE] = 1024, /* the usual soft default */
	[ISO_LIMIT_NPROC] = 512, /* counted per pool uid: stops fork bombs */
	[ISO_LIMIT_FSIZE] = 4 * GIB, /* no single file fills a disk */
	[ISO_LIMIT_STACK] = 8 * MIB, /* the usual default */
	[ISO_LIMIT_SCRATCH] = 256 * MIB, /* /tmp: memory, like shm below */
	[ISO_LIMIT_SHM] = 64 * MIB, /* /dev/shm */
	[ISO_LIMIT_MEMORY] = 8 * GIB, /* the whole guest, as 'as' one process */
	[ISO_LIMIT_PIDS] = 512, /* the whole guest, as 'nproc' its uid */
	[ISO_LIMIT_CPUS] = UINT64_MAX, /* every CPU, shared as the kernel does */
};

#define LANDLOCK_ABI_MAX 7

/* A main file may hold what a drop-in may not: defaults, include,
 * audit-log, cgroup-parent. */
enum file_kind { MAIN_FILE, DROPIN_FILE };

/* One read of a policy: its files, what the main file sets for every
 * rule, and what went wrong. */
struct load {
	struct iso_policy *policy;
	struct iso_policy_report *report; /* may be NULL */
	unsigned flags;
	char *why;
	size_t n;
	unsigned errors;
	int first_rc; /* the first error's */
	int out_of_memory;
	struct iso_rule defaults; /* where each rule starts from */
	char *defaults_text; /* its block as written, or NULL */
	size_t include_at; /* the rules read before the include line */
	size_t insert_at; /* where the next drop-in rule goes, or
				   * SIZE_MAX: at the end */
	const char *include_file; /* and the include line, for messages */
	unsigned include_line;
};

/* One file being parsed. */
struct parser {
	struct load *load;
	const char *name; /* the policy's copy, which rules point at */
	enum file_kind kind;
	unsigned line;
	const char *at, *at_end; /* the line being parsed */
	struct iso_rule *block; /* the open rule or defaults, or NULL */
	enum iso_set_by block_by; /* which of the two */
	const char *block_at; /* where it starts */
	const char *keyword; /* the keyword being parsed, for messages */
	unsigned failed; /* 1 << each keyword of the block in error */
	unsigned first_rule; /* the line of the first rule or include */
	unsigned include_line, defaults_line, audit_line, cgroup_line;
};

/* ---- Messages ---- */

static void keep_note(struct load *l, const char *text)
{
	struct iso_policy_report *r = l->report;

	if (r != NULL && r->nnotes < ISO_POLICY_NOTES_MAX && (r->notes[r->nnotes] = strdup(text)))
		r->nnotes++;
}

static void note_warning(struct load *l, const char *text)
{
	keep_note(l, text);
	if (l->report != NULL)
		l->report->warnings++;
}

/* Every error goes through here: the first is the reason, each a note. */
static int error(struct load *l, int rc, const char *text)
{
	if (l->errors++ == 0) {
		l->first_rc = rc;
		snprintf(l->why, l->n, "%s", text);
	}
	/* The helper's read has the first in why, and stops there. */
	if (l->flags & ISO_POLICY_COLLECT)
		keep_note(l, text);
	if (l->report != NULL)
		l->report->errors++;
	if (l->errors == ISO_POLICY_ERRORS_MAX && (l->flags & ISO_POLICY_COLLECT))
		keep_note(l, "too many errors: stopped reading");
	return rc;
}

/* Whether reading goes on past an error: a collecting read within its
 * bound, with memory to spare. */
static int stopped(const struct load *l)
{
	return l->out_of_memory || (l->errors > 0 && (!(l->flags & ISO_POLICY_COLLECT) ||
						      l->errors >= ISO_POLICY_ERRORS_MAX));
}

/* "FILE:LINE: msg" (rc < 0: an error) or "FILE:LINE: warning: msg". msg
 * holds every word of one line with room to spare; only a message that
 * also quotes another rule's file name (any path, for isospawnctl check)
 * can be cut short, and then only its end. */
static int __attribute__((format(printf, 5, 0)))
vsay(struct load *l, int rc, const char *file, unsigned line, const char *fmt, va_list ap)
{
	char msg[2 * ISO_POLICY_LINE_MAX + PATH_MAX], text[sizeof(msg) + PATH_MAX + 32];

	vsnprintf(msg, sizeof(msg), fmt, ap);
	snprintf(text, sizeof(text), "%s:%u: %s%s", file, line, rc < 0 ? "" : "warning: ", msg);
	if (rc < 0)
		return error(l, rc, text);
	note_warning(l, text);
	return 0;
}

static int __attribute__((format(printf, 2, 3))) fail(struct parser *p, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = vsay(p->load, -EINVAL, p->name, p->line, fmt, ap);
	va_end(ap);
	return rc;
}

static void __attribute__((format(printf, 2, 3))) warn(struct parser *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsay(p->load, 0, p->name, p->line, fmt, ap);
	va_end(ap);
}

static int out_of_memory(struct load *l, const char *where)
{
	char text[PATH_MAX + 32];

	l->out_of_memory = 1;
	snprintf(text, sizeof(text), "%s: out of memory", where);
	return error(l, -ENOMEM, text);
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

static int syscall_cmp(const void *name, const void *entry)
{
	return strcmp(name, ((const struct iso_syscall *)entry)->name);
}

const struct iso_syscall *policy_syscall(const char *name)
{
	return bsearch(name, iso_syscalls, iso_nsyscalls, sizeof *iso_syscalls, syscall_cmp);
}

/* What each word of a list must be. */
enum word_kind { WORD_PATH, WORD_PROGRAM, WORD_OVERRIDE, WORD_UNSAFE, WORD_FORWARD, WORD_SYSCALL };

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
	}
	return 0;
}

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

/* A keyword's words and what each stores. */
struct choice {
	const char *word;
	int value;
};

/* One word out of `choices` (ended by a NULL word); returns its value,
 * never negative, or -EINVAL. */
static int one_of(struct parser *p, char *const *arg, size_t narg, const struct choice *choices)
{
	char expected[160] = "";
	int i, rc;

	for (i = 0; choices[i].word != NULL; i++)
		snprintf(expected + strlen(expected), sizeof(expected) - strlen(expected), "%s'%s'",
			 i == 0                        ? ""
			 : choices[i + 1].word != NULL ? ", "
						       : " or ",
			 choices[i].word);
	if ((rc = want_args(p, arg, narg, 1, 1, expected)) < 0)
		return rc;
	for (i = 0; choices[i].word != NULL; i++)
		if (strcmp(arg[0], choices[i].word) == 0)
			return choices[i].value;
	return fail(p, "expected %s after '%s', got '%s'", expected, p->keyword, arg[0]);
}

/* A number from 1 to max, `what` it counts. */
static int parse_number(struct parser *p, char *const *arg, size_t narg, const char *what, int max,
			int *out)
{
	uint64_t value;
	int rc;

	if ((rc = want_args(p, arg, narg, 1, 1, what)) < 0)
		return rc;
	if (parse_decimal(arg[0], strlen(arg[0]), (uint32_t)max, &value) < 0 || value < 1)
		return fail(p, "expected %s from 1 to %d after '%s', got '%s'", what, max,
			    p->keyword, arg[0]);
	*out = (int)value;
	return 0;
}

#define LIST_ANY 1u /* "any" alone: the list stays NULL */
#define LIST_NONE 2u /* "none" alone: an empty list */

/* "any" or "none" by itself where `special` allows, or one or more valid
 * words, each once. The list replaces one the defaults gave. */
static int parse_list(struct parser *p, char ***list, enum word_kind kind, unsigned special,
		      const char *what, char *const *arg, size_t narg)
{
	int any = (special & LIST_ANY) && narg == 1 && strcmp(arg[0], "any") == 0;
	char expected[128], **words;

	snprintf(expected, sizeof(expected), "%s%s%s",
		 special & LIST_ANY ? special & LIST_NONE ? "'any', " : "'any' or " : "",
		 special & LIST_NONE ? "'none' or " : "", what);
	if (narg == 0)
		return fail(p, "expected %s after '%s', got end of line", expected, p->keyword);
	for (size_t i = 0; i < narg && !any; i++) {
		if (((special & LIST_ANY) && strcmp(arg[i], "any") == 0) ||
		    ((special & LIST_NONE) && strcmp(arg[i], "none") == 0)) {
			if (narg != 1)
				return fail(p, "expected '%s' alone or %s after '%s', got both",
					    arg[i], what, p->keyword);
			narg = 0;
			break;
		}
		if (!word_valid(kind, arg[i]))
			return fail(p, "expected %s after '%s', got '%s'", expected, p->keyword,
				    arg[i]);
		for (size_t j = 0; j < i; j++)
			if (strcmp(arg[i], arg[j]) == 0)
				return fail(p, "expected each word once after '%s', got '%s' twice",
					    p->keyword, arg[i]);
	}
	/* One allocation: every list is released by a single free(). */
	words = any ? NULL : iso_strv_new((const char *const *)arg, narg);
	if (!any && words == NULL)
		return out_of_memory(p->load, p->name);
	free(*list);
	*list = words;
	return 0;
}

/* ---- Keywords: each parses its words into the rule (or the defaults) ---- */

#define PATHS "absolute normalized paths"

static int kw_pool(struct parser *p, struct iso_rule *r, char *const *arg, size_t narg)
{
	const char *dash;
	uint64_t lo, hi;
	int rc;

	if ((rc = want_args(p, arg, narg, 1, 1, "FIRST-LAST")) < 0)
		return rc;
	if ((dash = strchr(arg[0], '-')) == NULL ||
	    parse_decimal(arg[0], (size_t)(dash - arg[0]), UINT32_MAX, &lo) < 0 ||
	    parse_decimal(dash + 1, strlen(dash + 1), UINT32_MAX, &hi) < 0)
		return fail(p,
			    "expected FIRST-LAST (two uids from 1 to %" PRIu32 ") after 'pool', "
			    "got '%s'",
			    UINT32_MAX - 1, arg[0]);
	/* uid 0 is root; (uid_t)-1 means "unchanged" to setresuid(). */
	if (lo == 0 || hi == UINT32_MAX)
		return fail(p, "expected a pool without uid %" PRIu32 ", got '%s'",
			    lo == 0 ? 0 : UINT32_MAX, arg[0]);
	if (lo > hi)
		return fail(p, "expected FIRST <= LAST after 'pool', got '%s'", arg[0]);
	if (hi - lo + 1 > ISO_POLICY_POOL_MAX)
		return fail(p, "expected a pool of at most %d uids, got '%s' (%" PRIu64 " uids)",
			    ISO_POLICY_POOL_MAX, arg[0], hi - lo + 1);
	r->pool_first = (uint32_t)lo;
	r->pool_last = (uint32_t)hi;
	return 0;
}

static int kw_programs(struct parser *p, struct iso_rule *r, char *const *arg, size_t narg)
{
	return parse_list(p, &r->programs, WORD_PROGRAM, LIST_ANY, PATHS, arg, narg);
}

static int kw_overrides(struct parser *p, struct iso_rule *r, char *const *arg, size_t narg)
{
	return parse_list(p, &r->overrides, WORD_OVERRIDE, LIST_ANY | LIST_NONE, "variable names",
			  arg, narg);
}

static int kw_allow_unsafe(struct parser *p, struct iso_rule *r, char *const *arg, size_t narg)
{
	return parse_list(p, &r->unsafe_allowed, WORD_UNSAFE, 0,
			  "loader-level variable names (LD_*, MALLOC_*, GCONV_PATH, ...)", arg,
			  narg);
}

static int kw_forward(struct parser *p, struct iso_rule *r, char *const *arg, size_t narg)
{
	return parse_list(p, &r->forward, WORD_FORWARD, LIST_NONE, "names from the forwarded list",
			  arg, narg);
}

#define LIMITS "cpu, as, fsize, stack, nofile, nproc, scratch, shm, memory, pids or cpus"

/* The value of limit `which` after `keyword NAME`, into *value. Bounded
 * below RLIM_INFINITY, which only "unlimited" may mean: the library reads
 * that word as UINT64_MAX, and so it is stored. */
static int limit_value(struct parser *p, const char *name, int which, const char *word,
		       uint64_t *value)
{
	int rc = iso_limit_parse(word, which, value);

	if (rc == 0 && *value > LLONG_MAX && strcmp(word, "unlimited") != 0)
		rc = -ERANGE;
	/* Too large by its suffix: named with the bound. Too many digits are
	 * no number at all. (No word is empty.) */
	if (rc == -ERANGE && iso_limit_in_bytes(which) &&
	    !isdigit((unsigned char)word[strlen(word) - 1]))
		return fail(p, "expected a value of at most %lld bytes after '%s %s', got '%s'",
			    LLONG_MAX, p->keyword, name, word);
	if (rc < 0 || *value < iso_limit_min(which))
		return fail(p, "expected %s or 'unlimited' after '%s %s', got '%s'",
			    iso_limit_in_bytes(which)
				? "a positive number of bytes (suffix K, M, G or T allowed)"
			    : which == ISO_LIMIT_CPU ? "a positive number of seconds"
			    : which == ISO_LIMIT_CPUS
				? "a number of CPUs from 0.01, at most 3 decimals"
				: "a positive count",
			    p->keyword, name, word);
	return 0;
}

/* Sets the limit's origin itself: one keyword, a value per limit name. */
static int kw_limit(struct parser *p, struct iso_rule *r, char *const *arg, size_t narg)
{
	uint64_t value = 0;
	int which, rc;

	if ((rc = want_args(p, arg, narg, 2, 2, "a limit name (" LIMITS ") and a value")) < 0)
		return rc;
	if ((which = iso_limit_from_name(arg[0])) < 0)
		return fail(p, "expected " LIMITS " after 'limit', got '%s'", arg[0]);
	if (r->limit_at[which].by == p->block_by)
		return fail(p,
			    "expected each limit once per %s, got a second 'limit %s' "
			    "(first at line %u)",
			    p->block_by == ISO_SET_RULE ? "rule" : "block", arg[0],
			    r->limit_at[which].line);
	if ((rc = limit_value(p, arg[0], which, arg[1], &value)) < 0)
		return rc;
	r->ceiling[which] = value;
	r->limit_at[which] = (struct iso_origin){ p->name, p->line, p->block_by };
	return 0;
}

static int kw_cgroup(struct parser *p, struct iso_rule *r, char *const *arg, size_t narg)
{
	static const struct choice words[] = { { "required", ISO_CGROUP_REQUIRED },
					       { "optional", ISO_CGROUP_OPTIONAL },
					       { "off", ISO_CGROUP_OFF },
					       { NULL, 0 } };
	int v = one_of(p, arg, narg, words);

	if (v >= 0)
		r->cgroup = (enum iso_cgroup_mode)v;
	return v < 0 ? v : 0;
}

/* "caller-limit NAME VALUE ...": memory, pids and cpus, any of them once,
 * for all of one caller's guests together (helper/cgroup.c). A rule's
 * replaces its defaults' whole. */
static int kw_caller_limit(struct parser *p, struct iso_rule *r, char *const *arg, size_t narg)
{
	unsigned seen = 0;
	int which, rc;

	if ((rc = want_args(p, arg, narg, 2, 6, "memory, pids or cpus and a value, each once")) < 0)
		return rc;
	for (size_t i = 0; i < ISO_LIMIT_COUNT; i++)
		r->caller_limit[i] = UINT64_MAX;
	for (size_t i = 0; i < narg; i += 2) {
		which = iso_limit_from_name(arg[i]);
		if ((which != ISO_LIMIT_MEMORY && which != ISO_LIMIT_PIDS &&
		     which != ISO_LIMIT_CPUS) ||
		    (seen & (1u << which)) || i + 1 == narg)
			return fail(p,
				    "expected memory, pids or cpus, each once and with a value, "
				    "after 'caller-limit', got '%s'",
				    arg[i]);
		seen |= 1u << which;
		if ((rc = limit_value(p, arg[i], which, arg[i + 1], &r->caller_limit[which])) < 0)
			return rc;
	}
	return 0;
}

/* Live guests of one caller at once, over all its connections (creds.c
 * counts them): without it one caller can lease a group rule's whole
 * pool. */
static int kw_guests(struct parser *p, struct iso_rule *r, char *const *arg, size_t narg)
{
	return parse_number(p, arg, narg, "a number of guests", ISO_POLICY_POOL_MAX,
			    &r->guests_max);
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
	if (narg == 2 &&
	    (parse_decimal(arg[1], strlen(arg[1]), (uint32_t)hi, &def) < 0 || def < lo))
		return fail(p,
			    "expected DEFAULT from %" PRIu64 " to %" PRIu64 " seconds after "
			    "'timeout %s', got '%s'",
			    lo, hi, arg[0], arg[1]);
	r->timeout_max_ms = max * 1000;
	r->timeout_default_ms = def * 1000;
	return 0;
}

/* One word sets two fields. */
static int kw_network(struct parser *p, struct iso_rule *r, char *const *arg, size_t narg)
{
	enum { HOST, NONE, NONE_ONLY };
	static const struct choice words[] = {
		{ "host", HOST }, { "none", NONE }, { "none-only", NONE_ONLY }, { NULL, 0 }
	};
	int v = one_of(p, arg, narg, words);

	if (v < 0)
		return v;
	r->network_default = v == HOST ? ISO_NETWORK_HOST : ISO_NETWORK_NONE;
	r->network_none_only = v == NONE_ONLY;
	return 0;
}

static int kw_seccomp(struct parser *p, struct iso_rule *r, char *const *arg, size_t narg)
{
	static const struct choice words[] = { { "default", ISO_SECCOMP_DEFAULT },
					       { "strict", ISO_SECCOMP_STRICT },
					       { "none", ISO_SECCOMP_NONE },
					       { NULL, 0 } };
	int v = one_of(p, arg, narg, words);

	if (v >= 0)
		r->seccomp = (enum iso_seccomp_profile)v;
	return v < 0 ? v : 0;
}

static int kw_seccomp_action(struct parser *p, struct iso_rule *r, char *const *arg, size_t narg)
{
	static const struct choice words[] = { { "errno", ISO_SECCOMP_ERRNO },
					       { "kill", ISO_SECCOMP_KILL },
					       { NULL, 0 } };
	int v = one_of(p, arg, narg, words);

	if (v >= 0)
		r->seccomp_action = (enum iso_seccomp_action)v;
	return v < 0 ? v : 0;
}

static int kw_seccomp_deny(struct parser *p, struct iso_rule *r, char *const *arg, size_t narg)
{
	return parse_list(p, &r->seccomp_deny, WORD_SYSCALL, 0,
			  "system call names ([a-z0-9_], at most 64 bytes)", arg, narg);
}

static int kw_landlock(struct parser *p, struct iso_rule *r, char *const *arg, size_t narg)
{
	static const struct choice words[] = { { "required", ISO_LANDLOCK_REQUIRED },
					       { "optional", ISO_LANDLOCK_OPTIONAL },
					       { "off", ISO_LANDLOCK_OFF },
					       { NULL, 0 } };
	int v = one_of(p, arg, narg, words);

	if (v >= 0)
		r->landlock = (enum iso_landlock_mode)v;
	return v < 0 ? v : 0;
}

static int kw_landlock_abi(struct parser *p, struct iso_rule *r, char *const *arg, size_t narg)
{
	return parse_number(p, arg, narg, "an ABI version", LANDLOCK_ABI_MAX, &r->landlock_min_abi);
}

static int kw_read(struct parser *p, struct iso_rule *r, char *const *arg, size_t narg)
{
	return parse_list(p, &r->read, WORD_PATH, 0, PATHS, arg, narg);
}

static int kw_write(struct parser *p, struct iso_rule *r, char *const *arg, size_t narg)
{
	return parse_list(p, &r->write, WORD_PATH, 0, PATHS, arg, narg);
}

static int kw_grants(struct parser *p, struct iso_rule *r, char *const *arg, size_t narg)
{
	static const struct choice words[] = { { "none", ISO_GRANTS_NONE },
					       { "read", ISO_GRANTS_READ },
					       { "read-write", ISO_GRANTS_READ_WRITE },
					       { NULL, 0 } };
	int v = one_of(p, arg, narg, words);

	if (v >= 0)
		r->grants = (enum iso_grants_mode)v;
	return v < 0 ? v : 0;
}

/* A keyword, what it sets and whether a defaults block may set it: what
 * every rule may share, never what makes a rule the one it is (its pool,
 * its programs, the paths and unsafe variables it lets every guest have). */
static const struct keyword {
	const char *name;
	enum iso_keyword kw;
	int (*parse)(struct parser *p, struct iso_rule *r, char *const *arg, size_t narg);
	int in_defaults;
} keywords[] = {
	{ "pool", ISO_KW_POOL, kw_pool, 0 },
	{ "programs", ISO_KW_PROGRAMS, kw_programs, 0 },
	{ "overrides", ISO_KW_OVERRIDES, kw_overrides, 1 },
	{ "allow-unsafe", ISO_KW_ALLOW_UNSAFE, kw_allow_unsafe, 0 },
	{ "forward", ISO_KW_FORWARD, kw_forward, 1 },
	{ "limit", ISO_KW_LIMIT, kw_limit, 1 },
	{ "guests", ISO_KW_GUESTS, kw_guests, 1 },
	{ "timeout", ISO_KW_TIMEOUT, kw_timeout, 1 },
	{ "network", ISO_KW_NETWORK, kw_network, 1 },
	{ "seccomp", ISO_KW_SECCOMP, kw_seccomp, 1 },
	{ "seccomp-action", ISO_KW_SECCOMP_ACTION, kw_seccomp_action, 1 },
	{ "seccomp-deny", ISO_KW_SECCOMP_DENY, kw_seccomp_deny, 1 },
	{ "landlock", ISO_KW_LANDLOCK, kw_landlock, 1 },
	{ "landlock-abi", ISO_KW_LANDLOCK_ABI, kw_landlock_abi, 1 },
	{ "read", ISO_KW_READ, kw_read, 0 },
	{ "write", ISO_KW_WRITE, kw_write, 0 },
	{ "grants", ISO_KW_GRANTS, kw_grants, 1 },
	{ "cgroup", ISO_KW_CGROUP, kw_cgroup, 1 },
	{ "caller-limit", ISO_KW_CALLER_LIMIT, kw_caller_limit, 1 },
};

/* Keywords no longer read, refused naming what replaced them. */
#define LENDING                                                             \
	"a caller lends its guests what it can open itself, as the rule's " \
	"'grants none|read|read-write' allows (see MIGRATION in isospawn.conf(5))"
static const struct {
	const char *name, *instead;
} removed[] = {
	{ "may-read", LENDING },
	{ "may-write", LENDING },
	/* Gone with the on-disk scratch directories. */
	{ "scratch", "each guest's /tmp is now a tmpfs that ends with it, sized by "
		     "'limit scratch SIZE' (see isospawn.conf(5))" },
};

const char *policy_keyword_name(enum iso_keyword kw)
{
	for (size_t i = 0; i < COUNT(keywords); i++)
		if (keywords[i].kw == kw)
			return keywords[i].name;
	return "?";
}

const char *policy_where(const struct iso_rule *rule, enum iso_keyword kw, int limit, char *buf,
			 size_t n)
{
	const struct iso_origin *o = kw == ISO_KW_LIMIT ? &rule->limit_at[limit] : &rule->at[kw];

	/* A built-in value is the rule's own. */
	snprintf(buf, n, "%s:%u (%s%s%s)", o->by == ISO_SET_BUILTIN ? rule->file : o->file,
		 o->by == ISO_SET_BUILTIN ? rule->line : o->line, policy_keyword_name(kw),
		 kw == ISO_KW_LIMIT ? " " : "",
		 kw == ISO_KW_LIMIT ? iso_limit_name((enum iso_limit)limit) : "");
	return buf;
}

/* ---- Rules ---- */

/* Every list of a rule: the one place that names them all. */
#define RULE_LISTS 7
static void rule_lists(struct iso_rule *r, char ***lists[RULE_LISTS])
{
	lists[0] = &r->programs;
	lists[1] = &r->overrides;
	lists[2] = &r->unsafe_allowed;
	lists[3] = &r->forward;
	lists[4] = &r->seccomp_deny;
	lists[5] = &r->read;
	lists[6] = &r->write;
}

static void rule_free(struct iso_rule *r)
{
	char ***lists[RULE_LISTS];

	rule_lists(r, lists);
	for (size_t i = 0; i < RULE_LISTS; i++)
		free(*lists[i]);
	free(r->text);
	free(r->match_text);
}

/* What a rule gets where neither it nor the defaults say: the safe
 * choice, the shipped policy's: no network (the host's reaches localhost
 * services and cloud credentials), 'timeout 3600 600'. */
static void builtin_rule(struct iso_rule *r)
{
	*r = (struct iso_rule){ .network_default = ISO_NETWORK_NONE,
				.timeout_max_ms = 3600 * 1000,
				.timeout_default_ms = 600 * 1000,
				.seccomp = ISO_SECCOMP_DEFAULT,
				.seccomp_action = ISO_SECCOMP_ERRNO,
				.landlock = ISO_LANDLOCK_REQUIRED,
				.landlock_min_abi = 1,
				.guests_max = ISO_POLICY_GUESTS_DEFAULT,
				.cgroup = ISO_CGROUP_OPTIONAL };
	memcpy(r->ceiling, iso_default_ceiling, sizeof(r->ceiling));
	for (size_t i = 0; i < ISO_LIMIT_COUNT; i++)
		r->caller_limit[i] = UINT64_MAX;
}

/* What a match names, in the words of its messages. */
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
			return fail(p,
				    "expected a number from 0 to %" PRIu32 " after '#', "
				    "got '%s'",
				    UINT32_MAX - 1, word);
		r->id = (uint32_t)number;
	} else if (id[0] == '\0' || strlen(id) > LOGIN_NAME_MAX) {
		return fail(p, "expected a %s name after '%s:', got '%s'", kind, kind, word);
	} else {
		/* Resolved now: in the main file, a rule that silently matched
		 * nobody would be an administrator's surprise. A drop-in's
		 * account may be gone with its package: that rule matches no
		 * one, rather than the whole policy refusing every caller. */
		struct passwd *pw = r->match == ISO_MATCH_USER ? getpwnam(id) : NULL;
		struct group *gr = r->match == ISO_MATCH_GROUP ? getgrnam(id) : NULL;

		if (pw == NULL && gr == NULL && p->kind == MAIN_FILE)
			return fail(p, "expected an existing %s, got '%s'", kind, id);
		if (pw == NULL && gr == NULL) {
			warn(p, "no %s '%s': the rule matches no one", kind, id);
			r->match = ISO_MATCH_NOBODY;
		} else {
			r->id = pw != NULL ? (uint32_t)pw->pw_uid : (uint32_t)gr->gr_gid;
		}
	}
	r->match_text = strdup(word);
	return r->match_text != NULL ? 0 : out_of_memory(p->load, p->name);
}

/* A rule starts as a copy of the defaults, each value still naming where
 * it was set. */
static int start_rule(struct parser *p, struct iso_rule *r)
{
	const struct iso_rule *d = &p->load->defaults;
	char ***lists[RULE_LISTS];
	int rc = 0;

	*r = *d;
	r->file = p->name;
	r->line = p->line;
	/* Its own copies: every list a rule holds is freed with it. */
	rule_lists(r, lists);
	for (size_t i = 0; i < RULE_LISTS; i++) {
		char **from = *lists[i];
		size_t count = 0;

		*lists[i] = NULL;
		while (from != NULL && from[count] != NULL)
			count++;
		if (from != NULL && rc == 0 &&
		    (*lists[i] = iso_strv_new((const char *const *)from, count)) == NULL)
			rc = out_of_memory(p->load, p->name);
	}
	return rc;
}

static int open_rule(struct parser *p, char *const *word, size_t nword)
{
	struct iso_policy *policy = p->load->policy;
	size_t at = p->load->insert_at != SIZE_MAX ? p->load->insert_at : policy->nrules;
	struct iso_rule *r;
	int rc;

	if (policy->nrules >= ISO_POLICY_RULES_MAX)
		return fail(p, "expected at most %d rules, got another", ISO_POLICY_RULES_MAX);
	if ((r = reallocarray(policy->rules, policy->nrules + 1, sizeof(*r))) == NULL)
		return out_of_memory(p->load, p->name);
	policy->rules = r;
	r = &policy->rules[at];
	memmove(r + 1, r, (policy->nrules - at) * sizeof(*r));
	*r = (struct iso_rule){ 0 };
	if (p->load->insert_at != SIZE_MAX)
		p->load->insert_at++;
	/* Counted before it is complete, so that policy_free() releases a
	 * rule that fails half-way; and open even so, so that a collecting
	 * read takes its lines for its own. */
	policy->nrules++;
	p->block = r;
	p->block_by = ISO_SET_RULE;
	p->block_at = p->at;
	p->failed = 0;
	if (p->first_rule == 0)
		p->first_rule = p->line;
	if ((rc = start_rule(p, r)) < 0)
		return rc;
	if (nword < 2)
		return fail(p, "expected " MATCHES " after 'rule', got end of line");
	if (nword < 3)
		return fail(p, "expected '{' after 'rule %s', got end of line", word[1]);
	if (strcmp(word[2], "{") != 0)
		return fail(p, "expected '{' after 'rule %s', got '%s'", word[1], word[2]);
	if (nword > 3)
		return fail(p, "expected end of line after '{', got '%s'", word[3]);
	return parse_match(p, r, word[1]);
}

/* A rule's own text, after the defaults it inherits: what its caller may
 * read (RULE), and reads with this parser. */
static int keep_text(struct parser *p, struct iso_rule *r)
{
	const char *d = p->load->defaults_text;
	size_t own = (size_t)(p->at_end - p->block_at), dlen = d != NULL ? strlen(d) + 1 : 0;

	if (dlen + own > ISO_POLICY_FILE_MAX)
		return fail(p,
			    "expected the defaults block and the rule opened at line %u in at "
			    "most %d bytes, got %zu",
			    r->line, ISO_POLICY_FILE_MAX, dlen + own);
	if ((r->text = malloc(dlen + own + 1)) == NULL)
		return out_of_memory(p->load, p->name);
	snprintf(r->text, dlen + own + 1, "%s%s%.*s", d != NULL ? d : "", d != NULL ? "\n" : "",
		 (int)own, p->block_at);
	return 0;
}

/* A line in error says so already: what it would have set is not missing
 * too. */
#define SAID(p, kw) ((p)->failed & (1u << (kw)))

static int close_rule(struct parser *p, struct iso_rule *r)
{
	/* Lists without a "NULL means default" meaning are never NULL, so
	 * their readers need no special case. */
	char ***lists[] = { &r->programs, &r->seccomp_deny, &r->read, &r->write };
	int rc;

	if (r->at[ISO_KW_POOL].by != ISO_SET_RULE && !SAID(p, ISO_KW_POOL))
		return fail(p, "expected 'pool' in the rule opened at line %u", r->line);
	if (r->at[ISO_KW_PROGRAMS].by != ISO_SET_RULE && !SAID(p, ISO_KW_PROGRAMS))
		return fail(p, "expected 'programs' in the rule opened at line %u", r->line);
	/* What a guest leaves in a write path is its pool uid's, and a
	 * group rule leases the same uids to every member in turn: only a
	 * rule that serves one caller may let guests leave files there. (A
	 * caller's own grants keep its files its own.) */
	if (r->match == ISO_MATCH_GROUP && r->write != NULL)
		return fail(p,
			    "expected 'write' only in a user: rule (the pool of the group: rule "
			    "opened at line %u serves many callers), got it in that rule",
			    r->line);
	/* A write path is the host's own directory in every guest's tree,
	 * and a guest may write all of it: a read path inside it would be
	 * hidden by it (bound first). */
	for (char **in = r->read; in && *in; in++)
		for (char **w = r->write; w && *w; w++)
			if (iso_path_beneath(*in, *w))
				return fail(p,
					    "expected 'read' paths outside the rule's 'write' "
					    "paths (every guest may write all of %s), got %s",
					    *w, *in);
	/* Where the rule picks the programs, the environment must not pick
	 * their code, and no list of such variables can be complete: the
	 * names a caller may set are listed instead. */
	if (r->programs != NULL && r->overrides == NULL && !SAID(p, ISO_KW_OVERRIDES))
		return fail(
		    p,
		    "expected 'overrides NAME...' or 'overrides none' in the rule opened "
		    "at line %u: it restricts 'programs', and with 'overrides any' a caller "
		    "could set what makes them run code of its choosing (OPENSSL_CONF, "
		    "LUA_INIT, ...)",
		    r->line);
	r->programs_any = r->programs == NULL;
	if ((rc = keep_text(p, r)) < 0)
		return rc;
	for (size_t i = 0; i < COUNT(lists); i++)
		if (*lists[i] == NULL && (*lists[i] = iso_strv_new(NULL, 0)) == NULL)
			return out_of_memory(p->load, p->name);
	return 0;
}

/* "defaults {": once, in a main file, before every rule and the include,
 * so that every rule inherits it, those of drop-ins too. */
static int open_defaults(struct parser *p, char *const *word, size_t nword)
{
	unsigned first = p->defaults_line;

	/* Open even when it is an error, so that its lines are its own. */
	p->block = &p->load->defaults;
	p->block_by = ISO_SET_DEFAULTS;
	p->block_at = p->at;
	p->failed = 0;
	p->defaults_line = p->line;
	if (first != 0)
		return fail(p, "expected one 'defaults' block, got a second (first at line %u)",
			    first);
	if (p->first_rule != 0)
		return fail(p,
			    "expected 'defaults' above every rule and 'include' (rules above "
			    "it would not inherit it), got it below line %u",
			    p->first_rule);
	if (nword != 2 || strcmp(word[1], "{") != 0)
		return fail(p, "expected '{' alone after 'defaults', got '%s'",
			    nword > 1 ? word[1] : "end of line");
	return 0;
}

static int close_defaults(struct parser *p)
{
	size_t len = (size_t)(p->at_end - p->block_at);

	free(p->load->defaults_text);
	if ((p->load->defaults_text = strndup(p->block_at, len)) == NULL)
		return out_of_memory(p->load, p->name);
	return 0;
}

static const struct keyword *find_keyword(const char *name)
{
	for (size_t k = 0; k < COUNT(keywords); k++)
		if (strcmp(name, keywords[k].name) == 0)
			return &keywords[k];
	return NULL;
}

static int block_keyword(struct parser *p, char *const *word, size_t nword)
{
	const struct keyword *kw = find_keyword(word[0]);
	struct iso_rule *r = p->block;
	int in_rule = p->block_by == ISO_SET_RULE, rc;

	for (size_t i = 0; kw == NULL && i < COUNT(removed); i++)
		if (strcmp(word[0], removed[i].name) == 0)
			return fail(p, "expected no '%s' line: %s", word[0], removed[i].instead);
	if (kw == NULL)
		return fail(p, "expected a %s keyword (see isospawn.conf(5)) or '}', got '%s'",
			    in_rule ? "rule" : "defaults", word[0]);
	if (!in_rule && !kw->in_defaults)
		return fail(p,
			    "expected '%s' only in a rule (each rule has its own), got it in "
			    "'defaults'",
			    word[0]);
	if (kw->kw != ISO_KW_LIMIT && r->at[kw->kw].by == p->block_by)
		return fail(p,
			    "expected each keyword once per %s, got a second '%s' "
			    "(first at line %u)",
			    in_rule ? "rule" : "block", word[0], r->at[kw->kw].line);
	p->keyword = kw->name;
	if ((rc = kw->parse(p, r, word + 1, nword - 1)) < 0)
		p->failed |= 1u << kw->kw;
	else if (kw->kw != ISO_KW_LIMIT)
		r->at[kw->kw] = (struct iso_origin){ p->name, p->line, p->block_by };
	return rc;
}

/* ---- Lines ---- */

/* "include DIR": once, in a main file, between rules: the drop-ins of DIR
 * are read after the file (policy_load()) and their rules put here. */
static int include_dir(struct parser *p, char *const *word, size_t nword)
{
	struct load *l = p->load;

	if (p->include_line != 0)
		return fail(p, "expected one 'include', got a second (first at line %u)",
			    p->include_line);
	if (nword != 2 || iso_path_check(word[1], ISO_PATH_ANY, NULL) < 0)
		return fail(p,
			    "expected a directory (absolute normalized path) alone after "
			    "'include', got '%s'",
			    nword > 1 ? word[1] : "end of line");
	p->include_line = p->line;
	if (p->first_rule == 0)
		p->first_rule = p->line;
	l->include_at = l->policy->nrules;
	l->include_file = p->name;
	l->include_line = p->line;
	if ((l->policy->include = strdup(word[1])) == NULL)
		return out_of_memory(l, p->name);
	return 0;
}

/* "audit-log FILE": once, in a main file: the helper appends each line
 * it logs there too (isospawn-helper(8)). */
static int audit_log(struct parser *p, char *const *word, size_t nword)
{
	struct iso_policy *policy = p->load->policy;

	if (p->audit_line != 0)
		return fail(p, "expected one 'audit-log', got a second (first at line %u)",
			    p->audit_line);
	if (nword != 2 || iso_path_check(word[1], ISO_PATH_FILE, NULL) < 0)
		return fail(p,
			    "expected a file (absolute normalized path) alone after "
			    "'audit-log', got '%s'",
			    nword > 1 ? word[1] : "end of line");
	p->audit_line = p->line;
	if ((policy->audit_log = strdup(word[1])) == NULL)
		return out_of_memory(p->load, p->name);
	return 0;
}

/* "cgroup-parent DIR": once, in a main file: the cgroup below which the
 * setuid helper puts its guests' (isospawn-helper(8), Resource control);
 * a cgroup v2 directory below /sys/fs/cgroup. */
static int cgroup_parent(struct parser *p, char *const *word, size_t nword)
{
	struct iso_policy *policy = p->load->policy;

	if (p->cgroup_line != 0)
		return fail(p, "expected one 'cgroup-parent', got a second (first at line %u)",
			    p->cgroup_line);
	if (nword != 2 || iso_path_check(word[1], ISO_PATH_ANY, NULL) < 0 ||
	    !iso_path_beneath(word[1], "/sys/fs/cgroup") || strcmp(word[1], "/sys/fs/cgroup") == 0)
		return fail(p,
			    "expected a directory below /sys/fs/cgroup (absolute normalized "
			    "path) alone after 'cgroup-parent', got '%s'",
			    nword > 1 ? word[1] : "end of line");
	p->cgroup_line = p->line;
	if ((policy->cgroup_parent = strdup(word[1])) == NULL)
		return out_of_memory(p->load, p->name);
	return 0;
}

static int top_line(struct parser *p, char *const *word, size_t nword)
{
	int main_file = p->kind == MAIN_FILE;

	if (strcmp(word[0], "rule") == 0)
		return open_rule(p, word, nword);
	if (main_file && strcmp(word[0], "defaults") == 0)
		return open_defaults(p, word, nword);
	if (main_file && strcmp(word[0], "include") == 0)
		return include_dir(p, word, nword);
	if (main_file && strcmp(word[0], "audit-log") == 0)
		return audit_log(p, word, nword);
	if (main_file && strcmp(word[0], "cgroup-parent") == 0)
		return cgroup_parent(p, word, nword);
	if (main_file)
		return fail(p,
			    "expected 'rule', 'defaults', 'include', 'audit-log' or "
			    "'cgroup-parent', got '%s'",
			    word[0]);
	return fail(p, "expected 'rule', got '%s' (a drop-in holds rules only)", word[0]);
}

static int close_block(struct parser *p, char *const *word, size_t nword)
{
	struct iso_rule *r = p->block;

	p->block = NULL;
	if (nword > 1)
		return fail(p, "expected end of line after '}', got '%s'", word[1]);
	return p->block_by == ISO_SET_RULE ? close_rule(p, r) : close_defaults(p);
}

static int block_line(struct parser *p, char *const *word, size_t nword)
{
	int rc;

	if (strcmp(word[0], "}") == 0)
		return close_block(p, word, nword);
	if (strcmp(word[0], "rule") != 0 && strcmp(word[0], "defaults") != 0)
		return block_keyword(p, word, nword);
	rc = fail(p, "expected '}' to close the %s opened at line %u, got '%s'",
		  p->block_by == ISO_SET_RULE ? "rule" : "defaults",
		  p->block_by == ISO_SET_RULE ? p->block->line : p->defaults_line, word[0]);
	/* Read on as if the '}' were there: the next block's lines are its. */
	p->block = NULL;
	if (!stopped(p->load))
		(void)top_line(p, word, nword);
	return rc;
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
	return p->block != NULL ? block_line(p, word, nword) : top_line(p, word, nword);
}

/* The lines of one file; `name` is the policy's copy. */
static void parse_text(struct load *l, const char *text, size_t len, const char *name,
		       enum file_kind kind)
{
	struct parser p = { .load = l, .name = name, .kind = kind };
	char msg[PATH_MAX + 64];
	size_t pos = 0;

	if (len > ISO_POLICY_FILE_MAX) {
		snprintf(msg, sizeof(msg), "%s: expected at most %d bytes, got %zu", name,
			 ISO_POLICY_FILE_MAX, len);
		(void)error(l, -EINVAL, msg);
		return;
	}
	while (pos < len && !stopped(l)) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t end = nl != NULL ? (size_t)(nl - text) : len;

		p.line++;
		p.at = text + pos;
		p.at_end = text + end;
		(void)parse_line(&p, text + pos, end - pos);
		pos = end + 1;
	}
	if (p.block != NULL && !stopped(l))
		(void)fail(&p, "expected '}' to close the %s opened at line %u, got end of file",
			   p.block_by == ISO_SET_RULE ? "rule" : "defaults",
			   p.block_by == ISO_SET_RULE ? p.block->line : p.defaults_line);
}

/* ---- Across the files: pools ---- */

/* The first rule before `before` whose pool holds one of the ids
 * first..first+count-1 (count >= 1), or NULL. A rule without a pool holds
 * none. */
static const struct iso_rule *pool_holding(const struct iso_policy *policy, size_t before,
					   uint64_t first, uint64_t count)
{
	for (size_t i = 0; i < before; i++) {
		const struct iso_rule *r = &policy->rules[i];

		if (r->at[ISO_KW_POOL].by == ISO_SET_RULE && first <= r->pool_last &&
		    (r->pool_first < first || r->pool_first - first < count))
			return r;
	}
	return NULL;
}

/* An error of rule r's pool, at its line. */
static void __attribute__((format(printf, 3, 4)))
pool_error(struct load *l, const struct iso_rule *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	(void)vsay(l, -EINVAL, r->at[ISO_KW_POOL].file, r->at[ISO_KW_POOL].line, fmt, ap);
	va_end(ap);
}

/* Two rules sharing uids would let one caller's guest signal or read
 * another's: every pool apart from those above it, in every file. */
static void pools_apart(struct load *l)
{
	const struct iso_policy *policy = l->policy;

	for (size_t i = 0; i < policy->nrules && !stopped(l); i++) {
		const struct iso_rule *r = &policy->rules[i], *other;

		if (r->at[ISO_KW_POOL].by != ISO_SET_RULE)
			continue;
		other = pool_holding(policy, i, r->pool_first,
				     (uint64_t)r->pool_last - r->pool_first + 1);
		if (other != NULL)
			pool_error(l, r,
				   "expected a pool apart from the pool %" PRIu32 "-%" PRIu32
				   " of the rule at %s:%u, got '%" PRIu32 "-%" PRIu32 "'",
				   other->pool_first, other->pool_last, other->file, other->line,
				   r->pool_first, r->pool_last);
	}
}

/* A pool id delegated to a user (/etc/subuid or /etc/subgid:
 * "OWNER:FIRST:COUNT", which newuidmap and newgidmap let OWNER map into its
 * user namespaces) would let it run processes as a guest's uid or gid:
 * every range is checked, in one pass for all the rules of all the files.
 * A pool id that is an account's is refused when it is leased
 * (creds.c), by a lookup that sees directory users too. */
static void pools_without_delegated_ids(struct load *l)
{
	static const char *const subid[] = { ISO_SUBID_DIR "/subuid", ISO_SUBID_DIR "/subgid" };
	const struct iso_policy *policy = l->policy;
	unsigned long long first, count;
	char line[256], owner[128];
	FILE *f;

	for (size_t i = 0; i < COUNT(subid) && !stopped(l); i++) {
		if ((f = fopen(subid[i], "re")) == NULL)
			continue;
		while (!stopped(l) && fgets(line, sizeof(line), f) != NULL) {
			const struct iso_rule *r;

			if (sscanf(line, "%127[^:]:%llu:%llu", owner, &first, &count) != 3 ||
			    count == 0 ||
			    (r = pool_holding(policy, policy->nrules, first, count)) == NULL)
				continue;
			pool_error(l, r,
				   "expected a pool without delegated ids, got '%" PRIu32
				   "-%" PRIu32 "': %s gives '%s' ids %llu-%llu",
				   r->pool_first, r->pool_last, subid[i], owner, first,
				   first + (count - 1));
		}
		fclose(f);
	}
}

/* ---- Files ---- */

/* The policy's own copy of a file's name, which its rules point at. */
static const char *add_name(struct load *l, const char *path)
{
	struct iso_policy *policy = l->policy;
	char **files = reallocarray(policy->files, policy->nfiles + 1, sizeof(*files));

	if (files == NULL)
		return NULL;
	policy->files = files;
	if ((files[policy->nfiles] = strdup(path)) == NULL)
		return NULL;
	return files[policy->nfiles++];
}

/* The place of a file (or directory) as the helper demands it; a draft's
 * place is only warned about, and a reader that may not examine owners
 * checks only the drop-in directory, which decides what is read. Returns
 * 0 or the error; a directory that does not exist is none (-ENOENT). */
static int check_place(struct load *l, const char *path, int is_dir)
{
	char why[PATH_MAX + 128], text[sizeof(why) + PATH_MAX + 64];
	int rc;

	if ((l->flags & ISO_POLICY_UNCHECKED) && !is_dir)
		return 0;
	if ((rc = policy_check_path(path, is_dir, why, sizeof(why))) == 0 ||
	    (rc == -ENOENT && is_dir))
		return rc;
	if (rc == -EPERM && (l->flags & ISO_POLICY_DRAFT)) {
		snprintf(text, sizeof(text),
			 "%s: warning: would be refused once installed there: %s", path, why);
		note_warning(l, text);
		return 0;
	}
	return error(l, rc, why);
}

/* Read one file (bounded) and parse it. Checked by name, then opened:
 * only root could change what the name means in between, since the walk
 * has found every directory above it root's and unwritable by others. */
static void add_file(struct load *l, const char *path, enum file_kind kind)
{
	/* One byte more than allowed, to tell "full" from "too big". */
	char *text = malloc(ISO_POLICY_FILE_MAX + 1), why[PATH_MAX + 128];
	const char *name = add_name(l, path);
	size_t len = 0;
	ssize_t got = 0;
	int fd = -1, rc;

	if (text == NULL || name == NULL) {
		free(text);
		(void)out_of_memory(l, path);
		return;
	}
	rc = check_place(l, path, 0);
	if (rc == 0 && (fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		rc = error(l, iso_why_errno(why, sizeof(why), "open %s", path), why);
	while (rc == 0 && len <= ISO_POLICY_FILE_MAX &&
	       (got = read(fd, text + len, ISO_POLICY_FILE_MAX + 1 - len)) > 0)
		len += (size_t)got;
	if (rc == 0 && got < 0)
		rc = error(l, iso_why_errno(why, sizeof(why), "read %s", path), why);
	iso_close_fds(&fd, 1);
	if (rc == 0 && len > ISO_POLICY_FILE_MAX) {
		snprintf(why, sizeof(why), "%s: expected at most %d bytes, got more", path,
			 ISO_POLICY_FILE_MAX);
		rc = error(l, -EINVAL, why);
	}
	if (rc == 0)
		parse_text(l, text, len, name, kind);
	free(text);
}

/* "*.conf", not hidden: editors' and dpkg's leftovers are not read. */
static int is_dropin(const struct dirent *e)
{
	size_t len = strlen(e->d_name);

	return e->d_name[0] != '.' && len > 5 && strcmp(e->d_name + len - 5, ".conf") == 0;
}

int policy_dropins(const char *dir, struct dirent ***list, char *why, size_t n)
{
	int count;

	*list = NULL;
	/* alphasort in the C locale (nothing here sets another): byte order. */
	if ((count = scandir(dir, list, is_dropin, alphasort)) < 0)
		return errno == ENOENT ? 0 : iso_why_errno(why, n, "scandir %s", dir);
	return count;
}

/* The drop-ins of the included directory (absent: none; present: as safe
 * as the main file), then the report's more. */
static void add_dropins(struct load *l, const char *const *more)
{
	const char *dir = l->policy->include;
	char file[PATH_MAX + NAME_MAX + 2], why[PATH_MAX + 128]; /* never cut: checked whole */
	struct dirent **list = NULL;
	int count = 0;

	if (dir != NULL && (count = check_place(l, dir, 1)) == 0 &&
	    (count = policy_dropins(dir, &list, why, sizeof(why))) < 0)
		(void)error(l, count, why);
	if (count > ISO_POLICY_DROPINS_MAX) {
		snprintf(file, sizeof(file),
			 "%s:%u: expected at most %d *.conf files in %s, got %d", l->include_file,
			 l->include_line, ISO_POLICY_DROPINS_MAX, dir, count);
		(void)error(l, -EINVAL, file);
	}
	for (int i = 0; i < count; i++) {
		snprintf(file, sizeof(file), "%s/%s", dir, list[i]->d_name);
		if (count <= ISO_POLICY_DROPINS_MAX && !stopped(l))
			add_file(l, file, DROPIN_FILE);
		free(list[i]);
	}
	free(list);
	for (; more != NULL && *more != NULL && !stopped(l); more++)
		add_file(l, *more, DROPIN_FILE);
}

static void load_start(struct load *l, struct iso_policy *out, struct iso_policy_report *report,
		       char *why, size_t n)
{
	*out = (struct iso_policy){ 0 };
	*l = (struct load){ .policy = out,
			    .report = report,
			    .why = why,
			    .n = n,
			    .flags = report != NULL ? report->flags : 0,
			    .insert_at = SIZE_MAX };
	builtin_rule(&l->defaults);
	if (n > 0)
		why[0] = '\0';
}

/* The checks across all the files; then either the whole policy or, after
 * any error, nothing. */
static int load_finish(struct load *l)
{
	if (!stopped(l))
		pools_apart(l);
	if (!stopped(l))
		pools_without_delegated_ids(l);
	rule_free(&l->defaults);
	free(l->defaults_text);
	if (l->errors == 0)
		return 0;
	policy_free(l->policy);
	return l->first_rc;
}

int policy_parse(const char *text, size_t len, const char *name, struct iso_policy *out,
		 struct iso_policy_report *report, char *why, size_t n)
{
	struct load l;
	const char *copy;

	load_start(&l, out, report, why, n);
	if ((copy = add_name(&l, name)) == NULL)
		(void)out_of_memory(&l, name);
	else
		parse_text(&l, text, len, copy, MAIN_FILE);
	return load_finish(&l);
}

int policy_load(const char *path, struct iso_policy *out, struct iso_policy_report *report,
		char *why, size_t n)
{
	struct load l;

	load_start(&l, out, report, why, n);
	add_file(&l, path, MAIN_FILE);
	/* The drop-ins' rules go where the include line stands. */
	l.insert_at = out->include != NULL ? l.include_at : out->nrules;
	if (!stopped(&l))
		add_dropins(&l, report != NULL ? report->more : NULL);
	return load_finish(&l);
}

void policy_report_free(struct iso_policy_report *report)
{
	for (size_t i = 0; i < report->nnotes; i++)
		free(report->notes[i]);
	report->nnotes = 0;
}

/* ---- The file's place ---- */

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
				       S_ISLNK(st.st_mode)   ? "a symbolic link"
				       : S_ISDIR(st.st_mode) ? "a directory"
				       : S_ISREG(st.st_mode) ? "a regular file"
							     : "a special file",
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

/* ---- Matching ---- */

const struct iso_rule *policy_match(const struct iso_policy *policy, uid_t uid, gid_t gid,
				    const gid_t *groups, size_t ngroups)
{
	for (size_t i = 0; i < policy->nrules; i++) {
		const struct iso_rule *r = &policy->rules[i];
		int user = r->match == ISO_MATCH_USER;
		int hit = r->match != ISO_MATCH_NOBODY &&
			  r->id == (user ? (uint32_t)uid : (uint32_t)gid);

		for (size_t g = 0; r->match == ISO_MATCH_GROUP && !hit && g < ngroups; g++)
			hit = r->id == (uint32_t)groups[g];
		if (hit)
			return r;
	}
	return NULL;
}

void policy_free(struct iso_policy *policy)
{
	for (size_t i = 0; i < policy->nrules; i++)
		rule_free(&policy->rules[i]);
	for (size_t i = 0; i < policy->nfiles; i++)
		free(policy->files[i]);
	free(policy->files);
	free(policy->rules);
	free(policy->include);
	free(policy->audit_log);
	free(policy->cgroup_parent);
	*policy = (struct iso_policy){ 0 };
}
