/* Unit tests for src/base/json_pluck.c: secret strings are taken out of JSON text before
 * jansson parses it, decoded exactly as jansson would, and the text still parses (to ""
 * where they were); anything malformed is left for the parser to report. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "base/json_pluck.h"
#include "base/str.h"

static struct json_plucked w[2];

static int pluck(char *text)
{
	w[0] = (struct json_plucked){.key = "data"};
	w[1] = (struct json_plucked){.key = "storePassword"};
	return json_pluck(text, strlen(text), w, 2);
}

/* The text parses and the key holds "" afterwards. */
static void assert_blanked(const char *text, const char *key)
{
	json_error_t je;
	json_t *v = json_loads(text, 0, &je);

	assert_non_null(v);
	assert_string_equal(json_string_value(json_object_get(v, key)), "");
	json_decref(v);
}

static void test_plain_values(void **state)
{
	char text[] = "{\"name\": \"s1\", \"data\": \"c2VjcmV0\", \"storePassword\":\"Pa55word\"}";
	(void)state;
	assert_int_equal(pluck(text), 0);
	assert_string_equal(w[0].value, "c2VjcmV0");
	assert_int_equal(w[0].len, 8);
	assert_string_equal(w[1].value, "Pa55word");
	assert_null(strstr(text, "c2VjcmV0"));
	assert_null(strstr(text, "Pa55word"));
	assert_non_null(strstr(text, "\"s1\""));
	assert_blanked(text, "data");
	assert_blanked(text, "storePassword");
	json_pluck_free(w, 2);
	assert_null(w[0].value);
}

static void test_escapes_decode_as_jansson_does(void **state)
{
	const char *src = "{\"storePassword\": \"a\\\"b\\\\c\\/d\\n\\t\\u00e9\\u20ac\\ud83d\\ude00x\"}";
	char text[256];
	json_t *ref = json_loads(src, 0, NULL);
	(void)state;
	assert_int_equal(str_fmt(text, sizeof text, "%s", src), 0);
	assert_int_equal(pluck(text), 0);
	assert_string_equal(w[1].value, json_string_value(json_object_get(ref, "storePassword")));
	assert_int_equal(w[1].len, json_string_length(json_object_get(ref, "storePassword")));
	assert_blanked(text, "storePassword");
	json_decref(ref);
	json_pluck_free(w, 2);
}

static void test_other_types_and_nested_keys_stay(void **state)
{
	char text[] = "{\"data\": 42, \"x\": {\"storePassword\": \"inner\"}, \"l\": [\"data\", {\"data\": \"y\"}]}";
	char copy[sizeof text];
	(void)state;
	memcpy(copy, text, sizeof text);
	assert_int_equal(pluck(text), 0);
	assert_null(w[0].value);
	assert_null(w[1].value);
	assert_string_equal(text, copy);
}

static void test_repeated_key_keeps_the_last(void **state)
{
	char text[] = "{\"data\": \"first\", \"data\": \"second\"}";
	(void)state;
	assert_int_equal(pluck(text), 0);
	assert_string_equal(w[0].value, "second");
	assert_null(strstr(text, "first"));
	assert_null(strstr(text, "second"));
	json_pluck_free(w, 2);
}

static void test_short_and_empty_strings(void **state)
{
	char text[] = "{\"data\":\"\",\"storePassword\":\"a\"}";
	(void)state;
	assert_int_equal(pluck(text), 0);
	assert_string_equal(w[0].value, "");
	assert_string_equal(w[1].value, "a");
	assert_blanked(text, "storePassword");
	json_pluck_free(w, 2);
}

static void test_malformed_text_is_left_alone(void **state)
{
	static const char *const bad[] = {
	    "",
	    "[\"data\", \"x\"]",
	    "{\"data\": \"unterminated}",
	    "{\"data\": \"x\" \"storePassword\": \"y\"}",
	    "{\"data\": \"x\"} trailing",
	    "{\"data\": \"bad \\q escape\"}",
	    "{\"data\": \"ctl \x01 char\"}",
	    "{\"data\": \"nul \\u0000 inside\"}",
	    "{\"data\": \"x\", }",
	    "{\"data\": tru}",
	};
	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char text[128];
		assert_int_equal(str_fmt(text, sizeof text, "%s", bad[i]), 0);
		assert_int_equal(pluck(text), -1);
		assert_string_equal(text, bad[i]);
		assert_null(w[0].value);
		assert_null(w[1].value);
	}
}

static void test_deep_nesting_is_refused_not_overflowed(void **state)
{
	size_t n = 100000;
	char *text = malloc(2 * n + 64);
	(void)state;
	memcpy(text, "{\"x\": ", 7);
	memset(text + 6, '[', n);
	memset(text + 6 + n, ']', n);
	memcpy(text + 6 + 2 * n, ", \"data\": \"v\"}", sizeof ", \"data\": \"v\"}");
	assert_int_equal(pluck(text), -1);
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_plain_values),
	    cmocka_unit_test(test_escapes_decode_as_jansson_does),
	    cmocka_unit_test(test_other_types_and_nested_keys_stay),
	    cmocka_unit_test(test_repeated_key_keeps_the_last),
	    cmocka_unit_test(test_short_and_empty_strings),
	    cmocka_unit_test(test_malformed_text_is_left_alone),
	    cmocka_unit_test(test_deep_nesting_is_refused_not_overflowed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
