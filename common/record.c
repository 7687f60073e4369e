/*
 * record.c - reading a lease record, and proving its reaper is still the
 * same process (format: record.h). Linked into the setuid helper: every
 * line here runs as root, on files only root writes.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "record.h"

uint64_t iso_proc_start_ticks(pid_t pid)
{
	char path[32], buf[1024], *p;
	unsigned long long start = 0;
	ssize_t got;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (pid <= 0 || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	got = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (got <= 0)
		return 0;
	buf[got] = '\0';
	/* "PID (COMM) STATE ...": COMM may hold anything, even ") ", so the
	 * fields are counted from its last ')'; then field 22. */
	p = strrchr(buf, ')');
	for (int field = 3; field <= 22 && p != NULL; field++)
		p = strchr(p + 1, ' ');
	if (p == NULL || sscanf(p, " %llu", &start) != 1)
		return 0;
	return start;
}

int iso_record_write(int fd, struct iso_wire_msg *m, uint8_t *buf, size_t cap)
{
	struct timespec now;
	long len;

	clock_gettime(CLOCK_REALTIME, &now);
	m->u.guest.started_us = (uint64_t)now.tv_sec * 1000000 + (uint64_t)now.tv_nsec / 1000;
	m->u.guest.start_ticks = iso_proc_start_ticks((pid_t)m->u.guest.pid);
	if ((len = iso_wire_encode(m, buf, cap)) < 0)
		return (int)len;
	if (pwrite(fd, buf, (size_t)len, 0) != len || ftruncate(fd, len) < 0)
		return -errno;
	return 0;
}

int iso_record_clear(int fd, uint64_t word)
{
	if (pwrite(fd, &word, sizeof(word), 0) != sizeof(word) || ftruncate(fd, sizeof(word)) < 0)
		return -errno;
	return 0;
}

int iso_record_read(const char *path, uint8_t *buf, size_t cap, struct iso_wire_msg *out)
{
	ssize_t got;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	got = read(fd, buf, cap);
	close(fd);
	if (got < 0)
		return errno == EISDIR ? 0 : -errno;
	if (got == 0 || iso_wire_decode(buf, (size_t)got, out, NULL, 0) < 0 ||
	    out->type != ISO_MSG_GUEST || out->u.guest.start_ticks == 0)
		return 0;
	return iso_proc_start_ticks((pid_t)out->u.guest.pid) == out->u.guest.start_ticks;
}

int iso_record_kill(const struct iso_wire_guest *guest)
{
	struct pollfd gone = { .events = POLLIN };

	gone.fd = (int)syscall(SYS_pidfd_open, (pid_t)guest->pid, 0);
	if (gone.fd < 0)
		return -ESRCH;
	/* Checked after the pidfd pins the process: if the pid was reused
	 * before, the start time is the newcomer's and differs. */
	if (iso_proc_start_ticks((pid_t)guest->pid) != guest->start_ticks) {
		close(gone.fd);
		return -ESRCH;
	}
	(void)syscall(SYS_pidfd_send_signal, gone.fd, SIGKILL, NULL, 0);
	(void)poll(&gone, 1, 10000);
	close(gone.fd);
	return 0;
}
