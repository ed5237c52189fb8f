#ifndef ACCORD_API_POLICY_CHECKS_H
#define ACCORD_API_POLICY_CHECKS_H

#include <stdint.h>

#include <jansson.h>

#include "api/api.h"

/* The policy rules the API enforces before it changes something (docs/security.md
 * "Policies"), with the effective policy of the org, project and the caller.  A refusal is
 * the rule's message naming the policy: ERR_FORBIDDEN for an entity rule, ERR_TOO_LARGE for
 * a size; nothing is stored. */

/* rules.entity: action ("create", "update") on an entity kind ("org", "project", …) with
 * its attributes attrs (BORROWED); the owner is the caller (auth/entity_policy.h, which also
 * checks secrets and, through inventory/jsonstore_policy.h, JSON stores).  org_id,
 * project_id: the place (NULL: none). */
int api_policy_entity(struct api_call *c, const char *org_id, const char *project_id, const char *entity,
		      const char *action, json_t *attrs) WUR;

/* The same for the entities the API writes, their attributes as Concord's entity rules name
 * them (body: the request's object, for meta and cfg; NULL: none). */
struct org;
struct project;
int api_policy_org(struct api_call *c, const struct org *o, json_t *body, bool exists) WUR;
int api_policy_project(struct api_call *c, const struct project *p, const char *org_name, json_t *body,
		       bool exists) WUR;
struct repository;
int api_policy_repository(struct api_call *c, const struct repository *r, bool exists) WUR;

/* rules.rawPayload: the bytes of the files a start uploads. */
int api_policy_raw_payload(struct api_call *c, const char *org_id, const char *project_id, uint64_t bytes) WUR;

#endif
