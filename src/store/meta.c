#include "store/meta.h"

#include <stdio.h>

int store_meta_get(struct store_conn *c, const char *key, char *out, size_t cap, struct err *e)
{
	static const char SQL[] = "SELECT value FROM server_meta WHERE key = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_text(st, 1, key);
	rc = store_step(st, e);
	if (rc == STORE_ROW) {
		store_col_copy(st, 0, out, cap);
		if (store_stmt_check(st, e))
			rc = -1;
	}
	store_reset(st);
	if (rc == STORE_DONE)
		return err_set(e, ERR_NOT_FOUND, "no meta value %s", key);
	return rc < 0 ? rc : 0;
}

int store_meta_set(struct store_conn *c, const char *key, const char *value, struct err *e)
{
	static const char SQL[] = "INSERT INTO server_meta (key, value) VALUES (?, ?)"
				  " ON CONFLICT (key) DO UPDATE SET value = excluded.value";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, key);
	store_bind_text(st, 2, value);
	return store_step_done(st, e);
}

int store_meta_add(struct store_conn *c, const char *key, const char *value, bool *added, struct err *e)
{
	static const char SQL[] = "INSERT INTO server_meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	*added = false;
	if (!st)
		return -1;
	store_bind_text(st, 1, key);
	store_bind_text(st, 2, value);
	rc = store_step_done(st, e);
	if (rc == 0)
		*added = store_changes(c) > 0;
	return rc;
}
