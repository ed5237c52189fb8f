#ifndef ACCORD_BASE_PROPERTIES_H
#define ACCORD_BASE_PROPERTIES_H

#include <stddef.h>

#include <jansson.h>

#include "base/err.h"

/* A Java .properties text (java.util.Properties.load) as a JSON object of strings: logical
 * lines (a line ending in an odd number of backslashes goes on in the next, whose leading
 * blanks are dropped), comment lines starting with '#' or '!', a key ending at the first
 * unescaped '=', ':' or blank, then blanks, at most one '=' or ':' and blanks before the
 * value; escapes \t \n \r \f \u<4 hex digits> (surrogate pairs joined) and \c for any other c.  A later
 * key replaces an earlier one.  Text that is not UTF-8 is read as ISO-8859-1, as Java reads
 * a .properties stream.  Pure; thread-safe.
 *
 * Returns a NEW object, or NULL with e set: ERR_INVALID for a malformed \u escape (naming
 * the line), ERR_TOO_LARGE for more than max_keys keys, ERR_INTERNAL without memory. */
json_t *properties_parse(const char *text, size_t len, size_t max_keys, struct err *e);

#endif
