#include "http/multipart.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/limits.h"
#include "base/str.h"

static bool is_ws(char c)
{
	return c == ' ' || c == '\t';
}

static struct str slice(const char *p, size_t len)
{
	return (struct str){p, len};
}

static struct str trim_ws(struct str s)
{
	while (s.len && is_ws(s.p[0]))
		s.p++, s.len--;
	while (s.len && is_ws(s.p[s.len - 1]))
		s.len--;
	return s;
}

/* Splits s at the first c: *head before it, s after it (empty when c is absent). */
static struct str split_at(struct str *s, char c)
{
	const char *q = s->len ? memchr(s->p, c, s->len) : NULL;
	struct str head;

	if (!q) {
		head = *s;
		*s = slice(s->p + s->len, 0);
		return head;
	}
	head = slice(s->p, (size_t)(q - s->p));
	*s = slice(q + 1, s->len - head.len - 1);
	return head;
}

/* Reads the next `; key=value` parameter from *rest.  Returns 1 with key/value, 0 at the
 * end, <0 on a malformed parameter.  Quoted values are returned without the quotes. */
static int next_param(struct str *rest, struct str *key, struct str *val, const char *where, struct err *e)
{
	struct str r = trim_ws(*rest);

	while (r.len && r.p[0] == ';')
		r = trim_ws(slice(r.p + 1, r.len - 1));
	if (!r.len) {
		*rest = r;
		return 0;
	}
	{
		const char *eq = memchr(r.p, '=', r.len);
		const char *semi = memchr(r.p, ';', r.len);
		if (!eq || (semi && semi < eq))
			return err_set(e, ERR_INVALID, "%s: parameter without '='", where);
		*key = trim_ws(slice(r.p, (size_t)(eq - r.p)));
		r = trim_ws(slice(eq + 1, r.len - (size_t)(eq + 1 - r.p)));
	}
	if (r.len && r.p[0] == '"') {
		size_t i = 1;
		while (i < r.len && r.p[i] != '"')
			i += (r.p[i] == '\\' && i + 1 < r.len) ? 2 : 1;
		if (i >= r.len)
			return err_set(e, ERR_INVALID, "%s: unterminated quoted value", where);
		*val = slice(r.p + 1, i - 1);
		r = trim_ws(slice(r.p + i + 1, r.len - i - 1));
		if (r.len && r.p[0] != ';')
			return err_set(e, ERR_INVALID, "%s: unexpected text after a quoted value", where);
	} else {
		const char *semi = memchr(r.p, ';', r.len);
		size_t vlen = semi ? (size_t)(semi - r.p) : r.len;
		*val = trim_ws(slice(r.p, vlen));
		r = slice(r.p + vlen, r.len - vlen);
	}
	*rest = r;
	return 1;
}

bool multipart_is_form_data(struct str content_type)
{
	struct str ct = content_type;
	return str_ieq_cstr(trim_ws(split_at(&ct, ';')), "multipart/form-data");
}

static int boundary_of(struct str content_type, struct str *boundary, struct err *e)
{
	struct str rest = content_type, key, val;
	int rc;

	if (!multipart_is_form_data(content_type))
		return err_set(e, ERR_MEDIA_TYPE, "expected a multipart/form-data body, got Content-Type '%.*s'",
			       (int)(content_type.len > 100 ? 100 : content_type.len),
			       content_type.p ? content_type.p : "");
	split_at(&rest, ';');
	boundary->len = 0;
	while ((rc = next_param(&rest, &key, &val, "Content-Type", e)) == 1)
		if (str_ieq_cstr(key, "boundary"))
			*boundary = val;
	if (rc < 0)
		return rc;
	if (boundary->len == 0)
		return err_set(e, ERR_INVALID, "multipart/form-data without a boundary parameter");
	if (boundary->len > MULTIPART_BOUNDARY_MAX)
		return err_set(e, ERR_INVALID, "multipart boundary longer than %d characters", MULTIPART_BOUNDARY_MAX);
	if (memchr(boundary->p, '\r', boundary->len) || memchr(boundary->p, '\n', boundary->len))
		return err_set(e, ERR_INVALID, "multipart boundary contains a line break");
	return 0;
}

static int parse_disposition(struct str v, struct multipart_part *part, size_t n, struct err *e)
{
	struct str key, val, rest = v;
	char where[64];
	int rc;

	str_fmt_cut(where, sizeof where, "multipart part %zu: Content-Disposition", n);
	if (!str_ieq_cstr(trim_ws(split_at(&rest, ';')), "form-data"))
		return err_set(e, ERR_INVALID, "%s is not form-data", where);
	while ((rc = next_param(&rest, &key, &val, where, e)) == 1) {
		if (str_ieq_cstr(key, "name")) {
			part->name = val;
		} else if (str_ieq_cstr(key, "filename")) {
			part->filename = val;
			part->has_filename = true;
		}
	}
	if (rc < 0)
		return rc;
	if (!part->name.p || part->name.len == 0)
		return err_set(e, ERR_INVALID, "%s has no name", where);
	return 0;
}

/* Headers region: lines separated by CRLF, without the final empty line. */
static int parse_headers(struct str h, struct multipart_part *part, size_t n, struct err *e)
{
	bool seen_disposition = false;

	/* Names and file names become C strings: a NUL would cut them short. */
	if (memchr(h.p, '\0', h.len))
		return err_set(e, ERR_INVALID, "multipart part %zu: its headers contain a NUL byte", n);
	while (h.len) {
		const char *crlf = memmem(h.p, h.len, "\r\n", 2);
		struct str line = slice(h.p, crlf ? (size_t)(crlf - h.p) : h.len), name;
		h = crlf ? slice(crlf + 2, h.len - line.len - 2) : slice(h.p + h.len, 0);
		if (line.len && is_ws(line.p[0]))
			return err_set(e, ERR_INVALID, "multipart part %zu: folded header lines are not supported", n);
		if (!memchr(line.p, ':', line.len))
			return err_set(e, ERR_INVALID, "multipart part %zu: header line without ':'", n);
		name = trim_ws(split_at(&line, ':'));
		if (str_ieq_cstr(name, "content-disposition")) {
			int rc;
			if (seen_disposition)
				return err_set(e, ERR_INVALID, "multipart part %zu: duplicate Content-Disposition", n);
			seen_disposition = true;
			rc = parse_disposition(line, part, n, e);
			if (rc < 0)
				return rc;
		} else if (str_ieq_cstr(name, "content-type")) {
			part->content_type = trim_ws(line);
		}
	}
	if (!seen_disposition)
		return err_set(e, ERR_INVALID, "multipart part %zu has no Content-Disposition header", n);
	return 0;
}

static int push_part(struct multipart *mp, size_t *cap, struct multipart_part **out, struct err *e)
{
	if (mp->n_parts >= limits.multipart_parts)
		return err_set(e, ERR_TOO_LARGE, "more than %zu parts in a multipart body", limits.multipart_parts);
	if (mp->n_parts == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;
		struct multipart_part *np = realloc(mp->parts, ncap * sizeof *np);
		if (!np)
			return err_set(e, ERR_INTERNAL, "out of memory");
		mp->parts = np;
		*cap = ncap;
	}
	*out = &mp->parts[mp->n_parts++];
	memset(*out, 0, sizeof **out);
	return 0;
}

/* Position just after the delimiter line that starts at `at`; sets *closed for "--". */
static int after_delimiter(struct str body, size_t at, size_t dlen, bool *closed, size_t *next, size_t n, struct err *e)
{
	size_t p = at + dlen;

	*closed = false;
	if (body.len - p >= 2 && body.p[p] == '-' && body.p[p + 1] == '-') {
		*closed = true;
		return 0;
	}
	while (p < body.len && is_ws(body.p[p]))
		p++;
	if (body.len - p < 2 || body.p[p] != '\r' || body.p[p + 1] != '\n')
		return err_set(e, ERR_INVALID, "multipart part %zu: boundary line not followed by CRLF", n);
	*next = p + 2;
	return 0;
}

static int parse_body(struct str body, struct str boundary, struct multipart *mp, struct err *e)
{
	char delim[2 + 2 + MULTIPART_BOUNDARY_MAX];
	size_t dlen = boundary.len + 2, cap = 0, pos, n = 1;
	const char *hit;

	memcpy(delim, "\r\n--", 4);
	memcpy(delim + 4, boundary.p, boundary.len);
	if (body.len >= dlen && memcmp(body.p, delim + 2, dlen) == 0) {
		pos = 0;
	} else {
		hit = body.len ? memmem(body.p, body.len, delim, dlen + 2) : NULL;
		if (!hit)
			return err_set(e, ERR_INVALID, "multipart body does not contain the boundary");
		pos = (size_t)(hit - body.p) + 2;
	}
	for (;; n++) {
		struct multipart_part *part = NULL;
		size_t hs = 0, ds;
		bool closed;
		int rc = after_delimiter(body, pos, dlen, &closed, &hs, n, e);
		if (rc < 0 || closed)
			return rc;
		/* Search from hs-2 so that a part without headers (CRLF CRLF right after the
		 * delimiter) is found too. */
		{
			size_t window = body.len - (hs - 2);
			if (window > MULTIPART_HEADER_MAX + 4)
				window = MULTIPART_HEADER_MAX + 4;
			hit = memmem(body.p + hs - 2, window, "\r\n\r\n", 4);
			if (!hit)
				return err_set(e, ERR_INVALID,
					       body.len - hs > MULTIPART_HEADER_MAX
						   ? "multipart part %zu: headers longer than the limit"
						   : "multipart part %zu: headers not terminated by an empty line",
					       n);
		}
		ds = (size_t)(hit - body.p) + 4;
		rc = push_part(mp, &cap, &part, e);
		if (rc < 0)
			return rc;
		rc = parse_headers(slice(body.p + hs, ds - 4 > hs ? ds - 4 - hs : 0), part, n, e);
		if (rc < 0)
			return rc;
		hit = memmem(body.p + ds, body.len - ds, delim, dlen + 2);
		if (!hit)
			return err_set(e, ERR_INVALID, "multipart body is truncated: part %zu has no closing boundary",
				       n);
		part->data = slice(body.p + ds, (size_t)(hit - body.p) - ds);
		if (!part->has_filename && multipart_part_is_text(part) && memchr(part->data.p, '\0', part->data.len))
			return err_set(
			    e, ERR_INVALID,
			    "multipart part %zu ('%.*s'): a text field contains a NUL byte; send binary data "
			    "as a file part (with a filename)",
			    n, (int)(part->name.len > 64 ? 64 : part->name.len), part->name.p);
		pos = (size_t)(hit - body.p) + 2;
	}
}

int multipart_parse(struct str content_type, struct str body, struct multipart *mp, struct err *e)
{
	struct str boundary = {0};
	int rc;

	memset(mp, 0, sizeof *mp);
	rc = boundary_of(content_type, &boundary, e);
	if (rc == 0)
		rc = parse_body(body, boundary, mp, e);
	if (rc < 0)
		multipart_cleanup(mp);
	return rc;
}

void multipart_cleanup(struct multipart *mp)
{
	if (!mp)
		return;
	free(mp->parts);
	mp->parts = NULL;
	mp->n_parts = 0;
}

const struct multipart_part *multipart_find(const struct multipart *mp, const char *name)
{
	for (size_t i = 0; i < mp->n_parts; i++)
		if (str_eq_cstr(mp->parts[i].name, name))
			return &mp->parts[i];
	return NULL;
}

bool multipart_text(const struct multipart *mp, const char *name, struct str *out)
{
	for (size_t i = 0; i < mp->n_parts; i++) {
		if (str_ieq_cstr(mp->parts[i].name, name)) {
			struct str v = str_trim(mp->parts[i].data);
			if (!v.len)
				return false;
			*out = v;
			return true;
		}
	}
	return false;
}

bool multipart_bool(const struct multipart *mp, const char *name)
{
	struct str v;
	return multipart_text(mp, name, &v) && str_ieq_cstr(v, "true");
}

bool multipart_part_is_text(const struct multipart_part *p)
{
	struct str ct = p->content_type;
	if (!ct.len)
		return true;
	return str_ieq_cstr(trim_ws(split_at(&ct, ';')), "text/plain");
}
