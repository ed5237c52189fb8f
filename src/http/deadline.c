#include "http/deadline.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "base/datetime.h"
#include "base/log.h"

struct http_deadline_conn {
	struct http_deadline_conn *prev, *next;
	int64_t start_ns;
	int fd;
	bool linked;
};

static void unlink_conn(struct http_deadlines *d, struct http_deadline_conn *c)
{
	if (!c->linked)
		return;
	if (c->prev)
		c->prev->next = c->next;
	else
		d->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		d->tail = c->prev;
	c->prev = c->next = NULL;
	c->linked = false;
}

/* Appending with the current time keeps the list ordered by start. */
static void append_conn(struct http_deadlines *d, struct http_deadline_conn *c)
{
	c->start_ns = dt_mono_ns();
	c->prev = d->tail;
	c->next = NULL;
	if (d->tail)
		d->tail->next = c;
	else
		d->head = c;
	d->tail = c;
	c->linked = true;
}

/* Shuts down every connection past its deadline; the caller holds the lock. */
static unsigned expire(struct http_deadlines *d, int64_t now)
{
	unsigned n = 0;

	while (d->head && now - d->head->start_ns >= d->limit_ns) {
		struct http_deadline_conn *c = d->head;

		unlink_conn(d, c);
		shutdown(c->fd, SHUT_RDWR);
		n++;
	}
	return n;
}

static void *timer_main(void *arg)
{
	struct http_deadlines *d = arg;
	/* A tenth of the limit, at most a second: a connection lives at most 10% longer. */
	int64_t tick_ns = d->limit_ns / 10 < 1000000000 ? d->limit_ns / 10 : 1000000000;

	pthread_mutex_lock(&d->lock);
	while (!d->stopping) {
		struct timespec ts;
		unsigned n = expire(d, dt_mono_ns());

		if (n)
			LOG_W("closed %u connection(s) whose request did not arrive within %lld s", n,
			      (long long)(d->limit_ns / 1000000000));
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += tick_ns % 1000000000;
		ts.tv_sec += tick_ns / 1000000000 + ts.tv_nsec / 1000000000;
		ts.tv_nsec %= 1000000000;
		pthread_cond_timedwait(&d->wake, &d->lock, &ts);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

int http_deadlines_init(struct http_deadlines *d, unsigned limit_s, struct err *e)
{
	pthread_condattr_t ca;
	int rc;

	*d = (struct http_deadlines){.limit_ns = (int64_t)limit_s * 1000000000};
	pthread_mutex_init(&d->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&d->wake, &ca);
	pthread_condattr_destroy(&ca);
	rc = pthread_create(&d->thread, NULL, timer_main, d);
	if (rc) {
		pthread_cond_destroy(&d->wake);
		pthread_mutex_destroy(&d->lock);
		return err_set(e, ERR_INTERNAL, "cannot start the request deadline thread: %s", strerror(rc));
	}
	d->started = true;
	return 0;
}

void http_deadlines_cleanup(struct http_deadlines *d)
{
	if (!d->started)
		return;
	pthread_mutex_lock(&d->lock);
	d->stopping = true;
	pthread_cond_signal(&d->wake);
	pthread_mutex_unlock(&d->lock);
	pthread_join(d->thread, NULL);
	pthread_cond_destroy(&d->wake);
	pthread_mutex_destroy(&d->lock);
	d->started = false;
}

struct http_deadline_conn *http_deadline_conn_started(struct http_deadlines *d, int fd)
{
	struct http_deadline_conn *c = calloc(1, sizeof *c);

	if (!c)
		return NULL;
	c->fd = fd;
	pthread_mutex_lock(&d->lock);
	append_conn(d, c);
	pthread_mutex_unlock(&d->lock);
	return c;
}

void http_deadline_conn_busy(struct http_deadlines *d, struct http_deadline_conn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&d->lock);
	unlink_conn(d, c);
	pthread_mutex_unlock(&d->lock);
}

void http_deadline_conn_next(struct http_deadlines *d, struct http_deadline_conn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&d->lock);
	unlink_conn(d, c);
	append_conn(d, c);
	pthread_mutex_unlock(&d->lock);
}

void http_deadline_conn_closed(struct http_deadlines *d, struct http_deadline_conn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&d->lock);
	unlink_conn(d, c);
	pthread_mutex_unlock(&d->lock);
	free(c);
}
