/*
 * isospawnctl - for administrators and callers: check the policy before it
 * bites, see and stop live guests, read one's own rule (isospawnctl(8)).
 *
 *   isospawnctl check [-q] [FILE [DROPIN...]]
 *   isospawnctl list [--json]
 *   isospawnctl stop ID|UID
 *   isospawnctl rule [USER]
 *
 * The policy is read with the helper's own policy module (policy/), so
 * what this program accepts is exactly what the helper accepts. It runs
 * with the privileges of whoever started it; it is never setuid. Root reads
 * the lease records (record.h) itself; any other caller asks a helper of its
 * own (LIST, STOP, RULE), which answers only about the caller's guests and
 * the caller's rule.
 *
 * Exit codes: 0 all is well; 1 a problem was found (an error in the
 * policy, no such guest, a refusal); 2 usage error.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <inttypes.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "client.h"
#include "die.h"
#include "json.h"
#include "record.h"
#include "policy.h"
#include "util.h"

#define EXIT_PROBLEM 1
#define EXIT_USAGE 2
#define WHY_MAX 2048

const char cli_name[] = "isospawnctl";

static void usage(FILE *f)
{
	fputs("usage: isospawnctl [-q] check [FILE [DROPIN...]]\n"
	      "       isospawnctl list [--json]\n"
	      "       isospawnctl stop ID|UID\n"
	      "       isospawnctl rule [USER]\n"
	      "\n"
	      "  check [FILE [DROPIN...]]\n"
	      "                   parse the policy (" ISO_POLICY_PATH " and\n"
	      "                   " ISO_POLICY_DIR "/*.conf, or the draft FILE and\n"
	      "                   DROPINs) as the helper does; every error, then\n"
	      "                   one line per rule with every value\n"
	      "  list             live guests: the caller's own, or (root) everyone's\n"
	      "  stop ID|UID      end a guest (ID as list shows it, or its uid) and\n"
	      "                   everything it started: the caller's own, or (root) any\n"
	      "  rule [USER]      what the caller's rule (or USER's) grants\n"
	      "  -q, --quiet      print only problems\n"
	      "  --json           list as JSON\n"
	      "  -h, --help       show this help\n"
	      "  -V, --version    show the version\n"
	      "\n"
	      "Exit status: 0 fine, 1 a problem was found, 2 usage error.\n",
	      f);
}

/* ---- Describing a rule ---- */

static const char *network_word(const struct iso_rule *r)
{
	if (r->network_none_only)
		return "none-only";
	return r->network_default == ISO_NETWORK_NONE ? "none" : "host";
}

/* A list as a rule's line has it, or `otherwise` where it has none. */
static void put_words(char *const *words, const char *otherwise)
{
	if (words == NULL || words[0] == NULL)
		fputs(otherwise, stdout);
	for (char *const *w = words; w != NULL && *w != NULL; w++)
		printf("%s%s", w == words ? "" : " ", *w);
}

static const char *const cgroup[] = { "optional", "required", "off" };

/* The rule's caller-limit as written ("memory=8G pids=1024"), or
 * otherwise when it has none. */
static void put_caller_limit(const struct iso_rule *r, const char *otherwise)
{
	static const int which[] = { ISO_LIMIT_MEMORY, ISO_LIMIT_PIDS, ISO_LIMIT_CPUS };
	char value[32];
	int any = 0;

	for (size_t i = 0; r->at[ISO_KW_CALLER_LIMIT].by != ISO_SET_BUILTIN && i < 3; i++)
		if (r->caller_limit[which[i]] != UINT64_MAX) {
			iso_limit_format(which[i], r->caller_limit[which[i]], value, sizeof(value));
			printf("%s%s=%s", any++ ? " " : "", iso_limit_name(which[i]), value);
		}
	if (!any)
		fputs(otherwise, stdout);
}

/* "FILE:LINE: who: pool ..., guests ..., and every other value", in the
 * policy's own words. */
static void summarize(const struct iso_rule *r)
{
	static const char *const seccomp[] = { "default", "strict", "none" };
	static const char *const action[] = { "errno", "kill" };
	static const char *const landlock[] = { "required", "optional", "off" };
	static const char *const grants[] = { "none", "read", "read-write" };
	static const char *const forwarded[] = { ISO_FORWARDED_NAMES, NULL };
	char value[32];

	printf("%s:%u: %s: pool %" PRIu32 "-%" PRIu32 " (%" PRIu64 " uids), guests %d, programs ",
	       r->file, r->line, r->match_text, r->pool_first, r->pool_last,
	       (uint64_t)r->pool_last - r->pool_first + 1, r->guests_max);
	put_words(r->programs_any ? NULL : r->programs, "any");
	fputs(", overrides ", stdout);
	put_words(r->overrides, r->overrides != NULL ? "none" : "any");
	fputs(", allow-unsafe ", stdout);
	put_words(r->unsafe_allowed, "none");
	fputs(", forward ", stdout);
	put_words(r->forward != NULL ? r->forward : (char **)forwarded, "none");
	printf(", network %s, limits", network_word(r));
	for (int i = 0; i < ISO_LIMIT_COUNT; i++) {
		iso_limit_format(i, r->ceiling[i], value, sizeof(value));
		printf(" %s=%s", iso_limit_name((enum iso_limit)i), value);
	}
	if (r->timeout_max_ms == 0 && r->timeout_default_ms == 0)
		fputs(", no timeout", stdout);
	else if (r->timeout_max_ms == 0)
		printf(", timeout without ceiling (default %" PRIu64 " s)",
		       r->timeout_default_ms / 1000);
	else
		printf(", timeout %" PRIu64 " s (default %" PRIu64 " s)", r->timeout_max_ms / 1000,
		       r->timeout_default_ms / 1000);
	printf(", seccomp %s %s, seccomp-deny ", seccomp[r->seccomp], action[r->seccomp_action]);
	put_words(r->seccomp_deny, "none");
	printf(", landlock %s (ABI %d or later), read ", landlock[r->landlock],
	       r->landlock_min_abi);
	put_words(r->read, "none");
	fputs(", write ", stdout);
	put_words(r->write, "none");
	printf(", grants %s, cgroup %s, caller-limit ", grants[r->grants], cgroup[r->cgroup]);
	put_caller_limit(r, "none");
	putchar('\n');
}

/* The helper refuses a connection when a read or write path of the rule is
 * missing; say so now rather than at the first caller. */
static void warn_missing_paths(const struct iso_rule *r)
{
	char **lists[] = { r->read, r->write };
	const char *names[] = { "read", "write" };
	struct stat st;

	for (int l = 0; l < 2; l++)
		for (char **p = lists[l]; *p != NULL; p++)
			if (stat(*p, &st) < 0)
				fprintf(stderr,
					"%s:%u: warning: %s path %s: %s: callers of this rule are "
					"refused until it exists\n",
					r->file, r->line, names[l], *p, strerror(errno));
}

/* A programs list is a boundary on code only where nobody but root can
 * change what its paths name: the file root's and unwritable by others, and
 * every directory it is looked up in on the way, symbolic links followed, as
 * the policy's own (a caller's home, /tmp, a write path are not). The
 * walk is the kernel's, one component at a time, so a link anywhere (a
 * caller's, or root's into a caller's directory) is checked where it leads. */
static int warn_unsafe_program(const struct iso_rule *r, const char *program)
{
	char cur[PATH_MAX] = "/", rest[2 * PATH_MAX], next[2 * PATH_MAX], cand[2 * PATH_MAX];
	char target[PATH_MAX], why[WHY_MAX];
	struct stat st;
	int hops = 0, rc = 0;
	ssize_t len;

	snprintf(rest, sizeof(rest), "%s", program);
	for (char *comp = rest; rc == 0;) {
		char *tail;

		comp += strspn(comp, "/");
		tail = comp + strcspn(comp, "/");
		if (*comp == '\0')
			return 0;
		if (*tail != '\0')
			*tail++ = '\0';
		if (strcmp(comp, ".") == 0 || strcmp(comp, "..") == 0) {
			if (comp[1] == '.')
				*(strrchr(cur, '/') + (strrchr(cur, '/') == cur)) = '\0';
			comp = tail;
			continue;
		}
		if ((rc = policy_check_path(cur, 1, why, sizeof(why))) < 0)
			break;
		snprintf(cand, sizeof(cand), "%s/%s", strcmp(cur, "/") == 0 ? "" : cur, comp);
		if (lstat(cand, &st) < 0 || strlen(cand) >= sizeof(cur))
			return 0; /* missing: only root may make it there */
		if (S_ISLNK(st.st_mode)) {
			if (++hops > 40 || (len = readlink(cand, target, sizeof(target) - 1)) < 0)
				return 0; /* the helper's open fails too */
			target[len] = '\0';
			if (target[0] == '/')
				snprintf(cur, sizeof(cur), "/");
			snprintf(next, sizeof(next), "%s/%s", target, tail);
			snprintf(rest, sizeof(rest), "%s", next);
			comp = rest;
		} else if (*tail == '\0' || !S_ISDIR(st.st_mode)) {
			rc = policy_check_path(cand, 0, why, sizeof(why));
			break;
		} else {
			/* Fits: strlen(cand) < sizeof(cur), checked above. */
			memcpy(cur, cand, strlen(cand) + 1);
			comp = tail;
		}
	}
	if (rc < 0)
		fprintf(stderr,
			"%s:%u: warning: programs path %s: %s: whoever may change it "
			"picks the code guests run, as under 'programs any'\n",
			r->file, r->line, program, why);
	return rc < 0;
}

/* The rules are tried in order and the first that matches decides, so a
 * rule that matches the same user, or the same group, as a rule above it is
 * never tried. Only that is certain: a user's process need not hold the
 * user's groups, and a group has other members. */
static void warn_shadowed(const struct iso_policy *policy, size_t i)
{
	const struct iso_rule *r = &policy->rules[i];

	for (size_t j = 0; j < i; j++) {
		const struct iso_rule *above = &policy->rules[j];

		if (above->match == r->match && above->id == r->id &&
		    r->match != ISO_MATCH_NOBODY) {
			fprintf(stderr,
				"%s:%u: warning: rule %s never decides: the rule at %s:%u "
				"(%s) matches every caller it would, and the first match decides\n",
				r->file, r->line, r->match_text, above->file, above->line,
				above->match_text);
			return;
		}
	}
}

/* The rule whose pool holds `id`, named with the account that has it; 1,
 * or 0 when no pool does. */
static int pool_holding_account(const struct iso_policy *policy, uint32_t id, const char *kind,
				const char *name)
{
	for (size_t i = 0; i < policy->nrules; i++) {
		const struct iso_rule *r = &policy->rules[i];

		if (id >= r->pool_first && id <= r->pool_last) {
			fprintf(stderr,
				"%s:%u: expected a pool without accounts, got '%" PRIu32 "-%" PRIu32
				"': %s %" PRIu32 " is the %s '%s' (the helper %s)\n",
				r->at[ISO_KW_POOL].file, r->at[ISO_KW_POOL].line, r->pool_first,
				r->pool_last, kind[0] == 'u' ? "uid" : "gid", id, kind, name,
				id == r->pool_first ? "refuses every caller of the rule, whose "
						      "template it builds as the pool's first uid"
						    : "leases it to no guest");
			return 1;
		}
	}
	return 0;
}

/* A pool id that is an account's the helper refuses to lease, asking the
 * account services at each lease; the accounts they list are all checked
 * here, for the administrator (directory services may list none of
 * theirs). Returns how many pools hold one. */
static int pools_holding_accounts(const struct iso_policy *policy)
{
	struct passwd *pw;
	struct group *gr;
	int found = 0;

	setpwent();
	while ((pw = getpwent()) != NULL)
		found += pool_holding_account(policy, pw->pw_uid, "user", pw->pw_name);
	endpwent();
	setgrent();
	while ((gr = getgrent()) != NULL)
		found += pool_holding_account(policy, gr->gr_gid, "group", gr->gr_name);
	endgrent();
	return found;
}

/* ---- check ---- */

struct member {
	char name[LOGIN_NAME_MAX + 1];
};

/* The members of group `gid` as the account services list them: those
 * it names, and those whose primary group it is; at most max. */
static size_t group_members(gid_t gid, struct member *v, size_t max)
{
	struct group *gr = getgrgid(gid);
	struct passwd *pw;
	size_t n = 0;

	for (char **m = gr != NULL ? gr->gr_mem : NULL; m != NULL && *m != NULL && n < max; m++)
		snprintf(v[n++].name, sizeof(v->name), "%s", *m);
	setpwent();
	while ((pw = getpwent()) != NULL && n < max)
		if (pw->pw_gid == gid)
			snprintf(v[n++].name, sizeof(v->name), "%s", pw->pw_name);
	endpwent();
	return n;
}

static const char *group_name(gid_t gid, char *buf, size_t n)
{
	struct group *gr = getgrgid(gid);

	if (gr != NULL)
		snprintf(buf, n, "%s", gr->gr_name);
	else
		snprintf(buf, n, "#%u", (unsigned)gid);
	return buf;
}

static int has_member(const struct member *v, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].name, name) == 0)
			return 1;
	return 0;
}

/* Where the setuid helper's mode lets only one group execute it (4754
 * root:isospawn, as installed; isospawn.socket is 0660 in that group), a
 * member of a rule's group outside it reaches no helper: the rule seems
 * to admit callers it never serves. */
static void warn_members_outside(const struct iso_rule *r)
{
	static struct member in_rule[256], in_gate[256];
	char names[8 * (LOGIN_NAME_MAX + 2) + 8] = "", gate_name[64];
	size_t nrule, ngate, nout = 0;
	gid_t gate;

	if (r->match != ISO_MATCH_GROUP || iso__helper_group(&gate) <= 0 || gate == r->id)
		return;
	nrule = group_members(r->id, in_rule, COUNT(in_rule));
	ngate = group_members(gate, in_gate, COUNT(in_gate));
	for (size_t i = 0; i < nrule; i++) {
		/* Once each: a member may be named and have it as its primary. */
		if (has_member(in_gate, ngate, in_rule[i].name) ||
		    has_member(in_rule, i, in_rule[i].name) || nout++ >= 8)
			continue;
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%.*s",
			 nout > 1 ? ", " : "", LOGIN_NAME_MAX, in_rule[i].name);
	}
	if (nout > 0)
		fprintf(stderr,
			"%s:%u: warning: %s has members outside group %s (%s%s): they "
			"cannot run the setuid helper %s nor reach isospawn.socket; add them to "
			"group %s\n",
			r->file, r->line, r->match_text,
			group_name(gate, gate_name, sizeof(gate_name)), names,
			nout > 8 ? ", ..." : "", iso__helper_path(), gate_name);
}

/* Without a syslog socket, syslog(3) drops every line without a word. */
static void warn_no_syslog(const struct iso_policy *policy)
{
	struct stat st;

	if (stat("/dev/log", &st) == 0 && S_ISSOCK(st.st_mode))
		return;
	if (policy->audit_log != NULL)
		fprintf(stderr,
			"isospawnctl: warning: no syslog socket at /dev/log: the helper's "
			"log reaches only its audit-log %s\n",
			policy->audit_log);
	else
		fprintf(stderr,
			"isospawnctl: warning: no syslog socket at /dev/log: the helper's "
			"log is lost; name an audit-log file in the policy (isospawn.conf(5))\n");
}

/* The helper refuses every caller where it cannot append to the policy's
 * audit-log (helper/log.c): its directory as safe as the policy's, the
 * file, once it exists, a regular file of root's no one else may write. */
static int check_audit_log(const char *policy_file, const char *path, int root)
{
	char dir[PATH_MAX], why[WHY_MAX], *slash;
	struct stat st;

	if (path == NULL || !root)
		return 0;
	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	slash[slash == dir ? 1 : 0] = '\0';
	if (policy_check_path(dir, 1, why, sizeof(why)) < 0) {
		/* why says what is wrong with the directory */
	} else if (lstat(path, &st) < 0) {
		if (errno == ENOENT)
			return 0; /* the helper creates it */
		iso_why_errno(why, sizeof(why), "%s", path);
	} else if (!S_ISREG(st.st_mode) || st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(why, sizeof(why),
			 "%s: expected a regular file of root's that no one else "
			 "may write",
			 path);
	} else {
		return 0;
	}
	fprintf(stderr,
		"%s: audit-log %s: %s: the helper refuses every caller until it can "
		"append to it\n",
		policy_file, path, why);
	return 1;
}

/* Drop-ins in the installed directory that the installed policy does not
 * include: the helper never reads them. */
static void warn_unread_dropins(const struct iso_policy *policy)
{
	char why[WHY_MAX];
	struct dirent **list = NULL;
	int count;

	if (policy->include != NULL && strcmp(policy->include, ISO_POLICY_DIR) == 0)
		return;
	count = policy_dropins(ISO_POLICY_DIR, &list, why, sizeof(why));
	for (int i = 0; i < count; i++) {
		fprintf(stderr, "%s/%s: warning: not read: %s has no 'include %s'\n",
			ISO_POLICY_DIR, list[i]->d_name, ISO_POLICY_PATH, ISO_POLICY_DIR);
		free(list[i]);
	}
	free(list);
}

/* A file named on the command line as the administrator typed it
 * (new.conf, ./new.conf), in the absolute normal form the policy module
 * reads and walks: its directory resolved, its own name kept, so that a
 * link there is still judged as a link. 0, or -1 having said why. */
static int draft_path(const char *arg, char out[PATH_MAX])
{
	const char *fault, *slash = strrchr(arg, '/');
	const char *name = slash != NULL ? slash + 1 : arg;
	char dir[PATH_MAX], real[PATH_MAX];

	snprintf(out, PATH_MAX, "%s", arg);
	if (iso_path_check(arg, ISO_PATH_ANY, &fault) == 0 || name[0] == '\0' ||
	    strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
		return 0; /* as it is: the policy module says what is wrong */
	snprintf(dir, sizeof(dir), "%.*s", slash != NULL ? (int)(name - arg) : 1,
		 slash != NULL ? arg : ".");
	if (realpath(dir, real) == NULL) {
		fprintf(stderr, "%s: %s\n", arg, strerror(errno));
		return -1;
	}
	if (snprintf(out, PATH_MAX, "%s/%s", strcmp(real, "/") != 0 ? real : "", name) >= PATH_MAX)
		snprintf(out, PATH_MAX, "%s", arg);
	return 0;
}

/*
 * As visudo -c: every error of every file in one run, each in the helper's
 * words; then, of a valid policy, each rule's every value and what would
 * surprise its administrator. Without FILEs, the installed policy as the
 * helper reads it; with them, FILE as a main file (a draft: where it lies
 * is judged only in warnings) and each further one as a drop-in.
 */
static int cmd_check(int argc, char **argv, int quiet)
{
	int root = geteuid() == 0, draft = argc > 0, problems = 0, rc;
	struct iso_policy_report report = {
		.flags = ISO_POLICY_COLLECT | (draft ? ISO_POLICY_DRAFT : 0) |
			 (root ? 0 : ISO_POLICY_UNCHECKED),
	};
	char(*files)[PATH_MAX] = calloc((size_t)argc + 1, PATH_MAX);
	const char **names = calloc((size_t)argc + 1, sizeof(*names));
	const char *path = ISO_POLICY_PATH;
	struct iso_policy all;
	char why[WHY_MAX];

	if (files == NULL || names == NULL)
		die(EXIT_PROBLEM, "out of memory");
	for (int i = 0; i < argc; i++) {
		if (draft_path(argv[i], files[i]) < 0) {
			free(files);
			free(names);
			return EXIT_PROBLEM;
		}
		names[i] = files[i];
	}
	if (draft) {
		path = names[0];
		report.more = names + 1;
	}
	rc = policy_load(path, &all, &report, why, sizeof(why));
	for (size_t i = 0; i < report.nnotes; i++)
		fprintf(stderr, "%s\n", report.notes[i]);
	policy_report_free(&report);
	if (rc == 0 && !draft)
		warn_unread_dropins(&all);
	problems += pools_holding_accounts(&all);
	problems += check_audit_log(path, all.audit_log, root);
	for (size_t i = 0; i < all.nrules; i++) {
		if (!quiet)
			summarize(&all.rules[i]);
		warn_missing_paths(&all.rules[i]);
		warn_shadowed(&all, i);
		warn_members_outside(&all.rules[i]);
		for (char **p = all.rules[i].programs; root && p && *p; p++)
			warn_unsafe_program(&all.rules[i], *p);
	}
	if (rc == 0)
		warn_no_syslog(&all);
	if (!root)
		fprintf(stderr, "isospawnctl: not root: ownership and modes were not checked\n");
	if (rc == 0 && problems == 0 && !quiet)
		printf("policy OK: %zu rule%s\n", all.nrules, all.nrules == 1 ? "" : "s");
	else if (rc < 0 && draft)
		fprintf(stderr, "isospawnctl: invalid: the helper would refuse every caller with "
				"this policy\n");
	else if (rc < 0)
		fprintf(stderr, "isospawnctl: the policy is invalid: the helper refuses every "
				"caller until it is fixed\n");
	policy_free(&all);
	free(files);
	free(names);
	return rc == 0 && problems == 0 ? 0 : EXIT_PROBLEM;
}

/* ---- Guests: list and stop ---- */

/* One live guest, as its record says (record.h). */
struct row {
	uint32_t helper, id, caller, uid, pid, network;
	uint64_t start_ticks, started_us, timeout_ms;
	uint64_t limits[ISO_LIMIT_COUNT];
	char *program;
};

struct rows {
	struct row *v;
	size_t n;
};

static void add_row(const struct iso_wire_msg *m, void *arg)
{
	const struct iso_wire_guest *g = &m->u.guest;
	struct rows *rows = arg;
	struct row *v;

	if (m->type != ISO_MSG_GUEST)
		return;
	if ((v = reallocarray(rows->v, rows->n + 1, sizeof(*v))) == NULL)
		die(EXIT_PROBLEM, "out of memory");
	rows->v = v;
	v[rows->n] = (struct row){ .helper = g->helper,
				   .id = m->id,
				   .caller = g->caller,
				   .uid = g->uid,
				   .pid = g->pid,
				   .network = g->network,
				   .start_ticks = g->start_ticks,
				   .started_us = g->started_us,
				   .timeout_ms = g->timeout_ms,
				   .program = strdup(g->program) };
	for (int i = 0; i < ISO_LIMIT_COUNT; i++)
		v[rows->n].limits[i] = (g->limits_set & 1u << i) ? g->limits[i] : UINT64_MAX;
	if (v[rows->n++].program == NULL)
		die(EXIT_PROBLEM, "out of memory");
}

/* A caller's program path as the log shows it (log_quote: bytes below 0x20
 * and from 0x7f up, '"' and '\\' as \\xHH), so that none reaches the
 * terminal raw: 0x9b, say, is a control sequence's start to some. */
static const char *shown(const char *program)
{
	static char buf[4 * ISO_WIRE_PATH_MAX + 1];

	iso_quote(buf, sizeof(buf), program);
	return buf;
}

static int by_id(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->helper != y->helper)
		return x->helper < y->helper ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static iso_conn *open_helper(void)
{
	iso_conn *conn;

	if (iso_open(&conn) < 0)
		die(EXIT_PROBLEM, "%s", iso_last_error());
	return conn;
}

/* Ask a helper of the caller's own (LIST, STOP or RULE). */
static void query(uint8_t type, uint32_t uid, uint32_t pid,
		  void (*fn)(const struct iso_wire_msg *, void *), void *arg)
{
	struct iso_wire_msg m = { .type = type, .id = 1 };
	iso_conn *conn = open_helper();

	m.u.stop.uid = uid;
	m.u.stop.pid = pid;
	if (iso__query(conn, &m, fn, arg) < 0)
		die(EXIT_PROBLEM, "%s", iso_last_error());
	iso_close(conn);
}

/* Root reads every record itself; a caller asks its own helper, which
 * shows it only its own guests. */
static void read_rows(struct rows *rows)
{
	static uint8_t buf[ISO_WIRE_MAX];
	static struct iso_wire_msg m;
	char path[sizeof(ISO_LEASE_DIR) + 256];
	struct dirent *e;
	DIR *dir;

	if (geteuid() != 0) {
		query(ISO_MSG_LIST, 0, 0, add_row, rows);
	} else if ((dir = opendir(ISO_LEASE_DIR)) != NULL) {
		while ((e = readdir(dir)) != NULL) {
			snprintf(path, sizeof(path), "%s/%s", ISO_LEASE_DIR, e->d_name);
			if (iso_record_read(path, buf, sizeof(buf), &m) == 1)
				add_row(&m, rows);
		}
		closedir(dir);
	} else if (errno != ENOENT) {
		die(EXIT_PROBLEM, "%s: %s", ISO_LEASE_DIR, strerror(errno));
	}
	/* qsort's array may not be NULL, even with nothing to sort. */
	if (rows->n > 0)
		qsort(rows->v, rows->n, sizeof(*rows->v), by_id);
}

static void free_rows(struct rows *rows)
{
	for (size_t i = 0; i < rows->n; i++)
		free(rows->v[i].program);
	free(rows->v);
}

static const char *user_name(uid_t uid)
{
	struct passwd *pw = getpwuid(uid);

	return pw != NULL ? pw->pw_name : NULL;
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* "3h05m02s", "4m10s", "7s". */
static void format_elapsed(uint64_t us, char *buf, size_t n)
{
	uint64_t s = us / 1000000;

	if (s >= 3600)
		snprintf(buf, n, "%" PRIu64 "h%02" PRIu64 "m%02" PRIu64 "s", s / 3600, s / 60 % 60,
			 s % 60);
	else if (s >= 60)
		snprintf(buf, n, "%" PRIu64 "m%02" PRIu64 "s", s / 60, s % 60);
	else
		snprintf(buf, n, "%" PRIu64 "s", s);
}

/* Local time, ISO 8601 (for JSON) or for people. */
static void format_time(uint64_t us, int iso, char *buf, size_t n)
{
	time_t t = (time_t)(us / 1000000);
	struct tm tm;

	if (localtime_r(&t, &tm) == NULL ||
	    strftime(buf, n, iso ? "%Y-%m-%dT%H:%M:%S%z" : "%Y-%m-%d %H:%M:%S", &tm) == 0)
		snprintf(buf, n, "?");
}

static void print_rows_json(const struct rows *rows)
{
	char started[64], value[32];

	fputs("[", stdout);
	for (size_t i = 0; i < rows->n; i++) {
		const struct row *r = &rows->v[i];
		const char *name = user_name(r->caller);

		format_time(r->started_us, 1, started, sizeof(started));
		printf("%s\n  {\"id\": \"%u.%u\", \"helper_pid\": %u, \"caller_uid\": %u, "
		       "\"caller\": ",
		       i == 0 ? "" : ",", r->helper, r->id, r->helper, r->caller);
		if (name != NULL)
			json_string(stdout, name);
		else
			fputs("null", stdout);
		printf(", \"guest_uid\": %u, \"pid\": %u, \"program\": ", r->uid, r->pid);
		json_string(stdout, r->program);
		printf(", \"started\": \"%s\", \"elapsed_s\": %" PRIu64 ", \"timeout_s\": ",
		       started, (now_us() - r->started_us) / 1000000);
		if (r->timeout_ms != 0)
			printf("%" PRIu64, r->timeout_ms / 1000);
		else
			fputs("null", stdout);
		printf(", \"network\": \"%s\", \"limits\": {",
		       r->network == ISO_NETWORK_NONE ? "none" : "host");
		for (int l = 0; l < ISO_LIMIT_COUNT; l++) {
			/* cpus in CPUs (1.5), as written everywhere else. */
			if (l == ISO_LIMIT_CPUS)
				iso_limit_format(l, r->limits[l], value, sizeof(value));
			else
				snprintf(value, sizeof(value), "%" PRIu64, r->limits[l]);
			printf("%s\"%s\": %s", l == 0 ? "" : ", ",
			       iso_limit_name((enum iso_limit)l),
			       r->limits[l] == UINT64_MAX ? "null" : value);
		}
		fputs("}}", stdout);
	}
	puts(rows->n == 0 ? "]" : "\n]");
}

static void print_rows(const struct rows *rows)
{
	char id[24], caller[64], started[32], elapsed[32], value[32];

	printf("%-12s %-20s %-10s %-8s %-19s %-9s %-7s %s\n", "ID", "CALLER", "UID", "PID",
	       "STARTED", "ELAPSED", "NETWORK", "PROGRAM");
	for (size_t i = 0; i < rows->n; i++) {
		const struct row *r = &rows->v[i];
		const char *name = user_name(r->caller);

		snprintf(id, sizeof(id), "%u.%u", r->helper, r->id);
		if (name != NULL)
			snprintf(caller, sizeof(caller), "%s(%u)", name, r->caller);
		else
			snprintf(caller, sizeof(caller), "%u", r->caller);
		format_time(r->started_us, 0, started, sizeof(started));
		format_elapsed(now_us() - r->started_us, elapsed, sizeof(elapsed));
		printf("%-12s %-20s %-10u %-8u %-19s %-9s %-7s %s\n", id, caller, r->uid, r->pid,
		       started, elapsed, r->network == ISO_NETWORK_NONE ? "none" : "host",
		       shown(r->program));
		fputs("             limits", stdout);
		for (int l = 0; l < ISO_LIMIT_COUNT; l++) {
			iso_limit_format(l, r->limits[l], value, sizeof(value));
			printf(" %s=%s", iso_limit_name((enum iso_limit)l), value);
		}
		if (r->timeout_ms != 0)
			printf(", timeout %" PRIu64 " s\n", r->timeout_ms / 1000);
		else
			puts(", no timeout");
	}
	if (rows->n == 0)
		puts("(no live guests)");
}

static int cmd_list(int argc, int json)
{
	struct rows rows = { 0 };

	if (argc != 0)
		die(EXIT_USAGE, "list takes no argument (see --help)");
	read_rows(&rows);
	if (json)
		print_rows_json(&rows);
	else
		print_rows(&rows);
	free_rows(&rows);
	return 0;
}

/* Root ends the guest itself, its whole namespace (record.h); then waits
 * until its helper has cleaned up (the record is gone). */
static void stop_as_root(const struct row *r)
{
	struct iso_wire_guest g = { .pid = r->pid, .start_ticks = r->start_ticks };
	static uint8_t buf[ISO_WIRE_MAX];
	static struct iso_wire_msg m;
	char path[sizeof(ISO_LEASE_DIR) + 16];

	if (iso_record_kill(&g) < 0)
		return; /* ended in the meantime */
	snprintf(path, sizeof(path), "%s/%u", ISO_LEASE_DIR, r->uid);
	for (int i = 0;
	     i < 100 && iso_record_read(path, buf, sizeof(buf), &m) == 1 && m.u.guest.pid == r->pid;
	     i++)
		usleep(100000);
}

static int cmd_stop(int argc, char **argv)
{
	struct rows rows = { 0 };
	const struct row *r = NULL;
	unsigned long helper = 0, id = 0, uid = 0;
	char *end;
	int by_id;

	if (argc != 1)
		die(EXIT_USAGE, "stop takes one ID (HELPER.N, as list shows it) or UID");
	by_id = strchr(argv[0], '.') != NULL;
	errno = 0;
	if (by_id) {
		helper = strtoul(argv[0], &end, 10);
		if (end != argv[0] && *end == '.')
			id = strtoul(end + 1, &end, 10);
	} else {
		uid = strtoul(argv[0], &end, 10);
	}
	if (argv[0][0] < '0' || argv[0][0] > '9' || *end != '\0' || errno != 0 ||
	    helper > UINT32_MAX || id > UINT32_MAX || uid > UINT32_MAX)
		die(EXIT_USAGE, "stop %s: expected HELPER.N (as list shows it) or a uid", argv[0]);
	read_rows(&rows);
	for (size_t i = 0; i < rows.n && r == NULL; i++)
		if (by_id ? rows.v[i].helper == helper && rows.v[i].id == id : rows.v[i].uid == uid)
			r = &rows.v[i];
	if (r == NULL)
		die(EXIT_PROBLEM, "no live guest %s%s", argv[0], geteuid() == 0 ? "" : " of yours");
	if (geteuid() == 0)
		stop_as_root(r);
	else
		query(ISO_MSG_STOP, r->uid, r->pid, add_row, &(struct rows){ 0 });
	printf("stopped %u.%u (uid %u, pid %u, %s)\n", r->helper, r->id, r->uid, r->pid,
	       shown(r->program));
	free_rows(&rows);
	return 0;
}

/* ---- rule ---- */

/* After a value the rule does not set itself: where it comes from. */
static const char *from(const struct iso_origin *o)
{
	return o->by == ISO_SET_RULE       ? ""
	       : o->by == ISO_SET_DEFAULTS ? " (from defaults)"
					   : " (built-in default)";
}

static void print_list(const char *key, char **words, const char *none, const struct iso_origin *o)
{
	printf("  %-13s ", key);
	put_words(words, none);
	printf("%s\n", from(o));
}

/* Every value the rule gives a guest, defaults included, and where each
 * one it does not set comes from. */
static void describe(const struct iso_rule *r)
{
	static const char *const forwarded[] = { ISO_FORWARDED_NAMES, NULL };
	static const char *const seccomp[] = { "default", "strict", "none" };
	static const char *const landlock[] = { "required", "optional", "off" };
	const struct iso_origin *at = r->at;
	char value[32];

	printf("rule at %s:%u, for %s%s\n", r->file, r->line, r->match_text,
	       r->match == ISO_MATCH_NOBODY ? " (no such account: it matches no one)" : "");
	printf("  %-13s %" PRIu32 "-%" PRIu32 " (%" PRIu64 " uids)\n", "pool", r->pool_first,
	       r->pool_last, (uint64_t)r->pool_last - r->pool_first + 1);
	printf("  %-13s %d at once, over all of a caller's connections%s\n", "guests",
	       r->guests_max, from(&at[ISO_KW_GUESTS]));
	print_list("programs", r->programs_any ? NULL : r->programs, "any", &at[ISO_KW_PROGRAMS]);
	print_list("overrides", r->overrides,
		   r->overrides != NULL ? "none" : "any name that is not loader-level",
		   &at[ISO_KW_OVERRIDES]);
	print_list("allow-unsafe", r->unsafe_allowed, "none", &at[ISO_KW_ALLOW_UNSAFE]);
	print_list("forward", r->forward != NULL ? r->forward : (char **)forwarded, "none",
		   &at[ISO_KW_FORWARD]);
	for (int i = 0; i < ISO_LIMIT_COUNT; i++) {
		iso_limit_format(i, r->ceiling[i], value, sizeof(value));
		printf("  limit %-7s %s%s\n", iso_limit_name((enum iso_limit)i), value,
		       from(&r->limit_at[i]));
	}
	if (r->timeout_max_ms != 0)
		printf("  %-13s at most %" PRIu64 " s; %" PRIu64 " s unless asked%s\n", "timeout",
		       r->timeout_max_ms / 1000, r->timeout_default_ms / 1000,
		       from(&at[ISO_KW_TIMEOUT]));
	else if (r->timeout_default_ms != 0)
		printf("  %-13s %" PRIu64 " s unless asked; no ceiling%s\n", "timeout",
		       r->timeout_default_ms / 1000, from(&at[ISO_KW_TIMEOUT]));
	else
		printf("  %-13s none, and no ceiling%s\n", "timeout", from(&at[ISO_KW_TIMEOUT]));
	printf("  %-13s %s%s\n", "network",
	       r->network_none_only                     ? "none (guests may not ask for host)"
	       : r->network_default == ISO_NETWORK_NONE ? "none (guests may ask for host)"
							: "host (guests may ask for none)",
	       from(&at[ISO_KW_NETWORK]));
	printf("  %-13s %s, a denied call %s%s\n", "seccomp", seccomp[r->seccomp],
	       r->seccomp_action == ISO_SECCOMP_KILL ? "kills the guest" : "fails with EPERM",
	       from(&at[r->at[ISO_KW_SECCOMP].by >= r->at[ISO_KW_SECCOMP_ACTION].by
			    ? ISO_KW_SECCOMP
			    : ISO_KW_SECCOMP_ACTION]));
	print_list("seccomp-deny", r->seccomp_deny, "none", &at[ISO_KW_SECCOMP_DENY]);
	printf("  %-13s %s, ABI %d or later%s\n", "landlock", landlock[r->landlock],
	       r->landlock_min_abi,
	       from(&at[r->at[ISO_KW_LANDLOCK].by >= r->at[ISO_KW_LANDLOCK_ABI].by
			    ? ISO_KW_LANDLOCK
			    : ISO_KW_LANDLOCK_ABI]));
	print_list("read", r->read, "none", &at[ISO_KW_READ]);
	print_list("write", r->write, "none", &at[ISO_KW_WRITE]);
	printf("  %-13s %s%s\n", "grants",
	       r->grants == ISO_GRANTS_READ_WRITE
		   ? "read-write (callers lend what they open, for reading or writing)"
	       : r->grants == ISO_GRANTS_READ ? "read (callers lend what they open, read-only)"
					      : "none (callers lend nothing)",
	       from(&at[ISO_KW_GRANTS]));
	printf("  %-13s %s%s\n", "cgroup",
	       r->cgroup == ISO_CGROUP_REQUIRED
		   ? "required (no caller is served without memory, pids and cpu)"
	       : r->cgroup == ISO_CGROUP_OFF ? "off (rlimits only)"
					     : "optional (rlimits only where the host has none)",
	       from(&at[ISO_KW_CGROUP]));
	printf("  %-13s ", "caller-limit");
	put_caller_limit(r, "none (each guest bounded alone)");
	if (r->at[ISO_KW_CALLER_LIMIT].by != ISO_SET_BUILTIN)
		fputs(", all of a caller's guests together", stdout);
	printf("%s\n", from(&at[ISO_KW_CALLER_LIMIT]));
}

/* The helper's RULE_TEXT (the defaults the rule inherits, then the rule),
 * parsed here as the helper parsed it. */
static void got_rule(const struct iso_wire_msg *m, void *arg)
{
	const struct iso_wire_rule_text *t = &m->u.rule_text;
	struct iso_policy *pol = arg;
	char why[WHY_MAX];

	if (policy_parse(t->text, strlen(t->text), t->file, pol, NULL, why, sizeof(why)) < 0 ||
	    pol->nrules != 1) {
		printf("rule at %s:%u, as written:\n%s\n", t->file, t->line, t->text);
		die(EXIT_PROBLEM, "cannot read it here: %s", why);
	}
	pol->rules[0].line = t->line;
}

static int cmd_rule(int argc, char **argv)
{
	struct iso_policy pol = { 0 };
	const struct iso_rule *r;
	gid_t groups[ISO_POLICY_RULES_MAX * 4];
	int ngroups = (int)(COUNT(groups));
	struct passwd *pw;
	char why[WHY_MAX];

	if (argc > 1)
		die(EXIT_USAGE, "rule takes at most one USER (see --help)");
	if (argc == 0) {
		query(ISO_MSG_RULE, 0, 0, got_rule, &pol);
		describe(&pol.rules[0]);
		policy_free(&pol);
		return 0;
	}
	/* Another user's rule: from the policy itself, which this user must
	 * be able to read. */
	if ((pw = getpwnam(argv[0])) == NULL)
		die(EXIT_PROBLEM, "no user %s", argv[0]);
	if (getgrouplist(pw->pw_name, pw->pw_gid, groups, &ngroups) < 0)
		die(EXIT_PROBLEM, "%s: more than %zu groups", argv[0], COUNT(groups));
	if (policy_load(ISO_POLICY_PATH, &pol, NULL, why, sizeof(why)) < 0)
		die(EXIT_PROBLEM, "%s", why);
	if ((r = policy_match(&pol, pw->pw_uid, pw->pw_gid, groups, (size_t)ngroups)) == NULL)
		die(EXIT_PROBLEM, "no rule in %s admits %s", ISO_POLICY_PATH, argv[0]);
	describe(r);
	policy_free(&pol);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int quiet = 0, json = 0, opt;
	const char *cmd;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "qhV", options, NULL)) != -1) {
		switch (opt) {
		case 'q':
			quiet = 1;
			break;
		case 'j':
			json = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("isospawnctl %s\n", PACKAGE_VERSION);
			return 0;
		default:
			die(EXIT_USAGE, "unknown option %s (see --help)", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		die(EXIT_USAGE, "no command given (see --help)");
	cmd = argv[optind++];
	if (json && strcmp(cmd, "list") != 0)
		die(EXIT_USAGE, "--json goes with list only");
	if (strcmp(cmd, "check") == 0)
		return cmd_check(argc - optind, argv + optind, quiet);
	if (strcmp(cmd, "list") == 0)
		return cmd_list(argc - optind, json);
	if (strcmp(cmd, "stop") == 0)
		return cmd_stop(argc - optind, argv + optind);
	if (strcmp(cmd, "rule") == 0)
		return cmd_rule(argc - optind, argv + optind);
	die(EXIT_USAGE, "unknown command '%s' (see --help)", cmd);
}
