#ifndef ACCORD_AUTH_OIDC_H
#define ACCORD_AUTH_OIDC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"

/* The OpenID Connect realm (docs/security.md "Realms"): the console's "Log in with SSO"
 * (authorization code flow with PKCE S256, api/oidc.c) and, with --oidc-bearer, API calls
 * with a provider's token.  The provider is found through its discovery document
 * (--oidc-discovery-url, fetched on first need and kept; fetched again while it could not
 * be); its keys (jwks_uri) are kept too, and a token signed with a key id they lack makes
 * one more fetch, at most every --oidc-jwks-refetch (key rotation).  The client secret comes
 * from ACCORD_OIDC_CLIENT_SECRET only.  libcurl and libcrypto are loaded on the first
 * need, never at start. */
struct oidc_settings {
	char *discovery_url; /* the issuer, or its /.well-known/openid-configuration; "" or NULL: no OIDC */
	char *client_id;
	char *redirect_url;  /* this server's …/api/service/oidc/callback as the provider knows it */
	char *scopes;	     /* space-separated, must hold openid */
	char *username_claim; /* the claim that is the username (lower-cased) */
	char *groups_claim;   /* the claim with the user's groups (array of strings, or one string) */
	char *team_mapping;   /* JSON: the teams given by claims (auth/oidc_mapping.h) */
	char *role_mapping;   /* JSON or ROLE=PATTERN[,…]: the global roles given by claims */
	char *after_login_url;
	char *after_logout_url;
	bool bearer;	      /* API calls with Authorization: Bearer <a token of the provider> */
	unsigned timeout_ms;
	int64_t leeway_s;     /* clock skew allowed on exp, iat and nbf */
	int64_t jwks_refetch_s;
	int64_t userinfo_cache_s; /* how long an opaque token's userinfo answer is kept */
};

extern struct oidc_settings oidc_settings;

#define OIDC_OPTS                                                                                                      \
	{"oidc-discovery-url", CONFIG_STRING, NULL, 0, 0, &oidc_settings.discovery_url,                               \
	 "OpenID Connect provider: its issuer URL or its /.well-known/openid-configuration; unset: no OIDC realm"},    \
	    {"oidc-client-id", CONFIG_STRING, NULL, 0, 0, &oidc_settings.client_id,                                   \
	     "client id of this server at the provider (its secret: ACCORD_OIDC_CLIENT_SECRET, environment only)"},    \
	    {"oidc-redirect-url", CONFIG_STRING, NULL, 0, 0, &oidc_settings.redirect_url,                             \
	     "this server's /api/service/oidc/callback as registered at the provider (absolute http(s) URL)"},         \
	    {"oidc-scopes", CONFIG_STRING, "openid profile email groups", 0, 0, &oidc_settings.scopes,               \
	     "scopes asked for at login, space-separated (must include openid)"},                                       \
	    {"oidc-username-claim", CONFIG_STRING, "email", 0, 0, &oidc_settings.username_claim,                      \
	     "claim whose value (lower-cased) is the username, as Concord's plugin takes the email"},                  \
	    {"oidc-groups-claim", CONFIG_STRING, "groups", 0, 0, &oidc_settings.groups_claim,                         \
	     "claim that lists the user's groups (linked to teams like LDAP groups: PUT …/team/{team}/ldapGroups)"},  \
	    {"oidc-team-mapping", CONFIG_STRING, NULL, 0, 0, &oidc_settings.team_mapping,                             \
	     "teams given by claims, as Concord's oidc.teamMapping in JSON: {\"<team id>\": {\"source\": "             \
	     "[\"groups.dev.*\"], \"role\": \"MAINTAINER\"}}; each login adds or removes the user in every team named"}, \
	    {"oidc-role-mapping", CONFIG_STRING, NULL, 0, 0, &oidc_settings.role_mapping,                             \
	     "global roles given by claims, as Concord's oidc.roleMapping in JSON ({\"concordAdmin\": {\"source\": "  \
	     "[\"groups.admins\"]}}) or ROLE=PATTERN[,…] on the groups claim; each login sets or clears every role "  \
	     "named here"},                                                                                             \
	    {"oidc-after-login-url", CONFIG_STRING, "/", 0, 0, &oidc_settings.after_login_url,                        \
	     "where the browser goes after an SSO login"},                                                              \
	    {"oidc-after-logout-url", CONFIG_STRING, "/", 0, 0, &oidc_settings.after_logout_url,                      \
	     "where the browser goes after GET /api/service/oidc/logout (through the provider's end_session_endpoint " \
	     "when it has one)"},                                                                                       \
	    {"oidc-bearer", CONFIG_BOOL, "false", 0, 0, &oidc_settings.bearer,                                        \
	     "accept Authorization: Bearer <the provider's JWT for this client, or an opaque access token its "        \
	     "userinfo endpoint accepts> on the API"},                                                                  \
	    {"oidc-userinfo-cache", CONFIG_DURATION, "60", 0, 3600, &oidc_settings.userinfo_cache_s,                  \
	     "how long the provider's userinfo answer for an opaque bearer token (or its refusal) is kept"},          \
	    {"oidc-timeout-ms", CONFIG_UINT, "5000", 100, 600000, &oidc_settings.timeout_ms,                          \
	     "connect and answer timeout of the provider"},                                                             \
	    {"oidc-leeway", CONFIG_DURATION, "60", 0, 600, &oidc_settings.leeway_s,                                   \
	     "clock skew allowed on a token's exp, iat and nbf"},                                                       \
	{                                                                                                              \
		"oidc-jwks-refetch", CONFIG_DURATION, "10", 0, 86400, &oidc_settings.jwks_refetch_s,                   \
		    "a token signed by an unknown key id fetches the provider's keys again at most this often"          \
	}

/* Checks the settings once at start-up (ERR_INVALID naming the flag: a URL that is not
 * http(s), no client id, no secret, no redirect URL, scopes without openid, a bad role
 * team or role mapping: auth/oidc_mapping.h) and takes the secret out of the environment.  Nothing is fetched.  Not
 * thread-safe: call before serving. */
int oidc_init(struct err *e) WUR;
void oidc_cleanup(void);
bool oidc_enabled(void);

/* The provider's authorization URL for a login: *out NEW.  ERR_UNAVAILABLE "OIDC provider
 * unavailable: …" when the discovery document cannot be had. */
int oidc_authorize_url(const char *state, const char *nonce, const char *challenge, char **out, struct err *e) WUR;

/* Redeems an authorization code at the token endpoint (client_secret_basic, with the PKCE
 * verifier): *id_token NEW.  ERR_UNAVAILABLE when the provider cannot be reached or answers
 * 5xx, ERR_UNAUTH when it refuses the code (its error in the message). */
int oidc_redeem_code(const char *code, const char *verifier, char **id_token, struct err *e) WUR;

/* Verifies a token of the provider: RS256 signature by one of its keys (an unknown key id
 * refetches them, rate-limited), iss, aud (holds the client id; azp, when there are
 * several), exp, nbf and iat within the leeway, and nonce equal to the given one (NULL: not
 * checked).  *claims NEW.  ERR_UNAUTH saying which check failed, ERR_UNAVAILABLE when
 * the provider's keys cannot be had.  Thread-safe. */
int oidc_verify(const char *token, const char *nonce, json_t **claims, struct err *e) WUR;

/* The claims of an opaque access token (not a JWT) from the provider's userinfo endpoint
 * (OpenID Connect Core §5.3), kept --oidc-userinfo-cache seconds by a keyed digest of the
 * token (at most OIDC_USERINFO_SLOTS tokens; a refusal is kept as long, so the same bad
 * token does not ask the provider again).  *claims NEW.  ERR_UNAUTH when the provider
 * refuses the token or answers without "sub", ERR_UNAVAILABLE when it cannot be reached,
 * answers 5xx or has no userinfo_endpoint.  Thread-safe. */
#define OIDC_USERINFO_SLOTS 512
int oidc_userinfo(const char *token, json_t **claims, struct err *e) WUR;

/* Where a logout sends the browser: the provider's end_session_endpoint (with
 * post_logout_redirect_uri and client_id) when it has one, else --oidc-after-logout-url.
 * *out NEW; NULL only when out of memory. */
char *oidc_logout_url(void);

#endif
