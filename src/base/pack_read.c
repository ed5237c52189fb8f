/* Reading one file out of a tar blob in memory (pack.h pack_tar_read). */
#include <stdlib.h>
#include <string.h>

#include "base/archive_api.h"
#include "base/memdir_blob.h"
#include "base/pack.h"

/* Moves a to the regular-file entry named name: 1 found (*size set), 0 not, < 0 error. */
static int seek_entry(struct archive *a, const char *name, int64_t *size, struct err *e)
{
	struct archive_entry *ae;

	for (;;) {
		int r = archive.read_next_header(a, &ae);
		if (r == ARCHIVE_EOF)
			return 0;
		if (r < ARCHIVE_WARN)
			return err_set(e, ERR_INTERNAL, "archive: not a valid tar blob: %s", archive.error_string(a));
		if (strcmp(archive.entry_pathname(ae) ? archive.entry_pathname(ae) : "", name) != 0)
			continue;
		if (archive.entry_filetype(ae) != AE_IFREG || archive.entry_hardlink(ae) || archive.entry_symlink(ae))
			return 0;
		*size = archive.entry_size_is_set(ae) ? archive.entry_size(ae) : -1;
		return 1;
	}
}

static struct archive *open_tar(const void *tar, size_t len, struct err *e)
{
	struct archive *a;

	if (archive_api_load(e) < 0)
		return NULL;
	if (!(a = archive.read_new())) {
		err_set(e, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	archive.read_support_format_tar(a);
	if (archive.read_open_memory(a, tar, len) != ARCHIVE_OK) {
		err_set(e, ERR_INTERNAL, "archive: not a valid tar blob: %s", archive.error_string(a));
		archive.read_free(a);
		return NULL;
	}
	return a;
}

static int read_all(struct archive *a, const char *name, int64_t size, size_t max, char **data, size_t *data_len,
		    struct err *e)
{
	size_t n = 0;
	char *buf;

	if (size < 0 || (uint64_t)size > max)
		return err_set(e, ERR_TOO_LARGE, "file '%.200s' is larger than %zu bytes", name, max);
	if (!(buf = malloc((size_t)size + 1)))
		return err_set(e, ERR_INTERNAL, "out of memory");
	while (n < (size_t)size) {
		la_ssize_t r = archive.read_data(a, buf + n, (size_t)size - n);
		if (r <= 0) {
			free(buf);
			return err_set(e, ERR_INTERNAL, "archive: cannot read '%.200s': %s", name,
				       r < 0 ? archive.error_string(a) : "truncated");
		}
		n += (size_t)r;
	}
	buf[n] = '\0';
	*data = buf;
	*data_len = n;
	return 0;
}

/* The same out of a memdir blob (memdir_blob.h): the stored files of a start. */
static int blob_read(const void *blob, size_t len, const char *name, size_t max, char **data, size_t *data_len,
		     struct err *e)
{
	struct memdir md;
	const struct memdir_entry *x;
	int rc;

	memdir_init(&md);
	rc = memdir_blob_unpack(blob, len, UINT64_MAX, &md, e);
	if (rc == 0 && (!(x = memdir_find(&md, name)) || x->dir))
		rc = err_set(e, ERR_NOT_FOUND, "no file '%.200s'", name);
	else if (rc == 0 && x->len > max)
		rc = err_set(e, ERR_TOO_LARGE, "file '%.200s' is larger than %zu bytes", name, max);
	else if (rc == 0 && !(*data = malloc(x->len + 1)))
		rc = err_set(e, ERR_INTERNAL, "out of memory");
	else if (rc == 0) {
		memcpy(*data, x->data, x->len);
		(*data)[x->len] = '\0';
		*data_len = x->len;
	}
	memdir_cleanup(&md);
	return rc;
}

int pack_tar_read(const void *tar, size_t len, const char *name, size_t max, char **data, size_t *data_len,
		  struct err *e)
{
	struct archive *a;
	int64_t size = -1;
	int rc;

	*data = NULL;
	*data_len = 0;
	if (memdir_blob_is(tar, len))
		return blob_read(tar, len, name, max, data, data_len, e);
	if (!(a = open_tar(tar, len, e)))
		return -1;
	rc = seek_entry(a, name, &size, e);
	if (rc == 0)
		rc = err_set(e, ERR_NOT_FOUND, "no file '%.200s'", name);
	else if (rc > 0)
		rc = read_all(a, name, size, max, data, data_len, e);
	archive.read_free(a);
	return rc;
}
