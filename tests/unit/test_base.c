/* Unit tests for src/base: buffers, ISO-8601 dates, names, checked numbers, Base64, paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>

#include "base/b64.h"
#include "base/buf.h"
#include "base/datetime.h"
#include "base/jsonx.h"
#include "base/names.h"
#include "base/path.h"
#include "base/rand.h"
#include "base/str.h"
#include "base/tally.h"
#include "base/uuid.h"

static void test_buf_grows_and_caps(void **state)
{
	struct buf b;
	struct err e;
	(void)state;

	buf_init(&b, 10);
	assert_int_equal(buf_append_str(&b, "hello", &e), 0);
	assert_int_equal(buf_printf(&b, &e, "%d", 1234), 0);
	assert_string_equal(b.data, "hello1234");
	assert_true(buf_append_str(&b, "xy", &e) < 0);
	assert_int_equal(e.code, ERR_TOO_LARGE);
	assert_string_equal(b.data, "hello1234"); /* unchanged after a refused append */
	assert_int_equal(buf_append_char(&b, '!', &e), 0);
	assert_int_equal(b.len, 10);
	buf_cleanup(&b);
}

/* Issue 15 part 6: a buffer never allocates past its cap (64 MiB with a 64 MiB cap
 * allocated 128 MiB); a wiping buffer keeps working across growth. */
static void test_buf_cap_is_hard(void **state)
{
	struct buf b;
	struct err e;
	char chunk[1000];
	(void)state;
	memset(chunk, 'x', sizeof chunk);
	buf_init(&b, 5000);
	for (int i = 0; i < 5; i++)
		assert_int_equal(buf_append(&b, chunk, sizeof chunk, &e), 0);
	assert_int_equal(b.len, 5000);
	assert_true(b.cap <= 5001);
	assert_true(buf_append_char(&b, 'y', &e) < 0);
	buf_cleanup(&b);

	buf_init(&b, 0);
	buf_set_wipe(&b);
	for (int i = 0; i < 50; i++)
		assert_int_equal(buf_append(&b, chunk, sizeof chunk, &e), 0);
	assert_int_equal(b.len, 50000);
	assert_int_equal(b.data[49999], 'x');
	assert_int_equal(b.data[50000], '\0');
	buf_cleanup(&b);
}

static void test_iso_format(void **state)
{
	char out[DT_ISO_LEN];
	(void)state;

	dt_format_iso(0, out);
	assert_string_equal(out, "1970-01-01T00:00:00.000Z");
	dt_format_iso(1795342800123LL, out);
	assert_string_equal(out, "2026-11-22T10:20:00.123Z");
	dt_format_iso(-1, out);
	assert_string_equal(out, "1969-12-31T23:59:59.999Z");
	dt_format_iso(253402300799999LL, out); /* the last of the years written by hand */
	assert_string_equal(out, "9999-12-31T23:59:59.999Z");
	dt_format_iso(253402300800000LL, out);
	assert_string_equal(out, "10000-01-01T00:00:00.000Z");
	dt_format_iso(-62135596800000LL, out);
	assert_string_equal(out, "0001-01-01T00:00:00.000Z");
}

static int64_t parse(const char *s, bool require_offset, int expect_ok)
{
	int64_t ms = 0;
	struct err e;
	int rc = dt_parse_iso(s, strlen(s), require_offset, &ms, "startAt", &e);
	assert_int_equal(rc == 0, expect_ok);
	return ms;
}

static void test_iso_parse(void **state)
{
	(void)state;
	assert_int_equal(parse("2026-11-22T10:20:00.123Z", true, 1), 1795342800123LL);
	assert_int_equal(parse("2026-11-22T12:20:00.123+02:00", true, 1), 1795342800123LL);
	assert_int_equal(parse("2026-11-22T05:20:00.123-0500", true, 1), 1795342800123LL);
	assert_int_equal(parse("2026-11-22T10:20Z", true, 1), 1795342800000LL);
	assert_int_equal(parse("2026-11-22T10:20:00.123456789Z", true, 1), 1795342800123LL);
	assert_int_equal(parse("2026-11-22T10:20:00.1Z", true, 1), 1795342800100LL);
	parse("2026-11-22T10:20:00", true, 0); /* offset required */
	assert_int_equal(parse("2026-11-22T10:20:00", false, 1), 1795342800000LL);
	assert_int_equal(parse("2026-11-22", false, 1), 1795305600000LL);
	parse("2026-02-30T10:00:00Z", true, 0);
	parse("2026-11-22T24:00:00Z", true, 0);
	parse("2026-11-22T10:00:00X", true, 0);
	parse("2026-11-22T10:00:00+1", true, 0);
	parse("", true, 0);
	parse("tomorrow", false, 0);
	parse("2024-02-29T00:00:00Z", true, 1);
	parse("2023-02-29T00:00:00Z", true, 0);
}

static void test_names(void **state)
{
	struct err e;
	(void)state;
	assert_true(name_valid("abc", NAME_PLAIN));
	assert_true(name_valid("a_b@c.d-e~f", NAME_PLAIN));
	assert_false(name_valid("ab", NAME_PLAIN));
	assert_false(name_valid("_abc", NAME_PLAIN));
	assert_false(name_valid("key#1", NAME_PLAIN));
	assert_true(name_valid("key#1", NAME_APIKEY));
	assert_false(name_valid("a b c", NAME_PLAIN));
	assert_false(name_valid(NULL, NAME_PLAIN));
	char long_name[130];
	memset(long_name, 'a', 129);
	long_name[129] = '\0';
	assert_false(name_valid(long_name, NAME_PLAIN));
	long_name[128] = '\0';
	assert_true(name_valid(long_name, NAME_PLAIN));
	assert_true(name_check("x", "secret", NAME_PLAIN, &e) < 0);
	assert_non_null(strstr(e.msg, "secret"));
}

static void test_checked_numbers(void **state)
{
	int64_t v;
	struct err e;
	(void)state;
	assert_int_equal(str_to_i64(str_from("42"), 0, 100, &v, "limit", &e), 0);
	assert_int_equal(v, 42);
	assert_int_equal(str_to_i64(str_from("-5"), -10, 0, &v, "x", &e), 0);
	assert_int_equal(v, -5);
	assert_true(str_to_i64(str_from("101"), 0, 100, &v, "limit", &e) < 0);
	assert_true(str_to_i64(str_from("abc"), 0, 100, &v, "limit", &e) < 0);
	assert_true(str_to_i64(str_from(""), 0, 100, &v, "limit", &e) < 0);
	assert_true(str_to_i64(str_from("99999999999999999999"), 0, INT64_MAX, &v, "x", &e) < 0);
	assert_true(str_to_i64(str_from("1x"), 0, 100, &v, "limit", &e) < 0);
}

static void test_b64(void **state)
{
	struct err e;
	size_t n;
	unsigned char *d;
	char *s;
	(void)state;

	s = b64_encode("hello", 5, B64_STD_NOPAD);
	assert_string_equal(s, "aGVsbG8");
	d = b64_decode(s, strlen(s), &n, &e);
	assert_non_null(d);
	assert_int_equal(n, 5);
	assert_memory_equal(d, "hello", 5);
	free(d);
	free(s);
	d = b64_decode("aGVsbG8=", 8, &n, &e);
	assert_non_null(d);
	free(d);
	assert_null(b64_decode("a$b", 3, &n, &e));
	assert_null(b64_decode("aGVsbG8===", 10, &n, &e));
}

static void test_uuid(void **state)
{
	char u[UUID_STR_LEN];
	(void)state;
	uuid_v4(u);
	assert_true(uuid_valid(u, strlen(u)));
	assert_int_equal(u[14], '4');
	assert_false(uuid_valid("not-a-uuid", 10));
	assert_false(uuid_valid("230c5c9c-d9a7-11e6-bcfd-bb681c07b26", 35));
	assert_true(uuid_valid("230c5c9c-d9a7-11e6-bcfd-bb681c07b26c", 36));
}

/* uuid_v7: version 7, RFC 9562's variant, the Unix time in ms in its first 48 bits, so
 * that ids made a millisecond apart sort in the order they were made. */
static void test_uuid_v7(void **state)
{
	char a[UUID_STR_LEN], b[UUID_STR_LEN], hex[13];
	struct timespec ts;
	long long before, at;
	(void)state;

	clock_gettime(CLOCK_REALTIME, &ts);
	before = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
	uuid_v7(a);
	assert_true(uuid_valid(a, strlen(a)));
	assert_int_equal(a[14], '7');
	assert_non_null(strchr("89ab", a[19]));
	memcpy(hex, a, 8);
	memcpy(hex + 8, a + 9, 4);
	hex[12] = '\0';
	at = 0;
	for (int i = 0; i < 12; i++)
		at = at * 16 + (hex[i] <= '9' ? hex[i] - '0' : hex[i] - 'a' + 10);
	assert_true(at >= before && at <= before + 1000);
	nanosleep(&(struct timespec){0, 2000000}, NULL);
	uuid_v7(b);
	assert_true(strcmp(a, b) < 0);
}

static void test_paths(void **state)
{
	(void)state;
	assert_true(path_is_safe_relative("a/b.txt"));
	assert_false(path_is_safe_relative("../a"));
	assert_false(path_is_safe_relative("a/../b"));
	assert_false(path_is_safe_relative("/etc/passwd"));
	assert_false(path_is_safe_relative("a//b"));
	assert_false(path_is_safe_relative("a/"));
	assert_false(path_is_safe_relative(""));
	assert_false(path_is_safe_relative("./a"));
}

static void test_jsonx(void **state)
{
	struct err e;
	const char *s = NULL;
	bool b = false;
	json_t *v;
	(void)state;

	v = jsonx_parse("{\"a\":\"x\",\"b\":true,\"c\":1}", 24, 8, &e);
	assert_non_null(v);
	assert_int_equal(jsonx_str(v, "a", true, &s, &e), 0);
	assert_string_equal(s, "x");
	assert_int_equal(jsonx_bool(v, "b", true, &b, &e), 0);
	assert_true(b);
	assert_true(jsonx_str(v, "c", true, &s, &e) < 0);
	assert_string_equal(e.msg, "'c' must be a string");
	assert_true(jsonx_str(v, "zz", true, &s, &e) < 0);
	assert_string_equal(e.msg, "'zz' is required");
	json_decref(v);
	assert_null(jsonx_parse("{\"a\":", 5, 8, &e));
	assert_null(jsonx_parse("[[[[1]]]]", 9, 3, &e));
	v = jsonx_parse("[[[1]]]", 7, 3, &e);
	assert_non_null(v);
	json_decref(v);
}

/* Issue 15 part 7: str_fmt says when a text does not fit and leaves nothing of it;
 * str_fmt_cut cuts display text visibly; str_set_lit copies a literal. */
static void test_str_fmt(void **state)
{
	char b[8], big[16];
	(void)state;

	assert_int_equal(str_fmt(b, sizeof b, "%s-%d", "ab", 42), 0);
	assert_string_equal(b, "ab-42");
	assert_int_equal(str_fmt(b, sizeof b, "%s", "1234567"), 0); /* exactly full */
	assert_string_equal(b, "1234567");
	assert_int_equal(str_fmt(b, sizeof b, "%s", "12345678"), -1); /* one byte over */
	assert_string_equal(b, "");
	assert_int_equal(str_fmt(b, 1, "%s", ""), 0);
	assert_int_equal(str_fmt(b, 1, "x"), -1);

	str_fmt_cut(b, sizeof b, "%s", "short");
	assert_string_equal(b, "short");
	str_fmt_cut(b, sizeof b, "%s", "1234567");
	assert_string_equal(b, "1234567");
	str_fmt_cut(b, sizeof b, "%s", "a long message");
	assert_string_equal(b, "a lo..."); /* as long as fits, ending in "..." */
	str_fmt_cut(big, sizeof big, "%d items in %s", 12, "the warehouse");
	assert_string_equal(big, "12 items in ...");

	str_set_lit(b, "PUBLIC");
	assert_string_equal(b, "PUBLIC");
}

static void test_tally(void **state)
{
	struct tally t = {0};
	struct err e;
	(void)state;

	assert_int_equal(tally_get(&t, "a"), 0);
	for (int i = 0; i < 20; i++) { /* grows past its first capacity */
		char key[16];

		str_fmt_cut(key, sizeof key, "k%d", i);
		assert_int_equal(tally_add(&t, key, &e), 0);
	}
	assert_int_equal(tally_add(&t, "a", &e), 0);
	assert_int_equal(tally_add(&t, "a", &e), 0);
	assert_int_equal(tally_get(&t, "a"), 2);
	assert_int_equal(tally_get(&t, "k19"), 1);
	tally_sub(&t, "a");
	assert_int_equal(tally_get(&t, "a"), 1);
	tally_sub(&t, "a");
	assert_int_equal(tally_get(&t, "a"), 0);
	assert_int_equal(t.n, 20); /* a key at zero is gone */
	tally_sub(&t, "a");	   /* nothing to take */
	assert_int_equal(tally_get(&t, "k0"), 1);
	assert_int_equal(tally_add(&t, "0123456789012345678901234567890123456789", &e), -ERR_INVALID);
	tally_cleanup(&t);
	assert_int_equal(t.n, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_str_fmt),
	    cmocka_unit_test(test_buf_grows_and_caps),
	    cmocka_unit_test(test_buf_cap_is_hard),
	    cmocka_unit_test(test_iso_format),
	    cmocka_unit_test(test_iso_parse),
	    cmocka_unit_test(test_names),
	    cmocka_unit_test(test_checked_numbers),
	    cmocka_unit_test(test_b64),
	    cmocka_unit_test(test_uuid),
	    cmocka_unit_test(test_uuid_v7),
	    cmocka_unit_test(test_paths),
	    cmocka_unit_test(test_jsonx),
	    cmocka_unit_test(test_tally),
	};
	rand_init();
	return cmocka_run_group_tests_name("base", tests, NULL, NULL);
}
