/*
 * cgroup.h - a cgroup v2 leaf per guest, below a parent only root may
 * write: memory, pids and CPU bounded for the whole guest, what it used
 * counted, and the guest ended in one step (isospawn-helper(8), Resource
 * control).
 *
 *   PARENT/       the unit's delegated cgroup (socket mode), or the
 *                 policy's cgroup-parent, /sys/fs/cgroup/isospawn by
 *                 default (setuid mode)
 *     helper/     socket mode: the helper itself and its reaper factory
 *     PID.N/      one guest and its reaper: the helper PID's Nth
 *     caller-UID/ with the rule's caller-limit: what all of caller UID's
 *       PID.N/    guests together may hold, over its connections; only
 *                 leaves in it, made with the first, gone with the last
 */
#ifndef ISO_CGROUP_H
#define ISO_CGROUP_H

#include <stddef.h>
#include <sys/types.h>

#include "policy.h"
#include "request.h"
#include "wire.h"

struct iso_cgroup {
	int parent_fd; /* PARENT, or -1: guests run without a cgroup */
	unsigned have; /* the controllers enabled for the leaves, as bits
			 * 1 << ISO_LIMIT_MEMORY, PIDS, CPUS */
	char caller[24]; /* "caller-UID", where the leaves go, or "": PARENT */
	const uint64_t *caller_limit; /* its limits (the rule's caller-limit) */
};

/*
 * Once per connection, as root, before any reaper is cloned: find or make
 * the parent (policy_parent, NULL for the default; in socket mode the
 * unit's own cgroup, the helper then moved into its leaf "helper") and
 * enable the controllers below it, and, with the rule's caller-limit, in
 * PARENT/caller-UID (uid: the caller's). `root_started`: the helper ran as
 * root, not made root by the setuid bit. What is missing is added to
 * notes (notes_size bytes). Returns 0, also when guests run without a
 * cgroup or a controller; -ENOSYS with the reason when the rule says
 * 'cgroup required' and something is missing.
 */
int cgroup_prepare(const struct iso_rule *rule, uid_t uid, const char *policy_parent,
		   int root_started, struct iso_cgroup *cg, char *notes, size_t notes_size,
		   char *why, size_t n);

/*
 * For a reaper about to be cloned (a spare, while the helper is idle):
 * its leaf PARENT/PID.N (PARENT/caller-UID/PID.N, the caller's cgroup made
 * again if another helper of the caller's removed it), which the reaper is cloned into
 * (CLONE_INTO_CGROUP) and its guest inherits, bounded by the rule's
 * ceiling[] already, with an OOM kill that ends all of it. *leaf gets its
 * directory's descriptor and name (name_size bytes) its name; -1 and ""
 * without a cgroup. Returns 0 or -errno with a reason.
 */
int cgroup_leaf_make(const struct iso_cgroup *cg, const uint64_t *ceiling, int *leaf, char *name,
		     size_t name_size, char *why, size_t n);

/* The leaf's memory (and no swap), pids and cpus as limits[] (by enum
 * iso_limit) says, writing only those that differ from set[] (NULL: a
 * fresh leaf, none set): before the reaper gets its plan, the plan's
 * against the rule's. Nothing for leaf -1. Returns 0 or -errno with a
 * reason. */
int cgroup_leaf_limits(const struct iso_cgroup *cg, int leaf, const uint64_t *limits,
		       const uint64_t *set, char *why, size_t n);

/* Kill everything in the leaf `leaf` (-1: nothing), its reaper too:
 * cgroup.kill, Linux 5.14, one step with no race against a fork. */
void cgroup_kill(int leaf);

/*
 * The guest is gone, with everything it started: what its leaf counted
 * into *ex (cgroup, cg_cpu_us, cg_memory_peak, reached), an OOM kill as
 * the memory limit's (outcome LIMIT, limit_hit memory). Nothing without a
 * leaf.
 */
void cgroup_leaf_count(int leaf, struct iso_wire_exited *ex);

/* Its reaper is gone too: the leaf `name` goes, and *leaf is closed and
 * -1; so does the caller's cgroup if that was its last leaf. Nothing
 * without a leaf. */
void cgroup_leaf_remove(const struct iso_cgroup *cg, int *leaf, const char *name);

#endif /* ISO_CGROUP_H */
