/* Queue figures for the metrics endpoint (process_stats.h): counts of live processes by
 * status, each a range of the index processes_status (status, created_at) — the final
 * statuses, which grow with the history, are never counted — and the due part of the
 * queue from processes_queue. */
#include "store/process_stats.h"

#include <string.h>

static int by_status(struct store_conn *c, struct process_stats *out, struct err *e)
{
	static const char SQL[] = "SELECT status, COUNT(*) FROM processes"
				  " WHERE status IN ('NEW', 'PREPARING', 'ENQUEUED', 'WAITING', 'STARTING', 'RUNNING',"
				  " 'SUSPENDED', 'RESUMING')"
				  " GROUP BY status";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st)
		return -1;
	while ((rc = store_step(st, e)) == STORE_ROW) {
		int s = proc_status_parse(store_col_text(st, 0) ? store_col_text(st, 0) : "");
		if (s >= 0)
			out->by_status[s] = (uint64_t)store_col_int64(st, 1);
	}
	store_reset(st);
	return rc;
}

static int due(struct store_conn *c, int64_t now, struct process_stats *out, struct err *e)
{
	static const char SQL[] =
	    "SELECT COUNT(*), MIN(CASE WHEN start_at IS NULL OR start_at < last_updated_at THEN last_updated_at"
	    " ELSE start_at END) FROM processes WHERE status = 'ENQUEUED' AND (start_at IS NULL OR start_at <= ?)";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_int64(st, 1, now);
	rc = store_step(st, e);
	if (rc == STORE_ROW) {
		out->due = (uint64_t)store_col_int64(st, 0);
		out->oldest_due_at = store_col_int64(st, 1);
		rc = 0;
	}
	store_reset(st);
	return rc;
}

int store_process_stats(struct store_conn *c, int64_t now, struct process_stats *out, struct err *e)
{
	memset(out, 0, sizeof *out);
	return by_status(c, out, e) ? -1 : due(c, now, out, e);
}
