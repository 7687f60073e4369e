/*
 * names.c - names of limits, outcomes and stages, shared by the library
 * (exported), the helper (logs, messages) and the CLI (messages, JSON).
 */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "isospawn.h"
#include "util.h"

static const char *const limit_names[ISO_LIMIT_COUNT] = {
	[ISO_LIMIT_CPU] = "cpu",       [ISO_LIMIT_AS] = "as",
	[ISO_LIMIT_NOFILE] = "nofile", [ISO_LIMIT_NPROC] = "nproc",
	[ISO_LIMIT_FSIZE] = "fsize",   [ISO_LIMIT_STACK] = "stack",
	[ISO_LIMIT_SCRATCH] = "scratch", [ISO_LIMIT_SHM] = "shm",
};

static const char *const outcome_names[] = {
	[ISO_OUTCOME_RUNNING] = "running",   [ISO_OUTCOME_EXITED] = "exited",
	[ISO_OUTCOME_SIGNALED] = "signaled", [ISO_OUTCOME_TIMED_OUT] = "timed_out",
	[ISO_OUTCOME_LIMIT] = "limit",	     [ISO_OUTCOME_FAILED] = "failed",
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
	return which != ISO_LIMIT_CPU && which != ISO_LIMIT_NOFILE && which != ISO_LIMIT_NPROC;
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
