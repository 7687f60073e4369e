/*
 * isospawn-helper - setuid-root helper that starts guests for libisospawn.
 *
 * It is started by the library with the request socket on fd 3 and an
 * empty environment, which it would ignore anyway; or, for callers that
 * cannot run a setuid program, by systemd (isospawn.socket) with the
 * accepted connection on fd 3. Its paths are compiled
 * in; it takes nothing from its arguments or environment.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <syslog.h>
#include <unistd.h>

#include "cgroup.h"
#include "confine.h"
#include "creds.h"
#include "hygiene.h"
#include "log.h"
#include "loop.h"
#include "policy.h"
#include "world.h"
#include "util.h"
#include "waitq.h"

static struct iso_server server;
static int connection = -1; /* the caller's connection slot, once taken */

/* Before the protocol is up, stderr is the only way to say why. */
static int early_refusal(const char *why)
{
	dprintf(STDERR_FILENO, "isospawn-helper: %s\n", why);
	return ISO_HELPER_EXIT_REFUSED;
}

/* Refuse the connection: the client reads `told` (or the reason) from
 * HELLO. The reason may quote the policy or the caller's groups: quoted in
 * the log. */
static int refuse_client(int err, const char *why, const char *told)
{
	char qwhy[4 * 512];

	if (connection >= 0)
		caller_slot_give(connection);
	iso_quote(qwhy, sizeof(qwhy), why);
	log_event(LOG_NOTICE, "refuse-connect caller=%s reason=\"%s\"", log_caller(), qwhy);
	(void)server_hello(&server, err, told != NULL ? told : why);
	return ISO_HELPER_EXIT_REFUSED;
}

/* What the policy says besides its verdict (a drop-in's rule for an
 * account that is gone matches no one): for the administrator. */
static void log_warnings(const struct iso_policy_report *report)
{
	char q[4 * 512];

	for (size_t i = 0; i < report->nnotes; i++) {
		iso_quote(q, sizeof(q), report->notes[i]);
		log_event(LOG_WARNING, "policy-warning reason=\"%s\"", q);
	}
}

/*
 * One connection more than the guests the caller may have, so that at its
 * ceiling it can still list and stop them: no caller takes every
 * connection isospawn.socket accepts, nor keeps helpers (root's, so not
 * counted in its RLIMIT_NPROC) without bound. Held until exit. At that
 * ceiling a client may answer the refusal with WAIT: its helper then
 * waits for a connection slot, as one of at most as many more that wait
 * (a process, its socket, an inotify and a timer descriptor each; no
 * world, no uid), and greets it again. -EAGAIN with the refusal when the
 * client does not wait, or waited in vain.
 */
static int take_connection(char *why, size_t n)
{
	uid_t uid = server.caller.uid;
	uint32_t max = server.rule->guests_max + 1;
	uint64_t ms;
	char busy[256];
	int waiting, rc;

	if ((rc = caller_slot_take(uid, "connection", max, why, n)) != -EAGAIN)
		return rc;
	if ((waiting = caller_slot_take(uid, "waiting", max, busy, sizeof(busy))) < 0)
		return waiting != -EAGAIN
			   ? iso_why(why, n, -waiting, "%s", busy)
			   : iso_why(
				 why, n, EAGAIN,
				 "uid %u holds %u connections, as many as its "
				 "rule's 'guests' allows plus one, and as many more wait for one",
				 (unsigned)uid, (unsigned)max);
	if (server_hello(&server, rc, why) == 0 && server_read_wait(&server, &ms) == 0) {
		log_event(LOG_INFO, "wait-connect caller=%s wait_ms=%llu", log_caller(),
			  (unsigned long long)ms);
		rc = waitq_slot(server.sock, server.sigfd, uid, "connection", max, ms, why, n);
	}
	caller_slot_give(waiting);
	return rc;
}

int main(int argc, char **argv)
{
	struct iso_policy_report report = { 0 };
	char why[512];
	/* Started by root (systemd), not made root by the setuid bit. */
	int root_started = getuid() == 0, rc;

	/* execve with argv = {NULL} is a classic way to confuse setuid
	 * programs that assume argv[0] exists; since Linux 5.18 the kernel
	 * turns it into argv = {""}, so refuse that too. */
	if (argc < 1 || argv[0] == NULL || argv[0][0] == '\0')
		return early_refusal("refusing to run with an empty argv");
	if (hygiene_start(why, sizeof(why)) < 0)
		return early_refusal(why);
	/* LOG_NDELAY: connect now, before any guest exists, so the socket is
	 * ours and not opened later under odd fds. */
	openlog("isospawn-helper", LOG_PID | LOG_NDELAY, LOG_AUTHPRIV);
	if (server_init(&server, ISO_HELPER_FD, why, sizeof(why)) < 0)
		return early_refusal(why);
	rc = caller_identify(ISO_HELPER_FD, &server.caller, why, sizeof(why));
	log_caller_set(server.caller.uid);
	if (rc < 0 || (rc = hygiene_cgroup(why, sizeof(why))) < 0 ||
	    (rc = hygiene_sched(why, sizeof(why))) < 0)
		return refuse_client(rc, why, NULL);
	/* The reason goes to the log only: it may quote a line of a drop-in the
	 * caller may not read. */
	rc = policy_load(ISO_POLICY_PATH, &server.policy, &report, why, sizeof(why));
	log_warnings(&report);
	policy_report_free(&report);
	if (rc < 0)
		return refuse_client(rc == -EINVAL ? EINVAL : EPERM, why,
				     "the policy is invalid; "
				     "an administrator can run isospawnctl check");
	/* Every line from here on is in the audit file too, or the caller is
	 * not served: an audit trail is never silently lost. */
	if (server.policy.audit_log != NULL &&
	    log_audit_open(server.policy.audit_log, why, sizeof(why)) < 0)
		return refuse_client(EPERM, why,
				     "the audit log cannot be written; an administrator "
				     "can run isospawnctl check");
	server.rule = policy_match(&server.policy, server.caller.uid, server.caller.gid,
				   server.caller.groups, server.caller.ngroups);
	if (!server.rule)
		return refuse_client(iso_why(why, sizeof(why), EACCES,
					     "no rule in %s admits uid %u", ISO_POLICY_PATH,
					     (unsigned)server.caller.uid),
				     why, NULL);
	/* The template is built as the rule's first pool uid: no account's. */
	if ((rc = state_prepare(why, sizeof(why))) < 0 ||
	    (rc = connection = take_connection(why, sizeof(why))) < 0 ||
	    (rc = pool_id_not_an_account(server.rule->pool_first, server.rule, why, sizeof(why))) <
		0 ||
	    (rc = world_prepare(&server.world, server.rule, &server.caller, why, sizeof(why))) <
		0 ||
	    (rc = confine_prepare(server.rule, &server.confine, why, sizeof(why))) < 0 ||
	    (rc = cgroup_prepare(server.rule, server.caller.uid, server.policy.cgroup_parent,
				 root_started, &server.cgroup, server.confine.notes,
				 sizeof(server.confine.notes), why, sizeof(why))) < 0)
		return refuse_client(rc, why, NULL);
	log_event(LOG_INFO, "connect caller=%s rule=%s:%u landlock_abi=%d", log_caller(),
		  server.rule->file, server.rule->line, server.confine.landlock_abi);
	if (server_hello(&server, 0, NULL) < 0)
		rc = ISO_HELPER_EXIT_FAILED;
	else
		rc = server_run(&server);
	/* Given back, not dropped at exit: the give wakes those who wait. */
	caller_slot_give(connection);
	return rc;
}
