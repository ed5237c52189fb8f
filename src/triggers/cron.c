/* Cron specs: parsing the 5-field syntax of Vixie cron (with names and macros), and the
 * next fire time in a time zone.  The next time is found by walking the local calendar
 * field by field (skipping whole months, days and hours that cannot match) and mapping
 * each matching local minute back to UTC, which is where daylight saving time enters. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/datetime.h"
#include "base/str.h"
#include "triggers/cron.h"

#define CRON_SPEC_MAX 256
#define CRON_FIELDS_TEXT "minute hour day-of-month month day-of-week"
/* How far cron_next looks ahead: 5 years of 366 days. */
#define CRON_HORIZON ((int64_t)5 * 366 * 86400)
/* Instants beyond this (~ year 318,000) are refused, so that nothing can overflow. */
#define CRON_T_LIMIT ((int64_t)10000000000000)

static const char *const month_names[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
					  "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
static const char *const wday_names[] = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

struct cron_field {
	const char *name;
	int lo, hi, step_max;
	int last;		  /* where * and a/step end: hi, but Saturday for day-of-week */
	const char *const *names; /* 3-letter names for lo, lo+1, …; NULL when none */
	int n_names;
	const char *what; /* what a value may be, for errors */
};

static const struct cron_field fields[5] = {
    {"minute", 0, 59, 60, 59, NULL, 0, "a number 0-59"},
    {"hour", 0, 23, 24, 23, NULL, 0, "a number 0-23"},
    {"day-of-month", 1, 31, 31, 31, NULL, 0, "a number 1-31"},
    {"month", 1, 12, 12, 12, month_names, 12, "a number 1-12 or a month name JAN-DEC"},
    {"day-of-week", 0, 7, 7, 6, wday_names, 7, "a number 0-7 (0 and 7 are Sunday) or a day name SUN-SAT"},
};

static const struct {
	const char *name, *spec;
} macros[] = {
    {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"}, {"@weekly", "0 0 * * 0"},
    {"@daily", "0 0 * * *"},  {"@midnight", "0 0 * * *"}, {"@hourly", "0 * * * *"},
};

/* The spec being parsed, for error messages. */
struct parse {
	const char *spec;
	int spec_len;
	const struct cron_field *f;
	struct err *e;
};

__attribute__((format(printf, 2, 3))) static int fail(const struct parse *ps, const char *fmt, ...)
{
	char detail[256];
	va_list ap;

	va_start(ap, fmt);
	str_vfmt_cut(detail, sizeof detail, fmt, ap);
	va_end(ap);
	if (ps->f)
		return err_set(ps->e, ERR_INVALID, "cron spec '%.*s': %s: %s", ps->spec_len, ps->spec, ps->f->name,
			       detail);
	return err_set(ps->e, ERR_INVALID, "cron spec '%.*s': %s", ps->spec_len, ps->spec, detail);
}

static bool all_digits(const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] < '0' || p[i] > '9')
			return false;
	return len > 0;
}

static char upper(char c)
{
	return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

/* Quartz extensions users bring along: ?, L, W and #. */
static bool quartz_token(const char *p, size_t len)
{
	char last = len ? upper(p[len - 1]) : 0;

	return (len == 1 && (*p == '?' || last == 'L')) || memchr(p, '#', len) ||
	       (len >= 2 && (last == 'L' || last == 'W') && (all_digits(p, len - 1) || upper(p[0]) == 'L'));
}

static int parse_value(const struct parse *ps, const char *p, size_t len, int *out)
{
	const struct cron_field *f = ps->f;

	if (len == 0)
		return fail(ps, "a value is missing (expected %s)", f->what);
	if (all_digits(p, len)) {
		int v = 0;

		for (size_t i = 0; i < len && v <= 1000; i++)
			v = v * 10 + (p[i] - '0');
		if (v < f->lo || v > f->hi)
			return fail(ps, "%.*s is out of range %d-%d", (int)len, p, f->lo, f->hi);
		*out = v;
		return 0;
	}
	for (int i = 0; len == 3 && i < f->n_names; i++)
		if (upper(p[0]) == f->names[i][0] && upper(p[1]) == f->names[i][1] && upper(p[2]) == f->names[i][2]) {
			*out = f->lo + i;
			return 0;
		}
	if (quartz_token(p, len))
		return fail(ps, "'%.*s' is Quartz syntax, which cron specs do not support (use * or a list)", (int)len,
			    p);
	if (memchr(p, '*', len))
		return fail(ps, "'*' must stand alone, as * or */step");
	return fail(ps, "'%.*s' is not %s", (int)len, p, f->what);
}

static int parse_step(const struct parse *ps, const char *p, size_t len, int *out)
{
	int v = 0;

	if (len == 0)
		return fail(ps, "a step is missing after '/'");
	if (!all_digits(p, len))
		return fail(ps, "step '%.*s' is not a number", (int)len, p);
	for (size_t i = 0; i < len && v <= 1000; i++)
		v = v * 10 + (p[i] - '0');
	if (v < 1 || v > ps->f->step_max)
		return fail(ps, "step %.*s is out of range 1-%d", (int)len, p, ps->f->step_max);
	*out = v;
	return 0;
}

/* One list item: *, a, a-b, each optionally /step (a/step runs from a to the field's end). */
static int parse_item(const struct parse *ps, const char *p, size_t len, uint64_t *bits)
{
	const char *slash = memchr(p, '/', len), *dash;
	size_t range_len = slash ? (size_t)(slash - p) : len;
	int a, b, step = 1;

	if (slash && memchr(slash + 1, '/', len - range_len - 1))
		return fail(ps, "'%.*s' has more than one '/'", (int)len, p);
	if (slash && parse_step(ps, slash + 1, len - range_len - 1, &step))
		return -ERR_INVALID;
	dash = memchr(p, '-', range_len);
	if (range_len == 1 && *p == '*') {
		a = ps->f->lo;
		b = ps->f->last;
	} else if (dash) {
		if (parse_value(ps, p, (size_t)(dash - p), &a) ||
		    parse_value(ps, dash + 1, range_len - (size_t)(dash - p) - 1, &b))
			return -ERR_INVALID;
		if (a > b)
			return fail(
			    ps, "range %.*s goes backwards (ranges do not wrap around; use a list such as 22-23,0-1)",
			    (int)range_len, p);
	} else {
		if (parse_value(ps, p, range_len, &a))
			return -ERR_INVALID;
		b = !slash ? a : a > ps->f->last ? a : ps->f->last;
	}
	for (int v = a; v <= b; v += step)
		*bits |= (uint64_t)1 << v;
	return 0;
}

/* A comma-separated list of items into bits (bit v for value v). */
static int parse_field(const struct parse *ps, const char *p, size_t len, uint64_t *bits)
{
	const char *end = p + len;

	*bits = 0;
	for (;;) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		const char *item_end = comma ? comma : end;

		if (item_end == p)
			return fail(ps, "empty item in the list '%.*s'", (int)len, end - len);
		if (parse_item(ps, p, (size_t)(item_end - p), bits))
			return -ERR_INVALID;
		if (!comma)
			return 0;
		p = comma + 1;
	}
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static int parse_fields(struct parse *ps, const char *p, struct cron_spec *out)
{
	const char *tok[8];
	size_t tok_len[8];
	int n = 0;
	uint64_t bits[5];

	while (*p) {
		const char *start;

		while (is_blank(*p))
			p++;
		if (!*p)
			break;
		start = p;
		while (*p && !is_blank(*p))
			p++;
		if (n < 8) {
			tok[n] = start;
			tok_len[n] = (size_t)(p - start);
		}
		n++;
	}
	if (n == 6 || n == 7)
		return fail(ps,
			    "%d fields, but a cron spec has 5 (" CRON_FIELDS_TEXT
			    "): seconds and years (Quartz) are not supported",
			    n);
	if (n != 5)
		return fail(ps, "%d field%s, but a cron spec has 5 (" CRON_FIELDS_TEXT ") or is a macro such as @daily",
			    n, n == 1 ? "" : "s");
	for (int i = 0; i < 5; i++) {
		ps->f = &fields[i];
		if (parse_field(ps, tok[i], tok_len[i], &bits[i]))
			return -ERR_INVALID;
	}
	out->minute = bits[0];
	out->hour = (uint32_t)bits[1];
	out->mday = (uint32_t)bits[2];
	out->month = (uint16_t)bits[3];
	out->wday = (uint8_t)((bits[4] | bits[4] >> 7) & 0x7f); /* 7 is Sunday too */
	/* Vixie cron: a day field that starts with '*' (also *\/n) counts as unrestricted. */
	out->mday_star = *tok[2] == '*';
	out->wday_star = *tok[4] == '*';
	return 0;
}

static int parse_macro(struct parse *ps, const char *p, struct cron_spec *out)
{
	size_t len = 0;

	while (p[len] && !is_blank(p[len]))
		len++;
	for (const char *q = p + len; *q; q++)
		if (!is_blank(*q))
			return fail(ps, "a macro such as %.*s stands alone, without fields", (int)len, p);
	if (len == 7 && strncmp(p, "@reboot", 7) == 0)
		return fail(ps, "@reboot is not supported (a trigger has no boot); use a 5-field spec");
	for (size_t i = 0; i < sizeof macros / sizeof *macros; i++)
		if (strlen(macros[i].name) == len && strncmp(p, macros[i].name, len) == 0)
			return parse_fields(ps, macros[i].spec, out);
	return fail(ps, "'%.*s' is not a known macro (@yearly @annually @monthly @weekly @daily @midnight @hourly)",
		    (int)len, p);
}

int cron_parse(const char *spec, struct cron_spec *out, struct err *e)
{
	struct parse ps = {.spec = spec, .e = e};
	struct cron_spec s = {0};
	size_t len;

	if (!spec)
		return err_set(e, ERR_INVALID, "cron spec is missing");
	len = strlen(spec);
	if (len > CRON_SPEC_MAX)
		return err_set(e, ERR_INVALID, "cron spec is too long (%zu characters, at most %d)", len,
			       CRON_SPEC_MAX);
	for (size_t i = 0; i < len; i++)
		if (((unsigned char)spec[i] < 0x20 && spec[i] != '\t') || spec[i] == 0x7f)
			return err_set(e, ERR_INVALID, "cron spec has a control character at position %zu", i + 1);
	while (is_blank(*spec))
		spec++;
	ps.spec = spec;
	ps.spec_len = (int)strlen(spec);
	while (ps.spec_len > 0 && is_blank(spec[ps.spec_len - 1]))
		ps.spec_len--;
	if (ps.spec_len == 0)
		return err_set(e, ERR_INVALID, "cron spec is empty (expected 5 fields: " CRON_FIELDS_TEXT ")");
	if ((*spec == '@' ? parse_macro(&ps, spec, &s) : parse_fields(&ps, spec, &s)) != 0)
		return -ERR_INVALID;
	*out = s;
	return 0;
}

/* ---- next fire time --------------------------------------------------------------------- */

static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

static int next_bit(uint64_t mask, int from)
{
	if (from >= 64)
		return -1;
	mask &= ~(uint64_t)0 << from;
	return mask ? __builtin_ctzll(mask) : -1;
}

static unsigned month_days(int64_t y, unsigned m)
{
	return m == 12 ? 31 : (unsigned)(dt_days_from_civil(y, m + 1, 1) - dt_days_from_civil(y, m, 1));
}

/* Vixie cron: when either day field is unrestricted both must match, else either. */
static bool day_matches(const struct cron_spec *s, int64_t day, unsigned mday)
{
	int wday = (int)((day + 4) % 7 + 7) % 7; /* 1970-01-01 was a Thursday */
	bool dom = s->mday >> mday & 1, dow = s->wday >> wday & 1;

	return s->mday_star || s->wday_star ? dom && dow : dom || dow;
}

/* The first UTC instant whose wall-clock time in z is `local` (seconds on the local
 * calendar); false when the local time does not exist (a spring-forward gap).  The
 * solutions t of t + offset(t) = local use one of the offsets in effect around it. */
static bool local_first_utc(const struct tz *z, int64_t local, int64_t *out)
{
	int32_t off[4];
	int64_t best = 0;
	bool found = false;

	off[0] = tz_offset(z, local - 2 * 86400);
	off[1] = tz_offset(z, local + 2 * 86400);
	off[2] = tz_offset(z, local - off[0]);
	off[3] = tz_offset(z, local - off[1]);
	for (int i = 0; i < 4; i++) {
		int64_t t = local - off[i];

		if (tz_offset(z, t) == off[i] && (!found || t < best)) {
			best = t;
			found = true;
		}
	}
	*out = best;
	return found;
}

/* The first matching minute of local day `day` from hour h, minute mi on. */
static bool next_in_day(const struct cron_spec *s, const struct tz *z, int64_t day, int h, int mi, int64_t after,
			int64_t limit, int64_t *out)
{
	for (int hh = next_bit(s->hour & 0xffffff, h); hh >= 0; hh = next_bit(s->hour & 0xffffff, hh + 1)) {
		uint64_t minutes = s->minute & (((uint64_t)1 << 60) - 1);

		for (int mm = next_bit(minutes, hh == h ? mi : 0); mm >= 0; mm = next_bit(minutes, mm + 1)) {
			int64_t local = day * 86400 + hh * 3600 + mm * 60, t = 0;

			if (local > limit)
				return false;
			if (local_first_utc(z, local, &t) && t > after) {
				*out = t;
				return true;
			}
		}
	}
	return false;
}

int64_t cron_next(const struct cron_spec *s, const struct tz *z, int64_t after)
{
	int64_t start, limit, day, y, t;
	unsigned m, d;
	int h, mi;

	if (after < -CRON_T_LIMIT || after > CRON_T_LIMIT)
		return 0;
	/* Local minutes before the one after `after` cannot come later in UTC (see the
	 * fall-back rule in cron.h: a repeated time fires at its first occurrence only). */
	start = (floor_div(after + tz_offset(z, after), 60) + 1) * 60;
	limit = start + CRON_HORIZON;
	day = floor_div(start, 86400);
	h = (int)(start - day * 86400) / 3600;
	mi = (int)(start - day * 86400) % 3600 / 60;
	dt_civil_from_days(day, &y, &m, &d);
	while (day * 86400 <= limit) {
		if (!(s->month >> m & 1)) {
			d = 1;
			if (++m > 12) {
				m = 1;
				y++;
			}
			day = dt_days_from_civil(y, m, 1);
			h = mi = 0;
			continue;
		}
		if (day_matches(s, day, d) && next_in_day(s, z, day, h, mi, after, limit, &t))
			return t;
		day++;
		h = mi = 0;
		if (++d > month_days(y, m)) {
			d = 1;
			if (++m > 12) {
				m = 1;
				y++;
			}
		}
	}
	return 0;
}
