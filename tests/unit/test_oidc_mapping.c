/* Unit tests for the OIDC realm's role mapping rule (auth/oidc_mapping.c): Concord's
 * Matcher on claims — a whole-value match ignoring case, any string of an array claim, an
 * absent claim taken as "" — and the two forms of --oidc-role-mapping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "auth/oidc_mapping.h"

static unsigned roles_of(const char *claims_text)
{
	json_t *claims = json_loads(claims_text, 0, NULL);
	unsigned r;

	assert_non_null(claims);
	r = oidc_mapping_builtin_roles(ROLE_SYSTEM_WRITER, claims);
	json_decref(claims);
	return r;
}

static void test_json_form(void **state)
{
	struct err e;
	(void)state;

	assert_int_equal(oidc_mapping_init(NULL,
					   "{\"concordAdmin\": {\"source\": [\"groups.adm.*\", \"email..*@boss\\\\.org\"]},"
					   " \"concordSystemWriter\": {\"source\": [\"groups.ci\"]}}",
					   "groups", &e),
			 0);
	assert_int_equal(roles_of("{\"groups\": [\"x\", \"ADMINS\"]}"), ROLE_ADMIN);
	assert_int_equal(roles_of("{\"groups\": \"ci\", \"email\": \"a@boss.org\"}"), ROLE_ADMIN | ROLE_SYSTEM_WRITER);
	/* The whole value: "superadmins" is no "adm.*", "cis" no "ci". */
	assert_int_equal(roles_of("{\"groups\": [\"superadmins\", \"cis\"]}"), 0);
	assert_int_equal(roles_of("{}"), 0);
	oidc_mapping_cleanup();
}

static void test_short_form_and_absent_claims(void **state)
{
	struct err e;
	(void)state;

	assert_int_equal(oidc_mapping_init(NULL, "concordSystemReader=(a|b)uditors,concordAdmin=.*", "roles", &e), 0);
	/* An absent claim is "", which ".*" matches, as in Concord. */
	assert_int_equal(roles_of("{}"), ROLE_ADMIN | ROLE_SYSTEM_WRITER);
	assert_int_equal(roles_of("{\"roles\": [\"Buditors\"]}"),
			 ROLE_ADMIN | ROLE_SYSTEM_READER | ROLE_SYSTEM_WRITER);
	oidc_mapping_cleanup();
	assert_int_equal(oidc_mapping_init("{\"nope\": {\"source\": [\"g.x\"]}}", NULL, "groups", &e), -ERR_INVALID);
	assert_non_null(strstr(e.msg, "--oidc-team-mapping"));
	assert_int_equal(oidc_mapping_init(NULL, "concordAdmin=[", "groups", &e), -ERR_INVALID);
	assert_non_null(strstr(e.msg, "regular expression"));
	/* Nothing is kept of a refused setting. */
	assert_int_equal(roles_of("{\"groups\": [\"[\"]}"), ROLE_SYSTEM_WRITER);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_json_form),
					   cmocka_unit_test(test_short_form_and_absent_claims)};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
