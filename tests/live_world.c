/*
 * live_world.c - the guest's tree (helper/world.c), through the real setuid
 * helper, as an unprivileged caller: real programs from Debian packages run
 * unmodified, and nothing of the host that the tree leaves out is within
 * reach - no socket, no process, no home.
 *
 * A program the packages did not install is a SKIP naming it; so is a
 * kernel without the mount calls the tree needs (the helper then refuses
 * every connection and says so), probed here without any filter.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "feature.h"
#include "harness.h"

/* Made by main() as root; the pid keeps concurrent runs apart. */
static char sock_run[64], sock_tmp[64];
#define GRANTS T_SHARED "/world" /* made by main(), as root */
#define GRANT_DIR GRANTS "/dir" /* T_CALLER's, 0700: lent for writing */
#define GRANT_FILE GRANTS "/file" /* granted for reading */
#define GRANT_LINK GRANTS "/link" /* a symlink to GRANT_DIR */
#define COVER GRANTS "/cover" /* holds T_COVER's read a/, and b/ */
#define T_COVER 4000070u /* its caller (tests/policy.conf.in) */
#define PRIVATE GRANTS "/private" /* root's, 0700: T_PRIVATE's read, with f */
#define T_PRIVATE 4000075u /* its caller (tests/policy.conf.in) */
#define FIRST GRANTS "/first" /* its pool's first uid's, 0700: T_FIRST's read */
#define T_FIRST 4000078u /* its caller (tests/policy.conf.in) */
#define FIRST_UID T_POOL(1900101979u) /* T_FIRST's rule's first pool uid, of two */
#define SVC GRANTS "/svc" /* T_SVC's own */
#define VENV SVC "/venv" /* T_SVC's rule's read path */
#define T_SVC 4000077u /* its caller (tests/policy.conf.in) */
#define MASKED GRANTS "/masked" /* holds secret, which a mount hides */

static int sockets[2] = { -1, -1 };

static const char *const *sh(const char *script)
{
	static const char *argv[4];

	argv[0] = "/bin/sh";
	argv[1] = "-c";
	argv[2] = script;
	argv[3] = NULL;
	return argv;
}

/* Exited 0, with the guest's stderr in the message otherwise. */
static void assert_ok(const struct run *r, const char *what)
{
	ck_assert_msg(r->spawn_rc == 0, "%s: spawn: %s", what, r->msg);
	ck_assert_msg(r->outcome == ISO_OUTCOME_EXITED && r->code == 0,
		      "%s: outcome %d code %d\nstdout: %s\nstderr: %s", what, r->outcome, r->code,
		      r->out, r->err);
}

/* The probe ran and printed "refused: <err>". */
static void assert_refused_with(const struct run *r, const char *what, const char *err)
{
	char line[64];

	snprintf(line, sizeof(line), "refused: %s", err);
	ck_assert_msg(r->spawn_rc == 0, "%s: spawn: %s", what, r->msg);
	ck_assert_msg(r->outcome == ISO_OUTCOME_EXITED && r->code == 1 && has_line(r->out, line),
		      "%s: want \"%s\", got outcome %d code %d: %s", what, line, r->outcome,
		      r->code, r->out);
}

static int installed(const char *program)
{
	if (access(program, X_OK) == 0)
		return 1;
	check_skip("a check of live_world", "%s is not installed (scripts/deps installs it)",
		   program);
	return 0;
}

/* One guest on its own connection. */
static void run(const char *const *argv, spec_hook hook, void *arg, struct run *r)
{
	iso_conn *c = open_conn();

	run_guest(c, argv, NULL, hook, arg, r);
	iso_close(c);
}

/* ------------------------------------------------------------------ */
/* Real programs                                                        */

START_TEST(live_python_multiprocessing_and_shared_memory_work)
{
	static const char script[] =
	    "import concurrent.futures, multiprocessing\n"
	    "from multiprocessing import shared_memory\n"
	    "def square(x): return x * x\n"
	    "if __name__ == '__main__':\n"
	    "    with multiprocessing.Pool(2) as p: print(p.map(square, range(4)))\n"
	    "    with concurrent.futures.ProcessPoolExecutor(2) as e:\n"
	    "        print(list(e.map(square, range(4))))\n"
	    "    m = shared_memory.SharedMemory(create=True, size=64)\n"
	    "    m.buf[0] = 42; print('shm', m.buf[0]); m.close(); m.unlink()\n";
	const char *argv[] = { "/usr/bin/python3", "-c", script, NULL };
	struct run r;

	if (!installed(argv[0]))
		return;
	become(T_CALLER);
	run(argv, NULL, NULL, &r);
	assert_ok(&r, "python3");
	ck_assert_str_eq(r.out, "[0, 1, 4, 9]\n[0, 1, 4, 9]\nshm 42\n");
}
END_TEST

static void read_all(int fd, char *buf, size_t size)
{
	size_t len = 0;
	ssize_t got;

	while (len + 1 < size && (got = read(fd, buf + len, size - len - 1)) > 0)
		len += (size_t)got;
	buf[len] = '\0';
	close(fd);
}

/* stdin, stdout and stderr are the caller's pipes; /dev/std* reopen them
 * through the guest's own /proc. */
START_TEST(live_dev_stdin_stdout_stderr_reopen_the_handed_over_pipes)
{
	const char *const *argv = sh("cat /dev/stdin; echo out > /dev/stdout; "
				     "echo err > /dev/stderr; ls /dev");
	static char out[4096], err[4096];
	int in[2], o[2], e[2];
	iso_spec *spec;
	iso_guest *g;
	iso_conn *c;

	become(T_CALLER);
	ck_assert_int_eq(pipe2(in, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(o, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(e, O_CLOEXEC), 0);
	ck_assert_int_eq(write(in[1], "from the caller\n", 16), 16);
	close(in[1]);
	c = open_conn();
	ck_assert_int_eq(iso_spec_new(&spec), 0);
	ck_assert_int_eq(iso_spec_set_program(spec, argv[0]), 0);
	ck_assert_int_eq(iso_spec_set_argv(spec, argv), 0);
	ck_assert_int_eq(iso_spec_set_stdio(spec, in[0], o[1], e[1]), 0);
	ck_assert_msg(iso_spawn(c, spec, &g) == 0, "spawn: %s", iso_last_error());
	iso_spec_free(spec);
	close(in[0]);
	close(o[1]);
	close(e[1]);
	read_all(o[0], out, sizeof(out));
	read_all(e[0], err, sizeof(err));
	ck_assert_int_eq(iso_wait(g, -1), 0);
	ck_assert_msg(iso_guest_outcome(g) == ISO_OUTCOME_EXITED && iso_guest_code(g) == 0,
		      "outcome %d code %d: %s", iso_guest_outcome(g), iso_guest_code(g), err);
	iso_guest_free(g);
	iso_close(c);
	ck_assert_msg(strncmp(out, "from the caller\nout\n", 20) == 0, "%s", out);
	ck_assert_str_eq(err, "err\n");
	ck_assert_str_eq(out + 20, "fd\nfull\nnull\nrandom\nshm\nstderr\nstdin\nstdout\n"
				   "tty\nurandom\nzero\n");
}
END_TEST

/* A stdio pipe reopens through /proc only in the
 * direction the guest holds: what others write into its stdout pipe (here
 * the caller, before the guest starts) it cannot read, nor write into its
 * stdin pipe, nor change that (the pipes stay the caller's: chmod fails). */
START_TEST(live_stdio_pipes_reopen_only_in_the_direction_handed_over)
{
	static const char script[] =
	    "r() { if (eval \"exec 3<$1\") 2>/dev/null; "
	    "then echo \"$2 opened\" >&2; else echo \"$2 refused\" >&2; fi; }\n"
	    "w() { if (eval \"exec 3>$1\" && echo x >&3) 2>/dev/null; "
	    "then echo \"$2 opened\" >&2; else echo \"$2 refused\" >&2; fi; }\n"
	    "r /proc/self/fd/1 out-read; w /proc/self/fd/1 out-write\n"
	    "w /proc/self/fd/0 in-write; r /proc/self/fd/0 in-read\n"
	    "chmod 666 /proc/self/fd/1 2>/dev/null && echo chmod done >&2 || echo chmod refused "
	    ">&2\n"
	    "r /proc/self/fd/1 out-read\n";
	const char *argv[] = { "/bin/sh", "-c", script, NULL };
	static char out[4096], err[4096];
	int in[2], o[2], e[2];
	struct stat st_in, st_out;
	iso_spec *spec;
	iso_guest *g;
	iso_conn *c;

	become(T_CALLER);
	ck_assert_int_eq(pipe2(in, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(o, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(e, O_CLOEXEC), 0);
	ck_assert_int_eq(write(in[1], "from the caller\n", 16), 16);
	close(in[1]);
	/* What another writer put in the guest's stdout pipe, for its reader. */
	ck_assert_int_eq(write(o[1], "CALLER-LOG token=s3cr3t\n", 24), 24);
	c = open_conn();
	ck_assert_int_eq(iso_spec_new(&spec), 0);
	ck_assert_int_eq(iso_spec_set_program(spec, argv[0]), 0);
	ck_assert_int_eq(iso_spec_set_argv(spec, argv), 0);
	ck_assert_int_eq(iso_spec_set_stdio(spec, in[0], o[1], e[1]), 0);
	ck_assert_msg(iso_spawn(c, spec, &g) == 0, "spawn: %s", iso_last_error());
	iso_spec_free(spec);
	close(o[1]);
	close(e[1]);
	read_all(dup(o[0]), out, sizeof(out));
	read_all(e[0], err, sizeof(err));
	ck_assert_int_eq(iso_wait(g, -1), 0);
	ck_assert_msg(iso_guest_outcome(g) == ISO_OUTCOME_EXITED && iso_guest_code(g) == 0,
		      "outcome %d code %d: %s", iso_guest_outcome(g), iso_guest_code(g), err);
	iso_guest_free(g);
	iso_close(c);
	ck_assert_str_eq(err, "out-read refused\nout-write opened\nin-write refused\n"
			      "in-read opened\nchmod refused\nout-read refused\n");
	ck_assert_str_eq(out, "CALLER-LOG token=s3cr3t\nx\n");
	/* Still the caller's, and only the direction handed over for others. */
	ck_assert_int_eq(fstat(in[0], &st_in), 0);
	ck_assert_int_eq(fstat(o[0], &st_out), 0);
	ck_assert_uint_eq(st_in.st_uid, getuid());
	ck_assert_uint_eq(st_out.st_uid, getuid());
	ck_assert_uint_eq(st_in.st_mode & 07777, 0604);
	ck_assert_uint_eq(st_out.st_mode & 07777, 0602);
	close(in[0]);
	close(o[0]);
}
END_TEST

/* A pipe the caller holds but does not own (root's, 0600, here
 * inherited across the drop) is handed over as stdout: the helper, root,
 * leaves its mode alone; only the caller's own pipes are opened up. */
START_TEST(live_stdio_pipe_the_caller_does_not_own_keeps_its_mode)
{
	const char *argv[] = { T_PROBE, "exit", "0", NULL };
	int o[2];
	struct stat st;
	iso_spec *spec;
	iso_guest *g;
	iso_conn *c;

	ck_assert_int_eq(pipe2(o, O_CLOEXEC), 0);
	ck_assert_int_eq(fstat(o[1], &st), 0);
	ck_assert_uint_eq(st.st_uid, 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	become(T_CALLER);
	c = open_conn();
	ck_assert_int_eq(iso_spec_new(&spec), 0);
	ck_assert_int_eq(iso_spec_set_program(spec, argv[0]), 0);
	ck_assert_int_eq(iso_spec_set_argv(spec, argv), 0);
	ck_assert_int_eq(iso_spec_set_stdio(spec, -1, o[1], -1), 0);
	ck_assert_msg(iso_spawn(c, spec, &g) == 0, "spawn: %s", iso_last_error());
	iso_spec_free(spec);
	ck_assert_int_eq(iso_wait(g, -1), 0);
	ck_assert_msg(iso_guest_outcome(g) == ISO_OUTCOME_EXITED && iso_guest_code(g) == 0,
		      "outcome %d code %d", iso_guest_outcome(g), iso_guest_code(g));
	iso_guest_free(g);
	iso_close(c);
	ck_assert_int_eq(fstat(o[1], &st), 0);
	ck_assert_uint_eq(st.st_uid, 0);
	ck_assert_uint_eq(st.st_mode & 07777, 0600);
	close(o[0]);
	close(o[1]);
}
END_TEST

START_TEST(live_ps_lists_only_the_guests_processes)
{
	const char *argv[] = { "/usr/bin/ps", "-e", "-o", "pid=,comm=", NULL };
	char mine[32];
	struct run r;
	int lines = 0;

	if (!installed(argv[0]))
		return;
	become(T_CALLER);
	run(argv, NULL, NULL, &r);
	assert_ok(&r, "ps -e");
	/* The reaper (pid 1, the helper's image) and ps itself. */
	for (const char *p = r.out; (p = strchr(p, '\n')) != NULL; p++)
		lines++;
	ck_assert_msg(lines == 2, "%s", r.out);
	/* ps pads the pid to the width of the kernel's pid_max. */
	ck_assert_msg(strncmp(r.out + strspn(r.out, " "), "1 ", 2) == 0, "%s", r.out);
	snprintf(mine, sizeof(mine), " %d ", (int)getpid());
	ck_assert_ptr_null(strstr(r.out, mine));
}
END_TEST

START_TEST(live_whoami_getuser_and_home_name_the_guest)
{
	const char *py[] = { "/usr/bin/python3", "-c", "import getpass; print(getpass.getuser())",
			     NULL };
	const char *bash[] = { "/bin/bash", "-c", "whoami; cd ~ && pwd && touch x && ls -ld ~",
			       NULL };
	struct run r;

	if (!installed(py[0]) || !installed(bash[0]))
		return;
	become(T_CALLER);
	run(bash, NULL, NULL, &r);
	assert_ok(&r, "whoami, ~");
	ck_assert_msg(strncmp(r.out, "guest\n/tmp\ndrwx------ ", 22) == 0, "%s", r.out);
	ck_assert_msg(strstr(r.out, " guest guest ") != NULL, "%s", r.out);
	run(py, NULL, NULL, &r);
	assert_ok(&r, "getpass.getuser()");
	ck_assert_str_eq(r.out, "guest\n");
}
END_TEST

START_TEST(live_git_commits_and_gcc_builds_in_tmp)
{
	const char *script =
	    "set -e; git init -q repo; cd repo; echo a > a; git add a; "
	    "git -c user.name=g -c user.email=g@example.org commit -qm first; "
	    "git log --format=%s; "
	    "printf '#include <stdio.h>\\nint main(void){puts(\"built\");return 0;}\\n' > t.c; "
	    "gcc -o t t.c; ./t";
	struct run r;

	if (!installed("/usr/bin/git") || !installed("/usr/bin/gcc"))
		return;
	become(T_CALLER);
	run(sh(script), NULL, NULL, &r);
	assert_ok(&r, "git and gcc");
	ck_assert_str_eq(r.out, "first\nbuilt\n");
}
END_TEST

START_TEST(live_programs_count_the_cpus)
{
	const char *script = "nproc; getconf _NPROCESSORS_ONLN; "
			     "python3 -c 'import os; print(os.cpu_count())'; "
			     "if [ -x /usr/bin/node ]; then node -e "
			     "'console.log(require(\"os\").cpus().length)'; else nproc; fi";
	struct run r;
	long n;

	if (!installed("/usr/bin/python3"))
		return;
	if (access("/usr/bin/node", X_OK) != 0)
		printf("SKIP (in part): node is not installed: os.cpus() untried\n");
	become(T_CALLER);
	run(sh(script), NULL, NULL, &r);
	assert_ok(&r, "CPU counts");
	for (const char *p = r.out; *p; p = strchr(p, '\n') + 1) {
		n = strtol(p, NULL, 10);
		ck_assert_msg(n > 0, "%s", r.out);
	}
	ck_assert_msg(r.out[0] && strchr(r.out, '\n'), "%s", r.out);
}
END_TEST

/* ------------------------------------------------------------------ */
/* Out of reach                                                         */

/* World-connectable sockets the caller itself can reach. */
START_TEST(live_host_unix_sockets_are_out_of_reach)
{
	const char *run_sock[] = { T_PROBE, "connect-unix", sock_run, NULL };
	const char *tmp_sock[] = { T_PROBE, "connect-unix", sock_tmp, NULL };
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	struct run r;
	int fd;

	become(T_CALLER);
	strcpy(un.sun_path, sock_run);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_msg(connect(fd, (struct sockaddr *)&un, sizeof un) == 0,
		      "the caller cannot reach %s: %s", sock_run, strerror(errno));
	close(fd);
	run(run_sock, NULL, NULL, &r);
	assert_refused_with(&r, sock_run, "ENOENT");
	run(tmp_sock, NULL, NULL, &r);
	assert_refused_with(&r, sock_tmp, "ENOENT");
}
END_TEST

#define GRANTED_SOCKET GRANT_DIR "/sockets"

static void grant_sockets(iso_spec *spec, void *arg)
{
	(void)arg;
	ck_assert_int_eq(iso_spec_add_read_path(spec, GRANTED_SOCKET), 0);
}

/* Guarantee 25 as it stands, a residual: a read grant is read-only for
 * files, not for sockets. A read-only mount does not refuse connect(),
 * and Landlock (up to ABI 7) has no right for it, so the guest reaches a
 * socket in its read grant that its uid may write. A kernel and helper
 * that refuse it make this fail: then change it, isospawn.conf(5) and
 * SECURITY.md together. */
START_TEST(live_guest_connects_to_a_socket_in_its_read_grant)
{
	const char *argv[] = { T_PROBE, "connect-unix", GRANTED_SOCKET "/s", NULL };
	struct sockaddr_un un = { .sun_family = AF_UNIX, .sun_path = GRANTED_SOCKET "/s" };
	struct run r;
	int fd;

	become(T_CALLER);
	ck_assert_int_eq(mkdir(GRANTED_SOCKET, 0755), 0);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_msg(bind(fd, (struct sockaddr *)&un, sizeof un) == 0 &&
			  chmod(un.sun_path, 0777) == 0 && listen(fd, 8) == 0,
		      "%s: %s", un.sun_path, strerror(errno));
	run(argv, grant_sockets, NULL, &r);
	close(fd);
	(void)unlink(un.sun_path);
	(void)rmdir(GRANTED_SOCKET);
	assert_ok(&r, "connect in a read grant");
	ck_assert_msg(has_line(r.out, "connected"), "%s", r.out);
}
END_TEST

/* Of the host's other directories at its root the tree has the names
 * only (where grants find their place), empty: /run's sockets, /home's
 * homes are not there. */
START_TEST(live_host_processes_and_home_are_absent)
{
	char pid[32];
	const char *host_pid[] = { T_PROBE, "stat", pid, NULL };
	const char *own_pid[] = { T_PROBE, "stat", "/proc/1/status", NULL };
	const char *const *empty = sh("ls -A /home /run /var /root /srv 2>/dev/null | "
				      "grep -v '^/.*:$' | grep -c . ; true");
	struct run r;

	snprintf(pid, sizeof(pid), "/proc/%d", (int)getpid());
	become(T_CALLER);
	run(host_pid, NULL, NULL, &r);
	assert_refused_with(&r, pid, "ENOENT");
	run(own_pid, NULL, NULL, &r);
	assert_ok(&r, "its own pid 1");
	run(empty, NULL, NULL, &r);
	assert_ok(&r, "the root's other directories");
	ck_assert_str_eq(r.out, "0\n");
}
END_TEST

START_TEST(live_mount_and_umount_still_fail)
{
	const char *argv[] = { T_PROBE, "mount", NULL };
	struct run r;

	become(T_CALLER);
	run(argv, NULL, NULL, &r);
	assert_refused_with(&r, "umount", "EPERM");
	ck_assert_msg(has_line(r.out, "mount: EPERM"), "%s", r.out);
}
END_TEST

static void grant_both(iso_spec *spec, void *arg)
{
	(void)arg;
	ck_assert_int_eq(iso_spec_add_read_path(spec, GRANT_FILE), 0);
	ck_assert_int_eq(iso_spec_add_write_path(spec, GRANT_DIR), 0);
}

static void read_file(const char *path, char *buf, size_t size)
{
	ck_assert_msg(read_text(path, buf, size) >= 0, "%s: %s", path, strerror(errno));
}

/* Grants are bound into the tree; while and after a guest uses them, the
 * host's mount table does not change. */
START_TEST(live_grants_work_through_binds_and_leave_host_mounts_unchanged)
{
	static char before[65536], after[65536];
	const char *script = "cat " GRANT_FILE "; echo written > " GRANT_DIR "/out; "
			     "echo no > " GRANT_FILE " || echo read-only; "
			     "grep -c " GRANTS " /proc/self/mountinfo";
	struct stat st;
	struct run r;

	become(T_CALLER);
	read_file("/proc/self/mountinfo", before, sizeof(before));
	run(sh(script), grant_both, NULL, &r);
	assert_ok(&r, "grants");
	ck_assert_str_eq(r.out, "granted\nread-only\n2\n");
	/* On the host, the caller's (0600 under the guest's umask). */
	ck_assert_int_eq(lstat(GRANT_DIR "/out", &st), 0);
	ck_assert_uint_eq(st.st_uid, T_CALLER);
	ck_assert_int_eq(st.st_size, 8);
	read_file("/proc/self/mountinfo", after, sizeof(after));
	ck_assert_str_eq(before, after);
}
END_TEST

static void grant_link(iso_spec *spec, void *arg)
{
	(void)arg;
	ck_assert_int_eq(iso_spec_add_read_path(spec, GRANT_LINK), 0);
}

/* A grant is the object the caller's own open reaches, links followed as
 * any of its opens: the guest finds it where it is, not at the link. */
START_TEST(live_symlinked_grant_lends_its_target_at_its_own_path)
{
	const char *const *argv = sh("test -d " GRANT_DIR " && test ! -e " GRANT_LINK " && "
				     "test ! -e " GRANT_FILE " && echo target-only");
	struct run r;

	become(T_CALLER);
	run(argv, grant_link, NULL, &r);
	assert_ok(&r, "a symlinked grant");
	ck_assert_str_eq(r.out, "target-only\n");
}
END_TEST

static void grant_behind_private(iso_spec *spec, void *arg)
{
	(void)arg;
	ck_assert_int_eq(iso_spec_add_read_path(spec, PRIVATE "/open"), 0);
}

/* A grant is opened by the caller, as the caller: a directory of 0755
 * below root's 0700 one, which the caller cannot search, is refused with
 * its own open's error, and nothing starts. */
START_TEST(live_grant_the_caller_cannot_open_is_refused_with_its_own_error)
{
	const char *argv[] = { "/bin/cat", PRIVATE "/open/f", NULL };
	struct run r;

	become(T_CALLER);
	run(argv, grant_behind_private, NULL, &r);
	ck_assert_int_eq(r.spawn_rc, -EACCES);
	ck_assert_str_eq(r.msg, "read grant " PRIVATE "/open: Permission denied");
	ck_assert_msg(!strstr(r.out, "behind-0700"), "the guest read %s", r.out);
}
END_TEST

static void grant_cover_b(iso_spec *spec, void *arg)
{
	(void)arg;
	ck_assert_int_eq(iso_spec_add_read_path(spec, COVER "/b"), 0);
}

/* A grant that needs a new directory where the
 * template holds the rule's own paths (its read a/, beside b/)
 * would need a tmpfs there, hiding them: the guest does not start
 * (ENOTEMPTY) rather than run without them. The caller is told why, the
 * path named, by iso_guest_reason() and by the CLI's one line. */
START_TEST(live_request_grant_never_hides_the_rules_own)
{
	const char *cat[] = { "/bin/cat", COVER "/a/f", NULL };
	const char *cli[] = { "--read", COVER "/b", "--status-json", "-",
			      "--",     "/bin/cat", COVER "/a/f",    NULL };
	const char *why = "no mount point for " COVER "/b in the guest's tree: it "
			  "needs a new directory where the rule's own paths are, "
			  "which that would hide";
	char line[1024];
	struct run r;

	become(T_COVER);
	run(cat, NULL, NULL, &r);
	assert_ok(&r, "the rule's read path");
	ck_assert_str_eq(r.out, "rule-granted\n");
	ck_assert_str_eq(r.reason, ""); /* and run_guest saw NULL */
	run(cat, grant_cover_b, NULL, &r);
	ck_assert_msg(r.spawn_rc == 0, "spawn: %s", r.msg);
	ck_assert_msg(r.outcome == ISO_OUTCOME_FAILED && r.code == ENOTEMPTY,
		      "outcome %d code %d: %s %s", r.outcome, r.code, r.out, r.err);
	ck_assert_str_eq(r.reason, why);

	run_cli(cli, NULL, &r);
	ck_assert_int_eq(r.exit_code, 125);
	snprintf(line, sizeof(line),
		 "isospawn: /bin/cat: confinement failed: %s: "
		 "Directory not empty (ENOTEMPTY)\n",
		 why);
	ck_assert_msg(strstr(r.err, line) == r.err, "stderr: %s", r.err);
	snprintf(line, sizeof(line), "\"errno\": \"ENOTEMPTY\", \"reason\": \"%s\"", why);
	ck_assert_msg(strstr(r.err, line) != NULL, "status: %s", r.err);
}
END_TEST

/* A rule path the guest's uid cannot reach (f, below the rule's own 0700
 * directory, root's): the template opens rule paths as a guest of the
 * rule, so no guest starts: the connection is refused, naming the path,
 * rather than run guests with a rule that grants nothing. */
START_TEST(live_rule_path_the_guest_cannot_reach_fails_the_start)
{
	iso_conn *c = NULL;

	become(T_PRIVATE);
	ck_assert_int_eq(iso_open(&c), -EACCES);
	ck_assert_ptr_null(c);
	ck_assert_str_eq(iso_last_error(), PRIVATE "/f: Permission denied");
}
END_TEST

static iso_guest *start_sleeper(iso_conn *c)
{
	const char *argv[] = { "/bin/sleep", "60", NULL };
	iso_spec *spec;
	iso_guest *g = NULL;

	ck_assert_int_eq(iso_spec_new(&spec), 0);
	ck_assert_int_eq(iso_spec_set_program(spec, argv[0]), 0);
	ck_assert_int_eq(iso_spec_set_argv(spec, argv), 0);
	ck_assert_msg(iso_spawn(c, spec, &g) == 0, "spawn: %s", iso_last_error());
	iso_spec_free(spec);
	return g;
}

static void stop(iso_guest *g)
{
	ck_assert_int_eq(iso_kill(g, SIGKILL), 0);
	ck_assert_int_eq(iso_wait(g, -1), 0);
	iso_guest_free(g);
}

/* The template reaches a rule's paths as the first uid of the rule's pool;
 * a path another of its uids cannot reach in its tree (f, below the first
 * uid's 0700 directory) fails that guest's start, the reason naming it,
 * rather than run it with a rule that grants it nothing. A sleeping guest
 * holds the first uid, so the guest that reads gets the other. A helper
 * leases a uid at random, and a sleeper given the other uid fails its
 * start like the reader: so each try is a connection of its own. */
START_TEST(live_rule_path_another_pool_uid_cannot_reach_fails_its_start)
{
	const char *cat[] = { "/bin/cat", FIRST "/f", NULL };
	iso_guest *held;
	iso_conn *c;
	struct run r;

	become(T_FIRST);
	for (int tries = 1;; tries++) {
		c = open_conn();
		held = start_sleeper(c);
		if (iso_guest_uid(held) == FIRST_UID || tries == 64)
			break;
		ck_assert_int_eq(iso_wait(held, -1), 0);
		iso_guest_free(held);
		iso_close(c);
	}
	ck_assert_uint_eq(iso_guest_uid(held), FIRST_UID);
	run_guest(c, cat, NULL, NULL, NULL, &r);
	ck_assert_msg(r.spawn_rc == 0, "spawn: %s", r.msg);
	ck_assert_msg(r.outcome == ISO_OUTCOME_FAILED && r.code == EACCES,
		      "outcome %d code %d: %s %s", r.outcome, r.code, r.out, r.err);
	ck_assert_str_eq(r.reason, "landlock: " FIRST "/f: Permission denied");
	stop(held);
	iso_close(c);
}
END_TEST

/* ------------------------------------------------------------------ */

static void grant_grants(iso_spec *spec, void *arg)
{
	(void)arg;
	ck_assert_int_eq(iso_spec_add_read_path(spec, GRANTS), 0);
}

/* A read grant shows what its uid may reach on the host and no more: a
 * file under a directory the caller's mount namespace has mounted over
 * (an empty tmpfs here; systemd's TemporaryFileSystem=, ProtectHome=,
 * InaccessiblePaths= alike) is absent on the host, so it is absent for
 * the guest too, not revealed by a bind that leaves the mount behind. */
START_TEST(live_grant_does_not_reveal_what_a_mount_hides)
{
	const char *argv[] = { "/bin/cat", MASKED "/secret", NULL };
	struct stat st;
	struct run r;

	/* As root, in a mount namespace of this test's own (which the
	 * setuid helper it starts inherits). */
	ck_assert_int_eq(unshare(CLONE_NEWNS), 0);
	ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	ck_assert_int_eq(mount("tmpfs", MASKED, "tmpfs", 0, "mode=0755,size=16k"), 0);
	become(T_CALLER);
	ck_assert_int_eq(stat(MASKED "/secret", &st), -1);
	ck_assert_int_eq(errno, ENOENT);
	run(argv, grant_grants, NULL, &r);
	ck_assert_msg(r.spawn_rc == 0, "spawn: %s", r.msg);
	ck_assert_msg(strstr(r.out, "masked-secret") == NULL,
		      "the guest read what the mount hides: %s", r.out);
	ck_assert_msg(r.outcome == ISO_OUTCOME_EXITED && r.code == 1, "outcome %d code %d: %s%s",
		      r.outcome, r.code, r.out, r.err);
}
END_TEST

static void grant_grants_for_writing(iso_spec *spec, void *arg)
{
	(void)arg;
	ck_assert_int_eq(iso_spec_add_write_path(spec, GRANTS), 0);
}

/* Nor does a write grant write where the caller's mount namespace has
 * made a directory below it read-only (systemd's ReadOnlyPaths= alike):
 * the guest's writes there fail as the caller's do. */
START_TEST(live_write_grant_keeps_a_read_only_mount_below_it)
{
	const char *const *argv = sh("echo x > " GRANT_DIR "/ro-bypass");
	struct stat st;
	struct run r;

	ck_assert_int_eq(unshare(CLONE_NEWNS), 0);
	ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
	ck_assert_int_eq(mount(GRANT_DIR, GRANT_DIR, NULL, MS_BIND, NULL), 0);
	ck_assert_int_eq(mount(NULL, GRANT_DIR, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY, NULL), 0);
	become(T_CALLER);
	ck_assert_int_eq(open(GRANT_DIR "/ro-bypass", O_WRONLY | O_CREAT | O_CLOEXEC, 0644), -1);
	ck_assert_int_eq(errno, EROFS);
	run(argv, grant_grants_for_writing, NULL, &r);
	ck_assert_msg(r.spawn_rc == 0, "spawn: %s", r.msg);
	ck_assert_msg(lstat(GRANT_DIR "/ro-bypass", &st) < 0,
		      "the guest wrote below a read-only mount (uid %u)", (unsigned)st.st_uid);
	ck_assert_msg(r.outcome == ISO_OUTCOME_EXITED && r.code != 0, "outcome %d code %d: %s%s",
		      r.outcome, r.code, r.out, r.err);
}
END_TEST

/* A rule's read path is followed as root once per connection: where it
 * lies in a directory its caller (or a guest, through a write grant) may
 * change, a symbolic link put there must not bind into the tree what the
 * caller's uid cannot reach (a directory below root's 0700 one here; a
 * link into /proc/PID/cwd of another user's process alike). */
START_TEST(live_rule_path_swapped_for_a_link_leads_no_further_than_the_caller)
{
	const char *argv[] = { "/bin/cat", VENV "/f", NULL };
	iso_conn *c = NULL;
	struct run r;

	become(T_SVC);
	ck_assert_int_eq(open(PRIVATE "/open/f", O_RDONLY | O_CLOEXEC), -1);
	ck_assert_int_eq(errno, EACCES);
	ck_assert_int_eq(rmdir(VENV), 0);
	ck_assert_int_eq(symlink(PRIVATE "/open", VENV), 0);
	/* Followed as a guest of the rule, the link leads nowhere: no guest
	 * starts, and the reason names the rule's path. */
	if (iso_open(&c) == 0) {
		run_guest(c, argv, NULL, NULL, NULL, &r);
		iso_close(c);
		ck_abort_msg("the connection was not refused; the guest read: %s", r.out);
	}
	ck_assert_str_eq(iso_last_error(), VENV ": Permission denied");
}
END_TEST

/* ------------------------------------------------------------------ */

#define NEST GRANTS "/nest" /* a shared tmpfs of its own, with a/ */

static int lines(const char *text)
{
	int n = 0;

	for (; *text; text++)
		n += *text == '\n';
	return n;
}

static void grant_pair(iso_spec *spec, void *arg)
{
	const char *const *pair = arg; /* "r" or "w" then the path, twice */

	for (int i = 0; i < 4; i += 2)
		ck_assert_int_eq(pair[i][0] == 'w' ? iso_spec_add_write_path(spec, pair[i + 1])
						   : iso_spec_add_read_path(spec, pair[i + 1]),
				 0);
}

/* Under a shared root, as systemd leaves '/', a grant's mounts stay in
 * the guest's tree: however grants nest or repeat, the caller's mount
 * table is the same before and after each guest, and the innermost grant
 * decides what the guest may do there. */
START_TEST(live_grants_on_a_shared_root_leave_the_callers_mounts_unchanged)
{
	static const char *const cases[][5] = {
		/* grants, then what the guest's writes to NEST/x and NEST/a/x give */
		{ "r", NEST, "r", NEST, "ro ro" },      { "r", NEST, "r", NEST "/a", "ro ro" },
		{ "w", NEST, "r", NEST "/a", "rw ro" }, { "r", NEST, "w", NEST "/a", "ro rw" },
		{ "r", NEST "/a", "r", NEST, "ro ro" },
	};
	static char before[65536], after[65536];
	const char *script = "for f in " NEST "/x " NEST "/a/x; do "
			     "if echo > $f 2>/dev/null; then printf rw; rm $f; else printf ro; fi; "
			     "[ $f = " NEST "/x ] && printf ' '; done; echo";
	char want[16];
	struct run r;

	ck_assert_int_eq(unshare(CLONE_NEWNS), 0);
	ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_SHARED, NULL), 0);
	ck_assert_int_eq(mount("tmpfs", NEST, "tmpfs", 0, "mode=0755,uid=65534,gid=65534,size=64k"),
			 0);
	ck_assert_int_eq(mount(NULL, NEST, NULL, MS_SHARED, NULL), 0);
	ck_assert_int_eq(mkdir(NEST "/a", 0755), 0);
	ck_assert_int_eq(chown(NEST "/a", T_CALLER, T_CALLER), 0);
	become(T_CALLER);
	read_file("/proc/self/mountinfo", before, sizeof(before));
	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		run(sh(script), grant_pair, (void *)cases[i], &r);
		snprintf(want, sizeof(want), "%s\n", cases[i][4]);
		ck_assert_msg(r.spawn_rc == 0 && r.outcome == ISO_OUTCOME_EXITED && r.code == 0,
			      "case %zu: spawn %d (%s), outcome %d code %d: %s%s", i, r.spawn_rc,
			      r.msg, r.outcome, r.code, r.out, r.err);
		ck_assert_msg(strcmp(r.out, want) == 0, "case %zu: %s %s %s %s: %s, expected %s", i,
			      cases[i][0], cases[i][1], cases[i][2], cases[i][3], r.out, r.err);
		read_file("/proc/self/mountinfo", after, sizeof(after));
		ck_assert_msg(strcmp(before, after) == 0,
			      "case %zu: %s %s %s %s changed the "
			      "caller's mounts: %d lines, were %d",
			      i, cases[i][0], cases[i][1], cases[i][2], cases[i][3], lines(after),
			      lines(before));
	}
}
END_TEST

static int bind_socket(const char *path)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	strcpy(un.sun_path, path);
	unlink(path);
	if (fd < 0 || bind(fd, (struct sockaddr *)&un, sizeof un) < 0 || chmod(path, 0777) < 0 ||
	    listen(fd, 8) < 0) {
		fprintf(stderr, "live_world: socket %s: %s\n", path, strerror(errno));
		exit(99);
	}
	return fd;
}

/* As root, before the tests drop: sockets anyone may connect to, and the
 * grants' targets. */
/* `text` as the file `path`, 0644, made by the test as root; or exit. */
static void make_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) || close(fd) < 0) {
		fprintf(stderr, "live_world: %s: %s\n", path, strerror(errno));
		exit(99);
	}
}

static void make_targets(void)
{
	snprintf(sock_run, sizeof(sock_run), "/run/isospawn-live-world-%d.sock", (int)getpid());
	snprintf(sock_tmp, sizeof(sock_tmp), "/tmp/isospawn-live-world-%d.sock", (int)getpid());
	sockets[0] = bind_socket(sock_run);
	sockets[1] = bind_socket(sock_tmp);
	(void)mkdir(GRANTS, 0755);
	(void)mkdir(GRANT_DIR, 0777);
	(void)unlink(GRANT_DIR "/out");
	(void)unlink(GRANT_LINK);
	(void)mkdir(COVER, 0755);
	(void)mkdir(COVER "/a", 0755);
	(void)mkdir(COVER "/b", 0755);
	(void)mkdir(PRIVATE, 0700);
	(void)mkdir(MASKED, 0755);
	(void)mkdir(NEST, 0755);
	if ((mkdir(FIRST, 0700) < 0 && errno != EEXIST) || chown(FIRST, FIRST_UID, FIRST_UID) < 0) {
		fprintf(stderr, "live_world: %s: %s\n", FIRST, strerror(errno));
		exit(99);
	}
	make_file(FIRST "/f", "first-only\n");
	(void)unlink(VENV);
	(void)rmdir(VENV);
	if (mkdir(SVC, 0755) < 0 || chown(SVC, T_SVC, T_SVC) < 0 || mkdir(VENV, 0755) < 0 ||
	    chown(VENV, T_SVC, T_SVC) < 0 || mkdir(PRIVATE "/open", 0755) < 0) {
		fprintf(stderr, "live_world: %s: %s\n", SVC, strerror(errno));
		exit(99);
	}
	make_file(PRIVATE "/open/f", "behind-0700\n");
	make_file(MASKED "/secret", "masked-secret\n");
	make_file(COVER "/a/f", "rule-granted\n");
	make_file(PRIVATE "/f", "private\n");
	if (chmod(PRIVATE, 0700) < 0) {
		fprintf(stderr, "live_world: %s: %s\n", PRIVATE, strerror(errno));
		exit(99);
	}
	make_file(GRANT_FILE, "granted\n");
	if (chown(GRANT_DIR, T_CALLER, T_CALLER) < 0 || chmod(GRANT_DIR, 0700) < 0 ||
	    symlink(GRANT_DIR, GRANT_LINK) < 0) {
		fprintf(stderr, "live_world: %s: %s\n", GRANTS, strerror(errno));
		exit(99);
	}
}

static void remove_targets(void)
{
	unlink(sock_run);
	unlink(sock_tmp);
	unlink(GRANT_DIR "/out");
	unlink(GRANT_DIR "/ro-bypass");
	unlink(GRANT_LINK);
	unlink(GRANT_FILE);
	rmdir(GRANT_DIR);
	unlink(COVER "/a/f");
	rmdir(COVER "/a");
	rmdir(COVER "/b");
	rmdir(COVER);
	unlink(PRIVATE "/f");
	unlink(PRIVATE "/open/f");
	rmdir(PRIVATE "/open");
	rmdir(PRIVATE);
	unlink(FIRST "/f");
	rmdir(FIRST);
	unlink(VENV);
	rmdir(VENV);
	rmdir(SVC);
	unlink(MASKED "/secret");
	rmdir(MASKED);
	rmdir(NEST);
	rmdir(GRANTS);
}

/* The mount calls the helper builds the tree with (Linux 5.12): each
 * answers EBADF or EINVAL to these arguments, ENOSYS when missing. */
static const char *mount_api_missing(void)
{
	static const struct {
		long nr;
		const char *name;
	} calls[] = {
		{ SYS_open_tree, "open_tree" },
		{ SYS_move_mount, "move_mount" },
		{ SYS_fsopen, "fsopen" },
		{ SYS_mount_setattr, "mount_setattr" },
	};
	static char why[96];

	for (size_t i = 0; i < sizeof(calls) / sizeof(*calls); i++) {
		if (feature_hidden("mountapi") ||
		    (syscall(calls[i].nr, -1, NULL, 0, NULL, 0) < 0 && errno == ENOSYS)) {
			snprintf(why, sizeof(why),
				 "the kernel lacks %s (Linux 5.12), which "
				 "the guest's tree needs",
				 calls[i].name);
			return why;
		}
	}
	return NULL;
}

static Suite *world_suite(void)
{
	Suite *s = suite_create("live_world");
	TCase *programs = tcase_create("programs");
	TCase *reach = tcase_create("reach");
	const char *no = mount_api_missing();

	tcase_add_unless(programs, live_python_multiprocessing_and_shared_memory_work, no);
	tcase_add_unless(programs, live_dev_stdin_stdout_stderr_reopen_the_handed_over_pipes, no);
	tcase_add_unless(programs, live_stdio_pipes_reopen_only_in_the_direction_handed_over, no);
	tcase_add_unless(programs, live_stdio_pipe_the_caller_does_not_own_keeps_its_mode, no);
	tcase_add_unless(programs, live_ps_lists_only_the_guests_processes, no);
	tcase_add_unless(programs, live_whoami_getuser_and_home_name_the_guest, no);
	tcase_add_unless(programs, live_git_commits_and_gcc_builds_in_tmp, no);
	tcase_add_unless(programs, live_programs_count_the_cpus, no);
	tcase_add_unless(reach, live_host_unix_sockets_are_out_of_reach, no);
	tcase_add_unless(reach, live_guest_connects_to_a_socket_in_its_read_grant, no);
	tcase_add_unless(reach, live_host_processes_and_home_are_absent, no);
	tcase_add_unless(reach, live_mount_and_umount_still_fail, no);
	tcase_add_unless(reach, live_grants_work_through_binds_and_leave_host_mounts_unchanged, no);
	tcase_add_unless(reach, live_symlinked_grant_lends_its_target_at_its_own_path, no);
	tcase_add_unless(reach, live_grant_the_caller_cannot_open_is_refused_with_its_own_error,
			 no);
	tcase_add_unless(reach, live_request_grant_never_hides_the_rules_own, no);
	tcase_add_unless(reach, live_rule_path_the_guest_cannot_reach_fails_the_start, no);
	tcase_add_unless(reach, live_rule_path_another_pool_uid_cannot_reach_fails_its_start, no);
	tcase_add_unless(reach, live_grant_does_not_reveal_what_a_mount_hides, no);
	tcase_add_unless(reach, live_write_grant_keeps_a_read_only_mount_below_it, no);
	tcase_add_unless(reach, live_rule_path_swapped_for_a_link_leads_no_further_than_the_caller,
			 no);
	tcase_add_unless(reach, live_grants_on_a_shared_root_leave_the_callers_mounts_unchanged,
			 no);
	suite_add_tcase(s, programs);
	suite_add_tcase(s, reach);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	harness_setup();
	make_targets();
	sr = srunner_create(world_suite());
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	remove_targets();
	close(sockets[0]);
	close(sockets[1]);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
