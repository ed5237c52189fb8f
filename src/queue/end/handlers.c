/* Failure, cancel and timeout handlers (timers.h; reference §5.9, §6.1): when a process of
 * kind DEFAULT ends FAILED, CANCELLED or TIMED_OUT and its `handlers` (filled at start with
 * the handler flows its definition has and the request did not disable) name the matching
 * flow, a child process is started from a copy of its payload with that flow as entry
 * point: kind FAILURE_HANDLER, CANCEL_HANDLER or TIMEOUT_HANDLER, parentInstanceId the
 * ended process, processTimeout the request's handlerProcessTimeout, and for onFailure the
 * unhandled error as the argument lastError.  Handler processes get no handlers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "base/datetime.h"
#include "base/jsonx.h"
#include "base/limits.h"
#include "base/log.h"
#include "base/pack.h"
#include "base/path.h"
#include "base/str.h"
#include "crypto/session.h"
#include "queue/internal.h"
#include "queue/main_json.h"
#include "queue/resume_files.h"
#include "queue/end/timers.h"
#include "store/audit.h"
#include "store/process_attachments.h"

static const struct {
	enum proc_status st;
	const char *flow, *kind;
} HANDLERS[] = {
    {PS_FAILED, "onFailure", "FAILURE_HANDLER"},
    {PS_CANCELLED, "onCancel", "CANCEL_HANDLER"},
    {PS_TIMED_OUT, "onTimeout", "TIMEOUT_HANDLER"},
};

static bool has_flow(json_t *handlers, const char *flow)
{
	size_t i;
	json_t *v;

	json_array_foreach(handlers, i,
			   v) if (json_is_string(v) && strcmp(json_string_value(v), flow) == 0) return true;
	return false;
}

/* The unhandled error of a failed process (new reference), from its out.json. */
static json_t *last_error(struct store_conn *c, const char *id)
{
	void *data = NULL;
	size_t len = 0;
	struct err e;
	json_t *out, *le = NULL;

	if (store_process_attachment_get(c, id, "out.json", &data, &len, &e))
		return NULL;
	out = jsonx_parse(data, len, 64, &e);
	free(data);
	if (out && json_is_object(json_object_get(out, "lastError")))
		le = json_incref(json_object_get(out, "lastError"));
	json_decref(out);
	return le;
}

/* The arguments the process last resumed with, when it ran on after that resume (a form
 * submitted before a cancel): not in its payload yet (main_json_add_args).  NEW or NULL. */
static json_t *resumed_with(struct store_conn *c, const char *id)
{
	json_t *args = NULL;
	struct err e;

	if (store_process_resume_args(c, id, &args, &e))
		LOG_W("process %s: cannot read the arguments it resumed with: %s", id, e.msg);
	json_object_del(args, RESUME_FILES_KEY);
	return args;
}

/* Rewrites _main.json in dir for the handler: its entry point, the arguments of the last
 * resume and, for onFailure, lastError among the arguments.  *timeout receives
 * handlerProcessTimeout (seconds, 0: none). */
static int edit_main(const char *dir, const char *flow, json_t *resumed, json_t *lerr, int64_t *timeout,
		     struct err *e)
{
	json_t *cfg = main_json_load(dir, e), *hpt;
	int rc;

	*timeout = 0;
	if (!cfg)
		return -1;
	if (resumed)
		json_object_update(main_json_args(cfg), resumed);
	if (lerr)
		json_object_set(main_json_args(cfg), "lastError", lerr);
	json_object_set_new(cfg, "entryPoint", json_string(flow));
	hpt = json_object_get(cfg, "handlerProcessTimeout");
	if (json_is_integer(hpt) && json_integer_value(hpt) > 0)
		*timeout = json_integer_value(hpt);
	rc = main_json_save(dir, cfg, e);
	json_decref(cfg);
	return rc;
}

/* The handler's payload: a copy of src's (the ended process's, or for a retry the handler
 * that failed: the ended process's own was dropped once its first handler started), with
 * _main.json edited. */
static int handler_payload(struct queue *q, struct store_conn *c, const struct process *p, const char *src,
			   const char *flow, const char *child, void **out, size_t *out_len, int64_t *timeout,
			   struct err *e)
{
	void *data = NULL;
	size_t len = 0;
	char *dir = NULL;
	json_t *lerr = strcmp(flow, "onFailure") == 0 ? last_error(c, p->instance_id) : NULL;
	json_t *resumed = resumed_with(c, p->instance_id);
	struct err ignored;
	int rc = -1;

	if (asprintf(&dir, "%s/tmp/%s", q ? q->work_dir : "/tmp", child) < 0) {
		json_decref(lerr);
		json_decref(resumed);
		return err_set(e, ERR_INTERNAL, "out of memory");
	}
	if (store_process_payload_of_ended(c, src, &data, &len, e) == 0 && path_mkdirs(dir, 0700, e) == 0 &&
	    pack_restore(data, len, dir, e) == 0 && edit_main(dir, flow, resumed, lerr, timeout, e) == 0)
		rc = pack_dir(dir, limits.archive_bytes, out, out_len, e);
	if (path_remove_tree(dir, &ignored))
		LOG_W("cannot remove %s: %s", dir, ignored.msg);
	free(dir);
	free(data);
	json_decref(lerr);
	json_decref(resumed);
	return rc;
}

static int start_handler(struct queue *q, struct store_conn *c, const struct process *p, const char *src,
			 const char *flow, const char *kind, char child[UUID_STR_LEN], struct err *e)
{
	struct process_new pn = {0};
	struct process *h = &pn.p;
	char token[SESSION_TOKEN_LEN];
	uint8_t hash[32];
	int rc;

	uuid_v7(child);
	if (handler_payload(q, c, p, src, flow, child, (void **)&pn.payload, &pn.payload_len, &h->timeout_s, e))
		return -1;
	if (str_fmt(h->instance_id, sizeof h->instance_id, "%s", child) ||
	    str_fmt(h->kind, sizeof h->kind, "%s", kind) ||
	    str_fmt(h->parent_instance_id, sizeof h->parent_instance_id, "%s", p->instance_id) ||
	    str_fmt(h->org_id, sizeof h->org_id, "%s", p->org_id) ||
	    str_fmt(h->project_id, sizeof h->project_id, "%s", p->project_id) ||
	    str_fmt(h->initiator_id, sizeof h->initiator_id, "%s", p->initiator_id) ||
	    str_fmt(h->initiator, sizeof h->initiator, "%s", p->initiator) ||
	    str_fmt(h->entry_point, sizeof h->entry_point, "%s", flow)) {
		free((void *)pn.payload);
		return err_set(e, ERR_INTERNAL, "handler %s: a field of process %s is too long", flow, p->instance_id);
	}
	h->tags = p->tags;
	pn.repo = p->repo; /* a handler runs the same checkout */
	h->meta = json_pack("{s:s}", "entryPoint", flow);
	if (q) {
		session_token(q->session_key, child, token);
		session_token_hash(token, hash);
		sodium_memzero(token, sizeof token);
	} else {
		randombytes_buf(hash, sizeof hash); /* no queue here: no runner will need it */
	}
	pn.session_hash = hash;
	rc = store_process_create(c, &pn, e);
	json_decref(h->meta);
	free((void *)pn.payload);
	return rc;
}

/* Concord's handler retries (its process watchdog): a handler is started again for its
 * parent while the parent still has the status that called for it, was created within
 * HANDLER_MAX_AGE_MS, has no handler of that kind that FINISHED and none still active,
 * and has had fewer than HANDLER_MAX_TRIES of them. */
#define HANDLER_MAX_TRIES 3
#define HANDLER_MAX_AGE_MS (3LL * 24 * 3600 * 1000)

/* Whether parent may get another handler of kind: the number so far in *tries. */
static bool retry_allowed(struct store_conn *c, const struct process *parent, const char *kind, size_t *tries)
{
	struct process_filter f = {.status = -1, .parent_instance_id = parent->instance_id};
	struct process *list = NULL;
	size_t n = 0;
	bool ok = true;
	struct err e;

	*tries = 0;
	if (store_process_list(c, &f, 10000, 0, &list, &n, &e)) {
		LOG_E("process %s: cannot list its handlers: %s", parent->instance_id, e.msg);
		return false;
	}
	for (size_t i = 0; i < n; i++) {
		bool handler = strcmp(list[i].kind, "DEFAULT") != 0;
		if (handler && !(PS_BIT(list[i].status) & PS_TERMINAL))
			ok = false; /* one is still active */
		if (strcmp(list[i].kind, kind) != 0)
			continue;
		++*tries;
		if (list[i].status == PS_FINISHED)
			ok = false;
	}
	store_process_list_free(list, n);
	return ok && *tries < HANDLER_MAX_TRIES;
}

/* A handler process ended without finishing: its parent's handler again, within the rules. */
static void retry_handler(struct queue *q, struct store_conn *c, const struct process *h)
{
	struct process parent;
	char child[UUID_STR_LEN];
	size_t tries = 0, i;
	struct err e;

	for (i = 0; i < sizeof HANDLERS / sizeof HANDLERS[0]; i++)
		if (strcmp(HANDLERS[i].kind, h->kind) == 0)
			break;
	if (i == sizeof HANDLERS / sizeof HANDLERS[0] || !h->parent_instance_id[0])
		return;
	if (store_process_get(c, h->parent_instance_id, &parent, &e)) {
		if (e.code != ERR_NOT_FOUND)
			LOG_E("process %s: cannot read its parent to retry its handler: %s", h->instance_id, e.msg);
		return;
	}
	if (strcmp(parent.kind, "DEFAULT") == 0 && parent.status == HANDLERS[i].st &&
	    has_flow(parent.handlers, HANDLERS[i].flow) && parent.created_at >= dt_now_ms() - HANDLER_MAX_AGE_MS &&
	    retry_allowed(c, &parent, HANDLERS[i].kind, &tries)) {
		if (start_handler(q, c, &parent, h->instance_id, HANDLERS[i].flow, HANDLERS[i].kind, child, &e))
			LOG_E("process %s: cannot start its %s handler again: %s", parent.instance_id, HANDLERS[i].flow,
			      e.msg);
		else {
			LOG_I("process %s: %s handler %s ended %s: started again (try %zu of %d): %s",
			      parent.instance_id, HANDLERS[i].flow, h->instance_id, proc_status_name(h->status),
			      tries + 1, HANDLER_MAX_TRIES, child);
			store_audit_system(c, "START", child, parent.instance_id, parent.initiator_id, parent.initiator,
					   HANDLERS[i].flow);
			queue_wake(q);
		}
	}
	store_process_cleanup(&parent);
}

void queue_handlers_start(struct queue *q, struct store_conn *c, const char *id, enum proc_status st)
{
	if (st != PS_FINISHED && (PS_BIT(st) & PS_TERMINAL)) {
		struct process h;
		struct err e;
		if (store_process_get(c, id, &h, &e) == 0) {
			if (strcmp(h.kind, "DEFAULT") != 0)
				retry_handler(q, c, &h);
			store_process_cleanup(&h);
		}
	}
	struct process p;
	char child[UUID_STR_LEN];
	struct err e;

	for (size_t i = 0; i < sizeof HANDLERS / sizeof HANDLERS[0]; i++) {
		if (HANDLERS[i].st != st)
			continue;
		if (store_process_get(c, id, &p, &e)) {
			LOG_E("process %s: cannot read it to start its handler: %s", id, e.msg);
			return;
		}
		if (strcmp(p.kind, "DEFAULT") == 0 && has_flow(p.handlers, HANDLERS[i].flow)) {
			if (start_handler(q, c, &p, p.instance_id, HANDLERS[i].flow, HANDLERS[i].kind, child, &e))
				LOG_E("process %s: cannot start its %s handler: %s", id, HANDLERS[i].flow, e.msg);
			else {
				LOG_I("process %s: %s handler started: %s", id, HANDLERS[i].flow, child);
				store_audit_system(c, "START", child, id, p.initiator_id, p.initiator, HANDLERS[i].flow);
				queue_wake(q);
			}
		}
		store_process_cleanup(&p);
	}
}
