/* Operations on processes beyond start and stop (issue 26 part 4; Concord's
 * ProcessResource):
 *   POST   /api/v1/process/{id}/restart             run a finished process tree again
 *   DELETE /api/v1/process/{id}/cascade             stop a process and all its descendants
 *   DELETE /api/v1/process/bulk                     stop a list of processes
 *   POST   /api/v1/process/{id}/disable/{disabled}  Concord's disabled flag
 *   GET    /api/v1/process/{id}/waits               why a process waits
 * Every stop goes through queue_stop (the one node-aware stop).  The rights are Concord's
 * kill/disable/restart rights: PROC_KILL (api/process_access.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/doc_schemas.h"
#include "api/process_access.h"
#include "api/process_json.h"
#include "api/routes.h"
#include "base/buf.h"
#include "base/datetime.h"
#include "base/log.h"
#include "base/str.h"
#include "queue/queue.h"
#include "store/process_children.h"
#include "store/process_ops.h"
#include "store/process_timers.h"
#include "store/processes.h"

/* The most ids one bulk stop takes. */
#define BULK_MAX 1000
/* How long a restart waits for the supervisor of the previous run to finish its clean-up. */
#define RELEASE_WAIT_MS 10000

/* Stops id without waiting (queue_stop's stopper thread follows it through). */
static int stop_one(struct api_call *c, const char *id, const char *why, struct err *e)
{
	return queue_stop(c->app->queue, c->db, id, why, 0, e) < 0 ? -1 : 0;
}

/* Stops every descendant of id that is not final; a failure is logged, the others go on. */
static int stop_descendants(struct api_call *c, const char *id, const char *why)
{
	char(*ids)[UUID_STR_LEN] = NULL;
	size_t n = 0;
	struct err e;

	if (store_process_descendants(c->db, id, &ids, &n, &c->err))
		return -1;
	for (size_t i = 0; i < n; i++)
		if (stop_one(c, ids[i], why, &e))
			LOG_W("process %s: cannot stop it with its parent %s: %s", ids[i], id, e.msg);
	free(ids);
	return 0;
}

/* Concord's restart: the root of the process's tree, when final, runs again from the
 * payload it was started with (same id); its descendants are stopped. */
static int restart(struct api_call *c)
{
	struct process p, root;
	char root_id[UUID_STR_LEN], why[200];
	int rc;

	if ((rc = api_process_load(c, api_param(c, "id"), PROC_READ, &p)))
		return rc;
	rc = store_process_root(c->db, p.instance_id, root_id, &c->err);
	if (rc == 0)
		rc = api_process_load(c, root_id, PROC_KILL, &root);
	if (rc)
		goto out;
	if (!(PS_BIT(root.status) & PS_TERMINAL))
		rc = api_fail(c, ERR_CONFLICT, "Can't restart running process: %s", p.instance_id);
	else if (!(rc = queue_wait_released(c->app->queue, root_id, RELEASE_WAIT_MS, &c->err)) &&
		 !(rc = store_process_restart(c->db, root_id, &c->err))) {
		str_fmt_cut(why, sizeof why, "Process cancelled: its root %s was restarted by %s", root_id,
			    c->who.user.username);
		if (stop_descendants(c, root_id, why))
			LOG_W("process %s: its descendants are not stopped: %s", root_id, c->err.msg);
		queue_log_line(c->db, root_id, "INFO", "Process restarted by %s", c->who.user.username);
		queue_wake(c->app->queue);
		rc = api_reply(c, json_pack("{s:b, s:s}", "ok", 1, "instanceId", p.instance_id));
	}
	store_process_cleanup(&root);
out:
	store_process_cleanup(&p);
	return rc;
}

static int kill_cascade(struct api_call *c)
{
	struct process p;
	char why[200];
	struct err e;
	int rc;

	/* Concord's killCascade says "Process not found" where kill says "Process instance not found" */
	if ((rc = api_process_load(c, api_param(c, "id"), PROC_KILL, &p)))
		return c->err.code == ERR_NOT_FOUND ? api_fail(c, ERR_NOT_FOUND, "Process not found: %.64s", api_param(c, "id"))
						    : rc;
	str_fmt_cut(why, sizeof why, "Process cancelled by %s (with its children)", c->who.user.username);
	if (stop_one(c, p.instance_id, why, &e))
		rc = api_fail(c, e.code, "%s", e.msg);
	else if (!(rc = stop_descendants(c, p.instance_id, why)))
		http_resp_bytes(c->resp, 204, "", NULL, 0);
	store_process_cleanup(&p);
	return rc;
}

/* One id of a bulk stop: 0 when stopped (or already final), else c->err says why. */
static int bulk_one(struct api_call *c, const char *id, const char *why)
{
	struct process p;
	int rc;

	if ((rc = api_process_load(c, id, PROC_KILL, &p)))
		return rc;
	rc = stop_one(c, p.instance_id, why, &c->err);
	store_process_cleanup(&p);
	return rc;
}

/* A JSON array of 1 to BULK_MAX strings, else 400. */
static int check_ids(struct api_call *c, json_t *body)
{
	json_t *v;
	size_t i;

	if (json_array_size(body) == 0 || json_array_size(body) > BULK_MAX)
		return api_fail(c, ERR_INVALID, "the body must be a JSON array of 1 to %d process ids", BULK_MAX);
	json_array_foreach(body, i, v)
	{
		if (!json_is_string(v))
			return api_fail(c, ERR_INVALID,
					"the body must be a JSON array of process ids: item %zu is not a string", i);
	}
	return 0;
}

/* Stops every listed process it can; when some could not be stopped, the answer is the
 * status of the first failure with {"failed": [{instanceId, message}]} naming each.  The
 * audit entry names the ones stopped (instanceIds, comma-separated); like every answer of
 * 400 or more, a partial failure writes none (api/audit.c), the processes' logs name who
 * stopped them. */
static int kill_bulk(struct api_call *c)
{
	json_t *body = NULL, *failed = json_array(), *v;
	enum err_code first = ERR_OK;
	struct buf stopped;
	char why[200], msg[600];
	size_t i;
	int rc;

	buf_init(&stopped, 0);
	if ((rc = api_body_array(c, &body)) || (rc = check_ids(c, body)))
		goto out;
	str_fmt_cut(why, sizeof why, "Process cancelled by %s", c->who.user.username);
	json_array_foreach(body, i, v)
	{
		memset(&c->err, 0, sizeof c->err);
		if (bulk_one(c, json_string_value(v), why) == 0) {
			if ((stopped.len && buf_append_char(&stopped, ',', &c->err)) ||
			    buf_append_str(&stopped, json_string_value(v), &c->err))
				LOG_W("bulk stop: the audit entry misses %s: %s", json_string_value(v), c->err.msg);
			continue;
		}
		if (first == ERR_OK)
			first = c->err.code ? c->err.code : ERR_INTERNAL;
		json_array_append_new(
		    failed, json_pack("{s:s, s:s}", "instanceId", json_string_value(v), "message", c->err.msg));
	}
	if (stopped.len)
		api_audit_note(c, "instanceIds", stopped.data);
	if (json_array_size(failed)) {
		/* Concord stops at the first failure and answers with its message */
		str_fmt_cut(msg, sizeof msg, "%s (%zu of %zu processes could not be stopped)",
			    json_string_value(json_object_get(json_array_get(failed, 0), "message")),
			    json_array_size(failed), json_array_size(body));
		http_resp_json(c->resp, http_status_of(first),
			       json_pack("{s:b, s:s, s:O}", "ok", 0, "message", msg, "failed", failed));
	} else {
		http_resp_bytes(c->resp, 204, "", NULL, 0);
	}
out:
	buf_cleanup(&stopped);
	json_decref(failed);
	json_decref(body);
	return rc;
}

static int disable(struct api_call *c)
{
	const char *flag = api_param(c, "disabled");
	struct process p;
	int rc;

	if (strcmp(flag, "true") != 0 && strcmp(flag, "false") != 0)
		return api_fail(c, ERR_INVALID, "disabled must be true or false, not '%.40s'", flag);
	if ((rc = api_process_load(c, api_param(c, "id"), PROC_KILL, &p)))
		return rc;
	rc = store_process_disable(c->db, p.instance_id, flag[0] == 't', &c->err);
	store_process_cleanup(&p);
	if (rc == 0)
		http_resp_bytes(c->resp, 204, "", NULL, 0);
	return rc;
}

/* ---- wait conditions ------------------------------------------------------------- */

/* One source of wait conditions: appends what makes p wait to waits (Concord's
 * AbstractWaitCondition shapes: type, reason, exclusive, and the type's own fields). */
typedef int (*wait_source)(struct api_call *c, const struct process *p, json_t *waits);

static int exclusive_waits(struct api_call *c, const struct process *p, json_t *waits)
{
	char group[129], reason[256];
	json_t *ids = NULL;

	if (p->status != PS_WAITING)
		return 0;
	if (store_process_exclusive_blockers(c->db, p->instance_id, group, &ids, &c->err))
		return -1;
	if (group[0]) {
		str_fmt_cut(reason, sizeof reason, "Waiting for the exclusive group '%s'", group);
		json_array_append_new(waits,
				      json_pack("{s:s, s:s, s:b, s:s, s:O}", "type", "PROCESS_COMPLETION", "reason",
						reason, "exclusive", 1, "group", group, "processes", ids));
	}
	json_decref(ids);
	return 0;
}

static int sleep_waits(struct api_call *c, const struct process *p, json_t *waits)
{
	char event[128], until[DT_ISO_LEN], reason[64];
	int64_t at;

	if (p->status != PS_SUSPENDED)
		return 0;
	if (store_process_wake(c->db, p->instance_id, &at, event, sizeof event, &c->err))
		return -1;
	if (at) {
		dt_format_iso(at, until);
		str_fmt_cut(reason, sizeof reason, "Waiting till %s", until);
		json_array_append_new(waits, json_pack("{s:s, s:s, s:b, s:s, s:s}", "type", "PROCESS_SLEEP", "reason",
						       reason, "exclusive", 0, "until", until, "resumeEvent", event));
	}
	return 0;
}

/* Accord's own type: Concord shows pending forms apart from the wait conditions. */
static int form_waits(struct api_call *c, const struct process *p, json_t *waits)
{
	json_t *forms = NULL, *form;
	const char *name;
	char reason[200];

	if (p->status != PS_SUSPENDED)
		return 0;
	if (store_process_forms(c->db, p->instance_id, &forms, &c->err))
		return -1;
	json_object_foreach(forms, name, form)
	{
		str_fmt_cut(reason, sizeof reason, "Waiting for form '%s'", name);
		json_array_append_new(waits, json_pack("{s:s, s:s, s:b, s:s}", "type", "PROCESS_FORM", "reason", reason,
						       "exclusive", 0, "formName", name));
	}
	json_decref(forms);
	return 0;
}

/* The children a suspended parent waits for that are not final (concord task's wait). */
static int child_wait(struct api_call *c, const struct process *p, const char *event, json_t *waits)
{
	json_t *children = NULL, *ch, *open = json_array();
	int n_open = 0;
	size_t i;

	if (store_child_wait_children(c->db, p->instance_id, event, &children, &n_open, &c->err)) {
		json_decref(open);
		return -1;
	}
	json_array_foreach(children, i, ch)
	{
		const char *st = json_string_value(json_object_get(ch, "status"));
		int s = proc_status_parse(st ? st : "");
		if (s >= 0 && !(PS_BIT(s) & PS_TERMINAL))
			json_array_append(open, json_object_get(ch, "id"));
	}
	if (json_array_size(open))
		json_array_append_new(waits,
				      json_pack("{s:s, s:s, s:b, s:O, s:s, s:s}", "type", "PROCESS_COMPLETION",
						"reason", "Waiting for child processes", "exclusive", 0, "processes",
						open, "resumeEvent", event, "completeCondition", "ALL"));
	json_decref(open);
	json_decref(children);
	return 0;
}

static int children_waits(struct api_call *c, const struct process *p, json_t *waits)
{
	json_t *events = NULL, *ev;
	size_t i;
	int rc = 0;

	if (p->status != PS_SUSPENDED)
		return 0;
	if (store_child_waits_of_parent(c->db, p->instance_id, &events, &c->err))
		return -1;
	json_array_foreach(events, i,
			   ev) if (json_is_string(ev) && (rc = child_wait(c, p, json_string_value(ev), waits))) break;
	json_decref(events);
	return rc;
}

/* A lock the process waits for (the `lock` task): the same PROCESS_LOCK entries its JSON
 * carries (api/locks.c). */
static int lock_waits(struct api_call *c, const struct process *p, json_t *waits)
{
	json_t *v = json_object(), *w;
	size_t i;
	int rc;

	if (!v)
		return api_fail(c, ERR_INTERNAL, "out of memory");
	rc = api_process_lock_waits_json(c, p, v);
	json_array_foreach(json_object_get(v, "waits"), i, w) json_array_append(waits, w);
	json_decref(v);
	return rc;
}

/* Every source, in the order the answer lists them. */
static const wait_source wait_sources[] = {exclusive_waits, lock_waits, sleep_waits, form_waits, children_waits};

static int waits(struct api_call *c)
{
	json_t *list = json_array();
	struct process p;
	int rc;

	if ((rc = api_process_load(c, api_param(c, "id"), PROC_READ, &p))) {
		json_decref(list);
		return rc;
	}
	for (size_t i = 0; i < sizeof wait_sources / sizeof wait_sources[0] && rc == 0; i++)
		rc = wait_sources[i](c, &p, list);
	store_process_cleanup(&p);
	if (rc) {
		json_decref(list);
		return rc;
	}
	return api_reply(c, json_pack("{s:b, s:o}", "isWaiting", json_array_size(list) > 0, "waits", list));
}

static const struct api_doc doc_restart = {
    .summary = "Restart a finished process: the root of its tree runs again (same id) from the payload it was "
	       "started with; its descendants are stopped",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID, {0}},
    .response = "{'type':'object','required':['ok','instanceId'],'properties':{'ok':{'type':'boolean'},"
		"'instanceId':" SCHEMA_UUID "}}",
    .errors = "403 404 409",
    .audit = {"PROCESS", "RESTART", NULL},
};
static const struct api_doc doc_cascade = {
    .summary = "Stop a process and all its descendants (204)",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID, {0}},
    .status = 204,
    .errors = "403 404",
    .audit = {"PROCESS", "STOP", NULL},
};
static const struct api_doc doc_bulk = {
    .summary = "Stop a list of processes (204); when some cannot be stopped the others still are, and the "
	       "answer (the status of the first failure) lists them in failed",
    .body = "{'type':'array','items':" SCHEMA_UUID "}",
    .status = 204,
    .errors = "400 403 404",
    .audit = {"PROCESS", "STOP", NULL},
};
static const struct api_doc doc_disable = {
    .summary = "Disable (or enable) a finished process: a disabled one's checkpoints cannot be restored (204)",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID, {"disabled", "string", "true or false"}, {0}},
    .status = 204,
    .errors = "400 403 404",
    .audit = {"PROCESS", "UPDATE", NULL},
};
static const struct api_doc doc_waits = {
    .summary = "Why a process waits: exclusive group, sleep, form, children (isWaiting, waits)",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID, {0}},
    .response = "{'type':'object','required':['isWaiting','waits'],'properties':{'isWaiting':{'type':'boolean'},"
		"'waits':{'type':'array','items':{'type':'object'}}}}",
    .errors = "403 404",
};

const struct api_route api_process_ops_routes[] = {
    {"POST", "/api/v1/process/{id}/restart", restart, 0, &doc_restart},
    {"DELETE", "/api/v1/process/bulk", kill_bulk, 0, &doc_bulk},
    {"DELETE", "/api/v1/process/{id}/cascade", kill_cascade, 0, &doc_cascade},
    {"POST", "/api/v1/process/{id}/disable/{disabled}", disable, 0, &doc_disable},
    {"GET", "/api/v1/process/{id}/waits", waits, 0, &doc_waits},
    {0},
};
