#ifndef ACCORD_HTTP_NEGOTIATE_H
#define ACCORD_HTTP_NEGOTIATE_H

#include <stdbool.h>

#include "http/request.h"
#include "http/response.h"

/* Whether an Accept-Encoding value allows gzip: a "gzip" (or "*") coding whose q is not 0. */
bool http_accepts_gzip(const char *accept);

/* For a 200 answer to a GET with a JSON body in memory: an ETag of the body, Vary:
 * Accept-Encoding and (unless the handler set one) Cache-Control: private, no-cache; then a
 * 304 without a body when If-None-Match names that ETag, else the body gzipped when the
 * client accepts gzip and it is at least 1 KiB.  Other answers are left as they are. */
void http_negotiate_json(const struct http_request *req, struct http_response *w);

#endif
