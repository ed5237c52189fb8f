/* Unit tests for the PostgreSQL backend (pg.c, pg_sql.c): the store's operations against a
 * real server.  The server is $ACCORD_TEST_DB (a cluster URL whose user may create
 * databases), else a throwaway cluster this program starts with scripts/pg-cluster and
 * stops at the end.  Without Debian's PostgreSQL binaries the server tests are skipped
 * with a message (the text tests still run); scripts/deps installs them, so CI runs all. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/buf.h"
#include "base/limits.h"
#include "base/str.h"
#include "store/migrations.h"
#include "store/pg_sql.h"
#include "store/pq_api.h"
#include "store/process_logs.h"
#include "store/processes.h"
#include "store/store.h"

#include "pg_cluster.h"

static char url[600]; /* this run's own database */
static bool have_server;
static struct store *store;
static struct store_conn *db;

/* ---- text work, no server ---- */

static void rewrites(const char *sql, const char *want, int want_n)
{
	struct err e;
	int n = -1;
	char *got = pg_sql_rewrite(sql, &n, &e);

	assert_non_null(got);
	assert_string_equal(got, want);
	assert_int_equal(n, want_n);
	free(got);
}

static void test_placeholders(void **state)
{
	struct err e;
	int n;
	(void)state;

	rewrites("SELECT a FROM t WHERE b = ? AND c = ?", "SELECT a FROM t WHERE b = $1 AND c = $2", 2);
	/* SQLite's numbering: a bare ? follows the largest number so far */
	rewrites("VALUES (?, ?, ?9, ?10, ?9, ?)", "VALUES ($1, $2, $9, $10, $9, $11)", 11);
	rewrites("WHERE (?1 IS NULL OR x = ?1) AND (? is not  null)",
		 "WHERE ($1::text IS NULL OR x = $1) AND ($2::text is not  null)", 2);
	/* quotes and comments are left alone */
	rewrites("SELECT '?', \"a?\", 'it''s ?' -- ?\n, ? /* ? */", "SELECT '?', \"a?\", 'it''s ?' -- ?\n, $1 /* ? */",
		 1);
	rewrites("SELECT x FROM processes INDEXED BY processes_due WHERE y = ?", "SELECT x FROM processes WHERE y = $1",
		 1);
	rewrites("SELECT 1", "SELECT 1", 0);
	assert_null(pg_sql_rewrite("SELECT ?0", &n, &e));
	assert_null(pg_sql_rewrite("SELECT ?99999", &n, &e));
}

static void test_urls(void **state)
{
	(void)state;
	assert_true(pg_sql_is_url("postgresql://u:p@h:5432/db"));
	assert_true(pg_sql_is_url("postgres://h/db"));
	assert_true(pg_sql_is_url("postgresql://"));
	assert_true(pg_sql_is_url("host=/tmp dbname=accord"));
	assert_true(pg_sql_is_url("dbname=accord"));
	assert_false(pg_sql_is_url("sqlite:/data/accord.db"));
	assert_false(pg_sql_is_url("/data/accord.db"));
	assert_false(pg_sql_is_url("sqlite:/data/ghost=1/accord.db"));
	assert_false(pg_sql_is_url("/data/xhost=1/a.db"));
}

static void test_clean_msg(void **state)
{
	char out[64];
	(void)state;

	pg_sql_url_password("postgresql://bob:s%40cret@h:5/db?x=1", out, sizeof out);
	assert_string_equal(out, "s%40cret");
	pg_sql_url_password("postgresql://bob@h/db", out, sizeof out);
	assert_string_equal(out, "");
	pg_sql_url_password("host=h password = 'a b\\'c' dbname=d", out, sizeof out);
	assert_string_equal(out, "a b\\'c");
	pg_sql_url_password("host=h password=abc dbname=d", out, sizeof out);
	assert_string_equal(out, "abc");
	pg_sql_url_password("host=h dbname=d", out, sizeof out);
	assert_string_equal(out, "");

	pg_sql_clean_msg("FATAL:  bad\n\tpassword s3cret! (s3cret)\n", "s3cret", out, sizeof out);
	assert_string_equal(out, "FATAL: bad password ***! (***)");
	pg_sql_clean_msg("no secret", NULL, out, sizeof out);
	assert_string_equal(out, "no secret");
	pg_sql_clean_msg("a-long-message-that-is-cut", "", out, 8);
	assert_int_equal(strlen(out), 7);
}

/* ---- against a server ---- */

static void exec_ok(const char *sql)
{
	struct err e;
	if (store_exec(db, sql, &e))
		fail_msg("%s: %s", sql, e.msg);
}

static int setup(void **state)
{
	struct err e;
	int rc = pg_cluster_start("test_store_pg");
	(void)state;

	if (rc > 0)
		return 0;
	if (rc < 0 || pg_cluster_new_db("unit_store", url, sizeof url))
		return -1;
	limits.store_value_bytes = 1000;
	if (!(store = store_open(url, &e))) {
		fprintf(stderr, "store_open %s: %s\n", url, e.msg);
		return -1;
	}
	if (!(db = store_conn(store, &e)))
		return -1;
	have_server = true;
	exec_ok("CREATE TABLE t (k TEXT NOT NULL UNIQUE, v BYTEA, n BIGINT)");
	return 0;
}

static int teardown(void **state)
{
	(void)state;

	store_close(store);
	return pg_cluster_stop();
}

#define NEED_SERVER()                                                                                                  \
	do {                                                                                                           \
		if (!have_server)                                                                                      \
			skip();                                                                                        \
	} while (0)

static const char INSERT[] = "INSERT INTO t (k, v, n) VALUES (?, ?, ?)";

static void test_backend_and_migrations(void **state)
{
	static const char SQL[] = "SELECT count(*), max(number) FROM schema_migrations";
	struct store_stmt *st;
	struct err e;
	(void)state;
	NEED_SERVER();

	assert_string_equal(store_backend(store), "postgresql");
	assert_non_null(store_native(db));
	assert_int_equal(pq.status(store_native(db)), CONNECTION_OK);
	assert_null(store_data_dir(store));
	assert_non_null(st = store_prepare(db, SQL, &e));
	assert_int_equal(store_step(st, &e), STORE_ROW);
	/* every migration this build has, applied (numbers may leave gaps) */
	size_t n = 0;
	int last = 0;
	for (const struct migration *m = store_migrations_pg; m->name; m++, n++)
		last = m->number;
	assert_int_equal(store_col_int64(st, 0), (int64_t)n);
	assert_int_equal(store_col_int64(st, 1), last);
	store_reset(st);
}

static void test_values_round_trip(void **state)
{
	static const char SQL[] = "SELECT k, v, n, v IS NULL, length(v) FROM t WHERE k = ?";
	static const unsigned char bytes[] = {0, 1, 0xff, '\\', 'x', 0};
	struct store_stmt *st;
	const void *p;
	size_t n;
	struct err e;
	(void)state;
	NEED_SERVER();

	assert_non_null(st = store_prepare(db, INSERT, &e));
	store_bind_text(st, 1, "round");
	store_bind_blob(st, 2, bytes, sizeof bytes);
	store_bind_int64(st, 3, INT64_MIN + 1);
	assert_int_equal(store_step_done(st, &e), 0);
	assert_int_equal(store_changes(db), 1);
	store_bind_text(st, 1, "nulls");
	store_bind_null(st, 2);
	store_bind_text(st, 3, NULL);
	assert_int_equal(store_step_done(st, &e), 0);

	assert_non_null(st = store_prepare(db, SQL, &e));
	store_bind_text(st, 1, "round");
	assert_int_equal(store_step(st, &e), STORE_ROW);
	assert_string_equal(store_col_text(st, 0), "round");
	p = store_col_blob(st, 1, &n);
	assert_int_equal(n, sizeof bytes);
	assert_memory_equal(p, bytes, sizeof bytes);
	assert_true(store_col_int64(st, 2) == INT64_MIN + 1);
	assert_int_equal(store_col_int64(st, 3), 0); /* a boolean reads as 0/1 */
	assert_int_equal(store_col_int64(st, 4), sizeof bytes);
	assert_int_equal(store_step(st, &e), STORE_DONE);
	store_reset(st);

	store_bind_text(st, 1, "nulls");
	assert_int_equal(store_step(st, &e), STORE_ROW);
	assert_true(store_col_is_null(st, 1));
	assert_true(store_col_is_null(st, 2));
	assert_null(store_col_blob(st, 1, &n));
	assert_int_equal(store_col_int64(st, 3), 1);
	store_reset(st);
}

/* The same statement with an integer, then text, in one parameter: prepared per type. */
static void test_parameter_types_vary(void **state)
{
	static const char SQL[] = "SELECT count(*) FROM t WHERE k = ? AND (? IS NULL OR n > ?)";
	struct store_stmt *st;
	struct err e;
	(void)state;
	NEED_SERVER();

	assert_non_null(st = store_prepare(db, SQL, &e));
	for (int i = 0; i < 3; i++) {
		store_bind_text(st, 1, "round");
		store_bind_null(st, 2);
		store_bind_int64(st, 3, 0);
		assert_int_equal(store_step(st, &e), STORE_ROW);
		assert_int_equal(store_col_int64(st, 0), 1);
		store_reset(st);
		store_bind_text(st, 1, "round");
		store_bind_text(st, 2, "set");
		store_bind_text(st, 3, "5");
		assert_int_equal(store_step(st, &e), STORE_ROW);
		assert_int_equal(store_col_int64(st, 0), 0);
		store_reset(st);
	}
}

static void test_conflict_and_too_large(void **state)
{
	static char big[1201];
	struct store_stmt *st;
	struct err e;
	(void)state;
	NEED_SERVER();

	assert_non_null(st = store_prepare(db, INSERT, &e));
	store_bind_text(st, 1, "dup");
	assert_int_equal(store_step_done(st, &e), 0);
	store_bind_text(st, 1, "dup");
	assert_int_equal(store_step_done(st, &e), -ERR_CONFLICT);
	assert_non_null(strstr(e.msg, "duplicate"));

	memset(big, 'a', sizeof big - 1);
	store_bind_text(st, 1, big);
	assert_int_equal(store_step_done(st, &e), -ERR_TOO_LARGE);
	assert_non_null(strstr(e.msg, "1200 bytes"));
	store_bind_text(st, 1, "fits"); /* reset forgot the error */
	assert_int_equal(store_step_done(st, &e), 0);
}

/* PostgreSQL's insufficient-resources class: a full disk is ERR_NO_SPACE (507, saying the
 * database's disk is full) as SQLite's SQLITE_FULL, the others ERR_UNAVAILABLE (503). */
static void test_insufficient_resources(void **state)
{
	static const struct {
		const char *sql;
		int code;
		const char *msg;
	} cases[] = {
	    {"DO $$ BEGIN RAISE EXCEPTION 'could not extend file' USING ERRCODE = 'disk_full'; END $$", -ERR_NO_SPACE,
	     STORE_NO_SPACE ": could not extend file"},
	    {"DO $$ BEGIN RAISE EXCEPTION 'out of memory' USING ERRCODE = 'out_of_memory'; END $$", -ERR_UNAVAILABLE,
	     "database out of resources (53200): out of memory"},
	    {"SELECT count(*) FROM (SELECT g FROM generate_series(1, 200000) g ORDER BY g DESC) s", -ERR_UNAVAILABLE,
	     "database out of resources (53400): temporary file size exceeds temp_file_limit"},
	};
	struct err e;
	(void)state;
	NEED_SERVER();

	exec_ok("SET work_mem = '64kB'");
	exec_ok("SET temp_file_limit = '64kB'");
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		assert_int_equal(store_exec(db, cases[i].sql, &e), cases[i].code);
		if (strncmp(e.msg, cases[i].msg, strlen(cases[i].msg)) != 0)
			fail_msg("%s: %s", cases[i].sql, e.msg);
	}
	exec_ok("RESET temp_file_limit");
	exec_ok("RESET work_mem");
}

static void read_small(struct store_stmt *st, void *out)
{
	store_col_copy(st, 0, out, 4);
}

static void test_column_longer_than_its_field(void **state)
{
	static const char SQL[] = "SELECT k FROM t WHERE k = ?";
	struct store_stmt *st;
	char out[4];
	struct err e;
	(void)state;
	NEED_SERVER();

	assert_non_null(st = store_prepare(db, SQL, &e));
	store_bind_text(st, 1, "round");
	assert_int_equal(store_one(st, read_small, out, "row", "round", &e), -ERR_INTERNAL);
	assert_non_null(strstr(e.msg, "column 0 is longer than its field (limit 3 bytes)"));
	store_bind_text(st, 1, "nope");
	assert_int_equal(store_one(st, read_small, out, "row", "nope", &e), -ERR_NOT_FOUND);
}

static int64_t count_k(const char *k)
{
	static const char SQL[] = "SELECT count(*) FROM t WHERE k = ?";
	struct store_stmt *st;
	struct err e;
	int64_t n;

	assert_non_null(st = store_prepare(db, SQL, &e));
	store_bind_text(st, 1, k);
	assert_int_equal(store_step(st, &e), STORE_ROW);
	n = store_col_int64(st, 0);
	store_reset(st);
	return n;
}

static void test_transactions(void **state)
{
	struct store_stmt *st;
	struct err e;
	(void)state;
	NEED_SERVER();

	assert_int_equal(store_tx_begin(db, &e), 0);
	assert_non_null(st = store_prepare(db, INSERT, &e));
	store_bind_text(st, 1, "tx-gone");
	assert_int_equal(store_step_done(st, &e), 0);
	store_tx_rollback(db);
	assert_int_equal(count_k("tx-gone"), 0);

	assert_int_equal(store_tx_begin(db, &e), 0);
	store_bind_text(st, 1, "tx-kept");
	assert_int_equal(store_step_done(st, &e), 0);
	assert_int_equal(store_tx_commit(db, &e), 0);
	assert_int_equal(count_k("tx-kept"), 1);

	/* A statement failed inside and its caller went on: PostgreSQL answers that COMMIT
	 * with a rollback, which must not pass for a commit (the writes are gone). */
	assert_int_equal(store_tx_begin_rows(db, &e), 0);
	store_bind_text(st, 1, "tx-lost");
	assert_int_equal(store_step_done(st, &e), 0);
	assert_int_not_equal(store_exec(db, "SELECT pg_advisory_xact_lock_shared(1, 2, 3)", &e), 0);
	assert_int_not_equal(store_tx_commit(db, &e), 0);
	assert_non_null(strstr(e.msg, "rolled back"));
	assert_int_equal(count_k("tx-lost"), 0);
	assert_int_equal(store_tx_begin(db, &e), 0); /* the session serves the next one */
	assert_int_equal(store_tx_commit(db, &e), 0);
}

/* The server ends our session (a restart, a failover): the call at hand fails with 503's
 * code, the next one reconnects and prepares again. */
static void test_reconnects(void **state)
{
	struct err e;
	int rc;
	(void)state;
	NEED_SERVER();

	assert_int_equal(count_k("round"), 1);
	assert_int_equal(pg_cluster_psql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
					 " WHERE datname = 'unit_store' AND pid <> pg_backend_pid()"),
			 0);
	rc = store_exec(db, "SELECT 1", &e);
	if (rc) { /* libpq may notice the loss only now */
		assert_int_equal(rc, -ERR_UNAVAILABLE);
		assert_non_null(strstr(e.msg, "database unavailable"));
		sleep(1); /* a reconnect is tried at most once a second */
	}
	assert_int_equal(count_k("round"), 1);
}

static void test_start_errors_name_the_database_never_the_password(void **state)
{
	char bad[700], host[256];
	const char *h;
	struct err e;
	(void)state;
	NEED_SERVER();

	assert_int_equal(pg_cluster_psql("DROP ROLE IF EXISTS bob"), 0);
	assert_int_equal(pg_cluster_psql("CREATE ROLE bob LOGIN SUPERUSER PASSWORD 'right-pass'"), 0);
	h = strstr(pg_cluster_url, "host=");
	assert_non_null(h);
	assert_int_equal(str_fmt(host, sizeof host, "%.*s", (int)strcspn(h + 5, "&"), h + 5), 0);

	assert_int_equal(str_fmt(bad, sizeof bad, "postgresql://bob:Wr0ng-s3cret@/unit_store?host=%s", host), 0);
	assert_null(store_open(bad, &e));
	assert_non_null(strstr(e.msg, "password authentication failed"));
	assert_non_null(strstr(e.msg, "\"unit_store\""));
	assert_null(strstr(e.msg, "Wr0ng-s3cret"));

	/* a wrong password in a malformed URL that libpq quotes back */
	assert_int_equal(
	    str_fmt(bad, sizeof bad, "postgresql://bob:Wr0ng-s3cret@/unit_store?host=%s&port=x%%zzWr0ng-s3cret", host),
	    0);
	assert_null(store_open(bad, &e));
	assert_null(strstr(e.msg, "Wr0ng-s3cret"));

	assert_null(store_open("postgresql:///unit_store?host=/nonexistent-accord-dir&connect_timeout=2", &e));
	assert_int_equal(e.code, ERR_UNAVAILABLE);
	assert_non_null(strstr(e.msg, "/nonexistent-accord-dir"));
	assert_non_null(strstr(e.msg, "\"unit_store\""));

	assert_int_equal(str_fmt(bad, sizeof bad, "postgresql://bob:right-pass@/unit_store?host=%s", host), 0);
	struct store *s = store_open(bad, &e);
	if (!s)
		fail_msg("store_open as bob: %s", e.msg);
	store_close(s);
}

/* ---- row transactions: many at once, on every node (store_tx_begin_rows) ---- */

static void enqueue(const char *id, int64_t at)
{
	static const char SQL[] = "INSERT INTO processes (instance_id, org_id, initiator_id, initiator, status,"
				  " created_at, last_updated_at, entry_point) VALUES (?, 'o', 'u', 'u', 'ENQUEUED', ?, ?,"
				  " 'default')";
	struct store_stmt *st;
	struct err e;

	assert_non_null(st = store_prepare(db, SQL, &e));
	store_bind_text(st, 1, id);
	store_bind_int64(st, 2, at);
	store_bind_int64(st, 3, at);
	if (store_step_done(st, &e))
		fail_msg("enqueue %s: %s", id, e.msg);
}

/* The row a claim under way on another node holds (its claim's SELECT … FOR UPDATE). */
static void hold_row(struct store_conn *c, const char *id)
{
	static const char SQL[] = "SELECT status FROM processes WHERE instance_id = ? FOR UPDATE";
	struct store_stmt *st;
	struct err e;

	assert_int_equal(store_tx_begin_rows(c, &e), 0);
	assert_non_null(st = store_prepare(c, SQL, &e));
	store_bind_text(st, 1, id);
	assert_int_equal(store_step(st, &e), STORE_ROW);
	store_reset(st);
}

/* Two nodes claim at once: each skips the row the other holds instead of waiting for it
 * (FOR UPDATE SKIP LOCKED under the shared write lock); a serialized transaction waits
 * for the row transactions under way.  A regression blocks: statement_timeout ends it. */
static void test_claims_skip_each_other(void **state)
{
	struct store *other;
	struct store_conn *c2;
	struct process p;
	struct err e;
	(void)state;
	NEED_SERVER();

	assert_true(store_row_locks(db));
	exec_ok("DELETE FROM processes");
	enqueue("claim-1", 1);
	enqueue("claim-2", 2);
	if (!(other = store_open(url, &e)) || !(c2 = store_conn(other, &e)))
		fail_msg("second node: %s", e.msg);
	exec_ok("SET statement_timeout = 5000");

	hold_row(c2, "claim-1");
	assert_int_equal(store_process_claim(db, "node-a", 10, &p, &e), 1);
	assert_string_equal(p.instance_id, "claim-2"); /* the older one is held: skipped */
	assert_int_equal(p.status, PS_STARTING);
	store_process_cleanup(&p);
	assert_int_equal(store_process_claim(db, "node-a", 10, &p, &e), 0); /* nothing else free */

	assert_true(store_tx_begin(db, &e) < 0); /* waits for c2: the timeout */
	assert_non_null(strstr(e.msg, "statement timeout"));
	exec_ok("SELECT 1"); /* the failed begin left no transaction open */

	store_tx_rollback(c2);
	assert_int_equal(store_process_claim(db, "node-a", 10, &p, &e), 1);
	assert_string_equal(p.instance_id, "claim-1");
	store_process_cleanup(&p);
	exec_ok("SET statement_timeout = 0");
	store_close(other);
}

/* A status change checks the status under the row's lock: one that another node already
 * made (here a stop before the claim) fails, and nothing of it is kept. */
static void test_transition_checks_the_status_under_lock(void **state)
{
	struct process p;
	struct err e;
	(void)state;
	NEED_SERVER();

	exec_ok("DELETE FROM processes");
	enqueue("cas-1", 1);
	assert_int_equal(store_process_transition(db, "cas-1", PS_BIT(PS_ENQUEUED), PS_CANCELLED, &e), 0);
	assert_int_equal(store_process_claim(db, "node-a", 10, &p, &e), 0);
	assert_true(store_process_transition(db, "cas-1", PS_BIT(PS_ENQUEUED), PS_FAILED, &e) < 0);
	assert_int_equal(e.code, ERR_CONFLICT);
	assert_non_null(strstr(e.msg, "is CANCELLED"));
	assert_int_equal(store_process_get(db, "cas-1", &p, &e), 0);
	assert_int_equal(p.status, PS_CANCELLED);
	store_process_cleanup(&p);
}

struct appender {
	struct store *s;
	int rc;
	struct err e;
};

static void *append_in_row_tx(void *arg)
{
	struct appender *a = arg;
	struct store_conn *c = store_conn(a->s, &a->e);

	if (!c || (a->rc = store_tx_begin_rows(c, &a->e)))
		return (a->rc = -1), NULL;
	if ((a->rc = store_process_log_append(c, "log-1", "bb", 2, NULL, &a->e)))
		store_tx_rollback(c);
	else
		a->rc = store_tx_commit(c, &a->e);
	return NULL;
}

/* Two row transactions append to one log at once: the later one waits for the earlier,
 * then writes after its chunk (no duplicate key ending its transaction). */
static void test_log_appends_of_two_row_transactions(void **state)
{
	struct appender a = {.s = store};
	struct store *other;
	struct store_conn *c2;
	struct buf b;
	uint64_t size;
	pthread_t t;
	struct err e;
	(void)state;
	NEED_SERVER();

	enqueue("log-1", 5);
	if (!(other = store_open(url, &e)) || !(c2 = store_conn(other, &e)))
		fail_msg("second node: %s", e.msg);
	assert_int_equal(store_tx_begin_rows(c2, &e), 0);
	assert_int_equal(store_process_log_append(c2, "log-1", "aaaa", 4, NULL, &e), 0);
	assert_int_equal(pthread_create(&t, NULL, append_in_row_tx, &a), 0);
	usleep(300 * 1000); /* the thread's insert now waits for c2's */
	assert_int_equal(store_tx_commit(c2, &e), 0);
	pthread_join(t, NULL);
	if (a.rc)
		fail_msg("the second append: %s", a.e.msg);
	assert_int_equal(store_process_log_size(db, "log-1", &size, &e), 0);
	assert_int_equal(size, 6);
	buf_init(&b, 0);
	assert_int_equal(store_process_log_read(db, "log-1", 0, 6, &b, &e), 0);
	assert_int_equal(b.len, 6);
	assert_memory_equal(b.data, "aaaabb", 6);
	buf_cleanup(&b);
	store_close(other);
}

struct opener {
	struct store *s;
	struct err e;
};

static void *open_one(void *arg)
{
	struct opener *o = arg;

	o->s = store_open(url, &o->e);
	return NULL;
}

/* Two nodes starting at once on a new database migrate it once (advisory lock). */
static void test_concurrent_start_migrates_once(void **state)
{
	static const char SQL[] = "SELECT count(*) FROM schema_migrations WHERE number = 1";
	struct opener o[2] = {0};
	pthread_t t[2];
	struct store_stmt *st;
	struct err e;
	(void)state;
	NEED_SERVER();

	store_close(store);
	store = NULL;
	assert_int_equal(pg_cluster_psql("DROP DATABASE unit_store WITH (FORCE)"), 0);
	assert_int_equal(pg_cluster_psql("CREATE DATABASE unit_store"), 0);
	for (int i = 0; i < 2; i++)
		assert_int_equal(pthread_create(&t[i], NULL, open_one, &o[i]), 0);
	for (int i = 0; i < 2; i++) {
		pthread_join(t[i], NULL);
		if (!o[i].s)
			fail_msg("store_open %d: %s", i, o[i].e.msg);
	}
	store_close(o[1].s);
	store = o[0].s;
	assert_non_null(db = store_conn(store, &e));
	assert_non_null(st = store_prepare(db, SQL, &e));
	assert_int_equal(store_step(st, &e), STORE_ROW);
	assert_int_equal(store_col_int64(st, 0), 1);
	store_reset(st);
}

struct taker {
	struct store_conn *got;
	bool kept_in_tx; /* a connection released inside a transaction stayed with its thread */
	int rc;
	struct err e;
};

static void *take_and_release(void *arg)
{
	struct taker *t = arg;

	if (!(t->got = store_conn(store, &t->e)) || (t->rc = store_tx_begin(t->got, &t->e)))
		return NULL;
	store_conn_release(store);
	t->kept_in_tx = store_conn(store, &t->e) == t->got;
	t->rc = store_tx_commit(t->got, &t->e);
	store_conn_release(store);
	return NULL;
}

/* A thread's connection given back (store_conn_release) serves the next thread that has
 * none, instead of a new session; one inside a transaction stays with its thread. */
static void test_released_connection_serves_another_thread(void **state)
{
	struct taker t[2] = {0};
	pthread_t th;
	(void)state;
	NEED_SERVER();

	for (int i = 0; i < 2; i++) {
		assert_int_equal(pthread_create(&th, NULL, take_and_release, &t[i]), 0);
		pthread_join(th, NULL);
		if (!t[i].got || t[i].rc)
			fail_msg("thread %d: %s", i, t[i].e.msg);
		assert_true(t[i].kept_in_tx);
	}
	assert_ptr_equal(t[1].got, t[0].got);
	assert_ptr_not_equal(t[0].got, db); /* the main thread's own is not given away */
}

int main(void)
{
	const struct CMUnitTest text[] = {
	    cmocka_unit_test(test_placeholders),
	    cmocka_unit_test(test_urls),
	    cmocka_unit_test(test_clean_msg),
	};
	const struct CMUnitTest server[] = {
	    cmocka_unit_test(test_backend_and_migrations),
	    cmocka_unit_test(test_values_round_trip),
	    cmocka_unit_test(test_parameter_types_vary),
	    cmocka_unit_test(test_conflict_and_too_large),
	    cmocka_unit_test(test_insufficient_resources),
	    cmocka_unit_test(test_column_longer_than_its_field),
	    cmocka_unit_test(test_transactions),
	    cmocka_unit_test(test_reconnects),
	    cmocka_unit_test(test_claims_skip_each_other),
	    cmocka_unit_test(test_transition_checks_the_status_under_lock),
	    cmocka_unit_test(test_log_appends_of_two_row_transactions),
	    cmocka_unit_test(test_released_connection_serves_another_thread),
	    cmocka_unit_test(test_start_errors_name_the_database_never_the_password),
	    cmocka_unit_test(test_concurrent_start_migrates_once),
	};
	int rc = cmocka_run_group_tests(text, NULL, NULL);

	return rc | cmocka_run_group_tests(server, setup, teardown);
}
