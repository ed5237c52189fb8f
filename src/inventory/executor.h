#ifndef ACCORD_INVENTORY_EXECUTOR_H
#define ACCORD_INVENTORY_EXECUTOR_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/err.h"
#include "inventory/query.h"
#include "store/store.h"

/* The executors of inventory queries, one per store backend, internal to src/inventory/:
 * query.c picks the one whose backend is store_backend() of the connection's store.  A new
 * backend adds its executor here and to the table in query.c; callers do not change. */

/* One run of a compiled query: whose rows it reads, its filter and its limits. */
struct inv_run {
	int64_t inventory;	  /* row id of the inventory (struct inventory's rid) */
	const char *inventory_id; /* its public id, the column inventory_id; borrowed */
	const char *filter;	  /* JSON text for the ? placeholder, or NULL; borrowed */
	size_t filter_len;
	unsigned timeout_ms; /* 0: no time limit */
	size_t max_rows;     /* 0: no row limit */
	size_t max_memory;   /* bytes the database may hold for the run; 0: the executor's default */
};

struct inv_executor {
	const char *backend; /* the store backend's name, as store_backend gives it */
	/* inv_query_check and inv_query_run for this backend: the same contracts. */
	int (*check)(struct store_conn *c, const struct inv_query *q, struct err *e);
	int (*run)(struct store_conn *c, const struct inv_query *q, const struct inv_run *r, json_t **rows,
		   struct err *e);
	/* inv_query_run_text's contract, or NULL: run, then the rows printed. */
	int (*run_text)(struct store_conn *c, const struct inv_query *q, const struct inv_run *r, struct buf *text,
			struct err *e);
};

/* SQLite: the sandbox of sandbox.h on a read-only connection of its own to c's database file. */
extern const struct inv_executor inv_executor_sqlite;

/* PostgreSQL: the text runs natively in a read-only transaction under the query role, on c's
 * own connection (exec_pg.c, migration 014). */
extern const struct inv_executor inv_executor_pg;

#endif
