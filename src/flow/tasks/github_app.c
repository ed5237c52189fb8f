/* The `github` task's credentials (github_app.h): access tokens, and GitHub App
 * installation tokens got with an RS256 JWT. */
#include "flow/tasks/github_app.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sodium.h>

#include "base/b64.h"
#include "base/jsonx.h"
#include "base/rs256.h"
#include "base/str.h"
#include "flow/tasks/github_client.h"
#include "flow/vm_internal.h"

#define JWT_LIFETIME_S 600
#define JWT_SKEW_S 60 /* GitHub's advice: issued a minute early, for clock drift */

static int oom(struct err *e)
{
	return err_set(e, ERR_INTERNAL, "out of memory");
}

/* The RSASSA-PKCS1-v1_5 SHA-256 signature of data with the PEM key, base64url (NEW). */
static char *rs256(const char *pem, const char *data, struct err *e)
{
	unsigned char *sig = NULL;
	size_t len = 0;
	char *out = NULL;
	struct err why;

	switch (rs256_sign(pem, data, strlen(data), &sig, &len, &why)) {
	case 0:
		if (!(out = b64_encode(sig, len, B64_URL_NOPAD)))
			oom(e);
		break;
	case -ERR_UNAVAILABLE:
		err_set(e, ERR_UNAVAILABLE, "github: GitHub App authentication needs libcrypto: %s", why.msg);
		break;
	case -ERR_INVALID:
		err_set(e, ERR_INVALID, "github: the GitHub App's privateKey is not an RSA private key in PEM format");
		break;
	default:
		err_set(e, ERR_INTERNAL, "github: signing the GitHub App's JWT failed");
	}
	free(sig);
	return out;
}

static char *b64url_json(json_t *v)
{
	char *text = v ? json_dumps(v, JSON_COMPACT) : NULL, *out = text ? b64_encode(text, strlen(text), B64_URL_NOPAD) : NULL;
	free(text);
	json_decref(v);
	return out;
}

/* The App's JWT: {"alg":"RS256","typ":"JWT"}.{iat, exp, iss}.signature (NEW). */
static char *app_jwt(const char *client_id, const char *pem, struct err *e)
{
	long long now = (long long)time(NULL);
	char *head = b64url_json(json_pack("{s:s, s:s}", "alg", "RS256", "typ", "JWT"));
	char *claims = b64url_json(json_pack("{s:I, s:I, s:s}", "iat", (json_int_t)(now - JWT_SKEW_S), "exp",
					     (json_int_t)(now - JWT_SKEW_S + JWT_LIFETIME_S), "iss", client_id));
	char *signing = NULL, *sig = NULL, *jwt = NULL;

	if (!head || !claims || asprintf(&signing, "%s.%s", head, claims) < 0) {
		signing = NULL;
		oom(e);
	} else if ((sig = rs256(pem, signing, e)) && asprintf(&jwt, "%s.%s", signing, sig) < 0) {
		jwt = NULL;
		oom(e);
	}
	free(head);
	free(claims);
	free(signing);
	free(sig);
	return jwt;
}

/* GET <apiUrl>/repos/<org>/<repo>/installation, then POST its access_tokens_url. */
static int installation_token(struct task_ctx *c, const char *api_url, const char *org, const char *repo,
			      const char *jwt, char **token, struct err *e)
{
	struct gh g;
	json_t *inst = NULL, *tok = NULL;
	char *o = gh_escape(org), *r = gh_escape(repo), path[1200];
	const char *url;
	int rc = -1;

	if (!o || !r) {
		oom(e);
		goto out;
	}
	if (gh_init(&g, c, api_url, jwt, true, e) < 0)
		goto done;
	str_fmt_cut(path, sizeof path, "/repos/%s/%s/installation", o, r);
	if (gh_call(&g, "GET", path, NULL, &inst, NULL, e) < 0) {
		err_prefix(e, "Error retrieving app installation");
		goto done;
	}
	url = json_string_value(json_object_get(inst, "access_tokens_url"));
	if (!url || strncmp(url, g.base, strlen(g.base)) != 0 || url[strlen(g.base)] != '/') {
		err_set(e, ERR_INVALID, "github: the App installation's access_tokens_url is not below apiUrl '%s'",
			g.base);
		goto done;
	}
	if (gh_call(&g, "POST", url + strlen(g.base), NULL, &tok, NULL, e) < 0) {
		err_prefix(e, "Error generating app access token");
		goto done;
	}
	if (!json_is_string(json_object_get(tok, "token"))) {
		err_set(e, ERR_INVALID, "Error generating app access token: the answer has no token");
		goto done;
	}
	*token = strdup(json_string_value(json_object_get(tok, "token")));
	rc = *token ? 0 : oom(e);
done:
	gh_cleanup(&g);
out:
	json_decref(inst);
	json_decref(tok);
	free(o);
	free(r);
	return rc;
}

static int app_token(struct task_ctx *c, json_t *app, const char *api_url, const char *org, const char *repo,
		     char **token, struct err *e)
{
	const char *id = json_string_value(json_object_get(app, "clientId"));
	const char *pem = json_string_value(json_object_get(app, "privateKey"));
	char *jwt;
	int rc;

	if (!id || !pem)
		return err_set(e, ERR_INVALID, "github: a GitHub App installation needs 'clientId' and 'privateKey'");
	if (!(jwt = app_jwt(id, pem, e)))
		return -1;
	if (c->h->ops->sensitive)
		c->h->ops->sensitive(c->h->ctx, jwt, true);
	rc = installation_token(c, api_url ? api_url : "https://api.github.com", org, repo, jwt, token, e);
	sodium_memzero(jwt, strlen(jwt));
	free(jwt);
	if (rc < 0)
		err_prefix(e, "Failed to generate JWT token");
	return rc;
}

/* appInstallationSecret {org, name}: the JSON of a data secret, exported as the initiator. */
static int app_secret(struct task_ctx *c, json_t *ref, const char *api_url, const char *org, const char *repo,
		      char **token, struct err *e)
{
	json_t *name = json_object_get(ref, "name"), *sorg = json_object_get(ref, "org"), *args, *out = NULL, *app;
	int rc;

	if (!json_is_string(name))
		return err_set(e, ERR_INVALID, "github: auth.appInstallationSecret needs 'org' and 'name'");
	args = json_pack("[O, O, n]", json_is_string(sorg) ? sorg : json_null(), name);
	rc = args ? c->h->ops->server_task(c->h->ctx, "crypto", "exportAsString", args, &out, NULL, e) : oom(e);
	json_decref(args);
	if (rc < 0)
		return -1;
	app = json_is_string(out) ? json_loads(json_string_value(out), 0, NULL) : NULL;
	json_decref(out);
	if (!json_is_object(app)) {
		json_decref(app);
		return err_set(e, ERR_INVALID, "github: the secret '%s' does not hold the App installation's JSON",
			       json_string_value(name));
	}
	rc = app_token(c, app, api_url, org, repo, token, e);
	json_decref(app);
	return rc;
}

static int access_token(struct task_ctx *c, json_t *t, char **token, struct err *e)
{
	if (json_is_object(t))
		t = json_object_get(t, "token");
	if (!json_is_string(t) || !json_string_length(t))
		return err_set(e, ERR_INVALID, "github: auth.accessToken must be a token (a string)");
	if (!(*token = strdup(json_string_value(t))))
		return oom(e);
	if (c->h->ops->sensitive)
		c->h->ops->sensitive(c->h->ctx, *token, true);
	return 0;
}

int gh_auth_token(struct task_ctx *c, json_t *in, const char *api_url, const char *org, const char *repo,
		  char **token, struct err *e)
{
	json_t *auth = json_object_get(in, "auth"), *v;
	const char *k;
	char keys[300] = "";

	*token = NULL;
	if (!auth || json_is_null(auth)) {
		if (!json_object_get(in, "accessToken"))
			return err_set(e, ERR_INVALID, "Invalid 'auth' input. Expected one element, got: []");
		vm_log(c->vm, FLOW_WARN, "Using deprecated 'accessToken' input. Please use 'auth.accessToken' instead.");
		return access_token(c, json_object_get(in, "accessToken"), token, e);
	}
	if (!json_is_object(auth) || json_object_size(auth) != 1) {
		json_object_foreach(auth, k, v)
		{
			size_t n = strlen(keys);
			str_fmt_cut(keys + n, sizeof keys - n, "%s%s", n ? ", " : "", k);
		}
		return err_set(e, ERR_INVALID, "Invalid 'auth' input. Expected one element, got: [%s]", keys);
	}
	if ((v = json_object_get(auth, "accessToken")))
		return access_token(c, v, token, e);
	if ((v = json_object_get(auth, "appInstallation")))
		return json_is_object(v) ? app_token(c, v, api_url, org, repo, token, e)
					 : err_set(e, ERR_INVALID, "github: auth.appInstallation must be a map");
	if ((v = json_object_get(auth, "appInstallationSecret")))
		return json_is_object(v) ? app_secret(c, v, api_url, org, repo, token, e)
					 : err_set(e, ERR_INVALID, "github: auth.appInstallationSecret must be a map");
	return err_set(e, ERR_INVALID, "github: unknown auth '%s' (accessToken, appInstallation or appInstallationSecret)",
		       json_object_iter_key(json_object_iter(auth)));
}
