#include "store/roles.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "base/datetime.h"
#include "store/users.h"

static const struct {
	unsigned bit;
	const char *name;
} perm_names[] = {
    {PERM_GET_PROCESS_QUEUE_ALL_ORGS, "getProcessQueueAllOrgs"},
    {PERM_CREATE_ORG, "createOrg"},
    {PERM_UPDATE_ORG, "updateOrg"},
    {PERM_API_KEY_SPECIFY_VALUE, "apiKeySpecifyValue"},
    {PERM_AGENT_WEBSOCKET, "agentWebsocket"},
};
#define N_PERMS (sizeof perm_names / sizeof perm_names[0])

bool permission_parse(const char *name, unsigned *bit)
{
	for (size_t i = 0; i < N_PERMS; i++)
		if (strcmp(name, perm_names[i].name) == 0) {
			*bit = perm_names[i].bit;
			return true;
		}
	return false;
}

const char *permission_name(unsigned bit)
{
	for (size_t i = 0; i < N_PERMS; i++)
		if (perm_names[i].bit == bit)
			return perm_names[i].name;
	return NULL;
}

json_t *permissions_json(unsigned perms)
{
	json_t *v = json_array();

	for (size_t i = 0; i < N_PERMS; i++)
		if (perms & perm_names[i].bit)
			json_array_append_new(v, json_string(perm_names[i].name));
	return v;
}

const char *permissions_known(void)
{
	return "getProcessQueueAllOrgs, createOrg, updateOrg, apiKeySpecifyValue, agentWebsocket";
}

#define ROLE_COLS "r.id, r.name, r.builtin, r.created_at, rp.permission"
#define ROLE_FROM " FROM roles r LEFT JOIN role_permissions rp ON rp.role_id = r.id"

/* Steps st (rows of ROLE_COLS, a role's rows together) to its end: one role per id, its
 * permissions merged (a name this build does not know is skipped). */
static int collect_roles(struct store_stmt *st, struct role **out, size_t *n, struct err *e)
{
	struct role *roles = NULL;
	size_t cap = 0;
	int rc;

	*out = NULL;
	*n = 0;
	while ((rc = store_step(st, e)) == STORE_ROW) {
		const char *id = store_col_text(st, 0), *perm = store_col_text(st, 4);
		unsigned bit;

		if (!*n || strcmp(roles[*n - 1].id, id ? id : "") != 0) {
			if (*n == cap) {
				struct role *grown = realloc(roles, (cap = cap ? 2 * cap : 8) * sizeof *roles);
				if (!grown) {
					rc = err_set(e, ERR_INTERNAL, "out of memory");
					break;
				}
				roles = grown;
			}
			memset(&roles[*n], 0, sizeof roles[*n]);
			store_col_copy(st, 0, roles[*n].id, sizeof roles[*n].id);
			store_col_copy(st, 1, roles[*n].name, sizeof roles[*n].name);
			roles[*n].builtin = store_col_int64(st, 2) != 0;
			roles[*n].created_at = store_col_int64(st, 3);
			(*n)++;
		}
		if (perm && permission_parse(perm, &bit))
			roles[*n - 1].perms |= bit;
	}
	if (rc == STORE_DONE)
		rc = store_stmt_check(st, e);
	store_reset(st);
	if (rc < 0) {
		free(roles);
		*n = 0;
		return rc;
	}
	*out = roles;
	return 0;
}

/* The one role of st's rows (bound to key); ERR_NOT_FOUND naming key when none. */
static int one_role(struct store_stmt *st, const char *key, struct role *r, struct err *e)
{
	struct role *found = NULL;
	size_t n = 0;
	int rc;

	if (!st)
		return -1;
	store_bind_text(st, 1, key);
	if ((rc = collect_roles(st, &found, &n, e)))
		return rc;
	if (n == 0)
		rc = err_set(e, ERR_NOT_FOUND, "Role not found: %.128s", key);
	else
		*r = found[0];
	free(found);
	return rc;
}

int store_role_find(struct store_conn *c, const char *name, struct role *r, struct err *e)
{
	static const char SQL[] = "SELECT " ROLE_COLS ROLE_FROM " WHERE r.name = ?";

	return one_role(store_prepare(c, SQL, e), name, r, e);
}

int store_role_get(struct store_conn *c, const char *id, struct role *r, struct err *e)
{
	static const char SQL[] = "SELECT " ROLE_COLS ROLE_FROM " WHERE r.id = ?";

	return one_role(store_prepare(c, SQL, e), id, r, e);
}

int store_role_list(struct store_conn *c, struct role **out, size_t *n, struct err *e)
{
	static const char SQL[] = "SELECT " ROLE_COLS ROLE_FROM " ORDER BY r.name, r.id";
	struct store_stmt *st = store_prepare(c, SQL, e);

	*out = NULL;
	*n = 0;
	return st ? collect_roles(st, out, n, e) : -1;
}

static int perms_replace(struct store_conn *c, const struct role *r, struct err *e)
{
	static const char DEL[] = "DELETE FROM role_permissions WHERE role_id = ?";
	static const char ADD[] = "INSERT INTO role_permissions (role_id, permission) VALUES (?, ?)";
	struct store_stmt *st = store_prepare(c, DEL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_text(st, 1, r->id);
	if ((rc = store_step_done(st, e)))
		return rc;
	for (size_t i = 0; i < N_PERMS; i++) {
		if (!(r->perms & perm_names[i].bit))
			continue;
		if (!(st = store_prepare(c, ADD, e)))
			return -1;
		store_bind_text(st, 1, r->id);
		store_bind_text(st, 2, perm_names[i].name);
		if ((rc = store_step_done(st, e)))
			return rc;
	}
	return 0;
}

/* write (insert or rename) then the permissions, in one transaction. */
static int write_role(struct store_conn *c, const struct role *r, bool insert, struct err *e)
{
	static const char INS[] = "INSERT INTO roles (id, name, builtin, created_at) VALUES (?, ?, 0, ?)";
	static const char UPD[] = "UPDATE roles SET name = ?2 WHERE id = ?1";
	struct store_stmt *st;
	int rc;

	if ((rc = store_tx_begin(c, e)))
		return rc;
	if (!(st = store_prepare(c, insert ? INS : UPD, e))) {
		rc = -1;
		goto out;
	}
	store_bind_text(st, 1, r->id);
	store_bind_text(st, 2, r->name);
	if (insert)
		store_bind_int64(st, 3, dt_now_ms());
	if ((rc = store_write_one(c, st, "Role", r->name, insert ? NULL : r->id, e)) == 0 &&
	    (rc = perms_replace(c, r, e)) == 0)
		rc = store_tx_commit(c, e);
out:
	if (rc)
		store_tx_rollback(c);
	return rc;
}

int store_role_insert(struct store_conn *c, const struct role *r, struct err *e)
{
	return write_role(c, r, true, e);
}

int store_role_update(struct store_conn *c, const struct role *r, struct err *e)
{
	return write_role(c, r, false, e);
}

int store_role_delete(struct store_conn *c, const char *id, struct err *e)
{
	static const char SQL[] = "DELETE FROM roles WHERE id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	return store_write_one(c, st, "Role", NULL, id, e);
}

int store_role_ldap_group_put(struct store_conn *c, const char *role_id, const char *group_dn, struct err *e)
{
	static const char SQL[] = "INSERT INTO role_ldap_groups (role_id, group_key, group_dn) VALUES (?, ?, ?)"
				  " ON CONFLICT (role_id, group_key) DO NOTHING";
	struct store_stmt *st = store_prepare(c, SQL, e);
	char *key = strdup(group_dn);
	int rc;

	if (!st || !key) {
		free(key);
		return st ? err_set(e, ERR_INTERNAL, "out of memory") : -1;
	}
	for (char *p = key; *p; p++) /* compared as the users' groups are stored (store/ldap_groups.h) */
		*p = (char)tolower((unsigned char)*p);
	store_bind_text(st, 1, role_id);
	store_bind_text(st, 2, key);
	store_bind_text(st, 3, group_dn);
	rc = store_step_done(st, e);
	free(key);
	return rc;
}

int store_role_ldap_groups_clear(struct store_conn *c, const char *role_id, struct err *e)
{
	static const char SQL[] = "DELETE FROM role_ldap_groups WHERE role_id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, role_id);
	return store_step_done(st, e);
}

static json_t *dn_row(struct store_stmt *st, void *ctx)
{
	const char *g = store_col_text(st, 0);

	(void)ctx;
	return json_string(g ? g : "");
}

int store_role_ldap_groups_json(struct store_conn *c, const char *role_id, json_t **out, struct err *e)
{
	static const char SQL[] = "SELECT group_dn FROM role_ldap_groups WHERE role_id = ? ORDER BY group_key";
	struct store_stmt *st = store_prepare(c, SQL, e);

	*out = NULL;
	if (!st)
		return -1;
	store_bind_text(st, 1, role_id);
	return store_collect_json(st, dn_row, NULL, out, e);
}

int store_user_roles_list(struct store_conn *c, const char *user_id, struct role **out, size_t *n, struct err *e)
{
	static const char SQL[] = "SELECT " ROLE_COLS ROLE_FROM " WHERE r.id IN (SELECT role_id FROM user_roles"
				  " WHERE user_id = ?) ORDER BY r.name, r.id";
	struct store_stmt *st = store_prepare(c, SQL, e);

	*out = NULL;
	*n = 0;
	if (!st)
		return -1;
	store_bind_text(st, 1, user_id);
	return collect_roles(st, out, n, e);
}

int store_user_roles_set(struct store_conn *c, const char *user_id, char (*role_ids)[UUID_STR_LEN], size_t n,
			 struct err *e)
{
	static const char DEL[] = "DELETE FROM user_roles WHERE user_id = ?";
	static const char ADD[] = "INSERT INTO user_roles (user_id, role_id) VALUES (?, ?)"
				  " ON CONFLICT (user_id, role_id) DO NOTHING";
	struct store_stmt *st = store_prepare(c, DEL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_text(st, 1, user_id);
	if ((rc = store_step_done(st, e)))
		return rc;
	for (size_t i = 0; i < n; i++) {
		if (!(st = store_prepare(c, ADD, e)))
			return -1;
		store_bind_text(st, 1, user_id);
		store_bind_text(st, 2, role_ids[i]);
		if ((rc = store_step_done(st, e)))
			return rc;
	}
	return 0;
}

static unsigned builtin_bit(const char *name)
{
	if (strcmp(name, "concordAdmin") == 0)
		return ROLE_ADMIN;
	if (strcmp(name, "concordSystemReader") == 0)
		return ROLE_SYSTEM_READER;
	if (strcmp(name, "concordSystemWriter") == 0)
		return ROLE_SYSTEM_WRITER;
	return 0;
}

int store_user_grants(struct store_conn *c, const char *user_id, unsigned builtin, unsigned *roles_out,
		      unsigned *perms_out, json_t **names, struct err *e)
{
	static const char SQL[] = "SELECT " ROLE_COLS ROLE_FROM
				  " WHERE r.id IN (SELECT role_id FROM user_roles WHERE user_id = ?1"
				  " UNION SELECT rg.role_id FROM role_ldap_groups rg JOIN user_ldap_groups ug"
				  " ON ug.group_dn = rg.group_key WHERE ug.user_id = ?1)"
				  " OR (r.builtin = 1 AND r.name IN (?2, ?3, ?4)) ORDER BY r.name, r.id";
	struct store_stmt *st = store_prepare(c, SQL, e);
	struct role *roles = NULL;
	size_t n = 0;
	int rc;

	*roles_out = builtin;
	*perms_out = 0;
	if (names)
		*names = NULL;
	if (!st)
		return -1;
	store_bind_text(st, 1, user_id);
	store_bind_text(st, 2, builtin & ROLE_ADMIN ? "concordAdmin" : NULL);
	store_bind_text(st, 3, builtin & ROLE_SYSTEM_READER ? "concordSystemReader" : NULL);
	store_bind_text(st, 4, builtin & ROLE_SYSTEM_WRITER ? "concordSystemWriter" : NULL);
	if ((rc = collect_roles(st, &roles, &n, e)))
		return rc;
	if (names)
		*names = json_array();
	for (size_t i = 0; i < n; i++) {
		if (roles[i].builtin)
			*roles_out |= builtin_bit(roles[i].name);
		*perms_out |= roles[i].perms;
		if (names)
			json_array_append_new(*names, json_pack("{s:s,s:s,s:o}", "id", roles[i].id, "name",
								roles[i].name, "permissions",
								permissions_json(roles[i].perms)));
	}
	free(roles);
	return 0;
}
