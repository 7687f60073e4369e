/*
 * spawner.h - everything one guest takes and gives back: the lease of a pool
 * uid, its channel, the reaper in new namespaces with the guest's own tree,
 * the privilege drop, confinement and exec, and the cleanup after it.
 */
#ifndef ISO_SPAWN_H
#define ISO_SPAWN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cgroup.h"
#include "confine.h"
#include "creds.h"
#include "request.h"
#include "wire.h"

/* Prepared once per connection, shared by every spawn. */
struct iso_world;

/* One running guest, as spawn_start() leaves it. */
struct iso_child {
	pid_t pid; /* the reaper, pid 1 of the guest's namespace */
	int pidfd; /* its pidfd, readable once it has exited */
	int report_fd; /* to the reaper: its plan goes in, its channel and
			 * report come back */
	struct iso_lease lease; /* the guest's uid and the caller's slot */
	int cgroup_fd; /* its cgroup's directory (cgroup.c), or -1 */
	char cgroup[64]; /* and its path below the parent (cgroup.c) */
	int reported; /* its end read (spawn_report) and so told, the reaper
			 * not yet gone */
	char reason[200]; /* a failed start's reason, which EXITED carries */
};

struct iso_spawn_ctx {
	const struct iso_confine *confine; /* and through it, the rule */
	const struct iso_world *world; /* the template of the guest's tree */
	const struct iso_cgroup *cgroup; /* where the guests' cgroups go */
	int devnull; /* /dev/null, for stdio the caller did not give */
	int helper_pidfd; /* the helper itself: reapers check it is alive */
	uid_t caller; /* the caller, whose uid no guest may have */
	int caller_net; /* the caller's network namespace, or -1: the helper's */
	struct iso_given_uids given; /* the uids its guests gave back last */
	struct iso_child spare; /* a reaper waiting for its guest (pid 0: none);
				   * no lease until it has one */
	pid_t factory_pid; /* what clones the reapers (0: none yet) */
	int factory_fd; /* its socket */
};

/* Once per connection: what every spawn needs; *ctx is zero when called
 * (no spare). `confine`, `world` and `cgroup` are filled in later
 * (confine_prepare, world_prepare, cgroup_prepare), before the first spawn. Returns 0 or
 * -errno. */
int spawn_init(struct iso_spawn_ctx *ctx, const struct iso_confine *confine,
	       const struct iso_world *world, const struct iso_cgroup *cgroup, char *why, size_t n);

/*
 * Start the guest of `plan`, whose request carried the descriptors
 * fds[0..nfds) (stdio, grants, passed ones: wire.h): lease a pool uid for
 * the caller's slot slot_fd (caller_slot_take), which the guest holds
 * from then on, and hand the plan, as a PLAN with those descriptors, to
 * the spare, or to a reaper cloned now when there is none; with a
 * channel, take the caller's end. Returns 0 with *child filled and
 * *client_chan the caller's end of the channel (or -1); or -errno with a
 * reason, and then nothing is left running, leased, held or open. The
 * descriptors stay the caller's.
 */
int spawn_start(struct iso_spawn_ctx *ctx, const struct iso_plan *plan, int slot_fd, const int *fds,
		size_t nfds, struct iso_child *child, int *client_chan, char *why, size_t n);

/* Clone the next guest's reaper ahead of its request, if there is none and
 * a uid is free (spawner.c, reaper_main); quietly nothing otherwise. */
void spawn_spare(struct iso_spawn_ctx *ctx);

/*
 * The reaper's report is readable (child->report_fd): the guest and every
 * process it left are gone, though the reaper and the guest's namespaces
 * may still be going. Say how the guest ended in *ex (outcome, code,
 * stage, usage, what its cgroup counted and an OOM kill's limit_hit, a
 * failure's reason stored in child; not wall_us, nor the rlimits'
 * limit_hit), give its uid and slot back, and return 0; or -EIO when the
 * reaper died without a report (spawn_end() says what it can).
 */
int spawn_report(struct iso_spawn_ctx *ctx, struct iso_child *child, uint32_t id,
		 struct iso_wire_exited *ex);

/*
 * The reaper has exited, or was killed: wait for it, say how the guest
 * ended in *ex unless spawn_report() did, and give back what spawn_start()
 * took, its cgroup removed. `id` names the request in the log.
 */
void spawn_end(struct iso_spawn_ctx *ctx, struct iso_child *child, uint32_t id,
	       struct iso_wire_exited *ex);

/* End the guest now: its reaper, and everything in its cgroup. */
void spawn_kill(struct iso_child *child);

/* The connection ends: end the spare and the factory. */
void spawn_release(struct iso_spawn_ctx *ctx);

#endif /* ISO_SPAWN_H */
