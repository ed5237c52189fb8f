#ifndef ACCORD_STORE_ACCESS_H
#define ACCORD_STORE_ACCESS_H

#include <stdbool.h>
#include <stddef.h>

#include "base/uuid.h"
#include "store/store.h"

/* Membership facts and team access rules, shared by every resource kind.
 * Levels and team roles are stored by name; these enums are ordered weakest first. */

enum access_level { ACCESS_NONE = 0, ACCESS_READER, ACCESS_WRITER, ACCESS_OWNER };
enum team_role { TEAM_ROLE_NONE = 0, TEAM_ROLE_MEMBER, TEAM_ROLE_MAINTAINER, TEAM_ROLE_OWNER };

/* "READER" … and back; parse is case-sensitive like Concord's enums (ERR_INVALID). */
const char *access_level_name(enum access_level l);
int access_level_parse(const char *s, enum access_level *out, struct err *e) WUR;
const char *team_role_name(enum team_role r);
int team_role_parse(const char *s, enum team_role *out, struct err *e) WUR;

/* The user's strongest team role in any team of the org (TEAM_ROLE_NONE: not a member). */
int store_org_member_role(struct store_conn *c, const char *org_id, const char *user_id, enum team_role *out,
			  struct err *e) WUR;
/* The user's role in one team (TEAM_ROLE_NONE: not in it). */
int store_team_member_role(struct store_conn *c, const char *team_id, const char *user_id, enum team_role *out,
			   struct err *e) WUR;
/* The strongest level the user holds on a resource through the teams they belong to. */
int store_access_level(struct store_conn *c, const char *resource_type, const char *resource_id, const char *user_id,
		       enum access_level *out, struct err *e) WUR;

struct access_rule {
	char team_id[UUID_STR_LEN];
	char team_name[129];
	char org_name[129];
	enum access_level level;
};

/* Rules of a resource sorted by team name: new array (caller frees). */
int store_access_list(struct store_conn *c, const char *resource_type, const char *resource_id,
		      struct access_rule **out, size_t *n, struct err *e) WUR;
/* Inserts or replaces one team's rule. */
int store_access_upsert(struct store_conn *c, const char *resource_type, const char *resource_id, const char *team_id,
			enum access_level level, struct err *e) WUR;
/* Removes every rule of the resource (use inside a transaction to replace them). */
int store_access_clear(struct store_conn *c, const char *resource_type, const char *resource_id, struct err *e) WUR;

#endif
