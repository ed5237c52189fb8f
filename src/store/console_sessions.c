#include "store/console_sessions.h"

#include <stdio.h>
#include <string.h>

#define SESSION_COLS_OF(t) t ".user_id, " t ".csrf_token, " t ".created_at, " t ".last_seen_at"

struct session_and_user {
	struct console_session *s;
	struct user *u;
};

static void read_row(struct store_stmt *st, void *out)
{
	struct session_and_user *su = out;

	store_col_copy(st, 0, su->s->user_id, sizeof su->s->user_id);
	store_col_copy(st, 1, su->s->csrf, sizeof su->s->csrf);
	su->s->created_at = store_col_int64(st, 2);
	su->s->last_seen_at = store_col_int64(st, 3);
	store_user_read(st, 4, su->u);
}

int store_console_session_insert(struct store_conn *c, const uint8_t hash[CONSOLE_SESSION_HASH_LEN],
				 const struct console_session *s, struct err *e)
{
	static const char SQL[] = "INSERT INTO console_sessions (token_hash, user_id, csrf_token, created_at,"
				  " last_seen_at) VALUES (?, ?, ?, ?, ?)";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_blob(st, 1, hash, CONSOLE_SESSION_HASH_LEN);
	store_bind_text(st, 2, s->user_id);
	store_bind_text(st, 3, s->csrf);
	store_bind_int64(st, 4, s->created_at);
	store_bind_int64(st, 5, s->created_at);
	return store_step_done(st, e);
}

int store_console_session_find_user(struct store_conn *c, const uint8_t hash[CONSOLE_SESSION_HASH_LEN],
				    struct console_session *s, struct user *u, struct err *e)
{
	static const char SQL[] = "SELECT " SESSION_COLS_OF("s") ", " USER_COLS_OF(
	    "u") " FROM console_sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	struct session_and_user su = {s, u};

	if (!st)
		return -1;
	store_bind_blob(st, 1, hash, CONSOLE_SESSION_HASH_LEN);
	return store_one(st, read_row, &su, "Console session", "(by token)", e);
}

int store_console_session_touch(struct store_conn *c, const uint8_t hash[CONSOLE_SESSION_HASH_LEN], int64_t now_ms,
				struct err *e)
{
	static const char SQL[] = "UPDATE console_sessions SET last_seen_at = ? WHERE token_hash = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_int64(st, 1, now_ms);
	store_bind_blob(st, 2, hash, CONSOLE_SESSION_HASH_LEN);
	return store_step_done(st, e);
}

int store_console_session_delete(struct store_conn *c, const uint8_t hash[CONSOLE_SESSION_HASH_LEN], size_t *n,
				 struct err *e)
{
	static const char SQL[] = "DELETE FROM console_sessions WHERE token_hash = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_blob(st, 1, hash, CONSOLE_SESSION_HASH_LEN);
	rc = store_step_done(st, e);
	if (rc == 0 && n)
		*n = (size_t)store_changes(c);
	return rc;
}

int store_console_session_purge(struct store_conn *c, int64_t cutoff_ms, size_t *n, struct err *e)
{
	static const char SQL[] = "DELETE FROM console_sessions WHERE last_seen_at < ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_int64(st, 1, cutoff_ms);
	rc = store_step_done(st, e);
	if (rc == 0 && n)
		*n = (size_t)store_changes(c);
	return rc;
}

static void read_entry(struct store_stmt *st, void *out)
{
	struct console_session_entry *en = out;
	size_t len = 0;
	const void *hash = store_col_blob(st, 0, &len);

	memset(en->hash, 0, sizeof en->hash);
	if (hash && len == sizeof en->hash)
		memcpy(en->hash, hash, len);
	en->created_at = store_col_int64(st, 1);
	en->last_seen_at = store_col_int64(st, 2);
}

int store_console_session_list_user(struct store_conn *c, const char *user_id, int64_t since_ms,
				    struct console_session_entry **out, size_t *n, struct err *e)
{
	static const char SQL[] = "SELECT token_hash, created_at, last_seen_at FROM console_sessions"
				  " WHERE user_id = ? AND last_seen_at >= ? ORDER BY last_seen_at DESC, created_at DESC";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, user_id);
	store_bind_int64(st, 2, since_ms);
	return store_collect(st, sizeof **out, read_entry, (void **)out, n, e);
}

int store_console_session_delete_user(struct store_conn *c, const uint8_t hash[CONSOLE_SESSION_HASH_LEN],
				      const char *user_id, size_t *n, struct err *e)
{
	static const char SQL[] = "DELETE FROM console_sessions WHERE token_hash = ? AND user_id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_blob(st, 1, hash, CONSOLE_SESSION_HASH_LEN);
	store_bind_text(st, 2, user_id);
	rc = store_step_done(st, e);
	*n = rc == 0 ? (size_t)store_changes(c) : 0;
	return rc;
}
