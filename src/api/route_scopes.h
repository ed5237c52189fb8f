#ifndef ACCORD_API_ROUTE_SCOPES_H
#define ACCORD_API_ROUTE_SCOPES_H

#include <stdbool.h>

#include "api/api.h"
#include "auth/scope.h"

/* Which scope of an API key each route needs (docs/security.md "Scoped API keys"): one
 * table, first match wins.  Every route has an entry (tests/unit/test_route_scopes.c); a
 * route without one is refused to every scoped key. */
enum route_scope_kind {
	ROUTE_SCOPE_NONE,  /* no entry: scoped keys are refused */
	ROUTE_SCOPE_OPEN,  /* any key: who am I, server status, the console's files */
	ROUTE_SCOPE_NEEDS, /* resource:action below */
};

/* A route across organizations (WIDE: a list of them, an event for every project's
 * triggers) or over all projects of one (ORG_LIST): a key whose scopes for it are all
 * narrowed (to projects, for ORG_LIST) is refused, since it would reach beyond them. */
enum route_scope_flags { ROUTE_SCOPE_WIDE = 1 << 0, ROUTE_SCOPE_ORG_LIST = 1 << 1 };

struct route_scope {
	enum route_scope_kind kind;
	struct scope_need need;
	unsigned flags;
};

/* The entry of the route (method, pattern as in its route table). */
struct route_scope route_scope_of(const char *method, const char *pattern);

/* After authentication: for a key with scopes, 0 when one of them allows the route (and
 * c->who.need is set for the access checks' narrowing), else ERR_FORBIDDEN naming the
 * missing scope; for a key with a rate limit, ERR_TOO_MANY (429, header Retry-After) once
 * over it.  0 for any other caller. */
int api_route_scope_check(struct api_call *c, const struct api_route *route) WUR;

#endif
