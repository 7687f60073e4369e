/*
 * live_policy.c - policy_check_path() and policy_load() on real files
 * (policy/policy.c): owners, modes, symbolic links and sizes of the policy
 * file, its directories and the drop-in files it includes; a collecting
 * read, drafts, and what a drop-in may not hold. Root, to own and chown
 * them. Each check builds
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

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
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

static void check_path_refused(const char *path, int code, const char *reason)
{
	int rc = check_path(path);

	ck_assert_int_eq(rc, code);
	ck_assert_msg(strstr(why, reason) != NULL, "got \"%s\", want \"%s\"", why, reason);
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
	check_path_refused(ROOT_DIR "/absent.conf", -ENOENT, ROOT_DIR "/absent.conf: ");
}
END_TEST

START_TEST(load_good_file)
{
	int rc;

	why[0] = '\0';
	rc = policy_load(ROOT_DIR "/good.conf", &pol, NULL, why, sizeof(why));
	ck_assert_msg(rc == 0, "rc %d: %s", rc, why);
	ck_assert_uint_eq(pol.nrules, 1);
	ck_assert_uint_eq(pol.rules[0].pool_first, 1900000010);
}
END_TEST

START_TEST(load_refuses_writable_file)
{
	ck_assert_int_eq(chmod(ROOT_DIR "/good.conf", 0646), 0);
	ck_assert_int_eq(policy_load(ROOT_DIR "/good.conf", &pol, NULL, why, sizeof(why)), -EPERM);
	ck_assert_ptr_null(pol.rules);
	ck_assert_uint_eq(pol.nrules, 0);
}
END_TEST

START_TEST(load_names_file_in_errors)
{
	write_file(ROOT_DIR "/bad.conf", "rule user:#1 {\npool 0-1\n", 0644);
	ck_assert_int_eq(policy_load(ROOT_DIR "/bad.conf", &pol, NULL, why, sizeof(why)), -EINVAL);
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
	ck_assert_int_eq(policy_load(ROOT_DIR "/big.conf", &pol, NULL, why, sizeof(why)), -EINVAL);
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
		   "rule user:#9 {\npool 1900000090-1900000099\nprograms any\n}\n",
		   0644);
	why[0] = '\0';
	return policy_load(MAIN, &pol, NULL, why, sizeof(why));
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
	dropin("A.conf", "# first\n\nrule user:#2 {\npool 1900000020-1900000029\nprograms any\n}\n",
	       0644);
	dropin("c.conf.dpkg-old", "rule user:#4 {\npool 1900000040-1900000049\nprograms any\n}\n",
	       0644);
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
	dropin("20-bad.conf", "rule user:#3 {\npool 1900000030-1900000039\nnetwork maybe\n}\n",
	       0644);
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
				   "1900000090-1900000090 of the rule at " DROPINS
				   "/x.conf:1, got '1900000090-1900000099'");
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
	load_refused(-EINVAL, MAIN ":5: expected at most 64 *.conf files in " DROPINS ", got 65");
}
END_TEST

/* A reader that may not examine owners (isospawnctl check run by a
 * caller) reads a file the helper would refuse; the helper's read does
 * not. */
START_TEST(unchecked_load_reads_a_writable_file)
{
	struct iso_policy_report report = { .flags = ISO_POLICY_UNCHECKED };
	int rc;

	ck_assert_int_eq(chmod(ROOT_DIR "/good.conf", 0666), 0);
	rc = policy_load(ROOT_DIR "/good.conf", &pol, &report, why, sizeof(why));
	ck_assert_msg(rc == 0, "rc %d: %s", rc, why);
	ck_assert_uint_eq(pol.nrules, 1);
	policy_free(&pol);
	ck_assert_int_eq(policy_load(ROOT_DIR "/good.conf", &pol, NULL, why, sizeof(why)), -EPERM);
	ck_assert_uint_eq(pol.nrules, 0);
	policy_report_free(&report);
}
END_TEST

/* As visudo -c: a collecting read notes every error of every file, the
 * main file's and each drop-in's, in the order read, and keeps nothing;
 * the helper's read stops at the first, the same one. */
START_TEST(collecting_load_notes_every_error_of_every_file)
{
	struct iso_policy_report report = { .flags = ISO_POLICY_COLLECT };
	int rc;

	write_file(MAIN,
		   "rule user:#1 {\npool 1900000010-1900000019\nprograms any\n"
		   "network maybe\n}\ninclude " DROPINS "\nbogus\n",
		   0644);
	dropin("a.conf", "rule user:#2 {\npool 5\nprograms any\n}\n", 0644);
	dropin("b.conf", "rule user:#3 {\npool 1900000015-1900000016\nprograms any\n}\n", 0644);
	rc = policy_load(MAIN, &pol, &report, why, sizeof(why));
	ck_assert_int_eq(rc, -EINVAL);
	ck_assert_ptr_null(pol.rules);
	ck_assert_uint_eq(report.errors, 4);
	ck_assert_uint_eq(report.nnotes, 4);
	ck_assert_str_eq(report.notes[0], MAIN ":4: expected 'host', 'none' or 'none-only' after "
					       "'network', got 'maybe'");
	ck_assert_str_eq(report.notes[1], MAIN ":7: expected 'rule', 'defaults', 'include', "
					       "'audit-log' or 'cgroup-parent', got 'bogus'");
	ck_assert_str_eq(report.notes[2], DROPINS "/a.conf:2: expected FIRST-LAST (two uids "
						  "from 1 to 4294967294) after 'pool', got '5'");
	ck_assert_str_eq(report.notes[3],
			 DROPINS "/b.conf:2: expected a pool apart from the "
				 "pool 1900000010-1900000019 of the rule at " MAIN ":1, got "
				 "'1900000015-1900000016'");
	ck_assert_str_eq(why, report.notes[0]);
	policy_report_free(&report);
	why[0] = '\0';
	ck_assert_int_eq(policy_load(MAIN, &pol, NULL, why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, MAIN ":4: expected 'host', 'none' or 'none-only' after 'network', "
				   "got 'maybe'");
}
END_TEST

/* A collecting read stops at its bound, and says so. */
START_TEST(collecting_load_stops_at_its_bound)
{
	struct iso_policy_report report = { .flags = ISO_POLICY_COLLECT };
	char text[4096] = "";

	for (int i = 0; i < ISO_POLICY_ERRORS_MAX + 10; i++)
		strcat(text, "bogus\n");
	write_file(MAIN, text, 0644);
	ck_assert_int_eq(policy_load(MAIN, &pol, &report, why, sizeof(why)), -EINVAL);
	ck_assert_uint_eq(report.errors, ISO_POLICY_ERRORS_MAX);
	ck_assert_uint_eq(report.nnotes, ISO_POLICY_ERRORS_MAX + 1);
	ck_assert_str_eq(report.notes[ISO_POLICY_ERRORS_MAX], "too many errors: stopped reading");
	policy_report_free(&report);
}
END_TEST

/* A drop-in's rule for an account that is gone (its package removed)
 * matches no one, keeps its pool, and is said in a warning; the other
 * rules serve their callers. In the main file the same is an error. */
START_TEST(dropin_rule_of_a_missing_account_matches_no_one)
{
	struct iso_policy_report report = { 0 };
	int rc;

	dropin("a.conf",
	       "rule user:isospawn-no-such-user {\npool 1900000020-1900000029\n"
	       "programs any\n}\nrule group:isospawn-no-such-group {\n"
	       "pool 1900000030-1900000039\nprograms any\n}\n",
	       0644);
	dropin("b.conf", "rule user:#2 {\npool 1900000025-1900000025\nprograms any\n}\n", 0644);
	/* Its pool is still its own. */
	ck_assert_int_eq(load(), -EINVAL);
	ck_assert_msg(strstr(why, DROPINS "/b.conf:2: expected a pool apart from the pool "
					  "1900000020-1900000029 of the rule at " DROPINS
					  "/a.conf:1") != NULL,
		      "%s", why);
	dropin("b.conf", "rule user:#2 {\npool 1900000040-1900000049\nprograms any\n}\n", 0644);
	write_file(MAIN,
		   "rule user:#1 {\npool 1900000010-1900000019\nprograms any\n}\n"
		   "include " DROPINS "\n",
		   0644);
	rc = policy_load(MAIN, &pol, &report, why, sizeof(why));
	ck_assert_msg(rc == 0, "%s", why);
	ck_assert_uint_eq(pol.nrules, 4);
	ck_assert_int_eq(pol.rules[1].match, ISO_MATCH_NOBODY);
	ck_assert_int_eq(pol.rules[2].match, ISO_MATCH_NOBODY);
	ck_assert_uint_eq(report.warnings, 2);
	ck_assert_str_eq(report.notes[0],
			 DROPINS "/a.conf:1: warning: no user "
				 "'isospawn-no-such-user': the rule matches no one");
	ck_assert_str_eq(report.notes[1],
			 DROPINS "/a.conf:5: warning: no group "
				 "'isospawn-no-such-group': the rule matches no one");
	ck_assert_ptr_eq(policy_match(&pol, 1, 1, NULL, 0), &pol.rules[0]);
	ck_assert_ptr_eq(policy_match(&pol, 2, 2, NULL, 0), &pol.rules[3]);
	ck_assert_ptr_null(policy_match(&pol, 0, 0, NULL, 0));
	policy_report_free(&report);
	policy_free(&pol);
	write_file(MAIN,
		   "rule user:isospawn-no-such-user {\npool 1900000010-1900000019\n"
		   "programs any\n}\n",
		   0644);
	ck_assert_int_eq(policy_load(MAIN, &pol, NULL, why, sizeof(why)), -EINVAL);
	ck_assert_str_eq(why, MAIN ":1: expected an existing user, got 'isospawn-no-such-user'");
}
END_TEST

/* The main file's defaults reach the drop-ins' rules too; a drop-in holds
 * rules only. */
START_TEST(dropin_rules_inherit_the_defaults_and_hold_rules_only)
{
	int rc;

	write_file(MAIN, "defaults {\nlimit as 2G\nguests 3\n}\ninclude " DROPINS "\n", 0644);
	dropin("a.conf",
	       "rule user:#2 {\npool 1900000020-1900000029\nprograms any\n"
	       "guests 5\n}\n",
	       0644);
	rc = policy_load(MAIN, &pol, NULL, why, sizeof(why));
	ck_assert_msg(rc == 0, "%s", why);
	ck_assert_uint_eq(pol.rules[0].ceiling[ISO_LIMIT_AS], 2ull << 30);
	ck_assert_str_eq(pol.rules[0].limit_at[ISO_LIMIT_AS].file, MAIN);
	ck_assert_uint_eq(pol.rules[0].limit_at[ISO_LIMIT_AS].line, 2);
	ck_assert_int_eq(pol.rules[0].guests_max, 5);
	ck_assert_str_eq(pol.rules[0].text, "defaults {\nlimit as 2G\nguests 3\n}\n"
					    "rule user:#2 {\npool 1900000020-1900000029\n"
					    "programs any\nguests 5\n}");
	policy_free(&pol);
	for (int i = 0; i < 3; i++) {
		static const char *const top[] = { "defaults {", "include /x", "audit-log /x" };
		char text[128];

		snprintf(text, sizeof(text), "%s\n", top[i]);
		dropin("a.conf", text, 0644);
		snprintf(text, sizeof(text),
			 DROPINS "/a.conf:1: expected 'rule', got '%.*s' (a "
				 "drop-in holds rules only)",
			 (int)strcspn(top[i], " "), top[i]);
		ck_assert_int_eq(policy_load(MAIN, &pol, NULL, why, sizeof(why)), -EINVAL);
		ck_assert_str_eq(why, text);
	}
}
END_TEST

/* isospawnctl check of a draft: where it lies is the helper's concern
 * only once it is installed, so it is a warning; what it says is checked
 * in full. More files are read as drop-ins after the included ones. */
START_TEST(draft_place_is_a_warning_and_more_files_are_dropins)
{
	struct iso_policy_report report = { .flags = ISO_POLICY_COLLECT | ISO_POLICY_DRAFT };
	const char *const more[] = { ROOT_DIR "/extra.conf", NULL };
	int rc;

	dropin("a.conf", "rule user:#2 {\npool 1900000020-1900000029\nprograms any\n}\n", 0644);
	write_file(ROOT_DIR "/extra.conf",
		   "rule user:#3 {\npool 1900000030-1900000039\nprograms any\n}\n", 0664);
	write_file(MAIN,
		   "rule user:#1 {\npool 1900000010-1900000019\nprograms any\n}\n"
		   "include " DROPINS "\n"
		   "rule user:#9 {\npool 1900000090-1900000099\nprograms any\n}\n",
		   0646);
	report.more = more;
	rc = policy_load(MAIN, &pol, &report, why, sizeof(why));
	ck_assert_msg(rc == 0, "%s", why);
	ck_assert_uint_eq(report.errors, 0);
	ck_assert_uint_eq(report.warnings, 2);
	ck_assert_str_eq(report.notes[0],
			 MAIN ": warning: would be refused once installed there: " MAIN
			      ": mode 0646 is writable by others");
	ck_assert_str_eq(report.notes[1],
			 ROOT_DIR "/extra.conf: warning: would be refused once "
				  "installed there: " ROOT_DIR "/extra.conf: mode 0664 is "
				  "writable by its group");
	ck_assert_uint_eq(pol.nrules, 4);
	ck_assert_uint_eq(pol.rules[1].id, 2);
	ck_assert_uint_eq(pol.rules[2].id, 3);
	ck_assert_uint_eq(pol.rules[3].id, 9);
	policy_report_free(&report);
	policy_free(&pol);
	/* Its meaning is checked as the helper's: an error stays one. */
	report = (struct iso_policy_report){ .flags = ISO_POLICY_COLLECT | ISO_POLICY_DRAFT };
	write_file(MAIN, "rule user:#1 {\npool 0-1\nprograms any\n}\n", 0646);
	ck_assert_int_eq(policy_load(MAIN, &pol, &report, why, sizeof(why)), -EINVAL);
	ck_assert_uint_eq(report.errors, 1);
	policy_report_free(&report);
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
	tcase_add_test(root, unchecked_load_reads_a_writable_file);
	tcase_add_test(root, collecting_load_notes_every_error_of_every_file);
	tcase_add_test(root, collecting_load_stops_at_its_bound);
	tcase_add_test(root, dropin_rule_of_a_missing_account_matches_no_one);
	tcase_add_test(root, dropin_rules_inherit_the_defaults_and_hold_rules_only);
	tcase_add_test(root, draft_place_is_a_warning_and_more_files_are_dropins);
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
