/*
 * live_policy.c - policy_check_path() and policy_load() on real files
 * (helper/policy.c): owners, modes, symbolic links and sizes of the policy
 * file, its directories and the drop-in files it includes. Root, to own and chown them. Each check builds
 * its tree in a /var/lib of its own (a tmpfs in the check's own mount
 * namespace), so runs at once do not meet and nothing is left behind.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy.h"

#define ROOT_DIR "/var/lib/isospawn-unit-policy"
#define DROPINS ROOT_DIR "/isospawn.d"
#define NOBODY 65534

static char why[1024];
static struct iso_policy pol;

/* ------------------------------------------------------------------ */
/* The file and its directories (root)                                  */

static int remove_entry(const char *path, const struct stat *st, int flag,
			struct FTW *ftw)
{
	return remove(path);
}

static void remove_tree(void)
{
	nftw(ROOT_DIR, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

static void write_file(const char *path, const char *text, mode_t mode)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	ck_assert_msg(fd >= 0, "create %s", path);
	ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	ck_assert_int_eq(fchmod(fd, mode), 0);
	close(fd);
}

/* A checked fixture: runs in the check's own process. */
static void setup_tree(void)
{
	umask(022);
	ck_assert_msg(unshare(CLONE_NEWNS) == 0 &&
		      mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 &&
		      mount("tmpfs", "/var/lib", "tmpfs", MS_NOSUID, "mode=0755") == 0,
		      "a private /var/lib: %s", strerror(errno));
	ck_assert_int_eq(mkdir(ROOT_DIR, 0755), 0);
	ck_assert_int_eq(chmod(ROOT_DIR, 0755), 0);
	write_file(ROOT_DIR "/good.conf",
		   "rule user:#1 {\npool 1900000010-1900000019\nprograms any\n}\n", 0644);
}

static void teardown_tree(void)
{
	remove_tree();
	policy_free(&pol);
}

static int check_path(const char *path)
{
	why[0] = '\0';
	return policy_check_path(path, 0, why, sizeof(why));
}

static void check_path_refused(const char *path, int code,
			       const char *reason)
{
	int rc = check_path(path);

	ck_assert_int_eq(rc, code);
	ck_assert_msg(strstr(why, reason) != NULL, "got \"%s\", want \"%s\"",
		      why, reason);
}

START_TEST(check_path_good_file)
{
	int rc = check_path(ROOT_DIR "/good.conf");

	ck_assert_msg(rc == 0, "rc %d: %s", rc, why);
}
END_TEST

START_TEST(check_path_world_writable_file)
{
	ck_assert_int_eq(chmod(ROOT_DIR "/good.conf", 0666), 0);
	check_path_refused(ROOT_DIR "/good.conf", -EPERM,
			   ROOT_DIR "/good.conf: mode 0666 is writable by "
				    "others");
}
END_TEST

START_TEST(check_path_group_writable_file)
{
	ck_assert_int_eq(chmod(ROOT_DIR "/good.conf", 0620), 0);
	check_path_refused(ROOT_DIR "/good.conf", -EPERM,
			   ROOT_DIR "/good.conf: mode 0620 is writable by "
				    "its group");
}
END_TEST

START_TEST(check_path_file_of_other_owner)
{
	ck_assert_int_eq(chown(ROOT_DIR "/good.conf", NOBODY, 0), 0);
	check_path_refused(ROOT_DIR "/good.conf", -EPERM,
			   ROOT_DIR "/good.conf: owned by uid 65534, "
				    "expected uid 0");
}
END_TEST

START_TEST(check_path_writable_ancestor)
{
	ck_assert_int_eq(mkdir(ROOT_DIR "/sub", 0755), 0);
	write_file(ROOT_DIR "/sub/p.conf", "", 0644);
	ck_assert_int_eq(chmod(ROOT_DIR "/sub", 0777), 0);
	check_path_refused(ROOT_DIR "/sub/p.conf", -EPERM,
			   ROOT_DIR "/sub: mode 0777 is writable by others");
}
END_TEST

START_TEST(check_path_ancestor_of_other_owner)
{
	ck_assert_int_eq(mkdir(ROOT_DIR "/sub", 0755), 0);
	write_file(ROOT_DIR "/sub/p.conf", "", 0644);
	ck_assert_int_eq(chown(ROOT_DIR "/sub", NOBODY, 0), 0);
	check_path_refused(ROOT_DIR "/sub/p.conf", -EPERM,
			   ROOT_DIR "/sub: owned by uid 65534, expected uid 0");
}
END_TEST

START_TEST(check_path_symlink)
{
	ck_assert_int_eq(symlink("good.conf", ROOT_DIR "/link.conf"), 0);
	check_path_refused(ROOT_DIR "/link.conf", -EPERM,
			   ROOT_DIR "/link.conf: a symbolic link, expected a "
				    "regular file");
}
END_TEST

START_TEST(check_path_symlinked_ancestor)
{
	ck_assert_int_eq(mkdir(ROOT_DIR "/real", 0755), 0);
	write_file(ROOT_DIR "/real/p.conf", "", 0644);
	ck_assert_int_eq(symlink("real", ROOT_DIR "/alias"), 0);
	check_path_refused(ROOT_DIR "/alias/p.conf", -EPERM,
			   ROOT_DIR "/alias: a symbolic link, expected a "
				    "directory");
}
END_TEST

START_TEST(check_path_missing_file)
{
	check_path_refused(ROOT_DIR "/absent.conf", -ENOENT,
			   ROOT_DIR "/absent.conf: ");
}
END_TEST

START_TEST(load_good_file)
{
	int rc;

	why[0] = '\0';
	rc = policy_load(ROOT_DIR "/good.conf", &pol, why, sizeof(why));
	ck_assert_msg(rc == 0, "rc %d: %s", rc, why);
	ck_assert_uint_eq(pol.nrules, 1);
	ck_assert_uint_eq(pol.rules[0].pool_first, 1900000010);
}
END_TEST

START_TEST(load_refuses_writable_file)
{
	ck_assert_int_eq(chmod(ROOT_DIR "/good.conf", 0646), 0);
	ck_assert_int_eq(policy_load(ROOT_DIR "/good.conf", &pol, why,
				     sizeof(why)),
			 -EPERM);
	ck_assert_ptr_null(pol.rules);
	ck_assert_uint_eq(pol.nrules, 0);
}
END_TEST

START_TEST(load_names_file_in_errors)
{
	write_file(ROOT_DIR "/bad.conf", "rule user:#1 {\npool 0-1\n", 0644);
	ck_assert_int_eq(policy_load(ROOT_DIR "/bad.conf", &pol, why,
				     sizeof(why)),
			 -EINVAL);
	ck_assert_msg(strstr(why, ROOT_DIR "/bad.conf:2: expected a pool "
					   "without uid 0") != NULL,
		      "got \"%s\"", why);
}
END_TEST

START_TEST(load_refuses_oversized_file)
{
	char *text = malloc(ISO_POLICY_FILE_MAX + 2);

	ck_assert_ptr_nonnull(text);
	memset(text, '\n', ISO_POLICY_FILE_MAX + 1);
	text[ISO_POLICY_FILE_MAX + 1] = '\0';
	write_file(ROOT_DIR "/big.conf", text, 0644);
	free(text);
	ck_assert_int_eq(policy_load(ROOT_DIR "/big.conf", &pol, why,
				     sizeof(why)),
			 -EINVAL);
	ck_assert_msg(strstr(why, ROOT_DIR "/big.conf: expected at most 65536 "
					   "bytes, got more") != NULL,
		      "got \"%s\"", why);
	ck_assert_ptr_null(pol.rules);
}
END_TEST

/* Drop-ins: MAIN includes DROPINS, which holds what each test writes. */
#define MAIN ROOT_DIR "/main.conf"

static void dropin(const char *name, const char *text, mode_t mode)
{
	char path[256];

	mkdir(DROPINS, 0755);
	snprintf(path, sizeof(path), DROPINS "/%s", name);
	write_file(path, text, mode);
}

static int load(void)
{
	write_file(MAIN,
		   "rule user:#1 {\npool 1900000010-1900000019\nprograms any\n}\n"
		   "include " DROPINS "\n"
		   "rule user:#9 {\npool 1900000090-1900000099\nprograms any\n}\n", 0644);
	why[0] = '\0';
	return policy_load(MAIN, &pol, why, sizeof(why));
}

static void load_refused(int code, const char *reason)
{
	int rc = load();

	ck_assert_int_eq(rc, code);
	ck_assert_msg(strstr(why, reason) != NULL, "got \"%s\", want \"%s\"", why, reason);
	ck_assert_ptr_null(pol.rules);
	ck_assert_uint_eq(pol.nrules, 0);
	ck_assert_ptr_null(pol.include);
}

START_TEST(load_without_dropin_dir)
{
	int rc = load();

	ck_assert_msg(rc == 0, "rc %d: %s", rc, why);
	ck_assert_uint_eq(pol.nrules, 2);
	ck_assert_str_eq(pol.rules[0].file, MAIN);
	ck_assert_str_eq(pol.include, DROPINS);
}
END_TEST

START_TEST(load_reads_dropins_in_place_of_include_in_byte_order)
{
	int rc;

	dropin("b.conf", "rule user:#3 {\npool 1900000030-1900000039\nprograms any\n}\n", 0644);
	dropin("A.conf", "# first\n\nrule user:#2 {\npool 1900000020-1900000029\nprograms any\n}\n", 0644);
	dropin("c.conf.dpkg-old", "rule user:#4 {\npool 1900000040-1900000049\nprograms any\n}\n", 0644);
	dropin(".d.conf", "rule user:#5 {\npool 1900000050-1900000059\nprograms any\n}\n", 0644);
	dropin("e.txt", "not a policy", 0644);
	rc = load();
	ck_assert_msg(rc == 0, "rc %d: %s", rc, why);
	ck_assert_uint_eq(pol.nrules, 4);
	ck_assert_str_eq(pol.rules[0].file, MAIN);
	ck_assert_str_eq(pol.rules[1].file, DROPINS "/A.conf");
	ck_assert_uint_eq(pol.rules[1].line, 3);
	ck_assert_uint_eq(pol.rules[1].id, 2);
	ck_assert_str_eq(pol.rules[2].file, DROPINS "/b.conf");
	ck_assert_uint_eq(pol.rules[2].id, 3);
	ck_assert_str_eq(pol.rules[3].file, MAIN);
	ck_assert_uint_eq(pol.rules[3].line, 6);
}
END_TEST

START_TEST(load_error_in_dropin_names_its_file_and_line)
{
	dropin("10-ok.conf", "rule user:#2 {\npool 1900000020-1900000029\nprograms any\n}\n", 0644);
	dropin("20-bad.conf", "rule user:#3 {\npool 1900000030-1900000039\nnetwork maybe\n}\n", 0644);
	load_refused(-EINVAL, DROPINS "/20-bad.conf:3: expected 'host', 'none' or "
			      "'none-only' after 'network', got 'maybe'");
}
END_TEST

START_TEST(load_pools_apart_across_files)
{
	dropin("x.conf", "rule user:#2 {\npool 1900000015-1900000025\nprograms any\n}\n", 0644);
	load_refused(-EINVAL, DROPINS "/x.conf:2: expected a pool apart from the pool "
			      "1900000010-1900000019 of the rule at " MAIN ":1, got "
			      "'1900000015-1900000025'");
}
END_TEST

START_TEST(load_pools_apart_from_rules_after_include)
{
	dropin("x.conf", "rule user:#2 {\npool 1900000090-1900000090\nprograms any\n}\n", 0644);
	load_refused(-EINVAL, MAIN ":7: expected a pool apart from the pool "
			      "1900000090-1900000090 of the rule at " DROPINS "/x.conf:1, got '1900000090-1900000099'");
}
END_TEST

START_TEST(load_dropin_may_not_include)
{
	dropin("x.conf", "include " ROOT_DIR "\n", 0644);
	load_refused(-EINVAL, DROPINS "/x.conf:1: expected 'rule', got 'include'");
}
END_TEST

START_TEST(load_refuses_group_writable_dropin)
{
	dropin("x.conf", "rule user:#2 {\npool 1900000020-1900000029\nprograms any\n}\n", 0664);
	load_refused(-EPERM, DROPINS "/x.conf: mode 0664 is writable by its group");
}
END_TEST

START_TEST(load_refuses_dropin_of_other_owner)
{
	dropin("x.conf", "", 0644);
	ck_assert_int_eq(chown(DROPINS "/x.conf", NOBODY, 0), 0);
	load_refused(-EPERM, DROPINS "/x.conf: owned by uid 65534, expected uid 0");
}
END_TEST

START_TEST(load_refuses_symlinked_dropin)
{
	dropin("real.txt", "", 0644);
	ck_assert_int_eq(symlink("real.txt", DROPINS "/x.conf"), 0);
	load_refused(-EPERM, DROPINS "/x.conf: a symbolic link, expected a regular file");
}
END_TEST

START_TEST(load_refuses_writable_dropin_dir_even_empty)
{
	ck_assert_int_eq(mkdir(DROPINS, 0755), 0);
	ck_assert_int_eq(chmod(DROPINS, 0775), 0);
	load_refused(-EPERM, DROPINS ": mode 0775 is writable by its group");
}
END_TEST

START_TEST(load_refuses_dropin_dir_that_is_a_file)
{
	write_file(DROPINS, "", 0644);
	load_refused(-EPERM, DROPINS ": a regular file, expected a directory");
}
END_TEST

START_TEST(load_refuses_too_many_dropins)
{
	char name[32];

	for (int i = 0; i <= ISO_POLICY_DROPINS_MAX; i++) {
		snprintf(name, sizeof(name), "%03d.conf", i);
		dropin(name, "", 0644);
	}
	load_refused(-EINVAL, MAIN ":5: expected at most 64 *.conf files in " DROPINS
			      ", got 65");
}
END_TEST

START_TEST(add_file_unchecked_reads_a_writable_file)
{
	int rc;

	ck_assert_int_eq(chmod(ROOT_DIR "/good.conf", 0666), 0);
	memset(&pol, 0, sizeof(pol));
	rc = policy_add_file(ROOT_DIR "/good.conf", 0, 0, &pol, why, sizeof(why));
	ck_assert_msg(rc == 0, "rc %d: %s", rc, why);
	ck_assert_uint_eq(pol.nrules, 1);
	ck_assert_int_eq(policy_add_file(ROOT_DIR "/good.conf", 1, 0, &pol, why, sizeof(why)),
			 -EPERM);
	ck_assert_uint_eq(pol.nrules, 0);
}
END_TEST

static Suite *policy_files_suite(void)
{
	Suite *s = suite_create("policy_files");
	TCase *root;

	root = tcase_create("root");
	tcase_add_checked_fixture(root, setup_tree, teardown_tree);
	tcase_add_test(root, check_path_good_file);
	tcase_add_test(root, check_path_world_writable_file);
	tcase_add_test(root, check_path_group_writable_file);
	tcase_add_test(root, check_path_file_of_other_owner);
	tcase_add_test(root, check_path_writable_ancestor);
	tcase_add_test(root, check_path_ancestor_of_other_owner);
	tcase_add_test(root, check_path_symlink);
	tcase_add_test(root, check_path_symlinked_ancestor);
	tcase_add_test(root, check_path_missing_file);
	tcase_add_test(root, load_good_file);
	tcase_add_test(root, load_refuses_writable_file);
	tcase_add_test(root, load_names_file_in_errors);
	tcase_add_test(root, load_refuses_oversized_file);
	tcase_add_test(root, load_without_dropin_dir);
	tcase_add_test(root, load_reads_dropins_in_place_of_include_in_byte_order);
	tcase_add_test(root, load_error_in_dropin_names_its_file_and_line);
	tcase_add_test(root, load_pools_apart_across_files);
	tcase_add_test(root, load_pools_apart_from_rules_after_include);
	tcase_add_test(root, load_dropin_may_not_include);
	tcase_add_test(root, load_refuses_group_writable_dropin);
	tcase_add_test(root, load_refuses_dropin_of_other_owner);
	tcase_add_test(root, load_refuses_symlinked_dropin);
	tcase_add_test(root, load_refuses_writable_dropin_dir_even_empty);
	tcase_add_test(root, load_refuses_dropin_dir_that_is_a_file);
	tcase_add_test(root, load_refuses_too_many_dropins);
	tcase_add_test(root, add_file_unchecked_reads_a_writable_file);
	suite_add_tcase(s, root);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	if (geteuid() != 0) {
		printf("SKIP: policy file checks need root to own and chown "
		       "the files they check\n");
		return 77;
	}
	sr = srunner_create(policy_files_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
