#ifndef ACCORD_QUEUE_START_STAGED_H
#define ACCORD_QUEUE_START_STAGED_H

#include <stdbool.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"
#include "base/memdir.h"
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
 * caller removes the folder and wakes the queue.
 *
 * <work> is the data folder or `accord serve --work-dir`: tmp/, ready/ and work/ share its
 * file system, so each move is one rename.
 *
 * With work_dir set, the staged folder is also handed to this node's supervisor: it is
 * renamed to <work>/ready/<id> before the process is stored, and the supervisor that claims
 * the process renames it into work/<id> instead of unpacking the stored payload (the same
 * files: the payload is the packed folder).  The payload is still stored, so a process
 * claimed elsewhere, resumed or recovered after a crash unpacks it as before.  On success
 * the folder at dir is gone (the caller's removal finds nothing); on failure it is back.
 *
 * With files set instead of dir, the folder is held in memory (base/memdir.h: a start whose
 * parts all came in the request): nothing is written to disk, the payload is packed from
 * memory, and the supervisor hands it to the runner in memory (DESIGN.md §2).  A start that
 * needs the folder on disk to be checked — a policy with rules (its workspace and state
 * rules walk the folder), a definition with `imports` — is written to a staging folder
 * first and goes on as a folder start. */

/* The most content a start holds in memory (files) and a supervisor hands its runner in
 * memory; above it, a staging folder and an unpacked working directory as before. */
#define START_MEM_MAX (256u * 1024)

struct staged_start {
	const char *dir;	 /* the staged working directory, _main.json included */
	struct memdir *files;	 /* or the folder in memory (dir NULL; work_dir required) */
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
	const char *work_dir; /* NULL: no hand-off (see above) */
	struct repos *repos;  /* git and mvn imports (queue/start_imports.h; NULL: refused) */
	const char *scopes;   /* store/processes.h process_new.scopes: "" none, NULL the parent's */
	/* Its audit entry, stored in the process's own transaction (BORROWED, NULL: none). */
	const struct audit_entry *audit;
};

/* ERR_NOT_FOUND when the folder has no definition file; ERR_INVALID for a definition
 * that does not load (its message) or an unknown entry point, a bad timeout or exclusive
 * setting; ERR_TOO_LARGE past a size limit; the store's errors. */
int start_staged(struct store_conn *c, const unsigned char session_key[32], const struct staged_start *s,
		 struct err *e) WUR;

/* <work>/ready/<id>: the staged folder of a stored process not yet claimed (see above). */
int start_ready_path(const char *work_dir, const char *id, char *out, size_t cap, struct err *e) WUR;
/* Moves <work>/ready/<id> to workdir (which must not exist): 1 when moved, 0 when there is
 * none (the caller unpacks the payload), < 0 on error. */
int start_ready_take(const char *work_dir, const char *id, const char *workdir, struct err *e) WUR;
/* Removes <work>/ready/<id> if it is there (a process that ended without being claimed). */
void start_ready_drop(const char *work_dir, const char *id);

/* A new staging folder <work>/tmp/<prefix><uuid> (mode 0700) in out. */
int start_staging_dir(const char *work_dir, const char *prefix, char *out, size_t cap, struct err *e) WUR;

#endif
