/* Concord's Ansible views of a process, built from its ANSIBLE events (docs/api.md
 * "Ansible"): GET /api/v1/process/{id}/ansible/events (the events, filtered by host, host
 * group, status and playbook) and …/ansible/hosts (each host's outcome). */
#include "api/process_ansible.h"

#include <string.h>

#include "api/doc_schemas.h"
#include "api/process_access.h"
#include "api/routes.h"
#include "base/str.h"
#include "store/process_events.h"

json_t *api_ansible_events(struct api_call *c, const char *type, int *rc)
{
	const char *id = api_param(c, "id");
	struct event_filter f = {.type = type, .include_all = true, .limit = -1};
	struct process p;
	json_t *events = NULL;

	if ((*rc = api_process_load(c, id, PROC_READ, &p)))
		return NULL;
	store_process_cleanup(&p);
	*rc = store_process_event_list(c->db, id, &f, &events, &c->err);
	return *rc ? NULL : events;
}

/* Whether data's field key equals the query parameter of that name (absent: any).  A
 * status OK also takes CHANGED: Concord records every success as OK, so its clients ask
 * for OK (Accord tells a change apart). */
static bool field_matches(struct api_call *c, json_t *data, const char *key)
{
	const char *want = http_query(c->req, key);
	const char *got = json_string_value(json_object_get(data, key));
	if (!want || !*want)
		return true;
	if (!got)
		return false;
	return strcmp(got, want) == 0 ||
	       (strcmp(key, "status") == 0 && strcmp(want, "OK") == 0 && strcmp(got, "CHANGED") == 0);
}

static int list_events(struct api_call *c)
{
	static const char *const keys[] = {"host", "hostGroup", "status", "playbookId"};
	json_t *events, *out, *ev;
	size_t i;
	int rc;

	if (!(events = api_ansible_events(c, "ANSIBLE", &rc)))
		return rc;
	out = json_array();
	json_array_foreach(events, i, ev)
	{
		json_t *data = json_object_get(ev, "data");
		bool keep = true;
		for (size_t k = 0; k < sizeof keys / sizeof keys[0] && keep; k++)
			keep = field_matches(c, data, keys[k]);
		if (keep)
			json_array_append(out, ev);
	}
	json_decref(events);
	return api_reply(c, out);
}

/* How a host's outcome ranks: the worst wins (Concord's host status). */
static int rank(const char *status)
{
	static const char *const order[] = {"SKIPPED", "OK", "CHANGED", "RUNNING", "UNREACHABLE", "FAILED"};
	for (int i = 0; i < (int)(sizeof order / sizeof order[0]); i++)
		if (status && strcmp(status, order[i]) == 0)
			return i;
	return -1;
}

void api_ansible_host_fold(json_t *hosts, json_t *data)
{
	const char *host = json_string_value(json_object_get(data, "host"));
	const char *status = json_string_value(json_object_get(data, "status"));
	const char *phase = json_string_value(json_object_get(data, "phase"));
	json_t *h, *d = json_object_get(data, "duration");
	json_int_t running;

	if (!host || !status)
		return;
	if (!(h = json_object_get(hosts, host))) {
		const char *group = json_string_value(json_object_get(data, "hostGroup"));
		h = json_pack("{s:s, s:s, s:s, s:I, s:I}", "host", host, "hostGroup", group ? group : "-", "status",
			      "SKIPPED", "duration", (json_int_t)0, "running", (json_int_t)0);
		if (!h)
			return;
		json_object_set_new(hosts, host, h);
	}
	running = json_integer_value(json_object_get(h, "running"));
	if (phase && strcmp(phase, "pre") == 0) {
		json_object_set_new(h, "running", json_integer(running + 1));
		return;
	}
	json_object_set_new(h, "running", json_integer(running > 0 ? running - 1 : 0));
	json_object_set_new(h, "duration",
			    json_integer(json_integer_value(json_object_get(h, "duration")) +
					 (json_is_integer(d) ? json_integer_value(d) : 0)));
	if (strcmp(status, "FAILED") == 0 && json_is_true(json_object_get(data, "ignore_errors")))
		status = "OK";
	if (rank(status) > rank(json_string_value(json_object_get(h, "status"))))
		json_object_set_new(h, "status", json_string(status));
}

void api_ansible_host_final(json_t *host)
{
	if (json_integer_value(json_object_get(host, "running")) > 0)
		json_object_set_new(host, "status", json_string("RUNNING"));
	json_object_del(host, "running");
}

static int list_hosts(struct api_call *c)
{
	json_t *events, *hosts = json_object(), *items = json_array(), *groups = json_array(), *ev, *h;
	const char *name, *want = http_query(c->req, "status");
	size_t limit, offset, n = 0;
	size_t i;
	int rc;

	if ((rc = api_paging(c, &limit, &offset)) || !(events = api_ansible_events(c, "ANSIBLE", &rc))) {
		json_decref(hosts);
		json_decref(items);
		json_decref(groups);
		return rc;
	}
	json_array_foreach(events, i, ev)
	{
		if (field_matches(c, json_object_get(ev, "data"), "playbookId"))
			api_ansible_host_fold(hosts, json_object_get(ev, "data"));
	}
	json_object_foreach(hosts, name, h)
	{
		const char *group = json_string_value(json_object_get(h, "hostGroup"));
		bool seen = false;
		api_ansible_host_final(h);
		for (size_t g = 0; g < json_array_size(groups) && !seen; g++)
			seen = strcmp(json_string_value(json_array_get(groups, g)), group) == 0;
		if (!seen)
			json_array_append_new(groups, json_string(group));
		if (!field_matches(c, h, "host") || !field_matches(c, h, "hostGroup") ||
		    (want && *want && strcmp(json_string_value(json_object_get(h, "status")), want) != 0))
			continue;
		if (n++ >= offset && json_array_size(items) < limit)
			json_array_append(items, h);
	}
	json_decref(events);
	json_decref(hosts);
	return api_reply(c, json_pack("{s:o, s:o}", "items", items, "hostGroups", groups));
}

static const struct api_doc doc_events = {
    .summary = "The ANSIBLE events of a process, oldest first",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID,
					     {"host", "string", "only events of this host"},
					     {"hostGroup", "string", "only events of this host group"},
					     {"status", "string",
					      "only events of this status (RUNNING, OK, CHANGED, FAILED, …)"},
					     {"playbookId", "string", "only events of this playbook run"},
					     {0}},
    .response = "{'type':'array','items':{'type':'object','properties':{'id':" SCHEMA_UUID
		",'seqId':{'type':'integer'},'eventType':{'type':'string'},'data':" SCHEMA_OBJECT
		",'eventDate':" SCHEMA_DATE "}}}",
    .errors = "403 404",
};

static const struct api_doc doc_hosts = {
    .summary = "The hosts of a process's Ansible runs, each with its outcome",
    .params =
	(const struct api_param_doc[]){DOC_PROCESS_ID,
				       {"host", "string", "only this host"},
				       {"hostGroup", "string", "only hosts of this group"},
				       {"status", "string", "only hosts with this outcome"},
				       {"playbookId", "string", "only the hosts of this playbook run"},
				       {"limit", "integer", "at most this many hosts (the list default and maximum)"},
				       {"offset", "integer", "hosts to skip"},
				       {0}},
    .response = "{'type':'object','properties':{'items':{'type':'array','items':{'type':'object','properties':"
		"{'host':{'type':'string'},'hostGroup':{'type':'string'},'status':{'type':'string'},"
		"'duration':{'type':'integer'}}}},'hostGroups':{'type':'array','items':{'type':'string'}}}}",
    .errors = "400 403 404",
};

const struct api_route api_process_ansible_routes[] = {
    {"GET", "/api/v1/process/{id}/ansible/events", list_events, 0, &doc_events},
    {"GET", "/api/v1/process/{id}/ansible/hosts", list_hosts, 0, &doc_hosts},
    {0},
};
