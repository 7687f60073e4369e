/*
 * lend.c - what a caller lends its guest. Each grant is opened here, as
 * the caller, and its descriptor goes with the request: the helper
 * resolves no path of the caller's as root, and a caller lends exactly
 * what it can open itself (its own open's error otherwise). The guest
 * finds the object where the caller does: at the path the kernel gives
 * the descriptor, symbolic links resolved.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "client.h"
#include "util.h"

/* The documented set (libisospawn(3), iso_spawn): an open's own errno
 * where it is one of them, EACCES for EPERM, EIO for the rest. */
static int open_error(int err)
{
	static const int kept[] = { ENOENT, EACCES, ELOOP, ENOTDIR, ENAMETOOLONG, EMFILE, ENOMEM };

	for (size_t i = 0; i < COUNT(kept); i++)
		if (err == kept[i])
			return -err;
	return err == EPERM ? -EACCES : err == ENFILE ? -EMFILE : -EIO;
}

/* `path` opened (O_PATH, links followed) into *fd, and the object's
 * absolute path into label (ISO_WIRE_PATH_MAX bytes). */
static int open_one(const char *what, const char *path, int *fd, char *label)
{
	char link[32];
	struct stat st;
	ssize_t len;

	if ((*fd = open(path, O_PATH | O_CLOEXEC)) < 0)
		return iso__fail(open_error(errno), "%s %s: %s", what, path, strerror(errno));
	snprintf(link, sizeof(link), "/proc/self/fd/%d", *fd);
	if (fstat(*fd, &st) < 0 || (len = readlink(link, label, ISO_WIRE_PATH_MAX)) < 0)
		return iso__fail(open_error(errno), "%s %s: %s", what, path, strerror(errno));
	if (!S_ISDIR(st.st_mode) && !S_ISREG(st.st_mode))
		return iso__fail(-EINVAL, "%s %s: not a directory or a regular file", what, path);
	/* Its name ends in " (deleted)" then. */
	if (st.st_nlink == 0)
		return iso__fail(-ENOENT, "%s %s: deleted", what, path);
	if (len == ISO_WIRE_PATH_MAX)
		return iso__fail(-ENAMETOOLONG, "%s %s: its path is 4096 bytes or more", what,
				 path);
	label[len] = '\0';
	/* Outside the caller's root the kernel says "(unreachable)...". */
	if (label[0] != '/' || iso_control_byte(label, (size_t)len))
		return iso__fail(-EINVAL,
				 "%s %s: its path cannot be named to the helper "
				 "(outside the caller's root, or holding a control byte)",
				 what, path);
	return 0;
}

int iso__lend(const iso_spec *spec, struct iso_wire_spawn *w, int *fds, unsigned *nfds,
	      char **labels)
{
	unsigned first = *nfds, count = spec->nread + spec->nwrite + (spec->workdir != NULL);
	char *label;
	int rc = 0;

	*labels = NULL;
	w->nread = w->nwrite = 0;
	w->cwd = spec->cwd;
	if (spec->workdir != NULL && spec->nwrite == ISO_PATHS_MAX)
		return iso__fail(-E2BIG, "workdir: more than %d write grants", ISO_PATHS_MAX);
	if (count > 0 && (*labels = malloc((size_t)count * ISO_WIRE_PATH_MAX)) == NULL)
		return iso__fail(-ENOMEM, "out of memory for the grants' paths");
	for (unsigned i = 0; rc == 0 && i < count; i++) {
		int write = i >= spec->nread, workdir = i - spec->nread == spec->nwrite;
		const char *path = !write    ? spec->read_paths[i]
				   : workdir ? spec->workdir
					     : spec->write_paths[i - spec->nread];
		const char *what = !write ? "read grant" : workdir ? "workdir" : "write grant";

		label = *labels + (size_t)i * ISO_WIRE_PATH_MAX;
		rc = open_one(what, path, &fds[*nfds], label);
		if (fds[*nfds] >= 0)
			(*nfds)++;
		if (write)
			w->write_paths[w->nwrite++] = label;
		else
			w->read_paths[w->nread++] = label;
		if (rc == 0 && write && workdir && w->cwd == NULL)
			w->cwd = label;
	}
	w->read_paths[w->nread] = NULL;
	w->write_paths[w->nwrite] = NULL;
	if (rc < 0) {
		iso_close_fds(fds + first, *nfds - first);
		*nfds = first;
		free(*labels);
		*labels = NULL;
	}
	return rc;
}
