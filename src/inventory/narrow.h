#ifndef ACCORD_INVENTORY_NARROW_H
#define ACCORD_INVENTORY_NARROW_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "base/err.h"
#include "base/i64_list.h"

/* The items of an inventory that can contain a filter, from the containment index
 * (inventory_postings, store/inventory_keys.h): the intersection of the posting lists of
 * the filter's keys (the first 8), in ascending id order.  The lists are read from the
 * index side by side, a few blocks of each in turn (store/inventory_postings.h: up to 128
 * ids a row), until the rarest has ended; the others then
 * only as far as its last id, and one that runs past 16 times its length is left unread
 * (the exact check of each candidate still decides); they are intersected in memory
 * (base/i64_list.h), shortest first.  The list is a superset of the items that contain the filter
 * (hashes may collide; array and object keys say nothing of their elements' positions):
 * never a decision on its own.
 *
 * The statements are prepared once on the sandbox's read-only connection and reused by its
 * runs.  Not thread-safe: one per connection. */
struct inv_narrow;

/* New, on db (borrowed; must outlive it).  ERR_INTERNAL when a statement cannot be prepared. */
struct inv_narrow *inv_narrow_new(sqlite3 *db, struct err *e);
void inv_narrow_free(struct inv_narrow *nw);

/* Fills out (emptied first) with the candidate ids of inventory for a filter whose keys
 * hash to the n distinct hashes (inv_key_hash; n > 0: a filter without keys, {}, narrows
 * nothing, the caller reads every item).  ERR_INTERNAL with the
 * database's message on a failed read, when a stored block is not valid, or when out of
 * memory. */
int inv_narrow_ids(struct inv_narrow *nw, int64_t inventory, const int64_t *hashes, size_t n, struct i64_list *out,
		   struct err *e) WUR;

#endif
