/* Child processes: waits, resumes of suspended parents, kills (children.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/datetime.h"
#include "base/log.h"
#include "base/str.h"
#include "flow/value.h"
#include "queue/end/children.h"
#include "queue/internal.h"
#include "store/process_children.h"

/* The supervisors whose runners wait for processes to end (check_waits): the others have
 * nothing to look at, and a byte would cost each a wake-up per process that ends. */
static void wake_supervisors(struct queue *q)
{
	char b = 2;

	pthread_mutex_lock(&q->lock);
	for (struct running *r = q->running; r; r = r->next)
		if (atomic_load(&r->waits_for_ends) && write(r->wake_fd[1], &b, 1) < 0 && errno != EAGAIN)
			LOG_W("process %s: cannot wake its supervisor: %s", r->p.instance_id, strerror(errno));
	pthread_mutex_unlock(&q->lock);
}

static bool registered(struct queue *q, const char *id)
{
	bool yes = false;

	pthread_mutex_lock(&q->lock);
	for (struct running *r = q->running; r && !yes; r = r->next)
		yes = strcmp(r->p.instance_id, id) == 0;
	pthread_mutex_unlock(&q->lock);
	return yes;
}

/* Resumes parent with event when every child of that wait is final.  A parent whose
 * supervisor is still on this node's list (still running, or cleaning up after it was
 * stored SUSPENDED) is left to children_parent_suspended, which its supervisor calls once
 * it is off the list: a resume before that would start it while its old working
 * directory is being removed. */
static void try_resume(struct queue *q, struct store_conn *c, const char *parent, const char *event, bool owner)
{
	json_t *kids = NULL;
	int open = 0;
	struct err e;

	if (!owner && q && registered(q, parent))
		return;
	if (store_child_wait_children(c, parent, event, &kids, &open, &e))
		goto fail;
	if (open == 0) {
		if (store_process_resume(c, parent, event, NULL, &e) == 0) {
			if (store_child_wait_drop(c, parent, event, &e))
				LOG_W("process %s: %s", parent, e.msg);
			queue_log_line(c, parent, "INFO", "All %zu child processes ended: resuming",
				       json_array_size(kids));
			if (q)
				queue_wake(q);
		} else if (e.code == ERR_NOT_FOUND) {
			if (store_child_wait_drop(c, parent, event, &e))
				LOG_W("process %s: %s", parent, e.msg);
		} else if (e.code != ERR_CONFLICT) {
			goto fail;
		}
	}
	json_decref(kids);
	return;
fail:
	LOG_E("process %s: cannot resume it after its children: %s", parent, e.msg);
	json_decref(kids);
}

void children_ended(struct queue *q, struct store_conn *c, const char *id)
{
	json_t *waits = NULL, *w;
	struct err e;
	size_t i;

	if (q)
		wake_supervisors(q);
	/* A parent that ended (cancelled while it waited) waits for nothing any more. */
	if (store_child_waits_drop_parent(c, id, &e))
		LOG_W("process %s: %s", id, e.msg);
	if (store_child_waits_of_child(c, id, &waits, &e)) {
		LOG_E("process %s: cannot read the parents waiting for it: %s", id, e.msg);
		return;
	}
	json_array_foreach(waits, i, w)
	    try_resume(q, c, json_string_value(json_array_get(w, 0)), json_string_value(json_array_get(w, 1)), false);
	json_decref(waits);
}

void children_parent_suspended(struct queue *q, struct store_conn *c, const char *id)
{
	json_t *events = NULL, *ev;
	struct err e;
	size_t i;

	if (store_child_waits_of_parent(c, id, &events, &e)) {
		LOG_E("process %s: cannot read the children it waits for: %s", id, e.msg);
		return;
	}
	json_array_foreach(events, i, ev) try_resume(q, c, id, json_string_value(ev), true);
	json_decref(events);
}

/* The out variables of p (meta.out), only the names in want (array; NULL: all). */
static json_t *out_vars(const struct process *p, json_t *want)
{
	json_t *all = json_object_get(p->meta, "out"), *res = json_object(), *n;
	size_t i;

	if (!json_is_object(all))
		return res;
	if (!want) {
		json_object_update(res, all);
		return res;
	}
	json_array_foreach(want, i, n)
	{
		json_t *v = json_object_get(all, json_string_value(n));
		if (json_is_string(n) && v)
			json_object_set(res, json_string_value(n), v);
	}
	return res;
}

/* Concord's failure of a `sync` start: one line per child that did not finish, with the
 * error it ended with ("Child process <id> FAILED (error: {message=…})"); 0 when all
 * finished or ignore. */
static int failures(const struct process *ps, size_t n, bool ignore, struct err *e)
{
	char msg[sizeof e->msg] = "";
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		json_t *le = json_object_get(json_object_get(ps[i].meta, "out"), "lastError");
		char *text;
		if (ps[i].status == PS_FINISHED || ignore)
			continue;
		text = json_is_object(le) ? value_to_cstr(le, NULL) : NULL;
		if (len < sizeof msg)
			len += (size_t)snprintf(msg + len, sizeof msg - len, "%sChild process %s %s%s%s%s",
						len ? "\n" : "", ps[i].instance_id, proc_status_name(ps[i].status),
						text ? " (error: " : "", text ? text : "", text ? ")" : "");
		free(text);
	}
	return len ? err_set(e, ERR_INVALID, "%s", msg) : 0;
}

/* The result of a `sync` + `suspend` start once the parent resumed (Concord's
 * continueAfterSuspend): {"ids": [...], "<id>": {out variables}, …}, and for a single
 * child also "id" and its out variables at the top. */
static int resumed(json_t *wait, struct process *ps, size_t n, json_t **out, struct err *e)
{
	bool collect = json_is_true(json_object_get(wait, "collect"));

	if (failures(ps, n, json_is_true(json_object_get(wait, "ignoreFailures")), e))
		return -1;
	*out = json_pack("{s:O}", "ids", json_object_get(wait, "ids"));
	for (size_t i = 0; i < n; i++)
		json_object_set_new(*out, ps[i].instance_id, collect ? out_vars(&ps[i], NULL) : json_object());
	if (n == 1) {
		json_t *vars = collect ? out_vars(&ps[0], NULL) : json_object();
		json_object_set_new(*out, "id", json_string(ps[0].instance_id));
		json_object_update(*out, vars);
		json_decref(vars);
	}
	return 1;
}

/* The result once all are final. */
static int complete(json_t *wait, struct process *ps, size_t n, json_t **out, struct err *e)
{
	const char *mode = json_string_value(json_object_get(wait, "mode"));
	json_t *want = json_object_get(wait, "outVars");
	bool ignore = json_is_true(json_object_get(wait, "ignoreFailures"));

	if (strcmp(mode, "kill") == 0) {
		*out = json_null();
		return 1;
	}
	if (strcmp(mode, "resumed") == 0)
		return resumed(wait, ps, n, out, e);
	if (strcmp(mode, "start") == 0 && failures(ps, n, ignore, e))
		return -1;
	if (strcmp(mode, "outVars") == 0 && json_is_true(json_object_get(wait, "single"))) {
		*out = out_vars(&ps[0], NULL);
		return 1;
	}
	*out = strcmp(mode, "start") == 0 ? json_deep_copy(json_object_get(wait, "result")) : json_object();
	for (size_t i = 0; i < n; i++) {
		const struct process *p = &ps[i];
		if (strcmp(mode, "wait") == 0) {
			json_object_set_new(*out, p->instance_id,
					    json_pack("{s:s, s:s, s:O}", "instanceId", p->instance_id, "status",
						      proc_status_name(p->status), "meta", p->meta));
		} else if (strcmp(mode, "outVars") == 0) {
			json_object_set_new(*out, p->instance_id, out_vars(p, NULL));
		} else if (json_array_size(want) && n == 1) {
			json_t *vars = out_vars(p, want);
			json_object_update(*out, vars);
			json_decref(vars);
		} else if (json_array_size(want)) {
			json_object_set_new(*out, p->instance_id, out_vars(p, want));
		}
	}
	return 1;
}

int children_wait_check(struct store_conn *c, json_t *wait, json_t **out, struct err *e)
{
	json_t *ids = json_object_get(wait, "ids"), *v;
	int64_t deadline = json_integer_value(json_object_get(wait, "deadline"));
	size_t n = json_array_size(ids), i, got = 0;
	struct process *ps = calloc(n ? n : 1, sizeof *ps);
	int rc = 1;

	*out = NULL;
	if (!ps)
		return err_set(e, ERR_INTERNAL, "out of memory");
	json_array_foreach(ids, i, v)
	{
		if (store_process_get(c, json_string_value(v), &ps[i], e)) {
			rc = -1;
			goto out;
		}
		got++;
		if (!(PS_BIT(ps[i].status) & PS_TERMINAL))
			rc = 0;
	}
	if (rc == 1)
		rc = complete(wait, ps, n, out, e);
	else if (deadline && dt_now_ms() >= deadline)
		rc = err_set(e, ERR_LIMIT, "Timeout waiting for processes to complete: %s",
			     json_string_value(json_array_get(ids, 0)));
out:
	for (i = 0; i < got; i++)
		store_process_cleanup(&ps[i]);
	free(ps);
	return rc;
}

int children_kill(struct queue *q, struct store_conn *c, const char *id, const char *by, struct err *e)
{
	char why[256];

	str_fmt_cut(why, sizeof why, "Process cancelled by %s", by);
	return queue_stop(q, c, id, why, 0, e) < 0 ? -1 : 0;
}
