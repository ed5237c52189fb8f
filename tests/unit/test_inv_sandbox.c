/* Unit tests for src/inventory/sandbox: queries see only their own inventory's rows and
 * nothing else, whatever the query text tries.  The database is a temporary file with the
 * inventory tables, a second inventory and a fake users table holding a "secret". */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pthread.h>
#include <time.h>

#include <cmocka.h>

#include "../../src/inventory/sandbox.c"
#include "base/str.h"

static char db_path[64];

static void exec_ok(sqlite3 *db, const char *sql)
{
	char *msg = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK)
		fail_msg("%s: %s", sql, msg);
}

static void add_item(sqlite3 *db, int inv, const char *path, const char *data)
{
	sqlite3_stmt *st;
	struct err e;
	json_t *j = json_loads(data, 0, NULL);
	sqlite3_int64 id;
	int64_t *hashes = NULL;
	size_t n = 0;

	assert_non_null(j);
	sqlite3_prepare_v2(db, "INSERT INTO inventory_items(inventory, item_path, item_data) VALUES (?, ?, ?)", -1, &st,
			   NULL);
	sqlite3_bind_int(st, 1, inv);
	sqlite3_bind_text(st, 2, path, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, data, -1, SQLITE_STATIC);
	assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	sqlite3_finalize(st);
	id = sqlite3_last_insert_rowid(db);
	/* each posting a block of its own (one item, no gaps): a list of several blocks */
	sqlite3_prepare_v2(db,
			   "INSERT OR IGNORE INTO inventory_postings(inventory, hash, first_item, items) "
			   "VALUES (?1, ?2, ?3, X'')",
			   -1, &st, NULL);
	assert_int_equal(inv_keys_postings(j, &hashes, &n, &e), 0);
	for (size_t i = 0; i < n; i++) {
		sqlite3_reset(st);
		sqlite3_bind_int(st, 1, inv);
		sqlite3_bind_int64(st, 2, hashes[i]);
		sqlite3_bind_int64(st, 3, id);
		assert_int_equal(sqlite3_step(st), SQLITE_DONE);
	}
	sqlite3_finalize(st);
	free(hashes);
	json_decref(j);
}

static int setup(void **state)
{
	sqlite3 *db;
	int fd;
	(void)state;

	rand_init();
	assert_int_equal(str_fmt(db_path, sizeof(db_path), "/tmp/accord-inv-test-XXXXXX"), 0);
	fd = mkstemp(db_path);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(sqlite3_open(db_path, &db), SQLITE_OK);
	exec_ok(db,
		"PRAGMA journal_mode=WAL;"
		"CREATE TABLE users(name TEXT, password TEXT);"
		"INSERT INTO users VALUES ('admin', 'hunter2');"
		"CREATE TABLE inventory_items(id INTEGER PRIMARY KEY, inventory INTEGER NOT NULL, item_path TEXT NOT "
		"NULL, item_data TEXT NOT NULL, UNIQUE(inventory, item_path));"
		"CREATE TABLE inventory_postings(inventory INTEGER NOT NULL, hash INTEGER NOT NULL, "
		"first_item INTEGER NOT NULL, items BLOB NOT NULL, PRIMARY KEY(inventory, hash, first_item)) "
		"WITHOUT ROWID;");
	add_item(db, 1, "web1", "{\"host\":\"web1\",\"env\":\"prod\",\"port\":80,\"tags\":[\"web\",\"a\"]}");
	add_item(db, 1, "web2", "{\"host\":\"web2\",\"env\":\"test\",\"port\":8080,\"tags\":[\"web\"]}");
	add_item(db, 1, "db1",
		 "{\"host\":\"db1\",\"env\":\"prod\",\"port\":5432.0,\"tags\":[\"db\"],\"ipv4\":{\"a\":\"1\"}}");
	add_item(db, 2, "other", "{\"host\":\"secret-host\",\"env\":\"prod\",\"port\":80}");
	sqlite3_close(db);
	return 0;
}

static int teardown(void **state)
{
	char p[96];
	(void)state;
	unlink(db_path);
	assert_int_equal(str_fmt(p, sizeof(p), "%s-wal", db_path), 0);
	unlink(p);
	assert_int_equal(str_fmt(p, sizeof(p), "%s-shm", db_path), 0);
	unlink(p);
	return 0;
}

/* Runs text on inventory 1; returns the compact JSON result or "ERR: <message>" (caller frees). */
static char *run_mem(const char *text, const char *filter, unsigned timeout_ms, size_t max_memory);

static char *run(const char *text, const char *filter, unsigned timeout_ms)
{
	return run_mem(text, filter, timeout_ms, 0);
}

static char *run_mem(const char *text, const char *filter, unsigned timeout_ms, size_t max_memory)
{
	struct inv_run in = {.inventory = 1,
			     .inventory_id = "0a0b",
			     .filter = filter,
			     .filter_len = filter ? strlen(filter) : 0,
			     .timeout_ms = timeout_ms,
			     .max_rows = 100,
			     .max_memory = max_memory};
	struct inv_query q;
	struct err e = {0};
	json_t *rows = NULL;
	char *out;

	if (inv_query_compile(text, strlen(text), &q, &e) || inv_sandbox_run(db_path, &q, &in, &rows, &e)) {
		size_t n = strlen(e.msg) + 6;
		out = malloc(n);
		assert_int_equal(str_fmt(out, n, "ERR: %s", e.msg), 0);
		return out;
	}
	out = json_dumps(rows, JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(rows);
	return out;
}

static void expect_rows(const char *text, const char *filter, const char *expect)
{
	char *got = run(text, filter, 5000);
	if (strcmp(got, expect) != 0)
		fail_msg("%s: expected %s, got %s", text, expect, got);
	free(got);
}

static void expect_error(const char *text, const char *filter, const char *fragment)
{
	char *got = run(text, filter, 300);
	if (strncmp(got, "ERR: ", 5) != 0 || !strstr(got, fragment))
		fail_msg("%s: expected an error containing '%s', got %s", text, fragment, got);
	free(got);
}

static void test_own_rows_only(void **state)
{
	(void)state;
	expect_error("select item_path::jsonb from inventory_data order by item_path", NULL, "malformed JSON");
	expect_rows("select to_json(item_path) from inventory_data order by item_path", NULL,
		    "[\"db1\",\"web1\",\"web2\"]");
	expect_rows("select count(*) from inventory_data", NULL, "[3]");
	expect_rows("select to_json(inventory_id) from inventory_data limit 1", NULL, "[\"0a0b\"]");
	expect_rows("select count(*) from inventory_data where item_data->>'host' = 'secret-host'", NULL, "[0]");
}

static void test_containment_filter(void **state)
{
	const char *q = "select cast(to_json(item_data->'host') as varchar) from inventory_data "
			"where item_data @> ?::jsonb order by 1";
	(void)state;
	expect_rows(q, "{\"env\":\"prod\"}", "[\"db1\",\"web1\"]");
	expect_rows(q, "{\"env\":\"prod\",\"tags\":[\"web\"]}", "[\"web1\"]");
	expect_rows(q, "{\"port\":5432}", "[\"db1\"]");
	expect_rows(q, "{\"port\":80.0}", "[\"web1\"]");
	expect_rows(q, "{\"port\":\"80\"}", "[]");
	expect_rows(q, "{\"ipv4\":{}}", "[\"db1\"]");
	expect_rows(q, "{}", "[\"db1\",\"web1\",\"web2\"]");
	expect_rows(q, "{\"host\":\"secret-host\"}", "[]");
	/* the same filters without the key index (not a plain conjunct) give the same rows */
	expect_rows("select item_data->'host' from inventory_data where (item_data @> ?::jsonb or false) order by 1",
		    "{\"env\":\"prod\",\"tags\":[\"web\"]}", "[\"web1\"]");
	expect_error(q, NULL, "placeholder");
}

static void test_dialect_end_to_end(void **state)
{
	(void)state;
	expect_rows("select json_build_object('h', item_path, 'p', (item_data->>'port')::int, 'd', item_data->'ipv4') "
		    "from inventory_data where item_path = 'db1'",
		    NULL, "[{\"h\":\"db1\",\"p\":5432,\"d\":{\"a\":\"1\"}}]");
	expect_rows("select to_json(t.value) from inventory_data, jsonb_array_elements(item_data->'tags') t "
		    "where item_path = 'web1'",
		    NULL, "[\"web\",\"a\"]");
	expect_rows("select to_json(x) from inventory_data, jsonb_array_elements_text(item_data->'tags') as t(x) "
		    "where item_path = 'web1'",
		    NULL, "[\"web\",\"a\"]");
	expect_rows("select json_agg(item_data->'port') from inventory_data where item_data->>'env' ilike 'PROD' "
		    "and item_data->>'host' = 'db1'",
		    NULL, "[[5432.0]]");
	expect_rows("select count(*) from inventory_data where item_data->>'env' ilike 'PROD'", NULL, "[2]");
	expect_rows("select count(*) from inventory_data where item_data->>'env' like 'PROD'", NULL, "[0]");
	expect_rows("select (item_data->>'port')::int + 1 from inventory_data where item_data->>'port' = '80'", NULL,
		    "[81]");
	expect_rows("select item_data::text from inventory_data where item_path = 'web2'", NULL,
		    "[{\"host\":\"web2\",\"env\":\"test\",\"port\":8080,\"tags\":[\"web\"]}]");
	expect_error("select item_data->>'host' from inventory_data", NULL, "Invalid JSON value: db1");
	expect_error("select item_path, item_data from inventory_data", NULL, "exactly one column");
	expect_error("select nosuch from inventory_data", NULL, "no such column: nosuch");
}

/* Escape attempts: each must be refused (or see only its own rows). */
static void test_escapes(void **state)
{
	(void)state;
	expect_error("select password from users", NULL, "table 'users' is not allowed");
	expect_error("select (select group_concat(sql) from sqlite_master)", NULL, "'sqlite_master' is not allowed");
	expect_error("select name from \"sqlite_schema\"", NULL, "not allowed");
	expect_error("select 1; delete from inventory_items", NULL, "only one statement");
	expect_error("select 1 from inventory_data; attach database '/tmp/x.db' as x", NULL, "only one statement");
	expect_error("select to_json(item_path) from inventory_data union select password from users", NULL,
		     "'users' is not allowed");
	expect_error("with inventory_data as (select * from inventory_items) select item_data from inventory_data",
		     NULL, "must not be named inventory_data");
	expect_error("with x as (select item_data from main.inventory_items) select item_data from x", NULL,
		     "schema-qualified");
	expect_error("select item_data from inventory_items", NULL, "'inventory_items' is not allowed");
	expect_error("select load_extension('/tmp/evil.so')", NULL, "load_extension");
	expect_error("select length(randomblob(1000000000))", NULL, "randomblob");
	expect_error("select length(zeroblob(1000000000))", NULL, "zeroblob");
	expect_error("select name from pragma_table_info('users')", NULL,
		     "function 'pragma_table_info' is not allowed");
	expect_error("pragma table_info(users)", NULL, "must be a SELECT");
	expect_error("with recursive r(n) as (select 1 union all select n + 1 from r) select count(*) from r", NULL,
		     "stopped after 300 ms");
	expect_error("with recursive r(s) as (select 'ab' union all select s || s from r) select max(length(s)) from r",
		     NULL, "query failed");
	expect_error("select $$x$$", NULL, "'$' is not supported");
	expect_error("select count(*) from inventory_data where item_path = ? and item_data @> ?::jsonb", "{}",
		     "at most one ? placeholder");
	expect_error("select readfile('/etc/passwd')", NULL, "readfile");
	expect_error("select sqlite_version()", NULL, "sqlite_version");
	/* a ';' inside a string or a comment is not a statement separator, and the data stays */
	expect_rows("select to_json(';drop table users;') from inventory_data limit 1", NULL,
		    "[\";drop table users;\"]");
	expect_rows("select count(*) from inventory_data -- ; delete from users", NULL, "[3]");
	expect_rows("select count(*) from inventory_data /* ; delete from users */", NULL, "[3]");
	/* filter values are bound, never spliced */
	expect_rows("select count(*) from inventory_data where item_data @> ?::jsonb", "{\"host\":\"x' or '1'='1\"}",
		    "[0]");
}

/* The authorizer alone, for SQL that the translator would never produce. */
static void test_authorizer_alone(void **state)
{
	static const char *const attacks[] = {
	    "SELECT name FROM users",
	    "SELECT sql FROM sqlite_master",
	    "SELECT item_data FROM main.inventory_items",
	    "SELECT * FROM pragma_table_list",
	    "PRAGMA table_info(users)",
	    "ATTACH DATABASE '/tmp/x' AS x",
	    "INSERT INTO inventory_items(inventory, item_path, item_data) VALUES (1, 'x', '{}')",
	    "DELETE FROM users",
	    "SELECT randomblob(10)",
	    "SELECT load_extension('x')",
	    "WITH c AS (SELECT * FROM main.inventory_items) SELECT item_data FROM c",
	    "CREATE TEMP TABLE t(x)",
	    "BEGIN",
	};
	struct inv_run in = {.inventory = 1};
	struct run r = {.in = &in};
	struct err e;
	(void)state;

	assert_int_equal(open_db(&r, db_path, &e), 0);
	for (size_t i = 0; i < sizeof(attacks) / sizeof(attacks[0]); i++) {
		sqlite3_stmt *st = NULL;
		if (prepare(&r, attacks[i], false, &st, &e) == 0)
			fail_msg("authorizer allowed: %s", attacks[i]);
		sqlite3_finalize(st);
	}
	run_cleanup(&r, true);
	/* The authorizer stays on the kept connection (set once: setting it expires every
	 * statement): between runs it allows nothing, not even a read of a view. */
	assert_non_null(tl_conn);
	for (size_t i = 0; i < sizeof(attacks) / sizeof(attacks[0]); i++) {
		sqlite3_stmt *st = NULL;
		assert_int_not_equal(sqlite3_prepare_v2(tl_conn->db, attacks[i], -1, &st, NULL), SQLITE_OK);
		sqlite3_finalize(st);
	}
}

/* The connection keeps the queries' statements (8 of them): more queries than that, each run
 * twice, and each answer is its own (evicted statements are prepared again). */
static void test_statements_kept_between_runs(void **state)
{
	char text[128], want[32];
	(void)state;

	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 11; i++) {
			assert_int_equal(str_fmt(text, sizeof text, "select count(*) + %d from inventory_data", i), 0);
			assert_int_equal(str_fmt(want, sizeof want, "[%d]", 3 + i), 0);
			expect_rows(text, NULL, want);
			expect_rows("select item_data->'host' from inventory_data where item_data @> ?::jsonb",
				    i % 2 ? "{\"env\":\"prod\"}" : "{\"tags\":[\"db\"]}",
				    i % 2 ? "[\"web1\",\"db1\"]" : "[\"db1\"]");
		}
}

/* A run whose filter the postings narrowed (the sandbox's own reads pass the authorizer)
 * leaves the query's statement, and the next runs', checked as before. */
static void test_narrowed_runs_stay_checked(void **state)
{
	(void)state;
	for (int i = 0; i < 3; i++) {
		expect_rows("select item_data->'host' from inventory_data where item_data @> ?::jsonb", "{\"env\":\"prod\"}",
			    "[\"web1\",\"db1\"]");
		expect_error("select count(*) from inventory_data where item_data @> ?::jsonb union select password from users",
			     "{\"env\":\"prod\"}", "'users' is not allowed");
		expect_error("select item_data from inventory_items where item_data @> ?::jsonb", "{\"env\":\"prod\"}",
			     "'inventory_items' is not allowed");
	}
}

/* A thread's connection serves its next runs: each sees its own inventory and filter only,
 * also after a failed run (which closes it). */
static void test_connection_kept_between_runs(void **state)
{
	const char *text = "select item_data->'host' from inventory_data where item_data @> ?::jsonb";
	struct inv_run in = {.inventory = 2, .inventory_id = "other", .filter = "{\"env\":\"prod\"}", .max_rows = 10};
	struct inv_query q;
	struct err e = {0};
	json_t *rows = NULL;
	char *out;
	(void)state;

	for (int i = 0; i < 3; i++) {
		out = run(text, "{\"env\":\"prod\"}", 0);
		assert_string_equal(out, "[\"web1\",\"db1\"]");
		free(out);
		assert_non_null(tl_conn);
		in.filter_len = strlen(in.filter);
		assert_int_equal(inv_query_compile(text, strlen(text), &q, &e), 0);
		assert_int_equal(inv_sandbox_run(db_path, &q, &in, &rows, &e), 0);
		out = json_dumps(rows, JSON_COMPACT);
		assert_string_equal(out, "[\"secret-host\"]");
		free(out);
		json_decref(rows);
		out = run("select nosuch(item_data) from inventory_data", NULL, 0);
		assert_non_null(strstr(out, "ERR: "));
		free(out);
		assert_null(tl_conn);
	}
	out = run(text, "{\"tags\":[\"db\"]}", 0);
	assert_string_equal(out, "[\"db1\"]");
	free(out);
}

static void test_check(void **state)
{
	struct err e;
	const char *ok = "select item_data from inventory_data where item_data @> ?::jsonb";
	const char *bad = "select nosuch(item_data) from inventory_data";
	struct inv_query q;
	(void)state;

	assert_int_equal(inv_query_compile(ok, strlen(ok), &q, &e), 0);
	assert_int_equal(inv_sandbox_check(db_path, &q, &e), 0);
	assert_int_equal(inv_query_compile(bad, strlen(bad), &q, &e), 0);
	assert_int_not_equal(inv_sandbox_check(db_path, &q, &e), 0);
	assert_non_null(strstr(e.msg, "nosuch"));
}

/* ---- memory: a budget per query (issue 15 part 6) ---- */

/* Sorting 300,000 rows in random order holds a few MiB in SQLite's sorter. */
#define SORT_QUERY                                                                                                     \
	"select count(*) from (with recursive r(n) as (select 1 union all select n + 1 from r where n < 300000)"       \
	" select n from r order by (n * 7919) % 300007)"

static void test_memory_budget_is_hard(void **state)
{
	char *out;
	(void)state;

	out = run_mem(SORT_QUERY, NULL, 0, 1024 * 1024);
	assert_non_null(strstr(out, "needed more than 1048576 bytes of memory"));
	free(out);
	out = run(SORT_QUERY, NULL, 0);
	assert_string_equal(out, "[300000]");
	free(out);
}

/* What a connection allocates on the thread is credited back when it is closed. */
static void test_memory_budget_balances(void **state)
{
	struct sqlite_mem_budget b = {.limit = 64 * 1024 * 1024};
	sqlite3 *db;
	(void)state;

	sqlite_mem_attach(&b);
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	exec_ok(db, "CREATE TABLE t(x); WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 10000)"
		    " INSERT INTO t SELECT randomblob(100) FROM r");
	assert_true(b.used > 1000000);
	sqlite3_close(db);
	sqlite_mem_detach();
	assert_int_equal(b.used, 0);
	assert_true(b.peak > 1000000);
	assert_false(b.refused);
}

struct hog {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool query_done;
};

/* Another thread's SQLite memory (INV_QUERY_MEMORY_BYTES and more) while the query runs. */
static void *hog_memory(void *arg)
{
	struct hog *h = arg;
	struct timespec pause = {0, 100 * 1000000};
	void *p;

	nanosleep(&pause, NULL); /* the query is under way */
	assert_non_null(p = sqlite3_malloc64(INV_QUERY_MEMORY_BYTES + 64 * 1024 * 1024));
	pthread_mutex_lock(&h->lock);
	while (!h->query_done)
		pthread_cond_wait(&h->cond, &h->lock);
	pthread_mutex_unlock(&h->lock);
	sqlite3_free(p);
	return NULL;
}

static void test_memory_of_other_threads_is_not_charged(void **state)
{
	struct hog h = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, false};
	struct timespec t0, t1;
	pthread_t th;
	char *out;
	(void)state;

	assert_int_equal(pthread_create(&th, NULL, hog_memory, &h), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	out = run("with recursive r(n) as (select 1 union all select n + 1 from r where n < 1500000)"
		  " select count(*) from r",
		  NULL, 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	pthread_mutex_lock(&h.lock);
	h.query_done = true;
	pthread_cond_signal(&h.cond);
	pthread_mutex_unlock(&h.lock);
	pthread_join(th, NULL);
	/* the hog allocated while the query ran, or the test proves nothing */
	assert_true((t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000 > 250);
	assert_string_equal(out, "[1500000]");
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_own_rows_only),
	    cmocka_unit_test(test_containment_filter),
	    cmocka_unit_test(test_dialect_end_to_end),
	    cmocka_unit_test(test_escapes),
	    cmocka_unit_test(test_authorizer_alone),
	    cmocka_unit_test(test_narrowed_runs_stay_checked),
	    cmocka_unit_test(test_statements_kept_between_runs),
	    cmocka_unit_test(test_check),
	    cmocka_unit_test(test_connection_kept_between_runs),
	    cmocka_unit_test(test_memory_budget_is_hard),
	    cmocka_unit_test(test_memory_budget_balances),
	    cmocka_unit_test(test_memory_of_other_threads_is_not_charged),
	};
	struct err e;

	/* before SQLite is first used, as store_open does in the server */
	if (sqlite_mem_install(&e))
		fail_msg("%s", e.msg);
	return cmocka_run_group_tests(tests, setup, teardown);
}
