#include "store/apikeys.h"

#include <stdio.h>
#include <stdlib.h>

#define KEY_COLS "id, user_id, name, expired_at, created_at, scopes, rate_count, rate_window_ms"
#define KEY_N_COLS 8

static void read_row(struct store_stmt *st, void *out)
{
	struct apikey *k = out;

	store_col_copy(st, 0, k->id, sizeof k->id);
	store_col_copy(st, 1, k->user_id, sizeof k->user_id);
	store_col_copy(st, 2, k->name, sizeof k->name);
	k->expired_at = store_col_is_null(st, 3) ? 0 : store_col_int64(st, 3);
	k->created_at = store_col_int64(st, 4);
	k->scopes[0] = '\0';
	if (!store_col_is_null(st, 5))
		store_col_copy(st, 5, k->scopes, sizeof k->scopes);
	k->rate_count = store_col_is_null(st, 6) ? 0 : store_col_int64(st, 6);
	k->rate_window_ms = store_col_is_null(st, 7) ? 0 : store_col_int64(st, 7);
}

int store_apikey_insert(struct store_conn *c, const struct apikey *k, const uint8_t hash[APIKEY_HASH_LEN],
			struct err *e)
{
	static const char SQL[] = "INSERT INTO api_keys (id, user_id, name, key_hash, expired_at, created_at,"
				  " scopes, rate_count, rate_window_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_text(st, 1, k->id);
	store_bind_text(st, 2, k->user_id);
	store_bind_text(st, 3, k->name);
	store_bind_blob(st, 4, hash, APIKEY_HASH_LEN);
	if (k->expired_at)
		store_bind_int64(st, 5, k->expired_at);
	else
		store_bind_null(st, 5);
	store_bind_int64(st, 6, k->created_at);
	if (k->scopes[0])
		store_bind_text(st, 7, k->scopes);
	else
		store_bind_null(st, 7);
	if (k->rate_count) {
		store_bind_int64(st, 8, k->rate_count);
		store_bind_int64(st, 9, k->rate_window_ms);
	} else {
		store_bind_null(st, 8);
		store_bind_null(st, 9);
	}
	rc = store_step_done(st, e);
	if (rc == -ERR_CONFLICT)
		return err_set(e, ERR_CONFLICT, "API Token with name '%s' already exists", k->name);
	return rc;
}

int store_apikey_set_hash(struct store_conn *c, const char *id, const uint8_t hash[APIKEY_HASH_LEN], struct err *e)
{
	static const char SQL[] = "UPDATE api_keys SET key_hash = ? WHERE id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_blob(st, 1, hash, APIKEY_HASH_LEN);
	store_bind_text(st, 2, id);
	rc = store_step_done(st, e);
	if (rc == 0 && store_changes(c) == 0)
		return err_set(e, ERR_NOT_FOUND, "API key not found: %s", id);
	return rc;
}

int store_apikey_get(struct store_conn *c, const char *id, struct apikey *k, struct err *e)
{
	static const char SQL[] = "SELECT " KEY_COLS " FROM api_keys WHERE id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	return store_one(st, read_row, k, "API key", id, e);
}

int store_apikey_delete(struct store_conn *c, const char *id, struct err *e)
{
	static const char SQL[] = "DELETE FROM api_keys WHERE id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	rc = store_step_done(st, e);
	if (rc == 0 && store_changes(c) == 0)
		return err_set(e, ERR_NOT_FOUND, "API key not found: %.64s", id);
	return rc;
}

int store_apikey_list(struct store_conn *c, const char *user_id, struct apikey **out, size_t *n, struct err *e)
{
	static const char SQL[] = "SELECT " KEY_COLS " FROM api_keys WHERE user_id = ? ORDER BY name";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, user_id);
	return store_collect(st, sizeof **out, read_row, (void **)out, n, e);
}

int store_apikey_find_hash(struct store_conn *c, const uint8_t hash[APIKEY_HASH_LEN], int64_t now_ms, struct apikey *k,
			   struct err *e)
{
	static const char SQL[] = "SELECT " KEY_COLS " FROM api_keys WHERE key_hash = ?"
				  " AND (expired_at IS NULL OR expired_at > ?)";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_blob(st, 1, hash, APIKEY_HASH_LEN);
	store_bind_int64(st, 2, now_ms);
	return store_one(st, read_row, k, "API key", "(by value)", e);
}

struct key_and_user {
	struct apikey *k;
	struct user *u;
};

static void read_key_and_user(struct store_stmt *st, void *out)
{
	struct key_and_user *ku = out;

	read_row(st, ku->k);
	store_user_read(st, KEY_N_COLS, ku->u);
}

int store_apikey_find_user(struct store_conn *c, const uint8_t hash[APIKEY_HASH_LEN], int64_t now_ms, struct apikey *k,
			   struct user *u, struct err *e)
{
	static const char SQL[] = "SELECT k.id, k.user_id, k.name, k.expired_at, k.created_at, k.scopes, k.rate_count,"
				  " k.rate_window_ms, " USER_COLS_OF(
				      "u") " FROM api_keys k JOIN users u ON u.id = k.user_id"
					   " WHERE k.key_hash = ? AND (k.expired_at IS NULL OR k.expired_at > ?)";
	struct store_stmt *st = store_prepare(c, SQL, e);
	struct key_and_user ku = {k, u};

	if (!st)
		return -1;
	store_bind_blob(st, 1, hash, APIKEY_HASH_LEN);
	store_bind_int64(st, 2, now_ms);
	return store_one(st, read_key_and_user, &ku, "API key", "(by value)", e);
}
