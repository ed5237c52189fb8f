/* A project's key-value store seen from the API (Concord's ProjectResource):
 *
 *   GET /api/v1/org/{org}/project/{project}/kv/capacity   {size, maxSize}
 *
 * size: the project's entries (the `kv` task's, docs/flows.md); maxSize: the policy's
 * kv.maxEntries for the project and the caller (docs/security.md "Policies"), absent when
 * none applies, as Concord leaves it out.  Reading needs READER on the project. */
#include "api/doc_schemas.h"
#include "api/projects.h"
#include "api/routes.h"
#include "policy/policy.h"
#include "store/kv.h"
#include "store/policies.h"

static int capacity(struct api_call *c)
{
	struct project p;
	struct policy_place at;
	char name[POLICY_NAME_MAX + 1];
	json_t *rules = NULL, *v;
	int64_t size, max;
	int rc;

	if ((rc = projects_path(c, &p, ACCESS_READER)) || (rc = store_kv_count(c->db, p.id, &size, &c->err)))
		return rc;
	at = (struct policy_place){p.org_id, p.id, c->who.user.id[0] ? c->who.user.id : NULL};
	if ((rc = store_policy_effective(c->db, &at, &rules, name, &c->err)))
		return rc;
	max = policy_number(json_object_get(json_object_get(rules, "kv"), "maxEntries"));
	json_decref(rules);
	v = json_pack("{s:I}", "size", (json_int_t)size);
	if (v && max >= 0)
		json_object_set_new(v, "maxSize", json_integer(max));
	return api_reply(c, v);
}

static const struct api_doc doc_capacity = {
    .summary = "The number of a project's key-value entries and the policy's maximum (kv.maxEntries)",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_PROJECT, {0}},
    .response = "{'type':'object','properties':{'size':{'type':'integer'},'maxSize':{'type':'integer'}}}",
    .errors = "403 404",
};

const struct api_route api_project_kv_routes[] = {
    {"GET", "/api/v1/org/{org}/project/{project}/kv/capacity", capacity, 0, &doc_capacity},
    {0},
};
