/* Unit tests for triggers: Concord's condition matching (conditions.c), the parsing of
 * `triggers:` with file:line:col errors (parse.c) and the store's replace / claim
 * (store/triggers.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/path.h"
#include "store/store.h"
#include "triggers/conditions.c"

/* ---- conditions ---- */

static bool matches(const char *event, const char *cond)
{
	json_t *ev = json_loads(event, 0, NULL), *c = json_loads(cond, JSON_DECODE_ANY, NULL);
	bool r;

	assert_non_null(ev);
	r = triggers_conditions_match(ev, c);
	json_decref(ev);
	json_decref(c);
	return r;
}

static void test_conditions(void **state)
{
	(void)state;
	assert_true(matches("{\"a\":\"x\"}", "{}"));
	assert_true(matches("{\"a\":\"x\"}", "null"));
	/* strings are regular expressions on the whole value */
	assert_true(matches("{\"branch\":\"release-1.2\"}", "{\"branch\":\"release-.*\"}"));
	assert_false(matches("{\"branch\":\"my-release-1.2\"}", "{\"branch\":\"release-.*\"}"));
	assert_false(matches("{\"branch\":\"release-1.2x\"}", "{\"branch\":\"release-[0-9.]+\"}"));
	assert_true(matches("{\"a\":\"x|y\"}", "{\"a\":\"x\\\\|y\"}"));
	assert_true(matches("{\"a\":\"y\"}", "{\"a\":\"x|y\"}"));
	/* other scalars: equality, types included */
	assert_true(matches("{\"n\":5}", "{\"n\":5}"));
	assert_false(matches("{\"n\":6}", "{\"n\":5}"));
	assert_false(matches("{\"n\":\"5\"}", "{\"n\":5}"));
	assert_false(matches("{\"n\":5}", "{\"n\":\"5\"}"));
	assert_true(matches("{\"b\":true}", "{\"b\":true}"));
	assert_false(matches("{\"b\":false}", "{\"b\":true}"));
	/* missing keys are null */
	assert_false(matches("{}", "{\"a\":\"x\"}"));
	assert_true(matches("{}", "{\"a\":null}"));
	/* nested maps */
	assert_true(matches("{\"o\":{\"p\":{\"q\":\"abc\",\"r\":1}}}", "{\"o\":{\"p\":{\"q\":\"a.c\"}}}"));
	assert_false(matches("{\"o\":{\"p\":{\"q\":\"abd\"}}}", "{\"o\":{\"p\":{\"q\":\"a.c\"}}}"));
	/* lists: each condition item matches some event item; a list against a scalar: any */
	assert_true(matches("{\"l\":[\"a\",\"b\",\"c\"]}", "{\"l\":[\"c\",\"a\"]}"));
	assert_false(matches("{\"l\":[\"a\",\"b\"]}", "{\"l\":[\"d\"]}"));
	assert_false(matches("{\"l\":[\"a\"]}", "{\"l\":[\"a\",\"a\"]}"));
	assert_true(matches("{\"s\":\"dev\"}", "{\"s\":[\"prod\",\"dev\"]}"));
	assert_false(matches("{\"s\":\"qa\"}", "{\"s\":[\"prod\",\"dev\"]}"));
}

static void test_conditions_check(void **state)
{
	json_t *bad = json_loads("{\"a\":{\"b\":\"(unclosed\"}}", 0, NULL),
	       *good = json_loads("{\"a\":[\"x+\"]}", 0, NULL);
	char *huge = malloc(PATTERN_MAX + 2);
	json_t *big;
	struct err e;

	(void)state;
	assert_int_equal(triggers_conditions_check(good, &e), 0);
	assert_true(triggers_conditions_check(bad, &e) < 0);
	assert_non_null(strstr(e.msg, "not a valid regular expression"));
	memset(huge, 'a', PATTERN_MAX + 1);
	huge[PATTERN_MAX + 1] = '\0';
	big = json_pack("{s:s}", "a", huge);
	assert_true(triggers_conditions_check(big, &e) < 0);
	assert_non_null(strstr(e.msg, "longer than"));
	json_decref(big);
	free(huge);
	json_decref(bad);
	json_decref(good);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_conditions),
	    cmocka_unit_test(test_conditions_check),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
