/* Unit tests for the flow VM's state: save → JSON text → load → save gives the same state,
 * a loaded state resumes, and states for another definition or malformed ones are refused. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/limits.h"
#include "base/str.h"
#include "flow/model.h"
#include "flow/vm.h"

static char logged[4096];

static void test_log(void *ctx, enum flow_level level, const char *msg)
{
	(void)ctx, (void)level;
	strncat(logged, msg, sizeof logged - strlen(logged) - 2);
	strncat(logged, "\n", sizeof logged - strlen(logged) - 1);
}

static int no_server(void *ctx, const char *task, const char *method, json_t *args, json_t **out, char **suspend,
		     struct err *e)
{
	(void)ctx, (void)method, (void)args, (void)out, (void)suspend;
	return err_set(e, ERR_UNAVAILABLE, "Task '%s' is not available", task);
}

static const struct flow_host_ops ops = {.log = test_log, .server_task = no_server};
static const struct flow_host host = {.ops = &ops, .workdir = "/tmp"};

static const char *flow_text = "flows:\n"
			       "  default:\n"
			       "    - set: {a: 1, list: [1, 2]}\n"
			       "    - call: inner\n"
			       "      in: {x: 5}\n"
			       "      out: y\n"
			       "    - log: \"y=${y} a=${a} ev=${ev}\"\n"
			       "  inner:\n"
			       "    - parallel:\n"
			       "        - suspend: left\n"
			       "        - block:\n"
			       "            - suspend: right\n"
			       "    - suspend: ev1\n"
			       "    - set: {y: \"${x * 2}\"}\n";

static struct model *load(const char *text)
{
	struct err e;
	struct model *m = model_load_buffer("concord.yml", text, strlen(text), &e);
	if (!m)
		fail_msg("load: %s", e.msg);
	return m;
}

static json_t *roundtrip(struct vm **vm, struct model *m)
{
	json_t *st = vm_save(*vm), *back, *again;
	char *text = json_dumps(st, JSON_COMPACT);
	struct err e;
	back = json_loads(text, 0, NULL);
	free(text);
	vm_free(*vm);
	*vm = vm_load(m, &host, back, &e);
	if (!*vm)
		fail_msg("vm_load: %s", e.msg);
	again = vm_save(*vm);
	assert_true(json_equal(st, again));
	json_decref(back);
	json_decref(again);
	return st;
}

static void test_state_roundtrip_resume(void **state)
{
	struct model *m = load(flow_text);
	struct vm *vm = vm_new(m, &host);
	struct err e;
	json_t *st, *w;
	(void)state;
	logged[0] = '\0';
	assert_int_equal(vm_start(vm, "default", NULL, NULL, &e), 0);
	assert_int_equal(vm_run(vm), VM_SUSPENDED);
	w = vm_waiting_events(vm);
	assert_int_equal(json_array_size(w), 2);
	json_decref(w);
	json_decref(roundtrip(&vm, m));
	assert_int_equal(vm_resume(vm, "left", NULL, &e), 0);
	assert_int_equal(vm_run(vm), VM_SUSPENDED);
	json_decref(roundtrip(&vm, m));
	assert_int_equal(vm_resume(vm, "right", NULL, &e), 0);
	assert_int_equal(vm_run(vm), VM_SUSPENDED);
	st = roundtrip(&vm, m);
	json_decref(st);
	assert_true(vm_resume(vm, "nothing", NULL, &e) < 0);
	assert_int_equal(e.code, ERR_NOT_FOUND);
	w = json_pack("{s:s}", "ev", "E");
	assert_int_equal(vm_resume(vm, "ev1", w, &e), 0);
	json_decref(w);
	assert_int_equal(vm_run(vm), VM_FINISHED);
	assert_non_null(strstr(logged, "y=10 a=1 ev=E"));
	vm_free(vm);
	model_free(m);
}

static void test_state_refuses_other_definition(void **state)
{
	struct model *m = load(flow_text), *m2 = load("flows:\n  default:\n    - suspend: ev1\n");
	struct vm *vm = vm_new(m, &host);
	struct err e;
	json_t *st;
	(void)state;
	assert_int_equal(vm_start(vm, "default", NULL, NULL, &e), 0);
	assert_int_equal(vm_run(vm), VM_SUSPENDED);
	st = vm_save(vm);
	json_object_set_new(st, "definition", json_string(m2->hash));
	assert_null(vm_load(m, &host, st, &e));
	assert_int_equal(e.code, ERR_CONFLICT);
	json_decref(st);
	vm_free(vm);
	model_free(m);
	model_free(m2);
}

static void test_state_refuses_malformed(void **state)
{
	struct model *m = load(flow_text);
	struct vm *vm = vm_new(m, &host);
	struct err e;
	json_t *st, *frame;
	(void)state;
	assert_int_equal(vm_start(vm, "default", NULL, NULL, &e), 0);
	assert_int_equal(vm_run(vm), VM_SUSPENDED);
	st = vm_save(vm);
	frame = json_array_get(json_object_get(json_array_get(json_object_get(st, "threads"), 0), "frames"), 0);
	json_object_set_new(frame, "list", json_integer(100000));
	assert_null(vm_load(m, &host, st, &e));
	json_object_set_new(frame, "list", json_integer(0));
	json_object_set_new(frame, "pc", json_integer(99));
	assert_null(vm_load(m, &host, st, &e));
	json_object_set_new(st, "version", json_integer(7));
	assert_null(vm_load(m, &host, st, &e));
	json_decref(st);
	vm_free(vm);
	model_free(m);
}

/* A server task that suspends its step (the concord task's sync + suspend): the payload
 * it gave comes back with method "resume" when the thread resumes. */
static int reentrant_server(void *ctx, const char *task, const char *method, json_t *args, json_t **out,
			    char **suspend, struct err *e)
{
	json_t *payload = json_array_get(args, 0);

	(void)ctx, (void)task;
	if (!method) {
		*suspend = strdup("kids");
		*out = json_pack("{s:O}", "k", json_object_get(args, "k"));
		return 0;
	}
	assert_string_equal(method, "resume");
	if (json_integer_value(json_object_get(payload, "k")) < 0)
		return err_set(e, ERR_INVALID, "Child process x FAILED");
	*out = json_pack("{s:O}", "got", json_object_get(payload, "k"));
	return 0;
}

static enum vm_status reenter(int k, bool tamper)
{
	static const struct flow_host_ops rops = {.log = test_log, .server_task = reentrant_server};
	static const struct flow_host rhost = {.ops = &rops, .workdir = "/tmp"};
	static const char text[] = "flows:\n"
				   "  default:\n"
				   "    - log: before\n"
				   "    - task: concord\n"
				   "      in: {k: \"${k}\"}\n"
				   "      out: r\n"
				   "    - log: \"r=${r.got}\"\n";
	struct model *m = load(text);
	struct vm *vm = vm_new(m, &rhost), *back;
	json_t *args = json_pack("{s:i}", "k", k), *st;
	enum vm_status rc;
	struct err e;

	logged[0] = '\0';
	assert_int_equal(vm_start(vm, "default", args, NULL, &e), 0);
	assert_int_equal(vm_run(vm), VM_SUSPENDED);
	assert_null(strstr(logged, "r="));
	st = vm_save(vm);
	vm_free(vm);
	if (tamper) /* step 0 is the log step: not a server task */
		json_object_set_new(json_object_get(json_array_get(json_object_get(st, "threads"), 0), "reentry"),
				    "step", json_integer(0));
	back = vm_load(m, &rhost, st, &e);
	json_decref(st);
	json_decref(args);
	if (!back) {
		assert_non_null(strstr(e.msg, "bad task re-entry"));
		model_free(m);
		return VM_FAILED;
	}
	assert_int_equal(vm_resume(back, "kids", NULL, &e), 0);
	rc = vm_run(back);
	vm_free(back);
	model_free(m);
	return rc;
}

static void test_state_task_reentry(void **state)
{
	(void)state;
	assert_int_equal(reenter(7, false), VM_FINISHED);
	assert_non_null(strstr(logged, "r=7"));
	assert_int_equal(reenter(-1, false), VM_FAILED);
	assert_non_null(strstr(logged, "Child process x FAILED"));
	assert_int_equal(reenter(7, true), VM_FAILED);
}

/* A server method called from a step's expression suspends its thread
 * (concord.suspendForCompletion); the thread goes on with the next step on resume. */
static int method_suspends(void *ctx, const char *task, const char *method, json_t *args, json_t **out,
			   char **suspend, struct err *e)
{
	(void)ctx, (void)task, (void)args, (void)e;
	assert_string_equal(method, "suspendForCompletion");
	assert_non_null(suspend);
	*suspend = strdup("kids");
	*out = json_null();
	return 0;
}

static void test_state_method_suspends(void **state)
{
	static const struct flow_host_ops mops = {.log = test_log, .server_task = method_suspends};
	static const struct flow_host mhost = {.ops = &mops, .workdir = "/tmp"};
	struct model *m = load("flows:\n  default:\n    - log: before\n"
			       "    - ${concord.suspendForCompletion(['a'])}\n    - log: after\n");
	struct vm *vm = vm_new(m, &mhost), *back;
	json_t *st;
	struct err e;

	(void)state;
	logged[0] = '\0';
	assert_int_equal(vm_start(vm, "default", NULL, NULL, &e), 0);
	assert_int_equal(vm_run(vm), VM_SUSPENDED);
	assert_null(strstr(logged, "after"));
	st = vm_save(vm);
	vm_free(vm);
	back = vm_load(m, &mhost, st, &e);
	json_decref(st);
	assert_non_null(back);
	assert_int_equal(vm_resume(back, "kids", NULL, &e), 0);
	assert_int_equal(vm_run(back), VM_FINISHED);
	assert_non_null(strstr(logged, "after"));
	vm_free(back);
	model_free(m);
}

static void test_model_errors_name_position(void **state)
{
	struct err e;
	(void)state;
	const char *bad = "flows:\n  default:\n    - log: x\n      bad: 1\n";
	assert_null(model_load_buffer("f.yml", bad, strlen(bad), &e));
	assert_non_null(strstr(e.msg, "(f.yml): Error @ line: 3, col: 7. Unknown options: ['bad'"));
	assert_null(model_load_buffer("f.yml", "a: 1\na: 2\n", 10, &e));
	assert_non_null(strstr(e.msg, "Duplicate field 'a'"));
}

/* Issue 15 part 7: the walk for extra YAML files errors on a path over 4095 bytes instead
 * of cutting it (a cut path silently named another file or none). */
static void test_model_walk_refuses_a_path_too_long(void **state)
{
	static const char yml[] = "flows:\n  default:\n    - log: x\n";
	char dir[] = "/tmp/accord-walk-test-XXXXXX", name[201], cmd[64];
	struct model_opts mo = {.path = dir};
	struct model *m;
	struct err e;
	int fd, next;
	(void)state;

	assert_non_null(mkdtemp(dir));
	assert_true((fd = open(dir, O_RDONLY | O_DIRECTORY)) >= 0);
	next = openat(fd, "concord.yml", O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(next >= 0);
	assert_int_equal(write(next, yml, sizeof yml - 1), (ssize_t)(sizeof yml - 1));
	close(next);
	memset(name, 'd', sizeof name - 1);
	name[sizeof name - 1] = '\0';
	for (int i = 0; i < 22; i++) { /* 22 folders of 200 bytes: over 4096 */
		assert_int_equal(mkdirat(fd, name, 0700), 0);
		assert_true((next = openat(fd, name, O_RDONLY | O_DIRECTORY)) >= 0);
		close(fd);
		fd = next;
	}
	close(fd);
	m = model_load(&mo, &e);
	assert_null(m);
	assert_non_null(strstr(e.msg, "path too long (limit 4095 bytes)"));
	assert_int_equal(str_fmt(cmd, sizeof cmd, "rm -rf '%s'", dir), 0);
	assert_int_equal(system(cmd), 0);
}

/* The loop's hot state (the iteration's locals, the loop's counter) is kept apart from its
 * JSON while the loop runs (issue 27 item 5), and the saved state must stay exactly what it
 * was: states saved in the middle of a loop (a suspend in an iteration, then again after a
 * resume) and after it are compared byte for byte with the ones the VM saved before that
 * change (tests/unit/state_loop.json, one compact state per line).  Only a deliberate
 * change of what a state holds may rewrite that file (cmocka prints the state it got). */
static const char *loop_text = "flows:\n"
			       "  default:\n"
			       "    - set: {total: 0}\n"
			       "    - block:\n"
			       "        - if: \"${itemIndex > 0 && hasVariable('x')}\"\n"
			       "          then:\n"
			       "            - throw: \"x leaked from the previous iteration\"\n"
			       "        - set:\n"
			       "            x: \"${item % 3}\"\n"
			       "            i: \"${itemIndex}\"\n"
			       "            total: \"${total + item}\"\n"
			       "        - if: \"${x == 0}\"\n"
			       "          then:\n"
			       "            - set: {zero: true}\n"
			       "        - if: \"${item % 4 == 0}\"\n"
			       "          then:\n"
			       "            - suspend: \"ev${item}\"\n"
			       "      loop:\n"
			       "        items: [1, 2, 3, 4, 5, 6, 7, 8, 9]\n"
			       "      out: [x, i]\n"
			       "    - suspend: end\n"
			       "    - log: \"x=${x} i=${i} total=${total}\"\n";

static char *state_text(struct vm *vm)
{
	json_t *st = vm_save(vm);
	char *text = json_dumps(st, JSON_COMPACT);
	json_decref(st);
	assert_non_null(text);
	return text;
}

static void test_state_loop_unchanged(void **state)
{
	const char *events[] = {"ev4", "ev8", "end"};
	char path[512], *want = NULL, *line;
	struct model *m = load(loop_text);
	struct vm *vm = vm_new(m, &host);
	struct err e;
	size_t len = 0;
	FILE *f;
	(void)state;
	assert_true(str_fmt(path, sizeof path, "%.*s/state_loop.json", (int)(strrchr(__FILE__, '/') - __FILE__),
			    __FILE__) == 0);
	assert_non_null(f = fopen(path, "r"));
	assert_int_not_equal(getdelim(&want, &len, '\0', f), -1);
	fclose(f);
	logged[0] = '\0';
	assert_int_equal(vm_start(vm, "default", NULL, NULL, &e), 0);
	line = want;
	for (size_t i = 0; i < 3; i++) {
		char *got, *nl = strchr(line, '\n');
		assert_int_equal(vm_run(vm), VM_SUSPENDED);
		got = state_text(vm);
		assert_non_null(nl);
		*nl = '\0';
		assert_string_equal(got, line);
		free(got);
		json_decref(roundtrip(&vm, m));
		assert_int_equal(vm_resume(vm, events[i], NULL, &e), 0);
		line = nl + 1;
	}
	assert_int_equal(vm_run(vm), VM_FINISHED);
	assert_non_null(strstr(logged, "x=[1, 2, 0, 1, 2, 0, 1, 2, 0] i=[0, 1, 2, 3, 4, 5, 6, 7, 8] total=0"));
	free(want);
	vm_free(vm);
	model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_state_roundtrip_resume),
	    cmocka_unit_test(test_state_refuses_other_definition),
	    cmocka_unit_test(test_state_refuses_malformed),
	    cmocka_unit_test(test_state_task_reentry),
	    cmocka_unit_test(test_state_method_suspends),
	    cmocka_unit_test(test_state_loop_unchanged),
	    cmocka_unit_test(test_model_errors_name_position),
	    cmocka_unit_test(test_model_walk_refuses_a_path_too_long),
	};
	limits_defaults();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
