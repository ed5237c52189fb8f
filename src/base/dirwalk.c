/* A walk of a folder tree (dirwalk.h). */
#include "base/dirwalk.h"

#include <dirent.h>
#include <string.h>

#include "base/str.h"

struct dirwalk {
	const char *root, *what;
	int depth_max;
	dirwalk_fn fn;
	void *ctx;
	struct err *e;
};

static int walk(struct dirwalk *w, const char *rel, int depth)
{
	char path[4096], sub[4096];
	struct dirent *d;
	DIR *dir;
	int rc = 0;

	if (depth > w->depth_max || str_fmt(path, sizeof path, "%s%s%s", w->root, *rel ? "/" : "", rel))
		return err_set(w->e, ERR_TOO_LARGE, "%s too deep: %.256s", w->what, rel);
	if (!(dir = opendir(path)))
		return 0;
	while (rc == 0 && (d = readdir(dir))) {
		struct stat st;
		if (!strcmp(d->d_name, ".") || !strcmp(d->d_name, "..") ||
		    str_fmt(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", d->d_name) ||
		    str_fmt(path, sizeof path, "%s/%s", w->root, sub) || lstat(path, &st))
			continue;
		rc = w->fn(w->ctx, sub, path, &st);
		if (rc == 0 && S_ISDIR(st.st_mode))
			rc = walk(w, sub, depth + 1);
	}
	closedir(dir);
	return rc;
}

int dirwalk(const char *root, int depth_max, const char *what, dirwalk_fn fn, void *ctx, struct err *e)
{
	struct dirwalk w = {root, what, depth_max, fn, ctx, e};
	return walk(&w, "", 0);
}
