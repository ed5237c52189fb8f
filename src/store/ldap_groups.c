#include "store/ldap_groups.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "store/access.h"

/* s lower-cased (ASCII): a new string, NULL out of memory. */
static char *lower_dup(const char *s)
{
	char *l = strdup(s);

	for (char *p = l; p && *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return l;
}

static int user_groups_clear(struct store_conn *c, const char *user_id, struct err *e)
{
	static const char SQL[] = "DELETE FROM user_ldap_groups WHERE user_id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, user_id);
	return store_step_done(st, e);
}

/* Steps st with the texts a (at 1), the lower-cased dn (at 2) and, when not NULL, b and c
 * (at 3 and 4): the writes of a DN and its comparison key. */
static int step_with_key(struct store_stmt *st, const char *a, const char *dn, const char *b, const char *c,
			 struct err *e)
{
	char *key;
	int rc;

	if (!st)
		return -1;
	if (!(key = lower_dup(dn))) {
		store_reset(st);
		return err_set(e, ERR_INTERNAL, "out of memory");
	}
	store_bind_text(st, 1, a);
	store_bind_text(st, 2, key);
	if (b)
		store_bind_text(st, 3, b);
	if (c)
		store_bind_text(st, 4, c);
	rc = store_step_done(st, e);
	free(key);
	return rc;
}

static int user_group_add(struct store_conn *c, const char *user_id, const char *group, struct err *e)
{
	static const char SQL[] = "INSERT INTO user_ldap_groups (user_id, group_dn) VALUES (?, ?)"
				  " ON CONFLICT (user_id, group_dn) DO NOTHING";

	return step_with_key(store_prepare(c, SQL, e), user_id, group, NULL, NULL, e);
}

static int user_synced(struct store_conn *c, const char *user_id, int64_t now_ms, struct err *e)
{
	static const char SQL[] = "INSERT INTO user_ldap_sync (user_id, synced_at) VALUES (?, ?)"
				  " ON CONFLICT (user_id) DO UPDATE SET synced_at = excluded.synced_at";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, user_id);
	store_bind_int64(st, 2, now_ms);
	return store_step_done(st, e);
}

int store_user_ldap_groups_set(struct store_conn *c, const char *user_id, char *const *groups, size_t n,
			       int64_t now_ms, struct err *e)
{
	int rc;

	if ((rc = store_tx_begin(c, e)))
		return rc;
	rc = user_groups_clear(c, user_id, e);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = user_group_add(c, user_id, groups[i], e);
	if (rc == 0)
		rc = user_synced(c, user_id, now_ms, e);
	if (rc == 0)
		rc = store_tx_commit(c, e);
	if (rc)
		store_tx_rollback(c);
	return rc;
}

int store_user_ldap_synced_at(struct store_conn *c, const char *user_id, int64_t *out, struct err *e)
{
	static const char SQL[] = "SELECT synced_at FROM user_ldap_sync WHERE user_id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_text(st, 1, user_id);
	rc = store_step(st, e);
	if (rc == STORE_ROW)
		*out = store_col_int64(st, 0);
	store_reset(st);
	if (rc == STORE_DONE)
		return err_set(e, ERR_NOT_FOUND, "no LDAP groups read for user %s", user_id);
	return rc < 0 ? rc : 0;
}

static json_t *dn_row(struct store_stmt *st, void *ctx)
{
	const char *g = store_col_text(st, 0);

	(void)ctx;
	return json_string(g ? g : "");
}

static json_t *link_row(struct store_stmt *st, void *ctx)
{
	const char *g = store_col_text(st, 0);

	(void)ctx;
	return json_pack("{s:s,s:s?}", "group", g ? g : "", "role", store_col_text(st, 1));
}

int store_user_ldap_groups_json(struct store_conn *c, const char *user_id, json_t **out, struct err *e)
{
	static const char SQL[] = "SELECT group_dn FROM user_ldap_groups WHERE user_id = ? ORDER BY group_dn";
	struct store_stmt *st;
	int64_t at;
	struct err none;

	*out = NULL;
	if (store_user_ldap_synced_at(c, user_id, &at, &none))
		return none.code == ERR_NOT_FOUND ? 0 : err_set(e, none.code, "%s", none.msg);
	if (!(st = store_prepare(c, SQL, e)))
		return -1;
	store_bind_text(st, 1, user_id);
	return store_collect_json(st, dn_row, NULL, out, e);
}

int store_team_ldap_group_put(struct store_conn *c, const char *team_id, const char *group_dn, enum team_role role,
			      struct err *e)
{
	static const char SQL[] = "INSERT INTO team_ldap_groups (team_id, group_key, group_dn, role) VALUES (?, ?, ?, ?)"
				  " ON CONFLICT (team_id, group_key) DO UPDATE SET group_dn = excluded.group_dn,"
				  " role = excluded.role";

	return step_with_key(store_prepare(c, SQL, e), team_id, group_dn, group_dn, team_role_name(role), e);
}

int store_team_ldap_groups_clear(struct store_conn *c, const char *team_id, struct err *e)
{
	static const char SQL[] = "DELETE FROM team_ldap_groups WHERE team_id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, team_id);
	return store_step_done(st, e);
}

int store_team_ldap_groups_json(struct store_conn *c, const char *team_id, json_t **out, struct err *e)
{
	static const char SQL[] = "SELECT group_dn, role FROM team_ldap_groups WHERE team_id = ? ORDER BY group_key";
	struct store_stmt *st = store_prepare(c, SQL, e);

	*out = NULL;
	if (!st)
		return -1;
	store_bind_text(st, 1, team_id);
	return store_collect_json(st, link_row, NULL, out, e);
}
