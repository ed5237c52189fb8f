#include "inventory/json_flat.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"

#define FLAT_MAX_KEYS 32
#define NUM_TEXT_MAX 64

struct scan {
	const char *p, *end;
};

struct want {
	const char *key;
	size_t key_len;
	const json_t *value;
	bool met;
};

static void skip_ws(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

static bool eat(struct scan *s, char c)
{
	skip_ws(s);
	if (s->p < s->end && *s->p == c) {
		s->p++;
		return true;
	}
	return false;
}

/* A string at s->p ('"' included) without escapes: its bytes.  False for an escape or an
 * unterminated string (the caller parses). */
static bool plain_string(struct scan *s, const char **out, size_t *len)
{
	const char *q;

	if (s->p >= s->end || *s->p != '"')
		return false;
	for (q = s->p + 1; q < s->end && *q != '"'; q++)
		if (*q == '\\' || (unsigned char)*q < 0x20)
			return false;
	if (q >= s->end)
		return false;
	*out = s->p + 1;
	*len = (size_t)(q - s->p - 1);
	s->p = q + 1;
	return true;
}

/* Skips one value of any kind (escapes allowed in strings); false at malformed text. */
static bool skip_value(struct scan *s)
{
	int depth = 0;

	skip_ws(s);
	do {
		if (s->p >= s->end)
			return false;
		switch (*s->p) {
		case '"':
			for (s->p++; s->p < s->end && *s->p != '"'; s->p++)
				if (*s->p == '\\')
					s->p++;
			if (s->p >= s->end)
				return false;
			s->p++;
			break;
		case '{':
		case '[':
			depth++;
			s->p++;
			break;
		case '}':
		case ']':
			if (--depth < 0)
				return false;
			s->p++;
			break;
		case ',':
		case ':':
			if (depth == 0)
				return false;
			s->p++;
			break;
		case '\0':
			return false;
		default: /* a number or a literal: up to the next delimiter */
			while (s->p < s->end && *s->p && !strchr(",:}] \t\n\r{[\"", *s->p))
				s->p++;
			break;
		}
		if (depth > 0)
			skip_ws(s);
	} while (depth > 0);
	return true;
}

/* The number at s->p compared with the filter's number v: 1 equal, 0 not, -1 cannot tell. */
static int number_eq(struct scan *s, const json_t *v)
{
	char buf[NUM_TEXT_MAX];
	size_t n = 0;
	bool real = false;
	char *endp;

	while (s->p < s->end && n < sizeof(buf) - 1 && *s->p && strchr("+-0123456789.eE", *s->p)) {
		real = real || *s->p == '.' || *s->p == 'e' || *s->p == 'E';
		buf[n++] = *s->p++;
	}
	buf[n] = '\0';
	if (n == 0 || n == sizeof(buf) - 1)
		return -1;
	if (!real) {
		int64_t x;
		struct err e;
		if (str_to_i64((struct str){buf, n}, INT64_MIN, INT64_MAX, &x, "number", &e))
			return -1; /* beyond int64: jansson refuses it, the caller reports that */
		if (json_is_integer(v))
			return x == json_integer_value(v);
		return (long double)x == (long double)json_real_value(v);
	}
	errno = 0;
	{
		double d = strtod(buf, &endp);
		if (errno || *endp)
			return -1;
		return (long double)d ==
		       (json_is_integer(v) ? (long double)json_integer_value(v) : (long double)json_real_value(v));
	}
}

static bool literal(struct scan *s, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(s->end - s->p) < n || memcmp(s->p, word, n) != 0)
		return false;
	s->p += n;
	return true;
}

/* The value at s->p compared with the filter's scalar v: 1 equal, 0 not, -1 cannot tell. */
static int value_eq(struct scan *s, const json_t *v)
{
	const char *str;
	size_t len;

	skip_ws(s);
	if (s->p >= s->end)
		return -1;
	switch (*s->p) {
	case '"':
		if (!plain_string(s, &str, &len))
			return -1;
		return json_is_string(v) && json_string_length(v) == len && memcmp(json_string_value(v), str, len) == 0;
	case '{':
	case '[':
		return skip_value(s) ? 0 : -1;
	case 't':
		return literal(s, "true") ? json_is_true(v) : -1;
	case 'f':
		return literal(s, "false") ? json_is_false(v) : -1;
	case 'n':
		return literal(s, "null") ? json_is_null(v) : -1;
	default:
		if (json_is_number(v))
			return number_eq(s, v);
		return skip_value(s) ? 0 : -1;
	}
}

static int flat_filter(const json_t *filter, struct want *w, size_t *n)
{
	const char *key;
	size_t key_len;
	const json_t *v;

	*n = 0;
	if (!json_is_object(filter) || json_object_size(filter) == 0 || json_object_size(filter) > FLAT_MAX_KEYS)
		return -1;
	json_object_keylen_foreach((json_t *)filter, key, key_len, v)
	{
		if (json_is_object(v) || json_is_array(v))
			return -1;
		w[(*n)++] = (struct want){.key = key, .key_len = key_len, .value = v};
	}
	return 0;
}

int inv_json_flat_contains(const char *text, size_t len, const json_t *filter)
{
	struct want w[FLAT_MAX_KEYS];
	struct scan s = {text, text + len};
	size_t n, i;

	if (flat_filter(filter, w, &n) || !eat(&s, '{'))
		return -1;
	if (!eat(&s, '}')) {
		do {
			const char *key;
			size_t key_len;
			skip_ws(&s);
			if (!plain_string(&s, &key, &key_len) || !eat(&s, ':'))
				return -1;
			for (i = 0; i < n && !(w[i].key_len == key_len && memcmp(w[i].key, key, key_len) == 0); i++)
				;
			if (i < n) { /* a duplicate key: the last one counts, as jansson keeps it */
				int eq = value_eq(&s, w[i].value);
				if (eq < 0)
					return -1;
				w[i].met = eq;
			} else if (!skip_value(&s)) {
				return -1;
			}
		} while (eat(&s, ','));
		if (!eat(&s, '}'))
			return -1;
	}
	skip_ws(&s);
	if (s.p != s.end)
		return -1;
	for (i = 0; i < n; i++)
		if (!w[i].met)
			return 0;
	return 1;
}
