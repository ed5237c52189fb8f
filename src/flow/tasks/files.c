#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/path.h"
#include "flow/tasks/task.h"

static char *resolve(struct task_ctx *c, json_t *args, size_t i, struct err *e)
{
	const char *p;
	size_t wl = strlen(c->h->workdir);
	if (task_arg_str(args, i, "path", &p, e) < 0)
		return NULL;
	if (p[0] == '/') {
		if (strncmp(p, c->h->workdir, wl) == 0 && (p[wl] == '/' || p[wl] == '\0'))
			return strdup(p);
		err_set(e, ERR_FORBIDDEN, "path '%s' is outside of the working directory", p);
		return NULL;
	}
	return path_join_safe(c->h->workdir, p, e);
}

static int exists(struct task_ctx *c, json_t *args, json_t **out, bool want, struct err *e)
{
	struct stat st;
	char *p = resolve(c, args, 0, e);
	if (!p)
		return -1;
	*out = json_boolean((stat(p, &st) == 0) == want);
	free(p);
	return 0;
}

static int m_exists(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	return exists(c, args, out, true, e);
}
static int m_not_exists(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	return exists(c, args, out, false, e);
}

static int m_move(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	char *src = resolve(c, args, 0, e), *dir = src ? resolve(c, args, 1, e) : NULL, *dst = NULL;
	const char *base = src ? strrchr(src, '/') : NULL;
	int rc = -1;
	if (!src || !dir)
		goto out;
	if (path_mkdirs(dir, 0700, e) < 0 || asprintf(&dst, "%s/%s", dir, base ? base + 1 : src) < 0)
		goto out;
	if (rename(src, dst) < 0) {
		err_set(e, ERR_INVALID, "cannot move %s to %s: %m", src, dir);
		goto out;
	}
	*out = json_string(dst);
	rc = 0;
out:
	free(src);
	free(dir);
	free(dst);
	return rc;
}

static int m_relativize(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	const char *a, *b;
	size_t la;
	(void)c;
	if (task_arg_str(args, 0, "base", &a, e) < 0 || task_arg_str(args, 1, "path", &b, e) < 0)
		return -1;
	la = strlen(a);
	while (la > 0 && a[la - 1] == '/')
		la--;
	if (strncmp(a, b, la) == 0 && (b[la] == '/' || b[la] == '\0'))
		*out = json_string(b[la] ? b + la + 1 : "");
	else
		*out = json_string(b);
	return 0;
}

static const struct task_method methods[] = {{"exists", m_exists, 1, 1},
					     {"notExists", m_not_exists, 1, 1},
					     {"moveFile", m_move, 2, 2},
					     {"relativize", m_relativize, 2, 2},
					     {NULL, NULL, 0, 0}};

const struct task_def task_files = {"files", NULL, methods, false};
