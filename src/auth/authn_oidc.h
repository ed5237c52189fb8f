#ifndef ACCORD_AUTH_AUTHN_OIDC_H
#define ACCORD_AUTH_AUTHN_OIDC_H

#include <jansson.h>

#include "base/err.h"
#include "store/store.h"
#include "store/users.h"

/* The user of a verified OIDC token's claims (auth/oidc.h), as Concord's OIDC realm makes
 * it: the username is the claim --oidc-username-claim (default email) lower-cased; the
 * record is created on the first login (type LOCAL, as Concord's plugin does; display name
 * from "name", email from "email"; a MEMBER of the Default org's team `default` as every new
 * user) and brought up to date on later ones.  Each login also stores the groups of
 * --oidc-groups-claim as the user's directory groups (store/ldap_groups.h: a team linked
 * to a group counts its members), and sets or clears every global role that
 * --oidc-role-mapping names by those groups.  An existing record answers only when it has
 * no password and is no LDAP or system one (so a provider cannot take over a local
 * account).  ERR_UNAUTH with the reason (no username claim, an unverified email, another
 * realm's user, a disabled user); the store's errors.  Thread-safe. */
int authn_oidc_user(struct store_conn *c, json_t *claims, struct user *u, struct err *e) WUR;

/* Authorization: Bearer <token> with --oidc-bearer: a JWT verified as oidc_verify does (no
 * nonce), any other token by the provider's userinfo endpoint (oidc_userinfo); its user as authn_oidc_user finds it (groups and roles written again at most
 * every AUTHN_OIDC_REFRESH_S seconds, so that a client's calls do not write each time).
 * ERR_UNAUTH / ERR_UNAVAILABLE as oidc_verify and oidc_userinfo; out->method AUTH_OIDC.  Thread-safe. */
#define AUTHN_OIDC_REFRESH_S 60
struct principal;
int authn_oidc_bearer(struct store_conn *c, const char *token, struct principal *out, struct err *e) WUR;

#endif
