/*
 * harness.c - installation and unprivileged-caller plumbing for the live
 * tests. Everything that needs root happens in harness_setup(); each test
 * then calls become() in its own forked process before using the library.
 */
#include "config.h"

#include <check.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

extern char **environ;

void harness_setup(void)
{
	if (geteuid() != 0) {
		printf("SKIP: live tests need root to install the setuid test "
		       "helper (they then run as uid %u); run make check as root\n",
		       T_CALLER);
		exit(77);
	}
	/* Check's children inherit the run's mount namespace and slot. */
	test_install();
	test_install_file(ISO_BUILDDIR "/tests/.libs/evil.so", T_LIB "/evil.so", 0644);
	/* Check's default of 4 s per test is too short for the bombs. */
	setenv("CK_DEFAULT_TIMEOUT", "60", 0);
}

void become(uid_t uid)
{
	gid_t gid = uid;
	gid_t groups[1] = { T_GROUP };

	if (setgroups(uid == T_GROUPED ? 1 : 0, groups) < 0 || setresgid(gid, gid, gid) < 0 ||
	    setresuid(uid, uid, uid) < 0)
		ck_abort_msg("become(%u): %s", (unsigned)uid, strerror(errno));
	ck_assert_int_eq(geteuid(), uid);
	setenv("ISOSPAWN_HELPER", T_HELPER, 1);
}

/* Give dir (an empty directory) the entries of /dev: directories and
 * files bound, symbolic links copied; leave out /dev/log. */
static void copy_dev(const char *dir)
{
	DIR *d = opendir("/dev");
	struct dirent *e;

	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d)) != NULL) {
		char from[300], to[400], target[300];
		struct stat st;
		ssize_t n;
		int fd;

		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
		    strcmp(e->d_name, "log") == 0)
			continue;
		snprintf(from, sizeof(from), "/dev/%s", e->d_name);
		snprintf(to, sizeof(to), "%s/%s", dir, e->d_name);
		if (lstat(from, &st) < 0)
			continue; /* gone meanwhile */
		if (S_ISLNK(st.st_mode)) {
			n = readlink(from, target, sizeof(target) - 1);
			ck_assert_int_gt(n, 0);
			target[n] = '\0';
			ck_assert_int_eq(symlink(target, to), 0);
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			ck_assert_int_eq(mkdir(to, 0755), 0);
		} else {
			fd = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
			ck_assert_msg(fd >= 0, "%s: %s", to, strerror(errno));
			close(fd);
		}
		ck_assert_msg(mount(from, to, NULL, MS_BIND | MS_REC, NULL) == 0, "bind %s: %s",
			      from, strerror(errno));
	}
	closedir(d);
}

int private_dev_log(void)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX, .sun_path = "/dev/log" };
	char dir[64];
	int sock;

	ck_assert_int_eq(geteuid(), 0);
	ck_assert_msg(unshare(CLONE_NEWNS) == 0 &&
			  mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0,
		      "private mount namespace: %s", strerror(errno));
	snprintf(dir, sizeof(dir), "%s/dev.%d", T_ROOT, (int)getpid());
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	ck_assert_int_eq(mount("dev", dir, "tmpfs", MS_NOSUID, "mode=0755"), 0);
	copy_dev(dir);
	ck_assert_msg(mount(dir, "/dev", NULL, MS_MOVE, NULL) == 0, "move %s to /dev: %s", dir,
		      strerror(errno));
	ck_assert_int_eq(rmdir(dir), 0);
	sock = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(sock, 0);
	ck_assert_int_eq(bind(sock, (struct sockaddr *)&addr, sizeof(addr)), 0);
	ck_assert_int_eq(chmod("/dev/log", 0666), 0);
	return sock;
}

void read_dev_log(int sock, char *log, size_t size)
{
	size_t used = 0;
	ssize_t n;

	while (used + 1 < size && (n = recv(sock, log + used, size - used - 1, MSG_DONTWAIT)) > 0)
		used += (size_t)n;
	log[used] = '\0';
}

iso_conn *open_conn(void)
{
	iso_conn *conn = NULL;
	int rc = iso_open(&conn);

	ck_assert_msg(rc == 0, "iso_open: %s (%s)", iso_strerror(rc), iso_last_error());
	return conn;
}

/* Read both pipes to EOF (the guest may fill either). */
static void drain(int out_fd, int err_fd, struct run *r)
{
	struct pollfd p[2] = { { .fd = out_fd, .events = POLLIN },
			       { .fd = err_fd, .events = POLLIN } };
	size_t lens[2] = { 0, 0 };
	char *bufs[2] = { r->out, r->err };
	size_t caps[2] = { sizeof(r->out) - 1, sizeof(r->err) - 1 };
	int open_count = 2;

	while (open_count > 0) {
		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		for (int i = 0; i < 2; i++) {
			char sink[4096];
			ssize_t got;
			if (p[i].fd < 0 || !p[i].revents)
				continue;
			if (lens[i] < caps[i])
				got = read(p[i].fd, bufs[i] + lens[i], caps[i] - lens[i]);
			else
				got = read(p[i].fd, sink, sizeof(sink));
			if (got <= 0) {
				close(p[i].fd);
				p[i].fd = -1;
				open_count--;
			} else if (lens[i] < caps[i]) {
				lens[i] += (size_t)got;
			}
		}
	}
	r->out[lens[0]] = '\0';
	r->err[lens[1]] = '\0';
}

void run_guest(iso_conn *conn, const char *const *argv, const char *const *overrides,
	       spec_hook hook, void *arg, struct run *r)
{
	iso_spec *spec;
	iso_guest *g = NULL;
	int out[2], err[2];

	memset(r, 0, sizeof(*r));
	ck_assert_int_eq(iso_spec_new(&spec), 0);
	ck_assert_int_eq(iso_spec_set_program(spec, argv[0]), 0);
	ck_assert_int_eq(iso_spec_set_argv(spec, argv), 0);
	for (; overrides && *overrides; overrides++) {
		char name[256];
		const char *eq = strchr(*overrides, '=');
		snprintf(name, sizeof(name), "%.*s", (int)(eq - *overrides), *overrides);
		ck_assert_int_eq(iso_spec_set_env(spec, name, eq + 1), 0);
	}
	ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(err, O_CLOEXEC), 0);
	ck_assert_int_eq(iso_spec_set_stdio(spec, -1, out[1], err[1]), 0);
	if (hook)
		hook(spec, arg);
	r->spawn_rc = iso_spawn(conn, spec, &g);
	close(out[1]);
	close(err[1]);
	iso_spec_free(spec);
	if (r->spawn_rc < 0) {
		snprintf(r->msg, sizeof(r->msg), "%s", iso_last_error());
		close(out[0]);
		close(err[0]);
		return;
	}
	r->uid = iso_guest_uid(g);
	snprintf(r->notes, sizeof(r->notes), "%s", iso_guest_notes(g));
	drain(out[0], err[0], r);
	ck_assert_int_eq(iso_wait(g, -1), 0);
	r->outcome = iso_guest_outcome(g);
	r->code = iso_guest_code(g);
	r->exit_code = iso_guest_exit_code(g);
	/* A failed start has the helper's reason; no other end has one. */
	ck_assert_msg((iso_guest_reason(g) != NULL) == (r->outcome == ISO_OUTCOME_FAILED),
		      "outcome %d, reason %s", r->outcome,
		      iso_guest_reason(g) ? iso_guest_reason(g) : "NULL");
	snprintf(r->reason, sizeof(r->reason), "%s",
		 iso_guest_reason(g) ? iso_guest_reason(g) : "");
	iso_guest_free(g);
}

void run_cli(const char *const *args, const char *const *extra_env, struct run *r)
{
	const char *argv[64] = { T_CLI };
	const char *envp[64];
	posix_spawn_file_actions_t fa;
	int out[2], err[2], status;
	size_t n = 1, e = 0;
	pid_t pid;

	memset(r, 0, sizeof(*r));
	for (; args && *args && n < 63; args++)
		argv[n++] = *args;
	argv[n] = NULL;
	envp[e++] = "LD_LIBRARY_PATH=" T_LIB;
	envp[e++] = t_helper_env;
	for (; extra_env && *extra_env && e < 63; extra_env++)
		envp[e++] = *extra_env;
	envp[e] = NULL;
	ck_assert_int_eq(pipe2(out, O_CLOEXEC), 0);
	ck_assert_int_eq(pipe2(err, O_CLOEXEC), 0);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, err[1], 2);
	ck_assert_int_eq(
	    posix_spawn(&pid, T_CLI, &fa, NULL, (char *const *)argv, (char *const *)envp), 0);
	posix_spawn_file_actions_destroy(&fa);
	close(out[1]);
	close(err[1]);
	drain(out[0], err[0], r);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	r->exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int has_line(const char *text, const char *prefix)
{
	size_t len = strlen(prefix);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p)
		if (strncmp(p, prefix, len) == 0)
			return 1;
	return 0;
}

/* Up to size - 1 bytes of a small file, NUL-terminated; -1 if unreadable. */
ssize_t read_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t got;

	if (fd < 0)
		return -1;
	got = read(fd, buf, size - 1);
	close(fd);
	if (got < 0)
		return -1;
	buf[got] = '\0';
	return got;
}

/* The text after key (such as "\nUid:\t") in a status file, or NULL. */
const char *status_field(const char *buf, const char *key)
{
	const char *at = strstr(buf, key);

	return at ? at + strlen(key) : NULL;
}

static int proc_read(pid_t pid, struct proc_info *p)
{
	char path[64], buf[4096];
	const char *state, *ppid, *uid;
	unsigned u[4];

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (read_text(path, buf, sizeof(buf)) < 0)
		return -1; /* gone in the meantime */
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	state = status_field(buf, "\nState:\t");
	ppid = status_field(buf, "\nPPid:\t");
	uid = status_field(buf, "\nUid:\t");
	if (sscanf(buf, "Name:\t%31s", p->name) != 1 || !state || !ppid || !uid ||
	    sscanf(uid, "%u %u %u %u", &u[0], &u[1], &u[2], &u[3]) != 4)
		return -1;
	p->state = *state;
	p->ppid = (pid_t)atoi(ppid);
	for (int i = 0; i < 4; i++)
		p->uid[i] = u[i];
	return 0;
}

/* Call fn for every process until it returns non-zero; return that. */
int each_process(int (*fn)(const struct proc_info *, void *), void *arg)
{
	DIR *dir = opendir("/proc");
	struct dirent *e;
	int rc = 0;

	ck_assert_ptr_nonnull(dir);
	while (rc == 0 && (e = readdir(dir)) != NULL) {
		struct proc_info p;
		if (!isdigit((unsigned char)e->d_name[0]) ||
		    proc_read((pid_t)atoi(e->d_name), &p) < 0)
			continue;
		rc = fn(&p, arg);
	}
	closedir(dir);
	return rc;
}

/* A zombie has ended: it is only a pid its parent has not collected. */
static int count_one(const struct proc_info *p, void *arg)
{
	struct uid_set *s = arg;

	if (p->state == 'Z' || p->state == 'X')
		return 0;
	for (size_t i = 0; i < s->n; i++)
		for (int k = 0; k < 4; k++)
			if (p->uid[k] == s->uids[i]) {
				s->count++;
				return 0;
			}
	return 0;
}

/* Live processes with any of their uids among uids[0..n). */
int processes_of(const uid_t *uids, size_t n)
{
	struct uid_set s = { .uids = uids, .n = n };

	each_process(count_one, &s);
	return s.count;
}
