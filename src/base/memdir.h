#ifndef ACCORD_BASE_MEMDIR_H
#define ACCORD_BASE_MEMDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"

/* A process's folder held in memory: the files of a start whose parts all came in the
 * request (concord.yml, _main.json, small files), and the payload a supervisor hands its
 * runner, so that a process that never reads its files never writes them (DESIGN.md §2,
 * "Working directory of a process").
 *
 * Entries are regular files (mode 0600, or 0700 when executable) and folders, named by
 * relative paths that path_is_safe_relative accepts.  memdir_write materializes them
 * beneath a folder exactly as pack_restore would the same payload.  Not thread-safe. */

struct memdir_entry {
	char *path; /* relative, no trailing '/' */
	char *data; /* NUL-terminated past len; NULL for a folder */
	size_t len;
	bool dir;
	bool exec; /* a file written 0700 (pack_dir keeps the owner's execute bit) */
};

struct memdir {
	struct memdir_entry *v;
	size_t n, cap;
	uint64_t bytes; /* the files' content in all */
};

void memdir_init(struct memdir *md);
void memdir_cleanup(struct memdir *md);

/* The entry named path, or NULL. */
const struct memdir_entry *memdir_find(const struct memdir *md, const char *path);

/* Adds a copy of a file.  What is there wins, as when a part is written into a folder
 * (api/process_start_req.h): a path that exists, or one whose folder is a file, leaves the
 * file out (0, nothing added).  ERR_INVALID for an unsafe path. */
int memdir_add(struct memdir *md, const char *path, const void *data, size_t len, bool exec, struct err *e) WUR;
/* Adds a folder entry (nothing when path exists as a folder). */
int memdir_add_dir(struct memdir *md, const char *path, struct err *e) WUR;
/* Sets path's content, replacing the file that is there (or adding it). */
int memdir_set(struct memdir *md, const char *path, const void *data, size_t len, struct err *e) WUR;

/* Removes path and everything below it. */
void memdir_drop(struct memdir *md, const char *path);

/* Writes every entry beneath dir (which exists): folders 0700, files 0600 or 0700, through
 * the working-directory resolver (base/path.h), so no entry can leave dir. */
int memdir_write(const struct memdir *md, const char *dir, struct err *e) WUR;

/* As a JSON array for a frame: [{"path", "data" (Base64), "exec"?} | {"path", "dir": true}].
 * NEW; NULL when out of memory. */
json_t *memdir_to_json(const struct memdir *md);
/* Adds the entries of such an array (BORROWED); ERR_INVALID for a malformed one. */
int memdir_from_json(struct memdir *md, const json_t *v, struct err *e) WUR;

#endif
