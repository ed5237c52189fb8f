#ifndef ACCORD_TESTS_JSON_SAME_H
#define ACCORD_TESTS_JSON_SAME_H

/* The fast JSON reader's oracle, shared by tests/unit/test_jsonx_fast.c and the fuzz
 * target fuzz_jsonx.c: whatever json_fast_parse answers must be exactly what
 * json_loadb(JSON_DECODE_ANY | JSON_ALLOW_NUL) gives — same types, same integers, reals
 * bit for bit (so -0.0 is not 0.0), same string bytes, objects' keys in the same order —
 * and no deeper than the limit asked for. */
#include <stdbool.h>
#include <string.h>

#include <jansson.h>

#include "base/json_fast.h"

static size_t json_same_depth(const json_t *v)
{
	size_t max = 0, d, i;
	const char *k;
	json_t *c;

	if (json_is_object(v))
		json_object_foreach((json_t *)v, k, c)
		{
			if ((d = json_same_depth(c)) > max)
				max = d;
		}
	else if (json_is_array(v))
		json_array_foreach(v, i, c)
		{
			if ((d = json_same_depth(c)) > max)
				max = d;
		}
	else
		return 0;
	return max + 1;
}

static bool json_same(const json_t *a, const json_t *b)
{
	double x, y;
	size_t i;

	if (json_typeof(a) != json_typeof(b))
		return false;
	switch (json_typeof(a)) {
	case JSON_INTEGER:
		return json_integer_value(a) == json_integer_value(b);
	case JSON_REAL:
		x = json_real_value(a);
		y = json_real_value(b);
		return memcmp(&x, &y, sizeof x) == 0;
	case JSON_STRING:
		return json_string_length(a) == json_string_length(b) &&
		       memcmp(json_string_value(a), json_string_value(b), json_string_length(a)) == 0;
	case JSON_ARRAY:
		if (json_array_size(a) != json_array_size(b))
			return false;
		for (i = 0; i < json_array_size(a); i++)
			if (!json_same(json_array_get(a, i), json_array_get(b, i)))
				return false;
		return true;
	case JSON_OBJECT: {
		void *ia = json_object_iter((json_t *)a), *ib = json_object_iter((json_t *)b);

		if (json_object_size(a) != json_object_size(b))
			return false;
		for (; ia && ib;
		     ia = json_object_iter_next((json_t *)a, ia), ib = json_object_iter_next((json_t *)b, ib))
			if (strcmp(json_object_iter_key(ia), json_object_iter_key(ib)) != 0 ||
			    !json_same(json_object_iter_value(ia), json_object_iter_value(ib)))
				return false;
		return !ia && !ib;
	}
	default:
		return true;
	}
}

/* Whether the fast reader agrees with jansson on p (*handled: it answered, not NULL). */
static bool json_fast_agrees(const char *p, size_t len, size_t max_depth, bool *handled)
{
	json_t *fast = json_fast_parse(p, len, max_depth), *ref;
	bool ok;

	*handled = fast != NULL;
	if (!fast)
		return true;
	ref = json_loadb(p, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	ok = ref && json_same(fast, ref) && json_same_depth(ref) <= max_depth;
	json_decref(fast);
	json_decref(ref);
	return ok;
}

#endif
