/*
 * feature.c - unfiltered probes of what some checks need (feature.h).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/landlock.h>

#include "feature.h"

#define NOBODY 65534

int feature_hidden(const char *key)
{
	const char *list = getenv("ISOSPAWN_TEST_HIDE");
	size_t len = strlen(key);

	for (const char *p = list; p && *p; p += strcspn(p, ","), p += *p == ',')
		if (strncmp(p, key, len) == 0 && (p[len] == ',' || p[len] == '\0'))
			return 1;
	return 0;
}

/* Every reason is a string of its own (a program asks a few dozen times:
 * never freed). */
static const char *why;

static void because(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void because(const char *fmt, ...)
{
	char *text;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		text = NULL;
	va_end(ap);
	why = text ? text : "(out of memory)";
}

/* Non-zero, with the reason in why, when key is hidden. */
static int hidden(const char *key, const char *feature)
{
	if (!feature_hidden(key))
		return 0;
	because("%s: reported absent (ISOSPAWN_TEST_HIDE=%s)", feature,
		getenv("ISOSPAWN_TEST_HIDE"));
	return 1;
}

const char *feature_root(void)
{
	if (hidden("root", "root"))
		return why;
	return geteuid() == 0 ? NULL : "needs root (run make check as root)";
}

const char *feature_landlock(int abi)
{
	long have;

	if (hidden("landlock", "Landlock"))
		return why;
	have = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);
	if (have >= abi)
		return NULL;
	if (have < 0)
		because("needs Landlock ABI %d; the kernel has "
			"no Landlock (%s)",
			abi, strerror(errno));
	else
		because("needs Landlock ABI %d; the kernel has "
			"ABI %ld",
			abi, have);
	return why;
}

/* Run fn in a child; its wait status. */
static int in_child(int (*fn)(void))
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (pid == 0)
		_exit(fn());
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

static int try_userns(void)
{
	if (geteuid() == 0 &&
	    (setresgid(NOBODY, NOBODY, NOBODY) < 0 || setresuid(NOBODY, NOBODY, NOBODY) < 0))
		return SETUP_FAILED;
	return unshare(CLONE_NEWUSER) < 0 ? errno : 0;
}

const char *feature_userns(void)
{
	int status;

	if (hidden("userns", "user namespaces"))
		return why;
	status = in_child(try_userns);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return NULL;
	because("needs unprivileged user namespaces: "
		"unshare(CLONE_NEWUSER) as nobody, without any filter, %s",
		WIFEXITED(status) ? strerror(WEXITSTATUS(status)) : "crashed");
	return why;
}

const char *feature_pty(void)
{
	int master, slave = -1;

	if (hidden("pty", "a pseudo-terminal"))
		return why;
	master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (master >= 0 && grantpt(master) == 0 && unlockpt(master) == 0)
		slave = open(ptsname(master), O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (slave < 0)
		because("needs a pseudo-terminal: %s", strerror(errno));
	if (slave >= 0)
		close(slave);
	if (master >= 0)
		close(master);
	return slave >= 0 ? NULL : why;
}

static int try_netns(void)
{
	return unshare(CLONE_NEWNET) < 0 ? errno : 0;
}

const char *feature_netns(void)
{
	int status;

	if (hidden("netns", "network namespaces") || hidden("root", "root"))
		return why;
	if (geteuid() != 0)
		return "needs root for a network namespace";
	status = in_child(try_netns);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return NULL;
	because("needs network namespaces: unshare(CLONE_NEWNET): %s",
		WIFEXITED(status) ? strerror(WEXITSTATUS(status)) : "crashed");
	return why;
}

const char *feature_int80(const char *probe)
{
#if defined(__x86_64__)
	int status;
	pid_t pid;

	if (hidden("int80", "the i386 entry point (int 0x80)"))
		return why;
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		execl(probe, "probe", "int80-ptrace", (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return "cannot run the probe";
	/* Exit 0: traced; 1: the kernel refused (ENOSYS); a signal: the
	 * kernel has no such entry point (SIGSEGV). */
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return NULL;
	if (WIFSIGNALED(status))
		because("the kernel has no i386 entry point: "
			"int 0x80 without any filter died of signal %d (%s)",
			WTERMSIG(status), strsignal(WTERMSIG(status)));
	else
		because("the kernel refuses int 0x80 ptrace "
			"without any filter (probe exit %d)",
			WEXITSTATUS(status));
	return why;
#else
	return "the i386 entry point is x86_64 only";
#endif
}

const char *feature_baseline(int (*fn)(void), int refused, const char *key, const char *feature)
{
	int status;

	if (hidden(key, feature))
		return why;
	status = in_child(fn);
	if (WIFEXITED(status) && WEXITSTATUS(status) != refused &&
	    WEXITSTATUS(status) < SETUP_FAILED)
		return NULL;
	if (WIFEXITED(status) && WEXITSTATUS(status) == refused)
		because("needs %s: without any filter the call "
			"already ends as the filter should make it (%s)",
			feature, refused ? strerror(refused) : "exit 0");
	else if (WIFEXITED(status))
		because("needs %s: without any filter the call "
			"could not be set up (exit %d)",
			feature, WEXITSTATUS(status));
	else
		because("needs %s: without any filter the call "
			"ends with wait status 0x%x",
			feature, (unsigned)status);
	return why;
}

void check_skip(const char *test, const char *fmt, ...)
{
	va_list ap;

	printf("SKIP-RUN: %s: ", test);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

void tcase_add_unless(TCase *tc, const TTest *t, const char *missing)
{
	if (missing) {
		printf("SKIP: %s: %s\n", t->name, missing);
		fflush(stdout);
		return;
	}
	tcase_add_test(tc, t);
}

#ifdef ISO_COVERAGE
void __gcov_dump(void);
#endif

void child_exit(int code)
{
#ifdef ISO_COVERAGE
	__gcov_dump();
#endif
	_exit(code);
}
