/* libFuzzer driver for http/range (the Range request header).  The first 8 bytes are the
 * resource size, the rest the header value.  Whatever is accepted must describe bytes
 * inside the resource: first <= last < size. */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "http/range.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_range r;
	struct err e;
	uint64_t len = 0;
	char *value;

	if (size < 8)
		return 0;
	memcpy(&len, data, 8);
	len %= (uint64_t)1 << 40;
	value = malloc(size - 8 + 1);
	if (!value)
		return 0;
	memcpy(value, data + 8, size - 8);
	value[size - 8] = '\0';
	if (http_range_parse(value, len, false, &r, &e) == 0 && !r.whole) {
		assert(r.first <= r.last);
		assert(r.last < len);
	} else if (http_range_parse(value, len, false, &r, &e) != 0) {
		assert(e.code == ERR_INVALID || e.code == ERR_RANGE);
	}
	if (http_range_parse(value, len, true, &r, &e) == 0 && !r.whole && r.first < len)
		assert(r.first <= r.last && r.last < len);
	free(value);
	return 0;
}
