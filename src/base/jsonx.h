#ifndef ACCORD_BASE_JSONX_H
#define ACCORD_BASE_JSONX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/err.h"

/* Helpers over jansson for request and response bodies.  jansson's ownership rules are
 * ours: `_new`/`set_new` steal, `get` borrows, every owned json_t gets one json_decref. */

/* Parses a whole JSON text; rejects nesting deeper than max_depth and trailing garbage.
 * New reference; NULL with ERR_INVALID ("invalid JSON at line L, column C: …").  The
 * values are json_loadb's (JSON_DECODE_ANY | JSON_ALLOW_NUL), read by base/json_fast.  With
 * JSONX_DEPTH_JANSSON only jansson's own limit applies. */
#define JSONX_DEPTH_JANSSON 2048
json_t *jsonx_parse(const char *p, size_t len, size_t max_depth, struct err *e);

/* Typed field access on an object.  A missing or null field leaves *out untouched and
 * returns 0, unless required (then ERR_INVALID "'<key>' is required").  A field of the
 * wrong type is ERR_INVALID "'<key>' must be a <type>".  Strings are borrowed from obj. */
int jsonx_str(json_t *obj, const char *key, bool required, const char **out, struct err *e) WUR;
int jsonx_bool(json_t *obj, const char *key, bool required, bool *out, struct err *e) WUR;
int jsonx_int(json_t *obj, const char *key, bool required, int64_t *out, struct err *e) WUR;
/* Object or array fields, borrowed. */
int jsonx_obj(json_t *obj, const char *key, bool required, json_t **out, struct err *e) WUR;
int jsonx_arr(json_t *obj, const char *key, bool required, json_t **out, struct err *e) WUR;

/* Compact serialisation; new string (caller frees).  NULL when out of memory (or v is
 * NULL, e.g. a json_pack that ran out of memory): callers report ERR_INTERNAL. */
char *jsonx_dump(const json_t *v);

/* json_object_set_new that ignores a NULL value (so optional fields can be passed
 * straight from a nullable column). */
void jsonx_set_opt_str(json_t *obj, const char *key, const char *value);

/* A JSON string of s with every byte sequence that is not valid UTF-8 replaced by '?'
 * (for messages that may quote user input).  New reference, never NULL. */
json_t *jsonx_string_lossy(const char *s);

/* Removes every U+0000 from the string values inside v, in place (a string jansson kept
 * with JSON_ALLOW_NUL, which neither C strings nor PostgreSQL's jsonb can hold).  The
 * number of strings changed, or -1 when out of memory (v partly cleaned). */
long jsonx_strip_nul(json_t *v) WUR;

/* The JSON-schema name of v's type: "object", "array", "string", "number", "boolean",
 * "null" (also for NULL).  A static string. */
const char *jsonx_type_name(const json_t *v);

#endif
