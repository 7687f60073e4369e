/*
 * coverage.c - coverage builds only (--enable-coverage), linked into the
 * test helper, never into what is installed.
 *
 * A process counts in memory and writes its counts when it exits. The
 * helper's reapers and guests end with exec or _exit, after dropping
 * privileges, in a mount namespace of their own, under Landlock and
 * seccomp: what they ran would never be counted. So the counters (gathered
 * by tests/coverage.ld) are made shared memory before main(): every process
 * the helper forks counts into the same pages, and the helper's own exit
 * writes them, once. This relies on no child writing them itself (libgcov
 * merges into the counters in place, so a second writer would double
 * them): the helper's children only ever exec or _exit. Concurrent
 * increments may race, so counts mean "at least", coverage stays exact.
 */
#include "config.h"

#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

extern char iso_gcov_counters_start[], iso_gcov_counters_end[];

pid_t __gcov_fork(void);

__attribute__((constructor, no_profile_instrument_function)) static void share_counters(void)
{
	size_t len = (size_t)(iso_gcov_counters_end - iso_gcov_counters_start);
	void *shared;

	if (len == 0)
		return;
	shared = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (shared == MAP_FAILED)
		return; /* counted as usual: children's counts are lost */
	memcpy(shared, iso_gcov_counters_start, len);
	(void)mremap(shared, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, iso_gcov_counters_start);
}

/* GCC turns fork() in instrumented code into __gcov_fork(), whose child
 * resets the counters: here they are the parent's too. */
__attribute__((no_profile_instrument_function)) pid_t __gcov_fork(void)
{
	/* Through a pointer: a direct call would become this one. */
	pid_t (*volatile real_fork)(void) = fork;

	return real_fork();
}
