/* GET /api/v1/org/{org}/project/{project}/repo/{repo}/start/{entryPoint}: the start link
 * a user opens in a browser (Concord's "Browser Link"; docs/api.md "Start by link",
 * docs/security.md on why this GET may start a process).  Without credentials the browser
 * goes to the console's login with this link as the return address; with them (the
 * console's cookie, Basic or an API key) the process starts from the repository as the
 * user, exactly as POST /api/v1/process with org/project/repo/entryPoint would start it,
 * and the browser goes to the console's wizard for it.  Every failure is a readable HTML
 * page with the status of the error, and nothing started.
 *
 * Query: activeProfiles (comma-separated), repoBranchOrTag, repoCommitId, and arguments.*
 * (dotted names nest: arguments.a.b=1 → {"a":{"b":"1"}}; values are strings).  Other
 * parameters are ignored, as in Concord (links in mails pick up tracking parameters). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/doc_schemas.h"
#include "api/process_routes.h"
#include "api/routes.h"
#include "base/buf.h"
#include "base/datetime.h"
#include "base/log.h"
#include "base/str.h"
#include "flow/value.h"

#define URL_MAX 16384 /* bytes of the return address given to the login page */
#define PAGE_MAX 16384

static const char HTML[] = "text/html; charset=utf-8";
static const char PAGE_CSP[] = "default-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'none'";

static bool unreserved(unsigned char ch)
{
	return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' ||
	       ch == '.' || ch == '_' || ch == '~';
}

/* Percent-encodes s into b; keep_slash leaves '/' as it is (a path). */
static int encode(struct buf *b, const char *s, bool keep_slash, struct err *e)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		int rc = unreserved(*p) || (keep_slash && *p == '/') ? buf_append_char(b, (char)*p, e)
								     : buf_printf(b, e, "%%%02X", *p);
		if (rc)
			return rc;
	}
	return 0;
}

static int add_query_to_url(void *ctx, const char *key, const char *value)
{
	struct buf *b = ctx;
	struct err e;

	return buf_append_char(b, b->len && strchr(b->data, '?') ? '&' : '?', &e) || encode(b, key, false, &e) ||
		       buf_append_char(b, '=', &e) || encode(b, value, false, &e)
		   ? -1
		   : 0;
}

static void headers(struct api_call *c)
{
	http_resp_header(c->resp, "Cache-Control", "no-store");
	http_resp_header(c->resp, "Referrer-Policy", "same-origin");
	http_resp_header(c->resp, "X-Content-Type-Options", "nosniff");
}

static void redirect(struct api_call *c, const char *location)
{
	http_resp_bytes(c->resp, 303, HTML, "", 0);
	http_resp_header(c->resp, "Location", location);
	headers(c);
}

/* 303 to the console's login, which comes back here once the user has logged in. */
static int to_login(struct api_call *c)
{
	struct buf url, loc;
	struct err e;
	int rc;

	buf_init(&url, URL_MAX);
	buf_init(&loc, 3 * URL_MAX + 32);
	rc = encode(&url, c->req->path, true, &e) || http_query_each(c->req, add_query_to_url, &url) ||
	     buf_append_str(&loc, "/#/login?from=", &e) || encode(&loc, url.data, false, &e);
	if (rc)
		redirect(c, "/#/login");
	else
		redirect(c, loc.data);
	buf_cleanup(&url);
	buf_cleanup(&loc);
	return 0;
}

static int html_escape(struct buf *b, const char *s, struct err *e)
{
	for (; *s; s++) {
		const char *ent = *s == '&'    ? "&amp;"
				  : *s == '<'  ? "&lt;"
				  : *s == '>'  ? "&gt;"
				  : *s == '"'  ? "&quot;"
				  : *s == '\'' ? "&#39;"
					       : NULL;
		if (ent ? buf_append_str(b, ent, e) : buf_append_char(b, *s, e))
			return -1;
	}
	return 0;
}

/* The error as a page: the status of its code, the message escaped, a way to the console. */
static int error_page(struct api_call *c)
{
	struct buf page;
	struct err e;
	int status;

	if (c->err.code == ERR_INTERNAL || c->err.code <= 0 || c->err.code >= ERR__COUNT) {
		LOG_E("start link: internal error: %s", c->err.msg);
		err_set(&c->err, ERR_INTERNAL, "internal error (see the server log)");
	}
	status = http_status_of(c->err.code);
	buf_init(&page, PAGE_MAX);
	if (buf_printf(&page, &e,
		       "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		       "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		       "<title>Accord: the process was not started</title>\n</head>\n<body>\n"
		       "<h1>The process was not started</h1>\n<p id=\"message\">") ||
	    html_escape(&page, c->err.msg, &e) ||
	    buf_printf(&page, &e,
		       "</p>\n<p>Status %d. Nothing was started.</p>\n<p><a href=\"/\">Open the console</a></p>\n"
		       "</body>\n</html>\n",
		       status)) {
		buf_cleanup(&page);
		return -1;
	}
	http_resp_bytes(c->resp, status, HTML, page.data, page.len);
	http_resp_header(c->resp, "Content-Security-Policy", PAGE_CSP);
	headers(c);
	buf_cleanup(&page);
	return 0;
}

/* The audit entry of a start by link (api_audit_record reads only the doc's audit). */
static const struct api_doc link_audit_doc = {.audit = {"PROCESS", "START", NULL}};
static const struct api_route link_audit = {.doc = &link_audit_doc};

struct query_cfg {
	json_t *cfg;
	struct err *e;
};

static int add_query_to_cfg(void *ctx, const char *key, const char *value)
{
	struct query_cfg *q = ctx;
	json_t *v;
	int rc;

	if (strcmp(key, "activeProfiles") != 0 && strcmp(key, "repoBranchOrTag") != 0 &&
	    strcmp(key, "repoCommitId") != 0 && strncmp(key, "arguments.", 10) != 0)
		return 0;
	if (!(v = json_string(value)))
		return err_set(q->e, ERR_INVALID, "The value of '%.128s' is not UTF-8 text", key);
	if (strncmp(key, "arguments.", 10) == 0)
		rc = value_set_path(q->cfg, key, strlen(key), v, q->e)
			 ? err_set(q->e, ERR_INVALID, "Invalid parameter name '%.128s'", key)
			 : 0;
	else
		rc = json_object_set(q->cfg, key, v) ? err_set(q->e, ERR_INTERNAL, "out of memory") : 0;
	json_decref(v);
	return rc;
}

/* The configuration POST /api/v1/process would get from the same text parts. */
static int start(struct api_call *c, char id[UUID_STR_LEN])
{
	json_t *cfg = json_pack("{s:s,s:s,s:s,s:s}", "org", api_param(c, "org"), "project", api_param(c, "project"),
				"repo", api_param(c, "repo"), "entryPoint", api_param(c, "entryPoint"));
	struct query_cfg q = {cfg, &c->err};
	struct multipart none = {0};
	struct start_req r;
	int rc;

	if (!cfg)
		return api_fail(c, ERR_INVALID, "The organization, project, repository and entry point must be UTF-8");
	if (http_query_each(c->req, add_query_to_cfg, &q)) {
		json_decref(cfg);
		return -1;
	}
	if (start_req_from_cfg(cfg, dt_now_ms(), &r, &c->err))
		return -1;
	rc = api_process_start_req(c, &none, &r, id);
	start_req_cleanup(&r);
	return rc;
}

static int start_link(struct api_call *c)
{
	char id[UUID_STR_LEN], location[64];
	int rc;

	/* Only a GET starts: a HEAD (link checkers) learns nothing and starts nothing. */
	if (strcmp(c->req->method, "GET") != 0) {
		api_fail(c, ERR_METHOD, "Open this link with GET (in a browser)");
		return error_page(c);
	}
	rc = api_authenticate(c);
	if (rc == API_AUTH_DEFER) /* not on a worker: the route is API_SLOW, so this cannot be */
		rc = api_fail(c, ERR_INTERNAL, "the start link ran on the event loop");
	if (rc && c->err.code == ERR_UNAUTH)
		return to_login(c);
	if (rc || start(c, id))
		return error_page(c);
	if (str_fmt(location, sizeof location, "/#/process/%s/wizard", id)) {
		api_fail(c, ERR_INTERNAL, "a process id does not fit the wizard's address");
		return error_page(c);
	}
	redirect(c, location);
	/* Audited here, not by the dispatcher: the login redirect and the error page are
	 * successful answers too, but start nothing. */
	api_audit_note(c, "instanceId", id);
	api_audit_record(c, &link_audit);
	return 0;
}

static const struct api_doc doc_link = {
    .summary = "Start by link (a browser): starts the repository's entry point as the user of the console session "
	       "(or Basic, or an API key) and answers 303 to the console's wizard; without credentials 303 to the "
	       "console's login with the link as return address; errors are an HTML page",
    .params = (const struct api_param_doc[]){DOC_ORG,
					     DOC_PROJECT,
					     {"repo", "string", "the repository's name"},
					     {"entryPoint", "string", "the flow to start"},
					     {"activeProfiles", "string", "comma-separated profiles"},
					     {"repoBranchOrTag", "string", "another branch or tag of the repository"},
					     {"repoCommitId", "string", "a commit of the repository"},
					     {0}},
    .response_type = "text/html",
    .status = 303,
    .errors = "400 403 404 405",
};

const struct api_route api_process_link_routes[] = {
    {"GET", "/api/v1/org/{org}/project/{project}/repo/{repo}/start/{entryPoint}", start_link, API_PUBLIC | API_SLOW,
     &doc_link},
    {0},
};
