#include "base/datetime.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "base/str.h"

int64_t dt_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t dt_mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Howard Hinnant's civil-date algorithms. */
int64_t dt_days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

void dt_civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t yy = (int64_t)yoe + era * 400;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = yy + (*m <= 2);
}

static void put_digits(char *out, int n, unsigned v)
{
	for (int i = n - 1; i >= 0; i--, v /= 10)
		out[i] = (char)('0' + v % 10);
}

void dt_format_iso(int64_t ms, char out[DT_ISO_LEN])
{
	int64_t secs = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
	int64_t msec = ms - secs * 1000;
	int64_t days = secs >= 0 ? secs / 86400 : -((-secs + 86399) / 86400);
	int64_t sod = secs - days * 86400;
	int64_t y;
	unsigned m, d;

	dt_civil_from_days(days, &y, &m, &d);
	if (y >= 0 && y <= 9999) { /* every log line has one: by hand, not snprintf */
		put_digits(out, 4, (unsigned)y);
		out[4] = '-';
		put_digits(out + 5, 2, m);
		out[7] = '-';
		put_digits(out + 8, 2, d);
		out[10] = 'T';
		put_digits(out + 11, 2, (unsigned)(sod / 3600));
		out[13] = ':';
		put_digits(out + 14, 2, (unsigned)(sod / 60 % 60));
		out[16] = ':';
		put_digits(out + 17, 2, (unsigned)(sod % 60));
		out[19] = '.';
		put_digits(out + 20, 3, (unsigned)msec);
		out[23] = 'Z';
		out[24] = '\0';
		return;
	}
	/* at most 30 characters: an int64 of milliseconds has a year of 9 digits and a sign */
	if (str_fmt(out, DT_ISO_LEN, "%04lld-%02u-%02uT%02d:%02d:%02d.%03dZ", (long long)y, m, d, (int)(sod / 3600),
		    (int)(sod / 60 % 60), (int)(sod % 60), (int)msec))
		abort();
}

static int digits(const char *s, size_t len, size_t *pos, int n, int *out)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		if (*pos >= len || s[*pos] < '0' || s[*pos] > '9')
			return -1;
		v = v * 10 + (s[(*pos)++] - '0');
	}
	*out = v;
	return 0;
}

static int expect(const char *s, size_t len, size_t *pos, char c)
{
	if (*pos >= len || s[*pos] != c)
		return -1;
	(*pos)++;
	return 0;
}

static int days_in_month(int y, int m)
{
	static const int dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	return m == 2 && leap ? 29 : dm[m - 1];
}

static int parse_offset(const char *s, size_t len, size_t *pos, int *off_min)
{
	int sign, hh = 0, mm = 0;

	if (s[*pos] == 'Z' || s[*pos] == 'z') {
		(*pos)++;
		*off_min = 0;
		return 0;
	}
	sign = s[*pos] == '-' ? -1 : 1;
	(*pos)++;
	if (digits(s, len, pos, 2, &hh))
		return -1;
	if (*pos < len) {
		if (s[*pos] == ':')
			(*pos)++;
		if (digits(s, len, pos, 2, &mm))
			return -1;
	}
	if (hh > 18 || mm > 59)
		return -1;
	*off_min = sign * (hh * 60 + mm);
	return 0;
}

int dt_parse_iso(const char *s, size_t len, bool require_offset, int64_t *out_ms, const char *what, struct err *e)
{
	size_t pos = 0;
	int y, mo, d, h = 0, mi = 0, sec = 0, ms = 0, off = 0;
	bool has_offset = false;

	if (len > 64)
		goto bad;
	if (digits(s, len, &pos, 4, &y) || expect(s, len, &pos, '-') || digits(s, len, &pos, 2, &mo) ||
	    expect(s, len, &pos, '-') || digits(s, len, &pos, 2, &d))
		goto bad;
	if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo))
		goto bad;
	if (pos == len) {
		if (require_offset)
			goto no_offset;
		goto done;
	}
	if ((s[pos] != 'T' && s[pos] != 't') || (pos++, digits(s, len, &pos, 2, &h)) || expect(s, len, &pos, ':') ||
	    digits(s, len, &pos, 2, &mi))
		goto bad;
	if (pos < len && s[pos] == ':') {
		pos++;
		if (digits(s, len, &pos, 2, &sec))
			goto bad;
		if (pos < len && (s[pos] == '.' || s[pos] == ',')) {
			int n = 0;
			pos++;
			while (pos < len && s[pos] >= '0' && s[pos] <= '9') {
				if (n < 3)
					ms = ms * 10 + (s[pos] - '0');
				n++;
				pos++;
			}
			if (n == 0 || n > 9)
				goto bad;
			for (; n < 3; n++)
				ms *= 10;
		}
	}
	if (h > 23 || mi > 59 || sec > 59)
		goto bad;
	if (pos < len) {
		if (s[pos] != 'Z' && s[pos] != 'z' && s[pos] != '+' && s[pos] != '-')
			goto bad;
		if (parse_offset(s, len, &pos, &off))
			goto bad;
		has_offset = true;
	}
	if (pos != len)
		goto bad;
	if (require_offset && !has_offset)
		goto no_offset;
done:
	*out_ms =
	    (dt_days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400 + h * 3600 + mi * 60 + sec - off * 60) * 1000 +
	    ms;
	return 0;
no_offset:
	return err_set(e, ERR_INVALID, "%s must carry a time-zone offset (e.g. Z or +02:00): '%.*s'", what, (int)len,
		       s);
bad:
	return err_set(e, ERR_INVALID, "%s is not an ISO-8601 date-time (e.g. 2026-11-22T10:00:00Z): '%.*s'", what,
		       (int)(len > 64 ? 64 : len), s);
}
