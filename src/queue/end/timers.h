#ifndef ACCORD_QUEUE_TIMERS_H
#define ACCORD_QUEUE_TIMERS_H

#include <stdbool.h>
#include <stdint.h>

#include "queue/queue.h"

/* What the dispatcher does besides claiming (queue.c): suspend timeouts (timers.c),
 * exclusive groups (exclusive.c) and handler processes (handlers.c).  All run on the
 * calling thread with its connection c; errors are logged. */

/* Moves the SUSPENDED processes whose suspendTimeout has passed to TIMED_OUT (log line,
 * queue_process_ended, payload dropped); returns the next suspend deadline (0: none). */
int64_t queue_timers_expire(struct queue *q, struct store_conn *c);

/* For a process just claimed (STARTING): applies its exclusive group's mode.  true: it
 * runs; false: it is now WAITING or CANCELLED and p was cleaned up.  For cancelOld the
 * older active processes of the group are cancelled (queue_stop, wherever they run,
 * without waiting); while one of them is still stopping p is WAITING, and runs once they
 * have ended. */
bool queue_exclusive_admit(struct queue *q, struct store_conn *c, struct process *p);

/* Process id ended: the next WAITING process of its group is enqueued. */
void queue_exclusive_ended(struct queue *q, struct store_conn *c, const char *id);

/* Process id ended with st: starts its onFailure/onCancel/onTimeout handler when it has
 * one (reference §5.9). */
void queue_handlers_start(struct queue *q, struct store_conn *c, const char *id, enum proc_status st);

#endif
