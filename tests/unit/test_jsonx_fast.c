/* Unit tests for src/base/json_fast.c behind jsonx_parse: on a table of tricky texts the
 * fast reader either answers exactly what json_loadb answers or leaves the text to
 * jansson (so errors keep jansson's words); the common shapes it must answer itself. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "../fuzz/json_same.h"
#include "base/jsonx.h"
#include "base/str.h"

struct tcase {
	const char *text;
	size_t len; /* 0: strlen(text) */
	bool fast;  /* the fast reader answers it (else jansson does, or reports the error) */
};

#define T(s, f)                                                                                                        \
	{                                                                                                              \
		s, sizeof(s) - 1, f                                                                                    \
	}

static const struct tcase cases[] = {
    /* shapes and whitespace */
    T("[0, 1, 2, 3]", true),
    T("{}", true),
    T("[]", true),
    T(" \t\r\n[ ] \n", true),
    T("{\"a\": {\"b\": [1, {\"c\": null}]}, \"d\": true, \"e\": false}", true),
    T("\"top\"", true),
    T("42", true),
    T("null", true),
    T("true", true),
    T("false", true),
    /* duplicate keys: the last value in the first place */
    T("{\"a\": 1, \"b\": 2, \"a\": 3}", true),
    T("{\"a\": [1], \"a\": {}}", true),
    /* strings and escapes */
    T("\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t\"", true),
    T("\"\\u0041\\u00e9\\u20AC\"", true),
    T("\"\\ud83d\\ude00 pair\"", true),
    T("\"\\uD834\\uDD1E\"", true),
    T("\"h\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"", true),
    T("\"nul \\u0000 inside\"", true),
    T("{\"\\u00e9t\\u00e9\": \"\\n\"}", true),
    T("{\"\": \"\"}", true),
    T("\"\\ud83d\"", false),
    T("\"\\ude00\"", false),
    T("\"\\ud83d\\u0041\"", false),
    T("\"\\ud83dx\"", false),
    T("\"\\u12\"", false),
    T("\"\\x\"", false),
    T("\"\\", false),
    T("\"open", false),
    T("\"tab\there\"", false),
    T("\"\x7f\"", true),
    T("{\"a\\u0000b\": 1}", false),
    T("\"a\0b\"", false),
    /* invalid UTF-8: stray continuation, overlong, surrogates, above U+10FFFF, truncated */
    T("\"\x80\"", false),
    T("\"\xc0\xaf\"", false),
    T("\"\xc1\xbf\"", false),
    T("\"\xe0\x80\xaf\"", false),
    T("\"\xe0\x9f\xbf\"", false),
    T("\"\xed\xa0\x80\"", false),
    T("\"\xed\x9f\xbf\"", true),
    T("\"\xf0\x80\x80\xaf\"", false),
    T("\"\xf0\x90\x80\x80\"", true),
    T("\"\xf4\x8f\xbf\xbf\"", true),
    T("\"\xf4\x90\x80\x80\"", false),
    T("\"\xf5\x80\x80\x80\"", false),
    T("\"\xff\"", false),
    T("\"\xc3\"", false),
    T("\"\xe2\x82\"", false),
    T("[\"\xc3\xa9\", \xc3\xa9]", false),
    /* integers */
    T("-0", true),
    T("[9223372036854775807, -9223372036854775808]", true),
    T("9223372036854775808", false),
    T("-9223372036854775809", false),
    T("123456789012345678901", false),
    T("01", false),
    T("-", false),
    T("-01", false),
    T("+1", false),
    T("[1 2]", false),
    T("1x", false),
    T("0000", false),
    /* reals */
    T("1.5", true),
    T("-0.0", true),
    T("1e400", false),
    T("-1e400", false),
    T("1e-400", true),
    T("4.9e-324", true),
    T("1E+2", true),
    T("1e-2", true),
    T("2.5E3", true),
    T("1.", false),
    T(".5", false),
    T("1e", false),
    T("1e+", false),
    T("1.5.2", false),
    T("0.1000000000000000055511151231257827021181583404541015625", true),
    T("1.00000000000000000000000000000000000000000000000000000000000000000001", false),
    /* literals and garbage */
    T("tru", false),
    T("truex", false),
    T("[true false]", false),
    T("nulll", false),
    T("NaN", false),
    T("[1,]", false),
    T("{\"a\":1,}", false),
    T("{\"a\" 1}", false),
    T("{a: 1}", false),
    T("[1] x", false),
    T("[1]]", false),
    T("{\"a\":1}}", false),
    T("", false),
    T(" \n\t ", false),
    T("\xef\xbb\xbf[]", false),
    T("[1\0]", false),
    T("[", false),
    T("{", false),
    T("{\"a\"", false),
    T("{\"a\":", false),
};

static void test_table_agrees_with_jansson(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		bool handled;

		if (!json_fast_agrees(cases[i].text, cases[i].len, 64, &handled) || handled != cases[i].fast)
			fail_msg("case %zu (%s): handled %d", i, cases[i].text, handled);
	}
}

static char *nested(size_t n, const char *open, const char *close, size_t *len)
{
	size_t o = strlen(open), c = strlen(close);
	char *s = malloc(n * (o + c) + 2);

	assert_non_null(s);
	for (size_t i = 0; i < n; i++)
		memcpy(s + i * o, open, o);
	s[n * o] = '1';
	for (size_t i = 0; i < n; i++)
		memcpy(s + n * o + 1 + i * c, close, c);
	*len = n * (o + c) + 1;
	s[*len] = '\0';
	return s;
}

/* What jsonx_parse said before the fast reader: jansson's error, or the depth limit's. */
static const char *expected_error(const char *text)
{
	static char want[512];
	json_error_t je;
	json_t *v = json_loadb(text, strlen(text), JSON_DECODE_ANY | JSON_ALLOW_NUL, &je);

	if (v)
		str_fmt_cut(want, sizeof want, "JSON nested deeper than the limit of 32 levels");
	else
		str_fmt_cut(want, sizeof want, "invalid JSON at line %d, column %d: %s", je.line, je.column, je.text);
	json_decref(v);
	return want;
}

/* Up to the limit the fast reader answers; past it jansson's answer and jsonx's words. */
static void test_depth_limit_and_deep_nesting(void **state)
{
	static const size_t depths[] = {1, 31, 32, 33, 1024, 1025, 2047, 2048, 2049, 100000};
	struct err e;
	size_t len;
	bool handled;

	(void)state;
	for (size_t i = 0; i < sizeof depths / sizeof depths[0]; i++) {
		char *a = nested(depths[i], "[", "]", &len), *o = nested(depths[i], "{\"k\":", "}", &len);
		json_t *v;

		assert_true(json_fast_agrees(a, strlen(a), 32, &handled));
		assert_int_equal(handled, depths[i] <= 32);
		assert_true(json_fast_agrees(o, strlen(o), JSONX_DEPTH_JANSSON, &handled));
		assert_int_equal(handled, depths[i] <= 1024);
		v = jsonx_parse(a, strlen(a), 32, &e);
		if (depths[i] <= 32) {
			assert_non_null(v);
		} else {
			assert_null(v);
			assert_string_equal(e.msg, expected_error(a));
		}
		json_decref(v);
		free(a);
		free(o);
	}
}

/* Errors are jansson's, word for word. */
static void test_errors_keep_jansson_words(void **state)
{
	static const char *bad[] = {"[1,]", "{\"a\":1} x", "\"\\ud83d\"", "", "[1e400]", "9223372036854775808"};
	json_error_t je;
	struct err e;
	char want[512];

	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		assert_null(json_loadb(bad[i], strlen(bad[i]), JSON_DECODE_ANY | JSON_ALLOW_NUL, &je));
		str_fmt_cut(want, sizeof want, "invalid JSON at line %d, column %d: %s", je.line, je.column, je.text);
		assert_null(jsonx_parse(bad[i], strlen(bad[i]), 32, &e));
		assert_string_equal(e.msg, want);
	}
}

/* A large array of integers (the loop bench's items) and a string-heavy object. */
static void test_large_texts(void **state)
{
	size_t n = 100000, len = 0, cap = n * 16 + 16;
	char *s = malloc(cap);
	bool handled;

	(void)state;
	assert_non_null(s);
	s[len++] = '[';
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(s + len, cap - len, "%s%lld", i ? ", " : "", (long long)(i * 7919) - 400000);
	s[len++] = ']';
	assert_true(json_fast_agrees(s, len, 4, &handled));
	assert_true(handled);
	len = 0;
	s[len++] = '{';
	for (size_t i = 0; i < 2000; i++)
		len +=
		    (size_t)snprintf(s + len, cap - len, "%s\"k%zu\\t\": \"v\\u00e9%zu\"", i ? "," : "", i % 1500, i);
	s[len++] = '}';
	assert_true(json_fast_agrees(s, len, 4, &handled));
	assert_true(handled);
	free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_table_agrees_with_jansson),
	    cmocka_unit_test(test_depth_limit_and_deep_nesting),
	    cmocka_unit_test(test_errors_keep_jansson_words),
	    cmocka_unit_test(test_large_texts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
