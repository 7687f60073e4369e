/*
 * bench.c - what a spawn through isospawn costs, next to raw posix_spawn and
 * to other sandboxing tools; how that grows with concurrent clients, live
 * guests and big requests; and what its message channel costs next to a
 * plain socketpair.
 *
 *   isospawn-bench [-n N] [-m MODES] [-d SECONDS] [-o PREFIX]
 *                                          (as root; `make bench` runs it)
 *
 * It installs the test helper and policy (tests/install.c), then measures
 * each mode in a forked child: the isospawn modes and the posix_spawn
 * baseline as an unprivileged caller, as the live tests do, the other tools
 * as root, as they need here. Each spawn of /bin/true is timed on its own
 * (CLOCK_MONOTONIC), after untimed warm-up runs.
 *
 * A mode is one row of the table below (modes[]): a key for -m, a label,
 * the uid it runs as and a measure function that times one run after
 * another with time_runs(). The same function serves the scaling table:
 * there time_runs() waits for a common start and counts runs until the
 * window closes, in 1, 2, 4, 8 and 16 such clients at once.
 *
 * The output is Markdown on stdout; with -o, the same rows as PREFIX.csv
 * and every timing as PREFIX-samples.csv, which bench/plot draws.
 *
 * The Python rows (p, s) are timed inside the interpreter, by
 * bench/bench_python.py, which this program runs as the caller; p's spawns
 * alternate with mode 3's C calls, one by one.
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "install.h"
#include "isospawn.h"
#include "util.h"

extern char **environ;

#define UNUSED __attribute__((unused))

#define DEFAULT_N 300
#define WARMUP 10 /* untimed runs first: page cache, helper heap */
#define RT_COUNT 2000 /* channel round trips */
#define RT_SIZE 64 /* bytes per round-trip message */
#define TP_COUNT 20000 /* channel throughput messages */
#define TP_SIZE 16384 /* bytes per throughput message */
#define TP_WINDOW \
	4 /* in flight: under the kernel's unix datagram
			  * queue length (10), so no side blocks for good */
#define ALL_MODES "lL13CfFnG24m567psaetTgxc" /* t, T: targets in turn; g: live guests; x: scaling */
#define SCALED_MODES "1345" /* the scaling table's columns */
#define DEFAULT_WINDOW_S 2 /* seconds each scaling point runs */
#define BIG_ARGC 1000 /* argv entries of the big request */
#define BIG_OVERRIDES 128 /* overrides of the big request ... */
#define BIG_VALUE \
	1000 /* ... of this many bytes each: all 128
				    * fit the 128 KiB datagram */

static const unsigned client_counts[] = { 1, 2, 4, 8, 16 };
static const unsigned guest_counts[] = { 0, 100, 1000 };

/* What a measuring child hands back, through shared memory. */
struct summary {
	int measured;
	char note[400]; /* why it was skipped, or a remark */
	double median_us, p90_us, mb_per_s;
	double per_s; /* scaling: runs per second of this client */
	long rss_kib[2]; /* live guests: the helper's VmRSS before, after */
};

struct mode {
	char key; /* for -m; 'c' the channel */
	const char *label;
	uid_t uid; /* the measuring child's uid; 0 stays root */
	/* Fills s[0] (spawns, or channel round trips), s[1] (throughput). */
	void (*measure)(const struct mode *m, unsigned n, struct summary *s);
	/* Commands: argv[0] a name or a path; envp NULL: the child's
	 * environment. Library modes: the guest's argv (NULL: /bin/true) and
	 * overrides ("NAME=value"). */
	const char *const *argv;
	const char *const *envp;
};

/* One timed run: 0, or -1 with the reason in s->note. */
typedef int (*run_fn)(const void *ctx, struct summary *s);

__attribute__((format(printf, 2, 3))) static void note(struct summary *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(s->note, sizeof(s->note), fmt, ap);
	va_end(ap);
}

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* Where a measuring child leaves its timings (shared memory, room for
 * samples_cap of them), for the samples file; NULL: nowhere. */
static double *samples_out;
static unsigned samples_cap;

/* The median and the nearest-rank p90 of n times (sorted here); the
 * first summary a child makes also leaves its times in samples_out. */
static void summarize(double *us, unsigned n, struct summary *s)
{
	qsort(us, n, sizeof(*us), by_value);
	s->median_us = n % 2 ? us[n / 2] : (us[n / 2 - 1] + us[n / 2]) / 2;
	s->p90_us = us[(9 * (size_t)n + 9) / 10 - 1]; /* ceil(0.9 n) - 1 */
	s->measured = 1;
	if (samples_out && n <= samples_cap)
		memcpy(samples_out, us, n * sizeof(*us));
	samples_out = NULL;
}

/*
 * The scaling table's clients: each signals `ready` once warm, waits for
 * `go` to reach end of file, then runs until `end_us` (the parent's clock
 * reading, in shared memory: CLOCK_MONOTONIC is system-wide).
 */
static struct {
	int ready, go; /* pipe ends; -1: time runs one by one instead */
	const volatile double *end_us;
} window = { -1, -1, NULL };

static void count_runs(run_fn run, const void *ctx, struct summary *s)
{
	double t0, t1;
	char c = 0;
	long done = 0;

	/* Closed once written: a client that fails before this point exits,
	 * and the parent stops waiting at end of file. */
	if (write(window.ready, &c, 1) != 1 || close(window.ready) < 0 ||
	    read(window.go, &c, 1) != 0) {
		note(s, "lost the start signal");
		return;
	}
	t0 = t1 = now_us();
	while (t1 < *window.end_us) {
		if (run(ctx, s) < 0)
			return;
		done++;
		t1 = now_us();
	}
	s->per_s = (double)done * 1e6 / (t1 - t0);
	s->measured = 1;
}

/* WARMUP untimed runs, then n timed one by one; summarized when every run
 * succeeded (and memory was there). Scaling clients count instead. */
static void time_runs(run_fn run, const void *ctx, unsigned n, struct summary *s)
{
	double *us = calloc(n, sizeof(*us)), t0;
	int i;

	for (i = -WARMUP; us && i < (int)n; i++) {
		if (i == 0 && window.go >= 0)
			break;
		t0 = now_us();
		if (run(ctx, s) < 0)
			break;
		if (i >= 0)
			us[i] = now_us() - t0;
	}
	if (us && i == 0 && window.go >= 0)
		count_runs(run, ctx, s);
	else if (us && i == (int)n)
		summarize(us, n, s);
	free(us);
}

/* One program of a round: what runs it, and its context. */
struct turn {
	run_fn run;
	const void *ctx;
};

/* time_runs() of k programs in turn, run by run, so that on a machine
 * others share all see the same moments: s[j] gets turn j's. */
static void time_rounds(const struct turn *t, size_t k, unsigned n, struct summary *s)
{
	double *us = calloc(k * (size_t)n, sizeof(*us)), t0;
	int i;
	size_t j = 0;

	for (i = -WARMUP; us && i < (int)n; i++) {
		for (j = 0; j < k; j++) {
			t0 = now_us();
			if (t[j].run(t[j].ctx, &s[j]) < 0)
				break;
			if (i >= 0)
				us[j * n + (unsigned)i] = now_us() - t0;
		}
		if (j < k)
			break;
	}
	for (j = 0; us && i == (int)n && j < k; j++)
		summarize(us + j * n, n, &s[j]);
	free(us);
}

/* time_rounds() of two contexts of one run_fn: s[0] gets a's, s[1] b's. */
static void time_pair(run_fn run, const void *a, const void *b, unsigned n, struct summary s[2])
{
	const struct turn t[2] = { { run, a }, { run, b } };

	time_rounds(t, 2, n, s);
}

/* Become uid (gid = uid, no supplementary groups) for good, with the test
 * helper as the library's helper: what tests/harness.c become() does. */
static int become(uid_t uid, struct summary *s)
{
	if (setgroups(0, NULL) < 0 || setresgid(uid, uid, uid) < 0 ||
	    setresuid(uid, uid, uid) < 0 || geteuid() != uid) {
		note(s, "cannot become uid %u: %s", (unsigned)uid, strerror(errno));
		return -1;
	}
	setenv("ISOSPAWN_HELPER", T_HELPER, 1);
	return 0;
}

/* 1: the baseline, nothing between the caller and the kernel. */
static int run_posix_spawn(UNUSED const void *ctx, struct summary *s)
{
	static const char *const argv[] = { "/bin/true", NULL };
	int status;
	pid_t pid;

	if (posix_spawn(&pid, argv[0], NULL, NULL, (char *const *)argv, environ) != 0 ||
	    waitpid(pid, &status, 0) != pid || status != 0) {
		note(s, "posix_spawn /bin/true failed");
		return -1;
	}
	return 0;
}

static void measure_posix_spawn(const struct mode *m, unsigned n, struct summary *s)
{
	time_runs(run_posix_spawn, m, n, s);
}

/*
 * f, F (root): the floor under any design whose guest has a reaper of its
 * own as pid 1 of new PID, IPC and mount namespaces, with no isospawn code:
 * a reaper cloned into them vforks and execs /bin/true, waits for it and
 * exits. f's reaper is a fork, as isospawn's is; F's shares the caller's
 * memory (CLONE_VM) while the caller waits, which shows what a reaper that
 * copied nothing would leave. Neither drops privileges or confines.
 */
static char floor_stack[64 * 1024] __attribute__((aligned(16)));

static int floor_reaper(UNUSED void *arg)
{
	static const char *const argv[] = { "/bin/true", NULL };
	int status;
	pid_t pid = vfork();

	if (pid == 0) {
		execve(argv[0], (char *const *)argv, environ);
		_exit(127);
	}
	_exit(pid > 0 && waitpid(pid, &status, 0) == pid && status == 0 ? 0 : 1);
}

static int run_floor(const void *ctx, struct summary *s)
{
	int flags = *(const int *)ctx | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWNS | SIGCHLD;
	int status;
	pid_t pid = clone(floor_reaper, floor_stack + sizeof(floor_stack), flags, NULL);

	if (pid < 0 || waitpid(pid, &status, 0) != pid || status != 0) {
		note(s, "the floor's reaper failed: %s", pid < 0 ? strerror(errno) : "exit status");
		return -1;
	}
	return 0;
}

static void measure_floor(const struct mode *m, unsigned n, struct summary *s)
{
	static const int fork_flags = 0, vm_flags = CLONE_VM;

	time_runs(run_floor, m->key == 'F' ? &vm_flags : &fork_flags, n, s);
}

struct library_ctx {
	iso_conn *conn;
	iso_spec *spec;
};

/* Whether run_library's last guest ran in a cgroup of its own. */
static int last_in_cgroup;

/* One iso_spawn + iso_wait: what a service pays per guest. */
static int run_library(const void *ctx, struct summary *s)
{
	const struct library_ctx *lib = ctx;
	iso_guest *guest = NULL;
	int rc = iso_spawn(lib->conn, lib->spec, &guest), failed;

	if (rc < 0) {
		note(s, "iso_spawn: %s (%s)", iso_strerror(rc), iso_last_error());
		return -1;
	}
	rc = iso_wait(guest, -1);
	failed = rc != 0 || iso_guest_exit_code(guest) != 0;
	if (failed)
		note(s, "guest /bin/true: iso_wait %d, exit code %d, stage %s", rc,
		     iso_guest_exit_code(guest), iso_stage_name(iso_guest_stage(guest)));
	else if (!s->note[0] && iso_guest_notes(guest)[0])
		note(s, "helper notes: %s", iso_guest_notes(guest));
	last_in_cgroup = iso_guest_cgroup_usage(guest, NULL, NULL) == 0;
	iso_guest_free(guest);
	return failed ? -1 : 0;
}

/* The mode's overrides ("NAME=value") into spec. 0, or negative. */
static int set_overrides(iso_spec *spec, const char *const *envp)
{
	char name[256];
	const char *eq;
	int rc = 0;

	for (; rc == 0 && envp && *envp; envp++) {
		eq = strchr(*envp, '=');
		snprintf(name, sizeof(name), "%.*s", eq ? (int)(eq - *envp) : 0, *envp);
		rc = iso_spec_set_env(spec, name, eq ? eq + 1 : "");
	}
	return rc;
}

/* One warm connection to `helper`, spawning /bin/true. */
static int open_library(struct library_ctx *lib, const char *helper, struct summary *s)
{
	int rc;

	setenv("ISOSPAWN_HELPER", helper, 1);
	if ((rc = iso_open(&lib->conn)) < 0)
		note(s, "iso_open: %s (%s)", iso_strerror(rc), iso_last_error());
	else if ((rc = iso_spec_new(&lib->spec)) < 0 ||
		 (rc = iso_spec_set_program(lib->spec, "/bin/true")) < 0)
		note(s, "spec: %s", iso_strerror(rc));
	return rc;
}

/* A connection and the spec of the mode's guest; 0, or -1 with a note. */
static int library_open(const struct mode *m, struct library_ctx *lib, struct summary *s)
{
	int rc;

	lib->conn = NULL;
	lib->spec = NULL;
	if ((rc = open_library(lib, T_HELPER, s)) == 0 &&
	    ((rc = iso_spec_set_argv(lib->spec, m->argv)) < 0 ||
	     (rc = set_overrides(lib->spec, m->envp)) < 0))
		note(s, "spec: %s", iso_strerror(rc));
	return rc < 0 ? -1 : 0;
}

static void library_close(struct library_ctx *lib)
{
	iso_spec_free(lib->spec);
	iso_close(lib->conn);
}

/* 2, 3, a, e: one helper started once (untimed), then spawn after spawn
 * of the same spec, as a service would. */
static void measure_library(const struct mode *m, unsigned n, struct summary *s)
{
	struct library_ctx lib;

	if (library_open(m, &lib, s) == 0)
		time_runs(run_library, &lib, n, s);
	library_close(&lib);
}

/* The VmRSS of this process's child `name` (the helper), or -1. */
static long child_rss_kib(const char *name)
{
	char path[300], buf[4096], *at;
	DIR *d = opendir("/proc");
	struct dirent *e;
	long kib = -1;
	FILE *f;
	size_t len;
	int ppid;

	while (d && kib < 0 && (e = readdir(d)) != NULL) {
		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/status", e->d_name);
		if (!(f = fopen(path, "r")))
			continue;
		len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[len] = '\0';
		if (strncmp(buf, "Name:\t", 6) != 0 || strncmp(buf + 6, name, strlen(name)) != 0 ||
		    !(at = strstr(buf, "\nPPid:\t")) || sscanf(at + 7, "%d", &ppid) != 1 ||
		    ppid != getpid() || !(at = strstr(buf, "\nVmRSS:\t")))
			continue;
		kib = strtol(at + 8, NULL, 10);
	}
	if (d)
		closedir(d);
	return kib;
}

static unsigned live_guests; /* for measure_live: how many sleep beside */

/* g: the same spawn as 3, with live_guests sleeping guests on the same
 * connection, and the helper's memory before and after starting them. */
static void measure_live(const struct mode *m, unsigned n, struct summary *s)
{
	static const char *const sleeper[] = { "/bin/sleep", "3600", NULL };
	struct library_ctx lib;
	iso_spec *sleep_spec = NULL;
	iso_guest *g;
	unsigned i = 0;
	int rc = -1;

	if (library_open(m, &lib, s) == 0 &&
	    ((rc = iso_spec_new(&sleep_spec)) < 0 ||
	     (rc = iso_spec_set_program(sleep_spec, sleeper[0])) < 0 ||
	     (rc = iso_spec_set_argv(sleep_spec, sleeper)) < 0))
		note(s, "spec: %s", iso_strerror(rc));
	s->rss_kib[0] = child_rss_kib("isospawn-helper");
	/* The guests stay the connection's: iso_close() ends them. */
	for (; rc == 0 && i < live_guests; i++)
		if ((rc = iso_spawn(lib.conn, sleep_spec, &g)) < 0)
			note(s, "sleeping guest %u: %s (%s)", i + 1, iso_strerror(rc),
			     iso_last_error());
	s->rss_kib[1] = child_rss_kib("isospawn-helper");
	if (rc == 0)
		time_runs(run_library, &lib, n, s);
	iso_spec_free(sleep_spec);
	library_close(&lib);
}

/* A caller of its own, spawning on its warm connection on demand: one
 * byte in, one spawn, 'c' (its guest ran in a cgroup), 'k' (without) or
 * 'f' (it failed, its note in s) back; `cgroup` says which is right. */
struct remote {
	int to, from;
	pid_t pid;
	int cgroup;
};

static int run_remote(const void *ctx, struct summary *s)
{
	const struct remote *r = ctx;
	char c = 'g';

	if (write(r->to, &c, 1) != 1 || read(r->from, &c, 1) != 1 || c == 'f') {
		if (!s->note[0])
			note(s, "the caller of its own went");
		return -1;
	}
	if (c != (r->cgroup ? 'c' : 'k')) {
		note(s, "the guest ran %s a cgroup", r->cgroup ? "without" : "in");
		return -1;
	}
	return 0;
}

static int start_remote(uid_t uid, struct remote *r, struct summary *s)
{
	int in[2], back[2];
	struct library_ctx lib = { NULL, NULL };
	char c;

	if (pipe(in) < 0 || pipe(back) < 0)
		return -1;
	if ((r->pid = fork()) == 0) {
		close(in[1]);
		close(back[0]);
		if (become(uid, s) == 0 && open_library(&lib, T_HELPER, s) == 0)
			while (read(in[0], &c, 1) == 1 && write(back[1],
								run_library(&lib, s) < 0 ? "f"
								: last_in_cgroup         ? "c"
											 : "k",
								1) == 1)
				;
		_exit(0);
	}
	close(in[0]);
	close(back[1]);
	r->to = in[1];
	r->from = back[0];
	return r->pid < 0 ? -1 : 0;
}

/* C: mode 3 with the guest's cgroup (s[0], uid 65534) and without (s[1],
 * its rule's 'cgroup off'), spawn by spawn in turn, each caller on a warm
 * connection of its own. */
static void measure_cgroup_pair(UNUSED const struct mode *m, unsigned n, struct summary *s)
{
	struct remote with = { -1, -1, -1, 1 }, without = { -1, -1, -1, 0 };

	if (start_remote(T_CALLER, &with, &s[0]) == 0 &&
	    start_remote(T_NOCGROUP, &without, &s[1]) == 0)
		time_pair(run_remote, &with, &without, n, s);
	else
		note(s, "pipe or fork: %s", strerror(errno));
	/* Each ends at end of file, once every copy of its pipe's writing
	 * end is closed: the second holds the first's. */
	for (struct remote *r = &without; r; r = r == &without ? &with : NULL)
		if (r->to >= 0)
			close(r->to);
	for (struct remote *r = &without; r; r = r == &without ? &with : NULL) {
		if (r->from >= 0)
			close(r->from);
		if (r->pid > 0)
			waitpid(r->pid, NULL, 0);
	}
}

/* The bench-only helper build without the guest's mount namespace
 * (Makefile.am: bench/isospawn-helper-noworld), installed beside the test
 * helper for this run. */
static char noworld_helper[160];
static char noworld_env[200]; /* "ISOSPAWN_HELPER=" noworld_helper */

/* n: mode 3 without the guest's tree (s[0]), through that helper, and
 * with it (s[1]), spawn by spawn in turn on two warm connections. */
static void measure_library_noworld(UNUSED const struct mode *m, unsigned n, struct summary *s)
{
	struct library_ctx without = { NULL, NULL }, with = { NULL, NULL };

	if (open_library(&without, noworld_helper, s) == 0 && open_library(&with, T_HELPER, s) == 0)
		time_pair(run_library, &without, &with, n, s);
	iso_spec_free(without.spec);
	iso_spec_free(with.spec);
	iso_close(without.conn);
	iso_close(with.conn);
}

/* The caller's own directories that G lends, made by main() as root. */
#define LENT_READ T_SHARED "/bench-read"
#define LENT_WRITE T_SHARED "/bench-write"

/* G: mode 3 with one read and one write grant of the caller's own (s[0])
 * and without (s[1]), spawn by spawn in turn on two warm connections. */
static void measure_library_grants(UNUSED const struct mode *m, unsigned n, struct summary *s)
{
	struct library_ctx lent = { NULL, NULL }, bare = { NULL, NULL };
	int rc;

	if (open_library(&lent, T_HELPER, s) == 0 && open_library(&bare, T_HELPER, s) == 0) {
		if ((rc = iso_spec_add_read_path(lent.spec, LENT_READ)) < 0 ||
		    (rc = iso_spec_add_write_path(lent.spec, LENT_WRITE)) < 0)
			note(s, "grants: %s", iso_strerror(rc));
		else
			time_pair(run_library, &lent, &bare, n, s);
	}
	iso_spec_free(lent.spec);
	iso_spec_free(bare.spec);
	iso_close(lent.conn);
	iso_close(bare.conn);
}

static void remove_noworld_helper(void)
{
	(void)unlink(noworld_helper);
}

#ifdef ISO_PYTHON
/* Start bench/bench_python.py with args as the caller, the module under
 * test installed beside the library (T_LIB); *to_py (if not NULL) and
 * *from_py are pipes to its stdin and from its stdout, its stderr goes to
 * err_fd. Returns its pid, or -1 with the reason in s->note. */
static pid_t start_python(const char *const *args, int *to_py, int *from_py, int err_fd,
			  struct summary *s)
{
	char helper[200];
	const char *argv[8] = { ISO_PYTHON, ISO_SRCDIR "/bench/bench_python.py" };
	const char *envp[] = { "PYTHONPATH=" T_LIB,
			       "LD_LIBRARY_PATH=" T_LIB,
			       "PYTHONDONTWRITEBYTECODE=1",
			       "PATH=/usr/bin:/bin",
			       helper,
			       NULL };
	posix_spawn_file_actions_t fa;
	int in[2] = { -1, -1 }, out[2], rc;
	pid_t pid;

	for (size_t i = 0; args[i] != NULL && i < 5; i++)
		argv[2 + i] = args[i];
	snprintf(helper, sizeof(helper), "ISOSPAWN_HELPER=%s", T_HELPER);
	if ((to_py != NULL && pipe2(in, O_CLOEXEC) < 0) || pipe2(out, O_CLOEXEC) < 0) {
		note(s, "pipe: %s", strerror(errno));
		return -1;
	}
	posix_spawn_file_actions_init(&fa);
	if (to_py != NULL)
		posix_spawn_file_actions_adddup2(&fa, in[0], 0);
	else
		posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
	rc = posix_spawn(&pid, ISO_PYTHON, &fa, NULL, (char *const *)argv, (char *const *)envp);
	posix_spawn_file_actions_destroy(&fa);
	if (to_py != NULL) {
		close(in[0]);
		*to_py = in[1];
	}
	close(out[1]);
	*from_py = out[0];
	if (rc != 0) {
		note(s, "%s: %s", ISO_PYTHON, strerror(rc));
		return -1;
	}
	return pid;
}

/* Wait for the interpreter; 0 if it exited 0, else -1 with its stderr's
 * first line in s->note. */
static int end_python(pid_t pid, int err_fd, struct summary *s)
{
	char err[300] = "";
	int status = -1;
	ssize_t len;

	if (pid > 0)
		waitpid(pid, &status, 0);
	len = pread(err_fd, err, sizeof(err) - 1, 0);
	err[len > 0 ? len : 0] = '\0';
	err[strcspn(err, "\n")] = '\0';
	if (status != 0 && pid > 0)
		note(s, "bench_python.py failed (status 0x%x): %s", (unsigned)status,
		     err[0] ? err : "(no message)");
	return status == 0 ? 0 : -1;
}

/* p: Python's spawn+wait (s[0]) and the C library's (s[1], mode 3's
 * call), spawn by spawn in turn, each on its own warm connection. Python
 * times its own calls: the pipe between is not counted. */
static void measure_python_pair(UNUSED const struct mode *m, unsigned n, struct summary *s)
{
	const char *const args[] = { "isospawn", NULL };
	struct library_ctx lib = { NULL, NULL };
	double *us = calloc(2 * (size_t)n, sizeof(*us)), t0, py;
	int err_fd = memfd_create("python-stderr", MFD_CLOEXEC);
	int to_py = -1, from_py = -1, i = -WARMUP - 1;
	FILE *replies = NULL;
	pid_t pid = -1;

	if (us == NULL || err_fd < 0) {
		note(s, "setting up: %s", strerror(errno));
		goto out;
	}
	if (open_library(&lib, T_HELPER, s) < 0 ||
	    (pid = start_python(args, &to_py, &from_py, err_fd, s)) < 0 ||
	    (replies = fdopen(from_py, "r")) == NULL)
		goto out;
	/* Which goes first alternates too: neither always follows the
	 * other's helper and guest. */
	for (i = -WARMUP; i < (int)n; i++) {
		double c_us = 0;
		int ok = 1;

		for (int k = 0; ok && k < 2; k++) {
			if ((k + i) % 2 == 0) {
				t0 = now_us();
				ok = run_library(&lib, &s[1]) == 0;
				c_us = now_us() - t0;
			} else {
				ok = write(to_py, "\n", 1) == 1 && fscanf(replies, "%lf", &py) == 1;
			}
		}
		if (!ok)
			break;
		if (i >= 0) {
			us[i] = py;
			us[n + (unsigned)i] = c_us;
		}
	}
out:
	if (to_py >= 0)
		close(to_py); /* end of input: the interpreter exits */
	if (replies != NULL)
		fclose(replies);
	else if (from_py >= 0)
		close(from_py);
	if (end_python(pid, err_fd, s) == 0 && i == (int)n) {
		summarize(us, n, &s[0]);
		summarize(us + n, n, &s[1]);
	}
	if (err_fd >= 0)
		close(err_fd);
	iso_spec_free(lib.spec);
	iso_close(lib.conn);
	free(us);
}

/* s: subprocess.run, for reference, timed in a block of its own. */
static void measure_python_batch(UNUSED const struct mode *m, unsigned n, struct summary *s)
{
	char count[16], warmup[16];
	const char *const args[] = { "subprocess", count, warmup, NULL };
	double *us = calloc(n, sizeof(*us));
	int err_fd = memfd_create("python-stderr", MFD_CLOEXEC), from_py = -1;
	FILE *times = NULL;
	unsigned got = 0;
	pid_t pid = -1;

	snprintf(count, sizeof(count), "%u", n);
	snprintf(warmup, sizeof(warmup), "%d", WARMUP);
	if (us == NULL || err_fd < 0)
		note(s, "setting up: %s", strerror(errno));
	else if ((pid = start_python(args, NULL, &from_py, err_fd, s)) > 0 &&
		 (times = fdopen(from_py, "r")) != NULL)
		while (got < n && fscanf(times, "%lf", &us[got]) == 1)
			got++;
	if (times != NULL)
		fclose(times);
	else if (from_py >= 0)
		close(from_py);
	if (end_python(pid, err_fd, s) == 0 && got == n)
		summarize(us, n, s);
	if (err_fd >= 0)
		close(err_fd);
	free(us);
}
#else
static void measure_python_pair(UNUSED const struct mode *m, UNUSED unsigned n, struct summary *s)
{
	note(s, "skipped: the Python module was not built (configure found no "
		"python3 development files)");
}
#define measure_python_batch measure_python_pair
#endif

static char tool_path[4096]; /* the measured command, resolved */

/* Resolve name into tool_path: itself if it has a '/', else from PATH. */
static int find_program(const char *name)
{
	const char *search = getenv("PATH");
	char dirs[4096], *dir, *rest;

	if (strchr(name, '/')) {
		snprintf(tool_path, sizeof(tool_path), "%s", name);
		return access(tool_path, X_OK);
	}
	snprintf(dirs, sizeof(dirs), "%s", search ? search : "/usr/bin:/bin");
	for (dir = strtok_r(dirs, ":", &rest); dir; dir = strtok_r(NULL, ":", &rest)) {
		snprintf(tool_path, sizeof(tool_path), "%s/%s", dir, name);
		if (access(tool_path, X_OK) == 0)
			return 0;
	}
	return -1;
}

/* Run the command with stdin and stdout on /dev/null and stderr on err_fd
 * (/dev/null when -1), and wait. Returns 0 when it exited 0; otherwise -1
 * with `what` and the reason in s->note. */
static int run_command(const struct mode *m, int err_fd, const char *what, struct summary *s)
{
	const char *const *envp = m->envp ? m->envp : (const char *const *)environ;
	posix_spawn_file_actions_t fa;
	int status = 0, rc;
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	if (err_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, err_fd, 2);
	else
		posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	rc = posix_spawn(&pid, m->argv[0][0] == '/' ? m->argv[0] : tool_path, &fa, NULL,
			 (char *const *)m->argv, (char *const *)envp);
	posix_spawn_file_actions_destroy(&fa);
	if (rc == 0 && waitpid(pid, &status, 0) < 0) /* no handlers: no EINTR */
		rc = errno;
	if (rc != 0)
		note(s, "%s: %s", what, strerror(rc));
	else if (status != 0)
		note(s, "%s (%s %d)", what, WIFEXITED(status) ? "exit" : "signal",
		     WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	return rc != 0 || status != 0 ? -1 : 0;
}

static int run_command_once(const void *ctx, struct summary *s)
{
	return run_command(ctx, -1, "a run failed", s);
}

/* 4-7: a command per spawn. The first run's stderr is kept, so that a tool
 * that cannot work here is skipped with its own reason. */
static void measure_command(const struct mode *m, unsigned n, struct summary *s)
{
	char first[300] = "";
	struct stat st;
	ssize_t got;
	int err_fd, rc;

	if (find_program(m->argv[0]) < 0) {
		note(s, "skipped: %s is not installed", m->argv[0]);
		return;
	}
	/* Without a memfd, the message is lost: nothing else is. */
	err_fd = memfd_create("first-stderr", MFD_CLOEXEC);
	rc = run_command(m, err_fd, "skipped: its first run failed", s);
	got = err_fd < 0 ? -1 : pread(err_fd, first, sizeof(first) - 1, 0);
	if (err_fd >= 0)
		close(err_fd);
	first[got > 0 ? got : 0] = '\0';
	first[strcspn(first, "\n")] = '\0';
	if (rc < 0) {
		strlcat(s->note, first[0] ? ": " : ": (no message)", sizeof(s->note));
		strlcat(s->note, first, sizeof(s->note));
		return;
	}
	if (m->uid == 0 && stat(tool_path, &st) == 0)
		note(s, "%s %s", tool_path,
		     st.st_mode & S_ISUID ? "is setuid root; run as root here"
					  : "is not setuid: run as root");
	time_runs(run_command_once, m, n, s);
}

/* Pin this process, and so what it starts (affinity survives fork and exec,
 * setuid too: helper and guest), to its CPU. Wakeups across CPUs cost tens
 * of microseconds on some virtual machines, and the scheduler's placement
 * varies from run to run: unpinned, we would measure the placement. */
static int pin_here(struct summary *s)
{
	int cpu = sched_getcpu();
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu < 0 ? 0 : cpu, &set);
	if (cpu < 0 || sched_setaffinity(0, sizeof(set), &set) < 0) {
		note(s, "cannot pin to one CPU: %s", strerror(errno));
		return -1;
	}
	return 0;
}

/* One end of an echo conversation, so that the isospawn channel and the
 * plain socketpair are measured by the very same code. */
struct endpoint {
	iso_guest *guest; /* the library's channel, or */
	int fd; /* a plain socket */
};

/* 0, or negative on failure. */
static int send_message(const struct endpoint *e, const void *buf, size_t len)
{
	return e->guest                                              ? iso_send(e->guest, buf, len)
	       : send(e->fd, buf, len, MSG_NOSIGNAL) == (ssize_t)len ? 0
								     : -1;
}

/* The message's length, or negative on failure (never EINTR: this
 * program installs no signal handlers). */
static long receive_message(const struct endpoint *e, void *buf, size_t cap)
{
	return e->guest ? iso_recv(e->guest, buf, cap, -1) : (long)recv(e->fd, buf, cap, 0);
}

static char out_buf[TP_SIZE], in_buf[TP_SIZE];

static int round_trip(const void *ctx, struct summary *s)
{
	if (send_message(ctx, out_buf, RT_SIZE) < 0 ||
	    receive_message(ctx, in_buf, sizeof(in_buf)) != RT_SIZE ||
	    memcmp(in_buf, out_buf, RT_SIZE) != 0) {
		note(s, "a round trip failed");
		return -1;
	}
	return 0;
}

static void measure_echo(const struct endpoint *e, struct summary *s)
{
	unsigned sent = 0, received = 0;
	double t0;

	time_runs(round_trip, e, RT_COUNT, &s[0]);
	t0 = now_us();
	while (s[0].measured && received < TP_COUNT) {
		if (sent < TP_COUNT && sent - received < TP_WINDOW) {
			if (send_message(e, out_buf, TP_SIZE) < 0)
				break;
			sent++;
		} else if (receive_message(e, in_buf, sizeof(in_buf)) == TP_SIZE) {
			received++;
		} else {
			break;
		}
	}
	s[1].mb_per_s = (double)TP_COUNT * TP_SIZE / (now_us() - t0);
	s[1].measured = received == TP_COUNT;
	if (s[0].measured && !s[1].measured)
		note(&s[1], "throughput: stopped after %u messages", received);
}

static const char *const probe_echo[] = { T_PROBE, "echo", NULL };

/* `probe echo` behind the isospawn channel, default confinement. */
static void measure_channel_iso(UNUSED const struct mode *m, UNUSED unsigned n, struct summary *s)
{
	struct endpoint e = { .guest = NULL, .fd = -1 };
	iso_conn *conn = NULL;
	iso_spec *spec = NULL;
	int rc;

	if (pin_here(&s[0]) < 0)
		return;
	if ((rc = iso_open(&conn)) < 0 || (rc = iso_spec_new(&spec)) < 0 ||
	    (rc = iso_spec_set_program(spec, T_PROBE)) < 0 ||
	    (rc = iso_spec_set_argv(spec, probe_echo)) < 0 ||
	    (rc = iso_spec_set_channel(spec, 1)) < 0 || (rc = iso_spawn(conn, spec, &e.guest)) < 0)
		note(&s[0], "probe echo: %s (%s)", iso_strerror(rc), iso_last_error());
	else
		measure_echo(&e, s);
	iso_guest_free(e.guest);
	iso_spec_free(spec);
	iso_close(conn);
}

/* The same probe on a plain socketpair(SOCK_SEQPACKET), started by the
 * caller itself: no helper, no confinement, only the kernel between. */
static void measure_channel_pair(UNUSED const struct mode *m, UNUSED unsigned n, struct summary *s)
{
	struct endpoint e = { .guest = NULL, .fd = -1 };
	posix_spawn_file_actions_t fa;
	int sv[2], rc;
	pid_t pid;

	if (pin_here(&s[0]) < 0)
		return;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		note(&s[0], "socketpair: %s", strerror(errno));
		return;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, sv[1], 3); /* where the helper puts it */
	rc = posix_spawn(&pid, T_PROBE, &fa, NULL, (char *const *)probe_echo, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(sv[1]);
	e.fd = sv[0];
	if (rc != 0)
		note(&s[0], "probe echo: %s", strerror(rc));
	else
		measure_echo(&e, s);
	close(sv[0]); /* the echo reads end-of-file and exits */
	if (rc == 0)
		waitpid(pid, NULL, 0);
}

#define ARGV(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* The targets, each measured in turn with what it is measured against, so
 * that on a machine others share both see the same moments. */

/* t (uid 65534): posix_spawn+waitpid (s[0]), then spawn+wait through a
 * warm connection (s[1]), round after round. */
static void measure_target_library(const struct mode *m, unsigned n, struct summary *s)
{
	struct library_ctx lib;
	struct turn t[2] = { { run_posix_spawn, NULL }, { run_library, &lib } };

	if (library_open(m, &lib, s) == 0)
		time_rounds(t, 2, n, s);
	library_close(&lib);
}

static int run_command_turn(const void *ctx, struct summary *s)
{
	return run_command(ctx, -1, "a run failed", s);
}

#define AS_CALLER "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"

/* T (root): /bin/true as root (s[0]), bwrap (s[1]), /bin/true as the
 * caller (s[2]), the CLI as the caller (s[3]), round after round; each
 * command started the same way, the caller's through setpriv(1). */
static void measure_target_cli(const struct mode *m, unsigned n, struct summary *s)
{
	static char bwrap[4096];
	const char *const bwrap_argv[] = { bwrap,           "--ro-bind", "/", "/",
					   "--unshare-all", "/bin/true", NULL };
	const struct mode cmd[4] = {
		{ 'T', "", 0, NULL, ARGV("/bin/true"), NULL },
		{ 'T', "", 0, NULL, bwrap_argv, NULL },
		{ 'T', "", 0, NULL, ARGV(AS_CALLER, "/bin/true"), NULL },
		{ 'T', "", 0, NULL, ARGV(AS_CALLER, T_CLI, "--", "/bin/true"),
		  ARGV("LD_LIBRARY_PATH=" T_LIB, t_helper_env) },
	};
	struct turn t[4];

	(void)m;
	if (find_program("bwrap") < 0 || access(cmd[2].argv[0], X_OK) < 0) {
		note(s, "skipped: bwrap or %s is not installed", cmd[2].argv[0]);
		return;
	}
	strlcpy(bwrap, tool_path, sizeof(bwrap));
	for (int i = 0; i < 4; i++) {
		t[i].run = run_command_turn;
		t[i].ctx = &cmd[i];
		if (run_command(&cmd[i], -1, "skipped: a first run failed", s) < 0)
			return;
	}
	time_rounds(t, 4, n, s);
}

/* The big request's argv and overrides, filled in by main(). */
static const char *big_argv[BIG_ARGC + 1];
static const char *big_env[BIG_OVERRIDES + 1];

/* The spawn modes first; ratios divide by modes[0]. */
static const struct mode modes[] = {
	{ '1', "posix_spawn + waitpid (uid 65534)", T_CALLER, measure_posix_spawn, NULL, NULL },
	/* What starting any command costs here: 4-7 minus this is the tool. */
	{ 'l', "launcher alone: the command /bin/true as 4-7 start theirs (uid 65534)", T_CALLER,
	  measure_command, ARGV("/bin/true"), NULL },
	{ 'L', "launcher alone: the command /bin/true as 4-7 start theirs (root)", 0,
	  measure_command, ARGV("/bin/true"), NULL },
	{ '2', "libisospawn, warm helper, unconfined rule (uid 4000004)", T_UNCONFINED,
	  measure_library, NULL, NULL },
	{ '3', "libisospawn, warm helper, default confinement (uid 65534)", T_CALLER,
	  measure_library, NULL, NULL },
	/* What the guest's cgroup costs, where the host has one. */
	{ 'C', "3 with its cgroup against without ('cgroup off', uid 4000123), in turn", 0,
	  measure_cgroup_pair, NULL, NULL },
	{ 'f',
	  "floor: a forked reaper in new PID, IPC and mount namespaces vforks "
	  "/bin/true (no isospawn code; root)",
	  0, measure_floor, NULL, NULL },
	{ 'F', "floor as f, the reaper sharing the caller's memory (CLONE_VM; root)", 0,
	  measure_floor, NULL, NULL },
	{ 'n', "3 without the guest's mount namespace (bench-only helper)", T_CALLER,
	  measure_library_noworld, NULL, NULL },
	{ 'G', "3 with a read and a write grant of the caller's own directories", T_CALLER,
	  measure_library_grants, NULL, NULL },
	{ '4', "isospawn CLI, fresh helper per run (uid 65534)", T_CALLER, measure_command,
	  ARGV(T_CLI, "--", "/bin/true"), ARGV("LD_LIBRARY_PATH=" T_LIB, t_helper_env) },
	{ 'm', "4 without the guest's mount namespace (bench-only helper)", T_CALLER,
	  measure_command, ARGV(T_CLI, "--", "/bin/true"),
	  ARGV("LD_LIBRARY_PATH=" T_LIB, noworld_env) },
	{ '5', "bwrap --ro-bind / / --unshare-all (root)", 0, measure_command,
	  ARGV("bwrap", "--ro-bind", "/", "/", "--unshare-all", "/bin/true"), NULL },
	{ '6', "sudo -u nobody (root)", 0, measure_command,
	  ARGV("sudo", "-u", "nobody", "/bin/true"), NULL },
	{ '7', "firejail --noprofile (root)", 0, measure_command,
	  ARGV("firejail", "--noprofile", "/bin/true"), NULL },
	{ 'p',
	  "Python: Connection().spawn(['/bin/true']).wait(), warm helper, "
	  "default confinement (uid 65534)",
	  T_CALLER, measure_python_pair, NULL, NULL },
	{ 's', "Python: subprocess.run(['/bin/true']), for reference (uid 65534)", T_CALLER,
	  measure_python_batch, NULL, NULL },
	{ 'a', "as 3, argv of 1,000 entries", T_CALLER, measure_library, big_argv, NULL },
	{ 'e', "as 3, 128 overrides of 1,000-byte values", T_CALLER, measure_library, NULL,
	  big_env },
	/* In-turn targets: not rows of the table (print_targets). */
	{ 't', "targets: posix_spawn, then the library, in turn (uid 65534)", T_CALLER,
	  measure_target_library, NULL, NULL },
	{ 'T', "targets: true, bwrap, true and the CLI as uid 65534, in turn (root)", 0,
	  measure_target_cli, NULL, NULL },
	{ 'c', "isospawn channel: probe echo, default confinement", T_CALLER, measure_channel_iso,
	  NULL, NULL },
	{ 'c', "socketpair: the same probe, started by the caller", T_CALLER, measure_channel_pair,
	  NULL, NULL },
};
#define MODES (sizeof(modes) / sizeof(modes[0]))
#define CHANNEL_ISO (MODES - 2)
#define CHANNEL_PAIR (MODES - 1)

/* g: spawn latency and helper memory beside live guests. */
static const struct mode live_mode = {
	'g',    "as 3, beside sleeping guests on the same connection (uid 4000050)",
	T_MANY, measure_live,
	NULL,   NULL
};

/* Everything the measuring children write, in memory shared with them. */
struct results {
	struct summary mode[MODES][4];
	struct summary live[COUNT(guest_counts)];
	struct summary scale[sizeof(SCALED_MODES) - 1][COUNT(client_counts)][16];
	double scale_total[sizeof(SCALED_MODES) - 1][COUNT(client_counts)];
	double end_us; /* the scaling window's end (window.end_us) */
};

static size_t mode_index(char key)
{
	size_t i = 0;

	while (i < MODES - 1 && modes[i].key != key)
		i++;
	return i;
}

/* Fork a child that measures m as m->uid, writing into s and its timings
 * into samples (both shared memory, samples may be NULL), so nothing it
 * does (privilege drop, helper, guests) stays. Returns its pid, or -1. */
static pid_t start_child(const struct mode *m, unsigned n, struct summary *s, double *samples)
{
	pid_t pid;

	fflush(stdout);
	if ((pid = fork()) < 0) {
		note(s, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		samples_out = samples;
		samples_cap = n;
		if (chdir("/") == 0 && (m->uid == 0 || become(m->uid, s) == 0))
			m->measure(m, n, s);
		_exit(0);
	}
	return pid;
}

static void finish_child(pid_t pid, struct summary *s)
{
	int status = 0;

	if (pid > 0)
		waitpid(pid, &status, 0);
	if (!s->measured && !s->note[0])
		note(s, "the measuring child ended without a result (status 0x%x)",
		     (unsigned)status);
}

static void run_in_child(const struct mode *m, unsigned n, struct summary *s, double *samples)
{
	finish_child(start_child(m, n, s, samples), s);
}

/* `clients` children measure m at once for window_s seconds; the sum of
 * their rates, or 0 with the first failure's reason in s[0]. */
static double run_clients(const struct mode *m, unsigned clients, double window_s,
			  struct results *res, struct summary *s)
{
	int ready[2], go[2];
	pid_t pid[16];
	double total = 0;
	unsigned j, started = 0;
	char c;

	if (pipe2(ready, O_CLOEXEC) < 0 || pipe2(go, O_CLOEXEC) < 0) {
		note(&s[0], "pipe: %s", strerror(errno));
		return 0;
	}
	window.ready = ready[1];
	window.go = go[0];
	window.end_us = &res->end_us;
	res->end_us = 1e300;
	for (j = 0; j < clients; j++) {
		pid[j] = fork();
		if (pid[j] == 0) {
			close(ready[0]);
			close(go[1]);
			finish_child(start_child(m, 1, &s[j], NULL), &s[j]);
			_exit(0);
		}
	}
	close(ready[1]);
	close(go[0]);
	while (started < clients && read(ready[0], &c, 1) == 1)
		started++;
	res->end_us = now_us() + window_s * 1e6;
	close(go[1]); /* go */
	close(ready[0]);
	for (j = 0; j < clients; j++)
		if (pid[j] > 0)
			waitpid(pid[j], NULL, 0);
	window.ready = window.go = -1;
	for (j = 0; j < clients; j++) {
		if (!s[j].measured) {
			if (j > 0)
				memcpy(s[0].note, s[j].note, sizeof(s[0].note));
			return 0;
		}
		total += s[j].per_s;
	}
	return total;
}

static char machine[512]; /* date, kernel, CPU: the first line */

static void describe_machine(unsigned n)
{
	char date[64] = "", line[512], cpu[256] = "unknown";
	struct utsname u = { 0 };
	time_t t = time(NULL);
	FILE *f = fopen("/proc/cpuinfo", "r");

	strftime(date, sizeof(date), "%Y-%m-%d %H:%M %Z", localtime(&t));
	uname(&u);
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "model name : %255[^\n]", cpu) == 1)
			break;
	if (f)
		fclose(f);
	snprintf(machine, sizeof(machine),
		 "isospawn-bench, %s, kernel %s, N=%u, "
		 "CPU %s (%ld online)",
		 date, u.release, n, cpu, sysconf(_SC_NPROCESSORS_ONLN));
}

/* The CSV files (-o): one row per result, every timing. NULL: none. */
static FILE *csv, *csv_samples;

/* A row of PREFIX.csv; the label last, quoted, so that the numeric
 * columns keep their places whatever it holds. */
static void csv_row(const char *table, char key, const char *x, const struct summary *s,
		    const char *ratio, const char *value, const char *label)
{
	if (!csv)
		return;
	fprintf(csv, "%s,%c,%s,", table, key, x);
	if (s && s->measured && s->median_us > 0)
		fprintf(csv, "%.1f,%.1f,", s->median_us, s->p90_us);
	else
		fprintf(csv, ",,");
	fprintf(csv, "%s,%s,\"%s\"\n", ratio, value, label);
}

static void csv_samples_of(char key, const char *x, const double *us, unsigned n)
{
	for (unsigned i = 0; csv_samples && i < n; i++)
		fprintf(csv_samples, "%c,%s,%.1f\n", key, x, us[i]);
}

static double net(const struct summary *tool, const struct summary *launcher)
{
	return tool->median_us - launcher->median_us;
}

static const struct summary *result_of(struct summary (*r)[4], char key)
{
	for (size_t i = 0; i < CHANNEL_ISO; i++)
		if (modes[i].key == key)
			return r[i];
	return NULL;
}

/* x against y, medians and p90s, when both ran. */
static void print_ratio(const struct summary *x, const struct summary *y, const char *label)
{
	if (!x || !y || !x->measured || !y->measured)
		return;
	printf("- %s: median %.0f against %.0f µs (%+.1f %%), p90 %.0f against %.0f µs "
	       "(%+.1f %%)\n",
	       label, x->median_us, y->median_us, 100 * (x->median_us / y->median_us - 1),
	       x->p90_us, y->p90_us, 100 * (x->p90_us / y->p90_us - 1));
}

/* The targets measured in turn are not rows of the spawn table. */
static int in_turn(char key)
{
	return key == 't' || key == 'T';
}

static void print_spawn_table(struct summary (*r)[4], const char *which)
{
	const struct summary *base = r[0];
	char ratio[32];

	printf("| mode | median µs | p90 µs | ratio to posix_spawn |\n"
	       "|---|---:|---:|---:|\n");
	for (size_t i = 0; i < CHANNEL_ISO; i++) {
		if (!strchr(which, modes[i].key) || in_turn(modes[i].key))
			continue;
		snprintf(ratio, sizeof(ratio), "%.2f",
			 base->measured && r[i]->measured ? r[i]->median_us / base->median_us
							  : 0.0);
		printf("| %c. %s | ", modes[i].key, modes[i].label);
		if (!r[i]->measured)
			printf("— | — | skipped |\n");
		else
			printf("%.0f | %.0f | %s |\n", r[i]->median_us, r[i]->p90_us,
			       base->measured ? ratio : "—");
		csv_row("spawn", modes[i].key, "", r[i],
			base->measured && r[i]->measured ? ratio : "", "", modes[i].label);
	}
	printf("\n");
	for (size_t i = 0; i < CHANNEL_ISO; i++)
		if (strchr(which, modes[i].key) && r[i][0].note[0])
			printf("- %c: %s\n", modes[i].key, r[i][0].note);
	if (strchr(which, 'n'))
		print_ratio(&result_of(r, 'n')[1], &result_of(r, 'n')[0],
			    "the guest's mount namespace (n: with, without, spawn by spawn "
			    "in turn on two warm connections)");
	if (strchr(which, 'C'))
		print_ratio(&result_of(r, 'C')[0], &result_of(r, 'C')[1],
			    "the guest's cgroup (C: with, without, spawn by spawn in turn, "
			    "each caller on a warm connection; target <= +15 %)");
	if (strchr(which, 'G'))
		print_ratio(&result_of(r, 'G')[0], &result_of(r, 'G')[1],
			    "a read and a write grant (G: with, without, spawn by spawn in "
			    "turn on two warm connections; target <= +15 %)");
	print_ratio(result_of(r, '3'), result_of(r, 'f'),
		    "what isospawn adds to the floor of its design: 3 against f");
	print_ratio(result_of(r, 'f'), result_of(r, 'F'),
		    "a reaper that copies the caller's memory against one that shares it: "
		    "f against F");
	print_ratio(result_of(r, '3'), result_of(r, 'n'),
		    "mode 3 against n's without (separate blocks of spawns)");
	print_ratio(result_of(r, '4'), result_of(r, 'm'),
		    "the CLI with the guest's tree against without: 4 against m");
	print_ratio(result_of(r, '4'), result_of(r, '5'), "the CLI against bwrap: 4 against 5");
	print_ratio(result_of(r, 'm'), result_of(r, '5'),
		    "the CLI without the tree against bwrap: m against 5");
	if (strchr(which, 'p'))
		print_ratio(&result_of(r, 'p')[0], &result_of(r, 'p')[1],
			    "Python's spawn against the C library's (p: spawn by spawn "
			    "in turn, each on a warm connection; target ≤ 1.15×)");
	printf("\n");
}

/* One row of the in-turn table, and its CSV row. */
static void turn_row(char key, const char *label, const struct summary *x)
{
	if (x->measured)
		printf("| %s | %.0f | %.0f |\n", label, x->median_us, x->p90_us);
	else
		printf("| %s | — | — |\n", label);
	csv_row("turns", key, "", x, "", "", label);
}

/* The two targets: measured in turn (t, T) when they ran, else
 * from the rows above (separate blocks of runs). */
static void print_targets(struct summary (*r)[4])
{
	const struct summary *ps = result_of(r, '1'), *lib = result_of(r, '3'),
			     *cli = result_of(r, '4'), *bw = result_of(r, '5'),
			     *lu = result_of(r, 'l'), *lr = result_of(r, 'L'),
			     *t = result_of(r, 't'), *T = result_of(r, 'T');
	int turns = t[1].measured || T[3].measured;

	if (turns) {
		printf("Targets, each measured in turn with what it is measured against "
		       "(one run of each after the other, round after round):\n\n"
		       "| in turn | median µs | p90 µs |\n|---|---:|---:|\n");
		turn_row('t', "t. posix_spawn + waitpid (uid 65534)", &t[0]);
		turn_row('t', "t. libisospawn, warm helper, default confinement (uid 65534)",
			 &t[1]);
		turn_row('T', "T. launcher alone: /bin/true (root)", &T[0]);
		turn_row('T', "T. bwrap --ro-bind / / --unshare-all (root)", &T[1]);
		turn_row('T', "T. launcher alone: setpriv to uid 65534, /bin/true", &T[2]);
		turn_row('T', "T. setpriv to uid 65534, isospawn -- /bin/true", &T[3]);
		printf("\n");
		for (int i = 0; i < 4; i++)
			if (T[i].note[0] && !T[3].measured)
				printf("- T: %s\n", T[i].note);
		if (t[0].note[0] && !t[1].measured)
			printf("- t: %s\n", t[0].note);
		ps = &t[0];
		lib = &t[1];
		lr = &T[0];
		bw = &T[1];
		lu = &T[2];
		cli = &T[3];
	}
	int library = ps->measured && lib->measured;
	int command = cli->measured && bw->measured && lu->measured && lr->measured;

	if (!library && !command)
		return;
	printf("Targets in this run (%s):\n\n", turns ? "in turn" : "separate blocks of runs");
	if (library)
		printf("- library warm spawn+wait against posix_spawn+waitpid: "
		       "median %.2f×, p90 %.2f× (target ≤ 1.5×)\n",
		       lib->median_us / ps->median_us, lib->p90_us / ps->p90_us);
	if (command)
		printf("- CLI against bwrap, each net of its launcher: "
		       "%.0f µs against %.0f µs, %.2f× (target ≤ 0.7×)\n",
		       net(cli, lu), net(bw, lr), net(cli, lu) / net(bw, lr));
	printf("\n");
}

static void print_live_table(const struct summary *live)
{
	char x[16], rss[32], ratio[32];

	printf("| sleeping guests on the connection (g) | median µs | p90 µs | "
	       "ratio to none | helper VmRSS KiB |\n|---:|---:|---:|---:|---:|\n");
	for (size_t i = 0; i < COUNT(guest_counts); i++) {
		const struct summary *s = &live[i];

		snprintf(x, sizeof(x), "%u", guest_counts[i]);
		snprintf(rss, sizeof(rss), "%ld", s->rss_kib[1]);
		snprintf(ratio, sizeof(ratio), "%.2f",
			 live[0].measured && s->measured ? s->median_us / live[0].median_us : 0.0);
		if (s->measured)
			printf("| %s | %.0f | %.0f | %s | %s |\n", x, s->median_us, s->p90_us,
			       live[0].measured ? ratio : "—", rss);
		else
			printf("| %s | — | — | skipped | — |\n", x);
		csv_row("guests", 'g', x, s, live[0].measured && s->measured ? ratio : "",
			s->measured ? rss : "", live_mode.label);
	}
	printf("\n");
	for (size_t i = 0; i < COUNT(guest_counts); i++)
		if (live[i].note[0])
			printf("- %u guests: %s\n", guest_counts[i], live[i].note);
	printf("- g: %s; the guests run /bin/sleep 3600.\n\n", live_mode.label);
}

static void print_scaling_table(const struct results *res, double window_s)
{
	const char *keys = SCALED_MODES;
	char x[16], value[32];
	size_t k, c;

	printf("| clients, one connection or command at a time each |");
	for (k = 0; keys[k]; k++)
		printf(" %c. spawns/s |", keys[k]);
	printf("\n|---:|");
	for (k = 0; keys[k]; k++)
		printf("---:|");
	printf("\n");
	for (c = 0; c < COUNT(client_counts); c++) {
		snprintf(x, sizeof(x), "%u", client_counts[c]);
		printf("| %s |", x);
		for (k = 0; keys[k]; k++) {
			const struct mode *m = &modes[mode_index(keys[k])];
			double total = res->scale_total[k][c];

			snprintf(value, sizeof(value), "%.0f", total);
			printf(" %s |", total > 0 ? value : "—");
			csv_row("scaling", keys[k], x, NULL, "", total > 0 ? value : "", m->label);
		}
		printf("\n");
	}
	printf("\nEach client process runs its mode's spawn+wait (or command) one "
	       "after another for %.0f s after a common start; the sum of their "
	       "rates.\n",
	       window_s);
	for (k = 0; keys[k]; k++)
		for (c = 0; c < COUNT(client_counts); c++)
			if (res->scale[k][c][0].note[0] && res->scale_total[k][c] <= 0)
				printf("- %c, %u clients: %s\n", keys[k], client_counts[c],
				       res->scale[k][c][0].note);
	printf("\n");
}

static void print_channel_table(struct summary (*r)[4])
{
	const struct summary *iso = r[CHANNEL_ISO], *pair = r[CHANNEL_PAIR];
	char value[32];

	printf("| channel (uid 65534), both ends on one CPU | round trip µs, median "
	       "| p90 | MB/s echoed |\n|---|---:|---:|---:|\n");
	for (size_t i = CHANNEL_ISO; i < MODES; i++) {
		printf("| %s |", modes[i].label);
		if (r[i][0].measured)
			printf(" %.1f | %.1f |", r[i][0].median_us, r[i][0].p90_us);
		else
			printf(" skipped | — |");
		if (r[i][1].measured)
			printf(" %.0f |\n", r[i][1].mb_per_s);
		else
			printf(" skipped |\n");
		snprintf(value, sizeof(value), "%.0f", r[i][1].mb_per_s);
		csv_row("channel", 'c', "", r[i], "", r[i][1].measured ? value : "",
			modes[i].label);
	}
	if (iso[0].measured && pair[0].measured && iso[1].measured && pair[1].measured)
		printf("| ratio | %.2f | %.2f | %.2f |\n", iso[0].median_us / pair[0].median_us,
		       iso[0].p90_us / pair[0].p90_us, iso[1].mb_per_s / pair[1].mb_per_s);
	printf("\nRound trips: %d of %d B. Throughput: %d messages of %d KiB, "
	       "%d in flight, counted one way.\n",
	       RT_COUNT, RT_SIZE, TP_COUNT, TP_SIZE / 1024, TP_WINDOW);
	for (size_t i = CHANNEL_ISO; i < MODES; i++)
		for (int row = 0; row < 2; row++)
			if (r[i][row].note[0])
				printf("- %s: %s\n", modes[i].label, r[i][row].note);
}

/* argv of BIG_ARGC entries, BIG_OVERRIDES overrides of BIG_VALUE bytes. */
static void fill_big_request(void)
{
	static char args[BIG_ARGC][16], env[BIG_OVERRIDES][16 + BIG_VALUE];

	big_argv[0] = "/bin/true";
	for (int i = 1; i < BIG_ARGC; i++) {
		snprintf(args[i], sizeof(args[i]), "argument-%04d", i);
		big_argv[i] = args[i];
	}
	for (int i = 0; i < BIG_OVERRIDES; i++) {
		int len = snprintf(env[i], sizeof(env[i]), "BENCH_%03d=", i);

		memset(env[i] + len, 'x', BIG_VALUE);
		env[i][len + BIG_VALUE] = '\0';
		big_env[i] = env[i];
	}
}

static int open_csv(const char *prefix)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s.csv", prefix);
	if (!(csv = fopen(path, "w")))
		return -1;
	snprintf(path, sizeof(path), "%s-samples.csv", prefix);
	if (!(csv_samples = fopen(path, "w")))
		return -1;
	fprintf(csv, "# %s\ntable,key,x,median_us,p90_us,ratio,value,label\n", machine);
	fprintf(csv_samples, "# %s\nkey,x,us\n", machine);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: isospawn-bench [-n N] [-m MODES] [-d SECONDS] [-o PREFIX]\n"
		"  -n N       spawns per mode (default %d; at least 200 for bench/RESULTS.md:\n"
		"             fewer make a noisy p90)\n"
		"  -m MODES   which to run, from \"%s\" (n, m = modes 3, 4 without the\n"
		"             guest's mount namespace, f, F = the design's floor with\n"
		"             no isospawn code, g = live guests, x = scaling,\n"
		"             c = channel; default all)\n"
		"  -d SECONDS each scaling point's window (default %d)\n"
		"  -o PREFIX  also write PREFIX.csv and PREFIX-samples.csv (bench/plot)\n"
		"Run as root: it installs the test helper under " T_ROOT ".\n",
		DEFAULT_N, ALL_MODES, DEFAULT_WINDOW_S);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *which = ALL_MODES, *error = NULL, *prefix = NULL;
	struct results *res;
	double *samples, window_s = DEFAULT_WINDOW_S;
	unsigned n = DEFAULT_N;
	size_t nsamples;
	char x[16];
	int opt;

	while ((opt = getopt(argc, argv, "n:m:d:o:h")) != -1) {
		if (opt == 'n' || opt == 'd') {
			long long v = strtonum(optarg, 1, 1000000, &error);

			if (error) {
				fprintf(stderr, "isospawn-bench: -%c %s: %s\n", opt, optarg, error);
				usage();
			}
			if (opt == 'n')
				n = (unsigned)v;
			else
				window_s = (double)v;
		} else if (opt == 'm' && optarg[strspn(optarg, ALL_MODES)] == '\0') {
			which = optarg;
		} else if (opt == 'o') {
			prefix = optarg;
		} else {
			usage();
		}
	}
	if (optind != argc)
		usage();
	if (geteuid() != 0) {
		fprintf(stderr,
			"isospawn-bench: run it as root: it installs the "
			"setuid test helper, then measures as uid %u\n",
			T_CALLER);
		return 1;
	}
	nsamples = (MODES + COUNT(guest_counts)) * n;
	res = mmap(NULL, sizeof(*res), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	samples = mmap(NULL, nsamples * sizeof(*samples), PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED || samples == MAP_FAILED) {
		perror("isospawn-bench: mmap");
		return 1;
	}
	describe_machine(n);
	if (prefix && open_csv(prefix) < 0) {
		fprintf(stderr, "isospawn-bench: %s: %s\n", prefix, strerror(errno));
		return 1;
	}
	fill_big_request();
	test_install();
	snprintf(noworld_helper, sizeof(noworld_helper), "%s/isospawn-helper-noworld.%d", T_BIN,
		 (int)getpid());
	test_install_file(ISO_BUILDDIR "/bench/isospawn-helper-noworld", noworld_helper, 04755);
	snprintf(noworld_env, sizeof(noworld_env), "ISOSPAWN_HELPER=%s", noworld_helper);
	atexit(remove_noworld_helper);
	if ((mkdir(LENT_READ, 0700) < 0 && errno != EEXIST) ||
	    chown(LENT_READ, T_CALLER, T_CALLER) < 0 ||
	    (mkdir(LENT_WRITE, 0700) < 0 && errno != EEXIST) ||
	    chown(LENT_WRITE, T_CALLER, T_CALLER) < 0) {
		fprintf(stderr, "isospawn-bench: %s: %s\n", T_SHARED, strerror(errno));
		return 1;
	}
#ifdef ISO_PYTHON
	/* Beside libisospawn, readable by the measuring uid. */
	test_install_dir(ISO_BUILDDIR "/python/site/isospawn", T_LIB "/isospawn", 0644);
#endif

	printf("%s\n\n", machine);
	for (size_t i = 0; i < MODES; i++)
		if (strchr(which, modes[i].key))
			run_in_child(&modes[i], n, res->mode[i], &samples[i * n]);
	for (size_t i = 0; strchr(which, 'g') && i < COUNT(guest_counts); i++) {
		live_guests = guest_counts[i];
		run_in_child(&live_mode, n, &res->live[i], &samples[(MODES + i) * n]);
	}
	for (size_t k = 0; strchr(which, 'x') && k < sizeof(SCALED_MODES) - 1; k++)
		for (size_t c = 0; c < COUNT(client_counts); c++)
			res->scale_total[k][c] = run_clients(&modes[mode_index(SCALED_MODES[k])],
							     client_counts[c], window_s, res,
							     res->scale[k][c]);

	print_spawn_table(res->mode, which);
	print_targets(res->mode);
	if (strchr(which, 'g'))
		print_live_table(res->live);
	if (strchr(which, 'x'))
		print_scaling_table(res, window_s);
	if (strchr(which, 'c'))
		print_channel_table(res->mode);
	for (size_t i = 0; i < CHANNEL_ISO; i++)
		if (!in_turn(modes[i].key) && res->mode[i][0].measured &&
		    res->mode[i][0].median_us > 0)
			csv_samples_of(modes[i].key, "", &samples[i * n], n);
	for (size_t i = 0; i < COUNT(guest_counts); i++) {
		snprintf(x, sizeof(x), "%u", guest_counts[i]);
		if (res->live[i].measured)
			csv_samples_of('g', x, &samples[(MODES + i) * n], n);
	}
	if (csv && (fclose(csv) != 0 || fclose(csv_samples) != 0)) {
		fprintf(stderr, "isospawn-bench: writing %s.csv: %s\n", prefix, strerror(errno));
		return 1;
	}
	return 0;
}
