/* Unit tests for src/inventory/query: a text is compiled once, then checked and run by the
 * executor of the store's backend on a real store (SQLite in a temporary folder), where a
 * query sees its own inventory's items and no other's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/limits.h"
#include "base/path.h"
#include "base/rand.h"
#include "base/str.h"
#include "inventory/query.h"
#include "store/orgs.h"

static char dir[64];
static struct store *store;
static struct store_conn *db;
static struct inventory mine, other;

static void add_inventory(const struct org *o, const char *name, struct inventory *inv)
{
	struct err e;

	*inv = (struct inventory){.visibility = "PUBLIC"};
	uuid_v4(inv->id);
	memcpy(inv->org_id, o->id, sizeof inv->org_id);
	assert_int_equal(str_fmt(inv->name, sizeof inv->name, "%s", name), 0);
	if (store_inventory_insert(db, inv, &e))
		fail_msg("inventory: %s", e.msg);
}

static void add_item(const struct inventory *inv, const char *path, const char *data)
{
	json_t *v = json_loads(data, 0, NULL);
	struct err e;

	assert_non_null(v);
	if (store_inventory_item_put(db, inv->rid, path, v, &e))
		fail_msg("item %s: %s", path, e.msg);
	json_decref(v);
}

static int setup(void **state)
{
	char url[96];
	struct org o = {.visibility = "PUBLIC"};
	struct err e;
	(void)state;

	rand_init();
	limits_defaults();
	assert_int_equal(str_fmt(dir, sizeof dir, "/tmp/accord-inv-query-XXXXXX"), 0);
	assert_non_null(mkdtemp(dir));
	assert_int_equal(str_fmt(url, sizeof url, "sqlite:%s/accord.db", dir), 0);
	if (!(store = store_open(url, &e)) || !(db = store_conn(store, &e)))
		fail_msg("store: %s", e.msg);
	uuid_v4(o.id);
	assert_int_equal(str_fmt(o.name, sizeof o.name, "org"), 0);
	assert_int_equal(store_org_insert(db, &o, NULL, NULL, &e), 0);
	add_inventory(&o, "mine", &mine);
	add_inventory(&o, "other", &other);
	add_item(&mine, "web1", "{\"host\":\"web1\",\"env\":\"prod\"}");
	add_item(&mine, "web2", "{\"host\":\"web2\",\"env\":\"test\"}");
	add_item(&mine, "db1", "{\"host\":\"db1\",\"env\":\"prod\"}");
	add_item(&other, "x", "{\"host\":\"secret-host\",\"env\":\"prod\"}");
	return 0;
}

static int teardown(void **state)
{
	struct err e;
	(void)state;

	store_close(store);
	return path_remove_tree(dir, &e);
}

/* Compiles and runs text on inv: its compact JSON result, or its error's message, must
 * contain want. */
static void expect(const struct inventory *inv, const char *text, const char *filter, const char *want)
{
	struct inv_query q;
	struct err e = {0};
	json_t *rows = NULL;
	char *got = NULL, shown[512];

	if (inv_query_compile(text, strlen(text), &q, &e) == 0 && inv_query_run(db, inv, &q, filter, &rows, &e) == 0)
		got = json_dumps(rows, JSON_COMPACT | JSON_ENCODE_ANY);
	str_fmt_cut(shown, sizeof shown, "%s", got ? got : e.msg);
	free(got);
	json_decref(rows);
	if (strstr(shown, want) == NULL)
		fail_msg("%s\n  want: %s\n  got:  %s", text, want, shown);
}

static void test_compile(void **state)
{
	static const char text[] = "select item_data from inventory_data where item_data @> ?::jsonb;trailing";
	struct inv_query q;
	struct err e;
	(void)state;

	/* the text need not end at its length: the compiled query borrows exactly len bytes */
	assert_int_equal(inv_query_compile(text, strlen(text) - 8, &q, &e), 0);
	assert_ptr_equal(q.text, text);
	assert_int_equal(q.n_params, 1);
	assert_true(q.prefilter);
	assert_int_equal(inv_query_compile("select 1 from inventory_data", 28, &q, &e), 0);
	assert_int_equal(q.n_params, 0);
	assert_false(q.prefilter);
	assert_int_not_equal(inv_query_compile("select name from users", 22, &q, &e), 0);
	assert_non_null(strstr(e.msg, "'users' is not allowed"));
}

static void test_run_sees_its_own_inventory(void **state)
{
	static const char hosts[] =
	    "select item_data->'host' from inventory_data where item_data @> ?::jsonb order by 1";
	(void)state;

	expect(&mine, hosts, "{\"env\":\"prod\"}", "[\"db1\",\"web1\"]");
	expect(&other, hosts, "{\"env\":\"prod\"}", "[\"secret-host\"]");
	expect(&mine, "select count(*) from inventory_data", NULL, "[3]");
	expect(&mine, "select inventory_id from inventory_data limit 1", NULL, mine.id);
	expect(&mine, hosts, NULL, "the query has a ? placeholder");
}

static void test_check(void **state)
{
	static const char ok[] = "select item_data from inventory_data";
	static const char bad[] = "select nosuch(item_data) from inventory_data";
	struct inv_query q;
	struct err e;
	(void)state;

	assert_int_equal(inv_query_compile(ok, strlen(ok), &q, &e), 0);
	assert_int_equal(inv_query_check(db, &q, &e), 0);
	assert_int_equal(inv_query_compile(bad, strlen(bad), &q, &e), 0);
	assert_int_not_equal(inv_query_check(db, &q, &e), 0);
	assert_non_null(strstr(e.msg, "nosuch"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_compile),
	    cmocka_unit_test(test_run_sees_its_own_inventory),
	    cmocka_unit_test(test_check),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
