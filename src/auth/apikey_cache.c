/* Verified API keys kept in memory (auth/apikey_cache.h). */
#include "auth/apikey_cache.h"

#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include <sodium.h>

/* Keys are random, so their hashes spread evenly over the slots; a slot holds one key. */
#define SLOTS 256

struct slot {
	pthread_mutex_t lock;
	bool used;
	uint8_t hash[APIKEY_HASH_LEN];
	uint64_t generation;
	int64_t until_ms;
	struct apikey key;
	struct user user;
};

static struct slot slots[SLOTS];
static pthread_once_t slots_once = PTHREAD_ONCE_INIT;

static void slots_init(void)
{
	for (size_t i = 0; i < SLOTS; i++)
		pthread_mutex_init(&slots[i].lock, NULL);
}

static struct slot *slot_of(const uint8_t hash[APIKEY_HASH_LEN])
{
	pthread_once(&slots_once, slots_init);
	return &slots[hash[0] % SLOTS];
}

/* The scopes are most often empty and at most APIKEY_SCOPES_MAX: copy what is used. */
static void key_copy(struct apikey *to, const struct apikey *from)
{
	size_t scopes_len = strnlen(from->scopes, sizeof from->scopes - 1);

	memcpy(to, from, offsetof(struct apikey, scopes));
	memcpy(to->scopes, from->scopes, scopes_len);
	to->scopes[scopes_len] = '\0';
	to->rate_count = from->rate_count;
	to->rate_window_ms = from->rate_window_ms;
}

bool apikey_cache_get(const uint8_t hash[APIKEY_HASH_LEN], uint64_t generation, int64_t now_ms, struct apikey *k,
		      struct user *u)
{
	struct slot *s = slot_of(hash);
	bool hit;

	pthread_mutex_lock(&s->lock);
	hit = s->used && s->generation == generation && now_ms < s->until_ms &&
	      (s->key.expired_at == 0 || now_ms < s->key.expired_at) &&
	      sodium_memcmp(s->hash, hash, APIKEY_HASH_LEN) == 0;
	if (hit) {
		key_copy(k, &s->key);
		*u = s->user;
	}
	pthread_mutex_unlock(&s->lock);
	return hit;
}

void apikey_cache_put(const uint8_t hash[APIKEY_HASH_LEN], uint64_t generation, int64_t now_ms, const struct apikey *k,
		      const struct user *u)
{
	struct slot *s = slot_of(hash);

	pthread_mutex_lock(&s->lock);
	s->used = true;
	memcpy(s->hash, hash, APIKEY_HASH_LEN);
	s->generation = generation;
	s->until_ms = now_ms + APIKEY_CACHE_SECONDS * 1000;
	key_copy(&s->key, k);
	s->user = *u;
	pthread_mutex_unlock(&s->lock);
}

void apikey_cache_clear(void)
{
	pthread_once(&slots_once, slots_init);
	for (size_t i = 0; i < SLOTS; i++) {
		struct slot *s = &slots[i];

		pthread_mutex_lock(&s->lock);
		s->used = false;
		sodium_memzero(s->hash, sizeof s->hash);
		sodium_memzero(&s->key, sizeof s->key);
		sodium_memzero(&s->user, sizeof s->user);
		pthread_mutex_unlock(&s->lock);
	}
}
