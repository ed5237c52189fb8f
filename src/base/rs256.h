#ifndef ACCORD_BASE_RS256_H
#define ACCORD_BASE_RS256_H

#include <stddef.h>

#include "base/err.h"

/* RSASSA-PKCS1-v1_5 signatures with SHA-256 (JWT's RS256, Java's SHA256withRSA) by an RSA
 * private key in PEM (PKCS#8 "PRIVATE KEY" or PKCS#1 "RSA PRIVATE KEY").  OpenSSL's
 * libcrypto is loaded on the first call (once, thread-safe), as base/archive_api.h loads
 * libarchive: nothing of it is linked into the binary.
 *
 * Signs data_len bytes of data with the NUL-terminated pem (BORROWED); *sig (NEW, caller
 * frees) gets the signature, *sig_len its length.  Errors: ERR_UNAVAILABLE libcrypto
 * cannot be loaded (the message says why), ERR_INVALID pem is not an RSA private key,
 * ERR_INTERNAL the signature failed.  The messages never quote the key.  Thread-safe. */
int rs256_sign(const char *pem, const void *data, size_t data_len, unsigned char **sig, size_t *sig_len,
	       struct err *e) __attribute__((warn_unused_result));

/* Checks an RS256 signature sig (sig_len bytes) over data with the RSA public key of modulus
 * n and public exponent e_bytes (unsigned big-endian, as a JWK's "n" and "e" decode), loading
 * libcrypto as rs256_sign does.  0 when it matches; ERR_UNAUTH when it does not,
 * ERR_INVALID for a key that is no RSA key, ERR_UNAVAILABLE when libcrypto cannot be
 * loaded.  Thread-safe. */
int rs256_verify(const unsigned char *n, size_t n_len, const unsigned char *e_bytes, size_t e_len, const void *data,
		 size_t data_len, const unsigned char *sig, size_t sig_len, struct err *e)
    __attribute__((warn_unused_result));

#endif
