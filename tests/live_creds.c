/*
 * live_creds.c - the helper's own credentials and state directories
 * (helper/creds.c), exercised directly. Root only (the helper is setuid
 * root): each case runs in a forked child that plays the helper and exits
 * with 0 or a line on stderr; without root the whole program says SKIP.
 *
 * Compiled with ISO_STATE_DIR under BASE (see
 * Makefile.am), which the fixture rebuilds for every case.
 */
#include "config.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "creds.h"

#define BASE "/var/lib/isospawn-live-creds"
#define CALLER_GID 4000099u /* a caller's gid and groups, no account's */
#define CALLER_GROUP 4000098u
#define GUEST_UID 4000096u
#define CALLER_UID 4000095u

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)type, (void)ftw;
	return remove(path);
}

static void fresh_base(void)
{
	/* A checked fixture runs in the check's own process: its own mount
	 * namespace and /var/lib (a tmpfs), so that runs at once do not meet
	 * and nothing is left behind. */
	if (unshare(CLONE_NEWNS) < 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", "/var/lib", "tmpfs", MS_NOSUID, "mode=0755") < 0)
		ck_abort_msg("a private /var/lib: %s", strerror(errno));
	if (mkdir(BASE, 0755) < 0 || mkdir(BASE "/a", 0755) < 0 || chmod(BASE, 0755) < 0 ||
	    chmod(BASE "/a", 0755) < 0)
		ck_abort_msg("cannot make " BASE);
}

static void remove_base(void)
{
	(void)nftw(BASE, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* In a child: become what the setuid helper is when a caller with gid
 * CALLER_GID and group CALLER_GROUP runs it (euid 0, the caller's gids),
 * with the helper's umask. */
static void as_started_helper(void)
{
	gid_t groups[] = { CALLER_GID, CALLER_GROUP };

	umask(077);
	if (setgroups(2, groups) < 0 || setresgid(CALLER_GID, CALLER_GID, CALLER_GID) < 0)
		_exit(99);
}

static int child_status(pid_t pid)
{
	int status;

	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status), "child died of signal %d", WTERMSIG(status));
	return WEXITSTATUS(status);
}

#define FAIL_IF(cond, ...)                            \
	do {                                          \
		if (cond) {                           \
			fprintf(stderr, __VA_ARGS__); \
			fputc('\n', stderr);          \
			_exit(1);                     \
		}                                     \
	} while (0)

static void identify(void)
{
	struct iso_caller caller;
	char why[256] = "";
	int sv[2];

	FAIL_IF(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) < 0, "socketpair");
	FAIL_IF(caller_identify(sv[0], &caller, why, sizeof(why)) < 0, "identify: %s", why);
	FAIL_IF(caller.gid != CALLER_GID || caller.ngroups != 2, "caller gid %u, %zu groups",
		(unsigned)caller.gid, caller.ngroups);
	close(sv[0]);
	close(sv[1]);
}

/* Once the caller is known, its gid and groups are gone. */
START_TEST(identify_leaves_root_gid_and_no_groups)
{
	pid_t pid = fork();

	if (pid == 0) {
		gid_t r, e, s;

		as_started_helper();
		identify();
		FAIL_IF(getresgid(&r, &e, &s) < 0 || r != 0 || e != 0 || s != 0,
			"gids %u %u %u after identifying the caller", (unsigned)r, (unsigned)e,
			(unsigned)s);
		FAIL_IF(getgroups(0, NULL) != 0, "%d groups left", getgroups(0, NULL));
		_exit(0);
	}
	ck_assert_int_eq(child_status(pid), 0);
}
END_TEST

/* Made root by the setuid bit (its real uid the caller's), the helper is
 * root in all three uids once it knows the caller, so that the caller
 * cannot signal or stop it. */
START_TEST(identify_leaves_root_in_every_uid)
{
	pid_t pid = fork();

	if (pid == 0) {
		struct iso_caller caller;
		char why[256] = "";
		uid_t r = 1, e = 1, s = 1;
		int sv[2];

		as_started_helper();
		/* The caller makes the socket, then runs the setuid helper. */
		FAIL_IF(setresuid(CALLER_UID, CALLER_UID, 0) < 0, "setresuid");
		FAIL_IF(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) < 0, "socketpair");
		FAIL_IF(setresuid((uid_t)-1, 0, (uid_t)-1) < 0, "euid 0");
		FAIL_IF(caller_identify(sv[0], &caller, why, sizeof(why)) < 0, "identify: %s", why);
		FAIL_IF(caller.uid != CALLER_UID, "caller uid %u", (unsigned)caller.uid);
		FAIL_IF(getresuid(&r, &e, &s) < 0 || r != 0 || e != 0 || s != 0,
			"uids %u %u %u after identifying the caller", (unsigned)r, (unsigned)e,
			(unsigned)s);
		_exit(0);
	}
	ck_assert_int_eq(child_status(pid), 0);
}
END_TEST

static void expect_dir(const char *path, mode_t mode)
{
	struct stat st;

	FAIL_IF(lstat(path, &st) < 0, "%s: %s", path, strerror(errno));
	FAIL_IF(!S_ISDIR(st.st_mode) || st.st_uid != 0 || st.st_gid != 0 ||
		    (st.st_mode & 07777) != mode,
		"%s: mode %04o %u:%u, want %04o 0:0", path, (unsigned)(st.st_mode & 07777),
		(unsigned)st.st_uid, (unsigned)st.st_gid, (unsigned)mode);
}

/* The state directories the helper makes are root:root with the
 * modes it names, whatever the caller's gid and the umask (077). (Guests
 * have no directories on disk: their /tmp is a tmpfs, helper/world.c.) */
START_TEST(state_directories_are_root_root_with_explicit_modes)
{
	pid_t pid = fork();

	if (pid == 0) {
		char why[256] = "";

		as_started_helper();
		identify();
		FAIL_IF(state_prepare(why, sizeof(why)) < 0, "state_prepare: %s", why);
		expect_dir(ISO_STATE_DIR, 0700);
		expect_dir(ISO_STATE_DIR "/leases", 0700);
		_exit(0);
	}
	ck_assert_int_eq(child_status(pid), 0);
}
END_TEST

/* In a started helper, state_prepare() refuses with EPERM and a reason
 * holding `reason`, and has not made `made`. */
static void assert_state_refused(const char *reason, const char *made)
{
	pid_t pid = fork();

	if (pid == 0) {
		char why[256] = "";
		int rc;

		as_started_helper();
		identify();
		rc = state_prepare(why, sizeof(why));
		FAIL_IF(rc != -EPERM, "state_prepare returned %d: %s", rc, why);
		FAIL_IF(!strstr(why, reason), "why: %s", why);
		FAIL_IF(access(made, F_OK) == 0, "made %s", made);
		_exit(0);
	}
	ck_assert_int_eq(child_status(pid), 0);
}

/* Every directory above the state directory is trusted like those above
 * the policy: root's, and writable by nobody else. */
START_TEST(state_directory_below_a_writable_ancestor_is_refused)
{
	ck_assert_int_eq(chmod(BASE "/a", 0775), 0);
	assert_state_refused(BASE "/a: mode 0775 is writable by its group", ISO_STATE_DIR);
}
END_TEST

/* Nothing is made below an ancestor before it is checked: mkdir (and
 * chmod) by path follow what the ancestor names, here a symbolic link to
 * another directory, where the state directory would be made. */
START_TEST(state_directory_is_not_made_before_its_ancestors_are_checked)
{
	ck_assert_int_eq(rmdir(BASE "/a"), 0);
	ck_assert_int_eq(mkdir(BASE "/b", 0755), 0);
	ck_assert_int_eq(chmod(BASE "/b", 0755), 0);
	ck_assert_int_eq(symlink("b", BASE "/a"), 0);
	assert_state_refused(BASE "/a: a symbolic link, expected a directory", BASE "/b/run");
}
END_TEST

/* The drop is refused, not trusted, when a capability
 * survives it (here the permitted set, kept by PR_SET_KEEPCAPS). */
START_TEST(drop_with_capabilities_left_is_refused)
{
	pid_t pid = fork();

	if (pid == 0) {
		char why[256] = "";
		int rc;

		FAIL_IF(prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0, "PR_SET_KEEPCAPS");
		rc = creds_drop(GUEST_UID, why, sizeof(why));
		FAIL_IF(rc != -EPERM || !strstr(why, "capabilities"), "creds_drop returned %d: %s",
			rc, why);
		_exit(0);
	}
	ck_assert_int_eq(child_status(pid), 0);
	pid = fork();
	if (pid == 0) {
		char why[256] = "";

		FAIL_IF(creds_drop(GUEST_UID, why, sizeof(why)) < 0, "creds_drop: %s", why);
		_exit(0);
	}
	ck_assert_int_eq(child_status(pid), 0);
}
END_TEST

/* A process of uid that the test (root) starts outside any guest: what a
 * sweep would kill. With real != uid it is what a set-user-ID file of uid
 * gives anyone who runs it: real uid theirs, effective and saved uid. */
static pid_t stray_of(uid_t uid, uid_t real)
{
	int ready[2];
	char byte = 0;
	pid_t pid;

	ck_assert_int_eq(pipe(ready), 0);
	pid = fork();
	if (pid == 0) {
		if (setresgid(uid, uid, uid) < 0 || setresuid(real, uid, uid) < 0)
			_exit(99);
		(void)!write(ready[1], &byte, 1);
		pause();
		_exit(0);
	}
	close(ready[1]);
	ck_assert_int_eq(read(ready[0], &byte, 1), 1);
	close(ready[0]);
	return pid;
}

/* 1 if the stray was killed by SIGKILL (and is reaped now), 0 if it still
 * runs (then it is killed and reaped here). */
static int was_swept(pid_t stray)
{
	int status;

	if (waitpid(stray, &status, WNOHANG) == stray)
		return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
	/* The sweep has returned: its SIGKILL was queued before. */
	usleep(100000);
	if (waitpid(stray, &status, WNOHANG) == stray)
		return WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
	kill(stray, SIGKILL);
	waitpid(stray, &status, 0);
	return 0;
}

/* What the helper does for a guest: take one of the caller's slots, then
 * lease a uid of the pool for it, for a connection that gave back `given`
 * (NULL: none). */
static int take_given(const struct iso_rule *rule, uid_t caller, struct iso_lease *lease,
		      const struct iso_given_uids *given, char *why, size_t n)
{
	lease->slot_fd = caller_slot_take(caller, "guest", rule->guests_max, why, n);
	if (lease->slot_fd < 0)
		return lease->slot_fd;
	return lease_acquire(rule, caller, lease, given, why, n);
}

static int take_lease(const struct iso_rule *rule, uid_t caller, struct iso_lease *lease, char *why,
		      size_t n)
{
	return take_given(rule, caller, lease, NULL, why, n);
}

/* Every uid taken from the pool is swept (every process
 * whose real or saved uid it is, killed): at its first lease, after a
 * helper died holding it, and after a lease given back in order too, as a
 * set-user-ID file a guest left may have let anyone start one since. */
START_TEST(lease_sweeps_every_uid_taken_from_the_pool)
{
	struct iso_rule rule = { .pool_first = GUEST_UID, .pool_last = GUEST_UID, .guests_max = 1 };
	struct iso_lease lease;
	char why[256] = "";
	pid_t stray, holder;
	int status;

	ck_assert_msg(state_prepare(why, sizeof(why)) == 0, "state_prepare: %s", why);
	stray = stray_of(GUEST_UID, GUEST_UID);
	ck_assert_msg(take_lease(&rule, 0, &lease, why, sizeof(why)) == 0, "lease: %s", why);
	ck_assert_msg(was_swept(stray), "the first lease of the uid did not sweep it");
	lease_release(&lease, NULL);
	stray = stray_of(GUEST_UID, CALLER_UID);
	ck_assert_msg(take_lease(&rule, 0, &lease, why, sizeof(why)) == 0, "lease: %s", why);
	ck_assert_msg(was_swept(stray), "a lease given back in order was not swept again "
					"(a set-user-ID process of the uid survived)");
	lease_release(&lease, NULL);
	/* The holder dies: its locks go, lease_release() never runs. */
	holder = fork();
	if (holder == 0)
		_exit(take_lease(&rule, 0, &lease, why, sizeof(why)) == 0 ? 0 : 1);
	ck_assert_int_eq(waitpid(holder, &status, 0), holder);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the holder could not lease");
	stray = stray_of(GUEST_UID, GUEST_UID);
	ck_assert_msg(take_lease(&rule, 0, &lease, why, sizeof(why)) == 0, "lease: %s", why);
	ck_assert_msg(was_swept(stray), "a lease whose holder died was not swept");
	lease_release(&lease, NULL);
}
END_TEST

/* A uid a connection gave back comes back to it first, and unswept only
 * while no other lease of it came between: taken by another connection
 * since, or by a helper that died holding it, it is swept again. (A pool
 * of one uid: every take is of it.) */
START_TEST(lease_given_back_comes_back_unswept_only_untouched)
{
	struct iso_rule rule = { .pool_first = GUEST_UID, .pool_last = GUEST_UID, .guests_max = 1 };
	struct iso_given_uids mine = { .mark = 0x1111 }, other = { .mark = 0x2222 };
	struct iso_lease lease;
	char why[256] = "";
	pid_t stray, holder;
	int status;

	ck_assert_msg(state_prepare(why, sizeof(why)) == 0, "state_prepare: %s", why);
	ck_assert_msg(take_given(&rule, 0, &lease, &mine, why, sizeof(why)) == 0, "%s", why);
	lease_release(&lease, &mine);
	ck_assert_uint_eq(mine.uids[0], GUEST_UID);
	/* Back to the connection that gave it, untouched: as if kept. */
	stray = stray_of(GUEST_UID, GUEST_UID);
	ck_assert_msg(take_given(&rule, 0, &lease, &mine, why, sizeof(why)) == 0, "%s", why);
	ck_assert_msg(!was_swept(stray), "a uid that came back untouched was swept");
	lease_release(&lease, &mine);
	/* Another connection's lease between: swept. */
	ck_assert_msg(take_given(&rule, 0, &lease, &other, why, sizeof(why)) == 0, "%s", why);
	lease_release(&lease, &other);
	stray = stray_of(GUEST_UID, GUEST_UID);
	ck_assert_msg(take_given(&rule, 0, &lease, &mine, why, sizeof(why)) == 0, "%s", why);
	ck_assert_msg(was_swept(stray), "a uid another connection leased since was not swept");
	lease_release(&lease, &mine);
	/* A helper that died holding it: swept. */
	holder = fork();
	if (holder == 0)
		_exit(take_given(&rule, 0, &lease, &other, why, sizeof(why)) == 0 ? 0 : 1);
	ck_assert_int_eq(waitpid(holder, &status, 0), holder);
	ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the holder could not lease");
	stray = stray_of(GUEST_UID, GUEST_UID);
	ck_assert_msg(take_given(&rule, 0, &lease, &mine, why, sizeof(why)) == 0, "%s", why);
	ck_assert_msg(was_swept(stray), "a uid whose holder died was not swept");
	lease_release(&lease, &mine);
}
END_TEST

/* A second lease of the caller's under rule is refused, naming `refusal`,
 * while the first is held, and taken once the first is given back. */
static void second_lease_waits_for_the_first(const struct iso_rule *rule, const char *refusal)
{
	struct iso_lease lease, second;
	char why[256] = "";

	ck_assert_msg(state_prepare(why, sizeof(why)) == 0, "state_prepare: %s", why);
	ck_assert_msg(take_lease(rule, CALLER_UID, &lease, why, sizeof(why)) == 0, "lease: %s",
		      why);
	ck_assert_int_eq(take_lease(rule, CALLER_UID, &second, why, sizeof(why)), -EAGAIN);
	ck_assert_msg(strstr(why, refusal) != NULL, "%s", why);
	lease_release(&lease, NULL);
	ck_assert_msg(take_lease(rule, CALLER_UID, &second, why, sizeof(why)) == 0,
		      "lease once the first is given back: %s", why);
	lease_release(&second, NULL);
}

/* A lease holds one of the caller's 'guests' slots until it is given
 * back: with 'guests 1', a second lease is refused though the pool has a
 * free uid, and taken once the first is given back. */
START_TEST(lease_holds_one_of_the_callers_slots)
{
	struct iso_rule rule = { .pool_first = GUEST_UID,
				 .pool_last = GUEST_UID + 1,
				 .guests_max = 1 };

	second_lease_waits_for_the_first(&rule, "'guests'");
}
END_TEST

/* Never the caller's own uid, whichever way the helper was started (in
 * socket mode the helper's real uid is root's, not the caller's). */
START_TEST(lease_never_takes_the_callers_uid)
{
	struct iso_rule rule = { .pool_first = GUEST_UID, .pool_last = GUEST_UID, .guests_max = 1 };
	struct iso_lease lease;
	char why[256] = "";

	ck_assert_msg(state_prepare(why, sizeof(why)) == 0, "state_prepare: %s", why);
	ck_assert_int_eq(take_lease(&rule, GUEST_UID, &lease, why, sizeof(why)), -EAGAIN);
	ck_assert_msg(strstr(why, "is in use") != NULL, "%s", why);
}
END_TEST

/* A uid is one live guest's: a pool of one uid, with room for two guests,
 * gives the second lease nothing while the first holds it (each lease
 * holds its file's lock through an open file of its own, as another
 * helper's would), and the uid once it is given back. Without the lock,
 * the second lease took the held uid and its sweep killed the first
 * guest's processes. */
START_TEST(lease_never_takes_a_uid_another_lease_holds)
{
	struct iso_rule rule = { .pool_first = GUEST_UID, .pool_last = GUEST_UID, .guests_max = 2 };

	second_lease_waits_for_the_first(&rule, "is in use");
}
END_TEST

/* A slot given back wakes a watch (helper/loop.c waits on one); taking
 * one, failing to take one, or another caller's slot given back does not:
 * else two helpers that wait would wake each other in turn, each failed
 * attempt the other's wake-up. Here CALLER_UID's decimal digits begin
 * another caller's, whose slots must not count as its. */
START_TEST(slot_given_back_wakes_a_watch_and_a_failed_take_does_not)
{
	const uid_t other = CALLER_UID * 10 + 1;
	char why[256] = "";
	int watch, held, other_held;

	ck_assert_msg(state_prepare(why, sizeof(why)) == 0, "state_prepare: %s", why);
	ck_assert_msg((watch = caller_slot_watch(why, sizeof(why))) >= 0, "watch: %s", why);
	ck_assert_msg((held = caller_slot_take(CALLER_UID, "guest", 1, why, sizeof(why))) >= 0,
		      "take: %s", why);
	ck_assert_int_eq(caller_slot_given(watch, CALLER_UID, "guest"), 0);
	ck_assert_int_eq(caller_slot_take(CALLER_UID, "guest", 1, why, sizeof(why)), -EAGAIN);
	ck_assert_msg(caller_slot_given(watch, CALLER_UID, "guest") == 0,
		      "a failed take woke the watch");
	ck_assert_msg((other_held = caller_slot_take(other, "guest", 1, why, sizeof(why))) >= 0,
		      "take: %s", why);
	caller_slot_give(other_held);
	ck_assert_msg(caller_slot_given(watch, CALLER_UID, "guest") == 0,
		      "another caller's slot given back woke the watch");
	caller_slot_give(held);
	ck_assert_msg(caller_slot_given(watch, CALLER_UID, "guest") == 1,
		      "a slot given back did not wake the watch");
	/* Free by the time the watch says so. */
	ck_assert_msg((held = caller_slot_take(CALLER_UID, "guest", 1, why, sizeof(why))) >= 0,
		      "take once given back: %s", why);
	close(held);
	close(watch);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("creds");
	TCase *tc = tcase_create("as_root");
	SRunner *sr;
	int failed;

	if (geteuid() != 0) {
		printf("SKIP: live_creds plays the setuid helper: run it as root\n");
		return 77;
	}
	tcase_add_checked_fixture(tc, fresh_base, remove_base);
	tcase_add_test(tc, identify_leaves_root_gid_and_no_groups);
	tcase_add_test(tc, identify_leaves_root_in_every_uid);
	tcase_add_test(tc, state_directories_are_root_root_with_explicit_modes);
	tcase_add_test(tc, state_directory_below_a_writable_ancestor_is_refused);
	tcase_add_test(tc, state_directory_is_not_made_before_its_ancestors_are_checked);
	tcase_add_test(tc, drop_with_capabilities_left_is_refused);
	tcase_add_test(tc, lease_sweeps_every_uid_taken_from_the_pool);
	tcase_add_test(tc, lease_holds_one_of_the_callers_slots);
	tcase_add_test(tc, lease_given_back_comes_back_unswept_only_untouched);
	tcase_add_test(tc, lease_never_takes_the_callers_uid);
	tcase_add_test(tc, lease_never_takes_a_uid_another_lease_holds);
	tcase_add_test(tc, slot_given_back_wakes_a_watch_and_a_failed_take_does_not);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
