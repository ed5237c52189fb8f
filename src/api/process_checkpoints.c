/* Checkpoints (issue 9; reference concord-docs/api/checkpoint.md):
 *   GET  /api/v1/process/{id}/checkpoint                          the list
 *   POST /api/v1/process/{id}/checkpoint/restore   {"id": …}      restore by id
 *   GET  /api/v2/process/{id}/checkpoint?name=…&action=restore    restore by name
 *   GET  /api/v3/process/{id}/checkpoint?offset=&limit=           the list, paged
 * A restore puts the checkpoint's snapshot back as the process's payload and enqueues
 * the same process again; its runner resumes right after the checkpoint step. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/doc_schemas.h"
#include "api/process_access.h"
#include "api/process_json.h"
#include "api/routes.h"
#include "base/str.h"
#include "queue/queue.h"
#include "store/process_checkpoints.h"
#include "store/process_events.h"
#include "store/processes.h"

/* Statuses a process may be restored from: nothing of it runs. */
#define RESTORE_FROM (PS_TERMINAL | PS_BIT(PS_SUSPENDED))
/* How long a restore waits for the supervisor of the previous run to finish its clean-up. */
#define RELEASE_WAIT_MS 10000

static json_t *restore_entry(json_t *ev)
{
	json_t *data = json_object_get(ev, "data");

	return json_pack("{s:O, s:O, s:O, s:O}", "id", json_object_get(ev, "seqId"), "checkpointId",
			 json_object_get(data, "checkpointId") ? json_object_get(data, "checkpointId") : json_null(),
			 "processStatus",
			 json_object_get(data, "processStatus") ? json_object_get(data, "processStatus") : json_null(),
			 "changeDate", json_object_get(ev, "eventDate"));
}

int api_process_checkpoints_json(struct api_call *c, const char *id, unsigned includes, json_t *v)
{
	struct event_filter f = {.type = "CHECKPOINT_RESTORE"};
	json_t *list = NULL, *hist, *ev;
	size_t i;

	if (includes & INC_CHECKPOINTS) {
		if (store_process_checkpoint_list(c->db, id, &list, &c->err))
			return -1;
		json_object_set_new(v, "checkpoints", list);
	}
	if (includes & INC_CHECKPOINTS_HISTORY) {
		if (store_process_event_list(c->db, id, &f, &list, &c->err))
			return -1;
		hist = json_array();
		json_array_foreach(list, i, ev) json_array_append_new(hist, restore_entry(ev));
		json_decref(list);
		json_object_set_new(v, "checkpointRestoreHistory", hist);
	}
	return 0;
}

static int list_checkpoints(struct api_call *c)
{
	struct process p;
	json_t *list = NULL;
	int rc;

	if ((rc = api_process_load(c, api_param(c, "id"), PROC_READ, &p)))
		return rc;
	rc = store_process_checkpoint_list(c->db, p.instance_id, &list, &c->err);
	store_process_cleanup(&p);
	return rc ? rc : api_reply(c, list);
}

#define V3_LIMIT_DEFAULT 10 /* Concord's */

/* A page of the list, in the same order as v1's (oldest first). */
static int page_checkpoints(struct api_call *c)
{
	struct process p;
	json_t *list = NULL, *page;
	size_t limit, offset;
	int rc;

	if ((rc = api_paging(c, &limit, &offset)))
		return rc;
	if (!http_query(c->req, "limit"))
		limit = V3_LIMIT_DEFAULT;
	if ((rc = api_process_load(c, api_param(c, "id"), PROC_READ, &p)))
		return rc;
	rc = store_process_checkpoint_list(c->db, p.instance_id, &list, &c->err);
	store_process_cleanup(&p);
	if (rc)
		return rc;
	page = json_array();
	for (size_t i = offset; i < json_array_size(list) && i - offset < limit; i++)
		json_array_append(page, json_array_get(list, i));
	json_decref(list);
	return api_reply(c, page);
}

/* Enqueues p again from checkpoint cp_id with a CHECKPOINT_RESTORE event. */
static int restore(struct api_call *c, const struct process *p, const char *cp_id)
{
	char name[QUEUE_CHECKPOINT_NAME_MAX + 1], event[sizeof p->resume_event];
	void *payload = NULL;
	size_t len = 0;
	json_t *data;
	struct err e;
	int rc;

	if (p->disabled)
		return api_fail(c, ERR_INVALID, "Checkpoint can not be restored as process is disabled -> %s",
				p->instance_id);
	if (!(PS_BIT(p->status) & RESTORE_FROM))
		return api_fail(c, ERR_CONFLICT,
				"Process %s is %s: a checkpoint can be restored only when the process is not running"
				" (FINISHED, FAILED, CANCELLED, TIMED_OUT or SUSPENDED)",
				p->instance_id, proc_status_name(p->status));
	if ((rc = store_process_checkpoint_get(c->db, p->instance_id, cp_id, name, sizeof name, &payload, &len,
					       &c->err)))
		return rc;
	if ((rc = queue_wait_released(c->app->queue, p->instance_id, RELEASE_WAIT_MS, &c->err))) {
		free(payload);
		return rc;
	}
	if (str_fmt(event, sizeof event, "%s%s", QUEUE_CHECKPOINT_PREFIX, name)) {
		free(payload);
		return api_fail(c, ERR_INVALID, "checkpoint name '%s' too long (limit %zu bytes)", name,
				sizeof event - sizeof QUEUE_CHECKPOINT_PREFIX);
	}
	rc = store_process_requeue(c->db, p->instance_id, RESTORE_FROM, event, NULL, payload, len, &c->err);
	free(payload);
	if (rc)
		return rc;
	data = json_pack("{s:s, s:s, s:s}", "checkpointId", cp_id, "checkpointName", name, "processStatus",
			 proc_status_name(p->status));
	if (!data || store_process_event_add(c->db, p->instance_id, "CHECKPOINT_RESTORE", data, 0, &e))
		queue_log_line(c->db, p->instance_id, "WARN", "The CHECKPOINT_RESTORE event could not be stored");
	json_decref(data);
	queue_log_line(c->db, p->instance_id, "INFO", "Process restored from checkpoint '%s' (%s) by %s", name, cp_id,
		       c->who.user.username);
	queue_wake(c->app->queue);
	return api_reply(c, json_pack("{s:b}", "ok", 1));
}

static int restore_by_id(struct api_call *c)
{
	struct process p;
	json_t *body = NULL;
	const char *cp_id;
	int rc;

	if ((rc = api_process_load(c, api_param(c, "id"), PROC_WRITE, &p)))
		return rc;
	if ((rc = api_body_object(c, &body)))
		goto out;
	cp_id = json_string_value(json_object_get(body, "id"));
	if (!cp_id || !*cp_id)
		rc = api_fail(c, ERR_INVALID, "the body must name the checkpoint: {\"id\": \"<checkpoint id>\"}");
	else
		rc = restore(c, &p, cp_id);
out:
	json_decref(body);
	store_process_cleanup(&p);
	return rc;
}

static int restore_by_name(struct api_call *c)
{
	const char *name = http_query(c->req, "name"), *action = http_query(c->req, "action");
	char cp_id[UUID_STR_LEN];
	struct process p;
	int rc;

	if ((rc = api_process_load(c, api_param(c, "id"), PROC_WRITE, &p)))
		return rc;
	if (!action || strcmp(action, "restore") != 0)
		rc = api_fail(c, ERR_INVALID, "Unknown action '%.64s': expected action=restore", action ? action : "");
	else if (!name || !*name)
		rc = api_fail(c, ERR_INVALID, "the checkpoint name is missing: name=<checkpoint name>");
	else if (!(rc = store_process_checkpoint_find(c->db, p.instance_id, name, cp_id, &c->err)))
		rc = restore(c, &p, cp_id);
	store_process_cleanup(&p);
	return rc;
}

static const struct api_doc doc_list = {
    .summary = "The checkpoints of a process",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID, {0}},
    .response = "{'type':'array','items':{'type':'object','properties':{'id':{},'checkpointId':" SCHEMA_UUID
		",'name':{'type':'string'},'createdAt':" SCHEMA_DATE "}}}",
    .errors = "403 404",
};
static const struct api_doc doc_page = {
    .summary = "A page of the checkpoints of a process (Concord's v3 list; limit defaults to 10)",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID,
					     {"offset", "integer", "checkpoints to skip (default 0)"},
					     {"limit", "integer", "at most this many (default 10)"},
					     {0}},
    .response = "{'type':'array','items':{'type':'object','properties':{'id':{},'checkpointId':" SCHEMA_UUID
		",'name':{'type':'string'},'createdAt':" SCHEMA_DATE "}}}",
    .errors = "400 403 404",
};
static const struct api_doc doc_restore = {
    .summary = "Restore a finished or suspended process from a checkpoint (by id) and run it again from there",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID, {0}},
    .body = "{'type':'object','required':['id'],'properties':{'id':" SCHEMA_UUID "}}",
    .response = SCHEMA_OK,
    .errors = "400 403 404 409 415",
    .audit = {"PROCESS", "RESTORE", NULL},
};
static const struct api_doc doc_restore_by_name = {
    .summary = "Restore a process from a checkpoint by name (action=restore), as Concord v2",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID,
					     {"name", "string", "the checkpoint's name"},
					     {"action", "string", "must be 'restore'"},
					     {0}},
    .response = SCHEMA_OK,
    .errors = "400 403 404 409",
    .audit = {"PROCESS", "RESTORE", NULL},
};

const struct api_route api_process_checkpoint_routes[] = {
    {"GET", "/api/v1/process/{id}/checkpoint", list_checkpoints, 0, &doc_list},
    {"POST", "/api/v1/process/{id}/checkpoint/restore", restore_by_id, 0, &doc_restore},
    {"GET", "/api/v2/process/{id}/checkpoint", restore_by_name, API_SLOW | API_CHANGES, &doc_restore_by_name},
    {"GET", "/api/v3/process/{id}/checkpoint", page_checkpoints, 0, &doc_page},
    {0},
};
