#include "crypto/session.h"

#include <string.h>

#include <sodium.h>

void session_key_derive(const struct masterkey *mk, unsigned char key[SESSION_KEY_BYTES])
{
	static const char ctx[] = "accord process session tokens v1";

	crypto_generichash(key, SESSION_KEY_BYTES, (const unsigned char *)ctx, sizeof ctx - 1, mk->key,
			   MASTERKEY_BYTES);
}

void session_token(const unsigned char key[SESSION_KEY_BYTES], const char *instance_id, char out[SESSION_TOKEN_LEN])
{
	unsigned char mac[32];

	crypto_generichash(mac, sizeof mac, (const unsigned char *)instance_id, strlen(instance_id), key,
			   SESSION_KEY_BYTES);
	sodium_bin2base64(out, SESSION_TOKEN_LEN, mac, sizeof mac, sodium_base64_VARIANT_URLSAFE_NO_PADDING);
	sodium_memzero(mac, sizeof mac);
}

void session_token_hash(const char *token, uint8_t out[32])
{
	crypto_hash_sha256(out, (const unsigned char *)token, strlen(token));
}
