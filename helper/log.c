/*
 * log.c - what a syslog line may carry: caller-derived strings quoted, and
 * the names of variables (never their values). The helper logs only
 * through syslog(3), opened in main().
 */
#include "config.h"

#include <stdio.h>
#include <string.h>

#include "log.h"

void log_quote(char *dst, size_t n, const char *src)
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
