/* /api/v1/org/{org}/project: projects and their team access rules. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/doc_schemas.h"
#include "api/access_rules.h"
#include "api/policy_checks.h"
#include "api/projects.h"
#include "api/repositories.h"
#include "api/routes.h"
#include "auth/rbac.h"
#include "base/datetime.h"
#include "base/jsonx.h"
#include "base/log.h"
#include "base/names.h"
#include "base/str.h"
#include "repo/repo.h"
#include "store/orgs.h"
#include "store/users.h"

/* rawPayloadMode's and outVariablesMode's values. */
static const char *const raw_payload_modes[] = {"DISABLED", "OWNERS", "TEAM_MEMBERS", "ORG_MEMBERS", "EVERYONE"};

struct rbac_resource projects_resource(const struct project *p)
{
	return (struct rbac_resource){
	    .type = "PROJECT",
	    .kind = "project",
	    .id = p->id,
	    .name = p->name,
	    .org_id = p->org_id,
	    .owner_id = p->owner_id,
	    .is_public = strcmp(p->visibility, "PUBLIC") == 0,
	};
}

static json_t *project_json(const struct project *p)
{
	json_t *v = json_pack("{s:s,s:s,s:s,s:s,s:s,s:s,s:b}", "id", p->id, "name", p->name, "orgId", p->org_id,
			      "orgName", p->org_name, "visibility", p->visibility, "rawPayloadMode",
			      p->raw_payload_mode, "acceptsRawPayload", strcmp(p->raw_payload_mode, "DISABLED") != 0);
	json_object_set_new(v, "outVariablesMode",
			    json_string(p->out_variables_mode[0] ? p->out_variables_mode : "DISABLED"));
	char ts[DT_ISO_LEN];

	if (p->description[0])
		json_object_set_new(v, "description", json_string(p->description));
	if (p->owner_id[0])
		json_object_set_new(v, "owner",
				    json_pack("{s:s,s:s}", "id", p->owner_id, "username", p->owner_username));
	dt_format_iso(p->created_at, ts);
	json_object_set_new(v, "createdAt", json_string(ts));
	return v;
}

/* The org of the path, unless it is a PRIVATE org the caller cannot see: that is answered
 * as for a missing org (rbac_org), before anything about its projects is told. */
static int path_org(struct api_call *c, struct org *o)
{
	int rc = store_org_find(c->db, api_param(c, "org"), o, &c->err);

	return rc ? rc : rbac_org(c->db, &c->who, o, RBAC_ORG_VIEW, &c->err);
}

/* The org and project of the path (404 naming whichever is unknown). */
static int path_project(struct api_call *c, struct project *p)
{
	struct org o;
	int rc;

	if ((rc = path_org(c, &o)))
		return rc;
	return store_project_find(c->db, o.id, api_param(c, "project"), p, &c->err);
}

int projects_path(struct api_call *c, struct project *p, enum access_level need)
{
	struct rbac_resource res;
	int rc = path_project(c, p);

	if (rc)
		return rc;
	res = projects_resource(p);
	return rbac_check(c->db, &c->who, &res, need, &c->err);
}

/* The project the body names in org o: by "id" (must exist in o) or else by "name". */
static int body_project(struct api_call *c, json_t *body, const struct org *o, struct project *p, bool *exists)
{
	const char *id = NULL, *name = NULL;
	int rc;

	if (jsonx_str(body, "id", false, &id, &c->err) || jsonx_str(body, "name", !id, &name, &c->err))
		return -ERR_INVALID;
	if (id) {
		if (!uuid_valid(id, strlen(id)))
			return api_fail(c, ERR_INVALID, "'id' must be a UUID, got '%.64s'", id);
		*exists = true;
		if ((rc = store_project_get(c->db, id, p, &c->err)))
			return rc;
		if (strcmp(p->org_id, o->id) != 0)
			return api_fail(c, ERR_NOT_FOUND, "Project not found: %.64s", id);
		return 0;
	}
	rc = store_project_find(c->db, o->id, name, p, &c->err);
	*exists = rc == 0;
	if (rc == -ERR_NOT_FOUND) {
		memset(p, 0, sizeof *p);
		memcpy(p->org_id, o->id, sizeof p->org_id);
		if (str_fmt(p->org_name, sizeof p->org_name, "%s", o->name))
			return api_fail(c, ERR_INTERNAL, "organization name too long: %s", o->name);
		str_set_lit(p->visibility, "PUBLIC");
		str_set_lit(p->raw_payload_mode, "DISABLED");
		str_set_lit(p->out_variables_mode, "DISABLED");
		rc = 0;
	}
	return rc;
}

/* One of raw_payload_modes into out (cap 32). */
static int set_mode(struct api_call *c, const char *key, const char *mode, char out[32])
{
	for (size_t i = 0; i < sizeof raw_payload_modes / sizeof raw_payload_modes[0]; i++)
		if (strcmp(mode, raw_payload_modes[i]) == 0)
			return str_fmt(out, 32, "%s", mode) ? api_fail(c, ERR_INTERNAL, "mode %s too long", mode) : 0;
	return api_fail(c, ERR_INVALID,
			"'%s' must be DISABLED, OWNERS, TEAM_MEMBERS, ORG_MEMBERS or EVERYONE, got '%.32s'", key, mode);
}

static int read_raw_payload(struct api_call *c, json_t *body, struct project *p)
{
	const char *mode = NULL, *out_mode = NULL;
	bool accepts = false;

	if (jsonx_str(body, "rawPayloadMode", false, &mode, &c->err) ||
	    jsonx_str(body, "outVariablesMode", false, &out_mode, &c->err))
		return -ERR_INVALID;
	if (out_mode && set_mode(c, "outVariablesMode", out_mode, p->out_variables_mode))
		return -1;
	if (!mode) {
		/* Older clients send the boolean acceptsRawPayload instead. */
		if (!json_object_get(body, "acceptsRawPayload") ||
		    json_is_null(json_object_get(body, "acceptsRawPayload")))
			return 0;
		if (jsonx_bool(body, "acceptsRawPayload", false, &accepts, &c->err))
			return -ERR_INVALID;
		mode = accepts ? "ORG_MEMBERS" : "DISABLED";
	}
	return set_mode(c, "rawPayloadMode", mode, p->raw_payload_mode);
}

/* Applies the body's fields to p (omitted fields keep their values). */
static int read_project(struct api_call *c, json_t *body, struct project *p)
{
	const char *name = NULL, *description = NULL, *visibility = NULL;

	if (jsonx_str(body, "name", false, &name, &c->err) ||
	    jsonx_str(body, "description", false, &description, &c->err) ||
	    jsonx_str(body, "visibility", false, &visibility, &c->err))
		return -ERR_INVALID;
	if (name) {
		if (name_check(name, "project", NAME_PLAIN, &c->err))
			return -ERR_INVALID;
		if (str_fmt(p->name, sizeof p->name, "%s", name))
			return api_fail(c, ERR_INVALID, "project name is longer than %zu characters",
					sizeof p->name - 1);
	}
	if (description) {
		if (str_fmt(p->description, sizeof p->description, "%s", description))
			return api_fail(c, ERR_INVALID, "'description' is longer than %zu characters",
					sizeof p->description - 1);
	}
	if (visibility) {
		if (strcmp(visibility, "PUBLIC") != 0 && strcmp(visibility, "PRIVATE") != 0)
			return api_fail(c, ERR_INVALID, "'visibility' must be PUBLIC or PRIVATE, got '%.32s'",
					visibility);
		if (str_fmt(p->visibility, sizeof p->visibility, "%s", visibility))
			return api_fail(c, ERR_INTERNAL, "visibility %s too long", visibility);
	}
	return read_raw_payload(c, body, p);
}

/* "owner": {"id"} or {"username"(, "userDomain")} moves the project to that user; *given
 * tells whether the body named one (unknown users are 400). */
static int read_owner(struct api_call *c, json_t *body, struct project *p, bool *given)
{
	const char *id = NULL, *username = NULL, *domain = NULL;
	json_t *obj = NULL;
	struct err lookup;
	struct user u;
	int rc;

	*given = false;
	if (jsonx_obj(body, "owner", false, &obj, &c->err))
		return -ERR_INVALID;
	if (!obj)
		return 0;
	if (jsonx_str(obj, "id", false, &id, &lookup) || jsonx_str(obj, "username", false, &username, &lookup) ||
	    jsonx_str(obj, "userDomain", false, &domain, &lookup))
		return api_fail(c, ERR_INVALID, "'owner': %s", lookup.msg);
	if (!id && !username)
		return api_fail(c, ERR_INVALID, "'owner' needs 'id' or 'username'");
	if (id && !uuid_valid(id, strlen(id)))
		return api_fail(c, ERR_INVALID, "'owner.id' must be a UUID, got '%.64s'", id);
	rc = id ? store_user_get(c->db, id, &u, &lookup) : store_user_find(c->db, username, domain, &u, &lookup);
	if (rc == -ERR_NOT_FOUND || rc == -ERR_CONFLICT)
		return api_fail(c, ERR_INVALID, "'owner': %s", lookup.msg);
	if (rc) {
		c->err = lookup;
		return rc;
	}
	if (strcmp(u.id, p->owner_id) != 0 && (rc = rbac_owner_candidate(c->db, p->org_id, &u, &c->err)))
		return rc;
	memcpy(p->owner_id, u.id, sizeof p->owner_id);
	memcpy(p->owner_username, u.username, sizeof p->owner_username);
	*given = true;
	return 0;
}

/* `orgId` / `orgName` in an update body naming another org moves the project there (as
 * Concord's clients do it): OWNER of the project and membership of the target org.  Its
 * team access rules name the old org's teams and are dropped with the move; a project whose
 * repositories use secrets (of the old org) is not moved.  *moved tells whether it moves. */
static int read_move(struct api_call *c, json_t *body, const struct org *from, struct project *p, bool *moved)
{
	const char *id = NULL, *name = NULL;
	struct rbac_resource res = projects_resource(p);
	struct repository *repos = NULL;
	size_t n = 0;
	struct org to;
	int rc;

	*moved = false;
	if (jsonx_str(body, "orgId", false, &id, &c->err) || jsonx_str(body, "orgName", false, &name, &c->err))
		return -ERR_INVALID;
	if ((!id || !*id) && (!name || !*name))
		return 0;
	if (id && *id && !uuid_valid(id, strlen(id)))
		return api_fail(c, ERR_INVALID, "'orgId' must be a UUID, got '%.64s'", id);
	rc = id && *id ? store_org_get(c->db, id, &to, &c->err) : store_org_find(c->db, name, &to, &c->err);
	if (rc == -ERR_NOT_FOUND)
		return api_fail(c, ERR_INVALID, "Organization not found: %.128s", id && *id ? id : name);
	if (rc || strcmp(to.id, from->id) == 0)
		return rc;
	if ((rc = rbac_check(c->db, &c->who, &res, ACCESS_OWNER, &c->err)) ||
	    (rc = rbac_org(c->db, &c->who, &to, RBAC_ORG_MEMBER, &c->err)) ||
	    (rc = store_repository_list(c->db, p->id, &repos, &n, &c->err)))
		return rc;
	for (size_t i = 0; i < n && rc == 0; i++)
		if (repos[i].secret_id[0])
			rc = api_fail(c, ERR_INVALID,
				      "Project %s cannot move to %s: its repository %s uses the secret %s of %s",
				      p->name, to.name, repos[i].name, repos[i].secret_name, from->name);
	free(repos);
	if (rc)
		return rc;
	memcpy(p->org_id, to.id, sizeof p->org_id);
	memcpy(p->org_name, to.name, sizeof p->org_name);
	*moved = true;
	return 0;
}

/* The update of a project, with its move when it moves (one transaction). */
static int store_update(struct api_call *c, const struct project *p, const char *meta, const char *cfg, bool moved)
{
	int rc;

	if (!moved)
		return store_project_update(c->db, p, meta, cfg, &c->err);
	if ((rc = store_tx_begin(c->db, &c->err)))
		return rc;
	if ((rc = store_project_update(c->db, p, meta, cfg, &c->err)) ||
	    (rc = store_access_clear(c->db, "PROJECT", p->id, &c->err)) || (rc = store_tx_commit(c->db, &c->err)))
		store_tx_rollback(c->db);
	return rc;
}

/* A new project whose repositories could not be stored is taken back (its repositories go
 * with it by their foreign key, their clones after). */
static void undo_insert(struct api_call *c, const struct project *p)
{
	struct repository *repos = NULL;
	size_t n = 0;
	struct err e;

	if (store_repository_list(c->db, p->id, &repos, &n, &e) == 0 && store_tx_begin(c->db, &e) == 0) {
		if (store_project_delete(c->db, p->id, &e) == 0 && store_tx_commit(c->db, &e) == 0) {
			for (size_t i = 0; i < n && c->app->repos; i++)
				repo_forget(c->app->repos, repos[i].id);
			free(repos);
			return;
		}
		store_tx_rollback(c->db);
	}
	free(repos);
	LOG_W("project %s: its repositories failed and it could not be taken back: %s", p->id, e.msg);
}

static int create_or_update(struct api_call *c)
{
	json_t *body = NULL;
	char *meta = NULL, *cfg = NULL;
	struct rbac_resource res;
	struct project p, stored;
	struct repo_map *map = NULL;
	json_t *repos;
	struct org o;
	bool exists = false, new_owner, moved = false;
	int rc;

	if ((rc = path_org(c, &o)) || (rc = api_body_object(c, &body)))
		return rc;
	if ((rc = body_project(c, body, &o, &p, &exists)))
		goto out;
	/* Access is decided on the project as stored, not as the body would change it. */
	stored = p;
	res = projects_resource(&stored);
	rc = exists ? rbac_check(c->db, &c->who, &res, ACCESS_WRITER, &c->err)
		    : rbac_org(c->db, &c->who, &o, RBAC_ORG_MEMBER, &c->err);
	if (rc || (rc = read_project(c, body, &p)) || (rc = api_body_json_text(c, body, "meta", &meta)) ||
	    (rc = api_body_json_text(c, body, "cfg", &cfg)))
		goto out;
	if (!exists) {
		uuid_v4(p.id);
		memcpy(p.owner_id, c->who.user.id, sizeof p.owner_id);
		p.created_at = dt_now_ms();
	}
	if ((rc = read_owner(c, body, &p, &new_owner)) ||
	    (exists && new_owner && (rc = rbac_check(c->db, &c->who, &res, ACCESS_OWNER, &c->err))) ||
	    (exists && (rc = read_move(c, body, &o, &p, &moved))))
		goto out;
	repos = json_object_get(body, "repositories");
	if (repos && !json_is_null(repos) && (rc = repositories_map_prepare(c, &p, repos, &map)))
		goto out;
	if ((rc = api_policy_project(c, &p, o.name, body, exists)))
		goto out;
	rc = exists ? store_update(c, &p, meta, cfg, moved) : store_project_insert(c->db, &p, meta, cfg, &c->err);
	if (rc == 0 && map && (rc = repositories_map_store(c, &p, map, exists)) && !exists)
		undo_insert(c, &p);
	api_audit_note(c, "projectName", p.name);
	if (rc == 0)
		rc = api_reply_result(c, exists ? "UPDATED" : "CREATED", p.id);
out:
	repositories_map_free(map);
	free(meta);
	free(cfg);
	json_decref(body);
	return rc;
}

/* The project record with its `repositories` map (Concord's ProjectEntry). */
static int append_with_repositories(struct api_call *c, const struct project *p, json_t *arr)
{
	json_t *v = project_json(p), *repos = NULL;
	int rc = repositories_map(c, p, &repos);

	if (rc) {
		json_decref(v);
		return rc;
	}
	if (json_object_size(repos))
		json_object_set(v, "repositories", repos);
	json_decref(repos);
	json_array_append_new(arr, v);
	return 0;
}

/* Appends the projects the caller may read, after skipping `offset` of them. */
static int readable(struct api_call *c, const struct project *all, size_t n, size_t limit, size_t offset, json_t *arr)
{
	size_t seen = 0;

	for (size_t i = 0; i < n && json_array_size(arr) < limit; i++) {
		struct rbac_resource res = projects_resource(&all[i]);
		struct err denied;
		int rc = rbac_check(c->db, &c->who, &res, ACCESS_READER, &denied);

		if (rc == -ERR_FORBIDDEN)
			continue;
		if (rc) {
			c->err = denied;
			return rc;
		}
		if (seen++ >= offset && (rc = append_with_repositories(c, &all[i], arr)))
			return rc;
	}
	return 0;
}

static int list(struct api_call *c)
{
	const char *filter = http_query(c->req, "filter");
	struct project *all = NULL;
	size_t n = 0, limit, offset;
	struct org o;
	json_t *arr;
	int rc;

	if ((rc = path_org(c, &o)) || (rc = api_paging(c, &limit, &offset)) ||
	    (rc = store_project_list(c->db, o.id, filter && *filter ? filter : NULL, &all, &n, &c->err)))
		return rc;
	arr = json_array();
	rc = readable(c, all, n, limit, offset, arr);
	free(all);
	if (rc) {
		json_decref(arr);
		return rc;
	}
	return api_reply(c, arr);
}

static void set_json_text(json_t *v, const char *key, const char *text)
{
	json_t *parsed = text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;

	if (parsed)
		json_object_set_new(v, key, parsed);
}

static int get(struct api_call *c)
{
	char *meta = NULL, *cfg = NULL;
	struct project p;
	json_t *v, *arr;
	int rc;

	if ((rc = projects_path(c, &p, ACCESS_READER)) ||
	    (rc = store_project_meta_cfg(c->db, p.id, &meta, &cfg, &c->err)))
		return rc;
	arr = json_array();
	rc = append_with_repositories(c, &p, arr);
	v = json_incref(json_array_get(arr, 0));
	json_decref(arr);
	if (rc == 0) {
		struct rbac_resource res = projects_resource(&p);
		enum access_level level;

		set_json_text(v, "meta", meta);
		set_json_text(v, "cfg", cfg);
		if ((rc = rbac_level(c->db, &c->who, &res, &level, &c->err)) == 0)
			json_object_set_new(v, "yourAccess", json_string(access_level_name(level)));
	}
	free(meta);
	free(cfg);
	if (rc) {
		json_decref(v);
		return rc;
	}
	return api_reply(c, v);
}

/* The project's rows go with it (repositories and triggers by their foreign keys); the
 * clones of its repositories are removed after the commit. */
static int delete (struct api_call *c)
{
	struct repository *repos = NULL;
	struct project p;
	size_t n = 0;
	int rc;

	if ((rc = projects_path(c, &p, ACCESS_OWNER)) ||
	    (rc = store_repository_list(c->db, p.id, &repos, &n, &c->err)) || (rc = store_tx_begin(c->db, &c->err)))
		goto out;
	if ((rc = store_project_delete(c->db, p.id, &c->err)) == 0)
		rc = store_tx_commit(c->db, &c->err);
	if (rc) {
		store_tx_rollback(c->db);
		goto out;
	}
	for (size_t i = 0; i < n && c->app->repos; i++)
		repo_forget(c->app->repos, repos[i].id);
	rc = api_reply_result(c, "DELETED", NULL);
out:
	free(repos);
	return rc;
}

static int access_get(struct api_call *c)
{
	struct rbac_resource res;
	struct project p;
	int rc;

	if ((rc = path_project(c, &p)))
		return rc;
	res = projects_resource(&p);
	return access_rules_list(c, &res);
}

static int access_post(struct api_call *c)
{
	struct rbac_resource res;
	struct project p;
	int rc;

	if ((rc = path_project(c, &p)))
		return rc;
	res = projects_resource(&p);
	return access_rules_update(c, &res);
}

static int access_bulk(struct api_call *c)
{
	struct rbac_resource res;
	struct project p;
	int rc;

	if ((rc = path_project(c, &p)))
		return rc;
	res = projects_resource(&p);
	return access_rules_replace(c, &res);
}

#define SCHEMA_PROJECT_FIELDS                                                                                          \
	"'name':{'type':'string'},'description':{'type':'string'},'visibility':{'enum':['PUBLIC','PRIVATE']},"         \
	"'owner':" SCHEMA_OWNER ",'meta':" SCHEMA_OBJECT ",'cfg':" SCHEMA_OBJECT                                       \
	",'rawPayloadMode':{'type':'string'},"                                                                         \
	"'acceptsRawPayload':{'type':'boolean'}"
#define SCHEMA_PROJECT                                                                                                 \
	"{'type':'object','properties':{'id':" SCHEMA_UUID ",'orgId':" SCHEMA_UUID                                     \
	",'orgName':{'type':'string'}," SCHEMA_PROJECT_FIELDS "}}"

static const struct api_doc doc_create = {
    .summary = "Create a project or update one (by id or name)",
    .params = (const struct api_param_doc[]){DOC_ORG, {0}},
    .body = "{'type':'object','properties':{'id':" SCHEMA_UUID "," SCHEMA_PROJECT_FIELDS
	    ",'outVariablesMode':{'type':'string'},'repositories':{'type':'object','additionalProperties':{'type':"
	    "'object'}},'orgId':" SCHEMA_UUID ",'orgName':{'type':'string'}}}",
    .response = SCHEMA_RESULT,
    .errors = "400 403 404 409 415",
    .audit = {"PROJECT", "CREATE_OR_UPDATE", NULL},
};
static const struct api_doc doc_list = {
    .summary = "The projects of an organization the caller can see",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_FILTER, DOC_PAGING, {0}},
    .response = "{'type':'array','items':" SCHEMA_PROJECT "}",
    .errors = "400 404",
};
static const struct api_doc doc_get = {
    .summary = "A project",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_PROJECT, {0}},
    .response = SCHEMA_PROJECT,
    .errors = "403 404",
};
static const struct api_doc doc_delete = {
    .summary = "Delete a project with its repositories (its processes stay, without a project)",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_PROJECT, {0}},
    .response = SCHEMA_RESULT,
    .errors = "403 404",
    .audit = {"PROJECT", "DELETE", NULL},
};
DOC_ACCESS_RULES("PROJECT", "a project", DOC_ORG, DOC_PROJECT);

const struct api_route api_project_routes[] = {
    {"POST", "/api/v1/org/{org}/project", create_or_update, 0, &doc_create},
    {"GET", "/api/v1/org/{org}/project", list, 0, &doc_list},
    {"GET", "/api/v1/org/{org}/project/{project}", get, 0, &doc_get},
    {"GET", "/api/v2/org/{org}/project/{project}", get, 0, &doc_get},
    {"DELETE", "/api/v1/org/{org}/project/{project}", delete, 0, &doc_delete},
    {"GET", "/api/v1/org/{org}/project/{project}/access", access_get, 0, &doc_access_get},
    {"POST", "/api/v1/org/{org}/project/{project}/access", access_post, 0, &doc_access_post},
    {"POST", "/api/v1/org/{org}/project/{project}/access/bulk", access_bulk, 0, &doc_access_bulk},
    {0},
};
