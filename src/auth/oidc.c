/* The OpenID Connect realm's settings, discovery document, and the provider's login and
 * token endpoints (oidc.h). */
#include "auth/oidc.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sodium.h>

#include "auth/jwt.h"
#include "auth/oidc_discovery.h"
#include "auth/oidc_http.h"
#include "auth/oidc_mapping.h"
#include "base/b64.h"
#include "base/datetime.h"
#include "base/log.h"
#include "base/str.h"

#define WELL_KNOWN "/.well-known/openid-configuration"

struct oidc_settings oidc_settings;

static char *client_secret;
static char discovery_url[OIDC_URL_MAX], issuer_url[OIDC_URL_MAX];
static pthread_mutex_t doc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct oidc_discovery doc;
static bool have_doc;
/* A failed fetch answers the requests of the next OIDC_RETRY_MS with its error at once, so
 * that a provider that is down does not hold every login for --oidc-timeout-ms. */
static int64_t doc_failed_ms;
static struct err doc_failure;

bool oidc_enabled(void)
{
	return oidc_settings.discovery_url && oidc_settings.discovery_url[0];
}

static bool is_http_url(const char *s)
{
	return s && (strncmp(s, "http://", 7) == 0 || strncmp(s, "https://", 8) == 0) && !strpbrk(s, " \t\r\n");
}

static bool has_scope(const char *scopes, const char *want)
{
	size_t n = strlen(want);

	for (const char *p = scopes; (p = strstr(p, want)); p += n)
		if ((p == scopes || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
			return true;
	return false;
}

/* The issuer and the document's URL from --oidc-discovery-url (either of them). */
static int urls(struct err *e)
{
	const char *u = oidc_settings.discovery_url;
	size_t n = strlen(u), k = strlen(WELL_KNOWN);

	if (!is_http_url(u))
		return err_set(e, ERR_INVALID, "--oidc-discovery-url must be an http:// or https:// URL, got '%s'", u);
	if (n >= k && strcmp(u + n - k, WELL_KNOWN) == 0) {
		if (str_fmt(issuer_url, sizeof issuer_url, "%.*s", (int)(n - k), u) ||
		    str_fmt(discovery_url, sizeof discovery_url, "%s", u))
			return err_set(e, ERR_INVALID, "--oidc-discovery-url is too long");
		return 0;
	}
	while (n > 0 && u[n - 1] == '/')
		n--;
	if (str_fmt(issuer_url, sizeof issuer_url, "%s", u) ||
	    str_fmt(discovery_url, sizeof discovery_url, "%.*s" WELL_KNOWN, (int)n, u))
		return err_set(e, ERR_INVALID, "--oidc-discovery-url is too long");
	return 0;
}

static int check_settings(const char *secret, struct err *e)
{
	const struct oidc_settings *s = &oidc_settings;

	if (urls(e))
		return -ERR_INVALID;
	if (!s->client_id || !s->client_id[0])
		return err_set(e, ERR_INVALID, "--oidc-discovery-url needs --oidc-client-id");
	if (!secret || !secret[0])
		return err_set(e, ERR_INVALID,
			       "--oidc-discovery-url needs the client secret in the environment variable "
			       "ACCORD_OIDC_CLIENT_SECRET");
	if (!is_http_url(s->redirect_url))
		return err_set(e, ERR_INVALID,
			       "--oidc-redirect-url must be this server's /api/service/oidc/callback as an absolute "
			       "http(s) URL, got '%s'",
			       s->redirect_url ? s->redirect_url : "");
	if (!s->scopes || !has_scope(s->scopes, "openid"))
		return err_set(e, ERR_INVALID, "--oidc-scopes must include openid, got '%s'", s->scopes ? s->scopes : "");
	if (!s->username_claim || !s->username_claim[0] || !s->groups_claim || !s->groups_claim[0])
		return err_set(e, ERR_INVALID, "--oidc-username-claim and --oidc-groups-claim must not be empty");
	return oidc_mapping_init(s->team_mapping, s->role_mapping, s->groups_claim, e);
}

int oidc_init(struct err *e)
{
	const char *secret = getenv("ACCORD_OIDC_CLIENT_SECRET");

	if (!oidc_enabled())
		return 0;
	if (check_settings(secret, e))
		return -ERR_INVALID;
	if (!(client_secret = strdup(secret)))
		return err_set(e, ERR_INTERNAL, "out of memory");
	/* No child of the server (runner, fetch child, tool) inherits it. */
	unsetenv("ACCORD_OIDC_CLIENT_SECRET");
	LOG_I("OIDC: provider %s, client %s%s", issuer_url, oidc_settings.client_id,
	      oidc_settings.bearer ? ", bearer tokens accepted on the API" : "");
	return 0;
}

void oidc_cleanup(void)
{
	if (client_secret) {
		sodium_memzero(client_secret, strlen(client_secret));
		free(client_secret);
		client_secret = NULL;
	}
	oidc_keys_cleanup();
	oidc_mapping_cleanup();
	oidc_userinfo_cleanup();
}

static int doc_field(json_t *v, const char *key, bool required, char *out, struct err *e)
{
	const char *s = json_string_value(json_object_get(v, key));

	out[0] = '\0';
	if (!s && !required)
		return 0;
	if (!is_http_url(s) || str_fmt(out, OIDC_URL_MAX, "%s", s))
		return err_set(e, ERR_UNAVAILABLE, "OIDC provider unavailable: its discovery document %s has no valid '%s'",
			       discovery_url, key);
	return 0;
}

static int fetch_doc(struct oidc_discovery *d, struct err *e)
{
	json_t *v = NULL;
	long status;
	int rc;

	if ((rc = oidc_http("discovery document", discovery_url, NULL, NULL, oidc_settings.timeout_ms, &status, &v, e)))
		return rc;
	if (status != 200 || !json_is_object(v)) {
		json_decref(v);
		return err_set(e, ERR_UNAVAILABLE, "OIDC provider unavailable: %s answered %ld%s", discovery_url, status,
			       status == 200 ? " without a JSON object" : "");
	}
	if ((rc = doc_field(v, "issuer", true, d->issuer, e)) || (rc = doc_field(v, "authorization_endpoint", true, d->authorize, e)) ||
	    (rc = doc_field(v, "token_endpoint", true, d->token, e)) || (rc = doc_field(v, "jwks_uri", true, d->jwks, e)) ||
	    (rc = doc_field(v, "end_session_endpoint", false, d->end_session, e)) ||
	    (rc = doc_field(v, "userinfo_endpoint", false, d->userinfo, e)))
		goto out;
	/* OpenID Connect Discovery §4.3: the document's issuer is the one it was asked of. */
	if (strcmp(d->issuer, issuer_url) != 0)
		rc = err_set(e, ERR_UNAVAILABLE,
			     "OIDC provider unavailable: its discovery document names the issuer '%s', not '%s' "
			     "(--oidc-discovery-url)",
			     d->issuer, issuer_url);
out:
	json_decref(v);
	return rc;
}

int oidc_discovery_get(struct oidc_discovery *out, struct err *e)
{
	struct oidc_discovery fresh;
	int rc = 0;

	bool fetched = false;

	pthread_mutex_lock(&doc_lock);
	if (!have_doc && doc_failed_ms && dt_now_ms() - doc_failed_ms < OIDC_RETRY_MS) {
		rc = err_set(e, ERR_UNAVAILABLE, "%s", doc_failure.msg);
	} else if (!have_doc) {
		fetched = true;
		if ((rc = fetch_doc(&fresh, e)) == 0) {
			doc = fresh;
			have_doc = true;
		} else {
			doc_failed_ms = dt_now_ms();
			err_set(&doc_failure, ERR_UNAVAILABLE, "%s", e->msg);
		}
	}
	if (rc == 0)
		*out = doc;
	pthread_mutex_unlock(&doc_lock);
	if (rc && fetched)
		LOG_W("OIDC: %s", e->msg);
	return rc;
}

int oidc_authorize_url(const char *state, const char *nonce, const char *challenge, char **out, struct err *e)
{
	struct oidc_discovery d;
	char *id = NULL, *redirect = NULL, *scopes = NULL;
	size_t cap;
	int rc;

	*out = NULL;
	if ((rc = oidc_discovery_get(&d, e)))
		return rc;
	id = oidc_http_escape(oidc_settings.client_id);
	redirect = oidc_http_escape(oidc_settings.redirect_url);
	scopes = oidc_http_escape(oidc_settings.scopes);
	cap = strlen(d.authorize) + (id ? strlen(id) : 0) + (redirect ? strlen(redirect) : 0) +
	      (scopes ? strlen(scopes) : 0) + strlen(state) + strlen(nonce) + strlen(challenge) + 256;
	if (!id || !redirect || !scopes || !(*out = malloc(cap)) ||
	    str_fmt(*out, cap,
		    "%s%cresponse_type=code&client_id=%s&redirect_uri=%s&scope=%s&state=%s&nonce=%s&code_challenge=%s"
		    "&code_challenge_method=S256",
		    d.authorize, strchr(d.authorize, '?') ? '&' : '?', id, redirect, scopes, state, nonce, challenge)) {
		free(*out);
		*out = NULL;
		rc = err_set(e, ERR_INTERNAL, "out of memory");
	}
	free(id);
	free(redirect);
	free(scopes);
	return rc;
}

/* "Authorization: Basic b64(urlenc(id):urlenc(secret))" (RFC 6749 §2.3.1): NEW, wiped by the caller. */
static char *client_auth(void)
{
	char *id = oidc_http_escape(oidc_settings.client_id), *secret = oidc_http_escape(client_secret);
	char *pair = NULL, *b64 = NULL, *line = NULL;
	size_t n = id && secret ? strlen(id) + strlen(secret) + 2 : 0;

	if (n && (pair = malloc(n)) && str_fmt(pair, n, "%s:%s", id, secret) == 0 &&
	    (b64 = b64_encode(pair, strlen(pair), B64_STD)) && (line = malloc(strlen(b64) + 32)))
		str_fmt_cut(line, strlen(b64) + 32, "Authorization: Basic %s", b64);
	if (secret)
		sodium_memzero(secret, strlen(secret));
	if (pair)
		sodium_memzero(pair, strlen(pair));
	if (b64)
		sodium_memzero(b64, strlen(b64));
	free(id);
	free(secret);
	free(pair);
	free(b64);
	return line;
}

static int refused(json_t *v, long status, struct err *e)
{
	const char *error = json_string_value(json_object_get(v, "error"));
	const char *desc = json_string_value(json_object_get(v, "error_description"));

	if (status >= 500 || status == 0)
		return err_set(e, ERR_UNAVAILABLE, "OIDC provider unavailable: its token endpoint answered %ld", status);
	return err_set(e, ERR_UNAUTH, "the OIDC provider refused the login code: %s%s%s", error ? error : "no reason given",
		       desc ? ": " : "", desc ? desc : "");
}

int oidc_redeem_code(const char *code, const char *verifier, char **id_token, struct err *e)
{
	struct oidc_discovery d;
	char *c = NULL, *redirect = NULL, *form = NULL, *auth = NULL;
	const char *tok;
	json_t *v = NULL;
	long status;
	size_t cap;
	int rc;

	*id_token = NULL;
	if ((rc = oidc_discovery_get(&d, e)))
		return rc;
	c = oidc_http_escape(code);
	redirect = oidc_http_escape(oidc_settings.redirect_url);
	auth = client_auth();
	cap = (c ? strlen(c) : 0) + (redirect ? strlen(redirect) : 0) + strlen(verifier) + 128;
	if (!c || !redirect || !auth || !(form = malloc(cap)) ||
	    str_fmt(form, cap, "grant_type=authorization_code&code=%s&redirect_uri=%s&code_verifier=%s", c, redirect,
		    verifier)) {
		rc = err_set(e, ERR_INTERNAL, "out of memory");
		goto out;
	}
	if ((rc = oidc_http("token endpoint", d.token, form, auth, oidc_settings.timeout_ms, &status, &v, e)))
		goto out;
	tok = json_string_value(json_object_get(v, "id_token"));
	if (status != 200 || !tok) {
		rc = status == 200 ? err_set(e, ERR_UNAUTH, "the OIDC provider's token answer has no id_token")
				   : refused(v, status, e);
		goto out;
	}
	if (!(*id_token = strdup(tok)))
		rc = err_set(e, ERR_INTERNAL, "out of memory");
out:
	if (auth)
		sodium_memzero(auth, strlen(auth));
	free(auth);
	free(c);
	free(redirect);
	free(form);
	json_decref(v);
	return rc;
}

/* --oidc-after-logout-url as an absolute URL: a path is taken on the origin of
 * --oidc-redirect-url (the provider needs an absolute one).  NEW; NULL when it does not fit. */
static char *after_logout_absolute(void)
{
	const char *back = oidc_settings.after_logout_url, *r = oidc_settings.redirect_url;
	const char *host = strstr(r, "://"), *path = host ? strchr(host + 3, '/') : NULL;
	size_t origin = path ? (size_t)(path - r) : strlen(r), cap = origin + strlen(back) + 1;
	char *out;

	if (is_http_url(back) || back[0] != '/')
		return strdup(back);
	if ((out = malloc(cap)) && str_fmt(out, cap, "%.*s%s", (int)origin, r, back)) {
		free(out);
		out = NULL;
	}
	return out;
}

char *oidc_logout_url(void)
{
	struct oidc_discovery d;
	struct err e;
	char *abs, *back = NULL, *id = NULL, *out = NULL;
	size_t cap;

	if (oidc_discovery_get(&d, &e) || !d.end_session[0] || !(abs = after_logout_absolute()))
		return strdup(oidc_settings.after_logout_url);
	back = oidc_http_escape(abs);
	id = oidc_http_escape(oidc_settings.client_id);
	cap = strlen(d.end_session) + (back ? strlen(back) : 0) + (id ? strlen(id) : 0) + 64;
	if (back && id && (out = malloc(cap)) &&
	    str_fmt(out, cap, "%s%cpost_logout_redirect_uri=%s&client_id=%s", d.end_session,
		    strchr(d.end_session, '?') ? '&' : '?', back, id)) {
		free(out);
		out = NULL;
	}
	free(abs);
	free(back);
	free(id);
	return out;
}
