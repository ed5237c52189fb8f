/* Unit tests for the runner's side of the script protocol (flow/script.c): messages split
 * across reads and several in one read come out whole and in order, a line that is not a
 * JSON object or a closed socket is an error (the helper is then killed), and what the
 * runner sends is one compact line per message. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <sys/socket.h>
#include <unistd.h>

#include "flow/script.c"

struct pair {
	int runner, helper;
	struct script_run r;
};

static int setup(void **state)
{
	static struct pair p;
	int sv[2];
	assert_int_equal(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
	p = (struct pair){.runner = sv[0], .helper = sv[1]};
	p.r.fd = sv[0];
	buf_init(&p.r.in, 1024);
	*state = &p;
	return 0;
}

static int teardown(void **state)
{
	struct pair *p = *state;
	buf_cleanup(&p->r.in);
	close(p->runner);
	if (p->helper >= 0)
		close(p->helper);
	return 0;
}

static void put(struct pair *p, const char *s)
{
	assert_int_equal(write(p->helper, s, strlen(s)), (ssize_t)strlen(s));
}

static void test_split_and_batched_messages(void **state)
{
	struct pair *p = *state;
	struct err e = {0};
	json_t *m;

	put(p, "{\"op\":\"log\",\"msg\":\"a\"}\n{\"op\":\"set\",\"na");
	m = read_msg(&p->r, &e);
	assert_non_null(m);
	assert_string_equal(json_string_value(json_object_get(m, "msg")), "a");
	json_decref(m);
	put(p, "me\":\"x\",\"value\":[1]}\n{\"op\":\"done\",\"result\":{}}\n");
	m = read_msg(&p->r, &e);
	assert_non_null(m);
	assert_string_equal(json_string_value(json_object_get(m, "name")), "x");
	json_decref(m);
	m = read_msg(&p->r, &e);
	assert_non_null(m);
	assert_string_equal(json_string_value(json_object_get(m, "op")), "done");
	json_decref(m);
	assert_int_equal(p->r.in.len, 0);
}

static void test_not_the_protocol(void **state)
{
	struct pair *p = *state;
	struct err e = {0};

	put(p, "# There is insufficient memory for the Java Runtime Environment\n");
	assert_null(read_msg(&p->r, &e));
	assert_non_null(strstr(e.msg, "malformed message: # There is insufficient memory"));
}

static void test_array_is_not_a_message(void **state)
{
	struct pair *p = *state;
	struct err e = {0};

	put(p, "[1, 2]\n");
	assert_null(read_msg(&p->r, &e));
	assert_non_null(strstr(e.msg, "malformed message"));
}

static void test_helper_gone(void **state)
{
	struct pair *p = *state;
	struct err e = {0};

	put(p, "{\"op\":\"log\"");
	close(p->helper);
	p->helper = -1;
	assert_null(read_msg(&p->r, &e));
	assert_string_equal(e.msg, "the script engine stopped");
	assert_true(send_msg(p->runner, json_pack("{s:s}", "op", "reply"), &e) < 0);
}

static void test_over_the_limit(void **state)
{
	struct pair *p = *state;
	struct err e = {0};
	char big[2048];

	memset(big, 'x', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	put(p, big);
	assert_null(read_msg(&p->r, &e));
}

static void test_sent_as_one_line(void **state)
{
	struct pair *p = *state;
	struct err e = {0};
	char got[256] = "";

	assert_int_equal(send_msg(p->runner, json_pack("{s:s, s:s}", "op", "run", "body", "a\nb"), &e), 0);
	assert_true(read(p->helper, got, sizeof got - 1) > 0);
	assert_string_equal(got, "{\"op\":\"run\",\"body\":\"a\\nb\"}\n");
}

static void test_engines_by_name_and_extension(void **state)
{
	(void)state;
	assert_string_equal(engine_of("JavaScript"), "js");
	assert_string_equal(engine_of("jython"), "python");
	assert_string_equal(engine_of("rb"), "ruby");
	assert_null(engine_of("cobol"));
	assert_null(engine_of(NULL));
	assert_string_equal(extension("scripts/a.b/test.groovy"), "groovy");
	assert_null(extension("scripts/a.b/test"));
	assert_null(extension("test."));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_split_and_batched_messages, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_not_the_protocol, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_array_is_not_a_message, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_helper_gone, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_over_the_limit, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sent_as_one_line, setup, teardown),
	    cmocka_unit_test(test_engines_by_name_and_extension),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
