/*
 * landlock.h - the Landlock constants and ruleset attribute newer than the
 * Linux 6.1 headers we build against (no libc wraps the system calls:
 * confine.c makes them with syscall(2)).
 *
 * Values are the kernel's uapi (include/uapi/linux/landlock.h); each one is
 * defined only when the installed headers lack it, so newer headers win.
 * The system call numbers came with <linux/landlock.h> itself (Linux 5.13).
 * The ruleset attribute is our own struct: the kernel accepts a larger
 * struct than it knows as long as the members it does not know are zero, so
 * one layout serves every ABI.
 */
#ifndef ISO_LANDLOCK_H
#define ISO_LANDLOCK_H

#include <stdint.h>

#include <linux/landlock.h>

/* ABI 3 */
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif
/* ABI 5 */
#ifndef LANDLOCK_ACCESS_FS_IOCTL_DEV
#define LANDLOCK_ACCESS_FS_IOCTL_DEV (1ULL << 15)
#endif

/* ABI 4: TCP bind and connect, handled with no port rule: all refused. */
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)
#endif
#ifndef LANDLOCK_ACCESS_NET_CONNECT_TCP
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)
#endif

/* ABI 6: scoping to the Landlock domain. */
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)
#endif

/*
 * ABI 7's landlock_restrict_self() logging flags are not defined: we pass
 * none, and the kernel's default (denials after the guest's execve are not
 * audited) keeps a hostile guest from flooding the audit log.
 */

/* struct landlock_ruleset_attr as of ABI 6. */
struct iso_landlock_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net; /* ABI 4 */
	uint64_t scoped; /* ABI 6 */
};

#endif /* ISO_LANDLOCK_H */
