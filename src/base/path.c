#include "base/path.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool path_is_safe_relative(const char *rel)
{
	const char *p = rel;

	if (!rel || !*rel || *rel == '/')
		return false;
	while (*p) {
		const char *slash = strchr(p, '/');
		size_t n = slash ? (size_t)(slash - p) : strlen(p);
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		for (size_t i = 0; i < n; i++)
			if (p[i] == '\\')
				return false;
		if (!slash)
			break;
		p = slash + 1;
		if (!*p)
			return false;
	}
	return true;
}

char *path_join_safe(const char *dir, const char *rel, struct err *e)
{
	char *out;

	if (!path_is_safe_relative(rel)) {
		err_set(e, ERR_INVALID, "unsafe path '%.200s': must be relative, without '..' or empty parts", rel);
		return NULL;
	}
	if (asprintf(&out, "%s/%s", dir, rel) < 0) {
		err_set(e, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	return out;
}

int path_mkdirs(const char *path, mode_t mode, struct err *e)
{
	char tmp[4096];
	size_t n = strlen(path);

	if (n == 0 || n >= sizeof tmp)
		return err_set(e, ERR_INVALID, "bad directory path");
	memcpy(tmp, path, n + 1);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, mode) != 0 && errno != EEXIST)
			return err_set(e, ERR_INTERNAL, "cannot create directory %s: %s", tmp, strerror(errno));
		*p = '/';
	}
	if (mkdir(tmp, mode) != 0 && errno != EEXIST)
		return err_set(e, ERR_INTERNAL, "cannot create directory %s: %s", tmp, strerror(errno));
	return 0;
}

static int remove_one(const char *p, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(p);
}

int path_remove_tree(const char *path, struct err *e)
{
	struct stat st;

	if (lstat(path, &st) != 0)
		return errno == ENOENT ? 0 : err_set(e, ERR_INTERNAL, "cannot stat %s: %s", path, strerror(errno));
	if (nftw(path, remove_one, 32, FTW_DEPTH | FTW_PHYS) != 0)
		return err_set(e, ERR_INTERNAL, "cannot remove %s: %s", path, strerror(errno));
	return 0;
}

char *path_read_file(const char *path, size_t max, size_t *len, struct err *e)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	char *data = NULL;
	size_t got = 0;

	if (fd < 0) {
		err_set(e, errno == ENOENT ? ERR_NOT_FOUND : ERR_INTERNAL, "cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		err_set(e, ERR_INVALID, "%s is not a regular file", path);
		goto fail;
	}
	if ((size_t)st.st_size > max) {
		err_set(e, ERR_TOO_LARGE, "%s is larger than the limit of %zu bytes", path, max);
		goto fail;
	}
	data = malloc((size_t)st.st_size + 1);
	if (!data) {
		err_set(e, ERR_INTERNAL, "out of memory");
		goto fail;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, data + got, (size_t)st.st_size - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	data[got] = '\0';
	close(fd);
	if (len)
		*len = got;
	return data;
fail:
	free(data);
	close(fd);
	return NULL;
}

int path_write_file(const char *path, const void *data, size_t len, mode_t mode, struct err *e)
{
	char tmp[4096];
	const char *p = data;
	int fd;

	if (snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)getpid()) >= (int)sizeof tmp)
		return err_set(e, ERR_INVALID, "path too long");
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
	if (fd < 0)
		return err_set(e, ERR_INTERNAL, "cannot create %s: %s", tmp, strerror(errno));
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			close(fd);
			unlink(tmp);
			return err_set(e, ERR_INTERNAL, "cannot write %s: %s", tmp, strerror(errno));
		}
		p += n;
		len -= (size_t)n;
	}
	if (fsync(fd) != 0 || close(fd) != 0 || rename(tmp, path) != 0) {
		unlink(tmp);
		return err_set(e, ERR_INTERNAL, "cannot write %s: %s", path, strerror(errno));
	}
	return 0;
}
