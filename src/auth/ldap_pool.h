#ifndef ACCORD_AUTH_LDAP_POOL_H
#define ACCORD_AUTH_LDAP_POOL_H

#include <ldap.h>

/* The LDAP realm's idle directory connections (auth/ldap_realm.c), kept so that a login does
 * not pay a new TCP connection (and TLS handshake) each time: at most --ldap-pool-size of
 * them, each closed once it has been idle --ldap-pool-idle.  The pool holds connections in
 * whatever bind state they were given back in; the realm binds a taken one as the service
 * account before use, which also tells a connection whose directory went away (restarted)
 * from a live one.  A connection is used by one thread at a time: the pool hands it out
 * exclusively.  Thread-safe. */

/* The most recently given idle connection that is not too old (taken over by the caller;
 * give it back or drop it), or NULL: none. */
LDAP *ldap_pool_take(void);

/* Gives ld back (taken over); closes it when the pool is full or its size is 0. */
void ldap_pool_give(LDAP *ld);

/* Closes ld (taken over; NULL is allowed). */
void ldap_pool_drop(LDAP *ld);

/* Closes every idle connection (at shut-down; connections taken stay the takers'). */
void ldap_pool_clear(void);

#endif
