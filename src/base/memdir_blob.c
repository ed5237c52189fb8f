/* A folder held in memory as one compact blob (memdir_blob.h). */
#include "base/memdir_blob.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"

#define PATH_LEN_MAX 4095u /* as a tar entry of pack_mem.c could name */
#define FILE_LEN_MAX 0xffffffffu

bool memdir_blob_is(const void *p, size_t len)
{
	return len >= MEMDIR_BLOB_MAGIC_LEN && memcmp(p, MEMDIR_BLOB_MAGIC, MEMDIR_BLOB_MAGIC_LEN) == 0;
}

static void put_le(unsigned char *out, uint32_t v, int n)
{
	for (int i = 0; i < n; i++)
		out[i] = (unsigned char)(v >> (8 * i));
}

static uint32_t get_le(const unsigned char *in, int n)
{
	uint32_t v = 0;

	for (int i = 0; i < n; i++)
		v |= (uint32_t)in[i] << (8 * i);
	return v;
}

static int put_entry(struct buf *b, char kind, const char *path, size_t path_len, const struct memdir_entry *x,
		     struct err *e)
{
	unsigned char head[3], len[4];

	if (path_len > PATH_LEN_MAX)
		return err_set(e, ERR_INVALID, "path too long: '%.200s'", path);
	head[0] = (unsigned char)kind;
	put_le(head + 1, (uint32_t)path_len, 2);
	if (buf_append(b, head, sizeof head, e) || buf_append(b, path, path_len, e))
		return -1;
	if (!x)
		return 0;
	if (x->len > FILE_LEN_MAX)
		return err_set(e, ERR_TOO_LARGE, "file '%.200s' is larger than 4 GB", path);
	put_le(len, (uint32_t)x->len, 4);
	return buf_append(b, len, sizeof len, e) || buf_append(b, x->data, x->len, e) ? -1 : 0;
}

/* Whether folder path (len bytes of a path) came before entry i, named or as the folder of
 * an earlier entry. */
static bool dir_before(const struct memdir *md, size_t i, const char *path, size_t len)
{
	for (size_t j = 0; j < i; j++) {
		const char *p = md->v[j].path;
		if (strncmp(p, path, len) == 0 && (p[len] == '\0' || p[len] == '/'))
			return true;
	}
	return false;
}

/* Entry i, after those of its folders that came before no other entry. */
static int put_with_parents(struct buf *b, const struct memdir *md, size_t i, struct err *e)
{
	const struct memdir_entry *x = &md->v[i];

	for (const char *s = strchr(x->path, '/'); s; s = strchr(s + 1, '/')) {
		size_t len = (size_t)(s - x->path);
		if (!dir_before(md, i, x->path, len) && put_entry(b, 'd', x->path, len, NULL, e))
			return -1;
	}
	return put_entry(b, x->dir ? 'd' : x->exec ? 'x' : 'f', x->path, strlen(x->path), x->dir ? NULL : x, e);
}

int memdir_blob_pack(const struct memdir *md, uint64_t max_bytes, void **out, size_t *out_len, struct err *e)
{
	struct buf b;

	*out = NULL;
	*out_len = 0;
	if (md->bytes > max_bytes)
		return err_set(e, ERR_TOO_LARGE, "folder content is more than %llu bytes",
			       (unsigned long long)max_bytes);
	buf_init(&b, 0);
	if (buf_reserve(&b, MEMDIR_BLOB_MAGIC_LEN + md->bytes + md->n * 32, e) ||
	    buf_append(&b, MEMDIR_BLOB_MAGIC, MEMDIR_BLOB_MAGIC_LEN, e))
		goto fail;
	for (size_t i = 0; i < md->n; i++)
		if (put_with_parents(&b, md, i, e))
			goto fail;
	*out = buf_detach(&b, out_len);
	return 0;
fail:
	buf_cleanup(&b);
	return -1;
}

static int malformed(size_t at, const char *what, struct err *e)
{
	return err_set(e, ERR_INVALID, "payload blob malformed at byte %zu: %s", at, what);
}

int memdir_blob_unpack(const void *p, size_t len, uint64_t max_bytes, struct memdir *md, struct err *e)
{
	const unsigned char *in = p;
	size_t at = MEMDIR_BLOB_MAGIC_LEN;
	char path[PATH_LEN_MAX + 1];

	if (!memdir_blob_is(p, len))
		return malformed(0, "no magic", e);
	while (at < len) {
		unsigned char kind = in[at];
		size_t plen, flen = 0;
		const unsigned char *data = NULL;
		int rc;

		if (kind != 'd' && kind != 'f' && kind != 'x')
			return malformed(at, "unknown entry kind", e);
		if (len - at < 3)
			return malformed(at, "truncated entry", e);
		plen = get_le(in + at + 1, 2);
		at += 3;
		if (plen == 0 || plen > PATH_LEN_MAX || len - at < plen)
			return malformed(at,
					 plen == 0	       ? "empty path"
					 : plen > PATH_LEN_MAX ? "path too long"
							       : "truncated path",
					 e);
		memcpy(path, in + at, plen);
		path[plen] = '\0';
		if (strlen(path) != plen)
			return malformed(at, "NUL in a path", e);
		at += plen;
		if (kind == 'd') {
			if (memdir_add_dir(md, path, e))
				return -1;
			continue;
		}
		if (len - at < 4)
			return malformed(at, "truncated length", e);
		flen = get_le(in + at, 4);
		at += 4;
		if (len - at < flen)
			return malformed(at, "truncated content", e);
		data = in + at;
		at += flen;
		if (md->bytes > max_bytes || flen > max_bytes - md->bytes)
			return err_set(e, ERR_TOO_LARGE, "more than %llu bytes", (unsigned long long)max_bytes);
		if ((rc = memdir_add(md, path, data, flen, kind == 'x', e)))
			return rc;
	}
	return 0;
}
