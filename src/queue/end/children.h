#ifndef ACCORD_QUEUE_CHILDREN_H
#define ACCORD_QUEUE_CHILDREN_H

#include <jansson.h>

#include "base/err.h"
#include "queue/queue.h"
#include "store/processes.h"

/* Child processes (the concord task, server_task_concord.c): waiting for them and
 * stopping them.  Thread-safe: every function uses the caller's connection. */

/* A process ended (queue_process_ended): wakes the supervisors of this node (a runner may
 * wait for it in `sync` or waitForCompletion, supervisor.c re-checks its waits), and
 * resumes a suspended parent whose children have now all ended. */
void children_ended(struct queue *q, struct store_conn *c, const char *id);

/* A parent stored SUSPENDED whose supervisor has left this node's list: resumes it at
 * once when the children it waits for all ended before (they left it to this call). */
void children_parent_suspended(struct queue *q, struct store_conn *c, const char *id);

/* A deferred task answer (task_call.wait, built by the concord task):
 *   {"mode": "start"|"wait"|"outVars"|"kill", "ids": [...], "ignoreFailures": bool,
 *    "outVars": [...], "deadline": ms (0: none), "result": {…} (mode start)}.
 * 1 when every process is final, with *out (NEW) the task's result; 0 while some still
 * run; < 0 with e set when the task fails (a failed child without ignoreFailures, the
 * deadline passed). */
int children_wait_check(struct store_conn *c, json_t *wait, json_t **out, struct err *e) WUR;

/* Stops process id without waiting (queue_stop): cancelled at once when nothing of it
 * runs, else its supervisor is asked to stop it, wherever it runs.  by names who stops it
 * in the log line. */
int children_kill(struct queue *q, struct store_conn *c, const char *id, const char *by, struct err *e) WUR;

#endif
