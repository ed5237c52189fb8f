/* GET /api/v1/process/{id}/waitForCompletion?timeout=<ms>: Concord's blocking wait for the
 * end of a process.  The answer is the ProcessEntry once the process is FINISHED, FAILED,
 * CANCELLED or TIMED_OUT, or 408 with the entry as it is when the timeout passes first.
 *
 * The one handler that waits for a process (DESIGN.md §2): on a worker thread, which it
 * holds while it waits, so at most WAITERS_MAX requests wait at once (more are 503 with
 * Retry-After) and none waits longer than WAIT_MAX_MS.  The end of a process wakes the
 * waiters (queue/supervise/logwatch.h, which also hears the other nodes); they read the status again
 * at least every WAIT_TICK_MS too, as Concord polls.  api_process_waits_end (at shutdown)
 * ends every wait at once with the entry as it is. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "api/doc_schemas.h"
#include "api/process_access.h"
#include "api/process_json.h"
#include "api/process_wait.h"
#include "api/routes.h"
#include "base/datetime.h"
#include "base/str.h"
#include "queue/supervise/logwatch.h"

#define WAIT_TICK_MS 1000
#define WAIT_MAX_MS (10 * 60 * 1000)
#define WAITERS_MAX 4

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER; /* CLOCK_REALTIME */
/* Counts the changes heard: a waiter notes it before it reads the status and sleeps only
 * while it is unchanged, so a change heard while it was reading is not lost (it was: the
 * waiter then slept the whole tick and saw the end up to WAIT_TICK_MS late). */
static uint64_t generation;
static unsigned n_waiters;
static bool ending;

static void on_change(void *ctx)
{
	(void)ctx;
	pthread_mutex_lock(&lock);
	generation++;
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&lock);
}

static uint64_t generation_now(void)
{
	uint64_t g;

	pthread_mutex_lock(&lock);
	g = generation;
	pthread_mutex_unlock(&lock);
	return g;
}

void api_process_waits_end(void)
{
	pthread_mutex_lock(&lock);
	ending = true;
	pthread_cond_broadcast(&changed);
	pthread_mutex_unlock(&lock);
}

/* Sleeps until a process changes after `seen` (generation_now before the last read), `ms`
 * pass, or the server ends; false when it ends. */
static bool pause_ms(int64_t ms, uint64_t seen)
{
	struct timespec until;
	bool go_on;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += ms / 1000;
	until.tv_nsec += (ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&lock);
	while (!ending && generation == seen && pthread_cond_timedwait(&changed, &lock, &until) != ETIMEDOUT)
		;
	go_on = !ending;
	pthread_mutex_unlock(&lock);
	return go_on;
}

static bool take_slot(void)
{
	bool ok;

	pthread_mutex_lock(&lock);
	ok = !ending && n_waiters < WAITERS_MAX;
	if (ok)
		n_waiters++;
	pthread_mutex_unlock(&lock);
	return ok;
}

static void give_slot(void)
{
	pthread_mutex_lock(&lock);
	n_waiters--;
	pthread_mutex_unlock(&lock);
}

/* timeout in ms: absent or -1 (Concord's default, "no limit") is WAIT_MAX_MS. */
static int read_timeout(struct api_call *c, int64_t *ms)
{
	const char *t = http_query(c->req, "timeout");

	*ms = WAIT_MAX_MS;
	if (!t || !*t)
		return 0;
	if (str_to_i64(str_from(t), -1, INT64_MAX / 2, ms, "timeout", &c->err))
		return -ERR_INVALID;
	if (*ms < 0 || *ms > WAIT_MAX_MS)
		*ms = WAIT_MAX_MS;
	return 0;
}

/* p read again, in place. */
static int reread(struct api_call *c, struct process *p)
{
	char id[UUID_STR_LEN];

	memcpy(id, p->instance_id, sizeof id);
	store_process_cleanup(p);
	return store_process_get(c->db, id, p, &c->err);
}

/* Reads p again until it is final or `deadline` passes; *done tells which.  Once more
 * right after subscribing: an end between the caller's read and the subscription is heard
 * by no one. */
static int wait_final(struct api_call *c, struct process *p, int64_t deadline, bool *done)
{
	struct logwatch_sub *sub = logwatch_subscribe(p->instance_id, on_change, NULL);
	uint64_t seen = generation_now();
	int64_t now;
	int rc;

	if (!sub)
		return api_fail(c, ERR_INTERNAL, "out of memory");
	rc = reread(c, p);
	while (rc == 0 && !(*done = (PS_BIT(p->status) & PS_TERMINAL) != 0) && (now = dt_now_ms()) < deadline) {
		bool go_on = pause_ms(deadline - now < WAIT_TICK_MS ? deadline - now : WAIT_TICK_MS, seen);

		seen = generation_now();
		if ((rc = reread(c, p)) || !go_on)
			break;
	}
	logwatch_unsubscribe(sub);
	*done = rc == 0 && (PS_BIT(p->status) & PS_TERMINAL) != 0;
	return rc;
}

static int wait_for_completion(struct api_call *c)
{
	struct process p;
	json_t *v = NULL;
	int64_t ms;
	bool done = false;
	int rc;

	if ((rc = read_timeout(c, &ms)) || (rc = api_process_load(c, api_param(c, "id"), PROC_READ, &p)))
		return rc;
	if (!(PS_BIT(p.status) & PS_TERMINAL)) {
		if (!take_slot()) {
			store_process_cleanup(&p);
			http_resp_header(c->resp, "Retry-After", "1");
			return api_fail(c, ERR_UNAVAILABLE,
					"Too many requests wait for processes (at most %d at once): poll "
					"GET /api/v2/process/{id} instead, or try again",
					WAITERS_MAX);
		}
		rc = wait_final(c, &p, dt_now_ms() + ms, &done);
		give_slot();
		if (rc) {
			store_process_cleanup(&p); /* what the failed read left */
			return rc;
		}
	} else {
		done = true;
	}
	rc = api_process_json(c, &p, 0, &v);
	store_process_cleanup(&p);
	if (rc)
		return rc;
	http_resp_json(c->resp, done ? 200 : 408, v);
	return 0;
}

static const struct api_doc doc_wait = {
    .summary = "Wait for a process to end (at most `timeout` ms, 10 minutes at most): its record, or 408 with "
	       "it when the time is up",
    .params = (const struct api_param_doc[]){DOC_PROCESS_ID,
					     {"timeout", "integer", "milliseconds; -1 or absent: the longest wait"},
					     {0}},
    .response = "{'type':'object'}",
    .errors = "400 403 404 503",
};

const struct api_route api_process_wait_routes[] = {
    {"GET", "/api/v1/process/{id}/waitForCompletion", wait_for_completion, API_SLOW, &doc_wait},
    {0},
};
