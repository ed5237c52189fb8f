/* /api/v1/org/{org}/team/{team}/ldapGroups: the directory groups linked to a team.  A user
 * whose groups (read at their last LDAP login, store/ldap_groups.h) include a linked group
 * has that link's role in the team, as if listed in its members (docs/security.md "Realms"). */
#include <stdlib.h>
#include <string.h>

#include "api/doc_schemas.h"
#include "api/routes.h"
#include "auth/rbac.h"
#include "base/jsonx.h"
#include "base/str.h"
#include "store/ldap_groups.h"
#include "store/orgs.h"

#define GROUP_DN_MAX 1024
#define GROUPS_MAX 1000

/* The team of the path; need TEAM_ROLE_NONE: any member of the org may see it (as its
 * members), else that role in the team. */
static int path_team(struct api_call *c, enum team_role need, struct team *t)
{
	struct org o;
	int rc;

	if ((rc = store_org_find(c->db, api_param(c, "org"), &o, &c->err)) ||
	    (rc = rbac_org(c->db, &c->who, &o, RBAC_ORG_VIEW, &c->err)) ||
	    (rc = store_team_find(c->db, o.id, api_param(c, "team"), t, &c->err)))
		return rc;
	if (need == TEAM_ROLE_NONE)
		return rbac_org(c->db, &c->who, &o, RBAC_ORG_MEMBER, &c->err);
	return rbac_team(c->db, &c->who, t, need, &c->err);
}

static bool has_control(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return true;
	return false;
}

/* Checks every entry of the body before anything is stored: {"group": DN, "role"?}. */
static int read_entries(struct api_call *c, json_t *body, enum team_role *roles)
{
	json_t *entry;
	size_t i;

	if (json_array_size(body) > GROUPS_MAX)
		return api_fail(c, ERR_INVALID, "at most %d LDAP groups at once", GROUPS_MAX);
	json_array_foreach(body, i, entry)
	{
		const char *group = NULL, *role = NULL;
		int rc;

		roles[i] = TEAM_ROLE_MEMBER;
		if (!json_is_object(entry))
			return api_fail(c, ERR_INVALID, "LDAP group %zu must be a JSON object", i + 1);
		if ((rc = jsonx_str(entry, "group", true, &group, &c->err)) ||
		    (rc = jsonx_str(entry, "role", false, &role, &c->err)) ||
		    (role && (rc = team_role_parse(role, &roles[i], &c->err))))
			return rc;
		if (!group[0] || strlen(group) > GROUP_DN_MAX || has_control(group))
			return api_fail(c, ERR_INVALID, "LDAP group %zu: 'group' must be a DN of 1 to %d characters", i + 1,
					GROUP_DN_MAX);
	}
	return 0;
}

static int store_entries(struct api_call *c, const struct team *t, json_t *body, const enum team_role *roles,
			 bool replace)
{
	json_t *entry;
	size_t i;
	int rc;

	if ((rc = store_tx_begin(c->db, &c->err)))
		return rc;
	if (replace)
		rc = store_team_ldap_groups_clear(c->db, t->id, &c->err);
	json_array_foreach(body, i, entry)
	{
		if (rc)
			break;
		rc = store_team_ldap_group_put(c->db, t->id, json_string_value(json_object_get(entry, "group")), roles[i],
					       &c->err);
	}
	if (rc == 0)
		rc = store_tx_commit(c->db, &c->err);
	if (rc)
		store_tx_rollback(c->db);
	return rc;
}

/* A group linked with OWNER makes owners: only an owner may link one (as for members). */
static int put(struct api_call *c)
{
	const char *rp = http_query(c->req, "replace");
	bool replace = rp && cstr_ieq(rp, "true"), owner = false;
	enum team_role *roles = NULL;
	json_t *body = NULL;
	struct team t;
	int rc;

	if ((rc = path_team(c, TEAM_ROLE_MAINTAINER, &t)) || (rc = api_body_array(c, &body)))
		return rc;
	if (json_array_size(body) == 0 && !replace) {
		rc = api_fail(c, ERR_INVALID, "Empty LDAP group list");
		goto out;
	}
	if (!(roles = calloc(json_array_size(body) + 1, sizeof *roles))) {
		rc = api_fail(c, ERR_INTERNAL, "out of memory");
		goto out;
	}
	if ((rc = read_entries(c, body, roles)))
		goto out;
	for (size_t i = 0; i < json_array_size(body); i++)
		owner = owner || roles[i] == TEAM_ROLE_OWNER;
	if ((owner || replace) && (rc = rbac_team(c->db, &c->who, &t, TEAM_ROLE_OWNER, &c->err)))
		goto out;
	if ((rc = store_entries(c, &t, body, roles, replace)) == 0)
		rc = api_reply_result(c, "UPDATED", NULL);
out:
	free(roles);
	json_decref(body);
	return rc;
}

static int list(struct api_call *c)
{
	struct team t;
	json_t *v = NULL;
	int rc;

	if ((rc = path_team(c, TEAM_ROLE_NONE, &t)) || (rc = store_team_ldap_groups_json(c->db, t.id, &v, &c->err)))
		return rc;
	return api_reply(c, v);
}

#define SCHEMA_LDAP_GROUPS                                                                                             \
	"{'type':'array','items':{'type':'object','required':['group'],'properties':{'group':{'type':'string'},"       \
	"'role':{'enum':['OWNER','MAINTAINER','MEMBER']}}}}"

static const struct api_doc doc_put = {
    .summary = "Link LDAP groups to a team: their members get the role in the team (replace=true: the list "
	       "becomes the team's groups)",
    .params =
	(const struct api_param_doc[]){DOC_ORG, DOC_TEAM, {"replace", "boolean", "the given groups replace all others"},
				       {0}},
    .body = SCHEMA_LDAP_GROUPS,
    .response = SCHEMA_RESULT,
    .errors = "400 403 404 415",
    .audit = {"TEAM", "UPDATE", "ldapGroups"},
};
static const struct api_doc doc_list = {
    .summary = "The LDAP groups linked to a team",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_TEAM, {0}},
    .response = SCHEMA_LDAP_GROUPS,
    .errors = "404",
};

const struct api_route api_team_ldap_group_routes[] = {
    {"PUT", "/api/v1/org/{org}/team/{team}/ldapGroups", put, 0, &doc_put},
    {"GET", "/api/v1/org/{org}/team/{team}/ldapGroups", list, 0, &doc_list},
    {0},
};
