/* The policy rules the API enforces (api/policy_checks.h). */
#include "api/policy_checks.h"

#include <inttypes.h>
#include <stdlib.h>

#include "auth/entity_policy.h"
#include "base/str.h"
#include "policy/policy.h"
#include "store/orgs.h"
#include "store/policies.h"
#include "store/projects.h"
#include "store/repositories.h"

/* The effective rules for the place and the caller: *rules new (NULL: none). */
static int effective(struct api_call *c, const char *org_id, const char *project_id, json_t **rules,
		     char name[POLICY_NAME_MAX + 1])
{
	struct policy_place at = {org_id, project_id, c->who.user.id[0] ? c->who.user.id : NULL};

	return store_policy_effective(c->db, &at, rules, name, &c->err);
}

int api_policy_entity(struct api_call *c, const char *org_id, const char *project_id, const char *entity,
		      const char *action, json_t *attrs)
{
	return entity_policy_check(c->db, &c->who, org_id, project_id, entity, action, attrs, &c->err);
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
