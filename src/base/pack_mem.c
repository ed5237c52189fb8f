/* A folder held in memory and a tar blob, both ways (pack.h pack_files, pack_tar_files). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/archive_api.h"
#include "base/buf.h"
#include "base/pack.h"

struct writer {
	struct archive *a;
	struct archive_entry *ae;
	struct buf out;
	time_t now;
	struct err *e;
	bool failed;
};

static la_ssize_t write_cb(struct archive *a, void *ctx, const void *p, size_t n)
{
	struct writer *w = ctx;

	(void)a;
	if (buf_append(&w->out, p, n, w->e) < 0) {
		w->failed = true;
		return -1;
	}
	return (la_ssize_t)n;
}

static int fail(struct writer *w, const char *rel)
{
	if (!w->failed)
		err_set(w->e, ERR_INTERNAL, "cannot pack '%.200s': %s", rel, archive.error_string(w->a));
	w->failed = true;
	return -1;
}

static int header(struct writer *w, const char *rel, bool dir, bool exec, size_t size)
{
	archive.entry_clear(w->ae);
	archive.entry_set_pathname(w->ae, rel);
	archive.entry_set_filetype(w->ae, dir ? AE_IFDIR : AE_IFREG);
	archive.entry_set_perm(w->ae, dir || exec ? 0700 : 0600);
	archive.entry_set_size(w->ae, dir ? 0 : (la_int64_t)size);
	archive.entry_set_mtime(w->ae, w->now, 0);
	return archive.write_header(w->a, w->ae) == ARCHIVE_OK ? 0 : fail(w, rel);
}

/* Whether folder path (len bytes of a path) was written before entry i. */
static bool dir_before(const struct memdir *md, size_t i, const char *path, size_t len)
{
	for (size_t j = 0; j < i; j++) {
		const char *p = md->v[j].path;
		if (strncmp(p, path, len) == 0 && (p[len] == '\0' || p[len] == '/'))
			return true;
	}
	return false;
}

/* The folders of entry i not yet in the blob, outermost first. */
static int parents(struct writer *w, const struct memdir *md, size_t i)
{
	const char *path = md->v[i].path;
	char dir[4096];

	for (const char *s = strchr(path, '/'); s; s = strchr(s + 1, '/')) {
		size_t len = (size_t)(s - path);
		if (len >= sizeof dir)
			return err_set(w->e, ERR_INVALID, "path too long: '%.200s'", path);
		if (dir_before(md, i, path, len))
			continue;
		memcpy(dir, path, len);
		dir[len] = '\0';
		if (header(w, dir, true, false, 0))
			return -1;
	}
	return 0;
}

static int write_all(struct writer *w, const struct memdir *md)
{
	for (size_t i = 0; i < md->n; i++) {
		const struct memdir_entry *x = &md->v[i];
		if (parents(w, md, i) || header(w, x->path, x->dir, x->exec, x->len))
			return -1;
		if (!x->dir && x->len && archive.write_data(w->a, x->data, x->len) != (la_ssize_t)x->len)
			return fail(w, x->path);
	}
	return archive.write_close(w->a) == ARCHIVE_OK ? 0 : fail(w, "");
}

int pack_files(const struct memdir *md, uint64_t max_bytes, void **out, size_t *out_len, struct err *e)
{
	struct writer w = {.now = time(NULL), .e = e};
	int rc = -1;

	*out = NULL;
	*out_len = 0;
	if (md->bytes > max_bytes)
		return err_set(e, ERR_TOO_LARGE, "folder content is more than %llu bytes",
			       (unsigned long long)max_bytes);
	if (archive_api_load(e) < 0)
		return -1;
	buf_init(&w.out, 0);
	w.a = archive.write_new();
	w.ae = archive.entry_new();
	if (!w.a || !w.ae) {
		err_set(e, ERR_INTERNAL, "out of memory");
		goto out;
	}
	if (archive.write_set_format_pax_restricted(w.a) != ARCHIVE_OK ||
	    archive.write_add_filter_none(w.a) != ARCHIVE_OK || archive.write_set_bytes_in_last_block(w.a, 1) ||
	    archive.write_open(w.a, &w, NULL, write_cb, NULL) != ARCHIVE_OK) {
		fail(&w, "");
		goto out;
	}
	if (write_all(&w, md) == 0) {
		*out = buf_detach(&w.out, out_len);
		rc = 0;
	}
out:
	if (w.a)
		archive.write_free(w.a);
	archive.entry_free(w.ae);
	buf_cleanup(&w.out);
	return rc;
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
