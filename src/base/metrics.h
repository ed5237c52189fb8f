#ifndef ACCORD_BASE_METRICS_H
#define ACCORD_BASE_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"

/* The node's counters and histograms for GET /metrics (api/metrics.c renders them with
 * the gauges it reads from the store and the queue; docs/operations.md "Metrics").
 *
 * One process-wide set, updated with relaxed atomic adds (no lock, no allocation), so a
 * hot path pays one uncontended atomic instruction per count.  Until metrics_init is
 * called, and when it was called with enabled = false (--metrics=false), every update is
 * a no-op. */

/* Plain counters (name and help text in metrics.c). */
enum metric_counter {
	MC_PROCESS_STARTS,	  /* processes created on this node (API, children, triggers) */
	MC_LOG_BYTES,		  /* process log bytes written */
	MC_STORE_BUSY_RETRIES,	  /* waits for the database lock */
	MC_SECRETS_DECRYPTED,	  /* secret envelopes opened */
	MC_INVENTORY_QUERY_REFUSED, /* inventory queries refused by the sandbox/gate */
	MC__COUNT
};

/* Histograms, observed in microseconds and exported in seconds. */
enum metric_hist {
	MH_PROCESS_START_TO_RUNNING,   /* created (or resumed) → RUNNING */
	MH_PROCESS_RUNNING_TO_FINAL,   /* RUNNING → final status */
	MH_STORE_TX,		       /* BEGIN … COMMIT of a write transaction */
	MH_INVENTORY_QUERY,	       /* inventory query execution */
	MH__COUNT
};

/* Final statuses counted by metrics_process_finished (proc_status order is the store's:
 * the caller passes the status name). */

/* Sets up the HTTP route slots (n_routes methods and patterns, borrowed string constants,
 * indexed as http_route.id numbers them) and switches counting on or off.  Called once at
 * start-up, before serving; not thread-safe against updates. */
int metrics_init(bool enabled, const char *const *methods, const char *const *patterns, size_t n_routes,
		 struct err *e) WUR;
bool metrics_enabled(void);

void metrics_inc(enum metric_counter c, uint64_t n);
void metrics_observe(enum metric_hist h, int64_t us);

/* A request began / was answered: route index (n_routes or more: no route matched),
 * status (0: the connection closed before an answer), duration. */
void metrics_http_begin(void);
void metrics_http(size_t route, int status, int64_t us);
/* A process reached a final status (FINISHED, FAILED, CANCELLED, TIMED_OUT). */
void metrics_process_finished(const char *status);
/* A runner ended after using peak bytes of resident memory. */
void metrics_runner_rss(uint64_t bytes);
/* The size of the database's write-ahead log, as store_maintain last saw it. */
void metrics_store_wal(uint64_t bytes);

/* Appends every counter and histogram in the Prometheus text format (version 0.0.4). */
int metrics_render(struct buf *out, struct err *e) WUR;

/* Helpers for callers rendering their own gauges in the same format. */
int metrics_gauge_head(struct buf *out, const char *name, const char *help, struct err *e) WUR;

#endif
