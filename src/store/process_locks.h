#ifndef ACCORD_STORE_PROCESS_LOCKS_H
#define ACCORD_STORE_PROCESS_LOCKS_H

#include <jansson.h>

#include "base/err.h"
#include "base/uuid.h"
#include "store/store.h"

/* Named process locks (the lock and unlock tasks: queue/tasks/server_task_lock.c, queue/tasks/locks.c;
 * table process_locks, schema/026_locks.sql).  The store alone decides who holds a lock:
 * every function is one row transaction that locks the rows it reads before it writes
 * them, so nodes sharing a PostgreSQL database agree without talking to each other.
 * Waiters get a lock in their arrival order: a release hands it to the first waiter in
 * the same transaction. */

#define LOCK_NAME_MAX 255

struct lock_key {
	const char *scope;    /* "PROJECT" or "ORG" */
	const char *scope_id; /* the project's id, or the organization's */
	const char *name;
};

/* The scope a caller names (any case; NULL or "": PROJECT, the default): "PROJECT" or
 * "ORG", or NULL when it is neither. */
const char *lock_scope_name(const char *s);

/* The process that asks (recorded with its rows). */
struct lock_owner {
	const char *instance_id, *org_id, *project_id; /* project_id NULL or "": none */
};

/* Process o takes lock k: 1 when o holds it now (it was free, or o held it already); 0 when
 * another process holds it (holder gets its id) — then, when event is not NULL, o is
 * queued behind the waiters already there and is handed the lock with that event (see
 * store_lock_release); with event NULL nothing is recorded.  < 0 on error. */
int store_lock_take(struct store_conn *c, const struct lock_key *k, const struct lock_owner *o, const char *event,
		    char holder[UUID_STR_LEN], struct err *e) WUR;

/* Releases k if process id holds it (nothing happens otherwise), handing it to the first
 * waiter: *handed is a NEW array of [instanceId, event, lock name] (empty: nobody was given
 * a lock) that the caller resumes (queue/tasks/locks.c). */
int store_lock_release(struct store_conn *c, const struct lock_key *k, const char *id, json_t **handed,
		       struct err *e) WUR;

/* Process id ended: it waits for nothing any more, and every lock it holds is released
 * and handed over as store_lock_release does (*handed NEW). */
int store_locks_release_all(struct store_conn *c, const char *id, json_t **handed, struct err *e) WUR;

/* The processes that hold or wait for a lock although they ended (or are gone): what a
 * node taken for dead wrote after another settled its processes (*ids NEW array). */
int store_locks_stale(struct store_conn *c, json_t **ids, struct err *e) WUR;

/* The locks handed to processes stored SUSPENDED that were not resumed with them (a
 * resume that failed, or came while the process was not SUSPENDED yet and its node has
 * not looked again): *handed NEW, as store_lock_release gives it. */
int store_locks_unresumed(struct store_conn *c, json_t **handed, struct err *e) WUR;

/* The events of the locks handed to id that it has not resumed with yet (NEW array). */
int store_locks_handed(struct store_conn *c, const char *id, json_t **events, struct err *e) WUR;
/* Process id was resumed with event: the handed-over lock is an ordinary one now. */
int store_lock_resumed(struct store_conn *c, const char *id, const char *event, struct err *e) WUR;

/* Lock k: *out NEW {"holder": {"instanceId", "since" (ms)} or null, "waiting": [{"instanceId",
 * "since"}, …] in the order they get it}. */
int store_lock_state(struct store_conn *c, const struct lock_key *k, json_t **out, struct err *e) WUR;

/* The locks process id waits for: *out NEW array of {"scope", "scopeId", "name", "holder"
 * (an instance id, or null), "orgId", "projectId" (null: none)}. */
int store_locks_waited(struct store_conn *c, const char *id, json_t **out, struct err *e) WUR;

#endif
