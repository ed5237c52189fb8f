#ifndef ACCORD_BASE_COOKIE_H
#define ACCORD_BASE_COOKIE_H

#include <stdbool.h>

#include "base/str.h"

/* The value of the first cookie called name in a Cookie header (RFC 6265 §5.4: the most
 * specific path comes first), without the quotes a quoted value has.  header NULL: none.
 * *out is a slice of header.  False when there is no such cookie. */
bool cookie_value(const char *header, const char *name, struct str *out);

#endif
