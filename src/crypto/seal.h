#ifndef ACCORD_CRYPTO_SEAL_H
#define ACCORD_CRYPTO_SEAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "crypto/masterkey.h"

/* Envelope encryption of secret data (DESIGN.md §5, docs/security.md).
 *
 * Each seal draws a fresh 32-byte data key.  The plaintext is sealed with the data key by
 * XChaCha20-Poly1305 (IETF) with associated data that binds it to the organization id and
 * the secret name, so ciphertext copied to another secret, or a secret renamed or moved
 * behind the server's back, no longer opens.  The data key itself is sealed ("wrapped")
 * with XChaCha20-Poly1305 under either the master key or, when the secret has a store
 * password, a key derived from that password with Argon2id and a per-secret random salt.
 *
 * Envelope format, version 1 (integers big-endian), stored as one BLOB:
 *
 *   off  len  field
 *     0    1  version = 1
 *     1    1  mode: 1 = master key, 2 = store password
 *     2    8  master key id (mode 1), zeros (mode 2)
 *    10   16  Argon2id salt (mode 2), zeros (mode 1)
 *    26    4  Argon2id opslimit (mode 2), 0 (mode 1)
 *    30    4  Argon2id memlimit in KiB (mode 2), 0 (mode 1)
 *    34   24  nonce of the wrapped data key
 *    58   48  wrapped data key (32 bytes + 16-byte tag); associated data = bytes 0..33
 *   106   24  nonce of the data
 *   130 n+16  sealed data; associated data = "accord secret v1" ‖ u32 len ‖ org id ‖ u32 len ‖ name
 *
 * The header fields (bytes 0..33) are authenticated by the wrap, so the version, mode,
 * key id and KDF parameters cannot be altered without detection.  New versions add a new
 * version byte; readers refuse versions they do not know.
 *
 * Every failure to open (wrong password, wrong master key, tampering, other org or name) is
 * ERR_INVALID with one fixed message that reveals nothing about which check failed.
 * All functions are thread-safe (libsodium must be initialised, see base/rand.h). */

enum seal_mode { SEAL_MODE_MASTER = 1, SEAL_MODE_PASSWORD = 2 };

#define SEAL_VERSION 1
#define SEAL_HEADER_BYTES 34
#define SEAL_OVERHEAD 146 /* envelope bytes beyond the plaintext */

/* What the data is bound to; both strings are borrowed, NUL-terminated. */
struct seal_binding {
	const char *org_id;
	const char *name;
};

/* Argon2id cost used for new password envelopes.  Defaults: opslimit 3, memlimit 64 MiB
 * (65536 KiB), about 0.1-0.2 s on one core.  seal_set_kdf lets tests and benchmarks pick a
 * cheaper cost; envelopes record their own cost, so opening is unaffected.  Not
 * thread-safe: call before serving. */
void seal_set_kdf(uint32_t opslimit, uint32_t memlimit_kib);

/* Seals pt[0..pt_len) into a new envelope *out (caller frees with free(); it holds no
 * plaintext).  password NULL selects the master key; otherwise the NUL-terminated store
 * password wraps the data key and mk may be NULL. */
int seal_encrypt(const struct masterkey *mk, const char *password, const struct seal_binding *b,
		 const unsigned char *pt, size_t pt_len, unsigned char **out, size_t *out_len, struct err *e) WUR;

/* Opens an envelope.  *pt is new (caller releases it with seal_plain_free), NUL-terminated
 * for convenience (the NUL is not counted).  A master-key envelope needs mk; a password
 * envelope needs password.  Errors: ERR_INVALID for a malformed envelope, a missing or
 * wrong password or any authentication failure; ERR_INTERNAL when the envelope was sealed
 * with a different master key than mk (a server configuration problem). */
int seal_decrypt(const struct masterkey *mk, const char *password, const struct seal_binding *b,
		 const unsigned char *env, size_t env_len, unsigned char **pt, size_t *pt_len, struct err *e) WUR;

/* The mode of an envelope, or 0 when it is not a well-formed version-1 envelope. */
enum seal_mode seal_mode(const unsigned char *env, size_t env_len);

/* True when a master-key envelope was wrapped by the key with this id. */
bool seal_uses_key(const unsigned char *env, size_t env_len, const struct masterkey *mk);

/* Master-key rotation: unwraps the data key with old_mk and wraps it with new_mk, in place.
 * The sealed data is untouched.  ERR_INVALID when env is not a master-key envelope of
 * old_mk or does not authenticate. */
int seal_rewrap(const struct masterkey *old_mk, const struct masterkey *new_mk, unsigned char *env, size_t env_len,
		struct err *e) WUR;

/* Wipes and frees plaintext returned by seal_decrypt (NULL is fine). */
void seal_plain_free(unsigned char *pt, size_t pt_len);

#endif
