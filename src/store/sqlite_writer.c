/* SQLite's writer connection with group commit (store.h store_writer_enter).
 *
 * Every connection's write transaction starts cold once another connection has committed
 * (SQLite drops its page cache when the WAL changed under it: ~30 page re-reads a
 * transaction, bench/RESULTS.md 12:40Z) and takes the WAL's locks for itself.  The
 * per-process transitions (create, claim, status changes, log flushes, the end) go instead
 * through one connection shared by the threads that write them, one thread at a time: its
 * cache stays hot, and the threads that come while a transaction is open join it — each in a
 * savepoint of its own — so that one commit serves all of them (group commit).  The last
 * thread of a batch (none waiting to join, or BATCH_MAX joined) commits; the others wait for
 * that commit before they return, so nothing is acknowledged before it is as durable as a
 * transaction of its own would have made it (`--durability`), and nothing a caller saw in
 * the batch is newer than what its own connection reads afterwards. */
#include <pthread.h>
#include <stdlib.h>

#include "base/log.h"
#include "store/sqlite_api.h"
#include "store/sqlite_checkpointer.h"
#include "store/store_impl.h"

/* At most this many callers share a commit: bounds what a caller waits for. */
#define BATCH_MAX 32

struct store_writer {
	pthread_mutex_t lock;
	pthread_cond_t turn; /* the connection is free */
	pthread_cond_t done; /* a batch ended */
	struct store_conn *conn;
	/* checkpoints of the log conn's commits fill (sqlite_checkpointer.h) */
	struct sqlite_checkpointer *checkpointer;
	bool held;	    /* a thread uses conn (between enter and leave, or committing) */
	unsigned waiting;   /* threads waiting for their turn */
	unsigned in_batch;  /* callers that joined the open batch */
	uint64_t batch;	    /* the open (or next) batch */
	uint64_t ended;	    /* batches before this one are committed or undone */
	int result;	    /* of batch ended - 1 */
	struct err err;	    /* its failure */
};

struct store_writer *sqlite_writer_new(struct store *s)
{
	struct store_writer *w = calloc(1, sizeof *w);

	if (!w)
		return NULL;
	if (!(w->checkpointer = sqlite_checkpointer_new(s))) {
		free(w);
		return NULL;
	}
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->turn, NULL);
	pthread_cond_init(&w->done, NULL);
	w->batch = 1;
	w->ended = 1;
	return w;
}

/* The connection is closed by store_close with the others (it is one of s->conns), after
 * this (a checkpoint under way ends first). */
void sqlite_writer_free(struct store_writer *w)
{
	if (!w)
		return;
	if (w->conn) /* nothing it does from now on reaches the checkpointer freed below */
		sqlite.wal_hook(w->conn->store->ops->native(w->conn), NULL, NULL);
	sqlite_checkpointer_free(w->checkpointer);
	pthread_mutex_destroy(&w->lock);
	pthread_cond_destroy(&w->turn);
	pthread_cond_destroy(&w->done);
	free(w);
}

static struct store_conn *open_conn(struct store_writer *w, struct store *s, struct err *e)
{
	struct store_conn *c;

	pthread_mutex_lock(&s->lock);
	if (s->n_conns == STORE_MAX_CONNS) {
		pthread_mutex_unlock(&s->lock);
		err_set(e, ERR_UNAVAILABLE, "too many database connections (%d threads)", STORE_MAX_CONNS);
		return NULL;
	}
	/* Each caller's savepoint journals the pages it changes that the batch changed before
	 * (to undo them alone); past 64 KiB SQLite spilled that journal to a temporary file, a
	 * write of every such page (~40 a process): held in memory instead, at most a few MB
	 * for a full batch. */
	if ((c = s->ops->conn_open(s, e)) && store_exec(c, "PRAGMA temp_store=MEMORY", e)) {
		s->ops->conn_close(c);
		c = NULL;
	}
	if (c) {
		s->conns[s->n_conns++] = c;
		sqlite_checkpointer_attach(w->checkpointer, c);
	}
	pthread_mutex_unlock(&s->lock);
	return c;
}

/* Ends the open batch with result rc (lock held): its waiters return, the next may begin. */
static void end_batch(struct store_writer *w, int rc, const struct err *e)
{
	w->result = rc;
	if (rc)
		w->err = *e;
	w->ended = ++w->batch;
	w->in_batch = 0;
	w->held = false;
	pthread_cond_broadcast(&w->done);
	pthread_cond_signal(&w->turn);
}

/* Whether SQLite undid the whole transaction by itself (a full disk, an I/O error): the
 * batch is lost, savepoints and all. */
static bool tx_lost(struct store_conn *c)
{
	return c->in_tx && sqlite.get_autocommit(c->store->ops->native(c));
}

/* A caller that could not join: the batch ends with the callers that did (their commit), or
 * the transaction it began is undone. */
static void give_up(struct store_writer *w, struct store_conn *wc)
{
	struct err ce;
	int cr;

	pthread_mutex_lock(&w->lock);
	if (wc && wc->in_tx && w->in_batch) {
		pthread_mutex_unlock(&w->lock);
		cr = store_tx_commit(wc, &ce);
		pthread_mutex_lock(&w->lock);
		end_batch(w, cr, &ce);
	} else {
		if (wc && wc->in_tx)
			store_tx_rollback(wc);
		w->held = false;
		pthread_cond_signal(&w->turn);
	}
	pthread_mutex_unlock(&w->lock);
}

struct store_conn *sqlite_writer_enter(struct store_conn *c, struct err *e)
{
	struct store_writer *w = c->store->writer;
	struct store_conn *wc;

	pthread_mutex_lock(&w->lock);
	w->waiting++;
	while (w->held)
		pthread_cond_wait(&w->turn, &w->lock);
	w->waiting--;
	w->held = true;
	pthread_mutex_unlock(&w->lock);
	if (!w->conn)
		w->conn = open_conn(w, c->store, e);
	wc = w->conn;
	/* The batch's transaction (BEGIN IMMEDIATE when none is open), then this caller's
	 * savepoint: its failure undoes its own writes only. */
	if (wc && (wc->in_tx || store_tx_begin(wc, e) == 0)) {
		if (store_tx_begin(wc, e) == 0) {
			w->in_batch++;
			return wc;
		}
	}
	give_up(w, wc);
	return NULL;
}

int sqlite_writer_leave(struct store_conn *wc, int rc, struct err *e)
{
	struct store_writer *w = wc->store->writer;
	struct err ce;
	uint64_t mine;
	int cr;

	if (rc == 0)
		rc = store_tx_commit(wc, e); /* the savepoint's release */
	else
		store_tx_rollback(wc);
	pthread_mutex_lock(&w->lock);
	mine = w->batch;
	if (tx_lost(wc)) {
		wc->in_tx = false;
		wc->tx_depth = 0;
		err_set(&ce, ERR_INTERNAL, "database: the transaction was rolled back (see the server log)");
		if (rc == 0)
			rc = err_set(e, ERR_INTERNAL, "%s", ce.msg);
		end_batch(w, -1, rc ? e : &ce);
	} else if (w->waiting && w->in_batch < BATCH_MAX) {
		/* The next thread joins this transaction; the last one commits it.  A caller
		 * that failed waits for that commit too: what it failed on (a compare-and-set
		 * that found another caller's change) must be what its next read finds on its
		 * own connection, not the older state (a stop's look that saw ENQUEUED, failed
		 * on a claim not yet committed and tried again ten times to no end). */
		w->held = false;
		pthread_cond_signal(&w->turn);
		while (w->ended <= mine)
			pthread_cond_wait(&w->done, &w->lock);
		if (rc == 0 && (rc = w->result))
			*e = w->err;
	} else {
		pthread_mutex_unlock(&w->lock);
		cr = store_tx_commit(wc, &ce);
		pthread_mutex_lock(&w->lock);
		end_batch(w, cr, &ce);
		if (rc == 0 && cr) {
			*e = ce;
			rc = cr;
		}
	}
	pthread_mutex_unlock(&w->lock);
	return rc;
}
