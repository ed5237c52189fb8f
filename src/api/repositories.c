/* /api/v1/org/{org}/project/{project}/repository and /api/v1/repository/validate: the
 * repositories of a project (api/repositories.h, docs/api.md "Repositories").
 *
 * Create, update and refresh are all or nothing: the repository is fetched and its
 * definition loaded (and its triggers read) before anything is stored, so a git error, an
 * unknown branch or a definition that does not load is a 400 that leaves the stored
 * repository and its triggers as they were.  Such a request waits for the fetch, at most
 * --repo-fetch-timeout seconds (503 after that). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "api/doc_schemas.h"
#include "api/policy_checks.h"
#include "api/projects.h"
#include "api/repositories.h"
#include "api/routes.h"
#include "base/datetime.h"
#include "base/jsonx.h"
#include "base/str.h"
#include "flow/model.h"
#include "repo/repo.h"
#include "store/orgs.h"
#include "triggers/triggers.h"

static void set_str(json_t *v, const char *key, const char *s)
{
	if (s && *s)
		json_object_set_new(v, key, json_string(s));
}

json_t *repository_json(const struct repository *r, const char *meta)
{
	json_t *v = json_pack("{s:s,s:s,s:s,s:s,s:b,s:b}", "id", r->id, "projectId", r->project_id, "name", r->name,
			      "url", r->url, "disabled", r->disabled, "triggersDisabled", r->triggers_disabled);
	json_t *m = meta ? json_loads(meta, 0, NULL) : NULL;

	set_str(v, "branch", r->branch);
	set_str(v, "commitId", r->commit_id);
	set_str(v, "path", r->path);
	set_str(v, "secretId", r->secret_id);
	set_str(v, "secretName", r->secret_name);
	if (r->secret_id[0])
		json_object_set_new(v, "secretStoreType", json_string("concord"));
	if (json_is_object(m))
		json_object_set(v, "meta", m);
	json_decref(m);
	return v;
}

static json_t *entry(struct api_call *c, const struct repository *r)
{
	char *meta = NULL;
	json_t *v;

	if (store_repository_meta(c->db, r->id, &meta, &c->err))
		return NULL;
	v = repository_json(r, meta);
	free(meta);
	return v;
}

int repositories_map(struct api_call *c, const struct project *p, json_t **out)
{
	struct repository *all = NULL;
	size_t n = 0;
	int rc = store_repository_list(c->db, p->id, &all, &n, &c->err);

	*out = json_object();
	for (size_t i = 0; i < n && rc == 0; i++) {
		json_t *v = entry(c, &all[i]);
		if (!v)
			rc = -1;
		else
			json_object_set_new(*out, all[i].name, v);
	}
	free(all);
	if (rc) {
		json_decref(*out);
		*out = NULL;
	}
	return rc;
}

/* The repository {repo} of the path's project, with `need` on the project. */
static int path_repo(struct api_call *c, struct project *p, struct repository *r, enum access_level need)
{
	int rc = projects_path(c, p, need);

	return rc ? rc : store_repository_find(c->db, p->id, api_param(c, "repo"), r, &c->err);
}

/* The repository a body updates: by "id" (in this project), else by "name" when taken.
 * *exists false: a new repository of p (r prepared). */
static int body_target(struct api_call *c, json_t *body, const struct project *p, struct repository *r, bool *exists)
{
	const char *id = NULL, *name = NULL;
	int rc;

	if (jsonx_str(body, "id", false, &id, &c->err) || jsonx_str(body, "name", false, &name, &c->err))
		return api_recode(c, ERR_INVALID);
	*exists = true;
	if (id) {
		if (!uuid_valid(id, strlen(id)))
			return api_fail(c, ERR_INVALID, "'id' must be a UUID, got '%.64s'", id);
		rc = store_repository_get(c->db, id, r, &c->err);
		if (rc == 0 && strcmp(r->project_id, p->id) != 0)
			return api_fail(c, ERR_NOT_FOUND, "Repository not found: %.64s", id);
		return rc;
	}
	if (!name || !*name)
		return api_fail(c, ERR_INVALID, "'name' is required");
	rc = store_repository_find(c->db, p->id, name, r, &c->err);
	if (rc != -ERR_NOT_FOUND)
		return rc;
	*exists = false;
	memset(r, 0, sizeof *r);
	uuid_v4(r->id);
	memcpy(r->project_id, p->id, sizeof r->project_id);
	memcpy(r->project_name, p->name, sizeof r->project_name);
	memcpy(r->org_id, p->org_id, sizeof r->org_id);
	memcpy(r->org_name, p->org_name, sizeof r->org_name);
	r->created_at = dt_now_ms();
	return 0;
}

/* A rename onto a name taken in the project is 409 before anything is fetched. */
static int check_name_free(struct api_call *c, const struct repository *r)
{
	struct repository other;
	struct err e;
	int rc = store_repository_find(c->db, r->project_id, r->name, &other, &e);

	if (rc == -ERR_NOT_FOUND)
		return 0;
	if (rc) {
		c->err = e;
		return rc;
	}
	return strcmp(other.id, r->id) == 0 ? 0 : api_fail(c, ERR_CONFLICT, "Repository already exists: %s", r->name);
}

static int refresh_triggers(struct api_call *c, const struct repository *r, const struct model *m)
{
	return c->app->triggers ? triggers_refresh(c->app->triggers, c->db, r, m, &c->err) : 0;
}

/* Validate: the triggers refresh would store, checked and not stored. */
static int check_triggers(struct api_call *c, const struct repository *r, const struct model *m)
{
	return triggers_check(m, r, &c->err) ? api_recode(c, ERR_INVALID) : 0;
}

/* A new repository: the row, then its triggers; a trigger error takes the row back. */
static int store_new(struct api_call *c, const struct repository *r, const char *meta, const struct repo_commit *commit,
		     const struct model *m)
{
	struct err ignored;
	int rc;

	if ((rc = store_repository_insert(c->db, r, &c->err)) ||
	    (meta && (rc = store_repository_set_meta(c->db, r->id, meta, &c->err))) ||
	    (rc = store_repository_fetched(c->db, r->id, dt_now_ms(), commit->id, &c->err)) ||
	    (rc = refresh_triggers(c, r, m))) {
		if (store_repository_delete(c->db, r->id, &ignored) && ignored.code != ERR_NOT_FOUND)
			return api_fail(c, ERR_INTERNAL, "%s (and the new repository could not be taken back: %s)",
					c->err.msg, ignored.msg);
		return rc;
	}
	return 0;
}

/* An update: the triggers first (they keep the old ones on a parse error), then the row. */
static int store_update(struct api_call *c, const struct repository *r, const char *meta,
			const struct repo_commit *commit, const struct model *m)
{
	int rc;

	if ((rc = refresh_triggers(c, r, m)) || (rc = store_repository_update(c->db, r, &c->err)) ||
	    (meta && (rc = store_repository_set_meta(c->db, r->id, meta, &c->err))))
		return rc;
	return store_repository_fetched(c->db, r->id, dt_now_ms(), commit->id, &c->err);
}

static int create_or_update(struct api_call *c)
{
	struct repo_commit commit;
	struct repository r;
	struct project p;
	struct model *m = NULL;
	json_t *body = NULL;
	char *meta = NULL;
	bool exists = false;
	int rc;

	if ((rc = projects_path(c, &p, ACCESS_WRITER)) || (rc = repository_available(c)) ||
	    (rc = api_body_object(c, &body)) || (rc = body_target(c, body, &p, &r, &exists)) ||
	    (rc = repository_body(c, body, &r, &meta)) || (rc = check_name_free(c, &r)) ||
	    (rc = api_policy_repository(c, &r, exists)))
		goto out;
	if ((rc = repository_load(c, &r, &commit, &m))) {
		if (!exists)
			repo_forget(c->app->repos, r.id);
		goto out;
	}
	rc = exists ? store_update(c, &r, meta, &commit, m) : store_new(c, &r, meta, &commit, m);
	if (rc && !exists)
		repo_forget(c->app->repos, r.id);
	api_audit_note(c, "repositoryName", r.name);
	if (rc == 0)
		rc = api_reply_result(c, exists ? "UPDATED" : "CREATED", r.id);
out:
	model_free(m);
	free(meta);
	json_decref(body);
	return rc;
}

/* ---- the `repositories` map of a project body (projects.c) ---------------------------- */

struct repo_map_entry {
	struct repository r;
	struct repo_commit commit;
	struct model *m;
	char *meta;
	bool exists;
};

struct repo_map {
	struct repo_map_entry *v;
	size_t n;
};

void repositories_map_free(struct repo_map *map)
{
	if (!map)
		return;
	for (size_t i = 0; i < map->n; i++) {
		model_free(map->v[i].m);
		free(map->v[i].meta);
	}
	free(map->v);
	free(map);
}

/* One entry: its key names it unless it names itself. */
static int prepare_entry(struct api_call *c, const struct project *p, const char *key, json_t *body,
			 struct repo_map_entry *e)
{
	json_t *named = json_deep_copy(body);
	int rc;

	if (!named)
		return api_fail(c, ERR_INTERNAL, "out of memory");
	if (!json_object_get(named, "name") && !json_object_get(named, "id"))
		json_object_set_new(named, "name", json_string(key));
	rc = body_target(c, named, p, &e->r, &e->exists);
	if (rc == 0)
		rc = repository_body(c, named, &e->r, &e->meta);
	if (rc == 0 && e->exists)
		rc = check_name_free(c, &e->r);
	json_decref(named);
	if (rc)
		err_prefix(&c->err, "'repositories.%.128s'", key);
	return rc;
}

int repositories_map_prepare(struct api_call *c, const struct project *p, json_t *map, struct repo_map **out)
{
	struct repo_map *pm;
	const char *key;
	json_t *body;
	int rc = 0;

	*out = NULL;
	if (!json_is_object(map))
		return api_fail(c, ERR_INVALID, "'repositories' must be an object: {name: repository}");
	if (json_object_size(map) > REPOSITORIES_MAP_MAX)
		return api_fail(c, ERR_INVALID, "'repositories' names more than %d repositories", REPOSITORIES_MAP_MAX);
	if (json_object_size(map) && (rc = repository_available(c)))
		return rc;
	if (!(pm = calloc(1, sizeof *pm)) || !(pm->v = calloc(json_object_size(map) + 1, sizeof *pm->v))) {
		free(pm);
		return api_fail(c, ERR_INTERNAL, "out of memory");
	}
	json_object_foreach(map, key, body)
	{
		struct repo_map_entry *e = &pm->v[pm->n];
		if (!json_is_object(body)) {
			rc = api_fail(c, ERR_INVALID, "'repositories.%.128s' must be an object", key);
			break;
		}
		if ((rc = prepare_entry(c, p, key, body, e)))
			break;
		pm->n++;
		for (size_t i = 0; i + 1 < pm->n; i++)
			if (strcmp(pm->v[i].r.name, e->r.name) == 0) {
				rc = api_fail(c, ERR_INVALID, "'repositories' names %s twice", e->r.name);
				break;
			}
		if (rc || (rc = api_policy_repository(c, &e->r, e->exists)))
			break;
		if ((rc = repository_load(c, &e->r, &e->commit, &e->m))) {
			err_prefix(&c->err, "'repositories.%.128s'", key);
			break;
		}
	}
	if (rc) {
		for (size_t i = 0; i < pm->n; i++)
			if (!pm->v[i].exists)
				repo_forget(c->app->repos, pm->v[i].r.id);
		repositories_map_free(pm);
		return rc;
	}
	*out = pm;
	return 0;
}

/* With replace, the project's repositories the map does not name go (Concord replaces them
 * all). */
static int drop_unnamed(struct api_call *c, const struct project *p, const struct repo_map *map)
{
	struct repository *all = NULL;
	size_t n = 0;
	int rc = store_repository_list(c->db, p->id, &all, &n, &c->err);

	for (size_t i = 0; rc == 0 && i < n; i++) {
		bool named = false;
		for (size_t k = 0; k < map->n && !named; k++)
			named = strcmp(map->v[k].r.id, all[i].id) == 0;
		if (named)
			continue;
		if ((rc = store_repository_delete(c->db, all[i].id, &c->err)) == 0 && c->app->repos)
			repo_forget(c->app->repos, all[i].id);
	}
	free(all);
	return rc;
}

int repositories_map_store(struct api_call *c, const struct project *p, const struct repo_map *map, bool replace)
{
	int rc = 0;

	for (size_t i = 0; rc == 0 && i < map->n; i++) {
		const struct repo_map_entry *e = &map->v[i];
		rc = e->exists ? store_update(c, &e->r, e->meta, &e->commit, e->m)
			       : store_new(c, &e->r, e->meta, &e->commit, e->m);
	}
	return rc == 0 && replace ? drop_unnamed(c, p, map) : rc;
}

static bool name_has(const char *name, const char *filter)
{
	size_t n = strlen(filter);

	for (; *name; name++)
		if (strncasecmp(name, filter, n) == 0)
			return true;
	return n == 0;
}

static int list(struct api_call *c)
{
	const char *filter = http_query(c->req, "filter");
	struct repository *all = NULL;
	size_t n = 0, limit, offset, seen = 0;
	struct project p;
	json_t *arr = NULL, *v;
	int rc;

	if ((rc = projects_path(c, &p, ACCESS_READER)) || (rc = api_paging(c, &limit, &offset)) ||
	    (rc = store_repository_list(c->db, p.id, &all, &n, &c->err)))
		goto out;
	arr = json_array();
	for (size_t i = 0; i < n && json_array_size(arr) < limit; i++) {
		if (filter && !name_has(all[i].name, filter))
			continue;
		if (seen++ < offset)
			continue;
		if (!(v = entry(c, &all[i]))) {
			rc = -1;
			goto out;
		}
		json_array_append_new(arr, v);
	}
	rc = api_reply(c, arr);
	arr = NULL;
out:
	json_decref(arr);
	free(all);
	return rc;
}

static int get(struct api_call *c)
{
	struct repository r;
	struct project p;
	json_t *v;
	int rc;

	if ((rc = path_repo(c, &p, &r, ACCESS_READER)))
		return rc;
	return (v = entry(c, &r)) ? api_reply(c, v) : -1;
}

static int delete (struct api_call *c)
{
	struct repository r;
	struct project p;
	int rc;

	if ((rc = path_repo(c, &p, &r, ACCESS_WRITER)) || (rc = store_repository_delete(c->db, r.id, &c->err)))
		return rc;
	if (c->app->repos)
		repo_forget(c->app->repos, r.id);
	return api_reply_result(c, "DELETED", NULL);
}

static int reply_validated(struct api_call *c)
{
	return api_reply(c, json_pack("{s:b,s:s,s:[],s:[]}", "ok", 1, "result", "VALIDATED", "errors", "warnings"));
}

/* Fetch and load the definition; refresh also re-reads the triggers (a definition that
 * does not load keeps the old ones), validate changes nothing. */
static int reload(struct api_call *c, bool refresh)
{
	struct repo_commit commit;
	struct repository r;
	struct project p;
	struct model *m = NULL;
	int rc;

	if ((rc = path_repo(c, &p, &r, ACCESS_READER)) || (rc = repository_load(c, &r, &commit, &m)))
		goto out;
	if (refresh ? (rc = refresh_triggers(c, &r, m)) != 0 : (rc = check_triggers(c, &r, m)) != 0)
		goto out;
	rc = refresh ? api_reply_result(c, "UPDATED", NULL) : reply_validated(c);
out:
	model_free(m);
	return rc;
}

static int refresh(struct api_call *c)
{
	return reload(c, true);
}

static int validate(struct api_call *c)
{
	return reload(c, false);
}

/* The project a validate body names: "orgId"/"orgName"/"org" and "projectId"/"projectName"/
 * "project" (names as in the other start and project bodies). */
static int body_project(struct api_call *c, json_t *body, struct project *p)
{
	const char *org = NULL, *org_id = NULL, *project = NULL, *project_id = NULL;
	struct rbac_resource res;
	struct org o;
	int rc;

	if (jsonx_str(body, "orgId", false, &org_id, &c->err) ||
	    jsonx_str(body, "projectId", false, &project_id, &c->err) ||
	    (jsonx_str(body, "orgName", false, &org, &c->err) ||
	     (!org && jsonx_str(body, "org", false, &org, &c->err))) ||
	    (jsonx_str(body, "projectName", false, &project, &c->err) ||
	     (!project && jsonx_str(body, "project", false, &project, &c->err))))
		return api_recode(c, ERR_INVALID);
	if (project_id) {
		if (!uuid_valid(project_id, strlen(project_id)))
			return api_fail(c, ERR_INVALID, "'projectId' must be a UUID, got '%.64s'", project_id);
		rc = store_project_get(c->db, project_id, p, &c->err);
	} else {
		if (!project || (!org && !org_id))
			return api_fail(c, ERR_INVALID, "'projectId', or 'project' and 'org', are required");
		if (org_id && !uuid_valid(org_id, strlen(org_id)))
			return api_fail(c, ERR_INVALID, "'orgId' must be a UUID, got '%.64s'", org_id);
		rc = org_id ? store_org_get(c->db, org_id, &o, &c->err) : store_org_find(c->db, org, &o, &c->err);
		if (rc == 0 && (rc = rbac_org(c->db, &c->who, &o, RBAC_ORG_VIEW, &c->err)) == 0)
			rc = store_project_find(c->db, o.id, project, p, &c->err);
	}
	if (rc)
		return c->err.code == ERR_NOT_FOUND ? api_recode(c, ERR_INVALID) : rc;
	res = projects_resource(p);
	return rbac_check(c->db, &c->who, &res, ACCESS_READER, &c->err);
}

/* POST /api/v1/repository/validate: a stored repository ({org, project, name}) or one not
 * stored yet (a create body with org and project): fetched into a clone of its own that
 * is removed afterwards, its definition loaded, nothing stored.  An unsaved one needs
 * what creating it would need (WRITER on the project, READER on its secret). */
static int validate_any(struct api_call *c)
{
	struct repo_commit commit;
	struct repository r = {0};
	struct project p;
	struct model *m = NULL;
	struct rbac_resource res;
	const char *name = NULL;
	json_t *body = NULL;
	char *meta = NULL;
	bool adhoc;
	int rc;

	if ((rc = repository_available(c)) || (rc = api_body_object(c, &body)) || (rc = body_project(c, body, &p)))
		goto out;
	adhoc = json_object_get(body, "url") != NULL;
	if (!adhoc) {
		if (jsonx_str(body, "name", true, &name, &c->err)) {
			rc = api_fail(c, ERR_INVALID, "'name' of a repository of the project, or 'url', is required");
			goto out;
		}
		if ((rc = store_repository_find(c->db, p.id, name, &r, &c->err)) ||
		    (rc = repository_load(c, &r, &commit, &m)) || (rc = check_triggers(c, &r, m)))
			goto out;
		rc = reply_validated(c);
		goto out;
	}
	res = projects_resource(&p);
	uuid_v4(r.id);
	memcpy(r.project_id, p.id, sizeof r.project_id);
	memcpy(r.project_name, p.name, sizeof r.project_name);
	memcpy(r.org_id, p.org_id, sizeof r.org_id);
	memcpy(r.org_name, p.org_name, sizeof r.org_name);
	str_set_lit(r.name, "validate");
	if ((rc = rbac_check(c->db, &c->who, &res, ACCESS_WRITER, &c->err)) ||
	    (rc = repository_body(c, body, &r, &meta)))
		goto out;
	rc = repository_load(c, &r, &commit, &m);
	repo_forget(c->app->repos, r.id);
	if (rc == 0 && (rc = check_triggers(c, &r, m)) == 0)
		rc = reply_validated(c);
out:
	model_free(m);
	free(meta);
	json_decref(body);
	return rc;
}

#define DOC_REPO                                                                                                       \
	{                                                                                                              \
		"repo", "string", "the repository's name"                                                              \
	}
#define SCHEMA_REPO_FIELDS                                                                                             \
	"'name':{'type':'string'},'url':{'type':'string'},'branch':{'type':'string'},'commitId':{'type':'string'},"    \
	"'path':{'type':'string'},'secretId':" SCHEMA_UUID ",'secretName':{'type':'string'},"                          \
	"'disabled':{'type':'boolean'},'triggersDisabled':{'type':'boolean'},'meta':" SCHEMA_OBJECT
#define SCHEMA_REPO "{'type':'object','properties':{'id':" SCHEMA_UUID "," SCHEMA_REPO_FIELDS "}}"
#define SCHEMA_VALIDATED                                                                                               \
	"{'type':'object','properties':{'ok':{'type':'boolean'},'result':{'const':'VALIDATED'},"                       \
	"'errors':" SCHEMA_STRINGS ",'warnings':" SCHEMA_STRINGS "}}"

static const struct api_doc doc_create = {
    .summary = "Create a repository of a project or update one (project writers)",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_PROJECT, {0}},
    .body = "{'type':'object','properties':{'id':" SCHEMA_UUID "," SCHEMA_REPO_FIELDS "}}",
    .response = SCHEMA_RESULT,
    .errors = "400 403 404 409 415 429 503",
    .audit = {"REPOSITORY", "CREATE_OR_UPDATE", NULL},
};
static const struct api_doc doc_list = {
    .summary = "The repositories of a project",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_PROJECT, DOC_FILTER, DOC_PAGING, {0}},
    .response = "{'type':'array','items':" SCHEMA_REPO "}",
    .errors = "400 403 404",
};
static const struct api_doc doc_get = {
    .summary = "A repository",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_PROJECT, DOC_REPO, {0}},
    .response = SCHEMA_REPO,
    .errors = "403 404",
};
static const struct api_doc doc_delete = {
    .summary = "Delete a repository (and its triggers)",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_PROJECT, DOC_REPO, {0}},
    .response = SCHEMA_RESULT,
    .errors = "403 404",
    .audit = {"REPOSITORY", "DELETE", NULL},
};
static const struct api_doc doc_refresh = {
    .summary = "Fetch a repository and read its triggers again",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_PROJECT, DOC_REPO, {0}},
    .response = SCHEMA_RESULT,
    .errors = "400 403 404 429 503",
    .audit = {"REPOSITORY", "UPDATE", "refresh"},
};
static const struct api_doc doc_validate = {
    .summary = "Fetch a repository and check its definition (changes nothing)",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_PROJECT, DOC_REPO, {0}},
    .response = SCHEMA_VALIDATED,
    .errors = "400 403 404 429 503",
};
static const struct api_doc doc_validate_any = {
    .summary = "Check the definition of a repository given by org, project and name in the body",
    .body =
	"{'type':'object','properties':{'orgId':" SCHEMA_UUID ",'orgName':{'type':'string'},'projectId':" SCHEMA_UUID
	",'projectName':{'type':'string'},'id':" SCHEMA_UUID ",'name':{'type':'string'}}}",
    .response = SCHEMA_VALIDATED,
    .errors = "400 403 404 415 429 503",
};

const struct api_route api_repository_routes[] = {
    {"POST", "/api/v1/org/{org}/project/{project}/repository", create_or_update, API_FETCHES, &doc_create},
    {"GET", "/api/v1/org/{org}/project/{project}/repository", list, 0, &doc_list},
    {"GET", "/api/v1/org/{org}/project/{project}/repository/{repo}", get, 0, &doc_get},
    {"DELETE", "/api/v1/org/{org}/project/{project}/repository/{repo}", delete, 0, &doc_delete},
    {"POST", "/api/v1/org/{org}/project/{project}/repository/{repo}/refresh", refresh, API_FETCHES, &doc_refresh},
    {"POST", "/api/v1/org/{org}/project/{project}/repository/{repo}/validate", validate, API_FETCHES, &doc_validate},
    {"POST", "/api/v1/repository/validate", validate_any, API_FETCHES, &doc_validate_any},
    {0},
};
