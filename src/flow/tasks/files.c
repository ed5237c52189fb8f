#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/oom.h"
#include "base/path.h"
#include "flow/tasks/task.h"

/* Every path goes through the working-directory resolver (base/path.h). */

static int exists(struct task_ctx *c, json_t *args, json_t **out, bool want, struct err *e)
{
	const char *p;
	int rc;
	if (task_arg_str(args, 0, "path", &p, e) < 0 || (rc = path_exists_beneath(c->h->workdir, p, e)) < 0)
		return -1;
	*out = json_boolean((rc == 1) == want);
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

/* moveFile(src, dir): src into the folder dir (created as needed); the new absolute path. */
static int m_move(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	const char *src, *dir, *base;
	char *to = NULL, *full = NULL;
	size_t n;
	int rc = -1;
	if (task_arg_str(args, 0, "path", &src, e) < 0 || task_arg_str(args, 1, "path", &dir, e) < 0)
		return -1;
	n = strlen(src);
	while (n > 1 && src[n - 1] == '/')
		n--;
	for (base = src + n; base > src && base[-1] != '/'; base--)
		;
	if (path_mkdirs_beneath(c->h->workdir, dir, 0700, e) < 0)
		goto out;
	if (asprintf(&to, "%s/%.*s", dir, (int)(src + n - base), base) < 0) {
		to = NULL;
		oom_fail(e);
		goto out;
	}
	if (path_rename_beneath(c->h->workdir, src, to, e) < 0 || !(full = path_abs_beneath(c->h->workdir, to, e)))
		goto out;
	*out = json_string(full);
	rc = 0;
out:
	free(to);
	free(full);
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

const struct task_def task_files = {"files", NULL, methods, false, false};
