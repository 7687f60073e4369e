/*
 * harness.h - shared by the live tests: they run as root only to install
 * the setuid test helper, then every test drops to an unprivileged caller
 * before it touches the library, so the privilege boundary is the real one.
 */
#ifndef ISO_HARNESS_H
#define ISO_HARNESS_H

#include <stddef.h>
#include <sys/types.h>

#include "install.h"
#include "isospawn.h"

/* As root, once per test program: give the run its own root and pools,
 * and install helper (4755), probe, CLI and policy under T_ROOT
 * (install.h). Exits 77 (automake's skip) when not root. */
void harness_setup(void);

/* As root, in a forked test: give this process (and what it forks) a /dev
 * of its own, nobody else sees, and return a datagram socket bound to its
 * /dev/log: the test stands in for the syslog daemon. */
int private_dev_log(void);

/* The datagrams that reached `sock` (private_dev_log()'s) so far, one
 * after another, NUL-terminated: as many as fit in `size`. */
void read_dev_log(int sock, char *log, size_t size);

/* In a forked test: become uid (gid = uid, or group for T_GROUPED) for
 * good, with ISOSPAWN_HELPER pointing at the test helper. */
void become(uid_t uid);

struct run {
	int spawn_rc; /* iso_spawn's result */
	char msg[512]; /* iso_last_error() when spawn_rc < 0 */
	enum iso_outcome outcome;
	int code, exit_code;
	uid_t uid;
	char notes[256];
	char reason[1024]; /* iso_guest_reason(): there for a failed start
				* only (run_guest checks), else "" */
	char out[65536]; /* the guest's stdout, NUL-terminated */
	char err[8192]; /* the guest's stderr */
};

/* Run argv (argv[0] absolute) on conn with overrides ("NAME=value", may be
 * NULL) and optional setup of the spec; stdout/stderr captured. */
typedef void (*spec_hook)(iso_spec *spec, void *arg);
void run_guest(iso_conn *conn, const char *const *argv, const char *const *overrides,
	       spec_hook hook, void *arg, struct run *r);

/* Open a connection and fail the test with the library's message if it
 * cannot be opened. */
iso_conn *open_conn(void);

/* Run the CLI with args (NULL-terminated, without argv[0]); captures output
 * into r->out / r->err and its exit code into r->exit_code. extra_env may
 * add caller environment ("NAME=value"; NULL-terminated or NULL). */
void run_cli(const char *const *args, const char *const *extra_env, struct run *r);

/* What the tests read of a process in /proc (as they may: own uid, or
 * root). */
struct proc_info {
	pid_t pid, ppid;
	char state;
	char name[32];
	uid_t uid[4]; /* real, effective, saved, filesystem */
};

/* Up to size - 1 bytes of a small file, NUL-terminated; -1 if unreadable. */
ssize_t read_text(const char *path, char *buf, size_t size);
/* The text after key (such as "\nUid:\t") in a status file, or NULL. */
const char *status_field(const char *buf, const char *key);
/* Call fn for every process until it returns non-zero; return that. */
int each_process(int (*fn)(const struct proc_info *, void *), void *arg);
/* A set of uids and how many live processes hold one of them. */
struct uid_set {
	const uid_t *uids;
	size_t n;
	int count;
};

/* Live (not zombie) processes with any of their uids among uids[0..n). */
int processes_of(const uid_t *uids, size_t n);

/* Does the text contain a line starting with prefix? */
int has_line(const char *text, const char *prefix);

#endif /* ISO_HARNESS_H */
