/* The audit log's rows (audit.h). */
#include "store/audit.h"

#include <stdlib.h>

#include "base/log.h"
#include "base/datetime.h"
#include "base/jsonx.h"

int store_audit_insert(struct store_conn *c, const struct audit_entry *a, struct err *e)
{
	static const char SQL[] = "INSERT INTO audit_log (entry_date, object, action, user_id, username, source,"
				  " api_key_id, instance_id, address, details) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	struct store_stmt *st;
	char *details = jsonx_dump(a->details);
	int rc;

	if (!details)
		return err_set(e, ERR_INTERNAL, "out of memory");
	if (!(st = store_prepare(c, SQL, e))) {
		free(details);
		return -1;
	}
	store_bind_int64(st, 1, dt_now_ms());
	store_bind_text(st, 2, a->object);
	store_bind_text(st, 3, a->action);
	store_bind_text(st, 4, a->user_id);
	store_bind_text(st, 5, a->username);
	store_bind_text(st, 6, a->source);
	store_bind_text(st, 7, a->api_key_id);
	store_bind_text(st, 8, a->instance_id);
	store_bind_text(st, 9, a->address);
	store_bind_text(st, 10, details);
	rc = store_step_done(st, e);
	free(details);
	return rc;
}

void store_audit_system(struct store_conn *c, const char *action, const char *instance_id, const char *parent_id,
			const char *user_id, const char *username, const char *reason)
{
	json_t *details = json_pack("{s:s,s:s}", "instanceId", instance_id, "reason", reason);
	struct audit_entry a = {.object = "PROCESS",
				.action = action,
				.user_id = user_id && *user_id ? user_id : NULL,
				.username = username && *username ? username : NULL,
				.source = "SYSTEM",
				.details = details};
	struct err e;

	if (details && parent_id && *parent_id)
		json_object_set_new(details, "parentInstanceId", json_string(parent_id));
	if (!details)
		LOG_E("audit: cannot record %s PROCESS %s: out of memory", action, instance_id);
	else if (store_audit_insert(c, &a, &e))
		LOG_E("audit: cannot record %s PROCESS %s (%s): %s", action, instance_id, reason, e.msg);
	json_decref(details);
}

static void set_text(json_t *o, const char *key, struct store_stmt *st, int col)
{
	const char *v = store_col_text(st, col);

	if (v)
		json_object_set_new(o, key, json_string(v));
}

static json_t *entry_of(struct store_stmt *st, void *ctx)
{
	char date[DT_ISO_LEN];
	json_t *v = json_object(), *user = json_object(), *src = json_object();
	json_t *details = json_loads(store_col_text(st, 9) ? store_col_text(st, 9) : "{}", 0, NULL);

	(void)ctx;
	if (!v || !user || !src || !json_is_object(details)) {
		json_decref(v);
		json_decref(user);
		json_decref(src);
		json_decref(details);
		return NULL;
	}
	dt_format_iso(store_col_int64(st, 0), date);
	json_object_set_new(v, "entryDate", json_string(date));
	set_text(v, "action", st, 2);
	set_text(v, "object", st, 1);
	set_text(user, "id", st, 3);
	set_text(user, "username", st, 4);
	if (json_object_size(user))
		json_object_set(v, "user", user);
	set_text(src, "type", st, 5);
	set_text(src, "instanceId", st, 7);
	set_text(src, "apiKeyId", st, 6);
	set_text(src, "address", st, 8);
	json_object_set_new(details, "actionSource", src);
	json_object_set_new(v, "details", details);
	json_decref(user);
	return v;
}

int store_audit_list(struct store_conn *c, const struct audit_filter *f, json_t **out, struct err *e)
{
	static const char SQL[] = "SELECT entry_date, object, action, user_id, username, source, api_key_id,"
				  " instance_id, address, details FROM audit_log"
				  " WHERE entry_date > ? AND entry_date < ? AND (? IS NULL OR object = ?)"
				  " AND (? IS NULL OR action = ?) AND (? IS NULL OR username = ?)"
				  " ORDER BY entry_date DESC, seq DESC LIMIT ? OFFSET ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	*out = NULL;
	if (!st)
		return -1;
	store_bind_int64(st, 1, f->after ? f->after : INT64_MIN);
	store_bind_int64(st, 2, f->before ? f->before : INT64_MAX);
	store_bind_text(st, 3, f->object);
	store_bind_text(st, 4, f->object);
	store_bind_text(st, 5, f->action);
	store_bind_text(st, 6, f->action);
	store_bind_text(st, 7, f->username);
	store_bind_text(st, 8, f->username);
	store_bind_int64(st, 9, (int64_t)f->limit);
	store_bind_int64(st, 10, (int64_t)f->offset);
	return store_collect_json(st, entry_of, NULL, out, e);
}

int store_audit_expire(struct store_conn *c, int64_t cutoff, size_t batch, size_t *n, struct err *e)
{
	static const char SQL[] = "DELETE FROM audit_log WHERE seq IN (SELECT seq FROM audit_log"
				  " WHERE entry_date < ? ORDER BY entry_date LIMIT ?)";
	struct store_stmt *st = store_prepare(c, SQL, e);

	*n = 0;
	if (!st)
		return -1;
	store_bind_int64(st, 1, cutoff);
	store_bind_int64(st, 2, (int64_t)batch);
	if (store_step_done(st, e))
		return -1;
	*n = (size_t)store_changes(c);
	return 0;
}
