/* Unit tests for the suspend deadlines and exclusive groups of the process store
 * (store/process_timers.h) on a temporary SQLite store. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "store/process_timers.h"

static char dir[64];
static struct store *store;
static struct store_conn *db;

static void exec_ok(const char *sql)
{
	struct err e;
	if (store_exec(db, sql, &e))
		fail_msg("%s: %s", sql, e.msg);
}

static int setup(void **state)
{
	char url[96];
	struct err e;
	(void)state;

	snprintf(dir, sizeof dir, "/tmp/accord-timers-test-XXXXXX");
	assert_non_null(mkdtemp(dir));
	snprintf(url, sizeof url, "sqlite:%s/accord.db", dir);
	store = store_open(url, &e);
	if (!store)
		fail_msg("store_open: %s", e.msg);
	db = store_conn(store, &e);
	assert_non_null(db);
	return 0;
}

static int teardown(void **state)
{
	char cmd[96];
	(void)state;

	store_close(store);
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	return system(cmd) != 0 ? -1 : 0;
}

/* SQL text for an optional string or number (test data only: no quotes inside). */
static const char *opt(char *buf, size_t n, const char *v, int64_t num)
{
	if (v)
		snprintf(buf, n, "'%s'", v);
	else if (num)
		snprintf(buf, n, "%lld", (long long)num);
	else
		snprintf(buf, n, "NULL");
	return buf;
}

static void add(const char *id, const char *status, int64_t created, int64_t updated, int64_t suspend_s,
		const char *group, const char *mode)
{
	char sql[1024], s[32], g[160], m[32];

	snprintf(sql, sizeof sql,
		 "INSERT INTO processes (instance_id, org_id, project_id, initiator_id, initiator, status, created_at,"
		 " last_updated_at, suspend_timeout_s, entry_point, exclusive_group, exclusive_mode)"
		 " VALUES ('%s', 'o', 'p', 'u', 'admin', '%s', %lld, %lld, %s, 'default', %s, %s)",
		 id, status, (long long)created, (long long)updated, opt(s, sizeof s, NULL, suspend_s),
		 opt(g, sizeof g, group, 0), opt(m, sizeof m, mode, 0));
	exec_ok(sql);
}

static const char *status_of(const char *id)
{
	static struct process p;
	struct err e;

	store_process_cleanup(&p);
	if (store_process_get(db, id, &p, &e))
		fail_msg("%s: %s", id, e.msg);
	return proc_status_name(p.status);
}

static void test_suspend_deadlines(void **state)
{
	char ids[4][UUID_STR_LEN];
	struct err e;
	int64_t at;
	(void)state;

	assert_int_equal(store_process_next_suspend_deadline(db, &at, &e), 0);
	assert_int_equal(at, 0);
	add("s1", "SUSPENDED", 1, 10000, 5, NULL, NULL); /* due at 15000 */
	add("s2", "SUSPENDED", 1, 12000, 1, NULL, NULL); /* due at 13000 */
	add("s3", "SUSPENDED", 1, 1000, 0, NULL, NULL);	 /* no timeout */
	add("r1", "RUNNING", 1, 1000, 1, NULL, NULL);	 /* not suspended */
	assert_int_equal(store_process_next_suspend_deadline(db, &at, &e), 0);
	assert_int_equal(at, 13000);
	assert_int_equal(store_process_expire_suspended(db, 12999, ids, 4, &e), 0);
	assert_int_equal(store_process_expire_suspended(db, 14000, ids, 4, &e), 1);
	assert_string_equal(ids[0], "s2");
	assert_string_equal(status_of("s2"), "TIMED_OUT");
	assert_int_equal(store_process_next_suspend_deadline(db, &at, &e), 0);
	assert_int_equal(at, 15000);
	/* a resume got there first: nothing to expire */
	assert_int_equal(store_process_transition(db, "s1", PS_BIT(PS_SUSPENDED), PS_RESUMING, &e), 0);
	assert_int_equal(store_process_expire_suspended(db, 99999, ids, 4, &e), 0);
	assert_string_equal(status_of("s1"), "RESUMING");
	assert_string_equal(status_of("s3"), "SUSPENDED");
	assert_string_equal(status_of("r1"), "RUNNING");
}

static void claim(const char *id, enum excl_verdict want, size_t n_old)
{
	enum excl_verdict v;
	json_t *old = NULL;
	char group[129];
	struct err e;

	assert_int_equal(store_process_exclusive_claim(db, id, group, &v, &old, &e), 0);
	assert_int_equal(v, want);
	assert_int_equal(old ? json_array_size(old) : 0, n_old);
	json_decref(old);
}

static void test_exclusive(void **state)
{
	struct err e;
	(void)state;

	/* wait: the running one holds the group; two claimed at once: the older runs */
	add("w1", "RUNNING", 1, 1, 0, "g", "wait");
	add("w2", "STARTING", 2, 2, 0, "g", "wait");
	add("w3", "STARTING", 3, 3, 0, "g", "wait");
	add("other", "STARTING", 4, 4, 0, "h", "wait");
	add("none", "STARTING", 4, 4, 0, NULL, NULL);
	claim("w3", EXCL_WAIT, 0);
	claim("w2", EXCL_WAIT, 0);
	claim("other", EXCL_RUN, 0);
	claim("none", EXCL_RUN, 0);
	assert_string_equal(status_of("w2"), "WAITING");
	assert_int_equal(store_process_exclusive_release(db, "none", &e), 0);
	assert_int_equal(store_process_transition(db, "w1", PS_BIT(PS_RUNNING), PS_FINISHED, &e), 0);
	assert_int_equal(store_process_exclusive_release(db, "w1", &e), 1);
	assert_string_equal(status_of("w2"), "ENQUEUED"); /* the oldest first */
	assert_string_equal(status_of("w3"), "WAITING");
	/* w3 is claimed before w2 (both STARTING): the older w2 is ahead of it */
	assert_int_equal(store_process_transition(db, "w2", PS_BIT(PS_ENQUEUED), PS_STARTING, &e), 0);
	assert_int_equal(store_process_transition(db, "w3", PS_BIT(PS_WAITING), PS_STARTING, &e), 0);
	claim("w3", EXCL_WAIT, 0);
	claim("w2", EXCL_RUN, 0);

	/* cancel and cancelOld */
	add("c1", "SUSPENDED", 1, 1, 0, "c", "cancel");
	add("c2", "STARTING", 2, 2, 0, "c", "cancel");
	claim("c2", EXCL_CANCEL, 0);
	assert_string_equal(status_of("c2"), "CANCELLED");
	add("o1", "RUNNING", 1, 1, 0, "o", "cancelOld");
	add("o2", "ENQUEUED", 2, 2, 0, "o", "cancelOld");
	add("o3", "STARTING", 3, 3, 0, "o", "cancelOld");
	add("o4", "ENQUEUED", 4, 4, 0, "o", "cancelOld");
	claim("o3", EXCL_CANCEL_OLD, 2); /* o1 and o2, not the newer o4 */
	assert_string_equal(status_of("o3"), "STARTING");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_suspend_deadlines, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_exclusive, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
