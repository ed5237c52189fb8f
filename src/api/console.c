/* /api/service/console: the web console's login (whoami with X-Concord-EnableSession) and
 * logout (reference §3.4, docs/api.md "Console sessions"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "api/doc_schemas.h"
#include "api/orgs.h"
#include "api/routes.h"
#include "auth/console_session.h"
#include "base/jsonx.h"
#include "base/limits.h"
#include "base/str.h"

/* Set-Cookie for token ("": clears the cookie). */
static int set_cookie(struct api_call *c, const char *token)
{
	char v[CONSOLE_TOKEN_LEN + 128];
	int rc = str_fmt(v, sizeof v, CONSOLE_COOKIE "=%s; Path=/; HttpOnly; SameSite=Lax%s%s", token,
			 *token ? "" : "; Max-Age=0", api_request_tls(c->req) ? "; Secure" : "");

	if (rc == 0)
		http_resp_header(c->resp, "Set-Cookie", v);
	sodium_memzero(v, sizeof v);
	return rc ? api_fail(c, ERR_INTERNAL, "the session cookie does not fit its header") : 0;
}

/* Basic credentials of an LDAP user were checked by the directory (auth/authn_ldap.h). */
static const char *realm_of(const struct principal *p)
{
	switch (p->method) {
	case AUTH_BASIC:
		return strcmp(p->user.type, "LDAP") == 0 ? "ldap" : "local";
	case AUTH_APIKEY:
		return "apikey";
	case AUTH_CONSOLE:
		return "session";
	case AUTH_OIDC:
		return "oidc";
	default:
		return "sessionkey";
	}
}

/* The orgs the user is in (Concord's whoami lists the user's own, not every public one). */
static int user_orgs(struct api_call *c, json_t *v)
{
	struct org_query q = {.user_id = c->who.user.id, .limit = limits.list_max};
	struct org *orgs = NULL;
	size_t n = 0;
	json_t *arr;

	if (store_org_list(c->db, &q, &orgs, &n, &c->err))
		return -1;
	arr = json_array();
	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, org_json(&orgs[i]));
	free(orgs);
	json_object_set_new(v, "orgs", arr);
	return 0;
}

/* A login replaces the session the browser may still hold. */
static int end_old_session(struct api_call *c)
{
	char token[CONSOLE_TOKEN_LEN];
	int rc = 0;

	if (console_session_cookie(http_header(c->req, "Cookie"), token))
		rc = console_session_end(c->db, token, &c->err);
	sodium_memzero(token, sizeof token);
	return rc;
}

/* The user's global roles by Concord's names (the console offers admin pages from them). */
static void set_roles(json_t *v, unsigned roles)
{
	char text[128];
	json_t *arr;

	user_roles_format(roles, text, sizeof text);
	arr = json_loads(text, 0, NULL);
	json_object_set_new(v, "roles", arr ? arr : json_array());
}

static int whoami(struct api_call *c)
{
	const char *enable = http_header(c->req, "X-Concord-EnableSession");
	const struct user *u = &c->who.user;
	struct console_login login = {0};
	const char *csrf = c->who.method == AUTH_CONSOLE ? c->who.csrf_token : NULL;
	json_t *v;
	int rc = 0;

	/* A process's own session token never opens a console session. */
	if (enable && cstr_ieq(enable, "true") && (c->who.method == AUTH_BASIC || c->who.method == AUTH_APIKEY)) {
		/* A session has the user's full rights: a limited key must not open one. */
		if (c->who.scopes.n || c->who.rate_count)
			return api_fail(c, ERR_FORBIDDEN,
					"An API key with scopes or a rate limit cannot open a console "
					"session: use a key without them, or log in with a password");
		if ((rc = end_old_session(c)) ||
		    (rc = console_session_create(c->db, u->id, c->app->session_idle_ms, &login, &c->err)))
			goto out;
		csrf = login.csrf;
	}
	v = json_pack("{s:s,s:s}", "realm", realm_of(&c->who), "username", u->username);
	jsonx_set_opt_str(v, "userDomain", u->domain[0] ? u->domain : NULL);
	jsonx_set_opt_str(v, "displayName", u->display_name[0] ? u->display_name : NULL);
	set_roles(v, u->roles);
	if ((rc = user_orgs(c, v))) {
		json_decref(v);
		goto out;
	}
	jsonx_set_opt_str(v, "csrfToken", csrf);
	rc = login.token[0] ? set_cookie(c, login.token) : 0;
	if (rc == 0)
		rc = api_reply(c, v);
	else
		json_decref(v);
out:
	sodium_memzero(&login, sizeof login);
	return rc;
}

/* Public, as in Concord: ends the session of the cookie, if any, and clears the cookie. */
static int logout(struct api_call *c)
{
	int rc = end_old_session(c);

	if (rc)
		return rc;
	if ((rc = set_cookie(c, "")))
		return rc;
	http_resp_bytes(c->resp, 204, "", NULL, 0);
	return 0;
}

static const struct api_doc doc_whoami = {
    .summary = "Who am I; with X-Concord-EnableSession: true and Basic or an API key, log in: a session cookie "
	       "(accord_session, HttpOnly, SameSite=Lax) and its CSRF token",
    .response = "{'type':'object','required':['realm','username'],'properties':{'realm':{'enum':['local','ldap','apikey',"
		"'session','sessionkey','oidc']},'username':{'type':'string'},'userDomain':{'type':'string'},"
		"'displayName':{'type':'string'},'roles':{'type':'array','items':{'type':'string'}},'orgs':{'type':'array','items':{'type':'object'}},"
		"'csrfToken':{'type':'string','description':'the value for X-Accord-CSRF'}}}",
    .errors = "403",
};
static const struct api_doc doc_logout = {
    .summary = "Log out: ends the session of the request's cookie on the server and clears the cookie",
    .status = 204,
};

const struct api_route api_console_routes[] = {
    {"GET", "/api/service/console/whoami", whoami, API_SLOW | API_NO_CHALLENGE, &doc_whoami},
    {"POST", "/api/service/console/logout", logout, API_PUBLIC, &doc_logout},
    {0},
};
