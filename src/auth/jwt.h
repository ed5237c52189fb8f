#ifndef ACCORD_AUTH_JWT_H
#define ACCORD_AUTH_JWT_H

#include <stddef.h>

#include <jansson.h>

#include "base/err.h"

/* A JSON Web Token in compact form (RFC 7519: header.payload.signature, each Base64url
 * without padding), split and decoded.  Nothing here checks the signature or a claim:
 * auth/oidc_verify.h does. */
struct jwt {
	json_t *header;	       /* NEW: the header object */
	json_t *claims;	       /* NEW: the payload object */
	size_t signed_len;     /* the signing input is the token's first signed_len bytes */
	unsigned char *sig;    /* NEW: the signature's bytes */
	size_t sig_len;
};

#define JWT_MAX_BYTES 16384

/* Splits and decodes token (BORROWED) into out.  ERR_UNAUTH "malformed token: …" when it is
 * not three Base64url parts of which the first two are JSON objects, or longer than
 * JWT_MAX_BYTES.  On failure out holds nothing to clean up. */
int jwt_parse(const char *token, struct jwt *out, struct err *e) WUR;
void jwt_cleanup(struct jwt *t);

/* Whether text has the shape of a compact JWT (two dots, no spaces): how a bearer token from
 * an OpenID provider is told from an API key (Base64, no dots). */
int jwt_looks_like(const char *text);

/* Base64url without padding (RFC 4648 §5) of len bytes: NEW, NULL when out of memory or not
 * Base64url; *out_len its length. */
unsigned char *jwt_b64url_decode(const char *s, size_t len, size_t *out_len);

#endif
