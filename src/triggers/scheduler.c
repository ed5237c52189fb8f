/* Cron triggers: one thread that sleeps until the earliest next fire time of an enabled
 * cron trigger (or until a refresh wakes it), then fires every due trigger once per
 * minute.  The minute is claimed in the store before the process starts (compare-and-set
 * on last_fire_at), so a minute never fires twice, also across restarts. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/datetime.h"
#include "base/log.h"
#include "base/str.h"
#include "store/meta.h"
#include "store/users.h"
#include "triggers/internal.h"

#define MINUTE_MS 60000
/* The longest sleep without looking at the store (a clock step, another node's change). */
#define MAX_SLEEP_MS 60000
/* server_meta key of the test clock's anchor (Unix ms), shared by the nodes of a database. */
#define TEST_ANCHOR_META "test_cron_anchor_ms"

int64_t triggers_now_ms(const struct triggers *t)
{
	int64_t now = dt_now_ms();

	if (!t || !t->cfg.test_minute_seconds)
		return now;
	return t->anchor_ms + (now - t->anchor_ms) * 60 / (int64_t)t->cfg.test_minute_seconds;
}

/* Real milliseconds that last span_ms on the scheduler's clock (span_ms > 0). */
static int64_t real_span_ms(const struct triggers *t, int64_t span_ms)
{
	if (t->cfg.test_minute_seconds)
		return span_ms * (int64_t)t->cfg.test_minute_seconds / 60 + 1;
	return span_ms;
}

/* Real milliseconds until the scheduler's clock shows at_ms. */
static int64_t real_wait_ms(const struct triggers *t, int64_t at_ms)
{
	int64_t d = at_ms - triggers_now_ms(t);

	return d <= 0 ? 0 : real_span_ms(t, d);
}

void triggers_wake(struct triggers *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->mu);
	t->wake = true;
	pthread_cond_signal(&t->cv);
	pthread_mutex_unlock(&t->mu);
}

static void fire_cron(struct triggers *t, struct store_conn *c, const struct trigger *tr, int64_t now)
{
	struct user who;
	int64_t minute = tr->next_fire_at, next;
	char at[DT_ISO_LEN], id[UUID_STR_LEN];
	json_t *event;
	struct err e;
	int rc;

	/* The next minute after now: minutes missed while the server was busy are skipped. */
	if (triggers_cron_next(tr->cfg, now > minute ? now : minute, &next, &e)) {
		LOG_W("cron trigger %s (repository %s): %s; it is not scheduled any more", tr->id, tr->repo_id, e.msg);
		next = 0;
	}
	if (now - minute >= MINUTE_MS) {
		/* A stale time (the repository was disabled meanwhile) is not replayed. */
		if (store_trigger_set_next(c, tr->id, next, &e))
			LOG_W("cron trigger %s: %s", tr->id, e.msg);
		return;
	}
	if ((rc = store_trigger_claim_fire(c, tr->id, minute, next, &e)) <= 0) {
		if (rc < 0 || store_trigger_set_next(c, tr->id, next, &e))
			LOG_W("cron trigger %s: %s", tr->id, e.msg);
		return;
	}
	if (triggers_run_as(t, c, tr, &who, &e)) {
		LOG_W("cron trigger %s (repository %s, entry point %s) did not start a process: %s", tr->id,
		      tr->repo_id, tr->entry_point, e.msg);
		return;
	}
	dt_format_iso(minute, at);
	event = json_pack("{s:s, s:O}", "fireAt", at, "spec", json_object_get(tr->cfg, "spec"));
	struct trigger_fire f = {.tr = tr, .event = event, .initiator_id = who.id, .initiator = who.username};
	if (triggers_fire(t, c, &f, id, &e))
		LOG_W("cron trigger %s (repository %s, entry point %s) did not start a process: %s", tr->id,
		      tr->repo_id, tr->entry_point, e.msg);
	else
		LOG_I("cron trigger %s fired for %s: process %s", tr->id, at, id);
	json_decref(event);
}

static void fire_due(struct triggers *t, struct store_conn *c)
{
	struct trigger *due = NULL;
	size_t n = 0;
	struct err e;
	int64_t now = triggers_now_ms(t);

	if (store_triggers_due(c, now, &due, &n, &e)) {
		LOG_W("cron triggers: %s", e.msg);
		return;
	}
	for (size_t i = 0; i < n; i++)
		if (strcmp(due[i].event_source, "cron") == 0)
			fire_cron(t, c, &due[i], now);
	store_trigger_free_list(due, n);
}

/* Cron triggers whose next minute is over (the server was down) start from now.  A minute
 * under way is left to fire_due (here or on another node that is about to claim it). */
static void skip_missed(struct triggers *t, struct store_conn *c)
{
	struct trigger *v = NULL;
	size_t n = 0;
	struct err e;
	int64_t now = triggers_now_ms(t), next;

	if (store_triggers_of_source(c, "cron", &v, &n, &e)) {
		LOG_W("cron triggers: %s", e.msg);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		if (v[i].next_fire_at > now - MINUTE_MS)
			continue;
		if (triggers_cron_next(v[i].cfg, now, &next, &e) || store_trigger_set_next(c, v[i].id, next, &e))
			LOG_W("cron trigger %s: %s", v[i].id, e.msg);
	}
	store_trigger_free_list(v, n);
}

static void sleep_until(struct triggers *t, int64_t next)
{
	/* The cap is on the scheduler's clock too: with the test clock, a trigger stored
	 * through another node is seen as soon (in test minutes) as in production. */
	int64_t cap = real_span_ms(t, MAX_SLEEP_MS), ms = next ? real_wait_ms(t, next) : cap;
	struct timespec ts;

	if (ms > cap)
		ms = cap;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	pthread_mutex_lock(&t->mu);
	while (!t->stop && !t->wake && ms > 0)
		if (pthread_cond_timedwait(&t->cv, &t->mu, &ts) == ETIMEDOUT)
			break;
	t->wake = false;
	pthread_mutex_unlock(&t->mu);
}

bool triggers_stopping(struct triggers *t)
{
	bool s;
	pthread_mutex_lock(&t->mu);
	s = t->stop;
	pthread_mutex_unlock(&t->mu);
	return s;
}

static void *scheduler_main(void *arg)
{
	struct triggers *t = arg;
	struct store_conn *c;
	struct err e;
	int64_t next;

	if (!(c = store_conn(t->cfg.store, &e))) {
		LOG_E("cron triggers stopped: %s", e.msg);
		return NULL;
	}
	skip_missed(t, c);
	while (!triggers_stopping(t)) {
		fire_due(t, c);
		if (store_triggers_next_fire(c, &next, &e)) {
			LOG_W("cron triggers: %s", e.msg);
			next = 0;
		}
		sleep_until(t, next);
	}
	return NULL;
}

/* The test clock's anchor: the first start with the test clock on this database writes its
 * real time, every start (of any node) reads back what is there, so that all nodes of one
 * database show the same scheduler clock and claim the same minutes. */
static int test_anchor(struct store *s, int64_t *anchor, struct err *e)
{
	char v[32];
	struct store_conn *c;
	bool added;
	int rc;

	if (str_fmt(v, sizeof v, "%lld", (long long)*anchor))
		return err_set(e, ERR_INTERNAL, "test clock anchor: %lld does not fit", (long long)*anchor);
	if (!(c = store_conn(s, e)))
		return -1;
	if ((rc = store_meta_add(c, TEST_ANCHOR_META, v, &added, e)) ||
	    (rc = store_meta_get(c, TEST_ANCHOR_META, v, sizeof v, e)))
		return rc;
	/* Before the year 10000: the clock multiplies the time since the anchor by up to 60. */
	return str_to_i64(str_from(v), 0, 253402300799999, anchor, "server_meta " TEST_ANCHOR_META, e);
}

struct triggers *triggers_start(const struct triggers_cfg *cfg, struct err *e)
{
	struct triggers *t = calloc(1, sizeof *t);
	pthread_condattr_t ca;

	if (!t) {
		err_set(e, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	t->cfg = *cfg;
	t->anchor_ms = dt_now_ms();
	if (cfg->test_minute_seconds && test_anchor(cfg->store, &t->anchor_ms, e)) {
		free(t);
		return NULL;
	}
	pthread_mutex_init(&t->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&t->cv, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&t->thread, NULL, scheduler_main, t) != 0) {
		err_set(e, ERR_INTERNAL, "cannot start the cron trigger thread");
		triggers_stop(t);
		return NULL;
	}
	t->running = true;
	if (cfg->repos && pthread_create(&t->reread, NULL, triggers_reread_main, t) == 0)
		t->rereading = true;
	else if (cfg->repos)
		LOG_W("triggers: cannot start the thread that reads the repositories' triggers again");
	if (cfg->test_minute_seconds) {
		char from[DT_ISO_LEN];
		dt_format_iso(t->anchor_ms, from);
		LOG_W("cron triggers run on a test clock: one minute lasts %u s from %s (--test-cron-minute-seconds; "
		      "never in production)",
		      cfg->test_minute_seconds, from);
	}
	return t;
}

void triggers_stop(struct triggers *t)
{
	if (!t)
		return;
	pthread_mutex_lock(&t->mu);
	t->stop = true;
	pthread_cond_signal(&t->cv);
	pthread_mutex_unlock(&t->mu);
	if (t->running)
		pthread_join(t->thread, NULL);
	if (t->rereading) /* it stops between repositories (a fetch under way runs to its end) */
		pthread_join(t->reread, NULL);
	pthread_cond_destroy(&t->cv);
	pthread_mutex_destroy(&t->mu);
	free(t);
}

int triggers_refresh(struct triggers *t, struct store_conn *c, const struct repository *r, const struct model *m,
		     struct err *e)
{
	struct trigger *v = NULL;
	size_t n = 0;
	int rc;

	if ((rc = triggers_parse(m, r, triggers_now_ms(t), &v, &n, e)))
		return rc;
	rc = triggers_cron_policy(c, r, v, n, triggers_now_ms(t), e);
	if (rc == 0)
		rc = store_triggers_replace(c, r->id, v, n, e);
	store_trigger_free_list(v, n);
	if (rc == 0)
		triggers_wake(t);
	return rc;
}
