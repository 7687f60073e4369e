/*
 * spawner.c - the single path that ends in the guest's exec, and what the
 * guest takes and gives back around it.
 *
 *   helper (root): decide the request (request.c), with a slot of the
 *           caller's (loop.c) lease a pool uid
 *   factory (root, forked once): on CLONE,
 *     --clone3(NEWPID|NEWIPC|CLONE_PARENT)--> reaper, the helper's child,
 *     made while the helper was idle (a spare) or else now; CLONED back
 *   helper: hands the reaper the PLAN, with the caller's descriptors
 *   reaper (root, all three uids): close what it does not need, take the
 *           plan as decided, arm the deadline, setsid, network (a
 *           namespace of its own for "network none"), mounts (world.c:
 *           the program and grants opened as the guest, its own copy
 *           of the tree),
 *           vfork --> guest, in the reaper's cgroup (cgroup.c): its own
 *                    cgroup namespace, drop to the pool uid (verified),
 *                    make the channel and send the caller's end to the
 *                    helper (CHANNEL), Landlock, fds, rlimits, seccomp,
 *                    execveat
 *           wait for the guest, kill and reap everything left in the
 *           namespace (all of it at the deadline), report (EXITED), exit
 *   helper: read the report, add what the guest's cgroup counted, give
 *           the uid and the slot back, tell the client; once the reaper
 *           (with its namespaces) is gone, wait for it, remove its
 *           cgroup
 *
 * Invariants:
 *  - Once privileges start changing, any failure ends the process with a
 *    reported stage and errno; nothing is retried or skipped (fail closed).
 *  - The guest gets exactly fds 0-2 (the caller's or /dev/null), with a
 *    channel fd 3, and the descriptors the caller passed at their
 *    numbers. Every other fd of the helper is close-on-exec.
 *  - Every message between helper, factory and reaper is one of wire.h's,
 *    through its codec.
 *  - The reaper is pid 1 of the guest's PID namespace: it reports only
 *    once every process there but itself is killed and reaped, so no
 *    process of the guest's uid is left when the client hears of the end.
 *    It stays root (uid 0 in all three ids): neither the caller nor the
 *    guest can signal or stop it, so nothing stands between the deadline
 *    it enforces and the guest.
 *  - The reaper holds only the descriptors it and the guest need.
 *  - A lease is given back only once its reaper has killed and reaped
 *    everything in its PID namespace and reported so, or has been waited
 *    for (SECURITY.md, guarantee 11). Its namespaces may still be going
 *    then; the uid's next guest gets namespaces and a /tmp of its own.
 *  - Nothing in the reaper or the guest compiles or allocates: the filter
 *    was prepared before the clone, and a reaper decodes its plan into
 *    static buffers.
 *  - A spare serves one guest and carries nothing from one to another: it
 *    is cloned with fresh namespaces and a uid swept or back untouched
 *    (creds.h), keeps no descriptor of the helper's but what every reaper
 *    keeps, and holds no memory but the helper's own.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/keyctl.h>
#include <linux/sched.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdnoreturn.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include "cgroup.h"
#include "log.h"
#include "spawner.h"
#include "util.h"
#include "world.h"

/* Room for the messages that carry no strings but a reason. */
#define SMALL_MSG (ISO_WIRE_HEADER_SIZE + 512)

#ifndef SO_PASSRIGHTS
#define SO_PASSRIGHTS 83 /* Linux 6.16; older headers lack the name */
#endif

/* Each process's message in and message out (the helper, the factory
 * and each reaper have their own copies). A reaper's `in` is its plan. */
static struct iso_wire_msg in, out;

/* What the reaper tells the helper at the end, a failure written by the
 * guest child itself before it gives up among it. The child is vfork()ed:
 * it shares the reaper's memory until it execs or exits, so the reaper
 * reads the failure here without a pipe, and no page tables are copied. */
static struct {
	/* EXITED, SIGNALED, TIMED_OUT or FAILED; the code (exit code, signal
	 * or errno), the stage for FAILED, the usage. Never wall_us or
	 * limit_hit: those are the helper's. */
	struct iso_wire_exited ex;
	/* for FAILED: what went wrong, logged and told the caller, so made of
	 * fixed text, errno messages, the guest's uid and the request's paths
	 * only: never an environment value or another caller's data */
	char reason[sizeof(((struct iso_child *)0)->reason)];
	int channel; /* the plan's ISO_CHANNEL_* */
	int channel_told; /* the helper has its CHANNEL */
} report;
/* CHANNEL, encoded before the guest exists: the guest encodes nothing. */
static uint8_t channel_msg[ISO_WIRE_HEADER_SIZE];

static volatile pid_t guest_pid;
static volatile sig_atomic_t deadline_passed;

/* pid 1 of a namespace only receives signals it handles: forward them, so
 * iso_kill() and the guest's own signals behave as usual. At the deadline
 * (a SIGALRM from the kernel, SI_KERNEL, which a guest's kill() cannot
 * forge) everything in the namespace is killed. SIGSTOP cannot be handled:
 * the helper sends it as a queued SIGTSTP (loop.c handle_kill), which only
 * root can send the reaper, so that nothing ever stops the reaper and its
 * deadline. */
static void forward_signal(int sig, siginfo_t *info, void *context)
{
	(void)context;
	if (sig == SIGALRM && info->si_code == SI_KERNEL) {
		deadline_passed = 1;
		(void)kill(-1, SIGKILL);
	} else if (guest_pid > 0) {
		(void)kill(guest_pid, sig == SIGTSTP && info->si_code == SI_QUEUE ? SIGSTOP : sig);
	}
}

static void set_failure(enum iso_stage stage, int err, const char *reason)
{
	report.ex.outcome = ISO_OUTCOME_FAILED;
	report.ex.code = (uint32_t)err;
	report.ex.stage = stage;
	snprintf(report.reason, sizeof(report.reason), "%s", reason);
}

static noreturn void guest_fail(enum iso_stage stage, int err, const char *reason)
{
	set_failure(stage, err, reason);
	_exit(127);
}

/* Returns only if the exec failed, with errno set. */
static void exec_program(int prog, const char *const *argv, char *const envp[])
{
	sigset_t none;

	/* Signals forwarded during the set-up waited, blocked (factory_main);
	 * from here they act as they will on the program. */
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	syscall(SYS_execveat, prog, "", argv, envp, AT_EMPTY_PATH);
	/* A #! script is read by its interpreter through /dev/fd/<prog>,
	 * which close-on-exec would have closed: run it again with the
	 * descriptor left open (isospawn-helper(8)). */
	if (errno == ENOENT && fcntl(prog, F_SETFD, 0) == 0)
		syscall(SYS_execveat, prog, "", argv, envp, AT_EMPTY_PATH);
}

/* The channel's socket type: messages, or a byte stream. */
static int channel_type(int kind)
{
	return kind == ISO_CHANNEL_STREAM ? SOCK_STREAM : SOCK_SEQPACKET;
}

/* As the guest, so that SO_PEERCRED on either end names its uid, gid and
 * this pid, never root: make the channel and send the caller's end to the
 * helper. Returns the guest's end, or -errno. */
static int make_channel(int report_fd, int kind)
{
	int chan[2], off = 0;

	if (socketpair(AF_UNIX, channel_type(kind) | SOCK_CLOEXEC, 0, chan) < 0)
		return -errno;
	/* The caller's end takes no descriptors, from before the guest runs:
	 * a guest that queued its own end there would keep the channel open
	 * after it is gone. Older kernels lack the option (SECURITY.md 13). */
	(void)setsockopt(chan[0], SOL_SOCKET, SO_PASSRIGHTS, &off, sizeof(off));
	/* The caller's end here goes at the exec (close-on-exec). */
	if (iso_send_fds(report_fd, channel_msg, sizeof(channel_msg), 0, &chan[0], 1) < 0)
		return -errno;
	report.channel_told = 1;
	return chan[1];
}

/*
 * The guest, in the reaper's namespaces and tree: one step per mechanism,
 * in this fixed order, each failing closed: its cgroup, credentials (the
 * channel is made as the guest), Landlock, fds, rlimits, seccomp, exec. The rlimits
 * follow the fds so that a small nofile binds the program, not this
 * set-up (which holds the ruleset and moves stdio out of the way); the
 * filter comes last, so that only the exec must pass it.
 */
static noreturn void guest_main(const struct iso_spawn_ctx *ctx, const struct iso_plan *plan,
				uid_t uid, int prog, int report_fd, char *const envp[])
{
	const struct iso_confine *c = ctx->confine;
	int fds[4] = { plan->stdio[0], plan->stdio[1], plan->stdio[2], -1 };
	char why[sizeof(report.reason)];
	int rc;

	/* Its own cgroup is the root of what it sees: not its caller's path. */
	if (unshare(CLONE_NEWCGROUP) < 0)
		guest_fail(ISO_STAGE_CONFINEMENT, errno, "unshare(CLONE_NEWCGROUP)");
	/* A session keyring of its own (root's, empty), not its caller's, in
	 * which the setuid helper started: whoever possesses a keyring reads
	 * its keys whatever its uid, and 'seccomp none' allows keyctl. */
	if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0 && errno != ENOSYS)
		guest_fail(ISO_STAGE_CREDENTIALS, errno, "keyctl(KEYCTL_JOIN_SESSION_KEYRING)");
	if ((rc = creds_drop(uid, why, sizeof(why))) < 0)
		guest_fail(ISO_STAGE_CREDENTIALS, -rc, why);
	/* Where it starts, reached as the guest: a path of its tree that the
	 * caller named, or its own /tmp. */
	if (chdir(plan->cwd ? plan->cwd : "/tmp") < 0) {
		rc = iso_why_errno(why, sizeof(why), "working directory %s",
				   plan->cwd ? plan->cwd : "/tmp");
		guest_fail(ISO_STAGE_CONFINEMENT, -rc, why);
	}
	if (plan->channel && (fds[3] = make_channel(report_fd, plan->channel)) < 0)
		guest_fail(ISO_STAGE_CREDENTIALS, -fds[3], "channel");
	if ((rc = confine_apply_landlock(c, plan, prog, fds, why, sizeof(why))) < 0)
		guest_fail(ISO_STAGE_CONFINEMENT, -rc, why);
	if ((rc = confine_apply_fds(fds, plan, why, sizeof(why))) < 0)
		guest_fail(ISO_STAGE_CONFINEMENT, -rc, why);
	if ((rc = confine_apply_rlimits(plan, why, sizeof(why))) < 0)
		guest_fail(ISO_STAGE_CONFINEMENT, -rc, why);
	if ((rc = confine_apply_seccomp(c, why, sizeof(why))) < 0)
		guest_fail(ISO_STAGE_CONFINEMENT, -rc, why);
	exec_program(prog, plan->argv, envp);
	/* Still missing after the retry: the #! interpreter, looked up in the
	 * guest's tree. */
	guest_fail(ISO_STAGE_EXEC, errno,
		   errno == ENOENT ? "execveat (a #! interpreter outside the guest's tree?)"
				   : "execveat");
}

/* Time in microseconds, and peak memory, of what the process waited for. */
static void take_usage(const struct rusage *ru, struct iso_wire_exited *ex)
{
	ex->user_us = (uint64_t)ru->ru_utime.tv_sec * 1000000 + (uint64_t)ru->ru_utime.tv_usec;
	ex->sys_us = (uint64_t)ru->ru_stime.tv_sec * 1000000 + (uint64_t)ru->ru_stime.tv_usec;
	ex->maxrss_kib = (uint64_t)ru->ru_maxrss;
}

static noreturn void reaper_report(int fd)
{
	static uint8_t buf[SMALL_MSG];
	struct rusage ru;
	long len;

	if (getrusage(RUSAGE_CHILDREN, &ru) == 0)
		take_usage(&ru, &report.ex);
	/* A helper that asked for a channel takes it first: without one, the
	 * caller's end is a closed channel. */
	if (report.channel && !report.channel_told)
		(void)!send(fd, channel_msg, sizeof(channel_msg), MSG_NOSIGNAL);
	out = (struct iso_wire_msg){ .type = ISO_MSG_EXITED, .u.exited = report.ex };
	out.u.exited.limit_hit = -1;
	out.u.exited.reason = report.ex.outcome == ISO_OUTCOME_FAILED ? report.reason : NULL;
	if ((len = iso_wire_encode(&out, buf, sizeof(buf))) > 0)
		(void)!send(fd, buf, (size_t)len, MSG_NOSIGNAL);
	_exit(0);
}

static noreturn void reaper_fail(int fd, enum iso_stage stage, int err, const char *reason)
{
	set_failure(stage, err, reason);
	reaper_report(fd);
}

/* Once the guest exists: forward every signal to it. Until then every
 * signal stays blocked (factory_main) and waits: the kernel drops a signal
 * to pid 1 of a namespace that has no handler for it. So an iso_kill()
 * right after iso_spawn() is not lost. */
static void reaper_signals(void)
{
	struct sigaction sa = { .sa_sigaction = forward_signal, .sa_flags = SA_SIGINFO };

	/* No SA_RESTART: a signal interrupts wait4 and is forwarded. Every
	 * signal up to 64 but SIGCHLD (the reaper's own) and the C library's
	 * 32 and 33, which sigaction() refuses (iso_kill() refuses them). */
	sigemptyset(&sa.sa_mask);
	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP && sig != SIGCHLD)
			(void)sigaction(sig, &sa, NULL);
	/* Unblocked (sa_mask is the empty set): those that waited come now. */
	sigprocmask(SIG_SETMASK, &sa.sa_mask, NULL);
}

/* Wait for the guest and everything it left in the namespace; report. */
static noreturn void reaper_wait(pid_t pid, int report_fd)
{
	int status;

	for (;;) {
		pid_t w = wait4(-1, &status, 0, NULL);
		if (w == pid)
			break;
		if (w < 0 && errno == ECHILD)
			reaper_fail(report_fd, ISO_STAGE_EXEC, ECHILD, "guest vanished");
	}
	/* Everything the guest left in its namespace, killed and reaped: the
	 * report then means that no process of the guest's uid is left. */
	(void)kill(-1, SIGKILL);
	while (wait4(-1, NULL, 0, NULL) >= 0 || errno == EINTR)
		;
	if (deadline_passed) {
		report.ex.outcome = ISO_OUTCOME_TIMED_OUT;
		report.ex.code = SIGKILL;
		report.ex.stage = ISO_STAGE_NONE;
	} else if (report.ex.outcome == ISO_OUTCOME_FAILED) {
		/* The guest's own, written before it gave up. */
	} else if (WIFSIGNALED(status)) {
		report.ex.outcome = ISO_OUTCOME_SIGNALED;
		report.ex.code = (uint32_t)WTERMSIG(status);
	} else {
		report.ex.outcome = ISO_OUTCOME_EXITED;
		report.ex.code = (uint32_t)WEXITSTATUS(status);
	}
	reaper_report(report_fd);
}

/* Right after the clone: the helper's request socket, other guests' pidfds
 * and report sockets, epoll, signalfd and the rest are not the reaper's,
 * and would count against the guest's nofile until its exec. Kept: stdio
 * (which the guest's replace), its own socket to the helper, /dev/null,
 * the helper's pidfd and the guest's template namespace (-1: none). Each
 * gap between two kept ones is closed, from the lowest up. */
static void reaper_fds(const struct iso_spawn_ctx *ctx, int report_fd)
{
	int keep[] = {
		0,
		1,
		2,
		report_fd,
		ctx->devnull,
		ctx->helper_pidfd,
		ctx->world->ns_fd,
		ctx->world->caller_mnt,
		ctx->caller_net,
	};
	unsigned from = 0, next;

	do {
		next = ~0u;
		for (size_t i = 0; i < COUNT(keep); i++)
			if (keep[i] >= 0 && (unsigned)keep[i] >= from && (unsigned)keep[i] < next)
				next = (unsigned)keep[i];
		if (next > from)
			(void)close_range(from, next - 1, 0);
		from = next + 1;
	} while (next != ~0u);
}

/*
 * pid 1 of the guest's namespaces, still root, cloned before its guest's
 * request: as a spare, while the helper has nothing else to do (so that
 * the clone and the new namespaces are not paid while a caller waits), or
 * else when the request comes. It serves one guest and carries nothing
 * from one to the next (fresh namespaces, a uid swept or back untouched,
 * only the helper's own memory). In order: its own descriptors; the
 * plan the helper decided (PLAN, with the caller's descriptors), taken
 * as it is; the deadline, its own session, the network (and its
 * namespace), the guest's world; then the guest. Its one socket to the
 * helper (report_fd) brings the plan and takes back the channel and the
 * report.
 */
static noreturn void reaper_main(const struct iso_spawn_ctx *ctx, int report_fd)
{
	static uint8_t buf[ISO_WIRE_MAX];
	static struct iso_plan plan;
	struct pollfd parent = { .fd = ctx->helper_pidfd, .events = POLLIN };
	struct itimerval deadline = { 0 };
	char why[sizeof(report.reason)];
	int fds[ISO_FDS_MAX], rc, prog;
	enum iso_stage stage;
	size_t nfds = 0;
	unsigned seen;
	ssize_t len;
	uid_t uid;
	pid_t pid;

	reaper_fds(ctx, report_fd);
	/* A spare waits here for its plan, while the helper is idle; end of
	 * file: the connection ended before a guest came. */
	len = iso_recv_fds(report_fd, buf, sizeof(buf), 0, fds, ISO_FDS_MAX, &nfds, &seen);
	if (len <= 0)
		_exit(0);
	rc = -EBADMSG;
	if ((seen & (ISO_RECV_TRUNC | ISO_RECV_CTRUNC)) ||
	    (rc = iso_wire_decode(buf, (size_t)len, &in, why, sizeof(why))) < 0 ||
	    (rc = in.type == ISO_MSG_PLAN ? 0 : -EBADMSG) < 0 ||
	    (rc = plan_from_wire(&in.u.plan, fds, nfds, ctx->devnull, &plan, why, sizeof(why))) < 0)
		reaper_fail(report_fd, ISO_STAGE_CONFINEMENT, -rc, "the reaper's plan");
	report.channel = plan.channel;
	uid = (uid_t)in.u.plan.uid;
	out = (struct iso_wire_msg){ .type = ISO_MSG_CHANNEL };
	(void)iso_wire_encode(&out, channel_msg, sizeof(channel_msg));
	/* The timeout, from the kernel to the reaper: its SIGALRM waits,
	 * blocked, until the guest exists. */
	deadline.it_value.tv_sec = (time_t)(plan.timeout_ms / 1000);
	deadline.it_value.tv_usec = (suseconds_t)(plan.timeout_ms % 1000) * 1000;
	if (plan.timeout_ms && setitimer(ITIMER_REAL, &deadline, NULL) < 0)
		reaper_fail(report_fd, ISO_STAGE_CONFINEMENT, errno, "setitimer");
	/* Its own session: no controlling terminal to inject into. */
	if (setsid() < 0)
		reaper_fail(report_fd, ISO_STAGE_CONFINEMENT, errno, "setsid");
	if ((rc = confine_apply_network(&plan, ctx->caller_net, why, sizeof(why))) < 0)
		reaper_fail(report_fd, ISO_STAGE_CONFINEMENT, -rc, why);
	/* The guest's own world: mounts need root, so before the drop. A
	 * program that cannot be opened fails at exec, as it would there. */
	if ((rc = world_enter(ctx->world, &plan, uid, &prog, &stage, why, sizeof(why))) < 0)
		reaper_fail(report_fd, stage, -rc, why);
	if ((rc = confine_apply_ipc(&plan, why, sizeof(why))) < 0)
		reaper_fail(report_fd, ISO_STAGE_CONFINEMENT, -rc, why);
	/* Above every number confine_apply_fds() places. Moved, not
	 * copied: the reaper holds it once. */
	if (prog < confine_fds_floor(&plan)) {
		int low = prog;

		if ((prog = fcntl(low, F_DUPFD_CLOEXEC, confine_fds_floor(&plan))) < 0)
			reaper_fail(report_fd, ISO_STAGE_EXEC, errno, "program descriptor");
		close(low);
	}
	/* Set after world_enter() (its fsuid changes clear it); then make
	 * sure the helper did not already die in between. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || poll(&parent, 1, 0) != 0)
		_exit(1);
	/* Returns once the guest has exec'd or given up. The reaper itself
	 * stays root: once the guest's last process is gone, nothing of its
	 * uid is left, and its end can be told before the namespaces go. */
	pid = vfork();
	if (pid < 0)
		reaper_fail(report_fd, ISO_STAGE_EXEC, errno, "fork");
	if (pid == 0)
		guest_main(ctx, &plan, uid, prog, report_fd, (char *const *)in.u.plan.envp);
	guest_pid = pid;
	reaper_signals();
	reaper_wait(pid, report_fd);
}

/*
 * The reaper factory: a child of the helper, forked once, that clones each
 * reaper as the helper's child (CLONE_PARENT) and hands back its pidfd and
 * socket. The helper itself then forks nothing per guest, so no fork
 * leaves its pages copy-on-write, each of its writes after one a fault on
 * the path of the next request. Each reaper is a copy of the factory, which
 * keeps only what every reaper needs (reaper_fds) and starts them with
 * every signal blocked (reaper_signals). It ends with the helper: at end of
 * file on its socket, or killed when the helper dies.
 */
static noreturn void factory_main(const struct iso_spawn_ctx *ctx, int sock)
{
	struct clone_args args = { .flags = CLONE_PIDFD | CLONE_PARENT | CLONE_NEWPID |
					    CLONE_NEWIPC };
	struct pollfd helper = { .fd = ctx->helper_pidfd, .events = POLLIN };
	int size = ISO_WIRE_MAX + 4096; /* the plan comes whole, however large */
	int sp[2], pidfd = -1, leaf = -1;
	uint8_t buf[SMALL_MSG];
	size_t nleaf = 0;
	unsigned seen;
	sigset_t all;
	ssize_t len;
	long pid;

	reaper_fds(ctx, sock);
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, NULL);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || poll(&helper, 1, 0) != 0)
		_exit(1);
	args.pidfd = (uint64_t)(uintptr_t)&pidfd;
	/* Each CLONE comes with the reaper's cgroup, where it has one. */
	while ((len = iso_recv_fds(sock, buf, sizeof(buf), 0, &leaf, 1, &nleaf, &seen)) > 0 &&
	       iso_wire_decode(buf, (size_t)len, &in, NULL, 0) == 0 && in.type == ISO_MSG_CLONE) {
		args.flags &= ~(uint64_t)CLONE_INTO_CGROUP;
		if (nleaf == 1) {
			args.flags |= CLONE_INTO_CGROUP;
			args.cgroup = (uint64_t)leaf;
		}
		/* Own PID namespace: nothing the guest starts outlives it. Own
		 * IPC namespace: no SysV/POSIX IPC object is shared with other
		 * guests or the host. (The network namespace follows the
		 * request.) */
		sp[0] = sp[1] = -1;
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0 ||
		    setsockopt(sp[0], SOL_SOCKET, SO_SNDBUF, &size, sizeof(size)) < 0 ||
		    (pid = syscall(SYS_clone3, &args, sizeof(args))) < 0)
			pid = -errno;
		if (pid == 0)
			reaper_main(ctx, sp[1]);
		/* The reaper's pid, with its pidfd and socket; or why not. */
		out =
		    (struct iso_wire_msg){ .type = ISO_MSG_CLONED, .u.cloned.pid = (uint32_t)pid };
		if (pid < 0)
			out = (struct iso_wire_msg){ .type = ISO_MSG_REFUSED,
						     .u.refused = { (uint32_t)-pid, "clone3" } };
		len = iso_wire_encode(&out, buf, sizeof(buf));
		(void)iso_send_fds(sock, buf, (size_t)len, 0, (int[]){ pidfd, sp[0] },
				   pid > 0 ? 2 : 0);
		if (pid > 0)
			close(pidfd);
		iso_close_fds(sp, 2);
		iso_close_fds(&leaf, nleaf);
	}
	_exit(0);
}

/* Close the socket of the factory or of an unused spare, which then
 * exits at once (if it has not already gone), and reap it; and close the
 * spare's pidfd (the factory has none: -1). */
static void drop_child(pid_t *pid, int sock, int pidfd)
{
	close(sock);
	while (waitpid(*pid, NULL, 0) < 0 && errno == EINTR)
		;
	iso_close_fds(&pidfd, 1);
	*pid = 0;
}

/* Close an unused spare's socket, reap it, and remove its cgroup. */
static void drop_spare(struct iso_spawn_ctx *ctx)
{
	drop_child(&ctx->spare.pid, ctx->spare.report_fd, ctx->spare.pidfd);
	cgroup_leaf_remove(ctx->cgroup, &ctx->spare.cgroup_fd, ctx->spare.cgroup);
}

/* Start the spare, from the factory (forked now if there is none): a
 * reaper, in a cgroup of its own, that waits for its guest's plan
 * (reaper_main). */
static int clone_reaper(struct iso_spawn_ctx *ctx, char *why, size_t n)
{
	uint8_t buf[SMALL_MSG];
	int sp[2], fds[2] = { -1, -1 }, leaf = -1, rc;
	char name[sizeof(ctx->spare.cgroup)];
	size_t nfds = 0;
	unsigned seen;
	long len;

	if ((rc = cgroup_leaf_make(ctx->cgroup, ctx->confine->rule->ceiling, &leaf, name,
				   sizeof(name), why, n)) < 0)
		return rc;
	if (ctx->factory_pid == 0) {
		if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0) {
			rc = iso_why_errno(why, n, "reaper factory socketpair");
			goto fail;
		}
		if ((ctx->factory_pid = fork()) == 0)
			factory_main(ctx, sp[1]);
		close(sp[1]);
		if (ctx->factory_pid < 0) {
			ctx->factory_pid = 0;
			close(sp[0]);
			rc = iso_why_errno(why, n, "fork of the reaper factory");
			goto fail;
		}
		ctx->factory_fd = sp[0];
	}
	out = (struct iso_wire_msg){ .type = ISO_MSG_CLONE };
	len = iso_wire_encode(&out, buf, sizeof(buf));
	if (iso_send_fds(ctx->factory_fd, buf, (size_t)len, 0, &leaf, leaf >= 0) != len ||
	    (len = iso_recv_fds(ctx->factory_fd, buf, sizeof(buf), 0, fds, 2, &nfds, &seen)) <= 0 ||
	    iso_wire_decode(buf, (size_t)len, &in, NULL, 0) < 0) {
		iso_close_fds(fds, nfds);
		drop_child(&ctx->factory_pid, ctx->factory_fd, -1);
		rc = iso_why(why, n, EPIPE, "the reaper factory went");
		goto fail;
	}
	if (in.type != ISO_MSG_CLONED || nfds != 2) {
		iso_close_fds(fds, nfds);
		rc = iso_why(why, n, in.type == ISO_MSG_REFUSED ? (int)in.u.refused.err : EIO,
			     "clone3 of a reaper");
		goto fail;
	}
	ctx->spare.pid = (pid_t)in.u.cloned.pid;
	ctx->spare.pidfd = fds[0];
	ctx->spare.report_fd = fds[1];
	ctx->spare.cgroup_fd = leaf;
	snprintf(ctx->spare.cgroup, sizeof(ctx->spare.cgroup), "%s", name);
	return 0;
fail:
	cgroup_leaf_remove(ctx->cgroup, &leaf, name);
	return rc;
}

int spawn_init(struct iso_spawn_ctx *ctx, const struct iso_confine *confine,
	       const struct iso_world *world, const struct iso_cgroup *cgroup, char *why, size_t n)
{
	ctx->confine = confine;
	ctx->world = world;
	ctx->cgroup = cgroup;
	ctx->devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
	ctx->helper_pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
	/* Random: no other connection's is the same (0: none, always sweep). */
	if (getrandom(&ctx->given.mark, sizeof(ctx->given.mark), GRND_NONBLOCK) < 0)
		ctx->given.mark = 0;
	if (ctx->devnull < 0 || ctx->helper_pidfd < 0)
		return iso_why_errno(why, n, "/dev/null or pidfd_open");
	return 0;
}

/* Everything the guest started is gone: its record (loop.c) leaves the
 * lease file, and the uid and the caller's slot are given back, so that a
 * guest whose end was told never makes a later spawn fail. The uid is the
 * connection's next guest's if no other helper takes it meanwhile
 * (struct iso_given_uids). */
static void lease_put(struct iso_spawn_ctx *ctx, struct iso_lease *lease)
{
	lease_release(lease, &ctx->given);
	lease->lock_fd = -1;
}

/*
 * The caller's end of the channel the reaper made as the guest (CHANNEL,
 * with it). If the guest never made it, the reaper's CHANNEL comes
 * without one: the caller then gets an end whose peer is already gone, as
 * it would had the guest closed the channel at once.
 */
static int take_channel(int report_fd, int kind, int *chan, char *why, size_t n)
{
	uint8_t buf[SMALL_MSG];
	int pair[2];
	size_t nfds = 0;
	unsigned seen;
	ssize_t len;

	while ((len = iso_recv_fds(report_fd, buf, sizeof(buf), 0, chan, 1, &nfds, &seen)) ==
	       -EINTR)
		;
	if (len <= 0 || iso_wire_decode(buf, (size_t)len, &in, NULL, 0) < 0 ||
	    in.type != ISO_MSG_CHANNEL) {
		iso_close_fds(chan, nfds);
		return iso_why(why, n, EIO, "the reaper did not hand over the channel");
	}
	if (nfds == 1)
		return 0;
	if (socketpair(AF_UNIX, channel_type(kind) | SOCK_CLOEXEC, 0, pair) < 0)
		return iso_why_errno(why, n, "channel socketpair");
	close(pair[1]);
	*chan = pair[0];
	return 0;
}

/* The request's descriptors (stdio as they came, then the grants', then
 * the passed ones) in the plan's order, into order[]. */
static size_t plan_fds(const struct iso_plan *plan, const int *fds, size_t nfds, int *order)
{
	size_t nstdio = (size_t)__builtin_popcount(plan->stdio_mask), k = 0;

	for (size_t i = 0; i < nstdio; i++)
		order[k++] = fds[i];
	for (size_t t = 0; t < plan->ngrants; t++)
		order[k++] = fds[nstdio + plan->grants[t].fd_index];
	for (size_t i = 0; i < plan->npass; i++)
		order[k++] = fds[nfds - plan->npass + i];
	return k;
}

/* Hand the spare its guest, the encoded plan and its descriptors: the
 * spare becomes the child's reaper. 0, or -EPIPE when the spare went
 * (killed, say). */
static int use_spare(struct iso_spawn_ctx *ctx, const uint8_t *plan, size_t len, const int *fds,
		     size_t nfds, struct iso_child *child)
{
	if (iso_send_fds(ctx->spare.report_fd, plan, len, 0, fds, nfds) < 0) {
		drop_spare(ctx);
		return -EPIPE;
	}
	ctx->spare.lease = child->lease;
	*child = ctx->spare;
	ctx->spare.pid = 0;
	return 0;
}

int spawn_start(struct iso_spawn_ctx *ctx, const struct iso_plan *plan, int slot_fd, const int *fds,
		size_t nfds, struct iso_child *child, int *client_chan, char *why, size_t n)
{
	static uint8_t buf[ISO_WIRE_MAX];
	struct iso_wire_exited gone;
	int order[ISO_FDS_MAX];
	size_t norder = plan_fds(plan, fds, nfds, order);
	long len;
	int rc = 0;

	*client_chan = -1;
	child->lease.slot_fd = slot_fd;
	rc = lease_acquire(ctx->confine->rule, ctx->caller, &child->lease, &ctx->given, why, n);
	if (rc < 0)
		return rc;
	out.type = ISO_MSG_PLAN;
	out.id = 0;
	plan_to_wire(plan, child->lease.uid, &out.u.plan);
	/* The request fitted; the whole environment may not. */
	if ((len = iso_wire_encode(&out, buf, sizeof(buf))) < 0)
		rc = iso_why(why, n, (int)-len,
			     "the request and the guest's whole environment "
			     "are over %d bytes",
			     ISO_WIRE_MAX);
	/* The spare, or when none was ready (or it went) one cloned now,
	 * takes the plan, its cgroup bounded first as the plan says where it
	 * asks for less than the rule (a spare bounded for no guest goes). */
	for (int tries = 0; rc == 0; tries++) {
		if (ctx->spare.pid == 0 && (rc = clone_reaper(ctx, why, n)) < 0)
			break;
		if ((rc = cgroup_leaf_limits(ctx->cgroup, ctx->spare.cgroup_fd, plan->limits,
					     ctx->confine->rule->ceiling, why, n)) < 0)
			drop_spare(ctx);
		else if (use_spare(ctx, buf, (size_t)len, order, norder, child) == 0)
			break;
		else if (tries == 1)
			rc = iso_why(why, n, EPIPE, "the reaper went before its plan");
	}
	if (rc < 0) {
		lease_put(ctx, &child->lease);
		return rc;
	}
	if (plan->channel &&
	    (rc = take_channel(child->report_fd, plan->channel, client_chan, why, n)) < 0) {
		/* The reaper goes, and with it what it started. */
		spawn_kill(child);
		spawn_end(ctx, child, 0, &gone);
		return rc;
	}
	return 0;
}

void spawn_spare(struct iso_spawn_ctx *ctx)
{
	/* Quietly: no reason is formatted. */
	if (ctx->spare.pid == 0)
		(void)clone_reaper(ctx, NULL, 0);
}

int spawn_report(struct iso_spawn_ctx *ctx, struct iso_child *child, uint32_t id,
		 struct iso_wire_exited *ex)
{
	uint8_t buf[SMALL_MSG];
	char qwhy[4 * sizeof(child->reason)];
	ssize_t got;

	while ((got = recv(child->report_fd, buf, sizeof(buf), 0)) < 0 && errno == EINTR)
		;
	if (got <= 0 || iso_wire_decode(buf, (size_t)got, &in, NULL, 0) < 0 ||
	    in.type != ISO_MSG_EXITED)
		return -EIO;
	*ex = in.u.exited;
	ex->reason = NULL;
	if (ex->outcome == ISO_OUTCOME_FAILED) {
		/* A failure to start: logged, its reason stored in child. */
		snprintf(child->reason, sizeof(child->reason), "%s",
			 in.u.exited.reason ? in.u.exited.reason : "");
		iso_quote(qwhy, sizeof(qwhy), child->reason);
		log_event(LOG_NOTICE,
			  "start-failed id=%u guest_uid=%u stage=%s errno=%u reason=\"%s\"", id,
			  (unsigned)child->lease.uid, iso_stage_name(ex->stage), ex->code, qwhy);
		ex->reason = child->reason;
	}
	child->reported = 1;
	/* The reaper killed and reaped all of its namespace before it wrote
	 * this (it is root's, so nothing of the uid is left): only the
	 * reaper is left in its cgroup, and the uid may serve the next guest
	 * while the namespaces are torn down. */
	cgroup_leaf_count(child->cgroup_fd, ex);
	lease_put(ctx, &child->lease);
	return 0;
}

void spawn_end(struct iso_spawn_ctx *ctx, struct iso_child *child, uint32_t id,
	       struct iso_wire_exited *ex)
{
	struct rusage ru = { 0 };
	int status = 0;

	while (wait4(child->pid, &status, 0, &ru) < 0 && errno == EINTR)
		;
	if (!child->reported && spawn_report(ctx, child, id, ex) < 0) {
		/* The reaper died without a report: killed, with its guest,
		 * by a kill request, the client's going or the OOM killer. */
		*ex = (struct iso_wire_exited){ .outcome = ISO_OUTCOME_SIGNALED,
						.stage = ISO_STAGE_NONE };
		ex->code = WIFSIGNALED(status) ? (uint32_t)WTERMSIG(status) : SIGKILL;
		take_usage(&ru, ex);
		cgroup_kill(child->cgroup_fd);
		cgroup_leaf_count(child->cgroup_fd, ex);
		lease_put(ctx, &child->lease);
	}
	cgroup_leaf_remove(ctx->cgroup, &child->cgroup_fd, child->cgroup);
	close(child->pidfd);
	close(child->report_fd);
}

void spawn_kill(struct iso_child *child)
{
	(void)syscall(SYS_pidfd_send_signal, child->pidfd, SIGKILL, NULL, 0);
	cgroup_kill(child->cgroup_fd);
}

void spawn_release(struct iso_spawn_ctx *ctx)
{
	if (ctx->spare.pid > 0)
		drop_spare(ctx);
	if (ctx->factory_pid > 0)
		drop_child(&ctx->factory_pid, ctx->factory_fd, -1);
}
