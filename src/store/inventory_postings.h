#ifndef ACCORD_STORE_INVENTORY_POSTINGS_H
#define ACCORD_STORE_INVENTORY_POSTINGS_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>
#include <sqlite3.h>

#include "base/err.h"
#include "store/store.h"

/* The containment index of inventory and JSON store items on SQLite: for each inventory and
 * each distinct key of its items (store/inventory_keys.h, inv_keys_postings: a 64-bit hash),
 * the ascending list of the items that hold the key, stored in blocks: the rows of
 * inventory_postings(inventory, hash, first_item, items) (schema/046_inventory_posting_blocks.sql),
 * each the ids of up to INV_POSTINGS_BLOCK_IDS items from first_item on (base/i64_block.h:
 * the first id in the key, the gaps in the blob of at most INV_POSTINGS_BLOCK_BYTES bytes,
 * unless the migration wrote it longer).  The blocks of one list do not overlap: an item is
 * in the block with the greatest first_item not above it.  A list of 10,000 items is then
 * ~80 rows to read instead of 10,000.
 *
 * The item writes of store/inventories.c keep the blocks in the same transaction as the
 * items: the changes of a whole write (a bulk write of many items is one) are gathered in a
 * batch and applied list by list, each block touched read, changed and written once; a
 * block that grows past its limits is split (into full blocks when the items were added at
 * its end, as a load does, else evenly), an emptied one deleted, and one left under a
 * quarter full merged with the next when they fit in one.  The query sandbox
 * (inventory/sandbox.h, inventory/narrow.h) reads the lists and intersects them before the
 * exact check.  PostgreSQL has no such table: its GIN index answers @> (schema/014). */

#define INV_POSTINGS_BLOCK_IDS 128
#define INV_POSTINGS_BLOCK_BYTES 512

/* Whether c's backend keeps the postings (SQLite), so that a writer need not read an item's
 * old JSON for them elsewhere. */
bool store_inventory_postings_kept(struct store_conn *c);

/* The posting changes of one write transaction, gathered item by item, then applied
 * together.  {0} is an empty batch; not thread-safe. */
struct posting_change;
struct inventory_postings_batch {
	struct posting_change *v;
	size_t n, cap;
	uint32_t seq; /* the order of the changes, kept when they are sorted */
};

/* Adds to b what makes item `item` hold the postings n[0..nn) (inv_keys_postings: ascending;
 * borrowed) instead of those of old_v (NULL: none), only the postings that differ.  Nothing
 * is written yet.  ERR_INTERNAL when out of memory. */
int store_inventory_postings_batch_item(struct inventory_postings_batch *b, int64_t item, const json_t *old_v,
					const int64_t *n, size_t nn, struct err *e) WUR;

/* Inside the caller's write transaction: applies b's changes to inventory rid's blocks (for
 * an item changed twice in b, the later change counts) and empties b.  A no-op on
 * PostgreSQL and for an empty batch.  ERR_INTERNAL when a stored block is not valid or out
 * of memory; the database's errors as store_step. */
int store_inventory_postings_batch_apply(struct store_conn *c, int64_t rid, struct inventory_postings_batch *b,
					 struct err *e) WUR;

/* Frees b's memory; b is then empty. */
void store_inventory_postings_batch_cleanup(struct inventory_postings_batch *b);

/* Inside the caller's write transaction, before the item row goes: removes the postings of
 * item `item` of inventory rid, whose stored JSON is old_text (NUL-terminated).  A no-op on
 * PostgreSQL.  ERR_INTERNAL when old_text is not JSON, a block is not valid, or out of
 * memory. */
int store_inventory_postings_drop(struct store_conn *c, int64_t rid, int64_t item, const char *old_text,
				  struct err *e) WUR;

/* Registers on db the SQL functions of the migrations that build the index from what is
 * stored: accord_inv_postings(json_text), the JSON array of an item's postings (schema/041);
 * the aggregate accord_inv_block(item), the blob of the gaps between the items of a group,
 * sorted, repeats dropped (base/i64_block.h; the group's first item is its min(item),
 * schema/046).  SQLite's store connections only. */
int store_inventory_postings_register(sqlite3 *db, struct err *e) WUR;

#endif
