#ifndef ACCORD_STORE_INVENTORY_POSTINGS_H
#define ACCORD_STORE_INVENTORY_POSTINGS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>
#include <sqlite3.h>

#include "base/err.h"
#include "store/store.h"

/* The containment index of inventory and JSON store items on SQLite: the rows of
 * inventory_postings(inventory, hash, item) (schema/041_inventory_postings.sql), one per
 * distinct key of an item (store/inventory_keys.h, inv_keys_postings).  The item writes of
 * store/inventories.c keep it in the same transaction as the item; the query sandbox
 * (inventory/sandbox.h) intersects a filter's rarest postings before the exact check.
 * PostgreSQL has no such table: its GIN index answers @> (schema/014). */

/* Whether c's backend keeps the postings (SQLite), so that a writer need not read an item's
 * old JSON for them elsewhere. */
bool store_inventory_postings_kept(struct store_conn *c);

/* Inside the caller's write transaction: makes item `item` of inventory rid hold the
 * postings of new_v instead of those of old_v (either NULL: none), touching only the
 * postings that differ.  A no-op on PostgreSQL.  ERR_INTERNAL when out of memory; the
 * database's errors as store_step_done. */
int store_inventory_postings_update(struct store_conn *c, int64_t rid, int64_t item, const json_t *old_v,
				    const json_t *new_v, struct err *e) WUR;

/* As store_inventory_postings_update with the new value's postings worked out beforehand
 * (n, nn: inv_keys_postings, ascending; borrowed), e.g. before the write transaction. */
int store_inventory_postings_set(struct store_conn *c, int64_t rid, int64_t item, const json_t *old_v, const int64_t *n,
				 size_t nn, struct err *e) WUR;

/* Inside the caller's write transaction, before the item row goes: removes the postings of
 * item `item` of inventory rid, whose stored JSON is old_text (NUL-terminated).  A no-op on
 * PostgreSQL.  ERR_INTERNAL when old_text is not JSON or out of memory. */
int store_inventory_postings_drop(struct store_conn *c, int64_t rid, int64_t item, const char *old_text,
				  struct err *e) WUR;

/* Registers on db the SQL function accord_inv_postings(json_text): the JSON array of the
 * item's postings (the migration's backfill, schema/041).  SQLite's store connections only. */
int store_inventory_postings_register(sqlite3 *db, struct err *e) WUR;

#endif
