#ifndef ACCORD_BASE_DURATION_H
#define ACCORD_BASE_DURATION_H

#include <stdint.h>

#include <jansson.h>

#include "base/err.h"

/* Parses a timeout value as Concord does (processTimeout, suspendTimeout,
 * handlerProcessTimeout): a JSON integer >= 0 is seconds; a string is an ISO-8601 duration
 * ("PT1H", "P1DT2M", "PT0.5S" rounds up to 1; Java's Duration.parse without negative
 * values); anything else ERR_INVALID naming `what` and quoting the value. */
int duration_json(json_t *v, const char *what, int64_t *seconds, struct err *e) WUR;

/* A duration written by an operator (settings): whole seconds ("90"), a number with one
 * unit s, m, h or d ("90m", "30d"), or ISO-8601 ("P30D", "PT12H").  -1 when it is none of
 * these or overflows. */
int duration_text(const char *s, int64_t *seconds) WUR;

#endif
