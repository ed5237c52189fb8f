/* Unit tests for auth/: API key generation and hashing, password hashing, rbac levels
 * and role parsing, the console session cookie and CSRF comparison. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "auth/authn.h"
#include "auth/console_session.h"
#include "auth/password.h"
#include "base/b64.h"
#include "base/rand.h"
#include "store/access.h"
#include "store/users.h"

static void test_apikey_new_and_hash(void **state)
{
	char a[128], b[128];
	uint8_t ha[APIKEY_HASH_LEN], hb[APIKEY_HASH_LEN], again[APIKEY_HASH_LEN];
	struct err e;
	size_t n;
	unsigned char *raw;
	(void)state;

	authn_apikey_new(a, sizeof a, ha);
	authn_apikey_new(b, sizeof b, hb);
	assert_string_not_equal(a, b);
	assert_memory_not_equal(ha, hb, APIKEY_HASH_LEN);
	assert_int_equal(strlen(a), 43); /* 32 bytes, Base64 without padding */
	raw = b64_decode(a, strlen(a), &n, &e);
	assert_non_null(raw);
	assert_int_equal(n, APIKEY_BYTES);
	free(raw);
	assert_int_equal(authn_apikey_hash(a, again, &e), 0);
	assert_memory_equal(ha, again, APIKEY_HASH_LEN);
	/* padded form hashes the same */
	strncat(a, "=", sizeof a - strlen(a) - 1);
	assert_int_equal(authn_apikey_hash(a, again, &e), 0);
	assert_memory_equal(ha, again, APIKEY_HASH_LEN);
	assert_true(authn_apikey_hash("not base64!", again, &e) < 0);
	assert_true(authn_apikey_hash("c2hvcnQ", again, &e) < 0); /* "short": under 16 bytes */
}

static void test_password_hash(void **state)
{
	char h[PASSWORD_HASH_MAX];
	struct err e;
	(void)state;

	assert_int_equal(password_hash("Correct-horse-1", h, &e), 0);
	assert_non_null(strstr(h, "$argon2id$"));
	assert_true(password_verify(h, "Correct-horse-1"));
	assert_false(password_verify(h, "correct-horse-1"));
	assert_false(password_verify(h, ""));
	assert_false(password_verify("garbage", "Correct-horse-1"));
}

static void test_levels_and_roles(void **state)
{
	enum access_level l;
	enum team_role r;
	struct err e;
	unsigned roles;
	char buf[128];
	const char *names[] = {"concordAdmin", "concordSystemReader"};
	const char *bad[] = {"root"};
	(void)state;

	assert_int_equal(access_level_parse("WRITER", &l, &e), 0);
	assert_int_equal(l, ACCESS_WRITER);
	assert_true(ACCESS_READER < ACCESS_WRITER && ACCESS_WRITER < ACCESS_OWNER);
	assert_true(access_level_parse("writer", &l, &e) < 0);
	assert_true(access_level_parse(NULL, &l, &e) < 0);
	assert_int_equal(team_role_parse("MAINTAINER", &r, &e), 0);
	assert_int_equal(r, TEAM_ROLE_MAINTAINER);
	assert_true(team_role_parse("ADMIN", &r, &e) < 0);
	assert_int_equal(user_roles_parse(names, 2, &roles, &e), 0);
	assert_int_equal(roles, ROLE_ADMIN | ROLE_SYSTEM_READER);
	user_roles_format(roles, buf, sizeof buf);
	assert_string_equal(buf, "[\"concordAdmin\",\"concordSystemReader\"]");
	user_roles_format(0, buf, sizeof buf);
	assert_string_equal(buf, "[]");
	assert_true(user_roles_parse(bad, 1, &roles, &e) < 0);
	assert_non_null(strstr(e.msg, "root"));
}

#define TOK "abcdefghijklmnopqrstuvwxyzABCDEFGHIJK-_0123"

static void test_console_cookie(void **state)
{
	char t[CONSOLE_TOKEN_LEN];
	(void)state;

	assert_true(console_session_cookie("accord_session=" TOK, t));
	assert_string_equal(t, TOK);
	assert_true(console_session_cookie("a=b;  accord_session=\"" TOK "\" ; c=d", t));
	assert_string_equal(t, TOK);
	/* the first one counts, even when it is no token */
	assert_false(console_session_cookie("accord_session=short; accord_session=" TOK, t));
	assert_string_equal(t, "");
	assert_false(console_session_cookie("xaccord_session=" TOK, t));
	assert_false(console_session_cookie("accord_session=" TOK "x", t));
	assert_false(console_session_cookie("accord_session="
					    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJK+/0123",
					    t));
	assert_false(console_session_cookie("accord_session=", t));
	assert_false(console_session_cookie("", t));
	assert_false(console_session_cookie(NULL, t));
}

static void test_console_csrf(void **state)
{
	struct principal who = {.method = AUTH_CONSOLE};
	(void)state;

	snprintf(who.csrf_token, sizeof who.csrf_token, "%s", "csrf-token-0123456789");
	assert_true(console_session_csrf_ok(&who, "csrf-token-0123456789"));
	assert_false(console_session_csrf_ok(&who, "csrf-token-012345678"));
	assert_false(console_session_csrf_ok(&who, "csrf-token-0123456789x"));
	assert_false(console_session_csrf_ok(&who, "Csrf-token-0123456789"));
	assert_false(console_session_csrf_ok(&who, ""));
	assert_false(console_session_csrf_ok(&who, NULL));
	who.method = AUTH_APIKEY;
	assert_false(console_session_csrf_ok(&who, "csrf-token-0123456789"));
	who.method = AUTH_CONSOLE;
	who.csrf_token[0] = '\0';
	assert_false(console_session_csrf_ok(&who, ""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_apikey_new_and_hash), cmocka_unit_test(test_password_hash),
	    cmocka_unit_test(test_levels_and_roles),	cmocka_unit_test(test_console_cookie),
	    cmocka_unit_test(test_console_csrf),
	};
	rand_init();
	return cmocka_run_group_tests_name("auth", tests, NULL, NULL);
}
