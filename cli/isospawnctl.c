/*
 * isospawnctl - for administrators and callers: check the policy before it
 * bites (isospawnctl(8)).
 *
 *   isospawnctl check [-q] [FILE...]
 *
 * The policy is read with the helper's own parser (helper/policy.c), so
 * what this program accepts is exactly what the helper accepts. It runs
 * with the privileges of whoever started it; it is never setuid.
 *
 * Exit codes: 0 all is well; 1 a problem was found (an error in the
 * policy); 2 usage error.
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"

#define EXIT_PROBLEM 1
#define EXIT_USAGE 2
#define WHY_MAX 2048

__attribute__((format(printf, 2, 3), noreturn)) static void
die(int code, const char *fmt, ...)
{
	va_list ap;

	fputs("isospawnctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(code);
}

static void usage(FILE *f)
{
	fputs("usage: isospawnctl check [-q] [FILE...]\n"
	      "\n"
	      "  check [FILE...]  parse the policy (" ISO_POLICY_PATH " and\n"
	      "                   " ISO_POLICY_DIR "/*.conf, or the FILEs in order)\n"
	      "                   with the helper's parser; one line per rule\n"
	      "  -q, --quiet      print only problems\n"
	      "  -h, --help       show this help\n"
	      "  -V, --version    show the version\n"
	      "\n"
	      "Exit status: 0 fine, 1 a problem was found, 2 usage error.\n",
	      f);
}

/* ---- Describing a rule ---- */

/* A limit as isospawn.conf(5) writes it: 4G, 600, unlimited. */
static void format_limit(enum iso_limit which, uint64_t value, char *buf, size_t n)
{
	static const char suffixes[] = "KMGT";
	int in_bytes = which != ISO_LIMIT_CPU && which != ISO_LIMIT_NOFILE &&
		       which != ISO_LIMIT_NPROC;
	int s = 0;

	if (value == UINT64_MAX) {
		snprintf(buf, n, "unlimited");
		return;
	}
	while (in_bytes && s < 4 && value != 0 && value % 1024 == 0) {
		value /= 1024;
		s++;
	}
	if (s == 0)
		snprintf(buf, n, "%" PRIu64, value);
	else
		snprintf(buf, n, "%" PRIu64 "%c", value, suffixes[s - 1]);
}

static const char *network_word(const struct iso_rule *r)
{
	if (r->network_none_only)
		return "none-only";
	return r->network_default == ISO_NETWORK_NONE ? "none" : "host";
}

/* "FILE:LINE: who: pool ..., programs ..., network ..., limits ..., timeout ..." */
static void summarize(const struct iso_rule *r)
{
	char value[32];

	printf("%s:%u: %s: pool %" PRIu32 "-%" PRIu32 " (%" PRIu64 " uids), programs ", r->file,
	       r->line, r->match_text, r->pool_first, r->pool_last,
	       (uint64_t)r->pool_last - r->pool_first + 1);
	if (r->programs_any)
		fputs("any", stdout);
	for (char **p = r->programs; *p != NULL; p++)
		printf("%s%s", p == r->programs ? "" : " ", *p);
	printf(", network %s, limits", network_word(r));
	for (int i = 0; i < ISO_LIMIT_COUNT; i++) {
		format_limit((enum iso_limit)i, r->ceiling[i], value, sizeof(value));
		printf(" %s=%s", iso_limit_name((enum iso_limit)i), value);
	}
	if (r->timeout_max_ms == 0 && r->timeout_default_ms == 0)
		puts(", no timeout");
	else
		printf(", timeout %" PRIu64 " s (default %" PRIu64 " s)\n",
		       r->timeout_max_ms / 1000, r->timeout_default_ms / 1000);
}

/* The helper refuses a connection when a read or write path of the rule is
 * missing; say so now rather than at the first caller. */
static int warn_missing_paths(const struct iso_rule *r)
{
	char **lists[] = { r->read, r->write };
	const char *names[] = { "read", "write" };
	struct stat st;
	int problems = 0;

	for (int l = 0; l < 2; l++)
		for (char **p = lists[l]; *p != NULL; p++)
			if (stat(*p, &st) < 0) {
				fprintf(stderr,
					"%s:%u: warning: %s path %s: %s: callers of this rule are "
					"refused until it exists\n",
					r->file, r->line, names[l], *p, strerror(errno));
				problems++;
			}
	return problems;
}

/* ---- check ---- */

struct check {
	int quiet;
	int checked; /* ownership and modes checked (run as root) */
	char *seen[ISO_POLICY_DROPINS_MAX + 2]; /* errors already printed */
	size_t nseen;
	int errors;
};

static void report(struct check *c, const char *why)
{
	for (size_t i = 0; i < c->nseen; i++)
		if (strcmp(c->seen[i], why) == 0)
			return;
	fprintf(stderr, "%s\n", why);
	if (c->nseen < sizeof(c->seen) / sizeof(c->seen[0]))
		c->seen[c->nseen++] = strdup(why);
	c->errors++;
}

/* One file alone, for its own first error: one broken file must not hide
 * the errors of the others. */
static void check_alone(struct check *c, const char *path, int may_include)
{
	struct iso_policy one = { 0 };
	char why[WHY_MAX];

	if (policy_add_file(path, c->checked, may_include, &one, why, sizeof(why)) < 0)
		report(c, why);
	policy_free(&one);
}

/* The drop-ins of ISO_POLICY_DIR, each alone; warn when the policy does not
 * include them. */
static void check_dropins(struct check *c, const struct iso_policy *all, int loaded)
{
	char why[WHY_MAX], file[PATH_MAX + NAME_MAX + 2];
	struct dirent **list = NULL;
	int count = policy_dropins(ISO_POLICY_DIR, &list, why, sizeof(why));

	if (count < 0)
		report(c, why);
	for (int i = 0; i < count; i++) {
		snprintf(file, sizeof(file), "%s/%s", ISO_POLICY_DIR, list[i]->d_name);
		check_alone(c, file, 0);
		if (loaded && (all->include == NULL || strcmp(all->include, ISO_POLICY_DIR) != 0))
			fprintf(stderr, "%s: warning: not read: %s has no 'include %s'\n", file,
				ISO_POLICY_PATH, ISO_POLICY_DIR);
		free(list[i]);
	}
	free(list);
}

static int cmd_check(int argc, char **argv, int quiet)
{
	struct check c = { .quiet = quiet, .checked = geteuid() == 0 };
	struct iso_policy all = { 0 };
	char why[WHY_MAX];
	int rc = 0;

	if (argc == 0) {
		/* Exactly the helper's load: the main file and what it
		 * includes, pools apart across all of them. */
		rc = policy_add_file(ISO_POLICY_PATH, c.checked, 1, &all, why, sizeof(why));
		if (rc < 0)
			report(&c, why);
		check_dropins(&c, &all, rc == 0);
	} else {
		for (int i = 0; i < argc; i++)
			check_alone(&c, argv[i], 1);
		for (int i = 0; i < argc && rc == 0; i++)
			rc = policy_add_file(argv[i], c.checked, 1, &all, why, sizeof(why));
		if (rc < 0)
			report(&c, why);
	}
	for (size_t i = 0; i < all.nrules; i++) {
		if (!quiet)
			summarize(&all.rules[i]);
		warn_missing_paths(&all.rules[i]);
	}
	if (!c.checked)
		fprintf(stderr, "isospawnctl: not root: ownership and modes were not checked\n");
	if (c.errors == 0 && !quiet)
		printf("policy OK: %zu rule%s\n", all.nrules, all.nrules == 1 ? "" : "s");
	else if (c.errors > 0)
		fprintf(stderr, "isospawnctl: the policy is invalid: the helper refuses every "
			"caller until it is fixed\n");
	policy_free(&all);
	for (size_t i = 0; i < c.nseen; i++)
		free(c.seen[i]);
	return c.errors == 0 ? 0 : EXIT_PROBLEM;
}

int main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int quiet = 0, opt;

	opterr = 0;
	while ((opt = getopt_long(argc, argv, "qhV", options, NULL)) != -1) {
		switch (opt) {
		case 'q':
			quiet = 1;
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
	if (strcmp(argv[optind], "check") == 0)
		return cmd_check(argc - optind - 1, argv + optind + 1, quiet);
	die(EXIT_USAGE, "unknown command '%s' (see --help)", argv[optind]);
}
