#include "store/teams.h"

#include <stdio.h>
#include <stdlib.h>

#include "base/datetime.h"

#define CP(dst, i) store_col_copy(st, (i), (dst), sizeof(dst))

#define TEAM_COLS "id, org_id, name, description"

static void read_team(struct store_stmt *st, void *out_)
{
	struct team *t = out_;

	CP(t->id, 0);
	CP(t->org_id, 1);
	CP(t->name, 2);
	CP(t->description, 3);
}

int store_team_get(struct store_conn *c, const char *id, struct team *t, struct err *e)
{
	static const char SQL[] = "SELECT " TEAM_COLS " FROM teams WHERE id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	return store_one(st, read_team, t, "Team", id, e);
}

int store_team_find(struct store_conn *c, const char *org_id, const char *name, struct team *t, struct err *e)
{
	static const char SQL[] = "SELECT " TEAM_COLS " FROM teams WHERE org_id = ? AND name = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, org_id);
	store_bind_text(st, 2, name);
	return store_one(st, read_team, t, "Team", name, e);
}

int store_team_list(struct store_conn *c, const char *org_id, struct team **out, size_t *n, struct err *e)
{
	static const char SQL[] = "SELECT " TEAM_COLS " FROM teams WHERE org_id = ? ORDER BY name";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, org_id);
	return store_collect(st, sizeof **out, read_team, (void **)out, n, e);
}

int store_team_insert(struct store_conn *c, const struct team *t, struct err *e)
{
	static const char SQL[] = "INSERT INTO teams (id, org_id, name, description, created_at)"
				  " VALUES (?, ?, ?, ?, ?)";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_text(st, 1, t->id);
	store_bind_text(st, 2, t->org_id);
	store_bind_text(st, 3, t->name);
	store_bind_text(st, 4, t->description[0] ? t->description : NULL);
	store_bind_int64(st, 5, dt_now_ms());
	rc = store_step_done(st, e);
	if (rc == -ERR_CONFLICT)
		return err_set(e, ERR_CONFLICT, "Team already exists: %.128s", t->name);
	return rc;
}

int store_team_update(struct store_conn *c, const struct team *t, struct err *e)
{
	static const char SQL[] = "UPDATE teams SET name = ?, description = ? WHERE id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_text(st, 1, t->name);
	store_bind_text(st, 2, t->description[0] ? t->description : NULL);
	store_bind_text(st, 3, t->id);
	rc = store_step_done(st, e);
	if (rc == -ERR_CONFLICT)
		return err_set(e, ERR_CONFLICT, "Team already exists: %.128s", t->name);
	if (rc == 0 && store_changes(c) == 0)
		return err_set(e, ERR_NOT_FOUND, "Team not found: %.128s", t->id);
	return rc;
}

int store_team_delete(struct store_conn *c, const char *id, struct err *e)
{
	static const char SQL[] = "DELETE FROM teams WHERE id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	rc = store_step_done(st, e);
	if (rc == 0 && store_changes(c) == 0)
		return err_set(e, ERR_NOT_FOUND, "Team not found: %.128s", id);
	return rc;
}

static void read_member(struct store_stmt *st, void *out)
{
	struct team_member *m = out;

	CP(m->user_id, 0);
	CP(m->username, 1);
	CP(m->domain, 2);
	CP(m->display_name, 3);
	CP(m->type, 4);
	if (team_role_parse(store_col_text(st, 5), &m->role, NULL))
		m->role = TEAM_ROLE_NONE;
}

int store_team_members(struct store_conn *c, const char *team_id, struct team_member **out, size_t *n, struct err *e)
{
	static const char SQL[] = "SELECT u.id, u.username, u.user_domain, u.display_name, u.user_type, tu.role"
				  " FROM team_users tu JOIN users u ON u.id = tu.user_id"
				  " WHERE tu.team_id = ? ORDER BY lower(u.username), u.user_domain";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, team_id);
	return store_collect(st, sizeof **out, read_member, (void **)out, n, e);
}

int store_team_member_set(struct store_conn *c, const char *team_id, const char *user_id, enum team_role role,
			  struct err *e)
{
	static const char SQL[] = "INSERT INTO team_users (team_id, user_id, role) VALUES (?, ?, ?)"
				  " ON CONFLICT (team_id, user_id) DO UPDATE SET role = excluded.role";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, team_id);
	store_bind_text(st, 2, user_id);
	store_bind_text(st, 3, team_role_name(role));
	return store_step_done(st, e);
}

int store_team_member_remove(struct store_conn *c, const char *team_id, const char *user_id, struct err *e)
{
	static const char SQL[] = "DELETE FROM team_users WHERE team_id = ? AND user_id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, team_id);
	store_bind_text(st, 2, user_id);
	return store_step_done(st, e);
}

int store_team_members_clear(struct store_conn *c, const char *team_id, struct err *e)
{
	static const char SQL[] = "DELETE FROM team_users WHERE team_id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, team_id);
	return store_step_done(st, e);
}
