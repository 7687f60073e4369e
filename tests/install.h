/*
 * install.h - the test installation under ISO_TEST_ROOT, shared by the live
 * tests and the benchmark. Root only.
 */
#ifndef ISO_INSTALL_H
#define ISO_INSTALL_H

#include <sys/types.h>

#define T_ROOT ISO_TEST_ROOT
#define T_BIN T_ROOT "/bin"
/* The setuid test helper: one copy per test program, named with its pid and
 * removed when that program exits, so no setuid binary outlives the tests. */
extern char t_helper[];
extern char t_helper_env[]; /* "ISOSPAWN_HELPER=" t_helper */
#define T_HELPER t_helper
#define T_PROBE T_BIN "/probe"
#define T_CLI T_BIN "/isospawn"
#define T_LIB T_ROOT "/lib"
#define T_SHARED T_ROOT "/shared"   /* may-read/may-write for the caller */
#define T_SCRATCH T_ROOT "/scratch"  /* the test helper's ISO_SCRATCH_DIR */
#define T_LEASES T_ROOT "/run/leases" /* its lease files (root only) */

/* Callers named in tests/policy.conf.in. */
#define T_CALLER 65534u	     /* the main unprivileged caller (nobody) */
#define T_RESTRICTED 4000001u /* programs and overrides restricted */
#define T_NORULE 4000002u     /* no rule matches */
#define T_GROUPED 4000003u    /* matched through supplementary group */
#define T_GROUP 4000100u
#define T_UNCONFINED 4000004u /* seccomp none, landlock off (bench) */
#define T_SECOND 4000030u     /* may read where T_CALLER's guests write */
#define T_POOL_FIRST 1900100000u
#define T_POOL_LAST 1900100999u

/* Install helper (root, 4755), probe, CLI, library and policy under
 * T_ROOT, each atomically (tests run in parallel). Exits 99 on failure.
 * The helper is removed again when the calling process exits. */
void test_install(void);

/* Copy src to dst atomically, owned by root with `mode`. */
void test_install_file(const char *src, const char *dst, mode_t mode);

#endif /* ISO_INSTALL_H */
