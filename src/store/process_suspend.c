/* Suspend, resume and requeue of a process (processes.h): each one transaction that
 * changes the status together with what the next run needs — a row transaction that
 * locks the process's row first (store.h), so those of different processes, on any node,
 * run at once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/datetime.h"
#include "base/jsonx.h"
#include "store/process_events.h"
#include "store/process_internal.h"

/* Sets the columns a resume or a suspension leaves for the next run. */
static int set_resume_cols(struct store_conn *c, const char *id, json_t *wait, int64_t resume_at, const char *event,
			   json_t *args, bool clear_start, struct err *e)
{
	static const char SQL[] = "UPDATE processes SET wait_events = ?, resume_at = ?, resume_event = ?,"
				  " resume_args = ?, start_at = CASE WHEN ? = 1 THEN NULL ELSE start_at END"
				  " WHERE instance_id = ?";
	char *wtext = wait ? jsonx_dump(wait) : NULL, *atext = args ? jsonx_dump(args) : NULL;
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc = -1;

	if ((wait && !wtext) || (args && !atext)) {
		rc = err_set(e, ERR_INTERNAL, "out of memory");
		goto out;
	}
	if (!st)
		goto out;
	store_bind_text(st, 1, wtext);
	if (resume_at)
		store_bind_int64(st, 2, resume_at);
	else
		store_bind_null(st, 2);
	store_bind_text(st, 3, event && *event ? event : NULL);
	store_bind_text(st, 4, atext);
	store_bind_int64(st, 5, clear_start ? 1 : 0);
	store_bind_text(st, 6, id);
	rc = store_step_done(st, e);
out:
	free(wtext);
	free(atext);
	return rc;
}

static int drop_forms(struct store_conn *c, const char *id, struct err *e)
{
	static const char SQL[] = "DELETE FROM process_forms WHERE instance_id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	return store_step_done(st, e);
}

static int put_forms(struct store_conn *c, const char *id, json_t *forms, json_t *names, struct err *e)
{
	static const char SQL[] = "INSERT INTO process_forms (instance_id, name, event_name, form) VALUES (?, ?, ?, ?)";
	const char *name;
	json_t *form;

	json_object_foreach(forms, name, form)
	{
		struct store_stmt *st = store_prepare(c, SQL, e);
		const char *ev = json_string_value(json_object_get(form, "eventName"));
		char *text = jsonx_dump(form);
		int rc;
		if (!st || !text) {
			free(text);
			return st ? err_set(e, ERR_INTERNAL, "out of memory") : -1;
		}
		store_bind_text(st, 1, id);
		store_bind_text(st, 2, name);
		store_bind_text(st, 3, ev ? ev : name);
		store_bind_text(st, 4, text);
		rc = store_step_done(st, e);
		free(text);
		if (rc)
			return -1;
		json_array_append_new(names, json_string(name));
	}
	return 0;
}

static bool has_name(json_t *arr, const char *name)
{
	size_t i;
	json_t *v;

	json_array_foreach(arr, i, v) if (json_is_string(v) && strcmp(json_string_value(v), name) == 0) return true;
	return false;
}

int store_process_suspend(struct store_conn *c, const char *id, const struct process_suspension *s, struct err *e)
{
	json_t *wait = json_array(), *form_names = json_array(), *ev;
	int64_t now = dt_now_ms();
	size_t i;
	int rc = -1;

	json_array_foreach(s->events, i, ev) if (json_is_string(ev) && !has_name(wait, json_string_value(ev)))
	    json_array_append(wait, ev);
	if (store_tx_begin_rows(c, e))
		goto out;
	if (proc_lock_row(c, id, e) || store_process_payload_put(c, id, s->payload, s->payload_len, e) ||
	    drop_forms(c, id, e) ||
	    put_forms(c, id, s->forms, form_names, e))
		goto fail;
	json_array_foreach(form_names, i, ev) if (!has_name(wait, json_string_value(ev))) json_array_append(wait, ev);
	if (set_resume_cols(c, id, wait, s->wake_event ? s->wake_at : 0, s->wake_event, NULL, false, e) ||
	    proc_transition_in_tx(c, id, PS_BIT(PS_STARTING) | PS_BIT(PS_RUNNING), PS_SUSPENDED, NULL, now, e))
		goto fail;
	{
		json_t *data = json_pack("{s:s, s:O, s:O}", "status", "SUSPENDED", "eventNames", wait, "forms", form_names);
		int erc = store_process_event_add(c, id, "PROCESS_WAIT", data, now, e);
		json_decref(data);
		if (erc)
			goto fail;
	}
	rc = store_tx_commit(c, e);
	goto out;
fail:
	store_tx_rollback(c);
out:
	json_decref(wait);
	json_decref(form_names);
	return rc;
}

/* The status and awaited names of a process, its row locked for the row transaction. */
static int read_wait(struct store_conn *c, const char *id, int *status, json_t **wait, struct err *e)
{
#define READ_WAIT "SELECT status, wait_events FROM processes WHERE instance_id = ?"
	static const char SQL[] = READ_WAIT, SQL_LOCKED[] = READ_WAIT " FOR UPDATE";
	struct store_stmt *st = store_prepare(c, store_row_locks(c) ? SQL_LOCKED : SQL, e);
	int rc;

	*status = -1;
	*wait = NULL;
	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	rc = store_step(st, e);
	if (rc == STORE_ROW) {
		*status = proc_status_parse(store_col_text(st, 0) ? store_col_text(st, 0) : "");
		if (store_col_text(st, 1))
			*wait = json_loads(store_col_text(st, 1), 0, NULL);
	}
	store_reset(st);
	if (rc == STORE_DONE)
		return err_set(e, ERR_NOT_FOUND, "Process instance not found: %s", id);
	return rc < 0 ? rc : 0;
}

int proc_requeue_in_tx(struct store_conn *c, const char *id, unsigned from_mask, const char *event, json_t *args,
		       struct err *e)
{
	int64_t now = dt_now_ms();

	if (drop_forms(c, id, e) || set_resume_cols(c, id, NULL, 0, event, args, true, e) ||
	    proc_transition_in_tx(c, id, from_mask, PS_RESUMING, NULL, now, e) ||
	    proc_transition_in_tx(c, id, PS_BIT(PS_RESUMING), PS_ENQUEUED, NULL, now, e))
		return -1;
	return 0;
}

static int set_current_user(struct store_conn *c, const char *id, const char *user_id, struct err *e)
{
	static const char SQL[] = "UPDATE processes SET current_user_id = ? WHERE instance_id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_text(st, 1, user_id);
	store_bind_text(st, 2, id);
	rc = store_step(st, e);
	store_reset(st);
	return rc < 0 ? rc : 0;
}

int store_process_resume(struct store_conn *c, const char *id, const char *event, json_t *args, struct err *e)
{
	return store_process_resume_as(c, id, event, args, NULL, e);
}

int store_process_current_user(struct store_conn *c, const char *id, char out[UUID_STR_LEN], struct err *e)
{
	static const char SQL[] = "SELECT current_user_id FROM processes WHERE instance_id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	out[0] = '\0';
	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	rc = store_step(st, e);
	if (rc == STORE_ROW && store_col_text(st, 0) && strlen(store_col_text(st, 0)) < UUID_STR_LEN)
		memcpy(out, store_col_text(st, 0), strlen(store_col_text(st, 0)) + 1);
	store_reset(st);
	return rc < 0 ? rc : 0;
}

int store_process_resume_as(struct store_conn *c, const char *id, const char *event, json_t *args, const char *user_id,
			    struct err *e)
{
	json_t *wait = NULL;
	int status;

	if (store_tx_begin_rows(c, e))
		return -1;
	if (read_wait(c, id, &status, &wait, e))
		goto fail;
	if (status != PS_SUSPENDED) {
		err_set(e, ERR_CONFLICT, "Process is not suspended, can't resume");
		goto fail;
	}
	if (!has_name(wait, event)) {
		err_set(e, ERR_INVALID, "Unexpected 'resume' events: [%.200s]", event);
		goto fail;
	}
	if (proc_requeue_in_tx(c, id, PS_BIT(PS_SUSPENDED), event, json_is_object(args) ? args : NULL, e) ||
	    (user_id && set_current_user(c, id, user_id, e)))
		goto fail;
	json_decref(wait);
	return store_tx_commit(c, e);
fail:
	json_decref(wait);
	store_tx_rollback(c);
	return -1;
}

int store_process_requeue(struct store_conn *c, const char *id, unsigned from_mask, const char *event, json_t *args,
			  const void *payload, size_t len, struct err *e)
{
	if (store_tx_begin_rows(c, e))
		return -1;
	if (proc_lock_row(c, id, e) || (payload && store_process_payload_put(c, id, payload, len, e)) ||
	    proc_requeue_in_tx(c, id, from_mask, event, json_is_object(args) ? args : NULL, e)) {
		store_tx_rollback(c);
		return -1;
	}
	return store_tx_commit(c, e);
}

int store_process_forms(struct store_conn *c, const char *id, json_t **forms, struct err *e)
{
	static const char SQL[] = "SELECT name, form FROM process_forms WHERE instance_id = ? ORDER BY name";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	*forms = NULL;
	if (!st)
		return -1;
	*forms = json_object();
	store_bind_text(st, 1, id);
	while ((rc = store_step(st, e)) == STORE_ROW) {
		json_t *f = store_col_text(st, 1) ? json_loads(store_col_text(st, 1), 0, NULL) : NULL;
		if (f)
			json_object_set_new(*forms, store_col_text(st, 0), f);
	}
	store_reset(st);
	if (rc < 0) {
		json_decref(*forms);
		*forms = NULL;
		return -1;
	}
	return 0;
}

int store_process_form_update(struct store_conn *c, const char *id, const char *name, json_t *form, struct err *e)
{
	static const char SQL[] = "UPDATE process_forms SET form = ? WHERE instance_id = ? AND name = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	char *text = jsonx_dump(form);
	int rc = -1;

	if (!text)
		rc = err_set(e, ERR_INTERNAL, "out of memory");
	else if (st) {
		store_bind_text(st, 1, text);
		store_bind_text(st, 2, id);
		store_bind_text(st, 3, name);
		rc = store_step_done(st, e);
	}
	free(text);
	return rc;
}

int store_process_wait_events(struct store_conn *c, const char *id, json_t **events, struct err *e)
{
	int status;

	if (read_wait(c, id, &status, events, e))
		return -1;
	if (status != PS_SUSPENDED || !json_is_array(*events)) {
		json_decref(*events);
		*events = json_array();
	}
	return 0;
}

int store_process_resume_args(struct store_conn *c, const char *id, json_t **args, struct err *e)
{
	static const char SQL[] = "SELECT resume_args FROM processes WHERE instance_id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	*args = NULL;
	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	rc = store_step(st, e);
	if (rc == STORE_ROW) {
		const char *text = store_col_text(st, 0);
		*args = text ? json_loads(text, 0, NULL) : NULL;
		if (store_stmt_check(st, e))
			rc = -1;
	}
	store_reset(st);
	if (rc < 0 || !json_is_object(*args)) {
		json_decref(*args);
		*args = NULL;
	}
	return rc < 0 ? -1 : 0;
}
