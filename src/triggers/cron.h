#ifndef ACCORD_TRIGGERS_CRON_H
#define ACCORD_TRIGGERS_CRON_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"

/* Cron specs and time zones for cron triggers (docs/flows.md "Triggers").  Pure functions,
 * no global state (no TZ environment, no localtime): time zones are read from the
 * system's TZif files (/usr/share/zoneinfo, or $TZDIR) by tz_load.  Thread-safe. */

/* A 5-field spec: minute hour day-of-month month day-of-week, each `*`, a number, a range
 * `a-b`, a list `a,b`, steps `*\/n` and `a-b/n`; month and day names (JAN, MON); day-of-week
 * 0 or 7 = Sunday; day-of-month and day-of-week both restricted match either (Vixie cron).
 * Also the macros @yearly @annually @monthly @weekly @daily @midnight @hourly. */
struct cron_spec {
	uint64_t minute;   /* bits 0..59 */
	uint32_t hour;	   /* bits 0..23 */
	uint32_t mday;	   /* bits 1..31 */
	uint16_t month;	   /* bits 1..12 */
	uint8_t wday;	   /* bits 0..6 */
	bool mday_star, wday_star;
};

/* ERR_INVALID naming the field and what is wrong ("cron spec '…': minute: 61 is out of
 * range 0-59"). */
int cron_parse(const char *spec, struct cron_spec *out, struct err *e) WUR;

/* A time zone: its transitions and offsets (opaque; tz_free).  name is an IANA name
 * ("Europe/Berlin", "UTC"); NULL or "" is the server's zone (/etc/localtime, else UTC).
 * Unknown or malformed: ERR_INVALID "unknown time zone: …". */
struct tz;
struct tz *tz_load(const char *name, struct err *e);
void tz_free(struct tz *z);
/* The UTC offset in seconds at Unix time t. */
int32_t tz_offset(const struct tz *z, int64_t t);

/* The first minute strictly after `after` (Unix seconds) whose local wall-clock time in z
 * matches spec, as Unix seconds; 0 when none within 5 years (e.g. "0 0 30 2 *").
 * Daylight saving time: a local time that does not exist (spring forward) is skipped —
 * the job does not run that day at that time, as Vixie cron's hourly jobs; a local time
 * that occurs twice (fall back) fires once, at its first occurrence. */
int64_t cron_next(const struct cron_spec *spec, const struct tz *z, int64_t after);

#endif
