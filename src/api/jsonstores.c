/* /api/v1/org/{org}/jsonstore: JSON stores, their capacity and team access rules
 * (Concord's api/json-store.md).  A JSON store is an inventory (api/inventories.h, one
 * storage with two faces); the rules shared with the jsonStore task are
 * inventory/jsonstore.h.  Items and queries: api/jsonstore_data.c. */
#include <stdlib.h>
#include <string.h>

#include "api/access_rules.h"
#include "api/doc_schemas.h"
#include "api/inventories.h"
#include "api/jsonstores.h"
#include "api/routes.h"
#include "auth/rbac.h"
#include "base/jsonx.h"
#include "base/limits.h"
#include "base/names.h"
#include "inventory/jsonstore.h"
#include "store/jsonstores.h"

static const struct inventory_face face = {"JSON store", "JSON store", "PRIVATE"};

int api_jsonstore_open(struct api_call *c, enum access_level need, struct jsonstore *s)
{
	return jsonstore_open(c->db, &c->who, api_param(c, "org"), api_param(c, "store"), need, s, &c->err);
}

/* A store as Concord shows it, plus yourAccess: the level the caller holds on it (as on
 * secrets and projects), so that the console offers only what the user may do. */
static json_t *store_json(struct api_call *c, const struct inventory *inv, const struct org *org)
{
	json_t *v = json_pack("{s:s,s:s,s:s,s:s,s:s}", "orgId", org->id, "orgName", org->name, "id", inv->id, "name",
			      inv->name, "visibility", inv->visibility);
	struct rbac_resource res = jsonstore_resource(inv);
	enum access_level level;
	int64_t max;
	struct err e;

	if (v && inv->owner_id[0])
		json_object_set_new(v, "owner",
				    json_pack("{s:s,s:s}", "id", inv->owner_id, "username", inv->owner_name));
	if (v && store_jsonstore_max_get(c->db, inv->rid, &max, &e) == 0 && max >= 0)
		json_object_set_new(v, "maxDataSize", json_integer(max));
	if (v && rbac_level(c->db, &c->who, &res, &level, &e) == 0)
		json_object_set_new(v, "yourAccess", json_string(access_level_name(level)));
	return v;
}

/* maxDataSize of a create/update body: absent leaves *set false; null or -1 clears it. */
static int read_max(struct api_call *c, json_t *body, bool *set, int64_t *max)
{
	json_t *v = json_object_get(body, "maxDataSize");

	*set = v != NULL;
	*max = -1;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_integer(v) || json_integer_value(v) < -1)
		return api_fail(c, ERR_INVALID, "maxDataSize must be a number of bytes (or -1 or null: the default)");
	*max = json_integer_value(v);
	/* The server's default is the administrator's quota: only an administrator lifts it. */
	if (limits.json_store_bytes > 0 && *max > (int64_t)limits.json_store_bytes && !principal_is_admin(&c->who))
		return api_fail(
		    c, ERR_FORBIDDEN,
		    "maxDataSize %lld is above the server's limit of %zu bytes (--json-store-max-data-size): "
		    "only an administrator may raise it",
		    (long long)*max, limits.json_store_bytes);
	return 0;
}

/* POST /jsonstore: create, or update the store named (or identified by "id"). */
static int store_put(struct api_call *c)
{
	struct org org;
	struct inventory inv;
	json_t *body = NULL;
	bool created, max_set;
	int64_t max;
	int rc;

	if ((rc = api_body_object(c, &body)) || (rc = read_max(c, body, &max_set, &max)))
		goto out;
	if ((rc = api_inventory_put(c, &face, body, &org, &inv, &created)))
		goto out;
	if (max_set && (rc = store_jsonstore_max_set(c->db, inv.rid, max, &c->err)))
		goto out;
	rc = api_reply_result(c, created ? "CREATED" : "UPDATED", inv.id);
out:
	json_decref(body);
	return rc;
}

bool api_jsonstore_name_has(const char *name, const char *filter)
{
	size_t n = strlen(filter);

	if (!n)
		return true;
	for (const char *p = name; *p; p++)
		if (strncasecmp(p, filter, n) == 0)
			return true;
	return false;
}

/* Concord's lists of JSON stores, items and queries: limit 30 unless given, and filter. */
int api_jsonstore_paging(struct api_call *c, size_t *limit, size_t *offset, const char **filter)
{
	int rc = api_paging(c, limit, offset);

	if (rc == 0 && !http_query(c->req, "limit"))
		*limit = 30;
	*filter = http_query(c->req, "filter");
	if (*filter && !**filter)
		*filter = NULL;
	return rc;
}

static int store_list(struct api_call *c)
{
	struct org org;
	struct inventory *all = NULL;
	size_t n = 0, limit, offset, seen = 0;
	const char *filter;
	json_t *list = NULL;
	int rc;

	if ((rc = api_jsonstore_paging(c, &limit, &offset, &filter)) ||
	    (rc = store_org_find(c->db, api_param(c, "org"), &org, &c->err)) ||
	    (rc = rbac_org(c->db, &c->who, &org, RBAC_ORG_VIEW, &c->err)) ||
	    (rc = store_inventory_list(c->db, org.id, &all, &n, &c->err)))
		goto out;
	if (!(list = json_array())) {
		rc = api_fail(c, ERR_INTERNAL, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n && json_array_size(list) < limit; i++) {
		struct rbac_resource r = jsonstore_resource(&all[i]);
		struct err denied;
		if ((filter && !api_jsonstore_name_has(all[i].name, filter)) ||
		    rbac_check(c->db, &c->who, &r, ACCESS_READER, &denied) != 0 || seen++ < offset)
			continue;
		json_array_append_new(list, store_json(c, &all[i], &org));
	}
	rc = api_reply(c, list);
	list = NULL;
out:
	json_decref(list);
	free(all);
	return rc;
}

static int store_get(struct api_call *c)
{
	struct jsonstore s;
	int rc = api_jsonstore_open(c, ACCESS_READER, &s);

	return rc ? rc : api_reply(c, store_json(c, &s.inv, &s.org));
}

static int store_delete(struct api_call *c)
{
	struct jsonstore s;
	int rc;

	if ((rc = api_jsonstore_open(c, ACCESS_OWNER, &s)) || (rc = store_inventory_delete(c->db, &s.inv, &c->err)))
		return rc;
	api_audit_note(c, "jsonStoreName", s.inv.name);
	return api_reply_result(c, "DELETED", NULL);
}

static int store_capacity(struct api_call *c)
{
	struct jsonstore s;
	int64_t size, max;
	int rc;

	if ((rc = api_jsonstore_open(c, ACCESS_READER, &s)) ||
	    (rc = store_jsonstore_capacity(c->db, s.inv.rid, &size, &max, &c->err)) ||
	    (rc = jsonstore_max_bytes(c->db, &s.inv, &max, &c->err)))
		return rc;
	return api_reply(c, json_pack("{s:I,s:I}", "size", (json_int_t)size, "maxSize", (json_int_t)max));
}

static int access_call(struct api_call *c, int (*fn)(struct api_call *, const struct rbac_resource *))
{
	struct jsonstore s;
	struct rbac_resource r;
	int rc;

	if ((rc = api_jsonstore_open(c, ACCESS_NONE, &s)))
		return rc;
	r = jsonstore_resource(&s.inv);
	return fn(c, &r);
}

static int access_list(struct api_call *c)
{
	return access_call(c, access_rules_list);
}

static int access_put(struct api_call *c)
{
	return access_call(c, access_rules_update);
}

static int access_bulk(struct api_call *c)
{
	return access_call(c, access_rules_replace);
}

#define STORE "/api/v1/org/{org}/jsonstore/{store}"

#define SCHEMA_STORE                                                                                                   \
	"{'type':'object','properties':{'orgId':" SCHEMA_UUID ",'orgName':{'type':'string'},'id':" SCHEMA_UUID         \
	",'name':{'type':'string'},'visibility':{'enum':['PUBLIC','PRIVATE']},'owner':" SCHEMA_OWNER                   \
	",'maxDataSize':{'type':'integer'},'yourAccess':{'enum':['NONE','READER','WRITER','OWNER']}}}"

static const struct api_doc doc_put = {
    .summary = "Create a JSON store or update one (by id or name)",
    .params = (const struct api_param_doc[]){DOC_ORG, {0}},
    .body = "{'type':'object','properties':{'id':" SCHEMA_UUID ",'name':{'type':'string'},"
	    "'visibility':{'enum':['PUBLIC','PRIVATE']},'owner':" SCHEMA_OWNER ",'maxDataSize':{'type':'integer'}}}",
    .response = SCHEMA_RESULT,
    .errors = "400 403 404 409 415",
    .audit = {"JSON_STORE", "CREATE_OR_UPDATE", NULL},
};
static const struct api_doc doc_list = {
    .summary = "The JSON stores of an organization the caller can see",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_PAGING, DOC_FILTER, {0}},
    .response = "{'type':'array','items':" SCHEMA_STORE "}",
    .errors = "400 404",
};
static const struct api_doc doc_get = {
    .summary = "A JSON store",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_JSONSTORE, {0}},
    .response = SCHEMA_STORE,
    .errors = "403 404",
};
static const struct api_doc doc_delete = {
    .summary = "Delete a JSON store with its items and queries",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_JSONSTORE, {0}},
    .response = SCHEMA_RESULT,
    .errors = "403 404",
    .audit = {"JSON_STORE", "DELETE", NULL},
};
static const struct api_doc doc_capacity = {
    .summary = "The size of a JSON store's items and its maximum (-1: unbounded)",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_JSONSTORE, {0}},
    .response = "{'type':'object','properties':{'size':{'type':'integer'},'maxSize':{'type':'integer'}}}",
    .errors = "403 404",
};
DOC_ACCESS_RULES("JSON_STORE", "a JSON store", DOC_ORG, DOC_JSONSTORE);

const struct api_route api_jsonstore_routes[] = {
    {"POST", "/api/v1/org/{org}/jsonstore", store_put, 0, &doc_put},
    {"GET", "/api/v1/org/{org}/jsonstore", store_list, 0, &doc_list},
    {"GET", STORE, store_get, 0, &doc_get},
    {"DELETE", STORE, store_delete, 0, &doc_delete},
    {"GET", STORE "/capacity", store_capacity, 0, &doc_capacity},
    {"GET", STORE "/access", access_list, 0, &doc_access_get},
    {"POST", STORE "/access", access_put, 0, &doc_access_post},
    {"POST", STORE "/access/bulk", access_bulk, 0, &doc_access_bulk},
    {0},
};
