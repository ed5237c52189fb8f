/* The `jsonStore` task on the server (docs/flows.md "jsonStore task"; Concord's
 * plugins-v2 json-store.md): items and named queries of JSON stores, with the rights of the
 * process's initiator (inventory/jsonstore.h).  Every method takes the org name first or,
 * one argument fewer, uses the process's org: isStoreExists, isExists, get, put, upsert
 * (creates the store when missing), delete, upsertQuery, executeQuery,
 * createOrUpdateStore. */
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "inventory/jsonstore.h"
#include "inventory/jsonstore_policy.h"
#include "queue/tasks/server_tasks.h"
#include "store/audit.h"

/* One call: the method's arguments without the org, the org named or the process's. */
struct js_call {
	struct task_call *tc;
	struct principal who;
	const char *org;
	json_t *a[4]; /* borrowed */
};

/* The audit entry of a change made on behalf of the initiator, as the API records it
 * (docs/api.md "Audit log"; source PROCESS); key/value: itemPath or queryName, or NULL.
 * A failure is logged, the task goes on. */
static void js_audit(struct js_call *j, const char *object, const char *action, const struct jsonstore *s,
		     const char *key, const char *value)
{
	const struct process *p = &j->tc->r->p;
	json_t *details =
	    json_pack("{s:s,s:s,s:s}", "orgName", s->org.name, "jsonStoreName", s->inv.name, "jsonStoreId", s->inv.id);
	struct audit_entry a = {.object = object,
				.action = action,
				.user_id = p->initiator_id[0] ? p->initiator_id : NULL,
				.username = p->initiator[0] ? p->initiator : NULL,
				.source = "PROCESS",
				.instance_id = p->instance_id,
				.details = details};
	struct err e;

	if (details && key)
		json_object_set_new(details, key, json_string(value));
	if (details && store_audit_insert(j->tc->c, &a, &e))
		LOG_E("audit: cannot record %s %s by process %s: %s", action, object, p->instance_id, e.msg);
	json_decref(details);
}

/* The method's arguments: `base` of them with the process's org, base + 1 with an org
 * name first. */
static int js_args(struct js_call *j, const char *m, size_t base, struct err *e)
{
	json_t *args = j->tc->args;
	size_t n = json_array_size(args), off = n == base + 1 ? 1 : 0;

	if (n != base && n != base + 1)
		return err_set(e, ERR_INVALID, "Method not found: jsonStore.%s(%zu arguments)", m, n);
	j->org = off ? json_string_value(json_array_get(args, 0)) : j->tc->r->p.org_name;
	if (!j->org || !*j->org)
		return err_set(e, ERR_INVALID, "jsonStore.%s: Organization name cannot be empty or null", m);
	for (size_t i = 0; i < base; i++)
		j->a[i] = json_array_get(args, i + off);
	return 0;
}

static int js_str(struct js_call *j, size_t i, const char *m, const char *what, const char **out, struct err *e)
{
	*out = json_string_value(j->a[i]);
	if (!*out || !**out)
		return err_set(e, ERR_INVALID, "jsonStore.%s: %s cannot be empty or null", m, what);
	return 0;
}

/* The store named by argument 0, with `need` checked. */
static int js_open(struct js_call *j, const char *m, enum access_level need, struct jsonstore *s, struct err *e)
{
	const char *name;

	if (js_str(j, 0, m, "Store name", &name, e))
		return -1;
	return jsonstore_open(j->tc->c, &j->who, j->org, name, need, s, e);
}

static int js_store_exists(struct js_call *j, const char *m, struct err *e)
{
	struct jsonstore s;
	int rc;

	if (js_args(j, m, 1, e))
		return -1;
	rc = js_open(j, m, ACCESS_READER, &s, e);
	if (rc && rc != -ERR_NOT_FOUND)
		return rc;
	j->tc->out = json_boolean(rc == 0);
	return 0;
}

/* get and isExists: the item, null when it (or its store or org) does not exist. */
static int js_get(struct js_call *j, const char *m, bool exists, struct err *e)
{
	struct jsonstore s;
	const char *path;
	char *data = NULL;
	int rc;

	if (js_args(j, m, 2, e) || js_str(j, 1, m, "Item path", &path, e))
		return -1;
	if ((rc = js_open(j, m, ACCESS_READER, &s, e)) == 0)
		rc = store_inventory_item_get(j->tc->c, s.inv.rid, path, &data, e);
	if (rc == -ERR_NOT_FOUND && (exists || strncmp(e->msg, "Item not found", 14) == 0)) {
		j->tc->out = exists ? json_false() : NULL;
		return 0;
	}
	if (rc)
		return rc;
	j->tc->out = exists ? json_true() : json_loads(data, JSON_DECODE_ANY, NULL);
	free(data);
	return j->tc->out ? 0 : err_set(e, ERR_INTERNAL, "stored item %.128s is not valid JSON", path);
}

/* createOrUpdateStore: creates the store (PRIVATE) unless it exists, which is then an update
 * of it as the entity rules see it (update: Concord's task posts the store to the API);
 * *s the store. */
static int js_ensure_store(struct js_call *j, const char *m, bool update, struct jsonstore *s, struct err *e)
{
	const char *name;
	int rc = js_open(j, m, ACCESS_WRITER, s, e);

	if (rc == 0 && update)
		return jsonstore_policy_store(j->tc->c, &j->who, &s->org, &s->inv, true, e);
	if (rc != -ERR_NOT_FOUND || strncmp(e->msg, "JSON store not found", 20) != 0)
		return rc;
	if (js_str(j, 0, m, "Store name", &name, e))
		return -1;
	rc = jsonstore_create(j->tc->c, &j->who, &s->org, name, &s->inv, e);
	if (rc == 0)
		js_audit(j, "JSON_STORE", "CREATE", s, NULL, NULL);
	if (rc == -ERR_CONFLICT) /* created meanwhile */
		rc = js_open(j, m, ACCESS_WRITER, s, e);
	return rc;
}

static int js_put(struct js_call *j, const char *m, bool create, struct err *e)
{
	struct jsonstore s;
	const char *path;
	bool created;

	if (js_args(j, m, 3, e))
		return -1;
	if (!j->a[2] || json_is_null(j->a[2]))
		return err_set(e, ERR_INVALID, "jsonStore.%s: Data cannot be null.", m);
	if (!json_is_object(j->a[2]))
		return err_set(e, ERR_INVALID, "jsonStore.%s: Data must be a valid JSON object", m);
	if (js_str(j, 1, m, "Item path", &path, e))
		return -1;
	if ((create ? js_ensure_store(j, m, false, &s, e) : js_open(j, m, ACCESS_WRITER, &s, e)) ||
	    jsonstore_policy_item(j->tc->c, &j->who, &s.org, &s.inv, path, j->a[2], e) ||
	    jsonstore_item_put(j->tc->c, &s.inv, path, j->a[2], &created, e))
		return -1;
	js_audit(j, "JSON_STORE_DATA", created ? "CREATE" : "UPDATE", &s, "itemPath", path);
	return 0;
}

static int js_delete(struct js_call *j, const char *m, struct err *e)
{
	struct jsonstore s;
	const char *path;
	bool deleted;

	if (js_args(j, m, 2, e) || js_str(j, 1, m, "Item path", &path, e) || js_open(j, m, ACCESS_WRITER, &s, e) ||
	    store_inventory_item_delete(j->tc->c, s.inv.rid, path, &deleted, e))
		return -1;
	if (deleted)
		js_audit(j, "JSON_STORE_DATA", "DELETE", &s, "itemPath", path);
	j->tc->out = json_boolean(deleted);
	return 0;
}

static int js_upsert_query(struct js_call *j, const char *m, struct err *e)
{
	struct jsonstore s;
	const char *name, *text, *result;

	if (js_args(j, m, 3, e) || js_str(j, 1, m, "Query name", &name, e))
		return -1;
	if (!(text = json_string_value(j->a[2])))
		return err_set(e, ERR_INVALID, "jsonStore.%s: the query text must be a string", m);
	if (js_open(j, m, ACCESS_WRITER, &s, e) ||
	    jsonstore_policy_query(j->tc->c, &j->who, &s.org, &s.inv, name, text, e) ||
	    jsonstore_query_put(j->tc->c, &s.inv, name, text, &result, e))
		return -1;
	if (strcmp(result, "ALREADY_EXISTS") != 0)
		js_audit(j, "JSON_STORE_QUERY", result[0] == 'C' ? "CREATE" : "UPDATE", &s, "queryName", name);
	return 0;
}

/* executeQuery(store, q), (store, q, params), (org, store, q), (org, store, q, params). */
static int js_exec(struct js_call *j, const char *m, struct err *e)
{
	json_t *args = j->tc->args, *third = json_array_get(args, 2);
	size_t n = json_array_size(args);
	bool with_params = n == 4 || (n == 3 && !json_is_string(third));
	struct jsonstore s;
	const char *name;

	if (js_args(j, m, with_params ? 3 : 2, e) || js_str(j, 1, m, "Query name", &name, e))
		return -1;
	if (with_params && j->a[2] && !json_is_null(j->a[2]) && !json_is_object(j->a[2]))
		return err_set(e, ERR_INVALID, "jsonStore.%s: the query parameters must be an object", m);
	if (js_open(j, m, ACCESS_READER, &s, e))
		return -1;
	return jsonstore_query_exec(j->tc->c, &s.inv, name, with_params ? j->a[2] : NULL, &j->tc->out, e);
}

/* Whether method m only reads (a scoped key's jsonstore:read allows it). */
static bool js_reads(const char *m)
{
	return strcmp(m, "isStoreExists") == 0 || strcmp(m, "isExists") == 0 || strcmp(m, "get") == 0 ||
	       strcmp(m, "executeQuery") == 0;
}

int server_task_jsonstore(struct task_call *tc, struct err *e)
{
	struct js_call j = {.tc = tc};
	const char *m = tc->method;
	struct jsonstore s;

	if (!m || !json_is_array(tc->args))
		return err_set(e, ERR_INVALID,
			       "jsonStore has no step form: call its methods, e.g. ${jsonStore.get('store', 'item')}");
	if (task_call_principal(tc, &j.who, e) || task_scope_need(&j.who, SCOPE_JSONSTORE, js_reads(m) ? SCOPE_READ : SCOPE_WRITE, e))
		return -1;
	if (strcmp(m, "isStoreExists") == 0)
		return js_store_exists(&j, m, e);
	if (strcmp(m, "isExists") == 0 || strcmp(m, "get") == 0)
		return js_get(&j, m, m[0] == 'i', e);
	if (strcmp(m, "put") == 0 || strcmp(m, "upsert") == 0)
		return js_put(&j, m, m[0] == 'u', e);
	if (strcmp(m, "delete") == 0)
		return js_delete(&j, m, e);
	if (strcmp(m, "upsertQuery") == 0)
		return js_upsert_query(&j, m, e);
	if (strcmp(m, "executeQuery") == 0)
		return js_exec(&j, m, e);
	if (strcmp(m, "createOrUpdateStore") == 0)
		return js_args(&j, m, 1, e) || js_ensure_store(&j, m, true, &s, e) ? -1 : 0;
	return err_set(e, ERR_INVALID,
		       "Method not found: jsonStore.%s (isStoreExists, isExists, get, put, upsert, delete, "
		       "upsertQuery, executeQuery, createOrUpdateStore)",
		       m);
}
