#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/datetime.h"
#include "flow/tasks/task.h"

/* Dates are ISO-8601 strings.  Patterns follow Java's SimpleDateFormat for the letters
 * y M d H h m s S a E Z X and 'quoted text'; zones are UTC/GMT/Z or fixed offsets. */

static const char *months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
static const char *days[] = {"Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"};

struct tm_parts {
	int64_t y;
	unsigned mo, d, h, mi, s, ms;
	int64_t days;
};

static void split(int64_t ms, struct tm_parts *p)
{
	int64_t secs = ms >= 0 ? ms / 1000 : (ms - 999) / 1000, sod;
	p->ms = (unsigned)(ms - secs * 1000);
	p->days = secs >= 0 ? secs / 86400 : (secs - 86399) / 86400;
	sod = secs - p->days * 86400;
	dt_civil_from_days(p->days, &p->y, &p->mo, &p->d);
	p->h = (unsigned)(sod / 3600);
	p->mi = (unsigned)(sod % 3600 / 60);
	p->s = (unsigned)(sod % 60);
}

/* Digits at *s: exactly n of them as a number in *v, or -1. */
static int digits(const char **s, int n, int *v)
{
	*v = 0;
	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)(*s)[i]))
			return -1;
		*v = *v * 10 + ((*s)[i] - '0');
	}
	*s += n;
	return 0;
}

/* A fixed offset as java.time.ZoneOffset.of reads one, without seconds: a sign, then h,
 * hh, hh:mm or hhmm, at most 18:00, and nothing after it. */
static int parse_offset(const char *z, int *min)
{
	const char *s = z + 1;
	int h, m = 0;

	if (z[0] != '+' && z[0] != '-')
		return -1;
	if (isdigit((unsigned char)s[0]) && !s[1]) {
		h = s[0] - '0';
		s++;
	} else if (digits(&s, 2, &h) < 0) {
		return -1;
	} else if (*s) {
		if (*s == ':') /* hh:mm, else hhmm */
			s++;
		if (digits(&s, 2, &m) < 0)
			return -1;
	}
	if (*s || m > 59 || h * 60 + m > 18 * 60)
		return -1;
	*min = (z[0] == '-' ? -1 : 1) * (h * 60 + m);
	return 0;
}

static int zone_offset(const char *z, int *min, struct err *e)
{
	if (!z || !*z || strcmp(z, "UTC") == 0 || strcmp(z, "GMT") == 0 || strcmp(z, "Z") == 0 ||
	    strcmp(z, "Etc/UTC") == 0) {
		*min = 0;
		return 0;
	}
	if (parse_offset(z, min) == 0)
		return 0;
	return err_set(e, ERR_INVALID,
		       "Unknown time zone '%.64s' (UTC, GMT or a fixed offset from -18:00 to +18:00 like +02:00, "
		       "+0200 or +2)",
		       z);
}

static int fmt_field(struct buf *b, char c, int n, const struct tm_parts *p, int off, struct err *e)
{
	int ah = abs(off) / 60, am = abs(off) % 60;
	char sign = off < 0 ? '-' : '+';
	switch (c) {
	case 'y':
		return n == 2 ? buf_printf(b, e, "%02d", (int)(p->y % 100))
			      : buf_printf(b, e, "%0*lld", n, (long long)p->y);
	case 'M':
		return n >= 3 ? buf_append_str(b, months[p->mo - 1], e) : buf_printf(b, e, "%0*u", n, p->mo);
	case 'd':
		return buf_printf(b, e, "%0*u", n, p->d);
	case 'H':
		return buf_printf(b, e, "%0*u", n, p->h);
	case 'h':
		return buf_printf(b, e, "%0*u", n, p->h % 12 ? p->h % 12 : 12);
	case 'm':
		return buf_printf(b, e, "%0*u", n, p->mi);
	case 's':
		return buf_printf(b, e, "%0*u", n, p->s);
	case 'S':
		return buf_printf(b, e, "%03u", p->ms);
	case 'a':
		return buf_append_str(b, p->h < 12 ? "AM" : "PM", e);
	case 'E':
		return buf_append_str(b, days[((p->days % 7) + 7) % 7], e);
	case 'Z':
		return buf_printf(b, e, "%c%02d%02d", sign, ah, am);
	case 'X':
		if (off == 0)
			return buf_append_char(b, 'Z', e);
		return n >= 3 ? buf_printf(b, e, "%c%02d:%02d", sign, ah, am)
			      : buf_printf(b, e, "%c%02d%02d", sign, ah, am);
	default:
		return err_set(e, ERR_INVALID, "Illegal pattern character '%c'", c);
	}
}

static char *format_ms(int64_t ms, const char *pattern, int off, struct err *e)
{
	struct tm_parts p;
	struct buf b;
	split(ms + (int64_t)off * 60000, &p);
	buf_init(&b, 4096);
	for (const char *c = pattern; *c;) {
		int n = 1, rc;
		if (*c == '\'') {
			const char *end = strchr(c + 1, '\'');
			if (!end)
				end = c + strlen(c);
			rc = end == c + 1 ? buf_append_char(&b, '\'', e)
					  : buf_append(&b, c + 1, (size_t)(end - c - 1), e);
			c = *end ? end + 1 : end;
		} else if (isalpha((unsigned char)*c)) {
			while (c[n] == *c)
				n++;
			rc = fmt_field(&b, *c, n, &p, off, e);
			c += n;
		} else {
			rc = buf_append_char(&b, *c++, e);
		}
		if (rc < 0) {
			buf_cleanup(&b);
			return NULL;
		}
	}
	return buf_detach(&b, NULL);
}

static int out_str(char *s, json_t **out, struct err *e)
{
	(void)e;
	if (!s)
		return -1;
	*out = json_string(s);
	free(s);
	return 0;
}

static int m_current(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	char iso[DT_ISO_LEN];
	const char *pattern;
	(void)c;
	if (json_array_size(args) == 0) {
		dt_format_iso(dt_now_ms(), iso);
		*out = json_string(iso);
		return 0;
	}
	if (task_arg_str(args, 0, "pattern", &pattern, e) < 0)
		return -1;
	return out_str(format_ms(dt_now_ms(), pattern, 0, e), out, e);
}

static int m_current_iso(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	(void)c, (void)args;
	return out_str(format_ms(dt_now_ms(), "yyyy-MM-dd'T'HH:mm:ss.SSSXXX", 0, e), out, e);
}

static int m_current_zone(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	const char *zone, *pattern;
	int off = 0;
	(void)c;
	if (task_arg_str(args, 0, "zone", &zone, e) < 0 || task_arg_str(args, 1, "pattern", &pattern, e) < 0 ||
	    zone_offset(zone, &off, e) < 0)
		return -1;
	return out_str(format_ms(dt_now_ms(), pattern, off, e), out, e);
}

static int m_format(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	const char *date, *pattern;
	int64_t ms;
	(void)c;
	if (task_arg_str(args, 0, "date", &date, e) < 0 || task_arg_str(args, 1, "pattern", &pattern, e) < 0 ||
	    dt_parse_iso(date, strlen(date), false, &ms, "date", e) < 0)
		return -1;
	return out_str(format_ms(ms, pattern, 0, e), out, e);
}

/* At most n digits at *s, and never more than 9, so a field cannot overflow: a pattern of
 * twenty 'y's reads a year of at most nine digits (then refused as out of range). */
static int num(const char **s, int n, long long *v)
{
	long long x = 0;
	int i = 0;
	if (n > 9)
		n = 9;
	while (i < n && isdigit((unsigned char)(*s)[i]))
		x = x * 10 + ((*s)[i++] - '0');
	*s += i;
	*v = x;
	return i > 0 ? 0 : -1;
}

static int m_parse(struct task_ctx *c, json_t *args, json_t **out, struct err *e)
{
	const char *str, *pattern, *s;
	long long f[7] = {1970, 1, 1, 0, 0, 0, 0}, v;
	char iso[DT_ISO_LEN];
	(void)c;
	if (task_arg_str(args, 0, "value", &str, e) < 0 || task_arg_str(args, 1, "pattern", &pattern, e) < 0)
		return -1;
	s = str;
	for (const char *p = pattern; *p;) {
		const char *idx = strchr("yMdHmsS", *p);
		int n = 1;
		if (!idx || !isalpha((unsigned char)*p)) {
			if (*s++ != *p++)
				goto bad;
			continue;
		}
		while (p[n] == *p)
			n++;
		if (num(&s, *p == 'y' && n == 2 ? 2 : (n > 2 ? n : 4), &v) < 0)
			goto bad;
		f[idx - "yMdHmsS"] = v;
		p += n;
	}
	if (*s)
		goto bad;
	/* years past 999,999 would overflow the milliseconds since the epoch (int64) */
	if (f[0] > 999999 || f[1] < 1 || f[1] > 12 || f[2] < 1 || f[2] > 31 || f[3] > 23 || f[4] > 59 || f[5] > 59)
		goto bad;
	dt_format_iso(
	    (dt_days_from_civil(f[0], (unsigned)f[1], (unsigned)f[2]) * 86400 + f[3] * 3600 + f[4] * 60 + f[5]) * 1000 +
		f[6],
	    iso);
	*out = json_string(iso);
	return 0;
bad:
	return err_set(e, ERR_INVALID, "Unparseable date: \"%s\"", str);
}

static const struct task_method methods[] = {{"current", m_current, 0, 1},
					     {"currentISO", m_current_iso, 0, 0},
					     {"currentWithZone", m_current_zone, 2, 2},
					     {"format", m_format, 2, 2},
					     {"parse", m_parse, 2, 2},
					     {NULL, NULL, 0, 0}};

const struct task_def task_datetime = {"datetime", NULL, methods, false, true};
