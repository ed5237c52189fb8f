#ifndef ACCORD_STORE_ROLES_H
#define ACCORD_STORE_ROLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/uuid.h"
#include "store/store.h"

/* Roles and their permissions (schema 038, docs/security.md "Roles and permissions").
 * Concord's built-in roles (concordAdmin, concordSystemReader, concordSystemWriter) are rows
 * too, with builtin set; a user's built-in roles are the bits of users.roles
 * (store/users.h), the others the rows of user_roles.  Either kind may be linked to LDAP
 * groups, whose members then hold it. */

/* Concord's permissions (its Permission enum), as bits.  Names compare exactly. */
enum permission {
	PERM_GET_PROCESS_QUEUE_ALL_ORGS = 1 << 0, /* getProcessQueueAllOrgs */
	PERM_CREATE_ORG = 1 << 1,		  /* createOrg */
	PERM_UPDATE_ORG = 1 << 2,		  /* updateOrg */
	PERM_API_KEY_SPECIFY_VALUE = 1 << 3,	  /* apiKeySpecifyValue */
	PERM_AGENT_WEBSOCKET = 1 << 4,		  /* agentWebsocket: no counterpart in Accord */
};

/* The permission named name: true and *bit set, or false for an unknown name. */
bool permission_parse(const char *name, unsigned *bit);
const char *permission_name(unsigned bit); /* NULL for a bit that is no permission */
/* A new JSON array of the names of the bits of perms (in the enum's order). */
json_t *permissions_json(unsigned perms);
/* "createOrg, updateOrg, …": every known name, for messages. */
const char *permissions_known(void);

#define ROLE_NAME_MAX 128

struct role {
	char id[UUID_STR_LEN];
	char name[ROLE_NAME_MAX + 1];
	bool builtin;
	unsigned perms; /* enum permission bits */
	int64_t created_at;
};

/* The role named name; ERR_NOT_FOUND "Role not found: <name>". */
int store_role_find(struct store_conn *c, const char *name, struct role *r, struct err *e) WUR;
/* The role of id; ERR_NOT_FOUND "Role not found: <id>". */
int store_role_get(struct store_conn *c, const char *id, struct role *r, struct err *e) WUR;
/* Every role, by name: a new array (caller frees) of *n. */
int store_role_list(struct store_conn *c, struct role **out, size_t *n, struct err *e) WUR;
/* A new role (r->id filled by the caller), its name and permissions, in one transaction;
 * a taken name is ERR_CONFLICT. */
int store_role_insert(struct store_conn *c, const struct role *r, struct err *e) WUR;
/* Renames r->id to r->name and replaces its permissions, in one transaction. */
int store_role_update(struct store_conn *c, const struct role *r, struct err *e) WUR;
/* Deletes the role, its permissions, links to users and to groups. */
int store_role_delete(struct store_conn *c, const char *id, struct err *e) WUR;

/* Links group_dn to the role (no-op when linked); clear removes every link of the role. */
int store_role_ldap_group_put(struct store_conn *c, const char *role_id, const char *group_dn, struct err *e) WUR;
int store_role_ldap_groups_clear(struct store_conn *c, const char *role_id, struct err *e) WUR;
/* The role's groups: *out a new JSON array of DNs, by DN. */
int store_role_ldap_groups_json(struct store_conn *c, const char *role_id, json_t **out, struct err *e) WUR;

/* The roles other than the built-in ones given to the user directly: a new array of *n. */
int store_user_roles_list(struct store_conn *c, const char *user_id, struct role **out, size_t *n,
			  struct err *e) WUR;
/* Replaces the user's non-built-in roles with role_ids[0..n) (not a transaction of its own:
 * the caller's, with the update of users.roles). */
int store_user_roles_set(struct store_conn *c, const char *user_id, char (*role_ids)[UUID_STR_LEN], size_t n,
			 struct err *e) WUR;

/* What the user holds through roles: the roles given directly (users.roles bits builtin,
 * user_roles) and through the user's LDAP groups.  *roles_out receives builtin with the
 * built-in roles held through groups added (store/users.h enum user_role bits), *perms_out
 * the union of the permissions of every such role, and when names is not NULL it becomes a
 * new JSON array of {"id", "name", "permissions"} of those roles, by name. */
int store_user_grants(struct store_conn *c, const char *user_id, unsigned builtin, unsigned *roles_out,
		      unsigned *perms_out, json_t **names, struct err *e) WUR;

#endif
