#ifndef ACCORD_INVENTORY_JSON_CANON_H
#define ACCORD_INVENTORY_JSON_CANON_H

#include <stdbool.h>
#include <stddef.h>

/* Whether text[0..len) is, byte for byte, what jansson prints for the value it parses:
 * json_dumps(json_loadb(text, JSON_DECODE_ANY), JSON_COMPACT | JSON_ENCODE_ANY) == text.
 * Then an answer may carry the text as it is instead of parsing and printing it again
 * (stored items are written by jansson that way).  True only for: no whitespace outside
 * strings; strings of valid UTF-8 without control characters, escaped only as \" \\ \b \f
 * \n \r \t; integers of at most 18 digits without a leading zero or a "-0"; true, false,
 * null; objects without a repeated key.  False for anything else, including text jansson
 * would print the same but this does not check (numbers with a fraction or an exponent,
 * \u escapes, objects of more than 64 keys, nesting deeper than 64): the caller then
 * parses, which also reports text that is not JSON.  Need not be NUL-terminated; borrowed.
 * Thread-safe. */
bool inv_json_canonical(const char *text, size_t len);

#endif
