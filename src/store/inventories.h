#ifndef ACCORD_STORE_INVENTORIES_H
#define ACCORD_STORE_INVENTORIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/uuid.h"
#include "store/orgs.h"
#include "store/store.h"

/* Inventories: named JSON item stores of an organization, their items (one JSON value per
 * path) and their saved queries.  Access rules live in resource_access with type
 * "INVENTORY" (store/access.h).  Lookups fail with ERR_NOT_FOUND naming what is missing.
 * Storage only: queries are checked and run by src/inventory/ (inventory/query.h). */

struct inventory {
	int64_t rid; /* internal row id (item tables) */
	char id[UUID_STR_LEN];
	char org_id[UUID_STR_LEN];
	char name[129];
	char visibility[16];	     /* PUBLIC or PRIVATE */
	char owner_id[UUID_STR_LEN]; /* "" when none */
	char owner_name[129];	     /* the owner's username, "" when none */
};

int store_inventory_find(struct store_conn *c, const char *org_id, const char *name, struct inventory *out,
			 struct err *e) WUR;
/* All inventories of the org sorted by name: new array (caller frees). */
int store_inventory_list(struct store_conn *c, const char *org_id, struct inventory **out, size_t *n,
			 struct err *e) WUR;
/* Inserts inv (id, org_id, name, visibility, owner_id set by the caller); sets inv->rid.
 * A duplicate name is ERR_CONFLICT. */
int store_inventory_insert(struct store_conn *c, struct inventory *inv, struct err *e) WUR;
/* Writes name, visibility and owner_id of the inventory with inv->id. */
int store_inventory_update(struct store_conn *c, const struct inventory *inv, struct err *e) WUR;
/* Deletes the inventory with its items, keys, queries and access rules (one transaction). */
int store_inventory_delete(struct store_conn *c, const struct inventory *inv, struct err *e) WUR;

/* Replaces (or creates) the item at path with value (borrowed), and its index keys, in one
 * transaction.  ERR_NOT_FOUND when the inventory (rid) no longer exists. */
int store_inventory_item_put(struct store_conn *c, int64_t rid, const char *path, const json_t *value,
			     struct err *e) WUR;
/* As store_inventory_item_put, for a JSON store: when max_bytes >= 0, refuses with
 * ERR_TOO_LARGE (Concord's message "Found JSON store policy violations: Maximum data size in
 * the JSON store exceeded: current N, limit M;") a write after which the sizes of the store's
 * items (their compact JSON text) would total more than max_bytes, decided in the write's
 * transaction.  *created (may be NULL) says whether path was new. */
int store_inventory_item_put_capped(struct store_conn *c, int64_t rid, const char *path, const json_t *value,
				    int64_t max_bytes, bool *created, struct err *e) WUR;
/* One item of a bulk write: its path and value (both borrowed). */
struct inventory_item_in {
	const char *path;
	const json_t *value;
};
/* Writes the n items in order (a path given twice: the later value wins), with their index
 * keys, in ONE transaction: all or nothing.  max_bytes as for store_inventory_item_put_capped,
 * decided once for the whole request (the store's size after every item is written);
 * store_inventory_item_put_capped is this with one item.  *n_created (may be NULL): how many
 * paths were new.  *bad: the index of the item whose write failed (n when the failure is
 * not one item's).  ERR_NOT_FOUND when the inventory (rid) no longer exists. */
int store_inventory_items_put(struct store_conn *c, int64_t rid, const struct inventory_item_in *items, size_t n,
			      int64_t max_bytes, size_t *n_created, size_t *bad, struct err *e) WUR;
/* The item at exactly path as stored (new JSON text, caller frees); ERR_NOT_FOUND. */
int store_inventory_item_get(struct store_conn *c, int64_t rid, const char *path, char **data, struct err *e) WUR;
/* Calls fn for the items whose path starts with prefix ("" or NULL: all), in path order;
 * stops at fn's first non-zero return and returns it.  path and data are borrowed for the
 * call. */
typedef int (*inventory_item_fn)(void *ctx, const char *path, const char *data, struct err *e);
int store_inventory_items_each(struct store_conn *c, int64_t rid, const char *prefix, inventory_item_fn fn, void *ctx,
			       struct err *e) WUR;
/* Deletes the item at exactly path; *deleted says whether there was one. */
int store_inventory_item_delete(struct store_conn *c, int64_t rid, const char *path, bool *deleted, struct err *e) WUR;

struct inventory_query {
	char id[UUID_STR_LEN];
	char name[129];
	char inventory_id[UUID_STR_LEN];
	char *text; /* owned */
};

void inventory_query_cleanup(struct inventory_query *q);
/* ERR_NOT_FOUND "Query not found: <name>". */
int store_inventory_query_get(struct store_conn *c, const char *inventory_id, const char *name,
			      struct inventory_query *out, struct err *e) WUR;
/* The inventory's queries sorted by name: new array (free with inventory_query_list_free). */
int store_inventory_query_list(struct store_conn *c, const char *inventory_id, struct inventory_query **out, size_t *n,
			       struct err *e) WUR;
void inventory_query_list_free(struct inventory_query *v, size_t n);
/* Creates the query or replaces its text; id_out gets its id, *created whether it is new. */
int store_inventory_query_put(struct store_conn *c, const char *inventory_id, const char *name, const char *text,
			      char id_out[UUID_STR_LEN], bool *created, struct err *e) WUR;
/* An exec's three lookups in one statement: the organization named org, its inventory inv
 * and that inventory's query named query.  found says how far the names go: 1 the org only,
 * 2 the org and the inventory, 3 all three; what is not found is left zeroed.  inv_name and
 * query_name borrow the names given (for store_inventory_lookup_missing).  q.text is owned
 * (inventory_query_cleanup).  ERR_NOT_FOUND "Organization not found: <org>" when there is no
 * such org. */
struct inventory_lookup {
	struct org org;
	struct inventory inv;
	struct inventory_query q;
	int found;
	const char *inv_name, *query_name;
};
int store_inventory_lookup(struct store_conn *c, const char *org, const char *inv, const char *query,
			   struct inventory_lookup *out, struct err *e) WUR;
/* The ERR_NOT_FOUND of the first name l did not find (found 1 or 2), with the message of
 * store_inventory_find or store_inventory_query_get. */
int store_inventory_lookup_missing(const struct inventory_lookup *l, struct err *e) WUR;
int store_inventory_query_delete(struct store_conn *c, const char *inventory_id, const char *name, struct err *e) WUR;

#endif
