/* Entries are remembered in an open-addressed set of addresses that holds a reference to
 * each, so an address is never reused by another object while it is in the set; when the
 * set fills up, the entries nobody else holds (reference count 1: only the set's) are
 * dropped, and only then does it grow.  It stops remembering at ENTRY_MAX live entries
 * (more print as maps). */
#include "flow/entry.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#define ENTRY_MAX ((size_t)1 << 20)

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static json_t **slots;
static size_t cap, n;

static size_t slot_of(const json_t *v, size_t c)
{
	uintptr_t h = (uintptr_t)v >> 4;

	h ^= h >> 17;
	h *= 0x9E3779B97F4A7C15u;
	return (size_t)(h >> 7) & (c - 1);
}

static void put(json_t **s, size_t c, json_t *v)
{
	size_t i = slot_of(v, c);

	while (s[i])
		i = (i + 1) & (c - 1);
	s[i] = v;
}

/* Rebuilds the set with capacity c, dropping the entries only the set holds. */
static bool rebuild(size_t c)
{
	json_t **s = calloc(c, sizeof *s);
	size_t kept = 0;

	if (!s)
		return false;
	for (size_t i = 0; i < cap; i++) {
		json_t *v = slots[i];
		if (!v)
			continue;
		if (v->refcount == 1) {
			json_decref(v);
			continue;
		}
		put(s, c, v);
		kept++;
	}
	free(slots);
	slots = s;
	cap = c;
	n = kept;
	return true;
}

static void remember(json_t *v)
{
	if ((n + 1) * 2 > cap) {
		/* Half full: drop the dead entries; grow when more than a quarter still lives. */
		if (cap && !rebuild(cap))
			return;
		if ((n + 1) * 4 > cap && (cap >= ENTRY_MAX * 2 || !rebuild(cap ? cap * 2 : 64)) && (n + 1) * 2 > cap)
			return; /* cannot grow: this one prints as a map */
	}
	put(slots, cap, json_incref(v));
	n++;
}

json_t *entry_new(const char *key, json_t *value)
{
	json_t *v = json_pack("{s:s, s:O}", "key", key, "value", value ? value : json_null());

	if (!v)
		return NULL;
	pthread_mutex_lock(&mu);
	remember(v);
	pthread_mutex_unlock(&mu);
	return v;
}

bool entry_is(const json_t *v)
{
	bool found = false;

	if (!json_is_object(v) || json_object_size(v) != 2)
		return false;
	pthread_mutex_lock(&mu);
	if (cap)
		for (size_t i = slot_of(v, cap); slots[i]; i = (i + 1) & (cap - 1))
			if (slots[i] == v) {
				found = true;
				break;
			}
	pthread_mutex_unlock(&mu);
	return found;
}
