/* The `kv` task on the server (docs/flows.md "Tasks"): Concord's project-scoped
 * key-value store.  Methods putString, getString, putLong, getLong, inc, incLong, remove;
 * a `task: kv` step takes the same as `in: {action, key, value}`. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "policy/policy.h"
#include "queue/tasks/server_tasks.h"
#include "store/kv.h"
#include "store/policies.h"

#define KV_KEY_MAX 1024		  /* bytes of one key */
#define KV_VALUE_MAX (256 * 1024) /* bytes of one string value */

static int kv_key(json_t *args, const char *method, const char **key, struct err *e)
{
	json_t *k = json_array_get(args, 0);

	if (!json_is_string(k) || !json_string_length(k))
		return err_set(e, ERR_INVALID, "kv.%s: the key must be a non-empty string", method);
	if (json_string_length(k) > KV_KEY_MAX)
		return err_set(e, ERR_INVALID, "kv.%s: the key is longer than %d bytes", method, KV_KEY_MAX);
	*key = json_string_value(k);
	return 0;
}

static int kv_arity(json_t *args, const char *method, size_t n, struct err *e)
{
	if (json_array_size(args) != n)
		return err_set(e, ERR_INVALID, "Method not found: kv.%s(%zu arguments)", method, json_array_size(args));
	return 0;
}

/* The policy's kv.maxEntries (Concord's KvPolicy): a put or inc of a new key is refused
 * when the project already has that many entries. */
static int kv_policy(struct task_call *tc, const char *key, struct err *e)
{
	char buf[UUID_STR_LEN], name[POLICY_NAME_MAX + 1], a[24], b[24];
	const char *user = task_call_user_id(tc, buf);
	struct policy_place at = {tc->r->p.org_id, tc->r->p.project_id, user[0] ? user : NULL};
	json_t *rules = NULL;
	const json_t *rule;
	struct kv_value v;
	int64_t max, n;
	int rc = 0;

	if (store_policy_effective(tc->c, &at, &rules, name, e))
		return -1;
	rule = json_object_get(rules, "kv");
	if ((max = policy_number(json_object_get(rule, "maxEntries"))) < 0 ||
	    (rc = store_kv_count(tc->c, tc->r->p.project_id, &n, e)) || n < max)
		goto out;
	if ((rc = store_kv_get(tc->c, tc->r->p.project_id, key, &v, e)))
		goto out;
	free(v.str);
	if (v.found && n <= max)
		goto out;
	str_fmt_cut(a, sizeof a, "%" PRId64, n);
	str_fmt_cut(b, sizeof b, "%" PRId64, max);
	rc = policy_refuse(e, ERR_INVALID, name, rule, "Maximum KV entries exceeded: current {0}, limit {1}", a, b);
out:
	json_decref(rules);
	return rc;
}

static int kv_put(struct task_call *tc, json_t *args, const char *m, const char *key, bool is_long, struct err *e)
{
	const char *pid = tc->r->p.project_id;
	json_t *v = json_array_get(args, 1);

	if (is_long) {
		if (!json_is_integer(v))
			return err_set(e, ERR_INVALID, "kv.putLong: the value of '%s' must be an integer", key);
		if (kv_policy(tc, key, e))
			return -1;
		return store_kv_put(tc->c, pid, key, NULL, json_integer_value(v), e);
	}
	if (!json_is_string(v))
		return err_set(e, ERR_INVALID, "kv.%s: the value of '%s' must be a string", m, key);
	if (json_string_length(v) > KV_VALUE_MAX)
		return err_set(e, ERR_INVALID, "kv.%s: the value of '%s' is longer than %d bytes", m, key,
			       KV_VALUE_MAX);
	if (strlen(json_string_value(v)) != json_string_length(v))
		return err_set(e, ERR_INVALID, "kv.%s: the value of '%s' contains a NUL character", m, key);
	if (kv_policy(tc, key, e))
		return -1;
	return store_kv_put(tc->c, pid, key, json_string_value(v), 0, e);
}

static int kv_get(struct task_call *tc, const char *pid, const char *key, bool is_long, struct err *e)
{
	struct kv_value v;
	int rc = store_kv_get(tc->c, pid, key, &v, e);

	if (rc)
		return rc;
	if (!v.found)
		return 0; /* null */
	if (is_long && !v.is_long)
		rc = err_set(e, ERR_INVALID, "kv.getLong: the value of '%s' is a string, not a number", key);
	else if (is_long)
		tc->out = json_integer(v.num);
	else if (!v.is_long)
		tc->out = json_string(v.str);
	/* getString of a number entry is null, as in Concord. */
	free(v.str);
	return rc;
}

/* The arguments of a `task: kv` step: in {action, key, value}. */
static int step_args(json_t *in, const char **method, json_t **args, struct err *e)
{
	const char *a = json_string_value(json_object_get(in, "action"));
	json_t *v = json_object_get(in, "value");

	if (!a)
		return err_set(e, ERR_INVALID,
			       "kv: 'action' is required (putString, getString, putLong, getLong, "
			       "inc, incLong or remove)");
	*method = a;
	*args = json_pack("[O]", json_object_get(in, "key") ? json_object_get(in, "key") : json_null());
	if (v)
		json_array_append(*args, v);
	return 0;
}

int server_task_kv(struct task_call *tc, struct err *e)
{
	const char *pid = tc->r->p.project_id, *m = tc->method, *key;
	json_t *args = tc->args;
	int64_t n;
	int rc;

	if (!pid[0])
		return err_set(e, ERR_INVALID,
			       "kv: the process has no project (the key-value store is project-scoped; "
			       "start the process in a project)");
	if (!m && (rc = step_args(tc->args, &m, &args, e)))
		return rc;
	if (!json_is_array(args))
		rc = err_set(e, ERR_INVALID, "kv: arguments must be a list");
	else if (strcmp(m, "putString") == 0 || strcmp(m, "putLong") == 0)
		rc =
		    kv_arity(args, m, 2, e) || kv_key(args, m, &key, e) ? -1 : kv_put(tc, args, m, key, m[3] == 'L', e);
	else if (strcmp(m, "getString") == 0 || strcmp(m, "getLong") == 0)
		rc = kv_arity(args, m, 1, e) || kv_key(args, m, &key, e) ? -1 : kv_get(tc, pid, key, m[3] == 'L', e);
	else if (strcmp(m, "inc") == 0 || strcmp(m, "incLong") == 0) {
		rc = kv_arity(args, m, 1, e) || kv_key(args, m, &key, e) || kv_policy(tc, key, e)
			 ? -1
			 : store_kv_inc(tc->c, pid, key, &n, e);
		if (rc == 0)
			tc->out = json_integer(n);
	} else if (strcmp(m, "remove") == 0)
		rc = kv_arity(args, m, 1, e) || kv_key(args, m, &key, e) ? -1 : store_kv_remove(tc->c, pid, key, e);
	else
		rc = err_set(e, ERR_INVALID,
			     "Method not found: kv.%s (putString, getString, putLong, getLong, inc, "
			     "incLong, remove)",
			     m);
	if (args != tc->args)
		json_decref(args);
	return rc;
}
