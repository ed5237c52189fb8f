#ifndef ACCORD_HTTP_SERVER_H
#define ACCORD_HTTP_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "http/request.h"
#include "http/response.h"

/* The HTTP server: libmicrohttpd with a thread pool and epoll.  It reads a request's
 * headers and body (within the limits), calls the handler on a pool thread, sends what
 * the handler answered and writes one access-log line per request.  It never logs
 * headers or bodies.
 *
 * Limits: a body whose Content-Length exceeds its limit is answered 413 before any of it
 * is read; a chunked body that grows past it is discarded and answered 413.  multipart
 * bodies use upload_bytes, all others body_bytes.  A URL over header_bytes / 2 is answered
 * 414 and request line + headers over header_bytes 431, in JSON; libmicrohttpd gets room
 * for header_bytes + 16 KiB and answers beyond that itself (in HTML: it has no hook for it).
 * A request's line and headers must arrive within header_s and the whole of it within
 * request_s (http/deadline.h), or its connection is closed.  No client address may hold
 * more than per_address_connections connections: libmicrohttpd closes one more at once.  Refused before the body is read, with 400: a Transfer-Encoding
 * other than chunked, Content-Length with Transfer-Encoding, several different
 * Content-Length values, a Content-Length that is not a number, a NUL byte decoded from the
 * URL (%00) or seen in a header.
 *
 * Memory: after a request marked heavy (req->heavy) or with a body or answer of 1 MiB or
 * more, the server calls malloc_trim so the process does not keep its peak size.
 *
 * Streaming (http_resp_stream, http/stream.h): a body produced piece by piece, e.g. a
 * log followed while it is written.  When the producer has nothing to send, the
 * connection is suspended inside libmicrohttpd's content-reader callback (no thread is
 * held, nothing polls) and resumed by http_stream_wake from whichever thread learns of
 * new data.  The stream is freed by libmicrohttpd when the connection is done with it,
 * after the producer's free has unsubscribed from its wake-ups.  http_server_stop ends
 * every stream first, because libmicrohttpd must not stop with suspended connections. */

struct http_server_cfg {
	const char *listen;  /* "host:port", "[v6addr]:port" or ":port"; port 0 picks one */
	unsigned io_threads; /* libmicrohttpd event-loop threads: read requests, send answers */
	unsigned threads;    /* workers that run handlers */
	unsigned apart_threads; /* workers that run HTTP_DEFER_APART handlers (0: 2) */
	size_t max_connections;
	size_t per_address_connections; /* 0: max_connections */
	unsigned timeout_s;
	unsigned header_s;  /* request line and headers deadline (http/deadline.h); 0: 10 */
	unsigned request_s; /* whole-request deadline (http/deadline.h); 0: 60 */
	size_t header_bytes;
	size_t body_bytes;
	size_t upload_bytes;
};

/* Called for every complete request, first on the event-loop thread that read it.  It
 * either fills resp and returns HTTP_HANDLED, or — when answering could take long (a
 * write transaction, password hashing, key generation, a query) — returns HTTP_DEFER
 * without touching resp: the server then suspends the connection and calls it again on a
 * worker thread (req->on_worker set), where it must answer.  So quick requests avoid a
 * thread hand-off, and slow ones never hold up the connections of an event loop.
 * HTTP_DEFER_APART is HTTP_DEFER on a pool of its own (apart_threads): for handlers that
 * wait on something outside the server (a git fetch), so that however many of them wait,
 * the other requests still find a free worker. */
typedef int (*http_handler)(void *ctx, struct http_request *req, struct http_response *resp);

struct http_server;

/* Checks a listen address ("host:port", "[v6]:port", ":port") without binding it, so a
 * bad --listen is a usage error at start-up.  ERR_INVALID saying what is expected. */
int http_listen_check(const char *listen, struct err *e) WUR;

/* Binds the listen address once and releases it, so that `accord serve` reports an
 * address in use (with the OS's words) before it touches its data folder. */
int http_listen_probe(const char *listen, struct err *e) WUR;

struct http_server *http_server_start(const struct http_server_cfg *cfg, http_handler fn, void *ctx, struct err *e);
/* The port actually bound (useful with port 0). */
uint16_t http_server_port(const struct http_server *s);
/* Stops accepting connections, waits up to grace_ms for requests in flight, then closes
 * everything and frees s. */
void http_server_stop(struct http_server *s, unsigned grace_ms);

#endif
