/* PostgreSQL backend of store.h (libpq): one connection per thread at a time (the HTTP
 * workers' pass from thread to thread: store_conn_release), statements prepared once per
 * connection and cached by SQL pointer, as in sqlite.c.
 *
 * Results are fetched whole (PQexecPrepared), not row by row: the store's code steps one
 * statement while it runs others on the same connection (a list that looks up each row,
 * store_one that leaves the rest unread), and libpq's single-row mode allows one query in
 * flight per connection.  The store's statements return a page or one row; whole results
 * cost one round trip each.  Values come back as text (bytea as hex, decoded on read).
 *
 * Types: PostgreSQL infers each parameter's type when the statement is prepared.  Text is
 * sent untyped (inferred from where it is used, as SQLite's affinity would take it),
 * integers as int8, blobs as binary bytea; a statement is prepared again for another
 * combination of those (a column that takes text or an integer), up to PG_VARIANTS.
 *
 * Binds and column reads keep their first error in the statement, as sqlite.c does (see
 * store.h).  A lost connection fails the call at hand with ERR_UNAVAILABLE (503); the
 * next use reconnects (at most once a second per connection) and prepares again. */
#include <assert.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/datetime.h"
#include "base/limits.h"
#include "base/log.h"
#include "base/str.h"
#include "store/pg_sql.h"
#include "store/pq_api.h"
#include "store/stmt_cache.h"
#include "store/store_impl.h"

#define OID_INT8 20
#define OID_BYTEA 17
#define OID_BOOL 16
#define PG_VARIANTS 4
#define PG_MIN_VERSION 150000 /* see docs/operations.md "PostgreSQL" */
#define PG_MIN_VERSION_TEXT "15"
#define RETRY_NS (1000LL * 1000 * 1000)
/* The write lock: a transaction-scoped advisory lock.  store_tx_begin takes it exclusive,
 * so those writers take turns as SQLite's BEGIN IMMEDIATE makes them (they read, then
 * write, without row locks); store_tx_begin_rows takes it shared, so row transactions
 * (which lock what they read) run together on every node and only wait for, and hold
 * off, the exclusive ones. */
#define PG_WRITE_LOCK_KEY "4702111234474983745"
#define PG_TX_BEGIN "BEGIN; SELECT pg_advisory_xact_lock(" PG_WRITE_LOCK_KEY ")"
#define PG_TX_BEGIN_ROWS "BEGIN; SELECT pg_advisory_xact_lock_shared(" PG_WRITE_LOCK_KEY ")"
#define PG_TX_UPGRADE "SELECT pg_advisory_xact_lock(" PG_WRITE_LOCK_KEY ")"

enum { PE_NONE, PE_TOOBIG, PE_NOMEM, PE_CUT };

struct pg_variant {
	Oid *types;	     /* per parameter: 0 (text, inferred), int8 or bytea */
	unsigned generation; /* of the connection it was prepared on (0: unused) */
	char name[16];
};

struct pg_stmt {
	struct store_conn *conn; /* must be first: see store.c */
	const char *sql;
	char *text; /* with $n placeholders */
	int n_params;
	struct pg_variant var[PG_VARIANTS];
	int next_var;
	char **vals; /* bound values (owned; NULL: SQL NULL) */
	int *lens;
	int *fmts;
	Oid *types;
	PGresult *res; /* of the last execution; NULL before the first step */
	int row, n_rows;
	char **blobs; /* decoded bytea of the current row, per column (PQfreemem) */
	int n_blobs;
	int err; /* PE_*: first failed bind or column read */
	int err_idx;
	int64_t size;
	bool reported;
};

struct pg_conn {
	struct store_conn base; /* must be first */
	PGconn *pg;
	struct stmt_cache stmts;
	int64_t changes;
	unsigned generation; /* bumped by each (re)connect: earlier statements are gone */
	unsigned next_name;
	int64_t retry_at_ns; /* no reconnect before */
	char where[300];     /* "database D on host H port P as user U", for messages */
};

static void stmt_free(void *p);

#define PS(x) ((struct pg_stmt *)(x))
#define PC(x) ((struct pg_conn *)(x))

static void describe(struct pg_conn *c)
{
	const char *host = pq.host(c->pg);

	str_fmt_cut(c->where, sizeof c->where, "database \"%s\" on %s%s port %s as user %s",
		    pq.db(c->pg) ? pq.db(c->pg) : "?", host && *host == '/' ? "socket folder " : "host ",
		    host && *host ? host : "(default)", pq.port(c->pg) && *pq.port(c->pg) ? pq.port(c->pg) : "5432",
		    pq.user(c->pg) ? pq.user(c->pg) : "?");
}

/* A libpq message on one line, without the password (given or as written in the URL). */
static void clean(struct pg_conn *c, const char *msg, char *out, size_t cap)
{
	char written[256], tmp[400];

	pg_sql_url_password(c->base.store->path, written, sizeof written);
	pg_sql_clean_msg(msg, written, tmp, sizeof tmp);
	pg_sql_clean_msg(tmp, pq.pass(c->pg), out, cap);
	explicit_bzero(written, sizeof written);
}

/* libpq's last message on c, on one line, without the password. */
static void conn_msg(struct pg_conn *c, char *out, size_t cap)
{
	clean(c, pq.error_message(c->pg), out, cap);
}

static void on_notice(void *arg, const char *msg)
{
	char line[400];

	clean(arg, msg, line, sizeof line);
	LOG_W("database: %s", line);
}

/* Settings of a new session; checks the server's version. */
static int session_init(struct pg_conn *c, struct err *e)
{
	PGresult *r;
	int v = pq.server_version(c->pg);

	if (v < PG_MIN_VERSION)
		return err_set(e, ERR_INVALID,
			       "PostgreSQL %d.%d at %s is too old: Accord needs version " PG_MIN_VERSION_TEXT
			       " or later",
			       v / 10000, v % 10000, c->where);
	pq.set_notice_processor(c->pg, on_notice, c);
	r = pq.exec(c->pg, "SET client_min_messages = warning; SET standard_conforming_strings = on");
	if (pq.result_status(r) != PGRES_COMMAND_OK) {
		char msg[300];
		conn_msg(c, msg, sizeof msg);
		pq.clear(r);
		return err_set(e, ERR_UNAVAILABLE, "cannot set up the session on %s: %s", c->where, msg);
	}
	pq.clear(r);
	c->generation++;
	return 0;
}

static struct store_conn *pg_open(struct store *s, struct err *e)
{
	/* The URL's own settings come last and win; connect_timeout bounds a start (and each
	 * reconnect) against an unreachable host. */
	const char *const keys[] = {"connect_timeout", "fallback_application_name", "dbname", NULL};
	const char *const vals[] = {"10", "accord", s->path, NULL};
	struct pg_conn *c;
	char msg[400];

	if (pq_api_load(e))
		return NULL;
	c = calloc(1, sizeof *c);
	if (!c || stmt_cache_init(&c->stmts)) {
		free(c);
		err_set(e, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	c->base.store = s;
	c->pg = pq.connectdb_params(keys, vals, 1);
	if (!c->pg) {
		err_set(e, ERR_INTERNAL, "out of memory");
		goto fail;
	}
	describe(c);
	if (pq.status(c->pg) != CONNECTION_OK) {
		conn_msg(c, msg, sizeof msg);
		err_set(e, ERR_UNAVAILABLE, "cannot connect to PostgreSQL %s: %s", c->where, msg);
		goto fail;
	}
	if (session_init(c, e))
		goto fail;
	return &c->base;
fail:
	pq.finish(c->pg);
	stmt_cache_cleanup(&c->stmts, stmt_free);
	free(c);
	return NULL;
}

/* Reconnects a connection that was lost (see the top of this file). */
static int conn_ready(struct pg_conn *c, struct err *e)
{
	int64_t now = dt_mono_ns();
	char msg[400];
	int rc;

	if (pq.status(c->pg) == CONNECTION_OK)
		return 0;
	if (now < c->retry_at_ns)
		return err_set(e, ERR_UNAVAILABLE, "database unavailable: %s cannot be reached (retrying)", c->where);
	pq.reset(c->pg);
	if (pq.status(c->pg) != CONNECTION_OK) {
		c->retry_at_ns = now + RETRY_NS;
		conn_msg(c, msg, sizeof msg);
		return err_set(e, ERR_UNAVAILABLE, "database unavailable: %s: %s", c->where, msg);
	}
	c->base.in_tx = false;
	if ((rc = session_init(c, e)))
		return rc;
	LOG_I("reconnected to PostgreSQL %s", c->where);
	return 0;
}

static void stmt_clear_row(struct pg_stmt *s)
{
	for (int i = 0; i < s->n_blobs; i++)
		if (s->blobs[i])
			pq.freemem(s->blobs[i]);
	free(s->blobs);
	s->blobs = NULL;
	s->n_blobs = 0;
}

static void stmt_free(void *p)
{
	struct pg_stmt *s = p;

	stmt_clear_row(s);
	pq.clear(s->res);
	for (int i = 0; i < s->n_params; i++)
		free(s->vals[i]);
	for (int i = 0; i < PG_VARIANTS; i++)
		free(s->var[i].types);
	free(s->vals);
	free(s->lens);
	free(s->fmts);
	free(s->types);
	free(s->text);
	free(s);
}

static void pg_close(struct store_conn *base)
{
	struct pg_conn *c = PC(base);

	stmt_cache_cleanup(&c->stmts, stmt_free);
	pq.finish(c->pg);
	free(c);
}

static struct pg_stmt *stmt_new(const char *sql, struct err *e)
{
	struct pg_stmt *s = calloc(1, sizeof *s);
	size_t n;
	bool ok;

	if (!s || !(s->text = pg_sql_rewrite(sql, &s->n_params, e))) {
		if (s)
			free(s);
		else
			err_set(e, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	n = s->n_params ? (size_t)s->n_params : 1;
	s->vals = calloc(n, sizeof *s->vals);
	s->lens = calloc(n, sizeof *s->lens);
	s->fmts = calloc(n, sizeof *s->fmts);
	s->types = calloc(n, sizeof *s->types);
	ok = s->vals && s->lens && s->fmts && s->types;
	for (int i = 0; i < PG_VARIANTS; i++)
		ok = (s->var[i].types = calloc(n, sizeof(Oid))) && ok;
	if (!ok) {
		stmt_free(s);
		err_set(e, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	s->sql = sql;
	return s;
}

static struct store_stmt *pg_prepare(struct store_conn *base, const char *sql, struct err *e)
{
	struct pg_conn *c = PC(base);
	struct pg_stmt *s = stmt_cache_get(&c->stmts, sql);

	if (s)
		return (struct store_stmt *)s;
	if (!(s = stmt_new(sql, e)))
		return NULL;
	s->conn = base;
	if (stmt_cache_put(&c->stmts, sql, s)) {
		stmt_free(s);
		err_set(e, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	return (struct store_stmt *)s;
}

static void sticky(struct pg_stmt *s, int code, int idx, int64_t size)
{
	if (s->err)
		return;
	s->err = code;
	s->err_idx = idx;
	s->size = size;
}

static int sticky_err(struct pg_stmt *s, struct err *e)
{
	if (s->err)
		s->reported = true;
	switch (s->err) {
	case PE_NONE:
		return 0;
	case PE_CUT:
		return err_set(e, ERR_INTERNAL, "database: column %d is longer than its field (limit %lld bytes)",
			       s->err_idx, (long long)s->size - 1);
	case PE_TOOBIG:
		return err_set(e, ERR_TOO_LARGE,
			       "a value of %lld bytes is too large for the database (limit %zu bytes)",
			       (long long)s->size, limits.store_value_bytes);
	default:
		return err_set(e, ERR_INTERNAL, "database: out of memory (value %d)", s->err_idx);
	}
}

/* Keeps a copy of the value of parameter idx (1-based). */
static void bind(struct store_stmt *st, int idx, const void *p, size_t n, Oid type, int fmt)
{
	struct pg_stmt *s = PS(st);
	char *v = NULL;

	assert(idx >= 1 && idx <= s->n_params);
	if (p && ((limits.store_value_bytes && n > limits.store_value_bytes) || n > INT32_MAX)) {
		sticky(s, PE_TOOBIG, idx, (int64_t)n);
		return;
	}
	if (p && !(v = malloc(n + 1))) {
		sticky(s, PE_NOMEM, idx, (int64_t)n);
		return;
	}
	if (v) {
		memcpy(v, p, n);
		v[n] = '\0';
	}
	free(s->vals[idx - 1]);
	s->vals[idx - 1] = v;
	s->lens[idx - 1] = (int)n;
	s->fmts[idx - 1] = fmt;
	s->types[idx - 1] = type;
}

static void pg_bind_text(struct store_stmt *st, int idx, const char *v)
{
	bind(st, idx, v, strlen(v), 0, 0);
}

static void pg_bind_blob(struct store_stmt *st, int idx, const void *p, size_t n)
{
	bind(st, idx, n ? p : "", n, OID_BYTEA, 1);
}

static void pg_bind_int64(struct store_stmt *st, int idx, int64_t v)
{
	char num[24];

	if (str_fmt(num, sizeof num, "%lld", (long long)v) == 0)
		bind(st, idx, num, strlen(num), OID_INT8, 0);
}

static void pg_bind_null(struct store_stmt *st, int idx)
{
	bind(st, idx, NULL, 0, 0, 0);
}

/* What the server said, as a struct err (store.h: which codes). */
static int result_err(struct pg_conn *c, const PGresult *r, const char *what, struct err *e)
{
	const char *state = r ? pq.result_error_field(r, PG_DIAG_SQLSTATE) : NULL;
	const char *primary = r ? pq.result_error_field(r, PG_DIAG_MESSAGE_PRIMARY) : NULL;
	char msg[400];

	clean(c, primary ? primary : pq.error_message(c->pg), msg, sizeof msg);
	if (pq.status(c->pg) != CONNECTION_OK || (state && strncmp(state, "08", 2) == 0) ||
	    (state && strncmp(state, "57P", 3) == 0))
		return err_set(e, ERR_UNAVAILABLE, "database unavailable: %s: %s", c->where, msg);
	if (!state)
		return err_set(e, ERR_INTERNAL, "database error: %s", msg);
	if (strcmp(state, "23505") == 0)
		return err_set(e, ERR_CONFLICT, "duplicate: %s", msg);
	if (strncmp(state, "54", 2) == 0)
		return err_set(e, ERR_TOO_LARGE, "value too large for the database: %s", msg);
	/* Class 53, insufficient resources: a full disk (53100) is 507 as SQLite's
	 * SQLITE_FULL; out of memory, connections or a configured limit (temp_file_limit)
	 * pass, so 503. */
	if (strcmp(state, "53100") == 0)
		return err_set(e, ERR_NO_SPACE, STORE_NO_SPACE ": %s", msg);
	if (strncmp(state, "53", 2) == 0)
		return err_set(e, ERR_UNAVAILABLE, "database out of resources (%s): %s", state, msg);
	if (strcmp(state, "40001") == 0 || strcmp(state, "40P01") == 0 || strcmp(state, "55P03") == 0 ||
	    strcmp(state, "57014") == 0)
		return err_set(e, ERR_UNAVAILABLE, "database busy: %s", msg);
	if (what)
		LOG_E("database error %s: %s in: %.200s", state, msg, what);
	return err_set(e, ERR_INTERNAL, "database error: %s", msg);
}

/* The name of the prepared form of s for the types bound now (see the top of this file). */
static int variant(struct pg_conn *c, struct pg_stmt *s, const char **name, struct err *e)
{
	struct pg_variant *v;
	PGresult *r;
	int i, k, rc;

	for (k = 0; k < PG_VARIANTS; k++) {
		v = &s->var[k];
		if (v->generation != c->generation)
			continue;
		for (i = 0; i < s->n_params; i++)
			if (s->vals[i] && v->types[i] != s->types[i])
				break;
		if (i == s->n_params) {
			*name = v->name;
			return 0;
		}
	}
	v = &s->var[s->next_var];
	s->next_var = (s->next_var + 1) % PG_VARIANTS;
	if (v->generation == c->generation) {
		char sql[32];
		if (!str_fmt(sql, sizeof sql, "DEALLOCATE %s", v->name))
			pq.clear(pq.exec(c->pg, sql));
	}
	v->generation = 0;
	if (str_fmt(v->name, sizeof v->name, "a%u", ++c->next_name))
		return err_set(e, ERR_INTERNAL, "statement name too long");
	for (i = 0; i < s->n_params; i++)
		v->types[i] = s->vals[i] ? s->types[i] : 0;
	r = pq.prepare(c->pg, v->name, s->text, s->n_params, v->types);
	if (pq.result_status(r) != PGRES_COMMAND_OK) {
		rc = result_err(c, r, s->text, e);
		pq.clear(r);
		return rc;
	}
	pq.clear(r);
	v->generation = c->generation;
	*name = v->name;
	return 0;
}

static int64_t cmd_tuples(PGresult *r)
{
	const char *t = pq.cmd_tuples(r);
	int64_t n = 0;

	if (!*t || str_to_i64(str_from(t), 0, INT64_MAX, &n, "rows", NULL))
		return 0;
	return n;
}

/* A connection found lost (the server restarted while it was idle) is reconnected and the
 * statement tried once more when that cannot do a thing twice: outside a transaction, and
 * only a read or a BEGIN (a write might have run before the connection broke).  The other
 * threads' idle connections then pass a restart of the database without a 503. */
static bool retry_on_new_connection(struct pg_conn *c, int rc, const char *sql)
{
	while (*sql == ' ' || *sql == '\n' || *sql == '(')
		sql++;
	return rc == -ERR_UNAVAILABLE && pq.status(c->pg) != CONNECTION_OK && !c->base.in_tx &&
	       (strncasecmp(sql, "SELECT", 6) == 0 || strncasecmp(sql, "BEGIN", 5) == 0 ||
		strncasecmp(sql, "WITH", 4) == 0);
}

static int execute(struct pg_stmt *s, struct err *e)
{
	struct pg_conn *c = PC(s->conn);
	const char *name = NULL;
	PGresult *r;
	int rc;
	bool again = false;

retry:
	if ((rc = conn_ready(c, e)) || (rc = variant(c, s, &name, e)))
		return rc;
	r = pq.exec_prepared(c->pg, name, s->n_params, (const char *const *)s->vals, s->lens, s->fmts, 0);
	switch (pq.result_status(r)) {
	case PGRES_COMMAND_OK:
	case PGRES_TUPLES_OK:
		c->changes = cmd_tuples(r);
		s->res = r;
		s->row = -1;
		s->n_rows = pq.ntuples(r);
		return 0;
	default:
		rc = result_err(c, r, s->text, e);
		pq.clear(r);
		if (!again && retry_on_new_connection(c, rc, s->text)) {
			again = true;
			goto retry;
		}
		return rc;
	}
}

static int pg_step(struct store_stmt *st, struct err *e)
{
	struct pg_stmt *s = PS(st);
	int rc;

	if (s->err)
		return sticky_err(s, e);
	stmt_clear_row(s);
	if (!s->res && (rc = execute(s, e)))
		return rc;
	if (s->row < s->n_rows)
		s->row++;
	return s->row < s->n_rows ? STORE_ROW : STORE_DONE;
}

static int pg_check(struct store_stmt *st, struct err *e)
{
	return sticky_err(PS(st), e);
}

static void assert_column(struct pg_stmt *s, int idx)
{
	assert(s->res && s->row < s->n_rows && idx >= 0 && idx < pq.nfields(s->res));
	(void)s;
	(void)idx;
}

/* The decoded bytes of bytea column idx of the current row (kept until the next step). */
static const char *blob_of(struct pg_stmt *s, int idx, size_t *n)
{
	unsigned char *p;

	if (!s->blobs) {
		int nf = pq.nfields(s->res);
		if (!(s->blobs = calloc((size_t)nf, sizeof *s->blobs))) {
			sticky(s, PE_NOMEM, idx, 0);
			return NULL;
		}
		s->n_blobs = nf;
	}
	if (!s->blobs[idx]) {
		/* One byte more than the data: a NUL, for col_text of a bytea column. */
		p = pq.unescape_bytea((const unsigned char *)pq.getvalue(s->res, s->row, idx), n);
		if (!p) {
			sticky(s, PE_NOMEM, idx, 0);
			return NULL;
		}
		s->blobs[idx] = (char *)p;
	}
	return s->blobs[idx];
}

static const char *pg_col_text(struct store_stmt *st, int idx)
{
	struct pg_stmt *s = PS(st);
	size_t n;

	assert_column(s, idx);
	if (pq.getisnull(s->res, s->row, idx))
		return NULL;
	if (pq.ftype(s->res, idx) == OID_BYTEA)
		return blob_of(s, idx, &n);
	return pq.getvalue(s->res, s->row, idx);
}

static void pg_col_cut(struct store_stmt *st, int idx, size_t cap)
{
	sticky(PS(st), PE_CUT, idx, (int64_t)cap);
}

static const void *pg_col_blob(struct store_stmt *st, int idx, size_t *n)
{
	struct pg_stmt *s = PS(st);
	const void *p;

	assert_column(s, idx);
	*n = 0;
	if (pq.getisnull(s->res, s->row, idx))
		return NULL;
	if (pq.ftype(s->res, idx) != OID_BYTEA) {
		*n = (size_t)pq.getlength(s->res, s->row, idx);
		return pq.getvalue(s->res, s->row, idx);
	}
	if (!(p = blob_of(s, idx, n)))
		*n = 0;
	return p;
}

static int64_t pg_col_int64(struct store_stmt *st, int idx)
{
	struct pg_stmt *s = PS(st);
	const char *v;
	int64_t n;

	assert_column(s, idx);
	if (pq.getisnull(s->res, s->row, idx))
		return 0;
	v = pq.getvalue(s->res, s->row, idx);
	if (pq.ftype(s->res, idx) == OID_BOOL)
		return *v == 't';
	if (str_to_i64(str_from(v), INT64_MIN, INT64_MAX, &n, "column", NULL) == 0)
		return n;
	return (int64_t)strtod(v, NULL); /* numeric, real: SQLite's integer reading truncates */
}

static bool pg_col_is_null(struct store_stmt *st, int idx)
{
	struct pg_stmt *s = PS(st);

	assert_column(s, idx);
	return pq.getisnull(s->res, s->row, idx);
}

static void pg_reset(struct store_stmt *st)
{
	struct pg_stmt *s = PS(st);

	if (s->err && !s->reported) {
		struct err e;
		(void)sticky_err(s, &e);
		LOG_E("database error nobody checked (%.60s): %s", s->sql, e.msg);
	}
	s->err = PE_NONE;
	s->reported = false;
	stmt_clear_row(s);
	pq.clear(s->res);
	s->res = NULL;
	for (int i = 0; i < s->n_params; i++) {
		free(s->vals[i]);
		s->vals[i] = NULL;
		s->types[i] = 0;
		s->fmts[i] = 0;
		s->lens[i] = 0;
	}
}

static int pg_exec(struct store_conn *base, const char *sql, struct err *e)
{
	struct pg_conn *c = PC(base);
	PGresult *r;
	int rc;
	bool again = false;

retry:
	rc = 0;
	if (conn_ready(c, e))
		return -1;
	/* PostgreSQL answers the COMMIT of a transaction in which a statement failed with a
	 * rollback and no error: a caller that went on after the failure must learn that its
	 * writes are gone. */
	bool failed = strcmp(sql, "COMMIT") == 0 && pq.transaction_status(c->pg) == PQTRANS_INERROR;
	r = pq.exec(c->pg, sql);
	if (pq.result_status(r) != PGRES_COMMAND_OK && pq.result_status(r) != PGRES_TUPLES_OK)
		rc = result_err(c, r, NULL, e);
	else if (failed)
		rc = err_set(e, ERR_INTERNAL, "database: the transaction was rolled back (a statement in it failed)");
	pq.clear(r);
	if (rc && !again && retry_on_new_connection(c, rc, sql)) {
		again = true;
		goto retry;
	}
	return rc;
}

static int64_t pg_changes(struct store_conn *base)
{
	return PC(base)->changes;
}

static void *pg_native(struct store_conn *base)
{
	return PC(base)->pg;
}

static void pg_reset_conn(struct store_conn *base)
{
	struct pg_conn *c = PC(base);
	char msg[400];
	struct err e;

	if (pq.status(c->pg) != CONNECTION_OK)
		return;
	LOG_W("database: replacing a session on %s that was left busy", c->where);
	pq.reset(c->pg);
	c->generation++; /* the old session's statements are gone, whatever session_init says */
	if (pq.status(c->pg) != CONNECTION_OK) {
		c->retry_at_ns = dt_mono_ns() + RETRY_NS;
		conn_msg(c, msg, sizeof msg);
		LOG_E("database: cannot reconnect to %s: %s", c->where, msg);
	} else if (session_init(c, &e)) {
		LOG_E("database: %s", e.msg);
	}
}

/* ---- LISTEN: a connection of its own (store_listen) ---------------------------------- */

struct pg_listener {
	struct store_listener base; /* must be first */
	struct store_conn *conn;    /* from pg_open, not a thread's */
	char **channels;
	size_t n;
	bool listening;
};

static void pg_listen_close(struct store_listener *base)
{
	struct pg_listener *l = (struct pg_listener *)base;

	if (!l)
		return;
	if (l->conn)
		pg_close(l->conn);
	for (size_t i = 0; i < l->n; i++)
		free(l->channels[i]);
	free(l->channels);
	free(l);
}

static int listen_all(struct pg_listener *l, struct err *e)
{
	PGconn *pg = PC(l->conn)->pg;

	for (size_t i = 0; i < l->n; i++) {
		char *id = pq.escape_identifier(pg, l->channels[i], strlen(l->channels[i])), *sql = NULL;
		PGresult *r;
		int ok;
		if (!id || asprintf(&sql, "LISTEN %s", id) < 0) {
			pq.freemem(id);
			return err_set(e, ERR_INTERNAL, "out of memory");
		}
		pq.freemem(id);
		r = pq.exec(pg, sql);
		free(sql);
		ok = pq.result_status(r) == PGRES_COMMAND_OK;
		pq.clear(r);
		if (!ok) {
			char msg[300];
			conn_msg(PC(l->conn), msg, sizeof msg);
			return err_set(e, ERR_UNAVAILABLE, "cannot listen on %s: %s", PC(l->conn)->where, msg);
		}
	}
	l->listening = true;
	return 0;
}

static struct store_listener *pg_listen_open(struct store *s, const char *const *channels, size_t n,
					     struct err *e)
{
	struct pg_listener *l = calloc(1, sizeof *l);

	if (!l || !(l->channels = calloc(n ? n : 1, sizeof *l->channels))) {
		free(l);
		err_set(e, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	l->base.store = s;
	for (; l->n < n; l->n++)
		if (!(l->channels[l->n] = strdup(channels[l->n]))) {
			err_set(e, ERR_INTERNAL, "out of memory");
			goto fail;
		}
	if (!(l->conn = pg_open(s, e)) || listen_all(l, e))
		goto fail;
	return &l->base;
fail:
	pg_listen_close(&l->base);
	return NULL;
}

static int pg_listen_wait(struct store_listener *base, int wake_fd, int timeout_ms, char *channel, size_t ccap,
			  char *payload, size_t pcap, struct err *e)
{
	struct pg_listener *l = (struct pg_listener *)base;
	struct pg_conn *c = PC(l->conn);

	if (!l->listening && (conn_ready(c, e) || listen_all(l, e)))
		return -1;
	for (;;) {
		struct pollfd p[2] = {{pq.socket(c->pg), POLLIN, 0}, {wake_fd, POLLIN, 0}};
		PGnotify *nf;
		int r;
		if (!pq.consume_input(c->pg)) {
			char msg[300];
			l->listening = false;
			conn_msg(c, msg, sizeof msg);
			return err_set(e, ERR_UNAVAILABLE, "listening on %s: %s", c->where, msg);
		}
		if ((nf = pq.notifies(c->pg))) {
			str_fmt_cut(channel, ccap, "%s", nf->relname);
			str_fmt_cut(payload, pcap, "%s", nf->extra ? nf->extra : "");
			pq.freemem(nf);
			return 1;
		}
		r = poll(p, wake_fd >= 0 ? 2 : 1, timeout_ms);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return err_set(e, ERR_INTERNAL, "poll: %s", strerror(errno));
		if (r == 0)
			return 0;
		if (wake_fd >= 0 && p[1].revents)
			return 2;
	}
}

const struct store_ops store_pg_ops = {
    .name = "postgresql",
    .tx_begin_sql = PG_TX_BEGIN,
    .tx_begin_rows_sql = PG_TX_BEGIN_ROWS,
    .tx_upgrade_sql = PG_TX_UPGRADE,
    .migrate_lock_sql = "SELECT pg_advisory_lock(4702111234474983746)",
    .migrate_unlock_sql = "SELECT pg_advisory_unlock(4702111234474983746)",
    .migrations = store_migrations_pg,
    /* The inventory sandbox's role is named after the database's oid (migrations 014, 016). */
    .start_sql = "SELECT accord_inv_role_ensure()",
    .conn_open = pg_open,
    .conn_close = pg_close,
    .prepare = pg_prepare,
    .bind_text = pg_bind_text,
    .bind_blob = pg_bind_blob,
    .bind_int64 = pg_bind_int64,
    .bind_null = pg_bind_null,
    .step = pg_step,
    .check = pg_check,
    .col_text = pg_col_text,
    .col_cut = pg_col_cut,
    .col_blob = pg_col_blob,
    .col_int64 = pg_col_int64,
    .col_is_null = pg_col_is_null,
    .reset = pg_reset,
    .exec = pg_exec,
    .changes = pg_changes,
    .native = pg_native,
    .reset_conn = pg_reset_conn,
    .notify_sql = "SELECT pg_notify(?, ?)",
    .listen_open = pg_listen_open,
    .listen_wait = pg_listen_wait,
    .listen_close = pg_listen_close,
    .pooled = true,
};
