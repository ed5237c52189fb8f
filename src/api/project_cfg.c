/* A project's configuration and its encrypted values (Concord's ProjectResource, reference
 * §5.6; docs/api.md "Project configuration"):
 *
 *   GET    /api/v1/org/{org}/project/{project}/cfg[/{path}]   the cfg, or the value at path
 *   PUT    /api/v1/org/{org}/project/{project}/cfg[/{path}]   replace it, or set the value
 *   DELETE /api/v1/org/{org}/project/{project}/cfg[/{path}]   clear it, or remove the value
 *   POST   /api/v1/org/{org}/project/{project}/encrypt        a value only its processes open
 *
 * A path is the keys of nested objects separated by '/' (empty segments skipped).  Reading
 * needs READER on the project, changing WRITER; encrypting READER (which an outsider of the
 * organization never has).  Every process of the project gets the cfg (queue/start_staged.c). */
#include <stdlib.h>
#include <string.h>

#include "api/doc_schemas.h"
#include "api/projects.h"
#include "base/jsonx.h"
#include "crypto/projkey.h"

#define CFG_PATH_DEPTH 32

/* The keys of path (a copy in buf), at most CFG_PATH_DEPTH: their number, or -1 (400). */
static int split_path(struct api_call *c, const char *path, char *buf, size_t cap, const char **keys)
{
	int n = 0;

	if (!path)
		return 0;
	if (strlen(path) >= cap)
		return api_fail(c, ERR_INVALID, "cfg path too long (limit %zu bytes)", cap - 1);
	memcpy(buf, path, strlen(path) + 1);
	for (char *p = buf, *next; p; p = next) {
		next = strchr(p, '/');
		if (next)
			*next++ = '\0';
		if (!*p)
			continue;
		if (n == CFG_PATH_DEPTH)
			return api_fail(c, ERR_INVALID, "cfg path too deep (at most %d keys)", CFG_PATH_DEPTH);
		keys[n++] = p;
	}
	return n;
}

/* The stored cfg: a new object ({} when unset). */
static int load_cfg(struct api_call *c, const struct project *p, json_t **out)
{
	char *meta = NULL, *text = NULL;
	int rc = store_project_meta_cfg(c->db, p->id, &meta, &text, &c->err);

	free(meta);
	*out = NULL;
	if (rc)
		return rc;
	*out = text ? json_loads(text, 0, NULL) : json_object();
	free(text);
	if (!json_is_object(*out)) {
		json_decref(*out);
		*out = NULL;
		return api_fail(c, ERR_INTERNAL, "the stored cfg of project %s is not a JSON object", p->name);
	}
	return 0;
}

static int save_cfg(struct api_call *c, const struct project *p, json_t *cfg)
{
	char *text = cfg ? jsonx_dump(cfg) : NULL;
	int rc;

	if (cfg && !text)
		return api_fail(c, ERR_INTERNAL, "out of memory");
	rc = store_project_cfg_set(c->db, p->id, text, &c->err);
	free(text);
	return rc;
}

static int cfg_get(struct api_call *c)
{
	const char *path = http_param(c->req, "path"), *keys[CFG_PATH_DEPTH];
	char buf[1024];
	struct project p;
	json_t *cfg = NULL, *v;
	int n, rc;

	if ((n = split_path(c, path, buf, sizeof buf, keys)) < 0)
		return n;
	if ((rc = projects_path(c, &p, ACCESS_READER)) || (rc = load_cfg(c, &p, &cfg)))
		return rc;
	v = cfg;
	for (int i = 0; i < n && v; i++)
		v = json_object_get(v, keys[i]);
	if (!v || json_is_null(v))
		rc = n ? api_fail(c, ERR_NOT_FOUND, "Value not found: /%.512s", path) : api_reply(c, json_object());
	else
		rc = api_reply(c, json_incref(v));
	json_decref(cfg);
	return rc;
}

/* Sets value at keys in cfg, creating the objects on the way; 400 when one on the way is
 * something else. */
static int put_at(struct api_call *c, json_t *cfg, const char **keys, int n, json_t *value)
{
	json_t *cur = cfg;

	for (int i = 0; i < n - 1; i++) {
		json_t *next = json_object_get(cur, keys[i]);
		if (!next || json_is_null(next)) {
			next = json_object();
			if (json_object_set_new(cur, keys[i], next))
				return api_fail(c, ERR_INTERNAL, "out of memory");
		} else if (!json_is_object(next)) {
			return api_fail(c, ERR_INVALID, "cfg value '%.128s' is not an object", keys[i]);
		}
		cur = next;
	}
	return json_object_set(cur, keys[n - 1], value) ? api_fail(c, ERR_INTERNAL, "out of memory") : 0;
}

/* The change, read and written in one transaction so that concurrent changes to other keys
 * are not lost. */
static int change(struct api_call *c, const struct project *p, const char **keys, int n, json_t *value)
{
	json_t *cfg = NULL, *parent;
	int rc;

	if ((rc = store_tx_begin(c->db, &c->err)))
		return rc;
	if ((rc = load_cfg(c, p, &cfg)))
		goto out;
	if (value)
		rc = put_at(c, cfg, keys, n, value);
	else {
		parent = cfg;
		for (int i = 0; i < n - 1 && parent; i++)
			parent = json_object_get(parent, keys[i]);
		json_object_del(parent, keys[n - 1]);
	}
	if (rc == 0 && (rc = save_cfg(c, p, cfg)) == 0)
		rc = store_tx_commit(c->db, &c->err);
out:
	if (rc)
		store_tx_rollback(c->db);
	json_decref(cfg);
	return rc;
}

static int cfg_put(struct api_call *c)
{
	const char *path = http_param(c->req, "path"), *keys[CFG_PATH_DEPTH];
	char buf[1024];
	struct project p;
	json_t *body = NULL;
	int n, rc;

	if ((n = split_path(c, path, buf, sizeof buf, keys)) < 0)
		return n;
	if ((rc = http_body_json(c->req, &body, &c->err)) || (rc = projects_path(c, &p, ACCESS_WRITER)))
		goto out;
	if (n == 0 && !json_is_object(body)) {
		char *text = json_dumps(body, JSON_ENCODE_ANY | JSON_COMPACT);
		rc = api_fail(c, ERR_INVALID, "Expected a JSON object: %.200s", text ? text : "?");
		free(text);
		goto out;
	}
	rc = n ? change(c, &p, keys, n, body) : save_cfg(c, &p, body);
	if (rc == 0)
		rc = api_reply_result(c, "UPDATED", NULL);
out:
	json_decref(body);
	return rc;
}

static int cfg_delete(struct api_call *c)
{
	const char *path = http_param(c->req, "path"), *keys[CFG_PATH_DEPTH];
	char buf[1024];
	struct project p;
	int n, rc;

	if ((n = split_path(c, path, buf, sizeof buf, keys)) < 0)
		return n;
	if ((rc = projects_path(c, &p, ACCESS_WRITER)))
		return rc;
	rc = n ? change(c, &p, keys, n, NULL) : save_cfg(c, &p, NULL);
	return rc ? rc : api_reply_result(c, "DELETED", NULL);
}

/* Sealed with the project's key (crypto/projkey.h); crypto.decryptString opens it in the
 * project's processes only.  The value is never logged. */
static int encrypt(struct api_call *c)
{
	struct project p;
	char *sealed;
	json_t *v;
	int rc;

	if (!http_content_type_is(c->req, "text/plain"))
		return api_fail(c, ERR_MEDIA_TYPE, "POST .../encrypt takes the value as text/plain");
	if (!c->app->secrets_key)
		return api_fail(c, ERR_INTERNAL, "no master key");
	if ((rc = projects_path(c, &p, ACCESS_READER)))
		return rc;
	sealed = projkey_encrypt(c->app->secrets_key, p.id, c->req->body.data ? c->req->body.data : "",
				 c->req->body.len, &c->err);
	if (!sealed)
		return -1;
	v = json_pack("{s:b, s:s}", "ok", 1, "data", sealed);
	free(sealed);
	return v ? api_reply(c, v) : api_fail(c, ERR_INTERNAL, "out of memory");
}

#define DOC_CFG_PATH                                                                                                   \
	{                                                                                                              \
		"path", "string", "keys of nested objects separated by '/'"                                            \
	}

static const struct api_doc doc_get = {
    .summary = "A project's configuration (cfg), merged into every process of the project",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_PROJECT, {0}},
    .response = SCHEMA_OBJECT,
    .errors = "403 404",
};
static const struct api_doc doc_get_path = {
    .summary = "One value of a project's cfg",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_PROJECT, DOC_CFG_PATH, {0}},
    .response = "{}",
    .errors = "400 403 404",
};
static const struct api_doc doc_put = {
    .summary = "Replace a project's cfg",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_PROJECT, {0}},
    .body = SCHEMA_OBJECT,
    .response = SCHEMA_RESULT,
    .errors = "400 403 404 415",
    .audit = {"PROJECT", "UPDATE", "cfg"},
};
static const struct api_doc doc_put_path = {
    .summary = "Set one value of a project's cfg (objects on the way are created)",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_PROJECT, DOC_CFG_PATH, {0}},
    .body = "{}",
    .response = SCHEMA_RESULT,
    .errors = "400 403 404 415",
    .audit = {"PROJECT", "UPDATE", "cfg"},
};
static const struct api_doc doc_delete = {
    .summary = "Clear a project's cfg",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_PROJECT, {0}},
    .response = SCHEMA_RESULT,
    .errors = "403 404",
    .audit = {"PROJECT", "UPDATE", "cfg"},
};
static const struct api_doc doc_delete_path = {
    .summary = "Remove one value of a project's cfg",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_PROJECT, DOC_CFG_PATH, {0}},
    .response = SCHEMA_RESULT,
    .errors = "400 403 404",
    .audit = {"PROJECT", "UPDATE", "cfg"},
};
static const struct api_doc doc_encrypt = {
    .summary = "Encrypt a value with the project's key (crypto.decryptString opens it in the project's processes)",
    .params = (const struct api_param_doc[]){DOC_ORG, DOC_PROJECT, {0}},
    .body = "{'type':'string'}",
    .body_type = "text/plain",
    .response = "{'type':'object','properties':{'ok':{'type':'boolean'},'data':{'type':'string'}}}",
    .errors = "403 404 415",
    .audit = {"PROJECT", "ACCESS", "encrypt"},
};

#define CFG "/api/v1/org/{org}/project/{project}/cfg"

const struct api_route api_project_cfg_routes[] = {
    {"GET", CFG, cfg_get, 0, &doc_get},
    {"GET", CFG "/{path*}", cfg_get, 0, &doc_get_path},
    {"PUT", CFG, cfg_put, 0, &doc_put},
    {"PUT", CFG "/{path*}", cfg_put, 0, &doc_put_path},
    {"DELETE", CFG, cfg_delete, 0, &doc_delete},
    {"DELETE", CFG "/{path*}", cfg_delete, 0, &doc_delete_path},
    {"POST", "/api/v1/org/{org}/project/{project}/encrypt", encrypt, 0, &doc_encrypt},
    {0},
};
