/*
 * unit_seccomp.c - the seccomp programs the helper loads, which it takes
 * from seccomp-tables.c (written at build time by tools/seccomp-gen), with
 * its own prefix for a rule's seccomp-deny list (helper/confine.c):
 *  - each built program is, instruction for instruction, what libseccomp
 *    compiles from tools/seccomp-rules.c now;
 *  - with a deny list, the helper's program decides every call (each
 *    architecture, number and argument tried below) as libseccomp's program
 *    with the list compiled in decides it: run on a classic BPF
 *    interpreter of the test's own, as the kernel would run them;
 *  - the names table is libseccomp's;
 *  - the helper does not link libseccomp.
 * The live tests (live_kernel.c) load the same programs in the kernel.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>

#include "confine.h"
#include "policy.h"
#include "seccomp-rules.h"
#include "seccomp-tables.h"
#include "util.h"

#define ACTION_ERRNO (SECCOMP_RET_ERRNO | EPERM)

/* ------------------------------------------------------------------ */
/* A classic BPF interpreter: what the kernel runs for a seccomp filter,
 * for the instructions libseccomp and the helper emit (anything else
 * fails the test). */

static uint32_t run(const struct sock_filter *f, size_t len, const struct seccomp_data *d)
{
	uint32_t a = 0, word;
	size_t pc = 0;

	for (;;) {
		const struct sock_filter *i;

		/* No ck_assert on the way: each passing one costs a system call. */
		if (pc >= len)
			ck_abort_msg("jumped out of the program (%zu of %zu)", pc, len);
		i = &f[pc++];
		switch (i->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (i->k + sizeof word > sizeof *d)
				ck_abort_msg("load beyond seccomp_data at %zu", pc - 1);
			memcpy(&word, (const char *)d + i->k, sizeof word);
			a = word;
			break;
		case BPF_ALU | BPF_AND | BPF_K:
			a &= i->k;
			break;
		case BPF_JMP | BPF_JA:
			pc += i->k;
			break;
		case BPF_JMP | BPF_JEQ | BPF_K:
			pc += a == i->k ? i->jt : i->jf;
			break;
		case BPF_JMP | BPF_JGT | BPF_K:
			pc += a > i->k ? i->jt : i->jf;
			break;
		case BPF_JMP | BPF_JGE | BPF_K:
			pc += a >= i->k ? i->jt : i->jf;
			break;
		case BPF_JMP | BPF_JSET | BPF_K:
			pc += (a & i->k) ? i->jt : i->jf;
			break;
		case BPF_RET | BPF_K:
			return i->k;
		default:
			ck_abort_msg("instruction 0x%04x at %zu not interpreted", i->code, pc - 1);
		}
	}
}

/* ------------------------------------------------------------------ */

START_TEST(built_programs_are_what_libseccomp_compiles)
{
	for (int strict = 0; strict < 2; strict++)
		for (int kill = 0; kill < 2; kill++) {
			const struct iso_seccomp_program *p = &iso_seccomp_programs[strict][kill];
			struct sock_filter *want;
			size_t len;

			ck_assert_int_eq(
			    rules_compile(strict, kill ? SECCOMP_RET_KILL_PROCESS : ACTION_ERRNO,
					  NULL, &want, &len),
			    0);
			ck_assert_uint_eq(p->len, len);
			ck_assert(memcmp(p->filter, want, len * sizeof *want) == 0);
			free(want);
		}
}
END_TEST

/* What confine_prepare() gives the guests of a rule. */
static struct sock_filter *prepared(int strict, int kill, char **deny, size_t *len)
{
	struct iso_rule rule;
	struct iso_confine c;
	char why[256] = "";

	memset(&rule, 0, sizeof rule);
	rule.line = 7;
	rule.network_default = ISO_NETWORK_HOST;
	rule.seccomp = strict ? ISO_SECCOMP_STRICT : ISO_SECCOMP_DEFAULT;
	rule.seccomp_action = kill ? ISO_SECCOMP_KILL : ISO_SECCOMP_ERRNO;
	rule.landlock = ISO_LANDLOCK_OFF;
	rule.seccomp_deny = deny;
	ck_assert_msg(confine_prepare(&rule, &c, why, sizeof why) == 0, "confine_prepare: %s", why);
	*len = c.bpf_len;
	return c.bpf;
}

START_TEST(without_a_deny_list_the_built_program_is_loaded_as_it_is)
{
	for (int strict = 0; strict < 2; strict++)
		for (int kill = 0; kill < 2; kill++) {
			const struct iso_seccomp_program *p = &iso_seccomp_programs[strict][kill];
			size_t len;
			struct sock_filter *f = prepared(strict, kill, NULL, &len);

			ck_assert_uint_eq(len, p->len);
			ck_assert(memcmp(f, p->filter, len * sizeof *f) == 0);
			free(f);
		}
}
END_TEST

/* Arguments that the conditional rules look at: socket families, terminal
 * ioctls, set-id modes with and without O_CREAT, clone's namespace flags,
 * personalities. */
static const uint64_t arg_values[] = {
	0,
	1,
	AF_INET,
	AF_NETLINK,
	40 /* AF_VSOCK */,
	TIOCSTI,
	TIOCSTI | 0x100000000ull,
	TIOCGWINSZ,
	S_ISUID | 0644,
	S_ISGID,
	O_CREAT,
	0x10000 /* CLONE_NEWNS's neighbour */,
	0x20000 /* CLONE_NEWNS */,
	0x10000000 /* CLONE_NEWUSER */,
	0x0008 /* a personality */,
	0xffffffff,
	0xffffffffffffffffull,
};

/* Every number from 0 to 1100, around ARM's private calls and x32's. */
static uint32_t nth_number(size_t i)
{
	if (i <= 1100)
		return (uint32_t)i;
	if (i <= 1100 + 16)
		return 0xf0000 + (uint32_t)(i - 1101);
	return 0x40000000u + (uint32_t)(i - 1117) * 7;
}
#define NUMBERS (1117 + 80)

/* The two programs decide alike for every architecture (native, compat, an
 * unknown one), number and argument vector tried (each argument in turn
 * set to each value of arg_values, the others 0); where `stricter` is not
 * 0, the helper's may also answer that where libseccomp's allowed. */
static void decide_alike(const struct sock_filter *got, size_t got_len,
			 const struct sock_filter *want, size_t want_len, const char *what,
			 uint32_t stricter)
{
	const uint32_t arches[] = { iso_seccomp_arches[0], iso_seccomp_arches[1], 0x12345678 };
	struct seccomp_data d;

	for (size_t a = 0; a < COUNT(arches); a++)
		for (size_t i = 0; i < NUMBERS; i++)
			for (size_t arg = 0; arg < 6; arg++)
				for (size_t v = 0; v < COUNT(arg_values); v++) {
					memset(&d, 0, sizeof d);
					d.arch = arches[a];
					d.nr = (int)nth_number(i);
					d.args[arg] = arg_values[v];
					uint32_t r = run(got, got_len, &d),
						 w = run(want, want_len, &d);

					if (r != w && !(r == stricter && w == SECCOMP_RET_ALLOW))
						ck_abort_msg(
						    "%s: arch 0x%x nr %d arg %zu = 0x%llx: 0x%x, "
						    "libseccomp 0x%x",
						    what, d.arch, d.nr, arg,
						    (unsigned long long)arg_values[v],
						    run(got, got_len, &d), run(want, want_len, &d));
				}
}

/*
 * Each list: calls denied outright (getppid, and stime, which only the
 * 32-bit entry point has), calls whose profile rules are conditional
 * (ioctl, socket, personality, open), a call the profile denies already
 * (ptrace), and calls the profile answers ENOSYS whatever the rule says
 * (clone3, openat2, fchmodat2).
 */
static char *lists[][6] = {
	{ "getppid", NULL },
	{ "stime", "ptrace", "getppid", NULL },
	{ "ioctl", "socket", NULL },
	{ "personality", "open", "chmod", NULL },
	{ "clone3", "openat2", "fchmodat2", "keyctl", NULL },
};

START_TEST(deny_lists_decide_as_libseccomp_decided)
{
	for (size_t l = 0; l < COUNT(lists); l++)
		for (int strict = 0; strict < 2; strict++)
			for (int kill = 0; kill < 2; kill++) {
				struct sock_filter *got, *want;
				size_t got_len, want_len;
				char what[64];

				got = prepared(strict, kill, lists[l], &got_len);
				ck_assert_int_eq(
				    rules_compile(strict,
						  kill ? SECCOMP_RET_KILL_PROCESS : ACTION_ERRNO,
						  lists[l], &want, &want_len),
				    0);
				snprintf(what, sizeof what, "list %zu, %s, %s", l,
					 strict ? "strict" : "default", kill ? "kill" : "errno");
				decide_alike(got, got_len, want, want_len, what, 0);
				free(got);
				free(want);
			}
}
END_TEST

/* A call the 32-bit x86 entry point reaches only through socketcall or ipc
 * (no number of its own there): the helper refuses the multiplexer whole
 * there, where libseccomp refused only some of its uses (or none). The
 * helper's program allows nothing libseccomp's refused. */
START_TEST(multiplexed_calls_refused_at_least_as_libseccomp_did)
{
	char *deny[] = { "accept", "send", "recv", "semop", "semtimedop", NULL };

	for (int kill = 0; kill < 2; kill++) {
		uint32_t action = kill ? SECCOMP_RET_KILL_PROCESS : ACTION_ERRNO;
		struct sock_filter *got, *want;
		size_t got_len, want_len;

		got = prepared(0, kill, deny, &got_len);
		ck_assert_int_eq(rules_compile(0, action, deny, &want, &want_len), 0);
		decide_alike(got, got_len, want, want_len, "multiplexed", action);
		free(got);
		free(want);
	}
}
END_TEST

/* The prefix for a list refuses the named call on each entry point with
 * the rule's action, and lets the rest through to the program. */
START_TEST(deny_prefix_refuses_the_call_and_passes_the_rest)
{
	char *deny[] = { "getppid", NULL };
	int nr = seccomp_syscall_resolve_name("getppid");
	struct seccomp_data d = { .nr = nr, .arch = iso_seccomp_arches[0] };
	struct sock_filter *f;
	size_t len;

	f = prepared(0, 0, deny, &len);
	ck_assert_uint_eq(run(f, len, &d), ACTION_ERRNO);
	d.nr = seccomp_syscall_resolve_name("getpid");
	ck_assert_uint_eq(run(f, len, &d), SECCOMP_RET_ALLOW);
	free(f);
	f = prepared(1, 1, deny, &len);
	d.nr = nr;
	ck_assert_uint_eq(run(f, len, &d), SECCOMP_RET_KILL_PROCESS);
	if (iso_seccomp_arches[1] != 0) {
		d.arch = iso_seccomp_arches[1];
		d.nr = seccomp_syscall_resolve_name_arch(d.arch, "getppid");
		ck_assert_uint_eq(run(f, len, &d), SECCOMP_RET_KILL_PROCESS);
	}
	free(f);
}
END_TEST

/* Each name is libseccomp's, with each number libseccomp gives it on each
 * architecture but for the ENOSYS answers, and each number libseccomp names
 * is its name's. */
START_TEST(names_are_libseccomps)
{
	ck_assert_uint_gt(iso_nsyscalls, 300);
	ck_assert_uint_eq(iso_seccomp_arches[0], seccomp_arch_native());
	ck_assert_uint_eq(iso_seccomp_arches[1], rules_compat_arch());
	for (size_t i = 0; i < iso_nsyscalls; i++) {
		const struct iso_syscall *s = &iso_syscalls[i];

		ck_assert(i == 0 || strcmp(iso_syscalls[i - 1].name, s->name) < 0);
		ck_assert_int_ne(seccomp_syscall_resolve_name(s->name), __NR_SCMP_ERROR);
		for (int a = 0; a < 2; a++) {
			char *name;

			if (s->nr[a] < 0)
				continue;
			name = seccomp_syscall_resolve_num_arch(iso_seccomp_arches[a], s->nr[a]);
			/* Its number, or its multiplexer's (seccomp-gen.c). */
			if (strcmp(name ? name : "", s->name) != 0)
				ck_assert_int_eq(seccomp_syscall_resolve_name_rewrite(
						     iso_seccomp_arches[a], s->name),
						 s->nr[a]);
			ck_assert_int_eq(rules_enosys(iso_seccomp_arches[a], s->nr[a]), 0);
			free(name);
		}
	}
	for (int a = 0; a < 2 && iso_seccomp_arches[a] != 0; a++)
		for (size_t i = 0; i < NUMBERS; i++) {
			int nr = (int)nth_number(i);
			char *name = seccomp_syscall_resolve_num_arch(iso_seccomp_arches[a], nr);
			const struct iso_syscall *s = name ? policy_syscall(name) : NULL;

			if (!name)
				continue;
			ck_assert_msg(s, "%s (%d) is not in the table", name, nr);
			ck_assert_int_eq(s->nr[a],
					 rules_enosys(iso_seccomp_arches[a], nr) ? -1 : nr);
			free(name);
		}
}
END_TEST

/* readelf -d of each helper built here names no libseccomp. */
START_TEST(helper_does_not_link_libseccomp)
{
	const char *helpers[] = { ISO_BUILDDIR "/isospawn-helper",
				  ISO_BUILDDIR "/tests/isospawn-helper-test" };
	char cmd[4096], line[512];

	for (size_t i = 0; i < COUNT(helpers); i++) {
		int needed = 0, seccomp = 0;
		FILE *p;

		snprintf(cmd, sizeof cmd, "readelf -d '%s'", helpers[i]);
		p = popen(cmd, "r");
		ck_assert_ptr_nonnull(p);
		while (fgets(line, sizeof line, p)) {
			needed += strstr(line, "(NEEDED)") != NULL;
			seccomp += strstr(line, "libseccomp") != NULL;
		}
		ck_assert_int_eq(pclose(p), 0);
		ck_assert_msg(needed > 0, "%s: readelf -d shows no NEEDED entry", helpers[i]);
		ck_assert_msg(seccomp == 0, "%s links libseccomp", helpers[i]);
	}
}
END_TEST

static Suite *seccomp_suite(void)
{
	Suite *s = suite_create("seccomp");
	TCase *tc = tcase_create("programs");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, built_programs_are_what_libseccomp_compiles);
	tcase_add_test(tc, without_a_deny_list_the_built_program_is_loaded_as_it_is);
	tcase_add_test(tc, deny_lists_decide_as_libseccomp_decided);
	tcase_add_test(tc, multiplexed_calls_refused_at_least_as_libseccomp_did);
	tcase_add_test(tc, deny_prefix_refuses_the_call_and_passes_the_rest);
	tcase_add_test(tc, names_are_libseccomps);
	tcase_add_test(tc, helper_does_not_link_libseccomp);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(seccomp_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
