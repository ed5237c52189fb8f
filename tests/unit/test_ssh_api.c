/* Unit tests for src/crypto/ssh_api.c: a libssh that cannot be loaded gives a clear error
 * naming the library and its package, every time, and leaves the table empty.  The
 * successful load is exercised by test_crypto (key pairs) and the secrets API tests. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

/* This test's own copy of the module (the Makefile's SSH_SONAME replaced), pointed at a
 * library that does not exist. */
#undef SSH_SONAME
#define SSH_SONAME "libssh-accord-missing.so.0"
#include "../../src/crypto/ssh_api.c"

static void test_missing_library(void **state)
{
	struct err e;
	(void)state;
	assert_true(ssh_api_load(&e) < 0);
	assert_int_equal(e.code, ERR_INTERNAL);
	assert_non_null(strstr(e.msg, "cannot load libssh-accord-missing.so.0 (package libssh-4)"));
	assert_null(ssh.pki_generate);
	assert_null(ssh.key_free);
	assert_null(libcrypto.generate); /* keypair.c then takes libssh's path, which fails alike */
	/* the first result stands: no second attempt, the same message */
	memset(&e, 0, sizeof e);
	assert_true(ssh_api_load(&e) < 0);
	assert_non_null(strstr(e.msg, "cannot load libssh-accord-missing.so.0"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_missing_library),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
