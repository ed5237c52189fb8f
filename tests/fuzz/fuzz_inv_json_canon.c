/* libFuzzer driver for inventory/json_canon: a differential target.  Whenever it says a text
 * is what jansson prints for it, jansson must parse the text and print exactly those bytes
 * back (what the query answers rely on when they copy stored items as they are); it must
 * never read past the text (a copy without terminator is passed). */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonx.h"
#include "inventory/json_canon.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size ? size : 1);
	json_t *v;
	char *out;

	if (!text)
		return 0;
	memcpy(text, data, size);
	if (inv_json_canonical(text, size)) {
		v = json_loadb(text, size, JSON_DECODE_ANY, NULL);
		assert(v);
		out = jsonx_dump(v);
		assert(out && strlen(out) == size && memcmp(out, text, size) == 0);
		free(out);
		json_decref(v);
	}
	free(text);
	return 0;
}
