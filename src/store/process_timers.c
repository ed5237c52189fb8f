/* Suspend timeouts and exclusive groups (process_timers.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/datetime.h"
#include "base/str.h"
#include "store/process_internal.h"
#include "store/process_timers.h"

/* Both deadline queries name the expression index (009_timeouts.sql): without statistics
 * SQLite would walk every SUSPENDED process through processes_status, on every round of
 * the dispatcher.  (On PostgreSQL pg_sql.c drops INDEXED BY; its planner finds the index.) */
int store_process_next_suspend_deadline(struct store_conn *c, int64_t *at, struct err *e)
{
	static const char SQL[] = "SELECT MIN(last_updated_at + suspend_timeout_s * 1000)"
				  " FROM processes INDEXED BY processes_suspend_due"
				  " WHERE status = 'SUSPENDED' AND suspend_timeout_s > 0";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	*at = 0;
	if (!st)
		return -1;
	rc = store_step(st, e);
	if (rc > 0 && !store_col_is_null(st, 0))
		*at = store_col_int64(st, 0);
	store_reset(st);
	return rc < 0 ? -1 : 0;
}

static int due_suspended(struct store_conn *c, int64_t now, char (*ids)[UUID_STR_LEN], int max, struct err *e)
{
	static const char SQL[] =
	    "SELECT instance_id FROM processes INDEXED BY processes_suspend_due"
	    " WHERE status = 'SUSPENDED' AND suspend_timeout_s > 0"
	    " AND last_updated_at + suspend_timeout_s * 1000 <= ?"
	    " ORDER BY last_updated_at + suspend_timeout_s * 1000 LIMIT ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int n = 0, rc;

	if (!st)
		return -1;
	store_bind_int64(st, 1, now);
	store_bind_int64(st, 2, max);
	while ((rc = store_step(st, e)) > 0 && n < max) {
		store_col_copy(st, 0, ids[n++], UUID_STR_LEN);
		if (store_stmt_check(st, e)) {
			rc = -1;
			break;
		}
	}
	store_reset(st);
	return rc < 0 ? -1 : n;
}

int store_process_expire_suspended(struct store_conn *c, int64_t now, char (*ids)[UUID_STR_LEN], int max, struct err *e)
{
	int n = due_suspended(c, now, ids, max, e), moved = 0;

	for (int i = 0; i < n; i++) {
		struct err te;
		/* The compare-and-set decides a race with a resume: the loser sees a conflict. */
		if (store_process_transition(c, ids[i], PS_BIT(PS_SUSPENDED), PS_TIMED_OUT, &te) == 0) {
			if (moved != i)
				memcpy(ids[moved], ids[i], UUID_STR_LEN);
			moved++;
		} else if (te.code != ERR_CONFLICT) {
			*e = te;
			return -1;
		}
	}
	return n < 0 ? -1 : moved;
}

struct excl {
	char project[UUID_STR_LEN];
	char group[129];
	char mode[16];
	int64_t created_at;
};

static int read_excl(struct store_conn *c, const char *id, struct excl *x, struct err *e)
{
	static const char SQL[] = "SELECT project_id, exclusive_group, exclusive_mode, created_at FROM processes"
				  " WHERE instance_id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	memset(x, 0, sizeof *x);
	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	rc = store_step(st, e);
	if (rc > 0 && store_col_text(st, 0) && store_col_text(st, 1)) {
		store_col_copy(st, 0, x->project, sizeof x->project);
		store_col_copy(st, 1, x->group, sizeof x->group);
		store_col_copy(st, 2, x->mode, sizeof x->mode);
		x->created_at = store_col_int64(st, 3);
		if (store_stmt_check(st, e))
			rc = -1;
	}
	store_reset(st);
	return rc < 0 ? -1 : 0;
}

/* The other processes of the group that make it busy for id (new array of ids). */
static json_t *busy_ones(struct store_conn *c, const char *id, const struct excl *x, bool older_only, struct err *e)
{
	static const char SQL[] =
	    "SELECT instance_id FROM processes WHERE project_id = ? AND exclusive_group = ? AND instance_id <> ?"
	    " AND (status IN ('RUNNING', 'SUSPENDED', 'RESUMING')"
	    "      OR (status IN ('STARTING', 'ENQUEUED', 'WAITING') AND (created_at < ? OR (created_at = ? AND "
	    "instance_id < ?))))"
	    " AND (? = 0 OR created_at < ? OR (created_at = ? AND instance_id < ?))"
	    " ORDER BY created_at, instance_id";
	struct store_stmt *st = store_prepare(c, SQL, e);
	json_t *out = json_array();
	int rc;

	if (!st || !out) {
		json_decref(out);
		if (st)
			err_set(e, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	store_bind_text(st, 1, x->project);
	store_bind_text(st, 2, x->group);
	store_bind_text(st, 3, id);
	store_bind_int64(st, 4, x->created_at);
	store_bind_int64(st, 5, x->created_at);
	store_bind_text(st, 6, id);
	store_bind_int64(st, 7, older_only ? 1 : 0);
	store_bind_int64(st, 8, x->created_at);
	store_bind_int64(st, 9, x->created_at);
	store_bind_text(st, 10, id);
	while ((rc = store_step(st, e)) > 0)
		json_array_append_new(out, json_string(store_col_text(st, 0)));
	store_reset(st);
	if (rc < 0) {
		json_decref(out);
		return NULL;
	}
	return out;
}

int store_process_exclusive_claim(struct store_conn *c, const char *id, char group[129], enum excl_verdict *v,
				  json_t **old, struct err *e)
{
	struct excl x;
	json_t *busy = NULL;

	*v = EXCL_RUN;
	*old = NULL;
	group[0] = 0;
	/* What read_excl reads is set at the process's start and never changes, so it is read
	 * once, before the write lock: most processes have no group, and those need not take
	 * the lock, which would make every claim of every node take turns. */
	if (read_excl(c, id, &x, e))
		return -1;
	if (!x.group[0])
		return 0;
	if (str_fmt(group, 129, "%s", x.group)) /* both 129 bytes */
		return err_set(e, ERR_INTERNAL, "exclusive group too long");
	if (store_tx_begin(c, e))
		return -1;
	if (!(busy = busy_ones(c, id, &x, strcmp(x.mode, "cancelOld") == 0, e)))
		goto fail;
	if (json_array_size(busy) && strcmp(x.mode, "cancelOld") == 0) {
		*v = EXCL_CANCEL_OLD;
		*old = json_incref(busy);
	} else if (json_array_size(busy)) {
		*v = strcmp(x.mode, "wait") == 0 ? EXCL_WAIT : EXCL_CANCEL;
		/* EXCL_CANCEL: the caller writes why, then makes it CANCELLED (a reader that
		 * sees the final status finds the reason in the log). */
		if (*v == EXCL_WAIT &&
		    proc_transition_in_tx(c, id, PS_BIT(PS_STARTING), PS_WAITING, NULL, dt_now_ms(), e))
			goto fail;
	}
	json_decref(busy);
	return store_tx_commit(c, e);
fail:
	json_decref(busy);
	store_tx_rollback(c);
	*v = EXCL_RUN;
	return -1;
}

int store_process_exclusive_release(struct store_conn *c, const char *id, struct err *e)
{
	static const char SQL[] = "SELECT instance_id FROM processes WHERE project_id = ? AND exclusive_group = ?"
				  " AND status = 'WAITING' ORDER BY created_at, instance_id LIMIT 1";
	char next[UUID_STR_LEN] = "";
	struct store_stmt *st;
	struct excl x;
	int rc;

	if (read_excl(c, id, &x, e))
		return -1;
	if (!x.group[0])
		return 0;
	if (!(st = store_prepare(c, SQL, e)))
		return -1;
	store_bind_text(st, 1, x.project);
	store_bind_text(st, 2, x.group);
	rc = store_step(st, e);
	if (rc > 0) {
		store_col_copy(st, 0, next, sizeof next);
		if (store_stmt_check(st, e))
			rc = -1;
	}
	store_reset(st);
	if (rc <= 0)
		return rc;
	if (store_process_transition(c, next, PS_BIT(PS_WAITING), PS_ENQUEUED, e))
		return e->code == ERR_CONFLICT ? 0 : -1; /* cancelled or released meanwhile */
	return 1;
}

int store_process_exclusive_blockers(struct store_conn *c, const char *id, char group[129], json_t **out, struct err *e)
{
	struct excl x;

	group[0] = '\0';
	*out = NULL;
	if (read_excl(c, id, &x, e))
		return -1;
	if (!x.group[0]) {
		*out = json_array();
		return *out ? 0 : err_set(e, ERR_INTERNAL, "out of memory");
	}
	memcpy(group, x.group, sizeof x.group);
	*out = busy_ones(c, id, &x, false, e);
	return *out ? 0 : -1;
}
