/* Updating and moving secrets: POST /api/v1/org/{org}/secret/{name} (JSON) and
 * POST /api/v2/org/{org}/secret/{name} (multipart).  Omitted fields are not changed. */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "api/secrets.h"
#include "auth/entity_policy.h"
#include "base/b64.h"
#include "base/datetime.h"
#include "base/json_pluck.h"
#include "base/jsonx.h"
#include "base/limits.h"
#include "base/names.h"
#include "base/str.h"
#include "crypto/payload.h"
#include "crypto/storepass.h"
#include "store/users.h"

/* What a request asks to change; NULL / -1 / false mean "leave as it is". */
struct update_req {
	const char *name;
	const char *owner_id, *owner_username;
	int visibility; /* -1, 0 PRIVATE, 1 PUBLIC */
	const char *store_password, *new_store_password;
	bool clear_project;
	const char *project_id, *project_name; /* v1 */
	json_t *project_ids, *project_names;   /* v1 arrays, borrowed from the body */
	const struct multipart *mp;	       /* v2 */
	struct secret_projects_req projects;
	const char *org_id, *org_name;
	bool has_value;
	enum secret_type type;
	unsigned char *pt; /* new plaintext (payload_free) */
	size_t pt_len;
	char *public_key; /* of a generated pair */
};

/* Store passwords point into our own buffers (json_pluck's values, the request arena),
 * never into jansson's strings. */
static void wipe(const char *s)
{
	if (s)
		sodium_memzero((char *)s, strlen(s));
}

static int target_org(struct api_call *c, const struct update_req *u, const struct org *cur, struct org *t, bool *moved)
{
	struct err lookup;
	int rc;

	*moved = false;
	*t = *cur;
	if (!u->org_id && !u->org_name)
		return 0;
	if (u->org_id)
		rc = uuid_valid(u->org_id, strlen(u->org_id)) ? store_org_get(c->db, u->org_id, t, &lookup)
							      : -ERR_NOT_FOUND;
	else
		rc = store_org_find(c->db, u->org_name, t, &lookup);
	if (rc == -ERR_NOT_FOUND)
		return api_fail(c, ERR_INVALID, "Organization not found: %.128s", u->org_id ? u->org_id : u->org_name);
	if (rc) {
		c->err = lookup;
		return rc;
	}
	if (strcmp(t->id, cur->id) == 0)
		return 0;
	*moved = true;
	return rbac_org(c->db, &c->who, t, RBAC_ORG_MEMBER, &c->err);
}

static int apply_owner(struct api_call *c, const struct update_req *u, const struct secret *s, struct secret *ns)
{
	struct user usr;
	struct err lookup;
	int rc;

	if (!u->owner_id && !u->owner_username)
		return 0;
	if (u->owner_id)
		rc = uuid_valid(u->owner_id, strlen(u->owner_id)) ? store_user_get(c->db, u->owner_id, &usr, &lookup)
								  : -ERR_NOT_FOUND;
	else
		rc = store_user_find(c->db, u->owner_username, NULL, &usr, &lookup);
	if (rc == -ERR_NOT_FOUND)
		return api_fail(c, ERR_INVALID, "User not found: %.128s",
				u->owner_id ? u->owner_id : u->owner_username);
	if (rc) {
		c->err = lookup;
		return rc;
	}
	if (strcmp(usr.id, s->owner_id) == 0)
		return 0;
	if ((rc = secrets_check(c, s, ACCESS_OWNER)) || (rc = rbac_owner_candidate(c->db, ns->org_id, &usr, &c->err)))
		return rc;
	memcpy(ns->owner_id, usr.id, sizeof ns->owner_id);
	memcpy(ns->owner_name, usr.username, sizeof ns->owner_name);
	return 0;
}

/* The projects the request names, resolved in the secret's (possibly new) organization. */
static int resolve_projects(struct api_call *c, struct update_req *u, const char *org_id)
{
	size_t i;
	json_t *v;
	int rc;

	if (u->mp)
		return secrets_form_projects(c, u->mp, org_id, &u->projects);
	memset(&u->projects, 0, sizeof u->projects);
	json_array_foreach(u->project_ids ? u->project_ids : u->project_names, i, v)
	{
		if (!json_is_string(v))
			return api_fail(c, ERR_INVALID, "'%s' must be a list of strings",
					u->project_ids ? "projectIds" : "projectNames");
		if ((rc = secrets_projects_add(c, org_id, str_from(json_string_value(v)), u->project_ids != NULL,
					       &u->projects)))
			return rc;
	}
	if (u->project_id || u->project_name)
		return secrets_projects_add(c, org_id, str_from(u->project_id ? u->project_id : u->project_name),
					    u->project_id != NULL, &u->projects);
	return 0;
}

static int apply_meta(struct api_call *c, struct update_req *u, const struct secret *s, struct secret *ns)
{
	int rc;

	if (!u->clear_project && (rc = resolve_projects(c, u, ns->org_id)))
		return rc;
	if ((rc = apply_owner(c, u, s, ns)))
		return rc;
	if (u->name) {
		if (name_check(u->name, "secret", NAME_PLAIN, &c->err))
			return -ERR_INVALID;
		if (str_fmt(ns->name, sizeof ns->name, "%s", u->name))
			return api_fail(c, ERR_INVALID, "secret name is longer than %zu characters",
					sizeof ns->name - 1);
	}
	if (u->visibility >= 0)
		ns->is_public = u->visibility == 1;
	return 0;
}

static int check_passwords(struct api_call *c, const struct update_req *u, const struct secret *s, bool reseal)
{
	if (!s->password_protected && (u->store_password || u->new_store_password))
		return api_fail(c, ERR_INVALID,
				"The secret is encrypted with the server's key, can't use or set 'storePassword'");
	if (u->new_store_password && storepass_check(u->new_store_password, c->who.user.username, &c->err))
		return -ERR_INVALID;
	if (reseal && s->password_protected && !u->store_password)
		return api_fail(c, ERR_INVALID,
				u->has_value
				    ? "Updating the secret's data requires the original 'storePassword'"
				    : "Renaming, moving or re-encrypting a password-protected secret requires its "
				      "original 'storePassword'");
	return 0;
}

/* Seals the new (or the current) value under the new binding and password. */
static int reseal(struct api_call *c, const struct update_req *u, const struct secret *s, struct secret *ns,
		  unsigned char **env, size_t *env_len)
{
	const char *pw =
	    s->password_protected ? (u->new_store_password ? u->new_store_password : u->store_password) : NULL;
	unsigned char *old = NULL;
	size_t old_len = 0;
	int rc;

	/* Opening the current value also verifies the current store password. */
	if ((rc = secrets_open(c, s, s->password_protected ? u->store_password : NULL, &old, &old_len)))
		return rc;
	if (u->has_value) {
		ns->type = u->type;
		ns->updated_at = dt_now_ms();
		rc = secrets_seal(c, ns->org_id, ns->name, pw, u->pt, u->pt_len, env, env_len);
	} else {
		rc = secrets_seal(c, ns->org_id, ns->name, pw, old, old_len, env, env_len);
	}
	payload_free(old, old_len);
	return rc;
}

static int apply(struct api_call *c, struct update_req *u)
{
	struct org o, t;
	struct secret s, ns;
	unsigned char *env = NULL;
	size_t env_len = 0;
	bool moved, renamed, need_reseal, set_projects;
	json_t *v;
	int rc;

	if ((rc = secrets_load(c, &o, &s, ACCESS_WRITER)) || (rc = target_org(c, u, &o, &t, &moved)))
		return rc;
	ns = s;
	if (moved) {
		/* Concord: a secret moving to another org loses its projects, named or not */
		memcpy(ns.org_id, t.id, sizeof ns.org_id);
		memcpy(ns.org_name, t.name, sizeof ns.org_name);
		u->clear_project = true;
	}
	if ((rc = apply_meta(c, u, &s, &ns)))
		return rc;
	set_projects = u->clear_project || u->projects.given;
	if (u->clear_project)
		memset(&u->projects, 0, sizeof u->projects);
	renamed = strcmp(ns.name, s.name) != 0;
	need_reseal = u->has_value || u->new_store_password || moved || renamed;
	if ((rc = check_passwords(c, u, &s, need_reseal)) ||
	    (rc = entity_policy_secret(c->db, &c->who, &ns, u->projects.n ? u->projects.items[0].id : NULL, true,
				       &c->err)))
		return rc;
	if (need_reseal && (rc = reseal(c, u, &s, &ns, &env, &env_len)))
		return rc;
	rc = store_secret_update(c->db, &ns, set_projects, u->projects.items, u->projects.n, env, env_len, moved,
				 &c->err);
	free(env);
	if (rc)
		return rc;
	v = json_pack("{s:b,s:s}", "ok", 1, "result", "UPDATED");
	if (u->public_key && u->type == SECRET_TYPE_KEY_PAIR) {
		json_t *pk = json_string(u->public_key); /* NULL when not UTF-8 */
		if (pk)
			json_object_set_new(v, "publicKey", pk);
	}
	return api_reply(c, v);
}

static void req_cleanup(struct update_req *u)
{
	payload_free(u->pt, u->pt_len);
	free(u->public_key);
	wipe(u->store_password);
	wipe(u->new_store_password);
}

/* ---- v1: JSON ----
 * data, storePassword and newStorePassword are taken out of the body's text before it is
 * parsed (base/json_pluck.h): the secret's Base64 and the passwords never become jansson
 * strings, which are freed without being wiped; the body itself is wiped when freed. */
enum { PL_DATA, PL_STORE_PASSWORD, PL_NEW_STORE_PASSWORD, PL__COUNT };

/* A plucked string, or a 400 when the key holds something else than a string. */
static int plucked(struct api_call *c, json_t *body, const struct json_plucked *pl, const char **out)
{
	json_t *v = json_object_get(body, pl->key);

	*out = pl->value;
	if (v && !json_is_null(v) && !json_is_string(v))
		return api_fail(c, ERR_INVALID, "'%s' must be a string", pl->key);
	return 0;
}

static int v1_visibility(struct api_call *c, const char *v, int *out)
{
	*out = -1;
	if (!v)
		return 0;
	if (strcmp(v, "PUBLIC") != 0 && strcmp(v, "PRIVATE") != 0)
		return api_fail(c, ERR_INVALID, "Invalid visibility value: %.32s (expected PUBLIC or PRIVATE)", v);
	*out = strcmp(v, "PUBLIC") == 0;
	return 0;
}

static int v1_data(struct api_call *c, const char *b64, struct update_req *u)
{
	struct err e;
	size_t n = 0;
	unsigned char *raw;

	if (!b64)
		return 0;
	raw = b64_decode(b64, strlen(b64), &n, &e);
	if (!raw)
		return api_fail(c, ERR_INVALID, "'data' must be Base64");
	if (n > limits.secret_bytes) {
		payload_free(raw, n);
		return api_fail(c, ERR_TOO_LARGE, "'data' exceeds the secret limit of %zu bytes (got %zu)",
				limits.secret_bytes, n);
	}
	u->has_value = true;
	u->type = SECRET_TYPE_DATA;
	u->pt = raw;
	u->pt_len = n;
	return 0;
}

static int v1_parse(struct api_call *c, json_t *body, const struct json_plucked *pl, struct update_req *u)
{
	const char *vis = NULL, *data = NULL;
	json_t *owner = NULL;
	int rc;

	if (plucked(c, body, &pl[PL_DATA], &data) || plucked(c, body, &pl[PL_STORE_PASSWORD], &u->store_password) ||
	    plucked(c, body, &pl[PL_NEW_STORE_PASSWORD], &u->new_store_password))
		return -ERR_INVALID;
	if (jsonx_str(body, "name", false, &u->name, &c->err) || jsonx_str(body, "visibility", false, &vis, &c->err) ||
	    jsonx_str(body, "projectId", false, &u->project_id, &c->err) ||
	    jsonx_str(body, "projectName", false, &u->project_name, &c->err) ||
	    jsonx_arr(body, "projectIds", false, &u->project_ids, &c->err) ||
	    jsonx_arr(body, "projectNames", false, &u->project_names, &c->err) ||
	    jsonx_str(body, "orgId", false, &u->org_id, &c->err) ||
	    jsonx_str(body, "orgName", false, &u->org_name, &c->err) ||
	    jsonx_obj(body, "owner", false, &owner, &c->err))
		return -ERR_INVALID;
	if (owner && (jsonx_str(owner, "id", false, &u->owner_id, &c->err) ||
		      jsonx_str(owner, "username", false, &u->owner_username, &c->err)))
		return -ERR_INVALID;
	/* Concord: projectName "" removes the project link. */
	if ((u->project_name && !*u->project_name) || (u->project_id && !*u->project_id)) {
		u->clear_project = true;
		u->project_id = u->project_name = NULL;
	}
	if (u->store_password && !*u->store_password)
		u->store_password = NULL;
	if (u->new_store_password && !*u->new_store_password)
		u->new_store_password = NULL;
	if ((rc = v1_visibility(c, vis, &u->visibility)))
		return rc;
	return v1_data(c, data, u);
}

int secrets_update_v1(struct api_call *c)
{
	struct update_req u = {.visibility = -1};
	struct json_plucked pl[PL__COUNT] = {{.key = "data"}, {.key = "storePassword"}, {.key = "newStorePassword"}};
	json_t *body = NULL;
	int rc;

	(void)json_pluck(c->req->body.data, c->req->body.len, pl, PL__COUNT);
	if ((rc = api_body_object(c, &body)) == 0 && (rc = v1_parse(c, body, pl, &u)) == 0)
		rc = apply(c, &u);
	/* the passwords point into pl: req_cleanup wipes them, json_pluck_free frees them */
	req_cleanup(&u);
	json_pluck_free(pl, PL__COUNT);
	json_decref(body);
	return rc;
}

/* ---- v2: multipart ---- */

static int v2_parse(struct api_call *c, const struct multipart *mp, struct update_req *u)
{
	static const char *const known[] = {"name",
					    "ownerId",
					    "storePassword",
					    "newStorePassword",
					    "orgId",
					    "org",
					    "removeProjectLink",
					    "projectIds",
					    "projectNames",
					    "projects",
					    "projectId",
					    "project",
					    "visibility",
					    "type",
					    "data",
					    "username",
					    "password",
					    "public",
					    "private",
					    "keyType",
					    NULL};
	struct str tv;
	bool is_public = true;
	int rc;

	if ((rc = secrets_form_known_parts(c, mp, known)))
		return rc;
	u->name = secrets_text(c, mp, "name");
	u->owner_id = secrets_text(c, mp, "ownerId");
	u->store_password = secrets_text(c, mp, "storePassword");
	u->new_store_password = secrets_text(c, mp, "newStorePassword");
	u->org_id = secrets_text(c, mp, "orgId");
	u->org_name = secrets_text(c, mp, "org");
	u->clear_project = multipart_bool(mp, "removeProjectLink");
	u->mp = mp;
	if (multipart_text(mp, "visibility", &tv)) {
		if ((rc = secrets_form_visibility(c, mp, &is_public)))
			return rc;
		u->visibility = is_public;
	}
	if (!multipart_text(mp, "type", &tv))
		return 0;
	if (!secret_type_parse(tv.p, tv.len, &u->type))
		return api_fail(c, ERR_INVALID,
				"Unsupported secret type: %.*s (expected key_pair, username_password or data)",
				(int)(tv.len > 64 ? 64 : tv.len), tv.p);
	u->has_value = true;
	return secrets_form_value(c, mp, u->type, &u->pt, &u->pt_len, &u->public_key);
}

int secrets_update_v2(struct api_call *c)
{
	struct update_req u = {.visibility = -1};
	struct multipart mp = {0};
	struct org o;
	struct secret s;
	int rc;

	/* Access first, so that nobody without WRITER makes the server generate a key pair. */
	if ((rc = secrets_load(c, &o, &s, ACCESS_WRITER)) || (rc = secrets_multipart(c, &mp)))
		return rc;
	rc = v2_parse(c, &mp, &u);
	if (rc == 0)
		rc = apply(c, &u);
	req_cleanup(&u);
	multipart_cleanup(&mp);
	return rc;
}
