/*
 * hygiene.c - start-up hygiene for a setuid process.
 *
 * The caller controls the helper's initial fds, signal mask and
 * dispositions, resource limits, umask, cwd and environment. Each is reset
 * here to a known value before the helper opens or reads anything.
 * MUST run first in main(). MUST NOT read the environment. Its scheduling
 * the caller may change until it is known (hygiene_sched, after that).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/ioprio.h>
#include <linux/magic.h>

#include "hygiene.h"
#include "util.h"
#include "wire.h"

#ifndef SO_PASSPIDFD
#define SO_PASSPIDFD 76 /* Linux 6.5; older headers lack the name */
#endif

/*
 * The helper's own limits; the guest's come only from the plan. A limit
 * is set to `value` when possible; without CAP_SYS_RESOURCE (containers)
 * a hard limit cannot be raised, and the helper then keeps the caller's
 * hard limit if it is at least `minimum`, else refuses to run: a caller
 * must not be able to make it fail half-way through a cleanup.
 */
static const struct {
	int resource;
	const char *name;
	rlim_t value, minimum;
} helper_limits[] = {
	{ RLIMIT_CORE, "core", 0, 0 }, /* never dump a root process */
	{ RLIMIT_CPU, "cpu", RLIM_INFINITY, RLIM_INFINITY },
	{ RLIMIT_FSIZE, "fsize", RLIM_INFINITY, 0 },
	{ RLIMIT_DATA, "data", RLIM_INFINITY, 256 << 20 },
	{ RLIMIT_AS, "as", RLIM_INFINITY, 1024 << 20 },
	{ RLIMIT_STACK, "stack", 8 << 20, 1 << 20 },
	{ RLIMIT_NOFILE, "nofile", 8192, 4096 }, /* fds for up to 1024 guests */
	{ RLIMIT_NPROC, "nproc", RLIM_INFINITY, 0 }, /* guests set their own */
	{ RLIMIT_MEMLOCK, "memlock", 8 << 20, 0 },
	{ RLIMIT_LOCKS, "locks", RLIM_INFINITY, 0 },
	{ RLIMIT_SIGPENDING, "sigpending", 4096, 64 },
	{ RLIMIT_MSGQUEUE, "msgqueue", 819200, 0 },
	{ RLIMIT_NICE, "nice", 0, 0 },
	{ RLIMIT_RTPRIO, "rtprio", 0, 0 },
	{ RLIMIT_RTTIME, "rttime", RLIM_INFINITY, 0 },
};

static int open_std_fds(char *why, size_t n)
{
	for (int fd = 0; fd <= 2; fd++) {
		if (fcntl(fd, F_GETFD) >= 0)
			continue;
		/* A closed stdio fd would be reused by the next open(); a
		 * later write "to stderr" would then land in that file. The
		 * lowest free descriptor is fd: those below it are open. */
		if (open("/dev/null", O_RDWR) < 0)
			return iso_why_errno(why, n, "cannot open /dev/null as fd %d", fd);
	}
	return 0;
}

static int check_request_socket(char *why, size_t n)
{
	static const int pass[] = { SO_PASSCRED, SO_PASSSEC, SO_PASSPIDFD };
	int domain = 0, type = 0, off = 0;
	socklen_t len = sizeof(domain);

	if (getsockopt(ISO_HELPER_FD, SOL_SOCKET, SO_DOMAIN, &domain, &len) < 0 ||
	    getsockopt(ISO_HELPER_FD, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || domain != AF_UNIX ||
	    type != SOCK_SEQPACKET)
		return iso_why(why, n, ENOTSOCK,
			       "fd %d is not an AF_UNIX SOCK_SEQPACKET "
			       "socket: start me through libisospawn",
			       ISO_HELPER_FD);
	/* Children must not inherit the request socket. */
	if (fcntl(ISO_HELPER_FD, F_SETFD, FD_CLOEXEC) < 0)
		return iso_why_errno(why, n, "fd %d", ISO_HELPER_FD);
	/* The caller may have asked for its credentials, a pidfd or its
	 * security label with every message on this socket: none is wanted,
	 * and each would crowd out the descriptors a request carries. */
	for (size_t i = 0; i < COUNT(pass); i++)
		if (setsockopt(ISO_HELPER_FD, SOL_SOCKET, pass[i], &off, sizeof(off)) < 0 &&
		    errno != ENOPROTOOPT)
			return iso_why_errno(why, n, "fd %d: clearing option %d", ISO_HELPER_FD,
					     pass[i]);
	return 0;
}

/* Nothing here can fail: sigprocmask() refuses only an unknown `how`. */
static void reset_signals(void)
{
	sigset_t none;
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	sigemptyset(&none);
	(void)sigprocmask(SIG_SETMASK, &none, NULL);
	/* Ignored dispositions survive exec; an ignored SIGCHLD would make
	 * the kernel auto-reap guests behind our back. SIGKILL, SIGSTOP and
	 * the C library's own two signals are refused (EINVAL), and have no
	 * disposition to reset. */
	for (int sig = 1; sig < NSIG; sig++)
		(void)sigaction(sig, &dfl, NULL);
}

static int reset_limits(char *why, size_t n)
{
	for (size_t i = 0; i < COUNT(helper_limits); i++) {
		struct rlimit rl = { helper_limits[i].value, helper_limits[i].value };

		if (setrlimit(helper_limits[i].resource, &rl) == 0)
			continue;
		if (errno != EPERM || getrlimit(helper_limits[i].resource, &rl) < 0 ||
		    rl.rlim_max < helper_limits[i].minimum ||
		    setrlimit(helper_limits[i].resource,
			      &(struct rlimit){ rl.rlim_max, rl.rlim_max }) < 0)
			return iso_why(why, n, EPERM,
				       "resource limit %s: cannot set it to a "
				       "safe value (%s); was it lowered by the caller?",
				       helper_limits[i].name, strerror(errno));
	}
	return 0;
}

int hygiene_start(char *why, size_t n)
{
	int rc;

	/* Never read, never passed on: the guest environment is built. */
	environ = NULL;
	/* Not dumpable while privileged: no core file, no ptrace by the
	 * caller, /proc/self owned by root. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return iso_why_errno(why, n, "prctl(PR_SET_DUMPABLE)");
	if ((rc = open_std_fds(why, n)) < 0 || (rc = check_request_socket(why, n)) < 0)
		return rc;
	closefrom(ISO_HELPER_FD + 1);
	reset_signals();
	if ((rc = reset_limits(why, n)) < 0)
		return rc;
	umask(077);
	if (chdir("/") < 0)
		return iso_why_errno(why, n, "chdir /");
	return 0;
}

/*
 * The helper starts in its caller's cgroups. cgroup v2 lets whoever may
 * write cgroup.procs (or cgroup.threads) of a cgroup move any process below
 * it, whatever its uid, and freeze it through cgroup.freeze; cgroup v1's
 * freezer freezes every process of a cgroup for whoever may write its
 * freezer.state. A caller that owns a cgroup at or above the helper's (one
 * systemd delegates, as to every service of a systemd --user; a v1 freezer
 * cgroup chowned to it) could freeze its root helper and the guests'
 * reapers, and with them the guests' deadlines and their end when it goes.
 * So each of those files (and v1's tasks and cgroup.procs, which move a
 * process of the writer's uid, as the helper is the caller's until it
 * knows it), from the helper's cgroup up to the root, must be root's and
 * writable by no one else. Each hierarchy is looked at where systemd
 * mounts it.
 */
static const struct hierarchy {
	const char *mount;
	long magic;
	const char *key; /* its line of /proc/self/cgroup: "N" key "/PATH" */
	const char *files[3]; /* the last, which freezes, the root has not */
} hierarchies[] = {
	{ "/sys/fs/cgroup",
	  CGROUP2_SUPER_MAGIC,
	  "::",
	  { "cgroup.procs", "cgroup.threads", "cgroup.freeze" } },
	{ "/sys/fs/cgroup/unified",
	  CGROUP2_SUPER_MAGIC,
	  "::",
	  { "cgroup.procs", "cgroup.threads", "cgroup.freeze" } },
	{ "/sys/fs/cgroup/freezer",
	  CGROUP_SUPER_MAGIC,
	  ":freezer:",
	  { "cgroup.procs", "tasks", "freezer.state" } },
};

/* The cgroup `cgroup` ("" for the root's), then each above it; `risk`
 * says what a file writable by another would let it do. */
static int cgroup_up(const struct hierarchy *h, char *cgroup, const char *risk, char *why, size_t n)
{
	char file[2 * PATH_MAX];
	struct stat st;

	for (;;) {
		for (size_t i = 0; i < COUNT(h->files); i++) {
			snprintf(file, sizeof(file), "%s%s/%s", h->mount, cgroup, h->files[i]);
			if (stat(file, &st) < 0) {
				if (errno == ENOENT && i == COUNT(h->files) - 1)
					continue;
				return iso_why_errno(why, n, "%s", file);
			}
			if (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)))
				return iso_why(why, n, EPERM,
					       "%s: owned by uid %u, mode %04o, expected "
					       "root's alone: it lets its owner %s",
					       file, (unsigned)st.st_uid,
					       (unsigned)(st.st_mode & 07777), risk);
		}
		if (*cgroup == '\0')
			return 0;
		*strrchr(cgroup, '/') = '\0';
	}
}

int hygiene_cgroup(char *why, size_t n)
{
	char line[PATH_MAX], *at;
	struct statfs fs;
	FILE *f;
	int rc = 0;

	for (size_t h = 0; rc == 0 && h < COUNT(hierarchies); h++) {
		const struct hierarchy *y = &hierarchies[h];
		size_t len = strlen(y->key);

		if (statfs(y->mount, &fs) < 0 || fs.f_type != y->magic)
			continue;
		if ((f = fopen("/proc/self/cgroup", "re")) == NULL)
			return iso_why_errno(why, n, "/proc/self/cgroup");
		while ((at = fgets(line, sizeof(line), f)) != NULL) {
			at += strspn(at, "0123456789");
			if (strncmp(at, y->key, len) == 0 && at[len] == '/')
				break;
		}
		fclose(f);
		if (at == NULL)
			continue;
		/* The root's path is "". */
		at += len;
		at[strcspn(at, "\n")] = '\0';
		rc = cgroup_up(y, strcmp(at, "/") == 0 ? at + 1 : at,
			       "freeze this helper and its guests' deadlines (connect through "
			       "isospawn.socket)",
			       why, n);
	}
	return rc;
}

int hygiene_cgroup_above(const char *cgroup, char *why, size_t n)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s", cgroup);
	return cgroup_up(&hierarchies[0], path, "move or freeze the guests below it", why, n);
}

/*
 * What the caller's process has of the scheduler beyond an ordinary
 * process's is the administrator's grant to the caller, never to its
 * guests: under a real-time policy or I/O class or a negative nice a
 * spinning guest starves the host, and under a negative oom_score_adj a
 * memory bomb is the last the OOM killer picks. Given up once the caller
 * is known: until caller_identify() makes the helper's real uid root, the
 * caller (its real uid) may still change them; after, only root may. Every
 * reaper and guest is cloned later and inherits the result. As root, so
 * the guest cannot lower its oom_score_adj again; what is below an
 * ordinary process's (a positive nice, an idle class) stays. RLIMIT_RTPRIO
 * and RLIMIT_NICE (confine_apply_rlimits) keep the guest from taking a
 * real-time policy or a lower nice back.
 */
int hygiene_sched(char *why, size_t n)
{
	struct sched_param none = { 0 };
	/* The policy as asked for, whether or not SCHED_RESET_ON_FORK is
	 * added to it (which sched_getscheduler() reports). */
	int policy = sched_getscheduler(0) & ~SCHED_RESET_ON_FORK, fd, rc = 0;
	char adj[16] = "";

	if (((policy == SCHED_FIFO || policy == SCHED_RR || policy == SCHED_DEADLINE) &&
	     sched_setscheduler(0, SCHED_OTHER, &none) < 0) ||
	    (getpriority(PRIO_PROCESS, 0) < 0 && setpriority(PRIO_PROCESS, 0, 0) < 0) ||
	    (IOPRIO_PRIO_CLASS(syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0)) == IOPRIO_CLASS_RT &&
	     syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, 0) < 0))
		return iso_why_errno(why, n, "the scheduler");
	fd = open("/proc/self/oom_score_adj", O_RDWR | O_CLOEXEC);
	if (fd < 0 || read(fd, adj, sizeof adj - 1) < 0 ||
	    (atoi(adj) < 0 && pwrite(fd, "0", 1, 0) != 1))
		rc = iso_why_errno(why, n, "/proc/self/oom_score_adj");
	iso_close_fds(&fd, 1);
	return rc;
}
