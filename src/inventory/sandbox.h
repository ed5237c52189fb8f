#ifndef ACCORD_INVENTORY_SANDBOX_H
#define ACCORD_INVENTORY_SANDBOX_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/err.h"
#include "inventory/executor.h"
#include "inventory/query.h"

/* The SQLite executor's sandbox (executor.h): runs one inventory query so that it can do
 * nothing but read its own inventory's items.
 *
 * Each run uses its thread's connection to the database file (opened by the thread's first
 * run, kept for its next runs on the same file, closed after a run that failed), read-only
 * (SQLITE_OPEN_READONLY and PRAGMA query_only), with defensive mode on, no extension
 * loading, no attached databases, no double-quoted-string fallback and small limits on
 * value length, expression depth, compound SELECTs and parameters.  The query text is
 * translated (dialect.h) so that inventory_data names one of two TEMP views created with
 * the connection under random names, whose functions read the current run (no rows between
 * runs): one holds the rows of this inventory only (WHERE inventory = <this one>), the
 * other the rows of this inventory among the run's candidates (see below).  An authorizer
 * then allows: SELECT; reading the columns of those views; reading the table inventory_items
 * and the candidates (cand_table.h) only when the read comes from inside one of those views;
 * the table-valued function json_each; recursive WITH; and an
 * allow-list of side-effect-free functions.  Everything else (other tables, sqlite_schema,
 * PRAGMA, ATTACH, writes, DDL, transactions, randomblob, zeroblob, printf, load_extension,
 * …) is denied when the statement is prepared.  A statement must be exactly one read-only
 * SELECT (the tail after prepare must be empty).  The authorizer is set once, when the
 * connection is opened (setting it expires every statement of the connection): it checks a
 * statement for the run using the connection, allows nothing between runs, and lets the
 * sandbox's own reads of the postings pass.  The connection keeps the prepared statements
 * of its last 8 queries (by text and view), each checked when it was prepared, so a saved
 * query run again is neither translated nor parsed again.  A progress handler stops it
 * after the time limit.  Memory: everything SQLite allocates for the run (its connection,
 * page caches, sorters, values) is charged to a budget of this run alone (store/sqlite_mem.h),
 * max_memory bytes (INV_QUERY_MEMORY_BYTES by default); an allocation past it fails and
 * stops the query, whatever other queries or connections do at the same time.  Rows past
 * the row limit and results past INV_QUERY_RESULT_BYTES stop it too.
 *
 * Containment index: when the compiled query says (prefilter) that it filters
 * `item_data @> ?::jsonb` in a conjunctive WHERE over inventory_data alone, the posting
 * lists of the filter's keys (inv_keys_each, inv_key_hash; an object or array only when
 * empty) are read from inventory_postings and intersected in memory (narrow.h), and the
 * query reads only the items left, in id order (the full condition is still evaluated on
 * them), so a selective filter reads few items.  The candidate list and the posting list
 * intersected with it are plain memory outside the budget below: 8 bytes an item of the
 * inventory each, at most twice that as they grow.  A filter without keys
 * ({}) reads every item of the inventory.  The views also check each item's own inventory,
 * so a posting can never lead outside it.
 *
 * The schema it relies on (schema/003_inventories.sql, 046_inventory_posting_blocks.sql):
 *   inventory_items(id INTEGER PRIMARY KEY, inventory INTEGER, item_path TEXT, item_data TEXT)
 *   inventory_postings(inventory, hash, first_item, items) WITHOUT ROWID, primary key in
 *   that order, items the gaps of a block (base/i64_block.h).
 * Thread-safe: every call uses its own connection. */

#define INV_QUERY_MEMORY_BYTES (256u * 1024 * 1024)
#define INV_QUERY_RESULT_BYTES (64u * 1024 * 1024)
#define INV_QUERY_VALUE_BYTES (16 * 1024 * 1024)

/* Runs the compiled query q on the database file db_path (borrowed) for in (max_memory 0:
 * INV_QUERY_MEMORY_BYTES); *rows (new) is a JSON array with one element per row: the single
 * column's value, text parsed as JSON, numbers as numbers, NULL as null.  Errors
 * (ERR_INVALID unless said otherwise), each message saying what was wrong: a placeholder
 * without a filter; more or fewer than one column; a value that is not JSON ("Invalid JSON
 * value: …"); the database's own reason for a failure at prepare or run time, with the view
 * names written as inventory_data; time, memory, row and result-size limits; ERR_INTERNAL
 * when the database cannot be opened. */
int inv_sandbox_run(const char *db_path, const struct inv_query *q, const struct inv_run *in, json_t **rows,
		    struct err *e) WUR;

/* inv_sandbox_run with the answer as text: text (reset first) gets exactly what
 * jsonx_dump prints for inv_sandbox_run's *rows, a stored item's text copied as it is
 * where jansson would print it the same (json_canon.h), so that an answer of many items is
 * not parsed and printed again.  The same errors; text is empty after one. */
int inv_sandbox_run_text(const char *db_path, const struct inv_query *q, const struct inv_run *in, struct buf *text,
			 struct err *e) WUR;

/* Validates q as it would run (prepared inside the sandbox, no execution, the default memory
 * budget); errors as inv_sandbox_run. */
int inv_sandbox_check(const char *db_path, const struct inv_query *q, struct err *e) WUR;

#endif
