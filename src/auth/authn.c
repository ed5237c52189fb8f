#include "auth/authn.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sodium.h>

#include "auth/apikey_cache.h"
#include "auth/authn_ldap.h"
#include "auth/authn_oidc.h"
#include "auth/jwt.h"
#include "auth/oidc.h"
#include "auth/ldap_realm.h"
#include "auth/password.h"
#include "base/b64.h"
#include "base/datetime.h"
#include "base/rand.h"
#include "base/str.h"
#include "crypto/session.h"
#include "store/process_scopes.h"
#include "store/processes.h"

#define CACHE_SLOTS 1024

struct cache_entry {
	uint8_t digest[32];
	uint8_t stored[32]; /* the keyed digest of the password hash the credentials matched */
	char user_id[UUID_STR_LEN];
	uint64_t generation;
	int64_t expires_ms;
};

static struct cache_entry *cache;
/* Verified against when the user is unknown or has no password, so that an unknown
 * username costs the same Argon2id run as a wrong password (no user enumeration by
 * timing).  Made once, on first need. */
static char dummy_hash[PASSWORD_HASH_MAX];
static pthread_once_t dummy_once = PTHREAD_ONCE_INIT;
static uint8_t cache_key[crypto_generichash_KEYBYTES];
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;

void authn_init(void)
{
	rand_bytes(cache_key, sizeof cache_key);
	cache = calloc(CACHE_SLOTS, sizeof *cache);
	if (!cache)
		abort();
}

void authn_cleanup(void)
{
	if (cache)
		sodium_memzero(cache, CACHE_SLOTS * sizeof *cache);
	free(cache);
	cache = NULL;
	sodium_memzero(cache_key, sizeof cache_key);
	apikey_cache_clear();
}

static void digest_of(const char *creds, size_t n, uint8_t out[32])
{
	crypto_generichash(out, 32, (const unsigned char *)creds, n, cache_key, sizeof cache_key);
}

static bool cache_lookup(const uint8_t digest[32], char user_id[UUID_STR_LEN], uint8_t stored[32])
{
	struct cache_entry *ce = &cache[(digest[0] | digest[1] << 8) % CACHE_SLOTS];
	bool hit;

	pthread_mutex_lock(&cache_lock);
	hit = sodium_memcmp(ce->digest, digest, 32) == 0 && ce->generation == store_user_generation() &&
	      ce->expires_ms > dt_now_ms();
	if (hit) {
		memcpy(user_id, ce->user_id, UUID_STR_LEN);
		memcpy(stored, ce->stored, 32);
	}
	pthread_mutex_unlock(&cache_lock);
	return hit;
}

static void cache_store(const uint8_t digest[32], const uint8_t stored[32], const char *user_id, uint64_t generation)
{
	struct cache_entry *ce = &cache[(digest[0] | digest[1] << 8) % CACHE_SLOTS];

	pthread_mutex_lock(&cache_lock);
	memcpy(ce->digest, digest, 32);
	memcpy(ce->stored, stored, 32);
	memcpy(ce->user_id, user_id, UUID_STR_LEN);
	ce->generation = generation;
	ce->expires_ms = dt_now_ms() + AUTHN_CACHE_SECONDS * 1000;
	pthread_mutex_unlock(&cache_lock);
}

static void make_dummy(void)
{
	char pass[33];
	uint8_t raw[16];
	struct err e;

	rand_bytes(raw, sizeof raw);
	sodium_bin2hex(pass, sizeof pass, raw, sizeof raw);
	if (password_hash(pass, dummy_hash, &e) != 0)
		dummy_hash[0] = '\0'; /* password_verify then fails at once; logged nowhere */
	sodium_memzero(pass, sizeof pass);
}

/* The keyed digest of a stored password hash: what a cache hit checks against the
 * database, so that a password changed on another node (which cannot clear this node's
 * cache) ends the old one's use at once. */
static void stored_digest(const char *hash, uint8_t out[32])
{
	crypto_generichash(out, 32, (const unsigned char *)hash, strlen(hash), cache_key, sizeof cache_key);
}

/* A cached credential still stands: the user's stored hash is the one it matched. */
static bool still_stored(struct store_conn *c, const char *user_id, const uint8_t stored[32])
{
	char hash[PASSWORD_HASH_MAX];
	uint8_t now[32];
	bool same;

	if (store_user_password_hash(c, user_id, hash, sizeof hash, NULL) != 0)
		return false;
	stored_digest(hash, now);
	sodium_memzero(hash, sizeof hash);
	same = sodium_memcmp(now, stored, 32) == 0;
	return same;
}

/* The user's hash, or the dummy one (the check then fails after the same work); stored
 * receives the digest of the hash that matched.  *local: whether the user is a local one with
 * a password (only the password answers for them); when not and the LDAP realm is on, the
 * dummy check is skipped, as the directory answers instead. */
static bool verify_user(struct store_conn *c, const char *username, const char *pass, struct principal *out,
			uint8_t stored[32], bool *local)
{
	char hash[PASSWORD_HASH_MAX];
	bool known = store_user_find(c, username, NULL, &out->user, NULL) == 0 &&
		     store_user_password_hash(c, out->user.id, hash, sizeof hash, NULL) == 0;
	bool ok;

	*local = known;
	if (!known) {
		if (ldap_realm_enabled())
			return false;
		pthread_once(&dummy_once, make_dummy);
		password_verify(dummy_hash, pass);
		return false;
	}
	ok = password_verify(hash, pass);
	stored_digest(hash, stored);
	sodium_memzero(hash, sizeof hash);
	return ok;
}

static int unauth(struct err *e, const char *why)
{
	return err_set(e, ERR_UNAUTH, "%s", why);
}

/* A disabled user is refused with the message of a wrong credential, and only once the
 * credential has been checked: the answer must not tell whether the account exists, is
 * disabled, or the password was right (docs/security.md). */
static int check_user(struct principal *out, const char *generic, struct err *e)
{
	if (out->user.disabled)
		return unauth(e, generic);
	return 0;
}

static int basic(struct store_conn *c, const char *b64, struct principal *out, struct err *e)
{
	size_t n = 0;
	uint8_t digest[32], stored[32];
	char *creds = (char *)b64_decode(b64, strlen(b64), &n, NULL);
	char *colon, *pass;
	uint64_t generation = store_user_generation();
	int rc = -1;

	if (!creds)
		return unauth(e, "malformed Basic credentials");
	colon = memchr(creds, ':', n);
	if (!colon || strlen(creds) != n || colon == creds || colon[1] == '\0') {
		rc = unauth(e, "invalid username or password");
		goto out;
	}
	*colon = '\0';
	pass = colon + 1;
	digest_of(creds, n, digest);
	*colon = ':';
	if (cache_lookup(digest, out->user.id, stored)) {
		if (store_user_get(c, out->user.id, &out->user, NULL) == 0 && still_stored(c, out->user.id, stored))
			rc = 0;
	}
	*colon = '\0';
	if (rc != 0) {
		bool local;
		if (!verify_user(c, creds, pass, out, stored, &local)) {
			if (!local && ldap_realm_enabled())
				rc = authn_ldap(c, creds, pass, &out->user, e);
			else
				rc = unauth(e, "invalid username or password");
			if (rc)
				goto out;
		} else {
			cache_store(digest, stored, out->user.id, generation);
		}
	}
	out->method = AUTH_BASIC;
	rc = check_user(out, "invalid username or password", e);
out:
	sodium_memzero(creds, n);
	free(creds);
	return rc;
}

/* The key and its user, from the cache of verified keys when the store allows one
 * (auth/apikey_cache.h; the generation is read before the database is). */
static int found_key(struct store_conn *c, const uint8_t hash[APIKEY_HASH_LEN], struct apikey *k, struct user *u,
		     struct err *e)
{
	uint64_t generation;
	bool cacheable = store_auth_generation(store_conn_store(c), &generation);
	int64_t now = dt_now_ms();
	int rc;

	if (cacheable && apikey_cache_get(hash, generation, now, k, u))
		return 0;
	rc = store_apikey_find_user(c, hash, now, k, u, e);
	if (rc == 0 && cacheable)
		apikey_cache_put(hash, generation, now, k, u);
	return rc;
}

static int apikey(struct store_conn *c, const char *text, struct principal *out, struct err *e)
{
	uint8_t hash[APIKEY_HASH_LEN];
	struct apikey k;
	struct err dbe;
	int rc;

	if (authn_apikey_hash(text, hash, NULL))
		return unauth(e, "invalid API key");
	rc = found_key(c, hash, &k, &out->user, &dbe);
	if (rc == -ERR_NOT_FOUND)
		return unauth(e, "invalid or expired API key");
	if (rc)
		return err_set(e, dbe.code, "%s", dbe.msg);
	out->method = AUTH_APIKEY;
	memcpy(out->apikey_id, k.id, sizeof k.id);
	out->rate_count = k.rate_count;
	out->rate_window_ms = k.rate_window_ms;
	if (scope_set_load(k.scopes, &out->scopes, e))
		return -ERR_INTERNAL;
	return check_user(out, "invalid or expired API key", e);
}

int authn_header(struct store_conn *c, const char *authorization, struct principal *out, struct err *e)
{
	struct str h;
	char *value;
	int rc;

	memset(out, 0, sizeof *out);
	if (!authorization || !*authorization)
		return unauth(e, "authentication required: send an API key or Basic credentials in the "
				 "Authorization header");
	h = str_trim(str_from(authorization));
	if (h.len > 6 && str_ieq_cstr((struct str){h.p, 6}, "Basic ")) {
		value = str_dup(str_trim((struct str){h.p + 6, h.len - 6}));
		rc = value ? basic(c, value, out, e) : err_set(e, ERR_INTERNAL, "out of memory");
	} else {
		bool bearer = h.len > 7 && str_ieq_cstr((struct str){h.p, 7}, "Bearer ");
		bool oidc = bearer && oidc_enabled() && oidc_settings.bearer;
		if (bearer)
			h = str_trim((struct str){h.p + 7, h.len - 7});
		value = str_dup(h);
		if (!value)
			rc = err_set(e, ERR_INTERNAL, "out of memory");
		else if (oidc && jwt_looks_like(value))
			rc = authn_oidc_bearer(c, value, out, e);
		else if ((rc = apikey(c, value, out, e)) == -ERR_UNAUTH && oidc)
			/* Not one of our keys: maybe an opaque access token of the provider. */
			rc = authn_oidc_bearer(c, value, memset(out, 0, sizeof *out), e);
	}
	if (value)
		sodium_memzero(value, strlen(value));
	free(value);
	return rc;
}

bool authn_is_quick(const char *authorization)
{
	struct str h = str_trim(str_from(authorization));
	char *b64, *creds;
	size_t n = 0;
	uint8_t digest[32], stored[32];
	char user_id[UUID_STR_LEN];
	bool quick = true;

	/* A provider's token may need its keys or its userinfo fetched, and its user written. */
	if (h.len > 7 && str_ieq_cstr((struct str){h.p, 7}, "Bearer ") && oidc_enabled() && oidc_settings.bearer)
		return false;
	if (h.len <= 6 || !str_ieq_cstr((struct str){h.p, 6}, "Basic "))
		return true;
	b64 = str_dup(str_trim((struct str){h.p + 6, h.len - 6}));
	creds = b64 ? (char *)b64_decode(b64, strlen(b64), &n, NULL) : NULL;
	if (creds) {
		digest_of(creds, n, digest);
		quick = cache_lookup(digest, user_id, stored);
		sodium_memzero(creds, n);
	}
	free(creds);
	if (b64)
		sodium_memzero(b64, strlen(b64));
	free(b64);
	return quick;
}

void authn_apikey_new(char *text, size_t cap, uint8_t hash[APIKEY_HASH_LEN])
{
	uint8_t raw[APIKEY_BYTES];
	char *s;

	rand_bytes(raw, sizeof raw);
	crypto_hash_sha256(hash, raw, sizeof raw);
	s = b64_encode(raw, sizeof raw, B64_STD_NOPAD);
	if (!s)
		abort();
	if (str_fmt(text, cap, "%s", s)) /* a cut key would not match its hash */
		abort();
	sodium_memzero(raw, sizeof raw);
	sodium_memzero(s, strlen(s));
	free(s);
}

int authn_apikey_hash(const char *text, uint8_t hash[APIKEY_HASH_LEN], struct err *e)
{
	size_t n = 0;
	unsigned char *raw = b64_decode(text, strlen(text), &n, NULL);

	if (!raw || n < 16) {
		free(raw);
		return err_set(e, ERR_INVALID, "an API key must be Base64 of at least 16 bytes");
	}
	crypto_hash_sha256(hash, raw, n);
	sodium_memzero(raw, n);
	free(raw);
	return 0;
}

int authn_session(struct store_conn *c, const char *token, struct principal *out, struct err *e)
{
	uint8_t hash[32];
	char current[UUID_STR_LEN], *scopes = NULL;
	struct process p;
	struct err dbe;
	int rc;

	memset(out, 0, sizeof *out);
	session_token_hash(token, hash);
	rc = store_process_by_session(c, hash, &p, &dbe);
	if (rc == -ERR_UNAUTH)
		return unauth(e, "invalid session token, or its process has ended");
	if (rc)
		return err_set(e, dbe.code, "%s", dbe.msg);
	if (str_fmt(out->session_process, sizeof out->session_process, "%s", p.instance_id) ||
	    str_fmt(out->session_project, sizeof out->session_project, "%s", p.project_id)) {
		store_process_cleanup(&p);
		return err_set(e, ERR_INTERNAL, "process id too long");
	}
	/* After a form with runAs.keep the process acts on behalf of who submitted it. */
	rc = store_process_current_user(c, p.instance_id, current, &dbe);
	if (rc == 0)
		rc = store_user_get(c, current[0] ? current : p.initiator_id, &out->user, &dbe);
	if (rc) {
		store_process_cleanup(&p);
		return unauth(e, "the user of the session's process no longer exists");
	}
	/* Started with a scoped API key: the session is held to the key's scopes. */
	rc = store_process_scopes_get(c, p.instance_id, &scopes, &dbe);
	store_process_cleanup(&p);
	if (rc == 0 && scopes)
		rc = scope_set_load(scopes, &out->scopes, &dbe);
	free(scopes);
	if (rc)
		return err_set(e, dbe.code, "%s", dbe.msg);
	out->method = AUTH_SESSION;
	return check_user(out, "invalid or expired API key", e);
}
