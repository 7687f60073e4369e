/*
 * evil.c - a shared object a hostile caller would like the setuid helper to
 * load through LD_PRELOAD. If its constructor ever runs inside the helper it
 * leaves a marker that only root could create; live_core checks there is
 * none.
 */
#include <fcntl.h>
#include <unistd.h>

__attribute__((constructor)) static void evil_constructor(void)
{
	int fd = open(ISO_TEST_ROOT "/evil-ran", O_WRONLY | O_CREAT, 0644);

	if (fd >= 0)
		close(fd);
}
