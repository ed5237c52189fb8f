/* Generic events (POST /api/v1/events/{eventSource}) and the triggers of a repository
 * (GET /api/v1/org/{org}/project/{project}/repository/{repo}/trigger); docs/api.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/doc_schemas.h"
#include "api/routes.h"
#include "auth/rbac.h"
#include "auth/rbac_start.h"
#include "base/uuid.h"
#include "store/orgs.h"
#include "store/projects.h"
#include "store/repositories.h"
#include "store/triggers.h"
#include "triggers/triggers.h"

static int event(struct api_call *c)
{
	json_t *body = NULL, *ids = NULL;
	char id[UUID_STR_LEN];
	int rc;

	if (!c->app->triggers)
		return api_fail(c, ERR_UNAVAILABLE, "triggers are not running on this server");
	if ((rc = api_body_object(c, &body)))
		return rc;
	/* As Concord: an event without an id gets one (the processes see it as event.id). */
	if (!json_object_get(body, "id")) {
		uuid_v4(id);
		json_object_set_new(body, "id", json_string(id));
	}
	rc = triggers_event(c->app->triggers, c->db, &c->who, api_param(c, "eventSource"), body, &ids, &c->err);
	json_decref(body);
	if (rc)
		return rc;
	return api_reply(c, json_pack("{s:b, s:o}", "ok", 1, "instanceIds", ids));
}

/* v, or a new empty array/object when NULL (made only then: it would leak otherwise). */
static json_t *opt_json(json_t *v, bool array)
{
	return v ? json_incref(v) : array ? json_array() : json_object();
}

/* Concord's TriggerEntry. */
static json_t *trigger_json(const struct trigger *t, const struct repository *r)
{
	json_t *v = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "id", t->id, "orgId", r->org_id, "orgName",
			      r->org_name, "projectId", r->project_id, "projectName", r->project_name, "repositoryId",
			      r->id, "repositoryName", r->name, "eventSource", t->event_source);

	json_object_set_new(v, "activeProfiles", opt_json(t->active_profiles, true));
	json_object_set_new(v, "arguments", opt_json(t->arguments, false));
	json_object_set_new(v, "conditions", opt_json(t->conditions, false));
	json_object_set_new(v, "cfg", opt_json(t->cfg, false));
	return v;
}

/* The repository of the path, for readers of its project (404 naming what is unknown). */
static int path_repository(struct api_call *c, struct repository *r)
{
	struct project p;
	struct org o;
	struct rbac_resource res;
	int rc;

	if ((rc = store_org_find(c->db, api_param(c, "org"), &o, &c->err)) ||
	    (rc = rbac_org(c->db, &c->who, &o, RBAC_ORG_VIEW, &c->err)) ||
	    (rc = store_project_find(c->db, o.id, api_param(c, "project"), &p, &c->err)))
		return rc;
	res = rbac_project_res(&p);
	if ((rc = rbac_check(c->db, &c->who, &res, ACCESS_READER, &c->err)))
		return rc;
	return store_repository_find(c->db, p.id, api_param(c, "repo"), r, &c->err);
}

static int list(struct api_call *c)
{
	struct repository r;
	struct trigger *v = NULL;
	size_t n = 0;
	json_t *arr;
	int rc;

	if ((rc = path_repository(c, &r)) || (rc = store_triggers_of_repo(c->db, r.id, &v, &n, &c->err)))
		return rc;
	arr = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, trigger_json(&v[i], &r));
	store_trigger_free_list(v, n);
	return api_reply(c, arr);
}

static const struct api_doc doc_event = {
    .summary = "An external event: starts the processes of the matching triggers",
    .params = (const struct api_param_doc[]){{"eventSource", "string", "the triggers' event source"}, {0}},
    .body = SCHEMA_OBJECT,
    .response = "{'type':'object','properties':{'ok':{'type':'boolean'},"
		"'instanceIds':{'type':'array','items':" SCHEMA_UUID "}}}",
    .errors = "400 403 415",
    .audit = {"EXTERNAL_EVENT", "ACCESS", NULL},
};
static const struct api_doc doc_list = {
    .summary = "The triggers read from a repository",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_PROJECT, {"repo", "string", "the repository's name"}, {0}},
    .response = "{'type':'array','items':{'type':'object','properties':{'id':" SCHEMA_UUID
		",'eventSource':{'type':'string'},'entryPoint':{'type':'string'},'conditions':" SCHEMA_OBJECT
		",'arguments':" SCHEMA_OBJECT ",'cfg':" SCHEMA_OBJECT "}}}",
    .errors = "403 404",
};

const struct api_route api_trigger_routes[] = {
    {"POST", "/api/v1/events/{eventSource}", event, 0, &doc_event},
    {"GET", "/api/v1/org/{org}/project/{project}/repository/{repo}/trigger", list, 0, &doc_list},
    {0},
};
