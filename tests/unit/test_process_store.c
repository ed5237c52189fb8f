/* Unit tests for the process log, event and attachment stores on a temporary SQLite
 * store, and for the log watch: exact bytes across chunk boundaries, event filters and
 * their Concord shape, attachment names, checkpoints, callbacks woken only for their
 * process.  Also suspend deadlines and exclusive groups (store/process_timers.h), and the
 * claim folded into the end of the last process (queue/internal.h queue_claim_in_end): the
 * next due process is claimed inside the end's transaction, so that the two are committed —
 * or undone — together; none is claimed while the node stops, nothing when none is due. */
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
#include "queue/supervise/logwatch.h"
#include "queue/queue.h"
#include "store/process_attachments.h"
#include "store/process_checkpoints.h"
#include "store/process_events.h"
#include "store/process_logs.h"
#include "store/process_timers.h"

#include "unit_store.h"

#define PID "0b6a4a49-52a8-4f6c-9a55-3d5cb1b5f0a1"
#define PID2 "7d1e6a70-1111-4c2a-8d5a-000000000002"
#define PID3 "7d1e6a70-1111-4c2a-8d5a-000000000003"
#define ENDS "7d1e6a70-1111-4c2a-8d5a-000000000004"
#define NEXT "7d1e6a70-1111-4c2a-8d5a-000000000005"

static char dir[64];
static struct store *store;
static struct store_conn *db;
static struct queue q = {.node_id = "node-1", .lock = PTHREAD_MUTEX_INITIALIZER};

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

	assert_int_equal(str_fmt(dir, sizeof dir, "/tmp/accord-proc-test-XXXXXX"), 0);
	assert_non_null(mkdtemp(dir));
	assert_int_equal(unit_store_url(dir, "unit_process_store", url, sizeof url), 0);
	store = store_open(url, &e);
	if (!store)
		fail_msg("store_open: %s", e.msg);
	db = store_conn(store, &e);
	assert_non_null(db);
	exec_ok("INSERT INTO processes (instance_id, org_id, initiator_id, initiator, status, created_at,"
		" last_updated_at, entry_point) VALUES ('" PID "', 'o', 'u', 'admin', 'RUNNING', 1, 1, 'default'),"
		" ('" PID2 "', 'o', 'u', 'admin', 'RUNNING', 1, 1, 'default')");
	return 0;
}

static int teardown(void **state)
{
	char cmd[96];
	(void)state;

	store_close(store);
	assert_int_equal(str_fmt(cmd, sizeof cmd, "rm -rf %s", dir), 0);
	if (system(cmd) != 0)
		return -1;
	return 0;
}

static void append(const char *id, const char *s, uint64_t want_size)
{
	struct err e;
	uint64_t size = 0;

	assert_int_equal(store_process_log_append(db, id, s, strlen(s), &size, &e), 0);
	assert_int_equal(size, want_size);
}

static void expect_read(uint64_t off, uint64_t len, const char *want)
{
	struct buf b;
	struct err e;

	buf_init(&b, 0);
	assert_int_equal(store_process_log_read(db, PID, off, len, &b, &e), 0);
	assert_int_equal(b.len, strlen(want));
	assert_memory_equal(b.data ? b.data : "", want, b.len);
	buf_cleanup(&b);
}

static void test_log(void **state)
{
	struct err e;
	uint64_t size = 99;
	(void)state;

	assert_int_equal(store_process_log_size(db, PID, &size, &e), 0);
	assert_int_equal(size, 0);
	expect_read(0, 100, "");
	append(PID, "hello ", 6);
	append(PID, "wor", 9);
	append(PID2, "other process", 13);
	append(PID, "ld\n", 12);
	assert_int_equal(store_process_log_size(db, PID, &size, &e), 0);
	assert_int_equal(size, 12);
	expect_read(0, UINT64_MAX, "hello world\n");
	expect_read(0, 12, "hello world\n");
	expect_read(3, 5, "lo wo");    /* starts inside the first chunk, ends inside the second */
	expect_read(6, 3, "wor");      /* exactly one chunk */
	expect_read(7, 100, "orld\n"); /* clamped to the size */
	expect_read(11, 1, "\n");
	expect_read(12, 10, "");
	expect_read(500, 10, "");
	expect_read(5, 0, "");
	expect_read(UINT64_MAX - 1, 5, "");
	assert_int_not_equal(store_process_log_append(db, PID, "", 0, NULL, &e), 0);
}

static void add_event(const char *type, const char *data, int64_t date)
{
	struct err e;
	json_t *j = json_loads(data, 0, NULL);

	assert_non_null(j);
	assert_int_equal(store_process_event_add(db, PID, type, j, date, &e), 0);
	json_decref(j);
}

static json_t *list(struct event_filter f)
{
	struct err e;
	json_t *out = NULL;

	assert_int_equal(store_process_event_list(db, PID, &f, &out, &e), 0);
	assert_true(json_is_array(out));
	return out;
}

static void test_events(void **state)
{
	json_t *a, *ev;
	(void)state;

	add_event("PROCESS_STATUS", "{\"status\":\"RUNNING\"}", 1000);
	add_event("ELEMENT", "{\"correlationId\":\"c1\",\"phase\":\"pre\",\"in\":{\"x\":1},\"name\":null}", 2000);
	add_event("ELEMENT", "{\"correlationId\":\"c1\",\"phase\":\"POST\",\"out\":{\"y\":2},\"n\":{\"z\":null}}",
		  3000);
	add_event("PROCESS_STATUS", "{\"status\":\"FINISHED\"}", 4000);

	a = list((struct event_filter){0});
	assert_int_equal(json_array_size(a), 4);
	ev = json_array_get(a, 1);
	assert_string_equal(json_string_value(json_object_get(ev, "eventType")), "ELEMENT");
	assert_int_equal(json_integer_value(json_object_get(ev, "seqId")),
			 json_integer_value(json_object_get(json_array_get(a, 0), "seqId")) + 1);
	assert_string_equal(json_string_value(json_object_get(ev, "eventDate")), "1970-01-01T00:00:02.000Z");
	assert_int_equal(strlen(json_string_value(json_object_get(ev, "id"))), 36);
	assert_null(json_object_get(json_object_get(ev, "data"), "in"));   /* not includeAll */
	assert_null(json_object_get(json_object_get(ev, "data"), "name")); /* nulls stripped */
	assert_int_equal(json_object_size(json_object_get(json_object_get(json_array_get(a, 2), "data"), "n")), 0);
	json_decref(a);

	a = list((struct event_filter){.include_all = true});
	assert_non_null(json_object_get(json_object_get(json_array_get(a, 1), "data"), "in"));
	assert_non_null(json_object_get(json_object_get(json_array_get(a, 2), "data"), "out"));
	json_decref(a);

	a = list((struct event_filter){.type = "PROCESS_STATUS"});
	assert_int_equal(json_array_size(a), 2);
	json_decref(a);
	a = list((struct event_filter){.after = 3000});
	assert_int_equal(json_array_size(a), 2);
	json_decref(a);
	a = list((struct event_filter){.phase = "POST", .correlation_id = "c1"});
	assert_int_equal(json_array_size(a), 1);
	json_decref(a);
	a = list((struct event_filter){.correlation_id = "nope"});
	assert_int_equal(json_array_size(a), 0);
	json_decref(a);
	a = list((struct event_filter){.limit = 3});
	assert_int_equal(json_array_size(a), 3);
	ev = list((struct event_filter){.from_id = json_integer_value(json_object_get(json_array_get(a, 2), "seqId"))});
	assert_int_equal(json_array_size(ev), 1);
	assert_string_equal(
	    json_string_value(json_object_get(json_object_get(json_array_get(ev, 0), "data"), "status")), "FINISHED");
	json_decref(ev);
	json_decref(a);
}

static void test_attachments(void **state)
{
	struct err e;
	json_t *names;
	void *data;
	size_t len;
	(void)state;

	assert_int_equal(store_process_attachment_put(db, PID, "out.json", "{}", 2, &e), 0);
	assert_int_equal(store_process_attachment_put(db, PID, "reports/a.txt", "old", 3, &e), 0);
	assert_int_equal(store_process_attachment_put(db, PID, "reports/a.txt", "a\0b", 3, &e), 0);
	assert_int_equal(store_process_attachment_list(db, PID, &names, &e), 0);
	assert_int_equal(json_array_size(names), 2);
	assert_string_equal(json_string_value(json_array_get(names, 0)), "out.json");
	assert_string_equal(json_string_value(json_array_get(names, 1)), "reports/a.txt");
	json_decref(names);
	assert_int_equal(store_process_attachment_get(db, PID, "reports/a.txt", &data, &len, &e), 0);
	assert_int_equal(len, 3);
	assert_memory_equal(data, "a\0b", 3);
	free(data);
	assert_int_equal(store_process_attachment_get(db, PID, "missing", &data, &len, &e), -ERR_NOT_FOUND);
	assert_int_equal(store_process_attachment_list(db, PID2, &names, &e), 0);
	assert_int_equal(json_array_size(names), 0);
	json_decref(names);
}

static void count(void *ctx)
{
	(*(int *)ctx)++;
}

static void test_logwatch(void **state)
{
	int a = 0, b = 0;
	struct logwatch_sub *sa = logwatch_subscribe(PID, count, &a);
	struct logwatch_sub *sb = logwatch_subscribe(PID2, count, &b);
	(void)state;

	assert_non_null(sa);
	assert_non_null(sb);
	logwatch_notify(PID);
	logwatch_notify(PID);
	logwatch_end(PID2);
	logwatch_notify("unknown");
	assert_int_equal(a, 2);
	assert_int_equal(b, 1);
	logwatch_unsubscribe(sa);
	logwatch_notify(PID);
	assert_int_equal(a, 2);
	logwatch_unsubscribe(sb);
	logwatch_unsubscribe(NULL);
}

/* SQL text for an optional string or number (test data only: no quotes inside). */
static const char *opt(char *buf, size_t n, const char *v, int64_t num)
{
	if (v)
		assert_int_equal(str_fmt(buf, n, "'%s'", v), 0);
	else if (num)
		assert_int_equal(str_fmt(buf, n, "%lld", (long long)num), 0);
	else
		assert_int_equal(str_fmt(buf, n, "NULL"), 0);
	return buf;
}

static void add(const char *id, const char *status, int64_t created, int64_t updated, int64_t suspend_s,
		const char *group, const char *mode)
{
	char sql[1024], s[32], g[160], m[32];

	assert_int_equal(
	    str_fmt(
		sql, sizeof sql,
		"INSERT INTO processes (instance_id, org_id, project_id, initiator_id, initiator, status, created_at,"
		" last_updated_at, suspend_timeout_s, entry_point, exclusive_group, exclusive_mode)"
		" VALUES ('%s', 'o', 'p', 'u', 'admin', '%s', %lld, %lld, %s, 'default', %s, %s)",
		id, status, (long long)created, (long long)updated, opt(s, sizeof s, NULL, suspend_s),
		opt(g, sizeof g, group, 0), opt(m, sizeof m, mode, 0)),
	    0);
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
	assert_string_equal(status_of("c2"), "STARTING"); /* the dispatcher logs why, then cancels it */
	add("o1", "RUNNING", 1, 1, 0, "o", "cancelOld");
	add("o2", "ENQUEUED", 2, 2, 0, "o", "cancelOld");
	add("o3", "STARTING", 3, 3, 0, "o", "cancelOld");
	add("o4", "ENQUEUED", 4, 4, 0, "o", "cancelOld");
	claim("o3", EXCL_CANCEL_OLD, 2); /* o1 and o2, not the newer o4 */
	assert_string_equal(status_of("o3"), "STARTING");
}

/* queue/queue.h: queue_process_ended takes a NULL queue (no queue on this node): what
 * follows an end that lives in the store still happens — the next of its group runs. */
static void test_ended_without_queue(void **state)
{
	struct err e;
	(void)state;

	add("n1", "RUNNING", 1, 1, 0, "nq", "wait");
	add("n2", "WAITING", 2, 2, 0, "nq", "wait");
	assert_int_equal(store_process_transition(db, "n1", PS_BIT(PS_RUNNING), PS_FINISHED, &e), 0);
	queue_process_ended(NULL, db, "n1", PS_FINISHED);
	assert_string_equal(status_of("n2"), "ENQUEUED");
}

static void test_checkpoints(void **state)
{
	char a[UUID_STR_LEN], b[UUID_STR_LEN], c2[UUID_STR_LEN], found[UUID_STR_LEN], name[16];
	void *data = NULL;
	size_t len = 0;
	json_t *list = NULL;
	struct err e;
	(void)state;

	assert_int_equal(store_process_checkpoint_add(db, PID, "first", "tar-1", 5, a, &e), 0);
	assert_int_equal(store_process_checkpoint_add(db, PID, "loop", "tar-2", 5, b, &e), 0);
	assert_int_equal(store_process_checkpoint_add(db, PID, "loop", "tar-3", 5, c2, &e), 0);
	assert_string_not_equal(b, c2);
	assert_int_equal(store_process_checkpoint_list(db, PID, &list, &e), 0);
	assert_int_equal(json_array_size(list), 3);
	assert_string_equal(json_string_value(json_object_get(json_array_get(list, 0), "id")), a);
	assert_string_equal(json_string_value(json_object_get(json_array_get(list, 2), "name")), "loop");
	assert_non_null(json_string_value(json_object_get(json_array_get(list, 0), "createdAt")));
	json_decref(list);
	/* by name: the latest of that name */
	assert_int_equal(store_process_checkpoint_find(db, PID, "loop", found, &e), 0);
	assert_string_equal(found, c2);
	assert_int_equal(store_process_checkpoint_find(db, PID, "nope", found, &e), -(int)ERR_NOT_FOUND);
	assert_int_equal(store_process_checkpoint_get(db, PID, b, name, sizeof name, &data, &len, &e), 0);
	assert_string_equal(name, "loop");
	assert_int_equal(len, 5);
	assert_memory_equal(data, "tar-2", 5);
	free(data);
	/* another process's checkpoint is not found through this one */
	assert_int_equal(store_process_checkpoint_get(db, PID2, b, name, sizeof name, &data, &len, &e),
			 -(int)ERR_NOT_FOUND);
	assert_null(data);
	assert_int_equal(store_process_checkpoint_list(db, PID2, &list, &e), 0);
	assert_int_equal(json_array_size(list), 0);
	json_decref(list);
	/* deleted with their process */
	exec_ok("INSERT INTO processes (instance_id, org_id, initiator_id, initiator, status, created_at,"
		" last_updated_at, entry_point) VALUES ('" PID3 "', 'o', 'u', 'admin', 'FINISHED', 1, 1, 'default')");
	assert_int_equal(store_process_checkpoint_add(db, PID3, "x1", "t", 1, a, &e), 0);
	exec_ok("DELETE FROM processes WHERE instance_id = '" PID3 "'");
	exec_ok("INSERT INTO processes (instance_id, org_id, initiator_id, initiator, status, created_at,"
		" last_updated_at, entry_point) VALUES ('" PID3 "', 'o', 'u', 'admin', 'FINISHED', 1, 1, 'default')");
	assert_int_equal(store_process_checkpoint_list(db, PID3, &list, &e), 0);
	assert_int_equal(json_array_size(list), 0);
	json_decref(list);
}

/* The end's transaction as the supervisor opens it, with the end recorded in it. */
static void begin_end(void)
{
	struct err e;

	assert_int_equal(store_tx_begin_rows(db, &e), 0);
	assert_int_equal(store_process_transition(db, ENDS, PS_BIT(PS_RUNNING), PS_FINISHED, &e), 0);
}

/* Runs before any other test queues a process: NEXT is the only one due. */
static void test_claim_undone_with_the_end(void **state)
{
	struct process p;
	(void)state;

	exec_ok("INSERT INTO processes (instance_id, org_id, initiator_id, initiator, status, created_at,"
		" last_updated_at, entry_point) VALUES ('" ENDS "', 'o', 'u', 'admin', 'RUNNING', 1, 1, 'default'),"
		" ('" NEXT "', 'o', 'u', 'admin', 'ENQUEUED', 2, 2, 'default')");
	begin_end();
	assert_true(queue_claim_in_end(&q, db, &p));
	assert_string_equal(p.instance_id, NEXT);
	assert_int_equal(p.status, PS_STARTING);
	store_process_cleanup(&p);
	store_tx_rollback(db);
	assert_string_equal(status_of(ENDS), "RUNNING");
	assert_string_equal(status_of(NEXT), "ENQUEUED");
}

static void test_claim_none_while_stopping(void **state)
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

static void test_claim_committed_with_the_end(void **state)
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
	    cmocka_unit_test(test_claim_undone_with_the_end),
	    cmocka_unit_test(test_claim_none_while_stopping),
	    cmocka_unit_test(test_claim_committed_with_the_end),
	    cmocka_unit_test(test_log),
	    cmocka_unit_test(test_events),
	    cmocka_unit_test(test_attachments),
	    cmocka_unit_test(test_checkpoints),
	    cmocka_unit_test(test_logwatch),
	    cmocka_unit_test(test_suspend_deadlines),
	    cmocka_unit_test(test_exclusive),
	    cmocka_unit_test(test_ended_without_queue),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
