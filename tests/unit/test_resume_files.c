/* Unit tests for queue_resume_files: files from the resume arguments land beneath the
 * working folder, the reserved key is removed, escapes and oversized files are refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/limits.h"
#include "base/path.h"
#include "queue/resume_files.h"

static char root[] = "/tmp/accord-resume-files-XXXXXX";

static json_t *args_with(const char *path, const char *data)
{
	return json_pack("{s:{s:i}, s:[{s:s, s:s}]}", "f", "x", 1, RESUME_FILES_KEY, "path", path, "data", data);
}

static void test_writes_and_removes_key(void **state)
{
	struct err e;
	json_t *args = args_with("_form_files/f/doc", "aGVsbG8="); /* "hello" */
	size_t len;
	char *text;
	(void)state;
	assert_int_equal(queue_resume_files(root, args, &e), 0);
	assert_null(json_object_get(args, RESUME_FILES_KEY));
	assert_non_null(json_object_get(args, "f"));
	text = path_read_beneath(root, "_form_files/f/doc", 100, &len, &e);
	assert_non_null(text);
	assert_string_equal(text, "hello");
	free(text);
	json_decref(args);
	assert_int_equal(queue_resume_files(root, NULL, &e), 0);
}

static void test_refuses_escape_and_size(void **state)
{
	struct err e;
	json_t *args = args_with("../outside", "aGVsbG8=");
	uint64_t saved = limits.archive_bytes;
	(void)state;
	assert_true(queue_resume_files(root, args, &e) < 0);
	assert_int_equal(e.code, ERR_INVALID);
	json_decref(args);
	args = args_with("big", "aGVsbG8=");
	limits.archive_bytes = 4;
	assert_true(queue_resume_files(root, args, &e) < 0);
	assert_int_equal(e.code, ERR_TOO_LARGE);
	limits.archive_bytes = saved;
	json_decref(args);
	args = json_pack("{s:s}", RESUME_FILES_KEY, "nope");
	assert_true(queue_resume_files(root, args, &e) < 0);
	json_decref(args);
}

static int setup(void **state)
{
	(void)state;
	limits_defaults();
	return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
	struct err e;
	(void)state;
	return path_remove_tree(root, &e);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_writes_and_removes_key),
	    cmocka_unit_test(test_refuses_escape_and_size),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
