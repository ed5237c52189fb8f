/* Exclusive groups (timers.h; reference §6.1: configuration.exclusive {group, mode}).  The
 * decision is taken when the dispatcher claims a process, in one transaction with its
 * STARTING → WAITING/CANCELLED change (store_process_exclusive_claim), and a WAITING one
 * is enqueued again when a process of its group ends. */
#include "base/log.h"
#include "base/str.h"
#include "queue/end/timers.h"
#include "store/process_timers.h"

/* Cancels the older processes of the group (old) for p: true when none of them runs any
 * more, so p runs now.  Else p waits (WAITING) until they have stopped (wherever they run:
 * queue_stop, which does not wait, so this dispatcher goes on claiming), and the end of
 * each lets it go on (queue_exclusive_ended). */
static bool cancel_old(struct queue *q, struct store_conn *c, const struct process *p, json_t *old, const char *group)
{
	char why[512];
	bool stopping = false;
	json_t *item;
	struct err e;
	size_t i;

	str_fmt_cut(why, sizeof why, "Process cancelled: a newer process (%s) of exclusive group '%s' started",
		    p->instance_id, group);
	json_array_foreach(old, i, item)
	{
		int rc = queue_stop(q, c, json_string_value(item), why, 0, &e);
		if (rc < 0)
			LOG_W("process %s: cannot stop it: %s", json_string_value(item), e.msg);
		stopping |= rc != 0;
	}
	if (!stopping)
		return true;
	if (store_process_transition(c, p->instance_id, PS_BIT(PS_STARTING), PS_WAITING, &e)) {
		LOG_E("process %s: cannot make it wait for its exclusive group: %s", p->instance_id, e.msg);
		return true;
	}
	queue_log_line(c, p->instance_id, "INFO",
		       "Process is waiting: older processes of exclusive group '%s' are being cancelled", group);
	/* They may all have ended before it was WAITING, and found nothing to let go on. */
	json_array_foreach(old, i, item)
	{
		struct process o;
		if (store_process_get(c, json_string_value(item), &o, &e))
			return false; /* a process is never deleted while others of its group run */
		bool final = PS_BIT(o.status) & PS_TERMINAL;
		store_process_cleanup(&o);
		if (!final)
			return false;
	}
	queue_exclusive_ended(q, c, json_string_value(json_array_get(old, 0)));
	return false;
}

bool queue_exclusive_admit(struct queue *q, struct store_conn *c, struct process *p)
{
	enum excl_verdict v;
	json_t *old = NULL;
	char group[129];
	struct err e;
	bool runs;

	if (store_process_exclusive_claim(c, p->instance_id, group, &v, &old, &e)) {
		LOG_E("process %s: cannot check its exclusive group: %s", p->instance_id, e.msg);
		return true;
	}
	switch (v) {
	case EXCL_RUN:
		return true;
	case EXCL_CANCEL_OLD:
		runs = cancel_old(q, c, p, old, group);
		json_decref(old);
		if (runs)
			return true;
		break;
	case EXCL_WAIT:
		queue_log_line(c, p->instance_id, "INFO",
			       "Process is waiting: another process of exclusive group '%s' is running", group);
		break;
	case EXCL_CANCEL:
		queue_log_line(c, p->instance_id, "WARN",
			       "Process(es) with exclusive group '%s' is already in the queue. "
			       "Current process has been cancelled",
			       group);
		if (store_process_transition(c, p->instance_id, PS_BIT(PS_STARTING), PS_CANCELLED, &e))
			LOG_E("process %s: cannot cancel it for its exclusive group: %s", p->instance_id, e.msg);
		else
			queue_ended_server_side(q, c, p->instance_id, PS_CANCELLED);
		break;
	}
	store_process_cleanup(p);
	return false;
}

void queue_exclusive_ended(struct queue *q, struct store_conn *c, const char *id)
{
	struct err e;
	int rc = store_process_exclusive_release(c, id, &e);

	if (rc < 0)
		LOG_E("process %s: cannot release its exclusive group: %s", id, e.msg);
	else if (rc > 0)
		queue_wake(q);
}
