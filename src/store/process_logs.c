#include "store/process_logs.h"

#include <string.h>

#include "base/datetime.h"
#include "base/metrics.h"
#include "base/str.h"
#include "store/project_storage.h"

/* A chunk starts where the last one ends; the last one is found through the primary key
 * (instance_id, start_off) and the whole append is one statement, so concurrent writers
 * cannot interleave between reading the end and inserting.  A backend that lets two of
 * them compute the same start (PostgreSQL under READ COMMITTED, row transactions of two
 * nodes) inserts nothing for the later one (ON CONFLICT DO NOTHING: no error, which would
 * end the transaction it runs in): that one tries again from the new end. */
#define APPEND_TRIES 5

int store_process_log_append(struct store_conn *c, const char *id, const void *data, size_t len, uint64_t *size,
			     struct err *e)
{
	static const char SQL[] = "INSERT INTO process_log_chunks (instance_id, start_off, data)"
				  " SELECT ?, coalesce((SELECT start_off + length(data) FROM process_log_chunks"
				  " WHERE instance_id = ? ORDER BY start_off DESC LIMIT 1), 0), ?"
				  " WHERE true ON CONFLICT DO NOTHING RETURNING start_off"; /* WHERE: SQLite's parser */
	struct store_stmt *st;
	int rc = -1;

	if (len == 0 || len > INT32_MAX)
		return err_set(e, ERR_INVALID, "log append of %zu bytes", len);
	if (!(st = store_prepare(c, SQL, e)))
		return -1;
	for (int i = 0; i < APPEND_TRIES; i++) {
		store_bind_text(st, 1, id);
		store_bind_text(st, 2, id);
		store_bind_blob(st, 3, data, len);
		rc = store_step(st, e);
		if (rc == STORE_ROW && size)
			*size = (uint64_t)store_col_int64(st, 0) + len;
		store_reset(st);
		if (rc != STORE_DONE)
			break;
	}
	if (rc == STORE_DONE)
		return err_set(e, ERR_CONFLICT, "log of %s: %d appends in a row lost the race to another writer", id,
			       APPEND_TRIES);
	if (rc == STORE_ROW) {
		metrics_inc(MC_LOG_BYTES, len);
		return project_storage_add(c, id, (int64_t)len, e);
	}
	return rc < 0 ? rc : 0;
}

int store_process_log_size(struct store_conn *c, const char *id, uint64_t *size, struct err *e)
{
	static const char SQL[] = "SELECT start_off + length(data) FROM process_log_chunks WHERE instance_id = ?"
				  " ORDER BY start_off DESC LIMIT 1";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	*size = 0;
	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	rc = store_step(st, e);
	if (rc == STORE_ROW)
		*size = (uint64_t)store_col_int64(st, 0);
	store_reset(st);
	return rc < 0 ? rc : 0;
}

/* Appends the part of chunk [start, start + n) that lies in [off, end). */
static int copy_overlap(struct buf *out, uint64_t start, const char *p, size_t n, uint64_t off, uint64_t end,
			struct err *e)
{
	uint64_t lo = start > off ? start : off;
	uint64_t hi = start + n < end ? start + n : end;

	if (hi <= lo)
		return 0;
	return buf_append(out, p + (lo - start), (size_t)(hi - lo), e);
}

int store_process_log_read(struct store_conn *c, const char *id, uint64_t off, uint64_t len, struct buf *out,
			   struct err *e)
{
	/* From the last chunk starting at or before off (found through the primary key) to the
	 * last one starting before the end: exactly the chunks that overlap the range. */
	static const char SQL[] = "SELECT start_off, data FROM process_log_chunks WHERE instance_id = ?"
				  " AND start_off >= coalesce((SELECT start_off FROM process_log_chunks"
				  " WHERE instance_id = ? AND start_off <= ? ORDER BY start_off DESC LIMIT 1), 0)"
				  " AND start_off < ? ORDER BY start_off";
	struct store_stmt *st;
	uint64_t end;
	int rc;

	if (off > INT64_MAX)
		return 0;
	if (__builtin_add_overflow(off, len, &end) || end > INT64_MAX)
		end = INT64_MAX;
	if (end <= off)
		return 0;
	if (!(st = store_prepare(c, SQL, e)))
		return -1;
	store_bind_text(st, 1, id);
	store_bind_text(st, 2, id);
	store_bind_int64(st, 3, (int64_t)off);
	store_bind_int64(st, 4, (int64_t)end);
	while ((rc = store_step(st, e)) == STORE_ROW) {
		size_t n = 0;
		const void *p = store_col_blob(st, 1, &n);
		if ((rc = copy_overlap(out, (uint64_t)store_col_int64(st, 0), p, n, off, end, e)))
			break;
	}
	store_reset(st);
	return rc < 0 ? rc : 0;
}

int store_process_log_line(struct store_conn *c, const char *id, const char *level, const char *text, struct err *e)
{
	char iso[DT_ISO_LEN], line[1024];
	size_t n;

	dt_format_iso(dt_now_ms(), iso);
	str_fmt_cut(line, sizeof line - 1, "%.23s+0000 [%-5s] %s", iso, level, text);
	n = strlen(line);
	line[n++] = '\n';
	return store_process_log_append(c, id, line, n, NULL, e);
}
