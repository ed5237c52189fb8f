/* The policy rules on JSON stores, their items and queries (jsonstore_policy.h). */
#include "inventory/jsonstore_policy.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "auth/entity_policy.h"
#include "base/str.h"
#include "policy/policy.h"
#include "store/policies.h"

/* jsonStore.store.maxNumberPerOrg of the effective policy against the org's stores. */
static int store_count(struct store_conn *c, const struct principal *who, const struct org *org, struct err *e)
{
	struct policy_place at = {org->id, NULL, who->user.id[0] ? who->user.id : NULL};
	char name[POLICY_NAME_MAX + 1], a[24], b[24];
	struct inventory *all = NULL;
	json_t *rules = NULL;
	const json_t *rule;
	int64_t max;
	size_t n = 0;
	int rc = 0;

	if (store_policy_effective(c, &at, &rules, name, e))
		return -1;
	rule = json_object_get(json_object_get(rules, "jsonStore"), "store");
	max = policy_number(json_object_get(rule, "maxNumberPerOrg"));
	if (max >= 0 && (rc = store_inventory_list(c, org->id, &all, &n, e)) == 0 && (int64_t)n >= max) {
		str_fmt_cut(a, sizeof a, "%zu", n);
		str_fmt_cut(b, sizeof b, "%" PRId64, max);
		rc = policy_refuse(e, ERR_INVALID, name, rule,
				   "Too many JSON stores in the organization: current {0}, limit {1}", a, b);
	}
	free(all);
	json_decref(rules);
	return rc;
}

/* attrs (taken over) checked as kind, create or update. */
static int check(struct store_conn *c, const struct principal *who, const struct org *org, const char *kind,
		 bool exists, json_t *attrs, struct err *e)
{
	int rc;

	if (!attrs)
		return err_set(e, ERR_INTERNAL, "out of memory");
	rc = entity_policy_check(c, who, org->id, NULL, kind, exists ? "update" : "create", attrs, e);
	json_decref(attrs);
	return rc;
}

int jsonstore_policy_store(struct store_conn *c, const struct principal *who, const struct org *org,
			   const struct inventory *inv, bool exists, struct err *e)
{
	json_t *attrs;

	if (!exists && store_count(c, who, org, e))
		return -1;
	attrs = json_pack("{s:s, s:s, s:s}", "name", inv->name, "orgId", org->id, "visibility", inv->visibility);
	if (attrs && inv->owner_id[0])
		json_object_set_new(attrs, "ownerId", json_string(inv->owner_id));
	if (attrs && (inv->owner_name[0] || strcmp(inv->owner_id, who->user.id) == 0))
		json_object_set_new(attrs, "ownerName",
				    json_string(inv->owner_name[0] ? inv->owner_name : who->user.username));
	return check(c, who, org, "jsonStore", exists, attrs, e);
}

/* Whether the effective policy of org for who has entity rules at all (an item's check
 * needs to know whether it exists, a lookup spared in the common case without them). */
static int entity_rules(struct store_conn *c, const struct principal *who, const struct org *org, bool *any,
			struct err *e)
{
	struct policy_place at = {org->id, NULL, who->user.id[0] ? who->user.id : NULL};
	char name[POLICY_NAME_MAX + 1];
	json_t *rules = NULL;

	*any = false;
	if (store_policy_effective(c, &at, &rules, name, e))
		return -1;
	*any = json_object_get(rules, "entity") != NULL;
	json_decref(rules);
	return 0;
}

static int item_rules(struct store_conn *c, const struct principal *who, const struct org *org,
		      const struct inventory *inv, const char *path, const json_t *data, struct err *e)
{
	char *old = NULL;
	struct err none;
	bool exists = store_inventory_item_get(c, inv->rid, path, &old, &none) == 0;

	free(old);
	return check(c, who, org, "jsonStoreItem", exists,
		     json_pack("{s:s, s:O, s:s, s:s, s:s, s:s}", "path", path, "data", data ? data : json_null(),
			       "jsonStoreId", inv->id, "jsonStoreName", inv->name, "orgId", org->id, "orgName",
			       org->name),
		     e);
}

int jsonstore_policy_items(struct store_conn *c, const struct principal *who, const struct org *org,
			   const struct inventory *inv, const struct inventory_item_in *items, size_t n, size_t *bad,
			   struct err *e)
{
	bool any;

	*bad = n;
	if (entity_rules(c, who, org, &any, e))
		return -1;
	for (size_t i = 0; any && i < n; i++)
		if (item_rules(c, who, org, inv, items[i].path, items[i].value, e)) {
			*bad = i;
			return -1;
		}
	return 0;
}

int jsonstore_policy_item(struct store_conn *c, const struct principal *who, const struct org *org,
			  const struct inventory *inv, const char *path, const json_t *data, struct err *e)
{
	const struct inventory_item_in one = {.path = path, .value = data};
	size_t bad;

	return jsonstore_policy_items(c, who, org, inv, &one, 1, &bad, e);
}

int jsonstore_policy_query(struct store_conn *c, const struct principal *who, const struct org *org,
			   const struct inventory *inv, const char *name, const char *text, struct err *e)
{
	struct inventory_query q = {0};
	struct err none;
	bool exists = store_inventory_query_get(c, inv->id, name, &q, &none) == 0;

	inventory_query_cleanup(&q);
	return check(c, who, org, "jsonStoreQuery", exists,
		     json_pack("{s:s, s:s?, s:s, s:s, s:s, s:s}", "name", name, "text", text, "storeId", inv->id,
			       "storeName", inv->name, "orgId", org->id, "orgName", org->name),
		     e);
}
