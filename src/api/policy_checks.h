#ifndef ACCORD_API_POLICY_CHECKS_H
#define ACCORD_API_POLICY_CHECKS_H

#include <stdint.h>

#include <jansson.h>

#include "api/api.h"

/* The policy rules the API enforces before it changes something (docs/security.md
 * "Policies"), with the effective policy of the org, project and the caller.  A refusal is
 * the rule's message naming the policy: ERR_FORBIDDEN for an entity rule, ERR_TOO_LARGE for
 * a size; nothing is stored. */

/* rules.entity: action ("create", "update") on an entity kind ("org", "project", "secret",
 * …) with its attributes attrs (BORROWED); the owner is the caller.  org_id, project_id:
 * the place (NULL: none). */
int api_policy_entity(struct api_call *c, const char *org_id, const char *project_id, const char *entity,
		      const char *action, json_t *attrs) WUR;

/* The same for the entities the API writes, their attributes as Concord's entity rules name
 * them (body: the request's object, for meta and cfg; NULL: none). */
struct org;
struct project;
struct secret;
int api_policy_org(struct api_call *c, const struct org *o, json_t *body, bool exists) WUR;
int api_policy_project(struct api_call *c, const struct project *p, const char *org_name, json_t *body,
		       bool exists) WUR;
int api_policy_secret(struct api_call *c, const struct secret *s) WUR;
struct repository;
int api_policy_repository(struct api_call *c, const struct repository *r, bool exists) WUR;

/* rules.jsonStore.store.maxNumberPerOrg and the entity rules of kind jsonStore, for the
 * create or update of the JSON store the body of POST /api/v1/org/{org_name}/jsonstore
 * names (an unknown org passes: the handler answers it). */
int api_policy_json_store(struct api_call *c, const char *org_name, json_t *body) WUR;

/* Entity rules of kinds jsonStoreItem (an item's put: path, data) and jsonStoreQuery (a
 * query's put: name, text) in the store s (struct jsonstore, inventory/jsonstore.h); create
 * or update by whether the item or query exists. */
struct jsonstore;
int api_policy_json_store_item(struct api_call *c, const struct jsonstore *s, const char *path, json_t *data) WUR;
int api_policy_json_store_query(struct api_call *c, const struct jsonstore *s, const char *name, const char *text) WUR;

/* rules.rawPayload: the bytes of the files a start uploads. */
int api_policy_raw_payload(struct api_call *c, const char *org_id, const char *project_id, uint64_t bytes) WUR;

#endif
