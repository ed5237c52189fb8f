#include "auth/authn_oidc.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "auth/jwt.h"
#include "auth/oidc.h"
#include "auth/oidc_mapping.h"
#include "auth/principal.h"
#include "base/datetime.h"
#include "base/log.h"
#include "base/str.h"
#include "base/uuid.h"
#include "store/ldap_groups.h"

#define GROUPS_MAX 256
#define GROUP_MAX 1024

static bool printable(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if (*p < 0x20 || *p == 0x7f)
			return false;
	return true;
}

static int username_of(json_t *claims, char *out, size_t cap, struct err *e)
{
	const char *claim = oidc_settings.username_claim;
	const char *v = json_string_value(json_object_get(claims, claim));
	json_t *verified = json_object_get(claims, "email_verified");

	if (!v || !v[0] || !printable(v) || str_fmt(out, cap, "%s", v))
		return err_set(e, ERR_UNAUTH, "the OIDC token has no usable '%s' claim (--oidc-username-claim)", claim);
	if (strcmp(claim, "email") == 0 && json_is_false(verified))
		return err_set(e, ERR_UNAUTH, "the OIDC provider has not verified the email %s", v);
	for (char *p = out; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return 0;
}

static void profile(json_t *claims, struct user *u)
{
	const char *name = json_string_value(json_object_get(claims, "name"));
	const char *email = json_string_value(json_object_get(claims, "email"));

	str_fmt_cut(u->display_name, sizeof u->display_name, "%s", name && printable(name) ? name : u->username);
	str_fmt_cut(u->email, sizeof u->email, "%s", email && printable(email) ? email : "");
}

/* The groups claim: an array of strings or one string.  *out NEW (free each and the array). */
static size_t groups_of(json_t *claims, char ***out)
{
	json_t *v = json_object_get(claims, oidc_settings.groups_claim), *item;
	size_t n = 0, i;
	char **g = calloc(GROUPS_MAX, sizeof *g);

	*out = g;
	if (!g)
		return 0;
	if (json_is_string(v)) {
		if (strlen(json_string_value(v)) <= GROUP_MAX && printable(json_string_value(v)))
			g[n] = strdup(json_string_value(v)), n += g[n] != NULL;
		return n;
	}
	json_array_foreach(v, i, item)
	{
		const char *s = json_string_value(item);
		if (n < GROUPS_MAX && s && s[0] && strlen(s) <= GROUP_MAX && printable(s))
			g[n] = strdup(s), n += g[n] != NULL;
	}
	return n;
}

static void free_groups(char **g, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(g[i]);
	free(g);
}

static int create_user(struct store_conn *c, const char *username, json_t *claims, struct user *u, struct err *e)
{
	int rc;

	memset(u, 0, sizeof *u);
	uuid_v4(u->id);
	str_fmt_cut(u->username, sizeof u->username, "%s", username);
	str_set_lit(u->type, "LOCAL");
	profile(claims, u);
	rc = store_user_insert_joining_default(c, u, NULL, e);
	/* Another request (or node) created the user at the same time: theirs stands. */
	if (rc == -ERR_CONFLICT)
		rc = store_user_find(c, username, NULL, u, e);
	if (rc == 0)
		LOG_I("OIDC: created user %s (id %s) on first login", u->username, u->id);
	return rc;
}

static int update_user(struct store_conn *c, json_t *claims, struct user *u, struct err *e)
{
	struct user was = *u;

	profile(claims, u);
	u->roles = oidc_mapping_builtin_roles(u->roles, claims);
	if (strcmp(was.display_name, u->display_name) == 0 && strcmp(was.email, u->email) == 0 && was.roles == u->roles)
		return 0;
	return store_user_update(c, u, NULL, e);
}

/* Only records an SSO login may stand for: LOCAL ones without a password, no system user. */
static int same_realm(const struct user *u, struct err *e)
{
	if (strcmp(u->type, "LOCAL") == 0 && !u->has_password && !user_id_is_system(u->id))
		return 0;
	return err_set(e, ERR_UNAUTH,
		       "the user %s belongs to another realm (a local user with a password, or an LDAP user) and "
		       "cannot log in through OIDC",
		       u->username);
}

static int login(struct store_conn *c, json_t *claims, struct user *u, bool bearer, struct err *e)
{
	char username[sizeof u->username];
	struct err lookup;
	char **groups = NULL;
	size_t n;
	int64_t synced;
	bool known;
	int rc;

	if ((rc = username_of(claims, username, sizeof username, e)))
		return rc;
	known = store_user_find(c, username, NULL, u, &lookup) == 0;
	if (!known && lookup.code != ERR_NOT_FOUND)
		return err_set(e, lookup.code, "%s", lookup.msg);
	if (known && (rc = same_realm(u, e)))
		return rc;
	if (known && u->disabled)
		return err_set(e, ERR_UNAUTH, "the user %s is disabled", username);
	/* A bearer token's user whose groups were written a moment ago: nothing to write. */
	if (known && bearer && store_user_ldap_synced_at(c, u->id, &synced, &lookup) == 0 &&
	    dt_now_ms() - synced < AUTHN_OIDC_REFRESH_S * 1000)
		return 0;
	n = groups_of(claims, &groups);
	if (!groups)
		return err_set(e, ERR_INTERNAL, "out of memory");
	rc = known ? 0 : create_user(c, username, claims, u, e);
	/* (create_user may have found the record another login made at the same moment) */
	if (rc == 0 && !known)
		rc = same_realm(u, e);
	if (rc == 0)
		rc = update_user(c, claims, u, e);
	if (rc == 0)
		rc = oidc_mapping_apply(c, u, claims, e);
	if (rc == 0)
		rc = store_user_ldap_groups_set(c, u->id, groups, n, dt_now_ms(), e);
	free_groups(groups, n);
	return rc;
}

int authn_oidc_user(struct store_conn *c, json_t *claims, struct user *u, struct err *e)
{
	return login(c, claims, u, false, e);
}

int authn_oidc_bearer(struct store_conn *c, const char *token, struct principal *out, struct err *e)
{
	json_t *claims = NULL;
	int rc;

	rc = jwt_looks_like(token) ? oidc_verify(token, NULL, &claims, e) : oidc_userinfo(token, &claims, e);
	if (rc == 0)
		rc = login(c, claims, &out->user, true, e);
	json_decref(claims);
	if (rc == 0)
		out->method = AUTH_OIDC;
	return rc;
}
