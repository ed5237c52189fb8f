#include "store/inventory_keys.h"

#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/i64_list.h"
#include "base/str.h"

struct walk {
	struct buf path;
	inv_key_fn fn;
	void *ctx;
	struct err *e;
};

static int emit_key(struct walk *w, struct inv_key *k, char tag)
{
	size_t len = w->path.len;
	int rc;

	if (len + 2 > INV_KEY_PATH_MAX)
		return 0;
	if (buf_append_char(&w->path, ':', w->e) || buf_append_char(&w->path, tag, w->e))
		return -1;
	k->path = w->path.data;
	rc = w->fn(w->ctx, k, w->e);
	w->path.len = len;
	w->path.data[len] = '\0';
	return rc;
}

static int walk(struct walk *w, const json_t *v);

static int walk_object(struct walk *w, const json_t *v)
{
	const char *key;
	size_t key_len;
	const json_t *x;
	size_t len = w->path.len;
	int rc = 0;

	json_object_keylen_foreach((json_t *)v, key, key_len, x)
	{
		if (buf_append_char(&w->path, '.', w->e))
			return -1;
		for (size_t i = 0; i < key_len && w->path.len <= INV_KEY_PATH_MAX; i++) {
			char c = key[i];
			if ((c == '.' || c == '[' || c == '\\' || c == ':') && buf_append_char(&w->path, '\\', w->e))
				return -1;
			if (buf_append_char(&w->path, c, w->e))
				return -1;
		}
		if (w->path.len <= INV_KEY_PATH_MAX)
			rc = walk(w, x);
		w->path.len = len;
		w->path.data[len] = '\0';
		if (rc)
			return rc;
	}
	return 0;
}

static int walk(struct walk *w, const json_t *v)
{
	struct inv_key k = {0};
	size_t i, len = w->path.len;
	const json_t *x;
	int rc;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		k.kind = INV_KEY_OBJECT;
		k.empty = json_object_size(v) == 0;
		if (len > 0 && (rc = emit_key(w, &k, 'o')) != 0)
			return rc;
		return walk_object(w, v);
	case JSON_ARRAY:
		k.kind = INV_KEY_ARRAY;
		k.empty = json_array_size(v) == 0;
		if (len > 0 && (rc = emit_key(w, &k, 'a')) != 0)
			return rc;
		if (buf_append(&w->path, "[]", 2, w->e))
			return -1;
		json_array_foreach(v, i, x)
		{
			if ((rc = walk(w, x)) != 0)
				return rc;
		}
		w->path.len = len;
		w->path.data[len] = '\0';
		return 0;
	case JSON_STRING:
		if (json_string_length(v) > INV_KEY_STR_MAX || memchr(json_string_value(v), 0, json_string_length(v)))
			return 0;
		k.kind = INV_KEY_STRING;
		k.str = json_string_value(v);
		k.str_len = json_string_length(v);
		return emit_key(w, &k, 's');
	case JSON_INTEGER:
	case JSON_REAL:
		k.kind = INV_KEY_NUMBER;
		k.num = json_number_value(v);
		if (k.num == 0)
			k.num = 0; /* -0 and 0 are one value */
		if (str_fmt(k.num_text, sizeof(k.num_text), "%.17g", k.num))
			return err_set(w->e, ERR_INTERNAL, "number %g too long", k.num);
		return emit_key(w, &k, 'n');
	case JSON_TRUE:
	case JSON_FALSE:
		k.kind = INV_KEY_BOOL;
		k.boolean = json_is_true(v);
		return emit_key(w, &k, 'b');
	case JSON_NULL:
		k.kind = INV_KEY_NULL;
		return emit_key(w, &k, 'z');
	}
	return 0;
}

int inv_keys_each(const json_t *v, inv_key_fn fn, void *ctx, struct err *e)
{
	struct walk w = {.fn = fn, .ctx = ctx, .e = e};
	int rc;

	buf_init(&w.path, INV_KEY_PATH_MAX + 64);
	if (buf_reserve(&w.path, INV_KEY_PATH_MAX + 8, e))
		return -1;
	w.path.data[0] = '\0';
	rc = walk(&w, v);
	buf_cleanup(&w.path);
	return rc;
}

#define FNV_OFFSET 0xcbf29ce484222325ULL
#define FNV_PRIME 0x100000001b3ULL

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * FNV_PRIME;
	return h;
}

int64_t inv_key_hash(const struct inv_key *k)
{
	uint64_t h = fnv(FNV_OFFSET, k->path, strlen(k->path) + 1); /* the NUL ends the path */

	switch (k->kind) {
	case INV_KEY_STRING:
		h = fnv(h, k->str, k->str_len);
		break;
	case INV_KEY_NUMBER:
		h = fnv(h, k->num_text, strlen(k->num_text));
		break;
	case INV_KEY_BOOL:
		h = fnv(h, k->boolean ? "t" : "f", 1);
		break;
	default: /* null, object, array: the path's kind letter says it all */
		break;
	}
	/* FNV's low bits mix poorly: spread them (splitmix64's finalizer) */
	h = (h ^ (h >> 30)) * 0xbf58476d1ce4e5b9ULL;
	h = (h ^ (h >> 27)) * 0x94d049bb133111ebULL;
	h ^= h >> 31;
	return (int64_t)h;
}

static int add_hash(void *ctx, const struct inv_key *k, struct err *e)
{
	return i64_list_push(ctx, inv_key_hash(k), e);
}

int inv_keys_postings(const json_t *v, int64_t **out, size_t *n, struct err *e)
{
	struct i64_list hs = {0};

	*out = NULL;
	*n = 0;
	if (inv_keys_each(v, add_hash, &hs, e)) {
		i64_list_cleanup(&hs);
		return -1;
	}
	i64_list_sort(&hs);
	*out = hs.v;
	*n = hs.n;
	return 0;
}
