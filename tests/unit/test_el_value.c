/* Unit tests for flow/value: Java printing of values and EL coercions. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

#include <cmocka.h>

#include "base/buf.h"
#include "flow/entry.h"
#include "flow/value.h"

static void check_double(double d, const char *want)
{
	char out[VALUE_DOUBLE_MAX];
	size_t n = value_format_double(d, out);

	if (strcmp(out, want) != 0)
		fail_msg("%.17g printed as %s, want %s", d, out, want);
	assert_int_equal(n, strlen(want));
}

static void test_doubles(void **state)
{
	(void)state;
	check_double(2.5, "2.5");
	check_double(5.0, "5.0");
	check_double(12.3, "12.3");
	check_double(0.1 + 0.2, "0.30000000000000004");
	check_double(1e10, "1.0E10");
	check_double(1e7, "1.0E7");
	check_double(9999999.0, "9999999.0");
	check_double(1234567.0, "1234567.0");
	check_double(12345678.9, "1.23456789E7");
	check_double(0.001, "0.001");
	check_double(0.0001, "1.0E-4");
	check_double(0.00123, "0.00123");
	check_double(1.5e-10, "1.5E-10");
	check_double(-2.5, "-2.5");
	check_double(-1e-5, "-1.0E-5");
	check_double(0.0, "0.0");
	check_double(-0.0, "-0.0");
	check_double(100.0, "100.0");
	check_double(1e300, "1.0E300");
	check_double(1.7976931348623157e308, "1.7976931348623157E308");
	check_double(3.141592653589793, "3.141592653589793");
	check_double(1.0 / 3, "0.3333333333333333");
	check_double(2.0 / 3, "0.6666666666666666");
	check_double(123456.789, "123456.789");
	check_double(NAN, "NaN");
	check_double(INFINITY, "Infinity");
	check_double(-INFINITY, "-Infinity");
	check_double(1e-3 - 1e-19, "0.001");
	check_double(4.35, "4.35");
	check_double(1e23, "1.0E23");
}

static void check_print(const char *json, const char *want)
{
	json_t *v = json_loads(json, JSON_DECODE_ANY, NULL);
	char *p;

	assert_non_null(v);
	p = value_to_cstr(v, NULL);
	if (strcmp(p, want) != 0)
		fail_msg("%s printed as %s, want %s", json, p, want);
	free(p);
	json_decref(v);
}

/* Map.Entry (flow/entry.h): entries print as key=value while they live; dead ones are
 * dropped from the set as it fills, and a plain {key, value} map is never one. */
static void test_entries(void **state)
{
	json_t *one = json_integer(1), *keep, *plain, *copy;
	char *p;
	(void)state;

	keep = entry_new("a", one);
	for (int i = 0; i < 100000; i++) {
		json_t *tmp = entry_new("x", one);
		assert_true(entry_is(tmp));
		json_decref(tmp);
	}
	assert_true(entry_is(keep));
	p = value_to_cstr(keep, NULL);
	assert_string_equal(p, "a=1");
	free(p);
	assert_string_equal(value_class_name(keep), "java.util.LinkedHashMap$Entry");
	plain = json_pack("{s:s, s:i}", "key", "a", "value", 1);
	copy = json_deep_copy(keep);
	assert_false(entry_is(plain));
	assert_false(entry_is(copy));
	p = value_to_cstr(plain, NULL);
	assert_string_equal(p, "{key=a, value=1}");
	free(p);
	json_decref(plain);
	json_decref(copy);
	json_decref(keep);
	json_decref(one);
}

static void test_print(void **state)
{
	struct buf b;
	struct err e;
	json_t *v;
	(void)state;

	check_print("{\"k\": \"v\", \"n\": [1, 2]}", "{k=v, n=[1, 2]}");
	check_print("[1, 2, 3]", "[1, 2, 3]");
	check_print("[]", "[]");
	check_print("{}", "{}");
	check_print("[null, true, false, \"s p\"]", "[null, true, false, s p]");
	check_print("{\"a\": {\"b\": {\"c\": [1.0, 2.5]}}}", "{a={b={c=[1.0, 2.5]}}}");
	check_print("null", "null");
	check_print("9223372036854775807", "9223372036854775807");
	check_print("-9223372036854775808", "-9223372036854775808");
	check_print("5.0", "5.0");
	check_print("\"text\"", "text");
	check_print("{\"z\": 1, \"a\": 2, \"m\": 3}", "{z=1, a=2, m=3}");

	buf_init(&b, 0);
	assert_int_equal(value_append_string(&b, json_null(), &e), 0);
	assert_int_equal(b.len, 0);
	assert_int_equal(value_print(&b, json_null(), &e), 0);
	assert_string_equal(b.data, "null");
	buf_cleanup(&b);

	/* a capped buffer refuses, it does not truncate */
	buf_init(&b, 4);
	v = json_loads("[1, 2, 3]", 0, NULL);
	assert_true(value_print(&b, v, &e) < 0);
	assert_int_equal(e.code, ERR_TOO_LARGE);
	buf_cleanup(&b);
	json_decref(v);
}

static void test_deep_value_is_refused(void **state)
{
	json_t *root = json_array(), *cur = root;
	struct buf b;
	struct err e;
	int i;
	(void)state;

	for (i = 0; i < VALUE_PRINT_DEPTH + 10; i++) {
		json_t *next = json_array();
		json_array_append_new(cur, next);
		cur = next;
	}
	buf_init(&b, 0);
	assert_true(value_print(&b, root, &e) < 0);
	assert_int_equal(e.code, ERR_LIMIT);
	buf_cleanup(&b);
	assert_null(value_to_cstr(root, NULL));
	json_decref(root);
}

static void test_coercions(void **state)
{
	struct err e;
	bool b = true;
	int64_t l = 0;
	double d = 0;
	json_t *v;
	(void)state;

	assert_int_equal(value_to_bool(json_null(), &b, &e), 0);
	assert_false(b);
	v = json_string("TRUE");
	assert_int_equal(value_to_bool(v, &b, &e), 0);
	assert_true(b);
	json_decref(v);
	v = json_string("yes");
	assert_int_equal(value_to_bool(v, &b, &e), 0);
	assert_false(b);
	json_decref(v);
	v = json_integer(1);
	assert_true(value_to_bool(v, &b, &e) < 0);
	assert_string_equal(e.msg, "Cannot convert [1] of type [class java.lang.Long] to [class java.lang.Boolean]");
	assert_false(value_truthy(v));
	assert_true(value_truthy(json_true()));
	json_decref(v);

	v = json_string("-42");
	assert_int_equal(value_to_long(v, &l, &e), 0);
	assert_int_equal(l, -42);
	json_decref(v);
	v = json_string("9223372036854775808");
	assert_true(value_to_long(v, &l, &e) < 0);
	json_decref(v);
	v = json_string(" 1.5 ");
	assert_true(value_to_long(v, &l, &e) < 0);
	assert_string_equal(e.msg, "Cannot convert [ 1.5 ] of type [class java.lang.String] to [class java.lang.Long]");
	assert_int_equal(value_to_double(v, &d, &e), 0);
	assert_true(d == 1.5);
	json_decref(v);
	v = json_real(-2.9);
	assert_int_equal(value_to_long(v, &l, &e), 0);
	assert_int_equal(l, -2);
	json_decref(v);
	v = json_string("1e3");
	assert_int_equal(value_to_double(v, &d, &e), 0);
	assert_true(d == 1000.0);
	json_decref(v);
	v = json_string("inf");
	assert_true(value_to_double(v, &d, &e) < 0);
	json_decref(v);
	assert_true(value_to_long(json_true(), &l, &e) < 0);
	assert_int_equal(value_to_long(json_null(), &l, &e), 0);
	assert_int_equal(l, 0);

	assert_string_equal(value_class_name(json_true()), "java.lang.Boolean");
	v = json_object();
	assert_true(value_is_empty(v));
	assert_string_equal(value_class_name(v), "java.util.LinkedHashMap");
	json_decref(v);
	assert_true(value_is_empty(json_null()));
}

static void test_equals_merge_paths(void **state)
{
	struct err e;
	json_t *a = json_loads("{\"x\": {\"y\": 1, \"z\": [1]}, \"k\": 1}", 0, NULL);
	json_t *b = json_loads("{\"x\": {\"y\": 2, \"w\": 3}, \"n\": null}", 0, NULL);
	json_t *one = json_integer(1), *onef = json_real(1.0), *v;
	char *p;
	(void)state;

	assert_false(value_equals(one, onef));
	assert_true(value_equals(a, a));
	assert_int_equal(value_merge(a, b, &e), 0);
	p = value_to_cstr(a, NULL);
	assert_string_equal(p, "{x={y=2, z=[1], w=3}, k=1, n=null}");
	free(p);
	assert_int_equal(value_set_path(a, "x.q.r", 5, one, &e), 0);
	assert_int_equal(value_set_path(a, "k.deep", 6, one, &e), 0);
	p = value_to_cstr(a, NULL);
	assert_string_equal(p, "{x={y=2, z=[1], w=3, q={r=1}}, k={deep=1}, n=null}");
	free(p);
	assert_true(value_set_path(a, "x..y", 4, one, &e) < 0);
	v = json_object_get(a, "x");
	assert_true(value_contains_ref(a, v));
	assert_false(value_contains_ref(v, a));
	assert_true(value_set_path(v, "loop", 4, a, &e) < 0);
	assert_true(value_merge(v, a, &e) < 0);
	json_decref(a);
	json_decref(b);
	json_decref(one);
	json_decref(onef);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_doubles),
	    cmocka_unit_test(test_print),
	    cmocka_unit_test(test_entries),
	    cmocka_unit_test(test_deep_value_is_refused),
	    cmocka_unit_test(test_coercions),
	    cmocka_unit_test(test_equals_merge_paths),
	};
	return cmocka_run_group_tests_name("el_value", tests, NULL, NULL);
}
