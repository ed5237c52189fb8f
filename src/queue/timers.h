#ifndef ACCORD_QUEUE_TIMERS_H
#define ACCORD_QUEUE_TIMERS_H

#include <stdbool.h>
#include <stdint.h>

#include "queue/queue.h"

/* What the dispatcher does besides claiming (queue.c): suspend timeouts (timers.c),
 * exclusive groups (exclusive.c) and handler processes (handlers.c).  All run on the
 * calling thread with its connection c; errors are logged. */

/* The end of a process whose final status the server itself set (nothing of it ran on a
 * worker): its log followers see the end, queue_process_ended, its payload dropped. */
void queue_ended_server_side(struct queue *q, struct store_conn *c, const char *id, enum proc_status st);

/* Moves the SUSPENDED processes whose suspendTimeout has passed to TIMED_OUT (log line,
 * queue_process_ended, payload dropped); returns the next suspend deadline (0: none). */
int64_t queue_timers_expire(struct queue *q, struct store_conn *c);

/* For a process just claimed (STARTING): applies its exclusive group's mode.  true: it
 * runs; false: it is now WAITING or CANCELLED and p was cleaned up.  For cancelOld the
 * older active processes of the group are cancelled first (a running one through
 * queue_stop_process, which waits for it). */
bool queue_exclusive_admit(struct queue *q, struct store_conn *c, struct process *p);

/* Process id ended: the next WAITING process of its group is enqueued. */
void queue_exclusive_ended(struct queue *q, struct store_conn *c, const char *id);

/* Process id ended with st: starts its onFailure/onCancel/onTimeout handler when it has
 * one (reference §5.9). */
void queue_handlers_start(struct queue *q, struct store_conn *c, const char *id, enum proc_status st);

#endif
