/* Wake-ups from the other nodes of one database (store_listen: PostgreSQL's LISTEN): a
 * thread with a connection of its own waits for them.  QUEUE_CHANNEL_WAKE wakes this
 * node's dispatcher (a start through another node: whoever is free claims it);
 * QUEUE_CHANNEL_STOP stops a process that runs here (a stop through another node);
 * QUEUE_CHANNEL_LOG wakes this node's followers of a log that grew elsewhere.  After
 * a lost connection it wakes the dispatcher (notifications may have been missed; the
 * heartbeat also claims) and listens again once the database answers. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <unistd.h>

#include "base/log.h"
#include "queue/internal.h"
#include "queue/supervise/logwatch.h"

static void *listener_main(void *arg)
{
	struct queue *q = arg;
	char channel[64], payload[128];
	bool failing = false;

	for (;;) {
		struct err e;
		int rc = store_listener_wait(q->listener, q->listen_wake[0], -1, channel, sizeof channel, payload,
					     sizeof payload, &e);
		if (rc == 2)
			break;
		if (rc == 1) {
			if (failing)
				LOG_I("listening to the other nodes again");
			failing = false;
			if (strcmp(channel, QUEUE_CHANNEL_WAKE) == 0)
				queue_wake_local(q);
			else if (strcmp(channel, QUEUE_CHANNEL_STOP) == 0)
				queue_stop_request(q, payload);
			else if (strcmp(channel, QUEUE_CHANNEL_LOG) == 0)
				logwatch_notify(payload);
			continue;
		}
		if (rc == 0)
			continue;
		if (!failing)
			LOG_W("cannot listen to the other nodes: %s (trying again every second)", e.msg);
		failing = true;
		queue_wake_local(q);
		struct pollfd p = {q->listen_wake[0], POLLIN, 0};
		if (poll(&p, 1, 1000) > 0)
			break;
	}
	return NULL;
}

int queue_listen_start(struct queue *q, struct err *e)
{
	static const char *const channels[] = {QUEUE_CHANNEL_WAKE, QUEUE_CHANNEL_STOP, QUEUE_CHANNEL_LOG};

	q->listen_wake[0] = q->listen_wake[1] = -1;
	q->listener = store_listen(q->cfg.store, channels, sizeof channels / sizeof channels[0], e);
	if (!q->listener)
		return e->code ? -1 : 0;
	if (pipe2(q->listen_wake, O_CLOEXEC) < 0) {
		err_set(e, ERR_INTERNAL, "pipe: %s", strerror(errno));
		goto fail;
	}
	if (pthread_create(&q->listener_thread, NULL, listener_main, q) != 0) {
		err_set(e, ERR_INTERNAL, "cannot start the listener thread");
		goto fail;
	}
	return 0;
fail:
	store_listener_close(q->listener);
	q->listener = NULL;
	return -1;
}

void queue_listen_stop(struct queue *q)
{
	char b = 1;

	if (!q->listener)
		return;
	if (write(q->listen_wake[1], &b, 1) < 0)
		LOG_W("cannot wake the listener thread: %s", strerror(errno));
	pthread_join(q->listener_thread, NULL);
	store_listener_close(q->listener);
	q->listener = NULL;
	close(q->listen_wake[0]);
	close(q->listen_wake[1]);
}

void queue_log_grew(struct queue *q, struct store_conn *c, const char *id)
{
	struct err e;

	if (q && q->listener && store_notify(c, QUEUE_CHANNEL_LOG, id, &e))
		LOG_W("process %s: cannot tell the other nodes that its log grew: %s", id, e.msg);
}
