#ifndef ACCORD_CRYPTO_SIGNING_H
#define ACCORD_CRYPTO_SIGNING_H

#include "base/err.h"

/* Process data signing, Concord's `process.signingKeyPath`: with a signing key configured
 * (`accord serve --process-signing-key`), each process's `initiator` and `currentUser`
 * carry `usernameSignature`, the Base64 (standard, padded) of the SHA256withRSA signature
 * of the username's UTF-8 bytes, so that a flow's task or an outside service can check,
 * with the public key, that the username came from the server and not from the flow. */

/* Reads the RSA private key in PEM (PKCS#8 or PKCS#1) at path and checks that it signs:
 * the PEM text (NEW, a secret: free with signing_key_free).  Errors: unreadable, over
 * 64 KiB, not an RSA private key, libcrypto missing — each naming path, never the key. */
char *signing_key_load(const char *path, struct err *e);

/* Wipes and frees a key from signing_key_load (NULL is fine). */
void signing_key_free(char *pem);

/* The Base64 signature of text by pem (NEW), or NULL with e set. Thread-safe. */
char *signing_sign(const char *pem, const char *text, struct err *e);

#endif
