#ifndef ACCORD_FLOW_VALUE_H
#define ACCORD_FLOW_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/err.h"

/* Values of the flow engine are jansson values.  This module prints them the way Java's
 * toString prints Concord's values (reference §4.2) and implements the EL coercions the
 * VM needs.  Printing is byte-for-byte Concord's: {k=v, n=[1, 2]}, [1, 2], 2.5, 5.0,
 * 1.0E10, null, true, 64-bit integers.  All functions are thread-safe (no shared state). */

/* Nesting deeper than this is refused by the printers (ERR_LIMIT) rather than recursing. */
#define VALUE_PRINT_DEPTH 512

/* Java Double.toString of d into out (NUL-terminated): "2.5", "5.0", "1.0E10", "1.0E-5",
 * "-0.0", "NaN", "Infinity".  Returns the length. */
#define VALUE_DOUBLE_MAX 32
size_t value_format_double(double d, char out[VALUE_DOUBLE_MAX]);

/* Appends Java's toString of v: null prints as "null" (also inside containers).
 * Fails only when b is full (ERR_TOO_LARGE) or v nests deeper than VALUE_PRINT_DEPTH. */
int value_print(struct buf *b, const json_t *v, struct err *e) WUR;

/* Appends the EL string coercion of v: like value_print, except that a null v appends
 * nothing (reference §4.2: null is "" inside a composite string). */
int value_append_string(struct buf *b, const json_t *v, struct err *e) WUR;

/* New NUL-terminated Java toString of v (caller frees); *len may be NULL.  NULL only when
 * out of memory or too deep. */
char *value_to_cstr(const json_t *v, size_t *len);

/* The Java class name shown in EL messages: java.lang.String, java.lang.Long,
 * java.lang.Double, java.lang.Boolean, java.util.LinkedHashMap, java.util.ArrayList,
 * "null". */
const char *value_class_name(const json_t *v);

/* EL coercion to Boolean: null and "" → false, boolean as is, string → true iff it equals
 * "true" ignoring case; anything else fails with ERR_INVALID "Cannot convert [v] of type
 * [class X] to [class java.lang.Boolean]". */
int value_to_bool(const json_t *v, bool *out, struct err *e) WUR;

/* Lenient truthiness for places that must not fail: value_to_bool where an
 * unconvertible value counts as false. */
bool value_truthy(const json_t *v);

/* EL coercion to Long: null and "" → 0, integers as is, reals truncated (Java (long)),
 * strings parsed as Java Long.valueOf; booleans and containers fail with ERR_INVALID
 * "Cannot convert [v] of type [class X] to [class java.lang.Long]". */
int value_to_long(const json_t *v, int64_t *out, struct err *e) WUR;

/* EL coercion to Double: null and "" → 0, numbers, strings parsed as Java Double.valueOf
 * (white space trimmed); other types fail like value_to_long. */
int value_to_double(const json_t *v, double *out, struct err *e) WUR;

/* EL emptiness (operator `empty`): null, "", [] and {} are empty. */
bool value_is_empty(const json_t *v);

/* Java equals of two values: integers and reals are different types (1 ≠ 1.0), strings
 * byte-wise, lists in order, maps ignoring order, recursively. */
bool value_equals(const json_t *a, const json_t *b);

/* Deep merge of src into dst (both objects): keys whose values are objects on both sides
 * are merged recursively, every other key of src replaces dst's (a new reference is
 * stored; src is BORROWED).  Used for `set` with dotted keys and evalAsMap. */
int value_merge(json_t *dst, json_t *src, struct err *e) WUR;

/* Sets dotted path "a.b.c" in obj to v (v is BORROWED), creating or replacing
 * intermediate objects as needed.  An empty segment is ERR_INVALID. */
int value_set_path(json_t *obj, const char *path, size_t len, json_t *v, struct err *e) WUR;

/* True when `inner` is `outer` or is contained anywhere inside it: inserting outer into
 * inner would create a cycle, which jansson cannot free or print. */
bool value_contains_ref(const json_t *outer, const json_t *inner);

#endif
