/*
 * seccomp-gen.c - writes seccomp-tables.c at build time: the complete
 * seccomp program of each profile and action (tools/seccomp-rules.c), and
 * the system call names a rule's seccomp-deny may list, with their numbers
 * on the native and compat entry points, as libseccomp resolves them. The
 * helper (helper/confine.c) only copies these; see helper/seccomp-tables.h.
 *
 * It runs on the build machine with the target's libseccomp and #ifdefs,
 * so the build must be native (configure refuses to cross-compile).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/seccomp.h>
#include <seccomp.h>

#include "seccomp-rules.h"

/* Enough for every number and pseudo-number libseccomp 2.5 and 2.6 name
 * (its pseudo-numbers run from -101 down to about -10300, for the calls
 * an architecture lacks). */
#define PSEUDO_LOWEST (-11000)
#define REAL_HIGHEST 1100
#define ARM_PRIVATE_FIRST 0xf0000
#define ARM_PRIVATE_LAST 0xf00ff

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int write_program(FILE *out, const char *name, int strict, uint32_t action)
{
	struct sock_filter *f;
	size_t len;

	if (rules_compile(strict, action, NULL, &f, &len) < 0)
		return -1;
	fprintf(out, "static const struct sock_filter %s[] = {\n", name);
	for (size_t i = 0; i < len; i++)
		fprintf(out, "\t{ 0x%04x, %u, %u, 0x%08x },\n", f[i].code, f[i].jt, f[i].jf,
			f[i].k);
	fprintf(out, "};\n\n");
	free(f);
	return 0;
}

/* Each number of arch that libseccomp names (its real calls), as
 * names[number]; ARM's private calls from index REAL_HIGHEST on. */
#define NUMBERS (REAL_HIGHEST + ARM_PRIVATE_LAST - ARM_PRIVATE_FIRST + 1)

static int index_number(int i)
{
	return i < REAL_HIGHEST ? i : ARM_PRIVATE_FIRST + (i - REAL_HIGHEST);
}

static void name_numbers(uint32_t arch, char **names)
{
	for (int i = 0; i < NUMBERS; i++)
		names[i] = arch ? seccomp_syscall_resolve_num_arch(arch, index_number(i)) : NULL;
}

/*
 * The number of `name` in arch's table; for a call that arch reaches only
 * through a multiplexer (x86's socketcall and ipc: accept, send, recv,
 * semop, semtimedop), the multiplexer's, so that a rule listing the call
 * refuses the multiplexer whole there rather than miss the call. -1 where
 * arch has neither or the program answers it ENOSYS whatever a rule says
 * (rules_enosys); -2 on failure. By number, not libseccomp's name lookup:
 * on x86 that gives a multiplexer's pseudo-number for calls that have
 * their own number too (connect: 362).
 */
static int number(uint32_t arch, char *const *numbers, const char *name)
{
	int nr = -1, enosys;

	for (int i = 0; i < NUMBERS && nr < 0; i++)
		if (numbers[i] && strcmp(numbers[i], name) == 0)
			nr = index_number(i);
	if (nr < 0 && arch)
		nr = seccomp_syscall_resolve_name_rewrite(arch, name);
	if (nr < 0)
		return -1;
	enosys = rules_enosys(arch, nr);
	if (enosys < 0)
		return -2;
	return enosys ? -1 : nr;
}

/* Every name libseccomp knows: each has a number or a pseudo-number on the
 * native architecture. */
static int write_names(FILE *out)
{
	const uint32_t arch[2] = { seccomp_arch_native(), rules_compat_arch() };
	static char *names[4096], *numbers[2][NUMBERS];
	size_t n = 0, k = 0;
	int nr[2];

	for (long i = PSEUDO_LOWEST; i < 0 && n < 4096; i++)
		if ((names[n] = seccomp_syscall_resolve_num_arch(arch[0], (int)i)))
			n++;
	name_numbers(arch[0], numbers[0]);
	name_numbers(arch[1], numbers[1]);
	for (int i = 0; i < NUMBERS && n < 4096; i++)
		if (numbers[0][i] && (names[n] = strdup(numbers[0][i])))
			n++;
	qsort(names, n, sizeof *names, by_name);
	fprintf(out,
		"const uint32_t iso_seccomp_arches[2] = { 0x%08x, 0x%08x };\n\n"
		"const struct iso_syscall iso_syscalls[] = {\n",
		arch[0], arch[1]);
	for (size_t i = 0; i < n; i++) {
		if (i > 0 && strcmp(names[i], names[i - 1]) == 0)
			continue;
		nr[0] = number(arch[0], numbers[0], names[i]);
		nr[1] = number(arch[1], numbers[1], names[i]);
		if (nr[0] == -2 || nr[1] == -2)
			return -1;
		fprintf(out, "\t{ \"%s\", { %d, %d } },\n", names[i], nr[0], nr[1]);
		k++;
	}
	fprintf(out, "};\nconst size_t iso_nsyscalls = %zu;\n", k);
	return 0;
}

int main(int argc, char **argv)
{
	const uint32_t errno_action = SECCOMP_RET_ERRNO | EPERM;
	char tmp[4096];
	FILE *out;

	if (argc != 2 || snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]) >= (int)sizeof tmp) {
		fprintf(stderr, "usage: seccomp-gen OUTPUT.c\n");
		return 2;
	}
	if (!(out = fopen(tmp, "w"))) {
		perror(tmp);
		return 1;
	}
	fprintf(out,
		"/* Written by tools/seccomp-gen (libseccomp %u.%u.%u): do not edit. */\n"
		"#include <linux/filter.h>\n\n#include \"seccomp-tables.h\"\n\n",
		seccomp_version()->major, seccomp_version()->minor, seccomp_version()->micro);
	if (write_program(out, "default_errno", 0, errno_action) < 0 ||
	    write_program(out, "default_kill", 0, SECCOMP_RET_KILL_PROCESS) < 0 ||
	    write_program(out, "strict_errno", 1, errno_action) < 0 ||
	    write_program(out, "strict_kill", 1, SECCOMP_RET_KILL_PROCESS) < 0)
		return 1;
	fprintf(out, "#define PROGRAM(name) { name, sizeof name / sizeof *name }\n"
		     "const struct iso_seccomp_program iso_seccomp_programs[2][2] = {\n"
		     "\t{ PROGRAM(default_errno), PROGRAM(default_kill) },\n"
		     "\t{ PROGRAM(strict_errno), PROGRAM(strict_kill) },\n};\n\n");
	if (write_names(out) < 0 || fclose(out) != 0 || rename(tmp, argv[1]) < 0) {
		perror(argv[1]);
		return 1;
	}
	return 0;
}
