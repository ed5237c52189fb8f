#include "store/orgs.h"

#include <stdio.h>

#define CP(dst, i) snprintf((dst), sizeof(dst), "%s", store_col_text(st, (i)) ? store_col_text(st, (i)) : "")

static int one_row(struct store_stmt *st, void (*read)(struct store_stmt *, void *), void *out, const char *what,
		   const char *key, struct err *e)
{
	int rc = store_step(st, e);

	if (rc == STORE_ROW)
		read(st, out);
	store_reset(st);
	if (rc == STORE_DONE)
		return err_set(e, ERR_NOT_FOUND, "%s not found: %.128s", what, key);
	return rc < 0 ? rc : 0;
}

#define ORG_COLS "id, name, visibility, owner_id, created_at"

static void read_org(struct store_stmt *st, void *out)
{
	struct org *o = out;
	CP(o->id, 0);
	CP(o->name, 1);
	CP(o->visibility, 2);
	CP(o->owner_id, 3);
	o->created_at = store_col_int64(st, 4);
}

int store_org_get(struct store_conn *c, const char *id, struct org *o, struct err *e)
{
	static const char SQL[] = "SELECT " ORG_COLS " FROM orgs WHERE id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	return one_row(st, read_org, o, "Organization", id, e);
}

int store_org_find(struct store_conn *c, const char *name, struct org *o, struct err *e)
{
	static const char SQL[] = "SELECT " ORG_COLS " FROM orgs WHERE name = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, name);
	return one_row(st, read_org, o, "Organization", name, e);
}

#define TEAM_COLS "id, org_id, name, description"

static void read_team(struct store_stmt *st, void *out)
{
	struct team *t = out;
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
	return one_row(st, read_team, t, "Team", id, e);
}

int store_team_find(struct store_conn *c, const char *org_id, const char *name, struct team *t, struct err *e)
{
	static const char SQL[] = "SELECT " TEAM_COLS " FROM teams WHERE org_id = ? AND name = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, org_id);
	store_bind_text(st, 2, name);
	return one_row(st, read_team, t, "Team", name, e);
}

#define PROJECT_COLS "id, org_id, name, description, visibility, raw_payload_mode, owner_id, created_at"

static void read_project(struct store_stmt *st, void *out)
{
	struct project *p = out;
	CP(p->id, 0);
	CP(p->org_id, 1);
	CP(p->name, 2);
	CP(p->description, 3);
	CP(p->visibility, 4);
	CP(p->raw_payload_mode, 5);
	CP(p->owner_id, 6);
	p->created_at = store_col_int64(st, 7);
}

int store_project_get(struct store_conn *c, const char *id, struct project *p, struct err *e)
{
	static const char SQL[] = "SELECT " PROJECT_COLS " FROM projects WHERE id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	return one_row(st, read_project, p, "Project", id, e);
}

int store_project_find(struct store_conn *c, const char *org_id, const char *name, struct project *p, struct err *e)
{
	static const char SQL[] = "SELECT " PROJECT_COLS " FROM projects WHERE org_id = ? AND name = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, org_id);
	store_bind_text(st, 2, name);
	return one_row(st, read_project, p, "Project", name, e);
}
