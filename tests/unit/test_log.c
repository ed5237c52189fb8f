/* Unit tests for src/base/log.c: the key=value fields of a log line, quoting and cuts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/log.h"

static void test_fields(void **state)
{
	char f[256] = "";
	(void)state;

	log_kv(f, sizeof f, "method", "GET");
	log_kv(f, sizeof f, "path", "/api/v1/apikey");
	log_kv_int(f, sizeof f, "status", 200);
	log_kv_int(f, sizeof f, "bytes", 0);
	log_kv_int(f, sizeof f, "delta", -1234567890123LL);
	log_kv(f, sizeof f, "principal", "a b=\"c\"\n");
	log_kv(f, sizeof f, "empty", "");
	log_kv(f, sizeof f, "none", NULL);
	assert_string_equal(f, " method=GET path=/api/v1/apikey status=200 bytes=0 delta=-1234567890123"
			       " principal=\"a b=\\\"c\\\"\\n\" empty=\"\" none=\"\"");
}

static void test_fields_are_cut_to_fit(void **state)
{
	char f[16] = "";
	(void)state;

	log_kv(f, sizeof f, "path", "/a/very/long/path");
	assert_int_equal(strlen(f), sizeof f - 1);
	assert_memory_equal(f, " path=/a/very/lo", sizeof f - 1);
	log_kv_int(f, sizeof f, "status", 200); /* no room: unchanged */
	assert_int_equal(strlen(f), sizeof f - 1);
	memset(f, 0, sizeof f);
	log_kv_int(f, sizeof f, "duration_us", 123456789);
	assert_string_equal(f, " duration_us=12");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fields),
	    cmocka_unit_test(test_fields_are_cut_to_fit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
