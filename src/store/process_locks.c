/* Named process locks (process_locks.h). */
#include <string.h>
#include <strings.h>

#include "base/datetime.h"
#include "store/process_locks.h"

#define KEY_WHERE "lock_scope = ? AND scope_id = ? AND lock_name = ?"
/* How often a transaction looks again when a concurrent one changed the lock under it
 * (PostgreSQL: a row it waited for was deleted); each look waits for that one to end. */
#define RACE_TRIES 16

const char *lock_scope_name(const char *s)
{
	if (!s || !*s || strcasecmp(s, "PROJECT") == 0)
		return "PROJECT";
	return strcasecmp(s, "ORG") == 0 ? "ORG" : NULL;
}

static void bind_key(struct store_stmt *st, const struct lock_key *k)
{
	store_bind_text(st, 1, k->scope);
	store_bind_text(st, 2, k->scope_id);
	store_bind_text(st, 3, k->name);
}

/* Inserts o's row for k (held or waiting): 1 when inserted, 0 when a row of the same
 * unique key exists (the holder of k, for a held one). */
static int insert_row(struct store_conn *c, const struct lock_key *k, const struct lock_owner *o, int held,
		      const char *event, struct err *e)
{
	static const char SQL[] = "INSERT INTO process_locks (lock_scope, scope_id, lock_name, org_id, project_id,"
				  " instance_id, held, event_name, since) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
				  " ON CONFLICT DO NOTHING";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	bind_key(st, k);
	store_bind_text(st, 4, o->org_id);
	store_bind_text(st, 5, o->project_id && *o->project_id ? o->project_id : NULL);
	store_bind_text(st, 6, o->instance_id);
	store_bind_int64(st, 7, held);
	store_bind_text(st, 8, event);
	store_bind_int64(st, 9, dt_now_ms());
	if (store_step_done(st, e))
		return -1;
	return store_changes(c) == 1;
}

/* The holder of k, its row locked: 1 with holder set, 0 when nobody holds it. */
static int read_holder(struct store_conn *c, const struct lock_key *k, char holder[UUID_STR_LEN], struct err *e)
{
#define HOLDER "SELECT instance_id FROM process_locks WHERE " KEY_WHERE " AND held = 1"
	static const char SQL[] = HOLDER, SQL_LOCKED[] = HOLDER " FOR UPDATE";
	struct store_stmt *st = store_prepare(c, store_row_locks(c) ? SQL_LOCKED : SQL, e);
	int rc;

	holder[0] = '\0';
	if (!st)
		return -1;
	bind_key(st, k);
	rc = store_step(st, e);
	if (rc == STORE_ROW)
		store_col_copy(st, 0, holder, UUID_STR_LEN);
	store_reset(st);
	if (rc < 0 || store_stmt_check(st, e))
		return -1;
	return rc == STORE_ROW;
}

static int take_in_tx(struct store_conn *c, const struct lock_key *k, const struct lock_owner *o, const char *event,
		      char holder[UUID_STR_LEN], struct err *e)
{
	/* A process that asks runs, so it waits for nothing: a waiter row of its own is left
	 * from a resume that was not the lock's (POST .../resume/{event} by hand). */
	static const char STALE[] = "DELETE FROM process_locks WHERE " KEY_WHERE " AND instance_id = ? AND held = 0";
	struct store_stmt *st = store_prepare(c, STALE, e);

	if (!st)
		return -1;
	bind_key(st, k);
	store_bind_text(st, 4, o->instance_id);
	if (store_step_done(st, e))
		return -1;
	for (int i = 0; i < RACE_TRIES; i++) {
		int rc = insert_row(c, k, o, 1, NULL, e);
		if (rc != 0) {
			if (rc > 0)
				memcpy(holder, o->instance_id, strlen(o->instance_id) + 1);
			return rc;
		}
		if ((rc = read_holder(c, k, holder, e)) < 0)
			return rc;
		if (rc == 0) /* released meanwhile: try again */
			continue;
		if (strcmp(holder, o->instance_id) == 0)
			return 1;
		if (event && insert_row(c, k, o, 0, event, e) < 0)
			return -1;
		return 0;
	}
	return err_set(e, ERR_UNAVAILABLE, "lock '%s' changes hands too often: try again", k->name);
}

int store_lock_take(struct store_conn *c, const struct lock_key *k, const struct lock_owner *o, const char *event,
		    char holder[UUID_STR_LEN], struct err *e)
{
	int rc;

	if ((rc = store_tx_begin_rows(c, e)))
		return rc;
	rc = take_in_tx(c, k, o, event, holder, e);
	if (rc < 0 || store_tx_commit(c, e)) {
		store_tx_rollback(c);
		return -1;
	}
	return rc;
}

/* The first waiter of k, its row locked: 1 with seq, id and event set, 0 when none. */
static int first_waiter(struct store_conn *c, const struct lock_key *k, int64_t *seq, char id[UUID_STR_LEN],
			char *event, size_t event_cap, struct err *e)
{
#define FIRST "SELECT seq, instance_id, event_name FROM process_locks WHERE " KEY_WHERE " AND held = 0" \
	      " ORDER BY seq LIMIT 1"
	static const char SQL[] = FIRST, SQL_LOCKED[] = FIRST " FOR UPDATE";
	static const char COUNT[] = "SELECT count(*) FROM process_locks WHERE " KEY_WHERE " AND held = 0";
	struct store_stmt *st;
	int rc;

	for (int i = 0; i < RACE_TRIES; i++) {
		if (!(st = store_prepare(c, store_row_locks(c) ? SQL_LOCKED : SQL, e)))
			return -1;
		bind_key(st, k);
		rc = store_step(st, e);
		if (rc == STORE_ROW) {
			*seq = store_col_int64(st, 0);
			store_col_copy(st, 1, id, UUID_STR_LEN);
			store_col_copy(st, 2, event, event_cap);
		}
		store_reset(st);
		if (rc < 0 || store_stmt_check(st, e))
			return -1;
		if (rc == STORE_ROW)
			return 1;
		/* PostgreSQL: the row LIMIT 1 picked may have been deleted by a waiter that ended,
		 * leaving none although others wait: count them before saying there are none. */
		if (!(st = store_prepare(c, COUNT, e)))
			return -1;
		bind_key(st, k);
		rc = store_step(st, e);
		int64_t n = rc == STORE_ROW ? store_col_int64(st, 0) : 0;
		store_reset(st);
		if (rc < 0)
			return -1;
		if (n == 0)
			return 0;
	}
	return err_set(e, ERR_UNAVAILABLE, "lock '%s': its waiters change too often: try again", k->name);
}

/* Releases k held by id and hands it to the first waiter (appended to handed). */
static int release_in_tx(struct store_conn *c, const struct lock_key *k, const char *id, json_t *handed,
			 struct err *e)
{
	static const char DEL[] = "DELETE FROM process_locks WHERE " KEY_WHERE " AND instance_id = ? AND held = 1";
	static const char HAND[] = "UPDATE process_locks SET held = 1, since = ? WHERE seq = ?";
	struct store_stmt *st = store_prepare(c, DEL, e);
	char next[UUID_STR_LEN], event[128];
	int64_t seq = 0;
	int rc;

	if (!st)
		return -1;
	bind_key(st, k);
	store_bind_text(st, 4, id);
	if (store_step_done(st, e))
		return -1;
	if (store_changes(c) == 0) /* id does not hold it */
		return 0;
	if ((rc = first_waiter(c, k, &seq, next, event, sizeof event, e)) <= 0)
		return rc;
	if (!(st = store_prepare(c, HAND, e)))
		return -1;
	store_bind_int64(st, 1, dt_now_ms());
	store_bind_int64(st, 2, seq);
	if (store_step_done(st, e))
		return -1;
	json_array_append_new(handed, json_pack("[s, s, s]", next, event, k->name));
	return 0;
}

static json_t *key_row(struct store_stmt *st, void *ctx)
{
	(void)ctx;
	return json_pack("[s, s, s]", store_col_text(st, 0), store_col_text(st, 1), store_col_text(st, 2));
}

static json_t *text_row(struct store_stmt *st, void *ctx)
{
	(void)ctx;
	return json_string(store_col_text(st, 0));
}

/* The rows of a query with one text parameter, made by row (store_collect_json). */
static int rows_of(struct store_conn *c, const char *sql, const char *id, store_json_row_fn row, json_t **out,
		   struct err *e)
{
	struct store_stmt *st = store_prepare(c, sql, e);

	*out = NULL;
	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	return store_collect_json(st, row, NULL, out, e);
}

/* The locks id holds: a NEW array of [scope, scopeId, name]. */
static int held_by(struct store_conn *c, const char *id, json_t **out, struct err *e)
{
	static const char SQL[] = "SELECT lock_scope, scope_id, lock_name FROM process_locks"
				  " WHERE instance_id = ? AND held = 1 ORDER BY seq";
	return rows_of(c, SQL, id, key_row, out, e);
}

static int release_all_in_tx(struct store_conn *c, const char *id, json_t *handed, struct err *e)
{
	static const char DROP_WAITS[] = "DELETE FROM process_locks WHERE instance_id = ? AND held = 0";
	struct store_stmt *st = store_prepare(c, DROP_WAITS, e);
	json_t *held = NULL, *l;
	size_t i;
	int rc = -1;

	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	if (store_step_done(st, e) || held_by(c, id, &held, e))
		return -1;
	json_array_foreach(held, i, l)
	{
		struct lock_key k = {json_string_value(json_array_get(l, 0)), json_string_value(json_array_get(l, 1)),
				     json_string_value(json_array_get(l, 2))};
		if (release_in_tx(c, &k, id, handed, e))
			goto out;
	}
	rc = 0;
out:
	json_decref(held);
	return rc;
}

/* One transaction that releases k (NULL: everything id holds or waits for). */
static int release_tx(struct store_conn *c, const struct lock_key *k, const char *id, json_t **handed, struct err *e)
{
	int rc;

	*handed = json_array();
	if ((rc = store_tx_begin_rows(c, e)))
		goto fail;
	rc = k ? release_in_tx(c, k, id, *handed, e) : release_all_in_tx(c, id, *handed, e);
	if (rc || store_tx_commit(c, e)) {
		store_tx_rollback(c);
		goto fail;
	}
	return 0;
fail:
	json_decref(*handed);
	*handed = NULL;
	return -1;
}

int store_lock_release(struct store_conn *c, const struct lock_key *k, const char *id, json_t **handed, struct err *e)
{
	return release_tx(c, k, id, handed, e);
}

int store_locks_release_all(struct store_conn *c, const char *id, json_t **handed, struct err *e)
{
	/* Every end of a process comes here: most hold and wait for nothing, and an ended one
	 * gets no new rows (its runner is gone), so a look without a transaction suffices. */
	static const char ANY[] = "SELECT 1 FROM process_locks WHERE instance_id = ? LIMIT 1";
	struct store_stmt *st = store_prepare(c, ANY, e);
	int rc;

	*handed = NULL;
	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	rc = store_step(st, e);
	store_reset(st);
	if (rc < 0)
		return -1;
	if (rc == STORE_DONE)
		return (*handed = json_array()) ? 0 : err_set(e, ERR_INTERNAL, "out of memory");
	return release_tx(c, NULL, id, handed, e);
}

int store_locks_stale(struct store_conn *c, json_t **ids, struct err *e)
{
	static const char SQL[] = "SELECT DISTINCT l.instance_id FROM process_locks l"
				  " LEFT JOIN processes p ON p.instance_id = l.instance_id"
				  " WHERE p.instance_id IS NULL"
				  " OR p.status IN ('FINISHED', 'FAILED', 'CANCELLED', 'TIMED_OUT')";
	struct store_stmt *st = store_prepare(c, SQL, e);

	*ids = NULL;
	return st ? store_collect_json(st, text_row, NULL, ids, e) : -1;
}

int store_locks_unresumed(struct store_conn *c, json_t **handed, struct err *e)
{
	static const char SQL[] = "SELECT l.instance_id, l.event_name, l.lock_name FROM process_locks l"
				  " JOIN processes p ON p.instance_id = l.instance_id"
				  " WHERE l.held = 1 AND l.event_name IS NOT NULL AND p.status = 'SUSPENDED'";
	struct store_stmt *st = store_prepare(c, SQL, e);

	*handed = NULL;
	return st ? store_collect_json(st, key_row, NULL, handed, e) : -1;
}

int store_locks_handed(struct store_conn *c, const char *id, json_t **events, struct err *e)
{
	static const char SQL[] = "SELECT event_name FROM process_locks"
				  " WHERE instance_id = ? AND held = 1 AND event_name IS NOT NULL ORDER BY seq";
	return rows_of(c, SQL, id, text_row, events, e);
}

int store_lock_resumed(struct store_conn *c, const char *id, const char *event, struct err *e)
{
	static const char SQL[] = "UPDATE process_locks SET event_name = NULL"
				  " WHERE instance_id = ? AND held = 1 AND event_name = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	store_bind_text(st, 2, event);
	return store_step_done(st, e);
}

static json_t *entry_row(struct store_stmt *st, void *ctx)
{
	(void)ctx;
	return json_pack("{s:s, s:I, s:b}", "instanceId", store_col_text(st, 0), "since",
			 (json_int_t)store_col_int64(st, 1), "held", store_col_int64(st, 2) == 1);
}

int store_lock_state(struct store_conn *c, const struct lock_key *k, json_t **out, struct err *e)
{
	static const char SQL[] = "SELECT instance_id, since, held FROM process_locks WHERE " KEY_WHERE
				  " ORDER BY held DESC, seq";
	struct store_stmt *st = store_prepare(c, SQL, e);
	json_t *rows = NULL, *r, *holder = json_null(), *waiting = json_array();
	size_t i;

	*out = NULL;
	if (!st)
		goto fail;
	bind_key(st, k);
	if (store_collect_json(st, entry_row, NULL, &rows, e))
		goto fail;
	json_array_foreach(rows, i, r)
	{
		bool held = json_is_true(json_object_get(r, "held"));
		json_object_del(r, "held");
		if (held) {
			json_decref(holder);
			holder = json_incref(r);
		} else {
			json_array_append(waiting, r);
		}
	}
	json_decref(rows);
	*out = json_pack("{s:o, s:o}", "holder", holder, "waiting", waiting);
	return 0;
fail:
	json_decref(holder);
	json_decref(waiting);
	return -1;
}

static json_t *waited_row(struct store_stmt *st, void *ctx)
{
	const char *holder = store_col_text(st, 3), *project = store_col_text(st, 5);

	(void)ctx;
	return json_pack("{s:s, s:s, s:s, s:o, s:s, s:o}", "scope", store_col_text(st, 0), "scopeId",
			 store_col_text(st, 1), "name", store_col_text(st, 2), "holder",
			 holder ? json_string(holder) : json_null(), "orgId", store_col_text(st, 4), "projectId",
			 project ? json_string(project) : json_null());
}

int store_locks_waited(struct store_conn *c, const char *id, json_t **out, struct err *e)
{
	static const char SQL[] = "SELECT w.lock_scope, w.scope_id, w.lock_name, h.instance_id, w.org_id, w.project_id"
				  " FROM process_locks w LEFT JOIN process_locks h ON h.lock_scope = w.lock_scope"
				  " AND h.scope_id = w.scope_id AND h.lock_name = w.lock_name AND h.held = 1"
				  " WHERE w.instance_id = ? AND w.held = 0 ORDER BY w.seq";
	return rows_of(c, SQL, id, waited_row, out, e);
}
