#include "store/projects.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/meta_cfg.h"
#include "store/orgs.h"

#define CP(dst, i) store_col_copy(st, (i), (dst), sizeof(dst))

#define PROJECT_COLS                                                                                                   \
	"p.id, p.org_id, o.name, p.name, p.description, p.visibility, p.raw_payload_mode, p.owner_id, u.username,"     \
	" p.created_at, p.out_variables_mode"
#define PROJECT_FROM " FROM projects p JOIN orgs o ON o.id = p.org_id LEFT JOIN users u ON u.id = p.owner_id"

static void read_project(struct store_stmt *st, void *out_)
{
	struct project *p = out_;

	CP(p->id, 0);
	CP(p->org_id, 1);
	CP(p->org_name, 2);
	CP(p->name, 3);
	CP(p->description, 4);
	CP(p->visibility, 5);
	CP(p->raw_payload_mode, 6);
	CP(p->owner_id, 7);
	CP(p->owner_username, 8);
	p->created_at = store_col_int64(st, 9);
	CP(p->out_variables_mode, 10);
}

int store_project_get(struct store_conn *c, const char *id, struct project *p, struct err *e)
{
	static const char SQL[] = "SELECT " PROJECT_COLS PROJECT_FROM " WHERE p.id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	return store_one(st, read_project, p, "Project", id, e);
}

int store_project_find(struct store_conn *c, const char *org_id, const char *name, struct project *p, struct err *e)
{
	static const char SQL[] = "SELECT " PROJECT_COLS PROJECT_FROM " WHERE p.org_id = ? AND p.name = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, org_id);
	store_bind_text(st, 2, name);
	return store_one(st, read_project, p, "Project", name, e);
}

int store_project_meta_cfg(struct store_conn *c, const char *id, char **meta, char **cfg, struct err *e)
{
	static const char SQL[] = "SELECT meta, cfg FROM projects WHERE id = ?";

	return store_meta_cfg_read(c, SQL, id, "Project", meta, cfg, e);
}

int store_project_list(struct store_conn *c, const char *org_id, const char *name_has, struct project **out, size_t *n,
		       struct err *e)
{
	static const char SQL[] = "SELECT " PROJECT_COLS PROJECT_FROM " WHERE p.org_id = ?"
				  " AND (? IS NULL OR lower(p.name) LIKE ? ESCAPE '\\') ORDER BY p.name";
	struct store_stmt *st = store_prepare(c, SQL, e);
	char like[2 * 128 + 3];

	if (!st)
		return -1;
	if (name_has)
		store_like_pattern(name_has, like, sizeof like);
	store_bind_text(st, 1, org_id);
	store_bind_text(st, 2, name_has ? like : NULL);
	store_bind_text(st, 3, name_has ? like : NULL);
	return store_collect(st, sizeof **out, read_project, (void **)out, n, e);
}

static void bind_project(struct store_stmt *st, const struct project *p, const char *meta, const char *cfg)
{
	store_bind_text(st, 1, p->name);
	store_bind_text(st, 2, p->description[0] ? p->description : NULL);
	store_bind_text(st, 3, p->visibility);
	store_bind_text(st, 4, p->raw_payload_mode);
	store_bind_text(st, 5, p->owner_id[0] ? p->owner_id : NULL);
	store_bind_text(st, 6, meta);
	store_bind_text(st, 7, cfg);
	store_bind_text(st, 8, p->out_variables_mode[0] ? p->out_variables_mode : "DISABLED");
	store_bind_text(st, 9, p->id);
}

int store_project_insert(struct store_conn *c, const struct project *p, const char *meta, const char *cfg,
			 struct err *e)
{
	static const char SQL[] = "INSERT INTO projects (name, description, visibility, raw_payload_mode, owner_id,"
				  " meta, cfg, out_variables_mode, id, org_id, created_at)"
				  " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	bind_project(st, p, meta, cfg);
	store_bind_text(st, 10, p->org_id);
	store_bind_int64(st, 11, p->created_at);
	return store_write_one(c, st, "Project", p->name, NULL, e);
}

int store_project_cfg_set(struct store_conn *c, const char *id, const char *cfg, struct err *e)
{
	static const char SQL[] = "UPDATE projects SET cfg = ? WHERE id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, cfg);
	store_bind_text(st, 2, id);
	return store_write_one(c, st, "Project", NULL, id, e);
}

int store_project_update(struct store_conn *c, const struct project *p, const char *meta, const char *cfg,
			 struct err *e)
{
	static const char SQL[] = "UPDATE projects SET name = ?, description = ?, visibility = ?,"
				  " raw_payload_mode = ?, owner_id = ?, meta = coalesce(?, meta),"
				  " cfg = coalesce(?, cfg), out_variables_mode = ?, org_id = ?10 WHERE id = ?9";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	bind_project(st, p, meta, cfg);
	store_bind_text(st, 10, p->org_id);
	return store_write_one(c, st, "Project", p->name, p->id, e);
}

/* The processes of a deleted project stay, without it (Concord's ON DELETE SET NULL);
 * the list tables' copies of their project id follow. */
static int unlink_processes(struct store_conn *c, const char *id, struct err *e)
{
	static const char *const SQL[] = {
	    "UPDATE processes SET project_id = NULL WHERE project_id = ?",
	    "UPDATE process_tags SET project_id = NULL WHERE project_id = ?",
	    "UPDATE process_meta_keys SET project_id = NULL WHERE project_id = ?",
	};
	int rc = 0;

	for (size_t i = 0; i < sizeof SQL / sizeof SQL[0] && rc == 0; i++) {
		struct store_stmt *st = store_prepare(c, SQL[i], e);
		if (!st)
			return -1;
		store_bind_text(st, 1, id);
		rc = store_step_done(st, e);
	}
	return rc;
}

int store_project_delete(struct store_conn *c, const char *id, struct err *e)
{
	static const char SQL[] = "DELETE FROM projects WHERE id = ?";
	struct store_stmt *st;
	int rc;

	if ((rc = store_access_clear(c, "PROJECT", id, e)) || (rc = unlink_processes(c, id, e)))
		return rc;
	if (!(st = store_prepare(c, SQL, e)))
		return -1;
	store_bind_text(st, 1, id);
	return store_write_one(c, st, "Project", NULL, id, e);
}
