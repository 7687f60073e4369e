/*
 * creds.h - who the caller is, which pool uid a guest gets, and the
 * irreversible drop to it.
 */
#ifndef ISO_CREDS_H
#define ISO_CREDS_H

#include <stddef.h>
#include <sys/types.h>

#include "policy.h"

#define ISO_CALLER_GROUPS_MAX 256

struct iso_caller {
	uid_t uid; /* who ran the setuid helper, or the socket's peer */
	gid_t gid;
	gid_t groups[ISO_CALLER_GROUPS_MAX];
	size_t ngroups;
	/* The caller's mount and network namespaces where they are not the
	 * helper's (a peer of isospawn.socket in a unit's own), or -1: a
	 * guest's tree is built from the caller's mounts, its host network
	 * is the caller's, so that it sees no more than its caller. */
	int mnt_ns, net_ns;
};

/*
 * Made root by the setuid bit, the caller is the helper's real uid/gid and
 * supplementary groups, and the socket's SO_PEERCRED must name the same
 * uid; its namespaces are the helper's own. Started as root
 * (isospawn.socket, or by root), the caller is the socket's peer:
 * SO_PEERCRED, SO_PEERGROUPS, and the namespaces of the process that
 * connected (one of a user namespace of the caller's own is refused). Then
 * the helper is root in all its uids and gids, with no groups. Returns 0
 * or -EPERM/-errno; -EPERM when the helper is not running as root
 * (libclient says why).
 */
int caller_identify(int sock, struct iso_caller *caller, char *why, size_t n);

/*
 * A leased pool uid: held while lock_fd holds an exclusive flock on
 * ISO_STATE_DIR/leases/<uid>, so no other helper can lease it, and with it
 * one of the caller's guest slots (slot_fd); the kernel drops both locks
 * if the helper dies.
 */
struct iso_lease {
	uid_t uid;
	int lock_fd;
	int slot_fd;
};

#define ISO_GIVEN_UIDS 16 /* uids a connection remembers giving back */

/*
 * The uids a connection gave back last, which it takes first again: one
 * whose lease file still holds the connection's mark has had no lease
 * since (a lease erases it), so it is not swept again, as if the
 * connection had never given it back, though any helper could take it
 * meanwhile.
 */
struct iso_given_uids {
	uint64_t mark; /* the connection's; 0: none */
	uid_t uids[ISO_GIVEN_UIDS]; /* newest first; 0: none */
};

/* Check every directory above ISO_STATE_DIR as the policy's, then create
 * (or verify) the root-only state directories. */
int state_prepare(char *why, size_t n);

/*
 * Whether pool id `id` of `rule` is no account's: no user has it as its
 * uid and no group as its gid, as the C library's account services answer
 * (directory users too, which enumeration misses). Returns 0, or -EACCES
 * naming it (an administrator's error, logged as one), also when the
 * lookup fails.
 */
int pool_id_not_an_account(uid_t id, const struct iso_rule *rule, char *why, size_t n);

/*
 * Lease a free uid of the rule's pool, never the caller's, for the slot
 * lease->slot_fd of the caller's (caller_slot_take), which the lease holds
 * from then on: one of `given` (NULL: none) if one is free, else any;
 * every process whose real or saved uid it is gets killed first, and it is
 * checked to be no account's, unless it comes back unleased since (struct
 * iso_given_uids). Returns 0; or
 * -EAGAIN when every uid of the pool is leased, -EACCES when the uid it
 * took is an account's (pool_id_not_an_account), or -errno, and then the
 * slot is given back.
 */
int lease_acquire(const struct iso_rule *rule, uid_t caller, struct iso_lease *lease,
		  const struct iso_given_uids *given, char *why, size_t n);

/*
 * One of the caller's `max` slots of `what` (ISO_STATE_DIR/callers/UID.whatN),
 * held by an exclusive flock on the returned descriptor: every helper of
 * the caller takes from the same slots, so the caller never holds more than
 * `max`; the kernel drops the lock if the helper dies. The files stay (one
 * removed while another helper opens it would let two hold the same slot).
 * Returns the descriptor, -EAGAIN when all are held, or -errno.
 */
int caller_slot_take(uid_t caller, const char *what, uint32_t max, char *why, size_t n);

/* Give back the slot `fd` (caller_slot_take), and wake those who wait for
 * one (caller_slot_watch). */
void caller_slot_give(int fd);

/* An inotify descriptor (non-blocking) that becomes readable when a slot
 * of any caller's is given back; or -EAGAIN with a reason. */
int caller_slot_watch(char *why, size_t n);

/* Read what `watch` has: 1 if a slot of `what` of the caller's was among
 * the slots given back (or may have been), else 0. */
int caller_slot_given(int watch, uid_t caller, const char *what);

/* Give the uid and its slot back, once for each lease_acquire(): only once
 * no process a guest started under it can be left (every guest's reaper
 * waited for); with `given`, marked and remembered there. */
void lease_release(struct iso_lease *lease, struct iso_given_uids *given);

/*
 * In a child, still root: become uid/gid (gid = uid) with no supplementary
 * groups, verify all three ids and that uid 0 cannot be regained, and set
 * no_new_privs. Returns 0 or -errno with the step that failed.
 */
int creds_drop(uid_t uid, char *why, size_t n);

#endif /* ISO_CREDS_H */
