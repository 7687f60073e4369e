/*
 * install.h - the test installation, shared by the live tests and the
 * benchmark. Root only.
 *
 * Every run has its own root and its own pools. test_install() moves the
 * calling process into a mount namespace of its own and bind-mounts a fresh
 * root-owned directory (made with mkdtemp) on the path compiled into the
 * test helper, ISO_TEST_ROOT; the test helper, and everything the run
 * starts, see only that run's files there. The run also reserves a slot
 * (an flock'd lock file) whose number offsets every pool of
 * tests/policy.conf.in, so that two runs never lease the same uids. The
 * directory goes when the run exits; a run killed before that leaves it
 * in a 0700 directory, for the next run of its slot to remove.
 */
#ifndef ISO_INSTALL_H
#define ISO_INSTALL_H

#include <sys/types.h>

/* The run's root, as the run sees it (and the test helper has compiled in). */
#define T_ROOT ISO_TEST_ROOT
#define T_BIN T_ROOT "/bin"
/* The setuid test helper, gone with the run's root when the run exits. */
extern char t_helper[];
extern char t_helper_env[]; /* "ISOSPAWN_HELPER=" t_helper */
#define T_HELPER t_helper
#define T_PROBE T_BIN "/probe"
#define T_CLI T_BIN "/isospawn"
#define T_LIB T_ROOT "/lib"
#define T_SHARED T_ROOT "/shared" /* where the callers keep what they lend */
#define T_LEASES T_ROOT "/run/leases" /* its lease files (root only) */

/* This run's offset of every pool uid in tests/policy.conf.in (set by
 * test_install(); the same in every process the run forks). T_POOL(n) is
 * the uid that the policy file's number n became. */
extern uid_t t_pool_delta;
#define T_POOL(n) ((uid_t)((n) + t_pool_delta))

/* Callers named in tests/policy.conf.in (never offset: only pools are). */
#define T_CALLER 65534u /* the main unprivileged caller (nobody) */
#define T_RESTRICTED 4000001u /* programs and overrides restricted */
#define T_NORULE 4000002u /* no rule matches */
#define T_GROUPED 4000003u /* matched through supplementary group */
#define T_GROUP 4000100u
#define T_UNCONFINED 4000004u /* seccomp none, landlock off (bench) */
#define T_MANY 4000050u /* 1,000 live guests and more (bench) */
#define T_SECOND 4000030u /* may read where T_CALLER's guests write */
#define T_NOCGROUP 4000123u /* T_CALLER's rule with 'cgroup off' (bench) */
#define T_POOL_FIRST T_POOL(1900100000u)
#define T_POOL_LAST T_POOL(1900100999u)

/* Give the calling process its own root and pools (above), then install
 * helper (root, 4755), probe, CLI, library and policy there. Exits 77
 * (automake's skip) when a private mount namespace cannot be made, 99 on
 * any other failure. The root is removed when the calling process exits. */
void test_install(void);

/* Copy src to dst atomically, owned by root with `mode`. */
void test_install_file(const char *src, const char *dst, mode_t mode);
/* Make directory dst (root's, 0755) and copy each regular file of src
 * into it likewise. */
void test_install_dir(const char *src, const char *dst, mode_t mode);

#endif /* ISO_INSTALL_H */
