/* libFuzzer driver for triggers/cron (cron specs, next fire times) and triggers/tz (zone
 * names, TZif files).  The first byte chooses:
 *   0x00-0x3f  a cron spec: bytes 1-8 are `after` (Unix seconds), the rest the spec, tried
 *              in the zone (byte 0 % number of zones).  Whatever parses must have values
 *              in range; a fire time must be after `after`, match the spec on the local
 *              calendar, be the first occurrence of its local time, and be found again
 *              from one second before it.
 *   0x40-0x7f  a TZif file (the rest), loaded from a scratch $TZDIR: offsets stay in range
 *              and cron_next keeps its promises in that zone.
 *   0x80-0xff  a time zone name (the rest). */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/datetime.h"
#include "base/str.h"
#include "triggers/cron.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const zone_names[] = {"UTC",		 "Europe/Berlin",   "America/New_York",	 "Australia/Lord_Howe",
					 "Asia/Kolkata", "Pacific/Chatham", "America/Sao_Paulo", "Pacific/Apia"};
#define N_ZONES (sizeof zone_names / sizeof *zone_names)
static struct tz *zones[N_ZONES];
static char scratch[64], scratch_file[96];

static void cleanup(void)
{
	unlink(scratch_file);
	rmdir(scratch);
}

static void init(void)
{
	struct err e;

	for (size_t i = 0; i < N_ZONES; i++)
		if (!(zones[i] = tz_load(zone_names[i], &e)))
			zones[i] = tz_load("UTC", &e);
	/* a file is written per input: memory-backed when possible */
	if (str_fmt(scratch, sizeof scratch, "/dev/shm/accord-fuzz-tz-XXXXXX"))
		abort();
	if (!mkdtemp(scratch)) {
		if (str_fmt(scratch, sizeof scratch, "/tmp/accord-fuzz-tz-XXXXXX"))
			abort();
		if (!mkdtemp(scratch))
			abort();
	}
	if (str_fmt(scratch_file, sizeof scratch_file, "%s/Zone", scratch))
		abort();
	setenv("TZDIR", scratch, 1);
	atexit(cleanup);
}

static int64_t floor_div(int64_t a, int64_t b)
{
	return a / b - (a % b != 0 && (a < 0) != (b < 0));
}

/* r is a fire time of s in z after `after`: check it against the spec, independently of
 * how cron_next found it. */
static void check_fire(const struct cron_spec *s, const struct tz *z, int64_t after, int64_t r)
{
	int64_t local = r + tz_offset(z, r), day = floor_div(local, 86400), sod = local - day * 86400, y;
	unsigned m, d;
	int wday = (int)((day % 7 + 7 + 4) % 7);
	bool dom, dow;

	assert(r > after);
	assert(sod % 60 == 0);
	dt_civil_from_days(day, &y, &m, &d);
	assert(s->minute >> (sod % 3600 / 60) & 1);
	assert(s->hour >> (sod / 3600) & 1);
	assert(s->month >> m & 1);
	dom = s->mday >> d & 1;
	dow = s->wday >> wday & 1;
	assert(s->mday_star || s->wday_star ? dom && dow : dom || dow);
	/* the first occurrence of that local time: no earlier instant shows it */
	for (int k = -1; k <= 1; k += 2) {
		int32_t o = tz_offset(z, r + k * 2 * 86400);

		if (o != tz_offset(z, r) && local - o < r)
			assert(tz_offset(z, local - o) != o);
	}
	assert(cron_next(s, z, r - 1) == r);
}

static void check_spec(const struct cron_spec *s)
{
	assert(s->minute && s->minute < (uint64_t)1 << 60);
	assert(s->hour && s->hour < (uint32_t)1 << 24);
	assert(s->mday && !(s->mday & 1));
	assert(s->month && !(s->month & 1) && s->month < 1 << 13);
	assert(s->wday && s->wday < 1 << 7);
}

static void run_spec(const struct cron_spec *s, const struct tz *z, int64_t after)
{
	for (int i = 0; i < 3; i++) {
		int64_t r = cron_next(s, z, after);

		if (!r)
			return;
		check_fire(s, z, after, r);
		after = r;
	}
}

static void fuzz_spec(const uint8_t *data, size_t size)
{
	struct cron_spec s;
	struct err e;
	int64_t after = 0;
	char *spec = malloc(size - 9 + 1);

	if (!spec)
		return;
	memcpy(&after, data + 1, 8);
	/* mostly instants that matter (1900-2200), sometimes anything */
	if (!(data[0] & 0x20))
		after = (int64_t)((uint64_t)after % 9467280000u) - 2208988800;
	memcpy(spec, data + 9, size - 9);
	spec[size - 9] = '\0';
	if (cron_parse(spec, &s, &e) == 0) {
		check_spec(&s);
		run_spec(&s, zones[data[0] % N_ZONES], after);
	} else {
		assert(e.code == ERR_INVALID);
		assert(strncmp(e.msg, "cron spec", 9) == 0);
	}
	free(spec);
}

static void fuzz_tzif(const uint8_t *data, size_t size)
{
	static const char *const specs[] = {"* * * * *", "30 2 * * *", "*/15 1-3 * * *"};
	struct err e;
	struct tz *z;
	FILE *f = fopen(scratch_file, "wb");

	if (!f)
		abort();
	if (fwrite(data + 1, 1, size - 1, f) != size - 1)
		abort();
	fclose(f);
	if (!(z = tz_load("Zone", &e))) {
		assert(e.code == ERR_INVALID);
		assert(strncmp(e.msg, "unknown time zone: 'Zone'", 25) == 0);
		return;
	}
	for (int64_t t = -4000000000; t < 8000000000; t += 499999999) {
		int32_t o = tz_offset(z, t);

		assert(o >= -89999 && o <= 93599);
	}
	for (size_t i = 0; i < sizeof specs / sizeof *specs; i++) {
		struct cron_spec s;

		if (cron_parse(specs[i], &s, &e) != 0)
			abort();
		run_spec(&s, z, 1700000000);
		run_spec(&s, z, 4200000000);
	}
	tz_free(z);
}

static void fuzz_name(const uint8_t *data, size_t size)
{
	struct err e;
	char *name = malloc(size);
	struct tz *z;

	if (!name)
		return;
	memcpy(name, data + 1, size - 1);
	name[size - 1] = '\0';
	z = tz_load(name, &e);
	if (z)
		(void)tz_offset(z, 0);
	else
		assert(e.code == ERR_INVALID);
	tz_free(z);
	free(name);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!zones[0])
		init();
	if (size < 1)
		return 0;
	if (data[0] < 0x40 && size >= 9)
		fuzz_spec(data, size);
	else if (data[0] >= 0x40 && data[0] < 0x80)
		fuzz_tzif(data, size);
	else if (data[0] >= 0x80)
		fuzz_name(data, size);
	return 0;
}
