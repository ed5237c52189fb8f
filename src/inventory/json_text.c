#include "inventory/json_text.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"

/* Larger objects or arrays in a filter are left to the tree. */
#define TEXT_MAX_MEMBERS 32
/* Deeper filters too (each level is one C frame). */
#define TEXT_MAX_DEPTH 32
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

static int value_at(struct scan *s, const json_t *b, int depth);

/* The members of b, wanted in the object at s->p ('{' seen): 1 when each is a member of it
 * whose value contains b's (the last of repeated keys counts, as jansson keeps it). */
static int object_at(struct scan *s, const json_t *b, int depth)
{
	struct want w[TEXT_MAX_MEMBERS];
	const char *key;
	size_t key_len, n = 0, i;
	const json_t *v;

	if (json_object_size(b) > TEXT_MAX_MEMBERS)
		return -1;
	json_object_keylen_foreach((json_t *)b, key, key_len, v)
	{
		w[n++] = (struct want){.key = key, .key_len = key_len, .value = v};
	}
	s->p++;
	if (!eat(s, '}')) {
		do {
			skip_ws(s);
			if (!plain_string(s, &key, &key_len) || !eat(s, ':'))
				return -1;
			for (i = 0; i < n && !(w[i].key_len == key_len && memcmp(w[i].key, key, key_len) == 0); i++)
				;
			if (i < n) {
				int in = value_at(s, w[i].value, depth + 1);
				if (in < 0)
					return -1;
				w[i].met = in;
			} else if (!skip_value(s)) {
				return -1;
			}
		} while (eat(s, ','));
		if (!eat(s, '}'))
			return -1;
	}
	for (i = 0; i < n; i++)
		if (!w[i].met)
			return 0;
	return 1;
}

/* The m values of want, each to be contained by some element of the array at s->p ('['
 * seen): each element is read again from its start for every value not yet met. */
static int array_at(struct scan *s, const json_t *const *want, size_t m, int depth)
{
	bool met[TEXT_MAX_MEMBERS] = {false};
	size_t left = m;

	if (m > TEXT_MAX_MEMBERS)
		return -1;
	s->p++;
	if (!eat(s, ']')) {
		do {
			struct scan from;
			skip_ws(s);
			from = *s;
			for (size_t j = 0; j < m; j++) {
				struct scan at = from;
				int in;
				if (met[j])
					continue;
				if ((in = value_at(&at, want[j], depth + 1)) < 0)
					return -1;
				met[j] = in;
				left -= (size_t)in;
				*s = at;
			}
			if (s->p == from.p && !skip_value(s)) /* nothing was left to look for */
				return -1;
		} while (eat(s, ','));
		if (!eat(s, ']'))
			return -1;
	}
	return left == 0;
}

/* Whether the value at s->p contains b (inv_json_contains' rules below the top: containers
 * only of the same type), reading past it: 1, 0, or -1 when the text cannot tell. */
static int value_at(struct scan *s, const json_t *b, int depth)
{
	bool obj = json_is_object(b), arr = json_is_array(b);

	if (depth > TEXT_MAX_DEPTH)
		return -1;
	skip_ws(s);
	if (s->p >= s->end)
		return -1;
	if (!obj && !arr)
		return value_eq(s, b);
	if (*s->p != (obj ? '{' : '['))
		return skip_value(s) ? 0 : -1;
	if (obj)
		return object_at(s, b, depth);
	{
		const json_t *want[TEXT_MAX_MEMBERS];
		size_t m = json_array_size(b);
		if (m > TEXT_MAX_MEMBERS)
			return -1;
		for (size_t i = 0; i < m; i++)
			want[i] = json_array_get(b, i);
		return array_at(s, want, m, depth);
	}
}

int inv_json_text_contains(const char *text, size_t len, const json_t *filter)
{
	struct scan s = {text, text + len};
	int in;

	skip_ws(&s);
	if (s.p < s.end && *s.p == '[' && !json_is_object(filter) && !json_is_array(filter))
		in = array_at(&s, &filter, 1, 0); /* a scalar is contained by an array holding it */
	else
		in = value_at(&s, filter, 0);
	if (in < 0)
		return -1;
	skip_ws(&s);
	return s.p == s.end ? in : -1;
}
