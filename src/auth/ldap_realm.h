#ifndef ACCORD_AUTH_LDAP_REALM_H
#define ACCORD_AUTH_LDAP_REALM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/ldap_filter.h"

/* The LDAP / Active Directory realm (docs/security.md "Realms"): a username and password
 * checked against a directory.  The service account (--ldap-system-user, its password from
 * ACCORD_LDAP_SYSTEM_PASSWORD only) searches the user's entry under --ldap-search-base with
 * --ldap-principal-search-filter ({0}: the username, escaped as RFC 4515 says), then the
 * connection binds as that entry with the given password.  The user's groups are the
 * entry's memberOf values and, transitively, every group under --ldap-group-search-base
 * whose --ldap-group-search-filter ({0}: a member's DN, escaped) matches one of them — so
 * nested groups are found on any directory, with or without a memberOf overlay.
 * ldaps:// and --ldap-starttls verify the server's certificate (--ldap-ca-file, or the
 * system's), always.  Nothing is loaded or connected until the first directory login. */
struct ldap_settings {
	char *url;		/* ldap://host:port or ldaps://…; NULL or "": no LDAP realm */
	char *search_base;	/* DN under which users are searched */
	char *principal_filter; /* default (cn={0}) */
	char *system_user;	/* the service account's DN ("": anonymous search) */
	char *group_base;	/* default: search_base */
	char *group_filter;	/* default (member={0}) */
	char *display_attr;	/* default displayName */
	char *mail_attr;	/* default mail */
	char *ca_file;		/* PEM file of the CAs the directory's certificate must chain to */
	bool starttls;
	unsigned timeout_ms;
	int64_t groups_cache_s; /* how long the groups read at a login stand before a login reads them again */
	unsigned pool_size;	/* idle connections kept for later logins (auth/ldap_pool.h); 0: none */
	int64_t pool_idle_s;	/* how long one stays idle before it is closed */
};

extern struct ldap_settings ldap_settings;

/* The entries of serve's option table. */
#define LDAP_REALM_OPTS                                                                                                \
	{"ldap-url", CONFIG_STRING, NULL, 0, 0, &ldap_settings.url,                                                   \
	 "LDAP/Active Directory server (ldap://host:port or ldaps://host:port); unset: no LDAP realm"},                \
	    {"ldap-search-base", CONFIG_STRING, NULL, 0, 0, &ldap_settings.search_base,                               \
	     "DN under which users are searched (required with --ldap-url)"},                                          \
	    {"ldap-principal-search-filter", CONFIG_STRING, "(cn={0})", 0, 0, &ldap_settings.principal_filter,       \
	     "filter that finds a user's entry; {0} is the username (escaped)"},                                        \
	    {"ldap-system-user", CONFIG_STRING, NULL, 0, 0, &ldap_settings.system_user,                               \
	     "DN of the service account that searches (its password: ACCORD_LDAP_SYSTEM_PASSWORD, environment only)"},  \
	    {"ldap-group-search-base", CONFIG_STRING, NULL, 0, 0, &ldap_settings.group_base,                          \
	     "DN under which groups are searched (default: --ldap-search-base)"},                                       \
	    {"ldap-group-search-filter", CONFIG_STRING, "(member={0})", 0, 0, &ldap_settings.group_filter,           \
	     "filter that finds the groups with a member; {0} is the member's DN (escaped)"},                           \
	    {"ldap-display-name-attribute", CONFIG_STRING, "displayName", 0, 0, &ldap_settings.display_attr,         \
	     "attribute of a user's display name"},                                                                     \
	    {"ldap-mail-attribute", CONFIG_STRING, "mail", 0, 0, &ldap_settings.mail_attr,                            \
	     "attribute of a user's email address"},                                                                    \
	    {"ldap-ca-file", CONFIG_STRING, NULL, 0, 0, &ldap_settings.ca_file,                                       \
	     "PEM file of the CAs that sign the directory's certificate (ldaps:// or --ldap-starttls; verified "       \
	     "always)"},                                                                                                \
	    {"ldap-starttls", CONFIG_BOOL, "false", 0, 0, &ldap_settings.starttls,                                    \
	     "require StartTLS on an ldap:// URL"},                                                                     \
	    {"ldap-timeout-ms", CONFIG_UINT, "5000", 100, 600000, &ldap_settings.timeout_ms,                          \
	     "connect and operation timeout of the directory"},                                                         \
	    {"ldap-pool-size", CONFIG_UINT, "4", 0, 64, &ldap_settings.pool_size,                                     \
	     "idle directory connections kept for later logins (0: a new connection for each)"},                      \
	    {"ldap-pool-idle", CONFIG_DURATION, "5m", 1, 1ULL << 32, &ldap_settings.pool_idle_s,                      \
	     "how long a kept directory connection may stay idle before it is closed"},                                 \
	{                                                                                                              \
		"ldap-groups-cache", CONFIG_DURATION, "10m", 1, 1ULL << 32, &ldap_settings.groups_cache_s,             \
		    "how long the groups read at a login stand before a later login reads them again"                        \
	}

/* Checks the settings once at start-up (a URL without a search base, a filter without {0},
 * an unreadable CA file: ERR_INVALID naming the flag) and takes the service account's
 * password out of the environment.  Not thread-safe: call before serving. */
int ldap_realm_init(struct err *e) WUR;
void ldap_realm_cleanup(void);

/* Whether --ldap-url was given. */
bool ldap_realm_enabled(void);

struct ldap_identity {
	char dn[1024];
	char display_name[257];
	char email[257];
	char **groups; /* group DNs (new; ldap_identity_cleanup frees) */
	size_t n_groups;
};

/* Checks username and password against the directory and reads the user's entry (and, with
 * with_groups, their groups) into out.  ERR_UNAUTH for an unknown user, a wrong password, an ambiguous match or an
 * account the directory refuses (a disabled one), with a message that does not say which;
 * ERR_UNAVAILABLE "LDAP directory unavailable: …" when the directory cannot be reached, times
 * out or refuses the service account.  Thread-safe (one connection per call). */
int ldap_realm_login(const char *username, const char *password, bool with_groups, struct ldap_identity *out,
		     struct err *e) WUR;
void ldap_identity_cleanup(struct ldap_identity *id);

#endif
