/* The store side of the process operations (store/process_ops.h, schema 029). */
#include "store/process_ops.h"

#include <string.h>

#include "base/str.h"
#include "store/process_attachments.h"
#include "store/process_internal.h"

int store_process_start_payload_put(struct store_conn *c, const char *id, const void *data, size_t len, struct err *e)
{
	static const char SQL[] = "INSERT INTO process_start_payloads (instance_id, data) VALUES (?, ?)";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	store_bind_blob(st, 2, data, len);
	return store_step_done(st, e);
}

int store_process_disable(struct store_conn *c, const char *id, bool disabled, struct err *e)
{
	static const char SQL[] = "UPDATE processes SET disabled = ? WHERE instance_id = ?"
				  " AND status IN ('FINISHED', 'FAILED', 'CANCELLED', 'TIMED_OUT')";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_int64(st, 1, disabled ? 1 : 0);
	store_bind_text(st, 2, id);
	return store_step_done(st, e);
}

static int status_of(struct store_conn *c, const char *id, int *status, struct err *e)
{
	static const char SQL[] = "SELECT status FROM processes WHERE instance_id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	rc = store_step(st, e);
	if (rc == STORE_ROW)
		*status = proc_status_parse(store_col_text(st, 0) ? store_col_text(st, 0) : "");
	store_reset(st);
	if (rc == STORE_DONE)
		return err_set(e, ERR_NOT_FOUND, "Process instance not found: %s", id);
	return rc < 0 ? rc : 0;
}

/* The start payload becomes the working one; 0 rows copied: not kept. */
static int restore_start_payload(struct store_conn *c, const char *id, struct err *e)
{
	static const char SQL[] = "INSERT INTO process_payloads (instance_id, data) SELECT instance_id, data FROM"
				  " process_start_payloads WHERE instance_id = ?"
				  " ON CONFLICT (instance_id) DO UPDATE SET data = excluded.data";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	if (store_step_done(st, e))
		return -1;
	if (store_changes(c) == 0)
		return err_set(e, ERR_CONFLICT, "Can't restart process %s: the payload it was started with is not kept",
			       id);
	return 0;
}

int store_process_restart(struct store_conn *c, const char *id, struct err *e)
{
	int status = -1;

	if (store_tx_begin_rows(c, e))
		return -1;
	if (proc_lock_row(c, id, e) || status_of(c, id, &status, e))
		goto fail;
	if (status < 0 || !(PS_BIT(status) & PS_TERMINAL)) {
		err_set(e, ERR_CONFLICT, "Can't restart running process: %s", id);
		goto fail;
	}
	if (restore_start_payload(c, id, e) || store_process_attachment_clear(c, id, e) ||
	    proc_requeue_in_tx(c, id, PS_TERMINAL, NULL, NULL, e))
		goto fail;
	return store_tx_commit(c, e);
fail:
	store_tx_rollback(c);
	return -1;
}

int store_process_root(struct store_conn *c, const char *id, char root[UUID_STR_LEN], struct err *e)
{
	static const char SQL[] = "SELECT parent_instance_id FROM processes WHERE instance_id = ?";

	str_fmt_cut(root, UUID_STR_LEN, "%s", id);
	for (int depth = 0; depth < 1000; depth++) {
		struct store_stmt *st = store_prepare(c, SQL, e);
		const char *parent;
		bool top;
		int rc;

		if (!st)
			return -1;
		store_bind_text(st, 1, root);
		rc = store_step(st, e);
		parent = rc == STORE_ROW ? store_col_text(st, 0) : NULL;
		top = rc == STORE_ROW && (!parent || !parent[0]);
		if (rc == STORE_ROW && !top)
			str_fmt_cut(root, UUID_STR_LEN, "%s", parent);
		store_reset(st);
		if (rc < 0)
			return rc;
		/* a parent that retention removed leaves its child the root of what is left */
		if (top || rc == STORE_DONE)
			return rc == STORE_DONE && depth == 0
				   ? err_set(e, ERR_NOT_FOUND, "Process instance not found: %s", id)
				   : 0;
	}
	return err_set(e, ERR_CONFLICT, "the process tree of %s is too deep", id);
}

static void read_id(struct store_stmt *st, void *out)
{
	char(*id)[UUID_STR_LEN] = out;
	store_col_copy(st, 0, *id, UUID_STR_LEN);
}

int store_process_descendants(struct store_conn *c, const char *id, char (**ids)[UUID_STR_LEN], size_t *n,
			      struct err *e)
{
	static const char SQL[] = "WITH RECURSIVE tree (id, depth) AS (SELECT instance_id, 1 FROM processes"
				  " WHERE parent_instance_id = ? UNION ALL SELECT p.instance_id, t.depth + 1 FROM"
				  " processes p JOIN tree t ON p.parent_instance_id = t.id WHERE t.depth < 1000)"
				  " SELECT id FROM tree ORDER BY depth, id LIMIT ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	*ids = NULL;
	*n = 0;
	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	store_bind_int64(st, 2, PROCESS_TREE_MAX);
	return store_collect(st, UUID_STR_LEN, read_id, (void **)ids, n, e);
}

int store_process_wake(struct store_conn *c, const char *id, int64_t *at, char *event, size_t cap, struct err *e)
{
	static const char SQL[] = "SELECT resume_at, resume_event FROM processes WHERE instance_id = ?"
				  " AND status = 'SUSPENDED' AND resume_at IS NOT NULL";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	*at = 0;
	event[0] = '\0';
	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	rc = store_step(st, e);
	if (rc == STORE_ROW) {
		*at = store_col_int64(st, 0);
		store_col_copy(st, 1, event, cap);
		if (store_stmt_check(st, e))
			rc = -1;
	}
	store_reset(st);
	return rc < 0 ? -1 : 0;
}
