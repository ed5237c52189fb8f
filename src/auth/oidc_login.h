#ifndef ACCORD_AUTH_OIDC_LOGIN_H
#define ACCORD_AUTH_OIDC_LOGIN_H

#include <stdint.h>

#include "base/err.h"

/* The values of one SSO login (docs/security.md "OpenID Connect"), kept by nobody: the
 * state is 16 random bytes and an expiry, MACed with a key derived from the master key
 * (so any node that shares it can finish a login another began); the nonce and the PKCE
 * verifier are derived from the state under the same key, and the challenge is the
 * verifier's SHA-256 (S256).  The state goes to the provider and, in a cookie, to the
 * browser that began the login: the callback needs both to agree. */
#define OIDC_LOGIN_SECONDS 600
#define OIDC_STATE_LEN 64
#define OIDC_VALUE_LEN 48

struct oidc_login {
	char state[OIDC_STATE_LEN];
	char nonce[OIDC_VALUE_LEN];
	char verifier[OIDC_VALUE_LEN];
	char challenge[OIDC_VALUE_LEN];
};

/* The login key from the server's session key (api.h struct app). */
void oidc_login_key(const unsigned char session_key[32], unsigned char key[32]);

/* A new login, valid OIDC_LOGIN_SECONDS from now_ms. */
void oidc_login_new(const unsigned char key[32], int64_t now_ms, struct oidc_login *out);

/* The login of state: ERR_INVALID when state was not made under key (or is malformed), or
 * has expired. */
int oidc_login_of(const unsigned char key[32], const char *state, int64_t now_ms, struct oidc_login *out,
		  struct err *e) WUR;

#endif
