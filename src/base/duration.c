/* Timeouts as Concord reads them (base/duration.h). */
#include "base/duration.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/jsonx.h"
#include "base/str.h"

#define SHOWN_MAX 200 /* bytes of a user's value quoted in a message */

/* Reads one number of a duration section: digits with an optional '+' ('-' is refused:
 * timeouts are never negative). */
static int dur_number(const char **p, const char *end, int64_t *out)
{
	int64_t n = 0;
	const char *s = *p;
	if (s < end && *s == '+')
		s++;
	if (s == end || *s < '0' || *s > '9')
		return -1;
	for (; s < end && *s >= '0' && *s <= '9'; s++)
		if (__builtin_mul_overflow(n, 10, &n) || __builtin_add_overflow(n, *s - '0', &n))
			return -1;
	*p = s;
	*out = n;
	return 0;
}

static int dur_add(int64_t *total, int64_t n, int64_t unit)
{
	int64_t x;
	return __builtin_mul_overflow(n, unit, &x) || __builtin_add_overflow(*total, x, total) ? -1 : 0;
}

/* Java's Duration.parse (PnDTnHnMn.nS, letters in any case) without negative values;
 * a fraction of a second rounds up. */
static int parse_duration(const char *s, size_t len, int64_t *seconds)
{
	const char *p = s, *end = s + len;
	static const struct {
		char unit;
		int64_t secs;
	} time_units[] = {{'H', 3600}, {'M', 60}, {'S', 1}};
	int64_t total = 0, n;
	bool any = false;

	if (p < end && *p == '+')
		p++;
	if (p == end || (*p != 'P' && *p != 'p'))
		return -1;
	p++;
	const char *save = p;
	if (dur_number(&p, end, &n) == 0 && p < end && (*p == 'D' || *p == 'd')) {
		if (dur_add(&total, n, 86400) < 0)
			return -1;
		p++;
		any = true;
	} else {
		p = save;
	}
	if (p < end && (*p == 'T' || *p == 't')) {
		bool any_t = false;
		p++;
		for (size_t u = 0; u < 3 && p < end; u++) {
			save = p;
			if (dur_number(&p, end, &n) < 0)
				return -1;
			if (time_units[u].unit == 'S' && p < end && (*p == '.' || *p == ',')) {
				const char *f = ++p;
				while (p < end && *p >= '0' && *p <= '9' && p - f < 9)
					p++;
				bool frac = false;
				for (const char *q = f; q < p; q++)
					frac = frac || *q != '0';
				if (p == end || (*p != 'S' && *p != 's') || (frac && __builtin_add_overflow(n, 1, &n)))
					return -1;
			}
			if (p < end && (*p == time_units[u].unit || *p == time_units[u].unit + 32)) {
				if (dur_add(&total, n, time_units[u].secs) < 0)
					return -1;
				p++;
				any_t = true;
			} else {
				p = save;
			}
		}
		if (!any_t)
			return -1;
		any = true;
	}
	if (!any || p != end)
		return -1;
	*seconds = total;
	return 0;
}

int duration_json(json_t *v, const char *what, int64_t *seconds, struct err *e)
{
	char shown[SHOWN_MAX + 1], *dump = NULL;
	const char *sv = json_is_string(v) ? json_string_value(v) : (dump = jsonx_dump(v));

	str_fmt_cut(shown, sizeof shown, "%s", sv ? sv : "?");
	free(dump);
	if (json_is_integer(v)) {
		if (json_integer_value(v) < 0)
			return err_set(e, ERR_INVALID, "Invalid '%s' value, can't be negative: %s", what, shown);
		*seconds = json_integer_value(v);
		return 0;
	}
	if (json_is_string(v)) {
		const char *s = json_string_value(v);
		struct str t = str_trim((struct str){s, json_string_length(v)});
		if (t.len && t.p[0] == '-')
			return err_set(e, ERR_INVALID, "Invalid '%s' value, can't be negative: %s", what, shown);
		if (parse_duration(t.p, t.len, seconds) == 0)
			return 0;
	}
	return err_set(e, ERR_INVALID,
		       "Invalid '%s' value, expected a number of seconds or an ISO-8601 duration (e.g. PT1H), got: %s",
		       what, shown);
}


int duration_text(const char *s, int64_t *seconds)
{
	static const struct {
		char unit;
		int64_t secs;
	} units[] = {{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}};
	const char *p = s, *end = s + strlen(s);
	int64_t n, total = 0;

	if (p < end && (*p == 'P' || *p == 'p'))
		return parse_duration(s, (size_t)(end - s), seconds);
	if (dur_number(&p, end, &n) < 0 || *s == '+')
		return -1;
	if (p == end) {
		*seconds = n;
		return 0;
	}
	for (size_t u = 0; u < sizeof units / sizeof units[0]; u++)
		if (p + 1 == end && (*p == units[u].unit || *p == units[u].unit - 32)) {
			if (dur_add(&total, n, units[u].secs) < 0)
				return -1;
			*seconds = total;
			return 0;
		}
	return -1;
}
