#ifndef ACCORD_BASE_JSON_FAST_H
#define ACCORD_BASE_JSON_FAST_H

#include <stddef.h>

#include <jansson.h>

/* A single-pass reader of the JSON texts that jansson's json_loadb(p, len,
 * JSON_DECODE_ANY | JSON_ALLOW_NUL) accepts, producing the very same values (objects keep
 * the text's key order, a duplicate key's last value wins in its first place; strings may
 * hold U+0000, keys may not; integers in int64's range, reals converted by strtod as
 * jansson does).  It handles only what it can decide exactly: on any error, on anything
 * unusual (a real it is unsure of, an integer out of range, a container nested deeper
 * than max_depth or 1,024 levels) and when out of memory it returns NULL, and the caller
 * parses the text with jansson, which then reports the error or decides the rare case.
 * So a non-NULL answer is json_equal to jansson's and nested no deeper than max_depth.
 * New reference or NULL.  Recursion is bounded by the depth limit. */
json_t *json_fast_parse(const char *p, size_t len, size_t max_depth);

#endif
