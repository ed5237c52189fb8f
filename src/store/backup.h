#ifndef ACCORD_STORE_BACKUP_H
#define ACCORD_STORE_BACKUP_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/* Whole-database copies of a SQLite store with SQLite's online backup API, for
 * `accord backup` and `accord restore` (cli/backup.c).
 *
 * The source is read inside one read transaction, so the copy is the database as it was
 * at one instant even while a server writes to it: in WAL mode a reader blocks no
 * writer, and the pages are copied STORE_BACKUP_STEP_PAGES at a time. */

#define STORE_BACKUP_STEP_PAGES 256

struct store_backup_info {
	int schema;    /* highest migration number recorded in the copy (0: none) */
	int64_t pages; /* pages copied */
	int64_t bytes; /* size of the copy */
	int64_t elapsed_ms;
};

/* Copies the database file src to dst (a new file: any file at dst is replaced by a
 * rename only once the copy is complete, checked and synced; mode 0600).  The copy is
 * self-contained (rollback journal, no -wal file).  ERR_NOT_FOUND when src does not
 * exist, ERR_INVALID when dst names src, ERR_INTERNAL with SQLite's words otherwise. */
int store_backup_to_file(const char *src, const char *dst, struct store_backup_info *info, struct err *e) WUR;

/* Checks a copy: SQLite's integrity_check, and a schema this build knows (a copy made
 * by a newer Accord, with migrations this build lacks, is refused).  Fills info->schema.
 * ERR_INVALID saying what is wrong. */
int store_backup_check(const char *path, struct store_backup_info *info, struct err *e) WUR;

/* Replaces the content of the database dst (created when missing; its -wal is taken
 * care of by SQLite) with the content of src in one write transaction.  The caller makes
 * sure no server uses dst. */
int store_backup_restore(const char *src, const char *dst, struct store_backup_info *info, struct err *e) WUR;

/* The highest migration number this build applies. */
int store_schema_latest(void);

#endif
