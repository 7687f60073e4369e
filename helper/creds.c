/*
 * creds.c - caller identity, pool leases and the privilege drop.
 *
 * Invariants:
 *  - A guest MUST NOT run as uid 0 or as the caller's uid (policy.c refuses
 *    pools containing 0 or -1; lease_acquire refuses the caller's uid),
 *    nor as an account's uid or gid: lease_acquire refuses the lease.
 *  - The caller is who the kernel says: the real ids of whoever ran the
 *    setuid helper, or the peer credentials of the connection systemd
 *    accepted; never anything the caller sends.
 *  - Two live guests MUST NOT share a uid: a uid is used only while its
 *    lease lock is held. A lease MUST be given back (lease_release) only
 *    when no process a guest started under the uid can be left: every one
 *    ran in the PID namespace of a reaper (root's) that has killed and
 *    reaped everything there (and reported so) or has been waited for.
 *    Every uid taken from the pool is swept (every process whose real or
 *    saved uid it is, killed) before it is used: what a helper that died
 *    left, and what a set-user-ID file a guest left let anyone start;
 *    but one that comes back to the connection that gave it back, its
 *    file still holding that connection's mark (no lease since: a lease
 *    erases it), as if the connection had never given it back.
 *  - A lease holds one of the caller's slots: the caller never holds more
 *    than its rule's 'guests'. A slot is given back (caller_slot_give)
 *    before the close that wakes those waiting for one, and only a slot
 *    given back closes a slot file opened for writing: a failed attempt
 *    wakes no one, so waiting helpers cannot wake each other in turn.
 *  - creds_drop MUST leave no way back to root: ids are read back, and
 *    setuid(0) must fail.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <libgen.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <syslog.h>
#include <unistd.h>

#include <linux/capability.h>
#include <linux/nsfs.h>

#include "creds.h"
#include "record.h"
#include "log.h"
#include "util.h"

#define CALLER_DIR ISO_STATE_DIR "/callers"
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77 /* Linux 6.5; older headers lack the name */
#endif

/* Whether the namespace `fd` is the helper's own `kind` (a /proc/self/ns
 * name). */
static int same_ns(int fd, const char *kind)
{
	char path[32];
	struct stat mine, theirs;

	snprintf(path, sizeof(path), "/proc/self/ns/%s", kind);
	return stat(path, &mine) == 0 && fstat(fd, &theirs) == 0 && mine.st_dev == theirs.st_dev &&
	       mine.st_ino == theirs.st_ino;
}

/* The peer's namespace `kind` into *ns, or -1 when it is the helper's.
 * Through /proc/PID, which is the peer's as long as the peer lives: its
 * pidfd, checked after the open, says it still does. */
static int peer_ns(int pidfd, pid_t pid, const char *kind, int *ns, char *why, size_t n)
{
	char path[48];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/ns/%s", (int)pid, kind);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return iso_why_errno(why, n, "the caller's %s namespace", kind);
	if (syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) < 0) {
		close(fd);
		return iso_why(why, n, EPERM, "the caller's %s namespace: the caller went", kind);
	}
	if (same_ns(fd, kind)) {
		close(fd);
		fd = -1;
	}
	*ns = fd;
	return 0;
}

/* Socket mode: the namespaces of the process that connected, where they
 * are not the helper's (/proc/PID/ns: CAP_SYS_PTRACE, which
 * isospawn@.service keeps for this). A mount namespace of the caller's own
 * user namespace is one the caller could have mounted anything in, which
 * root would build the guest's tree from: refused. SO_PEERPIDFD names the
 * peer for good; before Linux 6.5, pidfd_open() of its pid, which it keeps
 * unless the peer went between its connect and now. */
static int peer_namespaces(int sock, const struct ucred *peer, struct iso_caller *c, char *why,
			   size_t n)
{
	socklen_t len = sizeof(int);
	int pidfd = -1, owner = -1, rc;

	if (getsockopt(sock, SOL_SOCKET, SO_PEERPIDFD, &pidfd, &len) < 0)
		pidfd = (int)syscall(SYS_pidfd_open, peer->pid, 0);
	if (pidfd < 0)
		return iso_why_errno(why, n, "the caller's pidfd");
	if ((rc = peer_ns(pidfd, peer->pid, "mnt", &c->mnt_ns, why, n)) == 0)
		rc = peer_ns(pidfd, peer->pid, "net", &c->net_ns, why, n);
	close(pidfd);
	if (rc == 0 && c->mnt_ns >= 0 &&
	    ((owner = ioctl(c->mnt_ns, NS_GET_USERNS)) < 0 || !same_ns(owner, "user")))
		rc = iso_why(why, n, EPERM,
			     "the caller's mount namespace belongs to a user "
			     "namespace of its own, whose mounts isospawn does not build on");
	iso_close_fds(&owner, 1);
	return rc;
}

int caller_identify(int sock, struct iso_caller *caller, char *why, size_t n)
{
	struct ucred peer;
	socklen_t len = sizeof(peer);
	int ng, rc;

	/* Who ran the helper: the caller when the setuid bit made it root,
	 * and until the kernel names the caller, for the log of a refusal. */
	caller->uid = getuid();
	caller->mnt_ns = caller->net_ns = -1;
	/* Why not (no_new_privs, no setuid bit, a nosuid mount) the library
	 * that started the helper tells its caller, without privilege. */
	if (geteuid() != 0)
		return iso_why(why, n, EPERM,
			       "isospawn-helper is not running as root "
			       "(euid %u)",
			       (unsigned)geteuid());
	if (getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &peer, &len) < 0)
		return iso_why_errno(why, n, "SO_PEERCRED");
	if (getuid() == 0) {
		/* Started as root, not made root by the setuid bit
		 * (isospawn.socket): the caller is the peer, as the kernel
		 * recorded it at connect(), with its groups. */
		caller->uid = peer.uid;
		caller->gid = peer.gid;
		len = sizeof(caller->groups);
		ng = getsockopt(sock, SOL_SOCKET, SO_PEERGROUPS, caller->groups, &len) < 0
			 ? -1
			 : (int)(len / sizeof(gid_t));
		if (ng >= 0 && (rc = peer_namespaces(sock, &peer, caller, why, n)) < 0)
			return rc;
	} else {
		caller->gid = getgid();
		ng = getgroups(ISO_CALLER_GROUPS_MAX, caller->groups);
	}
	if (ng < 0)
		return iso_why(why, n, EPERM, "the caller's groups: %s (more than %d?)",
			       strerror(errno), ISO_CALLER_GROUPS_MAX);
	caller->ngroups = (size_t)ng;
	/* Made root by the setuid bit: the socket's creator must be the
	 * process that ran us; a socket passed in from another user is not
	 * that user's request. */
	if (peer.uid != caller->uid)
		return iso_why(why, n, EPERM, "request socket belongs to uid %u, caller is uid %u",
			       (unsigned)peer.uid, (unsigned)caller->uid);
	/* Known now, and needed no more: nothing the helper creates (state
	 * directories, lease files) may carry the caller's group; and with
	 * the caller's uid gone from its real and saved uids, the caller can
	 * no longer signal, stop or prlimit() its helper, nor change its
	 * scheduling (hygiene_sched): a connection ends when its socket
	 * closes, and its guests with it. */
	if (setgroups(0, NULL) < 0 || setresgid(0, 0, 0) < 0 || setresuid(0, 0, 0) < 0)
		return iso_why_errno(why, n, "setresgid or setresuid (0, 0, 0)");
	return 0;
}

/* mkdir if missing, then insist on a directory owned by root:root with
 * mode 0700 (the umask, 077, plays no part). Only root can have changed a
 * root-owned directory, so a different mode or group is corrected, never
 * trusted. */
static int ensure_root_dir(const char *path, char *why, size_t n)
{
	struct stat st;

	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return iso_why_errno(why, n, "mkdir %s", path);
	if (lstat(path, &st) < 0)
		return iso_why_errno(why, n, "%s", path);
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0)
		return iso_why(
		    why, n, EPERM, "%s must be a directory owned by root (found uid %u, %s)", path,
		    (unsigned)st.st_uid, S_ISDIR(st.st_mode) ? "a directory" : "not a directory");
	if (((st.st_mode & 07777) != 0700 && chmod(path, 0700) < 0) ||
	    (st.st_gid != 0 && lchown(path, 0, 0) < 0))
		return iso_why_errno(why, n, "chmod or chown %s", path);
	return 0;
}

int state_prepare(char *why, size_t n)
{
	char above[] = ISO_STATE_DIR;
	int rc;

	/* Trusted like the policy: every directory above them root's and
	 * writable by nobody else, or they could be swapped. Checked before
	 * anything is made: mkdir and chmod follow what an ancestor names. */
	if ((rc = policy_check_path(dirname(above), 1, why, n)) < 0 ||
	    (rc = ensure_root_dir(ISO_STATE_DIR, why, n)) < 0 ||
	    (rc = ensure_root_dir(ISO_LEASE_DIR, why, n)) < 0)
		return rc;
	return ensure_root_dir(CALLER_DIR, why, n);
}

/* An exclusive flock on `path` (made if missing), which the kernel drops
 * if the helper dies; opened for writing (`rw`: a lease file, whose record
 * or mark lease_acquire() reads and erases) or else read-only (a slot
 * file, which holds nothing: caller_slot_give says why). The descriptor,
 * or -errno with a reason naming path: -EAGAIN (flock's EWOULDBLOCK, the
 * same on Linux) when another holds it. */
static int lock_file(const char *path, int rw, char *why, size_t n)
{
	int fd = open(path, (rw ? O_RDWR : O_RDONLY) | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	int rc;

	if (fd < 0)
		return iso_why_errno(why, n, "%s", path);
	/* Made by an older helper with its caller's group: root's now. */
	(void)!fchown(fd, 0, 0);
	if (flock(fd, LOCK_EX | LOCK_NB) == 0)
		return fd;
	rc = iso_why_errno(why, n, "%s", path);
	close(fd);
	return rc;
}

int caller_slot_take(uid_t caller, const char *what, uint32_t max, char *why, size_t n)
{
	static uint32_t next; /* where the last search ended: usually free */
	char path[sizeof(CALLER_DIR) + 48];

	for (uint32_t i = 0; i < max; i++) {
		uint32_t slot = (next + i) % max;
		int fd;

		snprintf(path, sizeof(path), "%s/%u.%s%u", CALLER_DIR, (unsigned)caller, what,
			 (unsigned)slot);
		if ((fd = lock_file(path, 0, why, n)) >= 0)
			next = slot + 1;
		if (fd != -EAGAIN)
			return fd;
	}
	return iso_why(why, n, EAGAIN,
		       "uid %u holds %u %s slots, as many as its rule's "
		       "'guests' allows",
		       (unsigned)caller, (unsigned)max, what);
}

void caller_slot_give(int fd)
{
	char self[32];
	int ring;

	/* Free first: whoever this close wakes finds the slot free. The
	 * file is opened again for writing, through the descriptor, only
	 * to be closed: the close of a file opened for writing is what
	 * waiters watch for (inotify's IN_CLOSE_WRITE), and no failed
	 * attempt makes one (lock_file). */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	(void)flock(fd, LOCK_UN);
	if ((ring = open(self, O_WRONLY | O_CLOEXEC)) >= 0)
		close(ring);
	close(fd);
}

int caller_slot_watch(char *why, size_t n)
{
	int fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC), err;

	if (fd >= 0 && inotify_add_watch(fd, CALLER_DIR, IN_CLOSE_WRITE | IN_ONLYDIR) >= 0)
		return fd;
	err = errno;
	if (fd >= 0)
		close(fd);
	/* One inotify instance of root's per connection that waits
	 * (fs.inotify.max_user_instances): without one, no wait. */
	return iso_why(why, n, EAGAIN, "no slot is free, and no wait for one: inotify: %s",
		       strerror(err));
}

int caller_slot_given(int watch, uid_t caller, const char *what)
{
	union {
		struct inotify_event ev; /* the alignment each record needs */
		char bytes[4096];
	} buf;
	char prefix[48];
	int plen = snprintf(prefix, sizeof(prefix), "%u.%s", (unsigned)caller, what), given = 0;
	ssize_t got;

	while ((got = read(watch, buf.bytes, sizeof(buf))) > 0)
		for (ssize_t at = 0; at < got;) {
			const struct inotify_event *ev = (const void *)(buf.bytes + at);

			/* UID.whatN; or the queue overflowed, and may have
			 * dropped one. */
			if ((ev->mask & IN_Q_OVERFLOW) ||
			    (ev->len > (uint32_t)plen &&
			     strncmp(ev->name, prefix, (size_t)plen) == 0 &&
			     ev->name[plen] >= '0' && ev->name[plen] <= '9'))
				given = 1;
			at += (ssize_t)(sizeof(*ev) + ev->len);
		}
	return given;
}

/* Kill every process running under uid: never 0, which lease_acquire(),
 * the one caller, skips like (uid_t)-1 and the caller's uid. */
static void uid_sweep(uid_t uid)
{
	/* vfork: no page tables copied; the child only makes two calls. */
	pid_t pid = vfork();

	if (pid == 0) {
		/* kill(-1) reaches exactly the processes this uid may signal:
		 * those whose real or saved uid is `uid`. One pass is enough:
		 * the kernel walks the task list under the lock fork() needs
		 * to add a child, and a process with SIGKILL pending cannot
		 * fork, so no process of the uid can appear behind the walk. */
		if (syscall(SYS_setresuid, uid, uid, uid) < 0)
			_exit(1);
		(void)kill(-1, SIGKILL);
		_exit(0);
	}
	if (pid > 0)
		while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
			;
}

/* The sweep would kill an account's processes, and a guest would own its
 * files (its uid) or its group's (gid = uid). Asked of every account
 * service at each lease, not enumerated when the policy is read: SSSD and
 * LDAP list no user to getpwent(), and a whole-database walk cost every
 * helper's start. A failed lookup (ERANGE: an entry larger than buf)
 * counts as an account. */
int pool_id_not_an_account(uid_t id, const struct iso_rule *rule, char *why, size_t n)
{
	struct passwd pw, *user = NULL;
	struct group gr, *group = NULL;
	char buf[16384];
	int rc;

	if ((rc = getpwuid_r(id, &pw, buf, sizeof(buf), &user)) == 0 && user == NULL)
		rc = getgrgid_r(id, &gr, buf, sizeof(buf), &group);
	if (rc == 0 && user == NULL && group == NULL)
		return 0;
	log_event(LOG_ERR, "pool-account uid=%u rule=%s:%u", (unsigned)id, rule->file, rule->line);
	if (rc != 0)
		return iso_why(why, n, EACCES,
			       "pool uid %u of the rule at %s:%u: cannot tell "
			       "whether it is an account's id (%s)",
			       (unsigned)id, rule->file, rule->line, strerror(rc));
	return iso_why(why, n, EACCES,
		       "pool uid %u of the rule at %s:%u is %s: no guest runs "
		       "under an account's id (isospawnctl check lists them)",
		       (unsigned)id, rule->file, rule->line,
		       user ? "a user's uid" : "a group's gid");
}

int lease_acquire(const struct iso_rule *rule, uid_t caller, struct iso_lease *lease,
		  const struct iso_given_uids *given, char *why, size_t n)
{
	uint64_t size = (uint64_t)rule->pool_last - rule->pool_first + 1, mark = 0;
	char path[sizeof(ISO_LEASE_DIR) + 16];
	uint32_t start = 0;
	ssize_t got = 0;
	int fd = -EAGAIN, untouched, rc;

	/* The uids the connection gave back first; then from a random
	 * starting point, which spreads concurrent helpers over the pool
	 * instead of having them all contend for its first uid. */
	if (getrandom(&start, sizeof(start), GRND_NONBLOCK) < 0)
		start = (uint32_t)getpid();
	for (uint64_t i = 0; i < ISO_GIVEN_UIDS + size && fd == -EAGAIN; i++) {
		if (i < ISO_GIVEN_UIDS)
			lease->uid = given ? given->uids[i] : 0;
		else
			lease->uid = rule->pool_first + (uid_t)((start + i) % size);
		if (lease->uid < rule->pool_first || lease->uid > rule->pool_last ||
		    lease->uid == 0 || lease->uid == (uid_t)-1 || lease->uid == caller)
			continue;
		snprintf(path, sizeof(path), "%s/%u", ISO_LEASE_DIR, (unsigned)lease->uid);
		fd = lock_file(path, 1, why, n);
	}
	/* What a helper that died left in the file (a record) goes. */
	if (fd >= 0 &&
	    ((got = pread(fd, &mark, sizeof(mark), 0)) < 0 || iso_record_clear(fd, 0) < 0)) {
		close(fd);
		fd = iso_why_errno(why, n, "%s", path);
	}
	/* Untouched since this connection gave it back (struct
	 * iso_given_uids): asked about and swept when it first took it. */
	untouched = given && given->mark != 0 && got == sizeof(mark) && mark == given->mark;
	if (fd >= 0 && !untouched && (rc = pool_id_not_an_account(lease->uid, rule, why, n)) < 0) {
		close(fd);
		fd = rc;
	}
	if (fd >= 0) {
		lease->lock_fd = fd;
		if (!untouched)
			uid_sweep(lease->uid);
		return 0;
	}
	caller_slot_give(lease->slot_fd);
	if (fd != -EAGAIN)
		return fd;
	return iso_why(why, n, EAGAIN, "every uid of pool %u-%u is in use",
		       (unsigned)rule->pool_first, (unsigned)rule->pool_last);
}

void lease_release(struct iso_lease *lease, struct iso_given_uids *given)
{
	size_t i = 0;

	/* The record goes; the mark says the uid has had no lease since,
	 * until another takes it. */
	if (iso_record_clear(lease->lock_fd, given ? given->mark : 0) == 0 && given &&
	    given->mark != 0) {
		while (i < ISO_GIVEN_UIDS - 1 && given->uids[i] != lease->uid)
			i++;
		memmove(&given->uids[1], &given->uids[0], i * sizeof(uid_t));
		given->uids[0] = lease->uid;
	}
	close(lease->lock_fd);
	caller_slot_give(lease->slot_fd);
}

int creds_drop(uid_t uid, char *why, size_t n)
{
	struct __user_cap_header_struct caps_head = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct caps[2];
	uid_t r, e, s;
	gid_t rg, eg, sg;

	/* Each step named when it fails: the guest's start-failed reason
	 * says which privilege change the kernel refused. */
	if (setgroups(0, NULL) < 0)
		return iso_why_errno(why, n, "setgroups");
	if (setresgid(uid, uid, uid) < 0)
		return iso_why_errno(why, n, "setresgid(%u)", (unsigned)uid);
	if (setresuid(uid, uid, uid) < 0)
		return iso_why_errno(why, n, "setresuid(%u)", (unsigned)uid);
	if (getresuid(&r, &e, &s) < 0 || r != uid || e != uid || s != uid ||
	    getresgid(&rg, &eg, &sg) < 0 || rg != uid || eg != uid || sg != uid ||
	    getgroups(0, NULL) != 0)
		return iso_why(why, n, EPERM, "ids not as set after the drop to %u", (unsigned)uid);
	/* The drop must be irreversible: if uid 0 could be regained, the
	 * guest could regain it too. */
	if (setuid(0) == 0 || setresuid(-1, 0, -1) == 0 || setgid(0) == 0)
		return iso_why(why, n, EPERM, "uid 0 regained after the drop to %u", (unsigned)uid);
	/* Nor any capability: a permitted one kept (PR_SET_KEEPCAPS,
	 * SECBIT_KEEP_CAPS) could be made effective again; the ambient set
	 * lies within the permitted one. */
	if (syscall(SYS_capget, &caps_head, caps) < 0 ||
	    (caps[0].effective | caps[0].permitted | caps[0].inheritable | caps[1].effective |
	     caps[1].permitted | caps[1].inheritable) != 0)
		return iso_why(why, n, EPERM, "capabilities left after the drop to %u",
			       (unsigned)uid);
	/* No setuid binary may give the guest privileges back. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return iso_why_errno(why, n, "PR_SET_NO_NEW_PRIVS");
	return 0;
}
