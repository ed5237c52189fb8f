/* libFuzzer driver for base/i64_block's decoder, which reads the containment index's stored
 * blocks: the first 8 bytes are the block's first id, the rest its gaps.  Whatever the bytes,
 * the decoder must not read past them; when it takes them, the ids must be ascending and
 * encode back to exactly those bytes (one encoding per list), and when it refuses them the
 * list must be as it was. */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/i64_block.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct i64_list l = {0};
	struct err e;
	int64_t first;
	uint8_t *gaps, *again;
	size_t len;

	if (size < sizeof first)
		return 0;
	memcpy(&first, data, sizeof first);
	len = size - sizeof first;
	if (!(gaps = malloc(len ? len : 1))) /* a copy of its own: ASan sees a read past it */
		return 0;
	memcpy(gaps, data + sizeof first, len);
	assert(i64_list_push(&l, 42, &e) == 0);
	if (i64_block_decode(first, gaps, len, &l, &e) == 0) {
		assert(l.n >= 2 && l.v[1] == first);
		for (size_t i = 2; i < l.n; i++)
			assert(l.v[i - 1] < l.v[i]);
		again = malloc(I64_BLOCK_BOUND(l.n - 1) + 1);
		assert(again);
		assert(i64_block_size(l.v + 1, l.n - 1) == len);
		assert(i64_block_encode(l.v + 1, l.n - 1, again) == len && memcmp(again, gaps, len) == 0);
		free(again);
	} else {
		assert(e.code == ERR_INVALID && l.n == 1 && l.v[0] == 42);
	}
	i64_list_cleanup(&l);
	free(gaps);
	return 0;
}
