#include "inventory/jsonstore.h"

#include <stdlib.h>
#include <string.h>

#include "auth/rbac.h"
#include "base/limits.h"
#include "base/names.h"
#include "base/str.h"
#include "base/uuid.h"
#include "inventory/jsonstore_policy.h"
#include "inventory/query.h"
#include "policy/policy.h"
#include "store/jsonstores.h"
#include "store/policies.h"

struct rbac_resource jsonstore_resource(const struct inventory *inv)
{
	return (struct rbac_resource){.type = "INVENTORY",
				      .kind = "JSON store",
				      .id = inv->id,
				      .name = inv->name,
				      .org_id = inv->org_id,
				      .owner_id = inv->owner_id,
				      .is_public = strcmp(inv->visibility, "PUBLIC") == 0};
}

int jsonstore_open(struct store_conn *c, const struct principal *who, const char *org_name, const char *name,
		   enum access_level need, struct jsonstore *out, struct err *e)
{
	struct rbac_resource r;
	int rc;

	if ((rc = store_org_find(c, org_name, &out->org, e)) || (rc = rbac_org(c, who, &out->org, RBAC_ORG_VIEW, e)))
		return rc;
	rc = store_inventory_find(c, out->org.id, name, &out->inv, e);
	if (rc == -ERR_NOT_FOUND)
		return err_set(e, ERR_NOT_FOUND, "JSON store not found: %.128s", name);
	if (rc || need == ACCESS_NONE)
		return rc;
	r = jsonstore_resource(&out->inv);
	return rbac_check(c, who, &r, need, e);
}

int jsonstore_create(struct store_conn *c, const struct principal *who, const struct org *org, const char *name,
		     struct inventory *out, struct err *e)
{
	int rc;

	*out = (struct inventory){0};
	if ((rc = rbac_org(c, who, org, RBAC_ORG_MEMBER, e)) || (rc = name_check(name, "JSON store", NAME_PLAIN, e)))
		return rc;
	uuid_v4(out->id);
	if (str_fmt(out->name, sizeof out->name, "%s", name))
		return err_set(e, ERR_INVALID, "JSON store name is longer than %zu characters", sizeof out->name - 1);
	if (str_fmt(out->org_id, sizeof out->org_id, "%s", org->id) ||
	    str_fmt(out->owner_id, sizeof out->owner_id, "%s", who->user.id))
		return err_set(e, ERR_INTERNAL, "an id is too long");
	str_set_lit(out->visibility, "PRIVATE");
	if ((rc = jsonstore_policy_store(c, who, org, out, false, e)))
		return rc;
	rc = store_inventory_insert(c, out, e);
	if (rc == -ERR_CONFLICT)
		return err_set(e, ERR_CONFLICT, "JSON store already exists: %.128s", name);
	return rc;
}

/* The effective policy's jsonStore.data.maxSizeInBytes for the store's org (-1: none). */
static int policy_max(struct store_conn *c, const struct inventory *inv, int64_t *max, struct err *e)
{
	struct policy_place at = {inv->org_id, NULL, NULL};
	char name[POLICY_NAME_MAX + 1];
	json_t *rules = NULL;

	*max = -1;
	if (store_policy_effective(c, &at, &rules, name, e))
		return -1;
	*max = policy_number(
	    json_object_get(json_object_get(json_object_get(rules, "jsonStore"), "data"), "maxSizeInBytes"));
	json_decref(rules);
	return 0;
}

int jsonstore_max_bytes(struct store_conn *c, const struct inventory *inv, int64_t *max_bytes, struct err *e)
{
	int64_t pmax;
	int rc = store_jsonstore_max_get(c, inv->rid, max_bytes, e);

	if (rc == 0 && *max_bytes < 0 && limits.json_store_bytes > 0)
		*max_bytes = (int64_t)limits.json_store_bytes;
	if (rc == 0 && (rc = policy_max(c, inv, &pmax, e)) == 0 && pmax >= 0 && (*max_bytes < 0 || pmax < *max_bytes))
		*max_bytes = pmax;
	return rc;
}

/* Concord's rules on an item of a JSON store. */
static int item_check(const char *path, const json_t *value, struct err *e)
{
	if (!value || json_is_null(value))
		return err_set(e, ERR_INVALID, "JSON Store entries cannot be null.");
	if (!json_is_object(value))
		return err_set(e, ERR_INVALID, "All JSON Store entries must be valid JSON objects. Got: %s",
			       json_is_array(value)	? "array"
			       : json_is_string(value)	? "string"
			       : json_is_boolean(value) ? "boolean"
							: "number");
	if (!path || !*path)
		return err_set(e, ERR_INVALID, "Item path cannot be empty or null");
	return 0;
}

int jsonstore_items_put(struct store_conn *c, const struct inventory *inv, const struct inventory_item_in *items,
			size_t n, size_t *n_created, size_t *bad, struct err *e)
{
	int64_t max;
	int rc;

	*bad = n;
	for (size_t i = 0; i < n; i++)
		if ((rc = item_check(items[i].path, items[i].value, e))) {
			*bad = i;
			return rc;
		}
	if ((rc = jsonstore_max_bytes(c, inv, &max, e)))
		return rc;
	return store_inventory_items_put(c, inv->rid, items, n, max, n_created, bad, e);
}

int jsonstore_item_put(struct store_conn *c, const struct inventory *inv, const char *path, const json_t *value,
		       bool *created, struct err *e)
{
	const struct inventory_item_in one = {.path = path, .value = value};
	size_t n_created = 0, bad;

	if (jsonstore_items_put(c, inv, &one, 1, &n_created, &bad, e))
		return -1;
	if (created)
		*created = n_created == 1;
	return 0;
}

int jsonstore_query_put(struct store_conn *c, const struct inventory *inv, const char *name, const char *text,
			const char **result, struct err *e)
{
	struct inventory_query old = {0};
	struct inv_query cq;
	char id[UUID_STR_LEN];
	bool created;
	int rc;

	if ((rc = name_check(name, "query", NAME_PLAIN, e)))
		return rc;
	if (!text || str_trim((struct str){text, strlen(text)}).len == 0)
		return err_set(e, ERR_INVALID, "Query should not be empty");
	rc = store_inventory_query_get(c, inv->id, name, &old, e);
	if (rc == 0 && strcmp(old.text, text) == 0) {
		inventory_query_cleanup(&old);
		*result = "ALREADY_EXISTS";
		return 0;
	}
	inventory_query_cleanup(&old);
	if (rc && rc != -ERR_NOT_FOUND)
		return rc;
	if ((rc = inv_query_compile(text, strlen(text), &cq, e)) || (rc = inv_query_check(c, &cq, e)) ||
	    (rc = store_inventory_query_put(c, inv->id, name, text, id, &created, e)))
		return rc;
	*result = created ? "CREATED" : "UPDATED";
	return 0;
}

int jsonstore_query_exec(struct store_conn *c, const struct inventory *inv, const char *name, const json_t *params,
			 json_t **rows, struct err *e)
{
	struct inventory_query q = {0};
	struct inv_query cq;
	char *filter = NULL;
	int rc;

	*rows = NULL;
	if (params && !json_is_null(params) && !json_is_object(params))
		return err_set(e, ERR_INVALID, "query parameters must be a JSON object");
	if ((rc = store_inventory_query_get(c, inv->id, name, &q, e)))
		return rc;
	if (params && json_is_object(params) && !(filter = json_dumps(params, JSON_COMPACT))) {
		rc = err_set(e, ERR_INTERNAL, "out of memory");
		goto out;
	}
	if ((rc = inv_query_compile(q.text, strlen(q.text), &cq, e)) == 0)
		rc = inv_query_run(c, inv, &cq, filter, rows, e);
out:
	free(filter);
	inventory_query_cleanup(&q);
	return rc;
}
