/* Unit tests for src/base/i64_list: sorting and intersecting sorted id lists, the merge and
 * the galloping search against a plain nested loop, on lists of very different lengths. */
#include <setjmp.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "base/i64_list.h"

static void fill(struct i64_list *l, unsigned *seed, size_t n, int64_t range)
{
	struct err e;

	for (size_t i = 0; i < n; i++)
		assert_int_equal(i64_list_push(l, (int64_t)(rand_r(seed) % range) - range / 4, &e), 0);
	i64_list_sort(l);
}

static bool has(const struct i64_list *l, int64_t x)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i] == x)
			return true;
	return false;
}

static void test_sort_drops_repeats(void **state)
{
	struct i64_list l = {0};
	struct err e;
	static const int64_t in[] = {5, -1, 5, 3, INT64_MAX, -1, INT64_MIN, 3};

	(void)state;
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		assert_int_equal(i64_list_push(&l, in[i], &e), 0);
	i64_list_sort(&l);
	assert_int_equal(l.n, 5);
	assert_true(l.v[0] == INT64_MIN && l.v[1] == -1 && l.v[2] == 3 && l.v[3] == 5 && l.v[4] == INT64_MAX);
	i64_list_cleanup(&l);
	assert_null(l.v);
}

static void test_intersect_matches_a_nested_loop(void **state)
{
	static const size_t sizes[][2] = {{0, 10}, {10, 0}, {1, 1000}, {5, 5000}, {300, 400}, {1000, 3},
					  {64, 64 * 17}, {2000, 2000}, {7, 100000}};
	unsigned seed = 42;

	(void)state;
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		for (int round = 0; round < 20; round++) {
			struct i64_list a = {0}, b = {0}, want = {0};
			struct err e;
			fill(&a, &seed, sizes[k][0], 4000 + round * 500);
			fill(&b, &seed, sizes[k][1], 4000 + round * 500);
			for (size_t i = 0; i < a.n; i++)
				if (has(&b, a.v[i]))
					assert_int_equal(i64_list_push(&want, a.v[i], &e), 0);
			i64_list_intersect(&a, &b);
			assert_int_equal(a.n, want.n);
			for (size_t i = 0; i < a.n; i++)
				assert_true(a.v[i] == want.v[i]);
			i64_list_cleanup(&a);
			i64_list_cleanup(&b);
			i64_list_cleanup(&want);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sort_drops_repeats),
	    cmocka_unit_test(test_intersect_matches_a_nested_loop),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
