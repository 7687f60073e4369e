/*
 * live_ctl.c - isospawnctl, drop-in policy files and the helper's "not
 * root" diagnosis, through a setuid test helper of their own, as
 * unprivileged callers.
 *
 * These tests rewrite their policy's drop-in directory, so they use their
 * own helper (tests/isospawn-helper-ctl), policy, drop-ins, leases and
 * pools under CTL, apart from the other live test programs running beside
 * them.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "feature.h"
#include "harness.h"

#define CTL ISO_CTL_TEST_ROOT
#define CTL_HELPER CTL "/isospawn-helper"
#define CTL_NOSETUID CTL "/isospawn-helper-not-setuid"
#define CTL_NOSUID_DIR CTL "/nosuid"
#define CTL_TOOL CTL "/isospawnctl"
#define CTL_POLICY CTL "/isospawn.conf"
#define CTL_DROPINS CTL "/isospawn.d"
#define CTL_OTHER 4000040u	  /* the second caller of policy-ctl.conf.in */
#define CTL_DROPIN_CALLER 4000041u /* admitted only by a drop-in */

/* "FIRST-LAST" of a pool of the ctl policy or of a drop-in, offset like
 * every pool of the run (install.h); one of four static buffers. */
static const char *pool(unsigned first, unsigned last)
{
	static char bufs[4][32];
	static int next;
	char *b = bufs[next++ % 4];

	snprintf(b, sizeof(bufs[0]), "%u-%u", (unsigned)T_POOL(first), (unsigned)T_POOL(last));
	return b;
}

/* printf into a static buffer (one at a time). */
static const char *__attribute__((format(printf, 1, 2))) fmt(const char *f, ...)
{
	static char buf[2048];
	va_list ap;

	va_start(ap, f);
	vsnprintf(buf, sizeof(buf), f, ap);
	va_end(ap);
	return buf;
}

/* What a program printed and how it ended. */
struct out {
	int status; /* exit code, or 128 + signal */
	char out[16384], err[16384];
};

static void drain2(int out_fd, int err_fd, struct out *o)
{
	struct pollfd p[2] = { { .fd = out_fd, .events = POLLIN },
			       { .fd = err_fd, .events = POLLIN } };
	char *bufs[2] = { o->out, o->err };
	size_t lens[2] = { 0, 0 }, cap = sizeof(o->out) - 1;

	while (p[0].fd >= 0 || p[1].fd >= 0) {
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		for (int i = 0; i < 2; i++) {
			char sink[4096];
			ssize_t got;

			if (p[i].fd < 0 || !p[i].revents)
				continue;
			got = lens[i] < cap ? read(p[i].fd, bufs[i] + lens[i], cap - lens[i])
					    : read(p[i].fd, sink, sizeof(sink));
			if (got <= 0) {
				close(p[i].fd);
				p[i].fd = -1;
			} else if (lens[i] < cap) {
				lens[i] += (size_t)got;
			}
		}
	}
	o->out[lens[0]] = '\0';
	o->err[lens[1]] = '\0';
}

/* Run argv (argv[0] absolute) with exactly envp, as whoever we are. */
static void run(const char *const *argv, const char *const *envp, struct out *o)
{
	posix_spawn_file_actions_t fa;
	int out[2], err[2], status;
	pid_t pid;

	memset(o, 0, sizeof(*o));
	ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(err, O_CLOEXEC), 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, err[1], 2);
	ck_assert_int_eq(posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv,
				     (char *const *)envp), 0);
	posix_spawn_file_actions_destroy(&fa);
	close(out[1]);
	close(err[1]);
	drain2(out[0], err[0], o);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	o->status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void ctl(const char *const *args, struct out *o)
{
	const char *argv[16] = { CTL_TOOL };
	const char *envp[] = { "PATH=/usr/bin:/bin", NULL };
	size_t n = 1;

	for (; *args != NULL && n < 15; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	run(argv, envp, o);
}

/* Become `uid` with the ctl test helper as ISOSPAWN_HELPER. */
static void become_ctl(uid_t uid)
{
	become(uid);
	setenv("ISOSPAWN_HELPER", CTL_HELPER, 1);
}

/* The text up to the first newline. */
static const char *first_line(const char *text, char *buf, size_t n)
{
	snprintf(buf, n, "%.*s", (int)strcspn(text, "\n"), text);
	return buf;
}

/* ---- Setup: as root, before any test ---- */

static pid_t installer;

static void remove_setuid_copies(void)
{
	if (getpid() != installer)
		return;
	(void)unlink(CTL_HELPER);
	(void)unlink(CTL_NOSETUID);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return strcmp(path, CTL_DROPINS) == 0 ? 0 : remove(path);
}

static void setup_failed(const char *what)
{
	fprintf(stderr, "live_ctl: %s: %s\n", what, strerror(errno));
	exit(99); /* automake: hard error */
}

/* An empty drop-in directory, root-owned 0755, before each test. */
static void clear_dropins(void)
{
	nftw(CTL_DROPINS, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
	if ((mkdir(CTL_DROPINS, 0755) < 0 && errno != EEXIST) || chown(CTL_DROPINS, 0, 0) < 0 ||
	    chmod(CTL_DROPINS, 0755) < 0)
		setup_failed(CTL_DROPINS);
}

static void write_root_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);

	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	ck_assert_int_eq(fchown(fd, 0, 0), 0);
	ck_assert_int_eq(fchmod(fd, mode), 0);
	close(fd);
}

/* tests/policy-ctl.conf.in with @ROOT@ and @CTL@ replaced and the pools
 * offset by the run's delta. */
static void install_policy(void)
{
	FILE *in = fopen(ISO_SRCDIR "/tests/policy-ctl.conf.in", "r");
	FILE *out = fopen(CTL_POLICY ".tmp", "w");
	char line[1024];

	if (in == NULL || out == NULL)
		setup_failed("tests/policy-ctl.conf.in");
	while (fgets(line, sizeof(line), in) != NULL) {
		char *at, copy[1024];
		unsigned first, last;

		while ((at = strstr(line, "@ROOT@")) != NULL || (at = strstr(line, "@CTL@")) != NULL) {
			int root = at[1] == 'R';

			snprintf(copy, sizeof(copy), "%.*s%s%s", (int)(at - line), line,
				 root ? T_ROOT : CTL, at + (root ? 6 : 5));
			strlcpy(line, copy, sizeof(line));
		}
		if (sscanf(line, " pool %u-%u", &first, &last) == 2)
			fprintf(out, "    pool %s\n", pool(first, last));
		else
			fputs(line, out);
	}
	fclose(in);
	if (fchmod(fileno(out), 0644) < 0 || fclose(out) != 0 || rename(CTL_POLICY ".tmp", CTL_POLICY) < 0)
		setup_failed(CTL_POLICY);
}

static void ctl_setup(void)
{
	umask(022);
	if ((mkdir(CTL, 0755) < 0 && errno != EEXIST) || chown(CTL, 0, 0) < 0 ||
	    chmod(CTL, 0755) < 0)
		setup_failed(CTL);
	if (mkdir(CTL_NOSUID_DIR, 0755) < 0 && errno != EEXIST)
		setup_failed(CTL_NOSUID_DIR);
	installer = getpid();
	atexit(remove_setuid_copies);
	test_install_file(ISO_BUILDDIR "/tests/isospawn-helper-ctl", CTL_HELPER, 04755);
	test_install_file(ISO_BUILDDIR "/tests/isospawn-helper-ctl", CTL_NOSETUID, 0755);
	test_install_file(ISO_BUILDDIR "/tests/isospawnctl-test", CTL_TOOL, 0755);
	install_policy();
	clear_dropins();
}

/* ---- isospawnctl check and drop-ins ---- */

START_TEST(live_ctl_check_summarizes_each_rule)
{
	struct out o;

	ctl((const char *[]){ "check", NULL }, &o);
	ck_assert_msg(o.status == 0, "exit %d: %s", o.status, o.err);
	ck_assert_msg(strstr(o.out, fmt(CTL_POLICY ":7: user:#65534: pool %s (50 uids), programs "
					"any, network none, limits cpu=3600 as=8G nofile=1024 "
					"nproc=64 fsize=4G stack=8M scratch=256M shm=64M, timeout "
					"120 s (default 60 s)\n",
					pool(1900102000, 1900102049))),
		      "%s", o.out);
	ck_assert_msg(strstr(o.out, fmt(CTL_POLICY ":17: user:#4000040: pool %s (50 uids), "
					"programs " T_PROBE, pool(1900102050, 1900102099))),
		      "%s", o.out);
	ck_assert_msg(has_line(o.out, "policy OK: 2 rules"), "%s", o.out);
	ck_assert_ptr_null(strstr(o.err, "not root"));

	/* The caller can check too, without the ownership checks. */
	become(T_CALLER);
	ctl((const char *[]){ "check", NULL }, &o);
	ck_assert_msg(o.status == 0, "exit %d: %s", o.status, o.err);
	ck_assert_msg(has_line(o.out, "policy OK: 2 rules"), "%s", o.out);
	ck_assert_msg(has_line(o.err, "isospawnctl: not root: ownership and modes were not "
				      "checked"), "%s", o.err);
}
END_TEST

START_TEST(live_ctl_dropin_rule_admits_its_caller)
{
	const char *argv[] = { T_PROBE, "exit", "0", NULL };
	struct run r;
	struct out o;
	iso_conn *c;

	write_root_file(CTL_DROPINS "/50-extra.conf",
			fmt("# a package's rule\nrule user:#4000041 {\n\tpool %s\n\tprograms any\n}\n",
			    pool(1900102100, 1900102109)), 0644);
	/* Not *.conf: never read, so its error does not count. */
	write_root_file(CTL_DROPINS "/50-extra.conf.dpkg-old", "rule nonsense\n", 0644);
	ctl((const char *[]){ "check", NULL }, &o);
	ck_assert_msg(o.status == 0, "exit %d: %s", o.status, o.err);
	ck_assert_msg(has_line(o.out, fmt(CTL_DROPINS "/50-extra.conf:2: user:#4000041: pool %s",
					  pool(1900102100, 1900102109))), "%s", o.out);
	ck_assert_msg(has_line(o.out, "policy OK: 3 rules"), "%s", o.out);

	become_ctl(CTL_DROPIN_CALLER);
	c = open_conn();
	run_guest(c, argv, NULL, NULL, NULL, &r);
	iso_close(c);
	ck_assert_msg(r.spawn_rc == 0, "spawn: %s", r.msg);
	ck_assert_int_eq(r.exit_code, 0);
	ck_assert_uint_ge(r.uid, T_POOL(1900102100u));
	ck_assert_uint_le(r.uid, T_POOL(1900102109u));
}
END_TEST

START_TEST(live_ctl_dropin_error_is_reported_and_refuses_callers_with_same_message)
{
	const char *expected = CTL_DROPINS "/20-bad.conf:4: expected 'host', 'none' or "
				"'none-only' after 'network', got 'maybe'";
	char line[1024];
	iso_conn *c = NULL;
	struct out o;
	int rc;

	write_root_file(CTL_DROPINS "/10-ok.conf",
			fmt("rule user:#4000041 {\npool %s\nprograms any\n}\n",
			    pool(1900102100, 1900102109)), 0644);
	write_root_file(CTL_DROPINS "/20-bad.conf",
			fmt("rule user:#4000042 {\npool %s\nprograms any\nnetwork maybe\n}\n",
			    pool(1900102110, 1900102119)), 0644);
	write_root_file(CTL_DROPINS "/30-bad.conf", "rule user:#4000043 {\npool 5\n", 0644);
	become_ctl(T_CALLER);
	ctl((const char *[]){ "check", NULL }, &o);
	ck_assert_int_eq(o.status, 1);
	ck_assert_str_eq(first_line(o.err, line, sizeof(line)), expected);
	/* Every file's error, not only the first. */
	ck_assert_msg(has_line(o.err, CTL_DROPINS "/30-bad.conf:2: expected FIRST-LAST"), "%s",
		      o.err);
	ck_assert_msg(has_line(o.err, "isospawnctl: the policy is invalid"), "%s", o.err);

	rc = iso_open(&c);
	ck_assert_int_eq(rc, -EIO);
	ck_assert_str_eq(iso_last_error(), expected);
}
END_TEST

START_TEST(live_ctl_group_writable_dropin_is_refused)
{
	const char *expected = CTL_DROPINS "/30-loose.conf: mode 0664 is writable by its group";
	char line[1024];
	iso_conn *c = NULL;
	struct out o;

	write_root_file(CTL_DROPINS "/30-loose.conf",
			fmt("rule user:#4000041 {\npool %s\nprograms any\n}\n",
			    pool(1900102100, 1900102109)), 0664);
	ctl((const char *[]){ "check", NULL }, &o);
	ck_assert_int_eq(o.status, 1);
	ck_assert_str_eq(first_line(o.err, line, sizeof(line)), expected);

	become_ctl(T_CALLER);
	ck_assert_int_eq(iso_open(&c), -EACCES);
	ck_assert_str_eq(iso_last_error(), expected);
}
END_TEST

START_TEST(live_ctl_group_writable_dropin_dir_is_refused)
{
	const char *expected = CTL_DROPINS ": mode 0775 is writable by its group";
	char line[1024];
	iso_conn *c = NULL;
	struct out o;

	ck_assert_int_eq(chmod(CTL_DROPINS, 0775), 0);
	ctl((const char *[]){ "check", NULL }, &o);
	ck_assert_int_eq(o.status, 1);
	ck_assert_str_eq(first_line(o.err, line, sizeof(line)), expected);

	become_ctl(T_CALLER);
	ck_assert_int_eq(iso_open(&c), -EACCES);
	ck_assert_str_eq(iso_last_error(), expected);
}
END_TEST

START_TEST(live_ctl_check_of_named_files_finds_pools_overlapping_across_them)
{
	struct out o;

	write_root_file(CTL "/candidate.conf",
			fmt("rule user:#4000041 {\npool %s\nprograms any\n}\n",
			    pool(1900102040, 1900102060)), 0644);
	ctl((const char *[]){ "check", CTL_POLICY, CTL "/candidate.conf", NULL }, &o);
	unlink(CTL "/candidate.conf");
	ck_assert_int_eq(o.status, 1);
	ck_assert_msg(has_line(o.err, fmt(CTL "/candidate.conf:2: expected a pool apart from the "
					  "pool %s of the rule at " CTL_POLICY ":7, got '%s'",
					  pool(1900102000, 1900102049),
					  pool(1900102040, 1900102060))), "%s", o.err);
}
END_TEST

/* ---- A helper that is not root says why, in one line ---- */

/* iso_open through `helper` fails with -EACCES and one line saying why. */
static void refused_not_root(const char *helper, const char *why)
{
	iso_conn *c = NULL;

	setenv("ISOSPAWN_HELPER", helper, 1);
	ck_assert_int_eq(iso_open(&c), -EACCES);
	ck_assert_msg(strstr(iso_last_error(), "isospawn-helper is not running as root: ") ==
			      iso_last_error(), "%s", iso_last_error());
	ck_assert_msg(strstr(iso_last_error(), why) != NULL, "%s", iso_last_error());
	ck_assert_ptr_null(strchr(iso_last_error(), '\n'));
}

START_TEST(live_ctl_no_new_privs_caller_is_told_in_one_line)
{
	const char *argv[] = { T_CLI, "--", T_PROBE, "exit", "0", NULL };
	const char *envp[] = { "LD_LIBRARY_PATH=" T_LIB, "ISOSPAWN_HELPER=" CTL_HELPER, NULL };
	struct out o;

	become(T_CALLER);
	ck_assert_int_eq(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	refused_not_root(CTL_HELPER, "the caller has no_new_privs set");

	/* The CLI: exit 125 and that one line, nothing else. */
	run(argv, envp, &o);
	ck_assert_int_eq(o.status, 125);
	ck_assert_msg(strncmp(o.err, "isospawn: isospawn-helper is not running as root: the "
				     "caller has no_new_privs set", 72) == 0, "%s", o.err);
	ck_assert_msg(strchr(o.err, '\n') == o.err + strlen(o.err) - 1, "%s", o.err);
}
END_TEST

START_TEST(live_ctl_helper_without_setuid_bit_is_told)
{
	become(T_CALLER);
	refused_not_root(CTL_NOSETUID, "it is not setuid root (owner uid 0, mode 0755)");
}
END_TEST

START_TEST(live_ctl_helper_on_nosuid_mount_is_told)
{
	/* In a mount namespace of this test's own, so nothing is left
	 * mounted whatever happens. */
	if (unshare(CLONE_NEWNS) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", CTL_NOSUID_DIR, "tmpfs", MS_NOSUID, "mode=0755") < 0) {
		check_skip("live_ctl_helper_on_nosuid_mount_is_told", "cannot mount a tmpfs: %s",
		       strerror(errno));
		return;
	}
	test_install_file(ISO_BUILDDIR "/tests/isospawn-helper-ctl",
			  CTL_NOSUID_DIR "/isospawn-helper", 04755);
	become(T_CALLER);
	refused_not_root(CTL_NOSUID_DIR "/isospawn-helper", "its file system is mounted nosuid");
}
END_TEST

static Suite *ctl_suite(void)
{
	Suite *s = suite_create("live_ctl");
	TCase *policy = tcase_create("policy");
	TCase *not_root = tcase_create("not_root");

	/* Checked: in each test's process, as root, before it becomes a
	 * caller. */
	tcase_add_checked_fixture(policy, clear_dropins, NULL);
	tcase_add_test(policy, live_ctl_check_summarizes_each_rule);
	tcase_add_test(policy, live_ctl_dropin_rule_admits_its_caller);
	tcase_add_test(policy, live_ctl_dropin_error_is_reported_and_refuses_callers_with_same_message);
	tcase_add_test(policy, live_ctl_group_writable_dropin_is_refused);
	tcase_add_test(policy, live_ctl_group_writable_dropin_dir_is_refused);
	tcase_add_test(policy, live_ctl_check_of_named_files_finds_pools_overlapping_across_them);
	tcase_add_test(not_root, live_ctl_no_new_privs_caller_is_told_in_one_line);
	tcase_add_test(not_root, live_ctl_helper_without_setuid_bit_is_told);
	tcase_add_test(not_root, live_ctl_helper_on_nosuid_mount_is_told);
	tcase_set_timeout(policy, 60);
	tcase_set_timeout(not_root, 60);
	suite_add_tcase(s, policy);
	suite_add_tcase(s, not_root);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	harness_setup();
	ctl_setup();
	sr = srunner_create(ctl_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	clear_dropins();
	return failed ? 1 : 0;
}
