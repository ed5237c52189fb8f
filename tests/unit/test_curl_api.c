/* Unit tests for src/flow/tasks/curl_api.c: a libcurl that cannot be loaded gives a clear
 * error naming the library and its package, every time, and leaves the table empty.  The
 * successful load is exercised by test_http_task and the black-box http task tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* This test's own copy of the module (the Makefile's CURL_SONAME replaced), pointed at a
 * library that does not exist. */
#undef CURL_SONAME
#define CURL_SONAME "libcurl-accord-missing.so.0"
#include "../../src/flow/tasks/curl_api.c"

static void test_missing_library(void **state)
{
	struct err e;
	(void)state;
	assert_true(curl_api_load(&e) < 0);
	assert_int_equal(e.code, ERR_INTERNAL);
	assert_non_null(strstr(e.msg, "cannot load libcurl-accord-missing.so.0 (package libcurl4)"));
	assert_null(curl.easy_init);
	assert_null(curl.easy_setopt);
	/* the first result stands: no second attempt, the same message */
	memset(&e, 0, sizeof e);
	assert_true(curl_api_load(&e) < 0);
	assert_non_null(strstr(e.msg, "cannot load libcurl-accord-missing.so.0"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_missing_library),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
