/* Unit tests for src/base/json_dump.c (behind jsonx_dump and frame_encode): its text is
 * byte for byte json_dumps(v, JSON_COMPACT [| JSON_ENCODE_ANY]) — on a table of tricky
 * values, on random values (random bytes for strings: invalid UTF-8, control characters,
 * NUL), and where it leaves the value to jansson (reals, deep nesting, invalid UTF-8). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/json_dump.h"

static unsigned written; /* comparisons of two texts (not both NULL) */

/* Both texts, or both NULL. */
static void same(const json_t *v, bool any)
{
	char *mine = json_dump_compact(v, any);
	char *theirs = json_dumps(v, JSON_COMPACT | (any ? JSON_ENCODE_ANY : 0));

	if (!mine || !theirs) {
		assert_null(mine);
		assert_null(theirs);
	} else {
		assert_string_equal(mine, theirs);
		written++;
	}
	free(mine);
	free(theirs);
}

static void same_both(json_t *v)
{
	same(v, true);
	same(v, false);
	json_decref(v);
}

static void test_table(void **state)
{
	static const char bytes[] = "a\0b\"c\\d\b\f\n\r\t\x01\x1f\x7f/\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
	json_t *o;
	(void)state;

	same_both(json_null());
	same_both(json_true());
	same_both(json_false());
	same_both(json_integer(0));
	same_both(json_integer(-1));
	same_both(json_integer(INT64_MAX));
	same_both(json_integer(INT64_MIN));
	same_both(json_string(""));
	same_both(json_stringn(bytes, sizeof bytes - 1));
	same_both(json_array());
	same_both(json_object());
	same_both(json_pack("{s:s, s:[i, b, n, {}], s:{s:[]}}", "type", "start", "a", 7, 1, "o", "k", "v"));
	same_both(json_pack("[f, {s:f}]", 2.5, "r", 1e300)); /* reals: jansson's */
	o = json_object();
	json_object_setn_new_nocheck(o, "k\0ey\n", 5, json_string("v"));
	json_object_set_new(o, "z", json_integer(1));
	json_object_set_new(o, "a", json_integer(2)); /* insertion order, not sorted */
	same_both(o);
}

/* Strings jansson refuses to write (it made them without a check): both answer NULL. */
static void test_invalid_utf8(void **state)
{
	static const char *const bad[] = {"\x80", "\xc0\xaf", "\xc1\xbf", "\xe0\x80\xaf", "\xed\xa0\x80", "\xf4\x90\x80\x80",
					  "\xf5\x80\x80\x80", "\xc3", "\xe2\x82", "ok\xff"};
	(void)state;

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		same_both(json_string_nocheck(bad[i]));
		same_both(json_pack("{s:o}", "k", json_string_nocheck(bad[i])));
	}
}

static void test_deep_nesting(void **state)
{
	json_t *v = json_integer(1);
	(void)state;

	for (int i = 0; i < 3000; i++) {
		json_t *a = i % 2 ? json_array() : json_object();
		if (json_is_array(a))
			json_array_append_new(a, v);
		else
			json_object_set_new(a, "k", v);
		v = a;
	}
	same_both(v);
}

static uint64_t rng = 88172645463325252ULL;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static json_t *random_string(void)
{
	char s[24];
	size_t n = next() % sizeof s;

	/* mostly valid: letters, control characters, a two-byte character; now and then a
	 * random byte (most often not UTF-8: the whole value is jansson's NULL then) */
	for (size_t i = 0; i < n; i++) {
		uint64_t r = next() % 16;
		if (r == 15 && i + 1 < n) {
			s[i++] = '\xc3';
			s[i] = '\xa9';
		} else {
			s[i] = (char)(r < 10 ? 'a' + next() % 26 : r < 13 ? next() % 32 : r < 14 ? '"' : next() % 256);
		}
	}
	return json_stringn_nocheck(s, n);
}

static json_t *random_value(int depth)
{
	uint64_t r = next() % (depth > 5 ? 6 : 9);
	json_t *v;

	switch (r) {
	case 0:
		return json_null();
	case 1:
		return json_boolean(next() % 2);
	case 2:
		return json_integer((json_int_t)next());
	case 3:
	case 4:
	case 5:
		return random_string();
	case 6:
		v = json_array();
		for (uint64_t n = next() % 5; n; n--)
			json_array_append_new(v, random_value(depth + 1));
		return v;
	default:
		v = json_object();
		for (uint64_t n = next() % 5; n; n--) {
			json_t *k = random_string();
			json_object_setn_new_nocheck(v, json_string_value(k), json_string_length(k), random_value(depth + 1));
			json_decref(k);
		}
		return v;
	}
}

static void test_random_values(void **state)
{
	(void)state;

	written = 0;
	for (int i = 0; i < 20000; i++)
		same_both(random_value(0));
	assert_true(written > 20000); /* most values are written, not refused by both */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table),
	    cmocka_unit_test(test_invalid_utf8),
	    cmocka_unit_test(test_deep_nesting),
	    cmocka_unit_test(test_random_values),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
