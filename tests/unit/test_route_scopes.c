/* Unit tests for the scope table of the routes (api/route_scopes.c) and the scope rules
 * (auth/scope.c): every route of every table has an entry; scopes parse, narrow and cover
 * as docs/security.md "Scoped API keys" says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "api/route_scopes.h"
#include "api/routes.h"
#include "auth/ratelimit.h"

static int unscoped(void *ctx, const struct api_route *r)
{
	size_t *n = ctx;

	if (route_scope_of(r->method, r->pattern).kind == ROUTE_SCOPE_NONE) {
		print_error("%s %s has no entry in the scope table (api/route_scopes.c)\n", r->method, r->pattern);
		(*n)++;
	}
	return 0;
}

/* Every route needs a scope or is open to every key: add it to the table when this fails. */
static void test_every_route_has_a_scope(void **state)
{
	size_t n = 0;

	(void)state;
	assert_int_equal(api_routes_each(unscoped, &n), 0);
	assert_int_equal(n, 0);
}

static void assert_needs(const char *method, const char *pattern, enum scope_resource r, enum scope_action a)
{
	struct route_scope rs = route_scope_of(method, pattern);

	assert_int_equal(rs.kind, ROUTE_SCOPE_NEEDS);
	assert_int_equal(rs.need.resource, r);
	assert_int_equal(rs.need.action, a);
}

static void test_table_entries(void **state)
{
	(void)state;
	assert_needs("POST", "/api/v1/process", SCOPE_PROCESS, SCOPE_START);
	assert_needs("GET", "/api/v1/process/{id}", SCOPE_PROCESS, SCOPE_READ);
	assert_needs("DELETE", "/api/v1/process/{id}", SCOPE_PROCESS, SCOPE_WRITE);
	assert_needs("GET", "/api/v1/process/{id}/ansible/{playbookId}/plays", SCOPE_PROCESS, SCOPE_READ);
	assert_needs("POST", "/api/v1/org/{org}/secret/{name}/data", SCOPE_SECRET, SCOPE_READ);
	assert_needs("POST", "/api/v1/org/{org}/secret", SCOPE_SECRET, SCOPE_WRITE);
	assert_needs("POST", "/api/v1/org/{org}/inventory/{inv}/query/{q}/exec", SCOPE_INVENTORY, SCOPE_READ);
	assert_needs("GET", "/api/v1/org/{org}/project/{project}/repo/{repo}/start/{entryPoint}", SCOPE_PROCESS,
		     SCOPE_START);
	assert_int_equal(route_scope_of("GET", "/api/service/console/whoami").kind, ROUTE_SCOPE_OPEN);
	assert_int_equal(route_scope_of("GET", "/api/v1/nothing").kind, ROUTE_SCOPE_NONE);
}

static void test_parse(void **state)
{
	struct scope s;
	char org[SCOPE_TEXT_MAX], project[SCOPE_TEXT_MAX];
	struct err e;

	(void)state;
	assert_int_equal(scope_parse("process:start@Default/p", &s, org, project, sizeof org, &e), 0);
	assert_int_equal(s.resource, SCOPE_PROCESS);
	assert_int_equal(s.action, SCOPE_START);
	assert_string_equal(org, "Default");
	assert_string_equal(project, "p");
	assert_int_equal(scope_parse("inventory:*", &s, org, project, sizeof org, &e), 0);
	assert_int_equal(s.action, SCOPE_ANY);
	assert_string_equal(org, "");
	assert_int_not_equal(scope_parse("secret:start", &s, org, project, sizeof org, &e), 0);
	assert_int_not_equal(scope_parse("secret:read@Default/p", &s, org, project, sizeof org, &e), 0);
	assert_int_not_equal(scope_parse("audit:read@Default", &s, org, project, sizeof org, &e), 0);
	assert_int_not_equal(scope_parse("bogus:read", &s, org, project, sizeof org, &e), 0);
	assert_int_not_equal(scope_parse("process", &s, org, project, sizeof org, &e), 0);
	assert_int_not_equal(scope_parse("process:read@", &s, org, project, sizeof org, &e), 0);
}

static void test_reach_and_cover(void **state)
{
	struct scope_set *set = calloc(1, sizeof *set);
	struct scope_need need = {true, SCOPE_PROCESS, SCOPE_READ};
	struct scope any = {.resource = SCOPE_PROCESS, .action = SCOPE_ANY};
	char *text;
	struct err e;

	(void)state;
	set->n = 1;
	set->s[0] = (struct scope){.resource = SCOPE_PROCESS,
				   .action = SCOPE_READ,
				   .org_id = "o1",
				   .project_id = "p1",
				   .text = "process:read@O/P"};
	assert_true(scope_reaches(set, &need, SCOPE_AT_PROJECT, "o1", "p1", "x", &e));
	assert_false(scope_reaches(set, &need, SCOPE_AT_PROJECT, "o1", "p2", "x", &e));
	assert_int_equal(e.code, ERR_FORBIDDEN);
	assert_false(scope_reaches(set, &need, SCOPE_AT_ORG, "o1", NULL, "x", &e));
	assert_true(scope_reaches(set, &need, SCOPE_AT_ORG_VIEW, "o1", NULL, "x", &e));
	assert_true(scope_narrowed(set, &need, true));
	assert_true(scope_covers(&any, &set->s[0]));
	assert_false(scope_covers(&set->s[0], &any));
	text = scope_set_dump(set);
	assert_non_null(text);
	memset(set, 0, sizeof *set);
	assert_int_equal(scope_set_load(text, set, &e), 0);
	assert_int_equal(set->n, 1);
	assert_string_equal(set->s[0].project_id, "p1");
	free(text);
	free(set);
}

static void test_rate(void **state)
{
	int64_t n, w, retry = 0;
	struct err e;

	(void)state;
	assert_int_equal(ratelimit_parse("3/min", &n, &w, &e), 0);
	assert_int_equal(n, 3);
	assert_int_equal(w, 60000);
	assert_int_not_equal(ratelimit_parse("3/h", &n, &w, &e), 0);
	assert_int_not_equal(ratelimit_parse("0/s", &n, &w, &e), 0);
	for (int i = 0; i < 3; i++)
		assert_int_equal(ratelimit_take("k1", 3, 60000, 120000 + i, &retry, &e), 0);
	assert_int_not_equal(ratelimit_take("k1", 3, 60000, 150000, &retry, &e), 0);
	assert_int_equal(e.code, ERR_TOO_MANY);
	assert_int_equal(retry, 30);
	assert_int_equal(ratelimit_take("k2", 3, 60000, 150000, &retry, &e), 0);
	assert_int_equal(ratelimit_take("k1", 3, 60000, 180000, &retry, &e), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_every_route_has_a_scope),
	    cmocka_unit_test(test_table_entries),
	    cmocka_unit_test(test_parse),
	    cmocka_unit_test(test_reach_and_cover),
	    cmocka_unit_test(test_rate),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
