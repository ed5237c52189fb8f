/* Unit tests for src/inventory/lex and dialect: the PostgreSQL-to-SQLite translation of
 * inventory queries, its validation and its error messages (table-driven). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "inventory/dialect.h"

static const struct {
	const char *pg, *sqlite;
	bool prefilter;
} translations[] = {
    {"select cast(to_json(item_data) as varchar) from inventory_data where item_data @> ?::jsonb",
     "SELECT (\"item_data\" || '') FROM V AS \"inventory_data\" WHERE json_contains(\"item_data\", json(?))", true},
    {"SELECT item_data FROM inventory_data i WHERE i.item_data @> ?::jsonb AND i.item_path <> 'x' LIMIT 5;",
     "SELECT \"item_data\" FROM V AS \"i\" WHERE (json_contains(\"i\".\"item_data\", json(?)) AND (\"i\".\"item_path\" "
     "<> 'x')) LIMIT 5",
     true},
    /* Concord's table and its column names: a subquery of the same rows */
    {"select item_data->'service' from json_store_data where item_data @> ?::jsonb",
     "SELECT (\"item_data\" -> 'service') FROM (SELECT \"inventory_id\" AS \"json_store_id\", \"item_path\", "
     "\"item_data\", length(CAST(\"item_data\" AS BLOB)) AS \"item_data_size\" FROM V) AS \"json_store_data\" "
     "WHERE json_contains(\"item_data\", json(?))",
     true},
    {"select to_json(d.json_store_id) from json_store_data d where d.item_data_size > 2",
     "SELECT json_quote(\"d\".\"json_store_id\") FROM (SELECT \"inventory_id\" AS \"json_store_id\", "
     "\"item_path\", \"item_data\", length(CAST(\"item_data\" AS BLOB)) AS \"item_data_size\" FROM V) AS \"d\" "
     "WHERE (\"d\".\"item_data_size\" > 2)",
     false},
    {"select item_data from inventory_data where cast(? as jsonb) <@ item_data",
     "SELECT \"item_data\" FROM V AS \"inventory_data\" WHERE json_contains(\"item_data\", json(?))", true},
    {"select item_data from inventory_data where not item_data @> ?::jsonb",
     "SELECT \"item_data\" FROM V AS \"inventory_data\" WHERE (NOT json_contains(\"item_data\", json(?)))", false},
    {"select item_data from inventory_data where item_data @> ?::jsonb or item_path = 'a'",
     "SELECT \"item_data\" FROM V AS \"inventory_data\" WHERE (json_contains(\"item_data\", json(?)) OR "
     "(\"item_path\" = 'a'))",
     false},
    {"select item_data->'a'->>'b' from inventory_data",
     "SELECT accord_pg_text(((\"item_data\" -> 'a') -> 'b')) FROM V AS \"inventory_data\"", false},
    {"select item_data->'hosts'->0 from inventory_data",
     "SELECT ((\"item_data\" -> 'hosts') -> 0) FROM V AS \"inventory_data\"", false},
    {"select (item_data->>'port')::int from inventory_data",
     "SELECT CAST((accord_pg_text((\"item_data\" -> 'port'))) AS INTEGER) FROM V AS \"inventory_data\"", false},
    {"select item_data::text from inventory_data", "SELECT (\"item_data\" || '') FROM V AS \"inventory_data\"", false},
    {"select '{\"a\":1}'::jsonb", "SELECT json('{\"a\":1}')", false},
    {"select jsonb '{}'", "SELECT json('{}')", false},
    {"select x::varchar(10), y::character varying, z::double precision, w::boolean from inventory_data",
     "SELECT CAST(\"x\" AS TEXT), CAST(\"y\" AS TEXT), CAST(\"z\" AS REAL), accord_pg_bool(\"w\") FROM V AS "
     "\"inventory_data\"",
     false},
    {"select json_build_object('host', item_path, 'data', item_data, 'n', 1) from inventory_data",
     "SELECT json_object('host', \"item_path\", 'data', json(\"item_data\"), 'n', 1) FROM V AS \"inventory_data\"",
     false},
    {"select jsonb_build_object('ok', true)", "SELECT json_object('ok', accord_json_bool(true))", false},
    {"select to_json(item_path) from inventory_data", "SELECT json_quote(\"item_path\") FROM V AS \"inventory_data\"",
     false},
    {"select json_agg(item_data) from inventory_data",
     "SELECT json_group_array(json(\"item_data\")) FROM V AS \"inventory_data\"", false},
    {"select e from inventory_data, jsonb_array_elements(item_data->'tags') as e",
     "SELECT accord_json_value(\"e\".value, \"e\".type) FROM V AS \"inventory_data\", json_each((\"item_data\" -> "
     "'tags')) AS \"e\"",
     false},
    {"select t.x from inventory_data, lateral jsonb_array_elements_text(item_data->'tags') t(x)",
     "SELECT accord_pg_text(accord_json_value(\"t\".value, \"t\".type)) FROM V AS \"inventory_data\", "
     "json_each((\"item_data\" -> 'tags')) AS \"t\"",
     false},
    {"select count(*) from inventory_data where item_path ilike 'WEB%' and item_path not like 'x%'",
     "SELECT count(*) FROM V AS \"inventory_data\" WHERE ((lower(\"item_path\") LIKE lower('WEB%')) AND "
     "(\"item_path\" NOT LIKE 'x%'))",
     false},
    {"with h as (select item_data from inventory_data) select item_data from h order by 1 desc nulls last offset 3",
     "WITH \"h\" AS (SELECT \"item_data\" FROM V AS \"inventory_data\") SELECT \"item_data\" FROM \"h\" ORDER BY 1 "
     "DESC NULLS LAST LIMIT -1 OFFSET 3",
     false},
    {"select a is distinct from b, c is not null, d isnull from inventory_data",
     "SELECT (\"a\" IS NOT \"b\"), (\"c\" IS NOT null), (\"d\" IS NULL) FROM V AS \"inventory_data\"", false},
    {"select 'a' || 1 + 2", "SELECT ('a' || (1 + 2))", false},
    {"select * from inventory_data where item_path in ('a', 'b') and x between 1 and 2",
     "SELECT * FROM V AS \"inventory_data\" WHERE ((\"item_path\" IN ('a', 'b')) AND (\"x\" BETWEEN 1 AND 2))", false},
    {"select item_data from inventory_data where item_data @> ?::jsonb union select item_data from inventory_data",
     "SELECT \"item_data\" FROM V AS \"inventory_data\" WHERE json_contains(\"item_data\", json(?)) UNION SELECT "
     "\"item_data\" FROM V AS \"inventory_data\"",
     false},
    {"select \"Item_Data\" from inventory_data /* c /* nested */ */ -- x",
     "SELECT \"Item_Data\" FROM V AS \"inventory_data\"", false},
    {"select jsonb_array_length(item_data->'t'), jsonb_typeof(item_data) from inventory_data",
     "SELECT json_array_length((\"item_data\" -> 't')), accord_jsonb_typeof(\"item_data\") FROM V AS "
     "\"inventory_data\"",
     false},
};

static void test_translations(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(translations) / sizeof(translations[0]); i++) {
		struct inv_translation t;
		struct err e = {0};
		const char *pg = translations[i].pg;
		if (inv_dialect_translate(pg, strlen(pg), "V", &t, &e))
			fail_msg("%s: %s", pg, e.msg);
		if (strcmp(t.sql, translations[i].sqlite) != 0)
			fail_msg("%s:\n  expected %s\n  got      %s", pg, translations[i].sqlite, t.sql);
		if (t.prefilter != translations[i].prefilter)
			fail_msg("%s: prefilter expected %d", pg, translations[i].prefilter);
		inv_translation_cleanup(&t);
	}
}

static const struct {
	const char *pg, *message;
} errors[] = {
    {"", "Query should not be empty"},
    {"  \n ", "Query should not be empty"},
    {"delete from inventory_data", "a query must be a SELECT statement, found 'delete' at line 1, column 1"},
    {"select 1; select 2", "only one statement is allowed: found 'select' after ';' at line 1, column 11"},
    {"select * from users", "table 'users' is not allowed at line 1, column 15"},
    {"select * from main.inventory_data", "schema-qualified table names are not allowed at line 1, column 15"},
    {"select * from inventory_data where x = 'abc", "unterminated string literal at line 1, column 40"},
    {"select \"abc from inventory_data", "unterminated quoted identifier"},
    {"select 1 /* open", "unterminated comment starting at line 1, column 10"},
    {"select $1", "'$' is not supported"},
    {"select :name", "named parameters (:name) are not supported"},
    {"select E'\\n'", "escape string constants (E'...') are not supported"},
    {"select item_data from\ninventory_data where item_data #> '{a}'",
     "unsupported syntax: the path operators #> and #>> (use a chain of -> and ->>) at line 2, column 32"},
    {"select x::uuid", "cast to type 'uuid'"},
    {"select x::text[]", "array types"},
    {"select item_data || item_data from inventory_data", "jsonb concatenation (||)"},
    {"select jsonb_array_elements(item_data) from inventory_data", "jsonb_array_elements outside FROM"},
    {"select * from generate_series(1, 10)", "function 'generate_series' is not allowed in FROM"},
    {"select ? , ?", "at most one ? placeholder, found 2"},
    {"select from inventory_data", "syntax error: expected an expression, found 'from' at line 1, column 8"},
    {"select a from inventory_data where", "syntax error: expected an expression, found end of input"},
    {"select a form inventory_data", "syntax error: unexpected 'inventory_data' at line 1, column 15"},
    {"select (1", "syntax error: expected ')', found end of input"},
    {"select row_number() over () from inventory_data", "window functions (OVER)"},
    {"with inventory_data as (select 1) select 1", "must not be named inventory_data"},
    {"with json_store_data as (select 1) select 1", "must not be named json_store_data"},
    {"select * from public.json_store_data", "schema-qualified table names are not allowed at line 1, column 15"},
    {"select * from json_store_data_view_restricted", "table 'json_store_data_view_restricted' is not allowed"},
    {"select distinct on (a) a from inventory_data", "DISTINCT ON"},
    {"select a from inventory_data fetch first 1 rows only", "FETCH FIRST"},
    {"select 1 \x01", "unexpected byte"},
    {"select 1 from inventory_data where x ~ 'a'", "regular expression"},
    {"select json_build_object('a')", "json_build_object needs an even number of arguments"},
    {"select to_json(1, 2)", "to_json takes 1 argument, got 2"},
};

static void test_errors(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++) {
		struct inv_translation t;
		struct err e = {0};
		const char *pg = errors[i].pg;
		if (inv_dialect_translate(pg, strlen(pg), "V", &t, &e) == 0) {
			char *sql = t.sql;
			fail_msg("%s: translated to %s, expected an error", pg, sql);
		}
		if (e.code != ERR_INVALID || !strstr(e.msg, errors[i].message))
			fail_msg("%s: expected '%s', got '%s'", pg, errors[i].message, e.msg);
	}
}

static void test_depth_limit(void **state)
{
	char q[4096] = "select ";
	struct inv_translation t;
	struct err e;
	(void)state;

	memset(q + 7, '(', 1000);
	q[1007] = '\0';
	assert_int_not_equal(inv_dialect_translate(q, strlen(q), NULL, &t, &e), 0);
	assert_non_null(strstr(e.msg, "nested too deeply"));
}

static void test_not_nul_terminated(void **state)
{
	const char text[] = "select 1 from inventory_dataXYZ";
	struct inv_translation t;
	struct err e;
	(void)state;

	assert_int_equal(inv_dialect_translate(text, strlen(text) - 3, NULL, &t, &e), 0);
	assert_string_equal(t.sql, "SELECT 1 FROM inventory_data AS \"inventory_data\"");
	inv_translation_cleanup(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_translations),
	    cmocka_unit_test(test_errors),
	    cmocka_unit_test(test_depth_limit),
	    cmocka_unit_test(test_not_nul_terminated),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
