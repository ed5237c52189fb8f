#include "http/stream.h"

#include <stdlib.h>

#define BLOCK_SIZE (32 * 1024)

struct http_stream {
	struct http_streams *reg;
	struct MHD_Connection *conn;
	const struct http_stream_ops *ops;
	void *ctx;
	pthread_mutex_t lock;
	bool suspended; /* the reader suspended the connection; a wake must resume it */
	bool pending;	/* a wake came while no read was suspended: read again */
	bool closing;	/* the server stops: end the stream */
	struct http_stream *prev, *next;
};

void http_streams_init(struct http_streams *reg)
{
	pthread_mutex_init(&reg->lock, NULL);
	reg->head = NULL;
	reg->closing = false;
}

void http_streams_cleanup(struct http_streams *reg)
{
	pthread_mutex_destroy(&reg->lock);
}

/* Caller holds s->lock. */
static void resume_locked(struct http_stream *s)
{
	if (s->suspended) {
		s->suspended = false;
		mhd.resume_connection(s->conn);
	} else {
		s->pending = true;
	}
}

void http_stream_wake(struct http_stream *s)
{
	pthread_mutex_lock(&s->lock);
	resume_locked(s);
	pthread_mutex_unlock(&s->lock);
}

static ssize_t on_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct http_stream *s = cls;
	ssize_t n;
	(void)pos;

	for (;;) {
		pthread_mutex_lock(&s->lock);
		s->pending = false;
		if (s->closing) {
			pthread_mutex_unlock(&s->lock);
			return MHD_CONTENT_READER_END_WITH_ERROR;
		}
		pthread_mutex_unlock(&s->lock);
		n = s->ops->read(s->ctx, buf, max);
		if (n == HTTP_STREAM_END)
			return MHD_CONTENT_READER_END_OF_STREAM;
		if (n < 0)
			return MHD_CONTENT_READER_END_WITH_ERROR;
		if (n > 0)
			return n;
		pthread_mutex_lock(&s->lock);
		if (!s->pending && !s->closing) {
			s->suspended = true;
			mhd.suspend_connection(s->conn);
			pthread_mutex_unlock(&s->lock);
			return 0;
		}
		pthread_mutex_unlock(&s->lock);
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
	struct MHD_Response *r;
	uint64_t len = w->stream_len == HTTP_STREAM_UNKNOWN_LEN ? MHD_SIZE_UNKNOWN : w->stream_len;

	if (!s)
		return NULL; /* w still owns the stream; http_resp_cleanup frees it */
	s->reg = reg;
	s->conn = conn;
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
	for (struct http_stream *s = reg->head; s; s = s->next) {
		pthread_mutex_lock(&s->lock);
		s->closing = true;
		resume_locked(s);
		pthread_mutex_unlock(&s->lock);
	}
	pthread_mutex_unlock(&reg->lock);
}
