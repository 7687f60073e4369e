/*
 * util.c - shared primitives: reasons, quoting, the path normal form,
 * descriptor passing. Linked into the setuid helper: every line here runs
 * as root.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util.h"
#include "wire.h"

/* Linux 6.5 (SO_PASSPIDFD); older headers lack the name. */
#ifndef SCM_PIDFD
#define SCM_PIDFD 0x04
#endif

_Static_assert(ISO_WIRE_PATH_MAX == PATH_MAX,
	       "the wire carries exactly the paths the normal form allows");

/* ---- Reasons -------------------------------------------------------- */

int iso_why(char *why, size_t n, int err, const char *fmt, ...)
{
	va_list ap;

	if (why != NULL && n > 0) {
		va_start(ap, fmt);
		vsnprintf(why, n, fmt, ap);
		va_end(ap);
	}
	return -err;
}

int iso_why_errno(char *why, size_t n, const char *fmt, ...)
{
	/* First: formatting may change errno. */
	int err = errno;
	va_list ap;
	size_t used;

	if (why != NULL && n > 0) {
		va_start(ap, fmt);
		vsnprintf(why, n, fmt, ap);
		va_end(ap);
		used = strlen(why);
		snprintf(why + used, n - used, ": %s", strerror(err));
	}
	return -err;
}

/* ---- Quoting --------------------------------------------------------- */

void iso_quote(char *dst, size_t n, const char *src)
{
	size_t o = 0;

	for (const unsigned char *s = (const unsigned char *)src; *s; s++) {
		size_t len = *s < 0x20 || *s >= 0x7f || *s == '"' || *s == '\\' ? 4 : 1;

		if (o + len >= n)
			break;
		if (len == 4)
			snprintf(dst + o, n - o, "\\x%02x", *s);
		else
			dst[o] = (char)*s;
		o += len;
	}
	dst[o] = '\0';
}

/* ---- Paths ---------------------------------------------------------- */

unsigned char iso_control_byte(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return (unsigned char)s[i];
	return 0;
}

int iso_path_beneath(const char *path, const char *dir)
{
	size_t len = strlen(dir);

	/* In normal form only "/" ends in '/'. */
	return strncmp(path, dir, len) == 0 &&
	       (path[len] == '\0' || path[len] == '/' || dir[len - 1] == '/');
}

int iso_path_check(const char *path, enum iso_path_kind kind, const char **fault)
{
	const char *unused;

	if (fault == NULL)
		fault = &unused;
	if (path == NULL) {
		*fault = "no path given";
		return -EINVAL;
	}
	if (strnlen(path, PATH_MAX) == PATH_MAX) {
		*fault = "path of 4096 (PATH_MAX) bytes or more";
		return -ENAMETOOLONG;
	}
	if (iso_control_byte(path, strlen(path)) != 0) {
		*fault = "path with a control byte";
		return -EINVAL;
	}
	if (path[0] != '/') {
		*fault = "not an absolute path";
		return -EINVAL;
	}
	if (path[1] == '\0' && kind == ISO_PATH_FILE) {
		*fault = "a directory, not a program";
		return -EINVAL;
	}
	if (path[1] == '\0')
		return 0;
	for (const char *slash = path; *slash != '\0';) {
		const char *name = slash + 1;
		const char *end = strchrnul(name, '/');
		size_t len = (size_t)(end - name);

		if (len == 0) {
			*fault = "empty component (\"//\" or a trailing '/')";
			return -EINVAL;
		}
		if ((len == 1 && name[0] == '.') ||
		    (len == 2 && name[0] == '.' && name[1] == '.')) {
			*fault = "\".\" or \"..\" component";
			return -EINVAL;
		}
		slash = end;
	}
	return 0;
}

/* ---- String vectors -------------------------------------------------- */

char **iso_strv_new(const char *const *strings, size_t count)
{
	size_t size = (count + 1) * sizeof(char *);
	char **strv, *text;

	for (size_t i = 0; i < count; i++)
		size += strlen(strings[i]) + 1;
	strv = malloc(size);
	if (strv == NULL)
		return NULL;
	text = (char *)(strv + count + 1);
	for (size_t i = 0; i < count; i++) {
		strv[i] = text;
		text = stpcpy(text, strings[i]) + 1;
	}
	strv[count] = NULL;
	return strv;
}

/* ---- Descriptors ------------------------------------------------------ */

/* Room for ISO_FDS_MAX descriptors, aligned for struct cmsghdr. */
union fd_control {
	char buf[CMSG_SPACE(ISO_FDS_MAX * sizeof(int))];
	struct cmsghdr align;
};

ssize_t iso_send_fds(int sock, const void *buf, size_t len, int flags, const int *fds, size_t nfds)
{
	union fd_control ctl;
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t sent;

	if (nfds > ISO_FDS_MAX)
		return -EINVAL;
	if (nfds > 0) {
		struct cmsghdr *c;

		memset(&ctl, 0, sizeof(ctl));
		mh.msg_control = ctl.buf;
		mh.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
		c = CMSG_FIRSTHDR(&mh);
		c->cmsg_level = SOL_SOCKET;
		c->cmsg_type = SCM_RIGHTS;
		c->cmsg_len = CMSG_LEN(nfds * sizeof(int));
		memcpy(CMSG_DATA(c), fds, nfds * sizeof(int));
	}
	do
		sent = sendmsg(sock, &mh, flags | MSG_NOSIGNAL);
	while (sent < 0 && errno == EINTR);
	return sent < 0 ? -errno : sent;
}

/* The control messages that install descriptors in the receiver. */
static int carries_fds(const struct cmsghdr *c)
{
	return c->cmsg_level == SOL_SOCKET &&
	       (c->cmsg_type == SCM_RIGHTS || c->cmsg_type == SCM_PIDFD);
}

ssize_t iso_recv_fds(int sock, void *buf, size_t cap, int flags, int *fds, size_t want,
		     size_t *nfds, unsigned *seen)
{
	union fd_control ctl;
	struct iovec iov = { .iov_base = buf, .iov_len = cap };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = ctl.buf,
			     .msg_controllen = sizeof(ctl.buf) };
	ssize_t len;

	*nfds = 0;
	*seen = 0;
	len = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
	if (len < 0)
		return -errno;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
		int rights = c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS;
		size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		if (!rights)
			*seen |= ISO_RECV_OTHER;
		for (size_t i = 0; carries_fds(c) && i < count; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(fd));
			if (rights && *nfds < want && *nfds < ISO_FDS_MAX)
				fds[(*nfds)++] = iso_fd_above_stdio(fd);
			else
				close(fd);
		}
	}
	for (size_t i = 0; i < *nfds; i++) {
		if (fds[i] < 0) {
			int err = -fds[i];

			iso_close_fds(fds, *nfds);
			*nfds = 0;
			return -err;
		}
	}
	if (mh.msg_flags & MSG_TRUNC)
		*seen |= ISO_RECV_TRUNC;
	if (mh.msg_flags & MSG_CTRUNC)
		*seen |= ISO_RECV_CTRUNC;
	return len;
}

int iso_fd_above_stdio(int fd)
{
	int high;

	if (fd > STDERR_FILENO)
		return fd;
	high = fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
	if (high < 0)
		high = -errno;
	close(fd);
	return high;
}

void iso_close_fds(const int *fds, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}
