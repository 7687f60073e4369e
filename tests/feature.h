/*
 * feature.h - probe, then test. A check that needs privilege or a kernel
 * feature the host may lack is added to its suite only when a probe made
 * without any filter finds the feature; otherwise the program prints
 * "SKIP: check: why" (tests/check-driver counts it as a SKIP), so a missing
 * feature is never a pass and never a failure.
 *
 * ISOSPAWN_TEST_HIDE=key[,key...] makes the named probes report their
 * feature absent (to prove the skip path on a host that has it). Keys:
 * root, int80, x32, landlock, userns, pty, netns, plus those a program
 * gives to feature_baseline().
 */
#ifndef ISO_FEATURE_H
#define ISO_FEATURE_H

#include <check.h>

/* Exit status of a child that could not set itself up (>= this: not a
 * result of the call under test). */
#define SETUP_FAILED 200

/* Is key listed in ISOSPAWN_TEST_HIDE? */
int feature_hidden(const char *key);

/* Each returns NULL when the feature is there, else why not. */
const char *feature_root(void);
/* Landlock with at least ABI version abi. */
const char *feature_landlock(int abi);
/* Creating a user namespace unprivileged (the probe drops to nobody). */
const char *feature_userns(void);
/* A pseudo-terminal (posix_openpt and its slave). */
const char *feature_pty(void);
/* A network namespace (root). */
const char *feature_netns(void);
/* The i386 entry point, int 0x80, reached from 64-bit code: the probe
 * program (uninstrumented: a sanitizer must not turn the kernel's SIGSEGV
 * into an exit status) runs "int80-ptrace" with no filter. */
const char *feature_int80(const char *probe);

/* Run fn in a forked child without any filter (its exit status is what it
 * returns: an errno, 0 for success). When it already ends with `refused`,
 * by a signal or with SETUP_FAILED, a filter that should make it end with
 * `refused` cannot be told from the host: returns why, naming `feature`;
 * else NULL. `key` can be hidden like the probes above. */
const char *feature_baseline(int (*fn)(void), int refused, const char *key, const char *feature);

/* _exit() for a forked child that ran product code: in coverage builds it
 * first writes the child's counts, which _exit() would lose (not under
 * Landlock: the child could not write them). */
__attribute__((noreturn)) void child_exit(int code);

/* In a running check that finds it cannot run here (a condition only the
 * check itself can probe): say why, then return at once. tests/check-driver
 * counts it as a SKIP, not as the pass Check counts. */
void check_skip(const char *test, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Add test t to tc when missing is NULL; otherwise print the SKIP line. */
void tcase_add_unless(TCase *tc, const TTest *t, const char *missing);

#endif /* ISO_FEATURE_H */
