/* Unit tests for sensitive-value masking (flow/mask.c) and its path through the VM: values
 * marked by sensitive() reach the host and survive vm_save / vm_load. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/limits.h"
#include "flow/mask.h"
#include "flow/model.h"
#include "flow/vm.h"

static void test_mask_text(void **state)
{
	struct mask m = {0};
	bool changed;
	char *t;
	(void)state;
	assert_true(mask_add(&m, "abc"));
	assert_false(mask_add(&m, "abc")); /* deduplicated */
	assert_false(mask_add(&m, ""));	   /* empty strings never */
	assert_true(mask_add(&m, "abcdef"));
	assert_null(mask_text(&m, "nothing here", &changed));
	assert_false(changed);
	t = mask_text(&m, "x abcdef y abc zab", &changed); /* the longest value wins */
	assert_true(changed);
	assert_string_equal(t, "x ****** y ****** zab");
	free(t);
	assert_true(mask_has(&m, "abc"));
	assert_false(mask_has(&m, "ab"));
	json_t *v = json_pack("{s:s, s:[s, i]}", "a", "1abc2", "l", "abcdef", 5);
	mask_json(&m, v);
	assert_string_equal(json_string_value(json_object_get(v, "a")), "1******2");
	assert_string_equal(json_string_value(json_array_get(json_object_get(v, "l"), 0)), "******");
	json_decref(v);
	mask_cleanup(&m);
	assert_int_equal(m.n, 0);
}

static struct mask host_mask;
static char logged[4096];

static void test_log(void *ctx, enum flow_level level, const char *msg)
{
	bool changed;
	char *t = mask_text(&host_mask, msg, &changed);
	(void)ctx, (void)level;
	strncat(logged, changed ? t : msg, sizeof logged - strlen(logged) - 2);
	strncat(logged, "\n", sizeof logged - strlen(logged) - 1);
	free(t);
}

static bool test_sensitive(void *ctx, const char *value, bool add)
{
	(void)ctx;
	return add ? (mask_add(&host_mask, value), true) : mask_has(&host_mask, value);
}

static const struct flow_host_ops ops = {.log = test_log, .sensitive = test_sensitive};
static const struct flow_host host = {.ops = &ops, .workdir = "/tmp"};

static void test_sensitive_survives_save_load(void **state)
{
	const char *text = "flows:\n"
			   "  default:\n"
			   "    - set: {s: \"${sensitive('topsecret')}\"}\n"
			   "    - log: \"one ${s} ${base64.encode(s)}\"\n"
			   "    - suspend: ev\n"
			   "    - log: \"two ${s}\"\n";
	struct err e;
	struct model *m = model_load_buffer("concord.yml", text, strlen(text), &e);
	struct vm *vm, *vm2;
	json_t *st;
	(void)state;
	assert_non_null(m);
	vm = vm_new(m, &host);
	assert_int_equal(vm_start(vm, "default", NULL, NULL, &e), 0);
	assert_int_equal(vm_run(vm), VM_SUSPENDED);
	assert_non_null(strstr(logged, "one ****** ******"));
	assert_null(strstr(logged, "topsecret"));
	assert_null(strstr(logged, "dG9wc2VjcmV0"));
	st = vm_save(vm);
	vm_free(vm);
	mask_cleanup(&host_mask); /* a new runner: it learns the values from the state */
	logged[0] = 0;
	vm2 = vm_load(m, &host, st, &e);
	assert_non_null(vm2);
	assert_int_equal(vm_resume(vm2, "ev", NULL, &e), 0);
	assert_int_equal(vm_run(vm2), VM_FINISHED);
	assert_non_null(strstr(logged, "two ******"));
	assert_null(strstr(logged, "topsecret"));
	json_decref(st);
	vm_free(vm2);
	mask_cleanup(&host_mask);
	model_free(m);
}

static void test_syntax_error_fails_at_run_time(void **state)
{
	const char *text = "flows:\n  default:\n    - log: \"ok\"\n    - log: \"${1 / }\"\n";
	struct err e;
	struct model *m = model_load_buffer("concord.yml", text, strlen(text), &e);
	struct vm *vm;
	(void)state;
	assert_non_null(m); /* loads: the error belongs to the step */
	logged[0] = 0;
	vm = vm_new(m, &host);
	assert_int_equal(vm_start(vm, "default", NULL, NULL, &e), 0);
	assert_int_equal(vm_run(vm), VM_FAILED);
	assert_non_null(strstr(logged, "ok\n"));
	assert_non_null(strstr(logged, "Error @ line: 4, col: 7. while parsing expression '${1 / }'"));
	vm_free(vm);
	model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_mask_text),
	    cmocka_unit_test(test_sensitive_survives_save_load),
	    cmocka_unit_test(test_syntax_error_fails_at_run_time),
	};
	limits_defaults();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
