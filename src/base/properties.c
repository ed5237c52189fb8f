#include "base/properties.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/buf.h"
#include "base/oom.h"

struct reader {
	const unsigned char *p;
	size_t len, pos;
	int line;
};

static bool blank(unsigned char c)
{
	return c == ' ' || c == '\t' || c == '\f';
}

static void skip_blanks(struct reader *r)
{
	while (r->pos < r->len && blank(r->p[r->pos]))
		r->pos++;
}

/* Past one line break (\n, \r or \r\n) at r->pos. */
static void skip_break(struct reader *r)
{
	if (r->p[r->pos++] == '\r' && r->pos < r->len && r->p[r->pos] == '\n')
		r->pos++;
	r->line++;
}

static int append_utf8(struct buf *b, uint32_t cp, struct err *e)
{
	char u[4];
	size_t n;

	if (cp < 0x80) {
		u[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		u[0] = (char)(0xC0 | (cp >> 6));
		u[1] = (char)(0x80 | (cp & 0x3F));
		n = 2;
	} else if (cp < 0x10000) {
		u[0] = (char)(0xE0 | (cp >> 12));
		u[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		u[2] = (char)(0x80 | (cp & 0x3F));
		n = 3;
	} else {
		u[0] = (char)(0xF0 | (cp >> 18));
		u[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
		u[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
		u[3] = (char)(0x80 | (cp & 0x3F));
		n = 4;
	}
	return buf_append(b, u, n, e);
}

/* Four hex digits at r->pos into *out. */
static bool hex4(struct reader *r, uint32_t *out)
{
	*out = 0;
	if (r->len - r->pos < 4)
		return false;
	for (int i = 0; i < 4; i++) {
		unsigned char c = r->p[r->pos++];
		int d = c >= '0' && c <= '9'   ? c - '0'
			: c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10
					       : -1;
		if (d < 0)
			return false;
		*out = *out << 4 | (uint32_t)d;
	}
	return true;
}

/* \u and four hex digits, after the 'u' (a high surrogate takes its low one's \u escape with it). */
static int unicode(struct reader *r, struct buf *b, struct err *e)
{
	uint32_t cp, lo;

	if (!hex4(r, &cp))
		goto bad;
	if (cp >= 0xD800 && cp <= 0xDBFF) {
		if (r->len - r->pos < 2 || r->p[r->pos] != '\\' || r->p[r->pos + 1] != 'u')
			goto bad;
		r->pos += 2;
		if (!hex4(r, &lo) || lo < 0xDC00 || lo > 0xDFFF)
			goto bad;
		cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
	} else if (cp >= 0xDC00 && cp <= 0xDFFF) {
		goto bad;
	}
	return append_utf8(b, cp, e);
bad:
	return err_set(e, ERR_INVALID, "properties line %d: malformed \\uxxxx encoding", r->line);
}

/* The escape after a backslash at r->pos - 1 (not a line break). */
static int escape(struct reader *r, struct buf *b, struct err *e)
{
	unsigned char c = r->p[r->pos++];

	switch (c) {
	case 't':
		return buf_append_char(b, '\t', e);
	case 'n':
		return buf_append_char(b, '\n', e);
	case 'r':
		return buf_append_char(b, '\r', e);
	case 'f':
		return buf_append_char(b, '\f', e);
	case 'u':
		return unicode(r, b, e);
	default:
		return buf_append_char(b, (char)c, e);
	}
}

/* One logical line into key and value. */
static int logical_line(struct reader *r, struct buf *key, struct buf *value, struct err *e)
{
	struct buf *cur = key;

	while (r->pos < r->len) {
		unsigned char c = r->p[r->pos];
		if (c == '\n' || c == '\r') {
			skip_break(r);
			break;
		}
		if (c == '\\') {
			if (++r->pos == r->len)
				break; /* a backslash at the very end is dropped, as Java does */
			if (r->p[r->pos] == '\n' || r->p[r->pos] == '\r') {
				skip_break(r);
				skip_blanks(r);
			} else if (escape(r, cur, e) < 0) {
				return -1;
			}
			continue;
		}
		r->pos++;
		if (cur == key && (c == '=' || c == ':' || blank(c))) {
			skip_blanks(r);
			if (blank(c) && r->pos < r->len && (r->p[r->pos] == '=' || r->p[r->pos] == ':')) {
				r->pos++;
				skip_blanks(r);
			}
			cur = value;
			continue;
		}
		if (buf_append_char(cur, (char)c, e) < 0)
			return -1;
	}
	return 0;
}

static int parse(struct reader *r, size_t max_keys, json_t *out, struct err *e)
{
	struct buf key, value;
	int rc = 0;

	buf_init(&key, 0);
	buf_init(&value, 0);
	while (rc == 0 && r->pos < r->len) {
		skip_blanks(r);
		if (r->pos == r->len)
			break;
		if (r->p[r->pos] == '\n' || r->p[r->pos] == '\r') {
			skip_break(r);
			continue;
		}
		if (r->p[r->pos] == '#' || r->p[r->pos] == '!') {
			while (r->pos < r->len && r->p[r->pos] != '\n' && r->p[r->pos] != '\r')
				r->pos++;
			continue;
		}
		buf_reset(&key);
		buf_reset(&value);
		if ((rc = logical_line(r, &key, &value, e)) < 0)
			break;
		if (json_object_size(out) >= max_keys)
			rc = err_set(e, ERR_TOO_LARGE, "properties: more than %zu keys", max_keys);
		else if (json_object_setn_new(out, key.data ? key.data : "", key.len,
					      json_stringn(value.data ? value.data : "", value.len)) < 0)
			rc = oom_fail(e);
	}
	buf_cleanup(&key);
	buf_cleanup(&value);
	return rc;
}

/* text as UTF-8: itself when it is, else read as ISO-8859-1 (NEW, or NULL for itself). */
static char *as_utf8(const char *text, size_t len, size_t *out_len, struct err *e)
{
	json_t *probe = json_stringn(text, len); /* NULL: not UTF-8 */
	struct buf b;

	if (probe) {
		json_decref(probe);
		return NULL;
	}
	buf_init(&b, 0);
	for (size_t i = 0; i < len; i++)
		if (append_utf8(&b, (unsigned char)text[i], e) < 0) {
			buf_cleanup(&b);
			return NULL;
		}
	return buf_detach(&b, out_len);
}

json_t *properties_parse(const char *text, size_t len, size_t max_keys, struct err *e)
{
	struct reader r = {(const unsigned char *)text, len, 0, 1};
	json_t *out = json_object();
	size_t n = 0;
	char *latin = NULL;

	e->code = ERR_OK;
	if (!out) {
		oom_fail(e);
		return NULL;
	}
	if (len && !(latin = as_utf8(text, len, &n, e)) && e->code != ERR_OK) {
		json_decref(out);
		return NULL;
	}
	if (latin) {
		r.p = (const unsigned char *)latin;
		r.len = n;
	}
	if (parse(&r, max_keys, out, e) < 0) {
		json_decref(out);
		out = NULL;
	}
	free(latin);
	return out;
}
