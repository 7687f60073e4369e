/*
 * isospawn.h - start untrusted guest programs through the isospawn helper.
 *
 * The library talks to a setuid-root helper (isospawn-helper(8)) over a
 * socketpair. The helper validates each request against the administrator's
 * policy (isospawn.conf(5)), builds the guest environment from an allow-list,
 * runs the guest under a leased pool uid and confines it.
 *
 * Conventions (libisospawn(3) has the long form):
 *  - Every function that can fail returns 0 (or a documented non-negative
 *    result) on success and a negative errno value on failure. The set of
 *    errno values each function can return is listed beside it; no other
 *    value escapes.
 *  - After a failure, iso_last_error() describes it in one line (for refusals,
 *    the helper's reason, e.g. "override LD_PRELOAD: loader variable not
 *    allowed by policy rule at /etc/isospawn.conf:12").
 *  - Strings and arrays passed in are copied; the library never takes
 *    ownership of caller memory or caller file descriptors.
 *  - Thread safety: an iso_conn and everything created from it (specs are
 *    independent) may be used by one thread at a time; distinct connections
 *    may be used concurrently from different threads. iso_build_env(),
 *    iso_strerror() and iso_last_error() are safe from any thread. The
 *    descriptors iso_conn_fd() and iso_channel_fd() return stay the same
 *    for the handle's life, so any thread may poll() them while another
 *    thread uses the connection.
 */
#ifndef ISOSPAWN_H
#define ISOSPAWN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(ISO_BUILDING_LIBRARY)
#define ISO_PUBLIC __attribute__((visibility("default")))
#else
#define ISO_PUBLIC
#endif

#define ISO_VERSION_MAJOR 0
#define ISO_VERSION_MINOR 1

/* Opaque handles. */
typedef struct iso_conn iso_conn; /* a connection to one helper process */
typedef struct iso_spec iso_spec; /* what to run, and how */
typedef struct iso_guest iso_guest; /* one spawned guest */

/* ------------------------------------------------------------------ */
/* Errors                                                               */

/*
 * The message for the most recent failure of an iso_ function in the calling
 * thread. Never NULL. Thread-local storage owned by the library: valid until
 * the next iso_ call in the same thread.
 */
ISO_PUBLIC const char *iso_last_error(void);

/* strerror(3) for the negative codes this library returns. Static string. */
ISO_PUBLIC const char *iso_strerror(int code);

/* ------------------------------------------------------------------ */
/* The environment builder                                              */

/*
 * Names forwarded from the caller's environment when set there. PATH is never
 * forwarded: the guest gets ISO_GUEST_PATH unless an explicit override sets
 * it (see ISO_ENV_PROGRAMS_RESTRICTED).
 */
#define ISO_FORWARDED_NAMES                                                          \
	"PYTHONPATH", "PYTHONHOME", "LD_LIBRARY_PATH", "LANG", "LC_ALL", "LC_CTYPE", \
	    "PYTHONIOENCODING", "PYTHONUTF8", "TMPDIR"
#define ISO_GUEST_PATH "/usr/local/bin:/usr/bin:/bin"

/* Bounds shared with the helper (isospawn.conf(5), libisospawn(3)). */
#define ISO_ENV_NAME_MAX 255 /* bytes in a variable name */
#define ISO_ENV_VALUE_MAX 32768 /* bytes in a variable value */
#define ISO_ENV_OVERRIDES_MAX 128 /* overrides in one request */

/*
 * Administrator-controlled narrowing of the environment rules. Every member
 * may be NULL, meaning the default. Arrays are NULL-terminated.
 */
struct iso_env_rules {
	/* Names forwarded from the source; must be a subset of
	 * ISO_FORWARDED_NAMES. NULL = all of ISO_FORWARDED_NAMES. */
	const char *const *forward;
	/* Names allowed as overrides. NULL = any well-formed, safe name. */
	const char *const *overrides;
	/* Loader-level (glibc secure-mode) names allowed as overrides.
	 * NULL = none. */
	const char *const *unsafe_allowed;
};

/* Flags for iso_build_env(). */
enum {
	/* A source name outside ISO_FORWARDED_NAMES is an error (-EPERM),
	 * and a malformed or repeated entry too (-EINVAL), instead of being
	 * silently skipped; a name rules->forward excludes is still withheld,
	 * as the client cannot know the policy. The helper uses this: what
	 * the client forwards must already be allow-listed. */
	ISO_ENV_STRICT_SOURCE = 1u << 0,
	/* The policy restricts which programs run (a `programs` list, not
	 * `any`): PATH and the names that make an interpreter or tool run
	 * code of the caller's choosing (BASH_ENV, ENV, SHELLOPTS, BASHOPTS,
	 * PS4, IFS, PERL5LIB, PERL5OPT, PERLLIB, PYTHONSTARTUP,
	 * PYTHONINSPECT, PYTHONUSERBASE, RUBYLIB, RUBYOPT, NODE_OPTIONS,
	 * NODE_PATH, JAVA_TOOL_OPTIONS, _JAVA_OPTIONS, CLASSPATH, GIT_CONFIG*,
	 * TERMINFO, TERMINFO_DIRS) are refused as overrides (-EPERM) unless
	 * rules->overrides lists them by name. The helper sets this itself. */
	ISO_ENV_PROGRAMS_RESTRICTED = 1u << 1,
};

/*
 * Build a guest environment, from nothing:
 *   1. the forwarded names (rules->forward) whose values are set in
 *      `source` (an environ-style "NAME=value" array, may be NULL);
 *   2. PATH=ISO_GUEST_PATH, whatever the source says;
 *   3. `overrides` ("NAME=value", may be NULL), merged last so an explicit
 *      value wins (PATH included), each validated: well-formed name (at
 *      most ISO_ENV_NAME_MAX bytes), value at most ISO_ENV_VALUE_MAX bytes,
 *      not a loader-level name unless rules->unsafe_allowed lists it,
 *      within rules->overrides, given once only, not PATH or a code hook
 *      under ISO_ENV_PROGRAMS_RESTRICTED unless rules->overrides lists it.
 * Forwarded and override values are checked too: no value may begin with
 * "()" (a shell function definition); locale, encoding and TERM values may
 * not contain '/', '%' or ".."; TMPDIR must be an absolute path without a
 * ".." component; TZ (after an optional leading ':') must be printable
 * without spaces, have no ".." component, be shorter than 4096 bytes and,
 * when absolute, lie beneath /usr/share/zoneinfo/.
 * Pure: reads only its arguments, writes only *out and why.
 *
 * On success *out is a NULL-terminated "NAME=value" array in one
 * allocation: release it with free(*out). On failure *out is NULL, nothing
 * is half-built, and `why` (if not NULL) receives a message naming the
 * variable.
 *
 * Returns 0; -EINVAL malformed name or value; -EPERM a name the rules do not
 * allow; -E2BIG too many overrides or a value too long; -ENOMEM.
 */
ISO_PUBLIC int iso_build_env(const char *const *source, const char *const *overrides,
			     const struct iso_env_rules *rules, unsigned flags, char ***out,
			     char *why, size_t why_size);

/* ------------------------------------------------------------------ */
/* Connections                                                          */

/*
 * Connect to a helper: the socket-activated one (isospawn.socket, the only
 * way in for a caller with no_new_privs) when /run/isospawn.sock answers,
 * else the setuid helper, started here (fork+exec of the compiled-in path
 * with an empty environment). ISOSPAWN_SOCKET or ISOSPAWN_HELPER in the
 * caller's environment names the one socket or helper to use instead,
 * unless the caller is itself setuid. The helper checks the policy and the
 * caller once, so a caller no rule admits is refused here.
 * On success *out is a new connection; release it with iso_close().
 * Returns 0; -EACCES the helper refused the caller (iso_last_error() says
 * why); -EAGAIN the caller has as many connections open as its rule allows
 * (its "guests" + 1); -ENOENT the helper is missing; -EPROTO the helper
 * spoke another protocol; -ENOMEM; -EMFILE; -EIO the helper failed.
 */
ISO_PUBLIC int iso_open(iso_conn **out);

/*
 * iso_open(), but where the caller has as many connections open as its
 * rule allows, wait up to `wait_ms` milliseconds (0: not at all) for one
 * of them to close instead of failing with -EAGAIN at once. The wait
 * blocks the calling thread; the helper sleeps meanwhile, holding no uid
 * and no guest slot. At most as many connections of one caller wait as it
 * may have open: beyond that, and when no connection closed in time,
 * -EAGAIN (iso_last_error() says which). Returns what iso_open() does.
 */
ISO_PUBLIC int iso_open_wait(iso_conn **out, uint64_t wait_ms);

/*
 * Kill every guest of this connection, stop the helper and free `conn` and
 * every iso_guest made from it. NULL is accepted. It waits for the helper
 * through its pidfd: a caller that reaped it already (waitpid(-1) in a
 * SIGCHLD handler) loses no other child whose pid it got since.
 */
ISO_PUBLIC void iso_close(iso_conn *conn);

/* The helper's Landlock ABI (0 = none) as it reported at iso_open(). */
ISO_PUBLIC int iso_conn_landlock_abi(const iso_conn *conn);

/*
 * The connection's socket, for callers with their own event loop (an
 * asyncio loop, a thread that waits for several guests): it polls readable
 * (POLLIN) when the helper has sent something, such as a guest's end,
 * which iso_wait(guest, 0) then collects. Readable does not mean that a
 * given guest has ended: call iso_wait(guest, 0) and poll again when it
 * returns 1. Only poll it: do not read, write or close it. Owned by the
 * connection, closed by iso_close(); the same value for the connection's
 * life (see Thread safety above). Always a valid descriptor.
 */
ISO_PUBLIC int iso_conn_fd(const iso_conn *conn);

/* ------------------------------------------------------------------ */
/* Spawn specifications                                                 */

/* Returns 0; -ENOMEM. Release with iso_spec_free() (NULL accepted). */
ISO_PUBLIC int iso_spec_new(iso_spec **out);
ISO_PUBLIC void iso_spec_free(iso_spec *spec);

/*
 * The program to run: an absolute path without "." or ".." components
 * (copied). Required. argv defaults to { path }.
 * Returns 0; -EINVAL; -ENAMETOOLONG; -ENOMEM.
 */
ISO_PUBLIC int iso_spec_set_program(iso_spec *spec, const char *path);

/* The guest's argv including argv[0], NULL-terminated (copied); NULL
 * restores the default { program }.
 * Returns 0; -EINVAL empty (no argv[0]); -E2BIG more than ISO_ARGS_MAX
 * entries or too long; -ENOMEM. */
ISO_PUBLIC int iso_spec_set_argv(iso_spec *spec, const char *const *argv);
#define ISO_ARGS_MAX 1024

/*
 * Where the forwarded names are taken from: an environ-style array (copied
 * at this call). Not calling this means the process environment at
 * iso_spawn() time. NULL means forward nothing.
 * Returns 0; -ENOMEM.
 */
ISO_PUBLIC int iso_spec_set_source_env(iso_spec *spec, const char *const *envp);

/* Add an explicit override NAME=value (copied). The name is checked here
 * for form; policy is checked by the helper. Setting a name twice replaces
 * the value. Returns 0; -EINVAL; -E2BIG; -ENOMEM. */
ISO_PUBLIC int iso_spec_set_env(iso_spec *spec, const char *name, const char *value);

/*
 * The guest's standard input, output and error: caller fds, -1 for
 * /dev/null. Not owned: the library duplicates them into the request when
 * iso_spawn() runs. Default: all three /dev/null.
 * Returns 0; -EBADF.
 */
ISO_PUBLIC int iso_spec_set_stdio(iso_spec *spec, int in_fd, int out_fd, int err_fd);

/* Resource limits; each is refused by the helper, with its name, if above
 * the policy's ceiling. Values: seconds (CPU), bytes (AS, FSIZE, STACK,
 * SCRATCH, SHM, MEMORY), counts (NOFILE, NPROC, PIDS), thousandths of a
 * CPU (CPUS: 1500 is 1.5 CPUs). SCRATCH and SHM are the sizes of the
 * guest's /tmp and /dev/shm (tmpfs); MEMORY, PIDS and CPUS bound the whole
 * guest, every process it starts, through its cgroup (cgroup v2:
 * memory.max with no swap, pids.max, cpu.max), where the helper has one
 * (iso_guest_notes() names what it lacks); the others are rlimits. */
enum iso_limit {
	ISO_LIMIT_CPU = 0,
	ISO_LIMIT_AS,
	ISO_LIMIT_NOFILE,
	ISO_LIMIT_NPROC,
	ISO_LIMIT_FSIZE,
	ISO_LIMIT_STACK,
	ISO_LIMIT_SCRATCH,
	ISO_LIMIT_SHM,
	ISO_LIMIT_MEMORY,
	ISO_LIMIT_PIDS,
	ISO_LIMIT_CPUS,
	ISO_LIMIT_COUNT
};
/* Returns 0; -EINVAL unknown limit. */
ISO_PUBLIC int iso_spec_set_limit(iso_spec *spec, enum iso_limit which, uint64_t value);
/* "cpu", "as", "nofile", "nproc", "fsize", "stack", "scratch", "shm",
 * "memory", "pids", "cpus"; NULL if unknown. */
ISO_PUBLIC const char *iso_limit_name(enum iso_limit which);
/* The inverse; -EINVAL if unknown. */
ISO_PUBLIC int iso_limit_from_name(const char *name);
/* A limit's value as written by people (the CLI's --limit, isospawn.conf):
 * "unlimited" (UINT64_MAX), a decimal number, or for a limit in bytes a
 * decimal number with one suffix K, M, G or T (powers of 1024); for cpus
 * a number of CPUs with at most three decimals ("1.5" sets 1500). Sets
 * *value and returns 0; -EINVAL anything else (a sign, a space, a suffix
 * on seconds or a count, a fraction elsewhere or finer than 0.001, an
 * unknown limit), -ERANGE above UINT64_MAX. *value is left alone on
 * error. */
ISO_PUBLIC int iso_limit_parse(const char *text, enum iso_limit which, uint64_t *value);

/* Wall-clock timeout in milliseconds; 0 = the policy's default;
 * ISO_TIMEOUT_NONE = none, which the helper refuses (-EACCES) unless the
 * rule sets no ceiling. Returns 0. */
#define ISO_TIMEOUT_NONE UINT64_MAX
ISO_PUBLIC int iso_spec_set_timeout(iso_spec *spec, uint64_t ms);

/*
 * Let iso_spawn() wait up to `ms` milliseconds for one of the caller's
 * slots (its rule's "guests", counted over all its connections) to free
 * up, instead of failing with -EAGAIN at once; 0, the default, does not
 * wait. While it waits, the spawn holds no uid and no slot, and the helper
 * serves the connection's other requests; spawns of one connection that
 * wait start in the order they came. Returns 0.
 */
ISO_PUBLIC int iso_spec_set_wait_slot(iso_spec *spec, uint64_t ms);

enum iso_network {
	ISO_NETWORK_DEFAULT = 0, /* what the policy rule says */
	ISO_NETWORK_NONE, /* loopback only, in its own namespace */
	ISO_NETWORK_HOST, /* the host's network */
};
/* Returns 0; -EINVAL. */
ISO_PUBLIC int iso_spec_set_network(iso_spec *spec, enum iso_network net);

/*
 * Lend the guest a directory or a regular file of the caller's, for reading
 * (or reading and writing), as the policy's "grants" allows. iso_spawn()
 * opens `path` (copied here; a relative one against the working directory
 * then, symbolic links followed) as the caller and hands the helper the
 * descriptor, so the caller lends exactly what it can open itself; the
 * guest finds the object at the same absolute path, symbolic links
 * resolved, and reaches in it what the caller would (it is idmapped: the
 * caller's files are the guest's, what the guest makes there is the
 * caller's, anything else it reaches as a stranger); a read grant is
 * read-only. A grant inside another is mounted on it (the inner one
 * decides there); the same path lent twice the same way counts once, both
 * ways makes iso_spawn() fail with -EINVAL. Returns 0; -EINVAL empty, or
 * 4096 bytes or more; -E2BIG more than ISO_PATHS_MAX of that kind;
 * -ENOMEM.
 */
ISO_PUBLIC int iso_spec_add_read_path(iso_spec *spec, const char *path);
ISO_PUBLIC int iso_spec_add_write_path(iso_spec *spec, const char *path);
#define ISO_PATHS_MAX 32

/* The guest's working directory: an absolute path in normal form in the
 * guest's tree (copied), which the guest itself enters before it runs;
 * NULL restores the default, its own /tmp. Returns 0; -EINVAL; -ENOMEM. */
ISO_PUBLIC int iso_spec_set_cwd(iso_spec *spec, const char *path);

/* Lend `path` for writing, as iso_spec_add_write_path() does, and make it
 * the working directory unless iso_spec_set_cwd() names one (copied; NULL
 * removes it). Returns 0; -EINVAL as iso_spec_add_write_path(); -ENOMEM. */
ISO_PUBLIC int iso_spec_set_workdir(iso_spec *spec, const char *path);

/*
 * Hand the guest one of the caller's open descriptors, at the same number
 * (as Python's subprocess pass_fds): fd 3 to ISO_PASS_FD_LIMIT - 1, not a
 * directory, not 3 with a channel (the guest's channel is fd 3). The guest
 * gets the open file description itself, as it gets its stdio: what the
 * descriptor allows, its uid and confinement do not narrow. Not owned:
 * it must stay open until iso_spawn() returns. Passing the same number
 * twice counts once. Returns 0; -EINVAL out of range or a directory;
 * -EBADF not open; -E2BIG more than ISO_PASS_FDS_MAX.
 */
ISO_PUBLIC int iso_spec_pass_fd(iso_spec *spec, int fd);
#define ISO_PASS_FDS_MAX 16
#define ISO_PASS_FD_LIMIT 1024

/* A channel between the caller and the guest, which gets its end as fd 3
 * and ISOSPAWN_CHANNEL_FD=3: ISO_CHANNEL_MESSAGES (any non-zero value but
 * ISO_CHANNEL_STREAM), messages that keep their boundaries
 * (SOCK_SEQPACKET); ISO_CHANNEL_STREAM, a byte stream (SOCK_STREAM), for
 * protocols that frame their own (length-prefixed, lines); 0, none.
 * Returns 0. */
enum { ISO_CHANNEL_NONE = 0, ISO_CHANNEL_MESSAGES = 1, ISO_CHANNEL_STREAM = 2 };
ISO_PUBLIC int iso_spec_set_channel(iso_spec *spec, int kind);

/* ------------------------------------------------------------------ */
/* Guests                                                               */

/*
 * Ask the helper to start a guest. On success *out is a running guest;
 * release it with iso_guest_free(). A refusal fails the whole spawn: nothing
 * is started. Start-up failures after the helper accepted the request
 * (program not found, not executable, confinement failed) are reported by
 * iso_wait() as ISO_OUTCOME_FAILED, never as an exit code.
 * Returns 0; -EACCES refused by policy, or a grant the caller may not
 * open; -ENOENT, -ELOOP, -ENOTDIR, -ENAMETOOLONG, -EMFILE a grant could
 * not be opened (the caller's own open's error; iso_last_error() names
 * it); -EINVAL malformed request (or a stdio fd closed since
 * iso_spec_set_stdio(), or a grant that is not a directory or a regular
 * file); -E2BIG the request does not fit in one message; -EAGAIN the pool
 * is exhausted, or the caller has as many live guests (over all its
 * connections) as its rule's "guests" allows and none ended within
 * iso_spec_set_wait_slot()'s wait (a guest whose end iso_wait() reported
 * no longer counts); -ENOSYS the kernel
 * lacks a mechanism the policy requires; -EPIPE the helper is gone;
 * -ENOMEM; -EIO.
 */
ISO_PUBLIC int iso_spawn(iso_conn *conn, const iso_spec *spec, iso_guest **out);

/*
 * Wait for the guest to end, at most timeout_ms (-1 = forever, 0 = poll).
 * Returns 0 ended (see the status accessors); 1 still running;
 * -EPIPE the helper is gone; -EINTR.
 */
ISO_PUBLIC int iso_wait(iso_guest *guest, int timeout_ms);

/* Send a signal through the helper. Harmless once the guest has ended
 * (returns 0); cannot reach a recycled pid. Returns 0; -EINVAL bad signal;
 * -EPIPE. */
ISO_PUBLIC int iso_kill(iso_guest *guest, int sig);

/* Release the handle; a guest still running is killed first. NULL ok. */
ISO_PUBLIC void iso_guest_free(iso_guest *guest);

/* The guest's pid as seen from the caller's PID namespace (informational
 * only: signal it with iso_kill()). The leased uid it runs under. */
ISO_PUBLIC pid_t iso_guest_pid(const iso_guest *guest);
ISO_PUBLIC uid_t iso_guest_uid(const iso_guest *guest);

/* What the helper noted when it started the guest, e.g. a degraded mode
 * the policy accepted ("landlock: unavailable, accepted by policy"), or ""
 * when nothing. Owned by the guest handle. */
ISO_PUBLIC const char *iso_guest_notes(const iso_guest *guest);

/* ------------------------------------------------------------------ */
/* Status (valid after iso_wait() returned 0)                          */

enum iso_outcome {
	ISO_OUTCOME_RUNNING = 0,
	ISO_OUTCOME_EXITED, /* code = exit code */
	ISO_OUTCOME_SIGNALED, /* code = signal number */
	ISO_OUTCOME_TIMED_OUT, /* wall-clock timeout; code = SIGKILL */
	ISO_OUTCOME_LIMIT, /* killed by a resource limit (cpu, fsize, or
				* memory: its cgroup's OOM kill); code =
				* signal */
	ISO_OUTCOME_FAILED, /* never started; code = errno */
};
enum iso_stage {
	ISO_STAGE_NONE = 0,
	ISO_STAGE_POLICY,
	ISO_STAGE_CREDENTIALS,
	ISO_STAGE_CONFINEMENT,
	ISO_STAGE_EXEC,
};

ISO_PUBLIC enum iso_outcome iso_guest_outcome(const iso_guest *guest);
/* "running", "exited", "signaled", "timed_out", "limit" or "failed" (the
 * names isospawn --status-json and the helper's log use); NULL if unknown. */
ISO_PUBLIC const char *iso_outcome_name(enum iso_outcome outcome);
/* Exit code, signal number or errno, as the outcome says. */
ISO_PUBLIC int iso_guest_code(const iso_guest *guest);
/* For ISO_OUTCOME_FAILED: the stage that failed. */
ISO_PUBLIC enum iso_stage iso_guest_stage(const iso_guest *guest);
/* "policy", "credentials", "confinement", "exec", or "none". */
ISO_PUBLIC const char *iso_stage_name(enum iso_stage stage);
/* For ISO_OUTCOME_FAILED: the helper's one-line reason, what went wrong at
 * that stage (e.g. "/data/in: No such file or directory"). It
 * names nothing the caller could not know: besides fixed text and the
 * errno's message, only its request's and its rule's paths and the guest's
 * uid. As the helper wrote it: escape control bytes before showing it.
 * NULL for any other outcome. Owned by the guest handle. */
ISO_PUBLIC const char *iso_guest_reason(const iso_guest *guest);
/* For ISO_OUTCOME_LIMIT: which limit. -1 if not known. */
ISO_PUBLIC int iso_guest_limit(const iso_guest *guest);

/* Wall time, user and system CPU in microseconds, peak RSS in KiB, of
 * the processes the guest waited for (rlimit-style accounting: the largest
 * one's RSS). Any pointer may be NULL. */
ISO_PUBLIC void iso_guest_usage(const iso_guest *guest, uint64_t *wall_us, uint64_t *user_us,
				uint64_t *sys_us, uint64_t *maxrss_kib);

/*
 * What the guest's own cgroup counted of the whole guest, every process it
 * started (those it never waited for too): its CPU time, user and system,
 * in microseconds (cpu.stat usage_usec), and its peak memory in bytes
 * (memory.peak: what it held at most, its /tmp and /dev/shm included; 0
 * where the kernel lacks it, before Linux 5.19, or without the memory
 * controller). Any pointer may be NULL. Returns 0; -ENODATA the guest ran
 * without a cgroup (iso_guest_notes() says why): both are then 0.
 */
ISO_PUBLIC int iso_guest_cgroup_usage(const iso_guest *guest, uint64_t *cpu_us,
				      uint64_t *memory_peak);

/* The limits the guest reached and was not ended by, as bits (1u << enum
 * iso_limit): ISO_LIMIT_PIDS when a fork (or a thread) of the guest failed
 * at its pids limit. 0 when none, or without a cgroup. */
ISO_PUBLIC unsigned iso_guest_limits_reached(const iso_guest *guest);

/*
 * The env(1)/timeout(1)-style exit code: the guest's own code; 128+N when
 * killed by signal N; 124 timeout; 126 the program found but not
 * executable; 127 the program not found; 125 any other failure.
 */
ISO_PUBLIC int iso_guest_exit_code(const iso_guest *guest);

/* ------------------------------------------------------------------ */
/* Channel (only for specs with iso_spec_set_channel())                */

#define ISO_MESSAGE_MAX 65536 /* bytes in one message the caller sends */

/* The caller's end of the channel (SOCK_SEQPACKET, or SOCK_STREAM for
 * ISO_CHANNEL_STREAM), for callers with their own event loop; owned by the
 * guest handle (set O_NONBLOCK or SO_SNDTIMEO on it as iso_send() says,
 * nothing else). -1 without a channel. */
ISO_PUBLIC int iso_channel_fd(const iso_guest *guest);

/*
 * Send one message; on a stream channel, write all of buf (any length; 0
 * writes nothing), in order, waiting as below until the last byte is
 * written. It waits while the channel is full: the messages the
 * guest has not read yet fill the caller's end's send buffer (SO_SNDBUF,
 * net.core.wmem_default: at 208 KiB, four messages of ISO_MESSAGE_MAX or
 * a few hundred small ones). The wait ends when the guest reads, or with
 * -EPIPE when its end closes (the guest ended: at its timeout, if it has
 * one), so a guest that never reads and has no timeout holds it for ever.
 * Not to wait: set O_NONBLOCK on iso_channel_fd() (fcntl(2)), and a full
 * channel returns -EAGAIN at once; SO_SNDTIMEO on it bounds the wait. Once
 * poll(2) reports POLLOUT on iso_channel_fd(), one iso_send() does not
 * wait (unless another thread sent in between); on a stream channel,
 * -EAGAIN means nothing was written, and once a byte was it waits for the
 * rest.
 * Returns 0; -EINVAL len 0 on a message channel (an empty message would be
 * read as end of channel); -EMSGSIZE a message over ISO_MESSAGE_MAX;
 * -EAGAIN the channel is full and O_NONBLOCK or SO_SNDTIMEO said not to
 * wait (longer); -ENOTCONN no channel; -EPIPE the guest closed its end.
 */
ISO_PUBLIC int iso_send(iso_guest *guest, const void *buf, size_t len);

enum { ISO_RECV_TIMEOUT = -1000, ISO_RECV_EOF = -1001 };
/*
 * Receive one message into buf (cap bytes), waiting at most timeout_ms
 * (-1 = forever); on a stream channel, what has arrived, up to cap bytes.
 * Returns its length (> 0); ISO_RECV_TIMEOUT when nothing arrived in time
 * (not an error); ISO_RECV_EOF when the guest closed its end (a
 * zero-length message from the guest reads as this too); -EMSGSIZE the
 * message is larger than cap: it stays, for a call with a buffer as large
 * as iso_last_error() says (a guest may send more than ISO_MESSAGE_MAX);
 * -ENOTCONN. With cap 0 (buf may be NULL) nothing is taken: it returns the
 * length of the next message, or on a stream channel how many bytes wait.
 */
ISO_PUBLIC long iso_recv(iso_guest *guest, void *buf, size_t cap, int timeout_ms);

#ifdef __cplusplus
}
#endif
#endif /* ISOSPAWN_H */
