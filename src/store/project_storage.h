#ifndef ACCORD_STORE_PROJECT_STORAGE_H
#define ACCORD_STORE_PROJECT_STORAGE_H

#include <stdint.h>

#include "store/store.h"

/* The bytes a project's processes keep stored: their log chunks and attachments (schema
 * 021's project_storage, one row per project).  Kept up to date by the writes and deletes
 * of those (process_logs.c, process_attachments.c, retention.c), so that
 * --limit-project-storage-bytes is checked with one primary-key read.  A process without
 * a project counts nowhere. */

enum { PSTORE_LOGS = 1, PSTORE_ATTACHMENTS = 2 };

/* Adds delta (may be negative) to the project of process id (nothing without a project). */
int project_storage_add(struct store_conn *c, const char *id, int64_t delta, struct err *e) WUR;
/* Takes the stored bytes of process id's parts (PSTORE_* bits) off its project's count,
 * before they are deleted. */
int project_storage_release(struct store_conn *c, const char *id, unsigned parts, struct err *e) WUR;
/* What process id's project may still store under --limit-project-storage-bytes:
 * UINT64_MAX when there is no quota or the process has no project, 0 when it is used up. */
int store_project_storage_room(struct store_conn *c, const char *id, uint64_t *room, struct err *e) WUR;

#endif
