/* Unit tests for src/crypto/projkey.c: per-project value encryption. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/b64.h"
#include "base/rand.h"
#include "crypto/masterkey.h"
#include "crypto/payload.h"
#include "crypto/projkey.h"

static struct masterkey mk, other;
static const char proj_a[] = "5a4f3d0e-0000-4000-8000-00000000000a", proj_b[] = "5a4f3d0e-0000-4000-8000-00000000000b";

static int setup(void **state)
{
	unsigned char raw[MASTERKEY_BYTES];
	(void)state;
	rand_init();
	rand_bytes(raw, sizeof raw);
	masterkey_from_bytes(&mk, raw);
	rand_bytes(raw, sizeof raw);
	masterkey_from_bytes(&other, raw);
	return 0;
}

static void expect_refused(const struct masterkey *k, const char *project, const char *enc)
{
	struct err e;
	char *out = NULL;
	size_t n;
	assert_int_equal(projkey_decrypt(k, project, enc, &out, &n, &e), -ERR_INVALID);
	assert_null(out);
	assert_non_null(strstr(e.msg, "Invalid encrypted value"));
}

static void test_round_trip_and_fresh_nonce(void **state)
{
	struct err e;
	char *a, *b, *out;
	size_t n;
	(void)state;
	a = projkey_encrypt(&mk, proj_a, "my secret value", 15, &e);
	b = projkey_encrypt(&mk, proj_a, "my secret value", 15, &e);
	assert_non_null(a);
	assert_non_null(b);
	assert_string_not_equal(a, b);
	assert_null(strstr(a, "secret"));
	assert_int_equal(projkey_decrypt(&mk, proj_a, a, &out, &n, &e), 0);
	assert_int_equal(n, 15);
	assert_string_equal(out, "my secret value");
	payload_free(out, n + 1);
	free(a);
	free(b);
	a = projkey_encrypt(&mk, proj_a, "", 0, &e);
	assert_int_equal(projkey_decrypt(&mk, proj_a, a, &out, &n, &e), 0);
	assert_int_equal(n, 0);
	payload_free(out, 1);
	free(a);
}

static void test_other_project_key_or_tampering(void **state)
{
	struct err e;
	char *a = projkey_encrypt(&mk, proj_a, "value", 5, &e), *t;
	unsigned char *raw;
	size_t n;
	(void)state;
	expect_refused(&mk, proj_b, a);
	expect_refused(&other, proj_a, a);
	expect_refused(&mk, proj_a, "not base64 !");
	expect_refused(&mk, proj_a, "AAAA");
	expect_refused(&mk, proj_a, "");
	raw = b64_decode(a, strlen(a), &n, &e);
	for (size_t i = 0; i < n; i++) {
		raw[i] ^= 1;
		t = b64_encode(raw, n, B64_STD);
		expect_refused(&mk, proj_a, t);
		free(t);
		raw[i] ^= 1;
	}
	free(raw);
	free(a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_round_trip_and_fresh_nonce),
	    cmocka_unit_test(test_other_project_key_or_tampering),
	};
	return cmocka_run_group_tests_name("projkey", tests, setup, NULL);
}
