/* Time zones from the system's TZif files (RFC 8536/9636, versions 1-4): the transition
 * table, and the POSIX TZ rule of the footer for instants after the last transition
 * ("slim" files keep only a few transitions and leave the rest to the rule).  No TZ
 * environment, no localtime(3): a zone is plain data, safe to share between threads. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/datetime.h"
#include "triggers/cron.h"

#define TZ_DEFAULT_DIR "/usr/share/zoneinfo"
#define TZ_LOCALTIME "/etc/localtime"
#define TZ_NAME_MAX 255
#define TZ_FILE_MAX (256 * 1024)
#define TZ_TIMES_MAX 100000
#define TZ_HEADER_LEN 44
/* RFC 9636: UT offsets lie in [-89999, 93599] seconds. */
#define TZ_OFF_MIN (-89999)
#define TZ_OFF_MAX 93599
/* Instants are clamped here so that date arithmetic cannot overflow (~ year 31 million). */
#define TZ_T_LIMIT ((int64_t)1000000000000000)

/* One rule date of a POSIX TZ string: Jn (1-365, no 29 Feb), n (0-365) or Mm.w.d. */
struct tz_date {
	char kind; /* 'J', 'N' or 'M' */
	int a, b, c;
	int32_t time; /* seconds after local midnight, may be negative or over 24 h */
};

struct tz {
	size_t n_trans;
	int64_t *trans;	    /* UTC instants, ascending */
	int32_t *trans_off; /* the offset in effect from trans[i] on */
	int32_t off_first;  /* before the first transition (time type 0) */
	bool has_rule;	    /* the footer's rule applies from the last transition on */
	bool rule_dst;
	int32_t std_off, dst_off; /* seconds east of UTC */
	struct tz_date start, end;
};

/* ---- POSIX TZ strings ("CET-1CEST,M3.5.0,M10.5.0/3") ------------------------------------ */

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_alpha(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static const char *posix_number(const char *p, int max, int *out)
{
	int v = 0;

	if (!is_digit(*p))
		return NULL;
	while (is_digit(*p)) {
		v = v * 10 + (*p++ - '0');
		if (v > max)
			return NULL;
	}
	*out = v;
	return p;
}

/* [+-]hh[:mm[:ss]] as seconds; hours up to max_hours. */
static const char *posix_time(const char *p, int max_hours, int32_t *out)
{
	int sign = 1, h, m = 0, s = 0;

	if (*p == '+' || *p == '-')
		sign = *p++ == '-' ? -1 : 1;
	p = posix_number(p, max_hours, &h);
	if (p && *p == ':') {
		p = posix_number(p + 1, 59, &m);
		if (p && *p == ':')
			p = posix_number(p + 1, 59, &s);
	}
	if (p)
		*out = sign * (h * 3600 + m * 60 + s);
	return p;
}

static const char *posix_name(const char *p)
{
	const char *q = p;

	if (*p == '<') {
		for (q = p + 1; is_alpha(*q) || is_digit(*q) || *q == '+' || *q == '-'; q++)
			;
		return *q == '>' && q - p >= 4 ? q + 1 : NULL;
	}
	while (is_alpha(*q))
		q++;
	return q - p >= 3 ? q : NULL;
}

static const char *posix_date(const char *p, struct tz_date *d)
{
	d->time = 7200;
	d->a = d->b = d->c = 0;
	if (*p == 'J') {
		d->kind = 'J';
		p = posix_number(p + 1, 365, &d->a);
		if (p && d->a < 1)
			return NULL;
	} else if (*p == 'M') {
		d->kind = 'M';
		p = posix_number(p + 1, 12, &d->a);
		if (!p || d->a < 1 || *p != '.')
			return NULL;
		p = posix_number(p + 1, 5, &d->b);
		if (!p || d->b < 1 || *p != '.')
			return NULL;
		p = posix_number(p + 1, 6, &d->c);
	} else {
		d->kind = 'N';
		p = posix_number(p, 365, &d->a);
	}
	if (p && *p == '/')
		p = posix_time(p + 1, 167, &d->time);
	return p;
}

/* The footer's TZ string; false when malformed. */
static bool posix_parse(struct tz *z, const char *p)
{
	int32_t off;

	if (!(p = posix_name(p)) || !(p = posix_time(p, 24, &off)))
		return false;
	z->std_off = z->dst_off = -off;
	z->has_rule = true;
	if (!*p)
		return true;
	if (!(p = posix_name(p)))
		return false;
	z->rule_dst = true;
	z->dst_off = z->std_off + 3600;
	if (*p && *p != ',') {
		if (!(p = posix_time(p, 24, &off)))
			return false;
		z->dst_off = -off;
	}
	if (!*p) /* no rule: POSIX leaves it to the implementation; glibc and tzcode use the US rule */
		p = ",M3.2.0,M11.1.0";
	if (*p != ',' || !(p = posix_date(p + 1, &z->start)) || *p != ',' || !(p = posix_date(p + 1, &z->end)))
		return false;
	return *p == '\0';
}

/* Days in month m of year y (m 1-12). */
static int64_t month_days(int64_t y, unsigned m)
{
	return m == 12 ? 31 : dt_days_from_civil(y, m + 1, 1) - dt_days_from_civil(y, m, 1);
}

static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* Seconds from local midnight of 1 January of year y to the rule date's local time. */
static int64_t posix_date_secs(const struct tz_date *d, int64_t y)
{
	int64_t yday;

	if (d->kind == 'J') {
		yday = d->a - 1 + (month_days(y, 2) == 29 && d->a >= 60);
	} else if (d->kind == 'N') {
		yday = d->a;
	} else {
		int64_t first = dt_days_from_civil(y, (unsigned)d->a, 1);
		int wday = (int)((first + 4) % 7 + 7) % 7; /* 1970-01-01 was a Thursday */
		int64_t mday = 1 + (d->c - wday + 7) % 7 + (int64_t)(d->b - 1) * 7;

		while (mday > month_days(y, (unsigned)d->a))
			mday -= 7;
		yday = first + mday - 1 - dt_days_from_civil(y, 1, 1);
	}
	return yday * 86400 + d->time;
}

static int32_t posix_offset(const struct tz *z, int64_t t)
{
	int64_t y, jan1, start, end;
	unsigned m, d;

	if (!z->rule_dst)
		return z->std_off;
	dt_civil_from_days(floor_div(t + z->std_off, 86400), &y, &m, &d);
	jan1 = dt_days_from_civil(y, 1, 1) * 86400;
	/* The start is given in standard time, the end in daylight saving time. */
	start = jan1 + posix_date_secs(&z->start, y) - z->std_off;
	end = jan1 + posix_date_secs(&z->end, y) - z->dst_off;
	if (start <= end)
		return t >= start && t < end ? z->dst_off : z->std_off;
	return t >= end && t < start ? z->std_off : z->dst_off; /* southern hemisphere */
}

/* ---- TZif ------------------------------------------------------------------------------- */

struct tzif_header {
	char version;
	uint32_t isut, isstd, leap, time, type, chars;
};

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int64_t be64(const uint8_t *p)
{
	return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4));
}

static const char *tzif_header(const uint8_t *p, size_t len, struct tzif_header *h)
{
	if (len < TZ_HEADER_LEN || memcmp(p, "TZif", 4) != 0)
		return "no TZif header";
	h->version = (char)p[4];
	if (h->version != 0 && (h->version < '2' || h->version > '4'))
		return "unknown TZif version";
	h->isut = be32(p + 20);
	h->isstd = be32(p + 24);
	h->leap = be32(p + 28);
	h->time = be32(p + 32);
	h->type = be32(p + 36);
	h->chars = be32(p + 40);
	if (h->type == 0 || h->type > 256 || h->chars == 0 || h->chars > 65536 || h->time > TZ_TIMES_MAX ||
	    h->leap > TZ_TIMES_MAX || (h->isut != 0 && h->isut != h->type) || (h->isstd != 0 && h->isstd != h->type))
		return "bad counts in the TZif header";
	if (h->leap)
		return "it has leap seconds (a right/ zone), which cron triggers do not support";
	return NULL;
}

/* Bytes of the data block after a header; the counts are bounded, so no overflow. */
static size_t tzif_block_len(const struct tzif_header *h, size_t time_size)
{
	return h->time * time_size + h->time + h->type * 6 + h->chars + h->leap * (time_size + 4) + h->isstd + h->isut;
}

/* Fills z's transitions from a data block with time_size-byte times. */
static const char *tzif_block(struct tz *z, const struct tzif_header *h, const uint8_t *p, size_t time_size)
{
	const uint8_t *idx = p + h->time * time_size, *types = idx + h->time;
	int32_t offs[256];

	for (uint32_t i = 0; i < h->type; i++) {
		int32_t off = (int32_t)be32(types + i * 6);

		if (off < TZ_OFF_MIN || off > TZ_OFF_MAX)
			return "a UT offset is out of range";
		if (types[i * 6 + 5] >= h->chars)
			return "a time type's abbreviation index is out of range";
		offs[i] = off;
	}
	z->off_first = offs[0];
	z->n_trans = h->time;
	z->trans = calloc(h->time ? h->time : 1, sizeof *z->trans);
	z->trans_off = calloc(h->time ? h->time : 1, sizeof *z->trans_off);
	if (!z->trans || !z->trans_off)
		return "out of memory";
	for (uint32_t i = 0; i < h->time; i++) {
		z->trans[i] = time_size == 8 ? be64(p + i * 8) : (int32_t)be32(p + i * 4);
		if (i && z->trans[i] <= z->trans[i - 1])
			return "the transition times are not ascending";
		if (idx[i] >= h->type)
			return "a transition names an unknown time type";
		z->trans_off[i] = offs[idx[i]];
	}
	return NULL;
}

/* The TZif file in buf (len bytes) into z; NULL or what is wrong. */
static const char *tzif_parse(struct tz *z, const uint8_t *buf, size_t len)
{
	struct tzif_header h;
	const char *why = tzif_header(buf, len, &h);
	size_t at = TZ_HEADER_LEN, block;
	const uint8_t *nl;

	if (why)
		return why;
	block = tzif_block_len(&h, 4);
	if (len - at < block)
		return "the file is truncated";
	if (h.version == 0)
		return tzif_block(z, &h, buf + at, 4);
	at += block;
	if ((why = tzif_header(buf + at, len - at, &h)))
		return why;
	at += TZ_HEADER_LEN;
	block = tzif_block_len(&h, 8);
	if (len - at < block)
		return "the file is truncated";
	if ((why = tzif_block(z, &h, buf + at, 8)))
		return why;
	at += block;
	if (len - at < 2 || buf[at] != '\n' || !(nl = memchr(buf + at + 1, '\n', len - at - 1)))
		return "the TZ string footer is missing";
	if (nl > buf + at + 1) {
		char rule[128];
		size_t rule_len = (size_t)(nl - buf - at - 1);

		if (rule_len >= sizeof rule || memchr(buf + at + 1, '\0', rule_len))
			return "the TZ string footer is malformed";
		memcpy(rule, buf + at + 1, rule_len);
		rule[rule_len] = '\0';
		if (!posix_parse(z, rule))
			return "the TZ string footer is malformed";
	}
	return NULL;
}

/* ---- loading ---------------------------------------------------------------------------- */

/* An IANA name: [A-Za-z0-9_+-] components separated by single '/', none "." or "..". */
static bool tz_name_ok(const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len > TZ_NAME_MAX || name[0] == '/' || name[len - 1] == '/' || strstr(name, "//") ||
	    strstr(name, ".."))
		return false;
	for (const char *p = name; *p; p++)
		if (!is_alpha(*p) && !is_digit(*p) && !strchr("_+-/", *p))
			return false;
	return true;
}

static bool tz_is_utc(const char *name)
{
	static const char *const utc[] = {"UTC", "Etc/UTC", "GMT", "Etc/GMT"};

	for (size_t i = 0; i < sizeof utc / sizeof *utc; i++)
		if (strcmp(name, utc[i]) == 0)
			return true;
	return false;
}

/* The whole file, or NULL with errno (EFBIG when over the limit). */
static uint8_t *read_small_file(const char *path, size_t *len)
{
	struct stat st;
	uint8_t *buf = NULL;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), saved;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0)
		goto fail;
	if (!S_ISREG(st.st_mode) || st.st_size > TZ_FILE_MAX) {
		errno = S_ISDIR(st.st_mode) ? EISDIR : EFBIG;
		goto fail;
	}
	if (!(buf = malloc((size_t)st.st_size + 1)))
		goto fail;
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n == 0)
				errno = EIO;
			goto fail;
		}
		got += (size_t)n;
	}
	close(fd);
	*len = got;
	return buf;
fail:
	saved = errno;
	free(buf);
	close(fd);
	errno = saved;
	return NULL;
}

static struct tz *tz_utc(struct err *e)
{
	struct tz *z = calloc(1, sizeof *z);

	if (!z)
		err_set(e, ERR_INTERNAL, "out of memory loading a time zone");
	return z;
}

static struct tz *tz_from_file(const char *shown, const char *path, bool missing_is_utc, struct err *e)
{
	size_t len = 0;
	uint8_t *buf = read_small_file(path, &len);
	struct tz *z = NULL;
	const char *why;

	if (!buf) {
		if (errno == ENOENT && missing_is_utc)
			return tz_utc(e);
		if (errno == ENOENT || errno == ENOTDIR || errno == EISDIR)
			err_set(e, ERR_INVALID, "unknown time zone: '%s'", shown);
		else
			err_set(e, ERR_INVALID, "unknown time zone: '%s' (cannot read %s: %s)", shown, path,
				strerror(errno));
		return NULL;
	}
	if (!(z = tz_utc(e)))
		goto out;
	if ((why = tzif_parse(z, buf, len))) {
		err_set(e, ERR_INVALID, "unknown time zone: '%s' (%s is not a usable TZif file: %s)", shown, path, why);
		tz_free(z);
		z = NULL;
	}
out:
	free(buf);
	return z;
}

struct tz *tz_load(const char *name, struct err *e)
{
	const char *dir = getenv("TZDIR");
	char path[4096];

	if (!name || !*name)
		return tz_from_file(TZ_LOCALTIME, TZ_LOCALTIME, true, e);
	if (tz_is_utc(name))
		return tz_utc(e);
	if (!tz_name_ok(name)) {
		err_set(e, ERR_INVALID, "unknown time zone: '%.*s' (an IANA name such as Europe/Berlin is expected)",
			TZ_NAME_MAX, name);
		return NULL;
	}
	if (!dir || !*dir)
		dir = TZ_DEFAULT_DIR;
	if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path) {
		err_set(e, ERR_INVALID, "unknown time zone: '%s' (the path is too long)", name);
		return NULL;
	}
	return tz_from_file(name, path, false, e);
}

void tz_free(struct tz *z)
{
	if (!z)
		return;
	free(z->trans);
	free(z->trans_off);
	free(z);
}

int32_t tz_offset(const struct tz *z, int64_t t)
{
	size_t lo = 0, hi = z->n_trans;

	if (t > TZ_T_LIMIT)
		t = TZ_T_LIMIT;
	if (t < -TZ_T_LIMIT)
		t = -TZ_T_LIMIT;
	if (hi == 0)
		return z->has_rule ? posix_offset(z, t) : z->off_first;
	if (t < z->trans[0])
		return z->off_first;
	if (t >= z->trans[hi - 1] && z->has_rule)
		return posix_offset(z, t);
	/* The last transition at or before t. */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;

		if (z->trans[mid] <= t)
			lo = mid;
		else
			hi = mid;
	}
	return z->trans_off[lo];
}
