/*
 * fuzz_request.c - libFuzzer target for the helper's decision
 * (request_decide(), helper/request.c): a datagram as the helper reads it
 * from the caller, decoded by the codec and, when it is a SPAWN, decided
 * against a rule of a fixed policy (below; the header's id picks the
 * rule). Built by `make fuzz`, run by scripts/fuzz; seeds in
 * fuzz/corpus/request.
 *
 * Properties (SECURITY.md 10, the caller gets what its rule grants and no
 * more): a refusal is one of the documented codes, carries a reason and
 * leaves nothing allocated; an accepted plan runs the requested program,
 * one the rule lists unless it allows any; every limit is positive and
 * within the rule's ceiling (the request's value where it set one, the
 * ceiling where not); the timeout is within the rule's ceiling and 366
 * days; a none-only rule's guest gets its own network; every read path is
 * in normal form beneath one the rule lets guests read or write, every
 * write path beneath one it lets them write; the environment holds each
 * name once, only PATH, TMPDIR, names the rule forwards that the request
 * forwarded, and overrides the request set that the rule allows, never a
 * loader-level name the rule neither allows by name nor forwards; each
 * passed descriptor's number once, never the channel's. And the plan
 * reaches the reaper as decided: through the codec (PLAN) and back
 * (plan_from_wire()) every value is the same, the environment whole.
 */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "policy.h"
#include "request.h"
#include "util.h"
#include "wire.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Pools far above any account. */
static const char policy_text[] = "rule user:#1000 {\n"
				  "	pool 1900000000-1900000009\n"
				  "	programs /usr/bin/python3 /bin/true\n"
				  "	overrides LANG TZ PATH\n"
				  "	forward LANG LC_ALL\n"
				  "	limit cpu 10\n"
				  "	limit as 1G\n"
				  "	timeout 60 5\n"
				  "	network none-only\n"
				  "	grants read-write\n"
				  "}\n"
				  "rule user:#1001 {\n"
				  "	pool 1900000010-1900000019\n"
				  "	programs any\n"
				  "	allow-unsafe LD_LIBRARY_PATH\n"
				  "	grants read\n"
				  "}\n"
				  "rule group:#2000 {\n"
				  "	pool 1900000020-1900000029\n"
				  "	programs any\n"
				  "	overrides none\n"
				  "	forward none\n"
				  "	network none\n"
				  "	timeout 3600\n"
				  "}\n";

static struct iso_policy policy;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char why[512];

	(void)argc;
	(void)argv;
	if (policy_parse(policy_text, sizeof(policy_text) - 1, "fuzz.conf", &policy, NULL, why,
			 sizeof(why)) < 0 ||
	    policy.nrules != 3) {
		fprintf(stderr, "fuzz_request: the fixed policy: %s\n", why);
		abort();
	}
	return 0;
}

/* Whether `list` (NULL-terminated, or NULL) holds name[0..len). */
static int listed(char *const *list, const char *name, size_t len)
{
	for (; list && *list; list++)
		if (strlen(*list) == len && memcmp(*list, name, len) == 0)
			return 1;
	return 0;
}

/* Whether the "NAME=value" strings of `list` (n of them) hold name[0..len). */
static int named(const char *const *list, uint32_t n, const char *name, size_t len)
{
	for (uint32_t i = 0; i < n; i++)
		if (strncmp(list[i], name, len) == 0 && list[i][len] == '=')
			return 1;
	return 0;
}

/* Each grant allowed by the rule, nowhere in the tree's own parts, in
 * strictly increasing path order (so each path once, and a directory
 * before what is below it), its descriptor's slot among the request's. */
static void check_paths(const struct iso_rule *r, const struct iso_wire_spawn *req,
			const struct iso_plan *plan)
{
	for (size_t i = 0; i < plan->ngrants; i++) {
		const struct iso_grant *g = &plan->grants[i];

		if (iso_path_check(g->path, ISO_PATH_ANY, NULL) < 0 || strcmp(g->path, "/") == 0 ||
		    iso_path_beneath(g->path, "/proc") || iso_path_beneath(g->path, "/dev") ||
		    iso_path_beneath(g->path, "/.iso") ||
		    r->grants < (g->write ? ISO_GRANTS_READ_WRITE : ISO_GRANTS_READ) ||
		    g->fd_index >= req->nread + req->nwrite || g->fd != -1 ||
		    strcmp(g->fd_index < req->nread ? req->read_paths[g->fd_index]
						    : req->write_paths[g->fd_index - req->nread],
			   g->path) != 0 ||
		    (i > 0 && strcmp(plan->grants[i - 1].path, g->path) >= 0))
			abort();
	}
}

static void check_env(const struct iso_rule *r, const struct iso_wire_spawn *req,
		      const struct iso_plan *plan)
{
	for (char **e = plan->envp; *e; e++) {
		const char *eq = strchr(*e, '=');
		size_t len;

		if (eq == NULL || eq == *e)
			abort();
		len = (size_t)(eq - *e);
		for (char **other = plan->envp; other < e; other++)
			if (strncmp(*other, *e, len + 1) == 0)
				abort(); /* a name twice */
		/* Loader-level only by allow-unsafe, or as a name the rule
		 * forwards (LD_LIBRARY_PATH, TMPDIR), which the caller's
		 * environment could carry anyway. */
		if (iso_env_is_unsafe_name(*e, len) && !listed(r->unsafe_allowed, *e, len) &&
		    !(iso_env_is_forwarded_name(*e, len) &&
		      (r->forward == NULL || listed(r->forward, *e, len))))
			abort();
		if (named(req->overrides, req->noverrides, *e, len) &&
		    (r->overrides == NULL || listed(r->overrides, *e, len)))
			continue;
		if (named(req->forward, req->nforward, *e, len) &&
		    iso_env_is_forwarded_name(*e, len) &&
		    (r->forward == NULL || listed(r->forward, *e, len)))
			continue;
		if ((len == 4 && memcmp(*e, "PATH", 4) == 0) ||
		    (len == 6 && memcmp(*e, "TMPDIR", 6) == 0))
			continue;
		abort(); /* a name nobody asked for, or the rule does not allow */
	}
}

static void check_plan(const struct iso_rule *r, const struct iso_wire_spawn *req,
		       const struct iso_plan *plan)
{
	if (plan->program != req->program || plan->argv != req->argv ||
	    iso_path_check(plan->program, ISO_PATH_FILE, NULL) < 0 ||
	    (!r->programs_any && !listed(r->programs, plan->program, strlen(plan->program))))
		abort();
	for (int i = 0; i < ISO_LIMIT_COUNT; i++)
		if (plan->limits[i] == 0 || plan->limits[i] > r->ceiling[i] ||
		    plan->limits[i] !=
			((req->limits_set & (1u << i)) ? req->limits[i] : r->ceiling[i]))
			abort();
	if (plan->timeout_ms > (uint64_t)ISO_POLICY_TIMEOUT_MAX * 1000 ||
	    (r->timeout_max_ms && plan->timeout_ms > r->timeout_max_ms) ||
	    (r->network_none_only && !plan->network_none) || plan->channel != (int)req->channel)
		abort();
	check_paths(r, req, plan);
	if (plan->cwd != req->cwd ||
	    (plan->cwd && iso_path_check(plan->cwd, ISO_PATH_ANY, NULL) < 0))
		abort();
	check_env(r, req, plan);
	for (size_t i = 0; i < plan->npass; i++)
		for (size_t j = 0; j < i; j++)
			if (plan->pass[j].num == plan->pass[i].num ||
			    (plan->pass[i].num == 3 && plan->channel))
				abort();
}

/* PLAN and back: what the reaper would run. */
static void check_crossing(const struct iso_plan *plan)
{
	static uint8_t buf[ISO_WIRE_MAX];
	static struct iso_wire_msg out, in;
	static int fds[ISO_FDS_MAX];
	struct iso_plan got;
	char why[256];
	size_t nfds = (size_t)__builtin_popcount(plan->stdio_mask) + plan->ngrants + plan->npass;
	uint32_t e = 0;
	long len;

	for (size_t i = 0; i < nfds; i++)
		fds[i] = (int)i + 100;
	out.type = ISO_MSG_PLAN;
	plan_to_wire(plan, 1900000001, &out.u.plan);
	len = iso_wire_encode(&out, buf, sizeof(buf));
	/* Only a request near the largest datagram may not fit whole. */
	if (len == -E2BIG)
		return;
	if (len <= 0 || iso_wire_decode(buf, (size_t)len, &in, why, sizeof(why)) != 0 ||
	    in.type != ISO_MSG_PLAN || in.u.plan.uid != 1900000001 ||
	    plan_from_wire(&in.u.plan, fds, nfds, 99, &got, why, sizeof(why)) != 0)
		abort();
	if (strcmp(got.program, plan->program) != 0 ||
	    memcmp(got.limits, plan->limits, sizeof(got.limits)) != 0 ||
	    got.timeout_ms != plan->timeout_ms || got.network_none != plan->network_none ||
	    got.channel != plan->channel || got.ngrants != plan->ngrants ||
	    got.npass != plan->npass || (got.cwd == NULL) != (plan->cwd == NULL) ||
	    (got.cwd && strcmp(got.cwd, plan->cwd) != 0))
		abort();
	for (size_t i = 0; plan->argv[i] || got.argv[i]; i++)
		if (!plan->argv[i] || !got.argv[i] || strcmp(plan->argv[i], got.argv[i]) != 0)
			abort();
	for (size_t t = 0; t < got.ngrants; t++)
		if (strcmp(got.grants[t].path, plan->grants[t].path) != 0 ||
		    got.grants[t].write != plan->grants[t].write)
			abort();
	for (size_t i = 0; i < got.npass; i++)
		if (got.pass[i].num != plan->pass[i].num)
			abort();
	/* The decided environment, then only TMPDIR and the channel's. */
	for (; plan->envp[e]; e++)
		if (e >= in.u.plan.nenv || strcmp(plan->envp[e], in.u.plan.envp[e]) != 0)
			abort();
	for (; e < in.u.plan.nenv; e++)
		if (strcmp(in.u.plan.envp[e], "TMPDIR=/tmp") != 0 &&
		    strcmp(in.u.plan.envp[e], "ISOSPAWN_CHANNEL_FD=3") != 0)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct iso_wire_msg msg;
	const struct iso_rule *rule;
	struct iso_plan plan;
	char why[512] = "";
	int rc;

	if (iso_wire_decode(data, size, &msg, why, sizeof(why)) != 0 || msg.type != ISO_MSG_SPAWN)
		return 0;
	why[0] = '\0';
	rule = &policy.rules[msg.id % policy.nrules];
	rc = request_decide(rule, &msg.u.spawn, &plan, why, sizeof(why));
	if (rc < 0) {
		if ((rc != -EACCES && rc != -EINVAL && rc != -E2BIG && rc != -ENOMEM) ||
		    why[0] == '\0' || plan.envp != NULL)
			abort();
		return 0;
	}
	if (rc != 0 || plan.envp == NULL)
		abort();
	check_plan(rule, &msg.u.spawn, &plan);
	check_crossing(&plan);
	plan_release(&plan);
	return 0;
}
