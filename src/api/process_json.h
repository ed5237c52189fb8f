#ifndef ACCORD_API_PROCESS_JSON_H
#define ACCORD_API_PROCESS_JSON_H

#include <jansson.h>

#include "api/api.h"
#include "store/processes.h"

/* Concord's ProcessEntry (reference §6.3): empty and unset fields are left out. */

enum proc_include {
	INC_CHECKPOINTS = 1 << 0,
	INC_CHECKPOINTS_HISTORY = 1 << 1,
	INC_CHILDREN = 1 << 2,
	INC_HISTORY = 1 << 3,
	INC_OUT = 1 << 4, /* meta.out in list answers (a status always has it) */
};

/* The repeatable include= parameter (case-insensitive): 400 naming an unknown value. */
int api_process_includes(struct api_call *c, unsigned *out) WUR;

/* The record of p with the requested includes read from the store.  *out NEW. */
int api_process_json(struct api_call *c, const struct process *p, unsigned includes, json_t **out) WUR;

/* Adds "checkpoints" ({id, name, createdAt}, newest last) and/or
 * "checkpointRestoreHistory" ({id, checkpointId, processStatus, changeDate}) to v as
 * includes asks (process_checkpoints.c). */
int api_process_checkpoints_json(struct api_call *c, const char *id, unsigned includes, json_t *v) WUR;

/* Adds "waits" to v when p waits SUSPENDED for process locks (locks.c): Concord's
 * PROCESS_LOCK wait conditions {type, reason ("Waiting for lock 'X' held by process Y"),
 * instanceId (the holder), orgId, projectId, scope, name, exclusive}. */
int api_process_lock_waits_json(struct api_call *c, const struct process *p, json_t *v) WUR;

#endif
