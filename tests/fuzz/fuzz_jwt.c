/* libFuzzer driver for the parsers of the OIDC realm's untrusted input: auth/jwt's compact
 * token reader (bearer tokens, ID tokens) and auth/oidc_login's state reader (the
 * callback's state).  A parsed token has two JSON objects and a signature whose signing
 * input is a prefix of the input; a state is never accepted under a key that did not make
 * it. */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auth/jwt.h"
#include "auth/oidc_login.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const unsigned char key[32] = {1, 2, 3};
	struct oidc_login l;
	struct err e;
	struct jwt t;
	char *text = malloc(size + 1);

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (jwt_parse(text, &t, &e) == 0) {
		assert(json_is_object(t.header) && json_is_object(t.claims));
		assert(t.sig_len > 0 && t.signed_len < strlen(text) && text[t.signed_len] == '.');
		jwt_cleanup(&t);
	}
	assert(oidc_login_of(key, text, 0, &l, &e) != 0);
	free(text);
	return 0;
}
