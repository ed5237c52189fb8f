#ifndef ACCORD_AUTH_ENTITY_POLICY_H
#define ACCORD_AUTH_ENTITY_POLICY_H

#include <stdbool.h>

#include <jansson.h>

#include "auth/principal.h"
#include "base/err.h"
#include "store/secrets.h"
#include "store/store.h"

/* The entity rules of the policy engine (docs/security.md "Policies", Concord's
 * PolicyManager.checkEntity): the one check every write of an org, project, repository,
 * secret, JSON store, JSON store item or query goes through, whichever path writes it (the
 * API, the `jsonStore`, `crypto` and `secrets` tasks, the API calls of the `project` task).
 * The effective policy is that of the place (org_id, project_id; NULL: none) and of who
 * writes; the rules see {"entity": attrs, "owner": {id, username, userType, email,
 * displayName, groups (who's LDAP groups)}}.
 *
 * A deny is ERR_FORBIDDEN with the rule's message naming the policy ("<msg> (policy
 * 'name')"); nothing is written.  A warn passes and is logged: in the log of the process
 * who acts from (a process's session: a task, or an API call a task makes), else in the
 * server's log, "Potentially restricted <kind> (<action>): <msg> (policy 'name')". */
int entity_policy_check(struct store_conn *c, const struct principal *who, const char *org_id,
			const char *project_id, const char *kind, const char *action, const json_t *attrs,
			struct err *e) WUR;

/* Whether the entity rules let who create an entity of kind in org_id with attrs, without
 * logging a warning (Concord's GET /api/v1/{entityType}/canCreate): *allowed. */
int entity_policy_allows(struct store_conn *c, const struct principal *who, const char *org_id, const char *kind,
			 const json_t *attrs, bool *allowed, struct err *e) WUR;

/* The same for a secret (kind "secret": name, orgId, type, visibility, storeType), its
 * create or update; project_id: a project it is (to be) restricted to, NULL: none. */
int entity_policy_secret(struct store_conn *c, const struct principal *who, const struct secret *s,
			 const char *project_id, bool update, struct err *e) WUR;

#endif
