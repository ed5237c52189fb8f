#ifndef ACCORD_QUEUE_LOGWATCH_H
#define ACCORD_QUEUE_LOGWATCH_H

#include <stdbool.h>
#include <stdint.h>

/* Wakes the followers of a process log (GET …/log?follow=true) when it grows or its
 * process ends, so that no follower polls and no follower holds a thread: a follower
 * registers a callback; the log writer calls logwatch_notify after each append and
 * logwatch_end when the process reaches a final status.  Callbacks run on the writer's
 * thread and must only wake something up (resume a connection), never block.
 * Thread-safe. */

typedef void (*logwatch_fn)(void *ctx);

struct logwatch_sub;

/* Registers fn for process id (copied).  NULL when out of memory. */
struct logwatch_sub *logwatch_subscribe(const char *id, logwatch_fn fn, void *ctx);
/* After it returns, fn is not running and will not be called again. */
void logwatch_unsubscribe(struct logwatch_sub *s);

void logwatch_notify(const char *id);
void logwatch_end(const char *id);

#endif
