/*
 * install.c - lay out the test installation: a root of the run's own under
 * ISO_TEST_ROOT (see install.h) holding the test helper setuid root, the
 * probe, the CLI with its library, and the test policy with the run's
 * pools. Shared by the live tests and the benchmark (no Check here).
 */
#include "config.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "install.h"

/* On the host: ISO_TEST_ROOT is only a mount point; the runs live in its
 * runs/ (0700, so no leftover setuid copy is reachable by anyone else):
 * a lock file per slot and the slot's run directory. */
#define RUNS T_ROOT "/runs"
#define RUN_SLOTS 32
#define POOL_STRIDE 100000u /* apart from one slot to the next */

char t_helper[128] = T_BIN "/isospawn-helper";
char t_helper_env[160] = "ISOSPAWN_HELPER=" T_BIN "/isospawn-helper";
uid_t t_pool_delta;

static pid_t installer;
static char run_dir[128]; /* the host path of this run's root */

static void die(const char *what)
{
	fprintf(stderr, "harness: %s: %s\n", what, strerror(errno));
	exit(99); /* automake: hard error */
}

static void mkdir_root(const char *path, mode_t mode)
{
	if (mkdir(path, mode) < 0 && errno != EEXIST)
		die(path);
	if (chown(path, 0, 0) < 0 || chmod(path, mode) < 0)
		die(path);
}

/* Copy src to dst atomically (tests run in parallel and may be executing
 * the old copy), owned by root with `mode`. */
void test_install_file(const char *src, const char *dst, mode_t mode)
{
	char tmp[512], buf[65536];
	int in, out;
	ssize_t got;

	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", dst, (int)getpid());
	if ((in = open(src, O_RDONLY | O_CLOEXEC)) < 0)
		die(src);
	if ((out = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
		die(tmp);
	while ((got = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)got) != got)
			die(tmp);
	if (got < 0)
		die(src);
	/* chown before chmod: chown clears the setuid bit. */
	if (fchown(out, 0, 0) < 0 || fchmod(out, mode) < 0)
		die(tmp);
	close(in);
	close(out);
	if (rename(tmp, dst) < 0)
		die(dst);
}

void test_install_dir(const char *src, const char *dst, mode_t mode)
{
	char from[512], to[512];
	struct dirent *e;
	struct stat st;
	DIR *d = opendir(src);

	if (d == NULL)
		die(src);
	mkdir_root(dst, 0755);
	while ((e = readdir(d)) != NULL) {
		snprintf(from, sizeof(from), "%s/%s", src, e->d_name);
		snprintf(to, sizeof(to), "%s/%s", dst, e->d_name);
		if (stat(from, &st) == 0 && S_ISREG(st.st_mode))
			test_install_file(from, to, mode);
	}
	closedir(d);
}

/* Write one line of the policy, with the run's offset added to a pool. */
static void policy_line(FILE *f, const char *line, size_t len)
{
	const char *word = line;
	unsigned first, last;
	int at;

	while (word < line + len && isspace((unsigned char)*word))
		word++;
	if (strncmp(word, "pool ", 5) == 0 &&
	    sscanf(word, "pool %u-%u%n", &first, &last, &at) == 2) {
		fprintf(f, "%.*spool %u-%u", (int)(word - line), line, first + t_pool_delta,
			last + t_pool_delta);
		word += at;
		fwrite(word, 1, len - (size_t)(word - line), f);
		return;
	}
	fwrite(line, 1, len, f);
}

/* tests/policy.conf.in with every @ROOT@ replaced and the pools offset. */
static void install_policy(void)
{
	char src[512], text[32768];
	size_t len = 0;
	FILE *f;

	snprintf(src, sizeof(src), "%s/tests/policy.conf.in", ISO_SRCDIR);
	if (!(f = fopen(src, "r")))
		die(src);
	len = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[len] = '\0';

	snprintf(src, sizeof(src), "%s/isospawn.conf.tmp.%d", T_ROOT, (int)getpid());
	if (!(f = fopen(src, "w")))
		die(src);
	for (char *p = text; *p;) {
		char *end = strchr(p, '\n');
		size_t n = end ? (size_t)(end - p) + 1 : strlen(p);
		char line[1024], *at;

		if (n >= sizeof(line)) {
			errno = E2BIG;
			die("tests/policy.conf.in: line too long");
		}
		memcpy(line, p, n);
		line[n] = '\0';
		p += n;
		while ((at = strstr(line, "@ROOT@")) != NULL) {
			char out[sizeof(line) + sizeof(T_ROOT)];

			snprintf(out, sizeof(out), "%.*s%s%s", (int)(at - line), line, T_ROOT,
				 at + 6);
			if (strlen(out) >= sizeof(line)) {
				errno = E2BIG;
				die("tests/policy.conf.in: line too long");
			}
			strcpy(line, out);
		}
		policy_line(f, line, strlen(line));
	}
	if (fchmod(fileno(f), 0644) < 0 || fclose(f) != 0)
		die(src);
	if (rename(src, T_ROOT "/isospawn.conf") < 0)
		die("policy");
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	if (remove(path) < 0 && errno != ENOENT)
		fprintf(stderr, "harness: cannot remove %s: %s\n", path, strerror(errno));
	return 0;
}

/* rm -rf, never following a symbolic link or crossing a mount. */
static void remove_tree(const char *path)
{
	nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

/* The first free slot, held (flock) until this process and its forks exit.
 * Removes what a killed run of that slot left. */
static unsigned reserve_slot(void)
{
	for (unsigned k = 0; k < RUN_SLOTS; k++) {
		char path[512], prefix[16];
		struct dirent *e;
		DIR *d;
		int fd;

		snprintf(path, sizeof(path), RUNS "/%u.lock", k);
		if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600)) < 0)
			die(path);
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			if (errno != EWOULDBLOCK)
				die(path);
			close(fd);
			continue;
		}
		snprintf(prefix, sizeof(prefix), "%u.", k);
		if (!(d = opendir(RUNS)))
			die(RUNS);
		while ((e = readdir(d)) != NULL) {
			if (strncmp(e->d_name, prefix, strlen(prefix)) != 0 ||
			    strcmp(e->d_name + strlen(prefix), "lock") == 0)
				continue;
			snprintf(path, sizeof(path), RUNS "/%s", e->d_name);
			remove_tree(path);
		}
		closedir(d);
		return k; /* fd stays open: the slot is ours */
	}
	errno = EBUSY;
	die("all " RUNS " slots are in use");
	return 0;
}

/* What a sanitized test helper reported (tests/sanitizer_options.c), on
 * stderr; the number of reports. */
static int sanitizer_reports(void)
{
	DIR *d = opendir(T_ROOT);
	struct dirent *e;
	int found = 0;

	while (d && (e = readdir(d)) != NULL) {
		char path[512], buf[4096];
		size_t n;
		FILE *f;

		if (strncmp(e->d_name, "sanitizer.", 10) != 0)
			continue;
		found++;
		snprintf(path, sizeof(path), "%s/%s", T_ROOT, e->d_name);
		fprintf(stderr, "harness: the test helper's sanitizer reported (%s):\n", path);
		if ((f = fopen(path, "r")) != NULL) {
			while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
				fwrite(buf, 1, n, stderr);
			fclose(f);
		}
	}
	if (d)
		closedir(d);
	return found;
}

static void remove_run(void)
{
	int reports;

	/* Only in the installing process: Check's forked tests exit too. */
	if (getpid() != installer)
		return;
	reports = sanitizer_reports();
	if (umount2(T_ROOT, MNT_DETACH) < 0)
		fprintf(stderr, "harness: umount %s: %s\n", T_ROOT, strerror(errno));
	else
		remove_tree(run_dir);
	if (reports > 0)
		_exit(1); /* a run whose helper reported an error fails */
}

/* This process's own mount namespace, whose ISO_TEST_ROOT is a new
 * directory: nothing mounted here reaches the host or another run. */
static void private_root(void)
{
	unsigned slot;

	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		printf("SKIP: cannot make a private mount namespace for this "
		       "run's test root: %s\n",
		       strerror(errno));
		exit(77);
	}
	mkdir_root(T_ROOT, 0755);
	mkdir_root(RUNS, 0700);
	slot = reserve_slot();
	/* Slot 0 is offset too: runs of older checkouts use the pools as
	 * written. */
	t_pool_delta = (uid_t)((slot + 1) * POOL_STRIDE);
	snprintf(run_dir, sizeof(run_dir), RUNS "/%u.XXXXXX", slot);
	if (!mkdtemp(run_dir))
		die(run_dir);
	installer = getpid();
	atexit(remove_run);
	if (chmod(run_dir, 0755) < 0 || mount(run_dir, T_ROOT, NULL, MS_BIND, NULL) < 0)
		die(run_dir);
}

void test_install(void)
{
	umask(022);
	private_root();
	mkdir_root(T_BIN, 0755);
	mkdir_root(T_LIB, 0755);
	mkdir_root(T_SHARED, 0777);
	test_install_file(ISO_BUILDDIR "/tests/isospawn-helper-test", T_HELPER, 04755);
	test_install_file(ISO_BUILDDIR "/tests/probe", T_PROBE, 0755);
	/* The CLI carries the library in it (Makefile.am): the binary itself,
	 * not a libtool wrapper. */
	test_install_file(ISO_BUILDDIR "/isospawn", T_CLI, 0755);
	test_install_file(ISO_BUILDDIR "/.libs/libisospawn.so.0", T_LIB "/libisospawn.so.0", 0644);
	install_policy();
}
