/* The checkpoints of a process (process_checkpoints.h). */
#include "store/process_checkpoints.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/datetime.h"
#include "base/jsonx.h"

int store_process_checkpoint_add(struct store_conn *c, const char *instance_id, const char *name, const void *payload,
				 size_t len, char id_out[UUID_STR_LEN], struct err *e)
{
	static const char SQL[] = "INSERT INTO process_checkpoints (id, instance_id, name, seq, created_at, payload)"
				  " VALUES (?, ?, ?, (SELECT COALESCE(MAX(seq), 0) + 1 FROM process_checkpoints"
				  " WHERE instance_id = ?), ?, ?)";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	uuid_v4(id_out);
	store_bind_text(st, 1, id_out);
	store_bind_text(st, 2, instance_id);
	store_bind_text(st, 3, name);
	store_bind_text(st, 4, instance_id);
	store_bind_int64(st, 5, dt_now_ms());
	store_bind_blob(st, 6, payload, len);
	return store_step_done(st, e);
}

static json_t *entry(struct store_stmt *st, void *ctx)
{
	(void)ctx;
	char ts[DT_ISO_LEN];

	dt_format_iso(store_col_int64(st, 2), ts);
	return json_pack("{s:o, s:o, s:s}", "id", jsonx_string_lossy(store_col_text(st, 0)), "name",
			 jsonx_string_lossy(store_col_text(st, 1)), "createdAt", ts);
}

int store_process_checkpoint_list(struct store_conn *c, const char *instance_id, json_t **out, struct err *e)
{
	static const char SQL[] = "SELECT id, name, created_at FROM process_checkpoints WHERE instance_id = ?"
				  " ORDER BY seq";
	struct store_stmt *st = store_prepare(c, SQL, e);

	*out = NULL;
	if (!st)
		return -1;
	store_bind_text(st, 1, instance_id);
	return store_collect_json(st, entry, NULL, out, e);
}

int store_process_checkpoint_get(struct store_conn *c, const char *instance_id, const char *id, char *name,
				 size_t name_cap, void **payload, size_t *len, struct err *e)
{
	static const char SQL[] = "SELECT name, payload FROM process_checkpoints WHERE instance_id = ? AND id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	*payload = NULL;
	*len = 0;
	if (!st)
		return -1;
	store_bind_text(st, 1, instance_id);
	store_bind_text(st, 2, id);
	rc = store_step(st, e);
	if (rc == STORE_ROW) {
		store_col_copy(st, 0, name, name_cap);
		if (store_stmt_check(st, e) || store_col_blob_dup(st, 1, payload, len, e))
			rc = -1;
	}
	store_reset(st);
	if (rc == STORE_DONE)
		return err_set(e, ERR_NOT_FOUND, "Checkpoint not found: %.64s", id);
	return rc < 0 ? rc : 0;
}

int store_process_checkpoint_find(struct store_conn *c, const char *instance_id, const char *name,
				  char id_out[UUID_STR_LEN], struct err *e)
{
	static const char SQL[] = "SELECT id FROM process_checkpoints WHERE instance_id = ? AND name = ?"
				  " ORDER BY seq DESC LIMIT 1";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_text(st, 1, instance_id);
	store_bind_text(st, 2, name);
	rc = store_step(st, e);
	if (rc == STORE_ROW) {
		store_col_copy(st, 0, id_out, UUID_STR_LEN);
		if (store_stmt_check(st, e))
			rc = -1;
	}
	store_reset(st);
	if (rc == STORE_DONE)
		return err_set(e, ERR_NOT_FOUND, "Checkpoint not found: %.200s", name);
	return rc < 0 ? rc : 0;
}
