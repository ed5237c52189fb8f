/* Unit tests for the policy document (policy/policy.h): validation names where, merging
 * over a parent, numbers, patterns, messages, and the task and entity verdicts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "policy/policy.h"

static json_t *parse(const char *text)
{
	json_error_t je;
	json_t *v = json_loads(text, 0, &je);

	assert_non_null(v);
	return v;
}

static void assert_invalid(const char *rules, const char *where)
{
	json_t *v = parse(rules);
	struct err e = {0};

	assert_int_not_equal(policy_validate(v, &e), 0);
	assert_int_equal(e.code, ERR_INVALID);
	if (!strstr(e.msg, where))
		fail_msg("'%s' not in '%s'", where, e.msg);
	json_decref(v);
}

static void test_validate(void **state)
{
	json_t *ok =
	    parse("{\"queue\":{\"concurrent\":{\"maxPerOrg\":\"10\",\"max\":2},\"processPerOrg\":{\"RUNNING\":1,"
		  "\"msg\":\"m\"},\"processTimeout\":{\"max\":\"PT1H\"}},\"task\":{\"deny\":[{\"taskName\":"
		  "\"a.*\",\"params\":[{\"name\":\"x\",\"values\":[null]}]}]},\"file\":{\"deny\":[{\"maxSize\":"
		  "\"1G\"}]},\"processCfg\":{},\"dependencyVersions\":[],\"kv\":{\"maxEntries\":5,\"msg\":\"m\"}}");
	struct err e = {0};

	(void)state;
	assert_int_equal(policy_validate(ok, &e), 0);
	json_decref(ok);
	assert_invalid("[]", "rules: expected an object");
	assert_invalid("{\"nope\":{}}", "unknown rule 'nope'");
	assert_invalid("{\"queue\":{\"concurrent\":{\"maxPerOrg\":-1}}}", "rules.queue.concurrent.maxPerOrg");
	assert_invalid("{\"task\":{\"block\":[]}}", "rules.task: unknown field 'block'");
	assert_invalid("{\"task\":{\"deny\":[{\"taskName\":\"[\"}]}}", "rules.task.deny[0].taskName");
	assert_invalid("{\"file\":{\"deny\":[{\"maxSize\":\"12X\"}]}}", "rules.file.deny[0].maxSize");
	assert_invalid("{\"jsonStore\":{\"store\":{\"maxNumberPerOrg\":true}}}",
		       "rules.jsonStore.store.maxNumberPerOrg");
	assert_invalid("{\"kv\":{\"maxEntries\":\"many\"}}", "rules.kv.maxEntries");
}

static void test_merge(void **state)
{
	json_t *into = parse("{\"queue\":{\"forkDepth\":{\"max\":1,\"msg\":\"m\"}},\"task\":{\"deny\":[1]}}");
	json_t *over = parse("{\"queue\":{\"forkDepth\":{\"max\":3}},\"task\":{\"deny\":[2]}}");
	json_t *want = parse("{\"queue\":{\"forkDepth\":{\"max\":3,\"msg\":\"m\"}},\"task\":{\"deny\":[2]}}");

	(void)state;
	policy_rules_merge(into, over);
	assert_true(json_equal(into, want));
	json_decref(into);
	json_decref(over);
	json_decref(want);
}

static void test_numbers_patterns_messages(void **state)
{
	json_t *n = json_string("42"), *bad = json_string("4x"), *rule = parse("{\"msg\":\"{0} of {1}!\"}");
	struct err e = {0};

	(void)state;
	assert_int_equal(policy_number(n), 42);
	assert_int_equal(policy_number(bad), -1);
	assert_int_equal(policy_size_bytes(n), 42);
	assert_int_equal(policy_size_bytes(bad), -1);
	{
		json_t *m = json_string("512m"), *g = json_string("2G"), *t = json_string("1t"), *k = json_string("k");
		assert_int_equal(policy_size_bytes(m), 512LL << 20);
		assert_int_equal(policy_size_bytes(g), 2LL << 30);
		assert_int_equal(policy_size_bytes(t), 1LL << 40);
		assert_int_equal(policy_size_bytes(k), -1);
		json_decref(m);
		json_decref(g);
		json_decref(t);
		json_decref(k);
	}
	assert_true(policy_match("thr.*", "throw"));
	assert_false(policy_match("thr", "throw"));
	assert_true(policy_match("(", "("));
	assert_int_equal(policy_refuse(&e, ERR_INVALID, "p", rule, "dflt", "a", "b"), -ERR_INVALID);
	assert_string_equal(e.msg, "a of b! (policy 'p')");
	assert_int_equal(policy_refuse(&e, ERR_INVALID, "p", NULL, "dflt {0}", "x", NULL), -ERR_INVALID);
	assert_string_equal(e.msg, "dflt x (policy 'p')");
	json_decref(n);
	json_decref(bad);
	json_decref(rule);
}

static void test_task_verdicts(void **state)
{
	json_t *rules =
	    parse("{\"task\":{\"allow\":[{\"taskName\":\"http\",\"params\":[{\"name\":\"url\",\"values\":"
		  "[\"https://ok/.*\"]}]}],\"deny\":[{\"taskName\":\"http\"},{\"taskName\":\"datetime\","
		  "\"method\":\"format\",\"params\":[{\"index\":1,\"values\":[\"HH\"]}]}],\"warn\":[{\"name\":"
		  "\"sleep\"}]}}");
	json_t *ok_in = parse("{\"url\":\"https://ok/x\"}"), *bad_in = parse("{\"url\":\"https://other\"}");
	json_t *args = parse("[\"now\",\"HH\"]"), *args2 = parse("[\"now\",\"yyyy\"]");
	const json_t *r;

	(void)state;
	assert_int_equal(policy_task_check(rules, "http", NULL, ok_in, NULL, &r), POLICY_PASS);
	assert_int_equal(policy_task_check(rules, "http", NULL, bad_in, NULL, &r), POLICY_DENY);
	assert_int_equal(policy_task_check(rules, "datetime", "format", NULL, args, &r), POLICY_DENY);
	assert_int_equal(policy_task_check(rules, "datetime", "format", NULL, args2, &r), POLICY_PASS);
	assert_int_equal(policy_task_check(rules, "sleep", NULL, NULL, NULL, &r), POLICY_WARN);
	assert_int_equal(policy_task_check(NULL, "sleep", NULL, NULL, NULL, &r), POLICY_PASS);
	json_decref(rules);
	json_decref(ok_in);
	json_decref(bad_in);
	json_decref(args);
	json_decref(args2);
}

static void test_entity_verdicts(void **state)
{
	json_t *rules =
	    parse("{\"entity\":{\"deny\":[{\"entity\":\".*\",\"action\":\"create\",\"conditions\":{\"owner\":"
		  "{\"groups\":[\"cn=bad,.*\"]},\"entity\":{\"params\":{\"unknownRepo\":[true]}}}}]}}");
	json_t *hit = parse("{\"owner\":{\"groups\":[\"cn=x\",\"cn=bad,dc=example\"]},\"entity\":{\"params\":{"
			    "\"unknownRepo\":true}}}");
	json_t *miss = parse("{\"owner\":{\"groups\":[\"cn=x\"]},\"entity\":{\"params\":{\"unknownRepo\":true}}}");
	const json_t *r;

	(void)state;
	assert_int_equal(policy_entity_check(rules, "trigger", "create", hit, &r), POLICY_DENY);
	assert_int_equal(policy_entity_check(rules, "trigger", "update", hit, &r), POLICY_PASS);
	assert_int_equal(policy_entity_check(rules, "trigger", "create", miss, &r), POLICY_PASS);
	json_decref(rules);
	json_decref(hit);
	json_decref(miss);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_validate),
	    cmocka_unit_test(test_merge),
	    cmocka_unit_test(test_numbers_patterns_messages),
	    cmocka_unit_test(test_task_verdicts),
	    cmocka_unit_test(test_entity_verdicts),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
