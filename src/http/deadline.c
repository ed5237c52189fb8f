#include "http/deadline.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#include "base/datetime.h"
#include "base/log.h"

struct http_deadline_conn {
	struct http_deadline_conn *prev, *next;
	struct http_deadline_list *list; /* NULL: on none */
	int64_t start_ns, deadline_ns;
	int fd;
};

static void unlink_conn(struct http_deadline_conn *c)
{
	struct http_deadline_list *l = c->list;

	if (!l)
		return;
	if (c->prev)
		c->prev->next = c->next;
	else
		l->head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	else
		l->tail = c->prev;
	c->prev = c->next = NULL;
	c->list = NULL;
}

/* Inserts c by its deadline, searching from the tail: deadlines mostly come in order, so the
 * search is short. */
static void insert_conn(struct http_deadline_list *l, struct http_deadline_conn *c)
{
	struct http_deadline_conn *after = l->tail;

	while (after && after->deadline_ns > c->deadline_ns)
		after = after->prev;
	c->prev = after;
	c->next = after ? after->next : l->head;
	if (c->next)
		c->next->prev = c;
	else
		l->tail = c;
	if (after)
		after->next = c;
	else
		l->head = c;
	c->list = l;
}

/* c waits for headers from now on. */
static void restart_conn(struct http_deadlines *d, struct http_deadline_conn *c)
{
	unlink_conn(c);
	c->start_ns = dt_mono_ns();
	c->deadline_ns = c->start_ns + d->header_ns;
	insert_conn(&d->headers, c);
}

/* Shuts down every connection of l past its deadline; the caller holds the lock. */
static unsigned expire(struct http_deadline_list *l, int64_t now)
{
	unsigned n = 0;

	while (l->head && now >= l->head->deadline_ns) {
		struct http_deadline_conn *c = l->head;

		unlink_conn(c);
		shutdown(c->fd, SHUT_RDWR);
		n++;
	}
	return n;
}

static void *timer_main(void *arg)
{
	struct http_deadlines *d = arg;
	/* A tenth of the shorter limit, at most a second: a connection lives at most 10% longer. */
	int64_t tick_ns = d->header_ns / 10 < 1000000000 ? d->header_ns / 10 : 1000000000;

	pthread_mutex_lock(&d->lock);
	while (!d->stopping) {
		struct timespec ts;
		int64_t now = dt_mono_ns();
		unsigned n_headers = expire(&d->headers, now), n_bodies = expire(&d->bodies, now);

		/* Mostly idle keep-alive connections, which clients reopen: no warning. */
		if (n_headers)
			LOG_I("closed %u connection(s) whose request headers did not arrive within %lld s", n_headers,
			      (long long)(d->header_ns / 1000000000));
		if (n_bodies)
			LOG_W("closed %u connection(s) whose request did not arrive within %lld s", n_bodies,
			      (long long)(d->request_ns / 1000000000));
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_nsec += tick_ns % 1000000000;
		ts.tv_sec += tick_ns / 1000000000 + ts.tv_nsec / 1000000000;
		ts.tv_nsec %= 1000000000;
		pthread_cond_timedwait(&d->wake, &d->lock, &ts);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

int http_deadlines_init(struct http_deadlines *d, unsigned header_s, unsigned request_s, struct err *e)
{
	pthread_condattr_t ca;
	int rc;

	*d = (struct http_deadlines){
	    .header_ns = (int64_t)(header_s < request_s ? header_s : request_s) * 1000000000,
	    .request_ns = (int64_t)request_s * 1000000000,
	};
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
	restart_conn(d, c);
	pthread_mutex_unlock(&d->lock);
	return c;
}

void http_deadline_conn_headers(struct http_deadlines *d, struct http_deadline_conn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&d->lock);
	if (c->list == &d->headers) {
		unlink_conn(c);
		c->deadline_ns = c->start_ns + d->request_ns;
		insert_conn(&d->bodies, c);
	}
	pthread_mutex_unlock(&d->lock);
}

void http_deadline_conn_busy(struct http_deadlines *d, struct http_deadline_conn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&d->lock);
	unlink_conn(c);
	pthread_mutex_unlock(&d->lock);
}

void http_deadline_conn_next(struct http_deadlines *d, struct http_deadline_conn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&d->lock);
	restart_conn(d, c);
	pthread_mutex_unlock(&d->lock);
}

void http_deadline_conn_closed(struct http_deadlines *d, struct http_deadline_conn *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&d->lock);
	unlink_conn(c);
	pthread_mutex_unlock(&d->lock);
	free(c);
}
