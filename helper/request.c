/*
 * request.c - decide whether a decoded SPAWN request may run, and how; and
 * the decided plan to and from the wire, for the reaper.
 *
 * The request has passed the codec (well-formed, bounded); here it meets
 * the caller's rule. Every refusal names what was refused in the caller's
 * terms (a limit as the policy spells it, a timeout in seconds) and the
 * line of the policy that decides it, with the keyword that would allow
 * it (policy_where()); a refused request allocates nothing and changes
 * nothing.
 */

/* Room for "FILE:LINE (KEYWORD)". */
#define WHERE_MAX (PATH_MAX + 64)
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "request.h"
#include "util.h"

/* Whether `list` holds s, or with `beneath` a directory s is beneath. */
static int in_list(const char *const *list, const char *s, int beneath)
{
	for (; list && *list; list++)
		if (beneath ? iso_path_beneath(s, *list) : strcmp(*list, s) == 0)
			return 1;
	return 0;
}

/* The tree's own parts, made for each guest: no grant goes there. Its
 * /proc in particular holds the files root writes for each guest. */
static const char *const reserved[] = { "/proc", "/dev", "/.iso", NULL };

/* A grant lends the object the caller opened; the rule says whether it
 * may lend at all, and for writing. Where it shows in the tree is the
 * caller's to choose, but for the tree's root and own parts. */
static int check_grants(const struct iso_rule *rule, const char *const *paths, int write, char *why,
			size_t n)
{
	const char *kind = write ? "write" : "read";
	char where[WHERE_MAX];

	for (; *paths; paths++) {
		const char *p = *paths;

		if (iso_path_check(p, ISO_PATH_ANY, NULL) < 0)
			return iso_why(why, n, EINVAL,
				       "%s grant path must be absolute without "
				       "'.' or '..' components",
				       kind);
		if (strcmp(p, "/") == 0 || in_list(reserved, p, 1))
			return iso_why(why, n, EINVAL,
				       "%s grant %s: the guest's tree keeps /, /proc, "
				       "/dev and /.iso for itself",
				       kind, p);
		if (rule->grants < (write ? ISO_GRANTS_READ_WRITE : ISO_GRANTS_READ))
			return iso_why(why, n, EACCES, "%s grant of %s not allowed by %s", kind, p,
				       policy_where(rule, ISO_KW_GRANTS, 0, where, sizeof(where)));
	}
	return 0;
}

static int by_path(const void *a, const void *b)
{
	return strcmp(((const struct iso_grant *)a)->path, ((const struct iso_grant *)b)->path);
}

/* One list of the request's grants in path order (a prefix sorts before
 * what extends it), a path granted twice the same way once; twice in two
 * ways is refused, since which would win is no one's guess to make. */
static int order_grants(const struct iso_wire_spawn *req, struct iso_plan *plan, char *why,
			size_t n)
{
	size_t ndistinct = 0;

	for (const char *const *p = req->read_paths; *p; p++, plan->ngrants++)
		plan->grants[plan->ngrants] = (struct iso_grant){ *p, 0, plan->ngrants, -1 };
	for (const char *const *p = req->write_paths; *p; p++, plan->ngrants++)
		plan->grants[plan->ngrants] = (struct iso_grant){ *p, 1, plan->ngrants, -1 };
	qsort(plan->grants, plan->ngrants, sizeof(*plan->grants), by_path);
	for (size_t i = 0; i < plan->ngrants; i++) {
		const struct iso_grant *g = &plan->grants[i];

		if (ndistinct > 0 && strcmp(plan->grants[ndistinct - 1].path, g->path) == 0) {
			if (plan->grants[ndistinct - 1].write != g->write)
				return iso_why(why, n, EINVAL,
					       "%s is granted both for reading and "
					       "for writing",
					       g->path);
			continue;
		}
		plan->grants[ndistinct++] = *g;
	}
	plan->ngrants = ndistinct;
	return 0;
}

/* Each number once (the same descriptor twice is the caller's slip, two
 * at one number no one's to choose between), never the channel's. */
static int decide_passes(const struct iso_wire_spawn *req, struct iso_plan *plan, char *why,
			 size_t n)
{
	for (uint32_t i = 0; i < req->npass; i++) {
		uint32_t num = req->pass_fds[i];

		if (num == 3 && req->channel != ISO_CHANNEL_NONE)
			return iso_why(why, n, EINVAL, "pass-fd 3: the guest's channel is fd 3");
		for (size_t j = 0; j < plan->npass; j++)
			if (plan->pass[j].num == num)
				return iso_why(why, n, EINVAL, "pass-fd %u: given twice", num);
		plan->pass[plan->npass++] = (struct iso_pass){ num, -1 };
	}
	return 0;
}

/* Milliseconds as the API's seconds: "90", "1.5". */
static const char *seconds(uint64_t ms, char *buf, size_t n)
{
	int len = snprintf(buf, n, "%llu.%03llu", (unsigned long long)(ms / 1000),
			   (unsigned long long)(ms % 1000));

	while (buf[len - 1] == '0')
		buf[--len] = '\0';
	if (buf[len - 1] == '.')
		buf[len - 1] = '\0';
	return buf;
}

static int decide_limits(const struct iso_rule *rule, const struct iso_wire_spawn *req,
			 struct iso_plan *plan, char *why, size_t n)
{
	char asked[32], ceiling[32], where[WHERE_MAX];

	for (int i = 0; i < ISO_LIMIT_COUNT; i++) {
		plan->limits[i] = rule->ceiling[i];
		if (!(req->limits_set & (1u << i)))
			continue;
		/* As in the policy: 0 is no value. A tmpfs of size 0 (scratch,
		 * shm) would even be unbounded; cpus has the kernel's least
		 * quota. */
		if (req->limits[i] < iso_limit_min(i)) {
			iso_limit_format(i, req->limits[i], asked, sizeof(asked));
			iso_limit_format(i, iso_limit_min(i), ceiling, sizeof(ceiling));
			return iso_why(why, n, EINVAL, "limit %s=%s: expected at least %s",
				       iso_limit_name((enum iso_limit)i), asked, ceiling);
		}
		/* Refuse rather than lower: a guest silently given less than
		 * it asked for fails later in a way nobody can explain. */
		if (req->limits[i] > rule->ceiling[i]) {
			iso_limit_format(i, req->limits[i], asked, sizeof(asked));
			iso_limit_format(i, rule->ceiling[i], ceiling, sizeof(ceiling));
			return iso_why(why, n, EACCES,
				       "limit %s=%s is above the ceiling %s=%s of %s",
				       iso_limit_name((enum iso_limit)i), asked,
				       iso_limit_name((enum iso_limit)i), ceiling,
				       policy_where(rule, ISO_KW_LIMIT, i, where, sizeof(where)));
		}
		plan->limits[i] = req->limits[i];
	}
	/* No timeout at all: only where the rule sets no ceiling. */
	if (req->timeout_ms == ISO_TIMEOUT_NONE) {
		plan->timeout_ms = 0;
		return rule->timeout_max_ms == 0
			   ? 0
			   : iso_why(why, n, EACCES,
				     "no timeout is not allowed by %s: its timeout is at "
				     "most %s s",
				     policy_where(rule, ISO_KW_TIMEOUT, 0, where, sizeof(where)),
				     seconds(rule->timeout_max_ms, ceiling, sizeof(ceiling)));
	}
	/* The policy's own bound on timeouts (366 days) also bounds a rule
	 * without a ceiling, so deadlines cannot overflow. */
	if (req->timeout_ms > (uint64_t)ISO_POLICY_TIMEOUT_MAX * 1000)
		return iso_why(why, n, EINVAL, "timeout %s s is longer than 366 days",
			       seconds(req->timeout_ms, asked, sizeof(asked)));
	if (rule->timeout_max_ms && req->timeout_ms > rule->timeout_max_ms)
		return iso_why(why, n, EACCES, "timeout %s s is above the ceiling %s s of %s",
			       seconds(req->timeout_ms, asked, sizeof(asked)),
			       seconds(rule->timeout_max_ms, ceiling, sizeof(ceiling)),
			       policy_where(rule, ISO_KW_TIMEOUT, 0, where, sizeof(where)));
	/* Under a ceiling the policy's DEFAULT is 1 s to the ceiling. */
	plan->timeout_ms = req->timeout_ms ? req->timeout_ms : rule->timeout_default_ms;
	return 0;
}

/* The environment's refusals end "by policy" (env.c): here, the line of
 * it, with the keyword that would allow the variable. */
static int env_refusal(const struct iso_rule *rule, int rc, char *why, size_t n)
{
	static const struct {
		const char *says;
		enum iso_keyword kw;
	} by[] = {
		{ "loader-level variable not allowed by policy", ISO_KW_ALLOW_UNSAFE },
		{ "not forwarded by policy", ISO_KW_FORWARD },
		{ "not allowed by policy", ISO_KW_OVERRIDES },
		{ "unless the policy lists it", ISO_KW_OVERRIDES },
	};
	size_t len = strlen(why);
	char where[WHERE_MAX];

	for (size_t i = 0; i < COUNT(by); i++) {
		size_t says = strlen(by[i].says);

		if (len >= says && strcmp(why + len - says, by[i].says) == 0) {
			snprintf(why + len, n - len, ": %s",
				 policy_where(rule, by[i].kw, 0, where, sizeof(where)));
			break;
		}
	}
	return rc == -EPERM ? -EACCES : rc;
}

int request_decide(const struct iso_rule *rule, const struct iso_wire_spawn *req,
		   struct iso_plan *plan, char *why, size_t n)
{
	char where[WHERE_MAX];
	struct iso_env_rules env_rules = {
		.forward = (const char *const *)rule->forward,
		.overrides = (const char *const *)rule->overrides,
		.unsafe_allowed = (const char *const *)rule->unsafe_allowed,
	};
	int rc;

	*plan = (struct iso_plan){ .stdio = { -1, -1, -1 } };

	if (iso_path_check(req->program, ISO_PATH_FILE, NULL) < 0)
		return iso_why(why, n, EINVAL,
			       "program must be an absolute path without '.' or '..' components");
	if (!rule->programs_any && !in_list((const char *const *)rule->programs, req->program, 0))
		return iso_why(why, n, EACCES, "program %s is not allowed by %s", req->program,
			       policy_where(rule, ISO_KW_PROGRAMS, 0, where, sizeof(where)));
	if ((rc = decide_limits(rule, req, plan, why, n)) < 0)
		return rc;

	if (req->network == ISO_NETWORK_HOST && rule->network_none_only)
		return iso_why(why, n, EACCES, "network host is not allowed by %s",
			       policy_where(rule, ISO_KW_NETWORK, 0, where, sizeof(where)));
	plan->network_none =
	    req->network == ISO_NETWORK_NONE ||
	    (req->network == ISO_NETWORK_DEFAULT && rule->network_default == ISO_NETWORK_NONE);

	if ((rc = check_grants(rule, req->read_paths, 0, why, n)) < 0 ||
	    (rc = check_grants(rule, req->write_paths, 1, why, n)) < 0 ||
	    (rc = order_grants(req, plan, why, n)) < 0)
		return rc;
	if (req->cwd && iso_path_check(req->cwd, ISO_PATH_ANY, NULL) < 0)
		return iso_why(why, n, EINVAL,
			       "working directory must be absolute without '.' "
			       "or '..' components");
	if ((rc = decide_passes(req, plan, why, n)) < 0)
		return rc;

	/* Strict: what the client forwards must already be allow-listed. */
	rc = iso_build_env(req->forward, req->overrides, &env_rules,
			   ISO_ENV_STRICT_SOURCE |
			       (rule->programs_any ? 0 : ISO_ENV_PROGRAMS_RESTRICTED),
			   &plan->envp, why, n);
	if (rc < 0)
		return env_refusal(rule, rc, why, n);

	plan->program = req->program;
	plan->argv = req->argv;
	plan->cwd = req->cwd;
	plan->channel = (int)req->channel;
	plan->stdio_mask = req->stdio_mask;
	return 0;
}

void plan_release(struct iso_plan *plan)
{
	free(plan->envp);
	plan->envp = NULL;
}

void plan_to_wire(const struct iso_plan *plan, uid_t uid, struct iso_wire_plan *w)
{
	int have_tmpdir = 0;

	w->uid = (uint32_t)uid;
	w->program = plan->program;
	for (w->argc = 0; plan->argv[w->argc]; w->argc++)
		w->argv[w->argc] = plan->argv[w->argc];
	w->argv[w->argc] = NULL;
	/* iso_build_env() leaves room: at most every forwarded name, PATH
	 * and the overrides. */
	for (w->nenv = 0; plan->envp[w->nenv]; w->nenv++) {
		w->envp[w->nenv] = plan->envp[w->nenv];
		have_tmpdir |= strncmp(plan->envp[w->nenv], "TMPDIR=", 7) == 0;
	}
	if (!have_tmpdir)
		w->envp[w->nenv++] = "TMPDIR=/tmp"; /* its own */
	if (plan->channel)
		w->envp[w->nenv++] = ISO_ENV_CHANNEL_NAME "=3";
	w->envp[w->nenv] = NULL;
	memcpy(w->limits, plan->limits, sizeof(w->limits));
	w->limits_set = (1u << ISO_LIMIT_COUNT) - 1;
	w->timeout_ms = plan->timeout_ms;
	w->network = plan->network_none ? ISO_NETWORK_NONE : ISO_NETWORK_HOST;
	w->grants_write = 0;
	for (w->ngrants = 0; w->ngrants < plan->ngrants; w->ngrants++) {
		w->grants[w->ngrants] = plan->grants[w->ngrants].path;
		if (plan->grants[w->ngrants].write)
			w->grants_write |= UINT64_C(1) << w->ngrants;
	}
	w->grants[w->ngrants] = NULL;
	w->cwd = plan->cwd;
	w->channel = (uint32_t)plan->channel;
	w->stdio_mask = plan->stdio_mask;
	for (w->npass = 0; w->npass < plan->npass; w->npass++)
		w->pass_fds[w->npass] = plan->pass[w->npass].num;
}

int plan_from_wire(const struct iso_wire_plan *w, const int *fds, size_t nfds, int devnull,
		   struct iso_plan *plan, char *why, size_t n)
{
	size_t f = 0, want = (size_t)__builtin_popcount(w->stdio_mask) + w->ngrants + w->npass;

	if (nfds != want)
		return iso_why(why, n, EBADMSG, "the plan names %zu descriptors but carries %zu",
			       want, nfds);
	if (w->limits_set != (1u << ISO_LIMIT_COUNT) - 1)
		return iso_why(why, n, EBADMSG, "the plan lacks a limit");
	*plan = (struct iso_plan){
		.program = w->program,
		.argv = w->argv,
		.timeout_ms = w->timeout_ms,
		.network_none = w->network == ISO_NETWORK_NONE,
		.ngrants = w->ngrants,
		.cwd = w->cwd,
		.channel = (int)w->channel,
		.stdio_mask = w->stdio_mask,
		.npass = w->npass,
	};
	memcpy(plan->limits, w->limits, sizeof(plan->limits));
	for (int i = 0; i < 3; i++)
		plan->stdio[i] = w->stdio_mask & (1u << i) ? fds[f++] : devnull;
	for (size_t t = 0; t < w->ngrants; t++)
		plan->grants[t] = (struct iso_grant){ w->grants[t], (int)(w->grants_write >> t & 1),
						      (unsigned)t, fds[f++] };
	for (size_t i = 0; i < w->npass; i++)
		plan->pass[i] = (struct iso_pass){ w->pass_fds[i], fds[f++] };
	return 0;
}
