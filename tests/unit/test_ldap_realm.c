/* Unit tests for auth/ldap_realm.c: RFC 4515 escaping of filter values and the filters made
 * from them (the defence against filter injection through usernames and DNs). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/auth/ldap_realm.c"

static void test_escape(void **state)
{
	char out[64];
	(void)state;

	assert_int_equal(ldap_filter_escape("alice", out, sizeof out), 0);
	assert_string_equal(out, "alice");
	assert_int_equal(ldap_filter_escape("*)(cn=*", out, sizeof out), 0);
	assert_string_equal(out, "\\2a\\29\\28cn=\\2a");
	assert_int_equal(ldap_filter_escape("a\\2a", out, sizeof out), 0);
	assert_string_equal(out, "a\\5c2a");
	assert_int_equal(ldap_filter_escape("\x01\x7f\xc3\xa9", out, sizeof out), 0);
	assert_string_equal(out, "\\01\\7f\\c3\\a9");
	assert_int_equal(ldap_filter_escape("", out, sizeof out), 0);
	assert_string_equal(out, "");
}

static void test_escape_fits(void **state)
{
	char out[4];
	(void)state;

	assert_int_equal(ldap_filter_escape("abc", out, sizeof out), 0);
	assert_int_equal(ldap_filter_escape("abcd", out, sizeof out), -1);
	assert_int_equal(ldap_filter_escape("a*", out, sizeof out), -1);
	assert_int_equal(ldap_filter_escape("*", out, 3), -1);
	assert_int_equal(ldap_filter_escape("*", out, sizeof out), 0); /* \2a and its NUL */
	assert_string_equal(out, "\\2a");
}

static void test_filter_of(void **state)
{
	char out[128];
	(void)state;

	assert_int_equal(filter_of("(cn={0})", "al*ce", out, sizeof out), 0);
	assert_string_equal(out, "(cn=al\\2ace)");
	assert_int_equal(filter_of("(|(uid={0})(mail={0}))", "a(b)", out, sizeof out), 0);
	assert_string_equal(out, "(|(uid=a\\28b\\29)(mail=a\\28b\\29))");
	assert_int_equal(filter_of("(member={0})", "cn=x,dc=y", out, sizeof out), 0);
	assert_string_equal(out, "(member=cn=x,dc=y)");
	assert_int_equal(filter_of("(cn={0})", "0123456789", out, 12), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_escape),
	    cmocka_unit_test(test_escape_fits),
	    cmocka_unit_test(test_filter_of),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
