#ifndef ACCORD_CRYPTO_SESSION_H
#define ACCORD_CRYPTO_SESSION_H

#include <stdint.h>

#include "crypto/masterkey.h"

/* Process session tokens (processInfo.sessionToken, header X-Concord-SessionToken): the
 * credential a running flow uses for its own API calls, as its initiator, until the
 * process ends.  A token is derived, not stored: Base64url of keyed BLAKE2b-256 over the
 * instance id, keyed with a key derived from the master key — so every node that shares
 * the master key can hand a resumed process the same token, and the store holds only
 * SHA-256 of it (processes.session_hash). */

#define SESSION_KEY_BYTES 32
#define SESSION_TOKEN_LEN 44 /* 43 characters and the NUL */

void session_key_derive(const struct masterkey *mk, unsigned char key[SESSION_KEY_BYTES]);
void session_token(const unsigned char key[SESSION_KEY_BYTES], const char *instance_id,
		   char out[SESSION_TOKEN_LEN]);
void session_token_hash(const char *token, uint8_t out[32]);

#endif
