#ifndef ACCORD_INVENTORY_JSON_FLAT_H
#define ACCORD_INVENTORY_JSON_FLAT_H

#include <stddef.h>

#include <jansson.h>

/* Containment of a flat filter decided on an item's JSON text, without building the item
 * as a tree: what json_contains (json.h) spends most of its time on when a filter matches
 * many items.  A flat filter is an object of 1 to 32 keys whose values are all scalars
 * (`{"env":"prod","role":"web"}`): an object contains it when each of its keys is a member
 * of the object's top level with an equal scalar (the rules of inv_json_contains: same JSON
 * type, numbers by value).
 *
 * inv_json_flat_contains answers 1 (contains) or 0 (does not) exactly as
 * inv_json_contains(parse(text), filter) would, or -1 when it cannot tell cheaply, and the
 * caller must parse: the filter is not flat, the text is not an object, a key or string
 * uses an escape, a number is outside what it compares exactly, or the text is malformed
 * where it looked (it skips values of other keys without checking them: stored items are
 * valid JSON, written by jansson).  text[0..len) need not be NUL-terminated; both borrowed.
 * Thread-safe. */
int inv_json_flat_contains(const char *text, size_t len, const json_t *filter);

#endif
