#ifndef ACCORD_AUTH_LDAP_GROUP_MATCH_H
#define ACCORD_AUTH_LDAP_GROUP_MATCH_H

#include <stdbool.h>

/* Whether a group named in a form's `runAs.ldap.group` (docs/api.md "Forms") names the
 * directory group `dn`, as Concord's FormAccessManager matches them: when both start with
 * "CN=" (any case), pattern is a regular expression (POSIX extended) that must match all of
 * dn, ignoring case ("CN=managers,.*"); otherwise their first CN values (the text between
 * "CN=" and the next ",", or the whole string without one) compare equal ignoring case, so
 * "managers" names "cn=managers,ou=groups,dc=example,dc=org".  A pattern that does not
 * compile matches nothing.  Thread-safe. */
bool ldap_group_matches(const char *pattern, const char *dn);

#endif
