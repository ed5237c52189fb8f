/* libFuzzer driver for auth/console_session's Cookie header reader.  Whatever it accepts
 * is a session token: CONSOLE_TOKEN_LEN - 1 characters of URL-safe Base64; a refusal
 * leaves the token empty. */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "auth/console_session.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char token[CONSOLE_TOKEN_LEN];
	char *value = malloc(size + 1);

	if (!value)
		return 0;
	memcpy(value, data, size);
	value[size] = '\0';
	if (console_session_cookie(value, token)) {
		assert(strlen(token) == CONSOLE_TOKEN_LEN - 1);
		assert(strspn(token, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") ==
		       CONSOLE_TOKEN_LEN - 1);
		assert(strstr(value, token) != NULL);
	} else {
		assert(token[0] == '\0');
	}
	free(value);
	return 0;
}
