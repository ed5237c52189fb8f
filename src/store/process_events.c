#include "store/process_events.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/datetime.h"
#include "base/jsonx.h"
#include "base/uuid.h"

/* "pre"/"post" in any case, stored upper-case; anything else is not indexed. */
static const char *phase_of(json_t *data)
{
	const char *p = json_string_value(json_object_get(data, "phase"));

	if (!p)
		return NULL;
	if (strcasecmp(p, "pre") == 0)
		return "PRE";
	if (strcasecmp(p, "post") == 0)
		return "POST";
	return NULL;
}

int store_process_event_add(struct store_conn *c, const char *id, const char *type, json_t *data, int64_t date,
			    struct err *e)
{
	static const char SQL[] = "INSERT INTO process_events (id, instance_id, event_type, event_date,"
				  " correlation_id, phase, data) VALUES (?, ?, ?, ?, ?, ?, ?)";
	struct store_stmt *st;
	char eid[UUID_STR_LEN];
	char *text;
	int rc;

	if (!json_is_object(data))
		return err_set(e, ERR_INVALID, "event data must be a JSON object");
	if (!(st = store_prepare(c, SQL, e)))
		return -1;
	if (!(text = jsonx_dump(data)))
		return err_set(e, ERR_INTERNAL, "out of memory");
	uuid_v4(eid);
	store_bind_text(st, 1, eid);
	store_bind_text(st, 2, id);
	store_bind_text(st, 3, type);
	store_bind_int64(st, 4, date ? date : dt_now_ms());
	store_bind_text(st, 5, json_string_value(json_object_get(data, "correlationId")));
	store_bind_text(st, 6, phase_of(data));
	store_bind_text(st, 7, text);
	rc = store_step_done(st, e);
	free(text);
	return rc;
}

/* Concord serializes event data without null values. */
static void strip_nulls(json_t *obj)
{
	const char *k;
	json_t *v;
	void *tmp;

	json_object_foreach_safe(obj, tmp, k, v)
	{
		if (json_is_null(v))
			json_object_del(obj, k);
		else if (json_is_object(v))
			strip_nulls(v);
	}
}

static json_t *entry_of(struct store_stmt *st, void *ctx)
{
	bool include_all = *(const bool *)ctx;
	const char *type = store_col_text(st, 2), *text = store_col_text(st, 3);
	char date[DT_ISO_LEN];
	json_t *data = text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;

	if (!json_is_object(data)) {
		json_decref(data);
		data = json_object();
	}
	if (!include_all && type && strcmp(type, "ELEMENT") == 0) {
		json_object_del(data, "in");
		json_object_del(data, "out");
	}
	strip_nulls(data);
	dt_format_iso(store_col_int64(st, 4), date);
	return json_pack("{s:s, s:I, s:s, s:o, s:s}", "id", store_col_text(st, 0), "seqId",
			 (json_int_t)store_col_int64(st, 1), "eventType", type ? type : "", "data", data, "eventDate",
			 date);
}

int store_process_event_list(struct store_conn *c, const char *id, const struct event_filter *f, json_t **out,
			     struct err *e)
{
	static const char SQL[] = "SELECT id, seq_id, event_type, data, event_date FROM process_events"
				  " WHERE instance_id = ? AND seq_id > ? AND (? IS NULL OR event_type = ?)"
				  " AND event_date >= ? AND (? IS NULL OR correlation_id = ?)"
				  " AND (? IS NULL OR phase = ?) ORDER BY seq_id LIMIT ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	*out = NULL;
	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	store_bind_int64(st, 2, f->from_id > 0 ? f->from_id : 0);
	store_bind_text(st, 3, f->type);
	store_bind_text(st, 4, f->type);
	store_bind_int64(st, 5, f->after > 0 ? f->after : INT64_MIN);
	store_bind_text(st, 6, f->correlation_id);
	store_bind_text(st, 7, f->correlation_id);
	store_bind_text(st, 8, f->phase);
	store_bind_text(st, 9, f->phase);
	store_bind_int64(st, 10, f->limit > 0 ? f->limit : INT64_MAX);
	return store_collect_json(st, entry_of, (void *)&f->include_all, out, e);
}
