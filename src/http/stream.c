#include "http/stream.h"

#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BLOCK_SIZE (32 * 1024)

struct http_stream {
	struct http_streams *reg;
	struct MHD_Connection *conn;
	const struct http_stream_ops *ops;
	void *ctx;
	int fd; /* the connection's socket, -1 when unknown */
	pthread_mutex_t lock;
	bool suspended; /* the reader suspended the connection; a wake must resume it */
	bool pending;	/* a wake came since the last read: read again */
	bool drained;	/* the last read found nothing: only a wake brings more */
	bool closing;	/* the server stops: end the stream */
	struct http_stream *prev, *next;
};

/* Caller holds s->lock. */
static void resume_locked(struct http_stream *s)
{
	if (s->suspended) {
		s->suspended = false;
		mhd.resume_connection(s->conn);
	}
}

void http_stream_wake(struct http_stream *s)
{
	pthread_mutex_lock(&s->lock);
	s->pending = true;
	resume_locked(s);
	pthread_mutex_unlock(&s->lock);
}

static void *probe_main(void *arg)
{
	struct http_streams *reg = arg;

	pthread_mutex_lock(&reg->lock);
	while (!reg->closing) {
		struct timespec ts;

		for (struct http_stream *s = reg->head; s; s = s->next) {
			pthread_mutex_lock(&s->lock);
			resume_locked(s); /* not pending: its reader only looks at the socket */
			pthread_mutex_unlock(&s->lock);
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += (HTTP_STREAM_PROBE_MS % 1000) * 1000000L;
		ts.tv_sec += HTTP_STREAM_PROBE_MS / 1000 + ts.tv_nsec / 1000000000;
		ts.tv_nsec %= 1000000000;
		pthread_cond_timedwait(&reg->wake, &reg->lock, &ts);
	}
	pthread_mutex_unlock(&reg->lock);
	return NULL;
}

int http_streams_init(struct http_streams *reg, struct err *e)
{
	pthread_condattr_t ca;
	int rc;

	memset(reg, 0, sizeof *reg);
	pthread_mutex_init(&reg->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&reg->wake, &ca);
	pthread_condattr_destroy(&ca);
	rc = pthread_create(&reg->probe, NULL, probe_main, reg);
	if (rc) {
		http_streams_cleanup(reg);
		return err_set(e, ERR_INTERNAL, "cannot start the stream probe thread: %s", strerror(rc));
	}
	reg->probing = true;
	return 0;
}

void http_streams_cleanup(struct http_streams *reg)
{
	pthread_cond_destroy(&reg->wake);
	pthread_mutex_destroy(&reg->lock);
}

/* The client closed or reset the connection (it may still have sent bytes before). */
static bool peer_gone(const struct http_stream *s)
{
	struct pollfd p = {.fd = s->fd, .events = POLLRDHUP};

	if (s->fd < 0 || poll(&p, 1, 0) <= 0)
		return false;
	return (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) != 0;
}

/* Nothing to send: suspends the connection (0) unless the client is gone.  Then the stream
 * ends as if complete: libmicrohttpd writes the last chunk (which fails, or reaches no
 * one) and, reading the next request, sees the end of the connection and frees it.  (Ending
 * it with an error instead leaves the connection marked closed but unfreed — its slot and
 * its descriptor taken — until some other connection's event wakes libmicrohttpd.)  Caller
 * holds s->lock; it is released. */
static ssize_t idle_unlock(struct http_stream *s)
{
	if (peer_gone(s)) {
		pthread_mutex_unlock(&s->lock);
		return MHD_CONTENT_READER_END_OF_STREAM;
	}
	s->drained = true;
	s->suspended = true;
	mhd.suspend_connection(s->conn);
	pthread_mutex_unlock(&s->lock);
	return 0;
}

static ssize_t on_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct http_stream *s = cls;
	ssize_t n;
	(void)pos;

	for (;;) {
		pthread_mutex_lock(&s->lock);
		if (s->closing) {
			pthread_mutex_unlock(&s->lock);
			return MHD_CONTENT_READER_END_WITH_ERROR;
		}
		if (s->drained && !s->pending)
			return idle_unlock(s); /* resumed by the probe */
		s->pending = false;
		s->drained = false;
		pthread_mutex_unlock(&s->lock);
		n = s->ops->read(s->ctx, buf, max);
		if (n == HTTP_STREAM_END)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (n < 0)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		if (n > 0)
			return n;
		pthread_mutex_lock(&s->lock);
		if (!s->pending && !s->closing)
			return idle_unlock(s);
		pthread_mutex_unlock(&s->lock); /* woken during the read: read again */
	}
}

static void stream_free(struct http_stream *s)
{
	struct http_streams *reg = s->reg;

	s->ops->free(s->ctx); /* after it, no wake runs for s */
	pthread_mutex_lock(&reg->lock);
	if (s->prev)
		s->prev->next = s->next;
	else if (reg->head == s)
		reg->head = s->next;
	if (s->next)
		s->next->prev = s->prev;
	pthread_mutex_unlock(&reg->lock);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

static void on_free(void *cls)
{
	stream_free(cls);
}

struct MHD_Response *http_stream_response(struct http_streams *reg, struct MHD_Connection *conn,
					  struct http_response *w)
{
	struct http_stream *s = calloc(1, sizeof *s);
	const union MHD_ConnectionInfo *ci = mhd.get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct MHD_Response *r;
	uint64_t len = w->stream_len == HTTP_STREAM_UNKNOWN_LEN ? MHD_SIZE_UNKNOWN : w->stream_len;

	if (!s)
		return NULL; /* w still owns the stream; http_resp_cleanup frees it */
	s->reg = reg;
	s->conn = conn;
	s->fd = ci ? ci->connect_fd : -1;
	s->ops = w->stream_ops;
	s->ctx = w->stream_ctx;
	w->stream_ops = NULL;
	w->stream_ctx = NULL;
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_lock(&reg->lock);
	s->closing = reg->closing;
	s->next = reg->head;
	if (reg->head)
		reg->head->prev = s;
	reg->head = s;
	pthread_mutex_unlock(&reg->lock);
	if (s->ops->start && s->ops->start(s->ctx, s) < 0) {
		stream_free(s);
		return NULL;
	}
	r = mhd.create_response_from_callback(len, BLOCK_SIZE, on_read, s, on_free);
	if (!r)
		stream_free(s);
	return r;
}

void http_streams_close(struct http_streams *reg)
{
	pthread_mutex_lock(&reg->lock);
	reg->closing = true;
	pthread_cond_signal(&reg->wake);
	for (struct http_stream *s = reg->head; s; s = s->next) {
		pthread_mutex_lock(&s->lock);
		s->closing = true;
		resume_locked(s);
		pthread_mutex_unlock(&s->lock);
	}
	pthread_mutex_unlock(&reg->lock);
	if (reg->probing) {
		pthread_join(reg->probe, NULL);
		reg->probing = false;
	}
}
