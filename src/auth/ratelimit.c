/* Fixed-window request counters per API key (ratelimit.h): a window opens with a key's first
 * request after the last one ended.  An open-addressed table of RL_SLOTS; a key takes the
 * slot of its probe run that is its own, else the one whose window ended longest ago (a
 * stale slot holds nothing worth keeping; with more than RL_SLOTS keys busy at once a
 * counter may be dropped early, which errs towards letting requests through). */
#include "auth/ratelimit.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/str.h"
#include "base/uuid.h"

#define RL_SLOTS 4096
#define RL_PROBE 16

struct slot {
	char key_id[UUID_STR_LEN];
	int64_t window_start, window_ms, used;
};

static struct slot slots[RL_SLOTS];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

int ratelimit_parse(const char *text, int64_t *count, int64_t *window_ms, struct err *e)
{
	struct str s = str_trim(str_from(text));
	const char *slash = s.len ? memchr(s.p, '/', s.len) : NULL;
	struct str unit;

	if (!slash)
		return err_set(e, ERR_INVALID, "Invalid rateLimit '%.64s': expected N/s or N/min", text ? text : "");
	unit = str_trim((struct str){slash + 1, s.len - (size_t)(slash - s.p) - 1});
	if (str_eq_cstr(unit, "s"))
		*window_ms = 1000;
	else if (str_eq_cstr(unit, "min"))
		*window_ms = 60000;
	else
		return err_set(e, ERR_INVALID, "Invalid rateLimit '%.64s': the unit is s or min", text);
	if (str_to_i64(str_trim((struct str){s.p, (size_t)(slash - s.p)}), 1, 1000000, count, "rateLimit", NULL))
		return err_set(e, ERR_INVALID, "Invalid rateLimit '%.64s': N must be a number from 1 to 1000000", text);
	return 0;
}

void ratelimit_format(int64_t count, int64_t window_ms, char *out, size_t cap)
{
	str_fmt_cut(out, cap, "%lld/%s", (long long)count, window_ms == 1000 ? "s" : "min");
}

static uint32_t hash_id(const char *id)
{
	uint32_t h = 2166136261u;

	for (; *id; id++)
		h = (h ^ (uint8_t)*id) * 16777619u;
	return h;
}

static struct slot *slot_of(const char *key_id)
{
	uint32_t h = hash_id(key_id);
	struct slot *oldest = NULL;

	for (uint32_t i = 0; i < RL_PROBE; i++) {
		struct slot *s = &slots[(h + i) % RL_SLOTS];
		if (strcmp(s->key_id, key_id) == 0)
			return s;
		if (!oldest || s->window_start + s->window_ms < oldest->window_start + oldest->window_ms)
			oldest = s;
	}
	memset(oldest, 0, sizeof *oldest);
	str_fmt_cut(oldest->key_id, sizeof oldest->key_id, "%s", key_id);
	return oldest;
}

int ratelimit_take(const char *key_id, int64_t count, int64_t window_ms, int64_t now_ms, int64_t *retry_after_s,
		   struct err *e)
{
	struct slot *s;
	int64_t ends;
	int rc = 0;

	pthread_mutex_lock(&lock);
	s = slot_of(key_id);
	if (s->window_ms != window_ms || now_ms >= s->window_start + s->window_ms || now_ms < s->window_start) {
		s->window_start = now_ms; /* from the first request: a burst never straddles two */
		s->window_ms = window_ms;
		s->used = 0;
	}
	if (s->used < count) {
		s->used++;
	} else {
		ends = s->window_start + s->window_ms;
		*retry_after_s = (ends - now_ms + 999) / 1000;
		if (*retry_after_s < 1)
			*retry_after_s = 1;
		rc = -1;
	}
	pthread_mutex_unlock(&lock);
	if (rc) {
		char limit[32];
		ratelimit_format(count, window_ms, limit, sizeof limit);
		return err_set(e, ERR_TOO_MANY, "Too many requests: this API key is limited to %s; try again in %lld s",
			       limit, (long long)*retry_after_s);
	}
	return 0;
}
