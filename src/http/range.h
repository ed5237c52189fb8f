#ifndef ACCORD_HTTP_RANGE_H
#define ACCORD_HTTP_RANGE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"

/* The Range request header (RFC 9110 §14), single byte ranges only:
 *   bytes=a-b  bytes a..b inclusive (b past the end is clamped to the last byte)
 *   bytes=a-   from a to the end
 *   bytes=-n   the last n bytes (all of them when n >= size)
 *   a-b, a-, -n  the same without the unit (the form of Accord's spec)
 * Whitespace around the value is ignored; the unit is case-insensitive.  A list of
 * ranges ("bytes=0-1,5-6") is refused rather than answered as multipart/byteranges.
 * Pure function: no I/O, safe from any thread. */

struct http_range {
	bool whole;	/* no Range given: the whole resource, first/last unset */
	uint64_t first; /* first byte */
	uint64_t last;	/* last byte, inclusive (valid when size > 0 and !whole) */
	bool open_end;	/* "a-": the client asked for everything from first */
};

/* Parses value (NULL or blank: whole) against a resource of size bytes.
 *   ERR_INVALID  malformed, a-b with b < a, or several ranges (message quotes the value);
 *   ERR_RANGE    unsatisfiable: first >= size, or "-0", or a suffix of an empty resource.
 * When allow_past_end is set (a follower that waits for bytes not yet written), a first
 * byte at or beyond size is accepted: last is then meaningless and open_end tells
 * whether the client gave an end. */
int http_range_parse(const char *value, uint64_t size, bool allow_past_end, struct http_range *out, struct err *e) WUR;

#endif
