/* /api/v1/apikey: per-user API keys.  Key values are shown once, at creation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "api/apikey_scopes.h"
#include "api/doc_schemas.h"
#include "api/routes.h"
#include "auth/authn.h"
#include "auth/rbac.h"
#include "base/datetime.h"
#include "base/jsonx.h"
#include "base/names.h"
#include "base/str.h"
#include "store/apikeys.h"

#define NAME_RETRIES 5

static json_t *key_json(const struct apikey *k)
{
	json_t *v = json_pack("{s:s,s:s,s:s}", "id", k->id, "userId", k->user_id, "name", k->name);
	char ts[DT_ISO_LEN];

	if (k->expired_at) {
		dt_format_iso(k->expired_at, ts);
		json_object_set_new(v, "expiredAt", json_string(ts));
	}
	api_apikey_scopes_json(k, v);
	return v;
}

/* The user the key is for: userId, or username (+ userDomain), or else the caller; only
 * admins may name someone else. */
static int target_user(struct api_call *c, json_t *body, struct user *u)
{
	const char *user_id = NULL, *username = NULL, *domain = NULL;
	struct err lookup;
	int rc;

	if (jsonx_str(body, "userId", false, &user_id, &c->err) ||
	    jsonx_str(body, "userDomain", false, &domain, &c->err))
		return -ERR_INVALID;
	if (jsonx_str(body, "username", false, &username, &c->err))
		return -ERR_INVALID;
	if (!user_id && !username) { /* Concord: the caller's own key */
		*u = c->who.user;
		return 0;
	}
	/* Anyone but an admin may name only themselves, and learns nothing else: the same 403
	 * whether the named user exists or not (no lookup, no "User not found" oracle). */
	if (!principal_is_admin(&c->who)) {
		bool self = user_id ? strcmp(user_id, c->who.user.id) == 0
				    : strcasecmp(username, c->who.user.username) == 0 && (!domain || !*domain);
		if (!self)
			return api_fail(c, ERR_FORBIDDEN,
					"Operation is not permitted: only admins can create keys for other users");
		*u = c->who.user;
		return 0;
	}
	if (user_id)
		rc = store_user_get(c->db, user_id, u, &lookup);
	else
		rc = store_user_find(c->db, username, domain && *domain ? domain : NULL, u, &lookup);
	if (rc == -ERR_NOT_FOUND)
		return api_fail(c, ERR_INVALID, "User not found: %.128s", user_id ? user_id : username);
	if (rc == -ERR_CONFLICT)
		return api_fail(c, ERR_INVALID, "%s", lookup.msg);
	if (rc) {
		c->err = lookup;
		return rc;
	}
	return 0;
}

/* The smallest n >= 1 such that "key#n" is not a name of the user's keys. */
static int free_key_name(struct api_call *c, const char *user_id, char *out, size_t cap)
{
	struct apikey *keys = NULL;
	size_t n = 0;
	bool *used;
	int rc = store_apikey_list(c->db, user_id, &keys, &n, &c->err);

	if (rc)
		return rc;
	used = calloc(n + 2, sizeof *used);
	if (!used) {
		free(keys);
		return api_fail(c, ERR_INTERNAL, "out of memory");
	}
	for (size_t i = 0; i < n; i++) {
		int64_t num;
		if (strncmp(keys[i].name, "key#", 4) == 0 &&
		    str_to_i64(str_from(keys[i].name + 4), 1, (int64_t)n + 1, &num, "n", NULL) == 0)
			used[num] = true;
	}
	for (size_t i = 1; i <= n + 1; i++)
		if (!used[i]) {
			if (str_fmt(out, cap, "key#%zu", i))
				rc = api_fail(c, ERR_INTERNAL, "API key name key#%zu too long", i);
			break;
		}
	free(used);
	free(keys);
	return rc;
}

static int parse_expiry(struct api_call *c, json_t *body, int64_t *out)
{
	const char *s = NULL;

	*out = 0;
	if (jsonx_str(body, "expiredAt", false, &s, &c->err))
		return -ERR_INVALID;
	if (!s)
		return 0;
	if (dt_parse_iso(s, strlen(s), false, out, "expiredAt", &c->err))
		return -ERR_INVALID;
	if (*out <= dt_now_ms())
		return api_fail(c, ERR_INVALID, "expiredAt must lie in the future, got '%.64s'", s);
	return 0;
}

static int key_value(struct api_call *c, json_t *body, char *text, size_t cap, uint8_t hash[APIKEY_HASH_LEN])
{
	const char *given = NULL;

	if (jsonx_str(body, "key", false, &given, &c->err))
		return -ERR_INVALID;
	if (!given) {
		authn_apikey_new(text, cap, hash);
		return 0;
	}
	if (!rbac_permitted(&c->who, PERM_API_KEY_SPECIFY_VALUE))
		return api_fail(c, ERR_FORBIDDEN, "Not allowed to specify the API key value: only roles with the "
						  "'apiKeySpecifyValue' permission can");
	if (str_fmt(text, cap, "%s", given) || authn_apikey_hash(given, hash, &c->err))
		return api_fail(c, ERR_INVALID, "'key' must be Base64 of 16 to 64 bytes");
	return 0;
}

static int insert_key(struct api_call *c, struct apikey *k, const char *name, const uint8_t *hash)
{
	int rc = -1;

	for (int attempt = 0; attempt < NAME_RETRIES; attempt++) {
		if (name) {
			if (str_fmt(k->name, sizeof k->name, "%s", name))
				return api_fail(c, ERR_INVALID, "Invalid API key name: longer than %zu characters",
						sizeof k->name - 1);
		} else if ((rc = free_key_name(c, k->user_id, k->name, sizeof k->name))) {
			return rc;
		}
		rc = store_apikey_insert(c->db, k, hash, &c->err);
		/* A generated name can race with a concurrent create: pick again. */
		if (rc != -ERR_CONFLICT || name)
			break;
	}
	if (rc == -ERR_CONFLICT && name)
		return api_fail(c, ERR_CONFLICT, "API Token with name '%s' already exists", name);
	return rc;
}

static int create(struct api_call *c)
{
	json_t *body = NULL, *out;
	struct user u;
	struct apikey k = {0};
	const char *name = NULL;
	char text[128], name_buf[129];
	uint8_t hash[APIKEY_HASH_LEN];
	int rc;

	if ((rc = api_body_object(c, &body)))
		return rc;
	if ((rc = target_user(c, body, &u)) || (rc = parse_expiry(c, body, &k.expired_at)))
		goto out;
	if ((rc = jsonx_str(body, "name", false, &name, &c->err)))
		goto out;
	if (name) {
		struct str t = str_trim(str_from(name));
		if (t.len > 128) {
			rc = api_fail(c, ERR_INVALID, "Invalid API key name: longer than 128 characters");
			goto out;
		}
		if (str_fmt(name_buf, sizeof name_buf, "%.*s", (int)t.len, t.p)) {
			rc = api_fail(c, ERR_INVALID, "Invalid API key name: longer than %zu characters",
				      sizeof name_buf - 1);
			goto out;
		}
		if ((rc = name_check(name_buf, "API key", NAME_APIKEY, &c->err)))
			goto out;
		name = name_buf;
	}
	if ((rc = api_apikey_scopes(c, body, &u, &k)) || (rc = key_value(c, body, text, sizeof text, hash)))
		goto out;
	uuid_v4(k.id);
	memcpy(k.user_id, u.id, sizeof k.user_id);
	k.created_at = dt_now_ms();
	if ((rc = insert_key(c, &k, name, hash)))
		goto out;
	api_audit_note(c, "name", name ? name : k.name);
	api_audit_note(c, "username", u.username);
	api_apikey_scopes_audit(c, &k);
	out = key_json(&k);
	json_object_set_new(out, "ok", json_true());
	json_object_set_new(out, "key", json_string(text));
	json_object_set_new(out, "result", json_string("CREATED"));
	rc = api_reply(c, out);
out:
	sodium_memzero(text, sizeof text);
	json_decref(body);
	return rc;
}

static int list(struct api_call *c)
{
	const char *user_id = http_query(c->req, "userId");
	struct apikey *keys = NULL;
	struct user u;
	size_t n = 0;
	json_t *arr;
	int rc;

	if (user_id && *user_id && strcmp(user_id, c->who.user.id) != 0) {
		if (!uuid_valid(user_id, strlen(user_id)))
			return api_fail(c, ERR_INVALID, "userId must be a UUID, got '%.64s'", user_id);
		if (!principal_is_admin(&c->who))
			return api_fail(c, ERR_FORBIDDEN,
					"Operation is not permitted: only admins can list other users' keys");
		if ((rc = store_user_get(c->db, user_id, &u, &c->err)))
			return rc;
	} else {
		user_id = c->who.user.id;
	}
	if ((rc = store_apikey_list(c->db, user_id, &keys, &n, &c->err)))
		return rc;
	arr = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, key_json(&keys[i]));
	free(keys);
	return api_reply(c, arr);
}

static int delete (struct api_call *c)
{
	const char *id = api_param(c, "id");
	struct apikey k;
	int rc;

	if (!uuid_valid(id, strlen(id)))
		return api_fail(c, ERR_NOT_FOUND, "API key not found: %.64s", id);
	if ((rc = store_apikey_get(c->db, id, &k, &c->err)))
		return rc;
	if (strcmp(k.user_id, c->who.user.id) != 0 && !principal_is_admin(&c->who))
		return api_fail(c, ERR_FORBIDDEN, "Operation is not permitted: the key belongs to another user");
	if ((rc = store_apikey_delete(c->db, id, &c->err)))
		return rc;
	return api_reply(c, json_pack("{s:s,s:b}", "result", "DELETED", "ok", 1));
}

/* docs/security.md "Scoped API keys" */
#define SCHEMA_KEY_LIMITS                                                                                              \
	"'scopes':{'type':'array','items':{'type':'string','description':'resource:action[@org[/project]]'}},"         \
	"'rateLimit':{'type':'string','pattern':'^[0-9]+/(s|min)$'}"
#define SCHEMA_KEY                                                                                                     \
	"{'type':'object','properties':{'id':" SCHEMA_UUID ",'userId':" SCHEMA_UUID ",'name':{'type':'string'},"       \
	"'expiredAt':" SCHEMA_DATE "," SCHEMA_KEY_LIMITS "}}"

static const struct api_doc doc_create = {
    .summary = "Create an API key (for yourself; admins for anyone); the key is shown only in this answer",
    .body = "{'type':'object','properties':{'userId':" SCHEMA_UUID ",'username':{'type':'string'},"
	    "'userDomain':{'type':'string'},'name':{'type':'string','maxLength':128},'expiredAt':" SCHEMA_DATE
	    ",'key':{'type':'string','writeOnly':true,'description':'a key of your own instead of a generated "
	    "one'}," SCHEMA_KEY_LIMITS "}}",
    .response = "{'type':'object','properties':{'ok':{'type':'boolean'},'id':" SCHEMA_UUID ",'userId':" SCHEMA_UUID
		",'name':{'type':'string'},'expiredAt':" SCHEMA_DATE ",'key':{'type':'string'}," SCHEMA_KEY_LIMITS ","
		"'result':{'const':'CREATED'}}}",
    .errors = "400 403 404 409 415",
    .audit = {"API_KEY", "CREATE", NULL},
};
static const struct api_doc doc_list = {
    .summary = "The API keys of a user (yours by default; admins any), never the keys themselves",
    .params = (const struct api_param_doc[]){{"userId", "string", "whose keys (admins only for others)"}, {0}},
    .response = "{'type':'array','items':" SCHEMA_KEY "}",
    .errors = "400 403 404",
};
static const struct api_doc doc_delete = {
    .summary = "Delete an API key (your own; admins any)",
    .params = (const struct api_param_doc[]){{"id", "string", "the key's id"}, {0}},
    .response = SCHEMA_RESULT,
    .errors = "403 404",
    .audit = {"API_KEY", "DELETE", NULL},
};

const struct api_route api_apikey_routes[] = {
    {"POST", "/api/v1/apikey", create, 0, &doc_create},
    {"GET", "/api/v1/apikey", list, 0, &doc_list},
    {"DELETE", "/api/v1/apikey/{id}", delete, 0, &doc_delete},
    {0},
};
