/* The nodes of the service (queue.h "Nodes"): this node's registration and heartbeat, and
 * the settling of a node whose heartbeat stopped — its RUNNING processes become FAILED
 * and its STARTING ones (none of whose steps ran) ENQUEUED again, with a log line that
 * names it, their handlers and waiting parents go on
 * as after any end, and its ENQUEUED starts are claimed by whoever is free. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/datetime.h"
#include "base/limits.h"
#include "base/log.h"
#include "base/str.h"
#include "queue/internal.h"
#include "queue/tasks/locks.h"
#include "store/nodes.h"

void queue_settle(struct queue *q, struct store_conn *c, const char *id, const char *failed, const char *queued)
{
	struct err e;

	if (store_process_transition(c, id, PS_BIT(PS_STARTING), PS_ENQUEUED, &e) == 0) {
		queue_log_line(c, id, "WARN", "Process queued again: %s", queued);
		queue_wake(q);
		LOG_W("process %s: ENQUEUED again: %s", id, queued);
		return;
	}
	if (e.code != ERR_CONFLICT) {
		LOG_W("process %s: cannot queue it again: %s", id, e.msg);
		return;
	}
	if (store_process_transition(c, id, PS_BIT(PS_RUNNING), PS_FAILED, &e)) {
		LOG_W("process %s: cannot mark it FAILED: %s", id, e.msg);
		return;
	}
	queue_log_line(c, id, "ERROR", "Process failed: %s", failed);
	/* Its onFailure handler, the next WAITING process of its exclusive group, its parent;
	 * the followers of its log on every node see the end; its payload goes. */
	queue_ended_server_side(q, c, id, PS_FAILED);
	LOG_W("process %s: FAILED: %s", id, failed);
}

/* This node's host name (for its row and to know its own earlier runs). */
static void host_name(char *out, size_t cap)
{
	if (gethostname(out, cap) != 0)
		str_fmt_cut(out, cap, "%s", "unknown host");
	out[cap - 1] = '\0';
}

/* n ran on this host in this node's work folder: an earlier run of this server. */
static bool earlier_self(struct queue *q, const struct node *n)
{
	char host[256];

	host_name(host, sizeof host);
	return strcmp(n->host, host) == 0 && strcmp(n->folder, q->work_dir) == 0;
}

/* Settles node n (stale): 0, or < 0 when the store failed (tried again at the next beat). */
static int settle_node(struct queue *q, struct store_conn *c, const struct node *n)
{
	char(*ids)[UUID_STR_LEN] = NULL, beat[DT_ISO_LEN], failed[512], queued[512];
	size_t count = 0;
	int removed = 0;
	struct err e;

	/* The row goes first: of two nodes settling it at once, one does. */
	if (store_node_remove(c, n->id, &removed, &e)) {
		LOG_E("node %s: cannot settle it: %s", n->id, e.msg);
		return -1;
	}
	if (!removed)
		return 0;
	if (store_process_orphans(c, n->id, &ids, &count, &e)) {
		LOG_E("node %s: cannot read its processes: %s", n->id, e.msg);
		return -1;
	}
	dt_format_iso(n->heartbeat_at, beat);
	if (strcmp(n->id, q->node_id) != 0 && earlier_self(q, n)) {
		str_fmt_cut(failed, sizeof failed,
			    "the server stopped while the process was running (recovered at start-up; it was node %.36s, "
			    "pid %lld)",
			    n->id, (long long)n->pid);
		str_fmt_cut(queued, sizeof queued,
			    "the server stopped before the process started (recovered at start-up; it was node %.36s, "
			    "pid %lld)",
			    n->id, (long long)n->pid);
	} else {
		str_fmt_cut(failed, sizeof failed,
			    "node %.36s (%.128s, pid %lld) stopped while it ran the process (last heartbeat %s)", n->id,
			    n->host, (long long)n->pid, beat);
		str_fmt_cut(queued, sizeof queued,
			    "node %.36s (%.128s, pid %lld) stopped before the process started (last heartbeat %s)",
			    n->id, n->host, (long long)n->pid, beat);
	}
	for (size_t i = 0; i < count; i++)
		queue_settle(q, c, ids[i], failed, queued);
	free(ids);
	LOG_W("node %s (%s, pid %lld) stopped heart-beating at %s: %zu of its processes settled", n->id, n->host,
	      (long long)n->pid, beat, count);
	return 0;
}

/* Settles the nodes other than this one whose heartbeat is older than before (0: all). */
static void settle_stale(struct queue *q, struct store_conn *c, int64_t before)
{
	struct node *stale = NULL;
	size_t n = 0;
	struct err e;

	char host[256];

	host_name(host, sizeof host);
	if (store_nodes_stale(c, q->node_id, before, host, q->work_dir, &stale, &n, &e)) {
		LOG_E("nodes: cannot read the other nodes' heartbeats: %s", e.msg);
		return;
	}
	for (size_t i = 0; i < n; i++)
		settle_node(q, c, &stale[i]);
	free(stale);
}

static int register_self(struct queue *q, struct store_conn *c, struct err *e)
{
	struct node me = {.pid = getpid(), .started_at = dt_now_ms()};

	me.heartbeat_at = me.started_at;
	if (str_fmt(me.id, sizeof me.id, "%s", q->node_id))
		return err_set(e, ERR_INTERNAL, "node id too long");
	host_name(me.host, sizeof me.host);
	if (str_fmt(me.folder, sizeof me.folder, "%s", q->work_dir))
		return err_set(e, ERR_INVALID, "work folder path too long: %s", q->work_dir);
	return store_node_register(c, &me, e);
}

int queue_nodes_start(struct queue *q, struct store_conn *c, bool alone, struct err *e)
{
	if (register_self(q, c, e))
		return -1;
	/* Alone (SQLite: the data folder's lock) every other node is a previous run; else
	 * those whose heartbeat is already stale and the earlier runs of this host and work
	 * folder (whose lock this node holds now), whatever their heartbeat. */
	settle_stale(q, c, alone ? 0 : dt_now_ms() - (int64_t)q->cfg.node_dead_after_ms);
	q->next_beat = dt_now_ms() + q->cfg.node_heartbeat_ms;
	return 0;
}

/* The store's housekeeping (store_maintain): a write-ahead log past --limit-wal-bytes is
 * truncated, under load as when idle. */
static void maintain(struct store_conn *c)
{
	uint64_t wal = 0;
	struct err e;

	if (store_maintain(c, limits.wal_bytes, &wal, &e))
		LOG_W("store housekeeping: %s", e.msg);
}

int64_t queue_nodes_tick(struct queue *q, struct store_conn *c)
{
	int64_t now = dt_now_ms();
	struct err e;

	if (now < q->next_beat)
		return q->next_beat;
	maintain(c);
	queue_ready_sweep(q, c);
	if (store_node_beat(c, q->node_id, now, &e) == 0) {
		if (now >= q->settle_from)
			settle_stale(q, c, now - (int64_t)q->cfg.node_dead_after_ms);
		locks_sweep(q, c);
	} else if (e.code == ERR_NOT_FOUND) {
		/* Another node found this one dead (a pause longer than --node-dead-after): its
		 * processes were settled there; register again and carry on. */
		LOG_W("this node was settled by another node (no heartbeat for %u ms): registering again",
		      q->cfg.node_dead_after_ms);
		if (register_self(q, c, &e))
			LOG_E("nodes: cannot register this node again: %s", e.msg);
	} else {
		/* The database is out of reach: so were the other nodes, whose heartbeats are
		 * stale for that reason alone.  Give them a whole --node-dead-after once it
		 * answers again before any is taken for dead. */
		LOG_E("nodes: cannot record this node's heartbeat: %s", e.msg);
		q->settle_from = now + q->cfg.node_heartbeat_ms + (int64_t)q->cfg.node_dead_after_ms;
	}
	q->next_beat = now + q->cfg.node_heartbeat_ms;
	return q->next_beat;
}

void queue_nodes_stop(struct queue *q, struct store_conn *c)
{
	int removed;
	struct err e;

	if (store_node_remove(c, q->node_id, &removed, &e))
		LOG_W("nodes: cannot remove this node's row: %s", e.msg);
}
