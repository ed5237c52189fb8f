#ifndef ACCORD_TRIGGERS_CRON_H
#define ACCORD_TRIGGERS_CRON_H

#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"

/* Cron specs and time zones for cron triggers (docs/flows.md "Triggers").  Pure functions,
 * no global state (no TZ environment, no localtime): time zones are read from the
 * system's TZif files (/usr/share/zoneinfo, or $TZDIR) by tz_load.  Thread-safe. */

/* A 5-field spec, as Vixie cron reads it: minute (0-59) hour (0-23) day-of-month (1-31)
 * month (1-12 or JAN-DEC) day-of-week (0-7 or SUN-SAT; 0 and 7 are Sunday), separated by
 * blanks.  Each field is a comma-separated list of items: `*`, a value `a`, a range `a-b`
 * (not wrapping around), each optionally with a step: `*\/n`, `a-b/n`, and `a/n` (from a to
 * the field's end).  Names are 3 letters, any case.  Day-of-month and day-of-week both
 * restricted match either; when one of them starts with `*` (also `*\/n`) both must match
 * (Vixie cron).  Also the macros @yearly @annually @monthly @weekly @daily @midnight
 * @hourly.  Not supported, with an error that says so: 6 or 7 fields (Quartz's seconds and
 * years), Quartz's ? L W #, and @reboot. */
struct cron_spec {
	uint64_t minute; /* bits 0..59 */
	uint32_t hour;	 /* bits 0..23 */
	uint32_t mday;	 /* bits 1..31 */
	uint16_t month;	 /* bits 1..12 */
	uint8_t wday;	 /* bits 0..6 */
	bool mday_star, wday_star;
};

/* Fills *out (untouched on failure).  ERR_INVALID naming the field and what is wrong
 * ("cron spec '…': minute: 61 is out of range 0-59").  A spec that can never fire
 * ("0 0 30 2 *") parses; cron_next answers 0 for it. */
int cron_parse(const char *spec, struct cron_spec *out, struct err *e) WUR;

/* A time zone: its transitions and offsets (new, opaque; tz_free).  name is an IANA name
 * ("Europe/Berlin", "UTC"): letters, digits, _ + - and / between components, read from
 * $TZDIR/name or /usr/share/zoneinfo/name (TZif versions 1-4, with the footer's TZ rule
 * for times after the last transition).  "UTC", "Etc/UTC", "GMT" and "Etc/GMT" need no
 * file.  NULL or "" is the server's zone (/etc/localtime, UTC when that does not exist).
 * Unknown or malformed (also zones with leap seconds, right/…): ERR_INVALID
 * "unknown time zone: …". */
struct tz;
struct tz *tz_load(const char *name, struct err *e);
void tz_free(struct tz *z);
/* The UTC offset in seconds (east positive) at Unix time t. */
int32_t tz_offset(const struct tz *z, int64_t t);

/* The first minute strictly after `after` (Unix seconds) whose local wall-clock time in z
 * matches spec, as Unix seconds; 0 when none within 5 years (e.g. "0 0 30 2 *") or when
 * `after` lies beyond ±10^13 s.  Walks months, days and hours that can match, so a call
 * costs microseconds, not a scan of every minute.
 * Daylight saving time: a local time that does not exist (spring forward) is skipped —
 * the job does not run that day at that time, as Vixie cron's hourly jobs; a local time
 * that occurs twice (fall back) fires once, at its first occurrence. */
int64_t cron_next(const struct cron_spec *spec, const struct tz *z, int64_t after);

#endif
