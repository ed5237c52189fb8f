#include "store/secrets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/str.h"
#include "store/access.h"

#define SECRET_COLS                                                                                                    \
	"s.id, s.org_id, o.name, s.name, s.type, s.encrypted_by, s.store_type, s.visibility, s.owner_id, u.username,"  \
	" (SELECT count(*) FROM secret_projects sp WHERE sp.secret_id = s.id), s.created_at, s.updated_at"
#define SECRET_FROM " FROM secrets s JOIN orgs o ON o.id = s.org_id LEFT JOIN users u ON u.id = s.owner_id"

static const char *const type_names[] = {NULL, "KEY_PAIR", "USERNAME_PASSWORD", "DATA"};

const char *secret_type_name(enum secret_type t)
{
	return t >= SECRET_TYPE_KEY_PAIR && t <= SECRET_TYPE_DATA ? type_names[t] : "DATA";
}

bool secret_type_parse(const char *s, size_t len, enum secret_type *out)
{
	for (int t = SECRET_TYPE_KEY_PAIR; t <= SECRET_TYPE_DATA; t++)
		if (strlen(type_names[t]) == len && strncasecmp(s, type_names[t], len) == 0) {
			*out = (enum secret_type)t;
			return true;
		}
	return false;
}

static void copy_col(char *dst, size_t cap, struct store_stmt *st, int idx)
{
	store_col_copy(st, idx, dst, cap);
}

static void read_row(struct store_stmt *st, void *out_)
{
	struct secret *s = out_;

	const char *type = store_col_text(st, 4);

	memset(s, 0, sizeof *s);
	copy_col(s->id, sizeof s->id, st, 0);
	copy_col(s->org_id, sizeof s->org_id, st, 1);
	copy_col(s->org_name, sizeof s->org_name, st, 2);
	copy_col(s->name, sizeof s->name, st, 3);
	if (!type || !secret_type_parse(type, strlen(type), &s->type))
		s->type = SECRET_TYPE_DATA;
	s->password_protected = strcmp(store_col_text(st, 5), "PASSWORD") == 0;
	copy_col(s->store_type, sizeof s->store_type, st, 6);
	s->is_public = strcmp(store_col_text(st, 7), "PUBLIC") == 0;
	copy_col(s->owner_id, sizeof s->owner_id, st, 8);
	copy_col(s->owner_name, sizeof s->owner_name, st, 9);
	s->n_projects = (size_t)store_col_int64(st, 10);
	s->created_at = store_col_int64(st, 11);
	s->updated_at = store_col_is_null(st, 12) ? 0 : store_col_int64(st, 12);
}

int store_secret_get(struct store_conn *c, const char *id, struct secret *s, struct err *e)
{
	static const char SQL[] = "SELECT " SECRET_COLS SECRET_FROM " WHERE s.id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	return store_one(st, read_row, s, "Secret", id, e);
}

static void bind_opt(struct store_stmt *st, int idx, const char *v)
{
	if (v && *v)
		store_bind_text(st, idx, v);
	else
		store_bind_null(st, idx);
}

static int insert_row(struct store_conn *c, const struct secret *s, const void *env, size_t env_len, struct err *e)
{
	static const char SQL[] = "INSERT INTO secrets (id, org_id, name, type, encrypted_by, store_type, visibility,"
				  " owner_id, envelope, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_text(st, 1, s->id);
	store_bind_text(st, 2, s->org_id);
	store_bind_text(st, 3, s->name);
	store_bind_text(st, 4, secret_type_name(s->type));
	store_bind_text(st, 5, s->password_protected ? "PASSWORD" : "SERVER_KEY");
	store_bind_text(st, 6, s->store_type[0] ? s->store_type : "concord");
	store_bind_text(st, 7, s->is_public ? "PUBLIC" : "PRIVATE");
	bind_opt(st, 8, s->owner_id);
	store_bind_blob(st, 9, env, env_len);
	store_bind_int64(st, 10, s->created_at);
	rc = store_step_done(st, e);
	if (rc == -ERR_CONFLICT)
		return err_set(e, ERR_CONFLICT, "Secret already exists: %s", s->name);
	return rc;
}

/* Replaces the secret's projects with the n given (inside the caller's transaction). */
static int set_projects(struct store_conn *c, const char *secret_id, const struct secret_project *projects, size_t n,
			struct err *e)
{
	static const char DEL[] = "DELETE FROM secret_projects WHERE secret_id = ?";
	static const char INS[] = "INSERT INTO secret_projects (secret_id, project_id) VALUES (?, ?)";
	struct store_stmt *st = store_prepare(c, DEL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_text(st, 1, secret_id);
	rc = store_step_done(st, e);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		if (!(st = store_prepare(c, INS, e)))
			return -1;
		store_bind_text(st, 1, secret_id);
		store_bind_text(st, 2, projects[i].id);
		rc = store_step_done(st, e); /* the callers pass each project once */
	}
	return rc;
}

int store_secret_insert(struct store_conn *c, const struct secret *s, const struct secret_project *projects, size_t n,
			const void *env, size_t env_len, struct err *e)
{
	int rc;

	if ((rc = store_tx_begin(c, e)))
		return rc;
	rc = insert_row(c, s, env, env_len, e);
	if (rc == 0)
		rc = set_projects(c, s->id, projects, n, e);
	if (rc == 0)
		rc = store_tx_commit(c, e);
	if (rc)
		store_tx_rollback(c);
	return rc;
}

static void read_project(struct store_stmt *st, void *out_)
{
	struct secret_project *p = out_;

	memset(p, 0, sizeof *p);
	copy_col(p->id, sizeof p->id, st, 0);
	copy_col(p->name, sizeof p->name, st, 1);
}

int store_secret_projects(struct store_conn *c, const char *secret_id, struct secret_project **out, size_t *n,
			  struct err *e)
{
	static const char SQL[] = "SELECT p.id, p.name FROM secret_projects sp JOIN projects p ON p.id = sp.project_id"
				  " WHERE sp.secret_id = ? ORDER BY p.name";
	struct store_stmt *st = store_prepare(c, SQL, e);

	*out = NULL;
	*n = 0;
	if (!st)
		return -1;
	store_bind_text(st, 1, secret_id);
	return store_collect(st, sizeof **out, read_project, (void **)out, n, e);
}

void store_secret_projects_text(struct store_conn *c, const struct secret *s, char *buf, size_t cap)
{
	struct secret_project *ps = NULL;
	size_t n = 0, at;
	struct err ignored;

	if (store_secret_projects(c, s->id, &ps, &n, &ignored) || n == 0) {
		str_fmt_cut(buf, cap, "other projects");
		free(ps);
		return;
	}
	str_fmt_cut(buf, cap, "project%s '%s'", n > 1 ? "s" : "", ps[0].name);
	for (size_t i = 1; i < n && (at = strlen(buf)) + 1 < cap; i++)
		str_fmt_cut(buf + at, cap - at, ", '%s'", ps[i].name);
	free(ps);
}

int store_secret_project_allowed(struct store_conn *c, const struct secret *s, const char *project_id, bool *ok,
				 struct err *e)
{
	static const char SQL[] = "SELECT 1 FROM secret_projects WHERE secret_id = ? AND project_id = ?";
	struct store_stmt *st;
	int rc;

	*ok = s->n_projects == 0;
	if (*ok || !project_id || !*project_id)
		return 0;
	if (!(st = store_prepare(c, SQL, e)))
		return -1;
	store_bind_text(st, 1, s->id);
	store_bind_text(st, 2, project_id);
	rc = store_step(st, e);
	*ok = rc == STORE_ROW;
	store_reset(st);
	return rc < 0 ? rc : 0;
}

int store_secret_find(struct store_conn *c, const char *org_id, const char *name, struct secret *s, struct err *e)
{
	static const char SQL[] = "SELECT " SECRET_COLS SECRET_FROM " WHERE s.org_id = ? AND s.name = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, org_id);
	store_bind_text(st, 2, name);
	return store_one(st, read_row, s, "Secret", name, e);
}

static int read_envelope(struct store_conn *c, const char *id, const struct secret *expect, unsigned char **env,
			 size_t *env_len, struct err *e)
{
	static const char SQL[] = "SELECT envelope, org_id, name FROM secrets WHERE id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	*env = NULL;
	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	rc = store_step(st, e);
	if (rc == STORE_ROW && expect &&
	    (strcmp(store_col_text(st, 1), expect->org_id) != 0 || strcmp(store_col_text(st, 2), expect->name) != 0))
		rc = err_set(e, ERR_CONFLICT, "Secret '%.128s' was renamed or moved while it was read: try again",
			     expect->name);
	if (rc == STORE_ROW) {
		size_t n = 0;
		const void *p = store_col_blob(st, 0, &n);
		*env = malloc(n ? n : 1);
		if (!*env) {
			rc = err_set(e, ERR_INTERNAL, "out of memory");
		} else {
			if (n)
				memcpy(*env, p, n);
			*env_len = n;
		}
	}
	store_reset(st);
	if (rc == STORE_DONE)
		return err_set(e, ERR_NOT_FOUND, "Secret not found: %.128s", expect ? expect->name : id);
	return rc < 0 ? rc : 0;
}

int store_secret_envelope(struct store_conn *c, const char *id, unsigned char **env, size_t *env_len, struct err *e)
{
	return read_envelope(c, id, NULL, env, env_len, e);
}

int store_secret_envelope_of(struct store_conn *c, const struct secret *s, unsigned char **env, size_t *env_len,
			     struct err *e)
{
	return read_envelope(c, s->id, s, env, env_len, e);
}

static int update_meta(struct store_conn *c, const struct secret *s, struct err *e)
{
	static const char SQL[] = "UPDATE secrets SET org_id = ?, name = ?, type = ?, encrypted_by = ?,"
				  " visibility = ?, owner_id = ?, updated_at = ? WHERE id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	if (!st)
		return -1;
	store_bind_text(st, 1, s->org_id);
	store_bind_text(st, 2, s->name);
	store_bind_text(st, 3, secret_type_name(s->type));
	store_bind_text(st, 4, s->password_protected ? "PASSWORD" : "SERVER_KEY");
	store_bind_text(st, 5, s->is_public ? "PUBLIC" : "PRIVATE");
	bind_opt(st, 6, s->owner_id);
	if (s->updated_at)
		store_bind_int64(st, 7, s->updated_at);
	else
		store_bind_null(st, 7);
	store_bind_text(st, 8, s->id);
	rc = store_step_done(st, e);
	if (rc == -ERR_CONFLICT)
		return err_set(e, ERR_CONFLICT, "Secret already exists: %s", s->name);
	if (rc == 0 && store_changes(c) == 0)
		return err_set(e, ERR_NOT_FOUND, "Secret not found: %s", s->name);
	return rc;
}

static int set_envelope(struct store_conn *c, const char *id, const void *env, size_t env_len, struct err *e)
{
	static const char SQL[] = "UPDATE secrets SET envelope = ? WHERE id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_blob(st, 1, env, env_len);
	store_bind_text(st, 2, id);
	return store_step_done(st, e);
}

int store_secret_update(struct store_conn *c, const struct secret *s, bool set_projs,
			const struct secret_project *projects, size_t n, const void *env, size_t env_len,
			bool clear_rules, struct err *e)
{
	int rc;

	if ((rc = store_tx_begin(c, e)))
		return rc;
	rc = update_meta(c, s, e);
	if (rc == 0 && set_projs)
		rc = set_projects(c, s->id, projects, n, e);
	if (rc == 0 && env)
		rc = set_envelope(c, s->id, env, env_len, e);
	if (rc == 0 && clear_rules)
		rc = store_access_clear(c, SECRET_RESOURCE, s->id, e);
	if (rc == 0)
		rc = store_tx_commit(c, e);
	if (rc)
		store_tx_rollback(c);
	return rc;
}

int store_secret_delete(struct store_conn *c, const char *id, struct err *e)
{
	static const char SQL[] = "DELETE FROM secrets WHERE id = ?";
	struct store_stmt *st;
	int rc;

	if ((rc = store_tx_begin(c, e)))
		return rc;
	st = store_prepare(c, SQL, e);
	if (!st) {
		rc = -1;
		goto out;
	}
	store_bind_text(st, 1, id);
	rc = store_step_done(st, e);
	if (rc == 0 && store_changes(c) == 0)
		rc = err_set(e, ERR_NOT_FOUND, "Secret not found: %.64s", id);
	if (rc == 0)
		rc = store_access_clear(c, SECRET_RESOURCE, id, e);
	if (rc == 0)
		rc = store_tx_commit(c, e);
out:
	if (rc)
		store_tx_rollback(c);
	return rc;
}

/* "%<filter with % _ \ escaped>%" for LIKE … ESCAPE '\'; new string. */
static char *like_pattern(const char *filter)
{
	size_t n = strlen(filter), k = 0;
	char *p = malloc(2 * n + 3);

	if (!p)
		return NULL;
	p[k++] = '%';
	for (size_t i = 0; i < n; i++) {
		char ch = filter[i];
		if (ch == '%' || ch == '_' || ch == '\\')
			p[k++] = '\\';
		p[k++] = (char)(ch >= 'A' && ch <= 'Z' ? ch - 'A' + 'a' : ch);
	}
	p[k++] = '%';
	p[k] = '\0';
	return p;
}

int store_secret_list(struct store_conn *c, const char *org_id, const char *user_id, bool see_all, const char *filter,
		      size_t limit, size_t offset, struct secret **out, size_t *n, struct err *e)
{
	static const char SQL[] =
	    "SELECT " SECRET_COLS SECRET_FROM
	    " WHERE s.org_id = ? AND (? = 1 OR s.visibility = 'PUBLIC' OR s.owner_id = ?"
	    " OR EXISTS (SELECT 1 FROM resource_access ra JOIN team_members tu ON tu.team_id = ra.team_id"
	    " WHERE ra.resource_type = 'SECRET' AND ra.resource_id = s.id AND tu.user_id = ?))"
	    " AND lower(s.name) LIKE ? ESCAPE '\\' ORDER BY s.name LIMIT ? OFFSET ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	char *pattern;
	int rc;

	if (!st)
		return -1;
	pattern = like_pattern(filter ? filter : "");
	if (!pattern) {
		store_reset(st);
		return err_set(e, ERR_INTERNAL, "out of memory");
	}
	store_bind_text(st, 1, org_id);
	store_bind_int64(st, 2, see_all ? 1 : 0);
	store_bind_text(st, 3, user_id);
	store_bind_text(st, 4, user_id);
	store_bind_text(st, 5, pattern);
	store_bind_int64(st, 6, (int64_t)limit);
	store_bind_int64(st, 7, (int64_t)offset);
	rc = store_collect(st, sizeof **out, read_row, (void **)out, n, e);
	free(pattern);
	return rc;
}

struct env_row {
	char id[UUID_STR_LEN];
	unsigned char *env;
	size_t len;
};

static int load_server_key_envelopes(struct store_conn *c, struct env_row **out, size_t *n, struct err *e)
{
	static const char SQL[] = "SELECT id, envelope FROM secrets WHERE encrypted_by = 'SERVER_KEY'";
	struct store_stmt *st = store_prepare(c, SQL, e);
	struct env_row *arr = NULL;
	size_t len = 0, cap = 0;
	int rc;

	if (!st)
		return -1;
	while ((rc = store_step(st, e)) == STORE_ROW) {
		const void *p;
		struct env_row *r;
		if (len == cap) {
			cap = cap ? cap * 2 : 64;
			r = realloc(arr, cap * sizeof *arr);
			if (!r) {
				rc = err_set(e, ERR_INTERNAL, "out of memory");
				break;
			}
			arr = r;
		}
		r = &arr[len];
		copy_col(r->id, sizeof r->id, st, 0);
		p = store_col_blob(st, 1, &r->len);
		r->env = malloc(r->len ? r->len : 1);
		if (!r->env) {
			rc = err_set(e, ERR_INTERNAL, "out of memory");
			break;
		}
		if (r->len)
			memcpy(r->env, p, r->len);
		len++;
		if ((rc = store_stmt_check(st, e)))
			break;
	}
	store_reset(st);
	*out = arr;
	*n = len;
	return rc < 0 ? rc : 0;
}

int store_secret_rewrite_envelopes(struct store_conn *c, store_secret_envelope_fn fn, void *ctx, size_t *n_changed,
				   struct err *e)
{
	struct env_row *rows = NULL;
	size_t n = 0;
	int rc;

	*n_changed = 0;
	if ((rc = store_tx_begin(c, e)))
		return rc;
	rc = load_server_key_envelopes(c, &rows, &n, e);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		bool changed = false;
		rc = fn(ctx, rows[i].env, rows[i].len, &changed, e);
		if (rc == 0 && changed) {
			rc = set_envelope(c, rows[i].id, rows[i].env, rows[i].len, e);
			(*n_changed)++;
		}
	}
	if (rc == 0)
		rc = store_tx_commit(c, e);
	if (rc) {
		store_tx_rollback(c);
		*n_changed = 0;
	}
	for (size_t i = 0; i < n; i++)
		free(rows[i].env);
	free(rows);
	return rc;
}
