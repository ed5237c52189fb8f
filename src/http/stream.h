#ifndef ACCORD_HTTP_STREAM_H
#define ACCORD_HTTP_STREAM_H

#include <pthread.h>
#include <stdbool.h>

#include "base/err.h"
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
 * connections).
 *
 * Hang-ups: a client that goes away from an idle stream would otherwise hold its
 * connection (in CLOSE_WAIT, counted against the connection limit) until the stream's next
 * write.  So each time the reader is about to suspend, it first looks at the socket
 * (poll with POLLRDHUP: the peer closed or reset it) and, if the peer is gone, ends the
 * stream — as complete, not with an error (idle_unlock in stream.c says why); and a probe
 * thread resumes every suspended stream once every HTTP_STREAM_PROBE_MS, whose reader then
 * only looks at the socket again (it does not call the handler's read, which may cost a
 * query) and suspends once more.  A client that hangs up is so closed
 * within about HTTP_STREAM_PROBE_MS. */

#define HTTP_STREAM_PROBE_MS 1000

struct http_stream;

struct http_streams {
	pthread_mutex_t lock;
	pthread_cond_t wake; /* the probe thread's sleep */
	pthread_t probe;
	bool probing; /* the probe thread runs */
	struct http_stream *head; /* live streams */
	bool closing;
};

/* Starts the probe thread.  ERR_INTERNAL when it cannot be created. */
int http_streams_init(struct http_streams *reg, struct err *e) WUR;
/* After http_streams_close and libmicrohttpd's stop. */
void http_streams_cleanup(struct http_streams *reg);

/* The libmicrohttpd response for w's stream, which it takes over (w->stream_ops is
 * cleared).  NULL when start failed or out of memory (the stream is then freed). */
struct MHD_Response *http_stream_response(struct http_streams *reg, struct MHD_Connection *conn,
					  struct http_response *w);

/* Stops the probe thread, ends every stream at once (their reads see an error) and refuses
 * new ones: resumes the suspended ones so that libmicrohttpd can close them.  May be called
 * again, for streams started meanwhile. */
void http_streams_close(struct http_streams *reg);

#endif
