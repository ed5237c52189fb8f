/* Batches of the retention clean-up (retention.h).  Candidates come from the index
 * processes_status (status, created_at), one final status at a time, oldest first, from a
 * cursor, so a pass never walks what an earlier batch already cleaned.  The deletes of a
 * whole process cascade to every table that belongs to it (foreign keys). */
#include "store/retention.h"

#include <stdio.h>
#include <string.h>

#include "base/uuid.h"
#include "store/audit.h"
#include "store/project_storage.h"

#define BATCH_MAX 1000

static const char *const finals[4] = {"FINISHED", "FAILED", "CANCELLED", "TIMED_OUT"};

static const char *const names[RET__COUNT] = {
    [RET_PROCESSES] = "processes", [RET_LOGS] = "logs",	  [RET_EVENTS] = "events",
    [RET_ATTACHMENTS] = "attachments", [RET_STATES] = "states", [RET_AUDIT] = "audit",
};

/* Candidate selection per part: the EXISTS keeps a batch from being filled with processes
 * whose part is already gone. */
static const char *const select_sql[RET__COUNT] = {
    [RET_PROCESSES] = "SELECT instance_id, created_at FROM processes p WHERE status = ? AND created_at >= ? AND created_at < ?"
		      " AND last_updated_at < ? ORDER BY created_at LIMIT ?",
    [RET_LOGS] = "SELECT instance_id, created_at FROM processes p WHERE status = ? AND created_at >= ? AND created_at < ?"
		 " AND last_updated_at < ? AND EXISTS (SELECT 1 FROM process_log_chunks x"
		 " WHERE x.instance_id = p.instance_id) ORDER BY created_at LIMIT ?",
    [RET_EVENTS] = "SELECT instance_id, created_at FROM processes p WHERE status = ? AND created_at >= ? AND created_at < ?"
		   " AND last_updated_at < ? AND EXISTS (SELECT 1 FROM process_events x"
		   " WHERE x.instance_id = p.instance_id) ORDER BY created_at LIMIT ?",
    [RET_ATTACHMENTS] = "SELECT instance_id, created_at FROM processes p WHERE status = ? AND created_at >= ? AND created_at < ?"
			" AND last_updated_at < ? AND EXISTS (SELECT 1 FROM process_attachments x"
			" WHERE x.instance_id = p.instance_id) ORDER BY created_at LIMIT ?",
    [RET_STATES] = "SELECT instance_id, created_at FROM processes p WHERE status = ? AND created_at >= ? AND created_at < ?"
		   " AND last_updated_at < ? AND (EXISTS (SELECT 1 FROM process_checkpoints x"
		   " WHERE x.instance_id = p.instance_id) OR EXISTS (SELECT 1 FROM process_payloads x"
		   " WHERE x.instance_id = p.instance_id) OR EXISTS (SELECT 1 FROM process_start_payloads x"
		   " WHERE x.instance_id = p.instance_id)) ORDER BY created_at LIMIT ?",
};

/* What goes, per part; NULL ends a list. */
static const char *const delete_sql[RET__COUNT][3] = {
    [RET_PROCESSES] = {"DELETE FROM process_child_waits WHERE parent_id = ?", "DELETE FROM processes WHERE instance_id = ?"},
    [RET_LOGS] = {"DELETE FROM process_log_chunks WHERE instance_id = ?"},
    [RET_EVENTS] = {"DELETE FROM process_events WHERE instance_id = ?"},
    [RET_ATTACHMENTS] = {"DELETE FROM process_attachments WHERE instance_id = ?"},
    [RET_STATES] = {"DELETE FROM process_checkpoints WHERE instance_id = ?",
		    "DELETE FROM process_payloads WHERE instance_id = ?",
		    "DELETE FROM process_start_payloads WHERE instance_id = ?"},
};

const char *retention_part_name(enum retention_part p)
{
	return (unsigned)p < RET__COUNT ? names[p] : "?";
}

/* What of a part counts in its project's stored bytes (project_storage.h). */
static const unsigned stored[RET__COUNT] = {
    [RET_PROCESSES] = PSTORE_LOGS | PSTORE_ATTACHMENTS,
    [RET_LOGS] = PSTORE_LOGS,
    [RET_ATTACHMENTS] = PSTORE_ATTACHMENTS,
};

static int delete_one(struct store_conn *c, enum retention_part part, const char *id, struct err *e)
{
	if (stored[part] && project_storage_release(c, id, stored[part], e))
		return -1;
	for (size_t i = 0; i < 3 && delete_sql[part][i]; i++) {
		struct store_stmt *st = store_prepare(c, delete_sql[part][i], e);

		if (!st)
			return -1;
		store_bind_text(st, 1, id);
		if (store_step_done(st, e))
			return -1;
	}
	return 0;
}

/* The ids of one status's next candidates (at most cap). */
static int candidates(struct store_conn *c, enum retention_part part, size_t s, int64_t cutoff, int64_t from,
		      size_t cap, char (*ids)[UUID_STR_LEN], int64_t *last, size_t *n, struct err *e)
{
	struct store_stmt *st = store_prepare(c, select_sql[part], e);
	int rc;

	*n = 0;
	if (!st)
		return -1;
	store_bind_text(st, 1, finals[s]);
	store_bind_int64(st, 2, from);
	store_bind_int64(st, 3, cutoff); /* created_at < cutoff bounds the index range … */
	store_bind_int64(st, 4, cutoff); /* … last_updated_at < cutoff is the rule */
	store_bind_int64(st, 5, (int64_t)cap);
	while ((rc = store_step(st, e)) == STORE_ROW) {
		store_col_copy(st, 0, ids[*n], UUID_STR_LEN);
		*last = store_col_int64(st, 1);
		(*n)++;
		if (store_stmt_check(st, e)) {
			rc = -1;
			break;
		}
	}
	store_reset(st);
	return rc;
}

int store_retention_batch(struct store_conn *c, enum retention_part part, int64_t cutoff, size_t batch,
			  struct retention_cursor *cur, size_t *n, struct err *e)
{
	char ids[BATCH_MAX][UUID_STR_LEN];
	size_t got = 0;

	*n = 0;
	if ((unsigned)part >= RET__COUNT)
		return err_set(e, ERR_INVALID, "unknown retention part %d", (int)part);
	if (batch == 0 || batch > BATCH_MAX)
		batch = BATCH_MAX;
	if (part == RET_AUDIT)
		return store_audit_expire(c, cutoff, batch, n, e);
	if (store_tx_begin(c, e))
		return -1;
	for (size_t s = 0; s < 4 && got == 0; s++) {
		int64_t last = cur->from[s];

		if (candidates(c, part, s, cutoff, cur->from[s], batch, ids, &last, &got, e))
			goto fail;
		for (size_t i = 0; i < got; i++)
			if (delete_one(c, part, ids[i], e))
				goto fail;
		cur->from[s] = last; /* ties at the boundary are looked at again, not skipped */
	}
	if (store_tx_commit(c, e))
		return -1;
	*n = got;
	return 0;
fail:
	store_tx_rollback(c);
	return -1;
}
