/* Unit tests for src/base/archive_api.c: a libarchive that cannot be loaded gives a clear
 * error naming the library and its package, every time, and leaves the table empty.  The
 * successful load is exercised by test_pack and test_start_req. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* This test's own copy of the module (the Makefile's ARCHIVE_SONAME replaced), pointed at
 * a library that does not exist. */
#undef ARCHIVE_SONAME
#define ARCHIVE_SONAME "libarchive-accord-missing.so.0"
#include "../../src/base/archive_api.c"

static void test_missing_library(void **state)
{
	struct err e;
	(void)state;
	assert_true(archive_api_load(&e) < 0);
	assert_int_equal(e.code, ERR_INTERNAL);
	assert_non_null(strstr(e.msg, "cannot load libarchive-accord-missing.so.0 (package libarchive13)"));
	assert_null(archive.read_new);
	assert_null(archive.write_new);
	/* the first result stands: no second attempt, the same message */
	memset(&e, 0, sizeof e);
	assert_true(archive_api_load(&e) < 0);
	assert_non_null(strstr(e.msg, "cannot load libarchive-accord-missing.so.0"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_missing_library),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
