/* Unit tests for src/store/inventory_postings: the containment index's posting lists kept in
 * blocks by batches of changes on a SQLite store — a list loaded in order fills whole
 * blocks, an item added in the middle of a full block splits it in halves, a block emptied
 * goes, one left under a quarter full merges with the next when both fit, ids at int64_t's
 * extremes and gaps too wide for one block's bytes, the last change of an item winning, a
 * block that does not decode reported, and nothing written when nothing changes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "base/i64_block.h"
#include "base/str.h"
#include "store/inventory_keys.h"
#include "store/inventory_postings.h"
#include "store/store.h"
#include "unit_tmp.h"

#define RID 3

static char *dir; /* the store's folder (unit_tmpdir) */
static json_t *value; /* {"k": "v"}: an item's value of one key, */
static int64_t key;   /* that key's posting */
static struct store *store;
static struct store_conn *db;

static int setup(void **state)
{
	char url[96];
	struct err e;
	int64_t *k = NULL;
	size_t n = 0;

	(void)state;
	assert_non_null(value = json_pack("{s:s}", "k", "v"));
	assert_int_equal(inv_keys_postings(value, &k, &n, &e), 0);
	assert_int_equal(n, 1);
	key = k[0];
	free(k);
	dir = unit_tmpdir("/tmp/accord-postings-test-");
	assert_int_equal(str_fmt(url, sizeof url, "sqlite:%s/accord.db", dir), 0);
	if (!(store = store_open(url, &e)))
		fail_msg("store_open: %s", e.msg);
	assert_non_null(db = store_conn(store, &e));
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	json_decref(value);
	store_close(store);
	unit_rmtree(dir);
	return 0;
}

static int clear(void **state)
{
	(void)state;
	assert_int_equal(sqlite3_exec(store_native(db), "DELETE FROM inventory_postings", NULL, NULL, NULL), SQLITE_OK);
	return 0;
}

/* Item `item` of RID comes to hold `value` (add) or nothing (its value was `value`), in b. */
static void change(struct inventory_postings_batch *b, int64_t item, bool add)
{
	struct err e;

	assert_int_equal(store_inventory_postings_batch_item(b, item, add ? NULL : value, add ? &key : NULL, add, &e),
			 0);
}

static void apply(struct inventory_postings_batch *b)
{
	struct err e;

	assert_int_equal(store_tx_begin(db, &e), 0);
	if (store_inventory_postings_batch_apply(db, RID, b, &e))
		fail_msg("apply: %s", e.msg);
	assert_int_equal(store_tx_commit(db, &e), 0);
	assert_int_equal(b->n, 0);
}

/* The sizes of key's blocks in order (n of them at most), their ids in all (ascending,
 * checked), and each block's first id its key. */
static size_t block_sizes(size_t *sizes, size_t cap, struct i64_list *all)
{
	sqlite3_stmt *st;
	size_t n = 0;
	struct err e;

	i64_list_clear(all);
	assert_int_equal(sqlite3_prepare_v2(store_native(db),
					    "SELECT first_item, items FROM inventory_postings WHERE inventory = ?1 AND "
					    "hash = ?2 ORDER BY first_item",
					    -1, &st, NULL),
			 SQLITE_OK);
	sqlite3_bind_int64(st, 1, RID);
	sqlite3_bind_int64(st, 2, key);
	while (sqlite3_step(st) == SQLITE_ROW) {
		size_t before = all->n;
		int64_t first = sqlite3_column_int64(st, 0);
		const uint8_t *p = sqlite3_column_blob(st, 1);
		int len = sqlite3_column_bytes(st, 1);
		assert_true(len <= INV_POSTINGS_BLOCK_BYTES);
		assert_int_equal(i64_block_decode(first, p, (size_t)len, all, &e), 0);
		assert_true(before == 0 || all->v[before - 1] < first);
		assert_true(n < cap);
		sizes[n++] = all->n - before;
		assert_true(sizes[n - 1] <= INV_POSTINGS_BLOCK_IDS);
	}
	sqlite3_finalize(st);
	return n;
}

/* One batch: the items from, from + step, … up to to gain (add) or lose the key. */
static void range(int64_t from, int64_t to, int64_t step, bool add)
{
	struct inventory_postings_batch b = {0};

	for (int64_t i = from; i <= to; i += step)
		change(&b, i, add);
	apply(&b);
	store_inventory_postings_batch_cleanup(&b);
}

static void add_range(int64_t from, int64_t to, int64_t step)
{
	range(from, to, step, true);
}

static void remove_range(int64_t from, int64_t to)
{
	range(from, to, 1, false);
}

static void test_a_load_fills_whole_blocks(void **state)
{
	size_t sizes[8];
	struct i64_list all = {0};

	(void)state;
	add_range(1, 300, 1);
	assert_int_equal(block_sizes(sizes, 8, &all), 3);
	assert_int_equal(sizes[0], 128);
	assert_int_equal(sizes[1], 128);
	assert_int_equal(sizes[2], 44);
	/* the next load appends to the last block, then starts a new one */
	add_range(301, 400, 1);
	assert_int_equal(block_sizes(sizes, 8, &all), 4);
	assert_int_equal(sizes[2], 128);
	assert_int_equal(sizes[3], 16);
	assert_int_equal(all.n, 400);
	for (size_t i = 0; i < all.n; i++)
		assert_true(all.v[i] == (int64_t)i + 1);
	i64_list_cleanup(&all);
}

static void test_an_item_in_the_middle_splits_in_halves(void **state)
{
	size_t sizes[8];
	struct i64_list all = {0};

	(void)state;
	add_range(2, 256, 2); /* 128 even ids: one full block */
	assert_int_equal(block_sizes(sizes, 8, &all), 1);
	add_range(101, 101, 1);
	assert_int_equal(block_sizes(sizes, 8, &all), 2);
	assert_int_equal(sizes[0], 64);
	assert_int_equal(sizes[1], 65);
	/* an item before the list's first goes into the first block, which takes it as its key */
	add_range(-5, -5, 1);
	assert_int_equal(block_sizes(sizes, 8, &all), 2);
	assert_int_equal(sizes[0], 65);
	assert_true(all.v[0] == -5 && all.v[1] == 2);
	assert_int_equal(all.n, 130);
	i64_list_cleanup(&all);
}

static void test_emptied_blocks_go_and_small_ones_merge(void **state)
{
	size_t sizes[8];
	struct i64_list all = {0};

	(void)state;
	add_range(1, 384, 1); /* three full blocks: 1–128, 129–256, 257–384 */
	remove_range(129, 256);
	assert_int_equal(block_sizes(sizes, 8, &all), 2);
	assert_int_equal(all.n, 256);
	/* the first left with 20 ids, under a quarter: too many to merge with a full block */
	remove_range(21, 128);
	assert_int_equal(block_sizes(sizes, 8, &all), 2);
	assert_int_equal(sizes[0], 20);
	/* the second down to 100: now the first merges with it when it changes again */
	remove_range(357, 384);
	remove_range(20, 20);
	assert_int_equal(block_sizes(sizes, 8, &all), 1);
	assert_int_equal(sizes[0], 19 + 100);
	assert_true(all.v[0] == 1 && all.v[18] == 19 && all.v[19] == 257 && all.v[118] == 356);
	/* the list's first id removed: the block takes the next as its key */
	remove_range(1, 1);
	assert_int_equal(block_sizes(sizes, 8, &all), 1);
	assert_true(all.v[0] == 2);
	remove_range(-1000, 1000);
	assert_int_equal(block_sizes(sizes, 8, &all), 0);
	i64_list_cleanup(&all);
}

static void test_extremes_and_wide_gaps(void **state)
{
	struct inventory_postings_batch b = {0};
	size_t sizes[8];
	struct i64_list all = {0};

	(void)state;
	change(&b, INT64_MAX, true);
	change(&b, INT64_MIN, true);
	change(&b, 0, true);
	apply(&b);
	assert_int_equal(block_sizes(sizes, 8, &all), 1);
	assert_true(all.n == 3 && all.v[0] == INT64_MIN && all.v[1] == 0 && all.v[2] == INT64_MAX);
	remove_range(-1, 1);
	assert_int_equal(block_sizes(sizes, 8, &all), 1);
	assert_true(all.n == 2 && all.v[0] == INT64_MIN && all.v[1] == INT64_MAX);
	clear(state);
	/* 128 ids 2^40 apart: 6 bytes a gap, 762 in all, over the block's bytes: split */
	for (int64_t i = 0; i < 128; i++)
		change(&b, i << 40, true);
	apply(&b);
	assert_int_equal(block_sizes(sizes, 8, &all), 2);
	assert_int_equal(sizes[0] + sizes[1], 128);
	store_inventory_postings_batch_cleanup(&b);
	i64_list_cleanup(&all);
}

static void test_the_last_change_of_an_item_counts(void **state)
{
	struct inventory_postings_batch b = {0};
	size_t sizes[8];
	struct i64_list all = {0};

	(void)state;
	change(&b, 10, true);
	change(&b, 10, false);
	change(&b, 11, false);
	change(&b, 11, true);
	change(&b, 12, true);
	apply(&b);
	assert_int_equal(block_sizes(sizes, 8, &all), 1);
	assert_true(all.n == 2 && all.v[0] == 11 && all.v[1] == 12);
	store_inventory_postings_batch_cleanup(&b);
	i64_list_cleanup(&all);
}

static void test_a_block_that_does_not_decode(void **state)
{
	struct inventory_postings_batch b = {0};
	char sql[128], want[128];
	struct err e;

	(void)state;
	assert_int_equal(
	    str_fmt(sql, sizeof sql, "INSERT INTO inventory_postings VALUES (3, %lld, 5, X'0180')", (long long)key), 0);
	assert_int_equal(sqlite3_exec(store_native(db), sql, NULL, NULL, NULL), SQLITE_OK);
	change(&b, 9, true);
	assert_int_equal(store_tx_begin(db, &e), 0);
	assert_int_not_equal(store_inventory_postings_batch_apply(db, RID, &b, &e), 0);
	store_tx_rollback(db);
	assert_int_equal(e.code, ERR_INTERNAL);
	assert_int_equal(
	    str_fmt(want, sizeof want, "containment index of inventory 3, key %lld, block from item 5", (long long)key),
	    0);
	assert_non_null(strstr(e.msg, want));
	store_inventory_postings_batch_cleanup(&b);
}

static void test_nothing_written_for_nothing(void **state)
{
	struct inventory_postings_batch b = {0};
	sqlite3_int64 changes;
	size_t sizes[8];
	struct i64_list all = {0};

	(void)state;
	add_range(1, 3, 1);
	changes = sqlite3_total_changes64(store_native(db));
	remove_range(4, 9); /* items the list does not hold */
	change(&b, 2, true);
	apply(&b);
	assert_true(sqlite3_total_changes64(store_native(db)) == changes);
	assert_int_equal(block_sizes(sizes, 8, &all), 1);
	assert_int_equal(all.n, 3);
	store_inventory_postings_batch_cleanup(&b);
	i64_list_cleanup(&all);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(test_a_load_fills_whole_blocks, clear),
	    cmocka_unit_test_setup(test_an_item_in_the_middle_splits_in_halves, clear),
	    cmocka_unit_test_setup(test_emptied_blocks_go_and_small_ones_merge, clear),
	    cmocka_unit_test_setup(test_extremes_and_wide_gaps, clear),
	    cmocka_unit_test_setup(test_the_last_change_of_an_item_counts, clear),
	    cmocka_unit_test_setup(test_a_block_that_does_not_decode, clear),
	    cmocka_unit_test_setup(test_nothing_written_for_nothing, clear),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
