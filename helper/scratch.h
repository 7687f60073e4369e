/*
 * scratch.h - each guest's private directory: its cwd and default TMPDIR.
 */
#ifndef ISO_SCRATCH_H
#define ISO_SCRATCH_H

#include <stddef.h>
#include <sys/types.h>

#define ISO_SCRATCH_PATH_MAX (sizeof(ISO_SCRATCH_DIR) + 48)

/* Create (or verify) the root-only parking place for empty directories. */
int scratch_prepare(char *why, size_t n);

/*
 * Create ISO_SCRATCH_DIR/<uid>, owned by uid, mode 0700, replacing any
 * leftover of an earlier guest of that uid. The uid is leased, so the name
 * is unique among live guests. path receives the full path.
 */
int scratch_create(uid_t uid, char *path, size_t path_size, char *why,
		   size_t n);

/*
 * Remove the directory and everything in it (an empty one is parked for
 * the uid's next guest), or (keep) rename it to <uid>.kept.<time>.<id> for
 * the administrator. Runs after every process of the uid is gone. Never
 * follows a link the guest left behind.
 */
void scratch_remove(uid_t uid, int keep, unsigned id);

/* The uid's lease is being given back: remove its parked directory. */
void scratch_release(uid_t uid);

#endif /* ISO_SCRATCH_H */
