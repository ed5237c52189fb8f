/* Unit tests for properties_parse: Java's .properties rules (separators, comments,
 * continuations, escapes, \u with surrogate pairs, ISO-8859-1 text) and its errors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/properties.h"

static json_t *parse(const char *text, struct err *e)
{
	return properties_parse(text, strlen(text), 100, e);
}

static const char *get(json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static void test_separators_and_comments(void **state)
{
	struct err e;
	json_t *o = parse("# a comment\n! another\n\n  a=1\nb : two words \nc\t3\nd\ne = \n"
			  "invalidCardinality=Required field\nf==x\n",
			  &e);
	(void)state;
	assert_non_null(o);
	assert_string_equal(get(o, "a"), "1");
	assert_string_equal(get(o, "b"), "two words ");
	assert_string_equal(get(o, "c"), "3");
	assert_string_equal(get(o, "d"), "");
	assert_string_equal(get(o, "e"), "");
	assert_string_equal(get(o, "invalidCardinality"), "Required field");
	assert_string_equal(get(o, "f"), "=x");
	assert_int_equal(json_object_size(o), 7);
	json_decref(o);
}

static void test_continuations_and_escapes(void **state)
{
	struct err e;
	json_t *o = parse("long = one \\\n     two\\\r\n three\nkey\\ with\\=sep = v\\tw\\\\\n"
			  "u = caf\\u00e9 \\uD83D\\uDE00\nlast = end\\",
			  &e);
	(void)state;
	assert_non_null(o);
	assert_string_equal(get(o, "long"), "one twothree"); /* as Java: blanks starting a continuation go */
	assert_string_equal(get(o, "key with=sep"), "v\tw\\");
	assert_string_equal(get(o, "u"), "café 😀");
	assert_string_equal(get(o, "last"), "end");
	json_decref(o);
}

static void test_latin1_and_later_keys(void **state)
{
	struct err e;
	json_t *o = parse("x = caf\xe9\nx = again \xe9\n", &e);
	(void)state;
	assert_non_null(o);
	assert_string_equal(get(o, "x"), "again é");
	json_decref(o);
}

static void test_errors(void **state)
{
	struct err e;
	(void)state;
	assert_null(parse("a = 1\nb = \\u12G4\n", &e));
	assert_int_equal(e.code, ERR_INVALID);
	assert_string_equal(e.msg, "properties line 2: malformed \\uxxxx encoding");
	assert_null(parse("a = \\uD800 alone", &e));
	assert_int_equal(e.code, ERR_INVALID);
	assert_null(parse("a = \\uDC00", &e));
	assert_null(properties_parse("a=1\nb=2\nc=3\n", 12, 2, &e));
	assert_int_equal(e.code, ERR_TOO_LARGE);
}

static void test_empty(void **state)
{
	struct err e;
	json_t *o = properties_parse("", 0, 10, &e);
	(void)state;
	assert_non_null(o);
	assert_int_equal(json_object_size(o), 0);
	json_decref(o);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_separators_and_comments), cmocka_unit_test(test_continuations_and_escapes),
	    cmocka_unit_test(test_latin1_and_later_keys), cmocka_unit_test(test_errors), cmocka_unit_test(test_empty)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
