/* Unit tests for form_message: the lookup (field's own key before the kind alone) and
 * java.text.MessageFormat's placeholders and quotes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "flow/form_messages.h"

static const char *const args[] = {"Phone", "12", "[0-9]+"};

static void expect(const json_t *m, const char *field, const char *kind, const char *want)
{
	json_t *msg = NULL;
	assert_int_equal(form_message(m, field, kind, args, 3, &msg), 1);
	assert_string_equal(json_string_value(msg), want);
	json_decref(msg);
}

static void test_lookup_order(void **state)
{
	json_t *m = json_pack("{s:s, s:s}", "phone.doesntMatchPattern", "own", "doesntMatchPattern", "general");
	json_t *msg = NULL;
	(void)state;
	expect(m, "phone", "doesntMatchPattern", "own");
	expect(m, "other", "doesntMatchPattern", "general");
	assert_int_equal(form_message(m, "phone", "invalidCardinality", args, 3, &msg), 0);
	assert_null(msg);
	assert_int_equal(form_message(NULL, "phone", "invalidCardinality", args, 3, &msg), 0);
	json_decref(m);
}

static void test_message_format(void **state)
{
	json_t *m = json_pack("{s:s, s:s, s:s, s:s, s:s}", "a", "{0}: ''{1}'' does not match {2}", "b",
			      "'{0}' is literal, {0,string} is not", "c", "{3} and {x} and {1", "d", "it''s {1}", "e",
			      "'unterminated {0}");
	(void)state;
	expect(m, "f", "a", "Phone: '12' does not match [0-9]+");
	expect(m, "f", "b", "{0} is literal, Phone is not");
	expect(m, "f", "c", "{3} and {x} and {1");
	expect(m, "f", "d", "it's 12");
	expect(m, "f", "e", "unterminated {0}");
	json_decref(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_lookup_order), cmocka_unit_test(test_message_format)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
