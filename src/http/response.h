#ifndef ACCORD_HTTP_RESPONSE_H
#define ACCORD_HTTP_RESPONSE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <jansson.h>

#include "base/err.h"

#define HTTP_MAX_HEADERS 12

/* A response body produced piece by piece (http_resp_stream), e.g. a log that is still
 * being written.  The server calls, on the connection's I/O thread:
 *   start  once, before the first read, with the handle that wakes the stream (may be NULL);
 *          a negative return drops the connection;
 *   read   for up to max bytes: returns how many it wrote to buf (> 0), 0 for "nothing
 *          now" (the connection then sleeps, holding no thread, until http_stream_wake),
 *          HTTP_STREAM_END after the last byte or HTTP_STREAM_ERROR (the connection is
 *          dropped so that the client sees a truncated body);
 *   free   once, when the connection is done with the stream (also when start failed or
 *          the response was never sent).  It must first make sure that no
 *          http_stream_wake for this stream runs or will run (unsubscribe), because the
 *          handle is freed right after it returns.
 * Reads must not block for long: they run on an event-loop thread (a store read is fine). */
#define HTTP_STREAM_END ((ssize_t)-1)
#define HTTP_STREAM_ERROR ((ssize_t)-2)
#define HTTP_STREAM_UNKNOWN_LEN UINT64_MAX

struct http_stream; /* owned by the server */

struct http_stream_ops {
	int (*start)(void *ctx, struct http_stream *s);
	ssize_t (*read)(void *ctx, char *buf, size_t max);
	void (*free)(void *ctx);
};

/* Wakes a stream whose read returned 0, so that read is called again soon.  Any thread;
 * never blocks beyond a mutex; a wake that arrives while a read runs is not lost. */
void http_stream_wake(struct http_stream *s);

/* What a handler answers.  Exactly one of: a body in memory (body/len, owned), bytes that
 * live as long as the process (static_body/len, not owned: embedded files), a file
 * range (fd/fd_off/fd_len; the fd is owned and closed by the server), or a stream
 * (stream_ops/stream_ctx, owned: freed through stream_ops->free).  Starts as 500 with
 * no body; http_resp_* set it. */
struct http_response {
	int status;
	char content_type[128];
	char *body;
	const char *static_body;
	size_t len;
	int fd;
	uint64_t fd_off, fd_len;
	const struct http_stream_ops *stream_ops;
	void *stream_ctx;
	uint64_t stream_len; /* HTTP_STREAM_UNKNOWN_LEN: chunked */
	size_t n_headers;
	char *header_names[HTTP_MAX_HEADERS];
	char *header_values[HTTP_MAX_HEADERS];
};

void http_resp_init(struct http_response *w);
void http_resp_cleanup(struct http_response *w);

/* JSON body (steals v). */
void http_resp_json(struct http_response *w, int status, json_t *v);
/* Copies data as the body with the given content type.  These and http_resp_json answer
 * an empty 500 when out of memory. */
void http_resp_bytes(struct http_response *w, int status, const char *content_type, const void *data, size_t len);
/* Takes ownership of a malloc'd body. */
void http_resp_take(struct http_response *w, int status, const char *content_type, char *data, size_t len);
/* Serves bytes that live as long as the process (embedded files): neither copied nor freed. */
void http_resp_static(struct http_response *w, int status, const char *content_type, const void *data, size_t len);
/* Serves bytes [off, off+len) of an open file (takes the fd). */
void http_resp_file(struct http_response *w, int status, const char *content_type, int fd, uint64_t off, uint64_t len);
/* Streams the body from ops (takes ctx: freed through ops->free even when never sent).
 * len is the exact body length (Content-Length) or HTTP_STREAM_UNKNOWN_LEN (chunked). */
void http_resp_stream(struct http_response *w, int status, const char *content_type, const struct http_stream_ops *ops,
		      void *ctx, uint64_t len);
/* The error as {"ok":false,"message":…} with the status of its code; 401 adds
 * WWW-Authenticate: Basic. */
void http_resp_error(struct http_response *w, const struct err *e);
/* Adds a response header (copied).  Silently ignores more than HTTP_MAX_HEADERS. */
void http_resp_header(struct http_response *w, const char *name, const char *value);
/* Removes every header of that name (case-insensitive) added so far. */
void http_resp_header_drop(struct http_response *w, const char *name);

/* The one table from error codes to HTTP statuses. */
int http_status_of(enum err_code code);

#endif
