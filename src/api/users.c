/* /api/v1/user: local users (admin only); GET /api/v2/user: the list of active users. */
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "api/doc_schemas.h"
#include "api/routes.h"
#include "auth/password.h"
#include "base/json_pluck.h"
#include "auth/rbac.h"
#include "base/datetime.h"
#include "base/jsonx.h"
#include "base/str.h"
#include "base/username.h"
#include "store/ldap_groups.h"
#include "store/roles.h"
#include "store/users.h"

static json_t *user_json(const struct user *u)
{
	json_t *v =
	    json_pack("{s:s,s:s,s:s,s:b}", "id", u->id, "name", u->username, "type", u->type, "disabled", u->disabled);
	json_t *roles = json_array();
	char ts[DT_ISO_LEN];

	if (u->domain[0])
		json_object_set_new(v, "domain", json_string(u->domain));
	jsonx_set_opt_str(v, "displayName", u->display_name[0] ? u->display_name : NULL);
	jsonx_set_opt_str(v, "email", u->email[0] ? u->email : NULL);
	if (u->roles & ROLE_ADMIN)
		json_array_append_new(roles, json_pack("{s:s}", "name", "concordAdmin"));
	if (u->roles & ROLE_SYSTEM_READER)
		json_array_append_new(roles, json_pack("{s:s}", "name", "concordSystemReader"));
	if (u->roles & ROLE_SYSTEM_WRITER)
		json_array_append_new(roles, json_pack("{s:s}", "name", "concordSystemWriter"));
	json_object_set_new(v, "roles", roles);
	dt_format_iso(u->created_at, ts);
	json_object_set_new(v, "createdAt", json_string(ts));
	return v;
}

/* user_json with "roles" as Concord's UserEntry has them: every role the user holds, the
 * built-in ones, those given through /api/v1/role and through directory groups, each
 * {"id", "name", "permissions"}. */
static int user_json_held(struct api_call *c, const struct user *u, json_t **out)
{
	unsigned held, perms;
	json_t *roles;
	int rc;

	*out = NULL;
	if ((rc = store_user_grants(c->db, u->id, u->roles, &held, &perms, &roles, &c->err)))
		return rc;
	*out = user_json(u);
	json_object_set_new(*out, "roles", roles);
	return 0;
}

static int check_username(struct api_call *c, const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 128)
		return api_fail(c, ERR_INVALID, "'username' must have 1 to 128 characters");
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x21 || s[i] == ':' || s[i] == '/' || s[i] == 0x7f)
			return api_fail(c, ERR_INVALID,
					"'username' may not contain spaces, control characters, ':' or '/': '%.128s'",
					s);
	return 0;
}

static int copy_field(struct api_call *c, json_t *body, const char *key, char *dst, size_t cap)
{
	const char *v = NULL;

	if (jsonx_str(body, key, false, &v, &c->err))
		return -ERR_INVALID;
	if (!v)
		return 0;
	if (str_fmt(dst, cap, "%s", v))
		return api_fail(c, ERR_INVALID, "'%s' is longer than %zu characters", key, cap - 1);
	return 0;
}

#define USER_ROLES_MAX 64

/* The roles other than the built-in ones that a body names (given: the body has "roles"). */
struct other_roles {
	bool given;
	size_t n;
	char ids[USER_ROLES_MAX][UUID_STR_LEN];
};

/* "roles": built-in names become u->roles bits, the others must name roles (store/roles.h). */
static int read_roles(struct api_call *c, json_t *body, struct user *u, struct other_roles *other)
{
	json_t *arr = NULL, *v;
	unsigned bits = 0;
	size_t i;

	if (jsonx_arr(body, "roles", false, &arr, &c->err))
		return -ERR_INVALID;
	if (!arr)
		return 0;
	if (json_array_size(arr) > USER_ROLES_MAX)
		return api_fail(c, ERR_INVALID, "'roles' has more than %d entries", USER_ROLES_MAX);
	other->given = true;
	other->n = 0;
	json_array_foreach(arr, i, v)
	{
		const char *name = json_string_value(v);
		unsigned bit;
		struct role r;
		struct err none;

		if (!name)
			return api_fail(c, ERR_INVALID, "'roles' must be an array of role names");
		if (user_roles_parse(&name, 1, &bit, &none) == 0) {
			bits |= bit;
			continue;
		}
		if (store_role_find(c->db, name, &r, &none))
			return none.code == ERR_NOT_FOUND ? api_fail(c, ERR_INVALID, "unknown role '%.128s'", name)
							  : api_fail(c, none.code, "%s", none.msg);
		memcpy(other->ids[other->n++], r.id, UUID_STR_LEN);
	}
	u->roles = bits;
	return 0;
}

/* Stores u (insert or update) and, when given, its other roles: one transaction. */
static int write_user(struct api_call *c, const struct user *u, bool exists, const char *hash,
		      const struct other_roles *other)
{
	int rc;

	if ((rc = store_tx_begin(c->db, &c->err)))
		return rc;
	rc = exists ? store_user_update(c->db, u, hash, &c->err)
		    : store_user_insert_joining_default(c->db, u, hash, &c->err);
	if (rc == 0 && other->given)
		rc = store_user_roles_set(c->db, u->id, (char(*)[UUID_STR_LEN])other->ids, other->n, &c->err);
	if (rc == 0)
		rc = store_tx_commit(c->db, &c->err);
	if (rc)
		store_tx_rollback(c->db);
	return rc;
}

static int read_type(struct api_call *c, json_t *body, struct user *u)
{
	const char *type = NULL;

	if (jsonx_str(body, "type", false, &type, &c->err) ||
	    (!type && jsonx_str(body, "userType", false, &type, &c->err)))
		return -ERR_INVALID;
	if (!type)
		return 0;
	if (strcmp(type, "LOCAL") != 0 && strcmp(type, "LDAP") != 0)
		return api_fail(c, ERR_INVALID, "'type' must be LOCAL or LDAP, got '%.32s'", type);
	return str_fmt(u->type, sizeof u->type, "%s", type) ? api_fail(c, ERR_INTERNAL, "type %s too long", type) : 0;
}

/* Fills u from the body over whatever u holds (so omitted fields keep their values).  The
 * password was taken out of the body's text before parsing (pw, base/json_pluck.h), so
 * it never became a jansson string. */
static int read_user(struct api_call *c, json_t *body, const struct json_plucked *pw, struct user *u,
		     struct other_roles *other, char hash[PASSWORD_HASH_MAX], bool *has_hash)
{
	const char *password = pw->value;
	json_t *v = json_object_get(body, "password");
	int rc;

	if ((rc = copy_field(c, body, "displayName", u->display_name, sizeof u->display_name)) ||
	    (rc = copy_field(c, body, "email", u->email, sizeof u->email)) || (rc = read_type(c, body, u)) ||
	    (rc = read_roles(c, body, u, other)) || (rc = jsonx_bool(body, "disabled", false, &u->disabled, &c->err)))
		return rc;
	if (v && !json_is_null(v) && !json_is_string(v))
		return api_fail(c, ERR_INVALID, "'password' must be a string");
	*has_hash = false;
	if (password) {
		if (strlen(password) < 8 || strlen(password) > 1024)
			return api_fail(c, ERR_INVALID, "'password' must have 8 to 1024 characters");
		if ((rc = password_hash(password, hash, &c->err)))
			return rc;
		*has_hash = true;
	}
	return 0;
}

static int create_or_update(struct api_call *c)
{
	json_t *body = NULL;
	const char *username = NULL, *domain = NULL;
	char hash[PASSWORD_HASH_MAX];
	bool has_hash = false, exists;
	struct user u = {0};
	struct other_roles other = {0};
	struct json_plucked pw = {.key = "password"};
	struct err lookup;
	int rc;

	if ((rc = rbac_admin(&c->who, &c->err)))
		return rc;
	(void)json_pluck(c->req->body.data, c->req->body.len, &pw, 1);
	if ((rc = api_body_object(c, &body)))
		goto out;
	if ((rc = jsonx_str(body, "username", true, &username, &c->err)) ||
	    (rc = jsonx_str(body, "userDomain", false, &domain, &c->err)) || (rc = check_username(c, username)))
		goto out;
	rc = store_user_find(c->db, username, domain ? domain : "", &u, &lookup);
	if (rc && rc != -ERR_NOT_FOUND) {
		c->err = lookup;
		goto out;
	}
	exists = rc == 0;
	if (!exists) {
		memset(&u, 0, sizeof u);
		uuid_v4(u.id);
		if (strlen(username) >= sizeof u.username) {
			rc =
			    api_fail(c, ERR_INVALID, "'username' is longer than %zu characters", sizeof u.username - 1);
			goto out;
		}
		username_fold(username, u.username, sizeof u.username); /* lower case, as Concord stores it */
		if (str_fmt(u.domain, sizeof u.domain, "%s", domain ? domain : "")) {
			rc =
			    api_fail(c, ERR_INVALID, "'userDomain' is longer than %zu characters", sizeof u.domain - 1);
			goto out;
		}
		str_set_lit(u.type, "LOCAL");
	}
	if ((rc = read_user(c, body, &pw, &u, &other, hash, &has_hash)))
		goto out;
	if (exists && strcmp(u.id, ADMIN_USER_ID) == 0 && (u.disabled || !(u.roles & ROLE_ADMIN))) {
		rc = api_fail(c, ERR_CONFLICT, "the built-in admin cannot be disabled or lose the concordAdmin role");
		goto out;
	}
	rc = write_user(c, &u, exists, has_hash ? hash : NULL, &other);
	api_audit_note(c, "username", u.username);
	if (rc == 0)
		rc = api_reply(c, json_pack("{s:b,s:s,s:s,s:s}", "ok", 1, "id", u.id, "username", u.username, "result",
					    exists ? "UPDATED" : "CREATED"));
out:
	sodium_memzero(hash, sizeof hash);
	json_pluck_free(&pw, 1);
	json_decref(body);
	return rc;
}

static int get(struct api_call *c)
{
	const char *name = api_param(c, "username");
	struct user u;
	json_t *v, *groups;
	int rc;

	if ((rc = rbac_admin(&c->who, &c->err)))
		return rc;
	rc = store_user_find(c->db, name, http_query(c->req, "userDomain"), &u, &c->err);
	if (rc == -ERR_CONFLICT)
		return api_recode(c, ERR_INVALID);
	if (rc)
		return rc;
	if ((rc = store_user_ldap_groups_json(c->db, u.id, &groups, &c->err)))
		return rc;
	if ((rc = user_json_held(c, &u, &v))) {
		json_decref(groups);
		return rc;
	}
	if (groups)
		json_object_set_new(v, "ldapGroups", groups);
	return api_reply(c, v);
}

static int delete (struct api_call *c)
{
	const char *id = api_param(c, "id");
	int rc;

	if ((rc = rbac_admin(&c->who, &c->err)))
		return rc;
	if (!uuid_valid(id, strlen(id)))
		return api_fail(c, ERR_NOT_FOUND, "User not found: %.64s", id);
	if (strcmp(id, ADMIN_USER_ID) == 0)
		return api_fail(c, ERR_CONFLICT, "the built-in admin cannot be deleted");
	if ((rc = store_user_delete(c->db, id, &c->err)))
		return rc;
	return api_reply_result(c, "DELETED", NULL);
}

/* The names of the roles given to u directly: built-in ones, then the others by name. */
static int role_names(struct api_call *c, const struct user *u, json_t **out)
{
	struct role *others = NULL;
	size_t n = 0;
	int rc;

	if ((rc = store_user_roles_list(c->db, u->id, &others, &n, &c->err)))
		return rc;
	*out = json_array();
	if (u->roles & ROLE_ADMIN)
		json_array_append_new(*out, json_string("concordAdmin"));
	if (u->roles & ROLE_SYSTEM_READER)
		json_array_append_new(*out, json_string("concordSystemReader"));
	if (u->roles & ROLE_SYSTEM_WRITER)
		json_array_append_new(*out, json_string("concordSystemWriter"));
	for (size_t i = 0; i < n; i++)
		json_array_append_new(*out, json_string(others[i].name));
	free(others);
	return 0;
}

/* The user of the path's {username} (admins only). */
static int path_user(struct api_call *c, struct user *u)
{
	int rc = rbac_admin(&c->who, &c->err);

	if (rc == 0)
		rc = store_user_find(c->db, api_param(c, "username"), http_query(c->req, "userDomain"), u, &c->err);
	return rc == -ERR_CONFLICT ? api_recode(c, ERR_INVALID) : rc;
}

static int get_roles(struct api_call *c)
{
	struct user u;
	json_t *names = NULL;
	int rc = path_user(c, &u);

	if (rc || (rc = role_names(c, &u, &names)))
		return rc;
	return api_reply(c, json_pack("{s:s, s:o}", "username", u.username, "roles", names));
}

/* POST or PUT {"roles": [...]}: replaces the user's global roles (Concord's updateUserRoles). */
static int set_roles(struct api_call *c)
{
	json_t *body = NULL;
	struct user u;
	struct other_roles other = {0};
	int rc;

	if ((rc = path_user(c, &u)) || (rc = api_body_object(c, &body)))
		goto out;
	if (!json_is_array(json_object_get(body, "roles"))) {
		rc = api_fail(c, ERR_INVALID, "'roles' is required: a list of role names");
		goto out;
	}
	if ((rc = read_roles(c, body, &u, &other)))
		goto out;
	if (strcmp(u.id, ADMIN_USER_ID) == 0 && !(u.roles & ROLE_ADMIN)) {
		rc = api_fail(c, ERR_CONFLICT, "the built-in admin cannot lose the concordAdmin role");
		goto out;
	}
	api_audit_note(c, "username", u.username);
	if ((rc = write_user(c, &u, true, NULL, &other)) == 0)
		rc = api_reply_result(c, "UPDATED", NULL);
out:
	json_decref(body);
	return rc;
}

/* The user of the path's {id} disabled or enabled (admins only; never the built-in admin
 * disabled); answers the user. */
static int set_disabled(struct api_call *c, bool disabled)
{
	const char *id = api_param(c, "id");
	struct user u;
	json_t *v;
	int rc;

	if ((rc = rbac_admin(&c->who, &c->err)))
		return rc;
	if (!uuid_valid(id, strlen(id)))
		return api_fail(c, ERR_NOT_FOUND, "User not found: %.64s", id);
	if (disabled && strcmp(id, ADMIN_USER_ID) == 0)
		return api_fail(c, ERR_CONFLICT, "the built-in admin cannot be disabled");
	if ((rc = store_user_get(c->db, id, &u, &c->err)))
		return rc;
	u.disabled = disabled;
	api_audit_note(c, "username", u.username);
	if ((rc = store_user_update(c->db, &u, NULL, &c->err)) || (rc = user_json_held(c, &u, &v)))
		return rc;
	return api_reply(c, v);
}

/* PUT /api/v1/user/{id}/disable: the user can no longer log in. */
static int disable(struct api_call *c)
{
	bool permanent = false;
	int rc = api_query_bool(c, "permanent", &permanent);

	return rc ? rc : set_disabled(c, true);
}

/* PUT /api/v1/user/{id}/enable: undoes a disable. */
static int enable(struct api_call *c)
{
	return set_disabled(c, false);
}

/* Whether the caller sees whole user entries (else names only: a member picker's needs). */
static bool sees_users(struct api_call *c)
{
	return principal_is_admin(&c->who) || (c->who.user.roles & ROLE_SYSTEM_READER);
}

static void trim_user(json_t *v)
{
	json_object_del(v, "email");
	json_object_del(v, "roles");
}

/* GET /api/v2/user/{id}: one user (whole for admins, global readers and the user itself). */
static int get_v2(struct api_call *c)
{
	const char *id = api_param(c, "id");
	struct user u;
	json_t *v;
	int rc;

	if (!uuid_valid(id, strlen(id)))
		return api_fail(c, ERR_NOT_FOUND, "User not found: %.64s", id);
	if ((rc = store_user_get(c->db, id, &u, &c->err)))
		return rc;
	if (!sees_users(c) && strcmp(u.id, c->who.user.id) != 0)
		trim_user(v = user_json(&u));
	else if ((rc = user_json_held(c, &u, &v)))
		return rc;
	return api_reply(c, v);
}

#define V2_LIMIT_DEFAULT 10 /* Concord's */

/* GET /api/v2/user?filter=&offset=&limit=: active users by name.  Admins and global
 * readers get whole entries; other users the names only (a member picker's needs). */
static int list_v2(struct api_call *c)
{
	const char *filter = http_query(c->req, "filter");
	bool full = sees_users(c);
	struct user *users = NULL;
	size_t n = 0, limit, offset;
	json_t *list;
	int rc;

	if ((rc = api_paging(c, &limit, &offset)))
		return rc;
	if (!http_query(c->req, "limit"))
		limit = V2_LIMIT_DEFAULT;
	if (filter && strlen(filter) > 128)
		return api_fail(c, ERR_INVALID, "'filter' is longer than 128 characters");
	if ((rc = store_user_list(c->db, filter && *filter ? filter : NULL, offset, limit, &users, &n, &c->err)))
		return rc;
	list = json_array();
	for (size_t i = 0; rc == 0 && i < n; i++) {
		json_t *v = NULL;
		if (!full)
			trim_user(v = user_json(&users[i]));
		else
			rc = user_json_held(c, &users[i], &v);
		json_array_append_new(list, v);
	}
	free(users);
	if (rc) {
		json_decref(list);
		return rc;
	}
	return api_reply(c, list);
}

/* concordAdmin, concordSystemReader, concordSystemWriter or the name of a role (api/roles.c) */
#define SCHEMA_ROLES "{'type':'array','items':{'type':'string'}}"

static const struct api_doc doc_create = {
    .summary = "Create a local user or update one (admins only)",
    .body = "{'type':'object','required':['username'],'properties':{'username':{'type':'string','maxLength':128},"
	    "'userDomain':{'type':'string'},'displayName':{'type':'string'},'email':{'type':'string'},"
	    "'type':{'enum':['LOCAL','LDAP']},'password':{'type':'string','writeOnly':true},"
	    "'roles':" SCHEMA_ROLES ",'disabled':{'type':'boolean'}}}",
    .response = "{'type':'object','properties':{'ok':{'type':'boolean'},'id':" SCHEMA_UUID
		",'username':{'type':'string'},'result':{'enum':['CREATED','UPDATED']}}}",
    .errors = "400 403 409 415",
    .audit = {"USER", "CREATE_OR_UPDATE", NULL},
};
static const struct api_doc doc_get = {
    .summary = "A user by name (admins only)",
    .params = (const struct api_param_doc[]){{"username", "string", "the user's name"},
					     {"userDomain", "string", "the user's domain (LDAP users)"},
					     {0}},
    .response = "{'type':'object','properties':{'id':" SCHEMA_UUID ",'name':{'type':'string'},"
		"'domain':{'type':'string'},'type':{'type':'string'},'disabled':{'type':'boolean'},"
		"'displayName':{'type':'string'},'email':{'type':'string'},'roles':{'type':'array','items':{"
		"'type':'object','properties':{'id':" SCHEMA_UUID ",'name':{'type':'string'},'permissions':{'type':"
		"'array','items':{'type':'string'}}}}},'ldapGroups':{'type':'array','items':{'type':'string'}},"
		"'createdAt':" SCHEMA_DATE "}}",
    .errors = "400 403 404",
};
static const struct api_doc doc_delete = {
    .summary = "Delete a user by id (admins only; not the built-in admin)",
    .params = (const struct api_param_doc[]){{"id", "string", "the user's id"}, {0}},
    .response = SCHEMA_RESULT,
    .errors = "403 404 409",
    .audit = {"USER", "DELETE", NULL},
};

static const struct api_doc doc_get_roles = {
    .summary = "A user's global roles (admins only)",
    .params = (const struct api_param_doc[]){{"username", "string", "the user's name"},
					     {"userDomain", "string", "the user's domain (LDAP users)"},
					     {0}},
    .response = "{'type':'object','properties':{'username':{'type':'string'},'roles':" SCHEMA_ROLES "}}",
    .errors = "400 403 404",
};
static const struct api_doc doc_set_roles = {
    .summary = "Replace a user's global roles (admins only; Concord's updateUserRoles)",
    .params = (const struct api_param_doc[]){{"username", "string", "the user's name"},
					     {"userDomain", "string", "the user's domain (LDAP users)"},
					     {0}},
    .body = "{'type':'object','required':['roles'],'properties':{'roles':" SCHEMA_ROLES "}}",
    .response = SCHEMA_RESULT,
    .errors = "400 403 404 409 415",
    .audit = {"USER", "UPDATE_ROLES", NULL},
};
static const struct api_doc doc_disable = {
    .summary = "Disable a user (admins only): the user can no longer log in; answers the user",
    .params =
	(const struct api_param_doc[]){{"id", "string", "the user's id"},
				       {"permanent", "boolean", "accepted for Concord's clients; every disable is"},
				       {0}},
    .response = "{'type':'object'}",
    .errors = "400 403 404 409",
    .audit = {"USER", "DISABLE", NULL},
};
static const struct api_doc doc_enable = {
    .summary = "Enable a disabled user again (admins only); answers the user",
    .params = (const struct api_param_doc[]){{"id", "string", "the user's id"}, {0}},
    .response = "{'type':'object'}",
    .errors = "403 404",
    .audit = {"USER", "ENABLE", NULL},
};
static const struct api_doc doc_get_v2 = {
    .summary = "A user by id (email and roles for admins, global readers and the user itself)",
    .params = (const struct api_param_doc[]){{"id", "string", "the user's id"}, {0}},
    .response = "{'type':'object'}",
    .errors = "404",
};
static const struct api_doc doc_list_v2 = {
    .summary = "Active users whose name, display name or email contains filter (by name; limit defaults to 10)",
    .params = (const struct api_param_doc[]){{"filter", "string", "a part of the name, display name or email"},
					     {"offset", "integer", "users to skip"},
					     {"limit", "integer", "at most this many (default 10)"},
					     {0}},
    .response = "{'type':'array','items':{'type':'object'}}",
    .errors = "400",
};

const struct api_route api_user_routes[] = {
    {"POST", "/api/v1/user", create_or_update, 0, &doc_create},
    {"GET", "/api/v1/user/{username}", get, 0, &doc_get},
    {"DELETE", "/api/v1/user/{id}", delete, 0, &doc_delete},
    {"GET", "/api/v1/user/{username}/roles", get_roles, 0, &doc_get_roles},
    {"PUT", "/api/v1/user/{username}/roles", set_roles, 0, &doc_set_roles},
    {"POST", "/api/v1/user/{username}/roles", set_roles, 0, &doc_set_roles},
    {"PUT", "/api/v1/user/{id}/disable", disable, 0, &doc_disable},
    {"PUT", "/api/v1/user/{id}/enable", enable, 0, &doc_enable},
    {"GET", "/api/v2/user", list_v2, 0, &doc_list_v2},
    {"GET", "/api/v2/user/{id}", get_v2, 0, &doc_get_v2},
    {0},
};
