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
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <stdarg.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "feature.h"
#include "harness.h"
#include "wire.h"

#define CTL ISO_CTL_TEST_ROOT
#define CTL_HELPER CTL "/isospawn-helper"
#define CTL_NOSETUID CTL "/isospawn-helper-not-setuid"
#define CTL_NOSUID_DIR CTL "/nosuid"
#define CTL_TOOL CTL "/isospawnctl"
#define CTL_POLICY CTL "/isospawn.conf"
#define CTL_DROPINS CTL "/isospawn.d"
#define CTL_OTHER 4000040u /* the second caller of policy-ctl.conf.in */
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
	ck_assert_int_eq(
	    posix_spawn(&pid, argv[0], &fa, NULL, (char *const *)argv, (char *const *)envp), 0);
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
	const char *envp[] = { "PATH=/usr/bin:/bin", "ISOSPAWN_HELPER=" CTL_HELPER, NULL };
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

		while ((at = strstr(line, "@ROOT@")) != NULL ||
		       (at = strstr(line, "@CTL@")) != NULL) {
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
	if (fchmod(fileno(out), 0644) < 0 || fclose(out) != 0 ||
	    rename(CTL_POLICY ".tmp", CTL_POLICY) < 0)
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
	/* Every value, guests included, in the policy's own words. */
	ck_assert_msg(
	    strstr(o.out,
		   fmt(CTL_POLICY ":7: user:#65534: pool %s (50 uids), guests 64, "
				  "programs any, overrides any, allow-unsafe none, forward "
				  "PYTHONPATH PYTHONHOME LD_LIBRARY_PATH LANG LC_ALL LC_CTYPE "
				  "PYTHONIOENCODING PYTHONUTF8 TMPDIR, network none, limits "
				  "cpu=3600 as=8G nofile=1024 nproc=64 fsize=4G stack=8M "
				  "scratch=256M shm=64M memory=8G pids=512 cpus=unlimited, "
				  "timeout 120 s (default 60 s), seccomp "
				  "default errno, seccomp-deny none, landlock required (ABI 1 "
				  "or later), read none, write none, grants read, cgroup "
				  "optional, caller-limit none\n",
		       pool(1900102000, 1900102049))),
	    "%s", o.out);
	/* A rule that says nothing of network or timeout: the safe defaults. */
	ck_assert_msg(
	    strstr(o.out, fmt(CTL_POLICY ":17: user:#4000040: pool %s (50 uids), "
					 "guests 64, programs " T_PROBE ", overrides FOO, "
					 "allow-unsafe none, forward PYTHONPATH PYTHONHOME "
					 "LD_LIBRARY_PATH LANG LC_ALL LC_CTYPE PYTHONIOENCODING "
					 "PYTHONUTF8 TMPDIR, network none, limits cpu=3600 "
					 "as=8G nofile=1024 nproc=512 fsize=4G stack=8M "
					 "scratch=256M shm=64M memory=8G pids=512 cpus=unlimited, "
					 "timeout 3600 s (default 600 s), ",
			      pool(1900102050, 1900102099))),
	    "%s", o.out);
	ck_assert_msg(strstr(o.out, ", cgroup optional, caller-limit memory=1G pids=256\n"), "%s",
		      o.out);
	ck_assert_msg(has_line(o.out, "policy OK: 3 rules"), "%s", o.out);
	ck_assert_ptr_null(strstr(o.err, "not root"));

	/* The caller can check too, without the ownership checks. */
	become(T_CALLER);
	ctl((const char *[]){ "check", NULL }, &o);
	ck_assert_msg(o.status == 0, "exit %d: %s", o.status, o.err);
	ck_assert_msg(has_line(o.out, "policy OK: 3 rules"), "%s", o.out);
	ck_assert_msg(has_line(o.err, "isospawnctl: not root: ownership and modes were not "
				      "checked"),
		      "%s", o.err);
}
END_TEST

START_TEST(live_ctl_dropin_rule_admits_its_caller)
{
	const char *argv[] = { T_PROBE, "exit", "0", NULL };
	struct run r;
	struct out o;
	iso_conn *c;

	write_root_file(
	    CTL_DROPINS "/50-extra.conf",
	    fmt("# a package's rule\nrule user:#4000041 {\n\tpool %s\n\tprograms any\n}\n",
		pool(1900102100, 1900102109)),
	    0644);
	/* Not *.conf: never read, so its error does not count. */
	write_root_file(CTL_DROPINS "/50-extra.conf.dpkg-old", "rule nonsense\n", 0644);
	ctl((const char *[]){ "check", NULL }, &o);
	ck_assert_msg(o.status == 0, "exit %d: %s", o.status, o.err);
	ck_assert_msg(has_line(o.out, fmt(CTL_DROPINS "/50-extra.conf:2: user:#4000041: pool %s",
					  pool(1900102100, 1900102109))),
		      "%s", o.out);
	ck_assert_msg(has_line(o.out, "policy OK: 4 rules"), "%s", o.out);

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

/* The policy is the administrator's: its errors may quote a drop-in the
 * caller may not read (0600 here), so a caller is told only that the
 * policy is invalid, and the log says why. check (root) reports it. */
#define POLICY_INVALID "the policy is invalid; an administrator can run isospawnctl check"

START_TEST(live_ctl_dropin_error_is_reported_by_check_and_logged_not_told_to_callers)
{
	const char *expected = CTL_DROPINS "/20-bad.conf:4: expected 'host', 'none' or "
					   "'none-only' after 'network', got 'FOOCORP-2027'";
	char line[1024], log[8192];
	iso_conn *c = NULL;
	struct out o;
	int rc, sock;

	write_root_file(
	    CTL_DROPINS "/10-ok.conf",
	    fmt("rule user:#4000041 {\npool %s\nprograms any\n}\n", pool(1900102100, 1900102109)),
	    0644);
	write_root_file(
	    CTL_DROPINS "/20-bad.conf",
	    fmt("rule user:#4000042 {\npool %s\nprograms any\nnetwork FOOCORP-2027\n}\n",
		pool(1900102110, 1900102119)),
	    0600);
	write_root_file(CTL_DROPINS "/30-bad.conf", "rule user:#4000043 {\npool 5\n", 0644);
	ctl((const char *[]){ "check", NULL }, &o);
	ck_assert_int_eq(o.status, 1);
	ck_assert_str_eq(first_line(o.err, line, sizeof(line)), expected);
	/* Every file's error, not only the first. */
	ck_assert_msg(has_line(o.err, CTL_DROPINS "/30-bad.conf:2: expected FIRST-LAST"), "%s",
		      o.err);
	ck_assert_msg(has_line(o.err, "isospawnctl: the policy is invalid"), "%s", o.err);

	sock = private_dev_log();
	become_ctl(T_CALLER);
	rc = iso_open(&c);
	read_dev_log(sock, log, sizeof(log));
	ck_assert_int_eq(rc, -EIO);
	ck_assert_str_eq(iso_last_error(), POLICY_INVALID);
	ck_assert_msg(strstr(log, fmt("refuse-connect caller=65534(%s) reason=\"",
				      getpwuid(T_CALLER)->pw_name)) &&
			  strstr(log, expected),
		      "log: %s", log);
}
END_TEST

/* The helper asks the account services of each uid it leases, and
 * enumerates none (a walk would cost every start, and miss the users of
 * SSSD and LDAP); check still lists the accounts it can find in a pool, and
 * exits 1, while the helper serves the policy's callers. */
START_TEST(live_ctl_check_reports_a_pool_holding_an_account)
{
	struct passwd *pw;
	unsigned uid;
	iso_conn *c = NULL;
	struct out o;

	setpwent();
	while ((pw = getpwent()) != NULL && (pw->pw_uid < 2 || pw->pw_uid >= 0xfffffff0u))
		;
	ck_assert_msg(pw != NULL, "no account but root and uid 1 to test with");
	uid = (unsigned)pw->pw_uid;
	write_root_file(
	    CTL_DROPINS "/50-account.conf",
	    fmt("rule user:#4000041 {\npool %u-%u\nprograms any\n}\n", uid - 1, uid + 1), 0644);
	ctl((const char *[]){ "check", NULL }, &o);
	ck_assert_int_eq(o.status, 1);
	ck_assert_msg(has_line(o.err, fmt(CTL_DROPINS
					  "/50-account.conf:2: expected a pool "
					  "without accounts, got '%u-%u': uid %u is the user '%s' "
					  "(the helper leases it to no guest)",
					  uid - 1, uid + 1, uid, pw->pw_name)),
		      "%s", o.err);
	endpwent();
	ck_assert_ptr_null(strstr(o.err, "the policy is invalid"));
	ck_assert_ptr_null(strstr(o.out, "policy OK"));
	become_ctl(T_CALLER);
	ck_assert_msg(iso_open(&c) == 0, "%s", iso_last_error());
	iso_close(c);
}
END_TEST

/* isospawnctl check, run by root, reports `expected` first and exits 1;
 * then a caller is refused by the helper, told only that the policy is
 * invalid. */
static void check_and_helper_refuse(const char *expected)
{
	char line[1024];
	iso_conn *c = NULL;
	struct out o;

	ctl((const char *[]){ "check", NULL }, &o);
	ck_assert_int_eq(o.status, 1);
	ck_assert_str_eq(first_line(o.err, line, sizeof(line)), expected);
	become_ctl(T_CALLER);
	ck_assert_int_eq(iso_open(&c), -EACCES);
	ck_assert_str_eq(iso_last_error(), POLICY_INVALID);
}

START_TEST(live_ctl_group_writable_dropin_is_refused)
{
	write_root_file(
	    CTL_DROPINS "/30-loose.conf",
	    fmt("rule user:#4000041 {\npool %s\nprograms any\n}\n", pool(1900102100, 1900102109)),
	    0664);
	check_and_helper_refuse(CTL_DROPINS "/30-loose.conf: mode 0664 is writable by its group");
}
END_TEST

START_TEST(live_ctl_group_writable_dropin_dir_is_refused)
{
	ck_assert_int_eq(chmod(CTL_DROPINS, 0775), 0);
	check_and_helper_refuse(CTL_DROPINS ": mode 0775 is writable by its group");
}
END_TEST

/* A rule that restricts programs but lets a caller set
 * any variable (OPENSSL_CONF makes curl load a library of the caller's) is
 * refused by check, saying why, and by the helper. */
START_TEST(live_ctl_restricted_programs_without_an_overrides_list_are_refused)
{
	const char *expected = CTL_DROPINS
	    "/40-curl.conf:5: expected 'overrides NAME...' or "
	    "'overrides none' in the rule opened at line 1: it restricts 'programs', and with "
	    "'overrides any' a caller could set what makes them run code of its choosing "
	    "(OPENSSL_CONF, LUA_INIT, ...)";
	char line[1024];
	iso_conn *c = NULL;
	struct out o;

	write_root_file(
	    CTL_DROPINS "/40-curl.conf",
	    fmt("rule user:#4000041 {\npool %s\nprograms /usr/bin/curl\noverrides any\n}\n",
		pool(1900102100, 1900102109)),
	    0644);
	ctl((const char *[]){ "check", NULL }, &o);
	ck_assert_int_eq(o.status, 1);
	ck_assert_str_eq(first_line(o.err, line, sizeof(line)), expected);
	become_ctl(T_CALLER);
	ck_assert_int_eq(iso_open(&c), -EIO);
	ck_assert_str_eq(iso_last_error(), POLICY_INVALID);
}
END_TEST

/* A programs path the caller may change (below a directory others
 * may write, or through a link that leads there) makes a restricted list
 * 'programs any'; check says so, and is quiet about a path only root's. */
START_TEST(live_ctl_check_warns_about_programs_paths_others_may_change)
{
	const char *warning = ": " T_SHARED ": mode 0777 is writable by others: whoever may "
			      "change it picks the code guests run, as under 'programs any'";
	struct out o;

	unlink(CTL "/tool-link");
	ck_assert_int_eq(symlink(T_SHARED "/tool", CTL "/tool-link"), 0);
	write_root_file(CTL_DROPINS "/40-tool.conf",
			fmt("rule user:#4000041 {\npool %s\nprograms " T_PROBE " " CTL
			    "/tool-link " T_SHARED "/tool\noverrides none\n}\n",
			    pool(1900102100, 1900102109)),
			0644);
	ctl((const char *[]){ "check", NULL }, &o);
	unlink(CTL "/tool-link");
	ck_assert_msg(o.status == 0, "exit %d: %s", o.status, o.err);
	ck_assert_msg(has_line(o.err, fmt(CTL_DROPINS "/40-tool.conf:1: warning: programs path " CTL
						      "/tool-link%s",
					  warning)),
		      "%s", o.err);
	ck_assert_msg(
	    has_line(o.err,
		     fmt(CTL_DROPINS "/40-tool.conf:1: warning: programs path " T_SHARED "/tool%s",
			 warning)),
	    "%s", o.err);
	ck_assert_msg(strstr(o.err, "programs path " T_PROBE) == NULL, "%s", o.err);
}
END_TEST

/* A rule that matches the same user (by name or number) or the
 * same group as a rule above it is never tried, as the first match
 * decides; check says so. A user's rule below a group's is not shadowed
 * for certain (the user's process need not hold the group): no warning. */
START_TEST(live_ctl_check_warns_about_a_rule_an_earlier_rule_shadows)
{
	const char *file = CTL_DROPINS "/40-shadow.conf";
	const char *matches[] = { "group:#4000041", "user:#4000041", "user:#4000041",
				  "group:#4000041", "user:#65534" };
	char text[1024] = "";
	struct out o;

	/* Four lines a rule, each with a pool of two uids of its own. */
	for (unsigned i = 0; i < 5; i++)
		strcat(text, fmt("rule %s {\npool %s\nprograms any\n}\n", matches[i],
				 pool(1900102100 + 2 * i, 1900102101 + 2 * i)));
	write_root_file(file, text, 0644);
	ctl((const char *[]){ "check", NULL }, &o);
	unlink(file);
	ck_assert_msg(o.status == 0, "exit %d: %s", o.status, o.err);
	ck_assert_msg(has_line(o.err, fmt("%s:9: warning: rule user:#4000041 never decides: the "
					  "rule at %s:5 (user:#4000041) matches every caller it "
					  "would, and the first match decides",
					  file, file)),
		      "%s", o.err);
	ck_assert_msg(has_line(o.err, fmt("%s:13: warning: rule group:#4000041 never decides: the "
					  "rule at %s:1 (group:#4000041) matches every caller it "
					  "would, and the first match decides",
					  file, file)),
		      "%s", o.err);
	ck_assert_msg(has_line(o.err, fmt("%s:17: warning: rule user:#65534 never decides: the "
					  "rule at " CTL_POLICY ":7 (user:#65534) matches every "
					  "caller it would, and the first match decides",
					  file)),
		      "%s", o.err);
	ck_assert_msg(!strstr(o.err, ":5: warning") && !strstr(o.err, ":1: warning"), "%s", o.err);
}
END_TEST

START_TEST(live_ctl_check_of_named_files_finds_pools_overlapping_across_them)
{
	struct out o;

	write_root_file(
	    CTL "/candidate.conf",
	    fmt("rule user:#4000041 {\npool %s\nprograms any\n}\n", pool(1900102040, 1900102060)),
	    0644);
	ctl((const char *[]){ "check", CTL_POLICY, CTL "/candidate.conf", NULL }, &o);
	unlink(CTL "/candidate.conf");
	ck_assert_int_eq(o.status, 1);
	ck_assert_msg(
	    has_line(o.err, fmt(CTL "/candidate.conf:2: expected a pool apart from the "
				    "pool %s of the rule at " CTL_POLICY ":7, got '%s'",
				pool(1900102000, 1900102049), pool(1900102040, 1900102060))),
	    "%s", o.err);
}
END_TEST

/* ---- As visudo -c: every error at once, drafts, accounts that are gone ---- */

/* `text` as a file of root's, 0644, in /tmp: a draft where the helper
 * would refuse a policy. */
static void write_draft(char *path, size_t n, const char *text)
{
	int fd;

	snprintf(path, n, "/tmp/isospawn-draft.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	ck_assert_int_eq(fchmod(fd, 0644), 0);
	close(fd);
}

/* How many lines of `text` begin with `prefix`. */
static int count_lines(const char *text, const char *prefix)
{
	int n = 0;

	for (const char *l = text; *l != '\0';
	     l += strcspn(l, "\n") + (l[strcspn(l, "\n")] != '\0'))
		n += strncmp(l, prefix, strlen(prefix)) == 0;
	return n;
}

/* A draft anywhere is read as the helper would read it installed: each of
 * its three errors, one line each, in one run; where it lies is a warning,
 * and nothing is said of the installed policy. */
START_TEST(live_ctl_check_of_a_draft_prints_each_of_its_three_errors)
{
	char draft[64], text[1024], where[128];
	struct out o;

	snprintf(text, sizeof(text),
		 "rule user:#4000041 {\npool %s\nprograms any\nnetwork maybe\n}\n"
		 "rule user:#4000042 {\npool %s\nprograms /usr/bin/curl\n}\n",
		 pool(1900102101, 1900102100), pool(1900102110, 1900102119));
	write_draft(draft, sizeof(draft), text);
	ctl((const char *[]){ "check", draft, NULL }, &o);
	unlink(draft);
	ck_assert_int_eq(o.status, 1);
	snprintf(where, sizeof(where), "%s:", draft);
	/* Its three errors, and the warning about its place. */
	ck_assert_msg(count_lines(o.err, where) == 4, "%s", o.err);
	ck_assert_msg(has_line(o.err, fmt("%s:2: expected FIRST <= LAST after 'pool', got '%s'",
					  draft, pool(1900102101, 1900102100))),
		      "%s", o.err);
	ck_assert_msg(has_line(o.err, fmt("%s:4: expected 'host', 'none' or 'none-only' after "
					  "'network', got 'maybe'",
					  draft)),
		      "%s", o.err);
	ck_assert_msg(has_line(o.err, fmt("%s:9: expected 'overrides NAME...' or 'overrides none' "
					  "in the rule opened at line 6",
					  draft)),
		      "%s", o.err);
	ck_assert_msg(has_line(o.err, fmt("%s: warning: would be refused once installed there: "
					  "/tmp: mode 1777 is writable by others",
					  draft)),
		      "%s", o.err);
	ck_assert_msg(has_line(o.err, "isospawnctl: invalid: the helper would refuse every caller "
				      "with this policy"),
		      "%s", o.err);
	ck_assert_ptr_null(strstr(o.err, "the policy is invalid"));

	/* A good draft checks, with the same warning about its place. */
	snprintf(text, sizeof(text), "rule user:#4000041 {\npool %s\nprograms any\n}\n",
		 pool(1900102100, 1900102109));
	write_draft(draft, sizeof(draft), text);
	ctl((const char *[]){ "check", draft, NULL }, &o);
	unlink(draft);
	ck_assert_msg(o.status == 0, "exit %d: %s", o.status, o.err);
	ck_assert_msg(has_line(o.out, "policy OK: 1 rule"), "%s", o.out);
	ck_assert_msg(has_line(o.err, fmt("%s: warning: would be refused once installed there: "
					  "/tmp: mode 1777 is writable by others",
					  draft)),
		      "%s", o.err);
}
END_TEST

/* A draft and a drop-in named as an administrator types them in the
 * directory that holds them (isospawnctl check new.conf): read there, the
 * warning naming the draft's absolute path. */
START_TEST(live_ctl_check_of_drafts_named_from_their_directory)
{
	char draft[64], dropin[64], text[256];
	struct out o;

	snprintf(text, sizeof(text), "rule user:#4000041 {\npool %s\nprograms any\n}\n",
		 pool(1900102100, 1900102109));
	write_draft(draft, sizeof(draft), text);
	snprintf(text, sizeof(text), "rule user:#4000042 {\npool %s\nprograms any\n}\n",
		 pool(1900102110, 1900102119));
	write_draft(dropin, sizeof(dropin), text);
	ck_assert_int_eq(chdir("/tmp"), 0);
	ctl((const char *[]){ "check", draft + strlen("/tmp/"),
			      fmt("./%s", dropin + strlen("/tmp/")), NULL },
	    &o);
	unlink(draft);
	unlink(dropin);
	ck_assert_msg(o.status == 0, "exit %d: %s", o.status, o.err);
	ck_assert_msg(has_line(o.out, "policy OK: 2 rules"), "%s", o.out);
	ck_assert_msg(has_line(o.err, fmt("%s: warning: would be refused once installed there: "
					  "/tmp: mode 1777 is writable by others",
					  draft)),
		      "%s", o.err);
	/* One that is not there is named as typed. */
	ctl((const char *[]){ "check", "no/such/dir/new.conf", NULL }, &o);
	ck_assert_int_eq(o.status, 1);
	ck_assert_msg(has_line(o.err, "no/such/dir/new.conf: No such file or directory"), "%s",
		      o.err);
}
END_TEST

/* A drop-in naming an account that is gone (its package removed) makes
 * that rule match no one, said by check and logged by the helper; every
 * other caller is served as before. */
START_TEST(live_ctl_dropin_for_a_deleted_user_leaves_other_rules_working)
{
	const char *warning = CTL_DROPINS "/50-gone.conf:1: warning: no user "
					  "'isospawn-deleted-user': the rule matches no one";
	char log[8192];
	iso_conn *c;
	struct out o;
	int sock;

	write_root_file(CTL_DROPINS "/50-gone.conf",
			fmt("rule user:isospawn-deleted-user {\npool %s\nprograms any\n}\n",
			    pool(1900102100, 1900102109)),
			0644);
	ctl((const char *[]){ "check", NULL }, &o);
	ck_assert_msg(o.status == 0, "exit %d: %s", o.status, o.err);
	ck_assert_msg(has_line(o.err, warning), "%s", o.err);
	ck_assert_msg(has_line(o.out, "policy OK: 4 rules"), "%s", o.out);
	sock = private_dev_log();
	become_ctl(T_CALLER);
	c = open_conn();
	iso_close(c);
	read_dev_log(sock, log, sizeof(log));
	ck_assert_msg(strstr(log, fmt("policy-warning reason=\"%s\"", warning)), "log: %s", log);
}
END_TEST

/* What a rule inherits from the defaults block, and what it sets itself,
 * as check shows it. */
START_TEST(live_ctl_check_shows_what_a_rule_inherits_from_the_defaults)
{
	char draft[64], text[1024];
	struct out o;

	snprintf(text, sizeof(text),
		 "defaults {\nlimit as 2G\nguests 5\n}\n"
		 "rule user:#4000041 {\npool %s\nprograms any\nguests 3\n}\n",
		 pool(1900102100, 1900102109));
	write_draft(draft, sizeof(draft), text);
	ctl((const char *[]){ "check", draft, NULL }, &o);
	unlink(draft);
	ck_assert_msg(o.status == 0, "exit %d: %s", o.status, o.err);
	ck_assert_msg(strstr(o.out, ", guests 3, ") && strstr(o.out, " as=2G "), "%s", o.out);
}
END_TEST

/* The lines the helper logs reach the policy's audit-log too, root's and
 * 0600, each with its time and the helper's pid, and name the caller by
 * user name as well as uid. */
START_TEST(live_ctl_audit_log_gets_every_line_with_the_callers_name)
{
	const char *argv[] = { T_PROBE, "exit", "3", NULL };
	struct passwd *pw = getpwuid(T_CALLER);
	char log[8192], text[65536] = "", who[128];
	struct stat st;
	off_t start;
	int sock, status, fd;
	pid_t pid;
	ssize_t got;

	ck_assert_ptr_nonnull(pw);
	snprintf(who, sizeof(who), "caller=%u(%s) ", T_CALLER, pw->pw_name);
	start = stat(CTL "/audit.log", &st) == 0 ? st.st_size : 0;
	sock = private_dev_log();
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct run r;
		iso_conn *c;

		become_ctl(T_CALLER);
		c = open_conn();
		run_guest(c, argv, NULL, NULL, NULL, &r);
		iso_close(c);
		_exit(r.spawn_rc == 0 && r.exit_code == 3 ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "guest: %d", status);
	usleep(200000); /* the helper's last lines, after its client went */
	read_dev_log(sock, log, sizeof(log));
	ck_assert_int_eq(stat(CTL "/audit.log", &st), 0);
	ck_assert_msg(S_ISREG(st.st_mode) && st.st_uid == 0 && (st.st_mode & 07777) == 0600,
		      "mode %o uid %u", (unsigned)st.st_mode, (unsigned)st.st_uid);
	fd = open(CTL "/audit.log", O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	got = pread(fd, text, sizeof(text) - 1, start);
	close(fd);
	ck_assert_int_gt(got, 0);
	text[got] = '\0';
	for (const char *event = "connect \0spawn \0exit \0disconnect \0"; *event;
	     event += strlen(event) + 1) {
		const char *line = strstr(text, fmt("]: %s", event));
		char day[16], time[16];
		int helper;

		ck_assert_msg(line != NULL, "no %s line: %s", event, text);
		while (line > text && line[-1] != '\n')
			line--;
		ck_assert_msg(sscanf(line, "%10[0-9-]T%8[0-9:]Z isospawn-helper[%d]: ", day, time,
				     &helper) == 3,
			      "%s", line);
		ck_assert_msg(strstr(line, who) != NULL && strstr(line, who) < strchr(line, '\n'),
			      "%.200s", line);
		/* The same line went to syslog. */
		ck_assert_msg(
		    strstr(log, fmt("%.*s", (int)(strchr(line, '\n') - strstr(line, "]: ") - 3),
				    strstr(line, "]: ") + 3)),
		    "not in syslog: %.200s\n%s", line, log);
	}
}
END_TEST

/* Where no syslog daemon listens, the helper's lines are lost but for the
 * audit-log: check says so. */
START_TEST(live_ctl_check_says_when_no_syslog_socket_listens)
{
	char draft[64], text[256];
	struct out o;
	int sock = private_dev_log();

	ctl((const char *[]){ "check", NULL }, &o);
	ck_assert_msg(strstr(o.err, "syslog") == NULL, "%s", o.err);
	close(sock);
	ck_assert_int_eq(unlink("/dev/log"), 0);
	ctl((const char *[]){ "check", NULL }, &o);
	ck_assert_msg(o.status == 0, "exit %d: %s", o.status, o.err);
	ck_assert_msg(has_line(o.err, "isospawnctl: warning: no syslog socket at /dev/log: the "
				      "helper's log reaches only its audit-log " CTL "/audit.log"),
		      "%s", o.err);
	snprintf(text, sizeof(text), "rule user:#4000041 {\npool %s\nprograms any\n}\n",
		 pool(1900102100, 1900102109));
	write_draft(draft, sizeof(draft), text);
	ctl((const char *[]){ "check", draft, NULL }, &o);
	unlink(draft);
	ck_assert_msg(has_line(o.err, "isospawnctl: warning: no syslog socket at /dev/log: the "
				      "helper's log is lost; name an audit-log file in the policy "
				      "(isospawn.conf(5))"),
		      "%s", o.err);
}
END_TEST

/* An audit-log the helper cannot append to: check says why, and the
 * helper serves no one rather than lose the trail. */
START_TEST(live_ctl_audit_log_that_cannot_be_written_refuses_every_caller)
{
	char expected[512];
	iso_conn *c = NULL;
	struct out o;
	int rc;

	ck_assert_int_eq(rename(CTL "/audit.log", CTL "/audit.log.kept"), 0);
	ck_assert_int_eq(symlink("/dev/null", CTL "/audit.log"), 0);
	ctl((const char *[]){ "check", NULL }, &o);
	pid_t pid = fork();
	if (pid == 0) {
		become_ctl(T_CALLER);
		rc = iso_open(&c);
		_exit(rc == -EACCES && strcmp(iso_last_error(),
					      "the audit log cannot be written; "
					      "an administrator can run isospawnctl check") == 0
			  ? 0
			  : 1);
	}
	ck_assert_int_eq(waitpid(pid, &rc, 0), pid);
	unlink(CTL "/audit.log");
	ck_assert_int_eq(rename(CTL "/audit.log.kept", CTL "/audit.log"), 0);
	ck_assert_msg(WIFEXITED(rc) && WEXITSTATUS(rc) == 0, "the caller was not refused so");
	ck_assert_int_eq(o.status, 1);
	snprintf(expected, sizeof(expected),
		 CTL_POLICY
		 ": audit-log " CTL "/audit.log: " CTL
		 "/audit.log: expected a regular file of root's that no one else may write: the "
		 "helper refuses every caller until it can append to it");
	ck_assert_msg(has_line(o.err, expected), "%s", o.err);
}
END_TEST

/* Groups of the test's own, in a private mount namespace: t-staff (nobody
 * and root) and t-gate (root only), over a copy of /etc/group. */
#define STAFF_GID 4000160u
#define GATE_GID 4000161u
#define CTL_GATED CTL "/isospawn-helper-gated"

static void private_groups(void)
{
	char copy[128], line[1024];
	FILE *in, *out;

	ck_assert_msg(unshare(CLONE_NEWNS) == 0 &&
			  mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0,
		      "private mount namespace: %s", strerror(errno));
	snprintf(copy, sizeof(copy), CTL "/group.%d", (int)getpid());
	ck_assert_ptr_nonnull(in = fopen("/etc/group", "re"));
	ck_assert_ptr_nonnull(out = fopen(copy, "we"));
	while (fgets(line, sizeof(line), in) != NULL)
		fputs(line, out);
	fprintf(out, "t-staff:x:%u:nobody,root\nt-gate:x:%u:root\n", STAFF_GID, GATE_GID);
	fclose(in);
	ck_assert_int_eq(fclose(out), 0);
	ck_assert_int_eq(chmod(copy, 0644), 0);
	ck_assert_msg(mount(copy, "/etc/group", NULL, MS_BIND, NULL) == 0, "bind: %s",
		      strerror(errno));
	unlink(copy);
	/* The helper as installed: setuid, runnable by its group only. */
	test_install_file(ISO_BUILDDIR "/tests/isospawn-helper-ctl", CTL_GATED, 0755);
	ck_assert_int_eq(chown(CTL_GATED, 0, GATE_GID), 0);
	ck_assert_int_eq(chmod(CTL_GATED, 04750), 0);
}

/* Only the members of the helper's group may run it (4754
 * root:isospawn): check warns of a rule whose group has others, and the
 * library tells such a caller what is wrong. */
START_TEST(live_ctl_members_outside_the_helpers_group_are_told)
{
	const char *argv[] = { CTL_TOOL, "check", NULL };
	const char *envp[] = { "PATH=/usr/bin:/bin", "ISOSPAWN_HELPER=" CTL_GATED, NULL };
	iso_conn *c = NULL;
	struct out o;
	int rc;

	private_groups();
	write_root_file(
	    CTL_DROPINS "/60-staff.conf",
	    fmt("rule group:t-staff {\npool %s\nprograms any\n}\n", pool(1900102100, 1900102109)),
	    0644);
	run(argv, envp, &o);
	unlink(CTL_GATED);
	ck_assert_msg(o.status == 0, "exit %d: %s", o.status, o.err);
	ck_assert_msg(has_line(o.err, CTL_DROPINS
			       "/60-staff.conf:1: warning: group:t-staff has "
			       "members outside group t-gate (nobody): they cannot run the "
			       "setuid helper " CTL_GATED " nor reach isospawn.socket; add "
			       "them to group t-gate"),
		      "%s", o.err);
	/* The rule for the helper's own group draws no warning. */
	ck_assert_ptr_null(strstr(o.err, "60-gate"));

	test_install_file(ISO_BUILDDIR "/tests/isospawn-helper-ctl", CTL_GATED, 0755);
	ck_assert_int_eq(chown(CTL_GATED, 0, GATE_GID), 0);
	ck_assert_int_eq(chmod(CTL_GATED, 04750), 0);
	become(T_CALLER);
	setenv("ISOSPAWN_HELPER", CTL_GATED, 1);
	rc = iso_open(&c);
	ck_assert_int_eq(rc, -EACCES);
	ck_assert_str_eq(iso_last_error(), "cannot execute isospawn-helper at " CTL_GATED
					   ": Permission denied \u2014 is nobody in group t-gate?");
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
			  iso_last_error(),
		      "%s", iso_last_error());
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
	ck_assert_msg(strncmp(o.err,
			      "isospawn: isospawn-helper is not running as root: the "
			      "caller has no_new_privs set",
			      72) == 0,
		      "%s", o.err);
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
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
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

/* ---- list, stop, rule ---- */

/* isospawnctl as `uid` (or root, for 0), from a root test process that
 * stays root: a child drops for good and runs it; *o is shared. */
static void ctl_as(uid_t uid, const char *const *args, struct out *o)
{
	struct out *shared =
	    mmap(NULL, sizeof(*shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int status;
	pid_t pid;

	ck_assert_ptr_ne(shared, MAP_FAILED);
	shared->status = -1;
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (uid != 0 && (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 ||
				 setresuid(uid, uid, uid) < 0))
			_exit(SETUP_FAILED);
		ctl(args, shared);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "ctl_as(%u): status %d",
		      (unsigned)uid, status);
	memcpy(o, shared, sizeof(*o));
	munmap(shared, sizeof(*shared));
}

/* A guest of `caller`'s kept by a child process: three processes of
 * probe sleep-family (it, a child, a grandchild), with an override and
 * a caller's secret that no record may show. */
struct kept {
	pid_t keeper;
	int report; /* the keeper writes the outcome and code here */
	uid_t uid; /* the guest's */
};

/* The program keep_guest() runs (the probe, by any name). */
static const char *kept_program = T_PROBE;

static void keep_guest(uid_t caller, struct kept *k)
{
	const char *argv[] = { kept_program, "sleep-family", "120", NULL };
	int up[2], out[2];

	ck_assert_int_eq(pipe(up), 0);
	k->keeper = fork();
	ck_assert_int_ge(k->keeper, 0);
	if (k->keeper == 0) {
		iso_spec *spec;
		iso_guest *g;
		iso_conn *c;
		char buf[64];
		int32_t report[2];
		uint32_t uid;
		size_t got = 0;

		close(up[0]);
		setenv("MY_SECRET_TOKEN", "hunter2-in-the-caller", 1);
		become_ctl(caller);
		if (iso_open(&c) < 0 || iso_spec_new(&spec) < 0 || pipe2(out, O_CLOEXEC) < 0 ||
		    iso_spec_set_program(spec, argv[0]) < 0 || iso_spec_set_argv(spec, argv) < 0 ||
		    iso_spec_set_env(spec, "FOO", "hunter2-in-an-override") < 0 ||
		    iso_spec_set_stdio(spec, -1, out[1], -1) < 0 || iso_spawn(c, spec, &g) < 0) {
			fprintf(stderr, "keep_guest: %s\n", iso_last_error());
			_exit(SETUP_FAILED);
		}
		close(out[1]);
		while (got < sizeof(buf) - 1 && !memmem(buf, got, "ready\n", 6)) {
			ssize_t n = read(out[0], buf + got, sizeof(buf) - 1 - got);
			if (n <= 0)
				_exit(SETUP_FAILED);
			got += (size_t)n;
		}
		uid = (uint32_t)iso_guest_uid(g);
		if (write(up[1], &uid, sizeof(uid)) != sizeof(uid) || iso_wait(g, -1) < 0)
			_exit(SETUP_FAILED);
		report[0] = iso_guest_outcome(g);
		report[1] = iso_guest_code(g);
		(void)!write(up[1], report, sizeof(report));
		_exit(0);
	}
	close(up[1]);
	k->report = up[0];
	ck_assert_int_eq(read(k->report, &k->uid, sizeof(k->uid)), (ssize_t)sizeof(k->uid));
}

/* End the keeper (and with its connection, its guest). */
static void drop_guest(struct kept *k)
{
	kill(k->keeper, SIGKILL);
	waitpid(k->keeper, NULL, 0);
	close(k->report);
}

START_TEST(live_ctl_list_shows_a_guest_to_its_caller_and_root_not_another)
{
	char uid[16], want[128];
	struct kept k;
	struct out o;

	keep_guest(T_CALLER, &k);
	snprintf(uid, sizeof(uid), "%u", (unsigned)k.uid);
	/* Root reads every record itself. */
	ctl_as(0, (const char *[]){ "list", NULL }, &o);
	ck_assert_msg(o.status == 0, "%s", o.err);
	snprintf(want, sizeof(want), "nobody(65534)        %-10s", uid);
	ck_assert_msg(strstr(o.out, want) && strstr(o.out, "none    " T_PROBE "\n"), "%s", o.out);
	ck_assert_msg(strstr(o.out, "limits cpu=3600 as=8G nofile=1024 nproc=64 "), "%s", o.out);
	ck_assert_msg(strstr(o.out, ", timeout 60 s\n"), "%s", o.out);
	/* The caller, through its helper. */
	ctl_as(T_CALLER, (const char *[]){ "list", "--json", NULL }, &o);
	ck_assert_msg(o.status == 0, "%s", o.err);
	snprintf(want, sizeof(want),
		 "\"caller_uid\": 65534, \"caller\": \"nobody\", "
		 "\"guest_uid\": %s, ",
		 uid);
	ck_assert_msg(strstr(o.out, want), "%s", o.out);
	ck_assert_msg(strstr(o.out, "\"program\": \"" T_PROBE "\""), "%s", o.out);
	ck_assert_msg(strstr(o.out, "\"timeout_s\": 60, \"network\": \"none\""), "%s", o.out);
	/* Another caller sees nothing of it, and cannot stop it. */
	ctl_as(CTL_OTHER, (const char *[]){ "list", NULL }, &o);
	ck_assert_msg(o.status == 0, "%s", o.err);
	ck_assert_msg(strstr(o.out, "(no live guests)") && !strstr(o.out, uid), "%s", o.out);
	ctl_as(CTL_OTHER, (const char *[]){ "stop", uid, NULL }, &o);
	ck_assert_int_eq(o.status, 1);
	ck_assert_msg(strstr(o.err, "no live guest") && strstr(o.err, "of yours"), "%s", o.err);
	ck_assert_int_gt(processes_of(&k.uid, 1), 0);
	drop_guest(&k);
}
END_TEST

/* As `uid`, without isospawnctl (which sends STOP only for a guest its own
 * LIST showed): start the ctl helper on a socket of our own, as the library
 * does, and send it one STOP for a guest's uid. Runs in the caller's
 * process, whose socket the helper checks is its own. Exits with the
 * reply's type, or SETUP_FAILED. */
__attribute__((noreturn)) static void raw_stop(uint32_t guest_uid)
{
	static uint8_t buf[ISO_WIRE_MAX];
	struct iso_wire_msg m;
	char why[256];
	ssize_t n;
	long len;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		_exit(SETUP_FAILED);
	if (fork() == 0) {
		if (dup2(sv[1], ISO_HELPER_FD) < 0)
			_exit(SETUP_FAILED);
		execl(CTL_HELPER, "isospawn-helper", (char *)NULL);
		_exit(SETUP_FAILED);
	}
	close(sv[1]);
	n = recv(sv[0], buf, sizeof(buf), 0);
	if (n <= 0 || iso_wire_decode(buf, (size_t)n, &m, why, sizeof(why)) < 0 ||
	    m.type != ISO_MSG_HELLO || m.u.hello.err != 0)
		_exit(SETUP_FAILED);
	m = (struct iso_wire_msg){ .type = ISO_MSG_STOP, .id = 1 };
	m.u.stop.uid = guest_uid;
	len = iso_wire_encode(&m, buf, sizeof(buf));
	if (len <= 0 || send(sv[0], buf, (size_t)len, 0) != len)
		_exit(SETUP_FAILED);
	n = recv(sv[0], buf, sizeof(buf), 0);
	if (n <= 0 || iso_wire_decode(buf, (size_t)n, &m, why, sizeof(why)) < 0)
		_exit(SETUP_FAILED);
	_exit(m.type);
}

static int raw_stop_as(uid_t uid, uint32_t guest_uid)
{
	int status;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 ||
		    setresuid(uid, uid, uid) < 0)
			_exit(SETUP_FAILED);
		raw_stop(guest_uid);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) != SETUP_FAILED,
		      "raw_stop_as(%u): status %d", (unsigned)uid, status);
	return WEXITSTATUS(status);
}

/* The helper itself refuses a STOP for another caller's guest: a caller
 * that speaks the protocol need not ask isospawnctl, whose own list would
 * never offer it. Against a helper that did not compare the record's
 * caller, the guest was stopped. */
START_TEST(live_ctl_helper_refuses_a_stop_of_another_callers_guest)
{
	struct kept k;

	keep_guest(T_CALLER, &k);
	ck_assert_int_eq(raw_stop_as(CTL_OTHER, (uint32_t)k.uid), ISO_MSG_REFUSED);
	usleep(200000);
	ck_assert_int_eq(processes_of(&k.uid, 1), 3);
	/* The same message from the guest's own caller stops it. */
	ck_assert_int_eq(raw_stop_as(T_CALLER, (uint32_t)k.uid), ISO_MSG_DONE);
	drop_guest(&k);
}
END_TEST

/* A caller's program path reaches root's terminal
 * as the log shows it, in list and in stop: a byte a terminal may take for
 * a control sequence's start (0x9b, C1 CSI, which the wire lets through:
 * it is no control byte below 0x20) is escaped. */
#define ODD_PROBE          \
	T_BIN "/probe\x9b" \
	      "31m"
START_TEST(live_ctl_list_and_stop_escape_the_program_path)
{
	char uid[16];
	struct kept k;
	struct out o;

	ck_assert_int_eq(link(T_PROBE, ODD_PROBE), 0);
	kept_program = ODD_PROBE;
	keep_guest(T_CALLER, &k);
	snprintf(uid, sizeof(uid), "%u", (unsigned)k.uid);
	ctl_as(0, (const char *[]){ "list", NULL }, &o);
	unlink(ODD_PROBE);
	ck_assert_msg(o.status == 0, "%s", o.err);
	ck_assert_msg(strstr(o.out, T_BIN "/probe\\x9b31m\n") && !strchr(o.out, 0x9b), "%s", o.out);
	ctl_as(T_CALLER, (const char *[]){ "stop", uid, NULL }, &o);
	ck_assert_msg(o.status == 0, "%s", o.err);
	ck_assert_msg(strstr(o.out, T_BIN "/probe\\x9b31m)") && !strchr(o.out, 0x9b), "%s", o.out);
	drop_guest(&k);
}
END_TEST

/* A caller's program path in root's 'list --json' shows no C1 control
 * encoded as UTF-8 (U+009B, CSI to terminals that decode C1 from UTF-8,
 * though it is a well-formed sequence), and the output stays valid UTF-8
 * (an overlong '/', E0 80 AF, passed through would make Python's
 * json.loads refuse the whole list); nor a bidirectional control (U+202E
 * RIGHT-TO-LEFT OVERRIDE, U+2066, U+200F, U+061C), which reorders the
 * text around it on root's terminal or in a code review tool (Trojan
 * Source). */
#define UTF8_ODD_PROBE                  \
	T_BIN "/probe\xc2\x9b"          \
	      "31m\xe0\x80\xaf\xc3\xa9" \
	      "\xe2\x80\xae"            \
	      "txt.sh"                  \
	      "\xe2\x81\xa6"            \
	      "\xe2\x80\x8f"            \
	      "\xd8\x9c"                \
	      "x"

START_TEST(live_ctl_list_json_escapes_c1_and_bidi_controls_and_stays_valid_utf8)
{
	struct kept k;
	struct out o;

	ck_assert_int_eq(link(T_PROBE, UTF8_ODD_PROBE), 0);
	kept_program = UTF8_ODD_PROBE;
	keep_guest(T_CALLER, &k);
	ctl_as(0, (const char *[]){ "list", "--json", NULL }, &o);
	unlink(UTF8_ODD_PROBE);
	ck_assert_msg(o.status == 0, "%s", o.err);
	ck_assert_msg(strstr(o.out,
			     "\"program\": \"" T_BIN "/probe\\u009b31m"
			     "\\ufffd\\ufffd\\ufffd\xc3\xa9\\u202etxt.sh\\u2066\\u200f\\u061cx\""),
		      "%s", o.out);
	ck_assert_msg(!strstr(o.out, "\xc2\x9b") && !strstr(o.out, "\xe0\x80"), "%s", o.out);
	ck_assert_msg(!strstr(o.out, "\xe2\x80\xae") && !strstr(o.out, "\xe2\x81\xa6") &&
			  !strstr(o.out, "\xe2\x80\x8f") && !strstr(o.out, "\xd8\x9c"),
		      "%s", o.out);
	drop_guest(&k);
}
END_TEST

/* stop through the caller's own helper: the guest's whole namespace ends
 * (a child and a grandchild too), the caller sees it killed, the uid is
 * free of processes and its record gone. */
START_TEST(live_ctl_stop_ends_guest_with_grandchild_and_frees_its_uid)
{
	char uid[16];
	int32_t report[2];
	struct kept k;
	struct out o;

	keep_guest(T_CALLER, &k);
	snprintf(uid, sizeof(uid), "%u", (unsigned)k.uid);
	/* The probe, its child and grandchild (the reaper, pid 1 of the
	 * namespace, is root's). */
	ck_assert_int_eq(processes_of(&k.uid, 1), 3);
	ctl_as(T_CALLER, (const char *[]){ "stop", uid, NULL }, &o);
	ck_assert_msg(o.status == 0, "%s", o.err);
	ck_assert_msg(strstr(o.out, "stopped ") && strstr(o.out, T_PROBE), "%s", o.out);
	ck_assert_int_eq(processes_of(&k.uid, 1), 0);
	ck_assert_int_eq(read(k.report, report, sizeof(report)), (ssize_t)sizeof(report));
	ck_assert_int_eq(report[0], ISO_OUTCOME_SIGNALED);
	ck_assert_int_eq(report[1], SIGKILL);
	ctl_as(0, (const char *[]){ "list", NULL }, &o);
	ck_assert_msg(!strstr(o.out, uid), "%s", o.out);
	drop_guest(&k);
}
END_TEST

/* Root stops anyone's guest, by the ID list shows, and waits until its
 * helper has cleaned up. */
START_TEST(live_ctl_root_stops_any_guest_by_id)
{
	char uid[16], id[32];
	int32_t report[2];
	struct kept k;
	struct out o;
	const char *at;

	keep_guest(T_CALLER, &k);
	snprintf(uid, sizeof(uid), "%u", (unsigned)k.uid);
	ctl_as(0, (const char *[]){ "list", NULL }, &o);
	ck_assert_ptr_nonnull(at = strstr(o.out, "\n"));
	ck_assert_int_eq(sscanf(at + 1, "%31s", id), 1);
	ck_assert_ptr_nonnull(strchr(id, '.'));
	ctl_as(0, (const char *[]){ "stop", id, NULL }, &o);
	ck_assert_msg(o.status == 0, "%s", o.err);
	ck_assert_int_eq(processes_of(&k.uid, 1), 0);
	ck_assert_int_eq(read(k.report, report, sizeof(report)), (ssize_t)sizeof(report));
	ck_assert_int_eq(report[0], ISO_OUTCOME_SIGNALED);
	ctl_as(0, (const char *[]){ "list", NULL }, &o);
	ck_assert_msg(strstr(o.out, "(no live guests)"), "%s", o.out);
	/* A stopped guest is gone: stopping it again finds nothing. */
	ctl_as(0, (const char *[]){ "stop", id, NULL }, &o);
	ck_assert_int_eq(o.status, 1);
	drop_guest(&k);
}
END_TEST

/* The record is root's alone and names no value of the environment. */
START_TEST(live_ctl_lease_record_is_root_only_and_holds_no_values)
{
	char path[256], text[8192];
	struct stat st;
	struct kept k;
	ssize_t len;
	int fd;

	keep_guest(T_CALLER, &k);
	snprintf(path, sizeof(path), CTL "/run/leases/%u", (unsigned)k.uid);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_uint_eq(st.st_uid, 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0600);
	ck_assert_int_eq(stat(CTL "/run/leases", &st), 0);
	ck_assert_uint_eq(st.st_mode & 0777, 0700);
	ck_assert_int_ge(fd = open(path, O_RDONLY), 0);
	ck_assert_int_gt(len = read(fd, text, sizeof(text) - 1), 0);
	close(fd);
	ck_assert_ptr_null(memmem(text, (size_t)len, "hunter2", 7));
	ck_assert_ptr_nonnull(memmem(text, (size_t)len, T_PROBE, strlen(T_PROBE)));
	drop_guest(&k);
}
END_TEST

/* rule: the caller's own rule with every effective value, nothing of
 * another's; root may ask for anyone's. */
START_TEST(live_ctl_rule_shows_the_callers_rule_only)
{
	struct out o;

	ctl_as(T_CALLER, (const char *[]){ "rule", NULL }, &o);
	ck_assert_msg(o.status == 0, "%s", o.err);
	ck_assert_msg(has_line(o.out, "rule at " CTL_POLICY ":7, for user:#65534"), "%s", o.out);
	ck_assert_msg(
	    strstr(o.out, fmt("  pool          %s (50 uids)\n", pool(1900102000, 1900102049))),
	    "%s", o.out);
	ck_assert_msg(
	    strstr(o.out, "  limit nproc   64\n") &&
		strstr(o.out, "  limit cpu     3600 (built-in default)\n") &&
		strstr(o.out, "  guests        64 at once, over all of a caller's connections "
			      "(from defaults)\n") &&
		strstr(o.out, "  timeout       at most 120 s; 60 s unless asked\n") &&
		strstr(o.out, "  network       none (guests may ask for host)\n") &&
		strstr(o.out, "  grants        read (callers lend what they open, read-only)\n") &&
		strstr(o.out, "  overrides     any name that is not loader-level (built-in "
			      "default)\n") &&
		strstr(o.out, "  caller-limit  none (each guest bounded alone) (built-in "
			      "default)\n"),
	    "%s", o.out);
	ck_assert_msg(!strstr(o.out, "4000040") && !strstr(o.out, "FOO") &&
			  !strstr(o.out, pool(1900102050, 1900102099)),
		      "%s", o.out);

	ctl_as(CTL_OTHER, (const char *[]){ "rule", NULL }, &o);
	ck_assert_msg(o.status == 0, "%s", o.err);
	ck_assert_msg(has_line(o.out, "rule at " CTL_POLICY ":17, for user:#4000040") &&
			  strstr(o.out, "  programs      " T_PROBE "\n") &&
			  strstr(o.out, "  overrides     FOO\n") &&
			  strstr(o.out, "  caller-limit  memory=1G pids=256, all of a caller's "
					"guests together\n") &&
			  !strstr(o.out, "65534"),
		      "%s", o.out);

	ctl_as(0, (const char *[]){ "rule", "nobody", NULL }, &o);
	ck_assert_msg(o.status == 0, "%s", o.err);
	ck_assert_msg(has_line(o.out, "rule at " CTL_POLICY ":7, for user:#65534"), "%s", o.out);
}
END_TEST

/* ---- The socket-activated helper, without systemd as PID 1 ---- */

#define CTL_SOCKET CTL "/isospawn.sock"
#define ACTIVATE "/usr/bin/systemd-socket-activate"
#define SETPRIV "/usr/bin/setpriv"
#define GROUPED_CALLER 4000050u /* matched through group 4000150 only */

/* systemd-socket-activate (Debian's systemd package) with --seqpacket
 * and --accept, and the kernel's SO_PEERGROUPS. */
static const char *socket_activation_missing(void)
{
	static char why[256];
	gid_t groups[8];
	socklen_t len = sizeof(groups);
	int sv[2];

	if (feature_hidden("socket"))
		return "socket activation hidden by ISOSPAWN_TEST_HIDE";
	if (access(ACTIVATE, X_OK) < 0)
		return ACTIVATE " is missing (Debian: apt-get install systemd)";
	if (access(SETPRIV, X_OK) < 0)
		return SETPRIV " is missing (Debian: apt-get install util-linux)";
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return "no AF_UNIX SOCK_SEQPACKET sockets";
	if (getsockopt(sv[0], SOL_SOCKET, SO_PEERGROUPS, groups, &len) < 0) {
		snprintf(why, sizeof(why), "SO_PEERGROUPS: %s (Linux 4.13 or later)",
			 strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return why;
	}
	close(sv[0]);
	close(sv[1]);
	return NULL;
}

/* The unit's CapabilityBoundingSet= as setpriv(1) writes it:
 * "-all,+setuid,+setgid,...". */
static void unit_capabilities(char *caps, size_t n)
{
	FILE *f = fopen(ISO_SRCDIR "/systemd/isospawn@.service.in", "r");
	char line[1024], *word, *rest;

	ck_assert_ptr_nonnull(f);
	strlcpy(caps, "-all", n);
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strncmp(line, "CapabilityBoundingSet=", 22) != 0)
			continue;
		for (word = strtok_r(line + 22, " \n", &rest); word != NULL;
		     word = strtok_r(NULL, " \n", &rest)) {
			strlcat(caps, ",+", n);
			for (char *c = word + 4; *c != '\0'; c++)
				*c = (char)tolower((unsigned char)*c);
			strlcat(caps, word + 4, n);
		}
	}
	fclose(f);
	ck_assert_msg(strstr(caps, "+sys_admin") != NULL, "no CapabilityBoundingSet: %s", caps);
}

/* Whether a socket listens on `path` (in this network namespace). */
/* Whether process `pid` holds the socket of inode `inode`. */
static int holds_socket(pid_t pid, unsigned long inode)
{
	char dir[64], want[48], got[48];
	struct dirent *e;
	ssize_t len;
	int found = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	snprintf(want, sizeof(want), "socket:[%lu]", inode);
	d = opendir(dir);
	while (d != NULL && !found && (e = readdir(d)) != NULL) {
		len = readlinkat(dirfd(d), e->d_name, got, sizeof(got) - 1);
		if (len <= 0)
			continue;
		got[len] = '\0';
		found = strcmp(got, want) == 0;
	}
	if (d != NULL)
		closedir(d);
	return found;
}

/* Whether process `pid` listens on `path`. /proc/net/unix lists the
 * sockets of every mount namespace, and a run beside this one (CI runs two
 * suites at once) has its own socket of the same path: the one that counts
 * is the one `pid` holds. */
static int listening(pid_t pid, const char *path)
{
	char line[4096], name[4096];
	unsigned long flags, inode;
	int found = 0;
	FILE *f = fopen("/proc/net/unix", "re");

	while (f != NULL && !found && fgets(line, sizeof(line), f) != NULL)
		found = sscanf(line, "%*s %*s %*s %lx %*s %*s %lu %4095s", &flags, &inode, name) ==
			    3 &&
			strcmp(name, path) == 0 && (flags & 0x10000) && holds_socket(pid, inode);
	if (f != NULL)
		fclose(f);
	return found;
}

/* As root: systemd-socket-activate --seqpacket --accept on `path`, starting
 * the ctl helper for each connection as systemd starts isospawn@.service:
 * connection on fd 3, run as root (not made root by the setuid bit), with
 * no_new_privs and only the unit's capabilities. It dies with this test's
 * process. */
static void start_activator(const char *path)
{
	char caps[512];
	pid_t pid;

	unit_capabilities(caps, sizeof(caps));
	unlink(path);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		/* Its chatter (one line per connection) is not the test's. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || null < 0 || dup2(null, 0) < 0 ||
		    dup2(null, 1) < 0 || dup2(null, 2) < 0)
			_exit(SETUP_FAILED);
		execl(SETPRIV, "setpriv", "--no-new-privs", "--bounding-set", caps, "--", ACTIVATE,
		      "--seqpacket", "--accept", "-l", path, CTL_HELPER, (char *)NULL);
		_exit(SETUP_FAILED);
	}
	/* Until it listens: it binds (the path appears) before it listens, and
	 * a connect between the two is refused. A listening socket has
	 * __SO_ACCEPTCON (0x10000) in /proc/net/unix's flags. */
	for (int i = 0; i < 100 && !listening(pid, path); i++)
		usleep(50000);
	/* The unit's SocketMode=0660 with group isospawn; here anyone. */
	ck_assert_msg(chmod(path, 0666) == 0, "%s: %s", path, strerror(errno));
}

/* The guest's environment through the connection `c`. */
static void socket_env(iso_conn *c, struct run *r)
{
	const char *argv[] = { T_PROBE, "env", NULL };
	const char *overrides[] = { "LANG=C.UTF-8", "FOO=bar", NULL };

	run_guest(c, argv, overrides, NULL, NULL, r);
	ck_assert_msg(r->spawn_rc == 0, "spawn: %s", r->msg);
	ck_assert_int_eq(r->exit_code, 0);
}

/* The issue's case: a service with no_new_privs. The setuid helper cannot
 * become root for it and says so; the socket serves it, with the same
 * guarantees: the secret is withheld, PATH is the fixed one, an override
 * wins and a loader-level one is refused by name, the guest gets a uid of
 * the caller's own pool. */
START_TEST(live_ctl_socket_serves_a_no_new_privs_caller_with_the_same_guarantees)
{
	const char *ids[] = { T_PROBE, "ids", NULL };
	const char *bad[] = { "LD_PRELOAD=/tmp/evil.so", NULL };
	struct run r;
	iso_conn *c;

	start_activator(CTL_SOCKET);
	setenv("MY_SECRET_TOKEN", "hunter2-socket-secret", 1);
	setenv("PATH", "/home/evil/bin:/usr/bin", 1);
	setenv("LANG", "fr_FR.UTF-8", 1);
	become(T_CALLER);
	ck_assert_int_eq(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	refused_not_root(CTL_HELPER, "the caller has no_new_privs set");

	unsetenv("ISOSPAWN_HELPER");
	setenv("ISOSPAWN_SOCKET", CTL_SOCKET, 1);
	c = open_conn();
	socket_env(c, &r);
	ck_assert_ptr_null(strstr(r.out, "hunter2"));
	ck_assert_ptr_null(strstr(r.out, "MY_SECRET_TOKEN"));
	ck_assert(has_line(r.out, "PATH=" ISO_GUEST_PATH "\n"));
	ck_assert(has_line(r.out, "LANG=C.UTF-8\n"));
	ck_assert(!has_line(r.out, "LANG=fr_FR"));
	ck_assert(has_line(r.out, "FOO=bar\n"));
	run_guest(c, ids, bad, NULL, NULL, &r);
	ck_assert_int_eq(r.spawn_rc, -EACCES);
	ck_assert_msg(strstr(r.msg, "LD_PRELOAD") && !strstr(r.msg, "/tmp/evil.so"), "%s", r.msg);
	run_guest(c, ids, NULL, NULL, NULL, &r);
	ck_assert_msg(r.spawn_rc == 0, "spawn: %s", r.msg);
	ck_assert_uint_ge(r.uid, T_POOL(1900102000u));
	ck_assert_uint_le(r.uid, T_POOL(1900102049u));
	iso_close(c);
}
END_TEST

/* Who the caller is comes from the kernel: SO_PEERCRED for the uid (the
 * caller's rule), SO_PEERGROUPS for a rule that matches a supplementary
 * group; and isospawnctl rule through the socket shows the caller's own. */
START_TEST(live_ctl_socket_caller_is_the_peer_with_its_groups)
{
	const char *exit0[] = { T_PROBE, "exit", "0", NULL };
	gid_t group = 4000150;
	const char *argv[] = { CTL_TOOL, "rule", NULL };
	const char *envp[] = { "ISOSPAWN_SOCKET=" CTL_SOCKET, NULL };
	struct run r;
	struct out o;
	iso_conn *c;

	start_activator(CTL_SOCKET);
	ck_assert(setgroups(1, &group) == 0 &&
		  setresgid(GROUPED_CALLER, GROUPED_CALLER, GROUPED_CALLER) == 0 &&
		  setresuid(GROUPED_CALLER, GROUPED_CALLER, GROUPED_CALLER) == 0);
	ck_assert_int_eq(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	setenv("ISOSPAWN_SOCKET", CTL_SOCKET, 1);
	c = open_conn();
	run_guest(c, exit0, NULL, NULL, NULL, &r);
	iso_close(c);
	ck_assert_msg(r.spawn_rc == 0, "spawn: %s", r.msg);
	ck_assert_uint_ge(r.uid, T_POOL(1900102200u));
	ck_assert_uint_le(r.uid, T_POOL(1900102209u));
	run(argv, envp, &o);
	ck_assert_msg(o.status == 0, "%s", o.err);
	ck_assert_msg(has_line(o.out, "rule at " CTL_POLICY ":26, for group:#4000150"), "%s",
		      o.out);
}
END_TEST

#define OWN_VIEW T_SHARED "/own-view" /* a tmpfs only the caller's namespace has */

static void network_host(iso_spec *spec, void *arg)
{
	(void)arg;
	ck_assert_int_eq(iso_spec_set_network(spec, ISO_NETWORK_HOST), 0);
}

static void lend_own_view(iso_spec *spec, void *arg)
{
	(void)arg;
	ck_assert_int_eq(iso_spec_add_read_path(spec, OWN_VIEW), 0);
}

/* A unit's sandbox holds for its guests through the socket: a caller in
 * namespaces of its own (a unit's PrivateNetwork=, InaccessiblePaths=,
 * here an empty tmpfs over /usr/share/doc) gets guests built from its own
 * mounts and, for network host, in its own network; and what it lends is
 * what its own namespace shows. */
START_TEST(live_ctl_socket_guest_sees_no_more_than_its_caller)
{
	const char *const script =
	    "ls -A /usr/share/doc | wc -l; readlink /proc/self/ns/net; cat " OWN_VIEW "/mine";
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	char want[128], net[64];
	struct run r;
	iso_conn *c;

	start_activator(CTL_SOCKET);
	ck_assert_int_eq(mkdir(OWN_VIEW, 0755), 0);
	ck_assert(unshare(CLONE_NEWNS | CLONE_NEWNET) == 0 &&
		  mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 &&
		  mount("tmpfs", "/usr/share/doc", "tmpfs", 0, "size=16k") == 0 &&
		  mount("tmpfs", OWN_VIEW, "tmpfs", 0, "mode=0755,size=16k") == 0);
	write_root_file(OWN_VIEW "/mine", "its own\n", 0644);
	become(T_CALLER);
	ck_assert_int_eq(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	setenv("ISOSPAWN_SOCKET", CTL_SOCKET, 1);
	unsetenv("ISOSPAWN_HELPER");
	ck_assert_int_gt(readlink("/proc/self/ns/net", net, sizeof(net) - 1), 0);
	net[strcspn(net, "]") + 1] = '\0';
	c = open_conn();
	run_guest(c, argv, NULL, network_host, NULL, &r);
	ck_assert_msg(r.spawn_rc == 0, "spawn: %s", r.msg);
	snprintf(want, sizeof(want), "0\n%s\n", net);
	ck_assert_msg(strncmp(r.out, want, strlen(want)) == 0, "want %sgot %s%s", want, r.out,
		      r.err);
	run_guest(c, argv, NULL, lend_own_view, NULL, &r);
	ck_assert_msg(r.spawn_rc == 0, "spawn: %s", r.msg);
	ck_assert_msg(has_line(r.out, "its own"), "%s%s", r.out, r.err);
	iso_close(c);
}
END_TEST

/* With neither ISOSPAWN_SOCKET nor ISOSPAWN_HELPER, libisospawn tries
 * isospawn.socket's path first and falls back to the setuid helper. Here
 * /run is a tmpfs of this test's own, so the socket is the test's. */
START_TEST(live_ctl_library_tries_the_socket_first_then_the_setuid_helper)
{
	const char *cli[] = { T_CLI, "--", T_PROBE, "exit", "7", NULL };
	const char *envp[] = { "LD_LIBRARY_PATH=" T_LIB, NULL };
	iso_conn *c = NULL;
	struct out o;
	pid_t pid;
	int status;

	ck_assert(unshare(CLONE_NEWNS) == 0 &&
		  mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 &&
		  mount("tmpfs", "/run", "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755") == 0);
	/* No socket: the setuid helper at its compiled-in path, which this
	 * build has not installed - missing (ENOENT), or below a directory
	 * the caller may not search (EACCES: make distcheck's build tree is
	 * 0700). Either names the helper: the library fell back to it. */
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int rc;

		become(T_CALLER);
		unsetenv("ISOSPAWN_HELPER");
		rc = iso_open(&c);
		_exit(
		    (rc == -ENOENT &&
		     strstr(iso_last_error(), "isospawn-helper not found at ") != NULL) ||
			    (rc == -EACCES &&
			     strstr(iso_last_error(), "cannot execute isospawn-helper at ") != NULL)
			? 0
			: 1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "fallback: %d", status);

	start_activator("/run/isospawn.sock");
	become(T_CALLER);
	unsetenv("ISOSPAWN_HELPER");
	ck_assert_int_eq(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	c = open_conn();
	iso_close(c);
	/* The CLI too: a no_new_privs shell user gets the guest's status. */
	run(cli, envp, &o);
	ck_assert_msg(o.status == 7, "exit %d: %s", o.status, o.err);
}
END_TEST

static Suite *ctl_suite(void)
{
	Suite *s = suite_create("live_ctl");
	TCase *policy = tcase_create("policy");
	TCase *not_root = tcase_create("not_root");
	TCase *guests = tcase_create("guests");
	TCase *sock = tcase_create("socket");
	const char *no_socket = socket_activation_missing();

	/* Checked: in each test's process, as root, before it becomes a
	 * caller. */
	tcase_add_checked_fixture(policy, clear_dropins, NULL);
	tcase_add_test(policy, live_ctl_check_summarizes_each_rule);
	tcase_add_test(policy, live_ctl_dropin_rule_admits_its_caller);
	tcase_add_test(policy,
		       live_ctl_dropin_error_is_reported_by_check_and_logged_not_told_to_callers);
	tcase_add_test(policy, live_ctl_check_reports_a_pool_holding_an_account);
	tcase_add_test(policy, live_ctl_group_writable_dropin_is_refused);
	tcase_add_test(policy, live_ctl_group_writable_dropin_dir_is_refused);
	tcase_add_test(policy, live_ctl_check_of_named_files_finds_pools_overlapping_across_them);
	tcase_add_test(policy, live_ctl_restricted_programs_without_an_overrides_list_are_refused);
	tcase_add_test(policy, live_ctl_check_warns_about_programs_paths_others_may_change);
	tcase_add_test(policy, live_ctl_check_warns_about_a_rule_an_earlier_rule_shadows);
	tcase_add_test(policy, live_ctl_check_of_a_draft_prints_each_of_its_three_errors);
	tcase_add_test(policy, live_ctl_check_of_drafts_named_from_their_directory);
	tcase_add_test(policy, live_ctl_dropin_for_a_deleted_user_leaves_other_rules_working);
	tcase_add_test(policy, live_ctl_check_shows_what_a_rule_inherits_from_the_defaults);
	tcase_add_test(policy, live_ctl_audit_log_gets_every_line_with_the_callers_name);
	tcase_add_test(policy, live_ctl_check_says_when_no_syslog_socket_listens);
	tcase_add_test(policy, live_ctl_audit_log_that_cannot_be_written_refuses_every_caller);
	tcase_add_test(policy, live_ctl_members_outside_the_helpers_group_are_told);
	tcase_add_test(not_root, live_ctl_no_new_privs_caller_is_told_in_one_line);
	tcase_add_test(not_root, live_ctl_helper_without_setuid_bit_is_told);
	tcase_add_test(not_root, live_ctl_helper_on_nosuid_mount_is_told);
	tcase_add_checked_fixture(guests, clear_dropins, NULL);
	tcase_add_test(guests, live_ctl_list_shows_a_guest_to_its_caller_and_root_not_another);
	tcase_add_test(guests, live_ctl_stop_ends_guest_with_grandchild_and_frees_its_uid);
	tcase_add_test(guests, live_ctl_root_stops_any_guest_by_id);
	tcase_add_test(guests, live_ctl_lease_record_is_root_only_and_holds_no_values);
	tcase_add_test(guests, live_ctl_helper_refuses_a_stop_of_another_callers_guest);
	tcase_add_test(guests, live_ctl_rule_shows_the_callers_rule_only);
	tcase_add_test(guests, live_ctl_list_and_stop_escape_the_program_path);
	tcase_add_test(guests,
		       live_ctl_list_json_escapes_c1_and_bidi_controls_and_stays_valid_utf8);
	tcase_set_timeout(guests, 60);
	suite_add_tcase(s, guests);
	tcase_add_checked_fixture(sock, clear_dropins, NULL);
	tcase_add_unless(
	    sock, live_ctl_socket_serves_a_no_new_privs_caller_with_the_same_guarantees, no_socket);
	tcase_add_unless(sock, live_ctl_socket_caller_is_the_peer_with_its_groups, no_socket);
	tcase_add_unless(sock, live_ctl_socket_guest_sees_no_more_than_its_caller, no_socket);
	tcase_add_unless(sock, live_ctl_library_tries_the_socket_first_then_the_setuid_helper,
			 no_socket);
	tcase_set_timeout(sock, 60);
	suite_add_tcase(s, sock);
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
