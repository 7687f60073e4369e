/*
 * log.c - where the helper's lines go (syslog, and the policy's audit-log
 * file), and what a line may carry: caller-derived strings quoted, the
 * names of variables (never their values). Opened in main().
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "policy.h"
#include "util.h"

static int audit_fd = -1;
static char caller[32 + 4 * LOGIN_NAME_MAX];

int log_audit_open(const char *path, char *why, size_t n)
{
	char dir[PATH_MAX], *slash;
	struct stat st;
	int fd, rc;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	slash[slash == dir ? 1 : 0] = '\0';
	/* Its directory as the policy's: no one but root can swap the file
	 * for another between the lines. */
	if ((rc = policy_check_path(dir, 1, why, n)) < 0)
		return rc;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
	if (fd < 0)
		return iso_why_errno(why, n, "audit-log %s", path);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & (S_IWGRP | S_IWOTH))) {
		close(fd);
		return iso_why(why, n, EPERM,
			       "audit-log %s: expected a regular file of root's "
			       "that no one else may write",
			       path);
	}
	audit_fd = fd;
	return 0;
}

void log_event(int priority, const char *fmt, ...)
{
	char line[4096], record[sizeof(line) + 64], stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	va_list ap;
	int len;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	syslog(priority, "%s", line);
	if (audit_fd < 0)
		return;
	if (gmtime_r(&now, &tm) == NULL ||
	    strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(stamp, sizeof(stamp), "-");
	len = snprintf(record, sizeof(record), "%s isospawn-helper[%d]: %s\n", stamp, (int)getpid(),
		       line);
	/* One write, appended whole: helpers running at once never mix
	 * their lines. A line that cannot be kept is said where it can. */
	if (write(audit_fd, record, (size_t)len) != len)
		syslog(LOG_ERR, "audit-log: a line was not written: %s", strerror(errno));
}

void log_caller_set(uid_t uid)
{
	struct passwd *pw = getpwuid(uid);
	char quoted[4 * LOGIN_NAME_MAX];
	const char *name = pw != NULL ? pw->pw_name : NULL;

	if (name == NULL || strlen(name) > LOGIN_NAME_MAX) {
		snprintf(caller, sizeof(caller), "%u", (unsigned)uid);
		return;
	}
	iso_quote(quoted, sizeof(quoted), name);
	/* A portable name (POSIX's set) as it is; any other in quotes. */
	if (name[0] != '\0' && strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					    "0123456789._-") == strlen(name))
		snprintf(caller, sizeof(caller), "%u(%s)", (unsigned)uid, quoted);
	else
		snprintf(caller, sizeof(caller), "%u(\"%s\")", (unsigned)uid, quoted);
}

const char *log_caller(void)
{
	return caller;
}

void log_names(char *dst, size_t n, const char *const *entries)
{
	size_t o = 0;

	snprintf(dst, n, "-");
	for (; entries && *entries; entries++) {
		int len = (int)strcspn(*entries, "=");

		/* Whole names only: room for this one, a comma and the NUL. */
		if (o + (size_t)len + 2 >= n)
			break;
		o += (size_t)snprintf(dst + o, n - o, "%s%.*s", o ? "," : "", len, *entries);
	}
}
