#ifndef ACCORD_HTTP_STREAM_H
#define ACCORD_HTTP_STREAM_H

#include <pthread.h>
#include <stdbool.h>

#include "http/mhd.h"
#include "http/response.h"

/* Streaming responses (http_resp_stream), for server.c only.
 *
 * A stream becomes a libmicrohttpd callback response (chunked when its length is
 * unknown).  When the handler's read has nothing to send, the content-reader callback
 * suspends the connection (allowed there by libmicrohttpd, and required: with internal
 * polling a reader returning 0 is called again at once, a busy loop) and returns 0; the
 * connection then costs no thread and no polling.  http_stream_wake resumes it, and
 * libmicrohttpd calls the reader again.  A mutex per stream with two flags closes the
 * race between "read found nothing" and "suspend": a wake during a read sets `pending`,
 * so the reader reads again instead of suspending; a wake after the suspend resumes.
 *
 * Life cycle: the stream is freed by libmicrohttpd's free callback for the response
 * (when the connection is done with it, after on_completed or before), which first calls
 * ops->free — the handler unsubscribes there, so no wake touches a freed stream.  A
 * suspended connection is neither timed out nor checked for a disconnect by
 * libmicrohttpd; it is woken by the next write or the end of what it waits for, and at
 * shutdown by http_streams_close (libmicrohttpd must not be stopped with suspended
 * connections). */

struct http_stream;

struct http_streams {
	pthread_mutex_t lock;
	struct http_stream *head; /* live streams */
	bool closing;
};

void http_streams_init(struct http_streams *reg);
void http_streams_cleanup(struct http_streams *reg);

/* The libmicrohttpd response for w's stream, which it takes over (w->stream_ops is
 * cleared).  NULL when start failed or out of memory (the stream is then freed). */
struct MHD_Response *http_stream_response(struct http_streams *reg, struct MHD_Connection *conn,
					  struct http_response *w);

/* Ends every stream at once (their reads see an error) and refuses new ones: resumes the
 * suspended ones so that libmicrohttpd can close them. */
void http_streams_close(struct http_streams *reg);

#endif
