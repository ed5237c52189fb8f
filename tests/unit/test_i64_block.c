/* Unit tests for src/base/i64_block: the posting blocks' encoding of ascending id lists (the
 * first id apart, the gaps as minimal LEB128 varints): known bytes, lists of none or one gap,
 * ids at int64_t's extremes, random lists both ways, and every kind of bytes that are not a
 * block refused with the list left as it was. */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/i64_block.h"

/* Encodes v[0..n), checks the size, decodes it back and compares; returns the length. */
static size_t round_trip(const int64_t *v, size_t n)
{
	uint8_t buf[I64_BLOCK_BOUND(64) + 1];
	struct i64_list back = {0};
	struct err e;
	size_t len;

	assert_true(n >= 1 && n <= 64);
	len = i64_block_encode(v, n, buf);
	assert_true(len <= I64_BLOCK_BOUND(n));
	assert_int_equal(len, i64_block_size(v, n));
	assert_int_equal(i64_block_decode(v[0], buf, len, &back, &e), 0);
	assert_int_equal(back.n, n);
	assert_memory_equal(back.v, v, n * sizeof(*v));
	i64_list_cleanup(&back);
	return len;
}

static void test_known_bytes(void **state)
{
	static const int64_t v[] = {5, 6, 134, 16518, 16519 + 2097151};
	static const uint8_t want[] = {0x01, 0x80, 0x01, 0x80, 0x80, 0x01, 0x80, 0x80, 0x80, 0x01};
	uint8_t buf[I64_BLOCK_BOUND(5)];

	(void)state;
	/* gaps 1, 128, 16384, 2097152: one byte more at each power of 2^7 */
	assert_int_equal(i64_block_encode(v, 5, buf), sizeof want);
	assert_memory_equal(buf, want, sizeof want);
	assert_int_equal(round_trip(v, 5), sizeof want);
}

static void test_one_id_has_no_bytes(void **state)
{
	static const int64_t ids[] = {0, -1, 1, INT64_MIN, INT64_MAX};
	struct i64_list l = {0};
	struct err e;

	(void)state;
	assert_int_equal(i64_block_size(ids, 0), 0); /* nothing: no bytes either */
	assert_int_equal(i64_block_encode(ids, 0, NULL), 0);
	for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
		assert_int_equal(round_trip(&ids[i], 1), 0);
		i64_list_clear(&l);
		assert_int_equal(i64_block_decode(ids[i], NULL, 0, &l, &e), 0);
		assert_int_equal(l.n, 1);
		assert_true(l.v[0] == ids[i]);
	}
	i64_list_cleanup(&l);
}

static void test_extremes(void **state)
{
	static const int64_t whole[] = {INT64_MIN, INT64_MAX};
	static const int64_t steps[] = {INT64_MIN, INT64_MIN + 1, -1, 0, 1, INT64_MAX - 1, INT64_MAX};
	static const uint8_t widest[] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01};
	uint8_t buf[I64_BLOCK_GAP_MAX];

	(void)state;
	/* the widest gap, 2^64 - 1, takes ten bytes */
	assert_int_equal(i64_block_encode(whole, 2, buf), I64_BLOCK_GAP_MAX);
	assert_memory_equal(buf, widest, sizeof widest);
	round_trip(whole, 2);
	round_trip(steps, sizeof steps / sizeof steps[0]);
}

static void test_random_lists(void **state)
{
	unsigned seed = 42;

	(void)state;
	for (int round = 0; round < 2000; round++) {
		int64_t v[64];
		size_t n = 1 + (size_t)rand_r(&seed) % 64;
		int shift = rand_r(&seed) % 60;
		v[0] = (int64_t)rand_r(&seed) - RAND_MAX / 2;
		for (size_t i = 1; i < n; i++) /* gaps of every width, never past INT64_MAX */
			v[i] = v[i - 1] + 1 + (int64_t)(((uint64_t)rand_r(&seed) << shift) % ((uint64_t)1 << 56));
		round_trip(v, n);
	}
}

/* Decoding bytes that are not a block fails and leaves the list as it was. */
static void refused(int64_t first, const uint8_t *p, size_t len)
{
	struct i64_list l = {0};
	struct err e;

	assert_int_equal(i64_list_push(&l, 7, &e), 0);
	assert_int_not_equal(i64_block_decode(first, p, len, &l, &e), 0);
	assert_int_equal(e.code, ERR_INVALID);
	assert_non_null(strstr(e.msg, "posting block"));
	assert_int_equal(l.n, 1);
	assert_true(l.v[0] == 7);
	i64_list_cleanup(&l);
}

static void test_not_a_block(void **state)
{
	static const uint8_t cut[] = {0x01, 0x80};
	static const uint8_t zero[] = {0x05, 0x00};
	static const uint8_t longer[] = {0x80, 0x00};	    /* 0 in two bytes */
	static const uint8_t padded[] = {0x81, 0x80, 0x00}; /* 1 in three bytes */
	static const uint8_t eleven[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
	static const uint8_t over64[] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02};
	static const uint8_t two[] = {0x02};
	static const uint8_t widest[] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01};

	(void)state;
	refused(1, cut, sizeof cut);
	refused(1, zero, sizeof zero);
	refused(1, longer, sizeof longer);
	refused(1, padded, sizeof padded);
	refused(1, eleven, sizeof eleven);
	refused(INT64_MIN, over64, sizeof over64);
	refused(INT64_MAX - 1, two, sizeof two); /* past INT64_MAX */
	refused(INT64_MIN + 1, widest, sizeof widest);
	refused(-1, widest, sizeof widest);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_known_bytes), cmocka_unit_test(test_one_id_has_no_bytes),
	    cmocka_unit_test(test_extremes),	cmocka_unit_test(test_random_lists),
	    cmocka_unit_test(test_not_a_block),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
