#ifndef ACCORD_BASE_LDAP_FILTER_H
#define ACCORD_BASE_LDAP_FILTER_H

#include <stddef.h>

#include "base/err.h"

/* in escaped for an LDAP filter value into out (RFC 4515: * ( ) \ NUL and every byte outside
 * printable ASCII as \xx), so that a value can only ever match itself and never widen or
 * close the filter it is put into; -1 when it does not fit in cap bytes. */
int ldap_filter_escape(const char *in, char *out, size_t cap) WUR;

#endif
