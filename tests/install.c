/*
 * install.c - lay out the test installation under ISO_TEST_ROOT: the test
 * helper setuid root, the probe, the CLI with its library, and the test
 * policy. Shared by the live tests and the benchmark (no Check here).
 */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "install.h"

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

static void install_policy(void)
{
	char src[512], text[16384], *at;
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
		if ((at = strstr(p, "@ROOT@")) == NULL) {
			fputs(p, f);
			break;
		}
		fwrite(p, 1, (size_t)(at - p), f);
		fputs(T_ROOT, f);
		p = at + 6;
	}
	if (fchmod(fileno(f), 0644) < 0 || fclose(f) != 0)
		die(src);
	if (rename(src, T_ROOT "/isospawn.conf") < 0)
		die("policy");
}

char t_helper[128];
char t_helper_env[160];
static pid_t installer;

static void remove_helper(void)
{
	/* Only in the installing process: Check's forked tests exit too. */
	if (getpid() == installer)
		(void)unlink(t_helper);
}

/* Setuid helpers left by test programs that did not exit normally. */
static void remove_stale_helpers(void)
{
	DIR *d = opendir(T_BIN);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)) != NULL) {
		char path[300];
		long pid;

		if (sscanf(e->d_name, "isospawn-helper.%ld", &pid) != 1 ||
		    (kill((pid_t)pid, 0) == 0 || errno != ESRCH))
			continue;
		snprintf(path, sizeof(path), "%s/%s", T_BIN, e->d_name);
		(void)unlink(path);
	}
	closedir(d);
	(void)unlink(T_BIN "/isospawn-helper"); /* the name older runs used */
}

void test_install(void)
{
	umask(022);
	mkdir_root(T_ROOT, 0755);
	mkdir_root(T_BIN, 0755);
	mkdir_root(T_LIB, 0755);
	mkdir_root(T_SHARED, 0777);
	remove_stale_helpers();
	snprintf(t_helper, sizeof(t_helper), "%s/isospawn-helper.%d", T_BIN, (int)getpid());
	snprintf(t_helper_env, sizeof(t_helper_env), "ISOSPAWN_HELPER=%s", t_helper);
	test_install_file(ISO_BUILDDIR "/tests/isospawn-helper-test", t_helper, 04755);
	installer = getpid();
	atexit(remove_helper);
	test_install_file(ISO_BUILDDIR "/tests/probe", T_PROBE, 0755);
	test_install_file(ISO_BUILDDIR "/.libs/isospawn", T_CLI, 0755);
	test_install_file(ISO_BUILDDIR "/.libs/libisospawn.so.0", T_LIB "/libisospawn.so.0", 0644);
	install_policy();
}
