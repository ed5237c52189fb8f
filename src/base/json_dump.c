/* Compact JSON text of a jansson value, as json_dumps writes it (json_dump.h). */
#include "base/json_dump.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/utf8.h"

/* Deeper values (and loops, which never end) are left to jansson. */
#define DUMP_DEPTH 1024

/* The text so far (base/buf.h: growable, NUL-terminated). */
struct out {
	struct buf b;
	struct err e; /* out of memory: the caller's answer is jansson's */
};

static bool put(struct out *o, const char *s, size_t n)
{
	return buf_append(&o->b, s, n, &o->e) == 0;
}

/* A JSON string: '"' and '\' escaped, control characters as \b \f \n \r \t or \u00XX
 * (upper-case hex), everything else as it is (jansson without JSON_ENSURE_ASCII or
 * JSON_ESCAPE_SLASH). */
static bool put_string(struct out *o, const char *str, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	const unsigned char *s = (const unsigned char *)str;
	size_t run = 0, i = 0;

	if (buf_reserve(&o->b, n + 2, &o->e) || !put(o, "\"", 1))
		return false;
	while (i < n) {
		unsigned char c = s[i];
		char esc[6] = {'\\', 0, '0', '0', 0, 0};
		size_t elen = 2;

		if (c >= 0x20 && c != '"' && c != '\\') {
			size_t k = c < 0x80 ? 1 : utf8_valid_len(s + i, s + n);
			if (!k)
				return false;
			i += k;
			run += k;
			continue;
		}
		if (run && !put(o, str + i - run, run))
			return false;
		run = 0;
		switch (c) {
		case '"':
		case '\\':
			esc[1] = (char)c;
			break;
		case '\b':
			esc[1] = 'b';
			break;
		case '\f':
			esc[1] = 'f';
			break;
		case '\n':
			esc[1] = 'n';
			break;
		case '\r':
			esc[1] = 'r';
			break;
		case '\t':
			esc[1] = 't';
			break;
		default:
			esc[1] = 'u';
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 0xF];
			elen = 6;
		}
		if (!put(o, esc, elen))
			return false;
		i++;
	}
	if (run && !put(o, str + n - run, run))
		return false;
	return put(o, "\"", 1);
}

static bool put_integer(struct out *o, json_int_t v)
{
	char tmp[24];
	size_t i = sizeof tmp;
	/* the magnitude in unsigned arithmetic: INT64_MIN has no positive counterpart */
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;

	do {
		tmp[--i] = (char)('0' + u % 10);
		u /= 10;
	} while (u);
	if (v < 0)
		tmp[--i] = '-';
	return put(o, tmp + i, sizeof tmp - i);
}

static bool put_value(struct out *o, const json_t *v, unsigned depth);

static bool put_array(struct out *o, const json_t *v, unsigned depth)
{
	size_t n = json_array_size(v);

	if (!put(o, "[", 1))
		return false;
	for (size_t i = 0; i < n; i++)
		if ((i && !put(o, ",", 1)) || !put_value(o, json_array_get(v, i), depth + 1))
			return false;
	return put(o, "]", 1);
}

/* The keys in the object's own order, as jansson iterates them without JSON_SORT_KEYS. */
static bool put_object(struct out *o, const json_t *v, unsigned depth)
{
	json_t *obj = (json_t *)v; /* jansson's iterator takes no const */
	bool first = true;

	if (!put(o, "{", 1))
		return false;
	for (void *it = json_object_iter(obj); it; it = json_object_iter_next(obj, it)) {
		if ((!first && !put(o, ",", 1)) ||
		    !put_string(o, json_object_iter_key(it), json_object_iter_key_len(it)) || !put(o, ":", 1) ||
		    !put_value(o, json_object_iter_value(it), depth + 1))
			return false;
		first = false;
	}
	return put(o, "}", 1);
}

static bool put_value(struct out *o, const json_t *v, unsigned depth)
{
	if (!v || depth > DUMP_DEPTH)
		return false;
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return put_object(o, v, depth);
	case JSON_ARRAY:
		return put_array(o, v, depth);
	case JSON_STRING:
		return put_string(o, json_string_value(v), json_string_length(v));
	case JSON_INTEGER:
		return put_integer(o, json_integer_value(v));
	case JSON_TRUE:
		return put(o, "true", 4);
	case JSON_FALSE:
		return put(o, "false", 5);
	case JSON_NULL:
		return put(o, "null", 4);
	default: /* JSON_REAL: jansson's own formatting */
		return false;
	}
}

char *json_dump_compact(const json_t *v, bool any)
{
	struct out o;

	if (!v)
		return NULL;
	buf_init(&o.b, 0);
	if ((any || json_is_object(v) || json_is_array(v)) && put_value(&o, v, 0))
		return buf_detach(&o.b, NULL);
	buf_cleanup(&o.b);
	return json_dumps(v, JSON_COMPACT | (any ? JSON_ENCODE_ANY : 0));
}
