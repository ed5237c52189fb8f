#ifndef ACCORD_STORE_JSONSTORES_H
#define ACCORD_STORE_JSONSTORES_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "store/store.h"

/* What a JSON store adds to the inventory it is (store/inventories.h: one storage, two
 * APIs): its capacity and the paged list of its item paths.  Sizes are the bytes of the
 * items' compact JSON text (inventory_items.item_size, migration 020). */

/* The store's size (sum of its items' sizes) and its own maximum (-1: none set, the
 * server's default applies). */
int store_jsonstore_capacity(struct store_conn *c, int64_t rid, int64_t *size, int64_t *max_bytes, struct err *e) WUR;
/* The store's own maximum alone (-1: none), without adding up its items. */
int store_jsonstore_max_get(struct store_conn *c, int64_t rid, int64_t *max_bytes, struct err *e) WUR;
/* Sets the store's own maximum (< 0: none, the server's default applies). */
int store_jsonstore_max_set(struct store_conn *c, int64_t rid, int64_t max_bytes, struct err *e) WUR;
/* The paths of the store's items in path order, those containing filter (case-insensitive;
 * NULL or "": all), offset and limit applied: *out is a new JSON array of strings. */
int store_jsonstore_paths(struct store_conn *c, int64_t rid, const char *filter, size_t offset, size_t limit,
			  json_t **out, struct err *e) WUR;

#endif
