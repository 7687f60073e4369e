/*
 * probe.c - the guest program of the integration tests.
 *
 *   probe COMMAND [ARGS]
 *
 * It runs as the guest, under Landlock and seccomp, so it never needs /proc
 * (except `environ`, whose point is to try, and what `sched` reads of
 * itself). It prints what it sees on
 * stdout and exits 0 when the attempted action succeeded, 1 when it was
 * refused (after printing "refused: ERRNONAME", e.g. "refused: EPERM"), 2 on
 * a usage error. forkbomb and membomb exit 0 only when a limit stopped them,
 * and 1 when they reached their own cap first.
 */
#include "config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/keyctl.h>
#include <netinet/in.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "isospawn.h"

extern char **environ;

#define FORKBOMB_CAP 4096 /* processes, if no limit stops us */
#define MEMBOMB_CHUNK (64ull << 20) /* bytes per allocation */
#define MEMBOMB_CAP (4ull << 30) /* bytes, if no limit stops us */

static int refused(int err)
{
	const char *name = strerrorname_np(err);

	if (name)
		printf("refused: %s\n", name);
	else
		printf("refused: errno %d\n", err);
	return 1;
}

/* The result of a call that returns -1 and sets errno on failure. */
static int done(long rc, const char *success)
{
	if (rc < 0)
		return refused(errno);
	puts(success);
	return 0;
}

/* Numbers in arguments; -1 (after a message) if malformed. */
static long long number(const char *text, long long min, long long max)
{
	const char *error = NULL;
	long long value = strtonum(text, min, max, &error);

	if (error) {
		fprintf(stderr, "probe: %s: %s\n", text, error);
		return -1;
	}
	return value;
}

static int cmd_env(char **argv)
{
	char **entry;

	for (entry = environ; *entry; entry++)
		puts(*entry);
	return 0;
}

static int cmd_ids(char **argv)
{
	uid_t ruid, euid, suid;
	gid_t rgid, egid, sgid;
	int groups = getgroups(0, NULL);

	if (getresuid(&ruid, &euid, &suid) < 0 || getresgid(&rgid, &egid, &sgid) < 0 || groups < 0)
		return refused(errno);
	printf("uid=%u,%u,%u gid=%u,%u,%u groups=%d nnp=%d seccomp=%d\n", ruid, euid, suid, rgid,
	       egid, sgid, groups, prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0),
	       prctl(PR_GET_SECCOMP, 0, 0, 0, 0));
	return 0;
}

static int cmd_fds(char **argv)
{
	const char *sep = "";
	int fd;

	for (fd = 0; fd < 1024; fd++)
		if (fcntl(fd, F_GETFD) != -1) {
			printf("%s%d", sep, fd);
			sep = " ";
		}
	putchar('\n');
	return 0;
}

static void print_limit(rlim_t value)
{
	if (value == RLIM_INFINITY)
		fputs(" inf", stdout);
	else
		printf(" %llu", (unsigned long long)value);
}

static int cmd_rlimits(char **argv)
{
	static const struct {
		const char *name;
		int resource;
	} limits[] = {
		{ "cpu", RLIMIT_CPU },       { "as", RLIMIT_AS },
		{ "nofile", RLIMIT_NOFILE }, { "nproc", RLIMIT_NPROC },
		{ "fsize", RLIMIT_FSIZE },   { "stack", RLIMIT_STACK },
		{ "core", RLIMIT_CORE },     { "memlock", RLIMIT_MEMLOCK },
	};
	struct rlimit rl;
	size_t i;

	for (i = 0; i < sizeof limits / sizeof *limits; i++) {
		if (getrlimit(limits[i].resource, &rl) < 0)
			return refused(errno);
		fputs(limits[i].name, stdout);
		print_limit(rl.rlim_cur);
		print_limit(rl.rlim_max);
		putchar('\n');
	}
	return 0;
}

static int cmd_cwd(char **argv)
{
	char path[PATH_MAX];

	if (!getcwd(path, sizeof path))
		return refused(errno);
	puts(path);
	return 0;
}

static int cmd_read(char **argv)
{
	char buf[4096];
	ssize_t got;
	int fd = open(argv[0], O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return refused(errno);
	while ((got = read(fd, buf, sizeof buf)) > 0)
		fwrite(buf, 1, (size_t)got, stdout);
	if (got < 0)
		return refused(errno);
	close(fd);
	return 0;
}

static int cmd_write(char **argv)
{
	int fd = open(argv[0], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0 || write(fd, "x", 1) != 1)
		return refused(errno);
	close(fd);
	printf("wrote %s\n", argv[0]);
	return 0;
}

static int cmd_connect(char **argv)
{
	struct sockaddr_in6 in6 = { .sin6_family = AF_INET6 };
	struct sockaddr_in in = { .sin_family = AF_INET };
	struct sockaddr *addr;
	socklen_t len;
	long long port = number(argv[1], 1, 65535);
	int fd;

	if (port < 0)
		return 2;
	if (inet_pton(AF_INET, argv[0], &in.sin_addr) == 1) {
		in.sin_port = htons((uint16_t)port);
		addr = (struct sockaddr *)&in;
		len = sizeof in;
	} else if (inet_pton(AF_INET6, argv[0], &in6.sin6_addr) == 1) {
		in6.sin6_port = htons((uint16_t)port);
		addr = (struct sockaddr *)&in6;
		len = sizeof in6;
	} else {
		fprintf(stderr, "probe: %s: not an IP address\n", argv[0]);
		return 2;
	}
	fd = socket(addr->sa_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return refused(errno);
	return done(connect(fd, addr, len), "connected");
}

static int cmd_send_udp(char **argv)
{
	struct sockaddr_in in = { .sin_family = AF_INET };
	long long port = number(argv[1], 1, 65535);
	int fd;

	if (port < 0)
		return 2;
	if (inet_pton(AF_INET, argv[0], &in.sin_addr) != 1) {
		fprintf(stderr, "probe: %s: not an IPv4 address\n", argv[0]);
		return 2;
	}
	in.sin_port = htons((uint16_t)port);
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return refused(errno);
	return done(sendto(fd, "probe", 5, 0, (struct sockaddr *)&in, sizeof in), "sent");
}

static int cmd_connect_unix(char **argv)
{
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (strlen(argv[0]) >= sizeof un.sun_path) {
		fprintf(stderr, "probe: %s: too long for a socket address\n", argv[0]);
		return 2;
	}
	strcpy(un.sun_path, argv[0]);
	if (fd < 0)
		return refused(errno);
	return done(connect(fd, (struct sockaddr *)&un, sizeof un), "connected");
}

static int cmd_stat(char **argv)
{
	struct stat st;

	return done(lstat(argv[0], &st), "exists");
}

/* A tmpfs over /tmp, then /proc unmounted: both must fail. */
static int cmd_mount(char **argv)
{
	if (mount("tmpfs", "/tmp", "tmpfs", 0, NULL) == 0) {
		puts("mounted");
		return 0;
	}
	printf("mount: %s\n", strerrorname_np(errno));
	return done(umount2("/proc", MNT_DETACH), "unmounted");
}

static int cmd_ptrace_attach(char **argv)
{
	long long pid = number(argv[0], 1, INT_MAX);

	if (pid < 0)
		return 2;
	if (ptrace(PTRACE_ATTACH, (pid_t)pid, 0, 0) < 0)
		return refused(errno);
	/* Let it go again: wait for the attach stop, then detach. */
	waitpid((pid_t)pid, NULL, __WALL);
	ptrace(PTRACE_DETACH, (pid_t)pid, 0, 0);
	puts("attached");
	return 0;
}

static long vm_word = 0x15050000;

/* The address defaults to this program's own word: right when the target
 * is another probe at the same load address. The kernel checks permission
 * before it touches memory, so EFAULT still means the read was allowed. */
static int cmd_vmread(char **argv)
{
	long long pid = number(argv[0], 1, INT_MAX);
	long word = 0;
	struct iovec local = { &word, sizeof word };
	struct iovec remote = { &vm_word, sizeof word };

	if (pid < 0)
		return 2;
	if (argv[1]) {
		char *end;

		errno = 0;
		remote.iov_base = (void *)(uintptr_t)strtoull(argv[1], &end, 16);
		if (errno || *end || end == argv[1]) {
			fprintf(stderr, "probe: %s: not a hex address\n", argv[1]);
			return 2;
		}
	}
	if (process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0) < 0) {
		if (errno != EFAULT)
			return refused(errno);
		puts("allowed (address not mapped there)");
		return 0;
	}
	printf("read %#lx\n", (unsigned long)word);
	return 0;
}

static int cmd_tiocsti(char **argv)
{
	char ch = ' ';

	return done(ioctl(0, TIOCSTI, &ch), "injected");
}

/* What a guest handed the caller's terminal would try first: a session of
 * its own, that terminal as its controlling one, then TIOCSTI. */
static int cmd_steal_tty(char **argv)
{
	char ch = ' ';

	if (setsid() < 0)
		return refused(errno);
	if (ioctl(0, TIOCSCTTY, 0) < 0)
		return refused(errno);
	return done(ioctl(0, TIOCSTI, &ch), "injected");
}

/* On stdin, the caller's terminal: what would reach past the guest (a
 * SIGWINCH to the terminal's foreground group, its line discipline, who
 * else may open it), then what an interactive guest needs (echo off). */
static int cmd_tty_ioctls(char **argv)
{
	struct winsize ws = { .ws_row = 5, .ws_col = 20 };
	int ldisc = N_TTY;
	struct termios t;

	printf("winsize: %s\n", ioctl(0, TIOCSWINSZ, &ws) < 0 ? strerrorname_np(errno) : "set");
	printf("setd: %s\n", ioctl(0, TIOCSETD, &ldisc) < 0 ? strerrorname_np(errno) : "set");
	printf("excl: %s\n", ioctl(0, TIOCEXCL) < 0 ? strerrorname_np(errno) : "set");
	if (tcgetattr(0, &t) < 0)
		return refused(errno);
	t.c_lflag &= ~(tcflag_t)ECHO;
	printf("termios: %s\n", tcsetattr(0, TCSANOW, &t) < 0 ? strerrorname_np(errno) : "set");
	return 0;
}

#if defined(__x86_64__)
#define I386_NR_PTRACE 26 /* syscall_32.tbl */
#define X32_NR_PTRACE (0x40000000 + 521) /* syscall_64.tbl, x32 ptrace */

static int cmd_int80_ptrace(char **argv)
{
	long ret;

	/* int 0x80 enters the 32-bit system call table from 64-bit code. */
	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(I386_NR_PTRACE), "b"(PTRACE_TRACEME), "c"(0), "d"(0)
			 : "memory", "r8", "r9", "r10", "r11");
	printf("ret=%d\n", (int)ret);
	if ((int)ret < 0)
		return refused(-(int)ret);
	puts("traced");
	return 0;
}

static int cmd_x32_ptrace(char **argv)
{
	return done(syscall(X32_NR_PTRACE, PTRACE_TRACEME, 0, 0, 0), "traced");
}
#else
static int cmd_int80_ptrace(char **argv)
{
	fputs("probe: int80-ptrace is x86_64 only\n", stderr);
	return 2;
}

static int cmd_x32_ptrace(char **argv)
{
	fputs("probe: x32-ptrace is x86_64 only\n", stderr);
	return 2;
}
#endif

static int cmd_unshare_user(char **argv)
{
	return done(unshare(CLONE_NEWUSER), "unshared");
}

static int cmd_clone_newns(char **argv)
{
	long pid = syscall(SYS_clone, CLONE_NEWNS | SIGCHLD, 0, 0, 0, 0);

	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid((pid_t)pid, NULL, 0);
	return done(pid, "cloned");
}

static int cmd_forkbomb(char **argv)
{
	pid_t *pids = NULL;
	size_t count = 0, i;
	int err = 0;

	fflush(stdout);
	while (count < FORKBOMB_CAP) {
		pid_t *grown = reallocarray(pids, count + 1, sizeof *pids);
		pid_t pid;

		if (!grown) {
			err = ENOMEM;
			break;
		}
		pids = grown;
		pid = fork();
		if (pid == 0)
			for (;;)
				pause();
		if (pid < 0) {
			err = errno;
			break;
		}
		pids[count++] = pid;
	}
	for (i = 0; i < count; i++)
		kill(pids[i], SIGKILL);
	for (i = 0; i < count; i++)
		waitpid(pids[i], NULL, 0);
	free(pids);
	if (!err) {
		printf("forks=%zu limit=none\n", count);
		return 1;
	}
	printf("forks=%zu errno=%s\n", count, strerrorname_np(err));
	return err == EAGAIN ? 0 : 1;
}

static int cmd_membomb(char **argv)
{
	unsigned long long total = 0, off;

	while (total < MEMBOMB_CAP) {
		/* Never freed: the point is to hold it. Volatile: a compiler
		 * may drop an allocation nobody reads (clang does). */
		volatile char *chunk = malloc(MEMBOMB_CHUNK);

		if (!chunk) {
			printf("bytes=%llu\n", total);
			return 0;
		}
		for (off = 0; off < MEMBOMB_CHUNK; off += 4096)
			chunk[off] = 1;
		total += MEMBOMB_CHUNK;
	}
	printf("bytes=%llu limit=none\n", total);
	return 1;
}

static int cmd_cpuloop(char **argv)
{
	volatile unsigned long spins = 0;

	for (;;)
		spins++;
	return 0;
}

static int cmd_sleep(char **argv)
{
	long long seconds = number(argv[0], 0, INT_MAX);
	unsigned left;

	if (seconds < 0)
		return 2;
	for (left = (unsigned)seconds; left > 0;)
		left = sleep(left);
	return 0;
}

static int cmd_exit(char **argv)
{
	long long code = number(argv[0], 0, 255);

	return code < 0 ? 2 : (int)code;
}

static int cmd_kill_self(char **argv)
{
	long long sig = number(argv[0], 1, SIGRTMAX);

	if (sig < 0)
		return 2;
	signal((int)sig, SIG_DFL);
	fflush(stdout);
	if (raise((int)sig) != 0)
		return refused(errno);
	printf("survived signal %lld\n", sig);
	return 1;
}

static int cmd_environ(char **argv)
{
	char path[64], buf[4096];
	long long pid = number(argv[0], 1, INT_MAX);
	ssize_t got, i;
	int fd;

	if (pid < 0)
		return 2;
	snprintf(path, sizeof path, "/proc/%lld/environ", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return refused(errno);
	while ((got = read(fd, buf, sizeof buf)) > 0) {
		for (i = 0; i < got; i++)
			putchar(buf[i] ? buf[i] : '\n');
	}
	if (got < 0)
		return refused(errno);
	close(fd);
	return 0;
}

static int cmd_setuid0(char **argv)
{
	if (setuid(0) == 0) {
		puts("setuid(0) succeeded");
		return 0;
	}
	return done(setresuid(0, 0, 0), "setresuid(0, 0, 0) succeeded");
}

static int cmd_grandchild(char **argv)
{
	long long seconds = number(argv[0], 0, INT_MAX);
	pid_t pid;

	if (seconds < 0)
		return 2;
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return refused(errno);
	if (pid == 0) {
		unsigned left = (unsigned)seconds;

		/* Outlive the parent without holding the caller's pipes. */
		close(0);
		close(1);
		close(2);
		while (left > 0)
			left = sleep(left);
		_exit(0);
	}
	printf("%d\n", (int)pid);
	return 0;
}

/* recv() returns 0 both for an empty message and at the end, so an empty
 * message ends the echo too. */
static int cmd_echo(char **argv)
{
	static char buf[ISO_MESSAGE_MAX];
	ssize_t got;

	for (;;) {
		got = recv(3, buf, sizeof buf, MSG_TRUNC);
		if (got == 0)
			return 0;
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return refused(errno);
		if ((size_t)got > sizeof buf)
			return refused(EMSGSIZE);
		if (send(3, buf, (size_t)got, MSG_NOSIGNAL) != got)
			return refused(errno);
	}
}

/* The bytes the stream tests send either way: byte i of a run. */
static unsigned char stream_byte(size_t i)
{
	return (unsigned char)(i * 13 + i / 4096);
}

/* One message of N bytes (stream_byte) on fd 3, whatever the caller's
 * ISO_MESSAGE_MAX: a guest may send what its socket takes. */
static int cmd_send_big(char **argv)
{
	long long n = number(argv[0], 1, 1 << 24);
	unsigned char *buf = n > 0 ? malloc((size_t)n) : NULL;

	if (!buf)
		return 2;
	for (size_t i = 0; i < (size_t)n; i++)
		buf[i] = stream_byte(i);
	return done(send(3, buf, (size_t)n, MSG_NOSIGNAL), "sent");
}

/* Read exactly N bytes of the stream on fd 3 and say whether each was
 * stream_byte(): "N ok", or where it was not. */
static int cmd_stream_check(char **argv)
{
	long long n = number(argv[0], 1, 1LL << 30);
	static unsigned char buf[65536];
	size_t at = 0;
	ssize_t got;

	if (n < 0)
		return 2;
	while (at < (size_t)n) {
		got = recv(3, buf, sizeof buf, 0);
		if (got <= 0)
			return got < 0 ? refused(errno) : (printf("short %zu\n", at), 1);
		for (ssize_t i = 0; i < got; i++, at++)
			if (buf[i] != stream_byte(at))
				return printf("wrong at %zu\n", at), 1;
	}
	printf("%zu ok\n", at);
	return 0;
}

/* Write N bytes (stream_byte) to the stream on fd 3. */
static int cmd_stream_send(char **argv)
{
	long long n = number(argv[0], 1, 1LL << 30);
	static unsigned char buf[65536];
	size_t at = 0, chunk;

	if (n < 0)
		return 2;
	while (at < (size_t)n) {
		chunk = (size_t)n - at < sizeof buf ? (size_t)n - at : sizeof buf;
		for (size_t i = 0; i < chunk; i++)
			buf[i] = stream_byte(at + i);
		if (send(3, buf, chunk, MSG_NOSIGNAL) != (ssize_t)chunk)
			return refused(errno);
		at += chunk;
	}
	printf("sent %zu\n", at);
	return 0;
}

/* Send the guest's own end of the channel (fd 3) over the channel: in the
 * caller's queue it would keep that end open after the guest is gone. */
static int cmd_send_channel(char **argv)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = (char *)"x", .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	int fd = 3;

	(void)argv;
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return done(sendmsg(3, &msg, MSG_NOSIGNAL), "sent");
}

/* The payload of key ID, which the guest may read only if it possesses
 * a keyring that holds it or is its owner. */
static int cmd_keyread(char **argv)
{
	char value[256];
	long long id = number(argv[0], 1, INT32_MAX);
	long len;

	if (id < 0)
		return 2;
	len = syscall(SYS_keyctl, KEYCTL_READ, (long)id, value, sizeof(value) - 1);
	if (len < 0)
		return refused(errno);
	value[len < (long)sizeof(value) ? len : (long)sizeof(value) - 1] = '\0';
	printf("read: %s\n", value);
	return 0;
}

static int cmd_tmpdir(char **argv)
{
	const char *dir = getenv("TMPDIR");
	char path[PATH_MAX];
	int fd;

	if (!dir) {
		puts("TMPDIR unset");
		return refused(ENOENT);
	}
	printf("TMPDIR=%s\n", dir);
	if ((size_t)snprintf(path, sizeof path, "%s/probe-tmpdir", dir) >= sizeof path)
		return refused(ENAMETOOLONG);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, "x", 1) != 1)
		return refused(errno);
	close(fd);
	printf("wrote %s\n", path);
	return 0;
}

static int cmd_signal(char **argv)
{
	long long pid = number(argv[0], 1, INT_MAX);
	long long sig = number(argv[1], 0, SIGRTMAX);

	if (pid < 0 || sig < 0)
		return 2;
	return done(kill((pid_t)pid, (int)sig), "sent");
}

/* A guest that leaves descendants behind: a child and a grandchild sleep
 * as long as it does. "ready" once all three exist. */
static int cmd_sleep_family(char **argv)
{
	long long seconds = number(argv[0], 0, INT_MAX);
	unsigned left;
	int ready[2];
	char byte;
	pid_t pid;

	if (seconds < 0)
		return 2;
	if (pipe2(ready, O_CLOEXEC) < 0)
		return refused(errno);
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return refused(errno);
	if (pid == 0) {
		/* The child and the grandchild both run on from here. */
		if (fork() < 0)
			_exit(1);
		close(ready[0]);
		close(ready[1]);
		for (left = (unsigned)seconds; left > 0;)
			left = sleep(left);
		_exit(0);
	}
	/* End of file once both descendants have closed their copies. */
	close(ready[1]);
	while (read(ready[0], &byte, 1) > 0)
		;
	close(ready[0]);
	puts("ready");
	fflush(stdout);
	for (left = (unsigned)seconds; left > 0;)
		left = sleep(left);
	return 0;
}

/* Touch every page of `bytes` of fresh memory, which stays held. */
static void hold(unsigned long long bytes)
{
	volatile char *at = malloc(bytes);

	for (unsigned long long off = 0; at && off < bytes; off += 4096)
		at[off] = 1;
}

/* N children, each holding BYTES until it is killed: "held N" once all
 * hold theirs, exit 0; a child that dies first (an OOM kill that took
 * only it) makes it say so and exit 1. */
static int cmd_children(char **argv)
{
	long long n = number(argv[0], 1, 64), bytes = number(argv[1], 0, 1ll << 40), got = 0;
	pid_t pids[64];
	int ready[2];
	char byte;

	if (n < 0 || bytes < 0)
		return 2;
	if (pipe2(ready, O_CLOEXEC) < 0)
		return refused(errno);
	fflush(stdout);
	for (long long i = 0; i < n; i++) {
		if ((pids[i] = fork()) < 0)
			return refused(errno);
		if (pids[i] == 0) {
			hold((unsigned long long)bytes);
			if (write(ready[1], "h", 1) != 1)
				_exit(1);
			for (;;)
				pause();
		}
	}
	close(ready[1]);
	while (got < n && read(ready[0], &byte, 1) == 1)
		got++;
	for (long long i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	if (got < n) {
		printf("a child died: %lld of %lld held\n", got, n);
		return 1;
	}
	printf("held %lld\n", n);
	return 0;
}

/* Hold BYTES, say so, and live on SECONDS. */
static int cmd_hold(char **argv)
{
	long long bytes = number(argv[0], 0, 1ll << 40), seconds = number(argv[1], 0, INT_MAX);

	if (bytes < 0 || seconds < 0)
		return 2;
	hold((unsigned long long)bytes);
	puts("held");
	fflush(stdout);
	sleep((unsigned)seconds);
	return 0;
}

/* Spin SECONDS of wall-clock time; then the CPU time this process got
 * and the wall time it spun, in microseconds. */
static int cmd_spin(char **argv)
{
	long long seconds = number(argv[0], 1, 3600);
	struct timespec t0, t;
	struct rusage ru;
	long long wall_us;

	if (seconds < 0)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while (t.tv_sec - t0.tv_sec < seconds ||
	       (t.tv_sec - t0.tv_sec == seconds && t.tv_nsec < t0.tv_nsec));
	wall_us = (t.tv_sec - t0.tv_sec) * 1000000ll + (t.tv_nsec - t0.tv_nsec) / 1000;
	getrusage(RUSAGE_SELF, &ru);
	printf("cpu_us=%lld wall_us=%lld\n",
	       (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000ll + ru.ru_utime.tv_usec +
		   ru.ru_stime.tv_usec,
	       wall_us);
	return 0;
}

/* Write BYTES into the new file PATH, 1 MiB at a time. */
static int cmd_fill(char **argv)
{
	static char chunk[1 << 20];
	long long bytes = number(argv[1], 0, 1ll << 40), written = 0;
	int fd = open(argv[0], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (bytes < 0)
		return 2;
	if (fd < 0)
		return refused(errno);
	memset(chunk, 'x', sizeof chunk);
	while (written < bytes) {
		ssize_t n = write(fd, chunk,
				  (size_t)(bytes - written < (long long)sizeof chunk
					       ? bytes - written
					       : (long long)sizeof chunk));
		if (n < 0)
			return refused(errno);
		written += n;
	}
	close(fd);
	printf("written=%lld\n", written);
	return 0;
}

/*
 * Session, process group, and the controlling terminal: the standard fd
 * that is it (tcgetsid() succeeds only on one's own controlling terminal),
 * else "none". /dev/tty opens only with a controlling terminal, but
 * Landlock may refuse it first, so its result is printed as it is.
 */
static int cmd_session(char **argv)
{
	char name[64];
	const char *tty = "none", *dev_tty = "opened";
	int fd;

	for (fd = 0; fd < 3 && strcmp(tty, "none") == 0; fd++) {
		if (!isatty(fd) || tcgetsid(fd) < 0)
			continue;
		if (ttyname_r(fd, name, sizeof name) != 0)
			snprintf(name, sizeof name, "fd%d", fd);
		tty = name;
	}
	fd = open("/dev/tty", O_RDONLY | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		dev_tty = strerrorname_np(errno);
	else
		close(fd);
	printf("sid=%d pgid=%d pid=%d tty=%s dev_tty=%s\n", (int)getsid(0), (int)getpgrp(),
	       (int)getpid(), tty, dev_tty ? dev_tty : "?");
	return 0;
}

/* What the guest has of the scheduler, and whether it can take more: its
 * policy, nice, I/O class and oom_score_adj, then whether a real-time
 * policy or a lower nice is refused. */
static int cmd_sched(char **argv)
{
	struct sched_param fifo = { .sched_priority = 1 };
	char oom[16] = "?";
	int fd, nice, rt, lower;

	(void)argv;
	fd = open("/proc/self/oom_score_adj", O_RDONLY | O_CLOEXEC);
	if (fd >= 0 && read(fd, oom, sizeof oom - 1) > 0)
		oom[strcspn(oom, "\n")] = '\0';
	if (fd >= 0)
		close(fd);
	errno = 0;
	nice = getpriority(PRIO_PROCESS, 0);
	printf("policy=%d nice=%d ioclass=%ld oom=%s\n", sched_getscheduler(0), nice,
	       syscall(SYS_ioprio_get, 1, 0) >> 13, oom);
	rt = sched_setscheduler(0, SCHED_FIFO, &fifo) < 0 ? errno : 0;
	lower = setpriority(PRIO_PROCESS, 0, nice - 1) < 0 ? errno : 0;
	printf("fifo=%s lower-nice=%s\n", rt ? strerrorname_np(rt) : "set",
	       lower ? strerrorname_np(lower) : "set");
	return 0;
}

/* LEVELS nested directories of NAMELEN-byte names below the cwd, made
 * descriptor by descriptor (the whole path is far longer than PATH_MAX),
 * and a file at the bottom: what a path-walking cleanup cannot remove. */
static int cmd_deeptree(char **argv)
{
	long long levels = number(argv[0], 1, 100000);
	long long len = number(argv[1], 1, NAME_MAX);
	char name[NAME_MAX + 1];
	int dir, fd;

	if (levels < 0 || len < 0)
		return 2;
	memset(name, 'd', (size_t)len);
	name[len] = '\0';
	if ((dir = open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return refused(errno);
	for (long long i = 0; i < levels; i++) {
		int next;

		if (mkdirat(dir, name, 0700) < 0 ||
		    (next = openat(dir, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
			return refused(errno);
		close(dir);
		dir = next;
	}
	fd = openat(dir, "bottom", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, "x", 1) != 1)
		return refused(errno);
	printf("built %lld levels of %lld bytes\n", levels, len);
	return 0;
}

/* How many entries (besides . and ..) PATH holds. */
static int cmd_count(char **argv)
{
	DIR *d = opendir(argv[0]);
	struct dirent *e;
	long n = 0;

	if (!d)
		return refused(errno);
	while ((e = readdir(d)) != NULL)
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	printf("entries=%ld\n", n);
	return 0;
}

static int cmd_xattr_set(char **argv)
{
	return done(setxattr(argv[0], argv[1], argv[2], strlen(argv[2]), 0), "set");
}

static int cmd_xattr_get(char **argv)
{
	char value[256];
	ssize_t len = getxattr(argv[0], argv[1], value, sizeof(value) - 1);

	if (len < 0)
		return refused(errno);
	value[len] = '\0';
	printf("value=%s\n", value);
	return 0;
}

/* PATH's modification time set to 1970, or printed. */
static int cmd_mtime(char **argv)
{
	struct timespec old[2] = { { 1, 0 }, { 1, 0 } };
	struct stat st;

	if (argv[1] != NULL)
		return done(utimensat(AT_FDCWD, argv[0], old, 0), "set");
	if (stat(argv[0], &st) < 0)
		return refused(errno);
	printf("mtime=%lld\n", (long long)st.st_mtime);
	return 0;
}

static const struct command {
	const char *name;
	int min_args, max_args;
	int (*run)(char **argv);
	const char *args;
} commands[] = {
	{ "env", 0, 0, cmd_env, "" },
	{ "ids", 0, 0, cmd_ids, "" },
	{ "fds", 0, 0, cmd_fds, "" },
	{ "rlimits", 0, 0, cmd_rlimits, "" },
	{ "cwd", 0, 0, cmd_cwd, "" },
	{ "read", 1, 1, cmd_read, " PATH" },
	{ "write", 1, 1, cmd_write, " PATH" },
	{ "connect", 2, 2, cmd_connect, " IP PORT" },
	{ "send-udp", 2, 2, cmd_send_udp, " IP PORT" },
	{ "connect-unix", 1, 1, cmd_connect_unix, " PATH" },
	{ "stat", 1, 1, cmd_stat, " PATH" },
	{ "mount", 0, 0, cmd_mount, "" },
	{ "ptrace-attach", 1, 1, cmd_ptrace_attach, " PID" },
	{ "vmread", 1, 2, cmd_vmread, " PID [HEXADDR]" },
	{ "tiocsti", 0, 0, cmd_tiocsti, "" },
	{ "steal-tty", 0, 0, cmd_steal_tty, "" },
	{ "tty-ioctls", 0, 0, cmd_tty_ioctls, "" },
	{ "int80-ptrace", 0, 0, cmd_int80_ptrace, "" },
	{ "x32-ptrace", 0, 0, cmd_x32_ptrace, "" },
	{ "unshare-user", 0, 0, cmd_unshare_user, "" },
	{ "clone-newns", 0, 0, cmd_clone_newns, "" },
	{ "forkbomb", 0, 0, cmd_forkbomb, "" },
	{ "membomb", 0, 0, cmd_membomb, "" },
	{ "cpuloop", 0, 0, cmd_cpuloop, "" },
	{ "sleep", 1, 1, cmd_sleep, " SECONDS" },
	{ "exit", 1, 1, cmd_exit, " N" },
	{ "kill-self", 1, 1, cmd_kill_self, " SIGNUM" },
	{ "environ", 1, 1, cmd_environ, " PID" },
	{ "setuid0", 0, 0, cmd_setuid0, "" },
	{ "grandchild", 1, 1, cmd_grandchild, " SECONDS" },
	{ "echo", 0, 0, cmd_echo, "" },
	{ "send-channel", 0, 0, cmd_send_channel, "" },
	{ "send-big", 1, 1, cmd_send_big, " BYTES" },
	{ "stream-check", 1, 1, cmd_stream_check, " BYTES" },
	{ "stream-send", 1, 1, cmd_stream_send, " BYTES" },
	{ "keyread", 1, 1, cmd_keyread, " ID" },
	{ "tmpdir", 0, 0, cmd_tmpdir, "" },
	{ "signal", 2, 2, cmd_signal, " PID SIG" },
	{ "sleep-family", 1, 1, cmd_sleep_family, " SECONDS" },
	{ "children", 2, 2, cmd_children, " N BYTES" },
	{ "hold", 2, 2, cmd_hold, " BYTES SECONDS" },
	{ "spin", 1, 1, cmd_spin, " SECONDS" },
	{ "fill", 2, 2, cmd_fill, " PATH BYTES" },
	{ "session", 0, 0, cmd_session, "" },
	{ "sched", 0, 0, cmd_sched, "" },
	{ "deeptree", 2, 2, cmd_deeptree, " LEVELS NAMELEN" },
	{ "count", 1, 1, cmd_count, " DIR" },
	{ "xattr-set", 3, 3, cmd_xattr_set, " PATH NAME VALUE" },
	{ "xattr-get", 2, 2, cmd_xattr_get, " PATH NAME" },
	{ "mtime", 1, 2, cmd_mtime, " PATH [old]" },
};

static int usage(void)
{
	size_t i;

	fputs("usage: probe COMMAND [ARGS]\ncommands:\n", stderr);
	for (i = 0; i < sizeof commands / sizeof *commands; i++)
		fprintf(stderr, "  %s%s\n", commands[i].name, commands[i].args);
	return 2;
}

int main(int argc, char **argv)
{
	size_t i;
	int nargs = argc - 2;

	if (argc < 2)
		return usage();
	for (i = 0; i < sizeof commands / sizeof *commands; i++) {
		if (strcmp(argv[1], commands[i].name) != 0)
			continue;
		if (nargs < commands[i].min_args || nargs > commands[i].max_args)
			return usage();
		return commands[i].run(argv + 2);
	}
	return usage();
}
