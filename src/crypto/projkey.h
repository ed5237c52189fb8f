#ifndef ACCORD_CRYPTO_PROJKEY_H
#define ACCORD_CRYPTO_PROJKEY_H

#include <stddef.h>

#include "base/err.h"
#include "crypto/masterkey.h"

/* Per-project encryption of single values (Concord's crypto.encryptString/decryptString
 * and the project `encrypt` endpoint; docs/security.md "Project keys").
 *
 * The project key is derived, never stored: BLAKE2b-256 keyed with the master key over
 * "accord project key v1" ‖ 0x00 ‖ project id.  A value is sealed with XChaCha20-Poly1305
 * (IETF) under that key with the project id as associated data; the result is standard
 * Base64 of 0x01 (version) ‖ 24-byte nonce ‖ ciphertext ‖ 16-byte tag.  Only the same
 * server (same master key) and the same project can open it.  Thread-safe. */

/* A new Base64 string (caller frees). */
char *projkey_encrypt(const struct masterkey *mk, const char *project_id, const char *value, size_t len, struct err *e);

/* The plaintext as a new NUL-terminated buffer (caller releases it with
 * payload_free(*out, *out_len + 1)).  Any failure is ERR_INVALID with one fixed message. */
int projkey_decrypt(const struct masterkey *mk, const char *project_id, const char *b64, char **out, size_t *out_len,
		    struct err *e) WUR;

#endif
