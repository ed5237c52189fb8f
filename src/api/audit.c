/* The audit log: the dispatcher's hook that records a successful change (routes.h,
 * api_audit_record) and GET /api/v1/audit for admins. */
#include <string.h>

#include "api/doc_schemas.h"
#include "api/routes.h"
#include "auth/rbac.h"
#include "base/datetime.h"
#include "base/jsonx.h"
#include "base/log.h"
#include "store/audit.h"

#define AUDIT_OBJECTS_TEXT                                                                                             \
	"USER, API_KEY, ORGANIZATION, TEAM, PROJECT, REPOSITORY, SECRET, INVENTORY, INVENTORY_QUERY, JSON_STORE, "     \
	"JSON_STORE_DATA, JSON_STORE_QUERY, PROCESS, EXTERNAL_EVENT"
#define AUDIT_ACTIONS_TEXT "CREATE, UPDATE, DELETE, ACCESS, START, STOP, RESUME, RESTORE, RESTART"

#define SCHEMA_AUDIT_ENTRY                                                                                             \
	"{'type':'object','required':['entryDate','action','object','details'],'properties':{"                         \
	"'entryDate':" SCHEMA_DATE ",'action':{'type':'string'},'object':{'type':'string'},"                           \
	"'user':{'type':'object','properties':{'id':{'type':'string'},'username':{'type':'string'}}},"                 \
	"'details':{'type':'object','description':'ids and names of what changed (never a secret value)',"             \
	"'properties':{'actionSource':{'type':'object','properties':{"                                                 \
	"'type':{'enum':['API_REQUEST','PROCESS']},'instanceId':{'type':'string'},"                           \
	"'apiKeyId':{'type':'string'},'address':{'type':'string'}}}}}}}"

static const char *const objects[] = {
    "USER",   "API_KEY",   "ORGANIZATION",    "TEAM",	 "PROJECT",	   "REPOSITORY",
    "SECRET", "INVENTORY", "INVENTORY_QUERY", "JSON_STORE", "JSON_STORE_DATA", "JSON_STORE_QUERY",
    "PROCESS", "EXTERNAL_EVENT", "POLICY", NULL};
static const char *const actions[] = {"CREATE", "UPDATE", "DELETE",  "ACCESS", "START",
				      "STOP",	"RESUME", "RESTORE", "RESTART", NULL};

/* The details key of an object's id ("id" in a path or an answer). */
static const char *id_key(const char *object)
{
	static const char *const keys[][2] = {
	    {"USER", "userId"},	       {"API_KEY", "apiKeyId"},	     {"ORGANIZATION", "orgId"},
	    {"TEAM", "teamId"},	       {"PROJECT", "projectId"},     {"REPOSITORY", "repositoryId"},
	    {"SECRET", "secretId"},    {"INVENTORY", "inventoryId"}, {"INVENTORY_QUERY", "queryId"},
	    {"PROCESS", "instanceId"}, {"JSON_STORE", "jsonStoreId"},
	};

	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if (strcmp(keys[i][0], object) == 0)
			return keys[i][1];
	return "id";
}

/* The details key of a path parameter, Concord's names where it has them. */
static const char *param_key(const char *object, const char *param)
{
	static const char *const keys[][2] = {
	    {"org", "orgName"},		{"project", "projectName"}, {"team", "teamName"},
	    {"repo", "repositoryName"}, {"inv", "inventoryName"},   {"q", "queryName"},
	    {"store", "jsonStoreName"}, {"item", "itemPath"},
	};

	if (strcmp(param, "id") == 0)
		return id_key(object);
	if (strcmp(param, "name") == 0)
		return strcmp(object, "SECRET") == 0 ? "secretName" : "formName";
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if (strcmp(keys[i][0], param) == 0)
			return keys[i][1];
	return param;
}

void api_audit_note(struct api_call *c, const char *key, const char *value)
{
	if (!value)
		return;
	if (!c->audit)
		c->audit = json_object();
	if (c->audit)
		json_object_set_new(c->audit, key, json_string(value));
}

void api_audit_note_count(struct api_call *c, const char *key, size_t n)
{
	if (!c->audit)
		c->audit = json_object();
	if (c->audit)
		json_object_set_new(c->audit, key, json_integer((json_int_t)n));
}

/* The answer's ids ("id", "instanceId", "instanceIds") into details and, for a
 * create-or-update, which it was into *action.  False for an answer that says it did
 * nothing ({"ok":false}: a form whose values were refused). */
static bool from_answer(struct api_call *c, const struct api_audit_doc *a, json_t *details, const char **action)
{
	json_t *v = NULL, *x;
	struct err ignored;
	bool done = true;

	*action = strcmp(a->action, "CREATE_OR_UPDATE") == 0 ? "UPDATE" : a->action;
	if (c->resp->body && strncmp(c->resp->content_type, "application/json", 16) == 0)
		v = jsonx_parse(c->resp->body, c->resp->len, JSONX_DEPTH_JANSSON, &ignored);
	if (!json_is_object(v)) {
		json_decref(v);
		return true;
	}
	if (json_is_string(x = json_object_get(v, "id")) && !json_object_get(details, id_key(a->object)))
		json_object_set(details, id_key(a->object), x);
	if (json_is_string(x = json_object_get(v, "instanceId")) && !json_object_get(details, "instanceId"))
		json_object_set(details, "instanceId", x);
	if (json_is_array(x = json_object_get(v, "instanceIds"))) /* an event's processes */
		json_object_set(details, "instanceIds", x);
	x = json_object_get(v, "result");
	if (strcmp(a->action, "CREATE_OR_UPDATE") == 0 && json_is_string(x) &&
	    strcmp(json_string_value(x), "CREATED") == 0)
		*action = "CREATE";
	done = !json_is_false(json_object_get(v, "ok"));
	json_decref(v);
	return done;
}

/* The details every entry of route starts from: its path parameters, the part it changed
 * and what the handler noted (NEW object, NULL when out of memory). */
static json_t *base_details(struct api_call *c, const struct api_audit_doc *a)
{
	json_t *details = json_object();

	if (!details)
		return NULL;
	for (size_t i = 0; i < c->req->n_params; i++)
		json_object_set_new(details, param_key(a->object, c->req->param_names[i]),
				    json_string(c->req->param_values[i]));
	if (a->part)
		json_object_set_new(details, "changed", json_string(a->part));
	if (c->audit)
		json_object_update(details, c->audit);
	return details;
}

/* Who made the change, and from where. */
static void who(struct api_call *c, struct audit_entry *entry)
{
	entry->user_id = c->who.user.id[0] ? c->who.user.id : NULL;
	entry->username = c->who.user.username[0] ? c->who.user.username : NULL;
	entry->source = c->who.method == AUTH_SESSION ? "PROCESS" : "API_REQUEST";
	entry->api_key_id = c->who.method == AUTH_APIKEY ? c->who.apikey_id : NULL;
	entry->instance_id = c->who.method == AUTH_SESSION ? c->who.session_process : NULL;
	entry->address = c->req->remote_addr[0] ? c->req->remote_addr : NULL;
}

void api_audit_record(struct api_call *c, const struct api_route *route)
{
	const struct api_audit_doc *a = &route->doc->audit;
	json_t *details = NULL;
	struct audit_entry entry = {.object = a->object};
	struct err e;

	if (c->audited || c->resp->status >= 400 || !(details = base_details(c, a)))
		goto out;
	if (!from_answer(c, a, details, &entry.action))
		goto out;
	entry.details = details;
	who(c, &entry);
	if (store_audit_insert(c->db, &entry, &e))
		LOG_E("audit: cannot record %s %s by %s: %s", entry.action, entry.object,
		      entry.username ? entry.username : "-", e.msg);
out:
	json_decref(details);
}

bool api_audit_prepare(struct api_call *c, const char *instance_id, struct audit_entry *entry)
{
	const struct api_audit_doc *a = c->route && c->route->doc ? &c->route->doc->audit : NULL;

	*entry = (struct audit_entry){0};
	if (!a || !a->object || strcmp(a->action, "CREATE_OR_UPDATE") == 0 || !(entry->details = base_details(c, a)))
		return false;
	if (!json_object_get(entry->details, "instanceId"))
		json_object_set_new(entry->details, "instanceId", json_string(instance_id));
	entry->object = a->object;
	entry->action = a->action;
	who(c, entry);
	return true;
}

/* An optional query parameter that must be one of allowed. */
static int one_of(struct api_call *c, const char *name, const char *const *allowed, const char **out)
{
	const char *v = http_query(c->req, name);

	*out = NULL;
	if (!v || !*v)
		return 0;
	for (size_t i = 0; allowed[i]; i++)
		if (strcmp(allowed[i], v) == 0) {
			*out = allowed[i];
			return 0;
		}
	return api_fail(c, ERR_INVALID, "Invalid value of '%s': '%.64s' (allowed: %s)", name, v,
			allowed == objects ? AUDIT_OBJECTS_TEXT : AUDIT_ACTIONS_TEXT);
}

static int time_param(struct api_call *c, const char *name, int64_t *out)
{
	const char *v = http_query(c->req, name);

	*out = 0;
	if (!v || !*v)
		return 0;
	if (dt_parse_iso(v, strlen(v), true, out, name, &c->err))
		return -ERR_INVALID;
	return 0;
}

static int list(struct api_call *c)
{
	struct audit_filter f = {0};
	json_t *out = NULL;
	int rc;

	if ((rc = rbac_admin(&c->who, &c->err)) || (rc = one_of(c, "object", objects, &f.object)) ||
	    (rc = one_of(c, "action", actions, &f.action)) || (rc = time_param(c, "after", &f.after)) ||
	    (rc = time_param(c, "before", &f.before)) || (rc = api_paging(c, &f.limit, &f.offset)))
		return rc;
	f.username = http_query(c->req, "username");
	if (f.username && !*f.username)
		f.username = NULL;
	if ((rc = store_audit_list(c->db, &f, &out, &c->err)))
		return rc;
	return api_reply(c, out);
}

static const struct api_doc doc_list = {
    .summary = "List audit log entries, newest first (admins only)",
    .params =
	(const struct api_param_doc[]){
	    {"object", "string", "only entries of this object: " AUDIT_OBJECTS_TEXT},
	    {"action", "string", "only entries of this action: " AUDIT_ACTIONS_TEXT},
	    {"username", "string", "only entries made by this user"},
	    {"after", "string", "only entries written after this time (ISO-8601 with offset)"},
	    {"before", "string", "only entries written before this time (ISO-8601 with offset)"},
	    DOC_PAGING,
	    {0}},
    .response = "{'type':'array','items':" SCHEMA_AUDIT_ENTRY "}",
    .errors = "400 403",
};

const struct api_route api_audit_routes[] = {
    {"GET", "/api/v1/audit", list, 0, &doc_list},
    {0},
};
