/* The `inventory` task on the server (Concord's InventoryTask; docs/flows.md "inventory
 * task"): named queries of an inventory (a JSON store: inventory/jsonstore.h) run with
 * the rights of the process's initiator, and their rows shaped as an Ansible dynamic
 * inventory.  Methods (the org, when not given, is the process's):
 *   query([org,] inventory, query, params)
 *   ansible([org,] inventory, hostGroup, query[, params[, vars]]) */
#include <string.h>

#include "inventory/jsonstore.h"
#include "queue/tasks/server_tasks.h"

/* Runs query q of inventory inv in org (NULL: the process's) with params: *rows NEW. */
static int run_query(struct task_call *tc, const char *org, const char *inv, const char *q, json_t *params,
		     json_t **rows, struct err *e)
{
	struct principal who;
	struct jsonstore s;

	if (!inv || !q)
		return err_set(e, ERR_INVALID, "inventory.%s: the inventory and query names must be strings", tc->method);
	if (params && !json_is_null(params) && !json_is_object(params))
		return err_set(e, ERR_INVALID, "inventory.%s: the query parameters must be an object", tc->method);
	if (task_call_principal(tc, &who, e) || task_scope_need(&who, SCOPE_INVENTORY, SCOPE_READ, e) ||
	    jsonstore_open(tc->c, &who, org ? org : tc->r->p.org_name, inv, ACCESS_READER, &s, e))
		return -1;
	return jsonstore_query_exec(tc->c, &s.inv, q, params, rows, e);
}

/* Concord's host variables: a row that is a string is a host without variables; an object
 * with a string "host" is that host with the rest as its variables. */
static int host_vars(json_t *rows, json_t **out, struct err *e)
{
	json_t *row, *vars;
	size_t i;

	*out = json_object();
	json_array_foreach(rows, i, row)
	{
		const char *host = json_string_value(json_is_object(row) ? json_object_get(row, "host") : row);
		if (!host) {
			json_decref(*out);
			*out = NULL;
			return err_set(e, ERR_INVALID,
				       json_is_object(row) ? "Expected a record with a \"host\" value, got row %zu"
							   : "Expected a string value or a record, got row %zu",
				       i);
		}
		vars = json_is_object(row) ? json_copy(row) : json_object();
		json_object_del(vars, "host");
		json_object_set_new(*out, host, vars);
	}
	return 0;
}

/* ansible: {"_meta": {"hostvars": {...}}, "<group>": {"hosts": [...], "vars"?: {...}}}. */
static int method_ansible(struct task_call *tc, struct err *e)
{
	json_t *a = tc->args, *rows = NULL, *hv = NULL, *group, *hosts, *vars = NULL, *params = NULL;
	size_t n = json_array_size(a), o = 0;
	const char *org = NULL, *k;
	json_t *v;

	/* (inv, group, query) (inv, group, query, {params}) (org, inv, group, query) … */
	if (n >= 5 || (n == 4 && json_is_string(json_array_get(a, 3)))) {
		org = json_string_value(json_array_get(a, 0));
		o = 1;
		if (!org)
			return err_set(e, ERR_INVALID, "inventory.ansible: the org name must be a string");
	}
	params = json_array_get(a, o + 3);
	vars = json_array_get(a, o + 4);
	if (vars && !json_is_null(vars) && !json_is_object(vars))
		return err_set(e, ERR_INVALID, "inventory.ansible: the group's vars must be an object");
	if (!json_is_string(json_array_get(a, o + 1)))
		return err_set(e, ERR_INVALID, "inventory.ansible: the host group name must be a string");
	if (run_query(tc, org, json_string_value(json_array_get(a, o)), json_string_value(json_array_get(a, o + 2)),
		      params, &rows, e) ||
	    host_vars(rows, &hv, e)) {
		json_decref(rows);
		return -1;
	}
	hosts = json_array();
	json_object_foreach(hv, k, v) json_array_append_new(hosts, json_string(k));
	group = json_pack("{s:o}", "hosts", hosts);
	if (json_object_size(vars))
		json_object_set(group, "vars", vars);
	tc->out = json_pack("{s:{s:o}}", "_meta", "hostvars", hv);
	json_object_set_new(tc->out, json_string_value(json_array_get(a, o + 1)), group);
	json_decref(rows);
	return 0;
}

int server_task_inventory(struct task_call *tc, struct err *e)
{
	json_t *a = tc->args;
	size_t n = json_array_size(a);

	if (!tc->method || !json_is_array(a))
		return err_set(e, ERR_INVALID,
			       "inventory has no step form: call its methods, e.g. ${inventory.query('inv', 'q', {})}");
	if (strcmp(tc->method, "query") == 0 && (n == 3 || n == 4))
		return run_query(tc, n == 4 ? json_string_value(json_array_get(a, 0)) : NULL,
				 json_string_value(json_array_get(a, n - 3)), json_string_value(json_array_get(a, n - 2)),
				 json_array_get(a, n - 1), &tc->out, e);
	if (strcmp(tc->method, "ansible") == 0 && n >= 3 && n <= 6)
		return method_ansible(tc, e);
	return err_set(e, ERR_INVALID, "Method not found: inventory.%s(%zu arguments) (query, ansible)", tc->method, n);
}
