/* The retention thread (retention.h). */
#include "queue/end/retention.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "base/datetime.h"
#include "base/log.h"

struct retention {
	struct retention_cfg cfg;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	bool stopping;
};

/* Sleeps ms unless stopped first; false once stopping. */
static bool nap(struct retention *r, int64_t ms)
{
	struct timespec ts;
	bool go;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&r->lock);
	while (!r->stopping && pthread_cond_timedwait(&r->wake, &r->lock, &ts) == 0)
		;
	go = !r->stopping;
	pthread_mutex_unlock(&r->lock);
	return go;
}

/* Every batch of one part; the number of processes touched. */
static uint64_t clean_part(struct retention *r, struct store_conn *c, enum retention_part part)
{
	struct retention_cursor cur = {{0}};
	int64_t cutoff = dt_now_ms() - r->cfg.keep_s[part] * 1000;
	uint64_t total = 0;
	size_t n;
	struct err e;

	do {
		if (store_retention_batch(c, part, cutoff, r->cfg.batch, &cur, &n, &e)) {
			LOG_W("retention: cannot delete old %s: %s (trying again next pass)", retention_part_name(part),
			      e.msg);
			break;
		}
		total += n;
	} while (n && nap(r, r->cfg.pause_ms));
	return total;
}

static void pass(struct retention *r, struct store_conn *c)
{
	for (int p = 0; p < RET__COUNT; p++) {
		uint64_t n;
		int64_t t0;

		if (!r->cfg.keep_s[p])
			continue;
		t0 = dt_mono_ns();
		n = clean_part(r, c, (enum retention_part)p);
		if (n && p == RET_AUDIT)
			LOG_I("retention: %llu audit log entries older than %lld s deleted in %lld ms",
			      (unsigned long long)n, (long long)r->cfg.keep_s[p],
			      (long long)((dt_mono_ns() - t0) / 1000000));
		else if (n)
			LOG_I("retention: %s of %llu finished process(es) older than %lld s deleted in %lld ms",
			      p == RET_PROCESSES ? "everything" : retention_part_name((enum retention_part)p),
			      (unsigned long long)n, (long long)r->cfg.keep_s[p], (long long)((dt_mono_ns() - t0) / 1000000));
		if (r->stopping)
			return;
	}
}

static void *main_loop(void *arg)
{
	struct retention *r = arg;
	struct store_conn *c = NULL;
	int64_t first = r->cfg.interval_s < 30 ? r->cfg.interval_s : 30;
	struct err e;

	for (int64_t wait_s = first; nap(r, wait_s * 1000); wait_s = r->cfg.interval_s) {
		if (!c && !(c = store_conn(r->cfg.store, &e))) {
			LOG_W("retention: no database connection: %s", e.msg);
			continue;
		}
		pass(r, c);
	}
	return NULL;
}

int retention_start(const struct retention_cfg *cfg, struct retention **out, struct err *e)
{
	struct retention *r;
	bool any = false;

	*out = NULL;
	for (int p = 0; p < RET__COUNT; p++)
		any = any || cfg->keep_s[p] > 0;
	if (!any)
		return 0;
	if (!(r = calloc(1, sizeof *r)))
		return err_set(e, ERR_INTERNAL, "out of memory");
	r->cfg = *cfg;
	if (!r->cfg.interval_s)
		r->cfg.interval_s = 1;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->wake, NULL);
	if (pthread_create(&r->thread, NULL, main_loop, r) != 0) {
		pthread_mutex_destroy(&r->lock);
		pthread_cond_destroy(&r->wake);
		free(r);
		return err_set(e, ERR_INTERNAL, "cannot start the retention thread");
	}
	*out = r;
	return 0;
}

void retention_stop(struct retention *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->stopping = true;
	pthread_cond_broadcast(&r->wake);
	pthread_mutex_unlock(&r->lock);
	pthread_join(r->thread, NULL);
	pthread_mutex_destroy(&r->lock);
	pthread_cond_destroy(&r->wake);
	free(r);
}
