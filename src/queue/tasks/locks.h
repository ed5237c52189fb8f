#ifndef ACCORD_QUEUE_LOCKS_H
#define ACCORD_QUEUE_LOCKS_H

#include <jansson.h>

#include "queue/queue.h"
#include "store/store.h"

/* Process locks on the queue's side (store/process_locks.h holds who has them): a process
 * handed a lock it waited for SUSPENDED is resumed with the lock's event.  Thread-safe:
 * every function uses the caller's connection; q may be NULL.  Errors are logged. */

/* Resumes each process of handed ([instanceId, event, lock name], store_lock_release),
 * unless its supervisor is still on this node's list: a process not stored SUSPENDED yet
 * is resumed by locks_process_suspended once it is. */
void locks_resume_handed(struct queue *q, struct store_conn *c, json_t *handed);

/* A process ended (queue_process_ended): it waits for no lock any more, and those it held
 * go to their first waiters, which are resumed.  0, or -1 when the release failed (logged). */
int locks_ended(struct queue *q, struct store_conn *c, const char *id);

/* Each heartbeat: releases the locks of processes that ended without releasing them (a
 * node taken for dead that wrote on after its processes were settled elsewhere), and
 * resumes the SUSPENDED processes handed a lock that were not resumed with it. */
void locks_sweep(struct queue *q, struct store_conn *c);

/* A process stored SUSPENDED whose supervisor has left this node's list: resumes it at
 * once for a lock handed to it before it was stored SUSPENDED. */
void locks_process_suspended(struct queue *q, struct store_conn *c, const char *id);

#endif
