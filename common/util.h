/*
 * util.h - the primitives the helper, the library and the CLI share, each
 * defined once here: a rule written twice drifts.
 *
 * None of these reads the process environment or keeps state.
 */
#ifndef ISO_UTIL_H
#define ISO_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "isospawn.h"

/* The number of elements of an array (not of a pointer). */
#define COUNT(array) (sizeof(array) / sizeof *(array))

/* ---- Reasons -------------------------------------------------------- */

/*
 * Write a one-line reason to why (n bytes; nothing if why is NULL or n is
 * 0) and return -err; err is a positive errno.
 */
int iso_why(char *why, size_t n, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/*
 * For the call that just failed: read errno before anything else can
 * change it, write "<fmt>: <strerror(errno)>" to why and return -errno.
 */
int iso_why_errno(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* ---- Quoting --------------------------------------------------------- */

/* Copy src into dst (n bytes, n > 0) with '"', '\\' and the bytes below
 * 0x20 and from 0x7f up escaped as \xHH, so that a caller-chosen string
 * cannot forge a log line nor reach a terminal raw: the helper's log, its
 * audit file and the CLIs quote every such string with it. */
void iso_quote(char *dst, size_t n, const char *src);

/* ---- Paths ---------------------------------------------------------- */

enum iso_path_kind {
	ISO_PATH_ANY, /* any place: "/" is one */
	ISO_PATH_FILE, /* a program: "/" is a directory, never a file */
};

/* The first control byte (0x01-0x1f, 0x7f) of s[0..len), or 0. A path
 * reaches reasons and logs, where such a byte could forge a line. */
unsigned char iso_control_byte(const char *s, size_t len);

/*
 * The one normal form of a path, for the policy, the requests and the
 * library alike: absolute; no control byte; no empty ("//", trailing '/'),
 * "." or ".." component; shorter than PATH_MAX bytes, so that it fits the
 * kernel's and the wire's bound (ISO_WIRE_PATH_MAX) with its NUL. Paths in
 * this form are compared as text, so one place has exactly one spelling.
 * Returns 0; -EINVAL, or -ENAMETOOLONG for a path of PATH_MAX bytes or
 * more, with *fault (if fault is not NULL) saying what is wrong.
 */
int iso_path_check(const char *path, enum iso_path_kind kind, const char **fault);

/* Whether `path` is `dir` or lies beneath it, both in that normal form:
 * a comparison of text. */
int iso_path_beneath(const char *path, const char *dir);

/* ---- String vectors -------------------------------------------------- */

/*
 * One allocation holding copies of strings[0..count) and the
 * NULL-terminated array that points at them, so that a single free()
 * releases it all. NULL when out of memory. Callers bound count and the
 * lengths, so the size cannot overflow.
 */
char **iso_strv_new(const char *const *strings, size_t count);

/* ---- Descriptors over a SOCK_SEQPACKET socket ------------------------ */

/* Descriptors one datagram carries at most, either way: a SPAWN's three
 * for the guest's stdio and one for each grant (isospawn.h). */
#define ISO_FDS_MAX (3 + 2 * ISO_PATHS_MAX + ISO_PASS_FDS_MAX)

/*
 * Send one datagram (len bytes of buf) with nfds (at most ISO_FDS_MAX)
 * descriptors attached as SCM_RIGHTS. flags go to sendmsg(), with
 * MSG_NOSIGNAL added; an interrupted call is retried. Returns the bytes
 * sent, or -errno.
 */
ssize_t iso_send_fds(int sock, const void *buf, size_t len, int flags, const int *fds, size_t nfds);

/* What iso_recv_fds() saw besides the descriptors it kept. */
#define ISO_RECV_TRUNC 1 /* the datagram was longer than cap */
#define ISO_RECV_CTRUNC 2 /* control data was cut: descriptors were lost */
#define ISO_RECV_OTHER 4 /* a control message other than SCM_RIGHTS */

/*
 * Receive one datagram into buf (cap bytes) and the first `want` (at most
 * ISO_FDS_MAX) descriptors of its SCM_RIGHTS, close-on-exec, into fds;
 * *nfds says how many. Every other descriptor that arrived - past `want`,
 * or in another control message such as SCM_PIDFD - is closed before this
 * returns, so a sender cannot leave one behind. Kept descriptors are never
 * 0-2 (iso_fd_above_stdio()). *seen gets ISO_RECV_* bits.
 * flags go to recvmsg(). Returns the datagram's length, 0 at end of file,
 * or -errno (then no descriptor is kept).
 */
ssize_t iso_recv_fds(int sock, void *buf, size_t cap, int flags, int *fds, size_t want,
		     size_t *nfds, unsigned *seen);

/*
 * fd itself when it is 3 or above; else a close-on-exec duplicate at 3 or
 * above, and fd is closed. A process whose stdio was closed gets its next
 * descriptors at 0-2, where they would pass for stdio: its own next
 * write "to stderr", or a guest given "stdin". Returns the descriptor, or
 * -errno (fd closed).
 */
int iso_fd_above_stdio(int fd);

/* 1 if the limit `which` (enum iso_limit) is a size in bytes, which may be
 * written with a suffix K, M, G or T; 0 for seconds (cpu), counts
 * (nofile, nproc, pids) and CPUs (cpus). common/names.c, beside the
 * limits' names. */
int iso_limit_in_bytes(int which);

/* The smallest value of the limit `which` the helper and the policy take:
 * 1, and for cpus 10 (0.01 CPU, the kernel's smallest quota). */
uint64_t iso_limit_min(int which);

/* A limit's value as the policy writes it, so that iso_limit_parse()
 * reads it back: "unlimited", a count or seconds in digits, bytes with the
 * largest suffix that keeps it exact (4G, 1536M, 1000), CPUs with as few
 * decimals as keep it exact (1.5). */
void iso_limit_format(int which, uint64_t value, char *buf, size_t n);

/* The name of the file system whose statfs(2) f_type is `magic` ("ext4",
 * "nfs", ...), or, for one not in names.c's table, "type 0x..." in a static
 * buffer. For messages only. */
const char *iso_fs_name(unsigned long magic);

/* Close each of the n descriptors of fds that is not negative (-1, or a
 * -errno standing in its place). */
void iso_close_fds(const int *fds, size_t n);

#endif /* ISO_UTIL_H */
