/* The SQLite executor of inventory queries: the sandbox (sandbox.h) on c's database file. */
#include "inventory/executor.h"
#include "inventory/sandbox.h"
#include "store/sqlite_api.h"

/* The database file of c: the sandbox opens its own read-only connection to it. */
static const char *db_path(struct store_conn *c, struct err *e)
{
	sqlite3 *db = store_native(c);
	const char *p = db ? sqlite.db_filename(db, "main") : NULL;

	if (!p || !*p) {
		err_set(e, ERR_INTERNAL, "inventory queries need the SQLite store with a database file");
		return NULL;
	}
	return p;
}

static int sqlite_check(struct store_conn *c, const struct inv_query *q, struct err *e)
{
	const char *path = db_path(c, e);

	return path ? inv_sandbox_check(path, q, e) : -1;
}

static int sqlite_run(struct store_conn *c, const struct inv_query *q, const struct inv_run *r, json_t **rows,
		      struct err *e)
{
	const char *path = db_path(c, e);

	return path ? inv_sandbox_run(path, q, r, rows, e) : -1;
}

static int sqlite_run_text(struct store_conn *c, const struct inv_query *q, const struct inv_run *r,
			   struct buf *text, struct err *e)
{
	const char *path = db_path(c, e);

	return path ? inv_sandbox_run_text(path, q, r, text, e) : -1;
}

const struct inv_executor inv_executor_sqlite = {
    .backend = "sqlite", .check = sqlite_check, .run = sqlite_run, .run_text = sqlite_run_text};
