#include "store/orgs.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/meta_cfg.h"

#define CP(dst, i) store_col_copy(st, (i), (dst), sizeof(dst))

#define ORG_COLS "o.id, o.name, o.visibility, o.owner_id, u.username, o.created_at"
#define ORG_FROM " FROM orgs o LEFT JOIN users u ON u.id = o.owner_id"

void store_org_read(struct store_stmt *st, int col, struct org *o)
{
	CP(o->id, col);
	CP(o->name, col + 1);
	CP(o->visibility, col + 2);
	CP(o->owner_id, col + 3);
	CP(o->owner_username, col + 4);
	o->created_at = store_col_int64(st, col + 5);
}

static void read_org(struct store_stmt *st, void *out)
{
	store_org_read(st, 0, out);
}

int store_org_get(struct store_conn *c, const char *id, struct org *o, struct err *e)
{
	static const char SQL[] = "SELECT " ORG_COLS ORG_FROM " WHERE o.id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	return store_one(st, read_org, o, "Organization", id, e);
}

int store_org_find(struct store_conn *c, const char *name, struct org *o, struct err *e)
{
	static const char SQL[] = "SELECT " ORG_COLS ORG_FROM " WHERE o.name = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, name);
	return store_one(st, read_org, o, "Organization", name, e);
}

int store_org_meta_cfg(struct store_conn *c, const char *id, char **meta, char **cfg, struct err *e)
{
	static const char SQL[] = "SELECT meta, cfg FROM orgs WHERE id = ?";

	return store_meta_cfg_read(c, SQL, id, "Organization", meta, cfg, e);
}

void store_like_pattern(const char *s, char *out, size_t cap)
{
	size_t j = 0;

	if (cap < 3) {
		if (cap)
			out[0] = '\0';
		return;
	}
	out[j++] = '%';
	for (; *s && j + 3 < cap; s++) {
		if (*s == '%' || *s == '_' || *s == '\\')
			out[j++] = '\\';
		out[j++] = (char)tolower((unsigned char)*s);
	}
	out[j++] = '%';
	out[j] = '\0';
}

int store_org_list(struct store_conn *c, const struct org_query *q, struct org **out, size_t *n, struct err *e)
{
	static const char SQL[] = "SELECT " ORG_COLS ORG_FROM " WHERE (?1 IS NULL OR o.owner_id = ?1"
				  " OR EXISTS (SELECT 1 FROM team_members tu JOIN teams t ON t.id = tu.team_id"
				  "            WHERE t.org_id = o.id AND tu.user_id = ?1)"
				  " OR (?2 = 1 AND o.visibility = 'PUBLIC'))"
				  " AND (?3 IS NULL OR lower(o.name) LIKE ?3 ESCAPE '\\')"
				  " ORDER BY o.name LIMIT ?4 OFFSET ?5";
	struct store_stmt *st = store_prepare(c, SQL, e);
	char like[2 * 128 + 3];

	if (!st)
		return -1;
	store_bind_text(st, 1, q->user_id);
	store_bind_int64(st, 2, q->include_public);
	if (q->name_has)
		store_like_pattern(q->name_has, like, sizeof like);
	store_bind_text(st, 3, q->name_has ? like : NULL);
	store_bind_int64(st, 4, (int64_t)q->limit);
	store_bind_int64(st, 5, (int64_t)q->offset);
	return store_collect(st, sizeof **out, read_org, (void **)out, n, e);
}

static void bind_org(struct store_stmt *st, const struct org *o, const char *meta, const char *cfg)
{
	store_bind_text(st, 1, o->name);
	store_bind_text(st, 2, o->visibility);
	store_bind_text(st, 3, o->owner_id[0] ? o->owner_id : NULL);
	store_bind_text(st, 4, meta);
	store_bind_text(st, 5, cfg);
	store_bind_text(st, 6, o->id);
}

int store_org_insert(struct store_conn *c, const struct org *o, const char *meta, const char *cfg, struct err *e)
{
	static const char SQL[] = "INSERT INTO orgs (name, visibility, owner_id, meta, cfg, id, created_at)"
				  " VALUES (?, ?, ?, ?, ?, ?, ?)";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	bind_org(st, o, meta, cfg);
	store_bind_int64(st, 7, o->created_at);
	return store_write_one(c, st, "Organization", o->name, NULL, e);
}

int store_org_update(struct store_conn *c, const struct org *o, const char *meta, const char *cfg, struct err *e)
{
	static const char SQL[] = "UPDATE orgs SET name = ?, visibility = ?, owner_id = ?, meta = coalesce(?, meta),"
				  " cfg = coalesce(?, cfg) WHERE id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	bind_org(st, o, meta, cfg);
	return store_write_one(c, st, "Organization", o->name, o->id, e);
}

int store_org_delete(struct store_conn *c, const char *id, struct err *e)
{
	static const char RULES[] = "DELETE FROM resource_access WHERE resource_type = 'PROJECT'"
				    " AND resource_id IN (SELECT id FROM projects WHERE org_id = ?)";
	static const char ORG[] = "DELETE FROM orgs WHERE id = ?";
	struct store_stmt *st = store_prepare(c, RULES, e);
	int rc;

	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	if ((rc = store_step_done(st, e)))
		return rc;
	if (!(st = store_prepare(c, ORG, e)))
		return -1;
	store_bind_text(st, 1, id);
	return store_write_one(c, st, "Organization", NULL, id, e);
}
