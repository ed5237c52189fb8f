#ifndef ACCORD_BASE_MEMDIR_BLOB_H
#define ACCORD_BASE_MEMDIR_BLOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/memdir.h"

/* A folder held in memory (base/memdir.h) as one compact blob: the stored payload of a
 * start whose files all came in its request (pack.h pack_files).  A tar of the same two
 * small files is 3 KB of headers and padding, which SQLite keeps on an overflow page a
 * row (issue 27: ~3 of a hello-world process's WAL frames, and libarchive's writer and
 * reader); this blob is the content and ~10 bytes an entry.
 *
 * Layout: the 8 magic bytes MEMDIR_BLOB_MAGIC (a NUL first, so no tar blob begins with them:
 * a tar's first byte is its first entry's name), then each entry: a kind byte ('d' folder,
 * 'f' file 0600, 'x' file 0700), the path's length (2 bytes, little-endian, at most 4095)
 * and its bytes, and for a file its length (4 bytes, little-endian) and content.  The
 * folders of an entry come before it, as in the tar pack_files wrote before. */

#define MEMDIR_BLOB_MAGIC "\0accmd\0\1"
#define MEMDIR_BLOB_MAGIC_LEN 8

/* Whether p begins with the magic. */
bool memdir_blob_is(const void *p, size_t len);

/* New buffer (caller frees) in *out of *out_len bytes; ERR_TOO_LARGE when md holds more than
 * max_bytes of content. */
int memdir_blob_pack(const struct memdir *md, uint64_t max_bytes, void **out, size_t *out_len, struct err *e) WUR;

/* Adds the blob's entries to md (memdir_add's rules: an unsafe path is ERR_INVALID, a path
 * already there wins); ERR_INVALID for a malformed blob, ERR_TOO_LARGE past max_bytes of
 * content in md.  On failure md may hold some of the entries: the caller cleans it up. */
int memdir_blob_unpack(const void *p, size_t len, uint64_t max_bytes, struct memdir *md, struct err *e) WUR;

#endif
