#include "store/jsonstores.h"

#include <stdlib.h>
#include <string.h>

#include "store/orgs.h"

int store_jsonstore_capacity(struct store_conn *c, int64_t rid, int64_t *size, int64_t *max_bytes, struct err *e)
{
	static const char SQL[] = "SELECT CAST((SELECT coalesce(sum(d.item_size), 0) FROM inventory_items d"
				  " WHERE d.inventory = i.rid) AS BIGINT), coalesce(i.max_data_size, -1)"
				  " FROM inventories i WHERE i.rid = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_int64(st, 1, rid);
	rc = store_step(st, e);
	if (rc == STORE_ROW) {
		*size = store_col_int64(st, 0);
		*max_bytes = store_col_int64(st, 1);
	}
	store_reset(st);
	if (rc == STORE_DONE)
		return err_set(e, ERR_NOT_FOUND, "JSON store not found: it was deleted");
	return rc < 0 ? rc : 0;
}

int store_jsonstore_max_get(struct store_conn *c, int64_t rid, int64_t *max_bytes, struct err *e)
{
	static const char SQL[] = "SELECT coalesce(max_data_size, -1) FROM inventories WHERE rid = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_int64(st, 1, rid);
	rc = store_step(st, e);
	*max_bytes = rc == STORE_ROW ? store_col_int64(st, 0) : -1;
	store_reset(st);
	if (rc == STORE_DONE)
		return err_set(e, ERR_NOT_FOUND, "JSON store not found: it was deleted");
	return rc < 0 ? rc : 0;
}

int store_jsonstore_max_set(struct store_conn *c, int64_t rid, int64_t max_bytes, struct err *e)
{
	static const char SQL[] = "UPDATE inventories SET max_data_size = ? WHERE rid = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	if (max_bytes < 0)
		store_bind_null(st, 1);
	else
		store_bind_int64(st, 1, max_bytes);
	store_bind_int64(st, 2, rid);
	return store_step_done(st, e);
}

static json_t *path_row(struct store_stmt *st, void *ctx)
{
	(void)ctx;
	return json_string(store_col_text(st, 0));
}

int store_jsonstore_paths(struct store_conn *c, int64_t rid, const char *filter, size_t offset, size_t limit,
			  json_t **out, struct err *e)
{
	static const char SQL[] = "SELECT item_path FROM inventory_items WHERE inventory = ?"
				  " AND (? IS NULL OR lower(item_path) LIKE ? ESCAPE '\\')"
				  " ORDER BY item_path LIMIT ? OFFSET ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	char *like = NULL;
	size_t cap;
	int rc;

	if (!st)
		return -1;
	if (filter && *filter) {
		cap = 2 * strlen(filter) + 3;
		if (!(like = malloc(cap))) {
			store_reset(st);
			return err_set(e, ERR_INTERNAL, "out of memory");
		}
		store_like_pattern(filter, like, cap);
	}
	store_bind_int64(st, 1, rid);
	store_bind_text(st, 2, like);
	store_bind_text(st, 3, like);
	store_bind_int64(st, 4, (int64_t)limit);
	store_bind_int64(st, 5, (int64_t)offset);
	rc = store_collect_json(st, path_row, NULL, out, e);
	free(like);
	return rc;
}
