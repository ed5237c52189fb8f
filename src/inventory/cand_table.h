#ifndef ACCORD_INVENTORY_CAND_TABLE_H
#define ACCORD_INVENTORY_CAND_TABLE_H

#include <sqlite3.h>

#include "base/err.h"
#include "base/i64_list.h"

/* The table-valued function accord_inv_cands: an eponymous, read-only virtual table of one
 * column, id, whose rows are the ids of a list held in C (base/i64_list.h), in the list's order.
 * The query sandbox (sandbox.c) joins it to inventory_items by id, so that the items a
 * filter's postings narrow a query to are read in id order, one b-tree step after another,
 * instead of through a lookup per candidate.
 *
 * current(ctx) gives the list to show when a statement starts reading the table (borrowed
 * until the statement is reset; NULL: no rows).  Registered on db, the module lives as long
 * as db; ctx is borrowed for as long. */
#define INV_CAND_TABLE "accord_inv_cands"

typedef const struct i64_list *(*inv_cand_source)(void *ctx);

int inv_cand_table_register(sqlite3 *db, inv_cand_source current, void *ctx, struct err *e) WUR;

#endif
