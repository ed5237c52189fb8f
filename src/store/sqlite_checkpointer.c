/* SQLite's checkpoints of the write-ahead log, off the writer's path (sqlite_checkpointer.h).
 *
 * With SQLite's automatic checkpoint, the commit that takes the log past its threshold
 * copies the log into the database file and syncs both before it returns — ~40 ms every
 * ~350 processes, during which the writer connection (sqlite_writer.c) is held and every
 * per-process transition waits: ~45% of all commit time under load (bench/RESULTS.md,
 * session 31).  Here the writer connection's commit only signals a thread of its own, which
 * checkpoints on its own connection in PASSIVE mode: it copies the log into the database
 * without taking the write lock, while the writer goes on appending.  Since the writer
 * starts the log over only once all of it was copied, and under steady writes a
 * background pass never catches up (the log grew past 300 MB), the writer's next commit
 * then checkpoints the rest itself: the few pages written meanwhile and the syncs, a few
 * ms instead of ~40.  Durability is unchanged: a commit is as durable as before when it
 * returns (`--durability`); only who copies the log into the database, and when, moves. */
#include "store/sqlite_checkpointer.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "base/err.h"
#include "base/log.h"
#include "store/sqlite_api.h"
#include "store/store_impl.h"

/* After a checkpoint, the next is asked for once this many more pages were written, unless
 * the log started over (a reader still on an older snapshot can keep it from copying all
 * of it, or from starting over). */
#define RETRY_PAGES 1000

struct sqlite_checkpointer {
	struct store *store;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	pthread_t thread;
	bool started; /* thread runs */
	bool failed;  /* it could not start or connect: the writer's commits checkpoint themselves */
	bool pending; /* a background pass is asked for */
	bool copied;  /* one ended: the writer's next commit checkpoints the rest */
	bool stop;
	int next_at; /* pages of log at which the next one is asked for */
	int last;    /* pages of log at the last commit: fewer means the log started over */
};

struct sqlite_checkpointer *sqlite_checkpointer_new(struct store *s)
{
	struct sqlite_checkpointer *k = calloc(1, sizeof *k);

	if (!k)
		return NULL;
	k->store = s;
	k->next_at = SQLITE_CHECKPOINT_PAGES;
	pthread_mutex_init(&k->lock, NULL);
	pthread_cond_init(&k->wake, NULL);
	return k;
}

static void checkpoint(sqlite3 *db, int *log, int *done)
{
	int rc = sqlite.wal_checkpoint_v2(db, NULL, SQLITE_CHECKPOINT_PASSIVE, log, done);

	/* BUSY: another checkpoint (the heartbeat's truncation, store_maintain) runs. */
	if (rc != SQLITE_OK && rc != SQLITE_BUSY && rc != SQLITE_LOCKED)
		LOG_W("store: checkpoint of the write-ahead log failed: %s", sqlite.errstr(rc));
}

static void *run(void *arg)
{
	struct sqlite_checkpointer *k = arg;
	struct store_conn *c = NULL;
	struct err e;
	int log = 0, done = 0;

	pthread_mutex_lock(&k->lock);
	for (;;) {
		while (!k->pending && !k->stop)
			pthread_cond_wait(&k->wake, &k->lock);
		if (k->stop)
			break;
		pthread_mutex_unlock(&k->lock);
		if (!c && !(c = k->store->ops->conn_open(k->store, &e)))
			LOG_W(
			    "store: cannot open the checkpoint thread's connection (%s): the writer checkpoints itself",
			    e.msg);
		log = done = 0;
		if (c)
			checkpoint(k->store->ops->native(c), &log, &done);
		pthread_mutex_lock(&k->lock);
		k->pending = false;
		if (!c) {
			k->failed = true;
			break;
		}
		k->copied = true;
	}
	pthread_mutex_unlock(&k->lock);
	if (c)
		k->store->ops->conn_close(c);
	return NULL;
}

/* SQLite's wal hook: after each commit of the writer connection, with the log's size. */
static int on_commit(void *arg, sqlite3 *db, const char *name, int pages)
{
	struct sqlite_checkpointer *k = arg;
	bool inline_ckpt = false;
	int log, done;

	(void)name;
	pthread_mutex_lock(&k->lock);
	if (pages < k->last)
		k->next_at = SQLITE_CHECKPOINT_PAGES; /* the log started over */
	k->last = pages;
	if (k->copied) {
		k->copied = false;
		inline_ckpt = true;
	} else if (pages >= k->next_at && !k->pending && !k->stop) {
		if (!k->started && !k->failed) {
			if (pthread_create(&k->thread, NULL, run, k) == 0) {
				(void)pthread_setname_np(k->thread, "checkpointer");
				k->started = true;
			} else {
				LOG_W("store: cannot start the checkpoint thread: the writer checkpoints itself");
				k->failed = true;
			}
		}
		if (k->started && !k->failed) {
			k->pending = true;
			pthread_cond_signal(&k->wake);
		} else {
			inline_ckpt = true;
		}
	}
	pthread_mutex_unlock(&k->lock);
	if (!inline_ckpt)
		return SQLITE_OK;
	/* As SQLite's automatic checkpoint would (without the thread), or the rest of the
	 * thread's pass.  All of it copied: the writer starts the log over at its next
	 * transaction (and next_at is reset then); else again a little later, when the readers
	 * in the way have likely moved on. */
	checkpoint(db, &log, &done);
	pthread_mutex_lock(&k->lock);
	k->next_at = pages + RETRY_PAGES;
	pthread_mutex_unlock(&k->lock);
	return SQLITE_OK;
}

void sqlite_checkpointer_attach(struct sqlite_checkpointer *k, struct store_conn *writer)
{
	/* the hook replaces SQLite's automatic checkpoint (itself a wal hook) */
	sqlite.wal_hook(k->store->ops->native(writer), on_commit, k);
}

void sqlite_checkpointer_free(struct sqlite_checkpointer *k)
{
	if (!k)
		return;
	pthread_mutex_lock(&k->lock);
	k->stop = true;
	pthread_cond_signal(&k->wake);
	pthread_mutex_unlock(&k->lock);
	if (k->started)
		pthread_join(k->thread, NULL);
	pthread_mutex_destroy(&k->lock);
	pthread_cond_destroy(&k->wake);
	free(k);
}
