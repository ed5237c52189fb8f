/* Unit tests for base/username.c: case folding across scripts, the conservative NFC check,
 * invalid UTF-8. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/username.h"

static void test_fold(void **state)
{
	char out[64];
	(void)state;

	username_fold("ALICE", out, sizeof out);
	assert_string_equal(out, "alice");
	username_fold("ÅLICE-Élodie", out, sizeof out);
	assert_string_equal(out, "ålice-élodie");
	username_fold("АЛИСА Ёж", out, sizeof out);
	assert_string_equal(out, "алиса ёж");
	username_fold("ΣΟΦΊΑ", out, sizeof out);
	assert_string_equal(out, "σοφία");
	username_fold("ŁÓDŹ Ÿ", out, sizeof out);
	assert_string_equal(out, "łódź ÿ");
	username_fold("ＡＢ", out, sizeof out);
	assert_string_equal(out, "ａｂ");
	username_fold("ab\xff", out, sizeof out); /* invalid bytes are kept */
	assert_string_equal(out, "ab\xff");
	username_fold("ABCDEF", out, 4); /* truncated, still terminated */
	assert_string_equal(out, "abc");
}

static void test_eq(void **state)
{
	(void)state;
	assert_true(username_eq("Ålice", "åLICE"));
	assert_true(username_eq("ΟΔΥΣΣΕΥΣ", "οδυσσευς"));
	assert_false(username_eq("alice", "аlice")); /* Cyrillic а: another name */
	assert_false(username_eq("alice", "alicf"));
	assert_true(username_has_non_ascii("ålice"));
	assert_false(username_has_non_ascii("alice"));
}

static void test_nfc(void **state)
{
	struct err e;
	(void)state;

	assert_int_equal(username_check_nfc("ålice", &e), 0);
	assert_int_equal(username_check_nfc("alice@example.com", &e), 0);
	assert_int_equal(username_check_nfc("a\xcc\x8alice", &e), -ERR_INVALID); /* a + U+030A */
	assert_non_null(strstr(e.msg, "U+030A"));
	assert_int_equal(username_check_nfc("\xe2\x84\xab", &e), -ERR_INVALID); /* U+212B */
	assert_int_equal(username_check_nfc("\xef\xa4\x80", &e), -ERR_INVALID); /* U+F900 */
	assert_int_equal(username_check_nfc("\xc0\xaf", &e), -ERR_INVALID);	/* overlong */
	assert_non_null(strstr(e.msg, "UTF-8"));
	assert_int_equal(username_check_nfc("\xed\xa0\x80", &e), -ERR_INVALID); /* surrogate */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fold),
	    cmocka_unit_test(test_eq),
	    cmocka_unit_test(test_nfc),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
