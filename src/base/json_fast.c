#include "base/json_fast.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"

/* jansson refuses values nested deeper than 2048; staying well under it means a text we
 * accept is never one jansson would refuse for its depth, and bounds our recursion. */
#define FAST_MAX_DEPTH 1024
/* Longer reals (rare) are left to jansson rather than copied to the heap for strtod. */
#define REAL_MAX_LEN 64

struct jp {
	const unsigned char *p, *end;
	size_t max_depth;
	char *buf; /* the decoded text of the last string that had escapes */
	size_t buf_len, buf_cap;
};

static void skip_ws(struct jp *j)
{
	while (j->p < j->end && (*j->p == ' ' || *j->p == '\n' || *j->p == '\r' || *j->p == '\t'))
		j->p++;
}

static bool is_digit(const struct jp *j, const unsigned char *q)
{
	return q < j->end && *q >= '0' && *q <= '9';
}


static bool buf_put(struct jp *j, const void *s, size_t n)
{
	size_t cap = j->buf_cap ? j->buf_cap : 64;
	char *b;

	if (n == 0)
		return true;
	if (j->buf_cap - j->buf_len < n) {
		while (cap - j->buf_len < n) {
			if (cap > SIZE_MAX / 2)
				return false;
			cap *= 2;
		}
		if (!(b = realloc(j->buf, cap)))
			return false;
		j->buf = b;
		j->buf_cap = cap;
	}
	memcpy(j->buf + j->buf_len, s, n);
	j->buf_len += n;
	return true;
}

/* The four hex digits at s as a number, or -1. */
static int32_t hex4(const unsigned char *s, const unsigned char *end)
{
	int32_t v = 0;

	if (end - s < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		unsigned c = s[i], l = c | 0x20;

		if (c >= '0' && c <= '9')
			v = v * 16 + (int32_t)(c - '0');
		else if (l >= 'a' && l <= 'f')
			v = v * 16 + (int32_t)(l - 'a' + 10);
		else
			return -1;
	}
	return v;
}

static size_t utf8_encode(uint32_t u, unsigned char *out)
{
	if (u < 0x80) {
		out[0] = (unsigned char)u;
		return 1;
	}
	if (u < 0x800) {
		out[0] = (unsigned char)(0xC0 | (u >> 6));
		out[1] = (unsigned char)(0x80 | (u & 0x3F));
		return 2;
	}
	if (u < 0x10000) {
		out[0] = (unsigned char)(0xE0 | (u >> 12));
		out[1] = (unsigned char)(0x80 | ((u >> 6) & 0x3F));
		out[2] = (unsigned char)(0x80 | (u & 0x3F));
		return 3;
	}
	out[0] = (unsigned char)(0xF0 | (u >> 18));
	out[1] = (unsigned char)(0x80 | ((u >> 12) & 0x3F));
	out[2] = (unsigned char)(0x80 | ((u >> 6) & 0x3F));
	out[3] = (unsigned char)(0x80 | (u & 0x3F));
	return 4;
}

/* A \u escape's four hex digits (j->p after the 'u'), a surrogate pair in two of them; a lone surrogate fails. */
static bool unescape_u(struct jp *j, bool *has_nul)
{
	unsigned char out[4];
	int32_t u = hex4(j->p, j->end), lo;

	if (u < 0 || (u >= 0xDC00 && u <= 0xDFFF))
		return false;
	j->p += 4;
	if (u >= 0xD800 && u <= 0xDBFF) {
		if (j->end - j->p < 6 || j->p[0] != '\\' || j->p[1] != 'u')
			return false;
		lo = hex4(j->p + 2, j->end);
		if (lo < 0xDC00 || lo > 0xDFFF)
			return false;
		j->p += 6;
		u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
	}
	if (u == 0)
		*has_nul = true;
	return buf_put(j, out, utf8_encode((uint32_t)u, out));
}

/* One escape, j->p after the backslash, decoded onto j->buf. */
static bool unescape(struct jp *j, bool *has_nul)
{
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
	const char *at;

	if (j->p >= j->end)
		return false;
	if (*j->p == 'u') {
		j->p++;
		return unescape_u(j, has_nul);
	}
	if (*j->p == '\0' || !(at = strchr(from, *j->p)))
		return false;
	j->p++;
	return buf_put(j, &to[at - from], 1);
}

/* A string, j->p after its opening quote.  *s is borrowed from the text, or from j->buf
 * when it had escapes (until the next string). */
static bool parse_string(struct jp *j, const char **s, size_t *n, bool *has_nul)
{
	const unsigned char *start = j->p, *q = j->p;
	bool escaped = false;
	size_t k;

	j->buf_len = 0;
	*has_nul = false;
	for (;;) {
		while (q < j->end && *q >= 0x20 && *q < 0x80 && *q != '"' && *q != '\\')
			q++;
		if (q >= j->end || *q < 0x20)
			return false;
		if (*q == '"')
			break;
		if (*q >= 0x80) {
			if (!(k = utf8_valid_len(q, j->end)))
				return false;
			q += k;
			continue;
		}
		if (!buf_put(j, start, (size_t)(q - start)))
			return false;
		j->p = q + 1;
		if (!unescape(j, has_nul))
			return false;
		start = q = j->p;
		escaped = true;
	}
	if (escaped) {
		if (!buf_put(j, start, (size_t)(q - start)))
			return false;
		*s = j->buf;
		*n = j->buf_len;
	} else {
		*s = (const char *)start;
		*n = (size_t)(q - start);
	}
	j->p = q + 1;
	return true;
}

/* A real, start..q its integer part: the grammar of jansson's lexer, strtod's value. */
static json_t *parse_real(struct jp *j, const unsigned char *start, const unsigned char *q)
{
	char text[REAL_MAX_LEN], *end;
	size_t len;
	double d;

	if (*q == '.') {
		if (!is_digit(j, ++q))
			return NULL;
		while (is_digit(j, q))
			q++;
	}
	if (q < j->end && (*q == 'e' || *q == 'E')) {
		q++;
		if (q < j->end && (*q == '+' || *q == '-'))
			q++;
		if (!is_digit(j, q))
			return NULL;
		while (is_digit(j, q))
			q++;
	}
	len = (size_t)(q - start);
	if (len >= sizeof(text))
		return NULL;
	memcpy(text, start, len);
	text[len] = '\0';
	errno = 0;
	d = strtod(text, &end);
	/* a decimal comma locale stops strtod early: jansson knows how to convert then */
	if (end != text + len || ((d == HUGE_VAL || d == -HUGE_VAL) && errno == ERANGE))
		return NULL;
	j->p = q;
	return json_real(d);
}

static json_t *parse_number(struct jp *j)
{
	const unsigned char *q = j->p, *digits;
	bool neg = false;
	uint64_t v = 0;

	if (*q == '-') {
		neg = true;
		q++;
	}
	digits = q;
	if (q < j->end && *q == '0')
		q++;
	else
		while (is_digit(j, q))
			q++;
	if (q == digits)
		return NULL;
	if (q < j->end && (*q == '.' || *q == 'e' || *q == 'E'))
		return parse_real(j, j->p, q);
	/* 19 digits fit in uint64; more are out of int64's range (no leading zeros) */
	if (q - digits > 19)
		return NULL;
	for (const unsigned char *d = digits; d < q; d++)
		v = v * 10 + (uint64_t)(*d - '0');
	if (v > (uint64_t)INT64_MAX + neg)
		return NULL;
	j->p = q;
	if (neg)
		return json_integer(v ? -(json_int_t)(v - 1) - 1 : 0);
	return json_integer((json_int_t)v);
}

static bool literal(struct jp *j, const char *word, size_t n)
{
	if ((size_t)(j->end - j->p) < n || memcmp(j->p, word, n) != 0)
		return false;
	j->p += n;
	return true;
}

static json_t *parse_value(struct jp *j, size_t depth);

/* Skips whitespace and a ',' (true) or the closing byte (false, *done); else fails. */
static bool next_item(struct jp *j, unsigned char close, bool *done)
{
	skip_ws(j);
	if (j->p >= j->end)
		return false;
	if (*j->p == ',') {
		j->p++;
		skip_ws(j);
		return true;
	}
	if (*j->p != close)
		return false;
	j->p++;
	*done = true;
	return true;
}

static json_t *parse_array(struct jp *j, size_t depth)
{
	json_t *a = json_array(), *v;
	bool done = false;

	j->p++;
	skip_ws(j);
	if (a && j->p < j->end && *j->p == ']') {
		j->p++;
		return a;
	}
	while (a && !done) {
		if (!(v = parse_value(j, depth)) || json_array_append_new(a, v) != 0 || !next_item(j, ']', &done))
			goto fail;
	}
	return a;
fail:
	json_decref(a);
	return NULL;
}

/* One "key": value into o. */
static bool parse_member(struct jp *j, json_t *o, size_t depth)
{
	const char *k;
	char *own = NULL;
	size_t n;
	bool nul, ok = false;
	json_t *v;

	if (j->p >= j->end || *j->p != '"')
		return false;
	j->p++;
	if (!parse_string(j, &k, &n, &nul) || nul)
		return false;
	if (k == j->buf) {
		/* the value's strings reuse j->buf */
		if (!(own = malloc(n)))
			return false;
		memcpy(own, k, n);
		k = own;
	}
	skip_ws(j);
	if (j->p < j->end && *j->p == ':') {
		j->p++;
		skip_ws(j);
		v = parse_value(j, depth);
		ok = v && json_object_setn_new_nocheck(o, k, n, v) == 0;
	}
	free(own);
	return ok;
}

static json_t *parse_object(struct jp *j, size_t depth)
{
	json_t *o = json_object();
	bool done = false;

	j->p++;
	skip_ws(j);
	if (o && j->p < j->end && *j->p == '}') {
		j->p++;
		return o;
	}
	while (o && !done) {
		if (!parse_member(j, o, depth) || !next_item(j, '}', &done))
			goto fail;
	}
	return o;
fail:
	json_decref(o);
	return NULL;
}

/* A value at j->p inside depth containers. */
static json_t *parse_value(struct jp *j, size_t depth)
{
	const char *s;
	size_t n;
	bool nul;

	if (j->p >= j->end)
		return NULL;
	switch (*j->p) {
	case '[':
		return depth < j->max_depth ? parse_array(j, depth + 1) : NULL;
	case '{':
		return depth < j->max_depth ? parse_object(j, depth + 1) : NULL;
	case '"':
		j->p++;
		return parse_string(j, &s, &n, &nul) ? json_stringn_nocheck(s, n) : NULL;
	case 't':
		return literal(j, "true", 4) ? json_true() : NULL;
	case 'f':
		return literal(j, "false", 5) ? json_false() : NULL;
	case 'n':
		return literal(j, "null", 4) ? json_null() : NULL;
	default:
		return parse_number(j);
	}
}

json_t *json_fast_parse(const char *p, size_t len, size_t max_depth)
{
	struct jp j = {.max_depth = max_depth < FAST_MAX_DEPTH ? max_depth : FAST_MAX_DEPTH};
	json_t *v;

	if (!p)
		return NULL;
	j.p = (const unsigned char *)p;
	j.end = j.p + len;
	skip_ws(&j);
	v = parse_value(&j, 0);
	skip_ws(&j);
	if (v && j.p != j.end) {
		json_decref(v);
		v = NULL;
	}
	free(j.buf);
	return v;
}
