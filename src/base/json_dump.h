#ifndef ACCORD_BASE_JSON_DUMP_H
#define ACCORD_BASE_JSON_DUMP_H

#include <stdbool.h>

#include <jansson.h>

/* Compact serialisation: the very text of jansson's json_dumps(v, JSON_COMPACT), with
 * JSON_ENCODE_ANY when any (a scalar at the top; else only an object or an array), written
 * by a single pass over the value instead of jansson's writer (which formats and hashes
 * every container's address for its loop check and calls back for every piece: ~90
 * instructions a byte of a process's start frame).  What the fast pass cannot decide
 * exactly — a real (jansson's own formatting), a string jansson would refuse (not UTF-8),
 * a value nested deeper than 1,024 levels (or a loop) — is left to jansson, so the answer
 * is always jansson's.  New string (caller frees), or NULL where jansson gives NULL (out of
 * memory, a loop, invalid UTF-8, a scalar without any). */
char *json_dump_compact(const json_t *v, bool any);

#endif
