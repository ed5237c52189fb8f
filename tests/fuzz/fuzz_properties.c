/* libFuzzer driver for base/properties (a form's locale.properties from a process's files).
 * Whatever parses is an object of at most the key limit whose keys and values are strings;
 * whatever fails says why with one of the documented codes. */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/properties.h"

#define KEYS_MAX 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct err e = {0};
	json_t *o = properties_parse((const char *)data, size, KEYS_MAX, &e), *v;
	const char *k;

	if (o) {
		assert(json_is_object(o) && json_object_size(o) <= KEYS_MAX);
		json_object_foreach(o, k, v) assert(json_is_string(v));
		json_decref(o);
	} else {
		assert(e.code == ERR_INVALID || e.code == ERR_TOO_LARGE || e.code == ERR_INTERNAL);
	}
	return 0;
}
