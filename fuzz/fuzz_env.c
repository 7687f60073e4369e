/*
 * fuzz_env.c - libFuzzer target for the environment builder,
 * iso_build_env() (common/env.c), with its contract asserted, not only its
 * memory safety. Built by `make fuzz`, run by scripts/fuzz; seeds in
 * fuzz/corpus/env.
 *
 * Input: byte 0 holds flags (bit 0 ISO_ENV_STRICT_SOURCE, bit 1
 * ISO_ENV_PROGRAMS_RESTRICTED, bit 2 pass no rules at all, bits 3-5 give
 * rules->forward, ->overrides, ->unsafe_allowed even when no record names
 * one, i.e. as empty lists); then records separated by '\n', each a tag
 * byte and a string: 'S' a source entry, 'O' an override, 'F' a name of
 * the forward list, 'A' a name of the override list, 'U' a name of the
 * unsafe-allowed list. Other tags are ignored.
 *
 * Properties, on success:
 *  - every name of the result is a forwarded name the rules forward,
 *    PATH, or the name of an override (all of which were accepted);
 *  - no name appears twice;
 *  - PATH is ISO_GUEST_PATH unless an override sets it, then that value;
 *  - every entry is exactly an input entry of its own name: the override
 *    of that name if there is one, else the first source entry of that
 *    name (so no input value appears under a different name);
 *  - every forwarded, forward-listed name set well-formed in the source
 *    appears.
 * On refusal: a reason, *out NULL, and every byte the call allocated freed.
 */
#include <errno.h>
#include <sanitizer/allocator_interface.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define LIST_MAX 512

static const char *const forwarded[] = { ISO_FORWARDED_NAMES, NULL };

/* Allocations and frees while the builder runs. */
static volatile int counting;
static volatile long live_blocks;

static void on_malloc(const volatile void *p, size_t size)
{
	if (counting)
		live_blocks++;
}

static void on_free(const volatile void *p)
{
	if (counting && p != NULL)
		live_blocks--;
}

struct list {
	const char *v[LIST_MAX + 1];
	size_t n;
};

static void add(struct list *l, const char *s)
{
	if (l->n < LIST_MAX)
		l->v[l->n++] = s;
	l->v[l->n] = NULL;
}

static size_t name_len(const char *entry)
{
	return strcspn(entry, "=");
}

static int same_name(const char *a, const char *b)
{
	size_t la = name_len(a);

	return la == name_len(b) && memcmp(a, b, la) == 0;
}

static int listed(const struct list *l, const char *entry)
{
	size_t len = name_len(entry);

	for (size_t i = 0; i < l->n; i++)
		if (strlen(l->v[i]) == len && memcmp(l->v[i], entry, len) == 0)
			return 1;
	return 0;
}

/* The first entry of l with entry's name, or NULL. */
static const char *find(const struct list *l, const char *entry)
{
	for (size_t i = 0; i < l->n; i++)
		if (strchr(l->v[i], '=') && same_name(l->v[i], entry))
			return l->v[i];
	return NULL;
}

static int forwardable(const char *entry, const struct list *forward, int rules_forward)
{
	size_t len = name_len(entry);

	for (size_t i = 0; forwarded[i]; i++)
		if (strlen(forwarded[i]) == len && memcmp(forwarded[i], entry, len) == 0)
			return !rules_forward || listed(forward, entry);
	return 0;
}

static void check_result(char **env, const struct list *source, const struct list *over,
			 const struct list *forward, int rules_forward)
{
	static const char path[] = "PATH=" ISO_GUEST_PATH;
	int saw_path = 0;

	for (size_t i = 0; env[i]; i++) {
		const char *e = env[i], *want;

		if (!strchr(e, '='))
			abort();
		for (size_t k = 0; k < i; k++)
			if (same_name(env[k], e))
				abort(); /* a name twice */
		if ((want = find(over, e)) != NULL) {
			if (strcmp(want, e) != 0)
				abort(); /* not the override's own value */
		} else if (same_name(e, path)) {
			if (strcmp(e, path) != 0)
				abort(); /* PATH changed without an override */
		} else if (!forwardable(e, forward, rules_forward) ||
			   (want = find(source, e)) == NULL || strcmp(want, e) != 0) {
			abort(); /* a name or value from nowhere it may come from */
		}
		saw_path |= same_name(e, path);
	}
	if (!saw_path)
		abort();
	/* Everything forwardable that the source sets well-formed is there. */
	for (size_t i = 0; i < source->n; i++) {
		const char *s = source->v[i];
		int found = 0;

		if (!strchr(s, '=') || !iso_env_name_valid(s, name_len(s)) ||
		    !forwardable(s, forward, rules_forward))
			continue;
		for (size_t k = 0; env[k] && !found; k++)
			found = same_name(env[k], s);
		if (!found)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int hooked;
	struct list source = { .n = 0 }, over = { .n = 0 }, forward = { .n = 0 },
		    allowed = { .n = 0 }, unsafe = { .n = 0 };
	struct iso_env_rules rules;
	unsigned flags;
	char *copy, why[512] = "", **env = (char **)1;
	long before;
	int rc;

	if (size == 0)
		return 0;
	if (!hooked)
		hooked = __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
	flags = data[0];
	copy = malloc(size); /* data[1..] and a NUL */
	if (copy == NULL)
		return 0;
	memcpy(copy, data + 1, size - 1);
	copy[size - 1] = '\0';
	for (char *rec = copy; rec < copy + size - 1;) {
		char *nl = memchr(rec, '\n', (size_t)(copy + size - 1 - rec));
		char tag = *rec;

		if (nl)
			*nl = '\0';
		switch (tag) {
		case 'S':
			add(&source, rec + 1);
			break;
		case 'O':
			add(&over, rec + 1);
			break;
		case 'F':
			add(&forward, rec + 1);
			break;
		case 'A':
			add(&allowed, rec + 1);
			break;
		case 'U':
			add(&unsafe, rec + 1);
			break;
		default:
			break;
		}
		rec = nl ? nl + 1 : copy + size - 1;
	}
	rules.forward = (forward.n || (flags & 8)) ? forward.v : NULL;
	rules.overrides = (allowed.n || (flags & 16)) ? allowed.v : NULL;
	rules.unsafe_allowed = (unsafe.n || (flags & 32)) ? unsafe.v : NULL;

	before = live_blocks;
	counting = 1;
	rc = iso_build_env(source.v, over.v, (flags & 4) ? NULL : &rules,
			   flags & (ISO_ENV_STRICT_SOURCE | ISO_ENV_PROGRAMS_RESTRICTED), &env, why,
			   sizeof(why));
	counting = 0;
	if (rc < 0) {
		if (env != NULL || why[0] == '\0')
			abort();
		if (hooked && live_blocks != before)
			abort(); /* a refusal left something allocated */
	} else {
		if (rc != 0 || env == NULL)
			abort();
		check_result(env, &source, &over, &forward,
			     (flags & 4) == 0 && rules.forward != NULL);
		free(env); /* one allocation: the array and its strings */
	}
	free(copy);
	return 0;
}
