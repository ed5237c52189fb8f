#include "store/processes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/datetime.h"
#include "base/jsonx.h"
#include "base/limits.h"
#include "base/metrics.h"
#include "base/str.h"
#include "store/audit.h"
#include "store/policies.h"
#include "store/process_internal.h"
#include "store/process_ops.h"
#include "store/process_scopes.h"

static const char *const status_names[PS__COUNT] = {
    "NEW",	 "PREPARING", "ENQUEUED", "WAITING",   "STARTING",  "RUNNING",
    "SUSPENDED", "RESUMING",  "FINISHED", "FAILED", "CANCELLED", "TIMED_OUT",
};

const char *proc_status_name(enum proc_status s)
{
	return (unsigned)s < PS__COUNT ? status_names[s] : "UNKNOWN";
}

int proc_status_parse(const char *name)
{
	for (int i = 0; i < PS__COUNT; i++)
		if (strcmp(status_names[i], name) == 0)
			return i;
	return -1;
}

void store_process_cleanup(struct process *p)
{
	json_decref(p->tags);
	json_decref(p->meta);
	json_decref(p->handlers);
	json_decref(p->resume_args);
	json_decref(p->repo);
	json_decref(p->triggered_by);
	p->tags = p->meta = p->handlers = p->resume_args = p->repo = p->triggered_by = NULL;
}

#define CP(dst, i) store_col_copy(st, (i), (dst), sizeof(dst))

#define PROC_COLS                                                                                                      \
	"p.instance_id, p.kind, p.parent_instance_id, p.org_id, o.name, p.project_id, pr.name, p.initiator_id,"        \
	" p.initiator, p.status, p.created_at, p.last_updated_at, p.last_run_at, p.start_at, p.total_runtime_ms,"      \
	" p.timeout_s, p.suspend_timeout_s, p.entry_point, p.tags, p.meta, p.handlers, p.repo_id, p.repo_name,"        \
	" p.repo_url, p.repo_path, p.commit_id, p.commit_msg, p.commit_author, p.triggered_by, p.disabled"
#define PROC_FROM " FROM processes p LEFT JOIN orgs o ON o.id = p.org_id LEFT JOIN projects pr ON pr.id = p.project_id"

static json_t *col_json(struct store_stmt *st, int i)
{
	const char *t = store_col_text(st, i);
	return t ? json_loads(t, 0, NULL) : NULL;
}

/* The process record's repository fields, in the order of PROC_COLS from `first`. */
static const char *const repo_keys[] = {"repoId",   "repoName",	 "repoUrl",	"repoPath",
					"commitId", "commitMsg", "commitAuthor"};
#define N_REPO_KEYS (sizeof repo_keys / sizeof repo_keys[0])

static json_t *read_repo(struct store_stmt *st, int first)
{
	json_t *v = NULL;

	for (size_t i = 0; i < N_REPO_KEYS; i++) {
		const char *t = store_col_text(st, first + (int)i);
		if (!t)
			continue;
		if (!v)
			v = json_object();
		json_object_set_new(v, repo_keys[i], json_string(t));
	}
	return v;
}

static void read_process(struct store_stmt *st, void *out)
{
	struct process *p = out;
	int s;

	memset(p, 0, sizeof *p);
	CP(p->instance_id, 0);
	CP(p->kind, 1);
	CP(p->parent_instance_id, 2);
	CP(p->org_id, 3);
	CP(p->org_name, 4);
	CP(p->project_id, 5);
	CP(p->project_name, 6);
	CP(p->initiator_id, 7);
	CP(p->initiator, 8);
	s = proc_status_parse(store_col_text(st, 9) ? store_col_text(st, 9) : "");
	p->status = s < 0 ? PS_FAILED : (enum proc_status)s;
	p->created_at = store_col_int64(st, 10);
	p->last_updated_at = store_col_int64(st, 11);
	p->last_run_at = store_col_int64(st, 12);
	p->start_at = store_col_int64(st, 13);
	p->total_runtime_ms = store_col_int64(st, 14);
	p->timeout_s = store_col_int64(st, 15);
	p->suspend_timeout_s = store_col_int64(st, 16);
	CP(p->entry_point, 17);
	p->tags = col_json(st, 18);
	p->meta = col_json(st, 19);
	if (!json_is_object(p->meta)) {
		json_decref(p->meta);
		p->meta = json_object();
	}
	p->handlers = col_json(st, 20);
	p->repo = read_repo(st, 21);
	p->triggered_by = col_json(st, 21 + (int)N_REPO_KEYS);
	p->disabled = store_col_int64(st, 22 + (int)N_REPO_KEYS) != 0;
}

static void bind_opt(struct store_stmt *st, int i, const char *v)
{
	store_bind_text(st, i, v && *v ? v : NULL);
}

static void bind_opt_int(struct store_stmt *st, int i, int64_t v)
{
	if (v)
		store_bind_int64(st, i, v);
	else
		store_bind_null(st, i);
}

/* The PROCESS_STATUS event of one change (inside a transaction): the process's status
 * history is read from these events (store_process_history). */
static int record_status(struct store_conn *c, const char *id, enum proc_status to, int64_t now, struct err *e)
{
	static const char EV[] = "INSERT INTO process_events (id, instance_id, event_type, event_date, data)"
				 " VALUES (?, ?, 'PROCESS_STATUS', ?, ?)";
	char ev_id[UUID_STR_LEN], data[64];
	struct store_stmt *st;

	uuid_v4(ev_id);
	if (str_fmt(data, sizeof data, "{\"status\":\"%s\"}", proc_status_name(to)))
		return err_set(e, ERR_INTERNAL, "status event too long");
	if (!(st = store_prepare(c, EV, e)))
		return -1;
	store_bind_text(st, 1, ev_id);
	store_bind_text(st, 2, id);
	store_bind_int64(st, 3, now);
	store_bind_text(st, 4, data);
	return store_step_done(st, e);
}

/* The top-level scalar meta values as rows of process_meta_keys (replacing the old ones
 * unless the process is new: a DELETE that finds nothing was 7% of a start's transaction,
 * callgrind), with the process's project_id and created_at copied from its row. */
static int write_meta_keys(struct store_conn *c, const char *id, json_t *meta, bool fresh, struct err *e)
{
	static const char DEL[] = "DELETE FROM process_meta_keys WHERE instance_id = ?";
	static const char INS[] = "INSERT INTO process_meta_keys (instance_id, key, value, project_id, created_at)"
				  " SELECT ?, ?, ?, project_id, created_at FROM processes WHERE instance_id = ?";
	struct store_stmt *st;
	const char *k;
	json_t *v;

	if (!fresh) {
		if (!(st = store_prepare(c, DEL, e)))
			return -1;
		store_bind_text(st, 1, id);
		if (store_step_done(st, e))
			return -1;
	}
	json_object_foreach(meta, k, v)
	{
		char num[64];
		const char *text = NULL;
		if (json_is_string(v))
			text = json_string_value(v);
		else if (json_is_integer(v))
			text = str_fmt(num, sizeof num, "%lld", (long long)json_integer_value(v)) ? NULL : num;
		else if (json_is_real(v))
			text = str_fmt(num, sizeof num, "%.17g", json_real_value(v)) ? NULL : num;
		else if (json_is_boolean(v))
			text = json_is_true(v) ? "true" : "false";
		if (!text)
			continue;
		if (!(st = store_prepare(c, INS, e)))
			return -1;
		store_bind_text(st, 1, id);
		store_bind_text(st, 2, k);
		store_bind_text(st, 3, text);
		store_bind_text(st, 4, id);
		if (store_step_done(st, e))
			return -1;
	}
	return 0;
}

/* The row, ENQUEUED at its place in the queue, with where it came from (schema 011: the
 * repository and commit, the trigger): one write of the row and its indexes. */
static int insert_row(struct store_conn *c, const struct process_new *pn, int64_t now, int64_t fair_key,
		      struct err *e)
{
	static const char SQL[] =
	    "INSERT INTO processes (instance_id, kind, parent_instance_id, org_id, project_id, initiator_id, initiator,"
	    " status, created_at, last_updated_at, start_at, timeout_s, suspend_timeout_s, entry_point, tags, meta,"
	    " handlers, session_hash, exclusive_group, exclusive_mode, fair_key, repo_id, repo_name, repo_url,"
	    " repo_path, commit_id, commit_msg, commit_author, triggered_by)"
	    " VALUES (?, ?, ?, ?, ?, ?, ?, 'ENQUEUED', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
	const struct process *p = &pn->p;
	char *tags = p->tags ? jsonx_dump(p->tags) : NULL, *meta = jsonx_dump(p->meta ? p->meta : json_object());
	char *handlers = p->handlers ? jsonx_dump(p->handlers) : NULL;
	char *by = pn->triggered_by ? jsonx_dump(pn->triggered_by) : NULL;
	bool oom = !meta || (p->tags && !tags) || (p->handlers && !handlers) || (pn->triggered_by && !by);
	struct store_stmt *st = oom ? NULL : store_prepare(c, SQL, e);
	int rc = -1;

	if (!st)
		goto out;
	store_bind_text(st, 1, p->instance_id);
	store_bind_text(st, 2, p->kind[0] ? p->kind : "DEFAULT");
	bind_opt(st, 3, p->parent_instance_id);
	store_bind_text(st, 4, p->org_id);
	bind_opt(st, 5, p->project_id);
	store_bind_text(st, 6, p->initiator_id);
	store_bind_text(st, 7, p->initiator);
	store_bind_int64(st, 8, now);
	store_bind_int64(st, 9, now);
	bind_opt_int(st, 10, p->start_at);
	bind_opt_int(st, 11, p->timeout_s);
	bind_opt_int(st, 12, p->suspend_timeout_s);
	store_bind_text(st, 13, p->entry_point);
	store_bind_text(st, 14, tags);
	store_bind_text(st, 15, meta);
	store_bind_text(st, 16, handlers);
	if (pn->session_hash)
		store_bind_blob(st, 17, pn->session_hash, 32);
	else
		store_bind_null(st, 17);
	store_bind_text(st, 18, pn->exclusive_group);
	store_bind_text(st, 19, pn->exclusive_group ? pn->exclusive_mode : NULL);
	store_bind_int64(st, 20, fair_key);
	for (size_t i = 0; i < N_REPO_KEYS; i++) {
		const char *v = json_string_value(json_object_get(pn->repo, repo_keys[i]));
		store_bind_text(st, 21 + (int)i, v && v[0] ? v : NULL);
	}
	store_bind_text(st, 21 + (int)N_REPO_KEYS, by);
	rc = store_step_done(st, e);
out:
	if (oom)
		rc = err_set(e, ERR_INTERNAL, "out of memory");
	free(tags);
	free(meta);
	free(handlers);
	free(by);
	return rc;
}

static int insert_tags(struct store_conn *c, const char *id, json_t *tags, struct err *e)
{
	/* project_id, created_at and status are copied from the process's row (schemas 004,
	 * 010); the status is kept in step by proc_transition_in_tx. */
	static const char SQL[] = "INSERT INTO process_tags (instance_id, tag, project_id, created_at, status)"
				  " SELECT ?, ?, project_id, created_at, status FROM processes WHERE instance_id = ?"
				  " ON CONFLICT DO NOTHING";
	size_t i;
	json_t *t;

	json_array_foreach(tags, i, t)
	{
		struct store_stmt *st = store_prepare(c, SQL, e);
		if (!st)
			return -1;
		store_bind_text(st, 1, id);
		store_bind_text(st, 2, json_string_value(t));
		store_bind_text(st, 3, id);
		if (store_step_done(st, e))
			return -1;
	}
	return 0;
}

int store_process_payload_put(struct store_conn *c, const char *id, const void *data, size_t len, struct err *e)
{
	static const char SQL[] = "INSERT INTO process_payloads (instance_id, data) VALUES (?, ?)"
				  " ON CONFLICT (instance_id) DO UPDATE SET data = excluded.data";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	store_bind_blob(st, 2, data, len);
	return store_step_done(st, e);
}

/* The process's place in the queue as it becomes ENQUEUED (schema 021): one after its
 * initiator's last queued process, and never before the queue's head, so that claims in
 * fair_key order go round-robin across initiators.  Read while the process itself is not
 * among the queued (before its row is written, or before its status changes); its
 * initiator is initiator_id, or when NULL the one of process id's row. */
static int fair_key_of(struct store_conn *c, const char *initiator_id, const char *id, int64_t *key, struct err *e)
{
	static const char GET[] = "SELECT (SELECT min(fair_key) FROM processes WHERE status = 'ENQUEUED'),"
				  " (SELECT max(fair_key) FROM processes WHERE status = 'ENQUEUED' AND initiator_id ="
				  " COALESCE(?, (SELECT initiator_id FROM processes WHERE instance_id = ?)))";
	struct store_stmt *st = store_prepare(c, GET, e);
	int rc;

	*key = 0;
	if (!st)
		return -1;
	store_bind_text(st, 1, initiator_id);
	store_bind_text(st, 2, id);
	rc = store_step(st, e);
	if (rc == STORE_ROW) {
		if (!store_col_is_null(st, 0))
			*key = store_col_int64(st, 0);
		if (!store_col_is_null(st, 1) && store_col_int64(st, 1) >= *key)
			*key = store_col_int64(st, 1) + 1;
	}
	store_reset(st);
	return rc < 0 ? rc : 0;
}

static int set_fair_key(struct store_conn *c, const char *id, struct err *e)
{
	static const char SET[] = "UPDATE processes SET fair_key = ? WHERE instance_id = ?";
	struct store_stmt *st;
	int64_t key;

	if (fair_key_of(c, NULL, id, &key, e) || !(st = store_prepare(c, SET, e)))
		return -1;
	store_bind_int64(st, 1, key);
	store_bind_text(st, 2, id);
	return store_step_done(st, e);
}

static int write_scopes(struct store_conn *c, const struct process_new *pn, struct err *e)
{
	if (pn->scopes)
		return pn->scopes[0] ? store_process_scopes_put(c, pn->p.instance_id, pn->scopes, e) : 0;
	if (pn->p.parent_instance_id[0])
		return store_process_scopes_inherit(c, pn->p.instance_id, pn->p.parent_instance_id, e);
	return 0;
}

/* A start in one transaction: the row (written once, ENQUEUED), its NEW and ENQUEUED
 * history, tags, meta keys, payloads, scopes and audit entry. */
static int create(struct store_conn *c, const struct process_new *pn, struct err *e)
{
	const char *id = pn->p.instance_id;
	int64_t now = dt_now_ms(), fair_key;

	if (store_tx_begin_rows(c, e))
		return -1;
	if (fair_key_of(c, pn->p.initiator_id, NULL, &fair_key, e) || insert_row(c, pn, now, fair_key, e) ||
	    record_status(c, id, PS_NEW, now, e) || (pn->p.tags && insert_tags(c, id, pn->p.tags, e)) ||
	    (pn->p.meta && write_meta_keys(c, id, pn->p.meta, true, e)) ||
	    store_process_start_payload_put(c, id, pn->payload, pn->payload_len, e) || write_scopes(c, pn, e) ||
	    record_status(c, id, PS_ENQUEUED, now, e) || (pn->audit && store_audit_insert(c, pn->audit, e))) {
		store_tx_rollback(c);
		return -1;
	}
	return store_tx_commit(c, e);
}

int store_process_create(struct store_conn *c, const struct process_new *pn, struct err *e)
{
	struct store_conn *w = store_writer_enter(c, e);

	if (!w || store_writer_leave(c, w, create(w, pn, e), e))
		return -1;
	metrics_inc(MC_PROCESS_STARTS, 1);
	return 0;
}

int store_process_get(struct store_conn *c, const char *id, struct process *p, struct err *e)
{
	static const char SQL[] = "SELECT " PROC_COLS PROC_FROM " WHERE p.instance_id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	memset(p, 0, sizeof *p);
	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	return store_one(st, read_process, p, "Process instance", id, e);
}

int store_process_by_session(struct store_conn *c, const uint8_t hash[32], struct process *p, struct err *e)
{
	static const char SQL[] = "SELECT " PROC_COLS PROC_FROM " WHERE p.session_hash = ?"
				  " AND p.status NOT IN ('FINISHED', 'FAILED', 'CANCELLED', 'TIMED_OUT')";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	memset(p, 0, sizeof *p);
	if (!st)
		return -1;
	store_bind_blob(st, 1, hash, 32);
	rc = store_step(st, e);
	if (rc == STORE_ROW) {
		read_process(st, p);
		if (store_stmt_check(st, e))
			rc = -1;
	}
	store_reset(st);
	if (rc == STORE_DONE)
		return err_set(e, ERR_UNAUTH, "invalid or expired session token");
	return rc < 0 ? rc : 0;
}

/* The copy of the status in the process's tag rows (schema 010). */
static int tags_status(struct store_conn *c, const char *id, enum proc_status to, struct err *e)
{
	static const char SQL[] = "UPDATE process_tags SET status = ? WHERE instance_id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, proc_status_name(to));
	store_bind_text(st, 2, id);
	return store_step_done(st, e);
}

int proc_lock_row(struct store_conn *c, const char *id, struct err *e)
{
	static const char SQL[] = "SELECT 1 FROM processes WHERE instance_id = ? FOR UPDATE";
	struct store_stmt *st;
	int rc;

	if (!store_row_locks(c))
		return 0;
	if (!(st = store_prepare(c, SQL, e)))
		return -1;
	store_bind_text(st, 1, id);
	rc = store_step(st, e);
	store_reset(st);
	if (rc == STORE_DONE)
		return err_set(e, ERR_NOT_FOUND, "Process instance not found: %s", id);
	return rc < 0 ? rc : 0;
}

int proc_transition_in_tx(struct store_conn *c, const char *id, unsigned from_mask, enum proc_status to,
			  const char *node, int64_t now, struct err *e)
{
#define TRANSITION_GET "SELECT status, last_run_at, total_runtime_ms FROM processes WHERE instance_id = ?"
	static const char GET[] = TRANSITION_GET, GET_LOCKED[] = TRANSITION_GET " FOR UPDATE";
	/* A compare-and-set: the status read above is still the one replaced. */
	static const char SET[] = "UPDATE processes SET status = ?, last_updated_at = ?, last_run_at = ?,"
				  " total_runtime_ms = ?, node_id = ?, heartbeat_at = ? WHERE instance_id = ?"
				  " AND status = ?";
	struct store_stmt *st = store_prepare(c, store_row_locks(c) ? GET_LOCKED : GET, e);
	int64_t last_run = 0, total = 0;
	int rc, cur = -1;

	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	rc = store_step(st, e);
	if (rc == STORE_ROW) {
		cur = proc_status_parse(store_col_text(st, 0) ? store_col_text(st, 0) : "");
		last_run = store_col_int64(st, 1);
		total = store_col_int64(st, 2);
	}
	store_reset(st);
	if (rc < 0)
		return rc;
	if (rc == STORE_DONE)
		return err_set(e, ERR_NOT_FOUND, "Process instance not found: %s", id);
	if (cur < 0 || !(from_mask & PS_BIT(cur)))
		return err_set(e, ERR_CONFLICT, "process %s is %s, not in a state that allows %s", id,
			       cur < 0 ? "in an unknown status" : proc_status_name((enum proc_status)cur),
			       proc_status_name(to));
	if (to == PS_ENQUEUED && set_fair_key(c, id, e))
		return -1;
	if (cur == PS_RUNNING && last_run && to != PS_RUNNING)
		total += now - last_run;
	if (to == PS_RUNNING)
		last_run = now;
	if (!(st = store_prepare(c, SET, e)))
		return -1;
	store_bind_text(st, 1, proc_status_name(to));
	store_bind_int64(st, 2, now);
	bind_opt_int(st, 3, last_run);
	store_bind_int64(st, 4, total);
	if (to == PS_STARTING || to == PS_RUNNING) {
		if (node)
			store_bind_text(st, 5, node);
		else
			store_bind_null(st, 5);
		store_bind_int64(st, 6, now);
	} else {
		store_bind_null(st, 5);
		store_bind_null(st, 6);
	}
	store_bind_text(st, 7, id);
	store_bind_text(st, 8, proc_status_name((enum proc_status)cur));
	if (store_step_done(st, e))
		return -1;
	if (store_changes(c) != 1)
		return err_set(e, ERR_CONFLICT, "process %s changed its status meanwhile; %s not recorded", id,
			       proc_status_name(to));
	if (tags_status(c, id, to, e))
		return -1;
	return record_status(c, id, to, now, e);
}

static int node_of(struct store_conn *c, const char *id, char *node, size_t cap, struct err *e)
{
	static const char SQL[] = "SELECT node_id FROM processes WHERE instance_id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	node[0] = '\0';
	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	rc = store_step(st, e);
	if (rc == STORE_ROW && store_col_text(st, 0)) {
		store_col_copy(st, 0, node, cap);
		if (store_stmt_check(st, e))
			rc = -1;
	}
	store_reset(st);
	return rc < 0 ? rc : 0;
}

static int transition(struct store_conn *c, const char *id, unsigned from_mask, enum proc_status to, struct err *e)
{
	char node[128];

	node[0] = '\0';
	if (store_tx_begin_rows(c, e))
		return -1;
	/* STARTING → RUNNING keeps the node that claimed the process; any other status has
	 * none (proc_transition_in_tx), so a process's end reads nothing for it. */
	if (((to == PS_STARTING || to == PS_RUNNING) && node_of(c, id, node, sizeof node, e)) ||
	    proc_transition_in_tx(c, id, from_mask, to, node[0] ? node : NULL, dt_now_ms(), e)) {
		store_tx_rollback(c);
		return -1;
	}
	return store_tx_commit(c, e);
}

int store_process_transition(struct store_conn *c, const char *id, unsigned from_mask, enum proc_status to,
			     struct err *e)
{
	struct store_conn *w = store_writer_enter(c, e);

	return w ? store_writer_leave(c, w, transition(w, id, from_mask, to, e), e) : -1;
}

/* A running limit as bound: 0 (none) never reached. */
static int64_t running_limit(size_t n)
{
	return n && n < INT64_MAX ? (int64_t)n : INT64_MAX;
}

/* The advisory lock key of claims' turns (claim_turn, policy_turn). */
#define CLAIM_TURN_KEY INT64_C(4702111234474983747)

/* With running limits, claims on all nodes take turns (a transaction-scoped advisory lock
 * of their own, PostgreSQL only; SQLite's claims take turns anyway): two nodes that each
 * counted one slot free for a user would otherwise both claim it. */
static int claim_turn(struct store_conn *c, struct err *e)
{
	if (!(limits.running_per_user || limits.running_per_project))
		return 0;
	return store_tx_turn(c, CLAIM_TURN_KEY, e);
}

/* A claim of a process with policy limits takes turns like claim_turn's (where claim_turn
 * did not already): 1 when it took the lock now (the caller looks for the due process again,
 * counting what the other nodes claimed meanwhile), 0 when no turn is needed. */
static int policy_turn(struct store_conn *c, const char *id, struct err *e)
{
	static const char LIMITED[] = "SELECT 1 FROM process_policies WHERE instance_id = ?"
				      " AND (max_per_org IS NOT NULL OR max_per_project IS NOT NULL)";
	struct store_stmt *st;
	int rc;

	if ((limits.running_per_user || limits.running_per_project) || !store_row_locks(c))
		return 0;
	if (!(st = store_prepare(c, LIMITED, e)))
		return -1;
	store_bind_text(st, 1, id);
	rc = store_step(st, e);
	store_reset(st);
	if (rc != STORE_ROW)
		return rc < 0 ? rc : 0;
	return (rc = store_tx_turn(c, CLAIM_TURN_KEY, e)) < 0 ? rc : 1;
}

/* The first due process in fair order: ENQUEUED first, then a SUSPENDED one whose sleep is
 * over.  With --limit-running-per-user / -per-project, a top-level process whose initiator
 * or project already has that many STARTING or RUNNING is passed over (it stays where it
 * is); the counts are the store's, so they hold across nodes. */
static int due(struct store_conn *c, int64_t now, char id[UUID_STR_LEN], char *event, size_t cap, struct err *e)
{
#define DUE_QUEUED                                                                                                     \
	"SELECT instance_id FROM processes WHERE status = 'ENQUEUED' AND (start_at IS NULL OR start_at <= ?)"
/* A policy's queue.concurrent limits (schema 039): passed over while its org or project has
 * that many STARTING or RUNNING. */
#define POLICY_RUNNING(col)                                                                                            \
	"(SELECT count(*) FROM processes r WHERE r." col " = processes." col                                           \
	" AND r.status IN ('STARTING', 'RUNNING'))"
#define POLICY_CONCURRENT                                                                                              \
	" AND NOT EXISTS (SELECT 1 FROM process_policies q WHERE q.instance_id = processes.instance_id AND"            \
	" ((q.max_per_org IS NOT NULL AND q.max_per_org <= " POLICY_RUNNING("org_id") ") OR"                           \
	" (q.max_per_project IS NOT NULL AND processes.project_id IS NOT NULL AND q.max_per_project <= "               \
	POLICY_RUNNING("project_id") ")))"
#define DUE_QUEUED_ORDER " ORDER BY fair_key, last_updated_at LIMIT 1"
#define DUE_WOKEN                                                                                                      \
	"SELECT instance_id, resume_event FROM processes WHERE status = 'SUSPENDED'"                                   \
	" AND resume_at IS NOT NULL AND resume_at <= ?"
#define DUE_WOKEN_ORDER " ORDER BY resume_at LIMIT 1"
#define RUNNING_OF(col)                                                                                                \
	"SELECT " col " FROM processes WHERE status IN ('STARTING', 'RUNNING') AND parent_instance_id IS NULL"        \
	" AND " col " IS NOT NULL GROUP BY " col " HAVING count(*) >= ?"
#define UNDER_LIMITS                                                                                                   \
	" AND (parent_instance_id IS NOT NULL OR (initiator_id NOT IN (" RUNNING_OF("initiator_id") ")"              \
	" AND (project_id IS NULL OR project_id NOT IN (" RUNNING_OF("project_id") "))))"
#define SKIP " FOR UPDATE SKIP LOCKED"
	/* Where rows are locked, claims on every node skip each other's row (a queue's claim). */
#define DUE_POLICY DUE_QUEUED POLICY_CONCURRENT
	static const char *const SQL[2][2][2][2] = {
	    /* [policies][limited][skip locked][queued, woken] */
	    {{{DUE_QUEUED DUE_QUEUED_ORDER, DUE_WOKEN DUE_WOKEN_ORDER},
	      {DUE_QUEUED DUE_QUEUED_ORDER SKIP, DUE_WOKEN DUE_WOKEN_ORDER SKIP}},
	     {{DUE_QUEUED UNDER_LIMITS DUE_QUEUED_ORDER, DUE_WOKEN UNDER_LIMITS DUE_WOKEN_ORDER},
	      {DUE_QUEUED UNDER_LIMITS DUE_QUEUED_ORDER SKIP, DUE_WOKEN UNDER_LIMITS DUE_WOKEN_ORDER SKIP}}},
	    {{{DUE_POLICY DUE_QUEUED_ORDER, DUE_WOKEN DUE_WOKEN_ORDER},
	      {DUE_POLICY DUE_QUEUED_ORDER SKIP, DUE_WOKEN DUE_WOKEN_ORDER SKIP}},
	     {{DUE_POLICY UNDER_LIMITS DUE_QUEUED_ORDER, DUE_WOKEN UNDER_LIMITS DUE_WOKEN_ORDER},
	      {DUE_POLICY UNDER_LIMITS DUE_QUEUED_ORDER SKIP, DUE_WOKEN UNDER_LIMITS DUE_WOKEN_ORDER SKIP}}}};
	const bool limited = limits.running_per_user || limits.running_per_project;
	const bool skip = store_row_locks(c);
	bool policies = true;
	int rc = STORE_DONE;

	id[0] = event[0] = '\0';
	/* Without any policy no process has queue limits of its own: the claim reads none. */
	if (store_policy_any(c, &policies, e))
		return -1;
	for (size_t i = 0; i < 2 && rc == STORE_DONE; i++) {
		struct store_stmt *st = store_prepare(c, SQL[policies][limited][skip][i], e);
		if (!st)
			return -1;
		store_bind_int64(st, 1, now);
		if (limited) {
			store_bind_int64(st, 2, running_limit(limits.running_per_user));
			store_bind_int64(st, 3, running_limit(limits.running_per_project));
		}
		rc = store_step(st, e);
		if (rc == STORE_ROW) {
			store_col_copy(st, 0, id, UUID_STR_LEN);
			if (i == 1)
				store_col_copy(st, 1, event, cap);
			if (store_stmt_check(st, e))
				rc = -1;
		}
		store_reset(st);
	}
	return rc < 0 ? rc : 0;
}

/* A woken sleeper keeps its event for the claim (read back by resume_of). */
static int clear_resume(struct store_conn *c, const char *id, struct err *e)
{
	static const char SQL[] = "UPDATE processes SET resume_at = NULL, resume_args = NULL WHERE instance_id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	return store_step_done(st, e);
}

/* The event and arguments a claimed process resumes with (none for a fresh start). */
static int resume_of(struct store_conn *c, const char *id, char *event, size_t cap, json_t **args, struct err *e)
{
	static const char SQL[] = "SELECT resume_event, resume_args FROM processes WHERE instance_id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	event[0] = '\0';
	*args = NULL;
	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	rc = store_step(st, e);
	if (rc == STORE_ROW) {
		store_col_copy(st, 0, event, cap);
		*args = col_json(st, 1);
		if (store_stmt_check(st, e))
			rc = -1;
	}
	store_reset(st);
	return rc < 0 ? rc : 0;
}

/* The claim's write: 1 with id, event and *args (NEW) of the process now STARTING, 0 when
 * none is due any more. */
static int take(struct store_conn *c, const char *node, int64_t now, char id[UUID_STR_LEN], char *event, size_t cap,
		json_t **args, struct err *e)
{
	int rc;

	if (store_tx_begin_rows(c, e))
		return -1;
	if (claim_turn(c, e) || due(c, now, id, event, cap, e))
		goto fail;
	if (id[0] && (rc = policy_turn(c, id, e)) != 0 && (rc < 0 || due(c, now, id, event, cap, e)))
		goto fail;
	if (!id[0]) {
		store_tx_rollback(c);
		return 0;
	}
	/* The changes are stamped now, not at the caller's `now` (which only decides what is
	 * due): a process created after the caller took it must not get a STARTING time
	 * earlier than its NEW one. */
	if (dt_now_ms() > now)
		now = dt_now_ms();
	if (event[0] && (proc_transition_in_tx(c, id, PS_BIT(PS_SUSPENDED), PS_RESUMING, NULL, now, e) ||
			 proc_transition_in_tx(c, id, PS_BIT(PS_RESUMING), PS_ENQUEUED, NULL, now, e) ||
			 clear_resume(c, id, e)))
		goto fail;
	if (proc_transition_in_tx(c, id, PS_BIT(PS_ENQUEUED), PS_STARTING, node, now, e) ||
	    resume_of(c, id, event, cap, args, e))
		goto fail;
	return store_tx_commit(c, e) ? -1 : 1;
fail:
	store_tx_rollback(c);
	return -1;
}

int store_process_claim(struct store_conn *c, const char *node, int64_t now, struct process *out, struct err *e)
{
	struct store_conn *w;
	json_t *args = NULL;
	int got;

	char id[UUID_STR_LEN], event[sizeof out->resume_event];

	/* SQLite (one node): a look first, so that a round that finds nothing due (every
	 * dispatch ends with one) takes no write lock.  A process stored after the look wakes
	 * the dispatcher, which looks again. */
	if (!store_row_locks(c)) {
		if (due(c, now, id, event, sizeof event, e))
			return -1;
		if (!id[0])
			return 0;
	}
	if (!(w = store_writer_enter(c, e)))
		return -1;
	got = take(w, node, now, id, event, sizeof event, &args, e);
	/* Read back where the claim was written (the writer's pages are warm); a claim whose
	 * process cannot be read is undone rather than left STARTING. */
	if (got > 0 && store_process_get(w, id, out, e)) {
		store_process_cleanup(out);
		got = -1;
	}
	if (store_writer_leave(c, w, got < 0 ? -1 : 0, e)) {
		if (got > 0)
			store_process_cleanup(out);
		goto fail;
	}
	if (!got)
		return 0;
	if (str_fmt(out->resume_event, sizeof out->resume_event, "%s", event)) { /* same size */
		store_process_cleanup(out);
		err_set(e, ERR_INTERNAL, "resume event too long");
		goto fail;
	}
	out->resume_args = json_is_object(args) ? args : NULL;
	if (!out->resume_args)
		json_decref(args);
	return 1;
fail:
	json_decref(args);
	return -1;
}

int store_process_next_start(struct store_conn *c, int64_t now, int64_t *at, struct err *e)
{
	static const char QUEUED[] = "SELECT min(start_at) FROM processes WHERE status = 'ENQUEUED'"
				     " AND start_at IS NOT NULL AND start_at > ?";
	static const char WOKEN[] = "SELECT min(resume_at) FROM processes WHERE status = 'SUSPENDED'"
				    " AND resume_at IS NOT NULL AND resume_at > ?";
	const char *const sql[] = {QUEUED, WOKEN};

	*at = 0;
	for (size_t i = 0; i < 2; i++) {
		struct store_stmt *st = store_prepare(c, sql[i], e);
		int rc;
		if (!st)
			return -1;
		store_bind_int64(st, 1, now);
		rc = store_step(st, e);
		if (rc == STORE_ROW && !store_col_is_null(st, 0) && (!*at || store_col_int64(st, 0) < *at))
			*at = store_col_int64(st, 0);
		store_reset(st);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* One blob of the row of id that sql selects into *data; 1 when there is none. */
static int payload_from(struct store_conn *c, const char *sql, const char *id, void **data, size_t *len,
			struct err *e)
{
	struct store_stmt *st = store_prepare(c, sql, e);
	const void *p;
	int rc;

	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	rc = store_step(st, e);
	if (rc == STORE_ROW) {
		p = store_col_blob(st, 0, len);
		*data = malloc(*len ? *len : 1);
		if (*data)
			memcpy(*data, p, *len);
		else
			rc = err_set(e, ERR_INTERNAL, "out of memory");
	}
	store_reset(st);
	return rc == STORE_DONE ? 1 : rc < 0 ? rc : 0;
}

/* A process's working payload is a row of process_payloads once it stored one (suspended,
 * restored, restarted); until then it is the payload it was started with, which a start
 * writes once (not twice: ~4 WAL pages a process, with the working copy's removal at the
 * end).  A final process's working payload is dropped at its end (after its handlers). */
static int payload(struct store_conn *c, const char *id, bool ended, void **data, size_t *len, struct err *e)
{
	static const char WORKING[] = "SELECT data FROM process_payloads WHERE instance_id = ?";
	static const char START[] = "SELECT s.data FROM process_start_payloads s JOIN processes p"
				    " ON p.instance_id = s.instance_id WHERE s.instance_id = ?"
				    " AND p.status NOT IN ('FINISHED', 'FAILED', 'CANCELLED', 'TIMED_OUT')";
	static const char START_ENDED[] = "SELECT data FROM process_start_payloads WHERE instance_id = ?";
	int rc;

	*data = NULL;
	*len = 0;
	rc = payload_from(c, WORKING, id, data, len, e);
	if (rc == 1)
		rc = payload_from(c, ended ? START_ENDED : START, id, data, len, e);
	if (rc == 1)
		return err_set(e, ERR_NOT_FOUND, "payload of process %s not found", id);
	return rc;
}

int store_process_payload(struct store_conn *c, const char *id, void **data, size_t *len, struct err *e)
{
	return payload(c, id, false, data, len, e);
}

int store_process_payload_of_ended(struct store_conn *c, const char *id, void **data, size_t *len, struct err *e)
{
	return payload(c, id, true, data, len, e);
}

int store_process_payload_drop(struct store_conn *c, const char *id, struct err *e)
{
	static const char SQL[] = "DELETE FROM process_payloads WHERE instance_id = ? AND EXISTS (SELECT 1 FROM"
				  " processes WHERE instance_id = ? AND status IN ('FINISHED', 'FAILED', 'CANCELLED',"
				  " 'TIMED_OUT'))";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	store_bind_text(st, 2, id);
	return store_step_done(st, e);
}

int store_process_meta_merge(struct store_conn *c, const char *id, json_t *obj, struct err *e)
{
	static const char GET[] = "SELECT meta FROM processes WHERE instance_id = ?",
			  GET_LOCKED[] = "SELECT meta FROM processes WHERE instance_id = ? FOR UPDATE";
	static const char SET[] = "UPDATE processes SET meta = ? WHERE instance_id = ?";
	struct store_stmt *st;
	json_t *meta = NULL, *v;
	const char *k;
	char *text = NULL;
	int rc;

	if (store_tx_begin_rows(c, e))
		return -1;
	if (!(st = store_prepare(c, store_row_locks(c) ? GET_LOCKED : GET, e)))
		goto fail;
	store_bind_text(st, 1, id);
	rc = store_step(st, e);
	if (rc == STORE_ROW)
		meta = col_json(st, 0);
	store_reset(st);
	if (rc < 0)
		goto fail;
	if (rc == STORE_DONE) {
		err_set(e, ERR_NOT_FOUND, "Process instance not found: %s", id);
		goto fail;
	}
	if (!json_is_object(meta)) {
		json_decref(meta);
		meta = json_object();
	}
	json_object_foreach(obj, k, v)
	{
		if (json_is_null(v))
			json_object_del(meta, k);
		else
			json_object_set(meta, k, v);
	}
	if (!(text = jsonx_dump(meta)) || !(st = store_prepare(c, SET, e)))
		goto fail;
	store_bind_text(st, 1, text);
	store_bind_text(st, 2, id);
	if (store_step_done(st, e) || write_meta_keys(c, id, meta, false, e))
		goto fail;
	free(text);
	json_decref(meta);
	return store_tx_commit(c, e);
fail:
	if (!text && meta && e)
		err_set(e, e->code ? e->code : ERR_INTERNAL, "%s", e->code ? e->msg : "out of memory");
	store_tx_rollback(c);
	free(text);
	json_decref(meta);
	return -1;
}

static void read_id(struct store_stmt *st, void *out)
{
	char(*id)[UUID_STR_LEN] = out;
	store_col_copy(st, 0, *id, UUID_STR_LEN);
}

int store_process_orphans(struct store_conn *c, const char *node, char (**ids)[UUID_STR_LEN], size_t *n, struct err *e)
{
	static const char SQL[] = "SELECT instance_id FROM processes WHERE status IN ('STARTING', 'RUNNING')"
				  " AND (? IS NULL OR node_id = ? OR node_id IS NULL)";
	struct store_stmt *st = store_prepare(c, SQL, e);

	*ids = NULL;
	*n = 0;
	if (!st)
		return -1;
	store_bind_text(st, 1, node);
	store_bind_text(st, 2, node);
	return store_collect(st, UUID_STR_LEN, read_id, (void **)ids, n, e);
}

int store_process_children(struct store_conn *c, const char *id, json_t **out, struct err *e)
{
	static const char SQL[] =
	    "SELECT instance_id FROM processes WHERE parent_instance_id = ? ORDER BY created_at, instance_id";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	*out = NULL;
	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	*out = json_array();
	while ((rc = store_step(st, e)) == STORE_ROW)
		json_array_append_new(*out, json_string(store_col_text(st, 0)));
	store_reset(st);
	if (rc < 0) {
		json_decref(*out);
		*out = NULL;
		return rc;
	}
	return 0;
}

/* The history is the process's PROCESS_STATUS events (their data {"status": …}), in the
 * order they were written: read through process_events_instance, the process's events
 * alone. */
int store_process_history(struct store_conn *c, const char *id, json_t **out, struct err *e)
{
	static const char SQL[] = "SELECT id, data, event_date FROM process_events"
				  " WHERE instance_id = ? AND event_type = 'PROCESS_STATUS' ORDER BY seq_id";
	struct store_stmt *st = store_prepare(c, SQL, e);
	char ts[DT_ISO_LEN];
	int rc;

	*out = NULL;
	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	*out = json_array();
	while ((rc = store_step(st, e)) == STORE_ROW) {
		json_t *data = json_loads(store_col_text(st, 1), 0, NULL);
		const char *status = json_string_value(json_object_get(data, "status"));
		dt_format_iso(store_col_int64(st, 2), ts);
		if (status)
			json_array_append_new(*out, json_pack("{s:s, s:s, s:s}", "id", store_col_text(st, 0), "status",
							      status, "changeDate", ts));
		json_decref(data);
	}
	store_reset(st);
	if (rc < 0) {
		json_decref(*out);
		*out = NULL;
		return rc;
	}
	return 0;
}
