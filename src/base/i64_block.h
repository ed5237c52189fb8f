#ifndef ACCORD_BASE_I64_BLOCK_H
#define ACCORD_BASE_I64_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "base/i64_list.h"

/* A block of a posting list, as the containment index stores it (store/inventory_postings.h):
 * an ascending list of distinct 64-bit ids written as its first id, kept apart (in the row's
 * key), and the gaps between consecutive ids, each an unsigned LEB128 varint (7 bits a byte,
 * the lowest first, the high bit set on every byte but the last, never longer than needed).
 * A list of one id has no bytes.  The gaps are computed in uint64_t, so ids anywhere in
 * int64_t's range (INT64_MIN to INT64_MAX: a gap of 2^64 - 1) encode.  Pure functions, no
 * allocation but the decoder's list. */

/* The most bytes a gap takes (ceil(64 / 7)). */
#define I64_BLOCK_GAP_MAX 10

/* The most bytes i64_block_encode writes for n ids. */
#define I64_BLOCK_BOUND(n) ((n) > 1 ? ((n)-1) * I64_BLOCK_GAP_MAX : 0)

/* Writes the gaps of v[0..n) (ascending, distinct; asserted) to out, which has room for
 * I64_BLOCK_BOUND(n) bytes; returns the bytes written (0 for n ≤ 1). */
size_t i64_block_encode(const int64_t *v, size_t n, uint8_t *out);

/* The bytes i64_block_encode would write for v[0..n). */
size_t i64_block_size(const int64_t *v, size_t n);

/* Appends first, then the ids its gaps in p[0..len) lead to, to out.  The bytes are
 * checked as stored data: ERR_INVALID, out as it was, when they are not a block (a varint
 * cut short or longer than needed, a gap of 0 or past 2^64 - 1, an id past INT64_MAX);
 * ERR_INTERNAL when out of memory. */
int i64_block_decode(int64_t first, const uint8_t *p, size_t len, struct i64_list *out, struct err *e) WUR;

#endif
