#ifndef ACCORD_STORE_PROCESS_OPS_H
#define ACCORD_STORE_PROCESS_OPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/uuid.h"
#include "store/store.h"

/* What the process operations of api/process_ops.c need from the store (schema 029):
 * the payload a process was started with (kept for a restart), the disabled flag, and the
 * process tree (root and descendants). */

/* Most processes a tree walk returns (a cascade stops at most this many). */
#define PROCESS_TREE_MAX 10000

/* Keeps data (len bytes) as the payload process id was started with (inside the start's
 * transaction, store_process_create). */
int store_process_start_payload_put(struct store_conn *c, const char *id, const void *data, size_t len,
				    struct err *e) WUR;

/* Sets or clears the disabled flag of process id when it is in a final status (nothing
 * otherwise, as Concord). */
int store_process_disable(struct store_conn *c, const char *id, bool disabled, struct err *e) WUR;

/* Runs a finished process again, in one transaction: its working payload becomes the one
 * it was started with, its attachments and pending forms are dropped, and it moves from
 * its final status to ENQUEUED (through RESUMING, with no resume event: it starts at its
 * entry point).  Its log, events, status history and checkpoints are kept.
 * ERR_NOT_FOUND for an unknown process; ERR_CONFLICT "Can't restart running process: <id>"
 * when it is not final, or when the payload it started with is not kept (a process
 * started before schema 029). */
int store_process_restart(struct store_conn *c, const char *id, struct err *e) WUR;

/* The root of id's process tree (id itself when it has no parent) into root. */
int store_process_root(struct store_conn *c, const char *id, char root[UUID_STR_LEN], struct err *e) WUR;

/* The descendants of id (children, grandchildren…; not id), parents before their
 * children: a new array (caller frees) of *n ids, at most PROCESS_TREE_MAX. */
int store_process_descendants(struct store_conn *c, const char *id, char (**ids)[UUID_STR_LEN], size_t *n,
			      struct err *e) WUR;

/* When a SUSPENDED process is woken by the server (a `sleep`): *at in ms (0: not) and the
 * event it is resumed with (event, cap bytes). */
int store_process_wake(struct store_conn *c, const char *id, int64_t *at, char *event, size_t cap, struct err *e) WUR;

#endif
