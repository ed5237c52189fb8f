/* SQLite backend of store.h: WAL, one connection per thread, statements cached per
 * connection by SQL pointer. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "base/log.h"
#include "store/store_impl.h"

bool store_durability_full;

struct sq_stmt {
	struct store_conn *conn; /* must be first: see store.c */
	sqlite3_stmt *st;
	const char *sql;
};

struct sq_conn {
	struct store_conn base; /* must be first */
	sqlite3 *db;
	struct sq_stmt **slots; /* open-addressed hash on sql pointer */
	size_t cap, n;
};

static int sq_err(struct sq_conn *c, int rc, struct err *e)
{
	int ext = sqlite3_extended_errcode(c->db);

	if ((rc & 0xff) == SQLITE_CONSTRAINT &&
	    (ext == SQLITE_CONSTRAINT_UNIQUE || ext == SQLITE_CONSTRAINT_PRIMARYKEY))
		return err_set(e, ERR_CONFLICT, "duplicate: %s", sqlite3_errmsg(c->db));
	if ((rc & 0xff) == SQLITE_BUSY || (rc & 0xff) == SQLITE_LOCKED)
		return err_set(e, ERR_UNAVAILABLE, "database busy: %s", sqlite3_errmsg(c->db));
	return err_set(e, ERR_INTERNAL, "database error: %s", sqlite3_errmsg(c->db));
}

static struct store_conn *sq_open(struct store *s, struct err *e)
{
	struct sq_conn *c = calloc(1, sizeof *c);
	char *msg = NULL;
	int rc;

	if (!c) {
		err_set(e, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	c->base.store = s;
	rc = sqlite3_open_v2(s->path, &c->db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_EXRESCODE,
			     NULL);
	if (rc != SQLITE_OK) {
		err_set(e, ERR_INTERNAL, "cannot open database %s: %s", s->path,
			c->db ? sqlite3_errmsg(c->db) : sqlite3_errstr(rc));
		goto fail;
	}
	sqlite3_busy_timeout(c->db, 10000);
	sqlite3_extended_result_codes(c->db, 1);
	/* mmap_size: reads of the first GiB come from the shared page cache of the kernel
	 * without a pread and a copy per page (each connection's own cache is 2 MB), which
	 * cuts the scans of list/count (bench/processes/fill) by a third or more. */
	rc = sqlite3_exec(c->db,
			  "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;"
			  " PRAGMA trusted_schema=OFF; PRAGMA mmap_size=1073741824;",
			  NULL, NULL, &msg);
	if (rc != SQLITE_OK) {
		err_set(e, ERR_INTERNAL, "cannot configure database %s: %s", s->path, msg ? msg : "?");
		sqlite3_free(msg);
		goto fail;
	}
	if (store_durability_full && sqlite3_exec(c->db, "PRAGMA synchronous=FULL;", NULL, NULL, NULL) != SQLITE_OK) {
		err_set(e, ERR_INTERNAL, "cannot configure database %s: %s", s->path, sqlite3_errmsg(c->db));
		goto fail;
	}
	c->cap = 64;
	c->slots = calloc(c->cap, sizeof *c->slots);
	if (!c->slots) {
		err_set(e, ERR_INTERNAL, "out of memory");
		goto fail;
	}
	return &c->base;
fail:
	sqlite3_close(c->db);
	free(c);
	return NULL;
}

static void sq_close(struct store_conn *base)
{
	struct sq_conn *c = (struct sq_conn *)base;

	for (size_t i = 0; i < c->cap; i++)
		if (c->slots[i]) {
			sqlite3_finalize(c->slots[i]->st);
			free(c->slots[i]);
		}
	free(c->slots);
	sqlite3_close(c->db);
	free(c);
}

static size_t slot_of(const char *sql, size_t cap)
{
	uintptr_t h = (uintptr_t)sql;
	h ^= h >> 17;
	h *= 0x9E3779B97F4A7C15ULL;
	return (size_t)(h >> 7) & (cap - 1);
}

static int grow(struct sq_conn *c)
{
	size_t cap = c->cap * 2;
	struct sq_stmt **slots = calloc(cap, sizeof *slots);

	if (!slots)
		return -1;
	for (size_t i = 0; i < c->cap; i++) {
		struct sq_stmt *s = c->slots[i];
		size_t j;
		if (!s)
			continue;
		for (j = slot_of(s->sql, cap); slots[j]; j = (j + 1) & (cap - 1))
			;
		slots[j] = s;
	}
	free(c->slots);
	c->slots = slots;
	c->cap = cap;
	return 0;
}

static struct store_stmt *sq_prepare(struct store_conn *base, const char *sql, struct err *e)
{
	struct sq_conn *c = (struct sq_conn *)base;
	struct sq_stmt *s;
	size_t j;
	int rc;

	for (j = slot_of(sql, c->cap); c->slots[j]; j = (j + 1) & (c->cap - 1))
		if (c->slots[j]->sql == sql)
			return (struct store_stmt *)c->slots[j];
	if ((c->n + 1) * 2 > c->cap) {
		if (grow(c)) {
			err_set(e, ERR_INTERNAL, "out of memory");
			return NULL;
		}
		for (j = slot_of(sql, c->cap); c->slots[j]; j = (j + 1) & (c->cap - 1))
			;
	}
	s = calloc(1, sizeof *s);
	if (!s) {
		err_set(e, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	rc = sqlite3_prepare_v3(c->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s->st, NULL);
	if (rc != SQLITE_OK) {
		LOG_E("prepare failed: %s in: %.200s", sqlite3_errmsg(c->db), sql);
		sq_err(c, rc, e);
		free(s);
		return NULL;
	}
	s->conn = base;
	s->sql = sql;
	c->slots[j] = s;
	c->n++;
	return (struct store_stmt *)s;
}

#define ST(x) (((struct sq_stmt *)(x))->st)

static void sq_bind_text(struct store_stmt *st, int idx, const char *v)
{
	sqlite3_bind_text(ST(st), idx, v, -1, SQLITE_TRANSIENT);
}

static void sq_bind_blob(struct store_stmt *st, int idx, const void *p, size_t n)
{
	sqlite3_bind_blob64(ST(st), idx, n ? p : "", n, SQLITE_TRANSIENT);
}

static void sq_bind_int64(struct store_stmt *st, int idx, int64_t v)
{
	sqlite3_bind_int64(ST(st), idx, v);
}

static void sq_bind_null(struct store_stmt *st, int idx)
{
	sqlite3_bind_null(ST(st), idx);
}

static int sq_step(struct store_stmt *st, struct err *e)
{
	int rc = sqlite3_step(ST(st));

	if (rc == SQLITE_ROW)
		return STORE_ROW;
	if (rc == SQLITE_DONE)
		return STORE_DONE;
	return sq_err((struct sq_conn *)((struct sq_stmt *)st)->conn, rc, e);
}

static const char *sq_col_text(struct store_stmt *st, int idx)
{
	return (const char *)sqlite3_column_text(ST(st), idx);
}

static const void *sq_col_blob(struct store_stmt *st, int idx, size_t *n)
{
	const void *p = sqlite3_column_blob(ST(st), idx);
	*n = (size_t)sqlite3_column_bytes(ST(st), idx);
	return p;
}

static int64_t sq_col_int64(struct store_stmt *st, int idx)
{
	return sqlite3_column_int64(ST(st), idx);
}

static bool sq_col_is_null(struct store_stmt *st, int idx)
{
	return sqlite3_column_type(ST(st), idx) == SQLITE_NULL;
}

static void sq_reset(struct store_stmt *st)
{
	sqlite3_reset(ST(st));
	sqlite3_clear_bindings(ST(st));
}

static int sq_exec(struct store_conn *base, const char *sql, struct err *e)
{
	struct sq_conn *c = (struct sq_conn *)base;
	int rc = sqlite3_exec(c->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : sq_err(c, rc, e);
}

static int64_t sq_changes(struct store_conn *base)
{
	return sqlite3_changes64(((struct sq_conn *)base)->db);
}

static void *sq_native(struct store_conn *base)
{
	return ((struct sq_conn *)base)->db;
}

const struct store_ops store_sqlite_ops = {
    .name = "sqlite",
    .conn_open = sq_open,
    .conn_close = sq_close,
    .prepare = sq_prepare,
    .bind_text = sq_bind_text,
    .bind_blob = sq_bind_blob,
    .bind_int64 = sq_bind_int64,
    .bind_null = sq_bind_null,
    .step = sq_step,
    .col_text = sq_col_text,
    .col_blob = sq_col_blob,
    .col_int64 = sq_col_int64,
    .col_is_null = sq_col_is_null,
    .reset = sq_reset,
    .exec = sq_exec,
    .changes = sq_changes,
    .native = sq_native,
};
