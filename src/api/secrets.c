/* /api/v1/org/{org}/secret: secrets stored per organization, sealed at rest (crypto/seal.h)
 * and guarded by team access rules.  See docs/api.md "Secrets". */
#include "api/doc_schemas.h"
#include "api/secrets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "api/access_rules.h"
#include "api/routes.h"
#include "base/datetime.h"
#include "base/jsonx.h"
#include "base/str.h"
#include "crypto/keypool.h"
#include "crypto/payload.h"
#include "crypto/seal.h"
#include "crypto/server_key.h"
#include "store/meta.h"

#define SECRET_TYPE_HEADER "X-Concord-SecretType"
#define KEYPAIR_POOL_DEFAULT 2

/* ACCORD_KEYPAIR_POOL: RSA pairs generated ahead of demand (default 2, 0 turns it off). */
static int start_keypool(struct err *e)
{
	const char *v = getenv("ACCORD_KEYPAIR_POOL");
	int64_t n = KEYPAIR_POOL_DEFAULT;

	if (v && *v && str_to_i64(str_from(v), 0, KEYPOOL_MAX, &n, "ACCORD_KEYPAIR_POOL", e))
		return -ERR_INVALID;
	if (n == 0) /* keys are then generated on request threads: initialise libssh here */
		return keypair_init(e);
	return keypool_start((size_t)n, e);
}

int api_secrets_init(struct app *app, struct err *e)
{
	if (!(app->secrets_key = server_key_open(app->store, app->data_dir, e)))
		return -1;
	return start_keypool(e);
}

void api_secrets_cleanup(struct app *app)
{
	keypool_stop();
	server_key_free(app->secrets_key);
	app->secrets_key = NULL;
}

/* ---- shared helpers ---- */

int secrets_org(struct api_call *c, struct org *o)
{
	int rc = store_org_find(c->db, api_param(c, "org"), o, &c->err);

	if (rc)
		return rc;
	return rbac_org(c->db, &c->who, o, RBAC_ORG_MEMBER, &c->err);
}

static struct rbac_resource secret_resource(const struct secret *s)
{
	return (struct rbac_resource){SECRET_RESOURCE, "secret", s->id, s->name, s->org_id, s->owner_id, s->is_public};
}

int secrets_check(struct api_call *c, const struct secret *s, enum access_level need)
{
	struct rbac_resource r = secret_resource(s);
	return rbac_check(c->db, &c->who, &r, need, &c->err);
}

int secrets_load(struct api_call *c, struct org *o, struct secret *s, enum access_level need)
{
	int rc = secrets_org(c, o);

	if (rc)
		return rc;
	if ((rc = store_secret_find(c->db, o->id, api_param(c, "name"), s, &c->err)))
		return rc;
	return secrets_check(c, s, need);
}

int secrets_open(struct api_call *c, const struct secret *s, const char *password, unsigned char **pt, size_t *pt_len)
{
	struct seal_binding b = {s->org_id, s->name};
	unsigned char *env = NULL;
	size_t env_len = 0;
	int rc;

	*pt = NULL;
	if (s->password_protected && !password)
		return api_fail(c, ERR_INVALID,
				"Error while fetching a secret '%s': The secret '%s' requires a password to decrypt",
				s->name, s->name);
	if (!s->password_protected && password)
		return api_fail(c, ERR_INVALID,
				"Error while fetching a secret '%s': Not a password-protected secret '%s'", s->name,
				s->name);
	if ((rc = store_secret_envelope_of(c->db, s, &env, &env_len, &c->err)))
		return rc;
	rc = seal_decrypt(c->app->secrets_key, password, &b, env, env_len, pt, pt_len, &c->err);
	if (rc && c->err.code == ERR_INVALID)
		err_prefix(&c->err, "Error while fetching a secret '%s'", s->name);
	free(env);
	return rc;
}

int secrets_seal(struct api_call *c, const char *org_id, const char *name, const char *password,
		 const unsigned char *pt, size_t pt_len, unsigned char **env, size_t *env_len)
{
	struct seal_binding b = {org_id, name};
	return seal_encrypt(c->app->secrets_key, password, &b, pt, pt_len, env, env_len, &c->err);
}

int secrets_project(struct api_call *c, const char *org_id, const char *id, const char *name, struct project *p)
{
	struct rbac_resource r = {"PROJECT", "project", NULL, NULL, org_id, NULL, false};
	struct err lookup;
	int rc;

	if (id)
		rc = uuid_valid(id, strlen(id)) ? store_project_get(c->db, id, p, &lookup) : -ERR_NOT_FOUND;
	else
		rc = store_project_find(c->db, org_id, name, p, &lookup);
	if (rc == 0 && strcmp(p->org_id, org_id) != 0)
		rc = -ERR_NOT_FOUND;
	if (rc == -ERR_NOT_FOUND)
		return api_fail(c, ERR_INVALID, "Project not found: %.128s", id ? id : name);
	if (rc) {
		c->err = lookup;
		return rc;
	}
	r.id = p->id;
	r.name = p->name;
	r.owner_id = p->owner_id;
	r.is_public = strcmp(p->visibility, "PUBLIC") == 0;
	return rbac_check(c->db, &c->who, &r, ACCESS_READER, &c->err);
}

int secrets_projects_add(struct api_call *c, const char *org_id, struct str ref, bool by_id,
			 struct secret_projects_req *l)
{
	struct project p;
	char *v;
	int rc;

	ref = str_trim(ref);
	if (!ref.len)
		return 0;
	v = arena_strndup(&c->req->arena, ref.p, ref.len);
	if ((rc = secrets_project(c, org_id, by_id ? v : NULL, by_id ? NULL : v, &p)))
		return rc;
	l->given = true;
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->items[i].id, p.id) == 0)
			return 0;
	if (l->n == SECRET_PROJECTS_MAX)
		return api_fail(c, ERR_INVALID, "A secret can be restricted to at most %d projects",
				SECRET_PROJECTS_MAX);
	if (!l->items)
		l->items = arena_alloc(&c->req->arena, SECRET_PROJECTS_MAX * sizeof *l->items);
	memcpy(l->items[l->n].id, p.id, sizeof l->items[l->n].id);
	if (str_fmt(l->items[l->n].name, sizeof l->items[l->n].name, "%s", p.name))
		return api_fail(c, ERR_INTERNAL, "project name too long: %s", p.name);
	l->n++;
	return 0;
}

char *secrets_text(struct api_call *c, const struct multipart *mp, const char *name)
{
	struct str v;

	if (!multipart_text(mp, name, &v))
		return NULL;
	return arena_strndup(&c->req->arena, v.p, v.len);
}

void secrets_wipe_text(char *s)
{
	if (s)
		sodium_memzero(s, strlen(s));
}

int secrets_multipart(struct api_call *c, struct multipart *mp)
{
	struct str ct = str_from(c->req->content_type);

	memset(mp, 0, sizeof *mp);
	if (!multipart_is_form_data(ct))
		return api_fail(c, ERR_MEDIA_TYPE, "expected a multipart/form-data body");
	return multipart_parse(ct, (struct str){c->req->body.data, c->req->body.len}, mp, &c->err);
}

/* ---- metadata ---- */

/* The secret's metadata as Concord's SecretEntryV2: `projects` lists every project it is
 * restricted to; the older projectId/projectName name it when there is exactly one. */
static json_t *secret_json(struct api_call *c, const struct secret *s)
{
	json_t *v = json_object(), *projects = json_array();
	struct secret_project *ps = NULL;
	size_t n = 0;
	char ts[DT_ISO_LEN];

	if (s->n_projects && store_secret_projects(c->db, s->id, &ps, &n, &c->err)) {
		json_decref(v);
		json_decref(projects);
		return NULL;
	}
	json_object_set_new(v, "id", json_string(s->id));
	json_object_set_new(v, "name", json_string(s->name));
	json_object_set_new(v, "orgId", json_string(s->org_id));
	json_object_set_new(v, "orgName", json_string(s->org_name));
	if (n == 1) {
		json_object_set_new(v, "projectId", json_string(ps[0].id));
		json_object_set_new(v, "projectName", json_string(ps[0].name));
	}
	for (size_t i = 0; i < n; i++)
		json_array_append_new(projects, json_pack("{s:s,s:s}", "id", ps[i].id, "name", ps[i].name));
	free(ps);
	json_object_set_new(v, "projects", projects);
	json_object_set_new(v, "type", json_string(secret_type_name(s->type)));
	json_object_set_new(v, "encryptedBy", json_string(s->password_protected ? "PASSWORD" : "SERVER_KEY"));
	json_object_set_new(v, "storeType", json_string(s->store_type));
	json_object_set_new(v, "visibility", json_string(s->is_public ? "PUBLIC" : "PRIVATE"));
	if (s->owner_id[0])
		json_object_set_new(v, "owner", json_pack("{s:s,s:s}", "id", s->owner_id, "username", s->owner_name));
	dt_format_iso(s->created_at, ts);
	json_object_set_new(v, "createdAt", json_string(ts));
	if (s->updated_at) {
		dt_format_iso(s->updated_at, ts);
		json_object_set_new(v, "lastUpdatedAt", json_string(ts));
	}
	return v;
}

static int get(struct api_call *c)
{
	struct org o;
	struct secret s;
	json_t *v;
	struct rbac_resource res;
	enum access_level level;
	int rc = secrets_load(c, &o, &s, ACCESS_READER);

	if (rc)
		return rc;
	res = secret_resource(&s);
	if ((rc = rbac_level(c->db, &c->who, &res, &level, &c->err)))
		return rc;
	if (!(v = secret_json(c, &s)))
		return -1;
	json_object_set_new(v, "yourAccess", json_string(access_level_name(level)));
	return api_reply(c, v);
}

static bool sees_all(struct api_call *c, const struct org *o)
{
	struct err ignored;

	if (c->who.user.roles & (ROLE_ADMIN | ROLE_SYSTEM_READER | ROLE_SYSTEM_WRITER))
		return true;
	return rbac_org(c->db, &c->who, o, RBAC_ORG_OWNER, &ignored) == 0;
}

static int list(struct api_call *c)
{
	struct secret *rows = NULL;
	size_t limit, offset, n = 0;
	struct org o;
	json_t *arr;
	int rc;

	if ((rc = secrets_org(c, &o)) || (rc = api_paging(c, &limit, &offset)))
		return rc;
	rc = store_secret_list(c->db, o.id, c->who.user.id, sees_all(c, &o), http_query(c->req, "filter"), limit,
			       offset, &rows, &n, &c->err);
	if (rc)
		return rc;
	arr = json_array();
	for (size_t i = 0; i < n && rc == 0; i++) {
		json_t *v = secret_json(c, &rows[i]);
		rc = v ? json_array_append_new(arr, v) : -1;
	}
	free(rows);
	if (rc) {
		json_decref(arr);
		return rc;
	}
	return api_reply(c, arr);
}

/* Concord's getPublicKey checks READER without requiring membership of the org
 * (orgMembersOnly=false): the public key of a PUBLIC secret is readable by every user who
 * can see the organization; a PRIVATE one needs READER as everywhere else. */
static int public_key_access(struct api_call *c, struct org *o, struct secret *s)
{
	int rc;

	if ((rc = store_org_find(c->db, api_param(c, "org"), o, &c->err)) ||
	    (rc = rbac_org(c->db, &c->who, o, RBAC_ORG_VIEW, &c->err)) ||
	    (rc = store_secret_find(c->db, o->id, api_param(c, "name"), s, &c->err)))
		return rc;
	if (s->is_public)
		return 0;
	return secrets_check(c, s, ACCESS_READER);
}

static int public_key(struct api_call *c)
{
	unsigned char *pt = NULL;
	size_t pt_len = 0;
	struct str pub, priv;
	struct org o;
	struct secret s;
	json_t *v;
	int rc;

	if ((rc = public_key_access(c, &o, &s)))
		return rc;
	if (s.type != SECRET_TYPE_KEY_PAIR)
		return api_fail(c, ERR_INVALID, "Invalid secret type: %s, expected KEY_PAIR, got: %s", s.name,
				secret_type_name(s.type));
	if ((rc = secrets_open(c, &s, NULL, &pt, &pt_len)))
		return rc;
	rc = payload_keypair_decode(pt, pt_len, &pub, &priv, &c->err);
	if (rc == 0) {
		json_t *pk = json_stringn(pub.p, pub.len); /* NULL when an uploaded key is not UTF-8 */
		if (!pk) {
			rc = api_fail(c, ERR_INVALID, "The public key of secret '%s' is not text", s.name);
		} else {
			v = json_pack("{s:s,s:s,s:o,s:b}", "id", s.id, "name", s.name, "publicKey", pk, "ok", 1);
			rc = api_reply(c, v);
		}
	}
	payload_free(pt, pt_len);
	return rc;
}

/* Users export project-restricted secrets only with a global role or as admin; a process
 * (its session token) only when its project is one of the secret's, as Concord's
 * assertProjectScope.  Processes usually get them through their supervisor (DESIGN.md §2). */
static int check_project_scope(struct api_call *c, const struct secret *s)
{
	bool ok;
	int rc;

	if (!s->n_projects || (c->who.user.roles & (ROLE_ADMIN | ROLE_SYSTEM_READER | ROLE_SYSTEM_WRITER)))
		return 0;
	if (c->who.method != AUTH_SESSION)
		return api_fail(c, ERR_FORBIDDEN,
				"Project-scoped secrets can only be accessed within a running process. Secret: %s",
				s->name);
	if ((rc = store_secret_project_allowed(c->db, s, c->who.session_project, &ok, &c->err)))
		return rc;
	if (!ok)
		return api_fail(
		    c, ERR_FORBIDDEN,
		    "Project-scoped secrets can only be accessed within the project they belong to. Secret: %s",
		    s->name);
	return 0;
}

static int export_data(struct api_call *c)
{
	struct multipart mp = {0};
	unsigned char *pt = NULL;
	size_t pt_len = 0;
	char *password = NULL;
	struct org o;
	struct secret s;
	int rc;

	if ((rc = secrets_load(c, &o, &s, ACCESS_READER)) || (rc = check_project_scope(c, &s)))
		return rc;
	/* The body is optional: no body (or no parts) means no store password. */
	if (c->req->body.len || c->req->content_type) {
		if ((rc = secrets_multipart(c, &mp)))
			return rc;
		password = secrets_text(c, &mp, "storePassword");
	}
	rc = secrets_open(c, &s, password, &pt, &pt_len);
	if (rc == 0) {
		http_resp_bytes(c->resp, 200, "application/octet-stream", pt, pt_len);
		http_resp_header(c->resp, SECRET_TYPE_HEADER, secret_type_name(s.type));
		http_resp_header(c->resp, "Cache-Control", "no-store");
	}
	payload_free(pt, pt_len);
	secrets_wipe_text(password);
	multipart_cleanup(&mp);
	return rc;
}

static int delete_secret(struct api_call *c)
{
	struct org o;
	struct secret s;
	int rc;

	if ((rc = secrets_load(c, &o, &s, ACCESS_OWNER)) || (rc = store_secret_delete(c->db, s.id, &c->err)))
		return rc;
	return api_reply(c, json_pack("{s:b,s:s}", "ok", 1, "result", "DELETED"));
}

/* ---- access rules (api/access_rules.h checks access and does the rest) ---- */

static int access_call(struct api_call *c, int (*fn)(struct api_call *, const struct rbac_resource *))
{
	struct org o;
	struct secret s;
	struct rbac_resource r;
	int rc;

	if ((rc = secrets_org(c, &o)) || (rc = store_secret_find(c->db, o.id, api_param(c, "name"), &s, &c->err)))
		return rc;
	r = secret_resource(&s);
	return fn(c, &r);
}

static int list_access(struct api_call *c)
{
	return access_call(c, access_rules_list);
}

static int update_access(struct api_call *c)
{
	return access_call(c, access_rules_update);
}

static int bulk_access(struct api_call *c)
{
	return access_call(c, access_rules_replace);
}

#define DOC_SECRET                                                                                                     \
	{                                                                                                              \
		"name", "string", "the secret's name"                                                                  \
	}
#define SCHEMA_SECRET                                                                                                  \
	"{'type':'object','properties':{'id':" SCHEMA_UUID ",'name':{'type':'string'},'orgId':" SCHEMA_UUID            \
	",'orgName':{'type':'string'},'projectId':" SCHEMA_UUID ",'projectName':{'type':'string'},"                    \
	"'projects':{'type':'array','items':{'type':'object','properties':{'id':" SCHEMA_UUID                          \
	",'name':{'type':'string'}}}},"                                                                                \
	"'type':{'enum':['KEY_PAIR','USERNAME_PASSWORD','DATA']},'encryptedBy':{'enum':['SERVER_KEY','PASSWORD']},"    \
	"'storeType':{'type':'string'},'visibility':{'enum':['PUBLIC','PRIVATE']},'owner':" SCHEMA_OWNER               \
	",'createdAt':" SCHEMA_DATE ",'lastUpdatedAt':" SCHEMA_DATE "}}"
#define SCHEMA_SECRET_FORM                                                                                             \
	"{'type':'object','properties':{'name':{'type':'string'},'type':{'enum':['key_pair','username_password','"     \
	"data']},"                                                                                                     \
	"'data':{'type':'string','format':'binary','writeOnly':true},'username':{'type':'string'},"                    \
	"'password':{'type':'string','writeOnly':true},'public':{'type':'string','format':'binary'},"                  \
	"'private':{'type':'string','format':'binary','writeOnly':true},'storePassword':{'type':'string','writeOnly':" \
	"true},"                                                                                                       \
	"'generatePassword':{'type':'boolean'},'visibility':{'enum':['PUBLIC','PRIVATE']},'project':{'type':'string'}" \
	",'projectId':" SCHEMA_UUID ",'projectIds':{'type':'string','description':'comma-separated project ids'},"     \
	"'projects':{'type':'string','description':'comma-separated project "                                          \
	"names'},'projectNames':{'type':'string'}}}"

static const struct api_doc doc_create = {
    .summary = "Create a secret: a key pair (given or generated), a username and password, or data",
    .params = (const struct api_param_doc[]){DOC_ORG, {0}},
    .body = SCHEMA_SECRET_FORM,
    .body_type = "multipart/form-data",
    .response = "{'type':'object','properties':{'ok':{'type':'boolean'},'id':" SCHEMA_UUID
		",'result':{'const':'CREATED'},'publicKey':{'type':'string'},'password':{'type':'string',"
		"'description':'the generated store password (generatePassword=true)'}}}",
    .errors = "400 403 404 409 413 415",
    .audit = {"SECRET", "CREATE", NULL},
};
static const struct api_doc doc_list = {
    .summary = "The secrets of an organization the caller can see (never their values)",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_FILTER, DOC_PAGING, {0}},
    .response = "{'type':'array','items':" SCHEMA_SECRET "}",
    .errors = "400 404",
};
static const struct api_doc doc_get = {
    .summary = "A secret (never its value)",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_SECRET, {0}},
    .response = SCHEMA_SECRET,
    .errors = "403 404",
};
static const struct api_doc doc_update_v1 = {
    .summary = "Change a secret's name, visibility, owner or project (JSON; never its value)",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_SECRET, {0}},
    .body = "{'type':'object','properties':{'name':{'type':'string'},'visibility':{'enum':['PUBLIC','PRIVATE']},"
	    "'owner':" SCHEMA_OWNER ",'orgId':" SCHEMA_UUID ",'orgName':{'type':'string'},'projectId':" SCHEMA_UUID
	    ",'projectName':{'type':'string'}}}",
    .response = SCHEMA_RESULT,
    .errors = "400 403 404 409 415",
    .audit = {"SECRET", "UPDATE", NULL},
};
static const struct api_doc doc_update_v2 = {
    .summary = "Change a secret, its value included (multipart; omitted fields are kept)",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_SECRET, {0}},
    .body = SCHEMA_SECRET_FORM,
    .body_type = "multipart/form-data",
    .response = SCHEMA_RESULT,
    .errors = "400 403 404 409 413 415",
    .audit = {"SECRET", "UPDATE", NULL},
};
static const struct api_doc doc_delete = {
    .summary = "Delete a secret",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_SECRET, {0}},
    .response = SCHEMA_RESULT,
    .errors = "403 404",
    .audit = {"SECRET", "DELETE", NULL},
};
static const struct api_doc doc_public = {
    .summary = "The public key of a key-pair secret",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_SECRET, {0}},
    .response = "{'type':'object','properties':{'ok':{'type':'boolean'},'name':{'type':'string'},"
		"'id':" SCHEMA_UUID ",'publicKey':{'type':'string'}}}",
    .errors = "400 403 404",
};
static const struct api_doc doc_data = {
    .summary = "The decrypted value of a secret (owners and writers; storePassword for password-protected ones)",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_SECRET, {0}},
    .body = "{'type':'object','properties':{'storePassword':{'type':'string','writeOnly':true}}}",
    .body_type = "multipart/form-data",
    .response = "{'type':'string','format':'binary'}",
    .response_type = "application/octet-stream",
    .errors = "400 403 404 415",
    .audit = {"SECRET", "ACCESS", NULL},
};
DOC_ACCESS_RULES("SECRET", "a secret", DOC_ORG, DOC_SECRET);

const struct api_route api_secret_routes[] = {
    {"POST", "/api/v1/org/{org}/secret", secrets_create, 0, &doc_create},
    {"GET", "/api/v1/org/{org}/secret", list, 0, &doc_list},
    {"GET", "/api/v2/org/{org}/secret", list, 0, &doc_list},
    {"GET", "/api/v1/org/{org}/secret/{name}", get, 0, &doc_get},
    {"GET", "/api/v2/org/{org}/secret/{name}", get, 0, &doc_get},
    {"POST", "/api/v1/org/{org}/secret/{name}", secrets_update_v1, 0, &doc_update_v1},
    {"POST", "/api/v2/org/{org}/secret/{name}", secrets_update_v2, 0, &doc_update_v2},
    {"DELETE", "/api/v1/org/{org}/secret/{name}", delete_secret, 0, &doc_delete},
    {"GET", "/api/v1/org/{org}/secret/{name}/public", public_key, 0, &doc_public},
    {"POST", "/api/v1/org/{org}/secret/{name}/data", export_data, 0, &doc_data},
    {"GET", "/api/v1/org/{org}/secret/{name}/access", list_access, 0, &doc_access_get},
    {"POST", "/api/v1/org/{org}/secret/{name}/access", update_access, 0, &doc_access_post},
    {"POST", "/api/v1/org/{org}/secret/{name}/access/bulk", bulk_access, 0, &doc_access_bulk},
    {0},
};
