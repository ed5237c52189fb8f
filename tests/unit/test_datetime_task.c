/* Unit tests for the time zones of the datetime task (src/flow/tasks/datetime.c): fixed
 * offsets are read strictly, as java.time.ZoneOffset reads them (issue 15 part 6). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "../../src/flow/tasks/datetime.c"

static void offset_ok(const char *z, int want)
{
	struct err e = {0};
	int min = 12345;

	if (zone_offset(z, &min, &e))
		fail_msg("'%s' refused: %s", z, e.msg);
	assert_int_equal(min, want);
}

static void offset_bad(const char *z)
{
	struct err e = {0};
	int min = 12345;

	if (zone_offset(z, &min, &e) == 0)
		fail_msg("'%s' accepted as %d minutes", z, min);
	assert_int_equal(e.code, ERR_INVALID);
	assert_non_null(strstr(e.msg, "Unknown time zone"));
	assert_int_equal(min, 12345);
}

static void test_offsets_accepted(void **state)
{
	(void)state;
	offset_ok("UTC", 0);
	offset_ok("Z", 0);
	offset_ok("+02:00", 120);
	offset_ok("-05:30", -330);
	offset_ok("+0545", 345);
	offset_ok("-0330", -210);
	offset_ok("+2", 120);
	offset_ok("-9", -540);
	offset_ok("+05", 300);
	offset_ok("+18:00", 1080);
	offset_ok("-18:00", -1080);
	offset_ok("+00:00", 0);
}

static void test_offsets_refused(void **state)
{
	static const char *const bad[] = {
	    "+-5:00", "-+5",	"+02:00xyz", "+02:00 ", " +02:00", "+5:00",	"+5:3",	  "+02:",   "+02:0",
	    "+020",   "+02000", "+02:60",    "+18:01",	"+19",	   "+99:00",	"+",	  "-",	    "++2",
	    "02:00",  "+0a:00", "+02:0a",    "+02;00",	"+2x",	   "+02:00:00", "Europe", "+ 2:00", "+02::00",
	};
	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
		offset_bad(bad[i]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_offsets_accepted),
	    cmocka_unit_test(test_offsets_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
