#ifndef ACCORD_CRYPTO_PAYLOAD_H
#define ACCORD_CRYPTO_PAYLOAD_H

#include <stddef.h>

#include "base/err.h"
#include "base/str.h"

/* The plaintext layout of each secret type: what is sealed, and byte for byte what
 * POST …/secret/{name}/data returns (Concord-compatible, reference §5.2).
 *
 *   DATA               the raw bytes.
 *   KEY_PAIR           int32BE len(pub) ‖ pub ‖ int32BE len(priv) ‖ priv; each length 0..8192.
 *   USERNAME_PASSWORD  Java DataOutput.writeUTF(username): uint16BE byte length ‖ modified
 *                      UTF-8 (NUL as C0 80, characters above U+FFFF as two 3-byte surrogates),
 *                      at most 65535 bytes; then int32BE len ‖ UTF-8 password.
 *
 * Encoders return a new buffer (caller releases it with payload_free, which wipes it).
 * Decoders check every length against the input and refuse trailing bytes; failures are
 * ERR_INVALID with a message that names the field, never its content.  Thread-safe. */

#define PAYLOAD_KEY_MAX 8192
#define PAYLOAD_UTF_MAX 65535

int payload_keypair_encode(struct str pub, struct str priv, unsigned char **out, size_t *out_len, struct err *e) WUR;
/* pub and priv are slices into p. */
int payload_keypair_decode(const unsigned char *p, size_t len, struct str *pub, struct str *priv, struct err *e) WUR;

/* username must be valid UTF-8. */
int payload_userpass_encode(struct str username, struct str password, unsigned char **out, size_t *out_len,
			    struct err *e) WUR;
/* *username is new UTF-8 (NUL-terminated, caller releases with payload_free(*username,
 * *username_len)); password is a slice into p. */
int payload_userpass_decode(const unsigned char *p, size_t len, char **username, size_t *username_len,
			    struct str *password, struct err *e) WUR;

/* Wipes and frees (NULL is fine). */
void payload_free(void *p, size_t len);

#endif
