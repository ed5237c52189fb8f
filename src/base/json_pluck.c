/* Plucking secret strings out of JSON text before parsing (json_pluck.h).  A small
 * scanner of RFC 8259 syntax: one pass finds the spans of the wanted values (and checks
 * the whole object), then they are decoded and blanked. */
#include "base/json_pluck.h"

#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#define MAX_DEPTH 512
#define MAX_SPANS 16

struct scan {
	const char *p, *end;
};

struct span {
	size_t want; /* index into want[] */
	const char *start, *stop; /* the string token, quotes included */
};

static void ws(struct scan *s)
{
	while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
		s->p++;
}

static int hex4(const char *p, unsigned *out)
{
	unsigned v = 0;

	for (int i = 0; i < 4; i++) {
		char c = p[i];
		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= (unsigned)(c - '0');
		else if (c >= 'a' && c <= 'f')
			v |= (unsigned)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			v |= (unsigned)(c - 'A' + 10);
		else
			return -1;
	}
	*out = v;
	return 0;
}

/* Skips a string token at s->p (which is '"'); -1 when malformed. */
static int skip_string(struct scan *s)
{
	s->p++;
	while (s->p < s->end) {
		unsigned char c = (unsigned char)*s->p;
		if (c == '"') {
			s->p++;
			return 0;
		}
		if (c < 0x20)
			return -1;
		if (c == '\\') {
			if (s->end - s->p < 2)
				return -1;
			if (s->p[1] == 'u') {
				unsigned u;
				if (s->end - s->p < 6 || hex4(s->p + 2, &u))
					return -1;
				s->p += 6;
				continue;
			}
			if (!strchr("\"\\/bfnrt", s->p[1]) || s->p[1] == '\0')
				return -1;
			s->p += 2;
			continue;
		}
		s->p++;
	}
	return -1;
}

/* Decodes the string token [start, stop) into out (room for its length + 1). */
static size_t decode(const char *start, const char *stop, char *out)
{
	const char *p = start + 1, *end = stop - 1;
	size_t n = 0;

	while (p < end) {
		unsigned cp;

		if (*p != '\\') {
			out[n++] = *p++;
			continue;
		}
		p++;
		switch (*p) {
		case 'b': out[n++] = '\b'; p++; continue;
		case 'f': out[n++] = '\f'; p++; continue;
		case 'n': out[n++] = '\n'; p++; continue;
		case 'r': out[n++] = '\r'; p++; continue;
		case 't': out[n++] = '\t'; p++; continue;
		case 'u': break;
		default: out[n++] = *p++; continue;
		}
		(void)hex4(p + 1, &cp);
		p += 5;
		if (cp >= 0xD800 && cp <= 0xDBFF && end - p >= 6 && p[0] == '\\' && p[1] == 'u') {
			unsigned lo;
			if (hex4(p + 2, &lo) == 0 && lo >= 0xDC00 && lo <= 0xDFFF) {
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
				p += 6;
			}
		}
		if (cp >= 0xD800 && cp <= 0xDFFF)
			cp = 0xFFFD; /* a lone surrogate: the replacement character */
		if (cp < 0x80) {
			out[n++] = (char)cp;
		} else if (cp < 0x800) {
			out[n++] = (char)(0xC0 | (cp >> 6));
			out[n++] = (char)(0x80 | (cp & 0x3F));
		} else if (cp < 0x10000) {
			out[n++] = (char)(0xE0 | (cp >> 12));
			out[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
			out[n++] = (char)(0x80 | (cp & 0x3F));
		} else {
			out[n++] = (char)(0xF0 | (cp >> 18));
			out[n++] = (char)(0x80 | ((cp >> 12) & 0x3F));
			out[n++] = (char)(0x80 | ((cp >> 6) & 0x3F));
			out[n++] = (char)(0x80 | (cp & 0x3F));
		}
	}
	out[n] = '\0';
	return n;
}

static int skip_value(struct scan *s, int depth);

static int skip_container(struct scan *s, char close, int depth)
{
	s->p++;
	ws(s);
	if (s->p < s->end && *s->p == close) {
		s->p++;
		return 0;
	}
	for (;;) {
		if (close == '}') {
			if (s->p >= s->end || *s->p != '"' || skip_string(s))
				return -1;
			ws(s);
			if (s->p >= s->end || *s->p != ':')
				return -1;
			s->p++;
			ws(s);
		}
		if (skip_value(s, depth + 1))
			return -1;
		ws(s);
		if (s->p < s->end && *s->p == ',') {
			s->p++;
			ws(s);
			continue;
		}
		if (s->p < s->end && *s->p == close) {
			s->p++;
			return 0;
		}
		return -1;
	}
}

static int skip_literal(struct scan *s)
{
	static const char *const lits[] = {"true", "false", "null"};

	for (size_t i = 0; i < 3; i++) {
		size_t n = strlen(lits[i]);
		if ((size_t)(s->end - s->p) >= n && memcmp(s->p, lits[i], n) == 0) {
			s->p += n;
			return 0;
		}
	}
	if (*s->p == '-' || (*s->p >= '0' && *s->p <= '9')) {
		while (s->p < s->end && strchr("+-0123456789.eE", *s->p) && *s->p)
			s->p++;
		return 0;
	}
	return -1;
}

static int skip_value(struct scan *s, int depth)
{
	if (depth > MAX_DEPTH || s->p >= s->end)
		return -1;
	if (*s->p == '"')
		return skip_string(s);
	if (*s->p == '{')
		return skip_container(s, '}', depth);
	if (*s->p == '[')
		return skip_container(s, ']', depth);
	return skip_literal(s);
}

/* Which wanted key the string token [a, b) names (keys are compared decoded). */
static int match_key(const char *a, const char *b, const struct json_plucked *want, size_t n_want)
{
	char buf[128];

	if ((size_t)(b - a) > sizeof buf - 1)
		return -1;
	decode(a, b, buf);
	for (size_t i = 0; i < n_want; i++)
		if (strcmp(buf, want[i].key) == 0)
			return (int)i;
	return -1;
}

/* The spans of the wanted string values of the top-level object; -1 when malformed. */
static int find(const char *text, size_t len, const struct json_plucked *want, size_t n_want, struct span *spans,
		size_t *n_spans)
{
	struct scan s = {text, text + len};

	*n_spans = 0;
	ws(&s);
	if (s.p >= s.end || *s.p != '{')
		return -1;
	s.p++;
	ws(&s);
	if (s.p < s.end && *s.p == '}')
		return 0;
	for (;;) {
		const char *k0 = s.p, *v0;
		int w;

		if (s.p >= s.end || *s.p != '"' || skip_string(&s))
			return -1;
		w = match_key(k0, s.p, want, n_want);
		ws(&s);
		if (s.p >= s.end || *s.p != ':')
			return -1;
		s.p++;
		ws(&s);
		v0 = s.p;
		if (skip_value(&s, 1))
			return -1;
		if (w >= 0 && *v0 == '"') {
			if (*n_spans == MAX_SPANS)
				return -1;
			spans[(*n_spans)++] = (struct span){(size_t)w, v0, s.p};
		}
		ws(&s);
		if (s.p < s.end && *s.p == ',') {
			s.p++;
			ws(&s);
			continue;
		}
		if (s.p < s.end && *s.p == '}') {
			s.p++;
			ws(&s);
			return s.p == s.end ? 0 : -1;
		}
		return -1;
	}
}

static void free_value(struct json_plucked *w)
{
	if (w->value) {
		sodium_memzero(w->value, w->len);
		free(w->value);
	}
	w->value = NULL;
	w->len = 0;
}

int json_pluck(char *text, size_t len, struct json_plucked *want, size_t n_want)
{
	struct span spans[MAX_SPANS];
	size_t n;

	for (size_t i = 0; i < n_want; i++)
		want[i].value = NULL, want[i].len = 0;
	if (find(text, len, want, n_want, spans, &n))
		return -1;
	/* Decode first: a value with "\u0000" stays in the text, for the parser's own check. */
	for (size_t i = 0; i < n; i++) {
		struct json_plucked *w = &want[spans[i].want];
		char *v = malloc((size_t)(spans[i].stop - spans[i].start));

		if (!v) {
			json_pluck_free(want, n_want);
			return -1;
		}
		free_value(w); /* a repeated key: the last one wins */
		w->value = v;
		w->len = decode(spans[i].start, spans[i].stop, v);
		if (strlen(v) != w->len) {
			json_pluck_free(want, n_want);
			return -1;
		}
	}
	for (size_t i = 0; i < n; i++) {
		char *start = text + (spans[i].start - text);
		size_t tok = (size_t)(spans[i].stop - spans[i].start);

		start[0] = '"';
		start[1] = '"';
		memset(start + 2, ' ', tok - 2);
	}
	return 0;
}

void json_pluck_free(struct json_plucked *want, size_t n_want)
{
	for (size_t i = 0; i < n_want; i++)
		free_value(&want[i]);
}
