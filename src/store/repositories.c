#include "store/repositories.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CP(dst, i) store_col_copy(st, (i), (dst), sizeof(dst))

#define REPO_COLS                                                                                                      \
	"r.id, r.project_id, p.name, p.org_id, o.name, r.name, r.url, r.branch, r.commit_id, r.path, r.secret_id,"     \
	" s.name, r.disabled, r.triggers_disabled, r.created_at, r.fetched_at, r.fetched_commit"
#define REPO_FROM                                                                                                      \
	" FROM repositories r JOIN projects p ON p.id = r.project_id JOIN orgs o ON o.id = p.org_id"                   \
	" LEFT JOIN secrets s ON s.id = r.secret_id"

static void read_repo(struct store_stmt *st, void *out)
{
	struct repository *r = out;

	CP(r->id, 0);
	CP(r->project_id, 1);
	CP(r->project_name, 2);
	CP(r->org_id, 3);
	CP(r->org_name, 4);
	CP(r->name, 5);
	CP(r->url, 6);
	CP(r->branch, 7);
	CP(r->commit_id, 8);
	CP(r->path, 9);
	CP(r->secret_id, 10);
	CP(r->secret_name, 11);
	r->disabled = store_col_int64(st, 12) != 0;
	r->triggers_disabled = store_col_int64(st, 13) != 0;
	r->created_at = store_col_int64(st, 14);
	r->fetched_at = store_col_int64(st, 15);
	CP(r->fetched_commit, 16);
}

int store_repository_get(struct store_conn *c, const char *id, struct repository *r, struct err *e)
{
	static const char SQL[] = "SELECT " REPO_COLS REPO_FROM " WHERE r.id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	return store_one(st, read_repo, r, "Repository", id, e);
}

int store_repository_find(struct store_conn *c, const char *project_id, const char *name, struct repository *r,
			  struct err *e)
{
	static const char SQL[] = "SELECT " REPO_COLS REPO_FROM " WHERE r.project_id = ? AND r.name = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, project_id);
	store_bind_text(st, 2, name);
	return store_one(st, read_repo, r, "Repository", name, e);
}

int store_repository_list(struct store_conn *c, const char *project_id, struct repository **out, size_t *n,
			  struct err *e)
{
	static const char SQL[] = "SELECT " REPO_COLS REPO_FROM " WHERE ? IS NULL OR r.project_id = ?"
				  " ORDER BY r.name, r.id";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, project_id);
	store_bind_text(st, 2, project_id);
	return store_collect(st, sizeof **out, read_repo, (void **)out, n, e);
}

static const char *or_null(const char *s)
{
	return s[0] ? s : NULL;
}

static void bind_config(struct store_stmt *st, const struct repository *r)
{
	store_bind_text(st, 1, r->name);
	store_bind_text(st, 2, r->url);
	store_bind_text(st, 3, or_null(r->branch));
	store_bind_text(st, 4, or_null(r->commit_id));
	store_bind_text(st, 5, or_null(r->path));
	store_bind_text(st, 6, or_null(r->secret_id));
	store_bind_int64(st, 7, r->disabled);
	store_bind_int64(st, 8, r->triggers_disabled);
	store_bind_text(st, 9, r->id);
}

static int name_taken(int rc, const struct repository *r, struct err *e)
{
	if (rc == -ERR_CONFLICT)
		return err_set(e, ERR_CONFLICT, "Repository already exists: %.128s", r->name);
	return rc;
}

int store_repository_insert(struct store_conn *c, const struct repository *r, struct err *e)
{
	static const char SQL[] = "INSERT INTO repositories (name, url, branch, commit_id, path, secret_id, disabled,"
				  " triggers_disabled, id, project_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?,"
				  " ?, ?)";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	bind_config(st, r);
	store_bind_text(st, 10, r->project_id);
	store_bind_int64(st, 11, r->created_at);
	return name_taken(store_step_done(st, e), r, e);
}

int store_repository_update(struct store_conn *c, const struct repository *r, struct err *e)
{
	static const char SQL[] = "UPDATE repositories SET name = ?, url = ?, branch = ?, commit_id = ?, path = ?,"
				  " secret_id = ?, disabled = ?, triggers_disabled = ? WHERE id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st)
		return -1;
	bind_config(st, r);
	rc = name_taken(store_step_done(st, e), r, e);
	if (rc == 0 && store_changes(c) == 0)
		return err_set(e, ERR_NOT_FOUND, "Repository not found: %.128s", r->id);
	return rc;
}

int store_repository_delete(struct store_conn *c, const char *id, struct err *e)
{
	static const char SQL[] = "DELETE FROM repositories WHERE id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	rc = store_step_done(st, e);
	if (rc == 0 && store_changes(c) == 0)
		return err_set(e, ERR_NOT_FOUND, "Repository not found: %.128s", id);
	return rc;
}

int store_repository_meta(struct store_conn *c, const char *id, char **meta, struct err *e)
{
	static const char SQL[] = "SELECT meta FROM repositories WHERE id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	const char *v;
	bool found;
	int rc;

	*meta = NULL;
	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	rc = store_step(st, e);
	found = rc == STORE_ROW;
	if (found && (v = store_col_text(st, 0)) && !(*meta = strdup(v)))
		rc = err_set(e, ERR_INTERNAL, "out of memory");
	store_reset(st);
	if (rc == STORE_DONE && !found)
		return err_set(e, ERR_NOT_FOUND, "Repository not found: %.128s", id);
	return rc < 0 ? rc : 0;
}

int store_repository_set_meta(struct store_conn *c, const char *id, const char *meta, struct err *e)
{
	static const char SQL[] = "UPDATE repositories SET meta = ? WHERE id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, meta);
	store_bind_text(st, 2, id);
	return store_step_done(st, e);
}
