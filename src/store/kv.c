/* The kv task's store (kv.h). */
#include "store/kv.h"

#include <stdlib.h>
#include <string.h>

#include "base/datetime.h"

int store_kv_put(struct store_conn *c, const char *project_id, const char *key, const char *str, int64_t num,
		 struct err *e)
{
	static const char SQL[] = "INSERT INTO kv (project_id, key, string_value, long_value, updated_at)"
				  " VALUES (?, ?, ?, ?, ?) ON CONFLICT (project_id, key) DO UPDATE SET"
				  " string_value = excluded.string_value, long_value = excluded.long_value,"
				  " updated_at = excluded.updated_at";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, project_id);
	store_bind_text(st, 2, key);
	store_bind_text(st, 3, str);
	if (str)
		store_bind_null(st, 4);
	else
		store_bind_int64(st, 4, num);
	store_bind_int64(st, 5, dt_now_ms());
	return store_step_done(st, e);
}

int store_kv_get(struct store_conn *c, const char *project_id, const char *key, struct kv_value *v, struct err *e)
{
	static const char SQL[] = "SELECT string_value, long_value FROM kv WHERE project_id = ? AND key = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	memset(v, 0, sizeof *v);
	if (!st)
		return -1;
	store_bind_text(st, 1, project_id);
	store_bind_text(st, 2, key);
	rc = store_step(st, e);
	if (rc == STORE_ROW) {
		v->found = true;
		v->is_long = store_col_is_null(st, 0);
		if (v->is_long)
			v->num = store_col_int64(st, 1);
		else if (!(v->str = strdup(store_col_text(st, 0))))
			rc = err_set(e, ERR_INTERNAL, "out of memory");
	}
	store_reset(st);
	return rc < 0 ? rc : 0;
}

int store_kv_inc(struct store_conn *c, const char *project_id, const char *key, int64_t *out, struct err *e)
{
	/* One statement: concurrent increments never see the same value.  A string entry
	 * keeps its value (the WHERE of the upsert fails) and returns no row. */
	static const char SQL[] = "INSERT INTO kv (project_id, key, string_value, long_value, updated_at)"
				  " VALUES (?, ?, NULL, 1, ?) ON CONFLICT (project_id, key) DO UPDATE SET"
				  " long_value = kv.long_value + 1, updated_at = excluded.updated_at"
				  " WHERE kv.string_value IS NULL RETURNING long_value";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_text(st, 1, project_id);
	store_bind_text(st, 2, key);
	store_bind_int64(st, 3, dt_now_ms());
	rc = store_step(st, e);
	if (rc == STORE_ROW)
		*out = store_col_int64(st, 0);
	else if (rc == STORE_DONE)
		rc = err_set(e, ERR_CONFLICT, "Invalid value type of '%s': a string value cannot be incremented", key);
	store_reset(st);
	return rc < 0 ? rc : 0;
}

int store_kv_remove(struct store_conn *c, const char *project_id, const char *key, struct err *e)
{
	static const char SQL[] = "DELETE FROM kv WHERE project_id = ? AND key = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, project_id);
	store_bind_text(st, 2, key);
	return store_step_done(st, e);
}

int store_kv_count(struct store_conn *c, const char *project_id, int64_t *n, struct err *e)
{
	static const char SQL[] = "SELECT count(*) FROM kv WHERE project_id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	*n = 0;
	if (!st)
		return -1;
	store_bind_text(st, 1, project_id);
	rc = store_step(st, e);
	if (rc == STORE_ROW)
		*n = store_col_int64(st, 0);
	store_reset(st);
	return rc < 0 ? rc : 0;
}
