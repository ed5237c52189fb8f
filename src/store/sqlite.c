/* SQLite backend of store.h: WAL, one connection per thread, statements cached per
 * connection by SQL pointer.
 *
 * Errors of the calls that return nothing (binds, column reads) are sticky, as SQLite
 * itself keeps a statement's error until it is reset: the first failing bind or column
 * read records its result code in the statement, the next step returns it without
 * running the statement, and store_stmt_check reports it after a row was read.  A
 * statement reset with an error nobody asked for logs it. */
#include <assert.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "base/datetime.h"
#include "base/limits.h"
#include "base/log.h"
#include "base/metrics.h"
#include "base/str.h"
#include "store/inventory_postings.h"
#include "store/sqlite_api.h"
#include "store/sqlite_checkpointer.h"
#include "store/sqlite_mem.h"
#include "store/stmt_cache.h"
#include "store/store_impl.h"

bool store_durability_full;

struct sq_stmt {
	struct store_conn *conn; /* must be first: see store.c */
	sqlite3_stmt *st;
	const char *sql;
	int err;       /* first SQLite result code of a failed bind or column read (CUT: a
			* column longer than its field); 0 if none */
	int err_idx;   /* its parameter or column index */
	int64_t size;  /* the size of the value bound when err is SQLITE_TOOBIG */
	bool reported; /* err was returned to a caller */
};

struct sq_conn {
	struct store_conn base; /* must be first */
	sqlite3 *db;
	int64_t busy_since_ns; /* when the current wait for a lock began */
	struct stmt_cache stmts;
	bool mapped;	 /* reads through a memory map (store_prefer_map) */
	bool auth_dirty; /* the open transaction changed a table authentication reads */
};

/* store.h store_auth_generation.  SQLite serves one node (the data folder's lock), so
 * every change of the tables that API-key authentication reads passes through a
 * connection of this process.  SQLite's update hook sees each row written, whatever
 * statement wrote it; the generation moves only once that write has committed (the
 * connection back in autocommit mode after the statement or the COMMIT), so a reader that
 * read the generation before its own read can never pair the new generation with the old
 * row. */
static _Atomic uint64_t auth_generation = 1;

static void on_update(void *arg, int op, const char *db, const char *table, sqlite3_int64 rowid)
{
	struct sq_conn *c = arg;
	(void)op;
	(void)db;
	(void)rowid;

	if (strcmp(table, "users") == 0 || strcmp(table, "api_keys") == 0)
		c->auth_dirty = true;
}

static void auth_settle(struct sq_conn *c)
{
	if (c->auth_dirty && sqlite.get_autocommit(c->db)) {
		c->auth_dirty = false;
		atomic_fetch_add(&auth_generation, 1);
	}
}

static bool sq_auth_generation(uint64_t *gen)
{
	*gen = atomic_load(&auth_generation);
	return true;
}

static int sq_err(struct sq_conn *c, int rc, struct err *e)
{
	int ext = sqlite.extended_errcode(c->db);

	if ((rc & 0xff) == SQLITE_TOOBIG)
		return err_set(e, ERR_TOO_LARGE, "value too large for the database (limit %d bytes)",
			       sqlite.limit(c->db, SQLITE_LIMIT_LENGTH, -1));
	if ((rc & 0xff) == SQLITE_NOMEM)
		return err_set(e, ERR_INTERNAL, "database: out of memory");
	if ((rc & 0xff) == SQLITE_FULL)
		return err_set(e, ERR_NO_SPACE, STORE_NO_SPACE ": %s", sqlite.errmsg(c->db));
	if ((rc & 0xff) == SQLITE_CONSTRAINT &&
	    (ext == SQLITE_CONSTRAINT_UNIQUE || ext == SQLITE_CONSTRAINT_PRIMARYKEY))
		return err_set(e, ERR_CONFLICT, "duplicate: %s", sqlite.errmsg(c->db));
	if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED)
		return err_set(e, ERR_UNAVAILABLE, "database busy: %s", sqlite.errmsg(c->db));
	return err_set(e, ERR_INTERNAL, "database error: %s", sqlite.errmsg(c->db));
}

/* Waiting for another connection's write lock.  SQLite's own busy_timeout sleeps 1, 2, 5,
 * 10 … 100 ms between tries: far longer than our transactions (~0.1 ms), so under load a
 * writer slept while the lock was long free.  This one retries after 50 µs, doubling up
 * to 10 ms, and gives up (SQLITE_BUSY → 503) after 10 s in all.  Every wait is counted
 * (accord_store_busy_retries_total). */
#define BUSY_GIVE_UP_NS (10LL * 1000 * 1000 * 1000)

static int on_busy(void *arg, int n)
{
	struct sq_conn *c = arg;
	int64_t now = dt_mono_ns();
	long ns = n < 8 ? 50000L << n : 10000000L;

	if (n == 0)
		c->busy_since_ns = now;
	else if (now - c->busy_since_ns > BUSY_GIVE_UP_NS)
		return 0;
	metrics_inc(MC_STORE_BUSY_RETRIES, 1);
	nanosleep(&(struct timespec){0, ns}, NULL);
	return 1;
}

static struct store_conn *sq_open(struct store *s, struct err *e)
{
	struct sq_conn *c;
	struct err mem;
	char *msg = NULL;
	int rc;

	if (sqlite_api_load(e))
		return NULL;
	c = calloc(1, sizeof *c);
	/* Before SQLite's first use: per-run memory budgets of inventory queries. */
	if (sqlite_mem_install(&mem))
		LOG_W("%s; inventory queries will be refused", mem.msg);
	if (!c) {
		err_set(e, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	c->base.store = s;
	rc = sqlite.open_v2(s->path, &c->db,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE,
			    NULL);
	if (rc != SQLITE_OK) {
		err_set(e, ERR_INTERNAL, "cannot open database %s: %s", s->path,
			c->db ? sqlite.errmsg(c->db) : sqlite.errstr(rc));
		goto fail;
	}
	sqlite.busy_handler(c->db, on_busy, c);
	sqlite.update_hook(c->db, on_update, c);
	/* A value over the limit fails its bind with SQLITE_TOOBIG (413); 0 (limits never set,
	 * as in some unit tests) keeps SQLite's compiled-in limit. */
	if (limits.store_value_bytes)
		sqlite.limit(c->db, SQLITE_LIMIT_LENGTH,
			     limits.store_value_bytes < INT32_MAX ? (int)limits.store_value_bytes : INT32_MAX);
	sqlite.extended_result_codes(c->db, 1);
	rc = sqlite.exec(c->db,
			 "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;"
			 " PRAGMA trusted_schema=OFF; PRAGMA mmap_size=0;",
			 NULL, NULL, &msg);
	if (rc != SQLITE_OK) {
		err_set(e, ERR_INTERNAL, "cannot configure database %s: %s", s->path, msg ? msg : "?");
		sqlite.free(msg);
		goto fail;
	}
	/* A commit that leaves the write-ahead log past SQLITE_CHECKPOINT_PAGES checkpoints it:
	 * each checkpoint syncs the log and the database file, and at 10,000 pages (~40 MB,
	 * under --limit-wal-bytes' 64 MB) they are a tenth as many as at SQLite's 1,000, and a
	 * page written again between two of them is copied into the database once (completions
	 * 545–578 → 613–641/s, bench/RESULTS.md session 30).  The writer connection, which
	 * makes nearly all commits, leaves them to a thread (sqlite_checkpointer.c). */
	sqlite.wal_autocheckpoint(c->db, SQLITE_CHECKPOINT_PAGES);
	if (store_durability_full && sqlite.exec(c->db, "PRAGMA synchronous=FULL;", NULL, NULL, NULL) != SQLITE_OK) {
		err_set(e, ERR_INTERNAL, "cannot configure database %s: %s", s->path, sqlite.errmsg(c->db));
		goto fail;
	}
	/* the backfill of migration 041 computes the same postings as the item writes */
	if (store_inventory_postings_register(c->db, e))
		goto fail;
	if (stmt_cache_init(&c->stmts)) {
		err_set(e, ERR_INTERNAL, "out of memory");
		goto fail;
	}
	return &c->base;
fail:
	sqlite.close(c->db);
	free(c);
	return NULL;
}

static void stmt_free(void *p)
{
	struct sq_stmt *s = p;

	sqlite.finalize(s->st);
	free(s);
}

static void sq_close(struct store_conn *base)
{
	struct sq_conn *c = (struct sq_conn *)base;

	stmt_cache_cleanup(&c->stmts, stmt_free);
	sqlite.close(c->db);
	free(c);
}

static struct store_stmt *sq_prepare(struct store_conn *base, const char *sql, struct err *e)
{
	struct sq_conn *c = (struct sq_conn *)base;
	struct sq_stmt *s = stmt_cache_get(&c->stmts, sql);
	int rc;

	if (s)
		return (struct store_stmt *)s;
	s = calloc(1, sizeof *s);
	if (!s) {
		err_set(e, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	rc = sqlite.prepare_v3(c->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s->st, NULL);
	if (rc != SQLITE_OK) {
		LOG_E("prepare failed: %s in: %.200s", sqlite.errmsg(c->db), sql);
		sq_err(c, rc, e);
		free(s);
		return NULL;
	}
	s->conn = base;
	s->sql = sql;
	if (stmt_cache_put(&c->stmts, sql, s)) {
		stmt_free(s);
		err_set(e, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	return (struct store_stmt *)s;
}

#define SQ(x) ((struct sq_stmt *)(x))
#define CUT (-1) /* not an SQLite result code: store_col_copy's value did not fit */
#define ST(x) (SQ(x)->st)
#define DB(x) (((struct sq_conn *)SQ(x)->conn)->db)

/* Records the first failure of a bind or column read (see the top of this file). */
static void sticky(struct store_stmt *st, int rc, int idx, int64_t size)
{
	/* A parameter index out of range is a mistake in the SQL or the code that binds. */
	assert((rc & 0xff) != SQLITE_RANGE);
	if (rc == SQLITE_OK || SQ(st)->err)
		return;
	SQ(st)->err = rc;
	SQ(st)->err_idx = idx;
	SQ(st)->size = size;
}

/* The sticky error of st as a struct err (0 when there is none). */
static int sticky_err(struct store_stmt *st, struct err *e)
{
	struct sq_stmt *s = SQ(st);

	if (s->err)
		s->reported = true;
	if (s->err == CUT)
		return err_set(e, ERR_INTERNAL, "database: column %d is longer than its field (limit %lld bytes)",
			       s->err_idx, (long long)s->size - 1);
	switch (s->err & 0xff) {
	case SQLITE_OK:
		return 0;
	case SQLITE_TOOBIG:
		return err_set(e, ERR_TOO_LARGE, "a value of %lld bytes is too large for the database (limit %d bytes)",
			       (long long)s->size, sqlite.limit(DB(st), SQLITE_LIMIT_LENGTH, -1));
	case SQLITE_NOMEM:
		return err_set(e, ERR_INTERNAL, "database: out of memory (value %d)", s->err_idx);
	default:
		return err_set(e, ERR_INTERNAL, "database: value %d: %s", s->err_idx, sqlite.errstr(s->err));
	}
}

static void sq_bind_text(struct store_stmt *st, int idx, const char *v)
{
	size_t n = strlen(v);

	/* sqlite3_bind_text64 answers TOOBIG itself past SQLITE_LIMIT_LENGTH. */
	sticky(st, sqlite.bind_text64(ST(st), idx, v, n, SQLITE_TRANSIENT, SQLITE_UTF8), idx, (int64_t)n);
}

static void sq_bind_blob(struct store_stmt *st, int idx, const void *p, size_t n)
{
	sticky(st, sqlite.bind_blob64(ST(st), idx, n ? p : "", n, SQLITE_TRANSIENT), idx, (int64_t)n);
}

static void sq_bind_int64(struct store_stmt *st, int idx, int64_t v)
{
	sticky(st, sqlite.bind_int64(ST(st), idx, v), idx, 0);
}

static void sq_bind_null(struct store_stmt *st, int idx)
{
	sticky(st, sqlite.bind_null(ST(st), idx), idx, 0);
}

static int sq_step(struct store_stmt *st, struct err *e)
{
	int rc;

	if (SQ(st)->err)
		return sticky_err(st, e);
	rc = sqlite.step(ST(st));
	if (rc == SQLITE_ROW) /* a statement with RETURNING commits at its reset */
		return STORE_ROW;
	auth_settle((struct sq_conn *)SQ(st)->conn);
	if (rc == SQLITE_DONE)
		return STORE_DONE;
	return sq_err((struct sq_conn *)SQ(st)->conn, rc, e);
}

static int sq_check(struct store_stmt *st, struct err *e)
{
	return sticky_err(st, e);
}

/* A NULL from sqlite3_column_text/blob is SQL NULL, an empty blob, or out of memory; only
 * the connection's error code right after the call tells them apart. */
static void column_failed(struct store_stmt *st, int idx)
{
	int rc = sqlite.errcode(DB(st));

	if (rc == SQLITE_NOMEM)
		sticky(st, rc, idx, 0);
}

static void assert_column(struct store_stmt *st, int idx)
{
	assert(idx >= 0 && idx < sqlite.column_count(ST(st)));
	(void)st;
	(void)idx;
}

static const char *sq_col_text(struct store_stmt *st, int idx)
{
	const char *p;

	assert_column(st, idx);
	if (!(p = (const char *)sqlite.column_text(ST(st), idx)))
		column_failed(st, idx);
	return p;
}

static void sq_col_cut(struct store_stmt *st, int idx, size_t cap)
{
	sticky(st, CUT, idx, (int64_t)cap);
}

static const void *sq_col_blob(struct store_stmt *st, int idx, size_t *n)
{
	const void *p;

	assert_column(st, idx);
	if (!(p = sqlite.column_blob(ST(st), idx)))
		column_failed(st, idx);
	*n = p ? (size_t)sqlite.column_bytes(ST(st), idx) : 0;
	return p;
}

static int64_t sq_col_int64(struct store_stmt *st, int idx)
{
	assert_column(st, idx);
	return sqlite.column_int64(ST(st), idx);
}

static bool sq_col_is_null(struct store_stmt *st, int idx)
{
	assert_column(st, idx);
	return sqlite.column_type(ST(st), idx) == SQLITE_NULL;
}

static void sq_reset(struct store_stmt *st)
{
	struct sq_stmt *s = SQ(st);

	if (s->err && !s->reported) {
		struct err e;
		(void)sticky_err(st, &e);
		LOG_E("database error nobody checked (%.60s): %s", s->sql, e.msg);
	}
	s->err = 0;
	s->reported = false;
	sqlite.reset(ST(st));
	sqlite.clear_bindings(ST(st));
	auth_settle((struct sq_conn *)s->conn);
}

static int sq_exec(struct store_conn *base, const char *sql, struct err *e)
{
	struct sq_conn *c = (struct sq_conn *)base;
	int rc = sqlite.exec(c->db, sql, NULL, NULL, NULL);

	auth_settle(c);
	return rc == SQLITE_OK ? 0 : sq_err(c, rc, e);
}

/* Prepared once per connection: parsing BEGIN, SAVEPOINT, RELEASE and COMMIT again for each
 * transaction (a process's writes take several, each a savepoint of the writer's batch) was
 * SQLite's parser at work for nothing. */
static int sq_exec_tx(struct store_conn *base, const char *sql, struct err *e)
{
	struct store_stmt *st = sq_prepare(base, sql, e);
	int rc;

	if (!st)
		return -1;
	rc = sq_step(st, e);
	sq_reset(st);
	return rc < 0 ? rc : 0;
}

static int64_t sq_changes(struct store_conn *base)
{
	return sqlite.changes64(((struct sq_conn *)base)->db);
}

static void *sq_native(struct store_conn *base)
{
	return ((struct sq_conn *)base)->db;
}

/* A map of the first GiB (store.h: store_prefer_map).  A failure leaves the connection
 * reading with pread, which is only slower. */
static void sq_prefer_map(struct store_conn *base)
{
	struct sq_conn *c = (struct sq_conn *)base;

	if (!c->mapped)
		c->mapped = sqlite.exec(c->db, "PRAGMA mmap_size=1073741824;", NULL, NULL, NULL) == SQLITE_OK;
}

static uint64_t wal_size(struct store_conn *base)
{
	char path[4200];
	struct stat st;

	if (str_fmt(path, sizeof path, "%s-wal", base->store->path) || stat(path, &st) != 0)
		return 0;
	return (uint64_t)st.st_size;
}

/* Readers and writers get this long to step aside for a truncating checkpoint; the
 * connection's own busy handler (on_busy) is put back afterwards. */
#define CHECKPOINT_WAIT_MS 200

static int sq_maintain(struct store_conn *base, uint64_t wal_limit, uint64_t *wal_bytes, struct err *e)
{
	struct sq_conn *c = (struct sq_conn *)base;
	int rc, log = 0, done = 0;

	*wal_bytes = wal_size(base);
	metrics_store_wal(*wal_bytes);
	if (*wal_bytes <= wal_limit)
		return 0;
	sqlite.busy_timeout(c->db, CHECKPOINT_WAIT_MS);
	rc = sqlite.wal_checkpoint_v2(c->db, NULL, SQLITE_CHECKPOINT_TRUNCATE, &log, &done);
	sqlite.busy_handler(c->db, on_busy, c);
	sqlite.update_hook(c->db, on_update, c);
	*wal_bytes = wal_size(base);
	metrics_store_wal(*wal_bytes);
	if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
		return 0; /* busy now: the next heartbeat tries again */
	if (rc != SQLITE_OK)
		return sq_err(c, rc, e);
	LOG_D("store: write-ahead log truncated to %llu bytes (over the limit of %llu)",
	      (unsigned long long)*wal_bytes, (unsigned long long)wal_limit);
	return 0;
}

const struct store_ops store_sqlite_ops = {
    .name = "sqlite",
    .tx_begin_sql = "BEGIN IMMEDIATE",
    .migrations = store_migrations,
    .conn_open = sq_open,
    .conn_close = sq_close,
    .prepare = sq_prepare,
    .bind_text = sq_bind_text,
    .bind_blob = sq_bind_blob,
    .bind_int64 = sq_bind_int64,
    .bind_null = sq_bind_null,
    .step = sq_step,
    .check = sq_check,
    .col_text = sq_col_text,
    .col_cut = sq_col_cut,
    .col_blob = sq_col_blob,
    .col_int64 = sq_col_int64,
    .col_is_null = sq_col_is_null,
    .reset = sq_reset,
    .exec = sq_exec,
    .exec_tx = sq_exec_tx,
    .changes = sq_changes,
    .native = sq_native,
    .prefer_map = sq_prefer_map,
    .maintain = sq_maintain,
    .auth_generation = sq_auth_generation,
};
