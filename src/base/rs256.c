/* RS256 signatures by libcrypto loaded on demand (rs256.h). */
#include "base/rs256.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "base/str.h"

#ifndef CRYPTO_SONAME
#define CRYPTO_SONAME "libcrypto.so.3"
#endif

static struct {
	__typeof__(&BIO_new_mem_buf) bio_new_mem_buf;
	__typeof__(&BIO_free) bio_free;
	__typeof__(&PEM_read_bio_PrivateKey) pem_read_privatekey;
	__typeof__(&EVP_PKEY_is_a) pkey_is_a;
	__typeof__(&EVP_PKEY_free) pkey_free;
	__typeof__(&EVP_MD_CTX_new) md_ctx_new;
	__typeof__(&EVP_MD_CTX_free) md_ctx_free;
	__typeof__(&EVP_sha256) sha256;
	__typeof__(&EVP_DigestSignInit) digest_sign_init;
	__typeof__(&EVP_DigestSign) digest_sign;
} ossl;
static pthread_once_t ossl_once = PTHREAD_ONCE_INIT;
static char ossl_error[300];

#define OSSL_SYM(field, name)                                                                                          \
	do {                                                                                                           \
		if (!(*(void **)&api.field = dlsym(h, name))) {                                                        \
			str_fmt_cut(ossl_error, sizeof ossl_error, "%s has no %s", CRYPTO_SONAME, name);               \
			return;                                                                                        \
		}                                                                                                      \
	} while (0)

static void ossl_load(void)
{
	__typeof__(ossl) api;
	void *h = dlopen(CRYPTO_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		str_fmt_cut(ossl_error, sizeof ossl_error, "cannot load %s (package libssl3): %s", CRYPTO_SONAME,
			    dlerror());
		return;
	}
	OSSL_SYM(bio_new_mem_buf, "BIO_new_mem_buf");
	OSSL_SYM(bio_free, "BIO_free");
	OSSL_SYM(pem_read_privatekey, "PEM_read_bio_PrivateKey");
	OSSL_SYM(pkey_is_a, "EVP_PKEY_is_a");
	OSSL_SYM(pkey_free, "EVP_PKEY_free");
	OSSL_SYM(md_ctx_new, "EVP_MD_CTX_new");
	OSSL_SYM(md_ctx_free, "EVP_MD_CTX_free");
	OSSL_SYM(sha256, "EVP_sha256");
	OSSL_SYM(digest_sign_init, "EVP_DigestSignInit");
	OSSL_SYM(digest_sign, "EVP_DigestSign");
	ossl = api;
}

int rs256_sign(const char *pem, const void *data, size_t data_len, unsigned char **sig, size_t *sig_len,
	       struct err *e)
{
	EVP_PKEY *key = NULL;
	EVP_MD_CTX *md = NULL;
	BIO *bio = NULL;
	size_t len = 0;
	int rc = 0;

	*sig = NULL;
	*sig_len = 0;
	pthread_once(&ossl_once, ossl_load);
	if (!ossl.digest_sign)
		return err_set(e, ERR_UNAVAILABLE, "%s", ossl_error);
	if (!(bio = ossl.bio_new_mem_buf(pem, -1)) || !(key = ossl.pem_read_privatekey(bio, NULL, NULL, NULL)) ||
	    !ossl.pkey_is_a(key, "RSA")) {
		rc = err_set(e, ERR_INVALID, "not an RSA private key in PEM format");
		goto out;
	}
	if (!(md = ossl.md_ctx_new()) || ossl.digest_sign_init(md, NULL, ossl.sha256(), NULL, key) != 1 ||
	    ossl.digest_sign(md, NULL, &len, data, data_len) != 1 || !(*sig = malloc(len)) ||
	    ossl.digest_sign(md, *sig, &len, data, data_len) != 1) {
		free(*sig);
		*sig = NULL;
		rc = err_set(e, ERR_INTERNAL, "the RS256 signature failed");
		goto out;
	}
	*sig_len = len;
out:
	if (md)
		ossl.md_ctx_free(md);
	if (key)
		ossl.pkey_free(key);
	if (bio)
		ossl.bio_free(bio);
	return rc;
}
