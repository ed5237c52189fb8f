/* Unit tests for src/base/dlib.c, the loader of the libraries Accord opens on demand
 * (store/pq_api.c, store/sqlite_api.c): a table filled from a real library, the two
 * failures — a library that is missing, a symbol that is — each with a message naming
 * what is missing and a table left all zero, and dlib_load_once keeping its first result.  Loading libpq and SQLite
 * themselves is exercised by every store test; their missing-library messages by tests/api/test_startup.py. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/dlib.h"

#define LIBC_FUNCTIONS(X) X(str_len, strlen) X(get_pid, getpid)
struct libc_api {
	LIBC_FUNCTIONS(DLIB_FIELD)
};
#define LIBC_SYM(field, name) DLIB_SYM(struct libc_api, field, name)
static const struct dlib_sym libc_syms[] = {LIBC_FUNCTIONS(LIBC_SYM)};
static const struct dlib_sym with_missing[] = {
    {"strlen", offsetof(struct libc_api, str_len)},
    {"accord_no_such_function", offsetof(struct libc_api, get_pid)},
};

static void test_fills_the_table(void **state)
{
	struct libc_api api = {0};
	char msg[200] = "";
	(void)state;
	assert_int_equal(dlib_load("libc.so.6", "libc6", libc_syms, 2, &api, sizeof api, msg, sizeof msg), 0);
	assert_int_equal(api.str_len("four"), 4);
	assert_int_equal(api.get_pid(), getpid());
	assert_string_equal(msg, "");
}

static void test_missing_library(void **state)
{
	struct libc_api api = {0};
	char msg[200] = "";
	(void)state;
	assert_int_equal(
	    dlib_load("libaccord-missing.so.0", "accord-missing1", libc_syms, 2, &api, sizeof api, msg, sizeof msg),
	    -1);
	assert_non_null(strstr(msg, "cannot load libaccord-missing.so.0 (package accord-missing1): "));
	assert_non_null(strstr(msg, "libaccord-missing.so.0")); /* dlerror's own words follow */
	assert_null(api.str_len);
	assert_null(api.get_pid);
}

static void test_missing_symbol_leaves_the_table_empty(void **state)
{
	struct libc_api api = {0};
	char msg[200] = "";
	(void)state;
	assert_int_equal(dlib_load("libc.so.6", "libc6", with_missing, 2, &api, sizeof api, msg, sizeof msg), -1);
	assert_string_equal(msg, "libc.so.6 has no symbol accord_no_such_function");
	assert_null(api.str_len); /* found first, then cleared */
	assert_null(api.get_pid);
}

static void test_once_keeps_the_first_result(void **state)
{
	static struct dlib_once once = DLIB_ONCE_INIT, once_ok = DLIB_ONCE_INIT;
	struct libc_api api = {0};
	struct err e;
	(void)state;
	for (int i = 0; i < 2; i++) {
		memset(&e, 0, sizeof e);
		assert_true(dlib_load_once(&once, "libaccord-missing.so.0", "accord-missing1", libc_syms, 2, &api,
					   sizeof api, &e) < 0);
		assert_int_equal(e.code, ERR_INTERNAL);
		assert_non_null(strstr(e.msg, "cannot load libaccord-missing.so.0 (package accord-missing1)"));
		assert_null(api.str_len);
	}
	/* a later success of the same library would not be tried: that once is spent */
	assert_true(dlib_load_once(&once, "libc.so.6", "libc6", libc_syms, 2, &api, sizeof api, &e) < 0);
	assert_null(api.str_len);
	assert_int_equal(dlib_load_once(&once_ok, "libc.so.6", "libc6", libc_syms, 2, &api, sizeof api, &e), 0);
	assert_int_equal(api.str_len("abc"), 3);
	assert_int_equal(dlib_load_once(&once_ok, "libc.so.6", "libc6", libc_syms, 2, &api, sizeof api, &e), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_fills_the_table),
	    cmocka_unit_test(test_missing_library),
	    cmocka_unit_test(test_missing_symbol_leaves_the_table_empty),
	    cmocka_unit_test(test_once_keeps_the_first_result),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
