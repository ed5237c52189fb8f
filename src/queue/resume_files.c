#include "queue/resume_files.h"

#include <stdlib.h>
#include <string.h>

#include "base/b64.h"
#include "base/limits.h"
#include "base/path.h"

static int write_one(const char *workdir, const json_t *f, uint64_t *total, struct err *e)
{
	const char *rel = json_string_value(json_object_get(f, "path"));
	const char *data = json_string_value(json_object_get(f, "data"));
	char *dir = NULL, *slash;
	unsigned char *bytes = NULL;
	size_t len = 0;
	int rc = -1;

	if (!rel || !data || !path_is_safe_relative(rel))
		return err_set(e, ERR_INVALID, "a resume file needs a safe relative 'path' and Base64 'data'");
	if (!(bytes = b64_decode(data, strlen(data), &len, e)))
		return -1;
	if (__builtin_add_overflow(*total, len, total) || *total > limits.archive_bytes) {
		err_set(e, ERR_TOO_LARGE, "the submitted files exceed %llu bytes (limits.archive_bytes)",
			(unsigned long long)limits.archive_bytes);
		goto out;
	}
	if (!(dir = strdup(rel))) {
		err_set(e, ERR_INTERNAL, "out of memory");
		goto out;
	}
	if ((slash = strrchr(dir, '/'))) {
		*slash = 0;
		if (path_mkdirs_beneath(workdir, dir, 0700, e))
			goto out;
	}
	rc = path_write_beneath(workdir, rel, bytes, len, 0600, e);
out:
	free(dir);
	free(bytes);
	return rc;
}

int queue_resume_files(const char *workdir, json_t *args, struct err *e)
{
	json_t *files = json_object_get(args, RESUME_FILES_KEY), *f;
	uint64_t total = 0;
	size_t i;

	if (!files)
		return 0;
	if (!json_is_array(files))
		return err_set(e, ERR_INVALID, "'%s' must be a list of files", RESUME_FILES_KEY);
	json_array_foreach(files, i, f)
	{
		if (write_one(workdir, f, &total, e))
			return -1;
	}
	json_object_del(args, RESUME_FILES_KEY);
	return 0;
}
