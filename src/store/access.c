#include "store/access.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const level_names[] = {"NONE", "READER", "WRITER", "OWNER"};
static const char *const role_names[] = {"NONE", "MEMBER", "MAINTAINER", "OWNER"};

const char *access_level_name(enum access_level l)
{
	return level_names[l];
}

int access_level_parse(const char *s, enum access_level *out, struct err *e)
{
	for (int i = ACCESS_READER; i <= ACCESS_OWNER; i++)
		if (s && strcmp(s, level_names[i]) == 0) {
			*out = (enum access_level)i;
			return 0;
		}
	return err_set(e, ERR_INVALID, "invalid access level '%.40s': must be READER, WRITER or OWNER", s ? s : "");
}

const char *team_role_name(enum team_role r)
{
	return role_names[r];
}

int team_role_parse(const char *s, enum team_role *out, struct err *e)
{
	for (int i = TEAM_ROLE_MEMBER; i <= TEAM_ROLE_OWNER; i++)
		if (s && strcmp(s, role_names[i]) == 0) {
			*out = (enum team_role)i;
			return 0;
		}
	return err_set(e, ERR_INVALID, "invalid team role '%.40s': must be OWNER, MAINTAINER or MEMBER", s ? s : "");
}

/* The strongest of the names in column 0 of st's rows (its index in names; 0 = none).
 * *out is always written: 0, the weakest, when the step fails, so that no caller can act
 * on an unset level.  A column read out of memory fails the next step (store.h). */
static int max_named(struct store_stmt *st, const char *const *names, int n_names, int *out, struct err *e)
{
	int rc, best = 0;

	*out = 0;
	while ((rc = store_step(st, e)) == STORE_ROW) {
		const char *v = store_col_text(st, 0);
		for (int i = 1; i < n_names; i++)
			if (v && strcmp(v, names[i]) == 0 && i > best)
				best = i;
	}
	store_reset(st);
	if (rc < 0)
		return rc;
	*out = best;
	return 0;
}

int store_org_member_role(struct store_conn *c, const char *org_id, const char *user_id, enum team_role *out,
			  struct err *e)
{
	static const char SQL[] = "SELECT tu.role FROM team_members tu JOIN teams t ON t.id = tu.team_id"
				  " WHERE t.org_id = ? AND tu.user_id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int best = 0, rc;

	if (!st)
		return -1;
	store_bind_text(st, 1, org_id);
	store_bind_text(st, 2, user_id);
	rc = max_named(st, role_names, 4, &best, e);
	*out = (enum team_role)best;
	return rc;
}

int store_team_member_role(struct store_conn *c, const char *team_id, const char *user_id, enum team_role *out,
			   struct err *e)
{
	static const char SQL[] = "SELECT role FROM team_members WHERE team_id = ? AND user_id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int best = 0, rc;

	if (!st)
		return -1;
	store_bind_text(st, 1, team_id);
	store_bind_text(st, 2, user_id);
	rc = max_named(st, role_names, 4, &best, e);
	*out = (enum team_role)best;
	return rc;
}

int store_access_level(struct store_conn *c, const char *resource_type, const char *resource_id, const char *user_id,
		       enum access_level *out, struct err *e)
{
	static const char SQL[] = "SELECT ra.level FROM resource_access ra"
				  " JOIN team_members tu ON tu.team_id = ra.team_id"
				  " WHERE ra.resource_type = ? AND ra.resource_id = ? AND tu.user_id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int best = 0, rc;

	if (!st)
		return -1;
	store_bind_text(st, 1, resource_type);
	store_bind_text(st, 2, resource_id);
	store_bind_text(st, 3, user_id);
	rc = max_named(st, level_names, 4, &best, e);
	*out = (enum access_level)best;
	return rc;
}

static void read_rule(struct store_stmt *st, void *out)
{
	struct access_rule *r = out;

	store_col_copy(st, 0, r->team_id, sizeof r->team_id);
	store_col_copy(st, 1, r->team_name, sizeof r->team_name);
	store_col_copy(st, 2, r->org_name, sizeof r->org_name);
	if (access_level_parse(store_col_text(st, 3), &r->level, NULL))
		r->level = ACCESS_NONE;
}

int store_access_list(struct store_conn *c, const char *resource_type, const char *resource_id,
		      struct access_rule **out, size_t *n, struct err *e)
{
	static const char SQL[] = "SELECT ra.team_id, t.name, o.name, ra.level FROM resource_access ra"
				  " JOIN teams t ON t.id = ra.team_id JOIN orgs o ON o.id = t.org_id"
				  " WHERE ra.resource_type = ? AND ra.resource_id = ? ORDER BY t.name";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, resource_type);
	store_bind_text(st, 2, resource_id);
	return store_collect(st, sizeof **out, read_rule, (void **)out, n, e);
}

int store_access_upsert(struct store_conn *c, const char *resource_type, const char *resource_id, const char *team_id,
			enum access_level level, struct err *e)
{
	static const char SQL[] = "INSERT INTO resource_access (resource_type, resource_id, team_id, level)"
				  " VALUES (?, ?, ?, ?) ON CONFLICT (resource_type, resource_id, team_id)"
				  " DO UPDATE SET level = excluded.level";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, resource_type);
	store_bind_text(st, 2, resource_id);
	store_bind_text(st, 3, team_id);
	store_bind_text(st, 4, access_level_name(level));
	return store_step_done(st, e);
}

int store_access_clear(struct store_conn *c, const char *resource_type, const char *resource_id, struct err *e)
{
	static const char SQL[] = "DELETE FROM resource_access WHERE resource_type = ? AND resource_id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, resource_type);
	store_bind_text(st, 2, resource_id);
	return store_step_done(st, e);
}
