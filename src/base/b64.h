#ifndef ACCORD_BASE_B64_H
#define ACCORD_BASE_B64_H

#include <stdbool.h>
#include <stddef.h>

#include "base/err.h"

enum b64_variant {
	B64_STD,       /* standard alphabet, padded */
	B64_STD_NOPAD, /* standard alphabet, no padding */
	B64_URL_NOPAD, /* URL-safe alphabet, no padding */
};

/* Encoded length without the NUL. */
size_t b64_encoded_len(size_t n, enum b64_variant v);
/* Encodes into a new NUL-terminated string (caller frees); NULL when out of memory. */
char *b64_encode(const void *p, size_t n, enum b64_variant v);
/* Decodes standard Base64 with or without padding (white space is not allowed) into a new
 * buffer (caller frees, NUL-terminated for convenience); NULL with ERR_INVALID when the
 * input is not Base64. */
unsigned char *b64_decode(const char *s, size_t len, size_t *out_len, struct err *e);

#endif
