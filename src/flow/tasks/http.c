#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sodium.h>

#include "base/b64.h"
#include "base/buf.h"
#include "base/jsonx.h"
#include "base/limits.h"
#include "base/oom.h"
#include "base/path.h"
#include "base/str.h"
#include "flow/tasks/curl_api.h"
#include "flow/tasks/task.h"
#include "flow/value.h"
#include "flow/vm_internal.h"

/* Concord's `http` task (plugins/tasks/http, HttpTaskV2) on libcurl, which is loaded on the
 * task's first call (flow/tasks/curl_api.h) and called through the `curl` table.  One call
 * is one blocking transfer on the VM's OS thread.  Only http and https are spoken, also
 * after a redirect.  The Authorization header and passwords never reach a log line or a
 * message. */

enum req_kind { REQ_NONE, REQ_STRING, REQ_JSON, REQ_FILE, REQ_FORM, REQ_FORM_DATA };
enum resp_kind { RESP_STRING, RESP_JSON, RESP_FILE };

#define HTTP_MAX_REDIRECTS 20L
#define HTTP_MAX_TIMEOUT_MS (24L * 3600 * 1000)
#define HTTP_CONNECT_TIMEOUT_MS 30000L
#define HTTP_SOCKET_TIMEOUT_MS 60000L

struct http_call {
	const char *workdir;
	char method[8];
	char *url;	 /* with the query parameters appended */
	char *shown_url; /* url without user info: for logs and messages */
	char *file_name; /* last path segment of url, "" when none */
	enum req_kind req;
	enum resp_kind resp;
	char *body; /* request body (REQ_STRING, REQ_JSON, REQ_FILE, REQ_FORM) */
	size_t body_len;
	curl_mime *mime; /* REQ_FORM_DATA */
	struct curl_slist *headers;
	char *auth; /* "Authorization: Basic …", wiped when done */
	long connect_ms, socket_ms, request_ms;
	bool ignore_errors, follow, debug, strict_ssl;
	/* the response */
	long status;
	struct buf resp_body;
	json_t *resp_headers;
	size_t header_bytes;
	bool too_large;
};

static void call_cleanup(struct http_call *c)
{
	free(c->url);
	free(c->shown_url);
	free(c->file_name);
	free(c->body);
	/* NULL when libcurl could not be loaded: the table is empty then. */
	if (c->mime)
		curl.mime_free(c->mime);
	for (struct curl_slist *l = c->headers; l; l = l->next)
		sodium_memzero(l->data, strlen(l->data));
	if (c->headers)
		curl.slist_free_all(c->headers);
	if (c->auth) {
		sodium_memzero(c->auth, strlen(c->auth));
		free(c->auth);
	}
	buf_cleanup(&c->resp_body);
	json_decref(c->resp_headers);
}

/* A timeout in ms; a negative value means the default, as in Concord. */
static int opt_ms(json_t *in, const char *key, long def, long *out, struct err *e)
{
	int64_t n;
	*out = def;
	if (task_opt_long(in, key, -1, &n, e) < 0)
		return -1;
	if (n > HTTP_MAX_TIMEOUT_MS)
		return err_set(e, ERR_INVALID, "'%s' must be at most %ld ms, got %lld", key, HTTP_MAX_TIMEOUT_MS,
			       (long long)n);
	if (n >= 0)
		*out = (long)n;
	return 0;
}

static int parse_method(json_t *in, struct http_call *c, struct err *e)
{
	static const char *const methods[] = {"GET", "POST", "PUT", "PATCH", "DELETE"};
	const char *m;
	if (task_opt_str(in, "method", &m, e) < 0)
		return -1;
	if (!m) {
		str_set_lit(c->method, "GET");
		return 0;
	}
	for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++)
		if (strcasecmp(m, methods[i]) == 0) {
			return str_fmt(c->method, sizeof c->method, "%s", methods[i])
				   ? err_set(e, ERR_INTERNAL, "method %s too long", methods[i])
				   : 0;
		}
	return err_set(e, ERR_INVALID, "'method: %s' is not a supported HTTP method", m);
}

static int parse_types(json_t *in, struct http_call *c, struct err *e)
{
	static const char *const reqs[] = {"string", "json", "file", "form", "formData"};
	static const char *const resps[] = {"string", "json", "file"};
	const char *rq, *rs;
	bool ok = false;
	if (task_opt_str(in, "request", &rq, e) < 0 || task_opt_str(in, "response", &rs, e) < 0)
		return -1;
	c->req = REQ_NONE;
	for (size_t i = 0; rq && i < sizeof reqs / sizeof reqs[0] && !ok; i++)
		if (strcasecmp(rq, reqs[i]) == 0)
			c->req = (enum req_kind)(REQ_STRING + i), ok = true;
	if (rq && !ok)
		return err_set(e, ERR_INVALID, "'request: %s' is not a supported request type", rq);
	c->resp = RESP_STRING;
	ok = false;
	for (size_t i = 0; rs && i < sizeof resps / sizeof resps[0] && !ok; i++)
		if (strcasecmp(rs, resps[i]) == 0)
			c->resp = (enum resp_kind)(RESP_STRING + i), ok = true;
	if (rs && !ok)
		return err_set(e, ERR_INVALID, "'response: %s' is not a supported response type", rs);
	return 0;
}

/* Appends "k=v" (both percent-encoded) to the query of u; a list value repeats k. */
static int add_query_param(CURL *h, CURLU *u, const char *k, json_t *v, struct err *e)
{
	char *ek = curl.easy_escape(h, k, 0), *text = NULL, *ev = NULL, *pair = NULL;
	int rc = -1;
	if (json_is_array(v)) {
		size_t i;
		json_t *item;
		rc = 0;
		json_array_foreach(v, i, item)
		{
			if (rc == 0)
				rc = add_query_param(h, u, k, item, e);
		}
		curl.free(ek);
		return rc;
	}
	text = task_text(v);
	ev = text ? curl.easy_escape(h, text, 0) : NULL;
	if (!ek || !ev || asprintf(&pair, "%s=%s", ek, ev) < 0) {
		pair = NULL;
		oom_fail(e);
	} else if (curl.url_set(u, CURLUPART_QUERY, pair, CURLU_APPENDQUERY) != CURLUE_OK) {
		err_set(e, ERR_INVALID, "'query': cannot add parameter '%s'", k);
	} else {
		rc = 0;
	}
	curl.free(ek);
	curl.free(ev);
	free(text);
	free(pair);
	return rc;
}

static int parse_query(json_t *in, CURLU *u, struct err *e)
{
	json_t *q = json_object_get(in, "query"), *v;
	const char *k;
	CURL *h;
	int rc = 0;
	if (!q || json_is_null(q))
		return 0;
	if (!json_is_object(q))
		return err_set(e, ERR_INVALID, "'query' must be a map, got %s", value_class_name(q));
	if (!(h = curl.easy_init()))
		return oom_fail(e);
	json_object_foreach(q, k, v)
	{
		if (rc == 0 && !json_is_null(v))
			rc = add_query_param(h, u, k, v, e);
	}
	curl.easy_cleanup(h);
	return rc;
}

/* The last segment of the URL's path: the name of a `response: file` download. */
static char *last_segment(CURLU *u)
{
	char *path = NULL, *name;
	const char *slash;
	if (curl.url_get(u, CURLUPART_PATH, &path, 0) != CURLUE_OK)
		return strdup("");
	slash = strrchr(path, '/');
	name = strdup(slash ? slash + 1 : path);
	curl.free(path);
	return name;
}

static int url_to_strings(struct http_call *c, CURLU *u, struct err *e)
{
	char *s = NULL;
	if (curl.url_get(u, CURLUPART_URL, &s, 0) != CURLUE_OK || !(c->url = strdup(s)))
		goto oom;
	curl.free(s);
	s = NULL;
	if (curl.url_set(u, CURLUPART_USER, NULL, 0) != CURLUE_OK ||
	    curl.url_set(u, CURLUPART_PASSWORD, NULL, 0) != CURLUE_OK ||
	    curl.url_get(u, CURLUPART_URL, &s, 0) != CURLUE_OK || !(c->shown_url = strdup(s)))
		goto oom;
	curl.free(s);
	if (!(c->file_name = last_segment(u)))
		return oom_fail(e);
	return 0;
oom:
	curl.free(s);
	return oom_fail(e);
}

static int parse_url(json_t *in, struct http_call *c, struct err *e)
{
	const char *url;
	char *scheme = NULL;
	CURLU *u = NULL;
	CURLUcode uc;
	int rc = -1;
	if (task_opt_str(in, "url", &url, e) < 0)
		return -1;
	if (!url || !*url)
		return err_set(e, ERR_INVALID, "('url') argument is missing");
	if (!(u = curl.url()))
		return oom_fail(e);
	if ((uc = curl.url_set(u, CURLUPART_URL, url, CURLU_NON_SUPPORT_SCHEME)) != CURLUE_OK) {
		err_set(e, ERR_INVALID, "'url' is not a valid URL: %s", curl.url_strerror(uc));
		goto out;
	}
	if (curl.url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    (strcmp(scheme, "http") != 0 && strcmp(scheme, "https") != 0)) {
		err_set(e, ERR_INVALID, "'url' must be an http or https URL, got scheme '%s'", scheme ? scheme : "");
		goto out;
	}
	if (parse_query(in, u, e) < 0 || url_to_strings(c, u, e) < 0)
		goto out;
	rc = 0;
out:
	curl.free(scheme);
	curl.url_cleanup(u);
	return rc;
}

/* An RFC 9110 token: the only characters allowed in a header name. */
static bool is_token(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr("!#$%&'*+-.^_`|~", *s)))
			return false;
	return true;
}

static int add_header(struct http_call *c, const char *name, const char *value, struct err *e)
{
	char *line = NULL;
	struct curl_slist *l;
	if (!is_token(name))
		return err_set(e, ERR_INVALID, "'headers': '%s' is not a valid header name", name);
	if (strpbrk(value, "\r\n"))
		return err_set(e, ERR_INVALID, "'headers': the value of '%s' contains a line break", name);
	/* "Name;" is curl's way of sending a header with an empty value. */
	if (asprintf(&line, *value ? "%s: %s" : "%s;", name, value) < 0)
		return oom_fail(e);
	l = curl.slist_append(c->headers, line);
	free(line);
	if (!l)
		return oom_fail(e);
	c->headers = l;
	return 0;
}

static bool has_header(json_t *headers, const char *name)
{
	const char *k;
	json_t *v;
	json_object_foreach(headers, k, v)
	{
		if (strcasecmp(k, name) == 0)
			return true;
	}
	return false;
}

static int parse_headers(json_t *in, struct http_call *c, struct err *e)
{
	static const char *const types[] = {
	    NULL, "text/plain", "application/json", "application/octet-stream", "application/x-www-form-urlencoded",
	    NULL};
	json_t *hs = json_object_get(in, "headers"), *v;
	const char *k;
	if (hs && !json_is_null(hs) && !json_is_object(hs))
		return err_set(e, ERR_INVALID, "'headers' must be a map, got %s", value_class_name(hs));
	if (!json_is_object(hs))
		hs = NULL;
	if (types[c->req] && !has_header(hs, "Content-Type") && add_header(c, "Content-Type", types[c->req], e) < 0)
		return -1;
	json_object_foreach(hs, k, v)
	{
		char *text = json_is_null(v) ? strdup("") : task_text(v);
		int rc = text ? add_header(c, k, text, e) : oom_fail(e);
		free(text);
		if (rc < 0)
			return -1;
	}
	return 0;
}

static int auth_from_user(json_t *basic, char **token, struct err *e)
{
	char *user = task_text(json_object_get(basic, "username"));
	char *pass = task_text(json_object_get(basic, "password"));
	char *cred = NULL;
	int rc = -1;
	if (!json_is_string(json_object_get(basic, "username")))
		err_set(e, ERR_INVALID, "'auth.basic' needs 'token' or 'username' and 'password'");
	else if (!user || !pass || asprintf(&cred, "%s:%s", user, pass) < 0)
		cred = NULL, oom_fail(e);
	else if (!(*token = b64_encode(cred, strlen(cred), B64_STD)))
		oom_fail(e);
	else
		rc = 0;
	if (pass)
		sodium_memzero(pass, strlen(pass));
	if (cred)
		sodium_memzero(cred, strlen(cred));
	free(user);
	free(pass);
	free(cred);
	return rc;
}

static int auth_from_token(json_t *tok, char **token, struct err *e)
{
	const char *t = json_string_value(tok);
	unsigned char *raw;
	size_t n;
	if (!t || strpbrk(t, "\r\n") || !(raw = b64_decode(t, strlen(t), &n, NULL)))
		return err_set(e, ERR_INVALID, "Invalid auth token value. Expected a base64 encoded string");
	sodium_memzero(raw, n);
	free(raw);
	if (!(*token = strdup(t)))
		return oom_fail(e);
	return 0;
}

static int parse_auth(json_t *in, struct http_call *c, struct err *e)
{
	json_t *auth = json_object_get(in, "auth"), *basic, *tok;
	char *token = NULL;
	int rc;
	if (!auth || json_is_null(auth))
		return 0;
	if (!json_is_object(auth))
		return err_set(e, ERR_INVALID, "'auth' must be a map, got %s", value_class_name(auth));
	basic = json_object_get(auth, "basic");
	if (!json_is_object(basic))
		return err_set(e, ERR_INVALID,
			       "'auth.basic' is required (a map with 'token' or 'username' and 'password')");
	tok = json_object_get(basic, "token");
	rc = tok && !json_is_null(tok) ? auth_from_token(tok, &token, e) : auth_from_user(basic, &token, e);
	if (rc < 0)
		return -1;
	if (asprintf(&c->auth, "Authorization: Basic %s", token) < 0) {
		c->auth = NULL;
		rc = oom_fail(e);
	}
	sodium_memzero(token, strlen(token));
	free(token);
	return rc;
}

static int incompatible(struct http_call *c, struct err *e)
{
	static const char *const names[] = {"", "string", "json", "file", "form", "formData"};
	return err_set(e, ERR_INVALID, "'request: %s' is not compatible with 'body'", names[c->req]);
}

static int body_json(struct http_call *c, json_t *body, struct err *e)
{
	if (json_is_string(body)) {
		const char *s = json_string_value(body);
		struct err pe;
		json_t *v = jsonx_parse(s, json_string_length(body), limits.json_depth, &pe);
		if (!v)
			return incompatible(c, e);
		json_decref(v);
		c->body = strdup(s);
	} else {
		c->body = json_dumps(body, JSON_COMPACT | JSON_ENCODE_ANY);
	}
	if (!c->body)
		return oom_fail(e);
	c->body_len = strlen(c->body);
	return 0;
}

/* `request: file`: body is a path relative to the working directory, inside it. */
static int body_file(struct http_call *c, json_t *body, struct err *e)
{
	const char *rel = json_string_value(body);
	char *full;
	struct err re;
	if (!rel)
		return incompatible(c, e);
	if (!path_is_safe_relative(rel))
		return err_set(e, ERR_FORBIDDEN, "'body' must be a path inside the working directory, got '%s'", rel);
	if (!(full = path_join_safe(c->workdir, rel, e)))
		return -1;
	c->body = path_read_file(full, limits.http_task_request_bytes, &c->body_len, &re);
	free(full);
	if (c->body)
		return 0;
	if (re.code == ERR_NOT_FOUND)
		return err_set(e, ERR_NOT_FOUND, "File: %s not found", rel);
	if (re.code == ERR_TOO_LARGE)
		return err_set(e, ERR_TOO_LARGE, "File: %s is larger than %zu bytes (limit http_task_request_bytes)",
			       rel, limits.http_task_request_bytes);
	return err_set(e, re.code, "File: %s cannot be read", rel);
}

static int form_pair(struct buf *b, CURL *h, const char *k, json_t *v, struct err *e)
{
	char *text, *ek, *ev;
	int rc;
	if (json_is_array(v)) {
		size_t i;
		json_t *item;
		json_array_foreach(v, i, item)
		{
			if (form_pair(b, h, k, item, e) < 0)
				return -1;
		}
		return 0;
	}
	text = task_text(v);
	ek = curl.easy_escape(h, k, 0);
	ev = text ? curl.easy_escape(h, text, 0) : NULL;
	if (!ek || !ev)
		rc = oom_fail(e);
	else
		rc = buf_printf(b, e, "%s%s=%s", b->len ? "&" : "", ek, ev);
	curl.free(ek);
	curl.free(ev);
	free(text);
	return rc;
}

/* `request: form`: application/x-www-form-urlencoded, a list value repeats its key. */
static int body_form(struct http_call *c, json_t *body, struct err *e)
{
	struct buf b;
	const char *k;
	json_t *v;
	CURL *h;
	int rc = 0;
	if (!json_is_object(body))
		return incompatible(c, e);
	if (!(h = curl.easy_init()))
		return oom_fail(e);
	buf_init(&b, limits.http_task_request_bytes);
	json_object_foreach(body, k, v)
	{
		if (rc == 0 && !json_is_null(v))
			rc = form_pair(&b, h, k, v, e);
	}
	curl.easy_cleanup(h);
	if (rc < 0) {
		buf_cleanup(&b);
		return -1;
	}
	c->body = buf_detach(&b, &c->body_len);
	return 0;
}

static int mime_file(struct http_call *c, curl_mimepart *p, const char *k, const char *rel, struct err *e)
{
	char *full;
	struct stat st;
	const char *slash = strrchr(rel, '/');
	int rc = 0;
	if (!path_is_safe_relative(rel))
		return err_set(e, ERR_FORBIDDEN, "'body.%s' must name a file inside the working directory, got '@%s'",
			       k, rel);
	if (!(full = path_join_safe(c->workdir, rel, e)))
		return -1;
	if (stat(full, &st) < 0 || !S_ISREG(st.st_mode))
		rc = err_set(e, ERR_NOT_FOUND, "file -> %s does not exists", rel);
	else if ((uint64_t)st.st_size > limits.http_task_request_bytes)
		rc = err_set(e, ERR_TOO_LARGE, "file -> %s is larger than %zu bytes (limit http_task_request_bytes)",
			     rel, limits.http_task_request_bytes);
	else if (curl.mime_filedata(p, full) != CURLE_OK ||
		 curl.mime_filename(p, slash ? slash + 1 : rel) != CURLE_OK ||
		 curl.mime_type(p, "application/octet-stream") != CURLE_OK)
		rc = oom_fail(e);
	free(full);
	return rc;
}

static int mime_text(curl_mimepart *p, const char *data, const char *type, struct err *e)
{
	if (curl.mime_data(p, data, CURL_ZERO_TERMINATED) != CURLE_OK || curl.mime_type(p, type) != CURLE_OK)
		return oom_fail(e);
	return 0;
}

/* One `request: formData` field: "text", "@file", a number, or {type, data}. */
static int mime_field(struct task_ctx *t, struct http_call *c, const char *k, json_t *v, struct err *e)
{
	curl_mimepart *p;
	char *text = NULL;
	int rc;
	if (!json_is_string(v) && !json_is_number(v) && !json_is_object(v)) {
		vm_log(t->vm, FLOW_WARN, "Skipping value for key '%s': unsupported type %s", k, value_class_name(v));
		return 0;
	}
	if (!(p = curl.mime_addpart(c->mime)) || curl.mime_name(p, k) != CURLE_OK)
		return oom_fail(e);
	if (json_is_object(v)) {
		const char *type = json_string_value(json_object_get(v, "type"));
		json_t *data = json_object_get(v, "data");
		if (!data || json_is_null(data))
			return err_set(e, ERR_INVALID, "field -> %s missing request data", k);
		if (type && strcmp(type, "application/octet-stream") == 0 && json_is_string(data) &&
		    json_string_value(data)[0] == '@')
			return mime_file(c, p, k, json_string_value(data) + 1, e);
		text = task_text(data);
		rc = text ? mime_text(p, text, type ? type : "text/plain", e) : oom_fail(e);
	} else if (json_is_string(v) && json_string_value(v)[0] == '@') {
		return mime_file(c, p, k, json_string_value(v) + 1, e);
	} else {
		text = task_text(v);
		rc = text ? mime_text(p, text, "text/plain", e) : oom_fail(e);
	}
	free(text);
	return rc;
}

static int body_form_data(struct task_ctx *t, struct http_call *c, CURL *h, json_t *body, struct err *e)
{
	const char *k;
	json_t *v;
	if (!json_is_object(body))
		return incompatible(c, e);
	if (!(c->mime = curl.mime_init(h)))
		return oom_fail(e);
	json_object_foreach(body, k, v)
	{
		if (mime_field(t, c, k, v, e) < 0)
			return -1;
	}
	return 0;
}

static bool method_has_body(const struct http_call *c)
{
	return strcmp(c->method, "POST") == 0 || strcmp(c->method, "PUT") == 0 || strcmp(c->method, "PATCH") == 0;
}

/* The request body for POST, PUT and PATCH (GET and DELETE send none, as in Concord). */
static int parse_body(struct task_ctx *t, json_t *in, struct http_call *c, CURL *h, struct err *e)
{
	json_t *body = json_object_get(in, "body");
	bool must = strcmp(c->method, "POST") == 0 || strcmp(c->method, "PUT") == 0;
	if (json_is_null(body))
		body = NULL;
	if (!method_has_body(c) || (!body && !must))
		return 0;
	if (c->req == REQ_NONE)
		return err_set(e, ERR_INVALID, "('request') argument is missing for ('%s') method", c->method);
	if (!body)
		return err_set(e, ERR_INVALID, "('body') argument is missing for ('%s') method", c->method);
	switch (c->req) {
	case REQ_STRING:
		if (!json_is_string(body))
			return incompatible(c, e);
		if (!(c->body = strdup(json_string_value(body))))
			return oom_fail(e);
		c->body_len = strlen(c->body);
		return 0;
	case REQ_JSON:
		return body_json(c, body, e);
	case REQ_FILE:
		return body_file(c, body, e);
	case REQ_FORM:
		return body_form(c, body, e);
	case REQ_FORM_DATA:
		return body_form_data(t, c, h, body, e);
	case REQ_NONE:
		break;
	}
	return 0;
}

static size_t on_body(char *p, size_t size, size_t n, void *ud)
{
	struct http_call *c = ud;
	size_t len = size * n;
	if (c->resp_body.len + c->header_bytes + len > limits.http_task_response_bytes ||
	    buf_append(&c->resp_body, p, len, NULL) < 0) {
		c->too_large = true;
		return 0;
	}
	return len;
}

/* Keeps the headers of the last response (a redirect or a 100 Continue starts over). */
static size_t on_header(char *p, size_t size, size_t n, void *ud)
{
	struct http_call *c = ud;
	size_t len = size * n, nlen;
	const char *colon = memchr(p, ':', len);
	char *name, *value;
	c->header_bytes += len;
	if (c->resp_body.len + c->header_bytes > limits.http_task_response_bytes) {
		c->too_large = true;
		return 0;
	}
	if (len >= 5 && memcmp(p, "HTTP/", 5) == 0) {
		json_object_clear(c->resp_headers);
		return len;
	}
	if (!colon)
		return len;
	nlen = (size_t)(colon - p);
	for (colon++; colon < p + len && (*colon == ' ' || *colon == '\t'); colon++)
		;
	while (len > 0 && (p[len - 1] == '\r' || p[len - 1] == '\n' || p[len - 1] == ' '))
		len--;
	name = strndup(p, nlen);
	value = strndup(colon, colon < p + len ? (size_t)(p + len - colon) : 0);
	if (name && value)
		json_object_set_new(c->resp_headers, name, jsonx_string_lossy(value));
	else
		oom_note(); /* a header lost: the VM fails the step (vm.c check_memory) */
	free(name);
	free(value);
	return size * n;
}

static void set_method(CURL *h, const struct http_call *c)
{
	if (c->mime)
		curl.easy_setopt(h, CURLOPT_MIMEPOST, c->mime);
	else if (method_has_body(c)) {
		curl.easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)c->body_len);
		curl.easy_setopt(h, CURLOPT_POSTFIELDS, c->body ? c->body : "");
	}
	if (strcmp(c->method, "POST") != 0 && strcmp(c->method, "GET") != 0)
		curl.easy_setopt(h, CURLOPT_CUSTOMREQUEST, c->method);
}

static int set_options(CURL *h, struct http_call *c, char *errbuf, struct err *e)
{
	struct curl_slist *l;
	if (c->auth) {
		if (!(l = curl.slist_append(c->headers, c->auth)))
			return oom_fail(e);
		c->headers = l;
	}
	curl.easy_setopt(h, CURLOPT_URL, c->url);
	curl.easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
	curl.easy_setopt(h, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
	curl.easy_setopt(h, CURLOPT_FOLLOWLOCATION, c->follow ? 1L : 0L);
	curl.easy_setopt(h, CURLOPT_MAXREDIRS, HTTP_MAX_REDIRECTS);
	curl.easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
	curl.easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
	curl.easy_setopt(h, CURLOPT_USERAGENT, "accord");
	curl.easy_setopt(h, CURLOPT_HTTPHEADER, c->headers);
	curl.easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, c->connect_ms);
	curl.easy_setopt(h, CURLOPT_TIMEOUT_MS, c->request_ms);
	if (c->socket_ms > 0) {
		/* No byte for socketTimeout: curl measures it in whole seconds. */
		curl.easy_setopt(h, CURLOPT_LOW_SPEED_LIMIT, 1L);
		curl.easy_setopt(h, CURLOPT_LOW_SPEED_TIME, (c->socket_ms + 999) / 1000);
	}
	if (!c->strict_ssl) {
		curl.easy_setopt(h, CURLOPT_SSL_VERIFYPEER, 0L);
		curl.easy_setopt(h, CURLOPT_SSL_VERIFYHOST, 0L);
	}
	curl.easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
	curl.easy_setopt(h, CURLOPT_WRITEDATA, c);
	curl.easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
	curl.easy_setopt(h, CURLOPT_HEADERDATA, c);
	set_method(h, c);
	return 0;
}

/* The message of a failed transfer; never contains the Authorization header. */
static int transfer_error(CURL *h, struct http_call *c, CURLcode rc, const char *errbuf, struct err *e)
{
	curl_off_t connect_us = 0, total_us = 0;
	const char *why = *errbuf ? errbuf : curl.easy_strerror(rc);
	if (c->too_large)
		return err_set(e, ERR_TOO_LARGE,
			       "%s %s: the response is larger than %zu bytes (limit "
			       "http_task_response_bytes)",
			       c->method, c->shown_url, limits.http_task_response_bytes);
	if (rc != CURLE_OPERATION_TIMEDOUT)
		return err_set(e, ERR_UNAVAILABLE, "%s %s failed: %s", c->method, c->shown_url, why);
	curl.easy_getinfo(h, CURLINFO_CONNECT_TIME_T, &connect_us);
	curl.easy_getinfo(h, CURLINFO_TOTAL_TIME_T, &total_us);
	if (strstr(why, "too slow"))
		return err_set(e, ERR_UNAVAILABLE, "%s %s: socket timeout, no data for %ldms", c->method, c->shown_url,
			       c->socket_ms);
	/* curl's clocks may stop a hair before requestTimeout: once connected, or when the
	 * request timeout is the shorter one, a timeout that is not the socket's is it. */
	if (c->request_ms > 0 &&
	    (connect_us > 0 || c->request_ms <= c->connect_ms || total_us / 1000 >= c->request_ms))
		return err_set(e, ERR_UNAVAILABLE, "Request timeout after %ldms", c->request_ms);
	if (connect_us == 0)
		return err_set(e, ERR_UNAVAILABLE, "%s %s: connect timeout after %ldms", c->method, c->shown_url,
			       c->connect_ms);
	return err_set(e, ERR_UNAVAILABLE, "%s %s failed: %s", c->method, c->shown_url, why);
}

static int perform(CURL *h, struct http_call *c, struct err *e)
{
	char errbuf[CURL_ERROR_SIZE] = "";
	CURLcode rc;
	if (set_options(h, c, errbuf, e) < 0)
		return -1;
	rc = curl.easy_perform(h);
	if (rc != CURLE_OK)
		return transfer_error(h, c, rc, errbuf, e);
	curl.easy_getinfo(h, CURLINFO_RESPONSE_CODE, &c->status);
	return 0;
}

/* `response: file`: .tmp/tmpdir_XXXXXX/<last URL segment> (or tmpfile_XXXXXX.tmp) under the
 * working directory, as Concord stores it; the content is the relative path. */
static int save_file(struct http_call *c, json_t **content, struct err *e)
{
	char *dir = NULL, *full = NULL;
	size_t wl = strlen(c->workdir) + 1;
	int fd = -1, rc = -1;
	if (asprintf(&dir, "%s/.tmp", c->workdir) < 0)
		return oom_fail(e);
	if (path_mkdirs(dir, 0700, e) < 0)
		goto out;
	free(dir);
	if (asprintf(&dir, "%s/.tmp/tmpdir_XXXXXX", c->workdir) < 0 || !mkdtemp(dir)) {
		err_set(e, ERR_INTERNAL, "cannot create a folder under %s/.tmp: %s", c->workdir, strerror(errno));
		goto out;
	}
	if (path_is_safe_relative(c->file_name) && strlen(c->file_name) < 200) {
		if (asprintf(&full, "%s/%s", dir, c->file_name) >= 0)
			fd = open(full, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	} else if (asprintf(&full, "%s/tmpfile_XXXXXX.tmp", dir) >= 0) {
		fd = mkostemps(full, 4, O_CLOEXEC);
	}
	if (fd < 0 || path_write_all(fd, c->resp_body.data, c->resp_body.len) < 0) {
		err_set(e, ERR_INTERNAL, "cannot write the response to %s: %s", full ? full + wl : dir + wl,
			strerror(errno));
		goto out;
	}
	*content = json_string(full + wl);
	rc = *content ? 0 : oom_fail(e);
out:
	if (fd >= 0)
		close(fd);
	free(dir);
	free(full);
	return rc;
}

static int content_of(struct http_call *c, json_t **content, struct err *e)
{
	if (c->resp == RESP_FILE)
		return save_file(c, content, e);
	if (c->resp == RESP_JSON) {
		if (c->resp_body.len == 0) {
			*content = json_null();
			return 0;
		}
		*content = jsonx_parse(c->resp_body.data, c->resp_body.len, limits.json_depth, e);
		if (!*content)
			err_prefix(e, "Invalid JSON response");
		return *content ? 0 : -1;
	}
	*content = jsonx_string_lossy(c->resp_body.data ? c->resp_body.data : "");
	return 0;
}

/* Concord's result: {ok, statusCode, content, headers} plus `error` (the body) when the
 * status is not 2xx. */
static int response_result(struct http_call *c, json_t **out, struct err *e)
{
	bool ok = c->status >= 200 && c->status < 300;
	json_t *content = NULL;
	if (c->status == 401 && !c->ignore_errors)
		return err_set(e, ERR_UNAUTH, "Authorization required for %s(code: %ld)", c->shown_url, c->status);
	if (ok && content_of(c, &content, e) < 0)
		return -1;
	*out = json_object();
	json_object_set_new(*out, "ok", json_boolean(ok));
	json_object_set_new(*out, "statusCode", json_integer(c->status));
	json_object_set_new(*out, "content", ok ? content : json_string(""));
	json_object_set(*out, "headers", c->resp_headers);
	if (!ok)
		json_object_set_new(*out, "error", jsonx_string_lossy(c->resp_body.data ? c->resp_body.data : ""));
	return 0;
}

static int parse_input(struct task_ctx *t, json_t *in, struct http_call *c, CURL *h, struct err *e)
{
	const char *unsupported[] = {"proxy", "proxyAuth", "keystorePath", "truststorePath"};
	if (!json_is_object(in))
		return err_set(e, ERR_INVALID, "the http task needs an 'in' map");
	for (size_t i = 0; i < sizeof unsupported / sizeof unsupported[0]; i++)
		if (json_object_get(in, unsupported[i]))
			return err_set(e, ERR_INVALID, "'%s' is not supported by Accord's http task", unsupported[i]);
	if (parse_method(in, c, e) < 0 || parse_types(in, c, e) < 0 || parse_url(in, c, e) < 0 ||
	    parse_headers(in, c, e) < 0 || parse_auth(in, c, e) < 0 || parse_body(t, in, c, h, e) < 0)
		return -1;
	if (opt_ms(in, "connectTimeout", HTTP_CONNECT_TIMEOUT_MS, &c->connect_ms, e) < 0 ||
	    opt_ms(in, "socketTimeout", HTTP_SOCKET_TIMEOUT_MS, &c->socket_ms, e) < 0 ||
	    opt_ms(in, "requestTimeout", 0, &c->request_ms, e) < 0)
		return -1;
	if (task_opt_bool(in, "ignoreErrors", false, &c->ignore_errors, e) < 0 ||
	    task_opt_bool(in, "followRedirects", true, &c->follow, e) < 0 ||
	    task_opt_bool(in, "debug", false, &c->debug, e) < 0 || task_opt_bool(in, "strictSsl", true, &c->strict_ssl, e) < 0)
		return -1;
	return 0;
}

/* One call described by in, in three parts (task.h, struct task_job): prepare on the VM's
 * thread (input, libcurl handle), run (the transfer: only the call's own data), finish on
 * the VM's thread (logs, the result).  A transfer failure (connection, timeout, size limit)
 * or a 401 fails, unless ignoreErrors: then the result is {ok: false, error}.  Bad input
 * always fails. */
struct http_job {
	struct task_job base; /* must be first */
	struct http_call c;
	CURL *h;
	int rc;
	struct err e;
};

static void job_run(struct task_job *base)
{
	struct http_job *j = (struct http_job *)base;

	j->rc = perform(j->h, &j->c, &j->e);
}

static int job_finish(struct task_job *base, struct task_ctx *t, json_t **out, struct err *e)
{
	struct http_job *j = (struct http_job *)base;
	struct http_call *c = &j->c;

	*out = NULL;
	if (j->rc < 0) {
		if (c->debug)
			vm_log(t->vm, FLOW_INFO, "http: %s %s failed", c->method, c->shown_url);
		*e = j->e;
		if (!c->ignore_errors)
			return -1;
		*out = json_pack("{s:b, s:s}", "ok", 0, "error", e->msg);
		return *out ? 0 : oom_fail(e);
	}
	if (c->debug)
		vm_log(t->vm, FLOW_INFO, "http: %s %s -> %ld", c->method, c->shown_url, c->status);
	return response_result(c, out, e);
}

static void job_free(struct task_job *base)
{
	struct http_job *j = (struct http_job *)base;

	curl.easy_cleanup(j->h);
	call_cleanup(&j->c);
	free(j);
}

static struct http_job *job_prepare(struct task_ctx *t, json_t *in, struct err *e)
{
	struct http_job *j;

	if (curl_api_load(e) < 0) {
		err_prefix(e, "the http task needs libcurl");
		return NULL;
	}
	if (!(j = calloc(1, sizeof *j))) {
		oom_fail(e);
		return NULL;
	}
	j->base = (struct task_job){job_run, job_finish, job_free};
	j->c.workdir = t->h->workdir;
	buf_init(&j->c.resp_body, limits.http_task_response_bytes);
	if (!(j->c.resp_headers = json_object()) || !(j->h = curl.easy_init())) {
		oom_fail(e);
		job_free(&j->base);
		return NULL;
	}
	if (parse_input(t, in, &j->c, j->h, e) < 0) {
		job_free(&j->base);
		return NULL;
	}
	if (j->c.debug)
		vm_log(t->vm, FLOW_INFO, "http: %s %s", j->c.method, j->c.shown_url);
	return j;
}

/* The whole call on the VM's thread (expressions: ${http.asString(...)}). */
static int http_call_run(struct task_ctx *t, json_t *in, json_t **out, struct err *e)
{
	struct http_job *j = job_prepare(t, in, e);
	int rc;

	*out = NULL;
	if (!j)
		return -1;
	job_run(&j->base);
	rc = job_finish(&j->base, t, out, e);
	job_free(&j->base);
	return rc;
}

/* A step: the transfer may run while other parallel branches go on (task.h). */
static int http_execute(struct task_ctx *t, json_t *in, json_t **out, struct err *e)
{
	struct http_job *j = job_prepare(t, in, e);

	*out = NULL;
	if (!j)
		return -1;
	/* Concord's http task in dry-run mode: the request is checked, only a GET is sent. */
	if (t->h->dry_run && strcmp(j->c.method, "GET") != 0) {
		vm_log(t->vm, FLOW_INFO, "Running in dry-run mode: Skipping sending request");
		job_free(&j->base);
		*out = json_pack("{s:i}", "statusCode", 200);
		return *out ? 0 : oom_fail(e);
	}
	t->job = &j->base;
	return 0;
}

/* ${http.asString(url)}: GET, the body as a string ("" when the status is not 2xx). */
static int m_as_string(struct task_ctx *t, json_t *args, json_t **out, struct err *e)
{
	const char *url;
	json_t *in, *r = NULL;
	int rc;
	if (task_arg_str(args, 0, "url", &url, e) < 0)
		return -1;
	if (!(in = json_pack("{s:s, s:s, s:s}", "url", url, "method", "GET", "response", "string")))
		return oom_fail(e);
	rc = http_call_run(t, in, &r, e);
	if (rc == 0) {
		*out = json_incref(json_object_get(r, "content"));
		if (!*out)
			*out = json_string("");
	}
	json_decref(r);
	json_decref(in);
	return rc;
}

static const struct task_method methods[] = {{"asString", m_as_string, 1, 1}, {NULL, NULL, 0, 0}};

const struct task_def task_http = {"http", http_execute, methods, false, false};
