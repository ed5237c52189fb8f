#ifndef ACCORD_STORE_LDAP_GROUPS_H
#define ACCORD_STORE_LDAP_GROUPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "store/store.h"
#include "store/teams.h"

/* LDAP groups (schema 030): the groups a user had at their last directory login, and the
 * groups linked to teams, whose members the rights checks count as the team's (the
 * team_members view).  Group DNs compare case-insensitively (ASCII): they are stored
 * lower-cased for comparison. */

/* Replaces the user's groups with groups[0..n) and records now_ms as their read time, in one
 * transaction. */
int store_user_ldap_groups_set(struct store_conn *c, const char *user_id, char *const *groups, size_t n,
			       int64_t now_ms, struct err *e) WUR;
/* When the user's groups were read last: ERR_NOT_FOUND when never. */
int store_user_ldap_synced_at(struct store_conn *c, const char *user_id, int64_t *out, struct err *e) WUR;
/* The user's groups: *out a new JSON array of DNs (lower-cased), NULL when never read. */
int store_user_ldap_groups_json(struct store_conn *c, const char *user_id, json_t **out, struct err *e) WUR;

/* Links group_dn to the team with role (an existing link's role is replaced). */
int store_team_ldap_group_put(struct store_conn *c, const char *team_id, const char *group_dn, enum team_role role,
			      struct err *e) WUR;
int store_team_ldap_groups_clear(struct store_conn *c, const char *team_id, struct err *e) WUR;
/* The team's groups: *out a new JSON array of {"group", "role"}, by group. */
int store_team_ldap_groups_json(struct store_conn *c, const char *team_id, json_t **out, struct err *e) WUR;

#endif
