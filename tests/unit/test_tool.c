/* Unit tests for runner/tool.c, with /bin/sh as the program: output arrives line by line,
 * the exit status and a killing signal come back, secret files are there (0600) while the
 * program runs and gone after, a timeout and the program's end kill everything it started,
 * and a stop signal to the caller kills the program, removes the files and then ends the
 * caller with that signal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/path.h"
#include "base/str.h"
#include "runner/tool.h"

struct lines {
	char text[8][256];
	size_t n;
};

static void collect(void *ctx, const char *text)
{
	struct lines *l = ctx;
	if (l->n < 8)
		str_fmt_cut(l->text[l->n++], sizeof l->text[0], "%s", text);
}

static char workdir[] = "/tmp/accord-test-tool-XXXXXX";

static int setup(void **state)
{
	(void)state;
	return mkdtemp(workdir) ? 0 : -1;
}

static int teardown(void **state)
{
	struct err e;
	(void)state;
	return path_remove_tree(workdir, &e);
}

static int sh(const char *script, const struct flow_tool_file *files, size_t n_files, long long timeout_ms,
	      struct lines *l, struct flow_tool_result *r, struct err *e)
{
	char *argv[] = {"sh", "-c", (char *)script, NULL};
	char *env[] = {"GREETING=hello", NULL};
	struct flow_tool t = {.name = "test",
			      .exe = "/bin/sh",
			      .argv = argv,
			      .env = env,
			      .files = files,
			      .n_files = n_files,
			      .timeout_ms = timeout_ms};
	const struct tool_sink out = {collect, NULL, l};
	memset(l, 0, sizeof *l);
	return tool_run(workdir, &t, &out, r, e);
}

/* With err_line, stderr's lines go there and stdout's to the sink, each in order. */
static void test_err_line_gets_stderr_alone(void **state)
{
	char *argv[] = {"sh", "-c", "echo out1; echo err1 >&2; echo out2; printf err2 >&2", NULL};
	struct lines out, errs;
	struct flow_tool t = {.name = "test", .exe = "/bin/sh", .argv = argv, .err_line = collect, .line_ctx = &errs};
	const struct tool_sink sink = {collect, NULL, &out};
	struct flow_tool_result r;
	struct err e;
	(void)state;
	memset(&out, 0, sizeof out);
	memset(&errs, 0, sizeof errs);
	assert_int_equal(tool_run(workdir, &t, &sink, &r, &e), 0);
	assert_int_equal(r.exit_code, 0);
	assert_int_equal(out.n, 2);
	assert_string_equal(out.text[0], "out1");
	assert_string_equal(out.text[1], "out2");
	assert_int_equal(errs.n, 2);
	assert_string_equal(errs.text[0], "err1");
	assert_string_equal(errs.text[1], "err2"); /* a last line without its newline */
}

/* Whether pid is gone (or a zombie nobody reaped yet). */
static bool gone(pid_t pid)
{
	char path[64], buf[512];
	FILE *f;
	char *close_paren;
	str_fmt_cut(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r")))
		return true;
	buf[0] = '\0';
	if (!fgets(buf, sizeof buf, f))
		buf[0] = '\0';
	fclose(f);
	close_paren = strrchr(buf, ')');
	return !close_paren || close_paren[2] == 'Z' || close_paren[2] == 'X';
}

/* A SIGKILL is delivered after kill(2) returns: waits for pid to go (10 s at most). */
static bool dead(pid_t pid)
{
	for (int i = 0; i < 1000; i++) {
		if (gone(pid))
			return true;
		usleep(10000);
	}
	return false;
}

static pid_t pid_of(const char *text)
{
	int64_t v = 0;
	size_t n = strcspn(text, "\n");
	assert_int_equal(str_to_i64((struct str){text, n}, 1, INT32_MAX, &v, "pid", &(struct err){0}), 0);
	return (pid_t)v;
}

static void test_lines_and_exit_status(void **state)
{
	struct flow_tool_result r;
	struct lines l;
	struct err e = {0};
	(void)state;
	assert_int_equal(sh("echo one; printf 'two\\r\\n'; echo \"$GREETING from $HOME\" >&2; printf last; exit 3",
			    NULL, 0, 0, &l, &r, &e),
			 0);
	assert_int_equal(l.n, 4);
	assert_string_equal(l.text[0], "one");
	assert_string_equal(l.text[1], "two");
	assert_true(strncmp(l.text[2], "hello from /tmp/accord-test-tool-", 33) == 0);
	assert_string_equal(l.text[3], "last");
	assert_int_equal(r.exit_code, 3);
	assert_int_equal(r.signal, 0);
	assert_false(r.timed_out);
}

static void test_secret_files_exist_only_while_it_runs(void **state)
{
	const struct flow_tool_file files[] = {{"keys/id", "s3cret", 6}, {"vault", "pw", 2}};
	struct flow_tool_result r;
	struct lines l;
	struct err e = {0};
	char *p;
	(void)state;
	assert_int_equal(sh("stat -c %a keys/id vault; cat keys/id; echo", files, 2, 0, &l, &r, &e), 0);
	assert_int_equal(r.exit_code, 0);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.text[0], "600");
	assert_string_equal(l.text[1], "600");
	assert_string_equal(l.text[2], "s3cret");
	p = path_join_safe(workdir, "keys", &e);
	assert_int_equal(access(p, F_OK), -1); /* the folder made for it went too */
	free(p);
	p = path_join_safe(workdir, "vault", &e);
	assert_int_equal(access(p, F_OK), -1);
	free(p);
}

static void test_bad_file_path_writes_nothing(void **state)
{
	const struct flow_tool_file files[] = {{"ok", "x", 1}, {"../escape", "x", 1}};
	struct flow_tool_result r;
	struct lines l;
	struct err e = {0};
	char *p;
	(void)state;
	assert_true(sh("echo never", files, 2, 0, &l, &r, &e) < 0);
	assert_int_equal(e.code, ERR_INVALID);
	assert_int_equal(l.n, 0);
	p = path_join_safe(workdir, "ok", &e);
	assert_int_equal(access(p, F_OK), -1);
	free(p);
}

static void collect_event(void *ctx, const char *type, json_t *data)
{
	struct lines *l = ctx;
	char *text = json_dumps(data, JSON_COMPACT | JSON_SORT_KEYS);
	if (l->n < 8)
		str_fmt_cut(l->text[l->n++], sizeof l->text[0], "%s %s", type, text ? text : "?");
	free(text);
}

static void test_events_on_fd_3(void **state)
{
	char *argv[] = {"sh", "-c",
			"echo '{\"a\": 1}' >&3; echo 'not json' >&3; echo '[1]' >&3; echo printed;"
			"echo '{\"b\": \"x\"}' >&3",
			NULL};
	struct flow_tool t = {.name = "test", .exe = "/bin/sh", .argv = argv, .event_type = "TEST"};
	struct lines l = {0}, ev = {0};
	struct flow_tool_result r;
	struct err e = {0};
	const struct tool_sink out = {collect, collect_event, &l};
	(void)state;
	/* lines and events share ctx here: both land in l, in the order they were read */
	assert_int_equal(tool_run(workdir, &t, &out, &r, &e), 0);
	assert_int_equal(r.exit_code, 0);
	for (size_t i = 0; i < l.n; i++)
		if (strncmp(l.text[i], "TEST ", 5) == 0)
			str_fmt_cut(ev.text[ev.n++], sizeof ev.text[0], "%s", l.text[i]);
	assert_int_equal(ev.n, 2);
	assert_string_equal(ev.text[0], "TEST {\"a\":1}");
	assert_string_equal(ev.text[1], "TEST {\"b\":\"x\"}");
}

/* {"eventType": "<type>_<SUB>", "data"} is an event of that subtype; any other eventType is
 * just a field of an event of the tool's type. */
static void test_event_subtypes(void **state)
{
	char *argv[] = {"sh", "-c",
			"echo '{\"eventType\": \"TEST_START\", \"data\": {\"n\": 1}}' >&3;"
			"echo '{\"eventType\": \"OTHER\", \"data\": {\"n\": 2}}' >&3;"
			"echo '{\"eventType\": \"TEST_\", \"data\": {\"n\": 3}}' >&3",
			NULL};
	struct flow_tool t = {.name = "test", .exe = "/bin/sh", .argv = argv, .event_type = "TEST"};
	struct lines l = {0};
	struct flow_tool_result r;
	struct err e = {0};
	const struct tool_sink out = {collect, collect_event, &l};
	(void)state;
	assert_int_equal(tool_run(workdir, &t, &out, &r, &e), 0);
	assert_int_equal(l.n, 3);
	assert_string_equal(l.text[0], "TEST_START {\"n\":1}");
	assert_string_equal(l.text[1], "TEST {\"data\":{\"n\":2},\"eventType\":\"OTHER\"}");
	assert_string_equal(l.text[2], "TEST {\"data\":{\"n\":3},\"eventType\":\"TEST_\"}");
}

static json_t *answer(void *ctx, json_t *req)
{
	int *calls = ctx;
	(*calls)++;
	return json_pack("{s:I}", "value", json_integer_value(json_object_get(req, "n")) * 10);
}

/* A request on fd 3 is answered on fd 4, one line each; the answers are no events. */
static void test_requests_answered_on_fd_4(void **state)
{
	char *argv[] = {"sh", "-c",
			"echo '{\"request\": {\"n\": 4}}' >&3; read a <&4; echo \"got $a\";"
			"echo '{\"request\": {\"n\": 5}}' >&3; read b <&4; echo \"got $b\"",
			NULL};
	int calls = 0;
	struct flow_tool t = {.name = "test",
			      .exe = "/bin/sh",
			      .argv = argv,
			      .event_type = "TEST",
			      .request = answer,
			      .request_ctx = &calls};
	struct lines l = {0};
	struct flow_tool_result r;
	struct err e = {0};
	const struct tool_sink out = {collect, collect_event, &l};
	(void)state;
	assert_int_equal(tool_run(workdir, &t, &out, &r, &e), 0);
	assert_int_equal(r.exit_code, 0);
	assert_int_equal(calls, 2);
	assert_int_equal(l.n, 2);
	assert_string_equal(l.text[0], "got {\"value\":40}");
	assert_string_equal(l.text[1], "got {\"value\":50}");
}

/* stdin_path: one of the secret files is the program's input; without it, /dev/null. */
static void test_stdin_from_a_secret_file(void **state)
{
	char *argv[] = {"sh", "-c", "read pw; echo \"read ${#pw} chars\"", NULL};
	const struct flow_tool_file files[] = {{"in/pw", "hunter2\n", 8}};
	struct flow_tool t = {
	    .name = "test", .exe = "/bin/sh", .argv = argv, .files = files, .n_files = 1, .stdin_path = "in/pw"};
	struct lines l = {0};
	struct flow_tool_result r;
	struct err e = {0};
	const struct tool_sink out = {collect, NULL, &l};
	(void)state;
	assert_int_equal(tool_run(workdir, &t, &out, &r, &e), 0);
	assert_int_equal(l.n, 1);
	assert_string_equal(l.text[0], "read 7 chars");
	assert_int_equal(sh("read pw; echo \"read ${#pw} chars\"", NULL, 0, 0, &l, &r, &e), 0);
	assert_string_equal(l.text[0], "read 0 chars");
}

static void test_missing_program(void **state)
{
	char *argv[] = {"nope", NULL};
	struct flow_tool t = {.name = "nope", .exe = "/usr/bin/accord-no-such-program", .argv = argv};
	struct flow_tool_result r;
	struct err e = {0};
	(void)state;
	const struct tool_sink out = {collect, NULL, NULL};
	assert_true(tool_run(workdir, &t, &out, &r, &e) < 0);
	assert_int_equal(e.code, ERR_NOT_FOUND);
	assert_string_equal(e.msg, "nope: /usr/bin/accord-no-such-program is not installed on this node");
}

static void test_timeout_kills_the_group(void **state)
{
	struct flow_tool_result r;
	struct lines l;
	struct err e = {0};
	(void)state;
	assert_int_equal(sh("sleep 600 & echo $!; wait", NULL, 0, 200, &l, &r, &e), 0);
	assert_true(r.timed_out);
	assert_int_equal(r.signal, SIGTERM);
	assert_int_equal(r.exit_code, 128 + SIGTERM);
	assert_int_equal(l.n, 1);
	assert_true(dead(pid_of(l.text[0])));
}

static void test_nothing_outlives_the_program(void **state)
{
	struct flow_tool_result r;
	struct lines l;
	struct err e = {0};
	(void)state;
	assert_int_equal(sh("sleep 600 >/dev/null & echo $!; exit 0", NULL, 0, 0, &l, &r, &e), 0);
	assert_int_equal(r.exit_code, 0);
	assert_false(r.timed_out);
	assert_int_equal(l.n, 1);
	assert_true(dead(pid_of(l.text[0])));
}

/* A runner told to stop (SIGTERM) while its program runs. */
static void test_stop_signal_kills_program_and_caller(void **state)
{
	const struct flow_tool_file files[] = {{"key", "k", 1}};
	char *started = path_join_safe(workdir, "started", &(struct err){0});
	char *key = path_join_safe(workdir, "key", &(struct err){0});
	struct flow_tool_result r;
	struct lines l;
	struct err e = {0};
	char buf[32] = "";
	FILE *f = NULL;
	int status;
	pid_t child;
	(void)state;
	child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		int rc = sh("sleep 600 & echo $! > started.tmp; mv started.tmp started; wait", files, 1, 0, &l, &r, &e);
		_exit(rc == 0 ? 0 : 1); /* never reached: SIGTERM ends it */
	}
	for (int i = 0; i < 3000 && !(f = fopen(started, "r")); i++)
		usleep(10000);
	assert_non_null(f);
	assert_non_null(fgets(buf, sizeof buf, f));
	fclose(f);
	assert_int_equal(access(key, F_OK), 0);
	kill(child, SIGTERM);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGTERM);
	assert_int_equal(access(key, F_OK), -1);
	assert_true(dead(pid_of(buf)));
	unlink(started);
	free(started);
	free(key);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lines_and_exit_status),
	    cmocka_unit_test(test_secret_files_exist_only_while_it_runs),
	    cmocka_unit_test(test_bad_file_path_writes_nothing),
	    cmocka_unit_test(test_events_on_fd_3),
	    cmocka_unit_test(test_event_subtypes),
	    cmocka_unit_test(test_requests_answered_on_fd_4),
	    cmocka_unit_test(test_stdin_from_a_secret_file),
	    cmocka_unit_test(test_err_line_gets_stderr_alone),
	    cmocka_unit_test(test_missing_program),
	    cmocka_unit_test(test_timeout_kills_the_group),
	    cmocka_unit_test(test_nothing_outlives_the_program),
	    cmocka_unit_test(test_stop_signal_kills_program_and_caller),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
