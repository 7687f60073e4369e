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

#include "request.h"
#include "policy.h"

struct iso_world {
	int ns_fd;   /* the template mount namespace, or -1 */
};

/*
 * Once per connection, as root, before confine_prepare(): build the
 * template for `rule`. Returns 0, or -errno with a reason (-ENOSYS when the
 * kernel lacks a mount call the tree needs, naming it).
 */
int world_prepare(struct iso_world *w, const struct iso_rule *rule,
		  char *why, size_t n);

/*
 * In the reaper, root, before the drop: open the program and the request's
 * grants as `uid` would on the host, then move into a private copy of the
 * template and mount the guest's own parts (its /proc, /tmp, /dev/shm,
 * passwd and group files); cwd becomes /tmp. *prog gets an O_PATH
 * descriptor of the program. Returns 0 or -errno with a reason; *prog is
 * -1 after a failure if the program itself could not be opened.
 */
int world_enter(const struct iso_world *w, const struct iso_plan *plan,
		uid_t uid, int *prog, char *why, size_t n);

#endif /* ISO_WORLD_H */
