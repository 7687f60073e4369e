/*
 * sanitizer_options.c - linked into the test helper of sanitizer builds
 * only (never into the installed helper): the sanitizer runtimes ask these
 * for their defaults before main(). The helper runs with an empty
 * environment, so this is the one way to tell them where to report: files
 * named sanitizer.PID in the run's own root (tests/install.h), which the
 * test program reads when it ends and fails on (tests/install.c).
 */
#define VISIBLE __attribute__((visibility("default")))

VISIBLE const char *__asan_default_options(void);
VISIBLE const char *__ubsan_default_options(void);

VISIBLE const char *__asan_default_options(void)
{
	return "log_path=" ISO_TEST_ROOT "/sanitizer:detect_leaks=1";
}

VISIBLE const char *__ubsan_default_options(void)
{
	return "log_path=" ISO_TEST_ROOT "/sanitizer:print_stacktrace=1";
}
