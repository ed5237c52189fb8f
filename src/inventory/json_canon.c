#include "inventory/json_canon.h"

#include <string.h>

#define CANON_MAX_KEYS 64
#define CANON_MAX_DEPTH 64
#define CANON_MAX_DIGITS 18

struct canon {
	const unsigned char *p, *end;
};

/* One UTF-8 sequence of 2 to 4 bytes at c->p (its first byte >= 0x80): the shortest form of
 * a code point that is not a surrogate and not above U+10FFFF, as jansson accepts. */
static bool utf8_seq(struct canon *c)
{
	const unsigned char *p = c->p;
	unsigned cp, n;

	if (*p >= 0xC2 && *p <= 0xDF)
		n = 1, cp = *p & 0x1Fu;
	else if (*p >= 0xE0 && *p <= 0xEF)
		n = 2, cp = *p & 0x0Fu;
	else if (*p >= 0xF0 && *p <= 0xF4)
		n = 3, cp = *p & 0x07u;
	else
		return false;
	if ((size_t)(c->end - p) <= n)
		return false;
	for (unsigned i = 1; i <= n; i++) {
		if ((p[i] & 0xC0) != 0x80)
			return false;
		cp = (cp << 6) | (p[i] & 0x3Fu);
	}
	if ((n == 2 && cp < 0x800) || (n == 3 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return false;
	c->p += n + 1;
	return true;
}

/* A string at c->p ('"' included); *s, *len: its bytes between the quotes. */
static bool string(struct canon *c, const unsigned char **s, size_t *len)
{
	const unsigned char *start;

	if (c->p >= c->end || *c->p != '"')
		return false;
	start = ++c->p;
	while (c->p < c->end && *c->p != '"') {
		if (*c->p == '\\') {
			if (c->end - c->p < 2 || !strchr("\"\\bfnrt", c->p[1]) || c->p[1] == '\0')
				return false;
			c->p += 2;
		} else if (*c->p < 0x20) {
			return false;
		} else if (*c->p < 0x80) {
			c->p++;
		} else if (!utf8_seq(c)) {
			return false;
		}
	}
	if (c->p >= c->end)
		return false;
	*s = start;
	*len = (size_t)(c->p - start);
	c->p++;
	return true;
}

static bool integer(struct canon *c)
{
	const unsigned char *start;
	bool neg = c->p < c->end && *c->p == '-';

	if (neg)
		c->p++;
	start = c->p;
	while (c->p < c->end && *c->p >= '0' && *c->p <= '9')
		c->p++;
	if (c->p == start || c->p - start > CANON_MAX_DIGITS || (*start == '0' && (c->p - start > 1 || neg)))
		return false;
	/* a fraction or an exponent: jansson prints reals its own way */
	return c->p >= c->end || (*c->p != '.' && *c->p != 'e' && *c->p != 'E');
}

static bool word(struct canon *c, const char *w)
{
	size_t n = strlen(w);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, w, n) != 0)
		return false;
	c->p += n;
	return true;
}

static bool value(struct canon *c, int depth);

static bool object(struct canon *c, int depth)
{
	const unsigned char *keys[CANON_MAX_KEYS];
	size_t lens[CANON_MAX_KEYS], n = 0;

	c->p++;
	if (c->p < c->end && *c->p == '}') {
		c->p++;
		return true;
	}
	for (;;) {
		if (n == CANON_MAX_KEYS || !string(c, &keys[n], &lens[n]))
			return false;
		for (size_t i = 0; i < n; i++)
			if (lens[i] == lens[n] && memcmp(keys[i], keys[n], lens[n]) == 0)
				return false;
		n++;
		if (c->p >= c->end || *c->p++ != ':' || !value(c, depth + 1) || c->p >= c->end)
			return false;
		if (*c->p == '}') {
			c->p++;
			return true;
		}
		if (*c->p++ != ',')
			return false;
	}
}

static bool array(struct canon *c, int depth)
{
	c->p++;
	if (c->p < c->end && *c->p == ']') {
		c->p++;
		return true;
	}
	for (;;) {
		if (!value(c, depth + 1) || c->p >= c->end)
			return false;
		if (*c->p == ']') {
			c->p++;
			return true;
		}
		if (*c->p++ != ',')
			return false;
	}
}

static bool value(struct canon *c, int depth)
{
	const unsigned char *s;
	size_t len;

	if (depth > CANON_MAX_DEPTH || c->p >= c->end)
		return false;
	switch (*c->p) {
	case '{':
		return object(c, depth);
	case '[':
		return array(c, depth);
	case '"':
		return string(c, &s, &len);
	case 't':
		return word(c, "true");
	case 'f':
		return word(c, "false");
	case 'n':
		return word(c, "null");
	default:
		return integer(c);
	}
}

bool inv_json_canonical(const char *text, size_t len)
{
	struct canon c = {(const unsigned char *)text, (const unsigned char *)text + len};

	return value(&c, 0) && c.p == c.end;
}
