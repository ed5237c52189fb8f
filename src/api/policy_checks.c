/* The policy rules the API enforces (api/policy_checks.h). */
#include "api/policy_checks.h"

#include <inttypes.h>
#include <stdlib.h>

#include "base/str.h"
#include "inventory/jsonstore.h"
#include "policy/policy.h"
#include "store/ldap_groups.h"
#include "store/inventories.h"
#include "store/orgs.h"
#include "store/policies.h"
#include "store/projects.h"
#include "store/repositories.h"
#include "store/secrets.h"

/* The effective rules for the place and the caller: *rules new (NULL: none). */
static int effective(struct api_call *c, const char *org_id, const char *project_id, json_t **rules,
		     char name[POLICY_NAME_MAX + 1])
{
	struct policy_place at = {org_id, project_id, c->who.user.id[0] ? c->who.user.id : NULL};

	return store_policy_effective(c->db, &at, rules, name, &c->err);
}

/* The owner of an entity the caller writes: who they are, as Concord's entity rules see it. */
static json_t *owner_of(struct api_call *c)
{
	const struct user *u = &c->who.user;
	json_t *groups = NULL, *o;
	struct err ignored;

	if (store_user_ldap_groups_json(c->db, u->id, &groups, &ignored) || !groups)
		groups = json_array();
	o = json_pack("{s:s, s:s, s:s, s:s, s:s, s:o}", "id", u->id, "username", u->username, "userType",
		      u->type[0] ? u->type : "LOCAL", "email", u->email, "displayName", u->display_name, "groups",
		      groups);
	return o;
}

int api_policy_entity(struct api_call *c, const char *org_id, const char *project_id, const char *entity,
		      const char *action, json_t *attrs)
{
	char name[POLICY_NAME_MAX + 1];
	json_t *rules = NULL, *subject;
	const json_t *rule;
	int rc = 0;

	if (effective(c, org_id, project_id, &rules, name))
		return -1;
	if (!json_object_get(rules, "entity")) {
		json_decref(rules);
		return 0;
	}
	subject = json_pack("{s:o, s:O}", "owner", owner_of(c), "entity", attrs ? attrs : json_object());
	if (subject && policy_entity_check(rules, entity, action, subject, &rule) == POLICY_DENY)
		rc = policy_refuse(&c->err, ERR_FORBIDDEN, name, rule, "Action '{1}' on entity '{0}' is forbidden",
				   entity, action);
	json_decref(subject);
	json_decref(rules);
	return rc;
}

/* attrs (taken over) with the body's meta and cfg. */
static int entity(struct api_call *c, const char *org_id, const char *project_id, const char *kind, bool exists,
		  json_t *attrs, json_t *body)
{
	int rc;

	if (!attrs)
		return api_fail(c, ERR_INTERNAL, "out of memory");
	if (json_is_object(json_object_get(body, "meta")))
		json_object_set(attrs, "meta", json_object_get(body, "meta"));
	if (json_is_object(json_object_get(body, "cfg")))
		json_object_set(attrs, "cfg", json_object_get(body, "cfg"));
	rc = api_policy_entity(c, org_id, project_id, kind, exists ? "update" : "create", attrs);
	json_decref(attrs);
	return rc;
}

int api_policy_org(struct api_call *c, const struct org *o, json_t *body, bool exists)
{
	json_t *attrs = json_pack("{s:s}", "name", o->name);

	if (attrs && exists)
		json_object_set_new(attrs, "id", json_string(o->id));
	return entity(c, exists ? o->id : NULL, NULL, "org", exists, attrs, body);
}

int api_policy_project(struct api_call *c, const struct project *p, const char *org_name, json_t *body, bool exists)
{
	json_t *attrs = json_pack("{s:s, s:s, s:s, s:s}", "name", p->name, "orgId", p->org_id, "orgName", org_name,
				  "visibility", p->visibility);

	if (attrs && exists)
		json_object_set_new(attrs, "id", json_string(p->id));
	return entity(c, p->org_id, exists ? p->id : NULL, "project", exists, attrs, body);
}

int api_policy_secret(struct api_call *c, const struct secret *s)
{
	json_t *attrs = json_pack("{s:s, s:s, s:s, s:s, s:s}", "name", s->name, "orgId", s->org_id, "type",
				  secret_type_name(s->type), "visibility", s->is_public ? "PUBLIC" : "PRIVATE",
				  "storeType", s->store_type[0] ? s->store_type : "concord");

	return entity(c, s->org_id, NULL, "secret", false, attrs, NULL);
}

int api_policy_repository(struct api_call *c, const struct repository *r, bool exists)
{
	json_t *attrs = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "name", r->name, "url", r->url, "branch",
				  r->branch, "orgId", r->org_id, "orgName", r->org_name, "projectId", r->project_id,
				  "projectName", r->project_name);

	if (attrs && r->secret_id[0])
		json_object_set_new(attrs, "secret",
				    json_pack("{s:s, s:s}", "id", r->secret_id, "name", r->secret_name));
	return entity(c, r->org_id, r->project_id, "repository", exists, attrs, NULL);
}

/* jsonStore.store.maxNumberPerOrg against the org's stores (a new store only). */
static int json_store_count(struct api_call *c, const struct org *o, const char *policy, const json_t *rule)
{
	struct inventory *all = NULL;
	size_t n = 0;
	int64_t max = policy_number(json_object_get(rule, "maxNumberPerOrg"));
	char a[24], b[24];

	if (max < 0)
		return 0;
	if (store_inventory_list(c->db, o->id, &all, &n, &c->err))
		return -1;
	free(all);
	if ((int64_t)n < max)
		return 0;
	str_fmt_cut(a, sizeof a, "%zu", n);
	str_fmt_cut(b, sizeof b, "%" PRId64, max);
	return policy_refuse(&c->err, ERR_INVALID, policy, rule,
			     "Too many JSON stores in the organization: current {0}, limit {1}", a, b);
}

int api_policy_json_store(struct api_call *c, const char *org_name, json_t *body)
{
	const char *name = json_string_value(json_object_get(body, "name"));
	const char *visibility = json_string_value(json_object_get(body, "visibility"));
	char policy[POLICY_NAME_MAX + 1];
	struct inventory inv;
	json_t *rules = NULL, *attrs;
	struct org o;
	struct err none;
	bool exists;
	int rc;

	if (!name || store_org_find(c->db, org_name, &o, &none))
		return 0;
	if (effective(c, o.id, NULL, &rules, policy))
		return -1;
	if (!rules)
		return 0;
	rc = store_inventory_find(c->db, o.id, name, &inv, &none);
	exists = rc == 0;
	rc =
	    exists ? 0 : json_store_count(c, &o, policy, json_object_get(json_object_get(rules, "jsonStore"), "store"));
	json_decref(rules);
	if (rc)
		return rc;
	attrs = json_pack("{s:s, s:s, s:s}", "name", name, "orgId", o.id, "ownerId", c->who.user.id);
	if (attrs && visibility)
		json_object_set_new(attrs, "visibility", json_string(visibility));
	return entity(c, o.id, NULL, "jsonStore", exists, attrs, NULL);
}

int api_policy_json_store_item(struct api_call *c, const struct jsonstore *s, const char *path, json_t *data)
{
	json_t *attrs =
	    json_pack("{s:s, s:O, s:s, s:s, s:s, s:s}", "path", path, "data", data ? data : json_null(), "jsonStoreId",
		      s->inv.id, "jsonStoreName", s->inv.name, "orgId", s->org.id, "orgName", s->org.name);
	char *old = NULL;
	struct err none;
	bool exists = store_inventory_item_get(c->db, s->inv.rid, path, &old, &none) == 0;

	free(old);
	return entity(c, s->org.id, NULL, "jsonStoreItem", exists, attrs, NULL);
}

int api_policy_json_store_query(struct api_call *c, const struct jsonstore *s, const char *name, const char *text)
{
	json_t *attrs = json_pack("{s:s, s:s?, s:s, s:s, s:s, s:s}", "name", name, "text", text, "storeId", s->inv.id,
				  "storeName", s->inv.name, "orgId", s->org.id, "orgName", s->org.name);
	struct inventory_query q = {0};
	struct err none;
	bool exists = store_inventory_query_get(c->db, s->inv.id, name, &q, &none) == 0;

	inventory_query_cleanup(&q);
	return entity(c, s->org.id, NULL, "jsonStoreQuery", exists, attrs, NULL);
}

int api_policy_raw_payload(struct api_call *c, const char *org_id, const char *project_id, uint64_t bytes)
{
	char name[POLICY_NAME_MAX + 1], a[24], b[24];
	json_t *rules = NULL;
	const json_t *rule;
	int64_t max;
	int rc = 0;

	if (effective(c, org_id, project_id, &rules, name))
		return -1;
	rule = json_object_get(rules, "rawPayload");
	max = policy_number(json_object_get(rule, "maxSizeInBytes"));
	if (max >= 0 && bytes > (uint64_t)max) {
		str_fmt_cut(a, sizeof a, "%" PRIu64, bytes);
		str_fmt_cut(b, sizeof b, "%" PRId64, max);
		rc = policy_refuse(&c->err, ERR_TOO_LARGE, name, rule,
				   "Raw payload size too big: current {0} bytes, limit {1} bytes", a, b);
	}
	json_decref(rules);
	return rc;
}
