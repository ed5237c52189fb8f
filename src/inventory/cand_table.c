#include "inventory/cand_table.h"

#include <stdlib.h>

#include "store/sqlite_api.h"

struct source {
	inv_cand_source current;
	void *ctx;
};

struct table {
	sqlite3_vtab base; /* first: SQLite hands this pointer back */
	const struct source *src;
};

struct cursor {
	sqlite3_vtab_cursor base; /* first */
	const struct i64_list *ids;
	size_t i;
};

static int x_connect(sqlite3 *db, void *aux, int argc, const char *const *argv, sqlite3_vtab **out, char **err)
{
	struct table *t;
	int rc;

	(void)argc;
	(void)argv;
	(void)err;
	if ((rc = sqlite.declare_vtab(db, "CREATE TABLE x(id INTEGER)")) != SQLITE_OK)
		return rc;
	/* it reads nothing but a list of ids the sandbox computed: safe inside its views */
	sqlite.vtab_config(db, SQLITE_VTAB_INNOCUOUS);
	if (!(t = calloc(1, sizeof(*t))))
		return SQLITE_NOMEM;
	t->src = aux;
	*out = &t->base;
	return SQLITE_OK;
}

static int x_disconnect(sqlite3_vtab *vt)
{
	free(vt);
	return SQLITE_OK;
}

/* No constraint is used (the join looks the items up by the ids it reads); the list is
 * in id order. */
static int x_best_index(sqlite3_vtab *vt, sqlite3_index_info *info)
{
	(void)vt;
	if (info->nOrderBy == 1 && info->aOrderBy[0].iColumn == 0 && !info->aOrderBy[0].desc)
		info->orderByConsumed = 1;
	info->estimatedCost = 1000;
	info->estimatedRows = 1000;
	return SQLITE_OK;
}

static int x_open(sqlite3_vtab *vt, sqlite3_vtab_cursor **out)
{
	struct cursor *c = calloc(1, sizeof(*c));

	(void)vt;
	if (!c)
		return SQLITE_NOMEM;
	*out = &c->base;
	return SQLITE_OK;
}

static int x_close(sqlite3_vtab_cursor *cur)
{
	free(cur);
	return SQLITE_OK;
}

static int x_filter(sqlite3_vtab_cursor *cur, int idx, const char *idx_str, int argc, sqlite3_value **argv)
{
	struct cursor *c = (struct cursor *)cur;
	const struct source *s = ((const struct table *)cur->pVtab)->src;

	(void)idx;
	(void)idx_str;
	(void)argc;
	(void)argv;
	c->ids = s->current(s->ctx);
	c->i = 0;
	return SQLITE_OK;
}

static int x_next(sqlite3_vtab_cursor *cur)
{
	((struct cursor *)cur)->i++;
	return SQLITE_OK;
}

static int x_eof(sqlite3_vtab_cursor *cur)
{
	const struct cursor *c = (const struct cursor *)cur;
	return !c->ids || c->i >= c->ids->n;
}

static int x_column(sqlite3_vtab_cursor *cur, sqlite3_context *ctx, int col)
{
	const struct cursor *c = (const struct cursor *)cur;

	(void)col;
	sqlite.result_int64(ctx, c->ids->v[c->i]);
	return SQLITE_OK;
}

static int x_rowid(sqlite3_vtab_cursor *cur, sqlite3_int64 *rowid)
{
	*rowid = (sqlite3_int64)((const struct cursor *)cur)->i;
	return SQLITE_OK;
}

static const sqlite3_module module = {
    .iVersion = 0,
    .xCreate = NULL, /* eponymous only: no CREATE VIRTUAL TABLE */
    .xConnect = x_connect,
    .xBestIndex = x_best_index,
    .xDisconnect = x_disconnect,
    .xDestroy = x_disconnect,
    .xOpen = x_open,
    .xClose = x_close,
    .xFilter = x_filter,
    .xNext = x_next,
    .xEof = x_eof,
    .xColumn = x_column,
    .xRowid = x_rowid,
};

int inv_cand_table_register(sqlite3 *db, inv_cand_source current, void *ctx, struct err *e)
{
	struct source *s = malloc(sizeof(*s));

	if (!s)
		return err_set(e, ERR_INTERNAL, "out of memory");
	*s = (struct source){current, ctx};
	if (sqlite.create_module_v2(db, INV_CAND_TABLE, &module, s, free) != SQLITE_OK)
		return err_set(e, ERR_INTERNAL, "registering %s: %s", INV_CAND_TABLE, sqlite.errmsg(db));
	return 0;
}
