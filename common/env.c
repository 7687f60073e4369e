/*
 * env.c - build a guest environment from nothing: iso_build_env().
 *
 * The helper runs this as root on what a hostile client sent, so:
 *  - The result MUST hold only forwarded names that are set in the source,
 *    PATH, and overrides that passed every check; no other source entry may
 *    ever reach it (an allow-list: what nobody anticipated is withheld).
 *  - This file MUST NOT read the process environment, keep state or do I/O.
 *  - A refusal MUST name the variable and MUST NOT quote a value: values may
 *    be secrets and messages end up in syslog.
 *  - On failure nothing is allocated and *out is NULL.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "util.h"

static const char *const forwarded_names[] = { ISO_FORWARDED_NAMES };
#define FORWARDED_COUNT COUNT(forwarded_names)
_Static_assert(FORWARDED_COUNT <= 8 * sizeof(unsigned), "the forward set is kept as a bit mask");

/*
 * glibc's secure-mode list: UNSECURE_ENVVARS in sysdeps/generic/unsecvars.h
 * as of glibc 2.35 (2.36 dropped LD_USE_LOAD_BIAS), which ld.so strips for
 * setuid programs because each one steers the loader or libc into reading
 * attacker-chosen files. glibc lists GLIBC_TUNABLES only in builds without
 * tunables (otherwise it filters it by itself); we refuse it always.
 * iso_env_is_unsafe_name() adds every LD_* and MALLOC_* name on top.
 */
static const char *const unsafe_names[] = {
	"GCONV_PATH",
	"GETCONF_DIR",
	"GLIBC_TUNABLES",
	"HOSTALIASES",
	"LD_AUDIT",
	"LD_DEBUG",
	"LD_DEBUG_OUTPUT",
	"LD_DYNAMIC_WEAK",
	"LD_HWCAP_MASK",
	"LD_LIBRARY_PATH",
	"LD_ORIGIN_PATH",
	"LD_PRELOAD",
	"LD_PROFILE",
	"LD_SHOW_AUXV",
	"LD_USE_LOAD_BIAS",
	"LOCALDOMAIN",
	"LOCPATH",
	"MALLOC_TRACE",
	"NIS_PATH",
	"NLSPATH",
	"RESOLV_HOST_CONF",
	"RES_OPTIONS",
	"TMPDIR",
	"TZDIR",
	NULL,
};

/*
 * Names that make an interpreter or tool run code of the caller's choosing
 * (sudo's env tables treat them so): a restricted `programs` list is no
 * boundary while they pass as overrides. GIT_CONFIG* by prefix in
 * iso_env_is_code_hook_name().
 */
static const char *const code_hook_names[] = {
	"BASH_ENV",
	"ENV",
	"SHELLOPTS",
	"BASHOPTS",
	"PS4",
	"IFS",
	"PERL5LIB",
	"PERL5OPT",
	"PERLLIB",
	"PYTHONSTARTUP",
	"PYTHONINSPECT",
	"PYTHONUSERBASE",
	"RUBYLIB",
	"RUBYOPT",
	"NODE_OPTIONS",
	"NODE_PATH",
	"JAVA_TOOL_OPTIONS",
	"_JAVA_OPTIONS",
	"CLASSPATH",
	"TERMINFO",
	"TERMINFO_DIRS",
	NULL,
};

static const char guest_path[] = "PATH=" ISO_GUEST_PATH;

/* Forwarded names, PATH, and at most one variable per override. */
#define VARS_MAX (FORWARDED_COUNT + 1 + ISO_ENV_OVERRIDES_MAX)

/* Room for a name as shown in a message; see shown_name(). */
#define SHOWN_NAME_MAX 64
#define SHOWN_NAME_SIZE (SHOWN_NAME_MAX + sizeof("..."))

/*
 * A name as it may appear in a message: refused names come from the client,
 * so show at most SHOWN_NAME_MAX bytes and only printable ASCII, lest a
 * hostile name forge a second log line.
 */
static const char *shown_name(char buf[SHOWN_NAME_SIZE], const char *name, size_t len)
{
	size_t shown = len < SHOWN_NAME_MAX ? len : SHOWN_NAME_MAX;
	size_t i;

	if (len == 0)
		return "(empty name)";
	for (i = 0; i < shown; i++)
		buf[i] = name[i] > ' ' && name[i] < 0x7f ? name[i] : '?';
	snprintf(buf + shown, SHOWN_NAME_SIZE - shown, "%s", len > shown ? "..." : "");
	return buf;
}

static int name_is(const char *name, size_t len, const char *want)
{
	return strlen(want) == len && memcmp(name, want, len) == 0;
}

static int name_has_prefix(const char *name, size_t len, const char *prefix)
{
	size_t plen = strlen(prefix);

	return len >= plen && memcmp(name, prefix, plen) == 0;
}

/* A NULL list lists nothing. */
static int list_has(const char *const *list, const char *name, size_t len)
{
	for (; list != NULL && *list != NULL; list++)
		if (name_is(name, len, *list))
			return 1;
	return 0;
}

/* Index in forwarded_names, or -1. */
static int forwarded_index(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < FORWARDED_COUNT; i++)
		if (name_is(name, len, forwarded_names[i]))
			return (int)i;
	return -1;
}

/* Byte ranges spelled out, not isalpha(): the locale must not matter. */
int iso_env_name_valid(const char *name, size_t len)
{
	size_t i;

	if (len == 0 || len > ISO_ENV_NAME_MAX)
		return 0;
	for (i = 0; i < len; i++) {
		char c = name[i];

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_' ||
		      (i > 0 && c >= '0' && c <= '9')))
			return 0;
	}
	return 1;
}

int iso_env_is_forwarded_name(const char *name, size_t len)
{
	return forwarded_index(name, len) >= 0;
}

int iso_env_is_unsafe_name(const char *name, size_t len)
{
	return name_has_prefix(name, len, "LD_") || name_has_prefix(name, len, "MALLOC_") ||
	       list_has(unsafe_names, name, len);
}

int iso_env_is_code_hook_name(const char *name, size_t len)
{
	return name_has_prefix(name, len, "GIT_CONFIG") || list_has(code_hook_names, name, len);
}

/* Locale, codec and terminal names: a '/', '%' or ".." would let the value
 * pick a locale, codec or terminfo file outside the system directories. */
static int is_locale_name(const char *name, size_t len)
{
	return name_is(name, len, "LANG") || name_is(name, len, "LANGUAGE") ||
	       name_has_prefix(name, len, "LC_") || name_is(name, len, "PYTHONIOENCODING") ||
	       name_is(name, len, "TERM");
}

/* A whole ".." component: "/tmp/..x" is a plain name. */
static int has_dotdot_component(const char *path)
{
	const char *p;

	for (p = strstr(path, ".."); p != NULL; p = strstr(p + 1, ".."))
		if ((p == path || p[-1] == '/') && (p[2] == '\0' || p[2] == '/'))
			return 1;
	return 0;
}

/* sudo's tz_is_safe(): glibc reads a TZ naming a file (":x", "/x") as a
 * zone file, so only names beneath the zoneinfo directory are safe. */
static int tz_is_safe(const char *value)
{
	const char *zoneinfo = ISO_ENV_ZONEINFO "/";

	if (value[0] == ':')
		value++;
	if (value[0] == '/' && strncmp(value, zoneinfo, strlen(zoneinfo)) != 0)
		return 0;
	for (const unsigned char *c = (const unsigned char *)value; *c; c++)
		if (*c <= ' ' || *c >= 0x7f)
			return 0;
	return strlen(value) < 4096 && !has_dotdot_component(value);
}

int iso_env_check_value(const char *name, size_t len, const char *value, char *why, size_t why_size)
{
	char shown[SHOWN_NAME_SIZE];

	if (strnlen(value, ISO_ENV_VALUE_MAX + 1) > ISO_ENV_VALUE_MAX)
		return iso_why(why, why_size, E2BIG, "%s: value longer than %d bytes",
			       shown_name(shown, name, len), ISO_ENV_VALUE_MAX);
	/* What bash once imported as a function definition (Shellshock). */
	if (strncmp(value, "()", 2) == 0)
		return iso_why(why, why_size, EINVAL, "%s: value may not begin with '()'",
			       shown_name(shown, name, len));
	if (is_locale_name(name, len) &&
	    (strpbrk(value, "/%") != NULL || strstr(value, "..") != NULL))
		return iso_why(why, why_size, EINVAL, "%s: value may not contain '/', '%%' or '..'",
			       shown_name(shown, name, len));
	if (name_is(name, len, "TMPDIR") && (value[0] != '/' || has_dotdot_component(value)))
		return iso_why(why, why_size, EINVAL,
			       "TMPDIR: value must be an absolute path without "
			       "'..' components");
	if (name_is(name, len, "TZ") && !tz_is_safe(value))
		return iso_why(why, why_size, EINVAL,
			       "TZ: value must be printable, without spaces or "
			       "'..' components, and absolute only beneath " ISO_ENV_ZONEINFO);
	return 0;
}

/* The effective forward list as a bit mask over forwarded_names. */
static int forward_mask(const struct iso_env_rules *rules, unsigned *mask, char *why,
			size_t why_size)
{
	const char *const *name;
	char shown[SHOWN_NAME_SIZE];

	if (rules == NULL || rules->forward == NULL) {
		*mask = (1u << FORWARDED_COUNT) - 1;
		return 0;
	}
	*mask = 0;
	for (name = rules->forward; *name != NULL; name++) {
		size_t len = strlen(*name);
		int i = forwarded_index(*name, len);

		if (i < 0)
			return iso_why(why, why_size, EINVAL,
				       "forward list: %s is not a forwardable "
				       "variable",
				       shown_name(shown, *name, len));
		*mask |= 1u << i;
	}
	return 0;
}

/*
 * Pick the forwarded entries out of the source into taken[] (pointers to
 * the source's "NAME=value" strings), first occurrence winning as with
 * getenv(). Strict mode refuses malformed entries, duplicates and names
 * outside ISO_FORWARDED_NAMES instead of skipping them; a name the rules'
 * forward list excludes is withheld in both modes, since the client picks
 * by ISO_FORWARDED_NAMES and cannot know the policy.
 */
static int take_source(const char *const *source, unsigned mask, unsigned flags,
		       const char *taken[FORWARDED_COUNT], char *why, size_t why_size)
{
	int strict = (flags & ISO_ENV_STRICT_SOURCE) != 0;
	char shown[SHOWN_NAME_SIZE];
	unsigned seen = 0;
	size_t n;

	for (n = 0; source != NULL && source[n] != NULL; n++) {
		const char *entry = source[n], *eq = strchr(entry, '=');
		size_t len = eq != NULL ? (size_t)(eq - entry) : 0;
		const char *problem = NULL;
		int code = -EINVAL, i = -1, rc;

		if (eq == NULL || !iso_env_name_valid(entry, len))
			problem = "malformed name";
		else if ((i = forwarded_index(entry, len)) < 0)
			problem = "not a forwarded variable", code = -EPERM;
		else if (seen & (1u << i))
			problem = "given twice";
		if (problem != NULL && !strict)
			continue;
		/* Without '=' the entry may be a bare secret: not shown. */
		if (problem != NULL && eq == NULL)
			return iso_why(why, why_size, -code, "source entry %zu: not NAME=value",
				       n + 1);
		if (problem != NULL)
			return iso_why(why, why_size, -code, "source %s: %s",
				       shown_name(shown, entry, len), problem);
		seen |= 1u << i;
		if (!(mask & (1u << i)))
			continue;
		rc = iso_env_check_value(entry, len, eq + 1, why, why_size);
		if (rc < 0)
			return rc;
		taken[i] = entry;
	}
	return 0;
}

/* One override against the rules; duplicates are the caller's check. */
static int check_override(const char *entry, size_t index, const struct iso_env_rules *rules,
			  unsigned mask, unsigned flags, char *why, size_t why_size)
{
	const char *eq = strchr(entry, '=');
	size_t len = eq != NULL ? (size_t)(eq - entry) : 0;
	const char *const *listed = rules != NULL ? rules->overrides : NULL;
	int unsafe_ok, fwd, on_forward_list;
	char shown[SHOWN_NAME_SIZE];
	const char *name = shown_name(shown, entry, len);

	if (eq == NULL)
		return iso_why(why, why_size, EINVAL, "override %zu: not NAME=value", index + 1);
	if (!iso_env_name_valid(entry, len))
		return iso_why(why, why_size, EINVAL, "override %s: malformed name", name);
	if (name_is(entry, len, ISO_ENV_CHANNEL_NAME))
		return iso_why(why, why_size, EPERM, "override %s: reserved for the helper", name);
	if (listed != NULL && !list_has(listed, entry, len))
		return iso_why(why, why_size, EPERM, "override %s: not allowed by policy", name);
	/* Where the policy picks the programs, these would pick what the
	 * programs run; only a list naming them allows them. */
	if ((flags & ISO_ENV_PROGRAMS_RESTRICTED) && listed == NULL &&
	    (name_is(entry, len, "PATH") || iso_env_is_code_hook_name(entry, len)))
		return iso_why(why, why_size, EPERM,
			       "override %s: steers what a restricted program "
			       "runs; not allowed unless the policy lists it",
			       name);
	unsafe_ok = rules != NULL && list_has(rules->unsafe_allowed, entry, len);
	fwd = forwarded_index(entry, len);
	on_forward_list = fwd >= 0 && (mask & (1u << fwd));
	/* A forwarded name could have arrived through the source anyway. */
	if (iso_env_is_unsafe_name(entry, len) && !on_forward_list && !unsafe_ok)
		return iso_why(why, why_size, EPERM,
			       "override %s: loader-level variable not allowed "
			       "by policy",
			       name);
	/* An administrator who narrowed forwarding is not bypassed by an
	 * override, unless the policy names the variable itself. */
	if (fwd >= 0 && !on_forward_list && !unsafe_ok && !list_has(listed, entry, len))
		return iso_why(why, why_size, EPERM, "override %s: not forwarded by policy", name);
	return iso_env_check_value(entry, len, eq + 1, why, why_size);
}

/* The first of vars[0..count) holding this name, or count if none. */
static size_t find_var(const char *const *vars, size_t count, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < count; i++)
		if (strcspn(vars[i], "=") == len && memcmp(vars[i], name, len) == 0)
			return i;
	return count;
}

static int check_overrides(const char *const *overrides, const struct iso_env_rules *rules,
			   unsigned mask, unsigned flags, char *why, size_t why_size)
{
	char shown[SHOWN_NAME_SIZE];
	size_t i;

	for (i = 0; overrides != NULL && overrides[i] != NULL; i++) {
		size_t len;
		int rc;

		if (i == ISO_ENV_OVERRIDES_MAX)
			return iso_why(why, why_size, E2BIG, "more than %d overrides",
				       ISO_ENV_OVERRIDES_MAX);
		rc = check_override(overrides[i], i, rules, mask, flags, why, why_size);
		if (rc < 0)
			return rc;
		len = strcspn(overrides[i], "=");
		if (find_var(overrides, i, overrides[i], len) < i)
			return iso_why(why, why_size, EINVAL, "override %s: given twice",
				       shown_name(shown, overrides[i], len));
	}
	return 0;
}

/*
 * Everything is validated by now, so each entry is at most
 * ISO_ENV_NAME_MAX + 1 + ISO_ENV_VALUE_MAX bytes and there are at most
 * VARS_MAX of them: the size sum cannot overflow.
 */
static int assemble(const char *const taken[FORWARDED_COUNT], const char *const *overrides,
		    char ***out)
{
	const char *vars[VARS_MAX];
	size_t count = 0, i;
	char **env;

	for (i = 0; i < FORWARDED_COUNT; i++)
		if (taken[i] != NULL)
			vars[count++] = taken[i];
	vars[count++] = guest_path;
	for (i = 0; overrides != NULL && overrides[i] != NULL; i++) {
		size_t len = strcspn(overrides[i], "=");
		size_t at = find_var(vars, count, overrides[i], len);

		vars[at] = overrides[i];
		if (at == count)
			count++;
	}

	env = iso_strv_new(vars, count);
	if (env == NULL)
		return -ENOMEM;
	*out = env;
	return 0;
}

ISO_PUBLIC int iso_build_env(const char *const *source, const char *const *overrides,
			     const struct iso_env_rules *rules, unsigned flags, char ***out,
			     char *why, size_t why_size)
{
	const char *taken[FORWARDED_COUNT] = { NULL };
	unsigned mask;
	int rc;

	if (why != NULL && why_size > 0)
		why[0] = '\0';
	if (out == NULL)
		return iso_why(why, why_size, EINVAL, "no place for the result");
	*out = NULL;
	if (flags & ~(unsigned)(ISO_ENV_STRICT_SOURCE | ISO_ENV_PROGRAMS_RESTRICTED))
		return iso_why(why, why_size, EINVAL, "unknown flags %#x", flags);
	rc = forward_mask(rules, &mask, why, why_size);
	if (rc == 0)
		rc = take_source(source, mask, flags, taken, why, why_size);
	if (rc == 0)
		rc = check_overrides(overrides, rules, mask, flags, why, why_size);
	if (rc == 0 && assemble(taken, overrides, out) < 0)
		rc = iso_why(why, why_size, ENOMEM, "out of memory");
	return rc;
}
