#ifndef ACCORD_INVENTORY_JSONSTORE_POLICY_H
#define ACCORD_INVENTORY_JSONSTORE_POLICY_H

#include <stdbool.h>

#include <jansson.h>

#include "auth/principal.h"
#include "base/err.h"
#include "store/inventories.h"
#include "store/orgs.h"

/* The policy rules on JSON stores and inventories (docs/security.md "Policies"), one check
 * per entity, called by every path that writes one: the JSON store and inventory APIs and
 * the `jsonStore` task (the entity rules through auth/entity_policy.h: who is the writer). */

/* A store's create (exists false: jsonStore.store.maxNumberPerOrg against the org's stores,
 * then the entity rules) or update (the entity rules): kind jsonStore with name, orgId,
 * visibility, ownerId and ownerName of inv as it is to be written. */
int jsonstore_policy_store(struct store_conn *c, const struct principal *who, const struct org *org,
			   const struct inventory *inv, bool exists, struct err *e) WUR;

/* An item's put at path with data (borrowed): kind jsonStoreItem (path, data, jsonStoreId,
 * jsonStoreName, orgId, orgName), create or update by whether the item exists. */
int jsonstore_policy_item(struct store_conn *c, const struct principal *who, const struct org *org,
			  const struct inventory *inv, const char *path, const json_t *data, struct err *e) WUR;

/* The items of a bulk write, each as jsonstore_policy_item; *bad: the index of the item
 * refused (n when the failure is not one item's).  Without entity rules in the effective
 * policy, no item is looked at. */
int jsonstore_policy_items(struct store_conn *c, const struct principal *who, const struct org *org,
			   const struct inventory *inv, const struct inventory_item_in *items, size_t n, size_t *bad,
			   struct err *e) WUR;

/* A named query's put: kind jsonStoreQuery (name, text, storeId, storeName, orgId,
 * orgName), create or update by whether the query exists. */
int jsonstore_policy_query(struct store_conn *c, const struct principal *who, const struct org *org,
			   const struct inventory *inv, const char *name, const char *text, struct err *e) WUR;

#endif
