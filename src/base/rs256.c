/* RS256 signatures by libcrypto loaded on demand (rs256.h). */
#include "base/rs256.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

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
	__typeof__(&d2i_PublicKey) d2i_public_key;
	__typeof__(&EVP_DigestVerifyInit) digest_verify_init;
	__typeof__(&EVP_DigestVerify) digest_verify;
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
	OSSL_SYM(d2i_public_key, "d2i_PublicKey");
	OSSL_SYM(digest_verify_init, "EVP_DigestVerifyInit");
	OSSL_SYM(digest_verify, "EVP_DigestVerify");
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

/* A DER length (X.690 definite form) at out (NULL: only counted); its size. */
static size_t der_len(size_t n, unsigned char *out)
{
	size_t k = 0;

	if (n < 0x80) {
		if (out)
			out[0] = (unsigned char)n;
		return 1;
	}
	for (size_t m = n; m; m >>= 8)
		k++;
	if (out) {
		out[0] = (unsigned char)(0x80 | k);
		for (size_t i = 0; i < k; i++)
			out[1 + i] = (unsigned char)(n >> (8 * (k - 1 - i)));
	}
	return 1 + k;
}

/* An unsigned big-endian integer as a DER INTEGER at out (NULL: only counted); its size. */
static size_t der_uint(const unsigned char *v, size_t n, unsigned char *out)
{
	size_t o = 0;
	bool pad;

	while (n > 1 && v[0] == 0)
		v++, n--;
	pad = n == 0 || (v[0] & 0x80);
	if (out)
		out[o] = 0x02;
	o++;
	o += der_len(n + pad, out ? out + o : NULL);
	if (out && pad)
		out[o] = 0;
	o += pad;
	if (out)
		memcpy(out + o, v, n);
	return o + n;
}

/* PKCS#1 RSAPublicKey: SEQUENCE { INTEGER n, INTEGER e }; new (caller frees). */
static unsigned char *rsa_public_der(const unsigned char *n, size_t n_len, const unsigned char *e, size_t e_len,
				     size_t *out_len)
{
	size_t body = der_uint(n, n_len, NULL) + der_uint(e, e_len, NULL), total = 1 + der_len(body, NULL) + body, o = 0;
	unsigned char *der = malloc(total);

	if (!der)
		return NULL;
	der[o++] = 0x30;
	o += der_len(body, der + o);
	o += der_uint(n, n_len, der + o);
	der_uint(e, e_len, der + o);
	*out_len = total;
	return der;
}

int rs256_verify(const unsigned char *n, size_t n_len, const unsigned char *e_bytes, size_t e_len, const void *data,
		 size_t data_len, const unsigned char *sig, size_t sig_len, struct err *e)
{
	unsigned char *der = NULL;
	const unsigned char *p;
	EVP_PKEY *key = NULL;
	EVP_MD_CTX *md = NULL;
	size_t der_size = 0;
	int rc = 0;

	pthread_once(&ossl_once, ossl_load);
	if (!ossl.digest_verify)
		return err_set(e, ERR_UNAVAILABLE, "%s", ossl_error);
	if (n_len == 0 || n_len > 2048 || e_len == 0 || e_len > 16)
		return err_set(e, ERR_INVALID, "not an RSA public key (modulus of %zu bytes, exponent of %zu)", n_len,
			       e_len);
	if (!(der = rsa_public_der(n, n_len, e_bytes, e_len, &der_size)))
		return err_set(e, ERR_INTERNAL, "out of memory");
	p = der;
	if (!(key = ossl.d2i_public_key(EVP_PKEY_RSA, NULL, &p, (long)der_size))) {
		rc = err_set(e, ERR_INVALID, "not an RSA public key");
		goto out;
	}
	if (!(md = ossl.md_ctx_new()) || ossl.digest_verify_init(md, NULL, ossl.sha256(), NULL, key) != 1) {
		rc = err_set(e, ERR_INTERNAL, "the RS256 verification could not start");
		goto out;
	}
	if (ossl.digest_verify(md, sig, sig_len, data, data_len) != 1)
		rc = err_set(e, ERR_UNAUTH, "the RS256 signature does not match");
out:
	if (md)
		ossl.md_ctx_free(md);
	if (key)
		ossl.pkey_free(key);
	free(der);
	return rc;
}
