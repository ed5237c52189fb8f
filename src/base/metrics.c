/* Counters and histograms of this node (metrics.h): relaxed atomics, rendered as the
 * Prometheus text format. */
#include "base/metrics.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define N_BUCKETS 14

/* Upper bounds in microseconds; the last bucket is +Inf. */
static const int64_t fast_bounds[N_BUCKETS - 1] = {500,	   1000,    2500,    5000,    10000,	  25000,  50000,
						   100000, 250000, 500000, 1000000, 2500000, 10000000};
static const int64_t slow_bounds[N_BUCKETS - 1] = {10000,    50000,	100000,	  500000,   1000000,
						   5000000,  10000000, 30000000, 60000000, 300000000,
						   900000000, 1800000000, 3600000000LL};

struct hist {
	_Atomic uint64_t buckets[N_BUCKETS]; /* not cumulative: summed when rendered */
	_Atomic uint64_t sum_us;
	_Atomic uint64_t count;
};

struct counter_def {
	const char *name, *help;
};

static const struct counter_def counter_defs[MC__COUNT] = {
    [MC_PROCESS_STARTS] = {"accord_process_starts_total", "Processes created on this node (API, children, triggers)."},
    [MC_LOG_BYTES] = {"accord_process_log_bytes_total", "Bytes of process logs written by this node."},
    [MC_STORE_BUSY_RETRIES] = {"accord_store_busy_retries_total",
			       "Times a database call waited for another writer's lock."},
    [MC_SECRETS_DECRYPTED] = {"accord_secrets_decrypted_total", "Secret envelopes opened by this node."},
    [MC_INVENTORY_QUERY_REFUSED] = {"accord_inventory_query_refused_total",
				    "Inventory queries refused (sandbox, limits, bad query)."},
};

struct hist_def {
	const char *name, *help;
	const int64_t *bounds;
};

static const struct hist_def hist_defs[MH__COUNT] = {
    [MH_PROCESS_START_TO_RUNNING] = {"accord_process_start_to_running_seconds",
				     "Time from a process's creation (or resume) to RUNNING.", fast_bounds},
    [MH_PROCESS_RUNNING_TO_FINAL] = {"accord_process_running_to_final_seconds",
				     "Time from RUNNING to a final status.", slow_bounds},
    [MH_STORE_TX] = {"accord_store_transaction_seconds", "Write transactions, BEGIN to COMMIT.", fast_bounds},
    [MH_INVENTORY_QUERY] = {"accord_inventory_query_seconds", "Inventory query execution.", fast_bounds},
};

static const char *const final_statuses[] = {"FINISHED", "FAILED", "CANCELLED", "TIMED_OUT"};
#define N_FINAL (sizeof final_statuses / sizeof final_statuses[0])
#define N_CLASSES 5 /* 1xx … 5xx */

struct route_slot {
	_Atomic uint64_t by_class[N_CLASSES];
	struct hist latency;
};

static struct {
	bool enabled;
	_Atomic uint64_t counters[MC__COUNT];
	struct hist hists[MH__COUNT];
	_Atomic uint64_t finished[N_FINAL];
	_Atomic uint64_t runner_rss_max;
	_Atomic uint64_t store_wal_bytes; /* SQLite's write-ahead log at the last heartbeat */
	_Atomic int64_t in_flight;
	const char *const *methods, *const *patterns;
	size_t n_routes;
	struct route_slot *routes; /* n_routes + 1: the last one for requests no route matched */
} m;

int metrics_init(bool enabled, const char *const *methods, const char *const *patterns, size_t n_routes,
		 struct err *e)
{
	free(m.routes);
	m.routes = NULL;
	m.enabled = false;
	if (!enabled)
		return 0;
	m.routes = calloc(n_routes + 1, sizeof *m.routes);
	if (!m.routes)
		return err_set(e, ERR_INTERNAL, "out of memory");
	m.methods = methods;
	m.patterns = patterns;
	m.n_routes = n_routes;
	m.enabled = true;
	return 0;
}

bool metrics_enabled(void)
{
	return m.enabled;
}

void metrics_inc(enum metric_counter c, uint64_t n)
{
	if (m.enabled && (unsigned)c < MC__COUNT)
		atomic_fetch_add_explicit(&m.counters[c], n, memory_order_relaxed);
}

static void observe(struct hist *h, const int64_t *bounds, int64_t us)
{
	size_t i = 0;

	if (us < 0)
		us = 0;
	while (i < N_BUCKETS - 1 && us > bounds[i])
		i++;
	atomic_fetch_add_explicit(&h->buckets[i], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->sum_us, (uint64_t)us, memory_order_relaxed);
	atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
}

void metrics_observe(enum metric_hist h, int64_t us)
{
	if (m.enabled && (unsigned)h < MH__COUNT)
		observe(&m.hists[h], hist_defs[h].bounds, us);
}

void metrics_http_begin(void)
{
	if (m.enabled)
		atomic_fetch_add_explicit(&m.in_flight, 1, memory_order_relaxed);
}

void metrics_http(size_t route, int status, int64_t us)
{
	struct route_slot *r;
	int cls = status / 100 - 1;

	if (!m.enabled)
		return;
	atomic_fetch_sub_explicit(&m.in_flight, 1, memory_order_relaxed);
	r = &m.routes[route < m.n_routes ? route : m.n_routes];
	if (cls >= 0 && cls < N_CLASSES)
		atomic_fetch_add_explicit(&r->by_class[cls], 1, memory_order_relaxed);
	observe(&r->latency, fast_bounds, us);
}

void metrics_process_finished(const char *status)
{
	if (!m.enabled || !status)
		return;
	for (size_t i = 0; i < N_FINAL; i++)
		if (strcmp(status, final_statuses[i]) == 0)
			atomic_fetch_add_explicit(&m.finished[i], 1, memory_order_relaxed);
}

void metrics_runner_rss(uint64_t bytes)
{
	uint64_t cur;

	if (!m.enabled)
		return;
	cur = atomic_load_explicit(&m.runner_rss_max, memory_order_relaxed);
	while (bytes > cur &&
	       !atomic_compare_exchange_weak_explicit(&m.runner_rss_max, &cur, bytes, memory_order_relaxed,
						      memory_order_relaxed))
		;
}

void metrics_store_wal(uint64_t bytes)
{
	if (m.enabled)
		atomic_store_explicit(&m.store_wal_bytes, bytes, memory_order_relaxed);
}

static int head(struct buf *out, const char *name, const char *help, const char *type, struct err *e)
{
	return buf_printf(out, e, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

int metrics_gauge_head(struct buf *out, const char *name, const char *help, struct err *e)
{
	return head(out, name, help, "gauge", e);
}

/* A label value in the text format: backslash, quote and newline escaped. */
static int label_value(struct buf *out, const char *v, struct err *e)
{
	for (; *v; v++) {
		int rc = *v == '\\' ? buf_append_str(out, "\\\\", e)
			 : *v == '"' ? buf_append_str(out, "\\\"", e)
			 : *v == '\n' ? buf_append_str(out, "\\n", e)
				      : buf_append_char(out, *v, e);
		if (rc)
			return rc;
	}
	return 0;
}

/* method="…",route="…", of route slot r. */
static int route_labels(struct buf *out, size_t r, struct err *e)
{
	return buf_printf(out, e, "method=\"%s\",route=\"", r < m.n_routes ? m.methods[r] : "") ||
	       label_value(out, r < m.n_routes ? m.patterns[r] : "unmatched", e) || buf_append_str(out, "\",", e);
}

/* The series of one histogram; labels is "" or `key="value",` text already escaped. */
static int render_hist(struct buf *out, const char *name, const char *labels, const struct hist *h,
		       const int64_t *bounds, struct err *e)
{
	uint64_t cum = 0;

	for (size_t i = 0; i < N_BUCKETS; i++) {
		int rc;

		cum += atomic_load_explicit(&h->buckets[i], memory_order_relaxed);
		if (i < N_BUCKETS - 1)
			rc = buf_printf(out, e, "%s_bucket{%sle=\"%g\"} %llu\n", name, labels, (double)bounds[i] / 1e6,
					(unsigned long long)cum);
		else
			rc = buf_printf(out, e, "%s_bucket{%sle=\"+Inf\"} %llu\n", name, labels,
					(unsigned long long)cum);
		if (rc)
			return rc;
	}
	/* _count is the +Inf bucket, so a scrape racing an observation stays consistent */
	if (*labels) {
		size_t n = strlen(labels);
		return buf_printf(out, e, "%s_sum{%.*s} %.6f\n%s_count{%.*s} %llu\n", name, (int)(n - 1), labels,
				  (double)atomic_load_explicit(&h->sum_us, memory_order_relaxed) / 1e6, name,
				  (int)(n - 1), labels, (unsigned long long)cum);
	}
	return buf_printf(out, e, "%s_sum %.6f\n%s_count %llu\n", name,
			  (double)atomic_load_explicit(&h->sum_us, memory_order_relaxed) / 1e6, name,
			  (unsigned long long)cum);
}

static int render_http(struct buf *out, struct err *e)
{
	static const char REQ[] = "accord_http_requests_total", LAT[] = "accord_http_request_duration_seconds";
	struct buf lab;
	int rc = head(out, REQ, "HTTP requests answered, by route pattern and status class.", "counter", e);

	for (size_t r = 0; rc == 0 && r <= m.n_routes; r++)
		for (int c = 0; rc == 0 && c < N_CLASSES; c++) {
			uint64_t v = atomic_load_explicit(&m.routes[r].by_class[c], memory_order_relaxed);
			if (!v)
				continue;
			rc = buf_printf(out, e, "%s{", REQ) || route_labels(out, r, e) ||
			     buf_printf(out, e, "status=\"%dxx\"} %llu\n", c + 1, (unsigned long long)v);
		}
	if (rc || (rc = head(out, LAT, "HTTP request latency, by route pattern.", "histogram", e)))
		return rc;
	buf_init(&lab, 0);
	for (size_t r = 0; rc == 0 && r <= m.n_routes; r++) {
		if (!atomic_load_explicit(&m.routes[r].latency.count, memory_order_relaxed))
			continue;
		buf_reset(&lab);
		rc = route_labels(&lab, r, e) || render_hist(out, LAT, lab.data, &m.routes[r].latency, fast_bounds, e);
	}
	buf_cleanup(&lab);
	return rc;
}

int metrics_render(struct buf *out, struct err *e)
{
	int rc = 0;

	if (!m.enabled)
		return 0;
	for (int i = 0; rc == 0 && i < MC__COUNT; i++)
		rc = head(out, counter_defs[i].name, counter_defs[i].help, "counter", e) ||
		     buf_printf(out, e, "%s %llu\n", counter_defs[i].name,
				(unsigned long long)atomic_load_explicit(&m.counters[i], memory_order_relaxed));
	if (rc == 0)
		rc = head(out, "accord_process_finished_total", "Processes that reached a final status on this node.",
			  "counter", e);
	for (size_t i = 0; rc == 0 && i < N_FINAL; i++)
		rc = buf_printf(out, e, "accord_process_finished_total{status=\"%s\"} %llu\n", final_statuses[i],
				(unsigned long long)atomic_load_explicit(&m.finished[i], memory_order_relaxed));
	for (int i = 0; rc == 0 && i < MH__COUNT; i++)
		rc = head(out, hist_defs[i].name, hist_defs[i].help, "histogram", e) ||
		     render_hist(out, hist_defs[i].name, "", &m.hists[i], hist_defs[i].bounds, e);
	if (rc == 0)
		rc = metrics_gauge_head(out, "accord_runner_peak_rss_bytes",
					"The largest peak resident memory of a process runner on this node.", e) ||
		     buf_printf(out, e, "accord_runner_peak_rss_bytes %llu\n",
				(unsigned long long)atomic_load_explicit(&m.runner_rss_max, memory_order_relaxed));
	if (rc == 0)
		rc = metrics_gauge_head(out, "accord_store_wal_bytes",
					"Size of SQLite's write-ahead log at the last heartbeat (0 on PostgreSQL).", e) ||
		     buf_printf(out, e, "accord_store_wal_bytes %llu\n",
				(unsigned long long)atomic_load_explicit(&m.store_wal_bytes, memory_order_relaxed));
	if (rc == 0)
		rc = metrics_gauge_head(out, "accord_http_requests_in_flight", "HTTP requests being read or answered.", e) ||
		     buf_printf(out, e, "accord_http_requests_in_flight %lld\n",
				(long long)atomic_load_explicit(&m.in_flight, memory_order_relaxed));
	return rc ? rc : render_http(out, e);
}
