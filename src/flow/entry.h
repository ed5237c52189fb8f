#ifndef ACCORD_FLOW_ENTRY_H
#define ACCORD_FLOW_ENTRY_H

#include <stdbool.h>

#include <jansson.h>

/* Concord's Map.Entry: iterating a map (loop items over a map, ${m.entrySet()}) gives
 * entries with `key` and `value`, which print as `key=value` (Java's toString), not as a
 * map.  An entry here is an ordinary object {key, value} that is remembered by address, so
 * that everything else (property access, JSON output, out variables) treats it as the map
 * it is; a copy of it (a deep copy, a saved and restored state) prints as a map again.
 * Thread-safe. */

/* New reference to a new entry; NULL when out of memory. */
json_t *entry_new(const char *key, json_t *value);
bool entry_is(const json_t *v);

#endif
