#include "base/path.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "base/str.h"

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
	/* The folder itself first: its parents usually exist (one call instead of one per
	 * component for every staging and working folder). */
	if (mkdir(path, mode) == 0 || errno == EEXIST)
		return 0;
	if (errno != ENOENT)
		return err_set(e, err_code_of_write(errno), "cannot create directory %s: %s", path, strerror(errno));
	memcpy(tmp, path, n + 1);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(tmp, mode) != 0 && errno != EEXIST)
			return err_set(e, err_code_of_write(errno), "cannot create directory %s: %s", tmp, strerror(errno));
		*p = '/';
	}
	if (mkdir(tmp, mode) != 0 && errno != EEXIST)
		return err_set(e, err_code_of_write(errno), "cannot create directory %s: %s", tmp, strerror(errno));
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

/* Reads the regular file open on fd (closed here); path names it in messages. */
static char *read_fd(int fd, const char *path, size_t max, size_t *len, struct err *e)
{
	struct stat st;
	char *data = NULL;
	size_t got = 0;

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

char *path_read_file(const char *path, size_t max, size_t *len, struct err *e)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0) {
		err_set(e, errno == ENOENT ? ERR_NOT_FOUND : ERR_INTERNAL, "cannot open %s: %s", path, strerror(errno));
		return NULL;
	}
	return read_fd(fd, path, max, len, e);
}

/* chown of everything in the folder dirfd (taken over), depth levels further at most. */
static int chown_at(int dirfd, uid_t uid, gid_t gid, int depth, struct err *e)
{
	DIR *d = fdopendir(dirfd);
	struct dirent *de;
	int rc = 0;

	if (!d) {
		close(dirfd);
		return err_set(e, ERR_INTERNAL, "cannot read a folder to give it away: %s", strerror(errno));
	}
	while (rc == 0 && (de = readdir(d))) {
		struct stat st;
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		if (fchownat(dirfd, de->d_name, uid, gid, AT_SYMLINK_NOFOLLOW) != 0)
			rc = err_set(e, ERR_INTERNAL, "cannot give '%.200s' away: %s", de->d_name, strerror(errno));
		else if (S_ISDIR(st.st_mode)) {
			int fd = depth > 0 ? openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
			rc = fd < 0 ? err_set(e, ERR_INTERNAL, "cannot give '%.200s' away: %s", de->d_name,
					      depth > 0 ? strerror(errno) : "nested too deeply")
				    : chown_at(fd, uid, gid, depth - 1, e);
		}
	}
	closedir(d);
	return rc;
}

int path_chown_tree(const char *path, uid_t uid, gid_t gid, struct err *e)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		return err_set(e, ERR_INTERNAL, "cannot open %s: %s", path, strerror(errno));
	if (fchown(fd, uid, gid) != 0) {
		close(fd);
		return err_set(e, ERR_INTERNAL, "cannot give %s away: %s", path, strerror(errno));
	}
	return chown_at(fd, uid, gid, 256, e);
}

int path_chown_beneath(const char *root, const char *rel, uid_t uid, gid_t gid, struct err *e)
{
	char buf[PATH_MAX], *save = NULL, *comp;
	int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;

	if (fd < 0)
		return err_set(e, ERR_INTERNAL, "cannot open %s: %s", root, strerror(errno));
	if (str_fmt(buf, sizeof buf, "%s", rel)) {
		close(fd);
		return err_set(e, ERR_INVALID, "path too long: %.200s", rel);
	}
	for (comp = strtok_r(buf, "/", &save); comp && rc == 0; comp = strtok_r(NULL, "/", &save)) {
		struct stat st;
		int next;
		if (strcmp(comp, ".") == 0)
			continue;
		next = strcmp(comp, "..") == 0 ? -1 : openat(fd, comp, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (next < 0 || fstat(next, &st) != 0 || S_ISLNK(st.st_mode))
			rc = err_set(e, ERR_INVALID, "cannot give '%.200s' away: '%s' is %s", rel, comp,
				     next < 0 ? "not there (or '..')" : "a symbolic link");
		else if (fchownat(next, "", uid, gid, AT_EMPTY_PATH) != 0)
			rc = err_set(e, ERR_INTERNAL, "cannot give '%.200s' away: %s", rel, strerror(errno));
		close(fd);
		fd = next;
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

char *path_read_at(int dirfd, const char *name, size_t max, size_t *len, struct err *e)
{
	int fd = openat(dirfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		err_set(e, errno == ENOENT ? ERR_NOT_FOUND : ERR_INVALID, "cannot open %s: %s", name,
			errno == ELOOP ? "a symbolic link" : strerror(errno));
		return NULL;
	}
	return read_fd(fd, name, max, len, e);
}

int path_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;

	while (n) {
		ssize_t w = write(fd, c, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		c += w;
		n -= (size_t)w;
	}
	return 0;
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
		return err_set(e, err_code_of_write(errno), "cannot create %s: %s", tmp, strerror(errno));
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			close(fd);
			unlink(tmp);
			return err_set(e, err_code_of_write(errno), "cannot write %s: %s", tmp, strerror(errno));
		}
		p += n;
		len -= (size_t)n;
	}
	if (fsync(fd) != 0 || close(fd) != 0 || rename(tmp, path) != 0) {
		unlink(tmp);
		return err_set(e, err_code_of_write(errno), "cannot write %s: %s", path, strerror(errno));
	}
	return 0;
}

int path_write_scratch(const char *path, const void *data, size_t len, mode_t mode, struct err *e)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, mode);

	if (fd < 0)
		return err_set(e, err_code_of_write(errno), "cannot create %s: %s", path, strerror(errno));
	if (path_write_all(fd, data, len) < 0) {
		err_set(e, err_code_of_write(errno), "cannot write %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (close(fd) != 0)
		return err_set(e, err_code_of_write(errno), "cannot write %s: %s", path, strerror(errno));
	return 0;
}

/* ---- the working-directory resolver ---- */

#define BENEATH_RETRIES 8 /* openat2 answers EAGAIN when a concurrent rename races the walk */

/* Tests set this to exercise the walk that stands in for openat2 on older kernels. */
static bool beneath_force_walk;

static int beneath_outside(const char *name, struct err *e)
{
	return err_set(e, ERR_FORBIDDEN, "path '%.300s' is outside the working directory", name);
}

/* The error for a failed open beneath the working directory; errnum is the open's errno. */
static int beneath_fail(const char *name, int errnum, struct err *e)
{
	switch (errnum) {
	case EXDEV:
		return beneath_outside(name, e);
	case ELOOP:
		return err_set(e, ERR_FORBIDDEN,
			       "path '%.300s' is outside the working directory: it goes through a link that is refused",
			       name);
	case ENOENT:
		return err_set(e, ERR_NOT_FOUND, "path '%.300s' does not exist", name);
	case ENOTDIR:
		return err_set(e, ERR_NOT_FOUND, "path '%.300s': a part of it is not a folder", name);
	case EISDIR:
		return err_set(e, ERR_INVALID, "path '%.300s' is a folder", name);
	case EEXIST:
		return err_set(e, ERR_CONFLICT, "path '%.300s' already exists", name);
	case EACCES:
	case EPERM:
		return err_set(e, ERR_FORBIDDEN, "path '%.300s': permission denied", name);
	default:
		return err_set(e, ERR_INTERNAL, "path '%.300s': %s", name, strerror(errnum));
	}
}

/* Sets *rel to the part of name below root ("" for root itself).  An absolute name must lie
 * lexically inside root, split on a component boundary; no name may hold "..". */
static int beneath_rel(const char *root, const char *name, const char **rel, struct err *e)
{
	size_t rl = strlen(root);
	const char *p = name;

	assert(root[0] == '/');
	if (!name || !*name)
		return err_set(e, ERR_INVALID, "empty path");
	if (strlen(name) >= PATH_MAX)
		return err_set(e, ERR_INVALID, "path '%.100s...' is too long", name);
	while (rl > 1 && root[rl - 1] == '/')
		rl--;
	if (name[0] == '/' && rl > 1) {
		if (strncmp(name, root, rl) != 0 || (name[rl] != '/' && name[rl] != '\0'))
			return beneath_outside(name, e);
		p = name + rl;
	}
	while (*p == '/')
		p++;
	for (const char *c = p; *c;) {
		size_t n = strcspn(c, "/");
		if (n == 2 && c[0] == '.' && c[1] == '.')
			return beneath_outside(name, e);
		c += n;
		while (*c == '/')
			c++;
	}
	*rel = p;
	return 0;
}

static int beneath_root(const char *root, struct err *e)
{
	int fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		err_set(e, ERR_INTERNAL, "cannot open the working directory %s: %s", root, strerror(errno));
	return fd;
}

/* One component of a walk: no symbolic link is followed, whatever it points at. */
static int walk_step(int dirfd, const char *comp, int flags, mode_t mode)
{
	struct stat st;
	int fd = openat(dirfd, comp, flags | O_NOFOLLOW, mode);

	if (fd < 0) {
		int saved = errno;
		if ((saved == ENOTDIR || saved == ELOOP) && fstatat(dirfd, comp, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    S_ISLNK(st.st_mode))
			saved = ELOOP;
		errno = saved;
		return -1;
	}
	if ((flags & O_PATH) && fstat(fd, &st) == 0 && S_ISLNK(st.st_mode)) {
		close(fd);
		errno = ELOOP;
		return -1;
	}
	return fd;
}

/* openat2's stand-in: component by component from dirfd, refusing links and "..". */
static int walk_open(int dirfd, const char *rel, int flags, mode_t mode)
{
	char buf[PATH_MAX];
	char *comp = buf;
	int cur = openat(dirfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (cur < 0)
		return -1;
	if (str_fmt(buf, sizeof buf, "%s", rel)) {
		close(cur);
		errno = ENAMETOOLONG;
		return -1;
	}
	for (;;) {
		char *next;
		int fd;
		while (*comp == '/')
			comp++;
		next = comp + strcspn(comp, "/");
		while (*next == '/')
			*next++ = '\0';
		if (strcmp(comp, "..") == 0) {
			close(cur);
			errno = EXDEV;
			return -1;
		}
		if (*next && (!*comp || strcmp(comp, ".") == 0)) {
			comp = next;
			continue;
		}
		if (!*next) {
			fd = walk_step(cur, *comp ? comp : ".", flags, mode);
			close(cur);
			return fd;
		}
		fd = walk_step(cur, comp, O_PATH | O_DIRECTORY | O_CLOEXEC, 0);
		close(cur);
		if (fd < 0)
			return -1;
		cur = fd;
		comp = next;
	}
}

/* Opens rel beneath dirfd: openat2 keeps every step, links included, beneath dirfd and
 * refuses /proc magic links; kernels without openat2 get the stricter walk.  Returns the
 * descriptor or -1 with errno set (EXDEV or ELOOP for an escape). */
static int beneath_openat(int dirfd, const char *rel, int flags, mode_t mode)
{
	struct open_how how = {.flags = (uint64_t)(flags | O_CLOEXEC),
			       .mode = (flags & O_CREAT) ? mode : 0,
			       .resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS};

	if (!beneath_force_walk) {
		long fd;
		int tries = 0;
		do
			fd = syscall(SYS_openat2, dirfd, *rel ? rel : ".", &how, sizeof how);
		while (fd < 0 && errno == EAGAIN && ++tries < BENEATH_RETRIES);
		if (fd >= 0 || errno != ENOSYS)
			return (int)fd;
	}
	return walk_open(dirfd, rel, flags | O_CLOEXEC, mode);
}

/* Refuses what a descriptor just opened for a flow must not be: a regular file with other
 * names (a hard link may lead anywhere on the file system) or, unless only a path was
 * asked for, something that is neither a regular file nor a folder (a FIFO would block). */
static int beneath_check(int fd, int flags, const char *name, struct err *e)
{
	struct stat st;

	if (fstat(fd, &st) != 0)
		return err_set(e, ERR_INTERNAL, "path '%.300s': %s", name, strerror(errno));
	if (S_ISREG(st.st_mode) && st.st_nlink > 1)
		return err_set(e, ERR_FORBIDDEN, "path '%.300s' is a file with %lu hard links, which is refused", name,
			       (unsigned long)st.st_nlink);
	if (!(flags & O_PATH) && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return err_set(e, ERR_INVALID, "path '%.300s' is not a regular file or a folder", name);
	return S_ISREG(st.st_mode) ? 1 : 0;
}

int path_open_beneath(const char *root, const char *name, int flags, mode_t mode, struct err *e)
{
	const char *rel;
	int rootfd, fd, rc, fl;
	bool trunc = (flags & O_TRUNC) != 0;

	if (beneath_rel(root, name, &rel, e) < 0 || (rootfd = beneath_root(root, e)) < 0)
		return -1;
	/* O_TRUNC waits for beneath_check: truncating first would empty a hard-linked file. */
	flags &= ~O_TRUNC;
	if (!(flags & O_PATH))
		flags |= O_NONBLOCK | O_NOCTTY;
	fd = beneath_openat(rootfd, rel, flags, mode);
	rc = fd < 0 ? beneath_fail(name, errno, e) : 0;
	close(rootfd);
	if (rc < 0)
		return rc;
	rc = beneath_check(fd, flags, name, e);
	if (rc >= 0 && !(flags & O_PATH) && ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0))
		rc = err_set(e, ERR_INTERNAL, "path '%.300s': %s", name, strerror(errno));
	if (rc == 1 && trunc && ftruncate(fd, 0) != 0)
		rc = err_set(e, ERR_INTERNAL, "cannot truncate '%.300s': %s", name, strerror(errno));
	if (rc < 0) {
		close(fd);
		return rc;
	}
	return fd;
}

char *path_read_beneath(const char *root, const char *name, size_t max, size_t *len, struct err *e)
{
	int fd = path_open_beneath(root, name, O_RDONLY, 0, e);
	return fd < 0 ? NULL : read_fd(fd, name, max, len, e);
}

int path_exists_beneath(const char *root, const char *name, struct err *e)
{
	struct err tmp;
	int fd = path_open_beneath(root, name, O_PATH, 0, &tmp);

	if (fd >= 0) {
		close(fd);
		return 1;
	}
	if (tmp.code == ERR_NOT_FOUND)
		return 0;
	if (e)
		*e = tmp;
	return -(int)tmp.code;
}

/* Opens the folder holding rel's last component (O_PATH) and points *last at that
 * component inside buf, a copy of rel.  rel must name something below the root. */
static int beneath_parent(int rootfd, const char *rel, char buf[PATH_MAX], const char **last, const char *name,
			  struct err *e)
{
	size_t n;
	char *slash;
	int fd;

	if (str_fmt(buf, PATH_MAX, "%s", rel)) /* beneath_rel checked the length */
		return err_set(e, ERR_INTERNAL, "path '%.300s' is too long", name);
	n = strlen(buf);
	while (n > 0 && buf[n - 1] == '/')
		buf[--n] = '\0';
	slash = strrchr(buf, '/');
	*last = slash ? slash + 1 : buf;
	if (!**last || strcmp(*last, ".") == 0)
		return err_set(e, ERR_INVALID, "path '%.300s' does not name a file", name);
	if (slash)
		*slash = '\0';
	fd = beneath_openat(rootfd, slash ? buf : "", O_PATH | O_DIRECTORY, 0);
	return fd < 0 ? beneath_fail(name, errno, e) : fd;
}

/* Refuses to replace a symbolic link or a hard-linked file by name, so a write never
 * looks as if it went through one. */
static int beneath_replaceable(int dirfd, const char *last, const char *name, struct err *e)
{
	struct stat st;

	if (fstatat(dirfd, last, &st, AT_SYMLINK_NOFOLLOW) != 0)
		return errno == ENOENT ? 0 : beneath_fail(name, errno, e);
	if (S_ISLNK(st.st_mode))
		return beneath_fail(name, ELOOP, e);
	if (S_ISDIR(st.st_mode))
		return beneath_fail(name, EISDIR, e);
	if (S_ISREG(st.st_mode) && st.st_nlink > 1)
		return err_set(e, ERR_FORBIDDEN, "path '%.300s' is a file with %lu hard links, which is refused", name,
			       (unsigned long)st.st_nlink);
	return 0;
}

static int write_all(int fd, const void *data, size_t len)
{
	const char *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int path_write_beneath(const char *root, const char *name, const void *data, size_t len, mode_t mode, struct err *e)
{
	static _Atomic unsigned counter;
	char buf[PATH_MAX], tmp[64];
	const char *rel, *last;
	int rootfd = -1, dirfd = -1, fd = -1, rc = -1;

	if (beneath_rel(root, name, &rel, e) < 0 || (rootfd = beneath_root(root, e)) < 0)
		return -1;
	if ((dirfd = beneath_parent(rootfd, rel, buf, &last, name, e)) < 0 ||
	    beneath_replaceable(dirfd, last, name, e) < 0)
		goto out;
	if (str_fmt(tmp, sizeof tmp, ".accord-tmp-%d-%u", (int)getpid(), counter++)) {
		rc = err_set(e, ERR_INTERNAL, "temporary name too long");
		goto out;
	}
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0) {
		rc = beneath_fail(name, errno, e);
		goto out;
	}
	rc = write_all(fd, data, len) < 0 || fsync(fd) != 0 ? -1 : 0;
	if (close(fd) != 0)
		rc = -1;
	fd = -1;
	if (rc < 0 || renameat(dirfd, tmp, dirfd, last) != 0) {
		rc = err_set(e, err_code_of_write(errno), "cannot write '%.300s': %s", name, strerror(errno));
		unlinkat(dirfd, tmp, 0);
	}
out:
	if (fd >= 0)
		close(fd);
	if (dirfd >= 0)
		close(dirfd);
	close(rootfd);
	return rc;
}

int path_mkdirs_beneath(const char *root, const char *name, mode_t mode, struct err *e)
{
	char buf[PATH_MAX];
	const char *rel;
	char *end;
	int rootfd, cur, rc = 0;

	if (beneath_rel(root, name, &rel, e) < 0 || (rootfd = beneath_root(root, e)) < 0)
		return -1;
	if (str_fmt(buf, sizeof buf, "%s", rel)) { /* beneath_rel checked the length */
		close(rootfd);
		return err_set(e, ERR_INTERNAL, "path '%.300s' is too long", name);
	}
	cur = openat(rootfd, ".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	for (end = buf; cur >= 0 && *end;) {
		char *comp = end, saved;
		int fd;
		end += strcspn(end, "/");
		saved = *end;
		*end = '\0';
		/* Each prefix is resolved from the root again, so a link planted in it is judged
		 * like any other path; mkdirat itself never follows one. */
		fd = beneath_openat(rootfd, buf, O_PATH | O_DIRECTORY, 0);
		if (fd < 0 && errno == ENOENT && *comp && strcmp(comp, ".") != 0 &&
		    (mkdirat(cur, comp, mode) == 0 || errno == EEXIST))
			fd = beneath_openat(rootfd, buf, O_PATH | O_DIRECTORY, 0);
		if (fd < 0) {
			rc = beneath_fail(name, errno, e);
			break;
		}
		close(cur);
		cur = fd;
		*end = saved;
		while (*end == '/')
			end++;
	}
	if (cur < 0 && rc == 0)
		rc = err_set(e, ERR_INTERNAL, "cannot open the working directory %s: %s", root, strerror(errno));
	if (cur >= 0)
		close(cur);
	close(rootfd);
	return rc;
}

int path_rename_beneath(const char *root, const char *from, const char *to, struct err *e)
{
	char fbuf[PATH_MAX], tbuf[PATH_MAX];
	const char *frel, *trel, *flast, *tlast;
	int rootfd, fdir = -1, tdir = -1, rc = -1;

	if (beneath_rel(root, from, &frel, e) < 0 || beneath_rel(root, to, &trel, e) < 0 ||
	    (rootfd = beneath_root(root, e)) < 0)
		return -1;
	if ((fdir = beneath_parent(rootfd, frel, fbuf, &flast, from, e)) < 0 ||
	    (tdir = beneath_parent(rootfd, trel, tbuf, &tlast, to, e)) < 0)
		goto out;
	if (renameat(fdir, flast, tdir, tlast) != 0) {
		rc = beneath_fail(errno == ENOENT ? from : to, errno, e);
		err_prefix(e, "cannot move '%.200s' to '%.200s'", from, to);
		goto out;
	}
	rc = 0;
out:
	if (fdir >= 0)
		close(fdir);
	if (tdir >= 0)
		close(tdir);
	close(rootfd);
	return rc;
}

char *path_abs_beneath(const char *root, const char *name, struct err *e)
{
	const char *rel;
	char *out;
	size_t rl = strlen(root);

	if (beneath_rel(root, name, &rel, e) < 0)
		return NULL;
	while (rl > 1 && root[rl - 1] == '/')
		rl--;
	if (asprintf(&out, "%.*s%s%s", (int)rl, root, *rel ? "/" : "", rel) < 0) {
		err_set(e, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	return out;
}
