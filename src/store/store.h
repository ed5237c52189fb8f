#ifndef ACCORD_STORE_STORE_H
#define ACCORD_STORE_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"

/* The one interface to the database.  All SQL of Accord lives in src/store/.
 *
 * A `struct store` is opened once per server.  Each thread gets its own connection
 * (store_conn), opened on first use and kept until store_close.  Statements are
 * prepared once per connection and cached by the address of their SQL text, so SQL
 * must be a string constant:
 *
 *     static const char SQL[] = "SELECT name FROM users WHERE id = ?";
 *     struct store_stmt *st = store_prepare(c, SQL, e);
 *     if (!st) return -1;
 *     store_bind_text(st, 1, id);
 *     rc = store_step(st, e);            // STORE_ROW, STORE_DONE or < 0
 *     ...
 *     store_reset(st);                   // always, on every path
 *
 * Backends implement struct store_ops (sqlite.c, pg.c) and are chosen once by the URL
 * given to store_open.  SQL is written in the common subset of SQLite and PostgreSQL with
 * `?` or `?N` placeholders (pg.c rewrites them to $n; pg_sql.h).  Each dialect has its own
 * schema (schema/NNN_name.sql, one migration for both dialects: scripts/embed-sql).
 * A unique-constraint violation surfaces from store_step as ERR_CONFLICT, a value larger
 * than the database takes (SQLite's SQLITE_LIMIT_LENGTH, see limits.store_value_bytes) as
 * ERR_TOO_LARGE; everything else the database reports is ERR_INTERNAL with the database's
 * message.
 *
 * Errors are never silent, yet binds return nothing: as in SQLite, the first bind that
 * fails (value too large, out of memory) is remembered by the statement, and the next
 * store_step returns it without running the statement.  A column read that runs out of
 * memory returns NULL and is remembered the same way: store_one and store_collect check
 * after reading each row; code that steps by hand and reads a column whose NULL it cannot
 * tell from a failure calls store_stmt_check.  store_reset forgets the error (and logs
 * one that nobody was told about).  Binding past the statement's parameters or reading
 * past its columns is a programming error (assert). */

struct store;
struct store_conn;
struct store_stmt;
struct migration;

enum { STORE_DONE = 0, STORE_ROW = 1 };

struct store_ops {
	const char *name;
	const char *tx_begin_sql; /* store_tx_begin: takes the write lock at once */
	/* store_tx_begin_rows, and what a store_tx_begin inside one runs first (NULL: the
	 * backend serializes every write transaction, both are tx_begin_sql). */
	const char *tx_begin_rows_sql, *tx_upgrade_sql;
	/* Around store_migrate, so that nodes starting together migrate once (NULL: none). */
	const char *migrate_lock_sql, *migrate_unlock_sql;
	const struct migration *migrations; /* this dialect's schema (migrations.h) */
	/* Run at every start once the migrations are applied, under the migration lock: puts
	 * back what a database restored elsewhere lacks (NULL: nothing). */
	const char *start_sql;
	struct store_conn *(*conn_open)(struct store *s, struct err *e);
	void (*conn_close)(struct store_conn *c);
	struct store_stmt *(*prepare)(struct store_conn *c, const char *sql, struct err *e);
	void (*bind_text)(struct store_stmt *st, int idx, const char *v);
	void (*bind_blob)(struct store_stmt *st, int idx, const void *p, size_t n);
	void (*bind_int64)(struct store_stmt *st, int idx, int64_t v);
	void (*bind_null)(struct store_stmt *st, int idx);
	int (*step)(struct store_stmt *st, struct err *e);
	int (*check)(struct store_stmt *st, struct err *e);
	const char *(*col_text)(struct store_stmt *st, int idx);
	void (*col_cut)(struct store_stmt *st, int idx, size_t cap); /* makes "did not fit" sticky */
	const void *(*col_blob)(struct store_stmt *st, int idx, size_t *n);
	int64_t (*col_int64)(struct store_stmt *st, int idx);
	bool (*col_is_null)(struct store_stmt *st, int idx);
	void (*reset)(struct store_stmt *st);
	int (*exec)(struct store_conn *c, const char *sql, struct err *e);
	/* The transaction statements (BEGIN, SAVEPOINT …: constant texts, each at one address),
	 * kept prepared per connection (NULL: exec). */
	int (*exec_tx)(struct store_conn *c, const char *sql, struct err *e);
	int64_t (*changes)(struct store_conn *c);
	void *(*native)(struct store_conn *c);
	void (*reset_conn)(struct store_conn *c); /* NULL: nothing to do (store_conn_reset) */
	void (*prefer_map)(struct store_conn *c);
	int (*maintain)(struct store_conn *c, uint64_t wal_limit, uint64_t *wal_bytes, struct err *e);
	/* Wake-ups across nodes (NULL: one node only, as SQLite): store_notify's statement
	 * (channel, payload) and the listener's connection. */
	const char *notify_sql;
	struct store_listener *(*listen_open)(struct store *s, const char *const *channels, size_t n,
					      struct err *e);
	int (*listen_wait)(struct store_listener *l, int wake_fd, int timeout_ms, char *channel, size_t ccap,
			   char *payload, size_t pcap, struct err *e);
	void (*listen_close)(struct store_listener *l);
	/* Whether store_conn_release hands connections on: where each costs the database a
	 * process and its own caches (PostgreSQL), not where it is a file handle (SQLite). */
	bool pooled;
	/* store_auth_generation (NULL: other nodes change the data, nothing may be cached). */
	bool (*auth_generation)(uint64_t *gen);
};

/* How an ERR_NO_SPACE of the database begins (SQLite's SQLITE_FULL), so that an answer can
 * say that the database, not a folder of files, is what is full. */
#define STORE_NO_SPACE "the database's disk is full"

/* Durability of commits, set before store_open (`accord serve --durability`).  false
 * (default): WAL with synchronous=NORMAL, a commit is durable once the WAL is
 * checkpointed or synced — a power failure or kernel crash may lose the last commits
 * (never corrupts).  true: synchronous=FULL, every commit is fsynced before it returns. */
extern bool store_durability_full;

/* Opens the store named by url: "sqlite:<path>" or a bare path (SQLite); a postgresql://
 * or postgres:// URL or libpq's key=value form with host= or dbname= (PostgreSQL, PG*
 * environment variables fill in what it leaves out).  Applies migrations (store_migrate)
 * before returning.  NULL with a message on failure; a message never holds the password. */
struct store *store_open(const char *url, struct err *e);
/* The same without the migrations, for a command that only reads (accord audit verify): the
 * caller checks that the schema has what it reads. */
struct store *store_open_as_is(const char *url, struct err *e);
/* Whether url names a PostgreSQL database, as store_open decides; else it names a SQLite file
 * ("sqlite:<path>" or a bare path). */
bool store_url_is_pg(const char *url);
/* Closes every thread's connection; no thread may use the store afterwards. */
void store_close(struct store *s);
/* The number of the newest migration applied to s (`accord migrate`). */
int store_schema_version(struct store *s, int *version, struct err *e) WUR;

/* The calling thread's connection (opened on first use, or one that another thread gave
 * back: store_conn_release).  NULL on failure. */
struct store_conn *store_conn(struct store *s, struct err *e);
/* The calling thread is done with its connection for now (an HTTP request answered): on a
 * backend whose connections are costly (PostgreSQL: a server process each), it goes to the
 * store's idle ones, for the next thread without one, so that threads taking requests in
 * turn share a few sessions instead of holding one each.  Nothing of the thread may keep
 * the connection or a statement of it past this call.  One inside a transaction stays
 * with its thread.  Nothing on SQLite. */
void store_conn_release(struct store *s);

/* Prepared statement for sql on c, cached by the pointer sql (a string constant). */
struct store_stmt *store_prepare(struct store_conn *c, const char *sql, struct err *e);
void store_bind_text(struct store_stmt *st, int idx, const char *v); /* NULL binds NULL */
void store_bind_blob(struct store_stmt *st, int idx, const void *p, size_t n);
void store_bind_int64(struct store_stmt *st, int idx, int64_t v);
void store_bind_null(struct store_stmt *st, int idx);
/* STORE_ROW, STORE_DONE, or < 0: the statement's sticky error, else the step's own. */
int store_step(struct store_stmt *st, struct err *e) WUR;
/* 0, or < 0 with the sticky error of a bind or column read since the last reset. */
int store_stmt_check(struct store_stmt *st, struct err *e) WUR;
/* Column values are borrowed until the next step or reset of st. */
const char *store_col_text(struct store_stmt *st, int idx); /* NULL for SQL NULL */
/* Copies a text column into a fixed field of cap bytes (SQL NULL gives ""); a value that does
 * not fit is never cut silently: it is the statement's sticky error (ERR_INTERNAL, naming
 * the column and the field's size), which store_one and store_collect report. */
void store_col_copy(struct store_stmt *st, int idx, char *dst, size_t cap);
const void *store_col_blob(struct store_stmt *st, int idx, size_t *n);
/* A copy of a blob column: new buffer in *out (caller frees; at least 1 byte), *n bytes. */
int store_col_blob_dup(struct store_stmt *st, int idx, void **out, size_t *n, struct err *e) WUR;
int64_t store_col_int64(struct store_stmt *st, int idx);
bool store_col_is_null(struct store_stmt *st, int idx);
void store_reset(struct store_stmt *st);
/* Rows changed by the last INSERT/UPDATE/DELETE on c. */
int64_t store_changes(struct store_conn *c);

/* Runs one statement that returns no rows (no parameters); for DDL and transactions. */
int store_exec(struct store_conn *c, const char *sql, struct err *e) WUR;

/* Transactions.  begin takes the write lock at once ("BEGIN IMMEDIATE" on SQLite) so a
 * transaction never fails half-way for lock upgrades.  A begin inside an open transaction
 * nests (a savepoint, at most STORE_TX_DEPTH_MAX deep): its commit keeps its changes for the
 * outer commit, its rollback undoes only them; nothing is durable or visible to other
 * connections before the outermost commit.  A caller that groups several steps in one
 * transaction saves a commit per step (the end of a process: one instead of four). */
#define STORE_TX_DEPTH_MAX 8
int store_tx_begin(struct store_conn *c, struct err *e) WUR;
/* A transaction that is safe without the write lock because it locks the rows it reads
 * before writing them (store_row_locks below): on PostgreSQL any number of them run at
 * once, on every node, and only a store_tx_begin transaction excludes them (it waits for
 * those under way and they wait for it).  On SQLite it is store_tx_begin.  For the hot
 * path of processes (create, claim, status, log, end): code inside one may only read
 * rows it has locked, or rows no other row transaction writes.  A store_tx_begin nested
 * inside one takes the write lock first (it may then fail with a deadlock, which
 * PostgreSQL detects: keep such nesting off the hot path). */
int store_tx_begin_rows(struct store_conn *c, struct err *e) WUR;
/* Whether c locks the rows a row transaction reads (PostgreSQL: then a SELECT that reads
 * a row before writing it needs FOR UPDATE, a queue's claim FOR UPDATE SKIP LOCKED); false
 * where every write transaction runs alone (SQLite), which has no such clauses. */
bool store_row_locks(struct store_conn *c);
/* Inside a row transaction, waits for a turn of its own among the transactions of every
 * node that take the same key (a transaction-scoped advisory lock, released at its end);
 * nothing where write transactions run alone anyway (!store_row_locks). */
int store_tx_turn(struct store_conn *c, int64_t key, struct err *e) WUR;
int store_tx_commit(struct store_conn *c, struct err *e) WUR;
void store_tx_rollback(struct store_conn *c);

/* Group commit of the per-process transitions (store/sqlite_writer.c).  enter gives the
 * connection to write one on, for a caller whose thread's connection is c: on SQLite, when
 * c is not inside a transaction, the store's one writer connection, this thread's alone
 * until leave, inside a transaction that the threads entering meanwhile share (each in a
 * savepoint of its own); elsewhere (PostgreSQL, c inside a transaction) c itself.  NULL on
 * error.  Everything between enter and leave must go through the connection returned (a
 * write on another connection of the store would wait for the writer's lock), and nothing
 * there may wait for another thread's write.  leave takes the caller's result rc (0: keep
 * its writes; else they are undone) and returns once they are committed (or undone): rc,
 * or the commit's failure.  A caller acknowledges nothing before leave returns 0. */
struct store_conn *store_writer_enter(struct store_conn *c, struct err *e) WUR;
int store_writer_leave(struct store_conn *c, struct store_conn *w, int rc, struct err *e) WUR;

/* Steps a statement that returns no rows (binds done by the caller) and resets it.
 * Returns 0 or < 0 on error. */
int store_step_done(struct store_stmt *st, struct err *e) WUR;

/* Reads the current row of st into the object at out (for store_one / store_collect). */
typedef void (*store_read_fn)(struct store_stmt *st, void *out);

/* Steps st once and resets it: a row is read into out; no row is ERR_NOT_FOUND
 * "<what> not found: <key>". */
int store_one(struct store_stmt *st, store_read_fn read, void *out, const char *what, const char *key,
	      struct err *e) WUR;
/* store_step_done for a write of one named row (what: "Project"): a duplicate is
 * ERR_CONFLICT "<what> already exists: <name>" (name NULL: the store's own message); with
 * key set, a write that changed no row is ERR_NOT_FOUND "<what> not found: <key>". */
int store_write_one(struct store_conn *c, struct store_stmt *st, const char *what, const char *name, const char *key,
		    struct err *e) WUR;
/* Steps st to its end and resets it, reading every row into a new array of elem_size-byte
 * elements (*out, caller frees; NULL when there are none) of *n entries. */
int store_collect(struct store_stmt *st, size_t elem_size, store_read_fn read, void **out, size_t *n,
		  struct err *e) WUR;
/* The same into a new JSON array (*out): row(st, ctx) makes one element of each row (NEW;
 * NULL is out of memory). */
typedef json_t *(*store_json_row_fn)(struct store_stmt *st, void *ctx);
int store_collect_json(struct store_stmt *st, store_json_row_fn row, void *ctx, json_t **out, struct err *e) WUR;

/* SQL assembled at run time from constant fragments (a list filter): returns a stable
 * pointer for the text (equal texts give the same pointer), so store_prepare can cache the
 * statement.  The number of distinct texts is bounded by STORE_SQL_INTERN_MAX (then
 * ERR_LIMIT): callers must build SQL only from a bounded set of fragments. */
#define STORE_SQL_INTERN_MAX 4096
const char *store_sql_intern(const char *sql, struct err *e);

/* Marks c as a connection that serves reads (the HTTP event loop's GETs: lists, counts,
 * status): on SQLite it then reads through a memory map of the database file, whose pages
 * come from the kernel's page cache without a pread and a copy each — list/count on a large
 * store take half the time.  Connections that write (workers, the queue) read with pread:
 * each commit makes SQLite drop every other connection's map at its next read (a munmap and
 * a TLB shootdown across the server's threads), which cost the process queue a third of
 * its CPU when every connection kept one (bench/RESULTS.md).  Idempotent and cheap. */
void store_prefer_map(struct store_conn *c);

/* Housekeeping the backend needs now and then (the process queue calls it at every
 * heartbeat): on SQLite, a write-ahead log past wal_limit bytes is checkpointed and
 * truncated (TRUNCATE: it waits briefly for readers and writers to step aside, and gives up
 * for now when they do not), so that the log neither grows without bound under steady load
 * nor keeps its size once idle.  *wal_bytes: the log's size afterwards (0 where there is
 * none).  PostgreSQL: nothing to do. */
int store_maintain(struct store_conn *c, uint64_t wal_limit, uint64_t *wal_bytes, struct err *e) WUR;

/* Backend access for modules that need backend-specific features (the inventory query
 * executors, inventory/executor.h).  Returns the backend's name ("sqlite",
 * "postgresql"), the store c belongs to and c's native handle (sqlite3 *, PGconn *). */
const char *store_backend(struct store *s);
struct store *store_conn_store(struct store_conn *c);
void *store_native(struct store_conn *c);

/* For such a module that could not bring c's session back to idle (a transaction or a
 * libpq pipeline it left open): drops the session and opens a new one at once, with the
 * store's settings; nothing of the old session survives (statements are prepared again on
 * use).  A lost connection is left for the next use to reconnect.  Nothing on SQLite.  Not
 * inside a store transaction. */
void store_conn_reset(struct store_conn *c);

/* Wake-ups across the nodes of one database (PostgreSQL's NOTIFY/LISTEN).  On a store
 * that serves one node (SQLite) store_notify does nothing and store_listen returns NULL
 * without an error (e->code ERR_OK).
 *
 * store_notify sends payload (at most 7,900 bytes) on channel: delivered to every
 * listener, this node's included, when the open transaction commits (at once outside one).
 * A listener is a connection of its own; store_listener_wait blocks until a notification
 * (1: channel and payload copied, cut to fit), wake_fd readable (2; -1: none), timeout_ms
 * (0; -1: none) or an error (< 0: the connection was lost — the next wait reconnects and
 * listens again; notifications sent meanwhile are lost, so callers look at the store
 * again after an error). */
int store_notify(struct store_conn *c, const char *channel, const char *payload, struct err *e) WUR;
struct store_listener;
struct store_listener *store_listen(struct store *s, const char *const *channels, size_t n, struct err *e);
int store_listener_wait(struct store_listener *l, int wake_fd, int timeout_ms, char *channel, size_t ccap,
			char *payload, size_t pcap, struct err *e);
void store_listener_close(struct store_listener *l);

/* For caches of what authentication reads (auth/apikey_cache.h): a number that moves after
 * every committed change of a user or an API key, read before the rows it vouches for.
 * False when the store cannot tell (PostgreSQL: other nodes change the rows unseen), and
 * then nothing read from those tables may be reused.  Thread-safe. */
bool store_auth_generation(struct store *s, uint64_t *gen);

/* Data folder the store lives in (for files kept beside the database); NULL on PostgreSQL. */
const char *store_data_dir(struct store *s);

#endif
