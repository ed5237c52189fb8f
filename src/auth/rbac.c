#include "auth/rbac.h"

#include <stdio.h>
#include <string.h>

#include "base/str.h"
#include "store/projects.h"

static int org_owner(struct store_conn *c, const struct principal *p, const char *org_id, bool *yes, struct err *e)
{
	struct org o;
	enum team_role role;
	int rc;

	if ((rc = store_org_get(c, org_id, &o, e)))
		return rc;
	if (strcmp(o.owner_id, p->user.id) == 0) {
		*yes = true;
		return 0;
	}
	if ((rc = store_org_member_role(c, org_id, p->user.id, &role, e)))
		return rc;
	*yes = role == TEAM_ROLE_OWNER;
	return 0;
}

/* The cron user holds the rights given to it for the project it acts for (principal.h):
 * that project itself, and the other resources of its org; nothing from another session,
 * nor from outside one. */
static bool system_in_scope(struct store_conn *c, const struct principal *p, const char *type, const char *id,
			    const char *org_id)
{
	struct project pr;
	struct err ignored;

	if (!user_id_is_system(p->user.id))
		return true;
	if (!principal_acts_in(p, p->session_project))
		return false;
	if (type && strcmp(type, "PROJECT") == 0)
		return strcmp(id, p->session_project) == 0;
	return store_project_get(c, p->session_project, &pr, &ignored) == 0 && strcmp(pr.org_id, org_id) == 0;
}

/* A scoped API key reaches only what its scopes are narrowed to (scope.h), admins too. */
static bool key_reaches(const struct principal *p, enum scope_at at, const char *org_id, const char *project_id,
			const char *kind, const char *name, struct err *e)
{
	char what[200];

	if (!p->scopes.n || !p->need.set)
		return true;
	str_fmt_cut(what, sizeof what, "%s: %s", kind, name);
	return scope_reaches(&p->scopes, &p->need, at, org_id, project_id, what, e);
}

int rbac_org_reach(const struct principal *p, const char *org_id, const char *org_name, struct err *e)
{
	return key_reaches(p, SCOPE_AT_ORG, org_id, NULL, "organization", org_name, e) ? 0 : -ERR_FORBIDDEN;
}

int rbac_check(struct store_conn *c, const struct principal *p, const struct rbac_resource *r, enum access_level level,
	       struct err *e)
{
	enum access_level held;
	enum team_role role;
	bool owner;
	bool is_project = r->type && strcmp(r->type, "PROJECT") == 0;
	int rc;

	if (!key_reaches(p, is_project ? SCOPE_AT_PROJECT : SCOPE_AT_ORG, r->org_id, is_project ? r->id : NULL, r->kind,
			 r->name, e))
		return -ERR_FORBIDDEN;
	if (principal_is_admin(p))
		return 0;
	if (!system_in_scope(c, p, r->type, r->id, r->org_id))
		return err_set(e, ERR_FORBIDDEN,
			       "The current user (%s) acts for the project of its own process only: no access to the "
			       "%s: %s",
			       p->user.username, r->kind, r->name);
	if (level == ACCESS_READER && (p->user.roles & (ROLE_SYSTEM_READER | ROLE_SYSTEM_WRITER)))
		return 0;
	if (level == ACCESS_WRITER && (p->user.roles & ROLE_SYSTEM_WRITER))
		return 0;
	if (r->owner_id && strcmp(r->owner_id, p->user.id) == 0)
		return 0;
	if ((rc = org_owner(c, p, r->org_id, &owner, e)))
		return rc;
	if (owner)
		return 0;
	if ((rc = store_access_level(c, r->type, r->id, p->user.id, &held, e)))
		return rc;
	if (held >= level)
		return 0;
	if (r->is_public && level == ACCESS_READER) {
		if ((rc = store_org_member_role(c, r->org_id, p->user.id, &role, e)))
			return rc;
		if (role != TEAM_ROLE_NONE)
			return 0;
	}
	return err_set(e, ERR_FORBIDDEN,
		       "The current user (%s) doesn't have the necessary access level (%s) to the %s: %s",
		       p->user.username, access_level_name(level), r->kind, r->name);
}

int rbac_level(struct store_conn *c, const struct principal *p, const struct rbac_resource *r, enum access_level *out,
	       struct err *e)
{
	for (int l = ACCESS_OWNER; l >= ACCESS_READER; l--) {
		struct err refused = {0};
		int rc = rbac_check(c, p, r, (enum access_level)l, &refused);

		if (rc == 0) {
			*out = (enum access_level)l;
			return 0;
		}
		if (refused.code != ERR_FORBIDDEN) {
			*e = refused;
			return rc;
		}
	}
	*out = ACCESS_NONE;
	return 0;
}

int rbac_org(struct store_conn *c, const struct principal *p, const struct org *o, enum rbac_org_need need,
	     struct err *e)
{
	if (!key_reaches(p, need == RBAC_ORG_VIEW ? SCOPE_AT_ORG_VIEW : SCOPE_AT_ORG, o->id, NULL, "organization",
			 o->name, e))
		return -ERR_FORBIDDEN;
	return rbac_org_user(c, p, o, need, e);
}

int rbac_org_user(struct store_conn *c, const struct principal *p, const struct org *o, enum rbac_org_need need,
		  struct err *e)
{
	enum team_role role;
	bool global = (p->user.roles & (ROLE_SYSTEM_READER | ROLE_SYSTEM_WRITER)) != 0;
	int rc;

	if (principal_is_admin(p))
		return 0;
	if (!system_in_scope(c, p, NULL, NULL, o->id)) {
		role = TEAM_ROLE_NONE; /* an outsider here, whatever teams it is in */
	} else {
		if (strcmp(o->owner_id, p->user.id) == 0)
			return 0;
		if ((rc = store_org_member_role(c, o->id, p->user.id, &role, e)))
			return rc;
	}
	/* A PRIVATE org is invisible to outsiders: whatever they ask of it is answered as for
	 * an org that does not exist, so they cannot tell its name, or the names of its
	 * resources, from names that are not there (docs/security.md). */
	if (strcmp(o->visibility, "PRIVATE") == 0 && role == TEAM_ROLE_NONE && !global)
		return err_set(e, ERR_NOT_FOUND, "Organization not found: %.128s", o->name);
	switch (need) {
	case RBAC_ORG_VIEW:
		if (strcmp(o->visibility, "PUBLIC") == 0 || role != TEAM_ROLE_NONE || global)
			return 0;
		break;
	case RBAC_ORG_MEMBER:
		if (role != TEAM_ROLE_NONE || global)
			return 0;
		return err_set(e, ERR_FORBIDDEN, "The current user (%s) doesn't belong to the specified organization: %s",
			       p->user.username, o->name);
	case RBAC_ORG_OWNER:
		if (role == TEAM_ROLE_OWNER)
			return 0;
		return err_set(e, ERR_FORBIDDEN,
			       "The current user (%s) does not have the required role: OWNER (organization: %s)",
			       p->user.username, o->name);
	}
	return err_set(e, ERR_FORBIDDEN, "The current user (%s) doesn't have access to the organization: %s",
		       p->user.username, o->name);
}

int rbac_team(struct store_conn *c, const struct principal *p, const struct team *t, enum team_role need, struct err *e)
{
	enum team_role role;
	bool owner;
	int rc;

	if (!key_reaches(p, SCOPE_AT_ORG, t->org_id, NULL, "team", t->name, e))
		return -ERR_FORBIDDEN;
	if (principal_is_admin(p))
		return 0;
	if ((rc = org_owner(c, p, t->org_id, &owner, e)))
		return rc;
	if (owner)
		return 0;
	if ((rc = store_team_member_role(c, t->id, p->user.id, &role, e)))
		return rc;
	if (role >= need)
		return 0;
	return err_set(e, ERR_FORBIDDEN, "The current user (%s) does not have the required role: %s (team: %s)",
		       p->user.username, team_role_name(need), t->name);
}

int rbac_admin(const struct principal *p, struct err *e)
{
	if (principal_is_admin(p))
		return 0;
	return err_set(e, ERR_FORBIDDEN, "Only admins can do that (the current user, %s, is not an administrator)",
		       p->user.username);
}

int rbac_grants_load(struct store_conn *c, struct principal *p, struct err *e)
{
	unsigned roles, perms;
	int rc;

	p->perms = 0;
	if (principal_is_admin(p))
		return 0;
	if ((rc = store_user_grants(c, p->user.id, p->user.roles, &roles, &perms, NULL, e)))
		return rc;
	p->user.roles = roles;
	p->perms = perms;
	return 0;
}

bool rbac_permitted(const struct principal *p, enum permission perm)
{
	return principal_is_admin(p) || (p->perms & (unsigned)perm) != 0;
}

int rbac_permission(const struct principal *p, enum permission perm, const char *what, struct err *e)
{
	if (rbac_permitted(p, perm))
		return 0;
	return err_set(e, ERR_FORBIDDEN, "Only roles with '%s' permission are allowed to %s (the current user: %s)",
		       permission_name(perm), what, p->user.username);
}

int rbac_owner_candidate(struct store_conn *c, const char *org_id, const struct user *u, struct err *e)
{
	enum team_role role;
	struct org o;
	int rc;

	if (u->roles & ROLE_ADMIN)
		return 0;
	if ((rc = store_org_get(c, org_id, &o, e)))
		return rc;
	if (strcmp(o.owner_id, u->id) == 0)
		return 0;
	if ((rc = store_org_member_role(c, org_id, u->id, &role, e)))
		return rc;
	if (role != TEAM_ROLE_NONE)
		return 0;
	return err_set(e, ERR_INVALID, "The new owner (%s) doesn't belong to the organization: %s", u->username, o.name);
}
