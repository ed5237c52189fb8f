#ifndef ACCORD_INVENTORY_JSONSTORE_H
#define ACCORD_INVENTORY_JSONSTORE_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "auth/principal.h"
#include "base/err.h"
#include "store/access.h"
#include "store/inventories.h"
#include "store/orgs.h"

/* JSON stores (Concord's successor of inventories): a JSON store IS an inventory, seen
 * through another API (store/jsonstores.h).  The rules shared by the JSON store API
 * (api/jsonstores*.c) and the server-side `jsonStore` task (queue/tasks/server_task_jsonstore.c),
 * which acts with the rights of its process's initiator: lookups with access checks, item
 * writes within capacity, named queries.  Access is that of inventories (auth/rbac.h,
 * resource type "INVENTORY"): READER reads items and runs queries, WRITER changes items
 * and queries, OWNER deletes the store and changes its rules.  Errors name what is wrong
 * with Concord's messages where Concord has one. */

struct jsonstore {
	struct org org;
	struct inventory inv;
};

/* The rbac_resource of a store (borrows inv). */
struct rbac_resource jsonstore_resource(const struct inventory *inv);

/* Finds store `name` of org `org_name` and checks that who holds `need` on it
 * (ACCESS_NONE: no check).  ERR_NOT_FOUND "Organization not found: …" (also for a PRIVATE
 * org who cannot see) or "JSON store not found: <name>"; ERR_FORBIDDEN. */
int jsonstore_open(struct store_conn *c, const struct principal *who, const char *org_name, const char *name,
		   enum access_level need, struct jsonstore *out, struct err *e) WUR;

/* Creates store `name` in org (PRIVATE, owned by who; who must be an org member), as
 * `POST /jsonstore {"name"}` does.  ERR_INVALID for a bad name, ERR_CONFLICT when it exists. */
int jsonstore_create(struct store_conn *c, const struct principal *who, const struct org *org, const char *name,
		     struct inventory *out, struct err *e) WUR;

/* The store's capacity: *max_bytes its own maxDataSize, else the server's default
 * (limits.json_store_bytes), -1 when neither bounds it; lowered to the effective policy's
 * jsonStore.data.maxSizeInBytes of the store's org when that is less. */
int jsonstore_max_bytes(struct store_conn *c, const struct inventory *inv, int64_t *max_bytes, struct err *e) WUR;

/* Writes the item at path (value borrowed; must be a JSON object, as Concord requires),
 * within the store's capacity (ERR_TOO_LARGE with Concord's message).  The caller has
 * checked WRITER.  *created says whether path was new. */
int jsonstore_item_put(struct store_conn *c, const struct inventory *inv, const char *path, const json_t *value,
		       bool *created, struct err *e) WUR;

/* The n items in one transaction, all or nothing, each checked as jsonstore_item_put checks
 * one, and the capacity decided for the store as it is after every item.  *n_created: how
 * many paths were new; *bad: the index of the item that failed (n when the failure is not
 * one item's). */
int jsonstore_items_put(struct store_conn *c, const struct inventory *inv, const struct inventory_item_in *items,
			size_t n, size_t *n_created, size_t *bad, struct err *e) WUR;

/* Creates or replaces named query `name` (text checked as an inventory query first).
 * *result: "CREATED", "UPDATED" or, for the same text again, "ALREADY_EXISTS" (static). */
int jsonstore_query_put(struct store_conn *c, const struct inventory *inv, const char *name, const char *text,
			const char **result, struct err *e) WUR;

/* Runs named query `name` with params (a JSON object for its ? placeholder, borrowed; NULL
 * or JSON null: none).  *rows: new JSON array.  Admission (api/query_gate.h) is the
 * caller's. */
int jsonstore_query_exec(struct store_conn *c, const struct inventory *inv, const char *name, const json_t *params,
			 json_t **rows, struct err *e) WUR;

#endif
