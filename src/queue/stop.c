/* Stopping a process wherever it runs (queue.h queue_stop): the one path of the API's
 * stop, exclusive groups (cancelOld) and the `concord` task's kill.  What is not running
 * anywhere is cancelled at once with a compare-and-set; a claimed one is stopped by its
 * supervisor, on this node directly, on another through the store's notifications
 * (listen.c), asked again until it is final, since a notification finds nothing when it
 * arrives between another node's claim and the registration of its supervisor, and a
 * process may suspend before its supervisor sees the request (then it is cancelled here
 * as any suspended one).  A stop that does not wait is followed through by this node's
 * stopper thread, never by the caller (the dispatcher must not stall). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/datetime.h"
#include "base/log.h"
#include "base/str.h"
#include "queue/internal.h"

/* How often a stop asks the other nodes again while the process is not final. */
#define ASK_AGAIN_MS 500
/* How often a stop looks at a process that runs on another node. */
#define LOOK_AGAIN_MS 20

enum look { LOOK_FINAL, LOOK_HERE, LOOK_ELSEWHERE };

static bool stopping(struct queue *q)
{
	bool yes;

	pthread_mutex_lock(&q->lock);
	yes = q->stopping;
	pthread_mutex_unlock(&q->lock);
	return yes;
}

/* One look at id: LOOK_FINAL when it is final (or was cancelled now, with what follows an
 * end); else its supervisor was asked to stop it: LOOK_HERE when it runs on this node,
 * LOOK_ELSEWHERE when the others were asked (ask) or a supervisor of this node has not
 * registered it yet.  why goes into its log first unless *logged.  < 0 when the store
 * failed. */
static int look(struct queue *q, struct store_conn *c, const char *id, const char *why, bool ask, bool *logged,
		struct err *e)
{
	for (int tries = 0; tries < 10; tries++) {
		struct process p;
		unsigned st;
		if (store_process_get(c, id, &p, e))
			return -1;
		st = PS_BIT(p.status);
		store_process_cleanup(&p);
		if (st & PS_TERMINAL)
			return LOOK_FINAL;
		if (st & PS_SERVER_SIDE) {
			if (store_process_transition(c, id, PS_SERVER_SIDE, PS_CANCELLED, e) == 0) {
				if (!*logged)
					queue_log_line(c, id, "WARN", "%s", why);
				*logged = true;
				queue_ended_server_side(q, c, id, PS_CANCELLED);
				return LOOK_FINAL;
			}
			if (e->code != ERR_CONFLICT)
				return -1;
			continue; /* it moved on meanwhile: look again */
		}
		if (!*logged)
			queue_log_line(c, id, "WARN", "%s", why);
		*logged = true;
		if (q && queue_stop_request(q, id))
			return LOOK_HERE;
		if (ask && q && q->listener && store_notify(c, QUEUE_CHANNEL_STOP, id, e))
			LOG_W("process %s: cannot ask the other nodes to stop it: %s", id, e->msg);
		return LOOK_ELSEWHERE;
	}
	return err_set(e, ERR_CONFLICT, "process %s changes its status too often to be stopped", id);
}

/* Looks at id until it is final or deadline (ms) passes; why is written once (not at all
 * when logged). */
static int follow(struct queue *q, struct store_conn *c, const char *id, const char *why, bool logged, int64_t deadline,
		  struct err *e)
{
	int64_t ask_at = 0;

	for (;;) {
		int64_t now = dt_now_ms();
		int rc = look(q, c, id, why, now >= ask_at, &logged, e);
		if (rc < 0 || rc == LOOK_FINAL)
			return rc < 0 ? -1 : 0;
		if (now >= ask_at)
			ask_at = now + ASK_AGAIN_MS;
		if (now >= deadline || (q && stopping(q)))
			return err_set(e, ERR_UNAVAILABLE, "process %s is still stopping", id);
		if (rc == LOOK_HERE && queue_wait_released(q, id, (unsigned)(deadline - now), e) == 0)
			continue; /* its supervisor is gone: final, or SUSPENDED (cancelled at the next look) */
		nanosleep(&(struct timespec){0, LOOK_AGAIN_MS * 1000000}, NULL);
	}
}

struct stop_job {
	struct queue *q;
	char id[UUID_STR_LEN];
	char why[512];
};

static void stop_job(void *arg)
{
	struct stop_job *j = arg;
	struct err e;
	struct store_conn *c = store_conn(j->q->cfg.store, &e);

	if (!c || follow(j->q, c, j->id, j->why, true, dt_now_ms() + queue_stop_wait_ms(j->q), &e))
		if (!stopping(j->q))
			LOG_W("process %s: cannot stop it: %s", j->id, e.msg);
	free(j);
}

int queue_stop(struct queue *q, struct store_conn *c, const char *id, const char *why, int64_t wait_ms, struct err *e)
{
	struct stop_job *j;
	bool logged = false;
	int rc;

	if (wait_ms > 0)
		return follow(q, c, id, why, false, dt_now_ms() + wait_ms, e);
	rc = look(q, c, id, why, true, &logged, e);
	if (rc < 0 || rc == LOOK_FINAL)
		return rc < 0 ? -1 : 0;
	if (!q || !q->stoppers)
		return 1;
	if (!(j = calloc(1, sizeof *j)) || str_fmt(j->id, sizeof j->id, "%s", id)) {
		free(j);
		return err_set(e, ERR_INTERNAL, "out of memory");
	}
	j->q = q;
	str_fmt_cut(j->why, sizeof j->why, "%s", why);
	if (workq_push(q->stoppers, stop_job, j)) {
		free(j);
		LOG_W("process %s: cannot follow its stop (out of memory)", id);
	}
	return 1;
}

int64_t queue_stop_wait_ms(struct queue *q)
{
	return (q ? (int64_t)q->cfg.stop_grace_ms : 5000) + 5000;
}
