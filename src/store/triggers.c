/* Triggers of repositories (store/triggers.h).  Portable SQL: no SQLite-only function is
 * used; times are Unix milliseconds as everywhere in the schema. */
#include "store/triggers.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/datetime.h"
#include "base/jsonx.h"

#define TRIGGER_COLS                                                                                                   \
	"t.id, t.project_id, t.repo_id, t.event_source, t.entry_point, t.arguments, t.active_profiles, t.conditions,"  \
	" t.cfg, t.fingerprint, t.next_fire_at, t.last_fire_at"
/* Enabled: the repository is neither disabled nor has its triggers disabled. */
#define TRIGGER_FROM                                                                                                   \
	" FROM triggers t JOIN repositories r ON r.id = t.repo_id WHERE r.disabled = 0 AND r.triggers_disabled = 0"

void store_trigger_cleanup(struct trigger *t)
{
	if (!t)
		return;
	json_decref(t->arguments);
	json_decref(t->active_profiles);
	json_decref(t->conditions);
	json_decref(t->cfg);
	t->arguments = t->active_profiles = t->conditions = t->cfg = NULL;
}

void store_trigger_free_list(struct trigger *v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		store_trigger_cleanup(&v[i]);
	free(v);
}

static void copy_col(struct store_stmt *st, int i, char *dst, size_t cap)
{
	store_col_copy(st, i, dst, cap);
}

/* A JSON column: NULL for SQL NULL.  Text that does not parse cannot come from this module;
 * it is read as NULL rather than failing the whole list. */
static json_t *json_col(struct store_stmt *st, int i)
{
	const char *v = store_col_text(st, i);
	return v ? json_loads(v, JSON_DECODE_ANY, NULL) : NULL;
}

static int read_trigger(struct store_stmt *st, struct trigger *t, struct err *e)
{
	memset(t, 0, sizeof *t);
	copy_col(st, 0, t->id, sizeof t->id);
	copy_col(st, 1, t->project_id, sizeof t->project_id);
	copy_col(st, 2, t->repo_id, sizeof t->repo_id);
	copy_col(st, 3, t->event_source, sizeof t->event_source);
	copy_col(st, 4, t->entry_point, sizeof t->entry_point);
	t->arguments = json_col(st, 5);
	t->active_profiles = json_col(st, 6);
	t->conditions = json_col(st, 7);
	t->cfg = json_col(st, 8);
	copy_col(st, 9, t->fingerprint, sizeof t->fingerprint);
	t->next_fire_at = store_col_is_null(st, 10) ? 0 : store_col_int64(st, 10);
	t->last_fire_at = store_col_is_null(st, 11) ? 0 : store_col_int64(st, 11);
	if (!t->cfg)
		t->cfg = json_object();
	return store_stmt_check(st, e);
}

/* Steps st to its end (then resets it) into a new array. */
static int collect(struct store_stmt *st, struct trigger **out, size_t *n, struct err *e)
{
	struct trigger *v = NULL;
	size_t len = 0, cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	while ((rc = store_step(st, e)) == STORE_ROW) {
		if (len == cap) {
			struct trigger *grown;
			cap = cap ? cap * 2 : 8;
			if (!(grown = realloc(v, cap * sizeof *v))) {
				rc = err_set(e, ERR_INTERNAL, "out of memory");
				break;
			}
			v = grown;
		}
		rc = read_trigger(st, &v[len], e);
		len++;
		if (rc < 0)
			break;
	}
	store_reset(st);
	if (rc < 0) {
		store_trigger_free_list(v, len);
		return rc;
	}
	*out = v;
	*n = len;
	return 0;
}

/* last_fire_at and next_fire_at of the old trigger of repo_id with this fingerprint (0:
 * none). */
static int old_fire_times(struct store_conn *c, const char *repo_id, const char *fingerprint, int64_t *last,
			  int64_t *next, struct err *e)
{
	static const char SQL[] = "SELECT MAX(last_fire_at), MIN(next_fire_at) FROM triggers"
				  " WHERE repo_id = ? AND fingerprint = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	*last = *next = 0;
	if (!st)
		return -1;
	store_bind_text(st, 1, repo_id);
	store_bind_text(st, 2, fingerprint);
	rc = store_step(st, e);
	if (rc == STORE_ROW && !store_col_is_null(st, 0))
		*last = store_col_int64(st, 0);
	if (rc == STORE_ROW && !store_col_is_null(st, 1))
		*next = store_col_int64(st, 1);
	store_reset(st);
	return rc < 0 ? rc : 0;
}

/* A JSON value as text (NULL: SQL NULL, or fallback when given). */
static int bind_json(struct store_stmt *st, int idx, const json_t *v, const char *fallback, struct err *e)
{
	char *text = v ? jsonx_dump(v) : NULL;

	if (v && !text)
		return err_set(e, ERR_INTERNAL, "out of memory");
	store_bind_text(st, idx, text ? text : fallback);
	free(text);
	return 0;
}

static int insert_one(struct store_conn *c, const struct trigger *t, int64_t last_fire, int64_t now, struct err *e)
{
	static const char SQL[] =
	    "INSERT INTO triggers (id, project_id, repo_id, event_source, entry_point, arguments, active_profiles,"
	    " conditions, cfg, fingerprint, next_fire_at, last_fire_at, created_at)"
	    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, t->id);
	store_bind_text(st, 2, t->project_id);
	store_bind_text(st, 3, t->repo_id);
	store_bind_text(st, 4, t->event_source);
	store_bind_text(st, 5, t->entry_point[0] ? t->entry_point : NULL);
	if (bind_json(st, 6, t->arguments, NULL, e) || bind_json(st, 7, t->active_profiles, NULL, e) ||
	    bind_json(st, 8, t->conditions, NULL, e) || bind_json(st, 9, t->cfg, "{}", e)) {
		store_reset(st);
		return -1;
	}
	store_bind_text(st, 10, t->fingerprint);
	if (t->next_fire_at)
		store_bind_int64(st, 11, t->next_fire_at);
	else
		store_bind_null(st, 11);
	if (last_fire)
		store_bind_int64(st, 12, last_fire);
	else
		store_bind_null(st, 12);
	store_bind_int64(st, 13, now);
	return store_step_done(st, e);
}

static int delete_of_repo(struct store_conn *c, const char *repo_id, struct err *e)
{
	static const char SQL[] = "DELETE FROM triggers WHERE repo_id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, repo_id);
	return store_step_done(st, e);
}

int store_triggers_replace(struct store_conn *c, const char *repo_id, struct trigger *v, size_t n, struct err *e)
{
	int64_t now = dt_now_ms(), *last;
	int rc = 0;

	if (!(last = calloc(n + 1, sizeof *last)))
		return err_set(e, ERR_INTERNAL, "out of memory");
	if (store_tx_begin(c, e)) {
		free(last);
		return -1;
	}
	/* The carried-over fire times are read before the old rows go.  An unchanged trigger
	 * keeps its next minute too: one that is due but not yet claimed (by any node) fires,
	 * rather than being moved on to the minute after the refresh. */
	for (size_t i = 0; i < n && rc == 0; i++) {
		int64_t next = 0;
		rc = old_fire_times(c, repo_id, v[i].fingerprint, &last[i], &next, e);
		if (rc == 0 && next && v[i].next_fire_at && next < v[i].next_fire_at)
			v[i].next_fire_at = next;
	}
	if (rc == 0)
		rc = delete_of_repo(c, repo_id, e);
	/* created_at + i keeps the definition's order in the lists (ORDER BY created_at). */
	for (size_t i = 0; i < n && rc == 0; i++) {
		v[i].last_fire_at = last[i];
		rc = insert_one(c, &v[i], last[i], now + (int64_t)i, e);
	}
	free(last);
	if (rc) {
		store_tx_rollback(c);
		return rc;
	}
	return store_tx_commit(c, e);
}

int store_triggers_of_repo(struct store_conn *c, const char *repo_id, struct trigger **out, size_t *n, struct err *e)
{
	static const char SQL[] = "SELECT " TRIGGER_COLS TRIGGER_FROM " AND (? IS NULL OR t.repo_id = ?)"
				  " ORDER BY t.created_at, t.id";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, repo_id);
	store_bind_text(st, 2, repo_id);
	return collect(st, out, n, e);
}

int store_triggers_of_source(struct store_conn *c, const char *event_source, struct trigger **out, size_t *n,
			     struct err *e)
{
	static const char SQL[] = "SELECT " TRIGGER_COLS TRIGGER_FROM " AND (? IS NULL OR t.event_source = ?)"
				  " ORDER BY t.created_at, t.id";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, event_source);
	store_bind_text(st, 2, event_source);
	return collect(st, out, n, e);
}

int store_triggers_next_fire(struct store_conn *c, int64_t *at, struct err *e)
{
	static const char SQL[] = "SELECT MIN(t.next_fire_at)" TRIGGER_FROM " AND t.next_fire_at IS NOT NULL";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	*at = 0;
	if (!st)
		return -1;
	rc = store_step(st, e);
	if (rc == STORE_ROW && !store_col_is_null(st, 0))
		*at = store_col_int64(st, 0);
	store_reset(st);
	return rc < 0 ? rc : 0;
}

int store_triggers_due(struct store_conn *c, int64_t now, struct trigger **out, size_t *n, struct err *e)
{
	static const char SQL[] =
	    "SELECT " TRIGGER_COLS TRIGGER_FROM
	    " AND t.next_fire_at IS NOT NULL AND t.next_fire_at <= ? ORDER BY t.next_fire_at, t.id";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_int64(st, 1, now);
	return collect(st, out, n, e);
}

int store_trigger_claim_fire(struct store_conn *c, const char *id, int64_t minute, int64_t next, struct err *e)
{
	static const char SQL[] = "UPDATE triggers SET last_fire_at = ?, next_fire_at = ?"
				  " WHERE id = ? AND (last_fire_at IS NULL OR last_fire_at < ?)";
	struct store_stmt *st;
	int rc;

	/* Inside the write lock: a refresh (store_triggers_replace) carries last_fire_at over
	 * to new rows in one transaction, which must not read it before this claim commits. */
	if (store_tx_begin(c, e))
		return -1;
	if (!(st = store_prepare(c, SQL, e))) {
		store_tx_rollback(c);
		return -1;
	}
	store_bind_int64(st, 1, minute);
	if (next)
		store_bind_int64(st, 2, next);
	else
		store_bind_null(st, 2);
	store_bind_text(st, 3, id);
	store_bind_int64(st, 4, minute);
	if ((rc = store_step_done(st, e))) {
		store_tx_rollback(c);
		return rc;
	}
	rc = store_changes(c) > 0 ? 1 : 0;
	return store_tx_commit(c, e) ? -1 : rc;
}

int store_trigger_set_next(struct store_conn *c, const char *id, int64_t next, struct err *e)
{
	static const char SQL[] = "UPDATE triggers SET next_fire_at = ? WHERE id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	if (next)
		store_bind_int64(st, 1, next);
	else
		store_bind_null(st, 1);
	store_bind_text(st, 2, id);
	return store_step_done(st, e);
}
