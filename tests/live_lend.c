/*
 * live_lend.c - what a caller lends its guest (isospawn.conf(5), grants),
 * through the real setuid helper, as an unprivileged caller: a workdir
 * whose results come back the caller's own, a read grant of the caller's
 * 0700 directory, a working directory, a file system that cannot be
 * idmapped; and the loopback of a guest of network none.
 *
 * A program the packages did not install, or a kernel feature the check
 * needs, is a SKIP naming it.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "feature.h"
#include "harness.h"

#define LEND T_SHARED "/lend" /* T_CALLER's own, 0700, made by main() */
#define PYTHON "/usr/bin/python3"

static void make_dir(const char *path, mode_t mode)
{
	ck_assert_msg(mkdir(path, mode) == 0 || errno == EEXIST, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(chmod(path, mode), 0);
}

static void make_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	ck_assert_msg(fd >= 0, "%s: %s", path, strerror(errno));
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	ck_assert_int_eq(close(fd), 0);
}

/* As root: a fresh 0700 directory of the caller's below LEND, named for
 * the check. */
static void own_dir(char *dir, size_t n, const char *name)
{
	snprintf(dir, n, LEND "/%s-%d", name, (int)getpid());
	make_dir(dir, 0700);
	ck_assert_int_eq(chown(dir, T_CALLER, T_CALLER), 0);
}

/* One guest on a connection of its own. */
static void run(const char *const *argv, spec_hook hook, void *arg, struct run *r)
{
	iso_conn *c = open_conn();

	run_guest(c, argv, NULL, hook, arg, r);
	iso_close(c);
}

/* ---- nftw() callbacks: it passes no argument, so one check at a time ---- */

static int not_the_callers;
static char not_the_callers_path[512];

static int owned_by_caller(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)flag;
	(void)ftw;
	if ((st->st_uid != T_CALLER || st->st_gid != T_CALLER) && not_the_callers++ == 0)
		snprintf(not_the_callers_path, sizeof(not_the_callers_path), "%s (%u:%u)", path,
			 (unsigned)st->st_uid, (unsigned)st->st_gid);
	return 0;
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

/* The CLI run from dir. The check's process stays there: the caller may
 * not enter the build tree again (make distcheck's is 0700). */
static void run_in(const char *dir, const char *const *args, struct run *r)
{
	ck_assert_int_eq(chdir(dir), 0);
	run_cli(args, NULL, r);
}

/* The case: a job run in the caller's own directory with
 * --workdir ., its script named relative to it, leaves files, directories,
 * a symbolic link and a mode it chose; every one of them is the caller's,
 * which reads them and removes them all as its own. */
START_TEST(live_workdir_results_are_the_callers_own)
{
	const char *args[] = { "--workdir", ".", "--", "/bin/sh", "job.sh", NULL };
	char dir[256], path[512], text[64];
	struct run r;

	own_dir(dir, sizeof(dir), "workdir");
	become(T_CALLER);
	snprintf(path, sizeof(path), "%s/job.sh", dir);
	make_file(path, "pwd\nmkdir -p out/sub && echo result > out/sub/r.txt\n"
			"echo top > top.txt && chmod 640 top.txt && ln -s top.txt link\n"
			"id -u\n");
	run_in(dir, args, &r);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s%s", r.exit_code, r.out, r.err);
	ck_assert_msg(strncmp(r.out, dir, strlen(dir)) == 0 && r.out[strlen(dir)] == '\n',
		      "the guest started in %s", r.out);
	/* It ran as a pool uid, not as the caller. */
	ck_assert_msg(atoi(strchr(r.out, '\n') + 1) != (int)T_CALLER, "%s", r.out);
	snprintf(path, sizeof(path), "%s/out/sub/r.txt", dir);
	ck_assert_int_ge(read_text(path, text, sizeof(text)), 0);
	ck_assert_str_eq(text, "result\n");
	not_the_callers = 0;
	ck_assert_int_eq(nftw(dir, owned_by_caller, 16, FTW_PHYS), 0);
	ck_assert_msg(not_the_callers == 0, "%d entries are not the caller's: %s", not_the_callers,
		      not_the_callers_path);
	ck_assert_int_eq(nftw(dir, remove_one, 16, FTW_PHYS | FTW_DEPTH), 0);
}
END_TEST

/* A program in what the caller lends (its own 0700 directory, where no
 * pool uid reaches it on the host) runs as the guest finds it there,
 * idmapped: as the caller could run it. Outside the tree the caller's
 * namespace still has it, as the guest's uid reaches it. */
START_TEST(live_program_in_the_workdir_runs)
{
	const char *args[] = { "--workdir", ".", "--", "./solver", "in", NULL };
	char dir[256], path[512];
	struct run r;

	own_dir(dir, sizeof(dir), "program");
	become(T_CALLER);
	snprintf(path, sizeof(path), "%s/solver", dir);
	make_file(path, "#!/bin/sh\necho solved \"$1\"\n");
	ck_assert_int_eq(chmod(path, 0700), 0);
	run_in(dir, args, &r);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s%s", r.exit_code, r.out, r.err);
	ck_assert_str_eq(r.out, "solved in\n");
}
END_TEST

static void lend_for_reading(iso_spec *spec, void *dir)
{
	ck_assert_int_eq(iso_spec_add_read_path(spec, dir), 0);
}

/* A read grant of the caller's own 0700 directory: the guest reads its
 * 0600 file as the caller would, and writes nothing there (EROFS). A
 * caller that cannot open the directory itself lends nothing: its own
 * open's error, before anything starts. */
START_TEST(live_read_grant_of_the_callers_0700_directory)
{
	char dir[256], file[512], script[1200], want[600];
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	struct run r;
	pid_t pid;
	int status;

	own_dir(dir, sizeof(dir), "read");
	snprintf(file, sizeof(file), "%s/secret.txt", dir);
	snprintf(script, sizeof(script), "cat %s; : > %s/new", file, dir);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		become(T_SECOND);
		run(argv, lend_for_reading, dir, &r);
		snprintf(want, sizeof(want), "read grant %s: Permission denied", dir);
		_exit(r.spawn_rc == -EACCES && strcmp(r.msg, want) == 0 ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "another caller lent what it cannot open");

	become(T_CALLER);
	make_file(file, "the caller's\n");
	run(argv, lend_for_reading, dir, &r);
	ck_assert_msg(r.spawn_rc == 0, "spawn: %s", r.msg);
	ck_assert_msg(has_line(r.out, "the caller's") && strstr(r.err, "Read-only file system"),
		      "out: %s err: %s", r.out, r.err);
}
END_TEST

/* A grant is named the caller's way: through a symbolic link it is the
 * link's target the guest gets, at the target's path; a path that does
 * not exist is isospawn's refusal (125) naming it, not the program's
 * "not found" (127). */
START_TEST(live_cli_grant_through_a_link_and_a_missing_one)
{
	char dir[256], link[300], file[300], script[700];
	const char *through[] = { "--read", link, "--", "/bin/sh", "-c", script, NULL };
	const char *missing[] = { "--read", "/nonexistent/grant", "--", "/bin/true", NULL };
	struct run r;

	own_dir(dir, sizeof(dir), "link");
	snprintf(link, sizeof(link), "%s.link", dir);
	snprintf(file, sizeof(file), "%s/data", dir);
	snprintf(script, sizeof(script), "cat %s/data", dir);
	become(T_CALLER);
	make_file(file, "through the link\n");
	ck_assert_int_eq(symlink(dir, link), 0);
	run_cli(through, NULL, &r);
	unlink(link);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
	ck_assert_str_eq(r.out, "through the link\n");

	run_cli(missing, NULL, &r);
	ck_assert_int_eq(r.exit_code, 125);
	ck_assert_str_eq(r.err,
			 "isospawn: read grant /nonexistent/grant: No such file or directory\n");
}
END_TEST

/* Lending what the guest's tree already shows read-only (a system
 * directory, /usr/share/doc) is accepted: the grant is mounted over it,
 * with what the caller reaches there, still read-only. */
START_TEST(live_grant_of_a_system_directory_is_accepted)
{
	const char *const script = "ls /usr/share/doc | head -n 1 | grep -q . && "
				   "touch /usr/share/doc/new 2>/dev/null || echo read-only";
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	struct run r;

	become(T_CALLER);
	run(argv, lend_for_reading, (void *)"/usr/share/doc", &r);
	ck_assert_msg(r.spawn_rc == 0, "spawn: %s", r.msg);
	ck_assert_msg(r.outcome == ISO_OUTCOME_EXITED && r.code == 0, "outcome %d code %d: %s %s",
		      r.outcome, r.code, r.out, r.err);
	ck_assert_str_eq(r.out, "read-only\n");
}
END_TEST

/* --cwd names a place in the guest's tree, which the guest enters itself:
 * one the tree lacks ends the start with isospawn's own code and reason,
 * not the program's "not found". */
START_TEST(live_cwd_outside_the_tree_is_refused)
{
	const char *missing[] = { "--cwd", "/nonexistent/dir", "--", "/bin/true", NULL };
	const char *shm[] = { "--cwd", "/dev/shm", "--", "/bin/pwd", NULL };
	struct run r;

	become(T_CALLER);
	run_cli(missing, NULL, &r);
	ck_assert_int_eq(r.exit_code, 125);
	ck_assert_str_eq(r.err, "isospawn: /bin/true: confinement failed: working directory "
				"/nonexistent/dir: No such file or directory (ENOENT)\n");
	run_cli(shm, NULL, &r);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
	ck_assert_str_eq(r.out, "/dev/shm\n");
}
END_TEST

static void pass_five_and_nine(iso_spec *spec, void *arg)
{
	int dir = arg ? *(const int *)arg : -1;

	ck_assert_int_eq(iso_spec_pass_fd(spec, 5), 0);
	ck_assert_int_eq(iso_spec_pass_fd(spec, 9), 0);
	ck_assert_int_eq(iso_spec_set_channel(spec, ISO_CHANNEL_MESSAGES), 0);
	/* Behind the library's back, as a hostile caller's would be. */
	if (dir >= 0)
		ck_assert_int_eq(dup2(dir, 9), 9);
}

/* Descriptors the caller passes arrive at the numbers it gave, beside the
 * stdio and the channel's fd 3, and nothing else does; each keeps what it
 * was opened for (a file read, a pipe written). A directory is refused by
 * the helper too, not only by the library: through it the guest would
 * reach past its tree. */
START_TEST(live_passed_descriptors_keep_their_numbers)
{
	char dir[256], file[300], got[64] = "";
	const char *fds[] = { T_PROBE, "fds", NULL };
	const char *use[] = { "/bin/sh", "-c", "cat <&5; echo through >&9", NULL };
	int pipefd[2], root;
	struct run r;

	own_dir(dir, sizeof(dir), "pass");
	snprintf(file, sizeof(file), "%s/five", dir);
	become(T_CALLER);
	make_file(file, "from five\n");
	ck_assert_int_eq(dup2(open(file, O_RDONLY | O_CLOEXEC), 5), 5);
	ck_assert_int_eq(pipe(pipefd), 0);
	ck_assert_int_eq(dup2(pipefd[1], 9), 9);
	run(fds, pass_five_and_nine, NULL, &r);
	ck_assert_msg(r.spawn_rc == 0, "spawn: %s", r.msg);
	ck_assert_str_eq(r.out, "0 1 2 3 5 9\n");

	ck_assert_int_eq(lseek(5, 0, SEEK_SET), 0);
	run(use, pass_five_and_nine, NULL, &r);
	ck_assert_msg(r.outcome == ISO_OUTCOME_EXITED && r.code == 0, "%s %s", r.msg, r.err);
	ck_assert_str_eq(r.out, "from five\n");
	ck_assert_int_eq(read(pipefd[0], got, sizeof(got) - 1), 8);
	ck_assert_str_eq(got, "through\n");

	root = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	run(fds, pass_five_and_nine, &root, &r);
	ck_assert_msg(r.outcome == ISO_OUTCOME_FAILED && r.code == EINVAL &&
			  strstr(r.reason, "pass-fd 9: a directory"),
		      "outcome %d: %s", r.outcome, r.reason);
}
END_TEST

/* The CLI hands on what it was given, at the same number; fd 0-2 are
 * its stdio's and not passed this way. */
START_TEST(live_cli_pass_fd)
{
	const char *args[] = { "--pass-fd", "7", "--", "/bin/sh", "-c", "cat <&7", NULL };
	const char *stdio[] = { "--pass-fd", "2", "--", "/bin/true", NULL };
	char dir[256], file[300];
	struct run r;

	own_dir(dir, sizeof(dir), "clipass");
	snprintf(file, sizeof(file), "%s/seven", dir);
	become(T_CALLER);
	make_file(file, "from seven\n");
	ck_assert_int_eq(dup2(open(file, O_RDONLY | O_CLOEXEC), 7), 7);
	run_cli(args, NULL, &r);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
	ck_assert_str_eq(r.out, "from seven\n");
	run_cli(stdio, NULL, &r);
	ck_assert_int_eq(r.exit_code, 125);
	ck_assert_str_eq(r.err, "isospawn: --pass-fd 2: not from 3 to 1023\n");
}
END_TEST

static void network_none(iso_spec *spec, void *arg)
{
	(void)arg;
	ck_assert_int_eq(iso_spec_set_network(spec, ISO_NETWORK_NONE), 0);
}

/* A guest of network none has a loopback of its own: a server and a
 * client in it talk over TCP and UDP. */
START_TEST(live_network_none_guest_uses_its_own_loopback)
{
	const char *argv[] = {
		PYTHON, "-c",
		"import socket\n"
		"s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen()\n"
		"c = socket.create_connection(s.getsockname()); a, _ = s.accept()\n"
		"c.sendall(b'tcp'); print(a.recv(3).decode())\n"
		"u = socket.socket(type=socket.SOCK_DGRAM); u.bind(('127.0.0.1', 0))\n"
		"v = socket.socket(type=socket.SOCK_DGRAM); v.sendto(b'udp', u.getsockname())\n"
		"print(u.recv(3).decode())\n",
		NULL
	};
	struct run r;

	if (access(PYTHON, X_OK) != 0) {
		check_skip("a check of live_lend",
			   PYTHON " is not installed (scripts/deps installs it)");
		return;
	}
	become(T_CALLER);
	run(argv, network_none, NULL, &r);
	ck_assert_msg(r.spawn_rc == 0, "spawn: %s", r.msg);
	ck_assert_msg(r.outcome == ISO_OUTCOME_EXITED && r.code == 0, "outcome %d code %d: %s",
		      r.outcome, r.code, r.err);
	ck_assert_str_eq(r.out, "tcp\nudp\n");
}
END_TEST

/* A user namespace mapping 0 to 65534, from a child that waits in it
 * until it is opened. Its descriptor, or -1. */
static int some_userns(void)
{
	char path[64], c;
	int ready[2], done[2], fd, ns = -1;
	pid_t pid;

	if (pipe(ready) < 0 || pipe(done) < 0 || (pid = fork()) < 0)
		return -1;
	if (pid == 0) {
		close(done[1]);
		if (unshare(CLONE_NEWUSER) < 0)
			_exit(1);
		(void)!write(ready[1], "x", 1);
		(void)!read(done[0], &c, 1);
		_exit(0);
	}
	close(ready[1]);
	close(done[0]);
	if (read(ready[0], &c, 1) == 1) {
		snprintf(path, sizeof(path), "/proc/%d/uid_map", (int)pid);
		if ((fd = open(path, O_WRONLY | O_CLOEXEC)) >= 0) {
			(void)!write(fd, "0 65534 1\n", 10);
			close(fd);
		}
		snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
		ns = open(path, O_RDONLY | O_CLOEXEC);
	}
	close(done[1]);
	waitpid(pid, NULL, 0);
	close(ready[0]);
	return ns;
}

/* Whether this kernel refuses to idmap a mount of ramfs (EINVAL), asked
 * without any filter: NULL if it does, else why the check cannot run. */
static const char *ramfs_refuses_idmap(const char *dir)
{
	static char why[128];
	struct mount_attr a = { .attr_set = MOUNT_ATTR_IDMAP };
	int tree = (int)syscall(SYS_open_tree, AT_FDCWD, dir, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
	int ns = some_userns(), rc;

	a.userns_fd = (uint64_t)ns;
	rc = tree < 0 || ns < 0
		 ? -1
		 : (int)syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &a, sizeof(a));
	if (rc < 0 && errno == EINVAL && tree >= 0 && ns >= 0)
		why[0] = '\0';
	else
		snprintf(why, sizeof(why), "this kernel %s a mount of ramfs (%s)",
			 rc == 0 ? "idmaps" : "cannot be asked to idmap",
			 rc == 0 ? "ok" : strerror(errno));
	if (tree >= 0)
		close(tree);
	if (ns >= 0)
		close(ns);
	return why[0] ? why : NULL;
}

/* A grant on a file system that cannot be idmapped (ramfs) is refused at
 * the start, naming the file system, rather than lent with the guest's
 * own ids or none. */
START_TEST(live_grant_on_a_file_system_without_idmap_is_refused)
{
	char dir[256], want[512];
	const char *why;
	struct run r;

	own_dir(dir, sizeof(dir), "ramfs");
	ck_assert_int_eq(unshare(CLONE_NEWNS), 0);
	ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	ck_assert_int_eq(mount("ramfs", dir, "ramfs", 0, "mode=0700"), 0);
	ck_assert_int_eq(chown(dir, T_CALLER, T_CALLER), 0);
	if ((why = ramfs_refuses_idmap(dir)) != NULL) {
		check_skip("a check of live_lend", "%s", why);
		return;
	}
	become(T_CALLER);
	run((const char *[]){ "/bin/true", NULL }, lend_for_reading, dir, &r);
	ck_assert_msg(r.spawn_rc == 0, "spawn: %s", r.msg);
	ck_assert_msg(r.outcome == ISO_OUTCOME_FAILED && r.code == EINVAL, "outcome %d code %d: %s",
		      r.outcome, r.code, r.reason);
	snprintf(want, sizeof(want),
		 "grant %s: its file system (ramfs), or one mounted below "
		 "it, cannot be idmapped on this kernel",
		 dir);
	ck_assert_str_eq(r.reason, want);
}
END_TEST

static Suite *lend_suite(void)
{
	Suite *s = suite_create("live_lend");
	TCase *lend = tcase_create("lend");
	TCase *net = tcase_create("network");

	tcase_add_test(lend, live_workdir_results_are_the_callers_own);
	tcase_add_test(lend, live_program_in_the_workdir_runs);
	tcase_add_test(lend, live_read_grant_of_the_callers_0700_directory);
	tcase_add_test(lend, live_cwd_outside_the_tree_is_refused);
	tcase_add_test(lend, live_grant_of_a_system_directory_is_accepted);
	tcase_add_test(lend, live_cli_grant_through_a_link_and_a_missing_one);
	tcase_add_test(lend, live_passed_descriptors_keep_their_numbers);
	tcase_add_test(lend, live_cli_pass_fd);
	tcase_add_test(lend, live_grant_on_a_file_system_without_idmap_is_refused);
	tcase_add_test(net, live_network_none_guest_uses_its_own_loopback);
	tcase_set_timeout(lend, 60);
	tcase_set_timeout(net, 60);
	suite_add_tcase(s, lend);
	suite_add_tcase(s, net);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	harness_setup();
	if (mkdir(LEND, 0700) < 0 || chown(LEND, T_CALLER, T_CALLER) < 0) {
		fprintf(stderr, "live_lend: %s: %s\n", LEND, strerror(errno));
		return 99;
	}
	sr = srunner_create(lend_suite());
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
