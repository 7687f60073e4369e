/*
 * run.c - the isospawn command: run one program as an isospawn guest,
 * from a shell or script.
 *
 * Exit codes follow env(1)/timeout(1): the guest's own code; 128+N when it
 * was killed by signal N; 124 timeout; 125 isospawn refused or failed
 * (usage errors too); 126 found but not executable; 127 not found.
 * Every error is one line "isospawn: ..." on stderr.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "isospawn.h"
#include "die.h"
#include "json.h"
#include "util.h"

#define EXIT_TIMEOUT 124
#define EXIT_FAILED 125
#define EXIT_NOT_FOUND 127

/* A timeout above this many seconds is surely a typo. */
#define TIMEOUT_MAX_S 100000000u

struct cli {
	const char *program_arg; /* PROGRAM as typed */
	char program[PATH_MAX]; /* resolved, absolute */
	uint64_t timeout_ms; /* 0 = the policy's default */
	uint64_t wait_ms; /* --wait-slot: for a connection, then a slot */
	const char *status_path; /* --status-json, or NULL */
	FILE *status;
};

static volatile sig_atomic_t pending_signal;

const char cli_name[] = "isospawn";

static void usage(void)
{
	fputs("usage: isospawn [OPTIONS] [--] PROGRAM [ARG...]\n"
	      "Run PROGRAM as an isospawn guest: scrubbed environment, leased uid,\n"
	      "confined as the administrator's policy says.\n"
	      "\n"
	      "  --env NAME=VALUE    set a variable in the guest (repeatable)\n"
	      "  --limit NAME=VALUE  resource limit: cpu (seconds), as, fsize, stack,\n"
	      "                      scratch, shm (bytes, K/M/G/T suffix), nofile,\n"
	      "                      nproc (counts); for the whole guest: memory\n"
	      "                      (bytes), pids (a count), cpus (CPUs, 1.5);\n"
	      "                      VALUE may be \"unlimited\"\n"
	      "  --timeout SECONDS   wall-clock timeout, decimals allowed (0.5)\n"
	      "  --wait-slot SECONDS when the caller runs as many guests (or holds as\n"
	      "                      many connections) as its rule allows, wait this\n"
	      "                      long in all for one to end\n"
	      "  --network none|host no network (loopback only) or the host's\n"
	      "  --read PATH         lend PATH (a directory or file of yours) read-only\n"
	      "                      (repeatable)\n"
	      "  --write PATH        lend PATH for reading and writing (repeatable)\n"
	      "  --workdir DIR       lend DIR for writing and start the guest in it\n"
	      "  --cwd PATH          start the guest in PATH of its tree (default: its /tmp)\n"
	      "  --pass-fd N         hand the guest your descriptor N (3 or above), as N\n"
	      "                      (repeatable)\n"
	      "  --status-json FILE  write the final status as JSON ('-' = stderr)\n"
	      "  -h, --help          show this help\n"
	      "  -V, --version       show the version\n"
	      "\n"
	      "A PROGRAM without '/' is looked up in " ISO_GUEST_PATH " only.\n"
	      "Exit status: the guest's; 128+N killed by signal N; 124 timed out;\n"
	      "125 isospawn failed; 126 not executable; 127 not found.\n",
	      stdout);
}

/* Seconds with up to millisecond precision ("2", "0.5", ".25"); anything
 * finer rounds up, so a positive value never becomes 0 (the default). */
static int parse_seconds(const char *s, uint64_t *ms)
{
	uint64_t whole = 0, frac = 0;
	int digits = 0, frac_digits = 0, round_up = 0;
	const char *p = s;

	for (; *p >= '0' && *p <= '9'; p++, digits++) {
		whole = whole * 10 + (uint64_t)(*p - '0');
		if (whole > TIMEOUT_MAX_S)
			return -ERANGE;
	}
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++, digits++) {
			if (frac_digits < 3) {
				frac = frac * 10 + (uint64_t)(*p - '0');
				frac_digits++;
			} else if (*p != '0') {
				round_up = 1;
			}
		}
	if (digits == 0 || *p != '\0')
		return -EINVAL;
	for (; frac_digits < 3; frac_digits++)
		frac *= 10;
	*ms = whole * 1000 + frac + (uint64_t)round_up;
	return 0;
}

static void set_limit(iso_spec *spec, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char name[16];
	uint64_t value;
	int which, rc;

	if (eq == NULL || (size_t)(eq - arg) >= sizeof(name))
		die(EXIT_FAILED, "--limit %s: expected NAME=VALUE", arg);
	memcpy(name, arg, (size_t)(eq - arg));
	name[eq - arg] = '\0';
	which = iso_limit_from_name(name);
	if (which < 0)
		die(EXIT_FAILED,
		    "--limit %s: unknown limit (cpu, as, nofile, nproc, fsize, stack, "
		    "scratch, shm, memory, pids, cpus)",
		    arg);
	rc = iso_limit_parse(eq + 1, (enum iso_limit)which, &value);
	if (rc == -ERANGE)
		die(EXIT_FAILED, "--limit %s: value too large", arg);
	if (rc < 0)
		die(EXIT_FAILED, "--limit %s: expected a number%s or \"unlimited\"", arg,
		    iso_limit_in_bytes(which) ? " (K/M/G/T suffix allowed)"
		    : which == ISO_LIMIT_CPUS ? " of CPUs (at most 3 decimals)"
					      : "");
	if (iso_spec_set_limit(spec, (enum iso_limit)which, value) < 0)
		die(EXIT_FAILED, "--limit %s: %s", arg, iso_last_error());
}

static void set_env(iso_spec *spec, const char *arg)
{
	const char *eq = strchr(arg, '=');
	char *name;

	if (eq == NULL)
		die(EXIT_FAILED, "--env %s: expected NAME=VALUE", arg);
	name = strndup(arg, (size_t)(eq - arg));
	if (name == NULL)
		die(EXIT_FAILED, "out of memory");
	if (iso_spec_set_env(spec, name, eq + 1) < 0)
		die(EXIT_FAILED, "--env: %s", iso_last_error());
	free(name);
}

/* What the library takes as given: a grant's path, which it opens itself
 * (relative ones against the working directory). */
static void add_path(iso_spec *spec, const char *option, const char *arg,
		     int (*add)(iso_spec *, const char *))
{
	if (add(spec, arg) < 0)
		die(EXIT_FAILED, "%s: %s", option, iso_last_error());
}

/* A path of the guest's tree; a relative one names what the caller sees
 * from here (lent with --workdir or --write, say), symbolic links
 * resolved, as a grant's path is. */
static void set_cwd(iso_spec *spec, const char *arg)
{
	char resolved[PATH_MAX];

	if (arg[0] != '/' && realpath(arg, resolved) == NULL)
		die(EXIT_FAILED, "--cwd %s: %s", arg, strerror(errno));
	if (iso_spec_set_cwd(spec, arg[0] == '/' ? arg : resolved) < 0)
		die(EXIT_FAILED, "--cwd: %s", iso_last_error());
}

enum {
	OPT_ENV = 256,
	OPT_LIMIT,
	OPT_TIMEOUT,
	OPT_NETWORK,
	OPT_READ,
	OPT_WRITE,
	OPT_WORKDIR,
	OPT_CWD,
	OPT_PASS_FD,
	OPT_STATUS_JSON,
	OPT_WAIT_SLOT,
};

static void pass_fd(iso_spec *spec, const char *arg)
{
	char *end;
	long fd;

	errno = 0;
	fd = strtol(arg, &end, 10);
	if (errno != 0 || end == arg || *end != '\0' || fd < 0 || fd > INT_MAX)
		die(EXIT_FAILED, "--pass-fd %s: expected a descriptor number", arg);
	if (iso_spec_pass_fd(spec, (int)fd) < 0)
		die(EXIT_FAILED, "--%s", iso_last_error());
}

/* Options into spec and cli; returns the index of PROGRAM in argv. */
static int parse_options(int argc, char **argv, iso_spec *spec, struct cli *cli)
{
	static const struct option options[] = {
		{ "env", required_argument, NULL, OPT_ENV },
		{ "limit", required_argument, NULL, OPT_LIMIT },
		{ "timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "network", required_argument, NULL, OPT_NETWORK },
		{ "read", required_argument, NULL, OPT_READ },
		{ "write", required_argument, NULL, OPT_WRITE },
		{ "workdir", required_argument, NULL, OPT_WORKDIR },
		{ "cwd", required_argument, NULL, OPT_CWD },
		{ "pass-fd", required_argument, NULL, OPT_PASS_FD },
		{ "status-json", required_argument, NULL, OPT_STATUS_JSON },
		{ "wait-slot", required_argument, NULL, OPT_WAIT_SLOT },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	opterr = 0;
	/* '+': the first non-option is PROGRAM; what follows is its own. */
	while ((c = getopt_long(argc, argv, "+:hV", options, NULL)) != -1) {
		switch (c) {
		case OPT_ENV:
			set_env(spec, optarg);
			break;
		case OPT_LIMIT:
			set_limit(spec, optarg);
			break;
		case OPT_TIMEOUT:
			if (strcmp(optarg, "none") == 0)
				cli->timeout_ms = 0;
			else if (parse_seconds(optarg, &cli->timeout_ms) < 0)
				die(EXIT_FAILED,
				    "--timeout %s: expected seconds, e.g. 10 or 0.5, or "
				    "none (0)",
				    optarg);
			iso_spec_set_timeout(spec,
					     cli->timeout_ms ? cli->timeout_ms : ISO_TIMEOUT_NONE);
			break;
		case OPT_NETWORK:
			if (strcmp(optarg, "none") == 0)
				iso_spec_set_network(spec, ISO_NETWORK_NONE);
			else if (strcmp(optarg, "host") == 0)
				iso_spec_set_network(spec, ISO_NETWORK_HOST);
			else
				die(EXIT_FAILED, "--network %s: expected none or host", optarg);
			break;
		case OPT_READ:
			add_path(spec, "--read", optarg, iso_spec_add_read_path);
			break;
		case OPT_WRITE:
			add_path(spec, "--write", optarg, iso_spec_add_write_path);
			break;
		case OPT_WORKDIR:
			add_path(spec, "--workdir", optarg, iso_spec_set_workdir);
			break;
		case OPT_CWD:
			set_cwd(spec, optarg);
			break;
		case OPT_PASS_FD:
			pass_fd(spec, optarg);
			break;
		case OPT_STATUS_JSON:
			cli->status_path = optarg;
			break;
		case OPT_WAIT_SLOT:
			if (parse_seconds(optarg, &cli->wait_ms) < 0)
				die(EXIT_FAILED, "--wait-slot %s: expected seconds, e.g. 30 or 0.5",
				    optarg);
			break;
		case 'h':
			usage();
			exit(0);
		case 'V':
			printf("isospawn %s\n", PACKAGE_VERSION);
			exit(0);
		case ':':
			die(EXIT_FAILED, "%s needs an argument (see --help)", argv[optind - 1]);
		default:
			if (optopt != 0)
				die(EXIT_FAILED, "unknown option -%c (see --help)", optopt);
			die(EXIT_FAILED, "unknown option %s (see --help)", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		die(EXIT_FAILED, "no PROGRAM given (see --help)");
	return optind;
}

/*
 * PROGRAM as the helper needs it, an absolute path. A bare name is looked
 * up in ISO_GUEST_PATH only, never the caller's PATH: the guest would not
 * have the caller's PATH either. A relative path is taken from the working
 * directory, with its directory part resolved so that "." and ".." vanish.
 */
static void resolve_program(struct cli *cli)
{
	const char *arg = cli->program_arg;
	const char *slash = strrchr(arg, '/');
	char dir[PATH_MAX];
	struct stat st;
	int n;

	if (arg[0] == '/') {
		n = snprintf(cli->program, sizeof(cli->program), "%s", arg);
	} else if (slash != NULL) {
		n = snprintf(dir, sizeof(dir), "%.*s", (int)(slash - arg), arg);
		if (n < 0 || (size_t)n >= sizeof(dir))
			die(EXIT_FAILED, "%s: path too long", arg);
		if (realpath(dir, cli->program) == NULL)
			die(errno == ENOENT || errno == ENOTDIR ? EXIT_NOT_FOUND : EXIT_FAILED,
			    "%s: %s", arg, strerror(errno));
		n = snprintf(dir, sizeof(dir), "%s/%s",
			     strcmp(cli->program, "/") == 0 ? "" : cli->program, slash + 1);
		if (n >= 0 && (size_t)n < sizeof(dir))
			memcpy(cli->program, dir, (size_t)n + 1);
	} else {
		const char *p = ISO_GUEST_PATH;

		for (;;) {
			size_t len = strcspn(p, ":");

			n = snprintf(cli->program, sizeof(cli->program), "%.*s/%s", (int)len, p,
				     arg);
			if (n >= 0 && (size_t)n < sizeof(cli->program) &&
			    stat(cli->program, &st) == 0 && S_ISREG(st.st_mode))
				break;
			if (p[len] == '\0')
				die(EXIT_NOT_FOUND, "%s: not found in %s", arg, ISO_GUEST_PATH);
			p += len + 1;
		}
	}
	if (n < 0 || (size_t)n >= sizeof(cli->program))
		die(EXIT_FAILED, "%s: path too long", arg);
}

/* Our own stdio goes to the guest; a closed one becomes /dev/null. */
static void pass_stdio(iso_spec *spec)
{
	int fds[3];

	for (int i = 0; i < 3; i++)
		fds[i] = fcntl(i, F_GETFD) < 0 ? -1 : i;
	if (iso_spec_set_stdio(spec, fds[0], fds[1], fds[2]) < 0)
		die(EXIT_FAILED, "%s", iso_last_error());
}

static void open_status(struct cli *cli)
{
	if (cli->status_path == NULL)
		return;
	if (strcmp(cli->status_path, "-") == 0) {
		cli->status = stderr;
		return;
	}
	cli->status = fopen(cli->status_path, "we");
	if (cli->status == NULL)
		die(EXIT_FAILED, "--status-json %s: %s", cli->status_path, strerror(errno));
}

static uint64_t monotonic_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* --wait-slot bounds the whole wait: for a connection (each run of the
 * CLI is one), then for a guest slot with what is left of it. */
static void open_connection(struct cli *cli, iso_spec *spec, iso_conn **conn)
{
	uint64_t start = monotonic_ms(), spent;

	if (iso_open_wait(conn, cli->wait_ms) < 0)
		die(EXIT_FAILED, "%s", iso_last_error());
	spent = monotonic_ms() - start;
	if (cli->wait_ms != 0)
		iso_spec_set_wait_slot(spec, spent < cli->wait_ms ? cli->wait_ms - spent : 1);
}

static void on_signal(int sig)
{
	pending_signal = sig;
}

/* Signals meant to stop us are passed on to the guest instead; its end
 * decides ours. No SA_RESTART: a signal interrupts iso_wait(). */
static void forward_signals(void)
{
	static const int signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < COUNT(signals); i++)
		if (sigaction(signals[i], &sa, NULL) < 0)
			die(EXIT_FAILED, "sigaction: %s", strerror(errno));
}

/* iso_wait() in short slices, so a signal that lands just before a wait
 * is forwarded within 100 ms at worst. */
static void wait_guest(iso_guest *guest)
{
	for (;;) {
		int rc = iso_wait(guest, 100);
		int sig = pending_signal;

		if (sig != 0) {
			pending_signal = 0;
			iso_kill(guest, sig);
		}
		if (rc == 0)
			return;
		if (rc < 0 && rc != -EINTR)
			die(EXIT_FAILED, "%s", iso_last_error());
	}
}

/* Milliseconds as seconds, without trailing zeros: 2000 -> "2". */
static void format_seconds(uint64_t ms, char *buf, size_t n)
{
	int len = snprintf(buf, n, "%llu.%03llu", (unsigned long long)(ms / 1000),
			   (unsigned long long)(ms % 1000));

	while (len > 0 && buf[len - 1] == '0')
		buf[--len] = '\0';
	if (len > 0 && buf[len - 1] == '.')
		buf[--len] = '\0';
}

/* "PROGRAM: STAGE failed: REASON: MESSAGE (ENAME)": the helper's reason,
 * escaped as its log has it (it may name the caller's paths, whose bytes
 * reach no terminal raw), then the errno's message unless the reason ends
 * with it. Without a reason, the message alone. */
static void report_failure(const struct cli *cli, const iso_guest *guest)
{
	char reason[4 * 1024]; /* under 1 KiB, each byte at most 4 escaped */
	const char *why = iso_guest_reason(guest);
	int code = iso_guest_code(guest);
	const char *msg = strerror(code), *name = strerrorname_np(code);
	size_t len = why != NULL ? strlen(why) : 0, mlen = strlen(msg);

	iso_quote(reason, sizeof(reason), why != NULL ? why : "");
	fprintf(stderr, "isospawn: %s: %s failed: %s", cli->program,
		iso_stage_name(iso_guest_stage(guest)), reason);
	if (len < mlen || strcmp(why + len - mlen, msg) != 0)
		fprintf(stderr, "%s%s", why != NULL ? ": " : "", msg);
	if (why != NULL && name != NULL)
		fprintf(stderr, " (%s)", name);
	fputc('\n', stderr);
}

static void report_end(const struct cli *cli, const iso_guest *guest)
{
	char seconds[32];
	uint64_t wall_us;
	const char *limit;

	switch (iso_guest_outcome(guest)) {
	case ISO_OUTCOME_TIMED_OUT:
		if (cli->timeout_ms != 0) {
			format_seconds(cli->timeout_ms, seconds, sizeof(seconds));
			fprintf(stderr, "isospawn: guest timed out after %s s\n", seconds);
		} else {
			iso_guest_usage(guest, &wall_us, NULL, NULL, NULL);
			format_seconds(wall_us / 1000, seconds, sizeof(seconds));
			fprintf(stderr,
				"isospawn: guest timed out after %s s (the policy's timeout)\n",
				seconds);
		}
		break;
	case ISO_OUTCOME_LIMIT:
		limit = iso_limit_name((enum iso_limit)iso_guest_limit(guest));
		fprintf(stderr, "isospawn: guest killed: %s limit\n",
			limit != NULL ? limit : "resource");
		break;
	case ISO_OUTCOME_FAILED:
		report_failure(cli, guest);
		break;
	default:
		break;
	}
	if (iso_guest_limits_reached(guest) & (1u << ISO_LIMIT_PIDS))
		fputs("isospawn: a fork of the guest failed at its pids limit\n", stderr);
}

static void json_name_or_null(FILE *f, const char *key, const char *value)
{
	fprintf(f, ", \"%s\": ", key);
	if (value != NULL)
		json_string(f, value);
	else
		fputs("null", f);
}

static void write_status(struct cli *cli, const iso_guest *guest, int exit_code)
{
	enum iso_outcome outcome = iso_guest_outcome(guest);
	int code = iso_guest_code(guest);
	int signaled = outcome == ISO_OUTCOME_SIGNALED || outcome == ISO_OUTCOME_TIMED_OUT ||
		       outcome == ISO_OUTCOME_LIMIT;
	int failed = outcome == ISO_OUTCOME_FAILED;
	uint64_t wall, user, sys, rss, cg_cpu, peak;
	unsigned reached = iso_guest_limits_reached(guest);
	int cgroup;
	FILE *f = cli->status;

	if (f == NULL)
		return;
	iso_guest_usage(guest, &wall, &user, &sys, &rss);
	cgroup = iso_guest_cgroup_usage(guest, &cg_cpu, &peak) == 0;
	fputs("{\"outcome\": ", f);
	json_string(f, iso_outcome_name(outcome));
	fprintf(f, ", \"exit_code\": %d, \"code\": %d", exit_code, code);
	if (signaled)
		fprintf(f, ", \"signal\": %d", code);
	else
		fputs(", \"signal\": null", f);
	json_name_or_null(f, "stage", failed ? iso_stage_name(iso_guest_stage(guest)) : NULL);
	json_name_or_null(f, "errno", failed ? strerrorname_np(code) : NULL);
	json_name_or_null(f, "reason", iso_guest_reason(guest));
	json_name_or_null(f, "limit",
			  outcome == ISO_OUTCOME_LIMIT
			      ? iso_limit_name((enum iso_limit)iso_guest_limit(guest))
			      : NULL);
	fprintf(f, ", \"wall_us\": %llu, \"user_us\": %llu, \"sys_us\": %llu, \"maxrss_kib\": %llu",
		(unsigned long long)wall, (unsigned long long)user, (unsigned long long)sys,
		(unsigned long long)rss);
	/* The whole guest's, from its cgroup: null without one (or, for
	 * memory_peak, where the kernel does not count it). */
	if (cgroup)
		fprintf(f, ", \"cgroup_cpu_us\": %llu", (unsigned long long)cg_cpu);
	else
		fputs(", \"cgroup_cpu_us\": null", f);
	if (cgroup && peak != 0)
		fprintf(f, ", \"memory_peak\": %llu", (unsigned long long)peak);
	else
		fputs(", \"memory_peak\": null", f);
	fputs(", \"limits_reached\": [", f);
	for (int i = 0, n = 0; i < ISO_LIMIT_COUNT; i++)
		if (reached & (1u << i))
			fprintf(f, "%s\"%s\"", n++ ? ", " : "", iso_limit_name((enum iso_limit)i));
	fprintf(f, "], \"uid\": %lu", (unsigned long)iso_guest_uid(guest));
	fputs(", \"notes\": ", f);
	json_string(f, iso_guest_notes(guest));
	fputs("}\n", f);
	if (f == stderr ? fflush(f) != 0 : fclose(f) != 0)
		fprintf(stderr, "isospawn: --status-json %s: %s\n", cli->status_path,
			strerror(errno));
	cli->status = NULL;
}

int main(int argc, char **argv)
{
	struct cli cli = { 0 };
	iso_spec *spec;
	iso_conn *conn;
	iso_guest *guest;
	int first, exit_code;

	if (iso_spec_new(&spec) < 0)
		die(EXIT_FAILED, "%s", iso_last_error());
	first = parse_options(argc, argv, spec, &cli);
	cli.program_arg = argv[first];
	resolve_program(&cli);
	if (iso_spec_set_program(spec, cli.program) < 0 ||
	    iso_spec_set_argv(spec, (const char *const *)argv + first) < 0)
		die(EXIT_FAILED, "%s", iso_last_error());
	pass_stdio(spec);
	open_status(&cli);

	open_connection(&cli, spec, &conn);
	if (iso_spawn(conn, spec, &guest) < 0)
		die(EXIT_FAILED, "%s", iso_last_error());
	forward_signals();
	wait_guest(guest);

	exit_code = iso_guest_exit_code(guest);
	report_end(&cli, guest);
	write_status(&cli, guest, exit_code);
	/* The guest and everything it started are gone (its end is known).
	 * Not waiting for the helper to finish its own cleanup (iso_close)
	 * spares the caller that time: the helper ends once it reads the end
	 * of the connection, which exit() closes. */
	fflush(NULL);
	_exit(exit_code);
}
