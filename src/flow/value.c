#include "base/oom.h"
#include "flow/value.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/str.h"
#include "flow/entry.h"

static size_t copy_lit(char *out, const char *s)
{
	size_t n = strlen(s);

	memcpy(out, s, n + 1);
	return n;
}

/* Shortest decimal digits that read back as d: when 15 significant digits round-trip,
 * the shortest form is those digits without trailing zeros; otherwise 16 or 17. */
static void shortest_digits(double d, char digits[20], int *exp10)
{
	char tmp[40];
	const char *p;
	size_t n = 0;
	int prec;

	for (prec = 15; prec < 17; prec++) {
		if (str_fmt(tmp, sizeof tmp, "%.*e", prec - 1, d)) /* always fits */
			abort();
		if (strtod(tmp, NULL) == d)
			break;
	}
	if (prec == 17)
		if (str_fmt(tmp, sizeof tmp, "%.*e", prec - 1, d)) /* always fits */
			abort();
	for (p = tmp; *p && *p != 'e'; p++)
		if (*p >= '0' && *p <= '9' && n < 19)
			digits[n++] = *p;
	while (n > 1 && digits[n - 1] == '0')
		n--;
	digits[n] = '\0';
	*exp10 = 0;
	if (*p == 'e') { /* "%e" wrote e[+-]dd…: the sign then at most 3 digits */
		int64_t x = 0;
		struct err ignored;
		if (str_to_i64(str_from(p + (p[1] == '+' ? 2 : 1)), -400, 400, &x, "exponent", &ignored) == 0)
			*exp10 = (int)x;
	}
}

static size_t put_decimal(char *out, const char *digits, int exp10)
{
	int n = (int)strlen(digits), point = exp10 + 1, i;
	size_t o = 0;

	if (point <= 0) {
		out[o++] = '0';
		out[o++] = '.';
		for (i = 0; i < -point; i++)
			out[o++] = '0';
		for (i = 0; i < n; i++)
			out[o++] = digits[i];
	} else if (point >= n) {
		for (i = 0; i < n; i++)
			out[o++] = digits[i];
		for (i = n; i < point; i++)
			out[o++] = '0';
		out[o++] = '.';
		out[o++] = '0';
	} else {
		for (i = 0; i < n; i++) {
			if (i == point)
				out[o++] = '.';
			out[o++] = digits[i];
		}
	}
	out[o] = '\0';
	return o;
}

size_t value_format_double(double d, char out[VALUE_DOUBLE_MAX])
{
	char digits[20];
	size_t o = 0;
	int exp10, n;
	double a = fabs(d);

	if (isnan(d))
		return copy_lit(out, "NaN");
	if (isinf(d))
		return copy_lit(out, d < 0 ? "-Infinity" : "Infinity");
	if (d == 0)
		return copy_lit(out, signbit(d) ? "-0.0" : "0.0");
	if (d < 0)
		out[o++] = '-';
	shortest_digits(a, digits, &exp10);
	if (a >= 1e-3 && a < 1e7)
		return o + put_decimal(out + o, digits, exp10);
	n = (int)strlen(digits);
	out[o++] = digits[0];
	out[o++] = '.';
	if (n == 1)
		out[o++] = '0';
	else {
		memcpy(out + o, digits + 1, (size_t)n - 1);
		o += (size_t)n - 1;
	}
	o += (size_t)snprintf(out + o, VALUE_DOUBLE_MAX - o, "E%d", exp10);
	return o;
}

static int print_rec(struct buf *b, const json_t *v, int depth, struct err *e);

static int print_container(struct buf *b, const json_t *v, int depth, struct err *e)
{
	const char *key;
	json_t *item;
	size_t i;
	bool first = true;

	if (json_is_array(v)) {
		if (buf_append_char(b, '[', e) < 0)
			return -1;
		json_array_foreach(v, i, item)
		{
			if ((i > 0 && buf_append(b, ", ", 2, e) < 0) || print_rec(b, item, depth + 1, e) < 0)
				return -1;
		}
		return buf_append_char(b, ']', e);
	}
	if (entry_is(v)) { /* Map.Entry: key=value */
		const json_t *k = json_object_get(v, "key");
		return print_rec(b, k, depth + 1, e) < 0 || buf_append_char(b, '=', e) < 0 ||
			       print_rec(b, json_object_get(v, "value"), depth + 1, e) < 0
			   ? -1
			   : 0;
	}
	if (buf_append_char(b, '{', e) < 0)
		return -1;
	json_object_foreach((json_t *)v, key, item)
	{
		if ((!first && buf_append(b, ", ", 2, e) < 0) || buf_append_str(b, key, e) < 0 ||
		    buf_append_char(b, '=', e) < 0 || print_rec(b, item, depth + 1, e) < 0)
			return -1;
		first = false;
	}
	return buf_append_char(b, '}', e);
}

static int print_rec(struct buf *b, const json_t *v, int depth, struct err *e)
{
	char num[VALUE_DOUBLE_MAX];
	size_t n;

	if (depth > VALUE_PRINT_DEPTH)
		return err_set(e, ERR_LIMIT, "value nests deeper than %d levels", VALUE_PRINT_DEPTH);
	switch (json_typeof(v)) {
	case JSON_STRING:
		return buf_append(b, json_string_value(v), json_string_length(v), e);
	case JSON_INTEGER:
		return buf_printf(b, e, "%" PRId64, (int64_t)json_integer_value(v));
	case JSON_REAL:
		n = value_format_double(json_real_value(v), num);
		return buf_append(b, num, n, e);
	case JSON_TRUE:
		return buf_append(b, "true", 4, e);
	case JSON_FALSE:
		return buf_append(b, "false", 5, e);
	case JSON_NULL:
		return buf_append(b, "null", 4, e);
	default:
		return print_container(b, v, depth, e);
	}
}

int value_print(struct buf *b, const json_t *v, struct err *e)
{
	if (!v)
		return buf_append(b, "null", 4, e);
	return print_rec(b, v, 0, e);
}

int value_append_string(struct buf *b, const json_t *v, struct err *e)
{
	if (!v || json_is_null(v))
		return 0;
	return print_rec(b, v, 0, e);
}

char *value_to_cstr(const json_t *v, size_t *len)
{
	struct buf b;
	struct err e;

	buf_init(&b, 0);
	if (value_print(&b, v, &e) < 0) {
		buf_cleanup(&b);
		return NULL;
	}
	return buf_detach(&b, len);
}

const char *value_class_name(const json_t *v)
{
	switch (v ? json_typeof(v) : JSON_NULL) {
	case JSON_STRING:
		return "java.lang.String";
	case JSON_INTEGER:
		return "java.lang.Long";
	case JSON_REAL:
		return "java.lang.Double";
	case JSON_TRUE:
	case JSON_FALSE:
		return "java.lang.Boolean";
	case JSON_OBJECT:
		return entry_is(v) ? "java.util.LinkedHashMap$Entry" : "java.util.LinkedHashMap";
	case JSON_ARRAY:
		return "java.util.ArrayList";
	default:
		return "null";
	}
}

static int convert_error(const json_t *v, const char *to, struct err *e)
{
	size_t len = 0;
	char *s = value_to_cstr(v, &len);
	int rc;

	rc = err_set(e, ERR_INVALID, "Cannot convert [%.200s%s] of type [class %s] to [class %s]", s ? s : "",
		     len > 200 ? "..." : "", value_class_name(v), to);
	free(s);
	return rc;
}

int value_to_bool(const json_t *v, bool *out, struct err *e)
{
	if (!v || json_is_null(v)) {
		*out = false;
		return 0;
	}
	if (json_is_boolean(v)) {
		*out = json_is_true(v);
		return 0;
	}
	if (json_is_string(v)) {
		*out = json_string_length(v) == 4 && strncasecmp(json_string_value(v), "true", 4) == 0;
		return 0;
	}
	return convert_error(v, "java.lang.Boolean", e);
}

bool value_truthy(const json_t *v)
{
	bool b = false;

	if (value_to_bool(v, &b, NULL) < 0)
		return false;
	return b;
}

/* Java Long.valueOf: optional sign, decimal digits only, in range. */
static bool parse_java_long(const char *s, size_t n, int64_t *out)
{
	size_t i = 0;
	bool neg = false;
	uint64_t acc = 0, lim;

	if (n > 0 && (s[0] == '-' || s[0] == '+')) {
		neg = s[0] == '-';
		i = 1;
	}
	if (i == n)
		return false;
	lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; i < n; i++) {
		unsigned d;
		if (s[i] < '0' || s[i] > '9')
			return false;
		d = (unsigned)(s[i] - '0');
		if (acc > (lim - d) / 10)
			return false;
		acc = acc * 10 + d;
	}
	*out = neg ? (int64_t)(0 - acc) : (int64_t)acc;
	return true;
}

/* Java (long) of a double: truncation, NaN → 0, saturating. */
static int64_t java_d2l(double d)
{
	if (isnan(d))
		return 0;
	if (d >= 9223372036854775807.0)
		return INT64_MAX;
	if (d <= -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)d;
}

int value_to_long(const json_t *v, int64_t *out, struct err *e)
{
	if (!v || json_is_null(v)) {
		*out = 0;
		return 0;
	}
	if (json_is_integer(v)) {
		*out = (int64_t)json_integer_value(v);
		return 0;
	}
	if (json_is_real(v)) {
		*out = java_d2l(json_real_value(v));
		return 0;
	}
	if (json_is_string(v)) {
		if (json_string_length(v) == 0) {
			*out = 0;
			return 0;
		}
		if (parse_java_long(json_string_value(v), json_string_length(v), out))
			return 0;
	}
	return convert_error(v, "java.lang.Long", e);
}

static bool parse_java_double(const char *s, size_t n, double *out)
{
	char tmp[128], *end;
	const char *p;
	size_t i = 0;

	while (n > 0 && (unsigned char)s[n - 1] <= ' ')
		n--;
	while (i < n && (unsigned char)s[i] <= ' ')
		i++;
	s += i;
	n -= i;
	if (n == 0 || n >= sizeof tmp || memchr(s, '\0', n))
		return false;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	p = tmp + (tmp[0] == '-' || tmp[0] == '+');
	if (strcmp(p, "NaN") == 0 || strcmp(p, "Infinity") == 0) {
		*out = strcmp(p, "NaN") == 0 ? NAN : (tmp[0] == '-' ? -INFINITY : INFINITY);
		return true;
	}
	if (!((*p >= '0' && *p <= '9') || *p == '.'))
		return false;
	if (n > 1 && strchr("fFdD", tmp[n - 1]) && !(tmp[1] == 'x' || tmp[1] == 'X'))
		tmp[--n] = '\0';
	errno = 0;
	*out = strtod(tmp, &end);
	return end == tmp + n && end != tmp;
}

int value_to_double(const json_t *v, double *out, struct err *e)
{
	if (!v || json_is_null(v)) {
		*out = 0;
		return 0;
	}
	if (json_is_number(v)) {
		*out = json_number_value(v);
		return 0;
	}
	if (json_is_string(v)) {
		if (json_string_length(v) == 0) {
			*out = 0;
			return 0;
		}
		if (parse_java_double(json_string_value(v), json_string_length(v), out))
			return 0;
	}
	return convert_error(v, "java.lang.Double", e);
}

bool value_is_empty(const json_t *v)
{
	if (!v || json_is_null(v))
		return true;
	if (json_is_string(v))
		return json_string_length(v) == 0;
	if (json_is_array(v))
		return json_array_size(v) == 0;
	if (json_is_object(v))
		return json_object_size(v) == 0;
	return false;
}

bool value_equals(const json_t *a, const json_t *b)
{
	if (a == b)
		return true;
	if (!a || !b)
		return false;
	return json_equal(a, b) != 0;
}

static int merge_rec(json_t *dst, json_t *src, int depth, struct err *e)
{
	const char *key;
	json_t *sv, *dv;

	if (depth > VALUE_PRINT_DEPTH)
		return err_set(e, ERR_LIMIT, "value nests deeper than %d levels", VALUE_PRINT_DEPTH);
	json_object_foreach(src, key, sv)
	{
		dv = json_object_get(dst, key);
		if (json_is_object(dv) && json_is_object(sv) && dv != sv) {
			if (merge_rec(dv, sv, depth + 1, e) < 0)
				return -1;
		} else if (json_object_set(dst, key, sv) < 0) {
			return oom_fail(e);
		}
	}
	return 0;
}

int value_merge(json_t *dst, json_t *src, struct err *e)
{
	if (!json_is_object(dst) || !json_is_object(src))
		return err_set(e, ERR_INVALID, "can only merge a map into a map");
	if (dst == src)
		return 0;
	if (value_contains_ref(src, dst))
		return err_set(e, ERR_INVALID, "cannot merge a map into itself");
	return merge_rec(dst, src, 0, e);
}

int value_set_path(json_t *obj, const char *path, size_t len, json_t *v, struct err *e)
{
	size_t start = 0, i;
	char key[1024];

	if (!json_is_object(obj))
		return err_set(e, ERR_INVALID, "can only set a path in a map");
	for (i = 0; i <= len; i++) {
		json_t *next;
		size_t n = i - start;
		if (i < len && path[i] != '.')
			continue;
		if (n == 0 || n >= sizeof key || memchr(path + start, '\0', n))
			return err_set(e, ERR_INVALID, "invalid variable path '%.*s'", (int)(len > 200 ? 200 : len),
				       path);
		memcpy(key, path + start, n);
		key[n] = '\0';
		start = i + 1;
		if (i == len)
			break;
		next = json_object_get(obj, key);
		if (!json_is_object(next)) {
			next = json_object();
			if (!next || json_object_set_new(obj, key, next) < 0)
				return oom_fail(e);
		}
		obj = next;
	}
	if (value_contains_ref(v, obj))
		return err_set(e, ERR_INVALID, "cannot store a value inside itself");
	if (json_object_set(obj, key, v) < 0)
		return oom_fail(e);
	return 0;
}

static bool contains_rec(const json_t *outer, const json_t *inner, int depth)
{
	const char *key;
	json_t *item;
	size_t i;

	if (outer == inner)
		return true;
	if (depth > VALUE_PRINT_DEPTH)
		return true;
	if (json_is_array(outer)) {
		json_array_foreach(outer, i, item) if (contains_rec(item, inner, depth + 1)) return true;
	} else if (json_is_object(outer)) {
		json_object_foreach((json_t *)outer, key, item) if (contains_rec(item, inner, depth + 1)) return true;
	}
	return false;
}

bool value_contains_ref(const json_t *outer, const json_t *inner)
{
	if (!outer || !inner)
		return false;
	if (!json_is_array(inner) && !json_is_object(inner))
		return false;
	return contains_rec(outer, inner, 0);
}
