/* /api/v1/org: organizations. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/doc_schemas.h"
#include "api/orgs.h"
#include "api/policy_checks.h"
#include "api/routes.h"
#include "auth/rbac.h"
#include "base/datetime.h"
#include "base/jsonx.h"
#include "base/names.h"
#include "base/str.h"
#include "store/orgs.h"
#include "store/users.h"

json_t *org_json(const struct org *o)
{
	json_t *v = json_pack("{s:s,s:s,s:s}", "id", o->id, "name", o->name, "visibility", o->visibility);

	if (o->owner_id[0])
		json_object_set_new(v, "owner",
				    json_pack("{s:s,s:s}", "id", o->owner_id, "username", o->owner_username));
	return v;
}

/* Sets key to the parsed JSON text (skipped when NULL or unparsable). */
static void set_json_text(json_t *v, const char *key, const char *text)
{
	json_t *parsed = text ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;

	if (parsed)
		json_object_set_new(v, key, parsed);
}

/* A user named by an object {"id"} or {"username"(, "userDomain")} in field `key`. */
static int body_user(struct api_call *c, json_t *body, const char *key, struct user *u, bool *given)
{
	const char *id = NULL, *username = NULL, *domain = NULL;
	json_t *obj = NULL;
	struct err lookup;
	int rc;

	*given = false;
	if (jsonx_obj(body, key, false, &obj, &c->err))
		return -ERR_INVALID;
	if (!obj)
		return 0;
	if (jsonx_str(obj, "id", false, &id, &lookup) || jsonx_str(obj, "username", false, &username, &lookup) ||
	    jsonx_str(obj, "userDomain", false, &domain, &lookup))
		return api_fail(c, ERR_INVALID, "'%s': %s", key, lookup.msg);
	if (!id && !username)
		return api_fail(c, ERR_INVALID, "'%s' needs 'id' or 'username'", key);
	if (id && !uuid_valid(id, strlen(id)))
		return api_fail(c, ERR_INVALID, "'%s.id' must be a UUID, got '%.64s'", key, id);
	rc = id ? store_user_get(c->db, id, u, &lookup) : store_user_find(c->db, username, domain, u, &lookup);
	if (rc == -ERR_NOT_FOUND || rc == -ERR_CONFLICT)
		return api_fail(c, ERR_INVALID, "'%s': %s", key, lookup.msg);
	if (rc) {
		c->err = lookup;
		return rc;
	}
	*given = true;
	return 0;
}

static int body_visibility(struct api_call *c, json_t *body, char *dst, size_t cap)
{
	const char *v = NULL;

	if (jsonx_str(body, "visibility", false, &v, &c->err))
		return -ERR_INVALID;
	if (!v)
		return 0;
	if (strcmp(v, "PUBLIC") != 0 && strcmp(v, "PRIVATE") != 0)
		return api_fail(c, ERR_INVALID, "'visibility' must be PUBLIC or PRIVATE, got '%.32s'", v);
	return str_fmt(dst, cap, "%s", v) ? api_fail(c, ERR_INTERNAL, "visibility %s too long", v) : 0;
}

/* The org the body names: by "id" (which must exist) or else by "name". */
static int body_org(struct api_call *c, json_t *body, struct org *o, bool *exists)
{
	const char *id = NULL, *name = NULL;
	int rc;

	if (jsonx_str(body, "id", false, &id, &c->err) || jsonx_str(body, "name", !id, &name, &c->err))
		return -ERR_INVALID;
	if (id) {
		if (!uuid_valid(id, strlen(id)))
			return api_fail(c, ERR_INVALID, "'id' must be a UUID, got '%.64s'", id);
		*exists = true;
		return store_org_get(c->db, id, o, &c->err);
	}
	rc = store_org_find(c->db, name, o, &c->err);
	*exists = rc == 0;
	if (rc == -ERR_NOT_FOUND) {
		memset(o, 0, sizeof *o);
		rc = 0;
	}
	return rc;
}

/* Applies the body's fields to o (omitted fields keep their values). */
static int read_org(struct api_call *c, json_t *body, struct org *o)
{
	const char *name = NULL;
	struct user owner;
	bool has_owner;
	int rc;

	if ((rc = jsonx_str(body, "name", false, &name, &c->err)))
		return rc;
	if (name) {
		if ((rc = name_check(name, "organization", NAME_PLAIN, &c->err)))
			return rc;
		if (str_fmt(o->name, sizeof o->name, "%s", name))
			return api_fail(c, ERR_INVALID, "organization name is longer than %zu characters",
					sizeof o->name - 1);
	}
	if ((rc = body_visibility(c, body, o->visibility, sizeof o->visibility)) ||
	    (rc = body_user(c, body, "owner", &owner, &has_owner)))
		return rc;
	if (has_owner) {
		memcpy(o->owner_id, owner.id, sizeof o->owner_id);
		memcpy(o->owner_username, owner.username, sizeof o->owner_username);
	}
	return 0;
}

/* New org, its team "default" with the creator as OWNER, in one transaction. */
static int insert_org(struct api_call *c, struct org *o, const char *meta, const char *cfg)
{
	struct team t = {0};
	int rc;

	uuid_v4(o->id);
	o->created_at = dt_now_ms();
	if (!o->owner_id[0])
		memcpy(o->owner_id, c->who.user.id, sizeof o->owner_id);
	uuid_v4(t.id);
	memcpy(t.org_id, o->id, sizeof t.org_id);
	str_set_lit(t.name, "default");
	str_set_lit(t.description, "Default team");
	if ((rc = store_tx_begin(c->db, &c->err)))
		return rc;
	if ((rc = store_org_insert(c->db, o, meta, cfg, &c->err)) == 0 &&
	    (rc = store_team_insert(c->db, &t, &c->err)) == 0 &&
	    (rc = store_team_member_set(c->db, t.id, c->who.user.id, TEAM_ROLE_OWNER, &c->err)) == 0)
		rc = store_tx_commit(c->db, &c->err);
	if (rc)
		store_tx_rollback(c->db);
	return rc;
}

static int create_or_update(struct api_call *c)
{
	json_t *body = NULL;
	char *meta = NULL, *cfg = NULL;
	struct org o;
	bool exists = false, hidden = false;
	int rc;

	if ((rc = api_body_object(c, &body)))
		return rc;
	if ((rc = body_org(c, body, &o, &exists)))
		goto out;
	rc = exists ? rbac_org_reach(&c->who, o.id, o.name, &c->err) : 0;
	if (rc == 0)
		rc = exists ? rbac_org_user(c->db, &c->who, &o, RBAC_ORG_OWNER, &c->err)
			    : rbac_permission(&c->who, PERM_CREATE_ORG, "create organizations", &c->err);
	if (exists && rc && rc != -ERR_INTERNAL && rbac_permitted(&c->who, PERM_UPDATE_ORG) &&
	    rbac_org_reach(&c->who, o.id, o.name, &c->err) == 0)
		rc = 0; /* updateOrg: any org, as its owners may */
	if (rc == -ERR_NOT_FOUND) { /* a PRIVATE org the caller cannot see: as if it were new */
		hidden = true;
		rc = rbac_permission(&c->who, PERM_CREATE_ORG, "create organizations", &c->err);
	}
	if (rc == -ERR_FORBIDDEN) /* Concord's words */
		rc = api_fail(c, ERR_FORBIDDEN, "Only roles with '%s' permission are allowed to update organizations",
			      exists && !hidden ? "updateOrg" : "createOrg");
	if (rc == 0 && !exists)
		rc = rbac_org_reach(&c->who, "", o.name, &c->err);
	if (rc)
		goto out;
	if (!exists)
		str_set_lit(o.visibility, "PUBLIC");
	if ((rc = read_org(c, body, &o)) || (rc = api_body_json_text(c, body, "meta", &meta)) ||
	    (rc = api_body_json_text(c, body, "cfg", &cfg)))
		goto out;
	if ((rc = api_policy_org(c, &o, body, exists)))
		goto out;
	rc = exists ? store_org_update(c->db, &o, meta, cfg, &c->err) : insert_org(c, &o, meta, cfg);
	api_audit_note(c, "orgName", o.name);
	if (rc == 0)
		rc = api_reply_result(c, exists ? "UPDATED" : "CREATED", o.id);
out:
	free(meta);
	free(cfg);
	json_decref(body);
	return rc;
}

static int list(struct api_call *c)
{
	const char *only = http_query(c->req, "onlyCurrent"), *filter = http_query(c->req, "filter");
	bool only_current = only && cstr_ieq(only, "true");
	bool see_all =
	    principal_is_admin(&c->who) || (c->who.user.roles & (ROLE_SYSTEM_READER | ROLE_SYSTEM_WRITER)) != 0;
	struct org_query q = {0};
	struct org *orgs = NULL;
	size_t n = 0;
	json_t *arr;
	int rc;

	if ((rc = api_paging(c, &q.limit, &q.offset)))
		return rc;
	q.user_id = see_all && !only_current ? NULL : c->who.user.id;
	q.include_public = !only_current;
	q.name_has = filter && *filter ? filter : NULL;
	if ((rc = store_org_list(c->db, &q, &orgs, &n, &c->err)))
		return rc;
	arr = json_array();
	for (size_t i = 0; i < n; i++) {
		struct err ignored;
		/* The cron user's teams count for its own org only (auth/rbac.h). */
		if (user_id_is_system(c->who.user.id) && rbac_org(c->db, &c->who, &orgs[i], RBAC_ORG_VIEW, &ignored))
			continue;
		json_array_append_new(arr, org_json(&orgs[i]));
	}
	free(orgs);
	return api_reply(c, arr);
}

static int get(struct api_call *c)
{
	char *meta = NULL, *cfg = NULL;
	struct err not_member;
	struct org o;
	json_t *v;
	int rc;

	if ((rc = store_org_find(c->db, api_param(c, "org"), &o, &c->err)) ||
	    (rc = rbac_org(c->db, &c->who, &o, RBAC_ORG_VIEW, &c->err)) ||
	    (rc = store_org_meta_cfg(c->db, o.id, &meta, &cfg, &c->err)))
		return rc;
	v = org_json(&o);
	set_json_text(v, "meta", meta);
	/* cfg is configuration for the org's processes: members only, even for PUBLIC orgs. */
	if (rbac_org(c->db, &c->who, &o, RBAC_ORG_MEMBER, &not_member) == 0)
		set_json_text(v, "cfg", cfg);
	free(meta);
	free(cfg);
	return api_reply(c, v);
}

static int delete (struct api_call *c)
{
	const char *confirm = http_query(c->req, "confirmation");
	struct org o;
	int rc;

	if ((rc = rbac_admin(&c->who, &c->err)))
		return rc;
	if (!confirm || strcmp(confirm, "yes") != 0)
		return api_fail(c, ERR_INVALID, "Operation must be confirmed: add ?confirmation=yes");
	if ((rc = store_org_find(c->db, api_param(c, "org"), &o, &c->err)) ||
	    (rc = rbac_org_reach(&c->who, o.id, o.name, &c->err)))
		return rc;
	if (strcmp(o.id, DEFAULT_ORG_ID) == 0)
		return api_fail(c, ERR_CONFLICT, "the built-in organization %s cannot be deleted", o.name);
	if ((rc = store_tx_begin(c->db, &c->err)))
		return rc;
	if ((rc = store_org_delete(c->db, o.id, &c->err)) == 0)
		rc = store_tx_commit(c->db, &c->err);
	if (rc) {
		store_tx_rollback(c->db);
		return rc;
	}
	return api_reply_result(c, "DELETED", NULL);
}

#define SCHEMA_ORG                                                                                                     \
	"{'type':'object','properties':{'id':" SCHEMA_UUID ",'name':{'type':'string'},"                                \
	"'visibility':{'enum':['PUBLIC','PRIVATE']},'owner':" SCHEMA_OWNER ",'meta':" SCHEMA_OBJECT                    \
	",'cfg':" SCHEMA_OBJECT "}}"

static const struct api_doc doc_create = {
    .summary = "Create an organization (admins) or update one (its owners), by id or name",
    .body = "{'type':'object','properties':{'id':" SCHEMA_UUID ",'name':{'type':'string'},"
	    "'visibility':{'enum':['PUBLIC','PRIVATE']},'owner':" SCHEMA_OWNER ",'meta':" SCHEMA_OBJECT
	    ",'cfg':" SCHEMA_OBJECT "}}",
    .response = SCHEMA_RESULT,
    .errors = "400 403 404 409 415",
    .audit = {"ORGANIZATION", "CREATE_OR_UPDATE", NULL},
};
static const struct api_doc doc_list = {
    .summary = "Organizations the caller can see",
    .params =
	(const struct api_param_doc[]){{"onlyCurrent", "boolean", "only the organizations the caller is a member of"},
				       DOC_FILTER,
				       DOC_PAGING,
				       {0}},
    .response = "{'type':'array','items':" SCHEMA_ORG "}",
    .errors = "400",
};
static const struct api_doc doc_get = {
    .summary = "An organization",
    .params = (const struct api_param_doc[]){DOC_ORG, {0}},
    .response = SCHEMA_ORG,
    .errors = "404",
};
static const struct api_doc doc_delete = {
    .summary = "Delete an organization with everything in it (admins; needs confirmation=yes)",
    .params = (const struct api_param_doc[]){DOC_ORG, {"confirmation", "string", "must be 'yes'"}, {0}},
    .response = SCHEMA_RESULT,
    .errors = "400 403 404",
    .audit = {"ORGANIZATION", "DELETE", NULL},
};

const struct api_route api_org_routes[] = {
    {"POST", "/api/v1/org", create_or_update, 0, &doc_create},
    {"GET", "/api/v1/org", list, 0, &doc_list},
    {"GET", "/api/v1/org/{org}", get, 0, &doc_get},
    {"DELETE", "/api/v1/org/{org}", delete, 0, &doc_delete},
    {0},
};
