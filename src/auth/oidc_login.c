/* The state, nonce and PKCE values of an SSO login (oidc_login.h). */
#include "auth/oidc_login.h"

#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "auth/jwt.h"
#include "base/b64.h"
#include "base/rand.h"
#include "base/str.h"

#define RAW 24 /* 16 random bytes and the expiry (big-endian seconds) */
#define MAC 16

void oidc_login_key(const unsigned char session_key[32], unsigned char key[32])
{
	static const char ctx[] = "accord oidc login v1";

	crypto_generichash(key, 32, (const unsigned char *)ctx, sizeof ctx - 1, session_key, 32);
}

static void encode(const void *p, size_t n, char *out, size_t cap)
{
	char *s = b64_encode(p, n, B64_URL_NOPAD);

	if (!s || str_fmt(out, cap, "%s", s))
		abort(); /* out of memory, or a cap below what the sizes above give */
	free(s);
}

/* nonce, verifier and challenge of raw. */
static void derive(const unsigned char key[32], const unsigned char raw[RAW], struct oidc_login *out)
{
	unsigned char in[1 + RAW], h[32];

	memcpy(in + 1, raw, RAW);
	in[0] = 'n';
	crypto_generichash(h, sizeof h, in, sizeof in, key, 32);
	encode(h, sizeof h, out->nonce, sizeof out->nonce);
	in[0] = 'v';
	crypto_generichash(h, sizeof h, in, sizeof in, key, 32);
	encode(h, sizeof h, out->verifier, sizeof out->verifier);
	crypto_hash_sha256(h, (const unsigned char *)out->verifier, strlen(out->verifier));
	encode(h, sizeof h, out->challenge, sizeof out->challenge);
	sodium_memzero(h, sizeof h);
}

void oidc_login_new(const unsigned char key[32], int64_t now_ms, struct oidc_login *out)
{
	unsigned char raw[RAW + MAC];
	uint64_t exp = (uint64_t)(now_ms / 1000 + OIDC_LOGIN_SECONDS);

	rand_bytes(raw, 16);
	for (int i = 0; i < 8; i++)
		raw[16 + i] = (unsigned char)(exp >> (56 - 8 * i));
	crypto_generichash(raw + RAW, MAC, raw, RAW, key, 32);
	encode(raw, sizeof raw, out->state, sizeof out->state);
	derive(key, raw, out);
}

int oidc_login_of(const unsigned char key[32], const char *state, int64_t now_ms, struct oidc_login *out,
		  struct err *e)
{
	unsigned char mac[MAC], *raw;
	size_t n = 0;
	uint64_t exp = 0;
	int rc = 0;

	memset(out, 0, sizeof *out);
	raw = strlen(state) < OIDC_STATE_LEN ? jwt_b64url_decode(state, strlen(state), &n) : NULL;
	if (!raw || n != RAW + MAC) {
		free(raw);
		return err_set(e, ERR_INVALID, "the OIDC login's state is malformed");
	}
	crypto_generichash(mac, MAC, raw, RAW, key, 32);
	for (int i = 0; i < 8; i++)
		exp = exp << 8 | raw[16 + i];
	if (sodium_memcmp(mac, raw + RAW, MAC) != 0)
		rc = err_set(e, ERR_INVALID, "the OIDC login's state was not made by this server");
	else if ((int64_t)exp < now_ms / 1000)
		rc = err_set(e, ERR_INVALID, "the OIDC login took longer than %d seconds: log in again", OIDC_LOGIN_SECONDS);
	if (rc == 0) {
		str_fmt_cut(out->state, sizeof out->state, "%s", state);
		derive(key, raw, out);
	}
	free(raw);
	return rc;
}
