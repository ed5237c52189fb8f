#ifndef ACCORD_QUEUE_START_STAGED_H
#define ACCORD_QUEUE_START_STAGED_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "base/uuid.h"
#include "repo/repo.h"
#include "store/orgs.h"
#include "store/processes.h"
#include "store/projects.h"
#include "store/repositories.h"
#include "store/store.h"

/* Storing a new process from a staged working directory: the one path shared by
 * POST /api/v1/process, the `concord` task's children and triggers (cron, generic
 * events).  The caller has checked access and staged the files (uploaded parts, a
 * repository checkout, a child's payload) with _main.json; this loads the definition as
 * the runner will (flow/start_def.h: entry point, timeouts, handlers, exclusive group),
 * packs the folder and stores the process ENQUEUED with its session token hash.  The
 * caller removes the folder and wakes the queue. */

struct staged_start {
	const char *dir;	 /* the staged working directory, _main.json included */
	const char *instance_id; /* chosen by the caller (uuid_v4) */
	const char *kind;	 /* "DEFAULT", "FORK", "FAILURE_HANDLER", … (NULL: DEFAULT) */
	const char *parent_instance_id; /* NULL: none */
	const struct org *org;
	const struct project *project; /* NULL: no project */
	const char *initiator_id, *initiator;
	int64_t start_at;		 /* 0: now */
	int64_t timeout_s, suspend_timeout_s; /* request values (-1: the definition's) */
	json_t *tags;			 /* array (BORROWED, NULL: none) */
	json_t *meta;			 /* object (BORROWED, NULL: {}) */
	/* Started from a repository: the process record's repo* and commit* fields. */
	const struct repository *repo;
	const struct repo_commit *commit;
	json_t *triggered_by; /* object (BORROWED, NULL: none): {"trigger": {...}} */
	/* Put before the message of a definition that does not load (NULL: none), e.g. "the
	 * child's definition". */
	const char *error_prefix;
};

/* ERR_NOT_FOUND when the folder has no definition file; ERR_INVALID for a definition
 * that does not load (its message) or an unknown entry point, a bad timeout or exclusive
 * setting; ERR_TOO_LARGE past a size limit; the store's errors. */
int start_staged(struct store_conn *c, const unsigned char session_key[32], const struct staged_start *s,
		 struct err *e) WUR;

/* A new staging folder <data>/tmp/<prefix><uuid> (mode 0700) in out. */
int start_staging_dir(const char *data_dir, const char *prefix, char *out, size_t cap, struct err *e) WUR;

#endif
