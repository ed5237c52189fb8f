#ifndef ACCORD_BASE_PATH_H
#define ACCORD_BASE_PATH_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "base/err.h"

/* True when rel is a safe relative path: not empty, not absolute, no "." or ".."
 * component, no empty component, no NUL or backslash. */
bool path_is_safe_relative(const char *rel);

/* dir + "/" + rel into a new string (caller frees), refusing unsafe rel with ERR_INVALID. */
char *path_join_safe(const char *dir, const char *rel, struct err *e);

/* mkdir -p with the given mode for every created component. */
int path_mkdirs(const char *path, mode_t mode, struct err *e) WUR;

/* Removes a file tree (like rm -rf); missing path is not an error. */
int path_remove_tree(const char *path, struct err *e) WUR;

/* Reads a whole file into a new NUL-terminated buffer (caller frees), failing with
 * ERR_TOO_LARGE past max bytes. */
char *path_read_file(const char *path, size_t max, size_t *len, struct err *e);

/* Writes data to path atomically (temp file + rename) with the given mode. */
int path_write_file(const char *path, const void *data, size_t len, mode_t mode, struct err *e) WUR;

#endif
