/* The console: web/ embedded at build time (api/web_assets.h), served at /, /assets/<hash>/…
 * and /favicon.ico.  Public and answered on the event loop (no store access). */
#include "api/web.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "api/routes.h"
#include "api/web_assets.h"
#include "http/negotiate.h"
#include "base/str.h"

#define CSP                                                                                                            \
	"default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "          \
	"object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'"

void web_headers(struct http_response *w)
{
	http_resp_header(w, "Content-Security-Policy", CSP);
	http_resp_header(w, "X-Content-Type-Options", "nosniff");
	http_resp_header(w, "Referrer-Policy", "same-origin");
}

static const struct web_asset *find(const char *path)
{
	for (const struct web_asset *a = web_assets; a->path; a++)
		if (strcmp(a->path, path) == 0)
			return a;
	return NULL;
}

/* Answers one embedded file: 304 when the client has it, gzipped when it may be. */
static int serve(struct api_call *c, const struct web_asset *a, const char *cache_control)
{
	const char *inm = http_header(c->req, "If-None-Match");
	bool gz = a->gz && http_accepts_gzip(http_header(c->req, "Accept-Encoding"));
	char etag[40];

	/* One ETag per representation: the gzipped one ends in -gz. */
	if (str_fmt(etag, sizeof etag, "%.*s%s\"", (int)strlen(a->etag) - 1, a->etag, gz ? "-gz" : ""))
		return api_fail(c, ERR_INTERNAL, "the ETag of %s does not fit", a->path);
	web_headers(c->resp);
	http_resp_header(c->resp, "Cache-Control", cache_control);
	http_resp_header(c->resp, "ETag", etag);
	if (a->gz)
		http_resp_header(c->resp, "Vary", "Accept-Encoding");
	if (inm && (strstr(inm, etag) || strcmp(inm, "*") == 0)) {
		http_resp_static(c->resp, 304, NULL, "", 0);
		return 0;
	}
	if (gz) {
		http_resp_header(c->resp, "Content-Encoding", "gzip");
		http_resp_static(c->resp, 200, a->content_type, a->gz, a->gz_len);
	} else {
		http_resp_static(c->resp, 200, a->content_type, a->data, a->len);
	}
	return 0;
}

static int not_found(struct api_call *c, const char *what)
{
	web_headers(c->resp);
	http_resp_header(c->resp, "Cache-Control", "no-cache");
	return api_fail(c, ERR_NOT_FOUND, "%s", what);
}

static int index_page(struct api_call *c)
{
	const struct web_asset *a = find("index.html");

	return a ? serve(c, a, "no-cache") : not_found(c, "the console was built without web/index.html");
}

static int favicon(struct api_call *c)
{
	const struct web_asset *a = find("favicon.svg");

	return a ? serve(c, a, "public, max-age=86400") : not_found(c, "no favicon");
}

/* /assets/<bundle hash>/<path>: a hash of another build is a 404, never a stale file. */
static int asset(struct api_call *c)
{
	const struct web_asset *a;

	if (strcmp(api_param(c, "hash"), web_bundle_hash) != 0)
		return not_found(c, "no such console build (the page is older or newer than this server: reload it)");
	a = find(api_param(c, "path"));
	if (!a || strcmp(a->path, "index.html") == 0)
		return not_found(c, "no such console file");
	return serve(c, a, "public, max-age=31536000, immutable");
}

static const struct api_doc doc_index = {
    .summary = "The web console (its page; not an API)",
    .response = "{'type':'string'}",
    .response_type = "text/html",
};
static const struct api_doc doc_favicon = {
    .summary = "The console's icon",
    .response = "{'type':'string','format':'binary'}",
    .response_type = "image/svg+xml",
    .errors = "404",
};
static const struct api_doc doc_asset = {
    .summary = "A file of the console (scripts, styles), cacheable for ever under its bundle hash",
    .params = (const struct api_param_doc[]){{"hash", "string", "the bundle hash of this build"},
					     {"path", "string", "the file's path under web/"},
					     {0}},
    .response = "{'type':'string','format':'binary'}",
    .response_type = "application/javascript text/css image/svg+xml",
    .errors = "404",
};

const struct api_route api_web_routes[] = {
    {"GET", "/", index_page, API_PUBLIC, &doc_index},
    {"GET", "/favicon.ico", favicon, API_PUBLIC, &doc_favicon},
    {"GET", "/assets/{hash}/{path*}", asset, API_PUBLIC, &doc_asset},
    {0},
};
