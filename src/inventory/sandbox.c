#include "inventory/sandbox.h"

#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/buf.h"
#include "base/i64_list.h"
#include "base/jsonx.h"
#include "base/rand.h"
#include "base/str.h"
#include "inventory/cand_table.h"
#include "inventory/dialect.h"
#include "inventory/json.h"
#include "inventory/json_canon.h"
#include "inventory/narrow.h"
#include "store/inventory_keys.h"
#include "store/sqlite_api.h"
#include "store/sqlite_mem.h"

#define ITEMS_TABLE "inventory_items"
#define INV_MMAP_BYTES "1073741824"

struct run;

/* Prepared statements kept by a thread's connection (struct conn's stmts). */
#define STMT_CACHE 8

/* A thread's sandbox connection, kept for the thread's next run on the same database file
 * (opening one and reading the schema cost more than a selective query). */
struct conn {
	sqlite3 *db;
	struct inv_narrow *narrow; /* the postings' reads */
	char view_all[24], view_key[24];
	struct run *cur; /* the run using it; NULL between runs (the views are then empty) */
	/* The sandbox's own statements (the postings' reads) are being prepared or run: the
	 * authorizer lets them be.  False whenever a query's statement is prepared or runs. */
	bool own;
	/* The queries' prepared statements, by query text and view (stmt_cache_*): a saved
	 * query run again skips its translation and SQLite's parse (~20% of a one-item count's
	 * server CPU); each was checked by the authorizer when prepared, for its text. */
	struct cached_stmt {
		char *text; /* the query's text (NULL: a free slot) */
		size_t len;
		bool narrowed; /* it reads the candidates' view */
		unsigned n_params;
		sqlite3_stmt *st;
		uint64_t used; /* the conn's tick of its last run, for eviction */
	} stmts[STMT_CACHE];
	uint64_t tick;
	char path[]; /* the database file */
};

static __thread struct conn *tl_conn;
static pthread_key_t conn_key;
static pthread_once_t conn_once = PTHREAD_ONCE_INIT;

struct run {
	const struct inv_query *q; /* compiled */
	const struct inv_run *in;  /* whose rows, the filter, the limits */
	sqlite3 *db;
	char view_all[24], view_key[24];
	struct inv_narrow *narrow;
	struct i64_list cands; /* the items the filter's postings leave, ascending */
	bool narrowed;	      /* cands holds them: the query reads view_key */
	struct timespec deadline;
	bool timed_out;
	struct sqlite_mem_budget mem; /* this run's SQLite allocations (store/sqlite_mem.h) */
	char denied[128];	      /* what the authorizer refused last, for the error message */
};

/* The run of the connection a function was called on (NULL between runs: NULL results). */
static const struct run *run_of(sqlite3_context *ctx)
{
	const struct conn *c = sqlite.user_data(ctx);
	return c->cur;
}

static void fn_scope(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const struct run *r = run_of(ctx);
	(void)argc;
	(void)argv;
	if (r)
		sqlite.result_int64(ctx, r->in->inventory);
}

static void fn_uuid(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const struct run *r = run_of(ctx);
	(void)argc;
	(void)argv;
	if (r)
		sqlite.result_text(ctx, r->in->inventory_id ? r->in->inventory_id : "", -1, SQLITE_STATIC);
}

/* The rows of accord_inv_cands: the current run's candidates (none between runs). */
static const struct i64_list *cands_of(void *ctx)
{
	const struct conn *c = ctx;
	return c->cur && c->cur->narrowed ? &c->cur->cands : NULL;
}

static int db_fail(struct run *r, struct err *e, const char *what)
{
	return err_set(e, ERR_INTERNAL, "inventory query: %s: %s", what, sqlite.errmsg(r->db));
}

static int exec_sql(struct run *r, const char *sql, struct err *e)
{
	if (sqlite.exec(r->db, sql, NULL, NULL, NULL) != SQLITE_OK)
		return db_fail(r, e, "setting up the connection");
	return 0;
}

static int configure(struct run *r, struct err *e)
{
	static const struct {
		int id, value;
	} lims[] = {
	    {SQLITE_LIMIT_LENGTH, INV_QUERY_VALUE_BYTES},
	    {SQLITE_LIMIT_EXPR_DEPTH, 200},
	    {SQLITE_LIMIT_COMPOUND_SELECT, 50},
	    {SQLITE_LIMIT_VDBE_OP, 250000},
	    {SQLITE_LIMIT_FUNCTION_ARG, 100},
	    {SQLITE_LIMIT_ATTACHED, 0},
	    {SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 1000},
	    {SQLITE_LIMIT_VARIABLE_NUMBER, 4},
	    {SQLITE_LIMIT_TRIGGER_DEPTH, 1},
	    {SQLITE_LIMIT_WORKER_THREADS, 0},
	};
	static const int off[] = {SQLITE_DBCONFIG_DQS_DML, SQLITE_DBCONFIG_DQS_DDL, SQLITE_DBCONFIG_TRUSTED_SCHEMA,
				  SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, SQLITE_DBCONFIG_ENABLE_TRIGGER};

	for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++)
		if (sqlite.db_config(r->db, off[i], 0, (int *)NULL) != SQLITE_OK)
			return db_fail(r, e, "configuring the connection");
	if (sqlite.db_config(r->db, SQLITE_DBCONFIG_DEFENSIVE, 1, (int *)NULL) != SQLITE_OK)
		return db_fail(r, e, "configuring the connection");
	for (size_t i = 0; i < sizeof(lims) / sizeof(lims[0]); i++)
		sqlite.limit(r->db, lims[i].id, lims[i].value);
	sqlite.busy_timeout(r->db, 2000);
	/* read-only: the items a filter selects are read through a mapping of the file, not
	 * copied into the page cache one pread at a time (the store's own connections map nothing) */
	return exec_sql(
	    r, "PRAGMA case_sensitive_like = ON; PRAGMA temp_store = MEMORY; PRAGMA mmap_size = " INV_MMAP_BYTES, e);
}

static int register_scope(struct run *r, struct conn *c, struct err *e)
{
	static const struct {
		const char *name;
		void (*fn)(sqlite3_context *, int, sqlite3_value **);
	} fns[] = {{"accord_inv_scope", fn_scope}, {"accord_inv_uuid", fn_uuid}};

	if (inv_json_register(r->db, e) || inv_cand_table_register(r->db, cands_of, c, e))
		return -1;
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		if (sqlite.create_function_v2(r->db, fns[i].name, 0, SQLITE_UTF8 | SQLITE_INNOCUOUS, c, fns[i].fn, NULL,
					      NULL, NULL) != SQLITE_OK)
			return db_fail(r, e, "registering functions");
	return 0;
}

/* The views under fresh random names (hex, so they need no quoting): all the inventory's
 * items; the run's candidates (CROSS JOIN keeps SQLite's nesting order: the ids outside, in
 * ascending order, each item's b-tree step inside). */
static int create_views(struct run *r, struct err *e)
{
	unsigned char rnd[8];
	char sql[1536];

	rand_bytes(rnd, sizeof(rnd));
	if (str_fmt(r->view_all, sizeof(r->view_all), "inv_%02x%02x%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2],
		    rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]) ||
	    str_fmt(r->view_key, sizeof(r->view_key), "%.20s_k", r->view_all)) /* "inv_" + 16 hex digits */
		return err_set(e, ERR_INTERNAL, "inventory query: view name too long");
	if (str_fmt(sql, sizeof(sql),
		    "CREATE TEMP VIEW %s AS SELECT accord_inv_uuid() AS inventory_id, item_path, item_data "
		    "FROM main." ITEMS_TABLE " WHERE inventory = accord_inv_scope();"
		    "CREATE TEMP VIEW %s AS SELECT accord_inv_uuid() AS inventory_id, i.item_path, i.item_data "
		    "FROM main." INV_CAND_TABLE " AS c CROSS JOIN main." ITEMS_TABLE " AS i ON i.id = c.id "
		    "WHERE i.inventory = accord_inv_scope();"
		    /* instantiate the eponymous tables before the authorizer is in place */
		    "SELECT count(*) FROM json_each('[]');"
		    "SELECT count(*) FROM main." INV_CAND_TABLE,
		    r->view_all, r->view_key))
		return err_set(e, ERR_INTERNAL, "inventory query: the views' SQL is over %zu bytes", sizeof(sql) - 1);
	return exec_sql(r, sql, e);
}

static bool is_view(const struct run *r, const char *name)
{
	return name && (strcmp(name, r->view_all) == 0 || strcmp(name, r->view_key) == 0);
}

static bool allowed_function(const char *name)
{
	static const char *const ok[] = {"abs",
					 "avg",
					 "coalesce",
					 "count",
					 "group_concat",
					 "ifnull",
					 "iif",
					 "instr",
					 "length",
					 "like",
					 "glob",
					 "lower",
					 "upper",
					 "ltrim",
					 "rtrim",
					 "trim",
					 "max",
					 "min",
					 "nullif",
					 "replace",
					 "round",
					 "substr",
					 "substring",
					 "sum",
					 "total",
					 "typeof",
					 "unicode",
					 "char",
					 "date",
					 "time",
					 "datetime",
					 "julianday",
					 "strftime",
					 "unixepoch",
					 "current_date",
					 "current_time",
					 "current_timestamp",
					 "likely",
					 "unlikely",
					 "likelihood",
					 "json",
					 "json_array",
					 "json_array_length",
					 "json_extract",
					 "json_object",
					 "json_patch",
					 "json_quote",
					 "json_remove",
					 "json_set",
					 "json_insert",
					 "json_replace",
					 "json_type",
					 "json_valid",
					 "json_group_array",
					 "json_group_object",
					 "->",
					 "->>",
					 "json_contains",
					 "accord_pg_text",
					 "accord_pg_bool",
					 "accord_json_bool",
					 "accord_json_value",
					 "accord_jsonb_typeof",
					 "accord_inv_scope",
					 "accord_inv_uuid"};

	if (!name)
		return false;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		if (strcasecmp(name, ok[i]) == 0)
			return true;
	return false;
}

static int deny(struct run *r, const char *what, const char *name)
{
	str_fmt_cut(r->denied, sizeof(r->denied), "%s%s%.60s%s", what, name ? " '" : "", name ? name : "",
		    name ? "'" : "");
	return SQLITE_DENY;
}

static int authorize(void *ud, int action, const char *a1, const char *a2, const char *db, const char *src)
{
	struct run *r = ud;

	switch (action) {
	case SQLITE_SELECT:
	case SQLITE_RECURSIVE:
		return SQLITE_OK;
	case SQLITE_READ:
		if (!a1)
			return deny(r, "reading", NULL);
		if (!db) /* a WITH query's own rows: only real tables belong to a schema */
			return SQLITE_OK;
		if (strcmp(db, "temp") == 0 && is_view(r, a1))
			return SQLITE_OK;
		if (strcmp(db, "main") == 0 && is_view(r, src) &&
		    (strcmp(a1, ITEMS_TABLE) == 0 || strcmp(a1, INV_CAND_TABLE) == 0))
			return SQLITE_OK;
		if (strcmp(db, "main") == 0 && strcmp(a1, "json_each") == 0)
			return SQLITE_OK;
		return deny(r, "reading table", is_view(r, a1) ? "inventory_data" : a1);
	case SQLITE_FUNCTION:
		return allowed_function(a2) ? SQLITE_OK : deny(r, "function", a2);
	case SQLITE_PRAGMA:
		return deny(r, "PRAGMA", a1);
	case SQLITE_ATTACH:
		return deny(r, "ATTACH", NULL);
	default:
		return deny(r, "statements other than SELECT", NULL);
	}
}

/* The connection's authorizer, set once when it is opened: setting or clearing one expires
 * every statement of the connection, and the postings' cached reads were prepared again at
 * every run (perf: ~7% of a one-item count's server CPU).  A query's statement is checked by
 * authorize() for the run using the connection; with no run nothing is allowed; the
 * sandbox's own statements (c->own) pass. */
static int authorize_conn(void *ud, int action, const char *a1, const char *a2, const char *db, const char *src)
{
	struct conn *c = ud;

	if (c->own)
		return SQLITE_OK;
	return c->cur ? authorize(c->cur, action, a1, a2, db, src) : SQLITE_DENY;
}

static long remaining_ms(const struct timespec *deadline)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long)(deadline->tv_sec - now.tv_sec) * 1000 + (deadline->tv_nsec - now.tv_nsec) / 1000000;
}

static int progress(void *ud)
{
	struct run *r = ud;

	if (r->in->timeout_ms && remaining_ms(&r->deadline) < 0) {
		r->timed_out = true;
		return 1;
	}
	return 0;
}

static void conn_free(struct conn *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < STMT_CACHE; i++) {
		sqlite.finalize(c->stmts[i].st);
		free(c->stmts[i].text);
	}
	inv_narrow_free(c->narrow);
	sqlite.close_v2(c->db);
	free(c);
}

static void conn_at_thread_exit(void *c)
{
	conn_free(c);
}

static void conn_key_make(void)
{
	if (pthread_key_create(&conn_key, conn_at_thread_exit) != 0)
		abort(); /* only when the process is out of keys: nothing works then */
}

/* Opens and sets up the thread's connection for path (r->db is it while it is built). */
static int conn_open(struct run *r, const char *path, struct err *e)
{
	size_t n = strlen(path) + 1;
	struct conn *c = calloc(1, sizeof(*c) + n);
	int rc = -1;

	if (!c)
		return err_set(e, ERR_INTERNAL, "out of memory");
	memcpy(c->path, path, n);
	if (sqlite.open_v2(path, &r->db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
		rc = db_fail(r, e, "opening the database");
	else if (configure(r, e) == 0 && register_scope(r, c, e) == 0 && create_views(r, e) == 0 &&
		 exec_sql(r, "PRAGMA query_only = ON", e) == 0)
		rc = (c->narrow = inv_narrow_new(r->db, e)) ? 0 : -1;
	c->db = r->db;
	if (rc == 0 && sqlite.set_authorizer(c->db, authorize_conn, c) != SQLITE_OK)
		rc = db_fail(r, e, "setting the authorizer");
	if (rc) {
		r->db = NULL;
		conn_free(c);
		return -1;
	}
	memcpy(c->view_all, r->view_all, sizeof(c->view_all));
	memcpy(c->view_key, r->view_key, sizeof(c->view_key));
	tl_conn = c;
	pthread_setspecific(conn_key, c);
	return 0;
}

/* Gives r the thread's connection to path, opened when the thread has none for it. */
static int open_db(struct run *r, const char *path, struct err *e)
{
	struct conn *c;

	pthread_once(&conn_once, conn_key_make);
	if (tl_conn && strcmp(tl_conn->path, path) != 0) {
		conn_free(tl_conn);
		tl_conn = NULL;
		pthread_setspecific(conn_key, NULL);
	}
	if (!tl_conn && conn_open(r, path, e))
		return -1;
	c = tl_conn;
	r->db = c->db;
	r->narrow = c->narrow;
	memcpy(r->view_all, c->view_all, sizeof(r->view_all));
	memcpy(r->view_key, c->view_key, sizeof(r->view_key));
	c->cur = r;
	return 0;
}

/* Leaves the thread's connection as the next run needs it, or closes it after a failed run
 * (whatever state a refused allocation or an interrupted statement left). */
static void run_cleanup(struct run *r, bool keep)
{
	struct conn *c = tl_conn;

	if (!r->db || !c)
		return;
	sqlite.progress_handler(c->db, 0, NULL, NULL);
	c->own = false;
	c->cur = NULL;
	if (!keep) {
		conn_free(c);
		tl_conn = NULL;
		pthread_setspecific(conn_key, NULL);
	}
}

/* ---- the postings: the items that can contain the filter ---- */

/* A key worth reading: not an object or array that holds keys of its own (they imply it and are rarer). */
static int add_filter_key(void *ctx, const struct inv_key *k, struct err *e)
{
	struct i64_list *hashes = ctx; /* in the filter's order, each once */
	int64_t h;

	if ((k->kind == INV_KEY_OBJECT || k->kind == INV_KEY_ARRAY) && !k->empty)
		return 0;
	h = inv_key_hash(k);
	for (size_t i = 0; i < hashes->n; i++)
		if (hashes->v[i] == h)
			return 0;
	return i64_list_push(hashes, h, e);
}

/* Narrows the run to the items whose postings hold every key of the filter (narrow.h). */
static int narrow(struct run *r, struct err *e)
{
	json_t *filter = json_loadb(r->in->filter, r->in->filter_len, JSON_DECODE_ANY, NULL);
	struct i64_list hashes = {0};
	int rc;

	if (!json_is_object(filter)) {
		json_decref(filter);
		return 0; /* the query reports a bad filter itself */
	}
	rc = inv_keys_each(filter, add_filter_key, &hashes, e);
	if (rc == 0 && hashes.n > 0) { /* without keys ({}) every item is read, in today's order */
		tl_conn->own = true;
		rc = inv_narrow_ids(r->narrow, r->in->inventory, hashes.v, hashes.n, &r->cands, e);
		tl_conn->own = false;
		r->narrowed = rc == 0;
	}
	i64_list_cleanup(&hashes);
	json_decref(filter);
	return rc;
}

/* ---- running ---- */

/* Writes msg with the view names replaced by inventory_data. */
static void set_db_error(struct run *r, const char *prefix, const char *msg, struct err *e)
{
	char out[ERR_MSG_MAX];
	size_t n = 0;

	while (*msg && n + 1 < sizeof(out)) {
		size_t vl = strlen(r->view_all);
		if (strncmp(msg, r->view_all, vl) == 0) {
			const char *rep = "inventory_data";
			msg += vl;
			if (strncmp(msg, "_k", 2) == 0)
				msg += 2;
			for (; *rep && n + 1 < sizeof(out); rep++)
				out[n++] = *rep;
			continue;
		}
		out[n++] = *msg++;
	}
	out[n] = '\0';
	err_set(e, ERR_INVALID, "%s: %s", prefix, out);
}

/* one_column: the statement is to run (a saved query may have more columns, `select *`,
 * as Concord saves it; running needs the one column of JSON values). */
static int prepare(struct run *r, const char *sql, bool one_column, sqlite3_stmt **st, struct err *e)
{
	const char *tail = NULL;

	if (sqlite.prepare_v3(r->db, sql, -1, 0, st, &tail) != SQLITE_OK) {
		if (sqlite.errcode(r->db) == SQLITE_AUTH && r->denied[0])
			return err_set(e, ERR_INVALID, "invalid query: not allowed: %s", r->denied);
		set_db_error(r, "invalid query", sqlite.errmsg(r->db), e);
		return -1;
	}
	while (tail && (*tail == ' ' || *tail == '\n' || *tail == '\t' || *tail == '\r'))
		tail++;
	if (!*st || (tail && *tail) || !sqlite.stmt_readonly(*st))
		return err_set(e, ERR_INVALID, "invalid query: only one read-only SELECT statement is allowed");
	if (one_column && sqlite.column_count(*st) != 1)
		return err_set(e, ERR_INVALID, INV_ONE_COLUMN_FMT, sqlite.column_count(*st));
	return 0;
}

static int row_value(sqlite3_stmt *st, size_t *bytes, json_t **out, struct err *e)
{
	const char *s;
	int n;

	switch (sqlite.column_type(st, 0)) {
	case SQLITE_NULL:
		*out = json_null();
		return 0;
	case SQLITE_INTEGER:
		*out = json_integer(sqlite.column_int64(st, 0));
		break;
	case SQLITE_FLOAT:
		*out = json_real(sqlite.column_double(st, 0));
		break;
	case SQLITE_TEXT:
		s = (const char *)sqlite.column_text(st, 0);
		n = sqlite.column_bytes(st, 0);
		*bytes += (size_t)n;
		if (*bytes > INV_QUERY_RESULT_BYTES)
			return err_set(e, ERR_INVALID, "query result is larger than %u bytes", INV_QUERY_RESULT_BYTES);
		*out = s ? json_loadb(s, (size_t)n, JSON_DECODE_ANY, NULL) : NULL;
		if (!*out)
			return err_set(e, ERR_INVALID, "Invalid JSON value: %.100s", s ? s : "");
		return 0;
	default:
		return err_set(e, ERR_INVALID, "Invalid JSON value: a binary value");
	}
	if (!*out)
		return err_set(e, ERR_INTERNAL, "out of memory");
	return 0;
}

/* Where a run's rows go: a JSON array (rows), or its text as jsonx_dump would print it
 * (text). */
struct rows_out {
	json_t *rows;
	struct buf *text;
	size_t n;
};

static int append_dump(struct buf *text, json_t *v, struct err *e)
{
	char *s = jsonx_dump(v);
	int rc = s ? buf_append_str(text, s, e) : err_set(e, ERR_INTERNAL, "out of memory");

	free(s);
	json_decref(v);
	return rc;
}

/* The row's value appended to out->text: a stored item's text as it is when jansson would
 * print it the same (json_canon.h), else parsed and printed, with row_value's checks. */
static int row_text(sqlite3_stmt *st, size_t *bytes, struct buf *text, struct err *e)
{
	json_t *v;

	if (sqlite.column_type(st, 0) == SQLITE_TEXT) {
		const char *s = (const char *)sqlite.column_text(st, 0);
		int n = sqlite.column_bytes(st, 0);
		if (s && inv_json_canonical(s, (size_t)n)) {
			*bytes += (size_t)n;
			if (*bytes > INV_QUERY_RESULT_BYTES)
				return err_set(e, ERR_INVALID, "query result is larger than %u bytes",
					       INV_QUERY_RESULT_BYTES);
			return buf_append(text, s, (size_t)n, e);
		}
	}
	return row_value(st, bytes, &v, e) ? -1 : append_dump(text, v, e);
}

static int add_row(sqlite3_stmt *st, size_t *bytes, struct rows_out *out, struct err *e)
{
	json_t *v;

	if (out->text)
		return (out->n > 0 && buf_append_char(out->text, ',', e)) || row_text(st, bytes, out->text, e) ? -1 : 0;
	if (row_value(st, bytes, &v, e))
		return -1;
	if (json_array_append_new(out->rows, v))
		return err_set(e, ERR_INTERNAL, "out of memory");
	return 0;
}

static int step_all(struct run *r, sqlite3_stmt *st, struct rows_out *out, struct err *e)
{
	size_t bytes = 0;
	int rc;

	while ((rc = sqlite.step(st)) == SQLITE_ROW) {
		if (r->in->max_rows && out->n >= r->in->max_rows)
			return err_set(e, ERR_INVALID, "query returned more than %zu rows (limit query_rows)",
				       r->in->max_rows);
		if (add_row(st, &bytes, out, e))
			return -1;
		out->n++;
	}
	if (rc == SQLITE_DONE)
		return 0;
	if (r->timed_out)
		return err_set(e, ERR_INVALID, "query stopped after %u ms (limit query_timeout_ms)", r->in->timeout_ms);
	set_db_error(r, "query failed", sqlite.errmsg(r->db), e);
	return -1;
}

static void start_clock(struct run *r)
{
	unsigned ms = r->in->timeout_ms;

	clock_gettime(CLOCK_MONOTONIC, &r->deadline);
	r->deadline.tv_sec += ms / 1000;
	r->deadline.tv_nsec += (long)(ms % 1000) * 1000000;
	if (r->deadline.tv_nsec >= 1000000000) {
		r->deadline.tv_sec++;
		r->deadline.tv_nsec -= 1000000000;
	}
	sqlite.progress_handler(r->db, 1000, progress, r);
}

/* The view the query reads: the candidates when the postings narrowed the filter, else all
 * the inventory's items. */
static const char *view_of(const struct run *r)
{
	return r->narrowed ? r->view_key : r->view_all;
}

/* The statement kept for r's query on the thread's connection, or NULL. */
static struct cached_stmt *stmt_cache_find(struct conn *c, const struct run *r)
{
	for (size_t i = 0; i < STMT_CACHE; i++) {
		struct cached_stmt *x = &c->stmts[i];
		if (x->text && x->narrowed == r->narrowed && x->len == r->q->text_len &&
		    memcmp(x->text, r->q->text, x->len) == 0)
			return x;
	}
	return NULL;
}

/* Keeps st for r's query in the least recently used slot (finalizing what was there);
 * NULL when out of memory (the caller then finalizes st itself). */
static struct cached_stmt *stmt_cache_put(struct conn *c, const struct run *r, sqlite3_stmt *st, unsigned n_params)
{
	struct cached_stmt *x = &c->stmts[0];
	char *text = malloc(r->q->text_len + 1);

	if (!text)
		return NULL;
	memcpy(text, r->q->text, r->q->text_len);
	text[r->q->text_len] = '\0';
	for (size_t i = 1; i < STMT_CACHE && x->text; i++)
		if (!c->stmts[i].text || c->stmts[i].used < x->used)
			x = &c->stmts[i];
	sqlite.finalize(x->st);
	free(x->text);
	*x = (struct cached_stmt){
	    .text = text, .len = r->q->text_len, .narrowed = r->narrowed, .n_params = n_params, .st = st};
	return x;
}

static int execute(struct run *r, struct rows_out *rows, struct err *e)
{
	const struct inv_run *in = r->in;
	struct inv_translation t = {0};
	struct conn *c = tl_conn;
	struct cached_stmt *kept;
	sqlite3_stmt *st = NULL;
	unsigned n_params;
	int rc = -1;

	if (r->q->n_params > 0 && !in->filter)
		return err_set(e, ERR_INVALID, "the query has a ? placeholder: send a JSON object as the request body");
	if (r->q->prefilter && narrow(r, e))
		return -1;
	if ((kept = stmt_cache_find(c, r))) {
		st = kept->st;
		n_params = kept->n_params;
	} else if (inv_dialect_translate(r->q->text, r->q->text_len, view_of(r), &t, e) ||
		   prepare(r, t.sql, true, &st, e)) {
		goto out;
	} else {
		n_params = t.n_params;
		kept = stmt_cache_put(c, r, st, n_params);
	}
	if (kept)
		kept->used = ++c->tick;
	if (n_params > 0 && sqlite.bind_text(st, 1, in->filter, (int)in->filter_len, SQLITE_STATIC) != SQLITE_OK) {
		db_fail(r, e, "binding the filter");
		goto out;
	}
	start_clock(r);
	rc = step_all(r, st, rows, e);
out:
	if (kept) { /* ready for the next run; a failed run closes the connection and its statements */
		sqlite.reset(st);
		sqlite.clear_bindings(st);
	} else {
		sqlite.finalize(st);
	}
	inv_translation_cleanup(&t);
	return rc;
}

/* Starts a run: its memory budget is attached to this thread before the connection is
 * opened or taken up again, so that everything it allocates for the run is charged to it. */
static int run_begin(struct run *r, struct err *e)
{
	if (sqlite_mem_install(e))
		return -1;
	r->mem.limit = (int64_t)(r->in->max_memory ? r->in->max_memory : INV_QUERY_MEMORY_BYTES);
	sqlite_mem_attach(&r->mem);
	return 0;
}

/* Ends a run begun by run_begin: keeps the connection for the thread's next run, or closes
 * it (still charged to the run) after a failure; detaches the budget and, when the budget
 * refused an allocation, makes that the error. */
static int run_end(struct run *r, int rc, struct err *e)
{
	run_cleanup(r, rc == 0);
	i64_list_cleanup(&r->cands);
	sqlite_mem_detach();
	if (rc && r->mem.refused)
		return err_set(e, ERR_INVALID, "query stopped: it needed more than %lld bytes of memory",
			       (long long)r->mem.limit);
	return rc;
}

static int run_into(const char *db_path, const struct inv_query *q, const struct inv_run *in, struct rows_out *out,
		    struct err *e)
{
	struct run r = {.q = q, .in = in};
	int rc = -1;

	if (run_begin(&r, e))
		return -1;
	if (open_db(&r, db_path, e) == 0 && execute(&r, out, e) == 0)
		rc = 0;
	return run_end(&r, rc, e);
}

int inv_sandbox_run(const char *db_path, const struct inv_query *q, const struct inv_run *in, json_t **rows,
		    struct err *e)
{
	struct rows_out out = {.rows = json_array()};

	*rows = NULL;
	if (!out.rows)
		return err_set(e, ERR_INTERNAL, "out of memory");
	if (run_into(db_path, q, in, &out, e)) {
		json_decref(out.rows);
		return -1;
	}
	*rows = out.rows;
	return 0;
}

int inv_sandbox_run_text(const char *db_path, const struct inv_query *q, const struct inv_run *in, struct buf *text,
			 struct err *e)
{
	struct rows_out out = {.text = text};

	buf_reset(text);
	if (buf_append_char(text, '[', e) || run_into(db_path, q, in, &out, e) || buf_append_char(text, ']', e)) {
		buf_reset(text);
		return -1;
	}
	return 0;
}

int inv_sandbox_check(const char *db_path, const struct inv_query *q, struct err *e)
{
	static const struct inv_run nothing; /* no inventory: the statement is only prepared */
	struct run r = {.q = q, .in = &nothing};
	struct inv_translation t = {0};
	sqlite3_stmt *st = NULL;
	int rc = -1;

	if (run_begin(&r, e))
		return -1;
	if (open_db(&r, db_path, e) == 0 && inv_dialect_translate(q->text, q->text_len, r.view_all, &t, e) == 0 &&
	    prepare(&r, t.sql, false, &st, e) == 0)
		rc = 0;
	sqlite.finalize(st);
	inv_translation_cleanup(&t);
	return run_end(&r, rc, e);
}
