/*
 * request.h - from a decoded SPAWN request to a plan: what the helper
 * decided to run.
 *
 * request_decide() (request.c) turns a decoded SPAWN plus the caller's rule
 * into a plan; everything after it (credentials, confinement, spawning)
 * reads only the plan, never the request.
 */
#ifndef ISO_REQUEST_H
#define ISO_REQUEST_H

#include <stdint.h>
#include <sys/types.h>

#include "policy.h"
#include "wire.h"

struct iso_plan {
	const char *program;	   /* absolute, normalized (points into req) */
	const char *const *argv;   /* NULL-terminated (points into req) */
	char **envp;		   /* iso_build_env() result; owned, free() */
	uint64_t limits[ISO_LIMIT_COUNT]; /* effective values */
	uint64_t timeout_ms;	   /* 0 = none */
	int network_none;	   /* 1 = own network namespace */
	/* The request's grants, validated, in path order: a directory comes
	 * before what is below it, so that a grant inside another is
	 * mounted on it, not hidden by it. Each path once. */
	struct iso_grant {
		const char *path; /* in the guest's tree (into req) */
		int write;	  /* 1: read and write; 0: read only */
		unsigned slot;	  /* its descriptor's place among the request's
				   * grants: READ_PATHs, then WRITE_PATHs */
		int fd;		  /* that descriptor, once received, or -1 */
	} grants[2 * ISO_PATHS_MAX];
	size_t ngrants;
	const char *cwd;	   /* absolute, normalized, or NULL (into req) */
	int channel;		   /* ISO_CHANNEL_*: the guest's on fd 3, or none */
	int stdio[3];		   /* fds received with the request, or -1 */
};

/*
 * Check a decoded SPAWN against the caller's rule and build the plan.
 * Returns 0, or -EACCES (policy refuses), -EINVAL (malformed), -E2BIG,
 * -ENOMEM, with a one-line reason naming what was refused. On failure
 * nothing is allocated. The stdio fds are not touched.
 */
int request_decide(const struct iso_rule *rule,
		   const struct iso_wire_spawn *req, struct iso_plan *plan,
		   char *why, size_t n);

void plan_release(struct iso_plan *plan);

#endif /* ISO_REQUEST_H */
