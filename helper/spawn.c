/*
 * spawn.c - the single path that ends in the guest's exec, and what the
 * guest takes and gives back around it.
 *
 *   helper (root): lease a pool uid, its passwd entry, channel
 *     --clone3(NEWPID|NEWIPC[|NEWNET])--> reaper
 *   reaper: setsid, network, mounts (world.c: the program and grants
 *           opened as the guest, its own copy of the tree), drop to the
 *           pool uid (verified),
 *           vfork --> guest: rlimits, Landlock, seccomp, fds, execveat
 *           reap everything, report the guest's status, exit
 *   helper: wait for the reaper, read its report, give the lease back
 *
 * Invariants:
 *  - Once privileges start changing, any failure ends the process with a
 *    reported stage and errno; nothing is retried or skipped (fail closed).
 *  - The guest gets exactly fds 0-2 (the caller's or /dev/null) and, with a
 *    channel, fd 3. Every other fd of the helper is close-on-exec.
 *  - The reaper is pid 1 of the guest's PID namespace: when it exits, the
 *    kernel kills every process the guest started.
 *  - A lease is given back only after its reaper (and with it its whole PID
 *    namespace, and its mount namespace with its /tmp) is gone.
 *  - Nothing in the reaper or the guest allocates or compiles: the plan,
 *    the filter and the environment were prepared before the clone.
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
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "log.h"
#include "spawn.h"
#include "util.h"
#include "world.h"

#define ENV_SLOTS (ISO_WIRE_FORWARD_MAX + ISO_ENV_OVERRIDES_MAX + 8)

/* What the reaper tells the helper when the guest is gone. */
struct iso_report {
	uint32_t magic;
	uint32_t outcome; /* ISO_OUTCOME_EXITED, _SIGNALED or _FAILED */
	int32_t code;	  /* exit code, signal or errno */
	uint32_t stage;	  /* enum iso_stage for _FAILED */
	uint64_t user_us, sys_us, maxrss_kib;
	char reason[200]; /* for _FAILED: what went wrong (logged) */
};
#define ISO_REPORT_MAGIC 0x69736f72u

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

/* Returns only if the exec failed, with errno set. */
static void exec_program(int prog, const char *const *argv,
			 char *const envp[])
{
	sigset_t none;

	/* Signals forwarded during the set-up waited, blocked (clone_reaper);
	 * from here they act as they will on the program. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	syscall(SYS_execveat, prog, "", argv, envp, AT_EMPTY_PATH);
	if (errno == ENOENT) {
		/* A #! script is read by its interpreter through
		 * /dev/fd/<prog>, which close-on-exec would have closed: run
		 * it again with the descriptor left open (isospawn-helper(8)). */
		if (fcntl(prog, F_SETFD, 0) == 0)
			syscall(SYS_execveat, prog, "", argv, envp, AT_EMPTY_PATH);
	}
}

/*
 * The guest, after the reaper dropped the credentials: one step per
 * mechanism, in this fixed order, each failing closed.
 */
static noreturn void guest_main(const struct iso_spawn_ctx *ctx,
				const struct iso_plan *plan, int prog,
				int channel_fd, char *const envp[])
{
	const struct iso_confine *c = ctx->confine;
	int fds[4] = { plan->stdio[0], plan->stdio[1], plan->stdio[2], channel_fd };
	char why[sizeof(guest_failure.reason)];
	int rc;

	for (int i = 0; i < 3; i++)
		if (fds[i] < 0)
			fds[i] = ctx->devnull;
	if ((rc = confine_apply_rlimits(plan, why, sizeof(why))) < 0)
		guest_fail(ISO_STAGE_CONFINEMENT, -rc, why);
	if ((rc = confine_apply_landlock(c, plan, prog, fds, why, sizeof(why))) < 0)
		guest_fail(ISO_STAGE_CONFINEMENT, -rc, why);
	if ((rc = confine_apply_seccomp(c, why, sizeof(why))) < 0)
		guest_fail(ISO_STAGE_CONFINEMENT, -rc, why);
	if ((rc = confine_apply_fds(fds, why, sizeof(why))) < 0)
		guest_fail(ISO_STAGE_CONFINEMENT, -rc, why);
	exec_program(prog, plan->argv, envp);
	/* Still missing after the retry: the #! interpreter, looked up in the
	 * guest's tree. */
	guest_fail(ISO_STAGE_EXEC, errno, errno == ENOENT ?
		   "execveat (a #! interpreter outside the guest's tree?)" : "execveat");
}

/* Time in microseconds, and peak memory, of what the process waited for. */
static void take_usage(const struct rusage *ru, struct iso_report *rep)
{
	rep->user_us = (uint64_t)ru->ru_utime.tv_sec * 1000000 + (uint64_t)ru->ru_utime.tv_usec;
	rep->sys_us = (uint64_t)ru->ru_stime.tv_sec * 1000000 + (uint64_t)ru->ru_stime.tv_usec;
	rep->maxrss_kib = (uint64_t)ru->ru_maxrss;
}

static noreturn void reaper_report(int fd, struct iso_report *rep)
{
	struct rusage ru;

	if (getrusage(RUSAGE_CHILDREN, &ru) == 0)
		take_usage(&ru, rep);
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

/* Wait for the guest and everything it left in the namespace; report. */
static noreturn void reaper_wait(pid_t pid, int report_fd)
{
	struct iso_report rep = { .magic = ISO_REPORT_MAGIC };
	int status;

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

/*
 * pid 1 of the guest's namespaces, still root: its own session, the
 * network, the credentials; then the guest.
 */
static noreturn void reaper_main(const struct iso_spawn_ctx *ctx,
				 const struct iso_plan *plan, uid_t uid,
				 int channel_fd, char *const envp[],
				 int report_fd)
{
	struct pollfd parent = { .fd = ctx->helper_pidfd, .events = POLLIN };
	char why[sizeof(guest_failure.reason)];
	int rc, prog;
	pid_t pid;
	sigset_t none;

	/* Every signal stays blocked (clone_reaper) until the guest exists and
	 * the handlers that forward to it are in place: the kernel drops a
	 * signal to pid 1 of a namespace that has no handler for it, while a
	 * blocked one waits. So an iso_kill() right after iso_spawn() is not
	 * lost. */
	sigemptyset(&none);
	/* Its own session: no controlling terminal to inject into. */
	if (setsid() < 0)
		reaper_fail(report_fd, ISO_STAGE_CONFINEMENT, errno, "setsid");
	if ((rc = confine_apply_network(plan, why, sizeof(why))) < 0)
		reaper_fail(report_fd, ISO_STAGE_CONFINEMENT, -rc, why);
	/* The guest's own world: mounts need root, so before the drop. A
	 * program that cannot be opened fails at exec, as it would there. */
	if ((rc = world_enter(ctx->world, plan, uid, &prog, why, sizeof(why))) < 0)
		reaper_fail(report_fd, prog < 0 ? ISO_STAGE_EXEC : ISO_STAGE_CONFINEMENT,
			    -rc, why);
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
		guest_main(ctx, plan, prog, channel_fd, envp);
	guest_pid = pid;
	reaper_signals();
	sigprocmask(SIG_SETMASK, &none, NULL);
	reaper_wait(pid, report_fd);
}

/* The guest's environment: the plan's, plus TMPDIR=/tmp (its own) when the
 * caller forwarded none, plus the one variable the helper adds itself. */
static void final_env(const struct iso_plan *plan, int channel,
		      const char *envp[ENV_SLOTS])
{
	size_t i = 0;
	int have_tmpdir = 0;

	for (char **e = plan->envp; *e && i < ENV_SLOTS - 3; e++) {
		if (strncmp(*e, "TMPDIR=", 7) == 0)
			have_tmpdir = 1;
		envp[i++] = *e;
	}
	if (!have_tmpdir)
		envp[i++] = "TMPDIR=/tmp";
	if (channel)
		envp[i++] = "ISOSPAWN_CHANNEL_FD=3";
	envp[i] = NULL;
}

/* Start the reaper of `plan` under `uid`; channel_fd (or -1) becomes the
 * guest's fd 3. */
static int clone_reaper(const struct iso_spawn_ctx *ctx,
			const struct iso_plan *plan, uid_t uid, int channel_fd,
			struct iso_child *child, char *why, size_t n)
{
	struct clone_args args = { 0 };
	sigset_t all, old;
	const char *envp[ENV_SLOTS];
	int report[2], pidfd = -1, rc;
	long pid;

	final_env(plan, channel_fd >= 0, envp);
	if (pipe2(report, O_CLOEXEC) < 0)
		return iso_why_errno(why, n, "pipe");
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
		reaper_main(ctx, plan, uid, channel_fd, (char *const *)envp,
			    report[1]);
	}
	rc = pid < 0 ? iso_why_errno(why, n, "clone3") : 0;
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(report[1]);
	if (rc < 0) {
		close(report[0]);
		return rc;
	}
	child->pid = (pid_t)pid;
	child->pidfd = pidfd;
	child->report_fd = report[0];
	return 0;
}

int spawn_init(struct iso_spawn_ctx *ctx, const struct iso_confine *confine,
	       const struct iso_world *world, char *why, size_t n)
{
	ctx->confine = confine;
	ctx->world = world;
	ctx->nidle = 0;
	ctx->devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	ctx->helper_pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	if (ctx->devnull < 0 || ctx->helper_pidfd < 0)
		return iso_why_errno(why, n, "/dev/null or pidfd_open");
	return 0;
}

static int lease_get(struct iso_spawn_ctx *ctx, struct iso_lease *lease,
		     char *why, size_t n)
{
	if (ctx->nidle > 0) {
		*lease = ctx->idle[--ctx->nidle];
		return 0;
	}
	return lease_acquire(ctx->confine->rule, lease, why, n);
}

/* The guest's PID namespace is gone, so nothing runs under this uid any
 * more: keep the lease for the next spawn, or give it back. */
static void lease_put(struct iso_spawn_ctx *ctx, struct iso_lease *lease)
{
	if (ctx->nidle < ISO_IDLE_LEASES) {
		ctx->idle[ctx->nidle++] = *lease;
	} else {
		world_unlease(ctx->world, lease->uid);
		lease_release(lease);
	}
	lease->lock_fd = -1;
}

int spawn_start(struct iso_spawn_ctx *ctx, const struct iso_plan *plan,
		struct iso_child *child, int *client_chan, char *why,
		size_t n)
{
	int chan[2] = { -1, -1 };
	int rc;

	*client_chan = -1;
	if ((rc = lease_get(ctx, &child->lease, why, n)) < 0)
		return rc;
	rc = world_lease(ctx->world, child->lease.uid, why, n);
	if (rc == 0 && plan->channel &&
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, chan) < 0)
		rc = iso_why_errno(why, n, "channel socketpair");
	if (rc == 0)
		rc = clone_reaper(ctx, plan, child->lease.uid, chan[1], child,
				  why, n);
	/* The guest's end is the reaper's now (or nobody's). */
	iso_close_fds(&chan[1], 1);
	if (rc == 0) {
		*client_chan = chan[0];
		return 0;
	}
	iso_close_fds(&chan[0], 1);
	lease_put(ctx, &child->lease);
	return rc;
}

/* Read and check the reaper's report; 0, or -EIO when there is none. */
static int read_report(int report_fd, struct iso_report *rep)
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

void spawn_end(struct iso_spawn_ctx *ctx, struct iso_child *child,
	       uint32_t id, struct iso_wire_exited *ex)
{
	struct iso_report rep;
	struct rusage ru = { 0 };
	char qwhy[4 * sizeof(rep.reason)];
	int status = 0;

	while (wait4(child->pid, &status, 0, &ru) < 0 && errno == EINTR)
		;
	if (read_report(child->report_fd, &rep) < 0) {
		/* The reaper died without a report: killed, with its guest,
		 * by a timeout, a kill request or the OOM killer. */
		rep.outcome = ISO_OUTCOME_SIGNALED;
		rep.code = WIFSIGNALED(status) ? WTERMSIG(status) : SIGKILL;
		rep.stage = ISO_STAGE_NONE;
		take_usage(&ru, &rep);
	} else if (rep.outcome == ISO_OUTCOME_FAILED) {
		log_quote(qwhy, sizeof(qwhy), rep.reason);
		syslog(LOG_NOTICE, "start-failed id=%u guest_uid=%u stage=%s errno=%d reason=\"%s\"",
		       id, (unsigned)child->lease.uid, iso_stage_name(rep.stage),
		       rep.code, qwhy);
	}
	ex->outcome = rep.outcome;
	ex->code = (uint32_t)rep.code;
	ex->stage = rep.stage;
	ex->user_us = rep.user_us;
	ex->sys_us = rep.sys_us;
	ex->maxrss_kib = rep.maxrss_kib;
	close(child->pidfd);
	close(child->report_fd);
	lease_put(ctx, &child->lease);
}

void spawn_release(struct iso_spawn_ctx *ctx)
{
	while (ctx->nidle > 0)
		lease_release(&ctx->idle[--ctx->nidle]);
}
