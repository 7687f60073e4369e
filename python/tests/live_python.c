/*
 * live_python.c - run the Python module's live tests (python/tests/
 * test_live.py, with Debian's python3-pytest) as the unprivileged caller,
 * through the setuid test helper, as the live C tests run: root installs
 * (harness_setup()), then Check's forked test process becomes T_CALLER
 * for good and execs pytest; the installing parent waits and then removes
 * the helper.
 *
 * The built package, libisospawn, the tests and the example are copied,
 * root-owned, into a directory under T_SHARED (which the test policy lets
 * guests be granted) so that a Python guest can import isospawn.guest too.
 * Exits 77 (skip) when not root or when the interpreter has no pytest.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"

/* What the caller and its Python guests use, copied as root into pydir:
 * the caller may not read the build or source tree (make distcheck's is
 * private), and guests are granted pydir alone. */
static const struct {
	const char *from, *name;
} copies[] = {
	{ ISO_BUILDDIR "/.libs/libisospawn.so.0", "libisospawn.so.0" },
	{ ISO_SRCDIR "/python/tests/test_live.py", "test_live.py" },
	{ ISO_SRCDIR "/python/tests/conftest.py", "conftest.py" },
	{ ISO_SRCDIR "/examples/supervisor.py", "supervisor.py" },
};
#define COPIES (sizeof(copies) / sizeof(copies[0]))

static char pydir[256];

/* Does the interpreter have pytest? Asked as root, before anything. */
static int have_pytest(void)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "%s -c 'import pytest' >/dev/null 2>&1",
		 ISO_PYTHON);
	return system(cmd) == 0;
}

static void install_copies(void)
{
	char path[512];

	/* In the run's own root, which goes when the run exits. */
	snprintf(pydir, sizeof(pydir), "%s/python", T_SHARED);
	if (mkdir(pydir, 0755) < 0) {
		fprintf(stderr, "live_python: %s: %s\n", pydir, strerror(errno));
		exit(99);
	}
	for (size_t i = 0; i < COPIES; i++) {
		snprintf(path, sizeof(path), "%s/%s", pydir, copies[i].name);
		test_install_file(copies[i].from, path, 0644);
	}
	snprintf(path, sizeof(path), "%s/isospawn", pydir);
	test_install_dir(ISO_BUILDDIR "/python/site/isospawn", path, 0644);
}

/* In Check's forked test process: become the caller, exec pytest. An
 * exit test: pytest's own exit status (0 = every test passed) decides. */
START_TEST(test_pytest_as_the_unprivileged_caller)
{
	char tests[300];
	const char *argv[] = { ISO_PYTHON, "-m", "pytest", "-p",
			       "no:cacheprovider", "-q", "-rs", tests, NULL };

	snprintf(tests, sizeof(tests), "%s/test_live.py", pydir);
	become(T_CALLER);
	/* The package under test, for this caller and (forwarded, with a
	 * read grant) for Python guests. */
	setenv("PYTHONPATH", pydir, 1);
	setenv("LD_LIBRARY_PATH", pydir, 1);
	setenv("ISOSPAWN_TEST_PYDIR", pydir, 1);
	setenv("PYTHONDONTWRITEBYTECODE", "1", 1);
	unsetenv("PYTHONHOME");
	unsetenv("PYTHONSTARTUP");
	ck_assert_int_eq(chdir("/"), 0);
	fflush(stdout);
	execv(ISO_PYTHON, (char *const *)argv);
	ck_abort_msg("exec %s: %s", ISO_PYTHON, strerror(errno));
}
END_TEST

int main(void)
{
	Suite *s;
	TCase *tc;
	SRunner *sr;
	int failed;

	/* ASan's runtime must be loaded first, and gcov would write where
	 * the caller and guests cannot: python3 cannot load an instrumented
	 * libisospawn. */
	if (getenv("ISO_INSTR_CFLAGS") != NULL && *getenv("ISO_INSTR_CFLAGS")) {
		printf("SKIP: python3 cannot load an instrumented libisospawn "
		       "(%s)\n", getenv("ISO_INSTR_CFLAGS"));
		return 77;
	}
	harness_setup(); /* exits 77 when not root */
	if (!have_pytest()) {
		printf("SKIP: %s has no pytest (apt-get install python3-pytest)\n",
		       ISO_PYTHON);
		return 77;
	}
	install_copies();
	/* Made only now: a skip above must leave nothing for LeakSanitizer
	 * to report in sanitizer builds. */
	s = suite_create("python");
	tc = tcase_create("live");
	tcase_set_timeout(tc, 900);
	tcase_add_exit_test(tc, test_pytest_as_the_unprivileged_caller, 0);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_FORK);
	/* Silent: the last summary line must be pytest's, one result per
	 * pytest test (python/tests/conftest.py), for tests/check-driver. */
	srunner_run_all(sr, CK_SILENT);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
