/* libFuzzer driver for base/json_fast, the reader behind jsonx_parse (request bodies,
 * the flows' resource.asJson): a differential target — whatever the fast reader answers
 * must be exactly json_loadb's value (tests/fuzz/json_same.h), at a small depth limit and
 * at jansson's own, and jsonx_parse must succeed or fail as before the fast reader. */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include "base/jsonx.h"
#include "json_same.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data;
	json_t *ref = json_loadb(text, size, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL), *v;
	bool handled;
	struct err e;

	assert(json_fast_agrees(text, size, 3, &handled));
	assert(json_fast_agrees(text, size, JSONX_DEPTH_JANSSON, &handled));
	v = jsonx_parse(text, size, JSONX_DEPTH_JANSSON, &e);
	assert((v != NULL) == (ref != NULL));
	assert(!v || json_same(v, ref));
	json_decref(v);
	json_decref(ref);
	return 0;
}
