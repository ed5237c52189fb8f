#include "base/jsonx.h"

#include "base/json_dump.h"
#include "base/json_fast.h"

#include <stdlib.h>
#include <string.h>

static size_t depth_of(const json_t *v, size_t limit)
{
	size_t max = 0, d;
	const char *k;
	json_t *child;
	size_t i;

	if (limit == 0)
		return 1;
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, child)
		{
			d = depth_of(child, limit - 1);
			if (d > max)
				max = d;
		}
		return max + 1;
	}
	if (json_is_array(v)) {
		json_array_foreach(v, i, child)
		{
			d = depth_of(child, limit - 1);
			if (d > max)
				max = d;
		}
		return max + 1;
	}
	return 0;
}

json_t *jsonx_parse(const char *p, size_t len, size_t max_depth, struct err *e)
{
	json_error_t je;
	json_t *v = json_fast_parse(p, len, max_depth);

	/* the fast reader answers only what it decides exactly; jansson the rest */
	if (v)
		return v;
	v = json_loadb(p, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);
	if (!v) {
		err_set(e, ERR_INVALID, "invalid JSON at line %d, column %d: %s", je.line, je.column, je.text);
		return NULL;
	}
	if (depth_of(v, max_depth + 1) > max_depth) {
		json_decref(v);
		err_set(e, ERR_INVALID, "JSON nested deeper than the limit of %zu levels", max_depth);
		return NULL;
	}
	return v;
}

static int get(json_t *obj, const char *key, bool required, json_t **out, struct err *e)
{
	json_t *v = json_is_object(obj) ? json_object_get(obj, key) : NULL;

	if (!v || json_is_null(v)) {
		*out = NULL;
		return required ? err_set(e, ERR_INVALID, "'%s' is required", key) : 0;
	}
	*out = v;
	return 0;
}

int jsonx_str(json_t *obj, const char *key, bool required, const char **out, struct err *e)
{
	json_t *v;
	int rc = get(obj, key, required, &v, e);

	if (rc || !v)
		return rc;
	if (!json_is_string(v))
		return err_set(e, ERR_INVALID, "'%s' must be a string", key);
	*out = json_string_value(v);
	return 0;
}

int jsonx_bool(json_t *obj, const char *key, bool required, bool *out, struct err *e)
{
	json_t *v;
	int rc = get(obj, key, required, &v, e);

	if (rc || !v)
		return rc;
	if (!json_is_boolean(v))
		return err_set(e, ERR_INVALID, "'%s' must be a boolean", key);
	*out = json_is_true(v);
	return 0;
}

int jsonx_int(json_t *obj, const char *key, bool required, int64_t *out, struct err *e)
{
	json_t *v;
	int rc = get(obj, key, required, &v, e);

	if (rc || !v)
		return rc;
	if (!json_is_integer(v))
		return err_set(e, ERR_INVALID, "'%s' must be an integer", key);
	*out = json_integer_value(v);
	return 0;
}

int jsonx_obj(json_t *obj, const char *key, bool required, json_t **out, struct err *e)
{
	json_t *v;
	int rc = get(obj, key, required, &v, e);

	if (rc || !v)
		return rc;
	if (!json_is_object(v))
		return err_set(e, ERR_INVALID, "'%s' must be an object", key);
	*out = v;
	return 0;
}

int jsonx_arr(json_t *obj, const char *key, bool required, json_t **out, struct err *e)
{
	json_t *v;
	int rc = get(obj, key, required, &v, e);

	if (rc || !v)
		return rc;
	if (!json_is_array(v))
		return err_set(e, ERR_INVALID, "'%s' must be an array", key);
	*out = v;
	return 0;
}

char *jsonx_dump(const json_t *v)
{
	return json_dump_compact(v, true); /* = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY) */
}

void jsonx_set_opt_str(json_t *obj, const char *key, const char *value)
{
	if (value)
		json_object_set_new(obj, key, json_string(value));
}

json_t *jsonx_string_lossy(const char *s)
{
	json_t *v = json_string(s);
	char *copy;
	size_t n;

	if (v)
		return v;
	n = strlen(s);
	copy = malloc(n + 1);
	if (!copy)
		abort();
	for (size_t i = 0; i <= n; i++)
		copy[i] = (s[i] & 0x80) ? '?' : s[i];
	v = json_string(copy);
	free(copy);
	return v;
}

static long strip_string(json_t *v)
{
	const char *s = json_string_value(v);
	size_t n = json_string_length(v), k = 0;
	char *copy;

	if (strlen(s) == n)
		return 0;
	if (!(copy = malloc(n)))
		return -1;
	for (size_t i = 0; i < n; i++)
		if (s[i])
			copy[k++] = s[i];
	k = json_string_setn(v, copy, k) == 0;
	free(copy);
	return k ? 1 : -1;
}

long jsonx_strip_nul(json_t *v)
{
	const char *key;
	json_t *item;
	long n = 0, k;
	size_t i;

	switch (json_typeof(v)) {
	case JSON_STRING:
		return strip_string(v);
	case JSON_OBJECT:
		json_object_foreach(v, key, item)
		{
			if ((k = jsonx_strip_nul(item)) < 0)
				return -1;
			n += k;
		}
		return n;
	case JSON_ARRAY:
		json_array_foreach(v, i, item)
		{
			if ((k = jsonx_strip_nul(item)) < 0)
				return -1;
			n += k;
		}
		return n;
	default:
		return 0;
	}
}

const char *jsonx_type_name(const json_t *v)
{
	switch (v ? json_typeof(v) : JSON_NULL) {
	case JSON_OBJECT:
		return "object";
	case JSON_ARRAY:
		return "array";
	case JSON_STRING:
		return "string";
	case JSON_INTEGER:
	case JSON_REAL:
		return "number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "boolean";
	default:
		return "null";
	}
}
