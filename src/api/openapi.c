/* GET /api/openapi.json (openapi.h).  The document is built once, on the first request,
 * from the route tables: a path per route pattern ("{path*}" becomes "{path}"), an
 * operation per method with its parameters, body, answers and the statuses of its errors
 * ({"ok":false,"message":…}, DESIGN.md §6), and the ways to authenticate. */
#include "api/openapi.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "api/doc_schemas.h"
#include "api/routes.h"
#include "auth/console_session.h"
#include "base/jsonx.h"
#include "base/str.h"
#include "version.h"

static const struct {
	const char *status, *what;
} statuses[] = {
    {"400", "Invalid input (the message names the field and the value)"},
    {"401", "No or bad credentials"},
    {"403", "Not allowed for this user"},
    {"404", "Unknown resource"},
    {"405", "Method not allowed on this path"},
    {"409", "Duplicate name or wrong state"},
    {"413", "Too large (a limit of the server)"},
    {"415", "Wrong content type"},
    {"429", "Over a per-user or per-resource count (the message names the setting)"},
    {"500", "A bug of the server (details in its log)"},
    {"503", "Not ready, too busy, or a remote that did not answer in time"},
    {"507", "A disk of the server is full (the message says which); nothing was stored"},
};

json_t *api_openapi_schema(const char *text)
{
	char *s = strdup(text);
	json_t *v;

	if (!s)
		return NULL;
	for (char *p = s; *p; p++)
		if (*p == '\'')
			*p = '"';
	v = json_loads(s, JSON_REJECT_DUPLICATES, NULL);
	free(s);
	return v;
}

/* The path of a pattern in OpenAPI's spelling, and the same with every parameter name
 * left out (two patterns that differ only in names are one OpenAPI path). */
static void path_of(const char *pattern, char *out, size_t cap, char *shape, size_t shape_cap)
{
	size_t o = 0, sh = 0;
	bool in_name = false;

	for (const char *p = pattern; *p && o + 1 < cap && sh + 1 < shape_cap; p++) {
		if (*p == '*')
			continue;
		out[o++] = *p;
		if (*p == '}')
			in_name = false;
		if (!in_name)
			shape[sh++] = *p;
		if (*p == '{')
			in_name = true;
	}
	out[o] = shape[sh] = 0;
}

/* The n-th parameter name of an OpenAPI path into out ("" when there is none). */
static void nth_name(const char *path, size_t n, char *out, size_t cap)
{
	const char *p = path, *end;

	out[0] = 0;
	for (size_t i = 0; (p = strchr(p, '{')); i++, p = end) {
		if (!(end = strchr(p, '}')))
			return;
		if (i == n) {
			if (str_fmt(out, cap, "%.*s", (int)(end - p - 1), p + 1))
				out[0] = 0; /* no route has a name this long */
			return;
		}
	}
}

static const struct api_param_doc *param_doc(const struct api_doc *d, const char *name)
{
	for (const struct api_param_doc *q = d->params; q && q->name; q++)
		if (strcmp(q->name, name) == 0)
			return q;
	return NULL;
}

/* Whether name is a "{name*}" parameter of pattern: it takes the rest of the path. */
static bool takes_rest(const char *pattern, const char *name)
{
	char star[72];

	return str_fmt(star, sizeof star, "{%s*}", name) == 0 && strstr(pattern, star) != NULL;
}

/* Path parameters named as in key (the document's path), described by the route's own
 * names (own: its pattern in OpenAPI's spelling), then the query parameters of the doc. */
static json_t *parameters(const struct api_route *r, const char *key, const char *own)
{
	json_t *list = json_array();
	char name[64], own_name[64], what[256];

	for (size_t i = 0; nth_name(key, i, name, sizeof name), name[0]; i++) {
		const struct api_param_doc *q;

		nth_name(own, i, own_name, sizeof own_name);
		q = param_doc(r->doc, own_name);
		str_fmt_cut(what, sizeof what, "%s%s", q ? q->desc : own_name,
			 takes_rest(r->pattern, own_name) ? " (may contain slashes)" : "");
		json_array_append_new(list, json_pack("{s:s,s:s,s:b,s:s,s:{s:s}}", "name", name, "in", "path",
						      "required", 1, "description", what, "schema", "type", "string"));
	}
	for (const struct api_param_doc *q = r->doc->params; q && q->name; q++) {
		char braced[72];

		if (str_fmt(braced, sizeof braced, "{%s}", q->name) == 0 && strstr(own, braced))
			continue;
		json_array_append_new(list,
				      json_pack("{s:s,s:s,s:b,s:s,s:{s:s}}", "name", q->name, "in", "query", "required",
						0, "description", q->desc, "schema", "type", q->type));
	}
	return list;
}

/* {"<type>": {"schema": …}} for each space-separated media type; NULL on a bad schema. */
static json_t *content(const char *types, const char *schema_text)
{
	json_t *c = json_object(), *schema = schema_text ? api_openapi_schema(schema_text) : json_object();
	char type[128];

	if (!schema) {
		json_decref(c);
		return NULL;
	}
	for (const char *p = types; *p;) {
		size_t n = strcspn(p, " ");

		str_fmt_cut(type, sizeof type, "%.*s", (int)n, p);
		if (n)
			json_object_set_new(c, type, json_pack("{s:O}", "schema", schema));
		p += n;
		p += strspn(p, " ");
	}
	json_decref(schema);
	return c;
}

static void add_error(json_t *responses, const char *status)
{
	char ref[64];

	str_fmt_cut(ref, sizeof ref, "#/components/responses/Error%s", status);
	json_object_set_new(responses, status, json_pack("{s:s}", "$ref", ref));
}

static json_t *responses(const struct api_route *r, struct err *e)
{
	const struct api_doc *d = r->doc;
	json_t *out = json_object(),
	       *ok = content(d->response_type ? d->response_type : "application/json", d->response);
	char status[8];

	if (!ok) {
		json_decref(out);
		err_set(e, ERR_INTERNAL, "%s %s: its response schema is not valid JSON", r->method, r->pattern);
		return NULL;
	}
	str_fmt_cut(status, sizeof status, "%d", d->status ? d->status : 200); /* 3 digits */
	if (d->status == 204)
		json_object_set_new(out, status, json_pack("{s:s}", "description", "Done (no body)"));
	else
		json_object_set_new(out, status, json_pack("{s:s,s:O}", "description", "Success", "content", ok));
	json_decref(ok);
	for (const char *p = d->errors ? d->errors : ""; *p;) {
		size_t n = strcspn(p, " ");

		str_fmt_cut(status, sizeof status, "%.*s", (int)(n < 4 ? n : 3), p);
		if (n)
			add_error(out, status);
		p += n;
		p += strspn(p, " ");
	}
	if (!(r->flags & API_PUBLIC))
		add_error(out, "401");
	add_error(out, "500");
	return out;
}

/* "process" for /api/v1/process/…, "project" for /api/v1/org/{org}/project/…: the
 * resource a path is about, to group the operations. */
static void tag_of(const char *path, char *out, size_t cap)
{
	const char *p = path;
	size_t n;

	if (strncmp(p, "/api/", 5) != 0 && strcmp(p, "/metrics") != 0) {
		str_fmt_cut(out, cap, "console"); /* the web console's page and files */
		return;
	}
	if (strncmp(p, "/api/v", 6) == 0 && (p = strchr(p + 6, '/')))
		p++;
	else
		p = path + (*path == '/');
	if (strncmp(p, "org/{org}/", 10) == 0)
		p += 10;
	n = strcspn(p, "/.");
	str_fmt_cut(out, cap, "%.*s", (int)n, p); /* a tag: display text */
}

static json_t *operation(const struct api_route *r, const char *key, const char *own, struct err *e)
{
	const struct api_doc *d = r->doc;
	json_t *op, *resp = responses(r, e);
	char id[256], tag[64];
	size_t o = 0;

	if (!resp)
		return NULL;
	for (const char *p = r->method; *p && o + 1 < sizeof id; p++)
		id[o++] = (char)(*p | 0x20);
	for (const char *p = key; *p && o + 1 < sizeof id; p++)
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'))
			id[o++] = *p;
		else if (id[o - 1] != '_')
			id[o++] = '_';
	id[o] = 0;
	tag_of(key, tag, sizeof tag);
	op = json_pack("{s:s,s:s,s:[s],s:o,s:o}", "summary", d->summary, "operationId", id, "tags", tag, "parameters",
		       parameters(r, key, own), "responses", resp);
	if (r->flags & API_PUBLIC)
		json_object_set_new(op, "security", json_array());
	if (d->body) {
		json_t *body = content(d->body_type ? d->body_type : "application/json", d->body);

		if (!body) {
			json_decref(op);
			err_set(e, ERR_INTERNAL, "%s %s: its request body schema is not valid JSON", r->method,
				r->pattern);
			return NULL;
		}
		json_object_set_new(op, "requestBody", json_pack("{s:b,s:o}", "required", 1, "content", body));
	}
	return op;
}

struct build {
	json_t *paths;
	json_t *shapes; /* shape → the path key first seen with it */
	struct err *e;
};

static int add_route(void *ctx, const struct api_route *r)
{
	struct build *b = ctx;
	char own[512], shape[512], method[16];
	const char *key;
	json_t *item, *op;
	size_t i;

	if (!r->doc || !r->doc->summary)
		return err_set(b->e, ERR_INTERNAL, "%s %s has no documentation (struct api_doc)", r->method,
			       r->pattern);
	path_of(r->pattern, own, sizeof own, shape, sizeof shape);
	if (!(key = json_string_value(json_object_get(b->shapes, shape)))) {
		json_object_set_new(b->shapes, shape, json_string(own));
		key = own;
	}
	if (!(item = json_object_get(b->paths, key))) {
		item = json_object();
		json_object_set_new(b->paths, key, item);
	}
	for (i = 0; r->method[i] && i + 1 < sizeof method; i++)
		method[i] = (char)(r->method[i] | 0x20);
	method[i] = 0;
	if (!(op = operation(r, key, own, b->e)))
		return -1;
	json_object_set_new(item, method, op);
	return 0;
}

static json_t *components(void)
{
	json_t *resp = json_object();

	for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++) {
		char name[16];

		str_fmt_cut(name, sizeof name, "Error%s", statuses[i].status); /* 3 digits */
		json_object_set_new(resp, name,
				    json_pack("{s:s,s:{s:{s:{s:s}}}}", "description", statuses[i].what, "content",
					      "application/json", "schema", "$ref", "#/components/schemas/Error"));
	}
	return json_pack("{s:{s:{s:s,s:[s,s],s:{s:{s:[b]},s:{s:s}}}},s:o,s:{s:{s:s,s:s,s:s},s:{s:s,s:s,s:s,s:s},"
			 "s:{s:s,s:s,s:s,s:s},s:{s:s,s:s,s:s,s:s}}}",
			 "schemas", "Error", "type", "object", "required", "ok", "message", "properties", "ok", "enum",
			 0, "message", "type", "string", "responses", resp, "securitySchemes", "basic", "type", "http",
			 "scheme", "basic", "description", "a local user's name and password", "apiKey", "type",
			 "apiKey", "in", "header", "name", "Authorization", "description",
			 "an API key, alone or after 'Bearer '", "session", "type", "apiKey", "in", "cookie", "name",
			 CONSOLE_COOKIE, "description", "the web console's session (changes also need its CSRF header)",
			 "processSession", "type", "apiKey", "in", "header", "name", "X-Concord-SessionToken",
			 "description", "a running process's own session token");
}

json_t *api_openapi_build(struct err *e)
{
	struct build b = {json_object(), json_object(), e};
	json_t *doc;

	if (api_routes_each(add_route, &b)) {
		json_decref(b.paths);
		json_decref(b.shapes);
		return NULL;
	}
	json_decref(b.shapes);
	doc = json_pack("{s:s,s:{s:s,s:s,s:s},s:o,s:o,s:[{s:[]},{s:[]},{s:[]},{s:[]}]}", "openapi", "3.1.0", "info",
			"title", "Accord API", "version", ACCORD_VERSION, "description",
			"Accord's REST API (Concord-compatible). Errors are {\"ok\":false,\"message\":...} with the "
			"status of the error; while the server starts every request is answered 503. The readable "
			"guide is docs/api.md.",
			"paths", b.paths, "components", components(), "security", "basic", "apiKey", "session",
			"processSession");
	if (!doc)
		err_set(e, ERR_INTERNAL, "out of memory");
	return doc;
}

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char *text;
static struct err text_err;

static void build_text(void)
{
	json_t *doc = api_openapi_build(&text_err);

	if (doc && !(text = jsonx_dump(doc)))
		err_set(&text_err, ERR_INTERNAL, "out of memory");
	json_decref(doc);
}

static int get(struct api_call *c)
{
	pthread_once(&once, build_text);
	if (!text) {
		c->err = text_err;
		return -1;
	}
	http_resp_bytes(c->resp, 200, "application/json", text, strlen(text));
	return 0;
}

static const struct api_doc doc_get = {
    .summary = "This document: the OpenAPI 3.1 description of every route",
    .response = "{'type':'object','required':['openapi','info','paths'],'properties':{"
		"'openapi':{'type':'string'},'info':" SCHEMA_OBJECT ",'paths':" SCHEMA_OBJECT "}}",
};

const struct api_route api_openapi_routes[] = {
    {"GET", "/api/openapi.json", get, API_PUBLIC, &doc_get},
    {0},
};
