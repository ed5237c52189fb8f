#include "base/b64.h"

#include <stdlib.h>

#include <sodium.h>

static int sodium_variant(enum b64_variant v)
{
	switch (v) {
	case B64_STD:
		return sodium_base64_VARIANT_ORIGINAL;
	case B64_STD_NOPAD:
		return sodium_base64_VARIANT_ORIGINAL_NO_PADDING;
	case B64_URL_NOPAD:
		return sodium_base64_VARIANT_URLSAFE_NO_PADDING;
	}
	return sodium_base64_VARIANT_ORIGINAL;
}

size_t b64_encoded_len(size_t n, enum b64_variant v)
{
	return sodium_base64_ENCODED_LEN(n, sodium_variant(v)) - 1;
}

char *b64_encode(const void *p, size_t n, enum b64_variant v)
{
	size_t cap = sodium_base64_ENCODED_LEN(n, sodium_variant(v));
	char *out = malloc(cap);

	if (!out)
		return NULL;
	sodium_bin2base64(out, cap, p, n, sodium_variant(v));
	return out;
}

unsigned char *b64_decode(const char *s, size_t len, size_t *out_len, struct err *e)
{
	unsigned char *out = malloc(len / 4 * 3 + 4);
	size_t n = 0;
	const char *end = NULL;
	size_t body = len;

	if (!out) {
		err_set(e, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	while (body && s[body - 1] == '=')
		body--;
	if (len - body > 2 || (len != body && len % 4 != 0))
		goto bad;
	if (sodium_base642bin(out, len / 4 * 3 + 3, s, body, NULL, &n, &end,
			      sodium_base64_VARIANT_ORIGINAL_NO_PADDING) != 0 ||
	    end != s + body)
		goto bad;
	out[n] = '\0';
	*out_len = n;
	return out;
bad:
	free(out);
	err_set(e, ERR_INVALID, "value is not valid Base64");
	return NULL;
}
