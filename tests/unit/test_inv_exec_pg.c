/* Unit tests for src/inventory/exec_pg.c.  Without a database: the function allow-list that
 * keeps a query from changing its settings (role, inventory) or calling server functions,
 * and the text sent to PostgreSQL.  Against a server (pg_cluster.h; skipped without one):
 * the sandbox's settings are in force on every run, a failed setting stops the query, and
 * whatever fails — the database, a limit of ours, the sandbox itself — the connection goes
 * back to the store idle, under its own role and settings, for the store's next statement.
 * The escape attempts run in tests/api on PostgreSQL (make apitest-pg). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../src/inventory/exec_pg.c"
#include "base/limits.h"
#include "base/rand.h"
#include "store/orgs.h"

#include "pg_cluster.h"

static int text_of(const char *sql, struct buf *out, struct err *e)
{
	struct inv_query q = {.text = sql, .text_len = strlen(sql)};

	return pg_text(&q, out, e);
}

static void test_allowed_calls(void **state)
{
	static const char *const ok[] = {
	    "select count(*) from inventory_data",
	    "select to_json(lower(item_path)) from inventory_data where item_data @> ?::jsonb",
	    "select json_agg(item_path) filter (where item_path in ('a', 'b')) from inventory_data",
	    "with recursive r(n) as (select 1 union all select n + 1 from r) select count(*) from r",
	    "select to_json(tag) from inventory_data, jsonb_array_elements_text(item_data->'tags') as x(tag)",
	    "select to_json(t) from inventory_data, jsonb_array_elements(item_data) t(v)",
	    "select cast(item_data->>'port' as numeric(10, 2)) from inventory_data",
	    "SELECT COUNT(*) FROM inventory_data WHERE EXISTS (SELECT 1) AND NOT (item_path IN ('x'))",
	};
	struct buf b = {0};
	struct err e;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		if (text_of(ok[i], &b, &e))
			fail_msg("%s: %s", ok[i], e.msg);
		buf_cleanup(&b);
	}
}

static void test_refused_calls(void **state)
{
	static const char *const bad[][2] = {
	    {"select set_config('role', 'accord', false)", "set_config"},
	    {"select to_json(current_setting('accord.inventory'))", "current_setting"},
	    {"select count(*) from inventory_data where SET_CONFIG('accord.inventory', '2', true) is null",
	     "SET_CONFIG"},
	    {"select pg_catalog.lower('a')", "lower"},
	    {"select \"lower\"('a')", "\"lower\""},
	    {"select to_json(pg_sleep(1))", "pg_sleep"},
	    {"select to_json(x) from inventory_data, pg_ls_dir('.') as x(set_config)", "pg_ls_dir"},
	    {"select lo_import('/etc/passwd')", "lo_import"},
	    {"select count(*) from inventory_data x where 1 = 1 and set_config('a', 'b', true) is null", "set_config"},
	};
	struct buf b = {0};
	struct err e;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (text_of(bad[i][0], &b, &e) == 0)
			fail_msg("allowed: %s", bad[i][0]);
		assert_int_equal(e.code, ERR_INVALID);
		if (!strstr(e.msg, "not allowed: function") || !strstr(e.msg, bad[i][1]))
			fail_msg("%s: %s", bad[i][0], e.msg);
		buf_cleanup(&b);
	}
}

static void test_placeholder_becomes_dollar_one(void **state)
{
	struct buf b = {0};
	struct err e;

	(void)state;
	assert_int_equal(
	    text_of("select 1 from inventory_data where item_path = '?' -- ?\n and item_data @> ?::jsonb;", &b, &e), 0);
	assert_string_equal(b.data,
			    "select 1 from inventory_data where item_path = '?' -- ?\n and item_data @> $1::jsonb;");
	buf_cleanup(&b);
}

/* ---- against a server ---- */

static struct store *store;
static struct store_conn *db;
static struct inventory mine;
static char role[64]; /* accord_inv_<oid> */
static bool have_server;

#define NEED_SERVER()                                                                                                  \
	do {                                                                                                           \
		if (!have_server)                                                                                      \
			skip();                                                                                        \
	} while (0)

static void add_item(const char *path, const char *data)
{
	json_t *v = json_loads(data, 0, NULL);
	struct err e;

	assert_non_null(v);
	if (store_inventory_item_put(db, mine.rid, path, v, &e))
		fail_msg("item %s: %s", path, e.msg);
	json_decref(v);
}

/* One string from the store's connection, as the store reads it. */
static void store_text(const char *sql, char *out, size_t cap)
{
	struct store_stmt *st;
	struct err e;

	if (!(st = store_prepare(db, sql, &e)) || store_step(st, &e) != STORE_ROW)
		fail_msg("%s: %s", sql, e.msg);
	assert_int_equal(str_fmt(out, cap, "%s", store_col_text(st, 0)), 0);
	store_reset(st);
}

static int server_setup(void **state)
{
	struct org o = {.visibility = "PUBLIC"};
	char url[600];
	struct err e;
	int rc = pg_cluster_start("test_inv_exec_pg");
	(void)state;

	if (rc > 0)
		return 0;
	rand_init();
	limits_defaults();
	if (rc < 0 || pg_cluster_new_db("unit_inv_exec", url, sizeof url) || !(store = store_open(url, &e)) ||
	    !(db = store_conn(store, &e)))
		return -1;
	have_server = true;
	uuid_v4(o.id);
	assert_int_equal(str_fmt(o.name, sizeof o.name, "org"), 0);
	assert_int_equal(store_org_insert(db, &o, NULL, NULL, &e), 0);
	mine = (struct inventory){.visibility = "PUBLIC"};
	uuid_v4(mine.id);
	memcpy(mine.org_id, o.id, sizeof mine.org_id);
	assert_int_equal(str_fmt(mine.name, sizeof mine.name, "mine"), 0);
	if (store_inventory_insert(db, &mine, &e))
		fail_msg("inventory: %s", e.msg);
	add_item("web1", "{\"host\":\"web1\",\"env\":\"prod\"}");
	add_item("web2", "{\"host\":\"web2\",\"env\":\"test\"}");
	add_item("db1", "{\"host\":\"db1\",\"env\":\"prod\"}");
	store_text("SELECT 'accord_inv_' || oid FROM pg_database WHERE datname = current_database()", role,
		   sizeof role);
	return 0;
}

static int server_teardown(void **state)
{
	(void)state;
	store_close(store);
	return pg_cluster_stop();
}

/* Runs text with pg_run (filter, time limit, row limit): the rows as compact JSON in out, or
 * the error's message; returns pg_run's result. */
static int run(const char *text, const char *filter, unsigned timeout_ms, size_t max_rows, char *out, size_t cap)
{
	struct inv_query q;
	struct inv_run in = {.inventory = mine.rid,
			     .inventory_id = mine.id,
			     .filter = filter,
			     .filter_len = filter ? strlen(filter) : 0,
			     .timeout_ms = timeout_ms,
			     .max_rows = max_rows};
	json_t *rows = NULL;
	struct err e = {0};
	char *got = NULL;
	int rc = inv_query_compile(text, strlen(text), &q, &e);

	if (rc == 0 && (rc = pg_run(db, &q, &in, &rows, &e)) == 0)
		got = json_dumps(rows, JSON_COMPACT | JSON_ENCODE_ANY);
	str_fmt_cut(out, cap, "%s", got ? got : e.msg);
	free(got);
	json_decref(rows);
	return rc;
}

static void expect_run(const char *text, const char *filter, unsigned timeout_ms, size_t max_rows, int want_rc,
		       const char *want)
{
	char got[512];
	int rc = run(text, filter, timeout_ms, max_rows, got, sizeof got);

	if ((rc == 0) != (want_rc == 0) || !strstr(got, want))
		fail_msg("%s\n  want: %s %s\n  got:  %d %s", text, want_rc ? "error" : "rows", want, rc, got);
}

/* The connection is as the store left it: idle, out of pipeline mode, the session's own role
 * and settings; and the store reads and writes on it. */
static void assert_clean(void)
{
	PGconn *pg = store_native(db);
	json_t *empty = json_object();
	bool deleted = false;
	char got[256];
	struct err e;

	assert_int_equal(pq.pipeline_status(pg), PQ_PIPELINE_OFF);
	assert_int_equal(pq.transaction_status(pg), PQTRANS_IDLE);
	store_text("SELECT (current_user = session_user) || ' ' || current_setting('statement_timeout') || ' ' ||"
		   " current_setting('search_path') || ' [' || coalesce(current_setting('accord.inventory', true), '')"
		   " || '] ' || current_setting('transaction_read_only')",
		   got, sizeof got);
	assert_string_equal(got, "true 0 \"$user\", public [] off");
	if (!empty || store_tx_begin(db, &e) || store_inventory_item_put(db, mine.rid, "tmp", empty, &e) ||
	    store_tx_commit(db, &e))
		fail_msg("a write after the run: %s", e.msg);
	json_decref(empty);
	if (store_inventory_item_delete(db, mine.rid, "tmp", &deleted, &e) || !deleted)
		fail_msg("delete: %s", e.msg);
}

static void test_sandbox_settings_hold(void **state)
{
	char want[80];
	(void)state;
	NEED_SERVER();

	assert_int_equal(str_fmt(want, sizeof want, "[\"%s\"]", role), 0);
	/* the first run on a session looks the role up, later ones send its name */
	for (int i = 0; i < 2; i++) {
		expect_run("select to_json(current_user::text)", NULL, 0, 0, 0, want);
		expect_run("select count(*) from inventory_data where item_data @> ?::jsonb", "{\"env\":\"prod\"}", 0,
			   0, 0, "[2]");
		expect_run("select item_data->'host' from inventory_data order by 1", NULL, 0, 0, 0,
			   "[\"db1\",\"web1\",\"web2\"]");
		assert_clean();
	}
}

static void test_failures_leave_the_connection_clean(void **state)
{
	static const char forever[] =
	    "with recursive r(n) as (select 1 union all select n + 1 from r) select count(*) from r";
	static const char all[] = "select item_data from inventory_data order by item_path";
	static const char bad_check[] = "select nosuch from inventory_data";
	struct inv_query q;
	struct err e;
	(void)state;
	NEED_SERVER();

	expect_run(forever, NULL, 100, 0, -1, "stopped after 100 ms");
	assert_clean();
	expect_run("select (item_data->>'host')::boolean from inventory_data", NULL, 0, 0, -1, "invalid input syntax");
	assert_clean();
	/* stopped by us while rows still arrive: the statement is cancelled */
	expect_run(all, NULL, 0, 1, -1, "more than 1 rows");
	assert_clean();
	expect_run("select item_data->>'host' from inventory_data", NULL, 0, 0, -1, "Invalid JSON value");
	assert_clean();
	expect_run("select count(*) from inventory_data where item_data @> ?::jsonb", "{bad", 0, 0, -1, "json");
	assert_clean();
	assert_int_equal(inv_query_compile(bad_check, strlen(bad_check), &q, &e), 0);
	assert_int_not_equal(pg_check(db, &q, &e), 0);
	assert_non_null(strstr(e.msg, "nosuch"));
	assert_clean();
	expect_run(all, NULL, 0, 0, 0, "[{\"env\":\"prod\",\"host\":\"db1\"}");
	assert_clean();
}

/* Without its role the sandbox cannot be set up, and the query never runs as the store's
 * user: whether the run sends the role's name (known on this session) or looks it up. */
static void test_a_failed_setting_stops_the_query(void **state)
{
	char sql[200];
	(void)state;
	NEED_SERVER();

	expect_run("select count(*) from inventory_data", NULL, 0, 0, 0, "[3]");
	assert_int_equal(str_fmt(sql, sizeof sql, "ALTER ROLE %s RENAME TO unit_inv_gone", role), 0);
	assert_int_equal(pg_cluster_psql(sql), 0);
	expect_run("select count(*) from inventory_data", NULL, 0, 0, -1, "sandbox could not be set up");
	assert_clean();
	store_conn_reset(db); /* a new session: the name is looked up again */
	expect_run("select count(*) from inventory_data", NULL, 0, 0, -1, "sandbox could not be set up");
	assert_clean();
	assert_int_equal(str_fmt(sql, sizeof sql, "ALTER ROLE unit_inv_gone RENAME TO %s", role), 0);
	assert_int_equal(pg_cluster_psql(sql), 0);
	expect_run("select count(*) from inventory_data", NULL, 0, 0, 0, "[3]");
	assert_clean();
}

static void test_empty_object(void **state)
{
	(void)state;
	assert_true(empty_object("{}"));
	assert_true(empty_object(" {\n } "));
	assert_false(empty_object("{\"a\":1}"));
	assert_false(empty_object("{}x"));
	assert_false(empty_object("[]"));
	assert_false(empty_object(""));
}

/* The filter {} reads the plain view, the others the containment view: the rows are the
 * containment's either way ({} matches objects only, not the array item added here). */
static void test_filter_views_agree(void **state)
{
	static const char paths[] = "select to_json(item_path) from inventory_data where item_data @> ?::jsonb"
				    " order by item_path";
	static const struct {
		const char *filter, *want;
	} cases[] = {
	    {"{}", "[\"db1\",\"web1\",\"web2\"]"},
	    {" { } ", "[\"db1\",\"web1\",\"web2\"]"},
	    {"{\"env\":\"prod\"}", "[\"db1\",\"web1\"]"},
	    {"{\"env\":\"prod\",\"host\":\"web1\"}", "[\"web1\"]"},
	    {"{\"env\":\"none\"}", "[]"},
	};
	char got[sizeof cases / sizeof cases[0]][128];
	int rc[sizeof cases / sizeof cases[0]];
	bool deleted = false;
	struct err e;
	(void)state;
	NEED_SERVER();

	add_item("list", "[\"env\",\"prod\"]");
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		rc[i] = run(paths, cases[i].filter, 0, 0, got[i], sizeof got[i]);
	if (store_inventory_item_delete(db, mine.rid, "list", &deleted, &e) || !deleted)
		fail_msg("delete: %s", e.msg);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		if (rc[i] != 0 || strcmp(got[i], cases[i].want) != 0)
			fail_msg("filter %s\n  want: %s\n  got:  %d %s", cases[i].filter, cases[i].want, rc[i], got[i]);
	assert_clean();
}

/* A session lost under the executor (the server ended it): the run fails as unavailable,
 * the store reconnects on its next statement, and the next run works on the new session. */
static void test_lost_session(void **state)
{
	char sql[200];
	(void)state;
	NEED_SERVER();

	expect_run("select count(*) from inventory_data", NULL, 0, 0, 0, "[3]");
	assert_int_equal(str_fmt(sql, sizeof sql, "SELECT pg_terminate_backend(%d)", pq.backend_pid(store_native(db))),
			 0);
	assert_int_equal(pg_cluster_psql(sql), 0);
	expect_run("select count(*) from inventory_data", NULL, 0, 0, -1, "database unavailable");
	store_text("SELECT 'reconnected'", sql, sizeof sql);
	assert_clean();
	expect_run("select count(*) from inventory_data", NULL, 0, 0, 0, "[3]");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_allowed_calls),
	    cmocka_unit_test(test_refused_calls),
	    cmocka_unit_test(test_placeholder_becomes_dollar_one),
	    cmocka_unit_test(test_empty_object),
	};
	const struct CMUnitTest server[] = {
	    cmocka_unit_test(test_sandbox_settings_hold),
	    cmocka_unit_test(test_filter_views_agree),
	    cmocka_unit_test(test_failures_leave_the_connection_clean),
	    cmocka_unit_test(test_a_failed_setting_stops_the_query),
	    cmocka_unit_test(test_lost_session),
	};
	int rc = cmocka_run_group_tests(tests, NULL, NULL);

	return rc | cmocka_run_group_tests(server, server_setup, server_teardown);
}
