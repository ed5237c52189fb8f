/* Unit tests for src/inventory/exec_pg.c without a database: the function allow-list that
 * keeps a query from changing its settings (role, inventory) or calling server functions,
 * and the text sent to PostgreSQL.  The sandbox itself runs in tests/api on PostgreSQL
 * (make apitest-pg). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../src/inventory/exec_pg.c"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_allowed_calls),
	    cmocka_unit_test(test_refused_calls),
	    cmocka_unit_test(test_placeholder_becomes_dollar_one),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
