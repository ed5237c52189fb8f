/* Opaque bearer tokens checked at the provider's userinfo endpoint, with a small cache
 * (oidc.h oidc_userinfo). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "auth/oidc.h"
#include "auth/oidc_discovery.h"
#include "auth/oidc_http.h"
#include "base/datetime.h"
#include "base/rand.h"
#include "base/str.h"

#define TOKEN_MAX 8192

struct slot {
	uint8_t digest[32];
	int64_t expires_ms;
	char *claims; /* JSON text; NULL: the provider refused the token */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static struct slot *slots; /* NULL when out of memory: nothing is kept */
static uint8_t key[crypto_generichash_KEYBYTES];

static void init(void)
{
	rand_bytes(key, sizeof key);
	slots = calloc(OIDC_USERINFO_SLOTS, sizeof *slots);
}

/* The token's keyed digest: the cache never holds a token, and a digest found in memory
 * cannot be tried against the provider. */
static void digest_of(const char *token, uint8_t out[32])
{
	crypto_generichash(out, 32, (const unsigned char *)token, strlen(token), key, sizeof key);
}

/* 1: a live entry (claims NEW, or NULL for a refusal); 0: none. */
static int cache_get(const uint8_t d[32], json_t **claims)
{
	struct slot *s;
	int hit = 0;

	pthread_mutex_lock(&lock);
	s = slots ? &slots[(d[0] | d[1] << 8) % OIDC_USERINFO_SLOTS] : NULL;
	if (s && s->expires_ms > dt_now_ms() && sodium_memcmp(s->digest, d, 32) == 0) {
		hit = 1;
		*claims = s->claims ? json_loads(s->claims, 0, NULL) : NULL;
		if (s->claims && !*claims)
			hit = 0;
	}
	pthread_mutex_unlock(&lock);
	return hit;
}

static void cache_put(const uint8_t d[32], json_t *claims)
{
	char *text = claims ? json_dumps(claims, JSON_COMPACT) : NULL;
	struct slot *s;

	if (oidc_settings.userinfo_cache_s <= 0 || (claims && !text)) {
		free(text);
		return;
	}
	pthread_mutex_lock(&lock);
	s = slots ? &slots[(d[0] | d[1] << 8) % OIDC_USERINFO_SLOTS] : NULL;
	if (s) {
		free(s->claims);
		memcpy(s->digest, d, 32);
		s->claims = text;
		s->expires_ms = dt_now_ms() + oidc_settings.userinfo_cache_s * 1000;
		text = NULL;
	}
	pthread_mutex_unlock(&lock);
	free(text);
}

void oidc_userinfo_cleanup(void)
{
	pthread_mutex_lock(&lock);
	for (size_t i = 0; slots && i < OIDC_USERINFO_SLOTS; i++)
		free(slots[i].claims);
	free(slots);
	slots = NULL;
	pthread_mutex_unlock(&lock);
}

/* Asks the provider: 0 with *claims NEW, ERR_UNAUTH (*refused set) or ERR_UNAVAILABLE. */
static int ask(const char *url, const char *token, json_t **claims, bool *refused, struct err *e)
{
	size_t cap = strlen(token) + 32;
	char *auth = malloc(cap);
	json_t *v = NULL;
	long status = 0;
	int rc;

	*refused = false;
	if (!auth || str_fmt(auth, cap, "Authorization: Bearer %s", token)) {
		free(auth);
		return err_set(e, ERR_INTERNAL, "out of memory");
	}
	rc = oidc_http("userinfo endpoint", url, NULL, auth, oidc_settings.timeout_ms, &status, &v, e);
	sodium_memzero(auth, strlen(auth));
	free(auth);
	if (rc)
		return rc;
	if (status == 0 || status >= 500)
		rc = err_set(e, ERR_UNAVAILABLE, "OIDC provider unavailable: its userinfo endpoint answered %ld", status);
	else if (status != 200)
		rc = err_set(e, ERR_UNAUTH, "invalid OIDC token: the provider's userinfo endpoint refused it (%ld)", status);
	else if (!json_is_object(v) || !json_is_string(json_object_get(v, "sub")))
		rc = err_set(e, ERR_UNAUTH, "invalid OIDC token: the provider's userinfo answer has no 'sub'");
	*refused = rc == -ERR_UNAUTH;
	if (rc == 0)
		*claims = json_incref(v);
	json_decref(v);
	return rc;
}

int oidc_userinfo(const char *token, json_t **claims, struct err *e)
{
	struct oidc_discovery d;
	uint8_t dg[32];
	bool refused;
	int rc;

	*claims = NULL;
	if (!token[0] || strlen(token) > TOKEN_MAX || strpbrk(token, " \t\r\n"))
		return err_set(e, ERR_UNAUTH, "invalid OIDC token: not a bearer token");
	pthread_once(&once, init);
	digest_of(token, dg);
	if (cache_get(dg, claims))
		return *claims ? 0 : err_set(e, ERR_UNAUTH, "invalid OIDC token: the provider's userinfo endpoint refused it");
	if ((rc = oidc_discovery_get(&d, e)))
		return rc;
	if (!d.userinfo[0])
		return err_set(e, ERR_UNAVAILABLE,
			       "OIDC provider unavailable: its discovery document has no userinfo_endpoint to check an "
			       "opaque token");
	rc = ask(d.userinfo, token, claims, &refused, e);
	if (rc == 0 || refused)
		cache_put(dg, *claims);
	return rc;
}
