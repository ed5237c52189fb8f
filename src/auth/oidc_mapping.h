#ifndef ACCORD_AUTH_OIDC_MAPPING_H
#define ACCORD_AUTH_OIDC_MAPPING_H

#include <stdbool.h>

#include <jansson.h>

#include "base/err.h"
#include "store/store.h"
#include "store/users.h"

/* The OIDC realm's team and role mappings (docs/operations.md "OpenID Connect", Concord's
 * oidc.teamMapping and oidc.roleMapping): which teams and global roles a login's claims
 * give.  Each mapping entry has sources "CLAIM.PATTERN" (split at the first dot); an entry
 * applies when one of its sources' PATTERN, a POSIX extended regular expression, matches
 * the whole value of CLAIM ignoring case (for an array claim: one of its strings; for an
 * absent claim: ""), as Concord's Matcher does.
 *
 *   --oidc-team-mapping  {"<team id>": {"source": ["groups.dev.*"], "role": "MAINTAINER"}, …}
 *   --oidc-role-mapping  {"<role name>": {"source": ["groups.admins"]}, …}
 *                        or ROLE=PATTERN[,ROLE=PATTERN…], PATTERN on the groups claim
 *
 * A team's role is MEMBER when not given.  Role names are the built-in ones or roles made
 * with /api/v1/role (one that does not exist at a login is skipped with a warning, as
 * Concord warns); a team id that names no team is skipped the same way. */

/* Reads both settings (team_mapping or role_mapping NULL or "": none) once at start-up:
 * ERR_INVALID naming the setting and the entry (not JSON of that shape, a team id that is
 * not a UUID, an unknown team role, a source without a dot, a pattern that does not
 * compile).  groups_claim is the claim the short role form matches.  Not thread-safe. */
int oidc_mapping_init(const char *team_mapping, const char *role_mapping, const char *groups_claim,
		      struct err *e) WUR;
void oidc_mapping_cleanup(void);

/* u->roles with every built-in role the role mapping names set when its sources match
 * claims, cleared otherwise (the others left as they are). */
unsigned oidc_mapping_builtin_roles(unsigned roles, json_t *claims);

/* Brings the user's memberships of the mapped teams and the user's mapped non-built-in
 * roles in line with claims: a matching entry adds the membership (or changes its role) or
 * the role, one that does not match removes it; teams and roles no entry names are left
 * alone.  One transaction.  The store's errors.  Thread-safe. */
int oidc_mapping_apply(struct store_conn *c, const struct user *u, json_t *claims, struct err *e) WUR;

#endif
