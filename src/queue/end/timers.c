/* Suspend timeouts (timers.h): the dispatcher's timed wait covers the next deadline, so
 * nothing polls; the deadline lives in the store and survives a restart. */
#include "base/datetime.h"
#include "base/log.h"
#include "queue/end/timers.h"
#include "store/audit.h"
#include "store/process_timers.h"

#define EXPIRE_BATCH 32

static void expired(struct queue *q, struct store_conn *c, const char *id)
{
	struct process p;
	struct err e;

	if (store_process_get(c, id, &p, &e) == 0) {
		queue_log_line(c, id, "ERROR", "Process timed out (%llds limit)", (long long)p.suspend_timeout_s);
		store_audit_system(c, "STOP", id, NULL, p.initiator_id, p.initiator, "suspendTimeout");
		store_process_cleanup(&p);
	}
	LOG_I("process %s: suspended for longer than its suspendTimeout: TIMED_OUT", id);
	queue_ended_server_side(q, c, id, PS_TIMED_OUT);
}

int64_t queue_timers_expire(struct queue *q, struct store_conn *c)
{
	char ids[EXPIRE_BATCH][UUID_STR_LEN];
	struct err e;
	int64_t next = 0;
	int n;

	do {
		n = store_process_expire_suspended(c, dt_now_ms(), ids, EXPIRE_BATCH, &e);
		if (n < 0) {
			LOG_E("dispatcher: cannot expire suspended processes: %s", e.msg);
			return dt_now_ms() + 1000;
		}
		for (int i = 0; i < n; i++)
			expired(q, c, ids[i]);
	} while (n == EXPIRE_BATCH);
	if (store_process_next_suspend_deadline(c, &next, &e)) {
		LOG_E("dispatcher: cannot read the next suspend deadline: %s", e.msg);
		return dt_now_ms() + 1000;
	}
	return next;
}
