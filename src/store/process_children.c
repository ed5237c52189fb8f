/* Parents waiting for their children (process_children.h). */
#include "store/process_children.h"
#include "store/processes.h"

int store_child_wait_add(struct store_conn *c, const char *parent, const char *event, json_t *children, struct err *e)
{
	static const char SQL[] = "INSERT INTO process_child_waits (parent_id, event_name, child_id) VALUES (?, ?, ?)"
				  " ON CONFLICT DO NOTHING";
	size_t i;
	json_t *v;

	if (store_tx_begin(c, e))
		return -1;
	json_array_foreach(children, i, v)
	{
		struct store_stmt *st = store_prepare(c, SQL, e);
		if (!st)
			goto fail;
		store_bind_text(st, 1, parent);
		store_bind_text(st, 2, event);
		store_bind_text(st, 3, json_string_value(v));
		if (store_step_done(st, e))
			goto fail;
	}
	return store_tx_commit(c, e);
fail:
	store_tx_rollback(c);
	return -1;
}

/* Runs a query with one text parameter; each row's columns (1 or 2) become a string or a
 * [a, b] pair in a NEW array. */
static int rows(struct store_conn *c, const char *sql, const char *arg, int cols, json_t **out, struct err *e)
{
	struct store_stmt *st = store_prepare(c, sql, e);
	int rc;

	*out = NULL;
	if (!st)
		return -1;
	store_bind_text(st, 1, arg);
	*out = json_array();
	while ((rc = store_step(st, e)) == STORE_ROW)
		json_array_append_new(*out, cols == 1
						? json_string(store_col_text(st, 0))
						: json_pack("[s, s]", store_col_text(st, 0), store_col_text(st, 1)));
	store_reset(st);
	if (rc < 0) {
		json_decref(*out);
		*out = NULL;
		return rc;
	}
	return 0;
}

int store_child_waits_of_child(struct store_conn *c, const char *child, json_t **out, struct err *e)
{
	static const char SQL[] = "SELECT parent_id, event_name FROM process_child_waits WHERE child_id = ?";
	return rows(c, SQL, child, 2, out, e);
}

int store_child_waits_of_parent(struct store_conn *c, const char *parent, json_t **out, struct err *e)
{
	static const char SQL[] = "SELECT DISTINCT event_name FROM process_child_waits WHERE parent_id = ?";
	return rows(c, SQL, parent, 1, out, e);
}

int store_child_wait_children(struct store_conn *c, const char *parent, const char *event, json_t **out, int *open,
			      struct err *e)
{
	static const char SQL[] = "SELECT w.child_id, p.status FROM process_child_waits w"
				  " LEFT JOIN processes p ON p.instance_id = w.child_id"
				  " WHERE w.parent_id = ? AND w.event_name = ? ORDER BY w.child_id";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	*out = NULL;
	*open = 0;
	if (!st)
		return -1;
	store_bind_text(st, 1, parent);
	store_bind_text(st, 2, event);
	*out = json_array();
	while ((rc = store_step(st, e)) == STORE_ROW) {
		const char *status = store_col_text(st, 1);
		/* A child that is gone (deleted) counts as ended. */
		int s = status ? proc_status_parse(status) : PS_CANCELLED;
		if (s < 0 || !(PS_BIT(s) & PS_TERMINAL))
			(*open)++;
		json_array_append_new(*out, json_pack("{s:s, s:s}", "id", store_col_text(st, 0), "status",
						      status ? status : "CANCELLED"));
	}
	store_reset(st);
	if (rc < 0) {
		json_decref(*out);
		*out = NULL;
		return rc;
	}
	return 0;
}

int store_child_wait_drop(struct store_conn *c, const char *parent, const char *event, struct err *e)
{
	static const char SQL[] = "DELETE FROM process_child_waits WHERE parent_id = ? AND event_name = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, parent);
	store_bind_text(st, 2, event);
	return store_step_done(st, e);
}

int store_child_waits_drop_parent(struct store_conn *c, const char *parent, struct err *e)
{
	/* Every end of a process comes here and most waited for no child: a look first, as a
	 * DELETE takes the database's write lock even when it finds nothing.  An ended parent
	 * registers no new waits (its runner is gone), so the look needs no transaction. */
	static const char ANY[] = "SELECT 1 FROM process_child_waits WHERE parent_id = ? LIMIT 1";
	static const char SQL[] = "DELETE FROM process_child_waits WHERE parent_id = ?";
	struct store_stmt *st = store_prepare(c, ANY, e);
	int rc;

	if (!st)
		return -1;
	store_bind_text(st, 1, parent);
	rc = store_step(st, e);
	store_reset(st);
	if (rc != STORE_ROW)
		return rc < 0 ? -1 : 0;
	if (!(st = store_prepare(c, SQL, e)))
		return -1;
	store_bind_text(st, 1, parent);
	return store_step_done(st, e);
}
