/* List and count of processes (store_process_list / store_process_count in processes.h).
 * The WHERE clause is assembled from constant fragments, one per filter that is set, and
 * interned (store_sql_intern) so that each combination is prepared once per connection.
 * Tag and meta filters are capped (PROCESS_FILTER_MAX_*), which bounds the combinations. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "store/processes.h"

/* The meta condition on m.value for each operation; the negated ones keep Concord's rule
 * that a process without the key matches none of them. */
static const char *const meta_cond[] = {
    [META_CONTAINS] = "instr(m.value, ?) > 0",
    [META_NOT_CONTAINS] = "NOT (instr(m.value, ?) > 0)",
    [META_EQ] = "m.value = ?",
    [META_NOT_EQ] = "m.value <> ?",
    [META_STARTS_WITH] = "substr(m.value, 1, length(?1x)) = ?1x",
    [META_NOT_STARTS_WITH] = "NOT (substr(m.value, 1, length(?1x)) = ?1x)",
    [META_ENDS_WITH] = "(length(m.value) >= length(?1x) AND substr(m.value, length(m.value) - length(?1x) + 1) = ?1x)",
    [META_NOT_ENDS_WITH] =
	"NOT (length(m.value) >= length(?1x) AND substr(m.value, length(m.value) - length(?1x) + 1) = ?1x)",
};

/* Bind values in order; a condition that uses its value twice says so with ?1x above and
 * gets it bound twice. */
struct binds {
	const char *text[64];
	int64_t num[64];
	bool is_num[64];
	int n;
};

static void add_text(struct binds *b, const char *v)
{
	b->is_num[b->n] = false;
	b->text[b->n++] = v;
}

static void add_num(struct binds *b, int64_t v)
{
	b->is_num[b->n] = true;
	b->num[b->n++] = v;
}

static int where(struct buf *sql, const struct process_filter *f, struct binds *b, struct err *e)
{
	int rc = buf_append_str(sql, " WHERE 1 = 1", e);

#define COND(text) (rc = rc ? rc : buf_append_str(sql, " AND " text, e))
	if (f->org_id)
		COND("p.org_id = ?"), add_text(b, f->org_id);
	if (f->project_id)
		COND("p.project_id = ?"), add_text(b, f->project_id);
	if (f->after_created)
		COND("p.created_at > ?"), add_num(b, f->after_created);
	if (f->before_created)
		COND("p.created_at < ?"), add_num(b, f->before_created);
	if (f->status >= 0)
		COND("p.status = ?"), add_text(b, proc_status_name((enum proc_status)f->status));
	if (f->initiator_prefix)
		COND("substr(p.initiator, 1, length(?)) = ?"), add_text(b, f->initiator_prefix),
		    add_text(b, f->initiator_prefix);
	if (f->parent_instance_id)
		COND("p.parent_instance_id = ?"), add_text(b, f->parent_instance_id);
	for (size_t i = 0; i < f->n_tags && i < PROCESS_FILTER_MAX_TAGS; i++)
		COND("EXISTS (SELECT 1 FROM process_tags t WHERE t.instance_id = p.instance_id AND t.tag = ?)"),
		    add_text(b, f->tags[i]);
	for (size_t i = 0; i < f->n_meta && i < PROCESS_FILTER_MAX_META; i++) {
		const char *cond = meta_cond[f->meta[i].op];
		COND("EXISTS (SELECT 1 FROM process_meta_keys m WHERE m.instance_id = p.instance_id AND m.key = ? AND ");
		add_text(b, f->meta[i].key);
		if (strstr(cond, "?1x")) {
			/* "?1x" marks the two uses of one value: written as two plain placeholders. */
			for (const char *p = cond; *p && rc == 0; p++) {
				if (p[0] == '?' && p[1] == '1' && p[2] == 'x') {
					rc = buf_append_char(sql, '?', e);
					add_text(b, f->meta[i].value);
					p += 2;
				} else {
					rc = buf_append_char(sql, *p, e);
				}
			}
		} else {
			rc = rc ? rc : buf_append_str(sql, cond, e);
			add_text(b, f->meta[i].value);
		}
		rc = rc ? rc : buf_append_char(sql, ')', e);
	}
	/* "|| ''" keeps SQLite from answering the OR with processes_project and sorting every
	 * visible row; it walks processes_created newest first instead (bench/processes/fill). */
	if (f->restrict_to_visible)
		COND("(p.initiator_id = ? OR p.project_id || '' IN (SELECT value FROM json_each(?)))"),
		    add_text(b, f->visible_user_id), add_text(b, f->visible_projects_json ? f->visible_projects_json : "[]");
#undef COND
	return rc;
}

static struct store_stmt *prepare(struct store_conn *c, struct buf *sql, const struct binds *b, struct err *e)
{
	const char *text = store_sql_intern(sql->data, e);
	struct store_stmt *st;

	if (!text || !(st = store_prepare(c, text, e)))
		return NULL;
	for (int i = 0; i < b->n; i++) {
		if (b->is_num[i])
			store_bind_int64(st, i + 1, b->num[i]);
		else
			store_bind_text(st, i + 1, b->text[i]);
	}
	return st;
}

/* The list selects ids only and reads each process by its primary key: a page is at most
 * limits.list_max rows, and processes.c keeps the one row reader. */
static void read_id(struct store_stmt *st, void *out)
{
	char *id = out;
	snprintf(id, UUID_STR_LEN, "%s", store_col_text(st, 0) ? store_col_text(st, 0) : "");
}

int store_process_list(struct store_conn *c, const struct process_filter *f, size_t limit, size_t offset,
		       struct process **out, size_t *n, struct err *e)
{
	struct buf sql;
	struct binds b = {.n = 0};
	struct store_stmt *st;
	char(*ids)[UUID_STR_LEN] = NULL;
	size_t n_ids = 0, i;
	int rc = -1;

	*out = NULL;
	*n = 0;
	buf_init(&sql, 16384);
	if (buf_append_str(&sql, "SELECT p.instance_id FROM processes p", e) || where(&sql, f, &b, e) ||
	    buf_append_str(&sql, " ORDER BY p.created_at DESC, p.instance_id DESC LIMIT ? OFFSET ?", e))
		goto out;
	add_num(&b, (int64_t)limit);
	add_num(&b, (int64_t)offset);
	if (!(st = prepare(c, &sql, &b, e)) || store_collect(st, UUID_STR_LEN, read_id, (void **)&ids, &n_ids, e))
		goto out;
	if (n_ids && !(*out = calloc(n_ids, sizeof **out))) {
		rc = err_set(e, ERR_INTERNAL, "out of memory");
		goto out;
	}
	for (i = 0; i < n_ids; i++) {
		if (store_process_get(c, ids[i], &(*out)[*n], e) == 0)
			(*n)++;
		else if (e->code != ERR_NOT_FOUND) /* deleted meanwhile: skip it */
			goto out;
	}
	rc = 0;
out:
	if (rc) {
		store_process_list_free(*out, *n);
		*out = NULL;
		*n = 0;
	}
	free(ids);
	buf_cleanup(&sql);
	return rc;
}

void store_process_list_free(struct process *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		store_process_cleanup(&list[i]);
	free(list);
}

int store_process_count(struct store_conn *c, const struct process_filter *f, int64_t *count, struct err *e)
{
	struct buf sql;
	struct binds b = {.n = 0};
	struct store_stmt *st;
	int rc = -1;

	*count = 0;
	buf_init(&sql, 16384);
	if (buf_append_str(&sql, "SELECT count(*) FROM processes p", e) || where(&sql, f, &b, e) ||
	    !(st = prepare(c, &sql, &b, e)))
		goto out;
	rc = store_step(st, e);
	if (rc == STORE_ROW)
		*count = store_col_int64(st, 0);
	store_reset(st);
	rc = rc < 0 ? rc : 0;
out:
	buf_cleanup(&sql);
	return rc;
}
