/*
 * seeds.c - write the fuzz targets' seed corpora: typical inputs, and
 * inputs at and just over every bound (wire.h, policy.h, isospawn.h), so a
 * campaign starts at the boundaries instead of having to find them.
 *
 *   make fuzz/seeds && fuzz/seeds $(srcdir)/fuzz/corpus
 *
 * writes DIR/wire, DIR/request, DIR/policy and DIR/env (the committed
 * seeds came from here). Wire and request seeds are built field by field,
 * not with the encoder, so that they can break the encoder's own rules.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "policy.h"
#include "wire.h"

static const char *top;

static void die(const char *what)
{
	fprintf(stderr, "seeds: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void save(const char *dir, const char *name, const void *data, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", top, dir);
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		die(path);
	snprintf(path, sizeof(path), "%s/%s/%s", top, dir, name);
	if (!(f = fopen(path, "wb")) || fwrite(data, 1, len, f) != len || fclose(f) != 0)
		die(path);
}

/* ---- wire ------------------------------------------------------------ */

static uint8_t msg[ISO_WIRE_MAX + 4096];
static size_t used;

static void put(const void *p, size_t n)
{
	if (used + n > sizeof(msg)) {
		errno = E2BIG;
		die("wire seed");
	}
	memcpy(msg + used, p, n);
	used += n;
}

static void put_le(uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++) {
		uint8_t b = (uint8_t)(v >> (8 * i));
		put(&b, 1);
	}
}

static void header(uint8_t type, uint32_t id)
{
	used = 0;
	put_le(ISO_WIRE_MAGIC, 2);
	put_le(ISO_WIRE_VERSION, 1);
	put_le(type, 1);
	put_le(id, 4);
	put_le(0, 4); /* body_len, set by finish() */
}

static void field(uint16_t tag, const void *value, uint32_t len)
{
	put_le(tag, 2);
	put_le(len, 4);
	put(value, len);
}

/* A string field of len bytes including the NUL: `fill` repeated. */
static void str_len(uint16_t tag, const char *prefix, char fill, size_t len)
{
	char *v = malloc(len);
	size_t plen = strlen(prefix);

	if (!v)
		die("malloc");
	memset(v, fill, len);
	memcpy(v, prefix, plen < len ? plen : len);
	v[len - 1] = '\0';
	field(tag, v, (uint32_t)len);
	free(v);
}

static void str(uint16_t tag, const char *s)
{
	field(tag, s, (uint32_t)strlen(s) + 1);
}

static void u32(uint16_t tag, uint32_t v)
{
	uint8_t b[4];

	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	field(tag, b, 4);
}

static void u64(uint16_t tag, uint64_t v)
{
	uint8_t b[8];

	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	field(tag, b, 8);
}

static void limit(uint32_t which, uint64_t v)
{
	uint8_t b[12];

	for (int i = 0; i < 4; i++)
		b[i] = (uint8_t)(which >> (8 * i));
	for (int i = 0; i < 8; i++)
		b[4 + i] = (uint8_t)(v >> (8 * i));
	field(ISO_F_LIMIT, b, 12);
}

static void finish_in(const char *dir, const char *name)
{
	uint32_t body = (uint32_t)(used - ISO_WIRE_HEADER_SIZE);

	for (int i = 0; i < 4; i++)
		msg[8 + i] = (uint8_t)(body >> (8 * i));
	save(dir, name, msg, used);
}

static void finish(const char *name)
{
	finish_in("wire", name);
}

/* SPAWN of /bin/true with n fields of one kind (and argv[0]). */
static void spawn_with(const char *name, uint16_t tag, const char *value, unsigned n)
{
	header(ISO_MSG_SPAWN, 1);
	str(ISO_F_PROGRAM, "/bin/true");
	if (tag != ISO_F_ARG)
		str(ISO_F_ARG, "true");
	for (unsigned i = 0; i < n; i++) {
		char v[64];

		snprintf(v, sizeof(v), value, i);
		str(tag, v);
	}
	finish(name);
}

/* SPAWN padded with ARG fields to exactly `total` bytes. */
static void spawn_of_size(const char *name, size_t total)
{
	header(ISO_MSG_SPAWN, 2);
	str(ISO_F_PROGRAM, "/bin/true");
	while (used < total) {
		size_t left = total - used - ISO_WIRE_FIELD_HEADER_SIZE;
		size_t len = left > 4096 ? 4096 : left;

		if (left > 4096 && left - 4096 < ISO_WIRE_FIELD_HEADER_SIZE + 1)
			len = 4000; /* leave room for a last field */
		str_len(ISO_F_ARG, "", 'a', len);
	}
	finish(name);
}

static void wire_seeds(void)
{
	char name[64];

	header(ISO_MSG_SPAWN, 1);
	str(ISO_F_PROGRAM, "/usr/bin/python3");
	str(ISO_F_ARG, "python3");
	str(ISO_F_ARG, "job.py");
	str(ISO_F_FORWARD, "LANG=C.UTF-8");
	str(ISO_F_FORWARD, "PYTHONPATH=/srv/lib");
	str(ISO_F_OVERRIDE, "MODE=fast");
	limit(ISO_LIMIT_CPU, 10);
	limit(ISO_LIMIT_AS, 1ull << 30);
	u64(ISO_F_TIMEOUT_MS, 30000);
	u32(ISO_F_NETWORK, ISO_NETWORK_NONE);
	str(ISO_F_READ_PATH, "/srv/data");
	str(ISO_F_WRITE_PATH, "/srv/out");
	u32(ISO_F_CHANNEL, 1);
	u32(ISO_F_STDIO, 7);
	u64(ISO_F_WAIT_SLOT_MS, 5000);
	u32(ISO_F_PASS_FD, 5);
	u32(ISO_F_PASS_FD, 9);
	finish("spawn-full");
	spawn_with("spawn-minimal", ISO_F_ARG, "true", 1);

	header(ISO_MSG_KILL, 3);
	u32(ISO_F_SIGNAL, 9);
	finish("kill");
	header(ISO_MSG_KILL, 3);
	u32(ISO_F_SIGNAL, 64);
	finish("kill-signal-64");
	header(ISO_MSG_KILL, 3);
	u32(ISO_F_SIGNAL, 65);
	finish("kill-signal-65");
	header(ISO_MSG_HELLO, 0);
	u32(ISO_F_LANDLOCK_ABI, 6);
	finish("hello");
	header(ISO_MSG_HELLO, 0);
	u32(ISO_F_LANDLOCK_ABI, 0);
	u32(ISO_F_ERRNO, EPERM);
	str(ISO_F_MESSAGE, "no rule for uid 1000");
	finish("hello-refused");
	header(ISO_MSG_WAIT, 0);
	u64(ISO_F_WAIT_SLOT_MS, 60000);
	finish("wait");
	header(ISO_MSG_SPAWNED, 1);
	u32(ISO_F_PID, 4242);
	u32(ISO_F_UID, 1900000001);
	str(ISO_F_NOTES, "cgroup: missing memory, pids, cpu (/sys/fs/cgroup is tmpfs, not a "
			 "cgroup v2 hierarchy): memory, pids, cpus not enforced");
	finish("spawned");
	header(ISO_MSG_REFUSED, 1);
	u32(ISO_F_ERRNO, EPERM);
	str(ISO_F_MESSAGE, "override LD_PRELOAD: loader-level variable not allowed by policy");
	finish("refused");
	header(ISO_MSG_EXITED, 1);
	u32(ISO_F_OUTCOME, ISO_OUTCOME_LIMIT);
	u32(ISO_F_CODE, 24);
	u32(ISO_F_STAGE, 0);
	u32(ISO_F_LIMIT_HIT, ISO_LIMIT_CPU);
	{
		uint8_t usage[32] = { 1, 2, 3, 4 };
		field(ISO_F_USAGE, usage, sizeof(usage));
	}
	finish("exited");
	/* Its cgroup's OOM kill: the memory limit's, with what it counted. */
	header(ISO_MSG_EXITED, 1);
	u32(ISO_F_OUTCOME, ISO_OUTCOME_LIMIT);
	u32(ISO_F_CODE, 9);
	u32(ISO_F_LIMIT_HIT, ISO_LIMIT_MEMORY);
	{
		/* 1 s of CPU, a peak of 256M, pids reached (bit 9). */
		uint8_t cgroup[20] = { 0x40, 0x42, 0x0f, 0, 0, 0, 0, 0, 0,
				       0,    0,    0x10, 0, 0, 0, 0, 0, 0x02 };
		field(ISO_F_CGROUP, cgroup, sizeof(cgroup));
	}
	finish("exited-cgroup");
	/* A failed start's reason rides with FAILED only. */
	header(ISO_MSG_EXITED, 1);
	u32(ISO_F_OUTCOME, ISO_OUTCOME_FAILED);
	u32(ISO_F_CODE, ENOTEMPTY);
	u32(ISO_F_STAGE, ISO_STAGE_CONFINEMENT);
	str(ISO_F_MESSAGE, "no mount point for /x/ro/b in the guest's tree");
	finish("exited-failed");
	header(ISO_MSG_EXITED, 1);
	u32(ISO_F_OUTCOME, ISO_OUTCOME_EXITED);
	u32(ISO_F_CODE, 0);
	str(ISO_F_MESSAGE, "a reason without a failure");
	finish("exited-reason-not-failed");
	/* Inside the helper: its factory's and its reapers' messages. */
	header(ISO_MSG_PLAN, 0);
	u32(ISO_F_UID, 1900000001);
	str(ISO_F_PROGRAM, "/usr/bin/python3");
	str(ISO_F_ARG, "python3");
	str(ISO_F_ENV, "PATH=/usr/local/bin:/usr/bin:/bin");
	str(ISO_F_ENV, "TMPDIR=/tmp");
	for (uint32_t i = 0; i < ISO_LIMIT_COUNT; i++)
		limit(i, 1000 + i);
	u64(ISO_F_TIMEOUT_MS, 30000);
	u32(ISO_F_NETWORK, ISO_NETWORK_NONE);
	str(ISO_F_GRANT, "/srv/data");
	str(ISO_F_GRANT, "/srv/data/out");
	u64(ISO_F_GRANT_WRITE, 2);
	str(ISO_F_CWD, "/srv/data/out");
	u32(ISO_F_CHANNEL, 1);
	u32(ISO_F_STDIO, 5);
	u32(ISO_F_PASS_FD, 7);
	finish("plan");
	header(ISO_MSG_CLONE, 0);
	finish("clone");
	header(ISO_MSG_CLONED, 0);
	u32(ISO_F_PID, 4243);
	finish("cloned");
	header(ISO_MSG_CHANNEL, 0);
	finish("channel");

	/* Counts at and one over their caps. */
	spawn_with("args-1024", ISO_F_ARG, "a%u", ISO_ARGS_MAX);
	spawn_with("args-1025", ISO_F_ARG, "a%u", ISO_ARGS_MAX + 1);
	spawn_with("forward-16", ISO_F_FORWARD, "LANG=C.%u", ISO_WIRE_FORWARD_MAX);
	spawn_with("forward-17", ISO_F_FORWARD, "LANG=C.%u", ISO_WIRE_FORWARD_MAX + 1);
	spawn_with("overrides-128", ISO_F_OVERRIDE, "V%u=x", ISO_ENV_OVERRIDES_MAX);
	spawn_with("overrides-129", ISO_F_OVERRIDE, "V%u=x", ISO_ENV_OVERRIDES_MAX + 1);
	spawn_with("read-paths-32", ISO_F_READ_PATH, "/srv/%u", ISO_PATHS_MAX);
	spawn_with("read-paths-33", ISO_F_READ_PATH, "/srv/%u", ISO_PATHS_MAX + 1);
	spawn_with("write-paths-33", ISO_F_WRITE_PATH, "/srv/%u", ISO_PATHS_MAX + 1);
	/* Lengths at and one over their caps. */
	for (int over = 0; over <= 1; over++) {
		header(ISO_MSG_SPAWN, 4);
		str(ISO_F_PROGRAM, "/bin/true");
		str(ISO_F_ARG, "true");
		str_len(ISO_F_OVERRIDE, "V=", 'v', ISO_WIRE_STR_MAX + over);
		snprintf(name, sizeof(name), "string-%d", ISO_WIRE_STR_MAX + over);
		finish(name);
		header(ISO_MSG_SPAWN, 4);
		str_len(ISO_F_PROGRAM, "/", 'p', ISO_WIRE_PATH_MAX + over);
		str(ISO_F_ARG, "p");
		snprintf(name, sizeof(name), "path-%d", ISO_WIRE_PATH_MAX + over);
		finish(name);
		header(ISO_MSG_REFUSED, 4);
		u32(ISO_F_ERRNO, EPERM);
		str_len(ISO_F_MESSAGE, "why: ", 'm', ISO_WIRE_TEXT_MAX + over);
		snprintf(name, sizeof(name), "message-%d", ISO_WIRE_TEXT_MAX + over);
		finish(name);
		header(ISO_MSG_EXITED, 4);
		u32(ISO_F_OUTCOME, ISO_OUTCOME_FAILED);
		u32(ISO_F_CODE, ENOENT);
		u32(ISO_F_STAGE, ISO_STAGE_EXEC);
		str_len(ISO_F_MESSAGE, "landlock: /", 'r', ISO_WIRE_TEXT_MAX + over);
		snprintf(name, sizeof(name), "reason-%d", ISO_WIRE_TEXT_MAX + over);
		finish(name);
		snprintf(name, sizeof(name), "datagram-%d", ISO_WIRE_MAX + over);
		spawn_of_size(name, ISO_WIRE_MAX + over);
	}
}

/* ---- request ---------------------------------------------------------- */

/* SPAWNs for fuzz_request's fixed policy, whose rule is the header's id
 * modulo 3: one each rule accepts, and each one step past what it allows,
 * so that a campaign starts where the decisions are. */
enum { RESTRICTED = 3, PERMISSIVE = 4, GROUP = 5 };

static void restricted_spawn(uint32_t network)
{
	header(ISO_MSG_SPAWN, RESTRICTED);
	str(ISO_F_PROGRAM, "/bin/true");
	str(ISO_F_ARG, "true");
	str(ISO_F_FORWARD, "LANG=C.UTF-8");
	str(ISO_F_OVERRIDE, "TZ=UTC");
	limit(ISO_LIMIT_CPU, 10);
	u64(ISO_F_TIMEOUT_MS, 60000);
	u32(ISO_F_NETWORK, network);
	str(ISO_F_READ_PATH, "/srv/data/set");
	str(ISO_F_WRITE_PATH, "/srv/out");
}

static void request_seeds(void)
{
	restricted_spawn(ISO_NETWORK_NONE);
	finish_in("request", "restricted-accepted");
	restricted_spawn(ISO_NETWORK_HOST);
	finish_in("request", "restricted-network-host");
	restricted_spawn(ISO_NETWORK_DEFAULT);
	limit(ISO_LIMIT_AS, (1ull << 30) + 1);
	finish_in("request", "restricted-over-a-ceiling");
	restricted_spawn(ISO_NETWORK_NONE);
	str(ISO_F_OVERRIDE, "PATH=/opt/bin");
	str(ISO_F_READ_PATH, "/srv/datax");
	finish_in("request", "restricted-path-beside-a-grant");

	header(ISO_MSG_SPAWN, PERMISSIVE);
	str(ISO_F_PROGRAM, "/usr/bin/env");
	str(ISO_F_ARG, "env");
	str(ISO_F_FORWARD, "PYTHONPATH=/srv/lib");
	str(ISO_F_OVERRIDE, "LD_LIBRARY_PATH=/opt/lib");
	str(ISO_F_OVERRIDE, "MODE=fast");
	str(ISO_F_READ_PATH, "/etc");
	str(ISO_F_WRITE_PATH, "/tmp/x/out");
	u32(ISO_F_CHANNEL, 1);
	finish_in("request", "permissive-accepted");
	header(ISO_MSG_SPAWN, PERMISSIVE);
	str(ISO_F_PROGRAM, "/usr/bin/env");
	str(ISO_F_ARG, "env");
	str(ISO_F_OVERRIDE, "LD_PRELOAD=/tmp/x/evil.so");
	str(ISO_F_WRITE_PATH, "/tmp");
	finish_in("request", "permissive-unsafe-name");

	header(ISO_MSG_SPAWN, GROUP);
	str(ISO_F_PROGRAM, "/usr/bin/python3");
	str(ISO_F_ARG, "python3");
	str(ISO_F_READ_PATH, "/usr/lib");
	limit(ISO_LIMIT_NOFILE, 64);
	finish_in("request", "group-accepted");
	header(ISO_MSG_SPAWN, GROUP);
	str(ISO_F_PROGRAM, "/usr/bin/python3");
	str(ISO_F_ARG, "python3");
	str(ISO_F_FORWARD, "LANG=C");
	str(ISO_F_OVERRIDE, "A=b");
	u64(ISO_F_TIMEOUT_MS, 3600001);
	finish_in("request", "group-over-its-lists");
}

/* ---- policy ---------------------------------------------------------- */

static char text[2 * ISO_POLICY_FILE_MAX];
static size_t tlen;

static void add(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void add(const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(text + tlen, sizeof(text) - tlen, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(text) - tlen) {
		errno = E2BIG;
		die("policy seed");
	}
	tlen += (size_t)n;
}

static void policy(const char *name)
{
	save("policy", name, text, tlen);
	tlen = 0;
}

/* A file from the source tree, with @ROOT@ as the tests install it and
 * group names numeric (a group missing here would stop the parse). */
static void copy_policy(const char *srcdir, const char *path, const char *name)
{
	char full[4096], buf[ISO_POLICY_FILE_MAX];
	size_t n;
	FILE *f;

	snprintf(full, sizeof(full), "%s/%s", srcdir, path);
	if (!(f = fopen(full, "r")))
		die(full);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (char *g = strstr(buf, "group:isospawn"); g; g = strstr(g, "group:isospawn"))
		memcpy(g, "group:#100    ", 14);
	for (char *p = buf; *p;) {
		char *at = strstr(p, "@ROOT@");
		if (!at) {
			add("%s", p);
			break;
		}
		add("%.*s/var/lib/isospawn-check", (int)(at - p), p);
		p = at + 6;
	}
	policy(name);
}

static void policy_seeds(const char *srcdir)
{
	char name[64];

	copy_policy(srcdir, "etc/isospawn.conf", "shipped");
	copy_policy(srcdir, "tests/policy.conf.in", "tests");
	add("rule user:#1000 {\n pool 1900000000-1900000009\n programs /usr/bin/python3 /bin/sh\n"
	    " overrides MODE LANG\n allow-unsafe LD_PRELOAD\n forward LANG TMPDIR\n"
	    " limit cpu unlimited\n limit as 16T\n limit nofile 64\n timeout 60 30\n"
	    " network none-only\n seccomp strict\n seccomp-action kill\n"
	    " seccomp-deny getppid keyctl\n landlock optional\n landlock-abi 6\n"
	    " read /srv/ro\n write /srv/rw\n grants read-write\n"
	    " caller-limit memory 8G pids 1024 cpus 2.5\n scratch keep\n}\n"
	    "rule group:#100 {\n pool 1900000010-1900000010\n programs any\n forward none\n}\n");
	policy("every-keyword");

	/* Includes of real directories: policy_parse() must read none of
	 * them (a fuzzed "include /etc" once read the host's /etc). */
	add("include /etc\nrule user:#1 {\npool 1900000000-1900000000\nprograms any\n}\n");
	policy("include-etc");
	add("include /tmp\n");
	policy("include-tmp");

	for (int over = 0; over <= 1; over++) {
		int rules = ISO_POLICY_RULES_MAX + over;

		for (int i = 0; i < rules; i++)
			add("rule user:#%d {\npool %u-%u\nprograms any\n}\n", 5000 + i,
			    1900000000u + 10u * (unsigned)i, 1900000009u + 10u * (unsigned)i);
		snprintf(name, sizeof(name), "rules-%d", rules);
		policy(name);

		/* A line of ISO_POLICY_LINE_MAX bytes (+1), newline excluded. */
		add("#");
		for (int i = 1; i < ISO_POLICY_LINE_MAX + over; i++)
			add("x");
		add("\nrule user:#1 {\npool 1900000000-1900000000\nprograms any\n}\n");
		snprintf(name, sizeof(name), "line-%d", ISO_POLICY_LINE_MAX + over);
		policy(name);

		/* ISO_POLICY_WORDS_MAX words (+1) on one line. */
		add("rule user:#1 {\npool 1900000000-1900000000\nprograms");
		for (int i = 1; i < ISO_POLICY_WORDS_MAX + over; i++)
			add(" /p/%d", i);
		add("\noverrides none\n}\n");
		snprintf(name, sizeof(name), "words-%d", ISO_POLICY_WORDS_MAX + over);
		policy(name);

		/* A file of ISO_POLICY_FILE_MAX bytes (+1). */
		add("rule user:#1 {\npool 1900000000-1900000000\nprograms any\n}\n");
		while (tlen + 64 < (size_t)ISO_POLICY_FILE_MAX)
			add("# padding padding padding padding padding padding padding\n");
		while (tlen < (size_t)ISO_POLICY_FILE_MAX + (size_t)over - 1)
			add("#");
		add("\n");
		snprintf(name, sizeof(name), "file-%d", ISO_POLICY_FILE_MAX + over);
		policy(name);

		/* A pool of ISO_POLICY_POOL_MAX uids (+1). */
		add("rule user:#1 {\npool 1900000000-%u\nprograms any\n}\n",
		    1900000000u + ISO_POLICY_POOL_MAX - 1 + (unsigned)over);
		snprintf(name, sizeof(name), "pool-%d", ISO_POLICY_POOL_MAX + over);
		policy(name);

		/* Numbers at and over their ranges, one file each. */
		add("rule user:#1 {\npool 1900000000-1900000000\nprograms any\n"
		    "timeout %d\n}\n",
		    366 * 24 * 3600 + over);
		snprintf(name, sizeof(name), "timeout-%d", 366 * 24 * 3600 + over);
		policy(name);
		add("rule user:#1 {\npool 1900000000-1900000000\nprograms any\n"
		    "landlock-abi %d\n}\n",
		    7 + over);
		snprintf(name, sizeof(name), "landlock-abi-%d", 7 + over);
		policy(name);
		add("rule user:#1 {\npool 1900000000-1900000000\nprograms any\n"
		    "limit as %s\n}\n",
		    over ? "9223372036854775808" : "9223372036854775807");
		snprintf(name, sizeof(name), "limit-as-%s", over ? "over" : "at");
		policy(name);
		add("rule user:#1 {\npool 1900000000-1900000000\nprograms any\n"
		    "limit as %s\n}\n",
		    over ? "8193P" : "8191T");
		snprintf(name, sizeof(name), "limit-suffix-%s", over ? "over" : "at");
		policy(name);

		/* A seccomp-deny name of 64 bytes (+1). */
		add("rule user:#1 {\npool 1900000000-1900000000\nprograms any\nseccomp-deny ");
		for (int i = 0; i < 64 + over; i++)
			add("a");
		add("\n}\n");
		snprintf(name, sizeof(name), "syscall-name-%d", 64 + over);
		policy(name);
	}
	/* A defaults block every rule inherits, one overriding it, and the
	 * audit log. */
	add("audit-log /var/log/isospawn/audit.log\ndefaults {\n limit as 4G\n limit cpu 600\n"
	    " timeout 3600 600\n network none\n guests 32\n overrides LANG TZ\n forward LANG\n"
	    " seccomp default\n seccomp-action errno\n seccomp-deny keyctl\n landlock required\n"
	    " landlock-abi 1\n grants read\n}\ninclude /nonexistent\n"
	    "rule user:#1 {\n pool 1900000000-1900000009\n programs /bin/sh\n limit as 1G\n"
	    " guests 2\n grants none\n}\n"
	    "rule group:#100 {\n pool 1900000010-1900000019\n programs any\n}\n");
	policy("defaults");
	/* Errors on several lines, a rule left open and one in the defaults:
	 * what a collecting read goes on past. */
	add("defaults {\n pool 1-2\n guests 0\n}\ndefaults {\n}\n"
	    "rule user:#1 {\n pool 5\n programs any\n network maybe\n"
	    "rule user:#2 {\n pool 1900000000-1900000009\n programs /bin/sh\n}\n"
	    "audit-log tmp/log\nbogus\n}\n");
	policy("many-errors");
	add("rule user:#1 {\npool 4294967293-4294967294\nprograms any\n}\n");
	policy("pool-top");
	add("rule user:#1 {\npool 4294967294-4294967295\nprograms any\n}\n");
	policy("pool-top-over");
	add("rule user:#1 {\npool 1-5\nprograms any\n}\n");
	policy("pool-bottom");
	add("rule user:#1 {\npool 0-5\nprograms any\n}\n");
	policy("pool-bottom-over");
}

/* ---- env --------------------------------------------------------------- */

static void env(const char *name)
{
	save("env", name, text, tlen);
	tlen = 0;
}

static void env_seeds(void)
{
	add("%c", 0);
	add("SLANG=C.UTF-8\nSPYTHONPATH=/srv/lib\nSAWS_SECRET_ACCESS_KEY=hunter2\n"
	    "STMPDIR=/tmp/x\nOMODE=fast\nOPATH=/opt/bin\nSLANG=fr_FR\n");
	env("typical");
	add("%c", 1 | 2);
	add("SLANG=C\nSLANG=C\nOBASH_ENV=/x\nOTZ=:/etc/passwd\nOTERM=../x\n");
	env("strict-restricted");
	add("%c", 0);
	add("FLANG\nFTMPDIR\nAMODE\nALD_PRELOAD\nULD_PRELOAD\nOLD_PRELOAD=/x.so\nOMODE=1\n"
	    "SLANG=C\nSLC_ALL=C\nOLANG=de\n");
	env("rules");
	add("%c", 8 | 16 | 32);
	add("SLANG=C\nOX=1\n");
	env("empty-lists");
	add("%c", 4);
	add("OISOSPAWN_CHANNEL_FD=3\nOGCONV_PATH=/x\nO()=x\nOX=() { :; }\nS=x\nSnoequals\n");
	env("refusals");
	for (int over = 0; over <= 1; over++) {
		char name[64];

		add("%c", 0);
		for (int i = 0; i < ISO_ENV_OVERRIDES_MAX + over; i++)
			add("OV%d=%d\n", i, i);
		snprintf(name, sizeof(name), "overrides-%d", ISO_ENV_OVERRIDES_MAX + over);
		env(name);

		add("%cOV=", 0);
		for (int i = 0; i < ISO_ENV_VALUE_MAX + over; i++)
			add("v");
		add("\nSLANG=C\n");
		snprintf(name, sizeof(name), "value-%d", ISO_ENV_VALUE_MAX + over);
		env(name);

		add("%cO", 0);
		for (int i = 0; i < ISO_ENV_NAME_MAX + over; i++)
			add("N");
		add("=x\n");
		snprintf(name, sizeof(name), "name-%d", ISO_ENV_NAME_MAX + over);
		env(name);
	}
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: seeds OUTDIR SRCDIR\n");
		return 2;
	}
	top = argv[1];
	if (mkdir(top, 0755) < 0 && errno != EEXIST)
		die(top);
	wire_seeds();
	request_seeds();
	policy_seeds(argv[2]);
	env_seeds();
	return 0;
}
