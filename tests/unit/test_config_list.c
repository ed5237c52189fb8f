/* Unit tests for CONFIG_LIST options (cli/config.h): a repeated flag adds a value, the
 * first flag replaces the environment's comma-separated list. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "cli/config.h"

static char *repos;
static const struct config_opt opts[] = {
    {"maven-repository", CONFIG_LIST, NULL, 0, 0, &repos, "test"},
};

static void parse(char **argv, int argc, const char *want)
{
	struct err e = {0};
	bool help;

	assert_int_equal(config_parse(opts, 1, argc, argv, &help, &e), 0);
	if (want)
		assert_string_equal(repos, want);
	else
		assert_null(repos);
	config_free(opts, 1);
}

static void test_list(void **state)
{
	char *none[] = {"serve"};
	char *two[] = {"serve", "--maven-repository", "http://a", "--maven-repository=http://b"};
	char *one[] = {"serve", "--maven-repository", "http://c"};

	(void)state;
	unsetenv("ACCORD_MAVEN_REPOSITORY");
	parse(none, 1, NULL);
	parse(two, 4, "http://a,http://b");
	setenv("ACCORD_MAVEN_REPOSITORY", "http://x,http://y", 1);
	parse(none, 1, "http://x,http://y");
	parse(one, 3, "http://c");
	parse(two, 4, "http://a,http://b");
	unsetenv("ACCORD_MAVEN_REPOSITORY");
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_list)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
