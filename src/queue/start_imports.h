#ifndef ACCORD_QUEUE_START_IMPORTS_H
#define ACCORD_QUEUE_START_IMPORTS_H

#include "base/err.h"
#include "flow/model.h"
#include "queue/start_staged.h"
#include "repo/repo.h"
#include "store/store.h"

/* The git and mvn `imports` of a process start (repo.h repo_import_fetch): fetched on the
 * server while the definition is loaded, into the staged folder, so that they are part of
 * the stored payload and the runner finds them in place.  A secret of an import is used
 * when the process's initiator could read it through the API (READER, auth/rbac.h) and it
 * is not restricted to another project.  Each import fetched is recorded as one IMPORTS
 * event of the process: {"imports": [{"type", "url", "version", "path", "commitId"} |
 * {"type", "url", "sha256"}]}, so that a run can be reproduced. */
struct start_imports {
	struct repo_imports im;
	struct model_importer importer;
	const struct staged_start *s;
};

/* s->repos NULL: git and mvn imports fail as when running locally. */
int start_imports_init(struct start_imports *si, struct store_conn *c, const struct staged_start *s,
		       struct err *e) WUR;
/* The IMPORTS event of process id when an import was fetched. */
int start_imports_record(struct start_imports *si, struct store_conn *c, const char *id, struct err *e) WUR;
void start_imports_cleanup(struct start_imports *si);

#endif
