/*
 * hygiene.h - make the helper's own process state known before trusting
 * anything: it inherits everything else from a possibly hostile caller.
 */
#ifndef ISO_HYGIENE_H
#define ISO_HYGIENE_H

#include <stddef.h>

/* Helper exit codes (isospawn-helper(8)). */
#define ISO_HELPER_EXIT_OK 0 /* the client closed the connection */
#define ISO_HELPER_EXIT_REFUSED 1 /* refused at start-up, reason given */
#define ISO_HELPER_EXIT_FAILED 2 /* internal failure while serving */

/*
 * Everything from the helper's start-up that does not need the policy:
 * forget the environment, make fds 0-2 safe, check that ISO_HELPER_FD is an AF_UNIX
 * SOCK_SEQPACKET socket, close every other fd, reset signals, resource
 * limits, umask and cwd, and stay non-dumpable. Returns 0 or -errno with a
 * reason; on failure the helper cannot talk to its client.
 */
int hygiene_start(char *why, size_t n);

/* Once the caller is known: refuse to serve in a cgroup that someone
 * other than root could freeze the helper in (cgroup v2, and v1's
 * freezer). Returns 0, or -EPERM naming the file, or -errno. */
int hygiene_cgroup(char *why, size_t n);

/* Whether the cgroup v2 directory `cgroup` (below /sys/fs/cgroup: "" is
 * its root, "/isospawn" one below) and each above it let no one but root
 * move or freeze what is below them, as hygiene_cgroup() checks the
 * helper's own. Returns 0, or -EPERM naming the file, or -errno. */
int hygiene_cgroup_above(const char *cgroup, char *why, size_t n);

/* Once the caller is known (its uid gone from the helper's): nothing of
 * the scheduler beyond an ordinary process's (a real-time policy or I/O
 * class, a negative nice or oom_score_adj) for the helper, and so for
 * every reaper and guest it clones. Returns 0 or -errno. */
int hygiene_sched(char *why, size_t n);

#endif /* ISO_HYGIENE_H */
