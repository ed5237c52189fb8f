/* java.lang.String methods.  Indices and lengths count UTF-16 code units, as Java does;
 * case mapping is ASCII only. */
#include "flow/el/internal.h"

#include <stdlib.h>
#include <string.h>

#include "flow/value.h"

/* UTF-16 length of the UTF-8 sequence starting with byte b (1 or 2). */
static size_t u16_units(unsigned char b)
{
	return b >= 0xF0 ? 2 : 1;
}

static bool is_cont(unsigned char b)
{
	return (b & 0xC0) == 0x80;
}

static size_t u16_len(const char *s, size_t n)
{
	size_t i, units = 0;

	for (i = 0; i < n; i++)
		if (!is_cont((unsigned char)s[i]))
			units += u16_units((unsigned char)s[i]);
	return units;
}

/* Byte offset of UTF-16 index idx (idx ≤ length); an index inside a surrogate pair
 * rounds up to the end of that character. */
static size_t u16_to_byte(const char *s, size_t n, size_t idx)
{
	size_t i = 0, units = 0;

	while (i < n && units < idx) {
		units += u16_units((unsigned char)s[i]);
		i++;
		while (i < n && is_cont((unsigned char)s[i]))
			i++;
	}
	return i;
}

static size_t byte_to_u16(const char *s, size_t off)
{
	return u16_len(s, off);
}

static int new_str(struct el_ctx *c, const char *p, size_t n, struct ev *out)
{
	json_t *j;

	if (n > EL_STR_MAX)
		return el_fail(c, ERR_LIMIT, "string longer than %u bytes", EL_STR_MAX);
	if (el_budget(c, n / 256) < 0)
		return -1;
	j = json_stringn_nocheck(p, n);
	if (!j)
		return el_no_memory(c);
	*out = el_ev_json(j);
	return 0;
}

static int new_int(struct el_ctx *c, int64_t v, struct ev *out)
{
	json_t *j = json_integer(v);

	if (!j)
		return el_no_memory(c);
	*out = el_ev_json(j);
	return 0;
}

static void ret_bool(bool b, struct ev *out)
{
	*out = el_ev_json(json_boolean(b));
}

/* Argument i coerced to String (EL: null → ""), new reference. */
static json_t *arg_str(struct el_ctx *c, struct ev *args, size_t i)
{
	json_t *j = el_ev_json_of(c, &args[i]);

	return j ? el_to_string(c, j) : NULL;
}

static int arg_long(struct el_ctx *c, struct ev *args, size_t i, int64_t *out)
{
	json_t *j = el_ev_json_of(c, &args[i]);

	return j ? el_to_long(c, j, out) : -1;
}

static const char *find(const char *h, size_t hn, const char *nd, size_t nn)
{
	return nn == 0 ? h : memmem(h, hn, nd, nn);
}

static int m_substring(struct el_ctx *c, const char *s, size_t n, struct ev *args, size_t argc, struct ev *out)
{
	int64_t b = 0, e;
	size_t len = u16_len(s, n), bo, eo;

	e = (int64_t)len;
	if (arg_long(c, args, 0, &b) < 0 || (argc > 1 && arg_long(c, args, 1, &e) < 0))
		return -1;
	if (b < 0 || e > (int64_t)len || b > e)
		return el_fail(c, ERR_INVALID, "begin %lld, end %lld, length %zu", (long long)b, (long long)e, len);
	bo = u16_to_byte(s, n, (size_t)b);
	eo = u16_to_byte(s, n, (size_t)e);
	return new_str(c, s + bo, eo - bo, out);
}

static int m_index_of(struct el_ctx *c, const char *s, size_t n, struct ev *args, size_t argc, bool last,
		      struct ev *out)
{
	json_t *t = arg_str(c, args, 0);
	int64_t from = 0;
	const char *p = NULL, *q, *tp;
	size_t tn, start;

	if (!t || (argc > 1 && arg_long(c, args, 1, &from) < 0)) {
		json_decref(t);
		return -1;
	}
	tp = json_string_value(t);
	tn = json_string_length(t);
	start = from <= 0 ? 0 : u16_to_byte(s, n, (size_t)from);
	if (!last) {
		p = start <= n ? find(s + start, n - start, tp, tn) : NULL;
	} else {
		for (q = s; (q = find(q, n - (size_t)(q - s), tp, tn)) != NULL; q++) {
			p = q;
			if ((size_t)(q - s) >= n)
				break;
		}
	}
	json_decref(t);
	return new_int(c, p ? (int64_t)byte_to_u16(s, (size_t)(p - s)) : -1, out);
}

/* Java String.replace(CharSequence, CharSequence): every occurrence, left to right; an
 * empty target inserts the replacement around every character. */
static int m_replace(struct el_ctx *c, const char *s, size_t n, json_t *t, json_t *r, struct ev *out)
{
	const char *tp = json_string_value(t), *rp = json_string_value(r), *p = s, *q;
	size_t tn = json_string_length(t), rn = json_string_length(r), o = 0, cap = n + 1;
	char *buf = malloc(cap);
	int rc;

	if (!buf)
		return el_no_memory(c);
	for (;;) {
		size_t seg, step;
		q = tn ? memmem(p, n - (size_t)(p - s), tp, tn) : p;
		seg = q ? (size_t)(q - p) : n - (size_t)(p - s);
		step = q && !tn && q < s + n ? 1 : 0;
		while (step && q + step < s + n && is_cont((unsigned char)q[step]))
			step++;
		if (o + seg + rn + step > EL_STR_MAX) {
			free(buf);
			return el_fail(c, ERR_LIMIT, "string longer than %u bytes", EL_STR_MAX);
		}
		if (o + seg + rn + step + 1 > cap) {
			char *g;
			cap = (o + seg + rn + step + 1) * 2;
			if (!(g = realloc(buf, cap))) {
				free(buf);
				return el_no_memory(c);
			}
			buf = g;
		}
		memcpy(buf + o, p, seg);
		o += seg;
		if (!q)
			break;
		memcpy(buf + o, rp, rn);
		o += rn;
		memcpy(buf + o, q, step);
		o += step;
		p = q + tn + step;
		if (!tn && q >= s + n)
			break;
	}
	rc = new_str(c, buf, o, out);
	free(buf);
	return rc;
}

static int m_case(struct el_ctx *c, const char *s, size_t n, bool upper, struct ev *out)
{
	char *buf = malloc(n + 1);
	size_t i;
	int rc;

	if (!buf)
		return el_no_memory(c);
	for (i = 0; i < n; i++) {
		char ch = s[i];
		if (upper && ch >= 'a' && ch <= 'z')
			ch = (char)(ch - 'a' + 'A');
		else if (!upper && ch >= 'A' && ch <= 'Z')
			ch = (char)(ch - 'A' + 'a');
		buf[i] = ch;
	}
	rc = new_str(c, buf, n, out);
	free(buf);
	return rc;
}

static int m_trim(struct el_ctx *c, const char *s, size_t n, struct ev *out)
{
	size_t b = 0;

	while (b < n && (unsigned char)s[b] <= ' ')
		b++;
	while (n > b && (unsigned char)s[n - 1] <= ' ')
		n--;
	return new_str(c, s + b, n - b, out);
}

static bool ieq(const char *a, const char *b, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		char x = a[i], y = b[i];
		if (x >= 'A' && x <= 'Z')
			x = (char)(x - 'A' + 'a');
		if (y >= 'A' && y <= 'Z')
			y = (char)(y - 'A' + 'a');
		if (x != y)
			return false;
	}
	return true;
}

static int m_compare_to(struct el_ctx *c, const char *s, size_t n, json_t *t, struct ev *out)
{
	const char *tp = json_string_value(t);
	size_t tn = json_string_length(t), i;

	for (i = 0; i < n && i < tn; i++)
		if (s[i] != tp[i])
			return new_int(c, (int64_t)(unsigned char)s[i] - (unsigned char)tp[i], out);
	return new_int(c, (int64_t)u16_len(s, n) - (int64_t)u16_len(tp, tn), out);
}

/* Methods taking one String argument. */
static int string_method_1(struct el_ctx *c, const char *s, size_t n, const char *name, json_t *t, struct ev *out)
{
	const char *tp = json_string_value(t);
	size_t tn = json_string_length(t);

	if (strcmp(name, "contains") == 0)
		ret_bool(find(s, n, tp, tn) != NULL, out);
	else if (strcmp(name, "startsWith") == 0)
		ret_bool(tn <= n && memcmp(s, tp, tn) == 0, out);
	else if (strcmp(name, "endsWith") == 0)
		ret_bool(tn <= n && memcmp(s + n - tn, tp, tn) == 0, out);
	else if (strcmp(name, "equalsIgnoreCase") == 0)
		ret_bool(tn == n && ieq(s, tp, n), out);
	else if (strcmp(name, "concat") == 0) {
		char *buf;
		int rc;
		if (n + tn > EL_STR_MAX)
			return el_fail(c, ERR_LIMIT, "string longer than %u bytes", EL_STR_MAX);
		if (!(buf = malloc(n + tn + 1)))
			return el_no_memory(c);
		memcpy(buf, s, n);
		memcpy(buf + n, tp, tn);
		rc = new_str(c, buf, n + tn, out);
		free(buf);
		return rc;
	} else if (strcmp(name, "compareTo") == 0)
		return m_compare_to(c, s, n, t, out);
	else if (strcmp(name, "matches") == 0) {
		bool m;
		if (el_re_matches(c, s, n, tp, &m) < 0)
			return -1;
		ret_bool(m, out);
	} else if (strcmp(name, "split") == 0) {
		json_t *arr;
		if (el_re_split(c, s, n, tp, &arr) < 0)
			return -1;
		*out = el_ev_json(arr);
	} else
		return 1;
	return 0;
}

static int string_method_2(struct el_ctx *c, const char *s, size_t n, const char *name, struct ev *args, struct ev *out)
{
	json_t *a = arg_str(c, args, 0), *b = a ? arg_str(c, args, 1) : NULL;
	int rc = -1;

	if (!a || !b)
		goto out;
	if (strcmp(name, "replace") == 0)
		rc = m_replace(c, s, n, a, b, out);
	else if (strcmp(name, "replaceAll") == 0) {
		json_t *r;
		rc = el_re_replace_all(c, s, n, json_string_value(a), json_string_value(b), &r);
		if (rc == 0)
			*out = el_ev_json(r);
	} else
		rc = 1;
out:
	json_decref(a);
	json_decref(b);
	return rc;
}

static int string_method_0(struct el_ctx *c, json_t *str, const char *name, struct ev *out)
{
	const char *s = json_string_value(str);
	size_t n = json_string_length(str), i;

	if (strcmp(name, "length") == 0)
		return new_int(c, (int64_t)u16_len(s, n), out);
	if (strcmp(name, "isEmpty") == 0)
		ret_bool(n == 0, out);
	else if (strcmp(name, "isBlank") == 0) {
		for (i = 0; i < n && (unsigned char)s[i] <= ' '; i++)
			;
		ret_bool(i == n, out);
	} else if (strcmp(name, "toUpperCase") == 0 || strcmp(name, "toLowerCase") == 0)
		return m_case(c, s, n, name[2] == 'U', out);
	else if (strcmp(name, "trim") == 0 || strcmp(name, "strip") == 0)
		return m_trim(c, s, n, out);
	else if (strcmp(name, "toString") == 0 || strcmp(name, "intern") == 0)
		*out = el_ev_json(json_incref(str));
	else
		return 1;
	return 0;
}

static int string_method_n(struct el_ctx *c, json_t *str, const char *name, struct ev *args, size_t argc,
			   struct ev *out)
{
	const char *s = json_string_value(str);
	size_t n = json_string_length(str);
	json_t *t;
	int rc;

	if (strcmp(name, "substring") == 0 && argc <= 2)
		return m_substring(c, s, n, args, argc, out);
	if ((strcmp(name, "indexOf") == 0 && argc <= 2) || (strcmp(name, "lastIndexOf") == 0 && argc == 1))
		return m_index_of(c, s, n, args, argc, name[0] == 'l', out);
	if (strcmp(name, "charAt") == 0 && argc == 1) {
		int64_t i;
		size_t len = u16_len(s, n), b, e;
		if (arg_long(c, args, 0, &i) < 0)
			return -1;
		if (i < 0 || (uint64_t)i >= len)
			return el_fail(c, ERR_INVALID, "index %lld, length %zu", (long long)i, len);
		b = u16_to_byte(s, n, (size_t)i);
		e = u16_to_byte(s, n, (size_t)i + 1);
		return new_str(c, s + b, e - b, out);
	}
	if (strcmp(name, "equals") == 0 && argc == 1) {
		json_t *o = el_ev_json_of(c, &args[0]);
		ret_bool(o && value_equals(str, o), out);
		return o ? 0 : -1;
	}
	if (argc == 2)
		return string_method_2(c, s, n, name, args, out);
	if (!(t = arg_str(c, args, 0)))
		return -1;
	rc = string_method_1(c, s, n, name, t, out);
	json_decref(t);
	return rc;
}

int el_string_method(struct el_ctx *c, json_t *s, const char *name, struct ev *args, size_t n, struct ev *out)
{
	int rc = n == 0 ? string_method_0(c, s, name, out) : n <= 2 ? string_method_n(c, s, name, args, n, out) : 1;

	if (rc > 0)
		return el_fail(c, ERR_INVALID, "Can't find '%s()' method in java.lang.String", name);
	return rc;
}
