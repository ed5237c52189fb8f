/* Who makes a request (api.h api_authenticate): credentials from the headers, else the
 * console session cookie with its CSRF rule (docs/security.md "Console sessions"). */
#include <stdio.h>
#include <string.h>

#include <sodium.h>

#include "api/api.h"
#include "api/route_scopes.h"
#include "auth/authn.h"
#include "auth/console_session.h"
#include "auth/rbac.h"
#include "base/str.h"

/* The first element of a comma-separated header value, trimmed. */
static struct str first_item(const char *v)
{
	struct str s = str_from(v);
	const char *comma = s.len ? memchr(s.p, ',', s.len) : NULL;

	if (comma)
		s.len = (size_t)(comma - s.p);
	return str_trim(s);
}

bool api_request_tls(const struct http_request *req)
{
	const char *xfp = http_header(req, "X-Forwarded-Proto"), *fwd = http_header(req, "Forwarded");
	struct str f;

	if (xfp)
		return str_ieq_cstr(first_item(xfp), "https");
	if (!fwd)
		return false;
	f = first_item(fwd);
	while (f.len) {
		const char *semi = memchr(f.p, ';', f.len);
		size_t n = semi ? (size_t)(semi - f.p) : f.len;

		if (str_ieq_cstr(str_trim((struct str){f.p, n}), "proto=https"))
			return true;
		f.p += n + (semi != NULL);
		f.len -= n + (semi != NULL);
	}
	return false;
}

/* Origin equal to this server's own: the scheme of the request and its Host. */
static bool same_origin(const struct http_request *req)
{
	const char *origin = http_header(req, "Origin"), *host = http_header(req, "Host");
	char own[512];
	int n;

	if (!origin || !host || !*host)
		return false;
	n = snprintf(own, sizeof own, "%s://%s", api_request_tls(req) ? "https" : "http", host);
	return n > 0 && (size_t)n < sizeof own && cstr_ieq(origin, own);
}

static int by_cookie(struct api_call *c, const char *token)
{
	int rc = console_session_auth(c->db, token, c->app->session_idle_ms, c->req->on_worker, &c->who, &c->err);

	if (rc == CONSOLE_SESSION_REFRESH)
		return API_AUTH_DEFER;
	if (rc || !c->changes)
		return rc;
	if (console_session_csrf_ok(&c->who, http_header(c->req, "X-Accord-CSRF")) || same_origin(c->req))
		return 0;
	return api_fail(c, ERR_FORBIDDEN,
			"CSRF check failed: a change made with the console's session cookie needs the header "
			"X-Accord-CSRF with the session's csrfToken (from whoami), or an Origin of this server");
}

int api_authenticate(struct api_call *c)
{
	const char *authorization = http_header(c->req, "Authorization");
	const char *session = http_header(c->req, "X-Concord-SessionToken");
	char token[CONSOLE_TOKEN_LEN] = "";
	int rc;

	if (!authorization && session)
		rc = authn_session(c->db, session, &c->who, &c->err);
	else if (!authorization && console_session_cookie(http_header(c->req, "Cookie"), token))
		rc = by_cookie(c, token);
	else
		rc = authn_header(c->db, authorization, &c->who, &c->err);
	sodium_memzero(token, sizeof token);
	if (rc == 0)
		rc = rbac_grants_load(c->db, &c->who, &c->err);
	if (rc == 0 && c->route)
		rc = api_route_scope_check(c, c->route);
	if (rc == 0 || rc == -ERR_FORBIDDEN || rc == -ERR_TOO_MANY) /* refused, still says who it was */
		str_fmt_cut(c->req->principal, sizeof c->req->principal, "%s", c->who.user.username); /* the access log's */
	return rc;
}
