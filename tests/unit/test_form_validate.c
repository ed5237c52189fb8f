/* Unit tests for form_validate: coercion per type, cardinality, allow/pattern/min/max,
 * read-only fields and defaults, and that every failing field gets its own message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/str.h"
#include "flow/form_validate.h"

static const char *form_text = "{\"name\":\"f\",\"eventName\":\"e\",\"values\":{\"ro\":\"kept\"},\"fields\":["
			       "{\"name\":\"color\",\"type\":\"string\",\"allow\":[\"red\",\"green\"]},"
			       "{\"name\":\"code\",\"type\":\"string?\",\"pattern\":\"[A-Z]{3}\"},"
			       "{\"name\":\"age\",\"type\":\"int?\",\"min\":21,\"max\":100},"
			       "{\"name\":\"ok\",\"type\":\"boolean\",\"value\":true},"
			       "{\"name\":\"when\",\"type\":\"date?\"},"
			       "{\"name\":\"tags\",\"type\":\"string*\",\"allow\":[\"a\",\"b\"]},"
			       "{\"name\":\"nums\",\"type\":\"decimal+\"},"
			       "{\"name\":\"ro\",\"type\":\"string\",\"readonly\":true}]}";

static json_t *form;

static int setup(void **state)
{
	(void)state;
	form = json_loads(form_text, 0, NULL);
	return form ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	json_decref(form);
	return 0;
}

static int run(const char *given_text, json_t **out)
{
	struct err e;
	json_t *given = json_loads(given_text, 0, NULL);
	int rc;
	assert_non_null(given);
	rc = form_validate(form, given, out, &e);
	json_decref(given);
	return rc;
}

static void test_valid_coerces(void **state)
{
	json_t *out;
	(void)state;
	assert_int_equal(run("{\"color\":\"red\",\"code\":\"ABC\",\"age\":\"30\",\"ok\":\"false\",\"when\":\"2026-"
			     "01-02\",\"tags\":\"a\",\"nums\":[\"1.5\",2],\"ro\":\"changed\",\"extra\":1}",
			     &out),
			 FORM_VALID);
	assert_string_equal(json_string_value(json_object_get(out, "color")), "red");
	assert_int_equal(json_integer_value(json_object_get(out, "age")), 30);
	assert_true(json_is_false(json_object_get(out, "ok")));
	assert_string_equal(json_string_value(json_object_get(out, "when")), "2026-01-02T00:00:00.000Z");
	assert_int_equal(json_array_size(json_object_get(out, "tags")), 1);
	assert_true(json_real_value(json_array_get(json_object_get(out, "nums"), 0)) == 1.5);
	assert_string_equal(json_string_value(json_object_get(out, "ro")), "kept");
	assert_null(json_object_get(out, "extra"));
	json_decref(out);
}

static void test_defaults_and_optional(void **state)
{
	json_t *out;
	(void)state;
	assert_int_equal(run("{\"color\":\"green\",\"nums\":[3]}", &out), FORM_VALID);
	assert_true(json_is_null(json_object_get(out, "code")));
	assert_true(json_is_null(json_object_get(out, "age")));
	assert_true(json_is_true(json_object_get(out, "ok")));
	assert_int_equal(json_array_size(json_object_get(out, "tags")), 0);
	json_decref(out);
}

static void test_every_field_error(void **state)
{
	json_t *out;
	(void)state;
	assert_int_equal(run("{\"color\":\"blue\",\"code\":\"ABCD\",\"age\":101,\"ok\":\"maybe\",\"when\":\"soon\","
			     "\"tags\":[\"a\",\"c\"],\"nums\":[]}",
			     &out),
			 FORM_INVALID);
	assert_string_equal(json_string_value(json_object_get(out, "color")),
			    "color: value 'blue' is not allowed, valid values: [red, green]");
	assert_string_equal(json_string_value(json_object_get(out, "code")),
			    "code: value 'ABCD' doesn't match pattern '[A-Z]{3}'");
	assert_string_equal(json_string_value(json_object_get(out, "age")),
			    "age: value '101' must be within 21 and 100 (inclusive)");
	assert_string_equal(json_string_value(json_object_get(out, "ok")), "ok: expected a boolean value, got maybe");
	assert_string_equal(json_string_value(json_object_get(out, "when")), "when: expected a date value, got soon");
	assert_string_equal(json_string_value(json_object_get(out, "tags")),
			    "tags [1]: value 'c' is not allowed, valid values: [a, b]");
	assert_string_equal(json_string_value(json_object_get(out, "nums")),
			    "nums: Invalid cardinality, expected at least a single value");
	assert_null(json_object_get(out, "ro"));
	assert_int_equal(json_object_size(out), 7);
	json_decref(out);
}

static void test_single_value_refuses_list(void **state)
{
	json_t *out;
	(void)state;
	assert_int_equal(run("{\"color\":[\"red\",\"green\"],\"nums\":1,\"age\":\"abc\"}", &out), FORM_INVALID);
	assert_string_equal(json_string_value(json_object_get(out, "color")),
			    "color: Invalid cardinality, expected a single value");
	assert_string_equal(json_string_value(json_object_get(out, "age")), "age: expected an integer value, got abc");
	json_decref(out);
}

static void test_malformed_form(void **state)
{
	struct err e;
	json_t *bad = json_loads("{\"fields\":[{\"name\":\"x\"}]}", 0, NULL), *out;
	(void)state;
	assert_true(form_validate(bad, NULL, &out, &e) < 0);
	assert_null(out);
	json_decref(bad);
	assert_string_equal(form_cardinality("string"), "ONE_AND_ONLY_ONE");
	assert_string_equal(form_cardinality("int?"), "ONE_OR_NONE");
	assert_string_equal(form_cardinality("int+"), "AT_LEAST_ONE");
	assert_string_equal(form_cardinality("file*"), "ANY");
	assert_int_equal(form_base_type_len("file*"), 4);
}

/* One field alone: min only, max only, and allowed numbers. */
static void test_range_and_allowed_messages(void **state)
{
	json_t *f = json_loads("{\"name\":\"g\",\"fields\":[{\"name\":\"lo\",\"type\":\"int?\",\"min\":5},"
			       "{\"name\":\"hi\",\"label\":\"Upper\",\"type\":\"decimal?\",\"max\":2.5},"
			       "{\"name\":\"n\",\"type\":\"int?\",\"allow\":[1,2,3]}]}",
			       0, NULL);
	json_t *given = json_loads("{\"lo\":4,\"hi\":3,\"n\":7}", 0, NULL), *out = NULL;
	struct err e;
	(void)state;
	assert_int_equal(form_validate(f, given, &out, &e), FORM_INVALID);
	assert_string_equal(json_string_value(json_object_get(out, "lo")),
			    "lo: value '4' must be equal or greater than 5");
	assert_string_equal(json_string_value(json_object_get(out, "hi")),
			    "Upper: value '3.0' must be less or equal than 2.5");
	assert_string_equal(json_string_value(json_object_get(out, "n")),
			    "n: value '7' is not allowed, valid values: [1, 2, 3]");
	json_decref(out);
	json_decref(given);
	json_decref(f);
}

/* A decimal with no JSON form (NaN, Infinity, out of double's range) is refused as a
 * wrong type, never stored as nothing. */
static void test_decimal_not_finite(void **state)
{
	static const char *const bad[] = {"\"NaN\"", "\"Infinity\"", "\"-Infinity\"", "\"1e99999\"", "\"-1e400\""};
	json_t *f = json_loads("{\"name\":\"g\",\"fields\":[{\"name\":\"d\",\"type\":\"decimal\"}]}", 0, NULL);
	struct err e;
	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		char text[64];
		json_t *given, *out = NULL;
		assert_int_equal(str_fmt(text, sizeof text, "{\"d\":%s}", bad[i]), 0);
		given = json_loads(text, 0, NULL);
		assert_non_null(given);
		assert_int_equal(form_validate(f, given, &out, &e), FORM_INVALID);
		assert_non_null(json_string_value(json_object_get(out, "d")));
		json_decref(out);
		json_decref(given);
	}
	json_decref(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_valid_coerces),     cmocka_unit_test(test_defaults_and_optional),
	    cmocka_unit_test(test_every_field_error), cmocka_unit_test(test_single_value_refuses_list),
	    cmocka_unit_test(test_malformed_form),    cmocka_unit_test(test_range_and_allowed_messages),
	    cmocka_unit_test(test_decimal_not_finite),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
