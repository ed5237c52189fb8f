/* Process locks over HTTP (the lock task, docs/api.md "Process locks"): who holds a lock
 * and who waits for it, and Concord's ProcessLocksResource for its clients:
 *
 *   GET  /api/v1/org/{org}/project/{project}/lock/{name}   a lock of scope PROJECT
 *   GET  /api/v1/org/{org}/lock/{name}                     a lock of scope ORG
 *   POST /api/v1/process/{id}/lock/{name}?scope=           try to take it for the process
 *   POST /api/v1/process/{id}/unlock/{name}?scope=         release it (handed to the next)
 *
 * {"name", "scope", "orgName", "projectName"?, "holder": {"instanceId", "since"} or null,
 *  "waiting": [{"instanceId", "since"}, …] in the order they get it}.  A lock nobody holds
 * is answered the same way (holder null), not 404: locks exist while they are used.
 * Reading a project's lock needs READER on the project, an org's lock membership. */
#include <string.h>

#include "api/doc_schemas.h"
#include "api/process_access.h"
#include "api/process_json.h"
#include "api/projects.h"
#include "base/datetime.h"
#include "base/str.h"
#include "queue/tasks/locks.h"
#include "store/orgs.h"
#include "store/process_locks.h"

static void iso_since(json_t *entry)
{
	char ts[DT_ISO_LEN];

	dt_format_iso(json_integer_value(json_object_get(entry, "since")), ts);
	json_object_set_new(entry, "since", json_string(ts));
}

static int reply_state(struct api_call *c, const struct lock_key *k, const char *org, const char *project)
{
	json_t *state = NULL, *w;
	size_t i;

	if (strlen(k->name) > LOCK_NAME_MAX)
		return api_fail(c, ERR_INVALID, "Lock name too long (at most %d bytes)", LOCK_NAME_MAX);
	if (store_lock_state(c->db, k, &state, &c->err))
		return -1;
	if (json_is_object(json_object_get(state, "holder")))
		iso_since(json_object_get(state, "holder"));
	json_array_foreach(json_object_get(state, "waiting"), i, w) iso_since(w);
	json_object_set_new(state, "name", json_string(k->name));
	json_object_set_new(state, "scope", json_string(k->scope));
	json_object_set_new(state, "orgName", json_string(org));
	if (project)
		json_object_set_new(state, "projectName", json_string(project));
	return api_reply(c, state);
}

static int project_lock(struct api_call *c)
{
	struct project p;
	int rc;

	if ((rc = projects_path(c, &p, ACCESS_READER)))
		return rc;
	return reply_state(c, &(struct lock_key){"PROJECT", p.id, api_param(c, "name")}, p.org_name, p.name);
}

static int org_lock(struct api_call *c)
{
	struct org o;
	int rc;

	if ((rc = store_org_find(c->db, api_param(c, "org"), &o, &c->err)) ||
	    (rc = rbac_org(c->db, &c->who, &o, RBAC_ORG_MEMBER, &c->err)))
		return rc;
	return reply_state(c, &(struct lock_key){"ORG", o.id, api_param(c, "name")}, o.name, NULL);
}

int api_process_lock_waits_json(struct api_call *c, const struct process *p, json_t *v)
{
	json_t *locks = NULL, *l, *waits;
	char reason[512];
	size_t i;

	if (p->status != PS_SUSPENDED)
		return 0;
	if (store_locks_waited(c->db, p->instance_id, &locks, &c->err))
		return -1;
	waits = json_array();
	json_array_foreach(locks, i, l)
	{
		const char *holder = json_string_value(json_object_get(l, "holder"));
		str_fmt_cut(reason, sizeof reason, "Waiting for lock '%s' held by process %s",
			    json_string_value(json_object_get(l, "name")), holder ? holder : "(none: being handed over)");
		json_array_append_new(waits, json_pack("{s:s, s:s, s:O, s:O, s:O, s:O, s:O, s:b}", "type",
						       "PROCESS_LOCK", "reason", reason, "instanceId",
						       json_object_get(l, "holder"), "orgId", json_object_get(l, "orgId"),
						       "projectId", json_object_get(l, "projectId"), "scope",
						       json_object_get(l, "scope"), "name", json_object_get(l, "name"),
						       "exclusive", 0));
	}
	json_decref(locks);
	if (json_array_size(waits))
		json_object_set_new(v, "waits", waits);
	else
		json_decref(waits);
	return 0;
}

/* The lock {name} of the path for process p, of the scope of ?scope= (Concord's rules: a
 * process of no project has none). */
static int process_lock_key(struct api_call *c, const struct process *p, struct lock_key *k)
{
	const char *given = http_query(c->req, "scope"), *scope = lock_scope_name(given);
	const char *name = api_param(c, "name");

	if (!scope)
		return api_fail(c, ERR_INVALID, "Unknown scope '%.64s', expected: ORG or PROJECT", given);
	if (strlen(name) > LOCK_NAME_MAX)
		return api_fail(c, ERR_INVALID, "Lock name too long (at most %d bytes)", LOCK_NAME_MAX);
	if (!p->project_id[0])
		return api_fail(c, ERR_INVALID, "Project is required");
	*k = (struct lock_key){scope, scope[0] == 'O' ? p->org_id : p->project_id, name};
	return 0;
}

/* Concord's tryLock: {"acquired", "info": the holder's LockEntry}; it never waits and
 * queues nothing (a client that did not get it tries again). */
static int try_lock(struct api_call *c)
{
	struct process p;
	struct lock_key k;
	char holder[UUID_STR_LEN];
	int rc;

	if ((rc = api_process_load(c, api_param(c, "id"), PROC_WRITE, &p)))
		return rc;
	if (PS_BIT(p.status) & PS_TERMINAL)
		rc = api_fail(c, ERR_CONFLICT, "Process %s has ended (%s): it takes no lock", p.instance_id,
			      proc_status_name(p.status));
	else if ((rc = process_lock_key(c, &p, &k)) == 0 &&
		 (rc = store_lock_take(c->db, &k, &(struct lock_owner){p.instance_id, p.org_id, p.project_id}, NULL,
				       holder, &c->err)) >= 0)
		rc = api_reply(c, json_pack("{s:b, s:{s:s, s:s, s:s, s:s, s:s}}", "acquired", rc == 1, "info",
					    "instanceId", holder, "orgId", p.org_id, "projectId", p.project_id,
					    "scope", k.scope, "name", k.name));
	store_process_cleanup(&p);
	return rc;
}

static int unlock(struct api_call *c)
{
	struct process p;
	struct lock_key k;
	json_t *handed = NULL;
	int rc;

	if ((rc = api_process_load(c, api_param(c, "id"), PROC_WRITE, &p)))
		return rc;
	if ((rc = process_lock_key(c, &p, &k)) == 0 &&
	    (rc = store_lock_release(c->db, &k, p.instance_id, &handed, &c->err)) == 0) {
		locks_resume_handed(c->app->queue, c->db, handed);
		http_resp_bytes(c->resp, 204, "", NULL, 0);
	}
	json_decref(handed);
	store_process_cleanup(&p);
	return rc;
}

#define LOCK_SCHEMA                                                                                                    \
	"{'type':'object','properties':{'name':{'type':'string'},'scope':{'type':'string'},"                          \
	"'orgName':{'type':'string'},'projectName':{'type':'string'},'holder':{'type':['object','null']},"           \
	"'waiting':{'type':'array','items':{'type':'object'}}}}"
#define DOC_LOCK_NAME                                                                                                  \
	{                                                                                                              \
		"name", "string", "the lock's name (the lock task's `name`)"                                           \
	}

static const struct api_doc doc_project = {
    .summary = "Who holds a project's process lock (scope PROJECT) and who waits for it, in order",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_PROJECT, DOC_LOCK_NAME, {0}},
    .response = LOCK_SCHEMA,
    .errors = "400 403 404",
};
static const struct api_doc doc_org = {
    .summary = "Who holds an organization's process lock (scope ORG) and who waits for it, in order",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_LOCK_NAME, {0}},
    .response = LOCK_SCHEMA,
    .errors = "400 403 404",
};

#define DOC_PROCESS_ID                                                                                                 \
	{                                                                                                              \
		"id", "string", "the process's instance id"                                                            \
	}
#define DOC_SCOPE                                                                                                      \
	{                                                                                                              \
		"scope", "string", "PROJECT (default) or ORG, any case"                                                   \
	}

static const struct api_doc doc_try = {
    .summary = "Try to take a lock for a process (Concord's tryLock): acquired, or who holds it; never waits",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID, DOC_LOCK_NAME, DOC_SCOPE, {0}},
    .response = "{'type':'object','properties':{'acquired':{'type':'boolean'},'info':{'type':'object'}}}",
    .errors = "400 403 404 409",
    .audit = {"PROCESS", "UPDATE", "lock"},
};
static const struct api_doc doc_unlock = {
    .summary = "Release a process's lock (nothing when it does not hold it); the next waiter gets it",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID, DOC_LOCK_NAME, DOC_SCOPE, {0}},
    .status = 204,
    .errors = "400 403 404",
    .audit = {"PROCESS", "UPDATE", "unlock"},
};

const struct api_route api_lock_routes[] = {
    {"POST", "/api/v1/process/{id}/lock/{name}", try_lock, 0, &doc_try},
    {"POST", "/api/v1/process/{id}/unlock/{name}", unlock, 0, &doc_unlock},
    {"GET", "/api/v1/org/{org}/project/{project}/lock/{name}", project_lock, 0, &doc_project},
    {"GET", "/api/v1/org/{org}/lock/{name}", org_lock, 0, &doc_org},
    {0},
};
