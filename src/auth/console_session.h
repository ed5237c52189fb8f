#ifndef ACCORD_AUTH_CONSOLE_SESSION_H
#define ACCORD_AUTH_CONSOLE_SESSION_H

#include <stdbool.h>
#include <stdint.h>

#include "auth/principal.h"
#include "base/err.h"
#include "store/console_sessions.h"
#include "store/store.h"

/* Console sessions (issue 10, docs/security.md "Console sessions"): the cookie the web
 * console logs in with.  A session token is 32 random bytes as URL-safe Base64 (43
 * characters); the store keeps its SHA-256 only, so a copy of the database logs nobody
 * in.  Each session has a CSRF token (24 random bytes, URL-safe Base64) that the console
 * sends back on every change.  A session ends at logout, when its user is deleted, and
 * once it has not been used for `idle_ms`; a disabled user's sessions are refused.
 * Thread-safe (the state is in the store). */

#define CONSOLE_COOKIE "accord_session"
#define CONSOLE_TOKEN_LEN 44 /* characters of a token + NUL */
/* last_seen_at is written at most this often (or every idle/2 when that is shorter), so
 * that reads do not write on every request. */
#define CONSOLE_REFRESH_MS 60000

/* What a login hands to the browser. */
struct console_login {
	char token[CONSOLE_TOKEN_LEN];
	char csrf[CONSOLE_CSRF_MAX];
};

/* A new session for user_id; sessions idle for longer than idle_ms are purged first
 * (logins bound the table: it never holds more expired rows than logins since the last
 * one).  The token is wiped by the caller when done (sodium_memzero). */
int console_session_create(struct store_conn *c, const char *user_id, int64_t idle_ms, struct console_login *out,
			   struct err *e) WUR;

/* The value of the CONSOLE_COOKIE cookie in a Cookie header (NULL: none) into token;
 * false when there is no such cookie or its value cannot be a session token. */
bool console_session_cookie(const char *header, char token[CONSOLE_TOKEN_LEN]);

/* Authenticates a session token: out gets the user, method AUTH_CONSOLE and the CSRF
 * token.  ERR_UNAUTH for an unknown, logged-out or expired session and for a disabled
 * user.  When last_seen_at is due for a refresh but !may_write, nothing is written and
 * CONSOLE_SESSION_REFRESH is returned: call again where writes are allowed. */
#define CONSOLE_SESSION_REFRESH 1
int console_session_auth(struct store_conn *c, const char *token, int64_t idle_ms, bool may_write,
			 struct principal *out, struct err *e) WUR;

/* The public id of the session whose token hashes to hash: 32 hex characters derived
 * from the hash one way (BLAKE2b under a fixed label), so that listing sessions shows nothing that
 * finds or opens one.  id has CONSOLE_SESSION_ID_LEN bytes. */
#define CONSOLE_SESSION_ID_LEN 33
void console_session_id(const uint8_t hash[CONSOLE_SESSION_HASH_LEN], char id[CONSOLE_SESSION_ID_LEN]);

/* The hash of the session token in the request's Cookie header (NULL: none); false when
 * there is no session cookie. */
bool console_session_cookie_hash(const char *header, uint8_t hash[CONSOLE_SESSION_HASH_LEN]);

/* Deletes the session of token (logout); an unknown token is no error. */
int console_session_end(struct store_conn *c, const char *token, struct err *e) WUR;

/* The CSRF rule's token half: header (NULL: absent) equals the session's CSRF token,
 * compared in constant time.  False unless who is AUTH_CONSOLE. */
bool console_session_csrf_ok(const struct principal *who, const char *header);

#endif
