/* libFuzzer driver for flow/tasks/mustache (the smtp task's templates).  The input is the
 * template, rendered against a fixed scope with a list, a map, strings to escape and a
 * self-nesting map; whatever renders stays within the output limit, and whatever fails
 * says why with one of the documented codes. */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "flow/tasks/mustache.h"

#define OUT_MAX 65536

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static json_t *scope;
	struct err e = {0};
	size_t len = 0;
	char *out;

	if (!scope)
		scope = json_loads("{\"name\": \"<a&b>\", \"n\": 3, \"t\": true, \"f\": false, \"empty\": [], "
				   "\"items\": [{\"name\": \"x\", \"items\": [1, 2]}, \"s\", 2.5, null], "
				   "\"map\": {\"map\": {\"name\": \"deep\"}, \"list\": [[1], [2, [3]]]}}",
				   0, NULL);
	out = mustache_render((const char *)data, size, scope, OUT_MAX, &len, &e);
	if (out) {
		assert(len <= OUT_MAX && strlen(out) <= len);
		free(out);
	} else {
		assert(e.code == ERR_INVALID || e.code == ERR_TOO_LARGE);
	}
	return 0;
}
