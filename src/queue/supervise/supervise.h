#ifndef ACCORD_QUEUE_SUPERVISE_H
#define ACCORD_QUEUE_SUPERVISE_H

#include <stdbool.h>

#include <jansson.h>

#include "base/err.h"
#include "base/memdir.h"
#include "queue/internal.h"
#include "store/store.h"

/* Pieces of a supervisor that speak to the store (internal to queue/). */

/* The "start" frame for the runner of r: entry point, arguments, out names and active
 * profiles from <workdir>/_main.json, and the system variables (txId, workDir,
 * processInfo with the session token, projectInfo, initiator).  With files (BORROWED,
 * NULL: the working directory holds the payload), _main.json comes from them, and they go
 * to the runner in the frame's "files" (base/memdir.h memdir_to_json): the runner writes
 * them into its empty working directory before the flow may read it.  NEW object. */
json_t *supervise_start_frame(struct running *r, const char *workdir, const struct memdir *files, struct err *e);

/* At the end: every file under <workdir>/_attachments/ (except _state/) as an attachment,
 * replacing those of an earlier run (a process restored from a checkpoint), and out.json's
 * object as meta.out; with had_out (meta.out of an earlier run) and no out variables now,
 * meta.out is removed. */
int supervise_store_results(struct store_conn *c, const char *id, const char *workdir, bool had_out,
			    struct err *e) WUR;

/* On suspension, in one transaction (store_process_suspend) after the working directory
 * has been packed and removed: the whole working directory as the payload it resumes from, the event names it waits for (BORROWED array), its
 * pending forms (BORROWED object, may be NULL; each gets "custom": whether it has its own
 * page, forms/<name>/index.html), the wake-up of a `sleep` (event NULL:
 * none) and the status SUSPENDED. */
int supervise_store_suspended(struct store_conn *c, const char *id, const char *workdir, json_t *events,
			      json_t *forms, const char *wake_event, int64_t wake_at, struct err *e) WUR;

/* A runner's {"type":"checkpoint", name, id} frame (BORROWED): stores the working
 * directory as checkpoint `name` of process id (store/process_checkpoints.h) with a
 * CHECKPOINT event {id, name}, and returns the answer for the runner (NEW):
 * {"type":"checkpoint_done", id, checkpointId} or, when it could not be stored,
 * {"type":"checkpoint_done", id, error}.  (checkpoints.c) */
json_t *supervise_checkpoint(struct store_conn *c, const char *id, const char *workdir, json_t *frame);

#endif
