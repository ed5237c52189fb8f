/* Process data signing (signing.h). */
#include "crypto/signing.h"

#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "base/b64.h"
#include "base/path.h"
#include "base/rs256.h"

#define SIGNING_KEY_MAX (64 * 1024)

char *signing_sign(const char *pem, const char *text, struct err *e)
{
	unsigned char *sig = NULL;
	size_t len = 0;
	char *out = NULL;

	if (rs256_sign(pem, text, strlen(text), &sig, &len, e))
		return NULL;
	if (!(out = b64_encode(sig, len, B64_STD)))
		err_set(e, ERR_INTERNAL, "out of memory");
	free(sig);
	return out;
}

char *signing_key_load(const char *path, struct err *e)
{
	struct err why;
	size_t len = 0;
	char *pem = path_read_file(path, SIGNING_KEY_MAX, &len, &why), *probe;

	if (!pem) {
		err_set(e, why.code, "--process-signing-key %s: %s", path, why.msg);
		return NULL;
	}
	if (!(probe = signing_sign(pem, "accord", &why))) {
		err_set(e, why.code, "--process-signing-key %s: %s", path, why.msg);
		signing_key_free(pem);
		return NULL;
	}
	free(probe);
	return pem;
}

void signing_key_free(char *pem)
{
	if (!pem)
		return;
	sodium_memzero(pem, strlen(pem));
	free(pem);
}
