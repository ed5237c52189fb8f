/* Unit tests for flow/tasks/docker_spec.c (the docker task's parameters, environment file
 * and command lines) and base/linesplit.c (output streams into lines). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "base/linesplit.h"
#include "flow/tasks/docker_spec.h"

static json_t *in_of(const char *text)
{
	json_t *v = json_loads(text, 0, NULL);
	assert_non_null(v);
	return v;
}

static void test_defaults_are_concords(void **state)
{
	json_t *in = in_of("{\"image\": \"alpine\"}");
	struct docker_spec s;
	struct err e;
	(void)state;
	assert_int_equal(docker_spec_parse(in, &s, &e), 0);
	assert_string_equal(s.image, "alpine");
	assert_null(s.cmd);
	assert_true(s.force_pull && s.log_out && s.log_err);
	assert_false(s.save_out || s.save_err || s.redirect_err || s.debug);
	assert_int_equal(s.pull_retry_count, 3);
	assert_int_equal(s.pull_retry_interval_ms, 10000);
	json_decref(in);
}

static void bad(const char *text, const char *message)
{
	json_t *in = in_of(text);
	struct docker_spec s;
	struct err e;
	assert_true(docker_spec_parse(in, &s, &e) < 0);
	if (!strstr(e.msg, message))
		fail_msg("'%s' not in '%s'", message, e.msg);
	json_decref(in);
}

static void test_image_references(void **state)
{
	const char *good[] = {"alpine", "library/alpine:3.19", "localhost:5000/team/app:1.0",
			      "docker.io/library/alpine@sha256:0123abcd", "localhost/accord-test"};
	(void)state;
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		json_t *in = json_pack("{s:s}", "image", good[i]);
		struct docker_spec s;
		struct err e;
		if (docker_spec_parse(in, &s, &e))
			fail_msg("%s refused: %s", good[i], e.msg);
		json_decref(in);
	}
}

static void test_bad_parameters(void **state)
{
	(void)state;
	bad("{}", "docker: the mandatory parameter 'image' is missing");
	bad("{\"image\": \"-v\"}", "'image' must be an image reference");
	bad("{\"image\": \"a b\"}", "'image' must be an image reference");
	bad("{\"image\": \"docker-archive:/var/lib/x.tar\"}", "'image' must be an image reference");
	bad("{\"image\": \"dir:/srv\"}", "'image' must be an image reference");
	bad("{\"image\": \"a;b\"}", "'image' must be an image reference");
	bad("{\"image\": \"a\", \"hosts\": \"x:1\"}", "'hosts' must be a list");
	bad("{\"image\": \"a\", \"hosts\": [\"nocolon\"]}", "'hosts' entry 0");
	bad("{\"image\": \"a\", \"envFile\": \"/etc/passwd\"}", "'envFile' must be a path inside");
	bad("{\"image\": \"a\", \"env\": [1]}", "'env' must be a map");
	bad("{\"image\": \"a\", \"pullRetryCount\": 101}", "'pullRetryCount' must be between 0 and 100");
	bad("{\"image\": \"a\", \"cmd\": 5}", "docker: ");
}

static void test_env_text_file_then_map(void **state)
{
	json_t *in = in_of("{\"image\": \"a\", \"env\": {\"A\": \"x=y\", \"N\": 5, \"Z\": null}}");
	const char file[] = "# comment\n\n  FROM_FILE=1 2 \r\nNAME_ONLY\nA=from file";
	struct docker_spec s;
	struct err e;
	char *t;
	(void)state;
	assert_int_equal(docker_spec_parse(in, &s, &e), 0);
	t = docker_env_text(&s, file, sizeof file - 1, &e);
	assert_non_null(t);
	assert_string_equal(t, "FROM_FILE=1 2\nA=from file\nA=x=y\nN=5\n");
	free(t);
	json_decref(in);
}

static void test_env_text_refusals(void **state)
{
	json_t *in = in_of("{\"image\": \"a\", \"env\": {\"A\": \"two\\nlines\"}}");
	struct docker_spec s;
	struct err e;
	(void)state;
	assert_int_equal(docker_spec_parse(in, &s, &e), 0);
	assert_null(docker_env_text(&s, NULL, 0, &e));
	assert_non_null(strstr(e.msg, "the value of A holds a line break"));
	assert_null(docker_env_text(&s, "1BAD=x\n", 7, &e));
	assert_non_null(strstr(e.msg, "'envFile' line 1: not a variable name"));
	json_decref(in);
}

static void test_run_argv(void **state)
{
	json_t *in = in_of("{\"image\": \"alpine:3\", \"cmd\": \"echo hi\", \"hosts\": [\"db:10.0.0.3\"]}");
	char *engine[] = {"podman", "--runtime", "runc", NULL}, *extra[] = {"--memory", "1g", NULL};
	const char *want[] = {"podman",
			      "--runtime",
			      "runc",
			      "run",
			      "--rm",
			      "--name",
			      "c1",
			      "-v",
			      "/w/1:/workspace",
			      "-w",
			      "/workspace",
			      "--cap-drop",
			      "ALL",
			      "--security-opt",
			      "no-new-privileges",
			      "--network",
			      "none",
			      "--user",
			      "65534:65534",
			      "--memory",
			      "1g",
			      "--env-file",
			      "/d/e.env",
			      "--add-host",
			      "db:10.0.0.3",
			      "--entrypoint",
			      "/bin/sh",
			      "alpine:3",
			      "/workspace/.concord/docker-1.sh",
			      NULL};
	struct docker_spec s;
	struct strv argv = {0};
	struct err e;
	struct docker_run_opts o = {.engine = engine,
				    .name = "c1",
				    .workdir = "/w/1",
				    .network = "none",
				    .extra = extra,
				    .user = "65534:65534",
				    .env_path = "/d/e.env",
				    .script_path = "/workspace/.concord/docker-1.sh"};
	size_t i;
	(void)state;
	assert_int_equal(docker_spec_parse(in, &s, &e), 0);
	assert_int_equal(docker_run_argv(&o, &s, &argv, &e), 0);
	for (i = 0; want[i]; i++)
		assert_string_equal(argv.v[i], want[i]);
	assert_int_equal(argv.n, i);
	strv_free(&argv);
	o.workdir = "/w:1";
	assert_true(docker_run_argv(&o, &s, &argv, &e) < 0);
	strv_free(&argv);
	json_decref(in);
}

struct got {
	char text[4][32];
	size_t len[4], n;
};

static void collect(void *ctx, char *line, size_t len)
{
	struct got *g = ctx;
	if (g->n < 4) {
		strncpy(g->text[g->n], line, sizeof g->text[0] - 1);
		g->len[g->n++] = len;
	}
}

static void test_line_split(void **state)
{
	struct line_split *l = calloc(1, sizeof *l);
	struct got g = {0};
	char *big = malloc(LINESPLIT_MAX + 3);
	(void)state;
	line_split_take(l, "one\r\ntw", 7, collect, &g);
	line_split_take(l, "o\nthree", 7, collect, &g);
	assert_int_equal(g.n, 2);
	assert_string_equal(g.text[0], "one");
	assert_string_equal(g.text[1], "two");
	line_split_flush(l, collect, &g);
	assert_string_equal(g.text[2], "three");
	memset(big, 'x', LINESPLIT_MAX + 2);
	big[LINESPLIT_MAX + 2] = '\n';
	line_split_take(l, big, LINESPLIT_MAX + 3, collect, &g); /* a piece of LINESPLIT_MAX, then "xx" */
	assert_int_equal(g.n, 4);
	assert_int_equal(g.len[3], LINESPLIT_MAX);
	free(big);
	free(l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_defaults_are_concords),
	    cmocka_unit_test(test_bad_parameters),
	    cmocka_unit_test(test_image_references),
	    cmocka_unit_test(test_env_text_file_then_map),
	    cmocka_unit_test(test_env_text_refusals),
	    cmocka_unit_test(test_run_argv),
	    cmocka_unit_test(test_line_split),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
