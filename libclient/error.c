/*
 * error.c - the one-line reason behind the last failure, per thread.
 */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "client.h"

#define LAST_ERROR_SIZE 512

static __thread char last_error[LAST_ERROR_SIZE] = "no error";

int iso__fail(int code, const char *fmt, ...)
{
	/* Formatted aside first: the arguments may point into last_error. */
	char line[LAST_ERROR_SIZE];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	snprintf(last_error, sizeof(last_error), "%s", line);
	return code;
}

ISO_PUBLIC const char *iso_last_error(void)
{
	return last_error;
}

ISO_PUBLIC const char *iso_strerror(int code)
{
	switch (code) {
	case 0:
		return "success";
	case -EACCES:
		return "refused by the helper's policy";
	case -EPERM:
		return "not allowed by the environment rules";
	case -ENOENT:
		return "isospawn helper not found";
	case -EPROTO:
		return "the helper speaks another protocol";
	case -ENOMEM:
		return "out of memory";
	case -EMFILE:
		return "too many open files";
	case -EIO:
		return "the helper failed";
	case -EINVAL:
		return "invalid argument";
	case -ENAMETOOLONG:
		return "path too long";
	case -E2BIG:
		return "too many items or too long";
	case -EBADF:
		return "not an open file descriptor";
	case -EAGAIN:
		return "try again later (no free guest uid, a limit reached, or the channel full)";
	case -ENOSYS:
		return "the kernel lacks a mechanism the policy requires";
	case -EPIPE:
		return "the helper or the guest is gone";
	case -EINTR:
		return "interrupted by a signal";
	case -EMSGSIZE:
		return "message too long";
	case -ENOTCONN:
		return "no message channel";
	case -ENODATA:
		return "the guest ran without a cgroup";
	case ISO_RECV_TIMEOUT:
		return "no message arrived in time";
	case ISO_RECV_EOF:
		return "the guest closed the channel";
	default:
		return "unknown isospawn error";
	}
}
