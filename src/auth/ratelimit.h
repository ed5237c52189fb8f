#ifndef ACCORD_AUTH_RATELIMIT_H
#define ACCORD_AUTH_RATELIMIT_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/* Rate limits of API keys (docs/security.md "Scoped API keys"): at most count requests per
 * window of window_ms that opens with the first request, counted in this node's memory per
 * key id — with N nodes
 * behind a balancer a key gets up to N times its limit.  Thread-safe. */

/* "N/s" or "N/min" (N in 1..1000000): *count per *window_ms.  ERR_INVALID naming text. */
int ratelimit_parse(const char *text, int64_t *count, int64_t *window_ms, struct err *e) WUR;

/* The text of a limit ("10/s"), into out (cap >= 32). */
void ratelimit_format(int64_t count, int64_t window_ms, char *out, size_t cap);

/* Counts one request of key_id at now_ms: 0 while within the limit; otherwise
 * ERR_TOO_MANY with *retry_after_s (>= 1) the seconds until the window ends. */
int ratelimit_take(const char *key_id, int64_t count, int64_t window_ms, int64_t now_ms, int64_t *retry_after_s,
		   struct err *e) WUR;

#endif
