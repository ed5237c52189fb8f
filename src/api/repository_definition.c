/* GET /api/v1/org/{org}/project/{project}/repository/{repo}/definition: what a start of
 * the repository may choose, read from its definition at a branch, tag or commit — the
 * entry points, the profiles and the declared arguments (docs/api.md "Repositories").
 * An Accord route: Concord's console has no such call (its start form takes typed text).
 *
 * The commit is resolved as a process start resolves it (repo_prepare: the clone is
 * fetched only when missing or stale), so the lists are the ones a start would check. */
#include <string.h>

#include "api/doc_schemas.h"
#include "api/projects.h"
#include "api/repositories.h"
#include "api/routes.h"
#include "base/jsonx.h"
#include "base/oom.h"
#include "flow/model.h"
#include "repo/repo.h"

/* jsonx_type_name, or "expression" for a string holding ${…} (its value is computed at
 * start). */
static const char *arg_type(const json_t *v)
{
	return json_is_string(v) && strstr(json_string_value(v), "${") ? "expression" : jsonx_type_name(v);
}

/* [{name, type, default}] of configuration.arguments; default only for a scalar that is
 * not an expression. */
static json_t *arguments(const struct model *m)
{
	json_t *out = json_array(), *v;
	const char *name;

	json_object_foreach(m->declared_args, name, v)
	{
		const char *type = arg_type(v);
		json_t *a = json_pack("{s:s,s:s}", "name", name, "type", type);
		if (a && (json_is_number(v) || json_is_boolean(v) || !strcmp(type, "string")))
			json_object_set(a, "default", v);
		if (!a || json_array_append_new(out, a)) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

static json_t *definition_json(const struct model *m, const struct repo_commit *commit)
{
	const char *entry = m ? json_string_value(json_object_get(m->configuration, "entryPoint")) : NULL;

	if (!m)
		return json_pack("{s:s,s:b,s:[],s:[],s:[],s:[]}", "commitId", commit->id, "hasDefinition", 0,
				 "entryPoints", "profiles", "activeProfiles", "arguments");
	return json_pack("{s:s,s:b,s:s,s:o*,s:O,s:O,s:o*}", "commitId", commit->id, "hasDefinition", 1,
			 "defaultEntryPoint", entry && *entry ? entry : "default", "entryPoints", model_entry_points(m),
			 "profiles", m->profiles, "activeProfiles", m->active_profiles, "arguments", arguments(m));
}

static int definition(struct api_call *c)
{
	const char *branch = http_query(c->req, "repoBranchOrTag"), *commit_id = http_query(c->req, "repoCommitId");
	struct repo_commit commit;
	struct repository r;
	struct project p;
	struct model *m = NULL;
	json_t *v;
	int rc;

	if ((rc = repository_available(c)) || (rc = projects_path(c, &p, ACCESS_READER)) ||
	    (rc = store_repository_find(c->db, p.id, api_param(c, "repo"), &r, &c->err)))
		return rc;
	if (branch && commit_id && *branch && *commit_id)
		return api_fail(c, ERR_INVALID, "Give repoBranchOrTag or repoCommitId, not both");
	if ((rc = repo_prepare(c->app->repos, c->db, &r, branch && *branch ? branch : NULL,
			       commit_id && *commit_id ? commit_id : NULL, &commit, &c->err)) ||
	    (rc = repo_load_definition(c->app->repos, &r, &commit, &m, &c->err)))
		return rc;
	v = definition_json(m, &commit);
	model_free(m);
	return v ? api_reply(c, v) : oom_fail(&c->err);
}

#define SCHEMA_NAMES "{'type':'array','items':{'type':'string'}}"

static const struct api_doc doc_definition = {
    .summary = "What a start of the repository may choose: entry points, profiles, declared arguments",
    .params = (const struct api_param_doc[]){DOC_ORG,
					     DOC_PROJECT,
					     {"repo", "string", "the repository's name"},
					     {"repoBranchOrTag", "string", "another branch or tag (default: the configured one)"},
					     {"repoCommitId", "string", "a commit instead"},
					     {0}},
    .response = "{'type':'object','properties':{'commitId':{'type':'string'},'hasDefinition':{'type':'boolean'},"
		"'defaultEntryPoint':{'type':'string'},'entryPoints':" SCHEMA_NAMES ",'profiles':" SCHEMA_NAMES
		",'activeProfiles':" SCHEMA_NAMES ",'arguments':{'type':'array','items':{'type':'object','properties':"
		"{'name':{'type':'string'},'type':{'type':'string'},'default':{}}}}}}",
    .errors = "400 403 404 429 503",
};

const struct api_route api_repository_definition_routes[] = {
    {"GET", "/api/v1/org/{org}/project/{project}/repository/{repo}/definition", definition, API_FETCHES,
     &doc_definition},
    {0},
};
