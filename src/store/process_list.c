/* List and count of processes (store_process_list / store_process_count in processes.h).
 * The WHERE clause is assembled from constant fragments, one per filter that is set, and
 * interned (store_sql_intern) so that each combination is prepared once per connection.
 * Tag and meta filters are capped (PROCESS_FILTER_MAX_*), which bounds the combinations. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "store/processes.h"

/* The meta condition on the value of the meta row "@" (m or d below) for each operation;
 * the negated ones keep Concord's rule that a process without the key matches none of
 * them (the row, hence the key, must exist). */
static const char *const meta_cond[] = {
    [META_CONTAINS] = "instr(@.value, ?) > 0",
    [META_NOT_CONTAINS] = "NOT (instr(@.value, ?) > 0)",
    [META_EQ] = "@.value = ?",
    [META_NOT_EQ] = "@.value <> ?",
    [META_STARTS_WITH] = "substr(@.value, 1, length(?1x)) = ?1x",
    [META_NOT_STARTS_WITH] = "NOT (substr(@.value, 1, length(?1x)) = ?1x)",
    [META_ENDS_WITH] = "(length(@.value) >= length(?1x) AND substr(@.value, length(@.value) - length(?1x) + 1) = ?1x)",
    [META_NOT_ENDS_WITH] =
	"NOT (length(@.value) >= length(?1x) AND substr(@.value, length(@.value) - length(?1x) + 1) = ?1x)",
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

/* Which rows the query walks.  With a tag filter: process_tags d for the first tag
 * (process_tags_project_status with a project and a status, process_tags_project with a
 * project, else process_tags_tag), newest first, so a list stops after its page and a
 * count reads the index alone.  A count with a project and a meta filter walks process_meta_keys d
 * (process_meta_keys_project) for that key; so does a list with a meta equality (then in
 * created_at order).  Otherwise processes p.  d's project_id and created_at are the
 * process's own (schema 004); p is joined only when a filter needs its other columns. */
enum drive { DRIVE_PROCESSES, DRIVE_TAG, DRIVE_META };

struct plan {
	enum drive drive;
	size_t meta; /* DRIVE_META: which meta filter */
	bool join_p; /* d is joined with processes p (a filter on p's own columns) */
	const char *id; /* the expression of the process id: "p.instance_id" or "d.instance_id" */
	const char *alias; /* where project_id and created_at are read: "p" or "d" */
};

static void make_plan(const struct process_filter *f, bool count, struct plan *pl)
{
	size_t n_meta = f->n_meta < PROCESS_FILTER_MAX_META ? f->n_meta : PROCESS_FILTER_MAX_META;

	*pl = (struct plan){.drive = DRIVE_PROCESSES, .join_p = true, .id = "p.instance_id", .alias = "p"};
	/* With a tag, its rows carry project, status and created_at (schema 010), so the walk
	 * stays inside process_tags_project_status / process_tags_project, in order. */
	if (f->n_tags) {
		pl->drive = DRIVE_TAG;
	} else if (f->project_id && n_meta) {
		for (size_t i = 0; i < n_meta && pl->drive == DRIVE_PROCESSES; i++)
			if (f->meta[i].op == META_EQ)
				pl->drive = DRIVE_META, pl->meta = i;
		if (count && pl->drive == DRIVE_PROCESSES)
			pl->drive = DRIVE_META, pl->meta = 0;
	}
	if (pl->drive != DRIVE_PROCESSES) {
		pl->id = "d.instance_id";
		pl->alias = "d";
		pl->join_p = f->org_id || (f->status >= 0 && pl->drive != DRIVE_TAG) || f->initiator_prefix ||
			     f->parent_instance_id || f->entry_point || f->min_runtime_ms || f->restrict_to_visible;
	}
}

/* The FROM clause.  CROSS JOIN makes SQLite keep d as the outer loop (PostgreSQL plans it
 * as an inner join); p is then read by its primary key. */
static int from(struct buf *sql, const struct plan *pl, struct err *e)
{
	static const char *const table[] = {
	    [DRIVE_PROCESSES] = " FROM processes p",
	    [DRIVE_TAG] = " FROM process_tags d",
	    [DRIVE_META] = " FROM process_meta_keys d",
	};
	int rc = buf_append_str(sql, table[pl->drive], e);

	if (rc == 0 && pl->drive != DRIVE_PROCESSES && pl->join_p)
		rc = buf_append_str(sql, " CROSS JOIN processes p", e);
	return rc;
}

/* Appends text, with "@" replaced by alias; with a value, each "?" or "?1x" becomes "?" with
 * the value bound to it (without one, the caller binds the placeholders). */
static int append_cond(struct buf *sql, const char *cond, const char *alias, const char *value, struct binds *b,
		       struct err *e)
{
	int rc = 0;

	for (const char *p = cond; *p && rc == 0; p++) {
		if (*p == '@') {
			rc = buf_append_str(sql, alias, e);
		} else if (p[0] == '?' && p[1] == '1' && p[2] == 'x') {
			rc = buf_append_char(sql, '?', e);
			if (value)
				add_text(b, value);
			p += 2;
		} else {
			if (*p == '?' && value)
				add_text(b, value);
			rc = buf_append_char(sql, *p, e);
		}
	}
	return rc;
}

/* The successor of a prefix in byte order: the least string greater than every string
 * that starts with it (the prefix with its last byte plus one).  Only for a last byte
 * below 0x7F, so that the successor is valid UTF-8 as the prefix is (PostgreSQL refuses
 * other text); false otherwise (empty, or a last byte from 0x7F: the caller tests each row). */
static bool prefix_successor(const char *prefix, char *out, size_t size)
{
	size_t n = strlen(prefix);

	if (n == 0 || n >= size || (unsigned char)prefix[n - 1] >= 0x7F)
		return false;
	memcpy(out, prefix, n);
	out[n - 1] = (char)(out[n - 1] + 1);
	out[n] = '\0';
	return true;
}

static int where(struct buf *sql, const struct process_filter *f, const struct plan *pl, bool count, char *succ,
		 size_t succ_size, struct binds *b, struct err *e)
{
	int rc = buf_append_str(sql, " WHERE 1 = 1", e);
	size_t first_tag = pl->drive == DRIVE_TAG ? 1 : 0;

#define COND(text) (rc = rc ? rc : buf_append_str(sql, " AND " text, e))
#define COND_AT(text) (rc = rc ? rc : append_cond(sql, " AND " text, pl->alias, NULL, b, e))
	if (pl->drive == DRIVE_TAG)
		COND("d.tag = ?"), add_text(b, f->tags[0]);
	if (pl->drive == DRIVE_META) {
		COND("d.key = ? AND "), add_text(b, f->meta[pl->meta].key);
		rc = rc ? rc : append_cond(sql, meta_cond[f->meta[pl->meta].op], "d", f->meta[pl->meta].value, b, e);
	}
	if (pl->drive != DRIVE_PROCESSES && pl->join_p)
		COND("p.instance_id = d.instance_id");
	if (f->org_id)
		COND("p.org_id = ?"), add_text(b, f->org_id);
	if (f->project_id)
		COND_AT("@.project_id = ?"), add_text(b, f->project_id);
	if (f->after_created)
		COND_AT("@.created_at > ?"), add_num(b, f->after_created);
	if (f->before_created)
		COND_AT("@.created_at < ?"), add_num(b, f->before_created);
	if (f->status >= 0 && pl->drive == DRIVE_TAG)
		COND("d.status = ?"), add_text(b, proc_status_name((enum proc_status)f->status));
	else if (f->status >= 0)
		COND("p.status = ?"), add_text(b, proc_status_name((enum proc_status)f->status));
	/* A count scans the prefix's range of processes_project_initiator (initiator is
	 * compared in byte order: SQLite's BINARY, PostgreSQL's COLLATE "C" of the column in
	 * schema/004_processes.pg.sql).  A list keeps walking the project newest first and tests each row,
	 * which stops after a page. */
	if (f->initiator_prefix && count && pl->drive == DRIVE_PROCESSES && f->project_id &&
	    prefix_successor(f->initiator_prefix, succ, succ_size))
		COND("p.initiator >= ? AND p.initiator < ?"), add_text(b, f->initiator_prefix), add_text(b, succ);
	else if (f->initiator_prefix)
		COND("substr(p.initiator, 1, length(?)) = ?"), add_text(b, f->initiator_prefix),
		    add_text(b, f->initiator_prefix);
	if (f->parent_instance_id)
		COND("p.parent_instance_id = ?"), add_text(b, f->parent_instance_id);
	if (f->entry_point)
		COND("p.entry_point = ?"), add_text(b, f->entry_point);
	if (f->min_runtime_ms)
		COND("p.total_runtime_ms >= ?"), add_num(b, f->min_runtime_ms);
	for (size_t i = first_tag; i < f->n_tags && i < PROCESS_FILTER_MAX_TAGS; i++) {
		COND("EXISTS (SELECT 1 FROM process_tags t WHERE t.instance_id = ");
		rc = rc ? rc : buf_append_str(sql, pl->id, e);
		rc = rc ? rc : buf_append_str(sql, " AND t.tag = ?)", e);
		add_text(b, f->tags[i]);
	}
	for (size_t i = 0; i < f->n_meta && i < PROCESS_FILTER_MAX_META; i++) {
		if (pl->drive == DRIVE_META && i == pl->meta)
			continue;
		COND("EXISTS (SELECT 1 FROM process_meta_keys m WHERE m.instance_id = ");
		rc = rc ? rc : buf_append_str(sql, pl->id, e);
		rc = rc ? rc : buf_append_str(sql, " AND m.key = ? AND ", e);
		add_text(b, f->meta[i].key);
		rc = rc ? rc : append_cond(sql, meta_cond[f->meta[i].op], "m", f->meta[i].value, b, e);
		rc = rc ? rc : buf_append_char(sql, ')', e);
	}
	/* "|| ''" keeps SQLite from answering the OR with processes_project and sorting every
	 * visible row; it walks processes_created newest first instead (bench/processes/fill). */
	if (f->restrict_to_visible && f->visible_user_id && f->visible_user_project_id)
		COND("((p.initiator_id = ? AND p.project_id = ?) OR p.project_id || '' IN (SELECT value FROM "
		     "json_each(?)))"),
		    add_text(b, f->visible_user_id), add_text(b, f->visible_user_project_id);
	else if (f->restrict_to_visible && f->visible_user_id)
		COND("(p.initiator_id = ? OR p.project_id || '' IN (SELECT value FROM json_each(?)))"),
		    add_text(b, f->visible_user_id);
	else if (f->restrict_to_visible)
		COND("p.project_id || '' IN (SELECT value FROM json_each(?))");
	if (f->restrict_to_visible)
		add_text(b, f->visible_projects_json ? f->visible_projects_json : "[]");
#undef COND
#undef COND_AT
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
	store_col_copy(st, 0, id, UUID_STR_LEN);
}

int store_process_list(struct store_conn *c, const struct process_filter *f, size_t limit, size_t offset,
		       struct process **out, size_t *n, struct err *e)
{
	struct buf sql;
	struct binds b = {.n = 0};
	struct plan pl;
	char succ[1024];
	struct store_stmt *st;
	char(*ids)[UUID_STR_LEN] = NULL;
	size_t n_ids = 0, i;
	int rc = -1;

	*out = NULL;
	*n = 0;
	buf_init(&sql, 16384);
	make_plan(f, false, &pl);
	if (buf_append_str(&sql, "SELECT ", e) || buf_append_str(&sql, pl.id, e) || from(&sql, &pl, e) ||
	    where(&sql, f, &pl, false, succ, sizeof succ, &b, e) ||
	    append_cond(&sql, " ORDER BY @.created_at DESC, @.instance_id DESC LIMIT ? OFFSET ?", pl.alias, NULL, &b, e))
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
			json_object_del((*out)[(*n)++].meta, "out"); /* read one at a time: never all at once */
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
	struct plan pl;
	char succ[1024];
	struct store_stmt *st;
	int rc = -1;

	*count = 0;
	buf_init(&sql, 16384);
	make_plan(f, true, &pl);
	if (buf_append_str(&sql, "SELECT count(*)", e) || from(&sql, &pl, e) ||
	    where(&sql, f, &pl, true, succ, sizeof succ, &b, e) || !(st = prepare(c, &sql, &b, e)))
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
