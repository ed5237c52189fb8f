/* Concord's views of a process's playbook runs (docs/api.md "Ansible"), built from its
 * ANSIBLE_PLAYBOOK_INFO, ANSIBLE_PLAYBOOK_RESULT and ANSIBLE events as Concord's event
 * processors sum them up: GET /api/v1/process/{id}/ansible/playbooks (each run with its
 * progress), …/ansible/{playbookId}/plays, …/ansible/tasks?playId= and …/ansible/stats. */
#include <stdlib.h>
#include <string.h>

#include "api/doc_schemas.h"
#include "api/process_ansible.h"
#include "api/routes.h"
#include "base/uuid.h"

/* The events of one request: NEW arrays, oldest first. */
struct runs {
	json_t *info, *result, *events;
};

static void runs_cleanup(struct runs *r)
{
	json_decref(r->info);
	json_decref(r->result);
	json_decref(r->events);
}

/* Loads the three kinds (the first load checks the read access): 0 or the reply's status. */
static int runs_load(struct api_call *c, struct runs *r)
{
	int rc = 0;
	*r = (struct runs){0};
	if (!(r->info = api_ansible_events(c, "ANSIBLE_PLAYBOOK_INFO", &rc)) ||
	    !(r->result = api_ansible_events(c, "ANSIBLE_PLAYBOOK_RESULT", &rc)) ||
	    !(r->events = api_ansible_events(c, "ANSIBLE", &rc)))
		runs_cleanup(r);
	return rc;
}

static const char *str_of(json_t *data, const char *key)
{
	return json_string_value(json_object_get(data, key));
}

static bool str_is(json_t *data, const char *key, const char *want)
{
	const char *got = str_of(data, key);
	return got && want && strcmp(got, want) == 0;
}

static bool is_gather_facts(json_t *data)
{
	return str_is(data, "action", "gather_facts") || str_is(data, "action", "ansible.builtin.gather_facts");
}

/* A task's outcome on a host that counts for the progress (Concord's PlayInfoProcessor:
 * neither fact gathering nor handlers, which the playbook's task list leaves out). */
static bool is_finished(json_t *data)
{
	static const char *const done[] = {"OK", "CHANGED", "SKIPPED", "UNREACHABLE", "FAILED"};
	if (is_gather_facts(data) || json_is_true(json_object_get(data, "isHandler")))
		return false;
	for (size_t i = 0; i < sizeof done / sizeof done[0]; i++)
		if (str_is(data, "status", done[i]))
			return true;
	return false;
}

static json_int_t int_of(json_t *o, const char *key)
{
	return json_integer_value(json_object_get(o, key));
}

static void add_int(json_t *o, const char *key, json_int_t n)
{
	json_object_set_new(o, key, json_integer(int_of(o, key) + n));
}

/* The finished tasks of the play playId. */
static json_int_t play_finished(const struct runs *r, const char *play_id)
{
	json_int_t n = 0;
	size_t i;
	json_t *ev;
	json_array_foreach(r->events, i, ev)
	{
		json_t *d = json_object_get(ev, "data");
		n += str_is(d, "playId", play_id) && is_finished(d);
	}
	return n;
}

/* The playbook run's status: its result event's, RUNNING until there is one. */
static const char *run_status(const struct runs *r, const char *playbook_id)
{
	size_t i;
	json_t *ev;
	json_array_foreach(r->result, i, ev)
	{
		json_t *d = json_object_get(ev, "data");
		if (str_is(d, "playbookId", playbook_id) && str_of(d, "status"))
			return str_of(d, "status");
	}
	return "RUNNING";
}

/* {failedHosts, failedTasks} of the playbook run. */
static void run_failures(const struct runs *r, const char *playbook_id, json_int_t *hosts_failed,
			 json_int_t *tasks_failed)
{
	json_t *hosts = json_object(), *ev, *h;
	const char *name;
	size_t i;

	*hosts_failed = *tasks_failed = 0;
	json_array_foreach(r->events, i, ev)
	{
		json_t *d = json_object_get(ev, "data");
		if (!str_is(d, "playbookId", playbook_id))
			continue;
		api_ansible_host_fold(hosts, d);
		*tasks_failed += str_is(d, "status", "FAILED");
	}
	json_object_foreach(hosts, name, h)
	{
		api_ansible_host_final(h);
		*hosts_failed += str_is(h, "status", "FAILED") || str_is(h, "status", "UNREACHABLE");
	}
	json_decref(hosts);
}

/* One entry of …/playbooks from an ANSIBLE_PLAYBOOK_INFO event (Concord's PlaybookEntry). */
static json_t *playbook_entry(const struct runs *r, json_t *ev)
{
	json_t *d = json_object_get(ev, "data"), *plays = json_object_get(d, "plays"), *p, *out;
	const char *id = str_of(d, "playbookId"), *status = run_status(r, id);
	json_int_t work = int_of(d, "totalWork"), finished = 0, hosts_failed, tasks_failed;
	size_t i;

	json_array_foreach(plays, i, p)
	{
		json_int_t cap = int_of(p, "hosts") * (json_int_t)json_array_size(json_object_get(p, "tasks"));
		json_int_t n = play_finished(r, str_of(p, "id"));
		finished += n > cap ? cap : n;
	}
	run_failures(r, id, &hosts_failed, &tasks_failed);
	out = json_pack("{s:s?, s:s?, s:O?, s:I, s:I, s:I, s:I, s:i, s:s}", "id", id, "name", str_of(d, "playbook"),
			"startedAt", json_object_get(ev, "eventDate"), "hostsCount", int_of(d, "uniqueHosts"),
			"failedHostsCount", hosts_failed, "playsCount", (json_int_t)json_array_size(plays),
			"failedTasksCount", tasks_failed, "progress",
			strcmp(status, "RUNNING") != 0 || work <= 0 ? 100 : (int)(100 * finished / work), "status",
			status);
	if (out && json_is_integer(json_object_get(d, "currentRetryCount")))
		json_object_set(out, "retryNum", json_object_get(d, "currentRetryCount"));
	return out;
}

static int list_playbooks(struct api_call *c)
{
	struct runs r;
	json_t *out, *ev;
	size_t i;
	int rc;

	if ((rc = runs_load(c, &r)))
		return rc;
	out = json_array();
	json_array_foreach(r.info, i, ev)
	{
		if (str_of(json_object_get(ev, "data"), "playbookId"))
			json_array_append_new(out, playbook_entry(&r, ev));
	}
	runs_cleanup(&r);
	return api_reply(c, out);
}

/* Folds one ANSIBLE event into its task's counts (Concord's TaskInfoProcessor: a start
 * counts as running until its outcome; CHANGED is an OK that changed something). */
static void task_count(json_t *t, json_t *data)
{
	static const struct {
		const char *status, *key;
	} outcome[] = {{"OK", "okCount"},
		       {"CHANGED", "okCount"},
		       {"SKIPPED", "skippedCount"},
		       {"UNREACHABLE", "unreachableCount"},
		       {"FAILED", "failedCount"}};

	if (str_is(data, "status", "RUNNING")) {
		add_int(t, "runningCount", 1);
		return;
	}
	for (size_t i = 0; i < sizeof outcome / sizeof outcome[0]; i++) {
		if (str_is(data, "status", outcome[i].status)) {
			add_int(t, outcome[i].key, 1);
			add_int(t, "runningCount", -1);
		}
	}
}

/* Concord's play and task name columns: varchar(1024). */
#define NAME_MAX_UNITS 1024

/* name as Concord stores it (StringUtils.abbreviate): over NAME_MAX_UNITS characters, as
 * Java counts them (UTF-16 units), its first NAME_MAX_UNITS - 3 and "..."; a character is
 * never split.  NEW (NULL: out of memory). */
static json_t *name_cut(const char *name)
{
	size_t units = 0, keep = 0;
	bool over = false;
	char *cut;
	json_t *out;

	for (size_t i = 0; name[i]; i++) {
		unsigned char b = (unsigned char)name[i];
		size_t w = b >= 0xF0 ? 2 : 1; /* 4 UTF-8 bytes: a surrogate pair in Java */
		if ((b & 0xC0) == 0x80)
			continue; /* a continuation byte: its character is counted */
		if (!over && units + w > NAME_MAX_UNITS - 3) {
			keep = i;
			over = true;
		}
		units += w;
	}
	if (units <= NAME_MAX_UNITS)
		return json_string(name);
	if (!(cut = malloc(keep + 4)))
		return NULL;
	memcpy(cut, name, keep);
	memcpy(cut + keep, "...", 4);
	out = json_string(cut);
	free(cut);
	return out;
}

static json_t *task_new(const char *name, const char *type, json_int_t order)
{
	return json_pack("{s:o, s:s, s:I, s:I, s:I, s:I, s:I, s:I}", "taskName", name_cut(name ? name : "n/a"), "type", type,
			 "taskOrder", order, "okCount", (json_int_t)0, "failedCount", (json_int_t)0, "unreachableCount",
			 (json_int_t)0, "skippedCount", (json_int_t)0, "runningCount", (json_int_t)0);
}

/* The tasks of the play playId ({taskId: TaskInfo}, NEW): those the playbook's start event
 * lists in their order, then those only its events name (fact gathering first). */
static json_t *play_tasks(const struct runs *r, const char *play_id)
{
	json_t *tasks = json_object(), *ev, *p, *t;
	size_t i, j, k;

	json_array_foreach(r->info, i, ev)
	{
		json_array_foreach(json_object_get(json_object_get(ev, "data"), "plays"), j, p)
		{
			if (!str_is(p, "id", play_id))
				continue;
			json_array_foreach(json_object_get(p, "tasks"), k, t) if (str_of(t, "id"))
			    json_object_set_new(tasks, str_of(t, "id"), task_new(str_of(t, "task"), "TASK", (json_int_t)k));
		}
	}
	json_array_foreach(r->events, i, ev)
	{
		json_t *d = json_object_get(ev, "data");
		const char *task_id = str_of(d, "taskId");
		if (!task_id || !str_is(d, "playId", play_id) || !str_of(d, "status"))
			continue;
		if (!(t = json_object_get(tasks, task_id))) {
			bool setup = is_gather_facts(d) || str_is(d, "action", "setup");
			t = task_new(str_of(d, "task"),
				     setup ? "SETUP" : json_is_true(json_object_get(d, "isHandler")) ? "HANDLER" : "TASK",
				     setup ? -1 : int_of(ev, "seqId"));
			json_object_set_new(tasks, task_id, t);
		}
		task_count(t, d);
	}
	return tasks;
}

static int by_order(const void *a, const void *b)
{
	json_int_t x = int_of(*(json_t *const *)a, "taskOrder"), y = int_of(*(json_t *const *)b, "taskOrder");
	return (x > y) - (x < y);
}

static int list_tasks(struct api_call *c)
{
	/* …/ansible/tasks?playId= (Concord's resource) or …/ansible/{playId}/tasks (its tests' client) */
	const char *in_path = api_param(c, "playId");
	const char *play_id = in_path && *in_path ? in_path : http_query(c->req, "playId");
	json_t *tasks, *out, *t, **v;
	const char *k;
	struct runs r;
	size_t n = 0;
	int rc;

	if (!play_id || !uuid_valid(play_id, strlen(play_id)))
		return api_fail(c, ERR_INVALID, "playId must be a play's UUID, got '%.64s'", play_id ? play_id : "");
	if ((rc = runs_load(c, &r)))
		return rc;
	tasks = play_tasks(&r, play_id);
	runs_cleanup(&r);
	out = json_array();
	if (!(v = calloc(json_object_size(tasks) + 1, sizeof *v))) {
		json_decref(tasks);
		json_decref(out);
		return api_fail(c, ERR_INTERNAL, "out of memory");
	}
	json_object_foreach(tasks, k, t) v[n++] = t;
	qsort(v, n, sizeof *v, by_order);
	for (size_t i = 0; i < n; i++) {
		if (int_of(v[i], "runningCount") < 0)
			json_object_set_new(v[i], "runningCount", json_integer(0));
		json_array_append(out, v[i]);
	}
	free(v);
	json_decref(tasks);
	return api_reply(c, out);
}

/* One entry of …/plays (Concord's PlayInfo): the play's tasks' counts summed. */
static json_t *play_entry(const struct runs *r, json_t *p, size_t order)
{
	static const char *const keys[][2] = {{"okCount", "ok"},
					      {"failedCount", "failed"},
					      {"unreachableCount", "unreachable"},
					      {"skippedCount", "skipped"},
					      {"runningCount", "running"}};
	const char *id = str_of(p, "id"), *k;
	json_t *tasks = play_tasks(r, id), *stats = json_object(), *t;

	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		json_int_t sum = 0;
		json_object_foreach(tasks, k, t) sum += int_of(t, keys[i][0]);
		json_object_set_new(stats, keys[i][1], json_integer(sum < 0 ? 0 : sum));
	}
	json_decref(tasks);
	return json_pack("{s:s, s:o, s:I, s:I, s:I, s:o, s:I}", "playId", id, "playName",
			 name_cut(str_of(p, "play") ? str_of(p, "play") : "n/a"), "playOrder", (json_int_t)order, "hostCount",
			 int_of(p, "hosts"), "taskCount", (json_int_t)json_array_size(json_object_get(p, "tasks")),
			 "taskStats", stats, "finishedTaskCount", play_finished(r, id));
}

static int list_plays(struct api_call *c)
{
	const char *playbook_id = api_param(c, "playbookId");
	json_t *out, *ev, *p;
	struct runs r;
	size_t i, j;
	int rc;

	if (!uuid_valid(playbook_id, strlen(playbook_id)))
		return api_fail(c, ERR_INVALID, "playbookId must be a playbook run's UUID, got '%.64s'", playbook_id);
	if ((rc = runs_load(c, &r)))
		return rc;
	out = json_array();
	json_array_foreach(r.info, i, ev)
	{
		json_t *d = json_object_get(ev, "data");
		if (!str_is(d, "playbookId", playbook_id))
			continue;
		json_array_foreach(json_object_get(d, "plays"), j, p) if (str_of(p, "id"))
		    json_array_append_new(out, play_entry(&r, p, j));
	}
	runs_cleanup(&r);
	return api_reply(c, out);
}

/* Concord's (deprecated) stats: the hosts of every run by outcome, the host groups. */
static int get_stats(struct api_call *c)
{
	json_t *events, *runs = json_object(), *unique = json_object(), *groups = json_array(), *stats = json_object();
	json_t *ev, *hosts, *h;
	const char *pb, *name;
	size_t i;
	int rc;

	if (!(events = api_ansible_events(c, "ANSIBLE", &rc))) {
		json_decref(runs);
		json_decref(unique);
		json_decref(groups);
		json_decref(stats);
		return rc;
	}
	json_array_foreach(events, i, ev)
	{
		json_t *d = json_object_get(ev, "data");
		const char *id = str_of(d, "playbookId") ? str_of(d, "playbookId") : "";
		if (!(hosts = json_object_get(runs, id)))
			json_object_set_new(runs, id, hosts = json_object());
		api_ansible_host_fold(hosts, d);
	}
	json_decref(events);
	json_object_foreach(runs, pb, hosts) json_object_foreach(hosts, name, h)
	{
		const char *group = str_of(h, "hostGroup");
		bool seen = false;
		api_ansible_host_final(h);
		add_int(stats, str_of(h, "status"), 1);
		json_object_set(unique, name, json_true());
		for (size_t g = 0; g < json_array_size(groups) && !seen; g++)
			seen = strcmp(json_string_value(json_array_get(groups, g)), group) == 0;
		if (!seen)
			json_array_append_new(groups, json_string(group));
	}
	if (json_object_size(unique)) {
		static const char *const all[] = {"RUNNING", "CHANGED", "FAILED", "OK", "SKIPPED", "UNREACHABLE"};
		for (size_t k = 0; k < sizeof all / sizeof all[0]; k++)
			add_int(stats, all[k], 0);
	}
	rc = api_reply(c, json_pack("{s:I, s:o, s:o}", "uniqueHosts", (json_int_t)json_object_size(unique), "stats",
				    stats, "hostGroups", groups));
	json_decref(runs);
	json_decref(unique);
	return rc;
}

#define SCHEMA_COUNT "{'type':'integer'}"

static const struct api_doc doc_playbooks = {
    .summary = "The Ansible playbook runs of a process, each with its progress",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID, {0}},
    .response = "{'type':'array','items':{'type':'object','properties':{'id':" SCHEMA_UUID
		",'name':{'type':'string'},'startedAt':" SCHEMA_DATE ",'hostsCount':" SCHEMA_COUNT
		",'failedHostsCount':" SCHEMA_COUNT ",'playsCount':" SCHEMA_COUNT ",'failedTasksCount':" SCHEMA_COUNT
		",'progress':" SCHEMA_COUNT ",'status':{'enum':['RUNNING','OK','FAILED']},'retryNum':" SCHEMA_COUNT
		"}}}",
    .errors = "403 404",
};

static const struct api_doc doc_plays = {
    .summary = "The plays of one Ansible playbook run of a process",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID,
					     {"playbookId", "string", "the playbook run (an id of …/ansible/playbooks)"},
					     {0}},
    .response = "{'type':'array','items':{'type':'object','properties':{'playId':" SCHEMA_UUID
		",'playName':{'type':'string'},'playOrder':" SCHEMA_COUNT ",'hostCount':" SCHEMA_COUNT
		",'taskCount':" SCHEMA_COUNT ",'taskStats':{'type':'object','additionalProperties':" SCHEMA_COUNT
		"},'finishedTaskCount':" SCHEMA_COUNT "}}}",
    .errors = "400 403 404",
};

static const struct api_doc doc_tasks = {
    .summary = "The tasks of one Ansible play of a process, with their counts by outcome",
    .params =
	(const struct api_param_doc[]){DOC_PROCESS_ID, {"playId", "string", "the play (required, a UUID)"}, {0}},
    .response = "{'type':'array','items':{'type':'object','properties':{'taskName':{'type':'string'},"
		"'type':{'enum':['TASK','SETUP','HANDLER']},'taskOrder':" SCHEMA_COUNT ",'okCount':" SCHEMA_COUNT
		",'failedCount':" SCHEMA_COUNT ",'unreachableCount':" SCHEMA_COUNT ",'skippedCount':" SCHEMA_COUNT
		",'runningCount':" SCHEMA_COUNT "}}}",
    .errors = "400 403 404",
};

static const struct api_doc doc_play_tasks = {
    .summary = "The tasks of one Ansible play of a process (the play in the path)",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID, {"playId", "string", "the play (a UUID)"}, {0}},
    .response = "{'type':'array','items':{'type':'object'}}",
    .errors = "400 403 404",
};

static const struct api_doc doc_stats = {
    .summary = "The hosts of a process's Ansible runs counted by outcome (Concord's deprecated stats)",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID, {0}},
    .response = "{'type':'object','properties':{'uniqueHosts':" SCHEMA_COUNT
		",'stats':{'type':'object','additionalProperties':" SCHEMA_COUNT "},'hostGroups':" SCHEMA_STRINGS
		"}}",
    .errors = "403 404",
};

const struct api_route api_process_ansible_run_routes[] = {
    {"GET", "/api/v1/process/{id}/ansible/playbooks", list_playbooks, 0, &doc_playbooks},
    {"GET", "/api/v1/process/{id}/ansible/{playbookId}/plays", list_plays, 0, &doc_plays},
    {"GET", "/api/v1/process/{id}/ansible/tasks", list_tasks, 0, &doc_tasks},
    {"GET", "/api/v1/process/{id}/ansible/{playId}/tasks", list_tasks, 0, &doc_play_tasks},
    {"GET", "/api/v1/process/{id}/ansible/stats", get_stats, 0, &doc_stats},
    {0},
};
