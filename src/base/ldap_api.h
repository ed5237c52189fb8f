#ifndef ACCORD_BASE_LDAP_API_H
#define ACCORD_BASE_LDAP_API_H

#include <ldap.h>

#include "base/dlib.h"
#include "base/err.h"

/* OpenLDAP's client library, loaded on demand (like store/pq_api.h).  Only a server started
 * with --ldap-url (auth/ldap_realm.c) and a flow's `ldap` task (flow/tasks/ldap.c) speak to a
 * directory, so the binary does not link it: the first directory login or task calls
 * ldap_api_load(), which opens LDAP_SONAME (set by the Makefile
 * from the build's libldap) once, thread-safely, and fills `ldapi` with the functions Accord
 * uses, called as `ldapi.search_ext_s(...)` instead of `ldap_search_ext_s(...)`.  The header
 * is included for the types only. */
#define LDAP_API_FUNCTIONS(X)                                                                                          \
	X(ber_free, ber_free)                                                                                          \
	X(count_entries, ldap_count_entries)                                                                           \
	X(err2string, ldap_err2string)                                                                                 \
	X(first_attribute, ldap_first_attribute)                                                                       \
	X(first_entry, ldap_first_entry)                                                                               \
	X(get_dn, ldap_get_dn)                                                                                         \
	X(get_values_len, ldap_get_values_len)                                                                         \
	X(initialize, ldap_initialize)                                                                                 \
	X(memfree, ldap_memfree)                                                                                       \
	X(msgfree, ldap_msgfree)                                                                                       \
	X(next_attribute, ldap_next_attribute)                                                                         \
	X(next_entry, ldap_next_entry)                                                                                 \
	X(sasl_bind_s, ldap_sasl_bind_s)                                                                               \
	X(search_ext_s, ldap_search_ext_s)                                                                             \
	X(set_option, ldap_set_option)                                                                                 \
	X(start_tls_s, ldap_start_tls_s)                                                                               \
	X(unbind_ext_s, ldap_unbind_ext_s)                                                                             \
	X(value_free_len, ldap_value_free_len)

struct ldap_api {
	LDAP_API_FUNCTIONS(DLIB_FIELD)
};

/* Filled by a successful ldap_api_load(); all NULL before (and after a failed load). */
extern struct ldap_api ldapi;

/* Loads the library.  Thread-safe; only the first call does the work, later calls return
 * its result: ERR_INTERNAL naming the library or the missing symbol. */
int ldap_api_load(struct err *e) WUR;

#endif
