/* The audit log's rows (audit.h). */
#include "store/audit.h"

#include <stdlib.h>

#include "base/log.h"
#include "base/datetime.h"
#include "base/jsonx.h"
#include "store/audit_chain.h"

int store_audit_insert(struct store_conn *c, const struct audit_entry *a, struct err *e)
{
	return store_audit_insert_with(c, a, NULL, e);
}

/* The entry and the chain's new head in one transaction (a savepoint inside the caller's). */
int store_audit_insert_with(struct store_conn *c, const struct audit_entry *a, const struct audit_keys *k,
			    struct err *e)
{
	static const char SQL[] = "INSERT INTO audit_log (entry_date, object, action, user_id, username, source,"
				  " api_key_id, instance_id, address, details, chain_no, mac)"
				  " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	struct store_stmt *st;
	char *details = jsonx_dump(a->details);
	unsigned char mac[AUDIT_MAC_BYTES];
	struct audit_fields f = {.entry_date = dt_now_ms(),
				 .object = a->object,
				 .action = a->action,
				 .user_id = a->user_id,
				 .username = a->username,
				 .source = a->source,
				 .api_key_id = a->api_key_id,
				 .instance_id = a->instance_id,
				 .address = a->address,
				 .details = details};
	int rc, chained;

	if (!details)
		return err_set(e, ERR_INTERNAL, "out of memory");
	if ((rc = store_tx_begin_rows(c, e))) {
		free(details);
		return rc;
	}
	if ((chained = store_audit_chain_extend(c, k, &f, mac, e)) < 0 || !(st = store_prepare(c, SQL, e))) {
		rc = -1;
		goto out;
	}
	store_bind_int64(st, 1, f.entry_date);
	store_bind_text(st, 2, f.object);
	store_bind_text(st, 3, f.action);
	store_bind_text(st, 4, f.user_id);
	store_bind_text(st, 5, f.username);
	store_bind_text(st, 6, f.source);
	store_bind_text(st, 7, f.api_key_id);
	store_bind_text(st, 8, f.instance_id);
	store_bind_text(st, 9, f.address);
	store_bind_text(st, 10, details);
	if (chained == 0) {
		store_bind_int64(st, 11, f.chain_no);
		store_bind_blob(st, 12, mac, sizeof mac);
	} else {
		store_bind_null(st, 11);
		store_bind_null(st, 12);
	}
	rc = store_step_done(st, e);
out:
	free(details);
	if (rc == 0)
		return store_tx_commit(c, e);
	store_tx_rollback(c);
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
	int rc;

	*n = 0;
	if ((rc = store_tx_begin_rows(c, e)))
		return rc;
	if ((rc = store_audit_chain_expire(c, cutoff, batch, n, e)) == 0)
		return store_tx_commit(c, e);
	store_tx_rollback(c);
	*n = 0;
	return rc;
}
