#ifndef ACCORD_QUEUE_QUEUE_H
#define ACCORD_QUEUE_QUEUE_H

#include <stdbool.h>
#include <sys/types.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "crypto/masterkey.h"
#include "store/processes.h"
#include "store/store.h"

/* The process queue of one node (DESIGN.md §2): a dispatcher thread that claims due
 * ENQUEUED processes from the store while a worker slot is free, and one supervisor
 * thread per running process (supervisor.c).  The dispatcher sleeps on a condition
 * variable: woken by queue_wake (a start, a finished process) or by a timer set to the
 * earliest startAt; it never polls.  Thread-safe. */

struct queue_cfg {
	struct store *store;
	const char *work_dir;	 /* tmp/, ready/ and work/ beneath it (the data folder or --work-dir) */
	const char *runner_exe;	 /* absolute path of the accord binary */
	const char *node_id;	 /* this node's id (recorded on claimed processes) */
	unsigned workers;	 /* processes run at once */
	unsigned stop_grace_ms;	 /* SIGTERM → SIGKILL */
	const void *session_key; /* 32 bytes: derives session tokens (crypto/session.h) */
	/* The secrets master key (BORROWED, kept alive by the caller): server tasks open
	 * secrets and derive project keys with it (queue/tasks/server_task_crypto.c). */
	const struct masterkey *master_key;
	bool log_confinement;
	/* Runners are forked by a runner zygote (queue/zygote.h) rather than exec'd, which
	 * is kept running; false: exec'd each time. */
	bool runner_zygote;
	/* A server started as root: runners (and the zygote) run as this user instead
	 * (runner/identity.h), their working directories given to it. */
	bool runner_drop;
	uid_t runner_uid;
	gid_t runner_gid;
	/* Git clones (repo/repo.h, BORROWED): the `concord` task starts children from a
	 * repository with them. */
	struct repos *repos;
	/* Nodes: this one heart-beats every node_heartbeat_ms; one silent for longer than
	 * node_dead_after_ms is settled by the others (its running processes FAILED). */
	unsigned node_heartbeat_ms, node_dead_after_ms;
	/* Server-side defaults of tasks ({"smtpParams": …, "slackParams": …}, BORROWED, may be
	 * NULL): sent to each runner in its start frame, never written to a file. */
	json_t *task_defaults;
	/* The docker task (server_task_docker.c): the engine's command ("docker", "podman
	 * --runtime runc"; NULL: docker), the network of containers (NULL: the engine's
	 * default) and more `run` options, split at blanks (NULL: none). */
	const char *docker_command, *docker_network, *docker_run_options;
	/* This server's own API ("http://127.0.0.1:8001", BORROWED, may be NULL): server tasks
	 * that act through it as their process's initiator (queue/tasks/api_client.h). */
	const char *self_url;
	/* The process signing key's PEM (crypto/signing.h, BORROWED, may be NULL): the start
	 * frame's initiator and currentUser get a usernameSignature. */
	const char *signing_key;
};

struct queue;
struct repos;

/* Recovers what a previous run left (STARTING/RUNNING processes → FAILED with a log
 * line, stale working folders removed), then starts the dispatcher. */
struct queue *queue_start(const struct queue_cfg *cfg, struct err *e);

/* The resume event of a process restored from a checkpoint: QUEUE_CHECKPOINT_PREFIX
 * "<name>".  Its runner then resumes exactly that checkpoint's state (start_frame.c). */
#define QUEUE_CHECKPOINT_PREFIX "checkpoint:"
/* The longest checkpoint name that fits into a resume event. */
#define QUEUE_CHECKPOINT_NAME_MAX (sizeof((struct process *)0)->resume_event - sizeof QUEUE_CHECKPOINT_PREFIX)

/* Something was enqueued (or a startAt changed): the dispatcher looks again. */
void queue_wake(struct queue *q);

/* Stops process id wherever it runs — the one stop of the API, exclusive groups (cancelOld)
 * and the `concord` task's kill.  NEW, PREPARING, ENQUEUED, WAITING and SUSPENDED become
 * CANCELLED at once (queue_ended_server_side follows); a STARTING or RUNNING one is stopped
 * by its supervisor, on this node or, with several nodes, on the one that claimed it (asked
 * through the store's notifications, again until it is final): SIGTERM to its runner's
 * process group, SIGKILL after the grace period, CANCELLED.  why is the log line written
 * (once) into the process's log ("Process cancelled by …").  wait_ms > 0: waits that long
 * for the final status: 0 then, ERR_UNAVAILABLE when it is still stopping.  wait_ms 0:
 * never waits: 0 when it is final now, 1 when its supervisor was asked, and this node's
 * stopper thread follows it through (asks again, cancels it at once should it suspend
 * first).  q may be NULL (no queue: only what is not running can be cancelled). */
int queue_stop(struct queue *q, struct store_conn *c, const char *id, const char *why, int64_t wait_ms,
	       struct err *e) WUR;
/* How long a stop waits for a claimed process to be final: the stop grace period + 5 s. */
int64_t queue_stop_wait_ms(struct queue *q);
/* With several nodes: tells the others that id's log grew or that it ended (sent when c's
 * transaction commits), so that their followers read (logwatch.h wakes this node's). */
void queue_log_grew(struct queue *q, struct store_conn *c, const char *id);

/* Waits at most ms until no supervisor of this node holds process id any more (one that
 * has recorded a final or SUSPENDED status may still be storing results and removing its
 * working directory): 0 then, ERR_CONFLICT when it still holds it.  Run again (a restore,
 * a resume) only after that, or the old supervisor's clean-up races the new run. */
int queue_wait_released(struct queue *q, const char *id, unsigned ms, struct err *e) WUR;

/* For the health check: true while the dispatcher thread runs (not stopping, not ended
 * on an error); *busy and *slots get the running processes and --workers. */
bool queue_workers_alive(struct queue *q, unsigned *busy, unsigned *slots);

/* Stops dispatching, lets running processes finish for grace_ms, then kills the rest
 * (FAILED with a log line saying the server stopped) and frees q. */
void queue_shutdown(struct queue *q, unsigned grace_ms);

/* "<ts> [LEVEL] msg\n" with the server's time stamp, appended to the process log (and its
 * followers woken).  Errors are logged, not returned: a log line is never worth failing
 * a status change for. */
void queue_log_line(struct store_conn *c, const char *id, const char *level, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Called once a process has reached a final status (st), wherever that was recorded:
 * its supervisor, a stop of a process that was not running, a suspend timeout.  The
 * payload is still stored when it is called.  Starts what follows (handler processes,
 * the resume of a parent waiting for its children, WAITING processes of the same
 * exclusive group).  q may be NULL (no queue on this node).  Errors are logged. */
void queue_process_ended(struct queue *q, struct store_conn *c, const char *id, enum proc_status st);
/* The end of a process whose final status the server itself set (nothing of it ran on a
 * worker: a stop, an exclusive group, a suspend timeout): the other nodes' and this node's
 * log followers see the end, queue_process_ended, its payload dropped. */
void queue_ended_server_side(struct queue *q, struct store_conn *c, const char *id, enum proc_status st);

/* Runner resource limits (set by `accord serve`, read by every supervisor). */
struct runner_limits {
	size_t memory_bytes; /* RLIMIT_AS; 0: none */
	size_t file_bytes;   /* RLIMIT_FSIZE */
	size_t open_files;   /* RLIMIT_NOFILE */
	size_t cpu_seconds;  /* RLIMIT_CPU; 0: none */
};
extern struct runner_limits runner_limits;

#endif
