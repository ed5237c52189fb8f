/* A process's folder held in memory (memdir.h). */
#include "base/memdir.h"

#include <stdlib.h>
#include <string.h>

#include "base/b64.h"
#include "base/path.h"

void memdir_init(struct memdir *md)
{
	memset(md, 0, sizeof *md);
}

void memdir_cleanup(struct memdir *md)
{
	if (!md)
		return;
	for (size_t i = 0; i < md->n; i++) {
		free(md->v[i].path);
		free(md->v[i].data);
	}
	free(md->v);
	memset(md, 0, sizeof *md);
}

const struct memdir_entry *memdir_find(const struct memdir *md, const char *path)
{
	for (size_t i = 0; i < md->n; i++)
		if (strcmp(md->v[i].path, path) == 0)
			return &md->v[i];
	return NULL;
}

/* Whether path is in md as a file or a folder, named or implied by an entry below it. */
static bool taken(const struct memdir *md, const char *path)
{
	size_t n = strlen(path);

	for (size_t i = 0; i < md->n; i++) {
		const char *p = md->v[i].path;
		if (strncmp(p, path, n) == 0 && (p[n] == '\0' || p[n] == '/'))
			return true;
	}
	return false;
}

/* Whether a folder of path is a file in md. */
static bool under_file(const struct memdir *md, const char *path)
{
	for (size_t i = 0; i < md->n; i++) {
		size_t n = strlen(md->v[i].path);
		if (!md->v[i].dir && strncmp(path, md->v[i].path, n) == 0 && path[n] == '/')
			return true;
	}
	return false;
}

static struct memdir_entry *push(struct memdir *md, const char *path, struct err *e)
{
	struct memdir_entry *x;

	if (!path_is_safe_relative(path))
		return err_set(e, ERR_INVALID, "invalid file name: %.200s", path), NULL;
	if (md->n == md->cap) {
		size_t cap = md->cap ? md->cap * 2 : 8;
		struct memdir_entry *v = realloc(md->v, cap * sizeof *v);
		if (!v)
			return err_set(e, ERR_INTERNAL, "out of memory"), NULL;
		md->v = v;
		md->cap = cap;
	}
	x = &md->v[md->n];
	memset(x, 0, sizeof *x);
	if (!(x->path = strdup(path)))
		return err_set(e, ERR_INTERNAL, "out of memory"), NULL;
	md->n++;
	return x;
}

static int fill(struct memdir *md, struct memdir_entry *x, const void *data, size_t len, struct err *e)
{
	char *copy = malloc(len + 1);

	if (!copy)
		return err_set(e, ERR_INTERNAL, "out of memory");
	if (len)
		memcpy(copy, data, len);
	copy[len] = '\0';
	free(x->data);
	md->bytes -= x->len;
	x->data = copy;
	x->len = len;
	md->bytes += len;
	return 0;
}

int memdir_add(struct memdir *md, const char *path, const void *data, size_t len, bool exec, struct err *e)
{
	struct memdir_entry *x;

	if (taken(md, path) || under_file(md, path))
		return 0;
	if (!(x = push(md, path, e)))
		return -1;
	x->exec = exec;
	if (fill(md, x, data, len, e) == 0)
		return 0;
	free(x->path);
	md->n--;
	return -1;
}

int memdir_add_dir(struct memdir *md, const char *path, struct err *e)
{
	const struct memdir_entry *x = memdir_find(md, path);
	struct memdir_entry *d;

	if (x && x->dir)
		return 0;
	if (x || under_file(md, path))
		return err_set(e, ERR_INVALID, "'%.200s' is a file and a folder", path);
	if (!(d = push(md, path, e)))
		return -1;
	d->dir = true;
	return 0;
}

int memdir_set(struct memdir *md, const char *path, const void *data, size_t len, struct err *e)
{
	for (size_t i = 0; i < md->n; i++)
		if (!md->v[i].dir && strcmp(md->v[i].path, path) == 0)
			return fill(md, &md->v[i], data, len, e);
	if (taken(md, path) || under_file(md, path))
		return err_set(e, ERR_INVALID, "cannot write '%.200s': a folder is in the way", path);
	return memdir_add(md, path, data, len, false, e);
}

void memdir_drop(struct memdir *md, const char *path)
{
	size_t n = strlen(path), kept = 0;

	for (size_t i = 0; i < md->n; i++) {
		struct memdir_entry *x = &md->v[i];
		if (strncmp(x->path, path, n) == 0 && (x->path[n] == '\0' || x->path[n] == '/')) {
			md->bytes -= x->len;
			free(x->path);
			free(x->data);
			continue;
		}
		md->v[kept++] = *x;
	}
	md->n = kept;
}

/* The folder of a file, made beneath dir as pack_restore makes it (0700). */
static int parent_dirs(const char *dir, const char *path, struct err *e)
{
	const char *slash = strrchr(path, '/');
	char parent[4096];
	size_t n;

	if (!slash)
		return 0;
	n = (size_t)(slash - path);
	if (n >= sizeof parent)
		return err_set(e, ERR_INVALID, "path too long: %.200s", path);
	memcpy(parent, path, n);
	parent[n] = '\0';
	return path_mkdirs_beneath(dir, parent, 0700, e);
}

int memdir_write(const struct memdir *md, const char *dir, struct err *e)
{
	for (size_t i = 0; i < md->n; i++) {
		const struct memdir_entry *x = &md->v[i];
		int rc = x->dir ? path_mkdirs_beneath(dir, x->path, 0700, e) : parent_dirs(dir, x->path, e);
		if (rc == 0 && !x->dir)
			rc = path_write_beneath(dir, x->path, x->data, x->len, x->exec ? 0700 : 0600, e);
		if (rc)
			return -1;
	}
	return 0;
}

json_t *memdir_to_json(const struct memdir *md)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < md->n; i++) {
		const struct memdir_entry *x = &md->v[i];
		char *b = x->dir ? NULL : b64_encode(x->data, x->len, B64_STD);
		json_t *o = x->dir ? json_pack("{s:s, s:b}", "path", x->path, "dir", 1)
				   : b ? json_pack("{s:s, s:s}", "path", x->path, "data", b) : NULL;
		free(b);
		if (o && x->exec)
			json_object_set_new(o, "exec", json_true());
		if (!o || json_array_append_new(a, o)) {
			json_decref(a);
			return NULL;
		}
	}
	return a;
}

int memdir_from_json(struct memdir *md, const json_t *v, struct err *e)
{
	size_t i, len;
	json_t *o;

	if (!json_is_array(v))
		return err_set(e, ERR_INVALID, "files: not an array");
	json_array_foreach(v, i, o)
	{
		const char *path = json_string_value(json_object_get(o, "path"));
		const char *b = json_string_value(json_object_get(o, "data"));
		unsigned char *data;
		int rc;

		if (!path)
			return err_set(e, ERR_INVALID, "files[%zu]: no path", i);
		if (json_is_true(json_object_get(o, "dir"))) {
			if (memdir_add_dir(md, path, e))
				return -1;
			continue;
		}
		if (!b || !(data = b64_decode(b, strlen(b), &len, e)))
			return err_set(e, ERR_INVALID, "files[%zu]: no Base64 data", i);
		rc = memdir_add(md, path, data, len, json_is_true(json_object_get(o, "exec")), e);
		free(data);
		if (rc)
			return -1;
	}
	return 0;
}
