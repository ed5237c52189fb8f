#ifndef ACCORD_STORE_SENSITIVE_H
#define ACCORD_STORE_SENSITIVE_H

#include <stddef.h>

#include "store/store.h"

/* The sealed list of a process's sensitive values (schema/007_kv.sql).  The store keeps
 * the envelope only; sealing is done by queue/tasks/server_tasks.c. */

/* The envelope as a new buffer (caller frees), or *env NULL when the process has none. */
int store_sensitive_get(struct store_conn *c, const char *instance_id, unsigned char **env, size_t *len,
			struct err *e) WUR;

/* Inserts or replaces the envelope. */
int store_sensitive_put(struct store_conn *c, const char *instance_id, const void *env, size_t len, struct err *e) WUR;

#endif
