/*
 * live_core.c - the core guarantees, through the real setuid helper, as an
 * unprivileged caller: the environment is synthesized, the guest runs under
 * a pool uid, only the caller's chosen fds cross, the helper survives a
 * hostile start, and the CLI's exit codes are as documented.
 */
#include "config.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "feature.h"
#include "harness.h"
#include "util.h"
#include "wire.h"

static const char *const allowed_names[] = { ISO_FORWARDED_NAMES, "PATH" };

static int name_allowed(const char *entry, const char *const *extra)
{
	size_t len = strcspn(entry, "=");

	for (size_t i = 0; i < sizeof(allowed_names) / sizeof(*allowed_names); i++)
		if (strlen(allowed_names[i]) == len && strncmp(entry, allowed_names[i], len) == 0)
			return 1;
	for (; extra && *extra; extra++)
		if (strlen(*extra) == len && strncmp(entry, *extra, len) == 0)
			return 1;
	return 0;
}

static void probe_env(const char *const *overrides, struct run *r)
{
	const char *argv[] = { T_PROBE, "env", NULL };
	iso_conn *c = open_conn();

	run_guest(c, argv, overrides, NULL, NULL, r);
	iso_close(c);
	ck_assert_msg(r->spawn_rc == 0, "spawn: %s", r->msg);
	ck_assert_int_eq(r->exit_code, 0);
}

START_TEST(live_secret_in_caller_env_is_withheld)
{
	struct run r;

	setenv("MY_SECRET_TOKEN", "hunter2-supersecret", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI-secret", 1);
	become(T_CALLER);
	probe_env(NULL, &r);
	ck_assert_ptr_null(strstr(r.out, "hunter2"));
	ck_assert_ptr_null(strstr(r.out, "MY_SECRET_TOKEN"));
	ck_assert_ptr_null(strstr(r.out, "wJalrXUtnFEMI"));
	ck_assert(has_line(r.out, "PATH="));
}
END_TEST

START_TEST(live_guest_env_is_subset_of_allow_list_path_and_overrides)
{
	const char *overrides[] = { "FOO=bar", "PYTHONSTARTUP=/x.py", NULL };
	const char *extra[] = { "FOO", "PYTHONSTARTUP", NULL };
	struct run r;

	setenv("LANG", "C.UTF-8", 1);
	setenv("PYTHONPATH", "/opt/lib", 1);
	setenv("HOME", "/home/someone", 1);
	setenv("SSH_AUTH_SOCK", "/tmp/agent.sock", 1);
	become(T_CALLER);
	probe_env(overrides, &r);
	for (char *line = strtok(r.out, "\n"); line; line = strtok(NULL, "\n"))
		ck_assert_msg(name_allowed(line, extra), "unexpected variable: %.40s", line);
}
END_TEST

START_TEST(live_forwarded_names_reach_the_guest)
{
	struct run r;

	setenv("LANG", "C.UTF-8", 1);
	setenv("PYTHONPATH", "/opt/lib", 1);
	become(T_CALLER);
	probe_env(NULL, &r);
	ck_assert(has_line(r.out, "LANG=C.UTF-8\n") || has_line(r.out, "LANG=C.UTF-8"));
	ck_assert(has_line(r.out, "PYTHONPATH=/opt/lib"));
}
END_TEST

START_TEST(live_path_is_the_fixed_value)
{
	struct run r;

	setenv("PATH", "/home/evil/bin:/usr/bin", 1);
	become(T_CALLER);
	probe_env(NULL, &r);
	ck_assert(has_line(r.out, "PATH=" ISO_GUEST_PATH "\n"));
}
END_TEST

START_TEST(live_override_reaches_guest_and_wins)
{
	const char *overrides[] = { "LANG=C.UTF-8", "FOO=bar", NULL };
	struct run r;

	setenv("LANG", "fr_FR.UTF-8", 1);
	become(T_CALLER);
	probe_env(overrides, &r);
	ck_assert(has_line(r.out, "LANG=C.UTF-8\n"));
	ck_assert(!has_line(r.out, "LANG=fr_FR"));
	ck_assert(has_line(r.out, "FOO=bar\n"));
}
END_TEST

START_TEST(live_refused_override_fails_whole_spawn_naming_it)
{
	const char *argv[] = { T_PROBE, "exit", "0", NULL };
	const char *overrides[] = { "FOO=ok", "LD_PRELOAD=/tmp/evil.so", NULL };
	struct run r;
	iso_conn *c;

	become(T_CALLER);
	c = open_conn();
	run_guest(c, argv, overrides, NULL, NULL, &r);
	iso_close(c);
	ck_assert_int_eq(r.spawn_rc, -EACCES);
	ck_assert_msg(strstr(r.msg, "LD_PRELOAD") != NULL, "message: %s", r.msg);
	ck_assert_ptr_null(strstr(r.msg, "/tmp/evil.so"));
}
END_TEST

START_TEST(live_guest_runs_under_a_pool_uid_not_the_callers)
{
	const char *argv[] = { T_PROBE, "ids", NULL };
	unsigned ruid, euid, suid, rgid, egid, sgid, ngroups = 99, nnp = 0;
	struct run r;
	iso_conn *c;

	become(T_CALLER);
	c = open_conn();
	run_guest(c, argv, NULL, NULL, NULL, &r);
	iso_close(c);
	ck_assert_msg(r.spawn_rc == 0, "spawn: %s", r.msg);
	ck_assert_msg(sscanf(r.out, "uid=%u,%u,%u gid=%u,%u,%u groups=%u nnp=%u", &ruid, &euid,
			     &suid, &rgid, &egid, &sgid, &ngroups, &nnp) == 8,
		      "probe said: %s", r.out);
	ck_assert_uint_ge(ruid, T_POOL_FIRST);
	ck_assert_uint_le(ruid, T_POOL_LAST);
	ck_assert_uint_ne(ruid, T_CALLER);
	ck_assert(ruid == euid && euid == suid && rgid == ruid && egid == ruid && sgid == ruid);
	ck_assert_uint_eq(ngroups, 0);
	ck_assert_uint_eq(nnp, 1);
	ck_assert_uint_eq(r.uid, ruid);
}
END_TEST

START_TEST(live_guest_cannot_read_callers_proc_environ)
{
	char pid[16];
	const char *argv[] = { T_PROBE, "environ", pid, NULL };
	struct run r;
	iso_conn *c;

	setenv("MY_SECRET_TOKEN", "hunter2-supersecret", 1);
	become(T_CALLER);
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	c = open_conn();
	run_guest(c, argv, NULL, NULL, NULL, &r);
	iso_close(c);
	ck_assert_msg(r.spawn_rc == 0, "spawn: %s", r.msg);
	ck_assert_int_eq(r.exit_code, 1);
	ck_assert_ptr_null(strstr(r.out, "hunter2"));
}
END_TEST

/* A caller whose stdio is closed: the library's own descriptors - its
 * helper socket, a guest's channel - are never 0, 1 or 2, where the
 * caller's next write "to stderr" or a guest given "stdin" would reach
 * them. */
START_TEST(live_library_keeps_its_descriptors_above_stdio)
{
	const char *argv[] = { "/bin/true", NULL };
	iso_spec *spec;
	iso_guest *g;
	iso_conn *conn;

	become(T_CALLER);
	close(STDIN_FILENO);
	close(STDOUT_FILENO);
	close(STDERR_FILENO);
	conn = open_conn();
	ck_assert_msg(iso_conn_fd(conn) > STDERR_FILENO, "helper socket is fd %d",
		      iso_conn_fd(conn));
	ck_assert_int_eq(iso_spec_new(&spec), 0);
	ck_assert_int_eq(iso_spec_set_program(spec, argv[0]), 0);
	ck_assert_int_eq(iso_spec_set_argv(spec, argv), 0);
	ck_assert_int_eq(iso_spec_set_channel(spec, 1), 0);
	ck_assert_msg(iso_spawn(conn, spec, &g) == 0, "spawn: %s", iso_last_error());
	ck_assert_msg(iso_channel_fd(g) > STDERR_FILENO, "channel is fd %d", iso_channel_fd(g));
	ck_assert_int_eq(iso_wait(g, -1), 0);
	ck_assert_int_eq(iso_guest_outcome(g), ISO_OUTCOME_EXITED);
	ck_assert_int_eq(iso_guest_code(g), 0);
	iso_guest_free(g);
	iso_spec_free(spec);
	iso_close(conn);
}
END_TEST

START_TEST(live_inherited_fd_without_cloexec_does_not_reach_guest)
{
	const char *argv[] = { T_PROBE, "fds", NULL };
	struct run r;
	iso_conn *c;
	int leak;

	become(T_CALLER);
	leak = open("/dev/null", O_RDONLY); /* no O_CLOEXEC on purpose */
	ck_assert_int_ge(leak, 0);
	ck_assert_int_eq(dup2(leak, 9), 9);
	c = open_conn();
	run_guest(c, argv, NULL, NULL, NULL, &r);
	iso_close(c);
	ck_assert_msg(r.spawn_rc == 0, "spawn: %s", r.msg);
	ck_assert_msg(strcmp(r.out, "0 1 2\n") == 0, "guest fds: %s", r.out);
}
END_TEST

#ifndef SO_PASSPIDFD
#define SO_PASSPIDFD 76 /* Linux 6.5 */
#endif

#define RAW_CLOSE_STDIO 1 /* start the helper with fds 0-2 closed */
#define RAW_PASS_OPTIONS 2 /* with SO_PASSCRED, SO_PASSSEC, SO_PASSPIDFD set */

/* Start the helper by hand: fd 3 = our socket end, chosen argv and envp.
 * Returns the pid; *sock is our end. */
static pid_t start_helper_raw(char *const argv[], char *const envp[], int flags, int *sock)
{
	static const int pass[] = { SO_PASSCRED, SO_PASSSEC, SO_PASSPIDFD };
	posix_spawn_file_actions_t fa;
	int sv[2], on = 1;
	int close_stdio = flags & RAW_CLOSE_STDIO;
	pid_t pid;

	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
	/* On the helper's end: what it receives would carry them. */
	for (size_t i = 0; (flags & RAW_PASS_OPTIONS) && i < sizeof(pass) / sizeof(*pass); i++)
		ck_assert_msg(setsockopt(sv[1], SOL_SOCKET, pass[i], &on, sizeof(on)) == 0 ||
				  errno == ENOPROTOOPT,
			      "option %d: %s", pass[i], strerror(errno));
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, sv[1], 3);
	if (close_stdio)
		for (int fd = 0; fd < 3; fd++)
			posix_spawn_file_actions_addclose(&fa, fd);
	ck_assert_int_eq(posix_spawn(&pid, T_HELPER, &fa, NULL, argv, envp), 0);
	posix_spawn_file_actions_destroy(&fa);
	close(sv[1]);
	*sock = sv[0];
	return pid;
}

static void read_msg(int sock, struct iso_wire_msg *m, uint8_t *buf)
{
	char why[256];
	ssize_t len = recv(sock, buf, ISO_WIRE_MAX, 0);

	ck_assert_msg(len > 0, "helper sent nothing (%zd)", len);
	ck_assert_msg(iso_wire_decode(buf, (size_t)len, m, why, sizeof(why)) == 0, "%s", why);
}

/* Send SPAWN of `probe COMMAND` (ARG may be NULL) on a raw connection,
 * which may wait wait_ms for a slot. */
static void send_probe_spawn_waiting(int sock, uint32_t id, const char *command, const char *arg,
				     uint64_t timeout_ms, uint64_t wait_ms)
{
	static uint8_t out[ISO_WIRE_MAX];
	static struct iso_wire_msg m;
	long len;

	memset(&m, 0, sizeof(m));
	m.type = ISO_MSG_SPAWN;
	m.id = id;
	m.u.spawn.program = T_PROBE;
	m.u.spawn.argv[0] = T_PROBE;
	m.u.spawn.argv[1] = command;
	m.u.spawn.argv[2] = arg;
	m.u.spawn.argc = arg ? 3 : 2;
	m.u.spawn.timeout_ms = timeout_ms;
	m.u.spawn.wait_slot_ms = wait_ms;
	len = iso_wire_encode(&m, out, sizeof(out));
	ck_assert_int_gt(len, 0);
	ck_assert_int_eq(send(sock, out, (size_t)len, 0), len);
}

static void send_probe_spawn(int sock, uint32_t id, const char *command, const char *arg,
			     uint64_t timeout_ms)
{
	send_probe_spawn_waiting(sock, id, command, arg, timeout_ms, 0);
}

/* Entries in /proc/PID/fd (the test's root part reads the helper's). */
static int count_fds(pid_t pid)
{
	char path[64];
	struct dirent *e;
	DIR *d;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	d = opendir(path);
	ck_assert_msg(d != NULL, "%s: %s", path, strerror(errno));
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* The helper's descriptors once a guest's end has settled: EXITED reaches
 * the client before the helper has waited for that guest's reaper (and
 * closed its pidfd, report socket and lease), so a count taken right
 * after it may include them. The fewest seen over a second is the count
 * without what is on its way out; a leak stays in every sample. */
static int count_settled_fds(pid_t pid)
{
	int least = count_fds(pid);

	for (int i = 0; i < 50; i++) {
		int now;

		usleep(20000);
		now = count_fds(pid);
		if (now < least)
			least = now;
	}
	return least;
}

static void send_kill(int sock, uint32_t id)
{
	struct iso_wire_msg m = { .type = ISO_MSG_KILL, .id = id };
	uint8_t out[64];
	long len;

	m.u.kill.signal = SIGTERM;
	len = iso_wire_encode(&m, out, sizeof(out));
	ck_assert_int_gt(len, 0);
	ck_assert_int_eq(send(sock, out, (size_t)len, 0), len);
}

/* SPAWN `id` of `program how arg` (the probe's words) into out; its
 * length. */
static long encode_probe_spawn(uint8_t out[ISO_WIRE_MAX], uint32_t id, const char *program,
			       const char *how, const char *arg, uint32_t stdio_mask)
{
	static struct iso_wire_msg m;
	long len;

	memset(&m, 0, sizeof(m));
	m.type = ISO_MSG_SPAWN;
	m.id = id;
	m.u.spawn.program = program;
	m.u.spawn.argv[0] = program;
	m.u.spawn.argv[1] = how;
	m.u.spawn.argv[2] = arg;
	m.u.spawn.argc = 3;
	m.u.spawn.stdio_mask = stdio_mask;
	len = iso_wire_encode(&m, out, ISO_WIRE_MAX);
	ck_assert_int_gt(len, 0);
	return len;
}

/* SPAWN of `probe exit 0` with the guest's stdio attached (three fds). */
static void send_spawn_with_stdio(int sock, uint32_t id)
{
	static uint8_t out[ISO_WIRE_MAX];
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	int fds[3] = { null, null, null };
	long len = encode_probe_spawn(out, id, T_PROBE, "exit", "0", 7);

	ck_assert_int_eq(iso_send_fds(sock, out, (size_t)len, 0, fds, 3), len);
	close(null);
}

/* The caller's side of live_helper_clears_pass_options_the_caller_set:
 * tells the root side the helper's pid when it may count its fds, and
 * waits for it to have counted. */
static void pass_options_client(int tell, int wait)
{
	char *argv[] = { "isospawn-helper", NULL };
	char *envp[] = { NULL };
	static uint8_t buf[ISO_WIRE_MAX];
	static struct iso_wire_msg m;
	int sock, status;
	pid_t helper;
	char go;

	become(T_CALLER);
	helper = start_helper_raw(argv, envp, RAW_PASS_OPTIONS, &sock);
	read_msg(sock, &m, buf);
	ck_assert_msg(m.type == ISO_MSG_HELLO && m.u.hello.err == 0, "no greeting");
	/* Two guests first, so that the reaper made ahead for the next
	 * (helper/spawner.c) is counted in both. */
	for (uint32_t id = 1; id <= 3; id++) {
		send_spawn_with_stdio(sock, id);
		read_msg(sock, &m, buf);
		ck_assert_msg(m.type == ISO_MSG_SPAWNED, "type %d: %s", m.type,
			      m.type == ISO_MSG_REFUSED ? m.u.refused.message : "");
		read_msg(sock, &m, buf);
		ck_assert_int_eq(m.type, ISO_MSG_EXITED);
		ck_assert_int_eq(m.u.exited.outcome, ISO_OUTCOME_EXITED);
		if (id == 1)
			continue;
		ck_assert_int_eq(write(tell, &helper, sizeof(helper)), sizeof(helper));
		ck_assert_int_eq(read(wait, &go, 1), 1);
		for (uint32_t i = 0; id == 2 && i < 3000; i++)
			send_kill(sock, 100000 + i);
	}
	close(sock);
	ck_assert_int_eq(waitpid(helper, &status, 0), helper);
}

/* A caller that set SO_PASSCRED, SO_PASSSEC and SO_PASSPIDFD
 * on the helper's end before starting it gets a helper that still takes
 * requests with descriptors, and 3,000 messages leave no descriptor
 * behind in it. */
START_TEST(live_helper_clears_pass_options_the_caller_set)
{
	int tell[2], go[2], before, after, status;
	pid_t client, helper;

	ck_assert_int_eq(pipe(tell), 0);
	ck_assert_int_eq(pipe(go), 0);
	client = fork();
	ck_assert_int_ge(client, 0);
	if (client == 0) {
		close(tell[0]);
		close(go[1]);
		pass_options_client(tell[1], go[0]);
		_exit(0);
	}
	close(tell[1]);
	close(go[0]);
	ck_assert_int_eq(read(tell[0], &helper, sizeof(helper)), sizeof(helper));
	before = count_settled_fds(helper);
	ck_assert_int_eq(write(go[1], "g", 1), 1);
	ck_assert_msg(read(tell[0], &helper, sizeof(helper)) == sizeof(helper),
		      "the client failed");
	after = count_settled_fds(helper);
	ck_assert_int_eq(write(go[1], "g", 1), 1);
	ck_assert_int_eq(waitpid(client, &status, 0), client);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_msg(after <= before, "helper fds: %d before, %d after", before, after);
}
END_TEST

/* Send `type` (LIST, RULE: no fields) on a raw connection: 1, or 0 when
 * the helper has taken nothing more for 2 s. */
static int send_bare(int sock, int type, uint32_t id)
{
	struct iso_wire_msg m = { .type = type, .id = id };
	struct pollfd room = { .fd = sock, .events = POLLOUT };
	uint8_t out[64];
	long len;
	ssize_t sent;

	len = iso_wire_encode(&m, out, sizeof(out));
	ck_assert_int_gt(len, 0);
	while ((sent = send(sock, out, (size_t)len, MSG_DONTWAIT)) < 0 && errno == EAGAIN)
		if (poll(&room, 1, 2000) == 0)
			return 0;
	ck_assert_msg(sent == len, "send: %s", strerror(errno));
	return 1;
}

/* The resident memory of a process, in KiB. */
static long rss_kib(pid_t pid)
{
	char path[64], buf[4096];
	const char *at;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	ck_assert_int_ge(read_text(path, buf, sizeof(buf)), 0);
	at = status_field(buf, "\nVmRSS:\t");
	ck_assert_ptr_nonnull(at);
	return strtol(at, NULL, 10);
}

#define LONG_GUESTS 32
#define UNREAD_LISTS 1900 /* x (LONG_GUESTS + 1) replies: 239 MiB queued before */
#define HELPER_RSS_MAX_KIB (64 * 1024)

/* A caller that never reads its replies must not make its helper,
 * root's, hold them without bound: each LIST is 12 bytes, its answer a
 * GUEST record of up to 4 KiB (the program's path) for each of the
 * caller's live guests, so a helper that read on would hold 239 MiB after
 * these 1,900 LISTs. It reads no request while replies wait: the caller's
 * sends stop instead. */
START_TEST(live_replies_a_caller_does_not_read_stay_bounded)
{
	char *argv[] = { "isospawn-helper", NULL };
	char *envp[] = { NULL };
	static char program[ISO_WIRE_PATH_MAX];
	static uint8_t buf[ISO_WIRE_MAX], out[ISO_WIRE_MAX];
	static struct iso_wire_msg m;
	size_t len = (size_t)snprintf(program, sizeof(program), "%s/long", T_ROOT);
	int sock, status;
	uint32_t sent;
	long rss;
	pid_t helper;

	/* As root: the probe at a path of nearly PATH_MAX bytes. */
	ck_assert_int_eq(mkdir(program, 0755), 0);
	while (len + 202 + sizeof("/probe") < sizeof(program)) {
		program[len++] = '/';
		memset(program + len, 'd', 200);
		len += 200;
		program[len] = '\0';
		ck_assert_int_eq(mkdir(program, 0755), 0);
	}
	strcat(program, "/probe");
	ck_assert_int_eq(symlink(T_PROBE, program), 0);
	become(T_CALLER);
	helper = start_helper_raw(argv, envp, 0, &sock);
	read_msg(sock, &m, buf);
	ck_assert_msg(m.type == ISO_MSG_HELLO && m.u.hello.err == 0, "no greeting");
	for (uint32_t id = 1; id <= LONG_GUESTS; id++) {
		long n = encode_probe_spawn(out, id, program, "sleep", "60", 0);

		ck_assert_int_eq(send(sock, out, (size_t)n, 0), n);
		read_msg(sock, &m, buf);
		ck_assert_msg(m.type == ISO_MSG_SPAWNED, "type %d: %s", m.type,
			      m.type == ISO_MSG_REFUSED ? m.u.refused.message : "");
	}
	for (sent = 0; sent < UNREAD_LISTS && send_bare(sock, ISO_MSG_LIST, 1000 + sent); sent++)
		;
	rss = rss_kib(helper);
	close(sock);
	ck_assert_int_eq(waitpid(helper, &status, 0), helper);
	ck_assert_msg(rss < HELPER_RSS_MAX_KIB,
		      "the helper holds %ld KiB after %d LISTs of "
		      "%d guests not read (at most %d KiB)",
		      rss, UNREAD_LISTS, LONG_GUESTS, HELPER_RSS_MAX_KIB);
}
END_TEST

START_TEST(live_helper_refuses_argc_zero)
{
	char *argv[] = { NULL };
	char *envp[] = { NULL };
	int sock, status;
	pid_t pid;

	become(T_CALLER);
	pid = start_helper_raw(argv, envp, 0, &sock);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 1);
	close(sock);
}
END_TEST

/* A hostile environment for the setuid helper: loader variables and a
 * secret. The helper must serve normally, load nothing, pass nothing on. */
START_TEST(live_helper_ignores_hostile_environment)
{
	char *argv[] = { "isospawn-helper", NULL };
	char *envp[] = {
		"LD_PRELOAD=" T_ROOT "/lib/evil.so", "GCONV_PATH=" T_ROOT "/lib", "MALLOC_CHECK_=3",
		"LD_LIBRARY_PATH=" T_ROOT "/lib",    "MY_SECRET_TOKEN=hunter2",   NULL
	};
	static uint8_t buf[ISO_WIRE_MAX];
	static struct iso_wire_msg m;
	int sock, status;
	pid_t pid;

	become(T_CALLER);
	pid = start_helper_raw(argv, envp, 0, &sock);
	read_msg(sock, &m, buf);
	ck_assert_int_eq(m.type, ISO_MSG_HELLO);
	ck_assert_msg(m.u.hello.err == 0, "refused: %s", m.u.hello.message);

	send_probe_spawn(sock, 1, "env", NULL, 0);
	read_msg(sock, &m, buf);
	ck_assert_msg(m.type == ISO_MSG_SPAWNED, "type %d", m.type);
	read_msg(sock, &m, buf);
	ck_assert_int_eq(m.type, ISO_MSG_EXITED);
	ck_assert_int_eq(m.u.exited.outcome, ISO_OUTCOME_EXITED);
	close(sock);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* evil.so's constructor would have created this as root. */
	ck_assert_int_eq(access(T_ROOT "/evil-ran", F_OK), -1);
}
END_TEST

START_TEST(live_helper_works_with_closed_stdio)
{
	char *argv[] = { "isospawn-helper", NULL };
	char *envp[] = { NULL };
	static uint8_t buf[ISO_WIRE_MAX];
	static struct iso_wire_msg m;
	int sock, status;
	pid_t pid;

	become(T_CALLER);
	pid = start_helper_raw(argv, envp, RAW_CLOSE_STDIO, &sock);
	read_msg(sock, &m, buf);
	ck_assert_int_eq(m.type, ISO_MSG_HELLO);
	ck_assert_int_eq(m.u.hello.err, 0);
	send_probe_spawn(sock, 7, "fds", NULL, 0);
	read_msg(sock, &m, buf);
	ck_assert_int_eq(m.type, ISO_MSG_SPAWNED);
	read_msg(sock, &m, buf);
	ck_assert_int_eq(m.type, ISO_MSG_EXITED);
	ck_assert_int_eq(m.id, 7);
	ck_assert_int_eq(m.u.exited.outcome, ISO_OUTCOME_EXITED);
	ck_assert_int_eq(m.u.exited.code, 0);
	close(sock);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
END_TEST

/* As the caller, a helper with an empty environment on a raw connection,
 * its HELLO read into m: its pid, and the connection in *sock. */
static pid_t start_helper_ready(uid_t caller, int *sock, struct iso_wire_msg *m, uint8_t *buf)
{
	char *argv[] = { "isospawn-helper", NULL };
	char *envp[] = { NULL };
	pid_t pid;

	become(caller);
	pid = start_helper_raw(argv, envp, 0, sock);
	read_msg(*sock, m, buf);
	ck_assert_int_eq(m->type, ISO_MSG_HELLO);
	return pid;
}

/* A hostile client speaking the wire directly: id 0 would name a free slot
 * in the helper, a timeout of 2^64-1 ms would overflow its deadline. Both are
 * refused by name; the helper goes on serving. */
START_TEST(live_helper_refuses_reserved_id_and_overlong_timeout)
{
	static uint8_t buf[ISO_WIRE_MAX];
	static struct iso_wire_msg m;
	int sock, status;
	pid_t pid = start_helper_ready(T_CALLER, &sock, &m, buf);

	for (int round = 0; round < 3; round++) {
		send_probe_spawn(sock, (uint32_t)round, "exit", "0",
				 round == 1 ? UINT64_MAX - 1 : 0);
		read_msg(sock, &m, buf);
		if (round == 2) {
			ck_assert_int_eq(m.type, ISO_MSG_SPAWNED);
			read_msg(sock, &m, buf);
			ck_assert_int_eq(m.type, ISO_MSG_EXITED);
			continue;
		}
		ck_assert_int_eq(m.type, ISO_MSG_REFUSED);
		ck_assert_int_eq(m.u.refused.err, EINVAL);
		ck_assert_msg(strstr(m.u.refused.message, round == 0 ? "id 0" : "366 days"), "%s",
			      m.u.refused.message);
	}
	close(sock);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
END_TEST

/* A guest's slot is free once its reaper is reaped, after its EXITED:
 * the caller sees ESRCH then instead of EPERM (the reaper is root's). */
static void wait_reaped(uint32_t reaper)
{
	for (int i = 0; i < 500 && (kill((pid_t)reaper, 0) == 0 || errno != ESRCH); i++)
		usleep(10000);
	ck_assert_int_eq(kill((pid_t)reaper, 0), -1);
}

/* The helper looks a request's id up only as far as its live guests reach
 * (loop.c find_guest): with a free slot between two live guests, the id of
 * the one past it is still refused, and the next guest takes the free
 * slot; at the end of the connection, with a free slot before them, every
 * live guest is stopped and waited for. */
START_TEST(live_helper_refuses_the_id_of_a_live_guest_past_a_free_slot)
{
	static uint8_t buf[ISO_WIRE_MAX];
	static struct iso_wire_msg m;
	uint32_t reapers[4];
	int sock, status;
	pid_t pid = start_helper_ready(T_CALLER, &sock, &m, buf);

	for (uint32_t id = 1; id <= 3; id++) {
		send_probe_spawn(sock, id, "sleep", "60", 0);
		read_msg(sock, &m, buf);
		ck_assert_int_eq(m.type, ISO_MSG_SPAWNED);
		reapers[id] = m.u.spawned.pid;
	}
	send_kill(sock, 2);
	read_msg(sock, &m, buf);
	ck_assert_int_eq(m.type, ISO_MSG_EXITED);
	ck_assert_int_eq(m.id, 2);
	wait_reaped(reapers[2]);
	send_probe_spawn(sock, 3, "exit", "0", 0);
	read_msg(sock, &m, buf);
	ck_assert_int_eq(m.type, ISO_MSG_REFUSED);
	ck_assert_msg(strstr(m.u.refused.message, "already names a live guest"), "%s",
		      m.u.refused.message);
	send_probe_spawn(sock, 2, "sleep", "60", 0);
	read_msg(sock, &m, buf);
	ck_assert_int_eq(m.type, ISO_MSG_SPAWNED);
	reapers[2] = m.u.spawned.pid;
	/* And the connection ends with the first slot free. */
	send_kill(sock, 1);
	read_msg(sock, &m, buf);
	ck_assert_int_eq(m.type, ISO_MSG_EXITED);
	wait_reaped(reapers[1]);
	close(sock);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	for (int i = 1; i <= 3; i++)
		ck_assert_msg(kill((pid_t)reapers[i], 0) < 0 && errno == ESRCH,
			      "reaper %u outlived its helper", reapers[i]);
}
END_TEST

/* The caller of tests/policy.conf.in with one slot, this file's alone. */
#define C_ONE 4000082u

/* Read the next message: of `type`, for request `id`. */
static void expect_msg(int sock, struct iso_wire_msg *m, uint8_t *buf, int type, uint32_t id)
{
	read_msg(sock, m, buf);
	ck_assert_msg(m->type == type && m->id == id, "type %d for %u, not %d for %u%s%s", m->type,
		      m->id, type, id, m->type == ISO_MSG_REFUSED ? ": " : "",
		      m->type == ISO_MSG_REFUSED ? m->u.refused.message : "");
}

/* With one slot held, spawns of one connection that wait start in the
 * order they came, each once the one before has ended and given the slot
 * back; a KILL naming one that waits withdraws it (its SPAWN answered,
 * ECANCELED); and the connection closed with one waiting ends its helper
 * at once, nothing left. */
START_TEST(live_waiting_spawns_start_in_order_and_a_kill_withdraws_one)
{
	static uint8_t buf[ISO_WIRE_MAX];
	static struct iso_wire_msg m;
	int sock, status;
	pid_t pid = start_helper_ready(C_ONE, &sock, &m, buf);

	send_probe_spawn(sock, 1, "sleep", "60", 0);
	expect_msg(sock, &m, buf, ISO_MSG_SPAWNED, 1);
	send_probe_spawn_waiting(sock, 2, "exit", "0", 0, 60000);
	send_probe_spawn_waiting(sock, 3, "exit", "0", 0, 60000);
	send_probe_spawn_waiting(sock, 4, "sleep", "60", 0, 60000);
	send_probe_spawn_waiting(sock, 5, "exit", "0", 0, 60000);
	send_kill(sock, 5);
	expect_msg(sock, &m, buf, ISO_MSG_REFUSED, 5);
	ck_assert_int_eq(m.u.refused.err, ECANCELED);
	send_kill(sock, 1);
	expect_msg(sock, &m, buf, ISO_MSG_EXITED, 1);
	expect_msg(sock, &m, buf, ISO_MSG_SPAWNED, 2);
	expect_msg(sock, &m, buf, ISO_MSG_EXITED, 2);
	expect_msg(sock, &m, buf, ISO_MSG_SPAWNED, 3);
	expect_msg(sock, &m, buf, ISO_MSG_EXITED, 3);
	expect_msg(sock, &m, buf, ISO_MSG_SPAWNED, 4);
	send_probe_spawn_waiting(sock, 6, "exit", "0", 0, 60000);
	close(sock);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}
END_TEST

START_TEST(live_helper_refuses_non_socket_fd3)
{
	char *argv[] = { "isospawn-helper", NULL };
	char *envp[] = { NULL };
	posix_spawn_file_actions_t fa;
	int status;
	pid_t pid;

	become(T_CALLER);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 3, "/dev/null", O_RDWR, 0);
	ck_assert_int_eq(posix_spawn(&pid, T_HELPER, &fa, NULL, argv, envp), 0);
	posix_spawn_file_actions_destroy(&fa);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 1);
}
END_TEST

START_TEST(live_caller_without_rule_is_refused_with_reason)
{
	iso_conn *c = NULL;
	int rc;

	become(T_NORULE);
	rc = iso_open(&c);
	ck_assert_int_eq(rc, -EACCES);
	ck_assert_ptr_null(c);
	ck_assert_msg(strstr(iso_last_error(), "no rule") != NULL, "%s", iso_last_error());
}
END_TEST

START_TEST(live_group_rule_matches_supplementary_group)
{
	const char *argv[] = { T_PROBE, "exit", "0", NULL };
	struct run r;
	iso_conn *c;

	become(T_GROUPED);
	c = open_conn();
	run_guest(c, argv, NULL, NULL, NULL, &r);
	iso_close(c);
	ck_assert_msg(r.spawn_rc == 0, "%s", r.msg);
	ck_assert_uint_ge(r.uid, T_POOL(1900100610u));
	ck_assert_uint_le(r.uid, T_POOL(1900100619u));
}
END_TEST

START_TEST(live_restricted_rule_limits_programs_and_overrides)
{
	const char *other[] = { "/bin/true", NULL };
	const char *probe[] = { T_PROBE, "env", NULL };
	const char *foo[] = { "FOO=1", NULL };
	const char *bar[] = { "BAR=1", NULL };
	const char *openssl[] = { "OPENSSL_CONF=" T_SHARED "/evil.cnf", NULL };
	struct run r;
	iso_conn *c;

	setenv("PYTHONPATH", "/opt/evil", 1);
	setenv("LANG", "C.UTF-8", 1);
	become(T_RESTRICTED);
	c = open_conn();
	run_guest(c, other, NULL, NULL, NULL, &r);
	ck_assert_int_eq(r.spawn_rc, -EACCES);
	ck_assert_msg(strstr(r.msg, "/bin/true") != NULL, "%s", r.msg);
	run_guest(c, probe, bar, NULL, NULL, &r);
	ck_assert_int_eq(r.spawn_rc, -EACCES);
	ck_assert_msg(strstr(r.msg, "BAR") != NULL, "%s", r.msg);
	/* Nor what would make a program load code of the caller's that no
	 * list of hooks names (SECURITY.md 5): the rule lists FOO only. */
	run_guest(c, probe, openssl, NULL, NULL, &r);
	ck_assert_int_eq(r.spawn_rc, -EACCES);
	ck_assert_msg(strstr(r.msg, "OPENSSL_CONF") != NULL, "%s", r.msg);
	run_guest(c, probe, foo, NULL, NULL, &r);
	ck_assert_msg(r.spawn_rc == 0, "%s", r.msg);
	ck_assert(has_line(r.out, "FOO=1"));
	ck_assert(has_line(r.out, "LANG=C.UTF-8"));
	/* The rule forwards LANG only: PYTHONPATH cannot inject code. */
	ck_assert(!has_line(r.out, "PYTHONPATH="));
	iso_close(c);
}
END_TEST

START_TEST(live_cli_env_reaches_guest_and_secret_does_not)
{
	const char *args[] = { "--env", "FOO=from-cli", "--env", "LANG=C.UTF-8",
			       "--",    T_PROBE,        "env",   NULL };
	const char *env[] = { "MY_SECRET_TOKEN=hunter2-supersecret", "LANG=de_DE.UTF-8", NULL };
	struct run r;

	become(T_CALLER);
	run_cli(args, env, &r);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
	ck_assert(has_line(r.out, "FOO=from-cli\n"));
	ck_assert(has_line(r.out, "LANG=C.UTF-8\n"));
	ck_assert_ptr_null(strstr(r.out, "hunter2"));
}
END_TEST

START_TEST(live_cli_exit_codes_follow_env_and_timeout)
{
	const char *exit3[] = { T_PROBE, "exit", "3", NULL };
	const char *kill9[] = { T_PROBE, "kill-self", "9", NULL };
	const char *kill15[] = { T_PROBE, "kill-self", "15", NULL };
	const char *missing[] = { T_ROOT "/bin/no-such-program", NULL };
	const char *bare_missing[] = { "no-such-program-anywhere", NULL };
	const char *notexec[] = { T_ROOT "/not-executable", NULL };
	const char *refused[] = { "--env", "LD_PRELOAD=/x.so", T_PROBE, "exit", "0", NULL };
	const char *bare[] = { "true", NULL };
	struct run r;
	int fd;

	fd = open(T_ROOT "/not-executable", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, "data\n", 5), 5);
	close(fd);
	become(T_CALLER);
	run_cli(exit3, NULL, &r);
	ck_assert_int_eq(r.exit_code, 3);
	run_cli(kill9, NULL, &r);
	ck_assert_int_eq(r.exit_code, 128 + 9);
	run_cli(kill15, NULL, &r);
	ck_assert_int_eq(r.exit_code, 128 + 15);
	run_cli(missing, NULL, &r);
	ck_assert_msg(r.exit_code == 127, "exit %d: %s", r.exit_code, r.err);
	run_cli(bare_missing, NULL, &r);
	ck_assert_int_eq(r.exit_code, 127);
	ck_assert_msg(strncmp(r.err, "isospawn: ", 10) == 0, "%s", r.err);
	run_cli(notexec, NULL, &r);
	ck_assert_msg(r.exit_code == 126, "exit %d: %s", r.exit_code, r.err);
	run_cli(refused, NULL, &r);
	ck_assert_int_eq(r.exit_code, 125);
	ck_assert_msg(strstr(r.err, "LD_PRELOAD") != NULL, "%s", r.err);
	ck_assert_msg(strchr(r.err, '\n') == r.err + strlen(r.err) - 1, "one line: %s", r.err);
	run_cli(bare, NULL, &r); /* resolved on the fixed guest PATH */
	ck_assert_int_eq(r.exit_code, 0);
}
END_TEST

/*
 * Stand in for the syslog daemon on a /dev/log of this check's own (root
 * part: its mount namespace has a /dev nobody else sees) while `client`
 * runs in an unprivileged child, and keep the messages holding `keep`, one
 * per line, in log.
 */
static void collect_log(void (*client)(void), const char *keep, char *log, size_t size)
{
	char line[1024];
	size_t used = 0;
	int sock, status;
	pid_t pid;

	sock = private_dev_log();
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		client();
		_exit(0);
	}
	/* Drain while the client runs: the helper must never block on a
	 * full queue. */
	for (;;) {
		struct pollfd p = { .fd = sock, .events = POLLIN };
		pid_t done = waitpid(pid, &status, WNOHANG);
		ssize_t n;

		if (done == 0 && poll(&p, 1, 10) == 0)
			continue;
		while ((n = recv(sock, line, sizeof(line) - 1, MSG_DONTWAIT)) > 0) {
			line[n] = '\0';
			if (strstr(line, keep) && used + (size_t)n + 2 < size) {
				memcpy(log + used, line, (size_t)n);
				used += (size_t)n;
				log[used++] = '\n';
			}
		}
		if (done == pid)
			break;
		ck_assert_int_eq(done, 0);
	}
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	log[used] = '\0';
	close(sock);
}

static void log_values_client(void)
{
	const char *ok[] = { T_PROBE, "exit", "0", NULL };
	const char *env_ok[] = { "FOO=hunter2-value", NULL };
	const char *env_bad[] = { "LD_PRELOAD=/hunter2/evil.so", NULL };
	iso_conn *c = NULL;
	struct run r;

	/* The restricted caller: no other test program uses it, so every
	 * line naming it comes from this test. */
	become(T_RESTRICTED);
	if (iso_open(&c) < 0)
		_exit(1);
	run_guest(c, ok, env_ok, NULL, NULL, &r);
	run_guest(c, ok, env_bad, NULL, NULL, &r);
	iso_close(c);
}

/* Every decision reaches syslog, with override names and never values. */
START_TEST(live_decisions_are_logged_without_values)
{
	char log[16384];

	collect_log(log_values_client, "caller=4000001 ", log, sizeof(log));
	ck_assert_msg(strstr(log, "isospawn-helper") && strstr(log, "connect caller=4000001 "),
		      "%s", log);
	ck_assert_msg(strstr(log, "spawn id=") && strstr(log, "overrides=FOO "), "%s", log);
	ck_assert_msg(strstr(log, "exit id=") && strstr(log, "outcome=exited"), "%s", log);
	ck_assert_msg(strstr(log, "refuse id=") && strstr(log, "LD_PRELOAD"), "%s", log);
	ck_assert_msg(strstr(log, "disconnect caller=4000001 "), "%s", log);
	ck_assert_msg(strstr(log, "hunter2") == NULL, "a value was logged: %s", log);
}
END_TEST

#define FORGED_PATH T_SHARED "/no-such\" forged=\"by-live-core"

static void set_cwd(iso_spec *spec, void *path)
{
	ck_assert_int_eq(iso_spec_set_cwd(spec, path), 0);
}

static void forged_path_client(void)
{
	const char *argv[] = { T_PROBE, "exit", "0", NULL };
	iso_conn *c;
	struct run r;

	become(T_CALLER);
	c = open_conn();
	run_guest(c, argv, NULL, set_cwd, (void *)FORGED_PATH, &r);
	ck_assert_msg(r.spawn_rc == 0, "spawn: %s", r.msg);
	ck_assert_int_eq(r.outcome, ISO_OUTCOME_FAILED);
	iso_close(c);
}

/* A caller's path reaches the reason of a failed start ("working
 * directory PATH: ...") and that reason is logged quoted, so a '"' in the
 * path cannot add a field to the line. */
START_TEST(live_caller_path_in_a_start_failed_reason_is_logged_quoted)
{
	char log[16384];

	collect_log(forged_path_client, "by-live-core", log, sizeof(log));
	ck_assert_msg(strstr(log, "start-failed id="), "%s", log);
	ck_assert_msg(strstr(log, "\\x22 forged=\\x22by-live-core"), "not quoted: %s", log);
	ck_assert_msg(!strstr(log, "\" forged=\"by-live-core"), "a forged field: %s", log);
}
END_TEST

/* A failed start's reason reaches the caller: the library's verbatim,
 * naming the caller's own path, and the CLI's one line with the bytes the
 * log escapes escaped, so 0x9b (a control sequence's start to some
 * terminals) reaches no terminal raw. */
#define ODD_PATH T_SHARED "/no-such\x9b\"x"

START_TEST(live_start_failed_reason_reaches_the_caller_escaped_by_the_cli)
{
	const char *argv[] = { T_PROBE, "exit", "0", NULL };
	const char *cli[] = { "--cwd", ODD_PATH, "--", T_PROBE, "exit", "0", NULL };
	const char *head = "isospawn: " T_PROBE ": confinement failed: ";
	iso_conn *c;
	struct run r;

	become(T_CALLER);
	c = open_conn();
	run_guest(c, argv, NULL, set_cwd, (void *)ODD_PATH, &r);
	iso_close(c);
	ck_assert_msg(r.spawn_rc == 0, "spawn: %s", r.msg);
	ck_assert_int_eq(r.outcome, ISO_OUTCOME_FAILED);
	ck_assert_int_eq(r.code, ENOENT);
	ck_assert_msg(strstr(r.reason, ODD_PATH ": No such file or directory"), "%s", r.reason);

	run_cli(cli, NULL, &r);
	ck_assert_int_eq(r.exit_code, 125);
	ck_assert_msg(strncmp(r.err, head, strlen(head)) == 0 &&
			  strstr(r.err, T_SHARED "/no-such\\x9b\\x22x: No such file or "
						 "directory (ENOENT)\n") &&
			  strchr(r.err, '\n') == r.err + strlen(r.err) - 1,
		      "stderr: %s", r.err);
	ck_assert_ptr_null(strchr(r.err, 0x9b));
}
END_TEST

#define T_UNBOUNDED 4000032u /* tests/policy.conf.in: timeout 0 1 */

/* No timeout is something a guest asks for, and only a rule without a
 * ceiling grants: --timeout none, or 0, outlives the rule's one-second
 * default there, and is refused, with the reason, under a ceiling. */
START_TEST(live_cli_timeout_none_only_where_the_rule_sets_no_ceiling)
{
	const char *none[] = { "--timeout", "none", "--", "/bin/sleep", "1.5", NULL };
	const char *zero[] = { "--timeout", "0", "--", "/bin/sleep", "1.5", NULL };
	const char *const *ways[] = { none, zero };
	const char *dflt[] = { "--", "/bin/sleep", "1.5", NULL };
	pid_t pid = fork();
	struct run r;
	int status;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int refused = 0;

		become(T_CALLER);
		for (size_t i = 0; i < 2; i++) {
			run_cli(ways[i], NULL, &r);
			refused += r.exit_code == 125 &&
				   strstr(r.err, "no timeout is not allowed by ") &&
				   strstr(r.err, " (timeout): its timeout is at most ");
		}
		_exit(refused == 2 ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		      "no timeout was granted under a ceiling");
	become(T_UNBOUNDED);
	run_cli(dflt, NULL, &r);
	ck_assert_msg(r.exit_code == 124, "exit %d: %s", r.exit_code, r.err);
	run_cli(none, NULL, &r);
	ck_assert_msg(r.exit_code == 0, "--timeout none: exit %d: %s", r.exit_code, r.err);
	run_cli(zero, NULL, &r);
	ck_assert_msg(r.exit_code == 0, "--timeout 0: exit %d: %s", r.exit_code, r.err);
}
END_TEST

static Suite *core_suite(void)
{
	Suite *s = suite_create("live_core");
	TCase *env = tcase_create("environment");
	TCase *ids = tcase_create("identity");
	TCase *helper = tcase_create("hostile_start");
	TCase *cli = tcase_create("cli");

	tcase_add_test(env, live_secret_in_caller_env_is_withheld);
	tcase_add_test(env, live_guest_env_is_subset_of_allow_list_path_and_overrides);
	tcase_add_test(env, live_forwarded_names_reach_the_guest);
	tcase_add_test(env, live_path_is_the_fixed_value);
	tcase_add_test(env, live_override_reaches_guest_and_wins);
	tcase_add_test(env, live_refused_override_fails_whole_spawn_naming_it);
	tcase_add_test(ids, live_guest_runs_under_a_pool_uid_not_the_callers);
	tcase_add_test(ids, live_guest_cannot_read_callers_proc_environ);
	tcase_add_test(ids, live_inherited_fd_without_cloexec_does_not_reach_guest);
	tcase_add_test(ids, live_library_keeps_its_descriptors_above_stdio);
	tcase_add_test(ids, live_caller_without_rule_is_refused_with_reason);
	tcase_add_test(ids, live_group_rule_matches_supplementary_group);
	tcase_add_test(ids, live_restricted_rule_limits_programs_and_overrides);
	tcase_add_test(helper, live_helper_refuses_argc_zero);
	tcase_add_test(helper, live_helper_ignores_hostile_environment);
	tcase_add_test(helper, live_helper_works_with_closed_stdio);
	tcase_add_test(helper, live_helper_clears_pass_options_the_caller_set);
	tcase_add_test(helper, live_replies_a_caller_does_not_read_stay_bounded);
	tcase_add_test(helper, live_helper_refuses_non_socket_fd3);
	tcase_add_test(helper, live_helper_refuses_reserved_id_and_overlong_timeout);
	tcase_add_test(helper, live_helper_refuses_the_id_of_a_live_guest_past_a_free_slot);
	tcase_add_test(helper, live_waiting_spawns_start_in_order_and_a_kill_withdraws_one);
	tcase_add_test(cli, live_cli_env_reaches_guest_and_secret_does_not);
	tcase_add_test(cli, live_cli_exit_codes_follow_env_and_timeout);
	tcase_add_test(cli, live_cli_timeout_none_only_where_the_rule_sets_no_ceiling);
	tcase_add_test(helper, live_decisions_are_logged_without_values);
	tcase_add_test(helper, live_caller_path_in_a_start_failed_reason_is_logged_quoted);
	tcase_add_test(helper, live_start_failed_reason_reaches_the_caller_escaped_by_the_cli);
	tcase_set_timeout(env, 60);
	tcase_set_timeout(ids, 60);
	tcase_set_timeout(helper, 60);
	tcase_set_timeout(cli, 60);
	suite_add_tcase(s, env);
	suite_add_tcase(s, ids);
	suite_add_tcase(s, helper);
	suite_add_tcase(s, cli);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	harness_setup();
	sr = srunner_create(core_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
