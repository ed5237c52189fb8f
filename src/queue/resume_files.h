#ifndef ACCORD_QUEUE_RESUME_FILES_H
#define ACCORD_QUEUE_RESUME_FILES_H

#include <jansson.h>

#include "base/err.h"

/* Files that travel with a resume (a form's `file` fields): the API puts them into the
 * resume arguments under this reserved key as [{"path": "<relative>", "data": "<base64>"}],
 * and the supervisor writes them into the working directory before the runner starts. */
#define RESUME_FILES_KEY "_accordResumeFiles"

/* Writes every file listed under RESUME_FILES_KEY in args (may be NULL) beneath workdir
 * (with the beneath-root path helpers: a path outside is refused with ERR_FORBIDDEN),
 * creating folders as needed, then removes the key from args so the flow never sees it.
 * At most limits.archive_bytes decoded bytes in all (ERR_TOO_LARGE).  ERR_INVALID for a
 * malformed list.  Not thread-safe on args. */
int queue_resume_files(const char *workdir, json_t *args, struct err *e) WUR;

#endif
