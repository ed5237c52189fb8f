#include "crypto/seal.h"

#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "base/metrics.h"

#define KEY_BYTES crypto_aead_xchacha20poly1305_ietf_KEYBYTES
#define NONCE_BYTES crypto_aead_xchacha20poly1305_ietf_NPUBBYTES
#define TAG_BYTES crypto_aead_xchacha20poly1305_ietf_ABYTES
#define SALT_BYTES 16

#define OFF_VERSION 0
#define OFF_MODE 1
#define OFF_KID 2
#define OFF_SALT 10
#define OFF_OPS 26
#define OFF_MEM 30
#define OFF_WRAP_NONCE 34
#define OFF_WRAPPED 58
#define OFF_DATA_NONCE (OFF_WRAPPED + KEY_BYTES + TAG_BYTES)
#define OFF_DATA (OFF_DATA_NONCE + NONCE_BYTES)

/* Bounds on the KDF cost read from an envelope, so a tampered row cannot make the server
 * spend minutes or gigabytes before the wrap fails to authenticate. */
#define KDF_OPS_MAX 16
#define KDF_MEM_KIB_MIN 8
#define KDF_MEM_KIB_MAX (1024 * 1024)

_Static_assert(OFF_DATA == 130, "envelope layout");
_Static_assert(OFF_DATA + TAG_BYTES == SEAL_OVERHEAD, "envelope overhead");
_Static_assert(SEAL_HEADER_BYTES == OFF_WRAP_NONCE, "header");

static const char ad_context[] = "accord secret v1";
static const char open_failed[] = "Error decrypting the secret: invalid data or password";

static uint32_t kdf_ops = 3;
static uint32_t kdf_mem_kib = 64 * 1024;

void seal_set_kdf(uint32_t opslimit, uint32_t memlimit_kib)
{
	kdf_ops = opslimit;
	kdf_mem_kib = memlimit_kib;
}

static void put_u32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v >> 24);
	p[1] = (unsigned char)(v >> 16);
	p[2] = (unsigned char)(v >> 8);
	p[3] = (unsigned char)v;
}

static uint32_t get_u32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

/* "accord secret v1" ‖ u32 len ‖ org id ‖ u32 len ‖ name, in a new buffer. */
static int data_ad(const struct seal_binding *b, unsigned char **out, size_t *len, struct err *e)
{
	size_t org_len = strlen(b->org_id), name_len = strlen(b->name), n;
	unsigned char *ad, *p;

	if (org_len > UINT32_MAX || name_len > UINT32_MAX ||
	    __builtin_add_overflow(sizeof ad_context - 1 + 8, org_len, &n) || __builtin_add_overflow(n, name_len, &n))
		return err_set(e, ERR_INVALID, "secret binding too long");
	ad = malloc(n);
	if (!ad)
		return err_set(e, ERR_INTERNAL, "out of memory");
	p = ad;
	memcpy(p, ad_context, sizeof ad_context - 1);
	p += sizeof ad_context - 1;
	put_u32(p, (uint32_t)org_len);
	memcpy(p + 4, b->org_id, org_len);
	p += 4 + org_len;
	put_u32(p, (uint32_t)name_len);
	memcpy(p + 4, b->name, name_len);
	*out = ad;
	*len = n;
	return 0;
}

static int derive_key(const char *password, const unsigned char *hdr, unsigned char key[KEY_BYTES], struct err *e)
{
	uint32_t ops = get_u32(hdr + OFF_OPS), mem_kib = get_u32(hdr + OFF_MEM);

	if (ops < crypto_pwhash_OPSLIMIT_MIN || ops > KDF_OPS_MAX || mem_kib < KDF_MEM_KIB_MIN ||
	    mem_kib > KDF_MEM_KIB_MAX)
		return err_set(e, ERR_INVALID, open_failed);
	if (crypto_pwhash(key, KEY_BYTES, password, strlen(password), hdr + OFF_SALT, ops, (size_t)mem_kib * 1024,
			  crypto_pwhash_ALG_ARGON2ID13) != 0)
		return err_set(e, ERR_INTERNAL, "key derivation failed (out of memory)");
	return 0;
}

/* The key that wraps the data key: the master key or the password-derived key. */
static int wrapping_key(const struct masterkey *mk, const char *password, const unsigned char *hdr,
			unsigned char key[KEY_BYTES], struct err *e)
{
	if (hdr[OFF_MODE] == SEAL_MODE_PASSWORD) {
		if (!password)
			return err_set(e, ERR_INVALID, open_failed);
		return derive_key(password, hdr, key, e);
	}
	if (!mk)
		return err_set(e, ERR_INTERNAL, "no master key loaded");
	if (sodium_memcmp(hdr + OFF_KID, mk->id, MASTERKEY_ID_BYTES) != 0)
		return err_set(e, ERR_INTERNAL, "the secret was sealed with a different master key");
	memcpy(key, mk->key, KEY_BYTES);
	return 0;
}

static void write_header(unsigned char *env, const struct masterkey *mk, const char *password)
{
	memset(env, 0, SEAL_HEADER_BYTES);
	env[OFF_VERSION] = SEAL_VERSION;
	if (password) {
		env[OFF_MODE] = SEAL_MODE_PASSWORD;
		randombytes_buf(env + OFF_SALT, SALT_BYTES);
		put_u32(env + OFF_OPS, kdf_ops);
		put_u32(env + OFF_MEM, kdf_mem_kib);
	} else {
		env[OFF_MODE] = SEAL_MODE_MASTER;
		memcpy(env + OFF_KID, mk->id, MASTERKEY_ID_BYTES);
	}
}

static void wrap(unsigned char *env, const unsigned char dk[KEY_BYTES], const unsigned char wk[KEY_BYTES])
{
	randombytes_buf(env + OFF_WRAP_NONCE, NONCE_BYTES);
	crypto_aead_xchacha20poly1305_ietf_encrypt(env + OFF_WRAPPED, NULL, dk, KEY_BYTES, env, SEAL_HEADER_BYTES, NULL,
						   env + OFF_WRAP_NONCE, wk);
}

static int unwrap(const unsigned char *env, const unsigned char wk[KEY_BYTES], unsigned char dk[KEY_BYTES],
		  struct err *e)
{
	if (crypto_aead_xchacha20poly1305_ietf_decrypt(dk, NULL, NULL, env + OFF_WRAPPED, KEY_BYTES + TAG_BYTES, env,
						       SEAL_HEADER_BYTES, env + OFF_WRAP_NONCE, wk) != 0)
		return err_set(e, ERR_INVALID, open_failed);
	return 0;
}

int seal_encrypt(const struct masterkey *mk, const char *password, const struct seal_binding *b,
		 const unsigned char *pt, size_t pt_len, unsigned char **out, size_t *out_len, struct err *e)
{
	unsigned char dk[KEY_BYTES], wk[KEY_BYTES];
	unsigned char *env = NULL, *ad = NULL;
	size_t env_len, ad_len = 0;
	int rc = 0;

	*out = NULL;
	if (!password && !mk)
		return err_set(e, ERR_INTERNAL, "no master key loaded");
	if (__builtin_add_overflow(pt_len, (size_t)SEAL_OVERHEAD, &env_len))
		return err_set(e, ERR_TOO_LARGE, "secret too large");
	rc = data_ad(b, &ad, &ad_len, e);
	if (rc < 0)
		return rc;
	env = malloc(env_len);
	if (!env) {
		rc = err_set(e, ERR_INTERNAL, "out of memory");
		goto out;
	}
	write_header(env, mk, password);
	rc = wrapping_key(mk, password, env, wk, e);
	if (rc < 0)
		goto out;
	crypto_aead_xchacha20poly1305_ietf_keygen(dk);
	wrap(env, dk, wk);
	randombytes_buf(env + OFF_DATA_NONCE, NONCE_BYTES);
	crypto_aead_xchacha20poly1305_ietf_encrypt(env + OFF_DATA, NULL, pt, pt_len, ad, ad_len, NULL,
						   env + OFF_DATA_NONCE, dk);
	*out = env;
	*out_len = env_len;
	env = NULL;
out:
	sodium_memzero(dk, sizeof dk);
	sodium_memzero(wk, sizeof wk);
	free(env);
	free(ad);
	return rc;
}

enum seal_mode seal_mode(const unsigned char *env, size_t env_len)
{
	if (!env || env_len < SEAL_OVERHEAD || env[OFF_VERSION] != SEAL_VERSION)
		return 0;
	if (env[OFF_MODE] != SEAL_MODE_MASTER && env[OFF_MODE] != SEAL_MODE_PASSWORD)
		return 0;
	return (enum seal_mode)env[OFF_MODE];
}

bool seal_uses_key(const unsigned char *env, size_t env_len, const struct masterkey *mk)
{
	return seal_mode(env, env_len) == SEAL_MODE_MASTER &&
	       sodium_memcmp(env + OFF_KID, mk->id, MASTERKEY_ID_BYTES) == 0;
}

int seal_decrypt(const struct masterkey *mk, const char *password, const struct seal_binding *b,
		 const unsigned char *env, size_t env_len, unsigned char **pt, size_t *pt_len, struct err *e)
{
	unsigned char dk[KEY_BYTES], wk[KEY_BYTES];
	unsigned char *plain = NULL, *ad = NULL;
	size_t ad_len = 0, n;
	int rc;

	*pt = NULL;
	*pt_len = 0;
	if (!seal_mode(env, env_len))
		return err_set(e, ERR_INVALID, open_failed);
	n = env_len - SEAL_OVERHEAD;
	rc = data_ad(b, &ad, &ad_len, e);
	if (rc < 0)
		return rc;
	rc = wrapping_key(mk, password, env, wk, e);
	if (rc < 0)
		goto out;
	rc = unwrap(env, wk, dk, e);
	if (rc < 0)
		goto out;
	plain = malloc(n + 1);
	if (!plain) {
		rc = err_set(e, ERR_INTERNAL, "out of memory");
		goto out;
	}
	if (crypto_aead_xchacha20poly1305_ietf_decrypt(plain, NULL, NULL, env + OFF_DATA, n + TAG_BYTES, ad, ad_len,
						       env + OFF_DATA_NONCE, dk) != 0) {
		rc = err_set(e, ERR_INVALID, open_failed);
		goto out;
	}
	plain[n] = '\0';
	*pt = plain;
	*pt_len = n;
	plain = NULL;
	metrics_inc(MC_SECRETS_DECRYPTED, 1);
out:
	sodium_memzero(dk, sizeof dk);
	sodium_memzero(wk, sizeof wk);
	seal_plain_free(plain, n);
	free(ad);
	return rc;
}

int seal_rewrap(const struct masterkey *old_mk, const struct masterkey *new_mk, unsigned char *env, size_t env_len,
		struct err *e)
{
	unsigned char dk[KEY_BYTES];
	int rc;

	if (seal_mode(env, env_len) != SEAL_MODE_MASTER || !seal_uses_key(env, env_len, old_mk))
		return err_set(e, ERR_INVALID, "not an envelope of the previous master key");
	rc = unwrap(env, old_mk->key, dk, e);
	if (rc == 0) {
		memcpy(env + OFF_KID, new_mk->id, MASTERKEY_ID_BYTES);
		wrap(env, dk, new_mk->key);
	}
	sodium_memzero(dk, sizeof dk);
	return rc;
}

void seal_plain_free(unsigned char *pt, size_t pt_len)
{
	if (!pt)
		return;
	sodium_memzero(pt, pt_len);
	free(pt);
}
