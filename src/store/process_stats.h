#ifndef ACCORD_STORE_PROCESS_STATS_H
#define ACCORD_STORE_PROCESS_STATS_H

#include <stdint.h>

#include "store/processes.h"
#include "store/store.h"

/* Figures about the queue for GET /metrics (api/metrics.c), read across all nodes. */
struct process_stats {
	uint64_t by_status[PS__COUNT]; /* live (not final) statuses only; final ones stay 0 */
	uint64_t due;		       /* ENQUEUED and due (no startAt or startAt passed) */
	int64_t oldest_due_at;	       /* when the oldest due one became due (0: none) */
};

int store_process_stats(struct store_conn *c, int64_t now, struct process_stats *out, struct err *e) WUR;

#endif
