/* Unit tests for src/flow/tasks/mustache.c: the Mustache subset the `smtp` task's templates
 * use (variables, dotted names, escaping, sections, inverted sections, standalone lines)
 * and the errors for broken templates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "flow/tasks/mustache.h"

static char *render(const char *tpl, const char *scope_json, size_t max, struct err *e)
{
	json_t *scope = json_loads(scope_json, 0, NULL);
	char *out;
	assert_non_null(scope);
	out = mustache_render(tpl, strlen(tpl), scope, max, NULL, e);
	json_decref(scope);
	return out;
}

static void expect(const char *tpl, const char *scope_json, const char *want)
{
	struct err e = {0};
	char *out = render(tpl, scope_json, 1 << 20, &e);
	if (!out)
		fail_msg("%s: %s", tpl, e.msg);
	assert_string_equal(out, want);
	free(out);
}

static void expect_error(const char *tpl, const char *want_in_message)
{
	struct err e = {0};
	char *out = render(tpl, "{}", 1 << 20, &e);
	assert_null(out);
	if (!strstr(e.msg, want_in_message))
		fail_msg("'%s' not in '%s'", want_in_message, e.msg);
}

static void test_variables(void **state)
{
	(void)state;
	expect("Hello, {{name}}!", "{\"name\": \"World\"}", "Hello, World!");
	expect("{{ name }} {{missing}}|{{nothing}}", "{\"name\": \"x\", \"nothing\": null}", "x |");
	expect("{{initiator.displayName}} {{a.b.c}}", "{\"initiator\": {\"displayName\": \"Ann\"}, \"a\": {\"b\": {\"c\": 7}}}",
	       "Ann 7");
	expect("{{a.x}}", "{\"a\": {\"b\": 1}}", "");
	expect("{{n}} {{f}} {{t}} {{list}}", "{\"n\": 3, \"f\": 2.5, \"t\": true, \"list\": [1, 2]}", "3 2.5 true [1, 2]");
}

static void test_escaping(void **state)
{
	(void)state;
	expect("{{v}}", "{\"v\": \"<b>&'\\\"`=\"}", "&lt;b&gt;&amp;&#39;&quot;&#96;&#61;");
	expect("{{{v}}} {{&v}}", "{\"v\": \"<b>\"}", "<b> <b>");
}

static void test_sections(void **state)
{
	(void)state;
	expect("{{#items}}[{{name}}]{{/items}}", "{\"items\": [{\"name\": \"a\"}, {\"name\": \"b\"}]}", "[a][b]");
	expect("{{#items}}{{.}},{{/items}}", "{\"items\": [1, \"two\"]}", "1,two,");
	expect("{{#user}}{{name}} of {{org}}{{/user}}", "{\"user\": {\"name\": \"u\"}, \"org\": \"o\"}", "u of o");
	expect("{{#ok}}yes{{/ok}}{{#no}}no{{/no}}{{#empty}}e{{/empty}}{{#s}}s{{/s}}{{#z}}z{{/z}}",
	       "{\"ok\": true, \"no\": false, \"empty\": [], \"s\": \"\", \"z\": 0}", "yesz");
	expect("{{^items}}none{{/items}}{{^ok}}not ok{{/ok}}{{^missing}}!{{/missing}}",
	       "{\"items\": [], \"ok\": true}", "none!");
	expect("{{#a}}{{#b}}{{x}}{{/b}}{{/a}}", "{\"a\": {\"x\": 1}, \"b\": [2, 3]}", "11");
	expect("a{{! a comment }}b", "{}", "ab");
}

static void test_standalone_lines(void **state)
{
	(void)state;
	expect("Items:\n  {{#items}}\n- {{.}}\n  {{/items}}\nEnd\n", "{\"items\": [1, 2]}", "Items:\n- 1\n- 2\nEnd\n");
	expect("x {{#t}}y{{/t}} z\n", "{\"t\": true}", "x y z\n");
	expect("{{! only a comment }}\nbody", "{}", "body");
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("a\n{{#open}}x", "line 2: section 'open' is not closed");
	expect_error("{{/x}}", "closes no open section");
	expect_error("{{#a}}{{/b}}", "closes no open section");
	expect_error("{{name", "'{{' without '}}'");
	expect_error("{{> partial}}", "not supported");
	expect_error("{{=<% %>=}}", "not supported");
	expect_error("{{}}", "empty tag");
}

static void test_output_limit(void **state)
{
	struct err e = {0};
	char *out;
	(void)state;
	out = render("{{#l}}{{v}}{{/l}}", "{\"l\": [1, 2, 3, 4], \"v\": \"0123456789\"}", 25, &e);
	assert_null(out);
	assert_int_equal(e.code, ERR_TOO_LARGE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_variables),	      cmocka_unit_test(test_escaping),
	    cmocka_unit_test(test_sections),	      cmocka_unit_test(test_standalone_lines),
	    cmocka_unit_test(test_errors),	      cmocka_unit_test(test_output_limit),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
