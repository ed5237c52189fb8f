/* Per-project value encryption (projkey.h). */
#include "crypto/projkey.h"

#include <sodium.h>
#include <stdlib.h>
#include <string.h>

#include "base/b64.h"

#define PK_VERSION 1
#define PK_NONCE crypto_aead_xchacha20poly1305_ietf_NPUBBYTES
#define PK_TAG crypto_aead_xchacha20poly1305_ietf_ABYTES
#define PK_MAX (1024 * 1024) /* bytes of one value */

static void derive(const struct masterkey *mk, const char *project_id, unsigned char key[32])
{
	static const char ctx[] = "accord project key v1";
	crypto_generichash_state st;

	crypto_generichash_init(&st, mk->key, sizeof mk->key, 32);
	crypto_generichash_update(&st, (const unsigned char *)ctx, sizeof ctx); /* with its NUL */
	crypto_generichash_update(&st, (const unsigned char *)project_id, strlen(project_id));
	crypto_generichash_final(&st, key, 32);
	sodium_memzero(&st, sizeof st);
}

char *projkey_encrypt(const struct masterkey *mk, const char *project_id, const char *value, size_t len, struct err *e)
{
	unsigned char key[32], *buf;
	size_t n = 1 + PK_NONCE + len + PK_TAG;
	char *out;

	if (len > PK_MAX) {
		err_set(e, ERR_INVALID, "the value to encrypt is longer than %d bytes", PK_MAX);
		return NULL;
	}
	if (!(buf = malloc(n))) {
		err_set(e, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	derive(mk, project_id, key);
	buf[0] = PK_VERSION;
	randombytes_buf(buf + 1, PK_NONCE);
	crypto_aead_xchacha20poly1305_ietf_encrypt(buf + 1 + PK_NONCE, NULL, (const unsigned char *)value, len,
						   (const unsigned char *)project_id, strlen(project_id), NULL, buf + 1,
						   key);
	sodium_memzero(key, sizeof key);
	out = b64_encode(buf, n, B64_STD);
	free(buf);
	if (!out)
		err_set(e, ERR_INTERNAL, "out of memory");
	return out;
}

int projkey_decrypt(const struct masterkey *mk, const char *project_id, const char *b64, char **out, size_t *out_len,
		    struct err *e)
{
	static const char bad[] = "Invalid encrypted value: it was not encrypted by this server for this project";
	unsigned char key[32], *buf, *pt;
	size_t n = 0;
	struct err ignored;
	int rc;

	*out = NULL;
	buf = b64 ? b64_decode(b64, strlen(b64), &n, &ignored) : NULL;
	if (!buf || n < 1 + PK_NONCE + PK_TAG || buf[0] != PK_VERSION || n - 1 - PK_NONCE - PK_TAG > PK_MAX) {
		free(buf);
		return err_set(e, ERR_INVALID, "%s", bad);
	}
	if (!(pt = malloc(n - 1 - PK_NONCE - PK_TAG + 1))) {
		free(buf);
		return err_set(e, ERR_INTERNAL, "out of memory");
	}
	derive(mk, project_id, key);
	rc = crypto_aead_xchacha20poly1305_ietf_decrypt(pt, NULL, NULL, buf + 1 + PK_NONCE, n - 1 - PK_NONCE,
							(const unsigned char *)project_id, strlen(project_id), buf + 1,
							key);
	sodium_memzero(key, sizeof key);
	free(buf);
	if (rc != 0) {
		free(pt);
		return err_set(e, ERR_INVALID, "%s", bad);
	}
	*out_len = n - 1 - PK_NONCE - PK_TAG;
	pt[*out_len] = 0;
	*out = (char *)pt;
	return 0;
}
