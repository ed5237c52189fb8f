/* The `concordSecrets` task (Concord's SecretsTaskV2, docs/flows.md "concordSecrets"):
 * getAsString, create, update and delete secrets of the store as the process's initiator,
 * with the API's rules.  Every answer is {ok, status, data}; with `ignoreErrors` a refused
 * or missing secret is an answer (ok false, status ACCESS_DENIED, NOT_FOUND or
 * INVALID_REQUEST) instead of a failed step. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "auth/entity_policy.h"
#include "base/datetime.h"
#include "base/limits.h"
#include "base/str.h"
#include "crypto/payload.h"
#include "crypto/seal.h"
#include "crypto/storepass.h"
#include "queue/tasks/server_tasks.h"
#include "queue/tasks/task_secret.h"

enum action { GET_AS_STRING, CREATE, UPDATE, DELETE };

static const char *const actions[] = {"getAsString", "create", "update", "delete"};

static int str_in(json_t *in, const char *key, const char **out, struct err *e)
{
	json_t *v = json_object_get(in, key);

	*out = json_is_string(v) && json_string_length(v) ? json_string_value(v) : NULL;
	if (v && !json_is_null(v) && !json_is_string(v))
		return err_set(e, ERR_INVALID, "concordSecrets: '%s' must be a string", key);
	return 0;
}

static int parse_action(json_t *in, enum action *a, struct err *e)
{
	const char *v;
	size_t n;

	if (str_in(in, "action", &v, e))
		return -ERR_INVALID;
	*a = GET_AS_STRING;
	if (!v)
		return 0;
	while (isspace((unsigned char)*v))
		v++;
	n = strlen(v);
	while (n && isspace((unsigned char)v[n - 1]))
		n--;
	for (size_t i = 0; i < sizeof actions / sizeof actions[0]; i++)
		if (strlen(actions[i]) == n && strncasecmp(actions[i], v, n) == 0) {
			*a = (enum action)i;
			return 0;
		}
	return err_set(e, ERR_INVALID,
		       "Unknown action: '%.64s'. Available actions: [GETASSTRING, CREATE, UPDATE, DELETE]", v);
}

static json_t *answer(bool ok, const char *status, json_t *data)
{
	return json_pack("{s:b,s:s,s:o}", "ok", ok, "status", status, "data", data ? data : json_null());
}

static int get_as_string(struct task_call *tc, json_t *in, const char *org, const char *name, struct err *e)
{
	const char *pw;
	struct secret s;
	unsigned char *pt = NULL;
	size_t n = 0;
	json_t *v;
	int rc;

	if (str_in(in, "storePassword", &pw, e))
		return -ERR_INVALID;
	if ((rc = task_secret_find(tc, org, name, ACCESS_READER, true, &s, e)) ||
	    (rc = task_secret_open(tc, &s, pw, &pt, &n, e)))
		return rc;
	v = memchr(pt, 0, n) ? NULL : json_stringn((const char *)pt, n);
	payload_free(pt, n);
	if (!v)
		return err_set(e, ERR_INVALID, "concordSecrets: secret '%s' is not text", name);
	task_call_sensitive(tc, json_string_value(v));
	tc->out = answer(true, "OK", v);
	return 0;
}

/* The type and the value of a create or an update: `type` (data, key_pair,
 * username_password) with `data`, `public`+`private` or `username`+`password`. */
static int value(json_t *in, enum secret_type *type, unsigned char **pt, size_t *pt_len, struct err *e)
{
	const char *t, *a, *b;

	*pt = NULL;
	*pt_len = 0;
	if (str_in(in, "type", &t, e))
		return -ERR_INVALID;
	*type = SECRET_TYPE_DATA;
	if (t && !secret_type_parse(t, strlen(t), type))
		return err_set(e, ERR_INVALID,
			       "Invalid argument '%.64s', allowed values are: 'data' (default), 'key_pair' and "
			       "'username_password'",
			       t);
	if (*type == SECRET_TYPE_DATA) {
		if (str_in(in, "data", &a, e))
			return -ERR_INVALID;
		if (!a)
			return err_set(e, ERR_INVALID, "concordSecrets: 'data' is required");
		if (strlen(a) > limits.secret_bytes)
			return err_set(e, ERR_TOO_LARGE, "concordSecrets: 'data' exceeds the secret limit of %zu bytes",
				       limits.secret_bytes);
		if (!(*pt = (unsigned char *)strdup(a)))
			return err_set(e, ERR_INTERNAL, "out of memory");
		*pt_len = strlen(a);
		return 0;
	}
	if (*type == SECRET_TYPE_KEY_PAIR) {
		if (str_in(in, "public", &a, e) || str_in(in, "private", &b, e))
			return -ERR_INVALID;
		if (!a || !b)
			return err_set(e, ERR_INVALID, "concordSecrets: 'public' and 'private' are required");
		return payload_keypair_encode(str_from(a), str_from(b), pt, pt_len, e);
	}
	if (str_in(in, "username", &a, e) || str_in(in, "password", &b, e))
		return -ERR_INVALID;
	if (!a || !b)
		return err_set(e, ERR_INVALID, "concordSecrets: 'username' and 'password' are required");
	return payload_userpass_encode(str_from(a), str_from(b), pt, pt_len, e);
}

static int create(struct task_call *tc, json_t *in, const char *org, const char *name, struct err *e)
{
	struct task_secret_new n = {.org = org, .name = name, .projects = json_object_get(in, "project")};
	json_t *gen = json_object_get(in, "generatePassword");
	char id[UUID_STR_LEN], *password = NULL;
	unsigned char *pt = NULL;
	size_t pt_len = 0;
	int rc;

	if (!n.projects || json_is_null(n.projects))
		n.projects = json_object_get(in, "projects");
	if (str_in(in, "storePassword", &n.store_password, e) || str_in(in, "visibility", &n.visibility, e))
		return -ERR_INVALID;
	n.generate_password = json_is_true(gen) || (json_is_string(gen) && strcasecmp(json_string_value(gen), "true") == 0);
	if ((rc = value(in, &n.type, &pt, &pt_len, e)))
		return rc;
	n.pt = pt;
	n.pt_len = pt_len;
	if (!task_call_dry_run(tc))
		rc = task_secret_create(tc, &n, id, &password, e);
	payload_free(pt, pt_len);
	task_secret_password_free(password);
	if (rc == 0)
		tc->out = answer(true, "OK", NULL);
	return rc;
}

/* The projects an update names (projectIds, else projectNames); *given false when none. */
static int update_projects(struct task_call *tc, json_t *in, const struct secret *s, struct secret_project **ps,
			   size_t *n, bool *given, struct err *e)
{
	json_t *ids = json_object_get(in, "projectIds"), *names = json_object_get(in, "projectNames");
	struct principal who;
	struct org o;
	int rc;

	*ps = NULL;
	*n = 0;
	*given = (ids && !json_is_null(ids)) || (names && !json_is_null(names));
	if (!*given)
		return 0;
	if ((rc = task_initiator(tc, &who, e)) || (rc = store_org_get(tc->c, s->org_id, &o, e)))
		return rc;
	return task_secret_projects(tc, &who, &o, ids && !json_is_null(ids) ? ids : names,
				    ids && !json_is_null(ids), ps, n, e);
}

/* The new value (or the current one, re-sealed under a new store password), as the v2
 * update endpoint does it (api/secrets_update.c). */
static int reseal(struct task_call *tc, json_t *in, struct secret *s, const char *pw, const char *new_pw,
		  unsigned char **env, size_t *env_len, struct err *e)
{
	const struct masterkey *mk = tc->r->q->cfg.master_key;
	unsigned char *old = NULL, *pt = NULL;
	size_t old_len = 0, pt_len = 0;
	enum secret_type type = s->type;
	int rc;

	if (!s->password_protected && (pw || new_pw))
		return err_set(e, ERR_INVALID,
			       "The secret is encrypted with the server's key, the 'storePassword' cannot be changed");
	if (s->password_protected && !pw)
		return err_set(e, ERR_INVALID, "Updating the secret's data requires the original 'storePassword'");
	if (new_pw && storepass_check(new_pw, tc->r->p.initiator, e))
		return -ERR_INVALID;
	if ((rc = task_secret_open(tc, s, pw, &old, &old_len, e)))
		return rc;
	if (json_object_get(in, "data") && (rc = value(in, &type, &pt, &pt_len, e)) == 0) {
		s->type = type;
		s->updated_at = dt_now_ms();
	}
	if (rc == 0)
		rc = seal_encrypt(mk, new_pw ? new_pw : pw, &(struct seal_binding){s->org_id, s->name}, pt ? pt : old,
				  pt ? pt_len : old_len, env, env_len, e);
	task_call_sensitive(tc, new_pw);
	payload_free(old, old_len);
	payload_free(pt, pt_len);
	return rc;
}

/* The entity rules on the secret as the update leaves it (auth/entity_policy.h). */
static int update_policy(struct task_call *tc, const struct secret *s, const struct secret_project *ps, size_t n,
			 struct err *e)
{
	struct principal who;
	int rc = task_initiator(tc, &who, e);

	return rc ? rc : entity_policy_secret(tc->c, &who, s, n ? ps[0].id : NULL, true, e);
}

static int update(struct task_call *tc, json_t *in, const char *org, const char *name, struct err *e)
{
	const char *pw, *new_pw;
	struct secret s;
	struct secret_project *ps = NULL;
	unsigned char *env = NULL;
	size_t n = 0, env_len = 0;
	bool given;
	int rc;

	if (str_in(in, "storePassword", &pw, e) || str_in(in, "newStorePassword", &new_pw, e))
		return -ERR_INVALID;
	rc = task_secret_find(tc, org, name, ACCESS_WRITER, false, &s, e);
	if (rc == -ERR_NOT_FOUND && json_is_true(json_object_get(in, "createIfMissing")))
		return create(tc, in, org, name, e);
	if (rc)
		return rc;
	if (!json_object_get(in, "data") && !new_pw) { /* Concord: nothing to change */
		tc->out = answer(true, "OK", NULL);
		return 0;
	}
	if ((rc = update_projects(tc, in, &s, &ps, &n, &given, e)) == 0 &&
	    (rc = reseal(tc, in, &s, pw, new_pw, &env, &env_len, e)) == 0) {
		if (given)
			s.n_projects = n;
		if (new_pw)
			s.password_protected = true;
		if (!task_call_dry_run(tc) && (rc = update_policy(tc, &s, ps, n, e)) == 0)
			rc = store_secret_update(tc->c, &s, given, ps, n, env, env_len, false, e);
	}
	free(ps);
	free(env);
	if (rc == 0)
		tc->out = answer(true, "OK", NULL);
	return rc;
}

static int delete_secret(struct task_call *tc, const char *org, const char *name, struct err *e)
{
	struct secret s;
	int rc;

	if ((rc = task_secret_find(tc, org, name, ACCESS_OWNER, false, &s, e)))
		return rc;
	if (!task_call_dry_run(tc) && (rc = store_secret_delete(tc->c, s.id, e)))
		return rc;
	tc->out = answer(true, "OK", NULL);
	return 0;
}

/* ignoreErrors: Concord's handleErrors turns a refusal into an answer. */
static int soften(struct task_call *tc, json_t *in, int rc, struct err *e)
{
	const char *status = e->code == ERR_NOT_FOUND	? "NOT_FOUND"
			     : e->code == ERR_FORBIDDEN ? "ACCESS_DENIED"
			     : e->code == ERR_INVALID || e->code == ERR_CONFLICT || e->code == ERR_TOO_LARGE
				 ? "INVALID_REQUEST"
				 : NULL;

	if (!status || !json_is_true(json_object_get(in, "ignoreErrors")))
		return rc;
	json_decref(tc->out);
	tc->out = answer(false, status, NULL);
	return 0;
}

int server_task_concord_secrets(struct task_call *tc, struct err *e)
{
	json_t *in = tc->args;
	const char *org, *name;
	enum action a;
	int rc;

	if (tc->method)
		return err_set(e, ERR_INVALID, "Method not found: concordSecrets.%s (use it as a step: task: concordSecrets)",
			       tc->method);
	if (!json_is_object(in))
		return err_set(e, ERR_INVALID, "concordSecrets: 'in' must be an object");
	if (parse_action(in, &a, e) || str_in(in, "org", &org, e) || str_in(in, "name", &name, e))
		return -ERR_INVALID;
	if (!name)
		return err_set(e, ERR_INVALID, "concordSecrets: 'name' is required");
	switch (a) {
	case GET_AS_STRING:
		rc = get_as_string(tc, in, org, name, e);
		break;
	case CREATE:
		rc = create(tc, in, org, name, e);
		break;
	case UPDATE:
		rc = update(tc, in, org, name, e);
		break;
	default:
		rc = delete_secret(tc, org, name, e);
		break;
	}
	return rc ? soften(tc, in, rc, e) : 0;
}
