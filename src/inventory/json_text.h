#ifndef ACCORD_INVENTORY_JSON_TEXT_H
#define ACCORD_INVENTORY_JSON_TEXT_H

#include <stddef.h>

#include <jansson.h>

/* Containment of a filter decided on an item's JSON text, without building the item as a
 * tree: what json_contains (json.h) would spend most of its time on when a filter matches
 * many items.  The text is read once, left to right; only where the filter has an object
 * or array does it look inside the item's value at that place (the elements of an array
 * again from their start for each of the filter's elements not yet found), and every other
 * value is skipped without being checked.  The rules are those of inv_json_contains: an
 * object contains each member of the filter's object with a value that contains it, an
 * array contains each element of the filter's array in some element of its own, containers
 * only of the same type, scalars of the same JSON type, numbers by value, a scalar at the
 * top within an array.
 *
 * inv_json_text_contains answers 1 (contains) or 0 (does not) exactly as
 * inv_json_contains(parse(text), filter) would for text that parses, or -1 when it cannot
 * tell cheaply, and the caller must parse: an object or array of the filter with more than
 * 32 members, a filter deeper than 32, a key or string of the text (where it looks) with
 * an escape, a number outside what it compares exactly, or text malformed where it looked
 * (stored items are valid JSON, written by jansson: it does not promise anything for text
 * that does not parse).  text[0..len) need not be NUL-terminated; both borrowed.
 * Thread-safe. */
int inv_json_text_contains(const char *text, size_t len, const json_t *filter);

#endif
