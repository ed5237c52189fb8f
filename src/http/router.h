#ifndef ACCORD_HTTP_ROUTER_H
#define ACCORD_HTTP_ROUTER_H

#include <stddef.h>

#include "base/err.h"
#include "http/request.h"

/* Maps (method, path) to a route.  Patterns are literal segments and parameters:
 * "/api/v1/org/{org}/secret/{name}"; a last parameter written "{path*}" takes the rest of
 * the path (one or more segments).  When several patterns match, the one with the most
 * literal segments before its first parameter wins, so "/api/v1/apikey/{id}" and a
 * literal "/api/v1/apikey/x" can live side by side.  Built once at start-up; matching is
 * read-only and thread-safe. */

struct http_route {
	const char *method;
	const char *pattern;
	void *handler; /* opaque to the router */
	unsigned flags;
	size_t id; /* the caller's number for the route (metrics), passed through */
};

struct router;

struct router *router_new(void);
void router_free(struct router *r);
/* Adds a route (pattern and method are borrowed: string constants).  Bad patterns (more
 * than HTTP_MAX_PARAMS parameters, {x*} not last, duplicates) are ERR_INVALID. */
int router_add(struct router *r, const struct http_route *route, struct err *e) WUR;

/* The route for method and path, filling req's path parameters (allocated in req->arena).
 * NULL with ERR_NOT_FOUND when no pattern matches the path, or ERR_METHOD when patterns
 * match but not for this method (allow then lists the methods, comma-separated). */
const struct http_route *router_match(const struct router *r, struct http_request *req, char *allow, size_t allow_cap,
				      struct err *e);

#endif
