/* Unit tests for Maven coordinates of `mvn` imports (repo/mvn.h): the URL forms Concord
 * accepts, the repository layout path, and names that must never become paths. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "repo/mvn.h"

static void path_of(const char *url, const char *want)
{
	struct mvn_coords c;
	struct err e = {0};
	char path[1024];

	assert_int_equal(repo_mvn_parse(url, &c, &e), 0);
	assert_int_equal(repo_mvn_path(&c, path, sizeof path, &e), 0);
	assert_string_equal(path, want);
}

static void test_forms(void **state)
{
	(void)state;
	path_of("mvn://com.walmartlabs.concord:flows:1.2.3", "com/walmartlabs/concord/flows/1.2.3/flows-1.2.3.jar");
	path_of("mvn://g:a:1.0@zip", "g/a/1.0/a-1.0.zip");
	path_of("mvn://org.acme:tools:2.1:flows", "org/acme/tools/2.1/tools-2.1-flows.jar");
	path_of("mvn://org.acme:tools:2.1-SNAPSHOT:flows@zip", "org/acme/tools/2.1-SNAPSHOT/tools-2.1-SNAPSHOT-flows.zip");
}

static void refused(const char *url, const char *fragment)
{
	struct mvn_coords c;
	struct err e = {0};

	assert_int_not_equal(repo_mvn_parse(url, &c, &e), 0);
	assert_int_equal(e.code, ERR_INVALID);
	if (!strstr(e.msg, fragment))
		fail_msg("%s: '%s' lacks '%s'", url, e.msg, fragment);
}

static void test_refused(void **state)
{
	(void)state;
	refused("https://repo/x.jar", "must start with mvn://");
	refused("mvn://g:a", "expected mvn://groupId");
	refused("mvn://g:a:1:c:extra", "expected mvn://groupId");
	refused("mvn://g::1", "expected mvn://groupId");
	refused("mvn://g:a:1:", "expected mvn://groupId");
	refused("mvn://g:../a:1", "invalid Maven URL");
	refused("mvn://g:..:1", "invalid Maven URL");
	refused("mvn://g/x:a:1", "invalid Maven URL");
	refused("mvn://g:a:1@", "invalid Maven URL");
	refused("mvn://g:a:1@z/ip", "invalid Maven URL");
	refused("mvn://g:a:1@zip@jar", "invalid Maven URL");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_forms),
	    cmocka_unit_test(test_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
