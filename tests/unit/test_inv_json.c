/* Unit tests for src/inventory/json: jsonb containment (PostgreSQL @> semantics) and the
 * SQL functions used by translated queries; and for src/store/inventory_keys: the key walk
 * that feeds the item key index. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "inventory/json.h"
#include "inventory/json_canon.h"
#include "inventory/json_text.h"
#include "store/inventory_keys.h"
#include "store/sqlite_api.h"

static bool contains(const char *a, const char *b)
{
	json_t *ja = json_loads(a, JSON_DECODE_ANY, NULL), *jb = json_loads(b, JSON_DECODE_ANY, NULL);
	bool r;

	assert_non_null(ja);
	assert_non_null(jb);
	r = inv_json_contains(ja, jb);
	json_decref(ja);
	json_decref(jb);
	return r;
}

/* Expected values are what PostgreSQL 15 answers for 'a'::jsonb @> 'b'::jsonb. */
static const struct {
	const char *a, *b;
	bool expect;
} cases[] = {
    /* scalars */
    {"1", "1", true},
    {"1", "1.0", true},
    {"1.0", "1", true},
    {"100", "1e2", true},
    {"1", "2", false},
    {"1", "\"1\"", false},
    {"\"a\"", "\"a\"", true},
    {"\"a\"", "\"A\"", false},
    {"true", "true", true},
    {"true", "false", false},
    {"true", "1", false},
    {"null", "null", true},
    {"null", "false", false},
    {"9007199254740993", "9007199254740992", false},
    /* objects */
    {"{}", "{}", true},
    {"{\"a\":1}", "{}", true},
    {"{}", "{\"a\":1}", false},
    {"{\"a\":1,\"b\":2}", "{\"a\":1}", true},
    {"{\"a\":1}", "{\"a\":1,\"b\":2}", false},
    {"{\"a\":1}", "{\"a\":\"1\"}", false},
    {"{\"a\":1}", "{\"a\":1.00}", true},
    {"{\"a\":null}", "{\"a\":null}", true},
    {"{\"a\":null}", "{\"b\":null}", false},
    {"{\"a\":{\"b\":1,\"c\":2}}", "{\"a\":{\"b\":1}}", true},
    {"{\"a\":{\"b\":1}}", "{\"a\":{\"b\":1,\"c\":2}}", false},
    {"{\"a\":{\"b\":{\"c\":[1,2]}}}", "{\"a\":{\"b\":{\"c\":[2]}}}", true},
    {"{\"a\":{\"b\":1}}", "{\"a\":{}}", true},
    {"{\"a\":1}", "{\"a\":{}}", false},
    {"{\"a\":{}}", "{\"a\":[]}", false},
    {"{\"a\":[1]}", "{\"a\":1}", false},
    {"{\"a\":1}", "{\"a\":[1]}", false},
    /* arrays */
    {"[]", "[]", true},
    {"[1,2,3]", "[]", true},
    {"[1,2,3]", "[3,1]", true},
    {"[1,2,3]", "[1,1,1]", true},
    {"[1,2]", "[1,4]", false},
    {"[1,[2,3]]", "[[3]]", true},
    {"[1,[2,3]]", "[3]", false},
    {"[[1]]", "[1]", false},
    {"[{\"a\":1,\"b\":2},{\"c\":3}]", "[{\"a\":1}]", true},
    {"[{\"a\":1},{\"b\":2}]", "[{\"a\":1,\"b\":2}]", false},
    {"[{\"a\":1}]", "[[]]", false},
    {"{\"tags\":[\"web\",\"db\"]}", "{\"tags\":[\"db\"]}", true},
    {"{\"tags\":[\"web\",\"db\"]}", "{\"tags\":[\"mail\"]}", false},
    /* the top-level special case: an array contains a scalar */
    {"[\"a\",\"b\"]", "\"a\"", true},
    {"[\"a\",\"b\"]", "\"c\"", false},
    {"[[\"a\"]]", "\"a\"", false},
    {"\"a\"", "[\"a\"]", false},
    {"{\"a\":1}", "[]", false},
    {"[]", "{}", false},
};

static void test_contains_matches_postgres(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool got = contains(cases[i].a, cases[i].b);
		if (got != cases[i].expect)
			fail_msg("%s @> %s: expected %d, got %d", cases[i].a, cases[i].b, cases[i].expect, got);
	}
}

struct collected {
	char text[4096];
	size_t len;
};

static int collect(void *ctx, const struct inv_key *k, struct err *e)
{
	struct collected *c = ctx;
	int n;
	(void)e;

	switch (k->kind) {
	case INV_KEY_STRING:
		n = snprintf(c->text + c->len, sizeof(c->text) - c->len, "%s=%.*s;", k->path, (int)k->str_len, k->str);
		break;
	case INV_KEY_NUMBER:
		n = snprintf(c->text + c->len, sizeof(c->text) - c->len, "%s=%g;", k->path, k->num);
		break;
	case INV_KEY_BOOL:
		n = snprintf(c->text + c->len, sizeof(c->text) - c->len, "%s=%d;", k->path, k->boolean);
		break;
	default:
		n = snprintf(c->text + c->len, sizeof(c->text) - c->len, "%s;", k->path);
		break;
	}
	c->len += (size_t)n;
	return 0;
}

static void test_keys(void **state)
{
	struct collected c = {{0}, 0};
	struct err e;
	json_t *v = json_loads("{\"a\":{\"b\":1.5,\"c.d\":\"x\"},\"t\":[\"w\",[true]],\"n\":null,\"e\":{}}", 0, NULL);
	(void)state;

	assert_non_null(v);
	assert_int_equal(inv_keys_each(v, collect, &c, &e), 0);
	assert_string_equal(c.text, ".a:o;.a.b:n=1.5;.a.c\\.d:s=x;.t:a;.t[]:s=w;.t[]:a;.t[][]:b=1;.n:z;.e:o;");
	json_decref(v);
}

static void test_keys_skip_long_strings(void **state)
{
	struct collected c = {{0}, 0};
	struct err e;
	char big[INV_KEY_STR_MAX + 20];
	json_t *v = json_object();
	(void)state;

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	json_object_set_new(v, "long", json_string(big));
	json_object_set_new(v, "short", json_integer(1));
	assert_int_equal(inv_keys_each(v, collect, &c, &e), 0);
	assert_string_equal(c.text, ".short:n=1;");
	json_decref(v);
}

/* Every key of a contained filter is a key of the item: the property the index relies on. */
static void test_keys_are_necessary(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct collected ca = {{0}, 0}, cb = {{0}, 0};
		struct err e;
		json_t *a = json_loads(cases[i].a, JSON_DECODE_ANY, NULL),
		       *b = json_loads(cases[i].b, JSON_DECODE_ANY, NULL);
		if (cases[i].expect && json_is_object(b)) {
			char *tok, *end;
			assert_int_equal(inv_keys_each(a, collect, &ca, &e), 0);
			assert_int_equal(inv_keys_each(b, collect, &cb, &e), 0);
			for (tok = cb.text; (end = strchr(tok, ';')) != NULL; tok = end + 1) {
				*end = '\0';
				if (!strstr(ca.text, tok))
					fail_msg("key %s of %s missing from %s", tok, cases[i].b, cases[i].a);
			}
		}
		json_decref(a);
		json_decref(b);
	}
}

/* The text scan answers as the tree does, or leaves it to the tree. */
static void test_filter_on_text(void **state)
{
	static const struct {
		const char *a, *b;
		int expect; /* -1: left to the tree */
	} flat[] = {
	    {"{\"env\":\"prod\",\"n\":1}", "{\"env\":\"prod\"}", 1},
	    {"{\"env\":\"prod\"}", "{\"env\":\"test\"}", 0},
	    {" { \"a\" : [1, {\"b\": \"}\\\"\"}] , \"n\" : 1.0 } ", "{\"n\":1}", 1},
	    {"{\"n\":1e0}", "{\"n\":1}", 1},
	    {"{\"a\":{\"b\":1,\"c\":[1,{\"d\":null}],\"e\":\"x\\\\\"},\"n\":1,\"z\":[]}", "{\"n\":1}", 1},
	    {"{\"a\":{\"n\":1}}", "{\"n\":1}", 0},
	    {"{\"n\":\"1\"}", "{\"n\":1}", 0},
	    {"{\"n\":1}", "{\"n\":\"1\"}", 0},
	    {"{\"n\":9007199254740993}", "{\"n\":9007199254740992}", 0},
	    {"{\"n\":-0.0}", "{\"n\":0}", 1},
	    {"{\"z\":null,\"t\":true,\"f\":false}", "{\"z\":null,\"t\":true,\"f\":false}", 1},
	    {"{\"t\":true}", "{\"t\":1}", 0},
	    {"{\"a\":{\"b\":1}}", "{\"b\":1}", 0},
	    {"{\"a\":[1]}", "{\"a\":1}", 0},
	    {"{\"a\":1,\"a\":2}", "{\"a\":2}", 1},
	    {"{\"a\":2,\"a\":1}", "{\"a\":2}", 0},
	    {"{\"a\":\"x\"}", "{\"a\":\"x\",\"b\":null}", 0},
	    {"{}", "{\"a\":1}", 0},
	    {"{\"a\\u0062\":1}", "{\"ab\":1}", -1},
	    {"{\"a\":\"\\u0062\"}", "{\"a\":\"b\"}", -1},
	    {"[1]", "{\"a\":1}", 0},
	    {"{\"a\":1}", "{\"a\":[1]}", 0},
	    {"{\"a\":1}", "{}", 1},
	    /* nested objects and arrays */
	    {"{\"os\":{\"family\":\"Debian\",\"version\":\"12\"},\"n\":1}", "{\"os\":{\"version\":\"12\"}}", 1},
	    {"{\"os\":{\"family\":\"Debian\",\"version\":\"11\"}}", "{\"os\":{\"version\":\"12\"}}", 0},
	    {"{\"os\":[{\"version\":\"12\"}]}", "{\"os\":{\"version\":\"12\"}}", 0},
	    {"{\"tags\":[\"linux\",\"gpu\"]}", "{\"tags\":[\"gpu\"]}", 1},
	    {"{\"tags\":[\"linux\",[\"gpu\"]]}", "{\"tags\":[\"gpu\"]}", 0},
	    {"{\"tags\":[\"gpu\"]}", "{\"tags\":[\"gpu\",\"linux\"]}", 0},
	    {"{\"tags\":[1,2,3]}", "{\"tags\":[3,1,1]}", 1},
	    {"{\"tags\":[1.0,\"2\"]}", "{\"tags\":[1,2]}", 0},
	    {"{\"a\":[[1,2],{\"k\":\"v\",\"j\":[]}]}", "{\"a\":[[2],{\"j\":[]}]}", 1},
	    {"{\"a\":[[1,2],{\"k\":\"v\"}]}", "{\"a\":[{\"j\":[]}]}", 0},
	    {"{\"a\":[[]]}", "{\"a\":[[]]}", 1},
	    {"{\"a\":[]}", "{\"a\":[[]]}", 0},
	    {"{\"a\":[]}", "{\"a\":[]}", 1},
	    {"{\"a\":{}}", "{\"a\":{}}", 1},
	    {"{\"a\":[]}", "{\"a\":{}}", 0},
	    {"{\"a\":{\"b\":1},\"a\":{\"c\":1}}", "{\"a\":{\"b\":1}}", 0},
	    {"{\"a\":{\"b\":1,\"b\":2}}", "{\"a\":{\"b\":2}}", 1},
	    {"[1,\"x\",[2]]", "\"x\"", 1},
	    {"[1,\"x\",[2]]", "2", 0},
	    {"[1,\"x\",[2]]", "[[2],1]", 1},
	    {"\"x\"", "\"x\"", 1},
	    {"{\"a\":[\"\\u0062\"]}", "{\"a\":[\"b\"]}", -1},
	    {"{\"a\":99999999999999999999}", "{\"a\":1}", -1},
	    {"{\"a\":1", "{\"a\":1}", -1},
	};
	(void)state;

	for (size_t i = 0; i < sizeof(flat) / sizeof(flat[0]); i++) {
		json_t *b = json_loads(flat[i].b, JSON_DECODE_ANY, NULL);
		int got;
		assert_non_null(b);
		got = inv_json_text_contains(flat[i].a, strlen(flat[i].a), b);
		if (got != flat[i].expect)
			fail_msg("%s @> %s: expected %d, got %d", flat[i].a, flat[i].b, flat[i].expect, got);
		if (got >= 0 && got != contains(flat[i].a, flat[i].b))
			fail_msg("%s @> %s: the scan and the tree disagree", flat[i].a, flat[i].b);
		json_decref(b);
	}
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *b = json_loads(cases[i].b, JSON_DECODE_ANY, NULL);
		int got = inv_json_text_contains(cases[i].a, strlen(cases[i].a), b);
		if (got >= 0 && got != cases[i].expect)
			fail_msg("%s @> %s: expected %d, the scan says %d", cases[i].a, cases[i].b, cases[i].expect,
				 got);
		json_decref(b);
	}
}

static sqlite3 *open_mem(void)
{
	sqlite3 *db = NULL;
	struct err e;

	/* The module calls SQLite through the table that the store's open fills. */
	assert_int_equal(sqlite_api_load(&e), 0);
	assert_int_equal(sqlite3_open(":memory:", &db), SQLITE_OK);
	assert_int_equal(inv_json_register(db, &e), 0);
	return db;
}

static char *one(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;
	char *r;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		fail_msg("%s: %s", sql, sqlite3_errmsg(db));
	if (sqlite3_step(st) != SQLITE_ROW) {
		r = strdup(sqlite3_errmsg(db));
		sqlite3_finalize(st);
		return r;
	}
	r = strdup(sqlite3_column_type(st, 0) == SQLITE_NULL ? "NULL" : (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return r;
}

static void check(sqlite3 *db, const char *sql, const char *expect)
{
	char *got = one(db, sql);
	if (strcmp(got, expect) != 0)
		fail_msg("%s: expected %s, got %s", sql, expect, got);
	free(got);
}

static void test_sql_functions(void **state)
{
	sqlite3 *db = open_mem();
	(void)state;

	check(db, "SELECT json_contains('{\"a\":1,\"b\":[1,2]}', '{\"b\":[2]}')", "1");
	check(db, "SELECT json_contains('{\"a\":1}', '{\"a\":2}')", "0");
	check(db, "SELECT json_contains(NULL, '{}')", "NULL");
	check(db, "SELECT json_contains('{x', '{\"a\":1}')", "json_contains: argument is not valid JSON");
	check(db, "SELECT json_contains('{\"a\":1}', '{}')", "1");
	check(db, "SELECT json_contains('[1]', '{}')", "0");
	check(db, "SELECT accord_pg_text('\"a\\\"b\"')", "a\"b");
	check(db, "SELECT accord_pg_text('22')", "22");
	check(db, "SELECT accord_pg_text('null')", "NULL");
	check(db, "SELECT accord_pg_text('{\"a\":1}')", "{\"a\":1}");
	check(db, "SELECT typeof(accord_pg_text('true'))", "text");
	check(db, "SELECT accord_pg_bool(' TRUE ')", "1");
	check(db, "SELECT accord_pg_bool('off')", "0");
	check(db, "SELECT accord_pg_bool('maybe')", "invalid input syntax for type boolean");
	check(db, "SELECT json_object('a', accord_json_bool(1 = 1))", "{\"a\":true}");
	check(
	    db,
	    "SELECT json_group_array(accord_json_value(value, type)) FROM json_each('[1,\"x\",true,null,{\"b\":[2]}]')",
	    "[1,\"x\",true,null,{\"b\":[2]}]");
	check(db, "SELECT accord_jsonb_typeof(' [1]')", "array");
	check(db, "SELECT accord_jsonb_typeof('\"s\"')", "string");
	check(db, "SELECT accord_jsonb_typeof('false')", "boolean");
	check(db, "SELECT accord_jsonb_typeof('-1.5')", "number");
	sqlite3_close(db);
}

/* Containment inside SQL over many rows with a constant filter (parsed once, auxiliary data). */
/* A text is canonical exactly when jansson prints it back byte for byte (json_canon.h); the
 * cases it leaves to jansson are allowed to be printed the same. */
static void test_canonical_text(void **state)
{
	static const struct {
		const char *text;
		bool canon;
	} texts[] = {
	    {"{\"host\":\"h1\",\"os\":{\"family\":\"Debian\",\"v\":\"12\"},\"cpu\":2,\"tags\":[\"a\",\"b\"]}", true},
	    {"{\"z\":null,\"t\":true,\"f\":false,\"e\":{},\"a\":[],\"n\":-12,\"m\":0}", true},
	    {"\"tab\\there \\\"q\\\" \\\\ \\n\\r\\b\\f\"", true},
	    {"\"\xc3\xa9 \xe6\x97\xa5 \xf0\x9f\x98\x80 \x7f /\"", true},
	    {"[9223372036854775807]", false}, /* 19 digits: left to jansson */
	    {"[922337203685477580]", true},
	    {"{\"a\":1,\"a\":2}", false},
	    {"{\"a\":{\"b\":1},\"b\":{\"a\":1}}", true},
	    {"{ \"a\":1}", false},
	    {"{\"a\":1} ", false},
	    {"[1.5]", false},
	    {"[1e2]", false},
	    {"[-0]", false},
	    {"[01]", false},
	    {"\"\\u0062\"", false},
	    {"\"\\/\"", false},
	    {"\"\x01\"", false},
	    {"\"\xc0\xaf\"", false},
	    {"\"\xed\xa0\x80\"", false},
	    {"\"\xf4\x90\x80\x80\"", false},
	    {"\"\xe0\x80\xaf\"", false},
	    {"\"abc", false},
	    {"[1,]", false},
	    {"{\"a\"}", false},
	    {"tru", false},
	    {"", false},
	};
	(void)state;

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		size_t n = strlen(texts[i].text);
		bool got = inv_json_canonical(texts[i].text, n);
		json_t *v;
		char *out;
		if (got != texts[i].canon)
			fail_msg("%s: expected %d", texts[i].text, texts[i].canon);
		if (!got)
			continue;
		v = json_loadb(texts[i].text, n, JSON_DECODE_ANY, NULL);
		assert_non_null(v);
		out = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		assert_string_equal(out, texts[i].text);
		free(out);
		json_decref(v);
	}
}

static void test_contains_over_many_rows(void **state)
{
	sqlite3 *db = open_mem();
	(void)state;

	check(db,
	      "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 1000) "
	      "SELECT sum(json_contains(json_object('n', n % 10), '{\"n\":3}')) FROM r",
	      "100");
	sqlite3_close(db);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_contains_matches_postgres),
	    cmocka_unit_test(test_filter_on_text),
	    cmocka_unit_test(test_canonical_text),
	    cmocka_unit_test(test_keys),
	    cmocka_unit_test(test_keys_skip_long_strings),
	    cmocka_unit_test(test_keys_are_necessary),
	    cmocka_unit_test(test_sql_functions),
	    cmocka_unit_test(test_contains_over_many_rows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
