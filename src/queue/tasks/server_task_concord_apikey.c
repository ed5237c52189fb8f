/* The `concord` task's `createApiKey` and `createOrUpdateApiKey` actions (Concord's
 * ConcordTaskCommon): API keys made by a flow as its initiator, with the rules of
 * POST /api/v1/apikey (docs/api.md "API keys"): a user other than the initiator, or a
 * given key value, only for an admin.  The key value is returned once and is sensitive. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <sodium.h>

#include "auth/authn.h"
#include "auth/rbac.h"
#include "base/datetime.h"
#include "base/names.h"
#include "base/str.h"
#include "queue/tasks/server_tasks.h"
#include "queue/tasks/task_secret.h"
#include "store/apikeys.h"

#define NAME_TRIES 5

static int str_in(json_t *in, const char *key, const char **out, struct err *e)
{
	json_t *v = json_object_get(in, key);

	*out = json_is_string(v) && json_string_length(v) ? json_string_value(v) : NULL;
	if (v && !json_is_null(v) && !json_is_string(v))
		return err_set(e, ERR_INVALID, "concord: '%s' must be a string", key);
	return 0;
}

/* The user of the key: userId or username (+ userDomain); the initiator's own unless an
 * admin (the same 403 whether the named user exists or not). */
static int key_user(struct task_call *tc, json_t *in, const struct principal *who, struct user *u, struct err *e)
{
	const char *id, *name, *domain;
	bool self;
	int rc;

	if (str_in(in, "userId", &id, e) || str_in(in, "username", &name, e) || str_in(in, "userDomain", &domain, e))
		return -ERR_INVALID;
	if (!id && !name)
		return err_set(e, ERR_INVALID, "User ID or user name is required");
	self = id ? strcmp(id, who->user.id) == 0 : strcasecmp(name, who->user.username) == 0 && !domain;
	if (!principal_is_admin(who)) {
		if (!self)
			return err_set(e, ERR_FORBIDDEN,
				       "Operation is not permitted: only admins can create keys for other users");
		*u = who->user;
		return 0;
	}
	rc = id ? (uuid_valid(id, strlen(id)) ? store_user_get(tc->c, id, u, e) : -ERR_NOT_FOUND)
		: store_user_find(tc->c, name, domain, u, e);
	if (rc == -ERR_NOT_FOUND)
		return err_set(e, ERR_INVALID, "User '%.128s' not found.", id ? id : name);
	return rc;
}

/* The key value: given (admins only) or generated. */
static int key_value(json_t *in, const struct principal *who, char *text, size_t cap, uint8_t hash[APIKEY_HASH_LEN],
		     struct err *e)
{
	const char *given;

	if (str_in(in, "key", &given, e))
		return -ERR_INVALID;
	if (!given) {
		authn_apikey_new(text, cap, hash);
		return 0;
	}
	if (!rbac_permitted(who, PERM_API_KEY_SPECIFY_VALUE))
		return err_set(e, ERR_FORBIDDEN, "Not allowed to specify the API key value: only roles with the "
					       "'apiKeySpecifyValue' permission can");
	if (str_fmt(text, cap, "%s", given) || authn_apikey_hash(given, hash, e))
		return err_set(e, ERR_INVALID, "concord: 'key' must be Base64 of 16 to 64 bytes");
	return 0;
}

/* The user's key named name (*found false when none). */
static int find_named(struct task_call *tc, const char *user_id, const char *name, struct apikey *k, bool *found,
		      struct err *e)
{
	struct apikey *keys = NULL;
	size_t n = 0;
	int rc = store_apikey_list(tc->c, user_id, &keys, &n, e);

	*found = false;
	for (size_t i = 0; rc == 0 && i < n && !*found; i++)
		if (strcmp(keys[i].name, name) == 0) {
			*k = keys[i];
			*found = true;
		}
	free(keys);
	return rc;
}

/* Inserts k under name, or under a free "key#<n>" when name is NULL. */
static int insert(struct task_call *tc, struct apikey *k, const char *name, const uint8_t *hash, struct err *e)
{
	struct apikey *keys = NULL;
	size_t n = 0;
	int rc = -1;

	if (name)
		return str_fmt(k->name, sizeof k->name, "%s", name) ? err_set(e, ERR_INVALID, "API key name too long")
								  : store_apikey_insert(tc->c, k, hash, e);
	for (int i = 0; i < NAME_TRIES; i++) {
		if ((rc = store_apikey_list(tc->c, k->user_id, &keys, &n, e)))
			return rc;
		free(keys);
		str_fmt_cut(k->name, sizeof k->name, "key#%zu", n + 1 + (size_t)i);
		if ((rc = store_apikey_insert(tc->c, k, hash, e)) != -ERR_CONFLICT)
			break;
	}
	return rc;
}

static json_t *result(const struct apikey *k, const char *key, const char *what)
{
	return json_pack("{s:b,s:s,s:s,s:s,s:s?}", "ok", 1, "id", k->id, "name", k->name, "key", key, "result", what);
}

int server_task_concord_apikey(struct task_call *tc, bool or_update, struct err *e)
{
	json_t *in = tc->args;
	const char *name, *remote;
	struct principal who;
	struct apikey k = {0}, old;
	struct user u;
	char text[128] = "";
	uint8_t hash[APIKEY_HASH_LEN];
	bool found = false;
	int rc;

	if (str_in(in, "baseUrl", &remote, e) || (!remote && str_in(in, "apiKey", &remote, e)))
		return -ERR_INVALID;
	if (remote)
		return err_set(e, ERR_INVALID, "concord: 'baseUrl' and 'apiKey' are not available on this server: keys "
					       "are created here, as the process's initiator");
	if ((rc = task_initiator(tc, &who, e)) || (rc = task_scope_need(&who, SCOPE_APIKEY, SCOPE_WRITE, e)) ||
	    (rc = key_user(tc, in, &who, &u, e)) ||
	    (rc = str_in(in, "name", &name, e)))
		return rc;
	if (name && name_check(name, "API key", NAME_APIKEY, e))
		return -ERR_INVALID;
	if (name && (rc = find_named(tc, u.id, name, &old, &found, e)))
		return rc;
	if (found && !or_update) {
		if (!json_is_true(json_object_get(in, "ignoreExisting")))
			return err_set(e, ERR_CONFLICT, "API key '%s' already exists.", name);
		tc->out = json_pack("{s:b,s:s}", "ok", 1, "id", old.id);
		if (old.expired_at) {
			char ts[DT_ISO_LEN];
			dt_format_iso(old.expired_at, ts);
			json_object_set_new(tc->out, "expiredAt", json_string(ts));
		}
		return 0;
	}
	if ((rc = key_value(in, &who, text, sizeof text, hash, e)))
		goto out;
	if (found) {
		if ((rc = store_apikey_set_hash(tc->c, old.id, hash, e)) == 0)
			tc->out = result(&old, text, "UPDATED");
	} else {
		uuid_v4(k.id);
		memcpy(k.user_id, u.id, sizeof k.user_id);
		k.created_at = dt_now_ms();
		if ((rc = insert(tc, &k, name, hash, e)) == 0)
			tc->out = result(&k, text, or_update ? "CREATED" : NULL);
	}
	if (rc == 0)
		task_call_sensitive(tc, text);
out:
	sodium_memzero(text, sizeof text);
	return rc;
}
