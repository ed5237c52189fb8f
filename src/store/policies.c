/* Policies and their links (store/policies.h). */
#include "store/policies.h"

#include <stdlib.h>
#include <string.h>

#include "base/datetime.h"
#include "base/jsonx.h"
#include "base/str.h"
#include "policy/policy.h"
#include "store/store_impl.h"

#define N_PLACES 6		       /* where a policy may be linked, most specific first */
#define KEY_MAX (3 * UUID_STR_LEN + 4) /* policy_links.link_key */
#define CHAIN_MAX 32		       /* ancestors followed: more is a cycle the writes did not let in */

/* The first column of sql's row for key (one bound text) into out: 1 found, 0 no row ("" in
 * out), < 0 on error. */
static int one_text(struct store_conn *c, const char *sql, const char *key, char *out, size_t cap, struct err *e)
{
	struct store_stmt *st = store_prepare(c, sql, e);
	int rc;

	out[0] = '\0';
	if (!st)
		return -1;
	store_bind_text(st, 1, key);
	rc = store_step(st, e);
	if (rc == STORE_ROW)
		store_col_copy(st, 0, out, cap);
	if (rc == STORE_ROW && store_stmt_check(st, e))
		rc = -1;
	store_reset(st);
	return rc < 0 ? rc : rc == STORE_ROW;
}

/* The id of the policy parent_id's chain reaches id (a cycle if id became its child). */
static int chain_has(struct store_conn *c, const char *from, const char *id, bool *has, struct err *e)
{
	static const char SQL[] = "SELECT parent_id FROM policies WHERE id = ?";
	char cur[UUID_STR_LEN], next[UUID_STR_LEN];

	*has = false;
	if (str_fmt(cur, sizeof cur, "%s", from))
		return err_set(e, ERR_INVALID, "invalid parentId: %.64s", from);
	for (int i = 0; i < CHAIN_MAX && cur[0]; i++) {
		int rc;
		if (strcmp(cur, id) == 0) {
			*has = true;
			return 0;
		}
		if ((rc = one_text(c, SQL, cur, next, sizeof next, e)) < 0)
			return rc;
		if (rc == 0 && i == 0)
			return err_set(e, ERR_INVALID, "Parent policy not found: %.64s", from);
		memcpy(cur, next, sizeof cur);
	}
	return 0;
}

static int id_of(struct store_conn *c, const char *name, char id[UUID_STR_LEN], struct err *e)
{
	static const char SQL[] = "SELECT id FROM policies WHERE name = ?";
	int rc = one_text(c, SQL, name, id, UUID_STR_LEN, e);

	return rc < 0 ? rc : 0;
}

static int put_row(struct store_conn *c, const char *id, const char *name, const char *parent_id, const char *rules,
		   bool insert, struct err *e)
{
	static const char INS[] =
	    "INSERT INTO policies (id, name, parent_id, rules, created_at) VALUES (?, ?, ?, ?, ?)";
	static const char UPD[] = "UPDATE policies SET name = ?, parent_id = ?, rules = ? WHERE id = ?";
	struct store_stmt *st = store_prepare(c, insert ? INS : UPD, e);

	if (!st)
		return -1;
	if (insert) {
		store_bind_text(st, 1, id);
		store_bind_text(st, 2, name);
		store_bind_text(st, 3, parent_id);
		store_bind_text(st, 4, rules);
		store_bind_int64(st, 5, dt_now_ms());
	} else {
		store_bind_text(st, 1, name);
		store_bind_text(st, 2, parent_id);
		store_bind_text(st, 3, rules);
		store_bind_text(st, 4, id);
	}
	return store_write_one(c, st, "Policy", name, NULL, e);
}

int store_policy_put(struct store_conn *c, const char *name, const char *parent_id, const char *rules,
		     char id[UUID_STR_LEN], bool *created, struct err *e)
{
	bool cycle = false;
	int rc;

	if ((rc = store_tx_begin(c, e)))
		return rc;
	rc = id_of(c, name, id, e);
	*created = rc == 0 && !id[0];
	if (rc == 0 && *created)
		uuid_v4(id);
	if (rc == 0 && parent_id && (rc = chain_has(c, parent_id, id, &cycle, e)) == 0 && cycle)
		rc = err_set(e, ERR_INVALID, "parentId %s would make policy '%s' its own ancestor", parent_id, name);
	if (rc == 0)
		rc = put_row(c, id, name, parent_id, rules, *created, e);
	if (rc == 0)
		rc = store_tx_commit(c, e);
	if (rc)
		store_tx_rollback(c);
	return rc;
}

static json_t *policy_row(struct store_stmt *st, void *ctx)
{
	const char *rules = store_col_text(st, 3);
	json_t *v = json_pack("{s:s?, s:s?}", "id", store_col_text(st, 0), "name", store_col_text(st, 1));
	struct err e;

	(void)ctx;
	if (v && store_col_text(st, 2))
		json_object_set_new(v, "parentId", json_string(store_col_text(st, 2)));
	if (v)
		json_object_set_new(v, "rules", rules ? jsonx_parse(rules, strlen(rules), 1000, &e) : json_object());
	return v;
}

#define POLICY_COLS "SELECT id, name, parent_id, rules FROM policies"

int store_policy_get(struct store_conn *c, const char *name, json_t **out, struct err *e)
{
	static const char SQL[] = POLICY_COLS " WHERE name = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	json_t *all = NULL;

	*out = NULL;
	if (!st)
		return -1;
	store_bind_text(st, 1, name);
	if (store_collect_json(st, policy_row, NULL, &all, e))
		return -1;
	if (json_array_size(all))
		*out = json_incref(json_array_get(all, 0));
	json_decref(all);
	return *out ? 0 : err_set(e, ERR_NOT_FOUND, "Policy not found: %.128s", name);
}

static json_t *link_row(struct store_stmt *st, void *ctx)
{
	static const char *const KEYS[] = {"policyId", "orgId",	      "projectId", "userId",
					   "orgName",  "projectName", "userName"};
	json_t *v = json_object();

	(void)ctx;
	for (int i = 0; v && i < 7; i++)
		if (store_col_text(st, i))
			json_object_set_new(v, KEYS[i], json_string(store_col_text(st, i)));
	return v;
}

int store_policy_list(struct store_conn *c, json_t **out, struct err *e)
{
	static const char SQL[] = POLICY_COLS " ORDER BY name";
	/* the names beside the ids, so that a link can be shown and unlinked by name (a
	 * project's link names its org too: the unlink needs both) */
	static const char LINKS[] = "SELECT l.policy_id, l.org_id, l.project_id, l.user_id, COALESCE(o.name, po.name),"
				    " p.name, u.username FROM policy_links l LEFT JOIN orgs o ON o.id = l.org_id"
				    " LEFT JOIN projects p ON p.id = l.project_id LEFT JOIN orgs po ON po.id = p.org_id"
				    " LEFT JOIN users u ON u.id = l.user_id ORDER BY l.link_key";
	struct store_stmt *st = store_prepare(c, SQL, e);
	json_t *links = NULL, *p, *l;
	size_t i, j;

	*out = NULL;
	if (!st || store_collect_json(st, policy_row, NULL, out, e))
		return -1;
	if (!(st = store_prepare(c, LINKS, e)) || store_collect_json(st, link_row, NULL, &links, e)) {
		json_decref(*out);
		*out = NULL;
		return -1;
	}
	json_array_foreach(*out, i, p)
	{
		json_t *mine = json_array();
		json_array_foreach(links, j, l)
		{
			if (json_equal(json_object_get(l, "policyId"), json_object_get(p, "id"))) {
				json_t *cp = json_copy(l);
				json_object_del(cp, "policyId");
				json_array_append_new(mine, cp);
			}
		}
		json_object_set_new(p, "links", mine);
	}
	json_decref(links);
	return 0;
}

int store_policy_delete(struct store_conn *c, const char *name, struct err *e)
{
	static const char SQL[] = "DELETE FROM policies WHERE name = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, name);
	return store_write_one(c, st, "Policy", NULL, name, e);
}

static int link_key(const struct policy_place *at, char *out, size_t cap, struct err *e)
{
	if (str_fmt(out, cap, "%s/%s/%s", at->org_id ? at->org_id : "", at->project_id ? at->project_id : "",
		    at->user_id ? at->user_id : ""))
		return err_set(e, ERR_INTERNAL, "policy link key too long");
	return 0;
}

/* Whether a policy may apply anywhere (store_impl.h's policies_seen): on SQLite, learnt once
 * from the store and kept by this server's own writes (the only writer of its data folder),
 * so that a server without policies reads none for each process. */
static int policies_maybe(struct store_conn *c, bool *maybe, struct err *e)
{
	static const char SQL[] = "SELECT EXISTS (SELECT 1 FROM policy_links) OR EXISTS (SELECT 1 FROM process_policies)";
	struct store *s = c->store;
	int seen = __atomic_load_n(&s->policies_seen, __ATOMIC_ACQUIRE), none = -1;
	struct store_stmt *st;
	int rc;

	if (seen >= 0) {
		*maybe = seen == 1;
		return 0;
	}
	if (!(st = store_prepare(c, SQL, e)))
		return -1;
	rc = store_step(st, e);
	seen = rc == STORE_ROW && store_col_int64(st, 0) == 0 ? 0 : 1;
	store_reset(st);
	if (rc < 0)
		return rc;
	/* A link written meanwhile set 1 first: it is kept. */
	__atomic_compare_exchange_n(&s->policies_seen, &none, seen, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
	*maybe = __atomic_load_n(&s->policies_seen, __ATOMIC_ACQUIRE) == 1;
	return 0;
}

/* Before a write that makes a policy apply: from now on every process reads its policy. */
static void policies_now_seen(struct store_conn *c)
{
	__atomic_store_n(&c->store->policies_seen, 1, __ATOMIC_RELEASE);
}

int store_policy_link(struct store_conn *c, const char *policy_id, const struct policy_place *at, struct err *e)
{
	static const char SQL[] = "INSERT INTO policy_links (link_key, policy_id, org_id, project_id, user_id)"
				  " VALUES (?, ?, ?, ?, ?) ON CONFLICT (link_key) DO UPDATE SET policy_id = "
				  "excluded.policy_id";
	struct store_stmt *st;
	char key[KEY_MAX];

	if (link_key(at, key, sizeof key, e) || !(st = store_prepare(c, SQL, e)))
		return -1;
	policies_now_seen(c);
	store_bind_text(st, 1, key);
	store_bind_text(st, 2, policy_id);
	store_bind_text(st, 3, at->org_id);
	store_bind_text(st, 4, at->project_id);
	store_bind_text(st, 5, at->user_id);
	return store_step_done(st, e);
}

int store_policy_unlink(struct store_conn *c, const char *policy_id, const struct policy_place *at, struct err *e)
{
	static const char SQL[] = "DELETE FROM policy_links WHERE link_key = ? AND policy_id = ?";
	struct store_stmt *st;
	char key[KEY_MAX];

	if (link_key(at, key, sizeof key, e) || !(st = store_prepare(c, SQL, e)))
		return -1;
	store_bind_text(st, 1, key);
	store_bind_text(st, 2, policy_id);
	if (store_step_done(st, e))
		return -1;
	return store_changes(c) ? 0 : err_set(e, ERR_NOT_FOUND, "The policy is not linked there");
}

/* The policy linked at the most specific of the places keys[0..N_PLACES) (most specific
 * first; "" for a place that does not apply): one read of them all.  Its id in id ("" when
 * none). */
static int linked_first(struct store_conn *c, char keys[N_PLACES][KEY_MAX], char id[UUID_STR_LEN], struct err *e)
{
	static const char SQL[] = "SELECT link_key, policy_id FROM policy_links WHERE link_key IN (?, ?, ?, ?, ?, ?)";
	struct store_stmt *st = store_prepare(c, SQL, e);
	size_t best = N_PLACES;
	int rc;

	id[0] = '\0';
	if (!st)
		return -1;
	for (int i = 0; i < N_PLACES; i++)
		store_bind_text(st, i + 1, keys[i]);
	while ((rc = store_step(st, e)) == STORE_ROW) {
		const char *k = store_col_text(st, 0);
		for (size_t i = 0; k && i < best; i++)
			if (keys[i][0] && strcmp(keys[i], k) == 0) {
				best = i;
				store_col_copy(st, 1, id, UUID_STR_LEN);
			}
	}
	if (rc == STORE_DONE && store_stmt_check(st, e))
		rc = -1;
	store_reset(st);
	return rc < 0 ? rc : 0;
}

/* One policy by id: its name, parent and parsed rules (new). */
static int policy_by_id(struct store_conn *c, const char *id, char *name, char parent[UUID_STR_LEN], json_t **rules,
			struct err *e)
{
	static const char SQL[] = "SELECT name, parent_id, rules FROM policies WHERE id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);
	int rc;

	*rules = NULL;
	parent[0] = '\0';
	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	rc = store_step(st, e);
	if (rc == STORE_ROW) {
		const char *t = store_col_text(st, 2);
		store_col_copy(st, 0, name, POLICY_NAME_MAX + 1);
		store_col_copy(st, 1, parent, UUID_STR_LEN);
		*rules = t ? jsonx_parse(t, strlen(t), 1000, e) : json_object();
		if (store_stmt_check(st, e) || !*rules)
			rc = -1;
	}
	store_reset(st);
	return rc < 0 ? rc : rc == STORE_ROW ? 0 : err_set(e, ERR_NOT_FOUND, "Policy not found: %s", id);
}

/* The rules of id merged over its ancestors' into *out (new). */
static int chain_rules(struct store_conn *c, const char *id, json_t **out, char *name, struct err *e)
{
	json_t *chain[CHAIN_MAX];
	char cur[UUID_STR_LEN], parent[UUID_STR_LEN], other[POLICY_NAME_MAX + 1];
	size_t n = 0;
	int rc = 0;

	memcpy(cur, id, UUID_STR_LEN);
	while (cur[0] && n < CHAIN_MAX && rc == 0) {
		rc = policy_by_id(c, cur, n ? other : name, parent, &chain[n], e);
		if (rc == 0)
			n++;
		memcpy(cur, parent, UUID_STR_LEN);
	}
	*out = json_object();
	while (n--) {
		if (rc == 0 && *out)
			policy_rules_merge(*out, chain[n]);
		json_decref(chain[n]);
	}
	if (rc) {
		json_decref(*out);
		*out = NULL;
	}
	return rc;
}

int store_policy_effective(struct store_conn *c, const struct policy_place *at, json_t **rules,
			   char name[POLICY_NAME_MAX + 1], struct err *e)
{
	const char *u = at->user_id, *p = at->project_id, *o = at->org_id;
	const struct policy_place order[N_PLACES] = {
	    {NULL, p, u}, {o, NULL, u}, {NULL, NULL, u}, {NULL, p, NULL}, {o, NULL, NULL}, {NULL, NULL, NULL},
	};
	/* The places that apply: a user's need the user, the project's a project, the org's an org. */
	const bool apply[N_PLACES] = {u && p, u && o, u != NULL, p != NULL, o != NULL, true};
	char keys[N_PLACES][KEY_MAX], id[UUID_STR_LEN];
	bool maybe = true;

	*rules = NULL;
	name[0] = '\0';
	if (policies_maybe(c, &maybe, e) || !maybe)
		return maybe ? -1 : 0;
	for (size_t i = 0; i < N_PLACES; i++) {
		keys[i][0] = '\0';
		if (apply[i] && link_key(&order[i], keys[i], KEY_MAX, e))
			return -1;
	}
	if (linked_first(c, keys, id, e))
		return -1;
	return id[0] ? chain_rules(c, id, rules, name, e) : 0;
}

int store_process_policy_put(struct store_conn *c, const char *instance_id, const char *policy_name,
			     int64_t max_per_org, int64_t max_per_project, const char *rules, struct err *e)
{
	static const char SQL[] =
	    "INSERT INTO process_policies (instance_id, policy_name, max_per_org, max_per_project,"
	    " rules) VALUES (?, ?, ?, ?, ?)";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	policies_now_seen(c);
	store_bind_text(st, 1, instance_id);
	store_bind_text(st, 2, policy_name);
	if (max_per_org >= 0)
		store_bind_int64(st, 3, max_per_org);
	else
		store_bind_null(st, 3);
	if (max_per_project >= 0)
		store_bind_int64(st, 4, max_per_project);
	else
		store_bind_null(st, 4);
	store_bind_text(st, 5, rules);
	return store_step_done(st, e);
}

int store_process_policy_get(struct store_conn *c, const char *instance_id, json_t **out, struct err *e)
{
	static const char SQL[] = "SELECT policy_name, rules FROM process_policies WHERE instance_id = ?";
	struct store_stmt *st;
	bool maybe = true;
	int rc;

	*out = NULL;
	if (policies_maybe(c, &maybe, e) || !maybe)
		return maybe ? -1 : 0;
	if (!(st = store_prepare(c, SQL, e)))
		return -1;
	store_bind_text(st, 1, instance_id);
	rc = store_step(st, e);
	if (rc == STORE_ROW && store_col_text(st, 1)) {
		const char *t = store_col_text(st, 1);
		json_t *rules = jsonx_parse(t, strlen(t), 1000, e);
		if (!rules)
			rc = -1;
		else
			*out = json_pack("{s:s?, s:o}", "policy", store_col_text(st, 0), "rules", rules);
	}
	store_reset(st);
	return rc < 0 ? rc : 0;
}

int store_policy_any(struct store_conn *c, bool *any, struct err *e)
{
	return policies_maybe(c, any, e);
}

int store_policy_count_processes(struct store_conn *c, const char *org_id, const char *project_id, const char *status,
				 int64_t *n, struct err *e)
{
	static const char ALL[] = "SELECT count(*) FROM processes WHERE status = ?";
	static const char ORG[] = "SELECT count(*) FROM processes WHERE status = ? AND org_id = ?";
	static const char PROJECT[] = "SELECT count(*) FROM processes WHERE status = ? AND project_id = ?";
	struct store_stmt *st = store_prepare(c, project_id ? PROJECT : org_id ? ORG : ALL, e);
	int rc;

	*n = 0;
	if (!st)
		return -1;
	store_bind_text(st, 1, status);
	if (project_id || org_id)
		store_bind_text(st, 2, project_id ? project_id : org_id);
	rc = store_step(st, e);
	if (rc == STORE_ROW)
		*n = store_col_int64(st, 0);
	store_reset(st);
	return rc < 0 ? rc : 0;
}

int store_policy_fork_depth(struct store_conn *c, const char *id, int64_t *n, struct err *e)
{
	static const char SQL[] = "SELECT parent_instance_id FROM processes WHERE instance_id = ?";
	char cur[UUID_STR_LEN], next[UUID_STR_LEN];

	*n = 0;
	if (str_fmt(cur, sizeof cur, "%s", id))
		return err_set(e, ERR_INVALID, "invalid process id: %.64s", id);
	/* The parent counts, then each of its ancestors. */
	while (cur[0] && *n < 10000) {
		(*n)++;
		if (one_text(c, SQL, cur, next, sizeof next, e) < 0)
			return -1;
		memcpy(cur, next, sizeof cur);
	}
	return 0;
}

int store_policy_count_turn(struct store_conn *c, struct err *e)
{
	return store_tx_turn(c, INT64_C(4702111234474983748), e);
}
