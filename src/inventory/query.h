#ifndef ACCORD_INVENTORY_QUERY_H
#define ACCORD_INVENTORY_QUERY_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/err.h"
#include "store/inventories.h"
#include "store/store.h"

/* Inventory queries: the one interface of src/inventory/ for its callers (api/).
 *
 * A query text, written for PostgreSQL against the view inventory_data(inventory_id,
 * item_path, item_data) (the subset of docs/inventory.md), is compiled once: checked against
 * that subset, whatever the backend (dialect.h).  The compiled query then runs through the
 * executor of the store's backend (store_backend), in a sandbox that lets it read nothing
 * but its own inventory's items, read-only, within time, row and memory limits (SQLite:
 * sandbox.h).  Executors sit behind struct inv_executor (executor.h); a backend without one
 * is ERR_UNAVAILABLE (503) naming it.  Thread-safe: every call has its own state. */

struct inv_query {
	const char *text; /* borrowed from inv_query_compile's caller, who keeps it alive */
	size_t text_len;
	unsigned n_params; /* ? placeholders: 0 or 1 */
	/* True when the query filters `item_data @> ?::jsonb` in a conjunctive WHERE over
	 * inventory_data alone, so an executor may read only the items that can contain the
	 * filter (see struct inv_translation). */
	bool prefilter;
};

/* The message of a run whose query returns n != 1 columns (printf format, one int). */
#define INV_ONE_COLUMN_FMT                                                                                             \
	"a query must return exactly one column to run, this one returns %d: select the JSON of each row, e.g. "       \
	"select item_data from inventory_data"

/* Compiles text[0..len) (need not be NUL-terminated; borrowed for the life of out).  Owns
 * nothing: out needs no cleanup.  Errors as inv_dialect_translate: ERR_INVALID naming what
 * is wrong and where, ERR_TOO_LARGE, ERR_INTERNAL when out of memory. */
int inv_query_compile(const char *text, size_t len, struct inv_query *out, struct err *e) WUR;

/* Validates q as it would run on c's database, without running it (SQLite: prepared in the
 * sandbox, so unknown columns and functions are found).  ERR_INVALID with the reason.  Any
 * number of columns passes (`select * from inventory_data` is saved, as Concord saves it);
 * inv_query_run needs exactly one. */
int inv_query_check(struct store_conn *c, const struct inv_query *q, struct err *e) WUR;

/* Runs q on inv's items with the configured limits (limits.query_timeout_ms,
 * limits.query_rows).  filter: JSON text for the ? placeholder, or NULL (an error when q has
 * one).  The query must return one column (ERR_INVALID INV_ONE_COLUMN_FMT otherwise).
 * *rows (new) is a JSON array with one element per row: the single column's value,
 * text parsed as JSON, numbers as numbers, NULL as null.  Errors: ERR_INVALID naming what
 * was wrong — the filter, the database's own reason, a limit —; ERR_INTERNAL when the
 * database cannot be opened. */
int inv_query_run(struct store_conn *c, const struct inventory *inv, const struct inv_query *q, const char *filter,
		  json_t **rows, struct err *e) WUR;

/* inv_query_run with the answer as text: text (reset first; the caller's buffer) gets what
 * jsonx_dump prints for *rows, without building the rows where the executor can (SQLite:
 * stored items copied as they are, sandbox.h).  The same errors; text is empty after one. */
int inv_query_run_text(struct store_conn *c, const struct inventory *inv, const struct inv_query *q,
		       const char *filter, struct buf *text, struct err *e) WUR;

#endif
