/* Custom forms (issue 26 part 5, Concord's "Custom forms", docs/api.md "Custom forms"):
 * a form whose process has `forms/<name>/index.html` in its working directory is shown
 * with that HTML and its assets instead of the generated form.
 *   POST /api/service/custom_form/{id}/{name}/start     {"uri": where the browser goes}
 *   POST /api/service/custom_form/{id}/{name}/continue  the custom form's submit
 *   GET  /forms/{id}/{name}/form/[{path}]                forms/<name>/… (index.html), data.js
 *   GET  /forms/{id}/{name}/shared/{path}                forms/shared/…
 * Files come from the suspended process's stored working directory (its payload), so any
 * node serves them and nothing is copied; only regular files are served (pack_dir stores
 * no links) and a path with "..", "." or an empty component is refused.  Access is the
 * form's own: who may submit it (its runAs users or LDAP groups, or writers of the
 * process).  Every page carries a CSP that lets the form's own scripts and styles run but
 * lets them reach nothing (no fetch, no other origin, a post only to the form's own
 * submit URL; docs/security.md "Custom forms"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/doc_schemas.h"
#include "api/process_forms.h"
#include "api/routes.h"
#include "base/buf.h"
#include "base/limits.h"
#include "base/pack.h"
#include "base/path.h"
#include "base/str.h"
#include "flow/form_validate.h"

#define FORMS_DIR "forms"
#define SHARED_DIR "shared"
#define NOTE_KEY "customSubmit" /* the last refused submit, kept in the pending form */
#define URL_MAX 1024

/* The policy of every answer; form-action is added per form (page_headers). */
#define CSP                                                                                                            \
	"default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; img-src 'self' "     \
	"data:; font-src 'self' data:; media-src 'self'; connect-src 'none'; frame-src 'none'; object-src 'none'; "    \
	"base-uri 'none'; frame-ancestors 'self'; form-action "

/* The stored working directory of the process (new buffer), NULL with *len 0 when none. */
static int load_payload(struct api_call *c, const char *id, void **tar, size_t *len)
{
	int rc = store_process_payload(c->db, id, tar, len, &c->err);

	if (rc && c->err.code == ERR_NOT_FOUND) {
		*tar = NULL;
		*len = 0;
		return 0;
	}
	return rc;
}

/* Set when the process suspended (queue/supervise/results.c): forms/<name>/index.html is there. */
static bool is_custom(const json_t *form)
{
	return json_is_true(json_object_get(form, "custom"));
}

/* Percent-encodes one path segment into b. */
static int add_segment(struct buf *b, const char *s, struct err *e)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		bool plain = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') ||
			     strchr("-._~$", *p);
		if (plain ? buf_append_char(b, (char)*p, e) : buf_printf(b, e, "%%%02X", *p))
			return -1;
	}
	return 0;
}

/* The custom form's page "/forms/<id>/<name>/form/", or the console's generated form
 * "/#/process/<id>/form/<name>", into b (initialized here). */
static int form_url(struct buf *b, const char *id, const char *name, bool custom, struct err *e)
{
	buf_init(b, URL_MAX);
	if (custom)
		return buf_printf(b, e, "/forms/%s/", id) || add_segment(b, name, e) || buf_append_str(b, "/form/", e)
			   ? -1
			   : 0;
	return buf_printf(b, e, "/#/process/%s/form/", id) || add_segment(b, name, e) ? -1 : 0;
}

/* A Host header that can stand in a CSP source: a name or address and a port. */
static bool host_ok(const char *host)
{
	size_t n = host ? strlen(host) : 0;

	if (n == 0 || n > 255)
		return false;
	for (const char *p = host; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      strchr(".-:[]", *p)))
			return false;
	return true;
}

/* The form's page may post to its own submit URL only (not to any endpoint of this server
 * with the user's cookie): the origin is the one the browser used, as for the CSRF rule. */
static void page_headers(struct api_call *c)
{
	const char *host = http_header(c->req, "Host"), *id = api_param(c, "id"), *name = api_param(c, "name");
	struct buf csp;
	struct err e;

	buf_init(&csp, 4096);
	if (!host_ok(host) || !id || !name ||
	    buf_printf(&csp, &e, CSP "%s://%s/api/service/custom_form/%s/", api_request_tls(c->req) ? "https" : "http",
		       host, id) ||
	    add_segment(&csp, name, &e) || buf_append_str(&csp, "/continue", &e))
		http_resp_header(c->resp, "Content-Security-Policy", CSP "'none'");
	else
		http_resp_header(c->resp, "Content-Security-Policy", csp.data);
	buf_cleanup(&csp);
	/* a window the form's script opens on this server (the console) is not reachable
	 * from it: the console's pages do not send the same policy */
	http_resp_header(c->resp, "Cross-Origin-Opener-Policy", "same-origin");
	http_resp_header(c->resp, "X-Content-Type-Options", "nosniff");
	http_resp_header(c->resp, "Cache-Control", "no-store");
	http_resp_header(c->resp, "Referrer-Policy", "same-origin");
}

static int see_other(struct api_call *c, const char *location)
{
	http_resp_bytes(c->resp, 303, "text/plain; charset=utf-8", "", 0);
	http_resp_header(c->resp, "Location", location);
	page_headers(c);
	return 0;
}

/* ---- start ------------------------------------------------------------------------- */

static int start(struct api_call *c)
{
	struct form_req r;
	struct buf uri = {0};
	int rc = api_form_load(c, api_param(c, "name"), PROC_WRITE, &r);

	if (rc == 0 && (rc = form_url(&uri, r.p.instance_id, api_param(c, "name"), is_custom(r.form), &c->err)) == 0)
		rc = api_reply(c, json_pack("{s:s}", "uri", uri.data));
	buf_cleanup(&uri);
	api_form_req_cleanup(&r);
	return rc;
}

/* ---- continue ---------------------------------------------------------------------- */

static int hex_digit(char ch)
{
	return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : ch >= 'A' && ch <= 'F' ? ch - 'A' + 10 : -1;
}

/* Decodes one application/x-www-form-urlencoded token in place ('+' is a space). */
static int url_decode(char *s, size_t *len)
{
	size_t o = 0;

	for (size_t i = 0; i < *len; i++) {
		if (s[i] == '%') {
			int hi = i + 2 < *len ? hex_digit(s[i + 1]) : -1, lo = hi >= 0 ? hex_digit(s[i + 2]) : -1;
			if (hi < 0 || lo < 0)
				return -1;
			s[o++] = (char)(hi * 16 + lo);
			i += 2;
		} else {
			s[o++] = s[i] == '+' ? ' ' : s[i];
		}
	}
	*len = o;
	return 0;
}

/* One name=value pair of the body (len bytes at p, a copy it may change). */
static int read_pair(struct api_call *c, const json_t *form, struct submission *s, char *p, size_t len)
{
	char *eq = memchr(p, '=', len);
	size_t klen = eq ? (size_t)(eq - p) : len, vlen = eq ? len - klen - 1 : 0;
	char *v = eq ? eq + 1 : p + len;
	const json_t *f;
	json_t *jv;

	if (url_decode(p, &klen) || url_decode(v, &vlen))
		return api_fail(c, ERR_INVALID, "The form's body is not valid application/x-www-form-urlencoded");
	p[klen] = '\0';
	if (strlen(p) != klen || !(f = api_form_field(form, p)))
		return 0;
	if (api_form_is_file(f)) {
		json_object_set_new(s->errors, p,
				    json_sprintf("file field '%s' must be uploaded with multipart/form-data", p));
		return 0;
	}
	if (vlen == 0) /* an empty input is no value, as in a multipart submit */
		return 0;
	if (!(jv = json_stringn(v, vlen)))
		return api_fail(c, ERR_INVALID, "The value of field '%.64s' is not UTF-8 text", p);
	api_form_add_value(s->values, p, jv);
	return 0;
}

static int read_urlencoded(struct api_call *c, const json_t *form, struct submission *s)
{
	char *body = c->req->body.data, *end = body + c->req->body.len;

	while (body && body < end) {
		char *amp = memchr(body, '&', (size_t)(end - body));
		size_t len = (size_t)((amp ? amp : end) - body);
		if (len && read_pair(c, form, s, body, len))
			return -1;
		body = amp ? amp + 1 : end;
	}
	return 0;
}

/* Keeps what was submitted and why it was refused in the pending form, for data.js. */
static int note_refusal(struct api_call *c, struct form_req *r, const json_t *values, json_t *errors)
{
	json_t *form = json_deep_copy(r->form);
	int rc;

	if (!form)
		return api_fail(c, ERR_INTERNAL, "out of memory");
	json_object_set_new(form, NOTE_KEY, json_pack("{s:O, s:O}", "values", values, "errors", errors));
	rc = store_process_form_update(c->db, r->p.instance_id, api_param(c, "name"), form, &c->err);
	json_decref(form);
	return rc;
}

static int submit(struct api_call *c, struct form_req *r, struct submission *s)
{
	const char *id = r->p.instance_id, *name = api_param(c, "name");
	json_t *errors = NULL;
	struct buf url;
	int rc;

	if (multipart_is_form_data(str_from(c->req->content_type)))
		rc = api_form_read_multipart(c, r->form, s);
	else if (http_content_type_is(c->req, "application/x-www-form-urlencoded"))
		rc = read_urlencoded(c, r->form, s);
	else
		rc = api_fail(c, ERR_MEDIA_TYPE,
			      "A custom form is submitted as application/x-www-form-urlencoded or multipart/form-data");
	if (rc || (rc = api_form_apply(c, r, s, &errors)) < 0)
		return rc;
	if (rc == FORM_VALID) { /* the console's wizard follows the process to its next form */
		buf_init(&url, URL_MAX);
		rc = buf_printf(&url, &c->err, "/#/process/%s/wizard", id) ? -1 : see_other(c, url.data);
		buf_cleanup(&url);
		return rc;
	}
	rc = note_refusal(c, r, s->values, errors);
	json_decref(errors);
	if (rc)
		return rc;
	if ((rc = form_url(&url, id, name, true, &c->err)) == 0)
		rc = see_other(c, url.data);
	buf_cleanup(&url);
	return rc;
}

static int continue_session(struct api_call *c)
{
	struct form_req r;
	struct submission s;
	int rc = api_form_load(c, api_param(c, "name"), PROC_WRITE, &r);

	api_form_submission_init(&s);
	if (rc == 0)
		rc = submit(c, &r, &s);
	api_form_submission_cleanup(&s);
	api_form_req_cleanup(&r);
	return rc;
}

/* ---- the form's files and data.js --------------------------------------------------- */

/* Concord's definition of a field: label, type (without cardinality), cardinality, allow. */
static json_t *definition(const json_t *f)
{
	const char *type = json_string_value(json_object_get(f, "type"));
	json_t *d = json_object();

	if (json_object_get(f, "label"))
		json_object_set(d, "label", json_object_get(f, "label"));
	json_object_set_new(d, "type", json_stringn(type, form_base_type_len(type)));
	json_object_set_new(d, "cardinality", json_string(form_cardinality(type)));
	if (json_object_get(f, "allow"))
		json_object_set(d, "allow", json_object_get(f, "allow"));
	return d;
}

/* data.js: `data = {…};` with Concord's FormData (txId, formName, success, processFailed,
 * submitUrl, fields, definitions, values, errors).  Values: the form call's values, each
 * field's default, then what the last refused submit sent. */
static int data_js(struct api_call *c, const struct form_req *r, const char *name)
{
	const json_t *note = json_object_get(r->form, NOTE_KEY), *f;
	json_t *fields = json_array(), *defs = json_object(), *errors, *data;
	json_t *values = json_deep_copy(json_object_get(r->form, "values"));
	struct buf url = {0};
	char *text = NULL, *js = NULL;
	size_t i;
	int rc;

	if (!json_is_object(values)) {
		json_decref(values);
		values = json_object();
	}
	json_array_foreach(json_object_get(r->form, "fields"), i, f)
	{
		const char *fname = json_string_value(json_object_get(f, "name"));
		json_array_append_new(fields, json_string(fname));
		json_object_set_new(defs, fname, definition(f));
		if (!json_object_get(values, fname) && json_object_get(f, "value") &&
		    !json_is_null(json_object_get(f, "value")))
			json_object_set(values, fname, json_object_get(f, "value"));
	}
	json_object_update(values, json_object_get(note, "values"));
	errors = json_is_object(json_object_get(note, "errors")) ? json_incref(json_object_get(note, "errors"))
								  : json_object();
	data = json_pack("{s:s, s:s, s:b, s:b, s:s, s:o, s:o, s:o, s:o}", "txId", r->p.instance_id, "formName", name,
			 "success", 0, "processFailed", 0, "submitUrl", "", "fields", fields, "definitions", defs,
			 "values", values, "errors", errors);
	buf_init(&url, URL_MAX);
	rc = buf_printf(&url, &c->err, "/api/service/custom_form/%s/", r->p.instance_id) ||
		     add_segment(&url, name, &c->err) || buf_append_str(&url, "/continue", &c->err)
		 ? -1
		 : 0;
	if (rc == 0 && data) {
		json_object_set_new(data, "submitUrl", json_string(url.data));
		text = json_dumps(data, JSON_INDENT(2));
		if (!text || asprintf(&js, "data = %s;\n", text) < 0) {
			js = NULL;
			rc = api_fail(c, ERR_INTERNAL, "out of memory");
		}
	} else if (rc == 0) {
		rc = api_fail(c, ERR_INTERNAL, "out of memory");
	}
	if (rc == 0) {
		http_resp_take(c->resp, 200, "application/javascript; charset=utf-8", js, strlen(js));
		page_headers(c);
		js = NULL;
	}
	free(js);
	free(text);
	json_decref(data);
	buf_cleanup(&url);
	return rc;
}

static const char *content_type(const char *path)
{
	static const char *const types[][2] = {
	    {".html", "text/html; charset=utf-8"},
	    {".htm", "text/html; charset=utf-8"},
	    {".js", "application/javascript; charset=utf-8"},
	    {".mjs", "application/javascript; charset=utf-8"},
	    {".css", "text/css; charset=utf-8"},
	    {".json", "application/json"},
	    {".txt", "text/plain; charset=utf-8"},
	    {".svg", "image/svg+xml"},
	    {".png", "image/png"},
	    {".jpg", "image/jpeg"},
	    {".jpeg", "image/jpeg"},
	    {".gif", "image/gif"},
	    {".ico", "image/x-icon"},
	    {".webp", "image/webp"},
	    {".woff", "font/woff"},
	    {".woff2", "font/woff2"},
	    {".ttf", "font/ttf"},
	};
	const char *dot = strrchr(path, '.');

	for (size_t i = 0; dot && !strchr(dot, '/') && i < sizeof types / sizeof types[0]; i++)
		if (cstr_ieq(dot, types[i][0]))
			return types[i][1];
	return "application/octet-stream";
}

/* One file of the stored working directory: forms/<dir>/<rel>. */
static int serve_file(struct api_call *c, const char *id, const char *dir, const char *rel)
{
	void *tar = NULL;
	size_t len = 0, n = 0;
	char entry[1024], *data = NULL;
	int rc;

	if (!path_is_safe_relative(rel) || strlen(rel) > 512)
		return api_fail(c, ERR_NOT_FOUND, "No such file of the form: %.200s", rel);
	if (str_fmt(entry, sizeof entry, FORMS_DIR "/%s/%s", dir, rel))
		return api_fail(c, ERR_NOT_FOUND, "No such file of the form: %.200s", rel);
	if ((rc = load_payload(c, id, &tar, &len)))
		return rc;
	if (!tar)
		rc = api_fail(c, ERR_NOT_FOUND, "No such file of the form: %.200s", rel);
	else if ((rc = pack_tar_read(tar, len, entry, (size_t)limits.archive_bytes, &data, &n, &c->err)) == 0) {
		http_resp_take(c->resp, 200, content_type(rel), data, n);
		page_headers(c);
	} else if (c->err.code == ERR_NOT_FOUND) {
		rc = api_fail(c, ERR_NOT_FOUND, "No such file of the form: %.200s", rel);
	}
	free(tar);
	return rc;
}

/* GET /forms/{id}/{name}/{form|shared}/…: who may submit the form, while it is pending. */
static int serve(struct api_call *c, const char *dir, const char *rel)
{
	const char *name = api_param(c, "name");
	struct form_req r;
	int rc = api_form_load(c, name, PROC_WRITE, &r);

	if (rc == 0 && !is_custom(r.form))
		rc = api_fail(c, ERR_NOT_FOUND, "Form %s has no custom form", name);
	else if (rc == 0 && !dir && strcmp(rel, "data.js") == 0)
		rc = data_js(c, &r, name);
	else if (rc == 0)
		rc = serve_file(c, r.p.instance_id, dir ? dir : name, rel);
	api_form_req_cleanup(&r);
	return rc;
}

/* 303 to the console's login, which comes back to the form's page. */
static int to_login(struct api_call *c, const char *id, const char *name)
{
	struct buf url, login;
	int rc;

	buf_init(&login, URL_MAX * 3);
	if ((rc = form_url(&url, id, name, true, &c->err)) == 0 &&
	    (rc = buf_append_str(&login, "/#/login?from=", &c->err)) == 0 &&
	    (rc = add_segment(&login, url.data, &c->err)) == 0)
		rc = see_other(c, login.data);
	buf_cleanup(&url);
	buf_cleanup(&login);
	return rc;
}

/* The page itself is where a browser lands (a bookmark, a link in a mail): without
 * credentials it goes to the console's login first. */
static int get_index(struct api_call *c)
{
	const char *id = api_param(c, "id"), *name = api_param(c, "name");
	size_t n = strlen(c->req->path);
	struct buf url;
	int rc = api_authenticate(c);

	if (rc == API_AUTH_DEFER) /* not on a worker: the route is API_SLOW, so this cannot be */
		return api_fail(c, ERR_INTERNAL, "the custom form's page ran on the event loop");
	if (rc)
		return c->err.code == ERR_UNAUTH ? to_login(c, id, name) : rc;
	if (n && c->req->path[n - 1] == '/')
		return serve(c, NULL, "index.html");
	/* relative addresses in index.html (data.js, ../shared/…) need the folder's slash */
	if ((rc = form_url(&url, id, name, true, &c->err)) == 0)
		rc = see_other(c, url.data);
	buf_cleanup(&url);
	return rc;
}

static int get_form_file(struct api_call *c)
{
	return serve(c, NULL, api_param(c, "path"));
}

static int get_shared_file(struct api_call *c)
{
	return serve(c, SHARED_DIR, api_param(c, "path"));
}

#define DOC_NAME                                                                                                       \
	{                                                                                                              \
		"name", "string", "the form's name"                                                                    \
	}
#define DOC_PATH                                                                                                       \
	{                                                                                                              \
		"path", "string", "a file beneath the folder"                                                          \
	}

static const struct api_doc doc_start = {
    .summary = "Where a browser shows a pending form: its custom form (/forms/{id}/{name}/form/) when the process "
	       "has forms/{name}/index.html, else the console's form",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID, DOC_NAME, {0}},
    .response = "{'type':'object','properties':{'uri':{'type':'string'}}}",
    .errors = "403 404 409",
};
static const struct api_doc doc_continue = {
    .summary = "A custom form's submit (its data.js submitUrl): valid values resume the process and answer 303 to "
	       "the console's wizard; refused ones 303 back to the form, whose data.js then has the errors",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID, DOC_NAME, {0}},
    .body = SCHEMA_OBJECT,
    .body_type = "application/x-www-form-urlencoded multipart/form-data",
    .response_type = "text/plain",
    .status = 303,
    .errors = "400 403 404 409 413 415",
    .audit = {"PROCESS", "RESUME", "form"},
};
static const struct api_doc doc_index = {
    .summary = "The custom form's index.html (without the trailing slash: 303 to it; without credentials: 303 "
	       "to the console's login, which comes back)",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID, DOC_NAME, {0}},
    .response_type = "text/html",
    .errors = "403 404 409",
};
static const struct api_doc doc_file = {
    .summary = "A file of forms/{name}/ in the process's working directory, or data.js (the form's fields, values, "
	       "errors and submitUrl)",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID, DOC_NAME, DOC_PATH, {0}},
    .response_type = "application/octet-stream",
    .errors = "403 404 409",
};
static const struct api_doc doc_shared = {
    .summary = "A file of forms/shared/ in the process's working directory",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID, DOC_NAME, DOC_PATH, {0}},
    .response_type = "application/octet-stream",
    .errors = "403 404 409",
};

const struct api_route api_custom_form_routes[] = {
    {"POST", "/api/service/custom_form/{id}/{name}/start", start, 0, &doc_start},
    {"POST", "/api/service/custom_form/{id}/{name}/continue", continue_session, 0, &doc_continue},
    {"GET", "/forms/{id}/{name}/form", get_index, API_PUBLIC | API_SLOW, &doc_index},
    {"GET", "/forms/{id}/{name}/form/{path*}", get_form_file, 0, &doc_file},
    {"GET", "/forms/{id}/{name}/shared/{path*}", get_shared_file, 0, &doc_shared},
    {0},
};
