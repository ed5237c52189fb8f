/* The table of server tasks (server_tasks.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sodium.h>

#include "auth/rbac.h"
#include "base/log.h"
#include "base/str.h"
#include "crypto/seal.h"
#include "crypto/session.h"
#include "flow/start_def.h"
#include "queue/tasks/api_client.h"
#include "queue/main_json.h"
#include "queue/tasks/server_tasks.h"
#include "store/process_scopes.h"
#include "store/sensitive.h"
#include "store/users.h"

static const struct {
	const char *name;
	server_task_fn fn;
} tasks[] = {
    {"concord", server_task_concord},
    {"kv", server_task_kv},
    {"crypto", server_task_crypto},
    {"jsonStore", server_task_jsonstore},
    {"concordSecrets", server_task_concord_secrets},
    {"lock", server_task_lock},
    {"unlock", server_task_unlock},
    {"docker", server_task_docker},
    {"inventory", server_task_inventory},
    {"project", server_task_project},
    {"repositoryRefresh", server_task_repository_refresh},
};

int task_call_api(struct task_call *tc, const char *method, const char *path, json_t *body, long *status,
		  json_t **answer, struct err *e)
{
	char token[SESSION_TOKEN_LEN], *url = NULL, *auth = NULL;
	const char *self = tc->r->q->cfg.self_url;
	int rc;

	if (!self || !*self)
		return err_set(e, ERR_UNAVAILABLE, "Task '%s' is not available: this server's API address is unknown",
			       tc->task);
	session_token(tc->r->q->session_key, tc->r->p.instance_id, token);
	if (asprintf(&url, "%s%s", self, path) < 0 || asprintf(&auth, "X-Concord-SessionToken: %s", token) < 0) {
		free(url);
		url = NULL;
		auth = NULL;
	}
	sodium_memzero(token, sizeof token);
	if (!url || !auth)
		rc = err_set(e, ERR_INTERNAL, "out of memory");
	else
		rc = api_client_json(method, url, auth, body, status, answer, e);
	free(auth);
	free(url);
	return rc;
}

const char *task_call_user_id(struct task_call *tc, char buf[UUID_STR_LEN])
{
	struct err e;

	if (store_process_current_user(tc->c, tc->r->p.instance_id, buf, &e) == 0 && buf[0])
		return buf;
	return tc->r->p.initiator_id;
}

int task_call_principal(struct task_call *tc, struct principal *who, struct err *e)
{
	char buf[UUID_STR_LEN];

	*who = (struct principal){.method = AUTH_SESSION};
	if (store_user_get(tc->c, task_call_user_id(tc, buf), &who->user, e))
		return -1;
	memcpy(who->session_process, tc->r->p.instance_id, sizeof who->session_process);
	memcpy(who->session_project, tc->r->p.project_id, sizeof who->session_project);
	if (task_scopes_load(tc, &who->scopes, e))
		return -1;
	return rbac_grants_load(tc->c, who, e);
}

int task_scopes_load(struct task_call *tc, struct scope_set *out, struct err *e)
{
	char *text = NULL;
	int rc;

	out->n = 0;
	if ((rc = store_process_scopes_get(tc->c, tc->r->p.instance_id, &text, e)) == 0 && text)
		rc = scope_set_load(text, out, e);
	free(text);
	return rc;
}

int task_scope_need(struct principal *who, enum scope_resource r, enum scope_action a, struct err *e)
{
	struct scope_need need = {.set = true, .resource = r, .action = a};

	if (!who->scopes.n)
		return 0;
	if (!scope_find(&who->scopes, &need))
		return err_set(e, ERR_FORBIDDEN,
			       "%s:%s is outside the scopes of the API key this process acts with (it was started "
			       "with a scoped key)",
			       scope_resource_name(r), scope_action_name(a));
	who->need = need;
	return 0;
}

void task_call_sensitive(struct task_call *tc, const char *value)
{
	if (!value || !*value)
		return;
	if (!tc->sensitive)
		tc->sensitive = json_array();
	json_array_append_new(tc->sensitive, json_string(value));
}

/* The envelope of a process's list is bound to its org and "process-sensitive:<id>". */
static struct seal_binding sensitive_binding(const struct running *r, char *name, size_t cap)
{
	if (str_fmt(name, cap, "process-sensitive:%s", r->p.instance_id)) /* 54 bytes: the callers give 64 */
		abort();
	return (struct seal_binding){r->p.org_id, name};
}

json_t *task_sensitive_load(struct store_conn *c, struct running *r)
{
	const struct masterkey *mk = r->q ? r->q->cfg.master_key : NULL;
	char name[64];
	struct seal_binding b = sensitive_binding(r, name, sizeof name);
	unsigned char *env = NULL, *pt = NULL;
	size_t env_len = 0, pt_len = 0;
	json_t *list = NULL;
	struct err e;

	if (!mk || store_sensitive_get(c, r->p.instance_id, &env, &env_len, &e) || !env)
		goto out;
	if (seal_decrypt(mk, NULL, &b, env, env_len, &pt, &pt_len, &e) == 0)
		list = json_loadb((const char *)pt, pt_len, 0, NULL);
	else
		LOG_W("process %s: cannot open its sensitive values: %s", r->p.instance_id, e.msg);
	if (list && !json_is_array(list)) {
		json_decref(list);
		list = NULL;
	}
out:
	free(env);
	seal_plain_free(pt, pt_len);
	return list;
}

/* Adds the new sensitive values (tc's, or those the flow marked) to the process's sealed
 * list (a suspended process resumes in a new runner, which gets them in its start frame). */
void task_sensitive_add(struct store_conn *c, struct running *r, json_t *values)
{
	const struct masterkey *mk = r->q ? r->q->cfg.master_key : NULL;
	char name[64], *text;
	struct seal_binding b = sensitive_binding(r, name, sizeof name);
	json_t *list;
	unsigned char *env = NULL;
	size_t env_len = 0;
	struct err e = {0};
	size_t i, j, before;
	json_t *v;

	if (!mk || !json_is_array(values))
		return;
	if (!(list = task_sensitive_load(c, r)))
		list = json_array();
	before = json_array_size(list);
	json_array_foreach(values, i, v) {
		if (!json_is_string(v))
			continue;
		for (j = 0; j < json_array_size(list) && !json_equal(json_array_get(list, j), v); j++)
			;
		if (j == json_array_size(list))
			json_array_append(list, v);
	}
	if (json_array_size(list) == before) { /* nothing new */
		json_decref(list);
		return;
	}
	text = json_dumps(list, JSON_COMPACT);
	if (!text || seal_encrypt(mk, NULL, &b, (unsigned char *)text, strlen(text), &env, &env_len, &e) ||
	    store_sensitive_put(c, r->p.instance_id, env, env_len, &e))
		LOG_W("process %s: cannot store its sensitive values: %s", r->p.instance_id,
		      e.msg[0] ? e.msg : "out of memory");
	if (text)
		seal_plain_free((unsigned char *)text, strlen(text));
	free(env);
	json_decref(list);
}

bool task_call_dry_run(struct task_call *tc)
{
	struct err e;
	json_t *cfg = main_json_load(tc->workdir, &e), *v = start_def_switch(cfg, "dryRun");
	bool on = json_is_true(v) || (json_is_string(v) && strcasecmp(json_string_value(v), "true") == 0);

	json_decref(cfg);
	return on;
}

int server_task_run(struct task_call *tc, struct err *e)
{
	int rc;

	for (size_t i = 0; i < sizeof tasks / sizeof tasks[0]; i++)
		if (tasks[i].name && strcmp(tasks[i].name, tc->task) == 0) {
			rc = tasks[i].fn(tc, e);
			if (rc == 0 && tc->sensitive)
				task_sensitive_add(tc->c, tc->r, tc->sensitive);
			return rc;
		}
	return err_set(e, ERR_UNAVAILABLE, "Task '%s' is not available on this server (docs/flows.md, \"Tasks\")",
		       tc->task ? tc->task : "?");
}
