/*
 * spawn.c - the single path that ends in the guest's exec.
 *
 *   helper (root) --clone3(NEWPID|NEWIPC[|NEWNET])--> reaper
 *   reaper: setsid, [loopback up], drop to the pool uid (verified),
 *           vfork --> guest: open program, rlimits, Landlock, seccomp, fds,
 *                           environment, execveat
 *           reap everything, report the guest's status, exit
 *
 * Invariants:
 *  - Once privileges start changing, any failure ends the process with a
 *    reported stage and errno; nothing is retried or skipped (fail closed).
 *  - The guest gets exactly fds 0-2 (the caller's or /dev/null) and, with a
 *    channel, fd 3. Every other fd of the helper is close-on-exec.
 *  - The reaper is pid 1 of the guest's PID namespace: when it exits, the
 *    kernel kills every process the guest started.
 *  - Nothing here allocates or compiles: the plan, the filter and the
 *    environment were prepared before the clone.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdnoreturn.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "creds.h"
#include "spawn.h"

#define ENV_SLOTS (ISO_WIRE_FORWARD_MAX + ISO_ENV_OVERRIDES_MAX + 8)

/* Written by the guest child before it gives up. The child is vfork()ed:
 * it shares the reaper's memory until it execs or exits, so the reaper
 * reads the failure here without a pipe, and no page tables are copied. */
static struct {
	volatile int failed;
	uint32_t stage;
	int32_t err;
	char reason[sizeof(((struct iso_report *)0)->reason)];
} guest_failure;

static volatile pid_t guest_pid;

/* pid 1 of a namespace only receives signals it handles: forward them, so
 * iso_kill(SIGTERM) and the guest's own signals behave as usual. */
static void forward_signal(int sig)
{
	if (guest_pid > 0)
		(void)kill(guest_pid, sig);
}

static noreturn void guest_fail(enum iso_stage stage, int err,
				const char *reason)
{
	guest_failure.stage = stage;
	guest_failure.err = err;
	snprintf(guest_failure.reason, sizeof(guest_failure.reason), "%s", reason);
	guest_failure.failed = 1;
	_exit(127);
}

/* Move the guest's fds into 0..3 without one clobbering another. */
static int place_fds(const int src[4])
{
	int high[4];

	for (int i = 0; i < 4; i++) {
		high[i] = -1;
		if (src[i] >= 0 && (high[i] = fcntl(src[i], F_DUPFD_CLOEXEC, 16)) < 0)
			return -errno;
	}
	for (int i = 0; i < 4; i++) {
		if (high[i] >= 0) {
			if (dup2(high[i], i) < 0)
				return -errno;
		} else {
			(void)close(i);
		}
	}
	/* Belt and braces: whatever else is open must not cross exec. */
	if (close_range(4, ~0u, CLOSE_RANGE_CLOEXEC) < 0)
		return -errno;
	return 0;
}

static noreturn void guest_main(const struct iso_spawn_ctx *ctx,
				const struct iso_plan *plan,
				const char *scratch, int channel_fd,
				char *const envp[])
{
	const struct iso_confine *c = ctx->confine;
	int src[4] = { plan->stdio[0], plan->stdio[1], plan->stdio[2], channel_fd };
	char why[200];
	struct stat st;
	sigset_t none;
	int prog, rc;

	for (int i = 0; i < 3; i++)
		if (src[i] < 0)
			src[i] = ctx->devnull;
	if (chdir(scratch) < 0)
		guest_fail(ISO_STAGE_CONFINEMENT, errno, "chdir to scratch");
	/* Opened as the guest: it can run only what its uid may reach. */
	prog = open(plan->program, O_PATH | O_CLOEXEC);
	if (prog < 0)
		guest_fail(ISO_STAGE_EXEC, errno, "open program");
	if (fstat(prog, &st) < 0 || !S_ISREG(st.st_mode))
		guest_fail(ISO_STAGE_EXEC, EACCES, "program is not a regular file");

	/* The fixed order: credentials (done by the reaper), rlimits,
	 * Landlock, seccomp, fds, environment. */
	if ((rc = confine_apply_rlimits(plan, why, sizeof(why))) < 0 ||
	    (c->landlock_on &&
	     (rc = confine_apply_landlock(c, plan, scratch, prog, why, sizeof(why))) < 0) ||
	    (c->bpf && (rc = confine_apply_seccomp(c, why, sizeof(why))) < 0))
		guest_fail(ISO_STAGE_CONFINEMENT, -rc, why);
	if ((rc = place_fds(src)) < 0)
		guest_fail(ISO_STAGE_CONFINEMENT, -rc, "placing stdio");

	/* Signals forwarded during the set-up waited, blocked (spawn_guest);
	 * from here they act as they will on the program. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	syscall(SYS_execveat, prog, "", plan->argv, envp, AT_EMPTY_PATH);
	if (errno == ENOENT) {
		/* A #! script is read by its interpreter through
		 * /dev/fd/<prog>, which close-on-exec would have closed: run
		 * it again with the descriptor left open (isospawn-helper(8)). */
		if (fcntl(prog, F_SETFD, 0) == 0)
			syscall(SYS_execveat, prog, "", plan->argv, envp, AT_EMPTY_PATH);
	}
	guest_fail(ISO_STAGE_EXEC, errno, "execveat");
}

static noreturn void reaper_report(int fd, struct iso_report *rep)
{
	struct rusage ru;

	if (getrusage(RUSAGE_CHILDREN, &ru) == 0) {
		rep->user_us = (uint64_t)ru.ru_utime.tv_sec * 1000000 + (uint64_t)ru.ru_utime.tv_usec;
		rep->sys_us = (uint64_t)ru.ru_stime.tv_sec * 1000000 + (uint64_t)ru.ru_stime.tv_usec;
		rep->maxrss_kib = (uint64_t)ru.ru_maxrss;
	}
	(void)!write(fd, rep, sizeof(*rep));
	_exit(0);
}

static noreturn void reaper_fail(int fd, enum iso_stage stage, int err,
				 const char *reason)
{
	struct iso_report rep = { .magic = ISO_REPORT_MAGIC,
				  .outcome = ISO_OUTCOME_FAILED,
				  .code = err, .stage = stage };

	snprintf(rep.reason, sizeof(rep.reason), "%s", reason);
	reaper_report(fd, &rep);
}

static void reaper_signals(void)
{
	struct sigaction sa = { .sa_handler = forward_signal };

	/* No SA_RESTART: a signal interrupts wait4 and is forwarded. */
	sigemptyset(&sa.sa_mask);
	for (int sig = 1; sig < SIGRTMIN; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && sig != SIGCHLD)
			(void)sigaction(sig, &sa, NULL);
}

static noreturn void reaper_main(const struct iso_spawn_ctx *ctx,
				 const struct iso_plan *plan, uid_t uid,
				 const char *scratch, int channel_fd,
				 char *const envp[], int report_fd)
{
	struct iso_report rep = { .magic = ISO_REPORT_MAGIC };
	struct pollfd parent = { .fd = ctx->helper_pidfd, .events = POLLIN };
	char why[200];
	int status, rc;
	pid_t pid;
	sigset_t none;

	/* Every signal stays blocked (spawn_guest) until the guest exists and
	 * the handlers that forward to it are in place: the kernel drops a
	 * signal to pid 1 of a namespace that has no handler for it, while a
	 * blocked one waits. So an iso_kill() right after iso_spawn() is not
	 * lost. */
	sigemptyset(&none);
	/* Its own session: no controlling terminal to inject into. */
	if (setsid() < 0)
		reaper_fail(report_fd, ISO_STAGE_CONFINEMENT, errno, "setsid");
	if (plan->network_none && (rc = confine_network_loopback(why, sizeof(why))) < 0)
		reaper_fail(report_fd, ISO_STAGE_CONFINEMENT, -rc, why);
	if ((rc = creds_drop(uid, why, sizeof(why))) < 0)
		reaper_fail(report_fd, ISO_STAGE_CREDENTIALS, -rc, why);
	/* Set after the drop (a credential change clears it); then make
	 * sure the helper did not already die in between. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 ||
	    poll(&parent, 1, 0) != 0)
		_exit(1);
	/* Returns once the guest has exec'd or given up. */
	pid = vfork();
	if (pid < 0)
		reaper_fail(report_fd, ISO_STAGE_EXEC, errno, "fork");
	if (pid == 0)
		guest_main(ctx, plan, scratch, channel_fd, envp);
	guest_pid = pid;
	reaper_signals();
	sigprocmask(SIG_SETMASK, &none, NULL);

	for (;;) {
		pid_t w = wait4(-1, &status, 0, NULL);
		if (w == pid)
			break;
		if (w < 0 && errno == ECHILD)
			reaper_fail(report_fd, ISO_STAGE_EXEC, ECHILD, "guest vanished");
	}
	if (guest_failure.failed) {
		rep.outcome = ISO_OUTCOME_FAILED;
		rep.code = guest_failure.err;
		rep.stage = guest_failure.stage;
		guest_failure.reason[sizeof(guest_failure.reason) - 1] = '\0';
		memcpy(rep.reason, guest_failure.reason, sizeof(rep.reason));
	} else if (WIFSIGNALED(status)) {
		rep.outcome = ISO_OUTCOME_SIGNALED;
		rep.code = WTERMSIG(status);
	} else {
		rep.outcome = ISO_OUTCOME_EXITED;
		rep.code = WEXITSTATUS(status);
	}
	reaper_report(report_fd, &rep);
}

/* The guest's environment: the plan's, plus TMPDIR=scratch when the caller
 * forwarded none, plus the one variable the helper adds itself. */
static void final_env(const struct iso_plan *plan, const char *tmpdir_entry,
		      int channel, const char *envp[ENV_SLOTS])
{
	size_t i = 0;
	int have_tmpdir = 0;

	for (char **e = plan->envp; *e && i < ENV_SLOTS - 3; e++) {
		if (strncmp(*e, "TMPDIR=", 7) == 0)
			have_tmpdir = 1;
		envp[i++] = *e;
	}
	if (!have_tmpdir)
		envp[i++] = tmpdir_entry;
	if (channel)
		envp[i++] = "ISOSPAWN_CHANNEL_FD=3";
	envp[i] = NULL;
}

int spawn_guest(const struct iso_spawn_ctx *ctx, const struct iso_plan *plan,
		uid_t uid, const char *scratch, int channel_fd,
		struct iso_child *child, char *why, size_t n)
{
	struct clone_args args = { 0 };
	sigset_t all, old;
	const char *envp[ENV_SLOTS];
	char tmpdir[ISO_WIRE_PATH_MAX + 8];
	int report[2], pidfd = -1;
	long pid;

	snprintf(tmpdir, sizeof(tmpdir), "TMPDIR=%s", scratch);
	final_env(plan, tmpdir, channel_fd >= 0, envp);
	if (pipe2(report, O_CLOEXEC) < 0) {
		snprintf(why, n, "pipe: %s", strerror(errno));
		return -errno;
	}
	/* Own PID namespace: nothing the guest starts outlives it. Own IPC
	 * namespace: no SysV/POSIX IPC object is shared with other guests
	 * or the host. */
	args.flags = CLONE_PIDFD | CLONE_NEWPID | CLONE_NEWIPC |
		     (plan->network_none ? CLONE_NEWNET : 0);
	args.pidfd = (uint64_t)(uintptr_t)&pidfd;
	args.exit_signal = SIGCHLD;
	/* The reaper starts with every signal blocked (see reaper_main). */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	pid = syscall(SYS_clone3, &args, sizeof(args));
	if (pid == 0) {
		close(report[0]);
		reaper_main(ctx, plan, uid, scratch, channel_fd,
			    (char *const *)envp, report[1]);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(report[1]);
	if (pid < 0) {
		int err = errno;
		close(report[0]);
		snprintf(why, n, "clone3: %s", strerror(err));
		return -err;
	}
	child->pid = (pid_t)pid;
	child->pidfd = pidfd;
	child->report_fd = report[0];
	return 0;
}

int spawn_read_report(int report_fd, struct iso_report *rep)
{
	ssize_t got;

	while ((got = read(report_fd, rep, sizeof(*rep))) < 0 && errno == EINTR)
		;
	if (got != (ssize_t)sizeof(*rep) || rep->magic != ISO_REPORT_MAGIC ||
	    rep->outcome < ISO_OUTCOME_EXITED || rep->outcome > ISO_OUTCOME_FAILED ||
	    rep->stage > ISO_STAGE_EXEC)
		return -EIO;
	rep->reason[sizeof(rep->reason) - 1] = '\0';
	return 0;
}
