/*
 * env.h - the checks behind iso_build_env(), shared with the library's spec
 * builder and the helper's policy parser so that every side judges a
 * variable name or value the same way.
 *
 * Names are passed as (pointer, length) because callers usually hold the
 * name part of a "NAME=value" string; they need not be NUL-terminated.
 * None of these functions reads the process environment or keeps state.
 */
#ifndef ISO_ENV_H
#define ISO_ENV_H

#include <stddef.h>

#include "isospawn.h"

/* Added to the guest environment by the helper alone, never by a caller. */
#define ISO_ENV_CHANNEL_NAME "ISOSPAWN_CHANNEL_FD"

/* 1 if name matches [A-Za-z_][A-Za-z0-9_]* and is 1..ISO_ENV_NAME_MAX
 * bytes long, else 0. */
int iso_env_name_valid(const char *name, size_t len);

/* 1 if name is one of ISO_FORWARDED_NAMES, else 0. */
int iso_env_is_forwarded_name(const char *name, size_t len);

/* 1 if name is loader-level: on glibc's secure-mode list (unsecvars.h) or
 * starting with "LD_" or "MALLOC_", else 0. */
int iso_env_is_unsafe_name(const char *name, size_t len);

/* 1 if name makes an interpreter or tool run code of the caller's choosing
 * (the list under ISO_ENV_PROGRAMS_RESTRICTED in isospawn.h; GIT_CONFIG by
 * prefix), else 0. PATH is not on it: iso_build_env() adds it under that
 * flag. */
int iso_env_is_code_hook_name(const char *name, size_t len);

/*
 * Check a value for the variable `name` (NUL-terminated value): at most
 * ISO_ENV_VALUE_MAX bytes; never beginning with "()"; for LANG, LANGUAGE,
 * LC_*, PYTHONIOENCODING and TERM no '/', '%' or ".."; for TMPDIR an
 * absolute path without a ".." component; for TZ sudo's tz_is_safe() rules
 * (after an optional ':', printable without spaces, no ".." component,
 * shorter than PATH_MAX, absolute only beneath ISO_ENV_ZONEINFO "/").
 * Returns 0; -E2BIG too long; -EINVAL refused content. On failure `why` (if
 * not NULL) names the variable, never the value.
 */
#define ISO_ENV_ZONEINFO "/usr/share/zoneinfo"

int iso_env_check_value(const char *name, size_t len, const char *value, char *why,
			size_t why_size);

#endif /* ISO_ENV_H */
