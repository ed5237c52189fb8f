/* Unit tests for http/range: every form of the Range header, clamping, unsatisfiable and
 * malformed values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "http/range.h"

static void ok(const char *v, uint64_t size, uint64_t first, uint64_t last)
{
	struct http_range r;
	struct err e;

	if (http_range_parse(v, size, false, &r, &e))
		fail_msg("'%s' size %llu: %s", v, (unsigned long long)size, e.msg);
	assert_false(r.whole);
	assert_int_equal(r.first, first);
	assert_int_equal(r.last, last);
}

static void fails(const char *v, uint64_t size, enum err_code code)
{
	struct http_range r;
	struct err e;

	e.code = ERR_OK;
	assert_int_equal(http_range_parse(v, size, false, &r, &e), -(int)code);
	assert_int_equal(e.code, code);
}

static void test_forms(void **state)
{
	struct http_range r;
	struct err e;
	(void)state;

	assert_int_equal(http_range_parse(NULL, 10, false, &r, &e), 0);
	assert_true(r.whole);
	assert_int_equal(http_range_parse("  ", 10, false, &r, &e), 0);
	assert_true(r.whole);
	ok("bytes=0-4", 10, 0, 4);
	ok("bytes=2-2", 10, 2, 2);
	ok("BYTES=3-", 10, 3, 9);
	ok("bytes=-3", 10, 7, 9);
	ok("bytes=-30", 10, 0, 9);
	ok("bytes=5-100", 10, 5, 9);
	ok("0-4", 10, 0, 4);
	ok("4-", 10, 4, 9);
	ok("-1", 10, 9, 9);
	ok(" bytes=1-2 ", 10, 1, 2);
	ok("bytes=9-9", 10, 9, 9);
}

static void test_unsatisfiable(void **state)
{
	(void)state;
	fails("bytes=10-", 10, ERR_RANGE);
	fails("bytes=10-20", 10, ERR_RANGE);
	fails("bytes=0-", 0, ERR_RANGE);
	fails("bytes=-5", 0, ERR_RANGE);
	fails("bytes=-0", 10, ERR_RANGE);
}

static void test_malformed(void **state)
{
	(void)state;
	fails("bytes=", 10, ERR_INVALID);
	fails("bytes=-", 10, ERR_INVALID);
	fails("bytes=5-2", 10, ERR_INVALID);
	fails("bytes=a-2", 10, ERR_INVALID);
	fails("bytes=1-b", 10, ERR_INVALID);
	fails("bytes=+1-2", 10, ERR_INVALID);
	fails("bytes=1 -2", 10, ERR_INVALID);
	fails("bytes=0-1,4-5", 10, ERR_INVALID);
	fails("lines=0-1", 10, ERR_INVALID);
	fails("12", 10, ERR_INVALID);
	fails("bytes=99999999999999999999-", 10, ERR_INVALID);
	fails("bytes=1-2-3", 10, ERR_INVALID);
}

static void test_follow(void **state)
{
	struct http_range r;
	struct err e;
	(void)state;

	assert_int_equal(http_range_parse("bytes=20-", 10, true, &r, &e), 0);
	assert_int_equal(r.first, 20);
	assert_true(r.open_end);
	assert_int_equal(http_range_parse("bytes=-5", 0, true, &r, &e), 0);
	assert_int_equal(r.first, 0);
	assert_int_equal(http_range_parse("bytes=-5", 0, false, &r, &e), -ERR_RANGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_forms),
	    cmocka_unit_test(test_unsatisfiable),
	    cmocka_unit_test(test_malformed),
	    cmocka_unit_test(test_follow),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
