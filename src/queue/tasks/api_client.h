#ifndef ACCORD_QUEUE_API_CLIENT_H
#define ACCORD_QUEUE_API_CLIENT_H

#include <jansson.h>

#include "base/err.h"
#include "flow/tasks/curl_api.h"

/* Requests of server tasks to a Concord-compatible REST API over HTTP (libcurl, loaded on
 * demand): another server's (the concord task's baseUrl) or this server's own, where a
 * task acts as its process's initiator with the process's session token, as Concord's
 * tasks call their server (project, repositoryRefresh).  Redirects are not followed, the
 * answer is bounded, a request times out; no message carries a header's value. */

#define API_CLIENT_ANSWER_MAX (256 * 1024)
#define API_CLIENT_CONNECT_MS 10000L
#define API_CLIENT_TIMEOUT_MS 120000L

/* Performs h (its URL, method and body set by the caller) with the header auth ("Name:
 * value", wiped here), "Accept: application/json" and extra (a header line, or NULL):
 * *status and *answer (NEW: the JSON answer, or NULL when it is not JSON).
 * ERR_UNAVAILABLE "<what>: <curl's error>" when no answer came. */
int api_client_perform(CURL *h, const char *what, char *auth, const char *extra, long *status, json_t **answer,
		       struct err *e) WUR;

/* A JSON request (body NULL: none) to url, as api_client_perform. */
int api_client_json(const char *method, const char *url, char *auth, json_t *body, long *status, json_t **answer,
		    struct err *e) WUR;

/* s percent-encoded as one path segment (everything but RFC 3986's unreserved
 * characters): NEW, NULL when out of memory. */
char *api_client_segment(const char *s);

#endif
