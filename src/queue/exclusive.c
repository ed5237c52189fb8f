/* Exclusive groups (timers.h; reference §6.1: configuration.exclusive {group, mode}).  The
 * decision is taken when the dispatcher claims a process, in one transaction with its
 * STARTING → WAITING/CANCELLED change (store_process_exclusive_claim), and a WAITING one
 * is enqueued again when a process of its group ends. */
#include <string.h>
#include <time.h>

#include "base/log.h"
#include "queue/timers.h"
#include "store/process_timers.h"

/* Cancels an older process of the group: at once when nothing of it runs, else through
 * its supervisor. */
static void cancel_old(struct queue *q, struct store_conn *c, const char *old, const char *group, const char *by)
{
	bool logged = false;

	for (int tries = 0; tries < 100; tries++) {
		struct process p;
		struct err e;
		if (store_process_get(c, old, &p, &e))
			return;
		enum proc_status st = p.status;
		store_process_cleanup(&p);
		if (PS_BIT(st) & PS_TERMINAL)
			return;
		if (PS_BIT(st) & PS_SERVER_SIDE) {
			if (store_process_transition(c, old, PS_SERVER_SIDE, PS_CANCELLED, &e) == 0) {
				queue_log_line(
				    c, old, "WARN",
				    "Process cancelled: a newer process (%s) of exclusive group '%s' started", by,
				    group);
				queue_ended_server_side(q, c, old, PS_CANCELLED);
				return;
			}
			continue;
		}
		if (!logged)
			queue_log_line(c, old, "WARN",
				       "Process cancelled: a newer process (%s) of exclusive group '%s' started", by,
				       group);
		logged = true;
		if (queue_stop_process(q, old, &e) == 0)
			return;
		if (e.code != ERR_NOT_FOUND) {
			LOG_W("process %s: cannot stop it: %s", old, e.msg);
			return;
		}
		/* Claimed by another dispatcher round but not registered yet: look again. */
		struct timespec ts = {0, 10 * 1000000};
		nanosleep(&ts, NULL);
	}
}

bool queue_exclusive_admit(struct queue *q, struct store_conn *c, struct process *p)
{
	enum excl_verdict v;
	json_t *old = NULL, *item;
	char group[129];
	struct err e;
	size_t i;

	if (store_process_exclusive_claim(c, p->instance_id, group, &v, &old, &e)) {
		LOG_E("process %s: cannot check its exclusive group: %s", p->instance_id, e.msg);
		return true;
	}
	switch (v) {
	case EXCL_RUN:
		return true;
	case EXCL_CANCEL_OLD:
		json_array_foreach(old, i, item) cancel_old(q, c, json_string_value(item), group, p->instance_id);
		json_decref(old);
		return true;
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
