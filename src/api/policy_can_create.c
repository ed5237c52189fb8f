/* GET /api/v1/{entityType}/canCreate?orgName= (Concord's PolicyCheckResource): whether the
 * policy's entity rules let the caller create a PROJECT or a SECRET in the organization
 * (docs/api.md "Policies"), for a console to offer the action or not.  The answer is JSON
 * true or false; Concord checks no other type and answers true for them.  The caller must
 * be a member of the organization. */
#include <string.h>

#include "api/doc_schemas.h"
#include "api/routes.h"
#include "auth/entity_policy.h"
#include "auth/rbac.h"
#include "http/request.h"
#include "store/orgs.h"

/* Concord's EntityType names, as its path parameter takes them. */
static const char *const TYPES[] = {"ORGANIZATION", "PROJECT", "REPOSITORY", "SECRET", "JSON_STORE",
				    "JSON_STORE_ITEM", "JSON_STORE_QUERY", "TRIGGER", NULL};

static int can_create(struct api_call *c)
{
	const char *type = api_param(c, "entityType"), *org_name = http_query(c->req, "orgName");
	bool allowed = true, known = false;
	json_t *attrs;
	struct org o;
	int rc;

	for (const char *const *t = TYPES; *t; t++)
		known |= strcmp(*t, type) == 0;
	if (!known)
		return api_fail(c, ERR_NOT_FOUND, "Unknown entity type: %.64s", type);
	if (!org_name || !*org_name)
		return api_fail(c, ERR_INVALID, "'orgName' is required");
	if ((rc = store_org_find(c->db, org_name, &o, &c->err)) ||
	    (rc = rbac_org(c->db, &c->who, &o, RBAC_ORG_MEMBER, &c->err)))
		return rc;
	if (strcmp(type, "PROJECT") == 0 || strcmp(type, "SECRET") == 0) {
		attrs = type[0] == 'P' ? json_pack("{s:s, s:s}", "orgId", o.id, "orgName", o.name)
				       : json_pack("{s:s}", "orgId", o.id);
		rc = attrs ? entity_policy_allows(c->db, &c->who, o.id, type[0] == 'P' ? "project" : "secret", attrs,
						  &allowed, &c->err)
			   : api_fail(c, ERR_INTERNAL, "out of memory");
		json_decref(attrs);
		if (rc)
			return rc;
	}
	return api_reply(c, json_boolean(allowed));
}

static const struct api_doc doc_can_create = {
    .summary = "Whether the policy lets the caller create a PROJECT or a SECRET in an organization",
    .params =
	(const struct api_param_doc[]){
	    {"entityType", "string", "ORGANIZATION, PROJECT, REPOSITORY, SECRET, JSON_STORE, … (Concord's EntityType)"},
	    {"orgName", "string", "the organization"},
	    {0}},
    .response = "{'type':'boolean'}",
    .errors = "400 403 404",
};

const struct api_route api_policy_can_create_routes[] = {
    {"GET", "/api/v1/{entityType}/canCreate", can_create, 0, &doc_can_create},
    {0},
};
