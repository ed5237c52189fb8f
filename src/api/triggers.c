/* Generic events (POST /api/v1/events/{eventSource}) and the triggers of a repository
 * (GET /api/v1/org/{org}/project/{project}/repository/{repo}/trigger); docs/api.md. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/doc_schemas.h"
#include "api/routes.h"
#include "auth/rbac.h"
#include "auth/rbac_start.h"
#include "base/str.h"
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

/* The repository of the path, for members of its org (Concord's orgMembersOnly) who read
 * its project (404 naming what is unknown). */
static int path_repository(struct api_call *c, struct repository *r)
{
	struct project p;
	struct org o;
	struct rbac_resource res;
	int rc;

	if ((rc = store_org_find(c->db, api_param(c, "org"), &o, &c->err)) ||
	    (rc = rbac_org(c->db, &c->who, &o, RBAC_ORG_MEMBER, &c->err)) ||
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

/* ---- GET /api/v2/trigger: the triggers of every repository the caller may read ---- */

struct v2_filter {
	const char *type, *org_id, *project_id, *repo_id;
};

static int v2_resolve(struct api_call *c, struct v2_filter *f, struct org *o, struct project *p, struct repository *r)
{
	const char *org = http_query(c->req, "orgName"), *project = http_query(c->req, "projectName");
	const char *repo = http_query(c->req, "repoName");
	int rc;

	memset(f, 0, sizeof *f);
	f->type = http_query(c->req, "type");
	if (f->type && (!*f->type || strlen(f->type) > 128))
		return api_fail(c, ERR_INVALID, "Invalid type value: %s", f->type);
	f->org_id = http_query(c->req, "orgId");
	f->project_id = http_query(c->req, "projectId");
	f->repo_id = http_query(c->req, "repoId");
	if (!f->org_id && org) {
		if (store_org_find(c->db, org, o, &c->err) ||
		    rbac_org(c->db, &c->who, o, RBAC_ORG_VIEW, &c->err))
			return api_fail(c, ERR_INVALID, "Organization not found: %s", org);
		f->org_id = o->id;
	}
	if (!f->project_id && project) {
		if (!f->org_id)
			return api_fail(c, ERR_INVALID, "Organization ID or name is required");
		if (store_project_find(c->db, f->org_id, project, p, &c->err))
			return api_fail(c, ERR_INVALID, "Project not found: %s", project);
		f->project_id = p->id;
	}
	if (!f->repo_id && repo) {
		if (!f->project_id)
			return api_fail(c, ERR_INVALID, "Invalid project ID or name");
		if ((rc = store_repository_find(c->db, f->project_id, repo, r, &c->err)))
			return rc == -ERR_NOT_FOUND ? api_fail(c, ERR_INVALID, "Repository not found") : rc;
		f->repo_id = r->id;
	}
	return 0;
}

/* Whether the caller reads project_id (remembered for the last project asked). */
static bool v2_may_read(struct api_call *c, const char *project_id, char *last, bool *last_ok)
{
	struct project p;
	struct rbac_resource res;
	struct err e;

	if (strcmp(last, project_id) == 0)
		return *last_ok;
	str_fmt_cut(last, UUID_STR_LEN, "%s", project_id);
	*last_ok = false;
	if (store_project_get(c->db, project_id, &p, &e) == 0) {
		res = rbac_project_res(&p);
		*last_ok = rbac_check(c->db, &c->who, &res, ACCESS_READER, &e) == 0;
	}
	return *last_ok;
}

static int list_v2(struct api_call *c)
{
	struct v2_filter f;
	struct org o;
	struct project p;
	struct repository r, *repos = NULL;
	size_t n_repos = 0;
	char last[UUID_STR_LEN] = "";
	bool last_ok = false;
	json_t *arr;
	int rc;

	if ((rc = v2_resolve(c, &f, &o, &p, &r)) ||
	    (rc = store_repository_list(c->db, f.project_id, &repos, &n_repos, &c->err)))
		return rc;
	if (!(arr = json_array())) {
		free(repos);
		return api_fail(c, ERR_INTERNAL, "out of memory");
	}
	for (size_t i = 0; i < n_repos; i++) {
		struct trigger *v = NULL;
		size_t n = 0;
		if ((f.org_id && strcmp(repos[i].org_id, f.org_id) != 0) || (f.repo_id && strcmp(repos[i].id, f.repo_id) != 0) ||
		    !v2_may_read(c, repos[i].project_id, last, &last_ok))
			continue;
		if ((rc = store_triggers_of_repo(c->db, repos[i].id, &v, &n, &c->err)))
			break;
		for (size_t j = 0; j < n; j++)
			if (!f.type || strcmp(v[j].event_source, f.type) == 0)
				json_array_append_new(arr, trigger_json(&v[j], &repos[i]));
		store_trigger_free_list(v, n);
	}
	free(repos);
	if (rc) {
		json_decref(arr);
		return rc;
	}
	return api_reply(c, arr);
}

/* ---- refresh: one repository's triggers (WRITER), or every repository's (admins) ---- */

static int refresh_one(struct api_call *c)
{
	struct repository r;
	struct project p;
	struct rbac_resource res;
	int rc;

	if (!c->app->triggers)
		return api_fail(c, ERR_UNAVAILABLE, "triggers are not running on this server");
	if ((rc = path_repository(c, &r)) || (rc = store_project_get(c->db, r.project_id, &p, &c->err)))
		return rc;
	res = rbac_project_res(&p);
	if ((rc = rbac_check(c->db, &c->who, &res, ACCESS_WRITER, &c->err)))
		return rc;
	if (triggers_reread(c->app->triggers, c->db, &r, &c->err))
		return api_fail(c, c->err.code == ERR_INVALID ? ERR_INVALID : c->err.code,
				"Refresh failed (repository ID: %s): %s", r.id, c->err.msg);
	return api_reply_result(c, "UPDATED", r.id);
}

static int refresh_all(struct api_call *c)
{
	struct repository *v = NULL;
	size_t n = 0, done = 0;
	json_t *failed;
	struct err e;
	int rc;

	if (rbac_admin(&c->who, &c->err)) /* TriggerResource.assertAdmin's words */
		return api_fail(c, ERR_FORBIDDEN, "Not authorized, admin access required");
	if (!c->app->triggers)
		return api_fail(c, ERR_UNAVAILABLE, "triggers are not running on this server");
	if ((rc = store_repository_list(c->db, NULL, &v, &n, &c->err)))
		return rc;
	failed = json_array();
	for (size_t i = 0; i < n; i++) {
		if (v[i].disabled)
			continue;
		if (triggers_reread(c->app->triggers, c->db, &v[i], &e))
			json_array_append_new(failed, json_pack("{s:s, s:s, s:s, s:s, s:s}", "repositoryId", v[i].id,
								"orgName", v[i].org_name, "projectName",
								v[i].project_name, "repositoryName", v[i].name, "error",
								e.msg));
		else
			done++;
	}
	free(v);
	return api_reply(c, json_pack("{s:b, s:I, s:o}", "ok", 1, "refreshed", (json_int_t)done, "failed", failed));
}

static const struct api_doc doc_list_v2 = {
    .summary = "Triggers of the repositories the caller may read, by type, org, project or repository",
    .params = (const struct api_param_doc[]){{"type", "string", "event source: cron, github, manual, or a generic name"},
					     {"orgId", "string", "organization id"},
					     {"orgName", "string", "organization name"},
					     {"projectId", "string", "project id"},
					     {"projectName", "string", "project name (with orgName or orgId)"},
					     {"repoId", "string", "repository id"},
					     {"repoName", "string", "repository name (with a project)"},
					     {0}},
    .response = "{'type':'array','items':" SCHEMA_OBJECT "}",
    .errors = "400",
};
static const struct api_doc doc_refresh_one = {
    .summary = "Reads a repository's triggers again (fetches it first)",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_PROJECT, {"repo", "string", "the repository's name"}, {0}},
    .errors = "400 403 404 503",
    .audit = {"REPOSITORY", "UPDATE", NULL},
};
static const struct api_doc doc_refresh_all = {
    .summary = "Reads every repository's triggers again (admins)",
    .response = "{'type':'object','properties':{'ok':{'type':'boolean'},'refreshed':{'type':'integer'},"
		"'failed':{'type':'array','items':" SCHEMA_OBJECT "}}}",
    .errors = "403 503",
    .audit = {"REPOSITORY", "UPDATE", NULL},
};

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
    {"POST", "/api/v1/org/{org}/project/{project}/repository/{repo}/trigger", refresh_one, API_SLOW, &doc_refresh_one},
    /* Concord's TriggerResource serves these under /repo/ (its docs say /repository/) */
    {"GET", "/api/v1/org/{org}/project/{project}/repo/{repo}/trigger", list, 0, &doc_list},
    {"POST", "/api/v1/org/{org}/project/{project}/repo/{repo}/trigger", refresh_one, API_SLOW, &doc_refresh_one},
    {"GET", "/api/v2/trigger", list_v2, 0, &doc_list_v2},
    {"POST", "/api/v1/org/trigger/refresh", refresh_all, API_SLOW, &doc_refresh_all},
    {"POST", "/api/v2/trigger/refresh", refresh_all, API_SLOW, &doc_refresh_all},
    {0},
};
