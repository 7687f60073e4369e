/*
 * spec.c - the spawn specification builder.
 *
 * Everything here is checked for form only, so a mistake is reported at the
 * call that made it; what the policy allows is for the helper to decide.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "client.h"
#include "env.h"
#include "util.h"

ISO_PUBLIC int iso_spec_new(iso_spec **out)
{
	iso_spec *spec = calloc(1, sizeof(*spec));

	*out = NULL;
	if (spec == NULL)
		return iso__fail(-ENOMEM, "out of memory for a spawn spec");
	spec->stdio[0] = spec->stdio[1] = spec->stdio[2] = -1;
	*out = spec;
	return 0;
}

static void free_strings(char **v, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		free(v[i]);
}

ISO_PUBLIC void iso_spec_free(iso_spec *spec)
{
	if (spec == NULL)
		return;
	free(spec->program);
	free(spec->argv);
	free(spec->forward);
	free_strings(spec->overrides, spec->noverrides);
	free_strings(spec->read_paths, spec->nread);
	free_strings(spec->write_paths, spec->nwrite);
	free(spec->workdir);
	free(spec->cwd);
	free(spec);
}

/*
 * A path in the normal form of util.h, so that the helper, the policy and
 * the logs all compare the path exactly as it was written.
 * Returns 0; -EINVAL; -ENAMETOOLONG.
 */
static int check_path(const char *what, const char *path, enum iso_path_kind kind)
{
	const char *fault;
	int rc = iso_path_check(path, kind, &fault);

	if (rc == 0)
		return 0;
	/* Not quoted when too long, absent, or holding a control byte
	 * (which would reach the caller's messages and logs). */
	if (rc == -ENAMETOOLONG || path == NULL || iso_control_byte(path, strlen(path)) != 0)
		return iso__fail(rc, "%s: %s", what, fault);
	return iso__fail(rc, "%s \"%s\": %s", what, path, fault);
}

ISO_PUBLIC int iso_spec_set_program(iso_spec *spec, const char *path)
{
	int rc = check_path("program", path, ISO_PATH_FILE);
	char *copy;

	if (rc < 0)
		return rc;
	copy = strdup(path);
	if (copy == NULL)
		return iso__fail(-ENOMEM, "out of memory for the program path");
	free(spec->program);
	spec->program = copy;
	return 0;
}

ISO_PUBLIC int iso_spec_set_argv(iso_spec *spec, const char *const *argv)
{
	/* What the encoder will need for the arguments, so that a list too
	 * big for one request is refused here rather than at spawn. */
	size_t wire = 0;
	uint32_t argc;
	char **copy;

	if (argv == NULL) {
		free(spec->argv);
		spec->argv = NULL;
		spec->argc = 0;
		return 0;
	}
	for (argc = 0; argv[argc] != NULL; argc++) {
		size_t len;

		if (argc == ISO_ARGS_MAX)
			return iso__fail(-E2BIG, "argv: more than %d arguments", ISO_ARGS_MAX);
		len = strnlen(argv[argc], ISO_WIRE_STR_MAX);
		if (len == ISO_WIRE_STR_MAX)
			return iso__fail(-E2BIG, "argv[%u]: %d bytes or more, at most %d", argc,
					 ISO_WIRE_STR_MAX, ISO_WIRE_STR_MAX - 1);
		wire += ISO_WIRE_FIELD_HEADER_SIZE + len + 1;
		if (wire > ISO_WIRE_MAX - ISO_WIRE_HEADER_SIZE)
			return iso__fail(-E2BIG, "argv: more than %d bytes in all", ISO_WIRE_MAX);
	}
	/* An empty argv would start the guest with argc == 0, which many
	 * programs do not expect (argv[0] == NULL). */
	if (argc == 0)
		return iso__fail(-EINVAL, "argv: empty, argv[0] is required");

	copy = iso_strv_new(argv, argc);
	if (copy == NULL)
		return iso__fail(-ENOMEM, "out of memory for argv");
	free(spec->argv);
	spec->argv = copy;
	spec->argc = argc;
	return 0;
}

uint32_t iso__pick_forwarded(const char *const *env, const char *picked[ISO_WIRE_FORWARD_MAX])
{
	uint32_t n = 0;

	for (; env != NULL && *env != NULL; env++) {
		const char *entry = *env, *eq = strchr(entry, '=');
		size_t len = eq != NULL ? (size_t)(eq - entry) : 0;
		uint32_t j;

		if (eq == NULL || !iso_env_is_forwarded_name(entry, len))
			continue;
		/* The first occurrence wins, as with getenv(). */
		for (j = 0; j < n; j++)
			if (strncmp(picked[j], entry, len + 1) == 0)
				break;
		if (j < n)
			continue;
		if (n == ISO_WIRE_FORWARD_MAX)
			break; /* unreachable: fewer names are forwarded */
		picked[n++] = entry;
	}
	return n;
}

ISO_PUBLIC int iso_spec_set_source_env(iso_spec *spec, const char *const *envp)
{
	/* Only the forwarded entries are kept: the rest of the caller's
	 * environment (its secrets) is never copied. */
	const char *picked[ISO_WIRE_FORWARD_MAX];
	uint32_t n = iso__pick_forwarded(envp, picked);
	char **copy = NULL;

	if (n > 0 && (copy = iso_strv_new(picked, n)) == NULL)
		return iso__fail(-ENOMEM, "out of memory for the source environment");
	free(spec->forward);
	spec->forward = copy;
	spec->nforward = n;
	spec->source_set = 1;
	return 0;
}

ISO_PUBLIC int iso_spec_set_env(iso_spec *spec, const char *name, const char *value)
{
	size_t name_len, value_len;
	char *entry;
	uint32_t i;

	if (name == NULL || value == NULL)
		return iso__fail(-EINVAL, "override: name or value missing");
	name_len = strnlen(name, ISO_ENV_NAME_MAX + 1);
	if (!iso_env_name_valid(name, name_len))
		return iso__fail(-EINVAL,
				 "override \"%.64s\": not a variable name ([A-Za-z_][A-Za-z0-9_]*, "
				 "at most %d bytes)",
				 name, ISO_ENV_NAME_MAX);
	value_len = strnlen(value, ISO_ENV_VALUE_MAX + 1);
	if (value_len > ISO_ENV_VALUE_MAX)
		return iso__fail(-E2BIG, "override %s: value longer than %d bytes", name,
				 ISO_ENV_VALUE_MAX);
	for (i = 0; i < spec->noverrides; i++)
		if (strncmp(spec->overrides[i], name, name_len) == 0 &&
		    spec->overrides[i][name_len] == '=')
			break;
	if (i == ISO_ENV_OVERRIDES_MAX)
		return iso__fail(-E2BIG, "override %s: more than %d overrides", name,
				 ISO_ENV_OVERRIDES_MAX);
	entry = malloc(name_len + 1 + value_len + 1);
	if (entry == NULL)
		return iso__fail(-ENOMEM, "out of memory for override %s", name);
	memcpy(entry, name, name_len);
	entry[name_len] = '=';
	memcpy(entry + name_len + 1, value, value_len + 1);
	if (i < spec->noverrides)
		free(spec->overrides[i]);
	else
		spec->noverrides++;
	spec->overrides[i] = entry;
	return 0;
}

ISO_PUBLIC int iso_spec_set_stdio(iso_spec *spec, int in_fd, int out_fd, int err_fd)
{
	const int fds[3] = { in_fd, out_fd, err_fd };

	for (int i = 0; i < 3; i++)
		if (fds[i] != -1 && (fds[i] < 0 || fcntl(fds[i], F_GETFD) < 0))
			return iso__fail(-EBADF, "stdio: fd %d (for the guest's fd %d) is not open",
					 fds[i], i);
	memcpy(spec->stdio, fds, sizeof(fds));
	return 0;
}

ISO_PUBLIC int iso_spec_set_limit(iso_spec *spec, enum iso_limit which, uint64_t value)
{
	if ((unsigned)which >= ISO_LIMIT_COUNT)
		return iso__fail(-EINVAL, "limit %d: unknown", (int)which);
	spec->limits[which] = value;
	spec->limits_set |= 1u << which;
	return 0;
}

ISO_PUBLIC int iso_spec_set_timeout(iso_spec *spec, uint64_t ms)
{
	spec->timeout_ms = ms;
	return 0;
}

ISO_PUBLIC int iso_spec_set_wait_slot(iso_spec *spec, uint64_t ms)
{
	spec->wait_slot_ms = ms;
	return 0;
}

ISO_PUBLIC int iso_spec_set_network(iso_spec *spec, enum iso_network net)
{
	if ((unsigned)net > ISO_NETWORK_HOST)
		return iso__fail(-EINVAL, "network %d: unknown", (int)net);
	spec->network = net;
	return 0;
}

/* A path the caller will open at iso_spawn(): any form, relative ones
 * against the working directory then. Returns 0; -EINVAL empty or 4096
 * bytes or more; -ENOMEM. */
static int copy_lent_path(const char *what, const char *path, char **to)
{
	char *copy;

	if (path == NULL || path[0] == '\0' ||
	    strnlen(path, ISO_WIRE_PATH_MAX) == ISO_WIRE_PATH_MAX)
		return iso__fail(-EINVAL, "%s: expected a path of 1 to %d bytes", what,
				 ISO_WIRE_PATH_MAX - 1);
	if ((copy = strdup(path)) == NULL)
		return iso__fail(-ENOMEM, "out of memory for %s", what);
	free(*to);
	*to = copy;
	return 0;
}

static int add_path(const char *what, char **paths, uint32_t *n, const char *path)
{
	int rc;

	if (*n == ISO_PATHS_MAX)
		return iso__fail(-E2BIG, "%s: more than %d paths", what, ISO_PATHS_MAX);
	paths[*n] = NULL;
	if ((rc = copy_lent_path(what, path, &paths[*n])) < 0)
		return rc;
	(*n)++;
	return 0;
}

ISO_PUBLIC int iso_spec_add_read_path(iso_spec *spec, const char *path)
{
	return add_path("read grant", spec->read_paths, &spec->nread, path);
}

ISO_PUBLIC int iso_spec_add_write_path(iso_spec *spec, const char *path)
{
	return add_path("write grant", spec->write_paths, &spec->nwrite, path);
}

ISO_PUBLIC int iso_spec_set_workdir(iso_spec *spec, const char *path)
{
	if (path == NULL) {
		free(spec->workdir);
		spec->workdir = NULL;
		return 0;
	}
	return copy_lent_path("workdir", path, &spec->workdir);
}

ISO_PUBLIC int iso_spec_set_cwd(iso_spec *spec, const char *path)
{
	int rc;

	if (path == NULL) {
		free(spec->cwd);
		spec->cwd = NULL;
		return 0;
	}
	/* A path of the guest's tree, which the guest reaches itself. */
	if ((rc = check_path("cwd", path, ISO_PATH_ANY)) < 0)
		return rc == -ENAMETOOLONG ? iso__fail(-EINVAL, "%s", iso_last_error()) : rc;
	return copy_lent_path("cwd", path, &spec->cwd);
}

ISO_PUBLIC int iso_spec_pass_fd(iso_spec *spec, int fd)
{
	struct stat st;

	if (fd < 3 || fd >= ISO_PASS_FD_LIMIT)
		return iso__fail(-EINVAL, "pass-fd %d: not from 3 to %d", fd,
				 ISO_PASS_FD_LIMIT - 1);
	if (fstat(fd, &st) < 0)
		return iso__fail(-EBADF, "pass-fd %d: not open", fd);
	/* The guest would reach what is below it by its own rights, past
	 * its tree. */
	if (S_ISDIR(st.st_mode))
		return iso__fail(-EINVAL, "pass-fd %d: a directory", fd);
	for (uint32_t i = 0; i < spec->npass; i++)
		if (spec->pass_fds[i] == fd)
			return 0;
	if (spec->npass == ISO_PASS_FDS_MAX)
		return iso__fail(-E2BIG, "pass-fd %d: more than %d", fd, ISO_PASS_FDS_MAX);
	spec->pass_fds[spec->npass++] = fd;
	return 0;
}

ISO_PUBLIC int iso_spec_set_channel(iso_spec *spec, int kind)
{
	spec->channel = kind == ISO_CHANNEL_STREAM ? ISO_CHANNEL_STREAM
			: kind != 0                ? ISO_CHANNEL_MESSAGES
						   : ISO_CHANNEL_NONE;
	return 0;
}
