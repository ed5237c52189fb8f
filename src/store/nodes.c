#include "store/nodes.h"

#define CP(dst, i) store_col_copy(st, (i), (dst), sizeof(dst))

int store_node_register(struct store_conn *c, const struct node *n, struct err *e)
{
	static const char SQL[] =
	    "INSERT INTO nodes (id, host, pid, started_at, heartbeat_at, folder) VALUES (?, ?, ?, ?, ?, ?)";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_text(st, 1, n->id);
	store_bind_text(st, 2, n->host);
	store_bind_int64(st, 3, n->pid);
	store_bind_int64(st, 4, n->started_at);
	store_bind_int64(st, 5, n->heartbeat_at);
	store_bind_text(st, 6, n->folder);
	return store_step_done(st, e);
}

int store_node_beat(struct store_conn *c, const char *id, int64_t now, struct err *e)
{
	static const char SQL[] = "UPDATE nodes SET heartbeat_at = ? WHERE id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	if (!st)
		return -1;
	store_bind_int64(st, 1, now);
	store_bind_text(st, 2, id);
	if (store_step_done(st, e))
		return -1;
	return store_changes(c) == 1 ? 0 : err_set(e, ERR_NOT_FOUND, "node %s is not registered", id);
}

static void read_node(struct store_stmt *st, void *out)
{
	struct node *n = out;

	CP(n->id, 0);
	CP(n->host, 1);
	n->pid = store_col_int64(st, 2);
	n->started_at = store_col_int64(st, 3);
	n->heartbeat_at = store_col_int64(st, 4);
	CP(n->folder, 5);
}

int store_nodes_stale(struct store_conn *c, const char *self, int64_t before, const char *host, const char *folder,
		      struct node **out, size_t *n, struct err *e)
{
	static const char SQL[] = "SELECT id, host, pid, started_at, heartbeat_at, folder FROM nodes"
				  " WHERE id <> ? AND (? = 0 OR heartbeat_at < ? OR (host = ? AND folder = ?))"
				  " ORDER BY heartbeat_at";
	struct store_stmt *st = store_prepare(c, SQL, e);

	*out = NULL;
	*n = 0;
	if (!st)
		return -1;
	store_bind_text(st, 1, self);
	store_bind_int64(st, 2, before);
	store_bind_int64(st, 3, before);
	store_bind_text(st, 4, host ? host : "");
	store_bind_text(st, 5, host ? folder : "");
	return store_collect(st, sizeof **out, read_node, (void **)out, n, e);
}

int store_node_remove(struct store_conn *c, const char *id, int *removed, struct err *e)
{
	static const char SQL[] = "DELETE FROM nodes WHERE id = ?";
	struct store_stmt *st = store_prepare(c, SQL, e);

	*removed = 0;
	if (!st)
		return -1;
	store_bind_text(st, 1, id);
	if (store_step_done(st, e))
		return -1;
	*removed = store_changes(c) == 1;
	return 0;
}
