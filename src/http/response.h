#ifndef ACCORD_HTTP_RESPONSE_H
#define ACCORD_HTTP_RESPONSE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"

#define HTTP_MAX_HEADERS 8

/* What a handler answers.  Exactly one of: a body in memory (body/len, owned), or a file
 * range (fd/fd_off/fd_len; the fd is owned and closed by the server).  Starts as 500 with
 * no body; http_resp_* set it. */
struct http_response {
	int status;
	char content_type[128];
	char *body;
	size_t len;
	int fd;
	uint64_t fd_off, fd_len;
	size_t n_headers;
	char *header_names[HTTP_MAX_HEADERS];
	char *header_values[HTTP_MAX_HEADERS];
};

void http_resp_init(struct http_response *w);
void http_resp_cleanup(struct http_response *w);

/* JSON body (steals v). */
void http_resp_json(struct http_response *w, int status, json_t *v);
/* Copies data as the body with the given content type. */
void http_resp_bytes(struct http_response *w, int status, const char *content_type, const void *data, size_t len);
/* Takes ownership of a malloc'd body. */
void http_resp_take(struct http_response *w, int status, const char *content_type, char *data, size_t len);
/* Serves bytes [off, off+len) of an open file (takes the fd). */
void http_resp_file(struct http_response *w, int status, const char *content_type, int fd, uint64_t off, uint64_t len);
/* The error as {"ok":false,"message":…} with the status of its code; 401 adds
 * WWW-Authenticate: Basic. */
void http_resp_error(struct http_response *w, const struct err *e);
/* Adds a response header (copied).  Silently ignores more than HTTP_MAX_HEADERS. */
void http_resp_header(struct http_response *w, const char *name, const char *value);

/* The one table from error codes to HTTP statuses. */
int http_status_of(enum err_code code);

#endif
