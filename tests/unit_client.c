/*
 * unit_client.c - the parts of libisospawn that need no helper (no
 * privilege needed): the spec builder's checks, the forwarded-name picker,
 * exit-code mapping, the message channel over a local socketpair, error
 * reporting, and iso_open()'s failures before a helper answers.
 *
 * Built from the library's sources, so it can look inside the handles.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"

static iso_spec *new_spec(void)
{
	iso_spec *spec = NULL;

	ck_assert_int_eq(iso_spec_new(&spec), 0);
	ck_assert_ptr_nonnull(spec);
	return spec;
}

/* A string of n bytes: "/" then 'a's. */
static char *long_path(size_t n)
{
	char *p = malloc(n + 1);

	ck_assert_ptr_nonnull(p);
	memset(p, 'a', n);
	p[0] = '/';
	p[n] = '\0';
	return p;
}

/* ---------------------------------------------------------------- */

START_TEST(test_last_error_starts_as_no_error)
{
	ck_assert_str_eq(iso_last_error(), "no error");
}
END_TEST

static void *other_thread_error(void *arg)
{
	return (void *)iso_last_error();
}

START_TEST(test_last_error_is_per_thread)
{
	iso_spec *spec = new_spec();
	pthread_t t;
	void *seen;

	ck_assert_int_eq(iso_spec_set_program(spec, "relative"), -EINVAL);
	ck_assert_ptr_nonnull(strstr(iso_last_error(), "not an absolute path"));
	ck_assert_int_eq(pthread_create(&t, NULL, other_thread_error, NULL), 0);
	ck_assert_int_eq(pthread_join(t, &seen), 0);
	ck_assert_str_eq((const char *)seen, "no error");
	iso_spec_free(spec);
}
END_TEST

START_TEST(test_strerror_covers_every_returned_code)
{
	static const int codes[] = {
		-EACCES, -EPERM,    -ENOENT,       -EPROTO,  -ENOMEM,          -EMFILE,      -EIO,
		-EINVAL, -E2BIG,    -ENAMETOOLONG, -EBADF,   -EAGAIN,          -ENOSYS,      -EPIPE,
		-EINTR,  -EMSGSIZE, -ENOTCONN,     -ENODATA, ISO_RECV_TIMEOUT, ISO_RECV_EOF,
	};
	const char *unknown = iso_strerror(-12345);

	ck_assert_str_eq(unknown, "unknown isospawn error");
	for (size_t i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		ck_assert_str_ne(iso_strerror(codes[i]), unknown);
}
END_TEST

/* ---------------------------------------------------------------- */

START_TEST(test_program_normal_absolute_path_accepted)
{
	iso_spec *spec = new_spec();

	ck_assert_int_eq(iso_spec_set_program(spec, "/usr/bin/python3"), 0);
	ck_assert_str_eq(spec->program, "/usr/bin/python3");
	ck_assert_int_eq(iso_spec_set_program(spec, "/bin/true"), 0);
	ck_assert_str_eq(spec->program, "/bin/true");
	iso_spec_free(spec);
}
END_TEST

START_TEST(test_program_not_in_normal_form_refused)
{
	static const char *const bad[] = {
		"bin/true",
		"./true",
		"/usr/./bin/true",
		"/usr/../bin/true",
		"/usr//bin",
		"/usr/bin/",
		"/",
		"/..",
		"/.",
		"",
	};
	iso_spec *spec = new_spec();

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(iso_spec_set_program(spec, bad[i]) == -EINVAL, "%s accepted", bad[i]);
	ck_assert_int_eq(iso_spec_set_program(spec, NULL), -EINVAL);
	ck_assert_ptr_null(spec->program);
	/* a name that merely starts with dots is a name */
	ck_assert_int_eq(iso_spec_set_program(spec, "/opt/..x/.y"), 0);
	iso_spec_free(spec);
}
END_TEST

START_TEST(test_program_of_4096_bytes_too_long)
{
	iso_spec *spec = new_spec();
	char *longest = long_path(4095), *too_long = long_path(4096);

	ck_assert_int_eq(iso_spec_set_program(spec, longest), 0);
	ck_assert_int_eq(iso_spec_set_program(spec, too_long), -ENAMETOOLONG);
	free(longest);
	free(too_long);
	iso_spec_free(spec);
}
END_TEST

START_TEST(test_argv_count_bounded_by_iso_args_max)
{
	iso_spec *spec = new_spec();
	const char **argv = calloc(ISO_ARGS_MAX + 2, sizeof(char *));

	ck_assert_ptr_nonnull(argv);
	for (int i = 0; i < ISO_ARGS_MAX; i++)
		argv[i] = "x";
	ck_assert_int_eq(iso_spec_set_argv(spec, argv), 0);
	ck_assert_uint_eq(spec->argc, ISO_ARGS_MAX);
	argv[ISO_ARGS_MAX] = "x";
	ck_assert_int_eq(iso_spec_set_argv(spec, argv), -E2BIG);
	ck_assert_uint_eq(spec->argc, ISO_ARGS_MAX); /* unchanged */
	free(argv);
	iso_spec_free(spec);
}
END_TEST

START_TEST(test_argv_larger_than_a_request_refused)
{
	iso_spec *spec = new_spec();
	char *big = malloc(ISO_WIRE_MAX / 4);
	const char *argv[] = { big, big, big, big, NULL };

	ck_assert_ptr_nonnull(big);
	memset(big, 'a', ISO_WIRE_MAX / 4 - 1);
	big[ISO_WIRE_MAX / 4 - 1] = '\0';
	ck_assert_int_eq(iso_spec_set_argv(spec, argv), -E2BIG);
	free(big);
	iso_spec_free(spec);
}
END_TEST

START_TEST(test_argv_copied_empty_refused_null_resets)
{
	iso_spec *spec = new_spec();
	char arg0[] = "prog";
	const char *argv[] = { arg0, "-x", NULL };
	const char *empty[] = { NULL };

	ck_assert_int_eq(iso_spec_set_argv(spec, argv), 0);
	arg0[0] = 'X';
	ck_assert_str_eq(spec->argv[0], "prog");
	ck_assert_str_eq(spec->argv[1], "-x");
	ck_assert_ptr_null(spec->argv[2]);
	ck_assert_int_eq(iso_spec_set_argv(spec, empty), -EINVAL);
	ck_assert_int_eq(iso_spec_set_argv(spec, NULL), 0);
	ck_assert_ptr_null(spec->argv);
	ck_assert_uint_eq(spec->argc, 0);
	iso_spec_free(spec);
}
END_TEST

START_TEST(test_env_name_form_checked)
{
	static const char *const bad[] = { "", "1A", "A-B", "A=B", "A B", "\xc3\xa9" };
	iso_spec *spec = new_spec();
	char name[ISO_ENV_NAME_MAX + 2];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(iso_spec_set_env(spec, bad[i], "v") == -EINVAL, "%s accepted",
			      bad[i]);
	ck_assert_int_eq(iso_spec_set_env(spec, NULL, "v"), -EINVAL);
	ck_assert_int_eq(iso_spec_set_env(spec, "A", NULL), -EINVAL);
	memset(name, 'N', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	ck_assert_int_eq(iso_spec_set_env(spec, name, "v"), -EINVAL);
	name[ISO_ENV_NAME_MAX] = '\0';
	ck_assert_int_eq(iso_spec_set_env(spec, name, "v"), 0);
	ck_assert_int_eq(iso_spec_set_env(spec, "_a1", ""), 0);
	ck_assert_uint_eq(spec->noverrides, 2);
	iso_spec_free(spec);
}
END_TEST

START_TEST(test_env_value_length_bounded)
{
	iso_spec *spec = new_spec();
	char *value = malloc(ISO_ENV_VALUE_MAX + 2);

	ck_assert_ptr_nonnull(value);
	memset(value, 'v', ISO_ENV_VALUE_MAX + 1);
	value[ISO_ENV_VALUE_MAX + 1] = '\0';
	ck_assert_int_eq(iso_spec_set_env(spec, "A", value), -E2BIG);
	value[ISO_ENV_VALUE_MAX] = '\0';
	ck_assert_int_eq(iso_spec_set_env(spec, "A", value), 0);
	free(value);
	iso_spec_free(spec);
}
END_TEST

START_TEST(test_env_same_name_replaced)
{
	iso_spec *spec = new_spec();

	ck_assert_int_eq(iso_spec_set_env(spec, "FOO", "1"), 0);
	ck_assert_int_eq(iso_spec_set_env(spec, "FOOBAR", "x"), 0);
	ck_assert_int_eq(iso_spec_set_env(spec, "FOO", "2=3"), 0);
	ck_assert_uint_eq(spec->noverrides, 2);
	ck_assert_str_eq(spec->overrides[0], "FOO=2=3");
	ck_assert_str_eq(spec->overrides[1], "FOOBAR=x");
	iso_spec_free(spec);
}
END_TEST

START_TEST(test_env_override_count_bounded)
{
	iso_spec *spec = new_spec();
	char name[16];

	for (int i = 0; i < ISO_ENV_OVERRIDES_MAX; i++) {
		snprintf(name, sizeof(name), "V%d", i);
		ck_assert_int_eq(iso_spec_set_env(spec, name, "x"), 0);
	}
	ck_assert_int_eq(iso_spec_set_env(spec, "ONE_MORE", "x"), -E2BIG);
	/* replacing one is still fine when full */
	ck_assert_int_eq(iso_spec_set_env(spec, "V7", "y"), 0);
	ck_assert_str_eq(spec->overrides[7], "V7=y");
	iso_spec_free(spec);
}
END_TEST

START_TEST(test_source_env_keeps_first_forwarded_only)
{
	static const char *const source[] = {
		"AWS_SECRET_ACCESS_KEY=s3cr3t",
		"LANG=C.UTF-8",
		"NOEQUALS",
		"PATH=/home/me/bin",
		"LANG=fr_FR",
		"TMPDIR=/tmp",
		"LD_PRELOAD=/evil.so",
		"LANGUAGE=x",
		NULL,
	};
	iso_spec *spec = new_spec();

	ck_assert_int_eq(iso_spec_set_source_env(spec, source), 0);
	ck_assert_int_eq(spec->source_set, 1);
	ck_assert_uint_eq(spec->nforward, 2);
	ck_assert_str_eq(spec->forward[0], "LANG=C.UTF-8");
	ck_assert_str_eq(spec->forward[1], "TMPDIR=/tmp");
	ck_assert_ptr_ne(spec->forward[0], source[1]); /* copied */
	iso_spec_free(spec);
}
END_TEST

START_TEST(test_source_env_null_forwards_nothing)
{
	static const char *const source[] = { "LANG=C", NULL };
	iso_spec *spec = new_spec();

	ck_assert_int_eq(iso_spec_set_source_env(spec, source), 0);
	ck_assert_int_eq(iso_spec_set_source_env(spec, NULL), 0);
	ck_assert_int_eq(spec->source_set, 1);
	ck_assert_uint_eq(spec->nforward, 0);
	iso_spec_free(spec);
}
END_TEST

START_TEST(test_pick_forwarded_takes_every_forwarded_name)
{
	static const char *const source[] = {
		"PYTHONPATH=a", "PYTHONHOME=b", "LD_LIBRARY_PATH=c",  "LANG=d",
		"LC_ALL=e",     "LC_CTYPE=f",   "PYTHONIOENCODING=g", "PYTHONUTF8=h",
		"TMPDIR=/i",    "LC_TIME=j",    "PYTHONPATHX=k",      "PYTHONPAT=l",
		NULL,
	};
	const char *picked[ISO_WIRE_FORWARD_MAX];

	ck_assert_uint_eq(iso__pick_forwarded(source, picked), 9);
	for (int i = 0; i < 9; i++)
		ck_assert_ptr_eq(picked[i], source[i]);
	ck_assert_uint_eq(iso__pick_forwarded(NULL, picked), 0);
}
END_TEST

START_TEST(test_stdio_closed_fd_refused)
{
	iso_spec *spec = new_spec();
	int p[2];

	ck_assert_int_eq(pipe(p), 0);
	ck_assert_int_eq(iso_spec_set_stdio(spec, p[0], p[1], -1), 0);
	ck_assert_int_eq(spec->stdio[0], p[0]);
	close(p[0]);
	close(p[1]);
	ck_assert_int_eq(iso_spec_set_stdio(spec, -1, p[1], -1), -EBADF);
	ck_assert_int_eq(iso_spec_set_stdio(spec, -2, -1, -1), -EBADF);
	ck_assert_int_eq(spec->stdio[0], p[0]); /* unchanged on failure */
	ck_assert_int_eq(iso_spec_set_stdio(spec, -1, -1, -1), 0);
	ck_assert_int_eq(spec->stdio[1], -1);
	iso_spec_free(spec);
}
END_TEST

/* Passed descriptors keep their numbers: never the stdio's, never a
 * directory (the guest would reach past its tree), each number once. */
START_TEST(test_pass_fd_checked_and_bounded)
{
	iso_spec *spec = new_spec();
	int dir = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	ck_assert_int_ge(dir, 3);
	ck_assert_int_ge(fd, 3);
	ck_assert_int_eq(iso_spec_pass_fd(spec, 2), -EINVAL);
	ck_assert_int_eq(iso_spec_pass_fd(spec, ISO_PASS_FD_LIMIT), -EINVAL);
	ck_assert_int_eq(iso_spec_pass_fd(spec, dir), -EINVAL);
	ck_assert_ptr_nonnull(strstr(iso_last_error(), ": a directory"));
	ck_assert_int_eq(iso_spec_pass_fd(spec, ISO_PASS_FD_LIMIT - 1), -EBADF);
	ck_assert_int_eq(iso_spec_pass_fd(spec, fd), 0);
	ck_assert_int_eq(iso_spec_pass_fd(spec, fd), 0);
	ck_assert_uint_eq(spec->npass, 1);
	for (int i = 1; i < ISO_PASS_FDS_MAX; i++)
		spec->pass_fds[spec->npass++] = 100 + i;
	close(dir);
	dir = dup(fd);
	ck_assert_int_eq(iso_spec_pass_fd(spec, dir), -E2BIG);
	close(dir);
	close(fd);
	iso_spec_free(spec);
}
END_TEST

START_TEST(test_limit_network_channel_checked)
{
	iso_spec *spec = new_spec();

	ck_assert_int_eq(iso_spec_set_limit(spec, ISO_LIMIT_COUNT, 1), -EINVAL);
	ck_assert_int_eq(iso_spec_set_limit(spec, (enum iso_limit) - 1, 1), -EINVAL);
	ck_assert_int_eq(iso_spec_set_limit(spec, ISO_LIMIT_AS, 1 << 20), 0);
	ck_assert_uint_eq(spec->limits_set, 1u << ISO_LIMIT_AS);
	ck_assert_uint_eq(spec->limits[ISO_LIMIT_AS], 1 << 20);
	ck_assert_int_eq(iso_spec_set_network(spec, (enum iso_network)3), -EINVAL);
	ck_assert_int_eq(iso_spec_set_network(spec, ISO_NETWORK_NONE), 0);
	ck_assert_int_eq(iso_spec_set_channel(spec, 7), 0);
	ck_assert_int_eq(spec->channel, 1);
	ck_assert_int_eq(iso_spec_set_timeout(spec, 1500), 0);
	ck_assert_uint_eq(spec->timeout_ms, 1500);
	iso_spec_free(spec);
}
END_TEST

START_TEST(test_paths_checked_and_bounded)
{
	iso_spec *spec = new_spec();
	char *too_long = long_path(4096);

	/* A grant is any path the caller can open at iso_spawn(): a relative
	 * one against its working directory then. */
	ck_assert_int_eq(iso_spec_add_read_path(spec, "/"), 0);
	ck_assert_int_eq(iso_spec_add_read_path(spec, "usr"), 0);
	ck_assert_int_eq(iso_spec_add_write_path(spec, "/tmp/../etc"), 0);
	ck_assert_int_eq(iso_spec_add_write_path(spec, ""), -EINVAL);
	ck_assert_int_eq(iso_spec_add_write_path(spec, NULL), -EINVAL);
	ck_assert_int_eq(iso_spec_add_write_path(spec, too_long), -EINVAL);
	ck_assert_int_eq(iso_spec_set_workdir(spec, too_long), -EINVAL);
	ck_assert_int_eq(iso_spec_set_workdir(spec, "."), 0);
	ck_assert_int_eq(iso_spec_set_workdir(spec, NULL), 0);
	ck_assert_ptr_null(spec->workdir);
	/* A working directory is a path of the guest's tree, in the normal
	 * form: control bytes would reach reasons and logs. */
	ck_assert_int_eq(iso_spec_set_cwd(spec, "job"), -EINVAL);
	ck_assert_int_eq(iso_spec_set_cwd(spec, "/tmp/../job"), -EINVAL);
	ck_assert_int_eq(iso_spec_set_cwd(spec, "/tmp/a\nb"), -EINVAL);
	ck_assert_int_eq(iso_spec_set_cwd(spec, too_long), -EINVAL);
	ck_assert_int_eq(iso_spec_set_cwd(spec, "/tmp/job"), 0);
	ck_assert_str_eq(spec->cwd, "/tmp/job");
	ck_assert_int_eq(iso_spec_set_program(spec, "/bin/\x1btrue"), -EINVAL);
	for (int i = 2; i < ISO_PATHS_MAX; i++)
		ck_assert_int_eq(iso_spec_add_read_path(spec, "/usr"), 0);
	ck_assert_int_eq(iso_spec_add_read_path(spec, "/usr"), -E2BIG);
	ck_assert_int_eq(iso_spec_add_write_path(spec, "/tmp"), 0);
	ck_assert_uint_eq(spec->nread, ISO_PATHS_MAX);
	ck_assert_uint_eq(spec->nwrite, 2);
	free(too_long);
	iso_spec_free(spec);
}
END_TEST

/* ---------------------------------------------------------------- */

static int exit_code_of(enum iso_outcome outcome, int code, enum iso_stage stage)
{
	iso_guest g;

	memset(&g, 0, sizeof(g));
	g.outcome = outcome;
	g.code = code;
	g.stage = stage;
	return iso_guest_exit_code(&g);
}

START_TEST(test_exit_code_follows_env_and_timeout)
{
	ck_assert_int_eq(exit_code_of(ISO_OUTCOME_EXITED, 0, 0), 0);
	ck_assert_int_eq(exit_code_of(ISO_OUTCOME_EXITED, 3, 0), 3);
	ck_assert_int_eq(exit_code_of(ISO_OUTCOME_SIGNALED, SIGKILL, 0), 137);
	ck_assert_int_eq(exit_code_of(ISO_OUTCOME_LIMIT, SIGXCPU, 0), 128 + SIGXCPU);
	ck_assert_int_eq(exit_code_of(ISO_OUTCOME_TIMED_OUT, SIGKILL, 0), 124);
	ck_assert_int_eq(exit_code_of(ISO_OUTCOME_RUNNING, 0, 0), 125);
}
END_TEST

START_TEST(test_exit_code_of_failed_start)
{
	ck_assert_int_eq(exit_code_of(ISO_OUTCOME_FAILED, ENOENT, ISO_STAGE_EXEC), 127);
	ck_assert_int_eq(exit_code_of(ISO_OUTCOME_FAILED, EACCES, ISO_STAGE_EXEC), 126);
	ck_assert_int_eq(exit_code_of(ISO_OUTCOME_FAILED, ENOEXEC, ISO_STAGE_EXEC), 126);
	ck_assert_int_eq(exit_code_of(ISO_OUTCOME_FAILED, EISDIR, ISO_STAGE_EXEC), 126);
	ck_assert_int_eq(exit_code_of(ISO_OUTCOME_FAILED, ETXTBSY, ISO_STAGE_EXEC), 126);
	ck_assert_int_eq(exit_code_of(ISO_OUTCOME_FAILED, EPERM, ISO_STAGE_EXEC), 126);
	ck_assert_int_eq(exit_code_of(ISO_OUTCOME_FAILED, EPERM, ISO_STAGE_CREDENTIALS), 125);
	ck_assert_int_eq(exit_code_of(ISO_OUTCOME_FAILED, ENOSYS, ISO_STAGE_CONFINEMENT), 125);
}
END_TEST

START_TEST(test_ended_guest_needs_no_helper)
{
	iso_guest g;

	memset(&g, 0, sizeof(g));
	g.outcome = ISO_OUTCOME_EXITED;
	g.conn = NULL; /* touching it would crash */
	ck_assert_int_eq(iso_wait(&g, -1), 0);
	ck_assert_int_eq(iso_kill(&g, SIGTERM), 0);
	ck_assert_int_eq(iso_kill(&g, 0), -EINVAL);
	ck_assert_int_eq(iso_kill(&g, 65), -EINVAL);
}
END_TEST

/* ---------------------------------------------------------------- */

/* A guest handle whose channel is one end of a local socketpair. */
static iso_guest *channel_guest(int *peer)
{
	iso_guest *g = calloc(1, sizeof(*g));
	int sv[2];

	ck_assert_ptr_nonnull(g);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	g->channel_fd = sv[0];
	*peer = sv[1];
	return g;
}

START_TEST(test_send_refuses_empty_and_oversize)
{
	static char big[ISO_MESSAGE_MAX + 1];
	int peer;
	iso_guest *g = channel_guest(&peer);
	iso_guest none;

	ck_assert_int_eq(iso_send(g, "", 0), -EINVAL);
	ck_assert_int_eq(iso_send(g, big, sizeof(big)), -EMSGSIZE);
	memset(&none, 0, sizeof(none));
	none.channel_fd = -1;
	ck_assert_int_eq(iso_send(&none, "x", 1), -ENOTCONN);
	ck_assert_int_eq(iso_recv(&none, big, 1, 0), -ENOTCONN);
	ck_assert_int_eq(iso_channel_fd(&none), -1);
	close(peer);
	ck_assert_int_eq(iso_send(g, "x", 1), -EPIPE);
	close(g->channel_fd);
	free(g);
}
END_TEST

START_TEST(test_recv_timeout_oversize_and_eof)
{
	char buf[8], big[16];
	int peer;
	iso_guest *g = channel_guest(&peer);

	ck_assert_int_eq(iso_recv(g, buf, sizeof(buf), 0), ISO_RECV_TIMEOUT);
	ck_assert_int_eq(iso_recv(g, buf, sizeof(buf), 20), ISO_RECV_TIMEOUT);
	ck_assert_int_eq(send(peer, "123456789", 9, 0), 9);
	ck_assert_int_eq(send(peer, "ok", 2, 0), 2);
	ck_assert_int_eq(iso_recv(g, buf, sizeof(buf), -1), -EMSGSIZE);
	/* The oversize message stays, its size told, for a larger buffer. */
	ck_assert_int_eq(iso_recv(g, NULL, 0, -1), 9);
	ck_assert_int_eq(iso_recv(g, big, sizeof(big), -1), 9);
	ck_assert_int_eq(memcmp(big, "123456789", 9), 0);
	ck_assert_int_eq(iso_recv(g, buf, sizeof(buf), -1), 2);
	ck_assert_int_eq(memcmp(buf, "ok", 2), 0);
	ck_assert_int_eq(iso_send(g, "ping", 4), 0);
	ck_assert_int_eq(recv(peer, buf, sizeof(buf), 0), 4);
	close(peer);
	ck_assert_int_eq(iso_recv(g, buf, sizeof(buf), -1), ISO_RECV_EOF);
	close(g->channel_fd);
	free(g);
}
END_TEST

/* ---------------------------------------------------------------- */

/* A connection whose helper end is sv[1], holding one running guest `id`. */
static void running_guest(uint32_t id, int sv[2], iso_conn **conn, iso_guest **g)
{
	*conn = calloc(1, sizeof(**conn));
	*g = calloc(1, sizeof(**g));
	ck_assert_ptr_nonnull(*conn);
	ck_assert_ptr_nonnull(*g);
	ck_assert_int_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
	(*conn)->fd = sv[0];
	(*conn)->helper_pid = -1;
	(*conn)->owner = getpid();
	(*g)->conn = *conn;
	(*g)->id = id;
	(*g)->channel_fd = -1;
	(*g)->limit = -1;
	(*conn)->guests = *g;
}

static int readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	ck_assert_int_ge(poll(&p, 1, 0), 0);
	return (p.revents & POLLIN) != 0;
}

/* iso_conn_fd(): the descriptor a caller's event loop polls; readable
 * when the helper has sent something, which iso_wait(guest, 0) collects. */
START_TEST(test_conn_fd_polls_readable_until_wait_collects)
{
	struct iso_wire_msg m;
	uint8_t buf[256];
	iso_conn *conn;
	iso_guest *g;
	long len;
	int sv[2];

	running_guest(7, sv, &conn, &g);
	ck_assert_int_eq(iso_conn_fd(conn), sv[0]);

	ck_assert_int_eq(readable(iso_conn_fd(conn)), 0);
	ck_assert_int_eq(iso_wait(g, 0), 1);
	memset(&m, 0, sizeof(m));
	m.type = ISO_MSG_EXITED;
	m.id = 7;
	m.u.exited.outcome = ISO_OUTCOME_EXITED;
	m.u.exited.code = 3;
	m.u.exited.limit_hit = -1;
	len = iso_wire_encode(&m, buf, sizeof(buf));
	ck_assert_int_gt(len, 0);
	ck_assert_int_eq(send(sv[1], buf, (size_t)len, 0), len);
	ck_assert_int_eq(readable(iso_conn_fd(conn)), 1);
	/* The same descriptor throughout; the event is collected by a
	 * non-blocking wait, after which nothing is left to read. */
	ck_assert_int_eq(iso_conn_fd(conn), sv[0]);
	ck_assert_int_eq(iso_wait(g, 0), 0);
	ck_assert_int_eq(iso_guest_outcome(g), ISO_OUTCOME_EXITED);
	ck_assert_int_eq(iso_guest_exit_code(g), 3);
	ck_assert_ptr_null(iso_guest_reason(g));
	ck_assert_int_eq(readable(iso_conn_fd(conn)), 0);
	close(sv[1]);
	iso_close(conn); /* frees g; no helper to reap */
}
END_TEST

/* A failed start's EXITED carries the helper's reason: the handle keeps it
 * as sent, control bytes and all (showing it is the caller's to escape). */
START_TEST(test_failed_start_keeps_the_helpers_reason)
{
	const char *why = "no mount point for /x/\x1b[2J in the guest's tree";
	struct iso_wire_msg m;
	uint8_t buf[512];
	iso_conn *conn;
	iso_guest *g;
	long len;
	int sv[2];

	running_guest(9, sv, &conn, &g);
	ck_assert_ptr_null(iso_guest_reason(g)); /* running */
	memset(&m, 0, sizeof(m));
	m.type = ISO_MSG_EXITED;
	m.id = 9;
	m.u.exited.outcome = ISO_OUTCOME_FAILED;
	m.u.exited.code = ENOTEMPTY;
	m.u.exited.stage = ISO_STAGE_CONFINEMENT;
	m.u.exited.limit_hit = -1;
	m.u.exited.reason = why;
	len = iso_wire_encode(&m, buf, sizeof(buf));
	ck_assert_int_gt(len, 0);
	ck_assert_int_eq(send(sv[1], buf, (size_t)len, 0), len);
	ck_assert_int_eq(iso_wait(g, -1), 0);
	ck_assert_int_eq(iso_guest_outcome(g), ISO_OUTCOME_FAILED);
	ck_assert_int_eq(iso_guest_stage(g), ISO_STAGE_CONFINEMENT);
	ck_assert_str_eq(iso_guest_reason(g), why);
	close(sv[1]);
	iso_close(conn); /* frees g; no helper to reap */
}
END_TEST

/* ---------------------------------------------------------------- */

START_TEST(test_open_reports_missing_helper)
{
	iso_conn *conn = (iso_conn *)1;

	ck_assert_int_eq(setenv("ISOSPAWN_HELPER", "/nonexistent/helper", 1), 0);
	ck_assert_int_eq(iso_open(&conn), -ENOENT);
	ck_assert_ptr_null(conn);
	ck_assert_str_eq(iso_last_error(), "isospawn-helper not found at /nonexistent/helper");
}
END_TEST

START_TEST(test_open_uses_compiled_path_without_override)
{
	iso_conn *conn;

	ck_assert_int_eq(unsetenv("ISOSPAWN_HELPER"), 0);
	ck_assert_int_eq(iso_open(&conn), -ENOENT);
	ck_assert_ptr_nonnull(strstr(iso_last_error(), ISO_HELPER_PATH));
}
END_TEST

START_TEST(test_open_reports_helper_exit_before_hello)
{
	iso_conn *conn;

	ck_assert_int_eq(setenv("ISOSPAWN_HELPER", "/bin/false", 1), 0);
	ck_assert_int_eq(iso_open(&conn), -EIO);
	ck_assert_str_eq(iso_last_error(), "helper exited before answering (exit status 1)");
}
END_TEST

START_TEST(test_open_refuses_non_executable_helper)
{
	char path[] = "/tmp/unit_client_helperXXXXXX";
	int fd = mkstemp(path);
	iso_conn *conn;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fchmod(fd, 0644), 0);
	close(fd);
	ck_assert_int_eq(setenv("ISOSPAWN_HELPER", path, 1), 0);
	ck_assert_int_eq(iso_open(&conn), -EACCES);
	unlink(path);
}
END_TEST

static Suite *client_suite(void)
{
	Suite *s = suite_create("client");
	TCase *tc = tcase_create("unit");

	tcase_add_test(tc, test_last_error_starts_as_no_error);
	tcase_add_test(tc, test_last_error_is_per_thread);
	tcase_add_test(tc, test_strerror_covers_every_returned_code);
	tcase_add_test(tc, test_program_normal_absolute_path_accepted);
	tcase_add_test(tc, test_program_not_in_normal_form_refused);
	tcase_add_test(tc, test_program_of_4096_bytes_too_long);
	tcase_add_test(tc, test_argv_count_bounded_by_iso_args_max);
	tcase_add_test(tc, test_argv_larger_than_a_request_refused);
	tcase_add_test(tc, test_argv_copied_empty_refused_null_resets);
	tcase_add_test(tc, test_env_name_form_checked);
	tcase_add_test(tc, test_env_value_length_bounded);
	tcase_add_test(tc, test_env_same_name_replaced);
	tcase_add_test(tc, test_env_override_count_bounded);
	tcase_add_test(tc, test_source_env_keeps_first_forwarded_only);
	tcase_add_test(tc, test_source_env_null_forwards_nothing);
	tcase_add_test(tc, test_pick_forwarded_takes_every_forwarded_name);
	tcase_add_test(tc, test_stdio_closed_fd_refused);
	tcase_add_test(tc, test_pass_fd_checked_and_bounded);
	tcase_add_test(tc, test_limit_network_channel_checked);
	tcase_add_test(tc, test_paths_checked_and_bounded);
	tcase_add_test(tc, test_exit_code_follows_env_and_timeout);
	tcase_add_test(tc, test_exit_code_of_failed_start);
	tcase_add_test(tc, test_ended_guest_needs_no_helper);
	tcase_add_test(tc, test_send_refuses_empty_and_oversize);
	tcase_add_test(tc, test_recv_timeout_oversize_and_eof);
	tcase_add_test(tc, test_conn_fd_polls_readable_until_wait_collects);
	tcase_add_test(tc, test_failed_start_keeps_the_helpers_reason);
	tcase_add_test(tc, test_open_reports_missing_helper);
	tcase_add_test(tc, test_open_uses_compiled_path_without_override);
	tcase_add_test(tc, test_open_reports_helper_exit_before_hello);
	tcase_add_test(tc, test_open_refuses_non_executable_helper);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(client_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
