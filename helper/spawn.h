/*
 * spawn.h - start one guest: reaper in new namespaces, privilege drop,
 * confinement, exec.
 */
#ifndef ISO_SPAWN_H
#define ISO_SPAWN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "confine.h"
#include "plan.h"

/* Prepared once per connection, shared by every spawn. */
struct iso_spawn_ctx {
	const struct iso_confine *confine;
	int devnull;	  /* /dev/null, for stdio the caller did not give */
	int helper_pidfd; /* the helper itself: reapers check it is alive */
};

/* What the reaper tells the helper when the guest is gone. */
struct iso_report {
	uint32_t magic;
	uint32_t outcome; /* ISO_OUTCOME_EXITED, _SIGNALED or _FAILED */
	int32_t code;	  /* exit code, signal or errno */
	uint32_t stage;	  /* enum iso_stage for _FAILED */
	uint64_t user_us, sys_us, maxrss_kib;
	char reason[200]; /* for _FAILED: what went wrong (logged) */
};
#define ISO_REPORT_MAGIC 0x69736f72u

struct iso_child {
	pid_t pid;	/* the reaper, pid 1 of the guest's namespace */
	int pidfd;	/* its pidfd, readable once it has exited */
	int report_fd;	/* read end of the reaper's struct iso_report */
};

/*
 * Start the guest of `plan` under `uid` with cwd `scratch`; channel_fd (or
 * -1) becomes its fd 3. Returns 0 with *child filled, or -errno with a
 * reason: nothing is left running on failure.
 */
int spawn_guest(const struct iso_spawn_ctx *ctx, const struct iso_plan *plan,
		uid_t uid, const char *scratch, int channel_fd,
		struct iso_child *child, char *why, size_t n);

/* Read and check the reaper's report; 0, or -EIO when there is none. */
int spawn_read_report(int report_fd, struct iso_report *rep);

#endif /* ISO_SPAWN_H */
