/* Policies (Concord's api/policy.md, docs/api.md "Policies"): rule documents that admins
 * create and link to the server, an org, a project or a user; docs/security.md says what
 * each rule does.
 *
 *   POST   /api/v2/policy                      create or update {name, parentId?, rules}
 *   GET    /api/v2/policy                      list (with where each is linked)
 *   GET    /api/v2/policy/{name}               one
 *   DELETE /api/v2/policy/{name}               delete (its links go with it)
 *   PUT    /api/v2/policy/{name}/link          link: {orgName?, projectName?, userName?}
 *                                              (body or query; none: the server)
 *   DELETE /api/v2/policy/{name}/link?orgName=&projectName=&userName=   unlink
 *
 * Changes are for admins; reading needs an admin or a global reader, as rules name who is
 * watched.  A rules document is validated (policy/policy.h): one that does not parse or
 * has an unknown rule or a wrong shape is a 400 naming where. */
#include <stdlib.h>
#include <string.h>

#include "api/routes.h"
#include "auth/rbac.h"
#include "base/jsonx.h"
#include "policy/policy.h"
#include "store/orgs.h"
#include "store/policies.h"
#include "store/projects.h"
#include "store/users.h"

static int may_read(struct api_call *c)
{
	struct err not_admin;

	if (rbac_admin(&c->who, &not_admin) == 0 || (c->who.user.roles & ROLE_SYSTEM_READER))
		return 0;
	return api_fail(c, ERR_FORBIDDEN, "Only administrators and global readers can read policies");
}

static int check_name(struct api_call *c, const char *name)
{
	size_t n = strlen(name);

	if (!n || n > POLICY_NAME_MAX)
		return api_fail(c, ERR_INVALID, "Invalid policy name: 1 to %d characters", POLICY_NAME_MAX);
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)name[i] < 0x20 || name[i] == '/')
			return api_fail(c, ERR_INVALID, "Invalid policy name '%.128s': no '/' or control characters",
					name);
	return 0;
}

/* The rules of the body: an object, valid; then as text in *text (new). */
static int body_rules(struct api_call *c, json_t *body, char **text)
{
	json_t *rules = json_object_get(body, "rules");

	*text = NULL;
	if (!rules)
		return api_fail(c, ERR_INVALID, "'rules' is required: the policy document");
	if (policy_validate(rules, &c->err))
		return -1;
	if (!(*text = json_dumps(rules, JSON_COMPACT)))
		return api_fail(c, ERR_INTERNAL, "out of memory");
	return 0;
}

static int create_or_update(struct api_call *c)
{
	json_t *body = NULL;
	const char *name = NULL, *parent = NULL;
	char *rules = NULL, id[UUID_STR_LEN];
	bool created = false;
	int rc;

	if ((rc = rbac_admin(&c->who, &c->err)) || (rc = api_body_object(c, &body)))
		return rc;
	if ((rc = jsonx_str(body, "name", true, &name, &c->err)) ||
	    (rc = jsonx_str(body, "parentId", false, &parent, &c->err)) || (rc = check_name(c, name)) ||
	    (rc = body_rules(c, body, &rules)))
		goto out;
	if (parent && !uuid_valid(parent, strlen(parent))) {
		rc = api_fail(c, ERR_INVALID, "invalid parentId: %.64s", parent);
		goto out;
	}
	if ((rc = store_policy_put(c->db, name, parent, rules, id, &created, &c->err)) == 0) {
		api_audit_note(c, "policyName", name);
		rc = api_reply_result(c, created ? "CREATED" : "UPDATED", id);
	}
out:
	free(rules);
	json_decref(body);
	return rc;
}

static int get_one(struct api_call *c)
{
	json_t *p = NULL;
	int rc;

	if ((rc = may_read(c)) || (rc = store_policy_get(c->db, api_param(c, "name"), &p, &c->err)))
		return rc;
	return api_reply(c, p);
}

static int list(struct api_call *c)
{
	json_t *all = NULL;
	int rc;

	if ((rc = may_read(c)) || (rc = store_policy_list(c->db, &all, &c->err)))
		return rc;
	return api_reply(c, all);
}

static int delete_one(struct api_call *c)
{
	int rc;

	if ((rc = rbac_admin(&c->who, &c->err)) || (rc = store_policy_delete(c->db, api_param(c, "name"), &c->err)))
		return rc;
	api_audit_note(c, "policyName", api_param(c, "name"));
	return api_reply_result(c, "DELETED", NULL);
}

struct place {
	struct org org;
	struct project project;
	struct user user;
	struct policy_place at;
};

/* A link field: the query's, else the body's (PUT), "" counting as absent. */
static const char *link_arg(struct api_call *c, json_t *body, const char *key)
{
	const char *v = http_query(c->req, key);

	if (!v)
		v = json_string_value(json_object_get(body, key));
	return v && *v ? v : NULL;
}

/* The place orgName/projectName/userName name (Concord's: a project's link has no org). */
static int resolve_place(struct api_call *c, json_t *body, struct place *pl)
{
	const char *org = link_arg(c, body, "orgName"), *project = link_arg(c, body, "projectName"),
		   *user = link_arg(c, body, "userName");

	if (project && !org)
		return api_fail(c, ERR_INVALID, "'projectName' needs 'orgName'");
	if (org && store_org_find(c->db, org, &pl->org, &c->err))
		return api_recode(c, ERR_INVALID);
	if (project && store_project_find(c->db, pl->org.id, project, &pl->project, &c->err))
		return api_recode(c, ERR_INVALID);
	if (user && store_user_find(c->db, user, NULL, &pl->user, &c->err))
		return api_recode(c, ERR_INVALID);
	pl->at.org_id = org && !project ? pl->org.id : NULL;
	pl->at.project_id = project ? pl->project.id : NULL;
	pl->at.user_id = user ? pl->user.id : NULL;
	return 0;
}

static int policy_id(struct api_call *c, char id[UUID_STR_LEN])
{
	json_t *p = NULL;

	if (store_policy_get(c->db, api_param(c, "name"), &p, &c->err))
		return -1;
	memcpy(id, json_string_value(json_object_get(p, "id")), UUID_STR_LEN);
	json_decref(p);
	return 0;
}

static int link_policy(struct api_call *c)
{
	json_t *body = NULL;
	struct place pl = {0};
	char id[UUID_STR_LEN];
	int rc;

	if ((rc = rbac_admin(&c->who, &c->err)))
		return rc;
	if (c->req->body.len && (rc = api_body_object(c, &body)))
		return rc;
	if ((rc = policy_id(c, id)) == 0 && (rc = resolve_place(c, body, &pl)) == 0 &&
	    (rc = store_policy_link(c->db, id, &pl.at, &c->err)) == 0) {
		api_audit_note(c, "policyName", api_param(c, "name"));
		rc = api_reply_result(c, "UPDATED", NULL);
	}
	json_decref(body);
	return rc;
}

static int unlink_policy(struct api_call *c)
{
	struct place pl = {0};
	char id[UUID_STR_LEN];
	int rc;

	if ((rc = rbac_admin(&c->who, &c->err)) || (rc = policy_id(c, id)) || (rc = resolve_place(c, NULL, &pl)) ||
	    (rc = store_policy_unlink(c->db, id, &pl.at, &c->err)))
		return rc;
	api_audit_note(c, "policyName", api_param(c, "name"));
	return api_reply_result(c, "DELETED", NULL);
}

#define POLICY_SCHEMA                                                                                                  \
	"{'type':'object','properties':{'id':{'type':'string'},'name':{'type':'string'},"                              \
	"'parentId':{'type':'string'},'rules':{'type':'object'}}}"
#define RESULT_SCHEMA                                                                                                  \
	"{'type':'object','properties':{'ok':{'type':'boolean'},'result':{'type':'string'},'id':{'type':'string'}}}"
#define DOC_NAME                                                                                                       \
	{                                                                                                              \
		"name", "string", "the policy's name"                                                                  \
	}
#define DOC_PLACE                                                                                                      \
	{"orgName", "string", "the organization (alone: the org's link)"},                                             \
	    {"projectName", "string", "a project of orgName"},                                                         \
	{                                                                                                              \
		"userName", "string", "a user (with an org or a project: the user there)"                              \
	}

static const struct api_doc doc_put = {
    .summary = "Create or update a policy (admins): its rules are validated",
    .body = "{'type':'object','required':['name','rules'],'properties':{'name':{'type':'string'},"
	    "'parentId':{'type':'string'},'rules':{'type':'object'}}}",
    .response = RESULT_SCHEMA,
    .errors = "400 403 409",
    .audit = {"POLICY", "CREATE_OR_UPDATE", NULL},
};
static const struct api_doc doc_list = {
    .summary = "Every policy with where it is linked (admins and global readers)",
    .response = "{'type':'array','items':" POLICY_SCHEMA "}",
    .errors = "403",
};
static const struct api_doc doc_get = {
    .summary = "A policy (admins and global readers)",
    .params = (const struct api_param_doc[]){DOC_NAME, {0}},
    .response = POLICY_SCHEMA,
    .errors = "403 404",
};
static const struct api_doc doc_delete = {
    .summary = "Delete a policy and its links (admins)",
    .params = (const struct api_param_doc[]){DOC_NAME, {0}},
    .response = RESULT_SCHEMA,
    .errors = "403 404",
    .audit = {"POLICY", "DELETE", NULL},
};
static const struct api_doc doc_link = {
    .summary = "Link a policy to the server (no place), an org, a project or a user (admins); the place's "
	       "previous policy is replaced",
    .params = (const struct api_param_doc[]){DOC_NAME, DOC_PLACE, {0}},
    .body = "{'type':'object','properties':{'orgName':{'type':'string'},'projectName':{'type':'string'},"
	    "'userName':{'type':'string'}}}",
    .response = RESULT_SCHEMA,
    .errors = "400 403 404",
    .audit = {"POLICY", "UPDATE", "link"},
};
static const struct api_doc doc_unlink = {
    .summary = "Unlink a policy from a place (no place: the server)",
    .params = (const struct api_param_doc[]){DOC_NAME, DOC_PLACE, {0}},
    .response = RESULT_SCHEMA,
    .errors = "400 403 404",
    .audit = {"POLICY", "UPDATE", "link"},
};

const struct api_route api_policy_routes[] = {
    {"POST", "/api/v2/policy", create_or_update, 0, &doc_put},
    {"GET", "/api/v2/policy", list, 0, &doc_list},
    {"GET", "/api/v2/policy/{name}", get_one, 0, &doc_get},
    {"DELETE", "/api/v2/policy/{name}", delete_one, 0, &doc_delete},
    {"PUT", "/api/v2/policy/{name}/link", link_policy, 0, &doc_link},
    {"DELETE", "/api/v2/policy/{name}/link", unlink_policy, 0, &doc_unlink},
    {0},
};
