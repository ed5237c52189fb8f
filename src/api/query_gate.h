#ifndef ACCORD_API_QUERY_GATE_H
#define ACCORD_API_QUERY_GATE_H

#include "base/err.h"

/* Admission of inventory queries.  A query may run for limits.query_timeout_ms on an HTTP
 * worker; without a bound, as many slow queries as there are workers would stall every
 * other request (writes included).  So at most limits.query_concurrency queries run at
 * once in the whole server, and at most limits.query_per_user for one user; a query over
 * either bound is refused at once (ERR_UNAVAILABLE, 503 with Retry-After, a message naming
 * the limit) rather than queued, so it never holds a worker while it waits.
 * Thread-safe. */

/* Takes a slot for user_id (borrowed).  0, or ERR_UNAVAILABLE. */
int query_gate_enter(const char *user_id, struct err *e) WUR;
/* Gives back the slot taken by a successful query_gate_enter with the same user_id. */
void query_gate_leave(const char *user_id);

#endif
