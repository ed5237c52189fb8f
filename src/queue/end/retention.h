#ifndef ACCORD_QUEUE_RETENTION_H
#define ACCORD_QUEUE_RETENTION_H

#include <stdint.h>

#include "base/err.h"
#include "store/retention.h"
#include "store/store.h"

/* The retention clean-up of a node (docs/operations.md "Retention"): one background thread
 * that, every interval, deletes what finished processes left once it is older than the
 * operator keeps it — the whole process, or only its log, events, attachments or states —
 * in small transactions with a pause between them, so the API and the queue keep their
 * latency while millions of rows go.  Several nodes may run it at once (deletes are
 * idempotent). */

struct retention_cfg {
	struct store *store;
	int64_t keep_s[RET__COUNT]; /* seconds after the last change; 0: keep for ever */
	unsigned interval_s;	    /* between passes; the first pass starts after min(interval, 30 s) */
	unsigned batch;		    /* processes per transaction */
	unsigned pause_ms;	    /* between transactions */
};

struct retention;

/* Starts the thread into *out; *out is NULL (and no thread runs) when nothing is set to
 * expire. */
int retention_start(const struct retention_cfg *cfg, struct retention **out, struct err *e) WUR;
void retention_stop(struct retention *r);

#endif
