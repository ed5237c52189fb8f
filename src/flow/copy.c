#include "flow/copy.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/path.h"

static int copy_file(const char *src, const char *dst, mode_t mode, struct err *e)
{
	char buf[65536];
	ssize_t n;
	int in = open(src, O_RDONLY | O_CLOEXEC), out;
	if (in < 0)
		return err_set(e, ERR_INTERNAL, "cannot open %s: %m", src);
	out = open(dst, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode & 0777);
	if (out < 0) {
		close(in);
		return err_set(e, ERR_INTERNAL, "cannot create %s: %m", dst);
	}
	while ((n = read(in, buf, sizeof buf)) > 0)
		if (write(out, buf, (size_t)n) != n) {
			n = -1;
			break;
		}
	close(in);
	if (close(out) < 0 || n < 0)
		return err_set(e, ERR_INTERNAL, "cannot copy %s to %s", src, dst);
	return 0;
}

static int copy_rec(const char *src, const char *dst, const char *skip, int depth, struct err *e)
{
	DIR *d;
	struct dirent *de;
	int rc = 0;
	if (depth > 64)
		return err_set(e, ERR_INVALID, "%s: folders nest too deeply", src);
	if (path_mkdirs(dst, 0700, e) < 0)
		return -1;
	d = opendir(src);
	if (!d)
		return err_set(e, ERR_NOT_FOUND, "cannot open folder %s: %m", src);
	while (rc == 0 && (de = readdir(d))) {
		char s[4096], t[4096];
		struct stat st;
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (skip && depth == 0 && strcmp(de->d_name, skip) == 0)
			continue;
		if ((size_t)snprintf(s, sizeof s, "%s/%s", src, de->d_name) >= sizeof s ||
		    (size_t)snprintf(t, sizeof t, "%s/%s", dst, de->d_name) >= sizeof t) {
			rc = err_set(e, ERR_INVALID, "path too long under %s", src);
			break;
		}
		if (lstat(s, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode))
			rc = copy_rec(s, t, skip, depth + 1, e);
		else if (S_ISREG(st.st_mode))
			rc = copy_file(s, t, st.st_mode, e);
	}
	closedir(d);
	return rc;
}

int flow_copy_tree(const char *src, const char *dst, const char *skip, struct err *e)
{
	return copy_rec(src, dst, skip, 0, e);
}
