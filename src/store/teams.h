#ifndef ACCORD_STORE_TEAMS_H
#define ACCORD_STORE_TEAMS_H

#include <stddef.h>
#include <stdint.h>

#include "base/uuid.h"
#include "store/access.h"
#include "store/store.h"

/* Teams of an organization and their members (roles OWNER, MAINTAINER, MEMBER; see
 * store/access.h for the role enum and membership queries). */

struct team {
	char id[UUID_STR_LEN];
	char org_id[UUID_STR_LEN];
	char name[129];
	char description[1025];
};

/* Lookups fail with ERR_NOT_FOUND "Team not found: <x>". */
int store_team_get(struct store_conn *c, const char *id, struct team *t, struct err *e) WUR;
int store_team_find(struct store_conn *c, const char *org_id, const char *name, struct team *t, struct err *e) WUR;
/* The org's teams sorted by name: new array (caller frees) of *n entries. */
int store_team_list(struct store_conn *c, const char *org_id, struct team **out, size_t *n, struct err *e) WUR;

/* Insert (t->id filled by the caller) and update of name and description.  A name taken
 * in the org is ERR_CONFLICT "Team already exists: x". */
int store_team_insert(struct store_conn *c, const struct team *t, struct err *e) WUR;
int store_team_update(struct store_conn *c, const struct team *t, struct err *e) WUR;
/* Deletes the team; its memberships and access rules go with it.  ERR_NOT_FOUND if none. */
int store_team_delete(struct store_conn *c, const char *id, struct err *e) WUR;

struct team_member {
	char user_id[UUID_STR_LEN];
	char username[129];
	char domain[129];
	char display_name[257];
	char type[16];
	enum team_role role;
};

/* The team's members sorted by username: new array (caller frees) of *n entries. */
int store_team_members(struct store_conn *c, const char *team_id, struct team_member **out, size_t *n,
		       struct err *e) WUR;
/* Adds the user to the team or changes their role. */
int store_team_member_set(struct store_conn *c, const char *team_id, const char *user_id, enum team_role role,
			  struct err *e) WUR;
/* Removes the user from the team (no error when they were not in it). */
int store_team_member_remove(struct store_conn *c, const char *team_id, const char *user_id, struct err *e) WUR;
/* Removes every member (use inside a transaction to replace them). */
int store_team_members_clear(struct store_conn *c, const char *team_id, struct err *e) WUR;

#endif
