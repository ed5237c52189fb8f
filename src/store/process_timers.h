#ifndef ACCORD_STORE_PROCESS_TIMERS_H
#define ACCORD_STORE_PROCESS_TIMERS_H

#include "store/processes.h"

/* Suspend timeouts and exclusive groups (issue 9; reference §6.1, §6.11).  Every status
 * change here is a compare-and-set inside one transaction, so two nodes (or a resume
 * racing a timeout) cannot both win. */

/* The earliest suspend deadline (last_updated_at + suspendTimeout) among SUSPENDED
 * processes, 0 when none. */
int store_process_next_suspend_deadline(struct store_conn *c, int64_t *at, struct err *e) WUR;

/* Moves up to max SUSPENDED processes whose suspend deadline is <= now to TIMED_OUT; the
 * ids of those this call moved go to ids (caller's array of max), their number is
 * returned (< 0 on error).  One that was resumed meanwhile is skipped. */
int store_process_expire_suspended(struct store_conn *c, int64_t now, char (*ids)[UUID_STR_LEN], int max,
				   struct err *e) WUR;

/* What the claim of a process of an exclusive group decided. */
enum excl_verdict {
	EXCL_RUN,	/* no group, or the group is free: it runs (still STARTING) */
	EXCL_WAIT,	/* mode wait, group busy: it is now WAITING */
	EXCL_CANCEL,	/* mode cancel, group busy: still STARTING; the caller logs why, then cancels it */
	EXCL_CANCEL_OLD /* mode cancelOld: it runs; *old lists the older active ones to cancel */
};

/* Decides, for process id just claimed (STARTING), in one transaction.  The group is busy
 * when another process of the same project and group is RUNNING, SUSPENDED or RESUMING,
 * or is older and STARTING, ENQUEUED or WAITING (the order of arrival is kept, and two
 * processes claimed at once never both wait: transactions are serial, the older runs).
 * *group receives the group (borrowed buffer of 129, "" when none).  For EXCL_CANCEL_OLD
 * *old is a new array of ids (NULL when none). */
int store_process_exclusive_claim(struct store_conn *c, const char *id, char group[129], enum excl_verdict *v,
				  json_t **old, struct err *e) WUR;

/* Why process id waits in its exclusive group (GET /api/v1/process/{id}/waits): the other
 * processes that keep the group busy for it, as the claim decides (a new array of ids,
 * empty when none or id has no group); *group receives the group ("" when none). */
int store_process_exclusive_blockers(struct store_conn *c, const char *id, char group[129], json_t **out,
				     struct err *e) WUR;

/* After process id ended: the oldest WAITING process of its group goes back to ENQUEUED
 * (newer ones of the group claimed before it wait again, so the order is kept).  1 when
 * one was moved. */
int store_process_exclusive_release(struct store_conn *c, const char *id, struct err *e) WUR;

#endif
