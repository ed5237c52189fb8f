#ifndef ACCORD_BASE_UUID_H
#define ACCORD_BASE_UUID_H

#include <stdbool.h>
#include <stddef.h>

#define UUID_STR_LEN 37 /* 36 characters and the NUL */

/* A random (version 4) UUID in lower-case canonical form. */
void uuid_v4(char out[UUID_STR_LEN]);
/* A time-ordered (version 7, RFC 9562) UUID: the Unix time in milliseconds in its first
 * 48 bits, 74 random bits after it.  Keys made of these land at the end of an index
 * instead of on a random page of it: the ids of processes, whose rows sit in a dozen tables
 * keyed by it. */
void uuid_v7(char out[UUID_STR_LEN]);
/* True when s[0..len) is a canonical 8-4-4-4-12 hex UUID (either case). */
bool uuid_valid(const char *s, size_t len);

#endif
