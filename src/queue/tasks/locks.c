/* Resuming the processes handed a lock (locks.h). */
#include "base/log.h"
#include "queue/internal.h"
#include "queue/tasks/locks.h"
#include "store/process_locks.h"

/* Resumes id with the event of a lock handed to it.  owner: called by id's own
 * supervisor once it left the list (else a supervisor still on the list is left alone:
 * a resume now would start it while its old working directory is being removed). */
static void resume(struct queue *q, struct store_conn *c, const char *id, const char *event, const char *name,
		   bool owner)
{
	struct err e;

	if (!owner && queue_wait_released(q, id, 0, &e))
		return;
	if (store_process_resume(c, id, event, NULL, &e) == 0) {
		if (store_lock_resumed(c, id, event, &e))
			LOG_W("process %s: %s", id, e.msg);
		if (name)
			queue_log_line(c, id, "INFO", "Lock '%s' acquired: resuming", name);
		else
			queue_log_line(c, id, "INFO", "Lock acquired: resuming");
		if (q)
			queue_wake(q);
	} else if (e.code == ERR_INVALID) { /* it waits for other events now: this one is spent */
		if (store_lock_resumed(c, id, event, &e))
			LOG_W("process %s: %s", id, e.msg);
	} else if (e.code != ERR_CONFLICT) { /* CONFLICT: not SUSPENDED yet, its supervisor resumes it */
		LOG_W("process %s: cannot resume it with its lock: %s", id, e.msg);
	}
}

void locks_resume_handed(struct queue *q, struct store_conn *c, json_t *handed)
{
	size_t i;
	json_t *h;

	json_array_foreach(handed, i, h) resume(q, c, json_string_value(json_array_get(h, 0)),
						 json_string_value(json_array_get(h, 1)),
						 json_string_value(json_array_get(h, 2)), false);
}

int locks_ended(struct queue *q, struct store_conn *c, const char *id)
{
	json_t *handed = NULL;
	struct err e;

	if (store_locks_release_all(c, id, &handed, &e)) {
		LOG_E("process %s: cannot release its locks: %s", id, e.msg);
		return -1;
	}
	locks_resume_handed(q, c, handed);
	json_decref(handed);
	return 0;
}

void locks_sweep(struct queue *q, struct store_conn *c)
{
	json_t *ids = NULL, *id;
	struct err e;
	size_t i;

	if (store_locks_stale(c, &ids, &e)) {
		LOG_E("locks: cannot look for those of ended processes: %s", e.msg);
		return;
	}
	json_array_foreach(ids, i, id)
	{
		/* logged once released: a reader of the log then finds the lock free */
		if (locks_ended(q, c, json_string_value(id)) == 0)
			LOG_W("process %s: ended holding or waiting for a lock: released", json_string_value(id));
	}
	json_decref(ids);
	if (store_locks_unresumed(c, &ids, &e)) {
		LOG_E("locks: cannot look for waiters handed a lock: %s", e.msg);
		return;
	}
	locks_resume_handed(q, c, ids);
	json_decref(ids);
}

void locks_process_suspended(struct queue *q, struct store_conn *c, const char *id)
{
	json_t *events = NULL, *ev;
	struct err e;
	size_t i;

	if (store_locks_handed(c, id, &events, &e)) {
		LOG_E("process %s: cannot read the locks handed to it: %s", id, e.msg);
		return;
	}
	json_array_foreach(events, i, ev) resume(q, c, id, json_string_value(ev), NULL, true);
	json_decref(events);
}
