/* libFuzzer driver for base/frame (the runner ↔ supervisor IPC decoder).  Feeds the input
 * in pieces of varying size; every decoded frame must be an object with a "type" string
 * and must re-encode to a frame that decodes to an equal value. */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/frame.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_roundtrip(json_t *v)
{
	struct frame_reader r;
	struct buf b;
	struct err e;
	json_t *back = NULL;

	buf_init(&b, 0);
	frame_reader_init(&r);
	if (frame_encode(v, &b, &e) == 0) {
		assert(frame_reader_feed(&r, b.data, b.len, &e) == 0);
		assert(frame_reader_next(&r, &back, &e) == 1);
		assert(json_equal(v, back));
		json_decref(back);
	}
	frame_reader_cleanup(&r);
	buf_cleanup(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct frame_reader r;
	struct err e;
	size_t off = 0, step = size ? (size_t)data[0] % 7 + 1 : 1;
	json_t *v;
	int rc = 0;

	frame_reader_init(&r);
	r.max = 1 << 16;
	while (off < size && rc >= 0) {
		size_t n = size - off < step ? size - off : step;
		if (frame_reader_feed(&r, data + off, n, &e))
			break;
		off += n;
		while ((rc = frame_reader_next(&r, &v, &e)) == 1) {
			assert(json_is_object(v) && json_is_string(json_object_get(v, "type")));
			check_roundtrip(v);
			json_decref(v);
		}
	}
	frame_reader_cleanup(&r);
	return 0;
}
