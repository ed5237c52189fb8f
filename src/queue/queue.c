/* The dispatcher and the registry of running processes (queue.h). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <sodium.h>

#include "base/datetime.h"
#include "base/log.h"
#include "base/path.h"
#include "base/str.h"
#include "queue/internal.h"
#include "queue/supervise/logwatch.h"
#include "queue/end/timers.h"
#include "queue/zygote.h"
#include "store/process_logs.h"

struct runner_limits runner_limits;

void queue_log_line(struct store_conn *c, const char *id, const char *level, const char *fmt, ...)
{
	char text[1024];
	struct err e;
	va_list ap;

	va_start(ap, fmt);
	str_vfmt_cut(text, sizeof text, fmt, ap);
	va_end(ap);
	if (store_process_log_line(c, id, level, text, &e))
		LOG_E("process %s: cannot append to its log: %s", id, e.msg);
	else
		logwatch_notify(id);
}

/* <data>/<name>, empty (made when missing). */
static int empty_folder(struct queue *q, const char *name, struct err *e)
{
	char *path = NULL;
	int rc;

	if (asprintf(&path, "%s/%s", q->work_dir, name) < 0)
		return err_set(e, ERR_INTERNAL, "out of memory");
	rc = path_remove_tree(path, e) || path_mkdirs(path, 0700, e) ? -1 : 0;
	free(path);
	return rc;
}

/* Runners of their own user (a server started as root) reach their working directory
 * <work>/work/<id> by its path: the two folders above it may be passed through (0711),
 * never listed or read; everything in them stays the server's (0600/0700). */
static int open_to_runners(struct queue *q, struct err *e)
{
	char *path = NULL;
	int rc = 0;

	if (!q->cfg.runner_drop)
		return 0;
	if (asprintf(&path, "%s/work", q->work_dir) < 0)
		return err_set(e, ERR_INTERNAL, "out of memory");
	if (chmod(q->work_dir, 0711) != 0 || chmod(path, 0711) != 0)
		rc = err_set(e, ERR_INTERNAL, "cannot let the runners' user pass through %s: %s", path, strerror(errno));
	free(path);
	return rc;
}

/* What a previous run left.  Alone on the store (SQLite: the data folder is locked to this
 * server), every STARTING or RUNNING process was that run's and has no runner any more;
 * with several nodes (PostgreSQL) only those of nodes whose heartbeat is stale are settled
 * (nodes.c), now and at every heartbeat. */
static int recover(struct queue *q, struct err *e)
{
	struct store_conn *c = store_conn(q->cfg.store, e);
	char(*ids)[UUID_STR_LEN] = NULL;
	size_t n = 0;
	bool alone = strcmp(store_backend(q->cfg.store), "sqlite") == 0;

	if (!c || (alone && store_process_orphans(c, NULL, &ids, &n, e)))
		return -1;
	for (size_t i = 0; i < n; i++)
		queue_settle(q, c, ids[i], "the server stopped while the process was running (recovered at start-up)",
			     "the server stopped before the process started (recovered at start-up)");
	free(ids);
	if (n)
		LOG_I("recovered %zu processes left running by the previous run", n);
	if (queue_nodes_start(q, c, alone, e))
		return -1;
	/* Working folders of processes that are not running any more, and folders handed off
	 * by starts (start_staged.h): their stored payloads serve instead. */
	return empty_folder(q, "work", e) || empty_folder(q, "ready", e) || open_to_runners(q, e) ? -1 : 0;
}

/* A worker is always free here: the dispatcher claims only while fewer than cfg.workers run. */
static void start_supervisor(struct queue *q, struct process *p)
{
	struct running *r = calloc(1, sizeof *r);
	struct store_conn *c;
	struct err e;

	if (!r || pipe2(r->wake_fd, O_CLOEXEC | O_NONBLOCK) < 0) {
		LOG_E("process %s: cannot start its supervisor: %s", p->instance_id, strerror(errno));
		free(r);
		goto fail;
	}
	r->q = q;
	r->p = *p;
	pthread_mutex_lock(&q->lock);
	r->next = q->running;
	q->running = r;
	q->n_running++;
	pthread_mutex_unlock(&q->lock);
	if (workq_push(q->workers, supervisor_main, r) == 0)
		return;
	LOG_E("process %s: cannot queue its supervisor (out of memory)", p->instance_id);
	*p = r->p;
	r->p = (struct process){0};
	queue_release(q, r);
fail:
	c = store_conn(q->cfg.store, &e);
	if (c && store_process_transition(c, p->instance_id, PS_BIT(PS_STARTING), PS_FAILED, &e) == 0)
		queue_log_line(c, p->instance_id, "ERROR", "Process failed: the server could not start it");
	store_process_cleanup(p);
}

/* Claims due processes while slots are free and expires suspend timeouts; returns the
 * next startAt or suspend deadline to wait for (0: none known). */
static int64_t dispatch(struct queue *q, struct store_conn *c)
{
	struct err e;
	int64_t next = 0;

	for (;;) {
		struct process p;
		int rc;
		pthread_mutex_lock(&q->lock);
		bool full = q->n_running >= q->cfg.workers || q->stopping;
		pthread_mutex_unlock(&q->lock);
		if (full)
			break;
		rc = store_process_claim(c, q->node_id, dt_now_ms(), &p, &e);
		if (rc < 0) {
			LOG_E("dispatcher: cannot claim a process: %s", e.msg);
			return dt_now_ms() + 1000; /* the store failed: look again in a second */
		}
		if (rc == 0)
			break;
		if (queue_exclusive_admit(q, c, &p))
			start_supervisor(q, &p);
	}
	if (store_process_next_start(c, dt_now_ms(), &next, &e))
		LOG_E("dispatcher: cannot read the next start time: %s", e.msg);
	int64_t due = queue_timers_expire(q, c), beat = queue_nodes_tick(q, c);
	if (due && (!next || due < next))
		next = due;
	return next && next < beat ? next : beat;
}

static void *dispatcher_main(void *arg)
{
	struct queue *q = arg;
	struct err e;
	struct store_conn *c = store_conn(q->cfg.store, &e);

	pthread_mutex_lock(&q->lock);
	if (!c) {
		LOG_E("dispatcher: no database connection: %s", e.msg);
		q->dispatcher_exited = true;
		pthread_mutex_unlock(&q->lock);
		return NULL;
	}
	while (!q->stopping) {
		int64_t next;
		q->woken = false;
		pthread_mutex_unlock(&q->lock);
		next = dispatch(q, c);
		pthread_mutex_lock(&q->lock);
		if (q->woken || q->stopping)
			continue;
		if (next) {
			struct timespec ts = {.tv_sec = next / 1000, .tv_nsec = (next % 1000) * 1000000};
			pthread_cond_timedwait(&q->wake, &q->lock, &ts);
		} else {
			pthread_cond_wait(&q->wake, &q->lock);
		}
	}
	q->dispatcher_exited = true;
	pthread_mutex_unlock(&q->lock);
	queue_nodes_stop(q, c);
	return NULL;
}

bool queue_workers_alive(struct queue *q, unsigned *busy, unsigned *slots)
{
	bool alive;

	pthread_mutex_lock(&q->lock);
	alive = !q->dispatcher_exited && !q->stopping;
	*busy = q->n_running;
	*slots = q->cfg.workers;
	pthread_mutex_unlock(&q->lock);
	return alive;
}

void queue_wake_local(struct queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->woken = true;
	pthread_cond_signal(&q->wake);
	pthread_mutex_unlock(&q->lock);
}

void queue_wake(struct queue *q)
{
	struct store_conn *c;
	struct err e;

	if (!q)
		return;
	/* Every slot busy: the dispatcher could claim nothing now.  Each supervisor claims its
	 * slot's next process as its own ends (queue_take_next), and a slot that finds none
	 * wakes the dispatcher as it is freed (queue_release), under this lock: what was
	 * enqueued before this call is claimed then, and a start under load costs no
	 * dispatcher wake-up (its condition variable, its look for due work). */
	pthread_mutex_lock(&q->lock);
	if (q->n_running < q->cfg.workers || q->stopping) {
		q->woken = true;
		pthread_cond_signal(&q->wake);
	}
	pthread_mutex_unlock(&q->lock);
	/* The other nodes too (whoever has a free slot claims); their heartbeat would anyway. */
	if (q->listener && (!(c = store_conn(q->cfg.store, &e)) || store_notify(c, QUEUE_CHANNEL_WAKE, "", &e)))
		LOG_W("cannot wake the other nodes: %s", e.msg);
}

void queue_release(struct queue *q, struct running *r)
{
	pthread_mutex_lock(&q->lock);
	for (struct running **pp = &q->running; *pp; pp = &(*pp)->next)
		if (*pp == r) {
			*pp = r->next;
			break;
		}
	q->n_running--;
	q->woken = true;
	pthread_cond_signal(&q->wake);
	pthread_cond_broadcast(&q->changed);
	pthread_mutex_unlock(&q->lock);
	close(r->wake_fd[0]);
	close(r->wake_fd[1]);
	store_process_cleanup(&r->p);
	free(r);
}

static bool stopping(struct queue *q)
{
	pthread_mutex_lock(&q->lock);
	bool yes = q->stopping;
	pthread_mutex_unlock(&q->lock);
	return yes;
}

bool queue_claim_in_end(struct queue *q, struct store_conn *c, struct process *p)
{
	struct err e;
	int rc;

	/* A savepoint of its own: a claim that fails (or whose process cannot be read back)
	 * is undone alone, the end is kept.  Of rows: on PostgreSQL a plain one would take
	 * the exclusive write lock while other ends hold the shared one (store.h). */
	if (stopping(q) || store_tx_begin_rows(c, &e))
		return false;
	if ((rc = store_process_claim(c, q->node_id, dt_now_ms(), p, &e)) > 0) {
		if (store_tx_commit(c, &e) == 0)
			return true;
		store_process_cleanup(p);
		rc = -1;
	} else {
		store_tx_rollback(c);
	}
	if (rc < 0)
		LOG_E("supervisor: cannot claim a process with the end of the last: %s", e.msg);
	return false;
}

bool queue_take_next(struct queue *q, struct store_conn *c, struct running *r, struct process *claimed)
{
	struct process p, old;
	struct err e;
	char tmp[16];
	int rc = 0;

	for (;;) {
		if (claimed) { /* claimed with the end of the last one (queue_claim_in_end) */
			p = *claimed;
			*claimed = (struct process){0};
			claimed = NULL;
		} else if (stopping(q) || (rc = store_process_claim(c, q->node_id, dt_now_ms(), &p, &e)) <= 0) {
			if (rc < 0)
				LOG_E("supervisor: cannot claim a process: %s", e.msg);
			queue_release(q, r);
			return false;
		}
		if (queue_exclusive_admit(q, c, &p))
			break;
	}
	while (read(r->wake_fd[0], tmp, sizeof tmp) > 0)
		;
	pthread_mutex_lock(&q->lock);
	if (q->stopping) {
		/* The node began to stop during the claim: the process goes back to the queue
		 * (another node, or this one's next start, runs it), and the slot is freed. */
		pthread_mutex_unlock(&q->lock);
		queue_settle(q, c, p.instance_id, "the server stopped as the process was claimed",
			     "the server stopped as the process was claimed");
		store_process_cleanup(&p);
		queue_release(q, r);
		return false;
	}
	old = r->p;
	r->p = p;
	/* A stop asked of the process that ended is not this one's.  No shutdown was asked
	 * yet: it is asked only once q->stopping is set, under q->lock. */
	atomic_store(&r->stop, STOP_NONE);
	pthread_cond_broadcast(&q->changed); /* the ended one left this node's list */
	pthread_mutex_unlock(&q->lock);
	store_process_cleanup(&old);
	return true;
}

static struct running *find(struct queue *q, const char *id)
{
	for (struct running *r = q->running; r; r = r->next)
		if (strcmp(r->p.instance_id, id) == 0)
			return r;
	return NULL;
}

bool queue_holds(struct queue *q, const char *id)
{
	bool yes;

	pthread_mutex_lock(&q->lock);
	yes = find(q, id) != NULL;
	pthread_mutex_unlock(&q->lock);
	return yes;
}

static void request_stop(struct running *r, enum stop_reason why)
{
	int expected = STOP_NONE;
	char b = 1;

	if (atomic_compare_exchange_strong(&r->stop, &expected, (int)why) && write(r->wake_fd[1], &b, 1) < 0)
		LOG_W("process %s: cannot wake its supervisor: %s", r->p.instance_id, strerror(errno));
}

/* Waits (q->lock held) until no supervisor of this node holds id, or until deadline (ms):
 * the one still holding it, or NULL. */
static struct running *wait_gone(struct queue *q, const char *id, int64_t deadline)
{
	struct timespec ts;
	struct running *r;

	while ((r = find(q, id)) && dt_now_ms() < deadline) {
		ts.tv_sec = deadline / 1000;
		ts.tv_nsec = (deadline % 1000) * 1000000;
		pthread_cond_timedwait(&q->changed, &q->lock, &ts);
	}
	return r;
}

bool queue_stop_request(struct queue *q, const char *id)
{
	struct running *r;

	pthread_mutex_lock(&q->lock);
	if ((r = find(q, id)))
		request_stop(r, STOP_CANCEL);
	pthread_mutex_unlock(&q->lock);
	return r != NULL;
}

int queue_wait_released(struct queue *q, const char *id, unsigned ms, struct err *e)
{
	struct running *r;

	if (!q)
		return 0;
	pthread_mutex_lock(&q->lock);
	r = wait_gone(q, id, dt_now_ms() + ms);
	pthread_mutex_unlock(&q->lock);
	if (r)
		return err_set(e, ERR_CONFLICT, "process %s is still being stored by its node, try again", id);
	return 0;
}

struct queue *queue_start(const struct queue_cfg *cfg, struct err *e)
{
	struct queue *q = calloc(1, sizeof *q);
	pthread_condattr_t ca;

	if (!q) {
		err_set(e, ERR_INTERNAL, "out of memory");
		return NULL;
	}
	q->cfg = *cfg;
	q->work_dir = strdup(cfg->work_dir);
	q->runner_exe = strdup(cfg->runner_exe);
	q->node_id = strdup(cfg->node_id);
	memcpy(q->session_key, cfg->session_key, sizeof q->session_key);
	q->cfg.session_key = q->session_key;
	pthread_mutex_init(&q->lock, NULL);
	workdir_pool_init(&q->pool, 2 * (size_t)cfg->workers);
	/* Timed waits use CLOCK_REALTIME: startAt is wall-clock time. */
	pthread_condattr_init(&ca);
	pthread_cond_init(&q->wake, &ca);
	pthread_cond_init(&q->changed, &ca);
	pthread_condattr_destroy(&ca);
	if (!q->work_dir || !q->runner_exe || !q->node_id) {
		err_set(e, ERR_INTERNAL, "out of memory");
		goto fail;
	}
	if (recover(q, e) || !(q->workers = workq_new(cfg->workers, "supervisor", e)) ||
	    !(q->stoppers = workq_new(1, "stopper", e)))
		goto fail;
	if (cfg->runner_zygote) {
		q->zygote_env = queue_runner_env(&q->cfg, q->work_dir, true);
		if (!q->zygote_env || !(q->zygote = zygote_new(q->runner_exe, q->zygote_env))) {
			err_set(e, ERR_INTERNAL, "out of memory");
			goto fail;
		}
	}
	if (queue_listen_start(q, e))
		goto fail;
	if (pthread_create(&q->dispatcher, NULL, dispatcher_main, q) != 0) {
		err_set(e, ERR_INTERNAL, "cannot start the dispatcher thread");
		queue_listen_stop(q);
		goto fail;
	}
	(void)pthread_setname_np(q->dispatcher, "dispatcher");
	return q;
fail:
	workq_free(q->stoppers);
	workq_free(q->workers);
	zygote_free(q->zygote);
	queue_free_env(q->zygote_env);
	workdir_pool_cleanup(&q->pool);
	free(q->work_dir);
	free(q->runner_exe);
	free(q->node_id);
	free(q);
	return NULL;
}

void queue_shutdown(struct queue *q, unsigned grace_ms)
{
	int64_t deadline = dt_now_ms() + grace_ms;
	struct timespec ts;

	if (!q)
		return;
	pthread_mutex_lock(&q->lock);
	q->stopping = true;
	pthread_cond_signal(&q->wake);
	pthread_mutex_unlock(&q->lock);
	pthread_join(q->dispatcher, NULL);
	queue_listen_stop(q);
	pthread_mutex_lock(&q->lock);
	if (q->running)
		LOG_I("waiting up to %u ms for %u running processes", grace_ms, q->n_running);
	while (q->running && dt_now_ms() < deadline) {
		ts.tv_sec = deadline / 1000;
		ts.tv_nsec = (deadline % 1000) * 1000000;
		pthread_cond_timedwait(&q->changed, &q->lock, &ts);
	}
	for (struct running *r = q->running; r; r = r->next)
		request_stop(r, STOP_SHUTDOWN);
	while (q->running)
		pthread_cond_wait(&q->changed, &q->lock);
	pthread_mutex_unlock(&q->lock);
	workq_free(q->stoppers); /* its stops end early: the node is stopping */
	/* Before the workers end: the one that started the zygote (zygote_spawn, at the first
	 * process) is its parent thread, and the zygote dies with that thread (PR_SET_PDEATHSIG). */
	zygote_free(q->zygote);
	queue_free_env(q->zygote_env);
	workq_free(q->workers);
	pthread_mutex_destroy(&q->lock);
	workdir_pool_cleanup(&q->pool);
	pthread_cond_destroy(&q->wake);
	pthread_cond_destroy(&q->changed);
	sodium_memzero(q->session_key, sizeof q->session_key);
	free(q->work_dir);
	free(q->runner_exe);
	free(q->node_id);
	free(q);
}
