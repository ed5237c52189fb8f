/* Unit tests for auth/ldap_group_match.c: a form's runAs.ldap groups against a user's group
 * DNs, as Concord's FormAccessManager matches them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "auth/ldap_group_match.h"

#define DN "cn=managers,ou=groups,dc=example,dc=org"

static void test_dn_patterns_are_regexes_over_the_whole_dn(void **state)
{
	(void)state;
	assert_true(ldap_group_matches("CN=managers,.*", DN));
	assert_true(ldap_group_matches("CN=Managers,OU=groups,DC=example,DC=org", DN));
	assert_true(ldap_group_matches("cn=(managers|leads),ou=groups,.*", DN));
	assert_false(ldap_group_matches("CN=managers", DN)); /* the whole DN must match */
	assert_false(ldap_group_matches("CN=manager,.*", DN));
	assert_false(ldap_group_matches("CN=managers,(.*", DN)); /* does not compile */
}

static void test_names_compare_the_first_cn(void **state)
{
	(void)state;
	assert_true(ldap_group_matches("managers", DN));
	assert_true(ldap_group_matches("MANAGERS", DN));
	assert_false(ldap_group_matches("manager", DN));
	assert_false(ldap_group_matches("groups", DN));
	assert_false(ldap_group_matches("mana.*", DN)); /* a name is no pattern */
	assert_true(ldap_group_matches("devs", "devs"));
	assert_false(ldap_group_matches("", DN));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_dn_patterns_are_regexes_over_the_whole_dn),
	    cmocka_unit_test(test_names_compare_the_first_cn),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
