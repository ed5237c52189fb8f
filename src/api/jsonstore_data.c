/* /api/v1/org/{org}/jsonstore/{store}/item and …/query: the items of a JSON store (one
 * JSON object per path, the very items of the inventory it is) and its named queries,
 * which run in the inventory query sandbox (inventory/query.h). */
#include <stdlib.h>
#include <string.h>

#include "api/doc_schemas.h"
#include "api/inventories.h"
#include "api/jsonstores.h"
#include "api/query_gate.h"
#include "api/routes.h"
#include "base/datetime.h"
#include "base/jsonx.h"
#include "base/limits.h"
#include "base/metrics.h"
#include "base/str.h"
#include "inventory/jsonstore_policy.h"
#include "store/jsonstores.h"

static int item_list(struct api_call *c)
{
	struct jsonstore s;
	size_t limit, offset;
	const char *filter;
	json_t *paths = NULL;
	int rc;

	if ((rc = api_jsonstore_paging(c, &limit, &offset, &filter)) ||
	    (rc = api_jsonstore_open(c, ACCESS_READER, &s)) ||
	    (rc = store_jsonstore_paths(c->db, s.inv.rid, filter, offset, limit, &paths, &c->err)))
		return rc;
	return api_reply(c, paths);
}

/* The item as stored; a missing one is 204 with no body, as Concord answers a null. */
static int item_get(struct api_call *c)
{
	struct jsonstore s;
	int rc = api_jsonstore_open(c, ACCESS_READER, &s);

	return rc ? rc : api_inventory_item_reply(c, s.inv.rid, api_param(c, "item"));
}

static int item_put(struct api_call *c)
{
	struct jsonstore s;
	json_t *body = NULL;
	bool created;
	int rc;

	if ((rc = http_body_json(c->req, &body, &c->err)))
		return rc;
	if ((rc = api_jsonstore_open(c, ACCESS_WRITER, &s)) ||
	    (rc = jsonstore_policy_item(c->db, &c->who, &s.org, &s.inv, api_param(c, "item"), body, &c->err)) ||
	    (rc = jsonstore_item_put(c->db, &s.inv, api_param(c, "item"), body, &created, &c->err)))
		goto out;
	rc = api_reply_result(c, created ? "CREATED" : "UPDATED", NULL);
out:
	json_decref(body);
	return rc;
}

/* The store's bulk write: access, the policy's rules and each item's, one transaction. */
static int bulk_write(struct api_call *c, const struct inventory_item_in *items, size_t n, size_t *created, size_t *bad)
{
	struct jsonstore s;
	int rc;

	if ((rc = api_jsonstore_open(c, ACCESS_WRITER, &s)) ||
	    (rc = jsonstore_policy_items(c->db, &c->who, &s.org, &s.inv, items, n, bad, &c->err)))
		return rc;
	return jsonstore_items_put(c->db, &s.inv, items, n, created, bad, &c->err);
}

/* POST …/item: a JSON array of {path, data}, in one transaction. */
static int items_put(struct api_call *c)
{
	return api_inventory_bulk(c, bulk_write);
}

static int item_delete(struct api_call *c)
{
	struct jsonstore s;
	bool deleted;
	int rc;

	if ((rc = api_jsonstore_open(c, ACCESS_WRITER, &s)) ||
	    (rc = store_inventory_item_delete(c->db, s.inv.rid, api_param(c, "item"), &deleted, &c->err)))
		return rc;
	return api_reply_result(c, deleted ? "DELETED" : "NOT_FOUND", NULL);
}

static json_t *query_json(const struct inventory_query *q)
{
	return json_pack("{s:s,s:s,s:s,s:s}", "storeId", q->inventory_id, "id", q->id, "name", q->name, "text",
			 q->text);
}

static int query_list(struct api_call *c)
{
	struct jsonstore s;
	struct inventory_query *qs = NULL;
	size_t n = 0, limit, offset, seen = 0;
	const char *filter;
	json_t *list;
	int rc;

	if ((rc = api_jsonstore_paging(c, &limit, &offset, &filter)) ||
	    (rc = api_jsonstore_open(c, ACCESS_READER, &s)) ||
	    (rc = store_inventory_query_list(c->db, s.inv.id, &qs, &n, &c->err)))
		return rc;
	list = json_array();
	for (size_t i = 0; list && i < n && json_array_size(list) < limit; i++)
		if ((!filter || api_jsonstore_name_has(qs[i].name, filter)) && seen++ >= offset)
			json_array_append_new(list, query_json(&qs[i]));
	inventory_query_list_free(qs, n);
	return list ? api_reply(c, list) : api_fail(c, ERR_INTERNAL, "out of memory");
}

static int query_get(struct api_call *c)
{
	struct jsonstore s;
	struct inventory_query q = {0};
	int rc;

	if ((rc = api_jsonstore_open(c, ACCESS_READER, &s)) == 0 &&
	    (rc = store_inventory_query_get(c->db, s.inv.id, api_param(c, "q"), &q, &c->err)) == 0)
		rc = api_reply(c, query_json(&q));
	inventory_query_cleanup(&q);
	return rc;
}

/* POST …/query {"name", "text"}: Concord's create-or-update. */
static int query_put(struct api_call *c)
{
	struct jsonstore s;
	json_t *body = NULL;
	const char *name = NULL, *text = NULL, *result;
	int rc;

	if ((rc = api_body_object(c, &body)))
		return rc;
	if (jsonx_str(body, "name", true, &name, &c->err) || jsonx_str(body, "text", false, &text, &c->err)) {
		rc = -ERR_INVALID;
		goto out;
	}
	if ((rc = api_jsonstore_open(c, ACCESS_WRITER, &s)) ||
	    (rc = jsonstore_policy_query(c->db, &c->who, &s.org, &s.inv, name, text, &c->err)) ||
	    (rc = jsonstore_query_put(c->db, &s.inv, name, text, &result, &c->err)))
		goto out;
	api_audit_note(c, "queryName", name);
	rc = api_reply_result(c, result, NULL);
out:
	json_decref(body);
	return rc;
}

static int query_delete(struct api_call *c)
{
	struct jsonstore s;
	int rc;

	if ((rc = api_jsonstore_open(c, ACCESS_WRITER, &s)))
		return rc;
	rc = store_inventory_query_delete(c->db, s.inv.id, api_param(c, "q"), &c->err);
	if (rc == -ERR_NOT_FOUND) /* Concord: a validation error */
		return api_recode(c, ERR_INVALID);
	return rc ? rc : api_reply_result(c, "DELETED", NULL);
}

/* The parameters: no body or JSON null for none, else a JSON object. */
static int exec_params(struct api_call *c, json_t **params)
{
	struct buf *b = &c->req->body;

	*params = NULL;
	if (b->len == 0 || str_trim((struct str){b->data, b->len}).len == 0)
		return 0;
	if (c->req->content_type && !http_content_type_is(c->req, "application/json"))
		return api_fail(c, ERR_MEDIA_TYPE, "query parameters must be sent as application/json");
	if (!(*params = jsonx_parse(b->data, b->len, limits.json_depth, &c->err)))
		return -ERR_INVALID;
	return 0;
}

static int query_exec(struct api_call *c)
{
	struct jsonstore s;
	json_t *params = NULL, *rows = NULL;
	int rc;

	if ((rc = exec_params(c, &params)) || (rc = api_jsonstore_open(c, ACCESS_READER, &s)) ||
	    (rc = query_gate_enter(c->who.user.id, &c->err)))
		goto out;
	int64_t t0 = dt_mono_ns();
	rc = jsonstore_query_exec(c->db, &s.inv, api_param(c, "q"), params, &rows, &c->err);
	metrics_observe(MH_INVENTORY_QUERY, (dt_mono_ns() - t0) / 1000);
	query_gate_leave(c->who.user.id);
	c->req->heavy = true; /* rows, the sandbox's cache: give the memory back after */
	if (rc == 0)
		rc = api_reply(c, rows);
out:
	if (rc && c->err.code != ERR_INTERNAL && c->err.code != ERR_NOT_FOUND && c->err.code != ERR_FORBIDDEN)
		metrics_inc(MC_INVENTORY_QUERY_REFUSED, 1);
	json_decref(params);
	return rc;
}

#define STORE "/api/v1/org/{org}/jsonstore/{store}"
#define DOC_ITEM                                                                                                       \
	{                                                                                                              \
		"item", "string", "the item's path in the store (may contain '/')"                                     \
	}
#define DOC_Q                                                                                                          \
	{                                                                                                              \
		"q", "string", "the query's name"                                                                      \
	}
#define SCHEMA_JS_RESULT                                                                                               \
	"{'type':'object','required':['ok','result'],'properties':{'ok':{'type':'boolean'},'result':{'type':'string'," \
	"'enum':['CREATED','UPDATED','DELETED','NOT_FOUND','ALREADY_EXISTS']}}}"
#define SCHEMA_JS_QUERY                                                                                                \
	"{'type':'object','properties':{'storeId':" SCHEMA_UUID ",'id':" SCHEMA_UUID                                   \
	",'name':{'type':'string'},'text':{'type':'string'}}}"

static const struct api_doc doc_items = {
    .summary = "The paths of a JSON store's items",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_JSONSTORE, DOC_PAGING, DOC_FILTER, {0}},
    .response = SCHEMA_STRINGS,
    .errors = "400 403 404",
};
static const struct api_doc doc_item_get = {
    .summary = "An item of a JSON store (204 when there is none)",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_JSONSTORE, DOC_ITEM, {0}},
    .response = SCHEMA_OBJECT,
    .errors = "403 404",
};
static const struct api_doc doc_item_put = {
    .summary = "Create or replace an item (a JSON object) within the store's capacity",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_JSONSTORE, DOC_ITEM, {0}},
    .body = SCHEMA_OBJECT,
    .response = SCHEMA_JS_RESULT,
    .errors = "400 403 404 413 415",
    .audit = {"JSON_STORE_DATA", "CREATE_OR_UPDATE", NULL},
};
static const struct api_doc doc_items_put = {
    .summary = "Create or replace many items (JSON objects) at once, in one transaction (all or nothing) within "
	       "the store's capacity; at most --limit-inventory-bulk-items items (default 1000) and "
	       "--limit-http-body-bytes per request",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_JSONSTORE, {0}},
    .body = SCHEMA_ITEMS_BULK,
    .response = SCHEMA_ITEMS_BULK_RESULT,
    .errors = "400 403 404 413 415",
    .audit = {"JSON_STORE_DATA", "UPDATE", NULL},
};
static const struct api_doc doc_item_delete = {
    .summary = "Delete an item (result NOT_FOUND when there was none)",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_JSONSTORE, DOC_ITEM, {0}},
    .response = SCHEMA_JS_RESULT,
    .errors = "403 404",
    .audit = {"JSON_STORE_DATA", "DELETE", NULL},
};
static const struct api_doc doc_queries = {
    .summary = "The named queries of a JSON store",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_JSONSTORE, DOC_PAGING, DOC_FILTER, {0}},
    .response = "{'type':'array','items':" SCHEMA_JS_QUERY "}",
    .errors = "400 403 404",
};
static const struct api_doc doc_query_put = {
    .summary = "Create or update a named query (checked before it is stored)",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_JSONSTORE, {0}},
    .body = "{'type':'object','required':['name','text'],'properties':{'name':{'type':'string'},"
	    "'text':{'type':'string'}}}",
    .response = SCHEMA_JS_RESULT,
    .errors = "400 403 404 415",
    .audit = {"JSON_STORE_QUERY", "CREATE_OR_UPDATE", NULL},
};
static const struct api_doc doc_query_get = {
    .summary = "A named query of a JSON store",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_JSONSTORE, DOC_Q, {0}},
    .response = SCHEMA_JS_QUERY,
    .errors = "403 404",
};
static const struct api_doc doc_query_delete = {
    .summary = "Delete a named query (400 when there is none, as Concord)",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_JSONSTORE, DOC_Q, {0}},
    .response = SCHEMA_JS_RESULT,
    .errors = "400 403 404",
    .audit = {"JSON_STORE_QUERY", "DELETE", NULL},
};
static const struct api_doc doc_query_exec = {
    .summary = "Run a named query (read-only, with a time limit) with its parameters (a JSON object)",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_JSONSTORE, DOC_Q, {0}},
    .body = SCHEMA_OBJECT,
    .response = "{'type':'array','items':{}}",
    .errors = "400 403 404 415 503",
};

const struct api_route api_jsonstore_data_routes[] = {
    {"GET", STORE "/item", item_list, 0, &doc_items},
    {"POST", STORE "/item", items_put, 0, &doc_items_put},
    {"GET", STORE "/item/{item*}", item_get, 0, &doc_item_get},
    {"PUT", STORE "/item/{item*}", item_put, 0, &doc_item_put},
    {"POST", STORE "/item/{item*}", item_put, 0, &doc_item_put},
    {"DELETE", STORE "/item/{item*}", item_delete, 0, &doc_item_delete},
    {"GET", STORE "/query", query_list, 0, &doc_queries},
    {"POST", STORE "/query", query_put, 0, &doc_query_put},
    {"GET", STORE "/query/{q}", query_get, 0, &doc_query_get},
    {"DELETE", STORE "/query/{q}", query_delete, 0, &doc_query_delete},
    {"POST", STORE "/query/{q}/exec", query_exec, 0, &doc_query_exec},
    {0},
};
