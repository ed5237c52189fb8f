/* Unit tests for src/store/pq_api.c: a libpq that cannot be loaded gives a clear error
 * naming the library and its package, every time, and leaves the table empty.  The
 * successful load is exercised by test_store_pg, test_inv_exec_pg and every test on
 * PostgreSQL. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

/* This test's own copy of the module (the Makefile's PQ_SONAME replaced), pointed at a
 * library that does not exist. */
#undef PQ_SONAME
#define PQ_SONAME "libpq-accord-missing.so.0"
#include "../../src/store/pq_api.c"

static void test_missing_library(void **state)
{
	struct err e;
	(void)state;
	assert_true(pq_api_load(&e) < 0);
	assert_int_equal(e.code, ERR_INTERNAL);
	assert_non_null(strstr(e.msg, "cannot load libpq-accord-missing.so.0 (package libpq5)"));
	assert_null(pq.connectdb_params);
	assert_null(pq.exec);
	/* the first result stands: no second attempt, the same message */
	memset(&e, 0, sizeof e);
	assert_true(pq_api_load(&e) < 0);
	assert_non_null(strstr(e.msg, "cannot load libpq-accord-missing.so.0"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_missing_library),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
