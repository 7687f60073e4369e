/*
 * policy.h - the administrator's policy, isospawn.conf(5): the main file
 * and the drop-in files it includes, as one list of rules, and which rule
 * decides for a caller. One module, linked by the helper, isospawnctl and
 * the fuzzer alike, so that what one accepts the others accept.
 *
 * Each file MUST be owned by root and not writable by group or others, and
 * so MUST every directory above it and the drop-in directory; otherwise the
 * helper refuses to run.
 * Parsing is bounded (sizes below) and total: an unknown keyword, a missing
 * value or an out-of-range number is an error naming file, line and what was
 * expected.
 */
#ifndef ISO_POLICY_H
#define ISO_POLICY_H

#include <stdint.h>
#include <sys/types.h>

#include "isospawn.h"

#define ISO_POLICY_FILE_MAX (64 * 1024) /* bytes in the policy file */
#define ISO_POLICY_LINE_MAX 1024 /* bytes in one line */
#define ISO_POLICY_RULES_MAX 64 /* rules in the file */
#define ISO_POLICY_WORDS_MAX 64 /* words on one line */
#define ISO_POLICY_POOL_MAX 65536 /* uids in one pool */
#define ISO_POLICY_GUESTS_DEFAULT 64 /* a rule's 'guests' when it sets none */
#define ISO_POLICY_DROPINS_MAX 64 /* *.conf files in the drop-in directory */
#define ISO_POLICY_ERRORS_MAX 50 /* errors one collecting read reports */
/* Seconds in a 'timeout' (366 days), and in a guest's: more is a typo, and
 * the bound keeps seconds * 1000 far from overflowing. */
#define ISO_POLICY_TIMEOUT_MAX (366 * 24 * 3600)

/* ISO_MATCH_NOBODY: a drop-in's rule for a user or group that does not
 * exist, which matches no one (and keeps its pool). */
enum iso_match { ISO_MATCH_USER, ISO_MATCH_GROUP, ISO_MATCH_NOBODY };
enum iso_seccomp_profile {
	ISO_SECCOMP_DEFAULT, /* the default deny list */
	ISO_SECCOMP_STRICT, /* default plus a stricter list */
	ISO_SECCOMP_NONE, /* no filter (administrator's explicit choice) */
};
enum iso_seccomp_action { ISO_SECCOMP_ERRNO, ISO_SECCOMP_KILL };
/* What a caller may lend its guests of its own (isospawn.conf(5),
 * grants): in the order of what it allows. */
enum iso_grants_mode { ISO_GRANTS_NONE, ISO_GRANTS_READ, ISO_GRANTS_READ_WRITE };
enum iso_landlock_mode {
	ISO_LANDLOCK_REQUIRED, /* refuse to spawn without it (default) */
	ISO_LANDLOCK_OPTIONAL, /* run degraded, logged and reported */
	ISO_LANDLOCK_OFF, /* no Landlock (administrator's choice) */
};
/* A cgroup per guest (helper/cgroup.c): what the rule does without one. */
enum iso_cgroup_mode {
	ISO_CGROUP_OPTIONAL, /* rlimits only, the notes say what is missing
			      * (default) */
	ISO_CGROUP_REQUIRED, /* refuse the caller without memory, pids and cpu */
	ISO_CGROUP_OFF, /* no cgroup (administrator's choice) */
};

/* The keywords of a rule, by what they set (policy_keyword_name()). */
enum iso_keyword {
	ISO_KW_POOL,
	ISO_KW_PROGRAMS,
	ISO_KW_OVERRIDES,
	ISO_KW_ALLOW_UNSAFE,
	ISO_KW_FORWARD,
	ISO_KW_LIMIT,
	ISO_KW_GUESTS,
	ISO_KW_TIMEOUT,
	ISO_KW_NETWORK,
	ISO_KW_SECCOMP,
	ISO_KW_SECCOMP_ACTION,
	ISO_KW_SECCOMP_DENY,
	ISO_KW_LANDLOCK,
	ISO_KW_LANDLOCK_ABI,
	ISO_KW_READ,
	ISO_KW_WRITE,
	ISO_KW_GRANTS,
	ISO_KW_CGROUP,
	ISO_KW_CALLER_LIMIT,
	ISO_KW_COUNT
};

/* Where a value of a rule comes from: the line of the rule or of the
 * defaults block that set it (file and line), or built in (neither; a
 * refusal names the rule's first line: policy_where()). */
enum iso_set_by { ISO_SET_BUILTIN, ISO_SET_DEFAULTS, ISO_SET_RULE };
struct iso_origin {
	const char *file; /* one of the policy's files */
	unsigned line;
	enum iso_set_by by;
};

struct iso_rule {
	const char *file; /* the file it is in (the policy's), and */
	unsigned line; /* where it starts, for messages */
	char *text; /* the defaults block it inherits, then its own
			      * lines, as written ('rule' to '}') */
	enum iso_match match;
	uint32_t id; /* uid or gid matched */
	char *match_text; /* "user:alice" / "group:#1234", for logs */

	uint32_t pool_first, pool_last; /* inclusive; never 0 or -1 */
	int guests_max; /* live guests of one caller, all connections */

	int programs_any;
	char **programs; /* NULL-terminated absolute paths */
	char **overrides; /* NULL = any safe name */
	char **unsafe_allowed; /* NULL = none */
	char **forward; /* NULL = ISO_FORWARDED_NAMES */

	/* Ceilings; a limit not set in the rule has the built-in default. A
	 * guest gets the ceiling unless it asks for less. */
	uint64_t ceiling[ISO_LIMIT_COUNT];
	uint64_t timeout_max_ms; /* 0 = no ceiling */
	uint64_t timeout_default_ms; /* 0 = none */

	enum iso_network network_default; /* HOST or NONE */
	int network_none_only; /* guests may not ask for the host network */

	enum iso_seccomp_profile seccomp;
	enum iso_seccomp_action seccomp_action;
	char **seccomp_deny; /* NULL-terminated extra syscall names */

	enum iso_landlock_mode landlock;
	int landlock_min_abi; /* the rule needs at least this ABI */

	char **read; /* granted to every guest (read+execute) */
	char **write; /* granted to every guest (read+write) */
	enum iso_grants_mode grants; /* what a caller may lend */

	enum iso_cgroup_mode cgroup;
	/* What all of one caller's guests together may hold (memory, pids,
	 * cpus; UINT64_MAX for no bound), in a cgroup of the caller's above
	 * their leaves: only where at[ISO_KW_CALLER_LIMIT] says the rule or
	 * its defaults set it. */
	uint64_t caller_limit[ISO_LIMIT_COUNT];

	struct iso_origin at[ISO_KW_COUNT]; /* each keyword's, but limit's: */
	struct iso_origin limit_at[ISO_LIMIT_COUNT]; /* each limit's */
};

struct iso_policy {
	struct iso_rule *rules; /* in the order read: first match wins */
	size_t nrules;
	char *include; /* the directory included, or NULL */
	char *audit_log; /* the file the helper appends its log to, or NULL */
	char *cgroup_parent; /* where the setuid helper puts its guests'
				 * cgroups, or NULL: the default (cgroup.c) */
	char **files; /* every file read (the rules' point here) */
	size_t nfiles;
};

/* Built-in ceilings when a rule sets none (isospawn.conf(5) lists them). */
extern const uint64_t iso_default_ceiling[ISO_LIMIT_COUNT];

/* How to read (flags, more), and what was found besides the verdict
 * (notes). Zeroed, it reads as the helper does: stop at the first error. */
#define ISO_POLICY_COLLECT \
	1u /* go on after an error, noting each
				 * (ISO_POLICY_ERRORS_MAX at most) */
#define ISO_POLICY_DRAFT \
	2u /* the files are not the installed ones: a
				 * place the helper would refuse is a warning */
#define ISO_POLICY_UNCHECKED \
	4u /* owners and modes of the files are not
				 * examined (the drop-in directory's are) */
#define ISO_POLICY_NOTES_MAX (2 * ISO_POLICY_ERRORS_MAX + 2)
struct iso_policy_report {
	unsigned flags;
	/* Files read as drop-ins after those the main file includes, where
	 * its 'include' line stands (or at its end); NULL-terminated. */
	const char *const *more;
	/* Every warning and, collecting, every error, in the order found,
	 * each "FILE[:LINE]: ..." ("...: warning: ..." for a warning); owned,
	 * policy_report_free(). */
	char *notes[ISO_POLICY_NOTES_MAX];
	size_t nnotes;
	unsigned errors, warnings;
};
void policy_report_free(struct iso_policy_report *report);

/*
 * Check that `path` (a regular file, or a directory when leaf_is_dir) and
 * every directory above it are owned by root and not writable by group or
 * others. Returns 0 or -EPERM with a reason naming the offending path;
 * -errno if one cannot be examined.
 */
int policy_check_path(const char *path, int leaf_is_dir, char *why, size_t n);

/* Parse policy text (`name` is used in messages) as a main file. It reads
 * no file: an "include DIR" line is checked and recorded in out->include,
 * and only policy_load() reads DIR's drop-ins. Returns 0 or -EINVAL with
 * "name:line: expected ..." (the first error) in why; report may be NULL.
 * On failure *out holds nothing. */
int policy_parse(const char *text, size_t len, const char *name, struct iso_policy *out,
		 struct iso_policy_report *report, char *why, size_t n);

/* The whole policy: the main file `path`, then the drop-ins of the
 * directory it includes and report->more, checked as report->flags say,
 * their rules put in place of the include line; pools apart across all.
 * Returns 0, or the first error's -EINVAL, -EPERM or -errno with its
 * reason in why. On failure *out holds nothing; report may be NULL. */
int policy_load(const char *path, struct iso_policy *out, struct iso_policy_report *report,
		char *why, size_t n);

/* The drop-in files of `dir`: "*.conf" names not starting with '.', in
 * byte order, as a scandir(3) list (free each entry and the array).
 * Returns their count, 0 when dir does not exist, or -errno. */
struct dirent;
int policy_dropins(const char *dir, struct dirent ***list, char *why, size_t n);

/* The first rule matching the caller, or NULL. */
const struct iso_rule *policy_match(const struct iso_policy *policy, uid_t uid, gid_t gid,
				    const gid_t *groups, size_t ngroups);

void policy_free(struct iso_policy *policy);

/* The keyword as written in the policy ("seccomp-deny"). */
const char *policy_keyword_name(enum iso_keyword kw);

/* "FILE:LINE (KEYWORD)" into buf: where the rule's value of kw comes from,
 * for a refusal to name the line that would allow it; `limit` picks the
 * limit for ISO_KW_LIMIT ("(limit as)"). Returns buf. */
const char *policy_where(const struct iso_rule *rule, enum iso_keyword kw, int limit, char *buf,
			 size_t n);

/* A system call a rule's seccomp-deny may name (seccomp-tables.h), or NULL
 * for a name libseccomp did not know at build time. */
struct iso_syscall;
const struct iso_syscall *policy_syscall(const char *name);

#endif /* ISO_POLICY_H */
