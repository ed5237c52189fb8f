#ifndef ACCORD_STORE_KV_H
#define ACCORD_STORE_KV_H

#include <stdbool.h>
#include <stdint.h>

#include "store/store.h"

/* The project-scoped key-value store of the `kv` task (schema/007_kv.sql).  An entry is
 * either a string or a 64-bit integer.  Keys and values are checked by the caller
 * (queue/tasks/server_task_kv.c); the store only stores. */

struct kv_value {
	bool found;
	bool is_long;
	char *str;   /* malloc'd when found && !is_long (caller frees) */
	int64_t num; /* when found && is_long */
};

/* Inserts or replaces the entry (str NULL: the integer num). */
int store_kv_put(struct store_conn *c, const char *project_id, const char *key, const char *str, int64_t num,
		 struct err *e) WUR;

/* Reads the entry into *v (v->found false when absent). */
int store_kv_get(struct store_conn *c, const char *project_id, const char *key, struct kv_value *v, struct err *e) WUR;

/* Atomically adds 1 to an integer entry (a missing one starts at 0) in one statement and
 * returns the new value.  A string entry is ERR_CONFLICT. */
int store_kv_inc(struct store_conn *c, const char *project_id, const char *key, int64_t *out, struct err *e) WUR;

/* The number of entries of the project (the policy's kv.maxEntries counts them). */
int store_kv_count(struct store_conn *c, const char *project_id, int64_t *n, struct err *e) WUR;

/* Removes the entry (absent is fine). */
int store_kv_remove(struct store_conn *c, const char *project_id, const char *key, struct err *e) WUR;

#endif
