/*
 * seccomp-tables.h - what tools/seccomp-gen writes at build time into
 * seccomp-tables.c (in the build tree): the seccomp programs libseccomp
 * compiled from tools/seccomp-rules.c, and the system call names it knows.
 * The helper links no libseccomp: it loads these programs as they are, with
 * a prefix of its own for a rule's seccomp-deny list (confine.c).
 */
#ifndef ISO_SECCOMP_TABLES_H
#define ISO_SECCOMP_TABLES_H

#include <stddef.h>
#include <stdint.h>

#include <linux/filter.h>

struct iso_seccomp_program {
	const struct sock_filter *filter;
	size_t len; /* instructions */
};

/* [0 default, 1 strict][0 errno (EPERM), 1 kill (the process)]. */
extern const struct iso_seccomp_program iso_seccomp_programs[2][2];

/* The native and compat architectures the programs filter (AUDIT_ARCH_*
 * values; 0: no compat entry point). */
extern const uint32_t iso_seccomp_arches[2];

/*
 * Every system call name libseccomp knows, sorted, with its number on each
 * of iso_seccomp_arches; -1 where that architecture has none, and for the
 * calls every program answers with ENOSYS whatever a rule denies (clone3,
 * openat2, fchmodat2, numbers above the last call reviewed).
 */
struct iso_syscall {
	const char *name;
	int nr[2];
};
extern const struct iso_syscall iso_syscalls[];
extern const size_t iso_nsyscalls;

#endif /* ISO_SECCOMP_TABLES_H */
