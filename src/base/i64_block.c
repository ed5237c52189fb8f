#include "base/i64_block.h"

#include <assert.h>
#include <stdbool.h>

static size_t put_varint(uint64_t x, uint8_t *out)
{
	size_t n = 0;

	while (x >= 0x80) {
		out[n++] = (uint8_t)(x | 0x80);
		x >>= 7;
	}
	out[n++] = (uint8_t)x;
	return n;
}

static size_t varint_len(uint64_t x)
{
	size_t n = 1;

	while (x >= 0x80) {
		x >>= 7;
		n++;
	}
	return n;
}

static uint64_t gap(int64_t a, int64_t b)
{
	assert(a < b);
	return (uint64_t)b - (uint64_t)a;
}

size_t i64_block_encode(const int64_t *v, size_t n, uint8_t *out)
{
	size_t len = 0;

	for (size_t i = 1; i < n; i++)
		len += put_varint(gap(v[i - 1], v[i]), out + len);
	return len;
}

size_t i64_block_size(const int64_t *v, size_t n)
{
	size_t len = 0;

	for (size_t i = 1; i < n; i++)
		len += varint_len(gap(v[i - 1], v[i]));
	return len;
}

/* One gap at p[*at..len): false when cut short, longer than needed or over 64 bits. */
static bool get_varint(const uint8_t *p, size_t len, size_t *at, uint64_t *x)
{
	uint64_t v = 0;

	for (unsigned shift = 0; *at < len && shift < 64; shift += 7) {
		uint8_t b = p[(*at)++];
		if (shift == 63 && b > 1)
			return false; /* the 10th byte holds the top bit alone */
		v |= (uint64_t)(b & 0x7F) << shift;
		if (!(b & 0x80)) {
			*x = v;
			return b != 0 || shift == 0; /* a last byte of 0 after others: not minimal */
		}
	}
	return false;
}

int i64_block_decode(int64_t first, const uint8_t *p, size_t len, struct i64_list *out, struct err *e)
{
	size_t start = out->n, at = 0;
	uint64_t cur = (uint64_t)first;

	if (i64_list_push(out, first, e))
		return -1;
	while (at < len) {
		uint64_t g;
		if (!get_varint(p, len, &at, &g) || g == 0 || g > (uint64_t)INT64_MAX - cur) {
			out->n = start;
			return err_set(e, ERR_INVALID, "a posting block is not valid at byte %zu of %zu", at, len);
		}
		cur += g;
		if (i64_list_push(out, (int64_t)cur, e)) {
			out->n = start;
			return -1;
		}
	}
	return 0;
}
