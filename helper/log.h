/*
 * log.h - one line per decision, for the administrator: to syslog, and to
 * the policy's audit-log file where it names one.
 *
 * Format (isospawn-helper(8)): "EVENT key=value ...", values that come from
 * the caller quoted with non-printable bytes escaped as \xHH (iso_quote()).
 * Override and forwarded values are never logged: they may be secrets.
 * Names are. Every line goes through log_event(), so the audit file holds
 * exactly what syslog gets.
 */
#ifndef ISO_LOG_H
#define ISO_LOG_H

#include <stddef.h>
#include <sys/types.h>

/* Open `path` for the log's lines too: below a directory checked as the
 * policy's (policy_check_path()), created root's and 0600, appended to,
 * never through a symbolic link, and refused unless it is a regular file
 * of root's that no one else may write. Returns 0 or -errno with why. */
int log_audit_open(const char *path, char *why, size_t n);

/* One line: to syslog at `priority`, and to the audit file with the time
 * (UTC) and the helper's pid, as syslog shows them. */
void log_event(int priority, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The caller as every line names it: "UID(NAME)", the account's name as
 * the account services give it, quoted (in "..." unless it is a portable
 * name); "UID" alone for a uid without one. Looked up once, here. */
void log_caller_set(uid_t uid);
const char *log_caller(void);

/* "A,B,C": the names of NAME=value entries, or "-" when there are none. */
void log_names(char *dst, size_t n, const char *const *entries);

#endif /* ISO_LOG_H */
