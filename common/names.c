/*
 * names.c - names of limits, outcomes, stages and file systems, and the
 * spelling of a limit's value, shared by the library (exported), the
 * helper (logs, messages, the policy) and the CLI (messages, JSON,
 * --limit).
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/magic.h>

#include "isospawn.h"
#include "util.h"

static const char *const limit_names[ISO_LIMIT_COUNT] = {
	[ISO_LIMIT_CPU] = "cpu",         [ISO_LIMIT_AS] = "as",       [ISO_LIMIT_NOFILE] = "nofile",
	[ISO_LIMIT_NPROC] = "nproc",     [ISO_LIMIT_FSIZE] = "fsize", [ISO_LIMIT_STACK] = "stack",
	[ISO_LIMIT_SCRATCH] = "scratch", [ISO_LIMIT_SHM] = "shm",     [ISO_LIMIT_MEMORY] = "memory",
	[ISO_LIMIT_PIDS] = "pids",       [ISO_LIMIT_CPUS] = "cpus",
};

static const char *const outcome_names[] = {
	[ISO_OUTCOME_RUNNING] = "running",   [ISO_OUTCOME_EXITED] = "exited",
	[ISO_OUTCOME_SIGNALED] = "signaled", [ISO_OUTCOME_TIMED_OUT] = "timed_out",
	[ISO_OUTCOME_LIMIT] = "limit",       [ISO_OUTCOME_FAILED] = "failed",
};

static const char *const stage_names[] = {
	[ISO_STAGE_NONE] = "none",
	[ISO_STAGE_POLICY] = "policy",
	[ISO_STAGE_CREDENTIALS] = "credentials",
	[ISO_STAGE_CONFINEMENT] = "confinement",
	[ISO_STAGE_EXEC] = "exec",
};

ISO_PUBLIC const char *iso_limit_name(enum iso_limit which)
{
	if ((unsigned)which >= ISO_LIMIT_COUNT)
		return NULL;
	return limit_names[which];
}

ISO_PUBLIC int iso_limit_from_name(const char *name)
{
	for (int i = 0; name && i < ISO_LIMIT_COUNT; i++)
		if (strcmp(name, limit_names[i]) == 0)
			return i;
	return -EINVAL;
}

int iso_limit_in_bytes(int which)
{
	return which == ISO_LIMIT_AS || which == ISO_LIMIT_FSIZE || which == ISO_LIMIT_STACK ||
	       which == ISO_LIMIT_SCRATCH || which == ISO_LIMIT_SHM || which == ISO_LIMIT_MEMORY;
}

uint64_t iso_limit_min(int which)
{
	/* cpu.max takes a quota of 1 ms at least, of its 100 ms period. */
	return which == ISO_LIMIT_CPUS ? 10 : 1;
}

/* cpus: CPUs with up to three decimals, as thousandths ("1.5": 1500). */
static int parse_cpus(const char *text, uint64_t *value)
{
	size_t whole = strspn(text, "0123456789"), frac = 0;
	unsigned long long number, milli = 0;

	if (text[whole] == '.')
		frac = strspn(text + whole + 1, "0123456789");
	if ((whole == 0 && frac == 0) || frac > 3 ||
	    text[whole + (text[whole] == '.' ? 1 + frac : 0)] != '\0' ||
	    (text[whole] == '.' && frac == 0))
		return -EINVAL;
	errno = 0;
	number = whole ? strtoull(text, NULL, 10) : 0;
	for (size_t i = 0; i < 3; i++)
		milli = milli * 10 + (i < frac ? (unsigned)(text[whole + 1 + i] - '0') : 0);
	if (errno == ERANGE || number > (UINT64_MAX - milli) / 1000)
		return -ERANGE;
	*value = (uint64_t)number * 1000 + milli;
	return 0;
}

/* The one spelling of a limit's value, for the policy, the CLI and the
 * Python binding alike. Each caller adds its own policy: the helper refuses
 * 0, and a number as large as RLIM_INFINITY, which only the word
 * "unlimited" may mean. */
ISO_PUBLIC int iso_limit_parse(const char *text, enum iso_limit which, uint64_t *value)
{
	static const char units[] = "KMGT"; /* powers of 1024 */
	const char *suffix;
	const char *unit;
	unsigned long long number;
	unsigned shift = 0;

	if (text == NULL || (unsigned)which >= ISO_LIMIT_COUNT)
		return -EINVAL;
	if (strcmp(text, "unlimited") == 0) {
		*value = UINT64_MAX;
		return 0;
	}
	if (which == ISO_LIMIT_CPUS)
		return parse_cpus(text, value);
	/* Digits only: strtoull alone would also take " 1", "+1" and "-1". */
	suffix = text + strspn(text, "0123456789");
	if (suffix == text)
		return -EINVAL;
	/* Seconds and counts take no suffix. */
	if (*suffix != '\0') {
		unit = strchr(units, *suffix);
		if (!iso_limit_in_bytes(which) || unit == NULL || suffix[1] != '\0')
			return -EINVAL;
		shift = 10 * (unsigned)(unit - units + 1);
	}
	errno = 0;
	number = strtoull(text, NULL, 10);
	if (errno == ERANGE || number > UINT64_MAX >> shift)
		return -ERANGE;
	*value = (uint64_t)number << shift;
	return 0;
}

void iso_limit_format(int which, uint64_t value, char *buf, size_t n)
{
	static const char suffixes[] = "KMGT";
	int s = 0;

	if (value == UINT64_MAX) {
		snprintf(buf, n, "unlimited");
		return;
	}
	if (which == ISO_LIMIT_CPUS) {
		int len = snprintf(buf, n, "%llu.%03llu", (unsigned long long)(value / 1000),
				   (unsigned long long)(value % 1000));

		/* "1.5", "2": as few decimals as keep it exact. */
		while (len > 0 && (size_t)len < n && buf[len - 1] == '0')
			buf[--len] = '\0';
		if (len > 0 && (size_t)len < n && buf[len - 1] == '.')
			buf[--len] = '\0';
		return;
	}
	while (iso_limit_in_bytes(which) && s < 4 && value != 0 && value % 1024 == 0) {
		value /= 1024;
		s++;
	}
	if (s == 0)
		snprintf(buf, n, "%llu", (unsigned long long)value);
	else
		snprintf(buf, n, "%llu%c", (unsigned long long)value, suffixes[s - 1]);
}

ISO_PUBLIC const char *iso_outcome_name(enum iso_outcome outcome)
{
	if ((unsigned)outcome >= COUNT(outcome_names))
		return NULL;
	return outcome_names[outcome];
}

ISO_PUBLIC const char *iso_stage_name(enum iso_stage stage)
{
	if ((unsigned)stage >= COUNT(stage_names))
		return "none";
	return stage_names[stage];
}

/* The file systems a caller may find it cannot lend (grants are idmapped),
 * and the common ones it can. */
static const struct {
	unsigned long magic;
	const char *name;
} fs_names[] = {
	{ EXT4_SUPER_MAGIC, "ext4" },   { XFS_SUPER_MAGIC, "xfs" },
	{ BTRFS_SUPER_MAGIC, "btrfs" }, { TMPFS_MAGIC, "tmpfs" },
	{ F2FS_SUPER_MAGIC, "f2fs" },   { OVERLAYFS_SUPER_MAGIC, "overlay" },
	{ NFS_SUPER_MAGIC, "nfs" },     { FUSE_SUPER_MAGIC, "fuse" },
	{ V9FS_MAGIC, "9p" },           { SMB2_SUPER_MAGIC, "cifs" },
	{ CEPH_SUPER_MAGIC, "ceph" },   { RAMFS_MAGIC, "ramfs" },
	{ SQUASHFS_MAGIC, "squashfs" }, { MSDOS_SUPER_MAGIC, "vfat" },
	{ EXFAT_SUPER_MAGIC, "exfat" }, { PROC_SUPER_MAGIC, "proc" },
	{ SYSFS_MAGIC, "sysfs" },       { CGROUP2_SUPER_MAGIC, "cgroup2" },
};

const char *iso_fs_name(unsigned long magic)
{
	static char unknown[32];

	for (size_t i = 0; i < COUNT(fs_names); i++)
		if (fs_names[i].magic == magic)
			return fs_names[i].name;
	snprintf(unknown, sizeof(unknown), "type 0x%lx", magic);
	return unknown;
}
