/* What follows the end of a process, whichever way it ended (its supervisor recorded the
 * final status, a stop cancelled it while it was not running, a timeout): the parts of
 * issue 9 that react to it hook in here, one call each. */
#include "queue/queue.h"
#include "queue/timers.h"

void queue_process_ended(struct queue *q, struct store_conn *c, const char *id, enum proc_status st)
{
	queue_handlers_start(q, c, id, st);
	queue_exclusive_ended(q, c, id);
}
