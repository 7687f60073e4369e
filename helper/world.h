/*
 * world.h - the guest's file system: a mount namespace whose root is built,
 * not inherited (isospawn.conf(5), "THE GUEST'S TREE").
 *
 * Once per connection world_prepare() builds a template namespace with
 * everything the rule's guests share; each reaper then joins a copy of it
 * (world_enter) and adds only its own /proc, /tmp, /dev/shm, passwd and
 * group files and the request's grants.
 */
#ifndef ISO_WORLD_H
#define ISO_WORLD_H

#include <stddef.h>
#include <sys/types.h>

#include "creds.h"
#include "request.h"
#include "policy.h"

struct iso_world {
	int ns_fd; /* the template mount namespace, or -1 */
	int caller_mnt; /* the caller's mount namespace, or -1: the helper's */
	uid_t caller_uid; /* whose files a grant holds, mapped to the guest's */
	gid_t caller_gid;
};

/*
 * Once per connection, as root, before confine_prepare(): build the
 * template for `rule` from the caller's mount namespace. Returns 0, or
 * -errno with a reason (-ENOSYS when the kernel lacks a mount call the
 * tree needs, naming it).
 */
int world_prepare(struct iso_world *w, const struct iso_rule *rule, const struct iso_caller *caller,
		  char *why, size_t n);

/*
 * In the reaper, root, before the drop: copy each grant's object
 * (plan->grants[].fd, which it closes) in the caller's mount namespace,
 * then move into a private copy of the template and mount the guest's own
 * parts (its /proc, /tmp, /dev/shm, passwd and group files) and the
 * grants, idmapped from the caller's ids to `uid`. *prog gets an O_PATH
 * descriptor of the program, opened as `uid`: as the guest's tree has it,
 * or else as the caller's namespace does. Returns 0, or -errno with a
 * reason and in *stage what failed: ISO_STAGE_EXEC when the program could
 * be opened in neither, else ISO_STAGE_CONFINEMENT.
 */
int world_enter(const struct iso_world *w, struct iso_plan *plan, uid_t uid, int *prog,
		enum iso_stage *stage, char *why, size_t n);

#endif /* ISO_WORLD_H */
