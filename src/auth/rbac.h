#ifndef ACCORD_AUTH_RBAC_H
#define ACCORD_AUTH_RBAC_H

#include <stdbool.h>

#include "auth/principal.h"
#include "base/err.h"
#include "store/access.h"
#include "store/orgs.h"
#include "store/roles.h"
#include "store/store.h"

/* Every access decision of the API is made here (docs/security.md states the rules).
 * Default deny: each function returns 0 only when a rule grants access, otherwise
 * ERR_FORBIDDEN with a message naming the user, the level and the resource.
 *
 * Resources (projects, secrets, inventories) at level L ∈ READER < WRITER < OWNER:
 *   1. admins (concordAdmin) pass;
 *   2. global readers pass READER, global writers pass READER and WRITER;
 *   3. the resource's owner passes;
 *   4. the owner of the resource's organization passes;
 *   5. a team of the user with a rule on the resource at level >= L passes;
 *   6. a PUBLIC resource gives READER to every member of its organization;
 *   7. nobody else — in particular users outside the organization get nothing.
 * Organization owner = the org's owner user, or a user with role OWNER in any of its
 * teams.  Organization member = a user in any of its teams (or its owner).
 *
 * Team membership (api/teams.c): changes need MAINTAINER in the team (rbac_team); a change
 * that grants the OWNER role, or changes or removes a member who is OWNER, needs OWNER in
 * the team — a team OWNER is an organization owner, so a maintainer must not be able to
 * make anyone (themselves included) one. */

struct rbac_resource {
	const char *type; /* "PROJECT", "SECRET", "INVENTORY" (resource_access.resource_type) */
	const char *kind; /* for messages: "project", "secret", "inventory" */
	const char *id;
	const char *name;
	const char *org_id;
	const char *owner_id; /* "" or NULL when none */
	bool is_public;
};

int rbac_check(struct store_conn *c, const struct principal *p, const struct rbac_resource *r, enum access_level level,
	       struct err *e) WUR;

/* The strongest level p holds on r by rbac_check's rules (ACCESS_NONE: none), for answers
 * that tell the console what the caller may do.  Non-zero only for a failure other than a
 * refusal (a store error). */
int rbac_level(struct store_conn *c, const struct principal *p, const struct rbac_resource *r, enum access_level *out,
	       struct err *e) WUR;

enum rbac_org_need {
	RBAC_ORG_VIEW,	 /* see the org: PUBLIC orgs for everyone, PRIVATE ones for members */
	RBAC_ORG_MEMBER, /* be a member (or owner, global reader/writer, admin) */
	RBAC_ORG_OWNER,	 /* be its owner (or admin) */
};
/* 0 or ERR_FORBIDDEN naming what is missing; but a PRIVATE org the caller cannot see (an
 * outsider without a global role) is ERR_NOT_FOUND "Organization not found: <name>", the
 * answer for a missing org, whatever the need. */
int rbac_org(struct store_conn *c, const struct principal *p, const struct org *o, enum rbac_org_need need,
	     struct err *e) WUR;

/* Only the narrowing of a scoped API key (principal.h) for org o (id "" for an org about to
 * be created, which no narrowed scope reaches): 0 or ERR_FORBIDDEN naming the scope.  For
 * what only an admin may do to an org (create, delete), which rbac_org does not check. */
int rbac_org_reach(const struct principal *p, const char *org_id, const char *org_name, struct err *e) WUR;

/* rbac_org without the narrowing of a scoped API key (principal.h): for a question about
 * the user rather than about what the request reaches, asked after the request's own
 * resource was checked (a project that takes raw payloads from ORG_MEMBERS). */
int rbac_org_user(struct store_conn *c, const struct principal *p, const struct org *o, enum rbac_org_need need,
		  struct err *e) WUR;

/* Team management: role >= need in that team, or org owner, or admin. */
int rbac_team(struct store_conn *c, const struct principal *p, const struct team *t, enum team_role need,
	      struct err *e) WUR;

int rbac_admin(const struct principal *p, struct err *e) WUR;

/* Loads what p's user holds through roles (store_user_grants: roles given directly and
 * through LDAP groups) into p->perms and p->user.roles; called once per authenticated
 * request.  Nothing to load for an admin, who passes every check. */
int rbac_grants_load(struct store_conn *c, struct principal *p, struct err *e) WUR;
/* Whether p holds the permission: admins hold every one. */
bool rbac_permitted(const struct principal *p, enum permission perm);
/* 0, or ERR_FORBIDDEN "Only roles with '<perm>' permission are allowed to <what>" (Concord's
 * words). */
int rbac_permission(const struct principal *p, enum permission perm, const char *what, struct err *e) WUR;

/* Whether user u may be named the owner of a resource of org org_id: a member of one of
 * its teams, its owner, or an admin.  An outsider owner would hold a resource of an org it
 * cannot see (issue 15 part 11).  0, or ERR_INVALID "The new owner (<u>) doesn't belong
 * to the organization: <org>". */
int rbac_owner_candidate(struct store_conn *c, const char *org_id, const struct user *u, struct err *e) WUR;

#endif
