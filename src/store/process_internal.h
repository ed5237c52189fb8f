#ifndef ACCORD_STORE_PROCESS_INTERNAL_H
#define ACCORD_STORE_PROCESS_INTERNAL_H

#include "store/processes.h"

/* Shared by processes.c and the files that change a process's status in their own
 * transactions (process_suspend.c, …).  Both run inside an open transaction. */

/* The status change (see store_process_transition): ERR_CONFLICT when the current status
 * is not in from_mask. node: recorded for STARTING/RUNNING (NULL: none). */
int proc_transition_in_tx(struct store_conn *c, const char *id, unsigned from_mask, enum proc_status to,
			  const char *node, int64_t now, struct err *e) WUR;

/* Locks the process's row for the open row transaction (store_tx_begin_rows) before it
 * writes what belongs to the process (nothing to do where transactions run one at a time:
 * SQLite).  ERR_NOT_FOUND for an unknown process. */
int proc_lock_row(struct store_conn *c, const char *id, struct err *e) WUR;

/* from_mask (SUSPENDED, terminal…) → RESUMING → ENQUEUED with event and args (BORROWED,
 * either may be NULL) for the claim; drops the pending forms. */
int proc_requeue_in_tx(struct store_conn *c, const char *id, unsigned from_mask, const char *event, json_t *args,
		       struct err *e) WUR;

#endif
