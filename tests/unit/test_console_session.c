/* Unit tests for auth/console_session over a temporary SQLite store: a login's token is
 * stored as a hash only; authentication refreshes the last use only when it is due and
 * asks for a worker instead of writing when it may not; idle, logged-out, disabled and
 * deleted users' sessions are refused; a login purges expired rows. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "auth/console_session.h"
#include "base/rand.h"
#include "base/str.h"
#include "store/users.h"

#include "unit_store.h"

#define IDLE_MS 600000 /* 10 minutes: refreshes are due after CONSOLE_REFRESH_MS */

static char dir[64];
static struct store *store;
static struct store_conn *db;

static void exec_ok(const char *sql)
{
	struct err e;
	if (store_exec(db, sql, &e))
		fail_msg("%s: %s", sql, e.msg);
}

static int64_t one_int(const char *sql)
{
	struct err e;
	struct store_stmt *st = store_prepare(db, sql, &e);
	int64_t v;

	assert_non_null(st);
	assert_int_equal(store_step(st, &e), STORE_ROW);
	v = store_col_int64(st, 0);
	store_reset(st);
	return v;
}

static int setup(void **state)
{
	char url[700];
	struct err e;
	(void)state;

	assert_int_equal(str_fmt(dir, sizeof dir, "/tmp/accord-cs-test-XXXXXX"), 0);
	assert_non_null(mkdtemp(dir));
	assert_int_equal(unit_store_url(dir, "unit_console_session", url, sizeof url), 0);
	store = store_open(url, &e);
	if (!store)
		fail_msg("store_open: %s", e.msg);
	db = store_conn(store, &e);
	assert_non_null(db);
	exec_ok("INSERT INTO users (id, username, created_at, updated_at) VALUES"
		" ('11111111-2222-4333-8444-555555555555', 'carla', 1, 1)");
	return 0;
}

static int teardown(void **state)
{
	char cmd[96];
	(void)state;

	store_close(store);
	if (str_fmt(cmd, sizeof cmd, "rm -rf %s", dir))
		return -1;
	return system(cmd) != 0 ? -1 : 0;
}

static void test_login_and_refresh(void **state)
{
	static const char SQL_SEEN[] = "SELECT last_seen_at FROM console_sessions";
	struct console_login l;
	struct principal who;
	struct err e;
	int64_t seen;
	(void)state;

	exec_ok("DELETE FROM console_sessions");
	assert_int_equal(console_session_create(db, ADMIN_USER_ID, IDLE_MS, &l, &e), 0);
	assert_int_equal(strlen(l.token), CONSOLE_TOKEN_LEN - 1);
	assert_true(strlen(l.csrf) >= 32);
	assert_int_equal(one_int("SELECT length(token_hash) FROM console_sessions"), CONSOLE_SESSION_HASH_LEN);

	assert_int_equal(console_session_auth(db, l.token, IDLE_MS, false, &who, &e), 0);
	assert_int_equal(who.method, AUTH_CONSOLE);
	assert_string_equal(who.user.id, ADMIN_USER_ID);
	assert_string_equal(who.csrf_token, l.csrf);
	assert_true(console_session_csrf_ok(&who, l.csrf));

	/* a refresh falls due: without writes allowed nothing changes, and the caller is told */
	exec_ok("UPDATE console_sessions SET last_seen_at = last_seen_at - 61000");
	seen = one_int(SQL_SEEN);
	assert_int_equal(console_session_auth(db, l.token, IDLE_MS, false, &who, &e), CONSOLE_SESSION_REFRESH);
	assert_int_equal(who.method, AUTH_NONE);
	assert_int_equal(one_int(SQL_SEEN), seen);
	assert_int_equal(console_session_auth(db, l.token, IDLE_MS, true, &who, &e), 0);
	assert_true(one_int(SQL_SEEN) > seen);
	/* and is not due again at once */
	assert_int_equal(console_session_auth(db, l.token, IDLE_MS, false, &who, &e), 0);

	/* idle past the limit */
	exec_ok("UPDATE console_sessions SET last_seen_at = last_seen_at - 600001");
	assert_int_equal(console_session_auth(db, l.token, IDLE_MS, true, &who, &e), -ERR_UNAUTH);
	assert_int_equal(who.method, AUTH_NONE);
	/* the next login purges it */
	assert_int_equal(console_session_create(db, ADMIN_USER_ID, IDLE_MS, &l, &e), 0);
	assert_int_equal(one_int("SELECT count(*) FROM console_sessions"), 1);
}

static void test_refused_sessions(void **state)
{
	struct console_login l, other;
	struct principal who;
	struct err e;
	char wrong[CONSOLE_TOKEN_LEN];
	(void)state;

	assert_int_equal(console_session_create(db, "11111111-2222-4333-8444-555555555555", IDLE_MS, &l, &e), 0);
	assert_int_equal(console_session_create(db, ADMIN_USER_ID, IDLE_MS, &other, &e), 0);
	assert_int_equal(console_session_auth(db, l.token, IDLE_MS, true, &who, &e), 0);
	assert_string_equal(who.user.username, "carla");

	memcpy(wrong, l.token, sizeof wrong);
	wrong[0] = wrong[0] == 'A' ? 'B' : 'A';
	assert_int_equal(console_session_auth(db, wrong, IDLE_MS, true, &who, &e), -ERR_UNAUTH);
	assert_int_equal(console_session_auth(db, "short", IDLE_MS, true, &who, &e), -ERR_UNAUTH);

	exec_ok("UPDATE users SET disabled = 1 WHERE username = 'carla'");
	assert_int_equal(console_session_auth(db, l.token, IDLE_MS, true, &who, &e), -ERR_UNAUTH);
	exec_ok("UPDATE users SET disabled = 0 WHERE username = 'carla'");
	assert_int_equal(console_session_auth(db, l.token, IDLE_MS, true, &who, &e), 0);

	/* logout ends this session only */
	assert_int_equal(console_session_end(db, l.token, &e), 0);
	assert_int_equal(console_session_auth(db, l.token, IDLE_MS, true, &who, &e), -ERR_UNAUTH);
	assert_int_equal(console_session_auth(db, other.token, IDLE_MS, true, &who, &e), 0);
	assert_int_equal(console_session_end(db, l.token, &e), 0);

	/* a deleted user's sessions go with it */
	assert_int_equal(console_session_create(db, "11111111-2222-4333-8444-555555555555", IDLE_MS, &l, &e), 0);
	exec_ok("DELETE FROM users WHERE username = 'carla'");
	assert_int_equal(console_session_auth(db, l.token, IDLE_MS, true, &who, &e), -ERR_UNAUTH);
	assert_int_equal(one_int("SELECT count(*) FROM console_sessions WHERE user_id <> '" ADMIN_USER_ID "'"), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_login_and_refresh),
	    cmocka_unit_test(test_refused_sessions),
	};
	rand_init();
	return cmocka_run_group_tests_name("console_session", tests, setup, teardown);
}
