#ifndef ACCORD_STORE_RETENTION_H
#define ACCORD_STORE_RETENTION_H

#include <stddef.h>
#include <stdint.h>

#include "store/store.h"

/* Deleting what finished processes leave, once it is older than the operator keeps it
 * (queue/end/retention.c runs these in small batches; docs/operations.md "Retention"). */

enum retention_part {
	RET_PROCESSES,	 /* the whole process: record, log, events, attachments, checkpoints, … */
	RET_LOGS,	 /* its log */
	RET_EVENTS,	 /* its events and status history */
	RET_ATTACHMENTS, /* its attachments (out.json included) */
	RET_STATES,	 /* its checkpoints and any payload left */
	RET_AUDIT,	 /* not of a process: audit log entries (store/audit.h) */
	RET__COUNT
};

/* "processes", "logs", … (the setting's suffix: --retention-<name>). */
const char *retention_part_name(enum retention_part p);

/* Where a pass over one final status has got to (processes are visited oldest first). */
struct retention_cursor {
	int64_t from[4]; /* created_at to go on from, per final status */
};

/* One transaction: for at most `batch` processes in a final status whose last change is
 * before `cutoff` (Unix ms) and that still have something of `part`, deletes that part
 * (RET_PROCESSES: the process with everything of it).  *n receives how many processes
 * were touched; 0 means nothing older is left.  RET_AUDIT deletes at most `batch` audit
 * entries written before `cutoff` instead (*n: how many). */
int store_retention_batch(struct store_conn *c, enum retention_part part, int64_t cutoff, size_t batch,
			  struct retention_cursor *cur, size_t *n, struct err *e) WUR;

#endif
