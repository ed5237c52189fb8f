#ifndef ACCORD_BASE_PACK_H
#define ACCORD_BASE_PACK_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/memdir.h"

/* Archives for process payloads (libarchive).
 *
 * pack_unzip extracts an uploaded ZIP into a folder under hard limits: at most
 * max_entries entries, max_bytes unpacked bytes in all, and an unpacked/packed ratio of
 * at most max_ratio (checked as bytes are written, so a zip bomb stops early).  Entries
 * whose names are absolute, contain "..", a backslash or a NUL, and entries that are
 * symbolic or hard links, devices, FIFOs or sockets are refused: ERR_INVALID naming the
 * entry.  Over a limit: ERR_TOO_LARGE naming the limit.  Files are written 0600, folders
 * 0700, beneath dir only (no path of an entry can leave it, also not through a symbolic
 * link already in dir).  Existing files are replaced.  Nothing is cleaned up on failure:
 * the caller removes dir.
 *
 * pack_dir / pack_restore turn a folder into one uncompressed tar blob and back (the
 * stored payload and suspended state of a process; pack_restore also takes pack_files'
 * memdir blobs).  pack_dir stores regular files and folders only (symbolic links and
 * other kinds are skipped) and refuses more than max_bytes of content (ERR_TOO_LARGE).
 * pack_restore applies the same entry checks as pack_unzip, so a blob from the store cannot
 * write outside dir either.
 *
 * libarchive is not linked: each of these loads it on first use (base/archive_api.h) and
 * fails with ERR_INTERNAL "cannot load libarchive.so.13 (package libarchive13): ..." when
 * it cannot (the load is thread-safe and done once). */

struct pack_limits {
	size_t max_entries;
	uint64_t max_bytes;
	unsigned max_ratio;
};

int pack_unzip(const void *zip, size_t len, const char *dir, const struct pack_limits *lim, struct err *e) WUR;

/* New buffer (caller frees) in *out of *out_len bytes. */
int pack_dir(const char *dir, uint64_t max_bytes, void **out, size_t *out_len, struct err *e) WUR;
/* The same folder as a ZIP (for downloads: Concord's state snapshot). */
int pack_zip_dir(const char *dir, uint64_t max_bytes, void **out, size_t *out_len, struct err *e) WUR;
int pack_restore(const void *tar, size_t len, const char *dir, struct err *e) WUR;

/* One file of a tar blob made by pack_dir, without extracting the rest (pack_read.c):
 * the content of the regular-file entry named exactly `name` (a new buffer, caller frees;
 * NUL-terminated past *len) in *data.  ERR_NOT_FOUND when there is no such entry or it is
 * not a regular file (a folder, a link); ERR_TOO_LARGE when it holds more than max bytes. */
int pack_tar_read(const void *tar, size_t len, const char *name, size_t max, char **data, size_t *data_len,
		  struct err *e) WUR;

/* A folder held in memory (base/memdir.h) and a payload blob, both ways (pack_mem.c).
 * pack_files packs the entries as a memdir blob (base/memdir_blob.h: compact, no tar
 * headers) in the order they were added, each folder of a file before it, and refuses more
 * than max_bytes of content (ERR_TOO_LARGE).  pack_tar_files adds the regular files and
 * folders of a blob — a memdir blob, or a tar of pack_dir's format (and of pack_files'
 * before it wrote memdir blobs) — to md, refusing what pack_restore refuses (ERR_INVALID),
 * and ERR_TOO_LARGE when the content is more than max_bytes (the caller then restores the
 * blob to a folder).  pack_restore and pack_tar_read take either kind of blob too. */
int pack_files(const struct memdir *md, uint64_t max_bytes, void **out, size_t *out_len, struct err *e) WUR;
int pack_tar_files(const void *tar, size_t len, uint64_t max_bytes, struct memdir *md, struct err *e) WUR;

#endif
