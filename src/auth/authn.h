#ifndef ACCORD_AUTH_AUTHN_H
#define ACCORD_AUTH_AUTHN_H

#include <stddef.h>
#include <stdint.h>

#include "auth/principal.h"
#include "base/err.h"
#include "store/apikeys.h"
#include "store/store.h"

/* Authentication of the Authorization header:
 *   "Basic <b64(user:password)>"  local users, Argon2id hash (successful checks are cached
 *                                 for AUTHN_CACHE_SECONDS, keyed by a keyed BLAKE2b hash of
 *                                 the credentials, dropped whenever any user changes on this
 *                                 node; every hit is checked against the stored password
 *                                 hash, so a change on another node counts at once);
 *   "Bearer <key>" or "<key>"     API keys: the key is Base64 of random bytes; the store
 *                                 holds SHA-256 of the decoded bytes only;
 *   "Bearer <JWT>"                with --oidc-bearer, a token of the OpenID provider
 *                                 (auth/authn_oidc.h authn_oidc_bearer): method AUTH_OIDC.
 * Failures are ERR_UNAUTH with a message that does not say which part was wrong; a
 * disabled user and an expired key are ERR_UNAUTH too.  Thread-safe. */

#define AUTHN_CACHE_SECONDS 60
#define APIKEY_BYTES 32

/* Initialises the credential cache (call once at start-up). */
void authn_init(void);
void authn_cleanup(void);

int authn_header(struct store_conn *c, const char *authorization, struct principal *out, struct err *e) WUR;

/* A process session token (header X-Concord-SessionToken): the principal is the process's
 * initiator (or, after a form with runAs.keep, who submitted it), with method AUTH_SESSION,
 * session_process and session_project set; valid while the process has not reached a final
 * status.  ERR_UNAUTH otherwise. */
int authn_session(struct store_conn *c, const char *token, struct principal *out, struct err *e) WUR;

/* True when checking this header is cheap: anything but Basic credentials that are not in
 * the cache (those cost an Argon2id verification). */
bool authn_is_quick(const char *authorization);

/* A new random API key: its text (Base64, no padding, NUL-terminated) and its hash. */
void authn_apikey_new(char *text, size_t cap, uint8_t hash[APIKEY_HASH_LEN]);
/* Hash of a key given as text; ERR_INVALID when it is not Base64 of at least 16 bytes. */
int authn_apikey_hash(const char *text, uint8_t hash[APIKEY_HASH_LEN], struct err *e) WUR;

#endif
