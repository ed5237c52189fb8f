#ifndef ACCORD_BASE_DATETIME_H
#define ACCORD_BASE_DATETIME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/* Times are int64 milliseconds since the Unix epoch, UTC. */

#define DT_ISO_LEN 32 /* room for any string dt_format_* writes, with its NUL */

int64_t dt_now_ms(void);
/* Monotonic clock in nanoseconds, for durations. */
int64_t dt_mono_ns(void);

/* "2026-11-22T10:00:00.123Z" (always milliseconds, always UTC). */
void dt_format_iso(int64_t ms, char out[DT_ISO_LEN]);

/* Parses ISO-8601 date-times as Java's ISO_OFFSET_DATE_TIME does:
 * YYYY-MM-DDThh:mm[:ss[.fraction]] followed by Z or ±hh:mm (also ±hhmm, ±hh).
 * When require_offset is false a missing offset means UTC, and a bare date
 * YYYY-MM-DD means its midnight UTC.  Fractions beyond milliseconds are truncated.
 * Fails with ERR_INVALID naming `what` and saying what is wrong. */
int dt_parse_iso(const char *s, size_t len, bool require_offset, int64_t *out_ms, const char *what, struct err *e) WUR;

/* Days since 1970-01-01 for a proleptic Gregorian date, and back. */
int64_t dt_days_from_civil(int64_t y, unsigned m, unsigned d);
void dt_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d);

#endif
