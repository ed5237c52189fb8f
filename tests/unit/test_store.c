/* Unit tests for store.c and the SQLite backend: errors of binds and column reads are
 * sticky and come back from the next step (or store_stmt_check), never as a NULL stored
 * or read in place of the value (issue 15 part 5).  SQLite's allocator is wrapped so a
 * test can fail its next allocation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <pthread.h>
#include <sqlite3.h>

#include "base/str.h"
#include "store/access.h"
#include "store/store.h"

static char dir[64];
static struct store *store;
static struct store_conn *db;

/* ---- an allocator that fails when armed ---- */

static sqlite3_mem_methods real_mem;
static bool fail_next;

static void *failing_malloc(int n)
{
	if (fail_next) {
		fail_next = false;
		return NULL;
	}
	return real_mem.xMalloc(n);
}

static void *failing_realloc(void *p, int n)
{
	if (fail_next) {
		fail_next = false;
		return NULL;
	}
	return real_mem.xRealloc(p, n);
}

static void install_failing_allocator(void)
{
	sqlite3_mem_methods m;

	assert_int_equal(sqlite3_config(SQLITE_CONFIG_GETMALLOC, &real_mem), SQLITE_OK);
	m = real_mem;
	m.xMalloc = failing_malloc;
	m.xRealloc = failing_realloc;
	assert_int_equal(sqlite3_config(SQLITE_CONFIG_MALLOC, &m), SQLITE_OK);
	/* Small allocations would otherwise come from the connection's lookaside pool. */
	assert_int_equal(sqlite3_config(SQLITE_CONFIG_LOOKASIDE, 0, 0), SQLITE_OK);
}

static void exec_ok(const char *sql)
{
	struct err e;
	if (store_exec(db, sql, &e))
		fail_msg("%s: %s", sql, e.msg);
}

static int setup(void **state)
{
	char url[96];
	struct err e;
	(void)state;

	assert_int_equal(str_fmt(dir, sizeof dir, "/tmp/accord-store-test-XXXXXX"), 0);
	assert_non_null(mkdtemp(dir));
	assert_int_equal(str_fmt(url, sizeof url, "sqlite:%s/accord.db", dir), 0);
	store = store_open(url, &e);
	if (!store)
		fail_msg("store_open: %s", e.msg);
	db = store_conn(store, &e);
	assert_non_null(db);
	exec_ok("CREATE TABLE t (k TEXT NOT NULL, v BLOB, n INTEGER)");
	/* Values of at most 1000 bytes on this connection. */
	sqlite3_limit(store_native(db), SQLITE_LIMIT_LENGTH, 1000);
	return 0;
}

static int teardown(void **state)
{
	char cmd[96];
	(void)state;

	store_close(store);
	assert_int_equal(str_fmt(cmd, sizeof cmd, "rm -rf %s", dir), 0);
	return system(cmd) == 0 ? 0 : -1;
}

static int64_t count_rows(void)
{
	static const char SQL[] = "SELECT count(*) FROM t";
	struct store_stmt *st;
	struct err e;
	int64_t n;

	assert_non_null(st = store_prepare(db, SQL, &e));
	assert_int_equal(store_step(st, &e), STORE_ROW);
	n = store_col_int64(st, 0);
	store_reset(st);
	return n;
}

static const char INSERT[] = "INSERT INTO t (k, v, n) VALUES (?, ?, ?)";

static void test_blob_over_the_limit_fails_the_step(void **state)
{
	static unsigned char big[1001];
	struct store_stmt *st;
	struct err e;
	int64_t before = count_rows();
	(void)state;

	assert_non_null(st = store_prepare(db, INSERT, &e));
	store_bind_text(st, 1, "k");
	store_bind_blob(st, 2, big, sizeof big);
	store_bind_int64(st, 3, 1);
	assert_int_equal(store_step(st, &e), -ERR_TOO_LARGE);
	assert_int_equal(e.code, ERR_TOO_LARGE);
	assert_non_null(strstr(e.msg, "1001 bytes"));
	assert_non_null(strstr(e.msg, "limit 1000 bytes"));
	store_reset(st);
	assert_int_equal(count_rows(), before); /* nothing stored, not even a NULL */

	/* reset forgets the error: the statement works again */
	store_bind_text(st, 1, "k");
	store_bind_blob(st, 2, big, 900); /* the whole row must fit too */
	store_bind_int64(st, 3, 1);
	assert_int_equal(store_step_done(st, &e), 0);
	assert_int_equal(count_rows(), before + 1);
}

static void test_text_over_the_limit_fails_the_step(void **state)
{
	char big[1202];
	struct store_stmt *st;
	struct err e;
	(void)state;

	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	assert_non_null(st = store_prepare(db, INSERT, &e));
	store_bind_text(st, 1, big); /* the first error wins: 1201 bytes */
	store_bind_blob(st, 2, big, 1100);
	store_bind_int64(st, 3, 1);
	assert_int_equal(store_step_done(st, &e), -ERR_TOO_LARGE);
	assert_non_null(strstr(e.msg, "1201 bytes"));
}

static void test_access_level_unset_on_failure(void **state)
{
	char big[1202];
	enum access_level level = ACCESS_OWNER;
	struct err e;
	(void)state;

	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	assert_int_equal(store_access_level(db, "PROJECT", big, "u", &level, &e), -ERR_TOO_LARGE);
	assert_int_equal(level, ACCESS_NONE);
}

static void read_text(struct store_stmt *st, void *out)
{
	const char *v = store_col_text(st, 0);
	assert_int_equal(str_fmt(out, 32, "%s", v ? v : "<null>"), 0);
}

static void test_column_out_of_memory_is_not_null(void **state)
{
	static const char SQL[] = "SELECT n FROM t WHERE n = ?";
	static const char SQL_NULL[] = "SELECT NULL";
	struct store_stmt *st;
	char out[32];
	struct err e;
	(void)state;

	exec_ok("INSERT INTO t (k, n) VALUES ('num', 123456789)");
	assert_non_null(st = store_prepare(db, SQL, &e));

	/* Reading an INTEGER as text allocates; that allocation fails. */
	store_bind_int64(st, 1, 123456789);
	assert_int_equal(store_step(st, &e), STORE_ROW);
	fail_next = true;
	assert_null(store_col_text(st, 0));
	fail_next = false;
	assert_int_equal(store_stmt_check(st, &e), -ERR_INTERNAL);
	assert_non_null(strstr(e.msg, "out of memory"));
	assert_int_equal(store_step(st, &e), -ERR_INTERNAL); /* still there */
	store_reset(st);

	/* without a failure the same read gives the value */
	store_bind_int64(st, 1, 123456789);
	assert_int_equal(store_one(st, read_text, out, "row", "num", &e), 0);
	assert_string_equal(out, "123456789");

	/* a real NULL is no error */
	assert_non_null(st = store_prepare(db, SQL_NULL, &e));
	assert_int_equal(store_step(st, &e), STORE_ROW);
	assert_null(store_col_text(st, 0));
	assert_int_equal(store_stmt_check(st, &e), 0);
	store_reset(st);
}

static void failing_read(struct store_stmt *st, void *out)
{
	fail_next = true;
	read_text(st, out);
	fail_next = false;
}

static void test_store_one_and_collect_report_a_failed_read(void **state)
{
	static const char SQL[] = "SELECT n FROM t WHERE n = ?";
	static const char SQL_ALL[] = "SELECT n FROM t WHERE n IS NOT NULL";
	struct store_stmt *st;
	char out[32];
	void *rows = NULL;
	size_t n = 0;
	struct err e;
	(void)state;

	assert_non_null(st = store_prepare(db, SQL, &e));
	store_bind_int64(st, 1, 123456789);
	assert_int_equal(store_one(st, failing_read, out, "row", "num", &e), -ERR_INTERNAL);
	assert_non_null(st = store_prepare(db, SQL_ALL, &e));
	assert_int_equal(store_collect(st, 32, failing_read, &rows, &n, &e), -ERR_INTERNAL);
	assert_null(rows);
}

static void read_small(struct store_stmt *st, void *out)
{
	store_col_copy(st, 0, out, 8);
}

/* Issue 15 part 7: a value longer than the fixed field it is copied into is the
 * statement's error, never a cut value. */
static void test_column_longer_than_its_field(void **state)
{
	static const char SQL[] = "SELECT n FROM t WHERE k = ?";
	struct store_stmt *st;
	char out[8];
	struct err e;
	(void)state;

	exec_ok("INSERT INTO t (k, n) VALUES ('seven', 1234567), ('nine', 123456789)");
	assert_non_null(st = store_prepare(db, SQL, &e));
	store_bind_text(st, 1, "seven");
	assert_int_equal(store_one(st, read_small, out, "row", "seven", &e), 0);
	assert_string_equal(out, "1234567");
	store_bind_text(st, 1, "nine");
	assert_int_equal(store_one(st, read_small, out, "row", "nine", &e), -ERR_INTERNAL);
	assert_non_null(strstr(e.msg, "column 0 is longer than its field (limit 7 bytes)"));
	assert_string_equal(out, "");
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

static void insert_k(const char *k)
{
	struct store_stmt *st;
	struct err e;

	assert_non_null(st = store_prepare(db, INSERT, &e));
	store_bind_text(st, 1, k);
	store_bind_null(st, 2);
	store_bind_int64(st, 3, 0);
	assert_int_equal(store_step_done(st, &e), 0);
}

/* A transaction begun inside another is a savepoint: its rollback undoes only its own
 * changes, its commit leaves them to the outer transaction (the end of a process is one
 * commit around steps that are transactions of their own). */
static void test_nested_transactions_are_savepoints(void **state)
{
	struct err e;
	(void)state;

	assert_int_equal(store_tx_begin(db, &e), 0);
	insert_k("outer");
	assert_int_equal(store_tx_begin(db, &e), 0);
	insert_k("undone");
	store_tx_rollback(db);
	assert_int_equal(store_tx_begin(db, &e), 0);
	insert_k("kept");
	assert_int_equal(store_tx_commit(db, &e), 0);
	assert_int_equal(store_tx_commit(db, &e), 0);
	assert_int_equal(count_k("outer"), 1);
	assert_int_equal(count_k("undone"), 0);
	assert_int_equal(count_k("kept"), 1);

	/* The outer rollback undoes what a nested commit kept. */
	assert_int_equal(store_tx_begin(db, &e), 0);
	assert_int_equal(store_tx_begin(db, &e), 0);
	insert_k("gone");
	assert_int_equal(store_tx_commit(db, &e), 0);
	store_tx_rollback(db);
	assert_int_equal(count_k("gone"), 0);

	/* Nesting is bounded; the open transactions stay usable after the refusal. */
	assert_int_equal(store_tx_begin(db, &e), 0);
	for (int i = 0; i < STORE_TX_DEPTH_MAX; i++)
		assert_int_equal(store_tx_begin(db, &e), 0);
	assert_int_equal(store_tx_begin(db, &e), -ERR_INTERNAL);
	assert_non_null(strstr(e.msg, "nested deeper than"));
	insert_k("deep");
	for (int i = 0; i < STORE_TX_DEPTH_MAX; i++)
		assert_int_equal(store_tx_commit(db, &e), 0);
	assert_int_equal(store_tx_commit(db, &e), 0);
	assert_int_equal(count_k("deep"), 1);
}

/* store_writer_enter/leave (store.h): threads writing at once share the writer's
 * transactions; each one's writes are committed — visible on its own connection — when its
 * leave returns 0, a caller that fails has its own writes undone and no one else's, and
 * what it saw of the others' (a compare-and-set's conflict) is committed when its leave
 * returns too: its next read on its own connection must not find the older state. */
#define WRITERS 6
#define WRITES 40

struct writer_run {
	int n;
	int failed; /* checks that did not hold (cmocka asserts only on the main thread) */
};

static int insert_on(struct store_conn *c, const char *k, struct err *e)
{
	struct store_stmt *st = store_prepare(c, INSERT, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, k);
	store_bind_null(st, 2);
	store_bind_int64(st, 3, 0);
	return store_step_done(st, e);
}

static int64_t count_on(struct store_conn *c, const char *k)
{
	static const char SQL[] = "SELECT count(*) FROM t WHERE k = ?";
	struct store_stmt *st;
	struct err e;
	int64_t n = -1;

	if (!(st = store_prepare(c, SQL, &e)))
		return -1;
	store_bind_text(st, 1, k);
	if (store_step(st, &e) == STORE_ROW)
		n = store_col_int64(st, 0);
	store_reset(st);
	return n;
}

static int64_t count_all_on(struct store_conn *c)
{
	struct store_stmt *st;
	struct err e;
	int64_t n = -1;

	if (!(st = store_prepare(c, "SELECT count(*) FROM t WHERE k LIKE 'w%'", &e)))
		return -1;
	if (store_step(st, &e) == STORE_ROW)
		n = store_col_int64(st, 0);
	store_reset(st);
	return n;
}

static void *writer_thread(void *arg)
{
	struct writer_run *r = arg;
	struct err e;
	struct store_conn *own = store_conn(store, &e), *w;
	char k[32];

	for (int i = 0; own && i < WRITES; i++) {
		bool undo = i % 5 == 4;
		int64_t seen = 0;
		int rc;
		if (str_fmt(k, sizeof k, "w%d-%d", r->n, i) || !(w = store_writer_enter(own, &e))) {
			r->failed++;
			continue;
		}
		r->failed += w == own; /* not inside a transaction: the writer's connection */
		rc = insert_on(w, k, &e);
		if (undo)
			seen = count_all_on(w) - 1; /* the others' rows, committed or in this batch */
		rc = store_writer_leave(own, w, undo ? -ERR_CONFLICT : rc, &e);
		r->failed += undo ? rc != -ERR_CONFLICT : rc != 0;
		r->failed += undo && count_all_on(own) < seen;
		r->failed += count_on(own, k) != (undo ? 0 : 1);
	}
	r->failed += !own;
	return NULL;
}

static void test_writer_group_commit(void **state)
{
	struct writer_run runs[WRITERS];
	pthread_t t[WRITERS];
	struct store_conn *w;
	struct err e;
	char k[32];
	(void)state;

	for (int i = 0; i < WRITERS; i++) {
		runs[i] = (struct writer_run){.n = i};
		assert_int_equal(pthread_create(&t[i], NULL, writer_thread, &runs[i]), 0);
	}
	for (int i = 0; i < WRITERS; i++) {
		assert_int_equal(pthread_join(t[i], NULL), 0);
		assert_int_equal(runs[i].failed, 0);
	}
	for (int i = 0; i < WRITERS; i++)
		for (int j = 0; j < WRITES; j++) {
			assert_int_equal(str_fmt(k, sizeof k, "w%d-%d", i, j), 0);
			assert_int_equal(count_k(k), j % 5 == 4 ? 0 : 1);
		}
	/* Inside a transaction of its own, a caller writes on its own connection. */
	assert_int_equal(store_tx_begin(db, &e), 0);
	assert_ptr_equal(w = store_writer_enter(db, &e), db);
	assert_int_equal(store_writer_leave(db, w, 0, &e), 0);
	store_tx_rollback(db);
}

/* store/sqlite_checkpointer.c: once the writer's commits take the write-ahead log past
 * SQLITE_CHECKPOINT_PAGES, the log is copied into the database (by the checkpoint thread)
 * and started over (the WAL header's checkpoint sequence, bytes 12..15, moves), with the
 * writer's commits going on. */
static int64_t size_of(const char *name)
{
	char path[128];
	struct stat st;

	assert_int_equal(str_fmt(path, sizeof path, "%s/%s", dir, name), 0);
	return stat(path, &st) == 0 ? (int64_t)st.st_size : -1;
}

static uint32_t wal_sequence(void)
{
	char path[128];
	unsigned char h[16] = {0};
	FILE *f;

	assert_int_equal(str_fmt(path, sizeof path, "%s/accord.db-wal", dir), 0);
	assert_non_null(f = fopen(path, "rb"));
	assert_int_equal(fread(h, 1, sizeof h, f), sizeof h);
	fclose(f);
	return (uint32_t)h[12] << 24 | (uint32_t)h[13] << 16 | (uint32_t)h[14] << 8 | h[15];
}

static void writer_insert(const char *k, size_t len)
{
	void *blob = calloc(1, len ? len : 1);
	struct store_conn *w;
	struct store_stmt *st;
	struct err e;
	int rc;

	assert_non_null(blob);
	assert_non_null(w = store_writer_enter(db, &e));
	assert_non_null(st = store_prepare(w, INSERT, &e));
	store_bind_text(st, 1, k);
	store_bind_blob(st, 2, blob, len);
	store_bind_int64(st, 3, 0);
	rc = store_step_done(st, &e);
	assert_int_equal(store_writer_leave(db, w, rc, &e), 0);
	free(blob);
}

static void test_writer_log_is_checkpointed_aside(void **state)
{
	uint32_t seq;
	int i;
	(void)state;

	writer_insert("small", 10);
	seq = wal_sequence();
	for (i = 0; i < 12; i++) /* ~12,300 pages of 4 KiB */
		writer_insert("big", 4u << 20);
	assert_true(size_of("accord.db-wal") > 40 * 1000 * 1000);
	for (i = 0; i < 2000 && (wal_sequence() == seq || size_of("accord.db") < 40 * 1000 * 1000); i++) {
		writer_insert("small", 10);
		usleep(10000);
	}
	assert_true(size_of("accord.db") >= 40 * 1000 * 1000);
	assert_int_not_equal(wal_sequence(), seq);
	exec_ok("DELETE FROM t WHERE k IN ('big', 'small')");
}

/* store_auth_generation (store.h) moves once after each committed change of users or
 * api_keys, at the commit of a transaction, and not for reads or other tables (which would
 * empty auth/apikey_cache.h for nothing). */
static uint64_t gen(void)
{
	uint64_t g;

	assert_true(store_auth_generation(store, &g));
	return g;
}

static void test_auth_generation_moves_once_per_committed_change(void **state)
{
	uint64_t g;
	struct err e;
	(void)state;

	g = gen();
	exec_ok("INSERT INTO users (id, username, created_at, updated_at) VALUES ('u1', 'alice', 1, 1)");
	assert_int_equal(gen(), g + 1);
	/* reads and other tables, on the connection that wrote: no move */
	exec_ok("SELECT count(*) FROM users");
	exec_ok("INSERT INTO orgs (id, name, created_at) VALUES ('o1', 'org1', 1)");
	exec_ok("SELECT count(*) FROM orgs");
	assert_int_equal(gen(), g + 1);
	/* in a transaction: at its commit, once */
	assert_int_equal(store_tx_begin(db, &e), 0);
	exec_ok("UPDATE users SET disabled = 1 WHERE id = 'u1'");
	exec_ok("INSERT INTO api_keys (id, user_id, name, key_hash, created_at) VALUES ('k1', 'u1', 'k', x'00', 1)");
	assert_int_equal(gen(), g + 1);
	assert_int_equal(store_tx_commit(db, &e), 0);
	assert_int_equal(gen(), g + 2);
	exec_ok("SELECT count(*) FROM api_keys");
	assert_int_equal(gen(), g + 2);
	/* a delete cascading from users to api_keys */
	exec_ok("DELETE FROM users WHERE id = 'u1'");
	assert_int_equal(gen(), g + 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_blob_over_the_limit_fails_the_step),
	    cmocka_unit_test(test_text_over_the_limit_fails_the_step),
	    cmocka_unit_test(test_access_level_unset_on_failure),
	    cmocka_unit_test(test_column_out_of_memory_is_not_null),
	    cmocka_unit_test(test_store_one_and_collect_report_a_failed_read),
	    cmocka_unit_test(test_column_longer_than_its_field),
	    cmocka_unit_test(test_nested_transactions_are_savepoints),
	    cmocka_unit_test(test_auth_generation_moves_once_per_committed_change),
	    cmocka_unit_test(test_writer_group_commit),
	    cmocka_unit_test(test_writer_log_is_checkpointed_aside),
	};
	install_failing_allocator();
	return cmocka_run_group_tests(tests, setup, teardown);
}
