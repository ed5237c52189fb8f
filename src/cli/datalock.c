/* The lock of a data folder (cli/datalock.h). */
#include "cli/datalock.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "base/path.h"

int datalock_take(const char *dir, const char *holder_hint, struct err *e)
{
	char path[4200], pid[32] = "";
	ssize_t n;
	int fd;

	if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, DATALOCK_FILE) >= sizeof path)
		return err_set(e, ERR_INVALID, "data folder path too long: %s", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return err_set(e, ERR_INVALID, "cannot open %s: %s", path, strerror(errno));
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		int saved = errno;
		n = pread(fd, pid, sizeof pid - 1, 0);
		pid[n > 0 ? n : 0] = '\0';
		pid[strcspn(pid, "\n")] = '\0';
		close(fd);
		if (saved == EWOULDBLOCK)
			return err_set(e, ERR_CONFLICT, "data folder %s is in use by accord (pid %s)%s", dir,
				       pid[0] ? pid : "?", holder_hint ? holder_hint : "");
		return err_set(e, ERR_INTERNAL, "cannot lock %s: %s", path, strerror(saved));
	}
	n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) != 0 || path_write_all(fd, pid, (size_t)n) != 0) {
		err_set(e, ERR_INTERNAL, "cannot write %s: %s", path, strerror(errno));
		close(fd);
		return -ERR_INTERNAL;
	}
	return fd;
}

void datalock_release(int fd)
{
	if (fd >= 0)
		close(fd);
}
