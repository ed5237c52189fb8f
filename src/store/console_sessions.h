#ifndef ACCORD_STORE_CONSOLE_SESSIONS_H
#define ACCORD_STORE_CONSOLE_SESSIONS_H

#include <stddef.h>
#include <stdint.h>

#include "base/uuid.h"
#include "store/store.h"
#include "store/users.h"

/* Console sessions (schema 012, auth/console_session.h): a row per logged-in browser,
 * keyed by the SHA-256 of the session token (the token itself is never stored). */

#define CONSOLE_SESSION_HASH_LEN 32
#define CONSOLE_CSRF_MAX 64 /* bytes of a CSRF token, NUL included */

struct console_session {
	char user_id[UUID_STR_LEN];
	char csrf[CONSOLE_CSRF_MAX];
	int64_t created_at, last_seen_at;
};

/* A new session (created_at = last_seen_at = s->created_at).  A colliding hash is
 * ERR_CONFLICT (never happens with random tokens). */
int store_console_session_insert(struct store_conn *c, const uint8_t hash[CONSOLE_SESSION_HASH_LEN],
				 const struct console_session *s, struct err *e) WUR;

/* Authentication in one query: the session with this hash and its user.  ERR_NOT_FOUND
 * when there is no such session (logged out, purged, or its user deleted). */
int store_console_session_find_user(struct store_conn *c, const uint8_t hash[CONSOLE_SESSION_HASH_LEN],
				    struct console_session *s, struct user *u, struct err *e) WUR;

/* Sets last_seen_at (a session that is gone meanwhile is no error). */
int store_console_session_touch(struct store_conn *c, const uint8_t hash[CONSOLE_SESSION_HASH_LEN], int64_t now_ms,
				struct err *e) WUR;

/* Deletes the session; *n (may be NULL) receives 1 when there was one, else 0. */
int store_console_session_delete(struct store_conn *c, const uint8_t hash[CONSOLE_SESSION_HASH_LEN], size_t *n,
				 struct err *e) WUR;

/* One of a user's sessions as listed: its token's hash and times. */
struct console_session_entry {
	uint8_t hash[CONSOLE_SESSION_HASH_LEN];
	int64_t created_at, last_seen_at;
};

/* The sessions of user_id last seen at or after since_ms, the most recently seen first:
 * *out a new array of *n (free), NULL when none. */
int store_console_session_list_user(struct store_conn *c, const char *user_id, int64_t since_ms,
				    struct console_session_entry **out, size_t *n, struct err *e) WUR;

/* Deletes the session of hash if it belongs to user_id; *n receives 1 when there was one,
 * else 0. */
int store_console_session_delete_user(struct store_conn *c, const uint8_t hash[CONSOLE_SESSION_HASH_LEN],
				      const char *user_id, size_t *n, struct err *e) WUR;

/* Deletes every session last seen before cutoff_ms (Unix ms); *n (may be NULL) receives
 * how many. */
int store_console_session_purge(struct store_conn *c, int64_t cutoff_ms, size_t *n, struct err *e) WUR;

#endif
