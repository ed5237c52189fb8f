#ifndef ACCORD_QUEUE_SUPERVISE_H
#define ACCORD_QUEUE_SUPERVISE_H

#include <jansson.h>

#include "base/err.h"
#include "queue/internal.h"
#include "store/store.h"

/* Pieces of a supervisor that speak to the store (internal to queue/). */

/* The "start" frame for the runner of r: entry point, arguments, out names and active
 * profiles from <workdir>/_main.json, and the system variables (txId, workDir,
 * processInfo with the session token, projectInfo, initiator).  NEW object. */
json_t *supervise_start_frame(struct running *r, const char *workdir, struct err *e);

/* At the end: every file under <workdir>/_attachments/ (except _state/) as an attachment,
 * and out.json's object as meta.out. */
int supervise_store_results(struct store_conn *c, const char *id, const char *workdir, struct err *e) WUR;

/* On suspension: the whole working directory as the payload it resumes from. */
int supervise_store_suspended(struct store_conn *c, const char *id, const char *workdir, struct err *e) WUR;

#endif
