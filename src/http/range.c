#include "http/range.h"

#include <string.h>

#include "base/str.h"

/* Digits only (no sign, no spaces), at most INT64_MAX. */
static bool parse_u64(struct str s, uint64_t *out)
{
	uint64_t v = 0;

	if (s.len == 0)
		return false;
	for (size_t i = 0; i < s.len; i++) {
		if (s.p[i] < '0' || s.p[i] > '9')
			return false;
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, (uint64_t)(s.p[i] - '0'), &v))
			return false;
	}
	if (v > INT64_MAX)
		return false;
	*out = v;
	return true;
}

static int bad(const char *value, const char *why, struct err *e)
{
	return err_set(e, ERR_INVALID, "Invalid range header: %.100s (%s)", value, why);
}

static int unsatisfiable(const char *value, uint64_t size, struct err *e)
{
	return err_set(e, ERR_RANGE, "Range '%.100s' not satisfiable: the size is %llu bytes", value,
		       (unsigned long long)size);
}

int http_range_parse(const char *value, uint64_t size, bool allow_past_end, struct http_range *out, struct err *e)
{
	struct str v = str_trim(str_from(value)), a, b;
	const char *dash;

	memset(out, 0, sizeof *out);
	out->whole = true;
	if (v.len == 0)
		return 0;
	if (v.len >= 6 && str_ieq_cstr((struct str){v.p, 6}, "bytes=")) {
		v.p += 6;
		v.len -= 6;
	}
	if (memchr(v.p, ',', v.len))
		return bad(value, "only one range is supported", e);
	dash = memchr(v.p, '-', v.len);
	if (!dash)
		return bad(value, "expected bytes=FIRST-LAST, bytes=FIRST- or bytes=-SUFFIX", e);
	a = (struct str){v.p, (size_t)(dash - v.p)};
	b = (struct str){dash + 1, v.len - a.len - 1};
	out->whole = false;
	if (a.len == 0) {
		uint64_t n;
		if (!parse_u64(b, &n))
			return bad(value, "the suffix length is not a number", e);
		if (n > 0 && size == 0 && allow_past_end)
			return 0;
		if (n == 0 || size == 0)
			return unsatisfiable(value, size, e);
		out->first = n >= size ? 0 : size - n;
		out->last = size - 1;
		return 0;
	}
	if (!parse_u64(a, &out->first))
		return bad(value, "the first byte is not a number", e);
	if (b.len == 0) {
		out->open_end = true;
		out->last = size ? size - 1 : 0;
	} else {
		if (!parse_u64(b, &out->last))
			return bad(value, "the last byte is not a number", e);
		if (out->last < out->first)
			return bad(value, "the last byte is before the first", e);
	}
	if (out->first >= size) {
		if (allow_past_end)
			return 0;
		return unsatisfiable(value, size, e);
	}
	if (out->last >= size)
		out->last = size - 1;
	return 0;
}
