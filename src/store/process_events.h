#ifndef ACCORD_STORE_PROCESS_EVENTS_H
#define ACCORD_STORE_PROCESS_EVENTS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "store/store.h"

/* Process events (PROCESS_STATUS, ELEMENT, …) in insertion order (seq_id). */

/* Adds one event; data (BORROWED) is an object; its "correlationId" and "phase" (pre/post,
 * stored upper-case) are indexed for the filters.  date 0 means now.  Not a transaction of
 * its own: callers batching many events wrap them in one. */
int store_process_event_add(struct store_conn *c, const char *id, const char *type, json_t *data, int64_t date,
			    struct err *e) WUR;

struct event_filter {
	const char *type;	    /* exact eventType, or NULL */
	int64_t after;		    /* eventDate >= after (ms), or 0 */
	int64_t from_id;	    /* seqId > from_id, or 0 */
	const char *correlation_id; /* or NULL */
	const char *phase;	    /* "PRE" / "POST", or NULL */
	bool include_all;	    /* keep ELEMENT data.in / data.out */
	int64_t limit;		    /* <= 0: unlimited */
};

/* A new JSON array of {id, seqId, eventType, data, eventDate}, ordered by seqId. */
int store_process_event_list(struct store_conn *c, const char *id, const struct event_filter *f, json_t **out,
			     struct err *e) WUR;

#endif
