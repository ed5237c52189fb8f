#ifndef ACCORD_AUTH_OIDC_HTTP_H
#define ACCORD_AUTH_OIDC_HTTP_H

#include <jansson.h>

#include "base/err.h"

/* Requests to the OpenID provider over libcurl (loaded on demand, flow/tasks/curl_api.h):
 * redirects are not followed, the answer is bounded by OIDC_HTTP_ANSWER_MAX, a request
 * times out after timeout_ms.  form NULL: a GET; else a POST of that
 * application/x-www-form-urlencoded body.  auth: an Authorization header line or NULL (wiped
 * by the caller).  *status and *answer (NEW; NULL when the answer is not JSON).
 * ERR_UNAVAILABLE "OIDC provider unavailable: <what>: <curl's error>" when no answer came.
 * Thread-safe. */
#define OIDC_HTTP_ANSWER_MAX (512 * 1024)

int oidc_http(const char *what, const char *url, const char *form, const char *auth, unsigned timeout_ms, long *status,
	      json_t **answer, struct err *e) WUR;

/* s percent-encoded (everything but RFC 3986's unreserved characters): NEW, NULL when out of
 * memory. */
char *oidc_http_escape(const char *s);

#endif
