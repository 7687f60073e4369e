/*
 * request.h - from a decoded SPAWN request to a plan: what the helper
 * decided to run.
 *
 * request_decide() (request.c) turns a decoded SPAWN plus the caller's rule
 * into a plan; everything after it (credentials, confinement, spawning)
 * reads only the plan, never the request. The helper decides once: its
 * reaper gets the plan as a PLAN message (plan_to_wire()) and takes it as
 * it is (plan_from_wire()), its values final.
 */
#ifndef ISO_REQUEST_H
#define ISO_REQUEST_H

#include <stdint.h>
#include <sys/types.h>

#include "policy.h"
#include "wire.h"

struct iso_plan {
	const char *program; /* absolute, normalized (points into req) */
	const char *const *argv; /* NULL-terminated (points into req) */
	char **envp; /* iso_build_env() result; owned, free();
				    * NULL in the reaper, which has the whole
				    * environment in its PLAN */
	uint64_t limits[ISO_LIMIT_COUNT]; /* effective values */
	uint64_t timeout_ms; /* 0 = none */
	int network_none; /* 1 = own network namespace */
	/* The request's grants, validated, in path order: a directory comes
	 * before what is below it, so that a grant inside another is
	 * mounted on it, not hidden by it. Each path once. */
	struct iso_grant {
		const char *path; /* in the guest's tree (into req) */
		int write; /* 1: read and write; 0: read only */
		unsigned fd_index; /* its descriptor's place among the request's
				    * grants: READ_PATHs, then WRITE_PATHs */
		int fd; /* that descriptor, once received, or -1 */
	} grants[2 * ISO_PATHS_MAX];
	size_t ngrants;
	const char *cwd; /* absolute, normalized, or NULL (into req) */
	int channel; /* ISO_CHANNEL_*: the guest's on fd 3, or none */
	uint32_t stdio_mask; /* which of 0-2 the caller gave */
	int stdio[3]; /* the reaper's: those, or /dev/null */
	/* Descriptors of the caller's the guest gets at their own numbers
	 * (3 and above, each once, never the channel's): the number, and the
	 * descriptor in the reaper (-1 before). */
	struct iso_pass {
		uint32_t num;
		int fd;
	} pass[ISO_PASS_FDS_MAX];
	size_t npass;
};

/*
 * Check a decoded SPAWN against the caller's rule and build the plan.
 * Returns 0, or -EACCES (policy refuses), -EINVAL (malformed), -E2BIG,
 * -ENOMEM, with a one-line reason naming what was refused. On failure
 * nothing is allocated. The stdio fds are not touched.
 */
int request_decide(const struct iso_rule *rule, const struct iso_wire_spawn *req,
		   struct iso_plan *plan, char *why, size_t n);

void plan_release(struct iso_plan *plan);

/*
 * The plan as its reaper gets it: every value final, the environment
 * whole (with TMPDIR=/tmp unless the caller's has one, and with a channel
 * ISOSPAWN_CHANNEL_FD=3), the grants in plan order. Its descriptors go
 * in the order wire.h says: stdio, grants, passed ones. Points into plan.
 */
void plan_to_wire(const struct iso_plan *plan, uid_t uid, struct iso_wire_plan *w);

/*
 * In the reaper: the plan from a decoded PLAN and the descriptors that
 * came with it (the stdio the caller did not give is devnull). Returns 0,
 * or -EBADMSG when they do not match.
 */
int plan_from_wire(const struct iso_wire_plan *w, const int *fds, size_t nfds, int devnull,
		   struct iso_plan *plan, char *why, size_t n);

#endif /* ISO_REQUEST_H */
