/* What follows the end of a process, whichever way it ended (its supervisor recorded the
 * final status, a stop cancelled it while it was not running, a timeout, recovery at
 * start-up): handler processes, the WAITING process next in its exclusive group, the
 * parent waiting for its children, the next waiter of each lock it held; the folder
 * handed off at its start if nothing took it. */
#include "base/log.h"
#include "base/metrics.h"
#include "queue/end/children.h"
#include "queue/internal.h"
#include "queue/tasks/locks.h"
#include "queue/supervise/logwatch.h"
#include "queue/queue.h"
#include "queue/start_staged.h"
#include "queue/end/timers.h"

void queue_process_ended(struct queue *q, struct store_conn *c, const char *id, enum proc_status st)
{
	metrics_process_finished(proc_status_name(st));
	if (q) /* a folder handed off to this node's queue: ended before a supervisor took it */
		start_ready_drop(q->work_dir, id);
	queue_handlers_start(q, c, id, st);
	queue_exclusive_ended(q, c, id);
	children_ended(q, c, id);
	locks_ended(q, c, id);
}

void queue_ended_server_side(struct queue *q, struct store_conn *c, const char *id, enum proc_status st)
{
	struct err e;

	queue_log_grew(q, c, id);
	logwatch_end(id);
	queue_process_ended(q, c, id, st);
	if (store_process_payload_drop(c, id, &e))
		LOG_W("process %s: cannot drop its payload: %s", id, e.msg);
}
