/* /api/v1/org/{org}/inventory: inventories, their team access rules and their saved
 * queries (spec "Inventory queries (deprecated)", reference §7).  Access follows
 * auth/rbac.h: READER reads items and runs queries, WRITER changes items and queries,
 * OWNER deletes the inventory and changes its rules. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/doc_schemas.h"
#include "api/access_rules.h"
#include "api/inventories.h"
#include "api/query_gate.h"
#include "api/routes.h"
#include "auth/rbac.h"
#include "base/datetime.h"
#include "base/jsonx.h"
#include "base/limits.h"
#include "base/metrics.h"
#include "base/names.h"
#include "base/str.h"
#include "base/uuid.h"
#include "inventory/jsonstore_policy.h"
#include "inventory/query.h"
#include "store/users.h"

#define RESOURCE_TYPE "INVENTORY"

static struct rbac_resource resource_of(const struct inventory *inv)
{
	/* Concord's inventories are JSON stores: its refusals name them so */
	return (struct rbac_resource){.type = RESOURCE_TYPE,
				      .kind = "JSON store",
				      .id = inv->id,
				      .name = inv->name,
				      .org_id = inv->org_id,
				      .owner_id = inv->owner_id,
				      .is_public = strcmp(inv->visibility, "PUBLIC") == 0};
}

/* The org of the path; a PRIVATE org the caller cannot see is answered as a missing one
 * (rbac_org), so its inventories' names are not told apart from missing ones. */
static int load_org(struct api_call *c, struct org *org)
{
	int rc = store_org_find(c->db, api_param(c, "org"), org, &c->err);

	return rc ? rc : rbac_org(c->db, &c->who, org, RBAC_ORG_VIEW, &c->err);
}

/* Concord's 404 for an inventory (a JSON store) of that name that is not there. */
static int inventory_missing(struct api_call *c, const char *name)
{
	return api_fail(c, ERR_NOT_FOUND, "JSON store not found: %.128s", name);
}

int api_inventory_load(struct api_call *c, enum access_level need, struct org *org, struct inventory *inv)
{
	struct rbac_resource r;
	int rc;

	if ((rc = load_org(c, org)))
		return rc;
	if ((rc = store_inventory_find(c->db, org->id, api_param(c, "inv"), inv, &c->err)))
		return rc == -ERR_NOT_FOUND ? inventory_missing(c, api_param(c, "inv")) : rc;
	if (need == ACCESS_NONE)
		return 0;
	r = resource_of(inv);
	return rbac_check(c->db, &c->who, &r, need, &c->err);
}

static json_t *inventory_json(const struct inventory *inv, const struct org *org)
{
	json_t *v = json_pack("{s:s,s:s,s:s,s:s,s:s}", "id", inv->id, "name", inv->name, "orgId", org->id, "orgName",
			      org->name, "visibility", inv->visibility);

	if (v && inv->owner_id[0])
		json_object_set_new(v, "owner",
				    json_pack("{s:s,s:s}", "id", inv->owner_id, "username", inv->owner_name));
	return v;
}

/* ---- inventories ---- */

static int read_visibility(struct api_call *c, json_t *body, struct inventory *inv)
{
	const char *vis = NULL;

	if (jsonx_str(body, "visibility", false, &vis, &c->err))
		return -ERR_INVALID;
	if (!vis)
		return 0;
	if (strcmp(vis, "PUBLIC") != 0 && strcmp(vis, "PRIVATE") != 0)
		return api_fail(c, ERR_INVALID, "visibility must be PUBLIC or PRIVATE, got '%.32s'", vis);
	return str_fmt(inv->visibility, sizeof(inv->visibility), "%s", vis)
		   ? api_fail(c, ERR_INTERNAL, "visibility %s too long", vis)
		   : 0;
}

/* owner {id} or {username}: sets inv->owner_id; *changed when it differs. */
static int read_owner(struct api_call *c, json_t *body, struct inventory *inv, bool *changed)
{
	json_t *owner = NULL;
	const char *id = NULL, *username = NULL;
	struct user u;
	int rc;

	*changed = false;
	if (jsonx_obj(body, "owner", false, &owner, &c->err))
		return -ERR_INVALID;
	if (!owner)
		return 0;
	if (jsonx_str(owner, "id", false, &id, &c->err) || jsonx_str(owner, "username", false, &username, &c->err))
		return -ERR_INVALID;
	if (!id && !username)
		return 0;
	rc = id ? store_user_get(c->db, id, &u, &c->err) : store_user_find(c->db, username, NULL, &u, &c->err);
	if (rc == -ERR_NOT_FOUND || rc == -ERR_CONFLICT)
		return api_fail(c, ERR_INVALID, "User not found: %.128s", id ? id : username);
	if (rc)
		return rc;
	*changed = strcmp(u.id, inv->owner_id) != 0;
	if (*changed && (rc = rbac_owner_candidate(c->db, inv->org_id, &u, &c->err)))
		return rc;
	return str_fmt(inv->owner_id, sizeof(inv->owner_id), "%s", u.id)
		   ? api_fail(c, ERR_INTERNAL, "user id %s too long", u.id)
		   : 0;
}

const struct inventory_face inventory_face_inventory = {"inventory", "Inventory", "PUBLIC"};

static int update_inventory(struct api_call *c, const struct inventory_face *f, json_t *body, const struct org *org,
			    struct inventory *inv)
{
	/* Access is decided on the inventory as stored: read_owner overwrites inv->owner_id,
	 * and a resource pointing at it would let a WRITER name itself owner and pass the
	 * OWNER check as that new owner (issue 15 parts 10-11). */
	struct inventory stored = *inv;
	struct rbac_resource r = resource_of(&stored);
	const char *name = NULL;
	bool owner_changed;
	int rc;

	if ((rc = rbac_check(c->db, &c->who, &r, ACCESS_WRITER, &c->err)))
		return rc;
	if (jsonx_str(body, "name", false, &name, &c->err))
		return -ERR_INVALID;
	if (name && strcmp(name, inv->name) != 0) {
		if (name_check(name, f->noun, NAME_PLAIN, &c->err))
			return -ERR_INVALID;
		if (str_fmt(inv->name, sizeof(inv->name), "%s", name))
			return api_fail(c, ERR_INVALID, "%s name is longer than %zu characters", f->noun,
					sizeof(inv->name) - 1);
	}
	if ((rc = read_visibility(c, body, inv)) || (rc = read_owner(c, body, inv, &owner_changed)))
		return rc;
	if ((owner_changed && (rc = rbac_check(c->db, &c->who, &r, ACCESS_OWNER, &c->err))) ||
	    (rc = jsonstore_policy_store(c->db, &c->who, org, inv, true, &c->err)))
		return rc;
	rc = store_inventory_update(c->db, inv, &c->err);
	if (rc == -ERR_CONFLICT)
		return api_fail(c, ERR_CONFLICT, "%s already exists: %.128s", f->Noun, inv->name);
	api_audit_note(c, "inventoryName", inv->name);
	return rc;
}

static int create_inventory(struct api_call *c, const struct inventory_face *f, json_t *body, const struct org *org,
			    const char *name, struct inventory *inv)
{
	bool changed;
	int rc;

	*inv = (struct inventory){0};
	if ((rc = rbac_org(c->db, &c->who, org, RBAC_ORG_MEMBER, &c->err)))
		return rc;
	if (name_check(name, f->noun, NAME_PLAIN, &c->err))
		return -ERR_INVALID;
	uuid_v4(inv->id);
	if (str_fmt(inv->name, sizeof(inv->name), "%s", name))
		return api_fail(c, ERR_INVALID, "%s name is longer than %zu characters", f->noun,
				sizeof(inv->name) - 1);
	if (str_fmt(inv->org_id, sizeof(inv->org_id), "%s", org->id) ||
	    str_fmt(inv->owner_id, sizeof(inv->owner_id), "%s", c->who.user.id) ||
	    str_fmt(inv->visibility, sizeof(inv->visibility), "%s", f->visibility))
		return api_fail(c, ERR_INTERNAL, "an id is too long");
	if ((rc = read_visibility(c, body, inv)) || (rc = read_owner(c, body, inv, &changed)) ||
	    (rc = jsonstore_policy_store(c->db, &c->who, org, inv, false, &c->err)))
		return rc;
	rc = store_inventory_insert(c->db, inv, &c->err);
	if (rc == -ERR_CONFLICT)
		return api_fail(c, ERR_CONFLICT, "%s already exists: %.128s", f->Noun, name);
	api_audit_note(c, "inventoryName", inv->name);
	return rc;
}

static int find_by_id(struct api_call *c, const struct inventory_face *f, const struct org *org, const char *id,
		      struct inventory *inv)
{
	struct inventory *all = NULL;
	size_t n = 0;
	int rc = store_inventory_list(c->db, org->id, &all, &n, &c->err);

	for (size_t i = 0; rc == 0 && i < n; i++)
		if (strcmp(all[i].id, id) == 0) {
			*inv = all[i];
			free(all);
			return 0;
		}
	free(all);
	return rc ? rc : api_fail(c, ERR_NOT_FOUND, "%s not found: %.64s", f->Noun, id);
}

int api_inventory_put(struct api_call *c, const struct inventory_face *f, json_t *body, struct org *org,
		      struct inventory *inv, bool *created)
{
	const char *name = NULL, *id = NULL;
	int rc;

	*created = false;
	if ((rc = load_org(c, org)))
		return rc;
	if (jsonx_str(body, "id", false, &id, &c->err) || jsonx_str(body, "name", !id, &name, &c->err))
		return -ERR_INVALID;
	rc = id ? find_by_id(c, f, org, id, inv) : store_inventory_find(c->db, org->id, name, inv, &c->err);
	if (rc == 0)
		return update_inventory(c, f, body, org, inv);
	if (rc != -ERR_NOT_FOUND || id)
		return rc;
	*created = true;
	return create_inventory(c, f, body, org, name, inv);
}

/* POST /inventory: create, or update the inventory named (or identified by "id"). */
static int inventory_put(struct api_call *c)
{
	struct org org;
	struct inventory inv;
	json_t *body = NULL;
	bool created;
	int rc;

	if ((rc = api_body_object(c, &body)))
		return rc;
	if ((rc = api_inventory_put(c, &inventory_face_inventory, body, &org, &inv, &created)) == 0)
		rc = api_reply_result(c, created ? "CREATED" : "UPDATED", inv.id);
	json_decref(body);
	return rc;
}

static int inventory_list(struct api_call *c)
{
	struct org org;
	struct inventory *all = NULL;
	size_t n = 0;
	json_t *list;
	int rc;

	if ((rc = load_org(c, &org)) || (rc = store_inventory_list(c->db, org.id, &all, &n, &c->err)))
		return rc;
	if (!(list = json_array())) {
		free(all);
		return api_fail(c, ERR_INTERNAL, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		struct rbac_resource r = resource_of(&all[i]);
		struct err denied;
		if (rbac_check(c->db, &c->who, &r, ACCESS_READER, &denied) == 0)
			json_array_append_new(list, inventory_json(&all[i], &org));
	}
	free(all);
	return api_reply(c, list);
}

static int inventory_delete(struct api_call *c)
{
	struct org org;
	struct inventory inv;
	int rc;

	if ((rc = api_inventory_load(c, ACCESS_OWNER, &org, &inv)) ||
	    (rc = store_inventory_delete(c->db, &inv, &c->err)))
		return rc;
	return api_reply_result(c, "DELETED", NULL);
}

/* ---- access rules (api/access_rules.h checks access and does the rest) ---- */

static int access_call(struct api_call *c, int (*fn)(struct api_call *, const struct rbac_resource *))
{
	struct org org;
	struct inventory inv;
	struct rbac_resource r;
	int rc;

	if ((rc = api_inventory_load(c, ACCESS_NONE, &org, &inv)))
		return rc;
	r = resource_of(&inv);
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

/* ---- queries ---- */

static json_t *query_json(const struct inventory_query *q)
{
	return json_pack("{s:s,s:s,s:s,s:s}", "id", q->id, "name", q->name, "inventoryId", q->inventory_id, "text",
			 q->text);
}

static int query_list(struct api_call *c)
{
	struct org org;
	struct inventory inv;
	struct inventory_query *qs = NULL;
	size_t n = 0;
	json_t *list;
	int rc;

	if ((rc = api_inventory_load(c, ACCESS_READER, &org, &inv)) ||
	    (rc = store_inventory_query_list(c->db, inv.id, &qs, &n, &c->err)))
		return rc;
	list = json_array();
	for (size_t i = 0; list && i < n; i++)
		json_array_append_new(list, query_json(&qs[i]));
	inventory_query_list_free(qs, n);
	return list ? api_reply(c, list) : api_fail(c, ERR_INTERNAL, "out of memory");
}

/* What api_inventory_load (READER) and store_inventory_query_get do, with the same answers
 * in the same order (a hidden org before a missing inventory, a 403 before a missing query),
 * from one statement: an exec's lookups took a third of its time for a selective filter. */
static int load_query(struct api_call *c, struct inventory_lookup *l)
{
	struct rbac_resource r;
	int rc = store_inventory_lookup(c->db, api_param(c, "org"), api_param(c, "inv"), api_param(c, "q"), l,
					&c->err);

	if (rc || (rc = rbac_org(c->db, &c->who, &l->org, RBAC_ORG_VIEW, &c->err)))
		return rc;
	if (l->found < 2)
		return inventory_missing(c, l->inv_name);
	r = resource_of(&l->inv);
	if ((rc = rbac_check(c->db, &c->who, &r, ACCESS_READER, &c->err)))
		return rc;
	return l->found < 3 ? store_inventory_lookup_missing(l, &c->err) : 0;
}

static int query_get(struct api_call *c)
{
	struct inventory_lookup l;
	int rc = load_query(c, &l);

	if (rc == 0)
		rc = api_reply(c, query_json(&l.q));
	inventory_query_cleanup(&l.q);
	return rc;
}

/* The query text of a create request: a text body as is; a JSON body {"text": …} or a JSON
 * string; a JSON-typed body that is not JSON is taken as is (Concord uses the body
 * verbatim whatever its type). */
static int query_text(struct api_call *c, char **out)
{
	struct buf *b = &c->req->body;
	const char *text = NULL;
	json_t *v = NULL;

	*out = NULL;
	if (http_content_type_is(c->req, "application/json") &&
	    (v = json_loadb(b->data ? b->data : "", b->len, JSON_DECODE_ANY, NULL))) {
		if (json_is_object(v) && jsonx_str(v, "text", true, &text, &c->err)) {
			json_decref(v);
			return -ERR_INVALID;
		}
		if (json_is_string(v))
			text = json_string_value(v);
		if (!text) {
			json_decref(v);
			return api_fail(c, ERR_INVALID, "a JSON body must be {\"text\": \"<query>\"}");
		}
		*out = strdup(text);
		json_decref(v);
	} else if (c->req->content_type && !http_content_type_is(c->req, "application/json") &&
		   strncasecmp(c->req->content_type, "text/", 5) != 0) {
		return api_fail(c, ERR_MEDIA_TYPE, "query text must be sent as text/plain or application/json");
	} else if (b->len && memchr(b->data, '\0', b->len)) {
		return api_fail(c, ERR_INVALID, "query text must not contain NUL bytes");
	} else {
		*out = strndup(b->data ? b->data : "", b->len);
	}
	return *out ? 0 : api_fail(c, ERR_INTERNAL, "out of memory");
}

static int query_put(struct api_call *c)
{
	const char *name = api_param(c, "q");
	struct org org;
	struct inventory inv;
	char id[UUID_STR_LEN], *text = NULL;
	struct inv_query cq;
	bool created;
	int rc;

	if ((rc = api_inventory_load(c, ACCESS_WRITER, &org, &inv)))
		return rc;
	if (name_check(name, "query", NAME_PLAIN, &c->err))
		return -ERR_INVALID;
	if ((rc = query_text(c, &text)))
		return rc;
	if ((rc = inv_query_compile(text, strlen(text), &cq, &c->err)) || (rc = inv_query_check(c->db, &cq, &c->err)) ||
	    (rc = jsonstore_policy_query(c->db, &c->who, &org, &inv, name, text, &c->err)) ||
	    (rc = store_inventory_query_put(c->db, inv.id, name, text, id, &created, &c->err)))
		goto out;
	rc = api_reply_result(c, created ? "CREATED" : "UPDATED", id);
out:
	free(text);
	return rc;
}

static int query_delete(struct api_call *c)
{
	struct org org;
	struct inventory inv;
	int rc;

	if ((rc = api_inventory_load(c, ACCESS_WRITER, &org, &inv)) ||
	    (rc = store_inventory_query_delete(c->db, inv.id, api_param(c, "q"), &c->err)))
		return rc;
	return api_reply_result(c, "DELETED", NULL);
}

/* The containment filter: no body (or JSON null) means none; otherwise a JSON object. */
static int exec_filter(struct api_call *c, char **filter)
{
	struct buf *b = &c->req->body;
	json_t *v;

	*filter = NULL;
	if (b->len == 0 || str_trim((struct str){b->data, b->len}).len == 0)
		return 0;
	if (c->req->content_type && !http_content_type_is(c->req, "application/json"))
		return api_fail(c, ERR_MEDIA_TYPE, "the filter must be sent as application/json");
	if (!(v = jsonx_parse(b->data, b->len, limits.json_depth, &c->err)))
		return -ERR_INVALID;
	if (json_is_null(v)) {
		json_decref(v);
		return 0;
	}
	if (!json_is_object(v)) {
		json_decref(v);
		return api_fail(c, ERR_INVALID, "the filter must be a JSON object");
	}
	*filter = json_dumps(v, JSON_COMPACT);
	json_decref(v);
	return *filter ? 0 : api_fail(c, ERR_INTERNAL, "out of memory");
}

static int query_exec(struct api_call *c)
{
	struct inventory_lookup l;
	struct inv_query cq;
	char *filter = NULL;
	struct buf rows;
	int rc;

	buf_init(&rows, 0);
	if ((rc = load_query(c, &l)))
		goto out;
	if ((rc = exec_filter(c, &filter)) == 0 &&
	    (rc = inv_query_compile(l.q.text, strlen(l.q.text), &cq, &c->err)) == 0 &&
	    (rc = query_gate_enter(c->who.user.id, &c->err)) == 0) {
		int64_t t0 = dt_mono_ns();

		rc = inv_query_run_text(c->db, &l.inv, &cq, filter, &rows, &c->err);
		metrics_observe(MH_INVENTORY_QUERY, (dt_mono_ns() - t0) / 1000);
		query_gate_leave(c->who.user.id);
		c->req->heavy = true; /* rows, the sandbox's cache: give the memory back after */
		if (rc == 0) { /* the rows' JSON text as the executor printed it */
			size_t len;
			char *body = buf_detach(&rows, &len);
			http_resp_take(c->resp, 200, "application/json", body, len);
		}
	}
	if (rc && c->err.code != ERR_INTERNAL) /* the filter, the gate or the sandbox said no */
		metrics_inc(MC_INVENTORY_QUERY_REFUSED, 1);
	free(filter);
out:
	buf_cleanup(&rows);
	inventory_query_cleanup(&l.q);
	return rc;
}

#define INV "/api/v1/org/{org}/inventory/{inv}"

#define DOC_INV                                                                                                        \
	{                                                                                                              \
		"inv", "string", "the inventory's name"                                                                \
	}
#define DOC_PATH                                                                                                       \
	{                                                                                                              \
		"path", "string", "the item's path in the inventory"                                                   \
	}
#define DOC_Q                                                                                                          \
	{                                                                                                              \
		"q", "string", "the query's name"                                                                      \
	}
#define SCHEMA_INVENTORY                                                                                               \
	"{'type':'object','properties':{'id':" SCHEMA_UUID ",'name':{'type':'string'},'orgId':" SCHEMA_UUID            \
	",'orgName':{'type':'string'},'visibility':{'enum':['PUBLIC','PRIVATE']},'owner':" SCHEMA_OWNER "}}"
#define SCHEMA_QUERY                                                                                                   \
	"{'type':'object','properties':{'id':" SCHEMA_UUID ",'name':{'type':'string'},'inventoryId':" SCHEMA_UUID      \
	",'text':{'type':'string'}}}"

static const struct api_doc doc_put = {
    .summary = "Create an inventory or update one (by id or name)",
    .params = (const struct api_param_doc[]){DOC_ORG, {0}},
    .body = "{'type':'object','properties':{'id':" SCHEMA_UUID ",'name':{'type':'string'},"
	    "'visibility':{'enum':['PUBLIC','PRIVATE']},'owner':" SCHEMA_OWNER "}}",
    .response = SCHEMA_RESULT,
    .errors = "400 403 404 409 415",
    .audit = {"INVENTORY", "CREATE_OR_UPDATE", NULL},
};
static const struct api_doc doc_list = {
    .summary = "The inventories of an organization the caller can see",
    .params = (const struct api_param_doc[]){DOC_ORG, {0}},
    .response = "{'type':'array','items':" SCHEMA_INVENTORY "}",
    .errors = "404",
};
static const struct api_doc doc_queries = {
    .summary = "The queries of an inventory",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_INV, {0}},
    .response = "{'type':'array','items':" SCHEMA_QUERY "}",
    .errors = "403 404",
};
static const struct api_doc doc_delete = {
    .summary = "Delete an inventory with its data and queries",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_INV, {0}},
    .response = SCHEMA_RESULT,
    .errors = "403 404",
    .audit = {"INVENTORY", "DELETE", NULL},
};
DOC_ACCESS_RULES("INVENTORY", "an inventory", DOC_ORG, DOC_INV);
static const struct api_doc doc_data_list = {
    .summary = "Every item of an inventory",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_INV, {0}},
    .response = "{'type':'array','items':{}}",
    .errors = "403 404",
};
static const struct api_doc doc_data_get = {
    .summary = "The item at a path, or the items under it",
    .params =
	(const struct api_param_doc[]){
	    DOC_ORG, DOC_INV, DOC_PATH, {"singleItem", "boolean", "the item itself instead of a list"}, {0}},
    .response = "{}",
    .errors = "400 403 404",
};
static const struct api_doc doc_data_put = {
    .summary = "Store an item at a path",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_INV, DOC_PATH, {0}},
    .body = "{}",
    .response = "{}",
    .errors = "400 403 404 413 415",
    .audit = {"INVENTORY", "UPDATE", "data"},
};
static const struct api_doc doc_data_bulk = {
    .summary = "Store many items at once, in one transaction (all or nothing); at most "
	       "--limit-inventory-bulk-items items (default 1000) and --limit-http-body-bytes per request",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_INV, {0}},
    .body = SCHEMA_ITEMS_BULK,
    .response = SCHEMA_ITEMS_BULK_RESULT,
    .errors = "400 403 404 413 415",
    .audit = {"INVENTORY", "UPDATE", "data"},
};
static const struct api_doc doc_data_delete = {
    .summary = "Delete the item at a path",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_INV, DOC_PATH, {0}},
    .response = SCHEMA_RESULT,
    .errors = "403 404",
    .audit = {"INVENTORY", "UPDATE", "data"},
};
static const struct api_doc doc_query_get = {
    .summary = "A query of an inventory",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_INV, DOC_Q, {0}},
    .response = SCHEMA_QUERY,
    .errors = "403 404",
};
static const struct api_doc doc_query_put = {
    .summary = "Create or replace a query (its SQL text, checked before it is stored)",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_INV, DOC_Q, {0}},
    .body =
	"{'oneOf':[{'type':'string'},{'type':'object','required':['text'],'properties':{'text':{'type':'string'}}}]}",
    .body_type = "text/plain application/json",
    .response = SCHEMA_RESULT,
    .errors = "400 403 404 415",
    .audit = {"INVENTORY_QUERY", "CREATE_OR_UPDATE", NULL},
};
static const struct api_doc doc_query_delete = {
    .summary = "Delete a query",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_INV, DOC_Q, {0}},
    .response = SCHEMA_RESULT,
    .errors = "403 404",
    .audit = {"INVENTORY_QUERY", "DELETE", NULL},
};
static const struct api_doc doc_query_exec = {
    .summary = "Run a query (read-only, with a time limit) with an optional JSON filter",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_INV, DOC_Q, {0}},
    .body = SCHEMA_OBJECT,
    .response = "{'type':'array','items':{}}",
    .errors = "400 403 404 415 503",
};

const struct api_route api_inventory_routes[] = {
    {"POST", "/api/v1/org/{org}/inventory", inventory_put, 0, &doc_put},
    {"GET", "/api/v1/org/{org}/inventory", inventory_list, 0, &doc_list},
    {"GET", INV, query_list, 0, &doc_queries},
    {"DELETE", INV, inventory_delete, 0, &doc_delete},
    {"GET", INV "/access", access_list, 0, &doc_access_get},
    {"POST", INV "/access", access_put, 0, &doc_access_post},
    {"POST", INV "/access/bulk", access_bulk, 0, &doc_access_bulk},
    {"GET", INV "/data", api_inventory_data_list, 0, &doc_data_list},
    {"POST", INV "/data", api_inventory_data_bulk, 0, &doc_data_bulk},
    {"GET", INV "/data/{path*}", api_inventory_data_get, 0, &doc_data_get},
    {"POST", INV "/data/{path*}", api_inventory_data_put, 0, &doc_data_put},
    {"DELETE", INV "/data/{path*}", api_inventory_data_delete, 0, &doc_data_delete},
    {"GET", INV "/query", query_list, 0, &doc_queries},
    {"GET", INV "/query/{q}", query_get, 0, &doc_query_get},
    {"POST", INV "/query/{q}", query_put, 0, &doc_query_put},
    {"DELETE", INV "/query/{q}", query_delete, 0, &doc_query_delete},
    {"POST", INV "/query/{q}/exec", query_exec, 0, &doc_query_exec},
    {0},
};
