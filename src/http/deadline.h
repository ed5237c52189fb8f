#ifndef ACCORD_HTTP_DEADLINE_H
#define ACCORD_HTTP_DEADLINE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"

/* Two deadlines for reading a request.  Its request line and headers must arrive within
 * header_s, and the whole of it — headers and body — within request_s, both counted from the
 * moment its connection was accepted (or the previous request on a keep-alive connection
 * was answered: an idle keep-alive connection waits for headers, so it is closed after
 * header_s too).  libmicrohttpd's own timeout is an idle timeout that every received byte
 * restarts, so a client trickling a byte a second, or one that sends nothing, would hold
 * its connection (and a connection slot) for ever.
 *
 * One timer thread watches the connections that are reading a request, in two lists — still
 * waiting for headers (ordered by start time), reading a body (ordered by deadline) — and
 * shuts down (shutdown(2), not close: libmicrohttpd owns the descriptor) the socket of every
 * one past its deadline; libmicrohttpd then sees the end of the stream and closes the
 * connection.  A connection whose request is being handled or answered is off both lists
 * (handlers and streams may take long), and goes back on the first, with a fresh start, when
 * its request completes.
 *
 * Thread safety: every function may be called from any thread.  conn_closed must be
 * called before the descriptor is closed (libmicrohttpd's NOTIFY_CLOSED is), so the timer
 * never shuts down a descriptor that has been reused. */

struct http_deadline_conn;

struct http_deadline_list {
	struct http_deadline_conn *head, *tail; /* earliest deadline first */
};

struct http_deadlines {
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	bool started, stopping;
	int64_t header_ns, request_ns;
	struct http_deadline_list headers; /* waiting for request line and headers */
	struct http_deadline_list bodies;  /* headers read, reading the body */
};

/* Starts the timer thread; header_s above request_s counts as request_s.  ERR_INTERNAL when
 * the thread cannot be created. */
int http_deadlines_init(struct http_deadlines *d, unsigned header_s, unsigned request_s, struct err *e) WUR;
/* Stops the thread; every connection must have been closed before. */
void http_deadlines_cleanup(struct http_deadlines *d);

/* A connection on socket fd was accepted.  New handle (freed by conn_closed), or NULL when
 * out of memory (the connection then has no deadline; the functions below accept NULL). */
struct http_deadline_conn *http_deadline_conn_started(struct http_deadlines *d, int fd);
/* Its request line and headers have been read: the body must follow within request_s of
 * the start. */
void http_deadline_conn_headers(struct http_deadlines *d, struct http_deadline_conn *c);
/* Its request has been read: no deadline until http_deadline_conn_next. */
void http_deadline_conn_busy(struct http_deadlines *d, struct http_deadline_conn *c);
/* Its request completed: the next one on the connection has limit_s from now. */
void http_deadline_conn_next(struct http_deadlines *d, struct http_deadline_conn *c);
/* The connection is closing: frees c. */
void http_deadline_conn_closed(struct http_deadlines *d, struct http_deadline_conn *c);

#endif
