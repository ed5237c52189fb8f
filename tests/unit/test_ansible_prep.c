/* Unit tests for flow/tasks/ansible_prep.c: Concord's inline inventory becomes Ansible's
 * YAML inventory (hosts with their _meta.hostvars, group vars, children, a temporary
 * folder inside the working directory for local connections), and ansible.cfg is Accord's
 * defaults with the flow's config over them, refusing what would break the file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "flow/tasks/ansible_prep.h"

static json_t *inventory(const char *concord)
{
	struct err e = {0};
	json_t *in = json_loads(concord, 0, NULL);
	char *text = ansible_inventory_text(in, "/w/.ansible_run", &e);
	json_t *out = text ? json_loads(text, 0, NULL) : NULL;
	json_decref(in);
	free(text);
	return out;
}

static void test_inline_inventory(void **state)
{
	json_t *inv = inventory("{\"web\": {\"hosts\": [\"w1\", \"w2\"], \"vars\": {\"ansible_connection\": \"local\"},"
				"\"children\": [\"edge\"]},"
				" \"edge\": [\"e1\"],"
				" \"_meta\": {\"hostvars\": {\"w2\": {\"color\": \"blue\"}}}}");
	char *text;
	(void)state;
	assert_non_null(inv);
	text = json_dumps(inv, JSON_COMPACT | JSON_SORT_KEYS);
	assert_string_equal(text,
			    "{\"edge\":{\"hosts\":{\"e1\":{}}},"
			    "\"web\":{\"children\":{\"edge\":{}},\"hosts\":{\"w1\":{},\"w2\":{\"color\":\"blue\"}},"
			    "\"vars\":{\"ansible_connection\":\"local\","
			    "\"ansible_remote_tmp\":\"/w/.ansible_run/remote_tmp\"}}}");
	free(text);
	json_decref(inv);
}

static void test_bad_inventories(void **state)
{
	struct err e = {0};
	json_t *v = json_loads("{\"web\": {\"hosts\": [{\"x\": 1}]}}", 0, NULL);
	(void)state;
	assert_null(ansible_inventory_text(v, "/w", &e));
	assert_string_equal(e.msg, "ansible: inventory group 'web': hosts must be names");
	json_decref(v);
	v = json_loads("{\"web\": 5}", 0, NULL);
	assert_null(ansible_inventory_text(v, "/w", &e));
	assert_string_equal(e.msg, "ansible: inventory group 'web' must be a map (hosts, vars, children)");
	json_decref(v);
	v = json_loads("[1]", 0, NULL);
	assert_null(ansible_inventory_text(v, "/w", &e));
	assert_int_equal(e.code, ERR_INVALID);
	json_decref(v);
}

static void test_cfg_defaults_and_overrides(void **state)
{
	struct err e = {0};
	json_t *cfg = json_loads("{\"defaults\": {\"forks\": 50, \"timeout\": 30}, \"privilege_escalation\":"
				 " {\"become\": true}}",
				 0, NULL);
	size_t len = 0;
	char *text = ansible_cfg_text("/w/r", cfg, &len, &e);
	(void)state;
	assert_non_null(text);
	assert_int_equal(strlen(text), len);
	assert_non_null(strstr(text, "[defaults]\nhost_key_checking = false\nretry_files_enabled = true\n"));
	assert_non_null(strstr(text, "timeout = 30\n"));
	assert_null(strstr(text, "timeout = 120"));
	assert_non_null(strstr(text, "local_tmp = /w/r/tmp\n"));
	assert_non_null(strstr(text, "forks = 50\n"));
	assert_non_null(strstr(text, "[ssh_connection]\npipelining = true\ncontrol_path_dir = /w/r/cp\n"));
	assert_non_null(strstr(text, "[privilege_escalation]\nbecome = true\n"));
	free(text);
	json_decref(cfg);
}

static void test_cfg_refuses_what_breaks_the_file(void **state)
{
	static const char *const bad[] = {
	    "[1]",
	    "{\"defaults\": 1}",
	    "{\"a]\\n[b\": {}}",
	    "{\"defaults\": {\"x=y\": 1}}",
	    "{\"defaults\": {\"x\": \"1\\n[evil]\"}}",
	};
	(void)state;
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		struct err e = {0};
		json_t *cfg = json_loads(bad[i], 0, NULL);
		size_t len;
		assert_null(ansible_cfg_text("/w/r", cfg, &len, &e));
		assert_int_equal(e.code, ERR_INVALID);
		json_decref(cfg);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_inline_inventory),
	    cmocka_unit_test(test_bad_inventories),
	    cmocka_unit_test(test_cfg_defaults_and_overrides),
	    cmocka_unit_test(test_cfg_refuses_what_breaks_the_file),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
