/*
 * hygiene.h - make the helper's own process state known before trusting
 * anything: it inherits everything else from a possibly hostile caller.
 */
#ifndef ISO_HYGIENE_H
#define ISO_HYGIENE_H

#include <stddef.h>

/* Helper exit codes (isospawn-helper(8)). */
#define ISO_HELPER_EXIT_OK 0	  /* the client closed the connection */
#define ISO_HELPER_EXIT_REFUSED 1 /* refused at start-up, reason given */
#define ISO_HELPER_EXIT_FAILED 2  /* internal failure while serving */

/*
 * Everything from the helper's start-up that does not need the policy:
 * forget the environment, make fds 0-2 safe, check that ISO_HELPER_FD is an AF_UNIX
 * SOCK_SEQPACKET socket, close every other fd, reset signals, resource
 * limits, umask and cwd, and stay non-dumpable. Returns 0 or -errno with a
 * reason; on failure the helper cannot talk to its client.
 */
int hygiene_start(char *why, size_t n);

/* Once the caller is known: refuse to serve in a cgroup that someone
 * other than root could freeze the helper in (cgroup v2). Returns 0, or
 * -EPERM naming the file, or -errno. */
int hygiene_cgroup(char *why, size_t n);

#endif /* ISO_HYGIENE_H */
