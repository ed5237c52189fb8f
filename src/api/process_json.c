#include "api/process_json.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/datetime.h"
#include "base/str.h"

struct inc_ctx {
	struct api_call *c;
	unsigned bits;
	int rc;
};

static int one_include(void *ctx, const char *key, const char *value)
{
	static const struct {
		const char *name;
		unsigned bit;
	} names[] = {{"checkpoints", INC_CHECKPOINTS},
		     {"checkpointsHistory", INC_CHECKPOINTS_HISTORY},
		     {"childrenIds", INC_CHILDREN},
		     {"history", INC_HISTORY},
		     {"out", INC_OUT}};
	struct inc_ctx *ic = ctx;

	if (strcmp(key, "include") != 0)
		return 0;
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcasecmp(value, names[i].name) == 0) {
			ic->bits |= names[i].bit;
			return 0;
		}
	ic->rc = api_fail(
	    ic->c, ERR_INVALID,
	    "unknown include '%.64s': expected checkpoints, checkpointsHistory, childrenIds, history or out", value);
	return 1;
}

int api_process_includes(struct api_call *c, unsigned *out)
{
	struct inc_ctx ic = {.c = c};

	http_query_each(c->req, one_include, &ic);
	*out = ic.bits;
	return ic.rc;
}

static void set_time(json_t *v, const char *key, int64_t ms)
{
	char ts[DT_ISO_LEN];

	if (!ms)
		return;
	dt_format_iso(ms, ts);
	json_object_set_new(v, key, json_string(ts));
}

static void set_str(json_t *v, const char *key, const char *s)
{
	if (s && *s)
		json_object_set_new(v, key, json_string(s));
}

int api_process_json(struct api_call *c, const struct process *p, unsigned includes, json_t **out)
{
	json_t *v = json_object(), *list = NULL;
	char log_name[UUID_STR_LEN + 8];

	set_str(v, "instanceId", p->instance_id);
	set_str(v, "kind", p->kind);
	set_str(v, "parentInstanceId", p->parent_instance_id);
	set_str(v, "orgId", p->org_id);
	set_str(v, "orgName", p->org_name);
	set_str(v, "projectId", p->project_id);
	set_str(v, "projectName", p->project_name);
	if (p->repo)
		json_object_update(v, p->repo);
	if (p->triggered_by)
		json_object_set(v, "triggeredBy", p->triggered_by);
	set_time(v, "createdAt", p->created_at);
	set_str(v, "initiator", p->initiator);
	set_str(v, "initiatorId", p->initiator_id);
	set_str(v, "status", proc_status_name(p->status));
	set_time(v, "startAt", p->start_at);
	set_time(v, "lastUpdatedAt", p->last_updated_at);
	set_time(v, "lastRunAt", p->last_run_at);
	if (p->total_runtime_ms)
		json_object_set_new(v, "totalRuntimeMs", json_integer(p->total_runtime_ms));
	if (str_fmt(log_name, sizeof log_name, "%s.log", p->instance_id)) {
		json_decref(v);
		return api_fail(c, ERR_INTERNAL, "process id too long: %s", p->instance_id);
	}
	set_str(v, "logFileName", log_name);
	if (json_array_size(p->tags))
		json_object_set(v, "tags", p->tags);
	if (json_object_size(p->meta))
		json_object_set(v, "meta", p->meta);
	if (json_array_size(p->handlers))
		json_object_set(v, "handlers", p->handlers);
	if (p->timeout_s)
		json_object_set_new(v, "timeout", json_integer(p->timeout_s));
	if (p->suspend_timeout_s)
		json_object_set_new(v, "suspendTimeout", json_integer(p->suspend_timeout_s));
	json_object_set_new(v, "disabled", json_boolean(p->disabled));
	json_object_set_new(v, "runtime", json_string("concord-v2"));
	if (includes & INC_CHILDREN) {
		if (store_process_children(c->db, p->instance_id, &list, &c->err))
			goto fail;
		json_object_set_new(v, "childrenIds", list);
	}
	if (includes & INC_HISTORY) {
		if (store_process_history(c->db, p->instance_id, &list, &c->err))
			goto fail;
		json_object_set_new(v, "statusHistory", list);
	}
	if (api_process_checkpoints_json(c, p->instance_id, includes, v) || api_process_lock_waits_json(c, p, v))
		goto fail;
	*out = v;
	return 0;
fail:
	json_decref(v);
	return -1;
}
