/* /api/v1/role: roles and their permissions, and the LDAP groups whose members hold a role
 * (Concord's RoleResource; docs/security.md "Roles and permissions").  Admins only, reads
 * too, as in Concord.  The built-in roles keep their names and cannot be deleted. */
#include <stdlib.h>
#include <string.h>

#include "api/doc_schemas.h"
#include "api/routes.h"
#include "auth/rbac.h"
#include "base/jsonx.h"
#include "base/names.h"
#include "base/str.h"
#include "store/roles.h"

#define GROUP_DN_MAX 1024
#define GROUPS_MAX 1000

static json_t *role_json(const struct role *r)
{
	return json_pack("{s:s,s:s,s:o,s:b}", "id", r->id, "name", r->name, "permissions", permissions_json(r->perms),
			 "builtin", r->builtin);
}

/* The role of the path's {name}, for an admin. */
static int path_role(struct api_call *c, struct role *r)
{
	int rc = rbac_admin(&c->who, &c->err);

	return rc ? rc : store_role_find(c->db, api_param(c, "name"), r, &c->err);
}

/* The body's permissions (absent: *given false); an unknown name is 400 naming it. */
static int read_permissions(struct api_call *c, json_t *body, unsigned *perms, bool *given)
{
	json_t *arr = NULL, *v;
	size_t i;

	*given = false;
	if (jsonx_arr(body, "permissions", false, &arr, &c->err))
		return -ERR_INVALID;
	if (!arr)
		return 0;
	*given = true;
	*perms = 0;
	json_array_foreach(arr, i, v)
	{
		unsigned bit;

		if (!json_is_string(v))
			return api_fail(c, ERR_INVALID, "'permissions' must be an array of permission names");
		if (!permission_parse(json_string_value(v), &bit))
			return api_fail(c, ERR_INVALID, "Unknown permission: '%.128s' (known: %s)", json_string_value(v),
					permissions_known());
		*perms |= bit;
	}
	return 0;
}

/* The role the body names: by "id" when given (a rename), else by "name"; *exists false
 * for a new one. */
static int body_role(struct api_call *c, json_t *body, struct role *r, bool *exists)
{
	const char *id = NULL, *name = NULL;
	struct err lookup;
	int rc;

	if ((rc = jsonx_str(body, "id", false, &id, &c->err)) || (rc = jsonx_str(body, "name", !id, &name, &c->err)))
		return rc;
	if (name && (rc = name_check(name, "role", NAME_PLAIN, &c->err)))
		return rc;
	if (name && strlen(name) > ROLE_NAME_MAX)
		return api_fail(c, ERR_INVALID, "role name is longer than %d characters", ROLE_NAME_MAX);
	if (id && !uuid_valid(id, strlen(id)))
		return api_fail(c, ERR_INVALID, "'id' must be a role's id, got '%.64s'", id);
	rc = id ? store_role_get(c->db, id, r, &lookup) : store_role_find(c->db, name, r, &lookup);
	if (rc == -ERR_NOT_FOUND && id)
		return api_fail(c, ERR_NOT_FOUND, "Role not found: %s", id);
	if (rc && rc != -ERR_NOT_FOUND) {
		c->err = lookup;
		return rc;
	}
	*exists = rc == 0;
	if (!*exists) {
		memset(r, 0, sizeof *r);
		uuid_v4(r->id);
	}
	if (*exists && r->builtin && name && strcmp(name, r->name) != 0)
		return api_fail(c, ERR_INVALID, "The built-in role %s cannot be renamed", r->name);
	if (name)
		str_fmt_cut(r->name, sizeof r->name, "%s", name);
	return 0;
}

static int create_or_update(struct api_call *c)
{
	json_t *body = NULL;
	struct role r;
	bool exists = false, given;
	unsigned perms = 0;
	int rc;

	if ((rc = rbac_admin(&c->who, &c->err)) || (rc = api_body_object(c, &body)))
		return rc;
	if ((rc = read_permissions(c, body, &perms, &given)) || (rc = body_role(c, body, &r, &exists)))
		goto out;
	if (given || !exists)
		r.perms = perms;
	rc = exists ? store_role_update(c->db, &r, &c->err) : store_role_insert(c->db, &r, &c->err);
	api_audit_note(c, "roleName", r.name);
	if (rc == 0)
		rc = api_reply_result(c, exists ? "UPDATED" : "CREATED", r.id);
out:
	json_decref(body);
	return rc;
}

static int get(struct api_call *c)
{
	struct role r;
	int rc = path_role(c, &r);

	return rc ? rc : api_reply(c, role_json(&r));
}

static int list(struct api_call *c)
{
	struct role *roles = NULL;
	size_t n = 0;
	json_t *v;
	int rc;

	if ((rc = rbac_admin(&c->who, &c->err)) || (rc = store_role_list(c->db, &roles, &n, &c->err)))
		return rc;
	v = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(v, role_json(&roles[i]));
	free(roles);
	return api_reply(c, v);
}

static int delete (struct api_call *c)
{
	struct role r;
	int rc;

	if ((rc = path_role(c, &r)))
		return rc;
	if (r.builtin)
		return api_fail(c, ERR_INVALID, "The built-in role %s cannot be deleted", r.name);
	api_audit_note(c, "roleId", r.id);
	if ((rc = store_role_delete(c->db, r.id, &c->err)))
		return rc;
	return api_reply_result(c, "DELETED", NULL);
}

static bool has_control(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return true;
	return false;
}

static int check_groups(struct api_call *c, json_t *body)
{
	json_t *g;
	size_t i;

	if (json_array_size(body) > GROUPS_MAX)
		return api_fail(c, ERR_INVALID, "at most %d LDAP groups at once", GROUPS_MAX);
	json_array_foreach(body, i, g)
	{
		const char *s = json_string_value(g);

		if (!s || !s[0] || strlen(s) > GROUP_DN_MAX || has_control(s))
			return api_fail(c, ERR_INVALID, "LDAP group %zu must be a DN of 1 to %d characters", i + 1,
					GROUP_DN_MAX);
	}
	return 0;
}

/* PUT ["dn", …]?replace=: adds the groups (replace: they become the role's groups). */
static int put_groups(struct api_call *c)
{
	bool replace = false;
	json_t *body = NULL, *g;
	struct role r;
	size_t i;
	int rc;

	if ((rc = path_role(c, &r)) || (rc = api_query_bool(c, "replace", &replace)) ||
	    (rc = api_body_array(c, &body)))
		return rc;
	if (json_array_size(body) == 0 && !replace) {
		rc = api_fail(c, ERR_INVALID, "Empty LDAP group list");
		goto out;
	}
	if ((rc = check_groups(c, body)) || (rc = store_tx_begin(c->db, &c->err)))
		goto out;
	if (replace)
		rc = store_role_ldap_groups_clear(c->db, r.id, &c->err);
	json_array_foreach(body, i, g)
	{
		if (rc)
			break;
		rc = store_role_ldap_group_put(c->db, r.id, json_string_value(g), &c->err);
	}
	if (rc == 0)
		rc = store_tx_commit(c->db, &c->err);
	if (rc) {
		store_tx_rollback(c->db);
		goto out;
	}
	api_audit_note(c, "roleName", r.name);
	rc = api_reply_result(c, "UPDATED", NULL);
out:
	json_decref(body);
	return rc;
}

static int list_groups(struct api_call *c)
{
	struct role r;
	json_t *v = NULL;
	int rc;

	if ((rc = path_role(c, &r)) || (rc = store_role_ldap_groups_json(c->db, r.id, &v, &c->err)))
		return rc;
	return api_reply(c, v);
}

#define DOC_ROLE {"name", "string", "the role's name"}
#define SCHEMA_PERMISSIONS                                                                                             \
	"{'type':'array','items':{'enum':['getProcessQueueAllOrgs','createOrg','updateOrg','apiKeySpecifyValue',"     \
	"'agentWebsocket']}}"
#define SCHEMA_ROLE                                                                                                    \
	"{'type':'object','properties':{'id':" SCHEMA_UUID ",'name':{'type':'string'},'permissions':" SCHEMA_PERMISSIONS \
	",'builtin':{'type':'boolean'}}}"

static const struct api_doc doc_create = {
    .summary = "Create a role or update one (by id: a rename; by name) with its permissions (admins only)",
    .body = "{'type':'object','properties':{'id':" SCHEMA_UUID ",'name':{'type':'string','maxLength':128},"
	    "'permissions':" SCHEMA_PERMISSIONS "}}",
    .response = SCHEMA_RESULT,
    .errors = "400 403 404 409 415",
    .audit = {"ROLE", "CREATE_OR_UPDATE", NULL},
};
static const struct api_doc doc_get = {
    .summary = "A role and its permissions (admins only)",
    .params = (const struct api_param_doc[]){DOC_ROLE, {0}},
    .response = SCHEMA_ROLE,
    .errors = "403 404",
};
static const struct api_doc doc_list = {
    .summary = "Every role, by name (admins only)",
    .response = "{'type':'array','items':" SCHEMA_ROLE "}",
    .errors = "403",
};
static const struct api_doc doc_delete = {
    .summary = "Delete a role (admins only; not a built-in one): its users and groups lose it",
    .params = (const struct api_param_doc[]){DOC_ROLE, {0}},
    .response = SCHEMA_RESULT,
    .errors = "400 403 404",
    .audit = {"ROLE", "DELETE", NULL},
};
static const struct api_doc doc_put_groups = {
    .summary = "Link LDAP groups to a role: their members hold it (replace=true: the list becomes the role's "
	       "groups; admins only)",
    .params = (const struct api_param_doc[]){DOC_ROLE,
					     {"replace", "boolean", "the given groups replace all others"},
					     {0}},
    .body = "{'type':'array','items':{'type':'string'}}",
    .response = SCHEMA_RESULT,
    .errors = "400 403 404 415",
    .audit = {"ROLE", "UPDATE", "ldapGroups"},
};
static const struct api_doc doc_list_groups = {
    .summary = "The LDAP groups linked to a role (admins only)",
    .params = (const struct api_param_doc[]){DOC_ROLE, {0}},
    .response = "{'type':'array','items':{'type':'string'}}",
    .errors = "403 404",
};

const struct api_route api_role_routes[] = {
    {"POST", "/api/v1/role", create_or_update, 0, &doc_create},
    {"GET", "/api/v1/role", list, 0, &doc_list},
    {"GET", "/api/v1/role/{name}", get, 0, &doc_get},
    {"DELETE", "/api/v1/role/{name}", delete, 0, &doc_delete},
    {"PUT", "/api/v1/role/{name}/ldapGroups", put_groups, 0, &doc_put_groups},
    {"GET", "/api/v1/role/{name}/ldapGroups", list_groups, 0, &doc_list_groups},
    {0},
};
