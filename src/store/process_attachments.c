#include "store/process_attachments.h"

#include <stdlib.h>
#include <string.h>

#include "base/jsonx.h"
#include "store/project_storage.h"

/* The stored size of one attachment (0: none). */
static int size_of(struct store_conn *c, const char *id, const char *name, int64_t *size, struct err *e)
{
	static const char SQL[] = "SELECT length(data) FROM process_attachments WHERE instance_id = ? AND name = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	*size = 0;
	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	store_bind_text(st, 2, name);
	rc = store_step(st, e);
	if (rc == STORE_ROW)
		*size = store_col_int64(st, 0);
	store_reset(st);
	return rc < 0 ? rc : 0;
}

int store_process_attachment_put(struct store_conn *c, const char *id, const char *name, const void *data, size_t len,
				 struct err *e)
{
	static const char SQL[] = "INSERT INTO process_attachments (instance_id, name, data) VALUES (?, ?, ?)"
				  " ON CONFLICT (instance_id, name) DO UPDATE SET data = excluded.data";
	struct store_stmt *st;
	int64_t old;

	if (size_of(c, id, name, &old, e) || !(st = store_prepare(c, SQL, e)))
		return -1;
	store_bind_text(st, 1, id);
	store_bind_text(st, 2, name);
	store_bind_blob(st, 3, data, len);
	if (store_step_done(st, e))
		return -1;
	return project_storage_add(c, id, (int64_t)len - old, e);
}

int store_process_attachment_clear(struct store_conn *c, const char *id, struct err *e)
{
	static const char SQL[] = "DELETE FROM process_attachments WHERE instance_id = ?";
	struct store_stmt *st;

	if (project_storage_release(c, id, PSTORE_ATTACHMENTS, e) || !(st = store_prepare(c, SQL, e)))
		return -1;
	store_bind_text(st, 1, id);
	return store_step_done(st, e);
}

int store_process_attachment_get(struct store_conn *c, const char *id, const char *name, void **data, size_t *len,
				 struct err *e)
{
	static const char SQL[] = "SELECT data FROM process_attachments WHERE instance_id = ? AND name = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	*data = NULL;
	*len = 0;
	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	store_bind_text(st, 2, name);
	rc = store_step(st, e);
	if (rc == STORE_ROW && store_col_blob_dup(st, 0, data, len, e))
		rc = -1;
	store_reset(st);
	if (rc == STORE_DONE)
		return err_set(e, ERR_NOT_FOUND, "Attachment not found: %.256s", name);
	return rc < 0 ? rc : 0;
}

/* One attachment name, as text even when it is not valid UTF-8. */
static json_t *name_of(struct store_stmt *st, void *ctx)
{
	(void)ctx;
	return jsonx_string_lossy(store_col_text(st, 0));
}

int store_process_attachment_list(struct store_conn *c, const char *id, json_t **out, struct err *e)
{
	static const char SQL[] = "SELECT name FROM process_attachments WHERE instance_id = ? ORDER BY name";
	struct store_stmt *st = store_prepare(c, SQL, e);

	*out = NULL;
	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	return store_collect_json(st, name_of, NULL, out, e);
}
