#include "base/str.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

static int lower(int c)
{
	return (c >= 'A' && c <= 'Z') ? c + 32 : c;
}

static bool is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

struct str str_from(const char *s)
{
	return (struct str){s ? s : "", s ? strlen(s) : 0};
}

bool str_eq(struct str a, struct str b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.p, b.p, a.len) == 0);
}

bool str_eq_cstr(struct str a, const char *b)
{
	return str_eq(a, str_from(b));
}

bool str_ieq_cstr(struct str a, const char *b)
{
	size_t n = strlen(b);

	if (n != a.len)
		return false;
	for (size_t i = 0; i < n; i++)
		if (lower((unsigned char)a.p[i]) != lower((unsigned char)b[i]))
			return false;
	return true;
}

bool str_has_prefix(struct str s, const char *prefix)
{
	size_t n = strlen(prefix);
	return s.len >= n && memcmp(s.p, prefix, n) == 0;
}

struct str str_trim(struct str s)
{
	while (s.len && is_space((unsigned char)s.p[0])) {
		s.p++;
		s.len--;
	}
	while (s.len && is_space((unsigned char)s.p[s.len - 1]))
		s.len--;
	return s;
}

char *str_dup(struct str s)
{
	char *p = malloc(s.len + 1);

	if (!p)
		return NULL;
	if (s.len)
		memcpy(p, s.p, s.len);
	p[s.len] = '\0';
	return p;
}

int str_to_i64(struct str s, int64_t min, int64_t max, int64_t *out, const char *what, struct err *e)
{
	size_t i = 0;
	bool neg = false;
	int64_t v = 0;

	if (s.len && s.p[0] == '-') {
		neg = true;
		i = 1;
	}
	if (i == s.len || s.len > 20)
		goto bad;
	for (; i < s.len; i++) {
		int d = (unsigned char)s.p[i] - '0';
		if (d < 0 || d > 9)
			goto bad;
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, neg ? -d : d, &v))
			goto bad;
	}
	if (v < min || v > max)
		return err_set(e, ERR_INVALID, "%s must be between %lld and %lld, got %lld", what, (long long)min,
			       (long long)max, (long long)v);
	*out = v;
	return 0;
bad:
	return err_set(e, ERR_INVALID, "%s must be a whole number, got '%.*s'", what, (int)(s.len > 40 ? 40 : s.len),
		       s.p);
}

bool cstr_ieq(const char *a, const char *b)
{
	return str_ieq_cstr(str_from(a), b);
}

bool cstr_icontains(const char *hay, const char *needle)
{
	size_t n = strlen(needle), h = strlen(hay);

	if (n == 0)
		return true;
	for (size_t i = 0; i + n <= h; i++)
		if (str_ieq_cstr((struct str){hay + i, n}, needle))
			return true;
	return false;
}

bool mem_ct_eq(const void *a, const void *b, size_t n)
{
	return sodium_memcmp(a, b, n) == 0;
}

int str_fmt(char *buf, size_t cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, cap, fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < cap)
		return 0;
	if (cap)
		buf[0] = 0; /* a cut path or name is never used by mistake */
	return -1;
}

void str_vfmt_cut(char *buf, size_t cap, const char *fmt, va_list ap)
{
	int n = vsnprintf(buf, cap, fmt, ap);

	if (n < 0 && cap)
		buf[0] = 0;
	else if (n >= 0 && (size_t)n >= cap && cap >= 4)
		memcpy(buf + cap - 4, "...", 4);
}

void str_fmt_cut(char *buf, size_t cap, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	str_vfmt_cut(buf, cap, fmt, ap);
	va_end(ap);
}
