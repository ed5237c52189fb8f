/* libFuzzer driver for inventory/json_text, containment decided on an item's text: a
 * differential target.  The input is an item's JSON text, a newline, then a filter's JSON
 * text.  Whenever both parse (stored items always do) and the text scan answers, it must be
 * the tree's answer (inv_json_contains); on any text it must neither crash nor read past
 * the item (a copy without terminator is passed). */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "inventory/json.h"
#include "inventory/json_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	size_t a_len = nl ? (size_t)(nl - data) : size;
	json_t *a, *b;
	char *item;
	int in;

	if (!nl)
		return 0;
	b = json_loadb((const char *)nl + 1, size - a_len - 1, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	if (!b)
		return 0;
	item = malloc(a_len ? a_len : 1);
	if (!item) {
		json_decref(b);
		return 0;
	}
	memcpy(item, data, a_len);
	in = inv_json_text_contains(item, a_len, b);
	a = json_loadb(item, a_len, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	assert(in >= -1 && in <= 1);
	assert(!a || in < 0 || in == inv_json_contains(a, b));
	json_decref(a);
	json_decref(b);
	free(item);
	return 0;
}
