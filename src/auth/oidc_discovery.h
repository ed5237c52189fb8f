#ifndef ACCORD_AUTH_OIDC_DISCOVERY_H
#define ACCORD_AUTH_OIDC_DISCOVERY_H

#include "base/err.h"

/* The provider's discovery document (auth/oidc.c), as the realm's modules need it. */
#define OIDC_URL_MAX 1024
#define OIDC_RETRY_MS 2000

struct oidc_discovery {
	char issuer[OIDC_URL_MAX];
	char authorize[OIDC_URL_MAX];
	char token[OIDC_URL_MAX];
	char jwks[OIDC_URL_MAX];
	char end_session[OIDC_URL_MAX]; /* "": none */
	char userinfo[OIDC_URL_MAX];	/* "": none (then opaque bearer tokens cannot be checked) */
};

/* A copy of the document: fetched on the first call and kept; a call more than
 * OIDC_RETRY_MS after a failed fetch fetches again (one sooner gets that fetch's error).  ERR_UNAVAILABLE "OIDC provider unavailable: …" when it cannot be had or
 * lacks a field (or its issuer is not the one --oidc-discovery-url names).  Thread-safe. */
int oidc_discovery_get(struct oidc_discovery *out, struct err *e) WUR;

/* The keys' part (auth/oidc_keys.c): verifies the RS256 signature of a parsed token with
 * the provider's key of kid (NULL: the only key), fetching the keys when they are not held
 * or lack kid (the latter at most every --oidc-jwks-refetch; a failed fetch is tried again only
 * OIDC_RETRY_MS later).  ERR_UNAUTH when the key is
 * unknown or the signature does not match, ERR_UNAVAILABLE when the keys cannot be had. */
struct jwt;
int oidc_keys_verify(const struct oidc_discovery *d, const char *token, const struct jwt *t, const char *kid,
		     struct err *e) WUR;
void oidc_keys_cleanup(void);

/* Forgets the userinfo answers kept (auth/oidc_userinfo.c). */
void oidc_userinfo_cleanup(void);

#endif
