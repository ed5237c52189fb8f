#ifndef ACCORD_STORE_PROCESS_CHECKPOINTS_H
#define ACCORD_STORE_PROCESS_CHECKPOINTS_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/uuid.h"
#include "store/store.h"

/* The checkpoints of a process (issue 9): a named snapshot (tar of the working directory)
 * taken when the flow passes a `checkpoint` step, from which the process can be restored.
 * Deleted with their process. */

/* Stores a checkpoint with a new id (written to id_out) and created_at = now.  Not a
 * transaction of its own. */
int store_process_checkpoint_add(struct store_conn *c, const char *instance_id, const char *name, const void *payload,
				 size_t len, char id_out[UUID_STR_LEN], struct err *e) WUR;

/* New JSON array of {id, name, createdAt (ISO-8601)}, oldest first (newest last). */
int store_process_checkpoint_list(struct store_conn *c, const char *instance_id, json_t **out, struct err *e) WUR;

/* The payload of checkpoint id of process instance_id (new buffer, caller frees) and its
 * name (name_cap bytes, may be truncated).  ERR_NOT_FOUND "Checkpoint not found: <id>"
 * when that process has no such checkpoint. */
int store_process_checkpoint_get(struct store_conn *c, const char *instance_id, const char *id, char *name,
				 size_t name_cap, void **payload, size_t *len, struct err *e) WUR;

/* The id of the latest checkpoint named name of process instance_id.  ERR_NOT_FOUND
 * "Checkpoint not found: <name>" when there is none. */
int store_process_checkpoint_find(struct store_conn *c, const char *instance_id, const char *name,
				  char id_out[UUID_STR_LEN], struct err *e) WUR;

#endif
