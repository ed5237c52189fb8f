#include "queue/supervise/logwatch.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Subscriptions live in a small hash of lists keyed by process id, under one mutex that
 * is also held while callbacks run: callbacks only wake a connection (microseconds), and
 * holding it makes logwatch_unsubscribe wait for a running callback for free.  So a
 * callback must never call logwatch_* itself. */

#define BUCKETS 64

struct logwatch_sub {
	struct logwatch_sub *next;
	logwatch_fn fn;
	void *ctx;
	size_t bucket;
	char id[];
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct logwatch_sub *table[BUCKETS];

static size_t bucket_of(const char *id)
{
	uint32_t h = 2166136261u;

	for (; *id; id++)
		h = (h ^ (unsigned char)*id) * 16777619u;
	return h % BUCKETS;
}

struct logwatch_sub *logwatch_subscribe(const char *id, logwatch_fn fn, void *ctx)
{
	size_t n = strlen(id);
	struct logwatch_sub *s = malloc(sizeof *s + n + 1);

	if (!s)
		return NULL;
	memcpy(s->id, id, n + 1);
	s->fn = fn;
	s->ctx = ctx;
	s->bucket = bucket_of(id);
	pthread_mutex_lock(&lock);
	s->next = table[s->bucket];
	table[s->bucket] = s;
	pthread_mutex_unlock(&lock);
	return s;
}

void logwatch_unsubscribe(struct logwatch_sub *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&lock);
	for (struct logwatch_sub **p = &table[s->bucket]; *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			break;
		}
	pthread_mutex_unlock(&lock);
	free(s);
}

static void wake(const char *id)
{
	size_t b = bucket_of(id);

	pthread_mutex_lock(&lock);
	for (struct logwatch_sub *s = table[b]; s; s = s->next)
		if (strcmp(s->id, id) == 0)
			s->fn(s->ctx);
	pthread_mutex_unlock(&lock);
}

void logwatch_notify(const char *id)
{
	wake(id);
}

/* Followers learn that the process ended from its status; waking them is enough. */
void logwatch_end(const char *id)
{
	wake(id);
}
