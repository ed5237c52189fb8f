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

#include "base/limits.h"
#include "base/path.h"
#include "base/str.h"
#include "store/store.h"
#include "store/repositories.h"
#include "triggers/conditions.c"
#include "triggers/parse.c"

#include "unit_store.h"

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

/* ---- parse ---- */

static const struct repository repo = {.id = "11111111-1111-4111-8111-111111111111",
				       .project_id = "22222222-2222-4222-8222-222222222222"};

#define FLOWS "flows:\n  main:\n    - log: hi\n  other:\n    - log: ho\n"

/* Parses text as concord.yml: the rows, or NULL with the error in e. */
static struct trigger *parse(const char *text, size_t *n, struct err *e)
{
	struct model *m = model_load_buffer("concord.yml", text, strlen(text), e);
	struct trigger *v = NULL;

	if (!m)
		fail_msg("model: %s", e->msg);
	if (triggers_parse(m, &repo, 1700000000000LL, &v, n, e))
		v = NULL;
	model_free(m);
	return v;
}

static void test_parse_kinds(void **state)
{
	struct err e;
	size_t n;
	struct trigger *v = parse(FLOWS "triggers:\n"
					"  - cron:\n      spec: \"*/5 * * * *\"\n      timezone: Europe/Berlin\n"
					"      entryPoint: main\n      arguments: {a: 1}\n      exclusive: grp\n"
					"  - manual:\n      name: Run\n      entryPoint: other\n"
					"  - deploy:\n      version: 2\n      entryPoint: main\n"
					"      conditions: {branch: \"rel-.*\", n: 5}\n      activeProfiles: [p1]\n"
					"  - github:\n      whatever: {x: y}\n",
				  &n, &e);
	char fp[65];

	(void)state;
	assert_non_null(v);
	assert_int_equal(n, 4);
	assert_string_equal(v[0].event_source, "cron");
	assert_string_equal(v[0].entry_point, "main");
	assert_string_equal(v[0].project_id, repo.project_id);
	assert_string_equal(v[0].repo_id, repo.id);
	assert_int_equal(json_integer_value(json_object_get(v[0].arguments, "a")), 1);
	assert_string_equal(json_string_value(json_object_get(v[0].conditions, "spec")), "*/5 * * * *");
	/* 2023-11-14T22:13:20Z → the next multiple of five minutes */
	assert_int_equal(v[0].next_fire_at, 1700000100000LL);
	assert_string_equal(v[1].event_source, "manual");
	assert_int_equal(v[1].next_fire_at, 0);
	assert_string_equal(v[2].event_source, "deploy");
	assert_string_equal(json_string_value(json_object_get(v[2].conditions, "branch")), "rel-.*");
	assert_string_equal(json_string_value(json_array_get(v[2].active_profiles, 0)), "p1");
	assert_string_equal(v[3].event_source, "github");
	assert_int_equal(strlen(v[0].fingerprint), 64);
	assert_string_not_equal(v[0].fingerprint, v[2].fingerprint);
	/* the fingerprint depends on the definition only, not on key order */
	memcpy(fp, v[2].fingerprint, sizeof fp);
	store_trigger_free_list(v, n);
	v = parse(FLOWS
		  "triggers:\n  - deploy:\n      activeProfiles: [p1]\n      conditions: {n: 5, branch: \"rel-.*\"}\n"
		  "      entryPoint: main\n      version: 2\n",
		  &n, &e);
	assert_non_null(v);
	assert_string_equal(v[0].fingerprint, fp);
	store_trigger_free_list(v, n);
}

static void expect_error(const char *text, const char *where, const char *what)
{
	struct err e;
	size_t n;
	struct trigger *v = parse(text, &n, &e);

	if (v)
		fail_msg("parsed: %s", text);
	assert_int_equal(e.code, ERR_INVALID);
	if (!strstr(e.msg, where) || !strstr(e.msg, what))
		fail_msg("'%s' lacks '%s' or '%s'", e.msg, where, what);
}

static void test_parse_errors(void **state)
{
	(void)state;
	expect_error(FLOWS "triggers:\n  - cron:\n      spec: \"61 * * * *\"\n      entryPoint: main\n",
		     "triggers: concord.yml:8:13: ", "minute");
	expect_error(FLOWS "triggers:\n  - cron:\n      spec: \"* * * * *\"\n      entryPoint: nope\n",
		     "concord.yml:9:19: ", "entryPoint 'nope' is not a flow");
	expect_error(FLOWS "triggers:\n  - cron:\n      entryPoint: main\n", "concord.yml:7:5: ", "'spec' is required");
	expect_error(FLOWS "triggers:\n  - cron:\n      spec: \"* * * * *\"\n      timezone: Mars/Olympus\n"
			   "      entryPoint: main\n",
		     "concord.yml:9:17: ", "Mars/Olympus");
	expect_error(FLOWS "triggers:\n  - ev:\n      version: 1\n      entryPoint: main\n",
		     "concord.yml:8:16: ", "version '1' is not supported");
	expect_error(FLOWS "triggers:\n  - ev:\n      entryPoint: main\n      conditions: {a: \"(x\"}\n",
		     "concord.yml:9:19: ", "not a valid regular expression");
	expect_error(FLOWS "triggers:\n  - ev:\n      entryPoint: main\n      bogus: 1\n",
		     "concord.yml:9:7: ", "unknown key 'bogus'");
	expect_error(FLOWS "triggers:\n  - manual: {}\n", "concord.yml:7:5: ", "'entryPoint' is required");
	expect_error(FLOWS "triggers:\n  - a: {entryPoint: main}\n    b: {entryPoint: main}\n",
		     "concord.yml:7:5: ", "one key");
	expect_error(FLOWS "triggers:\n  - \"bad/source\": {entryPoint: main}\n",
		     "concord.yml:7:5: ", "not a valid trigger kind");
	expect_error(FLOWS "triggers:\n  - ev:\n      entryPoint: main\n      exclusive: {mode: wait}\n",
		     "concord.yml:9:18: ", "'exclusive.group' is required");
}

static void test_cron_next_in_a_zone(void **state)
{
	json_t *utc = json_pack("{s:s}", "spec", "0 * * * *");
	json_t *ktm = json_pack("{s:s, s:s}", "spec", "0 * * * *", "timezone", "Asia/Kathmandu");
	int64_t next;
	struct err e;

	(void)state;
	/* 2023-11-14T22:13:20Z: the next full hour in UTC is 23:00; in Kathmandu (+05:45) the next
	 * local full hour is 04:00 local = 22:15 UTC. */
	assert_int_equal(triggers_cron_next(utc, 1700000000000LL, &next, &e), 0);
	assert_int_equal(next, 1700002800000LL);
	assert_int_equal(triggers_cron_next(ktm, 1700000000000LL, &next, &e), 0);
	assert_int_equal(next, 1700000100000LL);
	json_decref(utc);
	json_decref(ktm);
}

/* ---- store ---- */

static void store_rows(struct store *st, struct store_conn **out)
{
	struct err e;
	struct store_conn *c = store_conn(st, &e);

	assert_non_null(c);
	if (store_exec(
		c,
		"INSERT INTO orgs (id, name, created_at) VALUES ('33333333-3333-4333-8333-333333333333', 'o', 0);"
		"INSERT INTO projects (id, org_id, name, created_at) VALUES ('22222222-2222-4222-8222-222222222222',"
		" '33333333-3333-4333-8333-333333333333', 'p', 0);"
		"INSERT INTO repositories (id, project_id, name, url, created_at) VALUES"
		" ('11111111-1111-4111-8111-111111111111', '22222222-2222-4222-8222-222222222222', 'r', 'file:///x', "
		"0)",
		&e))
		fail_msg("%s", e.msg);
	*out = c;
}

static void test_store_replace_and_claim(void **state)
{
	char dir[] = "/tmp/accord-trig-XXXXXX", url[700];
	struct store *st;
	struct store_conn *c;
	struct trigger *v, *got;
	size_t n, m;
	struct err e;
	int64_t at;

	(void)state;
	assert_non_null(mkdtemp(dir));
	assert_int_equal(unit_store_url(dir, "unit_triggers", url, sizeof url), 0);
	assert_non_null(st = store_open(url, &e));
	store_rows(st, &c);
	v = parse(FLOWS "triggers:\n  - cron: {spec: \"* * * * *\", entryPoint: main}\n"
			"  - ev: {entryPoint: main}\n",
		  &n, &e);
	assert_non_null(v);
	assert_int_equal(store_triggers_replace(c, repo.id, v, n, &e), 0);
	assert_int_equal(store_triggers_next_fire(c, &at, &e), 0);
	assert_int_equal(at, 1700000040000LL);
	/* claim a minute once: the second claim of the same minute loses */
	assert_int_equal(store_trigger_claim_fire(c, v[0].id, 1700000040000LL, 1700000100000LL, &e), 1);
	assert_int_equal(store_trigger_claim_fire(c, v[0].id, 1700000040000LL, 1700000100000LL, &e), 0);
	assert_int_equal(store_triggers_due(c, 1700000060000LL, &got, &m, &e), 0);
	assert_int_equal(m, 0);
	assert_int_equal(store_triggers_due(c, 1700000100000LL, &got, &m, &e), 0);
	assert_int_equal(m, 1);
	assert_int_equal(got[0].last_fire_at, 1700000040000LL);
	store_trigger_free_list(got, m);
	store_trigger_free_list(v, n);
	/* the same definition again: new ids, the fire time carried over, so the minute stays claimed */
	v = parse(FLOWS "triggers:\n  - cron: {spec: \"* * * * *\", entryPoint: main}\n", &n, &e);
	assert_int_equal(store_triggers_replace(c, repo.id, v, n, &e), 0);
	assert_int_equal(store_trigger_claim_fire(c, v[0].id, 1700000040000LL, 1700000100000LL, &e), 0);
	assert_int_equal(store_triggers_of_source(c, "ev", &got, &m, &e), 0);
	assert_int_equal(m, 0);
	assert_int_equal(store_triggers_of_repo(c, repo.id, &got, &m, &e), 0);
	assert_int_equal(m, 1);
	assert_int_equal(got[0].last_fire_at, 1700000040000LL);
	store_trigger_free_list(got, m);
	store_trigger_free_list(v, n);
	/* a refresh while a minute is due but not yet claimed (by any node) keeps that minute:
	 * the new rows' next minute, computed from a later "now", does not skip it */
	assert_int_equal(store_exec(c, "UPDATE triggers SET next_fire_at = 1700000100000", &e), 0);
	v = parse(FLOWS "triggers:\n  - cron: {spec: \"* * * * *\", entryPoint: main}\n", &n, &e);
	v[0].next_fire_at = 1700000160000LL;
	assert_int_equal(store_triggers_replace(c, repo.id, v, n, &e), 0);
	assert_int_equal(store_triggers_due(c, 1700000100500LL, &got, &m, &e), 0);
	assert_int_equal(m, 1);
	assert_int_equal(got[0].next_fire_at, 1700000100000LL);
	store_trigger_free_list(got, m);
	assert_int_equal(store_trigger_claim_fire(c, v[0].id, 1700000100000LL, 1700000160000LL, &e), 1);
	/* triggers of a repository with triggersDisabled are not listed, not due */
	assert_int_equal(store_exec(c, "UPDATE repositories SET triggers_disabled = 1", &e), 0);
	assert_int_equal(store_triggers_of_repo(c, NULL, &got, &m, &e), 0);
	assert_int_equal(m, 0);
	assert_int_equal(store_triggers_next_fire(c, &at, &e), 0);
	assert_int_equal(at, 0);
	store_trigger_free_list(v, n);
	store_close(st);
	assert_int_equal(path_remove_tree(dir, &e), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_conditions),		cmocka_unit_test(test_conditions_check),
	    cmocka_unit_test(test_parse_kinds),		cmocka_unit_test(test_parse_errors),
	    cmocka_unit_test(test_cron_next_in_a_zone), cmocka_unit_test(test_store_replace_and_claim),
	};
	limits_defaults();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
