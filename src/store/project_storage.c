/* Stored bytes per project (project_storage.h). */
#include "store/project_storage.h"

#include "base/limits.h"

/* A process of a deleted project (its row went with the project) counts nowhere. */
int project_storage_add(struct store_conn *c, const char *id, int64_t delta, struct err *e)
{
	static const char SQL[] = "INSERT INTO project_storage (project_id, bytes)"
				  " SELECT p.project_id, ? FROM processes p JOIN projects j ON j.id = p.project_id"
				  " WHERE p.instance_id = ?"
				  " ON CONFLICT (project_id) DO UPDATE SET bytes = project_storage.bytes + excluded.bytes";
	struct store_stmt *st;

	if (delta == 0)
		return 0;
	if (!(st = store_prepare(c, SQL, e)))
		return -1;
	store_bind_int64(st, 1, delta);
	store_bind_text(st, 2, id);
	return store_step_done(st, e);
}

static int sum_of(struct store_conn *c, const char *sql, const char *id, int64_t *sum, struct err *e)
{
	struct store_stmt *st = store_prepare(c, sql, e);
	int rc;

	*sum = 0;
	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	rc = store_step(st, e);
	if (rc == STORE_ROW && !store_col_is_null(st, 0))
		*sum = store_col_int64(st, 0);
	store_reset(st);
	return rc < 0 ? rc : 0;
}

int project_storage_release(struct store_conn *c, const char *id, unsigned parts, struct err *e)
{
	static const char LOGS[] = "SELECT sum(length(data)) FROM process_log_chunks WHERE instance_id = ?";
	static const char ATTACHMENTS[] = "SELECT sum(length(data)) FROM process_attachments WHERE instance_id = ?";
	int64_t logs = 0, attachments = 0;

	if (((parts & PSTORE_LOGS) && sum_of(c, LOGS, id, &logs, e)) ||
	    ((parts & PSTORE_ATTACHMENTS) && sum_of(c, ATTACHMENTS, id, &attachments, e)))
		return -1;
	return project_storage_add(c, id, -(logs + attachments), e);
}

int store_project_storage_room(struct store_conn *c, const char *id, uint64_t *room, struct err *e)
{
	static const char SQL[] = "SELECT p.project_id, s.bytes FROM processes p"
				  " LEFT JOIN project_storage s ON s.project_id = p.project_id WHERE p.instance_id = ?";
	const uint64_t quota = limits.project_storage_bytes;
	struct store_stmt *st;
	int rc;

	*room = UINT64_MAX;
	if (!quota)
		return 0;
	if (!(st = store_prepare(c, SQL, e)))
		return -1;
	store_bind_text(st, 1, id);
	rc = store_step(st, e);
	if (rc == STORE_ROW && !store_col_is_null(st, 0)) {
		int64_t used = store_col_is_null(st, 1) ? 0 : store_col_int64(st, 1);
		*room = used <= 0 ? quota : (uint64_t)used < quota ? quota - (uint64_t)used : 0;
	}
	store_reset(st);
	return rc < 0 ? rc : 0;
}
