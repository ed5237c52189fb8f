/* Unit tests for triggers/cron and triggers/tz: every syntax and error of cron specs, next
 * fire times in UTC and in zones with daylight saving time (the expected instants were
 * computed independently, with Python's zoneinfo and a minute-by-minute search), the TZif
 * reader (versions 1 and 2+, slim files whose footer rule carries the future) and time
 * zone names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/str.h"
#include "triggers/cron.h"

/* ---- parsing ------------------------------------------------------------------------------ */

static uint64_t bits(const int *v)
{
	uint64_t b = 0;

	for (; *v >= 0; v++)
		b |= (uint64_t)1 << *v;
	return b;
}

#define BITS(...) bits((const int[]){__VA_ARGS__, -1})
#define ALL(lo, hi) ((((uint64_t)1 << ((hi) + 1)) - 1) & ~(((uint64_t)1 << (lo)) - 1))

static struct cron_spec parse_ok(const char *spec)
{
	struct cron_spec s;
	struct err e;

	if (cron_parse(spec, &s, &e))
		fail_msg("'%s': %s", spec, e.msg);
	return s;
}

static void same(const char *spec_a, const char *spec_b)
{
	struct cron_spec sa = parse_ok(spec_a), sb = parse_ok(spec_b), *a = &sa, *b = &sb;

	assert_int_equal(a->minute, b->minute);
	assert_int_equal(a->hour, b->hour);
	assert_int_equal(a->mday, b->mday);
	assert_int_equal(a->month, b->month);
	assert_int_equal(a->wday, b->wday);
	assert_int_equal(a->mday_star, b->mday_star);
	assert_int_equal(a->wday_star, b->wday_star);
}

static void test_parse_fields(void **state)
{
	struct cron_spec s;
	(void)state;

	s = parse_ok("* * * * *");
	assert_int_equal(s.minute, ALL(0, 59));
	assert_int_equal(s.hour, ALL(0, 23));
	assert_int_equal(s.mday, ALL(1, 31));
	assert_int_equal(s.month, ALL(1, 12));
	assert_int_equal(s.wday, ALL(0, 6));
	assert_true(s.mday_star && s.wday_star);

	s = parse_ok("5 4 1 2 3");
	assert_int_equal(s.minute, BITS(5));
	assert_int_equal(s.hour, BITS(4));
	assert_int_equal(s.mday, BITS(1));
	assert_int_equal(s.month, BITS(2));
	assert_int_equal(s.wday, BITS(3));
	assert_false(s.mday_star || s.wday_star);

	s = parse_ok("0-10/3 */6 1,15,31 1-3,12 1-5");
	assert_int_equal(s.minute, BITS(0, 3, 6, 9));
	assert_int_equal(s.hour, BITS(0, 6, 12, 18));
	assert_int_equal(s.mday, BITS(1, 15, 31));
	assert_int_equal(s.month, BITS(1, 2, 3, 12));
	assert_int_equal(s.wday, BITS(1, 2, 3, 4, 5));

	/* a/n runs to the field's end; steps larger than the range keep the first value */
	assert_int_equal(parse_ok("5/20 * * * *").minute, BITS(5, 25, 45));
	assert_int_equal(parse_ok("*/60 * * * *").minute, BITS(0));
	assert_int_equal(parse_ok("* 22/1 * * *").hour, BITS(22, 23));
	assert_int_equal(parse_ok("* * */10 * *").mday, BITS(1, 11, 21, 31));
	assert_int_equal(parse_ok("* * * */5 *").month, BITS(1, 6, 11));
	assert_int_equal(parse_ok("59 23 31 12 *").minute, BITS(59));
	assert_int_equal(parse_ok("05 004 * * *").hour, BITS(4));
	assert_int_equal(parse_ok("1,1,1-2,2 * * * *").minute, BITS(1, 2));
	assert_int_equal(parse_ok("0-59 * * * *").minute, ALL(0, 59));

	/* day-of-week: 0 and 7 are Sunday; * and a/n stop at Saturday */
	assert_int_equal(parse_ok("0 0 * * 7").wday, BITS(0));
	assert_int_equal(parse_ok("0 0 * * 0-7").wday, ALL(0, 6));
	assert_int_equal(parse_ok("0 0 * * 5-7").wday, BITS(0, 5, 6));
	assert_int_equal(parse_ok("0 0 * * */2").wday, BITS(0, 2, 4, 6));
	assert_int_equal(parse_ok("0 0 * * 1/2").wday, BITS(1, 3, 5));
	assert_int_equal(parse_ok("0 0 * * 7/3").wday, BITS(0));

	/* blanks around and between fields */
	same(" \t0  12\t* *   1 ", "0 12 * * 1");
}

static void test_parse_star_rule(void **state)
{
	struct cron_spec s;
	(void)state;

	/* a day field starting with '*' counts as unrestricted, as in Vixie cron */
	s = parse_ok("0 0 */2 * MON");
	assert_true(s.mday_star);
	assert_false(s.wday_star);
	s = parse_ok("0 0 13 * */3");
	assert_false(s.mday_star);
	assert_true(s.wday_star);
	s = parse_ok("0 0 1-31 * 0-7");
	assert_false(s.mday_star || s.wday_star);
}

static void test_parse_names_and_macros(void **state)
{
	struct cron_spec s;
	(void)state;

	s = parse_ok("0 0 * JAN-MAR,dec Mon-FRI");
	assert_int_equal(s.month, BITS(1, 2, 3, 12));
	assert_int_equal(s.wday, BITS(1, 2, 3, 4, 5));
	assert_int_equal(parse_ok("0 0 * feb-dec/2 *").month, BITS(2, 4, 6, 8, 10, 12));
	assert_int_equal(parse_ok("0 0 * * SUN,sat").wday, BITS(0, 6));
	assert_int_equal(parse_ok("0 0 * * thu-sat").wday, BITS(4, 5, 6));
	assert_int_equal(parse_ok("0 0 * * THU-7").wday, BITS(0, 4, 5, 6));
	s = parse_ok("0 0 * JUL,aug,Sep *");
	assert_int_equal(s.month, BITS(7, 8, 9));

	same("@yearly", "0 0 1 1 *");
	same("@annually", "0 0 1 1 *");
	same("@monthly", "0 0 1 * *");
	same("@weekly", "0 0 * * 0");
	same("@daily", "0 0 * * *");
	same("@midnight", "0 0 * * *");
	same("  @hourly ", "0 * * * *");
}

static void parse_fails(const char *spec, const char *want)
{
	struct cron_spec s = {.minute = 42};
	struct err e = {0};

	if (cron_parse(spec, &s, &e) != -ERR_INVALID)
		fail_msg("'%s' parsed, expected an error with \"%s\"", spec ? spec : "(null)", want);
	assert_int_equal(e.code, ERR_INVALID);
	if (!strstr(e.msg, want))
		fail_msg("'%s': error \"%s\" lacks \"%s\"", spec ? spec : "(null)", e.msg, want);
	assert_int_equal(s.minute, 42); /* untouched */
}

static void test_parse_errors(void **state)
{
	char long_spec[400];
	(void)state;

	parse_fails(NULL, "cron spec is missing");
	parse_fails("", "cron spec is empty");
	parse_fails(" \t ", "cron spec is empty");
	parse_fails("* * * *", "cron spec '* * * *': 4 fields, but a cron spec has 5");
	parse_fails("*", "1 field, but a cron spec has 5");
	parse_fails("0 * * * * *",
		    "6 fields, but a cron spec has 5 (minute hour day-of-month month day-of-week): seconds");
	parse_fails("0 0 12 * * ? 2026", "7 fields");
	parse_fails("1 2 3 4 5 6 7 8 9", "9 fields");

	parse_fails("61 * * * *", "cron spec '61 * * * *': minute: 61 is out of range 0-59");
	parse_fails("* 24 * * *", "hour: 24 is out of range 0-23");
	parse_fails("* * 0 * *", "day-of-month: 0 is out of range 1-31");
	parse_fails("* * 32 * *", "day-of-month: 32 is out of range 1-31");
	parse_fails("* * * 0 *", "month: 0 is out of range 1-12");
	parse_fails("* * * 13 *", "month: 13 is out of range 1-12");
	parse_fails("* * * * 8", "day-of-week: 8 is out of range 0-7");
	parse_fails("99999999999999999999 * * * *", "minute: 99999999999999999999 is out of range 0-59");
	parse_fails("1-99 * * * *", "minute: 99 is out of range 0-59");

	parse_fails("x * * * *", "minute: 'x' is not a number 0-59");
	parse_fails("* * * FOO *", "month: 'FOO' is not a number 1-12 or a month name JAN-DEC");
	parse_fails("* * * JANUARY *", "month: 'JANUARY' is not");
	parse_fails("* * * * FUNDAY", "day-of-week: 'FUNDAY' is not a number 0-7 (0 and 7 are Sunday) or a day name");
	parse_fails("* * MON * *", "day-of-month: 'MON' is not a number 1-31");
	parse_fails("* * * MON *", "month: 'MON' is not");
	parse_fails("* * * * JAN", "day-of-week: 'JAN' is not");
	parse_fails("+5 * * * *", "minute: '+5' is not a number");

	parse_fails("5-1 * * * *", "minute: range 5-1 goes backwards (ranges do not wrap around");
	parse_fails("0 0 * * SAT-SUN", "day-of-week: range SAT-SUN goes backwards");
	parse_fails("1- * * * *", "minute: a value is missing");
	parse_fails("-1 * * * *", "minute: a value is missing");
	parse_fails("1-2-3 * * * *", "minute: '2-3' is not a number");
	parse_fails("*-5 * * * *", "minute: '*' must stand alone");
	parse_fails("** * * * *", "minute: '*' must stand alone");
	parse_fails("*/0 * * * *", "minute: step 0 is out of range 1-60");
	parse_fails("*/61 * * * *", "minute: step 61 is out of range 1-60");
	parse_fails("* */25 * * *", "hour: step 25 is out of range 1-24");
	parse_fails("* * * * */8", "day-of-week: step 8 is out of range 1-7");
	parse_fails("*/ * * * *", "minute: a step is missing after '/'");
	parse_fails("*/x * * * *", "minute: step 'x' is not a number");
	parse_fails("1/2/3 * * * *", "minute: '1/2/3' has more than one '/'");
	parse_fails("/5 * * * *", "minute: a value is missing");
	parse_fails("1,,2 * * * *", "minute: empty item in the list '1,,2'");
	parse_fails("1, * * * *", "minute: empty item");
	parse_fails(",1 * * * *", "minute: empty item");

	parse_fails("0 0 ? * MON", "day-of-month: '?' is Quartz syntax");
	parse_fails("0 0 L * *", "day-of-month: 'L' is Quartz syntax");
	parse_fails("0 0 LW * *", "'LW' is Quartz syntax");
	parse_fails("0 0 15W * *", "'15W' is Quartz syntax");
	parse_fails("0 0 * * 5L", "day-of-week: '5L' is Quartz syntax");
	parse_fails("0 0 * * 5#3", "day-of-week: '5#3' is Quartz syntax");

	parse_fails("@reboot", "@reboot is not supported");
	parse_fails("@fortnightly", "'@fortnightly' is not a known macro (@yearly @annually @monthly @weekly @daily");
	parse_fails("@DAILY", "'@DAILY' is not a known macro");
	parse_fails("@", "'@' is not a known macro");
	parse_fails("@daily 0", "a macro such as @daily stands alone");

	parse_fails("0 0\n* * *", "control character at position 4");
	memset(long_spec, ' ', sizeof long_spec - 1);
	long_spec[sizeof long_spec - 1] = '\0';
	memcpy(long_spec, "* * * * *", 9);
	parse_fails(long_spec, "cron spec is too long (399 characters, at most 256)");
}

/* ---- next fire times ------------------------------------------------------------------------ */

struct chain {
	const char *zone, *spec;
	int64_t after;
	int64_t want[6]; /* successive fire times, each the `after` of the next; 0 ends */
};

static void run_chains(const struct chain *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct err e;
		struct tz *z = tz_load(c[i].zone, &e);
		struct cron_spec s = parse_ok(c[i].spec);
		int64_t after = c[i].after;

		if (!z)
			fail_msg("%s: %s", c[i].zone, e.msg);
		for (size_t k = 0; k < 6 && c[i].want[k]; k++) {
			int64_t got = cron_next(&s, z, after);

			if (got != c[i].want[k])
				fail_msg("%s '%s' after %lld: got %lld, want %lld", c[i].zone, c[i].spec,
					 (long long)after, (long long)got, (long long)c[i].want[k]);
			after = got;
		}
		tz_free(z);
	}
}

static void test_next_utc(void **state)
{
	static const struct chain chains[] = {
	    {"UTC", "* * * * *", 0, {60, 120, 180}},
	    {"UTC", "* * * * *", 59, {60}},
	    {"UTC", "* * * * *", 61, {120}},
	    /* day-of-month OR day-of-week when both are restricted: Fridays and the 13th */
	    {"UTC", "0 0 13 * FRI", 1767225600, {1767312000, 1767916800, 1768262400, 1768521600}},
	    /* 01-02 Fri, 01-09 Fri, 01-13 Tue, 01-16 Fri */
	    {"UTC", "0 0 1-7 * MON", 1767225600, {1767312000, 1767398400, 1767484800}},
	    /* 01-02, 01-03, 01-04: days 1-7 whatever the weekday */
	    /* AND when one starts with '*': odd days that are Mondays */
	    {"UTC", "0 0 */2 * MON", 1767225600, {1767571200, 1768780800, 1770595200}},
	    /* 01-05, 01-19, 02-09 */
	    /* step ranges across hours */
	    {"UTC", "10-50/20 */7 * * *", 1767225600, {1767226200, 1767227400, 1767228600, 1767251400, 1767252600}},
	    /* 00:10, 00:30, 00:50, 07:10, 07:30 */
	    {"UTC", "5/20 9-17 * JAN,JUL *", 1769904000, {1782896700, 1782897900, 1782899100, 1782900300}},
	    /* from 2026-02-01: 07-01 09:05, 09:25, 09:45, 10:05 */
	    /* 29 February: leap years only */
	    {"UTC", "0 0 29 2 *", 1740787200, {1835395200, 1961625600}},
	    /* from 2025-03-01: 2028-02-29, 2032-02-29 */
	    {"UTC", "0 12 31 * *", 1775001600, {1780228800, 1785499200, 1788177600}},
	    /* from 2026-04-01: 05-31, 07-31, 08-31 */
	    {"UTC", "0 0 1 1 *", 1798761540, {1798761600}},
	    /* 2026-12-31 23:59 → 2027-01-01 00:00 */
	    {"UTC", "0 0 * * 0", 1779278400, {1779580800, 1780185600}},
	    /* from Wed 2026-05-20 12:00: Sun 05-24, Sun 05-31 */
	    {"UTC", "@hourly", 1767225600 + 1, {1767225600 + 3600}},
	};
	(void)state;
	run_chains(chains, sizeof chains / sizeof *chains);
}

static void test_next_never(void **state)
{
	struct err e;
	struct tz *utc = tz_load("UTC", &e), *berlin = tz_load("Europe/Berlin", &e);
	struct cron_spec s;
	(void)state;

	assert_non_null(utc);
	assert_non_null(berlin);
	s = parse_ok("0 0 30 2 *");
	assert_int_equal(cron_next(&s, utc, 1767225600), 0);
	assert_int_equal(cron_next(&s, berlin, 1767225600), 0);
	s = parse_ok("0 0 31 4,6,9,11 *");
	assert_int_equal(cron_next(&s, utc, 1767225600), 0);
	/* the 31st of April, or a Monday: Mondays still fire */
	s = parse_ok("0 0 31 4 MON");
	assert_int_equal(cron_next(&s, utc, 1767225600), 1775433600); /* 2026-04-06 */
	/* instants out of the supported range */
	s = parse_ok("* * * * *");
	assert_int_equal(cron_next(&s, utc, INT64_MAX), 0);
	assert_int_equal(cron_next(&s, utc, INT64_MIN), 0);
	assert_int_equal(cron_next(&s, utc, -120), -60);
	tz_free(utc);
	tz_free(berlin);
}

static void test_next_dst(void **state)
{
	static const struct chain chains[] = {
	    /* Berlin, spring forward 2026-03-29 02:00 CET → 03:00 CEST: 02:30 does not exist that day */
	    {"Europe/Berlin", "30 2 * * *", 1774612800, {1774661400, 1774830600, 1774917000}},
	    /* 03-28 02:30+01, 03-30 02:30+02, 03-31 02:30+02 */
	    {"Europe/Berlin", "*/30 * * * *", 1774742400, {1774744200, 1774746000, 1774747800, 1774749600}},
	    /* 01:30+01, then 03:00+02 (02:00 and 02:30 skipped), 03:30+02, 04:00+02 */
	    /* Berlin, fall back 2026-10-25 03:00 CEST → 02:00 CET: 02:xx once, at its first occurrence */
	    {"Europe/Berlin", "30 2 * * *", 1792843200, {1792888200, 1792978200, 1793064600}},
	    /* 10-25 02:30+02 (00:30Z), 10-26 02:30+01, 10-27 02:30+01 */
	    {"Europe/Berlin", "*/30 * * * *", 1792885500, {1792886400, 1792888200, 1792893600, 1792895400, 1792897200}},
	    /* 02:00+02, 02:30+02, then 03:00+01 (the second 02:00 and 02:30 do not fire) */
	    {"Europe/Berlin", "30 2 * * *", 1792890000, {1792978200}},
	    /* from 01:00Z, the second 02:00: the second 02:30 does not fire, next day's does */
	    {"Europe/Berlin", "0 9 * * MON-FRI", 1774612800, {1774854000, 1774940400}},
	    /* Berlin after the transition table of the file (2045): the footer's rule */
	    {"Europe/Berlin", "30 2 * * *", 2374056000, {2374187400, 2374273800, 2374360200}},
	    /* 2045-03-27, 03-28, 03-29 at 02:30+02: 03-26 skipped */
	    {"Europe/Berlin", "30 2 * * *", 2392804800, {2392849800, 2392939800, 2393026200}},
	    /* 2045-10-29 02:30+02 once, 10-30 02:30+01, 10-31 02:30+01 */
	    /* New York, spring forward 2026-03-08 02:00 EST → 03:00 EDT */
	    {"America/New_York", "0 2 * * *", 1772884800, {1773036000, 1773122400}},
	    /* 03-09 02:00-04, 03-10 02:00-04: 03-08 skipped */
	    /* New York, fall back 2026-11-01 02:00 EDT → 01:00 EST */
	    {"America/New_York", "30 1 * * *", 1793448000, {1793511000, 1793601000}},
	    /* 11-01 01:30-04 once, 11-02 01:30-05 */
	    {"America/New_York", "0 * * * *", 1793507400, {1793509200, 1793516400, 1793520000}},
	    /* 01:00-04 (05:00Z), 02:00-05 (07:00Z): the second 01:00 (06:00Z) does not fire */
	    /* Lord Howe: 30-minute DST.  Spring 2026-10-04 02:00 → 02:30 (+10:30 → +11) */
	    {"Australia/Lord_Howe", "15 2 * * *", 1790985600, {1791126900, 1791213300}},
	    /* 10-05 02:15+11, 10-06 02:15+11: 10-04 02:15 does not exist */
	    {"Australia/Lord_Howe",
	     "*/15 1-2 * * *",
	     1791036000,
	     {1791037800, 1791038700, 1791039600, 1791040500, 1791041400, 1791042300}},
	    /* 10-04 01:00, 01:15, 01:30, 01:45 (+10:30), then 02:30, 02:45 (+11) */
	    /* Fall 2026-04-05 02:00 → 01:30 (+11 → +10:30): 01:30-01:59 happen twice */
	    {"Australia/Lord_Howe", "45 1 * * *", 1775260800, {1775313900, 1775402100}},
	    /* 04-05 01:45+11 once, 04-06 01:45+10:30 */
	    {"Australia/Lord_Howe",
	     "*/15 1-2 * * *",
	     1775311200,
	     {1775312100, 1775313000, 1775313900, 1775316600, 1775317500, 1775318400}},
	    /* 01:15, 01:30, 01:45 (+11), then 02:00, 02:15, 02:30 (+10:30) */
	    /* Kolkata: +05:30, no DST */
	    {"Asia/Kolkata", "0 9 * * *", 1780272000, {1780284600, 1780371000}},
	    /* 06-01 09:00+05:30 = 03:30Z */
	    {"Asia/Kolkata", "0 0 29 2 *", 1780272000, {1835375400}},
	    /* 2028-02-29 00:00+05:30 = 02-28 18:30Z */
	    /* Sao Paulo 2018-11-04: DST began at midnight, so 00:00 did not exist that day */
	    {"America/Sao_Paulo", "0 0 * * *", 1541203200, {1541214000, 1541383200}},
	    /* 11-03 00:00-03, 11-05 00:00-02 */
	};
	(void)state;
	run_chains(chains, sizeof chains / sizeof *chains);
}

/* Every UTC-offset lookup that cron_next makes, seen through the linker (-Wl,--wrap in the
 * Makefile): a scan of every minute of the 5-year horizon would make millions. */
static unsigned long offset_lookups;

int32_t __real_tz_offset(const struct tz *z, int64_t t);
int32_t __wrap_tz_offset(const struct tz *z, int64_t t);
int32_t __wrap_tz_offset(const struct tz *z, int64_t t)
{
	offset_lookups++;
	return __real_tz_offset(z, t);
}

/* cron_next walks only the months, days and hours that can match: a spec that never fires
 * looks up one offset (where it starts), and Feb 29th-or-Mondays-in-February a handful for
 * each of its ~25 candidate days in 5 years. */
static void test_next_walks_only_candidates(void **state)
{
	struct err e;
	struct tz *z = tz_load("Europe/Berlin", &e);
	struct cron_spec never = parse_ok("0 0 30 2 *"), leap = parse_ok("0 0 29 2 1");
	(void)state;

	assert_non_null(z);
	for (int i = 0; i < 100; i++) {
		offset_lookups = 0;
		assert_int_equal(cron_next(&never, z, 1767225600 + i * 86400), 0);
		assert_int_equal(offset_lookups, 1);
		offset_lookups = 0;
		assert_true(cron_next(&leap, z, 1767225600 + i * 86400) > 0);
		assert_in_range(offset_lookups, 1, 200);
	}
	tz_free(z);
}

/* ---- time zones --------------------------------------------------------------------------- */

static char tzdir[64];

/* Zones named Test/… are the files the tests write into tzdir, the others the system's. */
static struct tz *load(const char *zone, struct err *e)
{
	bool test = strncmp(zone, "Test", 4) == 0;
	struct tz *z;

	if (test)
		assert_int_equal(setenv("TZDIR", tzdir, 1), 0);
	z = tz_load(zone, e);
	if (test)
		unsetenv("TZDIR");
	return z;
}

static void offset_is(const char *zone, int64_t t, int32_t want)
{
	struct err e;
	struct tz *z = load(zone, &e);

	if (!z)
		fail_msg("%s: %s", zone, e.msg);
	if (tz_offset(z, t) != want)
		fail_msg("%s at %lld: offset %d, want %d", zone, (long long)t, tz_offset(z, t), want);
	tz_free(z);
}

static void test_tz_offsets(void **state)
{
	(void)state;
	offset_is("UTC", 1782864000, 0);
	offset_is("Etc/UTC", 1782864000, 0);
	offset_is("GMT", 1782864000, 0);
	offset_is("Etc/GMT", 1782864000, 0);
	offset_is("Europe/Berlin", 1767225600, 3600); /* 2026-01-01 */
	offset_is("Europe/Berlin", 1782864000, 7200); /* 2026-07-01 */
	offset_is("Europe/Berlin", 4118083200, 7200); /* 2100-07-01, from the footer */
	offset_is("Europe/Berlin", 4103654400, 3600); /* 2100-01-15 */
	offset_is("America/New_York", 1767225600, -18000);
	offset_is("America/New_York", 1782864000, -14400);
	offset_is("America/New_York", 4118083200, -14400);
	offset_is("Australia/Lord_Howe", 1767225600, 39600); /* January: summer, +11 */
	offset_is("Australia/Lord_Howe", 1782864000, 37800); /* July: +10:30 */
	offset_is("Asia/Kolkata", 1782864000, 19800);
	offset_is("Asia/Kolkata", -631152000, 19800); /* 1950 */
	/* the transition instant itself: 2026-03-29 01:00Z */
	offset_is("Europe/Berlin", 1774746000 - 1, 3600);
	offset_is("Europe/Berlin", 1774746000, 7200);
	offset_is("Etc/GMT+5", 1782864000, -18000); /* POSIX sign: GMT+5 is west */
}

static void load_fails(const char *name, const char *want)
{
	struct err e = {0};
	struct tz *z = load(name, &e);

	if (z)
		fail_msg("time zone '%s' loaded, expected \"%s\"", name, want);
	assert_int_equal(e.code, ERR_INVALID);
	if (!strstr(e.msg, want))
		fail_msg("'%s': error \"%s\" lacks \"%s\"", name, e.msg, want);
}

static void test_tz_names(void **state)
{
	struct err e;
	struct tz *z;
	(void)state;

	/* the server's zone: /etc/localtime, else UTC */
	z = tz_load(NULL, &e);
	assert_non_null(z);
	tz_free(z);
	z = tz_load("", &e);
	assert_non_null(z);
	tz_free(z);
	tz_free(NULL);

	load_fails("Mars/Olympus_Mons", "unknown time zone: 'Mars/Olympus_Mons'");
	load_fails("utc", "unknown time zone: 'utc'");
	load_fails("America", "unknown time zone: 'America'");
	load_fails("../../../etc/passwd", "unknown time zone: '../../../etc/passwd' (an IANA name");
	load_fails("Europe/../../etc/passwd", "an IANA name");
	load_fails("/etc/localtime", "an IANA name");
	load_fails("Europe//Berlin", "an IANA name");
	load_fails("Europe/Berlin/", "an IANA name");
	load_fails("Europe/Ber lin", "an IANA name");
	load_fails("zone.tab", "an IANA name");
	load_fails("Europe/Berlin\\", "an IANA name");
	load_fails("GMT+05:30", "an IANA name");
}

/* A TZif file: one block of 32-bit data (version 1) or, for version '2'+, a version-1
 * block followed by a 64-bit block and the footer. */
struct tzif {
	char version;
	int n_times;
	int64_t times[4];
	uint8_t idx[4];
	int n_types;
	int32_t offs[3];
	int32_t v1_off; /* when not 0: every offset of the version-1 block */
	const char *footer;
	uint32_t leap;
};

static size_t put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
	return 4;
}

static size_t put_block(uint8_t *p, const struct tzif *t, size_t time_size, bool v1)
{
	size_t n = 0;

	memcpy(p, "TZif", 4);
	p[4] = (uint8_t)t->version;
	memset(p + 5, 0, 15);
	n = 20;
	n += put32(p + n, 0);
	n += put32(p + n, 0);
	n += put32(p + n, t->leap);
	n += put32(p + n, (uint32_t)t->n_times);
	n += put32(p + n, (uint32_t)t->n_types);
	n += put32(p + n, 4);
	for (int i = 0; i < t->n_times; i++) {
		if (time_size == 8)
			n += put32(p + n, (uint32_t)((uint64_t)t->times[i] >> 32));
		n += put32(p + n, (uint32_t)t->times[i]);
	}
	for (int i = 0; i < t->n_times; i++)
		p[n++] = t->idx[i];
	for (int i = 0; i < t->n_types; i++) {
		n += put32(p + n, (uint32_t)(v1 && t->v1_off ? t->v1_off : t->offs[i]));
		p[n++] = 0;
		p[n++] = 0;
	}
	memcpy(p + n, "ABC", 4);
	n += 4;
	for (uint32_t i = 0; i < t->leap; i++) {
		memset(p + n, 0, time_size + 4);
		n += time_size + 4;
	}
	return n;
}

/* Writes tzdir/Test/<name> and returns the zone's name. */
static const char *write_tzif(const char *name, const struct tzif *t, size_t cut)
{
	static char zone[64];
	char path[160];
	uint8_t buf[2048];
	size_t n = put_block(buf, t, 4, true);
	FILE *f;

	if (t->version) {
		n += put_block(buf + n, t, 8, false);
		n += (size_t)snprintf((char *)buf + n, sizeof buf - n, "%s", t->footer ? t->footer : "\n\n");
	}
	assert_int_equal(str_fmt(path, sizeof path, "%s/Test/%s", tzdir, name), 0);
	f = fopen(path, "wb");
	assert_non_null(f);
	assert_int_equal(fwrite(buf, 1, n - cut, f), n - cut);
	fclose(f);
	assert_int_equal(str_fmt(zone, sizeof zone, "Test/%s", name), 0);
	return zone;
}

static int tzdir_setup(void **state)
{
	char sub[96];
	(void)state;

	assert_int_equal(str_fmt(tzdir, sizeof tzdir, "/tmp/accord-tz-XXXXXX"), 0);
	if (!mkdtemp(tzdir))
		return -1;
	assert_int_equal(str_fmt(sub, sizeof sub, "%s/Test", tzdir), 0);
	return mkdir(sub, 0700);
}

static int tzdir_teardown(void **state)
{
	char cmd[128];
	(void)state;

	assert_int_equal(str_fmt(cmd, sizeof cmd, "rm -rf '%s'", tzdir), 0);
	return system(cmd);
}

static void test_tzif_versions(void **state)
{
	/* version 1: 32-bit transitions, no footer; before the first transition type 0 */
	struct tzif v1 = {
	    .n_times = 2, .times = {1000000, 2000000}, .idx = {1, 2}, .n_types = 3, .offs = {3600, 7200, -1800}};
	/* version 2: the 64-bit block wins over the version-1 block; a transition after 2106 */
	struct tzif v2 = {.version = '2',
			  .n_times = 2,
			  .times = {1000000, (int64_t)1 << 33},
			  .idx = {1, 0},
			  .n_types = 2,
			  .offs = {0, 5400},
			  .v1_off = 999,
			  .footer = "\n\n"};
	const char *zone;
	(void)state;

	zone = write_tzif("V1", &v1, 0);
	offset_is(zone, -5000000000, 3600);
	offset_is(zone, 999999, 3600);
	offset_is(zone, 1000000, 7200);
	offset_is(zone, 1999999, 7200);
	offset_is(zone, 2000000, -1800);
	offset_is(zone, 5000000000, -1800);
	zone = write_tzif("V2", &v2, 0);
	offset_is(zone, 0, 0);
	offset_is(zone, 1000000, 5400);
	offset_is(zone, ((int64_t)1 << 33) - 1, 5400);
	offset_is(zone, (int64_t)1 << 33, 0);
	v2.version = '3';
	offset_is(write_tzif("V3", &v2, 0), 1000000, 5400);
	v2.version = '4';
	offset_is(write_tzif("V4", &v2, 0), 1000000, 5400);
}

/* A slim file: no transitions, everything from the footer; compared hour by hour with the
 * system's zone over the years the rule has held. */
static void footer_matches(const char *footer, const char *system_zone, int64_t from, int64_t to)
{
	char text[128];
	struct tzif slim = {.version = '2', .n_types = 1, .footer = text};
	struct err e;
	struct tz *mine, *sys;

	assert_int_equal(str_fmt(text, sizeof text, "\n%s\n", footer), 0);
	mine = load(write_tzif("Slim", &slim, 0), &e);
	sys = tz_load(system_zone, &e);
	assert_non_null(mine);
	assert_non_null(sys);
	for (int64_t t = from; t < to; t += 1800)
		if (tz_offset(mine, t) != tz_offset(sys, t))
			fail_msg("'%s' at %lld: %d, %s: %d", footer, (long long)t, tz_offset(mine, t), system_zone,
				 tz_offset(sys, t));
	tz_free(mine);
	tz_free(sys);
}

static void test_tzif_footer(void **state)
{
	struct tzif slim = {.version = '2', .n_types = 1};
	(void)state;

	footer_matches("CET-1CEST,M3.5.0,M10.5.0/3", "Europe/Berlin", 820454400, 2145916800); /* 1996-2038 */
	footer_matches("EST5EDT,M3.2.0,M11.1.0", "America/New_York", 1167609600, 2145916800); /* 2007-2038 */
	footer_matches("<+1030>-10:30<+11>-11,M10.1.0,M4.1.0", "Australia/Lord_Howe", 1230768000, 2145916800);
	footer_matches("IST-5:30", "Asia/Kolkata", -631152000, 2145916800);

	/* Jn counts no 29 February (J60 is 1 March); n counts from 0 with it */
	slim.footer = "\nXXX3YYY,J60/2,J300/2\n";
	offset_is(write_tzif("J", &slim, 0), 1709269200 - 1, -10800); /* 2024-03-01 05:00Z */
	offset_is(write_tzif("J", &slim, 0), 1709269200, -7200);
	offset_is(write_tzif("J", &slim, 0), 1730001600 - 1, -7200); /* 2024-10-27 04:00Z */
	offset_is(write_tzif("J", &slim, 0), 1730001600, -10800);
	slim.footer = "\nXXX3YYY,59/2,300/2\n";
	offset_is(write_tzif("N", &slim, 0), 1709182800 - 1, -10800); /* 2024-02-29 05:00Z */
	offset_is(write_tzif("N", &slim, 0), 1709182800, -7200);
	offset_is(write_tzif("N", &slim, 0), 1740805200 - 1, -10800); /* 2025-03-01 05:00Z */
	offset_is(write_tzif("N", &slim, 0), 1740805200, -7200);
	/* permanent daylight saving time, written as RFC 8536 suggests */
	slim.footer = "\nEST5EDT,0/0,J365/25\n";
	offset_is(write_tzif("Perm", &slim, 0), 1767225600, -14400);
	offset_is(write_tzif("Perm", &slim, 0), 1767225600 + 4 * 3600 + 1800, -14400);
	offset_is(write_tzif("Perm", &slim, 0), 1782864000, -14400);
	offset_is(write_tzif("Perm", &slim, 0), 1798761600 - 1800, -14400);
	/* DST without rules: the US rule, as glibc does */
	slim.footer = "\nEST5EDT\n";
	offset_is(write_tzif("NoRule", &slim, 0), 1767225600, -18000);
	offset_is(write_tzif("NoRule", &slim, 0), 1782864000, -14400);
	slim.footer = "\n<-03>3\n";
	offset_is(write_tzif("Std", &slim, 0), 1782864000, -10800);
	/* an empty footer: the last type stays */
	slim.footer = "\n\n";
	slim.offs[0] = 1234;
	offset_is(write_tzif("Empty", &slim, 0), 1782864000, 1234);
}

static void test_tzif_malformed(void **state)
{
	struct tzif good = {.version = '2',
			    .n_times = 2,
			    .times = {100, 200},
			    .idx = {0, 1},
			    .n_types = 2,
			    .offs = {0, 3600},
			    .footer = "\nCET-1CEST,M3.5.0,M10.5.0/3\n"};
	struct tzif t;
	char path[160];
	FILE *f;
	(void)state;

	offset_is(write_tzif("Good", &good, 0), 150, 0);
	load_fails(write_tzif("Cut", &good, 40), "unknown time zone: 'Test/Cut' (");
	load_fails(write_tzif("Cut", &good, 40), "Test/Cut is not a usable TZif file");
	load_fails(write_tzif("CutV1", &(struct tzif){.n_times = 1, .times = {5}, .n_types = 1}, 3), "truncated");
	t = good;
	t.times[1] = 50;
	load_fails(write_tzif("Order", &t, 0), "the transition times are not ascending");
	t = good;
	t.idx[1] = 7;
	load_fails(write_tzif("Index", &t, 0), "a transition names an unknown time type");
	t = good;
	t.offs[1] = 100000;
	load_fails(write_tzif("Offset", &t, 0), "a UT offset is out of range");
	t = good;
	t.leap = 1;
	load_fails(write_tzif("Leap", &t, 0), "leap seconds");
	t = good;
	t.n_types = 0;
	t.n_times = 0;
	load_fails(write_tzif("NoTypes", &t, 0), "bad counts");
	t = good;
	t.version = '9';
	load_fails(write_tzif("Version", &t, 0), "unknown TZif version");
	t = good;
	t.footer = "CET-1";
	load_fails(write_tzif("NoFooter", &t, 0), "the TZ string footer is missing");
	static const char *const bad_footers[] = {
	    "\nCET\n",
	    "\nC-1\n",
	    "\nCET-1CEST,M3.5.0\n",
	    "\nCET-1CEST,M13.5.0,M10.5.0\n",
	    "\nCET-1CEST,M3.0.0,M10.5.0\n",
	    "\nCET-1CEST,M3.5.7,M10.5.0\n",
	    "\nCET-1CEST,J0,J10\n",
	    "\nCET-1CEST,366,10\n",
	    "\nCET-25\n",
	    "\n<+1>-1\n",
	    "\nCET-1CEST,M3.5.0,M10.5.0/168\n",
	    "\nCET-1 \n",
	};
	for (size_t i = 0; i < sizeof bad_footers / sizeof *bad_footers; i++) {
		t = good;
		t.footer = bad_footers[i];
		load_fails(write_tzif("Footer", &t, 0), "the TZ string footer is malformed");
	}
	assert_int_equal(str_fmt(path, sizeof path, "%s/Test/Text", tzdir), 0);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("# not a zone\n", f);
	fclose(f);
	load_fails("Test/Text", "no TZif header");
	load_fails("Test", "unknown time zone: 'Test'");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_parse_fields),
	    cmocka_unit_test(test_parse_star_rule),
	    cmocka_unit_test(test_parse_names_and_macros),
	    cmocka_unit_test(test_parse_errors),
	    cmocka_unit_test(test_next_utc),
	    cmocka_unit_test(test_next_never),
	    cmocka_unit_test(test_next_dst),
	    cmocka_unit_test(test_next_walks_only_candidates),
	    cmocka_unit_test(test_tz_offsets),
	    cmocka_unit_test(test_tz_names),
	    cmocka_unit_test(test_tzif_versions),
	    cmocka_unit_test(test_tzif_footer),
	    cmocka_unit_test(test_tzif_malformed),
	};
	return cmocka_run_group_tests(tests, tzdir_setup, tzdir_teardown);
}
