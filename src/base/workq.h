#ifndef ACCORD_BASE_WORKQ_H
#define ACCORD_BASE_WORKQ_H

#include <stddef.h>

#include "base/err.h"

/* A fixed pool of threads running jobs in FIFO order.  Jobs are (fn, arg) pairs; the
 * caller owns arg and fn must not fail.  Thread-safe. */
struct workq;

typedef void (*workq_fn)(void *arg);

/* Starts n threads (n >= 1) named name (at most 15 bytes: what top -H, perf and
 * /proc/<pid>/task/<tid>/comm show).  NULL with ERR_INTERNAL when threads cannot be created. */
struct workq *workq_new(size_t n, const char *name, struct err *e);
/* Queues a job; never blocks on the job.  Returns -1 only when out of memory. */
int workq_push(struct workq *q, workq_fn fn, void *arg) WUR;
/* Runs every queued job to its end, joins the threads and frees q.  NULL is fine. */
void workq_free(struct workq *q);

#endif
