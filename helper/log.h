/*
 * log.h - one syslog line per decision, for the administrator.
 *
 * Format (isospawn-helper(8)): "EVENT key=value ...", values that come from
 * the caller quoted with non-printable bytes escaped as \xHH. Override and
 * forwarded values are never logged: they may be secrets. Names are.
 * Lines go straight to syslog(3); every string that came from the caller
 * (program, paths, reasons that may quote them) passes log_quote() first.
 */
#ifndef ISO_LOG_H
#define ISO_LOG_H

#include <stddef.h>

/* Copy src into dst (n bytes, n > 0) with '"', '\\' and non-printable bytes
 * escaped, so a caller-chosen string cannot forge log lines. */
void log_quote(char *dst, size_t n, const char *src);

/* "A,B,C": the names of NAME=value entries, or "-" when there are none. */
void log_names(char *dst, size_t n, const char *const *entries);

#endif /* ISO_LOG_H */
