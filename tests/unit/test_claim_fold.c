/* Unit tests for the claim folded into the end of the last process (queue/internal.h
 * queue_claim_in_end): the next due process is claimed inside the end's transaction, so
 * that the two are committed — or undone — together; none is claimed while the node stops;
 * the claim leaves the end alone when nothing is due.  On SQLite, or PostgreSQL under
 * `scripts/pg-cluster run` (unit_store.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/str.h"
#include "queue/internal.h"

#include "unit_store.h"

#define ENDS "0b6a4a49-52a8-4f6c-9a55-3d5cb1b5f0a1"
#define NEXT "7d1e6a70-1111-4c2a-8d5a-000000000002"

static char dir[64];
static struct store *store;
static struct store_conn *db;
static struct queue q;

static void exec_ok(const char *sql)
{
	struct err e;
	if (store_exec(db, sql, &e))
		fail_msg("%s: %s", sql, e.msg);
}

static int setup(void **state)
{
	char url[700];
	struct err e;
	(void)state;

	assert_int_equal(str_fmt(dir, sizeof dir, "/tmp/accord-fold-test-XXXXXX"), 0);
	assert_non_null(mkdtemp(dir));
	assert_int_equal(unit_store_url(dir, "unit_claim_fold", url, sizeof url), 0);
	store = store_open(url, &e);
	if (!store)
		fail_msg("store_open: %s", e.msg);
	db = store_conn(store, &e);
	assert_non_null(db);
	pthread_mutex_init(&q.lock, NULL);
	q.node_id = "node-1";
	exec_ok("INSERT INTO processes (instance_id, org_id, initiator_id, initiator, status, created_at,"
		" last_updated_at, entry_point) VALUES ('" ENDS "', 'o', 'u', 'admin', 'RUNNING', 1, 1, 'default'),"
		" ('" NEXT "', 'o', 'u', 'admin', 'ENQUEUED', 2, 2, 'default')");
	return 0;
}

static int teardown(void **state)
{
	char cmd[96];
	(void)state;

	store_close(store);
	pthread_mutex_destroy(&q.lock);
	assert_int_equal(str_fmt(cmd, sizeof cmd, "rm -rf %s", dir), 0);
	return system(cmd) == 0 ? 0 : -1;
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

/* The end's transaction as the supervisor opens it, with the end recorded in it. */
static void begin_end(void)
{
	struct err e;

	assert_int_equal(store_tx_begin_rows(db, &e), 0);
	assert_int_equal(store_process_transition(db, ENDS, PS_BIT(PS_RUNNING), PS_FINISHED, &e), 0);
}

static void test_undone_with_the_end(void **state)
{
	struct process p;
	(void)state;

	begin_end();
	assert_true(queue_claim_in_end(&q, db, &p));
	assert_string_equal(p.instance_id, NEXT);
	assert_int_equal(p.status, PS_STARTING);
	store_process_cleanup(&p);
	store_tx_rollback(db);
	assert_string_equal(status_of(ENDS), "RUNNING");
	assert_string_equal(status_of(NEXT), "ENQUEUED");
}

static void test_none_while_stopping(void **state)
{
	struct process p;
	struct err e;
	(void)state;

	q.stopping = true;
	begin_end();
	assert_false(queue_claim_in_end(&q, db, &p));
	assert_int_equal(store_tx_commit(db, &e), 0);
	q.stopping = false;
	assert_string_equal(status_of(ENDS), "FINISHED");
	assert_string_equal(status_of(NEXT), "ENQUEUED");
	exec_ok("UPDATE processes SET status = 'RUNNING' WHERE instance_id = '" ENDS "'");
}

static void test_committed_with_the_end(void **state)
{
	struct process p;
	struct err e;
	json_t *hist = NULL;
	(void)state;

	begin_end();
	assert_true(queue_claim_in_end(&q, db, &p));
	assert_string_equal(p.instance_id, NEXT);
	store_process_cleanup(&p);
	assert_int_equal(store_tx_commit(db, &e), 0);
	assert_string_equal(status_of(ENDS), "FINISHED");
	assert_string_equal(status_of(NEXT), "STARTING");
	assert_int_equal(store_process_history(db, NEXT, &hist, &e), 0);
	assert_int_equal(json_array_size(hist), 1); /* rows made by hand: the claim's change alone */
	assert_string_equal(json_string_value(json_object_get(json_array_get(hist, 0), "status")), "STARTING");
	json_decref(hist);
	/* nothing due any more: the end is kept, nothing claimed */
	exec_ok("UPDATE processes SET status = 'RUNNING' WHERE instance_id = '" NEXT "'");
	assert_int_equal(store_tx_begin_rows(db, &e), 0);
	assert_int_equal(store_process_transition(db, NEXT, PS_BIT(PS_RUNNING), PS_FINISHED, &e), 0);
	assert_false(queue_claim_in_end(&q, db, &p));
	assert_int_equal(store_tx_commit(db, &e), 0);
	assert_string_equal(status_of(NEXT), "FINISHED");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_undone_with_the_end),
	    cmocka_unit_test(test_none_while_stopping),
	    cmocka_unit_test(test_committed_with_the_end),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
