#ifndef ACCORD_STORE_NODES_H
#define ACCORD_STORE_NODES_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "store/store.h"

/* The nodes of the service (table nodes): each `accord serve` registers at start and
 * heart-beats; queue/nodes.c settles the processes of a node whose heartbeat stopped. */

struct node {
	char id[40];
	char host[256];
	char folder[4096];
	int64_t pid, started_at, heartbeat_at;
};

int store_node_register(struct store_conn *c, const struct node *n, struct err *e) WUR;
/* Sets id's heartbeat; ERR_NOT_FOUND when its row is gone (another node settled it). */
int store_node_beat(struct store_conn *c, const char *id, int64_t now, struct err *e) WUR;
/* The nodes other than self whose last heartbeat is before `before` (before 0: every
 * other node), and those of host and folder whatever their heartbeat (host NULL: none);
 * *out new (caller frees). */
int store_nodes_stale(struct store_conn *c, const char *self, int64_t before, const char *host, const char *folder,
		      struct node **out, size_t *n, struct err *e) WUR;
/* Removes id's row; *removed says whether this call did (two nodes settling one: one
 * wins). */
int store_node_remove(struct store_conn *c, const char *id, int *removed, struct err *e) WUR;

#endif
