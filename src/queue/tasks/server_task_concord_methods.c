/* The `concord` task's methods on the server (docs/flows.md "concord task"):
 * waitForCompletion, getOutVars, listSubprocesses, suspendForCompletion and the resume of a
 * step that suspended until its children ended; and who a process may act on (its kin),
 * which `kill` checks too (server_task_concord.c has the actions). */
#include <stdlib.h>
#include <string.h>

#include "auth/principal.h"
#include "base/datetime.h"
#include "base/str.h"
#include "queue/internal.h"
#include "queue/tasks/server_tasks.h"
#include "store/processes.h"

/* Process ids given as one string or a list: NEW array. */
json_t *server_task_concord_ids(json_t *v, const char *what, struct err *e)
{
	json_t *x;
	size_t i;

	if (json_is_string(v))
		v = json_pack("[O]", v);
	else if (json_is_array(v))
		json_incref(v);
	else {
		err_set(e, ERR_INVALID, "'%s' must be a process ID or a list of them", what);
		return NULL;
	}
	json_array_foreach(v, i, x)
	{
		const char *s = json_string_value(x);
		if (!s || !uuid_valid(s, strlen(s))) {
			json_decref(v);
			err_set(e, ERR_INVALID, "'%s': not a process ID: %.64s", what, s ? s : "(not a string)");
			return NULL;
		}
	}
	return v;
}

/* A process the calling one may act on: its own descendants' kin — one with the same
 * initiator (for the cron user: of the same project, auth/principal.h), or a child of it. */
static int may_touch(struct task_call *tc, const char *id, struct err *e)
{
	struct process p;
	bool ok;

	if (store_process_get(tc->c, id, &p, e))
		return e->code == ERR_NOT_FOUND ? err_set(e, ERR_INVALID, "Unknown instance ID: %s", id) : -1;
	ok = initiator_reaches(tc->r->p.initiator_id, tc->r->p.project_id, p.initiator_id, p.project_id) ||
	     strcmp(p.parent_instance_id, tc->r->p.instance_id) == 0;
	store_process_cleanup(&p);
	return ok ? 0
		  : err_set(e, ERR_FORBIDDEN, "Process %s was not started by %s: not allowed", id, tc->r->p.initiator);
}

int server_task_concord_check(struct task_call *tc, json_t *ids, struct err *e)
{
	size_t i;
	json_t *v;

	json_array_foreach(ids, i, v) if (may_touch(tc, json_string_value(v), e)) return -1;
	return 0;
}

static int method_wait(struct task_call *tc, json_t *args, const char *mode, struct err *e)
{
	json_t *ids = server_task_concord_ids(json_array_get(args, 0), "ids", e);
	json_t *t = json_array_get(args, 1);
	int64_t deadline = 0;

	if (!ids || server_task_concord_check(tc, ids, e)) {
		json_decref(ids);
		return -1;
	}
	if (t && strcmp(mode, "wait") == 0) {
		if (!json_is_integer(t) || json_integer_value(t) < 0) {
			json_decref(ids);
			return err_set(e, ERR_INVALID,
				       "waitForCompletion: the timeout must be milliseconds (a number)");
		}
		if (json_integer_value(t) > 0)
			deadline = dt_now_ms() + json_integer_value(t);
	}
	tc->wait = json_pack("{s:s, s:o, s:I, s:b}", "mode", mode, "ids", ids, "deadline", (json_int_t)deadline,
			     "single", json_is_string(json_array_get(args, 0)));
	return 0;
}

/* The step that suspended its process until its children ended (`sync` + `suspend`),
 * called again once the process resumed, with what finish_start gave it: the children's
 * out variables, or the step fails for a child that did not finish. */
static int method_resume(struct task_call *tc, json_t *args, struct err *e)
{
	json_t *payload = json_array_get(args, 0), *ids;

	if (!json_is_object(payload))
		return err_set(e, ERR_INVALID, "concord.resume: not a suspended concord step's state");
	ids = server_task_concord_ids(json_object_get(payload, "ids"), "ids", e);
	if (!ids || server_task_concord_check(tc, ids, e)) {
		json_decref(ids);
		return -1;
	}
	tc->wait = json_pack("{s:s, s:o, s:b, s:b}", "mode", "resumed", "ids", ids, "ignoreFailures",
			     json_is_true(json_object_get(payload, "ignoreFailures")), "collect",
			     json_is_true(json_object_get(payload, "collect")));
	return 0;
}

/* suspendForCompletion(ids): the process suspends (no runner, no worker slot) until every
 * one of ids ended, then goes on with the next step (Concord's ConcordTaskV2: nothing is
 * returned, a failed process does not fail the caller). */
static int method_suspend_for(struct task_call *tc, json_t *args, struct err *e)
{
	json_t *ids = server_task_concord_ids(json_array_get(args, 0), "ids", e);
	int rc = -1;

	if (ids && server_task_concord_check(tc, ids, e) == 0) {
		for (size_t i = 0; i < json_array_size(ids); i++)
			if (strcmp(json_string_value(json_array_get(ids, i)), tc->r->p.instance_id) == 0) {
				err_set(e, ERR_INVALID, "suspendForCompletion: a process cannot wait for itself");
				goto out;
			}
		rc = json_array_size(ids) ? server_task_concord_suspend(tc, ids, e) : 0;
	}
out:
	json_decref(ids);
	return rc;
}

/* listSubprocesses(parentId?, tags...) : the ids of the parent's children with all tags. */
static int method_list(struct task_call *tc, json_t *args, struct err *e)
{
	const char *parent = json_string_value(json_array_get(args, 0));
	struct process_filter f = {.status = -1};
	struct process *list = NULL;
	size_t n = 0, i;
	json_t *v;

	if (!parent)
		parent = tc->r->p.instance_id;
	if (!uuid_valid(parent, strlen(parent)))
		return err_set(e, ERR_INVALID, "listSubprocesses: not a process ID: %.64s", parent);
	if (strcmp(parent, tc->r->p.instance_id) != 0 && may_touch(tc, parent, e))
		return -1;
	f.parent_instance_id = parent;
	json_array_foreach(args, i, v)
	{
		if (i == 0)
			continue;
		json_t *tags = json_is_array(v) ? v : NULL;
		size_t k;
		json_t *t;
		if (json_is_string(v) && f.n_tags < PROCESS_FILTER_MAX_TAGS)
			f.tags[f.n_tags++] = json_string_value(v);
		json_array_foreach(tags, k, t) if (json_is_string(t) && f.n_tags < PROCESS_FILTER_MAX_TAGS)
		    f.tags[f.n_tags++] = json_string_value(t);
	}
	if (store_process_list(tc->c, &f, 10000, 0, &list, &n, e))
		return -1;
	tc->out = json_array();
	for (i = n; i > 0; i--)
		json_array_append_new(tc->out, json_string(list[i - 1].instance_id));
	store_process_list_free(list, n);
	return 0;
}

int server_task_concord_method(struct task_call *tc, struct err *e)
{
	if (strcmp(tc->method, "waitForCompletion") == 0 && json_array_size(tc->args) >= 1)
		return method_wait(tc, tc->args, "wait", e);
	if (strcmp(tc->method, "getOutVars") == 0 && json_array_size(tc->args) == 1)
		return method_wait(tc, tc->args, "outVars", e);
	if (strcmp(tc->method, "listSubprocesses") == 0)
		return method_list(tc, tc->args, e);
	if (strcmp(tc->method, "resume") == 0 && json_array_size(tc->args) == 1)
		return method_resume(tc, tc->args, e);
	if (strcmp(tc->method, "suspendForCompletion") == 0 && json_array_size(tc->args) == 1)
		return method_suspend_for(tc, tc->args, e);
	return err_set(e, ERR_INVALID, "Method not found: concord.%s(%zu arguments)", tc->method,
		       json_array_size(tc->args));
}
