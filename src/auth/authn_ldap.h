#ifndef ACCORD_AUTH_AUTHN_LDAP_H
#define ACCORD_AUTH_AUTHN_LDAP_H

#include "base/err.h"
#include "store/store.h"
#include "store/users.h"

/* Basic credentials of a user who is not a local one with a password, checked against the
 * LDAP realm (auth/ldap_realm.h).  Only a record of type LDAP (or none yet) answers: a LOCAL
 * one without a password is ERR_UNAUTH.  On success *u is the user's record — created on the first
 * login (type LDAP, display name and email from the directory, a MEMBER of the Default
 * org's team `default` as every new user), its display name and email brought up to date on
 * later ones — and the user's groups are read and stored (store/ldap_groups.h) when they
 * were last read --ldap-groups-cache ago or more.  Errors are
 * ldap_realm_login's (ERR_UNAUTH, ERR_UNAVAILABLE) or the store's.  Thread-safe. */
int authn_ldap(struct store_conn *c, const char *username, const char *password, struct user *u, struct err *e) WUR;

#endif
