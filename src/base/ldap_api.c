#include "base/ldap_api.h"

#ifndef LDAP_SONAME
#define LDAP_SONAME "libldap-2.5.so.0"
#endif

struct ldap_api ldapi;

#define LDAP_API_SYM(field, name) DLIB_SYM(struct ldap_api, field, name)
static const struct dlib_sym symbols[] = {LDAP_API_FUNCTIONS(LDAP_API_SYM)};
static struct dlib_once once = DLIB_ONCE_INIT;

int ldap_api_load(struct err *e)
{
	return dlib_load_once(&once, LDAP_SONAME, "libldap-2.5-0", symbols, sizeof symbols / sizeof symbols[0], &ldapi,
			      sizeof ldapi, e);
}
