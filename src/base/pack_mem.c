/* A folder held in memory and a payload blob, both ways (pack.h pack_files, pack_tar_files). */
#include <stdlib.h>
#include <string.h>

#include "base/archive_api.h"
#include "base/memdir_blob.h"
#include "base/pack.h"

/* The files of a start are stored as a memdir blob (memdir_blob.h), not a tar: the tar
 * of a hello world's two files was 3,072 bytes, which SQLite keeps on an overflow page. */
int pack_files(const struct memdir *md, uint64_t max_bytes, void **out, size_t *out_len, struct err *e)
{
	return memdir_blob_pack(md, max_bytes, out, out_len, e);
}

/* The content of the current entry (size bytes) into a new buffer. */
static char *read_data(struct archive *a, const char *name, size_t size, struct err *e)
{
	char *data = malloc(size + 1);
	size_t n = 0;

	if (!data)
		return err_set(e, ERR_INTERNAL, "out of memory"), NULL;
	while (n < size) {
		la_ssize_t r = archive.read_data(a, data + n, size - n);
		if (r <= 0) {
			free(data);
			err_set(e, ERR_INVALID, "archive entry '%.200s': cannot read: %s", name,
				r < 0 ? archive.error_string(a) : "truncated");
			return NULL;
		}
		n += (size_t)r;
	}
	data[size] = '\0';
	return data;
}

/* One entry of the blob into md. */
static int take(struct archive *a, struct archive_entry *ae, uint64_t max_bytes, struct memdir *md, struct err *e)
{
	const char *name = archive.entry_pathname(ae);
	char rel[4096];
	size_t len = name ? strlen(name) : 0;
	la_int64_t size = archive.entry_size_is_set(ae) ? archive.entry_size(ae) : -1;
	char *data;
	int rc;

	if (len && name[len - 1] == '/')
		len--;
	if (!len || len >= sizeof rel)
		return err_set(e, ERR_INVALID, "archive entry '%.200s' is not allowed: bad name", name ? name : "");
	memcpy(rel, name, len);
	rel[len] = '\0';
	if (archive.entry_hardlink(ae) || archive.entry_symlink(ae))
		return err_set(e, ERR_INVALID, "archive entry '%.200s' is not allowed: a link", rel);
	if (archive.entry_filetype(ae) == AE_IFDIR)
		return memdir_add_dir(md, rel, e);
	if (archive.entry_filetype(ae) != AE_IFREG)
		return err_set(e, ERR_INVALID, "archive entry '%.200s' is not allowed: not a file", rel);
	if (size < 0 || (uint64_t)size > max_bytes - md->bytes)
		return err_set(e, ERR_TOO_LARGE, "more than %llu bytes", (unsigned long long)max_bytes);
	if (!(data = read_data(a, rel, (size_t)size, e)))
		return -1;
	rc = memdir_add(md, rel, data, (size_t)size, (archive.entry_perm(ae) & 0100) != 0, e);
	free(data);
	return rc;
}

int pack_tar_files(const void *tar, size_t len, uint64_t max_bytes, struct memdir *md, struct err *e)
{
	struct archive *a;
	struct archive_entry *ae;
	int rc = 0;

	if (memdir_blob_is(tar, len))
		return memdir_blob_unpack(tar, len, max_bytes, md, e);
	if (archive_api_load(e) < 0)
		return -1;
	if (!(a = archive.read_new()))
		return err_set(e, ERR_INTERNAL, "out of memory");
	archive.read_support_format_tar(a);
	if (archive.read_open_memory(a, tar, len) != ARCHIVE_OK)
		rc = err_set(e, ERR_INVALID, "archive: not a valid tar blob: %s", archive.error_string(a));
	while (rc == 0) {
		int r = archive.read_next_header(a, &ae);
		if (r == ARCHIVE_EOF)
			break;
		if (r < ARCHIVE_WARN)
			rc = err_set(e, ERR_INVALID, "archive: not a valid tar blob: %s", archive.error_string(a));
		else
			rc = take(a, ae, max_bytes, md, e);
	}
	archive.read_free(a);
	return rc;
}
