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

/* Gives the folder path and everything in it (symbolic links themselves, never what they
 * point to; at most 256 levels) to uid:gid. */
int path_chown_tree(const char *path, uid_t uid, gid_t gid, struct err *e) WUR;

/* Gives every component of rel beneath root (each folder on the way and the last one) to
 * uid:gid, walking by descriptor: a symbolic link or ".." on the way is refused, so nothing
 * outside root is ever given away. */
int path_chown_beneath(const char *root, const char *rel, uid_t uid, gid_t gid, struct err *e) WUR;

/* Reads the regular file name in the folder dirfd like path_read_file, never following a
 * symbolic link at name nor blocking on a FIFO: for folders that a flow wrote. */
char *path_read_at(int dirfd, const char *name, size_t max, size_t *len, struct err *e);

/* Writes all n bytes to fd, retrying on EINTR and short writes; -1 with errno set. */
int path_write_all(int fd, const void *p, size_t n) WUR;

/* Writes data to path atomically (temp file + rename) with the given mode. */
int path_write_file(const char *path, const void *data, size_t len, mode_t mode, struct err *e) WUR;

/* Writes a scratch file that nothing needs after a crash (a start's staging folder, a
 * working directory rebuilt from the store): in place, not synced — a sync per process
 * start cost the server a tenth of its time (bench/RESULTS.md). */
int path_write_scratch(const char *path, const void *data, size_t len, mode_t mode, struct err *e) WUR;

/* The working-directory resolver: every file a flow names goes through these.
 *
 * root is the process's working directory, an absolute path the caller trusts (created by
 * the supervisor or `accord run`).  name is untrusted: relative to root, or absolute and
 * lexically inside root (Concord flows pass "${workDir}/x"); root is stripped only on a
 * component boundary, so "<root>x/y" is outside.  A name with a ".." component is refused
 * before any system call.  The rest is resolved beneath root with openat2(RESOLVE_BENEATH |
 * RESOLVE_NO_MAGICLINKS): a symbolic link may be followed only while it stays beneath root,
 * /proc magic links (/proc/self/root, /proc/self/fd/N) never.  Kernels without openat2
 * (ENOSYS) get a component-by-component walk with O_NOFOLLOW that refuses every symbolic link.
 * A regular file with more than one hard link is refused for reading and writing: its other
 * name may lie anywhere on the file system.
 *
 * Errors (e set, message naming the path): ERR_FORBIDDEN "path '…' is outside the working
 * directory" for every escape, and for hard links; ERR_NOT_FOUND when it does not exist;
 * ERR_INVALID for a FIFO, device or socket, or a folder where a file is needed.
 * Thread-safe: no state is kept between calls. */

/* Opens name beneath root with open(2) flags and mode (for O_CREAT); O_CLOEXEC is always
 * added.  O_TRUNC is applied only after the hard-link check.  Returns a NEW descriptor, or
 * < 0 with e set.  With O_PATH only the escape checks apply. */
int path_open_beneath(const char *root, const char *name, int flags, mode_t mode, struct err *e) WUR;

/* Reads the regular file name beneath root into a new NUL-terminated buffer (caller frees);
 * ERR_TOO_LARGE past max bytes. */
char *path_read_beneath(const char *root, const char *name, size_t max, size_t *len, struct err *e);

/* Writes data to name beneath root atomically (temp file + rename in the same folder), which
 * must exist.  Refuses to replace a symbolic link, a folder or a hard-linked file. */
int path_write_beneath(const char *root, const char *name, const void *data, size_t len, mode_t mode,
		       struct err *e) WUR;

/* mkdir -p of name beneath root; each created folder gets mode. */
int path_mkdirs_beneath(const char *root, const char *name, mode_t mode, struct err *e) WUR;

/* 1 when name exists beneath root, 0 when it does not, < 0 (e set) when it is refused. */
int path_exists_beneath(const char *root, const char *name, struct err *e) WUR;

/* rename(2) of from to to, both beneath root (to's folder must exist; an existing to is
 * replaced).  The last component of either is not followed. */
int path_rename_beneath(const char *root, const char *from, const char *to, struct err *e) WUR;

/* The absolute form of name (root + "/" + the part below root) as a new string, after the
 * same lexical checks; NULL with e set when name is outside. Touches no file. */
char *path_abs_beneath(const char *root, const char *name, struct err *e);

#endif
