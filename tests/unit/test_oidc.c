/* Unit tests for the OIDC realm's pieces that need no provider: compact JWTs split and
 * decoded (auth/jwt.c) and the login's state, nonce and PKCE values (auth/oidc_login.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sodium.h>

#include "auth/jwt.h"
#include "auth/oidc_login.h"
#include "base/b64.h"

/* header {"alg":"RS256","kid":"k1"}, claims {"sub":"a"}, signature bytes 01 02 03 */
#define TOKEN "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiJhIn0.AQID"

static void test_jwt_parse(void **state)
{
	struct jwt t;
	struct err e;
	(void)state;

	assert_int_equal(jwt_parse(TOKEN, &t, &e), 0);
	assert_string_equal(json_string_value(json_object_get(t.header, "kid")), "k1");
	assert_string_equal(json_string_value(json_object_get(t.claims, "sub")), "a");
	assert_int_equal(t.sig_len, 3);
	assert_int_equal(t.sig[2], 3);
	assert_int_equal(t.signed_len, strlen(TOKEN) - strlen(".AQID"));
	jwt_cleanup(&t);

	assert_int_equal(jwt_parse("eyJhIjoxfQ.eyJzdWIiOiJhIn0", &t, &e), -ERR_UNAUTH); /* two parts */
	assert_int_equal(jwt_parse("eyJhIjoxfQ.W10.AQID", &t, &e), -ERR_UNAUTH);	     /* claims an array */
	assert_int_equal(jwt_parse("eyJhIjoxfQ.eyJzdWIiOiJhIn0.", &t, &e), -ERR_UNAUTH);  /* no signature */
	assert_int_equal(jwt_parse("eyJhIjoxfQ.eyJzdWIiOiJhIn0.AQ+D", &t, &e), -ERR_UNAUTH); /* not Base64url */
	assert_true(jwt_looks_like(TOKEN));
	assert_false(jwt_looks_like("YWJjZGVmZ2hpamtsbW5vcA")); /* an API key */
	assert_false(jwt_looks_like("a.b.c.d"));
}

static void test_login_values(void **state)
{
	unsigned char key[32] = {7}, other[32] = {8}, h[32];
	struct oidc_login l, back;
	struct err e;
	int64_t now = 1700000000000;
	char *challenge;
	(void)state;

	oidc_login_new(key, now, &l);
	assert_int_equal(oidc_login_of(key, l.state, now + 1000, &back, &e), 0);
	assert_string_equal(back.nonce, l.nonce);
	assert_string_equal(back.verifier, l.verifier);
	/* S256: the challenge is Base64url of SHA-256 of the verifier; RFC 7636 wants 43+ characters */
	assert_true(strlen(l.verifier) >= 43);
	crypto_hash_sha256(h, (const unsigned char *)l.verifier, strlen(l.verifier));
	challenge = b64_encode(h, sizeof h, B64_URL_NOPAD);
	assert_string_equal(challenge, l.challenge);
	free(challenge);
	/* another key, a changed state, an expired one */
	assert_int_equal(oidc_login_of(other, l.state, now, &back, &e), -ERR_INVALID);
	l.state[3] = l.state[3] == 'A' ? 'B' : 'A';
	assert_int_equal(oidc_login_of(key, l.state, now, &back, &e), -ERR_INVALID);
	oidc_login_new(key, now, &l);
	assert_int_equal(oidc_login_of(key, l.state, now + (OIDC_LOGIN_SECONDS + 1) * 1000LL, &back, &e),
			 -ERR_INVALID);
	assert_non_null(strstr(e.msg, "longer"));
	assert_int_equal(oidc_login_of(key, "", now, &back, &e), -ERR_INVALID);
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_jwt_parse), cmocka_unit_test(test_login_values)};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
