#ifndef ACCORD_HTTP_REQUEST_H
#define ACCORD_HTTP_REQUEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "base/arena.h"
#include "base/buf.h"
#include "base/err.h"

#define HTTP_MAX_PARAMS 8

/* What a request handler returns (see http_handler in http/server.h). */
enum { HTTP_HANDLED = 0, HTTP_DEFER = 1, HTTP_DEFER_APART = 2 };

/* One HTTP request as handlers see it.  Everything is borrowed from the server and valid
 * until the response has been produced; per-request scratch memory comes from `arena`. */
struct http_request {
	void *conn;		  /* the server's connection handle (opaque to handlers) */
	const char *method;	  /* "GET", "POST", … */
	const char *path;	  /* decoded path, no query string */
	const char *content_type; /* header value or NULL */
	struct buf body;	  /* the whole body (NUL-terminated) */
	size_t n_params;
	const char *param_names[HTTP_MAX_PARAMS];
	const char *param_values[HTTP_MAX_PARAMS];
	struct arena arena;
	char principal[160]; /* who made the request, for the access log ("-" if nobody) */
	int64_t start_ns;
	size_t route_id; /* http_route.id of the matched route; SIZE_MAX until one matched */
	bool from_loopback; /* the client connected from this host */
	char remote_addr[48]; /* the client's IP address as text ("" when unknown) */
	bool on_worker; /* the handler runs on a worker thread (see http_handler) */
	bool heavy;	/* a handler that used much memory sets it: once answered, the server gives
			   freed memory back to the system (see http/server.h) */
};

/* The user owning the client's socket, for a client on this host (from_loopback): see
 * base/sockdiag.h.  0, or < 0 with e set. */
int http_peer_uid(const struct http_request *r, uid_t *uid, struct err *e);

/* Header value (case-insensitive name) or NULL. */
const char *http_header(const struct http_request *r, const char *name);
/* First value of a query parameter or NULL; "" for a parameter given without value. */
const char *http_query(const struct http_request *r, const char *name);
/* Calls fn for every query parameter in order (repeated names included); stops and
 * returns fn's value when it is non-zero. */
int http_query_each(const struct http_request *r, int (*fn)(void *ctx, const char *key, const char *value), void *ctx);
/* Path parameter by name ("org" for a route pattern "/api/v1/org/{org}") or NULL. */
const char *http_param(const struct http_request *r, const char *name);

/* True when the request's media type (without parameters, case-insensitive) is mime. */
bool http_content_type_is(const struct http_request *r, const char *mime);

/* The body parsed as JSON.  ERR_MEDIA_TYPE unless the content type is application/json
 * (or +json); ERR_INVALID for an empty body, invalid JSON or a string containing
 * "\u0000" (it would cut the C string a handler reads).  New reference. */
int http_body_json(struct http_request *r, json_t **out, struct err *e) WUR;

#endif
