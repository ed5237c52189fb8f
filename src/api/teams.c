/* /api/v1/org/{org}/team: teams of an organization and their members. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/doc_schemas.h"
#include "api/routes.h"
#include "auth/rbac.h"
#include "base/jsonx.h"
#include "base/names.h"
#include "base/str.h"
#include "store/orgs.h"
#include "store/users.h"

static json_t *team_json(const struct team *t, const struct org *o)
{
	json_t *v = json_pack("{s:s,s:s,s:s,s:s}", "id", t->id, "orgId", o->id, "orgName", o->name, "name", t->name);

	if (t->description[0])
		json_object_set_new(v, "description", json_string(t->description));
	return v;
}

/* The org and team of the path (404 naming whichever is unknown). */
/* The org of the path; a PRIVATE org an outsider cannot see is answered as a missing one
 * (rbac_org), so its team names are not told apart from missing ones. */
static int path_org(struct api_call *c, struct org *o)
{
	int rc = store_org_find(c->db, api_param(c, "org"), o, &c->err);

	return rc ? rc : rbac_org(c->db, &c->who, o, RBAC_ORG_VIEW, &c->err);
}

static int path_team(struct api_call *c, struct org *o, struct team *t)
{
	int rc;

	if ((rc = path_org(c, o)))
		return rc;
	return store_team_find(c->db, o->id, api_param(c, "team"), t, &c->err);
}

/* The team the body names in org o: by "id" (must exist in o) or else by "name". */
static int body_team(struct api_call *c, json_t *body, const struct org *o, struct team *t, bool *exists)
{
	const char *id = NULL, *name = NULL;
	int rc;

	if (jsonx_str(body, "id", false, &id, &c->err) || jsonx_str(body, "name", !id, &name, &c->err))
		return -ERR_INVALID;
	if (id) {
		if (!uuid_valid(id, strlen(id)))
			return api_fail(c, ERR_INVALID, "'id' must be a UUID, got '%.64s'", id);
		*exists = true;
		if ((rc = store_team_get(c->db, id, t, &c->err)))
			return rc;
		if (strcmp(t->org_id, o->id) != 0)
			return api_fail(c, ERR_NOT_FOUND, "Team not found: %.64s", id);
		return 0;
	}
	rc = store_team_find(c->db, o->id, name, t, &c->err);
	*exists = rc == 0;
	if (rc == -ERR_NOT_FOUND) {
		memset(t, 0, sizeof *t);
		memcpy(t->org_id, o->id, sizeof t->org_id);
		rc = 0;
	}
	return rc;
}

static int read_team(struct api_call *c, json_t *body, struct team *t)
{
	const char *name = NULL, *description = NULL;

	if (jsonx_str(body, "name", false, &name, &c->err) ||
	    jsonx_str(body, "description", false, &description, &c->err))
		return -ERR_INVALID;
	if (name) {
		if (name_check(name, "team", NAME_PLAIN, &c->err))
			return -ERR_INVALID;
		if (str_fmt(t->name, sizeof t->name, "%s", name))
			return api_fail(c, ERR_INVALID, "team name is longer than %zu characters", sizeof t->name - 1);
	}
	if (description) {
		if (str_fmt(t->description, sizeof t->description, "%s", description))
			return api_fail(c, ERR_INVALID, "'description' is longer than %zu characters",
					sizeof t->description - 1);
	}
	return 0;
}

/* New team with its creator as MAINTAINER, in one transaction. */
static int insert_team(struct api_call *c, struct team *t)
{
	int rc;

	uuid_v4(t->id);
	if ((rc = store_tx_begin(c->db, &c->err)))
		return rc;
	if ((rc = store_team_insert(c->db, t, &c->err)) == 0 &&
	    (rc = store_team_member_set(c->db, t->id, c->who.user.id, TEAM_ROLE_MAINTAINER, &c->err)) == 0)
		rc = store_tx_commit(c->db, &c->err);
	if (rc)
		store_tx_rollback(c->db);
	return rc;
}

static int create_or_update(struct api_call *c)
{
	json_t *body = NULL;
	struct org o;
	struct team t;
	bool exists = false;
	int rc;

	if ((rc = path_org(c, &o)) || (rc = api_body_object(c, &body)))
		return rc;
	if ((rc = body_team(c, body, &o, &t, &exists)))
		goto out;
	rc = exists ? rbac_team(c->db, &c->who, &t, TEAM_ROLE_MAINTAINER, &c->err)
		    : rbac_org(c->db, &c->who, &o, RBAC_ORG_OWNER, &c->err);
	if (rc || (rc = read_team(c, body, &t)))
		goto out;
	rc = exists ? store_team_update(c->db, &t, &c->err) : insert_team(c, &t);
	api_audit_note(c, "teamName", t.name);
	if (rc == 0)
		rc = api_reply_result(c, exists ? "UPDATED" : "CREATED", t.id);
out:
	json_decref(body);
	return rc;
}

static int list(struct api_call *c)
{
	struct team *teams = NULL;
	struct org o;
	size_t n = 0;
	json_t *arr;
	int rc;

	if ((rc = store_org_find(c->db, api_param(c, "org"), &o, &c->err)) ||
	    (rc = rbac_org(c->db, &c->who, &o, RBAC_ORG_MEMBER, &c->err)) ||
	    (rc = store_team_list(c->db, o.id, &teams, &n, &c->err)))
		return rc;
	arr = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, team_json(&teams[i], &o));
	free(teams);
	return api_reply(c, arr);
}

/* Adds "yourRole" to v: the role by which the caller manages the team (OWNER: also an
 * organization owner or an admin, who may do everything; MAINTAINER; MEMBER; NONE), as
 * rbac_team decides changes — the console offers the changes this allows (Accord's own). */
static int reply_with_role(struct api_call *c, const struct team *t, json_t *v)
{
	static const enum team_role order[] = {TEAM_ROLE_OWNER, TEAM_ROLE_MAINTAINER, TEAM_ROLE_MEMBER};
	const char *role = "NONE";

	for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
		struct err e = {0};
		if (rbac_team(c->db, &c->who, t, order[i], &e) == 0) {
			role = team_role_name(order[i]);
			break;
		}
		if (e.code != ERR_FORBIDDEN && e.code != ERR_NOT_FOUND) {
			json_decref(v);
			c->err = e;
			return -1;
		}
	}
	json_object_set_new(v, "yourRole", json_string(role));
	return api_reply(c, v);
}

static int get(struct api_call *c)
{
	struct org o;
	struct team t;
	int rc;

	if ((rc = path_team(c, &o, &t)) || (rc = rbac_org(c->db, &c->who, &o, RBAC_ORG_MEMBER, &c->err)))
		return rc;
	return reply_with_role(c, &t, team_json(&t, &o));
}

static int delete (struct api_call *c)
{
	struct org o;
	struct team t;
	int rc;

	if ((rc = path_team(c, &o, &t)) || (rc = rbac_team(c->db, &c->who, &t, TEAM_ROLE_OWNER, &c->err)) ||
	    (rc = store_team_delete(c->db, t.id, &c->err)))
		return rc;
	return api_reply_result(c, "DELETED", NULL);
}

static json_t *member_json(const struct team_member *m)
{
	json_t *v = json_pack("{s:s,s:s,s:s,s:s}", "userId", m->user_id, "username", m->username, "userType", m->type,
			      "role", team_role_name(m->role));

	if (m->domain[0])
		json_object_set_new(v, "userDomain", json_string(m->domain));
	if (m->display_name[0])
		json_object_set_new(v, "displayName", json_string(m->display_name));
	return v;
}

static int list_users(struct api_call *c)
{
	struct team_member *members = NULL;
	struct org o;
	struct team t;
	size_t n = 0;
	json_t *arr;
	int rc;

	if ((rc = path_team(c, &o, &t)) || (rc = rbac_org(c->db, &c->who, &o, RBAC_ORG_MEMBER, &c->err)) ||
	    (rc = store_team_members(c->db, t.id, &members, &n, &c->err)))
		return rc;
	arr = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, member_json(&members[i]));
	free(members);
	return api_reply(c, arr);
}

struct member_change {
	char user_id[UUID_STR_LEN];
	enum team_role role;
};

/* The user an entry names: "userId", or "username" (+ "userDomain"); unknown is 400. */
static int entry_user(struct api_call *c, json_t *entry, struct user *u)
{
	const char *id = NULL, *username = NULL, *domain = NULL;
	struct err lookup;
	int rc;

	if (jsonx_str(entry, "userId", false, &id, &c->err) || jsonx_str(entry, "username", !id, &username, &c->err) ||
	    jsonx_str(entry, "userDomain", false, &domain, &c->err))
		return -ERR_INVALID;
	if (id && !uuid_valid(id, strlen(id)))
		return api_fail(c, ERR_INVALID, "'userId' must be a UUID, got '%.64s'", id);
	rc = id ? store_user_get(c->db, id, u, &lookup)
		: store_user_find(c->db, username, domain && *domain ? domain : NULL, u, &lookup);
	if (rc == -ERR_NOT_FOUND || rc == -ERR_CONFLICT)
		return api_fail(c, ERR_INVALID, "%s", lookup.msg);
	if (rc)
		c->err = lookup;
	return rc;
}

/* Reads the entries; *touches_owner tells whether the change grants OWNER or changes a
 * current OWNER's membership (which needs the OWNER role, see auth/rbac.h). */
static int read_members(struct api_call *c, json_t *body, const struct team *t, struct member_change *out,
			bool *touches_owner)
{
	json_t *entry;
	size_t i;

	json_array_foreach(body, i, entry)
	{
		const char *role = NULL;
		enum team_role now;
		struct user u;
		int rc;

		out[i].role = TEAM_ROLE_MEMBER;
		if (!json_is_object(entry))
			return api_fail(c, ERR_INVALID, "team member %zu must be a JSON object", i + 1);
		if ((rc = entry_user(c, entry, &u)) || (rc = jsonx_str(entry, "role", false, &role, &c->err)) ||
		    (role && (rc = team_role_parse(role, &out[i].role, &c->err))) ||
		    (rc = store_team_member_role(c->db, t->id, u.id, &now, &c->err)))
			return rc;
		memcpy(out[i].user_id, u.id, sizeof out[i].user_id);
		if (out[i].role == TEAM_ROLE_OWNER || now == TEAM_ROLE_OWNER)
			*touches_owner = true;
	}
	return 0;
}

/* True when the team has a member with role OWNER. */
static int has_owner(struct api_call *c, const struct team *t, bool *yes)
{
	struct team_member *members = NULL;
	size_t n = 0;
	int rc = store_team_members(c->db, t->id, &members, &n, &c->err);

	*yes = false;
	for (size_t i = 0; rc == 0 && i < n; i++)
		if (members[i].role == TEAM_ROLE_OWNER)
			*yes = true;
	free(members);
	return rc;
}

static int store_members(struct api_call *c, const struct team *t, const struct member_change *m, size_t n,
			 bool replace)
{
	int rc;

	if ((rc = store_tx_begin(c->db, &c->err)))
		return rc;
	if (replace)
		rc = store_team_members_clear(c->db, t->id, &c->err);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = store_team_member_set(c->db, t->id, m[i].user_id, m[i].role, &c->err);
	if (rc == 0)
		rc = store_tx_commit(c->db, &c->err);
	if (rc)
		store_tx_rollback(c->db);
	return rc;
}

static int put_users(struct api_call *c)
{
	const char *rp = http_query(c->req, "replace");
	bool replace = rp && cstr_ieq(rp, "true"), touches_owner = false;
	struct member_change *changes = NULL;
	json_t *body = NULL;
	struct org o;
	struct team t;
	size_t n;
	int rc;

	if ((rc = path_team(c, &o, &t)) || (rc = rbac_team(c->db, &c->who, &t, TEAM_ROLE_MAINTAINER, &c->err)) ||
	    (rc = api_body_array(c, &body)))
		return rc;
	n = json_array_size(body);
	if (n == 0 && !replace) {
		rc = api_fail(c, ERR_INVALID, "Empty user list");
		goto out;
	}
	if (n && !(changes = calloc(n, sizeof *changes))) {
		rc = api_fail(c, ERR_INTERNAL, "out of memory");
		goto out;
	}
	if ((rc = read_members(c, body, &t, changes, &touches_owner)) ||
	    (replace && (rc = has_owner(c, &t, &touches_owner))))
		goto out;
	if (touches_owner && (rc = rbac_team(c->db, &c->who, &t, TEAM_ROLE_OWNER, &c->err)))
		goto out;
	if ((rc = store_members(c, &t, changes, n, replace)) == 0)
		rc = api_reply(c, json_pack("{s:b}", "ok", 1));
out:
	free(changes);
	json_decref(body);
	return rc;
}

/* Resolves the usernames of a DELETE …/users body; *touches_owner as in read_members. */
static int read_usernames(struct api_call *c, json_t *body, const struct team *t, struct member_change *out,
			  bool *touches_owner)
{
	json_t *v;
	size_t i;

	json_array_foreach(body, i, v)
	{
		struct user u;
		struct err lookup;
		int rc;

		if (!json_is_string(v))
			return api_fail(c, ERR_INVALID, "the body must be a JSON array of usernames");
		rc = store_user_find(c->db, json_string_value(v), NULL, &u, &lookup);
		if (rc == -ERR_NOT_FOUND || rc == -ERR_CONFLICT)
			return api_fail(c, ERR_INVALID, "%s", lookup.msg);
		if (rc) {
			c->err = lookup;
			return rc;
		}
		if ((rc = store_team_member_role(c->db, t->id, u.id, &out[i].role, &c->err)))
			return rc;
		memcpy(out[i].user_id, u.id, sizeof out[i].user_id);
		if (out[i].role == TEAM_ROLE_OWNER)
			*touches_owner = true;
	}
	return 0;
}

static int remove_members(struct api_call *c, const struct team *t, const struct member_change *m, size_t n)
{
	int rc;

	if ((rc = store_tx_begin(c->db, &c->err)))
		return rc;
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = store_team_member_remove(c->db, t->id, m[i].user_id, &c->err);
	if (rc == 0)
		rc = store_tx_commit(c->db, &c->err);
	if (rc)
		store_tx_rollback(c->db);
	return rc;
}

static int delete_users(struct api_call *c)
{
	struct member_change *gone = NULL;
	bool touches_owner = false;
	json_t *body = NULL;
	struct org o;
	struct team t;
	size_t n;
	int rc;

	if ((rc = path_team(c, &o, &t)) || (rc = rbac_team(c->db, &c->who, &t, TEAM_ROLE_MAINTAINER, &c->err)) ||
	    (rc = api_body_array(c, &body)))
		return rc;
	if ((n = json_array_size(body)) == 0) {
		rc = api_fail(c, ERR_INVALID, "Empty user list");
		goto out;
	}
	if (!(gone = calloc(n, sizeof *gone))) {
		rc = api_fail(c, ERR_INTERNAL, "out of memory");
		goto out;
	}
	if ((rc = read_usernames(c, body, &t, gone, &touches_owner)) ||
	    (touches_owner && (rc = rbac_team(c->db, &c->who, &t, TEAM_ROLE_OWNER, &c->err))))
		goto out;
	if ((rc = remove_members(c, &t, gone, n)) == 0)
		rc = api_reply(c, json_pack("{s:b}", "ok", 1));
out:
	free(gone);
	json_decref(body);
	return rc;
}

#define SCHEMA_TEAM                                                                                                    \
	"{'type':'object','properties':{'id':" SCHEMA_UUID ",'orgId':" SCHEMA_UUID ",'orgName':{'type':'string'},"     \
	"'name':{'type':'string'},'description':{'type':'string'}}}"
#define SCHEMA_MEMBERS                                                                                                 \
	"{'type':'array','items':{'type':'object','properties':{'userId':" SCHEMA_UUID                                 \
	",'username':{'type':'string'},"                                                                               \
	"'userDomain':{'type':'string'},'userType':{'type':'string'},'role':{'enum':['OWNER','MAINTAINER','MEMBER']}}" \
	"}}"

static const struct api_doc doc_create = {
    .summary = "Create a team or update one (organization owners, team maintainers)",
    .params = (const struct api_param_doc[]){DOC_ORG, {0}},
    .body = "{'type':'object','properties':{'id':" SCHEMA_UUID ",'name':{'type':'string'},"
	    "'description':{'type':'string'}}}",
    .response = SCHEMA_RESULT,
    .errors = "400 403 404 409 415",
    .audit = {"TEAM", "CREATE_OR_UPDATE", NULL},
};
static const struct api_doc doc_list = {
    .summary = "The teams of an organization",
    .params = (const struct api_param_doc[]){DOC_ORG, {0}},
    .response = "{'type':'array','items':" SCHEMA_TEAM "}",
    .errors = "404",
};
static const struct api_doc doc_get = {
    .summary = "A team, with the role by which you manage it (yourRole, Accord's own)",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_TEAM, {0}},
    .response = "{'type':'object','properties':{'id':" SCHEMA_UUID ",'orgId':" SCHEMA_UUID ",'orgName':{'type':'string'},"
		"'name':{'type':'string'},'description':{'type':'string'},"
		"'yourRole':{'enum':['OWNER','MAINTAINER','MEMBER','NONE']}}}",
    .errors = "404",
};
static const struct api_doc doc_delete = {
    .summary = "Delete a team",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_TEAM, {0}},
    .response = SCHEMA_RESULT,
    .errors = "403 404",
    .audit = {"TEAM", "DELETE", NULL},
};
static const struct api_doc doc_put_users = {
    .summary = "Add members to a team or change their roles (replace=true: the list becomes the members)",
    .params =
	(const struct api_param_doc[]){
	    DOC_ORG, DOC_TEAM, {"replace", "boolean", "the given members replace all others"}, {0}},
    .body = SCHEMA_MEMBERS,
    .response = SCHEMA_OK,
    .errors = "400 403 404 415",
    .audit = {"TEAM", "UPDATE", "users"},
};
static const struct api_doc doc_list_users = {
    .summary = "The members of a team",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_TEAM, {0}},
    .response = SCHEMA_MEMBERS,
    .errors = "404",
};
static const struct api_doc doc_delete_users = {
    .summary = "Remove members from a team (body: their names)",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_TEAM, {0}},
    .body = SCHEMA_STRINGS,
    .response = SCHEMA_OK,
    .errors = "400 403 404 415",
    .audit = {"TEAM", "UPDATE", "users"},
};

const struct api_route api_team_routes[] = {
    {"POST", "/api/v1/org/{org}/team", create_or_update, 0, &doc_create},
    {"GET", "/api/v1/org/{org}/team", list, 0, &doc_list},
    {"GET", "/api/v1/org/{org}/team/{team}", get, 0, &doc_get},
    {"DELETE", "/api/v1/org/{org}/team/{team}", delete, 0, &doc_delete},
    {"PUT", "/api/v1/org/{org}/team/{team}/users", put_users, 0, &doc_put_users},
    {"GET", "/api/v1/org/{org}/team/{team}/users", list_users, 0, &doc_list_users},
    {"DELETE", "/api/v1/org/{org}/team/{team}/users", delete_users, 0, &doc_delete_users},
    {0},
};
