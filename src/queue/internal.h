#ifndef ACCORD_QUEUE_INTERNAL_H
#define ACCORD_QUEUE_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <sys/types.h>

#include "queue/workdir_pool.h"
#include "base/workq.h"
#include "queue/queue.h"
#include "store/processes.h"

/* Shared by queue.c (dispatcher, registry) and supervisor.c (one running process). */

enum stop_reason { STOP_NONE, STOP_CANCEL, STOP_SHUTDOWN };

/* One claimed process while its supervisor runs; in the queue's list under q->lock. */
struct running {
	struct running *next;
	struct queue *q;
	struct process p; /* as claimed (owned JSON members) */
	_Atomic int stop; /* enum stop_reason */
	int wake_fd[2];	  /* pipe: a byte wakes the supervisor's poll */
	/* Its runner has task calls waiting for processes to end (children.h): the end of
	 * any process wakes it to look again; no other supervisor is woken by an end. */
	_Atomic bool waits_for_ends;
};

struct queue {
	struct queue_cfg cfg;
	char *work_dir, *runner_exe, *node_id;
	unsigned char session_key[32];
	pthread_mutex_t lock;
	pthread_cond_t wake;	/* the dispatcher waits here */
	pthread_cond_t changed; /* a supervisor finished */
	bool woken, stopping;
	bool dispatcher_exited; /* its thread returned (no database connection, or stopping) */
	unsigned n_running;
	struct running *running;
	pthread_t dispatcher;
	struct workq *workers;	/* cfg.workers threads running supervisor_main */
	struct workq *stoppers; /* one thread following stops that did not wait (stop.c) */
	struct zygote *zygote;	/* NULL: runners are exec'd (cfg.runner_zygote false) */
	char **zygote_env;
	int64_t next_beat;   /* ms: this node's next heartbeat (nodes.c; the dispatcher's thread) */
	int64_t settle_from; /* ms: no other node is settled before (after this node's own outage) */
	int64_t next_sweep;  /* ms: this node's next look at its ready/ folders (ready_sweep.c) */
	/* Wake-ups from other nodes (listen.c; NULL: the store serves one node). */
	struct store_listener *listener;
	pthread_t listener_thread;
	int listen_wake[2]; /* a byte ends the listener thread */
	struct workdir_pool pool; /* empty working folders for processes held in memory */
};

/* listen.c: the channels nodes tell each other on, and the listener thread (started only
 * when the store has several nodes). */
#define QUEUE_CHANNEL_WAKE "accord_queue" /* something was enqueued: claim */
#define QUEUE_CHANNEL_STOP "accord_stop"  /* payload: an instance id to stop where it runs */
#define QUEUE_CHANNEL_LOG "accord_log"	  /* payload: an instance id whose log grew or that ended */
int queue_listen_start(struct queue *q, struct err *e) WUR;
void queue_listen_stop(struct queue *q);
/* The dispatcher of this node only (queue_wake also tells the other nodes). */
void queue_wake_local(struct queue *q);
/* Asks the supervisor of id, if it runs on this node, to stop it (does not wait): true
 * when one does. */
bool queue_stop_request(struct queue *q, const char *id);

/* Whether a supervisor of this node holds process id. */
bool queue_holds(struct queue *q, const char *id);
/* On the dispatcher's thread (at a heartbeat, at most once every node_dead_after_ms, only
 * with several nodes): removes the folders handed off to this node (<work>/ready/) whose
 * process was claimed by another node or ended elsewhere (ready_sweep.c). */
void queue_ready_sweep(struct queue *q, struct store_conn *c);

/* Nodes (nodes.c), on the dispatcher's thread: registers this node and settles the stale
 * ones (alone: every other one, a previous run of this data folder) at start; beats and
 * settles at each tick (returns when the next one is due); removes this node's row on a
 * clean stop. */
int queue_nodes_start(struct queue *q, struct store_conn *c, bool alone, struct err *e) WUR;
int64_t queue_nodes_tick(struct queue *q, struct store_conn *c);
void queue_nodes_stop(struct queue *q, struct store_conn *c);
/* A process whose node is gone: STARTING (claimed, no step of its flow ran: RUNNING is
 * recorded before the runner gets the flow) → ENQUEUED again, for any node, with
 * `queued` in its log; RUNNING → FAILED, with `failed` in its log. */
void queue_settle(struct queue *q, struct store_conn *c, const char *id, const char *failed, const char *queued);

/* A runner's clean environment (HOME and TMPDIR: dir; PATH, LANG, TZ; the sanitizer
 * settings of the server; for the runner zygote also LD_BIND_NOW), NULL-terminated; NULL
 * when out of memory.  queue_free_env frees it. */
/* What the server wrote into a running process's working directory (rel and the folders
 * on its way) given to the runners' user when they have their own (a server that is
 * root), so the flow can read it. */
int queue_give_to_runner(const struct queue *q, const char *workdir, const char *rel, struct err *e) WUR;

char **queue_runner_env(const struct queue_cfg *cfg, const char *dir, bool zygote);
void queue_free_env(char **env);

/* Supervises r (supervisor.c) on one of the queue's worker threads, and removes r from
 * the queue when done.  The workers are long-lived, so each keeps its database connection. */
void supervisor_main(void *arg);

/* Called by the supervisor when it has recorded the final status: unlinks and frees r,
 * frees the slot and wakes the dispatcher. */
void queue_release(struct queue *q, struct running *r);

/* Called by the supervisor instead of queue_release once the final status is recorded:
 * claims the next due process into r for the same slot on the supervisor's own connection
 * (as the dispatcher would, without waking it and then a worker), or takes claimed (not NULL:
 * queue_claim_in_end's, committed with the end; its exclusive group is checked here), true
 * when r holds it; else
 * releases r (queue_release) and returns false.  Not while the node is stopping: a process
 * claimed as it begins to stop goes back to the queue (queue_settle). */
bool queue_take_next(struct queue *q, struct store_conn *c, struct running *r, struct process *claimed);
/* Inside the transaction that records a process's end (its own savepoint): claims the
 * next due process into p for the same slot, so that the end and the claim share one
 * commit; true when p holds it (for queue_take_next's claimed, once that commit is done).
 * Not while the node is stopping. */
bool queue_claim_in_end(struct queue *q, struct store_conn *c, struct process *p);

#endif
