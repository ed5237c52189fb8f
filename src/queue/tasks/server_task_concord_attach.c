/* The `concord` task's `attachments` (Concord's plugins-v2 concord.md "File Attachments"):
 * files of the calling process's working directory given to the child, each at the root
 * of the child's working directory under its own name, or at `dest` for {src, dest}.  The
 * runner wrote those files: each is read beneath the working directory (base/path.h), never
 * by following a link out of it. */
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "base/path.h"
#include "queue/tasks/server_tasks.h"

/* src and dest of one entry (BORROWED from it). */
static int entry_paths(json_t *a, size_t i, const char **src, const char **dest, struct err *e)
{
	if (json_is_string(a)) {
		const char *slash;
		*src = json_string_value(a);
		slash = strrchr(*src, '/');
		*dest = slash ? slash + 1 : *src;
	} else if (json_is_object(a)) {
		*src = json_string_value(json_object_get(a, "src"));
		*dest = json_string_value(json_object_get(a, "dest"));
		if (!*src || !*dest)
			return err_set(e, ERR_INVALID, "'attachments' entry %zu: 'src' and 'dest' must be strings", i);
	} else {
		return err_set(e, ERR_INVALID,
			       "'attachments' entry %zu: must be a path or a map with 'src' and 'dest'", i);
	}
	if (!**src || !path_is_safe_relative(*dest))
		return err_set(e, ERR_INVALID,
			       "'attachments' entry %zu: the destination must be a relative path without '..': %.200s",
			       i, *dest);
	return 0;
}

/* Copies one attachment into dir (a staged payload folder). */
static int copy_one(const char *workdir, const char *src, const char *dest, const char *dir, struct err *e)
{
	char *data = NULL, *parent = strdup(dest), *slash;
	size_t len = 0;
	int rc = -1;

	if (!parent)
		return err_set(e, ERR_INTERNAL, "out of memory");
	if (!(data = path_read_beneath(workdir, src, limits.archive_bytes, &len, e))) {
		if (e->code == ERR_NOT_FOUND)
			err_set(e, ERR_INVALID, "'attachments': file not found in the working directory: %.200s", src);
		goto out;
	}
	if ((slash = strrchr(parent, '/'))) {
		*slash = '\0';
		if (path_mkdirs_beneath(dir, parent, 0700, e))
			goto out;
	}
	rc = path_write_beneath(dir, dest, data, len, 0600, e);
out:
	free(data);
	free(parent);
	return rc;
}

int server_task_concord_attach(struct task_call *tc, json_t *list, const char *dir, struct err *e)
{
	const char *src = NULL, *dest = NULL;
	json_t *a;
	size_t i;

	if (!list || json_is_null(list))
		return 0;
	if (!json_is_array(list))
		return err_set(e, ERR_INVALID, "'attachments' must be a list of paths or of {src, dest} maps");
	json_array_foreach(list, i, a)
	{
		if (entry_paths(a, i, &src, &dest, e) || copy_one(tc->workdir, src, dest, dir, e))
			return -1;
	}
	return 0;
}
