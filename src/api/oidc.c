/* /api/service/oidc: the console's single sign-on through an OpenID provider (auth/oidc.h,
 * docs/api.md "OpenID Connect"): auth sends the browser to the provider, callback comes
 * back with a code and opens a console session, logout ends it. */
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "api/doc_schemas.h"
#include "api/routes.h"
#include "auth/authn_oidc.h"
#include "auth/console_session.h"
#include "auth/oidc.h"
#include "auth/oidc_login.h"
#include "base/cookie.h"
#include "base/datetime.h"
#include "base/log.h"
#include "base/str.h"

#define STATE_COOKIE "accord_oidc"

static int need_oidc(struct api_call *c)
{
	if (oidc_enabled())
		return 0;
	return api_fail(c, ERR_NOT_FOUND, "OpenID Connect is not configured on this server (--oidc-discovery-url)");
}

static void redirect(struct api_call *c, const char *location)
{
	http_resp_bytes(c->resp, 302, "text/plain", "", 0);
	http_resp_header(c->resp, "Location", location);
	http_resp_header(c->resp, "Cache-Control", "no-store");
}

static int add_cookie(struct api_call *c, const char *name, const char *value, const char *path, int max_age)
{
	char v[512];

	if (str_fmt(v, sizeof v, "%s=%s; Path=%s; HttpOnly; SameSite=Lax; Max-Age=%d%s", name, value, path, max_age,
		    api_request_tls(c->req) ? "; Secure" : ""))
		return api_fail(c, ERR_INTERNAL, "the cookie %s does not fit its header", name);
	http_resp_header(c->resp, "Set-Cookie", v);
	sodium_memzero(v, sizeof v);
	return 0;
}

/* The value of the state cookie into out ("" when none or too long). */
static void state_cookie(const char *header, char *out, size_t cap)
{
	struct str v;

	out[0] = '\0';
	if (cookie_value(header, STATE_COOKIE, &v) && v.len < cap) {
		memcpy(out, v.p, v.len);
		out[v.len] = '\0';
	}
}

static int auth(struct api_call *c)
{
	unsigned char key[32];
	struct oidc_login l;
	char *url = NULL;
	int rc;

	if ((rc = need_oidc(c)))
		return rc;
	oidc_login_key(c->app->session_key, key);
	oidc_login_new(key, dt_now_ms(), &l);
	sodium_memzero(key, sizeof key);
	if ((rc = oidc_authorize_url(l.state, l.nonce, l.challenge, &url, &c->err)) == 0 &&
	    (rc = add_cookie(c, STATE_COOKIE, l.state, "/api/service/oidc", OIDC_LOGIN_SECONDS)) == 0)
		redirect(c, url);
	free(url);
	sodium_memzero(&l, sizeof l);
	return rc;
}

/* The login of the callback's state, which must be the browser's own (the cookie). */
static int callback_login(struct api_call *c, struct oidc_login *l)
{
	const char *state = http_query(c->req, "state");
	char cookie[OIDC_STATE_LEN];
	unsigned char key[32];
	int rc;

	state_cookie(http_header(c->req, "Cookie"), cookie, sizeof cookie);
	if (!state || !state[0])
		return api_fail(c, ERR_INVALID, "the OIDC callback has no 'state'");
	if (!cookie[0])
		return api_fail(c, ERR_INVALID,
				"the OIDC callback came without this browser's login cookie (%s): begin the login "
				"at /api/service/oidc/auth",
				STATE_COOKIE);
	if (strlen(state) != strlen(cookie) || sodium_memcmp(state, cookie, strlen(cookie)) != 0)
		return api_fail(c, ERR_INVALID, "the OIDC callback's 'state' is not the one of this browser's login");
	oidc_login_key(c->app->session_key, key);
	rc = oidc_login_of(key, state, dt_now_ms(), l, &c->err);
	sodium_memzero(key, sizeof key);
	return rc;
}

/* A session for u: the cookie as the console's login sets it. */
static int open_session(struct api_call *c, const struct user *u)
{
	struct console_login login = {0};
	char old[CONSOLE_TOKEN_LEN], v[CONSOLE_TOKEN_LEN + 128];
	int rc = 0;

	if (console_session_cookie(http_header(c->req, "Cookie"), old))
		rc = console_session_end(c->db, old, &c->err);
	sodium_memzero(old, sizeof old);
	if (rc || (rc = console_session_create(c->db, u->id, c->app->session_idle_ms, &login, &c->err)))
		return rc;
	if (str_fmt(v, sizeof v, CONSOLE_COOKIE "=%s; Path=/; HttpOnly; SameSite=Lax%s", login.token,
		    api_request_tls(c->req) ? "; Secure" : ""))
		rc = api_fail(c, ERR_INTERNAL, "the session cookie does not fit its header");
	else
		http_resp_header(c->resp, "Set-Cookie", v);
	sodium_memzero(v, sizeof v);
	sodium_memzero(&login, sizeof login);
	return rc;
}

static int callback(struct api_call *c)
{
	const char *code = http_query(c->req, "code"), *error = http_query(c->req, "error");
	struct oidc_login l;
	json_t *claims = NULL;
	char *id_token = NULL;
	struct user u;
	int rc;

	if ((rc = need_oidc(c)))
		return rc;
	if (error)
		return api_fail(c, ERR_UNAUTH, "the OIDC provider refused the login: %.200s", error);
	if ((rc = callback_login(c, &l)))
		return rc;
	if (!code || !code[0]) {
		rc = api_fail(c, ERR_INVALID, "the OIDC callback has no 'code'");
		goto out;
	}
	if ((rc = oidc_redeem_code(code, l.verifier, &id_token, &c->err)) ||
	    (rc = oidc_verify(id_token, l.nonce, &claims, &c->err)) || (rc = authn_oidc_user(c->db, claims, &u, &c->err)) ||
	    (rc = open_session(c, &u)) || (rc = add_cookie(c, STATE_COOKIE, "", "/api/service/oidc", 0)))
		goto out;
	str_fmt_cut(c->req->principal, sizeof c->req->principal, "%s", u.username);
	LOG_I("OIDC: %s logged in", u.username);
	redirect(c, oidc_settings.after_login_url);
out:
	if (rc)
		LOG_W("OIDC: a login failed: %s", c->err.msg);
	if (id_token)
		sodium_memzero(id_token, strlen(id_token));
	free(id_token);
	json_decref(claims);
	sodium_memzero(&l, sizeof l);
	return rc;
}

static int logout(struct api_call *c)
{
	char token[CONSOLE_TOKEN_LEN];
	char *url;
	int rc = 0;

	if ((rc = need_oidc(c)))
		return rc;
	if (console_session_cookie(http_header(c->req, "Cookie"), token))
		rc = console_session_end(c->db, token, &c->err);
	sodium_memzero(token, sizeof token);
	if (rc || (rc = add_cookie(c, CONSOLE_COOKIE, "", "/", 0)))
		return rc;
	if (!(url = oidc_logout_url()))
		return api_fail(c, ERR_INTERNAL, "out of memory");
	redirect(c, url);
	free(url);
	return 0;
}

/* Whether SSO is on: the console's login page shows its button by it. */
static int info(struct api_call *c)
{
	return api_reply(c, json_pack("{s:b,s:s}", "enabled", oidc_enabled(), "loginUrl", "/api/service/oidc/auth"));
}

static const struct api_doc doc_info = {
    .summary = "Whether this server offers single sign-on through an OpenID provider (the console's \"Log in with "
	       "SSO\"), and where a login begins",
    .response = "{'type':'object','required':['enabled'],'properties':{'enabled':{'type':'boolean'},"
		"'loginUrl':{'type':'string'}}}",
};
static const struct api_doc doc_auth = {
    .summary = "Log in with SSO: a redirect (302) to the OpenID provider's authorization endpoint (code flow with "
	       "PKCE S256, state and nonce), with the login's cookie accord_oidc",
    .status = 302,
    .errors = "404 503",
};
static const struct api_doc doc_callback = {
    .summary = "Where the OpenID provider sends the browser back: the code is redeemed, the ID token verified, the "
	       "user created or updated, a console session cookie (accord_session) set, and a redirect (302) to "
	       "--oidc-after-login-url",
    .params = (const struct api_param_doc[]){{"code", "string", "the provider's authorization code"},
					     {"state", "string", "the login's state (must equal the accord_oidc cookie)"},
					     {"error", "string", "the provider's error, instead of a code"},
					     {0}},
    .status = 302,
    .errors = "400 404 503",
};
static const struct api_doc doc_logout = {
    .summary = "Log out of an SSO session: ends the session of the cookie, clears it, and redirects (302) to the "
	       "provider's end_session_endpoint (or --oidc-after-logout-url)",
    .status = 302,
    .errors = "404",
};

const struct api_route api_oidc_routes[] = {
    {"GET", "/api/service/oidc/info", info, API_PUBLIC, &doc_info},
    {"GET", "/api/service/oidc/auth", auth, API_PUBLIC | API_SLOW, &doc_auth},
    {"GET", "/api/service/oidc/callback", callback, API_PUBLIC | API_SLOW, &doc_callback},
    {"GET", "/api/service/oidc/logout", logout, API_PUBLIC | API_SLOW, &doc_logout},
    {0},
};
