/*
 * seccomp-rules.h - the guest's seccomp deny lists, compiled with libseccomp
 * at build time (tools/seccomp-gen.c) and by the unit test that checks what
 * the helper loads (tests/unit_seccomp.c). Never linked into the helper.
 */
#ifndef ISO_SECCOMP_RULES_H
#define ISO_SECCOMP_RULES_H

#include <stddef.h>
#include <stdint.h>

#include <linux/filter.h>

/*
 * The whole program of a profile (strict: 0 default, 1 strict) refusing with
 * `action` (a SECCOMP_RET_* value), into *prog (malloc'd, *len
 * instructions). deny: NULL, or a NULL-terminated list of system call
 * names refused after everything else, as a rule's seccomp-deny was before
 * it moved to the helper's own prefix (the test's reference). Returns 0 or
 * -errno, having said why on stderr.
 */
int rules_compile(int strict, uint32_t action, char *const *deny, struct sock_filter **prog,
		  size_t *len);

/* Whether the program answers ENOSYS for number nr of arch (an AUDIT_ARCH
 * value) whatever a rule denies: 1 or 0, -errno on failure. */
int rules_enosys(uint32_t arch, int nr);

/* The compat architecture filtered with the native one (AUDIT_ARCH), or 0. */
uint32_t rules_compat_arch(void);

#endif /* ISO_SECCOMP_RULES_H */
