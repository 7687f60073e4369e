/*
 * confine.h - seccomp, Landlock and resource limits for the guest.
 *
 * confine_prepare() runs once per helper process (per connection): it
 * puts the seccomp filter together (the rule's deny list before the
 * program compiled at build time), probes the Landlock ABI, and decides
 * whether the rule can be honoured at all on this kernel. The
 * confine_apply_* functions run for every guest, in the order spawner.c
 * calls them: in the reaper, still root, network, then ipc once
 * world_enter() has built the guest's tree; in the guest child after the
 * privilege drop, Landlock, fds, rlimits, seccomp, then the exec. Each
 * checks itself whether it has anything to do, and only loads what was
 * prepared: spawning a guest never compiles anything.
 */
#ifndef ISO_CONFINE_H
#define ISO_CONFINE_H

#include <stddef.h>

#include "request.h"
#include "policy.h"

struct sock_filter;

struct iso_confine {
	const struct iso_rule *rule;
	int landlock_abi; /* what the kernel reports, 0 = none */
	int landlock_on; /* 1 = apply Landlock to guests */
	struct sock_filter *bpf; /* prepared seccomp program, or NULL */
	size_t bpf_len; /* instructions */
	char notes[ISO_WIRE_TEXT_MAX]; /* degraded modes accepted, for the client */
};

/* The host's system paths in every guest's tree, NULL-terminated: world.c
 * binds them read-only, and every guest may read them. */
extern const char *const confine_system[];

/* The kernel's Landlock ABI version; 0 when unavailable, errno then saying
 * why: ENOSYS not built in, EOPNOTSUPP disabled at boot. */
int landlock_abi_version(void);

/*
 * Pure: may a rule with this Landlock mode and minimum ABI run on a kernel
 * reporting `abi`? Returns 1 apply Landlock with what the kernel has (for
 * OPTIONAL below the rule's ABI: *degraded set), 0 run without it (mode
 * OFF, or OPTIONAL on a kernel without Landlock: *degraded set), -ENOSYS
 * refuse (REQUIRED on a kernel without it or below the rule's ABI).
 */
int landlock_decide(enum iso_landlock_mode mode, int min_abi, int abi, int *degraded);

/* Pure: what a kernel reporting `abi` (0: none, `err` from
 * landlock_abi_version() saying why) lacks for a rule needing min_abi, as
 * text for a note or a refusal ("kernel ABI 3 is below the rule's 6, so no
 * TCP port rules (ABI 4), ..."). */
void landlock_gap(int abi, int err, int min_abi, char *buf, size_t n);

/*
 * Once per connection. Returns 0, or -ENOSYS when the kernel lacks a
 * mechanism the rule requires (Landlock, or a network namespace and
 * Landlock TCP rules for network none), -EINVAL for a syscall name in the
 * rule that seccomp-tables.h does not know, -ENOMEM; with a reason in why.
 * c->bpf is the caller's to free; the helper keeps it until it exits.
 */
int confine_prepare(const struct iso_rule *rule, struct iso_confine *c, char *why, size_t n);

/*
 * In the guest child, after the credentials drop, inside the guest's tree.
 * Each returns 0 or -errno and leaves a reason in why. program_fd is an
 * O_PATH fd of the program (read+execute), stdio the descriptors that will
 * become 0-2 (reopened through /dev/std*: their open mode's rights).
 * Landlock does nothing when the rule runs without it, seccomp nothing
 * without a filter.
 */
int confine_apply_rlimits(const struct iso_plan *plan, char *why, size_t n);
int confine_apply_landlock(const struct iso_confine *c, const struct iso_plan *plan, int program_fd,
			   const int stdio[3], char *why, size_t n);
int confine_apply_seccomp(const struct iso_confine *c, char *why, size_t n);

/* After Landlock, before the rlimits and seccomp: src[0..3] (or -1 for
 * closed) become fds 0-3, each of the plan's passed descriptors its
 * number, and every other descriptor is close-on-exec. The numbers it
 * places are all below confine_fds_floor(plan): a descriptor the guest
 * needs until the exec (its program's) must be at or above it. */
int confine_apply_fds(const int src[4], const struct iso_plan *plan, char *why, size_t n);
int confine_fds_floor(const struct iso_plan *plan);

/* In the reaper, still root: for "network none", a new network namespace
 * of its own with loopback up, so the guest still has 127.0.0.1 and
 * nothing else; for the host network, the caller's network namespace
 * (caller_net, -1 where it is the helper's). */
int confine_apply_network(const struct iso_plan *plan, int caller_net, char *why, size_t n);

/* In the reaper, still root, once its own /proc is mounted (world_enter):
 * SysV shared memory of the guest's IPC namespace at most its shm limit. */
int confine_apply_ipc(const struct iso_plan *plan, char *why, size_t n);

#endif /* ISO_CONFINE_H */
